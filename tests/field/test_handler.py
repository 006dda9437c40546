#!/usr/bin/env python3
"""jitmap-core-handler (issue 35): Node.js's perf map carried inside its core, read where the
crash was not: the map deleted, the core compressed with zstd and moved.

    tests/field/test_handler.py BUILD_DIR

The program: tests/perfmap/node_hot.js under Node.js with --perf-basic-prof, its three
functions optimized by V8 and nested (jitmapOuter > jitmapMiddle > jitmapInner), the innermost
waiting (for 600 s) or calling process.abort() ("abort").

- simulated: the kernel simulated. The process is held (SIGSTOP) while its core (gcore's) is
  piped through `jitmap-core-handler PID`, which reads the perf map through /proc/PID/root;
  then the process is killed, its perf map deleted, the core compressed with zstd and moved.
  jitmap-stack names the same JIT frames of the first thread, in order, as it did on the live
  process (each now "in_core"); jitmap-dump lists the file; GDB (`gdb node -c CORE`, the core
  decompressed as `coredumpctl gdb` does) names the three functions. Negative control: the
  same core not passed through the handler names none of them.
- passthrough: a core with no JIT file, and bytes that are no core, come out byte for byte.
- kernel (before the debuggers): once through the real core_pattern (set and restored;
  core_pipe_limit likewise): `|DIR/h %P -- zstd -q -o DIR/k.%P.zst` (h: the handler); node
  aborts; with the perf map deleted and the core moved, jitmap-stack names the three functions
  in the thread that aborted. Skipped, said, where core_pattern cannot be written.
- demo_kernel: under the same core_pattern, the demo JIT aborted at a statepoint
  (`--program statepoint --threads 2 --abort`; no JIT file: its core passes through): moved,
  jitmap-stack `--values` and GDB's `jitmap core` find record 300 in both worker threads
  holding the values the program printed.

Exits 77 (skipped) without node, gdb or gcore, or a process to trace.
"""
import json
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

if len(sys.argv) != 2:
    sys.exit("usage: test_handler.py BUILD_DIR")
BUILD = os.path.abspath(sys.argv[1])
STACK = os.path.join(BUILD, "jitmap-stack")
DUMP = os.path.join(BUILD, "jitmap-dump")
HANDLER = os.path.join(BUILD, "jitmap-core-handler")
SCRIPT = os.path.join(TESTS, "perfmap", "node_hot.js")
NODE_FLAGS = ["--allow-natives-syntax", "--no-turbo-inlining", "--perf-basic-prof"]
THREE = ["jitmapInner", "jitmapMiddle", "jitmapOuter"]
TIMEOUT = 300


run = H.run_tool  # (exit status, output, errors)


def jit_names(obj, thread=0):
    """The functions of the JIT frames of one thread, innermost first."""
    return [f["function"] for f in obj["threads"][thread]["frames"] if f["jit"]]


def three_in_order(names, what):
    """The three functions, innermost first, among `names` (V8's "JS:*NAME FILE:L:C")."""
    got = [n.split()[0].lstrip("JS:*~^") for n in names if n]
    seen = [g for g in got if g in THREE]
    H.check(seen[:3] == THREE, "%s: the JIT frames named %s, not %s" % (what, got, THREE))


def jit_frames(bt):
    """The functions of a GDB backtrace's JavaScript frames."""
    return [line.split(" in ", 1)[1] for line in bt.splitlines() if " in JS:" in line]


def stack_json(target, *extra):
    rc, out, err = run([STACK, "--json"] + list(extra) + [target])
    H.check(rc in (0, 1) and out.startswith("{"), "jitmap-stack %s: exit %d: %s" % (
        target, rc, err[-400:]))
    return json.loads(out)


def start_node(mode, work):
    out = os.path.join(work, "node-%s.out" % mode)
    with open(out, "w") as f:
        p = subprocess.Popen(["node"] + NODE_FLAGS + [SCRIPT, mode], stdout=f,
                             stderr=subprocess.STDOUT, cwd=work)
    return p, out


def wait_ready(p, out):
    for _ in range(300):
        if "ready" in H.read(out):
            return
        if p.poll() is not None:
            break
        time.sleep(0.05)
    raise H.Fail("node never got ready: %s" % H.read(out)[-400:])


def zstd_to(src, dst):
    with open(src, "rb") as i, open(dst, "wb") as o:
        subprocess.run(["zstd", "-q", "-T1", "-c"], stdin=i, stdout=o, check=True,
                       timeout=TIMEOUT)


