#!/usr/bin/env python3
"""test_lldb.py: jitmap's LLDB commands against the real JIT programs (ctest lldb.commands).

    tests/lldb/test_lldb.py BUILD_DIR [TEST...]

Drives `lldb -b` (LLDB_EXEC, or lldb-16, ...; tests/debugger/harness.py) with `command script
import BUILD/share/jitmap/lldb/jitmap.py` through every scenario of tests/debugger/scenarios.py,
which GDB's test runs too: jitmap-demo-jit (LLVM ORC and MCJIT) with every value `stackmap
info --json` shows compared with the truth lines the program prints (outer frames, every
frame of a 40-deep recursion, statepoints, patchpoints; live, from a core written at a stop
and from one the program dumped itself), an ahead-of-time compiled program, the hand-written
JIT (which LLDB unwinds by itself), lli-14, `stackmap break`, every mode of the hostile
inferior (tests/hostile/hostile.c), and the negative controls (without the import,
`stackmap` is not a command). Here, what only LLDB has: the hand-written JIT's core, a core
read with LLDB's JIT loader off (`stackmap load-images`), a core session that opens its core
once (count_opens.py), the install tree, commands without a process, the hostile inferior's
cores and its 2^62-byte image.

Checks the shape and the values, not the exact text. Exits 0 when all pass, 1 when any
fails, 77 (skip) when lldb (with Python) or the programs are missing.
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "debugger"))
import harness as T  # noqa: E402
import scenarios  # noqa: E402
from harness import KEYS, Skip, check, check_record, compare, demo_truth, loc_value, read  # noqa: E402
from scenarios import check_handjit  # noqa: E402
import modes as H  # noqa: E402  (the hostile inferior's modes, shared with GDB's test)

if len(sys.argv) < 2:
    sys.exit("usage: test_lldb.py BUILD_DIR [TEST...]")
ENV = T.Env(sys.argv[1], "jitmap-lldb-")
LLDB = T.debugger(ENV, "lldb")
if LLDB is None:
    print("lldb: skipped: no lldb with Python support (lldb-16 and python3-lldb-16)")
    sys.exit(77)
if not os.path.exists(ENV.library) or not os.path.exists(ENV.entry):
    print("lldb: skipped: %s or %s not built" % (ENV.library, ENV.entry))
    sys.exit(77)
print("lldb: %s (%s)" % (LLDB.path, T.version(LLDB.path)))

RUN = T.Runner("lldb", sys.argv[2:])
test = RUN.test
scenarios.register(RUN, LLDB)
dump = LLDB.dump


def need(path, what):
    ENV.need(path, what)


def launch(out, args):
    return LLDB.launch(args, out)


# -- Core files --


@test
def abort_core_handjit():
    need(ENV.handjit, "jitmap-handjit")
    core, output = T.abort_core(ENV, "abort-handjit", ENV.handjit, [])
    s = LLDB.session("abort-handjit-load",
                     [dump("f%d" % k, "stackmap info --json %d" % k) for k in range(12)] + [dump("bt", "bt")],
                     ENV.handjit, core=core)
    objs = s.frames_with_records("f", 12)
    check([o["record"]["id"] for o in objs] == [1002, 1001], "handjit core: records %s; bt:\n%s" %
          ([o["record"]["id"] for o in objs], s.text("bt")))
    check_handjit(s, T.handjit_truth(output), "handjit core", [(objs[0]["frame"], 1002), (objs[1]["frame"], 1001)])


@test
def core_without_lldb_jit_loader():
    """LLDB's JIT loader off (as for a core whose entry list loops): LLDB alone cannot unwind
    through the hand-written JIT's frames; `stackmap load-images` gives it the images that
    jitmap found in the core, and then the frames and their values are right."""
    need(ENV.handjit, "jitmap-handjit")
    core, output = T.abort_core(ENV, "noloader-handjit", ENV.handjit, [])
    cmds = ["settings set plugin.jit-loader.gdb.enable off",
            "target create --core %s %s" % (core, ENV.handjit),
            dump("bt-before", "bt"),
            dump("load", "stackmap load-images"),
            dump("bt", "bt"),
            dump("load-again", "stackmap load-images"),
            dump("list", "stackmap list --json")]
    cmds += [dump("f%d" % k, "stackmap info --json %d" % k) for k in range(12)]
    s = LLDB.session("noloader-handjit-load", cmds, None)
    check("handjit_outer" not in s.text("bt-before"), "no loader: LLDB alone named handjit_outer?")
    check("1 JIT image added" in s.text("load"), "no loader: load-images: " + s.text("load"))
    check(re.search(r"handjit_inner \+ 80\n.*handjit_outer \+ 80\n.*`main", s.text("bt")),
          "no loader: bt after load-images:\n" + s.text("bt"))
    check("known to LLDB already" in s.text("load-again"), "no loader: load-images twice")
    check(len(s.json("list")["stackmaps"]) == 1, "no loader: the added image is not listed twice")
    objs = s.frames_with_records("f", 12)
    check([o["record"]["id"] for o in objs] == [1002, 1001], "no loader: records %s" %
          [o["record"]["id"] for o in objs])
    check_handjit(s, T.handjit_truth(output), "no loader", [(objs[0]["frame"], 1002), (objs[1]["frame"], 1001)])


@test
def core_opened_once():
    """A core session (`stackmap bt`, `stackmap info`, `stackmap perf-map`, `stackmap status`)
    opens the core once through libjitmap (tests/debugger/count_opens.py counts): the session
    holds it, and the frames' memory reads, the perf maps of its notes and the map of where
    code can be ask that one (LLDB 16, which cannot say which core it debugs, had each probe
    LLDB's mapped files again). Negative control: the counter sees that one open, and the
    values read are the program's."""
    need(ENV.handjit, "jitmap-handjit")
    core, output = T.abort_core(ENV, "once-handjit", ENV.handjit, [])
    count = os.path.join(os.path.dirname(T.__file__), "count_opens.py")
    cmds = ["command script import " + count,
            "target create --core %s %s" % (core, ENV.handjit),
            dump("bt", "stackmap bt")]
    cmds += [dump("f%d" % k, "stackmap info --json %d" % k) for k in range(12)]
    cmds += [dump("perf", "stackmap perf-map"), dump("status", "stackmap status"),
             dump("bt-again", "stackmap bt"), "script count_opens.show()"]
    s = LLDB.session("once-handjit-load", cmds, None)
    counts = re.findall(r"^core opens: (\d+), freed: (\d+)$", s.stdout, re.M)
    objs = s.frames_with_records("f", 12)
    check([o["record"]["id"] for o in objs] == [1002, 1001], "core once: records %s" %
          [o["record"]["id"] for o in objs])
    check_handjit(s, T.handjit_truth(output), "core once", [(objs[0]["frame"], 1002),
                                                            (objs[1]["frame"], 1001)])
    check(counts == [("1", "0")], "core once: the session opened the core %s times (once "
          "wanted):\n%s" % (counts, s.stdout))


# -- A function split into parts (LLDB 19) --


def _symbols(path):
    """{name: address} of the function symbols of the ELF file `path` (binutils' nm)."""
    nm = shutil.which("nm")
    if nm is None:
        raise Skip("nm not found")
    p = subprocess.run([nm, path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return {w[2]: int(w[0], 16) for w in (l.split() for l in p.stdout.decode().splitlines())
            if len(w) == 3 and w[1] in "tT"}


@test
def split_function():
    """The hand-written JIT as GCC builds it by default (jitmap-handjit-split): its safepoint
    split into a hot part and a .cold part below it (the examples are built unsplit). LLDB 16
    drops that function's DWARF (its ranges are not in address order) and goes by the ELF
    symbols: the breakpoint, the frames and the values are right. LLDB 19 makes one function
    that starts at the cold part: `breakpoint set -n` resolves to two places (one past the
    cold part, in main), and from the hot part LLDB 19 unwinds with the cold part's CFI, so
    the JIT frames are lost; jitmap says why (docs/lldb.md, "LLDB 19")."""
    exe = os.path.join(ENV.build, "tests", "jitmap-handjit-split")
    need(exe, "jitmap-handjit-split")
    syms = _symbols(exe)
    if "jitmap_handjit_safepoint.cold" not in syms:
        raise Skip("the compiler did not split jitmap_handjit_safepoint")
    out = os.path.join(ENV.dir("split"), "program.out")
    s = LLDB.session("split", [
        dump("by-name", "breakpoint set -n jitmap_handjit_safepoint"),
        "breakpoint delete 1",
        "breakpoint set -s jitmap-handjit-split -a 0x%x" % syms["jitmap_handjit_safepoint"],
        launch(out, []),
        dump("bt", "bt"),
        dump("jbt", "stackmap bt"),
        dump("f1-text", "stackmap info 1"),
        dump("f1", "stackmap info --json 1"),
        dump("f2", "stackmap info --json 2"),
    ], exe, output=out)
    major = int(re.search(r"version (\d+)", T.version(LLDB.path)).group(1))
    caveat = "LLDB 19 may have lost the callers of frame 0: jitmap_handjit_safepoint is split"
    if major == 19:
        check("2 locations" in s.text("by-name"), "split: LLDB 19 resolved the name to: " +
              s.text("by-name"))
        check(not re.search(r"frame #1: .*handjit_inner \+ 80", s.text("bt")),
              "split: LLDB 19 unwound the split function (docs/lldb.md says it cannot):\n" +
              s.text("bt"))
        check(caveat in s.text("jbt"), "split: stackmap bt without the caveat:\n" + s.text("jbt"))
        check(caveat in s.text("f1-text"), "split: stackmap info 1: " + s.text("f1-text"))
        print("lldb: observed: LLDB 19 loses the callers of a split function; jitmap says why")
    else:
        check("2 locations" not in s.text("by-name"), "split: " + s.text("by-name"))
        check(re.search(r"frame #1: .*handjit_inner \+ 80", s.text("bt")) and
              re.search(r"frame #2: .*handjit_outer \+ 80", s.text("bt")),
              "split: LLDB %d's backtrace:\n%s" % (major, s.text("bt")))
        check("split into parts" not in s.all_text(), "split: a caveat from LLDB %d" % major)
        check_handjit(s, T.handjit_truth(s.output), "split", [(1, 1002), (2, 1001)])


# -- The install tree --


@test
def installed_tree():
    """`cmake --install` into a fresh prefix, moved elsewhere: PREFIX/share/jitmap/lldb/jitmap.py
    finds the package and PREFIX/lib*/libjitmap.so.1 from its own place."""
    ENV.need_demo()
    cmake = shutil.which("cmake")
    if cmake is None:
        raise Skip("cmake not found")
    d = ENV.dir("install")
    prefix = os.path.join(d, "prefix")
    p = subprocess.run([cmake, "--install", ENV.build, "--prefix", prefix], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    check(p.returncode == 0, "cmake --install: %s" % p.stdout.decode()[-2000:])
    moved = os.path.join(d, "moved")
    os.rename(prefix, moved)
    entry = os.path.join(moved, "share", "jitmap", "lldb", "jitmap.py")
    check(os.path.exists(entry), "install: no %s" % entry)
    out = os.path.join(d, "program.out")
    s = LLDB.session("install-run", [
        "command script import %s" % entry,
        "breakpoint set -n jitmap_demo_safepoint",
        launch(out, ["--program", "stackmaps"]),
        dump("status", "stackmap status"),
        dump("f1", "stackmap info --json 1"),
        "script import jitmap.names; print('names from ' + jitmap.names.__file__)",
    ], ENV.demo, jitmap=False, library=None)
    lib = [l for l in s.text("status").splitlines() if l.startswith("libjitmap: ")]
    check(lib and lib[0].startswith("libjitmap: " + os.path.join(moved, "lib")),
          "install: libjitmap from %s" % lib)
    compare(check_record(s.json("f1"), 100, 1, "install"), KEYS[100],
            demo_truth(read(out), "stackmap", 100), "install record 100")
    check("names from " + moved in s.stdout, "install: jitmap.names not from the prefix")


# -- Without a process --


@test
def no_process():
    ENV.need_demo()
    s = LLDB.session("no-process", [
        dump("info", "stackmap info"),
        dump("list", "stackmap list"),
        dump("reimport", "command script import %s" % ENV.entry),
        dump("after", "stackmap list"),
    ], ENV.demo)
    for tag in ("info", "list", "after"):
        r = s.get(tag)
        check(not r["ok"] and "no process" in r["err"], "no process: %s: %r" % (tag, r["err"]))
    check(s.get("reimport")["ok"], "importing twice: %s" % s.get("reimport")["err"])


@test
def misuse():
    """Misuse is an error with a sentence, as in GDB (tests/gdb-commands/test_typed.py
    misuse_errors): an unknown subcommand, `stackmap break --delete` with no ID (it said
    nothing), a directory given as a core or a perf map. Negative control: the same command
    used right succeeds."""
    ENV.need_demo()
    s = LLDB.session("misuse", [
        dump("bogus", "stackmap bogus"),
        dump("delete-short", "stackmap break -d"),
        dump("delete", "stackmap break --delete"),
        dump("core-dir", "stackmap core /"),
        dump("perf-map-dir", "stackmap perf-map /"),
        dump("good", "stackmap break"),
    ], ENV.demo)
    for tag, words in (("bogus", "bogus"),
                       ("delete-short", "--delete needs the record IDs to stop watching "
                                        "(Usage: stackmap break"),
                       ("delete", "--delete needs the record IDs"),
                       ("core-dir", "stackmap core: /: Is a directory"),
                       ("perf-map-dir", "stackmap perf-map: /: Is a directory")):
        r = s.get(tag)
        check(not r["ok"] and words in r["err"] and "internal error" not in r["err"],
              "misuse: %s: %r wanted: %r" % (tag, words, r))
    r = s.get("good")
    check(r["ok"], "misuse: `stackmap break` lists the watched IDs: %r" % r)


# -- The hostile inferior --


@test
def hostile_huge_announced():
    """An image of 2^62 bytes announced through the hook: LLDB 16's JIT loader allocates it
    and aborts, with or without jitmap (LLDB's, not jitmap's: the same status both ways)."""
    need(ENV.hostile, "the hostile inferior")
    got = []
    for way in (True, False):
        name = "hostile-huge-announced" + ("" if way else "-control")
        out = os.path.join(ENV.dir(name), "program.out")
        s = LLDB.session(name, ["breakpoint set -n hostile_stop", launch(out, ["huge-announced"]),
                                dump("bt", "bt")], ENV.hostile, jitmap=way,
                         allow_fail_status=True, bad_output_ok=True)
        got.append(s.status)
    print("lldb: observed: huge-announced: status %d with jitmap, %d without" % tuple(got))
    check(got[0] == got[1], "huge-announced: jitmap changes LLDB's end: %s" % got)


# The modes whose cores are read back; LLDB 16 cannot open some with its JIT loader on
# (checked without jitmap).
CORE_MODES = ("garbage", "wild-image", "truncated", "stackmap-version", "huge", "version",
              "cycle", "self", "wild-next", "long")
LLDB_CANNOT_OPEN = ("cycle", "self", "huge")


@test
def hostile_cores():
    """Cores of the hostile inferior: jitmap answers or says why. LLDB 16's own JIT loader
    reads every entry when a core is opened, before any command: it never returns from a
    looping list and aborts (out of memory) on the 2^60-byte image. For those cores it is
    turned off; jitmap still walks the list (bounded), and `stackmap load-images` gives LLDB
    the good image."""
    need(ENV.hostile, "the hostile inferior")
    for mode in CORE_MODES:
        name = "hostile-core-" + mode
        out = os.path.join(ENV.dir(name), "program.out")
        _, core = LLDB.core_at_stop(name, ENV.hostile, ["breakpoint set -n hostile_stop", launch(out, [mode])])
        loader_off = mode in LLDB_CANNOT_OPEN
        cmds = [dump("status", "stackmap status"), dump("good", "stackmap info --json 1"),
                dump("list", "stackmap list")]
        if loader_off:
            cmds = ["settings set plugin.jit-loader.gdb.enable off",
                    "target create --core %s %s" % (core, ENV.hostile),
                    dump("load", "stackmap load-images")] + cmds
        s = LLDB.session(name + "-load", cmds, ENV.hostile if not loader_off else None,
                         core=None if loader_off else core)
        text = "\n".join(r["out"] + r["err"] for r in s.results)
        want = H.problem_re(mode, read(out))
        check(want.search(text), "hostile core %s: no /%s/ in:\n%s" % (mode, want.pattern, text[:1500]))
        if H.BY_NAME[mode].good:
            o = s.json("good")
            check(o["record"] is not None and loc_value(o["locations"][0]) == 4242,
                  "hostile core %s: record 5: %s" % (mode, o))


sys.exit(RUN.run(ENV))
