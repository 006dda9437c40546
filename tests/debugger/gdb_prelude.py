"""The tests' helpers inside GDB (harness.py sources it first in every GDB session; its LLDB
twin is lldb_prelude.py).

`jtdump TAG COMMAND...` runs COMMAND and appends {"tag", "cmd", "ok", "out", "err"} as one
JSON line to $JITMAP_TEST_RESULTS: the output in "out", GDB's error in "err". It never fails
itself, so that `gdb -batch` (which stops a command file at the first error) goes on after a
command that is expected to fail. $JITMAP_TEST_SCRIPTS (gdb-scripts/) goes on sys.path, for
`python import jitmap...` with or without jitmap's commands.
"""
import json
import os
import sys

import gdb

if os.environ.get("JITMAP_TEST_SCRIPTS") and os.environ["JITMAP_TEST_SCRIPTS"] not in sys.path:
    sys.path.insert(0, os.environ["JITMAP_TEST_SCRIPTS"])


class JtDump(gdb.Command):
    """jtdump TAG COMMAND...: run COMMAND, append its answer to $JITMAP_TEST_RESULTS."""

    def __init__(self):
        super().__init__("jtdump", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        tag, _, cmd = arg.strip().partition(" ")
        try:
            out, err, ok = gdb.execute(cmd, to_string=True), "", True
        except gdb.error as e:
            out, err, ok = "", str(e), False
        with open(os.environ["JITMAP_TEST_RESULTS"], "a") as f:
            f.write(json.dumps({"tag": tag, "cmd": cmd, "ok": ok, "out": out, "err": err}) + "\n")


JtDump()
