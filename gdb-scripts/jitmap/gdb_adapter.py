"""GDB as jitmap sees it: :class:`commands.Debugger` over GDB, and what the rest of jitmap's
GDB side asks of GDB's process, at the bottom of it.

The commands (gdb_commands.py), the frame filter (gdb_frames.py) and the unwinders
(gdb_perf.py) import this module; it imports none of them. Here: the one :data:`GDB` (frames,
registers, memory, symbols, breakpoints, staleness by GDB's events: gdb_commands.py connects
them), the core file GDB has open as libjitmap reads it (the session's, opened once:
corefile.py), the hook on the JIT's registrations (`jitmap break`), where code can be in the
process or core (codemap.py, once per stop) and which frames are guesses. What a command
computes and prints is commands.py's.
"""
import os
import re
import traceback

import gdb

from . import codemap
from . import discovery as D
from . import gdb_reader
from . import model as M
from . import native as N
from . import report as R
from . import session as S

DESCRIPTOR = R.DESCRIPTOR
HOOK = R.HOOK
SESSION = S.SESSION


def _debug():
    if os.environ.get("JITMAP_DEBUG"):
        traceback.print_exc()


# -- The process: the plugin's, a core file, JIT descriptors, loaded files --


def _library_hint():
    try:  # the plugin's loader, when jitmap.gdb set it up
        return gdb_reader.library_hint()
    except Exception:
        return None


