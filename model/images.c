/* images.c (the process model): the JIT entries of a descriptor's list and their images.
 * An entry is kept from one scan to the next by its key; its image is opened from target memory
 * (or, in a lazy scan, glanced at until a PC falls in its code), its live stackmap section read
 * and read again by the policy of process.h. Then each image's code and functions, and the
 * table of every image's code by address that the lookups search.
 */
#include <inttypes.h>
#include <stdio.h>

#include "internal.h"

#define MAX_CODE_SPAN (UINT64_C(1) << 36) /* a larger "code" section is not code */

/* -- JIT entries -- */

static int cmp_key(const struct jitmap__source *s, uint64_t entry, uint64_t addr, uint64_t size)
{
	if (s->entry != entry)
		return s->entry < entry ? -1 : 1;
	if (s->symfile_addr != addr)
		return s->symfile_addr < addr ? -1 : 1;
	if (s->symfile_size != size)
		return s->symfile_size < size ? -1 : 1;
	return 0;
}

/* The position of the key in p->jit, or where it would go (*found says which). */
size_t jitmap__jit_find(const jitmap_process *p, const jitmap_jit_code *c, bool *found)
{
	const size_t at = JITMAP_PARTITION_POINT(
		p->njit, i, cmp_key(p->jit[i], c->entry, c->symfile_addr, c->symfile_size) < 0);
	*found = at < p->njit &&
		 cmp_key(p->jit[at], c->entry, c->symfile_addr, c->symfile_size) == 0;
	return at;
}

static size_t sample_len_of(const struct jitmap__source *s)
{
	return s->symfile_size < SAMPLE ? (size_t)s->symfile_size : SAMPLE;
}

static jitmap_image *open_image(jitmap_process *p, struct jitmap__source *s, unsigned flags)
{
	jitmap_error err;
	jitmap_image *img;
	if (s->handed && !s->bytes) {
		/* Its bytes were the debugger's: only what jitmap_process_add_image opened is
		 * left. */
		jitmap__problem(&s->problems, SIZE_MAX, "%s: the registered image is not kept", s->name);
		return NULL;
	}
	if (s->handed) {
		JITMAP_OPTS(const jitmap_image_opts, opts, .flags = flags);
		img = jitmap_image_open_memory_opts(s->bytes, (size_t)s->symfile_size, &opts, &err);
		if (!img)
			jitmap__problem(&s->problems, SIZE_MAX, "%s: offset 0x%" PRIx64 ": %s", s->name,
					 err.offset, jitmap__err_text(&err));
		return img;
	}
	img = jitmap_image_open_target(&p->target, s->symfile_addr, s->symfile_size, flags, &err);
	if (!img)
		jitmap__problem(&s->problems, SIZE_MAX,
				 "%s: image at 0x%" PRIx64 ": offset 0x%" PRIx64 ": %s", s->name,
				 s->symfile_addr, err.offset, jitmap__err_text(&err));
	return img;
}

static bool glance_jit_image(jitmap_process *p, struct jitmap__source *s, uint8_t *bytes);

/* Open the registered image without its stackmap copy (the live section is read instead); in
 * a lazy scan, only glance at it when that is enough (glance_jit_image). `bytes`: the image,
 * when the scan read it already (NULL: read here). */
static void open_jit_image(jitmap_process *p, struct jitmap__source *s, uint8_t *bytes)
{
	char why[160];
	if (!s->symfile_size || !s->symfile_addr) {
		jitmap__problem(&s->problems, SIZE_MAX,
				 "%s: empty image (address 0x%" PRIx64 ", %" PRIu64 " bytes)",
				 s->name, s->symfile_addr, s->symfile_size);
		return;
	}
	if (s->symfile_size > p->max_image) {
		jitmap__problem(&s->problems, SIZE_MAX,
			 "%s: image of %" PRIu64 " bytes at 0x%" PRIx64 " is larger than the %" PRIu64
			 " MiB limit; not read",
			 s->name, s->symfile_size, s->symfile_addr, p->max_image >> 20);
		return;
	}
	if (p->lazy && glance_jit_image(p, s, bytes))
		return;
	const size_t n = sample_len_of(s);
	if (jitmap__read_mem(p, s->symfile_addr, s->sample, n, why, sizeof(why))) {
		jitmap__problem(&s->problems, SIZE_MAX,
			 "%s: image at 0x%" PRIx64 " (%" PRIu64 " bytes) is not readable: %s", s->name,
			 s->symfile_addr, s->symfile_size, why);
		return;
	}
	s->sample_len = n;
	jitmap__open_opened(p, s);
}

