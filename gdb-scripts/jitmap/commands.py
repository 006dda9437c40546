"""jitmap's commands, once for every debugger: one table (names, options, help, run) over a
:class:`Debugger` protocol.

Debugger-neutral (no ``import gdb``, no ``import lldb``). Each command of the table has its
name in GDB (``info stackmap``) and in LLDB (``stackmap info``), its options as each debugger
spells them (``-json``; ``-j, --json``), its help and its body. A front end implements
:class:`Debugger` (gdb_adapter.py, lldb_adapter.py), registers the table with its debugger
(gdb_commands.py, lldb_commands.py), and turns :class:`report.CommandError` into its own
error. The text and JSON a command prints are
decided here, so that GDB and LLDB agree by construction.

The Debugger protocol: what only the debugger knows.

``name``
    ``"gdb"`` or ``"lldb"``: which spelling of names and options to use.
``check_process() -> key``
    something that identifies the process (or core) being debugged; raises CommandError
    ("no process") when there is none, or when it cannot be read now (running).
``stop_id() -> hashable``
    changes whenever the process may have changed (a stop, a call, a write): what was read
    before is read again.
``jit_descriptors() -> [(address, where)]``, ``loaded_objects() -> [(path, address)]``,
``read(addr, size) -> bytes``
    the access object of :mod:`discovery` (read raises ``discovery.ReadError``).
``arch_name() -> str``
    the debugger's name of the target's architecture (GDB's ``i386:x86-64``, LLDB's triple):
    libjitmap maps it (``jitmap_arch_from_name``) when no stackmap says.
``selected_frame()``, ``frame(level)``, ``frames(limit)``
    frame objects (below); ``frame`` raises CommandError when there is no such frame.
``disassemble(addr, count)``, ``function_at(addr)``
    as :func:`report.verify` wants them.
``break_at(pc) -> number``
    a breakpoint at `pc`; raises CommandError with the reason when it cannot.
``watch_registrations()``
    from now on, call :meth:`Session.registered` when the JIT registers code.
``live_pid() -> int or None``
    the process's ID when it is a live process on this machine (its perf map and jitdump
    files are read: :meth:`Session.perf_maps`); None for a core or a remote target.
``files_stop_id() -> hashable`` (optional)
    changes at each stop the user sees: files a runtime writes (perf maps) are read again
    then, not at every internal stop (GDB stops at each JIT registration); stop_id() without.
``forget_frames()`` (optional)
    drop the frames the debugger unwound (perf maps were added: they may unwind otherwise).

``no_code_at(pc) -> str or None`` (optional)
    why no code can be at an outer frame's `pc` (neither at it nor at the call before it):
    a frame the debugger made from a stack word, of which jitmap says nothing; or None.
``unwind_note() -> str or None`` (optional)
    after ``frames()``: why the debugger's own frames may be wrong (LLDB 19 and functions split
    into parts); the commands that walk the stack print it as a warning.
``shared_process() -> (process, serial) or None`` (optional)
    a libjitmap process model the debugger's own side of jitmap already holds (GDB: the
    reader plugin's), to scan into instead of one of our own.

Frame objects are :mod:`model`'s (``level``, ``pc``, ``function``, ``read_register``,
``read_memory``; ``arch`` is set here) plus, for ``verify``, ``has_caller()`` and
``stack() -> (sp, caller_sp) or None``. LLDB alone: ``has_module_at(addr)`` and
``add_image(source, data, functions)`` for ``load-images``.
"""
import ctypes
import errno
import os
import re
import stat

from . import discovery as D
from . import format as F
from . import model as M
from . import native as N
from . import perfmaps
from . import report as R

CommandError = R.CommandError
MAX_FRAMES = 10000  # frames walked by gc-roots --all and verify


# -- State between stops --


class Settings:
    """Which records are decoded as statepoints (GDB: `set jitmap statepoints`,
    `set jitmap statepoint-ids`; LLDB: `stackmap statepoints`)."""

    MODES = {"auto": N.STATEPOINT_AUTO, "all": N.STATEPOINT_ALL, "none": N.STATEPOINT_NONE}

    def __init__(self):
        self.mode = "auto"
        self.ids = ()

    def statepoints(self):
        return self.MODES[self.mode], tuple(self.ids)

    @staticmethod
    def parse_ids(text):
        """A comma-separated list of record IDs ("" for none); ValueError if it is not."""
        return tuple(int(x, 0) for x in (text or "").replace(" ", "").split(",") if x)


