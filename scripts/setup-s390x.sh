#!/usr/bin/env bash
# setup-s390x.sh: LLVM 14's own s390x `lli` and the s390x libraries it needs, unpacked into one
# folder (JITMAP_S390X_ROOT, default ~/.cache/jitmap/s390x/root) that qemu-s390x (-L) and
# gdb-multiarch (set sysroot) use as the target's root. Nothing is installed: the s390x archive
# can lag the host's versions of Multi-Arch libraries (liblzma5), so libllvm14:s390x may not
# install (checked with apt-get -s). Safe to run again: quick when done. Needs root (or sudo) the
# first time (dpkg --add-architecture s390x, apt-get update). Prints where lli is; exits 1 if
# it could not be set up (the tests that need it are then skipped).
set -euo pipefail
top=${JITMAP_S390X_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/jitmap/s390x/root}
lli=$top/usr/lib/llvm-14/bin/lli
if [ ! -x "$lli" ]; then
  SUDO=
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  if ! dpkg --print-foreign-architectures | grep -qx s390x; then
    $SUDO dpkg --add-architecture s390x
    $SUDO apt-get update -qq
  fi
  debs=$(dirname "$top")/debs
  mkdir -p "$debs"
  (cd "$debs" && apt-get download -qq llvm-14-runtime:s390x libllvm14:s390x libc6:s390x \
      libffi8:s390x libedit2:s390x libz3-4:s390x libxml2:s390x libicu72:s390x libtinfo6:s390x \
      zlib1g:s390x libstdc++6:s390x libgcc-s1:s390x liblzma5:s390x libbsd0:s390x \
      libmd0:s390x >/dev/null 2>&1) || true
  for deb in "$debs"/*_s390x.deb; do dpkg -x "$deb" "$top"; done
fi
[ -x "$lli" ] || { echo "setup-s390x: no $lli" >&2; exit 1; }
echo "$lli"
