#!/usr/bin/env python3
"""test_commands.py: jitmap's GDB commands against the real JIT programs.

    tests/gdb-commands/test_commands.py BUILD_DIR [TEST...]

Drives `gdb -batch -nx` against jitmap-demo-jit (LLVM ORC and MCJIT), jitmap-handjit and the
hostile inferior (tests/hostile/hostile.c), and compares every value `info stackmap -json` shows with the
truth lines the programs print (`jitmap-demo: stackmap id=101 s=12 ...`): outer frames, every
frame of a 40-deep recursion, statepoints (deopt values, GC roots matched by value),
patchpoints, live, after `gcore` and from a core the program dumped itself (--abort). Also:
a negative control (the same session without jitmap: `info stackmap` must fail), every mode
of the hostile inferior (the problem named with its addresses, the good entry's real values
beside it; no traceback, no crash, no hang), `jitmap break`,
`$_stackmap`, `jitmap verify`, `info gc-roots`, the names API.

Checks the shape and the values, not the exact text. Prints one line per test and a summary;
exits 0 when all pass, 1 when any fails, 77 (skip) when gdb or the programs are missing.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join(SOURCE, "gdb-scripts")
TIMEOUT = 120

if len(sys.argv) < 2:
    sys.exit("usage: test_commands.py BUILD_DIR [TEST...]")
BUILD = os.path.abspath(sys.argv[1])
ONLY = set(sys.argv[2:])
DEMO = os.path.join(BUILD, "examples", "llvm-jit", "jitmap-demo-jit")
HANDJIT = os.path.join(BUILD, "examples", "handjit", "jitmap-handjit")
sys.path.insert(0, os.path.join(SOURCE, "tests", "hostile"))
import modes as H  # noqa: E402  (the hostile inferior's modes, shared with LLDB's test)

HOSTILE = os.path.join(BUILD, H.PROGRAM)
AOT = os.path.join(BUILD, "tests", "gdb-commands-aot")
DUMP = os.path.join(BUILD, "jitmap-dump")
LIBRARY = os.path.join(BUILD, "libjitmap.so")
GDB = shutil.which("gdb")

if GDB is None:
    print("gdb-commands: skipped: gdb not found")
    sys.exit(77)
if not os.path.exists(LIBRARY):
    print("gdb-commands: skipped: %s not built" % LIBRARY)
    sys.exit(77)

WORK = tempfile.mkdtemp(prefix="jitmap-gdb-commands-")
results = {"pass": 0, "fail": 0, "skip": 0}
failures = []


class Fail(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


# -- Running GDB --

PRELUDE = r'''
python
import json, sys
sys.path.insert(0, %(scripts)r)
RESULTS = %(results)r
def _dump(tag, cmd):
    try:
        out = gdb.execute(cmd, to_string=True)
        ok = True
    except gdb.error as e:
        out, ok = str(e), False
    with open(RESULTS, "a") as f:
        f.write(json.dumps({"tag": tag, "cmd": cmd, "ok": ok, "out": out}) + "\n")
end
'''

IMPORT = "python import jitmap.gdb_commands\n"
# JITMAP_TEST_PLUGIN=1: run every session with the reader plugin loaded first (jitmap.gdb of
# the build tree), to check that the commands agree with its unwinder too.
PLUGIN = None
if os.environ.get("JITMAP_TEST_PLUGIN"):
    PLUGIN = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")
    if not os.path.exists(PLUGIN):
        sys.exit("JITMAP_TEST_PLUGIN: %s not built" % PLUGIN)


class Session:
    """One gdb -batch run: a command file, the program's output, the dumped results."""

    def __init__(self, name, commands, args=(), core=None, exe=DEMO, jitmap=True):
        self.name = name
        self.dir = os.path.join(WORK, name)
        os.makedirs(self.dir, exist_ok=True)
        self.results_path = os.path.join(self.dir, "results.jsonl")
        self.prog_out = os.path.join(self.dir, "program.out")
        script = PRELUDE % {"scripts": SCRIPTS, "results": self.results_path}
        if jitmap and PLUGIN:
            script += "source %s\n" % PLUGIN
        if jitmap:
            script += IMPORT
        script += "\n".join(commands) + "\n"
        self.script_path = os.path.join(self.dir, "commands.gdb")
        with open(self.script_path, "w") as f:
            f.write(script)
        cmd = [GDB, "-batch", "-nx", "-x", self.script_path]
        if core:
            cmd += [exe, core]
        else:
            cmd += [exe]
        env = dict(os.environ, JITMAP_LIBRARY=LIBRARY)
        env.pop("JITMAP_DEBUG", None)
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                               timeout=TIMEOUT, cwd=self.dir)
        except subprocess.TimeoutExpired:
            raise Fail("%s: gdb did not finish in %d s (a hang)" % (name, TIMEOUT))
        self.status = p.returncode
        self.stdout = p.stdout.decode("utf-8", "replace")
        self.stderr = p.stderr.decode("utf-8", "replace")
        with open(os.path.join(self.dir, "gdb.out"), "w") as f:
            f.write(self.stdout + "\n--- stderr ---\n" + self.stderr)
        both = self.stdout + self.stderr
        check(self.status in (0, 1), "%s: gdb exited with status %d (a crash?); see %s" %
              (name, self.status, self.dir))
        for bad in ("Traceback (most recent call last)", "Python Exception",
                    "internal-error", "internal error"):
            check(bad not in both, "%s: gdb printed %r; see %s" % (name, bad, self.dir))
        self.results = []
        if os.path.exists(self.results_path):
            with open(self.results_path) as f:
                self.results = [json.loads(line) for line in f]

    def get(self, tag):
        for r in self.results:
            if r["tag"] == tag:
                return r
        raise Fail("%s: no result %r (the session stopped early?); see %s" % (self.name, tag, self.dir))

    def json(self, tag):
        r = self.get(tag)
        check(r["ok"], "%s: %s failed: %s" % (self.name, r["cmd"], r["out"].strip()))
        lines = [l for l in r["out"].splitlines() if l.startswith("{")]
        check(len(lines) == 1, "%s: %s printed %d JSON lines" % (self.name, r["cmd"], len(lines)))
        return json.loads(lines[0])

    def program_output(self):
        if not os.path.exists(self.prog_out):
            return ""
        with open(self.prog_out) as f:
            return f.read()


