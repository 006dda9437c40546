#!/usr/bin/env python3
"""test_lldb.py: jitmap's LLDB commands against the real JIT programs.

    tests/lldb/test_lldb.py BUILD_DIR [TEST...]

Drives `lldb -b` (LLDB_EXEC, or lldb-16, ...) with `command script import
BUILD/share/jitmap/lldb/jitmap.py` against jitmap-demo-jit (LLVM ORC and MCJIT), jitmap-handjit,
an ahead-of-time compiled program and the hostile inferior (tests/hostile/hostile.c, every
mode), and compares every value
`stackmap info --json` shows with the truth lines the programs print: outer frames, every
frame of a 40-deep recursion, statepoints, patchpoints, the hand-written JIT (which LLDB
unwinds by itself), core files (the kernel's, from --abort, and LLDB's `process save-core`).
Also: a negative control (without the import, `stackmap info` is not a command), hostile
descriptor lists (a clear error; no traceback, crash or hang), list/gc-roots/verify/status,
the names API, errors and help.

Checks the shape and the values, not the exact text. Exits 0 when all pass, 1 when any
fails, 77 (skip) when lldb (with Python) or the programs are missing.
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hostile"))
import modes as H  # noqa: E402  (the hostile inferior's modes, shared with GDB's test)
from lldbtest import (Env, Runner, Skip, abort_core, check, check_record,  # noqa: E402
                      check_statepoint, clear_cores, compare, demo_truth, dump, find_core, gc_pairs,
                      lldb_session, lldb_version, loc_value, read, truth)

if len(sys.argv) < 2:
    sys.exit("usage: test_lldb.py BUILD_DIR [TEST...]")
ENV = Env(sys.argv[1], "jitmap-lldb-")
if ENV.lldb is None:
    print("lldb: skipped: no lldb with Python support (lldb-16 and python3-lldb-16)")
    sys.exit(77)
if not os.path.exists(ENV.library) or not os.path.exists(ENV.entry):
    print("lldb: skipped: %s or %s not built" % (ENV.library, ENV.entry))
    sys.exit(77)
print("lldb: %s (%s)" % (ENV.lldb, lldb_version(ENV.lldb)))

RUN = Runner("lldb", sys.argv[2:])
test = RUN.test

KEYS = {
    100: ["a", "b", "k42", "kminus1", "kpool", "slot"],
    101: ["s", "neg", "flag", "w", "kneg", "kzero"],
    102: ["sum", "prod", "slot", "a"],
    200: ["x", "y", "z", "kminus7"],
    201: ["x", "s", "y", "z", "t", "u", "v"],
}


def need(path, what):
    if not os.path.exists(path):
        raise Skip("%s not built" % what)


def need_demo():
    need(ENV.demo, "jitmap-demo-jit (needs llvm-config-14)")


def launch(out, args):
    return "process launch -o %s -e %s -- %s" % (out, out + ".err", " ".join(args))


# -- Live: the LLVM demo JIT --


def stackmaps_session(name, engine):
    out = os.path.join(ENV.dir(name), "program.out")
    s = lldb_session(ENV, name, [
        "breakpoint set -n jitmap_demo_safepoint",
        launch(out, engine + ["--program", "stackmaps"]),
        dump("100-f1", "stackmap info --json 1"),
        dump("100-f1-text", "stackmap info 1"),
        dump("100-f0", "stackmap info --json 0"),
        dump("100-f0-text", "stackmap info"),
        dump("100-f2", "stackmap info -j 2"),
        "frame select 1",
        dump("100-sel", "stackmap info --json"),
        dump("100-raw", "stackmap info --json --raw"),
        dump("100-raw-text", "stackmap info -r"),
        dump("100-rdi", "register read rdi"),
        "continue",
        dump("101-f1", "stackmap info --json 1"),
        dump("102-f2", "stackmap info --json 2"),
        dump("list", "stackmap list"),
        dump("list-json", "stackmap list --json"),
        dump("list-re", "stackmap list --json inner$"),
        dump("list-none", "stackmap list nomatch"),
        dump("verify", "stackmap verify --json"),
        dump("verify-text", "stackmap verify"),
        dump("status", "stackmap status"),
        dump("bad-option", "stackmap info --bogus"),
        dump("bad-frame", "stackmap info 99"),
        dump("bad-arg", "stackmap info x"),
        dump("bad-re", "stackmap list ("),
        dump("help", "help stackmap"),
        dump("help-info", "help stackmap info"),
        # The one-command form registered where LLDB has no command containers (LLDB < 14).
        "command script add -c jitmap.lldb_commands.Stackmap jm",
        dump("dispatch", "jm info --json 1"),
        dump("dispatch-bad", "jm bogus"),
    ], ENV.demo)
    s.output = read(out)
    return s


def check_stackmaps(s, what):
    out = s.output
    compare(check_record(s.json("100-f1"), 100, 1, what), KEYS[100], demo_truth(out, "stackmap", 100),
            what + " record 100, frame 1")
    compare(check_record(s.json("101-f1"), 101, 1, what), KEYS[101], demo_truth(out, "stackmap", 101),
            what + " record 101, frame 1")
    compare(check_record(s.json("102-f2"), 102, 2, what), KEYS[102], demo_truth(out, "stackmap", 102),
            what + " record 102, frame 2")
    for tag in ("100-f0", "100-f2"):
        o = s.json(tag)
        check(o["record"] is None and o.get("error"), "%s: %s: a record where there is none" % (what, tag))
    f0 = s.get("100-f0-text")
    check(not f0["ok"] and "is not at a stackmap record" in f0["err"], what + ": frame 0 is an error")
    sel = s.json("100-sel")
    check(sel["record"]["id"] == 100 and sel["frame"] == 1, what + ": the selected frame")
    raw = s.json("100-raw")
    check(all("raw" in l and "dwarf_reg" in l["raw"] for l in raw["locations"]), what + ": --raw")
    check("dwarf_reg" in s.text("100-raw-text"), what + ": -r text")
    text = s.text("100-f1-text")
    check(re.search(r"record 100 at 0x[0-9a-f]+ \(stackmaps_main\+\d+\)", text), what + ": text header")
    check(re.search(r"#1 +register +\w+ +size 4 +-3 ", text), what + ": text value of b")
    check("unavailable" in s.text("100-rdi"), what + ": LLDB shows rdi as unavailable in frame 1")
    listing = s.json("list-json")
    names = sorted(f["name"] for sm in listing["stackmaps"] for f in sm["functions"])
    check(names == ["stackmaps_inner", "stackmaps_main"], what + ": stackmap list functions %s" % names)
    ids = sorted(r["id"] for sm in listing["stackmaps"] for f in sm["functions"] for r in f["records"])
    check(ids == [100, 101, 102], what + ": stackmap list records %s" % ids)
    check(re.search(r"record 101 +at 0x[0-9a-f]+ \(stackmaps_inner\+93\)", s.text("list")), what + ": list text")
    only = s.json("list-re")
    check([f["name"] for sm in only["stackmaps"] for f in sm["functions"]] == ["stackmaps_inner"],
          what + ": stackmap list REGEXP")
    check("no function matches nomatch" in s.text("list-none"), what + ": list without a match")
    v = s.json("verify")
    check(v["records_checked"] == 3 and v["frames_checked"] == 2, what + ": verify counts %s" % v)
    check(v["problems"] == [], what + ": verify problems %s" % v["problems"])
    check("no problems" in s.text("verify-text"), what + ": verify text")
    st = s.text("status")
    check("1 JIT entry" in st and "JIT descriptor at 0x" in st and "libLLVM" in st, what + ": status")
    for tag, words in (("bad-option", "unknown option --bogus"), ("bad-frame", "no frame 99"),
                       ("bad-arg", "frame number"), ("bad-re", "bad regular expression")):
        r = s.get(tag)
        check(not r["ok"] and words in r["err"], "%s: %s: %r" % (what, tag, r["err"]))
    check("gc-roots" in s.text("help") and "verify" in s.text("help"), what + ": help stackmap")
    check("Usage: stackmap info" in s.text("help-info"), what + ": help stackmap info")
    check(s.json("dispatch") == s.json("101-f1"), what + ": the one-command form")
    check("unknown subcommand" in s.get("dispatch-bad")["err"], what + ": the one-command form's errors")


@test
def orc_stackmaps():
    need_demo()
    check_stackmaps(stackmaps_session("orc-stackmaps", []), "orc stackmaps")


@test
def mcjit_stackmaps():
    need_demo()
    check_stackmaps(stackmaps_session("mcjit-stackmaps", ["--mcjit"]), "mcjit stackmaps")


def check_patchpoints(name, engine):
    out = os.path.join(ENV.dir(name), "program.out")
    s = lldb_session(ENV, name, [
        "breakpoint set -n jitmap_demo_safepoint",
        launch(out, engine + ["--program", "patchpoint"]),
        dump("200-f1", "stackmap info --json 1"),
        "continue",
        dump("201-f1", "stackmap info --json 1"),
        dump("201-f2", "stackmap info --json 2"),
        dump("201-f2-text", "stackmap info 2"),
        dump("regs", "register read -f x rdx rsi rcx"),
        dump("verify", "stackmap verify --json"),
    ], ENV.demo)
    output = read(out)
    o = check_record(s.json("200-f1"), 200, 1, name)
    compare(o, KEYS[200], demo_truth(output, "patchpoint", 200), name + " record 200")
    check(o["record"]["match"] == "call", name + ": 200 matched by its call sequence")
    sp = [t for t in truth(output, "jitmap-demo:", "safepoint") if t["id"] == "200"][0]
    check(o["record"]["distance"] == int(sp["delta"]), name + ": distance %s, program says %s" %
          (o["record"]["distance"], sp["delta"]))
    check(int(o["record"]["pc"], 16) == int(sp["record-pc"], 16), name + ": record pc")
    check(o["live_outs"] and all("register" in l and "size" in l for l in o["live_outs"]), name + ": live-outs")
    check(s.json("201-f1")["record"] is None, name + ": 201 frame 1 (the trampoline) has no record")
    o = check_record(s.json("201-f2"), 201, 2, name)
    # rdx, rsi, rcx are caller-saved: known in frame 2 because the trampoline saved them (CFI).
    compare(o, KEYS[201], demo_truth(output, "patchpoint", 201), name + " record 201")
    check("a patchpoint" in s.text("201-f2-text"), name + ": text says patchpoint")
    check(s.json("verify")["problems"] == [], name + ": verify")


@test
def orc_patchpoints():
    need_demo()
    check_patchpoints("orc-patchpoint", [])


@test
def mcjit_patchpoints():
    need_demo()
    check_patchpoints("mcjit-patchpoint", ["--mcjit"])


def check_statepoints(name, engine):
    out = os.path.join(ENV.dir(name), "program.out")
    s = lldb_session(ENV, name, [
        "breakpoint set -n jitmap_demo_safepoint",
        launch(out, engine + ["--program", "statepoint"]),
        dump("300-f1", "stackmap info --json 1"),
        "frame select 1",
        dump("300-roots", "stackmap gc-roots --json"),
        "continue",
        dump("301-f1", "stackmap info --json 1"),
        dump("301-f1-text", "stackmap info 1"),
        dump("301-roots-all", "stackmap gc-roots --all --json"),
        dump("301-roots-text", "stackmap gc-roots -a"),
        dump("301-roots-f0", "stackmap gc-roots"),
        dump("301-nosp", "stackmap info --json --no-statepoint 1"),
        dump("301-both", "stackmap info --statepoint --no-statepoint 1"),
        dump("sp-none", "stackmap statepoints none"),
        dump("301-none", "stackmap info --json 1"),
        dump("sp-ids", "stackmap statepoints auto --ids 301"),
        dump("301-flipped", "stackmap info --json 1"),
        dump("sp-back", "stackmap statepoints auto --ids ''"),
        dump("list", "stackmap list --json"),
        "script import jitmap.names as n; n.name_deopt(300, ['d', 'seven', 'big'])",
        "script import jitmap.names as n; n.name_locations(301, {3: 'obj.base'})",
        dump("301-named", "stackmap info --json 1"),
        dump("301-named-text", "stackmap info 1"),
    ], ENV.demo)
    output = read(out)
    o300 = check_record(s.json("300-f1"), 300, 1, name)
    check_statepoint(o300, demo_truth(output, "statepoint", 300), name + " 300")
    o301 = check_record(s.json("301-f1"), 301, 1, name)
    check_statepoint(o301, demo_truth(output, "statepoint", 301), name + " 301")
    roots = s.json("300-roots")
    check(sorted((r["base"]["value"], r["derived"]["value"]) for r in roots["roots"]) == gc_pairs(o300),
          name + ": gc-roots matches the record")
    allr = s.json("301-roots-all")
    check(sorted((r["base"]["value"], r["derived"]["value"]) for r in allr["roots"]
                 if r["frame"] == 1) == gc_pairs(o301), name + ": gc-roots --all")
    check(all(r["frame"] == 1 for r in allr["roots"]), name + ": roots only in JIT frame 1")
    check("offset" in s.text("301-roots-text") and "statepoint_main" in s.text("301-roots-text"),
          name + ": gc-roots text")
    r = s.get("301-roots-f0")
    check(not r["ok"] and "not at a stackmap record" in r["err"], name + ": gc-roots in frame 0")
    check("gc derived from #3, offset 16" in s.text("301-f1-text"), name + ": text roles")
    check(s.json("301-nosp")["statepoint"] is None, name + ": --no-statepoint")
    check(not s.get("301-both")["ok"], name + ": --statepoint with --no-statepoint")
    check(s.json("301-none")["statepoint"] is None, name + ": statepoints none")
    check(s.json("301-flipped")["statepoint"] is None, name + ": --ids flips 301")
    kinds = {r["id"]: r["kind"] for sm in s.json("list")["stackmaps"] for f in sm["functions"]
             for r in f["records"]}
    check(kinds == {300: "statepoint", 301: "statepoint"}, name + ": list kinds %s" % kinds)
    named = s.json("301-named")
    check(named["locations"][3].get("name") == "obj.base", name + ": names API")
    check("[obj.base]" in s.text("301-named-text"), name + ": names in the text")


@test
def orc_statepoints():
    need_demo()
    check_statepoints("orc-statepoint", [])


@test
def mcjit_statepoints():
    need_demo()
    check_statepoints("mcjit-statepoint", ["--mcjit"])


@test
def recursion_every_frame():
    need_demo()
    depth = 40
    name = "recursion"
    out = os.path.join(ENV.dir(name), "program.out")
    cmds = ["breakpoint set -n jitmap_demo_safepoint",
            launch(out, ["--mcjit", "--program", "recursion", "--depth", str(depth)])]
    cmds += [dump("f%d" % k, "stackmap info --json %d" % k) for k in range(1, depth + 3)]
    cmds += [dump("verify", "stackmap verify --json"), dump("bt", "bt")]
    s = lldb_session(ENV, name, cmds, ENV.demo)
    output = read(out)
    t400 = {int(t["n"]): t for t in truth(output, "jitmap-demo:", "recursion") if t["id"] == "400"}
    t401 = [t for t in truth(output, "jitmap-demo:", "recursion") if t["id"] == "401"][0]
    check(len(t400) == depth, "recursion: %d truth lines for 400" % len(t400))
    compare(check_record(s.json("f1"), 401, 1, name), ["n", "acc", "slot"], t401, "recursion frame 1")
    for k in range(2, depth + 2):
        n = k - 1
        compare(check_record(s.json("f%d" % k), 400, k, name), ["n", "acc", "tag", "slot"], t400[n],
                "recursion frame %d (n=%d)" % (k, n))
    last = s.json("f%d" % (depth + 2))
    check(last["record"] is None and last["function"] == "recursion_main",
          "recursion: frame %d (recursion_main) has no record" % (depth + 2))
    v = s.json("verify")
    check(v["frames_checked"] == depth + 1 and v["problems"] == [], "recursion: verify %s" % v)


@test
def break_by_id():
    """`stackmap break` before the program runs: pending, then set when the JIT registers its
    code (under MCJIT before relocation), and frame 0 at the record has the truth's values."""
    need_demo()
    for engine in ([], ["--mcjit"]):
        name = "break" + ("-mcjit" if engine else "")
        out = os.path.join(ENV.dir(name), "program.out")
        s = lldb_session(ENV, name, [
            dump("pending", "stackmap break 101 200"),
            launch(out, engine + ["--program", "stackmaps"]),
            dump("f0", "stackmap info --json"),
            dump("list", "stackmap break"),
            dump("bad", "stackmap break x"),
            dump("delete", "stackmap break --delete 200"),
            dump("list2", "stackmap break"),
            dump("delete-bad", "stackmap break -d 7"),
        ], ENV.demo)
        check("not registered yet" in s.text("pending"), name + ": pending message")
        o = check_record(s.json("f0"), 101, 0, name)
        check(o["record"]["match"] == "exact", name + ": frame 0 exact")
        compare(o, KEYS[101], demo_truth(read(out), "stackmap", 101), name + " at the breakpoint")
        check(re.search(r"record 101: 0x[0-9a-f]+", s.text("list")), name + ": stackmap break list")
        check("record 200: pending" in s.text("list"), name + ": 200 still pending")
        check(not s.get("bad")["ok"] and "number" in s.get("bad")["err"], name + ": bad ID")
        check("200" not in s.text("list2"), name + ": --delete")
        check(not s.get("delete-bad")["ok"], name + ": deleting an ID not watched")


