#!/usr/bin/env bash
# bench/freeze.sh [BUILD_DIR]: how long jitmap-stack freezes a live process, against eu-stack
# (bench/README.md, "How long a live process is frozen").
#
# The process: jitmap-demo-jit --entries E --program recursion --depth D --threads T --pause
# (T threads of D + 7 frames, E + 1 JIT entries), with bench/heartbeat.c preloaded: a thread of
# its own that wakes every 100 us and notes each wake more than 500 us late. Each tool runs
# BENCH_RUNS times (7), the tools alternating; for each run, the whole run's time and the
# longest gap the heartbeat noted while it ran (the freeze that thread saw: a tool that stops
# every thread at once stops it all along; one that stops a thread at a time, for its turn).
# The output of jitmap-stack in both modes is compared (the threads hold still: the same).
#
# Environment: BENCH_ENTRIES (2000), BENCH_THREADS (16), BENCH_DEPTH (44), BENCH_RUNS (7).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build-bench}
entries=${BENCH_ENTRIES:-2000}
threads=${BENCH_THREADS:-16}
depth=${BENCH_DEPTH:-44}
runs=${BENCH_RUNS:-7}
"$top/scripts/setup.sh" --bench
for tool in eu-stack python3; do
  command -v "$tool" >/dev/null || { echo "bench/freeze.sh: $tool not found" >&2; exit 1; }
