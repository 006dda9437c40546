#!/usr/bin/env bash
# test_gdb_core.sh BUILD_DIR: core files of the example JITs under GDB with jitmap's reader.
#
# Cores come from `gcore` (in a live session stopped at the safepoint) and from the kernel
# (the programs' --abort mode, with `ulimit -c unlimited`; skipped with a note when the
# kernel's core_pattern sends cores elsewhere). Each core is opened four ways:
#   before: jitmap.gdb sourced before the core is loaded (the reader reads every entry);
#   after:  the core loaded first, then jitmap.gdb (it unloads and reloads the reader so that
#           the entries GDB's built-in reader took are read again);
#   manual: the core first, then `jit-reader-load` by hand: GDB does not call the reader for
#           entries it already read, so nothing changes until `jit-reader-unload` and
#           `jit-reader-load` again (gdb-jit-interface.md §3);
#   none:   the negative control;
#   auto-before, auto-after: as before and after, with JITMAP_READER_CLAIM=auto (the reader
#           claims the entries: by default it declines them, GDB's reader naming them).
# Checks: bt names the JIT frames in order up to main; the frame above a JIT frame has its
# callee-saved registers, and its caller-saved ones are <not saved> where the reader unwound
# the JIT frame (handjit's always, LLVM's when claimed) and by default exactly GDB alone's
# for LLVM code (GDB's CFI unwinds it); handjit's frames need the reader (the control and
# "manual" before the reload fail).
# Prints "gdb-core: N passed, M failed"; exits 77 when GDB or the programs are missing.
NAME=gdb-core
. "$(dirname "$0")/lib.sh"
[ -x "$HANDJIT" ] || skip "$HANDJIT not built"

# tail_from TEXT FUNCTION: the frame names of bt from FUNCTION on.
tail_from() { names "$1" | sed -n "s/.*\(^\| \)\($2 .*\)/\2/p"; }

# make_gcore CORE PROGRAM BREAKPOINT [COMMANDS...]: a core written by gcore in a live session
# of PROGRAM (arguments in PROGRAM_ARGS) stopped at BREAKPOINT, after COMMANDS.
make_gcore() {
    local core=$1 prog=$2 bp=$3
    shift 3
    CMDS=("break $bp" run "$@" "gcore $core" kill)
    session "$core.log" jitmap --args "$prog" "${PROGRAM_ARGS[@]}"
    [ -s "$core" ]
}

# make_kcore CORE PROGRAM ARGS...: a core written by the kernel when PROGRAM aborts.
make_kcore() {
    local core=$1 dir
    shift
    dir=$(mktemp -d "$WORK/kcore.XXXXXX")
    { (cd "$dir" && ulimit -c unlimited && exec "$@" >"$dir/out.txt" 2>&1); } 2>/dev/null
    local f
    f=$(find "$dir" -maxdepth 1 -name 'core*' -type f | head -n 1)
    [ -n "$f" ] && mv "$f" "$core"
}

# open_core OUT WAY PROGRAM CORE: runs CMDS on CORE, opened WAY (before|after|manual|none,
# or auto-before|auto-after).
open_core() {
    local out=$1 way=$2 prog=$3 core=$4 saved=("${CMDS[@]}")
    case $way in
    auto-*)
        JITMAP_READER_CLAIM=auto open_core "$out" "${way#auto-}" "$prog" "$core"
        return
        ;;
    before) session "$out" jitmap "$prog" "$core" ;;
    after)
        CMDS=("source $JITMAP_GDB" "${saved[@]}")
        session "$out" none "$prog" "$core"
        ;;
    manual)
        CMDS=("jit-reader-load $PLUGIN" 'echo ==pre\n' bt 'echo ==.\n' jit-reader-unload
            "jit-reader-load $PLUGIN" "source $JITMAP_GDB" "${saved[@]}")
        session "$out" none "$prog" "$core"
        ;;
    none) session "$out" none "$prog" "$core" ;;
    esac
    CMDS=("${saved[@]}")
}

kcore_note=""
case $(cat /proc/sys/kernel/core_pattern 2>/dev/null) in
'|'*) kcore_note="the kernel pipes cores to $(cut -d' ' -f1 /proc/sys/kernel/core_pattern)" ;;
esac

# -- handjit: no unwind tables, the reader is needed --

WANT="jitmap_handjit_safepoint handjit_inner handjit_outer main"
cores=()
PROGRAM_ARGS=()
make_gcore "$WORK/handjit.gcore" "$HANDJIT" jitmap_handjit_safepoint && cores+=(gcore)
expect "handjit: gcore wrote a core" test -s "$WORK/handjit.gcore"
if [ -z "$kcore_note" ] && make_kcore "$WORK/handjit.kcore" "$HANDJIT" --abort; then
    cores+=(kcore)
else
    echo "$NAME: note: no kernel core from jitmap-handjit --abort ${kcore_note:+($kcore_note)}"
fi
CMDS=('echo ==bt\n' bt 'echo ==.\n' "$(select_frame handjit_outer)" 'echo ==fo\n'
    'info registers rsp rip rax rcx' "$STATS" 'echo ==end\n')
