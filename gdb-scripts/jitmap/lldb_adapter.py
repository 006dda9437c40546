"""LLDB as jitmap sees it: :class:`commands.Debugger` over LLDB, at the bottom of jitmap's LLDB
side.

The commands (lldb_commands.py) and the frame provider (lldb_frames.py) import this module;
it imports neither. Here: :class:`Lldb`, made for one command's execution context (the
selected frame and thread from ``exe_ctx``, registers through ``SBFrame.FindRegister``, memory
through ``SBProcess.ReadMemory``, symbols, sections and breakpoints through ``SBTarget``),
where code can be in the process or core and which frames are guesses, the hook on the JIT's
registrations (`stackmap break`), and the JIT images `stackmap load-images` adds. What a
command computes and prints is commands.py's.

Written against the SB API of LLDB 14 (nothing newer is used); tested with LLDB 16 and 19.
"""
import bisect
import ctypes
import glob
import os
import re
import shutil
import tempfile

import lldb

from . import codemap
from . import commands as C
from . import discovery as D
from . import model as M
from . import native as N
from . import perfmaps as P
from . import report as R

INVALID = 0xFFFFFFFFFFFFFFFF  # LLDB_INVALID_ADDRESS
MAX_MADE_UP = 8  # frames LLDB may have made up above a step against the CFI, at most
SESSION = C.SESSION
Error = C.CommandError

_library_hint = None


def set_library_hint(directory):
    """Where the entry script says libjitmap is (the build directory, in a build tree)."""
    global _library_hint
    _library_hint = directory or None


def _read(process, addr, size):
    """`size` bytes of target memory; D.ReadError with LLDB's reason."""
    if size == 0:
        return b""
    if addr < 0 or addr + size > 1 << 64:
        raise D.ReadError("address 0x%x is out of range" % addr)
    err = lldb.SBError()
    data = process.ReadMemory(addr, size, err)
    if err.Fail() or data is None or len(data) != size:
        raise D.ReadError(err.GetCString() or "cannot read memory at 0x%x" % addr)
    return data


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


# -- Frames --


def is_provided(frame):
    """Whether an SBFrame is a frame a provider made without a PC (an interpreter frame):
    there is nothing under it for jitmap to read."""
    synthetic = getattr(frame, "IsSynthetic", None)
    return bool(synthetic and synthetic() and frame.GetPC() in (0, INVALID))


_major = None


def _lldb_major():
    """LLDB's major version (0 when it does not say)."""
    global _major
    if _major is None:
        m = re.search(r"lldb version (\d+)", lldb.SBDebugger.GetVersionString() or "")
        _major = int(m.group(1)) if m else 0
    return _major


def _split_caveat(frame):
    """Why LLDB 19 may have lost the callers of `frame` (an SBFrame), or None.

    GCC at -O2 splits a function with an unlikely path into a hot part and a .cold part below
    it (DW_AT_ranges, the hot range first). LLDB 19 makes it one Function starting at its
    lowest address (it sorts the ranges since llvm-project #91343; LLDB 16 dropped such a
    function and used the ELF symbols) and unwinds a PC in a higher part with the CFI and the
    instructions found from that start: the frame's caller is wrong or missing. LLDB 20 and
    21 rework this (#115836, #122440, #133072, #137006); untested there, so LLDB 19 only."""
    if _lldb_major() != 19:
        return None
    fn = frame.GetFunction()
    if not fn.IsValid():
        return None
    block = fn.GetBlock()
    n = block.GetNumRanges()
    if n < 2:
        return None
    target = frame.GetThread().GetProcess().GetTarget()
    ranges = sorted((block.GetRangeStartAddress(i).GetLoadAddress(target),
                     block.GetRangeEndAddress(i).GetLoadAddress(target)) for i in range(n))
    start = fn.GetStartAddress().GetLoadAddress(target)
    pc = frame.GetPC()
    if start != ranges[0][0] or ranges[0][0] <= pc < ranges[0][1]:
        return None  # the PC is in the part LLDB 19 unwinds right
    part = next(((lo, hi) for lo, hi in ranges if lo <= pc < hi), None)
    if part is None:
        return None
    return ("LLDB 19 may have lost the callers of frame %d: %s is split into parts (the PC is "
            "in the part at 0x%x, another starts lower, at 0x%x) and LLDB 19 unwinds it with "
            "the lowest part's CFI; built with -fno-reorder-blocks-and-partition, GCC does not "
            "split it (lldb.md in jitmap's documentation, \"LLDB 19\")" % (frame.GetFrameID(), fn.GetName(), part[0],
                                                       ranges[0][0]))


