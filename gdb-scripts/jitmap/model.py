"""Records evaluated in a frame, as the contract's JSON objects (DESIGN.md, "JSON").

Debugger-neutral (no ``import gdb``): the GDB and LLDB front ends build the same dicts here
and print them with :mod:`jitmap.format`, so their text and JSON agree.

A front end supplies a *frame* object:

``level``           the frame number (0 innermost);
``pc``              its PC (for outer frames, the return address);
``function``        the debugger's name for its function, or None;
``read_register(regno, name, size) -> bytes``
                    ``size`` bytes of DWARF register ``regno`` (GDB name ``name``) in target
                    byte order; raises :class:`Unavailable` with the reason;
``read_memory(addr, size) -> bytes``
                    raises :class:`Unavailable` with the reason.
"""
import ctypes

from . import names
from . import native as N

MASK64 = (1 << 64) - 1


class Unavailable(Exception):
    """A register or memory the frame cannot give; str() is the reason (one clause)."""


class NotSaved(Unavailable):
    """The debugger says the register was not saved in this (outer) frame. libjitmap words
    the reason from the register's class (jitmap_location_eval_frame)."""


class Recovered(bytes):
    """A register's bytes that the debugger's unwinder recovered from a save slot: believed
    in an outer frame even for a caller-saved register."""


# -- Which record describes a frame --


class Match:
    """The records describing a frame, or why none does.

    ``hits``: [(Stackmap, record)] (empty when none); ``how``: "exact" (the record's PC is
    the frame's PC) or "call" (outer frame: the record starts the call sequence that returns
    to the frame's PC, as a patchpoint's does); ``nearest``: [(Stackmap, record, distance)]
    with distance = record PC - frame PC, for messages; ``function``: the stackmap function
    name near the PC, if any.
    """

    def __init__(self, hits, how, nearest=(), function=None, note=None):
        self.hits = hits
        self.how = how
        self.nearest = list(nearest)
        self.function = function
        self.note = note


def find(catalog, pc, outer, call_ends_at=None):
    """The records that describe a frame at `pc`.

    Frame 0 (outer False) is at `pc` exactly. An outer frame's `pc` is a return address: a
    stackmap or statepoint after a call has its record there; a patchpoint's record is at the
    start of its call sequence, before it. Such a record is used only when
    ``call_ends_at(record_pc, pc, arch)`` (the front end disassembles) confirms that the code from
    the record's PC is one call sequence ending exactly at `pc`: a record is never evaluated
    at a PC it does not describe."""
    hits = catalog.lookup(pc)
    if hits:
        return Match(hits, "exact", function=hits[0][0].function_name(hits[0][1]))
    near = catalog.nearest(pc)
    if near is None:
        return Match([], None)
    sm, fn, before, after = near
    nearest = []
    for r in (before, after):
        if r is not None:
            nearest.append((sm, r, sm.record_pc(r) - pc))
    fname = N.text(fn.name) if fn is not None and fn.name else None
    if outer and before is not None and call_ends_at is not None:
        rpc = sm.record_pc(before)
        ok, why = call_ends_at(rpc, pc, sm.arch)
        if ok:
            hits = [(sm, r) for r in sm.lookup(rpc)]
            return Match(hits, "call", nearest, fname, why)
    return Match([], None, nearest, fname)


# -- Values --


def _signed(u, size):
    if size <= 0 or size > 8:
        return u
    bits = 8 * size
    return u - (1 << bits) if u >> (bits - 1) & 1 else u