LLI = "/usr/bin/lli-14"
RECORD_LESS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "fixtures", "ir", "record_less_caller.ll")


@test
def lli_function_without_records():
    """Issue 10, defect 2, in LLDB: under lli-14 (MCJIT), `entry` (no records) calls `hot` (a
    statepoint). Frame 1 is hot at record 7; frame 2, entry's, is not attributed to hot."""
    need(LLI, "lli-14")
    s = lldb_session(ENV, "lli-record-less", [
        "breakpoint set -n getppid",
        "process launch -- -jit-kind=mcjit %s" % RECORD_LESS,
        dump("hot", "stackmap info --json 1"),
        dump("entry", "stackmap info 2"),
        dump("gc", "stackmap gc-roots --all"),
    ], LLI)
    hot = s.json("hot")
    check(hot["function"] == "hot" and hot["record"]["id"] == 7, "lli: frame 1 is hot: %s" % hot)
    check([loc_value(l) for l in hot["statepoint"]["deopt"]] == [41, 4096],
          "lli: hot's deopt values: %s" % hot["statepoint"]["deopt"])
    entry = s.text("entry")
    check("entry" in entry and "in hot" not in entry and "nearest" not in entry,
          "lli: frame 2 must be entry's, with no record of hot: %s" % entry)
    check("(hot) is in stackmap code" not in s.text("gc"),
          "lli: gc-roots attributes entry's frame to hot: %s" % s.text("gc"))


