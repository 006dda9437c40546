"""The bodies of the commands that describe the stack's frames: info (``info stackmap``,
``stackmap info``), list, gc-roots, bt and verify. The table (commands.py) names them; what
they compute and print for both debuggers is here and in report.py.
"""
import re

from . import format as F
from . import model as M
from . import native as N
from . import report as R

CommandError = R.CommandError
Output = R.Output
MAX_FRAMES = 10000  # frames walked by gc-roots --all and verify


# -- info (info stackmap / stackmap info) --


def run_info(ctx, opts, args):
    dbg, s = ctx.dbg, ctx.session
    dbg.check_process()
    frame = dbg.selected_frame()
    if args:
        try:
            level = int(args[0], 0)
        except ValueError:
            raise CommandError("%s: %s must be a frame number, not %r" % (
                ctx.who, ctx.command.spell(dbg.name)["level"], args[0])) from None
        frame = dbg.frame(level)
    # A frame the debugger made from a stack word, below the thread's last real frame.
    no_code = getattr(dbg, "no_code_at", None)
    where = no_code(frame.pc) if no_code and frame.level > 0 else None
    if where:
        raise CommandError("jitmap: frame %d (pc 0x%x) lies where no code can be (%s): the "
                           "thread's stack ends before it" % (frame.level, frame.pc, where))
    catalog = s.get(dbg)
    if not catalog.stackmaps:
        code = s.perf_code(dbg, frame)
        if code:
            raise CommandError("jitmap: frame %d is in JIT code that %s names (%s), and the "
                               "process has no stackmaps" % (frame.level, code["source"],
                                                             code["name"]))
        raise s.no_stackmaps(dbg)
    sp = s.settings.statepoints()
    if "statepoint" in opts:
        sp = (N.STATEPOINT_ALL, ())
    elif "no-statepoint" in opts:
        sp = (N.STATEPOINT_NONE, ())
    report = s.describe(dbg, catalog, frame, "raw" in opts, sp)
    obj = report.obj
    if "json" in opts:
        return [report.json_text]
    note = getattr(dbg, "unwind_note", None)
    note = note() if note and frame.level > 0 else None
    if obj["record"] is None:
        raise CommandError(obj["error"] + ("; " + note if note else ""))
    return Output([report.text(M.TEXT_FRAME)], ["warning: jitmap: " + note] if note else [])


# -- list (info stackmaps / stackmap list) --


def run_list(ctx, opts, args):
    dbg, s = ctx.dbg, ctx.session
    try:
        rx = re.compile(args[0]) if args else None
    except re.error as e:
        raise CommandError("%s: bad regular expression: %s" % (ctx.who, e)) from None
    catalog = s.get(dbg)
    listing = R.listing(catalog, rx, s.settings.statepoints())
    problems = s.problems()
    if "json" in opts:
        return [F.to_json({"stackmaps": listing, "problems": problems})]
    if not listing:
        if rx is not None and catalog.stackmaps:
            raise CommandError("%s: no function matches %s" % (ctx.who, args[0]))
        raise s.no_stackmaps(dbg)
    return Output(R.listing_text(listing), R.warnings(problems, ctx.name_of("status")))


def _noted(dbg, lines):
    """`lines` with the debugger's note on the frames it walked, if any."""
    note = getattr(dbg, "unwind_note", None)
    note = note() if note else None
    return Output(lines, ["warning: jitmap: " + note] if note else [])


# -- gc-roots --


def run_gc_roots(ctx, opts, args):
    dbg, s = ctx.dbg, ctx.session
    catalog = s.stackmaps(dbg)
    every = "all" in opts
    frames = list(dbg.frames(MAX_FRAMES)) if every else [dbg.selected_frame()]
    reports = [s.describe(dbg, catalog, f) for f in frames]
    answer = R.gc_roots([r.obj for r in reports], every)
    if "json" in opts:
        return [F.to_json(answer)]
    return _noted(dbg, R.gc_roots_text(answer, every, reports))


# -- bt (LLDB: GDB's own bt shows the same through the frame filter, gdb_frames.py) --


def run_bt(ctx, opts, args):
    dbg, s = ctx.dbg, ctx.session
    try:
        limit = int(args[0]) if args else MAX_FRAMES
    except ValueError:
        raise CommandError("%s: %r is not a number of frames" % (ctx.who, args[0])) from None
    catalog = s.get(dbg)
    frames = []
    lines = []
    for f in dbg.frames(max(limit, 0)):
        # Code that neither the debugger nor a stackmap names may be named by a perf map.
        named = None if f.function else (s.perf_code(dbg, f) or {}).get("name")
        report = s.describe(dbg, catalog, f, function=named)
        obj = report.obj
        rec = obj.get("record")
        frames.append({
            "frame": f.level, "pc": "0x%x" % f.pc, "function": obj.get("function"),
            "record": rec["id"] if rec else None,
            "statepoint": bool(obj.get("statepoint")),
            "virtual_frames": obj.get("virtual_frames", []),
        })
        lines += report.text(M.TEXT_BT).split("\n")
    if "json" in opts:
        return [F.to_json({"frames": frames})]
    return _noted(dbg, lines)


# -- verify --


def _verify_frames(dbg, s, catalog):
    """report.VerifyFrame for each frame at a record that has a caller."""
    for f in dbg.frames(MAX_FRAMES):
        try:
            report = s.describe(dbg, catalog, f, raw=True)
        except CommandError:
            continue
        if report.num_records and f.has_caller():
            yield R.VerifyFrame(f, report, f.stack)


def run_verify(ctx, opts, args):
    dbg, s = ctx.dbg, ctx.session
    catalog = s.stackmaps(dbg)
    obj = R.verify(catalog, dbg.function_at, dbg.disassemble, _verify_frames(dbg, s, catalog))
    if "json" in opts:
        return [F.to_json(obj)]
    return _noted(dbg, R.verify_text(obj))


