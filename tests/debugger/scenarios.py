"""The scenarios that GDB's and LLDB's jitmap commands both run: each stated once, over a
harness.Debugger, so that both debuggers are asked the same and checked the same (parity by
construction). gdb.commands (tests/gdb-commands/test_commands.py) registers them with GDB,
lldb.commands (tests/lldb/test_lldb.py) with LLDB, each beside the tests of what only its
debugger has.

jitmap's commands are spelled by the command table (Debugger.ask / Debugger.line); the
debugger's own commands (break, run, frame, a core at the stop) by the Debugger. Where a
debugger has more (GDB's $_stackmap(), LLDB's short options), or legitimately answers
otherwise (GDB alone cannot unwind a frameless JIT function; LLDB 16 loses the stack of one
hostile mode), the scenario says so at that point, `if d.name == ...`.
"""
import os
import re

import harness as T
from harness import (KEYS, check, check_record, check_statepoint, compare, demo_truth,
                     gc_pairs, loc_value, read, record_ids, root_pairs, truth)
import modes as H  # tests/hostile/modes.py: the hostile inferior's modes

ENGINES = (("orc", []), ("mcjit", ["--mcjit"]))


def register(run, d):
    """Register every scenario with Runner `run`, for Debugger `d`."""
    for engine, args in ENGINES:
        run.test(lambda a=args, e=engine: stackmaps(d, e + "-stackmaps", a), e_name(engine, "stackmaps"))
        run.test(lambda a=args, e=engine: patchpoints(d, e + "-patchpoint", a), e_name(engine, "patchpoints"))
        run.test(lambda a=args, e=engine: statepoints(d, e + "-statepoint", a), e_name(engine, "statepoints"))
    run.test(lambda: deopt_frames(d), "deopt_frames")
    run.test(lambda: vm_layouts(d), "vm_layouts")
    run.test(lambda: deep_layouts(d), "deep_layouts")
    for fn in (recursion_every_frame, core_at_stop_same_values, abort_core_stackmaps,
               abort_core_statepoint_mcjit, aot_object, aot_before_relocation, negative_control, break_by_id,
               lli_function_without_records, duplicate_record_ids, handjit, handjit_ykllvm, hostile_inferiors,
               hostile_together):
        run.test(lambda f=fn: f(d), fn.__name__)


def e_name(engine, what):
    return "%s_%s" % (engine, what)


def program_out(d, name):
    return os.path.join(d.env.dir(name), "program.out")


# -- Live: the LLVM demo JIT --


def stackmaps(d, name, engine):
    d.env.need_demo()
    out = program_out(d, name)
    bogus = "-bogus" if d.name == "gdb" else "--bogus"
    cmds = [
        d.break_at("jitmap_demo_safepoint"),
        d.launch(engine + ["--program", "stackmaps"], out),
        d.ask("100-f1", "info", ["json"], [1]),
        d.ask("100-f1-text", "info", [], [1]),
        d.ask("100-f0", "info", ["json"], [0]),
        d.ask("100-f0-text", "info"),
        d.ask("100-f2", "info", ["json"], [2]),
        d.select(1),
        d.ask("100-sel", "info", ["json"]),
        d.ask("100-raw", "info", ["json", "raw"]),
        d.ask("100-raw-text", "info", ["raw"]),
    ]
    if d.name == "gdb":  # GDB's convenience functions
        cmds += [d.dump("100-v0", "print $_stackmap(0)"), d.dump("100-v1", "print $_stackmap(1)"),
                 d.dump("100-id", "print $_stackmap_id()")]
    else:  # LLDB's short options, and its view of a caller-saved register in frame 1
        cmds += [d.dump("100-f2-short", "stackmap info -j 2"),
                 d.dump("100-raw-short", "stackmap info -r"),
                 d.dump("100-rdi", "register read rdi")]
    cmds += [
        "continue",
        d.ask("101-f1", "info", ["json"], [1]),
        d.ask("102-f2", "info", ["json"], [2]),
        d.ask("list", "list"),
        d.ask("list-json", "list", ["json"]),
        d.ask("list-re", "list", ["json"], ["inner$"]),
        d.ask("list-none", "list", [], ["nomatch"]),
        d.ask("verify", "verify", ["json"]),
        d.ask("verify-text", "verify"),
        d.ask("status", "status"),
        d.dump("bad-option", d.line("info") + " " + bogus),
        d.ask("bad-frame", "info", [], [99]),
        d.ask("bad-arg", "info", [], ["x"]),
        d.ask("bad-re", "list", [], ["("]),
        d.dump("help-info", "help " + d.line("info")),
    ]
    if d.name == "gdb":  # the values as the JIT frames' locals (gdb_frames.py)
        cmds += [d.dump("bt-full", "bt full 3"),
                 d.dump("mi-on", 'interpreter-exec mi "-enable-frame-filters"'),
                 d.dump("mi-vars", 'interpreter-exec mi "-stack-list-variables --thread 1 '
                                   '--frame 1 --all-values"'),
                 d.dump("mi-locals", 'interpreter-exec mi "-stack-list-locals --thread 1 '
                                     '--frame 2 --simple-values"')]
    if d.name == "lldb":
        cmds += [
            d.dump("help", "help stackmap"),
            # The one-command form registered where LLDB has no command containers (LLDB < 14).
            "command script add -c jitmap.lldb_commands.Stackmap jm",
            d.dump("dispatch", "jm info --json 1"),
            d.dump("dispatch-bad", "jm bogus"),
        ]
    s = d.session(name, cmds, d.env.demo, output=out)
    what = name.replace("-", " ")
    out = s.output
    compare(check_record(s.json("100-f1"), 100, 1, what), KEYS[100], demo_truth(out, "stackmap", 100),
            what + " record 100, frame 1")
    compare(check_record(s.json("101-f1"), 101, 1, what), KEYS[101], demo_truth(out, "stackmap", 101),
            what + " record 101, frame 1")
    compare(check_record(s.json("102-f2"), 102, 2, what), KEYS[102], demo_truth(out, "stackmap", 102),
            what + " record 102, frame 2")
    # Frame 0 is the C safepoint, frame 2 run_stackmaps: no record there, and the reason.
    for tag in ("100-f0", "100-f2"):
        o = s.json(tag)
        check(o["record"] is None and o.get("error"), "%s: %s: a record where there is none" % (what, tag))
    check("is not at a stackmap record" in s.failed("100-f0-text"), what + ": frame 0 is an error")
    sel = s.json("100-sel")
    check(sel["record"]["id"] == 100 and sel["frame"] == 1, what + ": the selected frame")
    raw = s.json("100-raw")
    check(all("raw" in l and "dwarf_reg" in l["raw"] for l in raw["locations"]), what + ": raw JSON")
    check("dwarf_reg" in s.text("100-raw-text"), what + ": raw text")
    text = s.text("100-f1-text")
    check(re.search(r"record 100 at 0x[0-9a-f]+ \(stackmaps_main\+\d+\)", text), what + ": text header")
    check(re.search(r"#1 +register +\w+ +size 4 +-3 ", text), what + ": text value of b")
    if d.name == "gdb":
        check_locals(s.text("bt-full"), {1: s.json("101-f1"), 2: s.json("102-f2")}, what)
        mi = s.text("mi-vars")
        want = ",".join('{name="loc%d",value="%s"}' % (l["index"], local_text(l))
                        for l in s.json("101-f1")["locations"])
        check("^done,variables=[%s]" % want in mi, "%s: MI -stack-list-variables, frame 1: %s in %s"
              % (what, want, mi))
        want = ",".join('{name="loc%d",type="%s",value="%s"}' % (
            l["index"], "void *" if l["kind"] == "direct" else "long", local_text(l))
            for l in s.json("102-f2")["locations"])
        check("^done,locals=[%s]" % want in s.text("mi-locals"),
              "%s: MI -stack-list-locals, frame 2: %s in %s" % (what, want, s.text("mi-locals")))
        t = demo_truth(out, "stackmap", 100)
        check(s.text("100-v0").strip().endswith("= %s" % t["a"]), what + ": $_stackmap(0)")
        check(s.text("100-v1").strip().endswith("= %s" % t["b"]), what + ": $_stackmap(1)")
        check(s.text("100-id").strip().endswith("= 100"), what + ": $_stackmap_id()")
    else:
        check(s.json("100-f2-short") == s.json("100-f2"), what + ": -j")
        check("dwarf_reg" in s.text("100-raw-short"), what + ": -r")
        check("unavailable" in s.text("100-rdi"), what + ": LLDB shows rdi as unavailable in frame 1")
    listing = s.json("list-json")
    names = sorted(f["name"] for sm in listing["stackmaps"] for f in sm["functions"])
    check(names == ["stackmaps_inner", "stackmaps_main"], what + ": list: functions %s" % names)
    check(record_ids(listing) == [100, 101, 102], what + ": list: records %s" % record_ids(listing))
    check(re.search(r"record 101 +at 0x[0-9a-f]+ \(stackmaps_inner\+93\)", s.text("list")),
          what + ": list text")
    only = s.json("list-re")
    check([f["name"] for sm in only["stackmaps"] for f in sm["functions"]] == ["stackmaps_inner"],
          what + ": list REGEXP")
    check("no function matches nomatch" in s.text("list-none"), what + ": list without a match")
    v = s.json("verify")
    check(v["records_checked"] == 3 and v["frames_checked"] == 2, what + ": verify counts %s" % v)
    check(v["problems"] == [], what + ": verify problems %s" % v["problems"])
    check("no problems" in s.text("verify-text"), what + ": verify text")
    st = s.text("status")
    check("1 JIT entry" in st and "JIT descriptor at 0x" in st and "libLLVM" in st, what + ": status")
    for tag, words in (("bad-option", "unknown option " + bogus), ("bad-frame", "no frame 99"),
                       ("bad-arg", "frame number"), ("bad-re", "bad regular expression")):
        err = s.failed(tag)
        check(words in err, "%s: %s: %r" % (what, tag, err))
    check("Usage: " + d.line("info") in s.text("help-info"), what + ": help of " + d.line("info"))
    if d.name == "lldb":
        check("gc-roots" in s.text("help") and "verify" in s.text("help"), what + ": help stackmap")
        check(s.json("dispatch", "frame") == s.json("101-f1"), what + ": the one-command form")
        check("unknown subcommand" in s.failed("dispatch-bad"), what + ": the one-command form's errors")