# -- Live: the hand-written JIT (no unwind tables, a frameless function) --


def handjit_truth(output):
    return {int(t["id"]): t for t in truth(output, "jitmap-handjit:", "record")}


def check_handjit(s, output, what, f_inner=1, f_outer=2):
    t = handjit_truth(output)
    for frame, rid in ((f_inner, 1002), (f_outer, 1001)):
        o = check_record(s.json("f%d" % frame), rid, frame, what)
        for i, loc in enumerate(o["locations"]):
            check(loc["value"] == int(t[rid]["local%d" % i]), "%s: record %d (frame %d) location %d "
                  "(%s) = %s (%s), truth %s" % (what, rid, frame, i, loc["where"], loc["value"],
                                               loc.get("error"), t[rid]["local%d" % i]))
        check(o["record"]["stack_size"] == int(t[rid]["stack_size"]), what + ": stack size")


@test
def handjit_unwound_by_lldb():
    need(ENV.handjit, "jitmap-handjit")
    name = "handjit"
    out = os.path.join(ENV.dir(name), "program.out")
    s = lldb_session(ENV, name, [
        "breakpoint set -n jitmap_handjit_safepoint",
        launch(out, []),
        dump("bt", "bt"),
        dump("f1", "stackmap info --json 1"),
        dump("f2", "stackmap info --json 2"),
        dump("verify", "stackmap verify --json"),
        dump("list", "stackmap list --json"),
        dump("status", "stackmap status"),
    ], ENV.handjit)
    output = read(out)
    bt = s.text("bt")
    check(re.search(r"frame #1: .*handjit_inner \+ 80", bt) and re.search(r"frame #2: .*handjit_outer \+ 80", bt)
          and re.search(r"frame #3: .*`main", bt), "handjit: LLDB's backtrace:\n" + bt)
    # LLDB unwinds the frameless handjit_inner by assembly inspection: frame 2's callee-saved
    # registers (rbx, r12, rbp) are right, and so are its values.
    check_handjit(s, output, "handjit")
    v = s.json("verify")
    check(v["frames_checked"] == 2 and v["problems"] == [], "handjit: verify %s" % v)
    check("libjitmap" in s.text("status"), "handjit: the descriptor is libjitmap's")


