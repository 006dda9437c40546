#!/usr/bin/env python3
"""test_frames.py: one frame, one answer. Every front end of jitmap asked about every frame of
the same stopped thread, and their answers compared frame by frame, location by location
(ctest consistency.frames).

    tests/consistency/test_frames.py BUILD_DIR [CASE...]

Programs (cases), each stopped once:
- the LLVM demo JIT (examples/llvm-jit): stackmaps (ORC and MCJIT), patchpoint, statepoint,
  recursion, held in its first safepoint (--pause); and two kernel cores of abort() at a
  second safepoint (stackmaps --abort-at 2: records 101 and 102 two JIT frames deep, through
  the C library's abort; patchpoint --mcjit --abort-at 2: the anyregcc patchpoint 201 above
  its trampoline);
- the bytecode VM (examples/bytecode-vm): the compiled method at statepoint 1000 with the
  interpreter frames its JIT registered (vm_jit_stop's abort() held by pause.c);
- LLVM's lli-14 running the project's IR fixtures (tests/fixtures/ir: stackmap_after_call.ll,
  statepoint_after_call.ll, record_less_caller.ll; and between_records.ll here, whose `work`
  frame stands between two records and at neither; held in getppid by pause.c);
- the hostile inferior's good JIT function (tests/hostile, --pause wrap): record 5 at a
  return address with rdi, a caller-saved register, which no front end may show as a number;
- the hand-written JITs: x86-64 (examples/handjit, --pause), AArch64 and s390x
  (examples/handjit-arm64, handjit-s390x, --trap under qemu-user).

Front ends (views):
- x86-64, held programs: jitmap-stack live on the held process (`--json --values` and the
  `--values` text) and GDB attached to it (typed commands), and for four of them (patchpoint,
  vm, hostile, handjit: each LLDB session costs seconds) LLDB attached too; then the process
  gets SIGABRT
  where it stands and the kernel's core is read by GDB (typed), LLDB 16 (`stackmap info`),
  jitmap-stack and jitmap-dump. Cores of abort(): the same without the live views.
- AArch64 and s390x (as tests/cross does): gdb-multiarch and LLDB over qemu's GDB stub, and
  on qemu's guest core of the same run (qemu-user places a static program alike in every
  run); jitmap-stack and jitmap-dump on that core (--exe). LLDB 16 unwinds no s390x JIT frame
  (no CFI): its s390x view has frame 0 only, and only that frame is compared.

Compared (compare.py), against GDB on the core: for every frame, matched by PC, its number;
at a record, the whole `info stackmap -json` object (function, record ID, PC, match kind,
each location's index, kind, where, size, value or the reason it is unavailable, address;
statepoint, GC roots, virtual frames) and the text (GDB's and LLDB's `info stackmap N`
without its frame line, jitmap-stack's --values lines under the frame, dedented by 4); at no
record, the same object (the nearest records, the error) and sentence. jitmap-dump: each
record a frame is at, by ID and PC: offset, function, stack size, every location's kind,
where and size, live-outs, statepoint shape. Values are also checked against the programs'
own truth lines, in every view: a number must be the truth (an unavailable value is the
comparison's business, not a wrong number).

Differences that are documented (LLDB 16 makes no tail-call frames) are listed in EXPECTED
with the reason: each one seen is printed as EXPECTED and does not fail the test; one no
longer seen is printed as NO LONGER SEEN and fails it too (JITMAP_CONSISTENCY_STRICT=0 only
says so), so that the list stays true. Any other
difference fails the test, with a readable report. A self-check (the negative control) runs
the comparer on a real case's views perturbed (a value, a frame numbering, a text, an
unavailable reason, a missing frame, a dumped location) and fails unless each perturbation
is reported.

Exits 0 when every case ran clean, 1 on any unexpected difference or truth failure, 77 when
nothing could run (gdb or the programs missing); a case whose tools are missing (LLDB, qemu,
gdb-multiarch, a cross-built program, lli-14) is skipped, saying which.
Cases run two at a time (JITMAP_CONSISTENCY_JOBS); JITMAP_TEST_KEEP=1 keeps the sessions'
files.

JITMAP_CONSISTENCY_SAVE=DIR writes each front end's raw output (the text its view is built
from: GDB's batch output, LLDB's commands' output and errors, jitmap-stack's JSON and text,
jitmap-dump's JSON) to DIR/CASE/KEY.txt (frontends.py). Two builds' answers compared, e.g.
before and after a change that must not change them: ASLR off, so that addresses repeat, and
the builds named by paths of one length (the programs' arguments and environment are on their
stacks), one run after the other (GDB's sessions time out on a loaded machine):

    ln -s OLD_BUILD /tmp/bA; ln -s NEW_BUILD /tmp/bB
    JITMAP_CONSISTENCY_SAVE=/tmp/sA setarch -R python3 tests/consistency/test_frames.py /tmp/bA
    JITMAP_CONSISTENCY_SAVE=/tmp/sB setarch -R python3 tests/consistency/test_frames.py /tmp/bB
    P="--path /tmp/bA /tmp/bB --path OLD_BUILD NEW_BUILD --path OLD_SRC NEW_SRC"
    tests/consistency/compare_runs.py $P /tmp/sA /tmp/sB

The test files are this tree's for both runs; the front ends' Python is each build's (its
share/jitmap names its own source tree). compare_runs.py sets aside what differs from run to
run (PIDs, thread IDs, temporary paths) and the --path pairs, and diffs the rest. The programs
are each build's too: one that links libjitmap (jitmap-handjit) or compiles the producer in
(the AArch64 and s390x JITs) is laid out anew when those change, and its addresses move.
"""
import concurrent.futures
import copy
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TESTS, "debugger"))
sys.path.insert(0, os.path.join(TESTS, "cross"))
sys.path.insert(0, HERE)
import harness as T  # noqa: E402
import compare as C  # noqa: E402
import frontends as FE  # noqa: E402
import crosslib as X  # noqa: E402  (qemu, guest cores, the lli fixtures' values)
from harness import KEYS, as_int, demo_truth, truth  # noqa: E402

