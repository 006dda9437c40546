"""A JIT frame's stackmap values where GDB shows a frame's variables: `bt full`, `info locals`
through frame filters, MI's -stack-list-locals / -stack-list-variables (with frame filters, as
IDEs run them) and DAP's scopes.

A frame filter ("jitmap", global) decorates every frame; the decorator looks its frame up
only when GDB asks for locals (plain `bt` does not: it pays only the frame filter's own cost,
measured in bench/README.md). A frame at a stackmap record gets one local per value the record
holds, named through the names API (names.py) or by role and index: a statepoint's deopt
values `deopt0`..., its GC pointer pairs `gc_base0`/`gc_derived0`..., its allocas
`gc_alloca0`...; another record's locations `loc0`... (a statepoint's three header constants
are not values of the program and are not shown). The values are `info stackmap`'s, outer
frame rule included: a value jitmap cannot know is printed as `<unavailable: REASON>`, never
as a number (a printer recognises the marker that stands for it).

`disable frame-filter global jitmap` turns it off; GDB's own locals of a frame (DWARF) come
first and are kept.

The filter runs only for a backtrace it adds to: one with a frame in code that has a stackmap
(a JIT entry's, or a record at the frame's PC), a frame GDB has no name for that a perf map or
jitdump names, or interpreter frames from the names API (`_needed`, decided once per stop and
thread). Any other backtrace GDB prints itself, as without jitmap: GDB's frame-filter printer
(py_print_frame in gdb/python/py-framefilter.c, GDB 13 through 18) writes " at " before
whatever a decorator's filename() gives, and FrameDecorator gives a library's name for a frame
without a symtab, so a library frame GDB alone prints `from LIB` would print `at LIB` (MI:
`file=` where GDB says `from=`); no decorator can make it print " from ". `info frame-filter`
says the filter is enabled only while it is needed.

GDB calls the decorators from C for `bt`, `bt full` and MI (and DAP), and prints any
exception that leaves them as "Python Exception <...>" in the middle of the backtrace: every
method here answers, and a failure of jitmap's own costs its part of the answer only (the
traceback with JITMAP_DEBUG=1).
"""
import functools
import os
import sys
import threading
import traceback

import gdb
from gdb.FrameDecorator import FrameDecorator

from . import commands as C
from . import format as F
from . import gdb_adapter as A
from . import gdb_perf
from . import gdb_reader
from . import model as M
from . import names
from . import native as N

MARK = "\x01jitmap-unavailable: "
_TYPES = {1: "signed char", 2: "short", 4: "int", 8: "long"}


# -- Values --


