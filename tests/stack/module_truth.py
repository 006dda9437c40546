"""Where a PC lies, read without jitmap: what a frame's module, build_id and module_offset must
be (docs/jitmap-stack.md, "JSON").

    sys.path.insert(0, ".../tests/stack")
    import module_truth as MT
    maps = MT.live_maps(pid)                 # or MT.core_maps(core): /proc/PID/maps, NT_FILE
    wrong, seen = MT.check_frames(obj, maps) # jitmap-stack --json's object

The truth: the mapping that holds the PC (for a return address, the call's last byte, PC - 1),
from /proc/PID/maps for a live process or, for a core, its NT_FILE note (file mappings) and its
PT_LOAD segments (everything mapped; what no NT_FILE entry covers is anonymous memory). A PC in
a file mapping whose file offset lies in the file bytes of one of the file's PT_LOAD segments
(its program headers, read here from the file) is in that module; its load bias is the PC less
the segment's virtual address of that byte, and module_offset must be PC less that bias. A PC
anywhere else (anonymous memory, a file that is no ELF image) has no module, build_id nor
module_offset. The build ID is the file's NT_GNU_BUILD_ID note, read here.
"""
import os
import struct

PT_LOAD, PT_NOTE, NT_FILE, NT_GNU_BUILD_ID = 1, 4, 0x46494c45, 3


class Mapping:
    def __init__(self, start, end, offset, path, name, file):
        self.start, self.end, self.offset = start, end, offset
        self.path = path  # the file's path (a live one without " (deleted)"), or None
        self.name = name  # as /proc/PID/maps says it ([heap], [anon:X]), or None
        self.file = file

    def __repr__(self):
        return "%x-%x %x %s" % (self.start, self.end, self.offset, self.name)