def local_text(loc, pointer=False):
    """How GDB prints a location as a local of its frame (gdb_frames.py)."""
    v = loc["value"]
    if v is None:
        return "<unavailable: %s>" % loc["error"]
    if loc["kind"] == "direct" or (pointer and loc["size"] == 8):
        return "0x%x" % v
    bits = 8 * loc["size"]
    return str(v - (1 << bits) if v >> (bits - 1) & 1 else v)


def frame_locals(bt_full, level):
    """{name: text} of frame LEVEL's locals in `bt full` output."""
    m = re.search(r"^#%d .*\n((?:        .*\n?)*)" % level, bt_full, re.M)
    return dict(re.findall(r"^        ([\w.]+) = (.*)$", m.group(1), re.M)) if m else {}


def check_locals(bt_full, objs, what):
    """`bt full` shows each frame's record values as its locals, `info stackmap`'s exactly."""
    for level, obj in objs.items():
        sp = obj.get("statepoint")
        if sp:
            want = {l.get("name", "deopt%d" % i): local_text(l) for i, l in enumerate(sp["deopt"])}
            for i, r in enumerate(sp["gc_roots"]):
                want[r["base"].get("name", "gc_base%d" % i)] = local_text(r["base"], True)
                want[r["derived"].get("name", "gc_derived%d" % i)] = local_text(r["derived"], True)
        else:
            want = {l.get("name", "loc%d" % l["index"]): local_text(l) for l in obj["locations"]}
        got = frame_locals(bt_full, level)
        check(got == want, "%s: bt full, frame %d's locals are the record's values: %s, got %s"
              % (what, level, want, got))


def patchpoints(d, name, engine):
    d.env.need_demo()
    out = program_out(d, name)
    s = d.session(name, [
        d.break_at("jitmap_demo_safepoint"),
        d.launch(engine + ["--program", "patchpoint"], out),
        d.ask("200-f1", "info", ["json"], [1]),
        "continue",
        d.ask("201-f1", "info", ["json"], [1]),
        d.ask("201-f2", "info", ["json"], [2]),
        d.ask("201-f2-text", "info", [], [2]),
        d.ask("verify", "verify", ["json"]),
    ], d.env.demo, output=out)
    what = name.replace("-", " ")
    o = check_record(s.json("200-f1"), 200, 1, what)
    compare(o, KEYS[200], demo_truth(s.output, "patchpoint", 200), what + " record 200")
    check(o["record"]["match"] == "call", what + ": 200 matched by its call sequence")
    # The safepoint line says how far the record is from the return address.
    sp = [t for t in truth(s.output, "jitmap-demo:", "safepoint") if t["id"] == "200"][0]
    check(o["record"]["distance"] == int(sp["delta"]), what + ": distance %s, program says %s" %
          (o["record"]["distance"], sp["delta"]))
    check(int(o["record"]["pc"], 16) == int(sp["record-pc"], 16), what + ": record pc")
    check(o["live_outs"] and all("register" in l and "size" in l for l in o["live_outs"]),
          what + ": live-outs")
    # Frame 1 of the anyregcc stop is the all-registers trampoline: no record there.
    check(s.json("201-f1")["record"] is None, what + ": 201 frame 1 (the trampoline) has no record")
    o = check_record(s.json("201-f2"), 201, 2, what)
    # rdx, rsi, rcx are caller-saved: known in frame 2 because the trampoline saved them (CFI).
    compare(o, KEYS[201], demo_truth(s.output, "patchpoint", 201), what + " record 201")
    check("a patchpoint" in s.text("201-f2-text"), what + ": text says patchpoint")
    check(s.json("verify")["problems"] == [], what + ": verify")


def statepoints_setting(d, tag, mode, ids):
    """Dump the command(s) that set which records are decoded as statepoints."""
    if d.name == "lldb":
        return [d.dump(tag, "stackmap statepoints %s --ids %s" % (mode, ids or "''"))]
    return [d.dump(tag, "set jitmap statepoints " + mode),
            d.dump(tag + "-ids", "set jitmap statepoint-ids " + ids)]