def _shared_process():
    try:
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
        """Why this frame's registers are a guess (frame_guess), or None."""
        return frame_guess(self.frame)

    def read_memory(self, addr, size):
        core = self.dbg._core
        try:
            return codemap.read_minding(
                core.missing if core is not None else None,
                lambda a, n: self.inferior.read_memory(a, n).tobytes(), addr, size,
                (gdb.MemoryError, gdb.error, ValueError, OverflowError))
        except codemap.Unreadable as e:
            raise M.Unavailable(str(e)) from None

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
        self._core = None  # the session's corefile.OpenCore while GDB debugs a core file
        # Run by forget_frames: gdb_perf.py's refresh, which registers its unwinder once perf
        # maps exist (gdb_perf.py imports this module, so it hands its function in).
        self.forget_hooks = []

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

    def core_closed(self):
        """The core GDB debugged is closed (the process exited: there was none)."""
        self._core = None
        SESSION.close_core()

    # -- The process --

    def check_process(self):
        inf = gdb.selected_inferior()
        if inf is None or (inf.pid == 0 and not _has_core()):
            raise S.CommandError("jitmap: no process or core file; run or attach to the "
                                 "program, or open a core file, first")
        self._refresh_files()
        return inf.num, inf.pid

    def stop_id(self):
        return self.generation

    def open_core(self, path):
        """Debug the core file at `path` (`core-file`): GDB's lines about it."""
        try:
            out = gdb.execute("core-file %s" % _quoted(path), to_string=True)
        except gdb.error as e:
            raise S.CommandError(str(e)) from None
        return [line for line in out.splitlines() if line.strip()]

    def forget_frames(self):
        for hook in self.forget_hooks:
            hook()
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

    def core_file(self):
        """The core file GDB debugs, or None (never a command while GDB's connection says
        what it debugs: an unwinder asks)."""
        inf = gdb.selected_inferior()
        conn = getattr(inf, "connection", None) if inf is not None else None
        kind = getattr(conn, "type", None)
        if kind is not None and kind != "core":
            return None
        if self._core is not None and self._core.handle:
            return self._core.path
        return _core_file()

    def no_code_at(self, pc):
        """Why no code can be at an outer frame's `pc` (code_map), or None."""
        cm = code_map()
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
        # The core GDB has open, as libjitmap reads it: opened once for the session (another
        # core closes the one before). GDB 13 reads the bytes of a segment a truncated core
        # lost (and of a writable segment it holds no bytes of) from the mapped file: a JIT
        # descriptor there reads as the file's empty list, and `jitmap status` said "0 JIT
        # entries" where the count is unknown. libjitmap says which bytes no file may stand
        # for: reads of those fail, with its reason. And a core whose dynamic linker's list was
        # lost leaves GDB without its libraries: the JIT descriptors its mapped files define
        # are found from the core (NT_FILE) instead.
        core = _core_file()
        self._core = SESSION.core(core)
        self._descriptors = _find_descriptors()
        if self._core is not None:
            # Those of files GDB could not load (named by the file, as jitmap-stack does).
            known = {addr for addr, _ in self._descriptors}
            self._descriptors += sorted((addr, os.path.basename(path))
                                        for addr, path in self._core.descriptors(DESCRIPTOR)
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
        why = self._core.missing(addr, size) if self._core is not None else None
        if why:  # no file may stand for these bytes
            raise D.ReadError(why)
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
            raise S.CommandError("jitmap: no frame is selected (the program is not "
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
            raise S.CommandError("jitmap: there is no frame %d" % level)
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
            raise S.CommandError(str(e)) from None

    def watch_registrations(self):
        global _hook_wanted
        _hook_wanted = True
        _arm_hook()


GDB = Gdb()


# -- The hook on the JIT's registrations (`jitmap break`) --

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
        self.commands = ("silent\npython import jitmap.gdb_adapter as _jm; _jm.registered()\n"
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


# -- Where code can be (codemap.py), once per stop --


def _open_code_map():
    pid = GDB.live_pid()
    # A core's is the session's open core, asked (never opened again here).
    core = None if pid else GDB.core_file()
    core = SESSION.core(core) if core else None
    if pid or core is not None:
        try:
            return codemap.CodeMap(pid=pid, core=core)
        except OSError:
            _debug()
    return None


def code_map():
    """The selected inferior's codemap.CodeMap for this stop, or None (a remote target, or
    nothing to read); never raises."""
    try:
        inf = gdb.selected_inferior()
        if inf is None:
            return None
        return codemap.for_stop((inf.num, inf.pid, GDB.generation), _open_code_map)
    except Exception:
        _debug()
        return None


# -- Which frames are guesses --
#
# A frame's registers are only as good as the steps below it. Two kinds of step are guesses:
# one jitmap's perf-map unwinder took without a proof (gdb_perf.py notes it here, by the
# caller it gave GDB), and any GDB took through a module whose file is another build than the
# one the process maps (a package upgraded since the process started, a core read where other
# files are): GDB unwinds it with that file's CFI and symbols. Neither makes GDB say anything;
# jitmap states no value of a frame above one (model.py's `guessed`).

_guesses = [None, {}]      # [stop key, {(caller pc, caller sp): why}]
_file_checked = [None, {}]  # [stop key, {objfile name: why it is another build, or None}]


def _stop_key():
    inf = gdb.selected_inferior()
    return (inf.num, inf.pid, GDB.generation) if inf is not None else None


def note_guess(caller_pc, caller_sp, why):
    key = _stop_key()
    if _guesses[0] != key:
        _guesses[0], _guesses[1] = key, {}
    _guesses[1][(caller_pc, caller_sp)] = why


def _objfile_of(pc):
    """The gdb.Objfile GDB reads for the module holding `pc`: a shared library's, else the
    executable's (a file-backed PC in neither is not GDB's to unwind), or None."""
    find = getattr(gdb.current_progspace(), "objfile_for_address", None)  # GDB 14
    if find is not None:
        return find(pc)
    name = gdb.solib_name(pc) or gdb.current_progspace().filename
    return next((o for o in gdb.objfiles() if o.filename == name), None) if name else None


def other_build(pc):
    """Why the file GDB reads for the module holding `pc` is not the one the process maps
    (their build IDs differ), or None (the same, or it cannot be told)."""
    try:
        key = _stop_key()
        if _file_checked[0] != key:
            _file_checked[0], _file_checked[1] = key, {}
        objfile = _objfile_of(pc)
        if objfile is None or not objfile.filename:
            return None
        memo = _file_checked[1]
        if objfile.filename not in memo:
            memo[objfile.filename] = None
            ours = getattr(objfile, "build_id", None)
            cm = code_map()
            theirs = cm.build_id_at(pc) if cm is not None else None
            if ours and theirs and ours.lower() != theirs:
                memo[objfile.filename] = (
                    "GDB reads %s, another build than the one the process maps (build ID %s;"
                    " the process's %s)" % (objfile.filename, ours, theirs))
        return memo[objfile.filename]
    except Exception:
        _debug()
        return None


def frame_guess(frame):
    """Why `frame`'s registers are a guess, or None: a step below it was (see above)."""
    try:
        key = _stop_key()
        guesses = _guesses[1] if _guesses[0] == key else {}
        f = frame
        while f is not None:
            newer = f.newer()
            if newer is None:
                return None
            sp = None
            try:
                sp = int(f.read_register("sp"))
            except (gdb.error, ValueError):
                pass
            why = guesses.get((f.pc(), sp)) or (gdb_reader.guess(f.pc(), sp)
                                                if sp is not None else None)
            if why:
                return why
            # The frame below f was unwound by GDB through its module's file.
            at = newer.pc() - (1 if newer.level() > 0 else 0)
            why = other_build(at)
            if why:
                return "frame %d was unwound through a file that is not the process's: %s" % (
                    newer.level(), why)
            f = newer
        return None
    except Exception:
        _debug()
        return None


def _quoted(path):
    """A file name as GDB's file commands take it (spaces, quotes and backslashes escaped)."""
    return "".join("\\" + ch if ch in " \t'\"\\" else ch for ch in path)
