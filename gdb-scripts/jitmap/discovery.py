"""Find every stackmap in a process (live or a core): JIT entries and loaded objects.

Debugger-neutral (no ``import gdb``). A front end gives an *access* object:

``read(addr, size) -> bytes or memoryview``
    target memory; raises :class:`ReadError` (with the debugger's reason) when unreadable.
    A writable memoryview (GDB's) is passed to libjitmap without a copy.
``jit_descriptors() -> [(address, where)]``
    addresses of ``__jit_debug_descriptor`` (several when, say, libLLVM and libjitmap each
    define one) with a word for messages.
``loaded_objects() -> [(path, section_address)]``
    ordinary loaded files (executable, shared libraries) whose ``.llvm_stackmaps`` the
    debugger has placed at ``section_address`` (ahead-of-time compiled code).

JIT entries: the descriptor list is walked in C (``jitmap_jit_list_read``: cycles, a cap,
unreadable entries), each image (at most ``MAX_IMAGE`` bytes) is opened from memory, and its
stackmap is parsed from the **live** section at its ``sh_addr``: LLVM registers an unrelocated
copy, and MCJIT relocates the live section only after registering it. Function addresses that
the live section does not hold yet (0) come from the registered copy, whose relocations
libjitmap applies with the patched ``sh_addr`` values; names come from its symbols.

Caching (a JIT process can hold many entries, and each command would otherwise re-read them):
an entry is reused while its (entry, image address, image size) and the image's first bytes
are unchanged; its live section is re-read until it has been seen complete (every function
address set), then kept. :meth:`Discovery.flush` drops everything.
"""
import ctypes
import hashlib
import os

from . import native as N
from .stackmaps import Catalog, Stackmap

MAX_IMAGE = 256 << 20    # a registered image larger than this is not read
MAX_SECTION = 256 << 20  # nor a stackmap section
MAX_ENTRIES = 100000     # entries walked per descriptor
SAMPLE = 64              # image bytes compared to decide that a cached entry is the same


class ReadError(Exception):
    """Target memory that cannot be read; str() is the debugger's reason."""


def _err():
    return N.Error()


def cbuf(data):
    """`data` as something ctypes passes as a pointer: bytes as they are, a writable
    memoryview without a copy."""
    if isinstance(data, memoryview):
        if data.readonly:
            return data.tobytes()
        return (ctypes.c_char * len(data)).from_buffer(data)
    return data


class _MemTarget:
    """A jitmap_target whose read_mem goes to access.read (read_reg unused)."""

    def __init__(self, access):
        self.access = access
        self.interrupt = None

        def read_mem(_ctx, addr, buf, length, why, why_len):
            try:
                data = access.read(addr, length)
                if len(data) != length:
                    raise ReadError("short read")
                ctypes.memmove(buf, cbuf(data), length)
                return 0
            except BaseException as e:  # never let an exception cross the C frames
                if isinstance(e, KeyboardInterrupt):
                    self.interrupt = e
                msg = (str(e) or type(e).__name__).encode("utf-8", "replace")[:why_len - 1]
                ctypes.memmove(why, msg + b"\0", len(msg) + 1)
                return -14  # -EFAULT

        self._read_mem = N.READ_MEM(read_mem)
        self._read_reg = N.READ_REG(0)
        self.struct = N.Target(None, self._read_reg, self._read_mem)


# -- Sources --


class JitSource:
    """One registered JIT entry."""

    kind = "jit"

    def __init__(self, descriptor, code):
        self.descriptor = descriptor
        self.entry = code.entry
        self.symfile_addr = code.symfile_addr
        self.symfile_size = code.symfile_size
        self.sample = b""
        self.image = None
        self.section = None   # (sh_addr, size) of .llvm_stackmaps
        self.stackmap = None
        self.live_digest = None
        self.full_image = None  # the image with its stackmap copy, read when needed
        self.complete = False  # the live section had every function address
        self.problems = []
        self.arch = N.ARCH_UNKNOWN

    @property
    def key(self):
        return (self.entry, self.symfile_addr, self.symfile_size)

    def describe(self):
        return "JIT entry 0x%x" % self.entry

    def symbolize(self, addr):
        """(name, offset) of the image's function symbol holding addr, or None."""
        if not self.image:
            return None
        off = N.c_u64()
        name = N.lib().jitmap_image_symbolize(self.image, addr, ctypes.byref(off))
        return (N.text(name), off.value) if name else None

    def close(self):
        if self.stackmap is not None:
            self.stackmap.close()
        self.stackmap = None
        for img in (self.image, self.full_image):
            if img:
                N.lib().jitmap_image_free(img)
        self.image = None
        self.full_image = None


