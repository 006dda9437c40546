#!/usr/bin/env python3
"""DAP: jitmap's values where IDEs ask for them, through GDB's Debug Adapter Protocol server
(`gdb -i dap`, GDB 14+; GDB 16 or 18 of scripts/setup-gdb.sh), speaking DAP over stdio as
VS Code does (Content-Length framing, a timeout on every read):

- the LLVM demo JIT (stackmaps program), stopped in jitmap_demo_safepoint: `stackTrace` names
  the JIT frame, its `scopes` have Locals loc0..loc5 whose values are those of `info stackmap
  -json 1` (asked through DAP's `evaluate`, context repl);
- jitmap-vm (examples/bytecode-vm), stopped in vm_jit_stop: with `includeAll` the stack trace
  lists the interpreter frames the runtime registered under the JIT frame, each at the JIT
  frame's PC, and each one's Locals are the values the interpreter had there (the program's
  truth lines); `bt` typed in the debug console (evaluate, context repl) lists them too;
- no "Python Exception" in anything GDB said;
- the negative control: the same session without jitmap has neither.

- lldb-dap (test_dap.py BUILD_DIR lldb22|lldb23): jitmap-vm's stack trace lists the interpreter
  frames under the JIT frame with jitmap's frame provider (LLDB 22 and newer), none without
  jitmap; on LLDB 23 each one's Locals are the interpreter's values (LLDB 22 asks for none).

Usage: test_dap.py BUILD_DIR [GDB_VERSION | lldbVERSION] (GDB 16, the default, or 18; LLDB 22
or 23). Exits 77 (skipped) when that debugger could not be set up.
"""
import json
import os
import re
import select
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
import jsoncontract  # noqa: E402
from tally import Tally  # noqa: E402

if len(sys.argv) not in (2, 3):
    sys.exit("usage: test_dap.py BUILD_DIR [GDB_VERSION]")

BUILD = os.path.abspath(sys.argv[1])
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JITMAP_GDB = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")
LLDB_ENTRY = os.path.join(BUILD, "share", "jitmap", "lldb", "jitmap.py")
DEMO = os.path.join(BUILD, "examples", "llvm-jit", "jitmap-demo-jit")
VM = os.path.join(BUILD, "examples", "bytecode-vm", "jitmap-vm")
TIMEOUT = 60

T = Tally("test-dap")
check = T.check