/* What every JIT image gives once opened (from target memory or from a debugger's bytes):
 * its architecture, byte order and live stackmap section. */
void jitmap__open_opened(jitmap_process *p, struct jitmap__source *s)
{
	s->image = open_image(p, s, JITMAP_IMAGE_SKIP_STACKMAP);
	if (!s->image)
		return;
	if (jitmap_image_layouts(s->image))
		p->layout_images++;
	s->arch = jitmap_image_arch(s->image);
	s->order = jitmap_image_byte_order(s->image);
	if (jitmap_image_symbol_values_are_addresses(s->image))
		jitmap__problem(&s->problems, SIZE_MAX,
			 "%s: its function symbols hold addresses, not offsets in their section (GDB "
			 "alone places them outside it and shows ?\?): jitmap names the functions from "
			 "those addresses",
			 s->name);
	if (jitmap_image_layouts_problem(s->image))
		jitmap__problem(&s->problems, SIZE_MAX, "%s: %s", s->name,
				 jitmap_image_layouts_problem(s->image));
	if (jitmap_image_stackmap_section(s->image, &s->sm_addr, &s->sm_size) == 0)
		s->has_section = true;
	else
		s->complete = true; /* nothing to read: no stackmap */
}

static jitmap_stackmap *registered_copy(jitmap_process *p, struct jitmap__source *s)
{
	if (s->handed && !s->bytes && !s->full_tried)
		return NULL; /* read at first use, after the debugger's bytes went */
	if (!s->full_tried) {
		s->full_tried = true;
		const size_t before = s->problems.n;
		s->full_image = open_image(p, s, 0);
		if (s->problems.n > before)
			s->full_problem = strdup(s->problems.items[before]);
	} else if (!s->full_image && s->full_problem) {
		/* read_live drops the problems of the last read before reading again */
		jitmap__problem(&s->problems, SIZE_MAX, "%s", s->full_problem);
	}
	return s->full_image ? jitmap_image_stackmap(s->full_image) : NULL;
}

bool jitmap__has_unset_address(const jitmap_stackmap *sm)
{
	for (size_t i = 0; i < sm->num_functions; i++)
		if (!sm->functions[i].address)
			return true;
	return false;
}

/* Name the live stackmap's functions from the image's symbols, and fill the addresses it does
 * not hold yet from the registered copy. Returns whether the live section held every address
 * itself. */
static bool complete_live(jitmap_process *p, struct jitmap__source *s, struct jitmap__parse *h)
{
	h->filled = 0;
	if (jitmap_image_name_functions(s->image, h->sm) < 0)
		return false;
	if (!jitmap__has_unset_address(h->sm))
		return true;
	jitmap_stackmap *copy = registered_copy(p, s);
	h->filled = copy ? jitmap_stackmap_merge(h->sm, copy) : -EINVAL;
	return false;
}

/* What complete_live did, said in the notes of each source that uses the parse. */
static void completion_note(struct jitmap__source *s, const struct jitmap__parse *h)
{
	const int filled = h->filled;
	if (filled > 0)
		jitmap__problem(&s->notes, SIZE_MAX,
			 "%d function address%s not relocated in memory yet (MCJIT before "
			 "finalization): taken from the registered copy",
			 filled, filled == 1 ? "" : "es");
	else if (filled < 0)
		jitmap__problem(&s->notes, SIZE_MAX,
				 "function addresses are 0 in memory, and the registered copy "
				 "does not match the live section");
}

