#!/usr/bin/env python3
"""tests/docs/test_docs.py SOURCE BUILD: what the docs (docs/*.md, README.md) and the man pages
(man/*) name exists, as the programs built in BUILD have it:

- every Markdown link and every `X.md`, "Heading" reference resolves to a file and a heading
  of it; every repository path (`docs/...`, `include/...`, `scripts/...`) to a file; every
  jitmap man page named (jitmap-stack(1), man 7 jitmap) to one in man/;
- every option given to jitmap-dump, jitmap-stack or jitmap-core-handler (in a command line,
  or in the tool's own page) is in that tool's --help; each tool's man page lists the options
  its --help lists, no more, no fewer; the exit statuses its man page gives are in --help;
- every GDB command named (`jitmap X`, `info X`, `set jitmap X`) is one GDB has with jitmap
  loaded (asked of GDB: `help CMD`), every LLDB command (`stackmap X`) one of the command
  table's; jitmap(7) names every GDB and LLDB command jitmap has;
- a help text that points at the description of its JSON fields points at a document that
  gives them;
- README's install list names every header installed;
- no transcript shows a build machine's absolute paths (/work/, /home/, /root/, build-*/).

GDB is asked only for its command list (skipped, exit 77, without gdb: the rest still runs
first and a failure there still fails). Fast: no program is debugged.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

SOURCE, BUILD = (os.path.abspath(a) for a in sys.argv[1:3])
TOOLS = ("jitmap-dump", "jitmap-stack", "jitmap-core-handler", "jitmap-minidump")
failures = []


def fail(where, what):
    failures.append("%s: %s" % (where, what))


def rel(path):
    return os.path.relpath(path, SOURCE)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


MD = sorted(glob.glob(os.path.join(SOURCE, "docs", "*.md"))) + [os.path.join(SOURCE, "README.md")]
MAN = sorted(glob.glob(os.path.join(SOURCE, "man", "*.[0-9]")))


def man_text(s):
    """A man page's words without troff: escapes and font requests gone."""
    s = re.sub(r"\\f[BIRP]", "", s).replace("\\-", "-").replace("\\(aq", "'")
    s = s.replace("\\&", "").replace("\\ ", " ").replace("\\%", "")
    out = []
    for line in s.splitlines():
        m = re.match(r"\.(B|I|BR|BI|IR|RB|IB|RI)\s+(.*)", line)
        if m:  # alternating fonts: the words run together, quotes group them
            words = re.findall(r'"([^"]*)"|(\S+)', m.group(2))
            sep = "" if len(m.group(1)) == 2 else " "
            out.append(sep.join(a or b for a, b in words))
        elif not line.startswith(".") or line.startswith(". "):
            out.append(line)
        else:
            out.append("")
    return "\n".join(out)


def slug(heading):
    """GitHub's anchor of a heading."""
    h = heading.strip().lower()
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


def headings(path):
    hs, fence = [], False
    for line in read(path).splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and re.match(r"#{1,6} ", line):
            hs.append(line.lstrip("#").strip())
    return hs


def plain(h):
    return re.sub(r"\s+", " ", h.replace("`", "")).strip().lower()


def has_heading(path, quoted):
    """A heading that is `quoted`, or starts with it (a heading's parenthesis or colon)."""
    q = plain(quoted)
    for h in headings(path):
        p = plain(h)
        if p == q or p.startswith(q + " ") or p.startswith(q + ":") or p.startswith(q + ","):
            return True
    return False


def code_spans(text):
    """Inline code spans and lines of fenced blocks, with the file's line of each."""
    out, fence = [], False
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fence = not fence
            continue
        if fence:
            out.append((n, line, True))
        else:
            out.extend((n, s, False) for s in re.findall(r"`([^`]+)`", line))
    return out


# -- Cross-references --

REPO_DIRS = ("docs", "include", "scripts", "tests", "examples", "bench", "tools", "targets",
             "man", "gdb-scripts", "cmake", "reader", "unwinder", "model", "arch", "plugin",
             "producer", "common", "completions")


