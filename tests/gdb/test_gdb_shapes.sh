#!/usr/bin/env bash
# test_gdb_shapes.sh BUILD_DIR: JIT images that GDB's own JIT reader handles differently from
# jitmap's (tests/gdb/shapes_jit.c), in each claim mode of the reader, against GDB alone:
#
#   - absolute: a function whose symbol is absolute (SHN_ABS). GDB alone shows `?? ()` for it
#     (and unwinds the frame wrongly); by default (reader-claim unnamed) and with auto the
#     reader claims the image: bt names the function and reaches main; with never it declines
#     (`??` as GDB alone) and still unwinds the frame;
#   - outermost: a function whose .eh_frame marks the return address undefined. GDB alone ends
#     the backtrace there ("finish" not meaningful in the outermost frame). By default and
#     with never the reader declines the image and everything is as GDB alone (break NAME,
#     info symbol too); with auto it claims it, and ends the stack with a caller at PC 0 (the
#     jit-reader API cannot mark a frame outermost: docs/gdb.md), which jitmap's frame filter
#     leaves out of `bt`, without an error: `bt` through Python does not raise;
#   - abi-break: a function that changes rbx and r12 (callee-saved) without saving them, beside
#     one that keeps the ABI. `jitmap verify` (text and JSON) names exactly those two
#     instructions (check "callee-saved": address, register, Capstone's text) and nothing
#     in the function that keeps the ABI, nor r13, which the breaking function pushed first.
# Prints "gdb-shapes: N passed, M failed"; exits 77 when GDB or the program is missing.
NAME=gdb-shapes
. "$(dirname "$0")/lib.sh"
SHAPES=$BUILD/tests/gdb/jitmap-shapes-jit
[ -x "$SHAPES" ] || skip "$SHAPES not built"

# run_case OUT MODE CASE: a session (MODE: none, or a reader-claim mode set before `run`).
run_case() {
    local out=$1 mode=$2 saved=("${CMDS[@]}")
    if [ "$mode" = none ]; then
        session "$out" none --args "$SHAPES" "$3"
    else
        CMDS=("set jitmap reader-claim $mode" "${CMDS[@]}")
        session "$out" jitmap --args "$SHAPES" "$3"
    fi
    CMDS=("${saved[@]}")
}

# -- absolute symbols --
CMDS=('break shapes_stop' run 'echo ==bt\n' bt 'echo ==.\n' "$STATS" 'echo ==end\n' continue)
for mode in none unnamed auto never; do
    run_case "$WORK/abs-$mode" "$mode" absolute
done
if grep -q "ptrace: Operation not permitted" "$WORK/abs-none"; then
    skip "GDB may not trace here (ptrace not permitted)"
fi
got=$(names "$(part "$WORK/abs-none" bt)")
expect "absolute, GDB alone: frame 1 is ?? (got '$got')" \
    test "$(frames "$(part "$WORK/abs-none" bt)" | sed -n 2p)" = "??"
for mode in unnamed auto never; do
    out=$WORK/abs-$mode
    tag="absolute, reader-claim $mode"
    expect "$tag: GDB ends normally" gdb_fine "$out"
    expect "$tag: the program ran to its end" grep -q "jitmap-shapes: done" "$out"
    got=$(names "$(part "$out" bt)")
    s=$(part "$out" stats)
    if [ "$mode" = never ]; then
        expect "$tag: bt is 'shapes_stop ?? main', GDB's names (got '$got')" test "$got" = "shapes_stop ?? main"
        expect "$tag: declined, unwound by the reader ($s)" \
            grep -Eq 'claimed=0 declined=1 .*unwinds=1 unwind_failures=0' <<<"$s"
    else
        expect "$tag: bt is 'shapes_stop shapes_absolute_fn main' (got '$got')" \
            test "$got" = "shapes_stop shapes_absolute_fn main"
        expect "$tag: claimed and unwound by the reader ($s)" \
            grep -Eq 'claimed=1 declined=0 .*unwinds=1 unwind_failures=0' <<<"$s"
    fi
done

# -- ET_REL symbols whose st_value is the address (issue 10, defect 4) --
CMDS=('break shapes_stop' run 'echo ==bt\n' bt 'echo ==.\n' "$STATS" 'echo ==status\n'
    'jitmap status' 'echo ==.\n' 'echo ==end\n' continue)
for mode in none unnamed; do
    run_case "$WORK/addr-$mode" "$mode" address
done
got=$(names "$(part "$WORK/addr-none" bt)")
expect "address, GDB alone: frame 1 is ?? (got '$got')" \
    test "$(frames "$(part "$WORK/addr-none" bt)" | sed -n 2p)" = "??"
out=$WORK/addr-unnamed
tag="address, reader-claim unnamed"
expect "$tag: GDB ends normally" gdb_fine "$out"
got=$(names "$(part "$out" bt)")
expect "$tag: bt is 'shapes_stop shapes_address_fn main' (got '$got')" \
    test "$got" = "shapes_stop shapes_address_fn main"
expect "$tag: claimed and unwound by the reader ($(part "$out" stats))" \
    grep -Eq 'claimed=1 declined=0 .*unwinds=1 unwind_failures=0' <<<"$(part "$out" stats)"