class Dap:
    """One DAP session: `gdb -i dap` (GDB), or lldb-dap (LLDB: `lldb_dap` is its path), with
    jitmap loaded or not."""

    def __init__(self, gdb, jitmap, lldb_dap=None):
        self.launch_extra = {}
        if lldb_dap:
            args = [lldb_dap]
            if jitmap:
                self.launch_extra = {"initCommands": ["command script import " + LLDB_ENTRY]}
        else:
            args = [gdb, "-i", "dap", "-q", "-nx", "-iex", "set debuginfod enabled off"]
            if jitmap:
                args += ["-ex", "source " + JITMAP_GDB]
        self.p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.seq = 0
        self.buf = b""
        self.output = []  # the program's output (DAP "output" events)

    def send(self, command, arguments=None):
        self.seq += 1
        msg = {"seq": self.seq, "type": "request", "command": command}
        if arguments is not None:
            msg["arguments"] = arguments
        data = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.p.stdin.flush()
        return self.seq

    def read(self, deadline):
        while True:
            if b"\r\n\r\n" in self.buf:
                head, rest = self.buf.split(b"\r\n\r\n", 1)
                n = [int(line.split(b":")[1]) for line in head.split(b"\r\n")
                     if line.lower().startswith(b"content-length")][0]
                if len(rest) >= n:
                    self.buf = rest[n:]
                    msg = json.loads(rest[:n])
                    if msg.get("type") == "event" and msg.get("event") == "output":
                        self.output.append(msg["body"].get("output", ""))
                    return msg
            left = deadline - time.time()
            if left <= 0 or not select.select([self.p.stdout], [], [], left)[0]:
                raise TimeoutError("no DAP message in %d s" % TIMEOUT)
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                raise EOFError("gdb closed the connection: " + self.p.stderr.read().decode())
            self.buf += chunk

    def wait(self, pred):
        deadline = time.time() + TIMEOUT
        while True:
            msg = self.read(deadline)
            if pred(msg):
                return msg

    def request(self, command, arguments=None):
        s = self.send(command, arguments)
        r = self.wait(lambda m: m.get("type") == "response" and m.get("request_seq") == s)
        if not r.get("success"):
            raise RuntimeError("%s failed: %s" % (command, r.get("message")))
        return r.get("body") or {}

    def stop_at(self, program, args, function):
        """initialize, launch, a function breakpoint, configurationDone, the stop: its
        thread."""
        self.request("initialize", {"adapterID": "jitmap-test", "linesStartAt1": True,
                                    "columnsStartAt1": True})
        s = self.send("launch", dict({"program": program, "args": args}, **self.launch_extra))
        self.wait(lambda m: (m.get("type") == "event" and m.get("event") == "initialized") or
                  (m.get("type") == "response" and m.get("request_seq") == s))
        self.request("setFunctionBreakpoints", {"breakpoints": [{"name": function}]})
        self.request("configurationDone")
        stop = self.wait(lambda m: m.get("type") == "event" and m.get("event") == "stopped")
        return stop["body"].get("threadId", 1)

    def frames(self, thread, include_all=False):
        body = self.request("stackTrace", {"threadId": thread,
                                           "format": {"includeAll": include_all}})
        return body["stackFrames"]

    def locals(self, frame_id):
        """{name: value string} of the frame's Locals scope ({} without one)."""
        for scope in self.request("scopes", {"frameId": frame_id})["scopes"]:
            if scope["name"] == "Locals":
                body = self.request("variables",
                                    {"variablesReference": scope["variablesReference"]})
                return {v["name"]: v["value"] for v in body["variables"]}
        return {}

    def repl(self, command, frame_id):
        return self.request("evaluate", {"expression": command, "context": "repl",
                                         "frameId": frame_id})["result"]

    def close(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


def clean(text, what):
    """No Python exception or traceback in what GDB said (its output events: `gdb -i dap`
    sends its own stdout and stderr there)."""
    for bad in ("Python Exception", "Traceback (most recent call last)"):
        check(bad not in text, "%s: GDB printed %r:\n%s" % (what, bad, text))


def as_int(text):
    try:
        return int(text.split()[0], 0)
    except (ValueError, IndexError):
        return None


def demo(gdb):
    d = Dap(gdb, jitmap=True)
    try:
        t = d.stop_at(DEMO, ["--program", "stackmaps"], "jitmap_demo_safepoint")
        frames = d.frames(t)
        check(len(frames) > 2 and frames[1]["name"] == "stackmaps_main",
              "demo: stackTrace names the JIT frame: %s" % [f["name"] for f in frames])
        got = d.locals(frames[1]["id"])
        obj = jsoncontract.loads(d.repl("info stackmap -json 1", frames[1]["id"]), "frame")
        want = {"loc%d" % loc["index"]: (loc["value"], loc["size"]) for loc in obj["locations"]}
        check(sorted(got) == sorted(want) and len(want) == 6,
              "demo: the JIT frame's Locals %s, info stackmap's locations %s" % (sorted(got),
                                                                                 sorted(want)))
        for name, (value, size) in want.items():
            mask = (1 << (8 * min(size, 8))) - 1
            v = as_int(got.get(name, ""))
            check(v is not None and v & mask == value & mask,
                  "demo: %s = %s in DAP, %s in info stackmap" % (name, got.get(name), value))
    finally:
        d.close()
        clean("".join(d.output), "demo")


def vm_truth(output):
    """[(method, bci, {local: value}, [stack])] of the compiled tier's truth lines."""
    out = []
    for line in output.splitlines():
        if line.startswith("jitmap-vm: vframe "):
            kv = dict(x.split("=", 1) for x in line.split()[2:])
            locs = {k: int(v) for k, v in kv.items()
                    if k not in ("call", "site", "k", "method", "bci", "stack")}
            out.append((kv["method"], int(kv["bci"]), locs,
                        [int(v) for v in kv["stack"].split(",") if v]))
    return out


def check_locals(d, frame, name, locs, stack, what):
    """An interpreter frame's Locals are the interpreter's locals and stack at that point."""
    got = d.locals(frame["id"])
    want = dict((n, str(v)) for n, v in locs.items())
    want.update(("stack%d" % i, str(v)) for i, v in enumerate(stack))
    check(got == want, "%s: %s's Locals %s, the interpreter's %s" % (what, name, got, want))


def vm(gdb, jitmap):
    what = "vm" if jitmap else "vm without jitmap"
    d = Dap(gdb, jitmap=jitmap)
    try:
        t = d.stop_at(VM, ["--n", "6", "--stop-at", "4"], "vm_jit_stop")
        plain = [f["name"] for f in d.frames(t)]
        frames = d.frames(t, include_all=True)
        names = [f["name"] for f in frames]
        truth = vm_truth("".join(d.output))
        if not jitmap:
            check("jit.Demo.sumSquares" in names and not any(n.startswith("[") for n in names),
                  "%s: no interpreter frame in the stack trace: %s" % (what, names))
            jit = [f for f in frames if f["name"] == "jit.Demo.sumSquares"]
            check(jit and not any(k.startswith("deopt") for k in d.locals(jit[0]["id"])),
                  "%s: no deopt values as the JIT frame's locals" % what)
            return
        check(len(truth) == 2, "%s: the program's truth lines: %s" % (what, d.output))
        check(not any(n.startswith("[") for n in plain),
              "%s: without includeAll DAP lists no elided frame: %s" % (what, plain))
        want_names = ["[%s, bci %d]" % (m, b) for m, b, _, _ in truth]
        at = names.index("jit.Demo.sumSquares") if "jit.Demo.sumSquares" in names else -1
        check(at >= 0 and names[at + 1:at + 3] == want_names,
              "%s: includeAll lists %s under the JIT frame: %s" % (what, want_names, names))
        for k, (method, bci, locs, stack) in enumerate(truth):
            if at < 0 or at + 1 + k >= len(frames):
                break
            pc = frames[at + 1 + k].get("instructionPointerReference")
            jit_pc = frames[at].get("instructionPointerReference")
            check(pc is not None and pc == jit_pc, "%s: %s at %s, the JIT frame at %s" % (
                what, want_names[k], pc, jit_pc))
            check_locals(d, frames[at + 1 + k], want_names[k], locs, stack, what)
        # `bt` typed in the IDE's debug console (DAP's evaluate, context repl).
        bt = d.repl("bt", frames[0]["id"])
        # (the JIT frame's number depends on whether the build inlined vm_safepoint)
        check(re.search(r"^#\d+ .* in jit\.Demo\.sumSquares \(\)\n +(0x[0-9a-f]+ in )?%s \(\)\n"
                        r" +(0x[0-9a-f]+ in )?%s \(\)\n#\d+ " % tuple(map(re.escape, want_names)),
                        bt, re.M),
              "%s: bt in the debug console lists %s under the JIT frame:\n%s" % (
                  what, want_names, bt))
        clean(bt, what + ": bt in the debug console")
    finally:
        d.close()
        clean("".join(d.output), what)


def lldb_vm(lldb_dap, version, jitmap):
    """lldb-dap on jitmap-vm at vm_jit_stop: from LLDB 22, the stack trace (an IDE's call
    stack) lists the interpreter frames under the JIT frame (jitmap's frame provider), in
    GDB's order; without jitmap, none."""
    what = "lldb-dap %s vm%s" % (version, "" if jitmap else " without jitmap")
    d = Dap(None, jitmap, lldb_dap=lldb_dap)
    try:
        t = d.stop_at(VM, ["--n", "6", "--stop-at", "4"], "vm_jit_stop")
        names = [f["name"] for f in d.frames(t)]
        at = next((i for i, n in enumerate(names) if "jit.Demo.sumSquares" in n), None)
        check(at is not None, "%s: the JIT frame is in the stack trace: %s" % (what, names))
        want = ["[Demo.square, bci 4]", "[Demo.sumSquares, bci 10]"]
        if jitmap and version == "22":
            # LLDB 22 gives every provided frame without a PC one StackID (pc invalid, CFA 0),
            # and an SBFrame finds its frame again by StackID: lldb-dap names both after the
            # first (LLDB's own bt, which does not go through SBFrame, is right). LLDB 23 is.
            check(at is not None and names[at + 1:at + 3] == [want[0], want[0]],
                  "%s: two interpreter frames under the JIT frame, both named %s (LLDB 22): "
                  "%s" % (what, want[0], names))
        elif jitmap:
            check(at is not None and names[at + 1:at + 3] == want,
                  "%s: %s under the JIT frame: %s" % (what, want, names))
        if jitmap and at is not None:
            interpreter_variables(d, d.frames(t)[at + 1:at + 3], want, version, what)
        else:
            check(not any(n.startswith("[Demo.") for n in names),
                  "%s: no interpreter frame: %s" % (what, names))
    finally:
        d.close()


def interpreter_variables(d, frames, names, version, what):
    """An interpreter frame's values in lldb-dap: LLDB 23 asks jitmap's provided frames for
    their variables, and `frame variable` typed in the debug console shows the interpreter's
    values; its lldb-dap asks for in-scope variables only, which a provided frame's never are
    (they have no block): the Locals scope stays empty. LLDB 22 asks for none."""
    truth = vm_truth("".join(d.output))
    check(len(truth) == 2, "%s: the program's truth lines: %s" % (what, d.output))
    for frame, name, (method, bci, locs, stack) in zip(frames, names, truth):
        got = d.locals(frame["id"])
        check(got == {}, "%s: lldb-dap shows no Locals of %s: %s" % (what, name, got))
        typed = d.repl("frame variable", frame["id"])
        shown = dict(re.findall(r"^\(long\) (\w+) = (-?\d+)$", typed, re.M))
        want = {} if version == "22" else dict((n, str(v)) for n, v in locs.items())
        if version != "22":
            want.update(("stack%d" % i, str(v)) for i, v in enumerate(stack))
        check(shown == want, "%s: `frame variable` in %s's debug console: %r, want %s" % (
            what, name, typed, want))


def main_lldb(version):
    r = subprocess.run([os.path.join(TOP, "scripts", "setup-lldb.sh"), version],
                       capture_output=True, text=True, timeout=600)
    if r.returncode or not r.stdout.strip():
        print("test-dap: SKIP: no LLDB %s (scripts/setup-lldb.sh %s: %s)" % (
            version, version, r.stderr.strip()))
        return 77
    lldb_dap = os.path.join(os.path.dirname(r.stdout.strip().splitlines()[-1]), "lldb-dap")
    if not os.path.exists(VM):
        print("test-dap: SKIP: %s not built (needs llvm-config-14)" % VM)
        return 77
    lldb_vm(lldb_dap, version, jitmap=True)
    lldb_vm(lldb_dap, version, jitmap=False)
    return T.summary()


def main():
    version = sys.argv[2] if len(sys.argv) > 2 else "16"
    if version.startswith("lldb"):
        return main_lldb(version[len("lldb"):])
    r = subprocess.run([os.path.join(TOP, "scripts", "setup-gdb.sh"), version],
                       capture_output=True, text=True, timeout=600)
    gdb = r.stdout.strip().splitlines()[-1] if r.returncode == 0 and r.stdout.strip() else None
    if not gdb:
        print("test-dap: SKIP: no GDB %s with DAP (scripts/setup-gdb.sh %s: %s)" % (
            version, version, r.stderr.strip()))
        return 77
    for prog in (DEMO, VM):
        if not os.path.exists(prog):
            print("test-dap: SKIP: %s not built (needs llvm-config-14)" % prog)
            return 77
    demo(gdb)
    vm(gdb, jitmap=True)
    vm(gdb, jitmap=False)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
