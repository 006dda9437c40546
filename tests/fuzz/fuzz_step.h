/* fuzz_step.h: what fuzz_cfi and fuzz_unwind check of one jitmap_unwind_step answer (its
 * contract in include/jitmap/unwind.h), so that both hold every method to the same rules.
 * Includes fuzz_common.h for CHECK. */
#ifndef JITMAP_FUZZ_STEP_H
#define JITMAP_FUZZ_STEP_H

#include "fuzz_common.h"
#include "jitmap/unwind.h"

/* `rc`, `res` and `why` (`why_len` bytes) are what jitmap_unwind_step answered for frame
 * `regs` of `arch` (`innermost`: frame 0). `notsup_ok`: -ENOTSUP is a possible answer. */
static inline void check_step(jitmap_arch arch, bool innermost, const jitmap_frame_regs *regs,
			      int rc, const jitmap_unwind_result *res, const char *why,
			      size_t why_len, bool notsup_ok)
{
	unsigned sp, fp, ra;
	CHECK(jitmap_unwind_arch_regs(arch, &sp, &fp, &ra) == 0);
	CHECK(memchr(why, '\0', why_len) != NULL);
	if (rc == 0) {
		CHECK((res->method >= JITMAP_UNWIND_CFI &&
		       res->method <= JITMAP_UNWIND_FRAME_POINTER) ||
		      res->method == JITMAP_UNWIND_CODE);
		CHECK(jitmap_frame_reg_known(&res->caller, sp));
		/* The caller's SP is the CFA, or on s390x 160 bytes below it (the register save
		 * area), and above this frame's SP; only frame 0 with its return address still in
		 * the link register (a leaf that allocated nothing) may share its SP. */
		const uint64_t off = arch == JITMAP_ARCH_S390X ? 160 : 0;
		const bool leaf = innermost && ra != sp && res->caller.pc == regs->reg[ra];
		CHECK(res->caller.reg[sp] == res->cfa - off);
		CHECK(res->caller.reg[sp] > regs->reg[sp] ||
		      (leaf && res->caller.reg[sp] == regs->reg[sp]));
		CHECK(res->cfa > regs->reg[sp] || (leaf && res->cfa == regs->reg[sp]));
		/* Caller-saved registers are never known in the caller. */
		for (unsigned r = 0; r < JITMAP_UNWIND_MAX_REGS; r++)
			if (jitmap_frame_reg_known(&res->caller, r))
				CHECK(r == sp || jitmap_unwind_callee_saved(arch, r));
	} else if (rc == -ENOTSUP) {
		CHECK(notsup_ok);
	} else {
		CHECK(rc == -ENOENT || rc == -EFAULT || rc == -ESRCH);
		CHECK(why[0] != '\0');
		/* The outermost frame (unwind.h): found by CFI, and no caller. */
		if (rc == -ESRCH)
			CHECK(res->method == JITMAP_UNWIND_CFI && !res->caller.known[0]);
	}
}

#endif
