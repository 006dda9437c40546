#!/usr/bin/env python3
"""unwind_seeds.py OUTDIR: seeds of fuzz_unwind (its input format is in fuzz_unwind.c), one
per function of tests/unit/test_unwind.c's hand-laid stacks: an AArch64 frameless leaf and a
frame-record function, an s390x leaf and a stmg/aghi function, an x86-64 push rbp function,
each stopped at its record."""
import os
import struct
import sys

ARCH = {"x86_64": 1, "aarch64": 2, "s390x": 4}
INNERMOST, STACKMAP_ONLY, RANGE = 8, 1 << 4, 64


def a64(*words):
    return b"".join(struct.pack("<I", w) for w in words)


NOP = 0xd503201f
SEEDS = {
    # name: (arch, control bits, stack size, record offset, code, FP's distance above SP)
    "aarch64_leaf": ("aarch64", INNERMOST | STACKMAP_ONLY, 32, 8,
                     a64(0xd10083ff, 0xf90007e9, NOP, 0x910083ff, 0xd65f03c0), 0),
    "aarch64_frame_record": ("aarch64", RANGE, 48, 0x18,
                             a64(0xa9bd7bfd, 0x910003fd, 0xa90153f3, NOP, NOP, 0x94000000, NOP),
                             0),
    "aarch64_late_save": ("aarch64", INNERMOST | STACKMAP_ONLY, 32, 0x28,
                          a64(0xd10083ff, *[NOP] * 8, 0xf90007f3, NOP), 0),
    "s390x_leaf": ("s390x", INNERMOST | STACKMAP_ONLY, 32, 0xc,
                   bytes.fromhex("a7fbffe0e310f00800240001a7290000a7fb002007fe"), 0),
    "s390x_stmg": ("s390x", RANGE | STACKMAP_ONLY, 200, 0x10,
                   bytes.fromhex("eb6ff0300024a7fbff38c0e50000003ba7290000eb6ff0f8000407fe"), 0),
    "x86_64_push_rbp": ("x86_64", RANGE, 24, 13,
                        bytes.fromhex("554889e54883ec10e80000000090c9c3"), 16),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    stack = bytes((i * 7 + 3) & 0xff for i in range(1024))
    for name, (arch, bits, size, rec, code, fp_off) in SEEDS.items():
        head = bytes([ARCH[arch] | bits]) + struct.pack("<HHHH", size // 8, rec, len(code), fp_off)
        with open(os.path.join(out, name), "wb") as f:
            f.write(head + code + stack)


if __name__ == "__main__":
    main()
