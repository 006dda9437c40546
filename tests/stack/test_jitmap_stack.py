#!/usr/bin/env python3
"""jitmap-stack against the demo JIT, live and on cores, every thread.

    tests/stack/test_jitmap_stack.py BUILD_DIR

- live: the demo runs the recursion program in three threads, each held in its first
  safepoint (--threads 3 --pause); jitmap-stack names every JIT frame (recurse, recursion_main,
  their JIT entry), unwinds through them to each thread's start, and leaves the process
  running (never stopped, never traced); eu-stack on the same process is the negative control
  (no name for the JIT frames, and its walk ends at the first of them); one thread stopped at
  a time (the default) and all at once (--freeze=all) give the same stacks and values; a stack
  copied 400 bytes deep (--stack-bytes) ends there and says so;
- a record that holds a call's result (rax) and a value in rbx, stopped inside the call, live
  and on a core: rax unavailable (caller-saved), rbx its value, as in GDB;
- cores: the statepoint and recursion programs in two threads, aborted once both hold: for
  every JIT frame, jitmap-stack's "stackmap" object equals GDB's `info stackmap -json` (less
  "frame") at the same thread and frame, with jitmap.gdb loaded; the GC roots' text;
- what crash pipelines key on, live and on a core: each native frame's module is the file
  whose loaded segment holds its PC, its build_id what eu-readelf -n prints for that file, and
  module_offset its PC less the file's load bias (/proc/PID/maps or the core's NT_FILE, and the
  file's program headers: module_truth.py); each JIT frame, in anonymous memory, has no
  module, build_id nor offset, and its JIT entry as its source;
  code only a perf map names (the hostile inferior's good_fn, its descriptor unreadable) has
  the map as its source, and nothing without the map;
- --max-frames and --max-threads: the frames and threads kept are the first of the whole
  output, what was cut is counted (JSON and text); bad values are usage errors;
- bad input: usage errors (exit 2), a process that does not exist or may not be traced
  (another user's, when the test runs as root), a file that is not a core, a damaged zstd
  core, a truncated core (exit 1, or the stacks that could be read with the problem named; never
  a crash; with --json, one object that keeps the schema with the error); the hostile inferior (tests/hostile/, the modes of modes.py, together and the list
  shapes alone): every problem named as the debuggers' tests expect, good_fn's frame and
  values beside them, the process let go;
- C++ names: a C++ program blocked in a C++ function, with and without -g: its frames named
  as GDB's bt names them (demangled; no signature where DWARF describes the function);
- scripts/stack-demo.sh: its transcript, and no bash report of the processes it kills.

Exits 77 (skipped) when the demo, jitmap-stack, gdb or eu-stack is missing, or cores cannot be
made here.
"""
import glob
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "hostile"))
import modes as H  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
import jsoncontract  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import module_truth as MT  # noqa: E402
from tally import Tally  # noqa: E402

if len(sys.argv) != 2:
    sys.exit("usage: test_jitmap_stack.py BUILD_DIR")
BUILD = os.path.abspath(sys.argv[1])
STACK = os.path.join(BUILD, "jitmap-stack")
DUMP = os.path.join(BUILD, "jitmap-dump")
DEMO = os.path.join(BUILD, "examples", "llvm-jit", "jitmap-demo-jit")
WALK = os.path.join(BUILD, "examples", "stack-walk", "jitmap-stack-walk")
VM = os.path.join(BUILD, "examples", "bytecode-vm", "jitmap-vm")
JITMAP_GDB = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")
HOSTILE = os.path.join(BUILD, H.PROGRAM)
# Problems of a stackmap section: jitmap-stack reads a JIT entry's stackmap only when a frame
# is in its code (JITMAP_PROCESS_LAZY), so it says nothing of these beside good_fn.
LAZY_MODES = {"wild-sections", "stackmap-counts", "stackmap-version"}
TIMEOUT = 120

T = Tally("test-jitmap-stack")
check, skip = T.check, T.skip


def run(args, **kw):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=TIMEOUT, **kw)


def state(pid):
    """The process's state letter (/proc/PID/stat): 't' or 'T' when stopped."""
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def tracer(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"^TracerPid:\s+(\d+)", f.read(), re.M).group(1))


for path in (STACK, DEMO):
    if not os.access(path, os.X_OK):
        skip("%s not built" % path)
GDB = shutil.which("gdb")
EU_STACK = shutil.which("eu-stack")
if not GDB or not EU_STACK:
    skip("gdb and eu-stack (elfutils) are needed")

WORK = tempfile.mkdtemp(prefix="jitmap-stack-test.")
READELF = shutil.which("eu-readelf") or shutil.which("readelf")


# -- What crash pipelines key on: build IDs and module offsets --

_build_ids = {}


def file_build_id(path):
    """The GNU build ID eu-readelf -n prints for the file at `path` (None: none)."""
    if path not in _build_ids:
        m = re.search(r"Build ID: ([0-9a-f]+)", run([READELF, "-n", path]).stdout)
        _build_ids[path] = m.group(1) if m else None
    return _build_ids[path]


def module_ids(what, d, maps):
    """Every native frame of jitmap-stack's JSON `d`: its module is the file whose loaded
    segment holds its PC, build_id is what readelf -n prints for that file, and module_offset
    is the PC less the file's load bias (`maps`: module_truth's live_maps or core_maps, read
    without jitmap); every JIT frame, in anonymous memory: no module, build_id nor offset, and
    a JIT entry as its source."""
    frames = [f for t in d["threads"] for f in t["frames"]]
    wrong, seen = [], set()
    for f in frames:
        if f["jit"]:
            if (f["module"], f["build_id"], f["module_offset"], f["source"]) != (
                    None, None, None, {"kind": "jit-entry", "path": None}) or not f["jit_entry"]:
                wrong.append(f)
            continue
        want = MT.expected(maps, f)
        got = (f["module"], f["build_id"], f["module_offset"])
        path = next((w[3][1] for w in want if w[:3] == got and w[0]), None)
        if (f["source"] is not None or not path or not file_build_id(path) or
                f["build_id"] != file_build_id(path)):
            wrong.append(dict(f, want=[w[:3] for w in want]))
        else:
            seen.add(f["module"])
    anon = MT.anonymous_pcs(d, maps)
    check(len(seen) >= 2 and any(f["jit"] for f in frames) and not wrong and anon and
          all(f["jit"] for f in anon),
          "%s: native frames' build_id as readelf -n says and module_offset = pc less the load "
          "bias (modules %s), JIT frames (%d in anonymous memory) no module and their JIT entry "
          "as source (first wrong: %s)" % (what, sorted(seen), len(anon),
                                           json.dumps(wrong[:1])[:800]))


