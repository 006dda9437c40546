/* elf.c: stackmaps in ELF images, through libelf.
 *
 * Objects (ET_REL) hold 0 in every Function Address field and an absolute 64-bit relocation
 * against the function symbol (stackmap-format.md §7); we apply those. LLVM's JIT registers
 * such a relocatable copy with sh_addr of each loaded section patched to its load address
 * (gdb-jit-interface.md §4), so "symbol value + sh_addr of its section" gives the runtime
 * address there and the section offset in a file. Executables and shared libraries hold
 * linked addresses; a load bias moves them.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/deopt_layout.h"
#include "../common/search.h"
#include "internal.h"

struct symbol {
	uint64_t address, size;
	char *name;
	unsigned flags; /* JITMAP_SYMBOL_* */
};

struct jitmap_image {
	unsigned type, machine, elf_class;
	jitmap_arch arch;
	jitmap_byte_order order;
	jitmap_stackmap *sm;
	uint64_t sm_addr, sm_size;
	int has_sm;
	void *sm_copy; /* SKIP_STACKMAP: the image's bytes of a section not placed in memory */
	size_t sm_copy_len;
	uint64_t bias;
	struct symbol *syms; /* function symbols sorted by address */
	size_t num_syms;
	/* What a debugger's JIT reader needs besides the stackmap (jitmap_image_code_range ...). */
	jitmap_image_range *code; /* executable sections placed in memory, in section order */
	size_t num_code;
	char *file_name;          /* the first STT_FILE symbol's name */
	bool debug_info;
	uint64_t eh_addr, eh_size;
	void *debug_frame;        /* a copy of .debug_frame, when no relocation targets it */
	size_t debug_frame_len;
	jitmap_layouts *layouts;  /* .jitmap_deopt, parsed */
	char *layouts_problem;    /* why a .jitmap_deopt was not read */
	struct jitmap__problems warnings; /* what was read around (a relocation jitmap does not
					   * know) */
};

/* -- Relocations of the stackmap section --
 *
 * What LLVM emits there (docs/relocations.md has the survey, llc-14 and llc-19, every target):
 * an absolute 64-bit relocation per Function Address field, and on RISC-V, where linker
 * relaxation may move code, an ADD32/SUB32 pair on a record's Instruction Offset field
 * (record label minus function symbol). Any other relocation costs only the field it touches:
 * a warning says which, and the field keeps its stored bytes. */

#define R_RISCV_ADD32_ 35
#define R_RISCV_SUB32_ 39

/* An image up to this size is read from a target in one read (a JIT's usual object is a few KiB);
 * a larger one piece by piece: its header, section headers and the sections libjitmap uses. */
#define WHOLE_IMAGE_READ (UINT64_C(64) << 10)

/* -- Relocation types that write an absolute 64-bit address -- */

static int is_abs64(unsigned machine, unsigned type)
{
	switch (machine) {
	case EM_X86_64: return type == 1;   /* R_X86_64_64 */
	case EM_AARCH64: return type == 257; /* R_AARCH64_ABS64 */
	case EM_PPC64: return type == 38;   /* R_PPC64_ADDR64 */
	case EM_S390: return type == 22;    /* R_390_64 */
	case EM_RISCV: return type == 2;    /* R_RISCV_64 */
	default: return 0;
	}
}

/* -- Symbols -- */

static int cmp_sym(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;
	if (x->address != y->address)
		return x->address < y->address ? -1 : 1;
	return (x->size < y->size) - (x->size > y->size); /* the larger first */
}

