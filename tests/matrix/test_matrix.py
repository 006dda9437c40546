#!/usr/bin/env python3
"""The runtime matrix: one runtime, started as its users start it, under each condition (live,
core, container, deleted), read by each tool (jitmap-stack --json, GDB with jitmap, LLDB with
jitmap), judged frame by frame against the runtime's own account of its stack.

    tests/matrix/test_matrix.py BUILD_DIR RUNTIME     (RUNTIME: tests/matrix/rt_RUNTIME.py)

For each condition one process (or one core of it) is read by every tool. For each frame of the
truth: named (in order), guessed (named, but the tool says a guess reached it), missing; and
over the tool's frames: wrong (a name of the runtime that is not the truth's at that place, or
a frame where no code is). Any wrong frame fails the test; the rest is recorded.

JITMAP_MATRIX_TABLE=DIR writes DIR/RUNTIME.json (tests/matrix/table.py makes the markdown
table of docs/runtimes.md from them); JITMAP_MATRIX_KEEP=DIR keeps each tool's output there.
Exits 77 (skipped) without the runtime. The interface of a runtime module: README.md here.
"""
import importlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TESTS, "lib"))
import jsoncontract  # noqa: E402
import livestacks  # noqa: E402
from livestacks import exec_ranges, in_code  # noqa: E402
from tally import Tally  # noqa: E402

if len(sys.argv) != 3:
    sys.exit("usage: test_matrix.py BUILD_DIR RUNTIME")
BUILD = os.path.abspath(sys.argv[1])
NAME = sys.argv[2]
STACK = os.path.join(BUILD, "jitmap-stack")
HANDLER = os.path.join(BUILD, "jitmap-core-handler")
JITMAP_GDB = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")
LLDB_ENTRY = os.path.join(BUILD, "share", "jitmap", "lldb", "jitmap.py")
LIBRARY = os.path.join(BUILD, "libjitmap.so")
TABLE = os.environ.get("JITMAP_MATRIX_TABLE")
KEEP = os.environ.get("JITMAP_MATRIX_KEEP")
CONDITIONS = ("live", "core", "container", "deleted")
TOOLS = ("jitmap-stack", "gdb", "lldb")
T = Tally("matrix-" + NAME)
TIMEOUT = 300


def say(text):
    print("matrix-%s: %s" % (NAME, text), flush=True)


def keep(what, text):
    if KEEP:
        os.makedirs(KEEP, exist_ok=True)
        with open(os.path.join(KEEP, "%s-%s.txt" % (NAME, what)), "w") as f:
            f.write(text)


