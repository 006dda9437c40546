#!/usr/bin/env bash
# bench/stack.sh [BUILD_DIR]: jitmap-stack against eu-stack and GDB on one process and its core
# (bench/README.md, "jitmap-stack").
#
# The process: jitmap-demo-jit --entries E --program recursion --depth D --threads T, every
# thread held in its first safepoint (--pause; for the core, --abort once all hold): T threads
# of D + 7 frames (D + 2 of them JIT frames), E + 1 JIT entries. Timed with hyperfine (-N):
#   jitmap-stack PID                        jitmap-stack CORE
#   eu-stack -p PID                         eu-stack --core CORE -e EXE
#   gdb -batch -nx -ex 'thread apply all bt' -p PID     (and on the core: EXE CORE)
# eu-stack names no JIT frame and stops at the first one (it says "No DWARF information
# found"): the figure to compare with is its time for less work. Peak RSS of one run of each
# (getrusage). The frames each tool printed are counted as a check.
#
# Environment: BENCH_ENTRIES (2000), BENCH_THREADS (16), BENCH_DEPTH (44: 51 frames a
# thread), BENCH_RUNS (10; GDB: BENCH_GDB_RUNS, 3), GDB (gdb).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-bench}
entries=${BENCH_ENTRIES:-2000}
threads=${BENCH_THREADS:-16}
depth=${BENCH_DEPTH:-44}
runs=${BENCH_RUNS:-10}
gdb_runs=${BENCH_GDB_RUNS:-3}
gdb=${GDB:-gdb}
"$top/scripts/setup.sh" --bench
for tool in "$gdb" hyperfine eu-stack python3; do
  command -v "$tool" >/dev/null || { echo "bench/stack.sh: $tool not found" >&2; exit 1; }
done
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$top" -B "$build" -DJITMAP_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target jitmap-stack jitmap-demo-jit >/dev/null
build=$(cd "$build" && pwd)
stack=$build/jitmap-stack
demo=$build/examples/llvm-jit/jitmap-demo-jit
work=$(mktemp -d)
pid=
cleanup() { [[ -n $pid ]] && kill -9 "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

args=(--entries "$entries" --program recursion --depth "$depth" --threads "$threads")
. "$top/bench/hold.sh"
hold_demo stack.sh "$work/live.out" "$threads" "$demo" "${args[@]}" --pause
(cd "$work" && ulimit -c unlimited && "$demo" "${args[@]}" --abort >core.out 2>&1) || true
core=$(ls "$work"/core* 2>/dev/null | grep -v core.out | head -n 1 || true)

echo "== machine"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
echo "$("$gdb" --version | head -n 1); $(eu-stack --version | head -n 1); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "process: $threads threads x $((depth + 7)) frames, $((entries + 1)) JIT entries"

# Peak RSS (KiB) and frames printed, one run each.
measure() { # LABEL COMMAND...
  python3 - "$@" <<'EOF'
import re, resource, subprocess, sys
label, cmd = sys.argv[1], sys.argv[2:]
p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
frames = len(re.findall(r"^\s*#\d+\s", p.stdout, re.M))
jit = len(re.findall(r"\b(recurse|recursion_main)\b", p.stdout))
print("| %s | %d | %d | %.1f MiB |" % (label, frames, jit, rss / 1024))
EOF
}

for target in live core; do
  if [[ $target == live ]]; then
    j=("$stack" "$pid"); e=(eu-stack -p "$pid"); g=("$gdb" -batch -nx -ex 'thread apply all bt' -p "$pid")
  else
    [[ -n $core ]] || { echo "(no core: core_pattern $(cat /proc/sys/kernel/core_pattern))"; continue; }
    j=("$stack" "$core"); e=(eu-stack --core "$core" -e "$demo"); g=("$gdb" -batch -nx -ex 'thread apply all bt' "$demo" "$core")
  fi
  echo
  echo "== $target"
  echo "| tool | frames printed | JIT frames named | peak RSS |"
  echo "|---|---|---|---|"
  measure "jitmap-stack" "${j[@]}"
  measure "eu-stack" "${e[@]}"
  measure "gdb" "${g[@]}"
  hyperfine -N -i -w 2 -r "$runs" --export-markdown "$work/$target-fast.md" \
    "${j[*]}" "${e[*]}" >/dev/null 2>&1
  hyperfine -N -i -r "$gdb_runs" --export-markdown "$work/$target-gdb.md" \
    -n "gdb thread apply all bt" "$(printf '%q ' "${g[@]}")" >/dev/null 2>&1
  cat "$work/$target-fast.md"
  sed -n '1p;$p' "$work/$target-gdb.md"
done