class Session:
    """What jitmap knows about the debugged process: the catalog of its stackmaps (read
    again after anything that may change it), the settings, the watched record IDs."""

    def __init__(self):
        self.discovery = D.Discovery()
        self.catalog = None
        self.settings = Settings()
        self.watched = {}  # record ID -> set of PCs with a breakpoint
        self._process = None
        self._stop = None
        self.perf_files = []  # perf maps and jitdump files the user named (perf-map FILE)
        self.perf_own = True  # a live process's own files are read (perf-map -off)
        self._perf = None     # (process key, PerfMaps, stop id of the last read)
        self.core_fd = None   # the decompressed core the debugger reads (`core FILE`)
        self.core_opened = None  # (process key, path) of the core `core FILE` opened

    def remember_core(self, dbg, path):
        """The core `core FILE` opened (for a debugger that cannot say which core it debugs:
        LLDB before 17), by the process it became."""
        try:
            self.core_opened = (dbg.check_process(), path)
        except CommandError:
            self.core_opened = None
        self.perf_reread()  # read while the core opened, before it was known

    def core_file(self, dbg, key):
        """The core file the debugger debugs, or None for a live process."""
        path = getattr(dbg, "core_file", lambda: None)()
        opened = self.core_opened
        if path is None and opened and opened[0] == key and dbg.live_pid() is None:
            path = opened[1]
        return path

    def keep_core_fd(self, fd):
        """Keep `fd`, the decompressed core the debugger now reads (None: none), and close
        the one before: its unlinked file's blocks go back to the file system."""
        if self.core_fd is not None and self.core_fd != fd:
            os.close(self.core_fd)
        self.core_fd = fd

    def forget(self):
        self.discovery.flush()
        self.catalog = None
        self._stop = None

    def get(self, dbg, refresh=False):
        """The catalog for the current stop (scanning when something may have changed)."""
        N.load(getattr(dbg, "library_hint", None))
        key = dbg.check_process()
        if key != self._process:
            self.forget()
            self._process = key
        stop = dbg.stop_id()
        if (refresh or self.catalog is None or stop != self._stop or
                not self.discovery.current(dbg)):
            self.catalog = self.discovery.scan(dbg)
            self._stop = stop
        return self.catalog

    # -- Perf maps and jitdump files (perfmaps.py) --

    def perf_maps(self, dbg, key=None):
        """The perf maps and jitdump files of the debugged process (a perfmaps.PerfMaps),
        read again at most once per stop: those the user named, and a live process's own
        (dbg.live_pid()) unless turned off. None when none was read. `key` identifies the
        process where the caller has it (else dbg.check_process())."""
        key = key if key is not None else dbg.check_process()
        stop = getattr(dbg, "files_stop_id", dbg.stop_id)()
        if self._perf is None or self._perf[0] != key:
            if self._perf is not None:
                self._perf[1].close()
            self._perf = [key, perfmaps.PerfMaps(), None]
        maps = self._perf[1]
        if self._perf[2] != stop:
            self._perf[2] = stop
            # A core's own first (jitmap-core-handler's notes): a file the user names by the
            # same path replaces it.
            core = self.core_file(dbg, key) if self.perf_own else None
            if core:
                try:
                    maps.add_core(core)
                except OSError:
                    pass  # out of memory: the core's files are not used
            for path in self.perf_files:
                try:
                    maps.add_file(path)
                except OSError:
                    pass  # a problem of the set, which says why
            pid = dbg.live_pid() if self.perf_own else None
            if pid:
                maps.add_process(pid)
        return maps if len(maps) else None

    def perf_reread(self, drop=False):
        """Read the files again at the next use; `drop`: start from none (what was read from
        files no longer wanted goes)."""
        if self._perf is None:
            return
        if drop:
            self._perf[1].close()
            self._perf = None
        else:
            self._perf[2] = None

    def perf_code(self, dbg, frame):
        """What a perf map or jitdump says of a frame's code (perfmaps.PerfMaps.lookup), or
        None."""
        try:
            maps = self.perf_maps(dbg)
        except CommandError:
            return None
        if maps is None:
            return None
        return maps.code_at(frame.pc, frame.level > 0)

    def problems(self, limit=20):
        """What went wrong reading the process, at most `limit` sentences (then a count)."""
        return R.problems(self.catalog, limit)

    def no_stackmaps(self, dbg):
        hint = getattr(dbg, "files_hint", None)
        return CommandError(R.no_stackmaps_message(self.problems(), dbg.jit_descriptors(),
                                                   dbg.loaded_objects(),
                                                   hint() if hint else None))

    def stackmaps(self, dbg):
        """The catalog, which must have stackmaps."""
        catalog = self.get(dbg)
        if not catalog.stackmaps:
            raise self.no_stackmaps(dbg)
        return catalog

    # -- Frames --

    def arch_of(self, dbg, catalog, pc):
        sm = catalog.stackmap_for_pc(pc)
        if sm is not None and sm.arch:
            return sm.arch
        try:
            arch = N.lib().jitmap_arch_from_name(dbg.arch_name().encode())
        except Exception:
            arch = N.ARCH_UNKNOWN
        return arch or N.ARCH_X86_64

    def describe(self, dbg, catalog, frame, raw=False, statepoints=None, function=None):
        """The library's model.Report of a frame object (its arch set here); `function`: a
        name for it where neither the stackmap nor the debugger has one."""
        if getattr(frame, "arch", None) is None:
            frame.arch = self.arch_of(dbg, catalog, frame.pc)
        return M.describe(catalog, frame, raw, statepoints or self.settings.statepoints(),
                          function)

    def frame_object(self, dbg, catalog, frame, raw=False, statepoints=None):
        """The contract's frame object (`info stackmap -json`) of a frame object."""
        return self.describe(dbg, catalog, frame, raw, statepoints).obj

    # -- Breakpoints by record ID --

    def unresolved(self, catalog):
        """(id, pc, function name) of each record of a watched ID without a breakpoint yet."""
        out = []
        for rid, pcs in self.watched.items():
            new = {}
            for sm, rec in catalog.find_id(rid):
                pc = sm.record_pc(rec)
                fn = sm.record_function(rec)
                if pc not in pcs and pc not in new and fn is not None and fn.address:
                    new[pc] = sm.function_name(rec)
            out += [(rid, pc, name) for pc, name in sorted(new.items())]
        return out

    def resolve(self, dbg, catalog=None):
        """Set the breakpoints that are missing; the lines that say so."""
        if not self.watched:
            return []
        lines = []
        for rid, pc, fname in self.unresolved(catalog or self.get(dbg)):
            try:
                num = dbg.break_at(pc)
            except CommandError as e:
                lines.append("jitmap: record %d at 0x%x: %s" % (rid, pc, e))
                continue
            self.watched[rid].add(pc)
            lines.append("jitmap: record %d at 0x%x (%s): breakpoint %d" % (rid, pc, fname or "?",
                                                                             num))
        return lines

    def registered(self, dbg):
        """The JIT registered or unregistered code: the lines to print (breakpoints set)."""
        if not self.watched:
            return []
        return self.resolve(dbg, self.get(dbg, refresh=True))


