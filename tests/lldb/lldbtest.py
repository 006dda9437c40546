"""Shared by test_lldb.py and test_parity.py: LLDB (and GDB) batch sessions whose command
results are collected as JSON, the programs' truth lines, and checks.

An LLDB session is `lldb -b -x -s FILE` with FILE holding:

    command script import tests/lldb/prelude.py      (defines `jtdump TAG COMMAND...`)
    command script import BUILD/share/jitmap/lldb/jitmap.py   (unless jitmap=False)
    ...the test's commands, `jtdump` around those whose answers are checked

run under a timeout (a hang is a failure), with no Python traceback or crash allowed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(os.path.dirname(HERE))
SCRIPTS = os.path.join(SOURCE, "gdb-scripts")
PRELUDE = os.path.join(HERE, "prelude.py")
TIMEOUT = 180

BAD_OUTPUT = ("Traceback (most recent call last)", "Python Exception", "internal error",
              "internal-error", "PLEASE submit a bug report", "Stack dump:")


class Fail(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


def find_lldb():
    """The lldb binary (LLDB_EXEC or lldb-16, lldb-19, lldb), or None; LLDB must have Python."""
    names = [os.environ["LLDB_EXEC"]] if os.environ.get("LLDB_EXEC") else []
    names += ["lldb-16", "lldb-19", "lldb-18", "lldb-17", "lldb-15", "lldb-14", "lldb"]
    for name in names:
        path = shutil.which(name)
        if not path:
            continue
        try:
            p = subprocess.run([path, "-b", "-x", "-o", "script print('py' + 'ok')"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if b"pyok" in p.stdout:
            return path
    return None


def lldb_version(lldb):
    p = subprocess.run([lldb, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.stdout.decode("utf-8", "replace").strip().splitlines()[0]


class Env:
    """Paths of one build tree and the work directory of a test run."""

    def __init__(self, build, prefix):
        self.build = os.path.abspath(build)
        self.demo = os.path.join(self.build, "examples", "llvm-jit", "jitmap-demo-jit")
        self.handjit = os.path.join(self.build, "examples", "handjit", "jitmap-handjit")
        self.hostile = os.path.join(self.build, "tests", "jitmap-hostile")
        self.aot = os.path.join(self.build, "tests", "gdb-commands-aot")
        self.library = os.path.join(self.build, "libjitmap.so")
        self.entry = os.path.join(self.build, "share", "jitmap", "lldb", "jitmap.py")
        self.work = tempfile.mkdtemp(prefix=prefix)
        self.lldb = find_lldb()
        self.gdb = shutil.which("gdb")

    def dir(self, name):
        d = os.path.join(self.work, name)
        os.makedirs(d, exist_ok=True)
        return d


class Results:
    """The dumped results of a session."""

    def __init__(self, name, path, where):
        self.name = name
        self.where = where
        self.results = []
        if os.path.exists(path):
            with open(path) as f:
                self.results = [json.loads(line) for line in f]

    def get(self, tag):
        for r in self.results:
            if r["tag"] == tag:
                return r
        raise Fail("%s: no result %r (the session stopped early?); see %s" % (self.name, tag, self.where))

    def json(self, tag):
        r = self.get(tag)
        check(r["ok"], "%s: %s failed: %s" % (self.name, r["cmd"], (r["out"] + r["err"]).strip()))
        lines = [l for l in r["out"].splitlines() if l.startswith("{")]
        check(len(lines) == 1, "%s: %s printed %d JSON lines" % (self.name, r["cmd"], len(lines)))
        return json.loads(lines[0])

    def text(self, tag):
        r = self.get(tag)
        return r["out"] + r["err"]


def _core_limit():
    import resource
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def _run(cmd, env, name, where, timeout):
    """Run a debugger in `where` (where the programs it starts dump their cores)."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                           timeout=timeout, cwd=where, stdin=subprocess.DEVNULL,
                           preexec_fn=_core_limit)
    except subprocess.TimeoutExpired:
        raise Fail("%s: the debugger did not finish in %d s (a hang); see %s" % (name, timeout, where))
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    with open(os.path.join(where, "debugger.out"), "w") as f:
        f.write(out + "\n--- stderr ---\n" + err)
    return p.returncode, out, err


