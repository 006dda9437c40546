#!/usr/bin/env python3
"""AArch64 under qemu-user: jitmap-handjit-arm64 (examples/handjit-arm64: a frame-record
function calling a frameless leaf, no unwind tables, registered through libjitmap-producer),
debugged by gdb-multiarch and LLDB over qemu-aarch64's GDB stub, and post-mortem from the
guest core qemu writes, each checked against the program's truth lines:

- GDB alone (negative control): it names and unwinds the JIT frames itself (its AArch64
  prologue analyzer and the producer's image), but has no `info stackmap`;
- GDB with jitmap (the host's reader plugin and commands): bt, `info stackmap -json` in
  frames 0 and 1 (x19/x20 in registers, stack slots, constants), `jitmap verify`, and
  `jitmap break 1002` set before the code exists and hit in it;
- the same with `set jitmap reader-claim auto`: the reader claims the image and jitmap's
  own AArch64 unwinder unwinds both JIT frames (its counters say so), with the same values,
  and through a recursion of frame records (--depth 3);
- GDB with jitmap against GDB alone, frame by frame and register by register, in both
  claim modes (registers(), tests/gdb/regcompare.py): nothing GDB alone knows is unknown,
  no value differs but where the ABI says so (listed);
- LLDB 16 over gdb-remote: `stackmap info --json` gives the same values;
- qemu's guest core (no NT_FILE note): jitmap-dump and jitmap-stack with --exe (and on the
  core made small, jitmap-core-handler --small --exe: the same frames and values), and
  gdb-multiarch and LLDB on the core with jitmap; without --exe jitmap-dump says why it finds
  nothing;
- LLVM-produced AArch64 code: LLVM 14's arm64 lli (scripts/setup-arm64.sh) runs
  tests/fixtures/ir/record_less_caller.ll; a statepoint's deopt values in GDB, with GDB's
  unwinding and with jitmap's own (LLVM's AArch64 CFI).

Usage: test_arm64.py BUILD_DIR. Exits 77 (skipped) without qemu-aarch64, gdb-multiarch or the
cross-built program (scripts/setup.sh installs what it needs).
"""
import os
import re
import shutil
import subprocess
import sys

import crosslib as X
from crosslib import check, gdb_session, run
import jsoncontract  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "gdb"))
import regcompare as RC  # noqa: E402

X.init("test-arm64")
PROG = os.path.join(X.BUILD, "examples", "handjit-arm64", "jitmap-handjit-arm64")
QEMU = shutil.which("qemu-aarch64")
LLDB = shutil.which("lldb-16") or shutil.which("lldb")
TRUTH_PREFIX = "jitmap-handjit-arm64:"


def truth(output):
    return X.truth(output, TRUTH_PREFIX)


check_record = X.check_record


BT = re.compile(r"#0 .* in handjit_arm64_inner \(\)\n#1 .* in handjit_arm64_outer \(\)\n"
                r"#2 .* in main ")


def gdb_live():
    # Negative control: GDB unwinds the frames itself, but there is no info stackmap.
    out, prog, _ = gdb_session("negative", PROG, ["continue", "bt", "info stackmap"], QEMU,
                               ["--trap"], jitmap=False)
    check(BT.search(out), "GDB alone: bt through the JIT frames:\n" + out)
    check('Undefined info command: "stackmap"' in out, "GDB alone: no info stackmap:\n" + out)

    out, prog, a = gdb_session("gdb", PROG, [
        "continue", "bt", "json f0 info stackmap -json", "json f1 info stackmap -json 1",
        "json verify jitmap verify -json", "info gc-roots -all"], QEMU, ["--trap"])
    t, live = truth(prog), a
    check(set(t) == {1001, 1002}, "gdb: truth lines (%s)" % prog)
    check(BT.search(out), "gdb: bt:\n" + out)
    check_record(a.get("f0", {}), 1002, t, "gdb frame 0 (the leaf)")
    check_record(a.get("f1", {}), 1001, t, "gdb frame 1 (the frame-record function)")
    v = a.get("verify", {})
    check(v.get("frames_checked") == 2 and v.get("problems") == [], "gdb: verify %s" % v)
    check("No GC roots: no frame on the stack is at a statepoint." in out, "gdb: gc-roots")

    # The reader claims the image: jitmap's AArch64 unwinder unwinds both JIT frames.
    out, prog, a = gdb_session("claim", PROG, [
        "set jitmap reader-claim auto", "continue", "bt", "json f1 info stackmap -json 1",
        X.STATS_CMD], QEMU, ["--trap"])
    t = truth(prog)
    check(BT.search(out), "claim auto: bt:\n" + out)
    check_record(a.get("f1", {}), 1001, t, "claim auto frame 1")
    m = X.STATS.search(out)
    check(m and int(m.group(1)) == 1 and int(m.group(2)) >= 2 and int(m.group(3)) == 0,
          "claim auto: the reader claimed the image and unwound the JIT frames: %s" % (
              m.group(0) if m else out))

    # Recursion (--depth 3): jitmap's unwinder through four frame records above the leaf.
    X.deep_recursion(PROG, QEMU, TRUTH_PREFIX, "handjit_arm64_inner", "handjit_arm64_outer",
                     1001, 1003)

    # jitmap break before the code exists; the program runs without trapping.
    out, prog, a = gdb_session("break", PROG, [
        "jitmap break 1002", "continue", "json f0 info stackmap -json"], QEMU)
    t = truth(prog)
    check("record 1002 at" in out and "Breakpoint 1, " in out, "jitmap break 1002:\n" + out)
    check_record(a.get("f0", {}), 1002, t, "jitmap break 1002, frame 0")
    return live


