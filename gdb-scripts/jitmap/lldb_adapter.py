"""LLDB as jitmap sees it: :class:`commands.Debugger` over LLDB, at the bottom of jitmap's LLDB
side.

The commands (lldb_commands.py) and the frame provider (lldb_frames.py) import this module;
it imports neither. Here: :class:`Lldb`, made for one command's execution context (the
selected frame and thread from ``exe_ctx``, registers through ``SBFrame.FindRegister``, memory
through ``SBProcess.ReadMemory``, symbols, sections and breakpoints through ``SBTarget``) and
the hook on the JIT's registrations (`stackmap break`). Below it, and its alone: where code
can be in the process or core and which frames are guesses (lldb_code.py, the `Where` half of
:class:`Lldb`), and the JIT images `stackmap load-images` adds (lldb_images.py). What a
command computes and prints is commands.py's.

Written against the SB API of LLDB 14 (nothing newer is used); tested with LLDB 16 and 19.
"""
import os

import lldb

from . import codemap
from . import corefile
from . import discovery as D
from . import lldb_code as LC
from . import lldb_images
from . import model as M
from . import report as R
from . import session as S

INVALID = LC.INVALID  # LLDB_INVALID_ADDRESS
MAX_MADE_UP = 8  # frames LLDB may have made up above a step against the CFI, at most
SESSION = S.SESSION
Error = S.CommandError

_library_hint = None


def set_library_hint(directory):
    """Where the entry script says libjitmap is (the build directory, in a build tree)."""
    global _library_hint
    _library_hint = directory or None


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




# -- Frames --


class LldbFrame:
    """commands' frame object over an SBFrame.

    Registers of outer frames: LLDB gives a register only when the unwinder recovered it
    (a CFI or assembly-profiled save slot, or a callee-saved register passed through); a
    caller-saved register that no callee saved reads as an error ("unavailable"), never as
    frame 0's value (checked with LLDB 16, the ABI's volatile set). The reason given is the
    one GDB's front end gives, so that both print the same."""

    def __init__(self, dbg, frame, level=None, frame_at=None):
        """`level` and `frame_at(k)` (frame k of the same list) where the caller has them: the
        frame provider passes its input frames, whose SBFrame.GetFrameID and
        SBThread.GetFrameAtIndex would ask the provider again."""
        self.dbg = dbg
        self.frame = frame
        self.level = frame.GetFrameID() if level is None else level
        self.pc = frame.GetPC()
        self.arch = None
        self.function = frame.GetFunctionName() or None
        self._frame_at = frame_at

    @property
    def guessed(self):
        """Why this frame's registers are a guess: a frame below it that LLDB unwound
        through a file of another build than the process maps (model.py's `guessed`)."""
        thread = self.frame.GetThread()
        frame_at = self._frame_at or thread.GetFrameAtIndex
        return self.dbg.guess_below((thread.GetThreadID(), self._frame_at is None), self.level,
                                    frame_at)

    def read_register(self, regno, name, size):
        if not name:
            raise M.Unavailable("DWARF register %d has no name on this architecture" % regno)
        v = self.frame.FindRegister(name)
        if not v.IsValid():
            raise M.Unavailable("LLDB has no register %s on this target" % name)
        if 0 < size <= 8:
            # A number: one call, and no byte order to mind (the library takes the target's).
            err = lldb.SBError()
            value = v.GetValueAsUnsigned(err, 0)
            if err.Success():
                raw = (value & ((1 << 8 * size) - 1)).to_bytes(
                    size, "big" if self.dbg.big_endian else "little")
                return M.Recovered(raw) if self.level > 0 else raw
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
        # The library reads register bytes in the target's order. LLDB 16 gives an s390x
        # core's registers in the host's (SBData's byte order little on an x86-64 host,
        # the process's big: checked on qemu-s390x's guest core), so follow SBData's word.
        order = data.GetByteOrder()
        if order in (lldb.eByteOrderBig, lldb.eByteOrderLittle) and \
                (order == lldb.eByteOrderBig) != self.dbg.big_endian:
            raw = bytes(raw)[::-1]
        # In an outer frame LLDB gives a register only when its unwinder recovered it.
        return M.Recovered(raw) if self.level > 0 else bytes(raw)

    def read_memory(self, addr, size):
        cm = self.dbg.core_map()
        try:
            return codemap.read_minding(cm.missing if cm is not None else None,
                                        lambda a, n: bytes(LC.read(self.dbg.process, a, n)),
                                        addr, size, D.ReadError)
        except codemap.Unreadable as e:
            raise M.Unavailable(str(e)) from None

    def _older(self):
        return self.frame.GetThread().GetFrameAtIndex(self.level + 1)

    def has_caller(self):
        return self._older().IsValid()

    def stack(self):
        older = self._older()
        if not older.IsValid():
            return None
        sp, cfa = self.frame.GetSP(), older.GetSP()
        if sp in (0, INVALID) or cfa in (0, INVALID):
            return None
        return sp & M.MASK64, cfa & M.MASK64


