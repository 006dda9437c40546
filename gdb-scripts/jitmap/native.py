"""ctypes binding to libjitmap: the only module that touches the C library.

Debugger-neutral (no ``import gdb``): the GDB and LLDB front ends share it.

Which libjitmap.so is loaded, first match wins:

0. In GDB, the reader plugin (``jitmap-reader.so``, which holds all of libjitmap) when
   jitmap.gdb loads it: :func:`prefer`. One copy of libjitmap in GDB, so that the commands
   and the plugin share one process model (each stackmap parsed once: discovery.py).
1. ``$JITMAP_LIBRARY``: an explicit path (tests set it to the build tree's library).
2. ``hint`` given to :func:`load` by a front end (GDB: the directory above the reader
   plugin, which is the library directory both in a build tree and in an install tree).
3. The install tree: this package lives in ``P/share/jitmap/python/jitmap``; the library in
   ``P/lib*/`` (``lib``, ``lib64``, ``lib/<multiarch>``).
4. A build tree under the source tree: ``<source>/build*/libjitmap.so``, the newest one.
5. ``libjitmap.so.1`` (:data:`SONAME`) through the dynamic linker (``/usr`` installs, ``LD_LIBRARY_PATH``).

``jit-reader-unload`` does not unmap the plugin while this module holds it (ctypes opens it
once more, and never closes it): only the reader's own state goes, which discovery.py
notices through ``jitmap_reader_process``'s serial.

Every function used is declared with argtypes and restype; structures mirror
``include/jitmap/jitmap.h`` field for field.
"""
import ctypes
import glob
import os

SONAME = "libjitmap.so.1"  # CMakeLists.txt JITMAP_SOVERSION; test_core checks it

# -- Structures (jitmap.h) --

c_u8, c_u16, c_u32, c_u64 = ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64
c_size = ctypes.c_size_t
c_int = ctypes.c_int
c_bool = ctypes.c_bool
c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p


class Error(ctypes.Structure):
    _fields_ = [("code", c_int), ("offset", c_u64), ("reason", ctypes.c_char * 192)]


class Location(ctypes.Structure):
    _fields_ = [("kind", c_int), ("size", c_u16), ("dwarf_reg", c_u16), ("offset", ctypes.c_int32)]


class LiveOut(ctypes.Structure):
    _fields_ = [("dwarf_reg", c_u16), ("size", c_u8)]


class Function(ctypes.Structure):
    _fields_ = [("address", c_u64), ("raw_address", c_u64), ("stack_size", c_u64),
                ("record_count", c_u64), ("first_record", c_size), ("blob", c_size),
                ("section_offset", c_u64), ("name", c_char_p)]


class Record(ctypes.Structure):
    _fields_ = [("id", c_u64), ("instruction_offset", c_u32), ("flags", c_u16),
                ("num_locations", c_u16), ("num_live_outs", c_u16),
                ("locations", ctypes.POINTER(Location)), ("live_outs", ctypes.POINTER(LiveOut)),
                ("function", c_size), ("blob", c_size), ("section_offset", c_u64),
                ("raw_instruction_offset", c_u32)]


class StatepointInfo(ctypes.Structure):
    _fields_ = [("calling_convention", c_u64), ("flags", c_u64),
                ("num_deopt", c_size), ("deopt", ctypes.POINTER(Location)),
                ("num_gc_pairs", c_size), ("gc_pairs", ctypes.POINTER(Location)),
                ("num_gc_allocas", c_size), ("gc_allocas", ctypes.POINTER(Location))]


class Hit(ctypes.Structure):
    _fields_ = [("stackmap", c_void_p), ("record", ctypes.POINTER(Record))]


VALUE_MAX = 256


# int read_reg(void *ctx, unsigned regno, void *buf, size_t size, char *why, size_t why_len)
READ_REG = ctypes.CFUNCTYPE(c_int, c_void_p, ctypes.c_uint, c_void_p, c_size, c_void_p, c_size)
# int read_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
READ_MEM = ctypes.CFUNCTYPE(c_int, c_void_p, c_u64, c_void_p, c_size, c_void_p, c_size)


class Target(ctypes.Structure):
    _fields_ = [("ctx", c_void_p), ("read_reg", READ_REG), ("read_mem", READ_MEM)]


# read_reg's answer for a value recovered from a save slot (JITMAP_REG_RECOVERED).
REG_RECOVERED = 1


