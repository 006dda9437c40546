#!/usr/bin/env python3
"""Small cores (issue 38): `jitmap-core-handler --small` keeps what the stacks, the JIT frames
and their values need, and every tool reads from it what it reads from the full core.

    tests/field/test_small.py BUILD_DIR

- demo: the demo JIT at a statepoint in two threads (`--program statepoint --threads 2
  --pause`), held; gcore's core made small twice: streamed with the process at hand
  (`--small PID` < core) and from the core on disk compressed with zstd (`--small
  --from=CORE.zst`, no PID): the same bytes. The small core is at most 2% of the full one,
  every byte it holds is the full core's; `jitmap-stack --values --json` and `jitmap-dump
  --format=json` give the same output from both; GDB with jitmap (`thread
  apply all bt`, `info stackmap` in every frame) prints the same; eu-stack the same frames.
  LLDB's `stackmap bt --json` the same. Negative control: GDB without jitmap prints no
  record. Data of a mapped file the small core left out (large, not code) reads in GDB from
  the full core, and not at all from the small one (never the file's bytes in its place);
  data the file holds as the process had it reads the same from both.
- missing: the statepoint in the main thread, the small core's stack bound set to end at
  the JIT frame's slot [rsp+16]: the values in [rsp] and [rsp+8] are the full core's, those
  in [rsp+16] and [rsp+24] are missing, "not in this small core", in jitmap-stack, GDB's
  `info stackmap` and LLDB's `stackmap info`; a heap object the program printed reads in the full core and not in the
  small one (GDB, LLDB); jitmap-stack says why the walk stops at the bound.
- node: Node.js 20 (`--perf-basic-prof`, three nested optimized functions blocked), held;
  its core made small with its perf map added: at most 2%, the same jitmap-stack output as the
  full core with the map added; eu-stack's frames, GDB's `thread apply all bt` (JavaScript
  frames named) and `info stackmap` in every frame the same.
- postgres: a PostgreSQL 15 backend blocked in pg_sleep called from a JIT-compiled expression
  (jit_above_cost = 0, jit_debugging_support = on): at most 2%, the same jitmap-stack output
  (the frame evalexpr_*, the JIT entry counted), eu-stack and GDB the same.
- kernel: through the real core_pattern (set and restored), `|h --small %P -- dd of=...`: the
  demo JIT aborting at a statepoint in two threads, and Node.js calling process.abort() under
  its three functions; each core made small while the kernel streams it (memory read from
  /proc/PID/mem, the perf map through /proc/PID/root); moved, the perf map deleted:
  jitmap-stack `--values` finds record 300 in both demo threads holding the values the
  program printed, and names node's three functions in order (its small core under 8 MB).
  Skipped where core_pattern cannot be written.

Exits 77 (skipped) without gcore or zstd.
"""
import json
import mmap
import os
import re
import resource
import shutil
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TESTS, "debugger"))
sys.path.insert(0, os.path.join(TESTS, "lib"))
import harness as H  # noqa: E402
import held  # noqa: E402
from corefile import PT_LOAD, Core  # noqa: E402

if len(sys.argv) != 2:
    sys.exit("usage: test_small.py BUILD_DIR")
BUILD = os.path.abspath(sys.argv[1])
STACK = os.path.join(BUILD, "jitmap-stack")
HANDLER = os.path.join(BUILD, "jitmap-core-handler")
TIMEOUT = 300
MAX_SHARE = 0.02


run = H.run_tool  # (exit status, output, errors)


def stack_json(core, *extra):
    rc, out, err = run([STACK, "--json"] + list(extra) + [core])
    H.check(rc in (0, 1) and out.startswith("{"), "jitmap-stack %s: exit %d: %s" % (
        core, rc, err[-400:]))
    obj = json.loads(out)
    obj["process"].pop("core", None)
    return obj


def shrink(full, out, *args):
    """The handler with --small, the full core on its standard input (or --from)."""
    with open(out, "wb") as o:
        if any(a.startswith("--from=") for a in args):
            rc, _, err = run([HANDLER, "--small"] + list(args), stdout=o)
        else:
            with open(full, "rb") as i:
                rc, _, err = run([HANDLER, "--small"] + list(args), stdin=i, stdout=o)
    H.check(rc == 0 and "a small core: " in err, "the handler: exit %d: %s" % (rc, err))
    return out


