/* elf_symbols.c: an image's function symbols (elf.c opens the image): read from its symbol
 * tables (their values section-relative in an object, or, for some hand-written JITs, the
 * addresses themselves), and where those name nothing, from its DWARF (Mono's JIT images);
 * sorted by address, and asked by address (the stackmap's functions named, a PC symbolized)
 * or by index. */
#include <dlfcn.h>
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#if __has_include(<elfutils/libdw.h>)
#include <dwarf.h> /* DW_TAG_*, DW_AT_* (elfutils' or libdwarf's: the same numbers) */
#include <elfutils/libdw.h>
#define HAVE_LIBDW 1
#endif

#include "internal.h"

static int cmp_sym(const void *a, const void *b)
{
	const struct jitmap__symbol *x = a, *y = b;
	if (x->address != y->address)
		return x->address < y->address ? -1 : 1;
	return (x->size < y->size) - (x->size > y->size); /* the larger first */
}

int jitmap__elf_symbol_address(Elf *elf, unsigned type, uint64_t value, unsigned shndx,
				uint64_t *addr)
{
	*addr = value;
	if (type != ET_REL || shndx == SHN_ABS)
		return 0;
	if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE)
		return -ENOENT;
	GElf_Shdr sh;
	Elf_Scn *scn = elf_getscn(elf, shndx);
	if (!scn || !gelf_getshdr(scn, &sh))
		return -ENOENT;
	*addr += sh.sh_addr;
	return 0;
}

/* The section of a symbol, when it has one that exists. */
static bool sym_section(Elf *elf, const GElf_Sym *s, GElf_Shdr *sh)
{
	Elf_Scn *scn = s->st_shndx != SHN_UNDEF && s->st_shndx < SHN_LORESERVE
			       ? elf_getscn(elf, s->st_shndx)
			       : NULL;
	return scn && gelf_getshdr(scn, sh);
}

/* Some hand-written JITs register ET_REL images whose function symbols hold absolute
 * addresses in st_value, not offsets in their section. The reading is unambiguous when every
 * function symbol of a placed section lies outside it read as an offset (sh_addr + st_value)
 * and inside it read as an address: then st_value is the address. */
static bool values_are_addresses(Elf *elf, Elf_Data *d, size_t n)
{
	size_t placed = 0;
	for (size_t i = 0; i < n && i <= INT32_MAX; i++) {
		GElf_Sym s;
		GElf_Shdr sh;
		if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    s.st_shndx == SHN_ABS || !sym_section(elf, &s, &sh))
			continue;
		if (!sh.sh_addr || sh.sh_addr + sh.sh_size < sh.sh_addr)
			return false;
		const uint64_t as_offset = sh.sh_addr + s.st_value;
		const bool offset_inside = as_offset >= sh.sh_addr &&
					   as_offset < sh.sh_addr + sh.sh_size;
		const bool address_inside = s.st_value >= sh.sh_addr &&
					    s.st_value < sh.sh_addr + sh.sh_size;
		if (offset_inside || !address_inside)
			return false;
		placed++;
	}
	return placed > 0;
}

bool jitmap__elf_values_are_addresses(Elf *elf, Elf_Scn *symtab)
{
	Elf_Data *d = elf_getdata(symtab, NULL);
	return d && values_are_addresses(elf, d, d->d_size / sizeof(Elf64_Sym));
}