if len(sys.argv) < 2:
    sys.exit("usage: test_frames.py BUILD_DIR [CASE...]")
START = time.time()
ENV = T.Env(sys.argv[1], "jitmap-consistency-")
ONLY = set(sys.argv[2:])
BUILD = ENV.build
STACK = os.path.join(BUILD, "jitmap-stack")
DUMP = os.path.join(BUILD, "jitmap-dump")
JITMAP_GDB = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")
PAUSE_SO = os.path.join(BUILD, "tests", "jitmap-consistency-pause.so")
LLI = "/usr/bin/lli-14"
IR = os.path.join(TESTS, "fixtures", "ir")
ARM64 = os.path.join(BUILD, "examples", "handjit-arm64", "jitmap-handjit-arm64")
S390X = os.path.join(BUILD, "examples", "handjit-s390x", "jitmap-handjit-s390x")
GDB = T.find_gdb()
LLDB = T.debugger(ENV, "lldb")
GDB_MULTIARCH = shutil.which("gdb-multiarch")
TIMEOUT = 120
JOBS = int(os.environ.get("JITMAP_CONSISTENCY_JOBS") or 2)
# Attaching to the held program (GDB, LLDB, jitmap-stack) needs ptrace rights over a process
# that is not the tracer's child: Yama's ptrace_scope 0, or root.
PTRACE_SCOPE = T.read("/proc/sys/kernel/yama/ptrace_scope").strip()
LIVE = os.geteuid() == 0 or PTRACE_SCOPE in ("", "0")
X.WORK, X.NAME = ENV.work, "consistency"  # crosslib's qemu output and guest cores go here


def skip_all(why):
    print("consistency: SKIP: %s" % why)
    shutil.rmtree(ENV.work, ignore_errors=True)
    sys.exit(77)


if GDB is None:
    skip_all("no gdb with Python")
for path, what in ((STACK, "jitmap-stack"), (DUMP, "jitmap-dump"), (JITMAP_GDB, "jitmap.gdb")):
    if not os.path.exists(path):
        skip_all("%s not built (%s)" % (what, path))

# -- Known differences --
#
# Each: a case (regular expression), the view that differs from GDB on the core (or misses the
# truth), what differs (a field path, "frame number", "text", "frame missing", "truth", ...),
# optionally the frame's function, and why; "pending" when another branch changes it,
# "accepted" when it is a documented difference. Keep the list short and true: the test says
# which are no longer seen.
TAIL_CALL = ("GDB shows a tail-call frame below abort(): `__pthread_kill_internal`, which it "
             "builds from the C library's DWARF call-site information (pthread_kill tail-calls "
             "__pthread_kill_implementation; `info frame` in it says 'tail call frame'), at "
             "the address after that jump, a PC no return address on the stack holds. %s, so "
             "every frame below it, the JIT frames included, is numbered one less than in GDB.")
EXPECTED = [
    C.Expected(r"demo-abort-.*", "lldb-core", "frame missing",
               TAIL_CALL % "LLDB 16 makes no tail-call frame there (docs/lldb.md, 'Same output "
               "as GDB', accepts the numbering difference; jitmap-stack rebuilds the frame "
               "as GDB does)", function="__pthread_kill_internal", status="accepted"),
    C.Expected(r"demo-abort-.*", "lldb-core", "frame number", "the tail-call frame above",
               status="accepted", detail="numbered -1"),
]

# -- Truth: the programs' own lines --


def mask(v):
    return v & ((1 << 64) - 1)


