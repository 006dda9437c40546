#!/usr/bin/env python3
"""jitmap-stack --signature on kernel cores of the demo JIT (examples/llvm-jit), under ASLR:

- one site, 50 crashes (`--program stackmaps --abort`, each in its own directory, two at a
  time): one signature text and one hash; the first JIT key is the demo's own truth
  (`safepoint id=100 ... function=stackmaps_main`: `stackmaps_main#100`); the hash is FNV-1a
  64 of the text; no key holds an address of its run.
  Negative control: the JIT frames' PCs differ between the runs (ASLR and the JIT's placement
  were really in play), so that the same signature keyed by PC, as a pipeline keys a frame
  without a module, would have split the 50 crashes into many.
- five sites (stackmaps' two safepoints, statepoint's two in one function, a patchpoint):
  five signatures, each with the demo's function (and record ID where the return address is
  the record's PC) as its first JIT key. Recursion at depth 3 and 40: one signature (a run of
  one key counts once), a sixth.
- the text form: `signature: TEXT` and `hash: HASH` as the JSON says;
- a guess ends the signature: the core read where the demo's executable was replaced by
  another build (jitmap-demo-jit-variant): the safepoint frame keyed `jitmap-demo-jit@0xOFF`
  (its module_offset), the same in two runs, the JIT frame a guess reached left out;
- a live process (`--pause`): its first thread, with the JIT key;
- C++ names (tests/stack/cxx_block.cc, with -g and without): one signature, the names
  without parameters and return types.

Exits 77 (skipped) when the demo or jitmap-stack is missing, cores cannot be made here
(core_pattern a pipe or an absolute path) or ASLR is off (randomize_va_space not 2).
"""
import concurrent.futures
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib"))
import jsoncontract  # noqa: E402
from tally import Tally  # noqa: E402

if len(sys.argv) != 2:
    sys.exit("usage: test_signature.py BUILD_DIR")
BUILD = os.path.abspath(sys.argv[1])
STACK = os.path.join(BUILD, "jitmap-stack")
DEMO = os.path.join(BUILD, "examples", "llvm-jit", "jitmap-demo-jit")
VARIANT = os.path.join(BUILD, "examples", "llvm-jit", "jitmap-demo-jit-variant")
TIMEOUT = 120
RUNS = 50

T = Tally("test-signature")
check, skip = T.check, T.skip

for path in (STACK, DEMO):
    if not os.access(path, os.X_OK):
        skip("%s not built" % path)
with open("/proc/sys/kernel/core_pattern") as f:
    PATTERN = f.read().strip()
if PATTERN.startswith("|") or PATTERN.startswith("/"):
    skip("core_pattern %r: the kernel's cores do not land in the test's directories" % PATTERN)
with open("/proc/sys/kernel/randomize_va_space") as f:
    if f.read().strip() != "2":
        skip("ASLR is not fully on (randomize_va_space is not 2)")

WORK = tempfile.mkdtemp(prefix="jitmap-signature-test.")


def run(args, **kw):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=TIMEOUT, **kw)


def fnv1a(text):
    h = 0xcbf29ce484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return "%016x" % h


def core_limit():
    resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))


def crash(name, args, program=DEMO, keep=False, then=None):
    """Run the demo in WORK/name until it aborts; its core read by jitmap-stack --signature
    --json (after `then`, if any), the core removed unless `keep`. Returns (the JSON, the
    demo's output); None where no core was made."""
    d = os.path.join(WORK, name)
    os.makedirs(d)
    with open(os.path.join(d, "out"), "w") as out:
        p = subprocess.run([program] + args, stdout=out, stderr=subprocess.STDOUT, cwd=d,
                           preexec_fn=core_limit, timeout=TIMEOUT)
    cores = [c for c in os.listdir(d) if c == "core" or c.startswith("core.")]
    with open(os.path.join(d, "out")) as f:
        output = f.read()
    if p.returncode not in (-6, 134) or not cores:
        return None, "exit %d, no core: %s" % (p.returncode, output[-300:])
    core = os.path.join(d, cores[0])
    if then:
        then(d)
    r = run([STACK, "--signature", "--json", core])
    if not keep:
        os.unlink(core)
    if r.returncode != 0:
        return None, "jitmap-stack exit %d: %s" % (r.returncode, r.stderr.strip())
    return jsoncontract.loads(r.stdout, "jitmap-stack"), output


