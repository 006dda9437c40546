#!/usr/bin/env bash
# bench/gdb_paired.sh [BUILD_DIR]: GDB with jitmap against GDB alone on N LLVM JIT objects, in a
# form the machine's load cannot fool (bench/README.md, "GDB with 2,000 objects, paired").
#
# The session: jitmap-demo-jit --objects N (ORC: N modules, N JIT objects, N GDB entries),
# `gdb -batch` from its start to jitmap_demo_safepoint, then `bt`, then exit; in three modes:
# GDB alone, jitmap (default claim mode: the reader declines LLVM's objects), jitmap with
# `set jitmap reader-claim auto` (the reader claims them). BENCH_PAIRS rounds (15), each
# running the three modes back to back in a rotating order; per round, each jitmap mode's
# ratio to GDB alone in the same round (a load that comes and goes moves both of a pair). The
# median ratio and its spread (min-max, and the middle half), for wall time and for CPU time
# (user + system of GDB and what it runs, getrusage).
#
# And a count that does not depend on the load: one session per mode under `perf record -e
# cpu-clock` (software sampling, 4 kHz: the VM has no hardware counters), its samples split
# by where they fell: GDB itself, jitmap's plugin and library (jitmap-reader.so,
# libjitmap.so*), Python (libpython*: jitmap's commands and hooks), the kernel, the rest. The
# share in jitmap's own code says what jitmap costs inside GDB, whatever else the machine does.
#
# BENCH_PARTS=1 adds two modes that split the default mode's cost: the reader plugin alone
# (`jit-reader-load`, no Python: GDB reads each object for the plugin, which declines it) and
# jitmap's Python alone (its commands, event handlers and unwinders, no plugin).
#
# Environment: BENCH_OBJECTS (N, 2000), BENCH_PAIRS (15), BENCH_PERF (1; 0: no sampled
# sessions, for the scaling table), BENCH_PARTS (0), GDB (gdb).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-bench}
objects=${BENCH_OBJECTS:-2000}
pairs=${BENCH_PAIRS:-15}
gdb=${GDB:-gdb}
"$top/scripts/setup.sh" --bench
for tool in "$gdb" cmake python3 perf; do
  command -v "$tool" >/dev/null || { echo "bench/gdb_paired.sh: $tool not found" >&2; exit 1; }
done
[ -f "$build/CMakeCache.txt" ] || cmake -S "$top" -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)" --target jitmap-demo-jit jitmap-reader >/dev/null
build=$(cd "$build" && pwd)
demo=$build/examples/llvm-jit/jitmap-demo-jit
script=$build/share/jitmap/jitmap.gdb
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== machine"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
echo "$("$gdb" --version | head -n 1); load: $(cut -d' ' -f1-3 /proc/loadavg); $objects objects, $pairs rounds"

python3 - "$gdb" "$script" "$demo" "$objects" "$pairs" "$work" "${BENCH_PERF:-1}" \
  "${BENCH_PARTS:-0}" "$build/plugin/jitmap-reader.so" "$top/gdb-scripts" <<'EOF2'
import collections, os, re, resource, statistics, subprocess, sys, time
gdb, script, demo, objects, pairs, work = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
sample = sys.argv[7] != "0"
modes = {
    "alone": [],
    "default": ["-iex", "source " + script],
    "auto": ["-iex", "source " + script, "-iex", "set jitmap reader-claim auto"],
}
if sys.argv[8] == "1":
    modes["reader only"] = ["-iex", "jit-reader-load " + sys.argv[9]]
    modes["Python only"] = ["-iex", "python import sys; sys.path.insert(0, %r); "
                            "import jitmap.gdb_commands" % sys.argv[10]]

def argv(mode):
    return [gdb, "-batch", "-nx", "-iex", "set debuginfod enabled off"] + modes[mode] + [
        "-ex", "break jitmap_demo_safepoint", "-ex", "run", "-ex", "bt",
        "--args", demo, "--objects", str(objects)]

def once(mode):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run(argv(mode), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if "obj_%d" % (objects - 1) not in p.stdout:
        sys.exit("%s: bt does not name obj_%d:\n%s" % (mode, objects - 1, p.stdout[-2000:]))
    return wall, cpu

order = list(modes)
rounds = []
for r in range(pairs):
    got = {}
    for mode in order[r % len(order):] + order[:r % len(order)]:
        got[mode] = once(mode)
    rounds.append(got)

def spread(v):
    v = sorted(v)
    q = statistics.quantiles(v, n=4) if len(v) >= 4 else [v[0], statistics.median(v), v[-1]]
    return "%.2f× (%.2f-%.2f; middle half %.2f-%.2f)" % (statistics.median(v), v[0], v[-1], q[0], q[2])

print()
print("| %d objects, %d rounds | GDB alone: median | ratio to GDB alone in the same round: median (min-max; middle half) |" % (objects, pairs))
print("|---|---|---|")
for k, what in ((0, "wall"), (1, "CPU")):
    base = statistics.median(x["alone"][k] for x in rounds)
    for mode in [m for m in modes if m != "alone"]:
        print("| %s, jitmap %s | %.2f s | %s |" % (what, mode, base, spread([x[mode][k] / x["alone"][k] for x in rounds])))

# Where the time goes, sampled.
if not sample:
    sys.exit(0)
print()
print("| one session, perf cpu-clock samples | GDB | jitmap (plugin, library) | Python | kernel | other | jitmap's share |")
print("|---|---|---|---|---|---|---|")
for mode in modes:
    data = os.path.join(work, "perf-%s.data" % mode)
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", "-o", data, "--"] + argv(mode),
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    rep = subprocess.run(["perf", "report", "-i", data, "--stdio", "--sort", "comm,dso", "-q"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    share = collections.Counter()
    for line in rep.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+(.+?)\s*$", line)
        if not m or m.group(2) != "gdb":
            continue  # the program's own samples (jitmap-demo-jit's comm) are not GDB's
        pct, dso = float(m.group(1)), m.group(3)
        key = ("jitmap" if "jitmap" in dso else "python" if "python" in dso else
               "kernel" if dso.startswith("[kernel") else "gdb" if dso.rstrip("]").endswith("gdb") or dso == "gdb" else "other")
        share[key] += pct
    total = sum(share.values()) or 1
    print("| %s | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% of GDB's |" % (
        mode, share["gdb"], share["jitmap"], share["python"], share["kernel"], share["other"],
        100 * share["jitmap"] / total))
EOF2