def want_values(obj, want, what, locs=None):
    """Location i of `obj` (or of `locs`) holds want[i] (a 64-bit pattern; the location's
    value read as the program prints it: signed to its size, a direct location's address).
    An unavailable value is no failure here (the comparison reports front ends that
    disagree), a wrong number is."""
    locs = obj["locations"] if locs is None else locs
    out = []
    if len(locs) != len(want):
        return ["%s: %d values, the truth has %d" % (what, len(locs), len(want))]
    for loc, w in zip(locs, want):
        v = loc.get("value")
        if v is None:
            continue
        got = v if loc["kind"] == "direct" else T.signed(v, min(loc["size"], 8))
        if mask(got) != mask(w):
            out.append("%s: location #%d (%s %s) = %d, the truth is %d" % (
                what, loc["index"], loc["kind"], loc["where"], mask(got), mask(w)))
    return out


def demo_keys(word, rid, out):
    t = demo_truth(out, word, rid)
    return [as_int(t[k]) for k in KEYS[rid]]


def truth_demo(word):
    def check(frame, obj, out, state):
        if obj["record"] is None:
            return []
        rid = obj["record"]["id"]
        if rid in KEYS:
            return want_values(obj, demo_keys(word, rid, out), "record %d" % rid)
        if word == "statepoint":
            try:
                T.check_statepoint(obj, demo_truth(out, "statepoint", rid), "record %d" % rid)
            except T.Fail as e:
                return [str(e)]
            return []
        if word == "recursion":
            lines = [t for t in truth(out, "jitmap-demo:", "recursion") if t["id"] == str(rid)]
            if rid == 401:
                t = lines[0]
                return want_values(obj, [as_int(t[k]) for k in ("n", "acc", "slot")], "record 401")
            state["n400"] = state.get("n400", 0) + 1  # innermost first: n = 1, 2, ...
            t = [x for x in lines if int(x["n"]) == state["n400"]]
            if not t:
                return ["record 400: no truth line for n=%d" % state["n400"]]
            return want_values(obj, [as_int(t[0][k]) for k in ("n", "acc", "tag", "slot")],
                               "record 400 (n=%d)" % state["n400"])
        return ["record %d: no truth for it" % rid]
    return check


def truth_locals(prefix):
    """The hand-written JITs: "PREFIX record id=N local0=V ... stack_size=S"."""
    def check(frame, obj, out, state):
        if obj["record"] is None:
            return []
        t = (T.handjit_truth(out) if prefix == "jitmap-handjit:" else X.truth(out, prefix))
        rid = obj["record"]["id"]
        if rid not in t:
            return ["record %d: no truth line" % rid]
        n = len([k for k in t[rid] if re.match(r"local\d+$", k)])
        fails = want_values(obj, [int(t[rid]["local%d" % i]) for i in range(n)], "record %d" % rid)
        if obj["record"]["stack_size"] != int(t[rid]["stack_size"]):
            fails.append("record %d: stack size %s, the truth is %s" % (
                rid, obj["record"]["stack_size"], t[rid]["stack_size"]))
        return fails
    return check


def truth_vm(frame, obj, out, state):
    if obj["record"] is None:
        return []
    import scenarios
    want = scenarios.vm_want(out, "vframe")
    got = scenarios.vm_got(obj.get("virtual_frames", []))
    if len(want) != 2 or got != want:
        return ["record %d: interpreter frames %s, the interpreter had %s" % (
            obj["record"]["id"], got, want)]
    return []


def truth_hostile(frame, obj, out, state):
    """good_fn's record 5: rbx (callee-saved) is 4242; rdi is caller-saved and hostile_stop,
    the frame below, may have changed it: unavailable, never a number."""
    if obj["record"] is None:
        return []
    import modes
    rid = obj["record"]["id"]
    if rid != modes.GOOD["record"]:
        return ["record %d: no truth for it" % rid]
    locs = {l["where"]: l for l in obj["locations"]}
    fails = []
    if locs.get("rbx", {}).get("value") not in (modes.GOOD["rbx"], None):
        fails.append("record 5: rbx = %s, the truth is %d" % (locs.get("rbx"), modes.GOOD["rbx"]))
    rdi = locs.get("rdi", {})
    if rdi.get("value", 0) is not None or "caller-saved" not in (rdi.get("error") or ""):
        fails.append("record 5: rdi (caller-saved, in an outer frame) must be unavailable, "
                     "saying why: %s" % rdi)
    return fails


def truth_between(frame, obj, out, state):
    """between_records.ll: `work` stands between records 21 and 22 and at neither (%a = 4660
    is record 21's location #0; the register it names holds 4667 at the frame)."""
    if frame.function != "work":
        return []
    near = [n["id"] for n in obj.get("nearest") or []]
    rec = obj["record"]
    if rec is None and near == [21, 22]:
        return []
    shown = "no record, nearest %s" % near
    if rec is not None:
        loc = obj["locations"][0] if obj["locations"] else {}
        shown = "record %s (match %s), location #0 (%s %s) = %s where the truth (%%a) is 4660" % (
            rec["id"], rec.get("match"), loc.get("kind"), loc.get("where"), loc.get("value"))
    return ["no record describes work's frame (nearest: 21 before, 22 after); shown: " + shown]


