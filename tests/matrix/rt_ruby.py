"""Ruby 3.3 with YJIT in the runtime matrix (tests/matrix/README.md): Debian's ruby3.3 source built
with YJIT (scripts/setup-ruby.sh; Debian builds it without), running ruby_yjit.rb as
`ruby --yjit --yjit-call-threshold=1 --yjit-perf`: three threads (calls through Array#each
blocks, plain nested calls, a spinning loop), each printing its own stack as Ruby sees it
(caller_locations: Thread#backtrace_locations of the thread itself), innermost first.

YJIT's perf map (--yjit-perf) has one line per compiled block, named `[JIT] CLASS#LABEL` with
the class of self when the block was compiled and the ISEQ's label, Ruby's own spelling of the
frame (`[JIT] Object#block in each_middle`); key() takes the label.

Only the frames of Ruby code are in the truth (Thread::Queue#pop is Ruby code in 3.3, and YJIT
compiles it): a C method's frame (Array#each, whose label in Ruby 3.3 is "each") is rb_ary_each
to a native tool, C code of the runtime (key None), and is left out. A Ruby call from YJIT's code to YJIT's code is a jump, not a native call: such frames
are on Ruby's stack of control frames only, and every tool counts them missing.
"""
import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))

# The threads of ruby_yjit.rb, in the order of truth()
THREADS = ("each", "plain", "spin")
# Ruby's labels of the C methods the program calls with its threads' frames below them
C_METHODS = {"each"}
OPTIONS = ("--yjit", "--yjit-call-threshold=1", "--yjit-perf")


def parse_stacks(stdout):
    """{thread name: [label, ...] innermost first} of the program's `stack NAME: A;B;...` lines."""
    stacks = {}
    for line in stdout.splitlines():
        m = re.match(r"^stack (\w+): (.*)$", line)
        if m:
            stacks[m.group(1)] = m.group(2).split(";") if m.group(2) else []
    return stacks


def map_label(name):
    """`[JIT] Object#block in f` -> `block in f`; an anonymous class or singleton's
    `[JIT] #<Class:0x...>#f` -> `f`; None for any other name."""
    m = re.match(r"^\[JIT\] (?:#<[^>]*>|[^#]*)#(.+)$", name or "")
    return m.group(1) if m else None


class Runtime:
    name = "ruby"
    title = "Ruby 3.3 YJIT (--yjit-perf)"
    conditions = ("live", "core", "container", "deleted")
    ready_timeout = 60
    script = os.path.join(HERE, "ruby_yjit.rb")

    def setup(self):
        try:
            r = subprocess.run([os.path.join(TOP, "scripts", "setup-ruby.sh")],
                               capture_output=True, text=True, timeout=3600)
        except subprocess.TimeoutExpired:
            return "no Ruby 3.3 with YJIT (scripts/setup-ruby.sh took over an hour)"
        if r.returncode != 0 or not r.stdout.strip():
            return "no Ruby 3.3 with YJIT (scripts/setup-ruby.sh: %s)" % (
                r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
        self.ruby = r.stdout.strip().splitlines()[-1]
        return None

    def executable(self):
        return self.ruby

    def start(self, tmp, exe):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("RUBY", "GEM_", "BUNDLE"))}
        return [exe] + list(OPTIONS) + [self.script], env

    def truth(self, tmp, stdout):
        stacks = parse_stacks(stdout)
        return [[{label} for label in stacks.get(t, []) if label not in C_METHODS]
                for t in THREADS]

    def key(self, name):
        if name in (None, "??", ""):
            return ""
        label = map_label(name)
        if label is not None:
            return label
        return None  # the runtime's C code, libc's
