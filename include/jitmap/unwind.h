/* unwind.h: one-frame unwinding of JIT code, against an injected target.
 *
 * Given the registers of a frame in JIT code, compute its caller's registers and the frame's
 * canonical frame address (CFA), by the first of these that applies at the frame's PC:
 *   1. CFI: the code object's .eh_frame or .debug_frame, read with libdwarf;
 *   2. the stackmap: at a record's PC the function's frame size is known (when it is not
 *      dynamic), which gives the CFA and the return address slot;
 *   3. the frame-pointer chain, when the caller's frame pointer and return address sit where
 *      the architecture's frame record puts them and pass sanity checks.
 * The same code serves the GDB reader plugin, the Python front ends and the unit tests: target
 * memory is reached only through a callback.
 *
 * Registers are named by DWARF number (LLVM's numbering, as in jitmap_target). The PC is kept
 * apart from the numbered registers because not every architecture gives it a DWARF number.
 */
#ifndef JITMAP_UNWIND_H
#define JITMAP_UNWIND_H

#include <jitmap/jitmap.h>

#ifdef __cplusplus
extern "C" {
#endif

/* DWARF register numbers below this fit in a jitmap_frame_regs (x86-64 uses 0-16, AArch64
 * 0-31, RISC-V 0-31, s390x 0-15 for the GPRs, PPC64 0-31 plus LR 65). */
#define JITMAP_UNWIND_MAX_REGS 128

typedef struct jitmap_frame_regs {
	uint64_t pc;
	uint64_t reg[JITMAP_UNWIND_MAX_REGS];
	uint64_t known[JITMAP_UNWIND_MAX_REGS / 64]; /* bit n of the set: reg[n] holds a value */
} jitmap_frame_regs;

static inline bool jitmap_frame_reg_known(const jitmap_frame_regs *r, unsigned n)
{
	return n < JITMAP_UNWIND_MAX_REGS && ((r->known[n / 64] >> (n % 64)) & 1);
}

static inline void jitmap_frame_reg_set(jitmap_frame_regs *r, unsigned n, uint64_t v)
{
	if (n < JITMAP_UNWIND_MAX_REGS) {
		r->reg[n] = v;
		r->known[n / 64] |= UINT64_C(1) << (n % 64);
	}
}

/* A thread's registers from Linux's general registers: NT_PRSTATUS's pr_reg, which
 * PTRACE_GETREGSET reads as NT_PRSTATUS (x86-64 user_regs_struct, AArch64 user_pt_regs, s390x
 * s390_regs), `len` bytes at `gregs` in byte order `order`. `*out` is cleared, then holds the
 * PC in out->pc and, by DWARF number, every register an unwinder tracks
 * (jitmap_arch_num_core_regs) that the layout has within `len`.
 * Returns 0; -ENOTSUP for an architecture whose layout jitmap does not know (ppc64, RISC-V);
 * -EINVAL for NULL arguments or when `len` does not reach the PC. A core's threads are read
 * with the same layouts (jitmap_stopped_thread). */
JITMAP_API int jitmap_frame_regs_from_linux(jitmap_arch arch, jitmap_byte_order order,
					    const void *gregs, size_t len, jitmap_frame_regs *out);

/* -- CFI of one code object -- */

typedef struct jitmap_cfi jitmap_cfi;

/* Read the call frame information of one code object. `eh_frame` (`eh_len` bytes) is the
 * .eh_frame section as it sits in memory at `eh_addr` (relocated: read it from the target,
 * not from an unrelocated object copy); `debug_frame` (`df_len` bytes) is .debug_frame, whose
 * addresses are absolute. Either may be NULL. The bytes are copied. An .eh_frame ends at its
 * zero terminator; the byte order is the one in which the first entry's length fits (big
 * endian on s390x when both do, little endian elsewhere).
 * The framing of both sections is checked before libdwarf reads them (lengths, CIE pointers,
 * CIE versions and augmentations, pointer encodings: absolute or pc-relative only), and each
 * is capped at 64 MiB.
 * Returns NULL with errno set and `*err` filled: EINVAL when the sections are malformed,
 * ENOENT when neither holds an FDE, ENOTSUP for an unsupported architecture, ENOMEM. The
 * object may be used from several threads at once (an internal lock serialises libdwarf). */
JITMAP_API jitmap_cfi *jitmap_cfi_new(jitmap_arch arch, const void *eh_frame, size_t eh_len,
				      uint64_t eh_addr, const void *debug_frame, size_t df_len,
				      jitmap_error *err);
JITMAP_API void jitmap_cfi_free(jitmap_cfi *cfi);
/* Whether an FDE covers `pc`; when it does and `lo`/`hi` are not NULL, its range [lo, hi).
 * O(log n) over a table built at jitmap_cfi_new, without libdwarf: cheap enough to reject
 * foreign PCs. NULL `cfi` covers nothing. */
JITMAP_API bool jitmap_cfi_covers(const jitmap_cfi *cfi, uint64_t pc, uint64_t *lo,
				  uint64_t *hi);

/* -- One step -- */

typedef enum jitmap_unwind_method {
	JITMAP_UNWIND_NONE = 0,
	JITMAP_UNWIND_CFI,
	JITMAP_UNWIND_STACKMAP,
	JITMAP_UNWIND_FRAME_POINTER,
	JITMAP_UNWIND_NATIVE, /* a caller's native unwinder (jitmap_stacker, stack.h) */
	JITMAP_UNWIND_CODE,   /* the function's instructions, from its start to the PC */
} jitmap_unwind_method;

/* Bit of a method in jitmap_unwind_code.methods. */
#define JITMAP_UNWIND_MASK(m) (1u << (m))

/* Not a method but a bit of jitmap_unwind_code.methods: only steps that a method proves
 * (docs/unwinding.md, "Proven steps and guesses"). CFI, a stackmap's frame size and a
 * frame-pointer chain checked against the function's prologue prove a step; the
 * frame-pointer chain through code whose start is unknown does not (a function that keeps
 * no frame pointer leaves its caller's there, or holds data in the register), and declines
 * under this bit, with the reason. Without it, such a step is still taken: a caller that
 * shows it says it is a guess (jitmap_stacker does: jitmap_stack_frame.guessed). */
#define JITMAP_UNWIND_PROVEN (1u << 31)

/* Not a method but a bit of jitmap_unwind_code.methods. Every method that proves a step
 * checks what it found: the return address must follow a call instruction (the bytes that
 * end at it are one: jitmap_arch_call_before, read through the target), or the method
 * declines with the reason and the next one runs. Code entered by a jump has no return
 * address where a method looks (a perf map's or jitdump's line may be a block, not a
 * function: YJIT's are). With this bit that check is left to the caller, which must make it
 * on every answer it calls proven. jitmap_stacker sets it only to look for a runtime's
 * continuation where nothing else proved the step, since only the process's code ranges
 * tell one (a return address at a code range's first byte, which no call left: BEAM's
 * normal_exit/0, V8's InterpreterEnterAtNextBytecode) from a word that is no return
 * address. The frame-pointer chain through code whose start is unknown (a guess) is not
 * checked either way; nor is an architecture without a call decoder (ppc64, RISC-V). */
#define JITMAP_UNWIND_UNCHECKED_RETURN (1u << 30)

/* "cfi", "stackmap", "frame-pointer", "native", "code", "none". */
JITMAP_API const char *jitmap_unwind_method_name(jitmap_unwind_method m);

/* What is known about the code a frame's PC is in. Any pointer may be NULL; zero-initialise
 * and fill what is known. */
typedef struct jitmap_unwind_code {
	jitmap_arch arch;
	const jitmap_cfi *cfi;         /* the object's CFI */
	const jitmap_stackmap *sm;     /* its stackmap, with relocated function addresses */
	uint64_t func_lo, func_hi;     /* the function's range [lo, hi), 0/0 if unknown */
	bool is_innermost;             /* frame 0: the PC is exact, not a return address */
	uint32_t methods;              /* JITMAP_UNWIND_MASK bits of the methods that may be
	                                  tried (still in the usual order; none: all of
	                                  them), and JITMAP_UNWIND_PROVEN */
	jitmap_byte_order order;       /* of target memory; AUTO: the CFI's, else big endian on
	                                  s390x and little endian elsewhere */
} jitmap_unwind_code;

typedef struct jitmap_unwind_result {
	jitmap_frame_regs caller;      /* the caller's registers: PC, SP, and what was restored */
	uint64_t cfa;                  /* this frame's CFA (the caller's SP before the call) */
	jitmap_unwind_method method;
	/* Bit n: the caller's register n was read back from where this frame saved it (a CFI
	 * rule that names a save slot or register), not carried over: a native callback says so
	 * of the caller-saved registers it restored (jitmap_stack_native_fn). */
	uint64_t restored[JITMAP_UNWIND_MAX_REGS / 64];
} jitmap_unwind_result;

/* Unwind one frame. `regs` must hold the frame's PC and stack pointer; the other registers
 * are used when known. Callee-saved registers that the method does not restore are carried
 * over unchanged only when the method proves they were not touched: CFI "same value" or no
 * rule for a callee-saved register; in the stackmap and frame-pointer methods, a prologue
 * decoded whole (its saves all seen, and for the stackmap method the frame it builds the
 * record's stack size) that does not save them, since the ABI says a function that does
 * not save a callee-saved register does not change it (GDB's and LLDB's unwinders rely on
 * the same rule); in frame 0, also those whose save has not run yet. Caller-saved
 * registers are never known in the caller.
 * The methods, in order (docs/unwinding.md has the details):
 *   CFI            the row at the PC (PC - 1 for outer frames, whose PC is a return address);
 *   stackmap       only at a record's exact PC, when the function's stack size is known and
 *                  the architecture's table has the frame-size rule (x86-64, AArch64,
 *                  s390x). x86-64: CFA = SP + stack size + 8, return address at CFA - 8;
 *                  AArch64: the caller's SP = SP + stack size, the return address in the
 *                  frame record, at the slot of the prologue's store, or (frame 0 of a leaf)
 *                  still in x30; s390x: the same with the CFA 160 above the caller's SP and
 *                  r14 and r6-r13 where the function's first stmg put them. When the
 *                  function's prologue sets a frame pointer, it must agree and the caller's
 *                  is restored; otherwise the instruction at the PC must not move SP (stack
 *                  arguments of the call just made may still be pushed);
 *   frame pointer  the frame-pointer chain (x86-64: caller's rbp = [rbp], return address =
 *                  [rbp + 8], CFA = rbp + 16; AArch64: the frame record, at a place only the
 *                  function's prologue says), with sanity checks, never inside a known
 *                  function that does not set it up; in frame 0 also at the function's first
 *                  instructions and at a return;
 *   code           the function's instructions (func_lo and func_hi known; x86-64), decoded
 *                  from its start along every path to the PC: what they do to SP and FP and
 *                  which callee-saved registers they push or write (docs/unwinding.md,
 *                  "Unwinding by the code"). For code with neither CFI nor a frame pointer
 *                  whose start is known: a perf map's or jitdump's range.
 * docs/unwinding.md has each rule and how it was measured. A method that does not apply, or
 * whose answer fails a check, passes to the next. The last check of every method but the
 * frame-pointer chain through code of unknown start: the return address follows a call
 * (JITMAP_UNWIND_UNCHECKED_RETURN).
 * Returns:
 *   0        `out` filled: the caller's registers, this frame's CFA, the method;
 *   -ESRCH   this is the outermost frame: its CFI row leaves the return address undefined
 *            (DWARF's end-of-stack mark, as on a thread's or a program's entry function), so
 *            there is no caller and no other method is tried. `out->cfa` holds this frame's
 *            CFA and `out->method` is JITMAP_UNWIND_CFI; the rest of `out` is zero (no
 *            caller registers). `why` says so ("cfi: the return address is undefined at
 *            0x...: the outermost frame"). Not a failure: stop the backtrace here;
 *   -ENOENT  no method applies at this PC;
 *   -EFAULT  no method succeeded and one of them could not read memory it needed;
 *   -ENOTSUP an unsupported architecture; -EINVAL NULL arguments.
 * On every nonzero return `why` (`why_len` bytes, when not NULL) holds each method's reason,
 * "cfi: ...; stackmap: ...; frame-pointer: ...". Never returns a caller whose SP is not
 * strictly above this frame's SP, but for frame 0 of a link-register architecture whose
 * return address is still in the register (a leaf that allocated no stack). */
JITMAP_API int jitmap_unwind_step(const jitmap_unwind_code *code, const jitmap_frame_regs *regs,
				  const jitmap_target *target, jitmap_unwind_result *out,
				  char *why, size_t why_len);

/* -- A step's rule --
 *
 * How a proven step found the caller, in the terms of this frame's registers, as DWARF CFI
 * and Breakpad's STACK CFI records state a rule: the CFA is a register of this frame plus an
 * offset, the caller's SP is the CFA, and the return address and each register the step read
 * back lie at the CFA plus an offset (or are a register's value, or the CFA plus an offset).
 * A callee-saved register the rule does not name is the caller's unchanged (the ABI's rule,
 * as in DWARF CFI). It holds for every visit of the same code at the same PC where the
 * frame's layout there is fixed (compiled code's is: a CFI row, a stackmap's frame size, a
 * prologue's frame record), so a crash reporter's symbol file may carry it
 * (docs/minidumps.md). jitmap_stack_frame.rule gives it for the steps the stacker took. */

#define JITMAP_UNWIND_RULE_MAX_SAVED 32

typedef enum jitmap_unwind_where {
	JITMAP_UNWIND_AT_CFA = 1,   /* the word at CFA + off */
	JITMAP_UNWIND_CFA_PLUS = 2, /* the value CFA + off */
	JITMAP_UNWIND_IN_REG = 3,   /* the value of this frame's register `from` */
} jitmap_unwind_where;

typedef struct jitmap_unwind_saved {
	uint16_t reg;  /* DWARF number of the caller's register (the return address column for
			* `ra`) */
	uint16_t where; /* jitmap_unwind_where */
	uint16_t from; /* IN_REG: DWARF number of this frame's register */
	int64_t off;   /* AT_CFA, CFA_PLUS */
} jitmap_unwind_saved;

typedef struct jitmap_unwind_rule {
	uint16_t cfa_reg; /* CFA = this frame's register cfa_reg + cfa_off */
	int64_t cfa_off;
	jitmap_unwind_saved ra; /* the return address: the caller's PC */
	unsigned num_saved;
	jitmap_unwind_saved saved[JITMAP_UNWIND_RULE_MAX_SAVED];
} jitmap_unwind_rule;

/* The DWARF numbers of the architecture's stack pointer, frame pointer and return address
 * column (x86-64 7, 6, 16; AArch64 31, 29, 30; PPC64 1, 31, 65; s390x 15, 11, 14; RISC-V 2,
 * 8, 1), and whether a DWARF register is callee-saved in the standard calling convention
 * (the stack pointer counts: see jitmap_reg_is_callee_saved). jitmap_unwind_arch_regs returns
 * 0, or -ENOTSUP for an unsupported architecture; any out pointer may be NULL. */
JITMAP_API int jitmap_unwind_arch_regs(jitmap_arch arch, unsigned *sp, unsigned *fp,
				       unsigned *ra);
JITMAP_API bool jitmap_unwind_callee_saved(jitmap_arch arch, unsigned dwarf_reg);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_UNWIND_H */