def truth_lli(frame, obj, out, state):
    if obj["record"] is None:
        return []
    rid = obj["record"]["id"]
    if rid == 11:
        return want_values(obj, X.AFTER_CALL_VALUES, "record 11")
    if rid == 12:
        sp = obj.get("statepoint") or {}
        fails = want_values(obj, X.AFTER_CALL_VALUES, "statepoint 12's deopt values",
                            sp.get("deopt", []))
        roots = sorted((r["offset"], r["base"].get("value"), r["derived"].get("value"))
                       for r in sp.get("gc_roots", []))
        o = roots[0][1] if roots else None
        if not o or roots != [(0, o, o), (16, o, o + 16)]:
            fails.append("statepoint 12: GC roots %s, want (obj, obj) and (obj, obj + 16)" % roots)
        return fails
    if rid == 7:
        return want_values(obj, [41, 4096], "statepoint 7's deopt values",
                           (obj.get("statepoint") or {}).get("deopt", []))
    return ["record %d: no truth for it" % rid]


# -- Cases --


class Case:
    def __init__(self, name, kind, exe, args, want, truth, pause=None, env=None, arch="x86-64",
                 qemu=None, prefix=None, needs=(), lldb_live=False):
        self.name, self.kind, self.exe, self.args = name, kind, exe, args
        self.want = want        # the record IDs of the frames at records, innermost first
        self.truth = truth      # (frame, obj, program output, state) -> [failures]
        self.pause = pause      # the regular expression of the held program's line, or None
        self.env = env or {}
        self.arch, self.qemu, self.prefix = arch, qemu, prefix
        self.needs = needs      # [(path or command, what)] to skip without
        self.lldb_live = lldb_live  # LLDB attached too (a few cases: each costs seconds)


DEMO = ENV.demo
PAUSED_DEMO = r"jitmap-demo: paused pid=(\d+)"
PAUSED_SHIM = r"jitmap-consistency: paused pid=(\d+)"
DEMO_NEEDS = [(DEMO, "jitmap-demo-jit (needs llvm-config-14)")]
LLI_NEEDS = [(LLI, "lli-14"), (PAUSE_SO, "tests/jitmap-consistency-pause.so")]

