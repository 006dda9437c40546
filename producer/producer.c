/* producer.c: register JIT code with debuggers through the GDB JIT interface.
 *
 * The protocol (gdb-jit-interface.md §1, GDB manual "JIT Interface"): the debugger breaks in
 * `__jit_debug_register_code` and reads `__jit_debug_descriptor` there: action_flag says what
 * happened to relevant_entry, and first_entry is a doubly linked list of in-memory object
 * files. On attach and on core load it walks the list without any notice, so the list must be
 * well-formed at every instant a thread can stop: every change happens under one lock, and an
 * entry is freed only after the debugger has been told it is gone. This follows LuaJIT's
 * src/lj_gdbjit.c.
 *
 * The object file we register is what both GDB's built-in reader (BFD, which takes section
 * sh_addr as absolute addresses) and LLDB's JITLoaderGDB (which places ELF sections at
 * sh_addr) load: a relocatable ELF64 like LLVM's registered copies, with `.text` as
 * SHT_NOBITS at the code (LuaJIT's trick: the debugger reads code from the process, so no copy
 * is needed), section-relative STT_FUNC symbols, and `.llvm_stackmaps`/`.eh_frame` copies whose
 * sh_addr is the live bytes' address, as in LLVM's copies. Nothing needs relocating: the
 * stackmap already holds absolute addresses.
 */
#include <elf.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include "../common/gdb_jit.h"
#include "../common/deopt_layout.h"
#include "internal.h"

/* -- The GDB JIT interface -- */

/* Layouts fixed by GDB (gdb/jit.h), read by the debugger from our memory: common/gdb_jit.h. */
#define JIT_NOACTION JITMAP__JIT_NOACTION
#define JIT_REGISTER_FN JITMAP__JIT_REGISTER
#define JIT_UNREGISTER_FN JITMAP__JIT_UNREGISTER
#define jit_code_entry jitmap__jit_code_entry
typedef uint32_t jit_actions_t;

/* Default visibility: GDB and LLDB find both by name, and a process that also contains
 * another JIT interface (libLLVM) must bind to a single descriptor. */
JITMAP_API struct jitmap__jit_descriptor __jit_debug_descriptor = {JITMAP__JIT_VERSION,
								    JIT_NOACTION, NULL, NULL};

JITMAP_API void __jit_debug_register_code(void);

/* The debugger's breakpoint goes here. noinline and the empty asm keep the compiler from
 * inlining, merging or dropping the call (GDB manual: "the debugger places a breakpoint"). */
JITMAP_API __attribute__((noinline)) void __jit_debug_register_code(void)
{
	__asm__ volatile("" ::: "memory");
}

static pthread_mutex_t jit_lock = PTHREAD_MUTEX_INITIALIZER;

void (*jitmap__jit_observer)(void);

struct jitmap_jit_entry {
	struct jit_code_entry code; /* what the debugger reads */
	void *image;
	size_t image_size;
};

/* Tell the debugger about `e` with `action`, then put the descriptor back at rest. Called
 * with jit_lock held. */
static void notify(struct jit_code_entry *e, jit_actions_t action)
{
	__jit_debug_descriptor.relevant_entry = e;
	__jit_debug_descriptor.action_flag = action;
	__jit_debug_register_code();
	if (jitmap__jit_observer)
		jitmap__jit_observer();
	/* At rest the descriptor names nothing, so an unregistered (freed) entry is never
	 * reachable from it. Debuggers read these fields only inside the hook. */
	__jit_debug_descriptor.relevant_entry = NULL;
	__jit_debug_descriptor.action_flag = JIT_NOACTION;
}

/* -- The ELF image -- */

#define HOST_ORDER (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE)

/* The largest power of two up to `max` that divides `addr`: sh_addralign must divide sh_addr. */
static uint64_t align_of(uint64_t addr, uint64_t max)
{
	uint64_t a = 1;
	while (a < max && !(addr & a))
		a <<= 1;
	return a;
}

static int cmp_by_address(const void *a, const void *b)
{
	const jitmap_jit_function *x = *(const jitmap_jit_function *const *)a;
	const jitmap_jit_function *y = *(const jitmap_jit_function *const *)b;
	if (x->address != y->address)
		return x->address < y->address ? -1 : 1;
	return (x > y) - (x < y); /* ties in argument order, for a predictable message */
}

