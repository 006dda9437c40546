"""What the list, gc-roots, verify and status commands compute and print.

Debugger-neutral (no ``import gdb``, no ``import lldb``): GDB's ``info stackmaps``,
``info gc-roots``, ``jitmap verify`` and ``jitmap status`` and LLDB's ``stackmap list``,
``stackmap gc-roots``, ``stackmap verify`` and ``stackmap status`` are the same functions here,
so their text and JSON agree. A front end supplies what only the debugger knows, as plain
values or callbacks:

``function_at(addr) -> (start, name) or None``
    the debugger's symbol for code the JIT images do not name;
``disassemble(addr, count) -> [(address, length, text)]``
    up to ``count`` instructions from ``addr`` (``text`` as the debugger prints it, mnemonic
    first); raises or returns [] when the memory is not code;
frames
    model's frame objects (see :mod:`jitmap.model`) with the debugger's frame geometry.

Misuse and "nothing to show" are :class:`CommandError` (one sentence), which the front ends
turn into their own error (``gdb.GdbError``, ``SBCommandReturnObject.SetError``).
"""
import ctypes

from . import format as F
from . import model as M
from . import native as N

DESCRIPTOR = "__jit_debug_descriptor"
HOOK = "__jit_debug_register_code"
CALL_WINDOW = 64  # how far before a return address a call sequence may start
FUNCTION_BYTES_MAX = 1 << 16  # code read per function for verify's callee-saved check
CALLEE_SAVED_MAX = 64  # its findings shown per function


class CommandError(Exception):
    """A command that cannot answer; str() is the sentence to show."""


class Output:
    """What a command prints: `lines` (its answer) and `warnings` (GDB prints them on its
    error stream; LLDB after the answer)."""

    def __init__(self, lines, warnings=()):
        self.lines = list(lines)
        self.warnings = list(warnings)


# -- Problems met while reading the process --


def problems(catalog, limit=20):
    """What went wrong reading the process, at most `limit` sentences (then a count)."""
    if catalog is None:
        return []
    out = list(catalog.problems)
    more = 0
    for s in catalog.sources:
        for p in s.problems:
            if len(out) < limit:
                out.append(p)
            else:
                more += 1
    if more:
        out.append("%d more entries have problems" % more)
    return out


def no_stackmaps_message(probs, descriptors, objects, files_hint=None):
    """Why no command can answer: nothing could be read, or there is nothing to read; or the
    debugger read none of the program's files (`files_hint`: why, and what to do)."""
    if probs:
        return "jitmap: no stackmap could be read: " + "; ".join(probs[:3])
    if not descriptors and not objects:
        if files_hint:
            return "jitmap: no JIT descriptor was found: %s" % files_hint
        return ("jitmap: the program has no JIT descriptor (%s) and no loaded file with a "
                ".llvm_stackmaps section" % DESCRIPTOR)
    return "jitmap: no stackmap is registered (no JIT entry has a .llvm_stackmaps section)"


def warnings(probs, more_hint):
    """Warning lines for a listing: the first five problems, then a count."""
    out = ["warning: jitmap: %s" % p for p in probs[:5]]
    if len(probs) > 5:
        out.append("warning: jitmap: %d more problems (%s lists them)" % (len(probs) - 5, more_hint))
    return out


# -- Outer frames: the call sequence of a patchpoint --


def is_call(arch, code):
    """Whether `code`, one instruction's bytes, is a call: libjitmap's decoder for `arch`
    (jitmap_arch_call_before), not the debugger's mnemonics."""
    return bool(code) and bool(N.lib().jitmap_arch_call_before(arch, bytes(code), len(code)))


# -- list (info stackmaps, stackmap list) --


def listing(catalog, rx, statepoints):
    """Every stackmap of the catalog whose functions match `rx` (a compiled regular
    expression, or None for all): the "stackmaps" list of the JSON answer."""
    mode, ids = statepoints
    out = []
    for src in catalog.sources:
        sm = src.stackmap
        if sm is None:
            continue
        fns = []
        for _i, fn in sm.functions():
            name = N.text(fn.name) if fn.name else None
            if rx is not None and not rx.search(name or ""):
                continue
            recs = []
            for rec in sm.records_of(fn):
                r = rec.contents
                sp = sm.statepoint(rec, mode, ids)
                kind = ("statepoint" if sp is not None and "misfit" not in sp else
                        "patchpoint" if r.num_live_outs else "stackmap")
                recs.append({"id": r.id, "pc": "0x%x" % sm.record_pc(rec), "offset":
                             r.instruction_offset, "kind": kind,
                             "locations": r.num_locations, "live_outs": r.num_live_outs})
            fns.append({"name": name, "address": "0x%x" % fn.address,
                        "stack_size": None if fn.stack_size == N.STACK_SIZE_DYNAMIC else fn.stack_size,
                        "records": recs})
        if fns or rx is None:
            out.append({"source": src.describe(), "kind": src.kind,
                        "section": "0x%x" % sm.address, "section_size": sm.size,
                        "notes": list(sm.notes), "functions": fns})
    return out


