"""LLVM 14's lli (MCJIT, which registers each object with GDB's JIT interface) for the runtime
matrix (tests/matrix/README.md): lli_prog.ll, four nested functions, the innermost asleep. The
truth: the functions the program said it entered (and has not left), innermost first."""
import os
import re
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))


class Runtime:
    name = "lli"
    title = "LLVM 14 lli (MCJIT)"

    def setup(self):
        return None if shutil.which("lli-14") else "no lli-14 (llvm-14)"

    def executable(self):
        return os.path.realpath(shutil.which("lli-14"))

    def start(self, tmp, exe):
        return [exe, "-jit-kind=mcjit", "-entry-function=jm_main",
                os.path.join(HERE, "lli_prog.ll")], None

    def truth(self, tmp, stdout):
        return [[m for m in reversed(re.findall(r"^enter (\w+)$", stdout, re.M))]]

    def key(self, name):
        """The program's own functions (jm_*) by their names; lli's and LLVM's are native."""
        if not name or name == "??":
            return ""
        return name if name.startswith("jm_") else None
