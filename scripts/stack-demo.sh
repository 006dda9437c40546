#!/usr/bin/env bash
# jitmap-stack in one line: the LLVM demo JIT with two threads held in JIT frames, read live
# by jitmap-stack (and by eu-stack, which cannot name the JIT frames), then the same program
# with statepoints aborted into a core and read post-mortem with its GC roots.
# docs/jitmap-stack.md shows the output.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${JITMAP_BUILD_DIR:-$top/build}

"$top/scripts/setup.sh" --demo
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target jitmap-stack jitmap-demo-jit >/dev/null

jit=$build/examples/llvm-jit/jitmap-demo-jit
stack=$build/jitmap-stack
[ -x "$jit" ] || { echo "stack-demo: $jit was not built (it needs llvm-config-14, x86-64)"; exit 1; }
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$work"' EXIT

"$jit" --program recursion --depth 2 --threads 2 --pause >"$work/live.out" 2>&1 &
# Killed below on purpose: bash is not to report it ("Killed"), whenever it reaps it.
disown
for _ in $(seq 300); do grep -q 'holding threads=2' "$work/live.out" && break; sleep 0.1; done
pid=$(sed -n 's/.*holding threads=2 pid=\([0-9]*\).*/\1/p' "$work/live.out")
echo "\$ jitmap-demo-jit --program recursion --depth 2 --threads 2 --pause &"
echo "\$ jitmap-stack --values $pid"
"$stack" --values "$pid"
if command -v eu-stack >/dev/null; then
  echo
  echo "\$ eu-stack -p $pid    # elfutils alone, the same threads"
  eu-stack -p "$pid" 2>&1 | awk '/^TID/ { n++ } n == 2' || true
fi
kill -9 "$pid"
while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
pid=

echo
echo "\$ jitmap-demo-jit --program statepoint --threads 2 --abort    # ulimit -c unlimited"
# The subshell reports the abort it waited for ("Aborted (core dumped)") on its standard
# error, where nothing else is written: the abort is the point, and the core says the rest.
(cd "$work" && ulimit -c unlimited &&
  "$jit" --program statepoint --threads 2 --abort >core.out 2>&1) 2>/dev/null || true
if [ -f "$work/core" ]; then
  echo "\$ jitmap-stack --gc-roots core"
  "$stack" --gc-roots "$work/core" | sed "s|$work/||g"
else
  echo "stack-demo: no core file (core_pattern: $(cat /proc/sys/kernel/core_pattern))"
fi
