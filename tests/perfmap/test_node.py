#!/usr/bin/env python3
"""Node.js's JIT frames named from its perf map and jitdump (a real runtime that never
registers with GDB's JIT interface).

    tests/perfmap/test_node.py BUILD_DIR

node_hot.js, run with --perf-basic-prof, blocks in Atomics.wait under three functions V8's
optimizing tier compiled (jitmapInner < jitmapMiddle < jitmapOuter). While it waits:

- eu-stack -p walks the main thread by frame pointers and names none of the JS frames; the
  test names them itself from /tmp/perf-PID.map (a later line for the same bytes wins) at
  the addresses eu-stack printed: that is the truth;
- jitmap-stack PID names the same frames, in the same order, from the same map
  (`named_by`), with JSON that holds to its schema; `--no-perf-maps` names none of them (the
  control); a copy of the map given with --perf-map names them again;
- GDB alone (`gdb -p PID -batch -ex bt`) names none of them and loses the stack after the
  first (the negative control); GDB with jitmap (jitmap.gdb, typed with -ex) names them, in
  eu-stack's order at eu-stack's addresses, and unwinds on to the program's start; MI's
  -stack-list-frames names them too; `jitmap perf-map` lists the map;
- a core written there (gcore): GDB with jitmap names none until `jitmap perf-map MAP`, then
  the same frames; jitmap-stack --perf-map MAP CORE the same;
- LLDB alone unwinds them but names none; its `stackmap bt` names them.

Then node runs once more with --perf-prof too, to its end (V8 writes its jitdump in 4 KiB
blocks: the file is whole only after a normal exit): every JS code object of its perf map is
found in its jitdump by libjitmap with the same range and name.

Exits 77 (skipped) without node, eu-stack or gdb.
"""
import ctypes
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
import jsoncontract  # noqa: E402
from tally import Tally  # noqa: E402

if len(sys.argv) != 2:
    sys.exit("usage: test_node.py BUILD_DIR")
BUILD = os.path.abspath(sys.argv[1])
STACK = os.path.join(BUILD, "jitmap-stack")
JITMAP_GDB = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")
LLDB_ENTRY = os.path.join(BUILD, "share", "jitmap", "lldb", "jitmap.py")
PROGRAM = os.path.join(HERE, "node_hot.js")
NODE_FLAGS = ["--allow-natives-syntax", "--no-turbo-inlining"]
WANT = ["JS:*jitmapInner", "JS:*jitmapMiddle", "JS:*jitmapOuter"]
T = Tally("test-perfmap-node")
check = T.check