static int check_functions(const jitmap_jit_region *r, jitmap_error *err)
{
	if (r->size == 0)
		return jitmap_producer__fail(err, -EINVAL, 0, "the region is empty (size 0)");
	if (r->address + r->size < r->address)
		return jitmap_producer__fail(err, -EINVAL, 0, "the region wraps around the address space");
	if (r->num_functions == 0 || !r->functions)
		return jitmap_producer__fail(err, -EINVAL, 0, "the region has no functions");
	const uint64_t end = r->address + r->size;
	for (size_t i = 0; i < r->num_functions; i++) {
		const jitmap_jit_function *f = &r->functions[i];
		if (!f->name || !*f->name)
			return jitmap_producer__fail(err, -EINVAL, i, "function %zu has no name", i);
		if (f->size == 0)
			return jitmap_producer__fail(err, -EINVAL, i, "function %zu (%s) is empty (size 0)", i,
					    f->name);
		if (f->address < r->address || f->address >= end || f->size > end - f->address)
			return jitmap_producer__fail(err, -EINVAL, i,
					    "function %zu (%s) at 0x%" PRIx64 "+%" PRIu64
					    " is not inside the region 0x%" PRIx64 "+%" PRIu64,
					    i, f->name, f->address, f->size, r->address, r->size);
	}
	/* Sort pointers, not the caller's array, and compare neighbours: O(n log n). */
	const jitmap_jit_function **by = malloc(r->num_functions * sizeof(*by));
	if (!by)
		return jitmap_producer__fail(err, -ENOMEM, 0, "out of memory");
	for (size_t i = 0; i < r->num_functions; i++)
		by[i] = &r->functions[i];
	qsort(by, r->num_functions, sizeof(*by), cmp_by_address);
	int rc = 0;
	for (size_t i = 1; i < r->num_functions && !rc; i++)
		if (by[i]->address < by[i - 1]->address + by[i - 1]->size) {
			const size_t at = (size_t)(by[i] - r->functions);
			rc = jitmap_producer__fail(err, -EINVAL, at, "function %zu (%s) overlaps function %zu (%s)",
					  at, by[i]->name, (size_t)(by[i - 1] - r->functions),
					  by[i - 1]->name);
		}
	free(by);
	return rc;
}

static int function_inside(void *ctx, uint32_t i, uint64_t address, uint64_t at,
			   jitmap_error *err)
{
	const jitmap_jit_region *r = ctx;
	if (address < r->address || address >= r->address + r->size)
		return jitmap_producer__fail(err, -EINVAL, at,
					     "stackmap function %" PRIu32 " at 0x%" PRIx64
					     " is not inside the region 0x%" PRIx64 "+%" PRIu64,
					     i, address, r->address, r->size);
	return 0;
}

/* A record at a call's return address may sit at the very end of the code. */
static int record_inside(void *ctx, uint32_t i, uint64_t id, uint64_t pc, uint64_t at,
			 jitmap_error *err)
{
	const jitmap_jit_region *r = ctx;
	if (pc < r->address || pc > r->address + r->size)
		return jitmap_producer__fail(err, -EINVAL, at,
					     "stackmap record %" PRIu32 " (ID %" PRIu64 ") at 0x%" PRIx64
					     " is not inside the region 0x%" PRIx64 "+%" PRIu64,
					     i, id, pc, r->address, r->size);
	return 0;
}

/* The producer does not link the reader: it checks what it needs to place the section, with
 * the writer's knowledge of the layout (smbuild.c); the reader validates every byte when it
 * reads the image (its tests read every image this file builds). */
static int check_stackmap(const jitmap_jit_region *r, jitmap_error *err)
{
	if (!r->stackmap)
		return r->stackmap_size ? jitmap_producer__fail(err, -EINVAL, 0,
								"stackmap size given without the "
								"stackmap")
					: 0;
	const struct jitmap_producer__sm_visit v = {function_inside, record_inside, (void *)r};
	int rc = jitmap_producer__check_stackmap(r->stackmap, r->stackmap_size, HOST_ORDER, &v,
						 err);
	if (rc && err && strncmp(err->reason, "stackmap ", 9)) {
		/* say which input the words are about */
		static const char pre[] = "stackmap: ";
		const size_t room = sizeof(err->reason) - sizeof(pre); /* keeps the NUL */
		size_t n = strnlen(err->reason, sizeof(err->reason) - 1);
		n = n < room ? n : room;
		memmove(err->reason + sizeof(pre) - 1, err->reason, n);
		memcpy(err->reason, pre, sizeof(pre) - 1);
		err->reason[sizeof(pre) - 1 + n] = '\0';
	}
	return rc;
}

