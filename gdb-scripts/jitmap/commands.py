"""jitmap's commands, once for every debugger: one table (names, options, help, run) over a
:class:`Debugger` protocol.

Debugger-neutral (no ``import gdb``, no ``import lldb``). Each command of the table has its
name in GDB (``info stackmap``) and in LLDB (``stackmap info``), its options as each debugger
spells them (``-json``; ``-j, --json``), its help and its body. The bodies live by the
commands' ideas: commands_frames.py (info, list, gc-roots, bt, verify), commands_files.py
(core, perf-map, load-images), commands_state.py (status, refresh, break, statepoints); what
they share between commands and stops is the session (session.py). A front end implements
:class:`Debugger` (gdb_adapter.py, lldb_adapter.py), registers the table with its debugger
(gdb_commands.py, lldb_commands.py), and turns :class:`report.CommandError` into its own
error. The text and JSON a command prints are decided here and in those modules, so that GDB
and LLDB agree by construction.

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
import re

from . import commands_files as CF
from . import commands_frames as CR
from . import commands_state as CS
from . import report as R
from . import session as S

CommandError = R.CommandError
Output = R.Output
MAX_FRAMES = CR.MAX_FRAMES
# The session the commands share (session.py), here too for the front ends and tests.
Session, Settings, SESSION = S.Session, S.Settings, S.SESSION


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
        args={"gdb": "[LEVEL]", "lldb": "[FRAME]"}, max_args=1, run=CR.run_info,
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
        args="[REGEXP]", max_args=1, run=CR.run_list),
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
        max_args=0, run=CR.run_gc_roots),
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
        max_args=0, run=CR.run_verify),
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
        args="[ID...]", category="breakpoints", run=CS.run_break),
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
        args="FILE", max_args=1, run=CF.run_core, category="files"),
    Command(
        "status", "jitmap status", "status",
        "Show where jitmap looks: its library, the JIT descriptors, entries and problems.",
        "", max_args=0, run=CS.run_status),
    Command(
        "refresh", "jitmap refresh", "refresh",
        "Forget what jitmap has read from the process, and read it again when next needed.",
        "", max_args=0, run=CS.run_refresh),
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
        args="[FILE...]", category="stack", run=CF.run_perf_map, exclusive=(("off", "on"),)),
    Command(
        "statepoints", None, "statepoints",
        "Show or set which stackmap records are decoded as statepoints.",
        "auto (the default): the records whose shape is a statepoint's (three leading\n"
        "constants: calling convention, flags, deopt count; then the deopt values and\n"
        "base/derived pairs); all: every record (and say which do not fit); none: no record.\n"
        "The IDs given with --ids flip the decision for those records (--ids \"\" for none).\n"
        "GDB: `set jitmap statepoints`, `set jitmap statepoint-ids`.",
        args="[auto | all | none] [--ids ID,...]", run=CS.run_statepoints, parse_options=False),
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
        args="[COUNT]", max_args=1, run=CR.run_bt),
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
        max_args=0, run=CF.run_load_images),
)}


def commands(debugger):
    """The commands `debugger` has, in the table's order."""
    return [c for c in TABLE.values() if c.names[debugger]]
