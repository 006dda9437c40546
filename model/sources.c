/* sources.c (the process model): what every source of stackmaps is made of. Its texts
 * (problems and notes), the reads of target memory, the sections parsed from memory and shared
 * by every source that read the same bytes at the same address, their place in the index, and a
 * source's life: kept across scans, dropped and buried until the index lets go of it.
 */
#include <stdio.h>

#include "internal.h"

/* -- Small helpers -- */

const char *jitmap__err_text(const jitmap_error *err)
{
	return err->reason[0] ? err->reason : jitmap_strerror(err->code);
}

/* 64-bit FNV-1a: whether a live section's bytes changed since they were parsed. */
uint64_t jitmap__hash_bytes(const uint8_t *p, size_t n)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

int jitmap__read_mem(jitmap_process *p, uint64_t addr, void *buf, size_t len, char *why,
		    size_t why_len)
{
	why[0] = 0;
	int rc = p->target.read_mem(p->target.ctx, addr, buf, len, why, why_len);
	if (rc && !why[0])
		snprintf(why, why_len, "%s", jitmap_strerror(rc < 0 ? rc : -EFAULT));
	return rc ? (rc < 0 ? rc : -EFAULT) : 0;
}

/* -- Parsed sections -- */

static int cmp_parse(const struct jitmap__parse *h, uint64_t addr, uint64_t size, uint64_t hash)
{
	if (h->addr != addr)
		return h->addr < addr ? -1 : 1;
	if (h->size != size)
		return h->size < size ? -1 : 1;
	if (h->hash != hash)
		return h->hash < hash ? -1 : 1;
	return 0;
}

/* The position of the key in p->parses, or where it would go (*found says which). */
static size_t parse_find(const jitmap_process *p, uint64_t addr, uint64_t size, uint64_t hash,
			 bool *found)
{
	const size_t at = JITMAP_PARTITION_POINT(p->nparses, i,
						 cmp_parse(p->parses[i], addr, size, hash) < 0);
	*found = at < p->nparses && cmp_parse(p->parses[at], addr, size, hash) == 0;
	return at;
}

/* Bury `h` when no source holds it and the index does not either: its stackmap lives until
 * the next scan_end or recheck (what a caller was given stays valid until then). */
void jitmap__parse_release(jitmap_process *p, struct jitmap__parse *h)
{
	if (h->refs || h->indexed)
		return;
	bool found;
	const size_t at = parse_find(p, h->addr, h->size, h->hash, &found);
	if (found && p->parses[at] == h) {
		memmove(&p->parses[at], &p->parses[at + 1],
			(p->nparses - at - 1) * sizeof(*p->parses));
		p->nparses--;
	}
	/* Out of memory for the graveyard: the stackmap is leaked, never freed while in use. */
	if (jitmap__grow(&p->graveyard, &p->cap_grave, p->ngrave + 1, sizeof(*p->graveyard)) == 0)
		p->graveyard[p->ngrave++] = h->sm;
	free(h);
}

/* The parse of the `size` bytes at `addr` that `s` read: another source's when it read the
 * same bytes there (*fresh false), else a new one. NULL with `err` set when they do not
 * parse. */
struct jitmap__parse *jitmap__parse_bytes(jitmap_process *p, const uint8_t *bytes, uint64_t addr,
				 uint64_t size, uint64_t hash, jitmap_arch arch,
				 jitmap_byte_order order, bool *fresh, jitmap_error *err)
{
	bool found;
	size_t at = parse_find(p, addr, size, hash, &found);
	*fresh = false;
	if (found && p->parses[at]->arch == arch && p->parses[at]->order == order)
		return p->parses[at];
	*fresh = true;
	JITMAP_OPTS(const jitmap_parse_opts, opts, .order = order, .arch = arch);
	jitmap_stackmap *sm = jitmap_stackmap_parse(bytes, (size_t)size, &opts, err);
	if (!sm)
		return NULL;
	struct jitmap__parse *h = calloc(1, sizeof(*h));
	if (!h || (!found && jitmap__grow(&p->parses, &p->cap_parses, p->nparses + 1, sizeof(*p->parses)))) {
		free(h);
		jitmap_stackmap_free(sm);
		*err = (jitmap_error){.code = -ENOMEM};
		return NULL;
	}
	*h = (struct jitmap__parse){.sm = sm, .addr = addr, .size = size, .hash = hash, .arch = arch,
			    .order = order};
	if (!found) { /* (found: another architecture's parse of the same bytes, not shared) */
		memmove(&p->parses[at + 1], &p->parses[at], (p->nparses - at) * sizeof(*p->parses));
		p->parses[at] = h;
		p->nparses++;
	}
	return h;
}

/* Make `sm` the source's stackmap (its notes start again): `h`'s, or an image's when `h` is
 * NULL. The old one is let go of (the index may hold it until scan_end). */