class _FrameTarget:
    """jitmap_target over a front end's frame object."""

    def __init__(self, sm, frame):
        self.interrupt = None
        big = sm.big_endian

        def fail(why, why_len, e):
            if isinstance(e, KeyboardInterrupt):
                self.interrupt = e
            msg = (str(e) or type(e).__name__).encode("utf-8", "replace")[:max(why_len - 1, 0)]
            ctypes.memmove(why, msg + b"\0", len(msg) + 1)

        def read_reg(_ctx, regno, buf, size, why, why_len):
            try:
                data = frame.read_register(regno, sm.reg_name(regno), size)
                if len(data) < size:
                    raise Unavailable("register %s has only %d bytes" % (sm.reg_label(regno), len(data)))
                ctypes.memmove(buf, bytes(data[:size]) if not big else bytes(data[-size:]), size)
                return N.REG_RECOVERED if isinstance(data, Recovered) else 0
            except NotSaved:
                return -2  # -ENOENT: the library says why, from the register's class
            except BaseException as e:
                fail(why, why_len, e)
                return -61  # -ENODATA

        def read_mem(_ctx, addr, buf, length, why, why_len):
            try:
                data = frame.read_memory(addr, length)
                if len(data) != length:
                    raise Unavailable("short read")
                ctypes.memmove(buf, bytes(data), length)
                return 0
            except BaseException as e:
                fail(why, why_len, e)
                return -14  # -EFAULT

        self._r = N.READ_REG(read_reg)
        self._m = N.READ_MEM(read_mem)
        self.struct = N.Target(None, self._r, self._m)
        self.opts = N.EvalOpts(ctypes.sizeof(N.EvalOpts), getattr(frame, "level", 0))


def location(sm, rec, index, target, raw=False, name=None):
    """One location as a contract object: index, kind, where, size, value (+ error)."""
    lib = sm.lib
    loc = rec.contents.locations[index]
    out = {
        "index": index,
        "kind": N.text(lib.jitmap_loc_kind_name(loc.kind)),
        "where": sm.where(rec, index),
        "size": loc.size,
    }
    v = N.Value()
    rc = lib.jitmap_location_eval_frame(sm.handle, rec, ctypes.byref(loc),
                                        ctypes.byref(target.struct), ctypes.byref(target.opts),
                                        ctypes.byref(v))
    if target.interrupt:
        raise target.interrupt
    if rc == 0 and v.available:
        if loc.size > 8 and not v.is_address and loc.kind in (N.LOC_REGISTER, N.LOC_INDIRECT):
            out["value"] = bytes(v.bytes[:loc.size]).hex()
        else:
            out["value"] = v.u
    else:
        out["value"] = None
        out["error"] = N.text(v.why) or N.strerror(rc)
    if loc.kind == N.LOC_INDIRECT and (rc == 0 or v.address):
        out["address"] = "0x%x" % v.address
    if name:
        out["name"] = name
    if raw:
        out["raw"] = {"kind": loc.kind, "size": loc.size, "dwarf_reg": loc.dwarf_reg,
                      "offset": loc.offset}
        if loc.kind in (N.LOC_REGISTER, N.LOC_DIRECT, N.LOC_INDIRECT):
            out["raw"]["register"] = sm.reg_label(loc.dwarf_reg)
    return out


def record_object(frame, sm, rec, how="exact", raw=False, statepoints=(N.STATEPOINT_AUTO, ()),
                  note=None):
    """The contract object for `rec` evaluated in `frame`."""
    r = rec.contents
    fn = sm.record_function(rec)
    rpc = sm.record_pc(rec)
    target = _FrameTarget(sm, frame)
    fname = N.text(fn.name) if fn is not None and fn.name else frame.function
    labels = names.for_record(r.id, fname, r.num_locations)
    sp = sm.statepoint(rec, *statepoints)
    if sp is not None and "misfit" not in sp:
        labels = names.merge_deopt(labels, r.id, fname, sp["deopt"])
    locs = [location(sm, rec, i, target, raw, labels.get(i)) for i in range(r.num_locations)]
    obj = {
        "frame": frame.level,
        "pc": "0x%x" % frame.pc,
        "function": fname,
        "record": {
            "id": r.id,
            "offset": r.instruction_offset,
            "function_address": "0x%x" % (fn.address if fn is not None else 0),
            "stack_size": (None if fn is None or fn.stack_size == N.STACK_SIZE_DYNAMIC
                           else fn.stack_size),
            "pc": "0x%x" % rpc,
            "match": how,
            "source": sm.source,
        },
        "locations": locs,
        "live_outs": [{"register": sm.reg_label(r.live_outs[i].dwarf_reg),
                       "size": r.live_outs[i].size} for i in range(r.num_live_outs)],
        "statepoint": None,
    }
    if how == "call":
        obj["record"]["distance"] = frame.pc - rpc
    if note:
        obj["record"]["note"] = note
    if sm.notes:
        obj["record"]["notes"] = list(sm.notes)
    if raw:
        obj["record"]["flags"] = r.flags
        obj["record"]["section_offset"] = r.section_offset
        for i in range(r.num_live_outs):
            obj["live_outs"][i]["dwarf_reg"] = r.live_outs[i].dwarf_reg
    layout = names.frames_for(r.id, fname) or sm.deopt_layout(r.id, fname)
    if layout:
        values = ([locs[i] for i in sp["deopt"]] if sp is not None and "misfit" not in sp
                  else locs)
        obj["virtual_frames"] = virtual_frames(layout, values)
    if sp is not None:
        if "misfit" in sp:
            obj["record"]["statepoint_misfit"] = sp["misfit"]
        else:
            roots = []
            for b, d in sp["gc_pairs"]:
                base, derived = locs[b], locs[d]
                off = None
                if isinstance(base["value"], int) and isinstance(derived["value"], int):
                    off = _signed((derived["value"] - base["value"]) & MASK64, 8)
                roots.append({"base": base, "derived": derived, "offset": off})
            obj["statepoint"] = {
                "calling_convention": sp["calling_convention"],
                "flags": sp["flags"],
                "deopt": [locs[i] for i in sp["deopt"]],
                "gc_roots": roots,
                "gc_allocas": [locs[i] for i in sp["gc_allocas"]],
                "decoded": sp["decoded"],
            }
    return obj


