"""JIT code that a perf map or a jitdump file names, in GDB (perfmaps.py): the runtimes that
never register their code with GDB (Node.js with --perf-basic-prof, CPython -X perf, ...); and
the end of a stack where no code lives.

- An unwinder ("jitmap-perf-map", `info unwinder`) for the frames GDB cannot unwind there: a
  frame in code a perf map names, and a frame in code GDB has no symbol for whose caller, by
  the frame-pointer chain, is such code (V8 copies builtins beside its JIT code). It steps as
  jitmap-stack does (perfmaps.Stepper, libjitmap's stacker): a jitdump's CFI, the code's own
  instructions from the map's start (CPython's trampolines keep no frame pointer; BEAM leaves
  its frame before a tail call's jump) or a frame-pointer prologue there prove the step; the
  frame-pointer chain without them is a guess, which gives GDB the caller's PC and stack and
  frame pointers only (no other register of it is known). Where the caller's PC lies where no
  code can be (BEAM's saved rbp 0 at the bottom of a process), or no step can be taken, it
  ends the walk at that frame: its caller is itself, so GDB stops ("previous frame identical
  to this frame"), rather than GDB's own fallback reading stack words as frames. It declines
  a frame whose code a JIT entry registered with GDB holds, even when a perf map or jitdump
  names it (LLVM's lli writes a jitdump of the objects it also registers): GDB's JIT
  machinery unwinds those, the reader or GDB's DWARF unwinder from the entry's CFI, and a
  Python unwinder comes before GDB's DWARF unwinder, as the process model ranks a registered
  image above a perf map.
- An unwinder ("jitmap-no-code") for a frame above the innermost whose PC lies where no code can
  be (codemap.py: /proc/PID/maps, a core's segments): GDB's own unwinders took a stack word for
  a return address. It gives the frame an ID inner to its callee's, so that GDB stops there
  ("previous frame inner to this frame"), where GDB alone goes on reading the stack as frames.
- Names: jitmap's frame filter (gdb_frames.py) asks :func:`code_at` for a frame GDB has no name
  for: the map's name (a runtime's continuation, a return address at a code object's first
  byte, is that object's), and the source line a jitdump gives.

The files are read by the commands' session (commands.Session.perf_maps), again at most once
per stop the user sees: a live process's own (/tmp/perf-PID.map, the jitdump files it maps),
and those named with `jitmap perf-map FILE`. The perf-map unwinder is registered with GDB only
once some file was found (at a stop, or by that command): a program without perf maps pays
nothing per frame for it.
"""
import os
import traceback

import gdb
import gdb.unwinder

from . import commands as C
from . import gdb_adapter as A
from . import gdb_reader
from . import native as N
from . import perfmaps as P


def _debug():
    if os.environ.get("JITMAP_DEBUG"):
        traceback.print_exc()


def maps():
    """The selected inferior's perf maps (perfmaps.PerfMaps), or None; never raises."""
    try:
        inf = gdb.selected_inferior()
        if inf is None or not inf.pid:
            return None
        return C.SESSION.perf_maps(A.GDB, key=(inf.num, inf.pid))
    except Exception:
        _debug()
        return None


def code_at(frame):
    """What a perf map or jitdump says of `frame`'s code (a gdb.Frame: perfmaps.PerfMaps.lookup's
    dict), or None."""
    m = maps()
    if m is None:
        return None
    try:
        stepper = _stepper(m, frame.architecture())
        try:
            return m.code_at(frame.pc(), frame.level() > 0, stepper)
        finally:
            if stepper is not None:
                stepper.close()
    except gdb.error:
        return None


def _stepper(m, arch_obj):
    """A perfmaps.Stepper over `m` for the selected inferior, or None."""
    lib = N.lib()
    arch = lib.jitmap_arch_from_name(arch_obj.name().encode())
    if not arch:
        return None
    inf = gdb.selected_inferior()
    cm = A.code_map()
    return P.Stepper(m, arch, lambda a, n: inf.read_memory(a, n).tobytes(),
                     cm.code_at if cm is not None else None)


def _named_by_gdb(pc):
    """Whether GDB has a symbol for `pc` (GDB 12 cannot say: then yes, and GDB keeps the
    frame)."""
    fmt = getattr(gdb, "format_address", None)
    if fmt is None:
        return True
    try:
        return "<" in fmt(pc)
    except gdb.error:
        return True


def _registered_jit_code(pc):
    """Whether `pc` is code of a JIT entry registered with GDB (see the module's docstring):
    the reader's answer when it is loaded (the entries GDB handed it); without it, whether
    GDB's own reader made an objfile of the entry that holds `pc` (BFD names them
    <in-memory@ADDRESS>)."""
    held = gdb_reader.holds_code(pc)
    if held is not None:
        return held
    if not gdb_reader.jit_objfiles_of_gdb():
        return False
    find = getattr(gdb.current_progspace(), "objfile_for_address", None)  # GDB 14
    if find is not None:
        objfile = find(pc)
        return objfile is not None and (objfile.filename or "").startswith("<in-memory@")
    try:
        return " of <in-memory@" in gdb.execute("info symbol 0x%x" % pc, to_string=True)
    except gdb.error:
        return False


class _FrameId:
    """What create_unwind_info takes (GDB 14 has gdb.unwinder.FrameId): gdb.Values."""

    def __init__(self, sp, pc):
        self.sp = gdb.Value(sp)
        self.pc = gdb.Value(pc)


