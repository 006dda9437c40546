/* insn.h (internal): one machine instruction decoded by Capstone, for the checks that need real
 * instruction boundaries (jitmap_arch_call_sequence, jitmap_arch_callee_saved_writes in
 * include/jitmap/arch.h).
 *
 * The architecture tables (arch.h) keep their own small decoders for the few patterns an
 * unwinder matches at a known place (the call before a return address, a prologue's shape);
 * walking a run of instructions forward, where a wrong length misreads everything after it,
 * is Capstone's (the project's rule: a library where a good one exists). x86-64, AArch64 and
 * s390x; other architectures are not decoded (-ENOTSUP).
 *
 * Safe from several threads: one Capstone handle per architecture, opened once and used under
 * its own lock (a handle keeps state while it prints an instruction).
 */
#ifndef JITMAP_ARCH_INSN_H
#define JITMAP_ARCH_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jitmap/arch.h"

#define JITMAP__INSN_TEXT 96

struct jitmap__insn {
	unsigned len; /* bytes, at least 1 */
	/* A call: Capstone's call group (x86-64), or the call instructions by their ids where
	 * Capstone 4 files them as jumps only (AArch64 BL and BLR; s390x BRASL, BRAS and BASR). */
	bool call;
	/* A return: Capstone's return group, or the table's is_return (s390x br %r14 is a jump
	 * to Capstone). */
	bool ret;
	/* Any other transfer of control: a jump, conditional or not, direct or not. */
	bool branch;
	/* A call through a register: its DWARF number; -1 for a direct call, for anything else,
	 * or where Capstone does not say (s390x). */
	int call_reg;
	/* Whether Capstone says which registers the instruction writes, reads and stores
	 * (cs_regs_access and the operands' access flags: x86-64 and AArch64). Capstone 4.0 has
	 * neither for s390x (cs_regs_access answers CS_ERR_ARCH, SystemZ operands carry no
	 * access): there the three masks below are 0 and mean nothing. */
	bool access_known;
	/* The general registers (DWARF numbers below the table's num_core_regs, the PC's left
	 * out), bit r for register r, mapped from Capstone's registers by name through the
	 * architecture table (a 32-, 16- or 8-bit part counts as its whole register). */
	uint64_t writes; /* written, implicitly too (cpuid writes rbx) */
	uint64_t reads;  /* read, implicitly too */
	bool writes_memory; /* a memory operand written, or an implicit store (push) */
	uint64_t stores; /* whose value goes to the stack: push, a store based on SP or FP */
	uint64_t loads;  /* loaded from the stack: pop, leave (FP), a load based on SP or FP */
	/* What it does to the stack and frame pointers, for an unwinder that follows a
	 * function's code from its start (x86-64: the forms compilers and JITs emit; elsewhere
	 * sp is UNKNOWN for anything that writes SP, and the rest is left 0). */
	enum jitmap__sp_effect {
		JITMAP__SP_NONE = 0, /* SP unchanged (a call's push and the callee's ret cancel) */
		JITMAP__SP_ADD,      /* SP += sp_delta: push, pop, add/sub of an immediate, lea */
		JITMAP__SP_FROM_FP,  /* SP = FP + sp_delta: mov %rbp,%rsp; leave (then its pop) */
		JITMAP__SP_UNKNOWN,  /* written otherwise (and $-16,%rsp; sub %rax,%rsp) */
	} sp;
	int64_t sp_delta;
	bool fp_from_sp;     /* FP = SP + fp_delta (mov %rsp,%rbp; lea d(%rsp),%rbp), before
			      * this instruction's own SP change */
	int64_t fp_delta;
	int push_reg, pop_reg; /* the register a push stores at the new SP, or a pop (leave's
				* too) loads from the old one: its DWARF number, else -1 */
	bool target_known;   /* a direct jump or call: where it goes */
	uint64_t target;
	/* "mnemonic operands", as Capstone prints them: x86-64 in AT&T syntax, the syntax GDB
	 * prints by default (with LLVM's spelling: size suffixes, ", " between operands, as LLDB
	 * prints it; GDB writes `movabs $0x1,%r11` where this says `movabsq $0x1, %r11`). */
	char text[JITMAP__INSN_TEXT];
};

/* Whether `arch` has a decoder: 0, -ENOTSUP (an architecture jitmap does not decode, or a
 * Capstone built without it), -ENOMEM (Capstone could not be opened). */
int jitmap__insn_ready(jitmap_arch arch);

/* Decode the instruction at `address` from `b`, the `n` bytes there (only those are read;
 * the instruction must end within them). 0 with *out filled; -EILSEQ when the bytes are no
 * whole instruction (n == 0 too); -EINVAL for b NULL with n > 0 or out NULL; as
 * jitmap__insn_ready otherwise. */
int jitmap__insn_decode(jitmap_arch arch, const uint8_t *b, size_t n, uint64_t address,
			struct jitmap__insn *out);

#endif /* JITMAP_ARCH_INSN_H */
