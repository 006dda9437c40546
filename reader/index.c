/* index.c: records by absolute PC, within one stackmap and across many.
 *
 * A PC is looked up on every frame a debugger shows, so lookups are searches over arrays
 * sorted once and laid out for the cache (below); arrays are rebuilt lazily after addresses
 * change (relocations are applied one function at a time, and rebuilding after each would
 * be quadratic).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* -- The PC index's layout -- */

/*
 * A debugger's lookups are scattered, so at 10^6 records a binary search over a sorted array
 * misses the cache on nearly every one of its 20 steps, and each step waits for the last
 * (issue #24). The nodes are therefore laid out in Eytzinger (breadth-first) order: the 16
 * nodes four levels below node k are contiguous, so prefetching them at each step brings the
 * line needed four steps later, and the search is a loop without a branch to mispredict
 * (Khuong and Morin, "Array layouts for comparison-based searching", 2017).
 *
 * A narrow node is one uint64_t: pc - base in the high half, the record number in the low
 * half. Eight fit in a cache line (nodes 8k..8k+7 share one), comparing nodes compares PCs
 * and then record numbers, and the record number arrives with the key the search compared
 * last: the answer costs no further miss. A stackmap whose PCs span 4 GiB or more (merged
 * from distant JIT regions, or hostile) gets 16-byte wide nodes. DUP in a node's record
 * number says that the next node in PC order holds the same PC (LLVM emits several records at
 * one PC), so the common hit never looks at another node.
 */
struct pc_wide {
	uint64_t pc;
	uint64_t rec;
};
#define NARROW_DUP ((uint64_t)1 << 31)
#define NARROW_REC(node) ((size_t)((node) & (NARROW_DUP - 1)))
#define WIDE_DUP ((uint64_t)1 << 63)

void jitmap__pc_index_free(struct jitmap__pc_index *ix)
{
	jitmap__big_free(ix->nodes, ix->mapped);
	ix->nodes = NULL;
	ix->len = ix->mapped = 0;
}

/* The first node in PC order (the leftmost), or 0 when there are none. */
static size_t eyt_first(size_t n)
{
	size_t k = n ? 1 : 0;
	while (k && 2 * k <= n)
		k *= 2;
	return k;
}

/* The node after k in PC order (its in-order successor), or 0. */
static size_t eyt_next(size_t k, size_t n)
{
	if (2 * k + 1 <= n) {
		k = 2 * k + 1;
		while (2 * k <= n)
			k *= 2;
		return k;
	}
	while (k & 1)
		k >>= 1;
	return k >> 1;
}

/*
 * The search: from the root, right (k = 2k + 1) past the nodes whose key `op` x holds, left
 * past the others, down past the leaves; the k it ends with. The first node whose key is >= x
 * (op <) is the last node it went left from, which dropping the trailing ones of k (the right
 * turns since) and one more bit gives; the last node whose key is <= x (op <=), the mirror
 * image: the last right turn. 0 when there is none.
 * Nodes 16k..16k+15 are 2 cache lines of narrow nodes, 4 of 16-byte ones: prefetching one
 * line of them left the 16-byte index's search at 200-260 ns, as slow as bisection; all of
 * them, 100-120. The prefetches may point past the array: they do not fault.
 */
#define EYT_DESCEND(e, n, key, op, x)                                                          \
	({                                                                                   \
		size_t k_ = 1;                                                               \
		while (k_ <= (n)) {                                                          \
			const char *p_ = (const char *)(e) + 16 * k_ * sizeof(*(e));        \
			for (size_t l_ = 0; l_ < 16 * sizeof(*(e)); l_ += 64)                 \
				__builtin_prefetch(p_ + l_);                                  \
			k_ = 2 * k_ + (key((e)[k_]) op (x));                                 \
		}                                                                            \
		k_;                                                                          \
	})
