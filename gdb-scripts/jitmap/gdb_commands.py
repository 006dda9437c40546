"""jitmap's commands in GDB: the adapter of :mod:`jitmap.commands` to GDB.

``import jitmap.gdb_commands`` (jitmap.gdb does it) defines the commands of the table in
commands.py with their GDB names:

  info stackmap [-json] [-raw] [-statepoint|-no-statepoint] [LEVEL]
  info stackmaps [-json] [REGEXP]
  info gc-roots [-all] [-json]
  jitmap verify [-json]
  jitmap break [-d] [ID...]
  jitmap status
  jitmap refresh

and what only GDB has: set/show jitmap statepoints auto|all|none, set/show jitmap
statepoint-ids ID,..., and the convenience functions $_stackmap(N), $_stackmap_id().

This module only implements commands.Debugger over GDB (frames, registers, memory, symbols,
breakpoints, events); what a command computes and prints is commands.py's. Every failure is
a gdb.GdbError with one clear sentence.
"""
import ctypes
import functools
import os
import re
import traceback

import gdb

from . import commands as C
from . import discovery as D
from . import model as M
from . import native as N
from . import report as R

DESCRIPTOR = R.DESCRIPTOR
HOOK = R.HOOK
SESSION = C.SESSION


# -- Errors: one sentence, never a traceback --


