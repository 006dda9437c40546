#!/usr/bin/env bash
# bench/arm64.sh [BUILD_DIR]: `bt` through 1000 AArch64 JIT frames under qemu-user, jitmap
# against GDB alone (bench/README.md, "AArch64 under qemu-user").
#
# jitmap-handjit-arm64 --trap --depth D (examples/handjit-arm64: D + 1 frames of a function
# with a frame record above a frameless leaf, no CFI) stops in the leaf; gdb-multiarch attaches
# to qemu-aarch64's stub and bench/bt_time.py times `bt` through every frame after dropping
# GDB's frame cache (and the reader's per-stop state), BT_RUNS times, in three sessions:
# GDB alone (its AArch64 prologue analyzer), jitmap in the default claim mode (GDB unwinds,
# the reader declines the image), and `set jitmap reader-claim auto` (jitmap's unwinder: the
# stackmap's frame sizes and the frame records). Environment: BENCH_DEPTH (D, default 1000),
# BT_RUNS (default 10), BENCH_SESSIONS (sessions per mode, default 3: the median is kept).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}
depth=${BENCH_DEPTH:-1000}
sessions=${BENCH_SESSIONS:-3}
export BT_RUNS=${BT_RUNS:-10}
prog=$build/examples/handjit-arm64/jitmap-handjit-arm64
for tool in qemu-aarch64 gdb-multiarch python3; do
  command -v "$tool" >/dev/null || { echo "bench/arm64.sh: $tool not found (scripts/setup.sh)" >&2; exit 1; }
done
[ -x "$prog" ] || { echo "bench/arm64.sh: $prog not built" >&2; exit 1; }

one() { # MODE -> "BT frames=... per_frame_us=..."
  local mode=$1 port jitmap=()
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  qemu-aarch64 -g "$port" "$prog" --trap --depth "$depth" >/dev/null 2>&1 &
  local q=$!
  sleep 0.3
  case $mode in
    gdb) ;;
    default) jitmap=(-ex "source $build/share/jitmap/jitmap.gdb") ;;
    auto) jitmap=(-ex "source $build/share/jitmap/jitmap.gdb" -ex 'set jitmap reader-claim auto') ;;
  esac
  timeout 600 gdb-multiarch -q -batch -nx -ex 'set sysroot /' -ex 'set debuginfod enabled off' \
    -ex 'set backtrace limit unlimited' "${jitmap[@]}" -ex "target remote :$port" -ex continue \
    -ex "source $top/bench/bt_time.py" "$prog" 2>/dev/null | grep '^BT ' || true
  kill $q 2>/dev/null || true
  wait $q 2>/dev/null || true
}

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores; depth $depth; BT_RUNS=$BT_RUNS; $sessions sessions per mode"
declare -A med
for mode in gdb default auto; do
  vals=()
  for _ in $(seq "$sessions"); do
    line=$(one "$mode")
    echo "$mode: $line"
    vals+=("$(sed -n 's/.*per_frame_us=\([0-9.]*\).*/\1/p' <<<"$line")")
  done
  med[$mode]=$(printf '%s\n' "${vals[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
done
echo
echo "| bt through $((depth + 3)) frames, per frame (median of $sessions) | GDB alone | jitmap, default | jitmap, reader-claim auto |"
echo "|---|---|---|---|"
awk -v g="${med[gdb]}" -v d="${med[default]}" -v a="${med[auto]}" 'BEGIN {
  printf "| AArch64, qemu-aarch64 + gdb-multiarch | %.1f us | %.1f us (%.2fx) | %.1f us (%.2fx) |\n", g, d, d / g, a, a / g }'