def dump(tag, cmd):
    return "python _dump(%r, %r)" % (tag, cmd)


def run_cmd(args, out):
    return "run %s > %s" % (" ".join(args), out)


# -- Truth lines --


def truth(output, prefix, word):
    """[{key: value}] for each line "PREFIX WORD k=v ..." (values as strings)."""
    out = []
    for line in output.splitlines():
        if line.startswith("%s %s " % (prefix, word)):
            out.append(dict(kv.split("=", 1) for kv in line.split()[2:] if "=" in kv))
    return out


def demo_truth(output, word, rid):
    for t in truth(output, "jitmap-demo:", word):
        if t.get("id") == str(rid):
            return t
    raise Fail("no truth line %s id=%s in the program's output" % (word, rid))


def as_int(s):
    return int(s, 16) if s.startswith("0x") or s.startswith("-0x") else int(s)


def signed(u, size):
    bits = 8 * size
    return u - (1 << bits) if u >> (bits - 1) & 1 else u


def loc_value(loc):
    """A location's value as the program prints it: signed for integers, the address for
    direct locations."""
    check(loc.get("value") is not None, "location %d (%s) unavailable: %s" %
          (loc["index"], loc["where"], loc.get("error")))
    v = loc["value"]
    if loc["kind"] == "direct":
        return v
    return signed(v, min(loc["size"], 8))


def compare(obj, keys, t, what):
    """Location i of obj holds truth value t[keys[i]], for each i."""
    locs = obj["locations"]
    check(len(locs) == len(keys), "%s: %d locations, want %d" % (what, len(locs), len(keys)))
    for i, k in enumerate(keys):
        want = as_int(t[k])
        got = loc_value(locs[i])
        if k in ("slot",) or t[k].startswith("0x"):
            want &= (1 << 64) - 1
            got &= (1 << 64) - 1
        check(got == want, "%s: location %d (%s, %s) = %d, truth %s=%s" %
              (what, i, locs[i]["kind"], locs[i]["where"], got, k, t[k]))


def check_record(obj, rid, frame, what):
    check(obj["record"] is not None, "%s: no record: %s" % (what, obj.get("error")))
    check(obj["record"]["id"] == rid, "%s: record %d, want %d" % (what, obj["record"]["id"], rid))
    check(obj["frame"] == frame, "%s: frame %d, want %d" % (what, obj["frame"], frame))
    for k in ("frame", "pc", "function", "record", "locations", "live_outs", "statepoint"):
        check(k in obj, "%s: JSON lacks %r" % (what, k))
    for k in ("id", "offset", "function_address", "stack_size"):
        check(k in obj["record"], "%s: record lacks %r" % (what, k))
    for loc in obj["locations"]:
        for k in ("index", "kind", "where", "size", "value"):
            check(k in loc, "%s: a location lacks %r" % (what, k))


KEYS = {
    100: ["a", "b", "k42", "kminus1", "kpool", "slot"],
    101: ["s", "neg", "flag", "w", "kneg", "kzero"],
    102: ["sum", "prod", "slot", "a"],
    200: ["x", "y", "z", "kminus7"],
    201: ["x", "s", "y", "z", "t", "u", "v"],
}


# -- Tests --

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


def need_demo():
    if not os.path.exists(DEMO):
        raise Skip("jitmap-demo-jit not built (needs llvm-config-14)")


def stackmaps_session(name, engine_args):
    out = os.path.join(WORK, name, "program.out")
    return Session(name, [
        "break jitmap_demo_safepoint",
        run_cmd(engine_args + ["--program", "stackmaps"], out),
        dump("100-f1", "info stackmap -json 1"),
        dump("100-f1-text", "info stackmap 1"),
        dump("100-f0", "info stackmap -json 0"),
        dump("100-f2", "info stackmap -json 2"),
        "frame 1",
        dump("100-sel", "info stackmap -json"),
        dump("100-v0", "print $_stackmap(0)"),
        dump("100-v1", "print $_stackmap(1)"),
        dump("100-id", "print $_stackmap_id()"),
        dump("100-raw", "info stackmap -json -raw"),
        "continue",
        dump("101-f1", "info stackmap -json 1"),
        dump("102-f2", "info stackmap -json 2"),
        dump("list", "info stackmaps"),
        dump("list-json", "info stackmaps -json"),
        dump("list-re", "info stackmaps -json inner$"),
        dump("verify", "jitmap verify -json"),
        dump("status", "jitmap status"),
    ])


