"""What each front end says about every frame of one stopped thread, as compare.View objects.

- GDB: typed commands in one batch session (`gdb -batch -nx -iex 'source jitmap.gdb' -ex ...`,
  as a user types them): `bt`, then for N = 0, 1, ... `info stackmap -json N` and
  `info stackmap N`, each after an `echo ==TAG` line that splits the output; stdout and stderr
  in one pipe, so that a command's error stays under its tag. Batch GDB goes on after a failing
  -ex command. Attached to a process (-p), on a core, or over qemu's GDB stub.
- LLDB: `stackmap info --json N` and `stackmap info N` through the debugger tests' prelude
  (tests/debugger/lldb_prelude.py: `jtdump` runs each command through LLDB's command
  interpreter, as typed, and keeps its output and error apart; `lldb -b` itself stops at the
  first failing command, and `stackmap info N` fails on a frame at no record).
- jitmap-stack: `--json --values` and `--values` (the text), on a core or a live process; the
  thread compared is the first one it lists (a core's signalled thread, a process's main one).
- jitmap-dump: `--format=json` on the core: every record by (ID, PC).

JITMAP_CONSISTENCY_SAVE=DIR: each front end's raw output, the text its view is built from, is
also written to DIR/CASE/KEY.txt (save()), to compare two builds' answers (compare_runs.py).
"""
import os
import re
import subprocess

import harness as T
from compare import Frame, View
import jsoncontract  # noqa: E402

GDB_SETUP = ["set debuginfod enabled off", "set pagination off", "set width 0", "set height 0",
             "set confirm off"]
NO_FRAME = re.compile(r"there is no frame (\d+)")
SAVE = os.environ.get("JITMAP_CONSISTENCY_SAVE")


class ToolFailed(Exception):
    pass


def save(case, key, text):
    """JITMAP_CONSISTENCY_SAVE=DIR: `text` as DIR/CASE/KEY.txt. KEY: gdb-core, gdb-live,
    lldb-core, lldb-live, stack-core-json, stack-core-text, stack-live-json, stack-live-text,
    dump. Not the command lines: their paths and PIDs are the run's."""
    if not SAVE:
        return
    d = os.path.join(SAVE, case)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, key + ".txt"), "w") as f:
        f.write(text)


def _run(argv, where, name, timeout=T.TIMEOUT, env=None, merge=False):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT if merge else subprocess.PIPE,
                           cwd=where, stdin=subprocess.DEVNULL, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise ToolFailed("%s did not finish in %d s (a hang); see %s" % (name, timeout, where))
    out = p.stdout.decode("utf-8", "replace")
    err = "" if merge else p.stderr.decode("utf-8", "replace")
    with open(os.path.join(where, name + ".out"), "w") as f:
        f.write(" ".join(argv) + "\n" + out + ("\n--- stderr ---\n" + err if err else ""))
    # The case's directory is named after it (test_frames.py: ENV.dir(case.name)).
    save(os.path.basename(where), name, out + ("\n--- stderr ---\n" + err if err else ""))
    return p.returncode, out, err


def _clean(text, what, where):
    for bad in T.BAD_OUTPUT:
        if bad in text:
            raise ToolFailed("%s printed %r; see %s" % (what, bad, where))


# -- Text of a frame, as each front end writes it --


def debugger_text(level, text):
    """`info stackmap N` / `stackmap info N`: the records' text without its `frame #N, pc ...`
    line (which compare.py checks through the frame's number, PC and function), or the
    sentence saying why no record is shown."""
    text = text.strip("\n")
    if text.startswith("error: "):
        text = text[len("error: "):]
    first, _, rest = text.partition("\n")
    if re.match(r"^frame #%d, pc 0x[0-9a-f]+ in " % level, first):
        return rest + "\n"
    return text.strip()


def stack_text(block):
    """jitmap-stack --values: the lines under a frame's line (indented by 4), as the records'
    text of info stackmap; or, for a JIT frame at no record, the sentence in its parentheses."""
    if not block:
        return None
    lines = block.splitlines()
    if len(lines) == 1 and lines[0].startswith("    (") and lines[0].endswith(")"):
        return lines[0][5:-1]
    return "".join((l[4:] if l.startswith("    ") else l) + "\n" for l in lines)


# -- GDB --


def gdb_view(gdb, jitmap_gdb, where, key, label, target, nframes, pre=(), sysroot=None):
    """GDB with jitmap (jitmap.gdb: the reader plugin and the commands), typed commands.
    `target`: ["-p", PID], [EXE, CORE], or [EXE] with `pre` connecting (target remote)."""
    argv = [gdb, "-batch", "-nx"]
    setup = GDB_SETUP + (["set sysroot " + sysroot] if sysroot else []) + ["source " + jitmap_gdb]
    for line in setup:
        argv += ["-iex", line]
    for c in list(pre) + ["set backtrace past-main on", "echo ==bt\\n", "bt"]:
        argv += ["-ex", c]
    for n in range(nframes):
        argv += ["-ex", "echo ==j%d\\n" % n, "-ex", "info stackmap -json %d" % n,
                 "-ex", "echo ==t%d\\n" % n, "-ex", "info stackmap %d" % n]
    argv += ["-ex", "echo ==end\\n"] + list(target)
    status, out, _ = _run(argv, where, key, merge=True)
    _clean(out, label, where)
    parts, tag = {}, None
    for line in out.splitlines():
        m = re.match(r"^==(\S+)$", line)
        if m:
            tag = m.group(1)
            parts[tag] = []
        elif tag:
            parts[tag].append(line)
    if "end" not in parts:
        raise ToolFailed("%s: the session stopped early (status %d); see %s" % (label, status, where))
    frames = []
    for n in range(nframes):
        j = "\n".join(parts.get("j%d" % n, []))
        if NO_FRAME.search(j):
            break
        objs = [l for l in j.splitlines() if l.startswith("{")]
        if len(objs) != 1:
            raise ToolFailed("%s: info stackmap -json %d printed %r; see %s" % (label, n, j, where))
        frames.append(debugger_frame(n, jsoncontract.loads(objs[0], "frame"),
                                     "\n".join(parts.get("t%d" % n, [])), label))
    else:
        raise ToolFailed("%s: more than %d frames; see %s" % (label, nframes, where))
    return View(key, label, frames, "\n".join(parts.get("bt", [])))


