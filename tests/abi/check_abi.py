#!/usr/bin/env python3
"""check_abi.py: the exported ABI is deliberate (ctest abi.symbols).

    tests/abi/check_abi.py SOURCE_DIR BUILD_DIR

For libjitmap and libjitmap-producer: the calls the public headers declare (JITMAP_API), the
names their version scripts list (cmake/*.map), and the library's dynamic symbols must be the
same set: a declaration without a definition, a call left out of the list (not exported), or a
symbol exported by accident all fail, naming the symbol. libjitmap's symbols carry the version
node of its SOVERSION (JITMAP_<n>), and gdb-scripts/jitmap/native.py loads that soname.
Exits 0 when all hold, 1 otherwise, 77 when nm or readelf is missing.
"""
import glob
import os
import re
import shutil
import subprocess
import sys

src, build = sys.argv[1], sys.argv[2]
if not shutil.which("nm") or not shutil.which("readelf"):
    print("abi: skipped: nm or readelf not found")
    sys.exit(77)
failed = 0


def check(cond, what):
    global failed
    print("%s %s" % ("PASS" if cond else "FAIL", what))
    failed += not cond


def declared(headers):
    out = set()
    for h in headers:
        text = re.sub(r"/\*.*?\*/", "", open(h).read(), flags=re.S)
        out |= set(m.group(1) for m in re.finditer(r"JITMAP_API\b[^;{]*?\b(jitmap_\w+)\s*\(", text))
    return out


def listed(mapfile):
    text = re.sub(r"/\*.*?\*/", "", open(mapfile).read(), flags=re.S)
    names = set()
    # Every node's global: part (a node added later lists its calls the same way).
    for part in re.findall(r"global:(.*?)(?:local:|\})", text, re.S):
        names |= set(n.strip() for n in part.split(";") if n.strip())
    nodes = re.findall(r"^([\w.]+)\s*\{", text, re.M)
    return names, nodes


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtDdBbRrVvWw":
            name, _, version = parts[2].partition("@")
            if name not in syms and not re.match(r"^[A-Z_0-9.]+$", name):
                syms[name] = version.lstrip("@")
    return syms


def soname(lib):
    out = subprocess.run(["readelf", "-d", lib], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    m = re.search(r"\(SONAME\)\s+Library soname: \[(.*)\]", out)
    return m.group(1) if m else None


def one(name, headers, mapfile, lib, extra=()):
    want = declared(headers)
    names, nodes = listed(mapfile)
    syms = exported(lib)
    got = set(syms)
    check(not (want - names), "%s: every declared call is in %s (missing: %s)" % (
        name, os.path.basename(mapfile), sorted(want - names)))
    check(not (names - want - set(extra)), "%s: every listed name is a declared call (not: %s)"
          % (name, sorted(names - want - set(extra))))
    check(not (want - got), "%s: every declared call is defined and exported (not: %s)" % (
        name, sorted(want - got)))
    check(not (got - want - set(extra)), "%s: nothing else is exported (also: %s)" % (
        name, sorted(got - want - set(extra))))
    versions = set(syms[n] for n in want & got)
    check(versions <= set(nodes), "%s: the symbols carry the script's version nodes %s (%s)" % (
        name, nodes, sorted(versions)))
    return nodes


public = [h for h in sorted(glob.glob(os.path.join(src, "include", "jitmap", "*.h")))
          if not h.endswith("producer.h")]
lib = os.path.join(build, "libjitmap.so")
if not os.path.exists(lib):
    print("abi: skipped: %s not built" % lib)
    sys.exit(77)
nodes = one("libjitmap", public, os.path.join(src, "cmake", "libjitmap.map"), lib)
so = soname(lib)
check(so and re.match(r"^libjitmap\.so\.\d+$", so) and
      any(n == "JITMAP_" + so.rsplit(".", 1)[1] for n in nodes),
      "libjitmap: its soname %s matches its first version node %s" % (so, nodes))
native = open(os.path.join(src, "gdb-scripts", "jitmap", "native.py")).read()
m = re.search(r'^SONAME = "([^"]+)"', native, re.M)
check(m and m.group(1) == so, "native.py loads %s, the library's soname %s" % (
    m.group(1) if m else None, so))
producer = os.path.join(build, "libjitmap-producer.so")
if os.path.exists(producer):
    one("libjitmap-producer", [os.path.join(src, "include", "jitmap", "producer.h")],
        os.path.join(src, "cmake", "libjitmap-producer.map"), producer,
        extra=("__jit_debug_descriptor", "__jit_debug_register_code"))
print("abi: %s" % ("FAILED" if failed else "ok"))
sys.exit(1 if failed else 0)