/* The address of symbol `s` in the image: in relocatable files values are section-relative. */
static int sym_address(Elf *elf, unsigned type, const GElf_Sym *s, uint64_t *addr)
{
	*addr = s->st_value;
	if (type != ET_REL || s->st_shndx == SHN_ABS)
		return 0;
	if (s->st_shndx == SHN_UNDEF || s->st_shndx >= SHN_LORESERVE)
		return -ENOENT;
	GElf_Shdr sh;
	Elf_Scn *scn = elf_getscn(elf, s->st_shndx);
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

static int load_symbols(jitmap_image *img, Elf *elf, Elf_Scn *symscn, const GElf_Shdr *symsh)
{
	Elf_Data *d = elf_getdata(symscn, NULL);
	if (!d || !symsh->sh_entsize)
		return 0;
	/* The count is bounded by the section's data, which libelf has checked against the file. */
	size_t n = d->d_size / sizeof(Elf64_Sym);
	struct symbol *syms = realloc(img->syms, (img->num_syms + n + 1) * sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	img->syms = syms;
	const bool as_address = img->type == ET_REL && values_are_addresses(elf, d, n);
	for (size_t i = 0; i < n && i <= INT32_MAX; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s))
			continue;
		if (GELF_ST_TYPE(s.st_info) == STT_FILE && !img->file_name) {
			const char *name = elf_strptr(elf, symsh->sh_link, s.st_name);
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
		} else if (sym_address(elf, img->type, &s, &addr)) {
			continue;
		}
		if (addr + s.st_size < addr)
			continue;
		const char *name = elf_strptr(elf, symsh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		char *copy = strdup(name);
		if (!copy)
			return -ENOMEM;
		syms[img->num_syms++] = (struct symbol){addr, s.st_size, copy, flags};
	}
	return 0;
}

static const struct symbol *sym_at_or_before(const jitmap_image *img, uint64_t addr)
{
	const size_t lo = JITMAP_UPPER_BOUND(img->syms, img->num_syms, address, addr);
	return lo ? &img->syms[lo - 1] : NULL;
}

/* -- Relocations of the stackmap section -- */

/* The index of the function whose Function Address field sits at `off` (the relocation just
 * hit one). Functions are in section order; a linear scan per relocation made opening an
 * object with n functions take n^2 steps. */
static size_t function_at(const jitmap_stackmap *sm, uint64_t off)
{
	return JITMAP_LOWER_BOUND(sm->functions, sm->num_functions, section_offset, off);
}

/* One 32-bit field that ADD32/SUB32 relocations add to and subtract from. */
struct diff_field {
	uint64_t offset;
	uint32_t delta;
};

static int note_difference(struct diff_field **fields, size_t *n, uint64_t offset, uint32_t add)
{
	for (size_t i = 0; i < *n; i++)
		if ((*fields)[i].offset == offset) {
			(*fields)[i].delta += add;
			return 0;
		}
	struct diff_field *f = realloc(*fields, (*n + 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	*fields = f;
	f[(*n)++] = (struct diff_field){offset, add};
	return 0;
}

/* Resolve each Instruction Offset field the pairs touched: stored + sum of (S + A). */
static void apply_differences(jitmap_image *img, const struct diff_field *fields, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const jitmap_record *hit = NULL;
		for (size_t r = 0; r < img->sm->num_records && !hit; r++)
			if (img->sm->records[r].section_offset + 8 == fields[i].offset)
				hit = &img->sm->records[r];
		if (!hit) {
			jitmap__problem(&img->warnings, SIZE_MAX, "ADD32/SUB32 relocations at "
					".llvm_stackmaps+0x%" PRIx64 " touch no Instruction Offset "
					"field: left as stored", fields[i].offset);
			continue;
		}
		jitmap_stackmap_set_instruction_offset(img->sm, fields[i].offset,
						       hit->raw_instruction_offset + fields[i].delta);
	}
}

static int apply_relocations(jitmap_image *img, Elf *elf, size_t sm_index, jitmap_error *err)
{
	Elf_Scn *scn = NULL;
	struct diff_field *diffs = NULL;
	size_t ndiffs = 0;
	int rc = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) ||
		    sh.sh_info != sm_index)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		Elf_Scn *symscn = elf_getscn(elf, sh.sh_link);
		Elf_Data *symd = symscn ? elf_getdata(symscn, NULL) : NULL;
		GElf_Shdr symsh;
		if (!d || !symd || !gelf_getshdr(symscn, &symsh)) {
			rc = jitmap__fail(err, -EINVAL, sh.sh_offset,
					  "relocation section %zu has no readable symbol table",
					  elf_ndxscn(scn));
			goto out;
		}
		const int rela = sh.sh_type == SHT_RELA;
		const size_t n = d->d_size / (rela ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel));
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;
			if (rela) {
				if (!gelf_getrela(d, (int)i, &r))
					continue;
			} else {
				GElf_Rel rel;
				if (!gelf_getrel(d, (int)i, &rel))
					continue;
				r.r_offset = rel.r_offset;
				r.r_info = rel.r_info;
				r.r_addend = 0; /* REL: the addend is the stored value, 0 for LLVM */
			}
			const uint64_t at = sh.sh_offset + i * (rela ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel));
			const unsigned type = GELF_R_TYPE(r.r_info);
			const bool diff = img->machine == EM_RISCV &&
					  (type == R_RISCV_ADD32_ || type == R_RISCV_SUB32_);
			if (!is_abs64(img->machine, type) && !diff) {
				jitmap__problem(&img->warnings, SIZE_MAX, "relocation type %u at "
						".llvm_stackmaps+0x%" PRIx64 " is not one jitmap knows: "
						"that field is left as stored", type, r.r_offset);
				continue;
			}
			GElf_Sym s;
			if (!gelf_getsym(symd, (int)GELF_R_SYM(r.r_info), &s)) {
				rc = jitmap__fail(err, -EINVAL, at,
						  "relocation names symbol %u, which does not exist",
						  (unsigned)GELF_R_SYM(r.r_info));
				goto out;
			}
			uint64_t addr;
			if (sym_address(elf, ET_REL, &s, &addr))
				addr = 0; /* undefined: resolved by a linker we are not */
			if (diff) {
				const uint32_t v = (uint32_t)(addr + (uint64_t)r.r_addend);
				if (note_difference(&diffs, &ndiffs, r.r_offset,
						    type == R_RISCV_ADD32_ ? v : 0u - v)) {
					rc = jitmap__fail(err, -ENOMEM, 0, "out of memory");
					goto out;
				}
				continue;
			}
			if (jitmap_stackmap_set_function_address(img->sm, r.r_offset,
								 addr + (uint64_t)r.r_addend)) {
				rc = jitmap__fail(err, -EINVAL, at,
						  "relocation at .llvm_stackmaps+0x%" PRIx64
						  " does not hit a Function Address field",
						  r.r_offset);
				goto out;
			}
			/* The symbol names the function even where addresses collide (several
			 * text sections at sh_addr 0 in an object file). */
			const char *name = GELF_ST_TYPE(s.st_info) == STT_FUNC
						   ? elf_strptr(elf, symsh.sh_link, s.st_name)
						   : NULL;
			if (name && *name &&
			    jitmap_stackmap_set_function_name(img->sm, function_at(img->sm, r.r_offset),
							      name)) {
				rc = jitmap__fail(err, -ENOMEM, 0, "out of memory");
				goto out;
			}
		}
	}
	apply_differences(img, diffs, ndiffs);
out:
	free(diffs);
	return rc;
}

/* -- Opening -- */

/* Record what one section tells a JIT reader: code placed in memory, CFI, DWARF. */
/* A .jitmap_deopt section: parsed now; a malformed one is the image's problem, not a
 * failure to open it (its stackmap and code are still good). Only ENOMEM fails. */
static int note_layouts(jitmap_image *img, Elf_Scn *scn, const GElf_Shdr *sh)
{
	char buf[256];
	jitmap_error err;
	Elf_Data *d = sh->sh_type == SHT_NOBITS ? NULL : elf_getdata(scn, NULL);
	if (!d || (!d->d_buf && d->d_size)) {
		snprintf(buf, sizeof(buf), JITMAP__DL_SECTION " at file offset 0x%" PRIx64
			 " has no readable contents", (uint64_t)sh->sh_offset);
	} else {
		img->layouts = jitmap_layouts_parse(d->d_buf, d->d_size, img->order, &err);
		if (img->layouts)
			return 0;
		if (err.code == -ENOMEM)
			return -ENOMEM;
		snprintf(buf, sizeof(buf), JITMAP__DL_SECTION " (file offset 0x%" PRIx64
			 "): offset 0x%" PRIx64 ": %s", (uint64_t)sh->sh_offset, err.offset,
			 err.reason);
	}
	img->layouts_problem = strdup(buf);
	return img->layouts_problem ? 0 : -ENOMEM;
}

/* A section placed in memory: allocated, at an address, not wrapping. Code is a placed
 * section of instructions (note_section, and the lazy scan's glance). */
static bool is_placed(const GElf_Shdr *sh)
{
	return (sh->sh_flags & SHF_ALLOC) && sh->sh_addr && sh->sh_addr + sh->sh_size > sh->sh_addr;
}

