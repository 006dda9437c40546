"""CPython 3.13 (Debian 13's, scripts/setup-python.sh) with `-X perf` (a perf map; a trampoline
per Python call) for the runtime matrix (tests/matrix/README.md): py_prog.py, four nested
functions and a method, the innermost asleep. The truth: sys._current_frames()."""
import os
import re

import livestacks

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))


class Runtime:
    name = "python"
    title = "CPython 3.13 (-X perf)"

    def setup(self):
        self.python, why = livestacks.setup_cpython(TOP)
        return why

    def executable(self):
        return self.python

    def start(self, tmp, exe):
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        return [exe, "-X", "perf", os.path.join(HERE, "py_prog.py"), "120"], env

    def truth(self, tmp, stdout):
        return [[line[len("frame "):] for line in stdout.splitlines()
                 if line.startswith("frame ")]]

    def key(self, name):
        """The trampolines' names, "py::QUALNAME:FILE" -> QUALNAME:FILE; python3.13's own C
        functions -> None."""
        if not name or name == "??":
            return ""
        m = re.match(r"^py::(.+:/.*)$", name)
        return m.group(1) if m else None
