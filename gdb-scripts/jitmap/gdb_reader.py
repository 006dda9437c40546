"""Load jitmap-reader.so into GDB and keep its view of the JIT entries fresh.

GDB loads one JIT reader at a time (`jit-reader-load`). The plugin keeps state that GDB
never invalidates (there is no unregister callback), so GDB's events tell it when target
memory may have changed (it then re-checks each entry before use) or the process is gone (it
forgets every entry): see plugin/jitmap-reader-api.h.

`library()` returns the ctypes handle of the loaded plugin for the commands that read its
stackmap index: ctypes.CDLL on the path GDB loaded returns that same library.
"""
import ctypes
import os
import re

import gdb

RECHECK = 0
FORGET = 1

_lib = None
_path = None
_connected = False


def library():
    """The plugin as a ctypes.CDLL, or None when jitmap.gdb has not loaded it."""
    return _lib if _lib is not None and _lib.jitmap_reader_loaded() else None


def function_addresses(name):
    """The start addresses of the JIT functions called NAME that the reader knows, including
    those GDB cannot find by name because the reader claimed their entry."""
    lib = library()
    if lib is None:
        return []
    starts = (ctypes.c_uint64 * 64)()
    n = lib.jitmap_reader_find_function(name.encode(), starts, 64)
    return [starts[i] for i in range(min(n, 64))]


def path():
    """The absolute path of the plugin that jitmap.gdb loads."""
    return _path


class _Stats(ctypes.Structure):
    # struct jitmap_reader_stats (jitmap-reader-api.h)
    _fields_ = [(n, ctypes.c_uint64) for n in (
        "reads", "claimed", "declined", "rejected", "replaced", "dropped", "unwinds",
        "unwind_failures")]


def stats():
    """The reader's counters as a dict, or None when it is not loaded."""
    lib = library()
    s = _Stats()
    if lib is None or lib.jitmap_reader_get_stats(ctypes.byref(s)):
        return None
    return {name: getattr(s, name) for name, _ in _Stats._fields_}


def stats_text():
    """The counters as one line of key=value pairs ("not loaded" when the reader is not)."""
    s = stats()
    if s is None:
        return "not loaded"
    return " ".join("%s=%d" % kv for kv in s.items())


def _open(path, mode=0):
    lib = ctypes.CDLL(path, mode=mode)
    lib.jitmap_reader_loaded.restype = ctypes.c_int
    lib.jitmap_reader_loaded.argtypes = []
    lib.jitmap_reader_invalidate.restype = ctypes.c_int
    lib.jitmap_reader_invalidate.argtypes = [ctypes.c_int]
    lib.jitmap_reader_last_error.restype = ctypes.c_char_p
    lib.jitmap_reader_last_error.argtypes = []
    lib.jitmap_reader_num_entries.restype = ctypes.c_size_t
    lib.jitmap_reader_num_entries.argtypes = []
    lib.jitmap_reader_get_stats.restype = ctypes.c_int
    lib.jitmap_reader_get_stats.argtypes = [ctypes.POINTER(_Stats)]
    lib.jitmap_reader_index.restype = ctypes.c_void_p
    lib.jitmap_reader_index.argtypes = []
    lib.jitmap_reader_set_claim.restype = ctypes.c_int
    lib.jitmap_reader_set_claim.argtypes = [ctypes.c_int]
    lib.jitmap_reader_find_function.restype = ctypes.c_size_t
    lib.jitmap_reader_find_function.argtypes = [
        ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
    lib.jitmap_reader_lookup.restype = ctypes.c_int
    lib.jitmap_reader_lookup.argtypes = [
        ctypes.c_uint64, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_char_p),
        ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint64)]
    return lib


def _ours_loaded(path):
    """Whether GDB's loaded JIT reader is the plugin at PATH."""
    try:
        lib = _open(path, os.RTLD_NOLOAD)
    except OSError:
        return False
    return bool(lib.jitmap_reader_loaded())


def _jit_objfiles_of_gdb():
    """JIT entries that GDB's built-in ELF reader has taken (BFD names them <in-memory@...>)."""
    return [o for o in gdb.objfiles() if (o.filename or "").startswith("<in-memory@")]


