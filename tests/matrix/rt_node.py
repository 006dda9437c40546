"""Node.js for the runtime matrix (tests/matrix/README.md): node_prog.js, run with the flags
perf's documentation gives Node.js users (--perf-basic-prof: a perf map as V8 compiles;
--interpreted-frames-native-stack: interpreted functions get a copy of the interpreter's entry
each, named in the map). The truth: V8's own call sites (new Error().stack)."""
import os
import re
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))


class Runtime:
    name = "node"
    title = "Node.js 20"

    def setup(self):
        return None if shutil.which("node") else "no node"

    def executable(self):
        return shutil.which("node")

    def start(self, tmp, exe):
        # malloc's arenas kept few: gcore writes even their reserved ranges into the core
        return [exe, "--perf-basic-prof", "--interpreted-frames-native-stack",
                os.path.join(HERE, "node_prog.js"), "120"], dict(os.environ, MALLOC_ARENA_MAX="2")

    def truth(self, tmp, stdout):
        return [[line[len("frame "):] for line in stdout.splitlines()
                 if line.startswith("frame ")]]

    def key(self, name):
        """V8's perf-map names, "JS:~NAME FILE:LINE:COL" (~ interpreted, ^ Sparkplug,
        * TurboFan; "Eval:" a script's own code) -> NAME@FILE:LINE as the truth spells it;
        builtins, stubs and C++ -> None."""
        if not name or name == "??":
            return ""
        m = re.match(r"^(?:JS|Eval):[~^+*]?(.*) (\S+):(\d+):\d+$", name)
        if m:
            return "%s@%s:%s" % (m.group(1), m.group(2), m.group(3))
        return None
