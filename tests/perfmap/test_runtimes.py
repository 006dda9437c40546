#!/usr/bin/env python3
"""Real runtimes' JIT frames named from their perf maps (and Node.js's jitdump): runtimes that
never register with GDB's JIT interface.

    tests/perfmap/test_runtimes.py BUILD_DIR node|jvm

- node: node_hot.js under Node.js (--perf-basic-prof, which writes /tmp/perf-PID.map as it
  compiles), blocked in Atomics.wait under three functions V8's optimizing tier compiled;
- jvm: JitmapHot.java under HotSpot (-XX:+PreserveFramePointer), asleep under three compiled
  methods; `jcmd PID Compiler.perfmap` writes the map, as a user does.

While it waits, for the thread that runs those functions:

- eu-stack -p walks it and names none of the JIT frames; the test names each frame eu-stack
  left unnamed from the map itself (the newest line over the address wins): that is the truth,
  and it has the three functions in order;
- jitmap-stack PID names the same frames at the same addresses (`named_by`, JSON held to its
  schema); `--no-perf-maps` names none (the control); a copy of the map given with --perf-map
  names them again;
- GDB alone (`gdb -p PID -batch`) names none of them; GDB with jitmap (jitmap.gdb, typed with
  -ex) names the same frames at the same addresses, and unwinds on to the thread's start;
  node: MI's -stack-list-frames names them, `jitmap perf-map` lists the map;
- a core written there (gcore): GDB with jitmap names none until `jitmap perf-map MAP`, then
  the same frames; jitmap-stack --perf-map MAP CORE the same;
- every frame's module where its PC lies (tests/stack/module_truth.py reads /proc/PID/maps, a
  core's NT_FILE and segments, and each file's program headers, without jitmap): a frame whose
  PC is in anonymous memory (the runtime's JIT code) has no module, build_id nor
  module_offset, in the JSON and the text, with and without the map, live, from the core and
  from its small core (jitmap-core-handler --small); every other module_offset is the PC less
  its file's load bias, inside the file's loaded segments; GDB's `bt` and LLDB's `bt` name no
  file for such a frame;
- node: LLDB alone unwinds them but names none; its `stackmap bt` names them; and a whole
  jitdump (node run again with --perf-prof too, to its end: V8 writes it in 4 KiB blocks)
  holds every compiled function of the map beside it, with the same range and name.

Exits 77 (skipped) without the runtime or eu-stack.
"""
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
import livestacks  # noqa: E402
from livestacks import name_at, perf_map  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "stack"))
import module_truth as MT  # noqa: E402
from tally import Tally  # noqa: E402

if len(sys.argv) != 3 or sys.argv[2] not in ("node", "jvm"):
    sys.exit("usage: test_runtimes.py BUILD_DIR node|jvm")
BUILD = os.path.abspath(sys.argv[1])
# libjitmap's perf map reader through jitmap's own Python binding (gdb-scripts/jitmap)
os.environ["JITMAP_LIBRARY"] = os.path.join(BUILD, "libjitmap.so")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "gdb-scripts"))
from jitmap import perfmaps  # noqa: E402
RUNTIME = sys.argv[2]
STACK = os.path.join(BUILD, "jitmap-stack")
JITMAP_GDB = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")
LLDB_ENTRY = os.path.join(BUILD, "share", "jitmap", "lldb", "jitmap.py")
T = Tally("test-perfmap-" + RUNTIME)
check = T.check


class Node:
    tools = ("node",)
    flags = ["--allow-natives-syntax", "--no-turbo-inlining"]
    want = ["JS:*jitmapInner", "JS:*jitmapMiddle", "JS:*jitmapOuter"]

    @staticmethod
    def short(name):
        """"JS:*jitmapInner /path/node_hot.js:13:21" -> "JS:*jitmapInner"."""
        return name.split(" ", 1)[0]

    def command(self, tmp, seconds, extra=()):
        return (["node"] + self.flags + ["--perf-basic-prof"] + list(extra) +
                [os.path.join(HERE, "node_hot.js"), str(seconds)])

    def ready(self, out):
        check(out.split()[2:5] == ["turbofan"] * 3,
              "node compiled the three functions with TurboFan: %s" % out.strip())

    def write_map(self, pid):
        pass  # node writes it as it compiles


