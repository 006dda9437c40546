"""regcompare: GDB with jitmap against GDB alone, frame by frame and register by register.

The rule it checks ("never less than the debugger alone knows, never a number the truth does
not support"): in every frame, every register GDB alone shows with a value, GDB with jitmap
shows too, with the same value, unless an exception the test lists applies; each exception
says why GDB alone is wrong there (or, for a register the ABI does not preserve, why its
value is not the caller's), and the test proves it against the program's truth.

GDB is driven by typed commands only (`gdb -batch` with one `-ex` per command: `frame N`,
`info registers ...`, `info stackmap -json`), as a user would type them; the sessions are
parsed from their output. Used by tests/gdb/test_gdb_registers.py (x86-64) and
tests/cross/test_arm64.py (AArch64 under qemu-user).
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
import jsoncontract  # noqa: E402

MARK = "==jitmap-regs "
VALUE = re.compile(r"^(\w+)\s+(0x[0-9a-f]+|<not saved>|<unavailable>|<optimized out>)")


def gdb_major(gdb):
    """The major version of the GDB at path `gdb` ("GNU gdb (Debian 18.1-3) 18.1" -> 18; 0
    when unknown): GDB alone's faults differ between versions."""
    import subprocess
    try:
        out = subprocess.run([gdb, "--version"], capture_output=True, text=True, timeout=60).stdout
        return int(out.splitlines()[0].split()[-1].split(".")[0])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return 0


def frame_commands(levels, regs, stackmap=False):
    """The commands that show frames 0..levels-1: for each, a marker, `frame N`, `info
    registers REGS`, and with `stackmap` `info stackmap -json` (jitmap's command)."""
    cmds = []
    for n in range(levels):
        cmds += ["echo %sframe %d\\n" % (MARK, n), "frame %d" % n,
                 "info registers " + " ".join(regs)]
        if stackmap:
            cmds += ["echo %sstackmap %d\\n" % (MARK, n), "info stackmap -json"]
    cmds.append("echo %send\\n" % MARK)
    return cmds


def sections(text):
    """{(kind, n): text} of the marked sections of a session's output."""
    out, key, lines = {}, None, []
    for line in text.splitlines():
        if line.startswith(MARK):
            if key:
                out[key] = "\n".join(lines)
            words = line[len(MARK):].split()
            key = (words[0], int(words[1])) if len(words) == 2 else None
            lines = []
        elif key:
            lines.append(line)
    return out


def parse_frames(text, regs, pc_name):
    """The frames a session showed, innermost first, until `frame N` failed: each a dict
    {"level", "header" (the `#N ...` line), "regs" {name: int or None (not saved,
    unavailable)}, "stackmap" (the JSON object, or None), "pc"}."""
    s = sections(text)
    frames = []
    for n in range(1000):
        body = s.get(("frame", n))
        if body is None or "No frame at level" in body:
            break
        header = next((l for l in body.splitlines() if l.startswith("#%d " % n)), "")
        if not header:  # `frame N` failed (its error may have gone to stderr)
            break
        values = {}
        for line in body.splitlines():
            m = VALUE.match(line)
            if m and m.group(1) in regs and m.group(1) not in values:
                v = m.group(2)
                values[m.group(1)] = int(v, 16) if v.startswith("0x") else None
        sm = None
        text_sm = s.get(("stackmap", n), "").strip()
        if text_sm.startswith("{"):
            try:
                sm = jsoncontract.loads(text_sm, "frame")
            except ValueError:
                sm = None
        frames.append({"level": n, "header": header, "regs": values, "stackmap": sm,
                       "pc": values.get(pc_name)})
    return frames


def function_of(frame):
    """The function name of a frame's `#N` line, or "??"."""
    m = re.match(r"#\d+\s+(?:0x[0-9a-f]+ in )?(\S+)", frame["header"])
    return m.group(1) if m else "??"


class Listed:
    """A listed case where GDB with jitmap may differ from GDB alone: `reason` says why,
    `applies(ctx)` decides for one register of one matched frame pair (ctx: a Case), `prove`
    (optional) checks the reason against the truth once, returning an error or None."""

    def __init__(self, name, reason, applies, prove=None):
        self.name, self.reason, self.applies, self.prove = name, reason, applies, prove


class Case:
    """One register of one matched pair of frames."""

    def __init__(self, alone, ai, jm, ji, reg, a, j):
        self.alone, self.ai, self.jm, self.ji = alone, ai, jm, ji
        self.reg, self.a, self.j = reg, a, j
        self.level = jm[ji]["level"]
        self.function = function_of(jm[ji])


