#!/usr/bin/env python3
"""Three real runtimes as users run them, and every frame of the stack that jitmap shows against
the runtime's own stack (issue 34):

    tests/runtimes/test_runtimes.py BUILD_DIR cpython|beam|node

- cpython: Debian 13's CPython 3.13 (scripts/setup-python.sh) runs py_nested.py, six nested
  functions, the innermost asleep, once with `-X perf` (a perf map, a trampoline per Python
  call) and once with `-X perf_jit` (a jitdump with unwinding information for them);
- beam: Erlang/OTP 25's BEAM (erlang-base) runs jitmap_beam.erl with `+JPperf true`, a process
  spinning under outer/1, middle/1, inner/1 (its frames are on a scheduler thread's stack while
  that thread runs it: the test takes snapshots until the thread is in spin/2), and one waiting
  in `receive` under three functions (on no thread's stack);
- node: Node.js 20 runs node_deopt.js with --perf-basic-prof and
  --interpreted-frames-native-stack: a frame the deoptimizer rebuilt, whose return address is
  the first byte of the builtin InterpreterEnterAtNextBytecode, under the one that blocks.

The truth is the runtime's own: the program writes its stack as the interpreter sees it
(sys._current_frames, process_info current_stacktrace, V8's call sites), innermost first, before
it blocks. For `jitmap-stack --json PID`, `jitmap-stack PID` and GDB with jitmap (`thread apply
all bt`, typed with -ex, attached), on the thread that runs that stack:

- the runtime's frames, in order from the innermost, are those functions and no other (native
  frames between them are allowed; an unnamed frame counts as a wrong one);
- no frame is outside the process's executable mappings, in that thread or any other (a frame
  made of a stack word is);
- nothing after the last real frame: `_start` for the main thread of CPython and Node.js; for
  BEAM the frame of erts_beamasm:normal_exit/0, whose address every process's stack holds at its
  bottom (the process's own stack ends there: the scheduler's C stack is elsewhere);
- beam: none of the waiting process's functions in any thread.

GDB alone on the same process is the negative control: it names none of those functions (and
for CPython it does name python3.13's own C functions: the set-up lets it see the binary).

These tests fail today (docs: the notes of issue 34): they say exactly where. Each takes
10-30 s. JITMAP_RUNTIMES_KEEP=DIR keeps every tool's output there. Exits 77 (skipped) without
the runtime.
"""
import difflib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
import jsoncontract  # noqa: E402
import livestacks  # noqa: E402
from livestacks import exec_ranges, in_code as executable, perf_map  # noqa: E402
from tally import Tally  # noqa: E402

if len(sys.argv) != 3 or sys.argv[2] not in ("cpython", "beam", "node"):
    sys.exit("usage: test_runtimes.py BUILD_DIR cpython|beam|node")
BUILD = os.path.abspath(sys.argv[1])
RUNTIME = sys.argv[2]
STACK = os.path.join(BUILD, "jitmap-stack")
JITMAP_GDB = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")
KEEP = os.environ.get("JITMAP_RUNTIMES_KEEP")
T = Tally("test-runtimes-" + RUNTIME)
check = T.check
SECONDS = 120  # how long the program blocks: the test kills it long before


def keep(what, text):
    if KEEP:
        os.makedirs(KEEP, exist_ok=True)
        with open(os.path.join(KEEP, "%s-%s.txt" % (RUNTIME, what)), "w") as f:
            f.write(text)


class CPython:
    modes = ("-X perf", "-X perf_jit")
    script = os.path.join(HERE, "py_nested.py")

    def setup(self):
        self.python, why = livestacks.setup_cpython(TOP)
        return why

    def start(self, tmp, mode):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        return [self.python] + mode.split() + [self.script, os.path.join(tmp, "truth"),
                                               str(SECONDS)], env

    def truth(self, tmp, out):
        return [{name} for name in read_lines(os.path.join(tmp, "truth"))]

    def key(self, name):
        """py::f6:/path/py_nested.py -> f6; another file's -> py:other."""
        m = re.match(r"^py::(.+):(/[^:]*)$", name or "")
        if m:
            return m.group(1) if m.group(2) == self.script else "py:other"
        return "" if name in (None, "??") else None

    def last(self, frames):
        return "_start", frames[-1]["name"] == "_start"


