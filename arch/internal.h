/* internal.h (arch): one table per architecture, the only place in jitmap that knows
 * register numbers, the ABI's register roles and instruction encodings.
 *
 * Every fact about an architecture that the reader, the unwinder, the evaluator, the GDB
 * plugin or a front end needs is a field or a hook here (elfutils' backends/ are the model:
 * one file per architecture answering the same questions). A hook left NULL means "not known
 * for this architecture": the code that asks declines rather than guesses. The public calls
 * over these tables are in include/jitmap/arch.h (and the register calls in jitmap.h).
 */
#ifndef JITMAP_ARCH_INTERNAL_H
#define JITMAP_ARCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jitmap/arch.h"
#include "jitmap/jitmap.h"
#include "../common/internal.h"

/* What a function's first instructions say about its frame pointer. */
enum jitmap__prologue {
	JITMAP_PROLOGUE_NONE, /* no frame-pointer prologue */
	JITMAP_PROLOGUE_FP,   /* saves the caller's FP, then makes FP point at the save */
};

/* A function's frame as its first instructions build it (the `shape` hook). Offsets are
 * from the function's start; the CFA is the SP at its entry (x86-64: above the return
 * address the call pushed). */
struct jitmap__shape {
	enum jitmap__prologue kind;
	/* FP: the instruction that saves the caller's FP (with the return address, where a
	 * link register holds it), the PC after it (SP then points at the saved pair), the PC
	 * once FP points at the frame record; the CFA as FP + cfa_from_fp after that, and as
	 * SP + cfa_after_save between the save and setting FP. */
	unsigned save_at, after_save, fp_set_at;
	int64_t cfa_from_fp, cfa_after_save;
	/* Link-register architectures: where the prologue stores the return address register,
	 * when known without a frame pointer: the word at CFA + ra_from_cfa (ra_known). */
	bool ra_known;
	int64_t ra_from_cfa;
	/* The callee-saved registers the prologue stores, and where: the word at CFA +
	 * cfa_off, which holds the caller's value from offset `after` on (the end of the
	 * instruction that stores it). A frame-pointer prologue's FP may be among them. */
	unsigned nsaved;
	struct {
		uint16_t reg;
		uint16_t after;
		int32_t cfa_off;
	} saved[12];
	/* Whether `saved` is every callee-saved register the function stores: the decoder
	 * walked the prologue to an instruction that is none of the saves and SP moves it
	 * decodes, inside the window, and saw nothing there (nor, where instructions have one
	 * length, in the rest of the window) that stores, copies or writes a callee-saved
	 * register it did not see saved. Then, under the ABI (a function that does not save a
	 * callee-saved register does not change it), every other callee-saved register (but
	 * SP, and FP where `kind` is JITMAP_PROLOGUE_FP) is still the caller's: GDB's prologue
	 * analyzers and LLDB's assembly profiler rely on the same rule. False: nothing is
	 * known of the others. A function that saves later than its prologue (GCC's separate
	 * shrink-wrapping) is beyond what a prologue says; where a stack size is known too
	 * (the stackmap method), it must equal frame_size. */
	bool saves_complete;
	/* How far the decoded prologue moves SP, counted as a stackmap's stack size counts it
	 * (x86-64: its pushes and subtractions, not the return address the call pushed;
	 * AArch64: the whole frame; s390x: what it subtracts from r15). */
	uint64_t frame_size;
};

struct jitmap__arch {
	jitmap_arch id;
	const char *name;          /* "x86-64", as jitmap_arch_name says */
	/* Every other name a debugger or a target triple gives it (GDB's BFD name
	 * "i386:x86-64", LLDB's triple "x86_64-..."), NULL-terminated: jitmap_arch_from_name. */
	const char *const *aliases;
	unsigned elf_machine;      /* EM_* */
	unsigned pointer_size;     /* bytes */
	jitmap_byte_order default_order; /* when neither the caller nor the CFI says */
	/* DWARF numbers (LLVM's, which stackmaps use). */
	int sp, fp, ra;            /* stack pointer, frame pointer, return address column */
	int pc;                    /* the PC's own DWARF number, -1 when it has none */
	unsigned num_core_regs;    /* DWARF 0..n-1: the registers an unwinder tracks */
	bool ra_in_register;       /* at entry the return address is in register `ra` */
	/* The bits of a return address that are the address, 0 for all of them: where a signed
	 * return address (AArch64 pointer authentication) carries its signature above them. */
	uint64_t code_address_mask;
	/* The stackmap frame-size rule: at a record, CFA = SP + stack size + ra_slot, and the
	 * return address is the word at CFA - ra_slot. Only where ra_slot > 0 (the call pushes
	 * it): elsewhere the return address's save slot is not in the stackmap. */
	unsigned ra_slot;
	/* Whether LLVM's stackmap stack size is known to be the frame below the caller's SP on
	 * this architecture (measured with llc-14: x86-64, AArch64, s390x; docs/unwinding.md):
	 * at a record, the caller's SP is SP + stack size + ra_slot. */
	bool stackmap_rule;
	/* The CFA is the caller's SP + cfa_sp_offset: 0 where the CFA is the caller's SP, 160 on
	 * s390x (the register save area a caller allocates for its callee, which the ABI puts
	 * below the CFA: CFA = r15 + 160 at entry). */
	unsigned cfa_sp_offset;
	/* The frame record a frame-pointer prologue makes: FP + saved_fp_at holds the caller's
	 * FP, FP + ra_at the return address, and the CFA is FP + cfa_at. has_frame_record says
	 * whether the layout is known. */
	bool has_frame_record;
	int saved_fp_at, ra_at, cfa_at;
	/* How many bytes before a return address call_before wants. */
	size_t call_window;

