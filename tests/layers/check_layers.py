#!/usr/bin/env python3
"""check_layers.py [--only=c,python,length] SRC LIBJITMAP_A PRODUCER_A: the tree is in layers.

Each folder of libjitmap is a layer and uses only itself and the layers below it, by include
and by call; no two files use each other (no circle, through any number of files); the GDB
plugin and the tools sit above the library; the producer library uses the common tools alone.
Includes are read from the source, calls from the archives (nm): a call that goes up is as
wrong as an include that does, and the linker would not say so.

Also: no product file (C or Python) longer than MAX_LINES, no layer of libjitmap holding more
than MAX_SHARE of its lines, and no Python module of the
debugger front ends imports another inside a function (the way to hide a circle).

Exit 0 when all holds; 1 with each breach named, file by file. docs/architecture.md says what
each layer is for; this table is the order it describes.
"""
import ast
import collections
import os
import re
import subprocess
import sys

# Bottom first. A layer may use its own files and those of every layer before it.
LAYERS = [
    "common",    # the toolbox: bytes, errors, strings, big arrays, sorting, searching
    "arch",      # architectures: registers, roles, call sequences, instruction decoding
    "reader",    # stackmap bytes: parse, index, statepoints, deopt layouts, dialects, values
    "unwinder",  # one step: CFI, the stackmap's frame size, the code walk, frame pointers
    "files",     # what is read from files: ELF images, debug files, perf maps, jitdumps
    "targets",   # a stopped process: cores, live processes, their threads, JIT descriptors
    "model",     # the process model, the frame model, the stacker, the renderer, the ABI
    "writers",   # what is written from a stopped process: small cores, the handler's stream
]
# Folders above or beside the library, and the library folders each may use.
OTHERS = {
    "plugin": LAYERS,
    "tools": LAYERS,
    "producer": ["common"],
}
PRODUCT_PY = "gdb-scripts/jitmap"
MAX_LINES = 800
# No layer holds more than this share of libjitmap's lines: a layer that grows past it is doing
# two jobs (targets/ once read files, processes and wrote cores; it became files/, targets/ and
# writers/).
MAX_SHARE = 0.30

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(rel):
    top = rel.split("/", 1)[0]
    return top if top in LAYERS or top in OTHERS else None


def may_use(a, b):
    """Whether a file of folder `a` may use one of folder `b`."""
    if a == b:
        return True
    if a in LAYERS:
        return b in LAYERS and LAYERS.index(b) < LAYERS.index(a)
    return b in OTHERS[a]


def product_files(src):
    out = []
    for top in LAYERS + list(OTHERS):
        for root, _, files in os.walk(os.path.join(src, top)):
            for f in files:
                if f.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(root, f), src))
    return sorted(out)