def listing_text(stackmaps):
    lines = []
    for s in stackmaps:
        nrec = sum(len(f["records"]) for f in s["functions"])
        lines.append("%s: .llvm_stackmaps at %s, %d bytes, %s, %s" % (
            s["source"], s["section"], s["section_size"],
            F.plural(len(s["functions"]), "function"), F.plural(nrec, "record")))
        for note in s["notes"]:
            lines.append("  note: %s" % note)
        for f in s["functions"]:
            lines.append("  function %s at %s, stack size %s, %s" % (
                f["name"] or "?", f["address"],
                "dynamic" if f["stack_size"] is None else f["stack_size"],
                F.plural(len(f["records"]), "record")))
            for r in f["records"]:
                lines.append("    record %-6d at %s (%s+%d)  %-10s %s, %s" % (
                    r["id"], r["pc"], f["name"] or "?", r["offset"], r["kind"],
                    F.plural(r["locations"], "location"), F.plural(r["live_outs"], "live-out")))
    return lines


# -- gc-roots (info gc-roots, stackmap gc-roots) --


def gc_roots(objs, all_frames):
    """The JSON answer for frame objects `objs` (model.frame_object), innermost first.
    Without `all_frames` (one selected frame), a frame without a record is a CommandError."""
    rows, notes, frames_out = [], [], []
    for obj in objs:
        if obj["record"] is None:
            if obj.get("nearest") and all_frames:
                notes.append("frame #%d (%s) is in stackmap code but not at a record" %
                             (obj["frame"], obj.get("function") or "?"))
            elif not all_frames:
                raise CommandError(obj["error"])
            continue
        rows += F.gc_root_rows(obj)
        frames_out.append({"frame": obj["frame"], "function": obj.get("function"),
                           "record": obj["record"]["id"],
                           "statepoint": obj["statepoint"] is not None})
    return {"roots": rows, "frames": frames_out, "notes": notes}


def gc_roots_text(answer, all_frames, reports):
    """The text of `info gc-roots`: the library's rows of each frame (model.Report), under its
    header line."""
    lines = []
    if not answer["roots"]:
        sps = [f for f in answer["frames"] if f["statepoint"]]
        lines.append("No GC roots: %s." % (
            "the statepoints here hold none" if sps else
            "no frame %s at a statepoint" % ("on the stack is" if all_frames else "here is")))
    else:
        lines.append(reports[0].text(M.TEXT_GC_HEADER))
        for r in reports:
            rows = r.text(M.TEXT_GC_ROOTS)
            if rows:
                lines += rows.split("\n")
    lines += ["note: %s" % n for n in answer["notes"]]
    return lines


# -- verify (jitmap verify, stackmap verify) --


class VerifyFrame:
    """A frame on the stack for verify: `frame` is model's frame object, `report` the
    library's model.Report of it (with the raw fields), `stack()` -> (SP, CFA) of the frame
    as the debugger unwound it (CFA: the caller's SP), or None when unknown. Only frames
    that have a caller are given."""

    def __init__(self, frame, report, stack):
        self.frame = frame
        self.report = report
        self.stack = stack


