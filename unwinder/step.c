/* step.c: what every method of one unwinding step shares (unwind.c runs them; step_rules.c
 * and step_frame.c are the methods): the step's reads of the target, the reasons a method
 * gives when it declines, and the checks every answer passes before it is one: the caller's
 * stack pointer above this frame's, and a return address that follows a call
 * (jitmap__follows_call, which the stacker asks too).
 */
#include <stdio.h>
#include <stdlib.h>

#include "step.h"

#define U(x) ((unsigned long long)(x)) /* for %llx */

/* -- Reasons -- */

void jitmap__say(struct jitmap__reasons *r, const char *method, const char *fmt, ...)
{
	if (!r->buf || r->len == 0 || r->used + 1 >= r->len)
		return;
	int n = snprintf(r->buf + r->used, r->len - r->used, "%s%s: ", r->used ? "; " : "",
			 method);
	if (n < 0 || (size_t)n >= r->len - r->used) {
		r->used = r->len - 1;
		return;
	}
	r->used += (size_t)n;
	va_list ap;
	va_start(ap, fmt);
	n = vsnprintf(r->buf + r->used, r->len - r->used, fmt, ap);
	va_end(ap);
	r->used = n < 0 || (size_t)n >= r->len - r->used ? r->len - 1 : r->used + (size_t)n;
}

/* -- The step's reads and registers -- */

int jitmap__step_read(const struct jitmap__step *s, uint64_t addr, void *buf, size_t len)
{
	if (!s->target || !s->target->read_mem)
		return -EFAULT;
	char why[8]; /* the unwinder says which address it could not read, not why */
	return s->target->read_mem(s->target->ctx, addr, buf, len, why, sizeof(why)) ? -EFAULT : 0;
}

int jitmap__step_word(const struct jitmap__step *s, uint64_t addr, uint64_t *v)
{
	uint8_t b[8];
	if (jitmap__step_read(s, addr, b, sizeof(b)))
		return -EFAULT;
	*v = jitmap__load(b, sizeof(b), s->order);
	return 0;
}

/* Carry every known callee-saved register of this frame over to the caller (for PCs where
 * none has been touched yet, or all have been restored). The SP is set apart. */
void jitmap__carry_callee_saved(const struct jitmap__step *s, jitmap_frame_regs *caller)
{
	for (unsigned r = 0; r < JITMAP_UNWIND_MAX_REGS; r++) {
		if (r != (unsigned)s->a->sp && jitmap_unwind_callee_saved(s->code->arch, r) &&
		    jitmap__known(s->regs, r))
			jitmap_frame_reg_set(caller, r, s->regs->reg[r]);
	}
}

/* A return address as the address it returns to: without the signature a signed one carries
 * above the address bits (the table's code_address_mask). */
uint64_t jitmap__code_address(const struct jitmap__step *s, uint64_t ra)
{
	return s->a->code_address_mask ? ra & s->a->code_address_mask : ra;
}

/* -- What a proof found --
 *
 * A method proves a step only if what it found is a return address: one that lies after a
 * call instruction (the architecture's call_before on the bytes that end at it). A code
 * object entered by a jump rather than a call (YJIT's perf map has a line per compiled
 * block; its frame is built by an entry stub that no line covers) has no return address
 * where the method's rule looks, and what lies there (a saved register, a heap pointer) is
 * not one: the method declines and the next one runs. Bytes that cannot be read prove
 * nothing either. The frame-pointer chain through code whose start is unknown claims no
 * proof, and is not checked here; a runtime's continuation (BEAM's normal_exit/0, V8's
 * InterpreterEnterAtNextBytecode: the first byte of a code range, pushed by the runtime) is
 * one only the process's code ranges tell, so a caller that knows them passes
 * JITMAP_UNWIND_UNCHECKED_RETURN and checks each answer itself (jitmap_stacker does). An
 * architecture whose table has no call decoder (ppc64, RISC-V) is not checked. */
int jitmap__follows_call(jitmap_arch arch, const jitmap_target *mem, uint64_t ra)
{
	if (!mem || !mem->read_mem)
		return -1;
	uint8_t b[JITMAP__INSN_MAX];
	size_t n = jitmap_arch_call_window(arch);
	n = n < sizeof(b) ? n : sizeof(b);
	char w[8];
	/* Fewer bytes where the code starts closer before it (a mapping's first bytes). */
	while (n && (ra < n || mem->read_mem(mem->ctx, ra - n, b, n, w, sizeof(w))))
		n--;
	return n ? jitmap_arch_call_before(arch, b, n) : -1;
}

