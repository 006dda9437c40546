"""Interpreter frames in LLDB's own backtrace: a scripted frame provider (LLDB 22 and newer).

A runtime that describes its interpreter frames (deopt layouts, docs/deopt-layouts.md, or
jitmap.names.deopt_frames) gets them under their JIT frame in LLDB's `bt`, `thread
backtrace` and lldb-dap's call stack, in the order and with the names GDB's `bt` shows:

    frame #1: 0x00007ffff7fb4074 JIT(0x55555560b800)`jit.Demo.sumSquares + 116
    frame #2: [Demo.square, bci 4] [synthetic] [artificial]
    frame #3: [Demo.sumSquares, bci 10] [synthetic] [artificial]

LLDB numbers them as frames of their own (GDB shows them as elided frames, without a number):
the frames above move down. They have no PC (a provided frame with a PC prints as the
function at that PC, not with its own name), and `stackmap info` of the JIT frame shows their
values. From LLDB 23, an interpreter frame's locals and stack are its variables (`frame
variable`; docs/lldb.md says what LLDB 23.1 does not allow yet). Older LLDBs have no
providers: `stackmap bt` shows the same frames there.

The provider is registered on a target at its first stop, by a stop hook added to LLDB's
dummy target when jitmap is imported (new targets inherit the dummy target's stop hooks;
they do not inherit its frame providers), and on the targets that exist at import. What LLDB
22.1 allows a provider (checked): reading the input frames' registers is done when it is made,
never in get_frame_at_index, which LLDB calls with its frame list locked (reading registers
there aborts LLDB); LLDB 23 may call it from its event thread, where asking an input frame
anything at all deadlocks with the command thread (seen on a core). An input frame's
GetFrameID, or the thread's GetFrameAtIndex, asks the thread's frame list, which makes a
provider again: the provider never calls them (a frame's level and the frames below it come
from its input).
"""
import lldb

from . import commands as C
from . import lldb_adapter as A
from . import model as M
from . import names

try:
    from lldb.plugins.scripted_frame_provider import ScriptedFrameProvider
    from lldb.plugins.scripted_process import ScriptedFrame
    AVAILABLE = hasattr(lldb.SBTarget, "RegisterScriptedFrameProvider")
except ImportError:  # LLDB 21 and older
    ScriptedFrameProvider = ScriptedFrame = object
    AVAILABLE = False

INVALID = A.INVALID
MAX_FRAMES = 4096  # input frames looked at; deeper ones pass through as LLDB made them
_module = __name__
_registered = []  # the targets with the provider (SBTarget compares by identity of target)


def _layouts_may_apply(catalog):
    try:
        return names.has_frames() or catalog.has_layouts
    except Exception:
        return False


def sb_value(target, name, loc):
    """A location object (the contract's JSON) as an SBValue named `name`: a number of the
    location's width (int for 1 to 4 bytes, long for 8, sign-extended as GDB shows them), an
    address for a direct location. A value jitmap does not know, or wider than 8 bytes, is an
    empty `void` value: no number (LLDB 23 crashes evaluating an array made for a scripted
    frame, and gives a Python value no text of its own); `stackmap info` says what it is."""
    v = loc.get("value")
    size = loc.get("size")
    order, ptr = target.GetByteOrder(), target.GetAddressByteSize()
    void = target.GetBasicType(lldb.eBasicTypeVoid)
    if not isinstance(v, int):
        return target.CreateValueFromData(name, lldb.SBData(), void)
    if loc.get("kind") == "direct":
        data = lldb.SBData.CreateDataFromUInt64Array(order, ptr, [v])
        return target.CreateValueFromData(name, data, void.GetPointerType())
    if size == 8:
        data = lldb.SBData.CreateDataFromSInt64Array(order, ptr, [M.signed(v, 8)])
        return target.CreateValueFromData(name, data, target.GetBasicType(lldb.eBasicTypeLong))
    data = lldb.SBData.CreateDataFromSInt32Array(order, ptr, [M.signed(v, size or 4)])
    return target.CreateValueFromData(name, data, target.GetBasicType(lldb.eBasicTypeInt))