def _guard(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (gdb.GdbError, KeyboardInterrupt):
            raise
        except R.CommandError as e:
            raise gdb.GdbError(str(e)) from None
        except N.LibraryError as e:
            raise gdb.GdbError("jitmap: %s" % e) from None
        except gdb.MemoryError as e:
            raise gdb.GdbError("jitmap: %s" % e) from None
        except gdb.error as e:
            raise gdb.GdbError("jitmap: %s" % e) from None
        except Exception as e:
            if os.environ.get("JITMAP_DEBUG"):
                traceback.print_exc()
            raise gdb.GdbError("jitmap: internal error: %s: %s (set JITMAP_DEBUG=1 for the "
                               "traceback, and please report it)" % (type(e).__name__, e)) from None
    return wrapper


def _library_hint():
    try:
        from . import gdb_reader  # the plugin's loader, when jitmap.gdb set it up
        return gdb_reader.library_hint()
    except Exception:
        return None


def _shared_process():
    try:
        from . import gdb_reader
        return gdb_reader.shared_process()
    except Exception:
        return None


def _has_core():
    try:
        return "core dump file" in gdb.execute("info target", to_string=True).lower()
    except gdb.error:
        return False


def _core_file():
    """The core file GDB has open (`info target`), or None."""
    try:
        text = gdb.execute("info target", to_string=True)
    except gdb.error:
        return None
    m = re.search(r"core dump file:\s*`(.*)', file type", text)
    return m.group(1) if m else None


class _Core:
    """The core GDB has open, as libjitmap reads it. GDB 13 reads the bytes of a segment a
    truncated core lost (and of a writable segment it holds no bytes of) from the mapped file:
    a JIT descriptor there reads as the file's empty list, and `jitmap status` said "0 JIT
    entries" where the count is unknown. libjitmap says which bytes no file may stand for
    (jitmap_core_memory's file_unusable): reads of those fail, with its reason. And a core
    whose dynamic linker's list was lost leaves GDB without its libraries: the JIT
    descriptors its mapped files define are found from the core (NT_FILE) instead."""

    def __init__(self, path):
        self.path = path
        self.handle = None
        self._descriptors = None
        err = N.Error()
        try:
            self.handle = N.lib().jitmap_core_open(path.encode(), None, ctypes.byref(err))
        except (N.LibraryError, OSError):
            pass

    def close(self):
        if self.handle:
            N.lib().jitmap_core_free(self.handle)
            self.handle = None

    def check(self, addr, size):
        """Raise D.ReadError unless a file may stand for every byte GDB reads there."""
        if not self.handle:
            return
        lib = N.lib()
        info = N.CoreMemoryInfo()
        end = min(addr + size, 1 << 64)
        while addr < end:
            if lib.jitmap_core_memory(self.handle, addr, ctypes.byref(info)) or not info.size:
                return
            if info.source == N.CORE_MEM_NONE and info.file_unusable:
                raise D.ReadError(N.text(info.why))
            addr += info.size

    def descriptors(self):
        """[(address, file)] of the JIT descriptors the core's mapped files define (once)."""
        if self._descriptors is None:
            self._descriptors = []
            if self.handle:
                n = 64
                addrs, files = (ctypes.c_uint64 * n)(), (ctypes.c_char_p * n)()
                got = N.lib().jitmap_core_find_symbol(self.handle, DESCRIPTOR.encode(), addrs,
                                                      files, n)
                self._descriptors = [(addrs[i], N.text(files[i]) or "")
                                     for i in range(min(got, n))]
        return self._descriptors


def _real_objfiles():
    out = []
    for o in gdb.objfiles():
        name = o.filename or ""
        if os.path.isabs(name) and o.is_valid():
            out.append(name)
    return tuple(out)


def _find_descriptors():
    addrs = {}

    def add(addr):
        if addr and addr not in addrs:
            lib = gdb.current_progspace().solib_name(addr)
            addrs[addr] = os.path.basename(lib) if lib else "the executable"

    for o in gdb.objfiles():
        try:
            if not o.is_valid():
                continue
            s = o.lookup_global_symbol(DESCRIPTOR)
            if s is not None and s.is_variable:
                add(int(s.value().address))
        except (gdb.error, RuntimeError, ValueError):
            continue
    # Libraries without debug information have the minimal symbol only (libLLVM), which the
    # expression evaluator finds (one of them). GDB sets one internal "jit events" breakpoint
    # per file that has a JIT interface: when there are more of those than descriptors found,
    # ask `info variables` (complete, but ~0.1 s) for the others.
    try:
        add(int(gdb.parse_and_eval("&" + DESCRIPTOR)))
    except gdb.error:
        pass
    try:
        text = gdb.execute("maint info breakpoints", to_string=True)
        interfaces = len(re.findall(r"^-?\d+\s+jit events\s", text, re.M))
    except gdb.error:
        interfaces = -1
    if interfaces < 0 or interfaces > len(addrs) or interfaces == 0:
        try:
            text = gdb.execute("info variables ^%s$" % DESCRIPTOR, to_string=True)
        except gdb.error:
            text = ""
        for m in re.finditer(r"^0x([0-9a-f]+)\s+%s\s*$" % DESCRIPTOR, text, re.M):
            add(int(m.group(1), 16))
    return sorted(addrs.items())


def _find_objects():
    """(path, address) of every loaded file's .llvm_stackmaps (`info files`)."""
    try:
        text = gdb.execute("info files", to_string=True)
    except gdb.error:
        return []
    out = []
    exe = None
    for line in text.splitlines():
        m = re.match(r"\s*`(.*)', file type", line)
        if m:
            exe = m.group(1)
            continue
        m = re.match(r"\s*0x([0-9a-f]+) - 0x[0-9a-f]+ is \.llvm_stackmaps(?: in (.*))?$", line)
        if m:
            path = m.group(2) or exe
            if path and os.path.isfile(path):
                out.append((path, int(m.group(1), 16)))
    return out


# -- Frames --


def _frame_level(frame):
    try:
        return frame.level()
    except AttributeError:  # GDB < 11
        n = 0
        f = frame.newer()
        while f is not None:
            n += 1
            f = f.newer()
        return n


def _value_bytes(v, big):
    """The bytes of a register value, in target byte order. Vector registers (GDB shows them
    as unions of arrays) are read through their widest array of integers up to 8 bytes:
    GDB's Python cannot convert the 128-bit integer member to int."""
    t = v.type.strip_typedefs()
    n = t.sizeof
    order = "big" if big else "little"

    def as_bytes(x, size):
        return (int(x) & ((1 << (8 * size)) - 1)).to_bytes(size, order)

    if t.code in (gdb.TYPE_CODE_INT, gdb.TYPE_CODE_PTR, gdb.TYPE_CODE_BOOL, gdb.TYPE_CODE_CHAR,
                  gdb.TYPE_CODE_ENUM, gdb.TYPE_CODE_FLAGS, gdb.TYPE_CODE_FUNC) and n <= 8:
        return as_bytes(v, n)
    if t.code in (gdb.TYPE_CODE_UNION, gdb.TYPE_CODE_STRUCT):
        best = None
        for f in t.fields():
            ft = f.type.strip_typedefs()
            if ft.sizeof != n or ft.code != gdb.TYPE_CODE_ARRAY:
                continue
            et = ft.target().strip_typedefs()
            if et.code == gdb.TYPE_CODE_INT and et.sizeof <= 8 and (
                    best is None or et.sizeof > best[1].sizeof):
                best = (f.name, et, ft.range())
        if best is not None:
            name, et, (lo, hi) = best
            return b"".join(as_bytes(v[name][i], et.sizeof) for i in range(lo, hi + 1))
        for f in t.fields():
            ft = f.type.strip_typedefs()
            if ft.sizeof == n and ft.code == gdb.TYPE_CODE_INT and n <= 8:
                return as_bytes(v[f.name], n)
    raise M.Unavailable("cannot read the raw bytes of a %s register" % t)


class GdbFrame:
    """commands' frame object over a gdb.Frame."""

    def __init__(self, dbg, frame):
        self.dbg = dbg
        self.frame = frame
        self.level = _frame_level(frame)
        self.pc = frame.pc()
        self.arch = None
        self.function = None
        try:
            self.function = frame.name()
        except gdb.error:
            pass
        self.inferior = gdb.selected_inferior()

    def read_register(self, regno, name, size):
        if not name:
            raise M.Unavailable("DWARF register %d has no name on this architecture" % regno)
        try:
            v = self.frame.read_register(name)
        except ValueError:
            raise M.Unavailable("GDB has no register %s on this target" % name) from None
        except gdb.error as e:
            raise M.Unavailable(str(e)) from None
        if v.is_optimized_out:
            raise M.NotSaved()
        try:
            data = _value_bytes(v, self.dbg.big_endian)
        except gdb.error as e:
            raise M.Unavailable(str(e)) from None
        # Which registers of an outer frame to believe is libjitmap's rule; it needs to know
        # which ones the frame below saved in memory (GDB's "Saved registers").
        if self.level > 0 and name in self.dbg.saved_in_memory(self.level):
            return M.Recovered(data)
        return data

    @property
    def guessed(self):
        """Why this frame's registers are a guess (gdb_perf.frame_guess), or None."""
        from . import gdb_perf
        return gdb_perf.frame_guess(self.frame)

    def read_memory(self, addr, size):
        try:
            return self.inferior.read_memory(addr, size).tobytes()
        except (gdb.MemoryError, gdb.error, ValueError, OverflowError) as e:
            raise M.Unavailable(str(e) or "cannot read memory") from None

    def has_caller(self):
        try:
            return self.frame.older() is not None
        except gdb.error:
            return False

    def stack(self):
        sp = N.text(N.lib().jitmap_reg_name(self.arch, N.lib().jitmap_reg_sp(self.arch)))
        try:
            older = self.frame.older()
            if older is None:
                return None
            return (int(self.frame.read_register(sp)) & M.MASK64,
                    int(older.read_register(sp)) & M.MASK64)
        except (gdb.error, ValueError, TypeError):
            return None


def _insns(start, end=None, count=None):
    """[(address, length, text, bytes)] of the code from `start` (to `end` inclusive, or
    `count` instructions): GDB disassembles, the bytes are the inferior's."""
    arch = gdb.selected_inferior().architecture()
    insns = (arch.disassemble(start, end) if end is not None
             else arch.disassemble(start, count=count))
    if not insns:
        return []
    last = insns[-1]["addr"] + insns[-1]["length"]
    code = gdb.selected_inferior().read_memory(start, last - start).tobytes()
    return [(i["addr"], i["length"], i["asm"],
             code[i["addr"] - start:i["addr"] - start + i["length"]]) for i in insns]


# -- commands.Debugger over GDB --


class Gdb:
    """commands.Debugger over GDB. GDB's events say when what was read may be stale."""

    name = "gdb"

    def __init__(self):
        self.generation = 0
        self.stops = 0  # the stops the user sees (not GDB's internal ones, as at JIT registrations)
        self.big_endian = False
        self._objfiles_key = None
        self._descriptors = []
        self._objects = []
        self._saved = {}
        self._core = None  # a _Core while GDB debugs a core file

    @property
    def library_hint(self):
        return _library_hint()

    def shared_process(self):
        return _shared_process()

    # -- Events --

    def invalidate(self, *_args):
        self.generation += 1
        self._saved = {}

    def stopped(self, *_args):
        self.stops += 1
        self.invalidate()

    def files_stop_id(self):
        return self.stops

    def objfiles_changed(self, *_args):
        self._objfiles_key = None
        self.invalidate()
        _arm_hook()

    def forget(self, *_args):
        self._objfiles_key = None
        self.invalidate()
        SESSION.forget()

    # -- The process --

    def check_process(self):
        inf = gdb.selected_inferior()
        if inf is None or (inf.pid == 0 and not _has_core()):
            raise C.CommandError("jitmap: no process or core file; run or attach to the "
                                 "program, or open a core file, first")
        self._refresh_files()
        return inf.num, inf.pid

    def stop_id(self):
        return self.generation

    def forget_frames(self):
        from . import gdb_perf
        gdb_perf.refresh()
        gdb.invalidate_cached_frames()

    def live_pid(self):
        """A live process on this machine: its ID (never a command: an unwinder asks)."""
        inf = gdb.selected_inferior()
        if inf is None or not inf.pid:
            return None
        conn = getattr(inf, "connection", None)
        kind = getattr(conn, "type", None)
        if kind is not None:
            return inf.pid if kind == "native" else None
        return None if _has_core() else inf.pid

    def no_code_at(self, pc):
        """Why no code can be at an outer frame's `pc` (gdb_perf.code_map), or None."""
        from . import gdb_perf
        cm = gdb_perf.code_map()
        if cm is None or not cm.no_code(pc, False):
            return None
        return cm.where(pc) or "not in an executable mapping"

    def files_hint(self):
        """Why GDB read no file of a live process, and what to do (its executable was
        deleted since it started: GDB cannot open the path /proc/PID/exe names), or None."""
        pid = self.live_pid()
        if not pid or gdb.current_progspace().filename:
            return None
        try:
            exe = os.readlink("/proc/%d/exe" % pid)
        except OSError:
            return None
        if not exe.endswith(" (deleted)"):
            return None
        return ("GDB read no file of process %d: its executable %s was deleted since it "
                "started (an upgrade?); `file /proc/%d/exe` reads the one it runs, and "
                "`jitmap status` then finds what it registered" % (pid, exe[:-10], pid))

    def _refresh_files(self):
        key = _real_objfiles()
        if key == self._objfiles_key:
            return
        self._objfiles_key = key
        core = _core_file()
        if self._core is not None and (core is None or core != self._core.path):
            self._core.close()
            self._core = None
        if core is not None and self._core is None:
            self._core = _Core(core)
        self._descriptors = _find_descriptors()
        if self._core is not None:
            # Those of files GDB could not load (named by the file, as jitmap-stack does).
            known = {addr for addr, _ in self._descriptors}
            self._descriptors += sorted((addr, os.path.basename(path))
                                        for addr, path in self._core.descriptors()
                                        if addr not in known)
        self._objects = _find_objects()
        try:
            self.big_endian = "big endian" in gdb.execute("show endian", to_string=True)
        except gdb.error:
            self.big_endian = False

    def jit_descriptors(self):
        return list(self._descriptors)

    def loaded_objects(self):
        return list(self._objects)

    def read(self, addr, size):
        if size == 0:
            return b""
        if self._core is not None:
            self._core.check(addr, size)
        try:
            return gdb.selected_inferior().read_memory(addr, size)
        except (gdb.MemoryError, gdb.error, ValueError, OverflowError) as e:
            raise D.ReadError(str(e) or "cannot read memory at 0x%x" % addr) from None

    def arch_name(self):
        try:
            return gdb.selected_inferior().architecture().name()
        except (gdb.error, AttributeError):
            return ""

    def saved_in_memory(self, level):
        """Names of the registers of frame `level` that the frame below it saved in memory
        (GDB's `info frame` of level - 1, "Saved registers")."""
        if level in self._saved:
            return self._saved[level]
        names = set()
        try:
            text = gdb.execute("info frame level %d" % (level - 1), to_string=True)
            block = text.split("Saved registers:", 1)
            if len(block) == 2:
                names = set(re.findall(r"(\w+) at 0x[0-9a-f]+", block[1]))
        except gdb.error:
            pass
        self._saved[level] = names
        return names

    # -- Frames --

    def selected_frame(self):
        try:
            return GdbFrame(self, gdb.selected_frame())
        except gdb.error:
            raise C.CommandError("jitmap: no frame is selected (the program is not "
                                 "running?)") from None

    def frame(self, level):
        try:
            f = gdb.newest_frame()
            for _ in range(level):
                f = f.older()
                if f is None:
                    break
        except gdb.error:
            f = None
        if f is None or level < 0:
            raise C.CommandError("jitmap: there is no frame %d" % level)
        return GdbFrame(self, f)

    def frames(self, limit):
        try:
            f = gdb.newest_frame()
        except gdb.error:
            return
        n = 0
        while f is not None and n < limit:
            yield GdbFrame(self, f)
            n += 1
            try:
                f = f.older()
            except gdb.error:
                break

    # -- Code and symbols --

    def disassemble(self, addr, count):
        try:
            return _insns(addr, count=count)
        except (gdb.error, gdb.MemoryError, AttributeError):
            return []

    def function_at(self, addr):
        """(start, name) of the function GDB knows at addr, or None."""
        try:
            block = gdb.block_for_pc(addr)
            while block is not None and block.function is None:
                block = block.superblock
            if block is not None:
                return block.start, block.function.name
        except (gdb.error, RuntimeError):
            pass
        return None

    # -- Breakpoints --

    def break_at(self, pc):
        try:
            return gdb.Breakpoint("*0x%x" % pc).number
        except gdb.error as e:
            raise C.CommandError(str(e)) from None

    def watch_registrations(self):
        global _hook_wanted
        _hook_wanted = True
        _arm_hook()


GDB = Gdb()
_hook = None
_hook_wanted = False  # `jitmap break` asked for the hook; set once a file defines HOOK


def _arm_hook():
    """The registration hook, once a loaded file defines HOOK. Before `run` no file does
    (the JIT's library is not loaded): a breakpoint made then would be pending, and GDB says
    'Function "__jit_debug_register_code" not defined.' (for an internal breakpoint too) in
    the middle of jitmap's own answer; new_objfile calls this again when a library loads,
    before any of its code runs."""
    global _hook
    if not _hook_wanted or (_hook is not None and _hook.is_valid()):
        return
    try:
        gdb.parse_and_eval("&" + HOOK)  # minimal symbols too (no debug information)
    except gdb.error:
        return
    try:
        _hook = _Hook()
    except gdb.error:
        _hook = None


class _Hook(gdb.Breakpoint):
    """On __jit_debug_register_code: stops (then resolves and continues) only when a watched
    record ID appears at a new PC; otherwise invisible."""

    def __init__(self):
        super().__init__(HOOK, internal=True)
        self.silent = True
        self.commands = ("silent\npython import jitmap.gdb_commands as _jm; _jm.registered()\n"
                         "continue")

    def stop(self):
        try:
            GDB.invalidate()
            return bool(SESSION.watched) and bool(SESSION.unresolved(SESSION.get(GDB)))
        except Exception:
            return False


def registered():
    """The JIT registered code with a watched record ID (the hook stopped): set the
    breakpoints."""
    try:
        lines = SESSION.resolve(GDB)
    except R.CommandError as e:
        lines = ["warning: jitmap: while resolving `jitmap break`: %s" % e]
    for line in lines:
        gdb.write(line + "\n")


# -- The commands of the table --


def _complete_flags(flags, text, word):
    """Options completing the last token of `text`. GDB breaks words at '-', so `word` may
    be the token without its dash: return what replaces `word`."""
    token = "" if not text or text[-1:].isspace() else text.split()[-1]
    word = word or ""
    if token and not token.startswith("-"):
        return []
    cut = len(token) - len(word)
    if cut < 0:
        return []
    return [f[cut:] for f in sorted(flags) if f.startswith(token)]


def _argv(arg, name):
    try:
        return gdb.string_to_argv(arg or "")
    except Exception:
        raise gdb.GdbError("%s: cannot parse the arguments" % name) from None


def _define(command):
    """A gdb.Command class for one command of the table."""
    category = {"stack": gdb.COMMAND_STACK,
                "breakpoints": gdb.COMMAND_BREAKPOINTS}[command.category]
    name = command.name("gdb")
    flags = command.flags("gdb")

    def __init__(self):
        gdb.Command.__init__(self, name, category)

    def complete(self, text, word):
        return _complete_flags(flags, text, word) if flags else []

    @_guard
    def invoke(self, arg, from_tty):
        out = command.run(GDB, _argv(arg, name))
        for line in out.lines:
            gdb.write(line + "\n")
        for line in out.warnings:
            gdb.write(line + "\n", gdb.STDERR)

    cls = type("Command_" + command.key.replace("-", "_"), (gdb.Command,),
               {"__doc__": command.help("gdb"), "__init__": __init__, "complete": complete,
                "invoke": invoke})
    return cls


class Jitmap(gdb.Command):
    """jitmap: stackmaps of JIT code (verify, break, status, refresh).

Usage: jitmap SUBCOMMAND ..."""

    def __init__(self):
        super().__init__("jitmap", gdb.COMMAND_STACK, prefix=True)

    def invoke(self, arg, from_tty):
        gdb.execute("help jitmap", from_tty)


# -- Settings --


class _SetJitmap(gdb.Command):
    """Settings of jitmap's stackmap commands."""

    def __init__(self):
        super().__init__("set jitmap", gdb.COMMAND_DATA, prefix=True)


class _ShowJitmap(gdb.Command):
    """Settings of jitmap's stackmap commands."""

    def __init__(self):
        super().__init__("show jitmap", gdb.COMMAND_DATA, prefix=True)


class _StatepointsParam(gdb.Parameter):
    """Which stackmap records are decoded as statepoints.

auto: records whose shape is a statepoint's (three leading constants: calling convention,
flags, deopt count, then deopt values and base/derived pairs); all: every record (and say
which do not fit); none: no record. `set jitmap statepoint-ids` flips it for some IDs."""

    set_doc = "Set which stackmap records are decoded as statepoints."
    show_doc = "Show which stackmap records are decoded as statepoints."

    def __init__(self):
        super().__init__("jitmap statepoints", gdb.COMMAND_DATA, gdb.PARAM_ENUM,
                         list(C.Settings.MODES))
        self.value = SESSION.settings.mode

    def get_set_string(self):
        SESSION.settings.mode = self.value or "auto"
        return ""

    def get_show_string(self, svalue):
        return "Stackmap records decoded as statepoints: %s." % svalue


class _StatepointIdsParam(gdb.Parameter):
    """Record IDs that flip `set jitmap statepoints`: under auto or all they are never decoded
as statepoints, under none they are. A comma-separated list of numbers; empty for none."""

    set_doc = "Set the record IDs that flip the statepoint decision."
    show_doc = "Show the record IDs that flip the statepoint decision."

    def __init__(self):
        super().__init__("jitmap statepoint-ids", gdb.COMMAND_DATA, gdb.PARAM_STRING)
        self.value = ""

    def get_set_string(self):
        try:
            SESSION.settings.ids = C.Settings.parse_ids(self.value)
        except ValueError:
            bad = self.value
            self.value = ",".join(str(x) for x in SESSION.settings.ids)
            raise gdb.GdbError("jitmap statepoint-ids: %r is not a list of numbers" % bad)
        return ""

    def get_show_string(self, svalue):
        return "Record IDs that flip the statepoint decision: %s." % (svalue or "none")


# -- Convenience functions --


class StackmapValue(gdb.Function):
    """$_stackmap(N): the value of location N of the stackmap record at the selected frame.

Usage: print $_stackmap(N)

An integer of the location's size (signed), or an address for a Direct location. An error
when the value is unavailable (the reason is given) or the frame is not at a record."""

    def __init__(self):
        super().__init__("_stackmap")

    @_guard
    def invoke(self, index):
        try:
            n = int(index)
        except (gdb.error, ValueError):
            raise gdb.GdbError("$_stackmap: the argument is a location number") from None
        kind, size, v = C.location_value(GDB, n)
        if kind == "direct":
            return gdb.Value(v).cast(gdb.lookup_type("void").pointer())
        size = size if size in (1, 2, 4, 8) else 8
        tname = {1: "signed char", 2: "short", 4: "int", 8: "long"}[size]
        return gdb.Value(M.signed(v, size)).cast(gdb.lookup_type(tname))


class StackmapId(gdb.Function):
    """$_stackmap_id(): the ID of the stackmap record at the selected frame (-1 if none).

Usage: print $_stackmap_id()"""

    def __init__(self):
        super().__init__("_stackmap_id")

    @_guard
    def invoke(self):
        rid = C.record_id(GDB)
        if rid is None:
            return gdb.Value(-1).cast(gdb.lookup_type("long"))
        return gdb.Value(rid).cast(gdb.lookup_type("unsigned long"))


# -- Registration --


def _connect():
    ev = gdb.events
    ev.stop.connect(GDB.stopped)
    ev.cont.connect(GDB.invalidate)
    ev.memory_changed.connect(GDB.invalidate)
    ev.inferior_call.connect(GDB.invalidate)
    ev.new_objfile.connect(GDB.objfiles_changed)
    ev.clear_objfiles.connect(GDB.forget)
    ev.exited.connect(GDB.forget)


_registered = False


def register():
    """Define the commands (once)."""
    global _registered
    if _registered:
        return
    _registered = True
    Jitmap()  # the prefix, before its subcommands
    for c in C.commands("gdb"):
        _define(c)()
    _SetJitmap()
    _ShowJitmap()
    _StatepointsParam()
    _StatepointIdsParam()
    StackmapValue()
    StackmapId()
    _connect()
    from . import gdb_frames  # bt full, MI and DAP locals of JIT frames
    gdb_frames.register()
    from . import gdb_perf  # the frames of runtimes that write perf maps
    gdb_perf.register()


register()
