"""What jitmap keeps about the debugged process between commands and stops: the
:class:`Session` (the catalog of its stackmaps, read again after anything that may change it;
the perf maps and jitdump files; the watched record IDs; the core file) and its
:class:`Settings`.

Debugger-neutral (no ``import gdb``, no ``import lldb``). One :data:`SESSION` serves every
command of the table (commands.py), GDB's frame filter and unwinders and LLDB's frame
provider; what it asks of the debugger is the :class:`commands.Debugger` protocol.
"""
import atexit
import os

from . import corefile
from . import discovery as D
from . import model as M
from . import native as N
from . import perfmaps
from . import report as R

CommandError = R.CommandError


class Settings:
    """Which records are decoded as statepoints (GDB: `set jitmap statepoints`,
    `set jitmap statepoint-ids`; LLDB: `stackmap statepoints`)."""

    MODES = {"auto": N.STATEPOINT_AUTO, "all": N.STATEPOINT_ALL, "none": N.STATEPOINT_NONE}

    def __init__(self):
        self.mode = "auto"
        self.ids = ()

    def statepoints(self):
        return self.MODES[self.mode], tuple(self.ids)

    @staticmethod
    def parse_ids(text):
        """A comma-separated list of record IDs ("" for none); ValueError if it is not."""
        return tuple(int(x, 0) for x in (text or "").replace(" ", "").split(",") if x)


