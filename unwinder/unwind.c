/* unwind.c: one step of unwinding through JIT code: CFI, then the stackmap's frame size at a
 * record's PC, then the frame-pointer chain, each with checks that make it decline rather
 * than guess. What depends on the architecture (register roles, the frame-size rule, the frame
 * record, instruction patterns) comes from its table (arch/internal.h); a method whose facts the
 * table lacks declines.
 *
 * Everything read from the target (stack words, code bytes) and from the code object (CFI
 * rows, stack sizes) is untrusted: a method that cannot prove its answer passes to the next,
 * and no method returns a caller whose stack pointer is not strictly above this frame's (the
 * GDB plugin relies on that so that a backtrace cannot loop). docs/unwinding.md has the rules
 * and what was measured to establish them.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* A frame pointer farther than this above the stack pointer is not one (JIT frames are
 * small; 16 MiB is beyond any thread's default stack). Stack sizes are held to it too. */
#define FP_MAX_DISTANCE (UINT64_C(16) << 20)

/* -- Architectures -- */

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

/* -- Reasons -- */

struct reasons {
	char *buf;
	size_t len, used;
	/* A method failed because a word of the stack could not be read (a return address, a
	 * frame record): said as a status too (jitmap__unwind_step), not only in the text. */
	bool stack_unread;
};

__attribute__((format(printf, 3, 4))) static void say(struct reasons *r, const char *method,
						      const char *fmt, ...)
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

/* -- One step's context -- */

enum outcome {
	STEP_OK,      /* the caller is found */
	STEP_DECLINE, /* this method does not apply here: try the next */
	STEP_FAULT,   /* memory it needed could not be read: try the next */
	STEP_STOP,    /* the outermost frame (r->cfa set): no method may go on */
};

struct step {
	const jitmap_unwind_code *code;
	const jitmap_frame_regs *regs;
	const jitmap_target *target;
	jitmap_byte_order order;
	const struct jitmap__arch *a; /* the code's architecture */
	uint64_t pc, sp;
	struct reasons *why;
	uint64_t fde_lo, fde_hi; /* the FDE holding the PC, when CFI found one (0/0 if not) */
	bool unproven; /* the method's answer is a guess (a chain through code of unknown start) */
};

#define U(x) ((unsigned long long)(x))
/* Bytes of one instruction read at most (x86-64's longest is 15). */
#define INSN_MAX 16

static bool known(const jitmap_frame_regs *r, unsigned n)
{
	return jitmap_frame_reg_known(r, n);
}

static int read_mem(const struct step *s, uint64_t addr, void *buf, size_t len)
{
	if (!s->target || !s->target->read_mem)
		return -EFAULT;
	char why[8]; /* the unwinder says which address it could not read, not why */
	return s->target->read_mem(s->target->ctx, addr, buf, len, why, sizeof(why)) ? -EFAULT : 0;
}

static int read_word(const struct step *s, uint64_t addr, uint64_t *v)
{
	uint8_t b[8];
	if (read_mem(s, addr, b, sizeof(b)))
		return -EFAULT;
	*v = jitmap__load(b, sizeof(b), s->order);
	return 0;
}

/* Carry every known callee-saved register of this frame over to the caller (for PCs where
 * none has been touched yet, or all have been restored). The SP is set apart. */
static void carry_callee_saved(const struct step *s, jitmap_frame_regs *caller)
{
	for (unsigned r = 0; r < JITMAP_UNWIND_MAX_REGS; r++) {
		if (r != (unsigned)s->a->sp && jitmap_unwind_callee_saved(s->code->arch, r) &&
		    known(s->regs, r))
			jitmap_frame_reg_set(caller, r, s->regs->reg[r]);
	}
}

/* A return address as the address it returns to: without the signature a signed one carries
 * above the address bits (the table's code_address_mask). */
static uint64_t code_address(const struct step *s, uint64_t ra)
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
	uint8_t b[INSN_MAX];
	size_t n = jitmap_arch_call_window(arch);
	n = n < sizeof(b) ? n : sizeof(b);
	char w[8];
	/* Fewer bytes where the code starts closer before it (a mapping's first bytes). */
	while (n && (ra < n || mem->read_mem(mem->ctx, ra - n, b, n, w, sizeof(w))))
		n--;
	return n ? jitmap_arch_call_before(arch, b, n) : -1;
}

static enum outcome check_return(const struct step *s, const char *method, uint64_t ra,
				 uint64_t ra_at, bool ra_in_reg)
{
	if (!s->a->call_before || s->unproven ||
	    (s->code->methods & JITMAP_UNWIND_UNCHECKED_RETURN))
		return STEP_OK;
	char at[64];
	if (ra_in_reg || !ra_at)
		snprintf(at, sizeof(at), "in %s", ra_in_reg
			 ? jitmap_reg_name(s->code->arch, (unsigned)s->a->ra) : "a register");
	else
		snprintf(at, sizeof(at), "at 0x%llx", U(ra_at));
	const int call = jitmap__follows_call(s->code->arch, s->target, ra);
	if (call == 1)
		return STEP_OK;
	/* The code walk's own assumption is the one a block breaks: say so. */
	const char *hint = strcmp(method, "code") == 0
		? ": the code object may be a block, not a function entered by a call" : "";
	if (call < 0)
		say(s->why, method, "the return address 0x%llx found %s follows no call (no code "
		    "can be read before it)%s", U(ra), at, hint);
	else
		say(s->why, method, "the return address 0x%llx found %s follows no call (the "
		    "bytes before it are no call instruction)%s", U(ra), at, hint);
	return STEP_DECLINE;
}