def run(argv, **kw):
    """(exit status, stdout + stderr) of a tool; a tool that hangs is killed (status None)."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, errors="replace",
                           timeout=kw.pop("timeout", TIMEOUT), **kw)
        return r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout or b""
        return None, out.decode(errors="replace") if isinstance(out, bytes) else out


# -- The process --


def private_tmp_script():
    """The container's shell: a tmpfs on /tmp, and then what of ours lies under /tmp (a
    checkout cloned there, its build and work folders) bound back in place, each opened before
    the tmpfs hides it (a path would name the tmpfs's; mount must not canonicalize
    /proc/self/fd/N into that path). Then the runtime: exec "$0" "$@"."""
    keep = []
    for d in sorted(os.path.realpath(d) for d in (os.path.dirname(os.path.dirname(HERE)), WORK)):
        if d.startswith("/tmp/") and not any(d.startswith(k + "/") for k in keep):
            keep.append(d)
    fds = range(3, 3 + len(keep))
    opens = "".join("exec %d<'%s' && " % (n, d) for n, d in zip(fds, keep))
    binds = "".join("mkdir -p '%s' && mount --no-canonicalize --bind /proc/self/fd/%d '%s' && "
                    "exec %d<&- && " % (d, n, d, n) for n, d in zip(fds, keep))
    return opens + "mount -t tmpfs tmpfs /tmp && " + binds + 'exec "$0" "$@"'


class Proc:
    """The runtime's program under one condition: its host PID, its output, its mappings."""

    def __init__(self, tmp, cond):
        self.tmp, self.cond = tmp, cond
        self.popen = self.pid = None
        self.exe_copy = None

    def start(self):
        exe = R.executable()
        if self.cond == "deleted":
            exe = self.copy_exe(exe)
        argv, env = R.start(self.tmp, exe)
        if self.cond == "container":
            argv = ["unshare", "--pid", "--mount", "--fork", "--mount-proc", "sh", "-c",
                    private_tmp_script()] + list(argv)
        self.out = os.path.join(self.tmp, "stdout")
        with open(self.out, "w") as f:
            self.popen = subprocess.Popen(argv, cwd=self.tmp, env=env, stdout=f,
                                          stderr=subprocess.STDOUT, start_new_session=True)
        self.pid = self.popen.pid
        deadline = time.time() + getattr(R, "ready_timeout", 60)
        while time.time() < deadline and self.popen.poll() is None:
            if self.cond == "container" and self.pid == self.popen.pid:
                self.pid = self.inner_pid() or self.pid
            if re.search(r"^ready$", self.stdout(), re.M):
                break
            time.sleep(0.05)
        else:
            return "the program did not get ready (%s): %s" % (
                "exit %s" % self.popen.poll(), self.stdout()[-1500:])
        if self.cond == "container" and self.pid == self.popen.pid:
            return "no process inside the container"
        self.init = self.pid
        if hasattr(R, "target"):  # a process the program started (PostgreSQL's backend)
            nspid = R.target(self.stdout())
            self.pid = self.host_pid(nspid) if nspid else None
            if not self.pid:
                return "no target process (%s)" % nspid
        if hasattr(R, "prepare"):
            R.prepare(self.pid, self.tmp)
        if self.exe_copy:
            os.unlink(self.exe_copy)
            check(os.readlink("/proc/%d/exe" % self.pid).endswith(" (deleted)"),
                  "deleted: /proc/PID/exe says the executable is deleted")
        self.ranges = exec_ranges(self.pid)
        return None

    def copy_exe(self, exe):
        """The executable copied, in a tree that mirrors its own (DIR/bin/NAME with links to
        DIR's other entries: the JVM's launcher finds its lib/ there, python3.13 its library;
        and to the files of bin/ the runtime names in `beside`)."""
        real = os.path.realpath(exe)
        bindir = os.path.dirname(real)
        top = os.path.dirname(bindir)
        mirror = os.path.join(self.tmp, "rt")
        os.makedirs(os.path.join(mirror, os.path.basename(bindir)))
        for entry in os.listdir(top):
            if entry != os.path.basename(bindir):
                os.symlink(os.path.join(top, entry), os.path.join(mirror, entry))
        self.exe_copy = os.path.join(mirror, os.path.basename(bindir), os.path.basename(real))
        shutil.copy2(real, self.exe_copy)
        for entry in getattr(R, "beside", ()):  # programs the executable starts from its dir
            os.symlink(os.path.join(bindir, entry),
                       os.path.join(mirror, os.path.basename(bindir), entry))
        return self.exe_copy

    def host_pid(self, nspid):
        """The PID here of the program's process `nspid` (its own namespace's number)."""
        if self.cond != "container":
            return nspid
        ns = os.readlink("/proc/%d/ns/pid" % self.init)
        for entry in os.listdir("/proc"):
            try:
                if not entry.isdigit() or os.readlink("/proc/%s/ns/pid" % entry) != ns:
                    continue
                with open("/proc/%s/status" % entry) as f:
                    for line in f:
                        if line.startswith("NSpid:") and int(line.split()[-1]) == nspid:
                            return int(entry)
            except OSError:
                continue
        return None

    def inner_pid(self):
        try:
            with open("/proc/%d/task/%d/children" % (self.popen.pid, self.popen.pid)) as f:
                kids = f.read().split()
            return int(kids[0]) if kids else None
        except OSError:
            return None

    def stdout(self):
        with open(self.out, errors="replace") as f:
            return f.read()

    def stop(self):
        pids = {self.pid, getattr(self, "init", None), self.popen.pid if self.popen else None}
        for pid in pids - {None}:
            try:
                os.kill(pid, signal.SIGKILL)   # a PID namespace's init ignores SIGTERM
            except ProcessLookupError:
                pass
        if self.popen:
            try:
                os.killpg(self.popen.pid, signal.SIGKILL)  # what the program started
            except ProcessLookupError:
                pass
            self.popen.wait()
        if self.cond != "container" and self.pid:
            for f in ("/tmp/perf-%d.map" % self.pid, "/tmp/jit-%d.dump" % self.pid):
                if os.path.exists(f):
                    os.unlink(f)


