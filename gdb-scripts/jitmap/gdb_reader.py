"""Load jitmap-reader.so into GDB and keep its view of the JIT entries fresh.

GDB loads one JIT reader at a time (`jit-reader-load`). The plugin keeps state that GDB
never invalidates (there is no unregister callback), so GDB's events tell it when target
memory may have changed (it then re-checks each entry before use) or the process is gone (it
forgets every entry): see plugin/jitmap-reader-api.h.

`library()` returns the ctypes handle of the loaded plugin: ctypes.CDLL on the path GDB
loaded returns that same library. The plugin is also the commands' libjitmap (native.prefer),
and `shared_process()` its process model, which the commands scan into: one parse of each
stackmap per session.

`set jitmap reader-claim unnamed|auto|never` (add_settings) chooses which JIT entries the
reader gives GDB symbols for itself ("claims"): see ReaderClaimParameter and docs/gdb.md.
"""
import ctypes
import errno
import os
import re

import gdb

from . import discovery as D
from . import native as N

RECHECK = 0
FORGET = 1

# jitmap_reader_set_claim's modes (jitmap-reader-api.h), by the names the parameter and the
# environment variable JITMAP_READER_CLAIM use.
CLAIM_MODES = {"unnamed": 2, "auto": 0, "never": 1}

_lib = None
_path = None
_connected = False
_claim_wanted = None  # a mode set while the reader was not loaded, applied when it is


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


def holds_code(pc):
    """Whether code of a JIT entry GDB registered holds `pc` (the reader keeps every entry
    GDB hands it, claimed or declined): True or False; None when the reader is not loaded.
    O(log n) in the entries, no stackmap read."""
    lib = library()
    if lib is None:
        return None
    return lib.jitmap_reader_lookup(pc & 0xFFFFFFFFFFFFFFFF, None, None, None, None) == 0


def guess(pc, sp):
    """Why the reader found the caller it gave GDB as (`pc`, `sp`) by a guess, or None."""
    lib = library()
    if lib is None or not hasattr(lib, "jitmap_reader_guess"):
        return None
    why = ctypes.create_string_buffer(256)
    if lib.jitmap_reader_guess(pc & 0xFFFFFFFFFFFFFFFF, sp & 0xFFFFFFFFFFFFFFFF, why, len(why)):
        return why.value.decode("utf-8", "replace")
    return None


def has_stackmap_at(pc):
    """Whether a JIT entry GDB registered holds `pc` and has a stackmap (read and parsed now
    if it was not yet): True or False; None when the reader is not loaded."""
    lib = library()
    if lib is None:
        return None
    sm = ctypes.c_void_p()
    rc = lib.jitmap_reader_lookup(pc & 0xFFFFFFFFFFFFFFFF, ctypes.byref(sm), None, None, None)
    return rc == 0 and bool(sm.value)


def shared_process():
    """(process, serial): the loaded reader's jitmap_process, when the commands' libjitmap is
    the plugin itself (then they scan into it); None otherwise. A process seen with another
    serial is gone (the reader was unloaded)."""
    lib = library()
    if lib is None or not hasattr(lib, "jitmap_reader_process") or N.path() != _path:
        return None
    serial = ctypes.c_uint64()
    proc = lib.jitmap_reader_process(ctypes.byref(serial))
    return (proc, serial.value) if proc else None


def path():
    """The absolute path of the plugin that jitmap.gdb loads."""
    return _path


def library_hint():
    """Where to look for libjitmap first: the tree the plugin was installed or built in."""
    if not _path:
        return None
    return os.path.dirname(os.path.dirname(os.path.abspath(_path)))


class _Stats(ctypes.Structure):
    # struct jitmap_reader_stats (jitmap-reader-api.h)
    _fields_ = [(n, ctypes.c_uint64) for n in (
        "reads", "claimed", "declined", "rejected", "replaced", "dropped", "unwinds",
        "unwind_failures", "outermost", "guesses")]


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
    if hasattr(lib, "jitmap_reader_set_arch"):  # API version 4
        lib.jitmap_reader_set_arch.restype = ctypes.c_int
        lib.jitmap_reader_set_arch.argtypes = [ctypes.c_int, ctypes.c_int]
    lib.jitmap_reader_get_claim.restype = ctypes.c_int
    lib.jitmap_reader_get_claim.argtypes = []
    lib.jitmap_reader_find_function.restype = ctypes.c_size_t
    lib.jitmap_reader_find_function.argtypes = [
        ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
    if hasattr(lib, "jitmap_reader_guess"):  # API version 5
        lib.jitmap_reader_guess.restype = ctypes.c_int
        lib.jitmap_reader_guess.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_char_p,
                                            ctypes.c_size_t]
    if hasattr(lib, "jitmap_reader_process"):  # API version 3
        lib.jitmap_reader_process.restype = ctypes.c_void_p
        lib.jitmap_reader_process.argtypes = [ctypes.POINTER(ctypes.c_uint64)]
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


