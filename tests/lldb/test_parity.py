#!/usr/bin/env python3
"""test_parity.py: GDB's and LLDB's jitmap commands give the same JSON for the same stops.

    tests/lldb/test_parity.py BUILD_DIR [TEST...]

The same stop for both debuggers, so that every address and value is the same:

- live: the program waits in its first safepoint (--pause); GDB attaches (jitmap's commands
  alone, GDB unwinding the LLVM frames from their .eh_frame; with JITMAP_TEST_PLUGIN=1, after
  sourcing the build tree's jitmap.gdb, which loads the reader plugin), answers and detaches;
  then LLDB attaches, answers and detaches;
- post-mortem: one core (the program's own, --abort) opened by both.

Compared (SCENARIO: one list, spelled for each debugger by jitmap's command table), for every
frame at a record (matched by PC, since the debuggers number the frames of the C library
differently): `info stackmap -json N` / `stackmap info --json N`, and their text; and
`info stackmaps -json` / `stackmap list --json`, `info gc-roots -all -json` /
`stackmap gc-roots --all --json`, `jitmap verify -json` / `stackmap verify --json`.

Fields that legitimately differ (docs/lldb.md), and only those, are set aside:
- "frame" where the debuggers number the frames differently (GDB's tail-call frames rebuilt
  from the C library's call-site information): the frames are matched by PC instead.
Nothing else: libjitmap decides and writes both answers (a patchpoint's note included), and
with the reader plugin the callee-saved registers of the frame above the hand-written JIT's
frameless function are known to both, by the ABI's rule (jitmap's unwinder) and by LLDB's
assembly profiling.
GDB alone cannot unwind the hand-written JIT's frameless function (LLDB can): without the
plugin only that function's frame is compared there.
Exits 0 when all pass, 1 when any fails, 77 when gdb or lldb or the programs are missing.
"""
import copy
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "debugger"))
import harness as T  # noqa: E402
from harness import Fail, Runner, abort_core, check, read  # noqa: E402
import jsoncontract  # noqa: E402

if len(sys.argv) < 2:
    sys.exit("usage: test_parity.py BUILD_DIR [TEST...]")
ENV = T.Env(sys.argv[1], "jitmap-parity-")
GDB, LLDB = T.debugger(ENV, "gdb"), T.debugger(ENV, "lldb")
if LLDB is None or GDB is None:
    print("parity: skipped: needs both gdb and lldb (with Python)")
    sys.exit(77)
if not os.path.exists(ENV.library) or not os.path.exists(ENV.entry):
    print("parity: skipped: %s or %s not built" % (ENV.library, ENV.entry))
    sys.exit(77)
JITMAP_GDB = ENV.plugin  # JITMAP_TEST_PLUGIN=1: GDB's sessions load the reader plugin
print("parity: %s, %s; GDB %s the reader plugin" % (
    T.version(LLDB.path), T.version(GDB.path), "with" if JITMAP_GDB else "without"))

RUN = Runner("parity", sys.argv[2:])
test = RUN.test
FRAMES = 60  # frames asked for in each debugger
DIFFS = []   # the legitimate differences seen, printed at the end


# One scenario list for both debuggers: (tag, command of jitmap's table, options, arguments);
# each debugger's command line comes from the table (commands.Command.line).
SCENARIO = ([("f%d" % k, "info", ["json"], [k]) for k in range(FRAMES)] +
            [("t%d" % k, "info", [], [k]) for k in range(FRAMES)] +
            [("list", "list", ["json"], []), ("roots", "gc-roots", ["all", "json"], []),
             ("verify", "verify", ["json"], [])])


def commands(d):
    """SCENARIO as Debugger `d` spells it, each answer dumped."""
    return [d.ask(tag, key, opts, args) for tag, key, opts, args in SCENARIO]


def at_records(s):
    """{(pc, n): (frame object, text)} for the frames at a record, the n-th (from 0,
    innermost first) at that pc (a recursion has many)."""
    out = {}
    for k in range(FRAMES):
        try:
            r = s.get("f%d" % k)
        except Fail:
            break
        lines = [l for l in r["out"].splitlines() if l.startswith("{")]
        if not r["ok"] or not lines:
            continue
        o = jsoncontract.loads(lines[0], jsoncontract.output_of(r["cmd"]))
        if o["record"] is not None:
            n = sum(1 for pc, _ in out if pc == o["pc"])
            out[(o["pc"], n)] = (o, s.text("t%d" % k))
    return out


def compare_frames(g, l, what, want_ids, gdb_ids=None):
    gf, lf = at_records(g), at_records(l)
    ids = sorted(o["record"]["id"] for o, _ in lf.values())
    check(ids == sorted(want_ids), "%s: LLDB's frames at records %s, want %s" % (what, ids, sorted(want_ids)))
    if gdb_ids is not None:  # GDB reaches fewer frames: compare those
        lf = {pc: v for pc, v in lf.items() if v[0]["record"]["id"] in gdb_ids}
        gf = {pc: v for pc, v in gf.items() if v[0]["record"]["id"] in gdb_ids}
    check(sorted(gf) == sorted(lf), "%s: frames at records: GDB %s, LLDB %s" % (
        what, sorted((o["record"]["id"], key) for key, (o, _) in gf.items()),
        sorted((o["record"]["id"], key) for key, (o, _) in lf.items())))
    renumbered = {}
    for key in sorted(gf):
        (go, gt), (lo, lt) = gf[key], lf[key]
        pc = key[0]
        if go["frame"] != lo["frame"]:
            DIFFS.append("%s: pc %s is frame %d in GDB, %d in LLDB" % (what, pc, go["frame"], lo["frame"]))
            renumbered[go["frame"]] = lo["frame"]
        g2, l2 = copy.deepcopy(go), copy.deepcopy(lo)
        g2["frame"] = l2["frame"]
        check(g2 == l2, "%s: pc %s: the JSON differs:\nGDB  %s\nLLDB %s" % (what, pc, g2, l2))
        if go["frame"] == lo["frame"]:
            check(gt == lt, "%s: pc %s: the text differs:\nGDB:\n%s\nLLDB:\n%s" % (what, pc, gt, lt))
    return renumbered