expect "$tag: jitmap status says the symbols hold addresses" \
    grep -q "function symbols hold addresses, not offsets" <<<"$(part "$out" status)"

# -- the outermost frame --
CMDS=('break shapes_stop' run 'echo ==bt\n' bt 'echo ==.\n'
    'python print("==pybt"); print(len(gdb.execute("bt", to_string=True).splitlines())); print("==.")'
    'frame 1' 'echo ==sym\n' 'info symbol $pc' 'echo ==brk\n' 'break shapes_outermost_fn'
    'echo ==fin\n' finish 'echo ==.\n' "$STATS" 'echo ==end\n' 'delete' continue)
for mode in none unnamed auto never; do
    run_case "$WORK/out-$mode" "$mode" outermost
done
c=$WORK/out-none
got=$(names "$(part "$c" bt)")
expect "outermost, GDB alone: bt ends at the JIT function (got '$got')" \
    test "$got" = "shapes_stop shapes_outermost_fn"
expect "outermost, GDB alone: finish is not meaningful there" \
    grep -q '"finish" not meaningful in the outermost frame' <<<"$(part "$c" fin)"
for mode in unnamed never; do
    out=$WORK/out-$mode
    tag="outermost, reader-claim $mode"
    expect "$tag: GDB ends normally" gdb_fine "$out"
    expect "$tag: bt is exactly GDB's own" test "$(part "$out" bt)" = "$(part "$c" bt)"
    expect "$tag: finish as GDB alone" test "$(part "$out" fin)" = "$(part "$c" fin)"
    expect "$tag: info symbol names the function" \
        grep -q "^shapes_outermost_fn + 16 in section .text" <<<"$(part "$out" sym)"
    expect "$tag: break NAME works" grep -Eq "^Breakpoint 2 at $HEX" <<<"$(part "$out" brk)"
    expect "$tag: declined, GDB's CFI ends the stack ($(part "$out" stats))" \
        grep -Eq 'claimed=0 declined=1 .*unwinds=0 unwind_failures=0 outermost=0' <<<"$(part "$out" stats)"
done
out=$WORK/out-auto
tag="outermost, reader-claim auto"
expect "$tag: GDB ends normally" gdb_fine "$out"
bt=$(part "$out" bt)
got=$(names "$bt")
# The reader ends the stack with a caller at PC 0 (GDB's jit-reader API has no other way);
# jitmap's frame filter ends the backtrace before that frame, where no code can be.
expect "$tag: bt is the safepoint and the JIT function, as GDB alone's (got '$got')" \
    test "$got" = "shapes_stop shapes_outermost_fn"
expect "$tag: no frame at PC 0 is shown" test "$(grep -Ec '^#[0-9]+ +0x0+ in' <<<"$bt")" -eq 0
expect "$tag: bt says nothing else (no error)" test "$(grep -cv '^#' <<<"$bt")" -eq 0
expect "$tag: bt through Python does not raise (2 lines)" test "$(part "$out" pybt)" = 2
expect "$tag: the reader ended the stack ($(part "$out" stats))" \
    grep -Eq 'claimed=1 .*unwind_failures=0 outermost=1' <<<"$(part "$out" stats)"

# -- a function that breaks the ABI: jitmap verify's callee-saved check --
CMDS=('break shapes_stop' run 'echo ==verify\n' 'jitmap verify -json' 'echo ==text\n'
    'jitmap verify' 'echo ==end\n' continue)
out=$WORK/abi
session "$out" jitmap --args "$SHAPES" abi-break
tag="abi-break"
expect "$tag: GDB ends normally" gdb_fine "$out"
expect "$tag: the program ran to its end" grep -q "jitmap-shapes: done" "$out"
addr=$(sed -n 's/^jitmap-shapes: abi-break name=shapes_abi_break addr=\(0x[0-9a-f]*\) .*/\1/p' "$out")
want=$(printf '0x%x rbx movl $0x2a, %%ebx\n0x%x r12 xorl %%r12d, %%r12d' \
    $((addr + 9)) $((addr + 14)))
# Every problem's check, function, address, register and instruction, one per line.
expect "$tag: verify -json keeps its schema" \
    python3 "$(dirname "$0")/../lib/jsoncontract.py" verify <(part "$out" verify)
got=$(part "$out" verify | python3 -c '
import json, sys
v = json.loads(sys.stdin.read())
assert v["records_checked"] == 2, v
for p in v["problems"]:
    print(p["check"], p["function"], p.get("address"), p.get("register"), p.get("instruction"))
')
expect "$tag: verify -json finds exactly the two writes ($got)" \
    test "$got" = "$(sed 's/^/callee-saved shapes_abi_break /' <<<"$want")"
text=$(part "$out" text)
expect "$tag: verify says 2 problems" grep -q "2 records checked, .*: 2 problems" <<<"$text"
expect "$tag: verify names the instruction and the register" \
    grep -q "callee-saved: shapes_abi_break+9 at $(printf 0x%x $((addr + 9))) (movl \$0x2a, %ebx) writes rbx" <<<"$text"
expect "$tag: nothing of the function that keeps the ABI" \
    test "$(grep -c shapes_abi_fine <<<"$text")" -eq 0

finish