# -- Each tool's frames: {tid: [{"pc", "name", "guess"}]} --


def from_json(text):
    obj = jsoncontract.loads(text, "jitmap-stack")
    return {t["tid"]: [{"pc": int(f["pc"], 16), "name": f["function"], "guess": f.get("guess")}
                       for f in t.get("frames", [])] for t in obj["threads"]}


# The frame's name: up to its argument list, the last " (" of the line (livestacks.BT_LINE's
# rule: YJIT's "block (2 levels) in f", HotSpot's "StubRoutines (1) ()")
GDB_FRAME = re.compile(r"^#(\d+)\s+(?:0x([0-9a-f]+) in )?(.+) \(")


def from_gdb(text):
    threads = {}
    for tid, body in livestacks.bt_threads(text).items():
        frames = []
        for line in body.splitlines():
            m = GDB_FRAME.match(line)
            if m:
                name = m.group(3)
                frames.append({"pc": int(m.group(2), 16) if m.group(2) else None,
                               "name": None if name == "??" else name,
                               "guess": "guess" if "[guess]" in line else None})
        threads[tid] = frames
    return threads


LLDB_FRAME = re.compile(r"^\s*frame #(\d+): 0x([0-9a-f]+)(?: (.*))?$")


def from_lldb(text):
    """`stackmap bt` after each `script lldb.process.SetSelectedThreadByID(TID)`."""
    threads, frames = {}, None
    for line in text.splitlines():
        m = re.match(r"^\(lldb\) script lldb\.process\.SetSelectedThreadByID\((\d+)\)$", line)
        if m:
            frames = threads[int(m.group(1))] = []
            continue
        m = LLDB_FRAME.match(line)
        if m and frames is not None:
            rest = (m.group(3) or "").strip()
            guess = "guess" if "[guess]" in rest else None
            name = re.split(r", record |, no record| \[guess\]| \[JIT", rest)[0].strip()
            frames.append({"pc": int(m.group(2), 16), "name": name if name not in ("", "??")
                           else None, "guess": guess})
        elif re.match(r"^error: jitmap", line) and frames is not None:
            raise ValueError(line)
    return threads


def tool_argv(tool, target, tids=()):
    """How each tool is typed: target is ("pid", PID) or ("core", CORE, EXE); LLDB's `stackmap
    bt` is asked of threads `tids` alone (each costs LLDB seconds)."""
    if tool == "jitmap-stack":
        return [STACK, "--json", target[1]]
    if tool == "gdb":
        where = ["-p", target[1]] if target[0] == "pid" else [target[2], target[1]]
        return ["gdb", "-nx", "-batch"] + where + ["-ex", "source " + JITMAP_GDB,
                                                   "-ex", "thread apply all bt"]
    where = ["-p", target[1]] if target[0] == "pid" else [target[2], "-c", target[1]]
    argv = [LLDB, "-b", "--no-lldbinit"] + where + ["-o", "command script import " + LLDB_ENTRY]
    for tid in tids:
        # The thread selected by a script, then `stackmap bt` typed (a command run from
        # inside another command would keep the outer one's thread).
        argv += ["-o", "script lldb.process.SetSelectedThreadByID(%d)" % tid,
                 "-o", "stackmap bt"]
    return argv


