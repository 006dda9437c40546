"""What the tests of live runtimes share (tests/perfmap, tests/runtimes): a perf map read as perf
reads it, GDB's `thread apply all bt` split by thread, jitmap-stack's JSON of one thread.

    sys.path.insert(0, ".../tests/lib")
    import livestacks
    entries = livestacks.perf_map("/tmp/perf-123.map")      # [(lo, hi, name)], file order
    livestacks.name_at(entries, pc)                          # the newest line over pc, or None
    out = livestacks.gdb_run(["-p", "123", "-ex", "thread apply all bt"], check)
    frames, text = livestacks.bt_thread(out, tid)            # [(level, pc or None, name)]
    obj, frames = livestacks.stack_json(STACK, ["123"], tid, check)
"""
import os
import re
import subprocess

import jsoncontract


def setup_cpython(top):
    """(the path of CPython 3.13, None) from scripts/setup-python.sh (`top`: the source tree),
    or (None, why it could not be set up)."""
    r = subprocess.run([os.path.join(top, "scripts", "setup-python.sh")],
                       capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        return None, "no CPython 3.13 (scripts/setup-python.sh: %s)" % r.stderr.strip()
    return r.stdout.strip().splitlines()[-1], None


def exec_ranges(pid):
    """[(lo, hi)] of the process's executable mappings (/proc/PID/maps), read without
    jitmap: where code can be."""
    out = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 2 and fields[1][2] == "x":
                lo, hi = fields[0].split("-")
                out.append((int(lo, 16), int(hi, 16)))
    return out


def in_code(ranges, pc):
    """Whether `pc` (None: a frame without one) lies in one of `ranges` (exec_ranges)."""
    return pc is None or any(lo <= pc < hi for lo, hi in ranges)


def perf_map(path):
    """[(lo, hi, name)] of a perf map, in file order (either spelling of the numbers: V8 and
    CPython write bare hex, BEAM 0x-prefixed)."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split(None, 2)
            if len(parts) == 3:
                lo, size = int(parts[0], 16), int(parts[1], 16)
                out.append((lo, lo + size, parts[2].strip()))
    return out


def name_at(entries, addr):
    """The newest line over `addr` (perf's rule), or None."""
    for lo, hi, name in reversed(entries):
        if lo <= addr < hi:
            return name
    return None


# A thread's header in `thread apply all bt`: "(Thread 0x... (LWP N) ...)" with libthread_db,
# "(LWP N ...)" without it in a threaded process, "(process N ...)" in one of a single thread.
BT_THREAD = re.compile(r"^Thread \d+ \(.*?(?:LWP|process) (\d+)\b.*\):$", re.M)
# The frame's name: up to its argument list, the last " (" of the line ("StubRoutines (1) ()").
BT_LINE = re.compile(r"^#(\d+)\s+(?:0x([0-9a-f]+) in )?(.+) \(", re.M)


def bt_thread(out, tid):
    """[(level, pc or None, name)] of thread `tid`'s frames in `thread apply all bt` (an inlined
    frame has no pc of its own), and that thread's text ("" if it is not there)."""
    parts = BT_THREAD.split(out)
    text = next((parts[i + 1] for i in range(1, len(parts) - 1, 2) if int(parts[i]) == tid), "")
    frames = [(int(level), int(pc, 16) if pc else None, name)
              for level, pc, name in BT_LINE.findall(text)]
    return frames, text


def bt_threads(out):
    """{tid: text} of every thread of `thread apply all bt`."""
    parts = BT_THREAD.split(out)
    return {int(parts[i]): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def gdb_run(args, check, gdb="gdb", timeout=300):
    """GDB in batch mode without init files; its output, checked for Python tracebacks."""
    r = subprocess.run([gdb, "-nx", "-batch"] + args, capture_output=True, text=True,
                       timeout=timeout)
    check("Python Exception" not in r.stdout + r.stderr,
          "no Python exception in GDB's output:\n%s" % (r.stdout + r.stderr)[-2000:])
    return r.stdout


def stack_json(stack, args, tid, check):
    """jitmap-stack --json ARGS, held to its schema: the whole object, and thread `tid`'s
    frames ([] when it has no such thread)."""
    r = subprocess.run([stack, "--json"] + args, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "jitmap-stack %s: exit %d: %s" % (args, r.returncode, r.stderr))
    obj = jsoncontract.loads(r.stdout, "jitmap-stack")
    thread = next((t for t in obj["threads"] if t["tid"] == tid), {"frames": []})
    return obj, thread["frames"]
