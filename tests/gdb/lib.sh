# lib.sh: shared by tests/gdb/test_gdb_*.sh (sourced, with the build directory as $1).
#
# Sessions run `gdb -batch -nx` with the commands in the array CMDS, either with jitmap
# (`source build/share/jitmap/jitmap.gdb` first) or without it (the negative control).
# Checks count into "NAME: N passed, M failed"; the script exits 1 when anything failed,
# 77 when GDB or the plugin is missing.
set -u

BUILD=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
JITMAP_GDB=$BUILD/share/jitmap/jitmap.gdb
PLUGIN=$BUILD/plugin/jitmap-reader.so
DEMO=$BUILD/examples/llvm-jit/jitmap-demo-jit
HANDJIT=$BUILD/examples/handjit/jitmap-handjit
HOSTILE=$BUILD/tests/jitmap-hostile
NULL_READER=$BUILD/tests/gdb/jitmap-null-reader.so
HEX='0x[0-9a-f]+'

passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() {
    failed=$((failed + 1))
    echo "$NAME: FAIL: $*" >&2
}
# expect WHAT COMMAND...: one check.
expect() {
    local what=$1
    shift
    if "$@"; then ok; else bad "$what"; fi
}
skip() {
    echo "$NAME: skipped: $*"
    exit 77
}
finish() {
    echo "$NAME: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}

GDB=${GDB_EXEC:-gdb}  # another GDB: GDB_EXEC=PATH (as tests/debugger/harness.py)
command -v "$GDB" >/dev/null || skip "$GDB not found"
# The GDB's major version ("GNU gdb (Debian 18.1-3) 18.1" -> 18): GDB 18's amd64 prologue
# analyzer unwinds the hand-written JIT's frames by itself, which older GDBs cannot; the
# controls that rest on GDB alone failing there ask it.
GDB_MAJOR=$("$GDB" --version 2>/dev/null | head -n 1 | awk '{print $NF}' | cut -d. -f1)
[[ $GDB_MAJOR =~ ^[0-9]+$ ]] || GDB_MAJOR=0
[ -f "$JITMAP_GDB" ] && [ -f "$PLUGIN" ] || skip "the plugin was not built ($PLUGIN)"

WORK=$(mktemp -d)
BG_PIDS=()
cleanup() {
    local p
    for p in "${BG_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT
[ -n "${KEEP_WORK:-}" ] && trap - EXIT && echo "work: $WORK"

# session OUT MODE ARGS...: gdb -batch with CMDS, output in OUT, exit status in OUT.rc.
# MODE: jitmap (jitmap.gdb sourced before anything is loaded) or none. ARGS go to gdb last.
session() {
    local out=$1 mode=$2
    shift 2
    # A GDB that hits an internal error dumps its own core (it raises RLIMIT_CORE itself):
    # not here, and sessions run in $WORK anyway.
    local args=(-iex 'set debuginfod enabled off' -iex 'set pagination off' -iex 'set width 0'
        -iex 'set confirm off' -iex 'maint set internal-error corefile no')
    [ "$mode" = jitmap ] && args+=(-iex "source $JITMAP_GDB")
    local c
    for c in "${CMDS[@]}"; do args+=(-ex "$c"); done
    # (braces: bash's "Aborted" notice for a GDB that crashes goes to /dev/null too; `env -u _`:
    # bash sometimes exports `_`, the last command run, and the inferior's stack addresses,
    # which tests compare across sessions, move with the size of its environment)
    { (cd "$WORK" && exec env -u _ timeout "${GDB_TIMEOUT:-300}" "$GDB" -batch -nx "${args[@]}" "$@") \
        >"$out" 2>&1; } 2>/dev/null
    echo $? >"$out.rc"
}

# part FILE MARK: the lines between "==MARK" and the next "==" line (CMDS print them with
# `echo ==MARK\n`).
part() { sed -n "/^==$2\$/,/^==/p" "$1" | sed '1d;/^==/d'; }

# frames TEXT: the function names of the `bt` lines in TEXT, one per line.
frames() { grep -E '^#[0-9]+ ' <<<"$1" | sed -E "s/^#[0-9]+ +($HEX in )?([^ ]+) .*/\2/"; }
# names TEXT: the same on one line, space-separated.
names() { frames "$1" | tr '\n' ' ' | sed 's/ $//'; }

# reg TEXT NAME: the value `info registers` shows for NAME in TEXT ("<not saved>" too).
reg() { grep -E "^$2 " <<<"$1" | head -n 1 | sed -E "s/^$2 +//; s/ +.*//; s/^<not$/<not saved>/"; }

# gdb_fine OUT: GDB ended by itself (no timeout, no crash, no internal error), and no exception
# of an extension reached GDB ("Python Exception <class ...>": what GDB prints when a frame
# filter, a printer or a command raises; a frame filter that raises loses what GDB shows: bt
# typed at the prompt lost the interpreter frames that way). A `python` line of the session's
# own that fails (the negative controls import jitmap without it) prints a plain traceback.
gdb_fine() {
    local rc
    rc=$(cat "$1.rc")
    [ "$rc" -ne 124 ] && [ "$rc" -lt 128 ] &&
        ! grep -qE 'internal-error|Fatal signal|A problem internal to GDB|Python Exception <' "$1"
}

# wait_for FILE REGEX [SECONDS]: until FILE has a line matching REGEX.
wait_for() {
    local i
    for ((i = 0; i < ${3:-30} * 10; i++)); do
        grep -qE "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# The stats line that CMDS print with $STATS.
STATS='python import sys; print("==stats"); print(sys.modules["jitmap.gdb_reader"].stats_text() if "jitmap.gdb_reader" in sys.modules else "not loaded")'

# select_frame NAME: a GDB command selecting the innermost frame of function NAME (by frame
# name, through Python: `frame function NAME` looks the name up in the symbol tables, where
# reader-made symbols cannot be found by name).
select_frame() {
    printf '%s' "python exec(\"f = gdb.newest_frame()\\nwhile f is not None and f.name() != '$1':\\n    f = f.older()\\nf.select()\")"
}