def check_stackmaps(s, what):
    out = s.program_output()
    compare(check_and(s.json("100-f1"), 100, 1, what), KEYS[100], demo_truth(out, "stackmap", 100),
            what + " record 100, frame 1")
    compare(check_and(s.json("101-f1"), 101, 1, what), KEYS[101], demo_truth(out, "stackmap", 101),
            what + " record 101, frame 1")
    compare(check_and(s.json("102-f2"), 102, 2, what), KEYS[102], demo_truth(out, "stackmap", 102),
            what + " record 102, frame 2")
    # Frame 0 is the C safepoint, frame 2 run_stackmaps: no record there, and the reason.
    for tag in ("100-f0", "100-f2"):
        o = s.json(tag)
        check(o["record"] is None and o.get("error"), "%s: %s: a record where there is none" % (what, tag))
    sel = s.json("100-sel")
    check(sel["record"]["id"] == 100 and sel["frame"] == 1, what + ": the selected frame")
    t = demo_truth(out, "stackmap", 100)
    check(s.get("100-v0")["out"].strip().endswith("= %s" % t["a"]), what + ": $_stackmap(0)")
    check(s.get("100-v1")["out"].strip().endswith("= %s" % t["b"]), what + ": $_stackmap(1)")
    check(s.get("100-id")["out"].strip().endswith("= 100"), what + ": $_stackmap_id()")
    raw = s.json("100-raw")
    check(all("raw" in l and "dwarf_reg" in l["raw"] for l in raw["locations"]), what + ": -raw")
    text = s.get("100-f1-text")["out"]
    check(re.search(r"record 100 at 0x[0-9a-f]+ \(stackmaps_main\+\d+\)", text), what + ": text header")
    check(re.search(r"#1 +register +\w+ +size 4 +-3 ", text), what + ": text value of b")
    listing = s.json("list-json")
    names = sorted(f["name"] for sm in listing["stackmaps"] for f in sm["functions"])
    check(names == ["stackmaps_inner", "stackmaps_main"], what + ": info stackmaps functions %s" % names)
    ids = sorted(r["id"] for sm in listing["stackmaps"] for f in sm["functions"] for r in f["records"])
    check(ids == [100, 101, 102], what + ": info stackmaps records %s" % ids)
    only = s.json("list-re")
    check([f["name"] for sm in only["stackmaps"] for f in sm["functions"]] == ["stackmaps_inner"],
          what + ": info stackmaps REGEXP")
    v = s.json("verify")
    check(v["records_checked"] == 3, what + ": verify checked %d records" % v["records_checked"])
    check(v["problems"] == [], what + ": verify problems %s" % v["problems"])
    check("1 JIT entry" in s.get("status")["out"], what + ": jitmap status")


def check_and(obj, rid, frame, what):
    check_record(obj, rid, frame, what)
    return obj


@test
def orc_stackmaps():
    need_demo()
    check_stackmaps(stackmaps_session("orc-stackmaps", []), "orc stackmaps")


@test
def mcjit_stackmaps():
    need_demo()
    check_stackmaps(stackmaps_session("mcjit-stackmaps", ["--mcjit"]), "mcjit stackmaps")


def patchpoint_session(name, args):
    out = os.path.join(WORK, name, "program.out")
    return Session(name, [
        "break jitmap_demo_safepoint",
        run_cmd(args + ["--program", "patchpoint"], out),
        dump("200-f1", "info stackmap -json 1"),
        "continue",
        dump("201-f1", "info stackmap -json 1"),
        dump("201-f2", "info stackmap -json 2"),
        dump("201-f2-text", "info stackmap 2"),
    ])


def check_patchpoints(s, what):
    out = s.program_output()
    o = check_and(s.json("200-f1"), 200, 1, what)
    compare(o, KEYS[200], demo_truth(out, "patchpoint", 200), what + " record 200")
    check(o["record"]["match"] == "call", what + ": 200 matched by its call sequence")
    # The safepoint line says how far the record is from the return address.
    sp = [t for t in truth(out, "jitmap-demo:", "safepoint") if t["id"] == "200"][0]
    check(o["record"]["distance"] == int(sp["delta"]), what + ": distance %s, program says %s" %
          (o["record"]["distance"], sp["delta"]))
    check(int(o["record"]["pc"], 16) == int(sp["record-pc"], 16), what + ": record pc")
    check(o["live_outs"] and all("register" in l and "size" in l for l in o["live_outs"]),
          what + ": live-outs")
    # Frame 1 of the anyregcc stop is the all-registers trampoline: no record there.
    check(s.json("201-f1")["record"] is None, what + ": 201 frame 1")
    o = check_and(s.json("201-f2"), 201, 2, what)
    # Caller-saved registers in frame 2 are known because the trampoline saved them (CFI).
    compare(o, KEYS[201], demo_truth(out, "patchpoint", 201), what + " record 201")
    check("a patchpoint" in s.get("201-f2-text")["out"], what + ": text says patchpoint")