CASES = [
    Case("demo-orc-stackmaps", "held", DEMO, ["--pause", "--program", "stackmaps"], [100],
         truth_demo("stackmap"), PAUSED_DEMO, needs=DEMO_NEEDS),
    Case("demo-mcjit-stackmaps", "held", DEMO, ["--pause", "--mcjit", "--program", "stackmaps"],
         [100], truth_demo("stackmap"), PAUSED_DEMO, needs=DEMO_NEEDS),
    Case("demo-abort-stackmaps", "abort", DEMO, ["--abort-at", "2", "--program", "stackmaps"],
         [101, 102], truth_demo("stackmap"), needs=DEMO_NEEDS),
    Case("demo-orc-patchpoint", "held", DEMO, ["--pause", "--program", "patchpoint"], [200],
         truth_demo("patchpoint"), PAUSED_DEMO, lldb_live=True, needs=DEMO_NEEDS),
    Case("demo-abort-patchpoint-anyreg", "abort", DEMO,
         ["--mcjit", "--abort-at", "2", "--program", "patchpoint"], [201],
         truth_demo("patchpoint"), needs=DEMO_NEEDS),
    Case("demo-mcjit-statepoint", "held", DEMO, ["--pause", "--mcjit", "--program", "statepoint"],
         [300], truth_demo("statepoint"), PAUSED_DEMO, needs=DEMO_NEEDS),
    Case("demo-orc-recursion", "held", DEMO,
         ["--pause", "--program", "recursion", "--depth", "5"], [401] + [400] * 5,
         truth_demo("recursion"), PAUSED_DEMO, needs=DEMO_NEEDS),
    Case("vm", "held", ENV.vm, ["--n", "6", "--stop-at", "4", "--abort"], [1000], truth_vm,
         PAUSED_SHIM, env={"JITMAP_PAUSE_IN": "abort", "LD_PRELOAD": PAUSE_SO},
         lldb_live=True, needs=[(ENV.vm, "jitmap-vm (needs llvm-config-14)"),
                (PAUSE_SO, "tests/jitmap-consistency-pause.so")]),
    Case("lli-mcjit-stackmap-after-call", "held", LLI,
         ["-jit-kind=mcjit", os.path.join(IR, "stackmap_after_call.ll")], [11], truth_lli,
         PAUSED_SHIM, env={"JITMAP_PAUSE_IN": "getppid", "LD_PRELOAD": PAUSE_SO}, needs=LLI_NEEDS),
    Case("lli-orc-statepoint-after-call", "held", LLI,
         ["-jit-kind=orc-lazy", os.path.join(IR, "statepoint_after_call.ll")], [12], truth_lli,
         PAUSED_SHIM, env={"JITMAP_PAUSE_IN": "getppid", "LD_PRELOAD": PAUSE_SO}, needs=LLI_NEEDS),
    Case("lli-mcjit-record-less-caller", "held", LLI,
         ["-jit-kind=mcjit", os.path.join(IR, "record_less_caller.ll")], [7], truth_lli,
         PAUSED_SHIM, env={"JITMAP_PAUSE_IN": "getppid", "LD_PRELOAD": PAUSE_SO}, needs=LLI_NEEDS),
    Case("lli-mcjit-between-records", "held", LLI,
         ["-jit-kind=mcjit", os.path.join(HERE, "between_records.ll")], [], truth_between,
         PAUSED_SHIM, env={"JITMAP_PAUSE_IN": "getppid", "LD_PRELOAD": PAUSE_SO}, needs=LLI_NEEDS),
    Case("handjit-x86-64", "held", ENV.handjit, ["--pause"], [1002, 1001],
         truth_locals("jitmap-handjit:"), r"jitmap-handjit: paused pid=(\d+)",
         lldb_live=True, needs=[(ENV.handjit, "jitmap-handjit")]),
    Case("hostile-good-fn", "held", ENV.hostile, ["--pause", "wrap"], [5], truth_hostile,
         r"jitmap-hostile: paused pid=(\d+)", lldb_live=True,
         needs=[(ENV.hostile, "jitmap-hostile")]),
    Case("handjit-arm64", "qemu", ARM64, ["--trap"], [1002, 1001],
         truth_locals("jitmap-handjit-arm64:"), arch="aarch64", qemu="qemu-aarch64",
         needs=[(ARM64, "jitmap-handjit-arm64 (needs aarch64-linux-gnu-gcc)")]),
    Case("handjit-s390x", "qemu", S390X, ["--trap"], [2002, 2001],
         truth_locals("jitmap-handjit-s390x:"), arch="s390x", qemu="qemu-s390x",
         needs=[(S390X, "jitmap-handjit-s390x (needs s390x-linux-gnu-gcc)")]),
]


# -- Running a case --


class CaseSkip(Exception):
    pass


def core_limit():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def wait_for(p, path, pattern, what):
    deadline = time.time() + TIMEOUT
    while time.time() < deadline:
        m = re.search(pattern, T.read(path))
        if m:
            return int(m.group(1))
        if p.poll() is not None:
            raise T.Fail("%s: the program exited with %d before it held:\n%s" % (
                what, p.returncode, T.read(path)[-2000:]))
        time.sleep(0.05)
    raise T.Fail("%s: the program did not hold in %d s" % (what, TIMEOUT))


def run_host(case, d):
    """An x86-64 program: (views, jitmap-dump's records, the program's output)."""
    out = os.path.join(d, "program.out")
    T.clear_cores(d)
    env = dict(os.environ, **case.env)
    views = []
    with open(out, "w") as f:
        p = subprocess.Popen([case.exe] + case.args, stdout=f, stderr=subprocess.STDOUT, cwd=d,
                             env=env, preexec_fn=core_limit)
    try:
        if case.pause:
            pid = wait_for(p, out, case.pause, case.name)
        if case.pause and LIVE:
            live = FE.stack_view(STACK, d, "stack-live", "jitmap-stack (live)", pid)
            views.append(live)
            views.append(FE.gdb_view(GDB, JITMAP_GDB, d, "gdb-live", "GDB (attached)",
                                     ["-p", str(pid)], len(live.frames) + 8))
            if LLDB and case.lldb_live:
                views.append(FE.lldb_view(LLDB, case.name, case.name + "-lldb-live", "lldb-live",
                                          "LLDB (attached)", len(live.frames) + 8, pid=pid))
            if p.poll() is not None:
                raise T.Fail("%s: the program did not survive the debuggers' detach" % case.name)
        if case.pause:
            os.kill(pid, signal.SIGABRT)
        try:
            p.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            raise T.Fail("%s: the program did not end in %d s (SIGABRT caught?)" % (case.name, TIMEOUT))
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    if p.returncode not in (-6, 134):
        raise T.Fail("%s: the program exited with %d, not SIGABRT:\n%s" % (
            case.name, p.returncode, T.read(out)[-2000:]))
    try:
        core = T.find_core(d)
    except T.Skip as e:
        raise CaseSkip(str(e))
    stack = FE.stack_view(STACK, d, "stack-core", "jitmap-stack (core)", core)
    n = len(stack.frames) + 8
    gdb = FE.gdb_view(GDB, JITMAP_GDB, d, "gdb-core", "GDB (core)", [case.exe, core], n)
    views = [gdb] + views + [stack]
    if LLDB:
        views.append(FE.lldb_view(LLDB, case.name, case.name + "-lldb", "lldb-core",
                                  "LLDB (core)", n, exe=case.exe, core=core))
    return views, FE.dump_records(DUMP, d, core), T.read(out)


