#!/usr/bin/env python3
"""s390x (big-endian) under qemu-user, two programs, each checked against its own truth:

jitmap-handjit-s390x (examples/handjit-s390x: code written by hand with no unwind tables,
registered through libjitmap-producer in big-endian; a stmg/aghi function whose statepoint
2001 at its call's return address has deopt values of every location kind and two GC roots of
a malloc'd object, calling a leaf whose plain record 2002 has every kind too; every 64-bit
value with eight distinct bytes, 4-byte values beside four other bytes), stopped in the leaf by
its trap (SIGILL under qemu-s390x) or by `jitmap break 2002`, compared with the program's truth
lines:

- GDB alone (negative control): no `info stackmap`;
- gdb-multiarch with jitmap, in the default claim mode and with `reader-claim auto`: jitmap's
  s390x unwinder unwinds both JIT frames (its counters say so; the leaf by the stackmap rule,
  r14 and its caller's r6-r13 passed on; the caller by its stmg) and bt reaches main; `info
  stackmap -json` in frames 0 and 1; the statepoint's deopt values, GC roots and gc alloca;
  `info gc-roots -all -json`; `jitmap verify -json`; a recursion of four stmg frames
  (--depth 3); `jitmap break 2002` set before the code exists;
- LLDB 16 over qemu's gdb-remote stub and on the core: frame 0's values (LLDB 16 unwinds no
  s390x frame without CFI: it has no frame 1 here);
- qemu's guest core (no NT_FILE note): jitmap-dump and jitmap-stack with --exe (the JIT
  frames unwound by the stackmap rule, with their values and GC roots; main below them; the
  same from the core made small, jitmap-core-handler --small --exe), GDB on the core with
  jitmap (bt, info stackmap, gc roots) and without (no info stackmap).

LLVM 14's own s390x lli (scripts/setup-s390x.sh, its libraries unpacked into one folder used
as the target's root) runs tests/fixtures/ir/stackmap_after_call.ll, stopped in getppid: frame
1 is `work` at record 11 with fourteen values of LLVM's choosing (callee-saved registers, low
halves, stack slots, constants), with GDB's unwinding (LLVM's s390x CFI) and with jitmap's
own (reader-claim auto: its CFI step, the caller's SP 160 below the CFA).

Usage: test_s390x.py BUILD_DIR. Exits 77 (skipped) without qemu-s390x, gdb-multiarch, or both
the cross-built program and the s390x lli; runs the part it can otherwise.
"""
import os
import re
import shutil
import sys

import crosslib as X
from crosslib import check, check_record, gdb_session, run
import jsoncontract  # noqa: E402

X.init("test-s390x")
QEMU = shutil.which("qemu-s390x")
LLDB = shutil.which("lldb-16") or shutil.which("lldb")
PROG = os.path.join(X.BUILD, "examples", "handjit-s390x", "jitmap-handjit-s390x")
TRUTH_PREFIX = "jitmap-handjit-s390x:"
ROOT = os.environ.get("JITMAP_S390X_ROOT") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "jitmap", "s390x", "root")
LLI = os.path.join(ROOT, "usr", "lib", "llvm-14", "bin", "lli")

OUTER, INNER, RECURSE = 2001, 2002, 2003
KINDS = {"register", "direct", "indirect", "constant", "constant_index"}
BT = re.compile(r"#0 .* in handjit_s390x_inner \(\)\n#1 .* in handjit_s390x_outer \(\)\n"
                r"#2 .* in main ")


def truth(output):
    return X.truth(output, TRUTH_PREFIX)


def locals_of(t, rid):
    n = sum(1 for k in t[rid] if k.startswith("local"))
    return [int(t[rid]["local%d" % i]) for i in range(n)]


def check_statepoint(obj, t, what):
    """Frame 1's statepoint 2001: the leading constants, the deopt values (the truth's locals
    3-9), the GC roots (object, object) and (object, object + 16) with the object the program
    malloc'd, the gc alloca (its frame object's address)."""
    sp = obj.get("statepoint") or {}
    want = locals_of(t, OUTER) if OUTER in t else []
    check(sp.get("calling_convention") == 0 and sp.get("flags") == 0,
          "%s: statepoint's calling convention and flags: %s" % (what, sp))
    got = [loc.get("value") for loc in sp.get("deopt", [])]
    check(got == want[3:10], "%s: deopt values %s, truth %s" % (what, got, want[3:10]))
    obj_addr = int(t.get(OUTER, {}).get("gc_object", "0"), 16)
    roots = sorted(((r.get("offset"), r["base"].get("value"), r["derived"].get("value"))
                    for r in sp.get("gc_roots", [])), key=str)
    check(obj_addr and roots == [(0, obj_addr, obj_addr), (16, obj_addr, obj_addr + 16)],
          "%s: GC roots %s, truth (object, object), (object, object + 16), object 0x%x" % (
              what, roots, obj_addr))
    allocas = [loc.get("value") for loc in sp.get("gc_allocas", [])]
    check(allocas == want[14:15], "%s: gc alloca %s, truth %s" % (what, allocas, want[14:15]))
    return obj_addr