def _quiet(default):
    """For what GDB calls from C (a frame decorator's methods, a printer lookup): answer
    `default` instead of raising (KeyboardInterrupt, a user's Ctrl-C, still stops GDB)."""
    def wrap(fn):
        @functools.wraps(fn)
        def method(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception:
                if os.environ.get("JITMAP_DEBUG"):
                    traceback.print_exc()
                return default
        return method
    return wrap


def _type(name):
    try:
        return gdb.lookup_type(name)
    except gdb.error:
        return None


def unavailable(reason):
    """A value that prints as `<unavailable: REASON>`."""
    text = (MARK + (reason or "unknown")).encode("utf-8", "replace")
    char = _type("char")
    return gdb.Value(text, char.array(len(text) - 1))


class _UnavailablePrinter:
    def __init__(self, text):
        self.text = text

    def to_string(self):
        return "<unavailable: %s>" % self.text


@_quiet(None)
def _lookup(val):
    """The printer of an unavailable marker; None for every other value (a cheap test of the
    type first: this runs for every value GDB prints, jitmap's or not)."""
    t = val.type
    if t.code != gdb.TYPE_CODE_ARRAY or t.sizeof <= len(MARK):
        return None
    target = t.target()
    if target.code != gdb.TYPE_CODE_INT or target.sizeof != 1:
        return None
    try:
        text = val.string(encoding="utf-8", errors="replace", length=t.sizeof)
    except gdb.error:
        return None
    return _UnavailablePrinter(text[len(MARK):]) if text.startswith(MARK) else None


def value_of(loc, pointer=False):
    """A location object of `info stackmap -json` as a gdb.Value (`pointer`: shown as an
    address, as a GC pointer is)."""
    v = loc.get("value")
    if v is None:
        return unavailable(loc.get("error"))
    if isinstance(v, str):  # the bytes of a value wider than 8, in hex
        data = bytes.fromhex(v)
        return gdb.Value(data, _type("unsigned char").array(len(data) - 1))
    if loc.get("kind") == "direct" or (pointer and loc.get("size") == 8):
        return gdb.Value(v).cast(_type("void").pointer())
    t = _type(_TYPES.get(loc.get("size"), "long"))
    value = gdb.Value(v).cast(t)
    # Narrow values as numbers (GDB prints a char type's value with its character too).
    return value.cast(_type("int")) if loc.get("size") in (1, 2) else value


def _shown(loc, pointer=False):
    """value_of, or the reason GDB could not make that value (it costs that value only)."""
    try:
        return value_of(loc, pointer)
    except Exception as e:
        if os.environ.get("JITMAP_DEBUG"):
            traceback.print_exc()
        return unavailable("jitmap: %s: %s" % (type(e).__name__, e))


# -- Locals --


class _Name(str):
    """A local's name, where GDB takes a gdb.Symbol or a string: a string (GDB's frame
    printing, GDB 16's DAP) that also answers what GDB 18's DAP asks of a gdb.Symbol
    (`print_name`; before, `'str' object has no attribute 'print_name'` failed its `variables`
    request for every JIT frame)."""

    @property
    def print_name(self):
        return str(self)

    @property
    def name(self):
        return str(self)


class _Local:
    """GDB's "symbol value" interface, with a name of our own."""

    def __init__(self, name, value):
        self.name = _Name(name)
        self.val = value

    def symbol(self):
        return self.name

    def value(self):
        return self.val


def _frame_report(frame):
    catalog = C.SESSION.get(A.GDB)
    if not catalog.stackmaps:
        return None
    return C.SESSION.describe(A.GDB, catalog, A.GdbFrame(A.GDB, frame))


def _images_have_layouts():
    """Whether a registered image carries deopt layouts. With the reader plugin, whose process
    holds every image GDB read, the library counts them (O(1)); without it, the stop's catalog
    says (a scan of the JIT entries, once per stop).

    The plugin's count misses an image the process model dropped as replaced by a later one
    over the same code. A core or an attached process has its entries read descriptor by
    descriptor in GDB's objfile order, not in the order they were registered: jitmap-vm's
    runtime registers its image (with the layouts) after LLVM's listener registered its own
    of the same code, but GDB reads libjitmap-producer's list before libLLVM's, and LLVM's
    image replaced the runtime's. Then, as without the plugin, the catalog (whose scan walks
    the lists themselves, and finds the image still registered) says."""
    try:
        N.load(getattr(A.GDB, "library_hint", None))  # once: the plugin itself with jitmap.gdb
        shared = A.GDB.shared_process()
        if shared:
            if N.lib().jitmap_process_num_layout_images(shared[0]) > 0:
                return True
            stats = gdb_reader.stats()
            if not stats or not stats["replaced"]:
                return False
        return C.SESSION.get(A.GDB).has_layouts
    except Exception:  # a bt never fails because of us
        return False


def _dap_serving():
    """Whether GDB's DAP server (`gdb -i dap`, GDB 14+) runs in this GDB. Its gdb.dap.startup
    keeps the server's thread in `_dap_thread` once it starts, before it reads a request, and
    names that thread "DAP" ([checked: GDB 16.3], and older gdb/dap/startup.py in GDB's
    repository); either is enough. This asks what runs, not who calls: GDB calls a decorator
    from C for `bt` and MI, with no Python frame above it (a walk of sys._getframe(2) raised
    ValueError there), and the DAP server runs its requests, and a `bt` typed in its console,
    on GDB's main thread as the CLI does."""
    startup = sys.modules.get("gdb.dap.startup")
    if startup is None:  # never imported: no DAP in this GDB
        return False
    if getattr(startup, "_dap_thread", None) is not None:
        return True
    return any(t.name == "DAP" for t in threading.enumerate())


class VirtualFrame(FrameDecorator):
    """An interpreter frame a JIT frame stands for (names.deopt_frames), shown under it."""

    def __init__(self, base, vf, variables):
        super().__init__(base)
        self.vf = vf
        self.variables = variables  # its entry of Report.variables()["virtual_frames"]

    @_quiet("[?]")
    def function(self):
        return "[%s]" % F.virtual_frame_title(self.vf)

    @_quiet(None)
    def address(self):
        # `bt` prints no address for a frame without one. GDB's DAP (14+) formats every
        # frame's (hex(pc) in gdb/dap/bt.py, its stackTrace) and lists elided frames with
        # includeAll: there, give the JIT frame's PC, where the interpreter frame is (a `bt`
        # typed in a DAP console shows it too).
        if _dap_serving():
            return self.inferior_frame().pc()
        return None

    def filename(self):
        return None

    def line(self):
        return None

    def frame_args(self):
        return None

    @_quiet(None)
    def frame_locals(self):
        return [_Local(name, _shown(loc))
                for name, loc in M.virtual_frame_variables(self.variables)]


class JitFrameDecorator(FrameDecorator):
    def __init__(self, base, layouts=True):
        super().__init__(base)
        self._report = False  # not looked up yet
        self._perf = False  # what a perf map says of this frame's code: not looked up yet
        self._layouts = layouts  # whether any deopt layout may apply (asked once per bt)

    def _described(self):
        if self._report is False:
            try:
                self._report = _frame_report(self.inferior_frame())
            except (C.CommandError, gdb.error):
                self._report = None
            except Exception:
                if os.environ.get("JITMAP_DEBUG"):
                    traceback.print_exc()
                self._report = None
        return self._report

    def _perf_code(self):
        """gdb_perf.code_at for a frame GDB has no name for (once per frame), else None."""
        if self._perf is False:
            frame = self.inferior_frame()
            self._perf = gdb_perf.code_at(frame) if frame.name() is None else None
        return self._perf

    @_quiet("??")
    def function(self):
        # GDB's own printing says "??" for a frame without a name; FrameDecorator's default
        # hands GDB the PC, which it then prints in the name's place.
        # Code GDB has no name for may be named by a perf map or jitdump (gdb_perf.py).
        frame = self.inferior_frame()
        try:
            if frame.name() is None:
                return (self._perf_code() or {}).get("name") or "??"
        except gdb.error:
            return "??"
        return super().function()

    # FrameDecorator's own answers, which GDB would otherwise print as a Python exception
    # when the frame cannot give them.
    @_quiet(None)
    def address(self):
        return super().address()

    @_quiet(None)
    def filename(self):
        own = super().filename()
        return own if own is not None else (self._perf_code() or {}).get("file")

    @_quiet(None)
    def line(self):
        own = super().line()
        code = self._perf_code()
        return own if own is not None or not code or not code["file"] else code["file_line"]

    @_quiet(None)
    def frame_args(self):
        return super().frame_args()

    def frame_locals(self):
        base = self._base_locals()
        try:
            ours = [_Local(name, _shown(loc, pointer))
                    for name, loc, pointer in M.frame_variables(self._described())]
        except Exception:
            if os.environ.get("JITMAP_DEBUG"):
                traceback.print_exc()
            return base
        if not ours:
            return base
        return list(base or []) + ours

    @_quiet(None)
    def _base_locals(self):
        return super().frame_locals()

    @_quiet(None)
    def elided(self):
        """The virtual frames of a runtime's deopt layout, printed under this frame. Without
        any layout (from the names API or a registered image), no frame is looked up (every
        frame of every `bt` comes here)."""
        base = super().elided()
        if not self._layouts:
            return base
        report = self._described()
        vfs = report.obj.get("virtual_frames") if report else None
        if not vfs:
            return base
        variables = report.variables()["virtual_frames"]
        return list(base or []) + [VirtualFrame(self.inferior_frame(), vf, v)
                                   for vf, v in zip(vfs, variables)]


# -- Whether a backtrace needs the filter --

NEED_WALK = 10000  # frames looked at to decide; a deeper stack with none needing it runs it
_need = [None, None]  # [key, answer] for the last stop and thread asked about


def _frame_needs(frame, perf, catalog, reader):
    """Whether jitmap adds anything to `frame` in a backtrace (see the module's docstring)."""
    pc = frame.pc()
    if catalog is not None and catalog.lookup(pc):
        return True
    if reader and gdb_reader.has_stackmap_at(pc - 1 if frame.level() > 0 and pc else pc):
        return True
    return perf is not None and frame.name() is None and perf.code_at(pc, frame.level() > 0)


def _needed():
    """Whether the backtrace about to be printed (the selected thread's, from its newest
    frame) has a frame the filter adds to. Once per stop and thread: the walk goes through
    frames GDB keeps for the backtrace that follows. Any failure says yes (the filter runs,
    as it always did)."""
    if names.has_frames():
        return True
    try:
        thread = gdb.selected_thread()
        if thread is None:
            return False
        newest = gdb.newest_frame()
        perf = gdb_perf.maps()  # read again once per stop
        reader = gdb_reader.library()
        entries = reader.jitmap_reader_num_entries() if reader else 0
        # What changes without a stop too: `jitmap perf-map FILE`, jit-reader-load.
        key = (A.GDB.stop_id(), thread.global_num, newest.pc(), len(perf) if perf else 0,
               reader is None, entries)
        if _need[0] == key:
            return _need[1]
        catalog = None
        N.load(getattr(A.GDB, "library_hint", None))
        A.GDB.check_process()
        if reader is None or A.GDB.loaded_objects():
            # Stackmaps the reader does not hold (loaded files', or every one without the
            # reader): the stop's catalog, by record at a frame's PC.
            catalog = C.SESSION.get(A.GDB)
            if not catalog.stackmaps:
                catalog = None
        answer = False
        jit = catalog is not None or perf is not None or entries
        frame, n, cm = newest, 0, None
        while frame is not None and not answer:
            if n == NEED_WALK:
                answer = bool(jit)
                break
            if jit:
                answer = bool(_frame_needs(frame, perf, catalog, entries))
            if not answer and n > 0:
                # A frame where no code can be (with JIT code or without: a descriptor
                # jitmap refused leaves GDB's heuristics to take stack words for return
                # addresses): the filter ends the backtrace there.
                cm = A.code_map() or False if cm is None else cm
                answer = bool(cm and cm.no_code(frame.pc(), False))
            n += 1
            try:
                frame = frame.older()
            except gdb.error:
                break
        _need[0], _need[1] = key, answer
        return answer
    except (C.CommandError, gdb.error):
        return False  # no process, no stack: nothing to add to
    except Exception:
        if os.environ.get("JITMAP_DEBUG"):
            traceback.print_exc()
        return True


class JitFrameFilter:
    def __init__(self):
        self.name = "jitmap"
        self.priority = 100
        self._enabled = True
        gdb.frame_filters[self.name] = self

    @property
    def enabled(self):
        """GDB asks before each backtrace (gdb/frames.py, _sort_list) and for `info
        frame-filter`: on, and needed by this backtrace. First, the perf-map unwinder is
        registered if files now name code (a core opened after jitmap loaded brings no stop:
        gdb_perf.refresh), before GDB unwinds for this backtrace."""
        if not self._enabled:
            return False
        try:
            # GDB holds the backtrace's first frame already: invalidated only where it
            # survives that.
            gdb_perf.refresh(invalidate=gdb_perf.frames_survive_invalidation())
        except Exception:
            if os.environ.get("JITMAP_DEBUG"):
                traceback.print_exc()
        return _needed()

    @enabled.setter
    def enabled(self, value):
        # `enable frame-filter` / `disable frame-filter global jitmap`
        self._enabled = bool(value)

    def filter(self, frames):
        # Once per backtrace, not per frame: whether any layout exists at all.
        try:
            layouts = names.has_frames() or _images_have_layouts()
        except Exception:
            layouts = False
        return _until_no_code(JitFrameDecorator(f, layouts) for f in frames)


def _until_no_code(frames):
    """The frames up to the first above the innermost whose PC lies where no code can be (the
    library's word, jitmap_stopped_code_at): GDB's own unwinder, stepping through code it
    knows nothing of (a deleted executable's: GDB then has no symbols and no CFI at all),
    takes stack words for return addresses, and jitmap-no-code can only stop the frame after
    such a frame, never hide it. The backtrace ends there, as jitmap-stack's does."""
    cm = None
    for level, frame in enumerate(frames):
        if level > 0:
            try:
                if cm is None:
                    cm = A.code_map() or False
                pc = frame.inferior_frame().pc()
                if cm and cm.no_code(pc, False):
                    return
            except Exception:
                if os.environ.get("JITMAP_DEBUG"):
                    traceback.print_exc()
        yield frame


_registered = False


def register():
    """The frame filter and the printer of unavailable values (once)."""
    global _registered
    if _registered:
        return
    _registered = True
    JitFrameFilter()
    gdb.pretty_printers.append(_lookup)
