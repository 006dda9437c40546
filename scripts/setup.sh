#!/usr/bin/env bash
# Install the Debian packages jitmap needs to build, test and run its demo.
#   setup.sh          everything the tests use (scripts/test.sh)
#   setup.sh --demo   only what the demo needs (scripts/demo.sh): a compiler, CMake, the
#                     libraries, LLVM 14 and GDB; no LLDB, cross tools or unpacked debuggers
#   setup.sh --bench  everything, and hyperfine (bench/*.sh)
# Safe to run again: it installs only what is missing. Needs root (or sudo) on a fresh machine.
set -euo pipefail
mode=${1:-}

required=(
  build-essential cmake pkg-config python3
  libelf-dev libdwarf-dev libdw-dev elfutils
  libzstd-dev liblz4-dev liblzma-dev
  libcapstone-dev libcapstone4
  gdb
  llvm-14 llvm-14-dev
)
if [ "$mode" != --demo ]; then
  required+=(git libcmocka-dev clang-14 libclang-rt-14-dev libfuzzer-14-dev binutils
             python3-jsonschema bash-completion zstd lz4 xz-utils)
fi
# A second LLVM producer and lld (a linked Mach-O image) for the differential test, LLDB for
# the debugger tests, Node.js and a JDK for the perf map tests (tests/perfmap), Erlang/OTP's
# BEAM and patchelf (scripts/setup-python.sh) for the runtime tests (tests/runtimes), a
# debuginfod server on loopback for tests/stack/test_debuginfod.py, and for
# the AArch64 and s390x tests (tests/cross) qemu-user, gdb-multiarch and the cross compilers;
# the tests skip their cases without them.
optional=(llvm-19 lld-14 lldb-16 python3-lldb-16 nodejs openjdk-17-jdk-headless
          erlang-base patchelf debuginfod
          qemu-user gdb-multiarch gcc-aarch64-linux-gnu libc6-dev-arm64-cross
          gcc-s390x-linux-gnu libc6-dev-s390x-cross)
# npm fetches Breakpad's stock tools (scripts/setup-breakpad.sh) for tests/minidump: Debian's
# nodejs leaves it to a package of its own (NodeSource's nodejs carries it, and conflicts).
command -v npm >/dev/null || optional+=(npm)
# The benchmarks (bench/*.sh pass --bench) also time whole commands with hyperfine.
[ "$mode" = --bench ] && required+=(hyperfine)
[ "$mode" = --demo ] && optional=()

# The AArch64 and s390x tests' LLVM pieces (tests/cross: lli of each, beside the host's LLVM):
# optional too.
extras=0
[ "$mode" != --demo ] && command -v apt-get >/dev/null &&
  [ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] && extras=1
# The unpacked debuggers and CPython come from other Debian releases through apt states of
# their own (scripts/unpack-release.sh): they touch none of the system's, so they download at
# once, beside the system's own installs (most of their time is the network's). Each one's
# failure only skips its tests.
aside=()
beside() { # MESSAGE SCRIPT ARGS...: run SCRIPT in the background; at `together`, MESSAGE if it failed
  local msg=$1
  shift
  ( "$@" >/dev/null || echo "$msg" >&2 ) &
  aside+=($!)
}
together() {
  local pid
  for pid in "${aside[@]}"; do wait "$pid" || true; done
  aside=()
}
if [ $extras -eq 1 ]; then
  # Debian 13's GDB 16 and the next release's GDB 18 beside the system's, for the DAP tests
  # and the gdb16.* and gdb18.* tests.
  for v in 16 18; do
    beside "setup: GDB $v is not set up; the gdb$v.* tests are skipped" \
      "$(dirname "$0")/setup-gdb.sh" $v
  done
  "$(dirname "$0")/setup-arm64.sh" >/dev/null ||
    echo "setup: the arm64 LLVM pieces are not set up; tests that need them are skipped" >&2
  "$(dirname "$0")/setup-s390x.sh" >/dev/null ||
    echo "setup: the s390x LLVM pieces are not set up; tests that need them are skipped" >&2
fi

missing=()
for p in "${required[@]}" "${optional[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # apt-get install, quiet: without apt-utils debconf says it delays configuring, which
  # tells a user nothing.
  apt_install() {
    $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null \
      2> >(grep -v '^debconf: delaying package configuration' >&2)
  }
  # Required packages must install; optional ones may be absent from the archive.
  req_missing=()
  for p in "${missing[@]}"; do
    [[ " ${optional[*]} " == *" $p "* ]] || req_missing+=("$p")
  done
  if [ ${#req_missing[@]} -gt 0 ]; then
    apt_install "${req_missing[@]}"
  fi
  for p in "${optional[@]}"; do
    if [[ " ${missing[*]} " == *" $p "* ]]; then
      apt_install "$p" ||
        echo "setup: optional package $p not installed; tests that need it are skipped" >&2
    fi
  done
fi

# Debian 12's LLDB 19 unpacked beside LLDB 16 (python3-lldb-19 conflicts with
# python3-lldb-16), for the lldb19.* tests; after the installs, so that it fetches only what
# LLDB 16 and llvm-19 did not bring, with the package lists apt-get update read.
if [ $extras -eq 1 ]; then
  # LLDB 22 and 23 of newer releases, unpacked with their own libraries, for lldb22.* and
  # lldb23.*; trixie's CPython 3.13 (-X perf, -X perf_jit) with its debug file, for
  # runtimes.cpython (after the installs: it needs patchelf).
  for v in 22 23; do
    beside "setup: LLDB $v is not set up; the lldb$v.* tests are skipped" \
      "$(dirname "$0")/setup-lldb.sh" $v
  done
  beside "setup: CPython 3.13 is not set up; runtimes.cpython is skipped" \
    "$(dirname "$0")/setup-python.sh"
  "$(dirname "$0")/setup-lldb19.sh" >/dev/null ||
    echo "setup: LLDB 19 is not set up; the lldb19.* tests are skipped" >&2
  # Debian's Mono with mono-sgen's debug file, for runtimes.mono (the system's apt: after the
  # installs above, never beside them).
  "$(dirname "$0")/setup-mono.sh" >/dev/null ||
    echo "setup: Mono is not set up; runtimes.mono is skipped" >&2
  # Breakpad's minidump_stackwalk, minidump_dump and dump_syms (npm's minidump@0.26.0), for
  # tests/minidump (after the installs: it needs npm).
  beside "setup: Breakpad's tools are not set up; the minidump.* tests are skipped" \
    "$(dirname "$0")/setup-breakpad.sh"
fi
together
# Ruby 3.3 with YJIT built from Debian's source (scripts/setup-ruby.sh: 5-7 minutes of two
# cores the first time, nothing after), for matrix.yjit and matrix.ruby: started here and left
# to build while the project builds and the other tests run; those two wait for it (its lock).
if [ $extras -eq 1 ] && [ -z "${JITMAP_NO_RUBY:-}" ]; then
  nohup "$(dirname "$0")/setup-ruby.sh" >/dev/null 2>&1 </dev/null &
fi