class Jvm:
    tools = ("java", "javac", "jcmd")
    want = ["long JitmapHot.jitmapInner(long, long)", "long JitmapHot.jitmapMiddle(long, long)",
            "long JitmapHot.jitmapOuter(long, long)"]

    @staticmethod
    def short(name):
        return name

    def command(self, tmp, seconds, extra=()):
        classes = os.path.join(tmp, "classes")
        if not os.path.isdir(classes):
            subprocess.run(["javac", "-d", classes, os.path.join(HERE, "JitmapHot.java")],
                           check=True, timeout=300)
        # a small heap: the core the test writes stays small
        return ["java", "-Xms16m", "-Xmx64m", "-XX:+UseSerialGC", "-XX:-UsePerfData",
                "-XX:+PreserveFramePointer", "-XX:CompileCommand=quiet",
                "-XX:CompileCommand=dontinline,JitmapHot::jitmap*", "-cp", classes,
                "JitmapHot", str(seconds)]

    def ready(self, out):
        pass

    def write_map(self, pid):
        r = subprocess.run(["jcmd", str(pid), "Compiler.perfmap"], capture_output=True,
                           text=True, timeout=120)
        check(r.returncode == 0, "jcmd %d Compiler.perfmap: %s" % (pid, r.stdout + r.stderr))


R = Node() if RUNTIME == "node" else Jvm()


