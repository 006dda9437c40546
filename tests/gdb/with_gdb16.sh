#!/usr/bin/env bash
# with_gdb16.sh COMMAND...: run a GDB test with Debian 13's GDB 16 (scripts/setup-gdb16.sh)
# instead of the system's GDB 13, through GDB_EXEC, which tests/gdb/lib.sh and
# tests/debugger/harness.py take. Exits 77 (skipped) when GDB 16 could not be set up.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
gdb16=$("$top/scripts/setup-gdb16.sh" 2>/dev/null) || { echo "with_gdb16: SKIP: GDB 16 is not set up (scripts/setup-gdb16.sh)"; exit 77; }
GDB_EXEC=$gdb16 exec "$@"
