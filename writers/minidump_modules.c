/* minidump_modules.c: which modules a minidump lists (minidump.h says why JIT code is listed as
 * modules of its own; minidump.c writes the list).
 *
 * A mapped ELF file is one module spanning its mappings (a run of mappings of one path),
 * named as the process named it (less the " (deleted)" of a core's file unlinked since it was
 * mapped: the walker looks its symbols up by the name's base), identified by its build ID;
 * the executable goes first, the walker's main module. The caller's JIT modules follow, each
 * left out where it overlaps one before it: Breakpad drops the whole list when two modules
 * overlap. Breakpad reads at most 2048.
 */
#define _GNU_SOURCE
#include <elf.h>

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
		if (!mk || strcmp(mk->core_path, first->core_path))
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
	m.id_len = jitmap_stopped_build_id_at(s, m.base, m.id, sizeof(m.id));
	if (m.id_len > sizeof(m.id))
		m.id_len = 0;
	return add_module(l, &m);
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

