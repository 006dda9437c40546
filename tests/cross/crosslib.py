"""What the tests of other architectures under qemu-user share (tests/cross): qemu with its
GDB stub, gdb-multiarch sessions with jitmap, checks against truth lines, and LLVM's own lli
of the target running the project's IR.

A test module sets BUILD (argv[1]) through init() and calls check(); summary() prints
"<name>: N passed, M failed" and gives the exit status.
"""
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
import jsoncontract  # noqa: E402
from tally import Tally  # noqa: E402

TIMEOUT = 90
JSON_MARK = "JITMAP-JSON "
SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GDB = shutil.which("gdb-multiarch")

BUILD = WORK = NAME = None
JITMAP_GDB = LLDB_ENTRY = DUMP = STACK = None
T = None


def init(name):
    global BUILD, WORK, NAME, JITMAP_GDB, LLDB_ENTRY, DUMP, STACK, T
    if len(sys.argv) != 2:
        sys.exit("usage: %s BUILD_DIR" % os.path.basename(sys.argv[0]))
    NAME = name
    T = Tally(name)
    BUILD = os.path.abspath(sys.argv[1])
    WORK = tempfile.mkdtemp(prefix="jitmap-%s-" % name)
    JITMAP_GDB = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")
    LLDB_ENTRY = os.path.join(BUILD, "share", "jitmap", "lldb", "jitmap.py")
    DUMP = os.path.join(BUILD, "jitmap-dump")
    STACK = os.path.join(BUILD, "jitmap-stack")


def check(cond, what):
    return T.check(cond, what)


def skip(why):
    shutil.rmtree(WORK, ignore_errors=True)
    T.skip(why)


def summary():
    shutil.rmtree(WORK, ignore_errors=True)
    return T.summary()


def truth(output, prefix):
    """{record id: {"local0": value, ..., "stack_size": ...}} from a hand-written JIT's truth
    lines ("PREFIX record id=N pc=0x... local0=V ... stack_size=S")."""
    out = {}
    for line in output.splitlines():
        if line.startswith(prefix + " record "):
            kv = dict(x.split("=", 1) for x in line.split()[2:] if "=" in x)
            out[int(kv["id"])] = kv
    return out


def check_record(obj, rid, t, what):
    """obj: info stackmap -json of a frame at record `rid`; its values equal the truth's."""
    rec = obj.get("record") or {}
    check(rec.get("id") == rid, "%s: record %s at the frame (%s)" % (what, rid, obj.get("error")))
    got = [loc.get("value") for loc in obj.get("locations", [])]
    want = [int(t.get(rid, {}).get("local%d" % i, -1)) for i in range(len(got))]
    check(got == want and len(got) == len([k for k in t.get(rid, {}) if k.startswith("local")]),
          "%s: record %d values %s, truth %s" % (what, rid, got, want))
    check(rec.get("stack_size") == int(t.get(rid, {}).get("stack_size", -1)),
          "%s: stack size" % what)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, **kw)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port):
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                for line in f.readlines()[1:]:
                    fields = line.split()
                    if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":
                        return True
        except OSError:
            continue
    return False


class Qemu:
    """qemu-user running `program` under its GDB stub, its output in a file."""

    def __init__(self, name, qemu, program, args, qemu_args=()):
        self.port = free_port()
        self.out = os.path.join(WORK, name + ".out")
        with open(self.out, "w") as f:
            self.p = subprocess.Popen([qemu] + list(qemu_args) + ["-g", str(self.port), program] +
                                      list(args), stdout=f, stderr=subprocess.STDOUT)
        # The stub listens once qemu has loaded the program. It takes one connection: look
        # for the listening socket rather than connect to it.
        for _ in range(200):
            if listening(self.port):
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("%s did not listen on port %d" % (qemu, self.port))

    def output(self):
        with open(self.out) as f:
            return f.read()

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


def guest_core(qemu, program, args):
    """Run `program` under qemu-user (no stub) in a folder of its own with cores allowed:
    (the guest core qemu wrote on the program's fatal signal, or None; its stdout)."""
    d = tempfile.mkdtemp(prefix="core-", dir=WORK)

    def limits():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    r = subprocess.run([qemu, program] + list(args), capture_output=True, text=True, cwd=d,
                       preexec_fn=limits, timeout=TIMEOUT)
    cores = [os.path.join(d, c) for c in os.listdir(d) if c.endswith(".core")]
    if not cores:
        print("%s: SKIP core: qemu wrote no core (exit %d)" % (NAME, r.returncode))
    return (cores[0] if cores else None), r.stdout


def dump_entries(core, program):
    """jitmap-dump on qemu's guest `core`: without --exe it says why it finds nothing and what
    to give; with --exe `program`, exit 0. The JIT entries of its JSON ([] when it failed)."""
    r = run([DUMP, core])
    check(r.returncode == 1 and "no __jit_debug_descriptor" in r.stderr and "--exe" in r.stderr,
          "core, jitmap-dump without --exe: says why and what to give (%d: %s)" % (
              r.returncode, r.stderr))
    r = run([DUMP, "--format=json", "--exe", program, core])
    check(r.returncode == 0, "core, jitmap-dump --exe: exit 0 (%s)" % r.stderr)
    if r.returncode:
        return []
    return [e for ds in jsoncontract.loads(r.stdout, "jitmap-dump")["descriptors"] for e in ds["entries"]]