/* (Re)parse the live section; fall back to the registered copy. */
static void read_live(jitmap_process *p, struct jitmap__source *s)
{
	char problem[320] = "", why[160];
	uint8_t *live = NULL;

	if (!s->has_section) {
		s->complete = true;
		return;
	}
	jitmap__problems_truncate(&s->problems, s->open_problems);
	if (!s->sm_addr) {
		snprintf(problem, sizeof(problem), "its .llvm_stackmaps has no load address (sh_addr 0)");
	} else if (s->sm_size > p->max_section || s->sm_size > SIZE_MAX) {
		snprintf(problem, sizeof(problem),
			 ".llvm_stackmaps at 0x%" PRIx64 " is %" PRIu64 " bytes, over the %" PRIu64
			 " MiB limit",
			 s->sm_addr, s->sm_size, p->max_section >> 20);
	} else if (!(live = malloc(s->sm_size ? (size_t)s->sm_size : 1))) {
		snprintf(problem, sizeof(problem), "out of memory for its %" PRIu64 "-byte stackmap",
			 s->sm_size);
	} else if (jitmap__read_mem(p, s->sm_addr, live, (size_t)s->sm_size, why, sizeof(why))) {
		snprintf(problem, sizeof(problem), ".llvm_stackmaps at 0x%" PRIx64 " is not readable: %s",
			 s->sm_addr, why);
		free(live);
		live = NULL;
	}
	if (live) {
		const uint64_t h = jitmap__hash_bytes(live, (size_t)s->sm_size);
		if (s->have_hash && h == s->live_hash && s->sm && s->live) {
			free(live);
			return;
		}
		s->have_hash = false;
		jitmap_error err;
		bool fresh;
		struct jitmap__parse *parsed = jitmap__parse_bytes(p, live, s->sm_addr, s->sm_size, h,
							   s->arch, s->order, &fresh, &err);
		const size_t head_len = s->sm_size < SAMPLE ? (size_t)s->sm_size : SAMPLE;
		memcpy(s->live_head, live, head_len);
		free(live);
		if (!parsed) {
			snprintf(problem, sizeof(problem),
				 ".llvm_stackmaps at 0x%" PRIx64 ": offset 0x%" PRIx64 ": %s", s->sm_addr,
				 err.offset, jitmap__err_text(&err));
		} else {
			jitmap__set_stackmap(p, s, parsed->sm, parsed, true);
			if (fresh)
				parsed->complete = complete_live(p, s, parsed);
			completion_note(s, parsed);
			s->complete = parsed->complete;
			s->live_hash = h;
			s->have_hash = true;
			s->live_head_len = head_len;
		}
	}
	if (problem[0] && s->sm && s->live) /* the bytes it was parsed from are gone */
		jitmap__set_stackmap(p, s, NULL, NULL, false);
	if (s->handed && !s->complete && s->sm && s->live && jitmap__has_unset_address(s->sm) &&
	    !registered_copy(p, s)) {
		/* MCJIT before finalization, and no registered copy: not usable until relocated. */
		jitmap__set_stackmap(p, s, NULL, NULL, false);
		s->have_hash = false;
		jitmap__problem(&s->notes, SIZE_MAX, "function addresses are 0 in memory (MCJIT before "
				    "finalization): read again at the next stop");
		return;
	}
	if (!s->sm || !s->live) {
		jitmap_stackmap *copy = registered_copy(p, s);
		if (copy) {
			jitmap__set_stackmap(p, s, copy, NULL, false);
			jitmap__problem(&s->notes, SIZE_MAX, "read from the registered copy: %s",
				 problem[0] ? problem : "no live section");
		}
	}
	if (problem[0])
		jitmap__problem(&s->problems, SIZE_MAX, "%s: %s%s", s->name, problem,
			 s->sm ? "; using the registered copy" : "");
}

/* Whether a complete live section's first bytes changed since it was parsed (a JIT that
 * reuses a stackmap's memory in place): it is then read again. */
static bool live_head_changed(jitmap_process *p, struct jitmap__source *s)
{
	uint8_t now[SAMPLE];
	char why[160];
	if (!s->complete || !s->live || !s->live_head_len)
		return false;
	return jitmap__read_mem(p, s->sm_addr, now, s->live_head_len, why, sizeof(why)) ||
	       memcmp(now, s->live_head, s->live_head_len);
}

/* Read the live section again if the policy says so; true when it was. */
bool jitmap__refresh_live(jitmap_process *p, struct jitmap__source *s)
{
	if (!s->image)
		return false;
	if (live_head_changed(p, s)) {
		s->complete = false;
		s->have_hash = false;
	}
	if (s->complete)
		return false;
	read_live(p, s);
	return true;
}

/* jitmap__refresh_live, and a section read again indexed now (out of memory: said as the
 * source's problem). For a lookup at an image's first use and for the refresh at a stop. */
void jitmap__refresh_live_indexed(jitmap_process *p, struct jitmap__source *s)
{
	if (jitmap__refresh_live(p, s) && jitmap__index_now(p, s))
		jitmap__problem(&s->problems, SIZE_MAX, "%s: out of memory indexing its stackmap",
				s->name);
}

