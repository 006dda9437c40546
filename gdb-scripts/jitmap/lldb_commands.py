"""jitmap's LLDB commands: stackmap records, deopt state and GC roots of JIT frames.

``command script import PREFIX/share/jitmap/lldb/jitmap.py`` registers, through
:func:`register` (called from that script's ``__lldb_init_module``):

  stackmap info [--json] [--raw] [--statepoint | --no-statepoint] [FRAME]
  stackmap list [--json] [REGEXP]
  stackmap gc-roots [--all] [--json]
  stackmap verify [--json]
  stackmap break [--delete] [ID...]
  stackmap status
  stackmap refresh
  stackmap statepoints [auto | all | none] [--ids ID,...]
  stackmap load-images

They print what GDB's ``info stackmap``, ``info stackmaps``, ``info gc-roots``, ``jitmap verify``
and ``jitmap status`` print (docs/lldb.md): this module only adapts LLDB (the selected frame
and thread from ``exe_ctx``, registers through ``SBFrame.FindRegister``, memory through
``SBProcess.ReadMemory``, symbols and sections through ``SBTarget``); finding, decoding and
formatting are the debugger-neutral modules' (discovery, stackmaps, model, format, report) and
libjitmap's. Every failure is one sentence through ``result.SetError``, never a traceback.

Written against the SB API of LLDB 14 (nothing newer is used); tested with LLDB 16.
"""
import os
import re
import shlex
import traceback

import lldb

from . import discovery as D
from . import format as F
from . import model as M
from . import native as N
from . import report as R

MAX_FRAMES = 10000  # frames walked by `stackmap gc-roots --all` and `stackmap verify`
INVALID = 0xFFFFFFFFFFFFFFFF  # LLDB_INVALID_ADDRESS

_library_hint = None


def set_library_hint(directory):
    """Where the entry script says libjitmap is (the build directory, in a build tree)."""
    global _library_hint
    _library_hint = directory or None


def _library():
    return N.load(_library_hint)


class Error(Exception):
    """A command that fails: str() is the one sentence shown by result.SetError."""


# -- The process, as discovery sees it --


def _process(exe_ctx):
    target = exe_ctx.GetTarget()
    process = exe_ctx.GetProcess()
    if not target.IsValid() or not process.IsValid() or \
            process.GetState() in (lldb.eStateInvalid, lldb.eStateUnloaded, lldb.eStateConnected,
                                   lldb.eStateDetached, lldb.eStateExited):
        raise Error("jitmap: no process or core file; run or attach to the program, or open a "
                    "core file, first")
    if process.GetState() in (lldb.eStateRunning, lldb.eStateStepping, lldb.eStateLaunching,
                              lldb.eStateAttaching):
        raise Error("jitmap: the process is running; stop it first")
    return target, process


def _read(process, addr, size):
    """`size` bytes of target memory; D.ReadError with LLDB's reason."""
    if size == 0:
        return b""
    err = lldb.SBError()
    data = process.ReadMemory(addr, size, err)
    if err.Fail() or data is None or len(data) != size:
        raise D.ReadError(err.GetCString() or "cannot read memory at 0x%x" % addr)
    return data


class LldbAccess:
    """discovery's access object over LLDB: memory, descriptors and loaded files."""

    def __init__(self, state, process):
        self.state = state
        self.process = process

    def read(self, addr, size):
        if addr < 0 or addr + size > 1 << 64:
            raise D.ReadError("address 0x%x is out of range" % addr)
        return _read(self.process, addr, size)

    def jit_descriptors(self):
        return self.state.descriptors()

    def loaded_objects(self):
        return self.state.loaded_objects()


def _module_name(target, module):
    """How GDB names the file that holds an address: "the executable", or the library's
    base name."""
    if not module.IsValid():
        return "the executable"
    exe = target.GetExecutable()
    spec = module.GetFileSpec()
    if exe.IsValid() and spec.fullpath == exe.fullpath:
        return "the executable"
    return spec.GetFilename() or "the executable"


def _find_section(section_iterable, name, depth=0):
    """ELF sections are nested under their PT_LOAD segment in LLDB: search the tree."""
    for sec in section_iterable:
        if sec.GetName() == name:
            return sec
        if depth < 3 and sec.GetNumSubSections():
            got = _find_section([sec.GetSubSectionAtIndex(i) for i in range(sec.GetNumSubSections())],
                                name, depth + 1)
            if got is not None:
                return got
    return None


