/* elf.c: stackmaps in ELF images, through libelf: an image opened from a file, from memory
 * or from a target's memory, its sections noted (code, CFI, DWARF, deopt layouts), its
 * stackmap parsed; a glance at one for the lazy scans; what it holds, asked.
 *
 * Objects (ET_REL) hold 0 in every Function Address field and an absolute 64-bit relocation
 * against the function symbol (stackmap-format.md §7); we apply those. LLVM's JIT registers
 * such a relocatable copy with sh_addr of each loaded section patched to its load address
 * (gdb-jit-interface.md §4), so "symbol value + sh_addr of its section" gives the runtime
 * address there and the section offset in a file. Executables and shared libraries hold
 * linked addresses; a load bias moves them.
 *
 * Beside it: the image's symbols (elf_symbols.c), the relocations of its stackmap section
 * (elf_reloc.c), a copy of it with its code (elf_with_code.c), other ELF files the library
 * reads (elf_files.c) and build IDs (build_id.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/deopt_layout.h"
#include "internal.h"

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
			rc = jitmap__elf_load_symbols(img, elf, scn);
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
	jitmap__elf_sort_symbols(img);
	if (img->debug_info) { /* functions named in DWARF alone (Mono's xdebug images) */
		const size_t before = img->num_syms;
		rc = jitmap__elf_load_dwarf_functions(img, elf, shstrndx);
		if (rc) {
			jitmap__fail(err, rc, 0, "out of memory");
			goto out;
		}
		rc = -EINVAL;
		if (img->num_syms != before)
			jitmap__elf_sort_symbols(img);
	}
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
		JITMAP_OPTS(jitmap_parse_opts, opts,
			    .order = eh.e_ident[EI_DATA] == ELFDATA2MSB ? JITMAP_ORDER_BIG
								       : JITMAP_ORDER_LITTLE,
			    .arch = img->arch);
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
			rc = jitmap__elf_apply_relocations(img, elf, elf_ndxscn(sm_scn), err);
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

int jitmap__elf_ready(jitmap_error *err)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return jitmap__fail(err, -ENOTSUP, 0, "libelf is too old");
	return 0;
}

jitmap_image *jitmap_image_open_file(const char *path, jitmap_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	if (jitmap__elf_ready(err)) {
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

/* An image up to this size is read from a target in one read (a JIT's usual object is a few KiB);
 * a larger one piece by piece: its header, section headers and the sections libjitmap uses. */
#define WHOLE_IMAGE_READ (UINT64_C(64) << 10)

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
	if (jitmap__elf_ready(err)) {
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
	if (!buf || jitmap__elf_ready(NULL))
		return -EINVAL;
	Elf *elf = elf_memory(buf, len);
	GElf_Ehdr eh;
	size_t shstrndx;
	int rc = -EINVAL;
	bool debug_info = false;
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
		if (!strcmp(name, ".debug_info") && sh.sh_type != SHT_NOBITS && sh.sh_size)
			debug_info = true;
		if (is_placed(&sh) && (sh.sh_flags & SHF_EXECINSTR)) { /* note_section's code */
			if (g->num_code == JITMAP__GLANCE_MAX_CODE)
				goto out;
			g->code[g->num_code++] = (jitmap_image_range){sh.sh_addr,
								      sh.sh_addr + sh.sh_size};
		}
		if ((sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) && eh.e_type == ET_REL &&
		    sh.sh_entsize) {
			/* Symbol values that are addresses (elf_symbols.c): a problem said at scan. */
			Elf_Data *d = elf_getdata(scn, NULL);
			if (!d || sh.sh_entsize != sizeof(Elf64_Sym) ||
			    jitmap__elf_values_are_addresses(elf, scn))
				goto out;
		}
	}
	/* No code in its sections but DWARF: its code may be named there alone (Mono's xdebug
	 * images), which only opening it reads. */
	if (debug_info && !g->num_code)
		goto out;
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

/* -- What a debugger's JIT reader needs -- */

jitmap_image *jitmap_image_open_memory_opts(const void *buf, size_t len,
					    const jitmap_image_opts *opts, jitmap_error *err)
{
	unsigned flags = 0;
	if (err)
		memset(err, 0, sizeof(*err));
	if (opts) {
		if (!JITMAP__OPTS_VALID(opts, flags)) {
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
	if (jitmap__elf_ready(err)) {
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
