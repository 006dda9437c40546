#!/usr/bin/env python3
"""test_typed.py: GDB with jitmap as a user and an IDE drive it (ctest gdb.typed, gdb16.typed).

    tests/gdb-commands/test_typed.py BUILD_DIR [TEST...]

GDB calls jitmap's frame filter from C when a user types `bt` or an IDE sends MI; a test that
runs `bt` through Python (gdb.execute(..., to_string=True), as harness.py's jtdump does) calls
it with Python frames above it, and did not see `bt` print "Python Exception <class
'ValueError'>: call stack is not deep enough" in place of the interpreter frames. Here:

- typed commands: `gdb -batch -ex CMD ...` with jitmap.gdb sourced first (-iex, as from
  ~/.gdbinit): `bt`, `bt full`, `bt 2`, `frame N`, `info frame`, `info locals`, `up`, `down`;
- GDB/MI: `gdb -i=mi` with the commands written to its stdin one at a time, each answer read
  before the next command: `-enable-frame-filters`, `-stack-list-frames`,
  `-stack-list-variables --all-values` on the JIT frame;

on jitmap-vm (the interpreter frames its JIT registered, under the JIT frame, in the order and
with the values of the program's truth lines), the LLVM demo JIT (a record's values; a
runtime's interpreter frames given through the names API) and the hand-written JIT. No
"Python Exception" and no traceback anywhere in any session's output. Negative controls: the
same sessions without jitmap show no interpreter frame and no record value.

And on the producer's minimal JIT and a core of it: each misuse of a command or convenience
function alone in `gdb -batch` (exit 1 with a usage sentence, never "internal error"); the
system gdbinit script with libjitmap-producer's auto-load script, as the packages install them
(a core and a run print only GDB's and jitmap's lines); `jitmap core CORE.zst` through that
script before jitmap is on; a core session (`core-file`, `bt`, `info stackmap`, `jitmap
perf-map`) opens the core once through libjitmap, another `core-file` once more
(count_opens.py).

Prints one line per test and a summary; exits 0 when all pass, 1 when any fails, 77 (skip)
when gdb (GDB_EXEC) or the programs are missing.
"""
import codecs
import os
import re
import select
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "debugger"))
import harness as T  # noqa: E402
from harness import check, read, truth  # noqa: E402

if len(sys.argv) < 2:
    sys.exit("usage: test_typed.py BUILD_DIR [TEST...]")
ENV = T.Env(sys.argv[1], "jitmap-gdb-typed-")
GDB = T.find_gdb()
if GDB is None:
    print("gdb-typed: skipped: no gdb with Python")
    sys.exit(77)
JITMAP_GDB = os.path.join(ENV.build, "share", "jitmap", "jitmap.gdb")
if not os.path.exists(JITMAP_GDB):
    print("gdb-typed: skipped: %s not built" % JITMAP_GDB)
    sys.exit(77)
print("gdb-typed: %s" % T.version(GDB))
RUN = T.Runner("gdb-typed", sys.argv[2:])
SETUP = ["set debuginfod enabled off", "set pagination off", "set width 0", "set confirm off"]


def clean(text, what):
    """No Python exception, traceback or GDB crash report anywhere in a session's output."""
    for bad in T.BAD_OUTPUT:
        check(bad not in text, "%s: GDB printed %r:\n%s" % (what, bad, text))


# -- Typed commands --


def typed(name, exe, args, stop, commands, jitmap=True, core=None):
    """`gdb -batch -nx` with -ex commands: break at `stop`, run `exe` with `args` (its output
    in a file), then `commands`, each (tag, command) after an `echo ==tag` line; with `core`,
    `commands` on that core of `exe` (`gdb EXE CORE`, no run). (the whole output, {tag: its
    output}, the program's output)."""
    where = ENV.dir(name)
    out = os.path.join(where, "program.out")
    argv = [GDB, "-batch", "-nx"]
    for line in SETUP + (["source " + JITMAP_GDB] if jitmap else []):
        argv += ["-iex", line]
    if core is None:
        argv += ["-ex", "break " + stop, "-ex", "run %s > %s" % (" ".join(args), out)]
    for tag, command in commands:
        argv += ["-ex", "echo ==%s\\n" % tag, "-ex", command]
    argv += ["-ex", "echo ==end\\n"] + (["-ex", "kill", exe] if core is None else [exe, core])
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=where,
                           stdin=subprocess.DEVNULL, timeout=T.TIMEOUT)
    except subprocess.TimeoutExpired:
        raise T.Fail("%s: GDB did not finish in %d s (a hang)" % (name, T.TIMEOUT))
    text = p.stdout.decode("utf-8", "replace")
    with open(os.path.join(where, "gdb.out"), "w") as f:
        f.write(text)
    check(p.returncode == 0, "%s: gdb exited with %d:\n%s" % (name, p.returncode, text))
    clean(text, name)
    parts, tag = {}, None
    for line in text.splitlines():
        m = re.match(r"^==(\S+)$", line)
        if m:
            tag = m.group(1)
            parts[tag] = []
        elif tag:
            parts[tag].append(line)
    for t, _ in commands:
        check(t in parts, "%s: no output of %r (the session stopped early?):\n%s" % (name, t, text))
    return text, {t: "\n".join(lines) for t, lines in parts.items()}, read(out)