class State:
    """What jitmap knows about one process between two stops (keyed by LLDB's stop ID)."""

    def __init__(self):
        self.discovery = D.Discovery()
        self.catalog = None
        self._process = None
        self._stop = None
        self._descriptors = []
        self._objects = []
        self.big_endian = False

    def forget(self):
        self.discovery.flush()
        self.catalog = None
        self._stop = None

    def _refresh_files(self, target):
        descriptors = {}
        found = target.FindSymbols(R.DESCRIPTOR)
        for i in range(found.GetSize()):
            sym = found.GetContextAtIndex(i).GetSymbol()
            if not sym.IsValid() or sym.GetType() not in (lldb.eSymbolTypeData, lldb.eSymbolTypeAny):
                continue
            addr = sym.GetStartAddress()
            load = addr.GetLoadAddress(target)
            if load in (0, INVALID) or load in descriptors:
                continue
            descriptors[load] = _module_name(target, addr.GetModule())
        self._descriptors = sorted(descriptors.items())
        objects = []
        for i in range(target.GetNumModules()):
            module = target.GetModuleAtIndex(i)
            path = module.GetFileSpec().fullpath
            if not path or not os.path.isfile(path):
                continue  # JIT(0x...) images and the vDSO: not files
            if _image_dir is not None and os.path.dirname(path) == _image_dir:
                continue  # JIT images that `stackmap load-images` added: found as JIT entries
            sec = _find_section([module.GetSectionAtIndex(k) for k in range(module.GetNumSections())],
                                ".llvm_stackmaps")
            if sec is None:
                continue
            load = sec.GetLoadAddress(target)
            if load not in (0, INVALID):
                objects.append((path, load))
        self._objects = objects

    def descriptors(self):
        return list(self._descriptors)

    def loaded_objects(self):
        return list(self._objects)

    def get(self, exe_ctx, refresh=False):
        """The catalog for the current stop (scanning again after each stop)."""
        _library()
        target, process = _process(exe_ctx)
        key = (process.GetUniqueID(), process.GetProcessID(), target.GetExecutable().fullpath)
        if key != self._process:
            self.forget()
            self._process = key
        stop = process.GetStopID()
        if refresh or stop != self._stop or self.catalog is None:
            self.big_endian = process.GetByteOrder() == lldb.eByteOrderBig
            self._refresh_files(target)
            self.catalog = self.discovery.scan(LldbAccess(self, process))
            self._stop = stop
        return self.catalog

    def problems(self, limit=20):
        return R.problems(self.catalog, limit)


STATE = State()


# -- Frames --


class LldbFrame:
    """model's frame object over an SBFrame.

    Registers of outer frames: LLDB gives a register only when the unwinder recovered it
    (a CFI or assembly-profiled save slot, or a callee-saved register passed through); a
    caller-saved register that no callee saved reads as an error ("unavailable"), never as
    frame 0's value (checked with LLDB 16, the ABI's volatile set). The reason given is the
    one GDB's front end gives, so that both print the same."""

    def __init__(self, frame, arch, process, big_endian):
        self.frame = frame
        self.level = frame.GetFrameID()
        self.pc = frame.GetPC()
        self.arch = arch
        self.process = process
        self.big_endian = big_endian
        self.function = frame.GetFunctionName() or None

    def read_register(self, regno, name, size):
        if not name:
            raise M.Unavailable("DWARF register %d has no name on this architecture" % regno)
        v = self.frame.FindRegister(name)
        if not v.IsValid():
            raise M.Unavailable("LLDB has no register %s on this target" % name)
        err = v.GetError()
        if err.Fail():
            if self.level > 0:
                raise M.NotSaved()
            raise M.Unavailable(err.GetCString() or "LLDB cannot read register %s" % name)
        data = v.GetData()
        n = data.GetByteSize()
        if n == 0:
            raise M.Unavailable("LLDB gives no bytes for register %s" % name)
        derr = lldb.SBError()
        raw = data.ReadRawData(derr, 0, n)
        if derr.Fail() or raw is None:
            raise M.Unavailable(derr.GetCString() or "LLDB cannot read register %s" % name)
        # In an outer frame LLDB gives a register only when its unwinder recovered it.
        return M.Recovered(raw) if self.level > 0 else bytes(raw)

    def read_memory(self, addr, size):
        try:
            return bytes(_read(self.process, addr, size))
        except D.ReadError as e:
            raise M.Unavailable(str(e)) from None


def _instructions(target, process, addr, size, count=None):
    """[(address, length, text, bytes)] of the code at [addr, addr + size), at most
    `count`."""
    data = _read(process, addr, size)
    insns = target.GetInstructions(lldb.SBAddress(addr, target), data)
    out = []
    at = addr
    for i in range(insns.GetSize()):
        insn = insns.GetInstructionAtIndex(i)
        length = insn.GetByteSize()
        if length <= 0:
            break
        text = "%s %s" % (insn.GetMnemonic(target) or "", insn.GetOperands(target) or "")
        out.append((at, length, text.strip(), bytes(data[at - addr:at - addr + length])))
        at += length
        if count is not None and len(out) >= count:
            break
    return out


