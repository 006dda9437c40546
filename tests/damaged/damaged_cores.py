#!/usr/bin/env python3
"""Damaged cores: jitmap-stack, jitmap-dump and GDB with jitmap never crash or hang, and say
what is missing.

    tests/damaged/damaged_cores.py BUILD_DIR

A real core of the hand-written JIT (jitmap-handjit --abort, one JIT entry) and one of the
LLVM demo JIT (ORC, two threads) are written by the kernel; each variant below damages one
thing in a copy: the core cut short at many points (the ELF header, the program headers,
inside each note, at the segment of the JIT descriptor, of its entry, of the registered image,
of the JIT code, of the stack, the last byte), its notes (NT_PRSTATUS, NT_FILE, NT_AUXV, note
headers), its program headers, the JIT descriptor's list (a wrong version, wild pointers, a
loop, a list of thousands of entries, huge and empty images) and the registered image in
memory (a broken ELF header, section headers and a symbol table pointing outside, a stackmap
of an unknown version, function names whose bytes are not UTF-8, with control characters and
quotes).

On each, with a timeout: jitmap-stack (text and --json), jitmap-dump (text and
--format=json), `jitmap-core-handler --small --from=CORE` (and jitmap-stack on what it wrote),
`jitmap-minidump --symbols DIR CORE -o OUT.dmp` (and Breakpad's minidump_dump on what it wrote,
scripts/setup-breakpad.sh) and `gdb -batch` with jitmap.gdb (`jitmap status`, `info
stackmaps`, `bt`).
Checks:
  - no signal, no timeout; the tools' exit status as documented (jitmap-stack 1 only when no
    thread's registers can be read or the file is not a core; jitmap-dump 1 when a descriptor
    list or an entry is damaged or the file is no core, else 0; jitmap-minidump 0 with a dump
    minidump_dump reads, or 1 naming why, as jitmap-stack names it); GDB's 0 or 1;
  - a message naming what is missing (a regex per variant, over the text, the JSON's
    problems and errors, and standard error);
  - every JSON output parses and keeps its schema (jsoncontract), names with bytes that are
    not UTF-8 included, and a name's bytes come out as U+FFFD;
  - where the descriptor's list was not read to its end, or the file that defines it cannot
    be read, no count is stated: jitmap-dump's line has no "N entries" and its JSON
    entry_count is null; jitmap-stack's header says "unknown", "read" or "more may be" and its
    JSON jit_entries is null; GDB's `jitmap status` says "unknown" or "read, the rest
    unknown" and why (the control: the undamaged core's counts are stated).

Exits 77 (skipped) when the examples, the tools or gdb are missing, or the kernel writes no
core here (core_pattern pipes cores elsewhere). Prints "damaged-cores: N passed, M failed".
Environment: DAMAGED_KEEP=1 keeps the work directory; DAMAGED_ONLY=REGEX runs the variants
whose name matches.
"""
import concurrent.futures
import json
import os
import re
import resource
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
import breakpad  # noqa: E402
import jsoncontract  # noqa: E402
from tally import Tally  # noqa: E402
from corefile import Core  # noqa: E402

if len(sys.argv) != 2:
    sys.exit("usage: damaged_cores.py BUILD_DIR")
BUILD = os.path.abspath(sys.argv[1])
STACK = os.path.join(BUILD, "jitmap-stack")
DUMP = os.path.join(BUILD, "jitmap-dump")
HANDLER = os.path.join(BUILD, "jitmap-core-handler")
MINIDUMP = os.path.join(BUILD, "jitmap-minidump")
HANDJIT = os.path.join(BUILD, "examples", "handjit", "jitmap-handjit")
DEMO = os.path.join(BUILD, "examples", "llvm-jit", "jitmap-demo-jit")
JITMAP_GDB = os.path.join(BUILD, "share", "jitmap", "jitmap.gdb")
NULL_READER = os.path.join(BUILD, "tests", "gdb", "jitmap-null-reader.so")
GDB = os.environ.get("GDB_EXEC", "gdb")
TIMEOUT = 60
GDB_TIMEOUT = 45
GDB_CONTROL_TIMEOUT = 20  # GDB alone on a core it reads in seconds: longer is a hang

T = Tally("damaged-cores")
check, skip = T.check, T.skip


for f in (STACK, DUMP, HANDLER, HANDJIT):
    if not os.access(f, os.X_OK):
        skip("%s not built" % f)