SESSION = Session()


# -- The table of commands --


class Option:
    """One option: `name` is what the command's body sees; GDB spells it -NAME (or `gdb`),
    LLDB --NAME (and -SHORT)."""

    def __init__(self, name, help, short=None, gdb=None):
        self.name = name
        self.help = help
        self.short = short
        self.gdb = gdb or "-" + name

    def spellings(self, debugger):
        if debugger == "gdb":
            return [self.gdb]
        return (["-" + self.short] if self.short else []) + ["--" + self.name]

    def main(self, debugger):
        return self.spellings(debugger)[-1]


class Command:
    """One command of the table. `run(ctx, opts, args)` returns the lines to print, or an
    Output with warnings too; it raises CommandError for a sentence to show as the error."""

    def __init__(self, key, gdb, lldb, summary, body, options=(), args="", max_args=None,
                 category="stack", run=None, exclusive=(), parse_options=True):
        self.key = key
        self.names = {"gdb": gdb, "lldb": lldb}
        self.summary = summary
        self.body = body
        self.options = list(options)
        self.args = args  # {"gdb": "[LEVEL]", "lldb": "[FRAME]"} or one string
        self.max_args = max_args
        self.category = category
        self.body_fn = run
        self.exclusive = exclusive
        self.parse_options = parse_options  # False: the body parses its arguments itself

    def name(self, debugger):
        n = self.names[debugger]
        return n if debugger == "gdb" else "stackmap " + n

    def flags(self, debugger):
        return sorted(s for o in self.options for s in o.spellings(debugger))

    def spell(self, debugger):
        """Placeholders of the help: {json} -> -json or --json; {level} -> LEVEL or FRAME."""
        words = {o.name.replace("-", "_"): o.main(debugger) for o in self.options}
        words["level"] = "LEVEL" if debugger == "gdb" else "FRAME"
        return words

    def usage(self, debugger):
        args = self.args.get(debugger, "") if isinstance(self.args, dict) else self.args
        parts = [self.name(debugger)]
        skip = set()
        for a, b in self.exclusive:
            skip |= {a, b}
        for o in self.options:
            if o.name in skip:
                continue
            parts.append("[%s]" % o.main(debugger))
        for a, b in self.exclusive:
            parts.append("[%s | %s]" % (self._option(a).main(debugger),
                                        self._option(b).main(debugger)))
        if args:
            parts.append(args)
        return " ".join(parts)

    def _option(self, name):
        return next(o for o in self.options if o.name == name)

    def help(self, debugger):
        """The whole help text in `debugger`'s spelling."""
        out = [self.summary, "", "Usage: " + self.usage(debugger)]
        body = self.body(debugger) if callable(self.body) else self.body
        if body:
            out += ["", body.format(**self.spell(debugger)).rstrip()]
        if self.options:
            out.append("")
            for o in self.options:
                spelled = ", ".join(o.spellings(debugger))
                lines = o.help.format(**self.spell(debugger)).split("\n")
                out.append("  %-18s %s" % (spelled, lines[0]))
                out += ["  %-18s %s" % ("", more) for more in lines[1:]]
        other = "lldb" if debugger == "gdb" else "gdb"
        if self.names[other]:
            out += ["", "%s: `%s`." % ("LLDB" if other == "lldb" else "GDB", self.name(other))]
        return "\n".join(out)

    def line(self, debugger, opts=(), args=()):
        """The command line that runs this command in `debugger` with the options named in
        `opts` and the arguments `args`: how a test states one scenario for every
        debugger."""
        spelled = [self._option(o).main(debugger) for o in opts]
        return " ".join([self.name(debugger)] + spelled + [str(a) for a in args])

    def parse(self, debugger, argv):
        """(set of option names given, [other arguments]); unknown options are errors."""
        if not self.parse_options:
            return set(), list(argv)
        spelled = {s: o.name for o in self.options for s in o.spellings(debugger)}
        who = self.name(debugger)
        got, rest = set(), []
        for a in argv:
            if a.startswith("-") and not re.match(r"^-\d+$", a):
                if a not in spelled:
                    raise CommandError("%s: unknown option %s (options: %s)" % (
                        who, a, ", ".join(sorted(set(o.main(debugger) for o in self.options)))
                        or "none"))
                got.add(spelled[a])
            else:
                rest.append(a)
        if self.max_args is not None and len(rest) > self.max_args:
            raise CommandError("%s: too many arguments: %s" % (who, " ".join(rest[self.max_args:])))
        for a, b in self.exclusive:
            if a in got and b in got:
                raise CommandError("%s: %s and %s exclude each other" % (
                    who, self._option(a).main(debugger), self._option(b).main(debugger)))
        return got, rest

    def run(self, dbg, argv):
        """Parse and run; an Output."""
        opts, args = self.parse(dbg.name, argv)
        out = self.body_fn(Context(self, dbg), opts, args)
        return out if isinstance(out, Output) else Output(out or [])