def start(tmp, seconds, extra=()):
    out = os.path.join(tmp, "runtime.out")
    p = subprocess.Popen(R.command(tmp, seconds, extra), cwd=tmp, stdout=open(out, "w"),
                         stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while time.time() < deadline and p.poll() is None:
        text = open(out).read()
        if "ready\n" in text:
            return p, text
        time.sleep(0.05)
    p.kill()
    p.wait()
    sys.exit("test-perfmap-%s: the runtime did not get ready: %s" % (RUNTIME, open(out).read()))


def eu_stack(pid):
    """{tid: [(level, address, named)]} of eu-stack's output."""
    r = subprocess.run(["eu-stack", "-p", str(pid)], capture_output=True, text=True, timeout=120)
    threads, tid = {}, None
    for line in r.stdout.splitlines():
        m = re.match(r"TID (\d+):", line)
        if m:
            tid = int(m.group(1))
            threads[tid] = []
            continue
        m = re.match(r"#(\d+)\s+0x([0-9a-f]+)(\s+\S)?", line)
        if m and tid is not None:
            threads[tid].append((int(m.group(1)), int(m.group(2), 16), bool(m.group(3))))
    return threads, r.stdout


def truth_of(frames, entries):
    """[(address, name)]: the frames eu-stack did not name that the map names."""
    out = []
    for level, addr, named in frames:
        name = None if named else name_at(entries, addr if level == 0 else addr - 1)
        if name:
            out.append((addr, name))
    return out


def in_order(names):
    return [R.short(n) for n in names if R.short(n) in R.want]


def stack_json(args, tid):
    return livestacks.stack_json(STACK, args, tid, check)


def named_frames(frames):
    return [(int(f["pc"], 16), f["function"]) for f in frames if f.get("named_by")]


def modules_right(what, obj, maps, text=None):
    """Every frame of jitmap-stack's JSON `obj`: its module, build_id and module_offset where
    its PC lies (module_truth); some frames in anonymous memory among them, none with a file's
    identity; in its text (`text`, the same run's), no file named for those frames."""
    wrong, seen = MT.check_frames(obj, maps)
    anon = MT.anonymous_pcs(obj, maps)
    check(not wrong and anon and seen["module"] > 3,
          "%s: no frame in anonymous memory has a module (%d such frames: %d native, %d JIT); "
          "every module_offset is the PC less its file's load bias (%d frames); first wrong: %s"
          % (what, len(anon), seen["anonymous"], seen["jit"], seen["module"],
             [(f["index"], f["pc"], f["module"], f["build_id"], f["module_offset"],
               [w[:3] for w in want]) for f, want in wrong[:2]]))
    if text is None:
        return
    pcs = {int(f["pc"], 16) for f in anon}
    named = [line for line in text.splitlines()
             if re.match(r"\s+#\d+\s+0x([0-9a-f]+) in ", line) and
             int(line.split()[1], 16) in pcs and re.search(r" \((?!\[)[^()]*\)( \[guess\])?$", line)]
    check(not named, "%s, text: no file named for a frame in anonymous memory: %s" % (
        what, named[:3]))


def stack_text(args):
    r = subprocess.run([STACK] + args, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "jitmap-stack %s: exit %d: %s" % (args, r.returncode, r.stderr))
    return r.stdout


def gdb_run(args):
    return livestacks.gdb_run(args, check)


def gdb_thread(out, tid, map_names):
    """[(pc, name)] of the frames of thread `tid` in `thread apply all bt` that GDB names as
    the map does, and that thread's text."""
    frames, text = livestacks.bt_thread(out, tid)
    return [(pc, name) for _, pc, name in frames if pc and name in map_names], text


def live(tmp):
    p, out = start(tmp, 120)
    pid = p.pid
    R.ready(out)
    R.write_map(pid)
    mapfile = "/tmp/perf-%d.map" % pid
    try:
        entries = perf_map(mapfile)
        map_names = {name for _, _, name in entries}
        check(any(R.short(n) == R.want[0] for n in map_names),
              "the perf map names %s: %d lines" % (R.want[0], len(entries)))
        threads, eu_text = eu_stack(pid)
        tid, truth = None, []
        for t, frames in threads.items():
            found = truth_of(frames, entries)
            if R.want[0] in [R.short(n) for _, n in found]:
                tid, truth = t, found
        check(in_order([n for _, n in truth])[:3] == R.want,
              "the frames eu-stack unwinds, named from the map: %s" % truth)
        check(not any(re.search(r"jitmap\w+", w).group() in eu_text for w in R.want),
              "eu-stack alone names none of them")
        obj, got = stack_json([str(pid)], tid)
        check(obj["process"]["perf_maps"] and obj["process"]["perf_maps"][0]["path"] == mapfile
              and obj["process"]["perf_maps"][0]["code_objects"] > 100,
              "jitmap-stack read %s: %s" % (mapfile, obj["process"]["perf_maps"]))
        check(named_frames(got) == truth,
              "jitmap-stack names the frames as the map names eu-stack's:\n  %s\n  %s" % (
                  named_frames(got), truth))
        check(all(f["named_by"] == "perf map " + mapfile and f["jit"] and
                  f["jit_entry"] is None and
                  f["source"] == {"kind": "perf-map", "path": mapfile}
                  for f in got if f.get("named_by")),
              "each is JIT code the perf map names, its source the map")
        maps = MT.live_maps(pid)
        modules_right("jitmap-stack PID", obj, maps, stack_text([str(pid)]))
        plain_obj, plain = stack_json(["--no-perf-maps", str(pid)], tid)
        check(not named_frames(plain) and not any(f["function"] in map_names for f in plain
                                                  if f["jit"]),
              "jitmap-stack --no-perf-maps names none of them")
        modules_right("jitmap-stack --no-perf-maps PID", plain_obj, maps,
                      stack_text(["--no-perf-maps", str(pid)]))
        copy = os.path.join(tmp, "copy.map")
        shutil.copy(mapfile, copy)
        _, again = stack_json(["--no-perf-maps", "--perf-map", copy, str(pid)], tid)
        check(named_frames(again) == truth and
              all(f["named_by"] == "perf map " + copy for f in again if f.get("named_by")),
              "--perf-map COPY names them again, from the copy")
        if shutil.which("gdb"):
            gdb_live(pid, tid, truth, map_names, mapfile, obj, maps)
            core = os.path.join(tmp, "core")
            g = subprocess.run(["gdb", "-nx", "-p", str(pid), "-batch", "-ex",
                                "gcore " + core], capture_output=True, text=True, timeout=300)
            if os.path.exists(core):
                cores(p, core, mapfile, tid, truth, map_names, tmp)
                os.unlink(core)
            else:
                check(False, "gcore wrote a core: %s" % (g.stdout + g.stderr)[-1000:])
        lldb = shutil.which("lldb-16") or shutil.which("lldb")
        if lldb and RUNTIME == "node":
            lldb_live(lldb, pid, truth, obj, maps)
    finally:
        p.kill()
        p.wait()
        if os.path.exists(mapfile):
            os.unlink(mapfile)


def no_file_named(what, out, frames_re, obj, maps):
    """No frame of a debugger's backtrace `out` whose PC jitmap-stack's `obj` has in anonymous
    memory names a file (`frames_re`: pc, and the file the line names or None)."""
    anon = {int(f["pc"], 16) for f in MT.anonymous_pcs(obj, maps)}
    lines = [(int(pc, 16), lib) for pc, lib in frames_re.findall(out)]
    named = [(hex(pc), lib) for pc, lib in lines if pc in anon and lib]
    check(anon & {pc for pc, _ in lines} and not named,
          "%s: %d frames in anonymous memory, none shown with a file: %s" % (
              what, len(anon & {pc for pc, _ in lines}), named[:3]))


def gdb_live(pid, tid, truth, map_names, mapfile, obj, maps):
    """GDB alone, and GDB with jitmap, typed as a user types them."""
    alone = gdb_run(["-p", str(pid), "-ex", "thread apply all bt"])
    frames, text = gdb_thread(alone, tid, map_names)
    check(not frames and "#1" in text, "GDB alone names none of them:\n%s" % text[-2000:])
    cmds = ["-ex", "source " + JITMAP_GDB, "-ex", "thread apply all bt", "-ex", "jitmap perf-map"]
    if RUNTIME == "node":  # the main thread is the selected one
        cmds += ["-ex", 'interpreter-exec mi "-enable-frame-filters"',
                 "-ex", 'interpreter-exec mi "-stack-list-frames"']
    out = gdb_run(["-p", str(pid)] + cmds)
    # "#9  0x00007f... in NAME () from /usr/lib/...": the file GDB names for the PC
    no_file_named("GDB with jitmap, bt", out,
                  re.compile(r"^#\d+\s+0x([0-9a-f]+) in .*?(?: from (\S+))?$", re.M), obj, maps)
    frames, text = gdb_thread(out, tid, map_names)
    check(frames == truth, "GDB with jitmap names the frames as the map names eu-stack's:"
          "\n  %s\n  %s\n%s" % (frames, truth, text[-4000:]))
    check(re.search(r"in (start_thread|_start|__libc_start_call_main|clone3?) ", text),
          "GDB with jitmap unwinds through them to the thread's start:\n%s" % text[-3000:])
    check(re.search(r"^%s: \d+ code objects$" % re.escape(mapfile), out, re.M),
          "jitmap perf-map lists the process's own map")
    if RUNTIME == "node":
        check(re.search(r'func="JS:\*jitmapInner [^"]*"', out),
              "MI's -stack-list-frames (frame filters on) names the JS frame")


def cores(p, core, mapfile, tid, truth, map_names, tmp):
    """The core of the same stop: named once the map is given, not before; its small core
    the same."""
    exe = os.readlink("/proc/%d/exe" % p.pid)
    source = ["-ex", "source " + JITMAP_GDB]
    before = gdb_run([exe, core] + source + ["-ex", "thread apply all bt"])
    check(not gdb_thread(before, tid, map_names)[0],
          "GDB with jitmap on the core, no map given: none named")
    bt = gdb_run([exe, core] + source + ["-ex", "jitmap perf-map " + mapfile,
                                        "-ex", "thread apply all bt"])
    frames, text = gdb_thread(bt, tid, map_names)
    check(frames == truth, "GDB on the core with `jitmap perf-map`: as live:\n  %s\n  %s" % (
        frames, truth))
    obj, got = stack_json(["--perf-map", mapfile, core], tid)
    check(named_frames(got) == truth, "jitmap-stack --perf-map on the core: %s" % (
        named_frames(got)))
    maps = MT.core_maps(core)
    modules_right("jitmap-stack --perf-map MAP CORE", obj, maps,
                  stack_text(["--perf-map", mapfile, core]))
    plain, _ = stack_json([core], tid)
    modules_right("jitmap-stack CORE", plain, maps, stack_text([core]))
    small = os.path.join(tmp, "small-core")
    with open(small, "wb") as out:
        r = subprocess.run([os.path.join(BUILD, "jitmap-core-handler"), "--small", "--from=" + core,
                            "-q"], stdout=out, stderr=subprocess.PIPE, text=True, timeout=300)
    check(r.returncode == 0, "jitmap-core-handler --small --from=CORE: %s" % r.stderr)
    obj, got = stack_json(["--perf-map", mapfile, small], tid)
    check(obj["process"]["small_core"] and named_frames(got) == truth,
          "jitmap-stack --perf-map MAP SMALL-CORE names them as live: %s" % named_frames(got))
    maps = MT.core_maps(small)
    modules_right("jitmap-stack --perf-map MAP SMALL-CORE", obj, maps,
                  stack_text(["--perf-map", mapfile, small]))
    plain, _ = stack_json([small], tid)
    modules_right("jitmap-stack SMALL-CORE", plain, maps)
    os.unlink(small)


def lldb_live(lldb, pid, truth, obj, maps):
    """LLDB: its own bt unwinds the JS frames live but cannot name them; `stackmap bt`
    does."""
    env = dict(os.environ, JITMAP_LIBRARY=os.path.join(BUILD, "libjitmap.so"))

    def run(cmds):
        return subprocess.run([lldb, "-b", "-p", str(pid)] + sum((["-o", c] for c in cmds), []),
                              capture_output=True, text=True, timeout=300, env=env).stdout
    alone = run(["bt"])
    check("frame #1" in alone and "jitmapInner" not in alone,
          "LLDB alone names no JS frame:\n%s" % alone[-2000:])
    out = run(["command script import " + LLDB_ENTRY, "bt", "stackmap bt"])
    # "frame #9: 0x00007f... node`Builtins_...": the module LLDB names before the backquote
    no_file_named("LLDB with jitmap, bt", out,
                  re.compile(r"^\s*\*?\s*frame #\d+: 0x([0-9a-f]+)(?: ([^`\s]+)`)?", re.M), obj,
                  maps)
    got = [(int(pc, 16), name) for pc, name in
           re.findall(r"^frame #\d+: 0x([0-9a-f]+) (JS:.*)$", out, re.M)]
    check(got == [(a, n) for a, n in truth if n.startswith("JS:")],
          "LLDB's stackmap bt names the JS frames: %s\n%s" % (got, out[-3000:]))


def jitdump(tmp):
    """A whole jitdump against the perf map V8 wrote beside it, code object by code object."""
    out = os.path.join(tmp, "jd")
    os.mkdir(out)
    r = subprocess.run(R.command(out, "0.01", ["--perf-prof"]), cwd=out, capture_output=True,
                       text=True, timeout=120)
    pid = int(r.stdout.split()[1]) if r.stdout.startswith("pid ") else 0
    dump = os.path.join(out, "jit-%d.dump" % pid)
    mapfile = "/tmp/perf-%d.map" % pid
    check(r.returncode == 0 and os.path.exists(dump) and os.path.exists(mapfile),
          "node --perf-prof wrote %s and %s: %s" % (dump, mapfile, r.stdout + r.stderr))
    if not os.path.exists(dump) or not os.path.exists(mapfile):
        return
    try:
        m = perfmaps.PerfMaps()
        n = m.add_file(dump)
        entries = perf_map(mapfile)
        # Interpreted functions' lines point at bytecode, which a jitdump without
        # --interpreted-frames-native-stack does not list: the compiled ones.
        compiled = [(lo, hi, name) for lo, hi, name in entries
                    if name.startswith("JS:") and not name.startswith("JS:~") and
                    name_at(entries, lo) == name]
        # Node.js 20's V8 writes some debug-info records whose file names are no strings (and
        # what follows them is misread): those records' lines are left out, each said.
        other = [p for p in m.problems() if not p.endswith("its source lines are left out")]
        check(n > 100 and not other,
              "libjitmap read %s: %d code objects, problems %s" % (dump, n, other))
        wrong, files = [], set()
        for lo, hi, name in compiled:
            got = m.lookup(lo)
            if not got or (got["lo"], got["hi"], got["name"]) != (lo, hi, name):
                wrong.append((hex(lo), name, got))
            for at in range(lo, hi, 4):
                files.add((m.lookup(at) or {}).get("file"))
        files.discard(None)
        # Source files as V8 names its scripts (never bytes a record misread).
        check(files and all(re.match(r"^(node:[\w/]+|/[\w./-]+)$", f) for f in files),
              "the jitdump's source files are script names: %s" % sorted(files)[:8])
        check(compiled and not wrong,
              "every compiled JS code object of the map (%d) is in the jitdump with its range "
              "and name: %s" % (len(compiled), wrong[:5]))
        check(R.want[0] in [R.short(n) for _, _, n in compiled], "%s is among them" % R.want[0])
        m.close()
    finally:
        os.unlink(mapfile)


def main():
    for tool in R.tools + ("eu-stack",):
        if not shutil.which(tool):
            print("test-perfmap-%s: SKIP: no %s" % (RUNTIME, tool))
            return 77
    if not os.path.exists(STACK):
        print("test-perfmap-%s: SKIP: %s not built" % (RUNTIME, STACK))
        return 77
    tmp = tempfile.mkdtemp(prefix="jitmap-%s-" % RUNTIME)
    try:
        live(tmp)
        if RUNTIME == "node":
            jitdump(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return T.summary()


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