static int note_section(jitmap_image *img, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			size_t shstrndx, size_t *df_index)
{
	const bool placed = is_placed(sh);
	if (placed && (sh->sh_flags & SHF_EXECINSTR))
		img->code[img->num_code++] = (jitmap_image_range){sh->sh_addr, sh->sh_addr + sh->sh_size};
	const char *name = elf_strptr(elf, shstrndx, sh->sh_name);
	if (!name)
		return 0;
	if (!strcmp(name, ".debug_info") && sh->sh_size) {
		img->debug_info = true;
	} else if (!strcmp(name, ".eh_frame") && placed && sh->sh_type != SHT_NOBITS &&
		   !img->eh_size) {
		img->eh_addr = sh->sh_addr;
		img->eh_size = sh->sh_size;
	} else if (!strcmp(name, ".debug_frame") && !img->debug_frame &&
		   sh->sh_type == SHT_PROGBITS) {
		Elf_Data *d = elf_getdata(scn, NULL);
		if (d && d->d_buf && d->d_size) {
			img->debug_frame = malloc(d->d_size);
			if (!img->debug_frame)
				return -ENOMEM;
			memcpy(img->debug_frame, d->d_buf, d->d_size);
			img->debug_frame_len = d->d_size;
			*df_index = elf_ndxscn(scn);
		}
	} else if (!strcmp(name, JITMAP__DL_SECTION) && !img->layouts && !img->layouts_problem) {
		return note_layouts(img, scn, sh);
	}
	return 0;
}

/* Whether a relocation section targets section `index` (0: none). */
static bool debug_frame_relocated(Elf *elf, size_t index)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while (index && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_RELA || sh.sh_type == SHT_REL) &&
		    sh.sh_info == index)
			return true;
	return false;
}

static jitmap_image *open_elf(Elf *elf, int skip_stackmap, jitmap_error *err)
{
	jitmap_image *img = NULL;
	int rc = -EINVAL;
	GElf_Ehdr eh;
	size_t shstrndx;

	if (elf_kind(elf) != ELF_K_ELF) {
		jitmap__fail(err, -EINVAL, 0, "not an ELF file");
		goto out;
	}
	if (!gelf_getehdr(elf, &eh)) {
		jitmap__fail(err, -EINVAL, 0, "bad ELF header: %s", elf_errmsg(-1));
		goto out;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64) {
		jitmap__fail(err, -EINVAL, 4,
			     "32-bit ELF file: LLVM emits stackmaps only for 64-bit targets");
		goto out;
	}
	/* libelf reports no sections at all when the section header table lies past the end of
	 * the image, so a truncated file would pass for one without stackmaps. (With e_shnum 0
	 * and e_shoff set, the count is in section 0: that entry must fit at least.) The table
	 * is measured in ELF64 headers: an e_shentsize of 0 would make 0xffff of them fit in
	 * any image, and libelf then reports no sections either. */
	size_t image_size = 0;
	(void)elf_rawfile(elf, &image_size);
	const uint64_t sh_count = eh.e_shnum ? eh.e_shnum : eh.e_shoff ? 1 : 0;
	if (sh_count && eh.e_shentsize != sizeof(Elf64_Shdr)) {
		jitmap__fail(err, -EINVAL, offsetof(Elf64_Ehdr, e_shentsize),
			     "section header size %u (ELF64's is %zu)", (unsigned)eh.e_shentsize,
			     sizeof(Elf64_Shdr));
		goto out;
	}
	if (sh_count && (eh.e_shoff > image_size ||
			 sh_count * sizeof(Elf64_Shdr) > image_size - eh.e_shoff)) {
		jitmap__fail(err, -EINVAL, offsetof(Elf64_Ehdr, e_shoff),
			     "truncated: the section header table (%" PRIu64 " entries at 0x%" PRIx64
			     ") ends past the end of the file (0x%zx bytes)",
			     sh_count, (uint64_t)eh.e_shoff, image_size);
		goto out;
	}
	rc = -ENOMEM;
	img = calloc(1, sizeof(*img));
	if (!img) {
		jitmap__fail(err, rc, 0, "out of memory");
		goto out;
	}
	img->type = eh.e_type;
	img->machine = eh.e_machine;
	img->elf_class = eh.e_ident[EI_CLASS];
	img->arch = jitmap_arch_from_elf_machine(eh.e_machine);
	img->order = eh.e_ident[EI_DATA] == ELFDATA2MSB ? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE;
	rc = -EINVAL;
	if (elf_getshdrstrndx(elf, &shstrndx)) {
		jitmap__fail(err, rc, eh.e_shoff, "bad section header string table: %s",
			     elf_errmsg(-1));
		goto out;
	}

	Elf_Scn *scn = NULL, *sm_scn = NULL;
	GElf_Shdr sm_sh = {0};
	size_t nscn = 0, df_index = 0;
	if (elf_getshdrnum(elf, &nscn)) {
		jitmap__fail(err, rc, eh.e_shoff, "bad section count: %s", elf_errmsg(-1));
		goto out;
	}
	/* nscn is bounded by the section header table, checked against the image above. */
	img->code = calloc(nscn + 1, sizeof(*img->code));
	if (!img->code) {
		rc = jitmap__fail(err, -ENOMEM, 0, "out of memory");
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh)) {
			jitmap__fail(err, rc, eh.e_shoff, "bad section header %zu: %s",
				     elf_ndxscn(scn), elf_errmsg(-1));
			goto out;
		}
		rc = note_section(img, elf, scn, &sh, shstrndx, &df_index);
		if (rc) {
			jitmap__fail(err, rc, sh.sh_offset, "out of memory");
			goto out;
		}
		rc = -EINVAL;
		if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
			rc = load_symbols(img, elf, scn, &sh);
			if (rc) {
				jitmap__fail(err, rc, sh.sh_offset, "out of memory");
				goto out;
			}
			rc = -EINVAL;
		}
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!sm_scn && name && !strcmp(name, JITMAP__STACKMAP_SECTION)) {
			sm_scn = scn;
			sm_sh = sh;
		}
	}
	/* Symbol tables are often in address order already (an object's functions, as emitted):
	 * one look spares the sort. syms is NULL without a symbol table (qsort wants a pointer). */
	size_t in_order = 1;
	while (in_order < img->num_syms &&
	       cmp_sym(&img->syms[in_order - 1], &img->syms[in_order]) <= 0)
		in_order++;
	if (in_order < img->num_syms)
		qsort(img->syms, img->num_syms, sizeof(*img->syms), cmp_sym);
	if (img->debug_frame && debug_frame_relocated(elf, df_index)) {
		/* Its addresses are not filled in: useless to an unwinder. */
		free(img->debug_frame);
		img->debug_frame = NULL;
		img->debug_frame_len = 0;
	}

	if (sm_scn && skip_stackmap) {
		/* Located, not read: the caller reads the live copy at sh_addr. A section not
		 * placed in memory has only the image's bytes: keep them for the caller. */
		img->has_sm = 1;
		img->sm_addr = sm_sh.sh_addr;
		img->sm_size = sm_sh.sh_size;
		if (!sm_sh.sh_addr && sm_sh.sh_type != SHT_NOBITS && sm_sh.sh_size) {
			Elf_Data *d = elf_getdata(sm_scn, NULL);
			if (d && d->d_buf && d->d_size == sm_sh.sh_size) {
				img->sm_copy = malloc(d->d_size);
				if (!img->sm_copy) {
					rc = jitmap__fail(err, -ENOMEM, 0, "out of memory");
					goto out;
				}
				memcpy(img->sm_copy, d->d_buf, d->d_size);
				img->sm_copy_len = d->d_size;
			}
		}
	} else if (sm_scn) {
		if (sm_sh.sh_type == SHT_NOBITS) {
			jitmap__fail(err, rc, sm_sh.sh_offset, ".llvm_stackmaps has no contents (NOBITS)");
			goto out;
		}
		Elf_Data *d = elf_getdata(sm_scn, NULL);
		if (!d || (!d->d_buf && d->d_size)) {
			jitmap__fail(err, rc, sm_sh.sh_offset, "cannot read .llvm_stackmaps: %s",
				     elf_errmsg(-1));
			goto out;
		}
		jitmap_parse_opts opts = {
			.sz = sizeof(opts),
			.order = eh.e_ident[EI_DATA] == ELFDATA2MSB ? JITMAP_ORDER_BIG
								    : JITMAP_ORDER_LITTLE,
			.arch = img->arch,
		};
		img->sm = jitmap_stackmap_parse(d->d_buf, d->d_size, &opts, err);
		if (!img->sm) {
			rc = -errno;
			if (err) /* make the offset file-relative, and say which section */
				err->offset += sm_sh.sh_offset;
			goto out;
		}
		img->has_sm = 1;
		img->sm_addr = sm_sh.sh_addr;
		img->sm_size = sm_sh.sh_size;
		if (img->type == ET_REL) {
			rc = apply_relocations(img, elf, elf_ndxscn(sm_scn), err);
			if (rc)
				goto out;
		}
		/* Name the functions the relocations did not name, by address. */
		if (jitmap_image_name_functions(img, img->sm) < 0) {
			rc = jitmap__fail(err, -ENOMEM, 0, "out of memory");
			goto out;
		}
	}
	rc = 0;