if not shutil.which(GDB) or not os.path.exists(JITMAP_GDB):
    skip("no %s or no %s" % (GDB, JITMAP_GDB))
with open("/proc/sys/kernel/core_pattern") as f:
    if f.read().startswith("|"):
        skip("the kernel pipes cores elsewhere (core_pattern)")
# Breakpad's minidump_dump reads what jitmap-minidump writes (scripts/setup-breakpad.sh;
# without it, jitmap-minidump's exit status and messages are still checked).
try:
    BREAKPAD = breakpad.Tools.setup(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))) if os.access(MINIDUMP, os.X_OK) else None
except breakpad.Missing as e:
    print("damaged-cores: %s: minidump_dump is not run" % e, flush=True)
    BREAKPAD = None

WORK = tempfile.mkdtemp(prefix="jitmap-damaged-")


# -- Changing a core's bytes (its layout: tests/lib/corefile.py) --


def patch(data, at, fmt, *values):
    b = bytearray(data)
    struct.pack_into(fmt, b, at, *values)
    return bytes(b)


def patch_mem(core, vaddr, fmt, *values):
    return patch(core.data, core.offset(vaddr), fmt, *values)


def phdr_patch(core, index, field, fmt, value):
    fields = {"type": 0, "flags": 4, "offset": 8, "vaddr": 16, "filesz": 32, "memsz": 40}
    return patch(core.data, core.phoff + 56 * index + fields[field], fmt, value)


# -- Making the cores --


def make_core(name, argv):
    d = os.path.join(WORK, name)
    os.makedirs(d)

    def limits():
        resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

    with open(os.path.join(d, "out"), "w") as out:
        p = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, cwd=d, preexec_fn=limits,
                           timeout=TIMEOUT)
    cores = [c for c in os.listdir(d) if c == "core" or c.startswith("core.")]
    if p.returncode not in (-6, 134) or not cores:
        return None
    with open(os.path.join(d, cores[0]), "rb") as f:
        return f.read()


def truth(core_path):
    """What the undamaged core holds, by jitmap-dump: the descriptor, the entries, each
    entry's image and stackmap address."""
    r = subprocess.run([DUMP, "--format=json", core_path], capture_output=True, timeout=TIMEOUT)
    if r.returncode:
        sys.exit("jitmap-dump on the undamaged core %s: %s" % (core_path, r.stderr.decode()))
    d = jsoncontract.loads(r.stdout, "jitmap-dump")
    return d["descriptors"]


# -- The registered image in memory (an ELF relocatable object) --


class Image:
    def __init__(self, core, addr, size):
        self.core, self.addr, self.size = core, addr, size
        raw = core.data[core.offset(addr):core.offset(addr) + size]
        self.raw = raw
        self.shoff, = struct.unpack_from("<Q", raw, 0x28)
        self.shnum, self.shstrndx = struct.unpack_from("<HH", raw, 0x3c)
        self.sections = {}
        hdrs = [struct.unpack_from("<IIQQQQIIQQ", raw, self.shoff + 64 * i)
                for i in range(self.shnum)]
        stroff = hdrs[self.shstrndx][4]
        for i, h in enumerate(hdrs):
            name = raw[stroff + h[0]:raw.index(b"\0", stroff + h[0])].decode()
            self.sections[name] = (i, h)

    def section_header(self, name):
        return self.shoff + 64 * self.sections[name][0]

    def patch(self, at, fmt, *values):
        return patch(self.core.data, self.core.offset(self.addr) + at, fmt, *values)


# -- Running the tools --


def run(argv, timeout=TIMEOUT):
    try:
        # (in WORK: a GDB that hits an internal error may dump its own core there)
        r = subprocess.run(argv, capture_output=True, timeout=timeout, cwd=WORK)
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as e:
        return "timeout", e.stdout or b"", e.stderr or b""


def text(b):
    return b.decode("utf-8", "replace")


def gdb_argv(program, core, mode="jitmap"):
    """GDB with jitmap (its commands, then bt); the controls, bt only: GDB alone, or with a
    JIT reader that declines everything (tests/gdb/null_reader.c)."""
    argv = [GDB, "-batch", "-nx", "-iex", "set debuginfod enabled off",
            "-iex", "set pagination off", "-iex", "set width 0",
            "-iex", "maint set internal-error corefile no"]
    if mode == "jitmap":
        argv += ["-iex", "source %s" % JITMAP_GDB, "-ex", "jitmap status",
                 "-ex", "info stackmaps"]
    elif mode == "null-reader":
        argv += ["-iex", "jit-reader-load %s" % NULL_READER]
    return argv + ["-ex", "bt", program, core]


