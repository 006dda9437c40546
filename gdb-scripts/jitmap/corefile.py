"""The core file a debugging session reads, as libjitmap reads it: one ``jitmap_stopped``
(stopped.h), opened once for the session and asked by everything that needs the core.

Debugger-neutral (no ``import gdb``, no ``import lldb``). The session (session.py) holds the
:class:`OpenCore` of the core its debugger debugs, opened at the first need and closed when
the debugger's core changes or the session ends; the adapters (their memory reads and JIT
descriptors), the perf maps (the JIT files a core carries: perfmaps.py) and the map of where
code can be (codemap.py) ask it rather than open the file again. A core is tens of megabytes
to gigabytes, and each open reads its notes and maps its segments: once is enough.
"""
import ctypes

from . import native as N

MASK64 = 0xFFFFFFFFFFFFFFFF


class OpenCore:
    """The core file at `path`, opened by libjitmap; OSError (with the library's reason) when it
    cannot be. `flags`: jitmap_stopped_opts.flags (N.STOPPED_NO_FILES: the files the core maps
    are never opened)."""

    def __init__(self, path, flags=0):
        self.path = path
        self.lib = N.lib()
        err = N.Error()
        opts = N.StoppedOpts(flags=flags)
        self.handle = self.lib.jitmap_stopped_open_core(path.encode(), ctypes.byref(opts),
                                                        ctypes.byref(err))
        if not self.handle:
            raise OSError(err.code and -err.code, N.error_text(err) or "cannot open the core",
                          path)
        self._descriptors = {}

    def close(self):
        """Free the core; what asks it after answers as if nothing were known."""
        if self.handle:
            self.lib.jitmap_stopped_free(self.handle)
        self.handle = None

    def thread_ids(self):
        """The IDs of the core's threads, in its note order (the thread that dumped it first)."""
        if not self.handle:
            return []
        n = self.lib.jitmap_stopped_num_threads(self.handle)
        return [self.lib.jitmap_stopped_thread(self.handle, i).contents.tid for i in range(n)]

    def code_at(self, pc, why, why_len):
        """jitmap_stopped_code_at (1, 0 with `why`, negative: unknown)."""
        if not self.handle:
            return -5  # -EIO: closed, unknown
        return self.lib.jitmap_stopped_code_at(self.handle, pc & MASK64, why, why_len)

    def build_id_at(self, addr, out, length):
        """jitmap_stopped_build_id_at: the length of the ID written to `out`, or 0."""
        if not self.handle:
            return 0
        return self.lib.jitmap_stopped_build_id_at(self.handle, addr & MASK64, out, length)

    def missing(self, addr, size, unusable_only=True):
        """Why the core lacks a byte of [addr, addr + size): the first byte no mapped file may
        stand for (a truncated segment, a small core's left-out memory, a writable segment not
        dumped: a debugger that reads the file there reads a wrong value), or, with
        unusable_only False, that the core does not hold at all; None when it holds them (or a
        file may), and when the core is closed."""
        if not self.handle:
            return None
        info = N.StoppedMemoryInfo()
        addr &= MASK64
        end = min(addr + size, 1 << 64)
        while addr < end:
            if self.lib.jitmap_stopped_memory(self.handle, addr, ctypes.byref(info)) or \
                    not info.size:
                return None
            if info.source == N.STOPPED_MEM_NONE and (info.file_unusable or not unusable_only):
                return N.text(info.why)
            addr += info.size
        return None

    def descriptors(self, symbol):
        """[(address, file)] of the definitions of `symbol` (a JIT descriptor) in the files
        the core maps, found once."""
        if symbol not in self._descriptors:
            got = []
            if self.handle:
                n = 64
                addrs, files = (ctypes.c_uint64 * n)(), (ctypes.c_char_p * n)()
                k = self.lib.jitmap_stopped_find_symbol(self.handle, symbol.encode(), addrs,
                                                        files, n)
                got = [(addrs[i], N.text(files[i]) or "") for i in range(min(k, n))]
            self._descriptors[symbol] = got
        return self._descriptors[symbol]

    def add_jit_files(self, perfmap):
        """Add the perf maps and jitdump files the core carries (jitmap-core-handler's notes)
        to the jitmap_perfmap `perfmap`: how many; OSError on failure. The core must outlive
        the map's answers (the session drops its perf maps before it closes a core)."""
        if not self.handle:
            return 0
        rc = self.lib.jitmap_perfmap_add_core(perfmap, self.handle)
        if rc < 0:
            raise OSError(-rc, N.strerror(rc))
        return rc
