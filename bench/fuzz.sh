#!/usr/bin/env bash
# bench/fuzz.sh [BUILD_DIR]: the long fuzzing runs of bench/README.md ("Fuzzing"): each
# libFuzzer target for BENCH_FUZZ_RUNS executions (default 10^7), starting from the seed
# corpora (tests/fuzz/make-corpus.sh), with ASan and UBSan as in CI's short runs.
#
# BUILD_DIR (default build-fuzz) is configured here with CC=clang-14 -DJITMAP_BUILD_FUZZ=ON.
# Prints one line per target: executions, seconds, executions per second, final coverage and
# corpus size, and whether it found anything (the failing input is kept in
# BUILD_DIR/fuzz-artifacts). Environment: BENCH_FUZZ_RUNS, BENCH_FUZZ_TARGETS (default all),
# BENCH_FUZZ_JOBS (targets run at once, default 1), JITMAP_FUZZ_CORPUS (keep the grown
# corpora there).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-fuzz}
runs=${BENCH_FUZZ_RUNS:-10000000}
targets=${BENCH_FUZZ_TARGETS:-fuzz_parse fuzz_elf fuzz_cfi fuzz_core fuzz_process fuzz_plugin fuzz_layout fuzz_unwind fuzz_insn fuzz_live}
jobs=${BENCH_FUZZ_JOBS:-1}
"$top/scripts/setup.sh" >/dev/null
CC=clang-14 cmake -S "$top" -B "$build" -DJITMAP_BUILD_FUZZ=ON -DJITMAP_BUILD_TESTS=OFF \
  -DJITMAP_BUILD_EXAMPLES=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 1
cmake --build "$build" -j"$(nproc)" >/dev/null || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash "$top/tests/fuzz/make-corpus.sh" "$tmp/seeds" >/dev/null 2>&1 || { echo "no seeds" >&2; exit 1; }
mkdir -p "$tmp/seeds/layout"
"$build/tests/fuzz/layout_seeds" "$tmp/seeds" >/dev/null || { echo "no layout seeds" >&2; exit 1; }
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1); $runs executions per target, $jobs at once"

one() { # TARGET
  local name=$1 dir=${1#fuzz_}
  local corpus="${JITMAP_FUZZ_CORPUS:-$tmp/corpus}/$name" log="$tmp/$name.log"
  mkdir -p "$corpus"
  local start end rc=0
  start=$(date +%s.%N)
  nice -n 10 "$build/tests/fuzz/$name" -runs="$runs" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$name-" "$corpus" "$tmp/seeds/$dir" \
    >"$log" 2>&1 || rc=$?
  end=$(date +%s.%N)
  local execs cov
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1)
  awk -v n="$name" -v e="${execs:-0}" -v s="$start" -v t="$end" -v c="$cov" -v rc="$rc" \
    -v u="$(find "$corpus" -type f | wc -l)" -v w="$(grep -m1 -E 'check failed|ERROR|runtime error' "$log")" \
    'BEGIN { d = t - s; printf "%s: %d executions in %.0f s (%.0f/s), %s, corpus %d: %s\n", n, e, d, e / d, c, u, rc == 0 ? "no finding" : "FOUND: " w }'
  return $rc
}

failed=0
export -f one
export build runs artifacts tmp
printf '%s\n' $targets | xargs -P "$jobs" -I{} bash -c 'one {}' || failed=1
exit $failed
