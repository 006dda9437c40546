"""Perf maps and jitdump files, through libjitmap (jitmap/perfmap.h): the JIT code of runtimes
that tell Linux perf where it is (Node.js --perf-basic-prof, CPython -X perf, the JVM, ...)
and never register it with GDB.

Debugger-neutral (no ``import gdb``). A :class:`PerfMaps` is one set of such files (a
``jitmap_perfmap``): a process model's (``jitmap_process_perfmap``, which then answers with
their code) or one of its own. :func:`frame_pointer_step` unwinds a frame in that code as
libjitmap does (its frame-pointer method).
"""
import ctypes
import os

from . import native as N


def text(b):
    return b.decode("utf-8", "replace") if b is not None else None


class PerfMaps:
    def __init__(self, process=None):
        """`process`: a jitmap_process handle (kept alive by the caller) whose perf maps these
        are; None: a set of its own, freed by :meth:`close`."""
        self.lib = N.lib()
        self.owned = process is None
        self.handle = (self.lib.jitmap_perfmap_new() if self.owned else
                       self.lib.jitmap_process_perfmap(process))
        if not self.handle:
            raise MemoryError("cannot make a perf map set")

    def close(self):
        if self.owned and self.handle:
            self.lib.jitmap_perfmap_free(self.handle)
        self.handle = None

    def add_file(self, path):
        """Read a perf map or jitdump (by its content): how many code objects it names, or
        raise OSError with the library's reason."""
        err = N.Error()
        rc = self.lib.jitmap_perfmap_add_file(self.handle, path.encode(), ctypes.byref(err))
        if rc < 0:
            reason = text(err.reason.value) if rc == -22 and err.reason.value else None
            raise OSError(-rc, reason or os.strerror(-rc), path)
        return rc

    def add_process(self, pid):
        """A live process's own perf map and mapped jitdump files: how many were found."""
        rc = self.lib.jitmap_perfmap_add_process(self.handle, int(pid))
        if rc < 0:
            raise OSError(-rc, text(self.lib.jitmap_strerror(rc)))
        return rc

    def lookup(self, addr):
        """{name, lo, hi, origin, source, line, file, file_line} of the code at `addr`, or
        None."""
        sym = N.PerfmapSym()
        if self.lib.jitmap_perfmap_lookup(self.handle, addr & 0xFFFFFFFFFFFFFFFF, ctypes.byref(sym)):
            return None
        return {"name": text(sym.name), "lo": sym.lo, "hi": sym.hi, "origin": text(sym.origin),
                "source": text(sym.source), "line": sym.line, "file": text(sym.file),
                "file_line": sym.file_line}

    def code_at(self, pc, outer):
        """lookup() of a frame's code: an outer frame's PC is a return address, which may lie
        just past its call's code object, so the byte before it is looked up."""
        return self.lookup(pc - 1 if outer and pc else pc)

    def __len__(self):
        """How many files were added."""
        return self.lib.jitmap_perfmap_num_files(self.handle)

    def files(self):
        """[(path, code objects)] in the order added."""
        out = []
        n = N.c_size()
        for i in range(self.lib.jitmap_perfmap_num_files(self.handle)):
            path = self.lib.jitmap_perfmap_file(self.handle, i, ctypes.byref(n))
            out.append((text(path), n.value))
        return out

    def problems(self):
        return [text(self.lib.jitmap_perfmap_problem(self.handle, k))
                for k in range(self.lib.jitmap_perfmap_num_problems(self.handle))]


class Unavailable(Exception):
    """A frame the frame-pointer chain cannot unwind: str() says why."""


def frame_pointer_step(arch, pc, regs, read_memory, innermost):
    """The caller of the frame at `pc` with registers `regs` ({DWARF number: value}: the stack
    and frame pointers at least) by the frame-pointer chain, with libjitmap's checks
    (jitmap_unwind_step, its frame-pointer method alone): (caller's pc, {DWARF number:
    value} of the caller's registers it knows, this frame's CFA). `read_memory(addr, n)`
    returns bytes or raises. Raises Unavailable with the library's reason."""
    lib = N.lib()
    fr = N.FrameRegs()
    fr.pc = pc
    for regno, value in regs.items():
        if 0 <= regno < N.UNWIND_MAX_REGS and value is not None:
            fr.reg[regno] = value & 0xFFFFFFFFFFFFFFFF
            fr.known[regno // 64] |= 1 << (regno % 64)
    code = N.UnwindCode(arch=arch, is_innermost=bool(innermost),
                        methods=1 << N.UNWIND_FRAME_POINTER)

    def read_mem(_ctx, addr, buf, length, why, why_len):
        try:
            data = bytes(read_memory(addr, length))
            if len(data) != length:
                raise ValueError("short read")
            ctypes.memmove(buf, data, length)
            return 0
        except Exception as e:
            msg = (str(e) or type(e).__name__).encode("utf-8", "replace")[:max(why_len - 1, 0)]
            ctypes.memmove(why, msg + b"\0", len(msg) + 1)
            return -14  # -EFAULT

    mem = N.READ_MEM(read_mem)
    target = N.Target(None, N.READ_REG(0), mem)
    out = N.UnwindResult()
    why = ctypes.create_string_buffer(512)
    rc = lib.jitmap_unwind_step(ctypes.byref(code), ctypes.byref(fr), ctypes.byref(target),
                                ctypes.byref(out), why, len(why))
    if rc:
        raise Unavailable(text(why.value) or text(lib.jitmap_strerror(rc)))
    caller = {r: out.caller.reg[r] for r in range(N.UNWIND_MAX_REGS)
              if (out.caller.known[r // 64] >> (r % 64)) & 1}
    return out.caller.pc, caller, out.cfa