def read_with(tool, target, label, tids=()):
    start = time.time()
    env = dict(os.environ, JITMAP_LIBRARY=LIBRARY)
    rc, out = run(tool_argv(tool, target, tids), env=env)
    keep("%s-%s" % (label, tool), out)
    took = time.time() - start
    if rc is None:
        return None, "%s timed out after %d s" % (tool, TIMEOUT), took
    if re.search(r"Python Exception|Traceback \(most recent|jitmap: internal error|"
                 r"jitmap: cannot load libjitmap", out):
        return None, "%s: a Python exception:\n%s" % (tool, out[-2000:]), took
    try:
        threads = {"jitmap-stack": from_json, "gdb": from_gdb, "lldb": from_lldb}[tool](
            out if tool != "jitmap-stack" else out[:out.rfind("}") + 1])
    except (ValueError, KeyError) as e:
        return None, "%s: exit %s, output not read (%s): %s" % (tool, rc, e, out[-1500:]), took
    if not threads:
        return None, "%s: exit %s, no thread in its output: %s" % (tool, rc, out[-1500:]), took
    return threads, None, took


# -- The judgement --


def matches(key, want):
    return bool(key) and key in want


def align(keys, truth):
    """The longest common subsequence of the tool's keys and the truth: [(i, j)]."""
    n, m = len(keys), len(truth)
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best[i][j] = (best[i + 1][j + 1] + 1 if matches(keys[i], truth[j])
                          else max(best[i + 1][j], best[i][j + 1]))
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if matches(keys[i], truth[j]) and best[i][j] == best[i + 1][j + 1] + 1:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def judge(frames, truth, ranges):
    """One thread's frames against one stack of the truth: (counts, notes)."""
    kept = [(n, f, R.key(f["name"])) for n, f in enumerate(frames)]
    kept = [(n, f, k) for n, f, k in kept if k is not None]
    pairs = align([k for _, _, k in kept], truth)
    got = dict(pairs)
    counts = {"named": 0, "guessed": 0, "missing": 0, "wrong": 0, "truth": len(truth)}
    notes = []
    for i, j in pairs:
        counts["guessed" if kept[i][1]["guess"] else "named"] += 1
    counts["missing"] = len(truth) - len(pairs)
    for i, (n, f, k) in enumerate(kept):
        if k and i not in got:
            counts["wrong"] += 1
            notes.append("frame #%d %s (%s) is not the runtime's frame there" % (
                n, f["name"], k))
    for n, f in enumerate(frames):
        if not in_code(ranges, f["pc"]):
            counts["wrong"] += 1
            notes.append("frame #%d at 0x%x (%s) is where no code is" % (
                n, f["pc"], f["name"] or "??"))
    return counts, notes


def control(frames, stack, ranges, what):
    """The negative control: the same frames against the truth with its two innermost named
    frames swapped count a wrong frame (the judgement can fail)."""
    kept = [k for k in (R.key(f["name"]) for f in frames) if k is not None]
    named = sorted(j for _, j in align(kept, stack))
    if len(named) < 2 or stack[named[0]] & stack[named[1]]:
        return
    swapped = list(stack)
    swapped[named[0]], swapped[named[1]] = stack[named[1]], stack[named[0]]
    counts, _ = judge(frames, swapped, ranges)
    check(counts["wrong"] > 0, "%s: the control (two frames of the truth swapped) counts a "
          "wrong frame" % what)


def score(frames, stack):
    """How many frames of this stack of the truth the thread's frames match, in order."""
    return len(align([k for k in (R.key(f["name"]) for f in frames) if k is not None], stack))


def best_thread(threads, stack, taken=()):
    """The thread, of those not `taken`, whose frames match most of this stack of the truth
    (the lowest ID of equals), or None when none matches any."""
    best = (0, None)
    for tid, frames in sorted(threads.items()):
        if tid not in taken and score(frames, stack) > best[0]:
            best = (score(frames, stack), tid)
    return best[1]


