"""PostgreSQL 15's LLVM JIT for the runtime matrix (tests/matrix/README.md): pg_prog.py's server
and a backend blocked in pg_sleep called from the query's JIT-compiled targetlist. The process
read is that backend. The truth: the query's JIT-compiled expression, one frame, as PostgreSQL
names and registers it (llvmjit's "evalexpr_GENERATION_N", the first generation in a fresh
backend); the backend's C frames around it are native."""
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PG_BIN = "/usr/lib/postgresql/15/bin"


class Runtime:
    name = "postgres"
    title = "PostgreSQL 15 LLVM JIT"

    def setup(self):
        if not os.path.exists(os.path.join(PG_BIN, "postgres")) or \
                not os.path.exists("/usr/lib/postgresql/15/lib/llvmjit.so"):
            return "no PostgreSQL 15 with its LLVM JIT (postgresql-15)"
        if not shutil.which("psql"):
            return "no psql"
        return None

    def executable(self):
        return os.path.join(PG_BIN, "postgres")

    def start(self, tmp, exe):
        if os.geteuid() == 0:
            os.chmod(tmp, 0o755)
        return [sys.executable, os.path.join(HERE, "pg_prog.py"), exe, tmp], None

    def target(self, stdout):
        """The backend's PID, as the program's namespace sees it."""
        m = re.search(r"^target (\d+)$", stdout, re.M)
        return int(m.group(1)) if m else None

    def truth(self, tmp, stdout):
        return [[{"evalexpr_0_%d" % n for n in range(8)}]]

    def key(self, name):
        if not name or name == "??":
            return ""
        return name if re.match(r"^(evalexpr|deform)_\d+_\d+$", name) else None
