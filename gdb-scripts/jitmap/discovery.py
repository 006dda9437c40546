"""Find every stackmap in a process (live or a core): JIT entries and loaded objects.

Debugger-neutral (no ``import gdb``). A front end gives an *access* object:

``read(addr, size) -> bytes or memoryview``
    target memory; raises :class:`ReadError` (with the debugger's reason) when unreadable.
``jit_descriptors() -> [(address, where)]``
    addresses of ``__jit_debug_descriptor`` (several when, say, libLLVM and libjitmap each
    define one) with a word for messages.
``loaded_objects() -> [(path, section_address)]``
    ordinary loaded files (executable, shared libraries) whose ``.llvm_stackmaps`` the
    debugger has placed at ``section_address`` (ahead-of-time compiled code).

What is read, and how (the live section or the registered copy, MCJIT's unrelocated
addresses, staleness, the PC index), is libjitmap's process model (``jitmap/process.h``,
``jitmap_process``): this module only hands it the places to look and wraps what it found for
the front ends. Each stackmap is parsed once, and kept while the process keeps it.
"""
import ctypes
import errno

from . import native as N
from .stackmaps import Catalog, Stackmap

MAX_IMAGE = 256 << 20    # a registered image larger than this is not read
MAX_SECTION = 256 << 20  # nor a stackmap section
MAX_ENTRIES = 100000     # entries walked per descriptor


class ReadError(Exception):
    """Target memory that cannot be read; str() is the debugger's reason."""


class _MemTarget:
    """A jitmap_target whose read_mem goes to the current access object's read (read_reg
    unused). A KeyboardInterrupt in the callback is kept and raised once back in Python."""

    def __init__(self, access=None):
        self.access = access
        self.interrupt = None

        def interrupted(e):
            self.interrupt = e

        self._read_mem = N.read_mem_callback(lambda addr, n: self.access.read(addr, n),
                                             interrupted)
        self._read_reg = N.READ_REG(0)
        self.struct = N.Target(None, self._read_reg, self._read_mem)

    def check(self):
        if self.interrupt is not None:
            e, self.interrupt = self.interrupt, None
            raise e


# -- Sources --


class Source:
    """One source the process model found: a registered JIT entry (kind "jit") or a loaded
    file ("object"), with its stackmap (a :class:`Stackmap`, or None) and its problems."""

    def __init__(self, info, stackmap, problems):
        self.kind = "jit" if info.kind == N.SOURCE_JIT else "object"
        self.name = N.text(info.name)
        self.entry = info.entry
        self.symfile_addr = info.symfile_addr
        self.symfile_size = info.symfile_size
        self.bias = info.bias
        self.image = info.image
        self.stackmap = stackmap
        self.problems = problems
        # Addresses taken from the registered copy (the live section not relocated yet):
        # the library's count, said in the stackmap's first note.
        self.num_unrelocated = info.num_unrelocated

    def describe(self):
        return self.name

    def symbolize(self, addr):
        """(name, offset) of the image's function symbol holding addr, or None."""
        if not self.image:
            return None
        off = N.c_u64()
        name = N.lib().jitmap_image_symbolize(self.image, addr, ctypes.byref(off))
        return (N.text(name), off.value) if name else None


class Descriptor:
    """One JIT descriptor the scan walked, and how far (jitmap_descriptor_info): a count of
    its entries is known only when `readable` and `complete`; else `problem` says why not."""

    def __init__(self, info):
        self.address = info.address
        self.where = N.text(info.where)
        self.readable = info.readable
        self.complete = info.complete
        self.num_entries = info.num_entries
        self.problem = N.text(info.problem)


def image_with_code(access, data):
    """The registered image `data` as a file a debugger can be given: its empty code sections
    (SHT_NOBITS, the code left in the process) filled with the code read through `access`
    (jitmap_image_with_code). (bytes, None), or (`data` unchanged, the reason) when the code
    could not be copied."""
    lib = N.lib()
    target = _MemTarget(access)
    err = N.Error()
    need = N.c_size(0)
    rc = lib.jitmap_image_with_code(N.cbuf(data), len(data), ctypes.byref(target.struct), None,
                                    ctypes.byref(need), ctypes.byref(err))
    target.check()
    if rc == -errno.ENOSPC:  # the length of the copy
        out = ctypes.create_string_buffer(need.value or 1)
        rc = lib.jitmap_image_with_code(N.cbuf(data), len(data), ctypes.byref(target.struct), out,
                                        ctypes.byref(need), ctypes.byref(err))
        target.check()
        if rc >= 0:
            return out.raw[:need.value], None
    return data, N.error_text(err)


# -- Discovery --


def _shared(access):
    get = getattr(access, "shared_process", None)
    return get() if get else None


