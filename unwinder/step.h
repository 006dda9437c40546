/* step.h (unwinder/): one unwinding step's context, which only the step's files share:
 * unwind.c runs the methods (step_rules.c, step_frame.c) with what step.c gives them (the
 * step's reads, its reasons, the checks every answer passes). Not for the layers above: they
 * have jitmap_unwind_step and internal.h. */
#ifndef JITMAP_UNWIND_STEP_H
#define JITMAP_UNWIND_STEP_H

#include "internal.h"

/* Bytes of one instruction read at most (x86-64's longest is 15). */
#define JITMAP__INSN_MAX 16

/* Why each method declined, as one text ("cfi: ...; stackmap: ..."), in the caller's buffer. */
struct jitmap__reasons {
	char *buf;
	size_t len, used;
	/* A method failed because a word of the stack could not be read (a return address, a
	 * frame record): said as a status too (jitmap__unwind_step), not only in the text. */
	bool stack_unread;
};

/* What one method made of the frame. */
enum jitmap__outcome {
	JITMAP_STEP_OK,      /* the caller is found */
	JITMAP_STEP_DECLINE, /* this method does not apply here: try the next */
	JITMAP_STEP_FAULT,   /* memory it needed could not be read: try the next */
	JITMAP_STEP_STOP,    /* the outermost frame (r->cfa set): no method may go on */
};

/* What a method says of its rule as it goes (jitmap_unwind_rule): the register its CFA is
 * computed from, where it found the return address when that is no word read at ra_at (the
 * link register, another register, a computed value), and each register it read back, by
 * address (made offsets from the CFA when the answer is accepted). Reset before each method.
 * A rule is said whatever the bytes: a save slot that could not be read is still where the
 * code saved the register. */
struct jitmap__notes {
	int cfa_reg;             /* -1: the CFA is no register plus an offset */
	int ra_where;            /* jitmap_unwind_where; 0: at ra_at, or in the link register */
	uint16_t ra_from;
	uint64_t ra_value;       /* CFA_PLUS: the return address's value */
	unsigned n;
	bool full;               /* more registers than a rule holds */
	struct {
		uint16_t reg, where, from;
		uint64_t at;     /* AT_CFA: the slot's address; CFA_PLUS: the value */
	} saved[JITMAP_UNWIND_RULE_MAX_SAVED];
	struct jitmap__rule_out *out; /* NULL: no rule wanted */
};

/* One step's context, the same for every method but fde_lo/fde_hi (the CFI method's finding,
 * for the frame-pointer chain) and unproven and notes (reset before each method). */
struct jitmap__step {
	const jitmap_unwind_code *code;
	const jitmap_frame_regs *regs;
	const jitmap_target *target;
	jitmap_byte_order order;
	const struct jitmap__arch *a; /* the code's architecture */
	uint64_t pc, sp;
	struct jitmap__reasons *why;
	uint64_t fde_lo, fde_hi; /* the FDE holding the PC, when CFI found one (0/0 if not) */
	bool unproven; /* the method's answer is a guess (a chain through code of unknown start) */
	struct jitmap__notes *notes;
};

/* step.c: the method's rule, said as it goes (struct jitmap__notes): the CFA's register; the
 * return address's place when it is not the word accept_at reads it from; a register read
 * back (AT_CFA: from the word at `at`, CFA_PLUS: the value `at`, IN_REG: register `from`'s
 * value). jitmap__restore reads a saved register's word at `at` into `caller` and says so:
 * 0, or -EFAULT (the register stays unknown, the rule is said all the same). */
void jitmap__note_cfa(const struct jitmap__step *s, unsigned reg);
void jitmap__note_ra(const struct jitmap__step *s, jitmap_unwind_where where, uint64_t value,
		     unsigned from);
void jitmap__note_saved(const struct jitmap__step *s, unsigned reg, jitmap_unwind_where where,
			uint64_t at, unsigned from);
int jitmap__restore(const struct jitmap__step *s, jitmap_frame_regs *caller, unsigned reg,
		    uint64_t at);

/* step.c: add "METHOD: reason" to the reasons (cut where the buffer ends). */
void jitmap__say(struct jitmap__reasons *r, const char *method, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline bool jitmap__known(const jitmap_frame_regs *r, unsigned n)
{
	return jitmap_frame_reg_known(r, n);
}

/* step.c: the target's bytes, and a word in the step's byte order: 0 or -EFAULT; the
 * instruction at `pc`: how many of its bytes could be read (up to the table's insn_window;
 * the rest of `b` zero), 0 when none. */
int jitmap__step_read(const struct jitmap__step *s, uint64_t addr, void *buf, size_t len);
int jitmap__step_word(const struct jitmap__step *s, uint64_t addr, uint64_t *v);
size_t jitmap__step_insn(const struct jitmap__step *s, uint64_t pc,
			 uint8_t b[JITMAP__INSN_MAX]);

/* step.c: the callee-saved registers carried to the caller unchanged; a return address
 * without its signature; the return address still in the link register (0, or -1 when the
 * architecture has none or its value is not known). */
void jitmap__carry_callee_saved(const struct jitmap__step *s, jitmap_frame_regs *caller);
uint64_t jitmap__code_address(const struct jitmap__step *s, uint64_t ra);
int jitmap__ra_from_register(const struct jitmap__step *s, uint64_t *ra);

/* step.c: the last check of every method, which sets the caller's PC and SP in `r` when the
 * answer is one: the CFA above the SP, the return address after a call. `ra_at`: where the
 * return address was read (0: not from memory); `ra_in_reg`: it came from the link
 * register. jitmap__accept: read from memory (or computed), not from the register. */
enum jitmap__outcome jitmap__accept_at(const struct jitmap__step *s, const char *method,
				       jitmap_unwind_result *r, uint64_t cfa, uint64_t ra,
				       uint64_t ra_at, bool ra_in_reg);
enum jitmap__outcome jitmap__accept(const struct jitmap__step *s, const char *method,
				    jitmap_unwind_result *r, uint64_t cfa, uint64_t ra,
				    uint64_t ra_at);

/* The methods, in the order unwind.c tries them: the CFI (step_rules.c), the stackmap's frame
 * size (step_frame.c), the function's own code (step_rules.c), the frame-pointer chain
 * (step_frame.c). Each fills `r` (zeroed by the caller) and says why it declines. */
enum jitmap__outcome jitmap__by_cfi(struct jitmap__step *s, jitmap_unwind_result *r);
enum jitmap__outcome jitmap__by_stackmap(struct jitmap__step *s, jitmap_unwind_result *r);
enum jitmap__outcome jitmap__by_code(struct jitmap__step *s, jitmap_unwind_result *r);
enum jitmap__outcome jitmap__by_frame_pointer(struct jitmap__step *s, jitmap_unwind_result *r);

#endif /* JITMAP_UNWIND_STEP_H */