static enum jitmap__outcome check_return(const struct jitmap__step *s, const char *method,
					 uint64_t ra, uint64_t ra_at, bool ra_in_reg)
{
	if (!s->a->call_before || s->unproven ||
	    (s->code->methods & JITMAP_UNWIND_UNCHECKED_RETURN))
		return JITMAP_STEP_OK;
	char at[64];
	if (ra_in_reg || !ra_at)
		snprintf(at, sizeof(at), "in %s", ra_in_reg
			 ? jitmap_reg_name(s->code->arch, (unsigned)s->a->ra) : "a register");
	else
		snprintf(at, sizeof(at), "at 0x%llx", U(ra_at));
	const int call = jitmap__follows_call(s->code->arch, s->target, ra);
	if (call == 1)
		return JITMAP_STEP_OK;
	/* The code walk's own assumption is the one a block breaks: say so. */
	const char *hint = strcmp(method, "code") == 0
		? ": the code object may be a block, not a function entered by a call" : "";
	if (call < 0)
		jitmap__say(s->why, method, "the return address 0x%llx found %s follows no call "
			    "(no code can be read before it)%s", U(ra), at, hint);
	else
		jitmap__say(s->why, method, "the return address 0x%llx found %s follows no call "
			    "(the bytes before it are no call instruction)%s", U(ra), at, hint);
	return JITMAP_STEP_DECLINE;
}

/* -- The rule a method answered by -- */

void jitmap__note_cfa(const struct jitmap__step *s, unsigned reg)
{
	if (s->notes)
		s->notes->cfa_reg = (int)reg;
}

void jitmap__note_ra(const struct jitmap__step *s, jitmap_unwind_where where, uint64_t value,
		     unsigned from)
{
	if (!s->notes)
		return;
	s->notes->ra_where = (int)where;
	s->notes->ra_value = value;
	s->notes->ra_from = (uint16_t)from;
}

void jitmap__note_saved(const struct jitmap__step *s, unsigned reg, jitmap_unwind_where where,
			uint64_t at, unsigned from)
{
	struct jitmap__notes *n = s->notes;
	if (!n || reg >= JITMAP_UNWIND_MAX_REGS)
		return;
	unsigned k = 0;
	while (k < n->n && n->saved[k].reg != reg) /* said again: the last word wins */
		k++;
	if (k == JITMAP_UNWIND_RULE_MAX_SAVED) {
		n->full = true;
		return;
	}
	n->saved[k].reg = (uint16_t)reg;
	n->saved[k].where = (uint16_t)where;
	n->saved[k].from = (uint16_t)from;
	n->saved[k].at = at;
	if (k == n->n)
		n->n++;
}

int jitmap__restore(const struct jitmap__step *s, jitmap_frame_regs *caller, unsigned reg,
		    uint64_t at)
{
	jitmap__note_saved(s, reg, JITMAP_UNWIND_AT_CFA, at, 0);
	uint64_t v;
	if (jitmap__step_word(s, at, &v))
		return -EFAULT;
	jitmap_frame_reg_set(caller, reg, v);
	return 0;
}

static bool noted(const struct jitmap__notes *n, unsigned reg)
{
	for (unsigned k = 0; k < n->n; k++)
		if (n->saved[k].reg == reg)
			return true;
	return false;
}

/* The accepted answer's rule, in offsets from its CFA, when the method said one whole. A
 * rule leaves out the registers a step carries over unchanged (a reader takes a callee-saved
 * register it does not name as the caller's); so a callee-saved register this frame knows,
 * that the step neither read back nor carried over (written without a save the method saw,
 * a prologue not decoded whole), makes the rule one it cannot state. */
static void state_rule(const struct jitmap__step *s, const jitmap_unwind_result *res,
		       uint64_t cfa, uint64_t ra_at, bool ra_in_reg)
{
	const struct jitmap__notes *n = s->notes;
	if (!n || !n->out || n->cfa_reg < 0 || n->full || s->unproven ||
	    !jitmap__known(s->regs, (unsigned)n->cfa_reg))
		return;
	for (unsigned reg = 0; reg < JITMAP_UNWIND_MAX_REGS; reg++)
		if (reg != (unsigned)s->a->sp && jitmap_unwind_callee_saved(s->code->arch, reg) &&
		    jitmap__known(s->regs, reg) && !noted(n, reg) &&
		    (!jitmap__known(&res->caller, reg) ||
		     res->caller.reg[reg] != s->regs->reg[reg]))
			return;
	jitmap_unwind_rule *r = &n->out->rule;
	memset(r, 0, sizeof(*r));
	r->cfa_reg = (uint16_t)n->cfa_reg;
	r->cfa_off = (int64_t)(cfa - s->regs->reg[n->cfa_reg]);
	r->ra.reg = (uint16_t)s->a->ra;
	if (n->ra_where == JITMAP_UNWIND_IN_REG) {
		r->ra.where = JITMAP_UNWIND_IN_REG;
		r->ra.from = n->ra_from;
	} else if (n->ra_where == JITMAP_UNWIND_CFA_PLUS) {
		r->ra.where = JITMAP_UNWIND_CFA_PLUS;
		r->ra.off = (int64_t)(n->ra_value - cfa);
	} else if (ra_at) {
		r->ra.where = JITMAP_UNWIND_AT_CFA;
		r->ra.off = (int64_t)(ra_at - cfa);
	} else if (ra_in_reg && s->a->ra_in_register) {
		r->ra.where = JITMAP_UNWIND_IN_REG;
		r->ra.from = (uint16_t)s->a->ra;
	} else {
		return; /* a return address from nowhere a rule can say */
	}
	for (unsigned k = 0; k < n->n; k++) {
		jitmap_unwind_saved *x = &r->saved[r->num_saved++];
		x->reg = n->saved[k].reg;
		x->where = n->saved[k].where;
		x->from = n->saved[k].from;
		if (x->where != JITMAP_UNWIND_IN_REG)
			x->off = (int64_t)(n->saved[k].at - cfa);
	}
	n->out->stated = true;
}