def gdb_failed(rc, said):
    """How a GDB run went wrong (a hang, a signal, an internal error), or None."""
    if rc == "timeout":
        return "it hangs"
    if rc < 0 or rc > 128:
        return "it is killed by signal %d" % (-rc if rc < 0 else rc - 128)
    if "internal-error" in said:
        return "internal error: %s" % re.search(r"internal-error: [^\n]*", said).group(0)
    return None


notes = []


def exercise(v, base):
    """Every front end on variant `v`; the checks, as (ok, message) pairs."""
    path = os.path.join(WORK, "%s.%s.core" % (base["name"], v["name"]))
    with open(path, "wb") as f:
        f.write(v["data"])
    what = "%s/%s" % (base["name"], v["name"])
    results = []

    def ok(cond, msg):
        results.append((bool(cond), "%s: %s" % (what, msg)))

    def says(cond, msg):
        """A message check; for a known gap (v["known"]), a note instead of a failure."""
        if v.get("known") and not cond:
            notes.append("%s: known gap (%s): %s" % (what, v["known"], msg.splitlines()[0]))
        else:
            ok(cond, msg)

    def status(rc, allowed, tool, err):
        ok(rc != "timeout", "%s finishes within its timeout" % tool)
        ok(rc == "timeout" or rc >= 0, "%s is not killed by a signal (%s)" % (tool, rc))
        ok(rc in allowed, "%s exits %s, as documented (%s: %s)" % (
            tool, "/".join(map(str, sorted(allowed))), rc, text(err)[-600:]))

    expect = re.compile(v["expect"], re.S)
    dump_expect = re.compile(v.get("dump_expect") or v["expect"], re.S)
    # jitmap-stack, text
    rc, out, err = run([STACK, path])
    status(rc, v["stack_rc"], "jitmap-stack", err)
    says(expect.search(text(out) + text(err)),
         "jitmap-stack names what is missing: /%s/ in:\n%s%s" % (
             v["expect"], text(err)[-1500:], text(out)[-1500:]))
    if v.get("no_count") and rc == 0:
        head = text(out).splitlines()[0] if out else ""
        ok(re.search(r"JIT entries unknown|JIT entr(y|ies) read, the rest unknown|"
                     r"JIT entr(y|ies) found, more may be in", head),
           "jitmap-stack states no count: %s" % head)
    # jitmap-stack --json
    rc, out, err = run([STACK, "--json", "--values", path])
    status(rc, v["stack_rc"], "jitmap-stack --json", err)
    if rc == 0:
        try:
            d = jsoncontract.loads(out, "jitmap-stack")
        except ValueError as e:
            ok(False, "jitmap-stack --json parses and keeps its schema: %s" % e)
        else:
            ok(True, "jitmap-stack --json parses")
            said = "\n".join(d["problems"] + [d["process"].get("error") or ""] +
                             [th.get("error") or "" for th in d["threads"]] +
                             [fr.get("error") or "" for th in d["threads"] for fr in th["frames"]])
            if not v.get("benign"):
                says(expect.search(said), "jitmap-stack --json names what is missing: /%s/ in %s"
                     % (v["expect"], said[-1500:]))
            if v.get("no_count"):
                ok(d["process"]["jit_entries"] is None and d["process"]["error"],
                   "jitmap-stack --json: no count, an error (%s)" % d["process"])
            if v.get("count") is not None:
                ok(d["process"]["jit_entries"] == v["count"] and d["process"]["error"] is None,
                   "jitmap-stack --json: %d JIT entries (%s)" % (v["count"], d["process"]))
            if v.get("names"):
                names = [fr["function"] for th in d["threads"] for fr in th["frames"]]
                ok(set(v["names"]) & set(names), "jitmap-stack --json names a frame %s (%s)" %
                   (v["names"], names))
    else:
        says(expect.search(text(err)), "jitmap-stack --json says why on stderr: /%s/ in %s" % (
            v["expect"], text(err)[-800:]))
    # jitmap-dump, text
    rc, out, err = run([DUMP, path])
    status(rc, v["dump_rc"], "jitmap-dump", err)
    says(dump_expect.search(text(out) + text(err)),
         "jitmap-dump names what is missing: /%s/ in:\n%s%s" % (
             dump_expect.pattern, text(err)[-1500:], text(out)[-1500:]))
    if v.get("no_count"):
        counted = [line for line in text(out).splitlines()
                   if re.match(r"JIT descriptor at .*: \d+ entr(y|ies)$", line)]
        ok(not counted, "jitmap-dump states no count: %s" % counted)
    # jitmap-dump --format=json
    rc, out, err = run([DUMP, "--format=json", path])
    status(rc, v["dump_rc"], "jitmap-dump --format=json", err)
    if out.strip():
        try:
            d = jsoncontract.loads(out, "jitmap-dump")
        except ValueError as e:
            ok(False, "jitmap-dump --format=json parses and keeps its schema: %s (%r)" % (e, out[:300]))
        else:
            ok(True, "jitmap-dump --format=json parses")
            if v.get("no_count"):
                ok(any(ds["entry_count"] is None and ds["problem"] for ds in d["descriptors"]),
                   "jitmap-dump --format=json: entry_count null and the problem (%s)" %
                   json.dumps(d["descriptors"])[:600])
            if v.get("count") is not None:
                ok(sum(ds["entry_count"] or 0 for ds in d["descriptors"]) >= v["count"] and
                   all(ds["entry_count"] is not None for ds in d["descriptors"]),
                   "jitmap-dump --format=json: every count stated (%s)" %
                   json.dumps(d["descriptors"])[:600])
            for want in v.get("names") or []:
                names = [f["name"] for ds in d["descriptors"] for e in ds["entries"]
                         for b in e.get("blobs", []) for f in b["functions"]]
                ok(want in names, "jitmap-dump --format=json names a function %r (%s)" % (
                    want, names))
    # jitmap-core-handler --small --from: the damaged core made small (its ranges found in
    # its own damaged memory), or passed on whole, saying why; what it writes, read again.
    small = path + ".small"
    with open(small, "wb") as f:
        try:
            r = subprocess.run([HANDLER, "--small", "--from=" + path], stdout=f,
                               stderr=subprocess.PIPE, timeout=TIMEOUT, cwd=WORK)
            rc, err = r.returncode, r.stderr
        except subprocess.TimeoutExpired as e:
            rc, err = "timeout", e.stderr or b""
    status(rc, (0, 1), "jitmap-core-handler --small", err)
    if rc == 0 and os.path.getsize(small):
        rc, out, err = run([STACK, "--json", "--values", small])
        status(rc, (0, 1), "jitmap-stack on the small core", err)
    os.unlink(small)
    # jitmap-minidump (tests/minidump): a minidump that Breakpad's minidump_dump reads, or a
    # refusal (exit 1) that says why, as jitmap-stack says it.
    if os.access(MINIDUMP, os.X_OK):
        dmp, syms = path + ".dmp", path + ".sym"
        rc, _, err = run([MINIDUMP, "--symbols", syms, path, "-o", dmp])
        status(rc, (0, 1), "jitmap-minidump", err)
        if rc == 1:
            said = "\n".join(line for line in text(err).splitlines()
                             if line.startswith("jitmap-minidump: "))
            says(expect.search(said), "jitmap-minidump says why it writes no dump: /%s/ in:\n%s"
                 % (v["expect"], text(err)[-1500:]))
        elif rc == 0 and BREAKPAD:
            rc, said = BREAKPAD.dump(dmp)
            ok(rc == 0, "minidump_dump reads jitmap-minidump's dump (exit %s: %s)" % (
                rc, said[:3]))
        if os.path.exists(dmp):
            os.unlink(dmp)
        shutil.rmtree(syms, ignore_errors=True)
    # GDB with jitmap: the commands, and the stack. A hang or a crash is jitmap's unless GDB
    # alone (the control, bt only) does the same on the same core: then it is GDB's.
    rc, out, err = run(gdb_argv(base["program"], path), timeout=GDB_TIMEOUT)
    said = text(out) + text(err)
    wrong = gdb_failed(rc, said)
    if wrong:
        same = None
        for mode in ("alone", "null-reader"):
            if mode == "null-reader" and not os.path.exists(NULL_READER):
                break
            rc0, out0, err0 = run(gdb_argv(base["program"], path, mode),
                                  timeout=GDB_CONTROL_TIMEOUT)
            control = gdb_failed(rc0, text(out0) + text(err0))
            if control and control.split(":")[0] == wrong.split(":")[0]:
                same = (mode, control)
                break
        if same:
            notes.append("%s: GDB %s fails too (%s): GDB's own, not jitmap's" % (
                what, "alone" if same[0] == "alone" else "with a JIT reader that declines "
                "everything", same[1]))
        else:
            ok(False, "gdb with jitmap: %s; GDB alone and with a null reader do not:\n%s" % (
                wrong, said[-1500:]))
    else:
        ok(rc in (0, 1), "gdb with jitmap exits 0 or 1 (%s)" % rc)
        ok("Traceback" not in said, "gdb with jitmap: no Python traceback:\n%s" % said[-1500:])
        if v.get("gdb_expect"):
            says(re.search(v["gdb_expect"], said, re.S), "gdb with jitmap says /%s/ in:\n%s" % (
                v["gdb_expect"], said[-1500:]))
        # `jitmap status`, as jitmap-stack's header: no count where a list was not read to
        # its end (GDB reads a truncated segment's bytes from the mapped file: jitmap must
        # not), the count of the undamaged core.
        if v.get("no_count") and not v.get("gdb_reads_file"):
            ok(re.search(r"^(JIT entries unknown|\d+ JIT entr(y|ies) read, the rest unknown) "
                         r"\(.*(not readable|loops|has version)", said, re.M),
               "gdb's jitmap status states no count, and why:\n%s" % said[-1500:])
        if v.get("count") is not None:
            ok(re.search(r"^%d JIT entr(y|ies), " % v["count"], said, re.M),
               "gdb's jitmap status: %d JIT entries:\n%s" % (v["count"], said[-1500:]))
    if not os.environ.get("DAMAGED_KEEP"):
        os.unlink(path)
    return results


