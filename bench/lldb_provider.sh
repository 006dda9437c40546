#!/usr/bin/env bash
# bench/lldb_provider.sh [BUILD_DIR]: what jitmap's frame provider costs LLDB at a stop, as the
# stack grows (bench/README.md, "LLDB's frame provider"). LLDB 22 (scripts/setup-lldb.sh; LLDB
# names another wrapper), stopped in jitmap_demo_safepoint under `jitmap-demo-jit --program
# recursion --depth D` (D + 1 JIT frames, each at a stackmap record), four sessions a depth:
#   alone    LLDB alone
#   pass     a provider that passes every frame through (what LLDB spends on any provider)
#   jitmap   jitmap imported (no layout applies: its provider passes the frames through,
#            ending the stack where no code lives)
#   layouts  jitmap imported and a deopt layout for the recursion's records: every JIT frame
#            gets an interpreter frame under it (the most the provider does)
# In each, bench/lldb_stop.py times RUNS stops (`thread step-inst`) and after each the whole
# backtrace (`thread backtrace`); the sessions of one depth alternate, BENCH_ROUNDS (3) times;
# each figure is the median over the rounds of each session's median.
#
# Environment: BENCH_ROUNDS (3), BENCH_RUNS (stops a session, 9), BENCH_DEPTHS ("9 99 999
# 4095"), LLDB (an LLDB 22 or newer).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-bench}
rounds=${BENCH_ROUNDS:-3}
runs=${BENCH_RUNS:-9}
depths=${BENCH_DEPTHS:-9 99 999 4095}
lldb=${LLDB:-$("$top/scripts/setup-lldb.sh" 22)}
[ -f "$build/CMakeCache.txt" ] || cmake -S "$top" -B "$build" -DJITMAP_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target jitmap-demo-jit jitmap >/dev/null
build=$(cd "$build" && pwd)
demo=$build/examples/llvm-jit/jitmap-demo-jit
jitmap=$build/share/jitmap/lldb/jitmap.py
echo "== machine"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1); load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$lldb" --version | head -n 1

session() { # MODE DEPTH: one LLDB session's STOP line
  local mode=$1 depth=$2 pre=(-o "command script import $top/bench/lldb_stop.py")
  case $mode in
    pass) pre+=(-o "target stop-hook add -P lldb_stop.PassOnFirstStop") ;;
    jitmap) pre+=(-o "command script import $jitmap") ;;
    layouts) pre+=(-o "command script import $jitmap" -o "script lldb_stop.add_layouts()") ;;
  esac
  timeout 600 "$lldb" -b -x "${pre[@]}" -o "b jitmap_demo_safepoint" -o run \
    -o "stoptime $runs $mode" -- "$demo" --program recursion --depth "$depth" 2>&1 |
    grep '^STOP ' || { echo "bench/lldb_provider.sh: no figure from $mode at depth $depth" >&2; exit 1; }
}

echo "== $rounds rounds, $runs stops a session"
for depth in $depths; do
  for r in $(seq "$rounds"); do
    for mode in alone pass jitmap layouts; do
      echo "depth=$depth $(session $mode "$depth")"
    done
  done
done | python3 -c '
import re, statistics, sys
got = {}
for line in sys.stdin:
    sys.stderr.write(line)
    m = re.match(r"depth=(\d+) STOP mode=(\w+) frames=(\S+) step_ms=(\S+) bt_ms=(\S+)", line)
    if m:
        d, mode, frames, step, bt = m.groups()
        got.setdefault((int(d), mode), []).append((frames, float(step), float(bt)))
print("\n| JIT frames | mode | frames in bt | stop, ms | bt, ms | stop + bt, ms | stop + bt / LLDB alone |")
print("|---|---|---|---|---|---|---|")
for d in sorted({d for d, _ in got}):
    base = None
    for mode in ("alone", "pass", "jitmap", "layouts"):
        v = got.get((d, mode))
        if not v:
            continue
        step = statistics.median(s for _, s, _ in v)
        bt = statistics.median(b for _, _, b in v)
        if mode == "alone":
            base = step + bt
        print("| %d | %s | %s | %.1f | %.1f | %.1f | %.2fx |" % (
            d + 1, mode, v[0][0], step, bt, step + bt, (step + bt) / base if base else 0))
'
