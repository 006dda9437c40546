"""Stackmaps as Python objects over libjitmap handles, and a catalog of all those in a process.

Debugger-neutral (no ``import gdb``). Records are ctypes pointers into a parsed
``jitmap_stackmap``; they stay valid while the :class:`Stackmap` that owns them lives, and a
catalog keeps its stackmaps alive until the next one replaces it.
"""
import ctypes

from . import native as N


class _Closed:
    """close() when garbage-collected too (never raising from a finalizer)."""

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class Stackmap(_Closed):
    """One parsed ``.llvm_stackmaps`` section, and where it came from.

    ``source`` is a short phrase for messages ("JIT entry 0x5555...", "/usr/lib/libfoo.so");
    ``address`` and ``size`` say where its bytes were read (0 when not from memory).
    """

    def __init__(self, handle, owned, source, address=0, size=0, keep=None):
        self.lib = N.lib()
        self.handle = handle
        self._owned = owned
        self._keep = keep  # an object owning `handle` (an image), kept alive with us
        self.source = source
        self.address = address
        self.size = size
        self.notes = []  # things the user should know ("addresses from the registered copy")
        self.arch = self.lib.jitmap_stackmap_arch(handle)
        self.big_endian = self.lib.jitmap_stackmap_byte_order(handle) == N.ORDER_BIG

    def close(self):
        if self.handle and self._owned:
            self.lib.jitmap_stackmap_free(self.handle)
        self.handle = None
        self._keep = None

    # -- Counts and elements --

    @property
    def num_records(self):
        return self.lib.jitmap_stackmap_num_records(self.handle)

    @property
    def num_functions(self):
        return self.lib.jitmap_stackmap_num_functions(self.handle)

    def function(self, i):
        p = self.lib.jitmap_stackmap_function(self.handle, i)
        return p.contents if p else None

    def functions(self):
        for i in range(self.num_functions):
            yield i, self.function(i)

    def record(self, i):
        p = self.lib.jitmap_stackmap_record(self.handle, i)
        return p if p else None

    def record_function(self, rec):
        p = self.lib.jitmap_record_function(self.handle, rec)
        return p.contents if p else None

    def record_pc(self, rec):
        return self.lib.jitmap_record_pc(self.handle, rec)

    def function_name(self, rec):
        f = self.record_function(rec)
        return N.text(f.name) if f is not None and f.name else None

    # -- Lookups --

    def lookup(self, pc, max_hits=16):
        out = (ctypes.POINTER(N.Record) * max_hits)()
        n = self.lib.jitmap_stackmap_lookup(self.handle, pc, out, max_hits)
        return [out[i] for i in range(min(n, max_hits))]

    def find_id(self, record_id, max_hits=4096):
        out = (ctypes.POINTER(N.Record) * max_hits)()
        n = self.lib.jitmap_stackmap_find_id(self.handle, record_id, out, max_hits)
        return [out[i] for i in range(min(n, max_hits))]

    def nearest(self, pc):
        """(function, before, after): the function with the greatest address <= pc and its
        nearest records at or before / after pc (None when none); None if no function."""
        before = ctypes.POINTER(N.Record)()
        after = ctypes.POINTER(N.Record)()
        if self.lib.jitmap_stackmap_nearest(self.handle, pc, ctypes.byref(before),
                                            ctypes.byref(after)) != 0:
            return None
        fn = None
        for r in (before, after):
            if r:
                fn = self.record_function(r)
                break
        return fn, (before if before else None), (after if after else None)

    def records_of(self, fn):
        for k in range(fn.record_count):
            yield self.record(fn.first_record + k)

    # -- Registers and locations --

    def reg_name(self, regno):
        return N.text(self.lib.jitmap_reg_name(self.arch, regno))

    def statepoint(self, rec, mode=N.STATEPOINT_AUTO, ids=()):
        """The statepoint layout of `rec` as a dict, or None when it is not shown as one.

        Under AUTO a record is a statepoint when its shape fits; under ALL every record is
        tried (a misfit is reported in "misfit"); under NONE none is. `ids` flip the mode
        for the records they name (jitmap_statepoint_wanted)."""
        arr = (N.c_u64 * len(ids))(*ids) if ids else None
        if not self.lib.jitmap_statepoint_wanted(self.handle, rec, mode, arr, len(ids)):
            return None
        info = N.StatepointInfo()
        why = ctypes.create_string_buffer(160)
        if self.lib.jitmap_statepoint_decode(self.handle, rec, ctypes.byref(info), why,
                                             len(why)) != 0:
            if mode == N.STATEPOINT_AUTO and rec.contents.id not in ids:
                return None
            return {"misfit": N.text(why.value)}
        base = ctypes.addressof(rec.contents.locations.contents)
        size = ctypes.sizeof(N.Location)

        def first(ptr, count):
            if not count:
                return 0
            return (ctypes.cast(ptr, ctypes.c_void_p).value - base) // size

        forced = mode != N.STATEPOINT_AUTO or rec.contents.id in ids
        return {
            "calling_convention": info.calling_convention,
            "flags": info.flags,
            "deopt": list(range(first(info.deopt, info.num_deopt),
                                first(info.deopt, info.num_deopt) + info.num_deopt)),
            "gc_pairs": [(first(info.gc_pairs, info.num_gc_pairs) + 2 * i,
                          first(info.gc_pairs, info.num_gc_pairs) + 2 * i + 1)
                         for i in range(info.num_gc_pairs)],
            "gc_allocas": list(range(first(info.gc_allocas, info.num_gc_allocas),
                                     first(info.gc_allocas, info.num_gc_allocas) + info.num_gc_allocas)),
            "decoded": "forced" if forced else "shape",
        }