@test
def orc_patchpoints():
    need_demo()
    check_patchpoints(patchpoint_session("orc-patchpoint", []), "orc patchpoint")


@test
def mcjit_patchpoints():
    need_demo()
    check_patchpoints(patchpoint_session("mcjit-patchpoint", ["--mcjit"]), "mcjit patchpoint")


def gc_pairs(obj):
    return sorted((r["base"]["value"], r["derived"]["value"]) for r in obj["statepoint"]["gc_roots"])


def truth_pairs(t):
    names = sorted({k.split(".")[0] for k in t if k.endswith(".base")})
    return sorted((as_int(t[n + ".base"]), as_int(t[n + ".derived"])) for n in names)


def check_statepoint(obj, t, what):
    sp = obj["statepoint"]
    check(sp is not None, what + ": not decoded as a statepoint")
    check(sp["calling_convention"] == int(t["cc"]) and sp["flags"] == int(t["flags"]),
          what + ": cc/flags")
    check(len(sp["deopt"]) == int(t["ndeopt"]), what + ": %d deopt values" % len(sp["deopt"]))
    for i, loc in enumerate(sp["deopt"]):
        check(loc_value(loc) == as_int(t["d%d" % i]), what + ": deopt %d = %s, truth %s" %
              (i, loc_value(loc), t["d%d" % i]))
    got, want = gc_pairs(obj), truth_pairs(t)
    check(set(got) == set(want), what + ": gc roots %s, truth %s" %
          ([(hex(a), hex(b)) for a, b in got], [(hex(a), hex(b)) for a, b in want]))
    for r in sp["gc_roots"]:
        check(r["offset"] == r["derived"]["value"] - r["base"]["value"], what + ": offset")
    check(any(r["offset"] == 16 for r in sp["gc_roots"]), what + ": a derived pointer at +16")


def statepoint_session(name, args):
    out = os.path.join(WORK, name, "program.out")
    return Session(name, [
        "break jitmap_demo_safepoint",
        run_cmd(args + ["--program", "statepoint"], out),
        dump("300-f1", "info stackmap -json 1"),
        "frame 1",
        dump("300-roots", "info gc-roots -json"),
        "continue",
        dump("301-f1", "info stackmap -json 1"),
        dump("301-roots-all", "info gc-roots -all -json"),
        dump("301-roots-text", "info gc-roots -all"),
        dump("301-nosp", "info stackmap -json -no-statepoint 1"),
        "python import jitmap.names as n; n.name_deopt(300, ['d', 'seven', 'big'])",
        "python import jitmap.names as n; n.name_locations(301, {3: 'obj.base'})",
        dump("301-named", "info stackmap -json 1"),
    ])


def check_statepoints(s, what):
    out = s.program_output()
    o300 = check_and(s.json("300-f1"), 300, 1, what)
    check_statepoint(o300, demo_truth(out, "statepoint", 300), what + " 300")
    o301 = check_and(s.json("301-f1"), 301, 1, what)
    check_statepoint(o301, demo_truth(out, "statepoint", 301), what + " 301")
    roots = s.json("300-roots")
    check(sorted((r["base"]["value"], r["derived"]["value"]) for r in roots["roots"]) == gc_pairs(o300),
          what + ": info gc-roots matches the record")
    allr = s.json("301-roots-all")
    check(sorted((r["base"]["value"], r["derived"]["value"]) for r in allr["roots"]
                 if r["frame"] == 1) == gc_pairs(o301), what + ": info gc-roots -all")
    check(all(r["frame"] == 1 for r in allr["roots"]), what + ": roots only in JIT frame 1")
    check("offset" in s.get("301-roots-text")["out"], what + ": gc-roots text")
    check(s.json("301-nosp")["statepoint"] is None, what + ": -no-statepoint")
    named = s.json("301-named")
    check(named["locations"][3].get("name") == "obj.base", what + ": names API")


@test
def orc_statepoints():
    need_demo()
    check_statepoints(statepoint_session("orc-statepoint", []), "orc statepoint")


@test
def mcjit_statepoints():
    need_demo()
    check_statepoints(statepoint_session("mcjit-statepoint", ["--mcjit"]), "mcjit statepoint")


@test
def recursion_every_frame():
    need_demo()
    depth = 40
    out = os.path.join(WORK, "recursion", "program.out")
    cmds = ["break jitmap_demo_safepoint", run_cmd(["--program", "recursion", "--depth", str(depth)], out)]
    cmds += [dump("f%d" % k, "info stackmap -json %d" % k) for k in range(1, depth + 3)]
    cmds += [dump("bt", "bt")]
    s = Session("recursion", cmds)
    output = s.program_output()
    t400 = {int(t["n"]): t for t in truth(output, "jitmap-demo:", "recursion") if t["id"] == "400"}
    t401 = [t for t in truth(output, "jitmap-demo:", "recursion") if t["id"] == "401"][0]
    check(len(t400) == depth, "recursion: %d truth lines for 400" % len(t400))
    compare(check_and(s.json("f1"), 401, 1, "recursion"), ["n", "acc", "slot"], t401, "recursion frame 1")
    for k in range(2, depth + 2):
        n = k - 1
        compare(check_and(s.json("f%d" % k), 400, k, "recursion"), ["n", "acc", "tag", "slot"], t400[n],
                "recursion frame %d (n=%d)" % (k, n))
    last = s.json("f%d" % (depth + 2))
    check(last["record"] is None and last["function"] == "recursion_main",
          "recursion: frame %d (recursion_main) has no record" % (depth + 2))


