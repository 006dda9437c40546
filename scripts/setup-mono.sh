#!/usr/bin/env bash
# setup-mono.sh: Debian's Mono (6.8) for the runtime test of a Mono program (tests/runtimes):
# mono-runtime (the JIT, /usr/bin/mono-sgen, stripped), mono-mcs (the C# compiler) and
# mono-runtime-dbg (mono-sgen's separate debug file, under /usr/lib/debug/.build-id, the only
# place the JIT descriptor's symbol __jit_debug_descriptor is defined: `MONO_XDEBUG=gdb`
# registers Mono's code through GDB's JIT interface).
#
# Safe to run again (quick when done). Needs root (or sudo). Prints the path of mono; exits 1,
# saying why, if Mono could not be set up (the tests that need it are then skipped).
set -euo pipefail
me=setup-mono
pkgs=(mono-runtime mono-mcs mono-runtime-dbg)

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || { echo "$me: needs apt-get (Debian)" >&2; exit 1; }
  SUDO=
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    2> >(grep -v '^debconf: delaying package configuration' >&2) ||
    { echo "$me: could not install ${missing[*]}" >&2; exit 1; }
fi
command -v mono >/dev/null && command -v mcs >/dev/null ||
  { echo "$me: mono or mcs is missing after the install" >&2; exit 1; }
command -v mono
