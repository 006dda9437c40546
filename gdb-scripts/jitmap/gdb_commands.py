"""jitmap's GDB commands: stackmap records, deopt state and GC roots of JIT frames.

``import jitmap.gdb_commands`` (jitmap.gdb does it) defines:

  info stackmap [-json] [-raw] [-statepoint|-no-statepoint] [LEVEL]
  info stackmaps [-json] [REGEXP]
  info gc-roots [-all] [-json]
  jitmap verify [-json]
  jitmap break [-d] [ID...]
  jitmap status
  jitmap refresh
  set/show jitmap statepoints auto|all|none, set/show jitmap statepoint-ids ID,...
  $_stackmap(N), $_stackmap_id()

This module only adapts GDB (frames, registers, memory, symbols, events, commands); finding,
decoding and formatting live in the debugger-neutral modules of the package (discovery,
stackmaps, model, format) and in libjitmap. Inferior data is never trusted: discovery caps
every count and size, and every failure is a gdb.GdbError with one clear sentence.
"""
import functools
import os
import re
import traceback

import gdb

from . import discovery as D
from . import format as F
from . import model as M
from . import native as N
from . import report as R

MAX_FRAMES = 10000  # frames walked by `info gc-roots -all` and `jitmap verify`
DESCRIPTOR = "__jit_debug_descriptor"
HOOK = "__jit_debug_register_code"


# -- Errors: one sentence, never a traceback --


