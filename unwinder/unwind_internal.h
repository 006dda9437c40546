/* unwind_internal.h: what the unwinder's two modules share: the CFI row of one PC, in a form
 * that does not depend on libdwarf, so that unwind.c evaluates rules without knowing where
 * they came from. */
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

/* The byte order the CFI was read in (what the target's memory uses). */
jitmap_byte_order jitmap__cfi_order(const jitmap_cfi *cfi);

#endif /* JITMAP_UNWIND_INTERNAL_H */
