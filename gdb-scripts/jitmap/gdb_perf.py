"""JIT code that a perf map or a jitdump file names, in GDB (perfmaps.py): the runtimes that
never register their code with GDB (Node.js with --perf-basic-prof, CPython -X perf, ...).

- An unwinder ("jitmap-perf-map", `info unwinder`) for the frames GDB cannot unwind there: a
  frame in code a perf map names, and a frame in code GDB has no symbol for whose caller, by
  the frame-pointer chain, is such code (V8 copies builtins beside its JIT code). It steps by
  the frame pointer with libjitmap's checks (perfmaps.frame_pointer_step) and declines every
  other frame, which GDB's own unwinders then take as before. It declines too a frame whose
  code a JIT entry registered with GDB holds, even when a perf map or jitdump names it (LLVM's
  lli writes a jitdump of the objects it also registers): GDB's JIT machinery unwinds those,
  the reader or GDB's DWARF unwinder from the entry's CFI, and a Python unwinder comes before
  GDB's DWARF unwinder, so a frame-pointer step taken there would lose every callee-saved
  register the CFI restores (and skip the caller of a function without a frame pointer), as
  the process model already ranks a registered image above a perf map.
- Names: jitmap's frame filter (gdb_frames.py) asks :func:`code_at` for a frame GDB has no name
  for: the map's name, and the source line a jitdump gives.

The files are read by the commands' session (commands.Session.perf_maps), again at most once
per stop the user sees: a live process's own (/tmp/perf-PID.map, the jitdump files it maps),
and those named with `jitmap perf-map FILE`. The unwinder is registered with GDB only once
some file was found (at a stop, or by that command): a program without perf maps pays nothing
per frame.
"""
import os
import traceback

import gdb
import gdb.unwinder

from . import commands as C
from . import gdb_reader
from . import native as N
from . import perfmaps as P


def _debug():
    if os.environ.get("JITMAP_DEBUG"):
        traceback.print_exc()


def maps():
    """The selected inferior's perf maps (perfmaps.PerfMaps), or None; never raises."""
    from .gdb_commands import GDB
    try:
        inf = gdb.selected_inferior()
        if inf is None or not inf.pid:
            return None
        return C.SESSION.perf_maps(GDB, key=(inf.num, inf.pid))
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
        return m.code_at(frame.pc(), frame.level() > 0)
    except gdb.error:
        return None


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
        pc = int(pending.read_register("pc"))
        outer = pending.level() > 0
        if _registered_jit_code(pc - 1 if outer and pc else pc):
            return None
        sym = m.code_at(pc, outer)
        if sym is None and _named_by_gdb(pc - 1 if outer and pc else pc):
            return None
        sp_no, fp_no = lib.jitmap_reg_sp(arch), lib.jitmap_reg_fp(arch)
        name = {r: N.text(lib.jitmap_reg_name(arch, r)) for r in (sp_no, fp_no)}
        regs = {r: int(pending.read_register(name[r])) for r in (sp_no, fp_no)}
        inf = gdb.selected_inferior()
        try:
            caller_pc, caller, cfa = P.frame_pointer_step(
                arch, pc, regs, lambda a, n: inf.read_memory(a, n).tobytes(), not outer)
        except P.Unavailable:
            return None
        if sym is None and m.code_at(caller_pc, True) is None:
            return None  # unknown code, not between JIT frames: GDB's own guess stands
        info = pending.create_unwind_info(_FrameId(cfa, sym["lo"] if sym else pc))
        pc_name = N.text(lib.jitmap_reg_name(arch, lib.jitmap_reg_pc(arch))) or "pc"
        saved = dict(caller)
        saved[sp_no] = cfa
        values = [(pc_name, caller_pc)]
        for regno, value in sorted(saved.items()):
            reg = N.text(lib.jitmap_reg_name(arch, regno))
            if reg and reg != pc_name:
                values.append((reg, value))
        for reg, value in values:
            kind = pending.read_register(reg).type
            info.add_saved_register(reg, gdb.Value(value).cast(kind))
        return info


_registered = False
_unwinder = None


def refresh(*_args):
    """At a stop (and after `jitmap perf-map`): the files read again; the unwinder registered
    once there are any."""
    global _unwinder
    if _unwinder is None and maps() is not None:
        _unwinder = PerfMapUnwinder()
        gdb.unwinder.register_unwinder(None, _unwinder, replace=True)
        gdb.invalidate_cached_frames()


def register():
    global _registered
    if _registered:
        return
    _registered = True
    gdb.events.stop.connect(refresh)
    refresh()  # loaded after an attach: its stop has passed
