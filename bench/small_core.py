#!/usr/bin/env python3
"""bench/small_core.py [BUILD_DIR]: how small a small core is (bench/README.md, "Small cores").

For the demo JIT at a statepoint in two threads, Node.js 20 in three nested optimized
functions (--perf-basic-prof) and a PostgreSQL 15 backend in pg_sleep under a JIT-compiled
expression (tests/lib/held.py holds each), gcore's full core and the small core
`jitmap-core-handler --small PID` writes from it (Node.js: its perf map added to both, as
the handler adds it), each as it is and compressed with zstd (level 3, one thread, as
systemd-coredump stores cores): bytes, the small core's share, the handler's seconds, and whether `jitmap-stack --values --json` prints the same from both.
A program not installed here is left out, said.

Environment: BENCH_ZSTD_LEVEL (3).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
import held  # noqa: E402


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=kw.pop("stdout", subprocess.PIPE),
                          stderr=subprocess.PIPE, timeout=600, **kw)


def zstd_size(path, level):
    p = subprocess.run(["zstd", "-q", "-T1", "-%d" % level, "-c", path],
                       stdout=subprocess.PIPE, timeout=600, check=True)
    return len(p.stdout)


def stacks(stack, core):
    p = run([stack, "--json", "--values", core])
    obj = json.loads(p.stdout)
    obj["process"].pop("core", None)
    obj["process"].pop("small_core", None)
    return obj


def measure(build, work, name, pid, level, add_map):
    handler = os.path.join(build, "jitmap-core-handler")
    full = held.gcore(pid, work, name)
    if add_map:  # the full core as the handler alone writes it: with the perf map
        withmap = full + ".map"
        with open(full, "rb") as i, open(withmap, "wb") as o:
            run([handler, "-q", str(pid)], stdin=i, stdout=o)
        os.replace(withmap, full)
    small = full + ".small"
    t = time.monotonic()
    with open(full, "rb") as i, open(small, "wb") as o:
        p = run([handler, "--small", str(pid)], stdin=i, stdout=o)
    seconds = time.monotonic() - t
    if p.returncode:
        raise RuntimeError("%s: the handler: %s" % (name, p.stderr.decode()))
    return {"full": full, "small": small, "seconds": seconds}


def main():
    build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(TOP, "build-bench"))
    level = int(os.environ.get("BENCH_ZSTD_LEVEL", "3"))
    for tool in ("gcore", "zstd"):
        if not shutil.which(tool):
            sys.exit("bench/small_core.py: %s not found" % tool)
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        subprocess.run(["cmake", "-S", TOP, "-B", build, "-DJITMAP_BUILD_TESTS=OFF"],
                       check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", build, "-j%d" % os.cpu_count(), "--target",
                    "jitmap-stack", "jitmap-core-handler", "jitmap-demo-jit"], check=True,
                   stdout=subprocess.DEVNULL)
    stack = os.path.join(build, "jitmap-stack")
    demo = os.path.join(build, "examples", "llvm-jit", "jitmap-demo-jit")
    work = tempfile.mkdtemp(prefix="jitmap-small-bench.")
    rows = []
    programs = [
        ("demo JIT, 2 threads at a statepoint",
         lambda: held.demo(demo, work, ["--program", "statepoint", "--threads", "2"]), False),
        ("Node.js 20, --perf-basic-prof", lambda: held.node(work), True),
        ("PostgreSQL 15 backend, JIT expression", lambda: held.postgres(work), False),
    ]
    try:
        for label, hold, add_map in programs:
            try:
                with hold() as (pid, _):
                    m = measure(build, work, label.split()[0].lower(), pid, level, add_map)
            except held.Missing as e:
                print("%s: left out (%s)" % (label, e), file=sys.stderr)
                continue
            same = stacks(stack, m["full"]) == stacks(stack, m["small"])
            full, small = os.path.getsize(m["full"]), os.path.getsize(m["small"])
            zfull, zsmall = zstd_size(m["full"], level), zstd_size(m["small"], level)
            rows.append((label, full, small, zfull, zsmall, m["seconds"], same))
            os.unlink(m["full"])
            os.unlink(m["small"])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("| program | full core | small core | share | full, zstd -%d | small, zstd -%d | "
          "share | --small, s | same jitmap-stack --values |" % (level, level))
    print("|---|---|---|---|---|---|---|---|---|")
    for label, full, small, zfull, zsmall, secs, same in rows:
        print("| %s | %s | %s | %.2f%% | %s | %s | %.2f%% | %.2f | %s |" % (
            label, f"{full:,}", f"{small:,}", 100.0 * small / full, f"{zfull:,}",
            f"{zsmall:,}", 100.0 * zsmall / zfull, secs, "yes" if same else "**no**"))
    return 0 if all(r[6] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