FRAME = re.compile(r"^#(\d+) +(?:0x[0-9a-f]+ in )?(\S+) \(")
ELIDED = re.compile(r"^ +(?:0x[0-9a-f]+ in )?(\[.*\]) \(\)$")
LOCAL = re.compile(r"^ +(\w+) = (.*)$")


def backtrace(text):
    """[(name, [(local, value)], [(elided name, [(local, value)])])] of `bt` / `bt full`
    output, outermost last."""
    frames = []
    for line in text.splitlines():
        m = FRAME.match(line)
        if m:
            check(int(m.group(1)) == len(frames), "frame #%s out of order in:\n%s" %
                  (m.group(1), text))
            frames.append((m.group(2), [], []))
            continue
        m = ELIDED.match(line)
        if m and frames:
            frames[-1][2].append((m.group(1), []))
            continue
        m = LOCAL.match(line)
        if m and frames:
            (frames[-1][2][-1][1] if frames[-1][2] else frames[-1][1]).append(m.groups())
    return frames


def names(frames):
    return [f[0] for f in frames]


def num(text):
    """A value GDB printed, as a number ("0x7ffe... <sym>" too), or the text itself."""
    try:
        return T.as_int(text.split()[0])
    except (ValueError, IndexError):
        return text


def bits(text):
    """num() as a 64-bit pattern (GDB prints signed, the program some values unsigned)."""
    v = num(text)
    return v & ((1 << 64) - 1) if isinstance(v, int) else v


# -- GDB/MI --


