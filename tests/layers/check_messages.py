#!/usr/bin/env python3
"""check_messages.py [--selftest | --list] SRC: no client decides anything by the library's prose.

A condition a client acts on (a stack cut by the copy, a warning against an information, a
guessed step) is a status or flag in the library's result; the words of a message are for
people and may change. So no client (tools/, plugin/, gdb-scripts/jitmap/) compares, searches
or prefixes a string with a literal that is a piece of one of the library's messages:

  - the library's messages: every string literal of the library's C files (the folders of
    LIBRARY) that is prose (holds a space), cut at its printf conversions (and the PRI*
    macros between literals) into pieces;
  - a comparison: in C, strstr, strcasestr, strcmp, strncmp, strcasecmp, strncasecmp, memcmp,
    memmem; in Python (read with ast), `in` / `not in` / `==` / `!=` with a str constant,
    .startswith, .endswith, .find, .rfind, .index, .rindex, .count, .partition, .split,
    re.search, re.match, re.fullmatch, re.findall, re.finditer, re.compile, re.sub, re.split;
  - a literal in it: written there, or named (a C file's #define NAME "text", a Python
    module's NAME = "text" at its top);
  - a breach: a literal of 6 or more characters in such a comparison that is prose (a name
    such as ".llvm_stackmaps", "__llvm_stackmaps" or "<in-memory@" is not: it holds '_', or
    starts with '.', '/', '<', '-') and is found in one of the library's pieces, as whole
    words (at word boundaries: "misfit" is not in "statepoint_misfit"); for an equality
    (strcmp, strcasecmp, ==, !=) it must be a whole piece or message. A single word in
    `in` / `not in` is membership, not a search, where the front ends use that word as a key
    (a dict's key, a subscript, .get's argument): `"method" not in frame`.

ALLOWED lists the comparisons of text that is not the library's though it shares its words
(a debugger's output, the front end's own), each with why. Exit 0 when no client breaches;
1 with each breach named (file, line, the call, the library's message it matches). --selftest
runs the check over a planted library and planted clients, one breach of each kind and
look-alikes that are none, and fails when it misses or invents one; the check runs it first.
--list prints the library's pieces.
"""
import ast
import os
import re
import sys
import tempfile

LIBRARY = ["common", "arch", "reader", "unwinder", "targets", "files", "model", "writers"]
CLIENTS_C = ["tools", "plugin"]
CLIENTS_PY = ["gdb-scripts/jitmap"]
MIN_LEN = 6

# (the literal; a regular expression the comparison's line matches, wherever the line moves;
# why the text compared is not the library's).
ALLOWED = [
    ("cannot", r"\bgot\.startswith\(\"cannot\"\)",
     "the LLDB adapter's own answer (lldb_adapter._load_image: \"cannot add ...\")"),
    ("minidump", r"GetPluginName\(\) in \(",
     "LLDB's process plugins' names (elf-core, mach-o-core, minidump), not a message"),
]

C_COMPARE = ("strstr", "strcasestr", "strcmp", "strncmp", "strcasecmp", "strncasecmp",
             "memcmp", "memmem")
PY_METHODS = ("startswith", "endswith", "find", "rfind", "index", "rindex", "count",
              "partition", "rpartition", "split", "rsplit")
PY_RE = ("search", "match", "fullmatch", "findall", "finditer", "compile", "sub", "subn",
         "split")

# printf conversions, and C's PRI* macros between two literals (split there as well).
CONVERSION = re.compile(r"%[-+ #0']*(?:\*|\d+)?(?:\.(?:\*|\d+))?"
                        r"(?:hh|h|ll|l|j|z|t|L|q)?[diouxXeEfFgGaAcspn%]")


# -- C source: its string literals, with their lines --

def c_tokens(text):
    """(kind, value, line) for each string literal ('s') and each other character run that
    matters here: identifiers ('i') and single punctuation ('p'). Comments, character
    literals and preprocessor #include lines are skipped."""
    out = []
    i, n, line = 0, len(text), 1
    at_line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
            at_line_start = True
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if at_line_start and c == "#":
            m = re.match(r"#\s*include[^\n]*", text[i:])
            if m:
                i += m.end()
                continue
        at_line_start = False
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            line += text.count("\n", i, j)
            i = j
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == '"' or c == "'":
            j = i + 1
            buf = []
            while j < n and text[j] != c:
                if text[j] == "\\" and j + 1 < n:
                    e = text[j + 1]
                    buf.append({"n": "\n", "t": "\t", "0": "\0", "r": "\r"}.get(e, e))
                    if e == "\n":
                        line += 1
                    j += 2
                    continue
                if text[j] == "\n":
                    line += 1
                buf.append(text[j])
                j += 1
            if c == '"':
                out.append(("s", "".join(buf), line))
            i = j + 1
            continue
        m = re.match(r"[A-Za-z_]\w*", text[i:])
        if m:
            out.append(("i", m.group(0), line))
            i += m.end()
            continue
        out.append(("p", c, line))
        i += 1
    return out


