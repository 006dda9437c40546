"""Breakpad's stock tools as crash pipelines run them, for the tests of jitmap-minidump
(tests/minidump): minidump_stackwalk, minidump_dump and dump_syms of npm's minidump@0.26.0
(scripts/setup-breakpad.sh fetches them), and what their output says, read here.

    sys.path.insert(0, ".../tests/lib")
    import breakpad as BP
    tools = BP.Tools.setup(top)          # BP.Missing (the test skips) when not set up
    walk = tools.walk(dmp, [sym, native]) # minidump_stackwalk -m and plain, parsed: a Walk
    walk.threads                         # [Thread]: index, crashed, frames (Frame)
    rc, err = tools.dump(dmp)            # minidump_dump's exit status and its errors
    tools.store(path, root)              # dump_syms PATH into ROOT/NAME/ID/NAME.sym

The machine-readable output (-m, stackwalk_common.cc PrintProcessStateMachineReadable) lists
`Module|code file|version|debug file|debug id|0xbase|0xend|main` lines, then one line per frame,
`thread|frame|module|function|source file|line|0xoffset`, the crashing thread first, each
thread by its index in the dump. It does not say how a frame was found: the plain output does
(`Found by: call frame info` under each frame's line, with the registers the walker recovered,
rip among them); the two are joined here by thread index and frame number.
"""
import os
import re
import subprocess

TIMEOUT = 120


class Missing(Exception):
    """Breakpad's tools could not be set up here (the test skips)."""


class Frame:
    def __init__(self, number, module, function, source, line, offset):
        self.number = number
        self.module = module or None      # the module's code file's basename, or None
        self.function = function or None  # a FUNC's or PUBLIC's name, or None
        self.source, self.line, self.offset = source or None, line or None, offset
        self.found_by = None              # "call frame info", "stack scanning", ...
        self.rip = None                   # the PC the walker gives the frame (plain output)
        self.rsp = None

    def __repr__(self):
        return "#%d %s!%s rip=%s (%s)" % (self.number, self.module, self.function,
                                          hex(self.rip) if self.rip is not None else "?",
                                          self.found_by)


class Thread:
    def __init__(self, index):
        self.index = index
        self.crashed = False
        self.frames = []

    def rips(self):
        return [f.rip for f in self.frames if f.rip is not None]


class Walk:
    """minidump_stackwalk's account of one dump: its modules, crash line and threads."""

    def __init__(self, machine, plain):
        self.machine, self.plain = machine, plain
        self.modules = []  # dicts: name, debug_file, debug_id, base, end, main
        self.crash = None
        self.threads = []
        by_index = {}
        for line in machine.splitlines():
            parts = line.split("|")
            if parts[0] == "Module" and len(parts) >= 8:
                self.modules.append({"name": parts[1], "debug_file": parts[3],
                                     "debug_id": parts[4], "base": int(parts[5], 16),
                                     "end": int(parts[6], 16), "main": parts[7] == "1"})
            elif parts[0] == "Crash":
                self.crash = parts[1:]
            elif len(parts) == 7 and parts[0].isdigit() and parts[1].isdigit():
                t = int(parts[0])
                if t not in by_index:
                    by_index[t] = Thread(t)
                    self.threads.append(by_index[t])
                off = int(parts[6], 16) if parts[6].startswith("0x") else None
                by_index[t].frames.append(Frame(int(parts[1]), parts[2], parts[3], parts[4],
                                                parts[5], off))
        # The plain output: "Thread N (crashed)", " K  module!function ...", registers,
        # "Found by: ...".
        thread, frame = None, None
        for line in plain.splitlines():
            m = re.match(r"^Thread (\d+)( \(crashed\))?", line)
            if m:
                thread = by_index.get(int(m.group(1)))
                if thread is not None and m.group(2):
                    thread.crashed = True
                frame = None
                continue
            if thread is None:
                continue
            m = re.match(r"^\s{0,2}(\d+)\s{2}\S", line)
            if m:
                n = int(m.group(1))
                frame = thread.frames[n] if n < len(thread.frames) else None
                continue
            if frame is None:
                continue
            m = re.match(r"^\s+Found by: (.*)$", line)
            if m:
                frame.found_by = m.group(1).strip()
                continue
            for reg, val in re.findall(r"\b(rip|rsp|pc|sp)\s*=\s*0x([0-9a-f]+)", line):
                if reg in ("rip", "pc"):
                    frame.rip = int(val, 16)
                else:
                    frame.rsp = int(val, 16)

    def functions(self):
        """Every frame's function name, in every thread."""
        return [f.function for t in self.threads for f in t.frames if f.function]

    def module(self, name):
        return next((m for m in self.modules if m["name"] == name), None)


