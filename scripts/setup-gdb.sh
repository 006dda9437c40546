#!/usr/bin/env bash
# setup-gdb.sh VERSION: a newer Debian release's GDB beside the system's, for the tests that
# run jitmap with it. VERSION 16 is Debian 13's (trixie), 18 Debian's next release's (forky).
# GDB and what it links (glibc, libstdc++, Python ...) are downloaded from that release with a
# private apt state (the machine's sources and packages are not touched) and unpacked into
# JITMAP_GDB<VERSION> (default ~/.cache/jitmap/gdb<VERSION>); the wrapper there, `gdb`, runs it
# through the release's own dynamic loader, so the host's glibc does not matter. The archive is
# the one the system's own apt sources name. Safe to run again: quick when done. Prints the
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
works() { # the wrapper runs GDB VERSION, with Python and DAP
  "$wrapper" -batch -ex 'python import gdb.dap' -ex 'python print(gdb.VERSION)' 2>/dev/null |
    grep -q "^$version\."
}
if [ ! -x "$wrapper" ] || ! works; then
  mkdir -p "$dest/apt/lists/partial" "$dest/apt/cache/archives/partial" "$dest/debs"
  # The archive the system's own apt sources name (one-line or deb822 form), not its security
  # suite: the newer release is fetched from the same mirror.
  mirror=$( { grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
              awk '{for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; break }}'
            grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}'
          } | grep -v -- '-security' | head -n 1)
  if [ -z "$mirror" ]; then
    echo "$me: no Debian archive in the system's apt sources" >&2
    exit 1
  fi
  echo "deb $mirror $suite main" >"$dest/apt/sources.list"
  : >"$dest/apt/status"
  apt=(-o "Dir::Etc::sourcelist=$dest/apt/sources.list" -o Dir::Etc::sourceparts=/nonexistent
       -o APT::Sandbox::User=root
       -o "Dir::State::Lists=$dest/apt/lists" -o "Dir::Cache=$dest/apt/cache"
       -o "Dir::State::status=$dest/apt/status" -o APT::Architecture=amd64
       -o APT::Architectures::=amd64)
  apt-get "${apt[@]}" -qq update
  # GDB's run-time closure, less what only maintainer scripts use.
  skip='^(cdebconf|debconf|init-system-helpers|libdebian-installer4|perl-base|procps|sensible-utils|tzdata|ucf|media-types|netbase|readline-common|libtext-.*-perl|libnewt0.52|libslang2|libtextwrap1|libsystemd0|libproc2-0)$'
  pkgs=$(apt-cache "${apt[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
           --no-breaks --no-replaces --no-enhances --no-pre-depends gdb |
         grep '^[a-z0-9]' | sort -u | grep -Ev "$skip")
  rm -f "$dest"/debs/*.deb
  # shellcheck disable=SC2086 # a list of package names
  (cd "$dest/debs" && apt-get "${apt[@]}" download -qq $pkgs >/dev/null 2>&1)
  rm -rf "$dest/root"
  for deb in "$dest"/debs/*.deb; do dpkg -x "$deb" "$dest/root"; done
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