# -- Live --


def hold(args, threads):
    """Start the demo with --threads N --pause; return (process, pid) once all N hold."""
    out = open(os.path.join(WORK, "live.out"), "w")
    p = subprocess.Popen([DEMO, "--threads", str(threads), "--pause"] + args, stdout=out,
                         stderr=subprocess.STDOUT)
    deadline = time.time() + TIMEOUT
    while time.time() < deadline:
        with open(out.name) as f:
            m = re.search(r"holding threads=(\d+) pid=(\d+)", f.read())
        if m:
            return p, int(m.group(2)), int(m.group(1))
        if p.poll() is not None:
            break
        time.sleep(0.05)
    p.kill()
    with open(out.name) as f:
        sys.exit("the demo did not hold its threads:\n" + f.read())


def jit_frames(thread):
    return [f for f in thread["frames"] if f["jit"]]


def live():
    depth = 8
    p, pid, held = hold(["--program", "recursion", "--depth", str(depth)], 3)
    try:
        check(held == 3, "live: the demo holds 3 threads (%d)" % held)
        r = run([STACK, "--json", str(pid)])
        check(r.returncode == 0, "live: exit 0 (%d: %s)" % (r.returncode, r.stderr.strip()))
        check(state(pid) not in "tT" and tracer(pid) == 0,
              "live: the process runs again, untraced, after jitmap-stack (state %s)" % state(pid))
        d = jsoncontract.loads(r.stdout, "jitmap-stack")
        check(d["process"]["pid"] == pid and d["process"]["live"] and d["problems"] == [],
              "live: the process object (%s), no problems (%s)" % (d["process"], d["problems"]))
        check(len(d["threads"]) == 4, "live: 4 threads (%d)" % len(d["threads"]))
        holders = [t for t in d["threads"] if jit_frames(t)]
        check(len(holders) == 3, "live: 3 threads in JIT code (%d)" % len(holders))
        entries = set()
        for t in holders:
            names = [f["function"] for f in t["frames"]]
            want = ["recurse"] * (depth + 1) + ["recursion_main"]
            got = [f["function"] for f in jit_frames(t)]
            check(got == want, "live: thread %d's JIT frames are %s (%s)" % (t["tid"], want, got))
            check(names[3] == "jitmap_demo_safepoint" and
                  names[4 + depth + 2:4 + depth + 5] == ["run_recursion", "job_main",
                                                         "start_thread"],
                  "live: thread %d: the safepoint above, run_recursion, job_main and "
                  "start_thread below the JIT frames (%s)" % (t["tid"], names))
            check(all(f["module"] is None and f["jit_entry"] for f in jit_frames(t)),
                  "live: thread %d: JIT frames have an entry, no module" % t["tid"])
            entries |= {f["jit_entry"] for f in jit_frames(t)}
            check(t["frames"][-1]["function"] in ("__clone3", "clone3", "clone"),
                  "live: thread %d is unwound to its start (%s)" % (t["tid"], names[-1]))
            check(all("error" not in f for f in t["frames"]),
                  "live: thread %d: no frame says unwinding failed" % t["tid"])
        check(len(entries) == 1, "live: one JIT entry for every JIT frame (%s)" % entries)
        module_ids("live", d, MT.live_maps(pid))

        # The text output, and --values: record 400's values at each recurse frame.
        r = run([STACK, "--values", str(pid)])
        check(r.returncode == 0 and re.search(r"^  #4 +0x[0-9a-f]+ in recurse \[JIT entry 0x",
                                              r.stdout, re.M),
              "live: text names the JIT frames:\n" + r.stdout[:800])
        check(r.stdout.count("record 400 at") == 3 * depth and
              r.stdout.count("record 401 at") == 3,
              "live: --values shows record 401 (innermost recurse) and 400 (the others) "
              "in every thread")

        # One thread stopped at a time (the default) against every thread at once: the
        # threads hold still, so the same stacks and values; the stacks copied 400 bytes deep
        # end there, and say so.
        # The held threads poll every 10 ms: compared from their first JIT frame down (what
        # is above it may be caught in the poll's own code).
        def held_frames(out):
            got = {}
            for t in jsoncontract.loads(out, "jitmap-stack")["threads"]:
                jit = [k for k, f in enumerate(t["frames"]) if f["jit"]]
                if jit:
                    got[t["tid"]] = [(f["function"], f["pc"], f.get("stackmap"))
                                     for f in t["frames"][jit[0]:]]
            return got
        by = run([STACK, "--json", "--values", "--gc-roots", str(pid)])
        every = run([STACK, "--json", "--values", "--gc-roots", "--freeze=all", str(pid)])
        check(by.returncode == 0 and every.returncode == 0 and len(held_frames(by.stdout)) == 3
              and held_frames(by.stdout) == held_frames(every.stdout),
              "live: --freeze=thread and --freeze=all give the same JIT frames, callers and "
              "values")
        check(state(pid) not in "tT" and tracer(pid) == 0,
              "live: the process runs again, untraced, after --freeze=all")
        r = run([STACK, "--json", "--stack-bytes=400", str(pid)])
        shallow = jsoncontract.loads(r.stdout, "jitmap-stack")
        cut = [t for t in shallow["threads"] if jit_frames(t)]
        check(len(cut) == 3, "live: --stack-bytes=400: 3 threads reach JIT frames (%d)" % len(cut))
        for t in cut:
            last = t["frames"][-1]
            check(len(t["frames"]) < 4 + depth + 5 and "its stack was copied only up to" in
                  (last.get("error") or "") and "(--stack-bytes)" in last["error"],
                  "live: thread %d, --stack-bytes=400: the walk ends where the copy does, and "
                  "says so (%s)" % (t["tid"], last.get("error")))
        r = run([STACK, "--freeze=some", str(pid)])
        check(r.returncode == 2 and "--freeze 'some': 'thread' or 'all'" in r.stderr,
              "live: --freeze=some is a usage error (%s)" % r.stderr.strip())

        # The negative control: elfutils alone.
        e = run([EU_STACK, "-p", str(pid)])
        jit_pcs = {int(f["pc"], 16) for t in holders for f in jit_frames(t)}
        unnamed = [m for m in re.finditer(r"^#\d+\s+0x([0-9a-f]+)\s*$", e.stdout, re.M)
                   if int(m.group(1), 16) in jit_pcs]
        named = [m for m in re.finditer(r"^#\d+\s+0x[0-9a-f]+\s+(recurse|recursion_main)\b",
                                        e.stdout, re.M)]
        check(unnamed and not named, "control: eu-stack shows the JIT frames without names")
        check("job_main" not in e.stdout,
              "control: eu-stack does not get past the JIT frames to job_main")
        check(state(pid) not in "tT", "live: the process runs after eu-stack too")
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()