def perf_map(path):
    """[(lo, hi, name)] of a perf map, in file order."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.rstrip("\n").split(" ", 2)
            if len(parts) == 3:
                lo, size = int(parts[0], 16), int(parts[1], 16)
                out.append((lo, lo + size, parts[2]))
    return out


def name_at(entries, addr):
    """The newest line over `addr` (perf's rule), or None."""
    for lo, hi, name in reversed(entries):
        if lo <= addr < hi:
            return name
    return None


def short(name):
    """"JS:*jitmapInner /path/node_hot.js:13:21" -> "JS:*jitmapInner"."""
    return name.split(" ", 1)[0] if name else name


def start_node(cwd, flags, seconds):
    out = os.path.join(cwd, "node.out")
    p = subprocess.Popen(["node"] + NODE_FLAGS + flags + [PROGRAM, str(seconds)], cwd=cwd,
                         stdout=open(out, "w"), stderr=subprocess.STDOUT)
    deadline = time.time() + 20
    while time.time() < deadline and p.poll() is None:
        text = open(out).read()
        if "ready\n" in text:
            return p, text
        time.sleep(0.05)
    p.kill()
    p.wait()
    sys.exit("test-perfmap-node: node did not get ready: %s" % open(out).read())


def eu_stack_main(pid):
    """[(level, address)] of the main thread in eu-stack's output (it prints return
    addresses for outer frames)."""
    r = subprocess.run(["eu-stack", "-p", str(pid)], capture_output=True, text=True, timeout=60)
    frames, thread = [], None
    for line in r.stdout.splitlines():
        if line.startswith("TID "):
            thread = int(line.split()[1].rstrip(":"))
            continue
        if thread == pid and line.startswith("#"):
            level, addr = line.split()[:2]
            frames.append((int(level[1:]), int(addr, 16), line))
    return frames, r.stdout


def main_frames(text_json, pid):
    obj = jsoncontract.loads(text_json, "jitmap-stack")
    thread = next(t for t in obj["threads"] if t["tid"] == pid)
    return obj, thread["frames"]


def live(tmp):
    p, out = start_node(tmp, ["--perf-basic-prof"], 120)
    pid = p.pid
    check(out.split()[2:5] == ["turbofan"] * 3,
          "node compiled the three functions with TurboFan: %s" % out.strip())
    mapfile = "/tmp/perf-%d.map" % pid
    try:
        entries = perf_map(mapfile)
        check(any(short(n) == WANT[0] for _, _, n in entries),
              "the perf map names %s: %d lines" % (WANT[0], len(entries)))
        # The truth: eu-stack's frames, named from the map by the test.
        frames, eu_text = eu_stack_main(pid)
        truth = []
        for level, addr, _ in frames:
            name = name_at(entries, addr if level == 0 else addr - 1)
            if name and name.startswith("JS:"):
                truth.append((addr, name))
        check([short(n) for _, n in truth][:3] == WANT,
              "the JS frames eu-stack unwinds, named from the map: %s" % truth)
        check("jitmapInner" not in eu_text, "eu-stack alone names no JS frame")
        # jitmap-stack names them from the map.
        r = subprocess.run([STACK, "--json", str(pid)], capture_output=True, text=True,
                           timeout=120)
        check(r.returncode == 0, "jitmap-stack --json: exit %d: %s" % (r.returncode, r.stderr))
        obj, got = main_frames(r.stdout, pid)
        check(obj["process"]["perf_maps"] and obj["process"]["perf_maps"][0]["path"] == mapfile
              and obj["process"]["perf_maps"][0]["code_objects"] > 100,
              "jitmap-stack read %s: %s" % (mapfile, obj["process"]["perf_maps"]))
        named = [(int(f["pc"], 16), f["function"]) for f in got if f.get("named_by")]
        check([(a, n) for a, n in named if n.startswith("JS:")] == truth,
              "jitmap-stack names the JS frames as the map names eu-stack's:\n  %s\n  %s" % (
                  named, truth))
        check(all(f["named_by"] == "perf map " + mapfile and f["jit"] and
                  f["jit_entry"] is None for f in got if f.get("named_by")),
              "each is JIT code the perf map names")
        # The innermost JS frame's caller chain is whole: the walk goes on to the
        # trampolines and main, as eu-stack's does.
        check(len(got) >= len(frames) and any("_start" == (f["function"] or "") for f in got),
              "jitmap-stack unwinds through them to _start: %d frames, eu-stack %d" % (
                  len(got), len(frames)))
        text = subprocess.run([STACK, str(pid)], capture_output=True, text=True,
                              timeout=120).stdout
        check("code named by %s: " % mapfile in text and
              "in JS:*jitmapInner " in text and "[JIT, perf map %s]" % mapfile in text,
              "jitmap-stack's text names the map and the frames:\n%s" % text[:3000])
        # Controls: without the map, no name; the map named by hand, the names again.
        r = subprocess.run([STACK, "--json", "--no-perf-maps", str(pid)], capture_output=True,
                           text=True, timeout=120)
        _, plain = main_frames(r.stdout, pid)
        check(not any((f["function"] or "").startswith("JS:") for f in plain),
              "jitmap-stack --no-perf-maps names no JS frame")
        copy = os.path.join(tmp, "copy.map")
        shutil.copy(mapfile, copy)
        r = subprocess.run([STACK, "--json", "--no-perf-maps", "--perf-map", copy, str(pid)],
                           capture_output=True, text=True, timeout=120)
        _, again = main_frames(r.stdout, pid)
        check([(int(f["pc"], 16), f["function"]) for f in again
               if (f["function"] or "").startswith("JS:")] == truth and
              all(f["named_by"] == "perf map " + copy for f in again if f.get("named_by")),
              "--perf-map COPY names them again, from the copy")
        if shutil.which("gdb"):
            gdb_live(pid, truth)
            core = os.path.join(tmp, "core")
            g = subprocess.run(["gdb", "-nx", "-p", str(pid), "-batch", "-ex",
                                "gcore " + core], capture_output=True, text=True, timeout=300)
            if os.path.exists(core):
                cores(core, mapfile, truth)
                os.unlink(core)
            else:
                check(False, "gcore wrote a core: %s" % (g.stdout + g.stderr)[-1000:])
        lldb = shutil.which("lldb-16") or shutil.which("lldb")
        if lldb:
            lldb_live(lldb, pid, truth)
    finally:
        p.kill()
        p.wait()
        if os.path.exists(mapfile):
            os.unlink(mapfile)


BT_LINE = re.compile(r"^#(\d+)\s+(?:0x([0-9a-f]+) in )?(.+?) \(", re.M)


def gdb_run(args):
    r = subprocess.run(["gdb", "-nx", "-batch"] + args, capture_output=True, text=True,
                       timeout=300)
    check("Python Exception" not in r.stdout + r.stderr,
          "no Python exception in GDB's output:\n%s" % (r.stdout + r.stderr)[-2000:])
    return r.stdout


def js_frames(bt):
    """[(pc, name)] of the frames GDB's bt names as JS code."""
    return [(int(pc, 16), name) for _, pc, name in BT_LINE.findall(bt)
            if pc and name.startswith("JS:")]


def gdb_live(pid, truth):
    """GDB alone, and GDB with jitmap, typed as a user types them."""
    alone = gdb_run(["-p", str(pid), "-ex", "bt"])
    check("jitmapInner" not in alone and "#1" in alone,
          "GDB alone names no JS frame:\n%s" % alone[-2000:])
    source = ["-ex", "source " + JITMAP_GDB]
    bt = gdb_run(["-p", str(pid)] + source + [
        "-ex", "bt", "-ex", "info stackmap 10", "-ex", "jitmap perf-map",
        "-ex", 'interpreter-exec mi "-enable-frame-filters"',
        "-ex", 'interpreter-exec mi "-stack-list-frames"'])
    check(js_frames(bt) == truth,
          "GDB with jitmap names the JS frames as the map names eu-stack's:\n  %s\n  %s\n%s" % (
              js_frames(bt), truth, bt[-4000:]))
    check("__libc_start_call_main" in bt,
          "GDB with jitmap unwinds through them to the program's start:\n%s" % bt[-3000:])
    check(re.search(r"^/tmp/perf-%d\.map: \d+ code objects$" % pid, bt, re.M),
          "jitmap perf-map lists the process's own map:\n%s" % bt[-2000:])
    check(re.search(r'func="JS:\*jitmapInner [^"]*"', bt),
          "MI's -stack-list-frames (frame filters on) names the JS frame")


def cores(core, mapfile, truth):
    """The core of the same stop: named once the map is given, not before."""
    source = ["-ex", "source " + JITMAP_GDB]
    before = gdb_run([shutil.which("node"), core] + source +
                     ["-ex", "bt"])
    check(not js_frames(before), "GDB with jitmap on the core, no map given: no JS name")
    bt = gdb_run([shutil.which("node"), core] + source +
                 ["-ex", "jitmap perf-map " + mapfile, "-ex", "bt"])
    check(js_frames(bt) == truth,
          "GDB on the core with `jitmap perf-map`: the JS frames as live:\n  %s\n  %s" % (
              js_frames(bt), truth))
    r = subprocess.run([STACK, "--json", "--perf-map", mapfile, core], capture_output=True,
                       text=True, timeout=120)
    obj = jsoncontract.loads(r.stdout, "jitmap-stack")
    frames = obj["threads"][0]["frames"] if obj["threads"] else []
    got = [(int(f["pc"], 16), f["function"]) for f in frames
           if (f["function"] or "").startswith("JS:")]
    check(got == truth, "jitmap-stack --perf-map on the core: %s" % got)


def lldb_live(lldb, pid, truth):
    """LLDB: its own bt unwinds the JS frames live but cannot name them; `stackmap bt`
    does."""
    env = dict(os.environ, JITMAP_LIBRARY=os.path.join(BUILD, "libjitmap.so"))
    run = lambda cmds: subprocess.run([lldb, "-b", "-p", str(pid)] + sum(
        (["-o", c] for c in cmds), []), capture_output=True, text=True, timeout=300,
        env=env).stdout
    alone = run(["bt"])
    check("frame #1" in alone and "jitmapInner" not in alone,
          "LLDB alone names no JS frame:\n%s" % alone[-2000:])
    out = run(["command script import " + LLDB_ENTRY, "stackmap bt"])
    got = [(int(pc, 16), name) for pc, name in
           re.findall(r"^frame #\d+: 0x([0-9a-f]+) (JS:.*)$", out, re.M)]
    check(got == truth, "LLDB's stackmap bt names the JS frames: %s\n%s" % (got, out[-3000:]))


class Sym(ctypes.Structure):
    _fields_ = [("sz", ctypes.c_size_t), ("name", ctypes.c_char_p), ("lo", ctypes.c_uint64),
                ("hi", ctypes.c_uint64), ("origin", ctypes.c_char_p),
                ("source", ctypes.c_char_p), ("line", ctypes.c_uint),
                ("file", ctypes.c_char_p), ("file_line", ctypes.c_uint)]


def jitdump(tmp):
    """A whole jitdump against the perf map V8 wrote beside it, code object by code object."""
    out = os.path.join(tmp, "jd")
    os.mkdir(out)
    r = subprocess.run(["node"] + NODE_FLAGS + ["--perf-basic-prof", "--perf-prof", PROGRAM,
                                                "0.01"], cwd=out, capture_output=True,
                       text=True, timeout=120)
    pid = int(r.stdout.split()[1]) if r.stdout.startswith("pid ") else 0
    dump = os.path.join(out, "jit-%d.dump" % pid)
    mapfile = "/tmp/perf-%d.map" % pid
    check(r.returncode == 0 and os.path.exists(dump) and os.path.exists(mapfile),
          "node --perf-prof wrote %s and %s: %s" % (dump, mapfile, r.stdout + r.stderr))
    if not os.path.exists(dump) or not os.path.exists(mapfile):
        return
    try:
        lib = ctypes.CDLL(os.path.join(BUILD, "libjitmap.so"))
        lib.jitmap_perfmap_new.restype = ctypes.c_void_p
        lib.jitmap_perfmap_add_file.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        lib.jitmap_perfmap_lookup.argtypes = [ctypes.c_void_p, ctypes.c_uint64,
                                              ctypes.POINTER(Sym)]
        lib.jitmap_perfmap_num_problems.argtypes = [ctypes.c_void_p]
        lib.jitmap_perfmap_num_problems.restype = ctypes.c_size_t
        lib.jitmap_perfmap_free.argtypes = [ctypes.c_void_p]
        m = lib.jitmap_perfmap_new()
        n = lib.jitmap_perfmap_add_file(m, dump.encode(), None)
        js = [(lo, hi, name) for lo, hi, name in perf_map(mapfile)
              if name.startswith("JS:") and name_at(perf_map(mapfile), lo) == name]
        check(n > 100 and lib.jitmap_perfmap_num_problems(m) == 0,
              "libjitmap read %s: %d code objects, %d problems" % (
                  dump, n, lib.jitmap_perfmap_num_problems(m)))
        wrong = []
        for lo, hi, name in js:
            s = Sym(ctypes.sizeof(Sym))
            rc = lib.jitmap_perfmap_lookup(m, lo, ctypes.byref(s))
            if rc or (s.lo, s.hi, s.name.decode()) != (lo, hi, name):
                wrong.append((hex(lo), name, rc, s.name))
        # Interpreted functions' entries point at bytecode (not code), which a jitdump
        # without --interpreted-frames-native-stack does not list.
        compiled = [e for e in js if not e[2].startswith("JS:~")]
        missing = [w for w in wrong if not w[1].startswith("JS:~")]
        check(compiled and not missing,
              "every compiled JS code object of the map (%d) is in the jitdump with its range "
              "and name: %s" % (len(compiled), missing[:5]))
        check(any(short(name) == WANT[0] for _, _, name in compiled),
              "%s is among them" % WANT[0])
        lib.jitmap_perfmap_free(m)
    finally:
        os.unlink(mapfile)


def main():
    for tool in ("node", "eu-stack"):
        if not shutil.which(tool):
            print("test-perfmap-node: SKIP: no %s" % tool)
            return 77
    if not os.path.exists(STACK):
        print("test-perfmap-node: SKIP: %s not built" % STACK)
        return 77
    tmp = tempfile.mkdtemp(prefix="jitmap-node-")
    try:
        live(tmp)
        jitdump(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return T.summary()


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
