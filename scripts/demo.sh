#!/usr/bin/env bash
# The main job: set up, build, and show what jitmap reads from a stackmap-bearing object that
# the build compiles from the project's own IR (tests/fixtures/ir/demo.ll).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${JITMAP_BUILD_DIR:-$top/build}

"$top/scripts/setup.sh"
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null

echo "\$ jitmap-dump build/demo.o"
"$build/jitmap-dump" "$build/demo.o"