A64_REGS = ["x%d" % n for n in range(31)] + ["sp", "pc"]
A64_CALLEE_SAVED = {"x%d" % n for n in range(19, 30)} | {"sp", "pc"}


def typed_session(name, claim, levels):
    """gdb-multiarch over a fresh qemu running the program with --trap --depth 3, driven by
    typed commands (-ex, each on its own: `frame N` past the last frame fails alone):
    (its output, the program's)."""
    q = X.Qemu(name, QEMU, PROG, ["--trap", "--depth", "3"])
    cmd = [X.GDB, "-batch", "-nx", "-iex", "set pagination off", "-iex", "set confirm off",
           "-iex", "set debuginfod enabled off", "-iex", "set sysroot /", "-iex", "set width 0"]
    if claim:
        cmd += ["-iex", "source " + X.JITMAP_GDB, "-iex", "set jitmap reader-claim " + claim]
    for c in ["target remote :%d" % q.port, "continue"] + RC.frame_commands(
            levels, A64_REGS, stackmap=bool(claim)) + ["kill"]:
        cmd += ["-ex", c]
    try:
        r = subprocess.run(cmd + [PROG], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=X.TIMEOUT)
    finally:
        q.stop()
    return r.stdout, q.output()


def registers():
    """GDB with jitmap against GDB alone, register by register (tests/gdb/regcompare.py), on
    the recursion (--depth 3): the leaf, four frame-record functions, main. GDB alone's
    prologue analyzer knows x21-x28 of every frame (no function saves them: "same value");
    jitmap knows them too, by the ABI's rule where it decoded the prologue
    (docs/unwinding.md), in both claim modes. Listed differences: caller-saved registers of
    outer frames that GDB alone repeats from the frame below (the ABI), and x30 of outer
    frames: GDB alone shows the return address the callee saved (the frame's own PC, which
    x30 holds after the callee's ret); AAPCS64 does not preserve x30 and jitmap leaves it
    unknown, as it does every register the ABI does not preserve."""
    levels = 9
    out, prog = typed_session("regs-alone", None, levels)
    alone = RC.parse_frames(out, A64_REGS, "pc")
    t = truth(prog)
    check(len(alone) >= 6, "registers, GDB alone: frames %s" % [RC.function_of(f) for f in alone])
    lr = RC.Listed(
        "x30-return-address",
        "x30 of an outer frame: GDB alone shows the return address the callee saved (the "
        "frame's PC: what x30 holds after the callee's ret); AAPCS64 does not preserve x30, "
        "and jitmap leaves it unknown",
        lambda c: c.reg == "x30" and c.j is None and c.a == c.jm[c.ji]["pc"])
    exceptions = [RC.abi_caller_saved(A64_CALLEE_SAVED), lr]
    for claim in ("unnamed", "auto"):
        what = "registers, reader-claim %s" % claim
        out, prog = typed_session("regs-" + claim, claim, levels)
        jm = RC.parse_frames(out, A64_REGS, "pc")
        names = [RC.function_of(f) for f in jm]
        check(names[:6] == ["handjit_arm64_inner"] + ["handjit_arm64_outer"] * 4 + ["main"],
              "%s: frames %s" % (what, names))
        if len(jm) < 6:
            continue
        # The truth: each record's register locations (x19 and x20 in the frame-record
        # functions, x19 in the leaf), and each JIT frame's caller at SP + its stack size.
        n = RC.record_registers(jm[0], [int(t[1002]["local%d" % k]) for k in range(3)], check)
        for f in jm[1:5]:
            rid = (f["stackmap"] or {}).get("record", {}).get("id")
            n += RC.record_registers(f, [int(t.get(rid, {}).get("local%d" % k, -1))
                                         for k in range(4)], check)
        check(n == 9, "%s: the records' register locations checked against the truth (%d)" % (
            what, n))
        for k in range(5):
            size = int(t[1002 if k == 0 else 1001]["stack_size"])
            check(jm[k]["regs"]["sp"] + size == jm[k + 1]["regs"]["sp"],
                  "%s: frame %d's caller is at SP + %d" % (what, k, size))
        for f in jm[1:6]:
            check(all(f["regs"].get(r) is not None for r in A64_CALLEE_SAVED),
                  "%s: frame %d (%s) knows every callee-saved register: %s" % (
                      what, f["level"], RC.function_of(f),
                      [r for r in sorted(A64_CALLEE_SAVED) if f["regs"].get(r) is None]))
        problems, used = RC.compare(alone, jm, A64_CALLEE_SAVED, exceptions)
        check(not problems, "%s: against GDB alone:\n  %s" % (what, "\n  ".join(problems)))
        RC.report("test-arm64", what, used, exceptions)


