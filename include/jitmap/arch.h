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

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_ARCH_H */