def expand_braces(p):
    m = re.search(r"\{([^{}]*)\}", p)
    if not m:
        return [p]
    return [x for alt in m.group(1).split(",")
            for x in expand_braces(p[:m.start()] + alt + p[m.end():])]


def check_path(where, p):
    """A path of the source tree, or one the build makes (examples/handjit/jitmap-handjit)."""
    p = p.rstrip(".,:;)")
    if p.startswith("tools/perf/"):  # Linux's perf sources, which docs cite
        return
    for q in expand_braces(p):
        if any(c in q for c in "*?<>$") or "PID" in q:
            continue
        if not any(os.path.exists(os.path.join(b, q)) for b in (SOURCE, BUILD)):
            fail(where, "names %s, which is neither in the source tree nor built" % q)


def check_refs():
    md_ref = re.compile(r'((?:[\w-]+/)*[\w.-]+\.md)`?(?:,|:|\'s| section)\s+"([^"]+)"')
    for path in MD:
        text = read(path)
        here = os.path.dirname(path)
        for n, line in enumerate(text.splitlines(), 1):
            where = "%s:%d" % (rel(path), n)
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"[a-z]+:", target):
                    continue
                file, _, anchor = target.partition("#")
                fpath = os.path.normpath(os.path.join(here, file)) if file else path
                if not os.path.exists(fpath):
                    fail(where, "links %s, which does not exist" % target)
                elif anchor and anchor not in {slug(h) for h in headings(fpath)}:
                    fail(where, "links #%s, which is no heading of %s" % (anchor, rel(fpath)))
            for file, quoted in md_ref.findall(line):
                f = next((os.path.join(d, file) for d in (here, SOURCE, os.path.join(SOURCE, "docs"))
                          if os.path.exists(os.path.join(d, file))), file)
                if not os.path.exists(f):
                    fail(where, "names %s, which does not exist" % file)
                elif not has_heading(f, quoted):
                    fail(where, 'names %s, "%s": no such heading there' % (file, quoted))
            for p in re.findall(r"(?<![\w/.$-])((?:%s)/[\w./{},*-]+)" % "|".join(REPO_DIRS),
                                line):
                check_path(where, p)
    for path in MAN + MD:
        text = read(path)
        if path in MAN:
            text = man_text(text)
        for n, line in enumerate(text.splitlines(), 1):
            where = "%s:%d" % (rel(path), n)
            for page, sec in re.findall(r"\b(jitmap[\w-]*)\s?\((\d)\)", line) + \
                    [(p, s) for s, p in re.findall(r"\bman (\d) (jitmap[\w-]*)", line)]:
                if not os.path.exists(os.path.join(SOURCE, "man", "%s.%s" % (page, sec))):
                    fail(where, "names the man page %s(%s), which man/ lacks" % (page, sec))
            for doc in re.findall(r"share/doc/jitmap/([\w.-]+\.md)", line):
                if not os.path.exists(os.path.join(SOURCE, "docs", doc)):
                    fail(where, "names share/doc/jitmap/%s, which docs/ lacks" % doc)


# -- The tools' options --

def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=60)
    return p.returncode, p.stdout


def help_options(tool):
    """The options --help lists ('--exe', '-c', ...), from its option lines."""
    rc, out = run([os.path.join(BUILD, tool), "--help"])
    if rc != 0:
        fail(tool, "--help: exit %d" % rc)
    opts = set()
    for line in out.splitlines():
        m = re.match(r"\s+(-.*?)(?:\s{2,}|$)", line)
        if m:
            opts |= set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", m.group(1)))
    return opts, out


def man_options(tool):
    """The options of the man page's OPTIONS section: each .TP item's first line."""
    text = read(os.path.join(SOURCE, "man", tool + ".1"))
    m = re.search(r"^\.SH OPTIONS\n(.*?)(?=^\.SH )", text, re.S | re.M)
    opts = set()
    lines = m.group(1).splitlines() if m else []
    for i, line in enumerate(lines):
        if line.startswith(".TP") and i + 1 < len(lines):
            item = man_text(lines[i + 1])
            opts |= set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", item))
    return opts, text


