/* elf_symbols.c: an image's function symbols (elf.c opens the image): read from its symbol
 * tables (their values section-relative in an object, or, for some hand-written JITs, the
 * addresses themselves), sorted by address, and asked by address (the stackmap's functions
 * named, a PC symbolized) or by index. */
#include <gelf.h>
#include <stdlib.h>

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
