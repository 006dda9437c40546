#!/usr/bin/env bash
# bench/gdb_reader.sh [BUILD_DIR]: what jitmap's GDB reader plugin costs or saves, against GDB
# alone, with LLVM JIT code (examples/llvm-jit). See bench/README.md, "GDB reader plugin".
#
#   (a) Registration: jitmap-demo-jit --objects N (ORC: N modules, N JIT objects, N GDB
#       entries, each a tiny function with a stackmap) stops in jitmap_demo_safepoint after
#       every object was registered and run. Timed with hyperfine (-N), the whole `gdb -batch`
#       from its start to the breakpoint, then `bt`, then exit:
#         gdb -batch -nx -iex 'set debuginfod enabled off' [JITMAP] \
#             -ex 'break jitmap_demo_safepoint' -ex run -ex bt --args jitmap-demo-jit --objects N
#       where JITMAP is nothing (GDB alone), `-iex 'source BUILD/share/jitmap/jitmap.gdb'`
#       (jitmap, default claim mode: the reader declines LLVM's objects), or that and
#       `-iex 'set jitmap reader-claim auto'` (the reader claims them); and the program alone.
#   (b) Unwinding: jitmap-demo-jit --program recursion --depth D stops with D + 5 frames
#       (D + 1 of them JIT frames); inside one GDB session per engine and mode, bench/bt_time.py
#       times `bt` through all of them after dropping GDB's frame cache (and the reader's
#       per-stop state), BT_RUNS times; the median per session, and per frame.
# Before timing, each mode is checked once (at N = 20): bt names obj_19 between the
# safepoint and main, and the reader's counters say it declined or claimed the objects.
#
# BUILD_DIR defaults to build-bench; it is configured if needed and only jitmap-demo-jit and
# the plugin are built. Environment: BENCH_OBJECTS (N, default 2000), BENCH_RUNS (hyperfine
# runs for (a), default 5), BENCH_DEPTH (D, default 1000), BENCH_SESSIONS (GDB sessions per
# engine and mode for (b), default 3), BT_RUNS (bt per session, default 30), GDB.
# Prints Markdown tables at the end; hyperfine's JSON and the logs stay in
# BUILD_DIR/bench-data/gdb-reader.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-bench}
objects=${BENCH_OBJECTS:-2000}
runs=${BENCH_RUNS:-5}
depth=${BENCH_DEPTH:-1000}
sessions=${BENCH_SESSIONS:-3}
export BT_RUNS=${BT_RUNS:-30}
gdb=${GDB:-gdb}
"$top/scripts/setup.sh" --bench
for tool in "$gdb" hyperfine cmake python3; do
  command -v "$tool" >/dev/null || { echo "bench/gdb_reader.sh: $tool not found" >&2; exit 1; }
done

echo "== build ($build)"
[ -f "$build/CMakeCache.txt" ] || cmake -S "$top" -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)" --target jitmap-demo-jit jitmap-reader >/dev/null
demo=$build/examples/llvm-jit/jitmap-demo-jit
script=$build/share/jitmap/jitmap.gdb
for f in "$demo" "$script"; do
  [ -e "$f" ] || { echo "bench/gdb_reader.sh: $f was not built (llvm-config-14? gdb/jit-reader.h?)" >&2; exit 1; }