def jit_objfiles_of_gdb():
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


class _InferiorMemory:
    """discovery's access object, reduced to reading the selected inferior's memory."""

    def __init__(self, inf):
        self.inf = inf

    def read(self, addr, size):
        try:
            return self.inf.read_memory(addr, size)
        except (gdb.error, gdb.MemoryError) as e:
            raise D.ReadError(str(e)) from None


def _jit_list_problem():
    """Why GDB's walk of a JIT entry list would never end, or None. The walk is libjitmap's
    (jitmap_jit_list_read: cycles found, a cap, the target's byte order)."""
    inf = gdb.selected_inferior()
    if not inf.pid:
        return None  # no process nor core: nothing registered yet
    try:
        lib = N.load(library_hint())
    except N.LibraryError:
        return None
    target = D._MemTarget(_InferiorMemory(inf))
    for desc in sorted(_descriptor_addresses()):
        err = N.Error()
        lst = lib.jitmap_jit_list_read(ctypes.byref(target.struct), desc, N.ORDER_AUTO,
                                       LIST_LIMIT, ctypes.byref(err))
        target.check()
        if not lst:
            continue  # no list GDB could walk either
        status = lib.jitmap_jit_list_status(lst).contents
        code, why = status.code, N.error_text(status)
        lib.jitmap_jit_list_free(lst)
        if code == -errno.ELOOP:
            return "the list of JIT entries at 0x%x loops back (%s)" % (desc, why)
        if code == -errno.E2BIG:
            return "the list of JIT entries at 0x%x has more than %d entries" % (desc, LIST_LIMIT)
    return None


def _invalidate(how):
    if _lib is not None:
        _lib.jitmap_reader_invalidate(how)


def _on_change(_event=None):
    _invalidate(RECHECK)


def _on_exited(_event=None):
    _invalidate(FORGET)


def _tell_arch(_event=None):
    """Tell the reader which architecture GDB debugs (jitmap_reader_set_arch): its register
    numbers are that architecture's, whatever a registered image says (gdb-multiarch debugs an
    AArch64 or s390x program with this host-built reader; an image with a wrong e_machine in
    an x86-64 process must not make the reader ask GDB for registers it does not map)."""
    objfile = getattr(_event, "new_objfile", None)
    if objfile is not None and (objfile.filename or "<").startswith("<"):
        return  # JIT code (GDB is inside its JIT event): the program's files say the arch
    lib = library()
    if lib is None or not hasattr(lib, "jitmap_reader_set_arch"):
        return
    try:
        name = gdb.selected_inferior().architecture().name()
        big = "big endian" in gdb.execute("show endian", to_string=True)
    except (gdb.error, RuntimeError, AttributeError):
        return
    arch = N.lib().jitmap_arch_from_name(name.encode())
    if arch:
        lib.jitmap_reader_set_arch(arch, int(big))


def load(plugin_path):
    """Load the plugin at PLUGIN_PATH as GDB's JIT reader (once) and hook GDB's events."""
    global _lib, _path, _connected
    _path = plugin_path
    if not os.path.exists(plugin_path):
        raise gdb.GdbError("jitmap: the reader plugin %s does not exist" % plugin_path)
    N.prefer(plugin_path)
    if not _ours_loaded(plugin_path):
        # Entries read before the plugin was loaded (a core or process opened first) stay
        # with GDB's built-in reader unless they are read again: unload and load once more.
        problem = _jit_list_problem()
        if problem:
            raise gdb.GdbError(
                "jitmap: not loading the JIT reader: %s, and GDB would hang walking it. "
                "Source jitmap.gdb before `run` to see such a program's JIT code." % problem)
        reread = bool(jit_objfiles_of_gdb())
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
    if _claim_wanted is not None:
        _lib.jitmap_reader_set_claim(CLAIM_MODES[_claim_wanted])
    _tell_arch()
    if not _connected:
        gdb.events.stop.connect(_on_change)
        gdb.events.new_objfile.connect(_tell_arch)
        gdb.events.new_objfile.connect(_on_change)
        gdb.events.memory_changed.connect(_on_change)
        gdb.events.inferior_call.connect(_on_change)
        gdb.events.exited.connect(_on_exited)
        _connected = True


