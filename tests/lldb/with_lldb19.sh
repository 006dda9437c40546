#!/usr/bin/env bash
# with_lldb19.sh COMMAND...: run an LLDB test with Debian 12's LLDB 19 (scripts/setup-lldb19.sh)
# instead of the system's LLDB 16, through LLDB_EXEC, which tests/debugger/harness.py takes.
# Exits 77 (skipped) when LLDB 19 could not be set up.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
lldb19=$("$top/scripts/setup-lldb19.sh" 2>/dev/null) || { echo "with_lldb19: SKIP: LLDB 19 is not set up (scripts/setup-lldb19.sh)"; exit 77; }
LLDB_EXEC=$lldb19 exec "$@"
