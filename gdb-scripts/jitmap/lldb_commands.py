"""jitmap's commands in LLDB: the table of :mod:`jitmap.commands` registered with LLDB.

``command script import PREFIX/share/jitmap/lldb/jitmap.py`` registers, through
:func:`register` (called from that script's ``__lldb_init_module``), the commands of the
table in commands.py under the ``stackmap`` container:

  stackmap info [--json] [--raw] [--statepoint | --no-statepoint] [FRAME]
  stackmap list [--json] [REGEXP]
  stackmap gc-roots [--all] [--json]
  stackmap verify [--json]
  stackmap break [--delete] [ID...]
  stackmap status
  stackmap refresh
  stackmap statepoints [auto | all | none] [--ids ID,...]
  stackmap load-images

They print what GDB's ``info stackmap``, ``info stackmaps``, ``info gc-roots``, ``jitmap verify``
and ``jitmap status`` print (docs/lldb.md): the same table runs both. This module only
registers the table, each command run over a commands.Debugger of lldb_adapter.py, and the
frame provider (lldb_frames.py). Every failure is one sentence through ``result.SetError``,
never a traceback.

Written against the SB API of LLDB 14 (nothing newer is used); tested with LLDB 16 and 19.
"""
import os
import shlex
import traceback

import lldb

from . import commands as C
from . import lldb_adapter as A
from . import lldb_frames
from . import native as N

SESSION = C.SESSION
Error = C.CommandError
set_library_hint = A.set_library_hint  # the entry script's (share/jitmap/lldb/jitmap.py)


# -- The commands of the table --


def _argv(command, name):
    try:
        return shlex.split(command or "")
    except ValueError as e:
        raise Error("%s: cannot parse the arguments: %s" % (name, e)) from None


def _execute(command, text, exe_ctx, result):
    """Run one command of the table; its answer or its error into `result`."""
    try:
        out = command.run(A.Lldb(exe_ctx), _argv(text, command.name("lldb")))
        lines = out.lines + out.warnings
        if lines:
            print("\n".join(lines), file=result)
        result.SetStatus(lldb.eReturnStatusSuccessFinishResult)
    except Error as e:
        result.SetError(str(e))
    except N.LibraryError as e:
        result.SetError("jitmap: %s" % e)
    except KeyboardInterrupt:
        result.SetError("jitmap: interrupted")
    except Exception as e:
        msg = ("jitmap: internal error: %s: %s (set JITMAP_DEBUG=1 for the traceback, and "
               "please report it)" % (type(e).__name__, e))
        if os.environ.get("JITMAP_DEBUG"):
            msg += "\n" + traceback.format_exc()
        result.SetError(msg)


def _define(command):
    """A class in LLDB's command protocol for one command of the table."""

    def __init__(self, debugger, internal_dict):
        self.debugger = debugger

    def __call__(self, debugger, text, exe_ctx, result):
        _execute(command, text, exe_ctx, result)

    return type("Stackmap_" + command.key.replace("-", "_"), (), {
        "__doc__": command.help("lldb"), "__init__": __init__, "__call__": __call__,
        "get_short_help": lambda self: command.summary,
        "get_long_help": lambda self: command.help("lldb")})


COMMANDS = C.commands("lldb")
_CLASSES = {c.key: _define(c) for c in COMMANDS}
globals().update({cls.__name__: cls for cls in _CLASSES.values()})


class Stackmap:
    """Stackmaps of JIT code: live values, deopt state and GC roots of frames.

Usage: stackmap SUBCOMMAND ...

%s
"""

    def __init__(self, debugger, internal_dict):
        self.debugger = debugger

    def get_short_help(self):
        return "Stackmaps of JIT code (info, list, gc-roots, verify, break, status, ...)."

    def get_long_help(self):
        return self.__doc__

    def __call__(self, debugger, text, exe_ctx, result):
        """Used only where LLDB has no command containers: dispatch on the first word."""
        words = (text or "").strip().split(None, 1)
        for c in COMMANDS:
            if words and c.names["lldb"] == words[0]:
                return _execute(c, words[1] if len(words) > 1 else "", exe_ctx, result)
        names = ", ".join(c.names["lldb"] for c in COMMANDS)
        result.SetError("stackmap: a subcommand is needed: %s" % names if not words else
                        "stackmap: unknown subcommand %r (%s)" % (words[0], names))


Stackmap.__doc__ %= "\n".join("  " + c.usage("lldb") for c in COMMANDS)


# -- Registration --


def _handle(debugger, command):
    result = lldb.SBCommandReturnObject()
    debugger.GetCommandInterpreter().HandleCommand(command, result)
    return result


def register(debugger, module_name):
    """Define the commands: `stackmap` as a container of one class per subcommand (LLDB 14+),
    or, where containers do not exist, one class that dispatches on the first word.
    `module_name` is this module's name as LLDB's interpreter reaches it."""
    ci = debugger.GetCommandInterpreter()
    if ci.CommandExists("stackmap"):
        # Imported again (command script import of a changed script): start afresh.
        _handle(debugger, "command script delete stackmap")
        _handle(debugger, "command container delete stackmap")
    # LLDB 22 and newer: interpreter frames in LLDB's own bt. Without them the commands work.
    problem = lldb_frames.install(debugger, _handle)
    if problem:
        print("warning: " + problem)
    made = _handle(debugger, "command container add -h %s stackmap" % shlex.quote(
        "Stackmaps of JIT code: live values, deopt state and GC roots (jitmap)."))
    if made.Succeeded():
        for c in COMMANDS:
            cls = _CLASSES[c.key]
            r = _handle(debugger, "command script add -c %s.%s stackmap %s" % (
                module_name, cls.__name__, c.names["lldb"]))
            if not r.Succeeded():
                return "jitmap: cannot add `stackmap %s`: %s" % (c.names["lldb"],
                                                                (r.GetError() or "").strip())
        return None
    r = _handle(debugger, "command script add -c %s.Stackmap stackmap" % module_name)
    if not r.Succeeded():
        return "jitmap: cannot add `stackmap`: %s" % (r.GetError() or "").strip()
    return None