class Beam:
    modes = ("+JPperf true",)

    def setup(self):
        for tool in ("erl", "erlc"):
            if not shutil.which(tool):
                return "no %s (erlang-base)" % tool
        return None

    def start(self, tmp, mode):
        subprocess.run(["erlc", "-o", tmp, os.path.join(HERE, "jitmap_beam.erl")], check=True,
                       timeout=120)
        return (["erl"] + mode.split() + ["-noshell", "-pa", tmp, "-run", "jitmap_beam",
                                          "start", os.path.join(tmp, "truth")], None)

    def truth(self, tmp, out):
        # Every process's stack holds normal_exit's address at its bottom: a process whose
        # first function returns goes on there.
        return ([{name} for name in read_lines(os.path.join(tmp, "truth"))] +
                [{"erts_beamasm:normal_exit/0"}])

    def key(self, name):
        """$jitmap_beam:spin/2 (the map) or jitmap_beam:spin/2 (the jitdump) -> the latter;
        BEAM's other code (global::process_main, a module's function) is its own key."""
        if name in (None, "??"):
            return ""
        name = name.lstrip("$")
        if re.match(r"^[a-z][\w@]*:[^ ]+/\d+", name) or name.startswith("global::"):
            return name
        return None

    def last(self, frames):
        return "erts_beamasm:normal_exit/0", False  # nothing may follow it


class Node:
    modes = ("--perf-basic-prof --interpreted-frames-native-stack",)
    script = os.path.join(HERE, "node_deopt.js")
    resume = "InterpreterEnterAtNextBytecode"

    def setup(self):
        return None if shutil.which("node") else "no node"

    def start(self, tmp, mode):
        return (["node", "--allow-natives-syntax"] + mode.split() +
                [self.script, os.path.join(tmp, "truth"), str(SECONDS)], None)

    def truth(self, tmp, out):
        check("outer-before turbofan" in out and "outer-after deoptimized" in out,
              "node optimized outer() and threw its code away while it ran: %s" % out.strip())
        # outer's frame is the one the deoptimizer rebuilt: its code is the builtin it goes on
        # in (naming it outer takes V8's frame layout, which no perf map gives).
        return [{n, self.resume} if n == "outer" else {n}
                for n in read_lines(os.path.join(tmp, "truth"))]

    def key(self, name):
        """JS:^block /path/node_deopt.js:4:15 -> block; the script itself -> <top-level>;
        another file's JavaScript -> js:other."""
        m = re.match(r"^JS:[~^*+]?(.*) (\S+):\d+:\d+$", name or "")
        if m:
            return (m.group(1) or "<top-level>") if m.group(2) == self.script else "js:other"
        if name and self.resume in name:
            return self.resume
        return "" if name in (None, "??") else None

    def last(self, frames):
        return "_start", frames[-1]["name"] == "_start"


R = {"cpython": CPython, "beam": Beam, "node": Node}[RUNTIME]()


def read_lines(path):
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]


def show(frames, limit=40):
    lines = ["    #%-3d %-18s %s%s" % (i, "0x%x" % f["pc"] if f["pc"] is not None else "-",
                                       f["name"] or "??",
                                       "   <- " + f["error"] if f.get("error") else "")
             for i, f in enumerate(frames)]
    if len(lines) > limit:
        lines = lines[:limit] + ["    ... %d frames more" % (len(lines) - limit)]
    return "\n".join(lines)


# --- each tool's frames, as [{"pc", "name", "error"}] per thread ---

def from_json(obj):
    return {t["tid"]: [{"pc": int(f["pc"], 16), "name": f["function"], "error": f.get("error")}
                       for f in t.get("frames", [])] for t in obj["threads"]}


STACK_THREAD = re.compile(r'^thread (\d+) .*:$', re.M)


def from_text(out):
    """jitmap-stack's text: `  #N  0xPC in NAME [JIT, ...] at FILE:LINE` or `in NAME (module)`;
    a last line `(unwinding stops here: WHY)`."""
    parts = STACK_THREAD.split(out.split("\nproblems:")[0])
    threads = {}
    for i in range(1, len(parts) - 1, 2):
        frames = []
        for line in parts[i + 1].splitlines():
            m = re.match(r"^\s+#(\d+)\s+0x([0-9a-f]+) in (.*)$", line)
            if m:
                rest = m.group(3)
                if rest.endswith(" [guess]"):  # reached by a guess: still the frame's name
                    rest = rest[:-len(" [guess]")]
                if " [JIT" in rest:
                    name = rest.split(" [JIT")[0]
                else:
                    name = re.sub(r" \([^()]*\)$", "", rest)
                    name = re.sub(r" \[(inlined|tail call)\]$", "", name)
                frames.append({"pc": int(m.group(2), 16), "name": None if name == "??" else name,
                               "error": None})
            m = re.match(r"^\s+\(unwinding stops here: (.*)\)$", line)
            if m and frames:
                frames[-1]["error"] = m.group(1)
        threads[int(parts[i])] = frames
    return threads


def from_gdb(out):
    threads = {}
    for tid in livestacks.bt_threads(out):
        frames, _ = livestacks.bt_thread(out, tid)
        threads[tid] = [{"pc": pc, "name": None if name == "??" else name, "error": None}
                        for _, pc, name in frames]
    return threads