class Catalog(_Closed):
    """Every stackmap found in the process at one stop, with one PC index over them.

    ``sources`` are discovery's objects (each with a ``stackmap`` or None and ``problems``);
    ``problems`` are list-level problems (a corrupt descriptor list). Build with
    :meth:`build`; :meth:`close` frees the index (the stackmaps belong to the sources).
    """

    def __init__(self, sources, problems, index, process=None, descriptors=()):
        """`index` is a jitmap_index holding the sources' stackmaps (the discovery keeps it
        from one catalog to the next, so that an unchanged set is not re-sorted), and maybe
        others' (which :meth:`lookup` leaves out)."""
        self.lib = N.lib()
        self.sources = sources
        self.problems = list(problems)
        self.stackmaps = [s.stackmap for s in sources if s.stackmap is not None]
        self.index = index
        self.process = process  # the jitmap_process the sources are from
        self.descriptors = list(descriptors)  # discovery.Descriptor: each list, how far read
        # The target's byte order, as its stackmaps say (registers are read in it).
        self.big_endian = any(sm.big_endian for sm in self.stackmaps)
        self._by_handle = {sm.handle: sm for sm in self.stackmaps}
        # Whether any image carries deopt layouts (GDB's bt looks virtual frames up only then).
        self.has_layouts = bool(process) and self.lib.jitmap_process_num_layout_images(process) > 0

    def close(self):
        self.index = None

    @property
    def num_records(self):
        """Records with a PC in every stackmap (the index may hold others' too)."""
        return sum(self.lib.jitmap_stackmap_num_records_with_pc(sm.handle)
                   for sm in self.stackmaps)

    def lookup(self, pc, max_hits=16):
        """[(Stackmap, record)] at exactly `pc`."""
        out = (N.Hit * max_hits)()
        n = self.lib.jitmap_index_lookup(self.index, pc, out, max_hits)
        # The index may hold stackmaps of images a debugger handed in that no source of this
        # catalog lists (GDB's reader shares the process model): those are not this catalog's.
        return [(self._by_handle[out[i].stackmap], out[i].record)
                for i in range(min(n, max_hits)) if out[i].stackmap in self._by_handle]

    def nearest(self, pc):
        """(Stackmap, function, before, after) for the function with the greatest address
        <= pc over every stackmap, or None."""
        best = None
        for sm in self.stackmaps:
            got = sm.nearest(pc)
            if got is None or got[0] is None:
                continue
            fn, before, after = got
            if best is None or fn.address > best[1].address:
                best = (sm, fn, before, after)
        return best

    def find_id(self, record_id):
        """[(Stackmap, record)] with that ID, in every stackmap."""
        return [(sm, r) for sm in self.stackmaps for r in sm.find_id(record_id)]

    def stackmap_for_pc(self, pc):
        got = self.nearest(pc)
        return got[0] if got else None