# -- Core files --


def frames_with_records(s, prefix, n):
    objs = []
    for k in range(n):
        r = s.get("%s%d" % (prefix, k))
        if not r["ok"]:
            continue
        lines = [l for l in r["out"].splitlines() if l.startswith("{")]
        if not lines:
            continue
        o = json.loads(lines[0])
        if o["record"] is not None:
            objs.append(o)
    return objs


@test
def abort_core_stackmaps():
    need_demo()
    core, output = abort_core(ENV, "abort-stackmaps", ENV.demo, ["--program", "stackmaps", "--abort-at", "2"])
    s = lldb_session(ENV, "abort-stackmaps-load",
                     [dump("f%d" % k, "stackmap info --json %d" % k) for k in range(12)] +
                     [dump("list", "stackmap list --json"), dump("status", "stackmap status"),
                      dump("verify", "stackmap verify --json"), dump("bt", "bt")],
                     ENV.demo, core=core)
    objs = frames_with_records(s, "f", 12)
    check([o["record"]["id"] for o in objs] == [101, 102], "abort core: records %s on the stack" %
          [o["record"]["id"] for o in objs])
    compare(objs[0], KEYS[101], demo_truth(output, "stackmap", 101), "abort core record 101")
    compare(objs[1], KEYS[102], demo_truth(output, "stackmap", 102), "abort core record 102")
    check(objs[0]["function"] == "stackmaps_inner" and objs[1]["function"] == "stackmaps_main",
          "abort core: function names")
    ids = sorted(r["id"] for sm in s.json("list")["stackmaps"] for f in sm["functions"] for r in f["records"])
    check(ids == [100, 101, 102], "abort core: list %s" % ids)
    check(s.json("verify")["problems"] == [], "abort core: verify")


