#!/usr/bin/env python3
"""test_core.py: the debugger-neutral half of gdb-scripts/jitmap, in plain Python (no GDB).

    tests/gdb-commands/test_core.py BUILD_DIR

Imports native, discovery, stackmaps, model, format and names without GDB (so none of them
may import gdb: the LLDB front end shares them), and drives them against a fake process: a
descriptor list in fake memory whose entry is the hand-written JIT's real registered image
(`jitmap-handjit --image`). Its live stackmap is not in the fake memory, so discovery falls
back to the registered copy and says so. Then: records found by PC, evaluated through a fake
frame (a callee-saved register, a stack slot, a caller-saved register the frame cannot give),
text and JSON renderings, the names API, the command table (commands.py) through a third
Debugger that is neither GDB nor LLDB, in both spellings, hostile lists (a cycle, a wild
pointer, a huge size). Exits 0 when all pass, 1 when any fails, 77 when the programs are not
built.
"""
import ctypes
import os
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "debugger"))
import harness as T  # noqa: E402  (puts gdb-scripts/ on sys.path)
from harness import check  # noqa: E402
import jsoncontract  # noqa: E402

if len(sys.argv) != 2:
    sys.exit("usage: test_core.py BUILD_DIR")
ENV = T.Env(sys.argv[1], "jitmap-core-")
os.environ["JITMAP_LIBRARY"] = ENV.library
if not os.path.exists(ENV.handjit) or not os.path.exists(ENV.library):
    print("core: skipped: jitmap-handjit or libjitmap not built")
    sys.exit(77)

from jitmap import discovery, format as fmt, model, names, native, stackmaps  # noqa: E402

assert "gdb" not in sys.modules, "a debugger-neutral module imported gdb"
RUN = T.Runner("core", ())


# -- The image and its truth --

image_path = os.path.join(ENV.work, "image.o")
out = subprocess.run([ENV.handjit, "--image", image_path], stdout=subprocess.PIPE, check=True).stdout.decode()
image = open(image_path, "rb").read()
truth = {}
for line in out.splitlines():
    if line.startswith("jitmap-handjit: record "):
        kv = dict(x.split("=", 1) for x in line.split()[2:])
        truth[int(kv["id"])] = kv

DESC, ENTRY, IMAGE = 0x1000, 0x2000, 0x100000
BAD = 0x3000


class FakeMemory:
    def __init__(self):
        self.regions = {}

    def put(self, addr, data):
        self.regions[addr] = bytes(data)

    def read(self, addr, size):
        for base, data in self.regions.items():
            if base <= addr and addr + size <= base + len(data):
                return data[addr - base:addr - base + size]
        raise discovery.ReadError("no fake memory at 0x%x" % addr)


class Access:
    def __init__(self, mem):
        self.mem = mem

    def read(self, addr, size):
        return self.mem.read(addr, size)

    def jit_descriptors(self):
        return [(DESC, "the fake")]

    def loaded_objects(self):
        return []


def entry(nxt, prev, addr, size):
    return struct.pack("<QQQQ", nxt, prev, addr, size)


def process(extra=None):
    mem = FakeMemory()
    mem.put(DESC, struct.pack("<IIQQ", 1, 0, 0, ENTRY))
    mem.put(IMAGE, image)
    if extra is None:
        mem.put(ENTRY, entry(0, 0, IMAGE, len(image)))
    else:
        extra(mem)
    return Access(mem)


# -- Discovery: the registered copy stands in for the live section --

d = discovery.Discovery()
catalog = d.scan(process())


def discovery_registered_copy():
    check(len(catalog.stackmaps) == 1, "one stackmap, got %d" % len(catalog.stackmaps))
    sm = catalog.stackmaps[0]
    check(sm.num_records == 2, "two records")
    check(any("registered copy" in n for n in sm.notes), "note about the registered copy: %s" % sm.notes)
    problems = [p for s in catalog.sources for p in s.problems]
    check(any("not readable" in p for p in problems), "problem saying the live section is not readable")
    names_seen = sorted(native.text(f.name) for _, f in sm.functions())
    check(names_seen == ["handjit_inner", "handjit_outer"], "function names %s" % names_seen)


