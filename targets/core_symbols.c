/* core_symbols.c: the files a core maps, as ELF files: their load biases, the data symbols
 * jitmap__core_find_symbol looks up in them (and in the separate debug file of a stripped one,
 * debugfile.c), and each of them for the process model's scan of a core
 * (jitmap__core_each_file). Their bytes are core_memory.c's.
 */
#define _GNU_SOURCE
#include <gelf.h>
#include <stdio.h>

#include "internal.h"

/* -- Symbols -- */

/* Where file `fi`'s separate debug file is looked for: under the core's sysroot, in its
 * debug directories, with the build ID the process mapped (`id` holds it). */
static struct jitmap__debug_lookup debug_lookup(jitmap__core *c, size_t fi, uint8_t *id)
{
	return (struct jitmap__debug_lookup){.dirs = c->debug_dirs, .root = c->sysroot,
					     .build_id = id,
					     .build_id_len = jitmap__core_file_build_id(c, fi, id)};
}

/* The load bias of file `fi`: where its first page is mapped, minus where its first PT_LOAD
 * wants to be (0 for a fixed-address executable). */
static int file_bias(jitmap__core *c, size_t fi, Elf *elf, uint64_t *bias)
{
	if (c->files[fi].has_bias) {
		*bias = c->files[fi].bias;
		return 0;
	}
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh))
		return -1;
	if (eh.e_type == ET_EXEC) {
		*bias = 0;
		return 0;
	}
	uint64_t first = UINT64_MAX;
	size_t nph;
	if (elf_getphdrnum(elf, &nph))
		return -1;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0)
			first = ph.p_vaddr < first ? ph.p_vaddr : first;
	}
	if (first == UINT64_MAX)
		return -1;
	for (size_t i = 0; i < c->nmaps; i++)
		if (c->map_file[i] == fi && c->maps[i].offset == 0) {
			*bias = c->maps[i].start - (first & ~(uint64_t)0xfff);
			return 0;
		}
	return -1;
}

int jitmap__core_each_file(jitmap__core *c, jitmap__core_file_fn fn, void *ctx)
{
	for (size_t fi = 0; fi < c->nfiles; fi++) {
		const struct jitmap__core_file *f = &c->files[fi];
		int rc = 0;
		if (jitmap__core_file_fd(c, fi) < 0) {
			/* Not asked to open it, not a file ("[vdso]"-like names), or memory: nothing
			 * to say. */
			if (f->core_path[0] == '/' && (!(c->flags & JITMAP_CORE_NO_FILES) || f->given) &&
			    !jitmap__core_memory_not_file(c, fi)) {
				char why[256];
				if (f->refused)
					snprintf(why, sizeof(why), "%s", f->refused);
				else
					snprintf(why, sizeof(why), "cannot be opened (%s)",
						 f->open_errno ? strerror(f->open_errno)
							       : "not a regular file");
				rc = fn(ctx, f->path, NULL, false, 0, why, NULL);
			}
		} else {
			Elf *elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
			uint64_t bias = 0;
			if (elf && elf_kind(elf) == ELF_K_ELF) {
				const bool known = file_bias(c, fi, elf, &bias) == 0;
				uint8_t id[JITMAP__MAX_BUILD_ID];
				const struct jitmap__debug_lookup how = debug_lookup(c, fi, id);
				rc = fn(ctx, f->path, elf, known, bias, NULL, &how);
			}
			elf_end(elf);
		}
		if (rc)
			return rc;
	}
	return 0;
}

size_t jitmap__core_find_symbol(jitmap__core *c, const char *name, uint64_t *out,
			       const char **files, size_t max)
{
	size_t n = 0;
	for (size_t fi = 0; fi < c->nfiles; fi++) {
		int fd = jitmap__core_file_fd(c, fi);
		if (fd < 0) {
			struct jitmap__core_file *f = &c->files[fi];
			if (!f->warned && !f->refused && f->core_path[0] == '/' &&
			    !(c->flags & JITMAP_CORE_NO_FILES) && !jitmap__core_memory_not_file(c, fi)) {
				jitmap__status_problem(&c->warnings, c->warn_status,
						       JITMAP__CORE_MAX_WARNINGS,
						       JITMAP__WARN(JITMAP_PROBLEM_FILE),
						       "%s (mapped by the core) cannot be opened: "
						       "symbols in it are not found", f->path);
				f->warned = 1;
			}
			continue;
		}
		Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		uint64_t bias;
		if (!elf || elf_kind(elf) != ELF_K_ELF || file_bias(c, fi, elf, &bias)) {
			if (elf)
				elf_end(elf);
			continue;
		}
		uint64_t value;
		uint8_t id[JITMAP__MAX_BUILD_ID];
		const struct jitmap__debug_lookup how = debug_lookup(c, fi, id);
		if (jitmap__file_data_symbol(elf, c->files[fi].path, &how, name, &value, NULL, 0) ==
		    0) {
			if (n < max) {
				out[n] = value + bias;
				if (files)
					files[n] = c->files[fi].path;
			}
			n++;
		}
		elf_end(elf);
	}
	return n;
}