def truth_key(output):
    """The JIT key the demo's own output says the signature must hold: the function whose
    safepoint aborted, with its record ID where the return address is the record's PC."""
    at = re.search(r"aborting at safepoint id=(\d+) call=(\d+)", output)
    sp = at and re.search(r"safepoint id=%s call=%s .*delta=(\d+) function=(\S+)" % at.groups(),
                          output)
    if not sp:
        return None
    return sp.group(2) + ("#" + at.group(1) if sp.group(1) == "0" else "")


def jit_keys(sig):
    return [f["key"] for f in sig["frames"] if f["jit"]]


def crashed_thread(doc):
    return next(t for t in doc["threads"] if t["tid"] == doc["signature"]["thread"])


# -- One site, 50 crashes --


def one_site():
    args = ["--program", "stackmaps", "--abort"]
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda i: crash("same-%02d" % i, args), range(RUNS)))
    print("test-signature: %d crashes made and read in %.1f s" % (RUNS, time.time() - t0))
    docs = [(d, out) for d, out in results if d]
    if not docs:
        skip("no core from the demo (%s; core_pattern %r)" % (results[0][1], PATTERN))
    check(len(docs) == RUNS, "one site: all %d runs crashed with a core that jitmap-stack read "
          "(%d: %s)" % (RUNS, len(docs), [o for d, o in results if not d][:1]))
    sigs = [d["signature"] for d, _ in docs]
    texts = {s["text"] for s in sigs}
    hashes = {s["hash"] for s in sigs}
    check(len(texts) == 1 and len(hashes) == 1,
          "one site: %d crashes give 1 signature (%d: %s)" % (len(docs), len(texts), texts))
    text = sigs[0]["text"]
    print("test-signature: one site: %s" % text)
    truths = {truth_key(out) for _, out in docs}
    check(truths == {"stackmaps_main#100"}, "one site: the demo aborted in stackmaps_main at "
          "record 100 each time (%s)" % truths)
    check(all(jit_keys(s)[:1] == ["stackmaps_main#100"] for s in sigs),
          "one site: the first JIT key is the demo's stackmaps_main#100 (%s)" % jit_keys(sigs[0]))
    check(all(re.fullmatch(r"[0-9a-f]{16}", s["hash"]) and s["hash"] == fnv1a(s["text"])
              for s in sigs), "one site: the hash is FNV-1a 64 of the text, 16 hex digits")
    check(all(s["skipped"] >= 3 and s["end"] == "limit" and len(s["frames"]) == 5
              and s["guess"] is None for s in sigs),
          "one site: abort's frames skipped, 5 frames taken (%s)" % sigs[0])
    # The frames taken are the thread's own, by index; the skipped ones are abort's.
    th = crashed_thread(docs[0][0])
    by_index = {f["index"]: f for f in th["frames"]}
    skipped = [by_index[i]["function"] for i in range(sigs[0]["skipped"])]
    check("abort" in skipped and "raise" in skipped,
          "one site: the frames skipped are abort's and raise's (%s)" % skipped)
    check(all(by_index[f["index"]]["jit"] == f["jit"] for f in sigs[0]["frames"]),
          "one site: each frame taken is the thread's frame of that index")
    # No key holds an address of its run: neither a PC nor a JIT entry.
    leaked = []
    for d, _ in docs:
        th = crashed_thread(d)
        addrs = {f["pc"][2:].lstrip("0") for f in th["frames"]}
        addrs |= {f["jit_entry"][2:] for f in th["frames"] if f["jit_entry"]}
        for f in d["signature"]["frames"]:
            leaked += [f["key"] for a in addrs if a and a in f["key"]]
    check(not leaked, "one site: no key holds an address of its run (%s)" % leaked[:3])

    # Negative control: the addresses did move.
    jit_pcs = set()
    pc_keyed = set()
    for d, _ in docs:
        th = crashed_thread(d)
        by_index = {f["index"]: f for f in th["frames"]}
        used = [by_index[f["index"]] for f in d["signature"]["frames"]]
        jit_pcs |= {f["pc"] for f in used if f["jit"]}
        # a pipeline's key for a frame with no module: its address
        pc_keyed.add(" | ".join(f["module"] + "@" + f["module_offset"] if f["module"]
                                else "@" + f["pc"] for f in used))
    print("test-signature: negative control: %d distinct JIT frame PCs, %d signatures keyed by "
          "address, in %d runs" % (len(jit_pcs), len(pc_keyed), len(docs)))
    check(len(jit_pcs) >= RUNS * 9 // 10,
          "negative control: the JIT frame's PC differs between runs (ASLR, the JIT's code "
          "placement): %d distinct of %d" % (len(jit_pcs), len(docs)))
    check(len(pc_keyed) >= RUNS * 9 // 10,
          "negative control: keyed by address where there is no module, the same crashes "
          "give %d signatures" % len(pc_keyed))
    return docs[0][0]


