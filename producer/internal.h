/* internal.h: what libjitmap-producer's files share, and what its unit tests see beyond the
 * public API. Nothing here is the reader's: the producer knows the stackmap format as its
 * writer (smbuild.c) and GDB's JIT interface as common/gdb_jit.h states it. */
#ifndef JITMAP_PRODUCER_INTERNAL_H
#define JITMAP_PRODUCER_INTERNAL_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "jitmap/producer.h"

/* The host's ELF machine (<elf.h>'s EM_ numbers; EM_NONE, 0, where not known here). */
#if defined(__x86_64__)
#define HOST_MACHINE 62 /* EM_X86_64 */
#elif defined(__aarch64__)
#define HOST_MACHINE 183 /* EM_AARCH64 */
#elif defined(__powerpc64__)
#define HOST_MACHINE 21 /* EM_PPC64 */
#elif defined(__s390x__)
#define HOST_MACHINE 22 /* EM_S390 */
#elif defined(__riscv) && __riscv_xlen == 64
#define HOST_MACHINE 243 /* EM_RISCV */
#else
#define HOST_MACHINE 0 /* EM_NONE */
#endif

/* Tell perf about a region just registered (perf.c): a perf map line and a jitdump code load
 * per function, when jitmap_perf_open asked for them. Called with the registration lock held;
 * takes perf.c's own (so the lock order is always registration, then perf). */
void jitmap_producer__perf_register(const jitmap_jit_region *r);

/* Fill `err` (may be NULL) and return `code`: the convention of jitmap.h. */
int jitmap_producer__fail(jitmap_error *err, int code, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static inline uint64_t jitmap_producer__align8(uint64_t x)
{
	return (x + 7) & ~(uint64_t)7;
}

/* What the producer checks of a stackmap a JIT hands it, with the writer's knowledge of the
 * layout: the header, and for version 3 that the function table, the constant pool and the
 * records fit the section (each record's size as smbuild.c writes it); each function and each
 * record PC is passed to `fn` / `rec` (PC = function address + instruction offset) with its
 * byte offset, which may refuse with an error. Versions 1 and 2 are checked for their header
 * only. 0 or a negative errno with `err` filled. */
struct jitmap_producer__sm_visit {
	int (*function)(void *ctx, uint32_t index, uint64_t address, uint64_t at, jitmap_error *err);
	int (*record)(void *ctx, uint32_t index, uint64_t id, uint64_t pc, uint64_t at,
		      jitmap_error *err);
	void *ctx;
};
int jitmap_producer__check_stackmap(const uint8_t *p, size_t len, jitmap_byte_order order,
				    const struct jitmap_producer__sm_visit *v, jitmap_error *err);

/* Called (when set) right after each `__jit_debug_register_code` call, with the registration
 * lock held and the descriptor as the debugger sees it at its breakpoint. Tests use it to check
 * action_flag, relevant_entry and the list at every notice, which a debugger would otherwise
 * be needed for. Not exported from the shared library. */
extern void (*jitmap__jit_observer)(void);

#endif /* JITMAP_PRODUCER_INTERNAL_H */
