#!/usr/bin/env bash
# unpack-release.sh SUITE DEST PACKAGE... [-- EXTRA...]: PACKAGEs of another Debian release
# (trixie, forky, sid) and their whole run-time closure, downloaded with a private apt state
# (the machine's sources, lists and packages are not touched) and unpacked into DEST/root with
# dpkg -x, to run through that release's own dynamic loader (DEST/root/usr/lib/x86_64-linux-gnu/
# ld-linux-x86-64.so.2), whatever the host's glibc. EXTRA packages (optional) are downloaded
# alone, without their dependencies, into DEST/extra and not unpacked: the caller takes what
# it needs from them (setup-python.sh: a debug file), and a missing one is no failure. The
# archive is the one the system's own apt sources name (one-line or deb822 form; not its
# security suite). Used by setup-gdb.sh, setup-lldb.sh and setup-python.sh. Exits 1, saying
# why, when it cannot.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: unpack-release.sh SUITE DEST PACKAGE... [-- EXTRA...]" >&2; exit 2; }
suite=$1 dest=$2
shift 2
wanted=() extra=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do wanted+=("$1"); shift; done
[ $# -gt 0 ] && shift && extra=("$@")
set -- "${wanted[@]}"
mirror=$( { grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
            awk '{for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; break }}'
          grep -h '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}'
        } | grep -v -- '-security' | head -n 1)
if [ -z "$mirror" ]; then
  echo "unpack-release: no Debian archive in the system's apt sources" >&2
  exit 1
fi
mkdir -p "$dest/apt/lists/partial" "$dest/apt/cache/archives/partial" "$dest/debs"
echo "deb $mirror $suite main" >"$dest/apt/sources.list"
: >"$dest/apt/status"
apt=(-o "Dir::Etc::sourcelist=$dest/apt/sources.list" -o Dir::Etc::sourceparts=/nonexistent
     -o APT::Sandbox::User=root
     -o "Dir::State::Lists=$dest/apt/lists" -o "Dir::Cache=$dest/apt/cache"
     -o "Dir::State::status=$dest/apt/status" -o APT::Architecture=amd64
     -o APT::Architectures::=amd64)
apt-get "${apt[@]}" -qq update ||
  { echo "unpack-release: apt-get update of $suite failed" >&2; exit 1; }
# The run-time closure, less what only maintainer scripts use.
skip='^(cdebconf|debconf|init-system-helpers|libdebian-installer4|perl-base|procps|sensible-utils|tzdata|ucf|media-types|netbase|readline-common|libtext-.*-perl|libnewt0.52|libslang2|libtextwrap1|libsystemd0|libproc2-0)$'
pkgs=$(apt-cache "${apt[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
         --no-breaks --no-replaces --no-enhances --no-pre-depends "$@" |
       grep '^[a-z0-9]' | sort -u | grep -Ev "$skip")
rm -f "$dest"/debs/*.deb
# shellcheck disable=SC2086 # a list of package names
(cd "$dest/debs" && apt-get "${apt[@]}" download -qq $pkgs >/dev/null 2>&1) ||
  { echo "unpack-release: downloading $* from $suite failed" >&2; exit 1; }
rm -rf "$dest/root"
for deb in "$dest"/debs/*.deb; do dpkg -x "$deb" "$dest/root"; done
rm -rf "$dest/extra"
mkdir -p "$dest/extra"
for p in "${extra[@]}"; do
  (cd "$dest/extra" && apt-get "${apt[@]}" download -qq "$p" >/dev/null 2>&1) ||
    echo "unpack-release: $p of $suite could not be downloaded; going on without it" >&2
done