def run_qemu(case, d):
    """AArch64 or s390x under qemu-user: GDB and LLDB over its stub, and on its guest core."""
    qemu = shutil.which(case.qemu)
    if not qemu or not GDB_MULTIARCH:
        raise CaseSkip("%s or gdb-multiarch is missing" % case.qemu)
    core, out = X.guest_core(qemu, case.exe, case.args)
    if not core:
        raise CaseSkip("qemu wrote no guest core")
    stack = FE.stack_view(STACK, d, "stack-core", "jitmap-stack (core)", core, exe=case.exe)
    n = len(stack.frames) + 8
    gdb = FE.gdb_view(GDB_MULTIARCH, JITMAP_GDB, d, "gdb-core", "GDB (core)", [case.exe, core], n,
                      sysroot="/")
    views = [gdb]
    q = X.Qemu(case.name + "-stub-gdb", qemu, case.exe, case.args)
    try:
        views.append(FE.gdb_view(GDB_MULTIARCH, JITMAP_GDB, d, "gdb-live", "GDB (qemu stub)",
                                 [case.exe], n, pre=["target remote :%d" % q.port, "continue"],
                                 sysroot="/"))
    finally:
        q.stop()
    views.append(stack)
    if LLDB:
        views.append(FE.lldb_view(LLDB, case.name, case.name + "-lldb-core", "lldb-core",
                                  "LLDB (core)", n, exe=case.exe, core=core))
        q = X.Qemu(case.name + "-stub-lldb", qemu, case.exe, case.args)
        try:
            views.append(FE.lldb_view(LLDB, case.name, case.name + "-lldb-live", "lldb-live",
                                      "LLDB (qemu stub)", n,
                                      pre=["target create " + case.exe, "gdb-remote %d" % q.port,
                                           "process continue"], post=["process kill"]))
        finally:
            q.stop()
    return views, FE.dump_records(DUMP, d, core, exe=case.exe), out


# -- Checking a case --


class Truth:
    """The program's own truth lines, standing in a Mismatch as the reference."""
    key = "truth"
    label = "the program's truth"


def check_truth(case, views, output):
    """Mismatches (what "truth") of every frame of every view against the program's truth,
    and (what "records") of the frames at records against the case's."""
    out = []
    for v in views:
        state = {}
        for f in v.frames:
            if f.obj is None:
                continue
            for msg in case.truth(f, f.obj, output, state):
                out.append(C.Mismatch(case.name, Truth, v, f, "truth", "", msg))
        ids = [f.record_id() for f in v.at_records()]
        # LLDB 16's s390x view has frame 0 only (see comparisons()).
        want = case.want[:len(ids)] if v.key.startswith("lldb") and case.arch == "s390x" else case.want
        if ids != want:
            out.append(C.Mismatch(case.name, Truth, v, None, "records",
                                  "records at frames %s" % case.want, "records at frames %s" % ids))
    return out


def comparisons(case, views, records):
    """The Mismatches of every view against the first (GDB on the core), and of jitmap-dump;
    the set-aside notes."""
    ref = views[0]
    jit_pcs = {f.pc for v in views for f in v.frames if f.jit}
    aside, out = [], []
    for v in views[1:]:
        other = v
        if v.key.startswith("lldb") and case.arch == "s390x":
            # LLDB 16 unwinds no s390x frame without CFI: frame 0 only (said in the report).
            other = C.View(v.key, v.label, v.frames[:1], v.bt, v.problems)
            ref_cut = C.View(ref.key, ref.label, ref.frames[:1], ref.bt)
            aside.append("LLDB 16 on s390x: frame 0 only (it unwinds no JIT frame without CFI)")
            out += C.compare_views(case.name, ref_cut, other, jit_pcs, aside)
            continue
        out += C.compare_views(case.name, ref, other, jit_pcs, aside)
    out += C.compare_dump(case.name, ref, records)
    return out, aside


def classify(mismatches, count=True):
    """(unexpected, expected) Mismatches; each expected one is tied to its EXPECTED entry
    (and counted as seen, unless `count` is false: the self-check's)."""
    unexpected, expected = [], []
    for m in mismatches:
        for e in EXPECTED:
            if e.matches(m):
                m.expected = e
                e.seen += count
                expected.append(m)
                break
        else:
            unexpected.append(m)
    return unexpected, expected


class Views:
    """Several views that said the same, standing in a Mismatch as one."""
    def __init__(self, views):
        self.key = ",".join(v.key for v in views)
        self.label = ", ".join(v.label for v in views)