def statepoints(d, name, engine):
    d.env.need_demo()
    out = program_out(d, name)
    cmds = [
        d.break_at("jitmap_demo_safepoint"),
        d.launch(engine + ["--program", "statepoint"], out),
        d.ask("300-f1", "info", ["json"], [1]),
        d.select(1),
        d.ask("300-roots", "gc-roots", ["json"]),
        "continue",
        d.ask("301-f1", "info", ["json"], [1]),
        d.ask("301-f1-text", "info", [], [1]),
        d.ask("301-roots-all", "gc-roots", ["all", "json"]),
        d.ask("301-roots-text", "gc-roots", ["all"]),
        d.ask("301-roots-f0", "gc-roots"),
        d.ask("301-nosp", "info", ["json", "no-statepoint"], [1]),
        d.ask("301-both", "info", ["statepoint", "no-statepoint"], [1]),
    ]
    cmds += statepoints_setting(d, "sp-none", "none", "")
    cmds += [d.ask("301-none", "info", ["json"], [1])]
    cmds += statepoints_setting(d, "sp-ids", "auto", "301")
    cmds += [d.ask("301-flipped", "info", ["json"], [1])]
    cmds += statepoints_setting(d, "sp-back", "auto", "")
    cmds += [
        d.ask("list", "list", ["json"]),
        d.script("import jitmap.names as n; n.name_deopt(300, ['d', 'seven', 'big'])"),
        d.script("import jitmap.names as n; n.name_locations(301, {3: 'obj.base'})"),
        d.ask("301-named", "info", ["json"], [1]),
        d.ask("301-named-text", "info", [], [1]),
    ]
    if d.name == "gdb":  # the values as the JIT frame's locals, roles and names
        cmds += [d.dump("301-bt-full", "bt full 2")]
    if d.name == "lldb":  # LLDB's short option
        cmds.append(d.dump("301-roots-short", "stackmap gc-roots -a"))
    s = d.session(name, cmds, d.env.demo, output=out)
    what = name.replace("-", " ")
    o300 = check_record(s.json("300-f1"), 300, 1, what)
    check_statepoint(o300, demo_truth(s.output, "statepoint", 300), what + " 300")
    o301 = check_record(s.json("301-f1"), 301, 1, what)
    check_statepoint(o301, demo_truth(s.output, "statepoint", 301), what + " 301")
    check(root_pairs(s.json("300-roots")["roots"]) == gc_pairs(o300), what + ": gc-roots matches the record")
    allr = s.json("301-roots-all")
    check(root_pairs(allr["roots"], frame=1) == gc_pairs(o301), what + ": gc-roots, all frames")
    check(all(r["frame"] == 1 for r in allr["roots"]), what + ": roots only in JIT frame 1")
    for tag in ("301-roots-text",) + (("301-roots-short",) if d.name == "lldb" else ()):
        check("offset" in s.text(tag) and "statepoint_main" in s.text(tag), what + ": gc-roots text")
    check("not at a stackmap record" in s.failed("301-roots-f0"), what + ": gc-roots in frame 0")
    check("gc derived from #3, offset 16" in s.text("301-f1-text"), what + ": text roles")
    check(s.json("301-nosp")["statepoint"] is None, what + ": no-statepoint")
    if d.name == "gdb":
        named = s.json("301-named")
        check_locals(s.text("301-bt-full"), {1: named}, what)
        check("obj.base" in frame_locals(s.text("301-bt-full"), 1),
              what + ": bt full names a location through the names API")
    s.failed("301-both")
    for tag in ("sp-none", "sp-ids", "sp-back") + (("sp-none-ids", "sp-ids-ids", "sp-back-ids")
                                                   if d.name == "gdb" else ()):
        check(s.get(tag)["ok"], "%s: %s: %s" % (what, s.get(tag)["cmd"], s.text(tag)))
    check(s.json("301-none")["statepoint"] is None, what + ": statepoints none")
    check(s.json("301-flipped")["statepoint"] is None, what + ": the IDs flip 301")
    kinds = {r["id"]: r["kind"] for sm in s.json("list")["stackmaps"] for f in sm["functions"]
             for r in f["records"]}
    check(kinds == {300: "statepoint", 301: "statepoint"}, what + ": list kinds %s" % kinds)
    named = s.json("301-named")
    check(named["statepoint"] is not None, what + ": the settings are back to auto")
    check(named["locations"][3].get("name") == "obj.base", what + ": names API")
    check("[obj.base]" in s.text("301-named-text"), what + ": names in the text")


DEOPT_LAYOUT = ("import jitmap.names as n; n.deopt_frames(300, ["
                "{'method': 'Demo.inner', 'bci': {'deopt': 1}, 'locals': {'x': 0}}, "
                "{'method': {'deopt': 1}, 'bci': 12, 'locals': [2], 'stack': [0]}, "
                "{'method': 'Bad.frame', 'locals': [9]}])")


def deopt_frames(d):
    """A runtime's deopt layout (names.deopt_frames) over statepoint 300's deopt values: the
    interpreter frames in info stackmap (JSON "virtual_frames", text) and, in GDB, under the
    JIT frame in bt and bt full; a layout that does not fit says why; none without a layout."""
    d.env.need_demo()
    name = "deopt-frames"
    out = program_out(d, name)
    cmds = [d.break_at("jitmap_demo_safepoint"), d.launch(["--program", "statepoint"], out),
            d.ask("plain", "info", ["json"], [1]),
            d.script(DEOPT_LAYOUT),
            d.ask("vf", "info", ["json"], [1]),
            d.ask("vf-text", "info", [], [1])]
    if d.name == "gdb":
        cmds += [d.dump("vf-bt", "bt"), d.dump("vf-bt-full", "bt full 2")]
    else:
        cmds += [d.dump("vf-sbt", "stackmap bt"), d.dump("vf-sbt-json", "stackmap bt --json 3")]
    cmds += [d.script("import jitmap.names as n; n.clear()"), d.ask("cleared", "info", ["json"], [1])]
    s = d.session(name, cmds, d.env.demo, output=out)
    check("virtual_frames" not in s.json("plain") and "virtual_frames" not in s.json("cleared"),
          "deopt frames: no virtual frames without a layout")
    o = s.json("vf")
    deopt = o["statepoint"]["deopt"]
    t = demo_truth(s.output, "statepoint", 300)
    check(len(deopt) == 3, "deopt frames: record 300 has 3 deopt values (%d)" % len(deopt))
    named_x = dict(deopt[0], name="x")
    want = [
        {"method": "Demo.inner", "bci": deopt[1]["value"], "title": "Demo.inner, bci 7",
         "locals": [named_x], "stack": []},
        {"method": deopt[1]["value"], "bci": 12, "title": "method 7, bci 12",
         "locals": [deopt[2]], "stack": [deopt[0]]},
        {"method": "Bad.frame", "bci": None, "title": "Bad.frame", "locals": [], "stack": [],
         "error": "locals: deopt index 9 past the 3 values"},
    ]
    check(o.get("virtual_frames") == want, "deopt frames: JSON %s, want %s" % (
        o.get("virtual_frames"), want))
    check(deopt[1]["value"] == 7, "deopt frames: deopt value 1 is the program's 7 (%s)" % t)
    text = s.text("vf-text")
    for line in ("virtual frame 0: Demo.inner, bci 7", "    local x = -77",
                 "virtual frame 1: method 7, bci 12", "    stack #0 = -77",
                 "virtual frame 2: Bad.frame", "(locals: deopt index 9 past the 3 values)"):
        check(line in text, "deopt frames: text has %r:\n%s" % (line, text))
    if d.name == "gdb":
        bt = s.text("vf-bt")
        check(re.search(r"^#1 .* in statepoint_main \(\)\n +\[Demo\.inner, bci 7\]"
                        r".*\n +\[method 7, bci 12\].*\n +\[Bad\.frame\]", bt, re.M),
              "deopt frames: bt shows the virtual frames under the JIT frame:\n" + bt)
        full = s.text("vf-bt-full")
        check(re.search(r"\[Demo\.inner, bci 7\].*\n +x = -77\n", full) and
              re.search(r"\[method 7, bci 12\].*\n +local0 = 9000000000\n +stack0 = -77\n", full)
              and "error = <unavailable: locals: deopt index 9 past the 3 values>" in full,
              "deopt frames: bt full shows each virtual frame's values:\n" + full)
    else:
        sbt = s.text("vf-sbt")
        check(re.search(r"^frame #1: 0x[0-9a-f]+ statepoint_main, record 300 \(statepoint\)\n"
                        r"    \[Demo\.inner, bci 7\]  x = -77 \(0x[0-9a-f]+\)\n"
                        r"    \[method 7, bci 12\]  local #0 = 9000000000 \(0x[0-9a-f]+\), "
                        r"stack #0 = -77 \(0x[0-9a-f]+\)\n"
                        r"    \[Bad\.frame\]  \(locals: deopt index 9 past the 3 values\)$",
                        sbt, re.M),
              "deopt frames: stackmap bt shows the virtual frames under the JIT frame:\n" + sbt)
        j = s.json("vf-sbt-json")
        check(len(j["frames"]) == 3 and j["frames"][1]["record"] == 300 and
              j["frames"][1]["virtual_frames"] == want and j["frames"][0]["record"] is None,
              "deopt frames: stackmap bt --json: %s" % j)


