#!/usr/bin/env python3
"""no_nt_file.py CORE NEW: CORE with its NT_FILE note's type changed, written to NEW: a core
without NT_FILE, as qemu-user writes them (its files are placed by the auxiliary vector and
the dynamic linker's list, or by --exe)."""
import sys

if len(sys.argv) != 3:
    sys.exit(__doc__.splitlines()[0])
b = bytearray(open(sys.argv[1], "rb").read())
i = b.find(bytes([0x45, 0x4c, 0x49, 0x46]) + b"CORE\0")  # NT_FILE's type, then its name
if i <= 0:
    sys.exit("no_nt_file.py: %s has no NT_FILE note" % sys.argv[1])
b[i] = 0x46
open(sys.argv[2], "wb").write(b)
