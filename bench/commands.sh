#!/usr/bin/env bash
# bench/commands.sh [BUILD_DIR]: how long jitmap's `info stackmap` takes in GDB with 100,000
# stackmap records registered (bench/README.md, "GDB commands").
#
# bench_commands registers N records (4 per function, 3 locations each) in E JIT entries and
# stops twice in bench_commands_stop, with a record at frame 1. In each `gdb -batch` run,
# timed inside GDB's Python (time.perf_counter around gdb.execute):
#   cold    the first `info stackmap 1` of the session: finds the JIT descriptor, reads and
#           opens every image, reads and parses every live stackmap section, builds the index;
#   fresh   the first `info stackmap 1` at the second stop: walks the entry list again and
#           re-checks each entry (cached images and sections are kept);
#   repeat  `info stackmap 1` again at the same stop (median of 5);
#   json    `info stackmap -json 1` at the same stop;
#   list    `info stackmaps REGEXP` matching one function (scans every function name).
# Prints the median over BENCH_RUNS runs (default 10) of each, for E = 1 and E = 100.
#
# BUILD_DIR defaults to build-bench (configured if needed; only bench_commands and libjitmap
# are built). Environment: BENCH_RECORDS (default 100000), BENCH_RUNS, GDB (default gdb),
# BENCH_PLUGIN=1: GDB as users run it, jitmap.gdb of BUILD_DIR (the reader plugin loaded; the
# commands share its process model), instead of the commands alone.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-bench}
records=${BENCH_RECORDS:-100000}
runs=${BENCH_RUNS:-10}
gdb=${GDB:-gdb}
command -v "$gdb" >/dev/null || { echo "bench/commands.sh: $gdb not found" >&2; exit 1; }

if [[ ! -f $build/CMakeCache.txt ]]; then
    cmake -S "$top" -B "$build" -DJITMAP_BUILD_TESTS=OFF >/dev/null
fi
targets=(bench_commands jitmap)
[[ ${BENCH_PLUGIN:-} == 1 ]] && targets+=(jitmap-reader)
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}" >/dev/null
bin=$build/bench/bench_commands
data=$build/bench-data/commands
mkdir -p "$data"

if [[ ${BENCH_PLUGIN:-} == 1 ]]; then
    load="source $build/share/jitmap/jitmap.gdb"
else
    load="python sys.path.insert(0, \"$top/gdb-scripts\"); import jitmap.gdb_commands"
fi
cat >"$data/commands.gdb" <<EOF
python import sys
$load
python
import time
def _t(name, cmd, n=1):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        gdb.execute(cmd, to_string=True)
        ts.append((time.perf_counter() - t) * 1e3)
    ts.sort()
    print("TIME %s %.3f" % (name, ts[len(ts) // 2]))
end
break bench_commands_stop
run
python _t("cold", "info stackmap 1")
continue
python _t("fresh", "info stackmap 1")
python _t("repeat", "info stackmap 1", 5)
python _t("json", "info stackmap -json 1", 5)
python _t("list", "info stackmaps ^bench_fn_7\$")
EOF

echo "== machine"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
echo "$("$gdb" --version | head -n 1); load: $(cut -d' ' -f1-3 /proc/loadavg); plugin: ${BENCH_PLUGIN:-0}"

echo "| records | entries | cold (ms) | fresh stop (ms) | repeat (ms) | -json (ms) | info stackmaps RE (ms) |"
echo "|---|---|---|---|---|---|---|"
for entries in 1 100; do
    out=$data/times-$entries.txt
    : >"$out"
    for ((i = 0; i < runs; i++)); do
        JITMAP_LIBRARY=$build/libjitmap.so "$gdb" -batch -nx -x "$data/commands.gdb" \
            --args "$bin" --records "$records" --entries "$entries" 2>/dev/null | grep '^TIME' >>"$out"
    done
    python3 - "$out" "$records" "$entries" <<'EOF'
import statistics, sys
times = {}
for line in open(sys.argv[1]):
    _, name, ms = line.split()
    times.setdefault(name, []).append(float(ms))
med = {k: statistics.median(v) for k, v in times.items()}
print("| %s | %s | %.1f | %.1f | %.2f | %.2f | %.1f |" % (
    sys.argv[2], sys.argv[3], med["cold"], med["fresh"], med["repeat"], med["json"], med["list"]))
EOF
done
