/* core_files.c: a core's files beside its notes (include/jitmap/stopped.h): the file index
 * NT_FILE's paths are kept in (read under the sysroot), the program given as `exe` put in
 * the place of the file the core maps for it, and a core without NT_FILE (qemu-user's)
 * given its files: the executable where the auxiliary vector puts it, the libraries where
 * the dynamic linker's list in the core's memory does. core.c reads the notes and calls
 * these while it opens the core.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define MAX_BUILD_ID JITMAP__MAX_BUILD_ID

/* The statuses of its warnings (stopped.h's kinds and codes). */
#define BAD_FILE JITMAP__WARN(JITMAP_PROBLEM_FILE)
#define PLACED JITMAP__WARN(JITMAP_PROBLEM_FILES_PLACED)
#define PLACED_INFO JITMAP__INFO(JITMAP_PROBLEM_FILES_PLACED)

/* A warning with its status (JITMAP__WARN(JITMAP_PROBLEM_...), stopped.h's codes). */
#define warn(c, status, ...)                                                               \
	jitmap__status_problem(&(c)->warnings, (c)->warn_status, JITMAP__CORE_MAX_WARNINGS,    \
			       (status), __VA_ARGS__)

/* -- The files, by the path the core names them -- */

size_t jitmap__core_file_index(jitmap__core *c, const char *path)
{
	for (size_t i = 0; i < c->nfiles; i++)
		if (!strcmp(c->files[i].core_path, path))
			return i;
	struct jitmap__core_file *f = realloc(c->files, (c->nfiles + 1) * sizeof(*f));
	if (!f)
		return SIZE_MAX;
	c->files = f;
	char *copy = strdup(path), *read_path = NULL;
	if (copy && c->sysroot && path[0] == '/') {
		if (asprintf(&read_path, "%s%s", c->sysroot, path) < 0)
			read_path = NULL;
	} else if (copy) {
		read_path = strdup(path);
	}
	if (!copy || !read_path) {
		free(copy);
		free(read_path);
		return SIZE_MAX;
	}
	c->files[c->nfiles] = (struct jitmap__core_file){.path = read_path, .core_path = copy, .fd = -1};
	return c->nfiles++;
}

/* The value of the first NT_AUXV entry of `type`: 0, or -ENOENT (stopped.h). */
int jitmap__core_auxv(const jitmap__core *c, uint64_t type, uint64_t *value)
{
	for (size_t i = 0; i < c->nauxv; i++)
		if (c->auxv[2 * i] == type) {
			if (value)
				*value = c->auxv[2 * i + 1];
			return 0;
		}
	return -ENOENT;
}

/* -- --exe -- */

static int replace_file(jitmap__core *c, size_t fi, const char *exe)
{
	char *copy = strdup(exe);
	if (!copy)
		return -ENOMEM;
	free(c->files[fi].path);
	c->files[fi].path = copy;
	c->files[fi].given = 1;
	return 0;
}

/* Which mapped file `exe` stands for: by build ID, by real path, by base name. */
int jitmap__core_match_exe(jitmap__core *c, const char *exe)
{
	uint8_t want[MAX_BUILD_ID], got[MAX_BUILD_ID];
	const size_t want_len = jitmap__file_build_id(exe, want);
	char *real = realpath(exe, NULL);
	const char *exe_name = jitmap__base_name(exe);
	const char *real_name = real ? jitmap__base_name(real) : NULL;
	size_t match = SIZE_MAX;
	const char *how = "";
	int rc = 0;

	if (want_len)
		for (size_t i = 0; i < c->nfiles && match == SIZE_MAX; i++)
			if (jitmap__core_file_build_id(c, i, got) == want_len && !memcmp(got, want, want_len))
				match = i, how = "build ID";
	for (size_t i = 0; i < c->nfiles && match == SIZE_MAX && real; i++)
		if (!strcmp(c->files[i].core_path, real))
			match = i, how = "path";
	for (size_t i = 0; i < c->nfiles && match == SIZE_MAX; i++)
		if (!strcmp(jitmap__base_name(c->files[i].core_path), exe_name) ||
		    (real && !strcmp(jitmap__base_name(c->files[i].core_path), real_name)))
			match = i, how = "name";
	if (match == SIZE_MAX) {
		warn(c, BAD_FILE, "--exe %s: the core maps no file named %s%s%s", exe, exe_name,
		     real && strcmp(real_name, exe_name) ? " or " : "",
		     real && strcmp(real_name, exe_name) ? real_name : "");
		if (want_len && c->nfiles)
			warn(c, BAD_FILE, "--exe %s: no file the core maps has its build ID", exe);
	} else {
		if (strcmp(how, "build ID") && want_len) {
			size_t n = jitmap__core_file_build_id(c, match, got);
			if (n && (n != want_len || memcmp(got, want, n)))
				warn(c, BAD_FILE,
				     "--exe %s: its build ID differs from that of %s, which the core maps: "
				     "it is not the program that was dumped, and is not used", exe,
				     c->files[match].core_path);
		}
		rc = replace_file(c, match, exe);
	}
	free(real);
	return rc;
}

