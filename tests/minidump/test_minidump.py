#!/usr/bin/env python3
"""jitmap-minidump and `jitmap-core-handler --minidump`, judged by Breakpad's stock tools
(minidump_stackwalk, minidump_dump, dump_syms of npm's minidump@0.26.0: scripts/setup-breakpad.sh)
as a crash pipeline runs them: the dump and jitmap's symbol store S for the JIT code, dump_syms'
store N for the native modules on the stacks (a symbol server's part), `minidump_stackwalk
[-m] DUMP S N`.

    tests/minidump/test_minidump.py BUILD_DIR

The truth is jitmap-stack --json on the same target, taken just before: each thread's JIT
frames (jit true) and their functions. A walk's thread is matched to the truth's by the PCs of
their frames (-m lists threads by index, the crashing one first). For every truth thread with
JIT frames, the matched walk:
  - names the same JIT frames, in order (-m's function column);
  - reaches the frame after (outer to) each JIT frame by `Found by: call frame info` (the
    plain output), at the PC the truth has there: the symbol file's STACK CFI, not stack
    scanning nor the frame pointer;
and `minidump_dump` reads every stream (exit 0). Negative controls: the same dump walked with
an empty symbol folder, and with N alone (no symbol of jitmap's), names none of the JIT
functions.

- demo_core: the demo JIT at a statepoint in two threads (`--program statepoint --threads 2
  --abort`), the kernel's core; `jitmap-minidump --symbols S CORE -o OUT.dmp`; the dump is no
  larger than the small core of the same process (`jitmap-core-handler --small --from=CORE`).
- node_live: Node.js with --perf-basic-prof in three nested optimized functions, held
  (SIGSTOP: tests/lib/held.py); `jitmap-minidump --symbols S PID -o OUT.dmp`, left stopped;
  the dump no larger than the small core of the process (gcore's, made small with its perf
  map added).
- node_kernel: Node.js calling process.abort() under the three, and the demo JIT aborting at
  its statepoint, through the real core_pattern `|h --minidump DIR %P -- dd of=...` (set and
  restored; root needed, else skipped): the dump and symbols the handler wrote in DIR, judged
  the same way against jitmap-stack on the core that came through; each dump no larger than
  the small core made from that core.
- hostile: damaged copies of the demo core (cut short at many points, notes and program
  headers broken, the JIT descriptor's list broken, the registered image broken) and the
  hostile inferior (tests/hostile/, every mode it can hold at once, live): jitmap-minidump
  never dies by a signal nor hangs; it exits 0 with a dump minidump_dump reads, or 1 saying
  why ("jitmap-minidump: ..." naming what); the hostile inferior's good_fn is named by the
  walk. (tests/damaged runs every damaged core through jitmap-minidump too.)

Exits 77 (skipped) when jitmap-minidump is not built or Breakpad's tools cannot be set up;
each case skips without its program. About 15 s.
"""
import json
import os
import re
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
TOP = os.path.dirname(TESTS)
sys.path.insert(0, os.path.join(TESTS, "debugger"))
sys.path.insert(0, os.path.join(TESTS, "lib"))
sys.path.insert(0, os.path.join(TESTS, "stack"))
sys.path.insert(0, os.path.join(TESTS, "hostile"))
import breakpad as BP  # noqa: E402
import harness as H  # noqa: E402
import held  # noqa: E402
import module_truth as MT  # noqa: E402
import modes as HM  # noqa: E402
from corefile import Core  # noqa: E402

if len(sys.argv) != 2:
    sys.exit("usage: test_minidump.py BUILD_DIR")
BUILD = os.path.abspath(sys.argv[1])
STACK = os.path.join(BUILD, "jitmap-stack")
MINIDUMP = os.path.join(BUILD, "jitmap-minidump")
HANDLER = os.path.join(BUILD, "jitmap-core-handler")
TIMEOUT = 60
NT_PRSTATUS, NT_FILE = 1, 0x46494C45


def run(argv, **kw):
    """(exit status or "timeout", stdout, stderr) as text."""
    try:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=kw.pop("timeout", TIMEOUT), **kw)
    except subprocess.TimeoutExpired as e:
        return "timeout", (e.stdout or b"").decode("utf-8", "replace"), \
            (e.stderr or b"").decode("utf-8", "replace")
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def truth_of(target, *extra):
    """jitmap-stack --json TARGET: the object."""
    rc, out, err = run([STACK, "--json"] + list(extra) + [target])
    H.check(rc in (0, 1) and out.startswith("{"), "jitmap-stack %s: exit %s: %s" % (
        target, rc, err[-400:]))
    return json.loads(out)


