#!/usr/bin/env bash
# setup-lldb.sh VERSION: a newer Debian release's LLDB beside the system's LLDB 16, for the
# tests that run jitmap with it. VERSION 22 is Debian 13's lldb-22 (trixie): scripted frame
# providers; 23 is unstable's lldb-23 (sid): variables of scripted frames. LLDB, its Python
# and what they link (glibc, Python 3.13, libLLVM ...) are unpacked from that release
# (scripts/unpack-release.sh) into JITMAP_LLDB<VERSION> (default ~/.cache/jitmap/lldb<VERSION>);
# the wrapper there, `lldb`, runs it through the release's own dynamic loader, and gives it
# lldb-server (which it starts to run a program) the same way, through LLDB_DEBUGSERVER_PATH.
# (Debian 12's LLDB 19 comes from the system's own release: scripts/setup-lldb19.sh.) Safe to
# run again (quick when done) and at once (a lock). Prints the wrapper's path; exits 1 if it
# could not be set up (the tests that need it are then skipped).
set -euo pipefail
version=${1:-}
case $version in
  22) suite=trixie ;;
  23) suite=sid ;;
  *) echo "usage: setup-lldb.sh 22|23" >&2; exit 2 ;;
esac
me=setup-lldb$version
var=JITMAP_LLDB$version
dest=${!var:-${XDG_CACHE_HOME:-$HOME/.cache}/jitmap/lldb$version}
wrapper=$dest/lldb
mkdir -p "$dest"
exec 9>"$dest/.lock"
flock 9 2>/dev/null || true
works() { # the wrapper runs LLDB VERSION with Python
  "$wrapper" -b -x -o 'script import lldb; print("py" + "ok", lldb.SBDebugger.GetVersionString())' \
    2>/dev/null | grep -q "pyok lldb version $version\."
}
if [ ! -x "$wrapper" ] || ! works; then
  "$(dirname "$0")/unpack-release.sh" "$suite" "$dest" "lldb-$version" "python3-lldb-$version"
  for tool in lldb lldb-server lldb-dap; do
    env=
    [ $tool != lldb-server ] && env="LLDB_DEBUGSERVER_PATH=$dest/lldb-server PYTHONHOME=\$R/usr PYTHONPATH= "
    cat >"$dest/$tool" <<WRAP
#!/bin/sh
# Debian $suite's $tool $version through its own dynamic loader and libraries (scripts/setup-lldb.sh).
R=$dest/root
${env}exec \$R/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 \\
  --library-path \$R/usr/lib/llvm-$version/lib:\$R/usr/lib/x86_64-linux-gnu \$R/usr/lib/llvm-$version/bin/$tool "\$@"
WRAP
    chmod +x "$dest/$tool"
  done
fi
works || { echo "$me: $wrapper does not run LLDB $version with Python" >&2; exit 1; }
echo "$wrapper"
