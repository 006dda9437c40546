#!/usr/bin/env bash
# test_gdb_handjit.sh BUILD_DIR: jitmap-handjit (hand-written x86-64 code, no unwind tables,
# a frameless function, registered through the producer API) under GDB with jitmap's reader.
#
#   - bt: safepoint, handjit_inner, handjit_outer, main, each JIT frame on its record PC, each
#     frame at the CFA the program reports; GDB alone (the negative control) cannot unwind the
#     frameless function and shows garbage frames instead;
#   - outer frames: SP is the caller's CFA, callee-saved registers hold the values the program
#     reports or are <not saved> (never another number), caller-saved are <not saved>;
#   - up, down, frame N, info frame; finish out of the safepoint into handjit_inner, then bt;
#   - names: by default (reader-claim unnamed) the reader declines the entry, whose symbols
#     GDB's own reader names: `info symbol` in a JIT frame and `break NAME` on a JIT function
#     give exactly GDB alone's answer, and the reader still unwinds (GDB has no CFI for this
#     code); the same session with `set jitmap reader-claim auto` (the reader claims the
#     entry: same frames and registers, names found by address only) and with
#     JITMAP_READER_CLAIM=never in the environment.
# Prints "gdb-handjit: N passed, M failed"; exits 77 when GDB or the program is missing.
NAME=gdb-handjit
. "$(dirname "$0")/lib.sh"
[ -x "$HANDJIT" ] || skip "$HANDJIT not built"

# truth FILE ID KEY: KEY= on the program's truth line for record ID.
truth() { sed -n "s/^jitmap-handjit: record id=$2 .* $3=\([^ ]*\).*/\1/p" "$1" | head -n 1; }
frame_pc() { grep -Eo "^#$2 +$HEX" <<<"$1" | head -n 1 | grep -Eo "$HEX"; }
frame_at() { grep -Eo 'frame at 0x[0-9a-f]+' <<<"$1" | head -n 1 | grep -Eo "$HEX"; }
# known_or_unsaved TAG TEXT REG WANT: REG shows WANT (decimal) or <not saved>.
known_or_unsaved() {
    local v
    v=$(reg "$2" "$3")
    [ "$v" = "<not saved>" ] || v=$((${v:-0}))
    expect "$1: $3 is $4 or <not saved> (got $v)" test "$v" = "<not saved>" -o "$v" = "$4"
}

WANT="jitmap_handjit_safepoint handjit_inner handjit_outer main"
CMDS=('break jitmap_handjit_safepoint' run 'echo ==bt\n' bt 'echo ==.\n'
    'frame 1' 'echo ==sm\n' 'info stackmap' 'echo ==.\n'
    'frame 1' 'echo ==sym\n' 'info symbol $pc' 'break handjit_outer' 'echo ==.\n'
    'frame 1' 'echo ==f1\n' 'info frame' 'info registers rbx r12 rbp rsp rip rax'
    up 'echo ==f2\n' 'info frame' 'info registers rbx r12 rbp rsp rip rax rcx rdx rsi rdi r8 r9 r10 r11'
    'frame 3' 'echo ==f3\n' 'info frame' 'info registers rsp rip'
    down 'echo ==down\n' 'info registers rip'
    'frame 0' 'echo ==finish\n' finish 'echo ==after\n' 'info registers rip rsp' bt 'echo ==.\n'
    "$STATS" 'echo ==end\n' kill)
c=$WORK/handjit.c
session "$c" none "$HANDJIT"
if grep -q "ptrace: Operation not permitted" "$c"; then
    skip "GDB may not trace here (ptrace not permitted)"
fi
symc=$(part "$c" sym)
expect "control: GDB alone names handjit_inner" \
    grep -Eq "^handjit_inner \+ [0-9]+ in section \.text of <in-memory@$HEX(-$HEX)?>" <<<"$symc"
expect "control: GDB alone breaks on handjit_outer by name" grep -Eq "^Breakpoint 2 at $HEX" <<<"$symc"

# The same session in each claim mode: unnamed (the default), auto (set before `run`), and
# never (through the environment).
for CLAIM in default auto never; do
j=$WORK/handjit-$CLAIM.j
case $CLAIM in
default) session "$j" jitmap "$HANDJIT" ;;
auto)
    saved=("${CMDS[@]}")
    CMDS=('set jitmap reader-claim auto' "${saved[@]}")
    session "$j" jitmap "$HANDJIT"
    CMDS=("${saved[@]}")
    ;;
never) JITMAP_READER_CLAIM=never session "$j" jitmap "$HANDJIT" ;;
esac
t="claim $CLAIM"

expect "$t: GDB ends normally" gdb_fine "$j"
got=$(names "$(part "$j" bt)")
expect "$t: bt is '$WANT' (got '$got')" test "$got" = "$WANT"
bt=$(part "$j" bt)
expect "$t: frame 1 on record 1002" test "$(($(frame_pc "$bt" 1)))" -eq "$(($(truth "$j" 1002 pc)))"
expect "$t: frame 2 on record 1001" test "$(($(frame_pc "$bt" 2)))" -eq "$(($(truth "$j" 1001 pc)))"
expect "$t: info stackmap in frame 1 shows record 1002" \
    grep -q '^record 1002 at ' <<<"$(part "$j" sm)"
