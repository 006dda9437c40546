"""The layout of an x86-64 ELF core file, read by the tests themselves (not by jitmap): its
program headers, notes, where an address's bytes are in the file, which ranges hold code, and
the threads' registers. tests/damaged damages cores with it; tests/field cuts them short and
checks that no tool shows a frame where no code can be.

    sys.path.insert(0, ".../tests/lib")
    from corefile import Core
    core = Core(open("core", "rb").read())
    core.offset(vaddr)        # the file offset of vaddr's byte (KeyError: not in the core)
    core.mappings()           # [(lo, hi, "r-x")] of every segment; code_ranges(): the x ones
    core.threads()            # {tid: {"rsp": ..., "rip": ...}} from NT_PRSTATUS
"""
import mmap
import struct

PT_LOAD, PT_NOTE = 1, 4
PF_X = 1
NT_PRSTATUS = 1
# struct elf_prstatus on x86-64: pr_pid at 32, then pr_reg (user_regs_struct) at 112.
PRSTATUS_PID = 32
PRSTATUS_REGS = 112
USER_REGS = ("r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx",
             "rdx", "rsi", "rdi", "orig_rax", "rip", "cs", "eflags", "rsp", "ss")


class Core:
    """An x86-64 ELF core: its program headers, notes and how addresses map to offsets."""

    def __init__(self, data):
        # An mmap of a large core (GDB's gcore writes hundreds of MB) is read in place.
        self.data = data if isinstance(data, mmap.mmap) else bytes(data)
        self.phoff, = struct.unpack_from("<Q", data, 0x20)
        self.phnum, = struct.unpack_from("<H", data, 0x38)
        self.phdrs = []  # (index, type, flags, offset, vaddr, filesz, memsz)
        for i in range(self.phnum):
            t, fl, off, va, _, fs, ms, _ = struct.unpack_from("<IIQQQQQQ", data,
                                                              self.phoff + 56 * i)
            self.phdrs.append((i, t, fl, off, va, fs, ms))
        self.notes = []  # (header offset, type, desc offset, descsz)
        for _, t, _, off, _, fs, _ in self.phdrs:
            if t != PT_NOTE:
                continue
            at = off
            while at + 12 <= off + fs:
                namesz, descsz, ntype = struct.unpack_from("<III", data, at)
                desc = at + 12 + ((namesz + 3) & ~3)
                self.notes.append((at, ntype, desc, descsz))
                at = desc + ((descsz + 3) & ~3)

    def note(self, ntype):
        return next(n for n in self.notes if n[1] == ntype)

    def segment(self, vaddr):
        """The PT_LOAD holding `vaddr` with bytes in the core: (index, offset of vaddr)."""
        for i, t, _, off, va, fs, _ in self.phdrs:
            if t == PT_LOAD and va <= vaddr < va + fs:
                return i, off + vaddr - va
        raise KeyError(hex(vaddr))

    def offset(self, vaddr):
        return self.segment(vaddr)[1]

    def segment_start(self, vaddr):
        i, _ = self.segment(vaddr)
        return self.phdrs[i][3]

    def u64(self, vaddr):
        return struct.unpack_from("<Q", self.data, self.offset(vaddr))[0]

    def mappings(self):
        """[(lo, hi, perms)] of every PT_LOAD, perms as /proc/PID/maps writes them ("r-x"),
        whether the core holds its bytes or not (a kernel core lists every mapping of the
        process, a file's text without its bytes)."""
        return [(va, va + ms, "%s%s%s" % ("r" if fl & 4 else "-", "w" if fl & 2 else "-",
                                          "x" if fl & PF_X else "-"))
                for _, t, fl, _, va, _, ms in self.phdrs if t == PT_LOAD]

    def code_ranges(self):
        """[(lo, hi)] of every PT_LOAD mapped executable."""
        return [(lo, hi) for lo, hi, perms in self.mappings() if "x" in perms]

    def threads(self):
        """{tid: {register: value}} of each NT_PRSTATUS note."""
        out = {}
        for _, ntype, desc, size in self.notes:
            if ntype != NT_PRSTATUS or size < PRSTATUS_REGS + 8 * len(USER_REGS):
                continue
            tid, = struct.unpack_from("<i", self.data, desc + PRSTATUS_PID)
            regs = struct.unpack_from("<%dQ" % len(USER_REGS), self.data, desc + PRSTATUS_REGS)
            out[tid] = dict(zip(USER_REGS, regs))
        return out
