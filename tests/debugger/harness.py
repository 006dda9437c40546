"""One harness for the debugger tests: GDB and LLDB batch sessions whose command answers are
collected as JSON, the programs' truth lines, the checks of values, records and statepoints,
core files, and the runner. Used by tests/gdb-commands (gdb.commands, gdb.commands-core) and
tests/lldb (lldb.commands, lldb.parity); the scenarios both debuggers run are scenarios.py's.

A session is one batch run of a debugger over a command file:

    GDB:   gdb -batch -nx -x FILE [EXE [CORE] | -p PID]
    LLDB:  lldb -b -x -s FILE [-c CORE] [EXE]

FILE starts with the prelude (gdb_prelude.py / lldb_prelude.py: `jtdump TAG COMMAND...`),
then jitmap (GDB: BUILD/share/jitmap/jitmap.gdb when JITMAP_TEST_PLUGIN is set, and
`python import jitmap.gdb_commands`; LLDB: BUILD/share/jitmap/lldb/jitmap.py) unless
jitmap=False (the negative controls), then the test's commands, `jtdump` around those whose
answers are checked. A session that does not end in its time is a failure (a hang), and so
is a crash or a Python traceback in the debugger's output.

A test states its commands once for both debuggers through a Debugger (GDB, LLDB below):
jitmap's commands are spelled by jitmap's own command table (commands.TABLE[key].line), the
debugger's own commands (break, run, frame, a core at the stop) by the Debugger.
"""
import contextlib
import functools
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
GDB_PRELUDE = os.path.join(HERE, "gdb_prelude.py")
LLDB_PRELUDE = os.path.join(HERE, "lldb_prelude.py")
TIMEOUT = 180

sys.path.insert(0, SCRIPTS)
sys.path.insert(0, os.path.join(SOURCE, "tests", "hostile"))
sys.path.insert(0, os.path.join(SOURCE, "tests", "lib"))
import jsoncontract  # noqa: E402,F401  (the tests that import harness check JSON with it)
from jitmap.commands import TABLE  # noqa: E402  (debugger-neutral: imports no debugger)

BAD_OUTPUT = ("Traceback (most recent call last)", "Python Exception", "internal error",
              "internal-error", "PLEASE submit a bug report", "Stack dump:")

# The demo JIT's records: the truth line's key of each location, in order.
KEYS = {
    100: ["a", "b", "k42", "kminus1", "kpool", "slot"],
    101: ["s", "neg", "flag", "w", "kneg", "kzero"],
    102: ["sum", "prod", "slot", "a"],
    200: ["x", "y", "z", "kminus7"],
    201: ["x", "s", "y", "z", "t", "u", "v"],
}


class Fail(Exception):
    pass