#define EYT_LOWER_BOUND(e, n, key, x)                                                          \
	({                                                                                   \
		const size_t d_ = EYT_DESCEND(e, n, key, <, x);                              \
		d_ >> __builtin_ffsll((long long)~d_);                                       \
	})
#define EYT_LAST_AT_MOST(e, n, key, x)                                                         \
	({                                                                                   \
		const size_t d_ = EYT_DESCEND(e, n, key, <=, x);                             \
		d_ >> __builtin_ffsll((long long)d_);                                        \
	})
#define NARROW_KEY(node) (node)
#define WIDE_KEY(node) ((node).pc)

/* -- One stackmap -- */

/* Lay n entries sorted by (pc, rec) out as nodes (see above); their record numbers are
 * below nrec. */
static int pc_index_build(struct jitmap__pc_index *ix, const uint64_t *pc, const uint32_t *rec,
			  size_t n, size_t nrec)
{
	const uint64_t base = n ? pc[0] : 0;
	const bool narrow = nrec <= NARROW_DUP && (!n || pc[n - 1] - base <= UINT32_MAX);
	const size_t size = narrow ? sizeof(uint64_t) : sizeof(struct pc_wide);
	size_t mapped;
	void *nodes = jitmap__big_alloc((n + 1) * size, &mapped);
	if (!nodes)
		return -ENOMEM;
	/* In order: the sorted entries, one after another, at the nodes in PC order. */
	size_t k = eyt_first(n);
	for (size_t i = 0; i < n; i++, k = eyt_next(k, n)) {
		const uint64_t dup = i + 1 < n && pc[i + 1] == pc[i];
		if (narrow)
			((uint64_t *)nodes)[k] = (pc[i] - base) << 32 | dup * NARROW_DUP | rec[i];
		else
			((struct pc_wide *)nodes)[k] = (struct pc_wide){
				.pc = pc[i], .rec = dup * WIDE_DUP | rec[i]};
	}
	jitmap__pc_index_free(ix);
	*ix = (struct jitmap__pc_index){
		.nodes = nodes, .len = n, .mapped = mapped, .base = base, .narrow = narrow};
	return 0;
}

/* Node k's PC and record number. */
static uint64_t pc_node(const struct jitmap__pc_index *ix, size_t k, size_t *rec)
{
	if (ix->narrow) {
		const uint64_t e = ((const uint64_t *)ix->nodes)[k];
		*rec = NARROW_REC(e);
		return ix->base + (e >> 32);
	}
	const struct pc_wide *e = &((const struct pc_wide *)ix->nodes)[k];
	*rec = (size_t)(e->rec & ~WIDE_DUP);
	return e->pc;
}

/* The PC of entry i of an index of records (or of functions), or false for a record that has
 * none (a v1 record whose function cannot be known). */
static inline bool entry_pc(const jitmap_stackmap *sm, bool records, size_t i, uint64_t *pc)
{
	if (!records) {
		*pc = sm->functions[i].address;
		return true;
	}
	const jitmap_record *r = &sm->records[i];
	if (r->function == JITMAP_NO_FUNCTION)
		return false;
	*pc = sm->functions[r->function].address + r->instruction_offset;
	return true;
}

/*
 * Narrow nodes sorted by PC, in place of a sort of (pc, number) pairs: n of them in `a`, in
 * number order, sorted by radix on the bytes of their high halves that differ (a stable sort
 * keeps equal PCs in number order), between `a` and the scratch `b`. Returns the one that
 * holds them sorted. Half the memory of pairs and their scratch, and memory is what costs:
 * the first write to a page of a fresh mapping costs more than the sort's work on it.
 */
static uint64_t *narrow_sort(uint64_t *a, uint64_t *b, size_t n)
{
	unsigned shifts[8];
	size_t count[8][257] = {{0}};
	const unsigned passes = jitmap__radix_plan(a, n, 32, shifts, count);
	for (unsigned p = 0; p < passes; p++) {
		for (size_t i = 0; i < n; i++)
			b[count[p][(a[i] >> shifts[p]) & 0xff]++] = a[i];
		uint64_t *t = a;
		a = b;
		b = t;
	}
	return a;
}