def same_as_gdb(got, gdb, what):
    """LLDB's answer is GDB's, field for field (the contract: the same JSON). qemu-user places
    a static program's code, heap and stack alike in every run, so even the addresses agree."""
    diff = sorted(k for k in set(got) | set(gdb) if got.get(k) != gdb.get(k))
    check(gdb and not diff, "%s: equal to GDB's info stackmap -json (differs in %s)" % (what, diff))


def lldb_check(gdb):
    if not LLDB:
        print("test-arm64: SKIP lldb: no lldb")
        return
    q = X.Qemu("lldb", QEMU, PROG, ["--trap"])
    script = os.path.join(X.WORK, "lldb.cmds")
    with open(script, "w") as f:
        f.write("\n".join([
            "command script import " + X.LLDB_ENTRY,
            "target create " + PROG,
            "gdb-remote %d" % q.port,
            "process continue",
            "stackmap info --json",
            "stackmap info --json 1",
            "process kill",
        ]) + "\n")
    try:
        r = run([LLDB, "-b", "-s", script])
    finally:
        q.stop()
    t = truth(q.output())
    objs = [jsoncontract.loads(line, "frame") for line in r.stdout.splitlines() if line.startswith('{"frame"')]
    check(len(objs) == 2, "lldb: two stackmap info --json answers:\n" + r.stdout + r.stderr)
    if len(objs) == 2:
        check_record(objs[0], 1002, t, "lldb frame 0")
        check_record(objs[1], 1001, t, "lldb frame 1")
        same_as_gdb(objs[0], gdb.get("f0", {}), "lldb frame 0")
        same_as_gdb(objs[1], gdb.get("f1", {}), "lldb frame 1")


def core():
    """qemu's guest core of the trapping program, and what each tool makes of it."""
    c, out = X.guest_core(QEMU, PROG, ["--trap"])
    if not c:
        return
    t = truth(out)
    ids = X.record_ids(X.dump_entries(c, PROG))
    check(ids == [1001, 1002, 1003], "core, jitmap-dump --exe: records %s" % ids)
    every, frames, said = X.stack_frames(c, PROG)
    names = [f["function"] for f in every]
    check(names[2:4] == ["main", "__libc_start_call_main"],
          "core, jitmap-stack --exe: the native frames named and unwound below the JIT frames "
          "(the files the library placed, given to libdwfl): %s" % names)
    check([f["function"] for f in frames] == ["handjit_arm64_inner", "handjit_arm64_outer"],
          "core, jitmap-stack --exe: the two JIT frames (%s)" % said)
    if len(frames) == 2:
        check_record(frames[0]["stackmap"], 1002, t, "core, jitmap-stack frame 0")
        check_record(frames[1]["stackmap"], 1001, t, "core, jitmap-stack frame 1")
    X.small_core(c, PROG)
    # Negative control: GDB alone names nothing in the core (no JIT reader walks qemu's
    # guest core for it here either) and has no info stackmap.
    out, _, _ = gdb_session("core-negative", PROG, ["bt", "info stackmap"], core=c, jitmap=False)
    check('Undefined info command: "stackmap"' in out, "core, GDB alone: no info stackmap:\n" + out)
    out, _, a = gdb_session("core-gdb", PROG, ["bt", "json f0 info stackmap -json",
                                               "json f1 info stackmap -json 1"], core=c)
    check(BT.search(out), "core, GDB: bt:\n" + out)
    check_record(a.get("f0", {}), 1002, t, "core, GDB frame 0")
    check_record(a.get("f1", {}), 1001, t, "core, GDB frame 1")
    if LLDB:
        script = os.path.join(X.WORK, "lldb-core.cmds")
        with open(script, "w") as f:
            f.write("\n".join(["command script import " + X.LLDB_ENTRY,
                               "target create %s --core %s" % (PROG, c),
                               "stackmap info --json", "stackmap info --json 1"]) + "\n")
        r = run([LLDB, "-b", "-s", script])
        objs = [jsoncontract.loads(line, "frame") for line in r.stdout.splitlines() if line.startswith('{"frame"')]
        check(len(objs) == 2, "core, LLDB: two answers:\n" + r.stdout + r.stderr)
        if len(objs) == 2:
            check_record(objs[0], 1002, t, "core, LLDB frame 0")
            check_record(objs[1], 1001, t, "core, LLDB frame 1")
            same_as_gdb(objs[0], a.get("f0", {}), "core, LLDB frame 0")
            same_as_gdb(objs[1], a.get("f1", {}), "core, LLDB frame 1")


