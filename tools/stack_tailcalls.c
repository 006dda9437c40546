/* stack_tailcalls.c: jitmap-stack's tail-call frames, GDB's frames rebuilt from DWARF
 * call-site information.
 *
 * GDB counts a function that tail-called the frame below it as a frame ("tail call frame" in
 * `info frame`), when the caller's DWARF says which function its call at the return address
 * went to and a chain of tail calls leads from there to the frame below (in an abort() core:
 * raise -> __pthread_kill_internal, which tail-calls __pthread_kill_implementation). So that
 * frame numbers agree with GDB's, the same chain is rebuilt here: only a unique one, from the
 * call sites' DW_AT_call_origin (DW_AT_abstract_origin for GNU call sites) and the
 * DW_AT_call_tail_call (DW_AT_GNU_tail_call) flag, within the caller's module. */

#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "stack_tool.h"

#define MAX_SITE_DIES 20000  /* DIEs looked at for one function's call sites */

/* A call site's return address (module-relative), and whether it is a tail call. */
static bool site_return(Dwarf_Die *site, Dwarf_Addr *ret, bool *tail)
{
	Dwarf_Attribute a;
	const bool gnu = dwarf_tag(site) == DW_TAG_GNU_call_site;
	if (!dwarf_attr(site, gnu ? DW_AT_low_pc : DW_AT_call_return_pc, &a) ||
	    dwarf_formaddr(&a, ret) != 0)
		return false;
	*tail = dwarf_hasattr(site, gnu ? DW_AT_GNU_tail_call : DW_AT_call_tail_call);
	return true;
}

/* The function a call site calls, as a DIE (a declaration, maybe). */
static bool site_target(Dwarf_Die *site, Dwarf_Die *target)
{
	Dwarf_Attribute a;
	const bool gnu = dwarf_tag(site) == DW_TAG_GNU_call_site;
	return dwarf_attr(site, gnu ? DW_AT_abstract_origin : DW_AT_call_origin, &a) &&
	       dwarf_formref_die(&a, target) != NULL;
}

/* The address a function DIE's code starts at in the process: its own low_pc, else the
 * symbol of its (linkage) name in the module. 0 when unknown. */
/* A function symbol `name` defined in module `m` (a versioned one, name@VERSION, too). */
static uint64_t module_function(Dwfl_Module *m, const char *name)
{
	const size_t len = strlen(name);
	const int n = dwfl_module_getsymtab(m);
	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *s = dwfl_module_getsym_info(m, i, &sym, &addr, NULL, NULL, NULL);
		if (s && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF &&
		    !strncmp(s, name, len) && (!s[len] || s[len] == '@'))
			return addr;
	}
	return 0;
}

/* The address a function DIE's code starts at in the process: its own low_pc, else the
 * symbol of its (linkage) name, in module `m` or, for a declaration of a function another
 * module defines (main's call to pthread_join, defined in libc), in module `also`, the one
 * the chain must reach. 0 when unknown. */
static uint64_t die_entry(Dwfl_Module *m, Dwfl_Module *also, Dwarf_Addr bias, Dwarf_Die *die)
{
	Dwarf_Addr lo;
	if (dwarf_entrypc(die, &lo) == 0 || dwarf_lowpc(die, &lo) == 0)
		return lo + bias;
	Dwarf_Attribute a;
	const char *name = NULL;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a))
		name = dwarf_formstring(&a);
	if (!name)
		name = dwarf_diename(die);
	if (!name)
		return 0;
	const uint64_t addr = module_function(m, name);
	return addr || !also || also == m ? addr : module_function(also, name);
}

/* Depth first over `die`'s descendants, at most *budget of them: the call site whose return
 * address is `ret` (ret != 0), or each tail call site (ret == 0, `fn` called on each). */