def check_gc_roots(answer, t, what):
    """info gc-roots -all -json: frame 1's two pairs and its gc alloca, nothing else."""
    rows = sorted(((r.get("frame"), r.get("record"), r.get("kind"), r.get("offset"),
                    r["base"].get("value"), r["derived"].get("value"))
                   for r in answer.get("roots", [])), key=str)
    o = int(t.get(OUTER, {}).get("gc_object", "0"), 16)
    alloca = int(t.get(OUTER, {}).get("local14", "-1"))
    want = sorted([(1, OUTER, "pair", 0, o, o), (1, OUTER, "pair", 16, o, o + 16),
                   (1, OUTER, "alloca", 0, alloca, alloca)], key=str)
    check(rows == want, "%s: info gc-roots -all %s, truth %s" % (what, rows, want))


def check_kinds(objs, what):
    kinds = {loc.get("kind") for o in objs for loc in o.get("locations", [])}
    check(kinds == KINDS, "%s: every location kind among frames 0 and 1: %s" % (what, kinds))


# -- The hand-written JIT, live --


def gdb_live():
    # Negative control: GDB names the JIT frames (the producer's image) but has no info
    # stackmap. (GDB 13.1's s390x prologue analyzer takes the leaf's SP for its caller's,
    # so its bt does not reach main: docs/architectures.md.)
    # (an error ends a batch script: info stackmap last)
    out, _, _ = gdb_session("negative", PROG, ["continue", "info stackmap"], QEMU,
                            ["--trap"], jitmap=False)
    check(re.search(r"0x[0-9a-f]+ in handjit_s390x_inner \(\)", out),
          "GDB alone: stops in the leaf, named:\n" + out)
    check('Undefined info command: "stackmap"' in out, "GDB alone: no info stackmap:\n" + out)

    for mode in ("default", "auto"):
        pre = ["set jitmap reader-claim auto"] if mode == "auto" else []
        out, prog, a = gdb_session("gdb-" + mode, PROG, pre + [
            "continue", "bt", "json f0 info stackmap -json", "json f1 info stackmap -json 1",
            "json roots info gc-roots -all -json", "json verify jitmap verify -json",
            X.STATS_CMD], QEMU, ["--trap"])
        w = "gdb, claim %s" % mode
        t = truth(prog)
        check(set(t) == {OUTER, INNER}, "%s: truth lines (%s)" % (w, prog))
        check(BT.search(out), "%s: bt:\n%s" % (w, out))
        check_record(a.get("f0", {}), INNER, t, w + " frame 0 (the leaf)")
        check_record(a.get("f1", {}), OUTER, t, w + " frame 1 (the stmg function)")
        check_kinds([a.get("f0", {}), a.get("f1", {})], w)
        if OUTER in t:
            check_statepoint(a.get("f1", {}), t, w + " frame 1")
            check_gc_roots(a.get("roots", {}), t, w)
        v = a.get("verify", {})
        check(v.get("frames_checked") == 2 and v.get("problems") == [],
              "%s: jitmap verify %s" % (w, v))
        # The reader unwinds both JIT frames itself in either mode; with auto it also
        # claims the image (by default GDB's own JIT reader names it).
        m = X.STATS.search(out)
        check(m and int(m.group(1)) == (1 if mode == "auto" else 0) and
              int(m.group(2)) >= 2 and int(m.group(3)) == 0,
              "%s: jitmap's unwinder unwound the JIT frames: %s" % (w, m.group(0) if m else out))

    # Recursion (--depth 3): four stmg frames above the leaf, each by the stackmap rule.
    X.deep_recursion(PROG, QEMU, TRUTH_PREFIX, "handjit_s390x_inner", "handjit_s390x_outer",
                     OUTER, RECURSE)

    # jitmap break before the code exists; the program runs without trapping.
    out, prog, a = gdb_session("break", PROG, [
        "jitmap break %d" % INNER, "continue", "json f0 info stackmap -json"], QEMU)
    t = truth(prog)
    check("record %d at" % INNER in out and "Breakpoint 1, " in out,
          "jitmap break %d:\n%s" % (INNER, out))
    check_record(a.get("f0", {}), INNER, t, "jitmap break %d, frame 0" % INNER)


def lldb_answers(name, commands):
    script = os.path.join(X.WORK, name + ".cmds")
    with open(script, "w") as f:
        f.write("\n".join(["command script import " + X.LLDB_ENTRY] + commands) + "\n")
    r = run([LLDB, "-b", "-s", script])
    objs = [jsoncontract.loads(line, "frame") for line in r.stdout.splitlines() if line.startswith('{"frame"')]
    return objs, r.stdout + r.stderr


