"""The bodies of the commands that name the files jitmap reads the process from: core (a core
file, also one stored compressed), perf-map (perf maps and jitdump files) and load-images
(LLDB: the JIT images its loader did not load). The table (commands.py) names them.
"""
import ctypes
import errno
import os
import stat

from . import discovery as D
from . import format as F
from . import native as N
from . import perfmaps
from . import report as R

CommandError = R.CommandError


# -- core --


def run_core(ctx, opts, args):
    """Open a core file, stored compressed (systemd-coredump's) or not."""
    dbg, s = ctx.dbg, ctx.session
    if not args:
        raise CommandError("%s: which core file? (%s FILE)" % (ctx.who, ctx.who))
    path = os.path.expanduser(args[0])
    try:
        st = os.stat(path)
    except OSError as e:
        raise CommandError("%s: %s: %s" % (ctx.who, path, e.strerror)) from None
    if stat.S_ISDIR(st.st_mode):  # the debugger would close the core it has, then refuse
        raise CommandError("%s: %s: %s" % (ctx.who, path, os.strerror(errno.EISDIR)))
    head = b""
    if stat.S_ISREG(st.st_mode):  # opening a FIFO would wait for a writer
        try:
            with open(path, "rb") as f:
                head = f.read(8)
        except OSError as e:
            raise CommandError("%s: %s: %s" % (ctx.who, path, e.strerror)) from None
    N.load(getattr(dbg, "library_hint", None))
    lib = N.lib()
    codec = lib.jitmap_compression_of(head, len(head))
    if not codec:
        lines = dbg.open_core(path)
        s.keep_core_fd(None)
        s.remember_core(dbg, path)
        return lines
    err, note = N.Error(), ctypes.create_string_buffer(256)
    fd = lib.jitmap_core_decompress(path.encode(), None, note, len(note), ctypes.byref(err))
    if fd < 0:
        raise CommandError("%s: %s: %s" % (ctx.who, path, N.text(err.reason)))
    # The debugger reads the unlinked file through this process's descriptor, kept open
    # while it may read it (until the next core opened here).
    try:
        lines = dbg.open_core("/proc/%d/fd/%d" % (os.getpid(), fd))
    except BaseException:
        os.close(fd)
        raise
    s.keep_core_fd(fd)
    s.remember_core(dbg, "/proc/%d/fd/%d" % (os.getpid(), fd))
    size = os.fstat(fd).st_size
    out = ["%s: %s is a %s-compressed core: opened as the core it holds (%d bytes, in an "
           "unlinked temporary file)" % (ctx.who, path, N.text(codec), size)]
    if note.value:
        out.append("%s: warning: %s" % (ctx.who, N.text(note.value)))
    return out + list(lines or [])




# -- perf-map --


def run_perf_map(ctx, opts, args):
    dbg, s = ctx.dbg, ctx.session
    if "off" in opts or "on" in opts:
        s.perf_own = "on" in opts
        s.perf_reread(drop=True)  # without (or with) the process's own
    lines = []
    for path in args:
        path = os.path.expanduser(path)
        if os.path.isdir(path):
            raise CommandError("%s: %s: %s" % (ctx.who, path, os.strerror(errno.EISDIR)))
        probe = perfmaps.PerfMaps()
        try:
            n = probe.add_file(path)
        except OSError as e:
            raise CommandError("%s: %s: %s" % (ctx.who, path, e.strerror)) from None
        finally:
            probe.close()
        if path not in s.perf_files:
            s.perf_files.append(path)
        s.perf_reread()
        lines.append("jitmap: %s: %s" % (path, F.plural(n, "code object")))
    if args or "off" in opts or "on" in opts:
        forget = getattr(dbg, "forget_frames", None)
        if forget:
            forget()  # the frames it unwound before may now unwind otherwise
    if args:
        return lines
    try:
        maps = s.perf_maps(dbg)
    except CommandError:
        maps = None  # no process yet: what was named is read when there is one
    out = []
    for path, n, in_core in maps.files() if maps else []:
        out.append("%s%s: %s" % (path, " (in the core)" if in_core else "",
                                 F.plural(n, "code object")))
    if not out:
        out.append("No perf map or jitdump file is read%s." % (
            "" if s.perf_own else " (the process's own are not read: %s %s)" % (
                ctx.who, ctx.spelled("on"))))
    if s.perf_files:
        out.append("Named with %s: %s." % (ctx.who, ", ".join(s.perf_files)))
    problems = maps.problems() if maps else []
    if problems:
        out.append("Problems:")
        out += ["  " + p for p in problems]
    return out




# -- load-images (LLDB: its JIT loader may not have run) --


def run_load_images(ctx, opts, args):
    dbg, s = ctx.dbg, ctx.session
    catalog = s.get(dbg)
    lines = []
    added = 0
    for src in catalog.sources:
        if src.kind != "jit" or src.stackmap is None:
            continue
        fns = [(N.text(fn.name), fn.address) for _, fn in src.stackmap.functions()
               if fn.name and fn.address]
        if not fns or all(dbg.has_module_at(a) for _, a in fns):
            continue
        if src.symfile_size > D.MAX_IMAGE:
            lines.append("cannot add %s: its image is too large" % src.describe())
            continue
        try:
            data = dbg.read(src.symfile_addr, src.symfile_size)
        except D.ReadError as e:
            lines.append("cannot add %s: %s" % (src.describe(), e))
            continue
        # The debugger reads a read-only section from the file, not from the process (and
        # LLDB 19 reads an empty code section as zeros): the file carries the code.
        data, why = D.image_with_code(dbg, bytes(data))
        got = dbg.add_image(src, data, fns)
        if why and not got.startswith("cannot"):
            got += " (its code is not in the file: %s)" % why
        lines.append(got)
        if not got.startswith("cannot"):
            added += 1
    if not lines:
        lines.append("Every JIT image with a stackmap is known to LLDB already.")
    else:
        lines.append("%s added." % F.plural(added, "JIT image"))
    return lines


