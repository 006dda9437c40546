#!/usr/bin/env python3
"""Containers and services: a process's files as it sees them, read from the host.

    tests/field/test_containers.py BUILD_DIR

Node.js (tests/perfmap/node_hot.js, --perf-basic-prof: jitmapOuter > jitmapMiddle >
jitmapInner, the innermost waiting) runs in `unshare --pid --mount --fork --mount-proc` with a
tmpfs on /tmp: its own PID and mount namespaces and a private /tmp, as in a container or a
systemd service with PrivateTmp=yes. readlink and stat of its /proc/PID/root say "/"; its perf
map is /tmp/perf-1.map in its own /tmp (1: the PID it knows itself by). On the host a stale
/tmp/perf-1.map is planted, another process's file: every line of the container's map, each
renamed STALE_HOST_N, so that a tool that read it would name the very frames wrongly. Each
tool, from the host:

- stack: jitmap-stack (JSON and text) names the three functions in order from
  /proc/PID/root/tmp/perf-1.map, no frame from the stale file; both PIDs are shown
  (process.pid, process.ns_pid 1; "PID 1 in its own namespace").
- gdb: GDB with jitmap attached (`gdb -p PID`, `thread apply all bt`): the three in order, no
  stale name. Negative control: GDB alone names none of the three.
- lldb: LLDB with jitmap attached (`stackmap bt --json`): the same.
- handler: the crash simulated as tests/field/test_handler.py does (the process held, gcore's
  core piped through `jitmap-core-handler PID`): the core carries /tmp/perf-1.map with the
  container's lines (jitmap-dump, jitmap-stack on the core), never the stale host file's.
- kernel: a real crash inside the container (node, PID 4 there after the shell, mount and
  cat, calls process.abort()) through the real core_pattern (`|h %P -- zstd ...`, set and
  restored): the core carries its /tmp/perf-4.map, not the stale host /tmp/perf-4.map (lines
  naming every address where mmap puts V8's code); jitmap-stack names the three. Skipped where
  core_pattern cannot be written.

A PID namespace's init ignores SIGTERM: each container is ended with SIGKILL. The planted host
files are removed (never one that was there before). Exits 77 (skipped) without unshare, node,
gcore or the right to make namespaces (root).
"""
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TESTS, "debugger"))
sys.path.insert(0, os.path.join(TESTS, "lib"))
import harness as H  # noqa: E402
import jsoncontract  # noqa: E402
import livestacks  # noqa: E402

if len(sys.argv) != 2:
    sys.exit("usage: test_containers.py BUILD_DIR")
BUILD = os.path.abspath(sys.argv[1])
STACK = os.path.join(BUILD, "jitmap-stack")
DUMP = os.path.join(BUILD, "jitmap-dump")
HANDLER = os.path.join(BUILD, "jitmap-core-handler")
SCRIPT = os.path.join(TESTS, "perfmap", "node_hot.js")
NODE_FLAGS = ["--allow-natives-syntax", "--no-turbo-inlining", "--perf-basic-prof"]
THREE = ["jitmapInner", "jitmapMiddle", "jitmapOuter"]
STALE = "STALE_HOST_"
GIB = 1 << 30
TIMEOUT = 300

run = H.run_tool


def three_in_order(names, what):
    """The three functions, innermost first, among `names` (V8's "JS:*NAME FILE:L:C"), and no
    name from the stale host file."""
    names = [n for n in names if n]
    H.check(not any(STALE in n for n in names),
            "%s: named from the stale host file: %s" % (what, [n for n in names if STALE in n]))
    got = [n.split()[0].lstrip("JS:*~^") for n in names]
    seen = [g for g in got if g in THREE]
    H.check(seen[:3] == THREE, "%s: the JIT frames named %s, not %s" % (what, got, THREE))