# GDB walks the whole entry list when a reader is loaded (and on attach or core load), with
# no bound and no cycle check: a list that loops hangs it for good. A walk this long is one.
LIST_LIMIT = 1000000


def _descriptor_addresses():
    """Where each objfile's __jit_debug_descriptor is: GDB 13 walks the list of every one."""
    addrs = set()
    try:  # the one with debug info, if any (`info variables` shows no address for it)
        addrs.add(int(gdb.parse_and_eval("(unsigned long) &__jit_debug_descriptor")))
    except gdb.error:
        pass
    try:
        text = gdb.execute("info variables -q ^__jit_debug_descriptor$", to_string=True)
    except gdb.error:
        text = ""
    for m in re.finditer(r"^(0x[0-9a-f]+) +__jit_debug_descriptor$", text, re.M):
        addrs.add(int(m.group(1), 16))
    return addrs


def _jit_list_problem():
    """Why GDB's walk of a JIT entry list would never end, or None."""
    inf = gdb.selected_inferior()
    if not inf.pid:
        return None  # no process nor core: nothing registered yet
    try:
        ptr = int(gdb.parse_and_eval("sizeof (void *)"))
        order = "big" if "big endian" in gdb.execute("show endian", to_string=True) else "little"
    except gdb.error:
        return None
    for desc in sorted(_descriptor_addresses()):
        try:
            cur = int.from_bytes(bytes(inf.read_memory(desc + 8 + ptr, ptr)), order)
        except (gdb.error, gdb.MemoryError):
            continue
        seen = set()
        while cur:
            if cur in seen:
                return ("the list of JIT entries at 0x%x loops back to 0x%x after %d entries"
                        % (desc, cur, len(seen)))
            if len(seen) >= LIST_LIMIT:
                return "the list of JIT entries at 0x%x has more than %d entries" % (desc, LIST_LIMIT)
            seen.add(cur)
            try:
                cur = int.from_bytes(bytes(inf.read_memory(cur, ptr)), order)
            except gdb.MemoryError:
                break  # GDB stops there with an error of its own
    return None


def _invalidate(how):
    if _lib is not None:
        _lib.jitmap_reader_invalidate(how)


def _on_change(_event=None):
    _invalidate(RECHECK)


def _on_exited(_event=None):
    _invalidate(FORGET)


def load(plugin_path):
    """Load the plugin at PLUGIN_PATH as GDB's JIT reader (once) and hook GDB's events."""
    global _lib, _path, _connected
    _path = plugin_path
    if not os.path.exists(plugin_path):
        raise gdb.GdbError("jitmap: the reader plugin %s does not exist" % plugin_path)
    if not _ours_loaded(plugin_path):
        # Entries read before the plugin was loaded (a core or process opened first) stay
        # with GDB's built-in reader unless they are read again: unload and load once more.
        problem = _jit_list_problem()
        if problem:
            raise gdb.GdbError(
                "jitmap: not loading the JIT reader: %s, and GDB would hang walking it. "
                "Source jitmap.gdb before `run` to see such a program's JIT code." % problem)
        reread = bool(_jit_objfiles_of_gdb())
        try:
            gdb.execute("jit-reader-load " + plugin_path, to_string=True)
            if reread:
                gdb.execute("jit-reader-unload", to_string=True)
                gdb.execute("jit-reader-load " + plugin_path, to_string=True)
        except gdb.error as e:
            if "already loaded" in str(e):
                raise gdb.GdbError(
                    "jitmap: another JIT reader is loaded; run `jit-reader-unload`, "
                    "then source jitmap.gdb again") from None
            raise gdb.GdbError("jitmap: cannot load %s: %s" % (plugin_path, e)) from None
    _lib = _open(plugin_path)
    if not _connected:
        gdb.events.stop.connect(_on_change)
        gdb.events.new_objfile.connect(_on_change)
        gdb.events.memory_changed.connect(_on_change)
        gdb.events.inferior_call.connect(_on_change)
        gdb.events.exited.connect(_on_exited)
        _connected = True
