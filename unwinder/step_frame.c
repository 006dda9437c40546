/* step_frame.c: the methods of a step that find the frame its function's prologue builds:
 * the stackmap's frame size at a record's PC, and the frame-pointer chain, with what they
 * share of the prologue the architecture's table decodes (its shape, the registers it saves,
 * the ABI's rule for those it does not). Each declines, saying why, where the prologue or the
 * stack does not prove the caller (step.c's checks).
 */
#include <stdio.h>
#include <stdlib.h>

#include "step.h"

/* A frame pointer farther than this above the stack pointer is not one (JIT frames are
 * small; 16 MiB is beyond any thread's default stack). Stack sizes are held to it too. */
#define FP_MAX_DISTANCE (UINT64_C(16) << 20)

/* Bytes of an epilogue looked at after a call: pops of every callee-saved register, an add
 * with a 32-bit immediate and the return fit. */
#define EPILOGUE_MAX 24

#define U(x) ((unsigned long long)(x)) /* for %llx */

/* -- Code patterns (the architecture table decodes them) -- */

enum prologue { PROLOGUE_NONE, PROLOGUE_FP, PROLOGUE_UNREADABLE };

/* The frame the function at `func` builds, as its first instructions say (x86-64: [endbr64]
 * push %rbp; mov %rsp,%rbp, then its pushes; AArch64: arch/aarch64.c). */
