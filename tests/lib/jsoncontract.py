"""Every JSON output of jitmap, held to its schema (docs/schema/*.schema.json).

    import jsoncontract
    obj = jsoncontract.loads(text, "jitmap-stack")     # or an output named by its command:
    obj = jsoncontract.loads(text, jsoncontract.output_of("info stackmap -json 1"))

`loads` parses and validates; an object the schema refuses raises ContractError naming the
output, the path in the object and what is wrong. The tests hold jitmap to a stricter schema
than a consumer needs: a field the schema does not list is an error here (the schemas say
what a consumer may rely on, so a field jitmap prints must be in them), while the installed
schemas allow fields to be added, as docs/json.md promises.

With $JITMAP_TEST_JSON_SAMPLES set to a directory, every object checked is also appended
there to OUTPUT.jsonl (to read what the outputs really print).

Run as a script: `jsoncontract.py OUTPUT [FILE]` checks FILE (or standard input): one
object, or one per line for jitmap-dump.
"""

import json
import os
import sys
import threading

SCHEMAS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                       "docs", "schema")

# Output name -> schema file.
OUTPUTS = {
    "frame": "frame.schema.json",
    "stackmaps": "stackmaps.schema.json",
    "gc-roots": "gc-roots.schema.json",
    "verify": "verify.schema.json",
    "bt": "bt.schema.json",
    "jitmap-stack": "jitmap-stack.schema.json",
    "jitmap-dump": "jitmap-dump.schema.json",
}

# A debugger command -> its output (GDB's and LLDB's spellings).
_COMMANDS = [
    ("info stackmaps", "stackmaps"), ("stackmap list", "stackmaps"),
    ("info stackmap", "frame"), ("stackmap info", "frame"),
    ("info gc-roots", "gc-roots"), ("stackmap gc-roots", "gc-roots"),
    ("jitmap verify", "verify"), ("stackmap verify", "verify"),
    ("stackmap bt", "bt"),
]


class ContractError(ValueError):
    pass


def output_of(command):
    """The output a debugger command's JSON is (ValueError for one that prints none)."""
    c = " ".join(command.split())
    for prefix, name in _COMMANDS:
        if c.startswith(prefix + " ") or c == prefix:
            return name
    raise ValueError("no JSON output is known for %r" % command)


def _jsonschema():
    try:
        import jsonschema
    except ImportError:
        # The tests may run under a python3 other than Debian's (a pyenv one, say), which
        # does not see Debian's python3-jsonschema: look there too.
        for d in ("/usr/lib/python3/dist-packages",):
            if os.path.isdir(d) and d not in sys.path:
                sys.path.append(d)
        try:
            import jsonschema
        except ImportError:
            raise SystemExit("jsoncontract: python3-jsonschema is needed to check the JSON "
                             "outputs (scripts/setup.sh installs it)")
    return jsonschema


def _strict(node):
    """NODE with every object that lists its properties closed to others."""
    if isinstance(node, dict):
        # "if", "then", "else" and "not" say a thing or two of an object, not all it holds.
        out = {k: (v if k in ("if", "then", "else", "not") else _strict(v))
               for k, v in node.items()}
        if "properties" in out and "additionalProperties" not in out:
            out["additionalProperties"] = False
        return out
    if isinstance(node, list):
        return [_strict(v) for v in node]
    return node


_validators = {}
# A validator's RefResolver keeps a stack of the scopes it is in while it follows a "$ref":
# one check at a time (tests/field reads its conditions in two threads).
_lock = threading.Lock()


def _validator(output):
    if output in _validators:
        return _validators[output]
    if output not in OUTPUTS:
        raise ValueError("no schema for output %r (known: %s)" % (output, ", ".join(OUTPUTS)))
    js = _jsonschema()
    store = {}
    for name in os.listdir(SCHEMAS):
        if name.endswith(".schema.json"):
            with open(os.path.join(SCHEMAS, name)) as f:
                store["file://" + os.path.join(SCHEMAS, name)] = _strict(json.load(f))
    uri = "file://" + os.path.join(SCHEMAS, OUTPUTS[output])
    schema = store[uri]
    cls = js.validators.validator_for(schema)
    cls.check_schema(schema)
    resolver = js.RefResolver(base_uri=uri, referrer=schema, store=store)
    v = cls(schema, resolver=resolver)
    _validators[output] = v
    return v


def _where(path):
    s = "$"
    for p in path:
        s += "[%d]" % p if isinstance(p, int) else ".%s" % p
    return s


def check(obj, output):
    """Raise ContractError if OBJ is not what OUTPUT's schema says."""
    with _lock:
        errors = sorted(_validator(output).iter_errors(obj), key=lambda e: list(e.absolute_path))
    samples = os.environ.get("JITMAP_TEST_JSON_SAMPLES")
    if samples:
        os.makedirs(samples, exist_ok=True)
        with open(os.path.join(samples, output + ".jsonl"), "a") as f:
            f.write(json.dumps(obj) + "\n")
    if errors:
        e = errors[0]
        # The deepest reason of a oneOf/anyOf, which says more than "is not valid under any".
        while e.context:
            e = max(e.context, key=lambda c: len(c.absolute_path))
        raise ContractError("%s JSON breaks its schema (%s, %d problem%s): at %s: %s" % (
            output, OUTPUTS[output], len(errors), "" if len(errors) == 1 else "s",
            _where(e.absolute_path), e.message[:300]))
    return obj


def loads(text, output):
    """TEXT parsed and checked against OUTPUT's schema."""
    return check(json.loads(text), output)


def main(argv):
    if len(argv) not in (2, 3) or argv[1] not in OUTPUTS:
        sys.stderr.write("usage: jsoncontract.py OUTPUT [FILE]\n  OUTPUT: %s\n" % " ".join(OUTPUTS))
        return 2
    text = open(argv[2]).read() if len(argv) == 3 else sys.stdin.read()
    objs = [l for l in text.splitlines() if l.strip()] if argv[1] == "jitmap-dump" else [text]
    try:
        for t in objs:
            loads(t, argv[1])
    except (ContractError, ValueError) as e:
        sys.stderr.write("%s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
