/* handed.c (the process model): the images a debugger hands in (jitmap_process_add_image),
 * kept across scans, sorted by id. Their live sections are read at first use; their code is
 * sampled then and compared at the refresh after each recheck (the staleness rule of
 * process.h), once per stop and never during a lookup; one that is stale, or replaced by a newer
 * image over the same code, is dropped and said so.
 */
#include <inttypes.h>
#include <stdio.h>

#include "internal.h"

/* -- Images handed in by a debugger -- */

static size_t handed_find(const jitmap_process *p, uint64_t id)
{
	const size_t lo = JITMAP_PARTITION_POINT(p->nhanded, i, p->handed[i]->id < id);
	return lo < p->nhanded && p->handed[lo]->id == id ? lo : SIZE_MAX;
}

struct jitmap__source *jitmap__handed(const jitmap_process *p, uint64_t id)
{
	const size_t at = handed_find(p, id);
	return at == SIZE_MAX ? NULL : p->handed[at];
}

/* Take the image handed in at `at` out: of the list, the code table and the index. */
static void remove_handed(jitmap_process *p, size_t at)
{
	struct jitmap__source *s = p->handed[at];
	memmove(&p->handed[at], &p->handed[at + 1], (p->nhanded - at - 1) * sizeof(*p->handed));
	p->nhanded--;
	jitmap__code_remove(p, s);
	jitmap__index_drop(p, s);
	if (p->scanning && jitmap__drop_later(p, s) == 0)
		return;
	/* Its stackmap is buried: valid until the next recheck or scan_end. */
	jitmap__source_free(p, s);
}

/* Drop an image handed in (stale or replaced), saying so to jitmap_process_take_dropped. */
static void drop_image(jitmap_process *p, struct jitmap__source *s, bool replaced, const char *why)
{
	/* Out of memory for the record: the image goes unsaid; a client that asks about its id
	 * hears that it is unknown. */
	if (jitmap__grow(&p->drops, &p->cap_drops, p->ndrops + 1, sizeof(*p->drops)) == 0)
		p->drops[p->ndrops++] = (struct jitmap__drop){s->id, replaced, strdup(why)};
	const size_t at = handed_find(p, s->id);
	if (at != SIZE_MAX)
		remove_handed(p, at);
}

/* Sample the code of the image handed in `s` at its first use (the staleness rule of
 * process.h): the first 16 bytes of its first function, else of its code. One whose code cannot
 * be read is not used (s->usable false, the problem said) until a refresh can read it. */
static void sample_code(jitmap_process *p, struct jitmap__source *s)
{
	s->usable = true;
	if (!s->image || jitmap__make_fns(s) || !s->nspans)
		return; /* no code to look at (or no memory to look with) */
	const uint64_t at = s->nfns ? s->fns[0].lo : s->spans[0].lo;
	const jitmap_image_range *r = jitmap__span_at(s, at);
	const size_t len = r->hi - at < CODE_SAMPLE ? (size_t)(r->hi - at) : CODE_SAMPLE;
	char why[160];
	if (jitmap__read_mem(p, at, s->code_sample, len, why, sizeof(why))) {
		s->usable = false;
		jitmap__set_problem(&s->code_problem, "%s: its code at 0x%" PRIx64 " cannot be read: %s",
				    s->name, at, why);
		return;
	}
	free(s->code_problem);
	s->code_problem = NULL;
	s->sampled = true;
	s->sample_at = at;
	s->code_sample_len = len;
}

int jitmap__image_usable(jitmap_process *p, struct jitmap__source *s)
{
	if (s->code_check) {
		s->code_check = false;
		sample_code(p, s);
	}
	return s->usable;
}

/* Whether the code sampled at the image's first use is still there (else it is dropped, and
 * said why); one whose first sample could not be read is sampled again. */