# -- Cores --


def make_core(name, args, program=None):
    d = os.path.join(WORK, name)
    os.makedirs(d)

    def limits():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    cmd = [program] + args if program else [DEMO, "--threads", "2", "--abort"] + args
    with open(os.path.join(d, "out"), "w") as out:
        p = subprocess.run(cmd, stdout=out,
                           stderr=subprocess.STDOUT, cwd=d, preexec_fn=limits, timeout=TIMEOUT)
    cores = [c for c in os.listdir(d) if c == "core" or c.startswith("core.")]
    if p.returncode not in (-6, 134) or not cores:
        with open("/proc/sys/kernel/core_pattern") as f:
            skip("no core file from the demo (exit %d; core_pattern %r)" %
                 (p.returncode, f.read().strip()))
    return os.path.join(d, cores[0])


GDB_SCRIPT = """source %(jitmap_gdb)s
python
import json
pcs = set(%(pcs)r)
for th in gdb.selected_inferior().threads():
    th.switch()
    f, level = gdb.newest_frame(), 0
    while f is not None and level < 200:
        if f.pc() in pcs:
            f.select()
            out = gdb.execute("info stackmap -json", to_string=True)
            print("STACKMAP %%d %%d %%s" %% (th.ptid[1], level, out.strip()))
        f, level = f.older(), level + 1
end
"""


def gdb_stackmaps(core, pcs, program=DEMO):
    """{(tid, level): info stackmap -json without "frame"} for GDB's frames at `pcs`."""
    script = os.path.join(os.path.dirname(core), "parity.gdb")
    with open(script, "w") as f:
        f.write(GDB_SCRIPT % {"jitmap_gdb": JITMAP_GDB, "pcs": sorted(pcs)})
    r = run([GDB, "-batch", "-nx", "-x", script, program, core])
    got = {}
    for line in r.stdout.splitlines():
        if line.startswith("STACKMAP "):
            _, tid, level, text = line.split(" ", 3)
            obj = jsoncontract.loads(text, "frame")
            obj.pop("frame")
            got[(int(tid), int(level))] = obj
    return got


def core_parity(name, args, want_jit):
    core = make_core(name, args)
    r = run([STACK, "--json", "--values", "--gc-roots", core])
    check(r.returncode == 0, "%s core: exit 0 (%d: %s)" % (name, r.returncode, r.stderr.strip()))
    d = jsoncontract.loads(r.stdout, "jitmap-stack")
    check(not d["process"]["live"] and d["process"]["core"] == core and len(d["threads"]) == 3,
          "%s core: a core of 3 threads (%s)" % (name, d["process"]))
    frames = [(t["tid"], f) for t in d["threads"] for f in jit_frames(t)]
    check(sorted({f["function"] for _, f in frames}) == sorted(want_jit),
          "%s core: JIT functions %s (%s)" % (name, want_jit, {f["function"] for _, f in frames}))
    g = gdb_stackmaps(core, {int(f["pc"], 16) for _, f in frames})
    mismatched = []
    for tid, f in frames:
        k = (tid, f["index"])
        if g.get(k) != f["stackmap"]:
            mismatched.append((k, g.get(k), f["stackmap"]))
    check(len(frames) > 0 and not mismatched,
          "%s core: every JIT frame's stackmap object equals GDB's info stackmap -json "
          "(%d frames; first mismatch: %s)" % (name, len(frames),
                                               json.dumps(mismatched[:1])[:1500]))
    check(len(g) >= len(frames), "%s core: GDB saw all %d JIT frames (%d)" % (
        name, len(frames), len(g)))
    return core, d


def cores():
    core, d = core_parity("statepoint", ["--program", "statepoint"], ["statepoint_main"])
    sp_doc = d
    sp = [f["stackmap"] for t in d["threads"] for f in jit_frames(t)]
    check(all(s["record"]["id"] == 300 and s["statepoint"] and len(s["statepoint"]["gc_roots"]) == 3
              for s in sp), "statepoint core: record 300 decoded as a statepoint with 3 GC roots")
    r = run([STACK, "--gc-roots", core])
    rows = [l.split() for l in r.stdout.splitlines()
            if re.match(r"^ {4}#\d+ +statepoint_main +300 ", l)]
    check(len(rows) == 6 and any(row[-1] == "16" for row in rows) and
          r.stdout.count("base (slot = value)") == 2,
          "statepoint core: --gc-roots text shows the table of `info gc-roots`, 3 roots in "
          "each thread, a derived pointer at offset 16:\n" + r.stdout[:1500])
    core_parity("recursion", ["--program", "recursion", "--depth", "5"],
                ["recurse", "recursion_main"])
    crash_reporter(core, sp_doc)
    module_ids("statepoint core", sp_doc, MT.core_maps(core))
    limits(core, sp_doc)
    return core