/* The last check of every method: the caller's SP (the CFA) must be above this frame's.
 * Only the innermost frame of a link-register architecture, whose return address is still
 * in the register, may have its CFA at its SP (a leaf that allocated nothing): the frame
 * above it has made a call, and so has a frame in memory. Then the return address must be
 * one (check_return). `ra_at`: where the return address was read (0: not from memory). */
static enum outcome accept_at(const struct step *s, const char *method,
			      jitmap_unwind_result *r, uint64_t cfa, uint64_t ra, uint64_t ra_at,
			      bool ra_in_reg)
{
	const bool equal_ok = ra_in_reg && s->code->is_innermost && s->a->ra_in_register;
	/* The caller's SP: the CFA, or below it where the ABI puts the CFA above the caller's
	 * SP (s390x: the register save area). */
	const uint64_t off = s->a->cfa_sp_offset, caller_sp = cfa - off;
	if (off && (cfa <= s->sp || cfa < off || caller_sp < s->sp ||
		    (caller_sp == s->sp && !equal_ok))) {
		say(s->why, method, "the CFA 0x%llx puts the caller's stack pointer at 0x%llx, not "
		    "above the stack pointer 0x%llx", U(cfa), U(caller_sp), U(s->sp));
		return STEP_DECLINE;
	}
	if (cfa < s->sp || (cfa == s->sp && !equal_ok)) {
		say(s->why, method, "the CFA 0x%llx is not above the stack pointer 0x%llx", U(cfa),
		    U(s->sp));
		return STEP_DECLINE;
	}
	if (check_return(s, method, code_address(s, ra), ra_at, ra_in_reg) != STEP_OK)
		return STEP_DECLINE;
	r->cfa = cfa;
	r->caller.pc = code_address(s, ra);
	jitmap_frame_reg_set(&r->caller, (unsigned)s->a->sp, caller_sp);
	return STEP_OK;
}

static enum outcome accept(const struct step *s, const char *method, jitmap_unwind_result *r,
			   uint64_t cfa, uint64_t ra, uint64_t ra_at)
{
	return accept_at(s, method, r, cfa, ra, ra_at, false);
}

/* The return address still in the link register (a leaf, or a function before it saved it):
 * 0, or -1 when the architecture has none or its value is not known. */
static int ra_from_register(const struct step *s, uint64_t *ra)
{
	if (!s->a->ra_in_register || !known(s->regs, (unsigned)s->a->ra))
		return -1;
	*ra = s->regs->reg[s->a->ra];
	return 0;
}

/* The instruction at `pc` for the table's decoders: up to insn_window bytes (fewer where the
 * memory ends sooner: a PC near the end of a mapping), the rest of `b` zero. Returns how
 * many bytes were read, 0 when none. */
/* Bytes of an epilogue looked at after a call: pops of every callee-saved register, an add
 * with a 32-bit immediate and the return fit. */
#define EPILOGUE_MAX 24
static size_t read_insn(const struct step *s, uint64_t pc, uint8_t b[INSN_MAX])
{
	memset(b, 0, INSN_MAX);
	size_t n = s->a->insn_window < INSN_MAX ? s->a->insn_window : INSN_MAX;
	for (; n > 0; n--)
		if (read_mem(s, pc, b, n) == 0)
			return n;
	return 0;
}

/* -- CFI -- */

static enum outcome by_cfi(struct step *s, jitmap_unwind_result *r)
{
	const char *const M = "cfi";
	const jitmap_cfi *cfi = s->code->cfi;
	/* An outer frame's PC is a return address, which may lie past the end of the calling
	 * function (a call to a noreturn function); the call instruction is the one before. */
	const uint64_t at = s->code->is_innermost ? s->pc : s->pc - 1;
	if (!cfi) {
		say(s->why, M, "no CFI for this code");
		return STEP_DECLINE;
	}
	struct jitmap__cfi_row row;
	char msg[224];
	const int rc = jitmap__cfi_row(cfi, at, &row, msg, sizeof(msg));
	if (rc) {
		say(s->why, M, "%s", msg);
		return STEP_DECLINE;
	}
	s->fde_lo = row.fde_lo;
	s->fde_hi = row.fde_hi;
	if (row.cfa_is_expression) {
		say(s->why, M, "the CFA at 0x%llx is a DWARF expression, which is not evaluated",
		    U(at));
		return STEP_DECLINE;
	}
	if (row.cfa_reg >= JITMAP_UNWIND_MAX_REGS || !known(s->regs, row.cfa_reg)) {
		say(s->why, M, "the CFA at 0x%llx is register %u + %lld, not known in this frame",
		    U(at), row.cfa_reg, (long long)row.cfa_off);
		return STEP_DECLINE;
	}
	const uint64_t cfa = s->regs->reg[row.cfa_reg] + (uint64_t)row.cfa_off;