def cbuf(data):
    """`data` as something ctypes passes as a pointer: bytes as they are, a writable
    memoryview without a copy."""
    if isinstance(data, memoryview):
        if data.readonly:
            return data.tobytes()
        return (ctypes.c_char * len(data)).from_buffer(data)
    return data


def set_why(why, why_len, e):
    """Write the reason of `e` into a callback's `why` buffer (truncated, NUL-terminated)."""
    msg = (str(e) or type(e).__name__).encode("utf-8", "replace")[:max(why_len - 1, 0)]
    ctypes.memmove(why, msg + b"\0", len(msg) + 1)


def read_mem_callback(read, interrupted=None):
    """A READ_MEM callback over `read(addr, n)`, which returns the bytes (bytes or a
    memoryview) or raises: a failure or a short read is -EFAULT, with its reason. No exception
    crosses the C frames: a KeyboardInterrupt goes to `interrupted(e)`, when given, for the
    caller to raise once back in Python. Keep the result alive while the library may call it."""
    def read_mem(_ctx, addr, buf, length, why, why_len):
        try:
            data = read(addr, length)
            if not isinstance(data, (bytes, memoryview)):
                data = bytes(data)
            if len(data) != length:
                raise ValueError("short read")
            ctypes.memmove(buf, cbuf(data), length)
            return 0
        except BaseException as e:  # never let an exception cross the C frames
            if isinstance(e, KeyboardInterrupt) and interrupted is not None:
                interrupted(e)
            set_why(why, why_len, e)
            return -14  # -EFAULT
    return READ_MEM(read_mem)


class ProcessOpts(ctypes.Structure):
    """jitmap_process_opts (process.h): sized."""
    _fields_ = [("sz", c_size), ("max_entries", c_size), ("max_image", c_u64),
                ("max_section", c_u64), ("flags", ctypes.c_uint),
                ("debug_dirs", c_char_p)]


class SourceInfo(ctypes.Structure):
    """jitmap_source_info (process.h)."""
    _fields_ = [("sz", c_size), ("kind", c_int), ("name", c_char_p), ("descriptor", c_u64),
                ("entry", c_u64),
                ("symfile_addr", c_u64), ("symfile_size", c_u64), ("section_address", c_u64),
                ("section_size", c_u64), ("bias", c_u64), ("stackmap", c_void_p),
                ("live", c_bool), ("image", c_void_p), ("num_problems", c_size),
                ("num_notes", c_size), ("num_unrelocated", c_size)]

    def __init__(self):
        super().__init__(ctypes.sizeof(SourceInfo))


class DescriptorInfo(ctypes.Structure):
    """jitmap_descriptor_info (process.h): how far a JIT descriptor's list was read."""
    _fields_ = [("sz", c_size), ("address", c_u64), ("where", c_char_p), ("readable", c_bool),
                ("complete", c_bool), ("num_entries", c_size), ("problem", c_char_p)]

    def __init__(self):
        super().__init__(ctypes.sizeof(DescriptorInfo))


class StoppedMemoryInfo(ctypes.Structure):
    """jitmap_stopped_memory_info (stopped.h): where the bytes at an address come from."""
    _fields_ = [("sz", c_size), ("source", c_int), ("size", c_u64), ("offset", c_u64),
                ("path", c_char_p), ("segment_start", c_u64), ("segment_end", c_u64),
                ("segment_flags", ctypes.c_uint), ("file_unusable", c_bool),
                ("why", ctypes.c_char * 192)]

    def __init__(self):
        super().__init__(ctypes.sizeof(StoppedMemoryInfo))


class StoppedThread(ctypes.Structure):
    """jitmap_stopped_thread_info (stopped.h): a thread of a stopped process or core."""
    _fields_ = [("tid", ctypes.c_int32), ("name", c_char_p), ("signal", c_int),
                ("error", c_int), ("why", c_char_p), ("regs", c_void_p),
                ("num_gregs", c_size), ("gregs", c_void_p), ("stack_lo", c_u64),
                ("stack_hi", c_u64), ("stopped_ns", c_u64), ("stack_cut", c_bool),
                ("past_copy", c_u64)]