def live_maps(pid):
    """The mappings of process `pid`, sorted by start."""
    out = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            parts = line.rstrip("\n").split(None, 5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            name = parts[5] if len(parts) == 6 else None
            file = int(parts[4]) != 0 and bool(name) and name.startswith("/")
            path = name[:-len(" (deleted)")] if file and name.endswith(" (deleted)") else name
            out.append(Mapping(lo, hi, int(parts[2], 16), path if file else None, name, file))
    return sorted(out, key=lambda m: m.start)


def _elf(data):
    """(is64, endian char, header fields) of ELF bytes, or None."""
    if data[:4] != b"\x7fELF":
        return None
    is64, e = data[4] == 2, "<" if data[5] == 1 else ">"
    if is64:
        (typ, _, _, _, phoff, _, _, _, phentsize, phnum) = struct.unpack_from(e + "HHIQQQIHHH",
                                                                              data, 16)
    else:
        (typ, _, _, _, phoff, _, _, _, phentsize, phnum) = struct.unpack_from(e + "HHIIIIIHHH",
                                                                              data, 16)
    return is64, e, typ, phoff, phentsize, phnum


def _phdrs(data):
    """[(type, offset, vaddr, filesz, memsz, align)] of ELF bytes."""
    h = _elf(data)
    if not h:
        return []
    is64, e, _, phoff, ent, num = h
    out = []
    for i in range(num):
        at = phoff + i * ent
        if is64:
            t, _, off, va, _, fs, ms, al = struct.unpack_from(e + "IIQQQQQQ", data, at)
        else:
            t, off, va, _, fs, ms, _, al = struct.unpack_from(e + "IIIIIIII", data, at)
        out.append((t, off, va, fs, ms, al))
    return out


def _notes(data, off, size, e):
    """[(type, name, desc)] of the notes in data[off:off+size]."""
    out, end = [], off + size
    while off + 12 <= end:
        nsz, dsz, typ = struct.unpack_from(e + "III", data, off)
        name = data[off + 12:off + 12 + nsz].rstrip(b"\0")
        d = off + 12 + ((nsz + 3) & ~3)
        out.append((typ, name, data[d:d + dsz]))
        off = d + ((dsz + 3) & ~3)
    return out


_files = {}


def file_info(path):
    """(PT_LOADs [(offset, vaddr, filesz)], build ID hex or None) of the ELF file at `path`
    (ET_EXEC, ET_DYN), or None when it is no such file or cannot be read."""
    if path not in _files:
        _files[path] = None
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return None
        h = _elf(data)
        if h and h[2] in (2, 3):
            ph = _phdrs(data)
            bid = None
            for t, off, _, fs, _, _ in ph:
                for typ, name, desc in (_notes(data, off, fs, h[1]) if t == PT_NOTE else []):
                    if typ == NT_GNU_BUILD_ID and name == b"GNU":
                        bid = desc.hex()
            _files[path] = ([(off, va, fs) for t, off, va, fs, _, _ in ph if t == PT_LOAD], bid)
    return _files[path]


def core_maps(core):
    """The mappings of a core: its NT_FILE entries (files), and the parts of its PT_LOAD
    segments they do not cover (anonymous memory, unnamed)."""
    with open(core, "rb") as f:
        data = f.read()
    h = _elf(data)
    _, e, _, _, _, _ = h
    files, segs = [], []
    for t, off, va, fs, ms, _ in _phdrs(data):
        if t == PT_LOAD:
            segs.append((va, va + ms))
        elif t == PT_NOTE:
            for typ, name, desc in _notes(data, off, fs, e):
                if typ != NT_FILE or name != b"CORE":
                    continue
                w = "Q" if h[0] else "I"
                n, page = struct.unpack_from(e + w + w, desc, 0)
                size = struct.calcsize(w)
                names = desc[(2 + 3 * n) * size:].split(b"\0")
                for i in range(n):
                    lo, hi, pgoff = struct.unpack_from(e + w * 3, desc, (2 + 3 * i) * size)
                    p = names[i].decode(errors="replace")
                    files.append(Mapping(lo, hi, pgoff * page, p, p, True))
    out = list(files)
    for lo, hi in segs:
        at = lo
        for m in sorted(files, key=lambda m: m.start):
            if m.end <= at or m.start >= hi:
                continue
            if m.start > at:
                out.append(Mapping(at, m.start, 0, None, None, False))
            at = max(at, m.end)
        if at < hi:
            out.append(Mapping(at, hi, 0, None, None, False))
    return sorted(out, key=lambda m: m.start)


def where(maps, addr):
    """("module", path, bias, build ID) for an address in a module; ("none", mapping name)
    for one in no module; None for one in no mapping."""
    m = next((m for m in maps if m.start <= addr < m.end), None)
    if m is None:
        return None
    if m.file:
        path = m.path[:-len(" (deleted)")] if m.path.endswith(" (deleted)") else m.path
        info = file_info(path) if os.path.exists(path) else None
        off = m.offset + (addr - m.start)
        for seg_off, vaddr, filesz in (info[0] if info else []):
            if seg_off <= off < seg_off + filesz:
                return ("module", path, addr - (vaddr + off - seg_off), info[1])
    return ("none", m.name)


def expected(maps, f):
    """What frame `f` (jitmap-stack's JSON) must say: (module, build_id, module_offset),
    from its pc, or, for an outer frame, its call's last byte (pc - 1); the two answers when
    they differ (an outer frame at a function's first byte)."""
    pc = int(f["pc"], 16)
    out = []
    for addr in ([pc - 1, pc] if f["index"] > 0 else [pc]):
        w = where(maps, addr)
        if w and w[0] == "module":
            out.append((os.path.basename(w[1]), w[3], "0x%x" % (pc - w[2]), w))
        elif w is not None:
            out.append((None, None, None, w))
    return out


def check_frames(obj, maps):
    """Every frame of jitmap-stack's JSON `obj` against the truth: ([(frame, want)] wrong,
    {"module": n, "anonymous": n, "jit": n} right)."""
    wrong, seen = [], {"module": 0, "anonymous": 0, "jit": 0}
    for t in obj["threads"]:
        for f in t["frames"]:
            got = (f["module"], f["build_id"], f["module_offset"])
            want = expected(maps, f)
            if f["jit"]:
                # JIT code: never a file's identity (module null, jit_entry or named_by).
                if got != (None, None, None):
                    wrong.append((f, want))
                else:
                    seen["jit"] += 1
                continue
            if not want:
                if got != (None, None, None):
                    wrong.append((f, want))
                continue
            if got not in [w[:3] for w in want]:
                wrong.append((f, want))
            else:
                seen["module" if got[0] else "anonymous"] += 1
    return wrong, seen


def anonymous_pcs(obj, maps):
    """The frames whose pc (and, for an outer frame, pc - 1) lies in no module."""
    out = []
    for t in obj["threads"]:
        for f in t["frames"]:
            want = expected(maps, f)
            if want and all(w[3][0] == "none" for w in want):
                out.append(f)
    return out