	uint64_t ra = 0, ra_at = 0;
	bool ra_in_reg = false;
	const struct jitmap__rule *rr = &row.rule[(unsigned)s->a->ra];
	switch (rr->kind) {
	case JITMAP_RULE_UNDEFINED:
		say(s->why, M, "the return address is undefined at 0x%llx: the outermost frame",
		    U(at));
		r->cfa = cfa; /* the frame's own ID needs it; there is no caller */
		return STEP_STOP;
	case JITMAP_RULE_OFFSET:
		ra_at = cfa + (uint64_t)rr->off;
		if (read_word(s, ra_at, &ra)) {
			s->why->stack_unread = true;
			say(s->why, M, "cannot read the return address at 0x%llx", U(ra_at));
			return STEP_FAULT;
		}
		break;
	case JITMAP_RULE_VAL_OFFSET:
		ra = cfa + (uint64_t)rr->off;
		break;
	case JITMAP_RULE_REGISTER:
		if (rr->reg >= JITMAP_UNWIND_MAX_REGS || !known(s->regs, rr->reg)) {
			say(s->why, M, "the return address is in register %u, not known here",
			    rr->reg);
			return STEP_DECLINE;
		}
		ra = s->regs->reg[rr->reg];
		break;
	case JITMAP_RULE_SAME:
		/* A link register the function never saved still holds the return address. */
		if (!s->a->ra_in_register || !known(s->regs, (unsigned)s->a->ra)) {
			say(s->why, M, "no rule for the return address column %u at 0x%llx", (unsigned)s->a->ra,
			    U(at));
			return STEP_DECLINE;
		}
		ra = s->regs->reg[s->a->ra];
		/* A leaf's caller has the leaf's SP. Only where the CFA lies above the caller's
		 * SP (s390x) is that told apart from a row that is wrong: LLVM 14's AArch64 CFI
		 * has no rows inside the prologue (CFA = SP until the frame is built, measured on
		 * tests/fixtures/cross/cross-aarch64.elf), so there a CFA equal to SP is not
		 * believed and the frame-pointer method's prologue rules answer. */
		ra_in_reg = s->a->cfa_sp_offset != 0;
		break;
	default:
		say(s->why, M, "the return address at 0x%llx is a DWARF expression, which is not "
		    "evaluated", U(at));
		return STEP_DECLINE;
	}

	for (unsigned reg = 0; reg < JITMAP_UNWIND_MAX_REGS; reg++) {
		if (reg == (unsigned)s->a->sp || !jitmap_unwind_callee_saved(s->code->arch, reg))
			continue;
		const struct jitmap__rule *x = &row.rule[reg];
		uint64_t v = 0;
		bool ok = false;
		switch (x->kind) {
		case JITMAP_RULE_SAME:
			ok = known(s->regs, reg);
			v = s->regs->reg[reg];
			break;
		case JITMAP_RULE_OFFSET:
			/* An unreadable save slot loses that register, not the frame. */
			ok = read_word(s, cfa + (uint64_t)x->off, &v) == 0;
			break;
		case JITMAP_RULE_VAL_OFFSET:
			ok = true;
			v = cfa + (uint64_t)x->off;
			break;
		case JITMAP_RULE_REGISTER:
			ok = x->reg < JITMAP_UNWIND_MAX_REGS && known(s->regs, x->reg);
			v = ok ? s->regs->reg[x->reg] : 0;
			break;
		default: /* undefined, or an expression: unknown */
			break;
		}
		if (ok)
			jitmap_frame_reg_set(&r->caller, reg, v);
	}
	return accept_at(s, M, r, cfa, ra, ra_at, ra_in_reg);
}

/* -- Code patterns (the architecture table decodes them) -- */

enum prologue { PROLOGUE_NONE, PROLOGUE_FP, PROLOGUE_UNREADABLE };

/* The frame the function at `func` builds, as its first instructions say (x86-64: [endbr64]
 * push %rbp; mov %rsp,%rbp, then its pushes; AArch64: arch/aarch64.c). */
static enum prologue fp_shape(const struct step *s, uint64_t func, struct jitmap__shape *sh)
{
	uint8_t b[JITMAP__SHAPE_WINDOW];
	size_t n = sizeof(b);
	memset(sh, 0, sizeof(*sh));
	if (!s->a->shape)
		return PROLOGUE_NONE;
	if (read_mem(s, func, b, sizeof(b))) {
		/* A function at the very end of a mapping: read what there is (the rest zero,
		 * which the hook is told is not code). */
		while (n > 4 && read_mem(s, func, b, n - 4) != 0)
			n -= 4;
		if (n <= 4 && read_mem(s, func, b, 4))
			return PROLOGUE_UNREADABLE;
		n -= 4;
		memset(b + n, 0, sizeof(b) - n);
	}
	s->a->shape(b, n, sh);
	return sh->kind == JITMAP_PROLOGUE_FP ? PROLOGUE_FP : PROLOGUE_NONE;
}