@test
def abort_core_statepoint_mcjit():
    need_demo()
    core, output = abort_core(ENV, "abort-statepoint", ENV.demo, ["--mcjit", "--program", "statepoint"])
    s = lldb_session(ENV, "abort-statepoint-load",
                     [dump("f%d" % k, "stackmap info --json %d" % k) for k in range(12)] +
                     [dump("roots", "stackmap gc-roots --all --json")], ENV.demo, core=core)
    objs = frames_with_records(s, "f", 12)
    check([o["record"]["id"] for o in objs] == [300], "abort core: records on the stack")
    check_statepoint(objs[0], demo_truth(output, "statepoint", 300), "abort core 300")
    check(len(s.json("roots")["roots"]) == len(objs[0]["statepoint"]["gc_roots"]), "abort core: gc-roots --all")


@test
def abort_core_handjit():
    need(ENV.handjit, "jitmap-handjit")
    core, output = abort_core(ENV, "abort-handjit", ENV.handjit, [])
    s = lldb_session(ENV, "abort-handjit-load",
                     [dump("f%d" % k, "stackmap info --json %d" % k) for k in range(12)] + [dump("bt", "bt")],
                     ENV.handjit, core=core)
    objs = frames_with_records(s, "f", 12)
    check([o["record"]["id"] for o in objs] == [1002, 1001], "handjit core: records %s; bt:\n%s" %
          ([o["record"]["id"] for o in objs], s.text("bt")))
    check_handjit(s, output, "handjit core", objs[0]["frame"], objs[1]["frame"])


def core_at_stop(name, exe, commands, extra=()):
    """Run `exe` under LLDB to a stop (`commands`), dump `extra` there, then make the process
    dump core where it stands (prelude's jtabort: LLDB 16 cannot write ELF cores itself).
    Returns (live session, core path)."""
    d = ENV.dir(name)
    clear_cores(d)
    live = lldb_session(ENV, name, list(commands) + list(extra) + ["jtabort"], exe)
    return live, find_core(d)


@test
def core_at_breakpoint_same_values():
    """A core written at the second statepoint stop: the same JSON as the live session."""
    need_demo()
    name = "stop-core"
    out = os.path.join(ENV.dir(name), "program.out")
    live, core = core_at_stop(name, ENV.demo, [
        "breakpoint set -n jitmap_demo_safepoint",
        launch(out, ["--program", "statepoint"]),
        "continue"], [
        dump("f1", "stackmap info --json 1"),
        dump("list", "stackmap list --json"),
        dump("roots", "stackmap gc-roots --all --json"),
        dump("verify", "stackmap verify --json")])
    dead = lldb_session(ENV, name + "-load", [
        dump("f1", "stackmap info --json 1"),
        dump("list", "stackmap list --json"),
        dump("roots", "stackmap gc-roots --all --json"),
        dump("verify", "stackmap verify --json"),
    ], ENV.demo, core=core)
    a, b = live.json("f1"), dead.json("f1")
    check_record(b, 301, 1, "stop core")
    check(a == b, "stop core: the core's answer differs from the live one:\n%s\n%s" % (a, b))
    for tag in ("list", "roots", "verify"):
        check(live.json(tag) == dead.json(tag), "stop core: %s differs" % tag)
    check_statepoint(b, demo_truth(read(out), "statepoint", 301), "stop core 301")
    check(len(dead.json("roots")["roots"]) == 4, "stop core: gc-roots --all")