def assign(threads, truth):
    """Each stack of the truth's thread: [tid or None], one thread for one stack at most. The
    stack matched best chooses first: a thread of which a snapshot lost frames (the core of a
    thread that was between two states) is judged against its own stack, not lent to another
    whose innermost frame (Thread::Queue#pop) it shares, which would make every other frame
    of that one wrong."""
    order = sorted(range(len(truth)), key=lambda n: -max(
        [score(f, truth[n]) for f in threads.values()] or [0]))
    tids, taken = [None] * len(truth), set()
    for n in order:
        tids[n] = best_thread(threads, truth[n], taken)
        if tids[n] is not None:
            taken.add(tids[n])
    return tids


def show(frames, limit=60):
    lines = ["    #%-3d %-18s %s%s" % (n, "0x%x" % f["pc"] if f["pc"] is not None else "-",
                                       f["name"] or "??", " [guess]" if f["guess"] else "")
             for n, f in enumerate(frames[:limit])]
    if len(frames) > limit:
        lines.append("    ... %d frames more" % (len(frames) - limit))
    return "\n".join(lines)


def check(cond, what):
    return T.check(cond, what)


def condition(cond, cells):
    tmp = os.path.join(WORK, cond)
    os.makedirs(tmp)
    p = Proc(tmp, cond)
    start = time.time()
    try:
        why = p.start()
        if why:
            check(False, "%s: %s" % (cond, why))
            return
        truth = R.truth(tmp, p.stdout())
        say("%s: the runtime's stack%s: %s" % (cond, "s" if len(truth) > 1 else "", " | ".join(
            " -> ".join("/".join(sorted(f)) if isinstance(f, (set, frozenset)) else f
                        for f in stack) for stack in truth)))
        check(truth and all(truth), "%s: the runtime gave its stack" % cond)
        truth = [[f if isinstance(f, (set, frozenset)) else {f} for f in s] for s in truth]
        if cond == "core":
            target = make_core(p, truth)
            if target is None:
                return
        else:
            target = ("pid", str(p.pid))
        seen = set()
        for tool in TOOLS:
            cell = {"condition": cond, "tool": tool}
            cells.append(cell)
            if tool == "lldb" and not LLDB:
                cell["skipped"] = "no lldb with Python"
                continue
            # LLDB reads the threads where the other tools found the truth (or the main one)
            for _ in range(getattr(R, "tries", 1) if target[0] == "pid" else 1):
                threads, err, took = read_with(tool, target, cond,
                                               sorted(seen or {p.pid}) if tool == "lldb" else ())
                # a runtime whose frames are on a thread's stack only while it runs them
                # (BEAM's scheduler) is read again until a snapshot finds them there
                if err or any(best_thread(threads, stack) is not None for stack in truth):
                    break
            cell["seconds"] = round(took, 1)
            if err:
                cell["wrong"] = 1
                cell["error"] = err
                check(False, "%s, %s: %s" % (cond, tool, err))
                continue
            total = {"named": 0, "guessed": 0, "missing": 0, "wrong": 0, "truth": 0}
            for n, (stack, tid) in enumerate(zip(truth, assign(threads, truth))):
                frames = threads.get(tid, [])
                if tid is not None:
                    seen.add(tid)
                counts, notes = judge(frames, stack, p.ranges)
                for k in total:
                    total[k] += counts[k]
                if notes:
                    cell.setdefault("notes", []).extend(notes)
                check(not counts["wrong"], "%s, %s, stack %d (thread %s): %d wrong:\n  %s\n%s"
                      % (cond, tool, n, tid, counts["wrong"], "\n  ".join(notes), show(frames)))
                control(frames, stack, p.ranges, "%s, %s, stack %d" % (cond, tool, n))
            cell.update(total)
            say("%s, %s: %d of %d named, %d guessed, %d missing, %d wrong (%.1f s)" % (
                cond, tool, total["named"], total["truth"], total["guessed"], total["missing"],
                total["wrong"], took))
    finally:
        p.stop()
        say("%s: %.1f s" % (cond, time.time() - start))