# -- commands.Debugger over LLDB --


_mapped = {}  # {(process unique ID, process ID): the core file _mapped_core found, or None}


def _mapped_core(unique, pid):
    """The core file of process `pid` that LLDB has open, for an LLDB that cannot say which
    (before 17: no SBProcess.GetCoreFile). LLDB maps the cores it opens: of the files this
    process maps, the ELF files libjitmap opens as a core with a thread `pid` (the main
    thread; the one that dumped it comes first, maybe another); None unless exactly one
    is. Found once per process (`unique`: LLDB's unique ID of it); the core found is the
    session's open core from then on (session.py), not opened again."""
    if (unique, pid) in _mapped:
        return _mapped[(unique, pid)]
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split(None, 5)[5].rstrip("\n") for line in f
                     if len(line.split(None, 5)) == 6}
    except OSError:
        return None
    held = SESSION.held_core()
    if held is not None and held.path in paths and pid in held.thread_ids():
        _mapped[(unique, pid)] = held.path
        return held.path
    found = []
    for path in sorted(p for p in paths if p.startswith("/") and not p.endswith(")")):
        try:
            with open(path, "rb") as f:
                if f.read(4) != b"\x7fELF":
                    continue
        except OSError:
            continue
        try:
            core = corefile.OpenCore(path)  # its mapped files are opened at their first use
        except OSError:
            continue  # not a core
        if pid in core.thread_ids():
            found.append(core)
        else:
            core.close()
    if len(found) == 1:
        SESSION.adopt_core(found[0])
    else:
        for core in found:
            core.close()
    _mapped[(unique, pid)] = found[0].path if len(found) == 1 else None
    return _mapped[(unique, pid)]


