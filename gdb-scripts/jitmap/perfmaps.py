"""Perf maps and jitdump files, through libjitmap (jitmap/perfmap.h): the JIT code of runtimes
that tell Linux perf where it is (Node.js --perf-basic-prof, CPython -X perf, the JVM, ...)
and never register it with GDB.

Debugger-neutral (no ``import gdb``). A :class:`PerfMaps` is the perf map set of one libjitmap
process (``jitmap_process_perfmap``): what it reads, the process model answers with
(``jitmap_process_code_at``), and it lives as long as that process.
"""
import ctypes

from . import native as N


def text(b):
    return b.decode("utf-8", "replace") if b is not None else None


class PerfMaps:
    def __init__(self, process):
        """`process`: a jitmap_process handle (kept alive by the caller)."""
        self.lib = N.lib()
        self.handle = self.lib.jitmap_process_perfmap(process)
        if not self.handle:
            raise MemoryError("jitmap_process_perfmap failed")

    def add_file(self, path):
        """Read a perf map or jitdump (by its content): how many code objects it names, or
        raise OSError with the library's reason."""
        err = N.Error()
        rc = self.lib.jitmap_perfmap_add_file(self.handle, path.encode(), ctypes.byref(err))
        if rc < 0:
            reason = text(err.reason.value) if rc == -22 and err.reason.value else None
            raise OSError(-rc, reason or text(self.lib.jitmap_strerror(rc)), path)
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
