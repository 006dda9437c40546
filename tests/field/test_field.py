#!/usr/bin/env python3
"""Outside the lab (issue 34): the demo JIT read where its files are not what the process
mapped, and from cores cut short; no tool may state a number the truth does not support.

    tests/field/test_field.py BUILD_DIR

The program: `jitmap-demo-jit --program statepoint --threads 2`, whose two worker threads
each hold in their first safepoint, under statepoint_main's record 300 (deopt value -77, three
GC roots). Its executable and its C library are copies in the test's own folders (the library
loaded from there through LD_LIBRARY_PATH), so that the test can delete or replace them.

Conditions, each built on the example programs:

- live, the executable (one process, its threads held there): control; the executable
  deleted; another build renamed over its path (jitmap-demo-jit-variant: the same sources with
  JITMAP_DEMO_VARIANT, examples/llvm-jit/CMakeLists.txt: other code layout, a larger safepoint
  frame, so another build ID and other CFI); another file renamed over it (/bin/true). A
  package upgrade replaces a file so: a new inode at the path, the mapped one "(deleted)".
- live, the C library (a second process): control; libc.so.6 deleted; another build renamed
  over it (the libc of Debian 13 that scripts/setup-gdb.sh 16 unpacks into
  ~/.cache/jitmap/gdb16/root: another glibc; skipped without it); /bin/true renamed over it.
- a kernel core (`--abort`, core_pattern "core"): control (read where it was made); the
  executable moved away, replaced by the other build, by /bin/true; the same three for
  libc.so.6 at the path the core names; the core cut in the middle of the stack segment of
  the worker thread whose stack lies higher (at its JIT frame's stack pointer: the safepoint's
  save slots stay, the JIT frame's slots and everything after are lost), and cut where the
  segment of the JIT descriptor (__jit_debug_descriptor, in libLLVM's data) begins.
- a core GDB's `gcore` wrote of the first live process, before its files changed: control;
  cut in the same thread's stack, and in its notes. gcore writes the notes (the threads'
  registers, the auxiliary vector, the file mappings) after the memory, so a cut in memory
  leaves no thread's registers (the tools must say so, not invent them; a cut before the
  descriptor's segment would lose the same), and a cut at the last thread's NT_PRSTATUS keeps
  every byte of memory and the first threads' registers.

Tools, as users run them:
- jitmap-stack --json --values --registers PID | CORE (no --exe: the core alone);
- GDB 13 (`gdb -batch -nx`, tests/debugger/harness.py's session: the build tree's jitmap.gdb
  sourced, then `thread apply all -- frame apply all -c -- info stackmap -json` and `...
  info registers RAX..RIP`), `gdb -p PID` live, `gdb EXE CORE` on cores (EXE the path the
  core names, whatever is there now);
- LLDB 16 (`lldb -b`, the harness's session, BUILD/share/jitmap/lldb/jitmap.py imported):
  `thread backtrace all`, and for threads 1-3, frames 0-FRAMES: `frame select N`, `stackmap
  info --json N`, `register read RAX..RIP`; `process attach -p PID` live, `lldb -c CORE EXE`
  on cores (without EXE when nothing is at the path). LLDB is skipped when it is missing.

The comparison, per tool: each condition's reading against the same tool's reading of the
control (the same stop with every file in place; live: the process read before the change).
For each JIT frame of the control (statepoint_main at record 300 in each worker thread,
matched by thread and PC), every leaf of the `info stackmap -json` object (less "frame" and
the "error" sentences: values, slot addresses, GC offsets, record fields) and every one of the
17 general registers: equal to the control's, or not stated with a non-empty reason (the
location's or frame's "error", a GC root's base's or derived's, GDB's `<not saved>`, LLDB's
`error: unavailable`, jitmap-stack's register "error"; for a jitmap-stack frame with no
stackmap object, its guess or error, or the process's error when its JIT entries are unknown).
A stated value that differs from the control's, or is stated where the control states none,
is a failure: that is the bug class this test guards. A debugger's own registers (`info
registers`, `register read`) that differ are noted, not failed, where jitmap says the frame is a
guess and states none of its values: the debugger unwound that frame by itself. A frame at a record that the control
does not have must state no value that depends on the frame (a constant is the record's). No
tool may show a frame whose PC (for a caller, PC - 1) lies in no executable mapping (the live
process's /proc/PID/maps, a core's PT_LOAD segments mapped executable), PC 0 included: such a
frame is a number the truth does not support. Two are noted rather than failed: GDB's last
frame of a thread (GDB made it itself, where it lacks the right file; jitmap's unwinder for
such frames ends the walk there: nothing may follow it), and LLDB's own `bt` (jitmap adds no
unwinder to LLDB 16). A control JIT frame that jitmap-stack does not
show must be explained (a problem, a thread's or frame's error, or a guess); one a debugger
does not show is listed as a note, not failed (its backtrace is its own). Each reading's line
says how many of the control's JIT frames, locations and registers it states, so that a pass
is seen not to be vacuous.

The controls are anchored: every tool's control shows both JIT frames, and their deopt
values and GC roots are the program's truth lines (harness.check_statepoint); the tools'
controls agree on every register two of them state. The comparer itself is checked on
perturbed readings (a value changed, a reason emptied, a frame where no code is), each of
which it must report. GDB without jitmap on the control core is the negative control: it
gives no stackmap answer.

Time: the conditions run as two tracks at once (the live processes and gcore; the kernel's
core), one process or core per set of conditions: 35 s on this 2-core machine when it is
otherwise idle, 60 s when others load it (the time in each tool is printed). Exits 77
(skipped) when the demo, its variant, jitmap-stack, jitmap-dump or gdb is missing, or when
neither a live process can be traced nor a core written here; LLDB's part, the other libc's
conditions, the live part (ptrace_scope) and the kernel's cores are skipped, each said, when
this machine cannot do them. JITMAP_TEST_KEEP=1 keeps the sessions and cores.
"""
import concurrent.futures
import copy
import json
import mmap
import os
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TESTS, "debugger"))
sys.path.insert(0, os.path.join(TESTS, "lib"))
import harness as H  # noqa: E402
import jsoncontract  # noqa: E402
import livestacks  # noqa: E402
from corefile import NT_PRSTATUS, PT_LOAD, Core  # noqa: E402
from tally import Tally  # noqa: E402