def limits(core, full):
    """--max-frames and --max-threads on the statepoint core (`full`: its JSON with --values
    --gc-roots and no limit): the first frames and threads of the whole output, and what was
    cut counted, in JSON and in text; values that are no whole number from 1 are usage
    errors."""
    args = [STACK, "--json", "--values", "--gc-roots"]
    check("threads_cut" not in full and not any("frames_cut" in t for t in full["threads"]),
          "limits: without the options, no threads_cut and no frames_cut")
    r = run(args + ["--max-frames", "3", core])
    d = jsoncontract.loads(r.stdout, "jitmap-stack") if r.returncode == 0 else {"threads": []}
    want = [(t["tid"], t["frames"][:3], len(t["frames"]) - 3) for t in full["threads"]]
    got = [(t["tid"], t["frames"], t.get("frames_cut")) for t in d["threads"]]
    check(r.returncode == 0 and got == want and all(len(t["frames"]) == 3 for t in d["threads"])
          and all(cut > 0 for _, _, cut in want) and "threads_cut" not in d,
          "limits: --max-frames 3 keeps each thread's first 3 frames and counts the rest "
          "(%s; want %s)" % ([(tid, len(f), c) for tid, f, c in got],
                             [(tid, len(f), c) for tid, f, c in want]))
    r = run(args + ["--max-frames", "1000", core])
    d = jsoncontract.loads(r.stdout, "jitmap-stack") if r.returncode == 0 else {"threads": []}
    check([(t["frames"], t.get("frames_cut")) for t in d["threads"]] ==
          [(t["frames"], 0) for t in full["threads"]],
          "limits: --max-frames 1000 cuts nothing, and says 0")
    r = run(args + ["--max-threads", "1", core])
    d = jsoncontract.loads(r.stdout, "jitmap-stack") if r.returncode == 0 else {"threads": []}
    check(d["threads"] == full["threads"][:1] and d.get("threads_cut") == 2 and
          "abort" in [f["function"] for f in d["threads"][0]["frames"]],
          "limits: --max-threads 1 keeps the thread that aborted, and says 2 more (%s, %s)" % (
              [t["tid"] for t in d["threads"]], d.get("threads_cut")))
    r = run([STACK, "--max-threads", "1", "--max-frames", "3", core])
    cut = len(full["threads"][0]["frames"]) - 3
    check(r.returncode == 0 and r.stdout.count("\nthread ") == 1 and
          len(re.findall(r"^  #\d", r.stdout, re.M)) == 3 and
          "\n  (%d more frames not shown: --max-frames 3)\n" % cut in r.stdout and
          "\n(2 more threads not shown: --max-threads 1)\n" in r.stdout,
          "limits: the text shows 1 thread, 3 frames, and says what was cut:\n" + r.stdout)
    r = run([STACK, core])
    check(r.returncode == 0 and "not shown" not in r.stdout and r.stdout.count("\nthread ") == 3,
          "limits: without the options, the text cuts nothing")
    for opt, value in (("--max-frames", "0"), ("--max-frames", "-1"), ("--max-frames", "abc"),
                       ("--max-frames", ""), ("--max-threads", "3x"), ("--max-threads", "0")):
        r = run([STACK, "--json", opt, value, core])
        check(r.returncode == 2 and r.stdout == "" and
              "%s '%s': not a whole number from 1" % (opt, value) in r.stderr,
              "limits: %s %r is a usage error, no JSON (%d: %s)" % (
                  opt, value, r.returncode, r.stderr.strip()))


def signed(u):
    return u - (1 << 64) if u >= 1 << 63 else u


def crash_reporter(core, d):
    """examples/stack-walk (libjitmap alone, its own CFI for native code) on the same core:
    the same JIT frames and record values as jitmap-stack."""
    if not os.access(WALK, os.X_OK):
        check(False, "%s not built" % WALK)
        return
    r = run([WALK, core])
    check(r.returncode == 0, "stack-walk: exit 0 (%d: %s)" % (r.returncode, r.stderr))
    want = {}
    for t in d["threads"]:
        for f in jit_frames(t):
            want[(t["tid"], f["pc"])] = [signed(l["value"]) for l in f["stackmap"]["locations"]]
    got, tid = {}, None
    lines = r.stdout.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"thread (\d+):", line)
        if m:
            tid = int(m.group(1))
        m = re.match(r"\s+#\d+\s+(0x[0-9a-f]+) statepoint_main \[JIT\]", line)
        if m and i + 1 < len(lines):
            vals = re.match(r"\s+record 300: (.*)", lines[i + 1])
            got[(tid, "0x%x" % int(m.group(1), 16))] = (
                [int(v) for v in vals.group(1).split()] if vals else None)
    check(got == want and len(got) == 2, "stack-walk: the same JIT frames and values as "
          "jitmap-stack (%s against %s)" % (got, want))
    check(r.stdout.count("job_main") == 2, "stack-walk: native frames unwound past the JIT "
          "frames with libjitmap's CFI:\n" + r.stdout)


# -- A record that holds a call's result --

# The demo's recursion entry, replaced (--ir): a call into the runtime whose record, at the
# return address, holds the call's result in rax (llc-14 -O2: register 0) and a value live
# across the call in rbx (register 3). Stopped inside that call, rax has no value yet.
CALL_RESULT_IR = r"""
declare i64 @jitmap_demo_safepoint(i64)
declare i32 @printf(i8*, ...)
declare void @llvm.experimental.stackmap(i64, i32, ...)

@fmt = private unnamed_addr constant [42 x i8] c"jitmap-demo: call-result id=402 keep=%ld\0A\00"

define i64 @recursion_main(i64 %depth) noinline {
entry:
  %keep = mul i64 %depth, 1000003
  %f = getelementptr [42 x i8], [42 x i8]* @fmt, i64 0, i64 0
  call i32 (i8*, ...) @printf(i8* %f, i64 %keep)
  %r = call i64 @jitmap_demo_safepoint(i64 402)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 402, i32 0, i64 %r, i64 %keep)
  %s = add i64 %r, %keep
  ret i64 %s
}
"""


def call_result_frames(what, doc, out):
    """Every JIT frame of jitmap-stack's JSON `doc` is recursion_main at record 402: rax (the
    call's result) unavailable as caller-saved, as GDB and LLDB say, never the innermost
    frame's rax (elfutils reports it "same value"); rbx the program's keep= value."""
    keep = [int(k) for k in re.findall(r"call-result id=402 keep=(\d+)", out)]
    frames = [f for t in doc["threads"] for f in jit_frames(t)]
    check(frames and keep and len(set(keep)) == 1,
          "%s: JIT frames (%d) and the truth line (%s)" % (what, len(frames), keep))
    for f in frames:
        sm = f.get("stackmap") or {}
        locs = sm.get("locations") or []
        ok = ((sm.get("record") or {}).get("id") == 402 and len(locs) == 2 and
              locs[0]["where"] == "rax" and locs[0]["value"] is None and
              "caller-saved" in locs[0].get("error", "") and
              locs[1]["where"] == "rbx" and keep and locs[1]["value"] == keep[0])
        check(ok, "%s: record 402: rax unavailable (caller-saved), rbx %s (%s)" % (
            what, keep, json.dumps(locs)))