class Lldb(LC.Where):
    """commands.Debugger over LLDB, for one command's execution context (the session keeps
    what it read while LLDB's stop ID stays the same); where code can be and which steps are
    guesses: lldb_code.Where."""

    name = "lldb"
    library_hint = property(lambda self: _library_hint)

    def __init__(self, exe_ctx):
        self.exe_ctx = exe_ctx
        self.target = exe_ctx.GetTarget()
        self.process = exe_ctx.GetProcess()
        self._files = None  # (descriptors, objects), found once per command
        self.caveat = None  # the first split_caveat of the frames walked
        self.init_where()

    def check_process(self):
        target, process = self.target, self.process
        if not target.IsValid() or not process.IsValid() or \
                process.GetState() in (lldb.eStateInvalid, lldb.eStateUnloaded,
                                       lldb.eStateConnected, lldb.eStateDetached,
                                       lldb.eStateExited):
            raise Error("jitmap: no process or core file; run or attach to the program, or "
                        "open a core file, first")
        if process.GetState() in (lldb.eStateRunning, lldb.eStateStepping, lldb.eStateLaunching,
                                  lldb.eStateAttaching):
            raise Error("jitmap: the process is running; stop it first")
        return process.GetUniqueID(), process.GetProcessID(), target.GetExecutable().fullpath

    def stop_id(self):
        return self.process.GetStopID()

    def open_core(self, path):
        """Debug the core file at `path` in the selected target (a new one when there is
        none, which takes the program the core names): LLDB's lines about it."""
        target, made = self.target, False
        if not target.IsValid():
            target, made = lldb.debugger.CreateTarget(""), True
        error = lldb.SBError()
        process = target.LoadCore(path, error)
        if not process.IsValid() or error.Fail():
            if made:
                lldb.debugger.DeleteTarget(target)
            raise Error("%s: %s" % (path, error.GetCString() or "LLDB cannot open it as a core"))
        lldb.debugger.SetSelectedTarget(target)
        self.target, self.process = target, process  # the rest of this command sees the core
        thread = process.GetSelectedThread()
        return ["Core file '%s' (%s) was loaded; process %d, %d thread%s, stopped in thread %d."
                % (path, target.GetTriple(), process.GetProcessID(), process.GetNumThreads(),
                   "" if process.GetNumThreads() == 1 else "s",
                   thread.GetIndexID() if thread.IsValid() else 0)]

    def live_pid(self):
        """A live process on this machine (LLDB's host platform): its ID; None for a core."""
        p = self.process
        if not p.IsValid() or p.GetPluginName() in ("elf-core", "mach-o-core", "minidump"):
            return None
        if self.target.GetPlatform().GetName() != "host":
            return None
        return p.GetProcessID() or None

    def core_file(self):
        """The core file LLDB debugs, or None: SBProcess.GetCoreFile (LLDB 17 and later), else
        the core LLDB maps (_mapped_core)."""
        p = self.process
        if not p.IsValid() or p.GetPluginName() not in ("elf-core",):
            return None
        get = getattr(p, "GetCoreFile", None)
        if get is None:
            return _mapped_core(p.GetUniqueID(), p.GetProcessID())
        spec = get()
        path = spec.fullpath if spec is not None and spec.IsValid() else None
        return path or None

    @property
    def big_endian(self):
        return self.process.GetByteOrder() == lldb.eByteOrderBig

    def _refresh_files(self):
        if self._files is not None:
            return
        target = self.target
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
        objects = []
        for i in range(target.GetNumModules()):
            module = target.GetModuleAtIndex(i)
            path = module.GetFileSpec().fullpath
            if not path or not os.path.isfile(path):
                continue  # JIT(0x...) images and the vDSO: not files
            if os.path.dirname(path) == lldb_images.image_dir():
                continue  # JIT images that `stackmap load-images` added: found as JIT entries
            sec = LC.find_section([module.GetSectionAtIndex(k) for k in range(module.GetNumSections())],
                                ".llvm_stackmaps")
            if sec is None:
                continue
            load = sec.GetLoadAddress(target)
            if load not in (0, INVALID):
                objects.append((path, load))
        self._files = (sorted(descriptors.items()), objects)

    def jit_descriptors(self):
        self._refresh_files()
        return list(self._files[0])

    def loaded_objects(self):
        self._refresh_files()
        return list(self._files[1])

    def read(self, addr, size):
        return LC.read(self.process, addr, size)

    def arch_name(self):
        return self.target.GetTriple() or ""

    # -- Frames --

    def _thread(self):
        thread = self.exe_ctx.GetThread()
        if not thread.IsValid():
            raise Error("jitmap: no thread is selected (the program is not running?)")
        return thread

    def selected_frame(self):
        frame = self.exe_ctx.GetFrame()
        if not frame.IsValid():
            frame = self._thread().GetSelectedFrame()
        if not frame.IsValid():
            raise Error("jitmap: no frame is selected (the program is not running?)")
        return LldbFrame(self, frame)

    def frame(self, level):
        thread = self._thread()
        frame = thread.GetFrameAtIndex(level) if level >= 0 else lldb.SBFrame()
        if frame.IsValid() and LC.is_provided(frame):
            raise Error("jitmap: frame %d is an interpreter frame (jitmap's frame provider "
                        "shows it under its JIT frame, whose `stackmap info` has its values)"
                        % level)
        # The frames below it made it (or failed to): the first caveat among them.
        below = min(level, thread.GetNumFrames()) if level > 0 else 0
        for i in range(below):
            if self.caveat is None:
                self.caveat = LC.split_caveat(thread.GetFrameAtIndex(i))
        if not frame.IsValid():
            raise Error("jitmap: there is no frame %d%s" % (
                level, "; " + self.caveat if self.caveat else ""))
        if level > 0:
            wrong = self.unproven_step(thread.GetFrameAtIndex(level - 1), frame, level)
            if wrong is not None:
                raise Error("jitmap: frame %d is not on the stack: %s" % (level, wrong[2]))
        return LldbFrame(self, frame)

    def frames(self, limit):
        thread = self._thread()
        prev, resume = None, None  # the frame below; the CFI's caller where LLDB's is not
        for i in range(limit):
            f = thread.GetFrameAtIndex(i)
            if not f.IsValid():
                break
            if LC.is_provided(f):
                continue  # an interpreter frame: described with its JIT frame
            if resume is not None:
                # Frames LLDB made up above a step it took against the CFI: left out up to
                # the CFI's caller, where LLDB's frames are the stack's again.
                if (f.GetPC(), f.GetSP()) != resume[:2]:
                    if i - resume[2] > MAX_MADE_UP:
                        self._note("the stack ends at frame %d: %s, and no frame LLDB "
                                   "unwound above it is that caller" % (resume[2] - 1,
                                                                        resume[3]))
                        break
                    self._made_up[i] = resume[3]
                    continue
                resume = None
            if i > 0:
                where = self.no_code(f.GetPC())
                if where:  # LLDB took a stack word for a return address: the stack ends
                    self._note("the stack ends at frame %d: its PC 0x%x lies where no "
                               "code can be (%s)" % (i, f.GetPC(), where))
                    break
                wrong = self.unproven_step(prev, f, i) if prev is not None else None
                if wrong is not None:
                    pc, sp, why = wrong
                    self._note("frame %d (0x%x) is left out: %s" % (i, f.GetPC(), why))
                    resume = (pc, sp, i, why)
                    continue
            if self.caveat is None:
                self.caveat = LC.split_caveat(f)
            prev = f
            yield LldbFrame(self, f)

    def _note(self, why):
        """The caveat of the frames walked, unless one was noted already."""
        if self.caveat is None:
            self.caveat = why

    def unwind_note(self):
        """commands.Debugger: what may be wrong with the frames walked so far."""
        return self.caveat

    # -- Code and symbols --

    def _instructions(self, addr, size, count=None):
        """[(address, length, text, bytes)] of the code at [addr, addr + size), at most
        `count`."""
        target = self.target
        data = LC.read(self.process, addr, size)
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

    def disassemble(self, addr, count):
        for size in (15 * count, 16):
            try:
                return self._instructions(addr, size, count)
            except D.ReadError:
                continue
        return []

    def function_at(self, addr):
        target = self.target
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

    # -- Breakpoints --

    def break_at(self, pc):
        bp = self.target.BreakpointCreateByAddress(pc)
        if not bp.IsValid():
            raise Error("LLDB could not set a breakpoint")
        return bp.GetID()

    def watch_registrations(self):
        global _hook
        target = self.target
        if not target.IsValid():
            raise Error("stackmap break: no target; load the program first (`file PROGRAM`)")
        if _hook is not None and _hook[0] == target and \
                target.FindBreakpointByID(_hook[1]).IsValid():
            return
        bp = target.BreakpointCreateByName(R.HOOK)
        if not bp.IsValid():
            return
        bp.AddName(HOOK_NAME)
        bp.SetScriptCallbackFunction(__name__ + "._jit_hook")
        _hook = (target, bp.GetID())

    # -- JIT images (load-images) --

    def has_module_at(self, addr):
        return self.target.ResolveLoadAddress(addr).GetModule().IsValid()

    def add_image(self, src, data, fns):
        return lldb_images.load_image(self.target, src, data, fns)


HOOK_NAME = "jitmap-jit-hook"
_hook = None  # (target, breakpoint id) of the breakpoint on __jit_debug_register_code


def _jit_hook(frame, bp_loc, internal_dict):
    """The callback of the breakpoint on __jit_debug_register_code: set the breakpoints of
    watched records that the new JIT code has, then let the program go on (return False)."""
    try:
        for line in SESSION.registered(Lldb(lldb.SBExecutionContext(frame))):
            print(line)
    except Exception as e:  # never a traceback from inside LLDB's stop handling
        print("warning: jitmap: while resolving `stackmap break`: %s" % e)
    return False