/* Frame 0 of a function whose prologue builds no frame the table knows (a leaf, or a body
 * before its saves): what the instructions from its start to the PC stored or copied (the
 * table's `stores`). Longer spans than this are not read (JIT leaves with a record are
 * short); such a function's return address and callee-saved registers are not known. */
#define STORES_SPAN_MAX 1024

static int stores_before_pc(const struct step *s, uint64_t func, bool *callee_saved, bool *ra)
{
	uint8_t b[STORES_SPAN_MAX];
	if (!s->a->stores || s->pc < func || s->pc - func > sizeof(b))
		return -ERANGE;
	const size_t n = (size_t)(s->pc - func);
	if (n && read_mem(s, func, b, n))
		return -EFAULT;
	s->a->stores(b, n, callee_saved, ra);
	return 0;
}

/* Whether the save `k` of the prologue at `func` has run: always in an outer frame (its PC
 * is past the prologue), in frame 0 once the PC is past the instruction that stores it. */
static bool save_done(const struct step *s, const struct jitmap__shape *sh, unsigned k,
		      uint64_t func)
{
	return !s->code->is_innermost || s->pc >= func + sh->saved[k].after;
}

/* The callee-saved registers the prologue of the function at `func` stored, read back from
 * their slots below the CFA (in frame 0, only those whose store has run). */
static void restore_saved(const struct step *s, const struct jitmap__shape *sh, uint64_t func,
			  uint64_t cfa, jitmap_frame_regs *caller)
{
	for (unsigned k = 0; k < sh->nsaved; k++) {
		uint64_t v;
		if (!save_done(s, sh, k, func))
			continue;
		if (read_word(s, cfa + (uint64_t)(int64_t)sh->saved[k].cfa_off, &v) == 0)
			jitmap_frame_reg_set(caller, sh->saved[k].reg, v);
	}
}

/* The ABI's rule where the prologue was decoded whole (sh->saves_complete): a callee-saved
 * register the function does not save, it does not change, so the caller's value is this
 * frame's. Carried: every callee-saved register but SP that this frame knows, that the
 * prologue does not save (or, in frame 0, whose save has not run yet: it still holds the
 * caller's value) and, for a frame-pointer prologue, other than FP (its frame record says
 * it). A saved register whose slot could not be read stays unknown. GDB's and LLDB's
 * unwinders apply the same rule to the prologues they analyse. */
static void carry_unsaved(const struct step *s, const struct jitmap__shape *sh, uint64_t func,
			  jitmap_frame_regs *caller)
{
	if (!sh->saves_complete)
		return;
	for (unsigned r = 0; r < JITMAP_UNWIND_MAX_REGS; r++) {
		if (r == (unsigned)s->a->sp || !jitmap_unwind_callee_saved(s->code->arch, r) ||
		    !known(s->regs, r) || known(caller, r))
			continue;
		if (sh->kind == JITMAP_PROLOGUE_FP && r == (unsigned)s->a->fp)
			continue;
		bool saved = false;
		for (unsigned k = 0; k < sh->nsaved; k++)
			saved |= sh->saved[k].reg == r && save_done(s, sh, k, func);
		if (!saved)
			jitmap_frame_reg_set(caller, r, s->regs->reg[r]);
	}
}

/* -- The stackmap's frame size -- */

static enum outcome by_stackmap(struct step *s, jitmap_unwind_result *r)
{
	const char *const M = "stackmap";
	const jitmap_stackmap *sm = s->code->sm;
	if (!sm) {
		say(s->why, M, "no stackmap for this code");
		return STEP_DECLINE;
	}
	/* Where the call pushes the return address (x86-64), the stack size plus that slot
	 * gives the CFA (measured: docs/unwinding.md). Where it arrives in a link register
	 * (AArch64, s390x), the stack size is the whole frame (the caller's SP = SP + size;
	 * the CFA cfa_sp_offset above it) and the return address is where the prologue put it:
	 * in the frame record, in the caller's register save area (s390x), or still in the
	 * register of a leaf. */
	if (!s->a->moves_sp || !s->a->shape || !s->a->stackmap_rule) {
		say(s->why, M, "the frame size rule is not known for %s", s->a->name);
		return STEP_DECLINE;
	}
	const jitmap_record *rec = NULL;
	if (jitmap_stackmap_lookup(sm, s->pc, &rec, 1) == 0 || !rec) {
		const jitmap_record *before = NULL, *after = NULL;
		(void)jitmap_stackmap_nearest(sm, s->pc, &before, &after);
		if (before || after)
			say(s->why, M, "no record at 0x%llx (nearest: %s0x%llx)", U(s->pc),
			    before ? "before " : "after ",
			    U(jitmap_record_pc(sm, before ? before : after)));
		else
			say(s->why, M, "no record at 0x%llx", U(s->pc));
		return STEP_DECLINE;
	}
	const jitmap_function *f = jitmap_record_function(sm, rec);
	if (!f) {
		say(s->why, M, "record %llu has no function", U(rec->id));
		return STEP_DECLINE;
	}
	if (f->stack_size == UINT64_MAX) {
		say(s->why, M, "the function at 0x%llx has a dynamic or realigned frame (no stack "
		    "size)", U(f->address));
		return STEP_DECLINE;
	}
	if (f->stack_size % 8 || f->stack_size > FP_MAX_DISTANCE) {
		say(s->why, M, "stack size %llu of the function at 0x%llx is not plausible",
		    U(f->stack_size), U(f->address));
		return STEP_DECLINE;
	}
	uint64_t cfa, ra_addr = 0;
	if (s->a->ra_slot) {
		if (jitmap_arch_stackmap_cfa(s->code->arch, s->sp, f->stack_size, &cfa, &ra_addr)) {
			say(s->why, M, "the stack size rule overflows");
			return STEP_DECLINE;
		}
	} else {
		cfa = s->sp + f->stack_size + s->a->cfa_sp_offset;
		if (cfa < s->sp || f->stack_size > UINT64_MAX - s->a->cfa_sp_offset) {
			say(s->why, M, "the stack size rule overflows");
			return STEP_DECLINE;
		}
	}

