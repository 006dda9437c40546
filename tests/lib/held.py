"""Programs with JIT frames held still for a core: the demo JIT paused at a statepoint, Node.js
20 blocked in three nested optimized functions, a PostgreSQL 15 backend blocked in pg_sleep
called from a JIT-compiled expression. For the tests and benchmarks of small cores
(tests/field/test_small.py, bench/small_core.py).

    sys.path.insert(0, ".../tests/lib")
    import held
    with held.demo(DEMO, work, ["--threads", "2"]) as (pid, out):
        core = held.gcore(pid, work)
    with held.node(work) as (pid, out): ...       # held.Missing when there is no node
    with held.postgres(work) as (pid, out): ...   # held.Missing without PostgreSQL 15's JIT

Each stops its program when the block ends (PostgreSQL's server too). A program that does not
get ready in a minute raises RuntimeError with its output's tail.
"""
import contextlib
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NODE_SCRIPT = os.path.join(os.path.dirname(HERE), "perfmap", "node_hot.js")
NODE_FLAGS = ["--allow-natives-syntax", "--no-turbo-inlining", "--perf-basic-prof"]
PG_BIN = "/usr/lib/postgresql/15/bin"
PG_JIT = "/usr/lib/postgresql/15/lib/llvmjit.so"
PG_USER = "nobody"
TIMEOUT = 300


class Missing(Exception):
    """The program is not installed here (a test skips, a benchmark leaves its row out)."""


def _read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _wait_for(path, word, p, what):
    for _ in range(1200):
        if word in _read(path):
            return
        if p is not None and p.poll() is not None:
            break
        time.sleep(0.05)
    raise RuntimeError("%s never got ready: %s" % (what, _read(path)[-400:]))


def _wait_asleep(pid, seconds=10):
    """Until the main thread of `pid` sleeps (state S twice in a row, 20 ms apart): a program
    that says it is ready has still to reach its wait (Node.js may parse a function again on
    the way, its bytecode flushed): a core taken before shows another stack. Returns whether
    it slept within `seconds`."""
    asleep = 0
    for _ in range(int(seconds / 0.02)):
        try:
            with open("/proc/%d/task/%d/stat" % (pid, pid)) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        asleep = asleep + 1 if state == "S" else 0
        if asleep == 2:
            return True
        time.sleep(0.02)
    return False


def gcore(pid, work, name="full"):
    """gcore's core of process `pid`, in `work`: its path."""
    g = os.path.join(work, name)
    p = subprocess.run(["gcore", "-o", g, str(pid)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=TIMEOUT)
    g = "%s.%d" % (g, pid)
    if not os.path.exists(g):
        raise RuntimeError("gcore %d: exit %d: %s" % (pid, p.returncode,
                                                      p.stderr.decode()[-300:]))
    return g


@contextlib.contextmanager
def demo(exe, work, args, name="demo"):
    """The demo JIT (`exe`) with `args` and --pause: (pid, its output's path) once every
    thread waits in its pause."""
    out = os.path.join(work, name + ".out")
    with open(out, "w") as f:
        p = subprocess.Popen([exe] + args + ["--pause"], stdout=f, stderr=subprocess.STDOUT,
                             cwd=work)
    try:
        threads = args[args.index("--threads") + 1] if "--threads" in args else None
        _wait_for(out, "holding threads=%s" % threads if threads else "paused pid=", p,
                  "the demo")
        yield p.pid, out
    finally:
        p.kill()
        p.wait()


@contextlib.contextmanager
def node(work):
    """Node.js in tests/perfmap/node_hot.js (its perf map in /tmp), stopped (SIGSTOP) once
    ready: (pid, its output's path). The perf map is deleted at the end."""
    if not shutil.which("node"):
        raise Missing("no node")
    out = os.path.join(work, "node.out")
    with open(out, "w") as f:
        p = subprocess.Popen(["node"] + NODE_FLAGS + [NODE_SCRIPT, "600"], stdout=f,
                             stderr=subprocess.STDOUT, cwd=work)
    try:
        _wait_for(out, "ready", p, "node")
        _wait_asleep(p.pid)  # in Atomics.wait, not on its way there
        os.kill(p.pid, signal.SIGSTOP)
        yield p.pid, out
    finally:
        p.kill()
        p.wait()
        perf = "/tmp/perf-%d.map" % p.pid
        if os.path.exists(perf):
            os.unlink(perf)


def _run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


@contextlib.contextmanager
def postgres(work):
    """A PostgreSQL 15 server of its own (in a temporary directory, run as `nobody` when
    this is root, JIT compiling every expression and registering its code with GDB's JIT
    interface) and a backend blocked in `pg_sleep` called from the JIT-compiled targetlist:
    (the backend's pid, the server's log)."""
    if not os.path.exists(os.path.join(PG_BIN, "postgres")) or not os.path.exists(PG_JIT):
        raise Missing("no PostgreSQL 15 with its LLVM JIT (postgresql-15)")
    try:
        pw = pwd.getpwnam(PG_USER)
    except KeyError:
        raise Missing("no user %s to run PostgreSQL as" % PG_USER) from None
    pg = tempfile.mkdtemp(prefix="jmpg", dir="/tmp")  # short: a socket's path is bounded
    as_user = []
    if os.geteuid() == 0:
        os.chown(pg, pw.pw_uid, pw.pw_gid)
        as_user = ["runuser", "-u", PG_USER, "--"]
    data, log = os.path.join(pg, "data"), os.path.join(pg, "log")
    ctl = as_user + [os.path.join(PG_BIN, "pg_ctl"), "-D", data, "-l", log, "-w"]
    q = None
    started = False
    try:
        rc, _, err = _run(as_user + [os.path.join(PG_BIN, "initdb"), "-D", data, "-A", "trust",
                                     "-U", "postgres"])
        if rc:
            raise RuntimeError("initdb: %s" % err[-400:])
        with open(os.path.join(data, "postgresql.conf"), "a") as f:
            f.write("listen_addresses = ''\nunix_socket_directories = '%s'\njit = on\n"
                    "jit_above_cost = 0\njit_inline_above_cost = -1\n"
                    "jit_optimize_above_cost = -1\njit_debugging_support = on\n" % pg)
        rc, _, err = _run(ctl + ["start"])
        if rc:
            raise RuntimeError("pg_ctl start: %s %s" % (err[-300:], _read(log)[-300:]))
        started = True
        psql = ["psql", "-h", pg, "-U", "postgres", "-Atc"]
        q = subprocess.Popen(psql + ["SELECT pg_sleep(600) FROM generate_series(1, 3) g "
                                     "WHERE g > 0"], stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        pid = None
        for _ in range(200):
            _, out, _ = _run(psql + ["SELECT pid FROM pg_stat_activity WHERE wait_event = "
                                     "'PgSleep' AND query LIKE '%pg_sleep(600)%'"])
            if out.strip():
                pid = int(out.split()[0])
                break
            time.sleep(0.1)
        if not pid:
            raise RuntimeError("no backend in pg_sleep: %s" % _read(log)[-300:])
        yield pid, log
    finally:
        if q:
            q.kill()
            q.wait()
        if started:
            _run(ctl + ["-m", "immediate", "stop"])
        shutil.rmtree(pg, ignore_errors=True)
