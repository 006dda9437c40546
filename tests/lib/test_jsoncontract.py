#!/usr/bin/env python3
"""test_jsoncontract.py BUILD_DIR: the JSON Schemas (docs/schema) and the check every test
puts JSON through (jsoncontract.py) can fail.

- Each schema is a valid JSON Schema (its metaschema's check), and every output has one.
- jitmap-dump --format=json of the demo object (real records: registers, a constant pool
  entry, live-outs, a statepoint) keeps its schema; damaged copies of it do not: a field of
  the wrong type, a required field gone, a value the contract does not have, and (the tests'
  strict reading) a field the schema does not list, which the installed schema, read as a
  consumer reads it, still accepts.
- output_of names each debugger command's output in both spellings.
"""
import copy
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jsoncontract as J  # noqa: E402
from tally import Tally  # noqa: E402

T = Tally("test-jsoncontract")
check = T.check


def refused(obj, output, what, needle):
    try:
        J.check(obj, output)
    except J.ContractError as e:
        check(needle in str(e), "%s: the error names it (%s): %s" % (what, needle, e))
        return
    check(False, "%s: accepted" % what)


def main():
    build = sys.argv[1]
    js = J._jsonschema()
    names = sorted(n for n in os.listdir(J.SCHEMAS) if n.endswith(".schema.json"))
    check(set(J.OUTPUTS.values()) | {"common.schema.json"} == set(names),
          "one schema per output, and common: %s" % names)
    for n in names:
        with open(os.path.join(J.SCHEMAS, n)) as f:
            schema = json.load(f)
        try:
            js.validators.validator_for(schema).check_schema(schema)
            check(True, n)
        except js.exceptions.SchemaError as e:
            check(False, "%s is not a valid schema: %s" % (n, e.message))

    r = subprocess.run([os.path.join(build, "jitmap-dump"), "--format=json",
                        os.path.join(build, "demo.o")], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "jitmap-dump demo.o: exit %d: %s" % (r.returncode, r.stderr))
    good = J.loads(r.stdout, "jitmap-dump")
    recs = good["blobs"][0]["records"]
    check(len(recs) == 3 and recs[2]["statepoint"] is not None and recs[1]["live_outs"],
          "the demo object has a statepoint and live-outs: %s" % [x["id"] for x in recs])

    bad = copy.deepcopy(good)
    bad["blobs"][0]["version"] = "3"
    refused(bad, "jitmap-dump", "a version that is a string", "version")
    bad = copy.deepcopy(good)
    del bad["blobs"][0]["records"][0]["section_offset"]
    refused(bad, "jitmap-dump", "a record without section_offset", "section_offset")
    bad = copy.deepcopy(good)
    bad["blobs"][0]["records"][0]["pc"] = "0X1B"
    refused(bad, "jitmap-dump", "a PC in upper case", "0X1B")
    bad = copy.deepcopy(good)
    bad["blobs"][0]["records"][0]["locations"][0]["kind"] = "spill"
    refused(bad, "jitmap-dump", "a location kind the format does not have", "spill")
    bad = copy.deepcopy(good)
    del bad["blobs"][0]["records"][0]["locations"][0]["dwarf_reg"]
    refused(bad, "jitmap-dump", "a register location without its register", "dwarf_reg")
    bad = copy.deepcopy(good)
    bad["blobs"][0]["records"][2]["statepoint"]["gc_roots"][0]["base"]["size"] = -8
    refused(bad, "jitmap-dump", "a negative size", "-8")

    # Strict here, open for a consumer: a field the schema does not list.
    bad = copy.deepcopy(good)
    bad["blobs"][0]["records"][0]["colour"] = "red"
    refused(bad, "jitmap-dump", "a field the schema does not list", "colour")
    with open(os.path.join(J.SCHEMAS, "jitmap-dump.schema.json")) as f:
        schema = json.load(f)
    store = {}
    for n in names:
        with open(os.path.join(J.SCHEMAS, n)) as f:
            store["file://" + os.path.join(J.SCHEMAS, n)] = json.load(f)
    uri = "file://" + os.path.join(J.SCHEMAS, "jitmap-dump.schema.json")
    cls = js.validators.validator_for(schema)
    consumer = cls(schema, resolver=js.RefResolver(uri, schema, store=store))
    check(consumer.is_valid(bad), "the installed schema lets fields be added (docs/json.md)")

    # A frame's value: null only with an error, and an error only with null.
    loc = {"index": 0, "kind": "register", "where": "rbx", "size": 8, "value": 42}
    frame = {"frame": 1, "pc": "0x1000", "function": "f",
             "record": {"id": 7, "offset": 4, "function_address": "0xffc", "stack_size": 8,
                        "pc": "0x1000", "match": "exact", "source": "JIT entry 0x10"},
             "locations": [loc], "live_outs": [], "statepoint": None}
    check(J.check(frame, "frame") is frame, "a frame at a record")
    bad = copy.deepcopy(frame)
    bad["locations"][0]["value"] = None
    refused(bad, "frame", "a null value without its error", "error")
    bad["locations"][0]["error"] = "register rbx not available"
    check(J.check(bad, "frame") is bad, "a null value with its error")
    bad = copy.deepcopy(frame)
    bad["locations"][0]["error"] = "why?"
    refused(bad, "frame", "an error beside a value", "locations")
    bad = copy.deepcopy(frame)
    del bad["frame"]
    refused(bad, "frame", "info stackmap -json without its frame", "frame")
    bad = copy.deepcopy(frame)
    bad["record"]["match"] = "near"
    refused(bad, "frame", "a match the contract does not have", "near")

    # jitmap-stack: a native frame has a module and no source, a JIT frame the reverse; a
    # target that cannot be read is process null with its error, and only then an error.
    native = {"index": 0, "pc": "0x401010", "function": "f", "module": "a.out",
              "build_id": "0123456789abcdef", "module_offset": "0x1010", "jit_entry": None,
              "jit": False, "source": None, "unwound_by": "native", "guess": None,
              "stackmap": None}
    jit = dict(native, module=None, build_id=None, module_offset=None, jit_entry="0x5000",
               jit=True, source={"kind": "jit-entry", "path": None}, unwound_by="cfi")
    proc = {"pid": 1, "ns_pid": 1, "live": True, "core": None, "name": None, "arch": "x86-64",
            "jit_descriptors": 1, "jit_entries": 1, "jit_entries_read": 1, "error": None,
            "perf_maps": [], "small_core": None}
    stack = {"process": proc, "threads": [{"tid": 1, "name": None, "frames": [native, jit],
                                           "frames_cut": 0}],
             "threads_cut": 0, "problems": []}
    check(J.check(stack, "jitmap-stack") is stack, "jitmap-stack: a native and a JIT frame")
    for field, value, needle in (("build_id", "0X12", "0X12"), ("source", jit["source"], "source"),
                                 ("module_offset", 4096, "4096")):
        bad = copy.deepcopy(stack)
        bad["threads"][0]["frames"][0][field] = value
        refused(bad, "jitmap-stack", "a native frame's %s %r" % (field, value), needle)
    bad = copy.deepcopy(stack)
    bad["threads"][0]["frames"][1]["build_id"] = "0123"
    refused(bad, "jitmap-stack", "a JIT frame with a build ID", "build_id")
    bad = copy.deepcopy(stack)
    bad["threads"][0]["frames"][1]["source"] = {"kind": "core-dump", "path": None}
    refused(bad, "jitmap-stack", "a source kind the contract does not have", "core-dump")
    failed = {"process": None, "threads": [], "problems": [], "error": "no process 1"}
    check(J.check(failed, "jitmap-stack") is failed, "jitmap-stack: a target not read")
    refused(dict(failed, error=None), "jitmap-stack", "process null, error null", "error")
    bad = dict(failed)
    del bad["error"]
    refused(bad, "jitmap-stack", "process null without its error", "error")
    refused(dict(failed, threads=stack["threads"]), "jitmap-stack", "process null with threads",
            "threads")
    refused(dict(stack, error="why?"), "jitmap-stack", "an error beside a process", "error")

    for cmd, out in (("info stackmap -json 1", "frame"), ("stackmap info --json 1", "frame"),
                     ("info stackmaps -json", "stackmaps"), ("stackmap list --json", "stackmaps"),
                     ("info gc-roots -all -json", "gc-roots"),
                     ("stackmap gc-roots --all --json", "gc-roots"),
                     ("jitmap verify -json", "verify"), ("stackmap verify --json", "verify"),
                     ("stackmap bt --json", "bt")):
        check(J.output_of(cmd) == out, "output_of(%r) = %r" % (cmd, J.output_of(cmd)))
    try:
        J.output_of("bt")
        check(False, "output_of('bt') names no output")
    except ValueError:
        check(True, "bt")

    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
