#!/usr/bin/env python3
"""compare_runs.py: two runs of test_frames.py with JITMAP_CONSISTENCY_SAVE compared, file by
file: the front ends' raw outputs of two builds (before and after a change that must not change
what they say; see test_frames.py's docstring for how to run them).

    tests/consistency/compare_runs.py [--path A_PATH B_PATH]... [--addresses] DIR_A DIR_B

What differs from run to run, and only that, is set aside before the texts are compared:
- the run's work directory (tempfile's jitmap-consistency-XXXXXXXX), as $WORK, and in it
  crosslib's directory of a guest core (core-XXXXXXXX) and qemu's name for the core (the
  program, the date and time, the PID), as core-$TMP/$QEMU_CORE;
- the directory lli's JIT writes its jitdump file to (LLVM's JITLoaderPerf:
  llvm-IR-jit-DATE-RANDOM), as llvm-IR-jit-$DATE;
- the PIDs and thread IDs of the case (jitmap-stack's JSON "pid" and "tid" in either of its
  views, GDB's "LWP N"), as $PID, each number wherever it stands as a word;
- each --path pair: A_PATH and B_PATH, in the files of both runs, as $PATH1, $PATH2, ... (the
  two source trees, whose paths are in the programs' debugging information; the two build
  directories; in both runs, since a run may name the other's tree: the test's fixtures are
  the test script's);
- with --addresses, every hexadecimal number of 6 digits or more, as 0xADDR (for runs with
  ASLR on; with ASLR off they repeat and are compared).

Prints a unified diff of each file that still differs, and a count. Exits 0 when every file
of both runs is the same after that, 1 otherwise.
"""
import argparse
import difflib
import json
import os
import re
import sys

WORK = re.compile(r"/[^\s\"'`]*?/jitmap-consistency-[A-Za-z0-9_]{8}")
QEMU_CORE = re.compile(r"/core-[A-Za-z0-9_]{8}/qemu_[^\s\"'`/]+_\d{8}-\d{6}_\d+\.core")
JITDUMP_DIR = re.compile(r"llvm-IR-jit-\d{8}-[0-9a-f]+")
LWP = re.compile(r"\bLWP (\d+)")
ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def ids(case_dir):
    """The case's PIDs and thread IDs: jitmap-stack's JSON, GDB's LWPs."""
    out = set()
    for name in sorted(os.listdir(case_dir)):
        text = read(os.path.join(case_dir, name))
        if name.startswith("stack-") and name.endswith("-json.txt"):
            try:
                doc = json.loads(text.split("\n--- stderr ---\n")[0])
            except ValueError:
                continue
            if doc.get("process", {}).get("pid"):
                out.add(doc["process"]["pid"])
            out.update(t["tid"] for t in doc.get("threads", []) if t.get("tid"))
        out.update(int(m) for m in LWP.findall(text))
    return out


def normalise(text, pids, paths, addresses):
    text = WORK.sub("$WORK", text)
    text = QEMU_CORE.sub("/core-$TMP/$QEMU_CORE", text)
    text = JITDUMP_DIR.sub("llvm-IR-jit-$DATE", text)
    for i, (a, b) in enumerate(paths):
        text = text.replace(a, "$PATH%d" % (i + 1)).replace(b, "$PATH%d" % (i + 1))
    if pids:
        text = re.sub(r"\b(%s)\b" % "|".join(str(p) for p in sorted(pids, reverse=True)),
                      "$PID", text)
    if addresses:
        text = ADDRESS.sub("0xADDR", text)
    return text


def files(root):
    out = set()
    for case in os.listdir(root):
        if os.path.isdir(os.path.join(root, case)):
            out.update((case, f) for f in os.listdir(os.path.join(root, case)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--path", nargs=2, action="append", default=[], metavar=("A_PATH", "B_PATH"))
    ap.add_argument("--addresses", action="store_true")
    ap.add_argument("a")
    ap.add_argument("b")
    args = ap.parse_args()
    # The longer paths first, so that a build directory inside its source tree is one name.
    pairs = sorted(args.path, key=lambda p: -max(len(p[0]), len(p[1])))
    fa, fb = files(args.a), files(args.b)
    for only, root in ((fa - fb, args.a), (fb - fa, args.b)):
        for case, f in sorted(only):
            print("only in %s: %s/%s" % (root, case, f))
    same, differ = 0, 0
    pids = {}
    for case, f in sorted(fa & fb):
        texts = []
        for root in (args.a, args.b):
            if (root, case) not in pids:
                pids[(root, case)] = ids(os.path.join(root, case))
            texts.append(normalise(read(os.path.join(root, case, f)), pids[(root, case)], pairs,
                                   args.addresses))
        if texts[0] == texts[1]:
            same += 1
            continue
        differ += 1
        sys.stdout.writelines(difflib.unified_diff(
            texts[0].splitlines(True), texts[1].splitlines(True),
            "%s/%s/%s" % (args.a, case, f), "%s/%s/%s" % (args.b, case, f)))
    print("compare_runs: %d files compared: %d the same, %d differ; %d only in one run" % (
        same + differ, same, differ, len(fa ^ fb)))
    return 0 if not differ and fa == fb else 1


if __name__ == "__main__":
    sys.exit(main())