done
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S "$top" -B "$build" -DJITMAP_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target jitmap-stack jitmap-demo-jit heartbeat >/dev/null
build=$(cd "$build" && pwd)
stack=$build/jitmap-stack
demo=$build/examples/llvm-jit/jitmap-demo-jit
work=$(mktemp -d)
pid=
cleanup() { [[ -n $pid ]] && kill -9 "$pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

. "$top/bench/hold.sh"
hold_demo freeze.sh "$work/live.out" "$threads" env LD_PRELOAD="$build/bench/heartbeat.so" \
  HEARTBEAT_FILE="$work/beats" "$demo" --entries "$entries" --program recursion \
  --depth "$depth" --threads "$threads" --pause
grep -q heartbeat /proc/"$pid"/task/*/comm || { echo "bench/freeze.sh: no heartbeat thread" >&2; exit 1; }

echo "== machine"
echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)"
echo "$(eu-stack --version | head -n 1); load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "process: $threads threads x $((depth + 7)) frames, $((entries + 1)) JIT entries, and the heartbeat"

python3 - "$work/beats" "$runs" "$stack" "$pid" "$build/libjitmap.so.1" <<'EOF2'
import ctypes, os, statistics, subprocess, sys, time
beats, runs, stack, pid, libpath = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
tools = [
    ("jitmap-stack (--freeze=thread, the default)", [stack, pid]),
    ("jitmap-stack --freeze=all", [stack, "--freeze=all", pid]),
    ("eu-stack -p", ["eu-stack", "-p", pid]),
    ("eu-stack -i -p", ["eu-stack", "-i", "-p", pid]),
]
outs = {}
res = {name: ([], []) for name, _ in tools}
for r in range(runs):
    for name, cmd in (tools if r % 2 == 0 else tools[::-1]):
        time.sleep(0.05)
        start = os.path.getsize(beats)
        t0 = time.monotonic()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        t1 = time.monotonic()
        time.sleep(0.05)  # the heartbeat notes a gap once it wakes
        with open(beats) as f:
            f.seek(start)
            gaps = [int(line.split()[0]) for line in f if line.strip()]
        res[name][0].append((t1 - t0) * 1000)
        res[name][1].append(max(gaps, default=0) / 1000)
        outs.setdefault(name, p.stdout)
print()
print("| tool | whole run, ms: median (min-max) | longest freeze seen, ms: median (min-max) |")
print("|---|---|---|")
for name, _ in tools:
    w, g = res[name]
    print("| %s | %.1f (%.1f-%.1f) | %.2f (%.2f-%.2f) |" % (
        name, statistics.median(w), min(w), max(w), statistics.median(g), min(g), max(g)))
print("(a freeze under 0.5 ms is not noted: 0)")

# The library's own clock: each thread's stop, from its PTRACE_INTERRUPT to its PTRACE_DETACH
# (jitmap_stopped_thread_info.stopped_ns), in each mode.
class Opts(ctypes.Structure):  # jitmap_stopped_opts (stopped.h)
    _fields_ = [("sz", ctypes.c_size_t), ("exe", ctypes.c_char_p), ("sysroot", ctypes.c_char_p),
                ("max_threads", ctypes.c_size_t), ("flags", ctypes.c_uint),
                ("max_rounds", ctypes.c_uint), ("interrupt", ctypes.c_void_p),
                ("stack_bytes", ctypes.c_size_t), ("debug_dirs", ctypes.c_char_p)]
class Thread(ctypes.Structure):  # jitmap_stopped_thread_info (stopped.h)
    _fields_ = [("tid", ctypes.c_int), ("name", ctypes.c_char_p), ("signal", ctypes.c_int),
                ("error", ctypes.c_int), ("why", ctypes.c_char_p), ("regs", ctypes.c_void_p),
                ("num_gregs", ctypes.c_size_t), ("gregs", ctypes.c_void_p),
                ("stack_lo", ctypes.c_uint64), ("stack_hi", ctypes.c_uint64),
                ("stopped_ns", ctypes.c_uint64), ("stack_cut", ctypes.c_bool),
                ("past_copy", ctypes.c_uint64)]
lib = ctypes.CDLL(libpath)
lib.jitmap_offsetof.restype = ctypes.c_size_t
lib.jitmap_offsetof.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
for cls, cname in ((Opts, b"jitmap_stopped_opts"), (Thread, b"jitmap_stopped_thread_info")):
    for f, _ in cls._fields_:
        if lib.jitmap_offsetof(cname, f.encode()) != getattr(cls, f).offset:
            sys.exit("bench/freeze.sh: %s.%s is not where this script reads it" % (cname, f))
lib.jitmap_stopped_open_pid.restype = ctypes.c_void_p
lib.jitmap_stopped_open_pid.argtypes = [ctypes.c_int, ctypes.POINTER(Opts), ctypes.c_void_p]
lib.jitmap_stopped_num_threads.restype = ctypes.c_size_t
lib.jitmap_stopped_num_threads.argtypes = [ctypes.c_void_p]
lib.jitmap_stopped_thread.restype = ctypes.POINTER(Thread)
lib.jitmap_stopped_thread.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
lib.jitmap_stopped_free.argtypes = [ctypes.c_void_p]
print()
print("| libjitmap, %d opens each | a thread's stop, us: median | longest | stack copied, KiB: max |" % runs)
print("|---|---|---|---|")
for label, flags in (("by thread (JITMAP_STOPPED_BY_THREAD)", 4),
                     ("snapshot (JITMAP_STOPPED_SNAPSHOT)", 8)):
    stops, copied = [], []
    for _ in range(runs):
        o = Opts(sz=ctypes.sizeof(Opts), flags=flags)
        l = lib.jitmap_stopped_open_pid(int(pid), ctypes.byref(o), None)
        for i in range(lib.jitmap_stopped_num_threads(l)):
            t = lib.jitmap_stopped_thread(l, i).contents
            stops.append(t.stopped_ns / 1000)
            copied.append((t.stack_hi - t.stack_lo) / 1024)
        lib.jitmap_stopped_free(l)
        time.sleep(0.05)
    print("| %s | %.0f | %.0f | %.1f |" % (label, statistics.median(stops), max(stops), max(copied)))
same = outs[tools[0][0]] == outs[tools[1][0]]
print("jitmap-stack's output, by thread and all at once: %s" % ("the same" if same else "DIFFERENT"))
EOF2
