"""Names for stackmap locations: a small API for runtime authors.

A runtime knows what its deopt values and live values mean ("bytecode pc", "receiver"); the
stackmap does not. Name them once, from a script loaded into the debugger, and every command
shows the names (text: after the value; JSON: a "name" field on the location)::

    import jitmap.names as names
    names.name_locations(100, ["a", "b", "k42"])           # locations 0, 1, 2 of record 100
    names.name_deopt(300, ["bci", "lit", "big"])            # statepoint 300's deopt values
    names.name_locations(7, {4: "receiver"}, function="f")  # only in function f

    def namer(record_id, function, num_locations):          # computed names
        if function and function.startswith("interp_"):
            return {0: "vm_state"}
    names.add_namer(namer)

A runtime can also say how a statepoint's deopt values form the interpreter frames its
compiled code stands for (the frames a deoptimization would rebuild): `deopt_frames`. They
are shown as "virtual frames" by `info stackmap` (text, and "virtual_frames" in JSON) and in
GDB's `bt` under the JIT frame::

    names.deopt_frames(300, [                                # innermost first
        {"method": "Demo.inner", "bci": {"deopt": 1}, "locals": {"x": 0}},
        {"method": {"deopt": 3}, "bci": 12, "locals": [2], "stack": []},
    ])

Debugger-neutral (no ``import gdb``): the same names appear in GDB and LLDB. A namer that
raises is ignored (and the name left out): a bad script never breaks a command.
"""

_locations = {}  # (record_id, function or None) -> {index: name}
_deopt = {}      # (record_id, function or None) -> [name, ...]
_layouts = {}    # (record_id, function or None) -> [frame, ...]
_namers = []


def _as_map(names):
    if isinstance(names, dict):
        return {int(k): str(v) for k, v in names.items()}
    return {i: str(n) for i, n in enumerate(names) if n is not None}


def name_locations(record_id, names, function=None):
    """Name locations of record `record_id` by index: a list (index order; None skips one)
    or a dict {index: name}. With `function`, only records of that function."""
    _locations[(int(record_id), function)] = _as_map(names)


def name_deopt(record_id, names, function=None):
    """Name the deopt values of statepoint `record_id`, in order (None skips one)."""
    _deopt[(int(record_id), function)] = [None if n is None else str(n) for n in names]


def _value_ref(v, what):
    """A number, a name, or {"deopt": index}."""
    if isinstance(v, dict):
        if set(v) != {"deopt"} or not isinstance(v["deopt"], int) or v["deopt"] < 0:
            raise ValueError("%s: {\"deopt\": INDEX} wants one non-negative index" % what)
        return {"deopt": v["deopt"]}
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise ValueError("%s: a number, a name or {\"deopt\": INDEX}" % what)
    return v


def _indexes(v, what):
    """[(name or None, index)] from a list of indexes or a {name: index} dict."""
    items = list(v.items()) if isinstance(v, dict) else [(None, i) for i in v]
    for name, i in items:
        if isinstance(i, bool) or not isinstance(i, int) or i < 0:
            raise ValueError("%s: %r is not a deopt index" % (what, i))
    return [(None if n is None else str(n), i) for n, i in items]


def deopt_frames(record_id, frames, function=None):
    """Say how statepoint `record_id`'s deopt values form interpreter frames, innermost first.
    Each frame is a dict: "method" (a name, a number, or {"deopt": i}: the i-th deopt value is
    the method's ID), "bci" (a number or {"deopt": i}), "locals" and "stack" (deopt indexes:
    a list, or {name: index} for locals). For a record that is not a statepoint the indexes
    are the record's location indexes. With `function`, only records of that function. A
    layout that does not fit the record (an index past its values) is shown with the reason,
    never with guessed values. Raises ValueError for a malformed layout."""
    out = []
    for k, f in enumerate(frames):
        what = "deopt_frames(%s) frame %d" % (record_id, k)
        if not isinstance(f, dict) or "method" not in f:
            raise ValueError(what + ": a dict with at least \"method\"")
        unknown = set(f) - {"method", "bci", "locals", "stack"}
        if unknown:
            raise ValueError("%s: unknown keys %s" % (what, sorted(unknown)))
        out.append({
            "method": _value_ref(f["method"], what + " method"),
            "bci": None if f.get("bci") is None else _value_ref(f["bci"], what + " bci"),
            "locals": _indexes(f.get("locals", []), what + " locals"),
            "stack": _indexes(f.get("stack", []), what + " stack"),
        })
    _layouts[(int(record_id), function)] = out


def frames_for(record_id, function):
    """The layout given for a record (deopt_frames), or None."""
    return _layouts.get((record_id, function)) or _layouts.get((record_id, None))


def has_frames():
    """Whether any layout was given (a fast test for every frame of a backtrace)."""
    return bool(_layouts)


def add_namer(fn):
    """Add fn(record_id, function_name, num_locations) -> {index: name} or None."""
    if fn not in _namers:
        _namers.append(fn)


def remove_namer(fn):
    if fn in _namers:
        _namers.remove(fn)


def clear():
    """Forget every name and namer."""
    _locations.clear()
    _deopt.clear()
    _layouts.clear()
    del _namers[:]


def for_record(record_id, function, num_locations):
    """{index: name} for a record (deopt names are merged by merge_deopt)."""
    out = {}
    for fn in list(_namers):
        try:
            got = fn(record_id, function, num_locations)
            if got:
                out.update({int(k): str(v) for k, v in dict(got).items()})
        except Exception:
            continue
    out.update(_locations.get((record_id, None), {}))
    out.update(_locations.get((record_id, function), {}))
    return {k: v for k, v in out.items() if 0 <= k < num_locations}


def merge_deopt(labels, record_id, function, deopt_indexes):
    names = _deopt.get((record_id, function)) or _deopt.get((record_id, None))
    if not names:
        return labels
    out = dict(labels)
    for idx, name in zip(deopt_indexes, names):
        if name is not None:
            out[idx] = name
    return out