class Mi:
    """One `gdb -i=mi` session: a command is written when the answer to the one before was
    read (as an IDE does), each with a token; a timeout on every read."""

    def __init__(self, name, exe, jitmap):
        self.name = name
        self.where = ENV.dir(name)
        argv = [GDB, "-nx", "-q", "-i=mi"]
        for line in SETUP + (["source " + JITMAP_GDB] if jitmap else []):
            argv += ["-iex", line]
        self.p = subprocess.Popen(argv + [exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, cwd=self.where)
        self.token = 0
        self.buf = b""
        self.lines = []  # everything GDB wrote

    def line(self, deadline):
        while b"\n" not in self.buf:
            left = deadline - time.time()
            if left <= 0 or not select.select([self.p.stdout], [], [], left)[0]:
                raise T.Fail("%s: no answer from GDB/MI in %d s (a hang); so far:\n%s" %
                             (self.name, T.TIMEOUT, self.text()))
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                raise T.Fail("%s: GDB/MI ended (a crash?):\n%s" % (self.name, self.text()))
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        self.lines.append(line.decode("utf-8", "replace"))
        return self.lines[-1]

    def until(self, pred):
        deadline = time.time() + T.TIMEOUT
        while True:
            line = self.line(deadline)
            if pred(line):
                return line

    def send(self, command):
        """The result record of `command` ("done,..." / "running" / "error,..."), without
        its token and caret."""
        self.token += 1
        mark = "%d^" % self.token
        self.p.stdin.write(("%d%s\n" % (self.token, command)).encode())
        self.p.stdin.flush()
        return self.until(lambda l: l.startswith(mark))[len(mark):]

    def results(self, command):
        """The results of a command that must succeed, parsed."""
        r = self.send(command)
        check(r.startswith("done"), "%s: %s: %s" % (self.name, command, r))
        return mi_results(r[len("done,"):]) if r.startswith("done,") else {}

    def stop_at(self, function, args, out):
        self.results("-exec-arguments %s > %s" % (" ".join(args), out))
        self.results("-break-insert " + function)
        r = self.send("-exec-run")
        check(r.startswith("running"), "%s: -exec-run: %s" % (self.name, r))
        stop = self.until(lambda l: l.startswith("*stopped"))
        check('reason="breakpoint-hit"' in stop, "%s: stopped: %s" % (self.name, stop))

    def text(self):
        return "\n".join(self.lines)

    def close(self):
        try:
            self.send("-gdb-exit")
            self.p.wait(timeout=T.TIMEOUT)
        except (T.Fail, OSError, subprocess.TimeoutExpired):
            pass
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        with open(os.path.join(self.where, "mi.out"), "w") as f:
            f.write(self.text())
        clean(self.text(), self.name)


def mi_results(text):
    """GDB/MI results ("a=...,b=...") as a dict; a tuple is a dict, a list a list (a list of
    results keeps its values only: stack=[frame={...},...] is a list of frame dicts)."""
    pos = [0]

    def peek():
        return text[pos[0]] if pos[0] < len(text) else ""

    def take(c):
        check(peek() == c, "MI: %r expected at %d of %s" % (c, pos[0], text))
        pos[0] += 1

    def const():
        take('"')
        start, esc = pos[0], False
        while esc or peek() != '"':
            check(peek() != "", "MI: unterminated string in " + text)
            esc = not esc and peek() == "\\"
            pos[0] += 1
        raw = text[start:pos[0]]
        take('"')
        return codecs.decode(raw.encode("latin-1", "backslashreplace"), "unicode_escape")

    def value():
        if peek() == '"':
            return const()
        if peek() == "{":
            take("{")
            out = {}
            while peek() != "}":
                k, v = result()
                out[k] = v
                if peek() == ",":
                    take(",")
            take("}")
            return out
        take("[")
        out = []
        while peek() != "]":
            if peek() in '"{[':
                out.append(value())
            else:
                out.append(result()[1])
            if peek() == ",":
                take(",")
        take("]")
        return out

    def result():
        start = pos[0]
        while peek() not in ("=", ""):
            pos[0] += 1
        key = text[start:pos[0]]
        take("=")
        return key, value()

    out = {}
    while pos[0] < len(text):
        k, v = result()
        out[k] = v
        if peek() == ",":
            take(",")
    return out


# -- jitmap-vm: interpreter frames under the JIT frame --


def vm_truth(output):
    """[(title, [(local, value)], [stack values])] of the compiled tier's interpreter frames,
    innermost first ("vframe" truth lines), and the deopt values they come from, in order."""
    frames, deopt = [], []
    for t in sorted(truth(output, "jitmap-vm:", "vframe"), key=lambda t: int(t["k"])):
        locs = [(k, int(v)) for k, v in t.items()
                if k not in ("call", "site", "k", "method", "bci", "stack")]
        stack = [int(v) for v in t["stack"].split(",") if v]
        frames.append(("[%s, bci %s]" % (t["method"], t["bci"]), locs, stack))
        # The deopt bundle of a frame: its bci, its locals, its stack (vm.c's SAFEPOINT).
        deopt += [int(t["bci"])] + [v for _, v in locs] + stack
    check(len(frames) == 2 and frames[0][0] == "[Demo.square, bci 4]",
          "vm: the program's truth lines: %s" % output)
    return frames, deopt


VM_ARGS = ["--n", "6", "--stop-at", "4"]
VM_JIT = "jit.Demo.sumSquares"
VM_TYPED = [("bt", "bt"), ("full", "bt full"), ("bt2", "bt 2"), ("f1", "frame 1"),
            ("info1", "info frame"), ("locals1", "info locals"), ("up", "up"),
            ("down", "down"), ("f2", "frame 2"), ("info2", "info frame")]


@RUN.test
def vm_typed():
    """jitmap-vm stopped in vm_jit_stop, commands typed: `bt` lists the interpreter frames the
    JIT registered under jit.Demo.sumSquares, innermost first; `bt full` gives each one the
    interpreter's locals and stack and the JIT frame its deopt values; nothing prints a
    Python exception."""
    ENV.need(ENV.vm, "jitmap-vm (needs llvm-config-14)")
    _, part, output = typed("vm-typed", ENV.vm, VM_ARGS, "vm_jit_stop", VM_TYPED)
    want, deopt = vm_truth(output)
    bt = backtrace(part["bt"])
    check(names(bt) == ["vm_jit_stop", VM_JIT, "main"], "vm: bt frames:\n" + part["bt"])
    check([e[0] for e in bt[1][2]] == [w[0] for w in want] and not bt[0][2] and not bt[2][2],
          "vm: bt shows %s under %s, nothing under the others:\n%s" %
          ([w[0] for w in want], VM_JIT, part["bt"]))
    full = backtrace(part["full"])
    check(names(full) == names(bt), "vm: bt full frames:\n" + part["full"])
    got = [(e[0], [(k, num(v)) for k, v in e[1]]) for e in full[1][2]]
    check(got == [(w[0], w[1] + [("stack%d" % i, v) for i, v in enumerate(w[2])]) for w in want],
          "vm: bt full: the interpreter frames' locals %s, the program's %s" % (got, want))
    check([(k, num(v)) for k, v in full[1][1]] ==
          [("deopt%d" % i, v) for i, v in enumerate(deopt)],
          "vm: bt full: the JIT frame's deopt values %s, the program's %s" % (full[1][1], deopt))
    bt2 = backtrace(part["bt2"])
    check(names(bt2) == ["vm_jit_stop", VM_JIT] and bt2[1][2] == bt[1][2],
          "vm: bt 2:\n" + part["bt2"])
    check(re.search(r"^#1 +0x[0-9a-f]+ in %s \(\)" % re.escape(VM_JIT), part["f1"], re.M) and
          "Stack level 1" in part["info1"] and re.match(r"^#2 ", part["up"]) and
          re.match(r"^#1 ", part["down"]) and "Stack level 2" in part["info2"],
          "vm: frame 1, info frame, up, down, frame 2 answer")


@RUN.test
def vm_typed_negative():
    """The same typed session without jitmap: the JIT frame, no interpreter frame, no deopt
    value."""
    ENV.need(ENV.vm, "jitmap-vm (needs llvm-config-14)")
    text, part, _ = typed("vm-typed-negative", ENV.vm, VM_ARGS, "vm_jit_stop", VM_TYPED,
                          jitmap=False)
    bt = backtrace(part["bt"])
    check(names(bt) == ["vm_jit_stop", VM_JIT, "main"] and not any(f[2] for f in bt),
          "vm negative control: bt:\n" + part["bt"])
    check("[Demo." not in text and "deopt0" not in text,
          "vm negative control: no interpreter frame, no deopt value:\n" + text)


VM_CORE_TYPED = [("bt", "bt"), ("full", "bt full"), ("status", "jitmap status"),
                 ("bt-again", "bt")]


def vm_core_session(name, jitmap):
    core, output = T.abort_core(ENV, name, ENV.vm, VM_ARGS)
    check(core, "%s: jitmap-vm --abort left no core" % name)
    _, part, _ = typed(name, ENV.vm, [], None, VM_CORE_TYPED, jitmap=jitmap, core=core)
    return part, output


@RUN.test
def vm_core_typed():
    """A core of jitmap-vm (--abort in vm_jit_stop, under the compiled code), `gdb EXE CORE`
    and `bt` typed first: the interpreter frames under jit.Demo.sumSquares at once, as after
    another jitmap command (GDB reads a core's JIT entries descriptor by descriptor in its
    objfiles' order, so the runtime's image, which carries the layouts, came before LLVM's
    own image of the same code, which replaced it in the reader); `bt full` gives them the
    program's locals."""
    ENV.need(ENV.vm, "jitmap-vm (needs llvm-config-14)")
    part, output = vm_core_session("vm-core-typed", True)
    want, _ = vm_truth(output)
    for tag in ("bt", "bt-again"):
        bt = backtrace(part[tag])
        check(names(bt)[-3:] == ["vm_jit_stop", VM_JIT, "main"] and
              [e[0] for e in bt[-2][2]] == [w[0] for w in want],
              "vm core: %s shows %s under %s:\n%s" % (tag, [w[0] for w in want], VM_JIT,
                                                        part[tag]))
    full = backtrace(part["full"])
    got = [(e[0], [(k, num(v)) for k, v in e[1]]) for e in full[-2][2]]
    check(got == [(w[0], w[1] + [("stack%d" % i, v) for i, v in enumerate(w[2])]) for w in want],
          "vm core: bt full: the interpreter frames' locals %s, the program's %s" % (got, want))


@RUN.test
def vm_core_typed_negative():
    """The same core session without jitmap: the JIT frame, no interpreter frame."""
    ENV.need(ENV.vm, "jitmap-vm (needs llvm-config-14)")
    part, _ = vm_core_session("vm-core-typed-negative", False)
    bt = backtrace(part["bt"])
    check(names(bt)[-3:] == ["vm_jit_stop", VM_JIT, "main"] and not any(f[2] for f in bt),
          "vm core negative control: bt:\n" + part["bt"])


@RUN.test
def vm_break_before_run():
    """`jitmap break 1000` typed before `run`: jitmap's own "not registered yet" line only
    (GDB's 'Function "__jit_debug_register_code" not defined.' leaked before it, from the
    hook jitmap sets on the registration function of a library not loaded yet), and the
    breakpoint still stops jitmap-vm at record 1000 once its JIT registers the code."""
    ENV.need(ENV.vm, "jitmap-vm (needs llvm-config-14)")
    where = ENV.dir("vm-break")
    out = os.path.join(where, "program.out")
    argv = [GDB, "-batch", "-nx"]
    for line in SETUP + ["source " + JITMAP_GDB]:
        argv += ["-iex", line]
    argv += ["-ex", "echo ==break\\n", "-ex", "jitmap break 1000", "-ex", "echo ==run\\n",
             "-ex", "run %s > %s" % (" ".join(VM_ARGS), out), "-ex", "echo ==bt\\n",
             "-ex", "bt 2", "-ex", "echo ==end\\n", "-ex", "kill", ENV.vm]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=where,
                       stdin=subprocess.DEVNULL, timeout=T.TIMEOUT)
    text = p.stdout.decode("utf-8", "replace")
    with open(os.path.join(where, "gdb.out"), "w") as f:
        f.write(text)
    clean(text, "vm break")
    said = text.split("==break\n", 1)[-1].split("==run\n", 1)[0]
    check(said.strip() == "jitmap: record 1000 is not registered yet: breakpoints will be set "
          "when JIT code with it is registered", "vm break: jitmap break before run says:\n" +
          said)
    check("not defined" not in text, "vm break: GDB's own message:\n" + text)
    bt = backtrace(text.split("==bt\n", 1)[-1].split("==end", 1)[0])
    check(names(bt)[:1] == [VM_JIT], "vm break: run stops at record 1000, in %s:\n%s" % (
        VM_JIT, text))


