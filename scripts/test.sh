#!/usr/bin/env bash
# Every test: set up, build, run the unit and differential tests (ctest), run the unit tests
# again under AddressSanitizer + UndefinedBehaviorSanitizer, and fuzz each target briefly.
# Options: --quick skips the sanitizer build and the fuzzing.
# JITMAP_FUZZ_SECONDS (default 30) sets how long each fuzz target runs (ten targets, as many at
# once as there are cores; the long
# runs, 10^7 executions each, are bench/fuzz.sh).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
quick=0
[ "${1:-}" = "--quick" ] && quick=1
out=${JITMAP_TEST_DIR:-$top/build-test}
jobs=$(nproc)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
passed=0 failed=0 phases_failed=0
# Run a phase, echoing its output, and add up the tests it reports: ctest's
# "N tests failed out of M" lines and the fuzz runner's and the package test's "fuzz: N passed,
# M failed" lines.
phase() { # NAME CMD...
  local name=$1; shift
  echo "== $name"
  local rc=0
  "$@" 2>&1 | tee "$log" || rc=$?
  local f t
  while read -r f t; do
    failed=$((failed + f)); passed=$((passed + t - f))
  done < <(sed -n 's/.*tests passed, \([0-9]*\) tests\{0,1\} failed out of \([0-9]*\).*/\1 \2/p' "$log")
  while read -r p f; do
    passed=$((passed + p)); failed=$((failed + f))
  done < <(sed -n 's/^\(fuzz\|package\): \([0-9]*\) passed, \([0-9]*\) failed.*/\2 \3/p' "$log")
  if [ $rc -eq 0 ]; then echo "== $name: ok"
  else phases_failed=$((phases_failed + 1)); echo "== $name: FAILED (exit $rc)"; fi
}

"$top/scripts/setup.sh"

# pyenv's shims (this machine's python3) cost 0.4 s a call, a bash script and pyenv itself
# before the interpreter; the tests call python3 hundreds of times (the differential test
# alone: 85 s instead of 60). The interpreter the shim runs goes first in PATH, for CMake's
# find_program and every script alike; elsewhere this puts python3's own folder first.
if real=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$real" ]; then
  PATH="$(dirname "$real"):$PATH"
  export PATH
fi

build_and_ctest() { # DIR CTEST-REGEX EXTRA-CMAKE-ARGS...
  local dir=$1 regex=$2; shift 2
  cmake -S "$top" -B "$dir" "$@" >/dev/null &&
    cmake --build "$dir" -j"$jobs" >/dev/null &&
    ctest --test-dir "$dir" --output-on-failure -j"$jobs" -R "$regex"
}

phase "build and test (gcc, -Werror)" build_and_ctest "$out/gcc" . -DCMAKE_BUILD_TYPE=RelWithDebInfo
if [ $quick -eq 0 ]; then
  # The Debian packages, installed, used with no `source` line, and purged (it installs into
  # /usr for a moment: skipped, exit 77, when jitmap's packages are installed already or
  # there is no root or sudo).
  packages() {
    local rc=0
    JITMAP_PACKAGE_BUILD="$out/package" bash "$top/tests/package/test_package.sh" || rc=$?
    [ $rc -eq 77 ] && return 0
    return $rc
  }
  phase "Debian packages" packages
  # The library's own tests only: the debugger tests load the plugin into GDB, which an
  # ASan-instrumented shared object cannot enter; gdb.reader_stress drives the plugin's code
  # here instead.
  phase "unit tests under ASan+UBSan" build_and_ctest "$out/asan" '^(unit\.|differential$)' \
    -DCMAKE_BUILD_TYPE=Debug -DJITMAP_SANITIZE=ON -DJITMAP_BUILD_EXAMPLES=OFF
  fuzz() {
    CC=clang-14 cmake -S "$top" -B "$out/fuzz" -DJITMAP_BUILD_FUZZ=ON -DJITMAP_BUILD_TESTS=OFF \
      -DJITMAP_BUILD_EXAMPLES=OFF \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
      cmake --build "$out/fuzz" -j"$jobs" >/dev/null &&
      bash "$top/tests/fuzz/run.sh" "$out/fuzz" "${JITMAP_FUZZ_SECONDS:-30}"
  }
  phase "fuzzing (${JITMAP_FUZZ_SECONDS:-30}s per target)" fuzz
fi

# A phase that failed without a test to blame (a build error) still fails the run.
[ $phases_failed -gt 0 ] && [ $failed -eq 0 ] && failed=$phases_failed
echo "tests: $passed passed, $failed failed"
[ $phases_failed -eq 0 ] && [ $failed -eq 0 ]
