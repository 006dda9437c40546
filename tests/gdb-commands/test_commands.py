#!/usr/bin/env python3
"""test_commands.py: jitmap's GDB commands against the real JIT programs (ctest gdb.commands).

    tests/gdb-commands/test_commands.py BUILD_DIR [TEST...]

Drives `gdb -batch -nx` (tests/debugger/harness.py) through every scenario of
tests/debugger/scenarios.py, which LLDB's test runs too: jitmap-demo-jit (LLVM ORC and MCJIT)
with every value `info stackmap -json` shows compared with the truth lines the program
prints (`jitmap-demo: stackmap id=101 s=12 ...`): outer frames, every frame of a 40-deep
recursion, statepoints (deopt values, GC roots matched by value), patchpoints; live, from a
core written at a stop (gcore) and from one the program dumped itself (--abort); an
ahead-of-time compiled program, the hand-written JIT, lli-14, `jitmap break`, every mode of
the hostile inferior (tests/hostile/hostile.c); and the negative controls (the same sessions
without jitmap: its commands are undefined). Here, what only GDB has: jitmap-dump on cores
GDB wrote. JITMAP_TEST_PLUGIN=1: every session with jitmap loads the reader plugin first.

Checks the shape and the values, not the exact text. Prints one line per test and a summary;
exits 0 when all pass, 1 when any fails, 77 (skip) when gdb or libjitmap is missing.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "debugger"))
import harness as T  # noqa: E402
import scenarios  # noqa: E402
from harness import check, truth  # noqa: E402
import jsoncontract  # noqa: E402

if len(sys.argv) < 2:
    sys.exit("usage: test_commands.py BUILD_DIR [TEST...]")
ENV = T.Env(sys.argv[1], "jitmap-gdb-commands-")
GDB = T.debugger(ENV, "gdb")
if GDB is None:
    print("gdb-commands: skipped: no gdb with Python")
    sys.exit(77)
if not os.path.exists(ENV.library):
    print("gdb-commands: skipped: %s not built" % ENV.library)
    sys.exit(77)

RUN = T.Runner("gdb-commands", sys.argv[2:])
scenarios.register(RUN, GDB)


def dump_core(core, *args):
    p = subprocess.run([ENV.dump] + list(args) + [core], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=T.TIMEOUT)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


@RUN.test
def jitmap_dump_cores():
    """jitmap-dump (the tool) on the demo's own cores, a hostile core whose entry list loops
    and a core of the AOT program, which has no JIT descriptor (those two written by GDB)."""
    ENV.need_demo()
    for name, args, want in (("dump-orc", ["--program", "stackmaps"], [100, 102, 101]),
                             ("dump-mcjit", ["--mcjit", "--program", "statepoint"], [300, 301])):
        core, output = T.abort_core(ENV, name, ENV.demo, args)
        rc, out, err = dump_core(core, "--format=json")
        check(rc == 0, "%s: jitmap-dump exit %d: %s" % (name, rc, err))
        obj = jsoncontract.loads(out, "jitmap-dump")
        check(obj["kind"].startswith("ELF core file"), name + ": kind")
        entries = [e for d in obj["descriptors"] for e in d["entries"]]
        check(entries and all(e["problem"] is None for e in entries), name + ": entry problems")
        recs = [(r["id"], r["pc"], r["function"]) for e in entries if e.get("blobs")
                for b in e["blobs"] for r in b["records"]]
        check([r[0] for r in recs] == want, "%s: records %s" % (name, recs))
        # The PCs are the ones the program printed for its records.
        printed = {(int(t["id"]), int(t["pc"], 16)) for t in truth(output, "jitmap-demo:", "stackmap-record")}
        check({(r[0], int(r[1], 16)) for r in recs} == printed, "%s: record PCs %s, program %s" %
              (name, recs, printed))
        rc, text, _ = dump_core(core)
        check(rc == 0 and "JIT descriptor at 0x" in text and "record %d at 0x" % want[0] in text,
              name + ": text")
        rc, ro, _ = dump_core(core, "--format=llvm-readobj")
        check(rc == 0 and ro.startswith("LLVM StackMap Version: 3"), name + ": llvm-readobj")
    if os.path.exists(ENV.hostile):
        # A core whose entry list loops: the entries before the loop, and exit 1 with the reason.
        _, core = GDB.core_at_stop("dump-hostile", ENV.hostile,
                                   [GDB.break_at("hostile_stop"), GDB.launch(["cycle"], "/dev/null")])
        rc, out, err = dump_core(core)
        check(rc == 1 and "loops" in err, "hostile core: exit %d, %r" % (rc, err))
        check("record 5 at 0x" in out, "hostile core: the good entry")
    if os.path.exists(ENV.aot):
        _, core = GDB.core_at_stop("dump-aot", ENV.aot, [GDB.break_at("aot_stop"), GDB.launch([])])
        rc, out, err = dump_core(core)
        check(rc == 1 and "no __jit_debug_descriptor" in err, "aot core: exit %d, %r" % (rc, err))


sys.exit(RUN.run(ENV))