class ObjectSource:
    """A loaded file (executable or shared library) with a stackmap section."""

    kind = "object"

    def __init__(self, path, section_address):
        self.path = path
        self.section_address = section_address
        self.image = None
        self.stackmap = None
        self.problems = []
        self.bias = 0
        self.stamp = None

    @property
    def key(self):
        return ("object", self.path, self.section_address)

    def describe(self):
        return self.path

    def symbolize(self, addr):
        if not self.image:
            return None
        off = N.c_u64()
        name = N.lib().jitmap_image_symbolize(self.image, addr, ctypes.byref(off))
        return (N.text(name), off.value) if name else None

    def close(self):
        if self.stackmap is not None:
            self.stackmap.close()
        self.stackmap = None
        if self.image:
            N.lib().jitmap_image_free(self.image)
        self.image = None


# -- Discovery --


class Discovery:
    """Scans a process through an access object; keeps caches between scans."""

    def __init__(self):
        self._jit = {}      # key -> JitSource
        self._objects = {}  # key -> ObjectSource
        self._catalog = None
        self._dropped = []  # sources and stackmaps to free once no catalog refers to them
        self._index = None  # one jitmap_index over the current catalog's stackmaps
        self._indexed = set()
        self.max_image = MAX_IMAGE
        self.max_entries = MAX_ENTRIES

    def _update_index(self, stackmaps):
        """Make the index hold exactly `stackmaps` (it re-sorts only when the set changes)."""
        lib = N.lib()
        if self._index is None:
            self._index = lib.jitmap_index_new()
            if not self._index:
                raise MemoryError("jitmap_index_new failed")
        want = {sm.handle for sm in stackmaps}
        for h in self._indexed - want:
            lib.jitmap_index_remove(self._index, h)
        for h in want - self._indexed:
            if lib.jitmap_index_add(self._index, h) != 0:
                raise MemoryError("jitmap_index_add failed")
        self._indexed = want

    def flush(self):
        if self._catalog is not None:
            self._catalog.close()
        self._catalog = None
        if self._index is not None:
            N.lib().jitmap_index_free(self._index)
        self._index = None
        self._indexed = set()
        for s in list(self._jit.values()) + list(self._objects.values()) + self._dropped:
            s.close()
        self._dropped = []
        self._jit.clear()
        self._objects.clear()

    def scan(self, access):
        """A new Catalog of everything found now (the previous one is closed)."""
        lib = N.lib()
        problems = []
        sources = []
        seen = set()
        target = _MemTarget(access)
        for addr, where in access.jit_descriptors():
            err = _err()
            lst = lib.jitmap_jit_list_read(ctypes.byref(target.struct), addr, N.ORDER_AUTO,
                                           self.max_entries, ctypes.byref(err))
            if target.interrupt:
                if lst:
                    lib.jitmap_jit_list_free(lst)
                raise target.interrupt
            if not lst:
                problems.append("the JIT descriptor in %s: %s" % (where, N.error_text(err)))
                continue
            try:
                status = lib.jitmap_jit_list_status(lst).contents
                if status.code:
                    problems.append("the JIT entry list of the descriptor in %s: %s" %
                                    (where, N.error_text(status)))
                for i in range(lib.jitmap_jit_list_count(lst)):
                    code = lib.jitmap_jit_list_code(lst, i).contents
                    key = (code.entry, code.symfile_addr, code.symfile_size)
                    if key in seen:
                        continue
                    seen.add(key)
                    sources.append(self._jit_source(access, addr, code))
            finally:
                lib.jitmap_jit_list_free(lst)
        for key in [k for k in self._jit if k not in seen]:
            self._dropped.append(self._jit.pop(key))

        seen_objects = set()
        for path, section_address in access.loaded_objects():
            src = self._object_source(access, path, section_address)
            if src is not None:
                seen_objects.add(src.key)
                sources.append(src)

        self._update_index([s.stackmap for s in sources if s.stackmap is not None])
        catalog = Catalog(sources, problems, self._index)
        old = self._catalog
        self._catalog = catalog
        if old is not None:
            old.close()
        for key in [k for k in self._objects if k not in seen_objects]:
            self._dropped.append(self._objects.pop(key))
        # Free what was dropped now that no index refers to it.
        dropped, self._dropped = self._dropped, []
        for s in dropped:
            s.close()
        return catalog

    # -- JIT entries --

    def _jit_source(self, access, descriptor, code):
        key = (code.entry, code.symfile_addr, code.symfile_size)
        src = self._jit.get(key)
        if src is not None:
            try:
                sample = bytes(access.read(code.symfile_addr, min(SAMPLE, code.symfile_size)))
            except ReadError:
                sample = None
            if sample != src.sample:
                self._jit.pop(key)
                self._dropped_later(src)
                src = None
        if src is None:
            src = JitSource(descriptor, code)
            self._open_image(access, src)
            self._jit[key] = src
        if src.image and not src.complete:
            self._read_live(access, src)
        return src

    def _dropped_later(self, src):
        self._dropped.append(src)

    def _open_image(self, access, src):
        """Open the registered image without its stackmap copy (the live section is read
        instead; the copy is read only when the live section lacks addresses)."""
        lib = N.lib()
        what = src.describe()
        if src.symfile_size == 0 or src.symfile_addr == 0:
            src.problems.append("%s: empty image (address 0x%x, %d bytes)" %
                                (what, src.symfile_addr, src.symfile_size))
            return
        if src.symfile_size > self.max_image:
            src.problems.append("%s: image of %d bytes at 0x%x is larger than the %d MiB "
                                "limit; not read" % (what, src.symfile_size, src.symfile_addr,
                                                     self.max_image >> 20))
            return
        try:
            src.sample = bytes(access.read(src.symfile_addr, min(SAMPLE, src.symfile_size)))
        except ReadError as e:
            src.problems.append("%s: image at 0x%x (%d bytes) is not readable: %s" %
                                (what, src.symfile_addr, src.symfile_size, e))
            return
        img = self._image(access, src, N.IMAGE_SKIP_STACKMAP)
        if not img:
            return
        src.image = img
        src.arch = lib.jitmap_image_arch(img)
        if lib.jitmap_image_symbol_values_are_addresses(img):
            src.problems.append("%s: its function symbols hold addresses, not offsets in their "
                                "section (GDB alone places them outside it and shows ??): jitmap "
                                "names the functions from those addresses" % src.describe())
        addr, size = N.c_u64(), N.c_u64()
        if lib.jitmap_image_stackmap_section(img, ctypes.byref(addr), ctypes.byref(size)) == 0:
            src.section = (addr.value, size.value)
        else:
            src.complete = True  # nothing to read: no stackmap

    def _image(self, access, src, flags):
        lib = N.lib()
        target = _MemTarget(access)
        err = _err()
        img = lib.jitmap_image_open_target(ctypes.byref(target.struct), src.symfile_addr,
                                           src.symfile_size, flags, ctypes.byref(err))
        if target.interrupt:
            if img:
                lib.jitmap_image_free(img)
            raise target.interrupt
        if not img:
            src.problems.append("%s: image at 0x%x: offset 0x%x: %s" %
                                (src.describe(), src.symfile_addr, err.offset, N.error_text(err)))
        return img

    def _registered_copy(self, access, src):
        """The registered copy's stackmap, relocated by libjitmap (opened on first need)."""
        if src.full_image is None:
            src.full_image = self._image(access, src, 0) or 0
        if not src.full_image:
            return None
        sm = N.lib().jitmap_image_stackmap(src.full_image)
        return sm or None

    def _read_live(self, access, src):
        """(Re)parse the live section; fall back to the registered copy."""
        lib = N.lib()
        if src.section is None:
            src.complete = True
            return
        addr, size = src.section
        live = None
        problem = None
        if addr == 0:
            problem = "its .llvm_stackmaps has no load address (sh_addr 0)"
        elif size > MAX_SECTION:
            problem = ".llvm_stackmaps at 0x%x is %d bytes, over the %d MiB limit" % (
                addr, size, MAX_SECTION >> 20)
        else:
            try:
                live = access.read(addr, size)
            except ReadError as e:
                problem = ".llvm_stackmaps at 0x%x is not readable: %s" % (addr, e)
        digest = hashlib.blake2b(live, digest_size=16).digest() if live is not None else None
        if digest is not None and digest == src.live_digest and src.stackmap is not None:
            return
        old = src.stackmap
        src.stackmap = None
        src.live_digest = None
        if live is not None:
            err = _err()
            opts = N.ParseOpts(N.ORDER_AUTO, src.arch)
            h = lib.jitmap_stackmap_parse(cbuf(live), len(live), ctypes.byref(opts),
                                          ctypes.byref(err))
            if not h:
                problem = ".llvm_stackmaps at 0x%x: offset 0x%x: %s" % (
                    addr, err.offset, N.error_text(err))
            else:
                sm = Stackmap(h, True, src.describe(), addr, size)
                src.complete = self._complete(access, src, sm)
                src.stackmap = sm
                src.live_digest = digest
        if src.stackmap is None:
            copy = self._registered_copy(access, src)
            if copy:
                sm = Stackmap(copy, False, src.describe(), addr, size)
                sm.notes.append("read from the registered copy: " + (problem or "no live section"))
                src.stackmap = sm
        if problem and src.stackmap is None:
            src.problems.append("%s: %s" % (src.describe(), problem))
        elif problem:
            src.problems.append("%s: %s; using the registered copy" % (src.describe(), problem))
        if old is not None and old is not src.stackmap:
            self._dropped_later(_Closer(old))

    def _complete(self, access, src, sm):
        """Name the live stackmap's functions from the image's symbols, and fill the addresses
        it does not hold yet from the registered copy. Returns whether the live section held
        every address itself."""
        lib = N.lib()
        lib.jitmap_image_name_functions(src.image, sm.handle)
        # A function at address 0 is the only way for one to be at or before PC 0.
        zero = ctypes.POINTER(N.Record)()
        if lib.jitmap_stackmap_nearest(sm.handle, 0, ctypes.byref(zero), ctypes.byref(zero)) != 0:
            return True
        copy = self._registered_copy(access, src)
        filled = lib.jitmap_stackmap_merge(sm.handle, copy) if copy else -22
        if filled > 0:
            sm.notes.append("%d function address%s not relocated in memory yet (MCJIT before "
                            "finalization): taken from the registered copy" %
                            (filled, "" if filled == 1 else "es"))
        elif filled < 0:
            sm.notes.append("function addresses are 0 in memory, and the registered copy "
                            "does not match the live section")
        return False

    # -- Loaded objects (ahead-of-time compiled) --

    def _object_source(self, access, path, section_address):
        lib = N.lib()
        try:
            st = os.stat(path)
            stamp = (st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        key = ("object", path, section_address)
        src = self._objects.get(key)
        if src is not None and src.stamp == stamp:
            if not src.complete_live:
                self._object_live(access, src)
            return src
        if src is not None:
            self._objects.pop(key)
            self._dropped_later(src)
        src = ObjectSource(path, section_address)
        src.stamp = stamp
        src.complete_live = False
        err = _err()
        img = lib.jitmap_image_open_file(path.encode(), ctypes.byref(err))
        if not img:
            src.problems.append("%s: offset 0x%x: %s" % (path, err.offset, N.error_text(err)))
            self._objects[key] = src
            return src
        src.image = img
        addr, size = N.c_u64(), N.c_u64()
        if lib.jitmap_image_stackmap_section(img, ctypes.byref(addr), ctypes.byref(size)) != 0:
            self._objects[key] = src
            return None
        src.bias = (section_address - addr.value) & ((1 << 64) - 1)
        lib.jitmap_image_set_load_bias(img, src.bias)
        src.section = (section_address, size.value)
        self._objects[key] = src
        self._object_live(access, src)
        return src

    def _object_live(self, access, src):
        """Prefer the bytes in memory (relocated by the dynamic linker); else the file's
        section moved by the load bias."""
        lib = N.lib()
        addr, size = src.section
        live = None
        try:
            if size <= MAX_SECTION:
                live = bytes(access.read(addr, size))
        except ReadError:
            live = None
        sm = None
        if live is not None:
            err = _err()
            opts = N.ParseOpts(N.ORDER_AUTO, lib.jitmap_image_arch(src.image))
            h = lib.jitmap_stackmap_parse(live, len(live), ctypes.byref(opts), ctypes.byref(err))
            if h:
                sm = Stackmap(h, True, src.describe(), addr, size)
                if any(fn.address == 0 for _, fn in sm.functions()):
                    sm.close()
                    sm = None
        if sm is None:
            h = lib.jitmap_image_stackmap(src.image)
            if not h:
                return
            sm = Stackmap(h, False, src.describe(), addr, size)
            sm.notes.append("read from the file, moved by the load bias 0x%x" % src.bias)
        else:
            for i, fn in sm.functions():
                if not fn.name:
                    got = src.symbolize(fn.address)
                    if got and got[1] == 0:
                        lib.jitmap_stackmap_set_function_name(sm.handle, i,
                                                              got[0].encode("utf-8", "replace"))
        if src.stackmap is not None:
            self._dropped_later(_Closer(src.stackmap))
        src.stackmap = sm
        src.complete_live = True


class _Closer:
    def __init__(self, obj):
        self.obj = obj

    def close(self):
        self.obj.close()