def c_literal_groups(tokens):
    """Each run of adjacent literals (with PRI* / SCN* macros between them) as its pieces:
    the literals' texts, cut where a macro stood."""
    groups, cur = [], None
    for kind, val, line in tokens:
        if kind == "s":
            if cur is None:
                cur = {"line": line, "parts": [val]}
            else:
                cur["parts"][-1] += val
        elif kind == "i" and cur is not None and re.match(r"(PRI|SCN)[a-zA-Z0-9]+$", val):
            # "%" PRIu64: the conversion's start goes with the macro
            cur["parts"][-1] = re.sub(r"%[-+ #0']*(?:\*|\d+)?(?:\.(?:\*|\d+))?$", "",
                                      cur["parts"][-1])
            cur["parts"].append("")
        else:
            if cur is not None:
                groups.append(cur)
                cur = None
    if cur is not None:
        groups.append(cur)
    return groups


def pieces_of(text):
    return [p for p in CONVERSION.split(text) if p.strip()]


def library_messages(src):
    """[(piece, whole message, where)] of the library's prose literals."""
    out = []
    for top in LIBRARY:
        d = os.path.join(src, top)
        if not os.path.isdir(d):
            continue
        for dirpath, _dirs, files in os.walk(d):
            for f in sorted(files):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, src)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    groups = c_literal_groups(c_tokens(fh.read()))
                for g in groups:
                    whole = "%s".join(g["parts"])
                    # Prose; not a path such as "/dev/zero (deleted)" (the kernel's text)
                    if " " not in whole.strip() or whole.startswith("/"):
                        continue
                    for part in g["parts"]:
                        for p in pieces_of(part):
                            out.append((p, whole, "%s:%d" % (rel, g["line"])))
    return out


# -- The clients' comparisons --

def prose(lit):
    s = lit.strip()
    return (len(s) >= MIN_LEN and "_" not in s and s[0] not in "./<-"
            and re.search(r"[a-z]{3}", s) is not None)


EQUALITY = ("strcmp", "strcasecmp", "eq", "noteq", "eq noteq", "noteq eq")


