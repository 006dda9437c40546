#!/usr/bin/env python3
"""test_core.py: the debugger-neutral half of gdb-scripts/jitmap, in plain Python (no GDB).

    tests/gdb-commands/test_core.py BUILD_DIR

Imports native, discovery, stackmaps, model, format and names without GDB (so none of them
may import gdb: the LLDB front end shares them), and drives them against a fake process: a
descriptor list in fake memory whose entry is the hand-written JIT's real registered image
(`jitmap-handjit --image`). Its live stackmap is not in the fake memory, so discovery falls
back to the registered copy and says so. Then: records found by PC, evaluated through a fake
frame (a callee-saved register, a stack slot, a caller-saved register the frame cannot give),
text and JSON renderings, the names API, hostile lists (a cycle, a wild pointer, a huge
size). Exits 0 when all pass, 1 when any fails, 77 when the programs are not built.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "gdb-scripts"))

if len(sys.argv) != 2:
    sys.exit("usage: test_core.py BUILD_DIR")
BUILD = os.path.abspath(sys.argv[1])
HANDJIT = os.path.join(BUILD, "examples", "handjit", "jitmap-handjit")
os.environ["JITMAP_LIBRARY"] = os.path.join(BUILD, "libjitmap.so")
if not os.path.exists(HANDJIT) or not os.path.exists(os.environ["JITMAP_LIBRARY"]):
    print("core: skipped: jitmap-handjit or libjitmap not built")
    sys.exit(77)

from jitmap import discovery, format as fmt, model, names, native  # noqa: E402

assert "gdb" not in sys.modules, "a debugger-neutral module imported gdb"

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL " + what)


# -- The image and its truth --

tmp = tempfile.mkdtemp(prefix="jitmap-core-")
image_path = os.path.join(tmp, "image.o")
out = subprocess.run([HANDJIT, "--image", image_path], stdout=subprocess.PIPE, check=True).stdout.decode()
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
check(len(catalog.stackmaps) == 1, "one stackmap, got %d" % len(catalog.stackmaps))
sm = catalog.stackmaps[0]
check(sm.num_records == 2, "two records")
check(any("registered copy" in n for n in sm.notes), "note about the registered copy: %s" % sm.notes)
problems = [p for s in catalog.sources for p in s.problems]
check(any("not readable" in p for p in problems), "problem saying the live section is not readable")
names_seen = sorted(native.text(f.name) for _, f in sm.functions())
check(names_seen == ["handjit_inner", "handjit_outer"], "function names %s" % names_seen)

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


match = model.find(catalog, pc, True, None)
check(match.how == "exact" and len(match.hits) == 1, "record 1002 found at its PC")
obj = model.frame_object(Frame(), match)
check(obj["record"]["id"] == 1002, "record id")
vals = [l["value"] for l in obj["locations"]]
want = [int(inner["local%d" % i]) for i in range(6)]
check(vals == want, "values %s, truth %s" % (vals, want))
check(obj["locations"][1]["address"] == "0x%x" % (sp + 8), "indirect address")
json.loads(fmt.to_json(obj))
text = fmt.frame_text(obj)
check("record 1002 at 0x%x (handjit_inner+" % pc in text, "text header:\n" + text)

# A caller-saved register: unavailable, with the frame's reason, never a number.
rec = match.hits[0][1]
rec.contents.locations[0].dwarf_reg = 5  # rdi, for this check only (the copy is ours)
bad = model.frame_object(Frame(), match)
loc0 = bad["locations"][0]
check(loc0["value"] is None and "caller-saved" in loc0["error"], "rdi unavailable: %s" % loc0)
check("<unavailable: register rdi not available: caller-saved" in fmt.frame_text(bad), "text of rdi")
rec.contents.locations[0].dwarf_reg = 3

# Not at a record: the nearest, and how far.
miss = model.find(catalog, pc + 3, False, None)
check(not miss.hits and miss.nearest and miss.nearest[0][2] == -3, "nearest record 3 bytes before")
m = model.frame_object(Frame(), miss)
check(m["record"] is None and "3 bytes before" in m["error"], "no-record message: %s" % m.get("error"))

# -- Names --

names.name_locations(1002, ["vm_acc", None, "slot"])
names.add_namer(lambda rid, fn, n: 1 / 0)  # a broken namer is ignored
named = model.frame_object(Frame(), match)
check(named["locations"][0].get("name") == "vm_acc" and "name" not in named["locations"][1]
      and named["locations"][2].get("name") == "slot", "names API")
names.clear()

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


for name, fn, want_problem, want_maps in (("cycle", cycle, "loops", 2), ("wild", wild, "not readable", 1),
                                         ("huge", huge, "larger than", 1), ("garbage", garbage, "offset", 1)):
    c = discovery.Discovery().scan(process(fn))
    all_problems = c.problems + [p for s in c.sources for p in s.problems]
    check(any(want_problem in p for p in all_problems), "%s: problem %r in %s" % (name, want_problem, all_problems))
    check(len(c.stackmaps) == want_maps, "%s: %d stackmaps kept" % (name, len(c.stackmaps)))

print("core: %s" % ("all passed" if not failures else "%d failed" % len(failures)))
sys.exit(1 if failures else 0)