def virtual_frames(layout, values):
    """The interpreter frames of a deopt layout (names.deopt_frames), over `values`: the
    location objects the layout's indexes point into (a statepoint's deopt values, or a
    record's locations)."""
    out = []

    def value(ref, what, frame):
        if not isinstance(ref, dict):
            return ref
        i = ref["deopt"]
        if i >= len(values):
            frame.setdefault("error", "%s: deopt index %d past the %d values" % (what, i, len(values)))
            return None
        v = values[i]["value"]
        if v is None:
            frame.setdefault("error", "%s: value %d is unavailable (%s)" % (
                what, i, values[i].get("error")))
        return v

    for spec in layout:
        f = {}
        f["method"] = value(spec["method"], "method", f)
        f["bci"] = value(spec["bci"], "bci", f) if spec["bci"] is not None else None
        for key in ("locals", "stack"):
            items = []
            for name, i in spec[key]:
                if i >= len(values):
                    f.setdefault("error", "%s: deopt index %d past the %d values" % (key, i, len(values)))
                    continue
                loc = dict(values[i])
                if name:
                    loc["name"] = name
                items.append(loc)
            f[key] = items
        out.append({k: f[k] for k in ("method", "bci", "locals", "stack", "error") if k in f})
    return out


def frame_object(frame, match, raw=False, statepoints=(N.STATEPOINT_AUTO, ())):
    """The whole answer for one frame: the first record's object, with any further records
    at the same PC under "other_records"; or, when no record describes the frame, an object
    with "record": null, "error" and "nearest"."""
    if not match.hits:
        return {
            "frame": frame.level,
            "pc": "0x%x" % frame.pc,
            "function": match.function or frame.function,
            "record": None,
            "locations": [],
            "live_outs": [],
            "statepoint": None,
            "nearest": [{"id": r.contents.id, "pc": "0x%x" % sm.record_pc(r),
                         "function": sm.function_name(r), "distance": dist}
                        for sm, r, dist in match.nearest],
            "error": no_record_message(frame, match),
        }
    objs = [record_object(frame, sm, rec, match.how, raw, statepoints, match.note)
            for sm, rec in match.hits]
    first = objs[0]
    if len(objs) > 1:
        first["other_records"] = objs[1:]
    return first


def no_record_message(frame, match):
    where = "frame %d (pc 0x%x%s)" % (frame.level, frame.pc,
                                       ", in " + (match.function or frame.function)
                                       if (match.function or frame.function) else "")
    if not match.nearest:
        return "%s is not at a stackmap record (no stackmap describes the code there)" % where
    parts = []
    for sm, r, dist in match.nearest:
        side = "%d bytes %s" % (abs(dist), "after" if dist > 0 else "before")
        parts.append("record %d at 0x%x (%s)" % (r.contents.id, sm.record_pc(r), side))
    fn = match.function
    msg = "%s is not at a stackmap record; nearest%s: %s" % (
        where, " in " + fn if fn else "", ", ".join(parts))
    if frame.level > 0:
        msg += ". A record is only shown at the PC it describes"
    return msg


def signed(u, size):
    return _signed(u, size)