COMMAND_END = re.compile(r"[|;&)]|\s#|<|>")


def tool_invocations(text):
    """(tool, option) of each command line in `text` that runs a tool; coredumpctl's
    --debugger=TOOL passes the options of -A "..." to it."""
    for m in re.finditer(r"(?:(=)|(?<![\w/.=-]))(?:/usr/bin/|build[\w-]*/|\./)?(%s)(?![\w.-])"
                         r"([^\n`]*)" % "|".join(map(re.escape, TOOLS)), text):
        rest = m.group(3)
        if m.group(1):
            a = re.search(r"(?:-A|--debugger-arguments=?)\s*(\"[^\"]*\"|'[^']*'|\S+)", rest)
            rest = a.group(1).strip("\"'") if a else ""
        else:
            rest = COMMAND_END.split(rest)[0]
        for opt in re.findall(r"(?:^|\s)(--?[A-Za-z][\w-]*)", rest):
            yield m.group(2), opt


def check_options():
    helps = {}
    for tool in TOOLS:
        if not os.path.exists(os.path.join(BUILD, tool)):
            print("docs: %s not built: its options not checked" % tool)
            continue
        helps[tool] = help_options(tool)
    for tool, (hopts, htext) in helps.items():
        mopts, mtext = man_options(tool)
        for o in sorted(mopts - hopts):
            fail("man/%s.1" % tool, "lists %s, which --help does not" % o)
        for o in sorted(hopts - mopts):
            fail("man/%s.1" % tool, "does not list %s, which --help does" % o)
        # The exit statuses the man page gives, --help gives too.
        es = re.search(r"^\.SH EXIT STATUS\n(.*?)(?=^\.SH )", mtext, re.S | re.M)
        hs = htext[htext.find("Exit status"):]
        for code in sorted(set(re.findall(r"\b([0-9])\b", man_text(es.group(1)))) if es else []):
            if not re.search(r"\b%s\b" % code, hs):
                fail(tool, "--help does not give exit status %s, which its man page does"
                     % code)
    for path in MD + MAN:
        text = read(path)
        if path in MAN:
            text = man_text(text)
        lines = text.splitlines()
        for n, line in enumerate(lines, 1):
            for tool, opt in tool_invocations(line):
                if tool in helps and opt not in helps[tool][0]:
                    fail("%s:%d" % (rel(path), n),
                         "%s %s: no such option in %s --help" % (tool, opt, tool))
        # A tool's own man page: every option in bold is its (the docs' pages cite other
        # programs' options too: Node.js's, CPython's).
        tool = os.path.basename(path)[:-2]
        if path not in MAN or tool not in helps:
            continue
        spans = [(n, s) for n, line in enumerate(read(path).splitlines(), 1)
                 for s in re.findall(r"^\.B[IR]?\s+(\\-.*)", line)]
        spans = [(n, man_text(".B " + s)) for n, s in spans]
        for n, s in spans:
            m = re.match(r"(--?[A-Za-z][\w-]*)", s.strip())
            if m and m.group(1) not in helps[tool][0]:
                fail("%s:%d" % (rel(path), n), "%s: no such option in %s --help"
                     % (m.group(1), tool))


# -- Debugger commands --

