#!/usr/bin/env python3
"""Ruby 3.3 with YJIT: every JIT frame named, in order, at the PC it is at (issue 47's Done-when).

    tests/matrix/test_yjit.py BUILD_DIR                     # ctest -R matrix.yjit

Ruby 3.3 built with YJIT from Debian's source (scripts/setup-ruby.sh) runs ruby_yjit.rb with
`--yjit --yjit-call-threshold=1 --yjit-perf`: three named threads, "each" (calls through
Array#each blocks, blocked in Queue#pop), "plain" (nested calls, blocked likewise) and "spin"
(nested calls, spinning in a loop: read while it runs). YJIT's perf map has one line per
compiled block, and the frame of YJIT's code is built by an entry stub no line covers, so no
rule may take a line for a function entered by a call.

The reference is not jitmap's: eu-stack -p (libdwfl, which walks the frame pointers YJIT keeps
with --yjit-perf) gives each thread's PCs, and the perf map names those in YJIT's code (the
newest line over the PC; a return address looked up one byte back). For each thread and each
tool (`jitmap-stack --json PID`, `jitmap-stack PID`, GDB with jitmap's `thread apply all bt`):

- the tool's frames in YJIT's code are the reference's, in order, at the same PCs (the spinning
  thread's innermost PC moves between two snapshots: there only its name must agree);
- each is named as the map names it: no other name, none unnamed;
- no frame of the tool is where no code is (outside the process's executable mappings), and
  its stack goes on to the thread's start (clone3), as eu-stack's does.

GDB alone is the control: it names none of YJIT's frames. The counts ("jitmap-stack: each: 3
of 3 JIT frames named") are printed for the matrix table. About 30 s once Ruby is built; the
first run builds it (several minutes). Exits 77 (skipped) when setup-ruby.sh cannot set Ruby up,
or without eu-stack or gdb. JITMAP_YJIT_KEEP=DIR keeps every tool's output there.
"""
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
import livestacks  # noqa: E402
from livestacks import exec_ranges  # noqa: E402
import rt_ruby  # noqa: E402
from tally import Tally  # noqa: E402

if len(sys.argv) != 2:
    sys.exit("usage: test_yjit.py BUILD_DIR")
BUILD = os.path.abspath(sys.argv[1])
STACK = os.path.join(BUILD, "jitmap-stack")
JITMAP_GDB = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")
KEEP = os.environ.get("JITMAP_YJIT_KEEP")
T = Tally("test-yjit")
START = ("clone3", "__clone3", "clone", "__clone")  # glibc's names of a thread's first frame
check = T.check


def keep(what, text):
    if KEEP:
        os.makedirs(KEEP, exist_ok=True)
        with open(os.path.join(KEEP, what + ".txt"), "w") as f:
            f.write(text)


def thread_ids(pid):
    """{thread name: tid} of the process's threads (Ruby gives each its OS name)."""
    out = {}
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                out[f.read().strip()] = int(tid)
        except OSError:
            pass
    return out


# --- each tool's frames: {tid: [(pc, name or None)]} ---

def eu_stack(pid):
    r = subprocess.run(["eu-stack", "-p", str(pid)], capture_output=True, text=True,
                       timeout=120)
    threads, tid = {}, None
    for line in r.stdout.splitlines():
        m = re.match(r"TID (\d+):", line)
        if m:
            tid = int(m.group(1))
            threads[tid] = []
            continue
        m = re.match(r"#(\d+)\s+0x([0-9a-f]+)(?:\s+(\S.*))?$", line)
        if m and tid is not None:
            threads[tid].append((int(m.group(2), 16), m.group(3), False))
    return r.stdout, threads


def stack_json(pid):
    r = subprocess.run([STACK, "--json", str(pid)], capture_output=True, text=True,
                       timeout=120)
    check(r.returncode == 0, "jitmap-stack --json: exit %d: %s" % (r.returncode, r.stderr))
    try:
        obj = json.loads(r.stdout)
    except ValueError:
        check(False, "jitmap-stack --json prints JSON: %s" % r.stdout[-500:])
        return r.stdout, {}
    return r.stdout, {t["tid"]: [(int(f["pc"], 16), f.get("function"), bool(f.get("guess")))
                                 for f in t["frames"]]
                      for t in obj.get("threads", [])}