@test
def core_without_lldb_jit_loader():
    """LLDB's JIT loader off (as for a core whose entry list loops): LLDB alone cannot unwind
    through the hand-written JIT's frames; `stackmap load-images` gives it the images that
    jitmap found in the core, and then the frames and their values are right."""
    need(ENV.handjit, "jitmap-handjit")
    core, output = abort_core(ENV, "noloader-handjit", ENV.handjit, [])
    cmds = ["settings set plugin.jit-loader.gdb.enable off",
            "target create --core %s %s" % (core, ENV.handjit),
            dump("bt-before", "bt"),
            dump("load", "stackmap load-images"),
            dump("bt", "bt"),
            dump("load-again", "stackmap load-images"),
            dump("list", "stackmap list --json")]
    cmds += [dump("f%d" % k, "stackmap info --json %d" % k) for k in range(12)]
    s = lldb_session(ENV, "noloader-handjit-load", cmds, None)
    check("handjit_outer" not in s.text("bt-before"), "no loader: LLDB alone named handjit_outer?")
    check("1 JIT image added" in s.text("load"), "no loader: load-images: " + s.text("load"))
    check(re.search(r"handjit_inner \+ 80\n.*handjit_outer \+ 80\n.*`main", s.text("bt")),
          "no loader: bt after load-images:\n" + s.text("bt"))
    check("known to LLDB already" in s.text("load-again"), "no loader: load-images twice")
    check(len(s.json("list")["stackmaps"]) == 1, "no loader: the added image is not listed twice")
    objs = frames_with_records(s, "f", 12)
    check([o["record"]["id"] for o in objs] == [1002, 1001], "no loader: records %s" %
          [o["record"]["id"] for o in objs])
    check_handjit(s, output, "no loader", objs[0]["frame"], objs[1]["frame"])


# -- Ahead-of-time compiled code --


@test
def aot_object():
    need(ENV.aot, "gdb-commands-aot (needs llc-14)")
    name = "aot"
    out = os.path.join(ENV.dir(name), "program.out")
    s = lldb_session(ENV, name, [
        "breakpoint set -n aot_stop",
        launch(out, []),
        dump("f1", "stackmap info --json 1"),
        dump("list", "stackmap list --json"),
    ], ENV.aot)
    o = check_record(s.json("f1"), 700, 1, "aot")
    compare(o, ["a", "b", "slot"], truth(read(out), "jitmap-aot:", "stackmap")[0], "aot record 700")
    srcs = [sm["source"] for sm in s.json("list")["stackmaps"]]
    check(srcs == [ENV.aot], "aot: stackmaps from %s" % srcs)


# -- The install tree --


