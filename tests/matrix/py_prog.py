"""The Python program of the runtime matrix (rt_python.py): four nested functions, the innermost
asleep for SECONDS. Before it sleeps it prints its thread's stack as the interpreter sees it
(sys._current_frames()), innermost first, "frame QUALNAME:FILE" a line, then "ready".

    python3.13 -X perf py_prog.py SECONDS
"""
import sys
import threading
import time


def inner(seconds):
    frame = sys._current_frames()[threading.get_ident()]
    lines = []
    while frame is not None:
        lines.append("frame %s:%s" % (frame.f_code.co_qualname, frame.f_code.co_filename))
        frame = frame.f_back
    print("\n".join(lines) + "\nready", flush=True)
    time.sleep(seconds)


def middle(seconds):
    inner(seconds)
    return 1


def outer(seconds):
    middle(seconds)
    return 2


class Runner:
    def run(self, seconds):
        outer(seconds)
        return 3


Runner().run(float(sys.argv[1]))
