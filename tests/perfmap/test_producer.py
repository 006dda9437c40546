#!/usr/bin/env python3
"""One registration for every tool: libjitmap-producer's perf map and jitdump (jitmap_perf_open)
name in perf what GDB names.

    tests/perfmap/test_producer.py BUILD_DIR

The hand-written JIT (examples/handjit) registers its two functions once, with `--perf DIR`:

- /tmp/perf-PID.map and DIR/jit-PID.dump name them at the addresses and sizes the program
  prints (its truth lines), read by libjitmap's reader (through jitmap's Python binding);
- `perf record --call-graph dwarf` of a run that spends its time under the JIT frames
  (--busy): `perf script` names handjit_inner from the map; the same run without --perf
  names nothing there (the negative control). Skipped without a working perf;
- GDB with jitmap, stopped in the safepoint the JIT code calls, names handjit_inner at a PC
  inside the range the map gives it.

Exits 77 (skipped) without the example.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "lib"))
from tally import Tally  # noqa: E402

if len(sys.argv) != 2:
    sys.exit("usage: test_producer.py BUILD_DIR")
BUILD = os.path.abspath(sys.argv[1])
# libjitmap's perf map reader through jitmap's own Python binding (gdb-scripts/jitmap)
os.environ["JITMAP_LIBRARY"] = os.path.join(BUILD, "libjitmap.so")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "gdb-scripts"))
from jitmap import perfmaps  # noqa: E402
HANDJIT = os.path.join(BUILD, "examples", "handjit", "jitmap-handjit")
JITMAP_GDB = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")
T = Tally("test-perfmap-producer")
check = T.check


def functions(out):
    """{name: (address, size)} of the program's truth lines."""
    return {name: (int(addr, 16), int(size)) for name, addr, size in re.findall(
        r"function name=(\w+) address=0x([0-9a-f]+) size=(\d+)", out)}


def files(tmp):
    r = subprocess.run([HANDJIT, "--perf", tmp], capture_output=True, text=True, timeout=60,
                       cwd=tmp)
    check(r.returncode == 0, "jitmap-handjit --perf runs: %s" % (r.stdout + r.stderr))
    truth = functions(r.stdout)
    pid = int(re.search(r"jit-(\d+)\.dump", " ".join(os.listdir(tmp))).group(1)) \
        if any(f.startswith("jit-") for f in os.listdir(tmp)) else 0
    check(len(truth) == 2 and pid, "its truth lines and its jitdump: %s %s" % (truth, os.listdir(tmp)))
    mapfile = "/tmp/perf-%d.map" % pid
    try:
        for path in (mapfile, os.path.join(tmp, "jit-%d.dump" % pid)):
            m = perfmaps.PerfMaps()
            n = m.add_file(path)
            check(n == 2, "%s names 2 code objects: %d" % (path, n))
            for name, (addr, size) in truth.items():
                got = m.lookup(addr + size - 1)
                check(got and (got["name"], got["lo"], got["hi"]) == (name, addr, addr + size),
                      "%s names %s at [0x%x, 0x%x): %s" % (path, name, addr, addr + size, got))
            m.close()
    finally:
        remove_maps(tmp)


def perf_names(tmp, with_perf):
    data = os.path.join(tmp, "perf%d.data" % with_perf)
    args = [HANDJIT, "--busy", "300"] + (["--perf", tmp] if with_perf else [])
    r = subprocess.run(["perf", "record", "-q", "-k", "mono", "--call-graph", "dwarf", "-o", data,
                        "--"] + args, capture_output=True, text=True, timeout=120, cwd=tmp)
    if r.returncode:
        return None
    s = subprocess.run(["perf", "script", "-i", data], capture_output=True, text=True,
                       timeout=120)
    remove_maps(tmp)
    return s.stdout


def perf(tmp):
    if not shutil.which("perf"):
        print("test-perfmap-producer: perf not installed: its part skipped")
        return
    named = perf_names(tmp, True)
    if named is None:
        print("test-perfmap-producer: perf record cannot sample here: its part skipped")
        return
    check(re.search(r"handjit_inner\+0x[0-9a-f]+ \(/tmp/perf-\d+\.map\)", named),
          "perf script names handjit_inner from the producer's map:\n%s" % named[-2000:])
    plain = perf_names(tmp, False)
    check(plain is not None and "handjit_inner" not in plain and "jitmap_handjit_safepoint" in plain,
          "without --perf, perf names no JIT frame (the control)")


def gdb(tmp):
    if not shutil.which("gdb"):
        return
    r = subprocess.run(["gdb", "-nx", "-batch", HANDJIT, "-ex", "source " + JITMAP_GDB,
                        "-ex", "break jitmap_handjit_safepoint", "-ex", "run --perf " + tmp,
                        "-ex", "bt 3", "-ex", "kill"], capture_output=True, text=True,
                       timeout=120, cwd=tmp)
    truth = functions(r.stdout)
    frame = re.search(r"^#1 +0x([0-9a-f]+) in (\w+) ", r.stdout, re.M)
    inner = truth.get("handjit_inner")
    check(frame and inner and frame.group(2) == "handjit_inner" and
          inner[0] <= int(frame.group(1), 16) < inner[0] + inner[1],
          "GDB names frame 1 handjit_inner, inside the range the map gives it:\n%s" %
          r.stdout[-2000:])
    remove_maps(tmp)


def remove_maps(tmp):
    """The perf maps of the runs whose jitdump is in `tmp` (the same PID)."""
    for f in os.listdir(tmp):
        m = re.match(r"jit-(\d+)\.dump$", f)
        if m and os.path.exists("/tmp/perf-%s.map" % m.group(1)):
            os.unlink("/tmp/perf-%s.map" % m.group(1))


def main():
    if not os.path.exists(HANDJIT):
        print("test-perfmap-producer: SKIP: %s not built" % HANDJIT)
        return 77
    tmp = tempfile.mkdtemp(prefix="jitmap-producer-perf-")
    try:
        for part in (files, perf, gdb):
            sub = os.path.join(tmp, part.__name__)
            os.mkdir(sub)
            part(sub)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
