"""A frame as libjitmap describes it (jitmap/frame.h): which record it is at, its values, its
GC roots and interpreter frames, as the contract's JSON object and as text.

Debugger-neutral (no ``import gdb``). The library decides and renders everything (which record,
the outer-frame rule, how a value reads); this module hands it what only the debugger knows
and the names a runtime author registered (:mod:`jitmap.names`), and gives back the answer.

A front end supplies a *frame* object:

``level``           the frame number (0 innermost);
``pc``              its PC (for outer frames, the return address);
``function``        the debugger's name for its function, or None;
``arch``            libjitmap's architecture number (set by the command core);
``read_register(regno, name, size) -> bytes``
                    ``size`` bytes of DWARF register ``regno`` (GDB name ``name``) in target
                    byte order; raises :class:`Unavailable` with the reason;
``read_memory(addr, size) -> bytes``
                    raises :class:`Unavailable` with the reason;
``return_address``  (optional) whether ``pc`` is a return address; by default, level > 0;
``guessed``         (optional) why the frame's registers are a guess (a step below it nothing
                    proved, a frame below it in a file that is another build than the one the
                    process maps), or None: then no value of it is stated.
"""
import ctypes
import json

from . import names
from . import native as N

MASK64 = (1 << 64) - 1

# What jitmap_frame_report_text writes (jitmap_text_part).
TEXT_FRAME, TEXT_RECORDS, TEXT_GC_ROOTS = N.TEXT_FRAME, N.TEXT_RECORDS, N.TEXT_GC_ROOTS
TEXT_GC_HEADER, TEXT_VFRAMES, TEXT_NO_RECORD = N.TEXT_GC_HEADER, N.TEXT_VFRAMES, N.TEXT_NO_RECORD
TEXT_BT = N.TEXT_BT


class Unavailable(Exception):
    """A register or memory the frame cannot give; str() is the reason (one clause)."""


class NotSaved(Unavailable):
    """The debugger says the register was not saved in this (outer) frame. libjitmap words
    the reason from the register's class (jitmap_location_eval_frame)."""


class Recovered(bytes):
    """A register's bytes that the debugger's unwinder recovered from a save slot: believed
    in an outer frame even for a caller-saved register."""


def signed(u, size):
    if size <= 0 or size > 8:
        return u
    bits = 8 * size
    return u - (1 << bits) if u >> (bits - 1) & 1 else u


class _FrameTarget:
    """jitmap_target over a front end's frame object (registers in the target's byte order)."""

    def __init__(self, frame, big_endian):
        self.interrupt = None
        lib = N.lib()
        arch = getattr(frame, "arch", None) or N.ARCH_UNKNOWN

        def interrupted(e):
            self.interrupt = e

        def read_reg(_ctx, regno, buf, size, why, why_len):
            try:
                name = N.text(lib.jitmap_reg_name(arch, regno))
                data = frame.read_register(regno, name, size)
                if len(data) < size:
                    raise Unavailable("register %s has only %d bytes" % (name or "R#%d" % regno,
                                                                         len(data)))
                ctypes.memmove(buf, bytes(data[:size]) if not big_endian else bytes(data[-size:]),
                               size)
                return N.REG_RECOVERED if isinstance(data, Recovered) else 0
            except NotSaved:
                return -2  # -ENOENT: the library says why, from the register's class
            except BaseException as e:
                if isinstance(e, KeyboardInterrupt):
                    interrupted(e)
                N.set_why(why, why_len, e)
                return -61  # -ENODATA

        self._r = N.READ_REG(read_reg)
        self._m = N.read_mem_callback(frame.read_memory, interrupted)
        self.struct = N.Target(None, self._r, self._m)


