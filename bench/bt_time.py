"""bt_time.py: sourced in GDB by bench/gdb_reader.sh, stopped in jitmap_demo_safepoint under
`--program recursion --depth N`: times `bt` through every frame, as at a fresh stop.

Before each `bt`: `maint flush register-cache` (GDB drops its frame cache and unwinds every
frame again) and, when jitmap's reader is loaded, jitmap_reader_invalidate(RECHECK), what
jitmap.gdb does at every stop (the reader drops its per-stop caches and re-checks the
entry's code bytes before using it again). Timed with time.perf_counter around
gdb.execute("bt", to_string=True). Prints one line:

    BT frames=F runs=R median_ms=M min_ms=M per_frame_us=U

per_frame_us is the median divided by the number of frames. BT_RUNS (environment) sets R
(default 30).
"""
import os
import statistics
import sys
import time

import gdb


def _once():
    gdb.execute("maint flush register-cache", to_string=True)
    reader = sys.modules.get("jitmap.gdb_reader")
    lib = reader.library() if reader is not None else None
    if lib is not None:
        lib.jitmap_reader_invalidate(0)  # RECHECK
    t0 = time.perf_counter()
    out = gdb.execute("bt", to_string=True)
    return time.perf_counter() - t0, sum(1 for line in out.splitlines() if line.startswith("#"))


def main():
    runs = int(os.environ.get("BT_RUNS", "30"))
    _once()  # warm: the reader's CFI and GDB's symbol lookups are made once per session
    results = [_once() for _ in range(runs)]
    frames = {f for _, f in results}
    if len(frames) != 1:
        raise gdb.GdbError("bt_time.py: bt gave different frame counts: %s" % sorted(frames))
    ts = sorted(t for t, _ in results)
    med = statistics.median(ts)
    n = frames.pop()
    print("BT frames=%d runs=%d median_ms=%.2f min_ms=%.2f per_frame_us=%.2f"
          % (n, runs, med * 1e3, ts[0] * 1e3, med * 1e6 / n))


main()
