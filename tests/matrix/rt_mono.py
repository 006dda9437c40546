"""Mono for the runtime matrix (tests/matrix/README.md): Debian's Mono 6.8
(scripts/setup-mono.sh), tests/runtimes/mono_nested.cs run as Mono's users debug it,
`MONO_XDEBUG=gdb mono --debug --jitmap` (xdebug registers its code through GDB's JIT interface,
--jitmap writes /tmp/perf-PID.map). Two threads block in Monitor.Wait under nested methods.

The truth: Mono's own thread dump (SIGQUIT, "Full thread dump" on its stdout), taken in
prepare() once both threads wait, one stack per thread; the program's methods in it are checked
against each thread's own Environment.StackTrace (the files mono_nested.cs writes).

Names are compared as one key across Mono's spellings (tests/lib/monodump.py): the dump's
`JitmapMono.Block (string)`, the perf map's `JitmapMono:Block (string)` and the AOT image's
symbol `JitmapMono_Block_string` (mscorlib.dll.so: `System_Threading_Monitor_Wait_object`) are
all `JitmapMono_Block_string`.

deleted: /usr/bin/mono-sgen is stripped and its JIT descriptor's symbol is in its debug file
alone, found by .gnu_debuglink under /usr/lib/debug followed by the executable's folder. The
copy's folder is the work directory, so its debug file is linked where .gnu_debuglink finds it
beside the copy (bin/.debug/mono-sgen), as /usr/lib/debug/usr/bin/ is for /usr/bin/mono-sgen.
And Mono started from DIR/bin, when DIR/lib/mono/4.5 exists (the copy's tree links DIR/lib to
/usr/lib), takes DIR/etc for its configuration (/usr/bin's falls back to /etc): without
DIR/etc/mono/config's dllmap it finds no System.Native, so the copy's tree links DIR/etc to /etc
(the tree's own link to /usr/etc has no mono/).
"""
import os
import re
import shutil
import signal
import subprocess
import time

from monodump import dump_threads, key

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(os.path.dirname(HERE), "runtimes", "mono_nested.cs")
DEBUG_DIR = "/usr/lib/debug"


def names(stack):
    """The truth's frames: each its key, and its key without the argument types where no other
    frame of the stack has that method's name (GDB's names from the DWARF of Mono's JIT entries
    have no arguments: `JitmapMono:Block`); Monitor.Wait (object) and (object,int,bool) keep
    their argument types, which alone tell them apart."""
    bare = [key(re.sub(r" \([^()]*\)$", "", k.method)) for k in stack]
    return [{k, b} if bare.count(b) == 1 else str(k) for k, b in zip(stack, bare)]


def program_methods(keys):
    """JitmapMono_Block_string -> JitmapMono_Block: the program's methods of a stack (the
    stack trace names the arguments, the dump their types alone)."""
    out = []
    for k in keys:
        m = re.match(r"^(JitmapMono(?:_Main_c_AnonStorey0)?_[A-Za-z0-9]+)", k)
        if m:
            out.append(m.group(1))
    return out


class Runtime:
    name = "mono"
    title = "Mono 6.8 (xdebug, --jitmap)"
    # (main thread's marker, worker's): the methods under which each thread blocks
    MARKERS = ("JitmapMono_Outer_string", "JitmapMono_WorkerOuter_string")

    def setup(self):
        for tool in ("mono", "mcs"):
            if not shutil.which(tool):
                return "no %s (scripts/setup-mono.sh installs Mono)" % tool
        if not os.path.exists(self.debug_file()):
            return "no debug file of mono-sgen (mono-runtime-dbg; scripts/setup-mono.sh)"
        return None

    def executable(self):
        return os.path.realpath(shutil.which("mono"))

    def debug_file(self):
        return DEBUG_DIR + self.executable()

    def start(self, tmp, exe):
        program = os.path.join(tmp, "mono_nested.exe")
        subprocess.run(["mcs", "-debug", "-out:" + program, PROGRAM], check=True,
                       capture_output=True, timeout=120)
        if exe != self.executable():  # deleted: the copy's debug file and etc/ (docstring)
            bindir = os.path.dirname(exe)
            os.makedirs(os.path.join(bindir, ".debug"), exist_ok=True)
            os.symlink(self.debug_file(), os.path.join(bindir, ".debug", os.path.basename(exe)))
            etc = os.path.join(os.path.dirname(bindir), "etc")
            if not os.path.exists(os.path.join(etc, "mono", "config")):
                if os.path.islink(etc):  # the mirror's link to /usr/etc (no mono/ there)
                    os.unlink(etc)
                os.symlink("/etc", etc)
        self.truth_path = os.path.join(tmp, "truth")
        return [exe, "--debug", "--jitmap", program, self.truth_path], \
            dict(os.environ, MONO_XDEBUG="gdb")

    def prepare(self, pid, tmp):
        """Mono's thread dump, once both threads wait in Monitor.Wait (the main thread goes on
        from writing its stack trace into it): SIGQUIT again until the dump shows them there.
        The dump stops the threads for a moment only; they go on waiting where they were."""
        out = os.path.join(tmp, "stdout")
        deadline = time.time() + 30
        self.dump = []
        while time.time() < deadline:
            time.sleep(0.3)
            with open(out, errors="replace") as f:
                before = f.read().count("Full thread dump:")
            os.kill(pid, signal.SIGQUIT)
            end = time.time() + 10
            while time.time() < end:
                time.sleep(0.1)
                with open(out, errors="replace") as f:
                    text = f.read()
                threads = dump_threads(text)
                if text.count("Full thread dump:") > before and \
                        all(any(m in fs for _, fs in threads) for m in self.MARKERS):
                    break
            stacks = [next((fs for _, fs in threads if m in fs), []) for m in self.MARKERS]
            if all(s and "Monitor_wait" in s[0] for s in stacks):
                self.dump = stacks
                return

    def truth(self, tmp, stdout):
        """The dump's stacks of the two threads; one whose program methods are not those of the
        thread's own Environment.StackTrace is left empty (the test then fails)."""
        stacks = []
        for stack, path in zip(self.dump or [[], []],
                               (self.truth_path, self.truth_path + ".worker")):
            try:
                with open(path) as f:
                    trace = [key(re.sub(r" \[0x[0-9a-f]+\] in .*$", "", line.strip()[3:]))
                             for line in f if line.strip().startswith("at ")]
            except OSError:
                trace = []
            # the program's methods alone: the trace was taken in Block before Monitor.Wait
            if not stack or program_methods(stack) != program_methods(trace):
                stacks.append([])
            else:
                stacks.append(names(stack))
        return stacks

    def key(self, name):
        """A tool's name -> its key: a method of the perf map ("JitmapMono:Block (string)",
        "(wrapper managed-to-native) ...") or of an AOT image (symbols spelled from the
        namespace, "System_Threading_Monitor_Wait_object", or "wrapper_..."); the runtime's C
        (mono_*, ves_icall_*) and its libraries' (lowercase or _-prefixed) -> None."""
        if not name or name == "??":
            return ""
        if " (" in name or name.startswith("(wrapper ") or re.match(r"^[A-Z]", name) or \
                name.startswith("wrapper_"):
            return key(name)
        return None