class Output:
    """What a command prints: `lines` (its answer) and `warnings` (GDB prints them on its
    error stream; LLDB after the answer)."""

    def __init__(self, lines, warnings=()):
        self.lines = list(lines)
        self.warnings = list(warnings)


class Context:
    """What a command's body works with."""

    def __init__(self, command, dbg):
        self.command = command
        self.dbg = dbg
        self.session = SESSION
        self.who = command.name(dbg.name)

    def spelled(self, option):
        return self.command._option(option).main(self.dbg.name)

    def name_of(self, key, debugger=None):
        return TABLE[key].name(debugger or self.dbg.name)


# -- info (info stackmap / stackmap info) --


def _run_info(ctx, opts, args):
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


def _run_list(ctx, opts, args):
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


def _run_gc_roots(ctx, opts, args):
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


def _run_bt(ctx, opts, args):
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


def _run_verify(ctx, opts, args):
    dbg, s = ctx.dbg, ctx.session
    catalog = s.stackmaps(dbg)
    obj = R.verify(catalog, dbg.function_at, dbg.disassemble, _verify_frames(dbg, s, catalog))
    if "json" in opts:
        return [F.to_json(obj)]
    return _noted(dbg, R.verify_text(obj))


# -- status, refresh --


def _run_status(ctx, opts, args):
    dbg, s = ctx.dbg, ctx.session
    catalog = s.get(dbg)
    return R.status_lines(N.path(), dbg.jit_descriptors(), dbg.loaded_objects(), catalog,
                          s.problems())