def same_json(g, l, tag, what, renumbered):
    a, b = g.json(tag), l.json(tag)
    if renumbered:
        a = renumber(a, renumbered)
    check(a == b, "%s: %s differs:\nGDB  %s\nLLDB %s" % (what, tag, a, b))


def renumber(obj, mapping):
    """GDB's answer with its frame numbers turned into LLDB's (frames matched by PC)."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if k == "frame" and isinstance(v, int):
                out[k] = mapping.get(v, v)
            elif k == "detail" and isinstance(v, str):
                out[k] = re.sub(r"frame #(\d+)", lambda m: "frame #%d" % mapping.get(int(m.group(1)),
                                                                                   int(m.group(1))), v)
            else:
                out[k] = renumber(v, mapping)
        return out
    if isinstance(obj, list):
        return [renumber(x, mapping) for x in obj]
    return obj


def compare_all(g, l, what, want_ids, gdb_ids=None):
    renumbered = compare_frames(g, l, what, want_ids, gdb_ids)
    for tag in ("list", "roots", "verify") if gdb_ids is None else ("list",):
        same_json(g, l, tag, what, renumbered)


# -- Live, attached to one paused process --


def paused(name, exe, args):
    """Start `exe --pause ARGS`; return (process, pid) once it waits in its safepoint."""
    d = ENV.dir(name)
    out = open(os.path.join(d, "program.out"), "w")
    p = subprocess.Popen([exe, "--pause"] + args, stdout=out, stderr=subprocess.STDOUT, cwd=d)
    deadline = time.time() + 60
    while time.time() < deadline:
        m = re.search(r": paused pid=(\d+)", read(os.path.join(d, "program.out")))
        if m:
            return p, int(m.group(1))
        if p.poll() is not None:
            raise Fail("%s: the program exited with %d before pausing" % (name, p.returncode))
        time.sleep(0.05)
    p.kill()
    raise Fail("%s: the program did not pause" % name)


def live_parity(name, exe, args, want_ids, gdb_ids=None):
    p, pid = paused(name, exe, args)
    try:
        g = GDB.session(name + "-gdb", commands(GDB), pid=pid)
        check(p.poll() is None, name + ": the program did not survive GDB's detach")
        l = LLDB.session(name + "-lldb", commands(LLDB), pid=pid)
    finally:
        p.kill()
        p.wait()
    compare_all(g, l, name + " (live)", want_ids, gdb_ids)


@test
def live_orc_stackmaps():
    ENV.need(ENV.demo, "jitmap-demo-jit")
    live_parity("live-orc-stackmaps", ENV.demo, ["--program", "stackmaps"], [100])


@test
def live_mcjit_stackmaps():
    ENV.need(ENV.demo, "jitmap-demo-jit")
    live_parity("live-mcjit-stackmaps", ENV.demo, ["--mcjit", "--program", "stackmaps"], [100])


@test
def live_patchpoint():
    ENV.need(ENV.demo, "jitmap-demo-jit")
    live_parity("live-patchpoint", ENV.demo, ["--program", "patchpoint"], [200])


@test
def live_statepoint():
    ENV.need(ENV.demo, "jitmap-demo-jit")
    live_parity("live-statepoint", ENV.demo, ["--mcjit", "--program", "statepoint"], [300])


@test
def live_recursion():
    ENV.need(ENV.demo, "jitmap-demo-jit")
    live_parity("live-recursion", ENV.demo, ["--program", "recursion", "--depth", "40"], [401] + [400] * 40)


@test
def live_handjit():
    ENV.need(ENV.handjit, "jitmap-handjit")
    live_parity("live-handjit", ENV.handjit, [], [1002, 1001], None if JITMAP_GDB else [1002])


# -- Post-mortem: one core, both debuggers --


def core_parity(name, exe, args, want_ids, gdb_ids=None):
    core, _ = abort_core(ENV, name, exe, args)
    g = GDB.session(name + "-gdb", commands(GDB), exe, core=core)
    l = LLDB.session(name + "-lldb", commands(LLDB), exe, core=core)
    compare_all(g, l, name + " (core)", want_ids, gdb_ids)


@test
def core_stackmaps():
    ENV.need(ENV.demo, "jitmap-demo-jit")
    core_parity("core-stackmaps", ENV.demo, ["--program", "stackmaps", "--abort-at", "2"], [101, 102])


@test
def core_patchpoint_anyreg():
    ENV.need(ENV.demo, "jitmap-demo-jit")
    core_parity("core-patchpoint", ENV.demo, ["--mcjit", "--program", "patchpoint", "--abort-at", "2"], [201])


@test
def core_statepoint():
    ENV.need(ENV.demo, "jitmap-demo-jit")
    core_parity("core-statepoint", ENV.demo, ["--program", "statepoint", "--abort-at", "2"], [301])


@test
def core_handjit():
    ENV.need(ENV.handjit, "jitmap-handjit")
    core_parity("core-handjit", ENV.handjit, [], [1002, 1001], None if JITMAP_GDB else [1002])


status = RUN.run(ENV)
if DIFFS:
    print("parity: legitimate differences set aside:")
    for d in sorted(set(DIFFS)):
        print("  " + d)
sys.exit(status)