def _pc(pending):
    """The pending frame's PC (GDB 14's PendingFrame.pc() is cheaper than reading it)."""
    fn = getattr(pending, "pc", None)
    return int(fn()) if fn is not None else int(pending.read_register("pc"))


class PerfMapUnwinder(gdb.unwinder.Unwinder):
    def __init__(self):
        super().__init__("jitmap-perf-map")

    def __call__(self, pending):
        m = maps()
        if m is None:
            return None
        try:
            return self._unwind(m, pending)
        except Exception:
            _debug()
            return None

    def _unwind(self, m, pending):
        lib = N.lib()
        arch = lib.jitmap_arch_from_name(pending.architecture().name().encode())
        if not arch:
            return None
        pc = _pc(pending)
        outer = pending.level() > 0
        stepper = _stepper(m, pending.architecture())
        if stepper is None:
            return None
        try:
            at = stepper.code_at(pc, not outer)
            if _registered_jit_code(at if at is not None else pc - 1 if outer and pc else pc):
                return None
            sym = m.lookup(at) if at is not None else None
            if sym is None and _named_by_gdb(pc - 1 if outer and pc else pc):
                return None
            # Every register the architecture tracks that this frame knows: the code's own
            # instructions carry the callee-saved ones they leave alone.
            regs = {}
            for regno in range(lib.jitmap_arch_num_core_regs(arch)):
                name = N.text(lib.jitmap_reg_name(arch, regno))
                if not name or regno == lib.jitmap_reg_pc(arch):
                    continue
                try:
                    v = pending.read_register(name)
                    if not v.is_optimized_out:
                        regs[regno] = int(v)
                except (gdb.error, ValueError):
                    pass
            step = stepper.step(pc, regs, not outer)
        finally:
            stepper.close()
        sp_no, fp_no = lib.jitmap_reg_sp(arch), lib.jitmap_reg_fp(arch)
        pc_name = N.text(lib.jitmap_reg_name(arch, lib.jitmap_reg_pc(arch))) or "pc"
        if step.rc == 0 and sym is None and m.code_at(step.caller_pc, True) is None:
            return None  # unknown code, not between JIT frames: GDB's own guess stands
        if step.rc != 0 and sym is None:
            return None
        if step.rc != 0:
            # The end of this stack: the caller is this frame itself, so GDB stops here.
            info = pending.create_unwind_info(_FrameId(regs.get(sp_no, 0), sym["lo"]))
            caller_pc, saved = pc, regs
        else:
            info = pending.create_unwind_info(_FrameId(step.cfa, sym["lo"] if sym else pc))
            caller_pc, saved = step.caller_pc, dict(step.caller)
            if step.guess:  # a guess: the chain's registers only, to go on walking
                saved = {r: v for r, v in saved.items() if r in (sp_no, fp_no)}
                A.note_guess(caller_pc, saved.get(sp_no), "the caller of the frame at 0x%x was "
                            "found by a guess (%s)" % (pc, step.why))
        values = [(pc_name, caller_pc)]
        for regno, value in sorted(saved.items()):
            name = N.text(lib.jitmap_reg_name(arch, regno))
            if name and name != pc_name:
                values.append((name, value))
        for reg, value in values:
            kind = pending.read_register(reg).type
            info.add_saved_register(reg, gdb.Value(value).cast(kind))
        return info


class NoCodeUnwinder(gdb.unwinder.Unwinder):
    """A frame above the innermost whose PC lies where no code can be: the end of the stack."""

    def __init__(self):
        super().__init__("jitmap-no-code")

    def __call__(self, pending):
        try:
            if pending.level() == 0:
                return None  # the thread is there: whatever the PC, it is frame 0
            pc = _pc(pending)
            # A caller's PC of 0 is no code either: GDB ends there only when the unwinder
            # below said the return address is undefined; its own stepping through code it
            # knows nothing of (a deleted executable's) prints a frame at 0x0.
            if pc != 0:
                cm = A.code_map()
                if cm is None or not cm.no_code(pc, False):
                    return None
            # An ID whose stack address is 0, inner to the frame below: GDB ends the walk.
            return pending.create_unwind_info(_FrameId(0, pc))
        except Exception:
            _debug()
            return None


_registered = False
_unwinder = None


def _register_unwinder(invalidate=True):
    global _unwinder
    _unwinder = PerfMapUnwinder()
    gdb.unwinder.register_unwinder(None, _unwinder, replace=True)
    if invalidate:
        gdb.invalidate_cached_frames()


def frames_survive_invalidation():
    """Whether a frame GDB holds survives gdb.invalidate_cached_frames (GDB 13's
    frame_info_ptr reinflates it; GDB 12's raw frame_info* would dangle)."""
    try:
        return int(gdb.VERSION.split(".")[0]) >= 13
    except ValueError:
        return False


def refresh(*_args, invalidate=True):
    """At a stop, after `jitmap perf-map`, and before each backtrace (gdb_frames.py: a core
    opened after jitmap loaded brings no stop, and its notes may carry perf maps): the files
    read again (once per stop); the unwinder registered once there are any. Never while GDB
    loads a core (new_objfile): GDB's own failure there, out of memory on a damaged core's
    JIT entry, recurred as it quit when this read the core then."""
    if _unwinder is None and maps() is not None:
        _register_unwinder(invalidate)


def register():
    global _registered
    if _registered:
        return
    _registered = True
    A.GDB.forget_hooks.append(refresh)  # `jitmap perf-map` added files
    gdb.unwinder.register_unwinder(None, NoCodeUnwinder(), replace=True)
    gdb.events.stop.connect(refresh)
    refresh()  # loaded after an attach: its stop has passed