def lldb_session(env, name, commands, exe, core=None, jitmap=True, timeout=TIMEOUT,
                 allow_fail_status=False, library=True, bad_output_ok=False):
    """Run LLDB in batch mode; return Results. `commands` are LLDB command lines. With
    `library` false, JITMAP_LIBRARY is not set: jitmap finds libjitmap by itself. With
    `bad_output_ok`, a crash's report is no failure (for LLDB's own crashes, compared
    with a session without jitmap)."""
    where = env.dir(name)
    results = os.path.join(where, "results.jsonl")
    if os.path.exists(results):
        os.unlink(results)
    lines = ["settings set auto-confirm true",
             "command script import %s" % PRELUDE]
    if jitmap:
        lines.append("command script import %s" % env.entry)
    lines += commands
    script = os.path.join(where, "commands.lldb")
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    cmd = [env.lldb, "-b", "-x", "-s", script]
    if core:
        cmd += ["-c", core]
    if exe:
        cmd += [exe]
    # TMPDIR: `stackmap load-images` writes its files there, removed with the session.
    e = dict(os.environ, JITMAP_TEST_RESULTS=results, JITMAP_LIBRARY=env.library, TMPDIR=where)
    if not library:
        e.pop("JITMAP_LIBRARY")
    e.pop("JITMAP_DEBUG", None)
    status, out, err = _run(cmd, e, name, where, timeout)
    both = out + err
    if not allow_fail_status:
        check(status in (0, 1), "%s: lldb exited with status %d (a crash?); see %s" % (name, status, where))
    for bad in BAD_OUTPUT:
        check(bad_output_ok or bad not in both, "%s: lldb printed %r; see %s" % (name, bad, where))
    r = Results(name, results, where)
    r.status, r.stdout, r.stderr = status, out, err
    return r


GDB_PRELUDE = r'''
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
        f.write(json.dumps({"tag": tag, "cmd": cmd, "ok": ok, "out": out, "err": ""}) + "\n")
end
python import jitmap.gdb_commands
'''


def gdb_session(env, name, commands, exe=None, core=None, pid=None, timeout=TIMEOUT):
    """Run GDB in batch mode with jitmap's GDB commands; `commands` are GDB command lines,
    `dump(TAG, CMD)` for those whose answers are collected."""
    where = env.dir(name)
    results = os.path.join(where, "results.jsonl")
    if os.path.exists(results):
        os.unlink(results)
    script = os.path.join(where, "commands.gdb")
    with open(script, "w") as f:
        f.write(GDB_PRELUDE % {"scripts": SCRIPTS, "results": results} + "\n".join(commands) + "\n")
    cmd = [env.gdb, "-batch", "-nx", "-x", script]
    if pid:
        cmd += ["-p", str(pid)]
    elif exe:
        cmd += [exe] + ([core] if core else [])
    e = dict(os.environ, JITMAP_LIBRARY=env.library)
    e.pop("JITMAP_DEBUG", None)
    status, out, err = _run(cmd, e, name, where, timeout)
    check(status in (0, 1), "%s: gdb exited with status %d; see %s" % (name, status, where))
    for bad in BAD_OUTPUT:
        check(bad not in out + err, "%s: gdb printed %r; see %s" % (name, bad, where))
    return Results(name, results, where)


def gdb_dump(tag, cmd):
    return "python _dump(%r, %r)" % (tag, cmd)


def dump(tag, cmd):
    return "jtdump %s %s" % (tag, cmd)


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


def read(path):
    if not os.path.exists(path):
        return ""
    with open(path) as f:
        return f.read()


def as_int(s):
    return int(s, 16) if s.startswith("0x") or s.startswith("-0x") else int(s)


def signed(u, size):
    bits = 8 * size
    return u - (1 << bits) if u >> (bits - 1) & 1 else u


