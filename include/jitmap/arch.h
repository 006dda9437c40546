/* arch.h: what libjitmap knows about each architecture, for front ends and tools.
 *
 * One table per architecture inside the library (arch/ in the sources) answers these; nothing
 * outside libjitmap needs to name a register or decode an instruction. Register numbers are
 * LLVM's DWARF numbers, as stackmaps use them. Every call here is safe from several threads.
 * The register calls (jitmap_reg_name, jitmap_reg_sp, jitmap_reg_fp,
 * jitmap_reg_is_callee_saved) and jitmap_arch_name are in jitmap.h.
 */
#ifndef JITMAP_ARCH_H
#define JITMAP_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jitmap/types.h"

#ifndef JITMAP_API
#define JITMAP_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum jitmap_arch {
	JITMAP_ARCH_UNKNOWN = 0,
	JITMAP_ARCH_X86_64,
	JITMAP_ARCH_AARCH64,
	JITMAP_ARCH_PPC64,
	JITMAP_ARCH_S390X,
	JITMAP_ARCH_RISCV64,
} jitmap_arch;

/* The DWARF number of the return-address column (x86-64: 16, rip; AArch64: 30, x30), and of
 * the PC itself (-1 where the PC has none). -1 for an unknown architecture. */
JITMAP_API int jitmap_reg_ra(jitmap_arch arch);
JITMAP_API int jitmap_reg_pc(jitmap_arch arch);
/* The architecture this library was built for, and its byte order in *order (when not
 * NULL): the one of a live process a tool built with it traces. */
JITMAP_API jitmap_arch jitmap_arch_host(jitmap_byte_order *order);
/* How many DWARF registers, from 0, an unwinder tracks (x86-64: 17, rax..r15 and rip). */
JITMAP_API unsigned jitmap_arch_num_core_regs(jitmap_arch arch);
/* Pointer size in bytes (0 for an unknown architecture). */
JITMAP_API unsigned jitmap_arch_pointer_size(jitmap_arch arch);
/* Whether, at a function's entry, the return address is in a register (a link register:
 * AArch64, ppc64, s390x, RISC-V) rather than on the stack (x86-64). */
JITMAP_API bool jitmap_arch_ra_in_register(jitmap_arch arch);

/* The stackmap frame-size rule: at a record of a function with stack size `stack_size`, the
 * CFA is `sp` + stack_size + the bytes the call pushed, and the return address is the word
 * below the CFA. Fills *cfa and *ra_addr; -ENOTSUP where the return address is not pushed
 * (its save slot is not in the stackmap), -EOVERFLOW when the sum wraps. */
JITMAP_API int jitmap_arch_stackmap_cfa(jitmap_arch arch, uint64_t sp, uint64_t stack_size,
					uint64_t *cfa, uint64_t *ra_addr);

/* The stackmap frame-size rule where it is known (measured with llc-14 on x86-64, AArch64 and
 * s390x; docs/unwinding.md): at a record of a function with stack size `stack_size` (not
 * UINT64_MAX), the caller's stack pointer is `sp` + stack_size + the bytes the call pushed
 * (x86-64: 8; AArch64, s390x: 0). Fills *caller_sp; -ENOTSUP where jitmap does not know the
 * rule (ppc64, RISC-V, unknown), -EOVERFLOW when the sum wraps. A debugger's CFA may lie above
 * the caller's SP (s390x: by 160); this is the SP. */
JITMAP_API int jitmap_arch_stackmap_caller_sp(jitmap_arch arch, uint64_t sp, uint64_t stack_size,
					      uint64_t *caller_sp);

/* The frame record a frame-pointer prologue makes: the caller's FP at FP + *saved_fp_at, the
 * return address at FP + *ra_at, the CFA at FP + *cfa_at (x86-64 and AArch64: 0, 8, 16).
 * -ENOTSUP where jitmap does not know the layout. */
JITMAP_API int jitmap_arch_frame_record(jitmap_arch arch, int *saved_fp_at, int *ra_at,
					int *cfa_at);

/* Whether the bytes that end at a return address end with a call instruction: `bytes` holds
 * the `n` bytes before the return address (give jitmap_arch_call_window of them, fewer near
 * the start of the code). x86-64: call rel32 and the register and memory forms of call r/m64;
 * AArch64: BL and BLR. false for an architecture without the decoder. */
JITMAP_API bool jitmap_arch_call_before(jitmap_arch arch, const uint8_t *bytes, size_t n);
JITMAP_API size_t jitmap_arch_call_window(jitmap_arch arch);

/* -- Runs of instructions (decoded forward with Capstone) --
 *
 * The calls below walk instructions forward from a known start, so they need every
 * instruction's length: they decode with Capstone (x86-64, AArch64, s390x). The code bytes
 * are the caller's, read from the target, and may be anything: only the `len` bytes given are
 * read, and bytes that are no instruction end the walk. */