def make_minidump(target, out, symbols, *extra):
    """jitmap-minidump --symbols SYMBOLS TARGET -o OUT, as a user types it."""
    rc, _, err = run([MINIDUMP, "--symbols", symbols] + list(extra) + [target, "-o", out])
    H.check(rc == 0 and os.path.exists(out) and os.path.getsize(out) > 0,
            "jitmap-minidump %s: exit %s: %s" % (target, rc, err[-600:]))
    return out


def native_store(tools, truth, maps, root):
    """dump_syms of every native module on the truth's stacks (their files found in the
    process's maps or the core's NT_FILE), in a store of their own: its path."""
    names = {f["module"] for t in truth["threads"] for f in t["frames"]
             if not f["jit"] and f.get("module")}
    paths = {}
    for m in maps:
        if m.path and os.path.basename(m.path) in names and os.path.isfile(m.path):
            paths.setdefault(os.path.basename(m.path), m.path)
    os.makedirs(root, exist_ok=True)
    for name in sorted(paths):
        H.check(tools.store(paths[name], root), "dump_syms %s wrote no symbol file" % paths[name])
    return root


def physical(thread):
    """A truth thread's frames as a stack walker sees them: without the frames jitmap-stack
    adds at a PC (inlined functions: "inlined") or rebuilds from a tail call ("tail_call"),
    which Breakpad's walker shows not (dump_syms' files for files without DWARF have no INLINE
    records)."""
    return [f for f in thread["frames"] if not f.get("inlined") and not f.get("tail_call")]


def judge(what, tools, truth, dmp, syms, natives, empty):
    """The stock walker on DMP with jitmap's symbols SYMS and dump_syms' NATIVES names the
    truth's JIT frames thread by thread, in order, and reaches each one's caller by CFI; not
    without SYMS; minidump_dump reads it."""
    problems = []
    rc, said = tools.dump(dmp)
    if rc != 0:
        problems.append("minidump_dump exits %s: %s" % (rc, said[:5]))
    jit_modules = set(BP.symbol_modules(syms))
    H.check(jit_modules, "%s: jitmap-minidump wrote no symbol file under %s" % (what, syms))
    walk = tools.walk(dmp, [syms, natives])
    H.check(walk.threads and walk.rc == (0, 0), "%s: minidump_stackwalk exits %s, %d threads"
            % (what, walk.rc, len(walk.threads)))
    # Every native module on the stacks is a module of the dump (its frames get dump_syms'
    # symbols and CFI only so).
    natives_on_stack = sorted({f["module"] for t in truth["threads"] for f in t["frames"]
                               if not f["jit"] and f.get("module")})
    if not all(walk.module(m) for m in natives_on_stack):
        problems.append("modules on the stacks missing from the dump's module list: %s" % [
            m for m in natives_on_stack if not walk.module(m)])
    # Every thread's registers as the truth has them: its walk starts at the truth's PC and
    # reaches the truth's caller (a context's stack pointer wrong, or its stack missing,
    # loses the caller).
    every = [[int(f["pc"], 16) for f in physical(t)] for t in truth["threads"]]
    for i, w in BP.match_threads(every, walk).items():
        t, firsts = truth["threads"][i], every[i][:2]
        if w is None or w.rips()[:2] != firsts:
            problems.append("thread %d: the walk (%s) starts %s, jitmap-stack %s" % (
                t["tid"], "none" if w is None else "thread %d" % w.index,
                [hex(x) for x in (w.rips()[:2] if w else [])], [hex(x) for x in firsts]))
    held_threads = [t for t in truth["threads"] if any(f["jit"] for f in t["frames"])]
    H.check(held_threads, "%s: the truth has no JIT frame" % what)
    names = {f["function"] for t in held_threads for f in t["frames"] if f["jit"]}
    pcs = [[int(f["pc"], 16) for f in physical(t)] for t in held_threads]
    paired = BP.match_threads(pcs, walk)
    for i, t in enumerate(held_threads):
        w = paired[i]
        want = [f["function"] for f in t["frames"] if f["jit"]]
        if w is None:
            problems.append("thread %d (%s): no walk shares a PC with it" % (t["tid"], want))
            continue
        got = [(k, f) for k, f in enumerate(w.frames)
               if f.module in jit_modules or (f.function and f.function in names)]
        if [f.function for _, f in got] != want:
            problems.append("thread %d: the walk (thread %d) names %s, jitmap-stack %s" % (
                t["tid"], w.index, [f.function for _, f in got], want))
            continue
        # The frame after each JIT frame: by CFI, at the truth's PC.
        frames = physical(t)
        jit_at = [k for k, f in enumerate(frames) if f["jit"]]
        for (k, f), j in zip(got, jit_at):
            after = w.frames[k + 1] if k + 1 < len(w.frames) else None
            truth_after = frames[j + 1] if j + 1 < len(frames) else None
            if truth_after is None:
                continue
            want_pc = int(truth_after["pc"], 16)
            # Where jitmap proved every step to it, the symbol file's row finds it (call
            # frame info); where a guess of jitmap's reached it (a runtime's builtins without
            # CFI below: jitmap-stack says so in `guess`), the file has no row for that step,
            # and the walker's own frame-pointer rule may find it: never its scan.
            how = (("call frame info",) if not truth_after.get("guess")
                   else ("call frame info", "previous frame's frame pointer"))
            if after is None or after.found_by not in how or after.rip != want_pc:
                problems.append(
                    "thread %d: the frame after %s (walk thread %d, frame %d) is %s; want %s "
                    "at 0x%x by %s" % (t["tid"], f.function, w.index, k + 1, after,
                                      truth_after["function"], want_pc, " or ".join(how)))
    # (kept beside the dump, for a failure's reader)
    for suffix, text in ((".walk-m.txt", walk.machine), (".walk.txt", walk.plain),
                         (".truth.json", json.dumps(truth, indent=1))):
        with open(dmp + suffix, "w") as f:
            f.write(text)
    H.check(not problems, "%s: the stock walker against jitmap-stack (%s.walk*.txt):\n  %s"
            % (what, dmp, "\n  ".join(problems)))
    # The controls: no symbol of jitmap's, nothing named.
    for paths, label in (([empty], "an empty symbol folder"), ([natives], "dump_syms' alone")):
        c = tools.walk(dmp, paths)
        named = sorted(set(c.functions()) & names)
        H.check(c.threads and not named, "%s, control (%s): %d threads, JIT functions named %s"
                % (what, label, len(c.threads), named))
    print("  %s: %d threads with JIT frames, %d JIT frames named, callers by CFI" % (
        what, len(held_threads), sum(len([f for f in t["frames"] if f["jit"]])
                                     for t in held_threads)))
    return walk