out:
	if (rc) {
		jitmap_image_free(img);
		errno = -rc;
		return NULL;
	}
	return img;
}

static int elf_ready(jitmap_error *err)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return jitmap__fail(err, -ENOTSUP, 0, "libelf is too old");
	return 0;
}

jitmap_image *jitmap_image_open_file(const char *path, jitmap_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	if (elf_ready(err)) {
		errno = ENOTSUP;
		return NULL;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		jitmap__fail(err, -e, 0, "cannot open: %s", strerror(e));
		errno = e;
		return NULL;
	}
	struct stat st;
	const bool have_st = fstat(fd, &st) == 0;
	if (have_st && !S_ISREG(st.st_mode)) {
		jitmap__fail(err, S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL, 0, "%s",
			     S_ISDIR(st.st_mode) ? "a directory, not an ELF file"
						 : "not a regular file (a device, pipe or socket)");
		close(fd);
		errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
		return NULL;
	}
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		/* libelf says "no error" for an empty file */
		const int le = elf_errno();
		if (have_st && st.st_size == 0)
			jitmap__fail(err, -EINVAL, 0, "an empty file, not an ELF file");
		else
			jitmap__fail(err, -EINVAL, 0, "not an ELF file%s%s", le ? ": " : "",
				     le ? elf_errmsg(le) : "");
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	jitmap_image *img = open_elf(elf, 0, err);
	int e = errno;
	elf_end(elf);
	close(fd);
	errno = e;
	return img;
}

jitmap_image *jitmap_image_open_memory(const void *buf, size_t len, jitmap_error *err)
{
	return jitmap_image_open_memory_opts(buf, len, NULL, err);
}

/* -- Images in target memory -- */

static int target_read(const jitmap_target *t, uint64_t addr, uint64_t off, void *buf, size_t len,
		       const char *what, jitmap_error *err)
{
	char why[128] = "";
	if (!len)
		return 0;
	int rc = t->read_mem(t->ctx, addr + off, buf, len, why, sizeof(why));
	if (rc)
		return jitmap__fail(err, rc < 0 ? rc : -EFAULT, off,
				    "%s at 0x%" PRIx64 " (%zu bytes) is not readable: %s", what,
				    addr + off, len, why[0] ? why : jitmap_strerror(rc < 0 ? rc : -EFAULT));
	return 0;
}

/* An Elf over `buf` as filled so far; libelf reads the image lazily, so it is made again after
 * each fill. */
static Elf *elf_over(char *buf, size_t len)
{
	return elf_memory(buf, len);
}

jitmap_image *jitmap_image_open_target(const jitmap_target *t, uint64_t addr, uint64_t size,
				       unsigned flags, jitmap_error *err)
{
	jitmap_image *img = NULL;
	Elf *elf = NULL;
	char *buf = NULL;
	int rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (elf_ready(err)) {
		errno = ENOTSUP;
		return NULL;
	}
	if (!t || !t->read_mem || (flags & ~(unsigned)JITMAP_IMAGE_SKIP_STACKMAP) ||
	    size > SIZE_MAX) {
		jitmap__fail(err, -EINVAL, 0, "bad arguments");
		errno = EINVAL;
		return NULL;
	}
	/* A zeroed buffer of the image's size (pages stay untouched until written), filled with the
	 * header, the section headers and the contents of the sections libjitmap uses. */
	buf = calloc(1, size ? (size_t)size : 1);
	if (!buf) {
		rc = jitmap__fail(err, -ENOMEM, 0, "out of memory for a %" PRIu64 "-byte image", size);
		goto out;
	}
	const size_t head = size < sizeof(Elf64_Ehdr) ? (size_t)size : sizeof(Elf64_Ehdr);
	char why[128];
	if (size <= WHOLE_IMAGE_READ &&
	    t->read_mem(t->ctx, addr, buf, (size_t)size, why, sizeof(why)) == 0) {
		/* A small image (a JIT's usual object) costs one read, not one per section; one
		 * that cannot be read whole is read by parts below (a part it does not need may
		 * be unreadable), and the reasons are theirs. */
		goto open;
	}
	rc = target_read(t, addr, 0, buf, head, "the ELF header", err);
	if (rc)
		goto out;
	GElf_Ehdr eh;
	elf = elf_over(buf, (size_t)size);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    eh.e_shnum == 0 || eh.e_shoff > size ||
	    (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > size - eh.e_shoff) {
		/* Anything unusual: read it all and let open_elf say what is wrong. */
		rc = target_read(t, addr, head, buf + head, (size_t)size - head, "the image", err);
		if (rc)
			goto out;
		goto open;
	}
	rc = target_read(t, addr, eh.e_shoff, buf + eh.e_shoff,
			 (size_t)eh.e_shnum * sizeof(Elf64_Shdr), "the section headers", err);
	if (rc)
		goto out;
	/* The section name table first, to know which section is .llvm_stackmaps. */
	size_t shstrndx;
	elf_end(elf);
	elf = elf_over(buf, (size_t)size);
	GElf_Shdr sh;
	Elf_Scn *scn;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) || !(scn = elf_getscn(elf, shstrndx)) ||
	    !gelf_getshdr(scn, &sh) || sh.sh_offset > size || sh.sh_size > size - sh.sh_offset) {
		rc = target_read(t, addr, head, buf + head, (size_t)size - head, "the image", err);
		if (rc)
			goto out;
		goto open;
	}
	rc = target_read(t, addr, sh.sh_offset, buf + sh.sh_offset, (size_t)sh.sh_size,
			 "the section name table", err);
	if (rc)
		goto out;
	elf_end(elf);
	elf = elf_over(buf, (size_t)size);
	if (!elf) {
		rc = jitmap__fail(err, -EINVAL, 0, "not an ELF image: %s", elf_errmsg(-1));
		goto out;
	}
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size ||
		    elf_ndxscn(scn) == shstrndx)
			continue;
		if (sh.sh_offset > size || sh.sh_size > size - sh.sh_offset)
			continue; /* open_elf reports what it needs and cannot have */
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if ((flags & JITMAP_IMAGE_SKIP_STACKMAP) && name && !strcmp(name, JITMAP__STACKMAP_SECTION))
			continue;
		rc = target_read(t, addr, sh.sh_offset, buf + sh.sh_offset, (size_t)sh.sh_size,
				 name ? name : "a section", err);
		if (rc)
			goto out;
	}