# --- the judgement ---

def judge(tool, frames, truth, ranges):
    """The thread's frames against the truth: in order, nothing wrong, no junk, nothing after
    the last real frame."""
    text = show(frames)
    keys = [R.key(f["name"]) for f in frames]
    want = ["|".join(sorted(t)) for t in truth]
    first = next((i for i, k in enumerate(keys) if k in truth[0]), None)
    if first is None:
        check(False, "%s: the innermost function %s is not among the frames:\n%s" % (
            tool, want[0], text))
    else:
        # From there on, the frames in the runtime's code and the unnamed ones, against the
        # truth (up to the last one found, and a frame more when the truth goes on).
        named = [(i, k) for i, k in enumerate(keys) if i >= first and k is not None]
        a = [next((n for n, t in enumerate(truth) if k in t), "other") for _, k in named]
        found = [x for x, v in enumerate(a) if v != "other"]
        end = found[-1] + 1
        if a[found[-1]] != len(truth) - 1:
            end = min(len(a), end + 1)
        problems = []
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(
                None, a[:end], list(range(len(truth))), autojunk=False).get_opcodes():
            these = ", ".join("frame %d (%s)" % (named[x][0], named[x][1] or "??")
                              for x in range(i1, i2))
            if op == "replace":
                problems.append("%s where the runtime has %s" % (these, ", ".join(want[j1:j2])))
            elif op == "delete":
                problems.append("%s: not the runtime's" % these)
            elif op == "insert":
                problems.append("missing: %s" % ", ".join(want[j1:j2]))
        j = len(truth)
        stop = frames[-1].get("error")
        if stop and problems:
            problems.append("unwinding stopped at frame %d: %s" % (len(frames) - 1, stop))
        if check(not problems, "%s: the runtime's frames from frame %d are not %s:\n  %s\n%s" % (
                tool, first, " -> ".join(want), "\n  ".join(problems), text)):
            name, ends = R.last(frames)
            after = frames[named[j - 1][0] + 1:]
            if RUNTIME == "beam":
                check(not after, "%s: %d frames after %s, the bottom of the process's stack:"
                      "\n%s" % (tool, len(after), name, text))
            else:
                check(ends and after, "%s: the thread's frames end at %s, with nothing after "
                      "it:\n%s" % (tool, name, text))
    junk = [(i, f) for i, f in enumerate(frames) if not executable(ranges, f["pc"])]
    check(not junk, "%s: %d frames are not in executable memory (stack words, not code): %s\n%s"
          % (tool, len(junk), ", ".join("#%d 0x%x" % (i, f["pc"]) for i, f in junk[:8]) +
             (" ..." if len(junk) > 8 else ""), text))


def judge_all(tool, threads, ranges):
    """No thread of the process has a frame outside executable memory."""
    junk = {tid: [f for f in frames if not executable(ranges, f["pc"])]
            for tid, frames in threads.items()}
    junk = {tid: fs for tid, fs in junk.items() if fs}
    check(not junk, "%s: frames outside executable memory in %d of %d threads: %s" % (
        tool, len(junk), len(threads), "; ".join(
            "thread %d: %d (%s)" % (tid, len(fs), ", ".join("0x%x" % f["pc"] for f in fs[:4]))
            for tid, fs in sorted(junk.items()))))
    if RUNTIME == "beam":
        waiting = [(tid, f["name"]) for tid, frames in threads.items() for f in frames
                   if f["name"] and "jitmap_beam:w_" in f["name"]]
        check(not waiting, "%s: the process waiting in receive is on no thread's stack, yet "
              "%s" % (tool, waiting))


# --- the thread to look at ---

def spin_range(pid):
    """BEAM: the code of jitmap_beam:spin/2 (its body: not the prologue before it)."""
    for lo, hi, name in perf_map("/tmp/perf-%d.map" % pid):
        if name.lstrip("$") == "jitmap_beam:spin/2":
            return lo, hi
    return None


def pick(pid, threads):
    """The thread that runs the truth's stack: CPython's and Node.js's main thread; for BEAM
    the scheduler thread whose frame 0 is in spin/2 (None when this snapshot has none)."""
    if RUNTIME != "beam":
        return pid if pid in threads else None
    lo, hi = spin_range(pid) or (0, 0)
    return next((tid for tid, frames in sorted(threads.items())
                 if frames and lo <= (frames[0]["pc"] or 0) < hi), None)


def snapshot(what, take, pid, tries):
    """take() -> (output, {tid: frames}); BEAM's are taken again until its spinning process is
    on a thread (the scheduler is often between two slices, in C)."""
    for _ in range(tries):
        out, threads = take()
        tid = pick(pid, threads)
        if tid is not None:
            keep(what, out)
            return out, threads, tid
        time.sleep(0.05)
    keep(what, out)
    check(False, "%s: no snapshot of %d had the runtime's thread in its code:\n%s" % (
        what, tries, out[-3000:]))
    return out, threads, None


