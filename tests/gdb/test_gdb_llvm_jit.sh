#!/usr/bin/env bash
# test_gdb_llvm_jit.sh BUILD_DIR: jitmap-demo-jit (LLVM 14, ORC and MCJIT) under GDB with
# jitmap's reader, against the same sessions without it (the negative control).
#
# For each engine and program (stackmaps, patchpoint, statepoint, recursion --depth 40), in
# both of the reader's claim modes that matter here: the default (`unnamed`: GDB's own reader
# names LLVM's objects, so the reader declines them) and `set jitmap reader-claim auto` (the
# reader claims them, gives GDB their symbols and unwinds their frames itself):
#   - `bt` names every JIT frame in order and reaches main; JIT frames sit on their records;
#   - outer JIT frames: callee-saved registers, the frame address and the caller's PC are
#     those GDB's own CFI unwinding gives. Caller-saved registers: by default exactly what GDB
#     alone shows (GDB's CFI unwinds these frames: numbers it cannot know either); claimed,
#     <not saved>;
#   - by default, names work as with GDB alone: `info symbol` at a JIT frame's PC and
#     `break NAME` on a JIT function give exactly GDB alone's answer; claimed, GDB finds the
#     functions by address only (`info symbol` finds nothing: the price of claiming);
#   - `frame N`, `up`, `down`, `info frame` in a deep recursion; `finish` out of the safepoint
#     into the JIT frame, and `bt` from there (frame 0 in JIT code); a breakpoint at a JIT
#     function's first instruction (found with the reader's name lookup), then `stepi`
#     through its prologue with `bt` at each instruction;
#   - the reader's counters: by default it declined the objects and unwound nothing (GDB's
#     CFI covers LLVM code); claimed, it unwound frames, none failed; it is not loaded in
#     the control;
#   - JIT code with DWARF (tests/gdb/dwarf_jit.c through clang -g, run with --ir): the reader
#     declines it in either mode, and bt, locals and lines are exactly what GDB alone shows.
# Prints "gdb-llvm-jit: N passed, M failed"; exits 77 when the demo JIT or GDB is missing.
NAME=gdb-llvm-jit
. "$(dirname "$0")/lib.sh"
[ -x "$DEMO" ] || skip "$DEMO not built (needs llvm-config-14)"

# field FILE LINE-REGEX KEY: KEY= of the first line of FILE matching LINE-REGEX.
field() { grep -Ex -- "$2" "$1" | head -n 1 | grep -Eo "(^| )$3=[^ ]+" | head -n 1 | cut -d= -f2; }
record_pc() { echo $(($(field "$1" "jitmap-demo: stackmap-record id=$2 .*" pc))); }
# frame_pc TEXT N: the PC `bt` shows for frame #N.
frame_pc() {
    local pc
    pc=$(grep -Eo "^#$2 +$HEX" <<<"$1" | head -n 1 | grep -Eo "$HEX")
    echo $((${pc:--1}))
}

CALLEE_SAVED="rbx rbp r12 r13 r14 r15 rsp rip"
CALLER_SAVED="rax rcx rdx rsi rdi r8 r9 r10 r11"
ALL_REGS="$CALLEE_SAVED $CALLER_SAVED"

