"""Where code can be in the process or core LLDB debugs, and which of LLDB's steps are guesses:
libjitmap's map of a live process or core (codemap.py) where LLDB's own regions cost a request
each, the build of the file LLDB reads for a module against the one the process maps, the
CFI's proof of a step LLDB took from a module into code a perf map names, and the functions
LLDB 19 splits into parts. :class:`Where` is the half of the adapter's Debugger (lldb_adapter.py
derives from it) that answers these; the functions below are what it and the adapter's frames
share.

Below the LLDB adapter; written against the SB API of LLDB 14, as it is.
"""
import bisect
import ctypes
import re

import lldb

from . import codemap
from . import discovery as D
from . import native as N
from . import perfmaps as P
from . import session as S

INVALID = 0xFFFFFFFFFFFFFFFF  # LLDB_INVALID_ADDRESS


def read(process, addr, size):
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




def find_section(section_iterable, name, depth=0):
    """ELF sections are nested under their PT_LOAD segment in LLDB: search the tree."""
    for sec in section_iterable:
        if sec.GetName() == name:
            return sec
        if depth < 3 and sec.GetNumSubSections():
            got = find_section([sec.GetSubSectionAtIndex(i) for i in range(sec.GetNumSubSections())],
                                name, depth + 1)
            if got is not None:
                return got
    return None




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


def split_caveat(frame):
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
    mem = N.read_mem_callback(lambda at, n: read(process, at, n))
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
    sec = find_section([module.GetSectionAtIndex(k) for k in range(module.GetNumSections())],
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



class Where:
    """Where code can be, and which steps are guesses, for one command's execution context:
    the Debugger (lldb_adapter.Lldb) that derives from it has `target`, `process`, `stop_id`,
    `live_pid`, `arch_name` and `check_process`."""

    def init_where(self):
        self._builds = {}   # {stop id: {module path: why it is another build, or None}}
        self._region_list = None  # the process's memory regions, read at the first need
        self._guesses = {}  # {(thread, list): (frames checked, first guessed step, its level)}
        self._core_path = False  # the core file LLDB debugs (core_map): not asked yet
        self._made_up = {}  # {level: why}: frames LLDB's unwinder made up (unproven_step)

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
            maps = S.SESSION.perf_maps(self)
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
                                      lambda a, n: bytes(read(self.process, a, n)),
                                      level == 1)
        except (P.Unavailable, S.CommandError, OSError):
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
                self._core_path = S.SESSION.core_file(self, self.check_process())
            except Exception:
                self._core_path = None
        core = S.SESSION.core(self._core_path) if self._core_path else None

        def opener():
            try:
                return codemap.CodeMap(core=core)  # the session's open core, asked
            except (OSError, AttributeError):
                return None
        return codemap.for_stop(("core", core), opener) if core is not None else None

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

