/* process.c: the stackmaps of one process (see include/jitmap/process.h for the policy): the
 * object, its accessors and what the frame model asks of it. Its other parts, each calling
 * only those before it (model/internal.h): sources.c < images.c < handed.c < scan.c < code.c.
 *
 * Sources are kept from one scan to the next. JIT entries are found by their key (entry,
 * image address, image size) in an array sorted by key; files by (path, section address) in a
 * short list. A stackmap that a scan replaces, and every source it drops, stay alive until
 * jitmap_process_scan_end has taken them out of the index.
 *
 * A section parsed from memory is a `struct jitmap__parse`, shared by every source that read
 * the same bytes at the same address: the same JIT entry found by a descriptor walk and handed
 * in by a debugger (GDB's plugin and the Python commands use one process) is parsed and
 * indexed once.
 * It is buried when the last source lets go of it and the index no longer holds it.
 */
#include "internal.h"

#define DEFAULT_MAX_IMAGE (UINT64_C(256) << 20)
#define DEFAULT_MAX_SECTION (UINT64_C(256) << 20)

/* -- The object -- */

jitmap_process *jitmap_process_new(const jitmap_target *target, const jitmap_process_opts *opts)
{
	if (!target || !target->read_mem) {
		errno = EINVAL;
		return NULL;
	}
	jitmap_process_opts o = {0};
	if (opts) {
		if (!JITMAP__OPTS_VALID(opts, debug_dirs)) {
			errno = EINVAL;
			return NULL;
		}
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	}
	jitmap_process *p = calloc(1, sizeof(*p));
	if (!p || !(p->index = jitmap_index_new())) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	p->target = *target;
	p->max_entries = o.max_entries;
	p->max_image = o.max_image ? o.max_image : DEFAULT_MAX_IMAGE;
	p->max_section = o.max_section ? o.max_section : DEFAULT_MAX_SECTION;
	const unsigned flags = JITMAP_OPTS_HAS(&o, flags) ? o.flags : 0;
	p->lazy = flags & JITMAP_PROCESS_LAZY;
	p->replace_images = flags & JITMAP_PROCESS_REPLACE_IMAGES;
	if (JITMAP_OPTS_HAS(&o, debug_dirs) && o.debug_dirs &&
	    !(p->debug_dirs = strdup(o.debug_dirs))) {
		jitmap_process_free(p);
		errno = ENOMEM;
		return NULL;
	}
	if (flags & ~(JITMAP_PROCESS_LAZY | JITMAP_PROCESS_REPLACE_IMAGES)) {
		jitmap_process_free(p);
		errno = EINVAL;
		return NULL;
	}
	return p;
}

int jitmap_process_set_target(jitmap_process *p, const jitmap_target *target,
			      jitmap_target *previous)
{
	if (!p || !target || !target->read_mem)
		return -EINVAL;
	if (previous)
		*previous = p->target;
	p->target = *target;
	return 0;
}

void jitmap_process_flush(jitmap_process *p)
{
	if (!p)
		return;
	/* Every source lets go of its parse (buried when the last one does), then every buried
	 * stackmap goes. */
	for (size_t i = 0; i < p->njit; i++)
		jitmap__source_free(p, p->jit[i]);
	for (size_t i = 0; i < p->nobjects; i++)
		jitmap__source_free(p, p->objects[i]);
	for (size_t i = 0; i < p->nhanded; i++)
		jitmap__source_free(p, p->handed[i]);
	p->nhanded = 0;
	p->scanning = false;
	for (size_t i = 0; i < p->ndropped; i++)
		jitmap__source_free(p, p->dropped[i]);
	for (size_t i = 0; i < p->ngrave; i++)
		jitmap_stackmap_free(p->graveyard[i]);
	p->njit = p->nobjects = p->ndropped = p->ngrave = p->norder = p->ncode = 0;
	p->code_dirty = true;
	jitmap_index_free(p->index);
	p->index = jitmap_index_new(); /* NULL on ENOMEM: scan_end then fails politely */
	jitmap__problems_truncate(&p->problems, 0);
	jitmap__free_descriptors(p);
	p->unread_files = 0;
	for (size_t i = 0; i < p->ndrops; i++)
		free(p->drops[i].why);
	p->ndrops = 0;
	jitmap__problems_truncate(&p->taken, 0);
}