def _run_core(ctx, opts, args):
    """Open a core file, stored compressed (systemd-coredump's) or not."""
    dbg, s = ctx.dbg, ctx.session
    if not args:
        raise CommandError("%s: which core file? (%s FILE)" % (ctx.who, ctx.who))
    path = os.path.expanduser(args[0])
    try:
        st = os.stat(path)
    except OSError as e:
        raise CommandError("%s: %s: %s" % (ctx.who, path, e.strerror)) from None
    if stat.S_ISDIR(st.st_mode):  # the debugger would close the core it has, then refuse
        raise CommandError("%s: %s: %s" % (ctx.who, path, os.strerror(errno.EISDIR)))
    head = b""
    if stat.S_ISREG(st.st_mode):  # opening a FIFO would wait for a writer
        try:
            with open(path, "rb") as f:
                head = f.read(8)
        except OSError as e:
            raise CommandError("%s: %s: %s" % (ctx.who, path, e.strerror)) from None
    N.load(getattr(dbg, "library_hint", None))
    lib = N.lib()
    codec = lib.jitmap_compression_of(head, len(head))
    if not codec:
        lines = dbg.open_core(path)
        s.keep_core_fd(None)
        s.remember_core(dbg, path)
        return lines
    err, note = N.Error(), ctypes.create_string_buffer(256)
    fd = lib.jitmap_core_decompress(path.encode(), None, note, len(note), ctypes.byref(err))
    if fd < 0:
        raise CommandError("%s: %s: %s" % (ctx.who, path, N.text(err.reason)))
    # The debugger reads the unlinked file through this process's descriptor, kept open
    # while it may read it (until the next core opened here).
    try:
        lines = dbg.open_core("/proc/%d/fd/%d" % (os.getpid(), fd))
    except BaseException:
        os.close(fd)
        raise
    s.keep_core_fd(fd)
    s.remember_core(dbg, "/proc/%d/fd/%d" % (os.getpid(), fd))
    size = os.fstat(fd).st_size
    out = ["%s: %s is a %s-compressed core: opened as the core it holds (%d bytes, in an "
           "unlinked temporary file)" % (ctx.who, path, N.text(codec), size)]
    if note.value:
        out.append("%s: warning: %s" % (ctx.who, N.text(note.value)))
    return out + list(lines or [])


def _run_refresh(ctx, opts, args):
    ctx.session.forget()
    return []


# -- break --


def _run_break(ctx, opts, args):
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


# -- perf-map --


def _run_perf_map(ctx, opts, args):
    dbg, s = ctx.dbg, ctx.session
    if "off" in opts or "on" in opts:
        s.perf_own = "on" in opts
        s.perf_reread(drop=True)  # without (or with) the process's own
    lines = []
    for path in args:
        path = os.path.expanduser(path)
        if os.path.isdir(path):
            raise CommandError("%s: %s: %s" % (ctx.who, path, os.strerror(errno.EISDIR)))
        probe = perfmaps.PerfMaps()
        try:
            n = probe.add_file(path)
        except OSError as e:
            raise CommandError("%s: %s: %s" % (ctx.who, path, e.strerror)) from None
        finally:
            probe.close()
        if path not in s.perf_files:
            s.perf_files.append(path)
        s.perf_reread()
        lines.append("jitmap: %s: %s" % (path, F.plural(n, "code object")))
    if args or "off" in opts or "on" in opts:
        forget = getattr(dbg, "forget_frames", None)
        if forget:
            forget()  # the frames it unwound before may now unwind otherwise
    if args:
        return lines
    try:
        maps = s.perf_maps(dbg)
    except CommandError:
        maps = None  # no process yet: what was named is read when there is one
    out = []
    for path, n, in_core in maps.files() if maps else []:
        out.append("%s%s: %s" % (path, " (in the core)" if in_core else "",
                                 F.plural(n, "code object")))
    if not out:
        out.append("No perf map or jitdump file is read%s." % (
            "" if s.perf_own else " (the process's own are not read: %s %s)" % (
                ctx.who, ctx.spelled("on"))))
    if s.perf_files:
        out.append("Named with %s: %s." % (ctx.who, ", ".join(s.perf_files)))
    problems = maps.problems() if maps else []
    if problems:
        out.append("Problems:")
        out += ["  " + p for p in problems]
    return out


