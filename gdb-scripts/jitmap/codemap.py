"""Where code can be in the debugged process: libjitmap's answer (jitmap_stopped_code_at: for a
live process, its /proc/PID/maps; for a core, its segments' flags and file mappings), for the
unwinders that end a stack where a caller's PC lies where no code can be.
Below a thread's last real frame lie stack words; an unwinder that takes one for a return
address makes a frame no code lives in, and every frame after it is as false.

Debugger-neutral (no ``import gdb``): the adapter says which process or core, and gets a new
:class:`CodeMap` at each stop (a running process maps and unmaps) through :func:`for_stop`. A
core's is asked of the core the session holds open (corefile.py), not opened again.
"""
import ctypes

from . import native as N


class CodeMap:
    """The memory map of live process `pid` (a jitmap_stopped of its own, that stops nothing),
    or of `core`, the session's corefile.OpenCore (asked, never closed here)."""

    def __init__(self, pid=None, core=None):
        self.lib = N.lib()
        self.stopped = None
        self.core = core
        if pid:
            err = N.Error()
            # Nothing is stopped: the debugger holds the process already.
            opts = N.StoppedOpts(flags=N.STOPPED_NO_STOP)
            self.stopped = self.lib.jitmap_stopped_open_pid(int(pid), ctypes.byref(opts),
                                                            ctypes.byref(err))
            if not self.stopped:
                raise OSError(N.error_text(err) if err.code else "no process")
        elif core is None:
            raise OSError("no process or core")
        self._memo = {}

    def close(self):
        if self.stopped:
            self.lib.jitmap_stopped_free(self.stopped)
        self.stopped = None

    def _code_at(self, pc, buf, length, otherwise):
        """libjitmap's jitmap_stopped_code_at at `pc`."""
        pc &= 0xFFFFFFFFFFFFFFFF
        if self.core is not None:
            return self.core.code_at(pc, buf, length)
        if self.stopped:
            return self.lib.jitmap_stopped_code_at(self.stopped, pc, buf, length)
        return otherwise

    def code_at(self, pc):
        """1 when `pc` lies in an executable mapping (or a file mapping a core holds no
        segment of), 0 when it does not, negative when it cannot be told."""
        got = self._memo.get(pc)
        if got is None:
            got = self._code_at(pc, None, 0, -5)
            if len(self._memo) < 65536:
                self._memo[pc] = got
        return got

    def where(self, pc):
        """Why no code can be at `pc` (the library's words), or None when it can."""
        why = ctypes.create_string_buffer(256)
        return N.text(why.value) if self._code_at(pc, why, len(why), 1) == 0 else None

    def no_code(self, pc, exact):
        """Whether no code can be at a frame's `pc`: neither at it nor, for a return address,
        at the call before it."""
        if self.code_at(pc) != 0:
            return False
        return exact or not pc or self.code_at(pc - 1) == 0

    def missing(self, addr, size, unusable_only=True):
        """A core's reason for lacking a byte of [addr, addr + size) (corefile.OpenCore's
        missing), or None (and always for a live process)."""
        return self.core.missing(addr, size, unusable_only) if self.core is not None else None

    def build_id_at(self, pc):
        """The build ID (lowercase hex) of the file the process maps at `pc`, from its first
        page (the process's memory, or the core's copy), or None."""
        buf = (ctypes.c_uint8 * 64)()
        pc &= 0xFFFFFFFFFFFFFFFF
        if self.core is not None:
            n = self.core.build_id_at(pc, buf, len(buf))
        elif self.stopped:
            n = self.lib.jitmap_stopped_build_id_at(self.stopped, pc, buf, len(buf))
        else:
            n = 0
        return bytes(buf[:n]).hex() if n else None


class Unreadable(Exception):
    """Memory a front end cannot read, and why (read_minding)."""


def read_minding(missing, read, addr, size, errors):
    """`read(addr, size)`, a debugger's own read of the process's memory (raising one of
    `errors`), minding what libjitmap knows of a core (`missing`: a core's
    missing(addr, size, unusable_only), or None for a live process): bytes no mapped file may
    stand for are refused before the debugger reads a file in their place, and a read that
    fails gives libjitmap's reason (a small core's left-out memory, a truncated segment).
    The bytes, or Unreadable(why)."""
    why = missing(addr, size) if missing else None
    if why:
        raise Unreadable(why)
    try:
        return read(addr, size)
    except errors as e:
        why = missing(addr, size, unusable_only=False) if missing else None
        raise Unreadable(why or str(e) or "cannot read memory") from None


_cache = [None, None]  # [the stop's key, CodeMap or None]: for_stop


def for_stop(key, opener):
    """The CodeMap of the stop `key` names (a front end's key: its process and stop), kept
    while the key stays the same; when it changes the last one is closed and `opener()`
    makes the next (a CodeMap, or None; OSError: none). None for a key of None."""
    if _cache[0] != key:
        if _cache[1] is not None:
            _cache[1].close()
        _cache[0], _cache[1] = key, None
        if key is not None:
            _cache[1] = opener()
    return _cache[1]