def includes(src, files):
    """(file, included file) for each quoted include that names a product file."""
    edges = []
    for rel in files:
        with open(os.path.join(src, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name in INCLUDE.findall(text):
            path = os.path.normpath(os.path.join(os.path.dirname(rel), name))
            if os.path.exists(os.path.join(src, path)) and folder_of(path):
                edges.append((rel, path))
    return edges


def calls(archive, sources, folders):
    """(file, file) for each symbol one member of `archive` (built from the files of
    `folders`) takes from another, by source."""
    by_base = collections.defaultdict(list)
    for rel in sources:
        if rel.endswith(".c") and folder_of(rel) in folders:
            by_base[os.path.basename(rel)].append(rel)
    run = subprocess.run(["nm", "-A", "-P", archive], capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit("%s: nm could not read it: %s" % (archive, run.stderr.strip()))
    out = run.stdout
    defined, undefined = {}, collections.defaultdict(set)
    for line in out.splitlines():
        # libjitmap.a[process.c.o]: name T value size  (GNU nm -A -P)
        m = re.match(r"^[^\[]*\[([^\]]+)\]:\s+(\S+)\s+(\S)", line)
        if not m:
            continue
        member, name, kind = m.groups()
        src = member[:-2] if member.endswith(".o") else member
        found = by_base.get(src)
        if not found:
            raise SystemExit(f"{archive}: member {member} is no product source")
        if len(found) > 1:
            raise SystemExit(f"{archive}: member {member} could be any of {found}")
        rel = found[0]
        if kind == "U":
            undefined[rel].add(name)
        elif kind in "TDBRGSVWCui":
            defined.setdefault(name, rel)
    edges = []
    for rel, names in undefined.items():
        for name in sorted(names):
            to = defined.get(name)
            if to and to != rel:
                edges.append((rel, to, name))
    return edges


def circles(edges):
    """The strongly connected sets of more than one file (Tarjan's, iteratively)."""
    graph = collections.defaultdict(set)
    for a, b in edges:
        graph[a].add(b)
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def python_checks(src):
    """Imports inside functions, and import circles, among the front ends' modules."""
    problems, edges = [], []
    pkg = os.path.join(src, PRODUCT_PY)
    modules = {f[:-3] for f in os.listdir(pkg) if f.endswith(".py")}
    for mod in sorted(modules):
        rel = f"{PRODUCT_PY}/{mod}.py"
        with open(os.path.join(src, rel), encoding="utf-8") as f:
            tree = ast.parse(f.read(), rel)

        def imported(node):
            names = []
            if isinstance(node, ast.ImportFrom):
                if node.level == 1 and node.module:
                    names.append(node.module.split(".")[0])
                elif node.level == 1:
                    names += [a.name for a in node.names]
                elif (node.module or "").startswith("jitmap."):
                    names.append(node.module.split(".")[1])
            elif isinstance(node, ast.Import):
                names += [a.name.split(".")[1] for a in node.names
                          if a.name.startswith("jitmap.")]
            return [n for n in names if n in modules and n != mod]

        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for inner in ast.walk(node):
                    for name in imported(inner):
                        problems.append(f"{rel}:{inner.lineno}: imports {name} inside "
                                        f"{node.name}()")
        for node in ast.walk(tree):
            for name in imported(node):
                edges.append((rel, f"{PRODUCT_PY}/{name}.py"))
    for comp in circles(edges):
        problems.append("Python modules that import each other: " + " -> ".join(comp))
    return problems


def long_files(src, files):
    problems = []
    py = os.path.join(src, PRODUCT_PY)
    for rel in files + [f"{PRODUCT_PY}/{f}" for f in sorted(os.listdir(py))
                        if f.endswith(".py")]:
        with open(os.path.join(src, rel), encoding="utf-8", errors="replace") as f:
            n = sum(1 for _ in f)
        if n > MAX_LINES:
            problems.append(f"{rel}: {n} lines (more than {MAX_LINES}): split it by idea")
    per_layer = collections.Counter()
    for rel in files:
        if folder_of(rel) in LAYERS:
            with open(os.path.join(src, rel), encoding="utf-8", errors="replace") as f:
                per_layer[folder_of(rel)] += sum(1 for _ in f)
    total = sum(per_layer.values())
    for layer, n in sorted(per_layer.items()):
        if total and n > MAX_SHARE * total:
            problems.append(f"{layer}/: {n} of libjitmap's {total} lines ({100 * n / total:.0f}%, "
                            f"more than {100 * MAX_SHARE:.0f}%): a layer doing two jobs")
    return problems


CHECKS = ("c", "python", "length")


def main(argv):
    only = set(CHECKS)
    if len(argv) > 1 and argv[1].startswith("--only="):
        only = set(argv[1][len("--only="):].split(","))
        argv = argv[:1] + argv[2:]
    if len(argv) != 4 or not only <= set(CHECKS):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    src, archives = argv[1], [(argv[2], LAYERS), (argv[3], ["producer"])]
    files = product_files(src)
    problems = []
    for f in files:
        if f.count("/") != 1:
            problems.append(f"{f}: a layer's files sit in its folder, not below it")

    inc = includes(src, files) if "c" in only else []
    for a, b in inc:
        if not may_use(folder_of(a), folder_of(b)):
            problems.append(f"{a} includes {b}: {folder_of(a)} may not use {folder_of(b)}")
        elif (folder_of(a) in LAYERS and folder_of(b) not in (folder_of(a), "common")
              and not (a.endswith("/internal.h") and b.endswith("/internal.h"))):
            # A layer below is reached through this folder's internal.h, which includes the
            # internal.h of the folder below it: one header says what a folder sees.
            problems.append(f"{a} includes {b}: a file of {folder_of(a)} reaches "
                            f"{folder_of(b)} through {folder_of(a)}/internal.h")
    call = []
    for archive, folders in archives if "c" in only else []:
        call += calls(archive, files, folders)
    for a, b, name in call:
        if not may_use(folder_of(a), folder_of(b)):
            problems.append(f"{a} calls {name} of {b}: {folder_of(a)} may not use "
                            f"{folder_of(b)}")
    for comp in circles([(a, b) for a, b in inc] + [(a, b) for a, b, _ in call]):
        ties = [f"{a} -> {b} ({n})" for a, b, n in call if a in comp and b in comp]
        ties += [f"{a} includes {b}" for a, b in inc if a in comp and b in comp]
        problems.append("files that use each other: " + ", ".join(comp) + "\n    " +
                        "\n    ".join(ties))
    if "python" in only:
        problems += python_checks(src)
    if "length" in only:
        problems += long_files(src, files)

    for p in problems:
        print(p)
    n_inc = len(inc)
    n_call = len({(a, b) for a, b, _ in call})
    print(f"{len(files)} files in {len(LAYERS)} layers and {len(OTHERS)} folders beside them; "
          f"{n_inc} includes and {n_call} file-to-file calls read; "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