@test
def gcore_same_values():
    need_demo()
    core = os.path.join(WORK, "gcore", "demo.core")
    out = os.path.join(WORK, "gcore", "program.out")
    live = Session("gcore", [
        "break jitmap_demo_safepoint",
        run_cmd(["--program", "statepoint"], out),
        "continue",
        dump("f1", "info stackmap -json 1"),
        dump("stack", "info stackmaps -json"),
        "gcore " + core,
        "kill",
    ])
    check(os.path.exists(core), "gcore: no core written")
    dead = Session("gcore-load", [
        dump("f1", "info stackmap -json 1"),
        dump("stack", "info stackmaps -json"),
        dump("roots", "info gc-roots -all -json"),
    ], core=core)
    a, b = live.json("f1"), dead.json("f1")
    check_record(b, 301, 1, "gcore")
    check(a["locations"] == b["locations"], "gcore: locations differ from the live session")
    check(a["statepoint"] == b["statepoint"], "gcore: statepoint differs from the live session")
    check(live.json("stack")["stackmaps"] == dead.json("stack")["stackmaps"], "gcore: info stackmaps differs")
    check_statepoint(b, demo_truth(live.program_output(), "statepoint", 301), "gcore 301")
    check(len(dead.json("roots")["roots"]) == 4, "gcore: info gc-roots -all")


def abort_core(name, args):
    """Run the demo with --abort in its own directory with cores enabled; return (core, output)."""
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    out = os.path.join(d, "program.out")

    def limits():
        import resource
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    with open(out, "w") as f:
        p = subprocess.run([DEMO, "--abort"] + args, stdout=f, stderr=subprocess.STDOUT, cwd=d,
                           preexec_fn=limits, timeout=TIMEOUT)
    check(p.returncode in (-6, 134), "%s: --abort exited with %d" % (name, p.returncode))
    cores = [c for c in os.listdir(d) if c == "core" or c.startswith("core.")]
    if not cores:
        with open("/proc/sys/kernel/core_pattern") as f:
            pattern = f.read().strip()
        raise Skip("no core file (core_pattern is %r)" % pattern)
    with open(out) as f:
        return os.path.join(d, cores[0]), f.read()


def frames_with_records(s, prefix, n):
    objs = []
    for k in range(n):
        r = s.get("%s%d" % (prefix, k))
        if not r["ok"]:
            continue
        o = json.loads([l for l in r["out"].splitlines() if l.startswith("{")][0])
        if o["record"] is not None:
            objs.append(o)
    return objs


@test
def abort_core_stackmaps():
    need_demo()
    core, output = abort_core("abort-stackmaps", ["--program", "stackmaps", "--abort-at", "2"])
    s = Session("abort-stackmaps-load", [dump("f%d" % k, "info stackmap -json %d" % k) for k in range(10)],
                core=core)
    objs = frames_with_records(s, "f", 10)
    check([o["record"]["id"] for o in objs] == [101, 102], "abort core: records %s on the stack" %
          [o["record"]["id"] for o in objs])
    compare(objs[0], KEYS[101], demo_truth(output, "stackmap", 101), "abort core record 101")
    compare(objs[1], KEYS[102], demo_truth(output, "stackmap", 102), "abort core record 102")


@test
def abort_core_statepoint_mcjit():
    need_demo()
    core, output = abort_core("abort-statepoint", ["--mcjit", "--program", "statepoint"])
    s = Session("abort-statepoint-load", [dump("f%d" % k, "info stackmap -json %d" % k) for k in range(10)],
                core=core)
    objs = frames_with_records(s, "f", 10)
    check([o["record"]["id"] for o in objs] == [300], "abort core: records on the stack")
    check_statepoint(objs[0], demo_truth(output, "statepoint", 300), "abort core 300")


def dump_core(core, *args):
    p = subprocess.run([DUMP] + list(args) + [core], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=TIMEOUT)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


@test
def jitmap_dump_cores():
    need_demo()
    for name, args, want in (("dump-orc", ["--program", "stackmaps"], [100, 102, 101]),
                             ("dump-mcjit", ["--mcjit", "--program", "statepoint"], [300, 301])):
        core, output = abort_core(name, args)
        rc, out, err = dump_core(core, "--format=json")
        check(rc == 0, "%s: jitmap-dump exit %d: %s" % (name, rc, err))
        obj = json.loads(out)
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
    if os.path.exists(HOSTILE):
        # A core whose entry list loops: the entries before the loop, and exit 1 with the reason.
        core = os.path.join(WORK, "dump-hostile", "hostile.core")
        Session("dump-hostile", ["break hostile_stop", "run cycle > /dev/null", "gcore " + core, "kill"],
                exe=HOSTILE)
        rc, out, err = dump_core(core)
        check(rc == 1 and "loops" in err, "hostile core: exit %d, %r" % (rc, err))
        check("record 5 at 0x" in out, "hostile core: the good entry")
    if os.path.exists(AOT):
        core = os.path.join(WORK, "dump-aot", "aot.core")
        Session("dump-aot", ["break aot_stop", "run", "gcore " + core, "kill"], exe=AOT)
        rc, out, err = dump_core(core)
        check(rc == 1 and "no __jit_debug_descriptor" in err, "aot core: exit %d, %r" % (rc, err))