def _call_ends_at_fn(target, process):
    def call_ends_at(record_pc, ret, arch):
        if not 0 < ret - record_pc <= R.CALL_WINDOW:
            return False, None
        try:
            insns = _instructions(target, process, record_pc, ret - record_pc)
        except D.ReadError:
            return False, None
        return R.call_sequence(insns, record_pc, ret, arch)
    return call_ends_at


def _disassemble_fn(target, process):
    def disassemble(addr, count):
        for size in (15 * count, 16):
            try:
                return _instructions(target, process, addr, size, count)
            except D.ReadError:
                continue
        return []
    return disassemble


def _function_at_fn(target):
    def function_at(addr):
        a = target.ResolveLoadAddress(addr)
        sym = a.GetSymbol()
        if not sym.IsValid():
            return None
        start = sym.GetStartAddress().GetLoadAddress(target)
        if start == INVALID:
            return None
        fn = a.GetFunction()
        name = fn.GetName() if fn.IsValid() else sym.GetName()
        return start, name
    return function_at


def _arch_of(catalog, target, pc):
    sm = catalog.stackmap_for_pc(pc)
    if sm is not None and sm.arch:
        return sm.arch
    triple = target.GetTriple() or ""
    if triple.startswith(("aarch64", "arm64")):
        return N.ARCH_AARCH64
    return N.ARCH_X86_64


def _frame_object(catalog, exe_ctx, frame, raw=False, statepoints=None):
    target, process = _process(exe_ctx)
    lf = LldbFrame(frame, _arch_of(catalog, target, frame.GetPC()), process, STATE.big_endian)
    match = M.find(catalog, lf.pc, lf.level > 0, _call_ends_at_fn(target, process))
    return M.frame_object(lf, match, raw, statepoints or SETTINGS.statepoints())


def _thread(exe_ctx):
    thread = exe_ctx.GetThread()
    if not thread.IsValid():
        raise Error("jitmap: no thread is selected (the program is not running?)")
    return thread


def _selected_frame(exe_ctx):
    frame = exe_ctx.GetFrame()
    if not frame.IsValid():
        frame = _thread(exe_ctx).GetSelectedFrame()
    if not frame.IsValid():
        raise Error("jitmap: no frame is selected (the program is not running?)")
    return frame


def _frames(exe_ctx, limit=MAX_FRAMES):
    thread = _thread(exe_ctx)
    for i in range(limit):
        f = thread.GetFrameAtIndex(i)
        if not f.IsValid():
            break
        yield f


def _no_stackmaps_error():
    return Error(R.no_stackmaps_message(STATE.problems(), STATE.descriptors(),
                                        STATE.loaded_objects()))


# -- Settings (GDB: set jitmap statepoints, set jitmap statepoint-ids) --


class Settings:
    def __init__(self):
        self.mode = "auto"
        self.ids = ()

    def statepoints(self):
        return ({"auto": N.STATEPOINT_AUTO, "all": N.STATEPOINT_ALL,
                 "none": N.STATEPOINT_NONE}[self.mode], tuple(self.ids))


SETTINGS = Settings()


# -- Arguments --


def _parse(command, options, name, max_args=None):
    """(set of canonical options given, [other arguments]). `options` maps every accepted
    spelling ("-j", "--json") to its canonical one; unknown options are errors."""
    try:
        argv = shlex.split(command or "")
    except ValueError as e:
        raise Error("%s: cannot parse the arguments: %s" % (name, e)) from None
    got, rest = set(), []
    for a in argv:
        if a.startswith("-") and not re.match(r"^-\d+$", a):
            if a not in options:
                raise Error("%s: unknown option %s (options: %s)" % (
                    name, a, ", ".join(sorted(set(options.values()))) or "none"))
            got.add(options[a])
        else:
            rest.append(a)
    if max_args is not None and len(rest) > max_args:
        raise Error("%s: too many arguments: %s" % (name, " ".join(rest[max_args:])))
    return got, rest


# -- Commands --