int jitmap__elf_load_symbols(jitmap_image *img, Elf *elf, Elf_Scn *symscn)
{
	GElf_Shdr symsh;
	Elf_Data *d = gelf_getshdr(symscn, &symsh) ? elf_getdata(symscn, NULL) : NULL;
	if (!d || !symsh.sh_entsize)
		return 0;
	/* The count is bounded by the section's data, which libelf has checked against the file. */
	size_t n = d->d_size / sizeof(Elf64_Sym);
	struct jitmap__symbol *syms = realloc(img->syms, (img->num_syms + n + 1) * sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	img->syms = syms;
	const bool as_address = img->type == ET_REL && values_are_addresses(elf, d, n);
	for (size_t i = 0; i < n && i <= INT32_MAX; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s))
			continue;
		if (GELF_ST_TYPE(s.st_info) == STT_FILE && !img->file_name) {
			const char *name = elf_strptr(elf, symsh.sh_link, s.st_name);
			if (name && *name && !(img->file_name = strdup(name)))
				return -ENOMEM;
			continue;
		}
		if (GELF_ST_TYPE(s.st_info) != STT_FUNC)
			continue;
		uint64_t addr;
		GElf_Shdr sh;
		unsigned flags = 0;
		const bool in_section = sym_section(elf, &s, &sh);
		if (s.st_shndx == SHN_ABS)
			flags |= JITMAP_SYMBOL_ABSOLUTE;
		if (in_section && (sh.sh_flags & SHF_EXECINSTR))
			flags |= JITMAP_SYMBOL_IN_CODE;
		if (as_address && in_section && s.st_shndx != SHN_ABS) {
			addr = s.st_value;
			flags |= JITMAP_SYMBOL_VALUE_IS_ADDRESS;
		} else if (jitmap__elf_symbol_address(elf, img->type, s.st_value, s.st_shndx,
						      &addr)) {
			continue;
		}
		if (addr + s.st_size < addr)
			continue;
		const char *name = elf_strptr(elf, symsh.sh_link, s.st_name);
		if (!name || !*name)
			continue;
		char *copy = strdup(name);
		if (!copy)
			return -ENOMEM;
		syms[img->num_syms++] = (struct jitmap__symbol){addr, s.st_size, copy, flags};
	}
	return 0;
}

void jitmap__elf_sort_symbols(jitmap_image *img)
{
	/* Symbol tables are often in address order already (an object's functions, as emitted):
	 * one look spares the sort. syms is NULL without a symbol table (qsort wants a pointer). */
	size_t in_order = 1;
	while (in_order < img->num_syms &&
	       cmp_sym(&img->syms[in_order - 1], &img->syms[in_order]) <= 0)
		in_order++;
	if (in_order < img->num_syms)
		qsort(img->syms, img->num_syms, sizeof(*img->syms), cmp_sym);
}

static const struct jitmap__symbol *sym_at_or_before(const jitmap_image *img, uint64_t addr)
{
	const size_t lo = JITMAP_UPPER_BOUND(img->syms, img->num_syms, address, addr);
	return lo ? &img->syms[lo - 1] : NULL;
}

/* -- Asked -- */

int jitmap_image_name_functions(const jitmap_image *img, jitmap_stackmap *sm)
{
	int named = 0;
	for (size_t f = 0; f < sm->num_functions; f++) {
		const jitmap_function *fn = &sm->functions[f];
		if (fn->name && sm->sizes[f])
			continue;
		const struct jitmap__symbol *s = sym_at_or_before(img, fn->address);
		if (!s || s->address != fn->address)
			continue;
		if (!sm->sizes[f])
			sm->sizes[f] = s->size;
		if (fn->name)
			continue;
		if (jitmap_stackmap_set_function_name(sm, f, s->name))
			return -ENOMEM;
		named++;
	}
	return named;
}

const char *jitmap_image_symbolize(const jitmap_image *img, uint64_t addr, uint64_t *offset)
{
	const struct jitmap__symbol *s = sym_at_or_before(img, addr);
	/* A zero-sized symbol (hand-written assembly, some JITs) covers up to the next one. */
	if (!s || (s->size && addr - s->address >= s->size))
		return NULL;
	if (offset)
		*offset = addr - s->address;
	return s->name;
}

size_t jitmap_image_num_symbols(const jitmap_image *img) { return img->num_syms; }