def vm_mi(name, jitmap):
    mi = Mi(name, ENV.vm, jitmap)
    out = os.path.join(mi.where, "program.out")
    try:
        mi.stop_at("vm_jit_stop", VM_ARGS, out)
        mi.results("-enable-frame-filters")
        frames = mi.results("-stack-list-frames")["stack"]
        variables = mi.results("-stack-list-variables --thread 1 --frame 1 --all-values")
        frames2 = mi.results("-stack-list-frames")["stack"]  # again, from GDB's frame cache
    finally:
        mi.close()
    return frames, variables["variables"], frames2, read(out), mi.text()


@RUN.test
def vm_mi_frames():
    """jitmap-vm under `gdb -i=mi` with frame filters, as IDEs run it: -stack-list-frames
    gives the interpreter frames as the JIT frame's children, innermost first, and
    -stack-list-variables on the JIT frame its deopt values, as the program says."""
    ENV.need(ENV.vm, "jitmap-vm (needs llvm-config-14)")
    frames, variables, again, output, _ = vm_mi("vm-mi", True)
    want, deopt = vm_truth(output)
    check([f.get("func") for f in frames] == ["vm_jit_stop", VM_JIT, "main"],
          "vm MI: frames %s" % frames)
    children = [c.get("func") for c in frames[1].get("children", [])]
    check(children == [w[0] for w in want], "vm MI: the JIT frame's children %s, the "
          "program's interpreter frames %s" % (children, [w[0] for w in want]))
    check(not frames[0].get("children") and not frames[2].get("children"),
          "vm MI: children only under the JIT frame: %s" % frames)
    check(again == frames, "vm MI: -stack-list-frames again: %s" % again)
    got = [(v["name"], num(v["value"])) for v in variables]
    check(got == [("deopt%d" % i, v) for i, v in enumerate(deopt)],
          "vm MI: -stack-list-variables on the JIT frame %s, the program's deopt values %s" %
          (got, deopt))