class _Command:
    """Base of the commands: LLDB's class protocol, and errors as one sentence."""

    NAME = ""
    SHORT = ""

    def __init__(self, debugger, internal_dict):
        self.debugger = debugger

    def get_short_help(self):
        return self.SHORT

    def get_long_help(self):
        return self.__doc__

    def __call__(self, debugger, command, exe_ctx, result):
        try:
            out = self.run(command, exe_ctx)
            if out:
                print("\n".join(out), file=result)
            result.SetStatus(lldb.eReturnStatusSuccessFinishResult)
        except Error as e:
            result.SetError(str(e))
        except R.CommandError as e:
            result.SetError(str(e))
        except N.LibraryError as e:
            result.SetError("jitmap: %s" % e)
        except KeyboardInterrupt:
            result.SetError("jitmap: interrupted")
        except Exception as e:
            msg = ("jitmap: internal error: %s: %s (set JITMAP_DEBUG=1 for the traceback, and "
                   "please report it)" % (type(e).__name__, e))
            if os.environ.get("JITMAP_DEBUG"):
                msg += "\n" + traceback.format_exc()
            result.SetError(msg)

    def run(self, command, exe_ctx):
        raise NotImplementedError


class StackmapInfo(_Command):
    """Show the stackmap record at a frame: each live value's location and value.

Usage: stackmap info [--json] [--raw] [--statepoint | --no-statepoint] [FRAME]

The record describes the selected frame (or frame number FRAME): frame 0 at
its PC, an outer frame at its return address (stackmaps and statepoints
after calls), or at the start of the call sequence that returns there
(patchpoints). For each location: index, kind, where (a register such as
rbx, or [rsp+16], rbp-8, a constant), size and value. Statepoints also show
their calling convention, flags, deopt values and GC roots (base, derived,
derived - base); patchpoints their live-out registers. A value that cannot
be known (a caller-saved register in an outer frame, memory missing from a
core) is shown as unavailable, with the reason. A frame that is not at a
record is an error that names the nearest records and how far.
The same text and JSON as GDB's `info stackmap`.

  -j, --json        one JSON object; a frame without a record gives
                    "record": null with "error" and "nearest"
  -r, --raw         also each location's raw fields (kind, size, DWARF
                    register, offset)
  --statepoint      decode the record as a statepoint, whatever its shape
  --no-statepoint   no statepoint decoding
"""

    NAME = "info"
    SHORT = "Show the stackmap record at a frame: live values, deopt state, GC roots."
    OPTIONS = {"-j": "--json", "--json": "--json", "-r": "--raw", "--raw": "--raw",
               "--statepoint": "--statepoint", "--no-statepoint": "--no-statepoint"}

    def run(self, command, exe_ctx):
        flags, rest = _parse(command, self.OPTIONS, "stackmap info", 1)
        if "--statepoint" in flags and "--no-statepoint" in flags:
            raise Error("stackmap info: --statepoint and --no-statepoint exclude each other")
        _process(exe_ctx)
        frame = _selected_frame(exe_ctx)
        if rest:
            try:
                level = int(rest[0], 0)
            except ValueError:
                raise Error("stackmap info: FRAME must be a frame number, not %r" % rest[0]) from None
            frame = _thread(exe_ctx).GetFrameAtIndex(level) if level >= 0 else lldb.SBFrame()
            if not frame.IsValid():
                raise Error("jitmap: there is no frame %d" % level)
        catalog = STATE.get(exe_ctx)
        if not catalog.stackmaps:
            raise _no_stackmaps_error()
        sp = SETTINGS.statepoints()
        if "--statepoint" in flags:
            sp = (N.STATEPOINT_ALL, ())
        elif "--no-statepoint" in flags:
            sp = (N.STATEPOINT_NONE, ())
        obj = _frame_object(catalog, exe_ctx, frame, "--raw" in flags, sp)
        if "--json" in flags:
            return [F.to_json(obj)]
        if obj["record"] is None:
            raise Error(obj["error"])
        return [F.frame_text(obj, "--raw" in flags)]


class StackmapList(_Command):
    """List the stackmaps of the program: functions, records (ID, PC, kind).

Usage: stackmap list [--json] [REGEXP]

With REGEXP, only the functions whose name matches it (a Python regular
expression, searched). Stackmaps come from the JIT entries registered
through __jit_debug_descriptor (read from the process's or the core's
memory by jitmap itself) and from the .llvm_stackmaps sections of loaded
files. Kinds: statepoint (by its shape), patchpoint (has live-out
registers), stackmap. GDB: `info stackmaps`.

  -j, --json   one JSON object: {"stackmaps": [...], "problems": [...]}
"""

    NAME = "list"
    SHORT = "List the stackmap functions and records of the program."
    OPTIONS = {"-j": "--json", "--json": "--json"}

    def run(self, command, exe_ctx):
        flags, rest = _parse(command, self.OPTIONS, "stackmap list", 1)
        try:
            rx = re.compile(rest[0]) if rest else None
        except re.error as e:
            raise Error("stackmap list: bad regular expression: %s" % e) from None
        catalog = STATE.get(exe_ctx)
        listing = R.listing(catalog, rx, SETTINGS.statepoints())
        problems = STATE.problems()
        if "--json" in flags:
            return [F.to_json({"stackmaps": listing, "problems": problems})]
        if not listing:
            if rx is not None and catalog.stackmaps:
                raise Error("stackmap list: no function matches %s" % rest[0])
            raise _no_stackmaps_error()
        return R.listing_text(listing) + R.warnings(problems, "stackmap status")