LLI = os.environ.get("JITMAP_ARM64_LLI") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
    "jitmap", "arm64-llvm", "root", "usr", "lib", "llvm-14", "bin", "lli")
RECORD_LESS = os.path.join(X.SOURCE, "tests", "fixtures", "ir", "record_less_caller.ll")


def llvm_code():
    """LLVM-produced AArch64 code: LLVM 14's arm64 lli (scripts/setup-arm64.sh) runs the
    project's IR under MCJIT; `hot` (a statepoint, deopt values 41 and %x = 4096) is called by
    `entry` (no record), stopped in getppid. GDB alone, jitmap with GDB's unwinding, and
    jitmap's own (LLVM's AArch64 .eh_frame through jitmap's CFI reader)."""
    if not os.access(LLI, os.X_OK):
        print("test-arm64: SKIP llvm: no arm64 lli at %s (scripts/setup-arm64.sh)" % LLI)
        return
    base = ["set breakpoint pending on", "break getppid", "continue", "bt 4"]
    args = ["-jit-kind=mcjit", RECORD_LESS]
    q = ["-L", "/"]
    bt = re.compile(r"#1 .* in hot \(\)\n#2 .* in entry \(\)\n#3 .* in main \(\)")
    out, _, _ = gdb_session("lli-negative", LLI, base + ["info stackmap 1"], QEMU, args, q,
                            jitmap=False)
    check('Undefined info command: "stackmap' in out and bt.search(out),
          "lli, GDB alone: bt, and no info stackmap:\n" + out)
    for mode in ("default", "auto"):
        pre = ["set jitmap reader-claim auto"] if mode == "auto" else []
        out, _, a = gdb_session("lli-" + mode, LLI, pre + base + [
            "json f1 info stackmap -json 1", X.STATS_CMD], QEMU, args, q)
        what = "lli, claim %s" % mode
        check(bt.search(out), "%s: bt:\n%s" % (what, out))
        o = a.get("f1", {})
        deopt = [loc.get("value") for loc in (o.get("statepoint") or {}).get("deopt", [])]
        check((o.get("record") or {}).get("id") == 7 and deopt == [41, 4096],
              "%s: frame 1 is hot at statepoint 7, deopt %s" % (what, deopt))
        m = X.STATS.search(out)
        if mode == "auto":
            check(m and int(m.group(1)) == 1 and int(m.group(2)) >= 3 and int(m.group(3)) == 0,
                  "%s: jitmap unwound hot, entry and main: %s" % (what, m.group(0) if m else out))
    # Every byte of each value distinct: registers, sub-registers, stack slots, constants.
    X.lli_after_call("lli after-call", QEMU, LLI, q, "/", own_unwinder=True, statepoint=True)


def main():
    if not QEMU or not X.GDB:
        X.skip("qemu-aarch64 or gdb-multiarch is missing (scripts/setup.sh installs them)")
    if not os.path.exists(PROG):
        X.skip("%s not built (needs aarch64-linux-gnu-gcc)" % PROG)
    lldb_check(gdb_live())
    registers()
    core()
    llvm_code()
    return X.summary()


if __name__ == "__main__":
    sys.exit(main())
