"""count_opens.py: counts the core files jitmap's Python side opens through libjitmap, in a
debugger session (GDB: `python import count_opens` with this folder on sys.path; LLDB:
`command script import .../count_opens.py`), after jitmap is loaded.

Each opener of a core the library has (jitmap_stopped_open_core, and jitmap_core_open where it
still exists) is wrapped on the one library object every module of jitmap calls through
(jitmap.native.lib()), and so is each function that frees such a handle. show() prints
"core opens: N, freed: M" (opens that returned a handle; handles of those freed).
"""
import jitmap.native as N

OPENERS = ("jitmap_stopped_open_core", "jitmap_core_open")
FREERS = ("jitmap_stopped_free", "jitmap_core_free")
counts = {"open": 0, "freed": 0}
_opened = set()


def _wrap_open(lib, name):
    real = getattr(lib, name)

    def counting(*args):
        got = real(*args)
        if got:
            counts["open"] += 1
            _opened.add(got)
        return got
    setattr(lib, name, counting)


def _wrap_free(lib, name):
    real = getattr(lib, name)

    def counting(handle):
        if handle in _opened:
            counts["freed"] += 1
            _opened.discard(handle)
        return real(handle)
    setattr(lib, name, counting)


def show():
    print("core opens: %d, freed: %d" % (counts["open"], counts["freed"]), flush=True)


_lib = N.lib()
if not getattr(_lib, "_counted", False):
    _lib._counted = True
    for _name in OPENERS:
        if hasattr(_lib, _name):
            _wrap_open(_lib, _name)
    for _name in FREERS:
        if hasattr(_lib, _name):
            _wrap_free(_lib, _name)
