#!/usr/bin/env python3
"""s390x (big-endian) under qemu-user: LLVM 14's own s390x lli (scripts/setup-s390x.sh, its
libraries unpacked into one folder used as the target's root) runs
tests/fixtures/ir/stackmap_after_call.ll under qemu-s390x, debugged by gdb-multiarch with
jitmap (the host's reader plugin and commands), stopped in getppid. Frame 1 is `work` at
record 11: ten 64-bit values (callee-saved registers and stack slots), two 32-bit values in the
low halves of 64-bit registers, a pool constant and a negative constant, each with every byte
distinct, so that a value read in the host's byte order, or the wrong half of a big-endian
register, fails. GDB alone (negative control) has no `info stackmap`. GDB unwinds the frames
(LLVM's s390x CFI), and with `reader-claim auto` jitmap's own unwinder does (its CFI step:
the caller's SP 160 below the CFA), with the same values.

Usage: test_s390x.py BUILD_DIR. Exits 77 (skipped) without qemu-s390x, gdb-multiarch or the
s390x lli.
"""
import os
import shutil
import sys

import crosslib as X

X.init("test-s390x")
QEMU = shutil.which("qemu-s390x")
ROOT = os.environ.get("JITMAP_S390X_ROOT") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "jitmap", "s390x", "root")
LLI = os.path.join(ROOT, "usr", "lib", "llvm-14", "bin", "lli")


def main():
    if not QEMU or not X.GDB:
        X.skip("qemu-s390x or gdb-multiarch is missing (scripts/setup.sh installs them)")
    if not os.access(LLI, os.X_OK):
        X.skip("no s390x lli at %s (scripts/setup-s390x.sh)" % LLI)
    X.lli_after_call("s390x lli", QEMU, LLI, ["-L", ROOT], ROOT, own_unwinder=True)
    return X.summary()


if __name__ == "__main__":
    sys.exit(main())
