/* minidump_modules.c: which modules a minidump lists (minidump.h says why JIT code is listed as
 * modules of its own; minidump.c writes the list).
 *
 * A mapped ELF file is one module spanning its mappings (a run of mappings of one path),
 * named as the process named it (less the " (deleted)" of a core's file unlinked since it was
 * mapped: the walker looks its symbols up by the name's base), identified by its build ID
 * (from memory, else from the file, else Breakpad's hash of its code);
 * the executable goes first, the walker's main module; the vDSO follows the files. The
 * caller's JIT modules come last, each left out where it overlaps one before it: Breakpad
 * drops the whole list when two modules overlap. Breakpad reads at most 2048.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <gelf.h>
#include <unistd.h>

#include "jitmap/minidump.h"

#include "internal.h"

#define MAX_MODULES 2048u

static bool overlaps(const struct jitmap__md_modules *l, uint64_t base, uint64_t size)
{
	for (size_t i = 0; i < l->n; i++)
		if (base < l->v[i].base + l->v[i].size && l->v[i].base < base + size)
			return true;
	return false;
}

static int add_module(struct jitmap__md_modules *l, const struct jitmap__md_module *m)
{
	if (jitmap__grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v)))
		return -ENOMEM;
	l->v[l->n++] = *m;
	return 0;
}

/* A gap between two mappings of one file that no loaded ELF image has between its segments:
 * past it, a mapping of the same file is another mapping of it, not a segment of that image
 * (Node.js maps its own executable's embedded builtins again, terabytes above it). */
#define MAX_SEGMENT_GAP (UINT64_C(1) << 30)

/* The identifier of the file the process maps at `addr` when its memory gives no build ID
 * (a core without the file's first page), read from the file as jitmap_stopped_mapped_file
 * opens it (never another build): its build ID; else Breakpad's identifier for a file without
 * one (file_id.cc, HashElfTextSection): the first 4096 bytes of its .text XORed 16 bytes at a
 * time (a last short piece read on past the section, as Breakpad reads it). dump_syms derives
 * the same from the file, so its symbol file matches the module. Its length, or 0. */
static size_t file_id(jitmap_stopped *s, uint64_t addr, uint8_t out[JITMAP__MAX_BUILD_ID])
{
	char path[512];
	const int fd = jitmap_stopped_mapped_file(s, addr, path, sizeof(path), NULL, 0);
	if (fd < 0)
		return 0;
	size_t n = jitmap__fd_build_id(fd, out), shstrndx;
	uint8_t text[4096];
	elf_version(EV_CURRENT);
	Elf *e = n ? NULL : elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	while (e && !elf_getshdrstrndx(e, &shstrndx) && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstrndx, sh.sh_name) : NULL;
		if (!name || strcmp(name, ".text") || sh.sh_type != SHT_PROGBITS || !sh.sh_size)
			continue;
		const size_t want = sh.sh_size >= sizeof(text) ? sizeof(text)
							      : (sh.sh_size + 15) & ~(size_t)15;
		const ssize_t got = pread(fd, text, want, (off_t)sh.sh_offset);
		if (got > 0) {
			memset(text + got, 0, sizeof(text) - (size_t)got);
			memset(out, 0, 16);
			for (size_t i = 0; i < want; i++)
				out[i % 16] ^= text[i];
			n = 16;
		}
		break;
	}
	elf_end(e);
	close(fd);
	return n;
}