def call_result():
    ir = os.path.join(WORK, "call_result.ll")
    with open(ir, "w") as f:
        f.write(CALL_RESULT_IR)
    args = ["--program", "recursion", "--depth", "7", "--ir", ir]
    p, pid, held = hold(args, 1)
    try:
        r = run([STACK, "--json", "--values", str(pid)])
        check(r.returncode == 0, "call result, live: exit 0 (%d: %s)" % (r.returncode, r.stderr))
        with open(os.path.join(WORK, "live.out")) as f:
            out = f.read()
        if r.returncode == 0:
            call_result_frames("call result, live", jsoncontract.loads(r.stdout, "jitmap-stack"), out)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    # On a core (two threads held in the call), and equal to GDB's info stackmap -json.
    core, d = core_parity("call-result", args, ["recursion_main"])
    with open(os.path.join(os.path.dirname(core), "out")) as f:
        call_result_frames("call result, core", d, f.read())


# -- Bad input --


def bad_input(core):
    r = run([STACK])
    check(r.returncode == 2 and "a PID or a core file is needed" in r.stderr,
          "usage: no target, exit 2 (%d: %s)" % (r.returncode, r.stderr))
    r = run([STACK, "--bogus", "1"])
    check(r.returncode == 2, "usage: unknown option, exit 2 (%d)" % r.returncode)
    r = run([STACK, "1", "2"])
    check(r.returncode == 2 and "one PID or core file at a time" in r.stderr,
          "usage: two targets, exit 2 (%d: %s)" % (r.returncode, r.stderr))
    # A PID no process has: one that just exited.
    p = subprocess.Popen(["true"])
    p.wait()
    r = run([STACK, str(p.pid)])
    check(r.returncode == 1 and "no process %d" % p.pid in r.stderr,
          "a process that does not exist: exit 1, named (%d: %s)" % (r.returncode, r.stderr))
    json_error("a process that does not exist", [str(p.pid)], "no process %d" % p.pid)
    # A process it may not trace (another user's): exit 1, why, and the process untouched.
    if os.geteuid() == 0 and shutil.which("setpriv"):
        # The build tree may be in a folder only its owner enters (a clone in mktemp -d): the
        # other user runs a copy of jitmap-stack and libjitmap it can read.
        mine = tempfile.mkdtemp(prefix="jitmap-stack-other-user-")
        os.chmod(mine, 0o755)
        for f in [STACK] + glob.glob(os.path.join(BUILD, "libjitmap.so*")):
            shutil.copy2(f, mine)
        victim = subprocess.Popen(["sleep", "60"])
        try:
            r = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env",
                     "LD_LIBRARY_PATH=" + mine, os.path.join(mine, "jitmap-stack"),
                     str(victim.pid)])
            check(r.returncode == 1 and "cannot trace process %d" % victim.pid in r.stderr and
                  "Operation not permitted" in r.stderr,
                  "not allowed to trace: exit 1, why (%d: %s)" % (r.returncode, r.stderr))
            json_error("not allowed to trace", [str(victim.pid)], "Operation not permitted",
                       ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env",
                        "LD_LIBRARY_PATH=" + mine, os.path.join(mine, "jitmap-stack")])
            check(victim.poll() is None and state(victim.pid) not in "tT",
                  "not allowed to trace: the process runs on")
        finally:
            victim.kill()
            victim.wait()
            shutil.rmtree(mine, ignore_errors=True)
    r = run([STACK, DEMO])
    check(r.returncode == 1 and DEMO in r.stderr and "core" in r.stderr,
          "not a core: exit 1, the file named (%d: %s)" % (r.returncode, r.stderr))
    json_error("not a core", [DEMO], DEMO + ": not a 64-bit core file")
    bad_zst = os.path.join(WORK, "damaged.core.zst")
    with open(bad_zst, "wb") as f:
        f.write(b"\x28\xb5\x2f\xfd" + b"\x00\x00 not a zstd frame " * 8)
    json_error("a damaged zstd core", [bad_zst], "not a zstd stream")
    with open(core, "rb") as f:
        head = f.read(1 << 20)
    cut = os.path.join(WORK, "truncated.core")
    with open(cut, "wb") as f:
        f.write(head)
    r = run([STACK, "--json", "--values", cut])
    ok = r.returncode == 1 and cut in r.stderr
    if r.returncode == 0:
        d = jsoncontract.loads(r.stdout, "jitmap-stack")
        ok = any("truncated" in p or "not dumped" in p or "past the end" in p
                 for p in d["problems"])
    check(ok and r.returncode in (0, 1) and "Traceback" not in r.stderr,
          "a truncated core: exit 1, or the stacks with the problem named (%d: %s %s)" % (
              r.returncode, r.stderr.strip(), r.stdout[-500:]))
    with open(cut, "wb") as f:
        f.write(head[:100])
    r = run([STACK, cut])
    check(r.returncode == 1 and "no thread's registers could be read" in r.stderr and
          "truncated" in r.stderr,
          "a core cut after 100 bytes: exit 1, why (%d: %s)" % (r.returncode, r.stderr))
    d = json_error("a core cut after 100 bytes", [cut], "no thread's registers could be read")
    check(d and any("truncated" in p for p in d["problems"]),
          "a core cut after 100 bytes, --json: the problems say it is truncated (%s)" % (
              d and d["problems"]))


def json_error(what, args, needle, tool=None):
    """jitmap-stack --json on a target it cannot read: exit 1, one object on stdout that keeps
    the schema, with process null, no threads and the error (`needle` in it), and the same
    message on stderr. The object, or None."""
    r = run((tool or [STACK]) + ["--json"] + args)
    try:
        d = jsoncontract.loads(r.stdout, "jitmap-stack")
    except ValueError as e:
        check(False, "%s, --json: one object that keeps the schema (%s): %r" % (what, e, r.stdout))
        return None
    check(r.returncode == 1 and d["process"] is None and d["threads"] == [] and
          needle in d.get("error", "") and "jitmap-stack: " + d["error"] in r.stderr,
          "%s, --json: exit 1, process null, the error %r, said on stderr too (%d: %s; %s)" % (
              what, needle, r.returncode, r.stdout.strip(), r.stderr.strip()))
    return d