RUN.test(discovery_registered_copy)


# -- Records by PC, evaluated in a fake frame --

inner = truth[1002]
pc = int(inner["pc"], 16)
sp = int(inner["sp"], 16)


class Frame:
    level = 1
    function = "handjit_inner"

    def __init__(self):
        self.pc = pc
        self.regs = {3: int(inner["local0"]), 7: sp}
        self.stack = struct.pack("<QQQ", 0, int(inner["local1"]), int(inner["local2"]))

    def read_register(self, regno, name, size):
        if regno == 5:
            raise model.Unavailable("caller-saved, and not saved in frame 1")
        if regno not in self.regs:
            raise model.Unavailable("no such register in the fake")
        return self.regs[regno].to_bytes(8, "little")[:size]

    def read_memory(self, addr, size):
        if sp <= addr and addr + size <= sp + len(self.stack):
            return self.stack[addr - sp:addr - sp + size]
        raise model.Unavailable("Cannot access memory at address 0x%x" % addr)


want = [int(inner["local%d" % i]) for i in range(6)]


def records_by_pc():
    report = model.describe(catalog, Frame())
    obj = report.obj
    check(report.num_records == 1 and obj["record"]["match"] == "exact",
          "record 1002 found at its PC")
    check(obj["record"]["id"] == 1002, "record id")
    vals = [l["value"] for l in obj["locations"]]
    check(vals == want, "values %s, truth %s" % (vals, want))
    check(obj["locations"][1]["address"] == "0x%x" % (sp + 8), "indirect address")
    check(jsoncontract.loads(report.json_text, "frame") == obj, "the library's JSON")
    text = report.text(model.TEXT_FRAME)
    check("record 1002 at 0x%x (handjit_inner+" % pc in text, "text header:\n" + text)

    # A caller-saved register: unavailable, with the frame's reason, never a number.
    rec = catalog.lookup(pc)[0][1]
    rec.contents.locations[0].dwarf_reg = 5  # rdi, for this check only (the copy is ours)
    bad = model.describe(catalog, Frame())
    loc0 = bad.obj["locations"][0]
    check(loc0["value"] is None and "caller-saved" in loc0["error"], "rdi unavailable: %s" % loc0)
    check("<unavailable: register rdi not available: caller-saved" in bad.text(), "text of rdi")
    rec.contents.locations[0].dwarf_reg = 3

    # Not at a record: the nearest, and how far.
    f = Frame()
    f.pc = pc + 3
    f.return_address = False
    m = model.describe(catalog, f).obj
    check(m["record"] is None and m["nearest"] and m["nearest"][0]["distance"] == -3 and
          "3 bytes before" in m["error"], "no-record message: %s" % m.get("error"))


RUN.test(records_by_pc)


# -- Names --

def names_api():
    names.name_locations(1002, ["vm_acc", None, "slot"])
    names.add_namer(lambda rid, fn, n: 1 / 0)  # a broken namer is ignored
    named = model.describe(catalog, Frame()).obj
    check(named["locations"][0].get("name") == "vm_acc" and "name" not in named["locations"][1]
          and named["locations"][2].get("name") == "slot", "names API")
    names.clear()


RUN.test(names_api)


# -- The command table, through a third Debugger (neither GDB nor LLDB) --

from jitmap import commands  # noqa: E402

assert "gdb" not in sys.modules and "lldb" not in sys.modules, "commands imported a debugger"


class FakeDebugger:
    """commands.Debugger over the fake process, its frame 1 at record 1002."""

    def __init__(self, name):
        self.name = name
        self.access = process()
        self.stop = 1
        self.breaks = []

    def check_process(self):
        return "fake"

    def stop_id(self):
        return self.stop

    def jit_descriptors(self):
        return self.access.jit_descriptors()

    def loaded_objects(self):
        return []

    def read(self, addr, size):
        return self.access.read(addr, size)

    def arch_name(self):
        return "x86_64-pc-linux-gnu" if self.name == "lldb" else "i386:x86-64"

    def selected_frame(self):
        return Frame()

    def frame(self, level):
        if level != 1:
            raise commands.CommandError("jitmap: there is no frame %d" % level)
        return Frame()

    def frames(self, limit):
        return iter([Frame()])

    def disassemble(self, addr, count):
        return []

    def function_at(self, addr):
        return None

    def break_at(self, pc):
        self.breaks.append(pc)
        return len(self.breaks)

    def watch_registrations(self):
        pass