open:
	if (elf)
		elf_end(elf);
	elf = elf_over(buf, (size_t)size);
	if (!elf) {
		rc = jitmap__fail(err, -EINVAL, 0, "not an ELF image: %s", elf_errmsg(-1));
		goto out;
	}
	img = open_elf(elf, !!(flags & JITMAP_IMAGE_SKIP_STACKMAP), err);
	rc = img ? 0 : -errno;
out:
	if (elf)
		elf_end(elf);
	free(buf);
	if (rc) {
		errno = -rc;
		return NULL;
	}
	return img;
}

/* -- A first look at an image (the process model's lazy scans) --
 *
 * A JIT with thousands of entries registers thousands of small images, and a tool that walks a
 * few stacks needs the few whose code is on them: for the others, where their code lies is
 * enough. The look below reads the header and section headers through libelf, in the host's
 * byte order, ELF64, and says "plain" only when open_elf is sure to succeed on these bytes and
 * to report nothing: each condition it checks is one open_elf would otherwise decide (a
 * section header table in the image, names elf_strptr reads, every section's bytes inside the
 * image, no deopt layouts, no symbol table whose values are addresses). Anything else,
 * however harmless, answers "not plain", and the image is opened as before. */

int jitmap__image_glance(void *buf, size_t len, struct jitmap__glance *g)
{
	if (!buf || elf_ready(NULL))
		return -EINVAL;
	Elf *elf = elf_memory(buf, len);
	GElf_Ehdr eh;
	size_t shstrndx;
	int rc = -EINVAL;
	/* No extended numbering (a count or name index held in section 0). */
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != (JITMAP__HOST_BIG ? ELFDATA2MSB : ELFDATA2LSB) ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum < 2 || eh.e_shnum >= SHN_LORESERVE ||
	    eh.e_shoff > len || eh.e_shnum > (len - eh.e_shoff) / sizeof(Elf64_Shdr) ||
	    elf_getshdrstrndx(elf, &shstrndx) || !shstrndx || shstrndx >= eh.e_shnum)
		goto out;
	*g = (struct jitmap__glance){
		.arch = jitmap_arch_from_elf_machine(eh.e_machine),
		.order = JITMAP__HOST_BIG ? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE,
	};
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			goto out;
		if (sh.sh_type != SHT_NOBITS && sh.sh_size &&
		    (sh.sh_offset > len || sh.sh_size > len - sh.sh_offset))
			goto out;
		if (!strcmp(name, JITMAP__DL_SECTION))
			goto out; /* deopt layouts: counted, and maybe a problem, at scan */
		if (is_placed(&sh) && (sh.sh_flags & SHF_EXECINSTR)) { /* note_section's code */
			if (g->num_code == JITMAP__GLANCE_MAX_CODE)
				goto out;
			g->code[g->num_code++] = (jitmap_image_range){sh.sh_addr,
								      sh.sh_addr + sh.sh_size};
		}
		if ((sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) && eh.e_type == ET_REL &&
		    sh.sh_entsize) {
			/* load_symbols' values_are_addresses: a problem said at scan. */
			Elf_Data *d = elf_getdata(scn, NULL);
			if (!d || sh.sh_entsize != sizeof(Elf64_Sym) ||
			    values_are_addresses(elf, d, d->d_size / sizeof(Elf64_Sym)))
				goto out;
		}
	}
	rc = 0;
out:
	elf_end(elf);
	return rc;
}

void jitmap_image_free(jitmap_image *img)
{
	if (!img)
		return;
	for (size_t i = 0; i < img->num_syms; i++)
		free(img->syms[i].name);
	free(img->syms);
	jitmap_stackmap_free(img->sm);
	free(img->sm_copy);
	free(img->code);
	free(img->file_name);
	free(img->debug_frame);
	jitmap_layouts_free(img->layouts);
	free(img->layouts_problem);
	jitmap__problems_free(&img->warnings);
	free(img);
}

/* -- Accessors -- */

jitmap_arch jitmap_image_arch(const jitmap_image *img) { return img->arch; }
unsigned jitmap_image_elf_type(const jitmap_image *img) { return img->type; }
unsigned jitmap_image_elf_machine(const jitmap_image *img) { return img->machine; }
jitmap_stackmap *jitmap_image_stackmap(const jitmap_image *img) { return img->sm; }

int jitmap_image_stackmap_section(const jitmap_image *img, uint64_t *addr, uint64_t *size)
{
	if (!img->has_sm)
		return -ENOENT;
	*addr = img->sm_addr + img->bias;
	*size = img->sm_size;
	return 0;
}