def _build_id_at(process, addr):
    """The build ID (lowercase hex) of the ELF image whose headers are at `addr` in the
    process's memory (libjitmap reads it: jitmap_image_build_id_at), or None."""
    mem = N.read_mem_callback(lambda at, n: _read(process, at, n))
    target = N.Target(None, N.READ_REG(0), mem)
    out = (ctypes.c_uint8 * 64)()
    n = N.lib().jitmap_image_build_id_at(ctypes.byref(target), addr, out, len(out))
    return bytes(out[:n]).hex() if n else None


_cfis = {}  # {(module's UUID or path, .eh_frame's load address): perfmaps.Cfi or None}
MAX_EH_FRAME = 64 << 20  # libjitmap's own cap (jitmap_cfi_new)


def _module_cfi(target, module, arch):
    """libjitmap's reading of `module`'s .eh_frame (perfmaps.Cfi), kept for the session, or
    None (no such section, unreadable, malformed). The bytes are the file's that LLDB read
    (a core may hold no copy of them); .eh_frame's pointers are relative to its place, so
    they read as the process's copy does."""
    sec = _find_section([module.GetSectionAtIndex(k) for k in range(module.GetNumSections())],
                        ".eh_frame")
    if sec is None:
        return None
    addr = sec.GetLoadAddress(target)
    if addr in (0, INVALID):
        return None
    key = (module.GetUUIDString() or module.GetFileSpec().fullpath, addr, arch)
    if key not in _cfis:
        _cfis[key] = None
        size = sec.GetByteSize()
        if 0 < size <= MAX_EH_FRAME:
            data = sec.GetSectionData()
            err = lldb.SBError()
            raw = data.ReadRawData(err, 0, data.GetByteSize()) if data.GetByteSize() else None
            if err.Success() and raw:
                try:
                    _cfis[key] = P.Cfi(arch, raw, addr)
                except P.Unavailable:
                    pass
    return _cfis[key]


def _sb_regs(frame, arch):
    """{DWARF number: value} of the registers LLDB gives for `frame` (an SBFrame)."""
    lib = N.lib()
    regs = {}
    for regno in range(lib.jitmap_arch_num_core_regs(arch)):
        if regno == lib.jitmap_reg_pc(arch):
            continue
        name = N.text(lib.jitmap_reg_name(arch, regno))
        v = frame.FindRegister(name) if name else None
        if v is None or not v.IsValid():
            continue
        err = lldb.SBError()
        value = v.GetValueAsUnsigned(err, 0)
        if err.Success():
            regs[regno] = value
    return regs


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
                                        lambda a, n: bytes(_read(self.dbg.process, a, n)),
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


