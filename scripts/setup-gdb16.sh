#!/usr/bin/env bash
# setup-gdb16.sh: Debian 13's GDB 16 beside the system's GDB (scripts/setup-gdb.sh 16).
exec "$(dirname "$0")/setup-gdb.sh" 16
