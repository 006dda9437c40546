#!/usr/bin/env bash
# test_gdb_attach.sh BUILD_DIR: `gdb -p` to the example JITs waiting in their safepoint
# (--pause), with jitmap's reader loaded before the attach (`source` then `attach PID`: the
# reader reads every entry when GDB walks the list), after it (`gdb -p PID` then `source`:
# jitmap.gdb has the entries read again through the reader), and not at all (the control).
# Checks: bt from the safepoint names the JIT frames in order and reaches main (for handjit
# only with the reader); in the frame the reader unwound (the caller of a JIT frame)
# caller-saved registers are <not saved>; the program goes on and ends after `detach`.
# By default the reader declines both programs' entries (GDB's reader names them) and
# unwinds only what GDB's CFI does not cover (handjit's frames; none of LLVM's); the
# "before" and "after" attaches are also made with JITMAP_READER_CLAIM=auto (the reader
# claims the entries and unwinds every JIT frame).
# Prints "gdb-attach: N passed, M failed"; exits 77 when GDB or the programs are missing.
NAME=gdb-attach
. "$(dirname "$0")/lib.sh"
[ -x "$HANDJIT" ] || skip "$HANDJIT not built"

# tail_from TEXT FUNCTION: the frame names of bt from FUNCTION on.
tail_from() { names "$1" | sed -n "s/.*\(^\| \)\($2 .*\)/\2/p"; }

# attach_run TAG WAY OUT WANT OUTER RESUME PROGRAM ARGS...: starts PROGRAM, waits for its
# "paused" line, attaches WAY (before|after|none), checks bt against WANT and OUTER's
# caller-saved registers, sets RESUME = 1 and detaches; the program must then finish.
attach_run() {
    local tag=$1 way=$2 out=$3 want=$4 outer=$5 resume=$6
    shift 6
    "$@" >"$out.prog" 2>&1 &
    local pid=$!
    BG_PIDS+=("$pid")
    if ! wait_for "$out.prog" 'paused' 60; then
        bad "$tag: the program did not pause"
        return
    fi
    CMDS=('echo ==bt\n' bt 'echo ==.\n' "$(select_frame "$outer")" 'echo ==fo\n'
        'info registers rsp rip rax rcx rdx' "$STATS" "set var $resume = 1" detach 'echo ==end\n')
    case $way in
    before) CMDS=("source $JITMAP_GDB" "attach $pid" "${CMDS[@]}") ;;
    after) CMDS=("attach $pid" "source $JITMAP_GDB" "${CMDS[@]}") ;;
    none) CMDS=("attach $pid" "${CMDS[@]}") ;;
    esac
    if [ "$CLAIM" = auto ]; then
        JITMAP_READER_CLAIM=auto session "$out" none
    else
        session "$out" none
    fi
    if grep -q "ptrace: Operation not permitted" "$out"; then
        kill -9 "$pid" 2>/dev/null
        skip "GDB may not attach here (ptrace not permitted)"
    fi
    expect "$tag: GDB ends normally" gdb_fine "$out"
    local got
    got=$(tail_from "$(part "$out" bt)" "${want%% *}")
    if [ "$way" = none ] && [ "$outer" = handjit_outer ]; then
        expect "$tag: control: bt is not '$want' (got '$got')" test "$got" != "$want"
    else
        expect "$tag: bt is '$want' (got '$got')" test "$got" = "$want"
    fi
    if [ "$way" != none ]; then
        local fo r s
        fo=$(part "$out" fo) s=$(part "$out" stats)
        # Caller-saved registers are <not saved> in frames the reader unwound: handjit's
        # always, LLVM's when claimed (by default GDB's CFI unwinds those).
        if [ "$CLAIM" = auto ] || [ "$outer" = handjit_outer ]; then
            for r in rax rcx rdx; do
                expect "$tag: $outer: $r <not saved> (got $(reg "$fo" $r))" test "$(reg "$fo" $r)" = "<not saved>"
            done
        fi
        if [ "$CLAIM" = auto ]; then
            expect "$tag: the reader claimed the entries and unwound frames ($s)" \
                grep -Eq 'claimed=[1-9].*unwinds=[1-9][0-9]* unwind_failures=0' <<<"$s"
        elif [ "$outer" = handjit_outer ]; then
            expect "$tag: the reader declined the entry, yet unwound its frames ($s)" \
                grep -Eq 'claimed=0 declined=[1-9].*unwinds=[1-9][0-9]* unwind_failures=0' <<<"$s"
        else
            expect "$tag: the reader declined the entries; GDB's CFI unwound them ($s)" \
                grep -Eq 'claimed=0 declined=[1-9].*unwinds=0 unwind_failures=0' <<<"$s"
        fi
    fi
    local i
    for ((i = 0; i < 300 && $(kill -0 "$pid" 2>/dev/null && echo 1 || echo 0); i++)); do sleep 0.1; done
    wait "$pid" 2>/dev/null
    expect "$tag: the program resumed and finished after detach" grep -Eq 'done$' "$out.prog"
}

CLAIM=default
for way in before after none auto-before; do
    [ "$way" = auto-before ] && CLAIM=auto way=before
    attach_run "handjit, reader $way, claim $CLAIM" "$way" "$WORK/handjit-$way-$CLAIM" \
        "jitmap_handjit_safepoint handjit_inner handjit_outer main" handjit_outer \
        jitmap_handjit_resume "$HANDJIT" --pause
done

if [ -x "$DEMO" ]; then
    for engine in orc mcjit; do
        CLAIM=default
        for way in before after none auto-before auto-after; do
            case $way in auto-*) CLAIM=auto way=${way#auto-} ;; esac
            attach_run "$engine, reader $way, claim $CLAIM" "$way" "$WORK/$engine-$way-$CLAIM" \
                "jitmap_demo_safepoint stackmaps_main run_stackmaps main" run_stackmaps \
                jitmap_demo_resume "$DEMO" "--$engine" --program stackmaps --pause
        done
    done
else
    echo "$NAME: note: $DEMO not built; LLVM JIT attach not tested"
fi

finish