/* `bytes`: the entry's image, when the scan read it already (batch_images), or NULL. */
int jitmap__scan_entry(jitmap_process *p, uint64_t descriptor, const jitmap_jit_code *c,
		      uint8_t *bytes)
{
	bool found;
	size_t at = jitmap__jit_find(p, c, &found);
	struct jitmap__source *s = found ? p->jit[at] : NULL;
	if (s && s->seen)
		return 0; /* listed twice (two descriptors sharing a list) */
	if (s) {
		uint8_t now[SAMPLE];
		char why[160];
		const size_t n = sample_len_of(s);
		const bool same =
			s->sample_len == n &&
			jitmap__read_mem(p, c->symfile_addr, now, n, why, sizeof(why)) == 0 &&
			!memcmp(now, s->sample, n);
		if (!same) {
			if (jitmap__drop_later(p, s))
				return -ENOMEM;
			memmove(&p->jit[at], &p->jit[at + 1], (p->njit - at - 1) * sizeof(*p->jit));
			p->njit--;
			s = NULL;
		}
	}
	const bool kept = s != NULL;
	if (!s) {
		if (jitmap__grow(&p->jit, &p->cap_jit, p->njit + 1, sizeof(*p->jit)))
			return -ENOMEM;
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		s->kind = JITMAP_SOURCE_JIT;
		s->descriptor = descriptor;
		s->entry = c->entry;
		s->symfile_addr = c->symfile_addr;
		s->symfile_size = c->symfile_size;
		snprintf(s->name, sizeof(s->name), "JIT entry 0x%" PRIx64, c->entry);
		open_jit_image(p, s, bytes);
		s->open_problems = s->problems.n;
		at = jitmap__jit_find(p, c, &found);
		memmove(&p->jit[at + 1], &p->jit[at], (p->njit - at) * sizeof(*p->jit));
		p->jit[at] = s;
		p->njit++;
	}
	s->seen = true;
	/* A lazy scan reads an entry's live section at its first use (jitmap_process_code_at);
	 * one read before is read again here, at the scan, as any scan's: a lookup never reads
	 * again. */
	if (p->lazy && (!kept || s->recheck))
		s->recheck = true;
	else
		jitmap__refresh_live(p, s);
	return jitmap__list_source(p, s);
}

/* -- Code and functions of JIT images -- */

static int cmp_code(const void *a, const void *b)
{
	const struct jitmap__code_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->rank > y->rank ? -1 : x->rank < y->rank;
}

static int cmp_range(const void *a, const void *b)
{
	const jitmap_image_range *x = a, *y = b;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

static int cmp_function(const void *a, const void *b)
{
	const jitmap_code_function *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->hi < y->hi) - (x->hi > y->hi); /* the larger first */
}

/* The element of a sorted array of disjoint [lo, hi) ranges that holds `addr`, or NULL. Serves
 * code ranges and functions alike: both start with `uint64_t lo, hi` (checked below). */
static const void *range_at(const void *base, size_t n, size_t stride, uint64_t addr)
{
	const size_t lo = jitmap_bound_u64(base, n, stride, offsetof(jitmap_image_range, lo), addr, 1);
	if (!lo)
		return NULL;
	const void *at = (const char *)base + (lo - 1) * stride;
	return addr < ((const jitmap_image_range *)at)->hi ? at : NULL;
}
_Static_assert(offsetof(jitmap_code_function, lo) == offsetof(jitmap_image_range, lo) &&
		       offsetof(jitmap_code_function, hi) == offsetof(jitmap_image_range, hi),
	       "range_at reads functions as code ranges");

const jitmap_image_range *jitmap__span_at(const struct jitmap__source *s, uint64_t addr)
{
	return range_at(s->spans, s->nspans, sizeof(*s->spans), addr);
}

const jitmap_code_function *jitmap__function_in(const struct jitmap__source *s, uint64_t addr)
{
	return range_at(s->fns, s->nfns, sizeof(*s->fns), addr);
}

/* The image's code: its executable sections placed in memory, sorted, merged where they
 * touch; a section over MAX_CODE_SPAN is left out. 0 or -ENOMEM. From the glance at a lazy
 * scan's image (`g`), or else from the image opened. */
