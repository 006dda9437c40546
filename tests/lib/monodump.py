"""Mono's own account of its stacks, for the tests that judge jitmap by it
(tests/runtimes/test_mono.py, tests/matrix/rt_mono.py): the thread dump Mono prints on SIGQUIT
("Full thread dump:", one block per thread, its frames as `at METHOD [0x...] in FILE` or
`at METHOD <0x...>`), and one key for a method across Mono's spellings."""
import re


def key(name):
    """A method's name as one key across Mono's spellings: the dump's `JitmapMono.Block
    (string,string)`, the perf map's `JitmapMono:Block (string,string)` and an AOT image's
    symbol `JitmapMono_Block_string_string` are all JitmapMono_Block_string_string."""
    return re.sub(r"[^A-Za-z0-9]+", "_", name or "").strip("_")


class Key(str):
    """A frame's key, with the method as the dump spells it (`.method`)."""
    def __new__(cls, k, method):
        s = super().__new__(cls, k)
        s.method = method
        return s


def dump_threads(text):
    """The last "Full thread dump" of `text` ([] when there is none yet): [(thread name,
    [Key, ...])], innermost first; frames Mono cannot name ("unknown") are left out."""
    if "Full thread dump:" not in text:
        return []
    text = text.rsplit("Full thread dump:", 1)[-1]
    threads = []
    for block in re.split(r"\n\s*\n", text):
        m = re.search(r'^"([^"]*)"', block, re.M)
        if not m:
            continue
        frames = []
        for line in block.splitlines()[1:]:
            if line.strip().startswith("at "):
                method = re.sub(r" \[0x[0-9a-f]+\] in .*$| <0x[0-9a-f]+>$", "",
                                line.strip()[3:])
                if key(method) and key(method) != "unknown":
                    frames.append(Key(key(method), method))
        threads.append((m.group(1), frames))
    return threads