def run_stack(args):
    r = subprocess.run([STACK] + args, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "jitmap-stack %s: exit %d: %s" % (args, r.returncode, r.stderr))
    return r.stdout


def stack_json(pid):
    out = run_stack(["--json", str(pid)])
    return out, from_json(jsoncontract.loads(out, "jitmap-stack"))


def stack_text(pid):
    out = run_stack([str(pid)])
    return out, from_text(out)


def gdb_jitmap(pid):
    out = livestacks.gdb_run(["-p", str(pid), "-ex", "source " + JITMAP_GDB,
                              "-ex", "thread apply all bt"], check)
    return out, from_gdb(out)


def gdb_alone(pid):
    out = livestacks.gdb_run(["-p", str(pid), "-ex", "thread apply all bt"], check)
    return out, from_gdb(out)


def scenario(tmp, mode, control):
    label = re.sub(r"[^A-Za-z0-9_]+", "-", mode).strip("-")
    argv, env = R.start(tmp, mode)
    outfile = os.path.join(tmp, "out")
    p = subprocess.Popen(argv, cwd=tmp, env=env, stdout=open(outfile, "w"),
                         stderr=subprocess.STDOUT)
    pid = p.pid
    try:
        deadline = time.time() + 60
        while time.time() < deadline and p.poll() is None and \
                "ready\n" not in open(outfile).read():
            time.sleep(0.05)
        out = open(outfile).read()
        if "ready\n" not in out:
            check(False, "%s %s: the program did not get ready: %s" % (RUNTIME, mode, out))
            return
        truth = R.truth(tmp, out)
        print("test-runtimes-%s: %s: the runtime's stack: %s" % (
            RUNTIME, mode, " -> ".join("|".join(sorted(t)) for t in truth)), flush=True)
        # BEAM: about half of all snapshots find the scheduler in C between two slices
        tools = [("jitmap-stack --json", "json", stack_json, 40),
                 ("jitmap-stack", "text", stack_text, 40),
                 ("GDB with jitmap", "gdb-jitmap", gdb_jitmap, 10)]
        for tool, what, take, tries in tools:
            start = time.time()
            _, threads, tid = snapshot(label + "-" + what, lambda: take(pid), pid, tries)
            if tid is None:
                continue
            ranges = exec_ranges(pid)
            judge("%s (%s)" % (tool, mode), threads[tid], truth, ranges)
            judge_all("%s (%s)" % (tool, mode), threads, ranges)
            print("test-runtimes-%s: %s, %s: %.1f s" % (RUNTIME, mode, tool, time.time() - start),
                  flush=True)
        # The control: GDB alone names none of the runtime's functions (once: CPython's two
        # modes are the same to GDB alone).
        if not control:
            return
        alone, threads, tid = snapshot(label + "-gdb-alone", lambda: gdb_alone(pid), pid, 10)
        if tid is not None:
            frames = threads[tid]
            keys = [R.key(f["name"]) for f in frames]
            check(len(frames) > 3 and not any(k in t for k in keys for t in truth if k),
                  "GDB alone (%s) names none of the runtime's functions:\n%s" % (
                      mode, show(frames)))
            if RUNTIME == "cpython":
                check(any(f["name"] == "_PyEval_EvalFrameDefault" for f in frames),
                      "GDB alone sees python3.13's own symbols (_PyEval_EvalFrameDefault):\n%s"
                      % show(frames))
                if os.path.exists(R.python + ".debug"):
                    check(re.search(r" at \.\./Python/\S+\.[ch]:\d+", alone),
                          "GDB alone reads python3.13's debug file (source lines)")
    finally:
        p.kill()
        p.wait()
        for f in ("/tmp/perf-%d.map" % pid, "/tmp/jit-%d.dump" % pid):
            if os.path.exists(f):
                os.unlink(f)


def main():
    why = R.setup()
    if why:
        T.skip(why)
    if not os.path.exists(STACK) or not os.path.exists(JITMAP_GDB) or not shutil.which("gdb"):
        T.skip("needs %s, %s and gdb" % (STACK, JITMAP_GDB))
    start = time.time()
    tmp = tempfile.mkdtemp(prefix="jitmap-runtimes-%s-" % RUNTIME)
    try:
        for n, mode in enumerate(R.modes):
            sub = os.path.join(tmp, mode.replace(" ", "_").lstrip("-+"))
            os.mkdir(sub)
            scenario(sub, mode, n == 0)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("test-runtimes-%s: %.1f s" % (RUNTIME, time.time() - start), flush=True)
    return T.summary()


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
