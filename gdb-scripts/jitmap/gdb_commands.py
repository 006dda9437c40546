"""jitmap's commands in GDB: the table of :mod:`jitmap.commands` registered with GDB.

``import jitmap.gdb_commands`` (jitmap.gdb does it) defines the commands of the table in
commands.py with their GDB names:

  info stackmap [-json] [-raw] [-statepoint|-no-statepoint] [LEVEL]
  info stackmaps [-json] [REGEXP]
  info gc-roots [-all] [-json]
  jitmap verify [-json]
  jitmap break [-d] [ID...]
  jitmap status
  jitmap refresh

and what only GDB has: set/show jitmap statepoints auto|all|none, set/show jitmap
statepoint-ids ID,..., and the convenience functions $_stackmap(N), $_stackmap_id().

This module only registers: the table's commands as gdb.Command classes over the one
commands.Debugger of gdb_adapter.py (GDB's frames, registers, memory, symbols, breakpoints),
GDB's events to that adapter, the frame filter (gdb_frames.py) and the unwinders
(gdb_perf.py). What a command computes and prints is commands.py's. Every failure is a
gdb.GdbError with one clear sentence.
"""
import functools
import os
import traceback

import gdb

from . import commands as C
from . import gdb_adapter as A
from . import gdb_frames
from . import gdb_perf
from . import gdb_reader
from . import model as M
from . import native as N
from . import report as R

GDB = A.GDB
SESSION = C.SESSION


# -- Errors: one sentence, never a traceback --