def run(dbg, key, opts=(), args=()):
    """Run a table command as the user would type it in `dbg`; (lines, warnings) or the
    error sentence."""
    line = commands.TABLE[key].line(dbg.name, opts, args)
    argv = line.split()[2:]  # "info stackmap ..." / "stackmap info ..."
    try:
        out = commands.TABLE[key].run(dbg, argv)
        return out.lines, out.warnings
    except commands.CommandError as e:
        return str(e)


def command_table():
    """The table's commands in both spellings, through FakeDebugger."""
    answers = {}
    for debugger in ("gdb", "lldb"):
        commands.SESSION.forget()
        commands.SESSION.watched.clear()
        dbg = FakeDebugger(debugger)
        lines, _ = run(dbg, "info", ["json"], [1])
        info = jsoncontract.loads(lines[0], "frame")
        check(info["record"]["id"] == 1002 and [l["value"] for l in info["locations"]] == want,
              "%s: info --json 1 through the table: %s" % (debugger, info.get("record")))
        answers[debugger] = (lines, run(dbg, "info", [], [1]), run(dbg, "list", ["json"]),
                             run(dbg, "gc-roots", ["json"]), run(dbg, "status"))
        # Errors name the command as this debugger spells it.
        name = commands.TABLE["info"].name(debugger)
        err = run(dbg, "info", [], [7])
        check(err == "jitmap: there is no frame 7", "%s: bad frame: %r" % (debugger, err))
        try:
            commands.TABLE["info"].run(dbg, ["-bogus"])
            check(False, "%s: -bogus accepted" % debugger)
        except commands.CommandError as e:
            check(str(e).startswith(name + ": unknown option -bogus (options: "), "%s: %s" % (debugger, e))
        try:
            commands.TABLE["info"].run(dbg, commands.TABLE["info"].line(
                debugger, ["statepoint", "no-statepoint"]).split()[2:])
            check(False, "%s: both statepoint options accepted" % debugger)
        except commands.CommandError as e:
            check("exclude each other" in str(e), "%s: %s" % (debugger, e))
        # Breakpoints by record ID: one at each PC with the ID, then listed.
        lines, _ = run(dbg, "break", [], [1002])
        check(dbg.breaks == [pc] and "record 1002 at 0x%x (handjit_inner): breakpoint 1" % pc in lines[0],
              "%s: break 1002: %s %s" % (debugger, dbg.breaks, lines))
        lines, _ = run(dbg, "break")
        check(lines == ["record 1002: 0x%x" % pc], "%s: break list: %s" % (debugger, lines))
        # The catalog is kept while the stop is the same, read again after it changes.
        first = commands.SESSION.get(dbg)
        check(commands.SESSION.get(dbg) is first, "%s: catalog kept at the same stop" % debugger)
        dbg.stop += 1
        check(commands.SESSION.get(dbg) is not first, "%s: catalog read again" % debugger)
        # Help: each debugger's spelling, naming the twin.
        h = commands.TABLE["gc-roots"].help(debugger)
        other = "stackmap gc-roots" if debugger == "gdb" else "info gc-roots"
        check(("[-all]" if debugger == "gdb" else "[--all]") in h and other in h,
              "%s: help of gc-roots:\n%s" % (debugger, h))
    check(answers["gdb"] == answers["lldb"], "the same answers in both spellings")
    err = run(FakeDebugger("lldb"), "statepoints", [], ["all", "--ids", "5,x"])
    check(err == "stackmap statepoints: '5,x' is not a list of numbers", "statepoints: %r" % err)
    lines = commands.TABLE["statepoints"].run(FakeDebugger("lldb"), ["none", "--ids", "7, 9"]).lines
    check(lines[0].endswith(": none.") and lines[1].endswith(": 7,9."), "statepoints: %s" % lines)
    check(commands.SESSION.settings.statepoints() == (native.STATEPOINT_NONE, (7, 9)),
          "statepoint settings %s" % (commands.SESSION.settings.statepoints(),))
    commands.SESSION.settings.mode, commands.SESSION.settings.ids = "auto", ()
    check(not [c for c in commands.TABLE.values() if c.names["gdb"] and c.names["lldb"] and
               c.name("gdb") == c.name("lldb")], "names differ per debugger")


