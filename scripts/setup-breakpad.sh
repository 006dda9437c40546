#!/usr/bin/env bash
# setup-breakpad.sh: Breakpad's stock tools (minidump_stackwalk, minidump_dump, dump_syms), for
# the tests that read jitmap-minidump's dumps and symbol files as crash pipelines do
# (tests/minidump). They come prebuilt for linux-x64 in the npm registry's package `minidump`
# 0.26.0 (electron/node-minidump, MIT; Breakpad's own license is in its source tree, which the
# package ships too): `npm pack` fetches the tarball only (`npm install` would run its
# preinstall script, which builds Breakpad), its sha1 is checked, and package/bin/linux-x64/
# is copied into JITMAP_BREAKPAD (default ~/.cache/jitmap/breakpad) with the package's
# LICENSE.md. The binaries need only libstdc++, libgcc_s, libc and libm; there is no
# linux-arm64 build (on AArch64 this exits 1: the tests are skipped).
#
# Safe to run again (quick when done: nothing is fetched) and at once (a lock). Prints the
# folder as its last line; exits 1, saying why, if it could not be set up (no npm, no network,
# another tarball than the one checked), and the tests that need it are then skipped.
set -euo pipefail
me=setup-breakpad
version=0.26.0
sha1=a977510d92ad35b2a8217fc53b2abaf4d6f1404a
tools=(minidump_stackwalk minidump_dump dump_syms)
dest=${JITMAP_BREAKPAD:-${XDG_CACHE_HOME:-$HOME/.cache}/jitmap/breakpad}
mkdir -p "$dest"
exec 9>"$dest/.lock"
flock 9 2>/dev/null || true

works() { # the three tools are there, from this tarball, and run here
  local t
  [ "$(cat "$dest/.sha1" 2>/dev/null)" = "$sha1" ] || return 1
  for t in "${tools[@]}"; do [ -x "$dest/$t" ] || return 1; done
  local usage
  usage=$("$dest/minidump_stackwalk" -h 2>&1 || true)
  [[ $usage == *"Usage: minidump_stackwalk"* ]] || return 1
  usage=$("$dest/dump_syms" 2>&1 || true)  # (its usage exits 1)
  [[ $usage == *"Usage: dump_syms"* ]]
}

if ! works; then
  [ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] ||
    { echo "$me: npm's minidump@$version ships Breakpad's tools for linux-x64 only" \
        "(this is $(uname -s)-$(uname -m))" >&2; exit 1; }
  command -v npm >/dev/null ||
    { echo "$me: needs npm (Node.js's package manager) to fetch minidump@$version" >&2; exit 1; }
  for tool in tar sha1sum; do
    command -v $tool >/dev/null || { echo "$me: needs $tool" >&2; exit 1; }
  done
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  # (its own npm cache: nothing of the user's is read or written)
  (cd "$tmp" && npm pack --loglevel=error --cache "$tmp/npm-cache" "minidump@$version" \
     >"$tmp/pack.out" 2>"$tmp/pack.err") ||
    { echo "$me: npm pack minidump@$version failed (no network, or no registry?):" \
        "$(grep -v -e 'complete log' -e '^npm error$' "$tmp/pack.err" | head -n 2 |
           tr '\n' ' ')" >&2
      exit 1; }
  tgz=$tmp/minidump-$version.tgz
  [ -f "$tgz" ] || { echo "$me: npm pack wrote no $(basename "$tgz")" >&2; exit 1; }
  got=$(sha1sum "$tgz" | awk '{print $1}')
  [ "$got" = "$sha1" ] ||
    { echo "$me: minidump-$version.tgz has sha1 $got, not $sha1: not the tarball checked" >&2
      exit 1; }
  tar -xzf "$tgz" -C "$tmp" package/LICENSE.md "${tools[@]/#/package/bin/linux-x64/}" ||
    { echo "$me: minidump-$version.tgz has no package/bin/linux-x64/ tools" >&2; exit 1; }
  rm -f "$dest/.sha1"
  for t in "${tools[@]}"; do
    install -m 0755 "$tmp/package/bin/linux-x64/$t" "$dest/$t.new"
    mv -f "$dest/$t.new" "$dest/$t"
  done
  install -m 0644 "$tmp/package/LICENSE.md" "$dest/LICENSE.md"
  echo "$sha1" >"$dest/.sha1"
  works || { echo "$me: Breakpad's tools from minidump@$version do not run here" \
               "(they need libstdc++)" >&2; exit 1; }
fi
echo "$dest"