def stack_text(pid):
    r = subprocess.run([STACK, str(pid)], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "jitmap-stack: exit %d: %s" % (r.returncode, r.stderr))
    threads, tid = {}, None
    for line in r.stdout.split("\nproblems:")[0].splitlines():
        m = re.match(r"^thread (\d+) .*:$", line)
        if m:
            tid = int(m.group(1))
            threads[tid] = []
            continue
        m = re.match(r"^\s+#\d+\s+0x([0-9a-f]+) in (.*)$", line)
        if m and tid is not None:
            rest = m.group(2)
            guess = rest.endswith(" [guess]")
            if guess:
                rest = rest[:-len(" [guess]")]
            if " [JIT" in rest:
                name = rest.split(" [JIT")[0]
            else:
                name = re.sub(r" \([^()]*\)$", "", rest)
                name = re.sub(r" \[(inlined|tail call)\]$", "", name)
                name = re.sub(r" at \S+$", "", name)
            threads[tid].append((int(m.group(1), 16), None if name == "??" else name, guess))
    return r.stdout, threads


def gdb_bt(pid, jitmap):
    args = ["-p", str(pid)]
    if jitmap:
        args += ["-ex", "source " + JITMAP_GDB]
    out = livestacks.gdb_run(args + ["-ex", "thread apply all bt"], check)
    threads = {}
    for tid in livestacks.bt_threads(out):
        frames, _ = livestacks.bt_thread(out, tid)
        threads[tid] = [(pc, None if name == "??" else name, "[guess]" in name)
                        for _, pc, name in frames]
    return out, threads


# --- the judgement ---

def jit_frames(frames, entries):
    """[(index, pc, map's name)] of the frames whose PC is in YJIT's code (a return address,
    every frame past the first, looked up a byte back: the call it returns from)."""
    out = []
    for i, (pc, _, _) in enumerate(frames):
        if pc is None:
            continue
        name = livestacks.name_at(entries, pc if i == 0 else pc - 1)
        if name is not None:
            out.append((i, pc, name))
    return out


def show(frames, entries):
    lines = []
    for i, (pc, name, guess) in enumerate(frames[:60]):
        where = livestacks.name_at(entries, pc if i == 0 else pc - 1) if pc else None
        lines.append("    #%-3d %-18s %s%s%s" % (i, "0x%x" % pc if pc else "-", name or "??",
                                                 " [guess]" if guess else "",
                                                 "   (map: %s)" % where if where else ""))
    return "\n".join(lines)


def judge(tool, thread, frames, ref, entries, ranges, moving):
    """`ref`: [(pc, name)] of eu-stack's frames in YJIT's code."""
    got = jit_frames(frames, entries)
    text = show(frames, entries)
    want = [(pc, name) for pc, name in ref]
    # the frames in YJIT's code, at the reference's PCs (the spinning thread's frame 0: its name)
    seen = [(pc, mapname) for _, pc, mapname in got]
    if moving and seen and want and seen[0][1] == want[0][1]:
        seen[0] = want[0]
    check(seen == want, "%s: %s: the frames in YJIT's code are eu-stack's, in order, at the same "
          "PCs:\n  want %s\n  got  %s\n%s" % (
              tool, thread, ["0x%x %s" % w for w in want], ["0x%x %s" % s for s in seen], text))
    for i, pc, mapname in got:
        name = frames[i][1]
        check(name == mapname, "%s: %s: frame #%d at 0x%x is %s, the map's name there: %s" % (
            tool, thread, i, pc, mapname, name or "unnamed"))
    # a name from the map at a PC the map gives another (or none)
    for i, (pc, name, _) in enumerate(frames):
        if name and name.startswith("[JIT] "):
            at = livestacks.name_at(entries, pc if i == 0 else pc - 1) if pc else None
            check(at == name, "%s: %s: frame #%d at %s is named %s, where the map has %s" % (
                tool, thread, i, "0x%x" % pc if pc else "-", name, at))
    # through YJIT's frames to the thread's start, as eu-stack goes
    check(frames and frames[-1][1] in START,
          "%s: %s: the stack goes on to the thread's start (%s):\n%s" % (
              tool, thread, "/".join(START), text))
    junk = [(i, pc) for i, (pc, _, _) in enumerate(frames)
            if pc is not None and not any(lo <= pc < hi for lo, hi in ranges)]
    check(not junk, "%s: %s: frames where no code is: %s\n%s" % (
        tool, thread, ", ".join("#%d 0x%x" % j for j in junk), text))
    # the counts for the table: the reference's frames named at their place, the tool's other
    # frames in YJIT's code or named from the map (wrong)
    # (reached by a guess: the tool says so, as the matrix counts it)
    right = guessed = 0
    for a, b, size in difflib.SequenceMatcher(None, seen, want, autojunk=False) \
            .get_matching_blocks():
        for k in range(size):
            frame = frames[got[a + k][0]]
            right += frame[1] == want[b + k][1]
            guessed += frame[1] == want[b + k][1] and frame[2]
    wrong = len(got) - right + sum(
        1 for i, (pc, name, _) in enumerate(frames) if name and name.startswith("[JIT] ") and
        (livestacks.name_at(entries, pc if i == 0 else pc - 1) if pc else None) is None)
    print("test-yjit: %s: %s: %d of %d JIT frames named at their PCs (%d of them reached by a "
          "guess), %d wrong" % (tool, thread, right, len(want), guessed, wrong), flush=True)