# same_regs TAG TEXT-J TEXT-C REGS: each register has the same value in both.
same_regs() {
    local tag=$1 j=$2 c=$3 r
    for r in $4; do
        expect "$tag: $r = $(reg "$c" "$r") as GDB alone (got $(reg "$j" "$r"))" \
            test -n "$(reg "$c" "$r")" -a "$(reg "$j" "$r")" = "$(reg "$c" "$r")"
    done
}
# not_saved TAG TEXT REGS: each register is <not saved>.
not_saved() {
    local tag=$1 t=$2 r
    for r in $3; do
        expect "$tag: $r <not saved> (got $(reg "$t" "$r"))" test "$(reg "$t" "$r")" = "<not saved>"
    done
}
# stats_ok TAG FILE: by default the reader declined the objects and left their frames to
# GDB's CFI; claimed (CLAIM=auto), it unwound frames, none failed.
stats_ok() {
    local s
    s=$(part "$2" stats)
    if [ "$CLAIM" = auto ]; then
        expect "$1: the reader claimed the JIT objects ($s)" grep -Eq 'claimed=[1-9]' <<<"$s"
        expect "$1: the reader unwound frames, none failed ($s)" \
            grep -Eq 'unwinds=[1-9][0-9]* unwind_failures=0' <<<"$s"
    else
        expect "$1: the reader declined the JIT objects ($s)" \
            grep -Eq 'claimed=0 declined=[1-9]' <<<"$s"
        expect "$1: GDB's CFI unwound the JIT frames ($s)" \
            grep -Eq 'unwinds=0 unwind_failures=0' <<<"$s"
    fi
}
# caller_saved TAG TEXT-J TEXT-C: caller-saved registers of an outer frame above a JIT frame:
# claimed, <not saved>; by default, what GDB alone shows.
caller_saved() {
    if [ "$CLAIM" = auto ]; then
        not_saved "$1" "$2" "$CALLER_SAVED"
    else
        same_regs "$1" "$2" "$3" "$CALLER_SAVED"
    fi
}
# SHARED: where the commands' libjitmap and process model come from, and whether the
# commands' stackmap for the selected frame's PC is the reader's own object.
SHARED="python import ctypes, jitmap.gdb_reader as g, jitmap.native as N, jitmap.gdb_commands as G; \
cat = G.SESSION.get(G.GDB); pc = int(gdb.selected_frame().pc()); sm = ctypes.c_void_p(); \
g.library().jitmap_reader_lookup(pc, ctypes.byref(sm), None, None, None); mine = cat.stackmap_for_pc(pc); \
print('library=%s process=%s same-stackmap=%s' % ('plugin' if N.path() == g.path() else N.path(), \
'reader' if G.GDB.shared_process() else 'own', mine is not None and sm.value == mine.handle))"
# jsession OUT ARGS...: a session with jitmap, in claim mode $CLAIM (set before `run`).
jsession() {
    local out=$1 saved=("${CMDS[@]}")
    shift
    [ "$CLAIM" = auto ] && CMDS=('set jitmap reader-claim auto' "${CMDS[@]}")
    session "$out" jitmap "$@"
    CMDS=("${saved[@]}")
}

