#!/usr/bin/env python3
"""The runtime matrix's table, in markdown, from the files test_matrix.py wrote
(JITMAP_MATRIX_TABLE=DIR: DIR/RUNTIME.json), one row per runtime and condition, one column per
tool; a cell is "named/guessed/missing/wrong of the truth's frames".

    JITMAP_MATRIX_TABLE=DIR ctest --test-dir build -R matrix --output-on-failure
    tests/matrix/table.py DIR/*.json
"""
import json
import sys
import textwrap

TOOLS = (("jitmap-stack", "jitmap-stack --json"), ("gdb", "GDB with jitmap"),
         ("lldb", "LLDB `stackmap bt`"))
CONDITIONS = ("live", "core", "container", "deleted")


def cell(c):
    if c is None:
        return "-"
    if "skipped" in c:
        return "skipped (%s)" % c["skipped"]
    if "error" in c:
        return "**error**"
    text = "%d / %d / %d / %d of %d" % (c["named"], c["guessed"], c["missing"], c["wrong"],
                                        c["truth"])
    return "**%s**" % text if c["wrong"] else text


def main(paths):
    runs = []
    for path in paths:
        with open(path) as f:
            runs.append(json.load(f))
    lines = ["| runtime | condition | " + " | ".join(t for _, t in TOOLS) + " |",
             "|---|---|" + "---|" * len(TOOLS)]
    for run in sorted(runs, key=lambda r: r["runtime"]):
        cells = {(c["condition"], c["tool"]): c for c in run["cells"]}
        for cond in CONDITIONS:
            if not any(k[0] == cond for k in cells):
                continue
            lines.append("| %s | %s | %s |" % (run.get("title", run["runtime"]), cond, " | ".join(
                cell(cells.get((cond, tool))) for tool, _ in TOOLS)))
    lines.append("")
    lines.append(textwrap.fill(
        "Each cell: named / guessed / missing / wrong, of the frames of the runtime's own stack "
        "(wrong: in bold). Seconds per runtime: " + ", ".join(
            "%s %.0f" % (r["runtime"], r["seconds"])
            for r in sorted(runs, key=lambda r: r["runtime"])) + ".", 96))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: table.py DIR/RUNTIME.json...")
    sys.exit(main(sys.argv[1:]))