	/* The stack size says where SP is in the function's body. At a statepoint's record (the
	 * call's return address) SP is lower when the call's stack arguments were pushed (LLVM
	 * does so even at -O2), until the add that follows frees them. A function that keeps a
	 * frame pointer shows where its frame is; in one that does not, an instruction at the
	 * record that moves SP makes the rule unprovable. */
	struct jitmap__shape sh;
	const enum prologue p = fp_shape(s, f->address, &sh);
	bool ra_in_reg = false, callee_saved_stored = true;
	if (p == PROLOGUE_FP && s->a->has_frame_record && known(s->regs, (unsigned)s->a->fp)) {
		const uint64_t fp = s->regs->reg[s->a->fp];
		const uint64_t fp_cfa = fp + (uint64_t)sh.cfa_from_fp;
		if (fp_cfa != cfa) {
			say(s->why, M, "the stack size %llu puts the CFA at 0x%llx, but the frame "
			    "pointer puts it at 0x%llx (SP is not the body's SP here)",
			    U(f->stack_size), U(cfa), U(fp_cfa));
			return STEP_DECLINE;
		}
		uint64_t saved_fp;
		if (read_word(s, fp + (uint64_t)(int64_t)s->a->saved_fp_at, &saved_fp) == 0)
			jitmap_frame_reg_set(&r->caller, (unsigned)s->a->fp, saved_fp);
		if (!s->a->ra_slot)
			ra_addr = fp + (uint64_t)(int64_t)s->a->ra_at;
	} else {
		uint8_t insn[INSN_MAX];
		const size_t n = read_insn(s, s->pc, insn);
		if (n < s->a->insn_window) {
			say(s->why, M, "cannot read the code at 0x%llx to check the stack pointer",
			    U(s->pc));
			return STEP_FAULT;
		}
		/* Unless it is the function's epilogue and that agrees with the stack size: the
		 * pops and adds before its return put the return address where the rule does
		 * (a record at the return address of a call the function ends with). */
		uint8_t tail[EPILOGUE_MAX];
		uint64_t ra_from_sp;
		if (s->a->moves_sp(insn, n) &&
		    !(s->a->epilogue && read_mem(s, s->pc, tail, sizeof(tail)) == 0 &&
		      s->a->epilogue(tail, sizeof(tail), &ra_from_sp) &&
		      s->a->ra_slot && s->sp + ra_from_sp == ra_addr)) {
			say(s->why, M, "the instruction at 0x%llx moves the stack pointer, so SP may "
			    "not be the body's SP here (arguments pushed for a call)", U(s->pc));
			return STEP_DECLINE;
		}
		if (!s->a->ra_slot) {
			if (p == PROLOGUE_NONE && sh.ra_known) {
				ra_addr = cfa + (uint64_t)sh.ra_from_cfa;
			} else if (p == PROLOGUE_NONE && s->code->is_innermost) {
				bool ra_stored;
				const int rc = stores_before_pc(s, f->address, &callee_saved_stored,
								&ra_stored);
				if (rc == -EFAULT) {
					say(s->why, M, "cannot read the code of the function at 0x%llx "
					    "up to 0x%llx", U(f->address), U(s->pc));
					return STEP_FAULT;
				}
				if (rc) {
					say(s->why, M, "the function at 0x%llx starts %llu bytes before "
					    "the PC (more than %d): where its return address is was not "
					    "looked for", U(f->address), U(s->pc - f->address),
					    STORES_SPAN_MAX);
					return STEP_DECLINE;
				}
				if (ra_stored) {
					say(s->why, M, "the function at 0x%llx stores or copies its "
					    "return address register before 0x%llx, not in a frame its "
					    "prologue says", U(f->address), U(s->pc));
					return STEP_DECLINE;
				}
				ra_in_reg = true;
			} else {
				say(s->why, M, "where the function at 0x%llx saved the return address "
				    "is not known (no frame record in its prologue)", U(f->address));
				return STEP_DECLINE;
			}
		}
	}
	uint64_t ra;
	if (ra_in_reg) {
		if (ra_from_register(s, &ra)) {
			say(s->why, M, "the return address register is not known in this frame");
			return STEP_DECLINE;
		}
		/* A call has just returned here (a record after a call): the register holds
		 * this PC, and the function's own return address is elsewhere. */
		if (code_address(s, ra) == s->pc) {
			say(s->why, M, "the return address register holds the PC itself (a call "
			    "returned here): the function's own return address is not in it");
			return STEP_DECLINE;
		}
		if (!callee_saved_stored) /* so, under the ABI, it changed none of them */
			carry_callee_saved(s, &r->caller);
		restore_saved(s, &sh, f->address, cfa, &r->caller);
		/* Stores that ran past the decoded window are ones the shape did not see. */
		if (sh.frame_size == f->stack_size &&
		    (!callee_saved_stored || s->pc - f->address <= JITMAP__SHAPE_WINDOW))
			carry_unsaved(s, &sh, f->address, &r->caller);
		return accept_at(s, M, r, cfa, ra, 0, true);
	}
	restore_saved(s, &sh, f->address, cfa, &r->caller);
	/* The prologue's saves are all of them only if the frame it builds is the whole frame
	 * the stack size says (a shrink-wrapped function saves in a later block). */
	if (sh.frame_size == f->stack_size)
		carry_unsaved(s, &sh, f->address, &r->caller);
	if (read_word(s, ra_addr, &ra)) {
		s->why->stack_unread = true;
		say(s->why, M, "cannot read the return address at 0x%llx", U(ra_addr));
		return STEP_FAULT;
	}
	if (ra == 0) {
		say(s->why, M, "the return address at 0x%llx is 0", U(ra_addr));
		return STEP_DECLINE;
	}
	return accept(s, M, r, cfa, ra, ra_addr);
}

