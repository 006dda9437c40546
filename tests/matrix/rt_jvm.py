"""OpenJDK 17's HotSpot for the runtime matrix (tests/matrix/README.md): MatrixHot.java, run
as perf's users run it (-XX:+PreserveFramePointer), its perf map written by
`jcmd PID Compiler.perfmap` once it is ready. The truth: jstack's stack of thread "main"."""
import os
import re
import shutil
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))


class Runtime:
    name = "jvm"
    title = "OpenJDK 17 HotSpot"

    def setup(self):
        for tool in ("java", "javac", "jcmd", "jstack"):
            if not shutil.which(tool):
                return "no %s (openjdk-17-jdk-headless)" % tool
        return None

    def executable(self):
        return os.path.realpath(shutil.which("java"))

    def start(self, tmp, exe):
        classes = os.path.join(tmp, "classes")
        subprocess.run(["javac", "-d", classes, os.path.join(HERE, "MatrixHot.java")],
                       check=True, timeout=300)
        # Small reservations (heap, code cache, class space; malloc's arenas, as containers
        # often set): gcore writes even the reserved, inaccessible ranges into the core.
        env = dict(os.environ, MALLOC_ARENA_MAX="2")
        return [exe, "-Xms16m", "-Xmx64m", "-XX:+UseSerialGC", "-XX:-UsePerfData",
                "-XX:ReservedCodeCacheSize=32m", "-XX:CompressedClassSpaceSize=32m",
                "-XX:+PreserveFramePointer", "-cp", classes, "MatrixHot", "120"], env

    def prepare(self, pid, tmp):
        time.sleep(0.5)  # "ready" comes just before the last call: let it reach Thread.sleep
        for argv, out in ((["jcmd", str(pid), "Compiler.perfmap"], "perfmap.out"),
                          (["jstack", str(pid)], "jstack.out")):
            r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
            with open(os.path.join(tmp, out), "w") as f:
                f.write(r.stdout + r.stderr)

    def truth(self, tmp, stdout):
        with open(os.path.join(tmp, "jstack.out")) as f:
            text = f.read()
        m = re.search(r'^"main" .*\n(?:\s+java\.lang\.Thread\.State.*\n)?((?:\s+(?:at|-) .*\n)*)',
                      text, re.M)
        if not m:
            return [[]]
        return [re.findall(r"^\s+at ([\w$.<>]+)\(", m.group(1), re.M)]

    def key(self, name):
        """The perf map's "RET CLASS.METHOD(ARGS)" -> CLASS.METHOD, as jstack spells it;
        HotSpot's stubs and the interpreter ("Interpreter", "StubRoutines (1)") -> None."""
        if not name or name == "??":
            return ""
        m = re.match(r"^\S+ ([\w$]+(?:\.[\w$<>]+)+)\(", name)
        return m.group(1) if m else None
