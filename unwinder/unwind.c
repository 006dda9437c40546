/* unwind.c: one step of unwinding through JIT code: CFI, then the stackmap's frame size at a
 * record's PC, then the function's own code, then the frame-pointer chain, each with checks
 * that make it decline rather than guess (the methods: step_rules.c and step_frame.c; what
 * they share and the checks every answer passes: step.c). What depends on the architecture
 * (register roles, the frame-size rule, the frame record, instruction patterns) comes from
 * its table (arch/internal.h); a method whose facts the table lacks declines.
 *
 * Everything read from the target (stack words, code bytes) and from the code object (CFI
 * rows, stack sizes) is untrusted: a method that cannot prove its answer passes to the next,
 * and no method returns a caller whose stack pointer is not strictly above this frame's (the
 * GDB plugin relies on that so that a backtrace cannot loop). docs/unwinding.md has the rules
 * and what was measured to establish them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "step.h"

/* -- The methods' names -- */

const char *jitmap_unwind_method_name(jitmap_unwind_method m)
{
	switch (m) {
	case JITMAP_UNWIND_CFI: return "cfi";
	case JITMAP_UNWIND_STACKMAP: return "stackmap";
	case JITMAP_UNWIND_FRAME_POINTER: return "frame-pointer";
	case JITMAP_UNWIND_NATIVE: return "native";
	case JITMAP_UNWIND_CODE: return "code";
	default: return "none";
	}
}

/* -- One step -- */

int jitmap_unwind_step(const jitmap_unwind_code *code, const jitmap_frame_regs *regs,
		       const jitmap_target *target, jitmap_unwind_result *out, char *why,
		       size_t why_len)
{
	return jitmap__unwind_step(code, regs, target, out, why, why_len, NULL, NULL);
}

int jitmap__unwind_step(const jitmap_unwind_code *code, const jitmap_frame_regs *regs,
			const jitmap_target *target, jitmap_unwind_result *out, char *why,
			size_t why_len, bool *stack_unread, struct jitmap__rule_out *rule)
{
	struct jitmap__reasons reasons = {why, why_len, 0, false};
	if (stack_unread)
		*stack_unread = false;
	if (why && why_len)
		why[0] = '\0';
	if (!code || !regs || !out) {
		jitmap__say(&reasons, "unwind", "invalid arguments");
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	if (rule)
		rule->stated = false;
	struct jitmap__notes notes;
	struct jitmap__step s = {.code = code, .regs = regs, .target = target, .why = &reasons,
				 .notes = &notes};
	if (!(s.a = jitmap__arch(code->arch))) {
		jitmap__say(&reasons, "unwind", "architecture %s is not supported",
		    jitmap_arch_name(code->arch));
		return -ENOTSUP;
	}
	if (!jitmap__known(regs, (unsigned)s.a->sp)) {
		jitmap__say(&reasons, "unwind", "the stack pointer of this frame is not known");
		return -ENOENT;
	}
	s.pc = regs->pc;
	s.sp = regs->reg[s.a->sp];
	s.order = code->order != JITMAP_ORDER_AUTO ? code->order
		: code->cfi ? jitmap__cfi_order(code->cfi)
		: s.a->default_order;

	/* The code before the frame-pointer chain: it follows every instruction to the PC, where
	 * the chain trusts the prologue alone (after an epilogue's `leave`, before its tail
	 * call's jump, the frame pointer is already the caller's). The chain answers where the
	 * code cannot be walked, or the function's start is not known. */
	static const struct {
		jitmap_unwind_method m;
		enum jitmap__outcome (*fn)(struct jitmap__step *, jitmap_unwind_result *);
	} order[] = {
		{JITMAP_UNWIND_CFI, jitmap__by_cfi},
		{JITMAP_UNWIND_STACKMAP, jitmap__by_stackmap},
		{JITMAP_UNWIND_CODE, jitmap__by_code},
		{JITMAP_UNWIND_FRAME_POINTER, jitmap__by_frame_pointer},
	};
	const uint32_t flags = JITMAP_UNWIND_PROVEN | JITMAP_UNWIND_UNCHECKED_RETURN;
	const uint32_t mask = code->methods & ~flags ? code->methods : UINT32_MAX;
	bool fault = false, tried = false;
	jitmap_unwind_result r;
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		const jitmap_unwind_method m = order[k].m;
		if (!(mask & JITMAP_UNWIND_MASK(m)))
			continue;
		tried = true;
		s.unproven = false;
		memset(&notes, 0, sizeof(notes));
		notes.cfa_reg = -1;
		notes.out = rule;
		memset(&r, 0, sizeof(r));
		const enum jitmap__outcome o = order[k].fn(&s, &r);
		if (o == JITMAP_STEP_OK) {
			r.method = (jitmap_unwind_method)m;
			*out = r;
			if (why && why_len)
				why[0] = '\0';
			return 0;
		}
		if (rule)
			rule->stated = false; /* said by a method that did not answer */
		if (o == JITMAP_STEP_STOP) {
			*out = (jitmap_unwind_result){.cfa = r.cfa, .method = (jitmap_unwind_method)m};
			return -ESRCH;
		}
		fault |= o == JITMAP_STEP_FAULT;
	}
	if (!tried)
		jitmap__say(&reasons, "unwind", "no method was allowed");
	if (stack_unread)
		*stack_unread = reasons.stack_unread;
	return fault ? -EFAULT : -ENOENT;
}