@test
def negative_control():
    need_demo()
    out = os.path.join(WORK, "negative", "program.out")
    s = Session("negative", [
        "break jitmap_demo_safepoint",
        run_cmd(["--program", "stackmaps"], out),
        dump("f1", "info stackmap -json 1"),
        dump("gc", "info gc-roots"),
        dump("verify", "jitmap verify"),
    ], jitmap=False)
    for tag in ("f1", "gc", "verify"):
        r = s.get(tag)
        check(not r["ok"], "negative control: %s worked without jitmap" % r["cmd"])
        check("Undefined" in r["out"], "negative control: %s: %s" % (r["cmd"], r["out"]))


@test
def break_by_id():
    need_demo()
    for engine in ([], ["--mcjit"]):
        name = "break" + ("-mcjit" if engine else "")
        out = os.path.join(WORK, name, "program.out")
        s = Session(name, [
            dump("pending", "jitmap break 101 200"),
            run_cmd(engine + ["--program", "stackmaps"], out),
            dump("f0", "info stackmap -json"),
            dump("list", "jitmap break"),
            dump("bad", "jitmap break x"),
        ])
        check("not registered yet" in s.get("pending")["out"], name + ": pending message")
        o = check_and(s.json("f0"), 101, 0, name)
        check(o["record"]["match"] == "exact", name + ": frame 0 exact")
        compare(o, KEYS[101], demo_truth(s.program_output(), "stackmap", 101), name + " at the breakpoint")
        check(re.search(r"record 101: 0x[0-9a-f]+", s.get("list")["out"]), name + ": jitmap break list")
        check(not s.get("bad")["ok"] and "number" in s.get("bad")["out"], name + ": bad ID")


@test
def handjit_frame1():
    if not os.path.exists(HANDJIT):
        raise Skip("jitmap-handjit not built")
    out = os.path.join(WORK, "handjit", "program.out")
    s = Session("handjit", [
        "break jitmap_handjit_safepoint",
        "run > %s" % out,
        dump("f1", "info stackmap -json 1"),
        dump("f2", "info stackmap -json 2"),
        dump("list", "info stackmaps -json"),
        dump("status", "jitmap status"),
    ], exe=HANDJIT)
    o = check_and(s.json("f1"), 1002, 1, "handjit")
    t = [x for x in truth(s.program_output(), "jitmap-handjit:", "record") if x["id"] == "1002"][0]
    for i, loc in enumerate(o["locations"]):
        check(loc["value"] == int(t["local%d" % i]), "handjit: location %d = %s, truth %s" %
              (i, loc["value"], t["local%d" % i]))
    check(o["record"]["stack_size"] == int(t["stack_size"]), "handjit: stack size")
    if PLUGIN:
        # GDB alone cannot unwind the frameless handjit_inner; the reader plugin must. Whether
        # handjit_inner left rbx, r12 and rbp alone no CFI says (its 24-byte frame could hold
        # their saves), so the plugin gives them as "not saved" (LLDB's assembly profiling
        # proves it and gives the values: tests/lldb). The contract: each value is the truth
        # or unavailable with that reason, never a wrong number; the constants are known.
        o = check_and(s.json("f2"), 1001, 2, "handjit (plugin)")
        t = [x for x in truth(s.program_output(), "jitmap-handjit:", "record") if x["id"] == "1001"][0]
        for i, loc in enumerate(o["locations"]):
            right = loc["value"] == int(t["local%d" % i]) or (
                loc["value"] is None and "not saved in frame 2" in (loc.get("error") or "")
                and loc["kind"] in ("register", "direct", "indirect"))
            check(right, "handjit (plugin): frame 2 location %d = %s (%s), truth %s" % (
                i, loc["value"], loc.get("error"), t["local%d" % i]))
        check(all(loc["value"] == int(t["local%d" % i]) for i, loc in enumerate(o["locations"])
                  if loc["kind"].startswith("constant")), "handjit (plugin): frame 2 constants")
    check("libjitmap" in s.get("status")["out"], "handjit: the descriptor is libjitmap's")


@test
def aot_object():
    if not os.path.exists(AOT):
        raise Skip("gdb-commands-aot not built (needs llc-14)")
    out = os.path.join(WORK, "aot", "program.out")
    core = os.path.join(WORK, "aot", "aot.core")
    s = Session("aot", [
        "break aot_stop",
        "run > %s" % out,
        dump("f1", "info stackmap -json 1"),
        dump("list", "info stackmaps -json"),
        "gcore " + core,
    ], exe=AOT)
    o = check_and(s.json("f1"), 700, 1, "aot")
    compare(o, ["a", "b", "slot"], [t for t in truth(s.program_output(), "jitmap-aot:", "stackmap")][0],
            "aot record 700")
    srcs = [sm["source"] for sm in s.json("list")["stackmaps"]]
    check(srcs == [AOT], "aot: stackmaps from %s" % srcs)
    dead = Session("aot-core", [dump("f1", "info stackmap -json 1")], exe=AOT, core=core)
    check(dead.json("f1")["locations"] == o["locations"], "aot: the core shows other values")


