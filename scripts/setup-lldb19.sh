#!/usr/bin/env bash
# setup-lldb19.sh: Debian 12's LLDB 19 beside the system's LLDB 16, for the lldb19.* tests.
# lldb-19 itself could be installed, but python3-lldb-19 conflicts with python3-lldb-16 (the
# package of LLDB 16's Python), so LLDB 19 is unpacked instead: lldb-19, liblldb-19,
# python3-lldb-19 and the libraries of their run-time closure that this machine lacks
# (libclang-cpp19, libipt2, and libllvm19 when llvm-19 is not installed) are downloaded from
# the machine's own apt sources (Debian 12's) with `apt-get download` and unpacked into
# JITMAP_LLDB19 (default ~/.cache/jitmap/lldb19) with `dpkg -x`; the machine's packages are
# not touched. The wrapper JITMAP_LLDB19/lldb runs it with the unpacked libraries first.
# Safe to run again (quick when done) and at once (a lock). Prints the wrapper's path; exits
# 1 if LLDB 19 with Python could not be set up (the lldb19.* tests are then skipped).
set -euo pipefail
dest=${JITMAP_LLDB19:-${XDG_CACHE_HOME:-$HOME/.cache}/jitmap/lldb19}
wrapper=$dest/lldb
# ctest runs lldb19.commands and lldb19.parity at once: one sets up, the other waits.
mkdir -p "$dest"
exec 9>"$dest/.lock"
flock 9 2>/dev/null || true

works() {
  "$wrapper" -b -x -o 'script import lldb; print("py" + "ok", lldb.SBDebugger.GetVersionString())' \
    2>/dev/null | grep -q 'pyok lldb version 19\.'
}

if [ ! -x "$wrapper" ] || ! works; then
  if ! command -v apt-get >/dev/null || ! command -v dpkg >/dev/null; then
    echo "setup-lldb19: needs apt-get and dpkg (Debian 12)" >&2
    exit 1
  fi
  mkdir -p "$dest/debs"
  # LLDB 19's three packages, and the shared libraries (lib*) of their run-time closure that
  # are not installed here; not the tools only maintainer scripts use, nor other
  # architectures' packages (dpkg --add-architecture).
  libs=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
           --no-replaces --no-enhances lldb-19 python3-lldb-19 2>/dev/null |
         grep -E '^lib[a-z0-9.+-]+$' | sort -u |
         while read -r p; do
           dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
             echo "$p"
         done) || true
  pkgs="lldb-19 liblldb-19 python3-lldb-19 $libs"
  rm -f "$dest"/debs/*.deb
  # shellcheck disable=SC2086 # a list of package names
  (cd "$dest/debs" && apt-get download -qq $pkgs >/dev/null 2>&1) ||
    { echo "setup-lldb19: apt-get download" $pkgs "failed (Debian 12's archive has them)" >&2
      exit 1; }
  rm -rf "$dest/root"
  for deb in "$dest"/debs/*.deb; do dpkg -x "$deb" "$dest/root"; done
  cat >"$wrapper" <<WRAP
#!/bin/sh
# Debian 12's LLDB 19, unpacked beside the system's LLDB 16 (scripts/setup-lldb19.sh).
R=$dest/root
L=\$R/usr/lib/llvm-19/lib:\$R/usr/lib/x86_64-linux-gnu
LD_LIBRARY_PATH=\$L\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH} exec \$R/usr/lib/llvm-19/bin/lldb "\$@"
WRAP
  chmod +x "$wrapper"
fi
works || { echo "setup-lldb19: $wrapper does not run LLDB 19 with Python" >&2; exit 1; }
echo "$wrapper"