static enum prologue fp_shape(const struct jitmap__step *s, uint64_t func,
			      struct jitmap__shape *sh)
{
	uint8_t b[JITMAP__SHAPE_WINDOW];
	size_t n = sizeof(b);
	memset(sh, 0, sizeof(*sh));
	if (!s->a->shape)
		return PROLOGUE_NONE;
	if (jitmap__step_read(s, func, b, sizeof(b))) {
		/* A function at the very end of a mapping: read what there is (the rest zero,
		 * which the hook is told is not code). */
		while (n > 4 && jitmap__step_read(s, func, b, n - 4) != 0)
			n -= 4;
		if (n <= 4 && jitmap__step_read(s, func, b, 4))
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

static int stores_before_pc(const struct jitmap__step *s, uint64_t func, bool *callee_saved,
			    bool *ra)
{
	uint8_t b[STORES_SPAN_MAX];
	if (!s->a->stores || s->pc < func || s->pc - func > sizeof(b))
		return -ERANGE;
	const size_t n = (size_t)(s->pc - func);
	if (n && jitmap__step_read(s, func, b, n))
		return -EFAULT;
	s->a->stores(b, n, callee_saved, ra);
	return 0;
}

/* Whether the save `k` of the prologue at `func` has run: always in an outer frame (its PC
 * is past the prologue), in frame 0 once the PC is past the instruction that stores it. */
static bool save_done(const struct jitmap__step *s, const struct jitmap__shape *sh,
		      unsigned k, uint64_t func)
{
	return !s->code->is_innermost || s->pc >= func + sh->saved[k].after;
}

/* The callee-saved registers the prologue of the function at `func` stored, read back from
 * their slots below the CFA (in frame 0, only those whose store has run). */
static void restore_saved(const struct jitmap__step *s, const struct jitmap__shape *sh,
			  uint64_t func, uint64_t cfa, jitmap_frame_regs *caller)
{
	for (unsigned k = 0; k < sh->nsaved; k++)
		if (save_done(s, sh, k, func))
			jitmap__restore(s, caller, sh->saved[k].reg,
					cfa + (uint64_t)(int64_t)sh->saved[k].cfa_off);
}

/* The ABI's rule where the prologue was decoded whole (sh->saves_complete): a callee-saved
 * register the function does not save, it does not change, so the caller's value is this
 * frame's. Carried: every callee-saved register but SP that this frame knows, that the
 * prologue does not save (or, in frame 0, whose save has not run yet: it still holds the
 * caller's value) and, for a frame-pointer prologue, other than FP (its frame record says
 * it). A saved register whose slot could not be read stays unknown. GDB's and LLDB's
 * unwinders apply the same rule to the prologues they analyse. */
static void carry_unsaved(const struct jitmap__step *s, const struct jitmap__shape *sh,
			  uint64_t func, jitmap_frame_regs *caller)
{
	if (!sh->saves_complete)
		return;
	for (unsigned r = 0; r < JITMAP_UNWIND_MAX_REGS; r++) {
		if (r == (unsigned)s->a->sp || !jitmap_unwind_callee_saved(s->code->arch, r) ||
		    !jitmap__known(s->regs, r) || jitmap__known(caller, r))
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

enum jitmap__outcome jitmap__by_stackmap(struct jitmap__step *s, jitmap_unwind_result *r)
{
	const char *const M = "stackmap";
	const jitmap_stackmap *sm = s->code->sm;
	if (!sm) {
		jitmap__say(s->why, M, "no stackmap for this code");
		return JITMAP_STEP_DECLINE;
	}
	/* Where the call pushes the return address (x86-64), the stack size plus that slot
	 * gives the CFA (measured: docs/unwinding.md). Where it arrives in a link register
	 * (AArch64, s390x), the stack size is the whole frame (the caller's SP = SP + size;
	 * the CFA cfa_sp_offset above it) and the return address is where the prologue put it:
	 * in the frame record, in the caller's register save area (s390x), or still in the
	 * register of a leaf. */
	if (!s->a->moves_sp || !s->a->shape || !s->a->stackmap_rule) {
		jitmap__say(s->why, M, "the frame size rule is not known for %s", s->a->name);
		return JITMAP_STEP_DECLINE;
	}
	const jitmap_record *rec = NULL;
	if (jitmap_stackmap_lookup(sm, s->pc, &rec, 1) == 0 || !rec) {
		const jitmap_record *before = NULL, *after = NULL;
		(void)jitmap_stackmap_nearest(sm, s->pc, &before, &after);
		if (before || after)
			jitmap__say(s->why, M, "no record at 0x%llx (nearest: %s0x%llx)", U(s->pc),
				    before ? "before " : "after ",
				    U(jitmap_record_pc(sm, before ? before : after)));
		else
			jitmap__say(s->why, M, "no record at 0x%llx", U(s->pc));
		return JITMAP_STEP_DECLINE;
	}
	const jitmap_function *f = jitmap_record_function(sm, rec);
	if (!f) {
		jitmap__say(s->why, M, "record %llu has no function", U(rec->id));
		return JITMAP_STEP_DECLINE;
	}
	if (f->stack_size == UINT64_MAX) {
		jitmap__say(s->why, M, "the function at 0x%llx has a dynamic or realigned frame "
			    "(no stack size)", U(f->address));
		return JITMAP_STEP_DECLINE;
	}
	if (f->stack_size % 8 || f->stack_size > FP_MAX_DISTANCE) {
		jitmap__say(s->why, M, "stack size %llu of the function at 0x%llx is not plausible",
			    U(f->stack_size), U(f->address));
		return JITMAP_STEP_DECLINE;
	}
	uint64_t cfa, ra_addr = 0;
	jitmap__note_cfa(s, (unsigned)s->a->sp); /* the stack size's rule is SP's */
	if (s->a->ra_slot) {
		if (jitmap_arch_stackmap_cfa(s->code->arch, s->sp, f->stack_size, &cfa, &ra_addr)) {
			jitmap__say(s->why, M, "the stack size rule overflows");
			return JITMAP_STEP_DECLINE;
		}
	} else {
		cfa = s->sp + f->stack_size + s->a->cfa_sp_offset;
		if (cfa < s->sp || f->stack_size > UINT64_MAX - s->a->cfa_sp_offset) {
			jitmap__say(s->why, M, "the stack size rule overflows");
			return JITMAP_STEP_DECLINE;
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
	if (p == PROLOGUE_FP && s->a->has_frame_record &&
	    jitmap__known(s->regs, (unsigned)s->a->fp)) {
		const uint64_t fp = s->regs->reg[s->a->fp];
		const uint64_t fp_cfa = fp + (uint64_t)sh.cfa_from_fp;
		if (fp_cfa != cfa) {
			jitmap__say(s->why, M, "the stack size %llu puts the CFA at 0x%llx, but "
				    "the frame pointer puts it at 0x%llx (SP is not the body's SP "
				    "here)", U(f->stack_size), U(cfa), U(fp_cfa));
			return JITMAP_STEP_DECLINE;
		}
		jitmap__restore(s, &r->caller, (unsigned)s->a->fp,
				fp + (uint64_t)(int64_t)s->a->saved_fp_at);
		if (!s->a->ra_slot)
			ra_addr = fp + (uint64_t)(int64_t)s->a->ra_at;
	} else {
		uint8_t insn[JITMAP__INSN_MAX];
		const size_t n = jitmap__step_insn(s, s->pc, insn);
		if (n < s->a->insn_window) {
			jitmap__say(s->why, M, "cannot read the code at 0x%llx to check the stack "
				    "pointer", U(s->pc));
			return JITMAP_STEP_FAULT;
		}
		/* Unless it is the function's epilogue and that agrees with the stack size: the
		 * pops and adds before its return put the return address where the rule does
		 * (a record at the return address of a call the function ends with). */
		uint8_t tail[EPILOGUE_MAX];
		uint64_t ra_from_sp;
		if (s->a->moves_sp(insn, n) &&
		    !(s->a->epilogue && jitmap__step_read(s, s->pc, tail, sizeof(tail)) == 0 &&
		      s->a->epilogue(tail, sizeof(tail), &ra_from_sp) &&
		      s->a->ra_slot && s->sp + ra_from_sp == ra_addr)) {
			jitmap__say(s->why, M, "the instruction at 0x%llx moves the stack pointer, "
				    "so SP may not be the body's SP here (arguments pushed for a "
				    "call)", U(s->pc));
			return JITMAP_STEP_DECLINE;
		}
		if (!s->a->ra_slot) {
			if (p == PROLOGUE_NONE && sh.ra_known) {
				ra_addr = cfa + (uint64_t)sh.ra_from_cfa;
			} else if (p == PROLOGUE_NONE && s->code->is_innermost) {
				bool ra_stored;
				const int rc = stores_before_pc(s, f->address, &callee_saved_stored,
								&ra_stored);
				if (rc == -EFAULT) {
					jitmap__say(s->why, M, "cannot read the code of the "
						    "function at 0x%llx up to 0x%llx",
						    U(f->address), U(s->pc));
					return JITMAP_STEP_FAULT;
				}
				if (rc) {
					jitmap__say(s->why, M, "the function at 0x%llx starts %llu "
						    "bytes before the PC (more than %d): where its "
						    "return address is was not looked for",
						    U(f->address), U(s->pc - f->address),
						    STORES_SPAN_MAX);
					return JITMAP_STEP_DECLINE;
				}
				if (ra_stored) {
					jitmap__say(s->why, M, "the function at 0x%llx stores or "
						    "copies its return address register before "
						    "0x%llx, not in a frame its prologue says",
						    U(f->address), U(s->pc));
					return JITMAP_STEP_DECLINE;
				}
				ra_in_reg = true;
			} else {
				jitmap__say(s->why, M, "where the function at 0x%llx saved the "
					    "return address is not known (no frame record in its "
					    "prologue)", U(f->address));
				return JITMAP_STEP_DECLINE;
			}
		}
	}
	uint64_t ra;
	if (ra_in_reg) {
		if (jitmap__ra_from_register(s, &ra)) {
			jitmap__say(s->why, M, "the return address register is not known in this "
				    "frame");
			return JITMAP_STEP_DECLINE;
		}
		/* A call has just returned here (a record after a call): the register holds
		 * this PC, and the function's own return address is elsewhere. */
		if (jitmap__code_address(s, ra) == s->pc) {
			jitmap__say(s->why, M, "the return address register holds the PC itself (a "
				    "call returned here): the function's own return address is not "
				    "in it");
			return JITMAP_STEP_DECLINE;
		}
		if (!callee_saved_stored) /* so, under the ABI, it changed none of them */
			jitmap__carry_callee_saved(s, &r->caller);
		restore_saved(s, &sh, f->address, cfa, &r->caller);
		/* Stores that ran past the decoded window are ones the shape did not see. */
		if (sh.frame_size == f->stack_size &&
		    (!callee_saved_stored || s->pc - f->address <= JITMAP__SHAPE_WINDOW))
			carry_unsaved(s, &sh, f->address, &r->caller);
		return jitmap__accept_at(s, M, r, cfa, ra, 0, true);
	}
	restore_saved(s, &sh, f->address, cfa, &r->caller);
	/* The prologue's saves are all of them only if the frame it builds is the whole frame
	 * the stack size says (a shrink-wrapped function saves in a later block). */
	if (sh.frame_size == f->stack_size)
		carry_unsaved(s, &sh, f->address, &r->caller);
	if (jitmap__step_word(s, ra_addr, &ra)) {
		s->why->stack_unread = true;
		jitmap__say(s->why, M, "cannot read the return address at 0x%llx", U(ra_addr));
		return JITMAP_STEP_FAULT;
	}
	if (ra == 0) {
		jitmap__say(s->why, M, "the return address at 0x%llx is 0", U(ra_addr));
		return JITMAP_STEP_DECLINE;
	}
	return jitmap__accept(s, M, r, cfa, ra, ra_addr);
}

/* -- The frame-pointer chain -- */

/* Frame 0 stopped where the frame pointer is not this function's yet (or no more): at a
 * return, at a function's first instruction, or between saving the caller's FP and setting
 * its own. */
static enum jitmap__outcome fp_innermost_special(struct jitmap__step *s,
						 jitmap_unwind_result *r, uint64_t lo,
						 bool *handled)
{
	const char *const M = "frame-pointer";
	uint8_t b[JITMAP__INSN_MAX];
	const size_t have = jitmap__step_insn(s, s->pc, b);
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
			if (jitmap__step_word(s, s->sp, &ra)) {
				s->why->stack_unread = true;
				jitmap__say(s->why, M, "cannot read the return address at 0x%llx",
					    U(s->sp));
				return JITMAP_STEP_FAULT;
			}
		} else if (jitmap__ra_from_register(s, &ra)) {
			jitmap__say(s->why, M, "the return address register is not known in this "
				    "frame");
			return JITMAP_STEP_DECLINE;
		}
		jitmap__carry_callee_saved(s, &r->caller);
		jitmap__note_cfa(s, (unsigned)s->a->sp);
		return jitmap__accept_at(s, M, r, s->sp + s->a->ra_slot, ra,
					 s->a->ra_slot ? s->sp : 0, !s->a->ra_slot);
	}
	/* After the caller's FP was saved (with the return address above it), before FP is
	 * set: FP is still the caller's, the pair at SP. */
	if (p == PROLOGUE_FP && sh.cfa_after_save && s->pc == lo + sh.after_save) {
		*handled = true;
		uint64_t saved_fp;
		if (jitmap__step_word(s, s->sp + (uint64_t)(int64_t)s->a->saved_fp_at, &saved_fp) ||
		    jitmap__step_word(s, s->sp + (uint64_t)(int64_t)s->a->ra_at, &ra)) {
			s->why->stack_unread = true;
			jitmap__say(s->why, M, "cannot read the stack at 0x%llx", U(s->sp));
			return JITMAP_STEP_FAULT;
		}
		jitmap__carry_callee_saved(s, &r->caller);
		jitmap_frame_reg_set(&r->caller, (unsigned)s->a->fp, saved_fp);
		jitmap__note_cfa(s, (unsigned)s->a->sp);
		jitmap__note_saved(s, (unsigned)s->a->fp, JITMAP_UNWIND_AT_CFA,
				   s->sp + (uint64_t)(int64_t)s->a->saved_fp_at, 0);
		return jitmap__accept(s, M, r, s->sp + (uint64_t)sh.cfa_after_save, ra,
				      s->sp + (uint64_t)(int64_t)s->a->ra_at);
	}
	return JITMAP_STEP_DECLINE;
}

enum jitmap__outcome jitmap__by_frame_pointer(struct jitmap__step *s, jitmap_unwind_result *r)
{
	const char *const M = "frame-pointer";
	/* The chain needs the frame record's layout and, to know whether FP is this function's,
	 * the prologue's shape. */
	if (!s->a->has_frame_record || !s->a->shape || !s->a->is_return) {
		jitmap__say(s->why, M, "not known for %s", s->a->name);
		return JITMAP_STEP_DECLINE;
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
		const enum jitmap__outcome o = fp_innermost_special(s, r, lo, &handled);
		if (handled)
			return o;
	}
	int64_t cfa_from_fp = s->a->cfa_at;
	struct jitmap__shape sh = {0};
	if (lo) {
		const enum prologue p = fp_shape(s, lo, &sh);
		if (p == PROLOGUE_UNREADABLE) {
			jitmap__say(s->why, M, "cannot read the code of the function at 0x%llx",
				    U(lo));
			return JITMAP_STEP_FAULT;
		}
		if (p == PROLOGUE_NONE) {
			jitmap__say(s->why, M, "the function at 0x%llx does not begin with %s: %s "
				    "is not its frame pointer", U(lo), s->a->prologue_text,
				    fp_name);
			return JITMAP_STEP_DECLINE;
		}
		if (s->code->is_innermost && s->pc < lo + sh.fp_set_at) {
			jitmap__say(s->why, M, "at 0x%llx the prologue has not set %s yet",
				    U(s->pc), fp_name);
			return JITMAP_STEP_DECLINE;
		}
		cfa_from_fp = sh.cfa_from_fp;
	} else {
		if (!s->a->fixed_cfa_at) {
			jitmap__say(s->why, M, "the function's start is unknown, and on %s only "
				    "its prologue says where the frame record is", s->a->name);
			return JITMAP_STEP_DECLINE;
		}
		/* Nothing says the function keeps a frame pointer: code built without one leaves
		 * its caller's there (the chain skips a frame) or holds data in it. */
		if (s->code->methods & JITMAP_UNWIND_PROVEN) {
			jitmap__say(s->why, M, "the function's start is unknown, so nothing says "
				    "%s is its frame pointer: following it would be a guess",
				    fp_name);
			return JITMAP_STEP_DECLINE;
		}
		uint8_t b[JITMAP__INSN_MAX];
		const size_t n = s->code->is_innermost ? jitmap__step_insn(s, s->pc, b) : 0;
		if (n && s->a->looks_like_prologue(b, n)) {
			jitmap__say(s->why, M, "at a frame pointer prologue of a function whose "
				    "start is unknown");
			return JITMAP_STEP_DECLINE;
		}
		s->unproven = true; /* a guess: its caller says so, nothing here proves it */
	}
	if (!jitmap__known(s->regs, (unsigned)s->a->fp)) {
		jitmap__say(s->why, M, "%s is not known in this frame", fp_name);
		return JITMAP_STEP_DECLINE;
	}
	const uint64_t fp = s->regs->reg[s->a->fp];
	if (fp < s->sp || fp % 8 || fp - s->sp > FP_MAX_DISTANCE || fp > UINT64_MAX - 16 ||
	    s->a->saved_fp_at < 0 || s->a->ra_at < 0 || cfa_from_fp <= 0 ||
	    cfa_from_fp > (int64_t)FP_MAX_DISTANCE) {
		jitmap__say(s->why, M, "%s 0x%llx is not a frame pointer for SP 0x%llx", fp_name,
			    U(fp), U(s->sp));
		return JITMAP_STEP_DECLINE;
	}
	uint64_t saved_fp, ra;
	if (jitmap__step_word(s, fp + (uint64_t)s->a->saved_fp_at, &saved_fp) ||
	    jitmap__step_word(s, fp + (uint64_t)s->a->ra_at, &ra)) {
		s->why->stack_unread = true;
		jitmap__say(s->why, M, "cannot read the frame record at 0x%llx", U(fp));
		return JITMAP_STEP_FAULT;
	}
	if (ra == 0) {
		jitmap__say(s->why, M, "the return address at 0x%llx is 0: the end of the chain",
			    U(fp + (uint64_t)s->a->ra_at));
		return JITMAP_STEP_DECLINE;
	}
	jitmap_frame_reg_set(&r->caller, (unsigned)s->a->fp, saved_fp);
	jitmap__note_cfa(s, (unsigned)s->a->fp);
	jitmap__note_saved(s, (unsigned)s->a->fp, JITMAP_UNWIND_AT_CFA,
			   fp + (uint64_t)s->a->saved_fp_at, 0);
	restore_saved(s, &sh, lo, fp + (uint64_t)cfa_from_fp, &r->caller);
	carry_unsaved(s, &sh, lo, &r->caller); /* sh is all zero when the start is unknown */
	return jitmap__accept(s, M, r, fp + (uint64_t)cfa_from_fp, ra,
			      fp + (uint64_t)s->a->ra_at);
}