for CLAIM in default auto; do
for engine in orc mcjit; do
    # -- stackmaps: two safepoints, registers in outer frames, names, finish --
    tag="$engine stackmaps, claim $CLAIM"
    CMDS=('break jitmap_demo_safepoint' run 'echo ==bt100\n' bt 'echo ==.\n' continue 'echo ==bt101\n' bt 'echo ==.\n'
        'frame 2' 'echo ==f2\n' 'info frame' "info registers $ALL_REGS"
        'frame 3' 'echo ==f3\n' "info registers $CALLEE_SAVED"
        'frame 1' 'echo ==sym\n' 'info symbol $pc' 'break stackmaps_main' 'echo ==.\n'
        'frame 0' 'echo ==finish\n' finish 'echo ==after\n' 'info registers rip' bt 'echo ==.\n'
        'frame 1' 'echo ==after1\n' "info registers $ALL_REGS" "$STATS" 'echo ==end\n'
        'frame 0' 'echo ==sm1\n' 'info stackmap' 'echo ==shared\n' "$SHARED" 'jit-reader-unload'
        'echo ==sm2\n' 'info stackmap' 'echo ==end\n' kill)
    j=$WORK/$engine-stackmaps-$CLAIM.j c=$WORK/$engine-stackmaps.c
    jsession "$j" --args "$DEMO" "--$engine" --program stackmaps
    [ "$CLAIM" = default ] && session "$c" none --args "$DEMO" "--$engine" --program stackmaps
    if grep -q "ptrace: Operation not permitted" "$j"; then
        skip "GDB may not trace here (ptrace not permitted)"
    fi
    expect "$tag: GDB ends normally" gdb_fine "$j"
    want="jitmap_demo_safepoint stackmaps_main run_stackmaps main"
    got=$(names "$(part "$j" bt100)")
    expect "$tag: bt at 100 is '$want' (got '$got')" test "$got" = "$want"
    want="jitmap_demo_safepoint stackmaps_inner stackmaps_main run_stackmaps main"
    got=$(names "$(part "$j" bt101)")
    expect "$tag: bt at 101 is '$want' (got '$got')" test "$got" = "$want"
    expect "$tag: bt at 101 as GDB alone" test "$got" = "$(names "$(part "$c" bt101)")"
    expect "$tag: frame 1 on record 101, frame 2 on record 102" test \
        "$(frame_pc "$(part "$j" bt101)" 1)" -eq "$(record_pc "$j" 101)" -a \
        "$(frame_pc "$(part "$j" bt101)" 2)" -eq "$(record_pc "$j" 102)"
    f2j=$(part "$j" f2) f2c=$(part "$c" f2)
    same_regs "$tag: frame 2 (JIT)" "$f2j" "$f2c" "$CALLEE_SAVED"
    caller_saved "$tag: frame 2" "$f2j" "$f2c"
    expect "$tag: frame 2's frame address as GDB alone" test \
        "$(grep -Eo 'frame at [^:,]+' <<<"$f2j" | head -n 1)" = \
        "$(grep -Eo 'frame at [^:,]+' <<<"$f2c" | head -n 1)"
    expect "$tag: control: GDB alone shows a number for rax in frame 2 ($(reg "$f2c" rax))" \
        grep -Eq '^0x' <<<"$(reg "$f2c" rax)"
    same_regs "$tag: frame 3 (C, above JIT frames)" "$(part "$j" f3)" "$(part "$c" f3)" "$CALLEE_SAVED"
    symc=$(part "$c" sym) symj=$(part "$j" sym)
    expect "$tag: control: GDB alone names the JIT frame and breaks by name ($symc)" \
        grep -Eq "^stackmaps_inner \+ [0-9]+ in section \.text of <in-memory@$HEX(-$HEX)?>" <<<"$symc"
    expect "$tag: control: break stackmaps_main works alone" grep -Eq "^Breakpoint 2 at $HEX" <<<"$symc"
    if [ "$CLAIM" = auto ]; then
        expect "$tag: claimed: info symbol does not find the JIT function ($symj)" \
            grep -q "^No symbol matches" <<<"$symj"
    else
        expect "$tag: info symbol and break NAME exactly as GDB alone" test "$symj" = "$symc"
    fi
    fin=$(part "$j" finish) after=$(part "$j" after)
    expect "$tag: finish returns into stackmaps_inner" grep -Eq "^$HEX in stackmaps_inner \(\)" <<<"$fin"
    want="stackmaps_inner stackmaps_main run_stackmaps main"
    got=$(names "$after")
    expect "$tag: after finish, bt is '$want' (got '$got')" test "$got" = "$want"
    expect "$tag: after finish, the PC is on record 101" test \
        "$(($(reg "$after" rip)))" -eq "$(record_pc "$j" 101)"
    same_regs "$tag: after finish, frame 1" "$(part "$j" after1)" "$(part "$c" after1)" "$CALLEE_SAVED"
    caller_saved "$tag: after finish, frame 1" "$(part "$j" after1)" "$(part "$c" after1)"
    stats_ok "$tag" "$j"
    expect "$tag: control: the reader is not loaded" test "$(part "$c" stats)" = "not loaded"
    # One parse per session: the commands' catalog holds the very stackmap the reader uses.
    expect "$tag: the commands scan into the reader's process, one stackmap object for both ($(part "$j" shared))" \
        test "$(part "$j" shared)" = "library=plugin process=reader same-stackmap=True"
    sm1=$(part "$j" sm1)
    expect "$tag: info stackmap shows record 101" grep -q "^record 101 at " <<<"$sm1"
    expect "$tag: after jit-reader-unload, info stackmap (own process) is the same" \
        test "$(part "$j" sm2)" = "$sm1"

    # -- frame 0 in JIT code: a breakpoint at a JIT function's first instruction, then
    #    stepi through its prologue (the CFI row at each exact PC) --
    tag="$engine prologue, claim $CLAIM"
    CMDS=('break jitmap_demo_safepoint' run
        'python import jitmap.gdb_reader as g; gdb.execute("tbreak *%d" % g.function_addresses("stackmaps_inner")[0])'
        continue 'echo ==s0\n' bt 'echo ==.\n')
    for i in 1 2 3 4 5 6 7 8 9 10; do CMDS+=(stepi "echo ==s$i\n" bt 'echo ==.\n'); done
    CMDS+=("$STATS" 'echo ==end\n' kill)
    j=$WORK/$engine-prologue-$CLAIM.j
    jsession "$j" --args "$DEMO" "--$engine" --program stackmaps
    expect "$tag: GDB ends normally" gdb_fine "$j"
    want="stackmaps_inner stackmaps_main run_stackmaps main"
    ret=""
    for i in 0 1 2 3 4 5 6 7 8 9 10; do
        got=$(names "$(part "$j" "s$i")")
        expect "$tag: after $i stepi, bt is '$want' (got '$got')" test "$got" = "$want"
        pc=$(frame_pc "$(part "$j" "s$i")" 1)
        [ -n "$ret" ] || ret=$pc
        expect "$tag: after $i stepi, frame 1 is the same call ($pc)" test "$pc" = "$ret"
    done
    stats_ok "$tag" "$j"

    # -- recursion: 41 JIT frames of one function; frame N, up, down --
    tag="$engine recursion, claim $CLAIM"
    CMDS=('break jitmap_demo_safepoint' run 'echo ==bt\n' bt 'echo ==.\n'
        'frame 20' 'echo ==f20\n' 'info frame' "info registers $ALL_REGS"
        up 'echo ==up\n' 'info registers rip rsp rbx' down down 'echo ==down\n'
        'info registers rip rsp rbx' 'frame 41' 'echo ==f41\n' "info registers $CALLEE_SAVED"
        "$STATS" 'echo ==end\n' kill)
    j=$WORK/$engine-rec-$CLAIM.j c=$WORK/$engine-rec.c
    jsession "$j" --args "$DEMO" "--$engine" --program recursion --depth 40
    [ "$CLAIM" = default ] && session "$c" none --args "$DEMO" "--$engine" --program recursion --depth 40
    expect "$tag: GDB ends normally" gdb_fine "$j"
    want="jitmap_demo_safepoint$(printf ' recurse%.0s' $(seq 41)) recursion_main run_recursion main"
    got=$(names "$(part "$j" bt)")
    expect "$tag: bt is the safepoint, 41 recurse, recursion_main, run_recursion, main" \
        test "$got" = "$want"
    off=0
    while read -r pc; do
        [ "$((pc))" -eq "$(record_pc "$j" 400)" ] || [ "$((pc))" -eq "$(record_pc "$j" 401)" ] ||
            off=$((off + 1))
    done < <(grep -E "^#[0-9]+ +$HEX in recurse " <<<"$(part "$j" bt)" | grep -Eo "$HEX")
    expect "$tag: every recurse frame on record 400 or 401 ($off off)" test "$off" -eq 0
    same_regs "$tag: frame 20" "$(part "$j" f20)" "$(part "$c" f20)" "$CALLEE_SAVED"
    caller_saved "$tag: frame 20" "$(part "$j" f20)" "$(part "$c" f20)"
    expect "$tag: frame 20: info frame names its caller" grep -q "called by frame at" <<<"$(part "$j" f20)"
    same_regs "$tag: up (frame 21)" "$(part "$j" up)" "$(part "$c" up)" "rip rsp rbx"
    same_regs "$tag: down down (frame 19)" "$(part "$j" down)" "$(part "$c" down)" "rip rsp rbx"
    same_regs "$tag: frame 41 (the outermost recurse)" "$(part "$j" f41)" "$(part "$c" f41)" "$CALLEE_SAVED"
    stats_ok "$tag" "$j"

    # -- patchpoint: through the anyregcc trampoline (C with CFI) --
    tag="$engine patchpoint, claim $CLAIM"
    CMDS=('break jitmap_demo_safepoint if id == 201' run 'echo ==bt\n' bt 'echo ==.\n'
        'frame 3' 'echo ==f3\n' "info registers $ALL_REGS" "$STATS" 'echo ==end\n' kill)
    j=$WORK/$engine-pp-$CLAIM.j c=$WORK/$engine-pp.c
    jsession "$j" --args "$DEMO" "--$engine" --program patchpoint
    [ "$CLAIM" = default ] && session "$c" none --args "$DEMO" "--$engine" --program patchpoint
    expect "$tag: GDB ends normally" gdb_fine "$j"
    want="jitmap_demo_safepoint jitmap_demo_safepoint_anyreg patchpoint_anyreg patchpoint_main run_patchpoint main"
    got=$(names "$(part "$j" bt)")
    expect "$tag: bt is '$want' (got '$got')" test "$got" = "$want"
    same_regs "$tag: frame 3 (patchpoint_main)" "$(part "$j" f3)" "$(part "$c" f3)" "$CALLEE_SAVED"
    caller_saved "$tag: frame 3" "$(part "$j" f3)" "$(part "$c" f3)"
    stats_ok "$tag" "$j"

    # -- statepoint: two statepoints in one JIT function --
    tag="$engine statepoint, claim $CLAIM"
    CMDS=('break jitmap_demo_safepoint' run 'echo ==bt300\n' bt 'echo ==.\n' continue 'echo ==bt301\n' bt 'echo ==.\n'
        'frame 2' 'echo ==f2\n' "info registers $CALLEE_SAVED" "$STATS" 'echo ==end\n' kill)
    j=$WORK/$engine-sp-$CLAIM.j c=$WORK/$engine-sp.c
    jsession "$j" --args "$DEMO" "--$engine" --program statepoint
    [ "$CLAIM" = default ] && session "$c" none --args "$DEMO" "--$engine" --program statepoint
    expect "$tag: GDB ends normally" gdb_fine "$j"
    want="jitmap_demo_safepoint statepoint_main run_statepoint main"
    for id in 300 301; do
        got=$(names "$(part "$j" "bt$id")")
        expect "$tag: bt at $id is '$want' (got '$got')" test "$got" = "$want"
        expect "$tag: frame 1 at $id on its record" test \
            "$(frame_pc "$(part "$j" "bt$id")" 1)" -eq "$(record_pc "$j" "$id")"
    done
    same_regs "$tag: frame 2 (C, above the JIT frame)" "$(part "$j" f2)" "$(part "$c" f2)" "$CALLEE_SAVED"
    stats_ok "$tag" "$j"