void jitmap_image_set_load_bias(jitmap_image *img, uint64_t bias)
{
	const uint64_t delta = bias - img->bias;
	for (size_t i = 0; i < img->num_syms; i++)
		img->syms[i].address += delta;
	if (img->sm)
		jitmap_stackmap_add_bias(img->sm, delta);
	img->bias = bias;
}

int jitmap_image_name_functions(const jitmap_image *img, jitmap_stackmap *sm)
{
	int named = 0;
	for (size_t f = 0; f < sm->num_functions; f++) {
		const jitmap_function *fn = &sm->functions[f];
		if (fn->name && sm->sizes[f])
			continue;
		const struct symbol *s = sym_at_or_before(img, fn->address);
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
	const struct symbol *s = sym_at_or_before(img, addr);
	/* A zero-sized symbol (hand-written assembly, some JITs) covers up to the next one. */
	if (!s || (s->size && addr - s->address >= s->size))
		return NULL;
	if (offset)
		*offset = addr - s->address;
	return s->name;
}

/* -- What a debugger's JIT reader needs -- */

jitmap_image *jitmap_image_open_memory_opts(const void *buf, size_t len,
					    const jitmap_image_opts *opts, jitmap_error *err)
{
	unsigned flags = 0;
	if (err)
		memset(err, 0, sizeof(*err));
	if (opts) {
		if (!jitmap__opts_valid(opts, opts->sz, sizeof(*opts))) {
			jitmap__fail(err, -EINVAL, 0, "jitmap_image_opts.sz is %zu, or fields this "
				     "libjitmap does not know are set", opts->sz);
			errno = EINVAL;
			return NULL;
		}
		if (JITMAP_OPTS_HAS(opts, flags))
			flags = opts->flags;
	}
	if (flags & ~(unsigned)JITMAP_IMAGE_SKIP_STACKMAP) {
		jitmap__fail(err, -EINVAL, 0, "unknown flags 0x%x", flags);
		errno = EINVAL;
		return NULL;
	}
	if (elf_ready(err)) {
		errno = ENOTSUP;
		return NULL;
	}
	char *copy = malloc(len ? len : 1);
	if (!copy) {
		jitmap__fail(err, -ENOMEM, 0, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	memcpy(copy, buf, len);
	Elf *elf = elf_memory(copy, len);
	if (!elf) {
		jitmap__fail(err, -EINVAL, 0, "not an ELF image: %s", elf_errmsg(-1));
		free(copy);
		errno = EINVAL;
		return NULL;
	}
	jitmap_image *img = open_elf(elf, !!(flags & JITMAP_IMAGE_SKIP_STACKMAP), err);
	int e = errno;
	elf_end(elf);
	free(copy);
	errno = e;
	return img;
}

unsigned jitmap_image_elf_class(const jitmap_image *img) { return img->elf_class; }
jitmap_byte_order jitmap_image_byte_order(const jitmap_image *img) { return img->order; }
size_t jitmap_image_num_code_ranges(const jitmap_image *img) { return img->num_code; }

const jitmap_image_range *jitmap_image_code_range(const jitmap_image *img, size_t i)
{
	return i < img->num_code ? &img->code[i] : NULL;
}

size_t jitmap_image_num_symbols(const jitmap_image *img) { return img->num_syms; }

int jitmap_image_symbol(const jitmap_image *img, size_t i, jitmap_image_symbol_info *out)
{
	if (i >= img->num_syms)
		return -ERANGE;
	const struct symbol *s = &img->syms[i];
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
bool jitmap_image_has_debug_info(const jitmap_image *img) { return img->debug_info; }

int jitmap_image_eh_frame(const jitmap_image *img, uint64_t *addr, uint64_t *size)
{
	if (!img->eh_size)
		return -ENOENT;
	*addr = img->eh_addr + img->bias;
	*size = img->eh_size;
	return 0;
}

const void *jitmap_image_debug_frame(const jitmap_image *img, size_t *len)
{
	*len = img->debug_frame_len;
	return img->debug_frame;
}

const void *jitmap_image_stackmap_copy(const jitmap_image *img, size_t *len)
{
	*len = img->sm_copy_len;
	return img->sm_copy;
}

const jitmap_layouts *jitmap_image_layouts(const jitmap_image *img) { return img->layouts; }
const char *jitmap_image_layouts_problem(const jitmap_image *img) { return img->layouts_problem; }

size_t jitmap_image_num_warnings(const jitmap_image *img) { return img->warnings.n; }

const char *jitmap_image_warning(const jitmap_image *img, size_t i)
{
	return jitmap__problem_at(&img->warnings, i);
}

/* -- An image as a file for a debugger's module list --
 *
 * A JIT that registers an image whose code sections are SHT_NOBITS at the code's address
 * (libjitmap-producer, LuaJIT) leaves the code in the process: GDB and LLDB's own JIT loader
 * read it there. A debugger given the image as a file reads a read-only section from the file
 * instead (LLDB's Target::ReadMemory prefers the file for read-only sections), and since LLDB
 * 19 an allocated SHT_NOBITS section is zero-fill, so it reads zeros: its assembly profiling
 * then sees no prologue, and frames above one without CFI lose their caller. The copy made
 * here carries the code. */

/* Most bytes of code copied into one image (the front ends cap the image they read too). */
#define MAX_FILLED_CODE (UINT64_C(256) << 20)

/* Lay out (and with `out`, fill) the copy: each empty code section placed in memory gets
 * its bytes appended, aligned to its sh_addralign (a usual one: 1 to 4096, else 16).
 * Returns the number of sections filled with *need the copy's length, or a negative errno. */
static int with_code(Elf *elf, const GElf_Ehdr *eh, size_t nscn, size_t len,
		     const jitmap_target *t, uint8_t *out, uint64_t *need, jitmap_error *err)
{
	uint64_t at = len, code = 0;
	int filled = 0;
	for (size_t i = 1; i < nscn; i++) {
		GElf_Shdr sh;
		Elf_Scn *scn = elf_getscn(elf, i);
		if (!scn || !gelf_getshdr(scn, &sh))
			return jitmap__fail(err, -EINVAL, eh->e_shoff + i * sizeof(Elf64_Shdr),
					    "section %zu: %s", i, elf_errmsg(-1));
		if (sh.sh_type != SHT_NOBITS || !sh.sh_addr || !sh.sh_size ||
		    (sh.sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR))
			continue;
		const uint64_t hdr = eh->e_shoff + i * sizeof(Elf64_Shdr);
		if (sh.sh_size > MAX_FILLED_CODE - code)
			return jitmap__fail(err, -EFBIG, hdr,
					    "the code sections hold more than %" PRIu64 " bytes",
					    MAX_FILLED_CODE);
		const uint64_t align = sh.sh_addralign && !(sh.sh_addralign & (sh.sh_addralign - 1)) &&
				       sh.sh_addralign <= 4096 ? sh.sh_addralign : 16;
		at = (at + align - 1) & ~(align - 1);
		if (out) {
			char why[128] = "";
			int rc = t->read_mem(t->ctx, sh.sh_addr, out + at, (size_t)sh.sh_size, why,
					     sizeof(why));
			if (rc)
				return jitmap__fail(err, rc < 0 ? rc : -EFAULT, hdr,
						    "section %zu's code at 0x%" PRIx64 " (%" PRIu64
						    " bytes) is not readable: %s", i, (uint64_t)sh.sh_addr,
						    (uint64_t)sh.sh_size,
						    why[0] ? why : jitmap_strerror(rc < 0 ? rc : -EFAULT));
			const jitmap_byte_order order = eh->e_ident[EI_DATA] == ELFDATA2MSB
				? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE;
			jitmap__store(out + hdr + offsetof(Elf64_Shdr, sh_type), SHT_PROGBITS, 4, order);
			jitmap__store(out + hdr + offsetof(Elf64_Shdr, sh_offset), at, 8, order);
		}
		at += sh.sh_size;
		code += sh.sh_size;
		filled++;
	}
	*need = at;
	return filled;
}

int jitmap_image_with_code(const void *buf, size_t len, const jitmap_target *target, void *out,
			   size_t *out_len, jitmap_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	if (!buf || !out_len || !target || !target->read_mem)
		return jitmap__fail(err, -EINVAL, 0, "bad arguments");
	int rc = elf_ready(err);
	if (rc)
		return rc;
	char *copy = malloc(len ? len : 1);
	if (!copy)
		return jitmap__fail(err, -ENOMEM, 0, "out of memory");
	memcpy(copy, buf, len);
	Elf *elf = elf_memory(copy, len);
	GElf_Ehdr eh;
	size_t nscn = 0;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		rc = jitmap__fail(err, -EINVAL, 0, "not an ELF image");
		goto out;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64) {
		rc = jitmap__fail(err, -EINVAL, EI_CLASS, "not a 64-bit ELF image");
		goto out;
	}
	/* The section headers are patched in place: they must be ELF64's, inside the image.
	 * (libelf sees no sections at all when the table lies past the end: the header's count
	 * is checked first, as open_elf does; with e_shnum 0 the count is in section 0.) */
	uint64_t count = eh.e_shnum ? eh.e_shnum : eh.e_shoff ? 1 : 0;
	size_t extended = 0;
	if (!eh.e_shnum && eh.e_shoff && !elf_getshdrnum(elf, &extended) && extended > 1)
		count = extended;
	nscn = count > SIZE_MAX ? SIZE_MAX : (size_t)count;
	if (nscn && (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > len ||
		     nscn > (len - eh.e_shoff) / sizeof(Elf64_Shdr))) {
		rc = jitmap__fail(err, -EINVAL, offsetof(Elf64_Ehdr, e_shoff),
				  "the section header table is not ELF64's inside the image");
		goto out;
	}
	uint64_t need = 0;
	rc = with_code(elf, &eh, nscn, len, target, NULL, &need, err);
	if (rc < 0)
		goto out;
	if (!out || *out_len < need) {
		*out_len = (size_t)need;
		rc = -ENOSPC;
		goto out;
	}
	memcpy(out, buf, len);
	memset((uint8_t *)out + len, 0, (size_t)(need - len));
	rc = with_code(elf, &eh, nscn, len, target, out, &need, err);
	if (rc >= 0)
		*out_len = (size_t)need;
out:
	if (elf)
		elf_end(elf);
	free(copy);
	return rc;
}

/* -- Symbols and sections of a loaded file, for the core and process modules -- */

/* A defined data object named `name`. */
static bool is_object_named(Elf *elf, size_t strndx, const GElf_Sym *s, const char *name)
{
	const char *sn;
	return s->st_shndx != SHN_UNDEF && GELF_ST_TYPE(s->st_info) == STT_OBJECT &&
	       (sn = elf_strptr(elf, strndx, s->st_name)) && !strcmp(sn, name);
}

/*
 * `name` in the .dynsym `syms` (section `ndx`, names in section `strndx`) by the GNU hash table
 * linked to it, as the dynamic linker finds it: a few words of the table and the names in one
 * chain, where reading every symbol of libLLVM touched 1 MB of symbols and 3 MB of names. 1 and
 * the symbol when found; 0 when the table's Bloom filter says it is not there; -1 when there is
 * no table, it does not hold together, or its filter says the name may be there and its chain
 * does not have it (the caller then reads every symbol: a damaged table hides nothing that its
 * filter still shows).
 */
static int gnu_hash_find(Elf *elf, size_t ndx, Elf_Data *syms, size_t strndx, const char *name,
			 GElf_Sym *out)
{
	Elf_Scn *scn = NULL;
	Elf_Data *h = NULL;
	while (!h && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_HASH && sh.sh_link == ndx)
			h = elf_getdata(scn, NULL);
	}
	/* libelf gives the words in the host's order: a header of 4, the Bloom filter (words of
	 * the class's size), a bucket per hash value, a chain word per hashed symbol. */
	const size_t nw = h && h->d_buf ? h->d_size / 4 : 0;
#define WORD(i) ({ uint32_t w_; memcpy(&w_, (const char *)h->d_buf + 4 * (i), 4); w_; })
	if (nw < 4)
		return -1;
	const size_t nbuckets = WORD(0), symoffset = WORD(1), nbloom = WORD(2);
	const unsigned shift = WORD(3), bits = gelf_getclass(elf) == ELFCLASS64 ? 64 : 32;
	const size_t bloom = nbloom * (bits / 32);
	if (!nbuckets || !nbloom || bloom > nw - 4 || nbuckets > nw - 4 - bloom)
		return -1;
	const size_t buckets = 4 + bloom, chain = buckets + nbuckets;
	uint32_t hash = 5381;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		hash = hash * 33 + *c;
	/* The filter: two bits of one word, both set for every name the table holds. */
	uint64_t word = 0;
	memcpy(&word, (const char *)h->d_buf + 16 + (hash / bits % nbloom) * (bits / 8), bits / 8);
	if (bits == 32)
		word = (uint32_t)word;
	if (!(word >> (hash % bits) & 1) || !(word >> ((hash >> (shift % 32)) % bits) & 1))
		return 0;
	for (size_t i = WORD(buckets + hash % nbuckets); i >= symoffset; i++) {
		if (i - symoffset >= nw - chain || i > INT_MAX)
			return -1;
		const uint32_t c = WORD(chain + i - symoffset);
		GElf_Sym sym;
		if ((c | 1) == (hash | 1) && gelf_getsym(syms, (int)i, &sym) &&
		    is_object_named(elf, strndx, &sym, name)) {
			*out = sym;
			return 1;
		}
		if (c & 1)
			break; /* the chain's last */
	}
	return -1; /* an empty bucket, or a chain without it, where the filter has it */
#undef WORD
}

int jitmap__elf_data_symbol(Elf *elf, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		GElf_Sym s;
		const int hashed =
			sh.sh_type == SHT_DYNSYM
				? gnu_hash_find(elf, elf_ndxscn(scn), d, sh.sh_link, name, &s)
				: -1;
		if (hashed == 1) {
			*value = s.st_value;
			return 0;
		}
		const size_t count = hashed ? d->d_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < count && i <= INT_MAX; i++) {
			if (gelf_getsym(d, (int)i, &s) &&
			    is_object_named(elf, sh.sh_link, &s, name)) {
				*value = s.st_value;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int jitmap__elf_section_address(Elf *elf, const char *name, uint64_t *addr)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOENT;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sn;
		if (gelf_getshdr(scn, &sh) && sh.sh_addr &&
		    (sn = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(sn, name)) {
			*addr = sh.sh_addr;
			return 0;
		}
	}
	return -ENOENT;
}

/* -- Compressed sections -- */

int jitmap_elf_compressed(int fd, uint64_t *uncompressed_size)
{
	uint64_t total = 0;
	int any = 0;
	if (uncompressed_size)
		*uncompressed_size = 0;
	if (fd < 0 || elf_ready(NULL))
		return 0;
	/* libelf reads with pread: the caller's file offset stays where it was. */
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e)
		return 0;
	if (elf_kind(e) == ELF_K_ELF) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh))
				break;
			if (sh.sh_flags & SHF_COMPRESSED) {
				GElf_Chdr ch;
				any = 1;
				total += gelf_getchdr(scn, &ch) ? ch.ch_size : sh.sh_size;
			} else if (sh.sh_type != SHT_NOBITS) {
				total += sh.sh_size;
			}
		}
	}
	elf_end(e);
	if (uncompressed_size)
		*uncompressed_size = total;
	return any;
}