def loc_value(loc):
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
        want = as_int(t[k]) & ((1 << 64) - 1)
        got = loc_value(locs[i]) & ((1 << 64) - 1)
        check(got == want, "%s: location %d (%s, %s) = %d, truth %s=%s" %
              (what, i, locs[i]["kind"], locs[i]["where"], got, k, t[k]))


def check_record(obj, rid, frame, what):
    check(obj["record"] is not None, "%s: no record: %s" % (what, obj.get("error")))
    check(obj["record"]["id"] == rid, "%s: record %d, want %d" % (what, obj["record"]["id"], rid))
    check(frame is None or obj["frame"] == frame, "%s: frame %d, want %d" % (what, obj["frame"], frame))
    for k in ("frame", "pc", "function", "record", "locations", "live_outs", "statepoint"):
        check(k in obj, "%s: JSON lacks %r" % (what, k))
    for k in ("id", "offset", "function_address", "stack_size"):
        check(k in obj["record"], "%s: record lacks %r" % (what, k))
    for loc in obj["locations"]:
        for k in ("index", "kind", "where", "size", "value"):
            check(k in loc, "%s: a location lacks %r" % (what, k))
    return obj


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


def abort_core(env, name, exe, args):
    """Run `exe --abort ARGS` in its own directory with cores enabled; (core, output)."""
    d = env.dir(name)
    out = os.path.join(d, "program.out")
    clear_cores(d)

    with open(out, "w") as f:
        p = subprocess.run([exe, "--abort"] + args, stdout=f, stderr=subprocess.STDOUT, cwd=d,
                           preexec_fn=_core_limit, timeout=TIMEOUT)
    check(p.returncode in (-6, 134), "%s: --abort exited with %d" % (name, p.returncode))
    return find_core(d), read(out)


def clear_cores(d):
    for c in os.listdir(d):
        if c == "core" or c.startswith("core."):
            os.unlink(os.path.join(d, c))


def drop_cores(top):
    """Delete the cores under `top` (a demo core is ~100 MB): those of passed tests."""
    for d, _, files in os.walk(top):
        for f in files:
            if f == "core" or f.startswith("core.") or f.endswith(".core"):
                os.unlink(os.path.join(d, f))


def find_core(d):
    """The core the kernel wrote in directory d (core_pattern "core" or "core.PID")."""
    cores = [c for c in os.listdir(d) if c == "core" or c.startswith("core.")]
    if not cores:
        raise Skip("no core file (core_pattern is %r)" % read("/proc/sys/kernel/core_pattern").strip())
    return os.path.join(d, cores[0])


class Runner:
    """Runs the registered tests; prints one line each and a summary."""

    def __init__(self, label, only=()):
        self.label = label
        self.only = set(only)
        self.tests = []
        self.counts = {"pass": 0, "fail": 0, "skip": 0}

    def test(self, fn):
        self.tests.append(fn)
        return fn

    def run(self, env):
        for fn in self.tests:
            if self.only and fn.__name__ not in self.only:
                continue
            try:
                fn()
            except Skip as e:
                self.counts["skip"] += 1
                print("SKIP %s: %s" % (fn.__name__, e))
            except Fail as e:
                self.counts["fail"] += 1
                print("FAIL %s: %s" % (fn.__name__, e))
            else:
                self.counts["pass"] += 1
                print("PASS %s" % fn.__name__)
                if not os.environ.get("JITMAP_TEST_KEEP"):
                    drop_cores(env.work)
            sys.stdout.flush()
        print("%s: %d passed, %d failed, %d skipped" % (
            self.label, self.counts["pass"], self.counts["fail"], self.counts["skip"]))
        if self.counts["fail"] or os.environ.get("JITMAP_TEST_KEEP"):
            print("%s: sessions kept in %s" % (self.label, env.work))
        else:
            shutil.rmtree(env.work, ignore_errors=True)
        if self.counts["fail"]:
            return 1
        return 0 if self.counts["pass"] else 77
