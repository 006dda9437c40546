#!/usr/bin/env bash
# bench/perfmap.sh [BUILD_DIR]: what a large perf map costs jitmap-stack (bench/README.md,
# "Perf maps"). Issue #22's goal: a map of 100,000 lines costs no more than 50 ms.
#
# The map: BENCH_LINES (100000) lines as V8 writes them ("START SIZE JS:*fnN /app.js:L:C"),
# code objects of 32 to 2 KiB placed one after the other in 64 MiB regions, every 20th line
# over the code of an earlier one (freed code whose memory was reused: later lines win, the
# slow path of the index). The process: `sleep`, one thread. Timed with hyperfine (-N):
#   jitmap-stack --no-perf-maps PID                  (no map)
#   jitmap-stack --no-perf-maps --perf-map MAP PID   (the map read, indexed, looked up)
# The difference is the map's cost. Peak RSS of one run of each (getrusage).
#
# Environment: BENCH_LINES (100000), BENCH_RUNS (20).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-bench}
lines=${BENCH_LINES:-100000}
runs=${BENCH_RUNS:-20}
"$top/scripts/setup.sh" --bench
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$top" -B "$build" -DJITMAP_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target jitmap-stack >/dev/null
stack=$(cd "$build" && pwd)/jitmap-stack
work=$(mktemp -d)
pid=
cleanup() { [[ -n $pid ]] && { kill -9 "$pid"; wait "$pid"; } 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

python3 - "$work/perf.map" "$lines" <<'PY'
import random, sys
path, n = sys.argv[1], int(sys.argv[2])
rng = random.Random(22)
out, placed, addr = [], [], 0x7f0000000000
for i in range(n):
    if i % 20 == 19 and placed:
        lo, _ = rng.choice(placed)  # reused memory: a later line over earlier code
        size = rng.randrange(32, 2048)
    else:
        size = rng.randrange(32, 2048)
        lo, addr = addr, addr + size
        if addr % (64 << 20) < size:
            addr += 1 << 20  # a new region now and then
        placed.append((lo, size))
    tier = rng.choice("*^~")
    out.append("%x %x JS:%sfn%d /srv/app/lib/module%d.js:%d:%d\n" % (
        lo, size, tier, i, i % 97, rng.randrange(1, 5000), rng.randrange(1, 80)))
open(path, "w").writelines(out)
PY
echo "perf map: $(wc -l <"$work/perf.map") lines, $(stat -c %s "$work/perf.map") bytes"

sleep 1000 &
pid=$!
sleep 0.2
check=$("$stack" --no-perf-maps --perf-map "$work/perf.map" "$pid" | sed -n 2p)
echo "jitmap-stack says: $check"
[[ $check == "code named by $work/perf.map: "* ]] || { echo "bench/perfmap.sh: the map was not read" >&2; exit 1; }
hyperfine -N --warmup 3 --runs "$runs" --export-json "$work/h.json" \
  -n "no map" "$stack --no-perf-maps $pid" \
  -n "$lines-line map" "$stack --no-perf-maps --perf-map $work/perf.map $pid" >/dev/null
python3 - "$work/h.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
for x in r:
    print("%-18s best %6.1f ms  median %6.1f ms" % (x["command"], 1e3 * min(x["times"]),
                                                   1e3 * x["median"]))
print("the map's cost: %.1f ms (medians), %.1f ms (best)" % (
    1e3 * (r[1]["median"] - r[0]["median"]), 1e3 * (min(r[1]["times"]) - min(r[0]["times"]))))
PY
for args in "--no-perf-maps" "--no-perf-maps --perf-map $work/perf.map"; do
  # shellcheck disable=SC2086 # the options are words
  python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print("peak RSS %6.1f MB:" % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
      " ".join(sys.argv[2:-1]) or "(no options)")' "$stack" $args "$pid"
done