for kind in "${cores[@]}"; do
    core=$WORK/handjit.$kind
    for way in before after manual none auto-before; do
        out=$WORK/handjit-$kind-$way
        open_core "$out" "$way" "$HANDJIT" "$core"
        tag="handjit $kind, reader $way"
        expect "$tag: GDB ends normally" gdb_fine "$out"
        got=$(tail_from "$(part "$out" bt)" jitmap_handjit_safepoint)
        if [ "$way" = none ] && [ "$GDB_MAJOR" -ge 18 ]; then
            # GDB 18 alone unwinds the hand-written JIT (test_gdb_handjit.sh says how).
            expect "$tag: control: GDB $GDB_MAJOR alone unwinds it (got '$got')" test "$got" = "$WANT"
            continue
        elif [ "$way" = none ]; then
            expect "$tag: control: bt is not '$WANT' (got '$got')" test "$got" != "$WANT"
            continue
        fi
        expect "$tag: bt from the safepoint is '$WANT' (got '$got')" test "$got" = "$WANT"
        fo=$(part "$out" fo)
        for r in rax rcx; do
            expect "$tag: handjit_outer: $r <not saved>" test "$(reg "$fo" $r)" = "<not saved>"
        done
        want='claimed=0 declined=1 .*unwinds=[1-9]'
        [ "$way" = auto-before ] && want='claimed=1 .*unwinds=[1-9]'
        expect "$tag: the reader unwound frames ($(part "$out" stats))" \
            grep -Eq "$want" <<<"$(part "$out" stats)"
        if [ "$way" = manual ] && [ "$GDB_MAJOR" -lt 18 ]; then
            got=$(tail_from "$(part "$out" pre)" jitmap_handjit_safepoint)
            expect "$tag: before the reload, GDB kept its own reading (got '$got')" test "$got" != "$WANT"
        fi
    done
done

# -- jitmap-demo-jit: LLVM objects (with .eh_frame), ORC and MCJIT --

if [ -x "$DEMO" ]; then
    WANT="jitmap_demo_safepoint stackmaps_inner stackmaps_main run_stackmaps main"
    for engine in orc mcjit; do
        cores=()
        PROGRAM_ARGS=("--$engine" --program stackmaps)
        make_gcore "$WORK/$engine.gcore" "$DEMO" jitmap_demo_safepoint continue && cores+=(gcore)
        expect "$engine: gcore wrote a core" test -s "$WORK/$engine.gcore"
        if [ -z "$kcore_note" ] &&
            make_kcore "$WORK/$engine.kcore" "$DEMO" "--$engine" --program stackmaps --abort-at 2; then
            cores+=(kcore)
        else
            echo "$NAME: note: no kernel core from jitmap-demo-jit --abort-at 2 ${kcore_note:+($kcore_note)}"
        fi
        CMDS=('echo ==bt\n' bt 'echo ==.\n' "$(select_frame stackmaps_main)" 'echo ==fm\n'
            'info registers rbx rbp r12 r13 r14 r15 rsp rip rax rcx' "$STATS" 'echo ==end\n')
        for kind in "${cores[@]}"; do
            core=$WORK/$engine.$kind
            for way in before after none auto-before auto-after; do
                out=$WORK/$engine-$kind-$way
                open_core "$out" "$way" "$DEMO" "$core"
                tag="$engine $kind, reader $way"
                expect "$tag: GDB ends normally" gdb_fine "$out"
                got=$(tail_from "$(part "$out" bt)" jitmap_demo_safepoint)
                expect "$tag: bt from the safepoint is '$WANT' (got '$got')" test "$got" = "$WANT"
            done
            c=$(part "$WORK/$engine-$kind-none" fm)
            for way in before auto-before; do
                j=$(part "$WORK/$engine-$kind-$way" fm)
                for r in rbx rbp r12 r13 r14 r15 rsp rip; do
                    expect "$engine $kind, $way: stackmaps_main: $r as GDB alone" \
                        test -n "$(reg "$c" $r)" -a "$(reg "$j" $r)" = "$(reg "$c" $r)"
                done
            done
            j=$(part "$WORK/$engine-$kind-before" fm)
            expect "$engine $kind, before: stackmaps_main: rax rcx as GDB alone ($(reg "$c" rax) $(reg "$c" rcx))" \
                test "$(reg "$j" rax) $(reg "$j" rcx)" = "$(reg "$c" rax) $(reg "$c" rcx)"
            j=$(part "$WORK/$engine-$kind-auto-before" fm)
            expect "$engine $kind, auto-before: stackmaps_main: rax <not saved> (GDB alone: $(reg "$c" rax))" \
                test "$(reg "$j" rax)" = "<not saved>"
            for way in before after; do
                s=$(part "$WORK/$engine-$kind-$way" stats)
                expect "$engine $kind, reader $way: declined, GDB's CFI unwound them ($s)" \
                    grep -Eq 'claimed=0 declined=[1-9].*unwinds=0 unwind_failures=0' <<<"$s"
                s=$(part "$WORK/$engine-$kind-auto-$way" stats)
                expect "$engine $kind, reader auto-$way: claimed and unwound ($s)" \
                    grep -Eq 'claimed=[1-9].*unwinds=[1-9][0-9]* unwind_failures=0' <<<"$s"
            done
        done
    done
else
    echo "$NAME: note: $DEMO not built; LLVM cores not tested"
fi

finish