# -- Distinct sites --


SITES = [
    ("stackmaps-1", ["--program", "stackmaps", "--abort-at", "1"]),
    ("stackmaps-2", ["--program", "stackmaps", "--abort-at", "2"]),
    ("statepoint-1", ["--program", "statepoint", "--abort-at", "1"]),
    ("statepoint-2", ["--program", "statepoint", "--abort-at", "2"]),
    ("patchpoint-2", ["--program", "patchpoint", "--abort-at", "2"]),
]


def sites():
    def one(site):
        name, args = site
        return name, crash(name, args)
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        got = dict(pool.map(one, SITES + [
            ("recursion-3", ["--program", "recursion", "--depth", "3", "--abort"]),
            ("recursion-40", ["--program", "recursion", "--depth", "40", "--abort"])]))
    texts = {}
    for name, _ in SITES:
        d, out = got[name]
        if not check(d is not None, "site %s: a core read (%s)" % (name, out)):
            continue
        want = truth_key(out)
        keys = jit_keys(d["signature"])
        check(want and keys[:1] == [want],
              "site %s: the first JIT key is the demo's %s (%s)" % (name, want, keys))
        texts[name] = d["signature"]["text"]
        print("test-signature: %s: %s" % (name, texts[name]))
    check(len(texts) == len(SITES) and len(set(texts.values())) == len(SITES),
          "%d distinct sites give %d distinct signatures (%d)" % (
              len(SITES), len(SITES), len(set(texts.values()))))
    check(texts.get("statepoint-1") != texts.get("statepoint-2"),
          "two safepoints of one function (statepoint_main, records 300 and 301) differ")
    rec = [got[n][0] for n in ("recursion-3", "recursion-40")]
    if check(all(rec), "recursion: cores read (%s)" % [got[n][1] for n in ("recursion-3",
                                                                           "recursion-40")]):
        s3, s40 = (d["signature"] for d in rec)
        check(s3["text"] == s40["text"] and s3["text"] not in texts.values(),
              "recursion at depth 3 and 40: one signature, its own (%s; %s)" % (
                  s3["text"], s40["text"]))
        check(any(f["repeats"] >= 30 for f in s40["frames"]),
              "recursion at depth 40: the recursive frames count once (%s)" % s40["frames"])


# -- The text form --


def text_form():
    d = os.path.join(WORK, "text")
    os.makedirs(d)
    subprocess.run([DEMO, "--program", "statepoint", "--abort"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, cwd=d, preexec_fn=core_limit, timeout=TIMEOUT)
    core = os.path.join(d, "core")
    if not check(os.path.exists(core), "text: a core"):
        return
    r = run([STACK, "--signature", core])
    j = jsoncontract.loads(run([STACK, "--signature", "--json", core]).stdout,
                           "jitmap-stack")["signature"]
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and lines[:2] == ["signature: " + j["text"], "hash: " + j["hash"]],
          "text: `signature: TEXT` and `hash: HASH` as --json says (%s)" % lines[:2])
    check(all(("#%-3d %s" % (f["index"], f["key"])) in r.stdout for f in j["frames"]),
          "text: each frame used, with its index:\n%s" % r.stdout)
    check("in stackmaps" not in r.stdout and "0x0000" not in r.stdout,
          "text: the signature alone, no stacks")
    plain = jsoncontract.loads(run([STACK, "--json", core]).stdout, "jitmap-stack")
    check("signature" not in plain, "without --signature, no \"signature\" field")
    os.unlink(core)


# -- A guess ends the signature --