	const char *(*reg_name)(unsigned regno);
	bool (*callee_saved)(unsigned regno);
	/* `b` holds the `n` bytes that end at a return address: whether they end with a call. */
	bool (*call_before)(const uint8_t *b, size_t n);
	/* The frame-pointer prologue as messages name it. */
	const char *prologue_text;
	/* The frame a function's prologue builds, from its first JITMAP__SHAPE_WINDOW bytes
	 * `b`, of which the first `n` are its code (the rest, where the memory ends sooner,
	 * zero: decoded as nothing known, and saves_complete never rests on them). */
	void (*shape)(const uint8_t *b, size_t n, struct jitmap__shape *out);
	/* Link-register architectures: what the `n` bytes from a function's start up to a PC
	 * (the instructions that have run in frame 0 of a function whose prologue builds no
	 * frame the table knows, such as a leaf) store or copy: a callee-saved register other
	 * than SP (`callee_saved`), the return address register (`ra`). For code that keeps the
	 * ABI, none of the first means every callee-saved register is still the caller's, none
	 * of the second that the return address is still in its register. */
	void (*stores)(const uint8_t *b, size_t n, bool *callee_saved, bool *ra);
	/* Whether FP + cfa_at is the CFA in every function that keeps a frame pointer (x86-64);
	 * where the frame record's place in the frame varies (AArch64), only the prologue
	 * says, and a function whose start is unknown is not unwound by its frame pointer. */
	bool fixed_cfa_at;
	/* The three hooks below decode the instruction at a PC from `b`, the `n` bytes there
	 * (insn_window of them, fewer where the memory ends sooner; each hook checks `n`). */
	size_t insn_window; /* x86-64 8, AArch64 4 (one word), s390x 6 (the longest form) */
	/* Whether the instruction moves the stack pointer (after a call whose arguments were
	 * pushed: SP is then not the body's SP). Given the whole window. */
	bool (*moves_sp)(const uint8_t *b, size_t n);
	/* Whether it is a return instruction. */
	bool (*is_return)(const uint8_t *b, size_t n);
	/* When the `n` bytes at `b` are an epilogue (stack pointer adjustments and pops, then a
	 * return): how far above SP the return address is, in *ra_from_sp. NULL where not
	 * decoded. */
	bool (*epilogue)(const uint8_t *b, size_t n, uint64_t *ra_from_sp);
	/* Whether it looks like the start of a frame-pointer prologue. */
	bool (*looks_like_prologue)(const uint8_t *b, size_t n);
};

/* Bytes of a function's start the shape hook reads: an x86-64 prologue that pushes every
 * callee-saved register after endbr64 and a frame pointer, then subtracts a 32-bit size, is
 * 26 bytes, and the instruction after it must be seen too. */
#define JITMAP__SHAPE_WINDOW 48


/* The table of `arch`, or NULL for JITMAP_ARCH_UNKNOWN and values out of range. */
const struct jitmap__arch *jitmap__arch(jitmap_arch arch);

extern const struct jitmap__arch jitmap__x86_64, jitmap__aarch64, jitmap__ppc64, jitmap__s390x,
	jitmap__riscv64;

/* Names built from a prefix and a number ("xmm3"), kept in static storage filled at load
 * time (so jitmap_reg_name is safe from several threads). */
const char *jitmap__numbered(jitmap_arch arch, unsigned regno, const char *prefix, unsigned n);
#define JITMAP_MAX_REGNO 160
/* Every jitmap_arch value, JITMAP_ARCH_UNKNOWN too: the size of arrays indexed by one. */
#define JITMAP__NUM_ARCHES (JITMAP_ARCH_RISCV64 + 1)

/* -- Instructions (insn.c) --
 *
 * One machine instruction decoded by Capstone, for the checks that need real
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

#endif /* JITMAP_ARCH_INTERNAL_H */
