#!/usr/bin/env bash
# bench/scaling.sh [BUILD_DIR]: how jitmap-stack's cost grows (bench/README.md, "How cost
# grows"). One dimension at a time, the others small, on a held demo JIT process:
#   threads       --threads T --depth 8              T in 1 16 256 1024
#   frames        --threads 1 --depth D              D in 10 100 1000 10000
#   JIT entries   --threads 1 --depth 8 --entries E  E in 10 1000 10000 30000 (each of ORC's
#                 objects maps its memory: 10^5 pass Linux's 65,530 mappings a process)
#   perf-map lines: --perf-map=FILE of L lines (none naming the stacks' code), --threads 1
#                 L in 1000 10000 100000 1000000
# And a core: the demo with 2,000 JIT entries, 16 threads of 51 frames, aborted once all hold
# (core_pattern "core"), jitmap-stack CORE against eu-stack -i --core (which names inlined
# frames as jitmap-stack does) and eu-stack --core, alternating, 7 runs each.
#
# jitmap-stack (default mode) BENCH_RUNS times (5) each, the medians of its wall time and of
# its CPU time (user + system); each line's slope is the exponent between its last two points
# (time ~ size^slope: 1 is linear; the first points are mostly fixed costs). Wall time also
# holds the wait for each of the target's threads to reach its stop: with 1,024 threads that
# poll on 2 CPUs, the scheduler's, not jitmap-stack's.
#
# Environment: BENCH_RUNS (5).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-bench}
runs=${BENCH_RUNS:-5}
"$top/scripts/setup.sh" --bench
[ -f "$build/CMakeCache.txt" ] || cmake -S "$top" -B "$build" -DJITMAP_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target jitmap-stack jitmap-demo-jit >/dev/null
build=$(cd "$build" && pwd)
echo "== machine"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1); load: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$build" "$runs" <<'EOF2'
import math, os, re, resource, statistics, subprocess, sys, tempfile, time
build, runs = sys.argv[1], int(sys.argv[2])
stack = os.path.join(build, "jitmap-stack")
demo = os.path.join(build, "examples", "llvm-jit", "jitmap-demo-jit")
work = tempfile.mkdtemp(prefix="jitmap-scaling.")

def hold(args, threads):
    out = os.path.join(work, "demo.out")
    f = open(out, "w")
    p = subprocess.Popen([demo, "--program", "recursion", "--pause", "--threads", str(threads)] + args,
                         stdout=f, stderr=subprocess.STDOUT)
    for _ in range(6000):
        m = re.search(r"holding threads=(\d+) pid=(\d+)", open(out).read())
        if m:
            return p, m.group(2)
        if p.poll() is not None:
            break
        time.sleep(0.05)
    p.kill()
    sys.exit("the demo did not hold: " + open(out).read()[-500:])

def timed(cmd):
    t, c = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        t.append(time.monotonic() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        c.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if r.returncode:
            sys.exit("%s: exit %d" % (cmd, r.returncode))
    return (statistics.median(t) * 1000, statistics.median(c) * 1000), r.stdout

def line(name, points):
    (x0, (w0, c0)), (x1, (w1, c1)) = points[-2], points[-1]
    sw = math.log(w1 / w0) / math.log(x1 / x0)
    sc = math.log(c1 / c0) / math.log(x1 / x0) if c0 > 0 and c1 > 0 else float("nan")
    cells = "<br>".join("%s: %.1f / %.1f ms" % (x, w, c) for x, (w, c) in points)
    print("| %s | %s | %.2f / %.2f |" % (name, cells, sw, sc))

print()
print("| dimension | jitmap-stack, median of %d: wall / CPU | slope: wall / CPU |" % runs)
print("|---|---|---|")
pts = []
for t in (1, 16, 256, 1024):
    p, pid = hold(["--depth", "8"], t)
    ms, out = timed([stack, pid])
    frames = len(re.findall(rb"^\s+#\d+ ", out, re.M))
    pts.append((t, ms))
    p.kill(); p.wait()
line("threads (8-deep recursion each)", pts)
pts = []
for d in (10, 100, 1000, 10000):
    p, pid = hold(["--depth", str(d)], 1)
    ms, out = timed([stack, "--stack-bytes=67108864", pid])
    pts.append((d, ms))
    p.kill(); p.wait()
line("frames (one thread, recursion depth)", pts)
pts = []
for e in (10, 1000, 10000, 30000):
    p, pid = hold(["--depth", "8", "--entries", str(e)], 1)
    ms, _ = timed([stack, pid])
    pts.append((e, ms))
    p.kill(); p.wait()
line("JIT entries", pts)
pts = []
p, pid = hold(["--depth", "8"], 1)
for n in (1000, 10000, 100000, 1000000):
    path = os.path.join(work, "perf-%d.map" % n)
    with open(path, "w") as f:
        for i in range(n):
            f.write("%x 40 JS:*f%d /x/app.js:%d:1\n" % (0x100000000 + 0x40 * i, i, i))
    ms, _ = timed([stack, "--perf-map=" + path, pid])
    pts.append((n, ms))
p.kill(); p.wait()
line("perf-map lines (--perf-map)", pts)

core_dir = os.path.join(work, "core")
os.mkdir(core_dir)
subprocess.run("ulimit -c unlimited; exec %s --entries 2000 --program recursion --depth 44 "
               "--threads 16 --abort" % demo, shell=True, cwd=core_dir,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
cores = [f for f in os.listdir(core_dir) if f == "core" or f.startswith("core.")]
print()
if not cores:
    print("(no core: core_pattern is %s)" % open("/proc/sys/kernel/core_pattern").read().strip())
    sys.exit(0)
core = os.path.join(core_dir, cores[0])
cmds = [("jitmap-stack CORE", [stack, core]),
        ("eu-stack -i --core", ["eu-stack", "-i", "--core", core, "-e", demo]),
        ("eu-stack --core", ["eu-stack", "--core", core, "-e", demo])]
res = {name: [] for name, _ in cmds}
for r in range(7):
    for name, cmd in (cmds if r % 2 == 0 else cmds[::-1]):
        t0 = time.monotonic()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        res[name].append((time.monotonic() - t0) * 1000)
print("| a core: 16 threads x 51 frames, 2,001 JIT entries, 7 runs | wall, ms: median (min-max) |")
print("|---|---|")
for name, _ in cmds:
    v = res[name]
    print("| %s | %.1f (%.1f-%.1f) |" % (name, statistics.median(v), min(v), max(v)))
EOF2