@RUN.test
def vm_mi_negative():
    """The same MI session without jitmap: no children, no deopt value."""
    ENV.need(ENV.vm, "jitmap-vm (needs llvm-config-14)")
    frames, variables, _, _, text = vm_mi("vm-mi-negative", False)
    check([f.get("func") for f in frames] == ["vm_jit_stop", VM_JIT, "main"] and
          not any(f.get("children") for f in frames),
          "vm MI negative control: frames %s" % frames)
    check(variables == [] and "[Demo." not in text,
          "vm MI negative control: the JIT frame's variables %s" % variables)


# -- The LLVM demo JIT and the hand-written JIT --


def every_frame(n):
    """frame K, info frame, info locals for each frame K < n, then up and down."""
    out = []
    for k in range(n):
        out += [("f%d" % k, "frame %d" % k), ("info%d" % k, "info frame"),
                ("locals%d" % k, "info locals")]
    return out + [("up", "up"), ("down", "down")]


def record_values(frame, keys, t, what):
    """frame's locals loc0.. hold the truth values t[keys[i]] (as 64-bit patterns)."""
    got = [(k, bits(v)) for k, v in frame[1]]
    want = [("loc%d" % i, T.as_int(t[k]) & ((1 << 64) - 1)) for i, k in enumerate(keys)]
    check(got == want, "%s: %s, the program's %s" % (what, got, want))


@RUN.test
def demo_typed():
    """The LLVM demo JIT at record 100, typed: bt, bt full (frame 1's values are the record's,
    as the program says), every frame's frame / info frame / info locals."""
    ENV.need_demo()
    cmds = [("bt", "bt"), ("full", "bt full")] + every_frame(4)
    _, part, output = typed("demo-typed", ENV.demo, ["--program", "stackmaps"],
                            "jitmap_demo_safepoint", cmds)
    want = ["jitmap_demo_safepoint", "stackmaps_main", "run_stackmaps", "main"]
    check(names(backtrace(part["bt"])) == want, "demo: bt:\n" + part["bt"])
    full = backtrace(part["full"])
    check(names(full) == want and not any(f[2] for f in full), "demo: bt full:\n" + part["full"])
    record_values(full[1], T.KEYS[100], T.demo_truth(output, "stackmap", 100),
                  "demo: bt full, frame 1 at record 100")
    for k, name in enumerate(want):
        check(re.search(r"^#%d .*\b%s \(" % (k, name), part["f%d" % k], re.M) and
              "Stack level %d" % k in part["info%d" % k],
              "demo: frame %d, info frame:\n%s%s" % (k, part["f%d" % k], part["info%d" % k]))


# A runtime's interpreter frames over statepoint 300's deopt values (d0, d1, d2), given
# through the names API (docs/commands.md), as a user would type it.
DEMO_LAYOUT = ("python import jitmap.names as n; n.deopt_frames(300, ["
               "{'method': 'Demo.inner', 'bci': {'deopt': 1}, 'locals': {'x': 0}}, "
               "{'method': 'Demo.outer', 'bci': 12, 'locals': [2], 'stack': [0]}])")