class StackmapGcRoots(_Command):
    """Show the GC roots of this frame, or of every frame on the stack.

Usage: stackmap gc-roots [--all] [--json]

What a moving collector would scan and update at the statepoints on the
stack: for each (base, derived) pair of a statepoint record, the frame, the
slot (a stack address, or a register), the base and derived pointers and
derived - base; and the gc allocas. Without --all, the selected frame only.
Frames in stackmap functions that are not at a record are listed as such
(a collector could not scan them). GDB: `info gc-roots`.

  -a, --all    every frame of the selected thread
  -j, --json   one JSON object: {"roots": [...], "frames": [...],
               "notes": [...]}
"""

    NAME = "gc-roots"
    SHORT = "Show the GC roots of this frame, or of every frame (--all)."
    OPTIONS = {"-a": "--all", "--all": "--all", "-j": "--json", "--json": "--json"}

    def run(self, command, exe_ctx):
        flags, _ = _parse(command, self.OPTIONS, "stackmap gc-roots", 0)
        catalog = STATE.get(exe_ctx)
        if not catalog.stackmaps:
            raise _no_stackmaps_error()
        every = "--all" in flags
        frames = list(_frames(exe_ctx)) if every else [_selected_frame(exe_ctx)]
        answer = R.gc_roots([_frame_object(catalog, exe_ctx, f) for f in frames], every)
        if "--json" in flags:
            return [F.to_json(answer)]
        return R.gc_roots_text(answer, every)


class StackmapVerify(_Command):
    """Cross-check the stackmaps against the code and the live frames.

Usage: stackmap verify [--json]

Checks:
  unrelocated      every function address is set (not 0) in the section
                   read from memory
  pc-in-function   each record's PC lies in its function (by the symbols)
  register         every register number is one of the architecture's
  frame-size       frames on the stack at a record: the function's stack
                   size matches LLDB's unwound frame (CFA - SP)
  stack-slot       those frames: stack locations lie inside [SP, CFA)
  patch-shadow     a call sequence starting at a record does not run over
                   the next record
With --json, one object: {"records_checked": N, "frames_checked": N,
"problems": [{"function", "record", "pc", "check", "detail"}]}.
GDB: `jitmap verify`.

  -j, --json   one JSON object
"""

    NAME = "verify"
    SHORT = "Cross-check the stackmaps against the code and the frames on the stack."
    OPTIONS = {"-j": "--json", "--json": "--json"}

    def run(self, command, exe_ctx):
        flags, _ = _parse(command, self.OPTIONS, "stackmap verify", 0)
        catalog = STATE.get(exe_ctx)
        if not catalog.stackmaps:
            raise _no_stackmaps_error()
        target, process = _process(exe_ctx)
        obj = R.verify(catalog, _function_at_fn(target), _disassemble_fn(target, process),
                       self._frames(catalog, exe_ctx, target, process))
        if "--json" in flags:
            return [F.to_json(obj)]
        return R.verify_text(obj)

    @staticmethod
    def _frames(catalog, exe_ctx, target, process):
        call_ends_at = _call_ends_at_fn(target, process)
        thread = _thread(exe_ctx)
        for f in _frames(exe_ctx):
            level = f.GetFrameID()
            match = M.find(catalog, f.GetPC(), level > 0, call_ends_at)
            if not match.hits:
                continue
            older = thread.GetFrameAtIndex(level + 1)
            if not older.IsValid():
                continue

            def stack(f=f, older=older):
                sp, cfa = f.GetSP(), older.GetSP()
                if sp in (0, INVALID) or cfa in (0, INVALID):
                    return None
                return sp & M.MASK64, cfa & M.MASK64

            lf = LldbFrame(f, _arch_of(catalog, target, f.GetPC()), process, STATE.big_endian)
            yield R.VerifyFrame(lf, match, stack)


class StackmapStatus(_Command):
    """Show where jitmap looks: its library, the JIT descriptors and entries
found, and the problems met reading them.

Usage: stackmap status
"""

    NAME = "status"
    SHORT = "Show jitmap's library, the JIT descriptors and entries found, and problems."

    def run(self, command, exe_ctx):
        _parse(command, {}, "stackmap status", 0)
        _library()
        catalog = STATE.get(exe_ctx)
        return R.status_lines(N.path(), STATE.descriptors(), STATE.loaded_objects(), catalog,
                              STATE.problems())


