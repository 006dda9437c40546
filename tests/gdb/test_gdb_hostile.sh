#!/usr/bin/env bash
# test_gdb_hostile.sh BUILD_DIR: GDB with jitmap (the reader plugin and the commands, as
# jitmap.gdb loads them) against jitmap-hostile (tests/hostile/hostile.c), mode by mode: a good
# JIT function (good_fn, no unwind tables, record 5 holding 4242 in rbx) beside corrupt JIT
# entries announced to GDB (garbage, wild and empty images, ELF headers that lie, stackmaps
# whose counts overflow or whose version is unknown, code over main, overlapping images, an
# unknown unregister notice, a garbage action_flag), lists broken behind GDB's back (cycles, a
# wild next pointer, 150,000 entries, a 2^60-byte image, descriptor version 7), and entries
# that change between stops (rewritten in place, unregistered and unmapped, a thread churning
# the list).
#
# Each mode: GDB ends by itself (no crash, no hang: every session runs under a timeout), the
# program runs to its end, `bt` is `hostile_stop good_fn run_jit main` (the reader unwinds
# good_fn from its stackmap's frame size), `info stackmap 1` shows the good record's real
# value, and what jitmap says about the bad entry (the reader's JITMAP_DEBUG line, or the
# commands' problem) names it and says what is wrong. The negative control runs each mode
# with GDB alone: GDB survives it too, but its `bt` through good_fn is wrong.
#
# Three outcomes belong to GDB, not to jitmap, and are checked as such:
#   - an entry whose symfile_size cannot be allocated (2^62, announced) makes GDB abort with
#     "virtual memory exhausted" when any JIT reader is loaded: GDB allocates the buffer it
#     hands to the reader before calling it. A reader that declines everything
#     (jitmap-null-reader.so) does the same; GDB alone reads the image lazily and survives;
#   - attaching to a process whose entry list loops hangs GDB in its own list walk, with or
#     without a reader. jitmap.gdb sourced after the list looped refuses to load the reader
#     (loading makes GDB walk the list) and says why;
#   - a garbage action_flag makes GDB stop in __jit_debug_register_code with "Unknown
#     action_flag value in JIT descriptor!", with or without jitmap.
# Prints "gdb-hostile: N passed, M failed"; exits 77 when GDB or the program is missing.
NAME=gdb-hostile
. "$(dirname "$0")/lib.sh"
[ -x "$HOSTILE" ] || skip "$HOSTILE not built"
GDB_TIMEOUT=90

WANT="hostile_stop good_fn run_jit main"
INDEX='python import jitmap.gdb_reader as g; l = g.library(); l and l.jitmap_reader_index()'
# Two stops: modes with one stop end at the first `continue` (the rest says "No stack.").
CMDS=('break hostile_stop' run "$INDEX" 'echo ==bt\n' bt 'echo ==info\n' 'info stackmap 1'
    'echo ==status\n' 'jitmap status' 'echo ==.\n' "$STATS" 'echo ==end\n' continue
    "$INDEX" 'echo ==bt2\n' bt 'echo ==info2\n' 'info stackmap 1' 'echo ==.\n' "$STATS"
    'echo ==end\n' continue)

# truth OUT MODE FIELD: FIELD of the program's line "jitmap-hostile: mode MODE ...".
truth() { sed -n "s/^jitmap-hostile: mode $2 .*\<$3=\([^ ]*\).*/\1/p" "$1" | head -n 1; }
# re TEXT: TEXT as a basic regular expression.
re() { sed 's/[][\.*^$/]/\\&/g' <<<"$1"; }

# check_run TAG OUT BT: GDB ended by itself, the program exited normally, bt (and bt2 for
# modes with two stops) as wanted.
check_run() {
    local tag=$1 out=$2 want=${3:-$WANT} got
    expect "$tag: GDB ends normally (status $(cat "$out.rc"))" gdb_fine "$out"
    expect "$tag: the program exits normally" grep -q "exited normally" "$out"
    got=$(names "$(part "$out" bt)")
    expect "$tag: bt is '$want' (got '$got')" test "$got" = "$want"
}

# check_record TAG TEXT ID VALUE: `info stackmap 1` shows record ID with rbx = VALUE.
check_record() {
    expect "$1: frame 1 is at record $3" grep -Eq "^record $3 at $HEX \((good|doomed)_fn\+20\)" <<<"$2"
    expect "$1: record $3's rbx is $4" grep -Eq "^  #0 +register +rbx +size 8 +$4\$" <<<"$2"
    expect "$1: rdi is unavailable in frame 1 (caller-saved)" \
        grep -q "^  #1 .*rdi .*<unavailable: register rdi not available: caller-saved" <<<"$2"
}