@RUN.test
def demo_names_frames():
    """The demo's statepoint 300 with interpreter frames given through the names API, typed:
    bt lists them under statepoint_main, bt full with the program's deopt values; frame 1,
    info frame, info locals answer; without the layout, none (the same session)."""
    ENV.need_demo()
    cmds = [("layout", DEMO_LAYOUT), ("bt", "bt"), ("full", "bt full")] + every_frame(2) + [
        ("clear", "python import jitmap.names as n; n.clear()"), ("bt-cleared", "bt")]
    _, part, output = typed("demo-names", ENV.demo, ["--program", "statepoint"],
                            "jitmap_demo_safepoint", cmds)
    t = T.demo_truth(output, "statepoint", 300)
    d = [int(t["d%d" % i]) for i in range(3)]
    want = ["[Demo.inner, bci %d]" % d[1], "[Demo.outer, bci 12]"]
    bt = backtrace(part["bt"])
    check(names(bt)[:2] == ["jitmap_demo_safepoint", "statepoint_main"] and
          [e[0] for e in bt[1][2]] == want, "demo names: bt shows %s under statepoint_main:\n%s"
          % (want, part["bt"]))
    full = backtrace(part["full"])
    got = [(e[0], [(k, num(v)) for k, v in e[1]]) for e in full[1][2]]
    check(got == [(want[0], [("x", d[0])]), (want[1], [("local0", d[2]), ("stack0", d[0])])],
          "demo names: bt full: %s, the program's deopt values %s" % (got, d))
    check([(k, num(v)) for k, v in full[1][1] if k.startswith("deopt")] ==
          [("deopt%d" % i, v) for i, v in enumerate(d)],
          "demo names: bt full: the JIT frame's deopt values:\n" + part["full"])
    check("Stack level 1" in part["info1"], "demo names: info frame in frame 1")
    check(not any(f[2] for f in backtrace(part["bt-cleared"])),
          "demo names: no interpreter frame once the layout is cleared:\n" + part["bt-cleared"])


HANDJIT = ["jitmap_handjit_safepoint", "handjit_inner", "handjit_outer", "main"]


@RUN.test
def handjit_typed():
    """The hand-written JIT (no CFI, a frameless function) at record 1002, typed: bt, bt full
    (frame 1's values are the record's; frame 2's the record's or unavailable, never another
    number), every frame's frame / info frame / info locals."""
    ENV.need(ENV.handjit, "jitmap-handjit")
    cmds = [("bt", "bt"), ("full", "bt full")] + every_frame(4)
    _, part, output = typed("handjit-typed", ENV.handjit, [], "jitmap_handjit_safepoint", cmds)
    t = T.handjit_truth(output)
    check(names(backtrace(part["bt"])) == HANDJIT, "handjit: bt:\n" + part["bt"])
    full = backtrace(part["full"])
    check(names(full) == HANDJIT, "handjit: bt full:\n" + part["full"])
    keys = ["local%d" % i for i in range(6)]
    record_values(full[1], keys, t[1002], "handjit: bt full, frame 1 at record 1002")
    outer = [(k, v) for k, v in full[2][1]]
    check([k for k, _ in outer] == ["loc%d" % i for i in range(6)] and all(
        v.startswith("<unavailable: ") or bits(v) == int(t[1001]["local%d" % i]) & ((1 << 64) - 1)
        for i, (_, v) in enumerate(outer)),
        "handjit: bt full, frame 2 at record 1001: %s, the program's %s" % (outer, t[1001]))
    for k, name in enumerate(HANDJIT):
        check(re.search(r"^#%d .*\b%s \(" % (k, name), part["f%d" % k], re.M),
              "handjit: frame %d:\n%s" % (k, part["f%d" % k]))


@RUN.test
def handjit_mi():
    """The hand-written JIT under `gdb -i=mi` with frame filters: the frames in order, and
    -stack-list-variables on frame 1 gives record 1002's values, as the program says."""
    ENV.need(ENV.handjit, "jitmap-handjit")
    mi = Mi("handjit-mi", ENV.handjit, True)
    out = os.path.join(mi.where, "program.out")
    try:
        mi.stop_at("jitmap_handjit_safepoint", [], out)
        mi.results("-enable-frame-filters")
        frames = mi.results("-stack-list-frames")["stack"]
        variables = mi.results("-stack-list-variables --thread 1 --frame 1 --all-values")
    finally:
        mi.close()
    check([f.get("func") for f in frames] == HANDJIT, "handjit MI: frames %s" % frames)
    t = T.handjit_truth(read(out))[1002]
    got = [(v["name"], bits(v["value"])) for v in variables["variables"]]
    want = [("loc%d" % i, int(t["local%d" % i]) & ((1 << 64) - 1)) for i in range(6)]
    check(got == want, "handjit MI: frame 1's variables %s, the program's %s" % (got, want))


# -- Misuse, and jitmap before it is on --
#
# On the producer's minimal JIT (examples/producer-minimal: jit_answer keeps the VM value 42 in
# rbx across its call to runtime_safepoint, record 1 at the call's return address) and a core
# of it that GDB writes.

MINIMAL = os.path.join(ENV.build, "examples", "producer-minimal", "jitmap-producer-minimal")
STUB = os.path.join(ENV.build, "share", "jitmap", "gdbinit.d", "jitmap.py")
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_minimal = {}


def session(name, args, pre=(), jitmap=True):
    """`gdb -batch -nx` with `pre` (-iex ...) and `args`: (exit status, whole output)."""
    where = ENV.dir(name)
    argv = [GDB, "-batch", "-nx"]
    for line in SETUP + (["source " + JITMAP_GDB] if jitmap else []):
        argv += ["-iex", line]
    try:
        p = subprocess.run(argv + list(pre) + list(args), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, cwd=where, stdin=subprocess.DEVNULL,
                           timeout=T.TIMEOUT)
    except subprocess.TimeoutExpired:
        raise T.Fail("%s: GDB did not finish in %d s (a hang)" % (name, T.TIMEOUT))
    text = p.stdout.decode("utf-8", "replace")
    with open(os.path.join(where, "gdb.out"), "a") as f:
        f.write(text)
    return p.returncode, text