def descendants(pid):
    """The PIDs under `pid`, nearest first."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop(0)
        try:
            with open("/proc/%d/task/%d/children" % (p, p)) as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            kids = []
        out += kids
        todo += kids
    return out


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return ""


class Container:
    """Node.js in PID and mount namespaces of its own with a tmpfs on /tmp. `init`: node is
    the namespace's init (PID 1, exec'd by the shell), else the shell is and node is PID 2.
    Ended with SIGKILL (an init ignores SIGTERM)."""

    def __init__(self, work, name, mode, init=True):
        self.out = os.path.join(work, name + ".out")
        # The script is copied into the container's /tmp (opened before the tmpfs hides
        # the host's /tmp, where this tree may be).
        node = " ".join(["exec" if init else "", shutil.which("node")] + NODE_FLAGS +
                        ["/tmp/node_hot.js", mode])
        shell = ("exec 3< '%s' && mount -t tmpfs tmpfs /tmp && cat <&3 >/tmp/node_hot.js && "
                 "exec 3<&- && %s%s" % (SCRIPT, node, "" if init else "; :"))
        with open(self.out, "w") as f:
            self.unshare = subprocess.Popen(
                ["unshare", "--pid", "--mount", "--fork", "--mount-proc",
                 "--propagation", "private", "sh", "-c", shell],
                stdout=f, stderr=subprocess.STDOUT, cwd=work)
        self.pid = None  # node's PID here

    def wait_ready(self):
        for _ in range(600):
            text = H.read(self.out)
            if self.pid is None:
                self.pid = next((p for p in descendants(self.unshare.pid)
                                 if comm(p) == "node"), None)
            if "ready" in text and self.pid:
                return
            if self.unshare.poll() is not None:
                break
            time.sleep(0.05)
        raise H.Fail("node in the container never got ready: %s" % H.read(self.out)[-600:])

    def ns_pid(self):
        with open("/proc/%d/status" % self.pid) as f:
            line = next(l for l in f if l.startswith("NSpid:"))
        return int(line.split()[-1])

    def kill(self):
        for p in [self.unshare.pid] + descendants(self.unshare.pid):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.unshare.wait()


class Planted:
    """A stale host file at `path` for the block: the container's map with every name
    renamed; removed after (left alone when a file was there before: not ours)."""

    def __init__(self, path, lines_from):
        self.path, self.source = path, lines_from
        self.ours = False

    def __enter__(self):
        if os.path.exists(self.path):
            raise H.Skip("%s exists on this machine already: not replaced" % self.path)
        entries = livestacks.perf_map(self.source)
        H.check(entries, "the container's map %s is empty" % self.source)
        with open(self.path, "x") as f:
            self.ours = True
            for i, (lo, hi, _) in enumerate(entries):
                f.write("%x %x %s%d\n" % (lo, hi - lo, STALE, i))
        return self

    def __exit__(self, *exc):
        if self.ours and os.path.exists(self.path):
            os.unlink(self.path)


def can_unshare():
    r = subprocess.run(["unshare", "--pid", "--mount", "--fork", "--mount-proc",
                        "--propagation", "private", "sh", "-c",
                        "mount -t tmpfs tmpfs /tmp && echo ok"],
                       capture_output=True, text=True, timeout=60)
    return r.returncode == 0 and r.stdout.strip() == "ok", (r.stderr or r.stdout).strip()


def main():
    for tool in ("unshare", "node", "gcore", "zstd"):
        if not shutil.which(tool):
            print("SKIP: no %s" % tool)
            return 77
    for path in (STACK, DUMP, HANDLER):
        if not os.path.exists(path):
            print("SKIP: %s not built" % path)
            return 77
    ok, why = can_unshare()
    if not ok:
        print("SKIP: namespaces cannot be made here: %s" % why)
        return 77
    env = H.Env(BUILD, "jitmap-containers.")
    env.plugin = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")  # its unwinders too
    gdb = H.debugger(env, "gdb")
    lldb = H.debugger(env, "lldb")
    runner = H.Runner("containers")
    work = env.dir("run")
    box = Container(work, "live", "600")
    try:
        box.wait_ready()
    except H.Fail as e:
        box.kill()
        print("FAIL start: %s" % e)
        return 1
    inside = "/proc/%d/root/tmp/perf-%d.map" % (box.pid, box.ns_pid())
    stale = Planted("/tmp/perf-%d.map" % box.ns_pid(), inside)

    @runner.test
    def stack():
        """jitmap-stack: the container's map by its own PID, both PIDs shown."""
        H.check(box.ns_pid() == 1, "node is not PID 1 in its namespace: %d" % box.ns_pid())
        H.check(os.readlink("/proc/%d/root" % box.pid) == "/",
                "the container's root is not / as seen from here: the case is another")
        with stale:
            obj, frames = livestacks.stack_json(STACK, [str(box.pid)], box.pid, H.check)
            rc, text, err = run([STACK, str(box.pid)])
        proc = obj["process"]
        H.check(proc["pid"] == box.pid and proc["ns_pid"] == 1,
                "process: pid %s, ns_pid %s" % (proc["pid"], proc["ns_pid"]))
        H.check([m["path"] for m in proc["perf_maps"]] == [inside],
                "perf maps read: %s, want %s" % (proc["perf_maps"], inside))
        three_in_order([f["function"] for f in frames if f["jit"]], "jitmap-stack")
        H.check(rc == 0 and "process %d (node), PID 1 in its own namespace," % box.pid in text,
                "jitmap-stack's header: exit %d: %s" % (rc, text[:300] + err[-300:]))
        three_in_order([l.split(" in ", 1)[1] for l in text.splitlines()
                        if " in JS:" in l or STALE in l], "jitmap-stack, text")

    @runner.test
    def gdb_attach():
        """GDB with jitmap, attached from the host; GDB alone as the control."""
        if not gdb:
            raise H.Skip("no gdb with Python")
        with stale:
            r = gdb.session("gdb", [gdb.dump("bt", "thread apply all bt")], pid=box.pid)
            bare = gdb.session("gdb-bare", [gdb.dump("bt", "thread apply all bt")],
                               pid=box.pid, jitmap=False)
        _, text = livestacks.bt_thread(r.text("bt"), box.pid)
        names = [n for _, _, n in livestacks.bt_thread(r.text("bt"), box.pid)[0]]
        H.check(text, "GDB: no thread %d in: %s" % (box.pid, r.text("bt")[-600:]))
        three_in_order([n for n in names if n.startswith("JS:") or STALE in n], "GDB")
        H.check(not any(f in bare.text("bt") for f in THREE),
                "the control (GDB alone) named JIT frames: %s" % bare.text("bt")[-600:])

    @runner.test
    def lldb_attach():
        """LLDB with jitmap, attached from the host."""
        if not lldb:
            raise H.Skip("no LLDB with Python")
        with stale:
            r = lldb.session("lldb", [lldb.ask("bt", "bt", opts=["json"])], pid=box.pid)
        names = [f.get("function") or "" for f in r.json("bt")["frames"]]
        three_in_order([n for n in names if n.startswith("JS:") or STALE in n], "LLDB")

    @runner.test
    def handler():
        """A crash simulated: the core of the held process through jitmap-core-handler."""
        with open(inside) as f:
            theirs = f.read()  # what the container wrote, up to now
        with stale:
            os.kill(box.pid, signal.SIGSTOP)  # held, as the kernel holds it
            g = os.path.join(work, "gcore")
            rc, _, err = run(["gcore", "-o", g, str(box.pid)])
            g = "%s.%d" % (g, box.pid)
            H.check(os.path.exists(g), "gcore: exit %d: %s" % (rc, err[-300:]))
            jit = os.path.join(work, "with-notes")
            with open(g, "rb") as i, open(jit, "wb") as o:
                rc, _, err = run([HANDLER, str(box.pid)], stdin=i, stdout=o)
            os.unlink(g)
        H.check(rc == 0 and "1 JIT file added" in err, "the handler: exit %d: %s" % (rc, err))
        rc, out, err = run([DUMP, "--format=json", jit])
        H.check(rc == 0, "jitmap-dump: exit %d: %s" % (rc, err))
        files = jsoncontract.loads(out, "jitmap-dump")["jit_files"]
        H.check([f["path"] for f in files] == ["/tmp/perf-1.map"],
                "the core's JIT files: %s" % files)
        H.check(files[0]["size"] >= len(theirs.encode()) and not files[0]["cut"],
                "the core holds %s bytes of the container's map, which had %d" % (
                    files[0], len(theirs.encode())))
        obj, frames = livestacks.stack_json(STACK, [jit], box.pid, H.check)
        three_in_order([f["function"] for f in frames if f["jit"]], "jitmap-stack, the core")
        H.check(all(f["source"]["in_core"] for f in frames if f["jit"] and f["function"]),
                "frames not named from the core's map: %s" % [f["source"] for f in frames
                                                              if f["jit"]])

    @runner.test
    def kernel():
        """A real crash inside a container, through the real core_pattern."""
        with H.core_pattern(HANDLER, "", shutil.which("zstd") + " -q -T1 -o {dir}/k.%P.zst") \
                as short:
            # Another process's file by the PID node will have there, naming every address:
            # PIDs of a new namespace are given in order (the shell 1, mount 2, cat 3,
            # node 4).
            planted = False
            try:
                with open("/tmp/perf-4.map", "x") as f:
                    planted = True
                    # (a line names 1 GiB at most: over where mmap puts V8's code)
                    for i, lo in enumerate(range(0x7e0000000000, 0x800000000000, GIB)):
                        f.write("%x %x %s%d\n" % (lo, GIB - 1, STALE, i))
                crash = Container(work, "abort", "abort", init=False)
                try:
                    crash.unshare.wait(timeout=120)  # node aborts once warm, the shell ends
                finally:
                    crash.kill()
            except FileExistsError:
                raise H.Skip("/tmp/perf-4.map exists on this machine already: not replaced")
            finally:
                if planted:
                    os.unlink("/tmp/perf-4.map")
            z = None
            for _ in range(100):  # the kernel waited for the handler; zstd may still write
                cores = [n for n in os.listdir(short) if n.startswith("k.")]
                if cores and subprocess.run(["zstd", "-q", "-t", os.path.join(short, cores[0])],
                                            stderr=subprocess.DEVNULL).returncode == 0:
                    z = os.path.join(work, cores[0])
                    shutil.move(os.path.join(short, cores[0]), z)
                    break
                time.sleep(0.1)
        if not z:
            raise H.Skip("no core came through core_pattern (%s)" % H.read(crash.out)[-300:])
        rc, out, err = run([DUMP, "--format=json", z])
        H.check(rc == 0, "jitmap-dump: exit %d: %s" % (rc, err))
        files = jsoncontract.loads(out, "jitmap-dump")["jit_files"]
        H.check([f["path"] for f in files] == ["/tmp/perf-4.map"],
                "the core's JIT files: %s (node said: %s)" % (files, H.read(crash.out)[-200:]))
        r = subprocess.run([STACK, "--json", z], capture_output=True, text=True, timeout=TIMEOUT)
        H.check(r.returncode in (0, 1) and r.stdout.startswith("{"),
                "jitmap-stack %s: exit %d: %s" % (z, r.returncode, r.stderr[-400:]))
        obj = jsoncontract.loads(r.stdout, "jitmap-stack")
        named = [f["function"] for t in obj["threads"] for f in t["frames"] if f["jit"]]
        three_in_order(named, "jitmap-stack, the kernel's core of a crash in a container")

    try:
        return runner.run(env)
    finally:
        box.kill()


if __name__ == "__main__":
    sys.exit(main())