# says TAG OUT REGEX: the session's output has a line matching REGEX (grep -E).
says() { expect "$1: says /$3/" grep -Eq -- "$3" "$2"; }

# control TAG OUT WANT: GDB alone survives the mode, and gets bt wrong (the negative control).
control() {
    local got
    expect "$1 (control): GDB alone ends normally" gdb_fine "$2"
    expect "$1 (control): the program exits normally" grep -q "exited normally" "$2"
    got=$(names "$(part "$2" bt)")
    expect "$1 (control): GDB alone's bt is not '$3' (got '$got')" test "$got" != "$3"
    expect "$1 (control): no info stackmap without jitmap" grep -q 'Undefined info command: "stackmap 1"' "$2"
}

# run_mode MODE: the session with jitmap (reader problems on stderr) and GDB alone.
run_mode() {
    JITMAP_DEBUG=1 session "$WORK/$1.j" jitmap --args "$HOSTILE" "$1"
    session "$WORK/$1.c" none --args "$HOSTILE" "$1"
}

E2='entry 2 \(([0-9]+) bytes\) left to GDB: JIT entry 2: offset'
for m in garbage wild-image zero-size truncated shnum wrap wild-sections bad-symbols \
    stackmap-counts stackmap-version self-text overlap unregister-unknown huge version \
    cycle self wild-next long; do
    run_mode "$m"
    j=$WORK/$m.j
    check_run "$m" "$j"
    control "$m" "$WORK/$m.c" "$WANT"
    [ "$m" = version ] || check_record "$m" "$(part "$j" info)" 5 4242
    e=$(re "$(truth "$j" "$m" entry)") img=$(re "$(truth "$j" "$m" image)")
    sm=$(re "$(truth "$j" "$m" stackmap)") stats=$(part "$j" stats)
    case $m in
    garbage) says "$m" "$j" "^jitmap-reader: $E2 0x0: not an ELF file\$"
        says "$m" "$j" "JIT entry $e: image at $img: offset 0x0: not an ELF file" ;;
    wild-image) says "$m" "$j" "JIT entry $e: image at 0xdead00000000 \(4096 bytes\) is not readable: Cannot access memory at address 0xdead00000000" ;;
    zero-size) says "$m" "$j" '^jitmap-reader: entry 2: image size 0 out of range: left to GDB$'
        says "$m" "$j" "JIT entry $e: empty image \(address $img, 0 bytes\)" ;;
    truncated) says "$m" "$j" "^jitmap-reader: $E2 0x28: truncated: the section header table \(7 entries at 0x1b8\) ends past the end of the file \(0x1c0 bytes\)\$"
        says "$m" "$j" "JIT entry $e: image at $img: offset 0x28: truncated" ;;
    shnum) says "$m" "$j" "^jitmap-reader: $E2 0x3a: section header size 0 \(ELF64's is 64\)\$"
        says "$m" "$j" "JIT entry $e: image at $img: offset 0x3a: section header size 0" ;;
    wrap) says "$m" "$j" '^jitmap-reader: entry 2 \(888 bytes\) left to GDB: no executable section placed in memory$' ;;
    wild-sections) says "$m" "$j" '^jitmap-reader: JIT entry 2: \.llvm_stackmaps at 0x10 is 1099511627776 bytes, over the 256 MiB limit$'
        says "$m" "$j" "JIT entry $e: \.llvm_stackmaps at 0x10 is 1099511627776 bytes, over the 256 MiB limit" ;;
    bad-symbols | self-text)
        expect "$m: the reader kept the entry and left it to GDB ($stats)" grep -q 'reads=2 claimed=0 declined=2 rejected=0' <<<"$stats" ;;
    stackmap-counts) says "$m" "$j" "^jitmap-reader: JIT entry 2: \.llvm_stackmaps at $sm: offset 0x4: function count 2147483647 overruns the section: 51539607528 bytes needed, 48 left\$"
        says "$m" "$j" "JIT entry $e: \.llvm_stackmaps at $sm: offset 0x4: function count 2147483647 overruns the section" ;;
    stackmap-version) says "$m" "$j" '^jitmap-reader: JIT entry 2: .*unknown stackmap version 9 \(jitmap reads versions 1, 2 and 3\)$'
        says "$m" "$j" "JIT entry $e: \.llvm_stackmaps at $sm: offset 0x0: unknown stackmap version 9" ;;
    overlap) expect "$m: the second image replaced the first ($stats)" grep -q 'replaced=1' <<<"$stats" ;;
    unregister-unknown) says "$m" "$j" "^Unable to find JITed code entry at address: $e\$" ;; # GDB's
    huge) says "$m" "$j" "JIT entry $e: image of 1152921504606846976 bytes at $img is larger than the 256 MiB limit; not read" ;;
    version) says "$m" "$j" 'the JIT descriptor at 0x[0-9a-f]+ has version 7 \(only version 1 exists\)'
        expect "$m: info stackmap says why there is no record" grep -Eq \
            '^jitmap: no stackmap could be read: the JIT descriptor in the executable: the JIT descriptor at 0x[0-9a-f]+ has version 7' <<<"$(part "$j" info)" ;;
    cycle) says "$m" "$j" "the JIT entry list loops: entry $e comes again after 3 entries" ;;
    self) says "$m" "$j" "the JIT entry list loops: entry $e comes again after 2 entries" ;;
    wild-next) says "$m" "$j" 'JIT entry at 0xdead00000000 is not readable: Cannot access memory at address 0xdead00000000' ;;
    long) says "$m" "$j" 'the JIT entry list holds more than 100000 entries \(the limit\); the rest is not read' ;;
    esac
    case $m in
    self-text) expect "$m: main is still main" grep -q '^#3 .* in main (' <<<"$(part "$j" bt)" ;;
    esac
