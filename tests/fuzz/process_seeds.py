#!/usr/bin/env python3
"""process_seeds.py PROCESS-DIR PLUGIN-DIR OBJECT.o...: seeds of fuzz_process and fuzz_plugin
(make-corpus.sh runs it).

Each seed is the fuzzer's input: [control][mutate at, 2 bytes LE][xor][memory], the memory
mapped at BASE (fuzz_process.c). It holds a JIT descriptor at offset 0 (and a second one at
0x20 whose list starts at the second entry), the list's entries at 0x40, and the objects
themselves from 0x100 on, laid out as LLVM's JIT registers them: sh_addr of every loaded
section patched to where its bytes sit, so that the "live" stackmap section is the image's own
unrelocated copy (MCJIT before finalization). Pointers are in each object's byte order.
fuzz_plugin's seeds are the same memory behind [control][17 registers]: rip at the first
executable section, rsp and rbp inside the memory.
"""
import os
import struct
import sys

BASE = 0x10000
SHF_ALLOC = 2


SHF_EXECINSTR = 4


def patch(obj, at):
    """The object with each loaded section's sh_addr set to its place in memory, and the
    address of its first executable section (or 0)."""
    data = bytearray(obj)
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return None
    e = ">" if data[5] == 2 else "<"
    shoff, = struct.unpack_from(e + "Q", data, 0x28)
    shentsize, shnum = struct.unpack_from(e + "HH", data, 0x3a)
    code = 0
    for i in range(shnum):
        h = shoff + i * shentsize
        flags, = struct.unpack_from(e + "Q", data, h + 8)
        offset, = struct.unpack_from(e + "Q", data, h + 0x18)
        if flags & SHF_ALLOC:
            struct.pack_into(e + "Q", data, h + 0x10, BASE + at + offset)
            if flags & SHF_EXECINSTR and not code:
                code = BASE + at + offset
    return bytes(data), e, code


def memory(objs, cycle=False):
    images = []
    at = 0x100
    order = "<"
    code = 0
    for obj in objs:
        got = patch(obj, at)
        if got is None:
            continue
        img, order, text = got
        code = code or text
        images.append((at, img))
        at = (at + len(img) + 15) & ~15
    if not images:
        return None
    mem = bytearray(at)
    entries = [0x40 + 0x20 * i for i in range(len(images))]
    for i, (addr, img) in enumerate(images):
        mem[addr:addr + len(img)] = img
        nxt = BASE + entries[i + 1] if i + 1 < len(entries) else (BASE + entries[0] if cycle else 0)
        prev = BASE + entries[i - 1] if i else 0
        struct.pack_into(order + "QQQQ", mem, entries[i], nxt, prev, BASE + addr, len(img))
    struct.pack_into(order + "IIQQ", mem, 0, 1, 1, BASE + entries[0], BASE + entries[0])
    second = entries[1] if len(entries) > 1 else entries[0]
    struct.pack_into(order + "IIQQ", mem, 0x20, 1, 1, BASE + second, BASE + second)
    return bytes(mem), code


def seed(path, control, mem, mutate_at=0, xor=0):
    with open(path, "wb") as f:
        f.write(bytes([control]) + struct.pack("<H", mutate_at) + bytes([xor]) + mem)


def plugin_seed(path, control, mem, pc):
    regs = [0] * 17
    regs[6], regs[7], regs[16] = BASE + 0xc0, BASE + 0x80, pc  # rbp, rsp, rip
    with open(path, "wb") as f:
        f.write(bytes([control]) + struct.pack("<17Q", *regs) + mem)


def main():
    out, plugin, objs = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(out, exist_ok=True)
    os.makedirs(plugin, exist_ok=True)
    loaded = []
    for path in objs:
        with open(path, "rb") as f:
            obj = f.read()
        if len(obj) > 200000:
            continue
        got = memory([obj])
        if got is None:
            continue
        mem, code = got
        name = os.path.basename(path)
        seed(os.path.join(out, name), 0, mem)
        seed(os.path.join(out, name + ".mutating"), 0, mem, mutate_at=6, xor=0xff)
        if obj[5] == 1 and obj[0x12] == 62:  # x86-64: the plugin unwinds only that
            plugin_seed(os.path.join(plugin, name), 0, mem, code + 5)
            plugin_seed(os.path.join(plugin, name + ".claimed"), 1, mem, code + 5)
        if obj[5] == 1:  # little-endian: the pair below shares one byte order
            loaded.append(obj)
    if len(loaded) >= 2:
        seed(os.path.join(out, "two_entries"), 1, memory(loaded[:2])[0])
        seed(os.path.join(out, "two_entries_cycle"), 1, memory(loaded[:2], cycle=True)[0])


if __name__ == "__main__":
    main()
