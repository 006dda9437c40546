#!/usr/bin/env bash
# setup-gdb18.sh: GDB 18 of Debian's next release beside the system's GDB (scripts/setup-gdb.sh 18).
exec "$(dirname "$0")/setup-gdb.sh" 18