def main():
    for tool in ("node", "gcore", "zstd"):
        if not shutil.which(tool):
            print("SKIP: no %s" % tool)
            return 77
    for path in (STACK, DUMP, HANDLER):
        if not os.path.exists(path):
            print("SKIP: %s not built" % path)
            return 77
    env = H.Env(BUILD, "jitmap-handler.")
    env.plugin = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")  # its unwinders too
    gdb = H.debugger(env, "gdb")
    lldb = H.debugger(env, "lldb")
    runner = H.Runner("handler")
    work = env.dir("crash")          # where the process ran
    moved = env.dir("elsewhere")     # where its core is read
    made = {}

    @runner.test
    def simulated():
        """The process held while its core streams through the handler."""
        p, out = start_node("600", work)
        perf = "/tmp/perf-%d.map" % p.pid
        try:
            wait_ready(p, out)
            live = stack_json(str(p.pid))
            made["live"] = jit_names(live)
            three_in_order(made["live"], "jitmap-stack, live")
            os.kill(p.pid, signal.SIGSTOP)          # held, as the kernel holds it
            g = os.path.join(work, "gcore")
            rc, _, err = run(["gcore", "-o", g, str(p.pid)])
            g = "%s.%d" % (g, p.pid)
            H.check(os.path.exists(g), "gcore: exit %d: %s" % (rc, err[-300:]))
            jit = os.path.join(work, "with-notes")
            with open(g, "rb") as i, open(jit, "wb") as o:
                rc, _, err = run([HANDLER, str(p.pid)], stdin=i, stdout=o)
            H.check(rc == 0 and "1 JIT file added" in err,
                    "the handler: exit %d: %s" % (rc, err))
        finally:
            p.kill()
            p.wait()
            if os.path.exists(perf):
                os.unlink(perf)                     # left behind on the crashed machine
        made["core"] = z = os.path.join(moved, "node-crash.%d.zst" % p.pid)
        zstd_to(jit, z)
        made["plain"] = zp = os.path.join(moved, "plain.zst")
        zstd_to(g, zp)
        made["pid"] = p.pid
        os.unlink(jit)
        os.unlink(g)
        got = stack_json(z)
        H.check(jit_names(got) == made["live"], "jitmap-stack on the core names %s; live: %s"
                % (jit_names(got), made["live"]))
        srcs = [f["source"] for f in got["threads"][0]["frames"] if f["jit"]]
        H.check(all(s["kind"] == "perf-map" and s["in_core"] and s["path"] == perf
                    for s in srcs), "sources: %s" % srcs)
        bare = stack_json(zp)
        H.check(not any(n for n in jit_names(bare)),
                "the control (no notes) named JIT frames: %s" % jit_names(bare))
        rc, outd, err = run([DUMP, "--format=json", z])
        H.check(rc == 0, "jitmap-dump: exit %d: %s" % (rc, err))
        files = json.loads(outd)["jit_files"]
        H.check([f["path"] for f in files] == [perf] and files[0]["kind"] == "perf-map"
                and not files[0]["cut"], "jitmap-dump's jit_files: %s" % files)

    @runner.test
    def kernel():
        """Through the real core_pattern, set and restored: Node.js aborting in its JIT code,
        and the demo JIT aborting at a statepoint (no perf map or jitdump: its core passes
        through the handler byte for byte)."""
        demo = None
        with H.core_pattern(HANDLER, "", shutil.which("zstd") + " -q -T1 -o {dir}/k.%P.zst") \
                as short:
            p, out = start_node("abort", work)
            p.wait(timeout=120)
            if env.demo and os.path.exists(env.demo):
                made["demo-out"] = os.path.join(work, "demo.out")
                with open(made["demo-out"], "w") as f:
                    demo = subprocess.Popen([env.demo, "--abort", "--program", "statepoint",
                                             "--threads", "2"], stdout=f,
                                            stderr=subprocess.STDOUT, cwd=work)
                demo.wait(timeout=120)
            perf = "/tmp/perf-%d.map" % p.pid
            if os.path.exists(perf):
                os.unlink(perf)

            def moved_core(pid, name):
                z = os.path.join(moved, "%s.%d.zst" % (name, pid))
                k = os.path.join(short, "k.%d.zst" % pid)
                for _ in range(100):  # the kernel waited for the handler (core_pipe_limit),
                    if os.path.exists(k) and subprocess.run(  # zstd may still be writing
                            ["zstd", "-q", "-t", k], stderr=subprocess.DEVNULL).returncode == 0:
                        break
                    time.sleep(0.1)
                if not os.path.exists(k):
                    return None
                shutil.move(k, z)
                return z

            z = moved_core(p.pid, "kernel-crash")
            if demo is not None:
                made["demo"] = moved_core(demo.pid, "demo-crash")
        if not z:
            raise H.Skip("no core came through core_pattern (node exit %s; a container's "
                         "kernel runs the handler outside it?)" % p.returncode)
        got = stack_json(z)
        three_in_order(jit_names(got), "jitmap-stack, the kernel's core")
        made["kernel"] = z

    @runner.test
    def demo_kernel():
        """The demo JIT's core from the kernel through the handler, compressed and moved:
        jitmap-stack and GDB (`jitmap core FILE`) find both worker threads at record 300
        holding the values the program printed."""
        if not made.get("demo"):
            raise H.Skip("no demo core from the kernel (see the kernel test)")
        truths = H.truth(H.read(made["demo-out"]), "jitmap-demo:", "statepoint")
        got = stack_json(made["demo"], "--values", "--exe=" + env.demo)
        objs = [f["stackmap"] for t in got["threads"] for f in t["frames"] if f.get("stackmap")]
        H.record_300(objs, truths, "jitmap-stack, the demo's core")
        if not gdb:
            raise H.Skip("no gdb with Python (jitmap-stack passed)")
        every = "thread apply all -- frame apply all -c -- info stackmap -json"
        r = gdb.session("gdb-demo", [gdb.ask("open", "core", args=[made["demo"]]),
                                     gdb.dump("sm", every)], exe=env.demo)
        H.record_300([json.loads(line) for line in r.text("sm").splitlines()
                      if line.startswith("{")], truths, "GDB, the demo's core")

    @runner.test
    def gdb_core():
        """GDB with jitmap: `jitmap core FILE` on the compressed core, then `bt`: the three
        functions; then, in the same session, GDB's own `core-file` of the core without notes
        (the same process ID): none of them (the first core's files are gone with it). And as
        `coredumpctl gdb` runs it, the core decompressed, `gdb node -c CORE`: the three."""
        if not gdb:
            raise H.Skip("no gdb with Python")
        H.check("core" in made, "no core: the simulated test failed")
        node = shutil.which("node")
        plain = os.path.join(moved, "plain-decompressed")
        subprocess.run(["zstd", "-q", "-d", "-f", made["plain"], "-o", plain], check=True,
                       timeout=TIMEOUT)
        r = gdb.session("gdb", [gdb.ask("open", "core", args=[made["core"]]),
                                gdb.dump("bt", "bt"), gdb.dump("reopen", "core-file " + plain),
                                gdb.dump("bt-plain", "bt")], exe=node)
        three_in_order(jit_frames(r.text("bt")), "GDB, jitmap core")
        H.check("jitmapInner" not in r.text("bt-plain"),
                "GDB named JIT code of a core without notes: %s" % r.text("bt-plain")[-600:])
        os.unlink(plain)
        core = os.path.join(moved, "coredump-decompressed")
        subprocess.run(["zstd", "-q", "-d", "-f", made["core"], "-o", core], check=True,
                       timeout=TIMEOUT)
        r = gdb.session("gdb-c", [gdb.dump("bt", "bt")], exe=node, core=core)
        three_in_order(jit_frames(r.text("bt")), "GDB, -c")

    @runner.test
    def lldb_core():
        """LLDB with jitmap, `stackmap core FILE` on the kernel's compressed core (in gcore's
        core of the held process, LLDB's own unwinder stops below V8's Atomics.wait builtin,
        whose code gcore leaves in node's file), then `stackmap bt --json`: the three
        functions; and the same decompressed, opened by `lldb -c CORE`."""
        if not lldb:
            raise H.Skip("no LLDB with Python")
        if "kernel" not in made:
            raise H.Skip("no core from the kernel (see the kernel test)")
        r = lldb.session("lldb", [lldb.ask("open", "core", args=[made["kernel"]]),
                                  lldb.ask("bt", "bt", opts=["json"])],
                         exe=shutil.which("node"))
        names = [f.get("function") for f in r.json("bt")["frames"]]
        three_in_order([n for n in names if n and n.startswith("JS:")], "LLDB")
        # Opened by LLDB itself, decompressed (`coredumpctl debug --debugger=lldb`): LLDB 16
        # cannot say which core it holds; jitmap finds it among the files LLDB maps.
        core = os.path.join(moved, "kernel-decompressed")
        subprocess.run(["zstd", "-q", "-d", "-f", made["kernel"], "-o", core], check=True,
                       timeout=TIMEOUT)
        r = lldb.session("lldb-c", [lldb.ask("bt", "bt", opts=["json"])],
                         exe=shutil.which("node"), core=core)
        names = [f.get("function") for f in r.json("bt")["frames"]]
        three_in_order([n for n in names if n and n.startswith("JS:")], "LLDB, -c CORE")
        os.unlink(core)

    @runner.test
    def passthrough():
        """No JIT file to add, or no core: byte for byte."""
        p = subprocess.Popen(["sleep", "60"])
        try:
            g = os.path.join(work, "sleep")
            run(["gcore", "-o", g, str(p.pid)])
            g = "%s.%d" % (g, p.pid)
            H.check(os.path.exists(g), "no gcore of sleep")
            out = os.path.join(work, "sleep.out")
            with open(g, "rb") as i, open(out, "wb") as o:
                rc, _, err = run([HANDLER, str(p.pid)], stdin=i, stdout=o)
        finally:
            p.kill()
            p.wait()
        H.check(rc == 0 and "no perf map or jitdump file was found" in err,
                "sleep: exit %d: %s" % (rc, err))
        with open(g, "rb") as a, open(out, "rb") as b:
            H.check(a.read() == b.read(), "a core with no JIT file changed")
        junk = os.urandom(100000)
        q = subprocess.run([HANDLER, "0"], input=junk, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=TIMEOUT)
        H.check(q.returncode == 0 and q.stdout == junk and b"not an ELF file" in q.stderr,
                "bytes that are no core: exit %d: %s" % (q.returncode, q.stderr))

    return runner.run(env)


if __name__ == "__main__":
    sys.exit(main())
