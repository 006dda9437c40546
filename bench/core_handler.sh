#!/usr/bin/env bash
# jitmap-core-handler's cost at crash time: a core streamed through it (with a perf map added)
# against the same core streamed through cat, both between pipes as the kernel's core_pattern
# gives it; seconds and the largest resident set of the pipeline's processes, 3 runs each,
# alternating.
#   bench/core_handler.sh BUILD_DIR CORE PERF_MAP
set -euo pipefail
build=$(cd "$1" && pwd)
core=$2
map=$3
cat "$core" > /dev/null # in the page cache for both
for i in 1 2 3; do
  /usr/bin/time -f "cat      %e s, %M KB" sh -c "cat '$core' | cat | cat > /dev/null"
  /usr/bin/time -f "handler  %e s, %M KB" \
    sh -c "cat '$core' | '$build/jitmap-core-handler' -q --file='$map' 0 | cat > /dev/null"
done
