/* arch.h (internal): one table per architecture, the only place in jitmap that knows
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

#include "jitmap/jitmap.h"

/* What a function's first instructions say about its frame pointer. */
enum jitmap__prologue {
	JITMAP_PROLOGUE_NONE, /* no frame-pointer prologue */
	JITMAP_PROLOGUE_FP,   /* saves the caller's FP, then makes FP point at the save */
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
	/* The stackmap frame-size rule: at a record, CFA = SP + stack size + ra_slot, and the
	 * return address is the word at CFA - ra_slot. Only where ra_slot > 0 (the call pushes
	 * it): elsewhere the return address's save slot is not in the stackmap. */
	unsigned ra_slot;
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
	/* The first 8 bytes of a function: its prologue kind, and the offset of the instruction
	 * that saves the FP (after any landing pad) in *save_at. */
	enum jitmap__prologue (*prologue)(const uint8_t b[8], unsigned *save_at);
	/* How many bytes the FP-saving instruction is (the PC after it, before the FP is set). */
	unsigned fp_save_len;
	/* `b` (8 bytes at a PC): whether the instruction moves the stack pointer (after a call
	 * whose arguments were pushed: SP is then not the body's SP). */
	bool (*moves_sp)(const uint8_t b[8]);
	/* `b` (2 bytes at a PC): whether it is a return instruction. */
	bool (*is_return)(const uint8_t b[2]);
	/* `b` (3 bytes at a PC): whether it looks like the start of a frame-pointer prologue. */
	bool (*looks_like_prologue)(const uint8_t b[3]);
};

/* The table of `arch`, or NULL for JITMAP_ARCH_UNKNOWN and values out of range. */
const struct jitmap__arch *jitmap__arch(jitmap_arch arch);

extern const struct jitmap__arch jitmap__x86_64, jitmap__aarch64, jitmap__ppc64, jitmap__s390x,
	jitmap__riscv64;

/* Names built from a prefix and a number ("xmm3"), kept in static storage filled at load
 * time (so jitmap_reg_name is safe from several threads). */
const char *jitmap__numbered(jitmap_arch arch, unsigned regno, const char *prefix, unsigned n);
#define JITMAP_MAX_REGNO 160

#endif /* JITMAP_ARCH_INTERNAL_H */