static bool find_site(Dwarf_Die *die, Dwarf_Addr ret, Dwarf_Die *out, unsigned *budget)
{
	Dwarf_Die child;
	if (dwarf_child(die, &child) != 0)
		return false;
	do {
		if (!(*budget)--)
			return false;
		const int tag = dwarf_tag(&child);
		Dwarf_Addr r;
		bool tail;
		if ((tag == DW_TAG_call_site || tag == DW_TAG_GNU_call_site) &&
		    site_return(&child, &r, &tail) && (ret ? r == ret : tail)) {
			*out = child;
			return true;
		}
		if (tag != DW_TAG_subprogram && find_site(&child, ret, out, budget))
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* The concrete DIE of the function whose code holds `pc` in module `m`: a subprogram of its
 * compile unit that holds the PC (dwarf_getscopes gives an inlined subroutine's abstract
 * scopes, not the function it was inlined into). */
static bool function_die(Dwfl_Module *m, uint64_t pc, Dwarf_Die *out, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(m, pc, bias);
	Dwarf_Die child;
	if (!cu || dwarf_child(cu, &child) != 0)
		return false;
	do {
		if (dwarf_tag(&child) == DW_TAG_subprogram && dwarf_haspc(&child, pc - *bias) == 1) {
			*out = child;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* The name GDB gives a frame at `pc`: the innermost function there, an inlined one too. */
static const char *innermost_name(Dwfl_Module *m, uint64_t pc)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(m, pc, &bias);
	Dwarf_Die *scopes = NULL;
	const int k = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
	const char *name = NULL;
	for (int i = 0; i < k && !name; i++) {
		const int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram)
			name = stack_inlined_name(&scopes[i]);
	}
	free(scopes);
	return name;
}

/* The chain of tail calls from the caller at return address `ret` to the function starting
 * at `callee`, outermost first, in `out`; how many (0: none, or none GDB would show). */
static unsigned tail_calls(struct target *t, uint64_t ret, uint64_t callee,
			   struct tail_frame out[MAX_TAIL_CALLS])
{
	Dwfl_Module *m = dwfl_addrmodule(t->dwfl, ret - 1);
	Dwarf_Addr bias;
	Dwarf_Die caller, site, target;
	if (!m || !function_die(m, ret - 1, &caller, &bias))
		return 0;
	unsigned budget = MAX_SITE_DIES;
	if (!find_site(&caller, ret - bias, &site, &budget) || !site_target(&site, &target))
		return 0;
	Dwfl_Module *callee_module = dwfl_addrmodule(t->dwfl, callee);
	uint64_t entry = die_entry(m, callee_module, bias, &target);
	unsigned n = 0;
	/* Follow the unique tail call of each function until the callee is reached; a function
	 * with no tail call, or a chain that does not reach it, adds nothing. Each function in
	 * the module that holds it (the caller's call may go to another library). */
	while (entry && entry != callee && n < MAX_TAIL_CALLS) {
		Dwarf_Die fn, tail_site, next;
		Dwarf_Addr fbias;
		m = dwfl_addrmodule(t->dwfl, entry);
		if (!m || !function_die(m, entry, &fn, &fbias))
			return 0;
		budget = MAX_SITE_DIES;
		Dwarf_Addr r;
		bool tail;
		if (!find_site(&fn, 0, &tail_site, &budget) || !site_return(&tail_site, &r, &tail) ||
		    !site_target(&tail_site, &next))
			return 0;
		out[n].pc = r + fbias;
		out[n].name = innermost_name(m, out[n].pc - 1);
		if (!out[n].name)
			out[n].name = dwarf_diename(&fn) ? dwarf_diename(&fn) : "??";
		n++;
		entry = die_entry(m, callee_module, fbias, &next);
	}
	return entry == callee ? n : 0;
}

/* tail_calls, each (return address, callee) asked once: the threads of a process mostly
 * wait in the same few places, and each answer reads DWARF. */
#define TAIL_SLOTS 1024

struct tail_memo {
	uint64_t ret, callee;
	unsigned n;
	bool used;
	struct tail_frame frames[MAX_TAIL_CALLS];
};

unsigned stack_tail_calls(struct target *t, uint64_t ret, uint64_t callee,
			  struct tail_frame out[MAX_TAIL_CALLS])
{
	if (!t->tails && !(t->tails = calloc(TAIL_SLOTS, sizeof(*t->tails))))
		return tail_calls(t, ret, callee, out);
	size_t h = (size_t)(((ret ^ (callee * 31)) * UINT64_C(0x9e3779b97f4a7c15)) >> 54) % TAIL_SLOTS;
	for (size_t probe = 0; probe < TAIL_SLOTS; probe++, h = (h + 1) % TAIL_SLOTS) {
		struct tail_memo *m = &t->tails[h];
		if (m->used && (m->ret != ret || m->callee != callee))
			continue;
		if (!m->used) {
			m->used = true;
			m->ret = ret;
			m->callee = callee;
			m->n = tail_calls(t, ret, callee, m->frames);
		}
		memcpy(out, m->frames, m->n * sizeof(*out));
		return m->n;
	}
	return tail_calls(t, ret, callee, out); /* full */
}