def guessed():
    if not os.access(VARIANT, os.X_OK):
        print("test-signature: (no %s: the guess case is not run)" % VARIANT)
        return
    docs = []
    for i in range(2):
        d = os.path.join(WORK, "guess-%d" % i)
        os.makedirs(d)
        exe = os.path.join(d, "jitmap-demo-jit")
        shutil.copy(DEMO, exe)
        # The executable replaced by another build after the crash: its CFI is wrong for the
        # process's code, and the JIT frame above the safepoint is reached by a guess.
        doc, out = crash("guess-%d/run" % i, ["--program", "statepoint", "--abort"],
                         program=exe, then=lambda _: shutil.copy(VARIANT, exe))
        if not check(doc, "guess: a core read (%s)" % out):
            return
        docs.append(doc)
    s = docs[0]["signature"]
    th = crashed_thread(docs[0])
    by_index = {f["index"]: f for f in th["frames"]}
    last = by_index[s["frames"][-1]["index"]] if s["frames"] else None
    check(s["end"] == "guess" and s["guess"] and not any(f["jit"] for f in s["frames"]),
          "guess: the signature ends where a guess begins, without the guessed JIT frame (%s)"
          % s)
    check(last and not last["function"] and last["module"] == "jitmap-demo-jit"
          and s["frames"][-1]["key"] == "jitmap-demo-jit@" + last["module_offset"]
          and int(last["module_offset"], 16) != int(last["pc"], 16),
          "guess: the unnamed frame keyed by its module offset, not its address (%s; %s)" % (
              s["frames"][-1:], last))
    check(s["text"] == docs[1]["signature"]["text"],
          "guess: the same signature in two runs (%s; %s)" % (s["text"],
                                                             docs[1]["signature"]["text"]))


# -- A live process --


def live():
    out = os.path.join(WORK, "live.out")
    with open(out, "w") as o:
        p = subprocess.Popen([DEMO, "--program", "stackmaps", "--pause"], stdout=o,
                             stderr=subprocess.STDOUT)
    try:
        pid = None
        deadline = time.time() + TIMEOUT
        while time.time() < deadline and p.poll() is None and not pid:
            with open(out) as f:
                m = re.search(r"paused pid=(\d+)", f.read())
            pid = m and int(m.group(1))
            time.sleep(0.05)
        if not check(pid, "live: the demo pauses"):
            return
        r = run([STACK, "--signature", "--json", str(pid)])
        s = jsoncontract.loads(r.stdout, "jitmap-stack")["signature"]
        check(r.returncode == 0 and s["thread"] == pid and "stackmaps_main#100" in jit_keys(s),
              "live: the main thread's signature holds stackmaps_main#100 (%s)" % s)
    finally:
        p.kill()
        p.wait()


# -- C++ names: one signature with DWARF and without --


def cxx_names():
    """tests/stack/cxx_block.cc built with -g (GDB's names: `ns::outer`) and without (the
    demangled symbol: `ns::outer(ns::Box<long> const&, int)`, `unsigned long
    ns::twice<unsigned char>(unsigned char)`), blocked in pause(): one signature, the C++
    names without parameters and return types."""
    cxx = shutil.which("g++") or shutil.which("c++")
    if not cxx:
        print("test-signature: (no C++ compiler: the C++ names are not checked)")
        return
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cxx_block.cc")
    want = ["cxx-block!ns::Box<long>::wait", "cxx-block!ns::twice<unsigned char>",
            "cxx-block!ns::outer", "cxx-block!(anonymous namespace)::anon"]
    texts = []
    for flags in (["-g"], []):
        d = os.path.join(WORK, "cxx" + "".join(flags))
        os.makedirs(d)
        exe = os.path.join(d, "cxx-block")  # one name: the module's is in the keys
        r = run([cxx, "-O1"] + flags + ["-o", exe, src])
        if not check(r.returncode == 0, "C++: %s builds: %s" % (flags, r.stderr)):
            return
        p = subprocess.Popen([exe])
        try:
            deadline = time.time() + TIMEOUT
            while time.time() < deadline:  # until it sleeps in pause()
                with open("/proc/%d/stat" % p.pid) as f:
                    if f.read().rsplit(")", 1)[1].split()[0] == "S":
                        break
                time.sleep(0.05)
            r = run([STACK, "--signature", "--json", str(p.pid)])
        finally:
            p.kill()
            p.wait()
        s = jsoncontract.loads(r.stdout, "jitmap-stack")["signature"]
        keys = [f["key"] for f in s["frames"] if f["key"].startswith("cxx-block!")]
        check(keys == want, "C++ %s: the keys %s (%s)" % (flags, want, s["text"]))
        texts.append(s["text"])
    check(len(set(texts)) == 1, "C++: one signature with DWARF and without (%s)" % texts)


def main():
    try:
        one_site()
        sites()
        text_form()
        guessed()
        live()
        cxx_names()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