void jitmap__set_stackmap(jitmap_process *p, struct jitmap__source *s, jitmap_stackmap *sm,
			 struct jitmap__parse *h, bool live)
{
	struct jitmap__parse *old = s->parse;
	if (h)
		h->refs++;
	jitmap__problems_truncate(&s->notes, 0);
	s->sm = sm;
	s->parse = h;
	s->live = live;
	if (old) {
		old->refs--;
		jitmap__parse_release(p, old);
	}
}

/* Put the source's stackmap in the index (once for a shared parse). */
int jitmap__index_put(jitmap_process *p, struct jitmap__source *s)
{
	struct jitmap__parse *h = s->parse;
	if (!h || h->indexed == 0) {
		const int r = jitmap_index_add(p->index, s->sm);
		if (r != 0 && r != -EEXIST)
			return r;
	}
	if (h)
		h->indexed++;
	s->indexed = s->sm;
	s->indexed_parse = h;
	return 0;
}

/* Take what the source put in the index out of it (once nobody else shares it). */
void jitmap__index_drop(jitmap_process *p, struct jitmap__source *s)
{
	struct jitmap__parse *h = s->indexed_parse;
	if (!s->indexed)
		return;
	if ((!h || --h->indexed == 0) && p->index)
		jitmap_index_remove(p->index, s->indexed);
	s->indexed = NULL;
	s->indexed_parse = NULL;
	if (h)
		jitmap__parse_release(p, h);
}

/* The index holds `s`'s current stackmap (or nothing, when it has none). */
int jitmap__index_now(jitmap_process *p, struct jitmap__source *s)
{
	if (s->indexed == s->sm)
		return 0;
	jitmap__index_drop(p, s);
	return s->sm ? jitmap__index_put(p, s) : 0;
}

/* -- Sources -- */

void jitmap__source_free(jitmap_process *p, struct jitmap__source *s)
{
	if (!s)
		return;
	jitmap__index_drop(p, s);
	jitmap__set_stackmap(p, s, NULL, NULL, false);
	if (s->image && jitmap_image_layouts(s->image))
		p->layout_images--;
	jitmap_image_free(s->image);
	jitmap_image_free(s->full_image);
	free(s->full_problem);
	free(s->path);
	jitmap__problems_free(&s->problems);
	jitmap__problems_free(&s->notes);
	free(s->spans);
	free(s->fns);
	jitmap_cfi_free(s->cfi);
	free(s->cfi_problem);
	free(s->code_problem);
	free(s);
}

void jitmap__free_buried(jitmap_process *p)
{
	for (size_t i = 0; i < p->ndropped; i++)
		jitmap__source_free(p, p->dropped[i]);
	p->ndropped = 0;
	for (size_t i = 0; i < p->ngrave; i++)
		jitmap_stackmap_free(p->graveyard[i]);
	p->ngrave = 0;
}

/* A source's problems: its list, then why its code could not be sampled, then why its CFI
 * could not be read (kept apart: a live read starts the list's tail again). */
static size_t num_problems(const struct jitmap__source *s)
{
	return s->problems.n + (s->code_problem != NULL) + (s->cfi_problem != NULL);
}

const char *jitmap__source_problem(const struct jitmap__source *s, size_t k)
{
	if (k < s->problems.n)
		return s->problems.items[k];
	k -= s->problems.n;
	if (s->code_problem && k-- == 0)
		return s->code_problem;
	return s->cfi_problem && k == 0 ? s->cfi_problem : NULL;
}

void jitmap__set_problem(char **slot, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(*slot);
	*slot = strdup(buf); /* NULL on ENOMEM: the problem is not said, nothing else changes */
}

int jitmap__drop_later(jitmap_process *p, struct jitmap__source *s)
{
	if (jitmap__grow(&p->dropped, &p->cap_dropped, p->ndropped + 1, sizeof(*p->dropped)))
		return -ENOMEM;
	p->dropped[p->ndropped++] = s;
	return 0;
}

int jitmap__list_source(jitmap_process *p, struct jitmap__source *s)
{
	if (s->listed)
		return 0;
	if (jitmap__grow(&p->order, &p->cap_order, p->norder + 1, sizeof(*p->order)))
		return -ENOMEM;
	s->listed_at = p->norder;
	p->order[p->norder++] = s;
	s->listed = true;
	return 0;
}

int jitmap__fill_info(const struct jitmap__source *s, jitmap_source_info *out)
{
	const jitmap_source_info full = {
		.sz = sizeof(full),
		.kind = s->kind,
		.name = s->kind == JITMAP_SOURCE_JIT ? s->name : s->path,
		.descriptor = s->descriptor,
		.entry = s->entry,
		.symfile_addr = s->symfile_addr,
		.symfile_size = s->symfile_size,
		.section_address = s->sm_addr,
		.section_size = s->sm_size,
		.bias = s->bias,
		.stackmap = s->sm,
		.live = s->live,
		.image = s->image,
		.num_problems = num_problems(s),
		.num_notes = s->notes.n,
		/* complete_live's count, said by completion_note (images.c) */
		.num_unrelocated = s->live && s->parse && s->parse->filled > 0
					   ? (size_t)s->parse->filled : 0,
	};
	return jitmap__give(out, &full, sizeof(full));
}
