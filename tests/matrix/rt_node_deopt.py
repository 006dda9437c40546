"""Node.js with a deoptimization under the stop, for the runtime matrix (tests/matrix/README.md):
node_deopt_prog.js, whose last call takes a branch its warm-up never took, so that the three
functions go on in V8's interpreter after their optimized code was thrown away. Live only (the
other conditions are node's, rt_node.py). The truth: V8's own call sites."""
import os

import rt_node

HERE = os.path.dirname(os.path.abspath(__file__))


class Runtime(rt_node.Runtime):
    name = "node_deopt"
    title = "Node.js 20, deoptimized"
    conditions = ("live",)

    def start(self, tmp, exe):
        argv, env = super().start(tmp, exe)
        return [os.path.join(HERE, "node_deopt_prog.js") if a.endswith("node_prog.js") else a
                for a in argv], env
