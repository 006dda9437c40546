#!/usr/bin/env bash
# Every test: set up, build, run the unit and differential tests (ctest), run the unit tests
# again under AddressSanitizer + UndefinedBehaviorSanitizer, and fuzz each target briefly.
# Options: --quick skips the sanitizer build and the fuzzing.
# JITMAP_FUZZ_SECONDS (default 60) sets how long each fuzz target runs.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
quick=0
[ "${1:-}" = "--quick" ] && quick=1
out=${JITMAP_TEST_DIR:-$top/build-test}
jobs=$(nproc)
passed=0 failed=0
phase() { # NAME CMD...: run a phase, count it
  local name=$1; shift
  echo "== $name"
  if "$@"; then passed=$((passed + 1)); echo "== $name: ok"
  else failed=$((failed + 1)); echo "== $name: FAILED"; fi
}

"$top/scripts/setup.sh"

build_and_ctest() { # DIR EXTRA-CMAKE-ARGS...
  local dir=$1; shift
  cmake -S "$top" -B "$dir" "$@" >/dev/null &&
    cmake --build "$dir" -j"$jobs" >/dev/null &&
    ctest --test-dir "$dir" --output-on-failure -j"$jobs"
}

phase "build and test (gcc, -Werror)" build_and_ctest "$out/gcc" -DCMAKE_BUILD_TYPE=RelWithDebInfo
if [ $quick -eq 0 ]; then
  phase "unit tests under ASan+UBSan" build_and_ctest "$out/asan" -DCMAKE_BUILD_TYPE=Debug \
    -DJITMAP_SANITIZE=ON
  fuzz() {
    CC=clang-14 cmake -S "$top" -B "$out/fuzz" -DJITMAP_BUILD_FUZZ=ON -DJITMAP_BUILD_TESTS=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
      cmake --build "$out/fuzz" -j"$jobs" >/dev/null &&
      bash "$top/tests/fuzz/run.sh" "$out/fuzz" "${JITMAP_FUZZ_SECONDS:-60}"
  }
  phase "fuzzing (${JITMAP_FUZZ_SECONDS:-60}s per target)" fuzz
fi

echo "test phases: $passed passed, $failed failed"
[ $failed -eq 0 ]
