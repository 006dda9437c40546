#!/usr/bin/env bash
# setup-arm64.sh: LLVM 14's own AArch64 `lli` for the AArch64 tests (tests/cross), beside the
# host's LLVM. Safe to run again: quick when done. Needs root (or sudo) the first time.
#
# The arm64 libLLVM is Multi-Arch: same and installs beside the host's (with the arm64 C
# library, through `dpkg --add-architecture arm64`); the arm64 `lli` is in llvm-14-runtime,
# which would *replace* the host's llvm-14 if installed (checked with apt-get -s): it is only
# downloaded and unpacked, into JITMAP_ARM64_LLVM (default ~/.cache/jitmap/arm64-llvm).
# qemu-aarch64 -L / then runs it. Prints where lli is; exits 1 if it could not be set up (the
# tests that need it are then skipped).
set -euo pipefail
dest=${JITMAP_ARM64_LLVM:-${XDG_CACHE_HOME:-$HOME/.cache}/jitmap/arm64-llvm}
lli=$dest/root/usr/lib/llvm-14/bin/lli
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
if ! dpkg-query -W -f='${Status}' libllvm14:arm64 2>/dev/null | grep -q 'install ok installed'; then
  dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends libllvm14:arm64 >/dev/null
fi
if [ ! -x "$lli" ]; then
  mkdir -p "$dest/debs"
  (cd "$dest/debs" && apt-get download -qq llvm-14-runtime:arm64 >/dev/null 2>&1) || true
  for deb in "$dest"/debs/llvm-14-runtime_*_arm64.deb; do dpkg -x "$deb" "$dest/root"; done
fi
[ -x "$lli" ] || { echo "setup-arm64: no $lli" >&2; exit 1; }
echo "$lli"