@test
def installed_tree():
    """`cmake --install` into a fresh prefix, moved elsewhere: PREFIX/share/jitmap/lldb/jitmap.py
    finds the package and PREFIX/lib*/libjitmap.so.0 from its own place."""
    need_demo()
    cmake = shutil.which("cmake")
    if cmake is None:
        raise Skip("cmake not found")
    d = ENV.dir("install")
    prefix = os.path.join(d, "prefix")
    p = subprocess.run([cmake, "--install", ENV.build, "--prefix", prefix], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    check(p.returncode == 0, "cmake --install: %s" % p.stdout.decode()[-2000:])
    moved = os.path.join(d, "moved")
    os.rename(prefix, moved)
    entry = os.path.join(moved, "share", "jitmap", "lldb", "jitmap.py")
    check(os.path.exists(entry), "install: no %s" % entry)
    out = os.path.join(d, "program.out")
    s = lldb_session(ENV, "install-run", [
        "command script import %s" % entry,
        "breakpoint set -n jitmap_demo_safepoint",
        launch(out, ["--program", "stackmaps"]),
        dump("status", "stackmap status"),
        dump("f1", "stackmap info --json 1"),
        "script import jitmap.names; print('names from ' + jitmap.names.__file__)",
    ], ENV.demo, jitmap=False, library=None)
    lib = [l for l in s.text("status").splitlines() if l.startswith("libjitmap: ")]
    check(lib and lib[0].startswith("libjitmap: " + os.path.join(moved, "lib")),
          "install: libjitmap from %s" % lib)
    compare(check_record(s.json("f1"), 100, 1, "install"), KEYS[100],
            demo_truth(read(out), "stackmap", 100), "install record 100")
    check("names from " + moved in s.stdout, "install: jitmap.names not from the prefix")


# -- Negative control, errors --


@test
def negative_control():
    need_demo()
    name = "negative"
    out = os.path.join(ENV.dir(name), "program.out")
    s = lldb_session(ENV, name, [
        "breakpoint set -n jitmap_demo_safepoint",
        launch(out, ["--program", "stackmaps"]),
        dump("f1", "stackmap info --json 1"),
        dump("list", "stackmap list"),
        dump("roots", "stackmap gc-roots"),
    ], ENV.demo, jitmap=False)
    for tag in ("f1", "list", "roots"):
        r = s.get(tag)
        check(not r["ok"], "negative control: %s worked without jitmap" % r["cmd"])
        check("is not a valid command" in r["err"], "negative control: %s: %s" % (r["cmd"], r["err"]))


@test
def no_process():
    need_demo()
    s = lldb_session(ENV, "no-process", [
        dump("info", "stackmap info"),
        dump("list", "stackmap list"),
        dump("reimport", "command script import %s" % ENV.entry),
        dump("after", "stackmap list"),
    ], ENV.demo)
    for tag in ("info", "list", "after"):
        r = s.get(tag)
        check(not r["ok"] and "no process" in r["err"], "no process: %s: %r" % (tag, r["err"]))
    check(s.get("reimport")["ok"], "importing twice: %s" % s.get("reimport")["err"])


@test
def aot_core():
    """A core of the ahead-of-time compiled program: no JIT descriptor, its own stackmap."""
    need(ENV.aot, "gdb-commands-aot (needs llc-14)")
    name = "aot-core"
    out = os.path.join(ENV.dir(name), "program.out")
    live, core = core_at_stop(name, ENV.aot, ["breakpoint set -n aot_stop", launch(out, [])],
                              [dump("f1", "stackmap info --json 1")])
    s = lldb_session(ENV, name + "-load", [dump("f1", "stackmap info --json 1"),
                                           dump("status", "stackmap status")], ENV.aot, core=core)
    check(s.json("f1") == live.json("f1"), "aot core: the core shows other values")
    check("no JIT descriptor" in s.text("status"), "aot core: status says there is no descriptor")


# -- Hostile inferiors --


HOSTILE_DUMPS = [
    ("status", "stackmap status"),
    ("info", "stackmap info --json"),
    ("info-text", "stackmap info"),
    ("list", "stackmap list"),
    ("gc", "stackmap gc-roots --all"),
    ("verify", "stackmap verify --json"),
    ("good", "stackmap info --json 1"),
    ("bt", "bt"),
]


def hostile_session(name, modes, jitmap=True):
    """One run of the hostile inferior with MODES, the answers dumped at each stop (tags with
    a "2" at the second)."""
    out = os.path.join(ENV.dir(name), "program.out")
    cmds = ["breakpoint set -n hostile_stop", launch(out, modes)]
    cmds += [dump(t, c) for t, c in HOSTILE_DUMPS]
    if any(H.BY_NAME[m].stops == 2 for m in modes):
        cmds += ["continue"] + [dump(t + "2", c) for t, c in HOSTILE_DUMPS]
    s = lldb_session(ENV, name, cmds, ENV.hostile, jitmap=jitmap)
    s.output = read(out)
    return s


def check_good(s, what, tag="good", record=5, rbx=4242):
    """Frame 1's record and its real values: rbx from the program, rdi unavailable."""
    o = s.json(tag)
    check(o["record"] is not None and o["record"]["id"] == record,
          "%s: frame 1 at record %d: %s" % (what, record, o))
    check(loc_value(o["locations"][0]) == rbx, "%s: record %d's rbx, want %d: %s" %
          (what, record, rbx, o["locations"][0]))
    rdi = o["locations"][1]
    check(rdi["value"] is None and "caller-saved" in rdi.get("error", ""),
          "%s: rdi in frame 1 must be unavailable: %s" % (what, rdi))


def check_bt(s, what, tag="bt", frames=H.FRAMES):
    """LLDB unwinds good_fn by itself (jitmap adds no unwinder to LLDB): the whole chain."""
    names = H.frame_names(s.text(tag))
    check(names[:len(frames)] == frames, "%s: bt %s, want %s first" % (what, names, frames))


@test
def hostile_inferiors():
    """Every mode of the hostile inferior (but huge-announced: hostile_huge_announced), one
    process each: the problem named with its addresses, the good entry's real values."""
    need(ENV.hostile, "the hostile inferior")
    for mode in H.MODES:
        s = hostile_session("hostile-" + mode.name, [mode.name])
        what = "hostile %s" % mode.name
        text = "\n".join(r["out"] + r["err"] for r in s.results)
        want = H.problem_re(mode.name, s.output)
        check(want is None or want.search(text), "%s: no /%s/ in the answers:\n%s" %
              (what, want and want.pattern, text[:3000]))
        if mode.lldb_loses_stack:
            # LLDB's own loss (the control shows it): jitmap says there is no frame 1, and
            # still lists the good record.
            c = hostile_session("hostile-%s-control" % mode.name, [mode.name], jitmap=False)
            mine, theirs = H.frame_names(s.text("bt")), H.frame_names(c.text("bt"))
            check(len(s.text("bt").splitlines()) == len(c.text("bt").splitlines()) and mine == theirs,
                  "%s: bt with jitmap %r, without %r" % (what, s.text("bt"), c.text("bt")))
            r = s.get("good")
            check(not r["ok"] and "there is no frame 1" in r["err"], "%s: %r" % (what, r["err"]))
            check("record 5      at 0x" in s.text("list"), "%s: list: %s" % (what, s.text("list")))
            continue
        first = ["hostile_stop", "doomed_fn", "run_jit", "main"] if mode.name == "unregister" \
            else H.FRAMES
        check_bt(s, what, frames=first)
        if mode.name == "unregister":
            check_good(s, what + ", stop 1 in doomed_fn", record=6, rbx=6161)
        elif mode.good:
            check_good(s, what)
        else:
            r = s.get("good")
            check(not r["ok"] and want.search(r["err"]), "%s: stackmap info 1: %r" % (what, r["err"]))
        if mode.stops == 2:
            check_bt(s, what + ", stop 2", "bt2")
            if mode.name == "change":  # the live stackmap was read again
                check_good(s, what + ", stop 2", "good2", record=7, rbx=4343)
            else:
                check_good(s, what + ", stop 2", "good2")
        if mode.name == "unregister":
            before, after = s.text("list"), s.text("list2")
            check("record 6 " in before and "doomed_fn" in before, "%s: stop 1 list: %s" % (what, before))
            check("record 6 " not in after and "doomed_fn" not in after and "record 5 " in after,
                  "%s: the unregistered entry is still listed: %s" % (what, after))


@test
def hostile_together():
    """Every mode a process can hold at once; and the negative control: the same session
    without jitmap has no `stackmap` command."""
    need(ENV.hostile, "the hostile inferior")
    together = [m for m in H.TOGETHER if not H.BY_NAME[m].lldb_loses_stack]
    s = hostile_session("hostile-together", together)
    text = "\n".join(r["out"] + r["err"] for r in s.results)
    for mode in together:
        want = H.problem_re(mode, s.output, together=True)
        check(want is None or want.search(text), "hostile together: no /%s/" % (want and want.pattern))
    check_good(s, "hostile together")
    check_bt(s, "hostile together")
    c = hostile_session("hostile-together-control", together, jitmap=False)
    for tag in ("good", "status", "list"):
        r = c.get(tag)
        check(not r["ok"] and "is not a valid command" in r["err"],
              "hostile control: %s without jitmap: %r" % (r["cmd"], r["err"]))
    check_bt(c, "hostile control (LLDB's own bt)")


@test
def hostile_huge_announced():
    """An image of 2^62 bytes announced through the hook: LLDB 16's JIT loader allocates it
    and aborts, with or without jitmap (LLDB's, not jitmap's: the same status both ways)."""
    need(ENV.hostile, "the hostile inferior")
    got = []
    for way in (True, False):
        name = "hostile-huge-announced" + ("" if way else "-control")
        out = os.path.join(ENV.dir(name), "program.out")
        s = lldb_session(ENV, name, ["breakpoint set -n hostile_stop", launch(out, ["huge-announced"]),
                                     dump("bt", "bt")], ENV.hostile, jitmap=way,
                         allow_fail_status=True, bad_output_ok=True)
        got.append(s.status)
    print("lldb: observed: huge-announced: status %d with jitmap, %d without" % tuple(got))
    check(got[0] == got[1], "huge-announced: jitmap changes LLDB's end: %s" % got)


# The modes whose cores are read back; LLDB 16 cannot open some with its JIT loader on
# (checked without jitmap).
CORE_MODES = ("garbage", "wild-image", "truncated", "stackmap-version", "huge", "version",
              "cycle", "self", "wild-next", "long")
LLDB_CANNOT_OPEN = ("cycle", "self", "huge")


@test
def hostile_cores():
    """Cores of the hostile inferior: jitmap answers or says why. LLDB 16's own JIT loader
    reads every entry when a core is opened, before any command: it never returns from a
    looping list and aborts (out of memory) on the 2^60-byte image. For those cores it is
    turned off; jitmap still walks the list (bounded), and `stackmap load-images` gives LLDB
    the good image."""
    need(ENV.hostile, "the hostile inferior")
    for mode in CORE_MODES:
        name = "hostile-core-" + mode
        out = os.path.join(ENV.dir(name), "program.out")
        _, core = core_at_stop(name, ENV.hostile, ["breakpoint set -n hostile_stop", launch(out, [mode])])
        loader_off = mode in LLDB_CANNOT_OPEN
        cmds = [dump("status", "stackmap status"), dump("good", "stackmap info --json 1"),
                dump("list", "stackmap list")]
        if loader_off:
            cmds = ["settings set plugin.jit-loader.gdb.enable off",
                    "target create --core %s %s" % (core, ENV.hostile),
                    dump("load", "stackmap load-images")] + cmds
        s = lldb_session(ENV, name + "-load", cmds, ENV.hostile if not loader_off else None,
                         core=None if loader_off else core)
        text = "\n".join(r["out"] + r["err"] for r in s.results)
        want = H.problem_re(mode, read(out))
        check(want.search(text), "hostile core %s: no /%s/ in:\n%s" % (mode, want.pattern, text[:1500]))
        if H.BY_NAME[mode].good:
            o = s.json("good")
            check(o["record"] is not None and loc_value(o["locations"][0]) == 4242,
                  "hostile core %s: record 5: %s" % (mode, o))


sys.exit(RUN.run(ENV))