class StackmapRefresh(_Command):
    """Forget what jitmap has read from the process (it reads it again when next
needed; it also does after every stop).

Usage: stackmap refresh
"""

    NAME = "refresh"
    SHORT = "Forget what jitmap has read from the process, and read it again."

    def run(self, command, exe_ctx):
        _parse(command, {}, "stackmap refresh", 0)
        STATE.forget()
        return []


class StackmapStatepoints(_Command):
    """Show or set which stackmap records are decoded as statepoints.

Usage: stackmap statepoints [auto | all | none] [--ids ID,ID,...]

auto (the default): the records whose shape is a statepoint's (three
leading constants: calling convention, flags, deopt count; then the deopt
values and base/derived pairs); all: every record (and say which do not
fit); none: no record. The IDs given with --ids flip the decision for
those records (--ids "" for none). GDB: `set jitmap statepoints`,
`set jitmap statepoint-ids`.
"""

    NAME = "statepoints"
    SHORT = "Show or set which stackmap records are decoded as statepoints."

    def run(self, command, exe_ctx):
        try:
            argv = shlex.split(command or "")
        except ValueError as e:
            raise Error("stackmap statepoints: cannot parse the arguments: %s" % e) from None
        mode, ids = None, None
        i = 0
        while i < len(argv):
            a = argv[i]
            if a == "--ids":
                if i + 1 >= len(argv):
                    raise Error("stackmap statepoints: --ids needs a list of record IDs")
                try:
                    ids = tuple(int(x, 0) for x in argv[i + 1].replace(" ", "").split(",") if x)
                except ValueError:
                    raise Error("stackmap statepoints: %r is not a list of numbers" %
                                argv[i + 1]) from None
                i += 2
                continue
            if a in ("auto", "all", "none") and mode is None:
                mode = a
            else:
                raise Error("stackmap statepoints: unexpected %r (auto, all, none, --ids ID,...)" % a)
            i += 1
        if mode is not None:
            SETTINGS.mode = mode
        if ids is not None:
            SETTINGS.ids = ids
        return ["Stackmap records decoded as statepoints: %s." % SETTINGS.mode,
                "Record IDs that flip the statepoint decision: %s." % (
                    ",".join(str(x) for x in SETTINGS.ids) or "none")]


class Breaks:
    """`stackmap break`: watched record IDs, their breakpoints, and the hook on
    __jit_debug_register_code that resolves them when JIT code is registered."""

    HOOK_NAME = "jitmap-jit-hook"

    def __init__(self):
        self.watched = {}  # id -> set of PCs with a breakpoint
        self.hook = None   # (target, breakpoint id)
        self.module_name = __name__

    def unresolved(self, catalog):
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

    def resolve(self, target, catalog):
        """Set the breakpoints that are missing; return message lines."""
        lines = []
        for rid, pc, fname in self.unresolved(catalog):
            bp = target.BreakpointCreateByAddress(pc)
            if not bp.IsValid():
                lines.append("jitmap: record %d at 0x%x: LLDB could not set a breakpoint" % (rid, pc))
                continue
            self.watched[rid].add(pc)
            lines.append("jitmap: record %d at 0x%x (%s): breakpoint %d" % (
                rid, pc, fname or "?", bp.GetID()))
        return lines

    def ensure_hook(self, target):
        if self.hook is not None and self.hook[0] == target and \
                target.FindBreakpointByID(self.hook[1]).IsValid():
            return
        bp = target.BreakpointCreateByName(R.HOOK)
        if not bp.IsValid():
            return
        bp.AddName(self.HOOK_NAME)
        bp.SetScriptCallbackFunction(self.module_name + "._jit_hook")
        self.hook = (target, bp.GetID())


BREAKS = Breaks()


def _jit_hook(frame, bp_loc, internal_dict):
    """The callback of the breakpoint on __jit_debug_register_code: set the breakpoints of
    watched records that the new JIT code has, then let the program go on (return False)."""
    try:
        if not BREAKS.watched:
            return False
        exe_ctx = lldb.SBExecutionContext(frame)
        catalog = STATE.get(exe_ctx, refresh=True)
        for line in BREAKS.resolve(exe_ctx.GetTarget(), catalog):
            print(line)
    except Exception as e:  # never a traceback from inside LLDB's stop handling
        print("warning: jitmap: while resolving `stackmap break`: %s" % e)
    return False


