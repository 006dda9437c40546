#!/usr/bin/env python3
"""GDB with the installed packages, as a user meets it after a crash (tests/package/test_package.sh
runs it once the packages are installed).

    tests/package/test_installed_gdb.py WORK_DIR PROGRAM

PROGRAM is examples/producer-minimal/minimal.c built against the installed libjitmap-producer.
Every session reads GDB's system gdbinit directory (`-nh`, not `-nx`: /etc/gdb/gdbinit.d/jitmap.py
with the auto-load script of libjitmap-producer, both as installed, the pair a user gets):

- run: `break runtime_safepoint`, `run`, `info stackmap` on jit_answer's frame (rbx = 42), and a
  core written there (gcore);
- core: `gdb PROGRAM CORE`;
- attach: `gdb -p PID` of the program waiting in its safepoint (an LD_PRELOAD printf that waits
  once the safepoint has printed its line);
- compressed core: `gdb PROGRAM`, then `jitmap core CORE.zst` (GDB cannot open it, so nothing
  brings the JIT descriptor before the command: the command must be there before jitmap is on).

Each must show the record's value (jitmap is on) and print nothing but GDB's and jitmap's own
lines: no "Python Exception" (GDB 13 raised one when the auto-load stub disconnected its handlers
twice), no traceback, no internal error, no undefined command. Prints "ok: ..." or "FAIL: ..."
per check; exits 1 when any failed.
"""
import lzma
import os
import re
import shutil
import signal
import subprocess
import sys
import time

if len(sys.argv) != 3:
    sys.exit("usage: test_installed_gdb.py WORK_DIR PROGRAM")
WORK, PROGRAM = (os.path.abspath(a) for a in sys.argv[1:])
GDB = shutil.which("gdb")
TIMEOUT = 120
BAD = ("Python Exception", "Traceback (most recent call last)", "internal error",
       "internal-error", "Error while executing Python code", "Undefined command",
       "Undefined jitmap command", "SystemError")
failed = []


def report(ok, what, text=""):
    print("%s: %s%s" % ("ok" if ok else "FAIL", what, "" if ok else "\n" + text), flush=True)
    if not ok:
        failed.append(what)
    return ok


def gdb(name, args):
    """A batch GDB session reading the system gdbinit files (its whole output)."""
    argv = [GDB, "-q", "-batch", "-nh", "-iex", "set debuginfod enabled off"] + args
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=TIMEOUT, cwd=WORK)
        text = p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        text = "(GDB did not finish in %d s)" % TIMEOUT
    with open(os.path.join(WORK, name + ".gdb.out"), "w") as f:
        f.write(text)
    return text


def clean(name, text):
    """Nothing but GDB's and jitmap's own lines."""
    bad = [line for line in text.splitlines() if any(b in line for b in BAD)]
    return report(not bad, "%s: only GDB's and jitmap's own lines" % name, text)


RECORD = re.compile(r"^record 1 at 0x[0-9a-f]+ \(jit_answer\+\d+\)", re.M)
RBX = re.compile(r"^ +#0 +register +rbx +size 8 +42$", re.M)


def shows_record(name, text):
    return report(RECORD.search(text) and RBX.search(text),
                  "%s: info stackmap shows record 1 with rbx = 42 (jitmap on)" % name, text)


def level_of(text, function):
    """The frame number of `function` in a bt, or None."""
    m = re.search(r"^#(\d+) +(?:0x[0-9a-f]+ in )?%s \(" % re.escape(function), text, re.M)
    return int(m.group(1)) if m else None


def main():
    core = os.path.join(WORK, "minimal.core")
    # run, and the core for the other sessions
    text = gdb("run", ["-ex", "break runtime_safepoint", "-ex", "run", "-ex", "bt",
                       "-ex", "info stackmap 1", "-ex", "gcore " + core, "-ex", "kill",
                       "--args", PROGRAM])
    clean("run", text)
    shows_record("run", text)
    if not report(os.path.exists(core), "run: gcore wrote a core", text):
        return
    # core
    text = gdb("core", ["-ex", "bt", "-ex", "info stackmap 1", PROGRAM, core])
    clean("core", text)
    shows_record("core", text)
    # compressed core: zstd's (systemd-coredump's), else xz (Python writes it)
    zstd = shutil.which("zstd")
    packed = core + (".zst" if zstd else ".xz")
    if zstd:
        subprocess.run([zstd, "-q", "-f", core, "-o", packed], check=True)
    else:
        with open(core, "rb") as src, lzma.open(packed, "wb") as dst:
            shutil.copyfileobj(src, dst)
    text = gdb("compressed-core", ["-ex", "jitmap core " + packed, "-ex", "bt",
                                   "-ex", "info stackmap 1", PROGRAM])
    clean("compressed core", text)
    report(re.search(r"^jitmap core: .* is a (zstd|xz)-compressed core: opened", text, re.M),
           "compressed core: jitmap core opens %s" % os.path.basename(packed), text)
    shows_record("compressed core", text)
    attach()


PRELOAD_C = r"""
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
/* The program's printf: once the safepoint has printed its line, wait there for GDB. */
int printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
	if (strncmp(fmt, "safepoint:", 10) == 0)
		for (;;)
			pause();
	return n;
}
"""


def attach():
    src = os.path.join(WORK, "wait_printf.c")
    lib = os.path.join(WORK, "wait_printf.so")
    with open(src, "w") as f:
        f.write(PRELOAD_C)
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-o", lib, src], check=True)
    out = os.path.join(WORK, "attach.program.out")
    env = dict(os.environ, LD_PRELOAD=lib)
    with open(out, "w") as f:
        p = subprocess.Popen([PROGRAM], stdout=f, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.time() + 30
        while time.time() < deadline and "safepoint:" not in open(out).read():
            time.sleep(0.1)
        if not report("safepoint:" in open(out).read(), "attach: the program waits in its "
                      "safepoint", open(out).read()):
            return
        text = gdb("attach-bt", ["-p", str(p.pid), "-ex", "bt", "-ex", "detach"])
        clean("attach (bt)", text)
        level = level_of(text, "jit_answer")
        if not report(level is not None and level_of(text, "main") == level + 1,
                      "attach: bt goes from jit_answer to main", text):
            return
        text = gdb("attach", ["-p", str(p.pid), "-ex", "info stackmap %d" % level,
                              "-ex", "detach"])
        clean("attach", text)
        shows_record("attach", text)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()


if GDB is None:
    report(False, "gdb is installed")
else:
    main()
sys.exit(1 if failed else 0)