class Report:
    """One frame described by libjitmap: ``obj`` is the contract's frame object (the JSON of
    `info stackmap -json`), :meth:`text` its renderings. Valid while the catalog it was made
    from is (the library's report points into its stackmaps)."""

    def __init__(self, handle, level):
        self.lib = N.lib()
        self.handle = handle
        self.level = level
        self._read()

    def _read(self):
        j = self.lib.jitmap_frame_report_json(self.handle, 0)
        if j is None:
            raise MemoryError("jitmap_frame_report_json failed")
        self.json_text = N.text(j)
        self.obj = json.loads(self.json_text)
        self._variables = None

    def __del__(self):
        try:
            if self.handle:
                self.lib.jitmap_frame_report_free(self.handle)
        except Exception:
            pass

    @property
    def num_records(self):
        return self.lib.jitmap_frame_report_num_records(self.handle)

    def text(self, part=TEXT_FRAME, indent=0):
        """The library's text (`part`: TEXT_*), without a trailing newline."""
        t = self.lib.jitmap_frame_report_text(self.handle, part, indent)
        if t is None:
            raise MemoryError("jitmap_frame_report_text failed")
        return N.text(t).rstrip("\n")

    def variables(self):
        """The first record's values as a debugger's variables, in the order a frame shows
        them, and those of each interpreter frame: {"variables": [{"name", "gc", "location"}],
        "virtual_frames": [[{"name", "location"}], ...]} (jitmap_frame_report_json with
        JITMAP_JSON_VARIABLES: the library names them, deopt0 or the name a runtime gave)."""
        if self._variables is None:
            j = self.lib.jitmap_frame_report_json(self.handle, N.JSON_VARIABLES)
            if j is None:
                raise MemoryError("jitmap_frame_report_json failed")
            self._variables = json.loads(N.text(j))
        return self._variables

    def verify(self, sp, cfa):
        """The library's checks of this frame against the debugger's unwinding (its SP and
        CFA): [{"record": i, "check", "detail"}], i indexing records()."""
        j = self.lib.jitmap_frame_report_verify(self.handle, sp & MASK64, cfa & MASK64)
        if j is None:
            raise MemoryError("jitmap_frame_report_verify failed")
        return json.loads(N.text(j))

    def records(self):
        """The record objects, first and "other_records" (empty when none)."""
        if self.obj.get("record") is None:
            return []
        return [self.obj] + list(self.obj.get("other_records", ()))

    def _apply_names(self):
        """Hand the library the names and layouts a runtime author registered (names.py),
        then read the object again."""
        changed = False
        for i, o in enumerate(self.records()):
            rid, fname = o["record"]["id"], o.get("function")
            labels = names.for_record(rid, fname, len(o["locations"]))
            sp = o.get("statepoint")
            if sp:
                labels = names.merge_deopt(labels, rid, fname, [l["index"] for l in sp["deopt"]])
            for index, name in labels.items():
                if 0 <= index < len(o["locations"]):
                    self.lib.jitmap_frame_report_name(self.handle, i, index,
                                                      name.encode("utf-8", "replace"))
                    changed = True
            layout = names.frames_for(rid, fname)
            for spec in layout or ():
                mk, mn, ms = _vref(spec["method"], True)
                bk, bn, _ = _vref(spec["bci"], False)
                self.lib.jitmap_frame_report_add_vframe(self.handle, i, mk, mn, ms, bk, bn)
                for stack, key in ((False, "locals"), (True, "stack")):
                    for name, index in spec[key]:
                        self.lib.jitmap_frame_report_add_vslot(
                            self.handle, i, stack, index,
                            name.encode("utf-8", "replace") if name else None)
                changed = True
        if changed:
            self._read()


def _vref(v, name_ok):
    """(kind, number, name) of a names.deopt_frames method or bci."""
    if v is None:
        return N.VREF_NONE, 0, None
    if isinstance(v, dict):
        return N.VREF_DEOPT, v["deopt"], None
    if isinstance(v, str) and name_ok:
        return N.VREF_NAME, 0, v.encode("utf-8", "replace")
    if isinstance(v, int) and v >= 0:
        return N.VREF_NUMBER, v & MASK64, None
    return N.VREF_NONE, 0, None


def describe(catalog, frame, raw=False, statepoints=(N.STATEPOINT_AUTO, ()), function=None):
    """The Report of `frame` against the stackmaps of `catalog`; `function` names the frame's
    function where neither the stackmap nor the debugger does (a perf map's name)."""
    lib = N.lib()
    mode, ids = statepoints
    target = _FrameTarget(frame, catalog.big_endian)
    arr = (N.c_u64 * len(ids))(*ids) if ids else None
    function = frame.function or function
    fn = function.encode("utf-8", "replace") if function else None
    outer = getattr(frame, "return_address", None)
    if outer is None:
        outer = frame.level > 0
    desc = N.FrameDesc(ctypes.sizeof(N.FrameDesc), frame.level, frame.pc, bool(outer),
                       getattr(frame, "arch", None) or N.ARCH_UNKNOWN, fn,
                       ctypes.pointer(target.struct), mode, arr, len(ids),
                       N.DESCRIBE_RAW if raw else 0,
                       N.ORDER_BIG if catalog.big_endian else N.ORDER_AUTO)
    guessed = getattr(frame, "guessed", None)
    if guessed:
        desc.guessed = guessed.encode("utf-8", "replace")
    handle = lib.jitmap_frame_describe(catalog.process, ctypes.byref(desc))
    if target.interrupt:
        if handle:
            lib.jitmap_frame_report_free(handle)
        raise target.interrupt
    if not handle:
        raise MemoryError("jitmap_frame_describe failed")
    report = Report(handle, frame.level)
    report._apply_names()
    return report


# -- A frame's values as a debugger's variables (GDB's frame filter, LLDB's scripted frames) --


def frame_variables(report):
    """[(name, location object, is a GC pointer)] of a Report's first record (None: none), as
    the library names and orders them (Report.variables)."""
    if report is None:
        return []
    return [(v["name"], v["location"], v["gc"]) for v in report.variables()["variables"]]


def virtual_frame_variables(variables):
    """[(name, location object)] of an interpreter frame: its entry of
    Report.variables()["virtual_frames"] (locals, the expression stack, and "error" when its
    layout could not be applied in full)."""
    return [(v["name"], v["location"]) for v in variables]
