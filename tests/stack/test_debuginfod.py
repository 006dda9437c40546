#!/usr/bin/env python3
"""jitmap-stack on a core whose executable is not where the core says, with the executable
served by a debuginfod server on loopback (Debian's `debuginfod`), as on a machine that
collects cores from others.

    tests/stack/test_debuginfod.py BUILD_DIR

The demo JIT (statepoint program, two threads) aborts in a folder of its own; its core is
read three ways, each with jitmap-stack --json --values:
- the control: the executable where the core says;
- moved away, no server (the negative control): the executable's frames have no name, and
  every frame past them is a guess whose values are not stated (a number would be libdwfl's
  frame-pointer guess);
- moved away, DEBUGINFOD_URLS naming a local debuginfod that indexes the folder it was moved
  to: libdwfl fetches it by build ID, the frames are named as in the control, nothing is a
  guess, and every value of every JIT frame equals the control's.
Exits 77 (skipped) when debuginfod, the demo or jitmap-stack is missing, or cores cannot be
made here.
"""
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
import jsoncontract  # noqa: E402
from tally import Tally  # noqa: E402

if len(sys.argv) != 2:
    sys.exit("usage: test_debuginfod.py BUILD_DIR")
BUILD = os.path.abspath(sys.argv[1])
STACK = os.path.join(BUILD, "jitmap-stack")
DEMO = os.path.join(BUILD, "examples", "llvm-jit", "jitmap-demo-jit")
DEBUGINFOD = shutil.which("debuginfod")
T = Tally("test-debuginfod")
check, skip = T.check, T.skip

for path in (STACK, DEMO):
    if not os.access(path, os.X_OK):
        skip("%s not built" % path)
if not DEBUGINFOD:
    skip("no debuginfod server (Debian's debuginfod package)")
WORK = tempfile.mkdtemp(prefix="jitmap-debuginfod.")


def make_core():
    d = os.path.join(WORK, "crash")
    os.makedirs(d)
    exe = os.path.join(d, "jitmap-demo-jit")
    shutil.copy2(DEMO, exe)

    def limits():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    with open(os.path.join(d, "out"), "w") as out:
        p = subprocess.run([exe, "--program", "statepoint", "--threads", "2", "--abort"],
                           stdout=out, stderr=subprocess.STDOUT, cwd=d, preexec_fn=limits,
                           timeout=120)
    cores = [c for c in os.listdir(d) if c == "core" or c.startswith("core.")]
    if p.returncode not in (-6, 134) or not cores:
        with open("/proc/sys/kernel/core_pattern") as f:
            skip("no core file from the demo (exit %d; core_pattern %r)" %
                 (p.returncode, f.read().strip()))
    return exe, os.path.join(d, cores[0])


def stack(core, env=None):
    e = dict(os.environ)
    for k in ("DEBUGINFOD_URLS", "DEBUGINFOD_CACHE_PATH"):
        e.pop(k, None)
    e["XDG_CACHE_HOME"] = os.path.join(WORK, "cache-home")  # jitmap-stack's own cache
    e.update(env or {})
    r = subprocess.run([STACK, "--json", "--values", core], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120, env=e)
    check(r.returncode == 0, "jitmap-stack exits 0 (%d: %s)" % (r.returncode, r.stderr))
    return jsoncontract.loads(r.stdout, "jitmap-stack")


def jit_values(doc):
    """{(tid, function): [(location index, value or None)]} of every JIT frame at a record."""
    out = {}
    for t in doc["threads"]:
        for f in t["frames"]:
            if f["jit"] and f["stackmap"] and f["stackmap"].get("record"):
                out[(t["tid"], f["function"], f["pc"])] = [
                    (l["index"], l.get("value")) for l in f["stackmap"]["locations"]]
    return out


def names(doc):
    return {t["tid"]: [f["function"] for f in t["frames"]] for t in doc["threads"]}


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def build_id(path):
    """The file's GNU build ID (readelf -n)."""
    out = subprocess.run(["readelf", "-n", path], stdout=subprocess.PIPE, text=True).stdout
    for line in out.splitlines():
        if "Build ID:" in line:
            return line.split("Build ID:")[1].strip()
    return None


def main():
    exe, core = make_core()
    control = stack(core)
    want = jit_values(control)
    check(want and all(v is not None for vals in want.values() for _, v in vals[3:4]),
          "the control states the JIT frames' values (%d frames)" % len(want))
    check(all(f.get("guess") is None for t in control["threads"] for f in t["frames"]),
          "the control has no guess")

    served = os.path.join(WORK, "served")
    os.makedirs(served)
    moved = os.path.join(served, "jitmap-demo-jit")
    shutil.move(exe, moved)

    # The negative control: no server, the executable gone.
    alone = stack(core)
    guessed = [f for t in alone["threads"] for f in t["frames"] if f.get("guess")]
    check(guessed, "without the executable and without a server, frames past the executable's "
                   "are guesses")
    stated = [l for f in guessed if f["stackmap"] for l in f["stackmap"]["locations"]
              if l.get("value") is not None and l["kind"] not in ("constant", "constant_index")]
    check(not stated, "no value of a guessed frame is stated: %s" % stated[:3])

    port = free_port()
    db = os.path.join(WORK, "debuginfod.sqlite")
    log = open(os.path.join(WORK, "debuginfod.log"), "w")
    server = subprocess.Popen([DEBUGINFOD, "-F", "-d", db, "-p", str(port), "-t", "1",
                               served], stdout=log, stderr=subprocess.STDOUT)
    try:
        bid = build_id(moved)
        url = "http://127.0.0.1:%d" % port
        deadline = time.time() + 60
        ready = False
        while time.time() < deadline and not ready:
            try:
                with urllib.request.urlopen("%s/buildid/%s/executable" % (url, bid),
                                            timeout=5) as r:
                    ready = r.status == 200
            except (urllib.error.URLError, OSError):
                time.sleep(0.2)
        if not ready:
            log.flush()
            with open(log.name) as f:
                skip("the local debuginfod did not serve %s within 60 s:\n%s" % (bid, f.read()))
        fetched = stack(core, {"DEBUGINFOD_URLS": url,
                               "DEBUGINFOD_CACHE_PATH": os.path.join(WORK, "client-cache")})
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()

    check(names(fetched) == names(control),
          "through debuginfod, every thread's frames are named as in the control:\n%s\n%s" % (
              json.dumps(names(fetched)), json.dumps(names(control))))
    check(all(f.get("guess") is None for t in fetched["threads"] for f in t["frames"]),
          "through debuginfod, no frame is a guess")
    check(jit_values(fetched) == want,
          "through debuginfod, every JIT frame's values equal the control's:\n%s\n%s" % (
              jit_values(fetched), want))
    check(os.path.isdir(os.path.join(WORK, "client-cache")) and
          any(files for _, _, files in os.walk(os.path.join(WORK, "client-cache"))),
          "the executable came through the debuginfod client (its cache holds it)")
    return T.summary()


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
    sys.exit(rc)