class Discovery:
    """Scans a process through an access object into a libjitmap process model that keeps
    what it read between scans: the debugger's own (GDB's reader plugin's, which holds the
    images GDB handed it: then each stackmap is parsed once in the session) when the access
    object has one (``shared_process()``), else one of our own."""

    def __init__(self):
        self._own = None
        self._shared = None  # (process, serial) last scanned into, or None
        self._get_shared = None
        self._target = _MemTarget()
        self._wrappers = {}  # stackmap handle -> Stackmap, kept while the process keeps it
        self.max_image = MAX_IMAGE
        self.max_entries = MAX_ENTRIES

    def __del__(self):
        try:
            if self._own:
                N.lib().jitmap_process_free(self._own)
        except Exception:
            pass

    def current(self, access):
        """Whether the process model last scanned into is still the one to use (a debugger's
        own may have gone: GDB's `jit-reader-unload`)."""
        return _shared(access) == self._shared

    def flush(self):
        """Forget everything read (the catalogs made so far must not be used any more). In
        a shared process only what our scans found goes: its images are the debugger's."""
        self._wrappers = {}
        if self._shared is not None:
            if self._get_shared is not None and self._get_shared() == self._shared:
                lib = N.lib()
                lib.jitmap_process_scan_begin(self._shared[0])
                lib.jitmap_process_scan_end(self._shared[0])
            self._shared = None
        if self._own:
            N.lib().jitmap_process_flush(self._own)

    def _process(self, access):
        shared = _shared(access)
        if shared != self._shared:
            self._wrappers = {}  # the other process's stackmaps
            self._shared = shared
            self._get_shared = getattr(access, "shared_process", None)
            if shared is not None and self._own:
                N.lib().jitmap_process_flush(self._own)
        if shared is not None:
            return shared[0]
        if self._own is None:
            lib = N.lib()
            opts = N.ProcessOpts(ctypes.sizeof(N.ProcessOpts), self.max_entries,
                                 self.max_image, MAX_SECTION)
            self._own = lib.jitmap_process_new(ctypes.byref(self._target.struct),
                                               ctypes.byref(opts))
            if not self._own:
                raise MemoryError("jitmap_process_new failed")
        return self._own

    def scan(self, access):
        """A new Catalog of everything found now. Stackmaps that went away are freed: the
        previous catalog must not be used any more. (An interrupted scan frees nothing.)"""
        lib = N.lib()
        p = self._process(access)
        self._target.access = access
        self._target.interrupt = None
        theirs = N.Target()
        lib.jitmap_process_set_target(p, ctypes.byref(self._target.struct), ctypes.byref(theirs))
        try:
            self._scan(lib, p, access)
        finally:
            lib.jitmap_process_set_target(p, ctypes.byref(theirs), None)
        return self._catalog(lib, p)

    def _scan(self, lib, p, access):
        lib.jitmap_process_scan_begin(p)
        for addr, where in access.jit_descriptors():
            rc = lib.jitmap_process_scan_descriptor(p, addr, where.encode("utf-8", "replace"))
            self._target.check()
            if rc:
                raise MemoryError("jitmap_process_scan_descriptor: %s" % N.strerror(rc))
        for path, section_address in access.loaded_objects():
            rc = lib.jitmap_process_scan_object(p, path.encode("utf-8", "replace"),
                                                section_address)
            self._target.check()
            if rc:
                raise MemoryError("jitmap_process_scan_object: %s" % N.strerror(rc))
        rc = lib.jitmap_process_scan_end(p)
        if rc:
            raise MemoryError("jitmap_process_scan_end: %s" % N.strerror(rc))

    def _catalog(self, lib, p):
        sources = []
        wrappers = {}
        info = N.SourceInfo()
        for i in range(lib.jitmap_process_num_sources(p)):
            lib.jitmap_process_source(p, i, ctypes.byref(info))
            sm = None
            if info.stackmap:
                # A stackmap two sources share (one parse) is named after the first listed.
                sm = wrappers.get(info.stackmap) or self._wrappers.get(info.stackmap)
                if sm is None:
                    sm = Stackmap(info.stackmap, False, N.text(info.name), info.section_address,
                                  info.section_size)
                sm.notes = [N.text(lib.jitmap_process_source_note(p, i, k))
                            for k in range(info.num_notes)]
                wrappers[info.stackmap] = sm
            problems = [N.text(lib.jitmap_process_source_problem(p, i, k))
                        for k in range(info.num_problems)]
            sources.append(Source(info, sm, problems))
        self._wrappers = wrappers
        problems = [N.text(lib.jitmap_process_problem(p, k))
                    for k in range(lib.jitmap_process_num_problems(p))]
        descriptors = []
        d = N.DescriptorInfo()
        for i in range(lib.jitmap_process_num_descriptors(p)):
            if lib.jitmap_process_descriptor(p, i, ctypes.byref(d)) == 0:
                descriptors.append(Descriptor(d))
        return Catalog(sources, problems, lib.jitmap_process_index(p), p, descriptors)