/* -- Cores without NT_FILE: the files from --exe and the dynamic linker's list -- */

#define MAX_LINK_MAP 4096 /* entries of the dynamic linker's list walked */
#define MAX_NAME 4096     /* bytes of a library's name */

/* Add a mapping of `len` bytes at `start`, file offset `offset`, for file `fi`. */
static int add_map(jitmap__core *c, uint64_t start, uint64_t len, uint64_t offset, size_t fi)
{
	if (!len || start > UINT64_MAX - len || c->nmaps >= JITMAP__CORE_MAX_MAPS)
		return 0;
	jitmap_stopped_mapping_info *m = realloc(c->maps, (c->nmaps + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	c->maps = m;
	size_t *f = realloc(c->map_file, (c->nmaps + 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	c->map_file = f;
	c->maps[c->nmaps] = (jitmap_stopped_mapping_info){start, start + len, offset, NULL, NULL};
	c->map_file[c->nmaps++] = fi;
	return 0;
}

/* Map file `fi` (open as `elf`) at `bias`: one mapping per PT_LOAD, for its file bytes. */
static int place_file(jitmap__core *c, size_t fi, Elf *elf, uint64_t bias)
{
	size_t nph;
	c->files[fi].has_bias = 1;
	c->files[fi].bias = bias;
	if (elf_getphdrnum(elf, &nph))
		return 0;
	for (size_t i = 0; i < nph && i < 4096; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		int rc = add_map(c, bias + ph.p_vaddr, ph.p_filesz, ph.p_offset, fi);
		if (rc)
			return rc;
	}
	return 0;
}

static int place_named(jitmap__core *c, const char *name, uint64_t bias)
{
	size_t fi = jitmap__core_file_index(c, name);
	if (fi == SIZE_MAX)
		return -ENOMEM;
	if (c->files[fi].has_bias)
		return 0; /* listed twice */
	int fd = jitmap__core_file_fd(c, fi);
	if (fd < 0) {
		c->files[fi].has_bias = 1; /* find_symbol warns that it cannot be opened */
		c->files[fi].bias = bias;
		return 0;
	}
	int rc = 0;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		rc = place_file(c, fi, elf, bias);
	elf_end(elf);
	return rc;
}

/* A NUL-terminated string at `addr` in the core's memory, or NULL. */
static char *read_string(jitmap__core *c, uint64_t addr)
{
	char *s = malloc(MAX_NAME);
	if (!s)
		return NULL;
	for (size_t n = 0; n < MAX_NAME; n += 64) {
		size_t chunk = 64;
		/* Byte by byte near the end of what is readable. */
		if (jitmap__core_read(c, addr + n, s + n, chunk, 1, NULL, 0)) {
			for (chunk = 0; chunk < 64; chunk++)
				if (jitmap__core_read(c, addr + n + chunk, s + n + chunk, 1, 1, NULL, 0))
					break;
		}
		char *nul = memchr(s + n, 0, chunk);
		if (nul)
			return s;
		if (chunk < 64)
			break;
	}
	free(s);
	return NULL;
}

/* glibc's struct r_debug {int r_version; struct link_map *r_map; ...} and struct link_map
 * {l_addr, l_name, l_ld, l_next, l_prev} of 64-bit targets (<link.h>). */
#define R_MAP 8
#define L_ADDR 0
#define L_NAME 8
#define L_LD 16
#define L_NEXT 24
#define MAX_DYNAMIC (64 * 1024) /* bytes of a dynamic section read */

static bool read_word(const jitmap_target *mem, jitmap_byte_order order, uint64_t addr,
		      uint64_t *v)
{
	uint8_t w[8];
	if (mem->read_mem(mem->ctx, addr, w, 8, NULL, 0))
		return false;
	*v = jitmap__load(w, 8, order);
	return true;
}

int jitmap__link_maps(const jitmap_target *mem, jitmap_byte_order order, uint64_t dyn,
		      uint64_t size, uint64_t *r_debug,
		      int (*each)(void *ctx, const struct jitmap__link_map *lm), void *ctx)
{
	*r_debug = 0;
	size = size < MAX_DYNAMIC ? size : MAX_DYNAMIC;
	for (uint64_t off = 0; off + 16 <= size && !*r_debug; off += 16) {
		uint64_t tag, val;
		if (!read_word(mem, order, dyn + off, &tag) || tag == DT_NULL ||
		    !read_word(mem, order, dyn + off + 8, &val))
			break;
		if (tag == DT_DEBUG)
			*r_debug = val;
	}
	uint64_t map = 0;
	if (!*r_debug || !read_word(mem, order, *r_debug + R_MAP, &map))
		return 0;
	for (size_t n = 0; map && n < MAX_LINK_MAP; n++) {
		uint8_t w[32];
		if (mem->read_mem(mem->ctx, map, w, sizeof(w), NULL, 0))
			break;
		const struct jitmap__link_map lm = {
			.at = map, .l_addr = jitmap__load(w + L_ADDR, 8, order),
			.l_name = jitmap__load(w + L_NAME, 8, order),
			.l_ld = jitmap__load(w + L_LD, 8, order)};
		map = jitmap__load(w + L_NEXT, 8, order);
		const int rc = each(ctx, &lm);
		if (rc)
			return rc;
	}
	return 0;
}

/* The core's own bytes (never a mapped file's: none is placed yet), as a target. */
static int core_only_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			  size_t why_len)
{
	return jitmap__core_read(ctx, addr, buf, len, 1, why, why_len);
}

struct placing {
	jitmap__core *c;
	size_t libs;
};

/* A library of the dynamic linker's list placed at its l_addr (not the executable, whose
 * name is "", nor the vDSO, whose name is no path). */
static int place_listed(void *ctx, const struct jitmap__link_map *lm)
{
	struct placing *pl = ctx;
	char *name = lm->l_name ? read_string(pl->c, lm->l_name) : NULL;
	int rc = 0;
	if (name && name[0] == '/') {
		rc = place_named(pl->c, name, lm->l_addr);
		pl->libs++;
	}
	free(name);
	return rc;
}

/* The executable `exe`, placed by the auxiliary vector (AT_PHDR, else AT_ENTRY), then every
 * library of the dynamic linker's list (DT_DEBUG -> r_debug -> link_map) placed at its
 * l_addr. For cores that carry no NT_FILE note (those qemu-user writes). */
int jitmap__core_files_from_exe(jitmap__core *c, const char *exe)
{
	size_t fi = jitmap__core_file_index(c, exe);
	if (fi == SIZE_MAX)
		return -ENOMEM;
	free(c->files[fi].path);
	if (!(c->files[fi].path = strdup(exe))) /* no sysroot: --exe is a path on this host */
		return -ENOMEM;
	c->files[fi].given = 1;
	int fd = jitmap__core_file_fd(c, fi);
	if (fd < 0) {
		warn(c, BAD_FILE, "--exe %s cannot be opened", exe);
		return 0;
	}
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	size_t nph = 0;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    elf_getphdrnum(elf, &nph)) {
		warn(c, BAD_FILE, "--exe %s is not an ELF file", exe);
		elf_end(elf);
		return 0;
	}
	uint64_t phdr = UINT64_MAX, dyn = 0, dyn_size = 0, at, bias = 0;
	for (size_t i = 0; i < nph && i < 4096; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_PHDR)
			phdr = ph.p_vaddr;
		else if (ph.p_type == PT_DYNAMIC)
			dyn = ph.p_vaddr, dyn_size = ph.p_memsz;
	}
	const char *how = NULL;
	if (phdr != UINT64_MAX && !jitmap__core_auxv(c, AT_PHDR, &at))
		bias = at - phdr, how = "AT_PHDR";
	else if (!jitmap__core_auxv(c, AT_ENTRY, &at))
		bias = at - eh.e_entry, how = "AT_ENTRY";
	else if (eh.e_type == ET_EXEC)
		how = "its fixed addresses";
	if (!how) {
		warn(c, PLACED,
		     "--exe %s: the core says neither where it is mapped (NT_FILE) nor where it "
		     "starts (AT_PHDR, AT_ENTRY)", exe);
		elf_end(elf);
		return 0;
	}
	int rc = place_file(c, fi, elf, bias);
	elf_end(elf);
	if (rc)
		return rc;
	struct placing pl = {.c = c};
	const jitmap_target mem = {.ctx = c, .read_mem = core_only_read};
	uint64_t debug;
	if (dyn && (rc = jitmap__link_maps(&mem, c->order, bias + dyn, dyn_size, &debug,
					   place_listed, &pl)))
		return rc;
	warn(c, PLACED_INFO,
	     "the core has no NT_FILE note: %s placed by %s, and %zu librar%s from the "
	     "dynamic linker's list", exe, how, pl.libs, pl.libs == 1 ? "y" : "ies");
	return 0;
}