static int make_spans_from(struct jitmap__source *s, const struct jitmap__glance *g)
{
	if (s->spans_made || (!s->image && !g))
		return 0;
	const size_t n = g ? g->num_code : jitmap_image_num_code_ranges(s->image);
	jitmap_image_range *v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const jitmap_image_range *r = g ? &g->code[i] : jitmap_image_code_range(s->image, i);
		if (r && r->lo < r->hi && r->hi - r->lo <= MAX_CODE_SPAN)
			v[k++] = *r;
	}
	if (k)
		qsort(v, k, sizeof(*v), cmp_range);
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m && v[i].lo <= v[m - 1].hi) {
			if (v[i].hi > v[m - 1].hi)
				v[m - 1].hi = v[i].hi;
		} else {
			v[m++] = v[i];
		}
	}
	s->spans = v;
	s->nspans = m;
	s->spans_made = true;
	return 0;
}

int jitmap__make_spans(struct jitmap__source *s)
{
	return make_spans_from(s, NULL);
}

/* A lazy scan's look at a JIT image (elf.c, jitmap__image_glance): when it is plain, where its
 * code is, its architecture and byte order are all a scan needs, and opening it waits until a
 * PC falls in that code (open_glanced). True when glanced; false to open it now (larger than
 * GLANCE_MAX_IMAGE, unreadable whole, not plain, or no memory): that path says what is wrong,
 * as it always did. */
static bool glance_jit_image(jitmap_process *p, struct jitmap__source *s, uint8_t *bytes)
{
	struct jitmap__glance g;
	char why[160];
	if (s->symfile_size > GLANCE_MAX_IMAGE)
		return false;
	if (!bytes) {
		if (jitmap__grow(&p->glance_buf, &p->glance_cap, (size_t)s->symfile_size, 1) ||
		    jitmap__read_mem(p, s->symfile_addr, p->glance_buf, (size_t)s->symfile_size,
				     why, sizeof(why)))
			return false;
		bytes = p->glance_buf;
	}
	const bool plain = jitmap__image_glance(bytes, (size_t)s->symfile_size, &g) == 0 &&
			   make_spans_from(s, &g) == 0;
	if (plain) {
		s->sample_len = sample_len_of(s);
		memcpy(s->sample, bytes, s->sample_len);
		s->arch = g.arch;
		s->order = g.order;
		s->glanced = true;
	}
	return plain;
}

/* A glanced image opened, now that a PC fell in its code: as a scan that is not lazy opens
 * it. Its code is the image's from now on; should that differ from the glance's (memory that
 * changed since), the code table is rebuilt. */
void jitmap__open_glanced(jitmap_process *p, struct jitmap__source *s)
{
	jitmap_image_range *old = s->spans;
	const size_t nold = s->nspans;
	s->glanced = false;
	s->spans = NULL;
	s->nspans = 0;
	s->spans_made = false;
	jitmap__open_opened(p, s);
	s->open_problems = s->problems.n;
	if (jitmap__make_spans(s) || s->nspans != nold ||
	    (nold && memcmp(old, s->spans, nold * sizeof(*old))))
		p->code_dirty = true;
	free(old);
}

/* The image's functions: its function symbols inside its code, sorted, one per address (the
 * largest), each cut at the next; one without a size reaches the next function or the end of
 * its code range (hand-written code). Debuggers want functions that do not overlap (GDB's
 * blocks), and an unwinder wants a function's start and end. 0 or -ENOMEM. */
int jitmap__make_fns(struct jitmap__source *s)
{
	if (s->fns_made || !s->image)
		return 0;
	if (jitmap__make_spans(s))
		return -ENOMEM;
	const size_t n = jitmap_image_num_symbols(s->image);
	jitmap_code_function *f = malloc((n ? n : 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		jitmap_image_symbol_info si = {.sz = sizeof(si)};
		if (jitmap_image_symbol(s->image, i, &si) || !si.name ||
		    !jitmap__span_at(s, si.address))
			continue;
		const uint64_t hi = si.size <= UINT64_MAX - si.address ? si.address + si.size
								      : UINT64_MAX;
		f[k++] = (jitmap_code_function){si.address, hi, si.name};
	}
	if (k)
		qsort(f, k, sizeof(*f), cmp_function);
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m && f[i].lo == f[m - 1].lo)
			continue; /* an alias: the first (largest) stays */
		if (m && f[m - 1].hi > f[i].lo)
			f[m - 1].hi = f[i].lo;
		f[m++] = f[i];
	}
	k = 0;
	for (size_t i = 0; i < m; i++) {
		uint64_t limit = jitmap__span_at(s, f[i].lo)->hi;
		if (i + 1 < m && f[i + 1].lo < limit)
			limit = f[i + 1].lo;
		if (f[i].hi == f[i].lo || f[i].hi > limit)
			f[i].hi = limit;
		if (f[i].hi > f[i].lo)
			f[k++] = f[i];
	}
	s->fns = f;
	s->nfns = k;
	s->fns_made = true;
	return 0;
}

