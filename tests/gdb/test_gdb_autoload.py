#!/usr/bin/env python3
"""jitmap turns itself on in GDB for a program with JIT code, with no `source` line (issue 35):
the system gdbinit script (build/share/jitmap/gdbinit.d/jitmap.py, installed in
/etc/gdb/gdbinit.d) read as GDB reads its system gdbinit directory (`-ix FILE` here: the tests
run `gdb -nx`, so that the machine's own files do not count).

    tests/gdb/test_gdb_autoload.py BUILD_DIR

- the demo JIT (libLLVM defines __jit_debug_descriptor): `info stackmap 1` at its first
  safepoint shows record 100 with the program's truth (a=15); without the script (the negative
  control) GDB has no such command; with `set jitmap auto-load off` neither.
- LLVM's lli-14 (libLLVM), stopped in usleep under JIT code: `jitmap status` answers.
- a process that writes a perf map (/tmp/perf-PID.map) and no JIT descriptor: jitmap is on at
  the stop after it wrote it.
- a program with none of these: the whole session's transcript is the same, line by line, with
  the script and without it (but for the process's ID).
- a core carrying a perf map (its gcore through jitmap-core-handler, the map deleted): jitmap
  on by itself, for `gdb EXE -c CORE` and for `core-file`; the same core without the note: the
  same session, line by line, with and without the script.

Exits 77 (skipped) without gdb or the demo; skips lli's part without lli-14.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

if len(sys.argv) != 2:
    sys.exit("usage: test_gdb_autoload.py BUILD_DIR")
BUILD = os.path.abspath(sys.argv[1])
SCRIPT = os.path.join(BUILD, "share", "jitmap", "gdbinit.d", "jitmap.py")
JITMAP_GDB = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")
DEMO = os.path.join(BUILD, "examples", "llvm-jit", "jitmap-demo-jit")
LLI = shutil.which("lli-14")
LLI_PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lli_registers.ll")
HANDLER = os.path.join(BUILD, "jitmap-core-handler")
GDB = os.environ.get("GDB_EXEC") or shutil.which("gdb")
failures = []

PLAIN_C = r"""
#include <stdio.h>
#include <stdlib.h>
static int twice(int x) { return 2 * x; }
int main(int argc, char **argv) {
    int n = twice(argc + 20);
    printf("n=%d\n", n);
    return n == 42 ? 0 : 1;
}
"""

PERF_C = r"""
#include <stdio.h>
#include <unistd.h>
void wrote_map(void) { }
int main(void) {
    char path[64];
    snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    fprintf(f, "7f0000001000 40 LazyCompile:*answer app.js:1\n");
    fclose(f);
    wrote_map();
    unlink(path);
    return 0;
}
"""


def check(cond, what):
    print("%s %s" % ("PASS" if cond else "FAIL", what), flush=True)
    if not cond:
        failures.append(what)
    return cond


def gdb(args, script=True, pre=()):
    """A batch GDB session (stdout and stderr together, as a user sees them)."""
    cmd = [GDB, "-batch", "-nx"] + (["-ix", SCRIPT] if script else []) + list(pre) + \
        ["-iex", "set debuginfod enabled off"] + list(args)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
    return p.stdout.decode("utf-8", "replace")


def main():
    if not GDB or not os.path.exists(DEMO) or not os.path.exists(SCRIPT):
        print("SKIP: gdb, the demo or %s missing" % SCRIPT)
        return 77
    work = tempfile.mkdtemp(prefix="jitmap-autoload.")
    demo = ["-ex", "break jitmap_demo_safepoint", "-ex", "run", "-ex", "info stackmap 1",
            "-ex", "kill", "--args", DEMO]
    out = gdb(demo)
    check("record 100 at" in out and "#0   register       r13                    size 8   15"
          in out, "demo JIT: jitmap on by itself, record 100 with a=15")
    out = gdb(demo, script=False)
    check('Undefined info command: "stackmap 1"' in out,
          "demo JIT without the script: no jitmap (the negative control)")
    # ~/.gdbinit and other scripts share GDB's __main__ with the system gdbinit scripts: a
    # user's names there change nothing.
    out = gdb(demo, pre=["-iex", "python def _load(): pass",
                         "-iex", "python load = stop = new_objfile = quiet = None"])
    check("record 100 at" in out, "demo JIT: jitmap on by itself whatever names __main__ has")
    # jitmap.gdb sourced while GDB loads a library during `run`, with no system script before
    # it (libjitmap-producer's auto-load script does that): the run still stops.
    hook = os.path.join(work, "hook.py")
    with open(hook, "w") as f:
        f.write("import gdb\n"
                "def h(ev):\n"
                "    if 'libLLVM' in (ev.new_objfile.filename or ''):\n"
                "        gdb.events.new_objfile.disconnect(h)\n"
                "        gdb.execute('source %s')\n"
                "gdb.events.new_objfile.connect(h)\n" % JITMAP_GDB)
    out = gdb(demo, script=False, pre=["-ix", hook])
    check("record 100 at" in out and "Selected thread is running" not in out,
          "jitmap.gdb sourced as a library loads during run: the run stops at the breakpoint")
    out = gdb(demo, pre=["-iex", "set jitmap auto-load off"])
    check('Undefined info command: "stackmap 1"' in out,
          "demo JIT with `set jitmap auto-load off`: no jitmap")

    if LLI:
        out = gdb(["-iex", "set breakpoint pending on", "-ex", "break usleep", "-ex", "run", "-ex", "jitmap status", "-ex", "kill",
                   "--args", LLI, "-jit-kind=mcjit", LLI_PROGRAM])
        check("libjitmap:" in out and "JIT descriptor at" in out,
              "lli-14: jitmap on by itself (jitmap status)")
    else:
        print("SKIP lli-14: not installed")

    cc = shutil.which("cc") or shutil.which("gcc")
    for name, src in (("plain", PLAIN_C), ("perf", PERF_C)):
        with open(os.path.join(work, name + ".c"), "w") as f:
            f.write(src)
        subprocess.run([cc, "-g", "-O0", "-o", os.path.join(work, name),
                        os.path.join(work, name + ".c")], check=True)
    out = gdb(["-ex", "break wrote_map", "-ex", "run", "-ex", "jitmap perf-map", "-ex", "kill",
               os.path.join(work, "perf")])
    check("perf-" in out and "1 code object" in out and "Undefined" not in out,
          "a process with a perf map: jitmap on at the stop after it wrote it")

    session = ["-ex", "break twice", "-ex", "run", "-ex", "bt", "-ex", "info frame",
               "-ex", "finish", "-ex", "info locals", "-ex", "info sharedlibrary",
               "-ex", "continue", os.path.join(work, "plain")]
    with_script, without = gdb(session), gdb(session, script=False)

    def lines(out):  # the process's ID is the one thing that differs between two runs
        return [re.sub(r"process \d+", "process PID", l) for l in out.splitlines()]
    same = lines(with_script) == lines(without)
    check(same and "n=42" in without and "exited normally" in without,
          "a program with no JIT code: the same session, line by line, with and without")
    if not same:
        import difflib
        print("\n".join(difflib.unified_diff(lines(without), lines(with_script),
                                             "without", "with", lineterm="")))

    # Cores: the plain program's (gcore), and the same core through jitmap-core-handler with
    # a perf map added as its note (the core of a runtime that wrote one).
    plain, noted = os.path.join(work, "plain.gcore"), os.path.join(work, "noted.gcore")
    gdb(["-ex", "break twice", "-ex", "run", "-ex", "gcore " + plain, "-ex", "kill",
         os.path.join(work, "plain")], script=False)
    perf_map = os.path.join(work, "perf-4242.map")
    with open(perf_map, "w") as f:
        f.write("7f0000001000 40 LazyCompile:*answer app.js:1\n")
    with open(plain, "rb") as i, open(noted, "wb") as o:
        h = subprocess.run([HANDLER, "--file=" + perf_map, "0"], stdin=i, stdout=o,
                           stderr=subprocess.PIPE, timeout=300)
    check(h.returncode == 0 and b"1 JIT file added" in h.stderr,
          "jitmap-core-handler added the perf map: %s" % h.stderr.decode()[-300:])
    os.unlink(perf_map)  # the file is in the core only
    exe = os.path.join(work, "plain")
    out = gdb(["-ex", "jitmap perf-map", exe, "-c", noted])
    check("perf-4242.map (in the core): 1 code object" in out and "Undefined" not in out,
          "a core carrying a perf map (gdb EXE -c CORE): jitmap on by itself")
    out = gdb(["-ex", "file " + exe, "-ex", "core-file " + noted, "-ex", "jitmap perf-map"])
    check("perf-4242.map (in the core): 1 code object" in out,
          "the same core opened by `core-file`: jitmap on by itself")
    session = ["-ex", "bt", "-ex", "info frame", "-ex", "info sharedlibrary", "-ex",
               "info threads", exe, "-c", plain]
    with_script, without = gdb(session), gdb(session, script=False)
    check(with_script == without and "twice" in without,
          "the core of a program with no JIT code: the same session, line by line")
    shutil.rmtree(work, ignore_errors=True)
    print("autoload: %d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