/* How far a call sequence may run from its record to the return address (report.py's
 * CALL_WINDOW: LLVM's longest patchpoint sequences are well inside it). */
#define JITMAP_CALL_SEQUENCE_MAX 64

/* Whether the frame's return address ends the call sequence of the patchpoint whose record is
 * at `address`: `code` holds the `len` bytes from the record's PC up to the return address
 * (len = return address - record PC). A patchpoint's record is at the start of its call
 * sequence (x86-64: movabs $target, %r11; call *%r11), and the frame's PC, a return address,
 * is after the call; an exact PC match misses it.
 *
 * 1: the bytes are exactly one call sequence. They decode as whole instructions that end
 * exactly at the return address, none but the last is a call (or any jump), the last is a call
 * both to Capstone and to the table's jitmap_arch_call_before (on the bytes that end at the
 * return address, as the unwinder asks it), and the instructions before it (when there are
 * any) do nothing but load the register the call goes through: they write no other register
 * and no memory (x86-64 and AArch64 from Capstone's register access; s390x, where Capstone 4
 * has none, only the instructions that set a register from an immediate). Code that moves a
 * value or stores one between the record and the call is not a patchpoint's: the record
 * would not describe the return address. `note` (when `note_len` > 0) gets "the call sequence that
 * starts at the record returns here (INSN; INSN): a patchpoint", cut to note_len - 1 bytes
 * and always terminated; INSN as Capstone prints it (x86-64: AT&T syntax).
 * 0: they are not: len is 0 or above JITMAP_CALL_SEQUENCE_MAX, some bytes are no instruction
 * (or the last runs past the return address), an instruction before the last is a call, or
 * the last is no call (or the two decoders disagree on it). `note` is "" then.
 * -EINVAL: `code` NULL with len > 0, or `note` NULL with note_len > 0.
 * -ENOTSUP: no decoder for `arch` (ppc64, RISC-V, unknown).
 * -ENOMEM: the decoder could not be set up. */
JITMAP_API int jitmap_arch_call_sequence(jitmap_arch arch, const uint8_t *code, size_t len,
					 uint64_t address, char *note, size_t note_len);

/* An instruction that changes a callee-saved register its function did not save. */
typedef struct jitmap_callee_saved_write {
	uint64_t address; /* the instruction's */
	unsigned regno;   /* the register it writes (DWARF number; jitmap_reg_name names it) */
	char insn[96];    /* the instruction as Capstone prints it (x86-64: AT&T syntax) */
} jitmap_callee_saved_write;

/* The ABI says a function leaves every callee-saved register as its caller had it unless it
 * saves it first (and restores it before returning); jitmap's unwinder relies on that where
 * it decoded the prologue, taking a callee-saved register the prologue did not save to be the
 * caller's. This finds the instructions of one function that break it: `code` holds the `len`
 * bytes of the function that starts at `address` (from its first byte: the prologue is read
 * there; a prefix of the function is checked as far as it goes).
 *
 * The instructions are walked in address order. An instruction that writes a callee-saved
 * register (SP aside: moving it is what frames do) is fine when the register was saved
 * before it:
 *   - by the prologue, as the architecture table's shape decodes it (its list of saved
 *     registers, and FP after a frame-pointer prologue saved it), or
 *   - by an earlier instruction that stores the register's value to the stack (push; a store
 *     based on SP or FP): a save the shape does not decode (a save after an early return,
 *     as shrink-wrapping places it, and x86-64, whose shape lists no pushes yet);
 * or when it reloads the register from the stack (pop, leave, ldp/ldr from SP or FP) and a
 * return follows it before any other call or jump (an epilogue). Any other write is reported.
 * Bytes that are no instruction end the walk (what follows may be data).
 *
 * Returns how many (instruction, register) writes break the rule, and fills the first
 * min(that, `max`) of `out` in address order (call again with more room for the rest; out
 * may be NULL when max is 0);
 * -EINVAL: `code` NULL with len > 0, or `out` NULL with max > 0;
 * -ENOTSUP: the decoder cannot say what an instruction writes on `arch`: only x86-64 and
 * AArch64 are checked (Capstone 4.0 gives no register access for s390x; ppc64, RISC-V and
 * unknown architectures have no decoder);
 * -ENOMEM: the decoder could not be set up.
 * `len` 0 answers 0 where the check is supported, so a caller can ask before reading code. */
JITMAP_API int jitmap_arch_callee_saved_writes(jitmap_arch arch, const uint8_t *code, size_t len,
					       uint64_t address, jitmap_callee_saved_write *out,
					       size_t max);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_ARCH_H */