/* Of two images of the same code range, the one of the smaller rank answers: a scan's
 * sources in the order listed (the newest registration first), then images handed in. */
static size_t code_rank(const struct jitmap__source *s)
{
	return s->handed ? SIZE_MAX / 2 + (size_t)s->id : s->listed ? s->listed_at : SIZE_MAX;
}

static int add_code(jitmap_process *p, struct jitmap__source *s)
{
	if (!s->image && !s->glanced)
		return 0;
	if (jitmap__make_spans(s) || jitmap__grow(&p->code, &p->cap_code, p->ncode + s->nspans, sizeof(*p->code)))
		return -ENOMEM;
	for (size_t i = 0; i < s->nspans; i++)
		p->code[p->ncode++] = (struct jitmap__code_range){s->spans[i].lo, s->spans[i].hi, 0,
							  code_rank(s), s};
	return 0;
}

static void code_max_from(jitmap_process *p, size_t from)
{
	for (size_t i = from; i < p->ncode; i++)
		p->code[i].max_hi = i && p->code[i - 1].max_hi > p->code[i].hi ? p->code[i - 1].max_hi
									      : p->code[i].hi;
}

int jitmap__code_rebuild(jitmap_process *p)
{
	p->ncode = 0;
	for (size_t i = 0; i < p->njit; i++)
		if (add_code(p, p->jit[i]))
			return -ENOMEM;
	for (size_t i = 0; i < p->nhanded; i++)
		if (add_code(p, p->handed[i]))
			return -ENOMEM;
	if (p->ncode) /* qsort wants a pointer */
		qsort(p->code, p->ncode, sizeof(*p->code), cmp_code);
	code_max_from(p, 0);
	p->code_dirty = false;
	return 0;
}

/* An image handed in comes or goes: the table is changed in place (GDB's reader hands in
 * thousands, and may be asked about a frame between two), or rebuilt at the next lookup. */
void jitmap__code_insert(jitmap_process *p, struct jitmap__source *s)
{
	if (p->code_dirty)
		return;
	if (jitmap__make_spans(s) || jitmap__grow(&p->code, &p->cap_code, p->ncode + s->nspans, sizeof(*p->code))) {
		p->code_dirty = true;
		return;
	}
	size_t first = SIZE_MAX;
	for (size_t k = 0; k < s->nspans; k++) {
		const struct jitmap__code_range c = {s->spans[k].lo, s->spans[k].hi, 0, code_rank(s), s};
		const size_t lo = JITMAP_PARTITION_POINT(p->ncode, i, cmp_code(&p->code[i], &c) < 0);
		memmove(&p->code[lo + 1], &p->code[lo], (p->ncode - lo) * sizeof(*p->code));
		p->code[lo] = c;
		p->ncode++;
		first = lo < first ? lo : first;
	}
	code_max_from(p, first == SIZE_MAX ? p->ncode : first);
}

void jitmap__code_remove(jitmap_process *p, const struct jitmap__source *s)
{
	if (p->code_dirty)
		return;
	size_t k = 0, first = SIZE_MAX;
	for (size_t i = 0; i < p->ncode; i++) {
		if (p->code[i].s != s)
			p->code[k++] = p->code[i];
		else if (first == SIZE_MAX)
			first = k;
	}
	p->ncode = k;
	code_max_from(p, first == SIZE_MAX ? p->ncode : first);
}

/* The first range of the table that starts at or after `addr` (after it, when `strictly`). */
size_t jitmap__code_after(const jitmap_process *p, uint64_t addr, bool strictly)
{
	return strictly ? JITMAP_UPPER_BOUND(p->code, p->ncode, lo, addr)
			: JITMAP_LOWER_BOUND(p->code, p->ncode, lo, addr);
}
