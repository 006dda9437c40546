"""The negative control of gdb.registers.lli (sourced into GDB after jitmap.gdb): jitmap's
perf-map unwinder as it was before issue 34, which took the frames of registered JIT code too
and stepped them by the frame-pointer chain alone, and its frame filter on for every
backtrace."""
import jitmap.gdb_frames
import jitmap.gdb_perf
import jitmap.perfmaps as P


def _frame_pointer_only(self, pc, regs, exact):
    try:
        caller_pc, caller, cfa = P.frame_pointer_step(self.arch, pc, regs, self.read_memory,
                                                      exact)
    except P.Unavailable as e:
        return P.Step(-2, 0, {}, False, 0, "none", False, str(e), pc, None, None)
    return P.Step(0, caller_pc, caller, False, cfa, "frame-pointer", False, "", pc, None, None)


jitmap.gdb_perf._registered_jit_code = lambda pc: False
jitmap.gdb_frames._needed = lambda: True
P.Stepper.step = _frame_pointer_only