def lldb_live():
    if not LLDB:
        print("test-s390x: SKIP lldb: no lldb")
        return
    q = X.Qemu("lldb", QEMU, PROG, ["--trap"])
    try:
        objs, out = lldb_answers("lldb", ["target create " + PROG, "gdb-remote %d" % q.port,
                                  "process continue", "stackmap info --json", "process kill"])
    finally:
        q.stop()
    check(len(objs) == 1, "lldb gdb-remote: one stackmap info --json answer:\n" + out)
    if objs:
        check_record(objs[0], INNER, truth(q.output()), "lldb gdb-remote frame 0")


# -- The hand-written JIT, post-mortem --


def core():
    """qemu's guest core of the trapping program, and what each tool makes of it."""
    c, out = X.guest_core(QEMU, PROG, ["--trap"])
    if not c:
        return
    t = truth(out)
    # The producer wrote the stackmap in the host's order: NumFunctions (2) big-endian.
    check(re.search(r"stackmap=00000002\b", out), "the stackmap's header is big-endian: " +
          out[:200])
    entries = X.dump_entries(c, PROG)
    ids = X.record_ids(entries)
    check(ids == [OUTER, INNER, RECURSE], "core, jitmap-dump --exe: records %s" % ids)
    check([(e.get("arch"), e.get("byte_order")) for e in entries] == [("s390x", "big")],
          "core, jitmap-dump --exe: one s390x big-endian entry: %s" % entries)

    every, frames, said = X.stack_frames(c, PROG)
    names = [f["function"] for f in every]
    check([f["function"] for f in frames] == ["handjit_s390x_inner", "handjit_s390x_outer"],
          "core, jitmap-stack --exe: the two JIT frames (%s)" % said)
    check(names[2:4] == ["main", "__libc_start_call_main"],
          "core, jitmap-stack --exe: main and libc's frames below the JIT frames: %s" % names)
    check([f.get("unwound_by") for f in frames[1:]] == ["stackmap"],
          "core, jitmap-stack: frame 1 found by the stackmap rule (no CFI): %s" % frames[1:])
    if len(frames) == 2:
        check_record(frames[0]["stackmap"], INNER, t, "core, jitmap-stack frame 0")
        check_record(frames[1]["stackmap"], OUTER, t, "core, jitmap-stack frame 1")
        check_statepoint(frames[1]["stackmap"], t, "core, jitmap-stack frame 1")
    X.small_core(c, PROG)

    out, _, a = gdb_session("core-gdb", PROG, [
        "bt", "json f0 info stackmap -json", "json f1 info stackmap -json 1",
        "json roots info gc-roots -all -json"], core=c)
    check(BT.search(out), "core, GDB: bt:\n" + out)
    check_record(a.get("f0", {}), INNER, t, "core, GDB frame 0")
    check_record(a.get("f1", {}), OUTER, t, "core, GDB frame 1")
    check_statepoint(a.get("f1", {}), t, "core, GDB frame 1")
    check_gc_roots(a.get("roots", {}), t, "core, GDB")
    out, _, _ = gdb_session("core-negative", PROG, ["info stackmap"], core=c, jitmap=False)
    check('Undefined info command: "stackmap"' in out, "core, GDB alone: no info stackmap:\n" +
          out)

    if LLDB:
        objs, out = lldb_answers("lldb-core", ["target create %s --core %s" % (PROG, c),
                                  "stackmap info --json"])
        check(len(objs) == 1, "core, LLDB: one answer:\n" + out)
        if objs:
            check_record(objs[0], INNER, t, "core, LLDB frame 0")


def main():
    if not QEMU or not X.GDB:
        X.skip("qemu-s390x or gdb-multiarch is missing (scripts/setup.sh installs them)")
    have_prog, have_lli = os.path.exists(PROG), os.access(LLI, os.X_OK)
    if not have_prog and not have_lli:
        X.skip("neither %s (needs s390x-linux-gnu-gcc) nor the s390x lli at %s "
               "(scripts/setup-s390x.sh)" % (PROG, LLI))
    if have_prog:
        gdb_live()
        lldb_live()
        core()
    else:
        print("test-s390x: SKIP handjit: %s not built (needs s390x-linux-gnu-gcc)" % PROG)
    if have_lli:
        X.lli_after_call("s390x lli", QEMU, LLI, ["-L", ROOT], ROOT, own_unwinder=True)
    else:
        print("test-s390x: SKIP lli: no s390x lli at %s (scripts/setup-s390x.sh)" % LLI)
    return X.summary()


if __name__ == "__main__":
    sys.exit(main())