def hostile(modes):
    """jitmap-stack on jitmap-hostile --pause MODES: the problems and good_fn's frame."""
    out_path = os.path.join(WORK, "hostile-%s.out" % "-".join(modes)[:60])
    out = open(out_path, "w")
    p = subprocess.Popen([HOSTILE, "--pause"] + modes, stdout=out, stderr=subprocess.STDOUT)
    try:
        pid = None
        deadline = time.time() + TIMEOUT
        while time.time() < deadline and p.poll() is None:
            with open(out_path) as f:
                m = re.search(r"paused pid=(\d+)", f.read())
            if m:
                pid = int(m.group(1))
                break
            time.sleep(0.05)
        if not check(pid, "hostile %s: the program pauses" % modes):
            return
        with open(out_path) as f:
            truth = f.read()
        r = run([STACK, "--json", "--values", str(pid)])
        what = "hostile %s" % " ".join(modes)
        check(r.returncode == 0, "%s: exit 0 (%d: %s)" % (what, r.returncode, r.stderr))
        check(state(pid) not in "tT" and tracer(pid) == 0, "%s: the process is let go" % what)
        d = jsoncontract.loads(r.stdout, "jitmap-stack")
        problems = "\n".join(d["problems"])
        for mode in modes:
            rx = H.problem_re(mode, truth, together=len(modes) > 1)
            if rx is None or mode in LAZY_MODES:
                continue
            check(rx.search(problems), "%s: %s is named: /%s/ in:\n%s" % (
                what, mode, rx.pattern, problems))
        frames = d["threads"][0]["frames"]
        names = [f["function"] for f in frames]
        good = [f for f in frames if f["function"] == H.GOOD["function"]]
        if not all(H.BY_NAME[m].good for m in modes):
            # The list cannot be read: good_fn is unknown code, and the stack ends there.
            check("hostile_stop" in names and not good and frames[-1].get("error"),
                  "%s: the walk stops at the unknown code, saying why (%s)" % (
                      what, json.dumps(frames[-1])[:400]))
        else:
            check(H.ends_with_frames(names), "%s: %s (%s)" % (what, H.FRAMES, names))
            sm = good[0]["stackmap"] if good else None
            locs = {l["where"]: l for l in sm["locations"]} if sm and sm["record"] else {}
            check(good and good[0]["jit"] and sm and sm["record"]["id"] == H.GOOD["record"] and
                  locs.get("rbx", {}).get("value") == H.GOOD["rbx"] and
                  locs.get("rdi", {}).get("value", 0) is None and
                  "caller-saved" in locs.get("rdi", {}).get("error", ""),
                  "%s: good_fn is a JIT frame at record 5, rbx 4242, rdi unavailable (%s)" % (
                      what, json.dumps(good)[:800]))
    finally:
        p.kill()
        p.wait()
        out.close()


def perf_map_source():
    """Code only a perf map names: the hostile inferior's good_fn, whose JIT descriptor cannot
    be read (mode version). With a map naming it, its frame is a JIT frame whose source is the
    map; without, no frame is named so or has a source (the control)."""
    out_path = os.path.join(WORK, "hostile-perfmap.out")
    out = open(out_path, "w")
    p = subprocess.Popen([HOSTILE, "--pause", "version"], stdout=out, stderr=subprocess.STDOUT)
    try:
        pid, code = None, None
        deadline = time.time() + TIMEOUT
        while time.time() < deadline and p.poll() is None and not pid:
            with open(out_path) as f:
                text = f.read()
            m = re.search(r"paused pid=(\d+)", text)
            c = re.search(r"good name=good_fn .*code=0x([0-9a-f]+)", text)
            pid, code = (int(m.group(1)), c.group(1)) if m and c else (None, None)
            time.sleep(0.05)
        if not check(pid, "perf map source: the hostile inferior pauses"):
            return
        pm = os.path.join(WORK, "good_fn.map")
        with open(pm, "w") as f:
            f.write("%s 100 good_fn_from_map\n" % code)
        r = run([STACK, "--json", "--perf-map", pm, str(pid)])
        d = jsoncontract.loads(r.stdout, "jitmap-stack") if r.returncode == 0 else {"threads": []}
        frames = [f for t in d["threads"] for f in t["frames"]]
        named = [f for f in frames if f["function"] == "good_fn_from_map"]
        check(len(named) == 1 and named[0]["jit"] and
              named[0]["source"] == {"kind": "perf-map", "path": pm} and
              named[0]["named_by"] == "perf map " + pm and named[0]["build_id"] is None and
              named[0]["module_offset"] is None and
              all(f["source"] is None for f in frames if not f["jit"]),
              "perf map source: good_fn's frame is JIT code whose source is the map %s (%s)" % (
                  pm, json.dumps(named)[:600]))
        r = run([STACK, "--json", str(pid)])
        d = jsoncontract.loads(r.stdout, "jitmap-stack") if r.returncode == 0 else {"threads": []}
        frames = [f for t in d["threads"] for f in t["frames"]]
        check(r.returncode == 0 and frames and
              not any(f["source"] or f["function"] == "good_fn_from_map" for f in frames),
              "perf map source, control: without the map, no frame has a source")
    finally:
        p.kill()
        p.wait()
        out.close()


def hostiles():
    if not os.access(HOSTILE, os.X_OK):
        check(False, "%s not built" % HOSTILE)
        return
    perf_map_source()
    hostile(H.TOGETHER)
    for mode in ("self", "wild-next", "long", "version", "huge"):
        hostile([mode])