int jitmap_image_symbol(const jitmap_image *img, size_t i, jitmap_image_symbol_info *out)
{
	if (i >= img->num_syms)
		return -ERANGE;
	const struct jitmap__symbol *s = &img->syms[i];
	const jitmap_image_symbol_info full = {sizeof(full), s->address, s->size, s->name, s->flags};
	return jitmap__give(out, &full, sizeof(full));
}

const char *jitmap_image_file_name(const jitmap_image *img) { return img->file_name; }

bool jitmap_image_symbol_values_are_addresses(const jitmap_image *img)
{
	for (size_t i = 0; i < img->num_syms; i++)
		if (img->syms[i].flags & JITMAP_SYMBOL_VALUE_IS_ADDRESS)
			return true;
	return false;
}

/* -- Functions named in DWARF alone --
 *
 * Some JITs name their code only in the image's DWARF: Mono's xdebug images (MONO_XDEBUG=gdb)
 * hold an empty .text and a .symtab of section symbols, and a DW_TAG_subprogram with
 * DW_AT_name, DW_AT_low_pc and DW_AT_high_pc for each method at its JIT address. GDB names
 * those frames from the DWARF; so does jitmap. A DWARF function is taken only where no
 * function symbol is: the symbol table stays the first word.
 *
 * The DWARF is read with libdw (elfutils, over the image's Elf), opened with dlopen
 * (RTLD_LOCAL) and called through dlsym's pointers, as debugfile.c opens libdebuginfod.
 * Not libdwarf, which the unwinder uses for CFI: libdw and libdwarf export functions of the
 * same names (dwarf_tag, dwarf_child, dwarf_diename, dwarf_lowpc, dwarf_attr ...), and in a
 * program that links libdw (jitmap-stack) the dynamic linker binds libdwarf's own internal
 * calls to them, as well as ours. libdw calls its own functions internally, and a pointer
 * from its handle is its own. Without libdw (not installed, or not at build time) images are
 * read as before.
 *
 * The bytes are the debuggee's: libdw checks each DIE against its section, and we bound the
 * walk (DWARF_MAX_DIES DIEs over the image, DWARF_MAX_DEPTH levels, only where functions are
 * defined), every range and name. An object whose .debug_info has relocations holds no
 * addresses until they are applied (GDB applies them; libdw does not): it is left alone. */

#define DWARF_MAX_DIES 100000u
#define DWARF_MAX_DEPTH 16u
#define DWARF_MAX_FUNCTION (UINT64_C(1) << 30) /* a "function" longer than this is not one */
#define DWARF_MAX_NAME 4096u
/* Names may share one string (DW_FORM_strp): their copies are bounded as a whole. */
#define DWARF_MAX_NAME_BYTES (16u << 20)

#ifdef HAVE_LIBDW

static struct {
	Dwarf *(*begin_elf)(Elf *, Dwarf_Cmd, Elf_Scn *);
	int (*end)(Dwarf *);
	int (*nextcu)(Dwarf *, Dwarf_Off, Dwarf_Off *, size_t *, Dwarf_Off *, uint8_t *, uint8_t *);
	Dwarf_Die *(*offdie)(Dwarf *, Dwarf_Off, Dwarf_Die *);
	int (*child)(Dwarf_Die *, Dwarf_Die *);
	int (*siblingof)(Dwarf_Die *, Dwarf_Die *);
	int (*tag)(Dwarf_Die *);
	int (*lowpc)(Dwarf_Die *, Dwarf_Addr *);
	int (*highpc)(Dwarf_Die *, Dwarf_Addr *);
	Dwarf_Attribute *(*attr_integrate)(Dwarf_Die *, unsigned, Dwarf_Attribute *);
	const char *(*formstring)(Dwarf_Attribute *);
	bool ok;
} dw;
static pthread_once_t dw_once = PTHREAD_ONCE_INIT;