LLI = "/usr/bin/lli-14"
RECORD_LESS = os.path.join(SOURCE, "tests", "fixtures", "ir", "record_less_caller.ll")


@test
def lli_function_without_records():
    """Issue 10, defect 2: under lli-14, `entry` (no records) calls `hot` (a statepoint). The
    frame in `entry` is not "in stackmap code" and is not attributed to `hot`: function sizes
    from the JIT image's symbols bound each stackmap function."""
    if not os.access(LLI, os.X_OK):
        raise Skip("lli-14 is not installed")
    for kind in ("mcjit", "orc-lazy"):
        cmds = [
            "set breakpoint pending on",
            "break getppid",
            "run -jit-kind=%s %s" % (kind, RECORD_LESS),
            dump("hot", "info stackmap -json 1"),
            dump("entry", "info stackmap 2"),
            dump("gc", "info gc-roots -all"),
        ]
        s = Session("lli-" + kind, cmds, exe=LLI)
        hot = s.json("hot")
        check(hot["function"] == "hot" and hot["record"]["id"] == 7,
              "lli %s: frame 1 is hot at record 7: %s" % (kind, hot))
        check([loc_value(l) for l in hot["statepoint"]["deopt"]] == [41, 4096],
              "lli %s: hot's deopt values: %s" % (kind, hot["statepoint"]["deopt"]))
        entry = s.get("entry")
        check(not entry["ok"] and "in entry" in entry["out"] and "hot" not in entry["out"],
              "lli %s: frame 2 must be entry's, with no record of hot: %s" % (kind, entry["out"]))
        gc = s.get("gc")["out"]
        check("(hot) is in stackmap code" not in gc and "(entry) is in stackmap code" not in gc,
              "lli %s: info gc-roots -all attributes entry's frame to hot: %s" % (kind, gc))
    # Negative control: the same stop without jitmap has no such command.
    bare = Session("lli-bare", ["set breakpoint pending on", "break getppid",
                                "run -jit-kind=mcjit %s" % RECORD_LESS,
                                dump("hot", "info stackmap -json 1")], exe=LLI, jitmap=False)
    check(not bare.get("hot")["ok"], "lli without jitmap: info stackmap answered")


DUPLICATE_ID = os.path.join(SOURCE, "tests", "fixtures", "ir", "duplicate_id.ll")


@test
def duplicate_record_ids():
    """Issue 10, defect 5: record ID 5 at two PCs of one function (LLVM's unroller duplicates
    stackmap intrinsics). `jitmap break 5` stops at both, each stop shows its own record
    (constants 0 and 1, values 4100 and 4101), $_stackmap_id() is 5 at both, `info stackmaps`
    lists both and `jitmap verify` finds nothing wrong with the duplicate."""
    if not os.access(LLI, os.X_OK):
        raise Skip("lli-14 is not installed")
    s = Session("duplicate-id", [
        "set breakpoint pending on",
        dump("break", "jitmap break 5"),
        "run -jit-kind=mcjit %s" % DUPLICATE_ID,
        dump("first", "info stackmap -json"),
        dump("id1", "print $_stackmap_id()"),
        dump("list", "jitmap break"),
        dump("all", "info stackmaps -json"),
        dump("verify", "jitmap verify -json"),
        "continue",
        dump("second", "info stackmap -json"),
        dump("id2", "print $_stackmap_id()"),
    ], exe=LLI)
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
    for tag in ("id1", "id2"):
        check(s.get(tag)["out"].strip().endswith("= 5"), "duplicate id: $_stackmap_id(): %s" %
              s.get(tag)["out"])
    listed = s.get("list")["out"]
    check(all(pc in listed for pc in pcs), "duplicate id: jitmap break lists %s: %s" % (pcs, listed))
    recs = [r for sm in s.json("all")["stackmaps"] for f in sm["functions"] for r in f["records"]
            if r["id"] == 5]
    check(sorted(r["pc"] for r in recs) == sorted(pcs), "duplicate id: info stackmaps: %s" % recs)
    check(s.json("verify")["problems"] == [], "duplicate id: verify: %s" % s.json("verify"))


HOSTILE_DUMPS = [
    ("status", "jitmap status"),
    ("stackmap", "info stackmap -json"),
    ("stackmap-text", "info stackmap"),
    ("list", "info stackmaps"),
    ("gc", "info gc-roots -all"),
    ("verify", "jitmap verify -json"),
    ("break", "jitmap break 5"),
    ("good", "info stackmap -json 1"),
    ("bt", "bt"),
]


