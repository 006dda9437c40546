#!/usr/bin/env bash
# setup-gdb.sh VERSION: a newer Debian release's GDB beside the system's, for the tests that
# run jitmap with it. VERSION 16 is Debian 13's (trixie), 18 Debian's next release's (forky).
# GDB and what it links (glibc, libstdc++, Python ...) are unpacked from that release
# (scripts/unpack-release.sh) into JITMAP_GDB<VERSION> (default ~/.cache/jitmap/gdb<VERSION>);
# the wrapper there, `gdb`, runs it through the release's own dynamic loader, so the host's
# glibc does not matter. Safe to run again (quick when done) and at once (a lock). Prints the
# wrapper's path; exits 1 if it could not be set up (the tests that need it are then skipped).
set -euo pipefail
version=${1:-}
case $version in
  16) suite=trixie ;;
  18) suite=forky ;;
  *) echo "usage: setup-gdb.sh 16|18" >&2; exit 2 ;;
esac
me=setup-gdb$version
var=JITMAP_GDB$version
dest=${!var:-${XDG_CACHE_HOME:-$HOME/.cache}/jitmap/gdb$version}
wrapper=$dest/gdb
# ctest runs gdbN.commands, gdbN.typed and the rest at once: one sets up, the others wait.
mkdir -p "$dest"
exec 9>"$dest/.lock"
flock 9 2>/dev/null || true
works() { # the wrapper runs GDB VERSION, with Python and DAP
  "$wrapper" -batch -ex 'python import gdb.dap' -ex 'python print(gdb.VERSION)' 2>/dev/null |
    grep -q "^$version\."
}
if [ ! -x "$wrapper" ] || ! works; then
  "$(dirname "$0")/unpack-release.sh" "$suite" "$dest" gdb
  cat >"$wrapper" <<WRAP
#!/bin/sh
# GDB $version of Debian $suite through its own dynamic loader and libraries (scripts/setup-gdb.sh).
R=$dest/root
PYTHONHOME=\$R/usr PYTHONPATH= exec \$R/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 \\
  --library-path \$R/usr/lib/x86_64-linux-gnu \$R/usr/bin/gdb --data-directory \$R/usr/share/gdb "\$@"
WRAP
  chmod +x "$wrapper"
fi
works || { echo "$me: $wrapper does not run GDB $version with Python and DAP" >&2; exit 1; }
echo "$wrapper"