def small_core_size(handler, core, out, *pid):
    """The size of the small core jitmap-core-handler --small makes from CORE (with PID: the
    process's perf maps added)."""
    with open(out, "wb") as f:
        r = subprocess.run([handler, "--small", "--from=" + core] + list(pid), stdout=f,
                           stderr=subprocess.PIPE, timeout=TIMEOUT)
    H.check(r.returncode == 0 and os.path.getsize(out) > 0,
            "jitmap-core-handler --small --from=%s: exit %d: %s" % (
                core, r.returncode, r.stderr.decode()[-300:]))
    return os.path.getsize(out)


def no_larger(what, dmp, small):
    a = os.path.getsize(dmp)
    H.check(a <= small, "%s: the minidump is %d bytes, the small core %d" % (what, a, small))
    print("  %s: minidump %d bytes, small core %d" % (what, a, small))


def three(thread):
    """Whether a thread's JIT frames hold node_hot.js's three functions, innermost first (V8's
    perf map names them "JS:*NAME FILE:L:C")."""
    names = [f["function"].split()[0].lstrip("JS:*~^") for f in thread["frames"]
             if f["jit"] and f["function"]]
    return [n for n in names if n.startswith("jitmap")][:3] == [
        "jitmapInner", "jitmapMiddle", "jitmapOuter"]


def unlimited_core():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


# -- Hostile input --


def patch(data, at, fmt, *values):
    b = bytearray(data)
    struct.pack_into(fmt, b, at, *values)
    return bytes(b)


