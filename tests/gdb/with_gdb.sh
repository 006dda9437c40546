#!/usr/bin/env bash
# with_gdb.sh VERSION COMMAND...: run a GDB test with a newer Debian release's GDB (16 or 18,
# scripts/setup-gdb.sh) instead of the system's GDB 13, through GDB_EXEC, which
# tests/gdb/lib.sh and tests/debugger/harness.py take. Exits 77 (skipped) when that GDB could
# not be set up.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
version=$1
shift
gdb=$("$top/scripts/setup-gdb.sh" "$version" 2>/dev/null) ||
  { echo "with_gdb: SKIP: GDB $version is not set up (scripts/setup-gdb.sh $version)"; exit 77; }
GDB_EXEC=$gdb exec "$@"