def verify(catalog, function_at, disassemble, frames):
    """The JSON answer of verify: static checks of every record, then the frames at a record."""
    problems_out = []
    checked = 0
    seen = set()  # functions checked for callee-saved writes (sources may share code)

    def problem(sm, rec, check, detail):
        if isinstance(sm, dict):  # a record object of a frame's model.Report
            problems_out.append({"function": sm.get("function"), "record": sm["record"]["id"],
                                 "pc": sm["record"]["pc"], "check": check, "detail": detail})
            return
        problems_out.append({"function": sm.function_name(rec) if rec else None,
                             "record": rec.contents.id if rec else None,
                             "pc": "0x%x" % sm.record_pc(rec) if rec else None,
                             "check": check, "detail": detail})

    def bounds(src, addr):
        got = src.symbolize(addr) if src is not None else None
        if got:
            return addr - got[1], got[0]
        try:
            return function_at(addr)
        except Exception:
            return None

    for src in catalog.sources:
        sm = src.stackmap
        if sm is None:
            continue
        lib = sm.lib
        for i, fn in sm.functions():
            if fn.address == 0:
                problems_out.append({"function": N.text(fn.name), "record": None, "pc": None,
                                     "check": "unrelocated",
                                     "detail": "function %d has address 0 in %s" % (i, src.describe())})
        if src.num_unrelocated and sm.notes:  # the library's status; its first note says so
            problems_out.append({"function": None, "record": None, "pc": None,
                                 "check": "unrelocated",
                                 "detail": "%s: %s" % (src.describe(), sm.notes[0])})
        prev = None
        for k in range(sm.num_records):
            rec = sm.record(k)
            r = rec.contents
            checked += 1
            fn = sm.record_function(rec)
            pc = sm.record_pc(rec)
            fname = N.text(fn.name) if fn is not None and fn.name else None
            if fn is not None and fname:
                got = bounds(src, pc - 1 if r.instruction_offset else pc)
                if got is None:
                    problem(sm, rec, "pc-in-function", "PC 0x%x is in no known function" % pc)
                elif got[1] != fname:
                    problem(sm, rec, "pc-in-function",
                            "PC 0x%x (offset %d of %s) is in %s" % (pc, r.instruction_offset, fname, got[1]))
            for li in range(r.num_locations):
                loc = r.locations[li]
                if loc.kind in (N.LOC_REGISTER, N.LOC_DIRECT, N.LOC_INDIRECT) and \
                        sm.reg_name(loc.dwarf_reg) is None:
                    problem(sm, rec, "register", "location %d names DWARF register %d, which %s does "
                            "not have" % (li, loc.dwarf_reg, N.text(lib.jitmap_arch_name(sm.arch))))
            for li in range(r.num_live_outs):
                lo = r.live_outs[li]
                if sm.reg_name(lo.dwarf_reg) is None:
                    problem(sm, rec, "register", "live-out %d names DWARF register %d, which %s "
                            "does not have" % (li, lo.dwarf_reg, N.text(lib.jitmap_arch_name(sm.arch))))
            if prev is not None:
                ppc = sm.record_pc(prev)
                if 0 < pc - ppc < CALL_WINDOW:
                    _shadow(sm, prev, ppc, rec, pc, problem, disassemble)
            prev = rec
        for _i, fn in sm.functions():
            problems_out += _callee_saved(sm, src, fn, disassemble, seen)
    checked_frames = _verify_frames(frames, problem)
    return {"records_checked": checked, "frames_checked": checked_frames, "problems": problems_out}


def _shadow(sm, prev, ppc, rec, pc, problem, disassemble):
    """A call sequence starting at record `prev` that runs past the next record's PC."""
    try:
        insns = disassemble(ppc, 4)
    except Exception:
        return
    end = ppc
    for addr, length, _text, code in insns:
        end = addr + length
        if is_call(sm.arch, code):
            if ppc < pc < end:
                problem(sm, rec, "patch-shadow",
                        "the call sequence of record %d at 0x%x runs to 0x%x, over this record" %
                        (prev.contents.id, ppc, end))
            return


def _function_size(src, start):
    """The size of the function symbol of `src`'s image that starts at `start` (the largest
    there; a zero-sized one runs to the next symbol), or None."""
    img = src.image if src is not None else None
    if not img:
        return None
    lib = N.lib()
    info = N.ImageSymbol()
    n = lib.jitmap_image_num_symbols(img)
    lo, hi = 0, n
    while lo < hi:  # the first symbol at or above start (they are sorted by address)
        mid = (lo + hi) // 2
        if lib.jitmap_image_symbol(img, mid, ctypes.byref(info)) != 0:
            return None
        if info.address < start:
            lo = mid + 1
        else:
            hi = mid
    for k in range(lo, n):
        if lib.jitmap_image_symbol(img, k, ctypes.byref(info)) != 0:
            return None
        if info.address != start:
            return info.address - start if k > lo else None
        if info.size:
            return info.size
    return None