def record_ids(entries):
    return sorted(rec["id"] for e in entries for b in e["blobs"] for rec in b["records"])


def stack_frames(core, program, options=()):
    """jitmap-stack --json --values [options] --exe `program` on `core`: (every frame of every
    thread, its JIT frames, what it printed), empty lists when it failed."""
    r = run([STACK, "--json", "--values"] + list(options) + ["--exe", program, core])
    every = []
    if r.returncode == 0:
        every = [f for th in jsoncontract.loads(r.stdout, "jitmap-stack")["threads"] for f in th["frames"]]
    return every, [f for f in every if f.get("jit")], "%d: %s" % (r.returncode, r.stdout[:300])


def small_core(core, program):
    """`core` made small (jitmap-core-handler --small, the program given: qemu's core names no
    mapped file): without --exe the handler says what to give; with it, every frame and value
    jitmap-stack finds in the small core is the full core's, in at most 2% of its size."""
    handler = os.path.join(BUILD, "jitmap-core-handler")
    small = core + ".small"
    with open(small, "wb") as f:
        r = subprocess.run([handler, "--small", "--from=" + core], stdout=f,
                           stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
    check(r.returncode == 0 and "give the program with --exe" in r.stderr,
          "core, --small without --exe: says what to give (%d: %s)" % (r.returncode, r.stderr))
    with open(small, "wb") as f:
        r = subprocess.run([handler, "--small", "--exe=" + program, "--from=" + core], stdout=f,
                           stderr=subprocess.PIPE, text=True, timeout=TIMEOUT)
    check(r.returncode == 0 and "a small core: " in r.stderr, "core, --small --exe: %s" %
          r.stderr)
    check(os.path.getsize(small) <= 0.02 * os.path.getsize(core),
          "core, the small core: %d bytes of %d" % (os.path.getsize(small),
                                                    os.path.getsize(core)))
    full_frames, _, said = stack_frames(core, program)
    small_frames, _, said_small = stack_frames(small, program)
    check(full_frames and small_frames == full_frames,
          "core, jitmap-stack on the small core: the full core's frames and values (%s / %s)"
          % (said, said_small))


def gdb_session(name, program, commands, qemu=None, args=(), qemu_args=(), jitmap=True,
                core=None, sysroot="/"):
    """gdb-multiarch over a fresh qemu (or on `core`): (its output, the program's output, the
    JSON answers of the `json TAG COMMAND` lines of `commands`)."""
    script = os.path.join(WORK, name + ".gdb")
    lines = ["set pagination off", "set confirm off", "set debuginfod enabled off",
             "set sysroot " + sysroot]
    if jitmap:
        lines.append("source " + JITMAP_GDB)
    q = None
    if core is None:
        q = Qemu(name, qemu, program, args, qemu_args)
        lines.append("target remote :%d" % q.port)
    cmds = {}
    for c in commands:
        if c.startswith("json "):
            _, tag, cmd = c.split(" ", 2)
            cmds[tag] = cmd
            lines.append("python print(%r + %r + ' ' + gdb.execute(%r, to_string=True).strip())"
                         % (JSON_MARK, tag, cmd))
        else:
            lines.append(c)
    with open(script, "w") as f:
        f.write("\n".join(lines) + "\n")
    cmd = [GDB, "-batch", "-nx", "-x", script, program] + ([core] if core else [])
    try:
        r = run(cmd)
    finally:
        if q:
            q.stop()
    answers = {}
    for line in r.stdout.splitlines():
        if line.startswith(JSON_MARK):
            tag, text = line[len(JSON_MARK):].split(" ", 1)
            answers[tag] = jsoncontract.loads(text, jsoncontract.output_of(cmds[tag]))
    return r.stdout + r.stderr, q.output() if q else "", answers


STATS = re.compile(r"STATS .*claimed=(\d+).* unwinds=(\d+) unwind_failures=(\d+)")
STATS_CMD = "python import jitmap.gdb_reader as g; print('STATS', g.stats_text())"

# tests/fixtures/ir/stackmap_after_call.ll: record 11's locations.
AFTER_CALL = os.path.join(SOURCE, "tests", "fixtures", "ir", "stackmap_after_call.ll")
A, B = 0x1122334455667700, 0x01020300
AFTER_CALL_VALUES = [A + k for k in range(10)] + [B + 1, B + 2, 9000000000, (1 << 64) - 5]


STATEPOINT_AFTER_CALL = os.path.join(SOURCE, "tests", "fixtures", "ir",
                                     "statepoint_after_call.ll")


def deep_recursion(program, qemu, prefix, inner, outer, outer_id, recurse_id):
    """The hand-written JIT run with --depth 3 (--trap), the reader claiming it: bt shows the
    leaf `inner` and four `outer` frames above it, then main, all unwound by jitmap; frame 1
    is at record `outer_id`, frames 2-4 at `recurse_id`, each with the truth's values."""
    out, prog, a = gdb_session("deep", program, [
        "set jitmap reader-claim auto", "continue", "bt"] +
        ["json f%d info stackmap -json %d" % (k, k) for k in range(1, 5)], qemu,
        ["--trap", "--depth", "3"])
    t = truth(prog, prefix)
    check(re.search(r"#0 .* %s \(\)\n(#[1-4] .* %s \(\)\n){4}#5 .* in main " % (inner, outer),
                    out), "depth 3: bt:\n" + out)
    check_record(a.get("f1", {}), outer_id, t, "depth 3, frame 1")
    for k in range(2, 5):
        check_record(a.get("f%d" % k, {}), recurse_id, t, "depth 3, frame %d" % k)


def lli_after_call(what, qemu, lli, qemu_args, sysroot, own_unwinder, statepoint=False):
    """The target's lli runs stackmap_after_call.ll (or, with `statepoint`, the same values as
    statepoint 12's deopt state: where LLVM reloads a spilled value between a call and a
    stackmap, AArch64, the record is not at the return address) under qemu, stopped in
    getppid: GDB alone has no info stackmap; with jitmap, frame 1 is `work` at its record
    with the IR's values (every byte distinct: a value read in the wrong byte order, or the
    wrong half of a register, is caught). With `own_unwinder`, `reader-claim auto` too:
    jitmap's unwinder (over LLVM's CFI) unwinds the JIT frames."""
    args = ["-jit-kind=mcjit", STATEPOINT_AFTER_CALL if statepoint else AFTER_CALL]
    rid = 12 if statepoint else 11
    base = ["set breakpoint pending on", "break getppid", "continue", "bt 3"]
    bt = re.compile(r"#1 .* in work \(\)\n#2 .* in main \(\)")
    out, _, _ = gdb_session(what + "-negative", lli, base + ["info stackmap 1"], qemu, args,
                            qemu_args, jitmap=False, sysroot=sysroot)
    check('Undefined info command: "stackmap' in out and bt.search(out),
          "%s, GDB alone: bt, and no info stackmap:\n%s" % (what, out))
    for mode in ("default", "auto") if own_unwinder else ("default",):
        pre = ["set jitmap reader-claim auto"] if mode == "auto" else []
        roots = ["json roots info gc-roots -all -json"] if statepoint else []
        out, _, a = gdb_session("%s-%s" % (what, mode), lli, pre + base + [
            "json f1 info stackmap -json 1", "json verify jitmap verify -json", STATS_CMD] +
            roots, qemu, args, qemu_args, sysroot=sysroot)
        w = "%s, claim %s" % (what, mode)
        check(bt.search(out), "%s: bt:\n%s" % (w, out))
        o = a.get("f1", {})
        locs = ((o.get("statepoint") or {}).get("deopt", []) if statepoint
                else o.get("locations", []))
        got = [loc.get("value") for loc in locs]
        check((o.get("record") or {}).get("id") == rid and got == AFTER_CALL_VALUES,
              "%s: frame 1 at record %d, values %s, the IR's %s (%s)" % (
                  w, rid, [hex(v) if isinstance(v, int) else v for v in got],
                  [hex(v) for v in AFTER_CALL_VALUES], o.get("error")))
        # verify's frame checks from the architecture's table (the caller's SP = SP + stack
        # size on AArch64 and s390x): frame 1 at its record agrees with the unwinder.
        v = a.get("verify", {})
        check(v.get("frames_checked", 0) >= 1 and v.get("problems") == [],
              "%s: jitmap verify: %s" % (w, v))
        if statepoint:
            # gc-live (obj, obj + 16), both relocated: the pairs (obj, obj + 16) and
            # (obj, obj), obj malloc's block, in the statepoint and in info gc-roots.
            def pairs(roots):
                return sorted((r.get("offset"), r["base"].get("value"), r["derived"].get("value"))
                              for r in roots)
            sp_roots = pairs((o.get("statepoint") or {}).get("gc_roots", []))
            obj = sp_roots[0][1] if sp_roots else None
            check(obj and sp_roots == [(0, obj, obj), (16, obj, obj + 16)],
                  "%s: statepoint 12's GC roots (obj, obj) and (obj, obj + 16): %s" % (
                      w, sp_roots))
            listed = pairs(a.get("roots", {}).get("roots", []))
            check(listed == sp_roots, "%s: info gc-roots -all lists them: %s" % (w, listed))
        m = STATS.search(out)
        if mode == "auto":
            check(m and int(m.group(1)) == 1 and int(m.group(2)) >= 2 and int(m.group(3)) == 0,
                  "%s: jitmap unwound the JIT frames: %s" % (w, m.group(0) if m else out))
