"""The comparer of tests/consistency: what front ends say about the frames of one thread,
compared frame by frame and location by location, with a readable report of each difference.

A View is one front end's answer (GDB on a core, jitmap-stack live, ...): its Frames, each
with its number, PC, function, the `info stackmap -json` object (jitmap-stack's "stackmap"
object: the same without "frame"; None where jitmap-stack describes no frame) and the text
(info stackmap's records without the `frame #N` line, which is what jitmap-stack --values
prints under a frame, indented by 4; or the sentence saying why no record is shown).

Frames are matched by PC (the n-th frame at a PC with the n-th: a recursion has many), so that
a frame one front end shows and another does not (an inlined or a tail-call frame, a frame
past main) is one difference, and the frames after it are still compared; their numbers are
compared as a field of their own. Everything else of a frame is compared field by field
(JSON) and line by line (text). What legitimately differs, and only that, is set aside and
counted: the names and error sentences of native frames (each debugger's own symbol names,
e.g. `clock_nanosleep@GLIBC_2.2.5` in jitmap-stack, `__GI___clock_nanosleep` in GDB), and
jitmap-stack's null object for a native frame where a debugger says "no stackmap describes
the code there".

Nothing here knows a front end or runs one: the test's self-check (test_frames.py) feeds it
perturbed views and expects each perturbation reported.
"""
import copy
import difflib
import json
import re


class Frame:
    def __init__(self, level, pc, function, obj, text, jit=None):
        self.level = level
        self.pc = pc
        self.function = function
        self.obj = obj      # the JSON object, or None
        self.text = text    # the records' text, or the no-record sentence, or None
        self.jit = jit      # known for jitmap-stack's frames; None for a debugger's

    def record_id(self):
        rec = (self.obj or {}).get("record")
        return rec["id"] if rec else None

    def label(self):
        rid = self.record_id()
        return "#%d %s%s" % (self.level, self.function or "??",
                             " (record %d)" % rid if rid is not None else "")


class View:
    def __init__(self, key, label, frames, bt="", problems=()):
        self.key = key          # "gdb-core", "stack-live", ...
        self.label = label      # "GDB (core)", ...
        self.frames = frames
        self.bt = bt
        self.problems = list(problems)

    def at_records(self):
        return [f for f in self.frames if f.record_id() is not None]


class Mismatch:
    def __init__(self, case, ref, other, frame, what, a, b, detail=""):
        self.case = case
        self.ref = ref          # View
        self.other = other      # View (or a pseudo-view for jitmap-dump)
        self.frame = frame      # the reference's Frame (or the other's, for an extra frame)
        self.what = what        # "frame number", "locations[1].value", "text", "frame missing", ...
        self.a = a
        self.b = b
        self.detail = detail
        self.expected = None    # the Expected entry that explains it

    def line(self):
        """One line: the frame, what differs, both values."""
        if self.ref.key == "truth":
            return "frame %s: %s: %s: %s" % (self.frame.label() if self.frame else "-", self.what,
                                              self.other.label, short(self.b, 400))
        return "frame %s: %s: %s %s / %s %s" % (
            self.frame.label() if self.frame else "?", self.what, self.ref.label, short(self.a, 120),
            self.other.label, short(self.b, 120))

    def render(self):
        if self.ref.key == "truth":
            return "TRUTH %s: %s" % (self.case, self.line())
        lines = ["MISMATCH %s: frame %s: %s" % (self.case, self.frame.label() if self.frame else "?",
                                                 self.what)]
        width = max(len(self.ref.label), len(self.other.label)) + 1
        lines.append("    %-*s %s" % (width, self.ref.label + ":", short(self.a)))
        lines.append("    %-*s %s" % (width, self.other.label + ":", short(self.b)))
        if self.detail:
            lines += ["      " + l for l in self.detail.splitlines()]
        return "\n".join(lines)


class Expected:
    """A difference known today and pending elsewhere (another engineer's branch): matched by
    regular expressions over the case name, the other view's key, what differs and the frame's
    function, with the reason. The test reports each one it sees as expected, and each one it
    no longer sees, so that the list is kept honest."""

    def __init__(self, case, view, what, reason, function=".*", status="pending", detail=None):
        self.case, self.view, self.what, self.function = case, view, what, function
        self.detail = detail    # a regular expression the Mismatch's detail must contain
        self.reason = reason
        self.status = status    # "pending" (another branch changes it) or "accepted"
        self.seen = 0

    def matches(self, m):
        fn = (m.frame.function if m.frame else "") or ""
        return (re.fullmatch(self.case, m.case) and
                all(re.fullmatch(self.view, k) for k in m.other.key.split(",")) and
                re.fullmatch(self.what, m.what) and re.fullmatch(self.function, fn) and
                (self.detail is None or re.search(self.detail, m.detail or "")))

    def describe(self):
        return "case /%s/, %s, %s%s" % (self.case, self.view, self.what,
                                         "" if self.function == ".*" else ", in /%s/" % self.function)