void jitmap_process_free(jitmap_process *p)
{
	if (!p)
		return;
	jitmap_process_flush(p);
	jitmap_index_free(p->index);
	free(p->jit);
	free(p->objects);
	free(p->handed);
	free(p->order);
	free(p->dropped);
	free(p->graveyard);
	free(p->parses);
	free(p->code);
	free(p->descs);
	free(p->drops);
	jitmap__problems_free(&p->problems);
	jitmap__problems_free(&p->taken);
	jitmap_perfmap_free(p->perfmap);
	free(p->glance_buf);
	free(p->debug_dirs);
	free(p);
}

/* -- Accessors -- */

size_t jitmap_process_num_sources(const jitmap_process *p) { return p->norder; }

int jitmap_process_source(const jitmap_process *p, size_t i, jitmap_source_info *out)
{
	if (i >= p->norder)
		return -ERANGE;
	return jitmap__fill_info(p->order[i], out);
}

const char *jitmap_process_source_problem(const jitmap_process *p, size_t i, size_t k)
{
	return i < p->norder ? jitmap__source_problem(p->order[i], k) : NULL;
}

const char *jitmap_process_source_note(const jitmap_process *p, size_t i, size_t k)
{
	return i < p->norder && k < p->order[i]->notes.n ? p->order[i]->notes.items[k] : NULL;
}

size_t jitmap_process_num_problems(const jitmap_process *p) { return p->problems.n; }

const char *jitmap_process_problem(const jitmap_process *p, size_t k)
{
	return k < p->problems.n ? p->problems.items[k] : NULL;
}

jitmap_index *jitmap_process_index(const jitmap_process *p) { return p->index; }

size_t jitmap_process_num_descriptors(const jitmap_process *p) { return p ? p->ndescs : 0; }

size_t jitmap_process_num_unread_files(const jitmap_process *p) { return p ? p->unread_files : 0; }

int jitmap_process_descriptor(const jitmap_process *p, size_t i, jitmap_descriptor_info *out)
{
	if (!p || !out || i >= p->ndescs)
		return -ERANGE;
	const struct jitmap__descriptor *d = &p->descs[i];
	const jitmap_descriptor_info full = {
		.sz = sizeof(full),
		.address = d->addr,
		.where = d->where,
		.readable = d->readable,
		.complete = d->complete,
		.num_entries = d->entries,
		.problem = d->problem,
	};
	return jitmap__give(out, &full, sizeof(full));
}

size_t jitmap_process_num_layout_images(const jitmap_process *p)
{
	return p ? p->layout_images : 0;
}

/* -- For the frame model (frame.c) -- */

static const struct jitmap__source *source_of(const jitmap_process *p, size_t i)
{
	/* The last scan's list first (the names the user sees in `info stackmaps`), then the
	 * images a debugger handed in. */
	if (i < p->norder)
		return p->order[i];
	i -= p->norder;
	return i < p->nhanded ? p->handed[i] : NULL;
}

size_t jitmap__process_num_stackmaps(const jitmap_process *p)
{
	return p ? p->norder + p->nhanded : 0;
}

const jitmap_stackmap *jitmap__process_stackmap(const jitmap_process *p, size_t i,
						struct jitmap__stackmap_source *out)
{
	const struct jitmap__source *s = source_of(p, i);
	if (!s)
		return NULL;
	if (out)
		*out = (struct jitmap__stackmap_source){
			.name = s->kind == JITMAP_SOURCE_JIT ? s->name : s->path,
			.image = s->image,
			.notes = (const char *const *)s->notes.items,
			.num_notes = s->notes.n,
		};
	return s->sm;
}