class FrameDesc(ctypes.Structure):
    """jitmap_frame_desc (frame.h): sized."""
    _fields_ = [("sz", c_size), ("level", ctypes.c_uint), ("pc", c_u64),
                ("return_address", c_bool), ("arch", c_int), ("function", c_char_p),
                ("target", ctypes.POINTER(Target)), ("statepoints", c_int),
                ("statepoint_ids", ctypes.POINTER(c_u64)), ("num_statepoint_ids", c_size),
                ("flags", ctypes.c_uint), ("order", c_int), ("guessed", c_char_p)]


DESCRIBE_RAW, DESCRIBE_REGISTERS = 1, 2


class ImageSymbol(ctypes.Structure):
    """jitmap_image_symbol_info: a function symbol of an image."""
    _fields_ = [("sz", c_size), ("address", c_u64), ("size", c_u64), ("name", c_char_p),
                ("flags", ctypes.c_uint)]

    def __init__(self):
        super().__init__(ctypes.sizeof(ImageSymbol))


class CalleeSavedWrite(ctypes.Structure):
    """jitmap_callee_saved_write (arch.h): an instruction that changes a callee-saved
    register its function did not save."""
    _fields_ = [("address", c_u64), ("regno", ctypes.c_uint), ("insn", ctypes.c_char * 96)]


class PerfmapSym(ctypes.Structure):
    """jitmap_perfmap_sym (perfmap.h): what a perf map or jitdump says of an address."""
    _fields_ = [("sz", c_size), ("name", c_char_p), ("lo", c_u64), ("hi", c_u64),
                ("origin", c_char_p), ("source", c_char_p), ("line", ctypes.c_uint),
                ("file", c_char_p), ("file_line", ctypes.c_uint), ("kind", c_int),
                ("in_core", c_int)]

    def __init__(self):
        super().__init__(ctypes.sizeof(PerfmapSym))


UNWIND_MAX_REGS = 128