static void dw_open(void)
{
	void *h = dlopen("libdw.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return;
	*(void **)&dw.begin_elf = dlsym(h, "dwarf_begin_elf");
	*(void **)&dw.end = dlsym(h, "dwarf_end");
	*(void **)&dw.nextcu = dlsym(h, "dwarf_nextcu");
	*(void **)&dw.offdie = dlsym(h, "dwarf_offdie");
	*(void **)&dw.child = dlsym(h, "dwarf_child");
	*(void **)&dw.siblingof = dlsym(h, "dwarf_siblingof");
	*(void **)&dw.tag = dlsym(h, "dwarf_tag");
	*(void **)&dw.lowpc = dlsym(h, "dwarf_lowpc");
	*(void **)&dw.highpc = dlsym(h, "dwarf_highpc");
	*(void **)&dw.attr_integrate = dlsym(h, "dwarf_attr_integrate");
	*(void **)&dw.formstring = dlsym(h, "dwarf_formstring");
	dw.ok = dw.begin_elf && dw.end && dw.nextcu && dw.offdie && dw.child && dw.siblingof &&
		dw.tag && dw.lowpc && dw.highpc && dw.attr_integrate && dw.formstring;
	/* The handle stays open: the library is used until the process ends. */
}

/* Whether a function symbol read from the symbol tables (sorted, the first `nsym`) covers any
 * of [lo, hi): one starting inside it, or the one before it reaching into it. */
static bool symbol_covers(const jitmap_image *img, size_t nsym, uint64_t lo, uint64_t hi)
{
	const size_t at = JITMAP_UPPER_BOUND(img->syms, nsym, address, hi - 1);
	if (!at)
		return false;
	const struct jitmap__symbol *s = &img->syms[at - 1];
	if (s->address >= lo)
		return true;
	const size_t before = JITMAP_UPPER_BOUND(img->syms, nsym, address, lo);
	s = &img->syms[before - 1];
	return s->address == lo || (s->size && lo - s->address < s->size);
}

/* Whether [lo, hi) lies in one of the image's first `ncode` code ranges. */
static bool in_code(const jitmap_image *img, size_t ncode, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < ncode; i++)
		if (lo >= img->code[i].lo && hi <= img->code[i].hi)
			return true;
	return false;
}

struct dwarf_walk {
	jitmap_image *img;
	size_t nsym, ncode; /* the symbols and code ranges from the sections, before ours */
	size_t cap_syms, cap_code;
	unsigned dies;
	size_t name_bytes;
};

/* A subprogram DIE: its name (DW_AT_name, through DW_AT_specification or
 * DW_AT_abstract_origin for a C++ method defined out of its class) and [lo, hi) (libdw reads
 * DW_AT_high_pc as an address or, since DWARF 4, a length), added where no symbol is. */