def named_commands():
    """{(kind, name): where} of the GDB commands and LLDB commands the docs name."""
    names = {}
    for path in MD + MAN:
        text = read(path)
        if path in MAN:  # the man page's bold items, not its prose
            items = [(n, man_text(line), False) for n, line in enumerate(text.splitlines(), 1)
                     if re.match(r"\.B[IR]?\s", line)]
        else:
            items = code_spans(text)
        for n, s, block in items:
            where = "%s:%d" % (rel(path), n)
            gdb_line = re.match(r"\(gdb\) (.*)", s)
            lldb_line = re.match(r"\(lldb\) (.*)", s)
            if block and not (gdb_line or lldb_line):
                continue
            s = (gdb_line or lldb_line).group(1) if block else s
            # A command is a span, an item or a (gdb) line that starts with it, or a command
            # line's -ex argument (`gdb -ex 'info stackmap'`); not `maint info jit`.
            cmds = [s.strip()] + re.findall(r"-i?ex\s+(?:'([^']*)'|\"([^\"]*)\")", s)
            cmds = [c if isinstance(c, str) else c[0] or c[1] for c in cmds]
            for cmd in cmds if not lldb_line else []:
                m = re.match(r"((?:set |show )?jitmap [a-z][a-z-]*|info [a-z][a-z-]*)(?![\w-])",
                             cmd)
                if m and not (m.group(1).split()[-1] in ("off", "on")
                              and m.group(1).startswith(("set", "show"))):
                    names.setdefault(("gdb", m.group(1)), where)
            # LLDB's: a span or an item that is a command line (`stackmap info --json 2`), not
            # prose or a message that starts with the word.
            m = re.match(r"stackmap ([a-z][a-z-]*)(?![\w=-])((?:\s+\S+){0,3})$", s.strip())
            if not gdb_line and m:
                names.setdefault(("lldb", m.group(1)), where)
    return names


