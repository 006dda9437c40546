"""bench/lldb_stop.py: imported in LLDB by bench/lldb_provider.sh, stopped at
jitmap_demo_safepoint under `jitmap-demo-jit --program recursion --depth N`. Adds the command
`stoptime RUNS MODE`, which times RUNS stops (`thread step-inst`: one instruction, a new stop,
every frame list made again) and after each the backtrace of every frame (`thread
backtrace`), and prints one line:

    STOP mode=M frames=F step_ms=S bt_ms=B

(medians, milliseconds). Also, for the modes that need them:
  `pass`:    a frame provider that gives LLDB every frame as it made it (what LLDB itself
             spends on a provider), registered on the target at its first stop, as jitmap's is;
  `layouts`: a deopt layout for the recursion's records 400 and 401 (jitmap.names), so that
             every JIT frame has an interpreter frame under it (the most work jitmap's provider
             does at a stop).
"""
import statistics
import time

import lldb

try:
    from lldb.plugins.scripted_frame_provider import ScriptedFrameProvider
except ImportError:  # LLDB 21 and older: no providers
    ScriptedFrameProvider = object


class Pass(ScriptedFrameProvider):
    """Every input frame, as it is."""

    @staticmethod
    def get_description():
        return "bench: every frame as LLDB made it"

    def get_frame_at_index(self, index):
        return index


class PassOnFirstStop:
    """A stop hook that gives the target the Pass provider once."""

    done = False

    def __init__(self, target, extra_args, internal_dict):
        pass

    def handle_stop(self, exe_ctx, stream):
        if not PassOnFirstStop.done:
            PassOnFirstStop.done = True
            exe_ctx.GetTarget().RegisterScriptedFrameProvider(
                __name__ + ".Pass", lldb.SBStructuredData(), lldb.SBError())
        return True


def add_layouts():
    import jitmap.names as names
    for rid in (400, 401):
        names.deopt_frames(rid, [{"method": "recurse", "bci": 0, "locals": [0, 1]}])


def stoptime(debugger, command, result, internal_dict):
    runs, mode = command.split()
    ci = debugger.GetCommandInterpreter()

    def cmd(c):
        r = lldb.SBCommandReturnObject()
        ci.HandleCommand(c, r)
        if not r.Succeeded():
            raise RuntimeError("%s: %s" % (c, r.GetError()))
        return r.GetOutput()

    step, bt, frames = [], [], set()
    for _ in range(int(runs)):
        t0 = time.perf_counter()
        cmd("thread step-inst")
        t1 = time.perf_counter()
        out = cmd("thread backtrace")
        t2 = time.perf_counter()
        step.append(t1 - t0)
        bt.append(t2 - t1)
        frames.add(out.count("frame #"))
    print("STOP mode=%s frames=%s step_ms=%.2f bt_ms=%.2f" % (
        mode, "/".join(map(str, sorted(frames))), statistics.median(step) * 1e3,
        statistics.median(bt) * 1e3))


def __lldb_init_module(debugger, internal_dict):
    debugger.HandleCommand("command script add -f %s.stoptime stoptime" % __name__)
