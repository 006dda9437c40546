#!/usr/bin/env bash
# scripts/package.sh DIR: build jitmap's Debian packages into DIR (cmake/packaging.cmake says
# what each holds): libjitmap1, libjitmap-producer0, libjitmap-dev and jitmap.
#   sudo apt-get install ./DIR/*.deb     installs them with their dependencies;
#   sudo apt-get purge jitmap libjitmap-dev libjitmap1 libjitmap-producer0   removes them.
# Builds in JITMAP_PACKAGE_BUILD (default build-package), configured for /usr, without tests.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: scripts/package.sh DIR" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
build=${JITMAP_PACKAGE_BUILD:-$top/build-package}
"$top/scripts/setup.sh" --demo
command -v dpkg-shlibdeps >/dev/null || {
  echo "scripts/package.sh: dpkg-shlibdeps (dpkg-dev) is needed" >&2
  exit 1
}
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
  -DJITMAP_BUILD_TESTS=OFF -DJITMAP_BUILD_BENCH=OFF -DJITMAP_BUILD_FUZZ=OFF \
  -DJITMAP_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null
# CPack's progress lines tell a user nothing: its output is shown when it fails, and any
# line that is not progress (a warning) always.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
(cd "$build" && cpack -G DEB -B "$out" >"$log" 2>&1) || { cat "$log" >&2; exit 1; }
grep -vE '^(CPack: |CPackDeb: - Generating dependency list$)' "$log" >&2 || true
rm -rf "$out/_CPack_Packages"
ls "$out"/*.deb