def vm_core():
    """jitmap-vm's core at its compiled code's safepoint: the interpreter frames its JIT
    registered (deopt layouts in the registered image), in the JSON equal to GDB's info
    stackmap -json and to what the interpreter had there (truth lines), and in the text."""
    if not os.path.exists(VM):
        print("SKIP vm core: %s not built (needs llvm-config-14)" % VM)
        return
    core = make_core("vm", ["--n", "6", "--stop-at", "4", "--abort"], VM)
    with open(os.path.join(os.path.dirname(core), "out")) as f:
        out = f.read()
    want = []
    for line in out.splitlines():
        if line.startswith("jitmap-vm: vframe "):
            t = dict(kv.split("=", 1) for kv in line.split()[2:])
            want.append((t["method"], int(t["bci"]),
                         [(k, int(v)) for k, v in t.items()
                          if k not in ("call", "site", "k", "method", "bci", "stack")],
                         [int(v) for v in t["stack"].split(",") if v]))
    check(len(want) == 2 and "tiers agree" in out, "vm core: the program's truth: %s" % want)
    r = run([STACK, "--json", "--values", core])
    check(r.returncode == 0, "vm core: exit 0 (%d: %s)" % (r.returncode, r.stderr.strip()))
    d = jsoncontract.loads(r.stdout, "jitmap-stack")
    frames = [f for t in d["threads"] for f in jit_frames(t)]
    check(len(frames) == 1 and frames[0]["function"] == "jit.Demo.sumSquares",
          "vm core: one JIT frame, the compiled method (%s)" % [f["function"] for f in frames])
    sm = frames[0]["stackmap"] if frames else {}
    got = [(f["method"], f["bci"], [(l.get("name"), l["value"]) for l in f["locals"]],
            [l["value"] for l in f["stack"]]) for f in sm.get("virtual_frames", [])]
    check(got == want, "vm core: virtual frames %s, the interpreter had %s" % (got, want))
    g = gdb_stackmaps(core, {int(frames[0]["pc"], 16)} if frames else set(), VM)
    theirs = list(g.values())[0] if len(g) == 1 else {}
    diff = {k: (theirs.get(k), sm.get(k)) for k in set(theirs) | set(sm) if theirs.get(k) != sm.get(k)}
    check(len(g) == 1 and not diff, "vm core: the frame's stackmap object equals GDB's "
          "(%d frames; GDB / jitmap-stack where they differ: %s)" % (len(g), json.dumps(diff)[:1500]))
    r = run([STACK, "--values", core])
    for line in ("      virtual frame 0: Demo.square, bci 4\n        local x = 4\n"
                 "        local y = 16\n",
                 "      virtual frame 1: Demo.sumSquares, bci 10\n        local n = 6\n"
                 "        local i = 4\n        local acc = 14\n        stack #0 = 14\n"):
        check(line in r.stdout, "vm core: --values text has %r (as info stackmap writes "
              "it):\n%s" % (line, r.stdout))
    r = run([STACK, core])
    for line in ("    [Demo.square, bci 4]  x = 4, y = 16\n",
                 "    [Demo.sumSquares, bci 10]  n = 6, i = 4, acc = 14, stack #0 = 14\n"):
        check(line in r.stdout, "vm core: without --values, the interpreter frames under the "
              "JIT frame, as GDB's bt shows them: %r:\n%s" % (line, r.stdout))
    # jitmap-dump lists the layouts the JIT registered, as jitmap.names.deopt_frames takes them.
    r = run([DUMP, "--format=json", core])
    got = [e.get("deopt_layouts") for dsc in jsoncontract.loads(r.stdout, "jitmap-dump")["descriptors"]
           for e in dsc["entries"]]
    want_layout = [{"record_id": 1000, "function": None, "frames": [
        {"method": "Demo.square", "bci": {"deopt": 0},
         "locals": [{"deopt": 1, "name": "x"}, {"deopt": 2, "name": "y"}], "stack": []},
        {"method": "Demo.sumSquares", "bci": {"deopt": 3},
         "locals": [{"deopt": 4, "name": "n"}, {"deopt": 5, "name": "i"}, {"deopt": 6, "name": "acc"}],
         "stack": [{"deopt": 7, "name": None}]}]}]
    check(r.returncode == 0 and sorted(got, key=str) == sorted([None, want_layout], key=str),
          "vm core: jitmap-dump's deopt_layouts (LLVM's entry has none): %s" % got)
    r = run([DUMP, core])
    check("      frame 1: method Demo.sumSquares, bci deopt 3; locals n = deopt 4, i = deopt 5, "
          "acc = deopt 6; stack deopt 7\n" in r.stdout, "vm core: jitmap-dump text:\n" + r.stdout)
    # A damaged section: named, and it costs the layouts only.
    with open(core, "rb") as f:
        data = bytearray(f.read())
    at = data.find(b"JMDL")
    check(at > 0, "vm core: the layouts are in the core")
    data[at + 4] = 9  # version 9
    bad = core + ".bad-layouts"
    with open(bad, "wb") as f:
        f.write(data)
    r = run([DUMP, bad])
    check(r.returncode == 1 and ".jitmap_deopt (file offset 0x" in r.stderr and
          "version 9 (this jitmap reads 1)" in r.stderr and "record 1000 at" in r.stdout,
          "vm core, damaged layouts: jitmap-dump exit 1, the problem named (%d: %s)" % (
              r.returncode, r.stderr.strip()))
    r = run([STACK, "--json", "--values", bad])
    d = jsoncontract.loads(r.stdout, "jitmap-stack") if r.returncode == 0 else {"threads": [], "problems": []}
    frames = [f for t in d["threads"] for f in jit_frames(t)]
    check(r.returncode == 0 and frames and frames[0]["stackmap"]["record"]["id"] == 1000 and
          "virtual_frames" not in frames[0]["stackmap"] and
          any(".jitmap_deopt (file offset 0x" in p and "version 9" in p for p in d["problems"]),
          "vm core, damaged layouts: jitmap-stack still shows the record, without virtual frames, "
          "and names the problem (%s)" % d["problems"])
    if shutil.which("eu-stack"):
        r = run(["eu-stack", "--core", core, "-e", VM])
        check("Demo.square" not in r.stdout + r.stderr,
              "vm core: negative control: eu-stack shows no interpreter frame")


# -- C++ names --


def gdb_bt_names(pid):
    """The function names of GDB's `bt` of process `pid` (attached), frame by frame: the text
    between "in " and the arguments (" (args) at FILE:LINE", or " ()" after a minimal
    symbol's demangled name, which has parentheses of its own)."""
    r = run([GDB, "-batch", "-nx", "-iex", "set debuginfod enabled off", "-ex", "bt", "-p",
             str(pid)])
    names = []
    for line in r.stdout.splitlines():
        m = re.match(r"^#(\d+)\s+(?:0x[0-9a-f]+ in )?(.*)$", line)
        if not m:
            continue
        rest = re.sub(r" from \S+$", "", m.group(2))
        names.append(rest[:-3] if rest.endswith(" ()") else rest.split(" (", 1)[0])
    return names