def minimal_core():
    """(core, the VM value) of the minimal JIT stopped in runtime_safepoint: a core GDB wrote
    there (with GDB alone), and `v` as the program's debug information gives it."""
    ENV.need(MINIMAL, "jitmap-producer-minimal")
    if not _minimal or not os.path.exists(_minimal["core"]):  # the runner drops passed tests' cores
        core = os.path.join(ENV.dir("minimal-core"), "minimal.core")
        _, text = session("minimal-core", ["-ex", "break runtime_safepoint", "-ex", "run",
                                           "-ex", "print/d v", "-ex", "gcore " + core,
                                           "-ex", "kill", MINIMAL], jitmap=False)
        m = re.search(r"^\$1 = (\d+)$", text, re.M)
        check(m and os.path.exists(core), "minimal: no core or no value of v:\n" + text)
        _minimal.update(core=core, v=int(m.group(1)))
    return _minimal["core"], _minimal["v"]


# Each misuse alone in a batch session, so that GDB's exit status is its own: (tag, command,
# words of the error). Each gave no error before (help and exit 0, or silence) or an
# "internal error ... please report it".
MISUSE = [
    ("stackmap-no-arg", "print $_stackmap()", "$_stackmap: one argument"),
    ("stackmap-two-args", "print $_stackmap(1, 2)", "$_stackmap: one argument"),
    ("stackmap-string", 'print $_stackmap("x")', "$_stackmap: one argument"),
    ("stackmap-struct", "print $_stackmap($_siginfo)", "$_stackmap: one argument"),
    ("stackmap-id-arg", "print $_stackmap_id(1)", "$_stackmap_id: no argument"),
    ("prefix-bogus", "jitmap bogus",
     'Undefined jitmap command: "bogus".  Try "help jitmap".'),
    ("break-delete-alone", "jitmap break -d",
     "jitmap break: -d needs the record IDs to stop watching (Usage: jitmap break"),
    ("perf-map-dir", "jitmap perf-map /", "jitmap perf-map: /: Is a directory"),
    ("perf-map-refused", "jitmap perf-map {bad}", "jitmap perf-map: {bad}: "),
]


@RUN.test
def misuse_errors():
    """Each misuse of jitmap's commands and convenience functions is a GDB error with a usage
    sentence: exit status 1 under `gdb -batch`, no "internal error", no traceback. The
    negative controls: the same session's good uses exit 0 with the program's value."""
    core, v = minimal_core()
    bad = os.path.join(ENV.dir("misuse"), "bad.dump")
    with open(bad, "wb") as f:  # a jitdump header cut short: the library refuses it
        f.write(b"JiTD\x01\x00\x00\x00")
    wrong = []  # every case is tried, and all that fail are told
    for tag, command, words in MISUSE:
        command, words = command.format(bad=bad), words.format(bad=bad)
        rc, text = session("misuse-" + tag, ["-ex", "frame 1", "-ex", command, MINIMAL, core])
        said = [b for b in T.BAD_OUTPUT if b in text]
        if rc != 1 or words not in text or said:
            wrong.append("`%s`: exit %d (1 wanted), %r wanted%s; it printed:\n%s" % (
                command, rc, words, ", %r printed" % said if said else "",
                text.split("\n#1 ", 1)[-1]))
    check(not wrong, "misuse:\n" + "\n".join(wrong))
    for command, want in (("print $_stackmap(0)", r"^\$1 = %d$" % v),
                          ("print $_stackmap_id()", r"^\$1 = 1$"),
                          ("jitmap break", r"^No record IDs are watched\.$")):
        rc, text = session("misuse-good", ["-ex", "frame 1", "-ex", command, MINIMAL, core])
        clean(text, "good use")
        check(rc == 0 and re.search(want, text, re.M),
              "good use: `%s` exits %d, %r wanted:\n%s" % (command, rc, want, text))


@RUN.test
def core_dir_keeps_core():
    """`jitmap core DIR` is refused before GDB closes the core it debugs: the next command
    still reads it."""
    core, v = minimal_core()
    rc, text = session("core-dir", ["-ex", "jitmap core /", "-ex", "frame 1",
                                    "-ex", "print $_stackmap(0)", MINIMAL, core])
    clean(text, "jitmap core DIR")
    check("jitmap core: /: Is a directory" in text and
          re.search(r"^\$1 = %d$" % v, text, re.M),
          "jitmap core DIR: refused, the core still open:\n" + text)


def auto_load_dir():
    """An auto-load scripts directory with libjitmap-producer's script as the packages install
    it (gdb-scripts/auto-load.py.in, named after the library's real file)."""
    lib = os.path.realpath(os.path.join(ENV.build, "libjitmap-producer.so"))
    top = ENV.dir("auto-load")
    dest = os.path.join(top, lib.lstrip("/") + "-gdb.py")
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(os.path.join(SOURCE, "gdb-scripts", "auto-load.py.in")) as f:
        text = f.read().replace("@JITMAP_GDB_SCRIPT@", JITMAP_GDB)
    with open(dest, "w") as f:
        f.write(text)
    return ["-iex", "set auto-load scripts-directory " + top, "-iex", "set auto-load safe-path /"]