class FrameRegs(ctypes.Structure):
    """jitmap_frame_regs (unwind.h): a frame's registers by DWARF number."""
    _fields_ = [("pc", c_u64), ("reg", c_u64 * UNWIND_MAX_REGS),
                ("known", c_u64 * (UNWIND_MAX_REGS // 64))]


class UnwindCode(ctypes.Structure):
    """jitmap_unwind_code (unwind.h): what is known of a frame's code."""
    _fields_ = [("arch", c_int), ("cfi", c_void_p), ("sm", c_void_p), ("func_lo", c_u64),
                ("func_hi", c_u64), ("is_innermost", c_bool), ("methods", ctypes.c_uint32),
                ("order", c_int)]


class UnwindResult(ctypes.Structure):
    """jitmap_unwind_result (unwind.h): the caller's registers and the frame's CFA."""
    _fields_ = [("caller", FrameRegs), ("cfa", c_u64), ("method", c_int),
                ("restored", c_u64 * (UNWIND_MAX_REGS // 64))]


class CodeInfo(ctypes.Structure):
    """jitmap_code_info (process.h): the JIT code at an address."""
    _fields_ = [("source", c_char_p), ("entry", c_u64), ("image_id", c_u64), ("lo", c_u64),
                ("hi", c_u64), ("image", c_void_p), ("stackmap", c_void_p),
                ("function", c_char_p), ("function_lo", c_u64), ("function_hi", c_u64)]


class StackFrame(ctypes.Structure):
    """jitmap_stack_frame (stack.h): one frame of a walk, as the stacker describes it."""
    _fields_ = [("level", ctypes.c_uint), ("pc", c_u64), ("exact", c_bool),
                ("regs", ctypes.POINTER(FrameRegs)), ("jit", c_bool), ("code", CodeInfo),
                ("stackmap", c_void_p), ("record", c_void_p), ("method", c_int),
                ("cfa", c_u64), ("stop", c_int), ("why", c_char_p), ("guessed", c_bool),
                ("guess", c_char_p), ("step_guessed", c_bool), ("stack_unread", c_bool),
                ("code_pc", c_u64), ("rule", c_void_p)]


# int (*)(void *ctx, uint64_t pc, char *why, size_t why_len): jitmap_stack_code_fn.
CODE_AT = ctypes.CFUNCTYPE(c_int, c_void_p, c_u64, ctypes.c_void_p, c_size)


class StackerOpts(ctypes.Structure):
    """jitmap_stacker_opts (stack.h): sized."""
    _fields_ = [("sz", c_size), ("max_frames", ctypes.c_uint), ("native_step", c_void_p),
                ("native_ctx", c_void_p), ("order", c_int), ("code_at", CODE_AT),
                ("code_ctx", c_void_p)]

    def __init__(self, **kw):
        super().__init__(ctypes.sizeof(StackerOpts), **kw)


class StoppedOpts(ctypes.Structure):
    """jitmap_stopped_opts (stopped.h): sized."""
    _fields_ = [("sz", c_size), ("exe", c_char_p), ("sysroot", c_char_p),
                ("max_threads", c_size), ("flags", ctypes.c_uint),
                ("max_rounds", ctypes.c_uint), ("interrupt", c_void_p),
                ("stack_bytes", c_size), ("debug_dirs", c_char_p)]

    def __init__(self, **kw):
        super().__init__(ctypes.sizeof(StoppedOpts), **kw)


# Constants and enumerators, each checked against the library's value when it is loaded
# (jitmap_constant): a library of another build with other values is refused.
SOURCE_JIT, SOURCE_OBJECT = 1, 2
VREF_NONE, VREF_NUMBER, VREF_DEOPT, VREF_NAME = 0, 1, 2, 3
ORDER_AUTO, ORDER_LITTLE, ORDER_BIG = 0, 1, 2
LOC_REGISTER, LOC_DIRECT, LOC_INDIRECT, LOC_CONSTANT, LOC_CONSTANT_INDEX = 1, 2, 3, 4, 5
ARCH_UNKNOWN, ARCH_X86_64, ARCH_AARCH64, ARCH_PPC64, ARCH_S390X, ARCH_RISCV64 = range(6)
STATEPOINT_AUTO, STATEPOINT_ALL, STATEPOINT_NONE = 0, 1, 2
IMAGE_SKIP_STACKMAP = 1
# What jitmap_frame_report_text writes (jitmap_text_part), and jitmap_frame_report_json's flag.
TEXT_FRAME, TEXT_RECORDS, TEXT_GC_ROOTS, TEXT_GC_HEADER, TEXT_VFRAMES, TEXT_NO_RECORD = range(6)
TEXT_REGISTERS, TEXT_BT = 6, 7
JSON_NO_FRAME, JSON_VARIABLES = 1, 4
STACK_SIZE_DYNAMIC = (1 << 64) - 1  # a function's stack_size when it is not known
STOPPED_MEM_CORE, STOPPED_MEM_FILE, STOPPED_MEM_NONE, STOPPED_MEM_PROCESS = 1, 2, 3, 4
# jitmap_unwind_method, and the bit that asks for proven steps only.
UNWIND_NONE, UNWIND_CFI, UNWIND_STACKMAP, UNWIND_FRAME_POINTER, UNWIND_NATIVE, UNWIND_CODE = range(6)
UNWIND_PROVEN = 1 << 31
STOPPED_NO_FILES, STOPPED_NO_STOP = 1, 2

_CONSTANTS = {
    "JITMAP_SOURCE_JIT": SOURCE_JIT, "JITMAP_SOURCE_OBJECT": SOURCE_OBJECT,
    "JITMAP_VREF_NONE": VREF_NONE, "JITMAP_VREF_NUMBER": VREF_NUMBER,
    "JITMAP_VREF_DEOPT": VREF_DEOPT, "JITMAP_VREF_NAME": VREF_NAME,
    "JITMAP_ORDER_AUTO": ORDER_AUTO, "JITMAP_ORDER_LITTLE": ORDER_LITTLE,
    "JITMAP_ORDER_BIG": ORDER_BIG, "JITMAP_LOC_REGISTER": LOC_REGISTER,
    "JITMAP_LOC_DIRECT": LOC_DIRECT, "JITMAP_LOC_INDIRECT": LOC_INDIRECT,
    "JITMAP_LOC_CONSTANT": LOC_CONSTANT, "JITMAP_LOC_CONSTANT_INDEX": LOC_CONSTANT_INDEX,
    "JITMAP_ARCH_UNKNOWN": ARCH_UNKNOWN, "JITMAP_ARCH_X86_64": ARCH_X86_64,
    "JITMAP_ARCH_AARCH64": ARCH_AARCH64, "JITMAP_ARCH_PPC64": ARCH_PPC64,
    "JITMAP_ARCH_S390X": ARCH_S390X, "JITMAP_ARCH_RISCV64": ARCH_RISCV64,
    "JITMAP_STATEPOINT_AUTO": STATEPOINT_AUTO, "JITMAP_STATEPOINT_ALL": STATEPOINT_ALL,
    "JITMAP_STATEPOINT_NONE": STATEPOINT_NONE, "JITMAP_IMAGE_SKIP_STACKMAP": IMAGE_SKIP_STACKMAP,
    "JITMAP_REG_RECOVERED": REG_RECOVERED, "JITMAP_DESCRIBE_RAW": DESCRIBE_RAW,
    "JITMAP_DESCRIBE_REGISTERS": DESCRIBE_REGISTERS, "JITMAP_TEXT_REGISTERS": TEXT_REGISTERS,
    "JITMAP_TEXT_FRAME": TEXT_FRAME, "JITMAP_TEXT_RECORDS": TEXT_RECORDS,
    "JITMAP_TEXT_GC_ROOTS": TEXT_GC_ROOTS, "JITMAP_TEXT_GC_HEADER": TEXT_GC_HEADER,
    "JITMAP_TEXT_VFRAMES": TEXT_VFRAMES, "JITMAP_TEXT_NO_RECORD": TEXT_NO_RECORD,
    "JITMAP_TEXT_BT": TEXT_BT, "JITMAP_JSON_VARIABLES": JSON_VARIABLES,
    "JITMAP_JSON_NO_FRAME": JSON_NO_FRAME, "JITMAP_UNWIND_FRAME_POINTER": UNWIND_FRAME_POINTER,
    "JITMAP_UNWIND_MAX_REGS": UNWIND_MAX_REGS,
    "JITMAP_STOPPED_MEM_CORE": STOPPED_MEM_CORE, "JITMAP_STOPPED_MEM_FILE": STOPPED_MEM_FILE,
    "JITMAP_STOPPED_MEM_NONE": STOPPED_MEM_NONE,
    "JITMAP_STOPPED_MEM_PROCESS": STOPPED_MEM_PROCESS, "JITMAP_UNWIND_NONE": UNWIND_NONE,
    "JITMAP_UNWIND_CFI": UNWIND_CFI, "JITMAP_UNWIND_STACKMAP": UNWIND_STACKMAP,
    "JITMAP_UNWIND_NATIVE": UNWIND_NATIVE, "JITMAP_UNWIND_CODE": UNWIND_CODE,
    "JITMAP_UNWIND_PROVEN": UNWIND_PROVEN, "JITMAP_STOPPED_NO_STOP": STOPPED_NO_STOP,
    "JITMAP_STOPPED_NO_FILES": STOPPED_NO_FILES,
}

P = ctypes.POINTER

# Every structure mirrored here, by its C name: checked against the library's own size and
# field offsets (jitmap_sizeof, jitmap_offsetof) when it is loaded, so that a Python tree and
# a libjitmap from different builds fail loudly instead of reading the wrong bytes.
_MIRRORED = {
    "jitmap_error": Error, "jitmap_location": Location, "jitmap_live_out": LiveOut,
    "jitmap_function": Function, "jitmap_record": Record,
    "jitmap_statepoint_info": StatepointInfo, "jitmap_hit": Hit, "jitmap_target": Target,
    "jitmap_process_opts": ProcessOpts, "jitmap_source_info": SourceInfo,
    "jitmap_frame_desc": FrameDesc, "jitmap_image_symbol_info": ImageSymbol,
    "jitmap_callee_saved_write": CalleeSavedWrite, "jitmap_perfmap_sym": PerfmapSym,
    "jitmap_frame_regs": FrameRegs, "jitmap_unwind_code": UnwindCode,
    "jitmap_unwind_result": UnwindResult, "jitmap_descriptor_info": DescriptorInfo,
    "jitmap_stopped_memory_info": StoppedMemoryInfo, "jitmap_code_info": CodeInfo,
    "jitmap_stack_frame": StackFrame, "jitmap_stacker_opts": StackerOpts,
    "jitmap_stopped_opts": StoppedOpts, "jitmap_stopped_thread_info": StoppedThread,
}

_SIGNATURES = {
    "jitmap_version": (c_char_p, []),
    "jitmap_sizeof": (c_size, [c_char_p]),
    "jitmap_offsetof": (c_size, [c_char_p, c_char_p]),
    "jitmap_constant": (c_int, [c_char_p, P(ctypes.c_int64)]),
    "jitmap_strerror": (c_char_p, [c_int]),
    "jitmap_arch_name": (c_char_p, [c_int]),
    "jitmap_arch_from_name": (c_int, [c_char_p]),
    "jitmap_reg_name": (c_char_p, [c_int, ctypes.c_uint]),
    "jitmap_arch_num_core_regs": (ctypes.c_uint, [c_int]),
    "jitmap_reg_sp": (c_int, [c_int]),
    "jitmap_reg_fp": (c_int, [c_int]),
    "jitmap_reg_pc": (c_int, [c_int]),
    "jitmap_arch_call_before": (c_bool, [c_int, c_char_p, c_size]),
    "jitmap_arch_callee_saved_writes": (c_int, [c_int, c_char_p, c_size, c_u64,
                                                P(CalleeSavedWrite), c_size]),
    "jitmap_arch_stackmap_caller_sp": (c_int, [c_int, c_u64, c_u64, P(c_u64)]),
    "jitmap_stackmap_free": (None, [c_void_p]),
    "jitmap_stackmap_byte_order": (c_int, [c_void_p]),
    "jitmap_stackmap_arch": (c_int, [c_void_p]),
    "jitmap_stackmap_num_functions": (c_size, [c_void_p]),
    "jitmap_stackmap_num_records": (c_size, [c_void_p]),
    "jitmap_stackmap_num_records_with_pc": (c_size, [c_void_p]),
    "jitmap_stackmap_function": (P(Function), [c_void_p, c_size]),
    "jitmap_stackmap_record": (P(Record), [c_void_p, c_size]),
    "jitmap_record_function": (P(Function), [c_void_p, P(Record)]),
    "jitmap_record_pc": (c_u64, [c_void_p, P(Record)]),
    "jitmap_stackmap_lookup": (c_size, [c_void_p, c_u64, P(P(Record)), c_size]),
    "jitmap_stackmap_find_id": (c_size, [c_void_p, c_u64, P(P(Record)), c_size]),
    "jitmap_stackmap_nearest": (c_int, [c_void_p, c_u64, P(P(Record)), P(P(Record))]),
    "jitmap_statepoint_decode": (c_int, [c_void_p, P(Record), P(StatepointInfo), c_void_p, c_size]),
    "jitmap_statepoint_wanted": (c_bool, [c_void_p, P(Record), c_int, P(c_u64), c_size]),
    "jitmap_index_lookup": (c_size, [c_void_p, c_u64, P(Hit), c_size]),
    "jitmap_image_open_file": (c_void_p, [c_char_p, P(Error)]),
    "jitmap_image_free": (None, [c_void_p]),
    "jitmap_image_stackmap_section": (c_int, [c_void_p, P(c_u64), P(c_u64)]),
    "jitmap_image_symbolize": (c_char_p, [c_void_p, c_u64, P(c_u64)]),
    "jitmap_image_num_symbols": (c_size, [c_void_p]),
    "jitmap_image_symbol": (c_int, [c_void_p, c_size, P(ImageSymbol)]),
    "jitmap_process_new": (c_void_p, [P(Target), P(ProcessOpts)]),
    "jitmap_process_free": (None, [c_void_p]),
    "jitmap_process_flush": (None, [c_void_p]),
    "jitmap_process_set_target": (c_int, [c_void_p, P(Target), P(Target)]),
    "jitmap_process_scan_begin": (c_int, [c_void_p]),
    "jitmap_process_scan_descriptor": (c_int, [c_void_p, c_u64, c_char_p]),
    "jitmap_process_scan_object": (c_int, [c_void_p, c_char_p, c_u64]),
    "jitmap_process_scan_end": (c_int, [c_void_p]),
    "jitmap_process_num_sources": (c_size, [c_void_p]),
    "jitmap_process_source": (c_int, [c_void_p, c_size, P(SourceInfo)]),
    "jitmap_process_source_problem": (c_char_p, [c_void_p, c_size, c_size]),
    "jitmap_process_source_note": (c_char_p, [c_void_p, c_size, c_size]),
    "jitmap_process_num_problems": (c_size, [c_void_p]),
    "jitmap_process_problem": (c_char_p, [c_void_p, c_size]),
    "jitmap_process_index": (c_void_p, [c_void_p]),
    "jitmap_process_num_layout_images": (c_size, [c_void_p]),
    "jitmap_process_num_descriptors": (c_size, [c_void_p]),
    "jitmap_process_descriptor": (c_int, [c_void_p, c_size, P(DescriptorInfo)]),
    "jitmap_compression_of": (c_char_p, [c_char_p, c_size]),
    "jitmap_core_decompress": (c_int, [c_char_p, c_void_p, c_char_p, c_size, P(Error)]),
    "jitmap_image_with_code": (c_int, [c_void_p, c_size, P(Target), c_void_p, P(c_size), P(Error)]),
    "jitmap_jit_list_read": (c_void_p, [P(Target), c_u64, c_int, c_size, P(Error)]),
    "jitmap_jit_list_free": (None, [c_void_p]),
    "jitmap_jit_list_status": (P(Error), [c_void_p]),
    "jitmap_frame_describe": (c_void_p, [c_void_p, P(FrameDesc)]),
    "jitmap_frame_report_free": (None, [c_void_p]),
    "jitmap_frame_report_num_records": (c_size, [c_void_p]),
    "jitmap_frame_report_name": (c_int, [c_void_p, c_size, c_size, c_char_p]),
    "jitmap_frame_report_add_vframe": (c_int, [c_void_p, c_size, c_int, c_u64, c_char_p, c_int,
                                               c_u64]),
    "jitmap_frame_report_add_vslot": (c_int, [c_void_p, c_size, c_bool, ctypes.c_uint32,
                                              c_char_p]),
    "jitmap_frame_report_json": (c_char_p, [c_void_p, ctypes.c_uint]),
    "jitmap_frame_report_text": (c_char_p, [c_void_p, c_int, ctypes.c_uint]),
    "jitmap_frame_report_verify": (c_char_p, [c_void_p, c_u64, c_u64]),
    "jitmap_unwind_step": (c_int, [P(UnwindCode), P(FrameRegs), P(Target), P(UnwindResult),
                                   c_char_p, c_size]),
    "jitmap_cfi_new": (c_void_p, [c_int, c_char_p, c_size, c_u64, c_char_p, c_size, P(Error)]),
    "jitmap_cfi_free": (None, [c_void_p]),
    "jitmap_cfi_covers": (c_bool, [c_void_p, c_u64, P(c_u64), P(c_u64)]),
    "jitmap_unwind_arch_regs": (c_int, [c_int, P(ctypes.c_uint), P(ctypes.c_uint),
                                        P(ctypes.c_uint)]),
    "jitmap_process_perfmap": (c_void_p, [c_void_p]),
    "jitmap_perfmap_new": (c_void_p, []),
    "jitmap_perfmap_free": (None, [c_void_p]),
    "jitmap_perfmap_add_file": (c_int, [c_void_p, c_char_p, P(Error)]),
    "jitmap_perfmap_add_process": (c_int, [c_void_p, c_int]),
    "jitmap_perfmap_add_core": (c_int, [c_void_p, c_void_p]),
    "jitmap_perfmap_lookup": (c_int, [c_void_p, c_u64, P(PerfmapSym)]),
    "jitmap_perfmap_num_files": (c_size, [c_void_p]),
    "jitmap_perfmap_file": (c_char_p, [c_void_p, c_size, P(c_size)]),
    "jitmap_perfmap_file_in_core": (c_int, [c_void_p, c_size]),
    "jitmap_perfmap_num_problems": (c_size, [c_void_p]),
    "jitmap_perfmap_problem": (c_char_p, [c_void_p, c_size]),
    "jitmap_stacker_new": (c_void_p, [c_void_p, P(Target), c_int, P(StackerOpts)]),
    "jitmap_stacker_free": (None, [c_void_p]),
    "jitmap_unwind_method_name": (c_char_p, [c_int]),
    "jitmap_stacker_step": (c_int, [c_void_p, P(FrameRegs), c_bool, P(P(StackFrame)),
                                    P(FrameRegs), P(c_bool)]),
    "jitmap_stacker_code_at": (c_int, [c_void_p, c_u64, c_bool, P(CodeInfo), P(c_u64)]),
    "jitmap_stopped_open_pid": (c_void_p, [c_int, P(StoppedOpts), P(Error)]),
    "jitmap_stopped_open_core": (c_void_p, [c_char_p, P(StoppedOpts), P(Error)]),
    "jitmap_stopped_free": (None, [c_void_p]),
    "jitmap_stopped_code_at": (c_int, [c_void_p, c_u64, c_void_p, c_size]),
    "jitmap_stopped_build_id_at": (c_size, [c_void_p, c_u64, c_void_p, c_size]),
    "jitmap_stopped_num_threads": (c_size, [c_void_p]),
    "jitmap_stopped_thread": (P(StoppedThread), [c_void_p, c_size]),
    "jitmap_stopped_memory": (c_int, [c_void_p, c_u64, P(StoppedMemoryInfo)]),
    "jitmap_stopped_find_symbol": (c_size, [c_void_p, c_char_p, P(c_u64), P(c_char_p), c_size]),
    "jitmap_image_build_id_at": (c_size, [P(Target), c_u64, c_void_p, c_size]),
}


class LibraryError(Exception):
    """libjitmap could not be found or is too old: the message says what was tried."""


_lib = None
_path = None
_preferred = None


def prefer(path):
    """Look at PATH (the reader plugin) first, if the library is not loaded yet."""
    global _preferred
    _preferred = path


def _candidates(hint):
    if _preferred:
        yield _preferred
    env = os.environ.get("JITMAP_LIBRARY")
    if env:
        yield env
        return
    if hint:
        yield os.path.join(hint, SONAME)
        yield os.path.join(hint, "libjitmap.so")
    here = os.path.dirname(os.path.abspath(__file__))
    prefix = os.path.normpath(os.path.join(here, "..", "..", "..", ".."))
    for pattern in ("lib*/" + SONAME, "lib*/*/" + SONAME):
        yield from sorted(glob.glob(os.path.join(prefix, pattern)))
    source = os.path.normpath(os.path.join(here, "..", ".."))
    if os.path.exists(os.path.join(source, "include", "jitmap", "jitmap.h")):
        built = glob.glob(os.path.join(source, "build*", "libjitmap.so"))
        yield from sorted(built, key=lambda p: -os.path.getmtime(p))
    yield SONAME


def load(hint=None):
    """Load libjitmap once (see the module's help for where it is looked for); return it."""
    global _lib, _path
    if _lib is not None:
        return _lib
    tried = []
    for path in _candidates(hint):
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (missing)")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
            continue
        missing = [name for name in _SIGNATURES if not hasattr(lib, name)]
        if missing:
            tried.append("%s (too old: no %s)" % (path, missing[0]))
            continue
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.restype = restype
            fn.argtypes = argtypes
        wrong = _mismatches(lib)
        if wrong:
            tried.append("%s (version %s, from another build than these Python files: %s)" %
                         (path, text(lib.jitmap_version()), "; ".join(wrong)))
            continue
        _lib, _path = lib, path
        return lib
    raise LibraryError("cannot load libjitmap; tried: " + "; ".join(tried) +
                       ". Set JITMAP_LIBRARY to the path of libjitmap.so")


def _mismatches(lib):
    """What differs between this module's mirrors and constants and the library's."""
    wrong = ["%s is %d bytes there, %d here" % (c, lib.jitmap_sizeof(c.encode()),
                                                 ctypes.sizeof(py))
             for c, py in _MIRRORED.items() if lib.jitmap_sizeof(c.encode()) != ctypes.sizeof(py)]
    for c, py in _MIRRORED.items():
        for f in py._fields_:
            there = lib.jitmap_offsetof(c.encode(), f[0].encode())
            if there != getattr(py, f[0]).offset:
                wrong.append("%s.%s is at %s there, %d here" % (
                    c, f[0], "no offset" if there == ctypes.c_size_t(-1).value else there,
                    getattr(py, f[0]).offset))
    value = ctypes.c_int64()
    for name, here in _CONSTANTS.items():
        if lib.jitmap_constant(name.encode(), ctypes.byref(value)) != 0 or value.value != here:
            wrong.append("%s is %s there, %d here" % (name, value.value, here))
    return wrong


def lib():
    """The loaded library (loading it with no hint if needed)."""
    return _lib if _lib is not None else load()


def path():
    return _path


def text(b):
    """A C string from the library or the inferior as str (never raises)."""
    if b is None:
        return None
    return b.decode("utf-8", "replace")


def strerror(code):
    return text(lib().jitmap_strerror(code))


def error_text(err):
    return text(err.reason) or strerror(err.code)