def _guard(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (gdb.GdbError, KeyboardInterrupt):
            raise
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


def _library():
    hint = None
    try:
        from . import gdb_reader  # the plugin's loader, when jitmap.gdb set it up
        hint = gdb_reader.library_hint()
    except Exception:
        hint = None
    return N.load(hint)


# -- The process, as discovery sees it --


def _inferior():
    inf = gdb.selected_inferior()
    if inf is None or (inf.pid == 0 and not _has_core()):
        raise gdb.GdbError("jitmap: no process or core file; run or attach to the program, "
                           "or open a core file, first")
    return inf


def _has_core():
    try:
        return "core dump file" in gdb.execute("info target", to_string=True).lower()
    except gdb.error:
        return False


class GdbAccess:
    """discovery's access object over GDB: memory, descriptors and loaded files."""

    def __init__(self, state):
        self.state = state
        self.inferior = gdb.selected_inferior()

    def read(self, addr, size):
        if size == 0:
            return b""
        try:
            return self.inferior.read_memory(addr, size)
        except (gdb.MemoryError, gdb.error, ValueError, OverflowError) as e:
            raise D.ReadError(str(e) or "cannot read memory at 0x%x" % addr) from None

    def jit_descriptors(self):
        return self.state.descriptors()

    def loaded_objects(self):
        return self.state.loaded_objects()


def _real_objfiles():
    out = []
    for o in gdb.objfiles():
        name = o.filename or ""
        if os.path.isabs(name) and o.is_valid():
            out.append(name)
    return tuple(out)


class State:
    """What jitmap knows about the selected process between two stops."""

    def __init__(self):
        self.discovery = D.Discovery()
        self.catalog = None
        self.dirty = True
        self.generation = 0
        self._objfiles_key = None
        self._descriptors = []
        self._objects = []
        self._saved = {}
        self._process = None
        self.big_endian = False

    def invalidate(self, *_args):
        self.dirty = True
        self._saved = {}

    def forget(self, *_args):
        self.discovery.flush()
        self.catalog = None
        self.dirty = True
        self._objfiles_key = None
        self._saved = {}

    def objfiles_changed(self, *_args):
        self._objfiles_key = None
        self.invalidate()

    # -- Symbols and files, recomputed when the set of loaded files changes --

    def _refresh_files(self):
        key = _real_objfiles()
        if key == self._objfiles_key:
            return
        self._objfiles_key = key
        self._descriptors = self._find_descriptors()
        self._objects = self._find_objects()
        try:
            self.big_endian = "big endian" in gdb.execute("show endian", to_string=True)
        except gdb.error:
            self.big_endian = False

    def _find_descriptors(self):
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
        # Libraries without debug information have the minimal symbol only (libLLVM), which
        # the expression evaluator finds (one of them). GDB sets one internal "jit events"
        # breakpoint per file that has a JIT interface: when there are more of those than
        # descriptors found, ask `info variables` (complete, but ~0.1 s) for the others.
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

    def _find_objects(self):
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

    def descriptors(self):
        return list(self._descriptors)

    def loaded_objects(self):
        return list(self._objects)

    # -- The catalog --

    def get(self):
        """The catalog for the current stop (scanning when something may have changed)."""
        _library()
        inf = _inferior()
        process = (inf.num, inf.pid)
        if process != self._process:
            self.forget()
            self._process = process
        self._refresh_files()
        if self.dirty or self.catalog is None:
            self.catalog = self.discovery.scan(GdbAccess(self))
            self.dirty = False
            self.generation += 1
            self._saved = {}
        return self.catalog

    def problems(self, limit=20):
        """What went wrong reading the process, at most `limit` sentences (then a count)."""
        return R.problems(self.catalog, limit)

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


STATE = State()


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
    """model's frame object over a gdb.Frame."""

    def __init__(self, frame, arch):
        self.frame = frame
        self.level = _frame_level(frame)
        self.pc = frame.pc()
        self.arch = arch
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
            data = _value_bytes(v, STATE.big_endian)
        except gdb.error as e:
            raise M.Unavailable(str(e)) from None
        # Which registers of an outer frame to believe is libjitmap's rule; it needs to know
        # which ones the frame below saved in memory (GDB's "Saved registers").
        if self.level > 0 and name in STATE.saved_in_memory(self.level):
            return M.Recovered(data)
        return data

    def read_memory(self, addr, size):
        try:
            return self.inferior.read_memory(addr, size).tobytes()
        except (gdb.MemoryError, gdb.error, ValueError, OverflowError) as e:
            raise M.Unavailable(str(e) or "cannot read memory") from None


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


def _call_ends_at(record_pc, ret, arch):
    """Whether the code from record_pc is one call sequence whose call returns to `ret`."""
    if not 0 < ret - record_pc <= R.CALL_WINDOW:
        return False, None
    try:
        insns = _insns(record_pc, ret - 1)
    except (gdb.error, gdb.MemoryError, AttributeError):
        return False, None
    return R.call_sequence(insns, record_pc, ret, arch)


def _selected_frame():
    try:
        return gdb.selected_frame()
    except gdb.error:
        raise gdb.GdbError("jitmap: no frame is selected (the program is not running?)") from None


def _frame_by_level(level):
    f = gdb.newest_frame()
    for _ in range(level):
        f = f.older()
        if f is None:
            raise gdb.GdbError("jitmap: there is no frame %d" % level)
    return f


def _statepoint_setting():
    mode = {"auto": N.STATEPOINT_AUTO, "all": N.STATEPOINT_ALL,
            "none": N.STATEPOINT_NONE}[_StatepointsParam.instance.value or "auto"]
    return mode, tuple(_StatepointIdsParam.ids())


def _match(catalog, frame):
    level = _frame_level(frame)
    return M.find(catalog, frame.pc(), level > 0, _call_ends_at)


def _frame_object(catalog, frame, raw=False, statepoints=None):
    arch = _arch_of(catalog, frame.pc())
    gf = GdbFrame(frame, arch)
    match = M.find(catalog, gf.pc, gf.level > 0, _call_ends_at)
    return M.frame_object(gf, match, raw, statepoints or _statepoint_setting())


def _arch_of(catalog, pc):
    sm = catalog.stackmap_for_pc(pc)
    if sm is not None and sm.arch:
        return sm.arch
    try:
        name = gdb.selected_inferior().architecture().name()
    except (gdb.error, AttributeError):
        name = ""
    return {"i386:x86-64": N.ARCH_X86_64, "aarch64": N.ARCH_AARCH64}.get(name, N.ARCH_X86_64)


def _warn_problems(catalog):
    for line in R.warnings(STATE.problems(), "jitmap status"):
        gdb.write(line + "\n", gdb.STDERR)


def _no_stackmaps_error():
    return gdb.GdbError(R.no_stackmaps_message(STATE.problems(), STATE.descriptors(),
                                               STATE.loaded_objects()))


# -- Arguments --


def _parse(arg, flags, name, max_args=None):
    """(set of flags given, [other arguments]); unknown -options are errors."""
    try:
        argv = gdb.string_to_argv(arg or "")
    except Exception:
        raise gdb.GdbError("%s: cannot parse the arguments" % name) from None
    got, rest = set(), []
    for a in argv:
        if a.startswith("-") and not re.match(r"^-\d+$", a):
            if a not in flags:
                raise gdb.GdbError("%s: unknown option %s (options: %s)" % (
                    name, a, ", ".join(sorted(flags))))
            got.add(a)
        else:
            rest.append(a)
    if max_args is not None and len(rest) > max_args:
        raise gdb.GdbError("%s: too many arguments: %s" % (name, " ".join(rest[max_args:])))
    return got, rest


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


# -- info stackmap --


class InfoStackmap(gdb.Command):
    """Show the stackmap record at a frame: each live value's location and value.

Usage: info stackmap [-json] [-raw] [-statepoint | -no-statepoint] [LEVEL]

The record describes the selected frame (or frame LEVEL): frame 0 at its PC, an outer frame
at its return address (stackmaps and statepoints after calls), or at the start of the call
sequence that returns there (patchpoints). For each location: index, kind, where (register
such as rbx, or [rsp+16], rbp-8, a constant), size and value. Statepoints also show their
calling convention, flags, deopt values and GC roots (base, derived, derived - base);
patchpoints their live-out registers. A value that cannot be known (a caller-saved register
in an outer frame, memory missing from a core) is shown as unavailable, with the reason.
A frame that is not at a record is an error that names the nearest records and how far.

  -json            print one JSON object (see docs/commands.md); a frame without a record
                   gives "record": null with "error" and "nearest"
  -raw             also show each location's raw fields (kind, size, DWARF register, offset)
  -statepoint      decode the record as a statepoint even if its shape says otherwise
  -no-statepoint   show the record's locations without statepoint decoding
"""

    FLAGS = {"-json", "-raw", "-statepoint", "-no-statepoint"}

    def __init__(self):
        super().__init__("info stackmap", gdb.COMMAND_STACK)

    def complete(self, text, word):
        return _complete_flags(self.FLAGS, text, word)

    @_guard
    def invoke(self, arg, from_tty):
        flags, rest = _parse(arg, self.FLAGS, "info stackmap", 1)
        if "-statepoint" in flags and "-no-statepoint" in flags:
            raise gdb.GdbError("info stackmap: -statepoint and -no-statepoint exclude each other")
        frame = _selected_frame()
        if rest:
            try:
                frame = _frame_by_level(int(rest[0], 0))
            except ValueError:
                raise gdb.GdbError("info stackmap: LEVEL must be a frame number, not %r" % rest[0]) from None
        catalog = STATE.get()
        if not catalog.stackmaps:
            raise _no_stackmaps_error()
        sp = _statepoint_setting()
        if "-statepoint" in flags:
            sp = (N.STATEPOINT_ALL, ())
        elif "-no-statepoint" in flags:
            sp = (N.STATEPOINT_NONE, ())
        obj = _frame_object(catalog, frame, "-raw" in flags, sp)
        if "-json" in flags:
            gdb.write(F.to_json(obj) + "\n")
            return
        if obj["record"] is None:
            raise gdb.GdbError(obj["error"])
        gdb.write(F.frame_text(obj, "-raw" in flags) + "\n")


# -- info stackmaps --


class InfoStackmaps(gdb.Command):
    """List the stackmaps of the program: functions and their records (ID, PC, kind).

Usage: info stackmaps [-json] [REGEXP]

With REGEXP, only functions whose name matches it (Python regular expression, searched).
Stackmaps come from the JIT entries registered through __jit_debug_descriptor and from the
.llvm_stackmaps sections of loaded files. Kinds: statepoint (by its shape), patchpoint (has
live-out registers), stackmap (anything else)."""

    FLAGS = {"-json"}

    def __init__(self):
        super().__init__("info stackmaps", gdb.COMMAND_STACK)

    def complete(self, text, word):
        return _complete_flags(self.FLAGS, text, word)

    @_guard
    def invoke(self, arg, from_tty):
        flags, rest = _parse(arg, self.FLAGS, "info stackmaps", 1)
        try:
            rx = re.compile(rest[0]) if rest else None
        except re.error as e:
            raise gdb.GdbError("info stackmaps: bad regular expression: %s" % e) from None
        catalog = STATE.get()
        listing = R.listing(catalog, rx, _statepoint_setting())
        problems = STATE.problems()
        if "-json" in flags:
            gdb.write(F.to_json({"stackmaps": listing, "problems": problems}) + "\n")
            return
        if not listing:
            if rx is not None and catalog.stackmaps:
                raise gdb.GdbError("info stackmaps: no function matches %s" % rest[0])
            raise _no_stackmaps_error()
        for line in R.listing_text(listing):
            gdb.write(line + "\n")
        _warn_problems(catalog)


# -- info gc-roots --


def _frames(limit=MAX_FRAMES):
    f = gdb.newest_frame()
    n = 0
    while f is not None and n < limit:
        yield f
        n += 1
        try:
            f = f.older()
        except gdb.error:
            break


class InfoGcRoots(gdb.Command):
    """Show the GC roots of this frame, or of every frame on the stack.

Usage: info gc-roots [-all] [-json]

What a moving collector would scan and update at the statepoints on the stack: for each
(base, derived) pair of a statepoint record, the frame, the slot (a stack address, or a
register), the base and derived pointers and derived - base; and the gc allocas. Without
-all, the selected frame only. Frames in stackmap functions that are not at a record are
listed as such (a collector could not scan them)."""

    FLAGS = {"-all", "-json"}

    def __init__(self):
        super().__init__("info gc-roots", gdb.COMMAND_STACK)

    def complete(self, text, word):
        return _complete_flags(self.FLAGS, text, word)

    @_guard
    def invoke(self, arg, from_tty):
        flags, _ = _parse(arg, self.FLAGS, "info gc-roots", 0)
        catalog = STATE.get()
        if not catalog.stackmaps:
            raise _no_stackmaps_error()
        frames = list(_frames()) if "-all" in flags else [_selected_frame()]
        try:
            answer = R.gc_roots([_frame_object(catalog, f) for f in frames], "-all" in flags)
        except R.CommandError as e:
            raise gdb.GdbError(str(e)) from None
        if "-json" in flags:
            gdb.write(F.to_json(answer) + "\n")
            return
        for line in R.gc_roots_text(answer, "-all" in flags):
            gdb.write(line + "\n")


# -- jitmap prefix --


class Jitmap(gdb.Command):
    """jitmap: stackmaps of JIT code (verify, break, status, refresh).

Usage: jitmap SUBCOMMAND ..."""

    def __init__(self):
        super().__init__("jitmap", gdb.COMMAND_STACK, prefix=True)

    def invoke(self, arg, from_tty):
        gdb.execute("help jitmap", from_tty)


class JitmapStatus(gdb.Command):
    """Show where jitmap looks: its library, the JIT descriptors, entries and problems.

Usage: jitmap status"""

    def __init__(self):
        super().__init__("jitmap status", gdb.COMMAND_STACK)

    @_guard
    def invoke(self, arg, from_tty):
        _parse(arg, set(), "jitmap status", 0)
        _library()
        catalog = STATE.get()
        for line in R.status_lines(N.path(), STATE.descriptors(), STATE.loaded_objects(), catalog,
                                   STATE.problems()):
            gdb.write(line + "\n")


class JitmapRefresh(gdb.Command):
    """Forget what jitmap has read from the process, and read it again when next needed.

Usage: jitmap refresh"""

    def __init__(self):
        super().__init__("jitmap refresh", gdb.COMMAND_STACK)

    @_guard
    def invoke(self, arg, from_tty):
        _parse(arg, set(), "jitmap refresh", 0)
        STATE.forget()


# -- jitmap verify --


def _function_at(addr):
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


def _disassemble(addr, count):
    try:
        return _insns(addr, count=count)
    except (gdb.error, gdb.MemoryError, AttributeError):
        return []


class JitmapVerify(gdb.Command):
    """Cross-check the stackmaps against the code and the live frames.

Usage: jitmap verify [-json]

Checks:
  unrelocated      every function address is set (not 0) in the section read from memory
  pc-in-function   each record's PC lies in its function (by the code's symbols)
  register         every register number is a register of the architecture
  frame-size       for frames on the stack at a record: the function's stack size matches
                   the frame the unwinder computed (CFA - SP)
  stack-slot       for those frames: stack locations lie inside the frame [SP, CFA)
  patch-shadow     a call sequence starting at a record does not run over the next record
With -json, one object: {"records_checked": N, "problems": [{"function", "record", "pc",
"check", "detail"}]}."""

    FLAGS = {"-json"}

    def __init__(self):
        super().__init__("jitmap verify", gdb.COMMAND_STACK)

    def complete(self, text, word):
        return _complete_flags(self.FLAGS, text, word)

    @_guard
    def invoke(self, arg, from_tty):
        flags, _ = _parse(arg, self.FLAGS, "jitmap verify", 0)
        catalog = STATE.get()
        if not catalog.stackmaps:
            raise _no_stackmaps_error()
        obj = R.verify(catalog, _function_at, _disassemble, self._frames(catalog))
        if "-json" in flags:
            gdb.write(F.to_json(obj) + "\n")
            return
        for line in R.verify_text(obj):
            gdb.write(line + "\n")

    @staticmethod
    def _frames(catalog):
        """report.VerifyFrame for each frame that has a caller."""
        for f in _frames():
            try:
                match = _match(catalog, f)
            except gdb.error:
                continue
            if not match.hits:
                continue
            older = f.older()
            if older is None:
                continue

            arch = _arch_of(catalog, f.pc())
            sp = N.text(N.lib().jitmap_reg_name(arch, N.lib().jitmap_reg_sp(arch)))

            def stack(f=f, older=older, sp=sp):
                try:
                    return (int(f.read_register(sp)) & M.MASK64,
                            int(older.read_register(sp)) & M.MASK64)
                except (gdb.error, ValueError, TypeError):
                    return None

            yield R.VerifyFrame(GdbFrame(f, arch), match, stack)


# -- jitmap break --


class _Hook(gdb.Breakpoint):
    """On __jit_debug_register_code: stops (then resolves and continues) only when a watched
    record ID appears at a new PC; otherwise invisible."""

    def __init__(self):
        super().__init__(HOOK, internal=True)
        self.silent = True
        self.commands = ("silent\npython import jitmap.gdb_commands as _jm; _jm.BREAKS.resolve(announce=True)\n"
                         "continue")

    def stop(self):
        try:
            STATE.invalidate()
            return bool(BREAKS.unresolved())
        except Exception:
            return False


class Breaks:
    def __init__(self):
        self.watched = {}  # id -> set of PCs with a breakpoint
        self.hook = None

    def unresolved(self):
        if not self.watched:
            return []
        catalog = STATE.get()
        out = []
        for rid, pcs in self.watched.items():
            new = {}
            for sm, rec in catalog.find_id(rid):
                pc = sm.record_pc(rec)
                fn = sm.record_function(rec)
                if pc not in pcs and pc not in new and fn is not None and fn.address:
                    new[pc] = sm.function_name(rec)
            out += [(rid, pc, name) for pc, name in sorted(new.items())]
        return out

    def resolve(self, announce=False):
        made = []
        for rid, pc, fname in self.unresolved():
            bp = gdb.Breakpoint("*0x%x" % pc)
            self.watched[rid].add(pc)
            made.append((rid, pc, fname, bp.number))
        for rid, pc, fname, num in made:
            gdb.write("jitmap: record %d at 0x%x (%s): breakpoint %d\n" % (rid, pc, fname or "?", num))
        return made

    def ensure_hook(self):
        if self.hook is not None and self.hook.is_valid():
            return
        try:
            self.hook = _Hook()
        except gdb.error:
            self.hook = None


BREAKS = Breaks()


class JitmapBreak(gdb.Command):
    """Break at every PC of stackmap record ID, also in JIT code registered later.

Usage: jitmap break ID...
       jitmap break -d ID...   stop watching these IDs (their breakpoints stay: use `delete`)
       jitmap break            list the watched IDs

A breakpoint is set at each PC that has a record with that ID (several functions may share
an ID). While an ID is watched, jitmap checks each new JIT registration (a breakpoint on
__jit_debug_register_code that stays invisible unless a watched ID appears) and adds
breakpoints at its new PCs. Breakpoints set this way are ordinary breakpoints."""

    def __init__(self):
        super().__init__("jitmap break", gdb.COMMAND_BREAKPOINTS)

    def complete(self, text, word):
        return _complete_flags({"-d"}, text, word)

    @_guard
    def invoke(self, arg, from_tty):
        flags, rest = _parse(arg, {"-d"}, "jitmap break")
        ids = []
        for a in rest:
            try:
                ids.append(int(a, 0))
            except ValueError:
                raise gdb.GdbError("jitmap break: a record ID is a number, not %r" % a) from None
            if not 0 <= ids[-1] < 1 << 64:
                raise gdb.GdbError("jitmap break: record IDs are 64-bit unsigned numbers")
        if "-d" in flags:
            for rid in ids:
                if BREAKS.watched.pop(rid, None) is None:
                    raise gdb.GdbError("jitmap break: record %d is not watched" % rid)
            return
        if not ids:
            if not BREAKS.watched:
                gdb.write("No record IDs are watched.\n")
            for rid, pcs in sorted(BREAKS.watched.items()):
                gdb.write("record %d: %s\n" % (rid, ", ".join("0x%x" % p for p in sorted(pcs))
                                               or "pending (not registered yet)"))
            return
        for rid in ids:
            BREAKS.watched.setdefault(rid, set())
        BREAKS.ensure_hook()
        made = []
        try:
            made = BREAKS.resolve()
        except gdb.GdbError:
            pass  # no process yet: everything stays pending
        done = {m[0] for m in made}
        for rid in ids:
            if rid not in done and not BREAKS.watched[rid]:
                gdb.write("jitmap: record %d is not registered yet: breakpoints will be set when "
                          "JIT code with it is registered\n" % rid)


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
    instance = None

    def __init__(self):
        super().__init__("jitmap statepoints", gdb.COMMAND_DATA, gdb.PARAM_ENUM,
                         ["auto", "all", "none"])
        self.value = "auto"
        _StatepointsParam.instance = self

    def get_show_string(self, svalue):
        return "Stackmap records decoded as statepoints: %s." % svalue


class _StatepointIdsParam(gdb.Parameter):
    """Record IDs that flip `set jitmap statepoints`: under auto or all they are never decoded
as statepoints, under none they are. A comma-separated list of numbers; empty for none."""

    set_doc = "Set the record IDs that flip the statepoint decision."
    show_doc = "Show the record IDs that flip the statepoint decision."
    instance = None

    def __init__(self):
        super().__init__("jitmap statepoint-ids", gdb.COMMAND_DATA, gdb.PARAM_STRING)
        self.value = ""
        _StatepointIdsParam.instance = self

    def get_set_string(self):
        try:
            self.ids()
        except ValueError:
            bad = self.value
            self.value = ""
            raise gdb.GdbError("jitmap statepoint-ids: %r is not a list of numbers" % bad)
        return ""

    def get_show_string(self, svalue):
        return "Record IDs that flip the statepoint decision: %s." % (svalue or "none")

    @classmethod
    def ids(cls):
        v = (cls.instance.value or "").replace(" ", "")
        return [int(x, 0) for x in v.split(",") if x]


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
        catalog = STATE.get()
        obj = _frame_object(catalog, _selected_frame())
        if obj["record"] is None:
            raise gdb.GdbError(obj["error"])
        if not 0 <= n < len(obj["locations"]):
            raise gdb.GdbError("$_stackmap: record %d has %d locations (0 to %d)" % (
                obj["record"]["id"], len(obj["locations"]), len(obj["locations"]) - 1))
        loc = obj["locations"][n]
        v = loc["value"]
        if v is None:
            raise gdb.GdbError("$_stackmap(%d): unavailable: %s" % (n, loc.get("error")))
        if isinstance(v, str):
            raise gdb.GdbError("$_stackmap(%d): a %d-byte value (0x%s); only values up to 8 bytes "
                               "are returned" % (n, loc["size"], v))
        if loc["kind"] == "direct":
            return gdb.Value(v).cast(gdb.lookup_type("void").pointer())
        size = loc["size"] if loc["size"] in (1, 2, 4, 8) else 8
        tname = {1: "signed char", 2: "short", 4: "int", 8: "long"}[size]
        return gdb.Value(M.signed(v, size)).cast(gdb.lookup_type(tname))


class StackmapId(gdb.Function):
    """$_stackmap_id(): the ID of the stackmap record at the selected frame (-1 if none).

Usage: print $_stackmap_id()"""

    def __init__(self):
        super().__init__("_stackmap_id")

    @_guard
    def invoke(self):
        catalog = STATE.get()
        frame = _selected_frame()
        match = _match(catalog, frame)
        if not match.hits:
            return gdb.Value(-1).cast(gdb.lookup_type("long"))
        return gdb.Value(match.hits[0][1].contents.id).cast(gdb.lookup_type("unsigned long"))


# -- Registration --


def _connect():
    ev = gdb.events
    ev.stop.connect(STATE.invalidate)
    ev.cont.connect(STATE.invalidate)
    ev.memory_changed.connect(STATE.invalidate)
    ev.inferior_call.connect(STATE.invalidate)
    ev.new_objfile.connect(STATE.objfiles_changed)
    ev.clear_objfiles.connect(lambda *_: STATE.forget())
    ev.exited.connect(lambda *_: STATE.forget())


_registered = False


def register():
    """Define the commands (once)."""
    global _registered
    if _registered:
        return
    _registered = True
    InfoStackmap()
    InfoStackmaps()
    InfoGcRoots()
    Jitmap()
    JitmapStatus()
    JitmapRefresh()
    JitmapVerify()
    JitmapBreak()
    _SetJitmap()
    _ShowJitmap()
    _StatepointsParam()
    _StatepointIdsParam()
    StackmapValue()
    StackmapId()
    _connect()


register()