def make_core(p, truth):
    """The kernel simulated: the process held while gcore's core streams through
    jitmap-core-handler PID, which adds the process's perf maps and jitdumps to it."""
    exe = os.readlink("/proc/%d/exe" % p.pid)
    os.kill(p.pid, signal.SIGSTOP)
    for _ in range(getattr(R, "tries", 1) - 1):
        # BEAM: held where a thread runs the truth's code (jitmap-stack chooses the moment;
        # the core is judged like any other)
        threads, err, _ = read_with("jitmap-stack", ("pid", str(p.pid)), "core-choice")
        if err or any(best_thread(threads, stack) is not None for stack in truth):
            break
        os.kill(p.pid, signal.SIGCONT)
        time.sleep(0.05)
        os.kill(p.pid, signal.SIGSTOP)
    g = os.path.join(p.tmp, "gcore")
    rc, out = run(["gcore", "-o", g, str(p.pid)])
    g = "%s.%d" % (g, p.pid)
    if not check(os.path.exists(g), "core: gcore wrote a core: %s" % out[-500:]):
        return None
    core = os.path.join(p.tmp, "core")
    with open(g, "rb") as i, open(core, "wb") as o:
        r = subprocess.run([HANDLER, str(p.pid)], stdin=i, stdout=o, stderr=subprocess.PIPE,
                           text=True, timeout=TIMEOUT)
    os.unlink(g)
    if not check(r.returncode == 0, "core: jitmap-core-handler: exit %d: %s" % (
            r.returncode, r.stderr)):
        return None
    say("core: %d MB, %s" % (os.path.getsize(core) >> 20, r.stderr.strip().replace("\n", "; ")))
    return ("core", core, exe)


def lldb_path():
    for name in ("lldb-16", "lldb"):
        path = shutil.which(name)
        if path and subprocess.run([path, "-b", "-o", "script print(1)"], capture_output=True,
                                   timeout=60).returncode == 0:
            return path
    return None


def others_reach(path):
    """Whether a user other than its owner may pass through every folder down to `path`."""
    path = os.path.realpath(path)
    while True:
        if not os.stat(path).st_mode & 0o001:
            return False
        if path == "/":
            return True
        path = os.path.dirname(path)


def main():
    global R, WORK, LLDB
    try:
        mod = importlib.import_module("rt_" + NAME)
    except ImportError as e:
        sys.exit("test_matrix.py: no runtime %s (tests/matrix/rt_%s.py): %s" % (NAME, NAME, e))
    R = mod.Runtime()
    why = R.setup()
    if why:
        T.skip(why)
    for path in (STACK, HANDLER, JITMAP_GDB, LLDB_ENTRY):
        if not os.path.exists(path):
            T.skip("%s not built" % path)
    for tool in ("gdb", "gcore"):
        if not shutil.which(tool):
            T.skip("no %s" % tool)
    LLDB = lldb_path()
    WORK = os.path.join(BUILD, "matrix-work", NAME)
    shutil.rmtree(WORK, ignore_errors=True)
    if os.geteuid() == 0 and not others_reach(BUILD):
        # A runtime that refuses root runs as nobody (PostgreSQL: rt_postgres.py), and must
        # reach its folder: a checkout cloned into `mktemp -d` (0700) has a parent it cannot
        # pass. A folder of /tmp then (the container binds it back: private_tmp_script).
        WORK = tempfile.mkdtemp(prefix="jitmap-matrix-%s-" % NAME)
        os.chmod(WORK, 0o755)
    else:
        os.makedirs(WORK)
    start = time.time()
    cells = []
    try:
        for cond in getattr(R, "conditions", CONDITIONS):
            if cond == "container" and (os.geteuid() != 0 or not shutil.which("unshare")):
                cells += [{"condition": cond, "tool": t, "skipped": "needs root and unshare"}
                          for t in TOOLS]
                continue
            condition(cond, cells)
    finally:
        if not KEEP:
            shutil.rmtree(WORK, ignore_errors=True)
    seconds = time.time() - start
    say("%.1f s" % seconds)
    if TABLE:
        os.makedirs(TABLE, exist_ok=True)
        with open(os.path.join(TABLE, NAME + ".json"), "w") as f:
            json.dump({"runtime": NAME, "title": getattr(R, "title", NAME),
                       "seconds": round(seconds, 1), "cells": cells}, f, indent=1)
    return T.summary()


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