def hostile_session(name, modes, jitmap=True):
    """One run of the hostile inferior with MODES, the answers dumped at each stop (tags with
    a "2" at the second)."""
    m = [H.BY_NAME[x] for x in modes]
    out = os.path.join(WORK, name, "program.out")
    cmds = ["break hostile_stop", run_cmd(modes, out)]
    if any(x.hook_stop for x in m):
        # GDB's error at the hook would end the command file: run through _dump.
        cmds[1:] = [dump("run", run_cmd(modes, out)), dump("hook", "bt"), "continue"]
    two = any(x.stops == 2 for x in m)
    # (`jitmap break 5` would stop the way to the second stop at record 5)
    cmds += [dump(t, c) for t, c in HOSTILE_DUMPS if not (two and t == "break")]
    if two:
        cmds += ["continue"] + [dump(t + "2", c) for t, c in HOSTILE_DUMPS]
    s = Session(name, cmds, exe=HOSTILE, jitmap=jitmap)
    s.output = s.program_output()
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
    """GDB's own bt (no reader here: it unwinds the JIT frame by its heuristics, which
    test_gdb_hostile.sh shows going wrong): the stop and the JIT function named, main last."""
    names = H.frame_names(s.get(tag)["out"])
    check(names[:2] == frames[:2] and names[-1:] == frames[-1:],
          "%s: bt %s, want %s ... %s" % (what, names, frames[:2], frames[-1]))


@test
def hostile_inferiors():
    """Every mode of the hostile inferior, one process each."""
    if not os.path.exists(HOSTILE):
        raise Skip("the hostile inferior was not built")
    for mode in H.MODES:
        s = hostile_session("hostile-" + mode.name, [mode.name])
        what = "hostile %s" % mode.name
        text = "\n".join(r["out"] for r in s.results)
        want = H.problem_re(mode.name, s.output)
        check(want is None or want.search(text), "%s: no /%s/ in the answers:\n%s" %
              (what, want and want.pattern, text[:3000]))
        if mode.hook_stop:  # GDB's own error for the garbage action_flag
            check("Unknown action_flag value in JIT descriptor!" in s.get("run")["out"],
                  "%s: GDB's error: %r" % (what, s.get("run")["out"]))
            check(s.get("hook")["out"].startswith("#0  __jit_debug_register_code ()"),
                  "%s: GDB did not stop in the hook: %s" % (what, s.get("hook")["out"]))
        first = ["hostile_stop", "doomed_fn", "run_jit", "main"] if mode.name == "unregister" \
            else H.FRAMES
        check_bt(s, what, frames=first)
        if mode.name == "unregister":
            check_good(s, what + ", stop 1 in doomed_fn", record=6, rbx=6161)
        elif mode.good:
            check_good(s, what)
        else:
            r = s.get("good")
            check(not r["ok"] and want.search(r["out"]), "%s: info stackmap 1: %r" % (what, r["out"]))
        if mode.stops == 2:
            check_bt(s, what + ", stop 2", "bt2")
            if mode.name == "change":  # the live stackmap was read again
                check_good(s, what + ", stop 2", "good2", record=7, rbx=4343)
            else:
                check_good(s, what + ", stop 2", "good2")
        if mode.name == "unregister":
            before, after = s.get("list")["out"], s.get("list2")["out"]
            check("record 6 " in before and "doomed_fn" in before, "%s: stop 1 list: %s" % (what, before))
            check("record 6 " not in after and "doomed_fn" not in after and "record 5 " in after,
                  "%s: the unregistered entry is still listed: %s" % (what, after))


@test
def hostile_together():
    """Every mode a process can hold at once: every problem, the good values beside them;
    and the negative control: the same session without jitmap has no `info stackmap`."""
    if not os.path.exists(HOSTILE):
        raise Skip("the hostile inferior was not built")
    s = hostile_session("hostile-together", H.TOGETHER)
    text = "\n".join(r["out"] for r in s.results)
    for mode in H.TOGETHER:
        want = H.problem_re(mode, s.output, together=True)
        check(want is None or want.search(text), "hostile together: no /%s/" % (want and want.pattern))
    check_good(s, "hostile together")
    check_bt(s, "hostile together")
    c = hostile_session("hostile-together-control", H.TOGETHER, jitmap=False)
    r = c.get("good")
    check(not r["ok"] and 'Undefined info command: "stackmap -json 1"' in r["out"],
          "hostile control: info stackmap without jitmap: %r" % r["out"])
    check_bt(c, "hostile control (GDB's own bt, without the reader)")


# -- Main --


def main():
    for fn in TESTS:
        if ONLY and fn.__name__ not in ONLY:
            continue
        try:
            fn()
        except Skip as e:
            results["skip"] += 1
            print("SKIP %s: %s" % (fn.__name__, e))
        except Fail as e:
            results["fail"] += 1
            failures.append(fn.__name__)
            print("FAIL %s: %s" % (fn.__name__, e))
        else:
            results["pass"] += 1
            print("PASS %s" % fn.__name__)
        sys.stdout.flush()
    print("gdb-commands: %(pass)d passed, %(fail)d failed, %(skip)d skipped" % results)
    if results["fail"]:
        print("gdb-commands: sessions kept in %s" % WORK)
        return 1
    if os.environ.get("JITMAP_TEST_KEEP"):
        print("gdb-commands: sessions kept in %s" % WORK)
    else:
        shutil.rmtree(WORK, ignore_errors=True)
    if results["pass"] == 0:
        return 77
    return 0


sys.exit(main())