class Session:
    """What jitmap knows about the debugged process: the catalog of its stackmaps (read
    again after anything that may change it), the settings, the watched record IDs, and the
    core file the debugger debugs as libjitmap reads it (one corefile.OpenCore, opened once
    for every adapter that asks: :meth:`core`)."""

    def __init__(self):
        self.discovery = D.Discovery()
        self.catalog = None
        self.settings = Settings()
        self.watched = {}  # record ID -> set of PCs with a breakpoint
        self._process = None
        self._stop = None
        self.perf_files = []  # perf maps and jitdump files the user named (perf-map FILE)
        self.perf_own = True  # a live process's own files are read (perf-map -off)
        self._perf = None     # (process key, PerfMaps, stop id of the last read)
        self.core_fd = None   # the decompressed core the debugger reads (`core FILE`)
        self.core_opened = None  # (process key, path) of the core `core FILE` opened
        self._core = None        # corefile.OpenCore of _core_path, or None (none, or refused)
        self._core_path = None   # the core file _core is (or failed to be) opened from

    def remember_core(self, dbg, path):
        """The core `core FILE` opened (for a debugger that cannot say which core it debugs:
        LLDB before 17), by the process it became."""
        try:
            self.core_opened = (dbg.check_process(), path)
        except CommandError:
            self.core_opened = None
        self.perf_reread()  # read while the core opened, before it was known

    def core_file(self, dbg, key):
        """The core file the debugger debugs, or None for a live process."""
        path = getattr(dbg, "core_file", lambda: None)()
        opened = self.core_opened
        if path is None and opened and opened[0] == key and dbg.live_pid() is None:
            path = opened[1]
        return path

    def keep_core_fd(self, fd):
        """Keep `fd`, the decompressed core the debugger now reads (None: none), and close
        the one before: its unlinked file's blocks go back to the file system."""
        if self.core_fd is not None and self.core_fd != fd:
            os.close(self.core_fd)
        self.core_fd = fd

    # -- The core file, opened once (corefile.py) --

    def core(self, path):
        """The core file at `path` as libjitmap reads it (a corefile.OpenCore), opened at the
        first question and kept while the debugger debugs it; None for a path of None (a live
        process), or when libjitmap cannot open it (tried once per path). Another path closes
        the core before."""
        if path != self._core_path:
            self.close_core()
            self._core_path = path
            if path:
                try:
                    self._core = corefile.OpenCore(path)
                except (OSError, N.LibraryError):
                    self._core = None
        return self._core

    def opened_core(self, dbg, key=None):
        """:meth:`core` of the core file `dbg` debugs (:meth:`core_file`), or None."""
        key = key if key is not None else dbg.check_process()
        return self.core(self.core_file(dbg, key))

    def held_core(self):
        """The corefile.OpenCore the session holds, or None."""
        return self._core

    def adopt_core(self, core):
        """Keep `core` (a corefile.OpenCore a front end opened to learn which core it debugs)
        as the session's, rather than open its file again."""
        if self._core is core:
            return
        self.close_core()
        self._core, self._core_path = core, core.path

    def close_core(self):
        """Close the core (the debugger's core closed or changed). The perf maps read from its
        notes go first: the library's answers point into the core."""
        if self._core is not None:
            self.perf_reread(drop=True)
            self._core.close()
        self._core = self._core_path = None

    def close(self):
        """The session ends: what it holds open is let go."""
        self.close_core()
        self.perf_reread(drop=True)
        self.keep_core_fd(None)

    def forget(self):
        self.discovery.flush()
        self.catalog = None
        self._stop = None

    def get(self, dbg, refresh=False):
        """The catalog for the current stop (scanning when something may have changed)."""
        N.load(getattr(dbg, "library_hint", None))
        key = dbg.check_process()
        if key != self._process:
            self.forget()
            self._process = key
        stop = dbg.stop_id()
        if (refresh or self.catalog is None or stop != self._stop or
                not self.discovery.current(dbg)):
            self.catalog = self.discovery.scan(dbg)
            self._stop = stop
        return self.catalog

    # -- Perf maps and jitdump files (perfmaps.py) --

    def perf_maps(self, dbg, key=None):
        """The perf maps and jitdump files of the debugged process (a perfmaps.PerfMaps),
        read again at most once per stop: those the user named, and a live process's own
        (dbg.live_pid()) unless turned off. None when none was read. `key` identifies the
        process where the caller has it (else dbg.check_process())."""
        key = key if key is not None else dbg.check_process()
        stop = getattr(dbg, "files_stop_id", dbg.stop_id)()
        core = None
        if self.perf_own and (self._perf is None or self._perf[0] != key or
                              self._perf[2] != stop):
            # First: a core that changed drops the maps read from the one before.
            core = self.opened_core(dbg, key)
        if self._perf is None or self._perf[0] != key:
            if self._perf is not None:
                self._perf[1].close()
            self._perf = [key, perfmaps.PerfMaps(), None]
        maps = self._perf[1]
        if self._perf[2] != stop:
            self._perf[2] = stop
            # A core's own first (jitmap-core-handler's notes): a file the user names by the
            # same path replaces it.
            if core is not None:
                try:
                    maps.add_core(core)
                except OSError:
                    pass  # out of memory: the core's files are not used
            for path in self.perf_files:
                try:
                    maps.add_file(path)
                except OSError:
                    pass  # a problem of the set, which says why
            pid = dbg.live_pid() if self.perf_own else None
            if pid:
                maps.add_process(pid)
        return maps if len(maps) else None

    def perf_reread(self, drop=False):
        """Read the files again at the next use; `drop`: start from none (what was read from
        files no longer wanted goes)."""
        if self._perf is None:
            return
        if drop:
            self._perf[1].close()
            self._perf = None
        else:
            self._perf[2] = None

    def perf_code(self, dbg, frame):
        """What a perf map or jitdump says of a frame's code (perfmaps.PerfMaps.lookup), or
        None."""
        try:
            maps = self.perf_maps(dbg)
        except CommandError:
            return None
        if maps is None:
            return None
        return maps.code_at(frame.pc, frame.level > 0)

    def problems(self, limit=20):
        """What went wrong reading the process, at most `limit` sentences (then a count)."""
        return R.problems(self.catalog, limit)

    def no_stackmaps(self, dbg):
        hint = getattr(dbg, "files_hint", None)
        return CommandError(R.no_stackmaps_message(self.problems(), dbg.jit_descriptors(),
                                                   dbg.loaded_objects(),
                                                   hint() if hint else None))

    def stackmaps(self, dbg):
        """The catalog, which must have stackmaps."""
        catalog = self.get(dbg)
        if not catalog.stackmaps:
            raise self.no_stackmaps(dbg)
        return catalog

    # -- Frames --

    def arch_of(self, dbg, catalog, pc):
        sm = catalog.stackmap_for_pc(pc)
        if sm is not None and sm.arch:
            return sm.arch
        try:
            arch = N.lib().jitmap_arch_from_name(dbg.arch_name().encode())
        except Exception:
            arch = N.ARCH_UNKNOWN
        return arch or N.ARCH_X86_64

    def describe(self, dbg, catalog, frame, raw=False, statepoints=None, function=None):
        """The library's model.Report of a frame object (its arch set here); `function`: a
        name for it where neither the stackmap nor the debugger has one."""
        if getattr(frame, "arch", None) is None:
            frame.arch = self.arch_of(dbg, catalog, frame.pc)
        return M.describe(catalog, frame, raw, statepoints or self.settings.statepoints(),
                          function)

    def frame_object(self, dbg, catalog, frame, raw=False, statepoints=None):
        """The contract's frame object (`info stackmap -json`) of a frame object."""
        return self.describe(dbg, catalog, frame, raw, statepoints).obj

    # -- Breakpoints by record ID --

    def unresolved(self, catalog):
        """(id, pc, function name) of each record of a watched ID without a breakpoint yet."""
        out = []
        for rid, pcs in self.watched.items():
            new = {}
            for sm, rec in catalog.find_id(rid):
                pc = sm.record_pc(rec)
                fn = sm.record_function(rec)
                if pc not in pcs and pc not in new and fn is not None and fn.address:
                    new[pc] = sm.function_name(rec)
            out += [(rid, pc, name) for pc, name in sorted(new.items())]
        return out

    def resolve(self, dbg, catalog=None):
        """Set the breakpoints that are missing; the lines that say so."""
        if not self.watched:
            return []
        lines = []
        for rid, pc, fname in self.unresolved(catalog or self.get(dbg)):
            try:
                num = dbg.break_at(pc)
            except CommandError as e:
                lines.append("jitmap: record %d at 0x%x: %s" % (rid, pc, e))
                continue
            self.watched[rid].add(pc)
            lines.append("jitmap: record %d at 0x%x (%s): breakpoint %d" % (rid, pc, fname or "?",
                                                                             num))
        return lines

    def registered(self, dbg):
        """The JIT registered or unregistered code: the lines to print (breakpoints set)."""
        if not self.watched:
            return []
        return self.resolve(dbg, self.get(dbg, refresh=True))


SESSION = Session()
atexit.register(SESSION.close)