class StackmapBreak(_Command):
    """Break at every PC of stackmap record ID, also in JIT code registered later.

Usage: stackmap break ID...
       stackmap break --delete ID...   stop watching these IDs (their
                                       breakpoints stay: `breakpoint delete`)
       stackmap break                  list the watched IDs

A breakpoint is set at each PC that has a record with that ID (several
functions may share an ID). While an ID is watched, a breakpoint on
__jit_debug_register_code (named jitmap-jit-hook; it never stops) checks
each new JIT registration and adds breakpoints at its new PCs. The
breakpoints set this way are ordinary breakpoints. GDB: `jitmap break`.

  -d, --delete   stop watching the IDs given
"""

    NAME = "break"
    SHORT = "Break at every PC of a stackmap record ID, also in JIT code registered later."
    OPTIONS = {"-d": "--delete", "--delete": "--delete"}

    def run(self, command, exe_ctx):
        flags, rest = _parse(command, self.OPTIONS, "stackmap break")
        ids = []
        for a in rest:
            try:
                ids.append(int(a, 0))
            except ValueError:
                raise Error("stackmap break: a record ID is a number, not %r" % a) from None
            if not 0 <= ids[-1] < 1 << 64:
                raise Error("stackmap break: record IDs are 64-bit unsigned numbers")
        if "--delete" in flags:
            for rid in ids:
                if BREAKS.watched.pop(rid, None) is None:
                    raise Error("stackmap break: record %d is not watched" % rid)
            return []
        if not ids:
            if not BREAKS.watched:
                return ["No record IDs are watched."]
            return ["record %d: %s" % (rid, ", ".join("0x%x" % p for p in sorted(pcs)) or
                                       "pending (not registered yet)")
                    for rid, pcs in sorted(BREAKS.watched.items())]
        target = exe_ctx.GetTarget()
        if not target.IsValid():
            raise Error("stackmap break: no target; load the program first (`file PROGRAM`)")
        for rid in ids:
            BREAKS.watched.setdefault(rid, set())
        BREAKS.ensure_hook(target)
        lines = []
        try:
            lines = BREAKS.resolve(target, STATE.get(exe_ctx))
        except Error:
            pass  # no process yet: everything stays pending
        for rid in ids:
            if not BREAKS.watched[rid]:
                lines.append("jitmap: record %d is not registered yet: breakpoints will be set when "
                             "JIT code with it is registered" % rid)
        return lines


class StackmapLoadImages(_Command):
    """Give LLDB the JIT images that its JIT loader did not load.

Usage: stackmap load-images

LLDB's JIT loader (plugin.jit-loader.gdb) reads the registered JIT images
itself, live and (LLDB 16) when a core is opened, and then names and
unwinds JIT frames. Where it did not run (it is turned off, as it must be
for a core whose entry list loops, since LLDB walks it without a cycle
check), LLDB shows JIT frames without names and may not unwind through
them. This command adds each JIT image jitmap found (by walking
__jit_debug_descriptor itself) that no module covers yet as a module
(written to a temporary file), and places the sections that hold its
stackmap functions at the functions' addresses. LLDB then names and
unwinds those frames as if its loader had run.
"""

    NAME = "load-images"
    SHORT = "Give LLDB the JIT images its own JIT loader did not load."

    def run(self, command, exe_ctx):
        _parse(command, {}, "stackmap load-images", 0)
        catalog = STATE.get(exe_ctx)
        target, process = _process(exe_ctx)
        lines = []
        added = 0
        for src in catalog.sources:
            if src.kind != "jit" or src.stackmap is None:
                continue
            fns = [(N.text(fn.name), fn.address) for _, fn in src.stackmap.functions()
                   if fn.name and fn.address]
            if not fns:
                continue
            if all(target.ResolveLoadAddress(a).GetModule().IsValid() for _, a in fns):
                continue
            got = _load_image(target, process, src, fns)
            lines.append(got)
            if not got.startswith("cannot"):
                added += 1
        if not lines:
            lines.append("Every JIT image with a stackmap is known to LLDB already.")
        else:
            lines.append("%s added." % F._plural(added, "JIT image"))
        return lines


_image_dir = None


def _new_image_dir():
    """A temporary directory for the images of this LLDB process. LLDB keeps the files it
    loaded modules from open, and does not always run Python's exit handlers: the directories
    of LLDB processes that are gone are removed here instead."""
    import glob
    import shutil
    import tempfile
    prefix = "jitmap-lldb-images-"
    for old in glob.glob(os.path.join(tempfile.gettempdir(), prefix + "*")):
        m = re.match(r"^%s(\d+)-" % prefix, os.path.basename(old))
        if not m or not os.path.isdir(old):
            continue
        try:
            os.kill(int(m.group(1)), 0)
        except ProcessLookupError:
            shutil.rmtree(old, ignore_errors=True)
        except OSError:
            pass  # alive (or not ours to signal): leave it
    return tempfile.mkdtemp(prefix="%s%d-" % (prefix, os.getpid()))