/* The run of mappings [*i, end) of one path, as a module when an ELF image lies in it. */
static int file_module(jitmap_stopped *s, size_t *i, size_t nmaps, struct jitmap__md_modules *l)
{
	const jitmap_stopped_mapping_info *first = jitmap_stopped_mapping(s, *i);
	struct jitmap__md_module m = {.base = first->start, .path = first->core_path};
	uint64_t end = first->end;
	int image = 0;
	size_t k = *i;
	for (; k < nmaps; k++) {
		const jitmap_stopped_mapping_info *mk = jitmap_stopped_mapping(s, k);
		if (!mk || strcmp(mk->core_path, first->core_path) ||
		    (k > *i && mk->start - end > MAX_SEGMENT_GAP))
			break;
		end = mk->end;
		jitmap_stopped_module_info mod = {.sz = sizeof(mod)};
		if (!image && k - *i < 8 && jitmap_stopped_module_at(s, mk->start, &mod) == 1)
			image = 1;
	}
	*i = k;
	if (!image || end - m.base > UINT32_MAX || l->n >= MAX_MODULES)
		return 0;
	m.size = end - m.base;
	m.cut = strlen(m.path);
	static const char deleted[] = " (deleted)";
	if (m.cut >= sizeof(deleted) - 1 &&
	    !strcmp(m.path + m.cut - (sizeof(deleted) - 1), deleted))
		m.cut -= sizeof(deleted) - 1;
	/* A run that does not start at the file's first byte is no image the dynamic linker
	 * loaded there but the file mapped again (Node.js's embedded builtins): a symbol file's
	 * addresses, relative to the image's base, would be wrong by the offset, naming its
	 * frames after other functions. It is listed without an identifier: no symbols, and the
	 * walker's scan still takes return addresses in it. */
	if (first->offset != 0)
		return add_module(l, &m);
	m.id_len = jitmap_stopped_build_id_at(s, m.base, m.id, sizeof(m.id));
	if (m.id_len > sizeof(m.id))
		m.id_len = 0;
	if (!m.id_len)
		m.id_len = file_id(s, m.base, m.id);
	return add_module(l, &m);
}

/* The vDSO: an ELF image the kernel maps into every process, not a file (gettimeofday and
 * clock_gettime run in it; on AArch64 the signal return trampoline is there). Breakpad's
 * writer lists it as "linux-gate.so", so that a walker's scan accepts return addresses in it
 * and a symbol file made from the kernel's image names it. */
static int vdso_module(jitmap_stopped *s, struct jitmap__md_modules *l)
{
	uint64_t ehdr = 0;
	jitmap_stopped_memory_info mi = {.sz = sizeof(mi)};
	if (jitmap_stopped_auxv(s, AT_SYSINFO_EHDR, &ehdr) || !ehdr ||
	    jitmap_stopped_memory(s, ehdr, &mi) || mi.source == JITMAP_STOPPED_MEM_NONE ||
	    mi.segment_start > ehdr || mi.segment_end <= ehdr ||
	    mi.segment_end - ehdr > UINT32_MAX || l->n >= MAX_MODULES ||
	    overlaps(l, ehdr, mi.segment_end - ehdr))
		return 0;
	struct jitmap__md_module m = {.base = ehdr, .size = mi.segment_end - ehdr,
				      .path = "linux-gate.so"};
	m.cut = strlen(m.path);
	const jitmap_target t = jitmap_stopped_target(s);
	m.id_len = jitmap_image_build_id_at(&t, ehdr, m.id, sizeof(m.id));
	return m.id_len ? add_module(l, &m) : 0;
}

int jitmap__md_modules(jitmap_stopped *s, const jitmap_minidump_opts *o,
		       struct jitmap__md_modules *l, size_t *dropped)
{
	const size_t nmaps = jitmap_stopped_num_mappings(s);
	for (size_t i = 0; i < nmaps;) {
		const int rc = file_module(s, &i, nmaps, l);
		if (rc)
			return rc;
	}
	/* The executable: where the auxiliary vector puts its program headers (or entry). */
	uint64_t at = 0;
	if (jitmap_stopped_auxv(s, AT_PHDR, &at) && jitmap_stopped_auxv(s, AT_ENTRY, &at))
		at = 0;
	for (size_t i = 0; at && i < l->n; i++) {
		if (at - l->v[i].base < l->v[i].size) {
			const struct jitmap__md_module exe = l->v[i];
			memmove(l->v + 1, l->v, i * sizeof(*l->v));
			l->v[0] = exe;
			break;
		}
	}
	if (vdso_module(s, l))
		return -ENOMEM;
	for (size_t i = 0; i < o->num_jit_modules; i++) {
		const jitmap_minidump_module *j = &o->jit_modules[i];
		if (!j->path || !j->id || !j->id_len || j->id_len > 64 || !j->size ||
		    j->size > UINT32_MAX || j->base > UINT64_MAX - j->size ||
		    l->n >= MAX_MODULES || overlaps(l, j->base, j->size)) {
			(*dropped)++;
			continue;
		}
		struct jitmap__md_module m = {.base = j->base, .size = j->size, .path = j->path,
				   .cut = strlen(j->path), .id_len = j->id_len};
		memcpy(m.id, j->id, j->id_len);
		if (add_module(l, &m))
			return -ENOMEM;
	}
	return 0;
}

