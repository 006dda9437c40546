#!/usr/bin/env python3
"""Mono as its users debug it: Debian's mono-runtime 6.8 with mono-runtime-dbg
(scripts/setup-mono.sh), a program run with `MONO_XDEBUG=gdb mono --debug --jitmap`:

    tests/runtimes/test_mono.py BUILD_DIR

mono_nested.cs blocks two threads under a few nested methods. /usr/bin/mono-sgen is stripped:
the JIT descriptor's symbol __jit_debug_descriptor is in its separate debug file alone
(/usr/lib/debug/usr/bin/mono-sgen, through .gnu_debuglink), where GDB finds it.

- The JIT entries: `jitmap-stack --json PID` reads one descriptor and as many JIT entries
  (process.jit_entries) as GDB lists (`maint info jit`), which is more than none (before the
  library looked in the debug file, it read 0 of GDB's 23-33).
- The frames, judged by Mono's own account of its stacks: its thread dump (SIGQUIT, "Full
  thread dump" on its stdout), itself checked against each thread's Environment.StackTrace.
  Every managed frame jitmap-stack names (a JIT frame, or a method of an AOT image such as
  mscorlib.dll.so) and every one GDB with jitmap names (`thread apply all bt`) is one of the
  dump's frames of that thread, in the dump's order: none wrong. How many of the dump's frames
  each tool names is printed (Mono's perf map goes through a stdio buffer, so the methods it
  compiled last may not be in it yet; its xdebug entries hold batches of methods, named in
  their DWARF alone).

GDB alone is the control: it lists the same JIT entries (it reads the debug file itself).
Exits 77 (skipped) without mono, mcs, mono-sgen's debug file or GDB. About 20 s.
JITMAP_RUNTIMES_KEEP=DIR keeps every tool's output there.
"""
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
from monodump import dump_threads, key  # noqa: E402
from tally import Tally  # noqa: E402

if len(sys.argv) != 2:
    sys.exit("usage: test_mono.py BUILD_DIR")
BUILD = os.path.abspath(sys.argv[1])
STACK = os.path.join(BUILD, "jitmap-stack")
JITMAP_GDB = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")
LIBJITMAP = os.path.join(BUILD, "libjitmap.so")
KEEP = os.environ.get("JITMAP_RUNTIMES_KEEP")
T = Tally("test-mono")
check = T.check


def keep(what, text):
    if KEEP:
        os.makedirs(KEEP, exist_ok=True)
        with open(os.path.join(KEEP, "mono-%s.txt" % what), "w") as f:
            f.write(text)