def _read_code(disassemble, start, size):
    """The bytes of [start, start + size) as the debugger reads them for its disassembly
    (verify reads code only through `disassemble`), as far as they can be read."""
    out = bytearray()
    addr, end = start, start + size
    while addr < end:
        count = max(1, min((end - addr) // 4, 256))
        insns = []
        for n in ((count, 1) if count > 1 else (1,)):  # one at a time near unreadable memory
            try:
                insns = disassemble(addr, n)
            except Exception:
                insns = []
            if insns:
                break
        if not insns:
            break
        for a, length, _text, code in insns:
            if a != addr or length <= 0 or len(code) != length:
                return bytes(out[:size])
            out += code
            addr += length
            if addr >= end:
                break
    return bytes(out[:size])


def _callee_saved(sm, src, fn, disassemble, seen):
    """The "callee-saved" problems of stackmap function `fn`: instructions that change a
    callee-saved register the function did not save (libjitmap decides:
    jitmap_arch_callee_saved_writes). Functions whose end is unknown (no sized symbol) or
    whose architecture the library does not check are not read."""
    lib = N.lib()
    if fn.address == 0 or lib.jitmap_arch_callee_saved_writes(sm.arch, None, 0, 0, None, 0) != 0:
        return []
    size = _function_size(src, fn.address)
    if not size:
        return []
    key = (sm.arch, fn.address, size)
    if key in seen:
        return []
    seen.add(key)
    code = _read_code(disassemble, fn.address, min(size, FUNCTION_BYTES_MAX))
    if not code:
        return []
    out = (N.CalleeSavedWrite * CALLEE_SAVED_MAX)()
    n = lib.jitmap_arch_callee_saved_writes(sm.arch, code, len(code), fn.address, out,
                                            CALLEE_SAVED_MAX)
    if n <= 0:
        return []
    name = N.text(fn.name) if fn.name else None
    found = []
    for w in out[:min(n, CALLEE_SAVED_MAX)]:
        reg = sm.reg_name(w.regno) or "DWARF register %d" % w.regno
        insn = N.text(w.insn)
        found.append({
            "function": name, "record": None, "pc": None, "check": "callee-saved",
            "address": "0x%x" % w.address, "register": reg, "instruction": insn,
            "detail": "%s+%d at 0x%x (%s) writes %s, a callee-saved register the function "
                      "did not save first: the ABI keeps the caller's value there, and jitmap's "
                      "unwinder relies on it" % (name or "?", w.address - fn.address, w.address,
                                                 insn, reg)})
    if n > CALLEE_SAVED_MAX:
        found.append({"function": name, "record": None, "pc": None, "check": "callee-saved",
                      "address": None, "register": None, "instruction": None,
                      "detail": "%s: %d more such writes" % (name or "?", n - CALLEE_SAVED_MAX)})
    return found


def _verify_frames(frames, problem):
    """The library's checks of each frame against the debugger's unwinding; the number of
    records checked."""
    n = 0
    for vf in frames:
        records = vf.report.records()
        n += len(records)
        try:
            got = vf.stack()
        except Exception:
            got = None
        if got is None:
            continue
        sp, cfa = got
        for p in vf.report.verify(sp, cfa):
            problem(records[p["record"]], None, p["check"], p["detail"])
    return n


def verify_text(answer):
    probs = answer["problems"]
    lines = ["%s checked, %s on the stack at a record: %s" % (
        F.plural(answer["records_checked"], "record"),
        F.plural(answer["frames_checked"], "frame"),
        "no problems" if not probs else F.plural(len(probs), "problem"))]
    for p in probs:
        where = ""
        if p["record"] is not None:
            where = "record %d at %s (%s): " % (p["record"], p["pc"], p["function"] or "?")
        lines.append("  %s: %s%s" % (p["check"], where, p["detail"]))
    return lines


# -- status (jitmap status, stackmap status) --


def jit_count(catalog, njit):
    """How many JIT entries the process has, as far as the scan knows (jitmap-stack's rule):
    unknown when a descriptor could not be read, a lower bound when a list was not read to
    its end; each with the first such descriptor's reason."""
    entries = "%d JIT entr%s" % (njit, "y" if njit == 1 else "ies")
    for d in catalog.descriptors:
        if not d.readable:
            return "JIT entries unknown (the JIT descriptor in %s could not be read: %s)" % (
                d.where, d.problem or "not read")
    for d in catalog.descriptors:
        if not d.complete:
            return "%s read, the rest unknown (the JIT entry list of the descriptor in %s is " \
                   "damaged: %s)" % (entries, d.where, d.problem or "not read to its end")
    return entries


def status_lines(library, descriptors, objects, catalog, probs):
    lines = ["libjitmap: %s" % library]
    for addr, where in descriptors:
        lines.append("JIT descriptor at 0x%x in %s" % (addr, where))
    if not descriptors:
        lines.append("no JIT descriptor (%s) in the program" % DESCRIPTOR)
    for path, addr in objects:
        lines.append("loaded file %s: .llvm_stackmaps at 0x%x" % (path, addr))
    njit = sum(1 for s in catalog.sources if s.kind == "jit")
    lines.append("%s, %d with a stackmap; %d records in all" % (
        jit_count(catalog, njit),
        sum(1 for s in catalog.sources if s.kind == "jit" and s.stackmap is not None),
        catalog.num_records))
    lines += ["problem: %s" % p for p in probs]
    return lines