class Skip(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


# -- Finding the debuggers --


def _answers(cmd):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60,
                           stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return b"pyok" in p.stdout


def find_gdb():
    """The gdb binary (GDB_EXEC or gdb), or None; GDB must have Python."""
    path = shutil.which(os.environ.get("GDB_EXEC") or "gdb")
    if path and _answers([path, "-batch", "-nx", "-ex", "python print('py' + 'ok')"]):
        return path
    return None


def find_lldb():
    """The lldb binary (LLDB_EXEC or lldb-16, lldb-19, lldb), or None; LLDB must have Python."""
    names = [os.environ["LLDB_EXEC"]] if os.environ.get("LLDB_EXEC") else []
    names += ["lldb-16", "lldb-19", "lldb-18", "lldb-17", "lldb-15", "lldb-14", "lldb"]
    for name in names:
        path = shutil.which(name)
        if path and _answers([path, "-b", "-x", "-o", "script print('py' + 'ok')"]):
            return path
    return None


def version(path):
    p = subprocess.run([path, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return p.stdout.decode("utf-8", "replace").strip().splitlines()[0]


class Env:
    """Paths of one build tree, the debuggers, and the work directory of a test run.
    JITMAP_TEST_PLUGIN=1: GDB sessions with jitmap load the reader plugin first (the build
    tree's jitmap.gdb), to check that the commands agree with its unwinder too."""

    def __init__(self, build, prefix):
        self.build = os.path.abspath(build)
        self.demo = os.path.join(self.build, "examples", "llvm-jit", "jitmap-demo-jit")
        self.handjit = os.path.join(self.build, "examples", "handjit", "jitmap-handjit")
        self.vm = os.path.join(self.build, "examples", "bytecode-vm", "jitmap-vm")
        self.hostile = os.path.join(self.build, "tests", "jitmap-hostile")
        self.aot = os.path.join(self.build, "tests", "gdb-commands-aot")
        self.dump = os.path.join(self.build, "jitmap-dump")
        self.library = os.path.join(self.build, "libjitmap.so")
        self.entry = os.path.join(self.build, "share", "jitmap", "lldb", "jitmap.py")
        self.plugin = None
        if os.environ.get("JITMAP_TEST_PLUGIN"):
            self.plugin = os.path.join(self.build, "share", "jitmap", "jitmap.gdb")
            if not os.path.exists(self.plugin):
                sys.exit("JITMAP_TEST_PLUGIN: %s not built" % self.plugin)
        self.work = tempfile.mkdtemp(prefix=prefix)

    def dir(self, name):
        d = os.path.join(self.work, name)
        os.makedirs(d, exist_ok=True)
        return d

    def need(self, path, what):
        if not os.path.exists(path):
            raise Skip("%s not built" % what)

    def need_demo(self):
        self.need(self.demo, "jitmap-demo-jit (needs llvm-config-14)")


# -- Sessions --


class Results:
    """The dumped answers of a session: {"tag", "cmd", "ok", "out", "err"} each."""

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

    def json(self, tag, output=None):
        """The one JSON object command TAG printed, checked against its schema (OUTPUT: the
        output's name, when the command's own spelling does not say, jsoncontract.output_of)."""
        r = self.get(tag)
        check(r["ok"], "%s: %s failed: %s" % (self.name, r["cmd"], (r["out"] + r["err"]).strip()))
        lines = [l for l in r["out"].splitlines() if l.startswith("{")]
        check(len(lines) == 1, "%s: %s printed %d JSON lines" % (self.name, r["cmd"], len(lines)))
        return jsoncontract.loads(lines[0], output or jsoncontract.output_of(r["cmd"]))

    def text(self, tag):
        r = self.get(tag)
        return r["out"] + r["err"]

    def failed(self, tag):
        """The error of a command that must fail (a Fail if it did not)."""
        r = self.get(tag)
        check(not r["ok"], "%s: %s did not fail: %s" % (self.name, r["cmd"], r["out"]))
        return r["err"]

    def all_text(self):
        return "\n".join(r["out"] + r["err"] for r in self.results)

    def frames_with_records(self, prefix, n):
        """The frame objects of the dumps PREFIX0..PREFIX(n-1) that are at a record."""
        objs = []
        for k in range(n):
            r = self.get("%s%d" % (prefix, k))
            lines = [l for l in r["out"].splitlines() if l.startswith("{")]
            if not r["ok"] or not lines:
                continue
            o = jsoncontract.loads(lines[0], jsoncontract.output_of(r["cmd"]))
            if o["record"] is not None:
                objs.append(o)
        return objs


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


class Debugger:
    """One debugger as the tests drive it. `name` is the command table's ("gdb", "lldb")."""

    name = None
    label = None
    undefined = None  # what the debugger says of a command it does not have

    def __init__(self, env, path):
        self.env = env
        self.path = path

    # -- Spelling: jitmap's commands by the table, the debugger's own here --

    def line(self, key, opts=(), args=()):
        return TABLE[key].line(self.name, opts, args)

    def dump(self, tag, line):
        return "jtdump %s %s" % (tag, line)

    def ask(self, tag, key, opts=(), args=()):
        """Dump jitmap's command KEY (of the table) with options OPTS and arguments ARGS."""
        return self.dump(tag, self.line(key, opts, args))

    # -- Running --

    def session(self, name, commands, exe=None, core=None, pid=None, jitmap=True,
                timeout=TIMEOUT, allow_fail_status=False, bad_output_ok=False, library=True,
                output=None):
        """Run the debugger in batch mode over `commands`; Results (with .status, .stdout,
        .stderr, and .output: the text of the file `output`, the program's). With `library`
        false, JITMAP_LIBRARY is not set: jitmap finds libjitmap by itself. With
        `bad_output_ok`, a crash's report is no failure (for the debugger's own crashes,
        compared with a session without jitmap)."""
        where = self.env.dir(name)
        results = os.path.join(where, "results.jsonl")
        if os.path.exists(results):
            os.unlink(results)
        script = os.path.join(where, "commands." + self.name)
        with open(script, "w") as f:
            f.write("\n".join(self.preamble(jitmap) + list(commands)) + "\n")
        # TMPDIR: LLDB's `stackmap load-images` writes its files there, removed with the session.
        e = dict(os.environ, JITMAP_TEST_RESULTS=results, JITMAP_LIBRARY=self.env.library,
                 JITMAP_TEST_SCRIPTS=SCRIPTS, TMPDIR=where)
        if not library:
            e.pop("JITMAP_LIBRARY")
        e.pop("JITMAP_DEBUG", None)
        status, out, err = _run(self.command(script, exe, core, pid), e, name, where, timeout)
        if not allow_fail_status:
            check(status in (0, 1), "%s: %s exited with status %d (a crash?); see %s" %
                  (name, self.name, status, where))
        for bad in BAD_OUTPUT:
            check(bad_output_ok or bad not in out + err, "%s: %s printed %r; see %s" %
                  (name, self.name, bad, where))
        r = Results(name, results, where)
        r.status, r.stdout, r.stderr = status, out, err
        r.output = read(output) if output else ""
        return r

    def core_at_stop(self, name, exe, commands, extra=()):
        """Run `exe` to a stop (`commands`), dump `extra` there, then write a core of the
        process where it stands. (live session, core path)."""
        raise NotImplementedError


class GDB(Debugger):
    name = "gdb"
    label = "GDB"
    undefined = "Undefined"

    def preamble(self, jitmap):
        lines = ["source %s" % GDB_PRELUDE]
        if jitmap and self.env.plugin:
            lines.append("source %s" % self.env.plugin)
        if jitmap:
            lines.append("python import jitmap.gdb_commands")
        return lines

    def command(self, script, exe, core, pid):
        cmd = [self.path, "-batch", "-nx", "-x", script]
        if pid:
            return cmd + ["-p", str(pid)]
        return cmd + ([exe] if exe else []) + ([core] if core else [])

    def break_at(self, function):
        return "break " + function

    def launch(self, args, out=None):
        return "run %s" % " ".join(args) + (" > %s" % out if out else "")

    def select(self, level):
        return "frame %d" % level

    def script(self, code):
        return "python " + code

    def core_at_stop(self, name, exe, commands, extra=()):
        core = os.path.join(self.env.dir(name), "stop.core")
        live = self.session(name, list(commands) + list(extra) + ["gcore " + core, "kill"], exe)
        check(os.path.exists(core), "%s: gcore wrote no core" % name)
        return live, core


class LLDB(Debugger):
    name = "lldb"
    label = "LLDB"
    undefined = "is not a valid command"

    @functools.cached_property
    def lldb_major(self):
        """The major version of the LLDB under test ("lldb version 22.1.8" -> 22; 0 unknown)."""
        m = re.search(r"lldb version (\d+)", version(self.path))
        return int(m.group(1)) if m else 0

    def preamble(self, jitmap):
        lines = ["settings set auto-confirm true", "command script import %s" % LLDB_PRELUDE]
        if jitmap:
            lines.append("command script import %s" % self.env.entry)
        return lines

    def command(self, script, exe, core, pid):
        cmd = [self.path, "-b", "-x", "-s", script]
        if pid:
            # The script attaches itself (session() with pid: see attach()).
            return cmd
        return cmd + (["-c", core] if core else []) + ([exe] if exe else [])

    def session(self, name, commands, exe=None, core=None, pid=None, **kw):
        if pid:
            commands = ["process attach -p %d" % pid] + list(commands) + ["process detach"]
        return Debugger.session(self, name, commands, exe, core, pid, **kw)

    def break_at(self, function):
        return "breakpoint set -n " + function

    def launch(self, args, out=None):
        if out:
            return "process launch -o %s -e %s -- %s" % (out, out + ".err", " ".join(args))
        return "process launch -- %s" % " ".join(args)

    def select(self, level):
        return "frame select %d" % level

    def script(self, code):
        return "script " + code

    def core_at_stop(self, name, exe, commands, extra=()):
        # LLDB 16 cannot write an ELF core: the prelude's jtabort has the kernel write one.
        d = self.env.dir(name)
        clear_cores(d)
        live = self.session(name, list(commands) + list(extra) + ["jtabort"], exe)
        return live, find_core(d)


def debugger(env, name):
    """GDB or LLDB of `env`, or None when that debugger (with Python) is not installed."""
    if name == "gdb":
        path = find_gdb()
        return GDB(env, path) if path else None
    path = find_lldb()
    return LLDB(env, path) if path else None


# -- Tools run outside a debugger --


def run_tool(cmd, stdin=None, stdout=subprocess.PIPE, env=None, timeout=300):
    """Run a tool: (its exit status, its standard output and error as text); its output ""
    when `stdout` is a file of the caller's."""
    p = subprocess.run(cmd, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                       timeout=timeout, env=env)
    out = p.stdout.decode("utf-8", "replace") if p.stdout is not None else ""
    return p.returncode, out, p.stderr.decode("utf-8", "replace")


@contextlib.contextmanager
def core_pattern(handler, args, sink):
    """The machine's core_pattern, for the block, set to run `handler` as `|DIR/h ARGS %P --
    SINK` (DIR: a short directory of its own, as the kernel keeps 128 bytes of the line;
    `sink` names it "{dir}", where its command writes the cores), and core_pipe_limit to 4,
    so that the kernel waits for the handler. Yields DIR; both settings are restored and DIR
    removed when the block ends (take the cores out of it before). Skip when core_pattern
    cannot be written, or the line would be too long."""
    pattern, limit = "/proc/sys/kernel/core_pattern", "/proc/sys/kernel/core_pipe_limit"
    old, old_limit = read(pattern).strip(), read(limit).strip()
    short = tempfile.mkdtemp(prefix="jmk", dir="/tmp")
    try:
        os.symlink(handler, os.path.join(short, "h"))
        line = "|%s/h %s%%P -- %s" % (short, args + " " if args else "",
                                       sink.format(dir=short))
        if len(line) >= 128:
            raise Skip("the handler's path is too long for core_pattern (128 bytes)")
        try:
            with open(pattern, "w") as f:
                f.write(line)
            with open(limit, "w") as f:
                f.write("4")
        except OSError as e:
            raise Skip("core_pattern cannot be written here: %s" % e.strerror) from None
        try:
            yield short
        finally:
            with open(pattern, "w") as f:
                f.write(old)
            with open(limit, "w") as f:
                f.write(old_limit)
    finally:
        shutil.rmtree(short, ignore_errors=True)


# -- Truth lines --


def read(path):
    if not os.path.exists(path):
        return ""
    with open(path) as f:
        return f.read()


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


def handjit_truth(output):
    return {int(t["id"]): t for t in truth(output, "jitmap-handjit:", "record")}


# -- Values, records, statepoints --


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
    """Location i of obj holds truth value t[keys[i]], for each i (as 64-bit patterns)."""
    locs = obj["locations"]
    check(len(locs) == len(keys), "%s: %d locations, want %d" % (what, len(locs), len(keys)))
    for i, k in enumerate(keys):
        want = as_int(t[k]) & ((1 << 64) - 1)
        got = loc_value(locs[i]) & ((1 << 64) - 1)
        check(got == want, "%s: location %d (%s, %s) = %d, truth %s=%s" %
              (what, i, locs[i]["kind"], locs[i]["where"], got, k, t[k]))


def check_record(obj, rid, frame, what):
    """obj is frame `frame` (None: any) at record `rid`, with every field of the JSON."""
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


def root_pairs(roots, frame=None):
    """(base, derived) of the `gc-roots --json` roots (of one frame)."""
    return sorted((r["base"]["value"], r["derived"]["value"]) for r in roots
                  if frame is None or r["frame"] == frame)


def truth_pairs(t):
    names = sorted({k.split(".")[0] for k in t if k.endswith(".base")})
    return sorted((as_int(t[n + ".base"]), as_int(t[n + ".derived"])) for n in names)


def record_300(objs, truths, what):
    """The demo's `--program statepoint --threads 2 --abort`: both worker threads' frames at
    record 300 (stackmap objects), each holding one of the truth lines."""
    at = [o for o in objs if (o.get("record") or {}).get("id") == 300]
    check(len(at) == 2, "%s: %d frames at record 300, want 2" % (what, len(at)))
    left = list(truths)  # each frame holds a truth line of its own
    for o in at:
        errs = []
        for t in left:
            try:
                check_statepoint(o, t, what + ": record 300")
                errs = []
                left.remove(t)
                break
            except Fail as e:
                errs.append(str(e))
        check(not errs, "%s: %s" % (what, errs[:1] or "no truth line left for this frame"))


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


def record_ids(listing):
    """The record IDs of a `list --json` answer, sorted."""
    return sorted(r["id"] for sm in listing["stackmaps"] for f in sm["functions"] for r in f["records"])


# -- Core files --


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


# -- Running the tests --


class Runner:
    """Runs the registered tests; prints one line each and a summary. Exit status: 0 when
    all pass, 1 when any fails, 77 (skipped) when none ran."""

    def __init__(self, label, only=()):
        self.label = label
        self.only = set(only)
        self.tests = []
        self.counts = {"pass": 0, "fail": 0, "skip": 0}

    def test(self, fn, name=None):
        self.tests.append((name or fn.__name__, fn))
        return fn

    def run(self, env):
        for name, fn in self.tests:
            if self.only and name not in self.only:
                continue
            try:
                fn()
            except Skip as e:
                self.counts["skip"] += 1
                print("SKIP %s: %s" % (name, e))
            except Fail as e:
                self.counts["fail"] += 1
                print("FAIL %s: %s" % (name, e))
            else:
                self.counts["pass"] += 1
                print("PASS %s" % name)
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