def main():
    runtime = rt_ruby.Runtime()
    why = runtime.setup()
    if why:
        T.skip(why)
    for tool in ("eu-stack", "gdb"):
        if not shutil.which(tool):
            T.skip("no %s" % tool)
    if not os.access(STACK, os.X_OK):
        T.skip("no %s" % STACK)
    tmp = tempfile.mkdtemp(prefix="jitmap-yjit-")
    argv, env = runtime.start(tmp, runtime.executable())
    outfile = os.path.join(tmp, "out")
    p = subprocess.Popen(argv, cwd=tmp, env=env, stdout=open(outfile, "w"),
                         stderr=subprocess.STDOUT)
    mapfile = "/tmp/perf-%d.map" % p.pid
    try:
        deadline = time.time() + runtime.ready_timeout
        while time.time() < deadline and p.poll() is None and \
                "ready\n" not in open(outfile).read():
            time.sleep(0.05)
        out = open(outfile).read()
        keep("program", out)
        if not check("ready\n" in out, "the program got ready: %s" % out[-2000:]):
            return T.summary()
        stacks = rt_ruby.parse_stacks(out)
        for name in rt_ruby.THREADS:
            print("test-yjit: Ruby's stack of %s: %s" % (name, " <- ".join(stacks.get(name, []))),
                  flush=True)
        tids = thread_ids(p.pid)
        if not check(all(t in tids for t in rt_ruby.THREADS),
                     "the threads are named %s: %s" % (rt_ruby.THREADS, tids)):
            return T.summary()
        ranges = exec_ranges(p.pid)
        eu_text, eu = eu_stack(p.pid)
        keep("eu-stack", eu_text)
        entries = livestacks.perf_map(mapfile)
        keep("perf-map", open(mapfile).read())
        ref = {}
        for name in rt_ruby.THREADS:
            frames = eu.get(tids[name], [])
            ref[name] = [(pc, mapname) for _, pc, mapname in jit_frames(frames, entries)]
            print("test-yjit: eu-stack: %s: %s" % (
                name, " <- ".join("%s@0x%x" % (n, pc) for pc, n in ref[name])), flush=True)
            # each thread's stack runs through YJIT's code (a thread held in its own code, as
            # the program's stacks say): eu-stack reached it, or the test proves nothing
            check(ref[name], "eu-stack finds YJIT's code on %s's stack:\n%s" % (
                name, show(frames, entries)))
            check(frames and frames[-1][1] in START,
                  "eu-stack unwinds %s to its start: %s" % (name, frames[-3:]))
        tools = [("jitmap-stack --json", lambda: stack_json(p.pid)),
                 ("jitmap-stack", lambda: stack_text(p.pid)),
                 ("GDB with jitmap", lambda: gdb_bt(p.pid, True))]
        for tool, take in tools:
            text, threads = take()
            keep(tool.replace(" ", "_"), text)
            for name in rt_ruby.THREADS:
                judge(tool, name, threads.get(tids[name], []), ref[name], entries, ranges,
                      name == "spin")
        # The control: GDB alone names no frame of YJIT's code.
        text, threads = gdb_bt(p.pid, False)
        keep("gdb-alone", text)
        for name in rt_ruby.THREADS:
            frames = threads.get(tids[name], [])
            got = jit_frames(frames, entries)
            check(not any(frames[i][1] for i, _, _ in got) and "#1" in text,
                  "GDB alone names none of %s's frames in YJIT's code: %s" % (
                      name, [frames[i] for i, _, _ in got]))
    finally:
        p.kill()
        p.wait()
        if os.path.exists(mapfile):
            os.unlink(mapfile)
        shutil.rmtree(tmp, ignore_errors=True)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