def debug_file():
    """mono-sgen's separate debug file, where mono-runtime-dbg puts it, or None."""
    exe = os.path.realpath(shutil.which("mono") or "/usr/bin/mono")
    r = subprocess.run(["readelf", "-n", exe], capture_output=True, text=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", r.stdout)
    places = ["/usr/lib/debug" + exe]
    if m:
        places.insert(0, "/usr/lib/debug/.build-id/%s/%s.debug" % (m.group(1)[:2],
                                                                   m.group(1)[2:]))
    return next((p for p in places if os.path.exists(p)), None)


# --- Mono's own account ---

def stack_trace(path):
    """A thread's Environment.StackTrace, as keys from the method that called get_StackTrace."""
    with open(path) as f:
        lines = [line.strip() for line in f if line.strip().startswith("at ")]
    names = [key(re.sub(r" \[0x[0-9a-f]+\] in .*$", "", line[3:])) for line in lines]
    # get_StackTrace and the argument names (the dump has the types alone): by method name.
    return [n for n in names if "get_StackTrace" not in n]


def same(k, t):
    """Whether a tool's frame name `k` is Mono's `t`: GDB names a method by its DWARF name,
    without the argument types the dump and the perf map add (JitmapMono_Block for
    JitmapMono_Block_string)."""
    return k == t or t.startswith(k + "_") or k.startswith(t + "_")


def method_of(k):
    """JitmapMono_Block_System_String_truth -> JitmapMono_Block (the stack trace names the
    arguments, the dump their types only); the other methods' keys as they are."""
    m = re.match(r"^(JitmapMono(?:_Main_c_AnonStorey0)?_[A-Za-z0-9]+)", k)
    return m.group(1) if m else k


# --- the judgement ---

def judge(tool, names, truth):
    """`names` (the frames' names, innermost first) against the dump's frames of the thread:
    every managed name among them, in order. Returns how many of the dump's frames it names."""
    managed = [k for k in (key(n) for n in names if n) if k.startswith("JitmapMono") or
               k.startswith("wrapper_") or any(same(k, t) for t in truth)]
    at = 0
    named = 0
    for k in managed:
        j = next((j for j in range(at, len(truth)) if same(k, truth[j])), -1)
        if not check(j >= 0, "%s: the managed frame %s is not one of Mono's own frames of the "
                     "thread after %s:\n  Mono: %s\n  %s: %s" % (
                         tool, k, truth[at - 1] if at else "its first", " -> ".join(truth),
                         tool, " -> ".join(managed))):
            return named
        at = j + 1
        named += 1
    return named


def jit_count_gdb(pid):
    out = livestacks.gdb_run(["-p", str(pid), "-ex", "maint info jit"], check)
    keep("gdb-jit", out)
    return len(re.findall(r"^0x[0-9a-f]+\s+0x[0-9a-f]+\s+\d+\s*$", out, re.M))


def main():
    for tool in ("mono", "mcs", "gdb", "readelf"):
        if not shutil.which(tool):
            T.skip("no %s (scripts/setup-mono.sh installs Mono)" % tool)
    if not debug_file():
        T.skip("no debug file of mono-sgen (mono-runtime-dbg; scripts/setup-mono.sh)")
    for path in (STACK, JITMAP_GDB, LIBJITMAP):
        if not os.path.exists(path):
            T.skip("%s not built" % path)
    start = time.time()
    tmp = tempfile.mkdtemp(prefix="jitmap-mono-")
    p = None
    try:
        exe = os.path.join(tmp, "mono_nested.exe")
        subprocess.run(["mcs", "-debug", "-out:" + exe, os.path.join(HERE, "mono_nested.cs")],
                       check=True, capture_output=True, timeout=120)
        truth_path = os.path.join(tmp, "truth")
        outfile = os.path.join(tmp, "out")
        env = dict(os.environ, MONO_XDEBUG="gdb")
        p = subprocess.Popen(["mono", "--debug", "--jitmap", exe, truth_path], cwd=tmp, env=env,
                             stdout=open(outfile, "w"), stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline and p.poll() is None and \
                "ready\n" not in open(outfile).read():
            time.sleep(0.05)
        if "ready\n" not in open(outfile).read():
            check(False, "the program did not get ready: %s" % open(outfile).read())
            return T.summary()
        time.sleep(0.5)  # the main thread goes on from writing its stack into Monitor.Wait
        pid = p.pid

        # The JIT entries: GDB's count and jitmap-stack's.
        gdb_entries = jit_count_gdb(pid)
        r = subprocess.run([STACK, "--json", str(pid)], capture_output=True, text=True,
                           timeout=120)
        keep("stack-json", r.stdout + r.stderr)
        check(r.returncode == 0, "jitmap-stack --json: exit %d: %s" % (r.returncode, r.stderr))
        obj = jsoncontract.loads(r.stdout, "jitmap-stack")
        proc = obj["process"]
        print("test-mono: JIT entries: GDB %d, jitmap-stack %s (descriptors: %s)" % (
            gdb_entries, proc["jit_entries"], proc["jit_descriptors"]), flush=True)
        check(gdb_entries > 0, "GDB lists Mono's JIT entries (maint info jit)")
        check(proc["jit_descriptors"] == 1,
              "jitmap-stack reads one JIT descriptor (mono-sgen's, named in its debug file "
              "alone), not %s" % proc["jit_descriptors"])
        check(proc["jit_entries"] == gdb_entries,
              "jitmap-stack reads as many JIT entries as GDB lists: %s, GDB %d" % (
                  proc["jit_entries"], gdb_entries))

        # GDB with jitmap's stacks.
        genv = dict(os.environ, JITMAP_LIBRARY=LIBJITMAP)
        g = subprocess.run(["gdb", "-nx", "-batch", "-p", str(pid), "-ex",
                            "source " + JITMAP_GDB, "-ex", "thread apply all bt"],
                           capture_output=True, text=True, timeout=300, env=genv)
        keep("gdb-jitmap", g.stdout + g.stderr)
        check("Python Exception" not in g.stdout + g.stderr,
              "no Python exception in GDB's output:\n%s" % (g.stdout + g.stderr)[-2000:])

        # Mono's own account, last: the dump stops the threads for a moment only.
        os.kill(pid, signal.SIGQUIT)
        deadline = time.time() + 20
        dump = []
        while time.time() < deadline:
            dump = dump_threads(open(outfile).read())
            if sum(1 for _, fs in dump if any("JitmapMono_Outer" in f for f in fs)) and \
                    sum(1 for _, fs in dump if any("JitmapMono_WorkerOuter" in f for f in fs)):
                break
            time.sleep(0.1)
        keep("out", open(outfile).read())
        tids = {t["tid"]: t for t in obj["threads"]}
        gdb_threads = livestacks.bt_threads(g.stdout)
        worker = next((t["tid"] for t in obj["threads"] if t.get("name") == "jitmap-worker"),
                      None)
        for label, tid, marker, truth_file in (
                ("main", pid, "JitmapMono_Outer", truth_path),
                ("worker", worker, "JitmapMono_WorkerOuter", truth_path + ".worker")):
            truth = next((fs for _, fs in dump if any(marker in f for f in fs)), None)
            if not check(truth is not None and tid in tids,
                         "Mono's thread dump has the %s thread (%s), and jitmap-stack has "
                         "its thread %s" % (label, marker, tid)):
                continue
            # The dump is Mono's account: the program's methods in it are those of the
            # thread's own stack trace (which names the arguments, and mscorlib's otherwise).
            own = [method_of(k) for k in stack_trace(truth_file) if k.startswith("JitmapMono")]
            dumped = [method_of(k) for k in truth if k.startswith("JitmapMono")]
            check(own and dumped == own,
                  "Mono's dump of the %s thread has its Environment.StackTrace's methods:\n"
                  "  dump:  %s\n  trace: %s" % (label, " -> ".join(dumped), " -> ".join(own)))
            js = [f["function"] for f in tids[tid]["frames"] if f.get("jit") or
                  (f.get("module") or "").endswith(".dll.so")]
            n_stack = judge("jitmap-stack (%s thread)" % label, js, truth)
            frames, _ = livestacks.bt_thread(g.stdout, tid)
            n_gdb = judge("GDB with jitmap (%s thread)" % label,
                          [n for _, _, n in frames if n != "??"], truth)
            print("test-mono: %s thread: Mono's dump has %d frames; jitmap-stack names %d, "
                  "GDB with jitmap %d" % (label, len(truth), n_stack, n_gdb), flush=True)
        check(len(gdb_threads) >= 2, "GDB with jitmap printed the threads' stacks")
    finally:
        if p is not None:
            p.kill()
            p.wait()
            for f in ("/tmp/perf-%d.map" % p.pid,):
                if os.path.exists(f):
                    os.unlink(f)
        shutil.rmtree(tmp, ignore_errors=True)
    print("test-mono: %.1f s" % (time.time() - start), flush=True)
    return T.summary()


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