RUN.test(command_table)


# -- Hostile lists --


def cycle(mem):
    mem.put(ENTRY, entry(ENTRY + 0x40, 0, IMAGE, len(image)))
    mem.put(ENTRY + 0x40, entry(ENTRY, ENTRY, IMAGE, len(image)))


def wild(mem):
    mem.put(ENTRY, entry(0xdead0000, 0, IMAGE, len(image)))


def huge(mem):
    mem.put(ENTRY, entry(ENTRY + 0x40, 0, IMAGE, len(image)))
    mem.put(ENTRY + 0x40, entry(0, ENTRY, IMAGE, 1 << 60))


def garbage(mem):
    mem.put(ENTRY, entry(ENTRY + 0x40, 0, IMAGE, len(image)))
    mem.put(BAD, b"\x7fELF" + b"\x5a" * 200)
    mem.put(ENTRY + 0x40, entry(0, ENTRY, BAD, 204))


def hostile_lists():
    """Hostile descriptor lists: a cycle, a wild pointer, a huge size, a garbage image."""
    for name, fn, want_problem, want_maps in (("cycle", cycle, "loops", 2), ("wild", wild, "not readable", 1),
                                             ("huge", huge, "larger than", 1), ("garbage", garbage, "offset", 1)):
        c = discovery.Discovery().scan(process(fn))
        all_problems = c.problems + [p for s in c.sources for p in s.problems]
        check(any(want_problem in p for p in all_problems), "%s: problem %r in %s" % (name, want_problem, all_problems))
        check(len(c.stackmaps) == want_maps, "%s: %d stackmaps kept" % (name, len(c.stackmaps)))


RUN.test(hostile_lists)


# -- verify's frame checks beyond x86-64 --