/* -- The frame-pointer chain -- */

/* Frame 0 stopped where the frame pointer is not this function's yet (or no more): at a
 * return, at a function's first instruction, or between saving the caller's FP and setting
 * its own. */
static enum outcome fp_innermost_special(struct step *s, jitmap_unwind_result *r, uint64_t lo,
					 bool *handled)
{
	const char *const M = "frame-pointer";
	uint8_t b[INSN_MAX];
	const size_t have = read_insn(s, s->pc, b);
	uint64_t ra;
	*handled = false;
	/* At a return, and at a function's entry, every callee-saved register is the caller's,
	 * and the return address is where the call left it: at SP (x86-64) or in the link
	 * register, the CFA at SP + ra_slot. */
	const bool at_ret = have && s->a->is_return(b, have);
	struct jitmap__shape sh = {0};
	const enum prologue p = lo ? fp_shape(s, lo, &sh) : PROLOGUE_NONE;
	const bool at_entry = lo && (s->pc == lo || (p == PROLOGUE_FP && s->pc == lo + sh.save_at));
	if (at_ret || at_entry) {
		*handled = true;
		if (s->a->ra_slot) {
			if (read_word(s, s->sp, &ra)) {
				s->why->stack_unread = true;
				say(s->why, M, "cannot read the return address at 0x%llx", U(s->sp));
				return STEP_FAULT;
			}
		} else if (ra_from_register(s, &ra)) {
			say(s->why, M, "the return address register is not known in this frame");
			return STEP_DECLINE;
		}
		carry_callee_saved(s, &r->caller);
		return accept_at(s, M, r, s->sp + s->a->ra_slot, ra, s->a->ra_slot ? s->sp : 0,
				 !s->a->ra_slot);
	}
	/* After the caller's FP was saved (with the return address above it), before FP is
	 * set: FP is still the caller's, the pair at SP. */
	if (p == PROLOGUE_FP && sh.cfa_after_save && s->pc == lo + sh.after_save) {
		*handled = true;
		uint64_t saved_fp;
		if (read_word(s, s->sp + (uint64_t)(int64_t)s->a->saved_fp_at, &saved_fp) ||
		    read_word(s, s->sp + (uint64_t)(int64_t)s->a->ra_at, &ra)) {
			s->why->stack_unread = true;
			say(s->why, M, "cannot read the stack at 0x%llx", U(s->sp));
			return STEP_FAULT;
		}
		carry_callee_saved(s, &r->caller);
		jitmap_frame_reg_set(&r->caller, (unsigned)s->a->fp, saved_fp);
		return accept(s, M, r, s->sp + (uint64_t)sh.cfa_after_save, ra,
			      s->sp + (uint64_t)(int64_t)s->a->ra_at);
	}
	return STEP_DECLINE;
}

static enum outcome by_frame_pointer(struct step *s, jitmap_unwind_result *r)
{
	const char *const M = "frame-pointer";
	/* The chain needs the frame record's layout and, to know whether FP is this function's,
	 * the prologue's shape. */
	if (!s->a->has_frame_record || !s->a->shape || !s->a->is_return) {
		say(s->why, M, "not known for %s", s->a->name);
		return STEP_DECLINE;
	}
	const char *fp_name = jitmap_reg_name(s->code->arch, (unsigned)s->a->fp);
	/* The function's start: the caller's word, else the FDE's (LLVM emits one per
	 * function). */
	uint64_t lo = 0;
	if (s->code->func_hi > s->code->func_lo && s->pc >= s->code->func_lo &&
	    s->pc - (s->code->is_innermost ? 0 : 1) < s->code->func_hi)
		lo = s->code->func_lo;
	else if (s->fde_hi > s->fde_lo)
		lo = s->fde_lo;