def gdb_commands(names):
    """Which of `names` GDB lacks with jitmap on, and the help of GDB's jitmap commands; None
    without GDB. jitmap is turned on as the system gdbinit script and jitmap.gdb do (the
    script's settings, then the commands of this source tree's Python package), without the
    reader plugin: only the commands are asked for, and they need no library to be listed."""
    gdb = shutil.which("gdb")
    stub = os.path.join(BUILD, "share", "jitmap", "gdbinit.d", "jitmap.py")
    if not gdb or not os.path.exists(stub):
        return None
    probe = (
        "import gdb, json, sys\n"
        "sys.path.insert(0, %r)\n"
        "import jitmap.gdb_commands, jitmap.gdb_reader\n"
        "jitmap.gdb_reader.add_settings()\n"
        "missing = []\n"
        "def helps_of(c):\n"
        "    try:\n"
        "        return gdb.execute('help ' + c, to_string=True)\n"
        "    except gdb.error:\n"
        "        return None\n"
        "for c in %r:\n"
        "    h = helps_of(c)\n"
        "    # GDB's help of a prefix's unknown word is the prefix's own help\n"
        "    if h is None or (len(c.split()) > 1 and h == helps_of(c.rsplit(' ', 1)[0])):\n"
        "        missing.append(c)\n"
        "helps = {}\n"
        "try:\n"
        "    listing = gdb.execute('help jitmap', to_string=True)\n"
        "except gdb.error as e:\n"
        "    listing = ''\n"
        "    missing.append('jitmap (%%s)' %% e)\n"
        "subs = ['jitmap ' + l.split(' -- ')[0].split()[-1] for l in listing.splitlines()\n"
        "        if l.startswith('jitmap ') and ' -- ' in l]\n"
        "for c in subs + ['info stackmap', 'info stackmaps', 'info gc-roots']:\n"
        "    helps[c] = gdb.execute('help ' + c, to_string=True)\n"
        "print('@@' + json.dumps({'missing': missing, 'helps': helps}))\n"
    ) % (os.path.join(SOURCE, "gdb-scripts"), sorted(names))
    p = subprocess.run([gdb, "-batch", "-nx", "-ex", "source " + stub, "-ex",
                        "python\n" + probe + "end"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=120)
    for line in p.stdout.splitlines():
        if line.startswith("@@"):
            return json.loads(line[2:])
    fail("gdb", "no answer from GDB: %s" % p.stdout[-2000:])
    return {"missing": [], "helps": {}}


def lldb_table():
    sys.path.insert(0, os.path.join(SOURCE, "gdb-scripts"))
    from jitmap import commands  # debugger-neutral: no lldb needed
    return commands.TABLE


def check_commands():
    names = named_commands()
    table = lldb_table()
    lldb = {c.names["lldb"]: c for c in table.values() if c.names["lldb"]}
    for (kind, name), where in sorted(names.items(), key=lambda kv: kv[1]):
        if kind == "lldb" and name not in lldb:
            fail(where, "LLDB's `stackmap %s`: no such command" % name)
    man7 = man_text(read(os.path.join(SOURCE, "man", "jitmap.7")))
    for name in lldb:
        if not re.search(r"stackmap %s(?![\w-])" % re.escape(name), man7):
            fail("man/jitmap.7", "does not name LLDB's `stackmap %s`" % name)
    gdb_names = sorted(n for k, n in names if k == "gdb")
    got = gdb_commands(gdb_names)
    if got is None:
        return False
    for name in got["missing"]:
        fail(names.get(("gdb", name), "gdb"), "GDB's `%s`: no such command with jitmap loaded"
             % name)
    for name, text in got["helps"].items():
        if not re.search(r"%s(?![\w-])" % re.escape(name), man7):
            fail("man/jitmap.7", "does not name GDB's `%s`" % name)
        # The description of the JSON fields a help text points at gives them.
        for ref in re.findall(r"its fields: ([^);]+)", text):
            ref = ref.strip()
            m = re.match(r"man (\d) ([\w-]+)$", ref)
            doc = (os.path.join(SOURCE, "man", "%s.%s" % (m.group(2), m.group(1))) if m else
                   os.path.join(SOURCE, "docs", os.path.basename(ref))
                   if re.search(r"share/doc/jitmap/[\w.-]+\.md$", ref) else None)
            if not doc or not os.path.exists(doc):
                fail("help %s" % name, "its fields: %s: no such document" % ref)
                continue
            body = man_text(read(doc)) if m else read(doc)
            if "%s -json" % name not in body or "field" not in body:
                fail("help %s" % name, "its fields: %s, which does not describe the fields "
                     "of `%s -json`" % (ref, name))
    return True


# -- README's install list, build paths --

def check_install_list():
    cm = read(os.path.join(SOURCE, "CMakeLists.txt"))
    installed = set(re.findall(r"include/jitmap/(\w+)\.h", " ".join(
        re.findall(r'PUBLIC_HEADER\s+"([^"]+)"', cm))))
    producer = read(os.path.join(SOURCE, "producer", "CMakeLists.txt")) \
        if os.path.exists(os.path.join(SOURCE, "producer", "CMakeLists.txt")) else cm
    installed |= set(re.findall(r"include/jitmap/(\w+)\.h", " ".join(
        re.findall(r'PUBLIC_HEADER\s+"?([^")]+)', producer))))
    readme = read(os.path.join(SOURCE, "README.md"))
    m = re.search(r"include/jitmap/\{([\w,]+)\}\.h", readme)
    named = set(m.group(1).split(",")) if m else set()
    for h in sorted(installed - named):
        fail("README.md", "the install list lacks include/jitmap/%s.h" % h)
    for h in sorted(named - installed):
        fail("README.md", "the install list names include/jitmap/%s.h, not installed" % h)
    for tool in TOOLS:
        if "bin/" + tool not in readme:
            fail("README.md", "the install list lacks bin/%s" % tool)


def check_build_paths():
    """Absolute paths of the machine a transcript was made on, and its build directories
    (build-lldb/): a reader's are elsewhere. A build directory the page itself makes
    (`cmake -B build-asan`) is the reader's."""
    bad = re.compile(r"(?<![\w.])(/work/|/home/|/root/|/src/jitmap/|(?<![\w-])build-[\w-]+/)")
    for path in MD + MAN:
        text = read(path)
        made = set(re.findall(r"-B\s*(build[\w-]*)", text))
        for n, line in enumerate(text.splitlines(), 1):
            m = bad.search(line)
            if m and m.group(1).rstrip("/") not in made:
                fail("%s:%d" % (rel(path), n), "a build machine's path (%s): %s"
                     % (m.group(1), line.strip()[:100]))


def main():
    check_refs()
    check_options()
    check_install_list()
    check_build_paths()
    asked_gdb = check_commands()
    for f in failures:
        print("FAIL: " + f)
    print("docs: %d problem%s" % (len(failures), "" if len(failures) == 1 else "s"))
    if failures:
        return 1
    if not asked_gdb:
        print("docs: no gdb (or no share/jitmap/gdbinit.d in %s): GDB's commands not checked"
              % BUILD)
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
