"""What the Python core still writes itself: JSON lines, and the few lines that are not a
frame's or a record's (those libjitmap renders: model.Report.text).

Debugger-neutral (no ``import gdb``): GDB and LLDB print through these functions, so their
outputs match.
"""
import json


def to_json(obj):
    """One line of JSON (the contract: one object per invocation, on its own line)."""
    return json.dumps(obj, separators=(", ", ": "), ensure_ascii=True)


def plural(n, word):
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def virtual_frame_title(vf):
    """"Demo.inner, bci 7" for a virtual frame object (the library's "title")."""
    return vf.get("title") or "?"


# -- gc roots --


def gc_root_rows(obj):
    """Flat rows for `info gc-roots -json`: one per root and per gc alloca of a frame object."""
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