class Tools:
    def __init__(self, folder):
        self.folder = folder
        self.stackwalk = os.path.join(folder, "minidump_stackwalk")
        self.minidump_dump = os.path.join(folder, "minidump_dump")
        self.dump_syms = os.path.join(folder, "dump_syms")

    @classmethod
    def setup(cls, top):
        """The tools, set up by scripts/setup-breakpad.sh (quick when done)."""
        script = os.path.join(top, "scripts", "setup-breakpad.sh")
        try:
            r = subprocess.run([script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise Missing("scripts/setup-breakpad.sh: %s" % e) from None
        lines = r.stdout.strip().splitlines()
        if r.returncode or not lines or not os.path.isdir(lines[-1]):
            raise Missing("Breakpad's tools are not set up (scripts/setup-breakpad.sh: %s)" %
                          (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1])
        return cls(lines[-1])

    def _run(self, argv):
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT)
        return (r.returncode, r.stdout.decode("utf-8", "replace"),
                r.stderr.decode("utf-8", "replace"))

    def walk(self, dmp, symbol_paths):
        """minidump_stackwalk -m DMP PATHS... and minidump_stackwalk DMP PATHS... (their logs
        on standard error left out, as its users do): a Walk, its `rc` the two exit statuses
        (a walker that fails gives a Walk with no threads)."""
        rc_m, machine, _ = self._run([self.stackwalk, "-m", dmp] + list(symbol_paths))
        rc_p, plain, _ = self._run([self.stackwalk, dmp] + list(symbol_paths))
        w = Walk(machine, plain)
        w.rc = (rc_m, rc_p)
        return w

    def dump(self, dmp):
        """minidump_dump DMP: (its exit status, the lines of its output that say an error)."""
        rc, out, err = self._run([self.minidump_dump, dmp])
        said = [line for line in (out + err).splitlines()
                if re.search(r"fail|error|cannot|could not|invalid", line, re.I)]
        return rc, said

    def store(self, path, root):
        """dump_syms PATH, written where a symbol store keeps it (ROOT/NAME/ID/NAME.sym, from
        its MODULE line): the symbol file's path, or None when dump_syms wrote none."""
        rc, out, _ = self._run([self.dump_syms, path])
        first = out.split("\n", 1)[0].split(" ", 4)
        if rc or len(first) != 5 or first[0] != "MODULE":
            return None
        ident, name = first[3], first[4]
        d = os.path.join(root, name, ident)
        os.makedirs(d, exist_ok=True)
        sym = os.path.join(d, name + ".sym")
        with open(sym, "w") as f:
            f.write(out)
        return sym


def symbol_modules(root):
    """The module names a symbol store holds (ROOT/NAME/ID/NAME.sym): {name: [sym paths]}."""
    out = {}
    if not os.path.isdir(root):
        return out
    for name in sorted(os.listdir(root)):
        for ident in sorted(os.listdir(os.path.join(root, name))):
            sym = os.path.join(root, name, ident, name + ".sym")
            if os.path.isfile(sym):
                out.setdefault(name, []).append(sym)
    return out


def match_threads(truth, walk):
    """Pair each truth thread (a list of PCs, innermost first) with the walk's thread whose
    frames' PCs share the most with it, the best pair chosen first, a walk thread serving one
    truth thread: {truth index: Thread or None}."""
    pairs = []
    for i, pcs in enumerate(truth):
        s = set(pcs)
        for t in walk.threads:
            pairs.append((len(s & set(t.rips())), -i, -t.index, i, t))
    pairs.sort(key=lambda p: p[:3], reverse=True)
    out, used = {}, set()
    for score, _, _, i, t in pairs:
        if i in out or t.index in used or score == 0:
            continue
        out[i] = t
        used.add(t.index)
    return {i: out.get(i) for i in range(len(truth))}
