/* index.c: records by absolute PC, within one stackmap and across many.
 *
 * A PC is looked up on every frame a debugger shows, so lookups are binary searches over
 * arrays sorted once; arrays are rebuilt lazily after addresses change (relocations are
 * applied one function at a time, and rebuilding after each would be quadratic).
 */
#include <stdlib.h>

#include "../common/search.h"
#include "internal.h"

/* -- One stackmap -- */

static int cmp_entry(const void *a, const void *b)
{
	const struct jitmap_pc_entry *x = a, *y = b;
	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return x->record < y->record ? -1 : x->record > y->record;
}

int jitmap__stackmap_reindex(jitmap_stackmap *sm)
{
	if (!sm->index_dirty)
		return 0;
	struct jitmap_pc_entry *idx = malloc((sm->num_records + 1) * sizeof(*idx));
	size_t *fba = malloc((sm->num_functions + 1) * sizeof(*fba));
	if (!idx || !fba) {
		free(idx);
		free(fba);
		return -ENOMEM;
	}
	size_t n = 0;
	for (size_t i = 0; i < sm->num_records; i++) {
		const jitmap_record *r = &sm->records[i];
		if (r->function == JITMAP_NO_FUNCTION)
			continue; /* a v1 record whose function cannot be known */
		idx[n].pc = sm->functions[r->function].address + r->instruction_offset;
		idx[n].record = i;
		n++;
	}
	qsort(idx, n, sizeof(*idx), cmp_entry);
	/* Functions by address: reuse the entry type (pc = address, record = function). */
	struct jitmap_pc_entry *fe = malloc((sm->num_functions + 1) * sizeof(*fe));
	if (!fe) {
		free(idx);
		free(fba);
		return -ENOMEM;
	}
	for (size_t i = 0; i < sm->num_functions; i++) {
		fe[i].pc = sm->functions[i].address;
		fe[i].record = i;
	}
	qsort(fe, sm->num_functions, sizeof(*fe), cmp_entry);
	for (size_t i = 0; i < sm->num_functions; i++)
		fba[i] = fe[i].record;
	free(fe);
	free(sm->index);
	free(sm->functions_by_address);
	sm->index = idx;
	sm->index_len = n;
	sm->functions_by_address = fba;
	sm->index_dirty = 0;
	return 0;
}

/* First index entry with pc >= `pc`. */
static size_t lower_bound(const struct jitmap_pc_entry *e, size_t n, uint64_t pc)
{
	return JITMAP_LOWER_BOUND(e, n, pc, pc);
}

size_t jitmap_stackmap_lookup(const jitmap_stackmap *csm, uint64_t pc, const jitmap_record **out,
			      size_t max)
{
	jitmap_stackmap *sm = (jitmap_stackmap *)csm; /* the lazy index is a cache */
	if (jitmap__stackmap_reindex(sm))
		return 0;
	size_t i = lower_bound(sm->index, sm->index_len, pc), n = 0;
	for (; i < sm->index_len && sm->index[i].pc == pc; i++, n++)
		if (n < max)
			out[n] = &sm->records[sm->index[i].record];
	return n;
}

size_t jitmap_stackmap_find_id(const jitmap_stackmap *sm, uint64_t id, const jitmap_record **out,
			       size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < sm->num_records; i++) {
		if (sm->records[i].id != id)
			continue;
		if (n < max)
			out[n] = &sm->records[i];
		n++;
	}
	return n;
}

int jitmap_stackmap_nearest(const jitmap_stackmap *csm, uint64_t pc, const jitmap_record **before,
			    const jitmap_record **after)
{
	jitmap_stackmap *sm = (jitmap_stackmap *)csm;
	*before = *after = NULL;
	if (jitmap__stackmap_reindex(sm))
		return -ENOMEM;
	/* The function with the greatest address <= pc. */
	size_t lo = 0, hi = sm->num_functions;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sm->functions[sm->functions_by_address[mid]].address <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -ENOENT;
	const size_t fn = sm->functions_by_address[lo - 1];
	const jitmap_function *f = &sm->functions[fn];
	/* Past the end of that function (its symbol's size, when known), pc is in code that
	 * has no records, not in this function: a return address may equal the end. */
	if (sm->sizes[fn] && pc - f->address > sm->sizes[fn])
		return -ENOENT;
	uint64_t best_before = 0, best_after = UINT64_MAX;
	for (uint64_t k = 0; k < f->record_count; k++) {
		const jitmap_record *r = &sm->records[f->first_record + k];
		uint64_t rpc = f->address + r->instruction_offset;
		if (rpc <= pc && (!*before || rpc > best_before)) {
			*before = r;
			best_before = rpc;
		}
		if (rpc > pc && (!*after || rpc < best_after)) {
			*after = r;
			best_after = rpc;
		}
	}
	return 0;
}

/* -- Many stackmaps -- */