static int add_dwarf_function(struct dwarf_walk *w, Dwarf_Die *die)
{
	jitmap_image *img = w->img;
	Dwarf_Addr lo, hi;
	if (dw.lowpc(die, &lo) || dw.highpc(die, &hi) || !lo || hi <= lo ||
	    hi - lo > DWARF_MAX_FUNCTION || symbol_covers(img, w->nsym, lo, hi))
		return 0;
	Dwarf_Attribute attr;
	const char *name = dw.attr_integrate(die, DW_AT_name, &attr) ? dw.formstring(&attr) : NULL;
	const size_t len = name ? strnlen(name, DWARF_MAX_NAME) : 0;
	if (!len || len == DWARF_MAX_NAME)
		return 0;
	if (len + 1 > DWARF_MAX_NAME_BYTES - w->name_bytes)
		return 1; /* the walk ends here, as at the DIE cap */
	w->name_bytes += len + 1;
	if (img->num_syms == w->cap_syms) {
		const size_t cap = w->cap_syms ? 2 * w->cap_syms : 16;
		struct jitmap__symbol *v = realloc(img->syms, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		img->syms = v;
		w->cap_syms = cap;
	}
	/* Code outside every section (Mono's empty .text) is code all the same: the range
	 * becomes one of the image's, so that a PC there finds the image. */
	if (!in_code(img, w->ncode, lo, hi)) {
		if (img->num_code == w->cap_code) {
			const size_t cap = 2 * w->cap_code;
			jitmap_image_range *v = realloc(img->code, cap * sizeof(*v));
			if (!v)
				return -ENOMEM;
			img->code = v;
			w->cap_code = cap;
		}
		img->code[img->num_code++] = (jitmap_image_range){lo, hi};
	}
	char *copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	img->syms[img->num_syms++] = (struct jitmap__symbol){lo, hi - lo, copy,
							      JITMAP_SYMBOL_FROM_DWARF};
	return 0;
}

/* Whether functions are defined among a DIE's children. */
static bool holds_functions(int tag)
{
	return tag == DW_TAG_compile_unit || tag == DW_TAG_partial_unit ||
	       tag == DW_TAG_namespace || tag == DW_TAG_module;
}

/* The children of `parent`, and theirs where functions are defined, down to
 * DWARF_MAX_DEPTH. 0, 1 at a cap (DIEs, name bytes), or -ENOMEM. */
static int walk_children(struct dwarf_walk *w, Dwarf_Die *parent, unsigned depth)
{
	Dwarf_Die die;
	if (depth > DWARF_MAX_DEPTH || dw.child(parent, &die) != 0)
		return 0;
	for (;;) {
		if (++w->dies > DWARF_MAX_DIES)
			return 1;
		const int tag = dw.tag(&die);
		int rc = 0;
		if (tag == DW_TAG_subprogram)
			rc = add_dwarf_function(w, &die);
		else if (holds_functions(tag))
			rc = walk_children(w, &die, depth + 1);
		if (rc)
			return rc;
		if (dw.siblingof(&die, &die) != 0)
			return 0;
	}
}

/* Whether a relocation section targets section `index`. */
static bool relocated(Elf *elf, size_t index)
{
	GElf_Shdr sh;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));)
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_RELA || sh.sh_type == SHT_REL) &&
		    sh.sh_info == index)
			return true;
	return false;
}

/* The index of the section named `name` with bytes, or 0. */
static size_t section_named(Elf *elf, size_t shstrndx, const char *name)
{
	GElf_Shdr sh;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		const char *n = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (n && !strcmp(n, name) && sh.sh_type != SHT_NOBITS && sh.sh_size)
			return elf_ndxscn(scn);
	}
	return 0;
}

int jitmap__elf_load_dwarf_functions(jitmap_image *img, Elf *elf, size_t shstrndx)
{
	const size_t info = section_named(elf, shstrndx, ".debug_info");
	if (!info || relocated(elf, info))
		return 0;
	pthread_once(&dw_once, dw_open);
	if (!dw.ok)
		return 0;
	Dwarf *dbg = dw.begin_elf(elf, DWARF_C_READ, NULL);
	if (!dbg)
		return 0;
	/* The sections' capacities: img->syms holds num_syms at least, img->code num_code + 1
	 * (elf.c sizes it by the section count, one more than the code sections). */
	struct dwarf_walk w = {.img = img, .nsym = img->num_syms, .ncode = img->num_code,
			       .cap_syms = img->num_syms, .cap_code = img->num_code + 1};
	int rc = 0;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (!rc && dw.nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (next <= off || !dw.offdie(dbg, off + hsize, &cu))
			break;
		if (++w.dies > DWARF_MAX_DIES)
			break;
		if (holds_functions(dw.tag(&cu)))
			rc = walk_children(&w, &cu, 1);
		off = next;
	}
	dw.end(dbg);
	return rc < 0 ? rc : 0;
}

#else /* no libdw at build time */

int jitmap__elf_load_dwarf_functions(jitmap_image *img, Elf *elf, size_t shstrndx)
{
	(void)img;
	(void)elf;
	(void)shstrndx;
	return 0;
}

#endif