done

# Entries that change between two stops.
run_mode change
check_run change "$WORK/change.j"
control change "$WORK/change.c" "$WANT"
check_record "change, stop 1" "$(part "$WORK/change.j" info)" 5 4242
got=$(names "$(part "$WORK/change.j" bt2)")
expect "change, stop 2: bt is '$WANT' (got '$got')" test "$got" = "$WANT"
check_record "change, stop 2: the stackmap read again" "$(part "$WORK/change.j" info2)" 7 4343

run_mode unregister
check_run unregister "$WORK/unregister.j" "hostile_stop doomed_fn run_jit main"
control unregister "$WORK/unregister.c" "hostile_stop doomed_fn run_jit main"
check_record "unregister, stop 1" "$(part "$WORK/unregister.j" info)" 6 6161
got=$(names "$(part "$WORK/unregister.j" bt2)")
expect "unregister, stop 2: bt is '$WANT' (got '$got')" test "$got" = "$WANT"
check_record "unregister, stop 2" "$(part "$WORK/unregister.j" info2)" 5 4242
s=$(sed -n '/^==bt2$/,$p' "$WORK/unregister.j" | sed -n '/^==stats$/,/^==/p' | sed '1d;$d')
expect "unregister, stop 2: the reader dropped the unmapped entry ($s)" grep -q 'dropped=1' <<<"$s"

run_mode churn
check_run churn "$WORK/churn.j"
control churn "$WORK/churn.c" "$WANT"
check_record "churn, stop 1" "$(part "$WORK/churn.j" info)" 5 4242
got=$(names "$(part "$WORK/churn.j" bt2)")
expect "churn, stop 2: bt is '$WANT' (got '$got')" test "$got" = "$WANT"
check_record "churn, stop 2" "$(part "$WORK/churn.j" info2)" 5 4242

# A garbage action_flag: GDB stops in the hook (its own error), then goes on.
saved=("${CMDS[@]}")
CMDS=('break hostile_stop' run 'echo ==hook\n' bt 'echo ==.\n' continue "${saved[@]:2}")
run_mode action-flag
CMDS=("${saved[@]}")
for f in j c; do
    expect "action-flag ($f): GDB stops in the hook with its error" \
        grep -q '^Unknown action_flag value in JIT descriptor!$' "$WORK/action-flag.$f"
    expect "action-flag ($f): ... in __jit_debug_register_code" \
        grep -q '^#0  __jit_debug_register_code ()' <<<"$(part "$WORK/action-flag.$f" hook)"
done
check_run action-flag "$WORK/action-flag.j"
control action-flag "$WORK/action-flag.c" "$WANT"
check_record action-flag "$(part "$WORK/action-flag.j" info)" 5 4242

# Every announced and silent mode in one process, the cycle last.
ALL=(garbage wild-image zero-size truncated shnum wrap wild-sections bad-symbols stackmap-counts
    stackmap-version self-text overlap unregister-unknown huge cycle)
JITMAP_DEBUG=1 session "$WORK/all.j" jitmap --args "$HOSTILE" "${ALL[@]}"
check_run "every mode in one process" "$WORK/all.j"
check_record "every mode in one process" "$(part "$WORK/all.j" info)" 5 4242
s=$(part "$WORK/all.j" stats)
expect "every mode: the reader rejected, declined and replaced entries and kept running ($s)" \
    grep -Eq '^reads=13 claimed=0 declined=8 rejected=5 replaced=1 ' <<<"$s"
n=$(grep -c '^jitmap-reader: ' "$WORK/all.j")
expect "every mode: the reader said what went wrong, entry by entry ($n lines)" test "$n" -ge 8

