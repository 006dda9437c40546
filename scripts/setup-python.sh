#!/usr/bin/env bash
# setup-python.sh: Debian 13's (trixie's) CPython 3.13, for the tests that read the stacks of a
# Python program run with `-X perf` or `-X perf_jit` (tests/runtimes; Debian 12's Python 3.11
# has neither). python3.13 and its run-time closure are unpacked from trixie
# (scripts/unpack-release.sh) into JITMAP_PYTHON313 (default ~/.cache/jitmap/python313).
#
# trixie's python3.13 needs trixie's glibc. Run as `ld-linux-x86-64.so.2 python3.13`, the
# process's executable (/proc/PID/exe) would be the loader, and a debugger attached to it would
# not see python3.13's own symbols (GDB takes the first entry of the link map for the
# executable). So python3.13 is given trixie's loader as its program interpreter (PT_INTERP)
# and the unpacked libraries as its DT_RPATH (which, unlike DT_RUNPATH, also serves the
# libraries and extension modules it loads), with patchelf: /proc/PID/exe is then python3.13
# itself, as on trixie.
#
# Its debug information is in trixie's python3.13-dbg (python3.13-dbgsym is not in the main
# archive), about 55 MB, downloaded alone: the debug file of python3.13's build ID is taken out
# of it. patchelf renumbers the sections it moves, and libdwfl reads a separate debug file's
# symbols through the main file's section numbers (those of Debian's file then name the wrong
# functions), so the binary is joined with its debug file (eu-unstrip), patched, and split
# again (eu-strip -f): root/usr/bin/python3.13.debug, found through .gnu_debuglink by GDB and
# by jitmap-stack alike. Without it python3.13 is still set up (its exported symbols name its
# frames).
#
# Safe to run again (quick when done) and at once (a lock). Prints the path of python3.13;
# exits 1, saying why, if it could not be set up (the tests that need it are then skipped).
set -euo pipefail
me=setup-python
dest=${JITMAP_PYTHON313:-${XDG_CACHE_HOME:-$HOME/.cache}/jitmap/python313}
root=$dest/root
py=$root/usr/bin/python3.13
loader=$root/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
mkdir -p "$dest"
exec 9>"$dest/.lock"
flock 9 2>/dev/null || true

works() { # python3.13 runs from its own interpreter, with the perf trampoline (its map removed)
  [ -x "$py" ] &&
    env -u PYTHONPATH -u PYTHONHOME "$py" -X perf -c 'import os, sys
os.unlink("/tmp/perf-%d.map" % os.getpid())
print("py" + "ok", sys.version_info[:2] == (3, 13), sys.is_stack_trampoline_active())' \
      2>/dev/null | grep -q '^pyok True True$' &&
    readelf -lW "$py" 2>/dev/null | grep -qF "[Requesting program interpreter: $loader]"
}

if ! works; then
  for tool in patchelf eu-unstrip eu-strip readelf; do
    command -v $tool >/dev/null ||
      { echo "$me: needs $tool (scripts/setup.sh installs it)" >&2; exit 1; }
  done
  "$(dirname "$0")/unpack-release.sh" trixie "$dest" python3.13 -- python3.13-dbg
  [ -x "$py" ] || { echo "$me: trixie's python3.13 has no $py" >&2; exit 1; }
  # The debug file of this python3.13 (by build ID), if python3.13-dbg came.
  id=$(readelf -n "$py" | awk '/Build ID:/ {print $3}')
  debug=./usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
  work=$dest/work
  rm -rf "$work"
  mkdir -p "$work"
  dbg=$(ls "$dest"/extra/python3.13-dbg_*.deb 2>/dev/null | head -n 1 || true)
  if [ -n "$id" ] && [ -n "$dbg" ] &&
     dpkg-deb --fsys-tarfile "$dbg" | tar -x -O "$debug" >"$work/debian.debug" 2>/dev/null &&
     [ -s "$work/debian.debug" ] &&
     eu-unstrip -o "$work/python3.13" "$py" "$work/debian.debug" 2>/dev/null; then
    withdebug=1
  else
    echo "$me: no debug information for python3.13 (python3.13-dbg); going on without it" >&2
    cp "$py" "$work/python3.13"
    withdebug=0
  fi
  patchelf --set-interpreter "$loader" --force-rpath --set-rpath "$root/usr/lib/x86_64-linux-gnu" \
    "$work/python3.13"
  rm -f "$root/usr/bin/python3.13.debug"
  if [ $withdebug -eq 1 ]; then
    # the debug link names python3.13.debug, beside the binary
    (cd "$work" && eu-strip --remove-comment -f python3.13.debug python3.13)
    mv "$work/python3.13.debug" "$root/usr/bin/python3.13.debug"
  fi
  mv "$work/python3.13" "$py"
  rm -rf "$work" "$dest"/extra
fi
works || { echo "$me: $py does not run Python 3.13 with -X perf" >&2; exit 1; }
echo "$py"