/* `from`'s bytes onto `to` from offset 0 (both by pread/pwrite). 0 or -errno. */
static int copy_bytes(int from, int to)
{
	char buf[1 << 16];
	off_t off = 0;
	for (;;) {
		const ssize_t n = pread(from, buf, sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		for (ssize_t done = 0; done < n;) {
			const ssize_t w = pwrite(to, buf + done, (size_t)(n - done), off + done);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
			done += w;
		}
		off += n;
	}
}

int jitmap_elf_decompress(int in, int out)
{
	if (in < 0 || out < 0 || elf_ready(NULL))
		return -EINVAL;
	/* The copy first, then libelf rewrites it in place with every section inflated. */
	int rc = copy_bytes(in, out);
	if (rc)
		return rc;
	Elf *e = elf_begin(out, ELF_C_RDWR, NULL);
	if (!e)
		return -EINVAL;
	rc = elf_kind(e) == ELF_K_ELF ? 0 : -EINVAL;
	Elf_Scn *scn = NULL;
	while (!rc && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			rc = -EINVAL;
		else if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			rc = -EINVAL;
	}
	if (!rc && elf_update(e, ELF_C_WRITE) < 0)
		rc = -EIO;
	elf_end(e);
	return rc;
}

/* -- Build IDs -- */

size_t jitmap__elf_build_id(Elf *elf, uint8_t *out)
{
	size_t nph;
	if (elf_getphdrnum(elf, &nph))
		return 0;
	for (size_t i = 0; i < nph && i < 4096; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE || !ph.p_filesz)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						   ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (!d || !d->d_buf)
			continue;
		size_t off = 0, next, name_off, desc_off;
		GElf_Nhdr nh;
		while (off < d->d_size && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (next <= off || name_off > d->d_size || nh.n_namesz > d->d_size - name_off ||
			    desc_off > d->d_size || nh.n_descsz > d->d_size - desc_off)
				break;
			off = next;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((const char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz &&
			    nh.n_descsz <= JITMAP__MAX_BUILD_ID) {
				memcpy(out, (const char *)d->d_buf + desc_off, nh.n_descsz);
				return nh.n_descsz;
			}
		}
	}
	return 0;
}

size_t jitmap__buffer_build_id(void *buf, size_t len, uint8_t *out)
{
	Elf *elf = elf_memory(buf, len);
	const size_t n = elf && elf_kind(elf) == ELF_K_ELF ? jitmap__elf_build_id(elf, out) : 0;
	elf_end(elf);
	return n;
}

size_t jitmap__fd_build_id(int fd, uint8_t *out)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const size_t n = elf && elf_kind(elf) == ELF_K_ELF ? jitmap__elf_build_id(elf, out) : 0;
	elf_end(elf);
	return n;
}