static bool code_still_there(jitmap_process *p, struct jitmap__source *s)
{
	if (s->code_check)
		return true; /* not used yet: sampled at its first use */
	if (!s->sampled) {
		if (s->code_problem)
			sample_code(p, s);
		return true;
	}
	uint8_t now[CODE_SAMPLE];
	char why[160], text[320];
	const int rc = jitmap__read_mem(p, s->sample_at, now, s->code_sample_len, why, sizeof(why));
	if (!rc && !memcmp(now, s->code_sample, s->code_sample_len))
		return true;
	if (rc)
		snprintf(text, sizeof(text), "%s: its code at 0x%" PRIx64 " cannot be read any "
			 "more: %s", s->name, s->sample_at, why);
	else
		snprintf(text, sizeof(text), "%s: its code at 0x%" PRIx64 " changed since it "
			 "was first used", s->name, s->sample_at);
	drop_image(p, s, false, text);
	return false;
}

/* -- A stop --
 *
 * What a recheck asks for is done here, once, for every image handed in that was used: its
 * code compared with its sample (stale: dropped), its live section read again by the policy.
 * Lookups come after it and only read what was never read (an image's first use); none of
 * them reads an image again, drops or frees one. */

void jitmap__refresh(jitmap_process *p)
{
	if (p->refreshed_gen == p->recheck_gen)
		return;
	p->refreshed_gen = p->recheck_gen;
	for (size_t i = 0; i < p->nhanded;) {
		struct jitmap__source *s = p->handed[i];
		if (!code_still_there(p, s))
			continue; /* dropped: the next one is at i now */
		i++;
		/* Read before (else it is read at its first use), and not known unusable. */
		if (!s->recheck && (s->usable || s->code_check))
			jitmap__refresh_live_indexed(p, s);
	}
}

/* JITMAP_PROCESS_REPLACE_IMAGES: the images handed in whose code overlaps `s`'s go. */
static void replace_overlapped(jitmap_process *p, struct jitmap__source *s)
{
	if (jitmap__make_spans(s))
		return;
	for (size_t k = 0; k < s->nspans; k++) {
		const jitmap_image_range *r = &s->spans[k];
		for (;;) {
			if (p->code_dirty && jitmap__code_rebuild(p))
				return;
			struct jitmap__source *old = NULL;
			for (size_t i = jitmap__code_after(p, r->hi, false); i-- > 0 && p->code[i].max_hi > r->lo;) {
				if (p->code[i].hi > r->lo && p->code[i].s->handed) {
					old = p->code[i].s;
					break;
				}
			}
			if (!old)
				break;
			char why[320];
			snprintf(why, sizeof(why), "%s: replaced by %s, whose code [0x%" PRIx64
				 ", 0x%" PRIx64 ") overlaps its own", old->name, s->name, r->lo, r->hi);
			drop_image(p, old, true, why);
		}
	}
}

int jitmap_process_add_image(jitmap_process *p, const void *image, size_t size, const char *where,
			     uint64_t *id)
{
	if (!p || !id || (!image && size) || !p->index)
		return -EINVAL;
	if (jitmap__grow(&p->handed, &p->cap_handed, p->nhanded + 1, sizeof(*p->handed)))
		return -ENOMEM;
	struct jitmap__source *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->kind = JITMAP_SOURCE_JIT;
	s->handed = true;
	s->id = ++p->next_id;
	s->bytes = image;
	s->symfile_size = size;
	s->code_check = true; /* sampled at its first use */
	if (where)
		snprintf(s->name, sizeof(s->name), "%s", where);
	else
		snprintf(s->name, sizeof(s->name), "JIT image %" PRIu64, s->id);
	if (!size)
		jitmap__problem(&s->problems, SIZE_MAX, "%s: empty image", s->name);
	else if (size > p->max_image)
		jitmap__problem(&s->problems, SIZE_MAX, "%s: image of %zu bytes is larger than the %" PRIu64
				       " MiB limit; not read",
			 s->name, size, p->max_image >> 20);
	else
		jitmap__open_opened(p, s);
	s->open_problems = s->problems.n;
	/* The live section is read at first use (a debugger registering thousands of images
	 * reads few of them), except when the image's own copy is all there is (a section not
	 * placed in memory, sh_addr 0): that copy is read while the bytes are here. An image
	 * used before MCJIT relocated its live section has no registered copy to fall back on:
	 * its addresses read 0 until a recheck finds them set. */
	int rc = 0;
	if (s->has_section && !s->sm_addr) {
		jitmap__refresh_live(p, s);
		rc = jitmap__index_now(p, s);
	} else {
		s->recheck = true;
	}
	s->bytes = NULL;
	if (p->replace_images)
		replace_overlapped(p, s);
	p->handed[p->nhanded++] = s; /* ids only grow: the array stays sorted */
	jitmap__code_insert(p, s);
	*id = s->id;
	return rc;
}