def _mapped_core(pid):
    """The core file of process `pid` that LLDB has open, for an LLDB that cannot say which
    (before 17: no SBProcess.GetCoreFile). LLDB maps the cores it opens: of the files this
    process maps, the ELF files libjitmap opens as a core with a thread `pid` (the main
    thread; the one that dumped it comes first, maybe another); None unless exactly one
    is."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split(None, 5)[5].rstrip("\n") for line in f
                     if len(line.split(None, 5)) == 6}
    except OSError:
        return None
    lib = N.lib()
    opts = N.CoreOpts(N.CORE_NO_FILES)
    found = []
    for path in sorted(p for p in paths if p.startswith("/") and not p.endswith(")")):
        try:
            with open(path, "rb") as f:
                if f.read(4) != b"\x7fELF":
                    continue
        except OSError:
            continue
        err = N.Error()
        core = lib.jitmap_core_open(path.encode(), ctypes.byref(opts), ctypes.byref(err))
        if not core:
            continue
        try:
            n = lib.jitmap_core_num_threads(core)
            if any(lib.jitmap_core_thread(core, i).contents.tid == pid for i in range(n)):
                found.append(path)
        finally:
            lib.jitmap_core_free(core)
    return found[0] if len(found) == 1 else None


class Lldb:
    """commands.Debugger over LLDB, for one command's execution context (the session keeps
    what it read while LLDB's stop ID stays the same)."""

    name = "lldb"
    library_hint = property(lambda self: _library_hint)

    def __init__(self, exe_ctx):
        self.exe_ctx = exe_ctx
        self.target = exe_ctx.GetTarget()
        self.process = exe_ctx.GetProcess()
        self._files = None  # (descriptors, objects), found once per command
        self.caveat = None  # the first _split_caveat of the frames walked
        self._builds = {}   # {stop id: {module path: why it is another build, or None}}
        self._region_list = None  # the process's memory regions, read at the first need
        self._guesses = {}  # {(thread, list): (frames checked, first guessed step, its level)}
        self._core_path = False  # the core file LLDB debugs (core_map): not asked yet
        self._made_up = {}  # {level: why}: frames LLDB's unwinder made up (unproven_step)

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
            return _mapped_core(p.GetProcessID())
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
            if _image_dir is not None and os.path.dirname(path) == _image_dir:
                continue  # JIT images that `stackmap load-images` added: found as JIT entries
            sec = _find_section([module.GetSectionAtIndex(k) for k in range(module.GetNumSections())],
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
        return _read(self.process, addr, size)

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
        if frame.IsValid() and is_provided(frame):
            raise Error("jitmap: frame %d is an interpreter frame (jitmap's frame provider "
                        "shows it under its JIT frame, whose `stackmap info` has its values)"
                        % level)
        # The frames below it made it (or failed to): the first caveat among them.
        below = min(level, thread.GetNumFrames()) if level > 0 else 0
        for i in range(below):
            if self.caveat is None:
                self.caveat = _split_caveat(thread.GetFrameAtIndex(i))
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
            if is_provided(f):
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
                self.caveat = _split_caveat(f)
            prev = f
            yield LldbFrame(self, f)

    def _note(self, why):
        """The caveat of the frames walked, unless one was noted already."""
        if self.caveat is None:
            self.caveat = why

    def unproven_step(self, callee, caller, level):
        """LLDB's step from `callee` (frame level - 1, an SBFrame) to `caller` (frame
        `level`), checked where LLDB's unwinder reached code a perf map or jitdump names from
        a frame in a module: (the caller's PC and SP by the module's CFI, why) when that CFI
        proves another caller (LLDB 16 takes a word below V8's CEntry frame, a stale return
        address into JIT code, for Builtin_AtomicsWait's caller), else None (the same caller,
        or nothing proves one: no CFI there, the CFI's return address follows no call)."""
        if level in self._made_up:
            return None, None, self._made_up[level]
        try:
            maps = C.SESSION.perf_maps(self)
            pc = caller.GetPC()
            if maps is None or not pc or (maps.lookup(pc - 1) or maps.lookup(pc)) is None:
                return None
            module = callee.GetModule()
            if not module.IsValid() or is_provided(callee) or self.other_build(callee):
                return None
            arch = N.lib().jitmap_arch_from_name(self.arch_name().encode())
            cfi = _module_cfi(self.target, module, arch) if arch else None
            if cfi is None or not cfi.covers(callee.GetPC() - (1 if level > 1 else 0)):
                return None
            cpc, regs, cfa = cfi.step(callee.GetPC(), _sb_regs(callee, arch),
                                      lambda a, n: bytes(_read(self.process, a, n)),
                                      level == 1)
        except (P.Unavailable, C.CommandError, OSError):
            return None
        sp = regs.get(N.lib().jitmap_reg_sp(arch), cfa)
        if cpc == pc and sp == caller.GetSP():
            return None
        name = callee.GetFunctionName() or "0x%x" % callee.GetPC()
        return cpc, sp, ("LLDB's unwinder took 0x%x (SP 0x%x) for the caller of frame %d (%s), "
                         "but the CFI of %s proves 0x%x (SP 0x%x): 0x%x is a word LLDB read from "
                         "the stack, not that frame's return address" % (
                             pc, caller.GetSP(), level - 1, name,
                             module.GetFileSpec().GetFilename(), cpc, sp, pc))

    # -- Where code can be, and which files are the process's --

    def guess_below(self, key, level, frame_at):
        """Why the registers of frame `level` are a guess: the first step below it LLDB took
        through no module or another build's file; `frame_at(k)` gives frame k. Each frame is
        looked at once per command, however many frames ask (a backtrace asks for each)."""
        k, why, at = self._guesses.get(key, (0, None, None))
        while why is None and k < level:
            f = frame_at(k)
            if is_provided(f) or k in self._made_up:
                pass  # an interpreter frame, or one left out: no step of the stack's
            elif not f.GetModule().IsValid():
                # No file LLDB read holds the code (its file missing, or code LLDB has no
                # object of): LLDB unwound it by its own heuristics.
                why = ("frame %d (0x%x) is in no module LLDB has read: its step is LLDB's "
                       "guess" % (k, f.GetPC()))
            else:
                other = self.other_build(f)
                if other:
                    why = "frame %d was unwound through a file that is not the process's: " \
                          "%s" % (k, other)
            at = k if why else None
            k += 1
        self._guesses[key] = (k, why, at)
        return why if why is not None and at < level else None

    def _code_map(self):
        """libjitmap's map of a live process on this machine (its /proc/PID/maps, read at the
        first question and kept for the stop: codemap.py), or None (a core, a remote process).
        LLDB's own list of regions costs one request to lldb-server a region, milliseconds
        at each stop."""
        try:
            pid = self.live_pid()
            key = (pid, self.process.GetUniqueID(), self.stop_id()) if pid else None
        except Exception:
            key = None

        def opener():
            try:
                return codemap.CodeMap(pid=key[0])
            except (OSError, AttributeError):
                return None  # an older library, or no /proc: LLDB's regions
        # A core: none here, and the core's own map (core_map) is left open.
        return codemap.for_stop(key, opener) if key is not None else None

    def core_map(self):
        """libjitmap's reading of the core LLDB debugs (codemap.CodeMap, kept while it stays
        open; which core, asked of the session once per command: LLDB's word, else the one
        `stackmap core` opened), or None: a live process, or a core libjitmap cannot open."""
        if self._core_path is False:
            try:
                self._core_path = C.SESSION.core_file(self, self.check_process())
            except Exception:
                self._core_path = None
        core = self._core_path

        def opener():
            try:
                return codemap.CodeMap(core=core)
            except (OSError, AttributeError):
                return None
        return codemap.for_stop(("core", core), opener) if core else None

    def _regions(self):
        """The process's memory regions, [(start, end, mapped, executable)] sorted, read once
        per command (live: the process's map; a core: its segments)."""
        if self._region_list is None:
            out = []
            regions = self.process.GetMemoryRegions()
            info = lldb.SBMemoryRegionInfo()
            for i in range(regions.GetSize()):
                if regions.GetMemoryRegionAtIndex(i, info):
                    out.append((info.GetRegionBase(), info.GetRegionEnd(), info.IsMapped(),
                                info.IsExecutable()))
            out.sort()
            self._region_list = out
        return self._region_list

    def _region(self, addr):
        regions = self._regions()
        k = bisect.bisect_right(regions, (addr, float("inf"))) - 1
        if k >= 0 and regions[k][0] <= addr < regions[k][1] and regions[k][2]:
            return regions[k]
        return None

    def _code_region(self, addr):
        """Whether LLDB knows code at `addr`: an executable memory region, or a module's
        executable section (a core written by gcore holds no segment for the code it left
        in files)."""
        r = self._region(addr)
        if r is not None and r[3]:
            return True
        sec = self.target.ResolveLoadAddress(addr).GetSection()
        return bool(sec.IsValid() and sec.GetPermissions() & lldb.ePermissionsExecutable)

    def no_code(self, pc):
        """Why no code can be at a return address `pc` (neither at it nor at the call before
        it), or None; None too when LLDB knows no region at all (it cannot tell)."""
        cm = self._code_map()
        if cm is not None:
            if not pc or not cm.no_code(pc, False):
                return None
            return cm.where(pc) or "0x%x is not in an executable mapping" % pc
        if not pc or not self._regions() or self._code_region(pc) or self._code_region(pc - 1):
            return None
        if self._region(pc) is not None:
            return "0x%x is in a mapping that is not executable" % pc
        return "0x%x is in no mapping of the process" % pc

    def no_code_at(self, pc):
        """commands.Debugger: why no code can be at an outer frame's `pc`, or None."""
        return self.no_code(pc)

    def other_build(self, frame):
        """Why the file LLDB reads for the module of `frame` (an SBFrame) is not the one the
        process maps (their build IDs differ), or None."""
        module = frame.GetModule()
        if not module.IsValid():
            return None
        key = module.GetFileSpec().fullpath
        memo = self._builds.setdefault(self.stop_id(), {})
        if key in memo:
            return memo[key]
        memo[key] = None
        ours = (module.GetUUIDString() or "").replace("-", "").lower()
        header = module.GetObjectFileHeaderAddress().GetLoadAddress(self.target)
        if ours and header not in (0, lldb.LLDB_INVALID_ADDRESS):
            theirs = _build_id_at(self.process, header)
            if theirs and theirs != ours:
                memo[key] = ("LLDB reads %s, another build than the one the process maps "
                             "(build ID %s; the process's %s)" % (key, ours, theirs))
        return memo[key]

    def unwind_note(self):
        """commands.Debugger: what may be wrong with the frames walked so far."""
        return self.caveat

    # -- Code and symbols --

    def _instructions(self, addr, size, count=None):
        """[(address, length, text, bytes)] of the code at [addr, addr + size), at most
        `count`."""
        target = self.target
        data = _read(self.process, addr, size)
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
        return _load_image(self.target, src, data, fns)


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


# -- JIT images --


_image_dir = None


def _new_image_dir():
    """A temporary directory for the images of this LLDB process. LLDB keeps the files it
    loaded modules from open, and does not always run Python's exit handlers: the directories
    of LLDB processes that are gone are removed here instead."""
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


def _load_image(target, src, data, fns):
    """Add one JIT image as a module; place the sections holding `fns` [(name, address)]."""
    global _image_dir
    what = src.describe()
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
