"""The bodies of the commands about jitmap's own state: status (where it looks and what it
found), refresh, break (breakpoints by record ID, also in JIT code registered later) and
statepoints (LLDB; GDB has `set jitmap statepoints`). The table (commands.py) names them.
"""
from . import native as N
from . import report as R
from .session import Settings

CommandError = R.CommandError


# -- status, refresh --


def run_status(ctx, opts, args):
    dbg, s = ctx.dbg, ctx.session
    catalog = s.get(dbg)
    return R.status_lines(N.path(), dbg.jit_descriptors(), dbg.loaded_objects(), catalog,
                          s.problems())




def run_refresh(ctx, opts, args):
    ctx.session.forget()
    return []


# -- break --


def run_break(ctx, opts, args):
    dbg, s = ctx.dbg, ctx.session
    ids = []
    for a in args:
        try:
            ids.append(int(a, 0))
        except ValueError:
            raise CommandError("%s: a record ID is a number, not %r" % (ctx.who, a)) from None
        if not 0 <= ids[-1] < 1 << 64:
            raise CommandError("%s: record IDs are 64-bit unsigned numbers" % ctx.who)
    if "delete" in opts:
        if not ids:
            raise CommandError("%s: %s needs the record IDs to stop watching (Usage: %s)" % (
                ctx.who, ctx.spelled("delete"), ctx.command.usage(dbg.name)))
        for rid in ids:
            if s.watched.pop(rid, None) is None:
                raise CommandError("%s: record %d is not watched" % (ctx.who, rid))
        return []
    if not ids:
        if not s.watched:
            return ["No record IDs are watched."]
        return ["record %d: %s" % (rid, ", ".join("0x%x" % p for p in sorted(pcs)) or
                                   "pending (not registered yet)")
                for rid, pcs in sorted(s.watched.items())]
    dbg.watch_registrations()  # first: a debugger without a target refuses here
    for rid in ids:
        s.watched.setdefault(rid, set())
    lines = []
    try:
        lines = s.resolve(dbg)
    except CommandError:
        pass  # no process yet: everything stays pending
    for rid in ids:
        if not s.watched[rid]:
            lines.append("jitmap: record %d is not registered yet: breakpoints will be set when "
                         "JIT code with it is registered" % rid)
    return lines




# -- statepoints (LLDB; GDB has set/show jitmap statepoints) --


def run_statepoints(ctx, opts, args):
    settings = ctx.session.settings
    mode, ids = None, None
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--ids":
            if i + 1 >= len(args):
                raise CommandError("%s: --ids needs a list of record IDs" % ctx.who)
            try:
                ids = Settings.parse_ids(args[i + 1])
            except ValueError:
                raise CommandError("%s: %r is not a list of numbers" % (ctx.who, args[i + 1])) from None
            i += 2
            continue
        if a in Settings.MODES and mode is None:
            mode = a
        else:
            raise CommandError("%s: unexpected %r (auto, all, none, --ids ID,...)" % (ctx.who, a))
        i += 1
    if mode is not None:
        settings.mode = mode
    if ids is not None:
        settings.ids = ids
    return ["Stackmap records decoded as statepoints: %s." % settings.mode,
            "Record IDs that flip the statepoint decision: %s." % (
                ",".join(str(x) for x in settings.ids) or "none")]


