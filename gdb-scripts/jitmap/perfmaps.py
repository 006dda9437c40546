"""Perf maps and jitdump files, through libjitmap (jitmap/perfmap.h): the JIT code of runtimes
that tell Linux perf where it is (Node.js --perf-basic-prof, CPython -X perf, the JVM, ...)
and never register it with GDB.

Debugger-neutral (no ``import gdb``). A :class:`PerfMaps` is one set of such files (a
``jitmap_perfmap``): a process model's (``jitmap_process_perfmap``, which then answers with
their code) or one of its own, in a process model of its own. A :class:`Stepper` over it
unwinds a frame in that code, and says what code a frame is in, as jitmap-stack does
(``jitmap_stacker_step``, ``jitmap_stacker_code_at``): the code's own instructions or a
jitdump's CFI prove a step; where nothing does, the frame-pointer chain is a guess, said so.
:func:`frame_pointer_step` is libjitmap's frame-pointer method alone.
"""
import collections
import ctypes
import os

from . import native as N


def text(b):
    return b.decode("utf-8", "replace") if b is not None else None


def _no_memory(_ctx, _addr, _buf, _len, _why, _why_len):
    return -14  # -EFAULT: a process model of perf maps reads nothing itself


_NO_MEMORY = N.READ_MEM(_no_memory)


class PerfMaps:
    def __init__(self, process=None):
        """`process`: a jitmap_process handle (kept alive by the caller) whose perf maps these
        are; None: a set of its own, in a process model of its own (so that a
        :class:`Stepper` finds its code), freed by :meth:`close`."""
        self.lib = N.lib()
        self.owned = process is None
        self._target = N.Target(None, N.READ_REG(0), _NO_MEMORY)
        self.process = (self.lib.jitmap_process_new(ctypes.byref(self._target), None)
                        if self.owned else process)
        self.handle = self.lib.jitmap_process_perfmap(self.process) if self.process else None
        self._cores = set()  # paths of the cores whose JIT files were added
        if not self.handle:
            self.close()
            raise MemoryError("cannot make a perf map set")

    def close(self):
        if self.owned and self.process:
            self.lib.jitmap_process_free(self.process)  # its perf maps with it
        self.process = self.handle = None

    def add_core(self, core):
        """The perf maps and jitdump files that `core` (a corefile.OpenCore: the session's,
        which must outlive this set's answers) carries (jitmap-core-handler's notes), read
        once per core file: how many were added."""
        if core.path in self._cores:
            return 0
        self._cores.add(core.path)
        return core.add_jit_files(self.handle)

    def add_file(self, path):
        """Read a perf map or jitdump (by its content): how many code objects it names, or
        raise OSError with the library's reason."""
        err = N.Error()
        rc = self.lib.jitmap_perfmap_add_file(self.handle, path.encode(), ctypes.byref(err))
        if rc < 0:
            reason = text(err.reason) if rc == -22 and err.reason else None
            raise OSError(-rc, reason or os.strerror(-rc), path)
        return rc

    def add_process(self, pid):
        """A live process's own perf map and mapped jitdump files: how many were found."""
        rc = self.lib.jitmap_perfmap_add_process(self.handle, int(pid))
        if rc < 0:
            raise OSError(-rc, text(self.lib.jitmap_strerror(rc)))
        return rc

    def lookup(self, addr):
        """{name, lo, hi, origin, source, line, file, file_line} of the code at `addr`, or
        None."""
        sym = N.PerfmapSym()
        if self.lib.jitmap_perfmap_lookup(self.handle, addr & 0xFFFFFFFFFFFFFFFF, ctypes.byref(sym)):
            return None
        return {"name": text(sym.name), "lo": sym.lo, "hi": sym.hi, "origin": text(sym.origin),
                "source": text(sym.source), "line": sym.line, "file": text(sym.file),
                "file_line": sym.file_line, "in_core": bool(sym.in_core)}

    def code_at(self, pc, outer, stepper=None):
        """lookup() of a frame's code: an outer frame's PC is a return address, which may lie
        just past its call's code object, so the byte before it is looked up; with a
        :class:`Stepper` (which reads the code), a runtime's continuation, a return address
        at a code object's first byte that no call left, is that object's."""
        if stepper is not None:
            at = stepper.code_at(pc, not outer)
            return self.lookup(at) if at is not None else None
        return self.lookup(pc - 1 if outer and pc else pc)

    def __len__(self):
        """How many files were added."""
        return self.lib.jitmap_perfmap_num_files(self.handle)

    def files(self):
        """[(path, code objects, whether read from a core's notes)] in the order added."""
        out = []
        n = N.c_size()
        for i in range(self.lib.jitmap_perfmap_num_files(self.handle)):
            path = self.lib.jitmap_perfmap_file(self.handle, i, ctypes.byref(n))
            out.append((text(path), n.value,
                        bool(self.lib.jitmap_perfmap_file_in_core(self.handle, i))))
        return out

    def problems(self):
        return [text(self.lib.jitmap_perfmap_problem(self.handle, k))
                for k in range(self.lib.jitmap_perfmap_num_problems(self.handle))]


