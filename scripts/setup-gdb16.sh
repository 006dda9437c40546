#!/usr/bin/env bash
# setup-gdb16.sh: Debian 13's GDB 16 beside the system's GDB, for the DAP test (GDB 14+ speaks
# DAP; Debian 12's GDB 13 does not). GDB 16 and what it links (glibc 2.41, libstdc++ 14,
# Python 3.13 ...) are downloaded from trixie with a private apt state (the machine's sources
# and packages are not touched) and unpacked into JITMAP_GDB16 (default ~/.cache/jitmap/gdb16);
# the wrapper JITMAP_GDB16/gdb runs it through trixie's own dynamic loader, so the host's
# glibc does not matter. Safe to run again: quick when done. Prints the wrapper's path; exits 1
# if it could not be set up (the DAP test is then skipped).
set -euo pipefail
dest=${JITMAP_GDB16:-${XDG_CACHE_HOME:-$HOME/.cache}/jitmap/gdb16}
wrapper=$dest/gdb
if [ ! -x "$wrapper" ] || ! "$wrapper" -batch -ex 'python import gdb.dap' >/dev/null 2>&1; then
  mkdir -p "$dest/apt/lists/partial" "$dest/apt/cache/archives/partial" "$dest/debs"
  # The archive the system's own apt sources name (one-line or deb822 form), not its security
  # suite: trixie is fetched from the same mirror.
  mirror=$( { grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
              awk '{for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; break }}'
            grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}'
          } | grep -v -- '-security' | head -n 1)
  if [ -z "$mirror" ]; then
    echo "setup-gdb16: no Debian archive in the system's apt sources" >&2
    exit 1
  fi
  echo "deb $mirror trixie main" >"$dest/apt/sources.list"
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
  # shellcheck disable=SC2086 # a list of package names
  (cd "$dest/debs" && apt-get "${apt[@]}" download -qq $pkgs >/dev/null 2>&1)
  rm -rf "$dest/root"
  for deb in "$dest"/debs/*.deb; do dpkg -x "$deb" "$dest/root"; done
  cat >"$wrapper" <<WRAP
#!/bin/sh
# Debian 13's GDB through its own dynamic loader and libraries (scripts/setup-gdb16.sh).
R=$dest/root
PYTHONHOME=\$R/usr PYTHONPATH= exec \$R/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 \\
  --library-path \$R/usr/lib/x86_64-linux-gnu \$R/usr/bin/gdb --data-directory \$R/usr/share/gdb "\$@"
WRAP
  chmod +x "$wrapper"
fi
"$wrapper" -batch -ex 'python import gdb.dap' >/dev/null 2>&1 ||
  { echo "setup-gdb16: $wrapper does not run GDB with DAP" >&2; exit 1; }
echo "$wrapper"
