"""A Python program for jitmap's runtime tests (tests/runtimes/test_runtimes.py cpython): six
nested functions, the innermost asleep for SECONDS, run with `-X perf` (a perf map, and a
trampoline per Python function) or `-X perf_jit` (a jitdump, with unwinding information for
the trampolines).

    python3.13 -X perf py_nested.py TRUTH SECONDS

Before it sleeps it writes the interpreter's own stack of its thread to TRUTH, one function a
line, innermost first (the truth the tools are held to), and prints "ready".
"""
import sys
import threading
import time


def f6(truth, seconds):
    # -X perf_jit writes its jitdump through a stdio buffer: the records of the newest code
    # objects, f1's to f6's among them, reach the file only once later ones have filled the
    # buffer (a program that goes on running does that by itself). Run fresh code until then.
    for i in range(64):
        exec(compile("def g():\n    return %d\ng()\n" % i, "<flush %d>" % i, "exec"), {})
    names = []
    frame = sys._current_frames()[threading.get_ident()]
    while frame is not None:
        names.append(frame.f_code.co_qualname)
        frame = frame.f_back
    with open(truth, "w") as out:
        out.write("\n".join(names) + "\n")
    print("ready", flush=True)
    time.sleep(seconds)


def f5(truth, seconds):
    f6(truth, seconds)


def f4(truth, seconds):
    f5(truth, seconds)


def f3(truth, seconds):
    f4(truth, seconds)


def f2(truth, seconds):
    f3(truth, seconds)


def f1(truth, seconds):
    f2(truth, seconds)


f1(sys.argv[1], float(sys.argv[2]))