def _guard(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (gdb.GdbError, KeyboardInterrupt):
            raise
        except R.CommandError as e:
            raise gdb.GdbError(str(e)) from None
        except N.LibraryError as e:
            raise gdb.GdbError("jitmap: %s" % e) from None
        except gdb.MemoryError as e:
            raise gdb.GdbError("jitmap: %s" % e) from None
        except gdb.error as e:
            raise gdb.GdbError("jitmap: %s" % e) from None
        except Exception as e:
            if os.environ.get("JITMAP_DEBUG"):
                traceback.print_exc()
            raise gdb.GdbError("jitmap: internal error: %s: %s (set JITMAP_DEBUG=1 for the "
                               "traceback, and please report it)" % (type(e).__name__, e)) from None
    return wrapper


# -- The commands of the table --


def _complete_flags(flags, text, word):
    """Options completing the last token of `text`. GDB breaks words at '-', so `word` may
    be the token without its dash: return what replaces `word`."""
    token = "" if not text or text[-1:].isspace() else text.split()[-1]
    word = word or ""
    if token and not token.startswith("-"):
        return []
    cut = len(token) - len(word)
    if cut < 0:
        return []
    return [f[cut:] for f in sorted(flags) if f.startswith(token)]


def _argv(arg, name):
    try:
        return gdb.string_to_argv(arg or "")
    except Exception:
        raise gdb.GdbError("%s: cannot parse the arguments" % name) from None


def _define(command):
    """A gdb.Command class for one command of the table."""
    category = {"stack": gdb.COMMAND_STACK,
                "breakpoints": gdb.COMMAND_BREAKPOINTS,
                "files": gdb.COMMAND_FILES}[command.category]
    name = command.name("gdb")
    flags = command.flags("gdb")

    def __init__(self):
        gdb.Command.__init__(self, name, category)

    def complete(self, text, word):
        got = _complete_flags(flags, text, word) if flags else []
        if not got and "FILE" in command.usage("gdb"):
            token = "" if not text or text[-1:].isspace() else text.split()[-1]
            if not token.startswith("-"):
                return gdb.COMPLETE_FILENAME
        return got

    @_guard
    def invoke(self, arg, from_tty):
        out = command.run(GDB, _argv(arg, name))
        for line in out.lines:
            gdb.write(line + "\n")
        for line in out.warnings:
            gdb.write(line + "\n", gdb.STDERR)

    cls = type("Command_" + command.key.replace("-", "_"), (gdb.Command,),
               {"__doc__": command.help("gdb"), "__init__": __init__, "complete": complete,
                "invoke": invoke})
    return cls


class Jitmap(gdb.Command):
    """jitmap: stackmaps of JIT code (core, perf-map, status, verify, break, refresh).

Usage: jitmap SUBCOMMAND ..."""

    def __init__(self):
        super().__init__("jitmap", gdb.COMMAND_STACK, prefix=True)

    def invoke(self, arg, from_tty):
        # GDB calls a Python prefix that has an invoke for every word that is not one of its
        # subcommands: refuse it as GDB's own prefixes do (`info bogus`), so that a batch run
        # sees the failure. Alone, the prefix lists its subcommands, as `info` does.
        words = (arg or "").split()
        if words:
            raise gdb.GdbError('Undefined jitmap command: "%s".  Try "help jitmap".' % words[0])
        gdb.execute("help jitmap", from_tty)


# -- Settings --


class _SetJitmap(gdb.Command):
    """Settings of jitmap's stackmap commands."""

    def __init__(self):
        super().__init__("set jitmap", gdb.COMMAND_DATA, prefix=True)


class _ShowJitmap(gdb.Command):
    """Settings of jitmap's stackmap commands."""

    def __init__(self):
        super().__init__("show jitmap", gdb.COMMAND_DATA, prefix=True)


class _StatepointsParam(gdb.Parameter):
    """Which stackmap records are decoded as statepoints.

auto: records whose shape is a statepoint's (three leading constants: calling convention,
flags, deopt count, then deopt values and base/derived pairs); all: every record (and say
which do not fit); none: no record. `set jitmap statepoint-ids` flips it for some IDs."""

    set_doc = "Set which stackmap records are decoded as statepoints."
    show_doc = "Show which stackmap records are decoded as statepoints."

    def __init__(self):
        super().__init__("jitmap statepoints", gdb.COMMAND_DATA, gdb.PARAM_ENUM,
                         list(C.Settings.MODES))
        self.value = SESSION.settings.mode

    def get_set_string(self):
        SESSION.settings.mode = self.value or "auto"
        return ""

    def get_show_string(self, svalue):
        return "Stackmap records decoded as statepoints: %s." % svalue


class _StatepointIdsParam(gdb.Parameter):
    """Record IDs that flip `set jitmap statepoints`: under auto or all they are never decoded
as statepoints, under none they are. A comma-separated list of numbers; empty for none."""

    set_doc = "Set the record IDs that flip the statepoint decision."
    show_doc = "Show the record IDs that flip the statepoint decision."

    def __init__(self):
        super().__init__("jitmap statepoint-ids", gdb.COMMAND_DATA, gdb.PARAM_STRING)
        self.value = ""

    def get_set_string(self):
        try:
            SESSION.settings.ids = C.Settings.parse_ids(self.value)
        except ValueError:
            bad = self.value
            self.value = ",".join(str(x) for x in SESSION.settings.ids)
            raise gdb.GdbError("jitmap statepoint-ids: %r is not a list of numbers" % bad)
        return ""

    def get_show_string(self, svalue):
        return "Record IDs that flip the statepoint decision: %s." % (svalue or "none")


# -- Convenience functions --


def _integral(value):
    """Whether a gdb.Value is a whole number (an integer, character, boolean or enum)."""
    try:
        code = value.type.strip_typedefs().code
    except gdb.error:
        return False
    return code in (gdb.TYPE_CODE_INT, gdb.TYPE_CODE_CHAR, gdb.TYPE_CODE_BOOL,
                    gdb.TYPE_CODE_ENUM)


class StackmapValue(gdb.Function):
    """$_stackmap(N): the value of location N of the stackmap record at the selected frame.

Usage: print $_stackmap(N)

An integer of the location's size (signed), or an address for a Direct location. An error
when the value is unavailable (the reason is given) or the frame is not at a record."""

    def __init__(self):
        super().__init__("_stackmap")

    @_guard
    def invoke(self, *args):
        # GDB passes what the user wrote, any number of values of any type.
        if len(args) != 1 or not _integral(args[0]):
            raise gdb.GdbError("$_stackmap: one argument, a location number of the record at "
                               "the selected frame (Usage: print $_stackmap(N))")
        n = int(args[0])
        kind, size, v = C.location_value(GDB, n)
        if kind == "direct":
            return gdb.Value(v).cast(gdb.lookup_type("void").pointer())
        size = size if size in (1, 2, 4, 8) else 8
        tname = {1: "signed char", 2: "short", 4: "int", 8: "long"}[size]
        return gdb.Value(M.signed(v, size)).cast(gdb.lookup_type(tname))


class StackmapId(gdb.Function):
    """$_stackmap_id(): the ID of the stackmap record at the selected frame (-1 if none).

Usage: print $_stackmap_id()"""

    def __init__(self):
        super().__init__("_stackmap_id")

    @_guard
    def invoke(self, *args):
        if args:
            raise gdb.GdbError("$_stackmap_id: no argument (Usage: print $_stackmap_id())")
        rid = C.record_id(GDB)
        if rid is None:
            return gdb.Value(-1).cast(gdb.lookup_type("long"))
        return gdb.Value(rid).cast(gdb.lookup_type("unsigned long"))


# -- Registration --


def _connect():
    ev = gdb.events
    ev.stop.connect(GDB.stopped)
    ev.cont.connect(GDB.invalidate)
    ev.memory_changed.connect(GDB.invalidate)
    ev.inferior_call.connect(GDB.invalidate)
    ev.new_objfile.connect(GDB.objfiles_changed)
    ev.clear_objfiles.connect(GDB.forget)
    ev.exited.connect(_exited)


def _exited(*_args):
    """The process exited or was killed, or the core closed (`core-file`, `detach`): its
    perf maps and jitdump files are read again for the next (a core of the same process ID
    carries its own), and the decompressed core `jitmap core` kept open is let go."""
    for step in (GDB.forget, GDB.core_closed, lambda: SESSION.perf_reread(drop=True),
                 lambda: SESSION.keep_core_fd(None)):
        try:
            step()
        except Exception:  # never into the user's session from an event
            if os.environ.get("JITMAP_DEBUG"):
                traceback.print_exc()


_registered = False


def register():
    """Define the commands (once)."""
    global _registered
    if _registered:
        return
    _registered = True
    Jitmap()  # the prefix, before its subcommands
    for c in C.commands("gdb"):
        _define(c)()
    # The prefixes may be there already: the system gdbinit script of auto-load defines them
    # for `set jitmap auto-load`, and GDB drops the subcommands of a prefix defined again.
    if not gdb_reader.settings_prefixes_defined():
        _SetJitmap()
        _ShowJitmap()
    _StatepointsParam()
    _StatepointIdsParam()
    StackmapValue()
    StackmapId()
    _connect()
    gdb_frames.register()  # bt full, MI and DAP locals of JIT frames
    gdb_perf.register()  # the frames of runtimes that write perf maps


register()