@RUN.test
def stub_and_auto_load_script():
    """The system gdbinit script (auto-load of jitmap) and libjitmap-producer's auto-load
    script together, as the packages install them: `gdb PROG CORE` and `run` print nothing
    but GDB's and jitmap's own lines (GDB 13 printed "Python Exception <class
    'SystemError'>: <method 'disconnect' ...>" when the stub disconnected its handlers a
    second time), and jitmap is on (record 1's value)."""
    ENV.need(STUB, "the system gdbinit script")
    core, v = minimal_core()
    pre = ["-ix", STUB] + auto_load_dir()
    for name, args in (
            ("core", ["-ex", "info stackmap 1", MINIMAL, core]),
            ("run", ["-ex", "break runtime_safepoint", "-ex", "run", "-ex", "info stackmap 1",
                     "-ex", "kill", MINIMAL])):
        rc, text = session("stub-" + name, args, pre, jitmap=False)
        clean(text, "stub and auto-load script, " + name)
        check(rc == 0 and re.search(r"^ +#0 +register +rbx +size 8 +%d$" % v, text, re.M),
              "stub and auto-load script, %s: record 1 shows rbx = %d:\n%s" % (name, v, text))


@RUN.test
def stub_core_compressed():
    """With only the system gdbinit script, `jitmap core CORE.zst` before jitmap is on (GDB
    cannot open the core, so no file with the JIT descriptor arrives to turn it on): jitmap
    loads, opens it, and `info stackmap` answers; `help jitmap` lists `jitmap core` before.
    Negative control: without the script, `jitmap` is an undefined command."""
    ENV.need(STUB, "the system gdbinit script")
    core, v = minimal_core()
    packed = os.path.join(ENV.dir("stub-zst"), "minimal.core.zst")
    zstd = shutil.which("zstd")
    if zstd is None:
        raise T.Skip("no zstd")
    subprocess.run([zstd, "-q", "-f", core, "-o", packed], check=True)
    args = ["-ex", "help jitmap", "-ex", "jitmap core " + packed, "-ex", "info stackmap 1",
            MINIMAL]
    rc, text = session("stub-zst", args, ["-ix", STUB], jitmap=False)
    clean(text, "stub, jitmap core CORE.zst")
    check(re.search(r"^jitmap core -- ", text, re.M),
          "stub: help jitmap lists jitmap core before jitmap is on:\n" + text)
    check(rc == 0 and "is a zstd-compressed core: opened" in text and
          re.search(r"^ +#0 +register +rbx +size 8 +%d$" % v, text, re.M),
          "stub: jitmap core CORE.zst opens it, record 1 shows rbx = %d:\n%s" % (v, text))
    rc, text = session("stub-zst-negative", args, jitmap=False)
    check(rc == 1 and 'Undefined command: "jitmap"' in text,
          "stub negative control: without the script, jitmap is undefined:\n" + text)


# Counts the cores jitmap's Python side opens (tests/debugger/count_opens.py).
COUNT_OPENS = os.path.join(os.path.dirname(T.__file__), "count_opens.py")


@RUN.test
def core_opened_once():
    """A core session (`core-file`, `bt`, `info stackmap`, `jitmap perf-map`, `jitmap status`)
    opens the core once through libjitmap: the session holds it, and the adapter's memory
    reads and JIT descriptors, the perf maps of its notes and the map of where code can be all
    ask that one (they had opened it three times, through two APIs). Another core file closes
    it and opens the next, once; the values read stay the program's. Negative control: the
    counter sees the second core's open."""
    core, v = minimal_core()
    other = os.path.join(ENV.dir("core-once"), "other.core")
    shutil.copyfile(core, other)
    show = "python count_opens.show()"
    args = ["-ex", "core-file " + core, "-ex", "bt", "-ex", "frame 1", "-ex", "info stackmap",
            "-ex", "jitmap perf-map", "-ex", "jitmap status", "-ex", "bt", "-ex", show,
            "-ex", "core-file " + other, "-ex", "bt", "-ex", "info stackmap 1",
            "-ex", "jitmap perf-map", "-ex", show, MINIMAL]
    count = "python import sys; sys.path.insert(0, %r); import count_opens" % (
        os.path.dirname(COUNT_OPENS))
    rc, text = session("core-once", args, ["-iex", count])
    clean(text, "core opened once")
    counts = re.findall(r"^core opens: (\d+), freed: (\d+)$", text, re.M)
    values = re.findall(r"^ +#0 +register +rbx +size 8 +(\d+)$", text, re.M)
    check(rc == 0 and values == [str(v)] * 2,
          "core opened once: record 1 shows rbx = %d on both cores:\n%s" % (v, text))
    check(counts[:1] == [("1", "0")],
          "core opened once: one core-file session opened the core %s times (1 wanted):\n%s"
          % (counts[0][0] if counts else "?", text))
    check(counts[1:] == [("2", "1")],
          "core opened once: another core-file closes the first and opens the second once "
          "(2 opens, 1 freed wanted), got %s:\n%s" % (counts[1:], text))


sys.exit(RUN.run(ENV))