def grouped(mismatches):
    """Mismatches that several views share (the same frame, field and values: GDB's answer
    against LLDB attached and LLDB on the core, a truth every view misses) as one, their views
    named together."""
    order, seen = [], {}
    for m in mismatches:
        k = (m.ref.key, m.what, m.frame.label() if m.frame else None, C.short(m.a, 10 ** 6),
             C.short(m.b, 10 ** 6), m.detail)
        if k not in seen:
            seen[k] = (m, [])
            order.append(k)
        seen[k][1].append(m.other)
    out = []
    for k in order:
        first, views = seen[k]
        if len(views) > 1:
            first = copy.copy(first)
            first.other = Views(views)
        out.append(first)
    return out


DumpKey = C.DumpView.key
RESULTS = []  # (case, status, detail)
SAMPLE = {}   # the first clean case's views and records, for the self-check


def collect(case):
    """Run a case's program and every front end on it (in a worker thread): (views,
    jitmap-dump's records, the program's output, seconds)."""
    for path, what in case.needs:
        if not os.path.exists(path):
            raise CaseSkip("%s not found (%s)" % (what, path))
    t0 = time.time()
    got = (run_qemu if case.kind == "qemu" else run_host)(case, ENV.dir(case.name))
    return got + (time.time() - t0,)


def report(case, views, records, output, seconds):
    """Compare and print one case's answers (in the main thread); its status."""
    ref = views[0]
    fails = []
    for v in views:
        for p in v.problems:
            # qemu-user writes no NT_FILE note: jitmap-stack says how it placed the files.
            if "has no NT_FILE note" not in p:
                fails.append("%s: problem: %s" % (v.label, p))
    mismatches, aside = comparisons(case, views, records)
    unexpected, expected = classify(check_truth(case, views, output) + mismatches)
    names = ", ".join(v.label for v in views) + ", jitmap-dump (core)"
    status = "FAIL" if fails or unexpected else "PASS"
    print("%s %s: %d frames, %d at records; %s (%.1f s)" % (
        status, case.name, len(ref.frames), len(ref.at_records()), names, seconds))
    for msg in fails:
        print("  PROBLEM: " + msg)
    for m in grouped(unexpected):
        print("  " + m.render().replace("\n", "\n  "))
    for e in EXPECTED:
        mine = [m for m in expected if m.expected is e]
        if mine:
            print("  EXPECTED (%s), %d difference%s: %s" % (
                e.status, len(mine), "" if len(mine) == 1 else "s", e.reason))
            for m in grouped(mine):
                print("    " + m.line())
    for note in sorted(set(aside)):
        print("  set aside: " + note)
    sys.stdout.flush()
    RESULTS.append((case, status, views))
    if not SAMPLE and status == "PASS" and not [
            m for m in mismatches if m.other.key in ("stack-core", DumpKey)]:
        SAMPLE.update(case=case, views=views, records=records)
    if not os.environ.get("JITMAP_TEST_KEEP") and status == "PASS":
        T.drop_cores(ENV.dir(case.name))
    return status


# -- The self-check: the comparer must see what is wrong --