if len(sys.argv) != 2:
    sys.exit("usage: test_field.py BUILD_DIR")
BUILD = os.path.abspath(sys.argv[1])
STACK = os.path.join(BUILD, "jitmap-stack")
DUMP = os.path.join(BUILD, "jitmap-dump")
DEMO = os.path.join(BUILD, "examples", "llvm-jit", "jitmap-demo-jit")
VARIANT = os.path.join(BUILD, "examples", "llvm-jit", "jitmap-demo-jit-variant")
JITMAP_GDB = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")
OTHER_LIBC = os.path.expanduser("~/.cache/jitmap/gdb16/root/usr/lib/x86_64-linux-gnu/libc.so.6")
OTHER_FILE = "/bin/true"
REGS = ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12",
        "r13", "r14", "r15", "rip")
FRAMES = 10  # LLDB: frames 0..FRAMES of each thread are asked about (the JIT frames are #4)
THREADS = 3
LIST = 8  # differences listed per frame (then how many more)
TIMEOUT = 90

T = Tally("field")
check, skip = T.check, T.skip


# -- What one tool said about one condition --


class Reading:
    """One tool's answer about one condition: the frames of each thread, and for every frame
    the stackmap object (or why there is none) and the registers (value or reason)."""

    def __init__(self, tool, state):
        self.tool, self.state = tool, state
        self.frames = {}   # tid -> [(level, pc)], pc None where the tool shows none (inlined)
        self.objs = {}     # (tid, pc) -> info stackmap -json object (less "frame"), or {"error"}
        self.regs = {}     # (tid, pc) -> {register: (value or None, reason)}
        self.said = []     # problems, errors, guesses: what the tool said was wrong or missing
        self.error = None  # why the tool gave no reading at all (its own words)
        self.broken = None  # the tool crashed, hung or printed a traceback: a failure
        self.seconds = 0.0

    def shown(self):
        return {(tid, pc) for tid, fs in self.frames.items() for _, pc in fs if pc is not None}


def contract(r, text, output):
    """The JSON `text` held to its schema, or None with the reading broken: JSON that breaks
    its contract is the tool's failure."""
    try:
        return jsoncontract.loads(text, output)
    except ValueError as e:  # json's JSONDecodeError and jsoncontract's ContractError
        r.broken = "its %s JSON: %s" % (output, e)
        return None


def frame_key(objs, regs, tid, pc):
    """The first frame of a thread at a PC wins (a wrong walk may repeat a frame)."""
    return (tid, pc) not in objs and (tid, pc) not in regs


# -- jitmap-stack --


