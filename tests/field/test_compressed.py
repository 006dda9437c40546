#!/usr/bin/env python3
"""Compressed cores, as systemd-coredump keeps them (issue 35): the demo JIT's core compressed
with zstd, lz4 and xz by their own command-line tools and moved to another folder, read by
every front end with no option, as the core it holds.

    tests/field/test_compressed.py BUILD_DIR

The program: `jitmap-demo-jit --program statepoint --threads 2 --abort`, whose two worker
threads each hold at record 300 of statepoint_main (deopt value -77, three GC roots) when the
main thread aborts; its truth lines say what the values are.

- jitmap-stack `--json --values` of each compressed core: the same object as of the core
  itself (but for the core's name), also in gdb's form `EXE -c CORE`, which `coredumpctl debug
  --debugger=jitmap-stack` runs, both worker threads' JIT frames at record 300 holding the
  program's truth; jitmap-dump `--format=json`: the same but for the file's name and its kind,
  which names the compression.
- GDB (`jitmap core FILE` after `file EXE`): `thread apply all -- frame apply all -c -- info
  stackmap -json` finds record 300 in two frames, holding the truth. Negative control: GDB's
  own `core-file` of the same file fails ("not a core dump").
- LLDB (`stackmap core FILE` after `target create EXE`): the threads' `stackmap bt --json`
  show record 300 in two threads (when LLDB with Python is there).
- A stream cut short: read as far as it came out, the warning saying so; a damaged one: refused
  naming the format; the temporary file leaves nothing in TMPDIR.

Exits 77 (skipped) without the demo, gdb or a core (core_pattern not "core"), and skips the
codecs whose tool is missing.
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TESTS, "debugger"))
sys.path.insert(0, os.path.join(TESTS, "lib"))
import harness as H  # noqa: E402

if len(sys.argv) != 2:
    sys.exit("usage: test_compressed.py BUILD_DIR")
BUILD = os.path.abspath(sys.argv[1])
STACK = os.path.join(BUILD, "jitmap-stack")
DUMP = os.path.join(BUILD, "jitmap-dump")
CODECS = {"zstd": ["zstd", "-q", "-T1"], "lz4": ["lz4", "-q"], "xz": ["xz", "-T1"]}
TIMEOUT = 300


run = H.run_tool  # (exit status, output, errors)


def compress(codec, core, out_dir):
    """The core compressed by the codec's own tool, in out_dir (named much as
    systemd-coredump names it, core.COMM.UID.BOOT.PID.USEC.zst: the harness deletes files
    named core.* after each test)."""
    out = os.path.join(out_dir, "systemd-core.jitmap-demo-jit.0.boot.1.2.%s" % codec)
    with open(core, "rb") as src, open(out, "wb") as dst:
        p = subprocess.run(CODECS[codec] + ["-c"], stdin=src, stdout=dst, timeout=TIMEOUT)
    H.check(p.returncode == 0, "%s: compressing the core failed" % codec)
    return out


def stack_json(core, exe, env=None):
    rc, out, err = run([STACK, "--json", "--values", "--exe=" + exe, core], env=env)
    H.check(rc == 0, "jitmap-stack %s: exit %d: %s" % (core, rc, err))
    return json.loads(out)


def stack_objs(obj):
    return [f["stackmap"] for t in obj["threads"] for f in t["frames"] if f.get("stackmap")]


def main():
    for path, what in ((STACK, "jitmap-stack"), (DUMP, "jitmap-dump")):
        if not os.path.exists(path):
            print("SKIP: %s not built" % what)
            return 77
    env = H.Env(BUILD, "jitmap-compressed.")
    env.plugin = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")
    try:
        env.need_demo()
        gdb = H.debugger(env, "gdb")
        if not gdb:
            raise H.Skip("gdb with Python is needed")
        lldb = H.debugger(env, "lldb")
        core, output = H.abort_core(env, "core", env.demo,
                                    ["--program", "statepoint", "--threads", "2"])
    except H.Skip as e:
        print("SKIP: %s" % e)
        shutil.rmtree(env.work, ignore_errors=True)
        return 77
    kept = os.path.join(os.path.dirname(core), "demo-dump")  # not deleted between tests
    os.rename(core, kept)
    core = kept
    truths = H.truth(output, "jitmap-demo:", "statepoint")
    runner = H.Runner("compressed")
    tmp = env.dir("tmp")
    tmp_env = dict(os.environ, TMPDIR=tmp)
    plain = {}
    moved = env.dir("coredump")  # another folder, as /var/lib/systemd/coredump
    made = {}

    @runner.test
    def plain_core():
        """The control: the core itself, read by jitmap-stack and jitmap-dump."""
        plain["stack"] = stack_json(core, env.demo)
        H.record_300(stack_objs(plain["stack"]), truths, "jitmap-stack, the core")
        rc, out, err = run([DUMP, "--format=json", "--exe=" + env.demo, core])
        H.check(rc == 0, "jitmap-dump: exit %d: %s" % (rc, err))
        plain["dump"] = json.loads(out)

    for codec in CODECS:
        def one(codec=codec):
            if not shutil.which(CODECS[codec][0]):
                raise H.Skip("no %s tool" % CODECS[codec][0])
            H.check(plain, "the control failed")
            z = made[codec] = compress(codec, core, moved)
            got = stack_json(z, env.demo, tmp_env)
            H.check(got["process"]["core"] == z, "%s: the core's name: %s" % (
                codec, got["process"]["core"]))
            got["process"]["core"] = plain["stack"]["process"]["core"]
            H.check(got == plain["stack"], "%s: jitmap-stack's object differs from the core's"
                    % codec)
            H.record_300(stack_objs(got), truths, "jitmap-stack, %s" % codec)
            rc, out, err = run([DUMP, "--format=json", "--exe=" + env.demo, z], env=tmp_env)
            H.check(rc == 0, "jitmap-dump %s: exit %d: %s" % (codec, rc, err))
            d = json.loads(out)
            H.check(d["kind"] == plain["dump"]["kind"].replace(
                "ELF core file", "ELF core file (%s)" % codec), "%s: kind %r" % (codec, d["kind"]))
            d["kind"], d["file"] = plain["dump"]["kind"], plain["dump"]["file"]
            H.check(d == plain["dump"], "%s: jitmap-dump's object differs from the core's" % codec)
            H.check(os.listdir(tmp) == [], "%s: left in TMPDIR: %s" % (codec, os.listdir(tmp)))
        runner.test(one, "read_%s" % codec)

    @runner.test
    def coredumpctl_form():
        """`coredumpctl debug --debugger=jitmap-stack -A "--json --values"` runs
        `jitmap-stack --json --values EXE -c /var/tmp/coredump-XXXXXX` (its core
        decompressed there): the same object as of the core."""
        H.check(plain, "the control failed")
        z = made.get("zstd") or next(iter(made.values()), None)
        if not z:
            raise H.Skip("no compressed core")
        saved = os.path.join(tmp, "..", "coredump-Xy12Ab")  # coredumpctl's own copy
        shutil.copyfile(core, saved)
        rc, out, err = run([STACK, "--json", "--values", env.demo, "-c", saved])
        os.unlink(saved)
        H.check(rc == 0, "jitmap-stack EXE -c CORE: exit %d: %s" % (rc, err))
        got = json.loads(out)
        got["process"]["core"] = plain["stack"]["process"]["core"]
        H.check(got == plain["stack"], "jitmap-stack EXE -c CORE differs from --exe=EXE CORE")
        rc, out, err = run([STACK, "--json", "--values", env.demo, "-c", z], env=tmp_env)
        H.check(rc == 0, "jitmap-stack EXE -c CORE.zst: exit %d: %s" % (rc, err))
        rc, out, err = run([STACK, env.demo, "other", "-c", z])
        H.check(rc == 2 and "one executable at most" in err, "two executables: %d %s" % (rc, err))

    @runner.test
    def gdb_core():
        """GDB: `jitmap core FILE`; its own core-file cannot read the file (the control)."""
        z = made.get("zstd") or next(iter(made.values()), None)
        if not z:
            raise H.Skip("no compressed core")
        every = "thread apply all -- frame apply all -c -- info stackmap -json"
        r = gdb.session("gdb-core", [gdb.ask("open", "core", args=[z]), gdb.dump("sm", every)],
                        exe=env.demo)
        opened = r.text("open")
        H.check("compressed core: opened as the core it holds" in opened, "GDB: %s" % opened)
        objs = [json.loads(line) for line in r.text("sm").splitlines() if line.startswith("{")]
        H.record_300(objs, truths, "GDB")
        bare = gdb.session("gdb-bare", [gdb.dump("open", "core-file " + z), gdb.dump("bt", "bt")],
                           exe=env.demo, jitmap=False)
        H.check("not a core dump" in bare.text("open") and "No stack" in bare.text("bt"),
                "GDB alone read the compressed core: %s" % bare.text("open"))

    @runner.test
    def lldb_core():
        """LLDB: `stackmap core FILE`; record 300 in two threads' `stackmap bt`."""
        if not lldb:
            raise H.Skip("no LLDB with Python")
        z = made.get("zstd") or next(iter(made.values()), None)
        if not z:
            raise H.Skip("no compressed core")
        cmds = [lldb.ask("open", "core", args=[z])]
        for t in (1, 2, 3):
            cmds += ["thread select %d" % t, lldb.ask("bt%d" % t, "bt", opts=["json"])]
        r = lldb.session("lldb-core", cmds, exe=env.demo)
        H.check("opened as the core it holds" in r.text("open"), "LLDB: %s" % r.text("open"))
        threads = 0
        for t in (1, 2, 3):
            frames = r.json("bt%d" % t)["frames"]
            threads += any(f["record"] == 300 for f in frames)
        H.check(threads == 2, "LLDB: record 300 in %d threads, want 2" % threads)

    @runner.test
    def cut_and_damaged():
        """A stream cut short is read as far as it came out; a damaged one is refused."""
        z = made.get("zstd")
        if not z:
            raise H.Skip("no zstd core")
        size = os.path.getsize(z)
        cut = os.path.join(moved, "cut.zst")
        with open(z, "rb") as f, open(cut, "wb") as g:
            g.write(f.read(size * 2 // 3))
        rc, out, err = run([STACK, "--exe=" + env.demo, cut], env=tmp_env)
        H.check(rc in (0, 1) and "zstd stream ends inside a frame" in out + err,
                "a cut stream: exit %d: %s" % (rc, (out + err)[-400:]))
        bad = os.path.join(moved, "bad.zst")
        with open(z, "rb") as f, open(bad, "wb") as g:
            data = bytearray(f.read())
            data[6:70] = b"\xff" * 64
            g.write(data)
        rc, out, err = run([STACK, bad], env=tmp_env)
        H.check(rc == 1 and "not a zstd stream jitmap can read" in err,
                "a damaged stream: exit %d: %s" % (rc, err))
        H.check(os.listdir(tmp) == [], "left in TMPDIR: %s" % os.listdir(tmp))

    return runner.run(env)


if __name__ == "__main__":
    sys.exit(main())
