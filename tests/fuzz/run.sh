#!/usr/bin/env bash
# run.sh BUILD_DIR SECONDS: fuzz each target for SECONDS from freshly built seed corpora.
#
# BUILD_DIR is a build configured with CC=clang-14 -DJITMAP_BUILD_FUZZ=ON. Prints one line per
# target and a summary line "fuzz: N passed, M failed"; exits 1 when any target found a crash,
# a leak, a timeout or a failed check. Inputs that fail are kept in BUILD_DIR/fuzz-artifacts.
#
# Environment: JITMAP_FUZZ_CORPUS=DIR keeps the corpora that fuzzing grows in DIR/<target>
# (default: a temporary directory, removed at exit); JITMAP_FUZZ_ARGS adds libFuzzer flags.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR SECONDS" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd) || exit 2
seconds=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"

if ! bash "$here/make-corpus.sh" "$tmp/seeds" >"$tmp/make-corpus.log" 2>&1; then
  cat "$tmp/make-corpus.log" >&2
  echo "fuzz: 0 passed, 1 failed (seed corpora could not be built)"
  exit 1
fi

# Deopt layouts as libjitmap-producer writes them (built with the targets).
mkdir -p "$tmp/seeds/layout"
if ! "$build/tests/fuzz/layout_seeds" "$tmp/seeds" >>"$tmp/make-corpus.log" 2>&1; then
  cat "$tmp/make-corpus.log" >&2
  echo "fuzz: 0 passed, 1 failed (layout seeds could not be written)"
  exit 1
fi

# Each target writes its line to $tmp/NAME.result (first word "ok" or "FAILED"); up to
# JITMAP_FUZZ_JOBS of them run at once (default: the machine's cores), so that CI's fuzzing
# phase takes SECONDS per pair of targets on two cores, not per target.
run_target() { # NAME SEED-SUBDIR
  local name=$1 seeds="$tmp/seeds/$2" bin="$build/tests/fuzz/$1"
  local corpus="${JITMAP_FUZZ_CORPUS:-$tmp/corpus}/$name" log="$tmp/$name.log"
  local out="$tmp/$name.result"
  if [ ! -x "$bin" ]; then
    echo "$name: FAILED: $bin not built (configure with CC=clang-14 -DJITMAP_BUILD_FUZZ=ON)" >"$out"
    return
  fi
  mkdir -p "$corpus"
  local rc=0
  # shellcheck disable=SC2086 # JITMAP_FUZZ_ARGS is a list of flags
  "$bin" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$artifacts/$name-" ${JITMAP_FUZZ_ARGS:-} "$corpus" "$seeds" \
    >"$log" 2>&1 || rc=$?
  local execs units
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  units=$(find "$corpus" -type f | wc -l)
  if [ $rc -eq 0 ]; then
    echo "$name: ok, ${execs:-?} executions in ${seconds}s, corpus of $units inputs" >"$out"
  else
    local what
    what=$(grep -m1 -E '^==[0-9]+==ERROR|^SUMMARY|check failed|runtime error|ALARM' "$log")
    {
      echo "$name: FAILED (exit $rc): ${what:-see log below}"
      grep -E 'Test unit written to' "$log" | sed 's/^/  /'
      tail -n 40 "$log" | sed 's/^/  | /'
    } >"$out"
  fi
}

parallel=${JITMAP_FUZZ_JOBS:-$(nproc)}
names=()
start_target() { # NAME SEED-SUBDIR
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n; done
  names+=("$1")
  run_target "$1" "$2" &
}
start_target fuzz_parse parse
start_target fuzz_elf elf
start_target fuzz_cfi cfi
start_target fuzz_core core
start_target fuzz_process process
start_target fuzz_plugin plugin
start_target fuzz_layout layout
start_target fuzz_unwind unwind
start_target fuzz_insn insn
start_target fuzz_live live
start_target fuzz_perfmap perfmap
wait
passed=0 failed=0
for name in "${names[@]}"; do
  cat "$tmp/$name.result" 2>/dev/null || echo "$name: FAILED: no result"
  if grep -q "^$name: ok," "$tmp/$name.result" 2>/dev/null; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ $failed -eq 0 ]