def claim_mode():
    """The reader's claim mode by name ("unnamed", "auto", "never"), or None when it is not
    loaded."""
    lib = library()
    if lib is None:
        return None
    mode = lib.jitmap_reader_get_claim()
    return next((k for k, v in CLAIM_MODES.items() if v == mode), None)


class ReaderClaimParameter(gdb.Parameter):
    """Which JIT entries jitmap's reader gives GDB symbols for itself ("claims").

unnamed (the default): only entries whose functions GDB's own ELF reader would leave as
`?? ()` (function symbols that are all absolute, or in no code section), and never an entry
with DWARF. Every other entry is read by GDB itself: its names work everywhere (bt,
break NAME, info symbol, info functions), its DWARF and CFI too, and jitmap still indexes
its stackmap and unwinds the frames GDB's CFI does not cover.
auto: every entry with function symbols and no DWARF. For JITs with thousands of entries:
GDB skips reading each image with BFD, which takes registration to about half the time
(2000 LLVM objects: see bench/README.md in jitmap's sources), but GDB finds the functions of
claimed entries by address only: bt, x/i, disassemble and info line name them,
break NAME, info symbol, info functions and frame function NAME do not (break *ADDRESS
works; the reader's own lookup: jitmap.gdb_reader.function_addresses(NAME)).
never: no entry; GDB's reader names everything it can.

The mode applies to JIT entries read after it is set. Set it before `run`, `attach` or
`core` (or with JITMAP_READER_CLAIM=unnamed|auto|never in GDB's environment); for entries
already read, `jit-reader-unload` then `jit-reader-load PLUGIN` reads them all again under
the new mode."""

    set_doc = "Set which JIT entries jitmap's reader gives GDB symbols for itself."
    show_doc = "Show which JIT entries jitmap's reader gives GDB symbols for itself."

    def __init__(self):
        super().__init__("jitmap reader-claim", gdb.COMMAND_DATA, gdb.PARAM_ENUM,
                         list(CLAIM_MODES))
        self.value = claim_mode() or _claim_wanted or "unnamed"

    def get_set_string(self):
        global _claim_wanted
        lib = library()
        if lib is None:
            _claim_wanted = self.value
            return ("jitmap's reader is not loaded: reader-claim %s applies when "
                    "jitmap.gdb loads it." % self.value)
        _claim_wanted = None
        old = lib.jitmap_reader_set_claim(CLAIM_MODES[self.value])
        n = lib.jitmap_reader_num_entries()
        if old == CLAIM_MODES[self.value] or n == 0:
            return ""
        one = n == 1
        return ("jitmap: reader-claim %s applies to JIT entries read from now on; %s read "
                "before %s as %s read. To read %s again under it: jit-reader-unload, then "
                "jit-reader-load %s" % (self.value,
                                        "the entry" if one else "the %d entries" % n,
                                        "stays" if one else "stay",
                                        "it was" if one else "they were",
                                        "it" if one else "them",
                                        _path or "PLUGIN"))

    def get_show_string(self, svalue):
        current = claim_mode()
        if current is not None and current != svalue:
            self.value = svalue = current  # changed through the C API
        where = "" if current is not None else " (the reader is not loaded)"
        return "JIT entries jitmap's reader claims: %s%s." % (svalue, where)


_settings_added = False


def settings_prefixes_defined():
    """Whether `set jitmap` and `show jitmap` exist (they are defined together, here, by
    gdb_commands or by the system gdbinit script of auto-load). Asked of `help show`'s list,
    which never fails: a command that fails while GDB loads a library during `run` (where
    auto-load sources jitmap.gdb) leaves the program running under GDB's feet, and `help set
    jitmap` would describe `set VAR = EXP` whatever follows."""
    text = gdb.execute("help show", to_string=True)
    return re.search(r"^show jitmap -- ", text, re.M) is not None


def add_settings():
    """Add `set/show jitmap reader-claim`. Call after jitmap.gdb_commands is imported: it
    defines the `set jitmap` and `show jitmap` prefixes, and GDB drops the subcommands of a
    prefix that is defined again. Without it, the prefixes are defined here."""
    global _settings_added
    if _settings_added:
        return
    if not settings_prefixes_defined():
        _Prefix("set jitmap")
        _Prefix("show jitmap")
    ReaderClaimParameter()
    _settings_added = True


class _Prefix(gdb.Command):
    """jitmap's settings."""

    def __init__(self, name):
        super().__init__(name, gdb.COMMAND_DATA, prefix=True)
