"""The count a Python test keeps: its checks passed and failed, its summary, its exit status.

    sys.path.insert(0, ".../tests/lib")
    from tally import Tally
    T = Tally("test-dap")
    T.check(cond, "what was checked")   # cond; a failure prints "test-dap: FAIL: what ..."
    T.skip("why")                        # "test-dap: SKIP: why", exit 77 (ctest: skipped)
    return T.summary()                   # "test-dap: N passed, M failed"; 1 if any failed
"""
import sys


class Tally:
    def __init__(self, name):
        self.name = name
        self.passed = self.failed = 0

    def check(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failed += 1
            print("%s: FAIL: %s" % (self.name, what), flush=True)
        return cond

    def skip(self, why):
        print("%s: SKIP: %s" % (self.name, why), flush=True)
        sys.exit(77)

    def summary(self):
        print("%s: %d passed, %d failed" % (self.name, self.passed, self.failed), flush=True)
        return 1 if self.failed else 0