done
done

# -- JIT code with DWARF: GDB's lines and variables, unchanged by jitmap --
clang=$(command -v clang-14 || command -v clang || true)
if [ -n "$clang" ]; then
    ir=$WORK/dwarf_jit.ll
    if "$clang" -S -emit-llvm -g -O1 -fno-omit-frame-pointer "$(dirname "$0")/dwarf_jit.c" -o "$ir"; then
        CMDS=('break jitmap_demo_safepoint' run 'echo ==bt\n' bt 'echo ==.\n' 'frame 1'
            'echo ==f1\n' 'info locals' 'info line *$pc' 'echo ==.\n' "$STATS" 'echo ==end\n' kill)
        for engine in orc mcjit; do
          for CLAIM in default auto; do
            tag="$engine, JIT code with DWARF, claim $CLAIM"
            j=$WORK/$engine-dwarf-$CLAIM.j c=$WORK/$engine-dwarf.c
            jsession "$j" --args "$DEMO" "--$engine" --ir "$ir"
            [ "$CLAIM" = default ] && session "$c" none --args "$DEMO" "--$engine" --ir "$ir"
            expect "$tag: GDB ends normally" gdb_fine "$j"
            expect "$tag: GDB alone shows lines and arguments" \
                grep -Eq "in dwarf_helper \(.*\) at .*dwarf_jit.c:[0-9]+" <<<"$(part "$c" bt)"
            expect "$tag: bt is exactly GDB's own" test "$(part "$j" bt)" = "$(part "$c" bt)"
            expect "$tag: locals and lines are exactly GDB's own" test "$(part "$j" f1)" = "$(part "$c" f1)"
            expect "$tag: the variable is there" grep -q "^local = " <<<"$(part "$j" f1)"
            expect "$tag: the reader declined the object and left its frames to GDB ($(part "$j" stats))" \
                grep -Eq 'claimed=0 declined=1 .*unwinds=0 ' <<<"$(part "$j" stats)"
          done
        done
    else
        bad "clang could not compile dwarf_jit.c"
    fi
else
    echo "$NAME: note: no clang; the DWARF case is not tested"
fi

finish
