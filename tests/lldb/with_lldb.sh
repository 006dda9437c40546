#!/usr/bin/env bash
# with_lldb.sh VERSION COMMAND...: run an LLDB test with another LLDB instead of the system's
# LLDB 16, through LLDB_EXEC, which tests/debugger/harness.py takes: 19 is Debian 12's
# (scripts/setup-lldb19.sh), 22 and 23 newer releases' (scripts/setup-lldb.sh). Exits 77
# (skipped) when that LLDB could not be set up.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
version=$1
shift
case $version in
  19) setup=("$top/scripts/setup-lldb19.sh") ;;
  *) setup=("$top/scripts/setup-lldb.sh" "$version") ;;
esac
lldb=$("${setup[@]}" 2>/dev/null) ||
  { echo "with_lldb: SKIP: LLDB $version is not set up (${setup[*]##*/})"; exit 77; }
LLDB_EXEC=$lldb exec "$@"