VM_KEYS = ("call", "site", "k", "method", "bci", "stack")


def vm_want(output, word):
    """The interpreter frames jitmap-vm printed ("vframe": the compiled code's, "interp": its
    interpreter's), innermost first, as (method, bci, [(local, value)], [stack values])."""
    out = []
    for t in sorted(truth(output, "jitmap-vm:", word), key=lambda t: int(t["k"])):
        out.append((t["method"], int(t["bci"]),
                    [(k, int(v)) for k, v in t.items() if k not in VM_KEYS],
                    [int(v) for v in t["stack"].split(",") if v]))
    return out


def vm_got(vfs):
    return [(f["method"], f["bci"], [(loc.get("name"), loc["value"]) for loc in f["locals"]],
             [loc["value"] for loc in f["stack"]]) for f in vfs]


def vm_layouts(d):
    """jitmap-vm, a bytecode interpreter whose JIT registers its deopt layouts through
    libjitmap-producer: at the compiled code's safepoint, the interpreter frames (Demo.square
    inlined in Demo.sumSquares) come from the registered image alone (no names API), live and
    from a core written there, and equal what the interpreter itself had at that safepoint.
    Without jitmap, no debugger shows them."""
    d.env.need(d.env.vm, "jitmap-vm (needs llvm-config-14)")
    name = "vm"
    out = program_out(d, name)
    dumps = [d.ask("f1", "info", ["json"], [1]), d.ask("f1-text", "info", [], [1])]
    if d.name == "gdb":
        dumps += [d.dump("bt", "bt"), d.dump("bt-full", "bt full 2"),
                  d.dump("mi-on", 'interpreter-exec mi "-enable-frame-filters"'),
                  d.dump("mi-frames", 'interpreter-exec mi "-stack-list-frames"')]
    else:
        dumps += [d.dump("sbt", "stackmap bt"), d.dump("sbt-json", "stackmap bt --json 3"),
                  d.dump("lbt", "bt 5"), d.dump("sel2", "frame select 2"),
                  d.dump("fv2", "frame variable"), d.dump("sel3", "frame select 3"),
                  d.dump("fv3", "frame variable")]
    run = [d.break_at("vm_jit_stop"), d.launch(["--n", "6", "--stop-at", "4"], out)]
    live, core = d.core_at_stop(name, d.env.vm, run, dumps)
    dead = d.session(name + "-core", dumps, d.env.vm, core=core)
    output = read(out)
    want = vm_want(output, "vframe")
    check(want == vm_want(output, "interp") and len(want) == 2 and
          want[0][:2] == ("Demo.square", 4) and want[0][2] == [("x", 4), ("y", 16)] and
          want[1][2] == [("n", 6), ("i", 4), ("acc", 14)] and want[1][3] == [14],
          "vm: the program's truth (compiled tier = interpreter): %s" % want)
    for s, what in ((live, "vm"), (dead, "vm core")):
        o = s.json("f1")
        check(o["record"] is not None and o["record"]["id"] == 1000 and
              o["function"] == "jit.Demo.sumSquares",
              "%s: frame 1 is the compiled method at statepoint 1000: %s" % (what, o.get("error")))
        got = vm_got(o.get("virtual_frames", []))
        check(got == want, "%s: virtual frames %s, the interpreter had %s" % (what, got, want))
        text = s.text("f1-text")
        for line in ("virtual frame 0: Demo.square, bci 4", "    local x = 4",
                     "    local y = 16", "virtual frame 1: Demo.sumSquares, bci 10",
                     "    local acc = 14", "    stack #0 = 14"):
            check(line in text, "%s: info stackmap text has %r:\n%s" % (what, line, text))
        if d.name == "gdb":
            bt = s.text("bt")
            check(re.search(r"^#1 .* in jit\.Demo\.sumSquares \(\)\n +\[Demo\.square, bci 4\]"
                            r".*\n +\[Demo\.sumSquares, bci 10\]", bt, re.M),
                  "%s: bt shows the interpreter frames under the JIT frame:\n%s" % (what, bt))
            full = s.text("bt-full")
            check(re.search(r"\[Demo\.square, bci 4\].*\n +x = 4\n +y = 16\n", full) and
                  re.search(r"\[Demo\.sumSquares, bci 10\].*\n +n = 6\n +i = 4\n +acc = 14\n"
                            r" +stack0 = 14\n", full),
                  "%s: bt full shows each interpreter frame's locals:\n%s" % (what, full))
            mi = s.text("mi-frames")
            check(re.search(r'frame=\{level="1",[^}]*func="jit\.Demo\.sumSquares",[^}]*'
                            r'children=\[frame=\{func="\[Demo\.square, bci 4\]"[^}]*\},'
                            r'frame=\{func="\[Demo\.sumSquares, bci 10\]"', mi),
                  "%s: MI -stack-list-frames gives the interpreter frames as the JIT frame's "
                  "children:\n%s" % (what, mi))
        else:
            sbt = s.text("sbt")
            check(re.search(r"frame #1: 0x[0-9a-f]+ jit\.Demo\.sumSquares, record 1000 "
                            r"\(statepoint\)\n    \[Demo\.square, bci 4\]  x = 4, y = 16\n"
                            r"    \[Demo\.sumSquares, bci 10\]  n = 6, i = 4, acc = 14, "
                            r"stack #0 = 14\n", sbt),
                  "%s: stackmap bt:\n%s" % (what, sbt))
            j = s.json("sbt-json")
            check(vm_got(j["frames"][1]["virtual_frames"]) == want, "%s: stackmap bt --json" % what)
            # LLDB's own bt: from LLDB 22, jitmap's frame provider puts the interpreter frames
            # under the JIT frame, as GDB's bt does (LLDB gives them numbers).
            lbt = s.text("lbt")
            provided = re.search(r"frame #1: 0x[0-9a-f]+ .*`jit\.Demo\.sumSquares \+ \d+\n"
                                 r" +frame #2: \[Demo\.square, bci 4\] \[synthetic\].*\n"
                                 r" +frame #3: \[Demo\.sumSquares, bci 10\] \[synthetic\]"
                                 r".*\n +frame #4: .*`main", lbt)
            if d.lldb_major >= 22:
                check(provided, "%s: LLDB %d's bt shows the interpreter frames under the JIT "
                      "frame:\n%s" % (what, d.lldb_major, lbt))
            else:
                check(not provided and "[Demo." not in lbt,
                      "%s: LLDB %d has no frame providers: its bt is LLDB's own:\n%s" % (
                          what, d.lldb_major, lbt))
            # `frame variable` in an interpreter frame: from LLDB 23, its locals and stack
            # (LLDB 22 does not ask a provided frame for variables; before, frame 2 is main).
            fv = [re.findall(r"^\(long\) (\w+) = (-?\d+)$", s.text(k), re.M)
                  for k in ("fv2", "fv3")]
            fv_want = [[(n, str(v)) for n, v in locs + [("stack%d" % i, v)
                                                         for i, v in enumerate(stack)]]
                       for _, _, locs, stack in want]
            check(fv == (fv_want if d.lldb_major >= 23 else [[], []]),
                  "%s: LLDB %d's frame variable in frames 2 and 3: %s, want %s" % (
                      what, d.lldb_major, fv, fv_want if d.lldb_major >= 23 else "none"))
    # Without jitmap: no virtual frames anywhere (LLDB's bt included).
    neg = d.session(name + "-negative", run + [d.dump("bt", "bt")], d.env.vm, jitmap=False)
    check("Demo.square" not in neg.text("bt") and "jit.Demo.sumSquares" in neg.text("bt"),
          "vm negative control: bt without jitmap shows no interpreter frame:\n" + neg.text("bt"))


DEEP = 300  # recursion depth of deep_layouts: DEEP + 1 JIT frames, each with a layout
DEEP_LAYOUT = ("import jitmap.names as n; [n.deopt_frames(r, [{'method': 'Rec.recurse', "
               "'bci': 3, 'locals': {'n': 0, 'acc': 1}}]) for r in (400, 401)]")


