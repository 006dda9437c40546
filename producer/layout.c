/* layout.c: the `.jitmap_deopt` section as its writer knows it (common/deopt_layout.h states
 * the layout; reader/layout.c reads it): a runtime's deopt layouts, checked and encoded. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>

#include "../common/bytes.h"
#include "../common/deopt_layout.h"
#include "internal.h"


/* Strings, each stored once: an open-addressing table of offsets into `buf`. */
struct strings {
	char *buf;
	size_t len, cap;
	uint32_t *slots; /* ref (offset + 1), 0: empty */
	size_t nslots, used;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211u;
	return h;
}

static int strings_grow_table(struct strings *t)
{
	const size_t n = t->nslots ? t->nslots * 2 : 64;
	uint32_t *slots = calloc(n, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->nslots; i++) {
		if (!t->slots[i])
			continue;
		size_t j = hash_str(t->buf + t->slots[i] - 1) & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

/* The ref of `s` (added on first use), or 0 on ENOMEM or when the table passes 2^32 - 2. */
static uint32_t string_ref(struct strings *t, const char *s)
{
	if ((t->used + 1) * 2 > t->nslots && strings_grow_table(t))
		return 0;
	size_t j = hash_str(s) & (t->nslots - 1);
	for (; t->slots[j]; j = (j + 1) & (t->nslots - 1))
		if (!strcmp(t->buf + t->slots[j] - 1, s))
			return t->slots[j];
	const size_t n = strlen(s) + 1;
	if (t->len + n >= UINT32_MAX)
		return 0;
	if (t->len + n > t->cap) {
		size_t cap = t->cap ? t->cap : 256;
		while (cap < t->len + n)
			cap *= 2;
		char *buf = realloc(t->buf, cap);
		if (!buf)
			return 0;
		t->buf = buf;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, s, n);
	t->slots[j] = (uint32_t)(t->len + 1);
	t->len += n;
	t->used++;
	return t->slots[j];
}

static int cmp_key(const jitmap_deopt_layout *a, const jitmap_deopt_layout *b)
{
	if (a->record_id != b->record_id)
		return a->record_id < b->record_id ? -1 : 1;
	if (!a->function || !b->function)
		return !!a->function - !!b->function;
	return strcmp(a->function, b->function);
}

static int cmp_ptr(const void *x, const void *y)
{
	const jitmap_deopt_layout *a = *(const jitmap_deopt_layout *const *)x;
	const jitmap_deopt_layout *b = *(const jitmap_deopt_layout *const *)y;
	const int c = cmp_key(a, b);
	return c ? c : (a > b) - (a < b);
}

static int check_ref(const jitmap_vref *v, bool method, size_t i, size_t k, jitmap_error *err)
{
	const char *what = method ? "method" : "bci";
	switch (v->kind) {
	case JITMAP_VREF_NONE:
		if (!method)
			return 0;
		return jitmap_producer__fail(err, -EINVAL, i, "layout %zu frame %zu: no method", i, k);
	case JITMAP_VREF_NUMBER:
		return 0;
	case JITMAP_VREF_DEOPT:
		if (v->number <= UINT32_MAX)
			return 0;
		return jitmap_producer__fail(err, -EINVAL, i,
					     "layout %zu frame %zu: %s deopt index %" PRIu64
					     " past 2^32",
					     i, k, what, v->number);
	case JITMAP_VREF_NAME:
		if (method && v->name && *v->name)
			return 0;
		return jitmap_producer__fail(err, -EINVAL, i, "layout %zu frame %zu: %s", i, k,
					     method ? "method name is empty" : "a bci has no name");
	}
	return jitmap_producer__fail(err, -EINVAL, i, "layout %zu frame %zu: %s kind %d unknown", i,
				     k, what, (int)v->kind);
}

/* Check `n` layouts as jitmap_jit_encode_layouts documents; on success `*frames` and `*slots`
 * are their totals. */
static int check_layouts(const jitmap_deopt_layout *l, size_t n, size_t *frames, size_t *slots,
			 jitmap_error *err)
{
	*frames = *slots = 0;
	if (n && !l)
		return jitmap_producer__fail(err, -EINVAL, 0, "no layouts given");
	if (n > UINT32_MAX)
		return jitmap_producer__fail(err, -EINVAL, 0, "%zu layouts (at most 2^32 - 1)", n);
	for (size_t i = 0; i < n; i++) {
		const jitmap_deopt_layout *d = &l[i];
		if (d->function && !*d->function)
			return jitmap_producer__fail(err, -EINVAL, i,
						     "layout %zu: empty function name (NULL: any)", i);
		if (!d->num_frames || !d->frames)
			return jitmap_producer__fail(err, -EINVAL, i, "layout %zu (record %" PRIu64
						     "): no frames", i, d->record_id);
		for (size_t k = 0; k < d->num_frames; k++) {
			const jitmap_vframe_layout *f = &d->frames[k];
			int rc = check_ref(&f->method, true, i, k, err);
			if (!rc)
				rc = check_ref(&f->bci, false, i, k, err);
			if (rc)
				return rc;
			if ((f->num_locals && !f->locals) || (f->num_stack && !f->stack))
				return jitmap_producer__fail(err, -EINVAL, i,
							     "layout %zu frame %zu: slot count "
							     "without slots", i, k);
			*slots += (size_t)f->num_locals + f->num_stack;
		}
		*frames += d->num_frames;
	}
	if (*frames > UINT32_MAX || *slots > UINT32_MAX)
		return jitmap_producer__fail(err, -EINVAL, 0, "more than 2^32 - 1 frames or slots");
	/* The same record and function twice: which would a reader show? */
	const jitmap_deopt_layout **by = malloc((n ? n : 1) * sizeof(*by));
	if (!by)
		return jitmap_producer__fail(err, -ENOMEM, 0, "out of memory");
	for (size_t i = 0; i < n; i++)
		by[i] = &l[i];
	qsort(by, n, sizeof(*by), cmp_ptr);
	int rc = 0;
	for (size_t i = 1; i < n && !rc; i++)
		if (!cmp_key(by[i - 1], by[i]))
			rc = jitmap_producer__fail(err, -EINVAL, (size_t)(by[i] - l),
						   "layout %zu repeats layout %zu (record %" PRIu64
						   " in %s)",
						   (size_t)(by[i] - l), (size_t)(by[i - 1] - l),
						   by[i]->record_id,
						   by[i]->function ? by[i]->function : "any function");
	free(by);
	return rc;
}

int jitmap_jit_encode_layouts(const jitmap_deopt_layout *layouts, size_t n,
			      jitmap_byte_order order, void **bytes, size_t *len,
			      jitmap_error *err)
{
	size_t nf, ns;
	if (err)
		memset(err, 0, sizeof(*err));
	if (order == JITMAP_ORDER_AUTO)
		order = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE;
	if (order != JITMAP_ORDER_LITTLE && order != JITMAP_ORDER_BIG)
		return jitmap_producer__fail(err, -EINVAL, 0, "unknown byte order %d", (int)order);
	if (!bytes || !len)
		return jitmap_producer__fail(err, -EINVAL, 0, "nowhere to put the bytes");
	int rc = check_layouts(layouts, n, &nf, &ns, err);
	if (rc)
		return rc;

	/* Strings first: their refs go into the tables. */
	struct strings t = {0};
	uint32_t *fn_ref = calloc(n ? n : 1, sizeof(*fn_ref));
	uint32_t *name_ref = calloc(nf + ns ? nf + ns : 1, sizeof(*name_ref));
	uint8_t *out = NULL;
	rc = -ENOMEM;
	if (!fn_ref || !name_ref)
		goto out;
	size_t fi = 0, si = nf; /* name_ref: method names by frame, then slot names by slot */
	for (size_t i = 0; i < n; i++) {
		const jitmap_deopt_layout *d = &layouts[i];
		if (d->function && !(fn_ref[i] = string_ref(&t, d->function)))
			goto out;
		for (size_t k = 0; k < d->num_frames; k++, fi++) {
			const jitmap_vframe_layout *f = &d->frames[k];
			if (f->method.kind == JITMAP_VREF_NAME &&
			    !(name_ref[fi] = string_ref(&t, f->method.name)))
				goto out;
			for (size_t j = 0; j < (size_t)f->num_locals + f->num_stack; j++, si++) {
				const jitmap_vslot *s =
					j < f->num_locals ? &f->locals[j] : &f->stack[j - f->num_locals];
				if (s->name && *s->name && !(name_ref[si] = string_ref(&t, s->name)))
					goto out;
			}
		}
	}
	const uint64_t at_frames = JITMAP__DL_HEADER + (uint64_t)n * JITMAP__DL_LAYOUT;
	const uint64_t at_slots = at_frames + (uint64_t)nf * JITMAP__DL_FRAME;
	const uint64_t at_strings = at_slots + (uint64_t)ns * JITMAP__DL_SLOT;
	const uint64_t total = jitmap_producer__align8(at_strings + t.len);
	if (total > SIZE_MAX || !(out = calloc(1, (size_t)total)))
		goto out;

	memcpy(out, JITMAP__DL_MAGIC, 4);
	jitmap__store(out + JITMAP__DL_H_VERSION, JITMAP__DL_VERSION, 2, order);
	jitmap__store(out + JITMAP__DL_H_HEADER_SIZE, JITMAP__DL_HEADER, 2, order);
	jitmap__store(out + JITMAP__DL_H_LAYOUTS, n, 4, order);
	jitmap__store(out + JITMAP__DL_H_FRAMES, nf, 4, order);
	jitmap__store(out + JITMAP__DL_H_SLOTS, ns, 4, order);
	jitmap__store(out + JITMAP__DL_H_STRINGS, t.len, 4, order);
	fi = 0;
	si = 0;
	for (size_t i = 0; i < n; i++) {
		const jitmap_deopt_layout *d = &layouts[i];
		uint8_t *lp = out + JITMAP__DL_HEADER + i * JITMAP__DL_LAYOUT;
		jitmap__store(lp + JITMAP__DL_L_ID, d->record_id, 8, order);
		jitmap__store(lp + JITMAP__DL_L_FUNCTION, fn_ref[i], 4, order);
		jitmap__store(lp + JITMAP__DL_L_FIRST, fi, 4, order);
		jitmap__store(lp + JITMAP__DL_L_COUNT, d->num_frames, 4, order);
		for (size_t k = 0; k < d->num_frames; k++, fi++) {
			const jitmap_vframe_layout *f = &d->frames[k];
			uint8_t *fp = out + at_frames + fi * JITMAP__DL_FRAME;
			jitmap__store(fp + JITMAP__DL_F_METHOD,
			    f->method.kind == JITMAP_VREF_NAME ? name_ref[fi] : f->method.number, 8,
			    order);
			jitmap__store(fp + JITMAP__DL_F_BCI, f->bci.kind ? f->bci.number : 0, 8, order);
			fp[JITMAP__DL_F_METHOD_KIND] = (uint8_t)f->method.kind;
			fp[JITMAP__DL_F_BCI_KIND] = (uint8_t)f->bci.kind;
			jitmap__store(fp + JITMAP__DL_F_FIRST_SLOT, si, 4, order);
			jitmap__store(fp + JITMAP__DL_F_LOCALS, f->num_locals, 2, order);
			jitmap__store(fp + JITMAP__DL_F_STACK, f->num_stack, 2, order);
			for (size_t j = 0; j < (size_t)f->num_locals + f->num_stack; j++, si++) {
				const jitmap_vslot *s =
					j < f->num_locals ? &f->locals[j] : &f->stack[j - f->num_locals];
				uint8_t *sp = out + at_slots + si * JITMAP__DL_SLOT;
				jitmap__store(sp + JITMAP__DL_S_INDEX, s->index, 4, order);
				jitmap__store(sp + JITMAP__DL_S_NAME, name_ref[nf + si], 4, order);
			}
		}
	}
	if (t.len)
		memcpy(out + at_strings, t.buf, t.len);
	*bytes = out;
	*len = (size_t)total;
	out = NULL;
	rc = 0;
out:
	if (rc == -ENOMEM)
		jitmap_producer__fail(err, rc, 0, "out of memory");
	free(out);
	free(fn_ref);
	free(name_ref);
	free(t.buf);
	free(t.slots);
	return rc;
}
