/* step_rules.c: the methods of a step that find the frame's rules at the PC from a
 * description of it: the CFI's row (read through libdwarf by cfi.c), then, after the stackmap
 * (step_frame.c), the walk of the function's own instructions (walk.c). Each declines, saying
 * why, where its description is missing or does not prove the caller (step.c's checks).
 */
#include <stdio.h>
#include <stdlib.h>

#include "step.h"

#define U(x) ((unsigned long long)(x)) /* for %llx */

/* -- CFI -- */

enum jitmap__outcome jitmap__by_cfi(struct jitmap__step *s, jitmap_unwind_result *r)
{
	const char *const M = "cfi";
	const jitmap_cfi *cfi = s->code->cfi;
	/* An outer frame's PC is a return address, which may lie past the end of the calling
	 * function (a call to a noreturn function); the call instruction is the one before. */
	const uint64_t at = s->code->is_innermost ? s->pc : s->pc - 1;
	if (!cfi) {
		jitmap__say(s->why, M, "no CFI for this code");
		return JITMAP_STEP_DECLINE;
	}
	struct jitmap__cfi_row row;
	char msg[224];
	const int rc = jitmap__cfi_row(cfi, at, &row, msg, sizeof(msg));
	if (rc) {
		jitmap__say(s->why, M, "%s", msg);
		return JITMAP_STEP_DECLINE;
	}
	s->fde_lo = row.fde_lo;
	s->fde_hi = row.fde_hi;
	if (row.cfa_is_expression) {
		jitmap__say(s->why, M, "the CFA at 0x%llx is a DWARF expression, which is not "
			    "evaluated", U(at));
		return JITMAP_STEP_DECLINE;
	}
	if (row.cfa_reg >= JITMAP_UNWIND_MAX_REGS || !jitmap__known(s->regs, row.cfa_reg)) {
		jitmap__say(s->why, M, "the CFA at 0x%llx is register %u + %lld, not known in this "
			    "frame", U(at), row.cfa_reg, (long long)row.cfa_off);
		return JITMAP_STEP_DECLINE;
	}
	const uint64_t cfa = s->regs->reg[row.cfa_reg] + (uint64_t)row.cfa_off;
	jitmap__note_cfa(s, row.cfa_reg);

	uint64_t ra = 0, ra_at = 0;
	bool ra_in_reg = false;
	const struct jitmap__rule *rr = &row.rule[(unsigned)s->a->ra];
	switch (rr->kind) {
	case JITMAP_RULE_UNDEFINED:
		jitmap__say(s->why, M, "the return address is undefined at 0x%llx: the outermost "
			    "frame", U(at));
		r->cfa = cfa; /* the frame's own ID needs it; there is no caller */
		return JITMAP_STEP_STOP;
	case JITMAP_RULE_OFFSET:
		ra_at = cfa + (uint64_t)rr->off;
		if (jitmap__step_word(s, ra_at, &ra)) {
			s->why->stack_unread = true;
			jitmap__say(s->why, M, "cannot read the return address at 0x%llx",
				    U(ra_at));
			return JITMAP_STEP_FAULT;
		}
		break;
	case JITMAP_RULE_VAL_OFFSET:
		ra = cfa + (uint64_t)rr->off;
		jitmap__note_ra(s, JITMAP_UNWIND_CFA_PLUS, ra, 0);
		break;
	case JITMAP_RULE_REGISTER:
		if (rr->reg >= JITMAP_UNWIND_MAX_REGS || !jitmap__known(s->regs, rr->reg)) {
			jitmap__say(s->why, M, "the return address is in register %u, not known "
				    "here", rr->reg);
			return JITMAP_STEP_DECLINE;
		}
		ra = s->regs->reg[rr->reg];
		jitmap__note_ra(s, JITMAP_UNWIND_IN_REG, 0, rr->reg);
		break;
	case JITMAP_RULE_SAME:
		/* A link register the function never saved still holds the return address. */
		if (!s->a->ra_in_register || !jitmap__known(s->regs, (unsigned)s->a->ra)) {
			jitmap__say(s->why, M, "no rule for the return address column %u at 0x%llx",
				    (unsigned)s->a->ra, U(at));
			return JITMAP_STEP_DECLINE;
		}
		ra = s->regs->reg[s->a->ra];
		jitmap__note_ra(s, JITMAP_UNWIND_IN_REG, 0, (unsigned)s->a->ra);
		/* A leaf's caller has the leaf's SP. Only where the CFA lies above the caller's
		 * SP (s390x) is that told apart from a row that is wrong: LLVM 14's AArch64 CFI
		 * has no rows inside the prologue (CFA = SP until the frame is built, measured on
		 * tests/fixtures/cross/cross-aarch64.elf), so there a CFA equal to SP is not
		 * believed and the frame-pointer method's prologue rules answer. */
		ra_in_reg = s->a->cfa_sp_offset != 0;
		break;
	default:
		jitmap__say(s->why, M, "the return address at 0x%llx is a DWARF expression, which "
			    "is not evaluated", U(at));
		return JITMAP_STEP_DECLINE;
	}