def deep_layouts(d):
    """A deep stack where every JIT frame has an interpreter frame (a layout for the
    recursion's records 400 and 401, given before the program runs): the debugger's own
    backtrace, after a step (a new stop), shows each JIT frame followed by its interpreter
    frame, DEEP + 1 of them, in order, and frame 3's values are the program's (an interpreter
    frame below a JIT frame is no guess of the unwinder's); no interpreter frame without
    jitmap. LLDB 22 and later (its frame provider: bench/lldb_provider.sh measures what it
    costs a stop) and GDB (its frame filter); `stackmap bt` in older LLDBs is
    recursion_every_frame's."""
    if d.name == "lldb" and d.lldb_major < 22:
        raise T.Skip("LLDB %d has no frame providers" % d.lldb_major)
    d.env.need_demo()
    name = "deep-layouts"
    out = program_out(d, name)
    step = "stepi" if d.name == "gdb" else "thread step-inst"
    cmds = [d.script(DEEP_LAYOUT), d.break_at("jitmap_demo_safepoint"),
            d.launch(["--program", "recursion", "--depth", str(DEEP)], out),
            d.dump("step", step), d.dump("bt", "bt"), d.ask("f3", "info", ["json"], [3])]
    s = d.session(name, cmds, d.env.demo, output=out)
    bt = s.text("bt")
    # Frame 3: in LLDB the second JIT frame (n = 1: an interpreter frame is frame 2), in GDB
    # the third (n = 2). Its registers are LLDB's or GDB's own: an interpreter frame below it
    # is no guess of the unwinder's.
    n = 1 if d.name == "lldb" else 2
    t400 = {int(t["n"]): t for t in truth(s.output, "jitmap-demo:", "recursion")
            if t["id"] == "400"}
    compare(check_record(s.json("f3"), 400, 3, name), ["n", "acc", "tag", "slot"], t400[n],
            "%s frame 3 (n=%d)" % (name, n))
    if d.name == "gdb":
        pairs = re.findall(r"^#\d+ +0x[0-9a-f]+ in recurse \(\)\n +\[Rec\.recurse, bci 3\]",
                           bt, re.M)
    else:
        pairs = re.findall(r"frame #\d+: 0x[0-9a-f]+ .*`recurse \+ \d+\n +frame #\d+: "
                           r"\[Rec\.recurse, bci 3\] \[synthetic\]", bt)
    check(len(pairs) == DEEP + 1 and bt.count("[Rec.recurse, bci 3]") == DEEP + 1,
          "%s: bt shows %d JIT frames each followed by its interpreter frame (%d named), want "
          "%d:\n%s" % (name, len(pairs), bt.count("[Rec.recurse"), DEEP + 1, bt[-3000:]))
    neg = d.session(name + "-negative", cmds[1:], d.env.demo, jitmap=False)
    check("[Rec.recurse" not in neg.text("bt") and neg.text("bt").count("recurse") > DEEP,
          "%s negative control: bt without jitmap has the JIT frames and no interpreter "
          "frame:\n%s" % (name, neg.text("bt")[-2000:]))


def recursion_every_frame(d):
    """Every frame of a 40-deep recursion, under both engines."""
    d.env.need_demo()
    depth = 40
    for engine, args in ENGINES:
        name = "recursion-" + engine
        out = program_out(d, name)
        cmds = [d.break_at("jitmap_demo_safepoint"),
                d.launch(args + ["--program", "recursion", "--depth", str(depth)], out)]
        cmds += [d.ask("f%d" % k, "info", ["json"], [k]) for k in range(1, depth + 3)]
        cmds += [d.ask("verify", "verify", ["json"])]
        s = d.session(name, cmds, d.env.demo, output=out)
        t400 = {int(t["n"]): t for t in truth(s.output, "jitmap-demo:", "recursion") if t["id"] == "400"}
        t401 = [t for t in truth(s.output, "jitmap-demo:", "recursion") if t["id"] == "401"][0]
        check(len(t400) == depth, "%s: %d truth lines for 400" % (name, len(t400)))
        compare(check_record(s.json("f1"), 401, 1, name), ["n", "acc", "slot"], t401, name + " frame 1")
        for k in range(2, depth + 2):
            n = k - 1
            compare(check_record(s.json("f%d" % k), 400, k, name), ["n", "acc", "tag", "slot"], t400[n],
                    "%s frame %d (n=%d)" % (name, k, n))
        last = s.json("f%d" % (depth + 2))
        check(last["record"] is None and last["function"] == "recursion_main",
              "%s: frame %d (recursion_main) has no record" % (name, depth + 2))
        v = s.json("verify")
        check(v["frames_checked"] == depth + 1 and v["problems"] == [], "%s: verify %s" % (name, v))


# -- Core files --


def core_at_stop_same_values(d):
    """A core written at the second statepoint stop (GDB's gcore; for LLDB, which cannot
    write one, the kernel's): the same JSON as the live session."""
    d.env.need_demo()
    name = "stop-core"
    out = program_out(d, name)
    dumps = [d.ask("f1", "info", ["json"], [1]), d.ask("list", "list", ["json"]),
             d.ask("roots", "gc-roots", ["all", "json"]), d.ask("verify", "verify", ["json"])]
    live, core = d.core_at_stop(name, d.env.demo, [
        d.break_at("jitmap_demo_safepoint"),
        d.launch(["--program", "statepoint"], out),
        "continue"], dumps)
    dead = d.session(name + "-load", dumps, d.env.demo, core=core)
    a, b = live.json("f1"), dead.json("f1")
    check_record(b, 301, 1, "stop core")
    check(a == b, "stop core: the core's answer differs from the live one:\n%s\n%s" % (a, b))
    for tag in ("list", "roots", "verify"):
        check(live.json(tag) == dead.json(tag), "stop core: %s differs" % tag)
    check_statepoint(b, demo_truth(read(out), "statepoint", 301), "stop core 301")
    check(len(dead.json("roots")["roots"]) == 4, "stop core: gc-roots, all frames")


def frames_session(d, name, exe, core, n, extra=()):
    return d.session(name, [d.ask("f%d" % k, "info", ["json"], [k]) for k in range(n)] + list(extra),
                     exe, core=core)


def abort_core_stackmaps(d):
    """The demo's own core (--abort at the second stop, ORC)."""
    d.env.need_demo()
    core, output = T.abort_core(d.env, "abort-stackmaps", d.env.demo,
                                ["--program", "stackmaps", "--abort-at", "2"])
    s = frames_session(d, "abort-stackmaps-load", d.env.demo, core, 12, [
        d.ask("list", "list", ["json"]), d.ask("status", "status"), d.ask("verify", "verify", ["json"]),
        d.dump("bt", "bt")])
    objs = s.frames_with_records("f", 12)
    check([o["record"]["id"] for o in objs] == [101, 102], "abort core: records %s on the stack" %
          [o["record"]["id"] for o in objs])
    compare(objs[0], KEYS[101], demo_truth(output, "stackmap", 101), "abort core record 101")
    compare(objs[1], KEYS[102], demo_truth(output, "stackmap", 102), "abort core record 102")
    check(objs[0]["function"] == "stackmaps_inner" and objs[1]["function"] == "stackmaps_main",
          "abort core: function names")
    check(record_ids(s.json("list")) == [100, 101, 102], "abort core: list %s" % record_ids(s.json("list")))
    check(s.json("verify")["problems"] == [], "abort core: verify")
    check("1 JIT entry" in s.text("status"), "abort core: status: %s" % s.text("status"))


def abort_core_statepoint_mcjit(d):
    d.env.need_demo()
    core, output = T.abort_core(d.env, "abort-statepoint", d.env.demo,
                                ["--mcjit", "--program", "statepoint"])
    s = frames_session(d, "abort-statepoint-load", d.env.demo, core, 12,
                       [d.ask("roots", "gc-roots", ["all", "json"])])
    objs = s.frames_with_records("f", 12)
    check([o["record"]["id"] for o in objs] == [300], "abort core: records on the stack")
    check_statepoint(objs[0], demo_truth(output, "statepoint", 300), "abort core 300")
    check(len(s.json("roots")["roots"]) == len(objs[0]["statepoint"]["gc_roots"]),
          "abort core: gc-roots, all frames")