def _load_image(target, process, src, fns):
    """Add one JIT image as a module; place the sections holding `fns` [(name, address)]."""
    global _image_dir
    what = src.describe()
    if src.symfile_size > D.MAX_IMAGE:
        return "cannot add %s: its image is too large" % what
    try:
        data = _read(process, src.symfile_addr, src.symfile_size)
    except D.ReadError as e:
        return "cannot add %s: %s" % (what, e)
    if _image_dir is None:
        _image_dir = _new_image_dir()
    path = os.path.join(_image_dir, "JIT-0x%x-0x%x.o" % (src.entry, src.symfile_addr))
    with open(path, "wb") as f:
        f.write(data)
    module = target.AddModule(path, None, None)
    if not module.IsValid():
        return "cannot add %s: LLDB does not read its image (%s)" % (what, path)
    placed = {}
    for name, addr in fns:
        syms = module.FindSymbols(name)
        for i in range(syms.GetSize()):
            sym = syms.GetContextAtIndex(i).GetSymbol()
            start = sym.GetStartAddress()
            sec = start.GetSection()
            if not sec.IsValid():
                continue
            load = addr - start.GetOffset()
            key = sec.GetName()
            if key in placed:
                continue
            if target.SetSectionLoadAddress(sec, load).Success():
                placed[key] = load
            break
    if not placed:
        target.RemoveModule(module)
        return "cannot add %s: none of its stackmap functions is among its symbols" % what
    return "%s: image at 0x%x added as %s; %s" % (
        what, src.symfile_addr, os.path.basename(path),
        ", ".join("%s at 0x%x" % kv for kv in sorted(placed.items())))


COMMANDS = (StackmapInfo, StackmapList, StackmapGcRoots, StackmapVerify, StackmapBreak,
            StackmapStatus, StackmapRefresh, StackmapStatepoints, StackmapLoadImages)


class Stackmap(_Command):
    """Stackmaps of JIT code: live values, deopt state and GC roots of frames.

Usage: stackmap SUBCOMMAND ...

  stackmap info [--json] [--raw] [--statepoint | --no-statepoint] [FRAME]
  stackmap list [--json] [REGEXP]
  stackmap gc-roots [--all] [--json]
  stackmap verify [--json]
  stackmap break [--delete] [ID...]
  stackmap status
  stackmap refresh
  stackmap statepoints [auto | all | none] [--ids ID,...]
  stackmap load-images
"""

    SHORT = "Stackmaps of JIT code (info, list, gc-roots, verify, break, status, ...)."

    def run(self, command, exe_ctx):
        """Used only where LLDB has no command containers: dispatch on the first word."""
        words = (command or "").strip().split(None, 1)
        if not words:
            raise Error("stackmap: a subcommand is needed: %s" % ", ".join(c.NAME for c in COMMANDS))
        for cls in COMMANDS:
            if cls.NAME == words[0]:
                return cls(self.debugger, None).run(words[1] if len(words) > 1 else "", exe_ctx)
        raise Error("stackmap: unknown subcommand %r (%s)" % (
            words[0], ", ".join(c.NAME for c in COMMANDS)))


# -- Registration --


def _handle(debugger, command):
    result = lldb.SBCommandReturnObject()
    debugger.GetCommandInterpreter().HandleCommand(command, result)
    return result


def register(debugger, module_name):
    """Define the commands: `stackmap` as a container of one class per subcommand (LLDB 14+),
    or, where containers do not exist, one class that dispatches on the first word.
    `module_name` is this module's name as LLDB's interpreter reaches it."""
    ci = debugger.GetCommandInterpreter()
    if ci.CommandExists("stackmap"):
        # Imported again (command script import of a changed script): start afresh.
        _handle(debugger, "command script delete stackmap")
        _handle(debugger, "command container delete stackmap")
    made = _handle(debugger, "command container add -h %s stackmap" % shlex.quote(
        "Stackmaps of JIT code: live values, deopt state and GC roots (jitmap)."))
    if made.Succeeded():
        for cls in COMMANDS:
            r = _handle(debugger, "command script add -c %s.%s stackmap %s" % (
                module_name, cls.__name__, cls.NAME))
            if not r.Succeeded():
                return "jitmap: cannot add `stackmap %s`: %s" % (cls.NAME, (r.GetError() or "").strip())
        return None
    r = _handle(debugger, "command script add -c %s.Stackmap stackmap" % module_name)
    if not r.Succeeded():
        return "jitmap: cannot add `stackmap`: %s" % (r.GetError() or "").strip()
    return None
