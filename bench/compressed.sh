#!/usr/bin/env bash
# bench/compressed.sh [BUILD_DIR]: jitmap-stack on a large core stored compressed, as
# systemd-coredump stores it (bench/README.md, "Compressed cores").
#
# The process: python3 holding SIZE MiB (BENCH_CORE_MIB, 1024) of memory, every 4 KiB page
# written (its number and 64 random bytes: no page is zero, so the decompressed file has no
# hole there and the page cache sees every byte), aborted for a kernel core (core_pattern
# "core"). The core is compressed with zstd -3, lz4 -1 and xz -1 (single-threaded, as
# systemd-coredump compresses). For each: wall time and peak RSS of
#   jitmap-stack CORE.EXT                       (decompressed by libjitmap)
#   zstd -d / lz4 -d / xz -d into a file, then jitmap-stack on it (what a user does
#   without jitmap: each tool decompresses and writes the whole file), and
#   jitmap-stack CORE                           (the core as the kernel wrote it)
# BENCH_RUNS (3) runs each, the median printed. TMPDIR: where the decompressed core goes.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-bench}
mib=${BENCH_CORE_MIB:-1024}
runs=${BENCH_RUNS:-3}
for tool in python3 zstd lz4 xz /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "bench/compressed.sh: $tool not found" >&2; exit 1; }
done
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$top" -B "$build" -DJITMAP_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target jitmap-stack >/dev/null
stack=$(cd "$build" && pwd)/jitmap-stack
work=$(mktemp -d "${BENCH_WORK:-/var/tmp}/jitmap-bench-core.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

# The core.
ulimit -c unlimited
( python3 - "$mib" <<'EOF'

import os, signal, sys
n = int(sys.argv[1]) << 20
data = bytearray(n)
for page in range(0, n, 4096):
    data[page:page + 8] = (page >> 12).to_bytes(8, "little")
    data[page + 8:page + 72] = os.urandom(64)
os.kill(os.getpid(), signal.SIGABRT)
EOF
) 2>/dev/null || true
core=$(ls core* 2>/dev/null | head -1)
[[ -n $core ]] || { echo "bench/compressed.sh: no core (core_pattern $(cat /proc/sys/kernel/core_pattern))" >&2; exit 1; }
[[ $core == core ]] || mv "$core" core
echo "core: $(stat -c %s core) bytes, $(du -k core | cut -f1) KiB on disk"

measure() { # LABEL COMMAND...: the median of BENCH_RUNS runs' wall seconds and peak RSS (KiB)
  local label=$1; shift
  local walls=() rss=()
  for _ in $(seq "$runs"); do
    sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || true
    /usr/bin/time -f "%e %M" -o t.txt "$@" >/dev/null 2>err.txt || {
      echo "$label: failed: $(tail -1 err.txt)" >&2; return 1; }
    read -r w m < t.txt
    walls+=("$w"); rss+=("$m")
  done
  printf '%-44s %8s s  %8s KiB\n' "$label" \
    "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")" \
    "$(printf '%s\n' "${rss[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")"
}

zstd -q -3 -T1 core -o core.zst
lz4 -q -1 core core.lz4
xz -1 -T1 -k core
for f in core.zst core.lz4 core.xz; do echo "$f: $(stat -c %s "$f") bytes"; done

measure "jitmap-stack core (as the kernel wrote it)" "$stack" core
for f in core.zst core.lz4 core.xz; do
  measure "jitmap-stack $f" "$stack" "$f"
done
measure "zstd -d core.zst -o plain" sh -c 'rm -f plain; exec zstd -q -d core.zst -o plain'
measure "lz4 -d core.lz4 plain" sh -c 'rm -f plain; exec lz4 -q -d core.lz4 plain'
measure "xz -d -c core.xz > plain" sh -c 'exec xz -d -c core.xz > plain'
measure "  then jitmap-stack plain" "$stack" plain