# -- Ahead-of-time compiled code --


def aot_object(d):
    """An ordinary PIE with its own .llvm_stackmaps (no JIT): live, and from a core of the
    stop (no JIT descriptor there, its own stackmap)."""
    d.env.need(d.env.aot, "gdb-commands-aot (needs llc-14)")
    name = "aot"
    out = program_out(d, name)
    live, core = d.core_at_stop(name, d.env.aot, [d.break_at("aot_stop"), d.launch([], out)],
                                [d.ask("f1", "info", ["json"], [1]), d.ask("list", "list", ["json"])])
    o = check_record(live.json("f1"), 700, 1, "aot")
    compare(o, ["a", "b", "slot"], truth(read(out), "jitmap-aot:", "stackmap")[0], "aot record 700")
    srcs = [sm["source"] for sm in live.json("list")["stackmaps"]]
    check(srcs == [d.env.aot], "aot: stackmaps from %s" % srcs)
    dead = d.session(name + "-core", [d.ask("f1", "info", ["json"], [1]), d.ask("status", "status")],
                     d.env.aot, core=core)
    check(dead.json("f1") == o, "aot core: the core shows other values")
    check("no JIT descriptor" in dead.text("status"), "aot core: status says there is no descriptor")


def aot_before_relocation(d):
    """The same PIE stopped before the dynamic loader has relocated it (GDB's starti, LLDB's
    launch --stop-at-entry): its .llvm_stackmaps in memory still holds link-time addresses.
    jitmap reads the section from the file moved by the load bias there (and says so), and
    reads memory again at the next stop: record 700 at the same PC both times, and at the
    breakpoint the truth's values. (Asked first at the early stop, jitmap once kept the
    link-time addresses for good: `no record` at the breakpoint.)"""
    d.env.need(d.env.aot, "gdb-commands-aot (needs llc-14)")
    name = "aot-early"
    out = program_out(d, name)
    early = ("starti > %s" % out if d.name == "gdb" else
             "process launch --stop-at-entry -o %s -e %s --" % (out, out + ".err"))
    go_on = "continue" if d.name == "gdb" else "process continue"
    s = d.session(name, [early, d.ask("early", "list", ["json"]), d.break_at("aot_stop"), go_on,
                         d.ask("f1", "info", ["json"], [1]), d.ask("late", "list", ["json"])],
                  d.env.aot)

    def record_700(tag):
        return [(r["pc"], sm["notes"]) for sm in s.json(tag)["stackmaps"]
                for f in sm["functions"] for r in f["records"] if r["id"] == 700]

    o = check_record(s.json("f1"), 700, 1, name)
    compare(o, ["a", "b", "slot"], truth(read(out), "jitmap-aot:", "stackmap")[0],
            name + " record 700")
    early_700, late_700 = record_700("early"), record_700("late")
    check(len(early_700) == 1 and early_700[0][0] == o["pc"],
          "%s: before relocation, record 700 at the PC of the later stop %s: %s" % (
              name, o["pc"], early_700))
    check(early_700 and any("not relocated yet" in n for n in early_700[0][1]),
          "%s: before relocation, the note says the section was read from the file: %s" % (
              name, early_700))
    check(late_700 and late_700[0][0] == o["pc"] and
          not any("not relocated yet" in n for n in late_700[0][1]),
          "%s: at the breakpoint, read from memory: %s" % (name, late_700))


# -- Negative control, breakpoints by ID --


def negative_control(d):
    """The same stop without jitmap: none of its commands exists."""
    d.env.need_demo()
    name = "negative"
    out = program_out(d, name)
    s = d.session(name, [
        d.break_at("jitmap_demo_safepoint"),
        d.launch(["--program", "stackmaps"], out),
        d.ask("f1", "info", ["json"], [1]),
        d.ask("list", "list"),
        d.ask("roots", "gc-roots"),
        d.ask("verify", "verify"),
    ], d.env.demo, jitmap=False)
    for tag in ("f1", "list", "roots", "verify"):
        check(d.undefined in s.failed(tag), "negative control: %s: %s" % (s.get(tag)["cmd"], s.text(tag)))


def break_by_id(d):
    """`break` before the program runs: pending, then set when the JIT registers its code
    (under MCJIT before relocation), and frame 0 at the record has the truth's values."""
    d.env.need_demo()
    for engine, args in ENGINES:
        name = "break-" + engine
        out = program_out(d, name)
        s = d.session(name, [
            d.ask("pending", "break", [], [101, 200]),
            d.launch(args + ["--program", "stackmaps"], out),
            d.ask("f0", "info", ["json"]),
            d.ask("list", "break"),
            d.ask("bad", "break", [], ["x"]),
            d.ask("delete", "break", ["delete"], [200]),
            d.ask("list2", "break"),
            d.dump("delete-bad", d.line("break") + " -d 7"),
        ], d.env.demo, output=out)
        check("not registered yet" in s.text("pending"), name + ": pending message")
        o = check_record(s.json("f0"), 101, 0, name)
        check(o["record"]["match"] == "exact", name + ": frame 0 exact")
        compare(o, KEYS[101], demo_truth(s.output, "stackmap", 101), name + " at the breakpoint")
        check(re.search(r"record 101: 0x[0-9a-f]+", s.text("list")), name + ": break list")
        check("record 200: pending" in s.text("list"), name + ": 200 still pending")
        check("number" in s.failed("bad"), name + ": bad ID")
        check(s.get("delete")["ok"] and "200" not in s.text("list2"), name + ": delete")
        s.failed("delete-bad")


# -- lli-14: a function without records calls one with --


LLI = "/usr/bin/lli-14"
RECORD_LESS = os.path.join(T.SOURCE, "tests", "fixtures", "ir", "record_less_caller.ll")


def lli_function_without_records(d):
    """Issue 10, defect 2: under lli-14, `entry` (no records) calls `hot` (a statepoint). The
    frame in `entry` is not "in stackmap code" and is not attributed to `hot`: function sizes
    from the JIT image's symbols bound each stackmap function. And the negative control."""
    if not os.access(LLI, os.X_OK):
        raise T.Skip("lli-14 is not installed")
    for kind in ("mcjit", "orc-lazy"):
        what = "lli %s" % kind
        pending = ["set breakpoint pending on"] if d.name == "gdb" else []
        s = d.session("lli-" + kind, pending + [
            d.break_at("getppid"),
            d.launch(["-jit-kind=%s" % kind, RECORD_LESS]),
            d.ask("hot", "info", ["json"], [1]),
            d.ask("entry", "info", [], [2]),
            d.ask("gc", "gc-roots", ["all"]),
        ], LLI)
        hot = s.json("hot")
        check(hot["function"] == "hot" and hot["record"]["id"] == 7,
              "%s: frame 1 is hot at record 7: %s" % (what, hot))
        check([loc_value(l) for l in hot["statepoint"]["deopt"]] == [41, 4096],
              "%s: hot's deopt values: %s" % (what, hot["statepoint"]["deopt"]))
        entry = s.failed("entry")
        check("in entry" in entry and "hot" not in entry and "nearest" not in entry,
              "%s: frame 2 must be entry's, with no record of hot: %s" % (what, entry))
        gc = s.text("gc")
        check("(hot) is in stackmap code" not in gc and "(entry) is in stackmap code" not in gc,
              "%s: gc-roots attributes entry's frame to hot: %s" % (what, gc))
    bare = d.session("lli-bare", pending + [d.break_at("getppid"),
                                            d.launch(["-jit-kind=mcjit", RECORD_LESS]),
                                            d.ask("hot", "info", ["json"], [1])], LLI, jitmap=False)
    check(d.undefined in bare.failed("hot"), "lli without jitmap: %s" % bare.text("hot"))