def short(v, limit=400):
    if v is MISSING:
        return "(absent)"
    if isinstance(v, str):
        s = v if "\n" not in v else "(text, see below)"
    else:
        s = json.dumps(v, sort_keys=True)
    return s if len(s) <= limit else s[:limit] + "..."


class _Missing:
    def __repr__(self):
        return "(absent)"


MISSING = _Missing()


def diff_json(a, b, path=""):
    """[(path, a's value, b's value)] where two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            p = "%s.%s" % (path, k) if path else k
            out += diff_json(a.get(k, MISSING), b.get(k, MISSING), p)
        return out
    if isinstance(a, list) and isinstance(b, list):
        out = []
        for i in range(max(len(a), len(b))):
            out += diff_json(a[i] if i < len(a) else MISSING, b[i] if i < len(b) else MISSING,
                             "%s[%d]" % (path, i))
        return out
    if a is MISSING or b is MISSING or type(a) != type(b) or a != b:
        return [(path, a, b)]
    return []


def location_context(obj, path):
    """What a path into a frame object names, for the report: `locations[1]` -> `register r14,
    size 4`."""
    m = re.match(r"^((?:statepoint\.(?:deopt|gc_roots\[\d+\]\.(?:base|derived)|gc_allocas)|"
                 r"locations)(?:\[(\d+)\])?)", path)
    if not m:
        return ""
    node = obj
    try:
        for part in re.findall(r"[a-z_]+|\[\d+\]", m.group(1)):
            node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    except (KeyError, IndexError, TypeError):
        return ""
    if isinstance(node, dict) and "kind" in node:
        return "location #%s: %s %s, size %s" % (node.get("index"), node["kind"], node.get("where"),
                                                node.get("size"))
    return ""


NATIVE = "<native>"
FRAME_N = re.compile(r"\bframe (\d+) \(pc ")


def _sentence(s, native):
    """A no-record sentence without its frame number (compared on its own) and, for a native
    frame, without the debugger's name of its function."""
    if not isinstance(s, str):
        return s
    s = FRAME_N.sub("frame N (pc ", s)
    if native:
        # A C++ name has parentheses of its own: up to the last ") is not at".
        s = re.sub(r"(\(pc 0x[0-9a-f]+), in .*\)( is not at a stackmap record)",
                   r"\1, in %s)\2" % NATIVE, s, flags=re.S)
    return s


def normalized(obj, native):
    o = copy.deepcopy(obj)
    o.pop("frame", None)
    if native:
        o["function"] = NATIVE
    if "error" in o:
        o["error"] = _sentence(o["error"], native)
    return o


def align(ref, other):
    """Frames matched by (PC, occurrence): (pairs, missing from other, extra in other)."""
    def keyed(frames):
        seen, out = {}, {}
        for f in frames:
            n = seen.get(f.pc, 0)
            seen[f.pc] = n + 1
            out[(f.pc, n)] = f
        return out
    r, o = keyed(ref.frames), keyed(other.frames)
    pairs = [(r[k], o[k]) for k in r if k in o]
    missing = [r[k] for k in r if k not in o]
    extra = [o[k] for k in o if k not in r]
    return pairs, missing, extra


def compare_views(case, ref, other, jit_pcs, aside):
    """The Mismatches of `other` against `ref` (both of one thread at one stop). `jit_pcs`: the
    PCs jitmap-stack calls JIT code (a frame is native when at none of them and at no record).
    `aside`: a list the legitimately different fields are appended to ("what, views")."""
    out = []
    pairs, missing, extra = align(ref, other)
    for f in missing:
        out.append(Mismatch(case, ref, other, f, "frame missing", "pc 0x%x" % f.pc, "(no frame)"))
    for f in extra:
        out.append(Mismatch(case, ref, other, f, "extra frame", "(no frame)", "pc 0x%x %s" % (
            f.pc, f.function)))
    out += renumbered(case, ref, other, pairs)
    for rf, of in pairs:
        native = rf.record_id() is None and of.record_id() is None and rf.pc not in jit_pcs
        if rf.obj is None and of.obj is None:
            pass
        elif rf.obj is None or of.obj is None:
            present = rf.obj if of.obj is None else of.obj
            if native and present.get("record") is None and not present.get("nearest"):
                aside.append("native frames: no object from one front end, 'no record' from "
                             "the other (%s / %s)" % (ref.label, other.label))
            else:
                out.append(Mismatch(case, ref, other, rf, "stackmap object", rf.obj, of.obj))
        else:
            a, b = normalized(rf.obj, native), normalized(of.obj, native)
            if native and (rf.obj.get("function") != of.obj.get("function") or
                           rf.obj.get("error") != of.obj.get("error")):
                aside.append("native frames: function names (%s / %s)" % (ref.label, other.label))
            for path, x, y in diff_json(a, b):
                ctx = location_context(rf.obj, path) or location_context(of.obj, path)
                out.append(Mismatch(case, ref, other, rf, path, x, y, ctx))
        if rf.text is None or of.text is None:
            if (rf.text is None) != (of.text is None) and not native:
                out.append(Mismatch(case, ref, other, rf, "text", rf.text, of.text))
            continue
        a, b = _sentence(rf.text, native), _sentence(of.text, native)
        if a != b:
            d = "\n".join(difflib.unified_diff(a.splitlines(), b.splitlines(), ref.label,
                                               other.label, lineterm="", n=1))
            out.append(Mismatch(case, ref, other, rf, "text", a, b, d))
    return out


