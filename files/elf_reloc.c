/* elf_reloc.c: the relocations of an object's stackmap section, applied when elf.c opens it.
 *
 * What LLVM emits there (docs/relocations.md has the survey, llc-14 and llc-19, every target):
 * an absolute 64-bit relocation per Function Address field, and on RISC-V, where linker
 * relaxation may move code, an ADD32/SUB32 pair on a record's Instruction Offset field
 * (record label minus function symbol). Any other relocation costs only the field it touches:
 * a warning says which, and the field keeps its stored bytes. */
#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>

#include "internal.h"

#define R_RISCV_ADD32_ 35
#define R_RISCV_SUB32_ 39

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

int jitmap__elf_apply_relocations(jitmap_image *img, Elf *elf, size_t sm_index, jitmap_error *err)
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
			if (jitmap__elf_symbol_address(elf, ET_REL, s.st_value, s.st_shndx, &addr))
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