int jitmap_process_remove_image(jitmap_process *p, uint64_t id)
{
	const size_t at = p ? handed_find(p, id) : SIZE_MAX;
	if (at == SIZE_MAX)
		return -ENOENT;
	remove_handed(p, at);
	return 0;
}

void jitmap_process_recheck(jitmap_process *p)
{
	if (!p)
		return;
	p->gen++;
	p->recheck_gen++; /* each handed image used: at the next refresh (jitmap__refresh) */
	if (!p->scanning)
		jitmap__free_buried(p);
}

const jitmap_stackmap *jitmap_process_image_stackmap(jitmap_process *p, uint64_t id)
{
	if (p)
		jitmap__refresh(p); /* a debugger's first question at a stop */
	struct jitmap__source *s = p ? jitmap__handed(p, id) : NULL;
	if (!s || !jitmap__image_usable(p, s))
		return NULL;
	if (s->recheck) { /* its first use: its live section is read now */
		s->recheck = false;
		jitmap__refresh_live_indexed(p, s);
	}
	return s->sm;
}

int jitmap_process_image_code(jitmap_process *p, uint64_t id, const jitmap_image_range **ranges,
			      size_t *num_ranges, const jitmap_code_function **functions,
			      size_t *num_functions)
{
	struct jitmap__source *s = p ? jitmap__handed(p, id) : NULL;
	if (!s)
		return -ENOENT;
	if (jitmap__make_fns(s))
		return -ENOMEM;
	if (ranges)
		*ranges = s->spans;
	if (num_ranges)
		*num_ranges = s->nspans;
	if (functions)
		*functions = s->fns;
	if (num_functions)
		*num_functions = s->nfns;
	return 0;
}

size_t jitmap_process_take_dropped(jitmap_process *p, jitmap_dropped_image *out, size_t max)
{
	if (!p || !p->ndrops || (!out && max))
		return 0;
	const size_t n = max < p->ndrops ? max : p->ndrops;
	jitmap__problems_truncate(&p->taken, 0);
	if (jitmap__grow(&p->taken.items, &p->taken.cap, n, sizeof(*p->taken.items)))
		return 0; /* told at a later call */
	for (size_t i = 0; i < n; i++) {
		const struct jitmap__drop *d = &p->drops[i];
		out[i] = (jitmap_dropped_image){d->id, d->replaced, d->why ? d->why : ""};
		if (d->why)
			p->taken.items[p->taken.n++] = d->why;
	}
	memmove(p->drops, p->drops + n, (p->ndrops - n) * sizeof(*p->drops));
	p->ndrops -= n;
	return n;
}

int jitmap_process_image(const jitmap_process *p, uint64_t id, jitmap_source_info *out)
{
	const struct jitmap__source *s = p ? jitmap__handed(p, id) : NULL;
	if (!s)
		return -ENOENT;
	return jitmap__fill_info(s, out);
}

const char *jitmap_process_image_problem(const jitmap_process *p, uint64_t id, size_t k)
{
	const struct jitmap__source *s = p ? jitmap__handed(p, id) : NULL;
	return s ? jitmap__source_problem(s, k) : NULL;
}