/* The index of narrow nodes, when every PC is within 4 GiB above `base` and numbers fit: 1
 * when built, 0 when a PC is too far (the caller sorts pairs), or -ENOMEM. */
static int narrow_index(jitmap_stackmap *sm, struct jitmap__pc_index *ix, bool records,
			size_t count, uint64_t base)
{
	if (count > NARROW_DUP)
		return 0;
	size_t m_a, m_nodes, n = 0;
	uint64_t *a = jitmap__big_alloc((count + 1) * sizeof(*a), &m_a);
	uint64_t *nodes = jitmap__big_alloc((count + 1) * sizeof(*nodes), &m_nodes);
	int rc = -ENOMEM;
	if (!a || !nodes)
		goto out;
	uint64_t far = 0;
	for (size_t i = 0; i < count; i++) {
		uint64_t pc;
		if (!entry_pc(sm, records, i, &pc))
			continue;
		far |= (pc < base) | (pc - base) >> 32;
		a[n++] = (pc - base) << 32 | i;
	}
	rc = 0;
	if (far)
		goto out;
	const uint64_t *s = narrow_sort(a, nodes + 1, n);
	if (s != a)
		s = memcpy(a, s, n * sizeof(*a));
	/* In order: the sorted entries, one after another, at the nodes in PC order. */
	size_t k = eyt_first(n);
	for (size_t i = 0; i < n; i++, k = eyt_next(k, n))
		nodes[k] = s[i] | (i + 1 < n && s[i + 1] >> 32 == s[i] >> 32) * NARROW_DUP;
	jitmap__pc_index_free(ix);
	*ix = (struct jitmap__pc_index){.nodes = nodes, .len = n, .mapped = m_nodes, .base = base,
					.narrow = true};
	nodes = NULL;
	rc = 1;
out:
	jitmap__big_free(a, m_a);
	jitmap__big_free(nodes, m_nodes);
	return rc;
}

/*
 * One index, of the records by PC or of the functions by address. When every PC is within
 * 4 GiB above the lowest function address (every stackmap but merged or hostile ones), the
 * nodes are gathered narrow and sorted as they are; otherwise the (pc, number) pairs are
 * sorted and pc_index_build chooses. Record and function numbers are sorted as 32 bits: a
 * stackmap of 2^32 records would need hundreds of GB before it got here.
 */
static int index_build(jitmap_stackmap *sm, struct jitmap__pc_index *ix, bool records)
{
	const size_t count = records ? sm->num_records : sm->num_functions;
	if (count > UINT32_MAX)
		return -ENOMEM;
	uint64_t base = UINT64_MAX;
	for (size_t i = 0; i < sm->num_functions; i++)
		if ((!records || sm->functions[i].record_count) && sm->functions[i].address < base)
			base = sm->functions[i].address;
	int rc = narrow_index(sm, ix, records, count, base);
	if (rc)
		return rc < 0 ? rc : 0;

	/* pc and rec, then their scratch: one allocation each, 12 bytes an element */
	const size_t half = (count + 1) * (sizeof(uint64_t) + sizeof(uint32_t));
	size_t m_keys, m_tmp;
	uint64_t *pc = jitmap__big_alloc(half, &m_keys), *tk = jitmap__big_alloc(half, &m_tmp);
	rc = -ENOMEM;
	if (pc && tk) {
		uint32_t *rec = (uint32_t *)(pc + count + 1), *tv = (uint32_t *)(tk + count + 1);
		size_t n = 0;
		for (size_t i = 0; i < count; i++) {
			if (!entry_pc(sm, records, i, &pc[n]))
				continue;
			rec[n++] = (uint32_t)i;
		}
		jitmap__radix_sort(pc, rec, n, tk, tv);
		rc = pc_index_build(ix, pc, rec, n, count);
	}
	jitmap__big_free(pc, m_keys);
	jitmap__big_free(tk, m_tmp);
	return rc;
}