def renumbered(case, ref, other, pairs):
    """One Mismatch per run of consecutive frames that `other` numbers with the same offset
    from `ref`'s numbers (a frame one of them does not show shifts all below it), naming the
    frames at records in the run."""
    out, run = [], []

    def flush():
        if not run:
            return
        first, last = run[0], run[-1]
        records = ["#%d %s (record %d) is #%d" % (rf.level, rf.function, rf.record_id(), of.level)
                   for rf, of in run if rf.record_id() is not None]
        out.append(Mismatch(
            case, ref, other, first[0], "frame number",
            "#%d-#%d" % (first[0].level, last[0].level) if len(run) > 1 else first[0].level,
            "#%d-#%d" % (first[1].level, last[1].level) if len(run) > 1 else first[1].level,
            "%d frame%s numbered %+d%s" % (len(run), "" if len(run) == 1 else "s",
                                           first[1].level - first[0].level,
                                           "; at records: " + ", ".join(records) if records else "")))
        del run[:]

    for rf, of in pairs:
        delta = of.level - rf.level
        if run and (delta != run[-1][1].level - run[-1][0].level or not delta):
            flush()
        if delta:
            run.append((rf, of))
    flush()
    return out


class DumpView:
    """jitmap-dump's records, standing in a Mismatch as the other view."""
    key = "dump-core"
    label = "jitmap-dump (core)"


def _stored(loc):
    """What a dump stores of a location: kind, where, size (and a constant's value)."""
    out = {k: loc.get(k) for k in ("index", "kind", "where", "size")}
    if loc.get("kind", "").startswith("constant"):
        out["value"] = loc.get("value")
    return out


def record_fields(obj_or_rec, frame_obj):
    """The fields a frame's record and a dumped record share."""
    rec = obj_or_rec["record"] if frame_obj else obj_or_rec
    out = {k: rec.get(k) for k in ("id", "offset", "function_address", "stack_size", "pc")}
    out["function"] = obj_or_rec.get("function")
    out["locations"] = [_stored(l) for l in obj_or_rec["locations"]]
    out["live_outs"] = [{k: l.get(k) for k in ("register", "size")} for l in obj_or_rec["live_outs"]]
    sp = obj_or_rec.get("statepoint")
    if sp is not None:
        out["statepoint"] = {
            "calling_convention": sp.get("calling_convention"), "flags": sp.get("flags"),
            "deopt": [_stored(l) for l in sp.get("deopt", [])],
            "gc_roots": [{"base": _stored(r["base"]), "derived": _stored(r["derived"])}
                         for r in sp.get("gc_roots", [])],
            "gc_allocas": [_stored(l) for l in sp.get("gc_allocas", [])]}
    else:
        out["statepoint"] = None
    return out


def compare_dump(case, ref, records):
    """Each record a frame of `ref` is at against jitmap-dump's record with that ID and PC."""
    out = []
    for f in ref.at_records():
        recs = [f.obj] + [o for o in f.obj.get("other_records", [])]
        for r in recs:
            rid, pc = r["record"]["id"], int(r["record"]["pc"], 16)
            dumped = records.get((rid, pc), [])
            # A JIT that registers its code twice (jitmap-vm: LLVM's listener and jitmap's
            # producer, for its layouts) has the record in two entries: the frame's source.
            source = r["record"].get("source") or ""
            mine = [x for x in dumped if source == "JIT entry " + x[0]]
            dumped = [x[1] for x in (mine or dumped)]
            if len(dumped) != 1:
                out.append(Mismatch(case, ref, DumpView, f, "dumped record (id %d, pc 0x%x)" % (rid, pc),
                                    "1 record", "%d records" % len(dumped)))
                continue
            a, b = record_fields(r, True), record_fields(dumped[0], False)
            for path, x, y in diff_json(a, b):
                out.append(Mismatch(case, ref, DumpView, f, "dump: " + path, x, y,
                                    location_context(r, path)))
    return out