f1=$(part "$j" f1) f2=$(part "$j" f2) f3=$(part "$j" f3)
expect "$t: frame 1 is at handjit_inner's CFA" test "$(($(frame_at "$f1")))" -eq "$(($(truth "$j" 1002 cfa)))"
expect "$t: frame 2 is at handjit_outer's CFA" test "$(($(frame_at "$f2")))" -eq "$(($(truth "$j" 1001 cfa)))"
expect "$t: frame 1 says who called it" grep -q "saved rip = $(truth "$j" 1001 pc)" <<<"$f1"
expect "$t: frame 1: rbx is the VM value the program reports" test "$(($(reg "$f1" rbx)))" -eq "$(truth "$j" 1002 local0)"
expect "$t: frame 2: SP is handjit_inner's CFA" test "$(($(reg "$f2" rsp)))" -eq "$(($(truth "$j" 1002 cfa)))"
expect "$t: frame 2: PC is record 1001's" test "$(($(reg "$f2" rip)))" -eq "$(($(truth "$j" 1001 pc)))"
known_or_unsaved "$t: frame 2" "$f2" rbx "$(truth "$j" 1001 local0)"
known_or_unsaved "$t: frame 2" "$f2" r12 "$(truth "$j" 1001 local1)"
for r in rax rcx rdx rsi rdi r8 r9 r10 r11; do
    expect "$t: frame 2: $r <not saved> (got $(reg "$f2" "$r"))" test "$(reg "$f2" "$r")" = "<not saved>"
done
expect "$t: frame 3 (main): SP is handjit_outer's CFA" test "$(($(reg "$f3" rsp)))" -eq "$(($(truth "$j" 1001 cfa)))"
expect "$t: frame 3 is main" grep -Eq "in main( |$)" <<<"$f3"
expect "$t: down from main is handjit_outer" test "$(($(reg "$(part "$j" down)" rip)))" -eq "$(($(truth "$j" 1001 pc)))"
fin=$(part "$j" finish) after=$(part "$j" after)
expect "$t: finish returns into handjit_inner" grep -Eq "^$HEX in handjit_inner \(\)" <<<"$fin"
expect "$t: after finish the PC is record 1002's" test "$(($(reg "$after" rip)))" -eq "$(($(truth "$j" 1002 pc)))"
got=$(names "$after")
expect "$t: after finish, bt is 'handjit_inner handjit_outer main' (got '$got')" \
    test "$got" = "handjit_inner handjit_outer main"
s=$(part "$j" stats) symj=$(part "$j" sym)
if [ "$CLAIM" = auto ]; then
    expect "$t: the reader claimed the entry and unwound frames ($s)" \
        grep -Eq 'claimed=1 .*unwinds=[1-9][0-9]* unwind_failures=0' <<<"$s"
    expect "$t: claimed: info symbol does not find handjit_inner ($symj)" \
        grep -q "^No symbol matches" <<<"$symj"
else
    expect "$t: the reader declined the entry, yet unwound its frames ($s)" \
        grep -Eq 'claimed=0 declined=1 .*unwinds=[1-9][0-9]* unwind_failures=0' <<<"$s"
    expect "$t: info symbol and break NAME exactly as GDB alone ($symj)" test "$symj" = "$symc"
fi
done

# Negative control: GDB alone cannot unwind the frameless handjit_inner, before GDB 18, whose
# amd64 prologue analyzer reads its `sub $24, %rsp` (and handjit_outer's pushes); no GDB
# alone has the records.
got=$(names "$(part "$c" bt)")
if [ "$GDB_MAJOR" -ge 18 ]; then
    expect "control: GDB $GDB_MAJOR alone unwinds the hand-written JIT itself (got '$got')" \
        test "$got" = "$WANT"
else
    expect "control: without jitmap, bt is not '$WANT' (got '$got')" test "$got" != "$WANT"
    expect "control: without jitmap, frame 2 is not handjit_outer" \
        test "$(frames "$(part "$c" bt)" | sed -n 3p)" != handjit_outer
fi
expect "control: without jitmap, no info stackmap" \
    grep -q 'Undefined info command: "stackmap"' <<<"$(part "$c" sm)"
expect "control: the reader is not loaded" test "$(part "$c" stats)" = "not loaded"

# Staleness: the program run twice in one session (kill forgets the first run's entry), and
# an entry unregistered and unmapped before exit (dropped at its next check).
CMDS=('break jitmap_handjit_safepoint' run 'echo ==bt1\n' bt 'echo ==.\n' kill "$STATS"
    run 'echo ==bt2\n' bt 'echo ==.\n' "$STATS" 'echo ==end\n' kill)
r=$WORK/handjit.rerun
session "$r" jitmap "$HANDJIT"
expect "run twice: GDB ends normally" gdb_fine "$r"
for n in 1 2; do
    got=$(names "$(part "$r" bt$n)")
    expect "run twice: run $n: bt is '$WANT' (got '$got')" test "$got" = "$WANT"
done
expect "run twice: kill forgot the first entry ($(sed -n '/^==stats/{n;p;q}' "$r"))" \
    grep -Eq 'reads=1 .*dropped=1' <<<"$(sed -n '/^==stats/{n;p;q}' "$r")"
CMDS=('break jitmap_handjit_safepoint' run 'echo ==bt\n' bt 'echo ==.\n' 'break exit' continue
    'python import jitmap.gdb_reader as g; l = g.library(); l.jitmap_reader_index(); print("==after"); print("entries=%d" % l.jitmap_reader_num_entries()); print(l.jitmap_reader_last_error().decode())'
    'echo ==end\n' kill)
u=$WORK/handjit.unreg
session "$u" jitmap --args "$HANDJIT" --unregister
expect "unregistered: the program unregistered and unmapped its code" grep -q "jitmap-handjit: unregistered" "$u"
got=$(names "$(part "$u" bt)")
expect "unregistered: bt while registered is '$WANT' (got '$got')" test "$got" = "$WANT"
expect "unregistered: the stale entry was dropped ($(part "$u" after | tr '\n' ' '))" \
    grep -Eq '^entries=0' <<<"$(part "$u" after)"
expect "unregistered: the reader says why" grep -q "is stale: dropped" <<<"$(part "$u" after)"

finish
