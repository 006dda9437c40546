#!/usr/bin/env bash
# bench/run.sh [BUILD_DIR]: build and run the jitmap benchmarks (see bench/README.md).
#
#   1. bench_parse on generated raw sections: parse+index throughput on a 16 MiB section and
#      a 10^6-record one, lookup cost at 10^5 and 10^6 records;
#   2. hyperfine, whole process: `jitmap-dump --format=llvm-readobj BIG.o` against
#      `llvm-readobj-14 --stackmap BIG.o`, where BIG.o is compiled by llc-14 from IR that
#      bench_gen writes (about 12 MB of .llvm_stackmaps). The two outputs are first checked
#      to be identical, so both tools do the same work.
#
# BUILD_DIR defaults to build-bench (a normal RelWithDebInfo build). Generated inputs are kept
# in BUILD_DIR/bench-data; BIG.o is only recompiled when bench_gen or BENCH_FUNCTIONS change.
# Environment: BENCH_FUNCTIONS (default 24000) functions in BIG.o; BENCH_RUNS (default 20)
# hyperfine runs; LLC, READOBJ (default llc-14, llvm-readobj-14).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-bench}
functions=${BENCH_FUNCTIONS:-24000}
runs=${BENCH_RUNS:-20}
llc=${LLC:-llc-14}
readobj=${READOBJ:-llvm-readobj-14}
"$top/scripts/setup.sh" --bench
for tool in "$llc" "$readobj" hyperfine cmake; do
  command -v "$tool" >/dev/null || { echo "bench/run.sh: $tool not found" >&2; exit 1; }
done

echo "== build ($build)"
cmake -S "$top" -B "$build" -DJITMAP_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target bench_gen bench_parse jitmap-dump >/dev/null
gen=$build/bench/bench_gen
dump=$build/jitmap-dump
data=$build/bench-data
mkdir -p "$data"

echo "== machine"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
echo "cc: $(sed -n 's/^CMAKE_C_COMPILER:[^=]*=//p' "$build/CMakeCache.txt") $(sed -n 's/^CMAKE_BUILD_TYPE:[^=]*=//p' "$build/CMakeCache.txt");" \
  "$("$llc" --version | sed -n 's/^ *\(.*LLVM version.*\)/\1/p')"

echo "== parse and lookup (bench_parse)"
"$gen" section "$data/big.bin" --mb 16
"$gen" section "$data/r1e5.bin" --records 100000
"$gen" section "$data/r1e6.bin" --records 1000000
"$build/bench/bench_parse" parse "$data/big.bin" --runs 20
"$build/bench/bench_parse" parse "$data/r1e6.bin" --runs 5
"$build/bench/bench_parse" lookup "$data/r1e5.bin"
"$build/bench/bench_parse" lookup "$data/r1e6.bin"

echo "== jitmap-dump against $readobj (hyperfine)"
big=$data/BIG.o
stamp="$functions $(md5sum <"$gen" | cut -d' ' -f1) $("$llc" --version | md5sum | cut -d' ' -f1)"
if [ ! -f "$big" ] || [ "$(cat "$data/BIG.stamp" 2>/dev/null)" != "$stamp" ]; then
  "$gen" ir "$data/big.ll" --functions "$functions"
  start=$(date +%s)
  "$llc" -O2 -filetype=obj -mtriple=x86_64-unknown-linux-gnu "$data/big.ll" -o "$big"
  echo "compiled BIG.o with $llc in $(($(date +%s) - start)) s"
  echo "$stamp" >"$data/BIG.stamp"
fi
size=$(readelf -SW "$big" | sed -n 's/.* \.llvm_stackmaps *PROGBITS *[0-9a-f]* [0-9a-f]* \([0-9a-f]*\) .*/\1/p')
echo "BIG.o: $(stat -c %s "$big") bytes, .llvm_stackmaps $((16#$size)) bytes," \
  "$("$dump" "$big" | sed -n '1s/.*, \([0-9]* records\)$/\1/p')"
# Same work: jitmap-dump prints exactly what readobj prints after its 6-line file header.
if ! cmp -s <("$dump" --format=llvm-readobj "$big") <("$readobj" --stackmap "$big" | tail -n +7); then
  echo "bench/run.sh: jitmap-dump and $readobj disagree on $big" >&2
  exit 1
fi
hyperfine --warmup 3 --runs "$runs" --export-markdown "$data/hyperfine.md" \
  "$dump --format=llvm-readobj $big > /dev/null" \
  "$readobj --stackmap $big > /dev/null"
