#!/usr/bin/env python3
"""test_gdb_registers.py BUILD_DIR [PROGRAM...]: jitmap never knows less than GDB alone (x86-64).

GDB alone and GDB with jitmap (`set jitmap reader-claim unnamed`, the default, and `auto`)
stop the same program at the same place; every frame's registers (`frame N`, `info
registers`: the general registers, rip, rsp) are compared (tests/gdb/regcompare.py). With
jitmap, a register GDB alone shows with a value must have that value, unless one of the
exceptions listed below applies, each proven against the program's truth:

- jitmap-handjit (examples/handjit: handjit_outer keeps a frame pointer and pushes rbx and
  r12; handjit_inner is `sub rsp,24` only; no CFI): GDB alone unwinds handjit_inner with the
  CFA at SP + 8 (its amd64 prologue analyzer saw no `push %rbp`), so its frames between
  handjit_inner and handjit_outer are made of stack words; and it shows main's rbx and r12 as
  handjit_outer's (amd64_analyze_prologue follows only %rbp), where handjit_outer pushed
  main's. With jitmap every callee-saved register of handjit_outer and main is known;
- jitmap-demo-jit --program recursion (LLVM, ORC, .eh_frame): GDB alone reads the JIT's
  objects itself; jitmap unwinds them in `auto`;
- LLVM's own lli-14 -jit-kind=mcjit on tests/gdb/lli_registers.ll (two stops in usleep under
  three JIT frames, one path with frame pointers, one through a function without): GDB alone
  unwinds every JIT frame from the objects' .eh_frame, and lli also writes a jitdump of them,
  which jitmap's perf-map unwinder (a Python unwinder, asked before GDB's DWARF unwinder) must
  leave to GDB. No exception but the ABI's: every callee-saved register GDB alone knows in
  outer, outer2 and main, with jitmap too, and equal to the values the program put there;
  and `bt` prints the same lines as GDB alone (a library frame `from LIB`, never `at LIB`, as
  any frame filter's output would have it). Its negative control is one session per stop
  with jitmap as it was before (its perf-map unwinder taking registered JIT code, its frame
  filter on for every backtrace): the comparison must find what that loses in the outer JIT
  frames (callee-saved registers, a frame), and `bt` lines that differ.

In all, a caller-saved register of an outer frame that GDB alone repeats from the frame
below is <not saved> with jitmap (the ABI: it is not the caller's). The values are checked
against the programs' truth lines too: each JIT frame's PC and SP, and the registers its
stackmap record names (handjit's rbx and r12, the recursion's n, acc and tag).

Usage: test_gdb_registers.py BUILD_DIR [PROGRAM...], PROGRAM one of handjit, demo, lli
(default: handjit demo). Prints "gdb-registers: N passed, M failed"; exits 77 when GDB, the
plugin or the programs are missing, or GDB may not trace here. GDB_EXEC=PATH runs another GDB
(with_gdb.sh).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import regcompare as R  # noqa: E402  (puts tests/lib on sys.path)
from tally import Tally  # noqa: E402

NAME = "gdb-registers"
PARTS = ("handjit", "demo", "lli")
if len(sys.argv) < 2 or any(p not in PARTS for p in sys.argv[2:]):
    sys.exit("usage: test_gdb_registers.py BUILD_DIR [%s...]" % "|".join(PARTS))
BUILD = os.path.abspath(sys.argv[1])
WANT = sys.argv[2:] or ["handjit", "demo"]
JITMAP_GDB = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")
PLUGIN = os.path.join(BUILD, "plugin", "jitmap-reader.so")
HANDJIT = os.path.join(BUILD, "examples", "handjit", "jitmap-handjit")
DEMO = os.path.join(BUILD, "examples", "llvm-jit", "jitmap-demo-jit")
LLI = shutil.which("lli-14")
LLI_PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lli_registers.ll")
GDB = os.environ.get("GDB_EXEC") or shutil.which("gdb")
TIMEOUT = 300
GDB_MAJOR = 0  # set in main()

GPRS = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11",
        "r12", "r13", "r14", "r15", "rip"]
CALLEE_SAVED = {"rbx", "rbp", "rsp", "r12", "r13", "r14", "r15", "rip"}
LEVELS = 12

T = Tally(NAME)
check, skip = T.check, T.skip


def gdb(program, args, setup, claim=None, env=None):
    """One `gdb -batch` session: the output (GDB's and the program's, which share the
    terminal), with the frames' commands after `setup`. claim None: GDB alone. `env`: more
    environment for GDB and the program."""
    cmd = [GDB, "-batch", "-nx", "-iex", "set debuginfod enabled off", "-iex",
           "set pagination off", "-iex", "set width 0", "-iex", "set confirm off"]
    if claim:
        cmd += ["-iex", "source " + JITMAP_GDB, "-iex", "set jitmap reader-claim " + claim]
    for c in setup + R.frame_commands(LEVELS, GPRS, stackmap=bool(claim)) + ["kill"]:
        cmd += ["-ex", c]
    cmd += ["--args", program] + args
    env = dict(os.environ, **(env or {}))
    env.pop("_", None)  # the inferior's stack addresses must not move between sessions
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=TIMEOUT, cwd=WORK, env=env)
    return r.stdout


def frames_of(out):
    return R.parse_frames(out, GPRS, "rip")


def truth_records(out, prefix):
    recs = {}
    for line in out.splitlines():
        if line.startswith(prefix + " record "):
            kv = dict(x.split("=", 1) for x in line.split()[2:] if "=" in x)
            recs[int(kv["id"])] = kv
    return recs


def record_registers(frame, values):
    return R.record_registers(frame, values, check)


# -- jitmap-handjit --


def handjit():
    setup = ["break jitmap_handjit_safepoint", "run"]
    alone_out = gdb(HANDJIT, [], setup)
    if "ptrace: Operation not permitted" in alone_out:
        skip("GDB may not trace here (ptrace not permitted)")
    alone = frames_of(alone_out)
    t = truth_records(alone_out, "jitmap-handjit:")
    check(set(t) == {1001, 1002}, "handjit: the truth lines (%s)" % sorted(t))
    if set(t) != {1001, 1002}:
        return
    outer_pc, inner_pc = int(t[1001]["pc"], 16), int(t[1002]["pc"], 16)
    outer_cfa, inner_cfa = int(t[1001]["cfa"], 16), int(t[1002]["cfa"], 16)
    for claim in ("unnamed", "auto"):
        what = "handjit, reader-claim %s" % claim
        out = gdb(HANDJIT, [], setup + [
            # handjit_outer's push slots (CFA - 24: rbx, CFA - 32: r12), for the proof below
            "frame 2", "echo %sslots 0\\n" % R.MARK, "x/2gx $rsp + 16",
            "echo %send\\n" % R.MARK], claim)
        jm = frames_of(out)
        names = [R.function_of(f) for f in jm]
        check(names[:4] == ["jitmap_handjit_safepoint", "handjit_inner", "handjit_outer", "main"],
              "%s: bt %s" % (what, names))
        if len(jm) < 4:
            continue
        # The truth: each JIT frame's PC and SP, the caller's SP (the CFA), and the record's
        # register values (rbx in both, r12 in handjit_outer).
        tj = truth_records(out, "jitmap-handjit:")
        check(jm[1]["pc"] == inner_pc and jm[1]["regs"]["rsp"] == int(tj[1002]["sp"], 16),
              "%s: handjit_inner's pc and sp are the truth's" % what)
        check(jm[2]["pc"] == outer_pc and jm[2]["regs"]["rsp"] == inner_cfa ==
              int(tj[1001]["sp"], 16) and jm[3]["regs"]["rsp"] == outer_cfa,
              "%s: handjit_outer's pc and sp, main's sp, are the truth's" % what)
        n = record_registers(jm[1], [int(tj[1002]["local0"])])
        n += record_registers(jm[2], [int(tj[1001]["local0"]), int(tj[1001]["local1"])])
        check(n == 3, "%s: the records' register locations checked (%d)" % (what, n))
        for f in jm[2:4]:
            check(all(f["regs"].get(r) is not None for r in CALLEE_SAVED),
                  "%s: frame %d (%s) knows every callee-saved register: %s" % (
                      what, f["level"], R.function_of(f),
                      {r: R.hexs(f["regs"].get(r)) for r in sorted(CALLEE_SAVED)}))
        slots = re.findall(r"0x[0-9a-f]+:\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)",
                           R.sections(out).get(("slots", 0), ""))
        r12_slot, rbx_slot = (int(slots[0][0], 16), int(slots[0][1], 16)) if slots else (None,
                                                                                        None)

        def garbage(a, i, j):
            # GDB alone's frames between handjit_inner and handjit_outer: not code it knows.
            f = a[i]
            return "gdb-frameless" if (R.function_of(f) == "??" and 0 < i and any(
                R.function_of(x) == "handjit_outer" for x in a[i:])) else None

        def prove_frameless():
            # jitmap's handjit_outer stands at the truth's CFA of handjit_inner; GDB alone's
            # frame 2 does not.
            if alone[2]["regs"].get("rsp") == inner_cfa or jm[2]["regs"]["rsp"] != inner_cfa:
                return "GDB alone's frame 2 sp %s, jitmap's %s, the truth's CFA 0x%x" % (
                    R.hexs(alone[2]["regs"].get("rsp")), R.hexs(jm[2]["regs"]["rsp"]),
                    inner_cfa)
            return None

        def pushed(c):
            return (c.function == "main" and c.reg in ("rbx", "r12") and
                    c.j == {"rbx": rbx_slot, "r12": r12_slot}[c.reg])

        def prove_pushed():
            # GDB alone's main rbx and r12 are handjit_outer's VM values (record 1001's
            # locations 0 and 1), which handjit_outer computed after pushing main's.
            m = next((f for f in alone if R.function_of(f) == "main"), None)
            if not m or m["regs"].get("rbx") != int(t[1001]["local0"]) or \
                    m["regs"].get("r12") != int(t[1001]["local1"]):
                return "GDB alone's main rbx/r12 are not handjit_outer's values"
            return None

        exceptions = [
            R.abi_caller_saved(CALLEE_SAVED),
            R.Listed("gdb-frameless",
                         "GDB alone's frames between handjit_inner and handjit_outer: its amd64 "
                         "prologue analyzer found no push %rbp in handjit_inner (sub rsp,24 "
                         "only) and took its CFA as SP + 8, so it read a return address from "
                         "the function's stack slots; the truth line of record 1002 puts the "
                         "CFA at SP + 24 + 8, where jitmap's handjit_outer stands",
                         lambda c: False, prove_frameless),
            R.Listed("gdb-pushes",
                         "main's rbx and r12: GDB's amd64 prologue analyzer follows only "
                         "%rbp's save, so GDB alone repeats handjit_outer's rbx and r12 (its VM "
                         "values, record 1001's truth); handjit_outer pushed main's at its "
                         "start, and jitmap reads them from those slots (x/2gx in frame 2)",
                         pushed, prove_pushed),
        ]
        problems, used = R.compare(alone, jm, CALLEE_SAVED, exceptions, garbage)
        check(not problems, "%s: against GDB alone:\n  %s" % (what, "\n  ".join(problems)))
        if GDB_MAJOR >= 18:
            # GDB 18's amd64 prologue analyzer reads handjit_inner's sub and handjit_outer's
            # pushes: GDB alone and jitmap agree on every register (the ABI's rule aside).
            check(not used.get("gdb-frameless") and not used.get("gdb-pushes"),
                  "%s: GDB %d alone has none of the older GDBs' faults (%s)" % (
                      what, GDB_MAJOR, used))
        else:
            check(used.get("gdb-frameless") and used.get("gdb-pushes") == 2,
                  "%s: GDB alone's known faults were met (%s)" % (what, used))
        R.report(NAME, what, used, exceptions)


# -- The LLVM demo JIT --


def llvm_demo():
    depth = 3
    setup = ["break jitmap_demo_safepoint", "run"]
    args = ["--program", "recursion", "--depth", str(depth)]
    alone_out = gdb(DEMO, args, setup)
    alone = frames_of(alone_out)
    # Truth lines, outermost first: "recursion id=400 n=N acc=A tag=T slot=0x..", then 401.
    truth = {}
    for line in alone_out.splitlines():
        m = re.match(r"jitmap-demo: recursion id=(40[01]) (.*)", line)
        if m:
            kv = dict(x.split("=", 1) for x in m.group(2).split())
            truth[int(kv["n"])] = (int(m.group(1)), [int(v, 0) for v in kv.values()])
    check(len(truth) == depth + 1, "demo: truth lines for n = 0..%d (%s)" % (depth, truth))
    for claim in ("unnamed", "auto"):
        what = "demo recursion, reader-claim %s" % claim
        out = gdb(DEMO, args, setup, claim)
        jm = frames_of(out)
        names = [R.function_of(f) for f in jm]
        want = ["jitmap_demo_safepoint"] + ["recurse"] * (depth + 1) + ["recursion_main",
                                                                         "run_recursion"]
        check(names[:len(want)] == want, "%s: bt %s" % (what, names))
        n = 0
        for k in range(depth + 1):
            if k + 1 < len(jm) and k in truth:
                n += record_registers(jm[k + 1], truth[k][1])
        check(n >= depth + 1, "%s: register locations checked against the truth (%d)" % (what, n))
        for f in jm[1:]:
            if R.function_of(f) in ("recurse", "recursion_main", "run_recursion", "main"):
                check(all(f["regs"].get(r) is not None for r in CALLEE_SAVED),
                      "%s: frame %d (%s) knows every callee-saved register" % (
                          what, f["level"], R.function_of(f)))
        exceptions = [R.abi_caller_saved(CALLEE_SAVED)]
        problems, used = R.compare(alone, jm, CALLEE_SAVED, exceptions)
        check(not problems, "%s: against GDB alone:\n  %s" % (what, "\n  ".join(problems)))
        R.report(NAME, what, used, exceptions)


# -- LLVM's lli, MCJIT --

CALLEE_GPRS = ["rbx", "r12", "r13", "r14", "r15"]
# What lli_registers.ll keeps in rbx, r12-r15 across its calls, by function.
LLI_VALUES = {f: [int((b + d) * 4, 16) for d in "bcdef"]
              for f, b in (("outer", "0"), ("outer2", "2"), ("main", "1"))}
# The JIT frames of each stop (frames 1-3; frame 0 is usleep).
LLI_STOPS = {1: ["inner", "outer", "main"], 2: ["leaf", "outer2", "main"]}
# The negative control's jitmap: the perf-map unwinder not asking whether registered JIT code
# holds a frame and stepping by the frame pointer alone, the frame filter on for every
# backtrace (what they did before).
UNFIXED = "source %s" % os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     "old_perf_unwinder.py")


def bt_lines(out):
    """The `#N` lines of the session's `bt` (its marked section)."""
    return [l for l in R.sections(out).get(("bt", 0), "").splitlines() if l.startswith("#")]