def debugger_frame(n, obj, text, label):
    if obj.get("frame") != n:
        raise ToolFailed("%s: info stackmap -json %d answered for frame %s" % (label, n, obj.get("frame")))
    return Frame(n, int(obj["pc"], 16), obj.get("function"), obj, debugger_text(n, text))


# -- LLDB --


def lldb_view(lldb, case, where_name, key, label, nframes, exe=None, core=None, pid=None, pre=(),
              post=()):
    """LLDB with jitmap: `stackmap info --json N` and `stackmap info N` for N = 0, 1, ...; on
    a core, attached to `pid` (and detached), or over `pre`'s gdb-remote. `case`: the case's
    name, for save()."""
    cmds = list(pre) + [lldb.dump("bt", "bt")]
    for n in range(nframes):
        cmds += [lldb.ask("j%d" % n, "info", ["json"], [n]), lldb.ask("t%d" % n, "info", [], [n])]
    s = lldb.session(where_name, cmds + list(post), exe, core=core, pid=pid)
    save(case, key, "".join("==%s %s (%s)\n%s--- stderr ---\n%s" % (
        r["tag"], r["cmd"], "ok" if r["ok"] else "failed", r["out"], r["err"]) for r in s.results))
    frames = []
    for n in range(nframes):
        r = s.get("j%d" % n)
        if NO_FRAME.search(r["err"] + r["out"]):
            break
        objs = [l for l in r["out"].splitlines() if l.startswith("{")]
        if not r["ok"] or len(objs) != 1:
            raise ToolFailed("%s: %s: %s; see %s" % (label, r["cmd"], (r["out"] + r["err"]).strip(),
                                                     s.where))
        t = s.get("t%d" % n)
        frames.append(debugger_frame(n, jsoncontract.loads(objs[0], jsoncontract.output_of(r["cmd"])), t["out"] + t["err"], label))
    else:
        raise ToolFailed("%s: more than %d frames; see %s" % (label, nframes, s.where))
    return View(key, label, frames, s.text("bt"))


# -- jitmap-stack --


def stack_view(stack, where, key, label, target, exe=None):
    """jitmap-stack --json --values and --values on `target` (a PID or a core), the first
    thread."""
    extra = ["--exe", exe] if exe else []
    status, out, err = _run([stack, "--json", "--values"] + extra + [str(target)], where, key + "-json")
    if status != 0:
        raise ToolFailed("%s --json: exit %d: %s" % (label, status, err.strip()))
    doc = jsoncontract.loads(out, "jitmap-stack")
    status, text, err = _run([stack, "--values"] + extra + [str(target)], where, key + "-text")
    if status != 0:
        raise ToolFailed("%s: exit %d: %s" % (label, status, err.strip()))
    thread = doc["threads"][0]
    blocks = text_blocks(text)
    frames = []
    for f in thread["frames"]:
        block = blocks.get((thread["tid"], f["index"]))
        if block is None:
            raise ToolFailed("%s: frame %d of thread %d is not in the text output" % (
                label, f["index"], thread["tid"]))
        frames.append(Frame(f["index"], int(f["pc"], 16), f["function"], f["stackmap"],
                            stack_text(block[1]), jit=f["jit"]))
        if int(block[0], 16) != int(f["pc"], 16):
            raise ToolFailed("%s: frame %d's PC %s in the text, %s in the JSON" % (
                label, f["index"], block[0], f["pc"]))
    return View(key, label, frames, "", problems=doc.get("problems", []))


def text_blocks(text):
    """{(tid, level): (pc, the lines indented by 4 under the frame's line)} of jitmap-stack's
    text."""
    blocks, tid, cur = {}, None, None
    for line in text.splitlines():
        m = re.match(r"^thread (\d+)", line)
        if m:
            tid, cur = int(m.group(1)), None
            continue
        m = re.match(r"^  #(\d+) +(0x[0-9a-f]+) in ", line)
        if m:
            cur = [m.group(2), []]
            blocks[(tid, int(m.group(1)))] = cur
            continue
        if cur is not None and line.startswith("    "):
            cur[1].append(line)
    return {k: (pc, "\n".join(lines)) for k, (pc, lines) in blocks.items()}


# -- jitmap-dump --


def dump_records(dump, where, core, exe=None):
    """{(id, pc): [(JIT entry, record object)]} of jitmap-dump --format=json on the core."""
    extra = ["--exe", exe] if exe else []
    status, out, err = _run([dump, "--format=json"] + extra + [core], where, "dump")
    if status != 0:
        raise ToolFailed("jitmap-dump: exit %d: %s" % (status, err.strip()))
    recs = {}
    for d in jsoncontract.loads(out, "jitmap-dump")["descriptors"]:
        for e in d["entries"]:
            for b in e.get("blobs") or []:
                for r in b["records"]:
                    recs.setdefault((r["id"], int(r["pc"], 16)), []).append((e["entry"], r))
    return recs
