"""Text and JSON renderings of the objects built by :mod:`jitmap.model`.

Debugger-neutral (no ``import gdb``): GDB and LLDB print through these functions, so their
outputs match. The text follows ``jitmap-dump``'s (record header, one line per location:
index, kind, where, size), with the value and its role appended.
"""
import json

from .model import signed


def to_json(obj):
    """One line of JSON (the contract: one object per invocation, on its own line)."""
    return json.dumps(obj, separators=(", ", ": "), ensure_ascii=True)


def value_text(loc):
    """The value of a location object as a person reads it."""
    v = loc.get("value")
    if v is None:
        return "<unavailable: %s>" % loc.get("error", "unknown reason")
    if isinstance(v, str):
        return "0x%s (%d bytes, in memory order)" % (v, len(v) // 2)
    if loc["kind"] == "direct":
        return "0x%x (address)" % v
    s = signed(v, loc["size"]) if loc["size"] <= 8 else v
    if s < 0:
        return "%d (0x%x)" % (s, v)
    if v >= 0x10000:
        return "%d (0x%x)" % (v, v)
    return "%d" % v


def location_line(loc, role=None, raw=False, indent="  "):
    line = "%s#%-3d %-14s %-22s size %-3d %s" % (indent, loc["index"], loc["kind"], loc["where"],
                                                  loc["size"], value_text(loc))
    if loc.get("address") and loc.get("value") is not None:
        line += "  at %s" % loc["address"]
    if role:
        line += "  %s" % role
    if loc.get("name"):
        line += "  [%s]" % loc["name"]
    if raw and "raw" in loc:
        r = loc["raw"]
        line += "  {kind %d, size %d, dwarf_reg %d%s, offset %d}" % (
            r["kind"], r["size"], r["dwarf_reg"],
            " (%s)" % r["register"] if "register" in r else "", r["offset"])
    return line


def plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def _roles(obj):
    """{location index: role text} for statepoint records."""
    sp = obj.get("statepoint")
    roles = {}
    if not sp:
        return roles
    roles[0] = "calling convention"
    roles[1] = "flags"
    roles[2] = "deopt count"
    for loc in sp["deopt"]:
        roles[loc["index"]] = "deopt"
    for root in sp["gc_roots"]:
        b, d = root["base"], root["derived"]
        roles[b["index"]] = "gc base"
        if b["index"] == d["index"]:
            continue
        off = root["offset"]
        if b["where"] == d["where"] and b["kind"] == d["kind"]:
            roles[d["index"]] = "gc derived = base (#%d)" % b["index"]
        elif off is None:
            roles[d["index"]] = "gc derived from #%d" % b["index"]
        else:
            roles[d["index"]] = "gc derived from #%d, offset %d" % (b["index"], off)
    for loc in sp["gc_allocas"]:
        roles[loc["index"]] = "gc alloca"
    return roles


def record_text(obj, raw=False):
    """The text for one record object (without the frame line)."""
    rec = obj["record"]
    out = []
    fn = obj.get("function")
    fa = int(rec["function_address"], 16)
    rpc = int(rec["pc"], 16)
    at = "%s+%d" % (fn, rpc - fa) if fn else "offset %d" % rec["offset"]
    kinds = []
    if obj.get("statepoint"):
        kinds.append("statepoint")
    head = "record %d at %s (%s), %s, %s%s" % (
        rec["id"], rec["pc"], at, plural(len(obj["locations"]), "location"),
        plural(len(obj["live_outs"]), "live-out"), "".join(", " + k for k in kinds))
    out.append(head)
    if rec.get("match") == "call":
        out.append("  the record is %d bytes before this frame's PC: %s" %
                   (rec.get("distance", 0), rec.get("note") or "its call sequence returns here"))
    ss = rec.get("stack_size")
    out.append("  function %s at %s, stack size %s; from %s" % (
        fn or "?", rec["function_address"], "dynamic" if ss is None else ss, rec.get("source")))
    for note in rec.get("notes", ()):
        out.append("  note: " + note)
    if rec.get("statepoint_misfit"):
        out.append("  (record %d does not have a statepoint's shape: %s)" %
                   (rec["id"], rec["statepoint_misfit"]))
    sp = obj.get("statepoint")
    if sp:
        flags = sp["flags"]
        names = "".join([" GCTransition" if flags & 1 else "", " DeoptLiveIn" if flags & 2 else ""])
        out.append("  calling convention %d, flags %d%s, %s, %s%s" % (
            sp["calling_convention"], flags, names, plural(len(sp["deopt"]), "deopt value"),
            plural(len(sp["gc_roots"]), "gc root"),
            "" if sp.get("decoded") == "forced" else " (a statepoint by its shape)"))
    roles = _roles(obj)
    for loc in obj["locations"]:
        out.append(location_line(loc, roles.get(loc["index"]), raw))
    if obj["live_outs"]:
        out.append("  live-outs: " + " ".join("%s(%d)" % (l["register"], l["size"])
                                             for l in obj["live_outs"]))
    for i, vf in enumerate(obj.get("virtual_frames", ())):
        out.append("  virtual frame %d: %s" % (i, virtual_frame_title(vf)))
        for key in ("locals", "stack"):
            for k, loc in enumerate(vf[key]):
                out.append("    %s %s = %s" % (key[:-1] if key == "locals" else "stack",
                                              loc.get("name") or "#%d" % k, value_text(loc)))
        if vf.get("error"):
            out.append("    (%s)" % vf["error"])
    return out


def bt_text(frames):
    """The lines of `stackmap bt` for its frame objects (commands._run_bt)."""
    out = []
    for f in frames:
        line = "frame #%d: %s %s" % (f["frame"], f["pc"], f["function"] or "??")
        if f["record"] is not None:
            line += ", record %d%s" % (f["record"], " (statepoint)" if f["statepoint"] else "")
        out.append(line)
        for vf in f["virtual_frames"]:
            values = ["%s = %s" % (loc.get("name") or "local #%d" % k, value_text(loc))
                      for k, loc in enumerate(vf["locals"])]
            values += ["stack #%d = %s" % (k, value_text(loc)) for k, loc in enumerate(vf["stack"])]
            if vf.get("error"):
                values.append("(%s)" % vf["error"])
            out.append("    [%s]%s" % (virtual_frame_title(vf),
                                        "  " + ", ".join(values) if values else ""))
    return out


def virtual_frame_title(vf):
    """"Demo.inner, bci 7" for a virtual frame object."""
    method = vf.get("method")
    name = "method %d" % method if isinstance(method, int) else (method or "?")
    return name + ("" if vf.get("bci") is None else ", bci %d" % vf["bci"])


def frame_text(obj, raw=False):
    """`info stackmap` text for a frame object (model.frame_object)."""
    fn = obj.get("function")
    out = ["frame #%d, pc %s%s" % (obj["frame"], obj["pc"], " in " + fn if fn else "")]
    if obj.get("record") is None:
        out.append(obj.get("error", "no stackmap record here"))
        return "\n".join(out)
    out += record_text(obj, raw)
    for other in obj.get("other_records", ()):
        out += record_text(other, raw)
    return "\n".join(out)


# -- gc roots --


def gc_root_rows(obj):
    """Flat rows for `info gc-roots`: one per root and per gc alloca of a frame object."""
    rows = []
    objs = [obj] + list(obj.get("other_records", ()))
    for o in objs:
        sp = o.get("statepoint")
        if not sp:
            continue
        for root in sp["gc_roots"]:
            rows.append({"frame": o["frame"], "pc": o["pc"], "function": o.get("function"),
                         "record": o["record"]["id"], "kind": "pair", "base": root["base"],
                         "derived": root["derived"], "offset": root["offset"]})
        for loc in sp["gc_allocas"]:
            rows.append({"frame": o["frame"], "pc": o["pc"], "function": o.get("function"),
                         "record": o["record"]["id"], "kind": "alloca", "base": loc,
                         "derived": loc, "offset": 0})
    return rows


def _slot(loc):
    """Where a collector finds and updates this root: a stack address or a register."""
    if loc["kind"] == "indirect":
        return loc.get("address") or loc["where"]
    if loc["kind"] == "register":
        return loc["where"]
    if loc["kind"] == "direct":
        return "0x%x" % loc["value"] if isinstance(loc.get("value"), int) else loc["where"]
    return loc["where"]  # a constant (a null root): nothing to update


def _val(loc):
    v = loc.get("value")
    if v is None:
        return "<unavailable: %s>" % loc.get("error", "?")
    if isinstance(v, str):
        return "0x" + v
    return "0x%x" % v


def gc_roots_text(rows):
    out = []
    if not rows:
        return out
    out.append("%-6s %-20s %-7s %-34s %-34s %s" % ("frame", "function", "record", "base (slot = value)",
                                                   "derived (slot = value)", "offset"))
    for r in rows:
        b, d = r["base"], r["derived"]
        base = "%s = %s" % (_slot(b), _val(b))
        if r["kind"] == "alloca":
            derived = "(gc alloca %s)" % b["where"]
            off = "-"
        else:
            derived = "%s = %s" % (_slot(d), _val(d))
            off = "?" if r["offset"] is None else "%d" % r["offset"]
        out.append("#%-5d %-20s %-7d %-34s %-34s %s" % (r["frame"], (r["function"] or "?")[:20],
                                                       r["record"], base, derived, off))
    return out