def cxx_names():
    """A C++ program blocked in a C++ function, built with and without -g: jitmap-stack
    names its frames as GDB's `bt` does (which it numbers as GDB does): demangled, without
    the signature where DWARF describes the function ("ns::Box<long>::wait"), with it where
    GDB has only the symbol ("ns::Box<long>::wait(int) const"); in the text and the JSON."""
    cxx = shutil.which("g++")
    if not cxx:
        print("SKIP C++ names: no g++")
        return
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cxx_block.cc")
    for flags, what in ((["-g"], "with DWARF"), ([], "symbols only")):
        exe = os.path.join(WORK, "cxx-block" + ("-g" if flags else ""))
        r = run([cxx, "-O1"] + flags + ["-o", exe, src])
        check(r.returncode == 0, "C++ names: %s builds: %s" % (exe, r.stderr))
        p = subprocess.Popen([exe])
        try:
            deadline = time.time() + TIMEOUT
            while time.time() < deadline and state(p.pid) != "S":  # in pause()
                time.sleep(0.05)
            r = run([STACK, "--json", str(p.pid)])
            text = run([STACK, str(p.pid)]).stdout
            gdb = gdb_bt_names(p.pid)
        finally:
            p.kill()
            p.wait()
        d = jsoncontract.loads(r.stdout, "jitmap-stack")
        ours = [f["function"] for f in d["threads"][0]["frames"]]
        mine = [(i, n) for i, n in enumerate(gdb) if i < len(ours) and
                d["threads"][0]["frames"][i]["module"] == os.path.basename(exe)]
        want = {"ns::Box<long>::wait", "ns::twice<unsigned char>", "ns::outer",
                "(anonymous namespace)::anon", "main"} if flags else {
                "ns::Box<long>::wait(int) const",
                "unsigned long ns::twice<unsigned char>(unsigned char)",
                "ns::outer(ns::Box<long> const&, int)", "(anonymous namespace)::anon(int)", "main"}
        check({n for _, n in mine} == want,
              "C++ names, %s: GDB's bt names the program's frames %s (%s)" % (what, want, gdb))
        check(all(ours[i] == n for i, n in mine),
              "C++ names, %s: jitmap-stack's JSON names them as GDB does: %s, GDB %s" % (
                  what, [ours[i] for i, _ in mine], [n for _, n in mine]))
        check(all(re.search(r"^  #%-3d 0x[0-9a-f]+ in %s \(" % (i, re.escape(n)), text, re.M)
                  for i, n in mine),
              "C++ names, %s: and its text:\n%s" % (what, text))


# -- scripts/stack-demo.sh --


def stack_demo():
    """scripts/stack-demo.sh, as a user runs it (on this build tree): it shows the live
    threads and the core's GC roots, and says nothing else where nothing is wrong: no bash
    report of the demo it kills ("Killed") or of the one it aborts for the core ("Aborted
    (core dumped)"), nothing on standard error."""
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "scripts", "stack-demo.sh")
    r = run(["bash", script], env=dict(os.environ, JITMAP_BUILD_DIR=BUILD))
    check(r.returncode == 0 and "$ jitmap-stack --values" in r.stdout and
          ("$ jitmap-stack --gc-roots core" in r.stdout or "no core file" in r.stdout),
          "stack-demo.sh: exit 0 and its transcript (%d):\n%s%s" % (
              r.returncode, r.stdout[-1500:], r.stderr))
    noise = sorted({l for l in r.stdout.splitlines()
                    if re.search(r"\b(Killed|Aborted|Terminated)\b", l)} |
                   set(r.stderr.splitlines()))
    check(not noise, "stack-demo.sh says nothing but its transcript: %s" % noise)


def compressed_sections(path):
    """The names of `path`'s compressed sections (the C flag of readelf -S)."""
    out = run(["readelf", "-SW", path]).stdout
    return [m.group(1) for m in re.finditer(
        r"^\s*\[\s*\d+\]\s+(\S+)\s.*\s[A-Za-z]*C[A-Za-z]*\s+\d+\s+\d+\s+\d+\s*$", out, re.M)]


def debuginfo_cache(core):
    """Separate debug files with compressed DWARF (libc6-dbg) are decompressed once into the
    cache (tools/debuginfo_cache.c): the same output without the cache, with it made, and with
    it used; what is cached has no compressed section left."""
    cache = os.path.join(WORK, "debuginfo-cache")
    outs = []
    for env in ({"JITMAP_CACHE_DIR": ""}, {"JITMAP_CACHE_DIR": cache},
                {"JITMAP_CACHE_DIR": cache}):
        r = run([STACK, "--json", core], env=dict(os.environ, **env))
        check(r.returncode == 0, "debuginfo cache %r: exit 0 (%s)" % (env, r.stderr.strip()))
        outs.append(r.stdout)
    check(outs[0] == outs[1] == outs[2],
          "debuginfo cache: the same stacks without the cache, making it and using it")
    made = glob.glob(os.path.join(cache, "*.debug"))
    # The C library's separate debug file, which every stack here passes through.
    libc = run(["readelf", "-n", "/lib/x86_64-linux-gnu/libc.so.6"]).stdout
    m = re.search(r"Build ID: ([0-9a-f]{2})([0-9a-f]+)", libc)
    dbg = "/usr/lib/debug/.build-id/%s/%s.debug" % m.groups() if m else ""
    if not os.path.exists(dbg) or ".debug_info" not in compressed_sections(dbg):
        print("test-jitmap-stack: (no compressed debug file of libc here: nothing to cache)")
        return
    check(os.path.join(cache, m.group(1) + m.group(2) + ".debug") in made,
          "debuginfo cache: libc's compressed debug file was decompressed into %s" % cache)
    for f in made:
        check(".debug_info" in run(["readelf", "-SW", f]).stdout and not compressed_sections(f),
              "debuginfo cache: %s holds the DWARF uncompressed" % os.path.basename(f))


def main():
    try:
        live()
        call_result()
        core = cores()
        debuginfo_cache(core)
        vm_core()
        cxx_names()
        stack_demo()
        bad_input(core)
        hostiles()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
