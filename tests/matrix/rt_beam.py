"""Erlang/OTP's BEAM (erlang-base) with its JIT and `+JPperf true` for the runtime matrix
(tests/matrix/README.md): jitmap_matrix.erl, a process spinning under outer/1, middle/1,
inner/1. Its frames are on a scheduler thread's stack only while that thread runs it: a tool's
snapshot that finds the scheduler between two slices (in C) is taken again (`tries`). The
truth: process_info(P, current_stacktrace)."""
import os
import re
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))


class Runtime:
    name = "beam"
    title = "Erlang/OTP BEAM (+JPperf true)"
    tries = 8

    def setup(self):
        for tool in ("erl", "erlc"):
            if not shutil.which(tool):
                return "no %s (erlang-base)" % tool
        return None

    # erlexec starts the emulator from BINDIR, and the emulator its port helpers
    beside = ("erlexec", "erl_child_setup", "inet_gethost", "heart", "epmd")

    def executable(self):
        """The emulator, erts-*/bin/beam.smp, which erl (a script) has erlexec start from
        BINDIR."""
        r = subprocess.run(["erl", "-noshell", "-eval",
                            'io:format("~s ~s~n", [code:root_dir(), '
                            'erlang:system_info(version)]), halt().'],
                           capture_output=True, text=True, timeout=120)
        self.root, version = r.stdout.split()[-2:]
        return os.path.join(self.root, "erts-" + version, "bin", "beam.smp")

    def start(self, tmp, exe):
        """What erl does: erlexec from BINDIR (the copy's for `deleted`)."""
        subprocess.run(["erlc", "-o", tmp, os.path.join(HERE, "jitmap_matrix.erl")], check=True,
                       timeout=120)
        bindir = os.path.dirname(exe)
        # Small reservations (the literal area's 1 GB, malloc's arenas): gcore writes even the
        # reserved, inaccessible ranges into the core.
        env = dict(os.environ, ROOTDIR=self.root, BINDIR=bindir, EMU="beam", PROGNAME="erl",
                   MALLOC_ARENA_MAX="2")
        return [os.path.join(bindir, "erlexec"), "+JPperf", "true", "+MIscs", "64",
                "-noshell", "-pa", tmp,
                "-run", "jitmap_matrix", "start"], env

    def truth(self, tmp, stdout):
        return [[line[len("frame "):] for line in stdout.splitlines()
                 if line.startswith("frame ")]]

    def key(self, name):
        """`$jitmap_matrix:spin/2` (the perf map) -> jitmap_matrix:spin/2; BEAM's own code
        (erts_beamasm:normal_exit/0 at the bottom of every process's stack, global::*) and the
        emulator's C -> None."""
        if not name or name == "??":
            return ""
        name = name.lstrip("$")
        if name.startswith("erts_beamasm:"):
            return None
        if re.match(r"^[a-z][\w@]*:[^ ]+/\d+$", name):
            return name
        return None
