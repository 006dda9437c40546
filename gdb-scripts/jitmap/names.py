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

Debugger-neutral (no ``import gdb``): the same names appear in GDB and LLDB. A namer that
raises is ignored (and the name left out): a bad script never breaks a command.
"""

_locations = {}  # (record_id, function or None) -> {index: name}
_deopt = {}      # (record_id, function or None) -> [name, ...]
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
