"""The tests' helpers inside LLDB (harness.py imports it first in every LLDB session; its GDB
twin is gdb_prelude.py).

`jtdump TAG COMMAND...` runs COMMAND and appends {"tag", "cmd", "ok", "out", "err"} as one
JSON line to $JITMAP_TEST_RESULTS. It never fails itself, so that `lldb -b` (which stops at
the first failing command) goes on after a command that is expected to fail.

`jtabort` makes the stopped process dump core where it stands: LLDB 16 cannot write an ELF
core (`process save-core` says no plugin can), so the process gets a SIGABRT and is continued
until the kernel has written its core (the core limit is the test's to set). The core's
registers are those of the stop: the signal is delivered before the next instruction.
"""
import json
import os
import signal

import lldb


def jtdump(debugger, command, exe_ctx, result, internal_dict):
    tag, _, cmd = command.strip().partition(" ")
    r = lldb.SBCommandReturnObject()
    debugger.GetCommandInterpreter().HandleCommand(cmd, exe_ctx, r)
    rec = {"tag": tag, "cmd": cmd, "ok": bool(r.Succeeded()),
           "out": r.GetOutput() or "", "err": r.GetError() or ""}
    with open(os.environ["JITMAP_TEST_RESULTS"], "a") as f:
        f.write(json.dumps(rec) + "\n")
    result.SetStatus(lldb.eReturnStatusSuccessFinishNoResult)


def jtabort(debugger, command, exe_ctx, result, internal_dict):
    process = exe_ctx.GetProcess()
    os.kill(process.GetProcessID(), signal.SIGABRT)
    for _ in range(3):
        if process.GetState() in (lldb.eStateExited, lldb.eStateDetached, lldb.eStateInvalid):
            break
        process.Continue()
    print("jtabort: process state %d, exit status %d" % (process.GetState(), process.GetExitStatus()),
          file=result)


def __lldb_init_module(debugger, internal_dict):
    debugger.HandleCommand("command script add -f %s.jtdump jtdump" % __name__)
    debugger.HandleCommand("command script add -f %s.jtabort jtabort" % __name__)
