"""The JIT images `stackmap load-images` gives LLDB (its JIT loader did not load them): each
written to a temporary file of this LLDB process, added as a module, and its sections that hold
stackmap functions placed at the functions' addresses.

Below the LLDB adapter (lldb_adapter.py), which asks it; imports no other module of jitmap.
"""
import glob
import os
import re
import shutil
import tempfile


_image_dir = None  # this LLDB process's directory of images, made at the first image


def image_dir():
    """The directory of the images added so far (their modules are found as JIT entries, not
    as files), or None before the first."""
    return _image_dir


def _new_image_dir():
    """A temporary directory for the images of this LLDB process. LLDB keeps the files it
    loaded modules from open, and does not always run Python's exit handlers: the directories
    of LLDB processes that are gone are removed here instead."""
    prefix = "jitmap-lldb-images-"
    for old in glob.glob(os.path.join(tempfile.gettempdir(), prefix + "*")):
        m = re.match(r"^%s(\d+)-" % prefix, os.path.basename(old))
        if not m or not os.path.isdir(old):
            continue
        try:
            os.kill(int(m.group(1)), 0)
        except ProcessLookupError:
            shutil.rmtree(old, ignore_errors=True)
        except OSError:
            pass  # alive (or not ours to signal): leave it
    return tempfile.mkdtemp(prefix="%s%d-" % (prefix, os.getpid()))


def load_image(target, src, data, fns):
    """Add one JIT image as a module; place the sections holding `fns` [(name, address)]."""
    global _image_dir
    what = src.describe()
    if _image_dir is None:
        _image_dir = _new_image_dir()
    path = os.path.join(_image_dir, "JIT-0x%x-0x%x.o" % (src.entry, src.symfile_addr))
    with open(path, "wb") as f:
        f.write(data)
    module = target.AddModule(path, None, None)
    if not module.IsValid():
        return "cannot add %s: LLDB does not read its image (%s)" % (what, path)
    placed = {}
    for name, addr in fns:
        syms = module.FindSymbols(name)
        for i in range(syms.GetSize()):
            sym = syms.GetContextAtIndex(i).GetSymbol()
            start = sym.GetStartAddress()
            sec = start.GetSection()
            if not sec.IsValid():
                continue
            load = addr - start.GetOffset()
            key = sec.GetName()
            if key in placed:
                continue
            if target.SetSectionLoadAddress(sec, load).Success():
                placed[key] = load
            break
    if not placed:
        target.RemoveModule(module)
        return "cannot add %s: none of its stackmap functions is among its symbols" % what
    return "%s: image at 0x%x added as %s; %s" % (
        what, src.symfile_addr, os.path.basename(path),
        ", ".join("%s at 0x%x" % kv for kv in sorted(placed.items())))