/* Section indexes, in file order; absent optional sections get none. */
enum { S_NULL, S_TEXT, S_EH_FRAME, S_STACKMAPS, S_DEOPT, S_SYMTAB, S_STRTAB, S_SHSTRTAB, S_MAX };

/* Record IDs of the region's stackmap, sorted, for checking layouts against them. */
struct ids {
	uint64_t *v;
	size_t n, cap;
};

static int collect_id(void *ctx, uint32_t i, uint64_t id, uint64_t pc, uint64_t at,
		      jitmap_error *err)
{
	struct ids *ids = ctx;
	(void)i, (void)pc, (void)at;
	if (ids->n == ids->cap) {
		const size_t cap = ids->cap ? ids->cap * 2 : 64;
		uint64_t *v = realloc(ids->v, cap * sizeof(*v));
		if (!v)
			return jitmap_producer__fail(err, -ENOMEM, 0, "out of memory");
		ids->v = v;
		ids->cap = cap;
	}
	ids->v[ids->n++] = id;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Each layout names a record of the stackmap and, when it names a function, one of the
 * region's: a layout for nothing is a mistake the JIT wants to hear of now. */
static int check_layout_targets(const jitmap_jit_region *r, const jitmap_jit_region_opts *o,
				jitmap_error *err)
{
	if (!o->num_layouts)
		return 0;
	if (!r->stackmap)
		return jitmap_producer__fail(err, -EINVAL, 0,
					     "deopt layouts given for a region without a stackmap");
	struct ids ids = {0};
	const struct jitmap_producer__sm_visit v = {NULL, collect_id, &ids};
	int rc = jitmap_producer__check_stackmap(r->stackmap, r->stackmap_size, HOST_ORDER, &v,
						 err);
	if (!rc && ids.n)
		qsort(ids.v, ids.n, sizeof(*ids.v), cmp_u64);
	/* Records are visited in version 3 only (the builder's); older ones are not checked. */
	const bool v3 = r->stackmap_size && ((const uint8_t *)r->stackmap)[0] == 3;
	for (size_t i = 0; !rc && i < o->num_layouts; i++) {
		const jitmap_deopt_layout *d = &o->layouts[i];
		if (v3 && (!ids.n || !bsearch(&d->record_id, ids.v, ids.n, sizeof(*ids.v), cmp_u64))) {
			rc = jitmap_producer__fail(err, -EINVAL, i,
						   "layout %zu: record %" PRIu64
						   " is not in the region's stackmap",
						   i, d->record_id);
			break;
		}
		if (!d->function)
			continue;
		size_t k = 0;
		while (k < r->num_functions && strcmp(r->functions[k].name, d->function))
			k++;
		if (k == r->num_functions)
			rc = jitmap_producer__fail(err, -EINVAL, i,
						   "layout %zu: function %s is not one of the region's",
						   i, d->function);
	}
	free(ids.v);
	return rc;
}

int jitmap_jit_build_image(const jitmap_jit_region *r, void **image, size_t *size,
			   jitmap_error *err)
{
	return jitmap_jit_build_image_opts(r, NULL, image, size, err);
}

int jitmap_jit_build_image_opts(const jitmap_jit_region *r, const jitmap_jit_region_opts *opts,
				void **image, size_t *size, jitmap_error *err)
{
	static const jitmap_jit_region_opts none = {.sz = sizeof(none)};
	jitmap_jit_region_opts o = none;
	void *deopt = NULL;
	size_t deopt_len = 0;
	if (err)
		memset(err, 0, sizeof(*err));
	if (opts) {
		if (opts->sz < offsetof(jitmap_jit_region_opts, layouts))
			return jitmap_producer__fail(err, -EINVAL, 0, "options: sz %zu is too small",
						     opts->sz);
		/* A caller built against a later header: fields this library does not know
		 * must be zero, from the end of the last field it knows (libjitmap's
		 * JITMAP__OPTS_VALID; this struct has no tail padding today). A field added
		 * to jitmap_jit_region_opts: name it here. */
		for (size_t i = offsetof(jitmap_jit_region_opts, num_layouts) + sizeof(o.num_layouts);
		     i < opts->sz; i++)
			if (((const uint8_t *)opts)[i])
				return jitmap_producer__fail(err, -EINVAL, 0,
							     "options: unknown field at byte %zu", i);
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	}
	if (HOST_MACHINE == EM_NONE)
		return jitmap_producer__fail(err, -ENOTSUP, 0, "no ELF machine number for this host");
	if (!r)
		return jitmap_producer__fail(err, -EINVAL, 0, "no region given");
	int rc = check_functions(r, err);
	if (rc)
		return rc;
	rc = check_stackmap(r, err);
	if (rc)
		return rc;
	if (!r->eh_frame && r->eh_frame_size)
		return jitmap_producer__fail(err, -EINVAL, 0, ".eh_frame size given without .eh_frame");
	rc = check_layout_targets(r, &o, err);
	if (!rc && o.num_layouts)
		rc = jitmap_jit_encode_layouts(o.layouts, o.num_layouts, HOST_ORDER, &deopt,
					       &deopt_len, err);
	if (rc)
		return rc;

	/* Which sections exist, and their indexes. */
	int idx[S_MAX];
	int nsec = 0;
	for (int s = 0; s < S_MAX; s++) {
		const int absent = (s == S_EH_FRAME && !r->eh_frame) ||
				   (s == S_STACKMAPS && !r->stackmap) || (s == S_DEOPT && !deopt);
		idx[s] = absent ? -1 : nsec++;
	}
	static const char shstr[] = "\0.text\0.eh_frame\0.llvm_stackmaps\0" JITMAP__DL_SECTION
				    "\0.symtab\0.strtab\0.shstrtab";
	enum { DL_LEN = sizeof(JITMAP__DL_SECTION) };
	const uint32_t shname[S_MAX] = {0, 1, 7, 17, 33, 33 + DL_LEN, 41 + DL_LEN, 49 + DL_LEN};

	/* Layout: header, contents (8-aligned), section headers. 64-bit sums of sizes of
	 * objects in memory cannot wrap. */
	uint64_t strtab_size = 1;
	for (size_t i = 0; i < r->num_functions; i++)
		strtab_size += strlen(r->functions[i].name) + 1;
	const uint64_t nsym = 1 + (uint64_t)r->num_functions;
	uint64_t off = sizeof(Elf64_Ehdr);
	uint64_t at[S_MAX] = {0}, len[S_MAX] = {0};
	len[S_EH_FRAME] = r->eh_frame_size;
	len[S_STACKMAPS] = r->stackmap_size;
	len[S_DEOPT] = deopt_len;
	len[S_SYMTAB] = nsym * sizeof(Elf64_Sym);
	len[S_STRTAB] = strtab_size;
	len[S_SHSTRTAB] = sizeof(shstr);
	at[S_TEXT] = off; /* NOBITS: occupies nothing */
	for (int s = S_EH_FRAME; s < S_MAX; s++) {
		if (idx[s] < 0)
			continue;
		off = jitmap_producer__align8(off);
		at[s] = off;
		off += len[s];
	}
	off = jitmap_producer__align8(off);
	const uint64_t shoff = off;
	const uint64_t total = shoff + (uint64_t)nsec * sizeof(Elf64_Shdr);
	uint8_t *img = total > SIZE_MAX ? NULL : calloc(1, (size_t)total);
	if (!img) {
		free(deopt);
		return jitmap_producer__fail(err, -ENOMEM, 0, "out of memory");
	}

	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = HOST_ORDER == JITMAP_ORDER_BIG ? ELFDATA2MSB : ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh->e_type = ET_REL;
	eh->e_machine = HOST_MACHINE;
	eh->e_version = EV_CURRENT;
#if defined(__powerpc64__) && defined(_CALL_ELF)
	eh->e_flags = _CALL_ELF; /* ELFv1 / ELFv2 */
#endif
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	eh->e_shoff = shoff;
	eh->e_shentsize = sizeof(Elf64_Shdr);
	eh->e_shnum = (Elf64_Half)nsec;
	eh->e_shstrndx = (Elf64_Half)idx[S_SHSTRTAB];

	if (r->eh_frame_size)
		memcpy(img + at[S_EH_FRAME], r->eh_frame, r->eh_frame_size);
	if (r->stackmap_size)
		memcpy(img + at[S_STACKMAPS], r->stackmap, r->stackmap_size);
	if (deopt_len)
		memcpy(img + at[S_DEOPT], deopt, deopt_len);
	free(deopt);
	memcpy(img + at[S_SHSTRTAB], shstr, sizeof(shstr));

	/* Symbols: the null symbol, then one global function each, valued relative to .text
	 * (ET_REL), so that symbol + sh_addr of .text is the runtime address. */
	Elf64_Sym *sym = (Elf64_Sym *)(img + at[S_SYMTAB]);
	char *str = (char *)img + at[S_STRTAB];
	uint64_t stroff = 1;
	for (size_t i = 0; i < r->num_functions; i++) {
		const jitmap_jit_function *f = &r->functions[i];
		const size_t n = strlen(f->name) + 1;
		memcpy(str + stroff, f->name, n);
		sym[1 + i] = (Elf64_Sym){
			.st_name = (Elf64_Word)stroff,
			.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			.st_other = STV_DEFAULT,
			.st_shndx = (Elf64_Section)idx[S_TEXT],
			.st_value = f->address - r->address,
			.st_size = f->size,
		};
		stroff += n;
	}

	Elf64_Shdr *sh = (Elf64_Shdr *)(img + shoff);
	for (int s = S_TEXT; s < S_MAX; s++) {
		if (idx[s] < 0)
			continue;
		Elf64_Shdr *h = &sh[idx[s]];
		h->sh_name = shname[s];
		h->sh_offset = at[s];
		h->sh_size = len[s];
		h->sh_addralign = 1;
		switch (s) {
		case S_TEXT:
			h->sh_type = SHT_NOBITS;
			h->sh_flags = SHF_ALLOC | SHF_EXECINSTR;
			h->sh_addr = r->address;
			h->sh_size = r->size;
			h->sh_addralign = align_of(r->address, 16);
			break;
		case S_EH_FRAME:
		case S_STACKMAPS: {
			const uint64_t addr = (uintptr_t)(s == S_EH_FRAME ? r->eh_frame : r->stackmap);
			h->sh_type = SHT_PROGBITS;
			h->sh_flags = SHF_ALLOC;
			h->sh_addr = addr;
			h->sh_addralign = align_of(addr, 8);
			break;
		}
		case S_DEOPT: /* the image's own bytes, not placed: they travel with it */
			h->sh_type = SHT_PROGBITS;
			h->sh_addralign = 8;
			break;
		case S_SYMTAB:
			h->sh_type = SHT_SYMTAB;
			h->sh_link = (Elf64_Word)idx[S_STRTAB];
			h->sh_info = 1; /* index of the first non-local symbol */
			h->sh_entsize = sizeof(Elf64_Sym);
			h->sh_addralign = 8;
			break;
		default: /* the string tables */
			h->sh_type = SHT_STRTAB;
			break;
		}
	}
	*image = img;
	*size = (size_t)total;
	return 0;
}

/* -- Registering -- */

jitmap_jit_entry *jitmap_jit_register(const jitmap_jit_region *region, jitmap_error *err)
{
	return jitmap_jit_register_opts(region, NULL, err);
}

jitmap_jit_entry *jitmap_jit_register_opts(const jitmap_jit_region *region,
					   const jitmap_jit_region_opts *opts, jitmap_error *err)
{
	jitmap_jit_entry *e = calloc(1, sizeof(*e));
	if (!e) {
		if (err)
			memset(err, 0, sizeof(*err));
		jitmap_producer__fail(err, -ENOMEM, 0, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	/* Everything that can fail happens before the lock: the list is never half-changed. */
	int rc = jitmap_jit_build_image_opts(region, opts, &e->image, &e->image_size, err);
	if (rc) {
		free(e);
		errno = -rc;
		return NULL;
	}
	e->code.symfile_addr = e->image;
	e->code.symfile_size = e->image_size;

	pthread_mutex_lock(&jit_lock);
	struct jit_code_entry *first = __jit_debug_descriptor.first_entry;
	e->code.prev_entry = NULL;
	e->code.next_entry = first;
	if (first)
		first->prev_entry = &e->code;
	__jit_debug_descriptor.first_entry = &e->code;
	notify(&e->code, JIT_REGISTER_FN);
	jitmap_producer__perf_register(region);
	pthread_mutex_unlock(&jit_lock);
	return e;
}

void jitmap_jit_unregister(jitmap_jit_entry *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&jit_lock);
	struct jit_code_entry *c = &e->code;
	if (c->prev_entry)
		c->prev_entry->next_entry = c->next_entry;
	else
		__jit_debug_descriptor.first_entry = c->next_entry;
	if (c->next_entry)
		c->next_entry->prev_entry = c->prev_entry;
	notify(c, JIT_UNREGISTER_FN);
	pthread_mutex_unlock(&jit_lock);
	/* The debugger has dropped the entry: now it may go. */
	free(e->image);
	free(e);
}

const void *jitmap_jit_entry_image(const jitmap_jit_entry *e, size_t *size)
{
	if (size)
		*size = e->image_size;
	return e->image;
}