done
data=$build/bench-data/gdb-reader
mkdir -p "$data"
rm -f "$data"/*.json "$data"/*.txt

echo "== machine"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1); Linux $(uname -r)"
echo "cc: $(sed -n 's/^CMAKE_C_COMPILER:[^=]*=//p' "$build/CMakeCache.txt") $(sed -n 's/^CMAKE_BUILD_TYPE:[^=]*=//p' "$build/CMakeCache.txt");" \
  "$("$gdb" --version | head -n 1); $(hyperfine --version); load average: $(cut -d' ' -f1-3 /proc/loadavg)"

modes="alone default auto"
# jitmap_args MODE: the gdb options that turn jitmap on in MODE (none for alone).
jitmap_args() {
  case $1 in
  alone) ;;
  default) echo "-iex 'source $script'" ;;
  auto) echo "-iex 'source $script' -iex 'set jitmap reader-claim auto'" ;;
  esac
}
# gdb_cmd MODE COMMANDS PROGRAM-ARGS: the command line (a string, for hyperfine and eval).
gdb_cmd() {
  echo "$gdb -batch -nx -iex 'set debuginfod enabled off' $(jitmap_args "$1") $2 --args $demo $3"
}
STATS="-ex 'python import sys; m = sys.modules.get(\"jitmap.gdb_reader\"); print(\"STATS\", m.stats_text() if m else \"none\")'"

echo "== check (N=20)"
for mode in $modes; do
  out=$data/check-$mode.txt
  eval "$(gdb_cmd "$mode" "-ex 'break jitmap_demo_safepoint' -ex run -ex bt $STATS" "--objects 20")" >"$out" 2>&1 || true
  got=$(grep -E '^#[0-9]+ ' "$out" | sed -E 's/^#[0-9]+ +(0x[0-9a-f]+ in )?([^ ]+) .*/\2/' | tr '\n' ' ')
  want=$(case $mode in alone) echo none ;; default) echo 'claimed=0 declined=20 ' ;; auto) echo 'claimed=20 declined=0 ' ;; esac)
  if [ "$got" != "jitmap_demo_safepoint obj_19 run_objects main " ] || ! grep -q "^STATS .*$want" "$out"; then
    echo "bench/gdb_reader.sh: $mode: unexpected session (bt: $got):" >&2
    cat "$out" >&2
    exit 1
  fi
  echo "$mode: bt '$got'; $(grep '^STATS' "$out")"
done

echo "== (a) $objects LLVM JIT objects: start to breakpoint and bt (hyperfine, $runs runs)"
cmds=()
for mode in $modes; do
  cmds+=("$(gdb_cmd "$mode" "-ex 'break jitmap_demo_safepoint' -ex run -ex bt" "--objects $objects")")
done
cmds+=("$demo --objects $objects")
hyperfine -N --warmup 0 --runs "$runs" --export-json "$data/register.json" "${cmds[@]}" \
  >"$data/register.txt" 2>&1 || { cat "$data/register.txt" >&2; exit 1; }
grep -E "^Benchmark|Time|Range" "$data/register.txt" || true

echo "== (b) bt through $depth recursion frames ($sessions sessions x $BT_RUNS bt)"
for engine in orc mcjit; do
  for mode in $modes; do
    for s in $(seq "$sessions"); do
      eval "$(gdb_cmd "$mode" "-ex 'set pagination off' -ex 'break jitmap_demo_safepoint' -ex run -ex 'source $top/bench/bt_time.py' $STATS" \
        "--$engine --program recursion --depth $depth")" 2>&1 | grep -E '^(BT|STATS) ' |
        sed "s/^/$engine $mode /" | tee -a "$data/bt.txt"
    done
  done
done

echo "== summary (Markdown)"
python3 - "$data" "$objects" "$depth" <<'EOF'
import json, os, re, statistics, sys
data, objects, depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = json.load(open(os.path.join(data, "register.json")))["results"]
names = ["GDB alone", "jitmap, default (declines)", "jitmap, reader-claim auto (claims)",
         "the program alone, no debugger"]
alone = r[0]
print(f"| {objects} LLVM JIT objects | mean ± σ | min | user+sys | against GDB alone (mean) |")
print("|---|---|---|---|---|")
for name, x in zip(names, r):
    ratio = "–" if x is alone or name.startswith("the program") else f"{x['mean'] / alone['mean']:.2f}×"
    print(f"| {name} | {x['mean']:.2f} s ± {x['stddev'] or 0:.2f} | {x['min']:.2f} s |"
          f" {x['user'] + x['system']:.2f} s | {ratio} |")
print()
rows = {}
for line in open(os.path.join(data, "bt.txt")):
    m = re.match(r"(\w+) (\w+) BT frames=(\d+) runs=\d+ median_ms=([\d.]+)", line)
    if m:
        rows.setdefault((m[1], m[2]), []).append((int(m[3]), float(m[4])))
print(f"| `bt`, recursion depth {depth} | frames | median of sessions | per frame | against GDB alone |")
print("|---|---|---|---|---|")
for engine in ("orc", "mcjit"):
    base = None
    for mode, label in (("alone", "GDB alone"), ("default", "jitmap, default"),
                        ("auto", "jitmap, reader-claim auto")):
        v = rows.get((engine, mode))
        if not v:
            continue
        ms = statistics.median(t for _, t in v)
        frames = v[0][0]
        base = ms if mode == "alone" else base
        ratio = "–" if mode == "alone" or base is None else f"{ms / base:.2f}×"
        print(f"| {engine}, {label} | {frames} | {ms:.1f} ms | {ms * 1e3 / frames:.1f} µs | {ratio} |")
EOF