# -- The variants --


NT_PRSTATUS, NT_AUXV, NT_FILE = 1, 6, 0x46494C45
TRUNCATED = r"truncated"
ANY_RC = {0, 1}


def variants(base):
    """The damaged copies of `base`'s core: dicts with name, data, expect (a regex naming
    what is missing, for jitmap-stack, and for jitmap-dump unless dump_expect), stack_rc and
    dump_rc (allowed exit statuses), and optionally: no_count (the descriptor's list cannot be
    read to its end; gdb_reads_file: but GDB, which finds the file itself, can), count (the control: the JIT entries stated), benign (nothing is
    missing: the JSON has no problem to name), names (function names, as the JSON must give
    them), gdb_expect, known (a gap left to another part, named: its message checks are
    notes)."""
    core = base["core"]
    data = core.data
    desc_info = base["descriptors"][0]
    desc = int(desc_info["address"], 16)
    entry = base["entry"]
    out = []

    def add(name, d, expect, stack_rc, dump_rc, **kw):
        out.append(dict(name=name, data=d, expect=expect, stack_rc=stack_rc, dump_rc=dump_rc,
                        **kw))

    # The control: the undamaged core, its count stated.
    add("undamaged", data, r"JIT entr", {0}, {0}, benign=True,
        count=sum(len(ds["entries"]) for ds in base["descriptors"]))

    # Cut short: no ELF header, no program headers, no notes. (jitmap-dump reads a file that
    # is not ELF as a raw stackmap section: docs/jitmap-dump.md.)
    for n in (0, 16, 63):
        add("cut-at-%d" % n, data[:n], r"not an ELF file \(%d bytes\)" % n, {1}, {1},
            dump_expect=r"stackmap section|not an ELF|an empty file")
    add("cut-at-64", data[:64], r"program headers", {1}, {1})
    add("cut-in-phdrs", data[:core.phoff + 56 * 10 + 20], r"truncated: 10 of its \d+ program "
        r"headers", {1}, {1})
    # Inside each note, and just after the notes.
    for at, ntype, doff, dsz in core.notes:
        for where, cut in (("start", at), ("mid", doff + dsz // 2)):
            add("cut-in-note-%#x-%s" % (ntype, where), data[:cut], TRUNCATED,
                {0, 1}, {1})
    last_note = max(doff + dsz for _, _, doff, dsz in core.notes)
    add("cut-after-notes", data[:last_note + 4], TRUNCATED, {0, 1}, {1})
    # At the segments that matter, and the last byte.
    seg = core.segment_start
    add("cut-at-descriptor-segment", data[:seg(desc)],
        r"JIT descriptor.* is not in the core: the core is truncated in segment", {0}, {1},
        no_count=True,
        gdb_expect=r"segment extending past end of file|truncated|Cannot access memory")
    add("cut-in-descriptor", data[:core.offset(desc) + 8],
        r"JIT descriptor.* is not in the core: the core is truncated in segment", {0}, {1},
        no_count=True)
    add("cut-at-entry-segment", data[:seg(entry["entry"])], r"truncated", {0}, {1})
    # (the image lies below the descriptor: the descriptor goes too)
    add("cut-in-image", data[:core.offset(entry["symfile_addr"]) + 100], TRUNCATED, {0}, {1},
        no_count=True)
    add("cut-in-stackmap", data[:core.offset(entry["stackmap"]) + 20], TRUNCATED, {0}, {0, 1})
    sp = base["sp"]
    add("cut-at-stack-segment", data[:seg(sp)], TRUNCATED, {0}, ANY_RC)
    add("cut-last-byte", data[:-1], TRUNCATED, {0}, ANY_RC)

    # Notes.
    at, _, doff, dsz = core.note(NT_PRSTATUS)
    add("prstatus-short", patch(data, at + 4, "<I", 16), r"NT_PRSTATUS|no thread", {1}, ANY_RC)
    add("prstatus-huge-descsz", patch(data, at + 4, "<I", 0xfffffff0), r"runs past|note",
        {0, 1}, ANY_RC)
    add("note-huge-namesz", patch(data, at, "<I", 0xfffffff0), r"note|NT_", {0, 1}, ANY_RC)
    regs = doff + 112
    add("prstatus-wild-registers",
        patch(patch(data, regs + 8 * 16, "<Q", 0xdead0000), regs + 8 * 19, "<Q", 0xbad0000),
        r"stack pointer 0xbad0000 is not readable", {0}, {0}, dump_expect=r"JIT entr")
    at, _, doff, dsz = core.note(NT_FILE)
    add("nt-file-count-huge", patch(data, doff, "<Q", 1 << 40), r"claims \d+ mappings", {0},
        {1})
    names = doff + 16 + 24 * struct.unpack_from("<Q", data, doff)[0]
    b = bytearray(data)
    b[names:doff + dsz] = bytes(ch or 0x78 for ch in b[names:doff + dsz])
    add("nt-file-paths-unterminated", bytes(b), r"is not terminated", {0}, {1})
    count = struct.unpack_from("<Q", data, doff)[0]
    b = bytearray(data)
    for i in range(count):
        s, e = struct.unpack_from("<QQ", b, doff + 16 + 24 * i)
        struct.pack_into("<QQ", b, doff + 16 + 24 * i, e, s)
    add("nt-file-ranges-swapped", bytes(b), r"empty range", {0}, {1})
    b = bytearray(data)
    for i in range(count):
        struct.pack_into("<Q", b, doff + 16 + 24 * i + 16, (1 << 63) + i)
    add("nt-file-offsets-huge", bytes(b), r"offset past 2\^64|cannot|not in the core", {0},
        {1})
    add("nt-file-renamed", patch(data, at + 8, "<I", 0x46494C46), r"no NT_FILE note", {0}, {1})
    # The file that defines the descriptor is not there (a core read on another machine):
    # how many entries there are is unknown.
    lib = desc_info["file"].encode()
    b = bytearray(data)
    k = b.find(lib, doff, doff + dsz)
    while k >= 0:
        b[k + len(lib) - 3:k + len(lib)] = b"zzz"
        k = b.find(lib, k + 1, doff + dsz)
    add("descriptor-file-missing", bytes(b), r"zzz \(mapped by the core\) cannot be opened",
        {0}, {1}, no_count=True, gdb_reads_file=True)
    at, _, doff, dsz = core.note(NT_AUXV)
    # (a descriptor size that is not the note's shifts every note after it: NT_FILE is lost)
    add("auxv-odd-size", patch(data, at + 4, "<I", 17), r"no NT_FILE note", {0}, {1})
    add("auxv-wild", patch(data, doff, "<QQ", 3, 0xdead000), r"JIT entr", {0}, {0},
        benign=True)

    # Program headers.
    add("phnum-65535", patch(data, 0x38, "<H", 0xffff), r"program headers", {1}, {1})
    add("phoff-past-end", patch(data, 0x20, "<Q", len(data) + 4096), r"program headers",
        {1}, {1})
    add("phentsize-32", patch(data, 0x36, "<H", 32), r"e_phentsize is 32", {0}, {0})
    di, _ = core.segment(desc)
    add("descriptor-segment-offset-past-end", phdr_patch(core, di, "offset", "<Q",
                                                        len(data) + (1 << 20)),
        r"JIT descriptor.* is not in the core: the core is truncated in segment", {0}, {1},
        no_count=True)
    add("descriptor-segment-filesz-huge",
        phdr_patch(core, di, "filesz", "<Q", 1 << 40), r"more than its 4096 in memory", {0},
        {0})
    # (the heap: the JIT entry is there too)
    ii, _ = core.segment(entry["symfile_addr"])
    add("image-segment-offset-past-end", phdr_patch(core, ii, "offset", "<Q",
                                                   len(data) + (1 << 20)),
        r"(JIT entry|image) at 0x[0-9a-f]+ .*is not readable: address 0x[0-9a-f]+ is not in "
        r"the core: the core is truncated in segment", {0}, {1})
    si, _ = core.segment(sp)
    add("stack-segment-wraps", phdr_patch(core, si, "vaddr", "<Q", 0xfffffffffffff000),
        r"wraps around the address space.*stack pointer 0x[0-9a-f]+ is not readable", {0},
        {0}, dump_expect=r"wraps around the address space")
    add("stack-segment-overlaps-descriptor's",
        phdr_patch(core, si, "vaddr", "<Q", core.phdrs[di][4]), r"overlap", {0}, ANY_RC)
    notes_ph = next(i for i, t, *_ in core.phdrs if t == 4)
    add("notes-past-end", phdr_patch(core, notes_ph, "offset", "<Q", len(data) + 8),
        r"notes at offset 0x[0-9a-f]+ are missing|no thread", {1}, {1})

    # The JIT descriptor's list.
    add("descriptor-version-7", patch_mem(core, desc, "<I", 7), r"has version 7", {0}, {1},
        no_count=True)
    add("first-entry-wild", patch_mem(core, desc + 16, "<Q", 0xdead00000000),
        r"JIT entry at 0xdead00000000 is not readable", {0}, {1}, no_count=True)
    e = entry["entry"]
    add("entry-loops-on-itself", patch_mem(core, e, "<Q", e), r"the JIT entry list loops",
        {0}, {1}, no_count=True)
    add("entry-next-wild", patch_mem(core, e, "<Q", 0x7ead00000000),
        r"JIT entry at 0x7ead00000000 is not readable", {0}, {1}, no_count=True)
    add("image-size-huge", patch_mem(core, e + 24, "<Q", 1 << 62),
        r"larger than the 256 MiB limit", {0}, {1})
    add("image-empty", patch_mem(core, e + 16, "<QQ", 0, 0), r"empty image", {0}, {1})
    add("image-wild", patch_mem(core, e + 16, "<Q", 0x6ead00000000),
        r"image at 0x6ead00000000 .*not readable", {0}, {1})
    # Thousands of entries: a chain in the unused low part of the stack, ending nowhere.
    i, off = core.segment(sp)
    low = core.phdrs[i][4]
    n = min(3000, (sp - low - 0x1000) // 32)
    b = bytearray(data)
    base_off = core.offset(low)
    for k in range(n):
        nxt = low + 32 * (k + 1) if k + 1 < n else 0x5ead00000000
        struct.pack_into("<QQQQ", b, base_off + 32 * k, nxt, 0, 0, 0)
    struct.pack_into("<Q", b, core.offset(desc + 16), low)
    add("list-of-%d-then-wild" % n, bytes(b), r"JIT entry at 0x5ead00000000 is not readable",
        {0}, {1}, no_count=True)

    # The registered image.
    img = base["image"]
    add("image-bad-magic", img.patch(0, "<I", 0x464c4500), r"ELF|magic", {0}, {1})
    add("image-shoff-outside", img.patch(0x28, "<Q", 1 << 40), r"section header|outside|past",
        {0}, {1})
    add("image-shnum-huge", img.patch(0x3c, "<H", 0xfff0), r"section header|past|outside",
        {0}, {1})
    add("image-shstrndx-outside", img.patch(0x3e, "<H", 0xfff0), r"section name|shstrndx",
        {0}, {0, 1}, known="files/elf.c names no section and says nothing: 'no "
        ".llvm_stackmaps section', the JIT frames unnamed")
    sym = img.section_header(".symtab")
    add("image-symtab-outside", img.patch(sym + 24, "<QQ", 1 << 40, 1 << 40),
        r"symtab|symbol", {0}, {0, 1}, known="files/elf_symbols.c drops a symbol table it "
        "cannot read and says nothing: the functions are '?'")
    strtab = img.sections[".strtab"][1]
    raw = img.raw
    names = {}
    for name in base["functions"]:
        at = raw.find(name.encode() + b"\0", strtab[4], strtab[4] + strtab[5])
        if at >= 0:
            names[name] = at
    b = bytearray(data)
    bad = {}
    marks = [b"\xff\xfe", b"\x01\"\\", b"\xed\xa0\x80", b"\xc3"]
    for k, (name, at) in enumerate(sorted(names.items())):
        mark = marks[k % len(marks)]
        new = (mark + name.encode()[len(mark):])[:len(name)]
        b[core.offset(img.addr) + at:core.offset(img.addr) + at + len(name)] = new
        bad[name] = new.decode("utf-8", "replace")
    add("image-names-not-utf8", bytes(b), r"JIT entr", {0}, {0}, benign=True,
        names=list(bad.values()))
    if ".llvm_stackmaps" in img.sections:
        sm = img.section_header(".llvm_stackmaps")
        add("image-stackmap-section-outside", img.patch(sm + 24, "<QQ", 1 << 40, 1 << 40),
            r"stackmap|section|past|outside", {0}, {0, 1})
    live = entry["stackmap"]
    add("live-stackmap-version-9", patch_mem(core, live, "<B", 9), r"version 9", {0}, {0, 1})
    add("live-stackmap-counts-huge", patch_mem(core, live + 4, "<III", 0xffffffff, 0xffffffff,
                                               0xffffffff), r"stackmap|records|functions",
        {0}, {0, 1})
    return out


# -- Main --


def base_core(name, argv, program):
    data = make_core(name, argv)
    if data is None:
        return None
    path = os.path.join(WORK, name, "undamaged.core")
    with open(path, "wb") as f:
        f.write(data)
    core = Core(data)
    descs = truth(path)
    with_entries = [d for d in descs if d["entries"]]
    if not with_entries:
        sys.exit("%s: no JIT entry in the undamaged core" % name)
    descs = with_entries + [d for d in descs if not d["entries"]]
    e = descs[0]["entries"][0]
    entry = {"entry": int(e["entry"], 16), "symfile_addr": int(e["symfile_addr"], 16),
             "symfile_size": e["symfile_size"], "stackmap": int(e["stackmap_address"], 16)}
    functions = [f["name"] for b in e["blobs"] for f in b["functions"] if f["name"]]
    # The first thread's stack pointer (x86-64 pr_reg: rsp is slot 19).
    _, _, doff, _ = core.note(NT_PRSTATUS)
    sp, = struct.unpack_from("<Q", data, doff + 112 + 8 * 19)
    return {"name": name, "core": core, "descriptors": descs, "entry": entry, "sp": sp,
            "image": Image(core, entry["symfile_addr"], entry["symfile_size"]),
            "functions": functions, "program": program}


def main():
    bases = []
    b = base_core("handjit", [HANDJIT, "--abort"], HANDJIT)
    if b is None:
        skip("no core from %s --abort" % HANDJIT)
    bases.append(b)
    if os.access(DEMO, os.X_OK):
        b = base_core("llvm", [DEMO, "--threads", "2", "--abort"], DEMO)
        if b:
            bases.append(b)
    only = re.compile(os.environ.get("DAMAGED_ONLY", ""))
    jobs = []
    for base in bases:
        vs = variants(base)
        if base["name"] != "handjit":  # the LLVM core: the variants that differ there
            vs = [v for v in vs if re.match(r"undamaged|cut-at-descriptor|cut-in-image|"
                                            r"entry-loops|image-names|first-entry|"
                                            r"image-segment", v["name"])]
        jobs += [(v, base) for v in vs if only.search(v["name"])]
    print("damaged-cores: %d variants of %d cores" % (len(jobs), len(bases)), flush=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        for results in ex.map(lambda j: exercise(*j), jobs):
            for cond, msg in results:
                check(cond, msg)
    for n in sorted(notes):
        print("note: %s" % n)
    status = T.summary()
    if not os.environ.get("DAMAGED_KEEP"):
        shutil.rmtree(WORK, ignore_errors=True)
    else:
        print("work: %s" % WORK)
    sys.exit(status)


main()