def c_comparisons(path):
    """[(line, call, literal)] for the literals in the arguments of C comparisons."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        toks = c_tokens(fh.read())
    # The file's string macros (#define NAME "text"): a comparison may name one.
    macros = {}
    for k in range(len(toks) - 3):
        if (toks[k][:2] == ("p", "#") and toks[k + 1][:2] == ("i", "define")
                and toks[k + 2][0] == "i" and toks[k + 3][0] == "s"):
            macros[toks[k + 2][1]] = toks[k + 3][1]
    out = []
    for k, (kind, val, line) in enumerate(toks):
        if kind != "i" or val not in C_COMPARE:
            continue
        if k + 1 >= len(toks) or toks[k + 1][:2] != ("p", "("):
            continue
        depth, j = 0, k + 1
        while j < len(toks):
            t = toks[j]
            if t[:2] == ("p", "("):
                depth += 1
            elif t[:2] == ("p", ")"):
                depth -= 1
                if depth == 0:
                    break
            elif t[0] == "i" and t[1] in macros:
                out.append((line, val, macros[t[1]]))
            j += 1
        # Adjacent literals are one.
        for g in c_literal_groups(toks[k + 2:j]):
            out.append((line, val, "".join(g["parts"])))
    return out


def py_regex_literals(pattern):
    """The plain runs of a regular expression (what it must match as written)."""
    runs, cur, i = [], [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            e = pattern[i + 1]
            if e in ".^$*+?{}[]()|\\/ -:'\"":
                cur.append(e)
            else:
                runs.append("".join(cur))
                cur = []
            i += 2
            continue
        if c in ".^$*+?{}[]()|":
            # A quantifier makes the character before it optional.
            if c in "*?{" and cur:
                cur.pop()
            runs.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    runs.append("".join(cur))
    return [r for r in runs if r]


def py_keys(tree):
    """The str constants a module uses as keys: a dict's, a subscript's, .get's and
    .pop's and .setdefault's first argument."""
    keys = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys.update(k.value for k in node.keys
                        if isinstance(k, ast.Constant) and isinstance(k.value, str))
        elif isinstance(node, ast.Subscript):
            sl = node.slice
            if isinstance(sl, ast.Constant) and isinstance(sl.value, str):
                keys.add(sl.value)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("get", "pop", "setdefault") and node.args
              and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            keys.add(node.args[0].value)
    return keys


def py_tree(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        return ast.parse(fh.read(), path)


def py_comparisons(path, keys=frozenset()):
    tree = py_tree(path)
    out = []
    # The module's string constants (NAME = "text" at its top): a comparison may name one.
    named = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    named[t.id] = node.value.value

    def consts(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Name) and node.id in named:
            return [named[node.id]]
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return [v for e in node.elts for v in consts(e)]
        return []

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            ops = [type(o).__name__ for o in node.ops]
            if not any(o in ("In", "NotIn", "Eq", "NotEq") for o in ops):
                continue
            for side in [node.left] + list(node.comparators):
                for lit in consts(side):
                    if (ops in (["In"], ["NotIn"]) and " " not in lit.strip()
                            and lit in keys):
                        continue  # membership of a key, not a search of text
                    out.append((node.lineno, " ".join(ops).lower(), lit))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            base = node.func.value
            is_re = isinstance(base, ast.Name) and base.id == "re"
            if is_re and name in PY_RE and node.args:
                for lit in consts(node.args[0]):
                    for run in py_regex_literals(lit):
                        out.append((node.lineno, "re." + name, run))
            elif not is_re and name in PY_METHODS and node.args:
                for lit in consts(node.args[0]):
                    out.append((node.lineno, "." + name, lit))
    return out


def client_files(src):
    for top in CLIENTS_C:
        d = os.path.join(src, top)
        for dirpath, _dirs, files in os.walk(d):
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    yield os.path.join(dirpath, f), c_comparisons
    for top in CLIENTS_PY:
        d = os.path.join(src, top)
        for dirpath, _dirs, files in os.walk(d):
            for f in sorted(files):
                if f.endswith(".py"):
                    yield os.path.join(dirpath, f), py_comparisons


def allowed(text, lit, allow):
    return any(what == lit and re.search(where, text) for what, where, _why in allow)


def matches(lit, piece, whole, equality):
    if equality:  # the whole message, or a piece of it that is prose
        return lit.strip() == whole.strip() or (" " in piece.strip()
                                                  and lit.strip() == piece.strip())
    before = r"(?<!\w)" if re.match(r"\w", lit) else ""
    after = r"(?!\w)" if re.search(r"\w$", lit) else ""
    return re.search(before + re.escape(lit) + after, piece) is not None


def breaches(src, allow=ALLOWED):
    msgs = library_messages(src)
    keys = set()
    for path, reader in client_files(src):
        if reader is py_comparisons:
            keys |= py_keys(py_tree(path))
    found = []
    for path, reader in client_files(src):
        rel = os.path.relpath(path, src)
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().split("\n")
        got = reader(path, keys) if reader is py_comparisons else reader(path)
        for line, call, lit in got:
            if not prose(lit) or allowed(lines[line - 1], lit, allow):
                continue
            for piece, whole, where in msgs:
                if matches(lit, piece, whole, call in EQUALITY):
                    found.append((rel, line, call, lit, whole, where))
                    break
    return found


# -- The self-test: a planted library and planted clients --

PLANTED_LIB = r'''
#include "a message in an include line: not one"
static void f(char *why, size_t n, int k)
{
	snprintf(why, n, "cannot read the return address at 0x%llx", 1ull);
	say(s, "%s is %" PRIu64 " bytes: only its first %" PRIu64 " are added", p, a, b);
	say(s, "the core is passed on "
	    "unchanged: %s", why);
	/* "a message in a comment: not one" */
	name = ".llvm_stackmaps";
	word = "alonewordnospace";
	warn("/dev/zero (deleted)");
	say(s, "no JIT file was found");
}
'''

PLANTED_C = r'''
#define GONE "is passed on unchanged"
static int f(const char *why, const char *name)
{
	if (strstr(why, "cannot read the return address"))    /* breach 1 */
		return 1;
	if (strstr(why,
		   "only its first"))                         /* breach 2: over lines */
		return 2;
	if (!strncmp(why, "unchanged: ", 11))                 /* breach 3 */
		return 3;
	if (!strcmp(name, ".llvm_stackmaps"))                 /* a name: none */
		return 4;
	if (strstr(why, "alonewordnospace"))                  /* not prose in the library */
		return 5;
	if (strstr(why, "a message in a comment"))            /* a comment: none */
		return 6;
	if (strstr(why, "include line"))                      /* an include: none */
		return 7;
	puts("cannot read the return address");               /* no comparison: none */
	if (strstr(why, "delete"))                            /* part of a word: none */
		return 8;
	if (!strcmp(name, "read the return address"))          /* equality, a part: none */
		return 9;
	if (strcasecmp(name, "the core is passed on unchanged: %s") == 0) /* breach 4 */
		return 10;
	if (strstr(why, GONE))                                /* breach 6: by a macro */
		return 11;
	return strstr(why, "cannot") != 0;                    /* breach 5: a short word */
}
'''

PLANTED_PY = r'''
import re
CUT = "only its first"
def f(why, d):
    if why.endswith(CUT):                       # breach 12: by a constant
        return 13
    if "only its first" in why:                 # breach 5
        return 1
    if why.startswith("cannot read the"):       # breach 6
        return 2
    if re.search(r"passed on unchanged:\s*(.*)", why):   # breach 7
        return 3
    if why == "the core is passed on unchanged: ":   # breach 8: a whole piece
        return 4
    if why.endswith(("nothing here", "are added")):   # breach 9
        return 5
    if "misfit_record" in d:                    # a key: none
        return 6
    if "statepoint" in d:                       # a word used as a key: none
        return d["statepoint"]
    if "cannot" in why:                         # breach 10: a word that is no key
        return 9
    if why == "native":                         # equality with a word: none
        return 10
    if why == "the core is passed on" or why != "no JIT file was found":  # breach 11
        return 11
    if "only its fir" in why:                   # not a whole word: none
        return 12
    if "cannot" in why:                         # allowed in this file: none
        return 7
    print("cannot read the return address")     # no comparison: none
'''

PLANTED_OK_PY = r'''
def g(text):
    return "cannot" in text                      # allowed: the file's own text
'''


def selftest():
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "unwinder"))
        os.makedirs(os.path.join(d, "tools"))
        os.makedirs(os.path.join(d, "gdb-scripts", "jitmap"))
        for rel, text in [("unwinder/lib.c", PLANTED_LIB), ("tools/client.c", PLANTED_C),
                          ("gdb-scripts/jitmap/client.py", PLANTED_PY),
                          ("gdb-scripts/jitmap/own.py", PLANTED_OK_PY)]:
            with open(os.path.join(d, rel), "w") as fh:
                fh.write(text)
        allow = [("cannot", r"return \"cannot\" in text", "planted")]
        got = sorted((rel, line) for rel, line, *_ in breaches(d, allow))
        want_c = [l + 1 for l, s in enumerate(PLANTED_C.split("\n")) if "breach" in s]
        want_py = [l + 1 for l, s in enumerate(PLANTED_PY.split("\n")) if "# breach" in s]
        # breach 2's call starts a line before its literal
        want_c = [l - 1 if "over lines" in PLANTED_C.split("\n")[l - 1] else l for l in want_c]
        # "cannot" in the planted client.py is a breach too: only own.py is allowed it
        want_py += [l + 1 for l, s in enumerate(PLANTED_PY.split("\n"))
                    if "allowed in this file" in s]
        want = sorted([("tools/client.c", l) for l in want_c] +
                      [("gdb-scripts/jitmap/client.py", l) for l in want_py])
        if got != want:
            print("check_messages self-test FAILED:\n  want %s\n  got  %s" % (want, got))
            return 1
    print("check_messages self-test: %d planted breaches found, no look-alike taken" % len(want))
    return 0


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    opts = [a for a in argv[1:] if a.startswith("--")]
    if "--selftest" in opts:
        return selftest()
    if len(args) != 1:
        print(__doc__.strip().split("\n")[0], file=sys.stderr)
        return 2
    src = args[0]
    if "--list" in opts:
        for piece, whole, where in library_messages(src):
            print("%s: %r (of %r)" % (where, piece, whole))
        return 0
    if selftest():
        return 1
    found = breaches(src)
    for rel, line, call, lit, whole, where in found:
        print("%s:%d: %s compares %r, a piece of the library's message %r (%s): ask the "
              "library for a status instead" % (rel, line, call, lit, whole, where))
    if found:
        print("%d comparison%s of library message text" % (len(found),
                                                           "" if len(found) == 1 else "s"))
        return 1
    print("no client compares the library's message text (%d client files read, against %d "
          "pieces of the library's messages)"
          % (sum(1 for _ in client_files(src)), len(library_messages(src))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
