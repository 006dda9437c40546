#!/usr/bin/env bash
# test_gdb_hostile.sh BUILD_DIR: GDB with jitmap's reader against jitmap-hostile-jit, which
# registers corrupt JIT entries (garbage, wild addresses and sizes, ELF images whose headers
# lie, a stackmap and CFI of noise, code over the program's own main, overlapping images, a
# cyclic list). GDB must neither crash nor hang, and `bt` through the program's own frames
# must stay right. Every session is compared with GDB alone (the control).
#
# Two outcomes belong to GDB, not to jitmap, and are checked as such:
#   - an entry whose symfile_size cannot be allocated (2^62) makes GDB abort with "virtual
#     memory exhausted" when any JIT reader is loaded: GDB allocates the buffer it hands to
#     the reader before calling it. A reader that declines everything (jitmap-null-reader.so)
#     does the same; GDB alone (no reader) reads the image lazily through BFD and survives;
#   - attaching to a process whose entry list loops hangs GDB in its own list walk, with or
#     without a reader. jitmap.gdb sourced after the list looped refuses to load the reader
#     (loading makes GDB walk the list) and says why.
# Prints "gdb-hostile: N passed, M failed"; exits 77 when GDB is missing.
NAME=gdb-hostile
. "$(dirname "$0")/lib.sh"
[ -x "$HOSTILE" ] || skip "$HOSTILE not built"
GDB_TIMEOUT=60

WANT="hostile_stop hostile_level hostile_level hostile_level hostile_level main"
CMDS=('break hostile_stop' run 'echo ==bt\n' bt 'echo ==.\n' 'info frame' 'maint info jit'
    'python import jitmap.gdb_reader as g; l = g.library(); l and l.jitmap_reader_index()'
    "$STATS" 'echo ==end\n' continue)

# check_case TAG OUT: GDB survived, bt is right, the program ran to its end.
check_case() {
    local tag=$1 out=$2 got
    expect "$tag: GDB ends normally (status $(cat "$out.rc"))" gdb_fine "$out"
    got=$(names "$(part "$out" bt)")
    expect "$tag: bt is '$WANT' (got '$got')" test "$got" = "$WANT"
    expect "$tag: the program exits normally" grep -q "exited normally" "$out"
}

cases=(garbage wild-addr zero-size truncated shnum wrap wild-sections bad-symbols bad-stackmap
    self-text overlap unregister-unknown cyclic)
for c in "${cases[@]}"; do
    session "$WORK/$c.j" jitmap --args "$HOSTILE" "$c"
    session "$WORK/$c.c" none --args "$HOSTILE" "$c"
    check_case "$c" "$WORK/$c.j"
    check_case "$c (control)" "$WORK/$c.c"
done
# Every case (but huge-size) in one process: one entry after the other.
session "$WORK/all.j" jitmap --args "$HOSTILE" "${cases[@]}"
check_case "every case in one process" "$WORK/all.j"
s=$(part "$WORK/all.j" stats)
expect "every case: the reader rejected or replaced the bad entries and kept running ($s)" \
    grep -Eq 'reads=[1-9][0-9]* .*rejected=[1-9][0-9]* replaced=[1-9]' <<<"$s"

# huge-size: GDB's abort with any reader, not jitmap's.
session "$WORK/huge.j" jitmap --args "$HOSTILE" huge-size
session "$WORK/huge.c" none --args "$HOSTILE" huge-size
check_case "huge-size (control, no reader)" "$WORK/huge.c"
if [ -f "$NULL_READER" ]; then
    CMDS=("jit-reader-load $NULL_READER" "${CMDS[@]}")
    session "$WORK/huge.n" none --args "$HOSTILE" huge-size
    CMDS=("${CMDS[@]:1}")
    for f in j n; do
        expect "huge-size with reader $f: GDB's allocation of symfile_size fails" \
            grep -q "virtual memory exhausted: can't allocate 4611686018427387904 bytes" "$WORK/huge.$f"
    done
    expect "huge-size: jitmap's reader and a reader that does nothing end alike" \
        test "$(grep -c 'internal-error' "$WORK/huge.j")" = "$(grep -c 'internal-error' "$WORK/huge.n")"
else
    echo "$NAME: note: $NULL_READER not built; huge-size not compared"
fi

# A cyclic list seen after the fact: jitmap.gdb must refuse to make GDB walk it.
CMDS=('break hostile_stop' run "source $JITMAP_GDB" 'echo ==bt\n' bt 'echo ==.\n' "$STATS"
    'echo ==end\n' continue)
session "$WORK/cyclic-late" none --args "$HOSTILE" cyclic
check_case "cyclic, jitmap.gdb sourced late" "$WORK/cyclic-late"
expect "cyclic, sourced late: jitmap.gdb says why it does not load" \
    grep -q "jitmap: not loading the JIT reader: the list of JIT entries at 0x[0-9a-f]* loops back" "$WORK/cyclic-late"
expect "cyclic, sourced late: the reader is not loaded" test "$(part "$WORK/cyclic-late" stats)" = "not loaded"

# Attaching to a process whose list loops: GDB hangs in its own walk; jitmap adds nothing.
# hang OUT WAY: attach to a paused process whose list loops, as WAY (jitmap|none).
hang() {
    "$HOSTILE" --pause cyclic >"$1.prog" 2>&1 &
    local pid=$!
    BG_PIDS+=("$pid")
    wait_for "$1.prog" paused 30 || return
    CMDS=("attach $pid" bt detach)
    GDB_TIMEOUT=15 session "$1" "$2"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}
hang "$WORK/attach-cyclic.c" none
hang "$WORK/attach-cyclic.j" jitmap
rc_c=$(cat "$WORK/attach-cyclic.c.rc") rc_j=$(cat "$WORK/attach-cyclic.j.rc")
echo "$NAME: observed: attach to a cyclic list: GDB alone status $rc_c, with jitmap $rc_j (124: timed out)"
expect "attach to a cyclic list: jitmap does no worse than GDB alone ($rc_j vs $rc_c)" \
    test "$rc_j" = "$rc_c" -o "$rc_j" = 0

finish