def abi_caller_saved(callee_saved):
    """The ABI's exception: a register the ABI does not preserve is not the caller's after
    a call; GDB alone repeats the inner frame's value there (its DWARF unwinder takes an
    unspecified rule for "same value", its prologue analyzers do the same), jitmap says <not
    saved>. Applies only where GDB alone's value is the frame below's, in an outer frame."""
    def applies(c):
        return (c.reg not in callee_saved and c.j is None and c.ai > 0 and
                c.alone[c.ai - 1]["regs"].get(c.reg) == c.a)
    return Listed("abi-caller-saved",
                      "not preserved across a call by the ABI: GDB alone repeats the inner "
                      "frame's value, which is not the caller's", applies)


def compare(alone, jm, callee_saved, exceptions, skip=None):
    """Match GDB alone's frames to jitmap's by PC, in order, and compare registers.

    `skip(alone, i, jm)` says why GDB alone's frame i may have no jitmap counterpart (a
    listed exception, with its reason) or returns None. Returns (problems, used): the
    problems as sentences, and {exception name: number of registers it excused}, plus
    counts under "jitmap-knows-more" (GDB alone had no value) and "equal"."""
    problems, used = [], {"equal": 0, "jitmap-knows-more": 0}
    ai = ji = 0
    while ai < len(alone) and ji < len(jm):
        if alone[ai]["pc"] != jm[ji]["pc"]:
            why = skip(alone, ai, jm) if skip else None
            if why:
                used[why] = used.get(why, 0) + 1
                ai += 1
                continue
            problems.append("GDB alone's frame %d (%s, pc %s) has no frame with jitmap "
                            "(jitmap's frame %d is at %s)" % (
                                ai, alone[ai]["header"], hexs(alone[ai]["pc"]), ji,
                                hexs(jm[ji]["pc"])))
            ai += 1
            continue
        for reg, a in alone[ai]["regs"].items():
            j = jm[ji]["regs"].get(reg)
            if a is None:
                used["jitmap-knows-more" if j is not None else "equal"] += 1
                continue
            if j == a:
                used["equal"] += 1
                continue
            c = Case(alone, ai, jm, ji, reg, a, j)
            ex = next((e for e in exceptions if e.applies(c)), None)
            if ex:
                used[ex.name] = used.get(ex.name, 0) + 1
                continue
            problems.append("frame %d (%s): %s is %s with GDB alone, %s with jitmap%s" % (
                c.level, c.function, reg, hexs(a), hexs(j),
                " (callee-saved)" if reg in callee_saved else ""))
        ai += 1
        ji += 1
    if ai < len(alone):
        problems.append("GDB alone shows %d frames past jitmap's last (%s)" % (
            len(alone) - ai, [f["header"] for f in alone[ai:]]))
    for e in exceptions:
        if e.name in used and e.prove:
            err = e.prove()
            if err:
                problems.append("exception %s is not proven: %s" % (e.name, err))
    return problems, used


def record_registers(frame, values, check):
    """Check, with `check(cond, what)`, that each register location of the frame's record
    (its `info stackmap -json`) holds in `info registers` the truth's value of that location
    (`values`, by index). Returns how many were checked."""
    sm = frame["stackmap"] or {}
    n = 0
    for loc in sm.get("locations", []):
        if loc.get("kind") != "register" or loc["index"] >= len(values):
            continue
        got = frame["regs"].get(loc["where"])
        check(got == values[loc["index"]] % (1 << 64),
              "frame %d (%s): %s, location %d of record %s, is %s; the truth is %d" % (
                  frame["level"], function_of(frame), loc["where"], loc["index"],
                  (sm.get("record") or {}).get("id"), hexs(got), values[loc["index"]]))
        n += 1
    return n


def hexs(v):
    return "<not saved>" if v is None else "0x%x" % v


def report(name, what, used, exceptions):
    """One line per exception used, with its reason (the test's log says why it differed)."""
    reasons = {e.name: e.reason for e in exceptions}
    lines = ["%s: %s: %d registers equal, %d known to jitmap only" % (
        name, what, used.get("equal", 0), used.get("jitmap-knows-more", 0))]
    for k, v in sorted(used.items()):
        if k not in ("equal", "jitmap-knows-more"):
            lines.append("%s: %s:   %d by %s: %s" % (name, what, v, k, reasons.get(k, k)))
    print("\n".join(lines))