# huge-announced: GDB's abort with any reader, not jitmap's.
session "$WORK/huge.j" jitmap --args "$HOSTILE" huge-announced
session "$WORK/huge.c" none --args "$HOSTILE" huge-announced
expect "huge-announced (control, no reader): GDB alone ends normally" gdb_fine "$WORK/huge.c"
expect "huge-announced (control, no reader): the program exits normally" grep -q "exited normally" "$WORK/huge.c"
if [ -f "$NULL_READER" ]; then
    CMDS=("jit-reader-load $NULL_READER" "${saved[@]}")
    session "$WORK/huge.n" none --args "$HOSTILE" huge-announced
    CMDS=("${saved[@]}")
    for f in j n; do
        expect "huge-announced with reader $f: GDB's allocation of symfile_size fails" \
            grep -q "virtual memory exhausted: can't allocate 4611686018427387904 bytes" "$WORK/huge.$f"
    done
    expect "huge-announced: jitmap's reader and a reader that does nothing end alike" \
        test "$(grep -c 'internal-error' "$WORK/huge.j")" = "$(grep -c 'internal-error' "$WORK/huge.n")"
else
    echo "$NAME: note: $NULL_READER not built; huge-announced not compared"
fi

# A cyclic list seen after the fact: jitmap.gdb must refuse to make GDB walk it.
CMDS=('break hostile_stop' run "source $JITMAP_GDB" 'echo ==bt\n' bt 'echo ==.\n' "$STATS"
    'echo ==end\n' continue)
session "$WORK/cycle-late" none --args "$HOSTILE" cycle
expect "cycle, jitmap.gdb sourced late: GDB ends normally" gdb_fine "$WORK/cycle-late"
expect "cycle, jitmap.gdb sourced late: the program exits normally" grep -q "exited normally" "$WORK/cycle-late"
e=$(re "$(truth "$WORK/cycle-late" cycle entry)")
expect "cycle, sourced late: jitmap.gdb says why it does not load" \
    grep -Eq "^jitmap: not loading the JIT reader: the list of JIT entries at $HEX loops back \(the JIT entry list loops: entry $e comes again after 3 entries\), and GDB would hang walking it" "$WORK/cycle-late"
expect "cycle, sourced late: the reader is not loaded" test "$(part "$WORK/cycle-late" stats)" = "not loaded"

# Attaching: GDB walks the whole list and hands the reader every image at once.
# attach_to OUT WAY MODE...: attach to a paused process running MODE..., as WAY (jitmap|none).
attach_to() {
    local out=$1 way=$2
    shift 2
    "$HOSTILE" --pause "$@" >"$out.prog" 2>&1 &
    local pid=$!
    BG_PIDS+=("$pid")
    wait_for "$out.prog" paused 30 || return
    CMDS=("attach $pid" "$INDEX" 'echo ==bt\n' bt 'echo ==info\n' "$(select_frame good_fn)"
        'info stackmap' 'echo ==.\n' "$STATS" 'echo ==end\n' detach)
    JITMAP_DEBUG=1 GDB_TIMEOUT=${GDB_TIMEOUT_ATTACH:-90} session "$out" "$way"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
}
ANNOUNCED=(garbage wild-image zero-size truncated shnum wrap wild-sections bad-symbols
    stackmap-counts stackmap-version self-text overlap)
attach_to "$WORK/attach.j" jitmap "${ANNOUNCED[@]}"
expect "attach: GDB ends normally" gdb_fine "$WORK/attach.j"
got=$(names "$(part "$WORK/attach.j" bt)")
expect "attach: bt ends in '$WANT' (got '$got')" grep -q " $WANT\$" <<<" $got"
check_record "attach" "$(part "$WORK/attach.j" info)" 5 4242
s=$(part "$WORK/attach.j" stats)
expect "attach: the reader read every entry GDB could ($s)" \
    grep -Eq '^reads=13 claimed=0 declined=8 rejected=5 replaced=1 ' <<<"$s"

# A list that loops: GDB hangs in its own walk; jitmap adds nothing.
GDB_TIMEOUT_ATTACH=15 attach_to "$WORK/attach-cycle.c" none cycle
GDB_TIMEOUT_ATTACH=15 attach_to "$WORK/attach-cycle.j" jitmap cycle
rc_c=$(cat "$WORK/attach-cycle.c.rc") rc_j=$(cat "$WORK/attach-cycle.j.rc")
echo "$NAME: observed: attach to a cyclic list: GDB alone status $rc_c, with jitmap $rc_j (124: timed out)"
expect "attach to a cyclic list: jitmap does no worse than GDB alone ($rc_j vs $rc_c)" \
    test "$rc_j" = "$rc_c" -o "$rc_j" = 0

finish