struct jitmap_index {
	const jitmap_stackmap **maps;
	uint64_t *generations; /* per map: its generation when the hits were last built */
	size_t num_maps, cap_maps;
	int dirty;
	jitmap_hit *hits; /* sorted by PC */
	uint64_t *pcs;
	size_t num_hits;
};

jitmap_index *jitmap_index_new(void)
{
	return calloc(1, sizeof(jitmap_index));
}

void jitmap_index_free(jitmap_index *idx)
{
	if (!idx)
		return;
	free(idx->maps);
	free(idx->generations);
	free(idx->hits);
	free(idx->pcs);
	free(idx);
}

int jitmap_index_add(jitmap_index *idx, const jitmap_stackmap *sm)
{
	for (size_t i = 0; i < idx->num_maps; i++)
		if (idx->maps[i] == sm)
			return -EEXIST;
	if (idx->num_maps == idx->cap_maps) {
		size_t cap = idx->cap_maps ? idx->cap_maps * 2 : 8;
		const jitmap_stackmap **m = realloc(idx->maps, cap * sizeof(*m));
		if (!m)
			return -ENOMEM;
		idx->maps = m;
		uint64_t *g = realloc(idx->generations, cap * sizeof(*g));
		if (!g)
			return -ENOMEM;
		idx->generations = g;
		idx->cap_maps = cap;
	}
	idx->generations[idx->num_maps] = sm->generation;
	idx->maps[idx->num_maps++] = sm;
	idx->dirty = 1;
	return 0;
}

int jitmap_index_remove(jitmap_index *idx, const jitmap_stackmap *sm)
{
	for (size_t i = 0; i < idx->num_maps; i++) {
		if (idx->maps[i] == sm) {
			idx->num_maps--;
			idx->maps[i] = idx->maps[idx->num_maps];
			idx->generations[i] = idx->generations[idx->num_maps];
			idx->dirty = 1;
			return 0;
		}
	}
	return -ENOENT;
}

struct merge_item {
	uint64_t pc;
	jitmap_hit hit;
	size_t map, record;
};

static int cmp_merge(const void *a, const void *b)
{
	const struct merge_item *x = a, *y = b;
	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	if (x->map != y->map)
		return x->map < y->map ? -1 : 1;
	return x->record < y->record ? -1 : x->record > y->record;
}

static int index_rebuild(jitmap_index *idx)
{
	/* A stackmap relocated or biased after it was added moved its records. */
	for (size_t m = 0; m < idx->num_maps && !idx->dirty; m++)
		if (idx->generations[m] != idx->maps[m]->generation)
			idx->dirty = 1;
	if (!idx->dirty)
		return 0;
	size_t total = 0;
	for (size_t m = 0; m < idx->num_maps; m++) {
		jitmap_stackmap *sm = (jitmap_stackmap *)idx->maps[m];
		if (jitmap__stackmap_reindex(sm))
			return -ENOMEM;
		total += sm->index_len;
	}
	struct merge_item *items = malloc((total + 1) * sizeof(*items));
	jitmap_hit *hits = malloc((total + 1) * sizeof(*hits));
	uint64_t *pcs = malloc((total + 1) * sizeof(*pcs));
	if (!items || !hits || !pcs) {
		free(items);
		free(hits);
		free(pcs);
		return -ENOMEM;
	}
	size_t n = 0;
	for (size_t m = 0; m < idx->num_maps; m++) {
		const jitmap_stackmap *sm = idx->maps[m];
		for (size_t i = 0; i < sm->index_len; i++, n++) {
			items[n].pc = sm->index[i].pc;
			items[n].map = m;
			items[n].record = sm->index[i].record;
			items[n].hit.stackmap = sm;
			items[n].hit.record = &sm->records[sm->index[i].record];
		}
	}
	qsort(items, n, sizeof(*items), cmp_merge);
	for (size_t i = 0; i < n; i++) {
		hits[i] = items[i].hit;
		pcs[i] = items[i].pc;
	}
	free(items);
	free(idx->hits);
	free(idx->pcs);
	idx->hits = hits;
	idx->pcs = pcs;
	idx->num_hits = n;
	for (size_t m = 0; m < idx->num_maps; m++)
		idx->generations[m] = idx->maps[m]->generation;
	idx->dirty = 0;
	return 0;
}

size_t jitmap_index_num_records(jitmap_index *idx)
{
	return index_rebuild(idx) ? 0 : idx->num_hits;
}

size_t jitmap_index_lookup(jitmap_index *idx, uint64_t pc, jitmap_hit *out, size_t max)
{
	if (index_rebuild(idx))
		return 0;
	size_t n = 0, lo = JITMAP_LOWER_BOUND_U64(idx->pcs, idx->num_hits, pc);
	for (; lo < idx->num_hits && idx->pcs[lo] == pc; lo++, n++)
		if (n < max)
			out[n] = idx->hits[lo];
	return n;
}