	for (unsigned reg = 0; reg < JITMAP_UNWIND_MAX_REGS; reg++) {
		if (reg == (unsigned)s->a->sp || !jitmap_unwind_callee_saved(s->code->arch, reg))
			continue;
		const struct jitmap__rule *x = &row.rule[reg];
		uint64_t v = 0;
		bool ok = false;
		switch (x->kind) {
		case JITMAP_RULE_SAME:
			ok = jitmap__known(s->regs, reg);
			v = s->regs->reg[reg];
			break;
		case JITMAP_RULE_OFFSET:
			/* An unreadable save slot loses that register, not the frame. */
			jitmap__note_saved(s, reg, JITMAP_UNWIND_AT_CFA, cfa + (uint64_t)x->off, 0);
			ok = jitmap__step_word(s, cfa + (uint64_t)x->off, &v) == 0;
			break;
		case JITMAP_RULE_VAL_OFFSET:
			ok = true;
			v = cfa + (uint64_t)x->off;
			jitmap__note_saved(s, reg, JITMAP_UNWIND_CFA_PLUS, v, 0);
			break;
		case JITMAP_RULE_REGISTER:
			ok = x->reg < JITMAP_UNWIND_MAX_REGS && jitmap__known(s->regs, x->reg);
			v = ok ? s->regs->reg[x->reg] : 0;
			if (x->reg < JITMAP_UNWIND_MAX_REGS)
				jitmap__note_saved(s, reg, JITMAP_UNWIND_IN_REG, 0, x->reg);
			else if (s->notes) /* no register a rule can name */
				s->notes->full = true;
			break;
		default: /* undefined, or an expression: unknown, which no rule of ours says (a
			  * reader would take the register as unchanged) */
			if (s->notes)
				s->notes->full = true;
			break;
		}
		if (ok)
			jitmap_frame_reg_set(&r->caller, reg, v);
	}
	return jitmap__accept_at(s, M, r, cfa, ra, ra_at, ra_in_reg);
}

/* -- The function's own instructions (walk.c) -- */

enum jitmap__outcome jitmap__by_code(struct jitmap__step *s, jitmap_unwind_result *r)
{
	const char *const M = "code";
	const uint64_t lo = s->code->func_lo, hi = s->code->func_hi;
	if (hi <= lo || s->pc < lo || s->pc > hi) {
		jitmap__say(s->why, M, "the function's range is not known");
		return JITMAP_STEP_DECLINE;
	}
	if (!s->a->ra_slot) {
		jitmap__say(s->why, M, "not done for %s", s->a->name);
		return JITMAP_STEP_DECLINE;
	}
	/* The whole function when it can be read (paths go past the PC and come back), else
	 * what there is of it up to the PC and an instruction beyond. */
	size_t len = hi - lo > (64u << 10) ? (64u << 10) : (size_t)(hi - lo);
	uint8_t *code = malloc(len ? len : 1);
	if (!code) {
		jitmap__say(s->why, M, "out of memory");
		return JITMAP_STEP_DECLINE;
	}
	if (jitmap__step_read(s, lo, code, len)) {
		const size_t to_pc = (size_t)(s->pc - lo);
		size_t n = to_pc + JITMAP__INSN_MAX < len ? to_pc + JITMAP__INSN_MAX : len;
		while (n > to_pc && jitmap__step_read(s, lo, code, n))
			n--;
		if (jitmap__step_read(s, lo, code, n) || (n == to_pc && s->code->is_innermost)) {
			free(code);
			jitmap__say(s->why, M, "cannot read the code of the function at 0x%llx",
				    U(lo));
			return JITMAP_STEP_FAULT;
		}
		len = n;
	}
	struct jitmap__walk w;
	char msg[256];
	const int rc = jitmap__code_walk(s->code->arch, code, len, lo, s->pc, s->code->is_innermost,
					 &w, msg, sizeof(msg));
	free(code);
	if (rc) {
		jitmap__say(s->why, M, "%s", msg);
		return JITMAP_STEP_DECLINE;
	}
	/* From the frame pointer where the function set it: a call that returns with SP moved
	 * (V8's out-of-line prologue does) cannot mislead that one. */
	uint64_t cfa;
	const unsigned fp = (unsigned)s->a->fp;
	if (w.fp_known && jitmap__known(s->regs, fp)) {
		cfa = s->regs->reg[fp] + (uint64_t)w.fp_off;
		jitmap__note_cfa(s, fp);
	} else if (w.sp_known) {
		cfa = s->sp + (uint64_t)w.sp_off;
		jitmap__note_cfa(s, (unsigned)s->a->sp);
	} else {
		jitmap__say(s->why, M, "the CFA is %s + %lld, not known in this frame",
			    jitmap_reg_name(s->code->arch, fp), (long long)w.fp_off);
		return JITMAP_STEP_DECLINE;
	}
	uint64_t ra;
	if (jitmap__step_word(s, cfa - s->a->ra_slot, &ra)) {
		s->why->stack_unread = true;
		jitmap__say(s->why, M, "cannot read the return address at 0x%llx",
			    U(cfa - s->a->ra_slot));
		return JITMAP_STEP_FAULT;
	}
	for (unsigned k = 0; k < w.nslots; k++)
		if (jitmap_unwind_callee_saved(s->code->arch, w.slot[k].reg))
			jitmap__restore(s, &r->caller, w.slot[k].reg,
					cfa - (uint64_t)w.slot[k].off);
	/* What no path to the PC wrote is still the caller's (a pushed one was read back). */
	for (unsigned reg = 0; reg < 64 && reg < JITMAP_UNWIND_MAX_REGS; reg++)
		if (reg != (unsigned)s->a->sp && jitmap_unwind_callee_saved(s->code->arch, reg) &&
		    !(w.written >> reg & 1) && jitmap__known(s->regs, reg) &&
		    !jitmap__known(&r->caller, reg))
			jitmap_frame_reg_set(&r->caller, reg, s->regs->reg[reg]);
	return jitmap__accept(s, M, r, cfa, ra, cfa - s->a->ra_slot);
}