size_t jitmap__file_build_id(const char *path, uint8_t *out)
{
	struct stat st;
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	const size_t n = jitmap__fd_build_id(fd, out);
	close(fd);
	return n;
}

/* The first page of a mapped ELF image: what the kernel dumps of every ELF mapping and what
 * ld puts the program headers and notes in. */
#define BUILD_ID_PAGE 4096

size_t jitmap__target_build_id(const jitmap_target *t, uint64_t addr, uint8_t *out)
{
	if (!t || !t->read_mem)
		return 0;
	uint8_t *page = malloc(BUILD_ID_PAGE);
	if (!page)
		return 0;
	char why[8];
	size_t n = BUILD_ID_PAGE, id = 0;
	/* A mapping shorter than a page: what there is, down to the ELF header. */
	while (n >= 64 && t->read_mem(t->ctx, addr, page, n, why, sizeof(why)))
		n /= 2;
	if (n >= 64)
		id = jitmap__buffer_build_id(page, n, out);
	free(page);
	return id;
}

void jitmap__build_id_hex(const uint8_t *id, size_t n, char *buf, size_t len)
{
	size_t k = 0;
	if (len)
		buf[0] = 0;
	for (size_t i = 0; i < n && k + 3 <= len; i++, k += 2)
		snprintf(buf + k, len - k, "%02x", id[i]);
}

size_t jitmap_image_build_id_at(const jitmap_target *target, uint64_t addr, uint8_t *out,
				size_t len)
{
	uint8_t id[JITMAP__MAX_BUILD_ID];
	const size_t n = out ? jitmap__target_build_id(target, addr, id) : 0;
	if (!n || n > len)
		return 0;
	memcpy(out, id, n);
	return n;
}