def left_out(small):
    """The ranges a small core's note says it left out: [(start, end, p_flags, in_file)]."""
    with open(small, "rb") as f:
        m = Core(f.read())
    for at, ntype, desc, _ in m.notes:
        if ntype == 3 and m.data[at + 12:at + 19] == b"JITMAP\0":
            _, kept, left = struct.unpack_from("<III", m.data, desc)
            first = desc + 24 + 24 * kept
            return [struct.unpack_from("<QQII", m.data, first + 24 * i) for i in range(left)]
    raise H.Fail("%s: no note of a small core" % small)


def small_enough(full, small, what):
    a, b = os.path.getsize(full), os.path.getsize(small)
    H.check(b <= MAX_SHARE * a, "%s: the small core is %d bytes, %.2f%% of the full %d" % (
        what, b, 100.0 * b / a, a))
    print("  %s: small %d bytes, full %d (%.3f%%)" % (what, b, a, 100.0 * b / a))


def same_stacks(full, small, what, *extra):
    a = stack_json(full, "--values", *extra)
    b = stack_json(small, "--values", *extra)
    said = b["process"].pop("small_core")
    H.check(a["process"].pop("small_core") is None and said and said["left_bytes"] > 0 and
            said["stack_bytes"] == 8 << 20, "%s: small_core is %s" % (what, said))
    if a != b:
        ja = json.dumps(a, indent=1, sort_keys=True).splitlines()
        jb = json.dumps(b, indent=1, sort_keys=True).splitlines()
        import difflib
        diff = "\n".join(list(difflib.unified_diff(ja, jb, "full", "small", lineterm=""))[:40])
        raise H.Fail("%s: jitmap-stack differs between the full and the small core:\n%s" % (
            what, diff))
    return a


def eu_frames(core, exe):
    rc, out, err = run(["eu-stack", "--core=" + core, "-e", exe])
    return [line for line in out.splitlines() if line.startswith("#")]


def gdb_text(r, tag):
    """A session's output for `tag` with the core's own name left out."""
    return "\n".join(line for line in r.text(tag).splitlines()
                     if "core" not in line.lower() or "#" in line)


def same_bytes(full, small, what):
    """Every byte the small core holds is the full core's at the same address."""
    with open(full, "rb") as a, open(small, "rb") as b:
        f = Core(mmap.mmap(a.fileno(), 0, access=mmap.ACCESS_READ))
        m = Core(b.read())
    n = 0
    for _, t, _, off, va, fs, _ in m.phdrs:
        if t != PT_LOAD or not fs:
            continue
        k = 0
        while k < fs:  # a kept range may span segments of the full core
            i, at = f.segment(va + k)
            left = f.phdrs[i][4] + f.phdrs[i][5] - (va + k)
            chunk = min(left, fs - k)
            H.check(f.data[at:at + chunk] == m.data[off + k:off + k + chunk],
                    "%s: the small core's bytes at 0x%x are not the full core's" % (
                        what, va + k))
            k += chunk
        n += 1
    H.check(n > 0, "%s: the small core holds no memory" % what)


