/* arch.c: the calls over the architecture tables (arch/<arch>.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "jitmap/unwind.h"

static const struct jitmap__arch *const tables[JITMAP__NUM_ARCHES] = {
	[JITMAP_ARCH_X86_64] = &jitmap__x86_64,   [JITMAP_ARCH_AARCH64] = &jitmap__aarch64,
	[JITMAP_ARCH_PPC64] = &jitmap__ppc64,     [JITMAP_ARCH_S390X] = &jitmap__s390x,
	[JITMAP_ARCH_RISCV64] = &jitmap__riscv64,
};
#define NUM_TABLES (sizeof(tables) / sizeof(tables[0]))

const struct jitmap__arch *jitmap__arch(jitmap_arch arch)
{
	return (unsigned)arch < NUM_TABLES ? tables[arch] : NULL;
}

/* Fill every numbered name once at load time, so that later calls only read the table and
 * jitmap_reg_name is safe to call from several threads. */
__attribute__((constructor)) static void fill_numbered_names(void)
{
	for (size_t a = 0; a < NUM_TABLES; a++)
		for (unsigned r = 0; tables[a] && r < JITMAP_MAX_REGNO; r++)
			(void)tables[a]->reg_name(r);
}

/* -- Architectures -- */

int jitmap_unwind_arch_regs(jitmap_arch arch, unsigned *sp, unsigned *fp, unsigned *ra)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	if (!a)
		return -ENOTSUP;
	if (sp)
		*sp = (unsigned)a->sp;
	if (fp)
		*fp = (unsigned)a->fp;
	if (ra)
		*ra = (unsigned)a->ra;
	return 0;
}

bool jitmap_unwind_callee_saved(jitmap_arch arch, unsigned dwarf_reg)
{
	return jitmap_reg_is_callee_saved(arch, dwarf_reg);
}

const char *jitmap_arch_name(jitmap_arch arch)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	return a ? a->name : "unknown";
}

jitmap_arch jitmap_arch_from_elf_machine(unsigned m)
{
	for (size_t a = 0; a < NUM_TABLES; a++)
		if (tables[a] && tables[a]->elf_machine == m)
			return tables[a]->id;
	return JITMAP_ARCH_UNKNOWN;
}

static jitmap_arch by_name(const char *name, size_t len)
{
	for (size_t a = 0; a < NUM_TABLES; a++) {
		if (!tables[a])
			continue;
		if (strlen(tables[a]->name) == len && !strncmp(tables[a]->name, name, len))
			return tables[a]->id;
		for (const char *const *n = tables[a]->aliases; n && *n; n++)
			if (strlen(*n) == len && !strncmp(*n, name, len))
				return tables[a]->id;
	}
	return JITMAP_ARCH_UNKNOWN;
}

jitmap_arch jitmap_arch_from_name(const char *name)
{
	if (!name)
		return JITMAP_ARCH_UNKNOWN;
	const jitmap_arch whole = by_name(name, strlen(name));
	if (whole != JITMAP_ARCH_UNKNOWN)
		return whole;
	const char *dash = strchr(name, '-'); /* a triple: its first component */
	return dash ? by_name(name, (size_t)(dash - name)) : JITMAP_ARCH_UNKNOWN;
}

unsigned jitmap_arch_pointer_size(jitmap_arch arch)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	return a ? a->pointer_size : 0;
}

unsigned jitmap_arch_num_core_regs(jitmap_arch arch)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	return a ? a->num_core_regs : 0;
}

bool jitmap_arch_ra_in_register(jitmap_arch arch)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	return a && a->ra_in_register;
}

/* -- Registers -- */

const char *jitmap_reg_name(jitmap_arch arch, unsigned regno)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	return a && regno < JITMAP_MAX_REGNO ? a->reg_name(regno) : NULL;
}

int jitmap_reg_sp(jitmap_arch arch)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	return a ? a->sp : -1;
}

int jitmap_reg_fp(jitmap_arch arch)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	return a ? a->fp : -1;
}

int jitmap_reg_ra(jitmap_arch arch)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	return a ? a->ra : -1;
}

int jitmap_reg_pc(jitmap_arch arch)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	return a ? a->pc : -1;
}

jitmap_arch jitmap_arch_host(jitmap_byte_order *order)
{
	if (order)
		*order = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? JITMAP_ORDER_BIG
								: JITMAP_ORDER_LITTLE;
#if defined(__x86_64__)
	return JITMAP_ARCH_X86_64;
#elif defined(__aarch64__)
	return JITMAP_ARCH_AARCH64;
#elif defined(__s390x__)
	return JITMAP_ARCH_S390X;
#elif defined(__powerpc64__)
	return JITMAP_ARCH_PPC64;
#elif defined(__riscv) && __riscv_xlen == 64
	return JITMAP_ARCH_RISCV64;
#else
	return JITMAP_ARCH_UNKNOWN;
#endif
}

/* Callee-saved per the standard ELF ABIs (SysV x86-64, AAPCS64, ELFv2, s390x ELF, RISC-V
 * LP64D). The stack pointer counts: an unwinder always recovers it. */
bool jitmap_reg_is_callee_saved(jitmap_arch arch, unsigned regno)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	return a && a->callee_saved(regno);
}

/* -- Frames -- */

int jitmap_arch_stackmap_cfa(jitmap_arch arch, uint64_t sp, uint64_t stack_size, uint64_t *cfa,
			     uint64_t *ra_addr)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	if (!a || !a->ra_slot)
		return -ENOTSUP;
	const uint64_t c = sp + stack_size + a->ra_slot;
	if (c < sp || stack_size > UINT64_MAX - a->ra_slot)
		return -EOVERFLOW;
	*cfa = c;
	*ra_addr = c - a->ra_slot;
	return 0;
}

int jitmap_arch_stackmap_caller_sp(jitmap_arch arch, uint64_t sp, uint64_t stack_size,
				   uint64_t *caller_sp)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	if (!a || !a->stackmap_rule)
		return -ENOTSUP;
	if (stack_size > UINT64_MAX - a->ra_slot || sp > UINT64_MAX - stack_size - a->ra_slot)
		return -EOVERFLOW;
	*caller_sp = sp + stack_size + a->ra_slot;
	return 0;
}

int jitmap_arch_frame_record(jitmap_arch arch, int *saved_fp_at, int *ra_at, int *cfa_at)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	if (!a || !a->has_frame_record)
		return -ENOTSUP;
	if (saved_fp_at)
		*saved_fp_at = a->saved_fp_at;
	if (ra_at)
		*ra_at = a->ra_at;
	if (cfa_at)
		*cfa_at = a->cfa_at;
	return 0;
}

bool jitmap_arch_call_before(jitmap_arch arch, const uint8_t *bytes, size_t n)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	return a && a->call_before && bytes && a->call_before(bytes, n);
}

size_t jitmap_arch_call_window(jitmap_arch arch)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	return a ? a->call_window : 0;
}