	if (s->code->is_innermost) {
		bool handled;
		const enum outcome o = fp_innermost_special(s, r, lo, &handled);
		if (handled)
			return o;
	}
	int64_t cfa_from_fp = s->a->cfa_at;
	struct jitmap__shape sh = {0};
	if (lo) {
		const enum prologue p = fp_shape(s, lo, &sh);
		if (p == PROLOGUE_UNREADABLE) {
			say(s->why, M, "cannot read the code of the function at 0x%llx", U(lo));
			return STEP_FAULT;
		}
		if (p == PROLOGUE_NONE) {
			say(s->why, M, "the function at 0x%llx does not begin with %s: %s is not its "
			    "frame pointer", U(lo), s->a->prologue_text, fp_name);
			return STEP_DECLINE;
		}
		if (s->code->is_innermost && s->pc < lo + sh.fp_set_at) {
			say(s->why, M, "at 0x%llx the prologue has not set %s yet", U(s->pc),
			    fp_name);
			return STEP_DECLINE;
		}
		cfa_from_fp = sh.cfa_from_fp;
	} else {
		if (!s->a->fixed_cfa_at) {
			say(s->why, M, "the function's start is unknown, and on %s only its prologue "
			    "says where the frame record is", s->a->name);
			return STEP_DECLINE;
		}
		/* Nothing says the function keeps a frame pointer: code built without one leaves
		 * its caller's there (the chain skips a frame) or holds data in it. */
		if (s->code->methods & JITMAP_UNWIND_PROVEN) {
			say(s->why, M, "the function's start is unknown, so nothing says %s is its "
			    "frame pointer: following it would be a guess", fp_name);
			return STEP_DECLINE;
		}
		uint8_t b[INSN_MAX];
		const size_t n = s->code->is_innermost ? read_insn(s, s->pc, b) : 0;
		if (n && s->a->looks_like_prologue(b, n)) {
			say(s->why, M, "at a frame pointer prologue of a function whose start is "
			    "unknown");
			return STEP_DECLINE;
		}
		s->unproven = true; /* a guess: its caller says so, nothing here proves it */
	}
	if (!known(s->regs, (unsigned)s->a->fp)) {
		say(s->why, M, "%s is not known in this frame", fp_name);
		return STEP_DECLINE;
	}
	const uint64_t fp = s->regs->reg[s->a->fp];
	if (fp < s->sp || fp % 8 || fp - s->sp > FP_MAX_DISTANCE || fp > UINT64_MAX - 16 ||
	    s->a->saved_fp_at < 0 || s->a->ra_at < 0 || cfa_from_fp <= 0 ||
	    cfa_from_fp > (int64_t)FP_MAX_DISTANCE) {
		say(s->why, M, "%s 0x%llx is not a frame pointer for SP 0x%llx", fp_name, U(fp),
		    U(s->sp));
		return STEP_DECLINE;
	}
	uint64_t saved_fp, ra;
	if (read_word(s, fp + (uint64_t)s->a->saved_fp_at, &saved_fp) ||
	    read_word(s, fp + (uint64_t)s->a->ra_at, &ra)) {
		s->why->stack_unread = true;
		say(s->why, M, "cannot read the frame record at 0x%llx", U(fp));
		return STEP_FAULT;
	}
	if (ra == 0) {
		say(s->why, M, "the return address at 0x%llx is 0: the end of the chain",
		    U(fp + (uint64_t)s->a->ra_at));
		return STEP_DECLINE;
	}
	jitmap_frame_reg_set(&r->caller, (unsigned)s->a->fp, saved_fp);
	restore_saved(s, &sh, lo, fp + (uint64_t)cfa_from_fp, &r->caller);
	carry_unsaved(s, &sh, lo, &r->caller); /* sh is all zero when the start is unknown */
	return accept(s, M, r, fp + (uint64_t)cfa_from_fp, ra, fp + (uint64_t)s->a->ra_at);
}

/* -- The function's own instructions (walk.c) -- */