# -- statepoints (LLDB; GDB has set/show jitmap statepoints) --


def _run_statepoints(ctx, opts, args):
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


# -- load-images (LLDB: its JIT loader may not have run) --


def _run_load_images(ctx, opts, args):
    dbg, s = ctx.dbg, ctx.session
    catalog = s.get(dbg)
    lines = []
    added = 0
    for src in catalog.sources:
        if src.kind != "jit" or src.stackmap is None:
            continue
        fns = [(N.text(fn.name), fn.address) for _, fn in src.stackmap.functions()
               if fn.name and fn.address]
        if not fns or all(dbg.has_module_at(a) for _, a in fns):
            continue
        if src.symfile_size > D.MAX_IMAGE:
            lines.append("cannot add %s: its image is too large" % src.describe())
            continue
        try:
            data = dbg.read(src.symfile_addr, src.symfile_size)
        except D.ReadError as e:
            lines.append("cannot add %s: %s" % (src.describe(), e))
            continue
        # The debugger reads a read-only section from the file, not from the process (and
        # LLDB 19 reads an empty code section as zeros): the file carries the code.
        data, why = D.image_with_code(dbg, bytes(data))
        got = dbg.add_image(src, data, fns)
        if why and not got.startswith("cannot"):
            got += " (its code is not in the file: %s)" % why
        lines.append(got)
        if not got.startswith("cannot"):
            added += 1
    if not lines:
        lines.append("Every JIT image with a stackmap is known to LLDB already.")
    else:
        lines.append("%s added." % F.plural(added, "JIT image"))
    return lines


# -- Convenience values (GDB's $_stackmap(N), $_stackmap_id()) --


def location_value(dbg, n):
    """(kind, size, value) of location `n` of the record at the selected frame: value an
    int (unsigned, of `size` bytes). CommandError when there is none or it is unavailable."""
    s = SESSION
    obj = s.frame_object(dbg, s.get(dbg), dbg.selected_frame())
    if obj["record"] is None:
        raise CommandError(obj["error"])
    locs = obj["locations"]
    if not 0 <= n < len(locs):
        raise CommandError("$_stackmap: record %d has %d locations (0 to %d)" % (
            obj["record"]["id"], len(locs), len(locs) - 1))
    loc = locs[n]
    v = loc["value"]
    if v is None:
        raise CommandError("$_stackmap(%d): unavailable: %s" % (n, loc.get("error")))
    if isinstance(v, str):
        raise CommandError("$_stackmap(%d): a %d-byte value (0x%s); only values up to 8 bytes "
                           "are returned" % (n, loc["size"], v))
    return loc["kind"], loc["size"], v


def record_id(dbg):
    """The ID of the record at the selected frame, or None."""
    s = SESSION
    obj = s.frame_object(dbg, s.get(dbg), dbg.selected_frame())
    return obj["record"]["id"] if obj.get("record") else None


# -- The table --

_JSON = Option("json", "print one JSON object", short="j")