/*
 * The records' PCs, and the functions' addresses, are sorted by radix on the bytes that
 * differ (qsort's merge sort cost 16 bytes of scratch per record and a call per comparison).
 * Radix sorts are stable and the records go in in section order, so records at one PC stay
 * in section order, and functions at one address too.
 */
int jitmap__stackmap_reindex(jitmap_stackmap *sm)
{
	if (!sm->index_dirty)
		return 0;
	int rc = index_build(sm, &sm->by_address, false);
	if (!rc)
		rc = index_build(sm, &sm->index, true);
	if (!rc)
		sm->index_dirty = 0;
	return rc;
}

size_t jitmap_stackmap_lookup(const jitmap_stackmap *csm, uint64_t pc, const jitmap_record **out,
			      size_t max)
{
	jitmap_stackmap *sm = (jitmap_stackmap *)csm; /* the lazy index is a cache */
	if (jitmap__stackmap_reindex(sm))
		return 0;
	const struct jitmap__pc_index *ix = &sm->index;
	size_t k, n = 0;
	bool more;
	if (ix->narrow) {
		/* A PC below base wraps to an offset above every node's (PCs do not wrap). */
		const uint64_t off = pc - ix->base, *e = ix->nodes;
		if (off > UINT32_MAX)
			return 0;
		k = EYT_LOWER_BOUND(e, ix->len, NARROW_KEY, off << 32);
		if (!k || e[k] >> 32 != off)
			return 0;
		do {
			if (n < max)
				out[n] = &sm->records[NARROW_REC(e[k])];
			more = e[k] & NARROW_DUP;
			n++;
		} while (more && (k = eyt_next(k, ix->len)));
		return n;
	}
	const struct pc_wide *e = ix->nodes;
	k = EYT_LOWER_BOUND(e, ix->len, WIDE_KEY, pc);
	if (!k || e[k].pc != pc)
		return 0;
	do {
		if (n < max)
			out[n] = &sm->records[e[k].rec & ~WIDE_DUP];
		more = e[k].rec & WIDE_DUP;
		n++;
	} while (more && (k = eyt_next(k, ix->len)));
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
	/* The function with the greatest address <= pc (of several there, the last). */
	const struct jitmap__pc_index *ix = &sm->by_address;
	size_t k, fn;
	if (ix->narrow) {
		if (pc < ix->base)
			return -ENOENT;
		/* Every node at offset <= off: the low half's bits are flag and number. */
		const uint64_t off = pc - ix->base;
		const uint64_t x = off > UINT32_MAX ? UINT64_MAX : off << 32 | UINT32_MAX;
		const uint64_t *e = ix->nodes;
		k = EYT_LAST_AT_MOST(e, ix->len, NARROW_KEY, x);
	} else {
		const struct pc_wide *e = ix->nodes;
		k = EYT_LAST_AT_MOST(e, ix->len, WIDE_KEY, pc);
	}
	if (!k)
		return -ENOENT;
	(void)pc_node(ix, k, &fn);
	const jitmap_function *f = &sm->functions[fn];
	/* Past the end of that function (its symbol's size, when known), pc is in code that
	 * has no records, not in this function: a return address may equal the end. */
	if (sm->sizes[fn] && pc - f->address > sm->sizes[fn])
		return -ENOENT;
	uint64_t best_before = 0, best_after = UINT64_MAX;
	for (uint64_t i = 0; i < f->record_count; i++) {
		const jitmap_record *r = &sm->records[f->first_record + i];
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

/* A node of the index over many stackmaps: the PC index's layout (above), with the map's
 * number beside the record's; DUP in map as in a wide node's record. 16 bytes, so that the
 * answer comes with the last key compared. */
struct idx_node {
	uint64_t pc;
	uint32_t map;
	uint32_t rec;
};
#define IDX_DUP ((uint32_t)1 << 31)

struct jitmap_index {
	const jitmap_stackmap **maps;
	uint64_t *generations; /* per map: its generation when the nodes were last built */
	size_t num_maps, cap_maps;
	int dirty;
	struct idx_node *nodes; /* 1..num_hits, in Eytzinger order */
	size_t num_hits, mapped;
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
	jitmap__big_free(idx->nodes, idx->mapped);
	free(idx);
}

int jitmap_index_add(jitmap_index *idx, const jitmap_stackmap *sm)
{
	for (size_t i = 0; i < idx->num_maps; i++)
		if (idx->maps[i] == sm)
			return -EEXIST;
	if (idx->num_maps >= IDX_DUP - 1)
		return -ENOMEM; /* a map's number must fit beside IDX_DUP */
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

/*
 * The nodes hold every map's records sorted by (pc, map, record): each map's are taken in its
 * own index's PC order (records at one PC in section order), the maps in order, and a stable
 * radix sort by PC keeps that order among equal PCs.
 */
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
		total += sm->index.len;
	}
	if (total > UINT32_MAX)
		return -ENOMEM;
	/* pc and order, their scratch, and (map, rec) by order: 24 bytes an element */
	size_t m_keys, m_nodes;
	uint64_t *pc = jitmap__big_alloc((total + 1) * 24, &m_keys);
	struct idx_node *nodes = jitmap__big_alloc((total + 1) * sizeof(*nodes), &m_nodes);
	if (!pc || !nodes) {
		jitmap__big_free(pc, m_keys);
		jitmap__big_free(nodes, m_nodes);
		return -ENOMEM;
	}
	uint64_t *tk = pc + total + 1;
	uint32_t *order = (uint32_t *)(tk + total + 1), *tv = order + total + 1;
	/* Where each element came from, kept in the nodes' array until they are laid out. */
	struct idx_node *from = nodes + 1;
	size_t n = 0;
	for (size_t m = 0; m < idx->num_maps; m++) {
		const struct jitmap__pc_index *ix = &idx->maps[m]->index;
		for (size_t k = eyt_first(ix->len); k; k = eyt_next(k, ix->len), n++) {
			size_t rec;
			pc[n] = pc_node(ix, k, &rec);
			order[n] = (uint32_t)n;
			from[n] = (struct idx_node){.map = (uint32_t)m, .rec = (uint32_t)rec};
		}
	}
	jitmap__radix_sort(pc, order, n, tk, tv);
	/* Keep (map, rec) in sorted order where the scratch was, then lay the nodes out. */
	uint64_t *ref = tk;
	for (size_t i = 0; i < n; i++)
		ref[i] = (uint64_t)from[order[i]].map << 32 | from[order[i]].rec;
	size_t k = eyt_first(n);
	for (size_t i = 0; i < n; i++, k = eyt_next(k, n)) {
		const uint32_t dup = i + 1 < n && pc[i + 1] == pc[i];
		nodes[k] = (struct idx_node){.pc = pc[i],
					     .map = (uint32_t)(ref[i] >> 32) | dup * IDX_DUP,
					     .rec = (uint32_t)ref[i]};
	}
	jitmap__big_free(pc, m_keys);
	jitmap__big_free(idx->nodes, idx->mapped);
	idx->nodes = nodes;
	idx->mapped = m_nodes;
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
	const struct idx_node *e = idx->nodes;
	size_t k = EYT_LOWER_BOUND(e, idx->num_hits, WIDE_KEY, pc), n = 0;
	if (!k || e[k].pc != pc)
		return 0;
	bool more;
	do {
		if (n < max) {
			const jitmap_stackmap *sm = idx->maps[e[k].map & ~IDX_DUP];
			out[n] = (jitmap_hit){.stackmap = sm, .record = &sm->records[e[k].rec]};
		}
		more = e[k].map & IDX_DUP;
		n++;
	} while (more && (k = eyt_next(k, idx->num_hits)));
	return n;
}
