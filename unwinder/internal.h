/* internal.h (unwinder/): what the unwinder's files share: the CFI row of one PC, in a form
 * that does not depend on libdwarf, so that the CFI method (step_rules.c) evaluates rules
 * without knowing where they came from (cfi.c makes it), and the code walk (walk.c); what the
 * layers above use (jitmap__follows_call, jitmap__unwind_step). One step's own context is
 * step.h's. */
#ifndef JITMAP_UNWIND_INTERNAL_H
#define JITMAP_UNWIND_INTERNAL_H

#include "jitmap/unwind.h"

#include "../reader/internal.h"

/* How the caller's value of one register is found (DWARF 5 §6.4.1, "register rules"). */
enum jitmap__rule_kind {
	JITMAP_RULE_SAME = 0,   /* same value, or no rule at all (the two are not told apart) */
	JITMAP_RULE_UNDEFINED,  /* DW_CFA_undefined: not recoverable */
	JITMAP_RULE_OFFSET,     /* saved at CFA + off */
	JITMAP_RULE_VAL_OFFSET, /* the value is CFA + off */
	JITMAP_RULE_REGISTER,   /* saved in register `reg` of this frame */
	JITMAP_RULE_EXPRESSION, /* a DWARF expression, not evaluated */
};

struct jitmap__rule {
	enum jitmap__rule_kind kind;
	unsigned reg;
	int64_t off;
};

struct jitmap__cfi_row {
	uint64_t fde_lo, fde_hi; /* the FDE that holds the row */
	bool cfa_is_expression;
	unsigned cfa_reg;
	int64_t cfa_off;
	struct jitmap__rule rule[JITMAP_UNWIND_MAX_REGS];
};

/* The row of the CFI table that applies at `pc` (already adjusted by the caller for outer
 * frames). Returns 0; -ENOENT when no FDE covers pc; -EINVAL when libdwarf rejects the FDE's
 * instructions (the reason in `why`). Safe to call from several threads on one cfi. */
int jitmap__cfi_row(const jitmap_cfi *cfi, uint64_t pc, struct jitmap__cfi_row *row, char *why,
		    size_t why_len);

/* A function's frame at a PC as its instructions build it (walk.c): the CFA is SP + sp_off
 * (sp_known) or FP + fp_off (fp_known); the return address at CFA - the table's ra_slot; the
 * caller's value of each slot's register at CFA - off; a register no path from the start to
 * the PC writes (bit n of `written` clear) still holds the caller's value. */
struct jitmap__walk {
	bool sp_known, fp_known;
	int64_t sp_off, fp_off;
	uint64_t written;
	unsigned nslots;
	struct {
		unsigned reg;
		int64_t off;
	} slot[8];
};

/* Walk the code of a function that starts at `lo` (`len` bytes at `code`, up to its end or
 * what is known of it) to `pc` (exact: where frame 0 stands; else a return address) along
 * every path. 0 with *out filled, or a negative errno with the reason in `why`: -ENOTSUP for
 * an architecture not walked, -ERANGE for a PC outside the code (or a return address at its
 * first byte: no call in it left one there), -EILSEQ for bytes before the PC that are no
 * instruction, -EINVAL for a PC not at an instruction (or not after a call) or a jump into
 * an instruction, -ENOENT when no path reaches the PC or the stack pointer is not known
 * there, -ENOMEM. */
int jitmap__code_walk(jitmap_arch arch, const uint8_t *code, size_t len, uint64_t lo,
		      uint64_t pc, bool exact, struct jitmap__walk *out, char *why,
		      size_t why_len);

/* The byte order the CFI was read in (what the target's memory uses). */
jitmap_byte_order jitmap__cfi_order(const jitmap_cfi *cfi);

/* Whether return address `ra` follows a call: the architecture's call_before on the bytes of
 * `mem` that end at it (fewer where fewer can be read). 1: a call; 0: not one; -1: no byte
 * before it can be read. */
int jitmap__follows_call(jitmap_arch arch, const jitmap_target *mem, uint64_t ra);

/* A step's rule (jitmap_unwind_rule), `stated` when the method that answered could state
 * it: its CFA a register plus an offset, every register it read back at a place relative to
 * it, and the answer proven (not the frame-pointer chain through code of unknown start). */
struct jitmap__rule_out {
	jitmap_unwind_rule rule;
	bool stated;
};

/* jitmap_unwind_step, saying also in *stack_unread (may be NULL) whether the step failed
 * because a word of the stack a method needed could not be read: a return address, a frame
 * record (a core or a copy of the stack that holds less than the frame uses). The stacker
 * passes it on as jitmap_stack_frame.stack_unread. *rule (may be NULL) gets the answer's
 * rule (jitmap_stack_frame.rule). */
int jitmap__unwind_step(const jitmap_unwind_code *code, const jitmap_frame_regs *regs,
			const jitmap_target *target, jitmap_unwind_result *out, char *why,
			size_t why_len, bool *stack_unread, struct jitmap__rule_out *rule);

#endif /* JITMAP_UNWIND_INTERNAL_H */