TABLE = {c.key: c for c in (
    Command(
        "info", "info stackmap", "info",
        "Show the stackmap record at a frame: each live value's location and value.",
        "The record describes the selected frame (or frame number {level}): frame 0 at its PC,\n"
        "an outer frame at its return address (stackmaps and statepoints after calls), or at the\n"
        "start of the call sequence that returns there (patchpoints). For each location:\n"
        "index, kind, where (a register such as rbx, or [rsp+16], rbp-8, a constant), size and\n"
        "value. Statepoints also show their calling convention, flags, deopt values and GC\n"
        "roots (base, derived, derived - base); patchpoints their live-out registers. A value\n"
        "that cannot be known (a caller-saved register in an outer frame, memory missing from\n"
        "a core) is shown as unavailable, with the reason. A frame that is not at a record is\n"
        "an error that names the nearest records and how far.",
        [Option("json", "print one JSON object (its fields: P/share/doc/jitmap/json.md); a\n"
                "frame without a record gives \"record\": null with \"error\" and \"nearest\"",
                short="j"),
         Option("raw", "also show each location's raw fields (kind, size, DWARF\n"
                "register, offset)", short="r"),
         Option("statepoint", "decode the record as a statepoint, whatever its shape"),
         Option("no-statepoint", "show the record's locations without statepoint decoding")],
        args={"gdb": "[LEVEL]", "lldb": "[FRAME]"}, max_args=1, run=_run_info,
        exclusive=[("statepoint", "no-statepoint")]),
    Command(
        "list", "info stackmaps", "list",
        "List the stackmaps of the program: functions and their records (ID, PC, kind).",
        "With REGEXP, only the functions whose name matches it (a Python regular expression,\n"
        "searched). Stackmaps come from the JIT entries registered through\n"
        "__jit_debug_descriptor and from the .llvm_stackmaps sections of loaded files. Kinds:\n"
        "statepoint (by its shape), patchpoint (has live-out registers), stackmap (anything\n"
        "else).",
        [Option("json", "one JSON object: {{\"stackmaps\": [...], \"problems\": [...]}}",
                short="j")],
        args="[REGEXP]", max_args=1, run=_run_list),
    Command(
        "gc-roots", "info gc-roots", "gc-roots",
        "Show the GC roots of this frame, or of every frame on the stack.",
        "What a moving collector would scan and update at the statepoints on the stack: for\n"
        "each (base, derived) pair of a statepoint record, the frame, the slot (a stack\n"
        "address, or a register), the base and derived pointers and derived - base; and the\n"
        "gc allocas. Without {all}, the selected frame only. Frames in stackmap functions that\n"
        "are not at a record are listed as such (a collector could not scan them).",
        [Option("all", "every frame of the selected thread", short="a"),
         Option("json", "one JSON object: {{\"roots\": [...], \"frames\": [...], \"notes\": "
                "[...]}}", short="j")],
        max_args=0, run=_run_gc_roots),
    Command(
        "verify", "jitmap verify", "verify",
        "Cross-check the stackmaps against the code and the live frames.",
        "Checks:\n"
        "  unrelocated      every function address is set (not 0) in the section read from\n"
        "                   memory\n"
        "  pc-in-function   each record's PC lies in its function (by the code's symbols)\n"
        "  register         every register number is a register of the architecture\n"
        "  frame-size       for frames on the stack at a record: the function's stack size\n"
        "                   matches the frame the unwinder computed (CFA - SP)\n"
        "  stack-slot       for those frames: stack locations lie inside the frame [SP, CFA)\n"
        "  patch-shadow     a call sequence starting at a record does not run over the next\n"
        "                   record",
        [Option("json", "one JSON object: {{\"records_checked\": N, \"frames_checked\": N,\n"
                "\"problems\": [{{\"function\", \"record\", \"pc\", \"check\", \"detail\"}}]}}",
                short="j")],
        max_args=0, run=_run_verify),
    Command(
        "break", "jitmap break", "break",
        "Break at every PC of stackmap record ID, also in JIT code registered later.",
        "Without ID, list the watched IDs. A breakpoint is set at each PC that has a record\n"
        "with that ID (several functions may share an ID). While an ID is watched, jitmap\n"
        "checks each new JIT registration (a breakpoint on __jit_debug_register_code that\n"
        "never shows unless a watched ID appears) and adds breakpoints at its new PCs. The\n"
        "breakpoints set this way are ordinary breakpoints.",
        [Option("delete", "stop watching the IDs given (their breakpoints stay)", short="d",
                gdb="-d")],
        args="[ID...]", category="breakpoints", run=_run_break),
    Command(
        "core", "jitmap core", "core",
        "Open a core file, also one stored compressed (zstd, lz4, xz).",
        "systemd-coredump stores cores compressed (core.*.zst, lz4 or xz where built so),\n"
        "which the debugger cannot read. jitmap decompresses such a core as a stream into an\n"
        "unlinked temporary file ($TMPDIR, else /var/tmp), its blocks of zeros left as holes, and\n"
        "has the debugger open that; a core that is not compressed is opened as it is. The\n"
        "compression is told by the file's first bytes, not by its name. Load the program\n"
        "first (`file EXE` in GDB, `target create EXE` in LLDB) where the core's own path to\n"
        "it is gone.",
        args="FILE", max_args=1, run=_run_core, category="files"),
    Command(
        "status", "jitmap status", "status",
        "Show where jitmap looks: its library, the JIT descriptors, entries and problems.",
        "", max_args=0, run=_run_status),
    Command(
        "refresh", "jitmap refresh", "refresh",
        "Forget what jitmap has read from the process, and read it again when next needed.",
        "", max_args=0, run=_run_refresh),
    Command(
        "perf-map", "jitmap perf-map", "perf-map",
        "Name JIT code from perf maps and jitdump files: show them, or read more.",
        "Runtimes that do not register their code with the debugger (Node.js with\n"
        "--perf-basic-prof or --perf-prof, CPython 3.12+ with -X perf, the JVM, .NET, ...)\n"
        "list it in a perf map (/tmp/perf-PID.map: START SIZE NAME lines) or a jitdump file\n"
        "(perf's format). jitmap reads a live process's own at each stop, names the frames\n"
        "in that code, and unwinds them by frame pointers where the debugger cannot. Give\n"
        "FILE for a core (the files outlive the process) or a map kept elsewhere; the\n"
        "content says which kind it is. Without FILE, list the files read, how many code\n"
        "objects each names, and what could not be read. {off} stops reading the process's\n"
        "own files; {on} reads them again.",
        [Option("off", "do not read the live process's own perf map and jitdump files"),
         Option("on", "read them (the default)")],
        args="[FILE...]", category="stack", run=_run_perf_map, exclusive=(("off", "on"),)),
    Command(
        "statepoints", None, "statepoints",
        "Show or set which stackmap records are decoded as statepoints.",
        "auto (the default): the records whose shape is a statepoint's (three leading\n"
        "constants: calling convention, flags, deopt count; then the deopt values and\n"
        "base/derived pairs); all: every record (and say which do not fit); none: no record.\n"
        "The IDs given with --ids flip the decision for those records (--ids \"\" for none).\n"
        "GDB: `set jitmap statepoints`, `set jitmap statepoint-ids`.",
        args="[auto | all | none] [--ids ID,...]", run=_run_statepoints, parse_options=False),
    Command(
        "bt", None, "bt",
        "Show the backtrace: each JIT frame's record and the interpreter frames it stands for.",
        "Each frame: its number, PC and function; a frame at a stackmap record names the record\n"
        "(and whether it is a statepoint); under it, the interpreter frames a runtime described\n"
        "with jitmap.names.deopt_frames, with their values (man 7 jitmap). GDB's own bt\n"
        "shows the same through jitmap's frame filter, and LLDB 22's and newer's own bt\n"
        "through jitmap's frame provider: this command is for older LLDBs, and for the\n"
        "values.",
        [Option("json", "one JSON object: {{\"frames\": [{{\"frame\", \"pc\", \"function\",\n"
                "\"record\", \"statepoint\", \"virtual_frames\"}}]}}", short="j")],
        args="[COUNT]", max_args=1, run=_run_bt),
    Command(
        "load-images", None, "load-images",
        "Give LLDB the JIT images that its JIT loader did not load.",
        "LLDB's JIT loader (plugin.jit-loader.gdb) reads the registered JIT images itself,\n"
        "live and (LLDB 16 and 19) when a core is opened, and then names and unwinds JIT\n"
        "frames. Where it did not run (it is turned off, as it must be for a core whose entry\n"
        "list loops, since LLDB walks it without a cycle check), LLDB shows JIT frames without\n"
        "names and may not unwind through them. This command adds each JIT image jitmap found\n"
        "(by walking __jit_debug_descriptor itself) that no module covers yet as a module\n"
        "(written to a temporary file, with the code that an image leaves in the process\n"
        "copied into it), and places the sections that hold its stackmap functions at the\n"
        "functions' addresses. LLDB then names and unwinds those frames as if its loader had\n"
        "run.",
        max_args=0, run=_run_load_images),
)}


def commands(debugger):
    """The commands `debugger` has, in the table's order."""
    return [c for c in TABLE.values() if c.names[debugger]]
