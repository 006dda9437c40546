"""The modes of jitmap-hostile (hostile.c) and what jitmap's commands must say about each: one
list for GDB's and LLDB's commands, checked by the hostile scenarios of
tests/debugger/scenarios.py (run by gdb.commands and lldb.commands). The GDB plugin's test
(tests/gdb/test_gdb_hostile.sh) checks the plugin's own words.

Each mode's `problem` is a regular expression that the commands' answers (`jitmap status` /
`stackmap status` and the warnings of the other commands) must match, with {entry}, {image}
and {stackmap} replaced by the addresses the program printed for the mode: it names the
entry, where, and what is wrong. None: an entry the commands rightly say nothing about (no
stackmap, nothing to read), where only survival and the good entry's values are checked.
"""
import os
import re

PROGRAM = os.path.join("tests", "jitmap-hostile")

# The good function beside every mode: record 5 in good_fn, rbx = 4242 (rdi caller-saved).
GOOD = {"record": 5, "rbx": 4242, "function": "good_fn"}
# bt from the breakpoint in hostile_stop, as function names in order.
FRAMES = ["hostile_stop", "good_fn", "run_jit", "main"]


class Mode:
    def __init__(self, name, problem=None, stops=1, good=True, hook_stop=False,
                 lldb_loses_stack=False):
        self.name = name
        self.problem = problem
        self.stops = stops          # 2: hostile_stop(1), then hostile_stop(2)
        self.good = good            # whether good_fn's record can be read at all
        self.hook_stop = hook_stop  # GDB stops in __jit_debug_register_code first
        # LLDB 16's JIT loader places the image over the program's own code, and LLDB then
        # names no frame and unwinds none past frame 0, with or without jitmap.
        self.lldb_loses_stack = lldb_loses_stack


NOT_READABLE = r" is not readable: .*0xdead00000000"
MODES = [
    Mode("garbage", r"JIT entry {entry}: image at {image}: offset 0x0: not an ELF file"),
    Mode("wild-image", r"JIT entry {entry}: image at 0xdead00000000 \(4096 bytes\)" + NOT_READABLE),
    Mode("zero-size", r"JIT entry {entry}: empty image \(address {image}, 0 bytes\)"),
    Mode("truncated", r"JIT entry {entry}: image at {image}: offset 0x28: truncated: the section "
         r"header table \(7 entries at 0x1b8\) ends past the end of the file \(0x1c0 bytes\)"),
    Mode("shnum", r"JIT entry {entry}: image at {image}: offset 0x3a: section header size 0 "
         r"\(ELF64's is 64\)"),
    Mode("wrap"),
    Mode("wild-sections", r"JIT entry {entry}: \.llvm_stackmaps at 0x10 is 1099511627776 bytes, "
         r"over the 256 MiB limit"),
    Mode("bad-symbols"),
    Mode("stackmap-counts", r"JIT entry {entry}: \.llvm_stackmaps at {stackmap}: offset 0x4: "
         r"function count 2147483647 overruns the section: 51539607528 bytes needed, 48 left"),
    Mode("stackmap-version", r"JIT entry {entry}: \.llvm_stackmaps at {stackmap}: offset 0x0: "
         r"unknown stackmap version 9 \(jitmap reads versions 1, 2 and 3\)"),
    Mode("self-text", lldb_loses_stack=True),
    Mode("overlap"),
    Mode("unregister-unknown"),
    Mode("action-flag", hook_stop=True),
    Mode("huge", r"JIT entry {entry}: image of 1152921504606846976 bytes at {image} is larger "
         r"than the 256 MiB limit; not read"),
    Mode("version", r"the JIT descriptor at 0x[0-9a-f]+ has version 7 \(only version 1 exists\)",
         good=False),
    Mode("change", stops=2),
    Mode("unregister", stops=2),
    Mode("churn", stops=2),
    Mode("cycle", r"the JIT entry list loops: entry {entry} comes again after 3 entries"),
    Mode("self", r"the JIT entry list loops: entry {entry} comes again after 2 entries"),
    Mode("wild-next", r"JIT entry at 0xdead00000000" + NOT_READABLE),
    Mode("long", r"the JIT entry list holds more than 100000 entries \(the limit\); the rest is "
         r"not read"),
]
BY_NAME = {m.name: m for m in MODES}

# Every mode a process can hold at once with one stop and a readable list, the cycle last
# (hostile.c refuses anything after a mode that ends the list).
TOGETHER = ["garbage", "wild-image", "zero-size", "truncated", "shnum", "wrap", "wild-sections",
            "bad-symbols", "stackmap-counts", "stackmap-version", "self-text", "overlap",
            "unregister-unknown", "huge", "cycle"]


def truth(output, mode, field):
    """FIELD of the program's first line "jitmap-hostile: mode MODE ... FIELD=VALUE", or None."""
    for line in output.splitlines():
        if line.startswith("jitmap-hostile: mode %s " % mode):
            for kv in line.split()[3:]:
                if kv.startswith(field + "="):
                    return kv.split("=", 1)[1]
    return None


def problem_re(mode, output, together=False):
    """The mode's problem as a compiled expression, its addresses filled in from `output`
    (the program's truth lines); None when there is nothing to say. `together`: the mode ran
    after others, so a cycle comes back after more entries."""
    m = BY_NAME[mode]
    if m.problem is None:
        return None
    pattern = m.problem
    if together:
        pattern = re.sub(r"after \d+ entries", r"after [0-9]+ entries", pattern)
    fields = {}
    for f in ("entry", "image", "stackmap"):
        if "{%s}" % f in m.problem:
            v = truth(output, mode, f)
            if v is None:
                raise ValueError("no %s= for mode %s in the program's output" % (f, mode))
            fields[f] = re.escape(v)
    return re.compile(pattern.format(**fields))


def frame_names(bt_text):
    """The function names of a backtrace, GDB's (`#1  0x... in good_fn ()`) or LLDB's
    (`frame #1: 0x... JIT(0x...)`good_fn + 20`), innermost first."""
    names = []
    for line in bt_text.splitlines():
        m = re.match(r"\s*\*?\s*frame #\d+: 0x[0-9a-f]+ [^`]*`([A-Za-z_][\w]*)", line)
        if not m:
            m = re.match(r"#\d+\s+(?:0x[0-9a-f]+ in )?([A-Za-z_][\w]*) ", line)
        if m:
            names.append(m.group(1))
    return names


def ends_with_frames(names, frames=FRAMES):
    """Whether `frames` appear in `names` in order, consecutively, from the first of them."""
    if frames[0] not in names:
        return False
    i = names.index(frames[0])
    return names[i:i + len(frames)] == frames