/* The last check of every method: the caller's SP (the CFA) must be above this frame's.
 * Only the innermost frame of a link-register architecture, whose return address is still
 * in the register, may have its CFA at its SP (a leaf that allocated nothing): the frame
 * above it has made a call, and so has a frame in memory. Then the return address must be
 * one (check_return). `ra_at`: where the return address was read (0: not from memory). */
enum jitmap__outcome jitmap__accept_at(const struct jitmap__step *s, const char *method,
				       jitmap_unwind_result *r, uint64_t cfa, uint64_t ra,
				       uint64_t ra_at, bool ra_in_reg)
{
	const bool equal_ok = ra_in_reg && s->code->is_innermost && s->a->ra_in_register;
	/* The caller's SP: the CFA, or below it where the ABI puts the CFA above the caller's
	 * SP (s390x: the register save area). */
	const uint64_t off = s->a->cfa_sp_offset, caller_sp = cfa - off;
	if (off && (cfa <= s->sp || cfa < off || caller_sp < s->sp ||
		    (caller_sp == s->sp && !equal_ok))) {
		jitmap__say(s->why, method, "the CFA 0x%llx puts the caller's stack pointer at "
			    "0x%llx, not above the stack pointer 0x%llx", U(cfa), U(caller_sp),
			    U(s->sp));
		return JITMAP_STEP_DECLINE;
	}
	if (cfa < s->sp || (cfa == s->sp && !equal_ok)) {
		jitmap__say(s->why, method, "the CFA 0x%llx is not above the stack pointer 0x%llx",
			    U(cfa), U(s->sp));
		return JITMAP_STEP_DECLINE;
	}
	if (check_return(s, method, jitmap__code_address(s, ra), ra_at, ra_in_reg) !=
	    JITMAP_STEP_OK)
		return JITMAP_STEP_DECLINE;
	r->cfa = cfa;
	r->caller.pc = jitmap__code_address(s, ra);
	jitmap_frame_reg_set(&r->caller, (unsigned)s->a->sp, caller_sp);
	state_rule(s, r, cfa, ra_at, ra_in_reg);
	return JITMAP_STEP_OK;
}

enum jitmap__outcome jitmap__accept(const struct jitmap__step *s, const char *method,
				    jitmap_unwind_result *r, uint64_t cfa, uint64_t ra,
				    uint64_t ra_at)
{
	return jitmap__accept_at(s, method, r, cfa, ra, ra_at, false);
}

/* The return address still in the link register (a leaf, or a function before it saved it):
 * 0, or -1 when the architecture has none or its value is not known. */
int jitmap__ra_from_register(const struct jitmap__step *s, uint64_t *ra)
{
	if (!s->a->ra_in_register || !jitmap__known(s->regs, (unsigned)s->a->ra))
		return -1;
	*ra = s->regs->reg[s->a->ra];
	return 0;
}

/* The instruction at `pc` for the table's decoders: up to insn_window bytes (fewer where the
 * memory ends sooner: a PC near the end of a mapping), the rest of `b` zero. Returns how
 * many bytes were read, 0 when none. */
size_t jitmap__step_insn(const struct jitmap__step *s, uint64_t pc,
			 uint8_t b[JITMAP__INSN_MAX])
{
	memset(b, 0, JITMAP__INSN_MAX);
	size_t n = s->a->insn_window < JITMAP__INSN_MAX ? s->a->insn_window : JITMAP__INSN_MAX;
	for (; n > 0; n--)
		if (jitmap__step_read(s, pc, b, n) == 0)
			return n;
	return 0;
}