static enum outcome by_code(struct step *s, jitmap_unwind_result *r)
{
	const char *const M = "code";
	const uint64_t lo = s->code->func_lo, hi = s->code->func_hi;
	if (hi <= lo || s->pc < lo || s->pc > hi) {
		say(s->why, M, "the function's range is not known");
		return STEP_DECLINE;
	}
	if (!s->a->ra_slot) {
		say(s->why, M, "not done for %s", s->a->name);
		return STEP_DECLINE;
	}
	/* The whole function when it can be read (paths go past the PC and come back), else
	 * what there is of it up to the PC and an instruction beyond. */
	size_t len = hi - lo > (64u << 10) ? (64u << 10) : (size_t)(hi - lo);
	uint8_t *code = malloc(len ? len : 1);
	if (!code) {
		say(s->why, M, "out of memory");
		return STEP_DECLINE;
	}
	if (read_mem(s, lo, code, len)) {
		const size_t to_pc = (size_t)(s->pc - lo);
		size_t n = to_pc + INSN_MAX < len ? to_pc + INSN_MAX : len;
		while (n > to_pc && read_mem(s, lo, code, n))
			n--;
		if (read_mem(s, lo, code, n) || (n == to_pc && s->code->is_innermost)) {
			free(code);
			say(s->why, M, "cannot read the code of the function at 0x%llx", U(lo));
			return STEP_FAULT;
		}
		len = n;
	}
	struct jitmap__walk w;
	char msg[256];
	const int rc = jitmap__code_walk(s->code->arch, code, len, lo, s->pc, s->code->is_innermost,
					 &w, msg, sizeof(msg));
	free(code);
	if (rc) {
		say(s->why, M, "%s", msg);
		return STEP_DECLINE;
	}
	/* From the frame pointer where the function set it: a call that returns with SP moved
	 * (V8's out-of-line prologue does) cannot mislead that one. */
	uint64_t cfa;
	const unsigned fp = (unsigned)s->a->fp;
	if (w.fp_known && known(s->regs, fp)) {
		cfa = s->regs->reg[fp] + (uint64_t)w.fp_off;
	} else if (w.sp_known) {
		cfa = s->sp + (uint64_t)w.sp_off;
	} else {
		say(s->why, M, "the CFA is %s + %lld, not known in this frame",
		    jitmap_reg_name(s->code->arch, fp), (long long)w.fp_off);
		return STEP_DECLINE;
	}
	uint64_t ra;
	if (read_word(s, cfa - s->a->ra_slot, &ra)) {
		s->why->stack_unread = true;
		say(s->why, M, "cannot read the return address at 0x%llx", U(cfa - s->a->ra_slot));
		return STEP_FAULT;
	}
	for (unsigned k = 0; k < w.nslots; k++) {
		uint64_t v;
		if (jitmap_unwind_callee_saved(s->code->arch, w.slot[k].reg) &&
		    read_word(s, cfa - (uint64_t)w.slot[k].off, &v) == 0)
			jitmap_frame_reg_set(&r->caller, w.slot[k].reg, v);
	}
	/* What no path to the PC wrote is still the caller's (a pushed one was read back). */
	for (unsigned reg = 0; reg < 64 && reg < JITMAP_UNWIND_MAX_REGS; reg++)
		if (reg != (unsigned)s->a->sp && jitmap_unwind_callee_saved(s->code->arch, reg) &&
		    !(w.written >> reg & 1) && known(s->regs, reg) && !known(&r->caller, reg))
			jitmap_frame_reg_set(&r->caller, reg, s->regs->reg[reg]);
	return accept(s, M, r, cfa, ra, cfa - s->a->ra_slot);
}

/* -- One step -- */

int jitmap_unwind_step(const jitmap_unwind_code *code, const jitmap_frame_regs *regs,
		       const jitmap_target *target, jitmap_unwind_result *out, char *why,
		       size_t why_len)
{
	return jitmap__unwind_step(code, regs, target, out, why, why_len, NULL);
}

int jitmap__unwind_step(const jitmap_unwind_code *code, const jitmap_frame_regs *regs,
			const jitmap_target *target, jitmap_unwind_result *out, char *why,
			size_t why_len, bool *stack_unread)
{
	struct reasons reasons = {why, why_len, 0, false};
	if (stack_unread)
		*stack_unread = false;
	if (why && why_len)
		why[0] = '\0';
	if (!code || !regs || !out) {
		say(&reasons, "unwind", "invalid arguments");
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	struct step s = {.code = code, .regs = regs, .target = target, .why = &reasons};
	if (!(s.a = jitmap__arch(code->arch))) {
		say(&reasons, "unwind", "architecture %s is not supported",
		    jitmap_arch_name(code->arch));
		return -ENOTSUP;
	}
	if (!known(regs, (unsigned)s.a->sp)) {
		say(&reasons, "unwind", "the stack pointer of this frame is not known");
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
		enum outcome (*fn)(struct step *, jitmap_unwind_result *);
	} order[] = {
		{JITMAP_UNWIND_CFI, by_cfi},
		{JITMAP_UNWIND_STACKMAP, by_stackmap},
		{JITMAP_UNWIND_CODE, by_code},
		{JITMAP_UNWIND_FRAME_POINTER, by_frame_pointer},
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
		memset(&r, 0, sizeof(r));
		const enum outcome o = order[k].fn(&s, &r);
		if (o == STEP_OK) {
			r.method = (jitmap_unwind_method)m;
			*out = r;
			if (why && why_len)
				why[0] = '\0';
			return 0;
		}
		if (o == STEP_STOP) {
			*out = (jitmap_unwind_result){.cfa = r.cfa, .method = (jitmap_unwind_method)m};
			return -ESRCH;
		}
		fault |= o == STEP_FAULT;
	}
	if (!tried)
		say(&reasons, "unwind", "no method was allowed");
	if (stack_unread)
		*stack_unread = reasons.stack_unread;
	return fault ? -EFAULT : -ENOENT;
}