def damaged(data):
    """Damaged copies of a core, one at a time (a copy is the core's size): (name, bytes, what
    a refusal must name: a regex)."""
    core = Core(data)
    yield "not-elf", data[:16], r"not an ELF|ELF"
    yield "empty", b"", r"empty|not an ELF|ELF"
    yield "cut-at-64", data[:64], r"program header|truncated"
    yield "cut-in-phdrs", data[:core.phoff + 56 * 3 + 20], r"program header|truncated"
    yield "phnum-65535", patch(data, 0x38, "<H", 0xffff), r"program header"
    yield "phoff-past-end", patch(data, 0x20, "<Q", len(data) + 4096), r"program header"
    yield "cut-last-byte", data[:-1], r"truncated"
    yield "cut-half", data[:len(data) // 2], r"truncated"
    for at, ntype, doff, dsz in core.notes[:6]:
        yield "cut-in-note-%#x" % ntype, data[:doff + dsz // 2], r"truncated|note"
    at, _, doff, dsz = core.note(NT_PRSTATUS)
    yield "prstatus-short", patch(data, at + 4, "<I", 16), r"NT_PRSTATUS|thread"
    yield "prstatus-huge-descsz", patch(data, at + 4, "<I", 0xfffffff0), r"note|runs"
    regs = doff + 112
    yield ("prstatus-wild-sp", patch(data, regs + 8 * 19, "<Q", 0xbad0000),
           r"stack pointer|not readable|0xbad0000")
    yield ("prstatus-sp-top", patch(data, regs + 8 * 19, "<Q", 0xfffffffffffffff8),
           r"stack pointer|not readable")
    at, _, doff, dsz = core.note(NT_FILE)
    yield "nt-file-count-huge", patch(data, doff, "<Q", 1 << 40), r"mappings|NT_FILE"
    notes_ph = next(i for i, t, *_ in core.phdrs if t == 4)
    yield ("notes-past-end", patch(data, core.phoff + 56 * notes_ph + 8, "<Q", len(data) + 8),
           r"notes|thread")
    # Segments: one wrapping the address space, one overlapping the first, one huge.
    loads = [i for i, t, *_ in core.phdrs if t == 1]
    k = loads[len(loads) // 2]
    yield ("segment-wraps", patch(data, core.phoff + 56 * k + 16, "<Q", 0xfffffffffffff000),
           r"wraps|segment")
    yield ("segment-filesz-huge", patch(data, core.phoff + 56 * k + 32, "<Q", 1 << 40),
           r"segment|truncated")
    yield ("segments-overlap", patch(data, core.phoff + 56 * k + 16, "<Q",
                                     core.phdrs[loads[0]][4]), r"overlap|segment")


def hostile_cores(tools, core, work):
    """jitmap-minidump on damaged copies of CORE: no signal, no hang; exit 0 with a dump
    minidump_dump reads, or 1 naming what."""
    with open(core, "rb") as f:
        data = f.read()
    problems, n, refused = [], 0, 0
    for name, bytes_, expect in damaged(data):
        n += 1
        path = os.path.join(work, name + ".core")
        with open(path, "wb") as f:
            f.write(bytes_)
        del bytes_
        out = path + ".dmp"
        syms = os.path.join(work, name + ".sym")
        rc, _, err = run([MINIDUMP, "--symbols", syms, path, "-o", out], timeout=30)
        if rc == "timeout" or rc < 0 or rc > 2:
            problems.append("%s: %s (%s)" % (name, "hangs" if rc == "timeout" else
                                              "exit %s" % rc, err[-300:]))
        elif rc == 0:
            drc, said = tools.dump(out)
            if drc != 0:
                problems.append("%s: exit 0, but minidump_dump exits %d: %s" % (
                    name, drc, said[:3]))
        elif rc == 1:
            refused += 1
            if not re.search(r"^jitmap-minidump: .*(%s)" % expect, err, re.M | re.I):
                problems.append("%s: exit 1 without naming /%s/: %r" % (name, expect,
                                                                        err[-300:]))
        else:
            problems.append("%s: a usage error (exit 2): %s" % (name, err[-300:]))
        os.unlink(path)
        if os.path.exists(out):
            os.unlink(out)
        shutil.rmtree(syms, ignore_errors=True)
    H.check(not problems, "damaged cores through jitmap-minidump:\n  " + "\n  ".join(problems))
    print("  hostile: %d damaged cores, none crashed or hung; %d refused, saying why" % (
        n, refused))


def main():
    if not os.access(MINIDUMP, os.X_OK):
        print("SKIP: %s not built" % MINIDUMP)
        return 77
    for path in (STACK, HANDLER):
        if not os.access(path, os.X_OK):
            print("SKIP: %s not built" % path)
            return 77
    try:
        tools = BP.Tools.setup(TOP)
    except BP.Missing as e:
        print("SKIP: %s" % e)
        return 77
    env = H.Env(BUILD, "jitmap-minidump.")
    runner = H.Runner("minidump")
    empty = env.dir("empty")
    made = {}

    @runner.test
    def demo_core():
        """The demo JIT's core at a statepoint in two threads."""
        env.need_demo()
        d = env.dir("demo")
        with open(os.path.join(d, "out"), "w") as f:
            p = subprocess.run([env.demo, "--threads", "2", "--abort", "--program",
                                "statepoint"], stdout=f, stderr=subprocess.STDOUT, cwd=d,
                               preexec_fn=unlimited_core, timeout=TIMEOUT)
        cores = [c for c in os.listdir(d) if c == "core" or c.startswith("core.")]
        if p.returncode not in (-6, 134) or not cores:
            raise H.Skip("no core from the demo (exit %d; core_pattern %r)" % (
                p.returncode, H.read("/proc/sys/kernel/core_pattern").strip()))
        # (named so that the harness, which drops a passed test's cores, keeps it for hostile)
        core = made["demo-core"] = os.path.join(d, "demo-core.elf")
        os.rename(os.path.join(d, cores[0]), core)
        truth = truth_of(core)
        H.check(len([t for t in truth["threads"] if any(f["jit"] for f in t["frames"])]) == 2,
                "the demo's core: 2 threads with JIT frames (%s)" % [
                    [f["function"] for f in t["frames"] if f["jit"]] for t in truth["threads"]])
        syms = os.path.join(d, "S")
        dmp = make_minidump(core, os.path.join(d, "demo.dmp"), syms)
        natives = native_store(tools, truth, MT.core_maps(core), os.path.join(d, "N"))
        no_larger("demo core", dmp, small_core_size(HANDLER, core, os.path.join(d, "small")))
        walk = judge("demo core", tools, truth, dmp, syms, natives, empty)
        H.check(walk.crash and walk.crash[0] == "SIGABRT",
                "demo core: the walk's crash line is %s, not SIGABRT" % walk.crash)

    @runner.test
    def node_live():
        """Node.js held in three nested optimized functions, dumped live."""
        d = env.dir("node")
        try:
            with held.node(d) as (pid, out):
                truth = truth_of(str(pid))
                syms = os.path.join(d, "S")
                dmp = make_minidump(str(pid), os.path.join(d, "node.dmp"), syms)
                natives = native_store(tools, truth, MT.live_maps(pid), os.path.join(d, "N"))
                H.check(H.read("/proc/%d/stat" % pid).rsplit(")", 1)[1].split()[0] == "T",
                        "node: jitmap-minidump left the process otherwise than stopped")
                # The small core of the same process, its perf map added (gcore's core:
                # ~650 MB, gone at once).
                full = held.gcore(pid, d)
                try:
                    small = small_core_size(HANDLER, full, os.path.join(d, "small"), str(pid))
                finally:
                    os.unlink(full)
        except held.Missing as e:
            raise H.Skip(str(e)) from None
        H.check(three(truth["threads"][0]), "node: jitmap-stack names %s" % [
            f["function"] for f in truth["threads"][0]["frames"] if f["jit"]])
        no_larger("node live", dmp, small)
        judge("node live", tools, truth, dmp, syms, natives, empty)

    def kernel_ready():
        rc, out, _ = run([HANDLER, "--help"])
        if "--minidump" not in out:
            raise H.Skip("jitmap-core-handler has no --minidump")
        if os.geteuid() != 0:
            raise H.Skip("core_pattern can be set by root only")

    @runner.test
    def node_kernel():
        """Node.js and the demo JIT crashing through core_pattern with --minidump DIR."""
        kernel_ready()
        if not shutil.which("node"):
            raise H.Skip("no node")
        crash(env.dir("kernel"), "node", ["node"] + held.NODE_FLAGS +
              [held.NODE_SCRIPT, "abort"], lambda t: three(t["threads"][0]))

    @runner.test
    def demo_kernel():
        """The demo JIT aborting at its statepoint in two threads, through core_pattern with
        --minidump DIR."""
        kernel_ready()
        env.need_demo()
        crash(env.dir("kernel"), "demo", [env.demo, "--abort", "--program", "statepoint",
                                          "--threads", "2"],
              lambda t: sum(1 for t_ in t["threads"] for f in t_["frames"] if f["jit"]) == 2)

    def crash(work, name, argv, truth_ok):
        """ARGV crashing under core_pattern `|h --minidump MD %P -- dd of=...`: the dump and
        symbols the handler wrote in MD, judged against jitmap-stack on the core that came
        through with them."""
        md = tempfile.mkdtemp(prefix="jmd", dir="/tmp")  # (the line is bounded: 128 bytes)
        os.chmod(md, 0o755)
        try:
            with H.core_pattern(HANDLER, "--minidump " + md,
                                shutil.which("dd") + " of={dir}/c.%P status=none") as short:
                with open(os.path.join(work, name + ".out"), "w") as f:
                    p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, cwd=work,
                                         preexec_fn=unlimited_core)
                    p.wait(timeout=120)
                c = os.path.join(short, "c.%d" % p.pid)
                for _ in range(100):  # (the kernel waited for the handler: core_pipe_limit)
                    if os.path.exists(c) and os.path.getsize(c) > 0:
                        break
                    time.sleep(0.1)
                if not os.path.exists(c) or not os.path.getsize(c):
                    raise H.Skip("%s: no core came through core_pattern (exit %s; a "
                                 "container's kernel runs the handler outside it?)" % (
                                     name, p.returncode))
                core = os.path.join(work, name + ".core")
                shutil.move(c, core)
            perf = "/tmp/perf-%d.map" % p.pid
            if os.path.exists(perf):
                os.unlink(perf)  # (left behind on the crashed machine: the core carries it)
            kept = os.path.join(work, name + "-md")
            shutil.copytree(md, kept)
        finally:
            shutil.rmtree(md, ignore_errors=True)
        dumps = [os.path.join(r, f) for r, _, fs in os.walk(kept) for f in fs
                 if f.endswith(".dmp")]
        H.check(len(dumps) == 1, "%s: the handler wrote %d minidumps in its folder: %s" % (
            name, len(dumps), sorted(os.path.relpath(x, kept) for x in dumps)))
        roots = {os.path.dirname(os.path.dirname(os.path.dirname(os.path.join(r, f))))
                 for r, _, fs in os.walk(kept) for f in fs if f.endswith(".sym")}
        H.check(len(roots) == 1, "%s: the handler's symbol files lie under %s" % (
            name, sorted(roots)))
        truth = truth_of(core)
        H.check(truth_ok(truth), "%s: jitmap-stack on the kernel's core: %s" % (
            name, [[f["function"] for f in t["frames"] if f["jit"]] for t in truth["threads"]]))
        natives = native_store(tools, truth, MT.core_maps(core),
                               os.path.join(work, name + "-N"))
        no_larger("%s under core_pattern" % name, dumps[0],
                  small_core_size(HANDLER, core, os.path.join(work, name + ".small")))
        walk = judge("%s under core_pattern" % name, tools, truth, dumps[0], roots.pop(),
                     natives, empty)
        H.check(walk.crash and walk.crash[0] == "SIGABRT",
                "%s: the walk's crash line is %s, not SIGABRT" % (name, walk.crash))

    @runner.test
    def hostile():
        """Damaged cores and the hostile inferior through jitmap-minidump."""
        if "demo-core" not in made:
            raise H.Skip("no demo core (see demo_core)")
        d = env.dir("hostile")
        hostile_cores(tools, made["demo-core"], d)
        if not os.access(env.hostile, os.X_OK):
            raise H.Skip("%s not built" % env.hostile)
        out_path = os.path.join(d, "hostile.out")
        with open(out_path, "w") as out:
            p = subprocess.Popen([env.hostile, "--pause"] + HM.TOGETHER, stdout=out,
                                 stderr=subprocess.STDOUT)
        try:
            pid = None
            for _ in range(600):
                m = re.search(r"paused pid=(\d+)", H.read(out_path))
                if m or p.poll() is not None:
                    pid = int(m.group(1)) if m else None
                    break
                time.sleep(0.05)
            H.check(pid, "the hostile inferior did not pause: %s" % H.read(out_path)[-300:])
            truth = truth_of(str(pid))
            syms = os.path.join(d, "S")
            dmp = os.path.join(d, "hostile.dmp")
            rc, _, err = run([MINIDUMP, "--symbols", syms, str(pid), "-o", dmp])
            H.check(rc == 0, "jitmap-minidump on the hostile inferior: exit %s: %s" % (
                rc, err[-600:]))
            natives = native_store(tools, truth, MT.live_maps(pid), os.path.join(d, "N"))
        finally:
            p.kill()
            p.wait()
        judge("hostile inferior", tools, truth, dmp, syms, natives, empty)
        walk = tools.walk(dmp, [syms, natives])
        H.check(HM.GOOD["function"] in walk.functions(),
                "hostile inferior: the walk names no %s" % HM.GOOD["function"])

    return runner.run(env)


if __name__ == "__main__":
    sys.exit(main())