def main():
    for tool in ("gcore", "zstd"):
        if not shutil.which(tool):
            print("SKIP: no %s" % tool)
            return 77
    for path in (STACK, HANDLER):
        if not os.path.exists(path):
            print("SKIP: %s not built" % path)
            return 77
    env = H.Env(BUILD, "jitmap-small.")
    gdb = H.debugger(env, "gdb")
    lldb = H.debugger(env, "lldb")
    runner = H.Runner("small")
    work = env.dir("crash")
    moved = env.dir("elsewhere")

    @runner.test
    def demo():
        """The demo JIT's statepoint in two threads: the small core reads as the full one."""
        with held.demo(env.demo, work, ["--program", "statepoint", "--threads", "2"]) as (
                pid, out):
            full = held.gcore(pid, work)
            small = shrink(full, os.path.join(moved, "small"), str(pid))
        z = os.path.join(moved, "full.zst")
        subprocess.run(["zstd", "-q", "-T1", "-f", full, "-o", z], check=True, timeout=TIMEOUT)
        again = shrink(None, os.path.join(moved, "small-from-zst"), "--from=" + z)
        with open(small, "rb") as a, open(again, "rb") as b:
            H.check(a.read() == b.read(), "--from=CORE.zst wrote another small core than "
                    "the stream with its process at hand")
        small_enough(full, small, "demo")
        same_bytes(full, small, "demo")
        dumps = []
        for core in (full, small):
            rc, out, err = run([os.path.join(BUILD, "jitmap-dump"), "--format=json",
                                "--exe=" + env.demo, core])
            H.check(rc == 0, "jitmap-dump %s: exit %d: %s" % (core, rc, err[-300:]))
            d = json.loads(out)
            d.pop("file", None)
            dumps.append(d)
        H.check(dumps[0] == dumps[1], "jitmap-dump lists otherwise from the small core")
        got = same_stacks(full, small, "demo", "--exe=" + env.demo)
        truths = H.truth(H.read(out), "jitmap-demo:", "statepoint")
        objs = [f["stackmap"] for t in got["threads"] for f in t["frames"] if f.get("stackmap")]
        H.check(len(objs) == 2, "the small core's frames at a record: %d, want 2" % len(objs))
        ef, es = eu_frames(full, env.demo), eu_frames(small, env.demo)
        H.check(ef and ef == es, "eu-stack's frames differ:\n%s\n--\n%s" % (
            "\n".join(ef), "\n".join(es)))
        if not gdb:
            raise H.Skip("no gdb with Python (jitmap-stack and eu-stack passed)")
        every = "thread apply all -- frame apply all -s -- info stackmap"
        texts = []
        for core in (full, small):
            r = gdb.session("gdb-" + os.path.basename(core),
                            [gdb.dump("bt", "thread apply all bt"), gdb.dump("sm", every)],
                            exe=env.demo, core=core)
            texts.append((gdb_text(r, "bt"), gdb_text(r, "sm")))
        H.check("statepoint_main" in texts[1][0] and "record 300" in texts[1][1],
                "GDB on the small core: %s" % texts[1][1][-600:])
        H.check(texts[0] == texts[1], "GDB prints otherwise from the small core:\n%s\n--\n%s" % (
            texts[0][1][-800:], texts[1][1][-800:]))
        # Data of a mapped file the small core left out (libLLVM's relocated read-only data,
        # written when the library was loaded): GDB reads it in the full core; in the small
        # one it cannot, and never reads the file's bytes (NT_FILE no longer maps it there).
        # Data its file holds as the process had it (gcore dumps unmodified read-only
        # data too) is read from the file, as from the full core.
        left = left_out(small)
        data = [lo for lo, hi, fl, in_file in left
                if not fl & 1 and not in_file and hi - lo >= 0x100000][:4]
        held_by_file = [lo for lo, hi, fl, in_file in left if in_file][:4]
        H.check(data and held_by_file, "left out: %s" % left)
        probe = [gdb.dump("x%d" % k, "x/2gx 0x%x" % (lo + 0x80000)) for k, lo in
                 enumerate(data)]
        probe += [gdb.dump("f%d" % k, "x/2gx 0x%x" % lo) for k, lo in enumerate(held_by_file)]
        rf = gdb.session("gdb-data-full", probe, exe=env.demo, core=full)
        rs = gdb.session("gdb-data-small", probe, exe=env.demo, core=small)
        for k in range(len(data)):
            H.check("Cannot access memory" in rs.text("x%d" % k) and
                    "Cannot access" not in rf.text("x%d" % k),
                    "left-out data at 0x%x: full core %r, small core %r" % (
                        data[k] + 0x80000, rf.text("x%d" % k), rs.text("x%d" % k)))
        for k in range(len(held_by_file)):
            H.check(rs.text("f%d" % k) == rf.text("f%d" % k) and
                    "Cannot" not in rs.text("f%d" % k),
                    "data its file holds at 0x%x: full core %r, small core %r" % (
                        held_by_file[k], rf.text("f%d" % k), rs.text("f%d" % k)))
        r = gdb.session("gdb-alone", [gdb.dump("sm", "info stackmap")], exe=env.demo,
                        core=small, jitmap=False)
        H.check("record 300" not in r.text("sm"), "GDB without jitmap: %s" % r.text("sm"))
        if not lldb:
            raise H.Skip("no LLDB with Python (jitmap-stack, eu-stack and GDB passed)")
        bts = []
        for core in (full, small):
            r = lldb.session("lldb-" + os.path.basename(core),
                             [lldb.dump("t", "thread select 2"),
                              lldb.ask("bt", "bt", opts=["json"])], exe=env.demo, core=core)
            bts.append(r.json("bt"))
        H.check(bts[0] == bts[1] and any(
            "statepoint_main" in (f.get("function") or "") for f in bts[1]["frames"]),
            "LLDB's stackmap bt differs: %s / %s" % tuple(bts))

    @runner.test
    def missing():
        """Values past the kept stack are missing, with the reason, never wrong."""
        with held.demo(env.demo, work, ["--program", "statepoint"], "main") as (pid, out):
            full = held.gcore(pid, work, "main")
        got = stack_json(full, "--values", "--registers", "--exe=" + env.demo)
        frames = got["threads"][0]["frames"]
        sp = int([r["value"] for r in frames[0]["registers"] if r["register"] == "rsp"][0], 16)
        at = [f for f in frames if f.get("stackmap")]
        H.check(len(at) == 1, "the full core: %d frames at a record" % len(at))
        locs = at[0]["stackmap"]["locations"]
        slot = {loc["index"]: int(loc["address"], 16) for loc in locs
                if loc["kind"] == "indirect"}
        cut = min(a for a in slot.values() if a > min(slot.values()) + 8)  # [rsp+16]
        small = shrink(full, os.path.join(moved, "bounded"), "--stack-bytes=%d" % (cut - sp),
                       str(0))
        got2 = stack_json(small, "--values", "--exe=" + env.demo)
        H.check((got2["process"]["small_core"] or {}).get("stack_bytes") == cut - sp,
                "the bounded core says %s" % got2["process"]["small_core"])
        at2 = [f for t in got2["threads"] for f in t["frames"] if f.get("stackmap")]
        H.check(len(at2) == 1, "the bounded small core: %d frames at a record" % len(at2))
        kept, lost = 0, 0
        for a, b in zip(locs, at2[0]["stackmap"]["locations"]):
            if a["index"] not in slot:
                continue
            if slot[a["index"]] < cut:
                H.check(b["value"] == a["value"] and b["value"] is not None,
                        "location %d: %s, full core %s" % (a["index"], b, a))
                kept += 1
            else:
                H.check(b["value"] is None and "not in this small core" in b.get("error", ""),
                        "location %d past the bound: %s" % (a["index"], b))
                lost += 1
        H.check(kept >= 2 and lost >= 2, "kept %d, lost %d locations" % (kept, lost))
        last = got2["threads"][0]["frames"][-1]
        H.check(last.get("stackmap") and "cannot read the return address" in (
            last.get("error") or ""), "jitmap-stack does not say why the walk stops at the "
                "bound: %s" % last)
        heap = [int(t["addr"], 16) for t in H.truth(H.read(out), "jitmap-demo:", "heap-object")
                if t.get("name") == "obj"][0]
        if not gdb:
            raise H.Skip("no gdb with Python (jitmap-stack passed)")
        # The object's page is left out unless it shares one the small core keeps (the JIT
        # entry's: the heap's layout moves with the paths the program holds, a checkout's
        # folder among them); then GDB must read it as in the full core, and a writable
        # range the note says was left out is the one read that must be missing.
        gone = [(lo, hi) for lo, hi, fl, in_file in left_out(small) if fl & 2 and not in_file]
        H.check(gone, "the bounded core left no writable memory out")
        obj = heap + 16
        lost = next((obj for lo, hi in gone if lo <= obj < hi), gone[0][0] if gone else obj)
        reads = []
        for core in (full, small):
            r = gdb.session("gdb-missing-" + os.path.basename(core),
                            [gdb.dump("x", "x/gx 0x%x" % obj),
                             gdb.dump("lost", "x/gx 0x%x" % lost),
                             gdb.dump("sm", "frame apply all -s -- info stackmap")],
                            exe=env.demo, core=core)
            reads.append((r.text("x"), r.text("sm"), r.text("lost")))
        H.check("0x0000000000000457" in reads[0][0], "GDB, full core: %s" % reads[0][0])
        H.check("Cannot access memory" not in reads[0][2], "GDB, full core: %s" % reads[0][2])
        H.check("Cannot access memory" in reads[1][2], "GDB, small core: %s" % reads[1][2])
        H.check(lost == obj or "0x0000000000000457" in reads[1][0],
                "GDB, small core, the object's kept page: %s" % reads[1][0])
        H.check("not in this small core" in reads[1][1],
                "GDB's info stackmap on the bounded core: %s" % reads[1][1][-800:])
        if not lldb:
            raise H.Skip("no LLDB with Python (jitmap-stack and GDB passed)")
        r = lldb.session("lldb-missing-bt", [lldb.ask("bt", "bt", opts=["json"])],
                         exe=env.demo, core=small)
        level = [f["frame"] for f in r.json("bt")["frames"]
                 if "statepoint_main" in (f.get("function") or "")]
        H.check(level, "LLDB: no frame statepoint_main in the bounded core")
        r = lldb.session("lldb-missing", [lldb.dump("sm", "stackmap info %d" % level[0]),
                                          lldb.dump("x", "memory read -s8 -c1 -fx 0x%x"
                                                    % (heap + 16))],
                         exe=env.demo, core=small)
        H.check(r.text("sm").count("not in this small core") >= 2,
                "LLDB's stackmap info on the bounded core: %s" % r.text("sm")[-800:])
        H.check("0x0000000000000457" not in r.text("x"), "LLDB read the left-out heap: %s"
                % r.text("x"))

    def same_debuggers(full, small, what, exe, named):
        """eu-stack's frames, and GDB's (with jitmap) `thread apply all bt` and `info
        stackmap` in every frame, the same from both cores; `named(bt)`: the JIT frames are
        named in the small core's."""
        ef, es = eu_frames(full, exe), eu_frames(small, exe)
        H.check(ef and ef == es, "%s: eu-stack's frames differ:\n%s\n--\n%s" % (
            what, "\n".join(ef), "\n".join(es)))
        if not gdb:
            return
        texts = []
        for core in (full, small):
            r = gdb.session("gdb-%s-%s" % (what, os.path.basename(core)),
                            [gdb.dump("bt", "thread apply all bt"),
                             gdb.dump("sm", "frame apply all -s -- info stackmap")],
                            exe=exe, core=core)
            texts.append((gdb_text(r, "bt"), gdb_text(r, "sm")))
        H.check(named(texts[1][0]), "%s: GDB names no JIT frame in the small core:\n%s" % (
            what, texts[1][0][-800:]))
        H.check(texts[0] == texts[1], "%s: GDB prints otherwise from the small core:\n%s\n"
                "--\n%s" % (what, texts[0][0][-800:], texts[1][0][-800:]))

    @runner.test
    def node():
        """Node.js 20 with its perf map: the small core names the same frames."""
        try:
            with held.node(work) as (pid, out):
                full = held.gcore(pid, work, "node")
                withmap = os.path.join(work, "node-withmap")
                with open(full, "rb") as i, open(withmap, "wb") as o:
                    rc, _, err = run([HANDLER, str(pid)], stdin=i, stdout=o)
                H.check(rc == 0, "the handler: %s" % err)
                small = shrink(full, os.path.join(moved, "node-small"), str(pid))
        except held.Missing as e:
            raise H.Skip(str(e)) from None
        same_bytes(full, small, "node")
        os.unlink(full)
        small_enough(withmap, small, "node")
        got = same_stacks(withmap, small, "node")
        names = [f["function"] or "" for f in got["threads"][0]["frames"] if f["jit"]]
        H.check(any("jitmapInner" in n for n in names), "node's JIT frames: %s" % names)
        same_debuggers(withmap, small, "node", shutil.which("node"),
                       lambda bt: any(" in JS:" in ln for ln in bt.splitlines()))
        os.unlink(withmap)

    @runner.test
    def postgres():
        """A PostgreSQL backend in a JIT-compiled expression: the same frames and names."""
        try:
            with held.postgres(work) as (pid, log):
                full = held.gcore(pid, work, "postgres")
                small = shrink(full, os.path.join(moved, "pg-small"), str(pid))
        except held.Missing as e:
            raise H.Skip(str(e)) from None
        same_bytes(full, small, "postgres")
        small_enough(full, small, "postgres")
        got = same_stacks(full, small, "postgres")
        names = [f["function"] or "" for f in got["threads"][0]["frames"] if f["jit"]]
        H.check(any(n.startswith("evalexpr") for n in names),
                "the backend's JIT frames: %s" % names)
        # The server's shared memory (/dev/shm/PostgreSQL.N, gone with it, and which gcore
        # leaves out) is no file that could define a JIT descriptor: the count is stated.
        H.check(got["process"]["jit_entries"] == 1, "the backend's JIT entries: %s" % (
            got["process"],))
        same_debuggers(full, small, "postgres", os.path.join(held.PG_BIN, "postgres"),
                       lambda bt: re.search(r" in evalexpr_\d+_\d+ ", bt))
        os.unlink(full)

    @runner.test
    def kernel():
        """The kernel's core streamed through `--small`, its memory read from the process."""
        out = os.path.join(work, "kernel.out")
        unlimited = lambda: resource.setrlimit(resource.RLIMIT_CORE, (-1, -1))  # noqa: E731
        node = None
        with H.core_pattern(HANDLER, "--small",
                            shutil.which("dd") + " of={dir}/s.%P status=none") as short:
            with open(out, "w") as f:
                p = subprocess.Popen([env.demo, "--abort", "--program", "statepoint",
                                      "--threads", "2"], stdout=f, stderr=subprocess.STDOUT,
                                     cwd=work, preexec_fn=unlimited)
                p.wait(timeout=120)
            if shutil.which("node"):
                with open(os.path.join(work, "node-abort.out"), "w") as f:
                    node = subprocess.Popen(["node"] + held.NODE_FLAGS +
                                            [held.NODE_SCRIPT, "abort"], stdout=f,
                                            stderr=subprocess.STDOUT, cwd=work,
                                            preexec_fn=unlimited)
                    node.wait(timeout=120)

            def came(pid, name):
                """The small core of process `pid`, moved away from where it was written."""
                core = os.path.join(short, "s.%d" % pid)
                for _ in range(100):  # the kernel waited for the handler (core_pipe_limit)
                    if os.path.exists(core) and os.path.getsize(core) > 0:
                        break
                    time.sleep(0.1)
                if not os.path.exists(core):
                    return None
                to = os.path.join(moved, name)
                shutil.move(core, to)
                return to

            moved_core = came(p.pid, "kernel-small")
            node_core = came(node.pid, "kernel-node-small") if node else None
        if node:
            perf = "/tmp/perf-%d.map" % node.pid
            if os.path.exists(perf):
                os.unlink(perf)  # left behind on the crashed machine
        if not moved_core:
            raise H.Skip("no core came through core_pattern (demo exit %s)" % p.returncode)
        truths = H.truth(H.read(out), "jitmap-demo:", "statepoint")
        got = stack_json(moved_core, "--values", "--exe=" + env.demo)
        H.check(got["process"]["small_core"], "the kernel's core is not a small core")
        objs = [f["stackmap"] for t in got["threads"] for f in t["frames"] if f.get("stackmap")]
        H.record_300(objs, truths, "jitmap-stack, the kernel's small core")
        rc, notes, err = run(["eu-readelf", "-n", moved_core])
        H.check("JITMAP" in notes, "no note of a small core in the kernel's core")
        if node:
            H.check(node_core, "no core of node through core_pattern (exit %s)" %
                    node.returncode)
            got = stack_json(node_core)
            names = [(f["function"] or "").split()[0].lstrip("JS:*~^")
                     for f in got["threads"][0]["frames"] if f["jit"] and f["function"]]
            three = [n for n in names if n in ("jitmapInner", "jitmapMiddle", "jitmapOuter")]
            H.check(three[:3] == ["jitmapInner", "jitmapMiddle", "jitmapOuter"] and
                    got["process"]["small_core"],
                    "jitmap-stack, node's small core from the kernel: %s" % names)
            H.check(os.path.getsize(node_core) < 8 << 20, "node's small core is %d bytes" %
                    os.path.getsize(node_core))

    return runner.run(env)


if __name__ == "__main__":
    sys.exit(main())