def self_check():
    """Perturb a clean case's views, one way at a time, and expect the comparer to report each
    perturbation, and nothing else. Returns the failures."""
    if not SAMPLE:
        print("  self-check: not run: no case ran clean (the failures above say why)")
        return []
    case, views, records = SAMPLE["case"], SAMPLE["views"], SAMPLE["records"]
    ref = views[0]
    stack = [v for v in views if v.key == "stack-core"][0]
    fails = []

    def run(what, view, want, recs=None):
        got, _ = comparisons(case, [ref, view], recs if recs is not None else records)
        hits = [m for m in got if re.fullmatch(want, m.what)]
        unexpected, _ = classify(got, count=False)
        if not hits or not unexpected:
            fails.append("self-check: %s was not reported as /%s/ (%d differences: %s)" % (
                what, want, len(got), [m.what for m in got]))
        else:
            print("  self-check: %s -> %d difference%s, e.g.\n    %s" % (
                what, len(got), "" if len(got) == 1 else "s",
                hits[0].render().replace("\n", "\n    ")))

    base, _ = comparisons(case, [ref, stack], records)
    if base:
        fails.append("self-check: the unperturbed views differ: %s" % [m.what for m in base])
    at = [i for i, f in enumerate(stack.frames) if f.record_id() is not None]
    k = at[0]
    known = [i for i, l in enumerate(stack.frames[k].obj["locations"]) if l.get("value") is not None
             and l["kind"] in ("register", "indirect", "direct")]
    v = copy.deepcopy(stack)
    loc = v.frames[k].obj["locations"][known[0]]
    loc["value"] += 1
    run("jitmap-stack's value of location #%d plus 1" % known[0], v,
        r"locations\[%d\]\.value" % known[0])
    v = copy.deepcopy(stack)
    loc = v.frames[k].obj["locations"][known[0]]
    loc["value"], loc["error"] = None, "register not available: caller-saved, and not saved in frame 9"
    run("jitmap-stack's location #%d unavailable" % known[0], v, r"locations\[%d\]\.(value|error)" % known[0])
    v = copy.deepcopy(stack)
    for f in v.frames:
        f.level += 1
    run("jitmap-stack numbering the frames from 1", v, "frame number")
    v = copy.deepcopy(stack)
    gone = k - 1 if k else k + 1
    del v.frames[gone]
    for f in v.frames[gone:]:
        f.level -= 1
    run("jitmap-stack without frame #%d" % gone, v, "frame missing")
    v = copy.deepcopy(stack)
    first, _, rest = v.frames[k].text.partition("\n")
    v.frames[k].text = first.replace(" locations", " location", 1) + " (changed)\n" + rest
    run("jitmap-stack's record line changed", v, "text")
    v = copy.deepcopy(stack)
    rec = v.frames[k].obj["record"]
    rec["match"] = "exact" if rec["match"] == "call" else "call"
    run("jitmap-stack's match kind", v, r"record\.match")
    lldb = [x for x in views if x.key == "lldb-core"]
    if lldb:
        v = copy.deepcopy(lldb[0])
        f = [g for g in v.frames if g.record_id() is not None][0]
        f.obj["locations"][known[0]]["where"] = "r99"
        run("LLDB's where of location #%d" % known[0], v, r"locations\[%d\]\.where" % known[0])
    recs = copy.deepcopy(records)
    rid, pc = stack.frames[k].record_id(), int(stack.frames[k].obj["record"]["pc"], 16)
    for _, rec in recs[(rid, pc)]:
        rec["locations"][0]["where"] += "x"
    run("jitmap-dump's where of location #0", stack, r"dump: locations\[0\]\.where", recs)
    return fails


# -- Main --


def main():
    print("consistency: %s; %s; %s" % (
        T.version(GDB), T.version(LLDB.path) if LLDB else "no LLDB (its views are skipped)",
        "gdb-multiarch" if GDB_MULTIARCH else "no gdb-multiarch"))
    if not LIVE:
        print("consistency: live views skipped: ptrace_scope is %s (attaching to a process "
              "that is not one's child needs 0, or root)" % PTRACE_SCOPE)
    statuses = []
    cases = [c for c in CASES if not ONLY or c.name in ONLY]
    # Cases run JOBS at a time (each waits on its debuggers and programs most of its time);
    # their answers are compared and printed in order, in this thread.
    with concurrent.futures.ThreadPoolExecutor(max_workers=JOBS) as pool:
        futures = [pool.submit(collect, c) for c in cases]
        for case, fut in zip(cases, futures):
            try:
                statuses.append(report(case, *fut.result()))
            except CaseSkip as e:
                print("SKIP %s: %s" % (case.name, e))
                RESULTS.append((case, "SKIP", []))
            except (T.Fail, FE.ToolFailed) as e:
                print("FAIL %s: %s" % (case.name, e))
                RESULTS.append((case, "FAIL", []))
                statuses.append("FAIL")
            sys.stdout.flush()
    fails = self_check() if statuses else []
    for f in fails:
        print("FAIL " + f)
    ran = [(c.name, v.key) for c, _, views in RESULTS for v in views]
    unseen = [e for e in EXPECTED if not e.seen and any(
        re.fullmatch(e.case, n) and re.fullmatch(e.view, k) for n, k in ran)]
    for e in unseen:
        print("NO LONGER SEEN (remove it from EXPECTED): %s: %s" % (e.describe(), e.reason))
    print("consistency: front ends per case:")
    for case, status, views in RESULTS:
        print("  %-32s %-4s %s" % (case.name, status, ", ".join(v.key for v in views)))
    ran = [s for s in statuses]
    # A known difference no longer seen fails too (JITMAP_CONSISTENCY_STRICT=0 to only say
    # so): the list must stay true.
    failed = ran.count("FAIL") + len(fails) + (
        len(unseen) if os.environ.get("JITMAP_CONSISTENCY_STRICT", "1") != "0" else 0)
    print("consistency: %d cases passed, %d failed, %d skipped; %d expected differences seen; "
          "%.0f s" % (ran.count("PASS"), ran.count("FAIL"),
                      len([r for r in RESULTS if r[1] == "SKIP"]),
                      sum(e.seen for e in EXPECTED), time.time() - START))
    if failed or os.environ.get("JITMAP_TEST_KEEP"):
        print("consistency: sessions kept in %s" % ENV.work)
    else:
        shutil.rmtree(ENV.work, ignore_errors=True)
    if failed:
        return 1
    return 0 if ran else 77


if __name__ == "__main__":
    sys.exit(main())