def _regs(pc, regs):
    fr = N.FrameRegs()
    fr.pc = pc & 0xFFFFFFFFFFFFFFFF
    for regno, value in regs.items():
        if 0 <= regno < N.UNWIND_MAX_REGS and value is not None:
            fr.reg[regno] = value & 0xFFFFFFFFFFFFFFFF
            fr.known[regno // 64] |= 1 << (regno % 64)
    return fr


# One step's answer: rc (0, -ESRCH at the outermost frame, -ENOEXEC where the caller's PC
# lies where no code can be, another negative errno), the caller's PC, its registers
# ({DWARF number: value}) and whether its PC is exact, this frame's CFA, the method's name,
# whether the step is a guess, why (why it failed, or why nothing proved it), and where the
# frame's code was looked up (its code object's [lo, hi), or None).
Step = collections.namedtuple(
    "Step", "rc caller_pc caller caller_exact cfa method guess why code_pc code_lo code_hi")


class Stepper:
    """libjitmap's stacker over the code of a :class:`PerfMaps`, reading memory through
    `read_memory(addr, n)` (bytes, or raises), on `arch` (a jitmap_arch); `code_at(pc)`, when
    given, says whether code can be at an address (1, 0, or negative: unknown), so that a
    caller's PC where none can be ends the stack."""

    def __init__(self, maps, arch, read_memory, code_at=None):
        self.lib = N.lib()
        self.arch, self.read_memory = arch, read_memory
        self._mem = N.read_mem_callback(read_memory)
        self._target = N.Target(None, N.READ_REG(0), self._mem)
        opts = N.StackerOpts()
        if code_at is not None:
            def where(_ctx, pc, _why, _why_len):
                try:
                    return int(code_at(pc))
                except Exception:
                    return -5  # -EIO: unknown
            self._code_at = N.CODE_AT(where)
            opts.code_at = self._code_at
        self.st = self.lib.jitmap_stacker_new(maps.process, ctypes.byref(self._target), arch,
                                              ctypes.byref(opts))
        if not self.st:
            raise Unavailable("jitmap cannot unwind this architecture")

    def close(self):
        if self.st:
            self.lib.jitmap_stacker_free(self.st)
        self.st = None

    def code_at(self, pc, exact):
        """Where the code of a frame at `pc` is looked up (pc - 1 for a return address, pc
        for a continuation), or None when no code of the maps holds it."""
        code = N.CodeInfo()
        at = N.c_u64()
        if self.lib.jitmap_stacker_code_at(self.st, pc & 0xFFFFFFFFFFFFFFFF, bool(exact),
                                           ctypes.byref(code), ctypes.byref(at)):
            return None
        return at.value

    def step(self, pc, regs, exact):
        """The frame at `pc` with registers `regs` ({DWARF number: value}) one step: a
        :data:`Step`."""
        fr = _regs(pc, regs)
        frame = ctypes.POINTER(N.StackFrame)()
        caller = N.FrameRegs()
        caller_exact = N.c_bool()
        rc = self.lib.jitmap_stacker_step(self.st, ctypes.byref(fr), bool(exact),
                                          ctypes.byref(frame), ctypes.byref(caller),
                                          ctypes.byref(caller_exact))
        if rc == -22 or not frame:
            raise Unavailable("jitmap_stacker_step: invalid arguments")
        f = frame.contents
        known = {r: caller.reg[r] for r in range(N.UNWIND_MAX_REGS)
                 if (caller.known[r // 64] >> (r % 64)) & 1}
        return Step(rc, caller.pc, known, bool(caller_exact.value), f.cfa,
                    text(self.lib.jitmap_unwind_method_name(f.method)), bool(f.step_guessed),
                    text(f.why) or "", f.code_pc, f.code.function_lo if f.jit else None,
                    f.code.function_hi if f.jit else None)


class Unavailable(Exception):
    """A frame the frame-pointer chain cannot unwind: str() says why."""


def _unwind_step(arch, methods, cfi, pc, regs, read_memory, innermost):
    lib = N.lib()
    fr = _regs(pc, regs)
    code = N.UnwindCode(arch=arch, cfi=cfi, is_innermost=bool(innermost), methods=methods)
    mem = N.read_mem_callback(read_memory)
    target = N.Target(None, N.READ_REG(0), mem)
    out = N.UnwindResult()
    why = ctypes.create_string_buffer(512)
    rc = lib.jitmap_unwind_step(ctypes.byref(code), ctypes.byref(fr), ctypes.byref(target),
                                ctypes.byref(out), why, len(why))
    if rc:
        raise Unavailable(text(why.value) or text(lib.jitmap_strerror(rc)))
    caller = {r: out.caller.reg[r] for r in range(N.UNWIND_MAX_REGS)
              if (out.caller.known[r // 64] >> (r % 64)) & 1}
    return out.caller.pc, caller, out.cfa


def frame_pointer_step(arch, pc, regs, read_memory, innermost):
    """The caller of the frame at `pc` with registers `regs` ({DWARF number: value}: the stack
    and frame pointers at least) by the frame-pointer chain, with libjitmap's checks
    (jitmap_unwind_step, its frame-pointer method alone): (caller's pc, {DWARF number:
    value} of the caller's registers it knows, this frame's CFA). `read_memory(addr, n)`
    returns bytes or raises. Raises Unavailable with the library's reason."""
    return _unwind_step(arch, 1 << N.UNWIND_FRAME_POINTER, None, pc, regs, read_memory,
                        innermost)


class Cfi:
    """libjitmap's reading of one module's .eh_frame (jitmap_cfi_new): `eh_frame` its bytes,
    `eh_addr` where the process has them. A debugger's frame in that module can be stepped
    with it as jitmap-stack steps one (:meth:`step`), to check the debugger's own step."""

    def __init__(self, arch, eh_frame, eh_addr):
        self.lib = N.lib()
        self.arch = arch
        err = N.Error()
        data = bytes(eh_frame)
        self.handle = self.lib.jitmap_cfi_new(arch, data, len(data), eh_addr & 0xFFFFFFFFFFFFFFFF,
                                              None, 0, ctypes.byref(err))
        if not self.handle:
            raise Unavailable(text(err.reason) or "no CFI in the section")

    def close(self):
        if self.handle:
            self.lib.jitmap_cfi_free(self.handle)
        self.handle = None

    def covers(self, pc):
        return bool(self.handle) and bool(self.lib.jitmap_cfi_covers(
            self.handle, pc & 0xFFFFFFFFFFFFFFFF, None, None))

    def step(self, pc, regs, read_memory, innermost):
        """The caller of the frame at `pc` with registers `regs` by the CFI rows that cover
        it, proven only (the return address follows a call: docs/unwinding.md, "Proven steps
        and guesses"): as :func:`frame_pointer_step` answers. Raises Unavailable with the
        library's reason when the rows do not prove a step."""
        return _unwind_step(self.arch, (1 << N.UNWIND_CFI) | N.UNWIND_PROVEN, self.handle, pc,
                            regs, read_memory, innermost)

    def __del__(self):
        self.close()