def elf_section(path, want):
    """The bytes of section `want` of an ELF64 file of either byte order."""
    data = open(path, "rb").read()
    e = ">" if data[5] == 2 else "<"
    shoff, = struct.unpack_from(e + "Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from(e + "HHH", data, 0x3a)

    def sh(i):
        name, _t, _f, _a, off, size = struct.unpack_from(e + "IIQQQQ", data, shoff + i * shentsize)
        return name, off, size
    stroff = sh(shstrndx)[1]
    for i in range(shnum):
        name, off, size = sh(i)
        if data[stroff + name:data.index(b"\0", stroff + name)].decode() == want:
            return data[off:off + size]
    raise KeyError(want)


class CrossFrame:
    """A frame of verify's: registers by DWARF number, in the target's byte order."""

    def __init__(self, regs, big, pc, arch, level=1):
        self.regs, self.big, self.level = regs, big, level
        self.pc, self.arch, self.function = pc, arch, None

    def read_register(self, regno, name, size):
        if regno not in self.regs:
            raise model.NotSaved()
        return model.Recovered(struct.pack(">Q" if self.big else "<Q", self.regs[regno]))

    def read_memory(self, addr, size):
        raise model.Unavailable("no memory")


class FileOnly:
    """A discovery access object for one loaded file and no readable memory: its stackmap
    comes from the file."""

    def __init__(self, path, section_address):
        self.objects = [(path, section_address)]

    def read(self, addr, size):
        raise discovery.ReadError("no memory")

    def jit_descriptors(self):
        return []

    def loaded_objects(self):
        return self.objects


def verify_cross():
    """verify's frame-size and stack-slot checks on AArch64 and s390x (tests/fixtures/cross):
    the caller's SP at record 200 of cx_saves is SP + its stack size (no pushed return
    address; s390x's CFA is 160 above it). A frame whose unwound caller SP is 8 bytes off, and
    one whose frame pointer puts a stack slot outside the frame, must each be a problem."""
    from jitmap import report
    fixtures = os.path.join(os.path.dirname(HERE), "fixtures", "cross")
    lib = native.lib()
    for arch, name, big, base_reg, size in ((native.ARCH_AARCH64, "aarch64", False, 29, 64),
                                            (native.ARCH_S390X, "s390x", True, 15, 176)):
        path = os.path.join(fixtures, "cross-%s.elf" % name)
        img = lib.jitmap_image_open_file(path.encode(), None)
        addr, length = native.c_u64(), native.c_u64()
        check(img and lib.jitmap_image_stackmap_section(img, ctypes.byref(addr),
                                                        ctypes.byref(length)) == 0,
              "%s: no stackmap section" % name)
        lib.jitmap_image_free(img)
        disc = discovery.Discovery()  # owns the process: kept while the catalog is used
        catalog = disc.scan(FileOnly(path, addr.value))
        check(len(catalog.stackmaps) == 1, "%s: stackmap not read: %s" % (
            name, report.problems(catalog)))
        sm = catalog.stackmaps[0]
        rec = sm.find_id(200)[0]
        check(sm.record_function(rec).stack_size == size, "%s: stack size" % name)
        SP = 0x7ff000
        sp_reg = lib.jitmap_reg_sp(arch)

        def run(caller_sp, base):
            regs = {sp_reg: SP, base_reg: base}
            frame = CrossFrame(regs, big, sm.record_pc(rec), arch)
            vf = report.VerifyFrame(frame, model.describe(catalog, frame, raw=True),
                                    lambda: (SP, caller_sp))
            got = []
            n = report._verify_frames([vf], lambda _o, _rec, c, d: got.append((c, d)))
            check(n == 1, "%s: %d records checked" % (name, n))
            return got
        good_base = SP + 16 if base_reg == 29 else SP  # AArch64: x29 = SP + 16 in cx_saves
        got = run(SP + size, good_base)
        check(got == [], "%s: a true frame has problems: %s" % (name, got))
        got = run(SP + size + 8, good_base)
        check([c for c, _ in got] == ["frame-size"], "%s: a wrong caller SP: %s" % (name, got))
        got = run(SP + size, SP + 0x1000)
        check([c for c, _ in got] == ["stack-slot"], "%s: a slot outside the frame: %s" % (name, got))


RUN.test(verify_cross)

def abi_checked():
    """native.py's mirrors and constants are checked field by field against the library
    (jitmap_offsetof, jitmap_constant), not only by size: two fields swapped, or a changed
    enumerator, make the library refused."""
    import ctypes as C
    lib = native.lib()
    check(native._mismatches(lib) == [], "the mirrors match: %s" % native._mismatches(lib))
    saved_rec, saved_loc = native._MIRRORED["jitmap_record"], native._CONSTANTS["JITMAP_LOC_DIRECT"]

    class Swapped(C.Structure):
        _fields_ = [("instruction_offset", native.c_u32), ("id", native.c_u64)] + [
            f for f in native.Record._fields_ if f[0] not in ("id", "instruction_offset")]
    try:
        native._MIRRORED["jitmap_record"] = Swapped
        native._CONSTANTS["JITMAP_LOC_DIRECT"] = 9
        got = native._mismatches(lib)
    finally:
        native._MIRRORED["jitmap_record"] = saved_rec
        native._CONSTANTS["JITMAP_LOC_DIRECT"] = saved_loc
    check(any("jitmap_record.id is at 0 there, 8 here" in w for w in got) and
          any("JITMAP_LOC_DIRECT is 2 there, 9 here" in w for w in got), "mismatches: %s" % got)
    v = C.c_int64()
    check(lib.jitmap_constant(b"JITMAP_NO_SUCH", C.byref(v)) == -2 and
          lib.jitmap_offsetof(b"jitmap_record", b"no_such") == C.c_size_t(-1).value,
          "unknown names")


RUN.test(abi_checked)


sys.exit(RUN.run(ENV))