def library_lines(lines):
    """The lines of frames in a shared library without a source file (`from LIB` with GDB
    alone), and of those GDB's frame-filter printer writes `at LIB` for."""
    return [l for l in lines if re.search(r"\) (from|at) /\S+\.so[.0-9]*$", l)]


def lli():
    env = {"JITDUMPDIR": WORK}  # lli's jitdump (LLVM's perf listener) into the work folder
    args = ["-jit-kind=mcjit", LLI_PROGRAM]
    for stop, jit in sorted(LLI_STOPS.items()):
        setup = ["set breakpoint pending on", "break usleep", "run"] + ["continue"] * (stop - 1)
        setup += ["echo %sbt 0\n" % R.MARK, "bt", "echo %send\n" % R.MARK]
        alone_out = gdb(LLI, args, setup, env=env)
        if "ptrace: Operation not permitted" in alone_out:
            skip("GDB may not trace here (ptrace not permitted)")
        alone, alone_bt = frames_of(alone_out), bt_lines(alone_out)
        names = [R.function_of(f) for f in alone]
        check(names[:4] == ["usleep"] + jit, "lli stop %d: GDB alone's bt %s" % (stop, names))
        lib = library_lines(alone_bt)
        check(lib and all(" from /" in l for l in lib),
              "lli stop %d: GDB alone prints library frames `from LIB` (%s)" % (stop, lib))
        for claim in ("unnamed", "auto"):
            what = "lli stop %d, reader-claim %s" % (stop, claim)
            out = gdb(LLI, args, setup + ["echo %sperf 0\n" % R.MARK, "jitmap perf-map",
                                          "info unwinder", "echo %send\n" % R.MARK],
                      claim, env=env)
            # The case this checks: jitmap read lli's jitdump and its unwinder is on.
            perf = R.sections(out).get(("perf", 0), "")
            check(re.search(r"jit-\d+\.dump: [1-9]\d* code objects", perf) and
                  "jitmap-perf-map" in perf,
                  "%s: jitmap read lli's jitdump, its perf-map unwinder is on:\n%s" % (what, perf))
            jm = frames_of(out)
            got = [R.function_of(f) for f in jm]
            check(got[:4] == ["usleep"] + jit, "%s: bt %s" % (what, got))
            for f in jm[1:4]:
                fn = R.function_of(f)
                if fn in LLI_VALUES:
                    values = [f["regs"].get(r) for r in CALLEE_GPRS]
                    check(values == LLI_VALUES[fn],
                          "%s: frame %d (%s) rbx, r12-r15 are the program's: %s" % (
                              what, f["level"], fn, [R.hexs(v) for v in values]))
            exceptions = [R.abi_caller_saved(CALLEE_SAVED)]
            problems, used = R.compare(alone, jm, CALLEE_SAVED, exceptions)
            check(not problems, "%s: against GDB alone:\n  %s" % (what, "\n  ".join(problems)))
            if claim == "unnamed":  # GDB's own DWARF unwinder: the same numbers everywhere
                check(set(used) == {"equal", "jitmap-knows-more"},
                      "%s: every register as GDB alone (%s)" % (what, used))
            R.report(NAME, what, used, exceptions)
            check(bt_lines(out) == alone_bt, "%s: bt prints GDB alone's lines:\n  %s" % (
                what, "\n  ".join(sorted(set(bt_lines(out)) ^ set(alone_bt)))))
        # The negative control: jitmap as it was, its perf-map unwinder taking the frames of
        # registered JIT code and its frame filter running for every backtrace.
        out = gdb(LLI, args, [UNFIXED] + setup, "unnamed", env=env)
        ctl = frames_of(out)
        problems, _ = R.compare(alone, ctl, CALLEE_SAVED, [R.abi_caller_saved(CALLEE_SAVED)])
        # By the frame-pointer chain: outer's and main's callee-saved registers <not saved>
        # (stop 1), outer2 skipped, leaf having none (stop 2).
        check(any(re.search(r"\b(%s)\b" % "|".join(jit[1:]), p) for p in problems),
              "lli stop %d, control: the comparison finds what it loses in %s: %s" % (
                  stop, jit[1:], problems))
        ctl_lib = library_lines(bt_lines(out))
        check(ctl_lib and all(" at /" in l for l in ctl_lib) and bt_lines(out) != alone_bt,
              "lli stop %d, control: bt prints library frames `at LIB` (%s)" % (stop, ctl_lib))


def main():
    global WORK, GDB_MAJOR
    if not GDB or not shutil.which(GDB):
        skip("gdb not found")
    if not os.path.exists(JITMAP_GDB) or not os.path.exists(PLUGIN):
        skip("the plugin was not built (%s)" % PLUGIN)
    for part, p in (("handjit", HANDJIT), ("demo", DEMO), ("lli", LLI)):
        if part in WANT and not (p and os.access(p, os.X_OK)):
            skip("%s not found" % (p or "lli-14"))
    GDB_MAJOR = R.gdb_major(GDB)  # GDB alone's faults differ between versions
    WORK = tempfile.mkdtemp(prefix="jitmap-gdb-registers.")
    try:
        for part, run in (("handjit", handjit), ("demo", llvm_demo), ("lli", lli)):
            if part in WANT:
                run()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