def read_stack(state, target):
    r = Reading("jitmap-stack", state)
    try:
        p = subprocess.run([STACK, "--json", "--values", "--registers", str(target)],
                           capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        r.broken = "did not finish in %d s" % TIMEOUT
        return r
    if p.returncode == 1 and p.stderr.strip():
        r.error = p.stderr.strip()  # the target could not be read: said, nothing stated
        return r
    if p.returncode != 0:
        r.broken = "exit %d: %s" % (p.returncode, p.stderr.strip()[-500:])
        return r
    d = contract(r, p.stdout, "jitmap-stack")
    if d is None:
        return r
    r.said += d["problems"]
    # A JIT descriptor that could not be read: no frame can be known to be JIT code, and no
    # record looked up in it (the frames' stackmap is null); the process's error says why.
    unknown = d["process"]["error"] if d["process"]["jit_entries"] is None else None
    for t in d["threads"]:
        tid = t["tid"]
        r.frames[tid] = []
        if t.get("error"):
            r.said.append("thread %d: %s" % (tid, t["error"]))
        for f in t["frames"]:
            pc = int(f["pc"], 16)
            r.frames[tid].append((f["index"], pc))
            for why in (f.get("error"), f.get("guess")):
                if why:
                    r.said.append("thread %d frame %d: %s" % (tid, f["index"], why))
            if not frame_key(r.objs, r.regs, tid, pc):
                continue
            r.objs[(tid, pc)] = f["stackmap"] or {
                "error": f.get("guess") or f.get("error") or unknown or ""}
            r.regs[(tid, pc)] = {g["register"]: (int(g["value"], 16) if g["value"] else None,
                                                 g.get("error") or "")
                                 for g in f.get("registers") or []}
    return r


# -- GDB --


GDB_FRAME = re.compile(r"^#(\d+)\s+(?:0x([0-9a-f]+) in )?")
GDB_REG = re.compile(r"^(%s)\s+(0x[0-9a-f]+|<[^>]*>)" % "|".join(REGS))


def gdb_blocks(text):
    """{tid: [(level, pc or None, [lines])]} of `thread apply all -- frame apply all -c -- X`."""
    out = {}
    for tid, body in livestacks.bt_threads(text).items():
        blocks = []
        for line in body.splitlines():
            m = GDB_FRAME.match(line)
            if m:
                blocks.append((int(m.group(1)), int(m.group(2), 16) if m.group(2) else None, []))
            elif blocks:
                blocks[-1][2].append(line)
        out[tid] = blocks
    return out


def read_gdb(dbg, state, exe=None, core=None, pid=None, jitmap=True):
    r = Reading("GDB", state)
    cmds = [dbg.dump("sm", "thread apply all -- frame apply all -c -- info stackmap -json"),
            dbg.dump("regs", "thread apply all -- frame apply all -c -- info registers " +
                     " ".join(REGS))]
    try:
        s = dbg.session("gdb-" + state, cmds, exe=exe, core=core, pid=pid, jitmap=jitmap,
                        timeout=TIMEOUT)
        sm, regs = s.get("sm"), s.get("regs")
    except H.Fail as e:
        r.broken = str(e)
        return r
    if not sm["ok"]:
        r.error = sm["err"].strip() or "GDB: %s failed" % sm["cmd"]
        return r
    r.said += [l for l in (s.stderr or "").splitlines() if l.strip()]
    for tid, blocks in gdb_blocks(sm["out"]).items():
        r.frames[tid] = [(level, pc) for level, pc, _ in blocks]
        for level, pc, lines in blocks:
            objs = [l for l in lines if l.startswith("{")]
            if pc is None or not frame_key(r.objs, {}, tid, pc):
                continue
            if objs:
                obj = contract(r, objs[0], "frame")
                if obj is None:
                    return r
                obj.pop("frame", None)
                r.objs[(tid, pc)] = obj
            else:
                r.objs[(tid, pc)] = {"error": " ".join(l.strip() for l in lines)}
    for tid, blocks in gdb_blocks(regs["out"]).items():
        pcs = dict((level, pc) for level, pc in r.frames.get(tid, []))
        for level, pc, lines in blocks:
            pc = pc if pc is not None else pcs.get(level)
            if pc is None or (tid, pc) in r.regs:
                continue
            got = {}
            for line in lines:
                m = GDB_REG.match(line)
                if m:
                    v = m.group(2)
                    got[m.group(1)] = (int(v, 16), "") if v.startswith("0x") else (None, v[1:-1])
            why = " ".join(l.strip() for l in lines if not GDB_REG.match(l))
            r.regs[(tid, pc)] = {k: got.get(k, (None, why)) for k in REGS}
    return r


# -- LLDB --


LLDB_REG = re.compile(r"^\s*(%s)\s+= (.*)$" % "|".join(REGS))


def read_lldb(dbg, state, exe=None, core=None, pid=None):
    r = Reading("LLDB", state)
    cmds = [dbg.dump("threads", "thread list"), dbg.dump("bt", "thread backtrace all")]
    for i in range(1, THREADS + 1):
        cmds.append(dbg.dump("t%d" % i, "thread select %d" % i))
        for n in range(FRAMES + 1):
            cmds += [dbg.dump("f%d_%d" % (i, n), "frame select %d" % n),
                     dbg.ask("j%d_%d" % (i, n), "info", ["json"], [n]),
                     dbg.dump("r%d_%d" % (i, n), "register read " + " ".join(REGS))]
    try:
        s = dbg.session("lldb-" + state, cmds, exe=exe, core=core, pid=pid, timeout=TIMEOUT)
        threads, bt = s.get("threads"), s.get("bt")
    except H.Fail as e:
        r.broken = str(e)
        return r
    index = {int(i): int(tid) for i, tid in
             re.findall(r"thread #(\d+): tid = (\d+)", threads["out"])}
    if not index:
        r.error = (threads["out"] + threads["err"]).strip() or "LLDB lists no thread"
        return r
    tid = None
    for line in bt["out"].splitlines():
        m = re.match(r"^\s*\*?\s*thread #(\d+)", line)
        if m:
            tid = index.get(int(m.group(1)))
            r.frames.setdefault(tid, [])
            continue
        m = re.match(r"^\s*\*?\s*frame #(\d+): (0x[0-9a-f]+)", line)
        if m and tid is not None:
            r.frames[tid].append((int(m.group(1)), int(m.group(2), 16)))
    for i, tid in index.items():
        pcs = dict(r.frames.get(tid, []))
        if not s.get("t%d" % i)["ok"]:
            continue
        for n in range(FRAMES + 1):
            f = s.get("f%d_%d" % (i, n))
            if not f["ok"] or n not in pcs:
                continue
            pc = pcs[n]
            if not frame_key(r.objs, r.regs, tid, pc):
                continue
            j = s.get("j%d_%d" % (i, n))
            objs = [l for l in j["out"].splitlines() if l.startswith("{")]
            if j["ok"] and objs:
                obj = contract(r, objs[0], jsoncontract.output_of(j["cmd"]))
                if obj is None:
                    return r
                obj.pop("frame", None)
                r.objs[(tid, pc)] = obj
            else:
                r.objs[(tid, pc)] = {"error": (j["out"] + j["err"]).strip()}
            g = s.get("r%d_%d" % (i, n))
            got = {}
            for line in (g["out"] + g["err"]).splitlines():
                m = LLDB_REG.match(line)
                if m:
                    v = m.group(2).split()
                    got[m.group(1)] = ((int(v[0], 16), "") if v and v[0].startswith("0x")
                                       else (None, m.group(2).strip()))
            why = (g["err"] or "").strip()
            r.regs[(tid, pc)] = {k: got.get(k, (None, why)) for k in REGS}
    return r


# -- The comparison --


MISSING = object()
IGNORED = ("error", "frame")


def leaves(obj, path=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from leaves(v, path + (i,))
    else:
        yield path, obj


def reason(obj, path):
    """Why the value at `path` is not stated in `obj`: the nearest enclosing "error" (a
    location's, the frame's), or a GC root's base's or derived's; "" when nothing says."""
    chain, node = [obj], obj
    for k in path[:-1]:
        try:
            node = node[k]
        except (KeyError, IndexError, TypeError):
            break
        chain.append(node)
    for node in reversed(chain):
        if not isinstance(node, dict):
            continue
        if node.get("error"):
            return node["error"]
        if isinstance(node.get("base"), dict) and isinstance(node.get("derived"), dict):
            why = node["base"].get("error") or node["derived"].get("error")
            if why:
                return why
    return ""


def show(v):
    """A value as the reader wants it: hex, and a small signed integer in decimal too."""
    if not isinstance(v, int) or isinstance(v, bool):
        return json.dumps(v)
    if v < 0:
        return str(v)
    s = v - (1 << 64) if v >= 1 << 63 else v
    return "0x%x (%d)" % (v, s) if 9 < abs(s) < 1000000 else "0x%x" % v


def compare_obj(ctl, cur):
    """What `cur` (a condition's stackmap object) states against `ctl` (the control's)."""
    bad = []
    want = {p: v for p, v in leaves(ctl) if p and p[-1] not in IGNORED and p[0] != "nearest"}
    got = {p: v for p, v in leaves(cur) if p and p[-1] not in IGNORED and p[0] != "nearest"}
    for path, cv in want.items():
        xv = got.get(path, MISSING)
        where = ".".join(str(k) for k in path)
        if xv is MISSING or xv is None:
            if cv is not None and not reason(cur, path):
                bad.append("%s not stated, and nothing says why (control %s)" % (where, show(cv)))
        elif xv != cv:
            bad.append("%s = %s, control %s" % (where, show(xv), show(cv)))
    for path, xv in got.items():
        if path not in want and xv is not None:
            bad.append("%s = %s, where the control states nothing" % (
                ".".join(str(k) for k in path), show(xv)))
    return bad


def compare_regs(ctl, cur):
    bad = []
    for name in REGS:
        cv, _ = ctl.get(name, (None, ""))
        xv, why = cur.get(name, (None, ""))
        if xv is not None and cv is None:
            bad.append("%s = %s, where the control states nothing" % (name, show(xv)))
        elif xv is not None and xv != cv:
            bad.append("%s = %s, control %s" % (name, show(xv), show(cv)))
        elif xv is None and cv is not None and not why:
            bad.append("%s not stated, and nothing says why (control %s)" % (name, show(cv)))
    return bad


FRAME_KINDS = ("register", "direct", "indirect")


def frame_values(obj):
    """The values of `obj` that depend on the frame (not a record's constants)."""
    out = []
    for loc in (obj or {}).get("locations") or []:
        if loc.get("kind") in FRAME_KINDS and loc.get("value") is not None:
            out.append("location %d (%s) = %s" % (loc["index"], loc["where"], show(loc["value"])))
    return out


def in_code(maps, pc, level):
    """`pc` lies in an executable mapping (a caller's: the call before it, PC - 1)."""
    at = pc - 1 if level > 0 and pc else pc
    return any("x" in perms and (lo <= at < hi or lo <= pc < hi) for lo, hi, perms, _ in maps)


def mapping_of(maps, pc):
    for lo, hi, perms, name in maps:
        if lo <= pc < hi:
            return "in %s mapping [0x%x, 0x%x)%s" % (perms, lo, hi, " " + name if name else "")
    return "in no mapping"


def summary(cur, jit_keys):
    """What the reading states of the control's JIT frames: a line for the log, so that a
    pass is seen not to be vacuous."""
    shown = [k for k in jit_keys if k in cur.shown()]
    locs = [l for k in shown for l in (cur.objs.get(k) or {}).get("locations") or []]
    regs = [v for k in shown for v, _ in cur.regs.get(k, {}).values()]
    return ("%d/%d JIT frames shown; locations: %d stated, %d not; registers: %d stated, %d not"
            % (len(shown), len(jit_keys), sum(l.get("value") is not None for l in locs),
               sum(l.get("value") is None for l in locs), sum(v is not None for v in regs),
               sum(v is None for v in regs)))


def says_guess(obj):
    """Whether jitmap's answer for a frame says its registers are a guess (every value that
    reads one unavailable, with that reason)."""
    errors = [l.get("error") or "" for l in (obj or {}).get("locations") or []]
    return any("guess" in e for e in errors) and not any(
        l.get("value") is not None and l["kind"] not in ("constant", "constant_index")
        for l in (obj or {}).get("locations") or [])


def compare(ctl, cur, maps, jit_keys):
    """([failures], [notes]) of reading `cur` against the same tool's control `ctl`."""
    bad, notes = [], []
    if cur.broken:
        return ["%s %s: %s" % (cur.tool, cur.state, cur.broken)], notes
    if cur.error:
        notes.append("%s %s: read nothing: %s" % (cur.tool, cur.state,
                                                  " ".join(cur.error.split())[:300]))
        return bad, notes
    shown = cur.shown()
    for key in sorted(jit_keys):
        tid, pc = key
        what = "%s %s: thread %d, JIT frame 0x%x" % (cur.tool, cur.state, tid, pc)
        if key not in shown:
            if cur.tool == "jitmap-stack" and not cur.said:
                bad.append("%s: not shown, and nothing says why" % what)
            else:
                notes.append("%s: not shown" % what)
            continue
        cobj = ctl.objs.get(key)
        xobj = cur.objs.get(key, {"error": ""})
        reg_diffs = ["register " + b for b in compare_regs(ctl.regs.get(key, {}),
                                                           cur.regs.get(key, {}))]
        if reg_diffs and cur.tool in ("GDB", "LLDB") and says_guess(xobj):
            # The debugger's own `info registers` / `register read`, from its own unwinding:
            # jitmap cannot change those, and says the frame is a guess (states no value).
            notes.append("%s: the debugger's own registers differ (%s); jitmap says the frame "
                         "is a guess" % (what, "; ".join(reg_diffs[:2])))
            reg_diffs = []
        diffs = compare_obj(cobj, xobj) + reg_diffs
        if diffs:
            # Registers, then values, first; the frames the tool shows there, to read the walk.
            diffs.sort(key=lambda b: 0 if b.startswith("register ") else
                       1 if re.search(r"\.value ", b) else 2)
            walk = " ".join("#%d 0x%x" % (l, p) for l, p in cur.frames.get(tid, [])
                            if p is not None)
            bad.append("%s: %s%s; the thread's frames: %s" % (
                what, "; ".join(diffs[:LIST]),
                "; and %d more" % (len(diffs) - LIST) if len(diffs) > LIST else "", walk))
    for key, obj in sorted(cur.objs.items()):
        if key in jit_keys:
            continue
        vals = frame_values(obj)
        if vals and (obj or {}).get("record"):
            bad.append("%s %s: thread %d, frame at 0x%x (record %s), which the control does "
                       "not have, states %s" % (cur.tool, cur.state, key[0], key[1],
                                                obj["record"]["id"], "; ".join(vals)))
    for tid, frames in sorted(cur.frames.items()):
        last = max((level for level, _ in frames), default=-1)
        junk = [(level, pc) for level, pc in frames
                if pc is not None and not in_code(maps, pc, level)]
        for level, pc in sorted(set(junk)):
            what = "%s %s: thread %d shows frame #%d at 0x%x, where no code is (%s)" % (
                cur.tool, cur.state, tid, level, pc, mapping_of(maps, pc))
            if cur.tool == "GDB" and level == last:
                # GDB made that frame itself (its own unwinders, from a step it took where it
                # lacks the right file); jitmap's unwinder for such frames ends the walk there
                # (or GDB does, at PC 0): shown once, nothing after it.
                notes.append(what + " (the last: the walk ends there)")
            elif cur.tool == "LLDB":
                # LLDB's own bt: jitmap adds no unwinder to LLDB 16 (its stackmap bt, and from
                # LLDB 22 its frame provider, end before such a frame: docs/lldb.md).
                notes.append(what + " (LLDB's own bt)")
            else:
                bad.append(what)
    return bad, notes


# -- The controls --


def jit_frames(r):
    """{(tid, pc)} of the frames at record 300 in a control reading."""
    return {k for k, o in r.objs.items() if (o.get("record") or {}).get("id") == 300}


def check_control(r, truths, maps):
    """A control reading: both worker threads' JIT frames at record 300, whose values are the
    program's truth lines; no frame where no code is. Returns the JIT frames."""
    keys = jit_frames(r)
    if not check(not r.broken and not r.error,
                 "%s %s: the control is read (%s)" % (r.tool, r.state, r.broken or r.error)):
        return set()
    check(len(keys) == 2 and len({tid for tid, _ in keys}) == 2,
          "%s %s: the control shows record 300 in both worker threads (%s)" % (
              r.tool, r.state, sorted((t, hex(p)) for t, p in keys)))
    for key in sorted(keys):
        errs = []
        for t in truths:
            try:
                H.check_statepoint(r.objs[key], t, "record 300")
                errs = []
                break
            except H.Fail as e:
                errs.append(str(e))
        check(not errs, "%s %s: thread %d's record 300 holds the program's truth (%s)" % (
            r.tool, r.state, key[0], errs[:1]))
        got = {k: v for k, (v, _) in r.regs.get(key, {}).items() if v is not None}
        check("rsp" in got and "rip" in got and got["rip"] == key[1],
              "%s %s: thread %d's JIT frame states its rsp and rip (%s)" % (
                  r.tool, r.state, key[0], got))
    bad, _ = compare(r, r, maps, keys)
    check(not bad, "%s %s: the control shows no frame where no code is: %s" % (
        r.tool, r.state, bad[:3]))
    return keys


def controls_agree(readings, keys):
    """The tools' controls of one stop agree on every register two of them state."""
    for key in sorted(keys):
        diff = []
        for name in REGS:
            vals = {r.tool: r.regs.get(key, {}).get(name, (None, ""))[0] for r in readings}
            stated = {t: v for t, v in vals.items() if v is not None}
            if len(set(stated.values())) > 1:
                diff.append("%s: %s" % (name, {t: hex(v) for t, v in stated.items()}))
        check(not diff, "controls of %s: the tools agree on thread %d's JIT frame's registers "
              "(%s)" % (readings[0].state, key[0], diff))


def self_check(ctl, maps, keys):
    """The comparer reports what it must (its negative control): a value changed, a
    register changed, a reason emptied, a frame where no code is, a frame the control does
    not have stating values."""
    key = sorted(keys)[0]

    def perturbed(fn):
        r = copy.deepcopy(ctl)
        r.state = "perturbed"
        fn(r)
        return compare(ctl, r, maps, keys)[0]

    def value(r):
        loc = r.objs[key]["statepoint"]["deopt"][0]
        loc["value"] = (loc["value"] + 1) & ((1 << 64) - 1)

    def register(r):
        v, why = r.regs[key]["rsp"]
        r.regs[key]["rsp"] = (v + 8, why)

    def reasonless(r):
        loc = r.objs[key]["statepoint"]["deopt"][0]
        loc["value"], loc["error"] = None, ""

    def no_code(r):
        r.frames[key[0]].append((99, 0x10))  # (the first page is never mapped)

    def stranger(r):
        r.objs[(key[0], key[1] + 1)] = r.objs[key]

    for name, fn in (("a deopt value changed", value), ("rsp changed", register),
                     ("a value unavailable without a reason", reasonless),
                     ("a frame at 0x10", no_code), ("a frame the control lacks", stranger)):
        check(perturbed(fn), "the comparer reports %s" % name)
    check(not compare(ctl, ctl, maps, keys)[0], "the comparer passes the control itself")


# -- Building the conditions --


def copy_program(d):
    """WORK/d/bin/jitmap-demo-jit and WORK/d/lib/libc.so.6: copies of the demo and of the
    C library the dynamic linker would load for it."""
    os.makedirs(os.path.join(d, "bin"))
    os.makedirs(os.path.join(d, "lib"))
    exe = os.path.join(d, "bin", "jitmap-demo-jit")
    shutil.copy2(DEMO, exe)
    libc = os.path.join(d, "lib", "libc.so.6")
    shutil.copy2(system_libc(), libc)
    return exe, libc


def system_libc():
    out = subprocess.run(["ldd", DEMO], capture_output=True, text=True).stdout
    m = re.search(r"^\s*libc\.so\.6 => (\S+)", out, re.M)
    return m.group(1) if m else "/lib/x86_64-linux-gnu/libc.so.6"


def replace(path, source):
    """Put a copy of `source` at `path` as a package upgrade does: a new file renamed over
    the old one (whose inode a process or nothing may still map)."""
    tmp = path + ".new"
    shutil.copy2(source, tmp)
    os.rename(tmp, path)


def program_env(d):
    return dict(os.environ, LD_LIBRARY_PATH=os.path.join(d, "lib"))


def start_held(d, exe):
    """The demo from its copy, both worker threads held in statepoint_main's safepoint."""
    out = os.path.join(d, "program.out")
    f = open(out, "w")
    p = subprocess.Popen([exe, "--program", "statepoint", "--threads", "2", "--pause"],
                         stdout=f, stderr=subprocess.STDOUT, cwd=d, env=program_env(d))
    f.close()
    deadline = time.time() + TIMEOUT
    while time.time() < deadline:
        text = H.read(out)
        if re.search(r"holding threads=2 pid=%d" % p.pid, text):
            return p
        if p.poll() is not None:
            break
        time.sleep(0.02)
    p.kill()
    p.wait()
    sys.exit("field: the demo did not hold its threads:\n" + H.read(out))


def maps_of(pid):
    """[(lo, hi, perms, name)] of a live process's mappings."""
    maps = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.split(None, 5)
            lo, hi = parts[0].split("-")
            maps.append((int(lo, 16), int(hi, 16), parts[1][:3],
                         parts[5].strip() if len(parts) > 5 else ""))
    return maps


def write_cut(src, dst, size):
    with open(src, "rb") as f, open(dst, "wb") as g:
        left = size
        while left > 0:
            chunk = f.read(min(left, 1 << 22))
            if not chunk:
                break
            g.write(chunk)
            left -= len(chunk)


def cut_points(core_path, stack_ctl, control_keys):
    """{name: size} of the cuts of a core: in the middle of the higher worker stack's segment
    (at its JIT frame's stack pointer), where the JIT descriptor's segment begins, and (a
    core whose notes come last, gcore's) at the last thread's registers."""
    with open(core_path, "rb") as f:
        core = Core(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
    cuts = {}
    rsps = []
    for key in control_keys:
        v = stack_ctl.regs.get(key, {}).get("rsp", (None, ""))[0]
        if v:
            rsps.append(v)
    if rsps:
        cuts["cut-in-stack"] = core.offset(max(rsps))
    d = subprocess.run([DUMP, "--format=json", core_path], capture_output=True, text=True,
                       timeout=TIMEOUT)
    descs = jsoncontract.loads(d.stdout, "jitmap-dump")["descriptors"] if d.returncode == 0 else []
    if descs:
        cuts["cut-before-descriptor"] = core.segment_start(int(descs[0]["address"], 16))
    # gcore writes the notes after the memory: a cut there keeps every byte of memory and
    # the first threads' registers, and loses the last thread's, the auxiliary vector and
    # the file mappings (NT_FILE).
    loads = [off for _, t, _, off, _, fs, _ in core.phdrs if t == PT_LOAD and fs]
    prstatus = [at for at, t, _, _ in core.notes if t == NT_PRSTATUS]
    if loads and len(prstatus) > 1 and prstatus[-1] > max(loads):
        cuts["cut-in-notes"] = prstatus[-1]
    return cuts


class Track:
    """One sequence of conditions whose readings are gathered (the tools of one live process
    run one after the other: each traces it)."""

    def __init__(self, gdb, lldb):
        self.gdb, self.lldb = gdb, lldb
        self.sets = []  # [(name, maps, {tool: control Reading}, [Reading of conditions])]
        self.skipped = []
        self.core = self.exe = None  # the kernel's core and the executable it names

    def read_all(self, state, target, exe, lldb_exe=None, core=True):
        kw = {"core": target} if core else {"pid": target}
        readers = [lambda: read_stack(state, target),
                   lambda: read_gdb(self.gdb, state, exe=exe if core else None, **kw)]
        if self.lldb:
            readers.append(lambda: read_lldb(self.lldb, state, exe=lldb_exe if core else None,
                                             **kw))
        rs = []
        for read in readers:
            t0 = time.time()
            rs.append(read())
            rs[-1].seconds = time.time() - t0
        return rs

    def condition_set(self, name, maps, control):
        entry = (name, maps, {r.tool: r for r in control}, [])
        self.sets.append(entry)
        return entry[3]


def live_track(env, gdb, lldb, truths):
    """The two live processes: the executable's conditions (and the gcore of that process,
    read before its files change), then the C library's."""
    tr = Track(gdb, lldb)
    scope = H.read("/proc/sys/kernel/yama/ptrace_scope").strip() or "0"
    if os.geteuid() != 0 and scope != "0":
        # The debuggers attach to a process that is not their child.
        tr.skipped.append("live processes and gcore: ptrace_scope is %s" % scope)
        return tr
    d_exe, d_lib = env.dir("live-exe"), env.dir("live-lib")
    exe_a, _ = copy_program(d_exe)
    exe_b, libc_b = copy_program(d_lib)
    pa = start_held(d_exe, exe_a)
    pb = start_held(d_lib, exe_b)
    truths["live-exe"] = H.truth(H.read(os.path.join(d_exe, "program.out")),
                                 "jitmap-demo:", "statepoint")
    truths["live-lib"] = H.truth(H.read(os.path.join(d_lib, "program.out")),
                                 "jitmap-demo:", "statepoint")
    try:
        maps = maps_of(pa.pid)
        conds = tr.condition_set("live-exe", maps,
                                 tr.read_all("live-exe:control", pa.pid, None, core=False))
        # gcore of the same stop, read while every file is in place.
        gcore = os.path.join(env.dir("gcore"), "gcore.core")
        subprocess.run([gdb.path, "-batch", "-nx", "-p", str(pa.pid), "-ex", "gcore " + gcore],
                       capture_output=True, timeout=TIMEOUT)
        if check(os.path.exists(gcore), "gcore wrote a core of the paused process"):
            truths["gcore"] = truths["live-exe"]
            gconds = tr.condition_set("gcore", maps,
                                      tr.read_all("gcore:control", gcore, exe_a, exe_a))
            stack_ctl = tr.sets[-1][2]["jitmap-stack"]
            cuts = cut_points(gcore, stack_ctl, jit_frames(stack_ctl))
            # Both cuts in memory lose all of gcore's notes: one of them is enough.
            cuts.pop("cut-before-descriptor", None)
            for name, size in cuts.items():
                cut = os.path.join(env.dir("gcore"), name + ".core")
                write_cut(gcore, cut, size)
                gconds += tr.read_all("gcore:" + name, cut, exe_a, exe_a)
                os.unlink(cut)
            os.unlink(gcore)
        os.unlink(exe_a)
        conds += tr.read_all("live-exe:deleted", pa.pid, None, core=False)
        replace(exe_a, VARIANT)
        conds += tr.read_all("live-exe:another-build", pa.pid, None, core=False)
        replace(exe_a, OTHER_FILE)
        conds += tr.read_all("live-exe:another-file", pa.pid, None, core=False)

        conds = tr.condition_set("live-lib", maps_of(pb.pid),
                                 tr.read_all("live-lib:control", pb.pid, None, core=False))
        os.unlink(libc_b)
        conds += tr.read_all("live-lib:deleted", pb.pid, None, core=False)
        if os.path.exists(OTHER_LIBC):
            replace(libc_b, OTHER_LIBC)
            conds += tr.read_all("live-lib:another-build", pb.pid, None, core=False)
        else:
            tr.skipped.append("live-lib:another-build (no %s: scripts/setup-gdb.sh 16)" % OTHER_LIBC)
        replace(libc_b, OTHER_FILE)
        conds += tr.read_all("live-lib:another-file", pb.pid, None, core=False)
    finally:
        for p in (pa, pb):
            p.send_signal(signal.SIGKILL)
            p.wait()
    return tr


def core_track(env, gdb, lldb, truths):
    """The kernel's core: read where it was made, cut short, then with its files moved
    away or replaced."""
    tr = Track(gdb, lldb)
    d = env.dir("core")
    exe, libc = copy_program(d)
    with open(os.path.join(d, "program.out"), "w") as out:
        p = subprocess.run([exe, "--program", "statepoint", "--threads", "2", "--abort"],
                           stdout=out, stderr=subprocess.STDOUT, cwd=d, env=program_env(d),
                           preexec_fn=H._core_limit, timeout=TIMEOUT)
    cores = [c for c in os.listdir(d) if c == "core" or c.startswith("core.")]
    if p.returncode not in (-6, 134) or not cores:
        tr.skipped.append("kernel cores: no core (exit %d, core_pattern %r)" % (
            p.returncode, H.read("/proc/sys/kernel/core_pattern").strip()))
        return tr
    core = os.path.join(d, cores[0])
    tr.core, tr.exe = core, exe
    truths["core"] = H.truth(H.read(os.path.join(d, "program.out")), "jitmap-demo:", "statepoint")
    with open(core, "rb") as f:
        maps = [m + ("",) for m in
                  Core(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)).mappings()]
    conds = tr.condition_set("core", maps, tr.read_all("core:control", core, exe, exe))
    stack_ctl = tr.sets[-1][2]["jitmap-stack"]
    for name, size in cut_points(core, stack_ctl, jit_frames(stack_ctl)).items():
        cut = os.path.join(d, name + ".core")
        write_cut(core, cut, size)
        conds += tr.read_all("core:" + name, cut, exe, exe)
        os.unlink(cut)
    away = env.dir("core-away")
    for path, what in ((exe, "exe"), (libc, "libc")):
        saved = os.path.join(away, os.path.basename(path))
        os.rename(path, saved)
        conds += tr.read_all("core:%s-missing" % what, core, exe, None if what == "exe" else exe)
        other = VARIANT if what == "exe" else OTHER_LIBC
        if os.path.exists(other):
            replace(path, other)
            conds += tr.read_all("core:%s-another-build" % what, core, exe, exe)
        else:
            tr.skipped.append("core:%s-another-build (no %s)" % (what, other))
        replace(path, OTHER_FILE)
        conds += tr.read_all("core:%s-another-file" % what, core, exe, exe)
        os.rename(saved, path)
    return tr


def negative_control(env, gdb, core_tr):
    """GDB alone on the control core: no stackmap answer (the values come from jitmap)."""
    if not core_tr.core:
        return
    r = read_gdb(gdb, "core:gdb-alone", exe=core_tr.exe, core=core_tr.core, jitmap=False)
    stated = [k for k, o in r.objs.items() if o.get("record")]
    check(not r.broken and r.frames and not stated,
          "negative control: GDB without jitmap shows the frames and no record (%s)" % (
              r.broken or stated))


def main():
    start = time.time()
    for path, what in ((STACK, "jitmap-stack"), (DEMO, "jitmap-demo-jit"),
                       (VARIANT, "jitmap-demo-jit-variant"), (DUMP, "jitmap-dump"),
                       (JITMAP_GDB, "jitmap.gdb")):
        if not os.path.exists(path):
            skip("%s not built (%s)" % (what, path))
    env = H.Env(BUILD, "jitmap-field.")
    env.plugin = JITMAP_GDB  # GDB sessions source the build tree's jitmap.gdb
    gdb = H.debugger(env, "gdb")
    if not gdb:
        skip("gdb with Python is needed")
    lldb = H.debugger(env, "lldb")
    if not lldb:
        print("field: SKIP LLDB's part: no LLDB with Python", flush=True)
    truths = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        live = pool.submit(live_track, env, gdb, lldb, truths)
        cores = pool.submit(core_track, env, gdb, lldb, truths)
        tracks = [live.result(), cores.result()]
    gathered = time.time() - start
    for tr in tracks:
        for s in tr.skipped:
            print("field: SKIP %s" % s, flush=True)
    if not any(tr.sets for tr in tracks):
        skip("no condition could be built here")

    # The comparer's own negative control, on the first control jitmap-stack read.
    first = tracks[0].sets[0] if tracks[0].sets else tracks[1].sets[0]
    keys = jit_frames(first[2]["jitmap-stack"])
    if keys:
        self_check(first[2]["jitmap-stack"], first[1], keys)
    negative_control(env, gdb, tracks[1])

    failed = []
    for tr in tracks:
        for name, maps, ctl, conds in tr.sets:
            truth = truths.get(name, [])
            keys = {}
            for tool, r in ctl.items():
                keys[tool] = check_control(r, truth, maps)
            controls_agree(list(ctl.values()), set.intersection(*map(set, keys.values())))
            for cur in conds:
                bad, notes = compare(ctl[cur.tool], cur, maps, keys[cur.tool])
                if not cur.broken and not cur.error:
                    print("field: %s %s: %s" % (cur.tool, cur.state, summary(cur, keys[cur.tool])),
                          flush=True)
                for n in notes:
                    print("field: note: %s" % n, flush=True)
                if bad:
                    failed.append((cur.tool, cur.state))
                check(not bad, "%s, %s: every value and register stated is the control's, "
                      "everything not stated says why, no frame where no code is:\n  %s" % (
                          cur.tool, cur.state, "\n  ".join(bad)))
    spent = {}
    for tr in tracks:
        for _, _, ctl, conds in tr.sets:
            for r in list(ctl.values()) + conds:
                n, t = spent.get(r.tool, (0, 0.0))
                spent[r.tool] = (n + 1, t + r.seconds)
    print("field: time in the tools: %s" % ", ".join(
        "%s %.1f s (%d runs)" % (tool, t, n) for tool, (n, t) in sorted(spent.items())))
    n = sum(len(conds) for tr in tracks for _, _, _, conds in tr.sets)
    print("field: %d condition readings compared, %d failed (%s); gathered in %.1f s, %.1f s "
          "in all" % (n, len(failed), ", ".join("%s %s" % f for f in failed) or "none", gathered,
                      time.time() - start), flush=True)
    rc = T.summary()
    if rc and not os.environ.get("JITMAP_TEST_KEEP"):
        H.drop_cores(env.work)
        print("field: sessions kept in %s" % env.work)
    elif os.environ.get("JITMAP_TEST_KEEP"):
        print("field: kept in %s" % env.work)
    else:
        shutil.rmtree(env.work, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