class _InterpreterFrame(ScriptedFrame):
    """An interpreter frame: its title as the function's name, no PC, no registers; its locals
    and expression stack as variables (LLDB 23: `frame variable`, `p NAME`)."""

    def __init__(self, thread, idx, vf, variables):
        super().__init__(thread, lldb.SBStructuredData())
        self.idx = idx
        self.name = "[%s]" % (vf.get("title") or "?")
        self.vf = vf
        self.variables = variables  # its entry of Report.variables()["virtual_frames"]
        self.values = None

    def get_variables(self, filters=None):
        """LLDB calls this without arguments (23.1); the SBVariablesOptions of the base class
        would go unused: an interpreter frame's values are all locals."""
        if self.values is None:
            target = self.thread.GetProcess().GetTarget()
            self.values = lldb.SBValueList()
            for name, loc in M.virtual_frame_variables(self.variables):
                self.values.Append(sb_value(target, name, loc))
        return self.values

    def get_value_for_variable_expression(self, expr, options, error):
        """`frame variable NAME` and `p NAME` in this frame: a variable by its name."""
        value = self.get_variables().GetFirstValueByName(expr)
        if not value.IsValid():
            error.SetErrorString("no variable named %r in %s" % (expr, self.name))
        return value

    def get_id(self):
        return self.idx

    def get_function_name(self):
        return self.name

    def get_register_context(self):
        return None


class InterpreterFrames(ScriptedFrameProvider):
    """The thread's frames as LLDB unwound them, each JIT frame followed by the interpreter
    frames it stands for."""

    @staticmethod
    def get_description():
        return "jitmap: a runtime's interpreter frames under their JIT frame"

    def __init__(self, input_frames, args):
        super().__init__(input_frames, args)
        self.out = None  # None: every input frame as it is
        self.inserted_past = False
        try:
            self.out = self._frames(input_frames)
        except Exception:  # a backtrace never fails because of jitmap
            self.out = None

    def _frames(self, input_frames):
        """The frames, made now: LLDB may call get_frame_at_index from another thread with
        its frame list locked, where any question to an input frame deadlocks (LLDB 23, a
        core) or aborts (LLDB 22, reading registers)."""
        dbg = A.Lldb(lldb.SBExecutionContext(self.thread))
        size = input_frames.GetSize()
        n = min(size, MAX_FRAMES)
        # No frame where no code lives: LLDB's own unwinder may take a stack word below a
        # thread's last frame for a return address; the stack ends before that frame.
        end = next((i for i in range(1, n)
                    if dbg.no_code(input_frames.GetFrameAtIndex(i).GetPC())), None)
        catalog = C.SESSION.get(dbg)
        if not catalog.stackmaps or not _layouts_may_apply(catalog):
            return list(range(end)) if end is not None else None
        if end is not None:
            n = end
        self.inserted_past = end is None and size > n  # frames past those looked at
        out = []
        for i in range(n):
            f = input_frames.GetFrameAtIndex(i)
            out.append(i)
            if not f.IsValid() or f.GetPC() in (0, INVALID):
                continue
            try:
                frame = A.LldbFrame(dbg, f, i, input_frames.GetFrameAtIndex)
                report = C.SESSION.describe(dbg, catalog, frame)
                vfs = report.obj.get("virtual_frames") or ()
                variables = report.variables()["virtual_frames"] if vfs else ()
            except Exception:
                continue
            for vf, v in zip(vfs, variables):
                out.append(_InterpreterFrame(self.thread, len(out), vf, v))
        return out

    def get_frame_at_index(self, index):
        if self.out is None:
            return index
        if index < len(self.out):
            return self.out[index]
        # Past the frames looked at: LLDB's own, shifted by the frames inserted.
        if self.inserted_past:
            return index - (len(self.out) - MAX_FRAMES)
        return None


def register_on(target):
    """Give `target` the provider (once); a message when it could not be."""
    if not AVAILABLE or not target.IsValid():
        return None
    for t in _registered:
        if t == target:
            return None
    err = lldb.SBError()
    target.RegisterScriptedFrameProvider(_module + ".InterpreterFrames", lldb.SBStructuredData(),
                                         err)
    if err.Fail():
        return "jitmap: cannot add its frame provider: %s" % err.GetCString()
    _registered.append(target)
    return None


class FirstStop:
    """A scripted stop hook: gives the stopped target the provider (then does nothing)."""

    def __init__(self, target, extra_args, internal_dict):
        pass

    def handle_stop(self, exe_ctx, stream):
        register_on(exe_ctx.GetTarget())
        return True


def install(debugger, handle):
    """On LLDB 22 and newer: the provider on every target, now and at their first stop.
    `handle(debugger, command)` runs an LLDB command. A message when it could not be done."""
    if not AVAILABLE:
        return None
    for i in range(debugger.GetNumTargets()):
        problem = register_on(debugger.GetTargetAtIndex(i))
        if problem:
            return problem
    # Added with no target selected, a stop hook goes to the dummy target, whose stop hooks
    # every new target copies; with one selected, to that target (already done above).
    r = handle(debugger, "target stop-hook add -P %s.FirstStop" % _module)
    if not r.Succeeded():
        return "jitmap: cannot add its stop hook: %s" % (r.GetError() or "").strip()
    return None