DUPLICATE_ID = os.path.join(T.SOURCE, "tests", "fixtures", "ir", "duplicate_id.ll")


def duplicate_record_ids(d):
    """Issue 10, defect 5: record ID 5 at two PCs of one function (LLVM's unroller duplicates
    stackmap intrinsics). `break 5` stops at both, each stop shows its own record (constants 0
    and 1, values 4100 and 4101; GDB: $_stackmap_id() is 5 at both), the list of records and
    the watched IDs have both, and `verify` finds nothing wrong with the duplicate."""
    if not os.access(LLI, os.X_OK):
        raise T.Skip("lli-14 is not installed")
    gdb = d.name == "gdb"
    s = d.session("duplicate-id", (["set breakpoint pending on"] if gdb else []) + [
        d.ask("break", "break", [], [5]),
        d.launch(["-jit-kind=mcjit", DUPLICATE_ID]),
        d.ask("first", "info", ["json"]),
    ] + ([d.dump("id1", "print $_stackmap_id()")] if gdb else []) + [
        d.ask("list", "break"),
        d.ask("all", "list", ["json"]),
        d.ask("verify", "verify", ["json"]),
        "continue",
        d.ask("second", "info", ["json"]),
    ] + ([d.dump("id2", "print $_stackmap_id()")] if gdb else []), LLI)
    pcs = []
    for tag, const, value in (("first", 0, 4100), ("second", 1, 4101)):
        o = s.json(tag)
        check(o["record"] is not None and o["record"]["id"] == 5 and
              o["record"]["match"] == "exact", "duplicate id: %s stop at record 5: %s" % (tag, o))
        check([loc_value(l) for l in o["locations"]] == [value, const],
              "duplicate id: %s stop's values %s, want [%d, %d]" % (
                  tag, [loc_value(l) for l in o["locations"]], value, const))
        pcs.append(o["pc"])
    check(pcs[0] != pcs[1], "duplicate id: both stops at one PC %s" % pcs)
    for tag in ("id1", "id2") if gdb else ():
        check(s.text(tag).strip().endswith("= 5"), "duplicate id: $_stackmap_id(): %s" % s.text(tag))
    listed = s.text("list")
    check(all(pc in listed for pc in pcs), "duplicate id: the watched IDs list %s: %s" % (pcs, listed))
    recs = [r for sm in s.json("all")["stackmaps"] for f in sm["functions"] for r in f["records"]
            if r["id"] == 5]
    check(sorted(r["pc"] for r in recs) == sorted(pcs), "duplicate id: list: %s" % recs)
    check(s.json("verify")["problems"] == [], "duplicate id: verify: %s" % s.json("verify"))


# -- The hand-written JIT (no unwind tables, a frameless function) --


def handjit(d):
    """jitmap-handjit: frame 1 (the frameless handjit_inner) at record 1002, frame 2
    (handjit_outer) at 1001. LLDB unwinds handjit_inner by assembly inspection: frame 2 and
    its callee-saved registers are right. GDB alone cannot unwind it (no CFI); the reader
    plugin can, but whether handjit_inner left rbx, r12 and rbp alone no CFI says (its
    24-byte frame could hold their saves), so the plugin gives them as "not saved". The
    contract: each value is the truth or unavailable with that reason, never a wrong number."""
    d.env.need(d.env.handjit, "jitmap-handjit")
    name = "handjit"
    out = program_out(d, name)
    s = d.session(name, [
        d.break_at("jitmap_handjit_safepoint"),
        d.launch([], out),
        d.dump("bt", "bt"),
        d.ask("f1", "info", ["json"], [1]),
        d.ask("f2", "info", ["json"], [2]),
        d.ask("verify", "verify", ["json"]),
        d.ask("list", "list", ["json"]),
        d.ask("status", "status"),
    ], d.env.handjit, output=out)
    t = T.handjit_truth(s.output)
    exact = [(1, 1002)]
    if d.name == "lldb":
        exact.append((2, 1001))
        bt = s.text("bt")
        check(re.search(r"frame #1: .*handjit_inner \+ 80", bt) and
              re.search(r"frame #2: .*handjit_outer \+ 80", bt) and re.search(r"frame #3: .*`main", bt),
              "handjit: LLDB's backtrace:\n" + bt)
        v = s.json("verify")
        check(v["frames_checked"] == 2 and v["problems"] == [], "handjit: verify %s" % v)
    check_handjit(s, t, "handjit", exact)
    if d.name == "gdb" and d.env.plugin:
        o = check_record(s.json("f2"), 1001, 2, "handjit (plugin)")
        for i, loc in enumerate(o["locations"]):
            right = loc["value"] == int(t[1001]["local%d" % i]) or (
                loc["value"] is None and "not saved in frame 2" in (loc.get("error") or "")
                and loc["kind"] in ("register", "direct", "indirect"))
            check(right, "handjit (plugin): frame 2 location %d = %s (%s), truth %s" % (
                i, loc["value"], loc.get("error"), t[1001]["local%d" % i]))
        check(all(loc["value"] == int(t[1001]["local%d" % i]) for i, loc in enumerate(o["locations"])
                  if loc["kind"].startswith("constant")), "handjit (plugin): frame 2 constants")
    check(len(s.json("list")["stackmaps"]) == 1, "handjit: list")
    check("libjitmap" in s.text("status"), "handjit: the descriptor is libjitmap's")


def handjit_ykllvm(d):
    """jitmap-handjit --ykllvm: the same JIT and values, its stack map in ykllvm's layout with
    extras (docs/stackmap-format.md, "ykllvm"). `info stackmap` names the layout and each
    location's live variable (the JIT's own grouping, which it prints), text and JSON, with the
    truth's values; a section misread as LLVM's would have failed to parse or read nonsense.
    Then a core written at that stop answers the same, text and JSON."""
    d.env.need(d.env.handjit, "jitmap-handjit")
    name = "handjit_ykllvm"
    out = program_out(d, name)
    asks = [d.ask("f1", "info", ["json"], [1]), d.ask("f1-text", "info", [], [1])]
    s, core = d.core_at_stop(name, d.env.handjit, [
        d.break_at("jitmap_handjit_safepoint"),
        d.launch(["--ykllvm"], out)], asks)
    output = read(out)
    t = T.handjit_truth(output)
    groups = re.search(r"^jitmap-handjit: ykllvm variables=([0-9,]+)$", output, re.M)
    check(groups, "handjit_ykllvm: the JIT says its grouping")
    want = [int(v) for v in groups.group(1).split(",")] if groups else []
    check_handjit(s, t, "handjit_ykllvm", [(1, 1002)])
    o = s.json("f1")
    check(o["record"].get("dialect") == "ykllvm-extras" and o["record"].get("live_vars") == len(set(want)),
          "handjit_ykllvm: the record's layout %s, %s live variables" % (
              o["record"].get("dialect"), o["record"].get("live_vars")))
    check([loc.get("live_var") for loc in o["locations"]] == want,
          "handjit_ykllvm: live variables %s, the JIT's %s" % ([loc.get("live_var") for loc in o["locations"]], want))
    text = s.text("f1-text")
    check("%d live variables in 6 locations (ykllvm-extras)" % len(set(want)) in text and
          re.search(r"#3 +direct +rsp\+8 .*variable %d" % want[3], text),
          "handjit_ykllvm: info stackmap's text:\n" + text)
    dead = d.session(name + "-core", asks, d.env.handjit, core=core)
    check(dead.json("f1") == o, "handjit_ykllvm: the core's answer differs from the live one:\n%s\n%s"
          % (o, dead.json("f1")))
    check(dead.text("f1-text") == text, "handjit_ykllvm: the core's text differs:\n" + dead.text("f1-text"))


def check_handjit(s, t, what, frames):
    """Each (frame, record) of `frames`: the truth's values and stack size."""
    for frame, rid in frames:
        o = check_record(s.json("f%d" % frame), rid, frame, what)
        for i, loc in enumerate(o["locations"]):
            check(loc["value"] == int(t[rid]["local%d" % i]), "%s: record %d (frame %d) location %d "
                  "(%s) = %s (%s), truth %s" % (what, rid, frame, i, loc["where"], loc["value"],
                                               loc.get("error"), t[rid]["local%d" % i]))
        check(o["record"]["stack_size"] == int(t[rid]["stack_size"]), what + ": stack size")


# -- The hostile inferior (tests/hostile/hostile.c, its modes in tests/hostile/modes.py) --


HOSTILE_DUMPS = [
    ("status", "status", []),
    ("info", "info", ["json"]),
    ("info-text", "info", []),
    ("list", "list", []),
    ("gc", "gc-roots", ["all"]),
    ("verify", "verify", ["json"]),
]


def hostile_session(d, name, modes, jitmap=True):
    """One run of the hostile inferior with MODES, the answers dumped at each stop (tags with
    a "2" at the second)."""
    d.env.need(d.env.hostile, "the hostile inferior")
    m = [H.BY_NAME[x] for x in modes]
    out = program_out(d, name)
    cmds = [d.break_at("hostile_stop"), d.launch(modes, out)]
    if d.name == "gdb" and any(x.hook_stop for x in m):
        # GDB stops in the hook first, and its error there would end the command file.
        cmds[1:] = [d.dump("run", d.launch(modes, out)), d.dump("hook", "bt"), "continue"]
    two = any(x.stops == 2 for x in m)

    def at_stop(suffix):
        dumps = [d.ask(t + suffix, key, opts) for t, key, opts in HOSTILE_DUMPS]
        # (`break 5` would stop the way to the second stop at record 5)
        if not (two and suffix == ""):
            dumps.append(d.ask("break" + suffix, "break", [], [5]))
        dumps += [d.ask("good" + suffix, "info", ["json"], [1]), d.dump("bt" + suffix, "bt")]
        if d.name == "gdb":
            dumps.append(d.dump("bt-full" + suffix, "bt full 2"))
        return dumps

    cmds += at_stop("")
    if two:
        cmds += ["continue"] + at_stop("2")
    return d.session(name, cmds, d.env.hostile, jitmap=jitmap, output=out)


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


def check_bt(d, s, what, tag="bt", frames=H.FRAMES):
    """LLDB unwinds good_fn by itself (jitmap adds no unwinder to LLDB): the whole chain.
    GDB without the reader unwinds the JIT frame by its heuristics, which test_gdb_hostile.sh
    shows going wrong: the stop and the JIT function named, then main last, or (where the
    heuristics took a stack word for good_fn's return address) the walk reaches a frame in the
    program's data (GDB 13 names it `modes`, GDB 16 `__do_global_dtors_aux_fini_array_entry`),
    where jitmap's no-code unwinder ends it and jitmap's frame filter ends the backtrace before
    it: the stop and the JIT function, nothing after them."""
    names = H.frame_names(s.text(tag))
    if d.name == "lldb":
        check(names[:len(frames)] == frames, "%s: bt %s, want %s first" % (what, names, frames))
    else:
        ends_before_junk = len(names) == 2
        check(names[:2] == frames[:2] and (names[-1:] == frames[-1:] or ends_before_junk),
              "%s: bt %s, want %s ... %s (or %s and nothing after them: a frame in data is "
              "left out)" % (what, names, frames[:2], frames[-1], frames[:2]))


def hostile_inferiors(d):
    """Every mode of the hostile inferior, one process each: the problem named with the
    program's addresses, the good entry's real values (LLDB: but huge-announced, which
    test_lldb.py's hostile_huge_announced runs)."""
    for mode in H.MODES:
        s = hostile_session(d, "hostile-" + mode.name, [mode.name])
        what = "hostile %s" % mode.name
        text = s.all_text()
        want = H.problem_re(mode.name, s.output)
        check(want is None or want.search(text), "%s: no /%s/ in the answers:\n%s" %
              (what, want and want.pattern, text[:3000]))
        if d.name == "gdb" and mode.hook_stop:  # GDB's own error for the garbage action_flag
            check("Unknown action_flag value in JIT descriptor!" in s.text("run"),
                  "%s: GDB's error: %r" % (what, s.text("run")))
            check(s.text("hook").startswith("#0  __jit_debug_register_code ()"),
                  "%s: GDB did not stop in the hook: %s" % (what, s.text("hook")))
        if d.name == "lldb" and mode.lldb_loses_stack:
            # LLDB's own loss (the control shows it): jitmap says there is no frame 1, and
            # still lists the good record.
            c = hostile_session(d, "hostile-%s-control" % mode.name, [mode.name], jitmap=False)
            mine, theirs = H.frame_names(s.text("bt")), H.frame_names(c.text("bt"))
            check(len(s.text("bt").splitlines()) == len(c.text("bt").splitlines()) and mine == theirs,
                  "%s: bt with jitmap %r, without %r" % (what, s.text("bt"), c.text("bt")))
            check("there is no frame 1" in s.failed("good"), "%s: %r" % (what, s.text("good")))
            check("record 5      at 0x" in s.text("list"), "%s: list: %s" % (what, s.text("list")))
            continue
        first = ["hostile_stop", "doomed_fn", "run_jit", "main"] if mode.name == "unregister" \
            else H.FRAMES
        check_bt(d, s, what, frames=first)
        if mode.name == "unregister":
            check_good(s, what + ", stop 1 in doomed_fn", record=6, rbx=6161)
        elif mode.good:
            check_good(s, what)
        else:
            check(want.search(s.failed("good")), "%s: info 1: %r" % (what, s.text("good")))
        if mode.stops == 2:
            check_bt(d, s, what + ", stop 2", "bt2")
            if mode.name == "change":  # the live stackmap was read again
                check_good(s, what + ", stop 2", "good2", record=7, rbx=4343)
            else:
                check_good(s, what + ", stop 2", "good2")
        if mode.name == "unregister":
            before, after = s.text("list"), s.text("list2")
            check("record 6 " in before and "doomed_fn" in before, "%s: stop 1 list: %s" % (what, before))
            check("record 6 " not in after and "doomed_fn" not in after and "record 5 " in after,
                  "%s: the unregistered entry is still listed: %s" % (what, after))


def hostile_together(d):
    """Every mode a process can hold at once (LLDB: but those where LLDB 16 loses the stack):
    every problem, the good values beside them; and the negative control: the same session
    without jitmap has none of jitmap's commands."""
    together = [m for m in H.TOGETHER if d.name == "gdb" or not H.BY_NAME[m].lldb_loses_stack]
    s = hostile_session(d, "hostile-together", together)
    text = s.all_text()
    for mode in together:
        want = H.problem_re(mode, s.output, together=True)
        check(want is None or want.search(text), "hostile together: no /%s/" % (want and want.pattern))
    check_good(s, "hostile together")
    check_bt(d, s, "hostile together")
    if d.name == "gdb":
        got = frame_locals(s.text("bt-full"), 1)
        check(got.get("loc0") == "4242" and
              got.get("loc1", "").startswith("<unavailable: register rdi not available: "
                                             "caller-saved"),
              "hostile together: bt full shows rbx and rdi unavailable, not a number: %s" % got)
    c = hostile_session(d, "hostile-together-control", together, jitmap=False)
    for tag in ("good", "status", "list"):
        check(d.undefined in c.failed(tag), "hostile control: %s without jitmap: %r" %
              (c.get(tag)["cmd"], c.text(tag)))
    if d.name == "gdb":
        check('Undefined info command: "stackmap -json 1"' in c.text("good"),
              "hostile control: %r" % c.text("good"))
    check_bt(d, c, "hostile control (the debugger's own bt, without jitmap)")
    if d.name == "gdb":
        check(frame_locals(c.text("bt-full"), 1) == {},
              "hostile control: bt full shows no locals for the JIT frame without jitmap: %s"
              % c.text("bt-full"))
