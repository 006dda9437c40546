/* layout.c: deopt layouts, the `.jitmap_deopt` section a JIT registers beside its stackmap
 * (common/deopt_layout.h has the byte layout; docs/deopt-layouts.md the user's view). The
 * bytes come from the debuggee: every count, range and string is checked before it is used. */
#include <inttypes.h>
#include <stdlib.h>

#include "../common/deopt_layout.h"
#include "internal.h"

struct jitmap_layouts {
	jitmap_deopt_layout *layouts; /* sorted by (record_id, function: NULL first, then by name) */
	size_t num_layouts;
	jitmap_vframe_layout *frames;
	jitmap_vslot *slots;
	char *strings;
};

static int cmp_function(const char *a, const char *b)
{
	if (!a || !b)
		return !!a - !!b;
	return strcmp(a, b);
}

static int cmp_layout(const void *x, const void *y)
{
	const jitmap_deopt_layout *a = x, *b = y;
	if (a->record_id != b->record_id)
		return a->record_id < b->record_id ? -1 : 1;
	return cmp_function(a->function, b->function);
}

void jitmap_layouts_free(jitmap_layouts *l)
{
	if (!l)
		return;
	free(l->layouts);
	free(l->frames);
	free(l->slots);
	free(l->strings);
	free(l);
}

/* The string at ref `ref` (0: NULL); false when it is not a NUL-terminated string of the
 * table. */
static bool string_at(const jitmap_layouts *l, uint32_t strings_size, uint32_t ref,
		      const char **out)
{
	*out = NULL;
	if (!ref)
		return true;
	if (ref - 1 >= strings_size || !memchr(l->strings + ref - 1, 0, strings_size - (ref - 1)))
		return false;
	*out = l->strings + ref - 1;
	return true;
}

jitmap_layouts *jitmap_layouts_parse(const void *bytes, size_t len, jitmap_byte_order order,
				     jitmap_error *err)
{
	const uint8_t *b = bytes;
	jitmap_layouts *l = NULL;
	int rc = -EINVAL;

	if (err)
		memset(err, 0, sizeof(*err));
	if (order == JITMAP_ORDER_AUTO)
		order = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE;
#define U16(off) ((uint32_t)jitmap__load(b + (off), 2, order))
#define U32(off) ((uint32_t)jitmap__load(b + (off), 4, order))
#define U64(off) jitmap__load(b + (off), 8, order)
	if (!b || len < JITMAP__DL_HEADER) {
		jitmap__fail(err, rc, 0, "%zu bytes: shorter than the %d-byte header", len,
			     JITMAP__DL_HEADER);
		goto out;
	}
	if (memcmp(b, JITMAP__DL_MAGIC, 4)) {
		jitmap__fail(err, rc, 0, "no \"" JITMAP__DL_MAGIC "\" magic");
		goto out;
	}
	const uint32_t version = U16(JITMAP__DL_H_VERSION), hsize = U16(JITMAP__DL_H_HEADER_SIZE);
	if (version != JITMAP__DL_VERSION) {
		jitmap__fail(err, rc, JITMAP__DL_H_VERSION, "version %u (this jitmap reads %d)",
			     version, JITMAP__DL_VERSION);
		goto out;
	}
	if (hsize < JITMAP__DL_HEADER || hsize % 8) {
		jitmap__fail(err, rc, JITMAP__DL_H_HEADER_SIZE,
			     "header size %u (at least %d, a multiple of 8)", hsize, JITMAP__DL_HEADER);
		goto out;
	}
	const uint32_t nl = U32(JITMAP__DL_H_LAYOUTS), nf = U32(JITMAP__DL_H_FRAMES),
		       ns = U32(JITMAP__DL_H_SLOTS), nstr = U32(JITMAP__DL_H_STRINGS);
	/* 64-bit sums of 32-bit counts times small sizes cannot overflow. */
	const uint64_t at_frames = (uint64_t)hsize + (uint64_t)nl * JITMAP__DL_LAYOUT;
	const uint64_t at_slots = at_frames + (uint64_t)nf * JITMAP__DL_FRAME;
	const uint64_t at_strings = at_slots + (uint64_t)ns * JITMAP__DL_SLOT;
	if (hsize > len || at_strings + nstr > len) {
		jitmap__fail(err, rc, JITMAP__DL_H_LAYOUTS,
			     "truncated: %u layouts, %u frames, %u slots and %u bytes of strings "
			     "need %" PRIu64 " bytes, the section has %zu",
			     nl, nf, ns, nstr, at_strings + nstr, len);
		goto out;
	}
	rc = -ENOMEM;
	l = calloc(1, sizeof(*l));
	if (!l || !(l->layouts = calloc(nl ? nl : 1, sizeof(*l->layouts))) ||
	    !(l->frames = calloc(nf ? nf : 1, sizeof(*l->frames))) ||
	    !(l->slots = calloc(ns ? ns : 1, sizeof(*l->slots))) ||
	    !(l->strings = malloc(nstr ? nstr : 1))) {
		jitmap__fail(err, rc, 0, "out of memory");
		goto out;
	}
	memcpy(l->strings, b + at_strings, nstr);
	rc = -EINVAL;

	for (uint32_t i = 0; i < ns; i++) {
		const uint64_t at = at_slots + (uint64_t)i * JITMAP__DL_SLOT;
		l->slots[i].index = U32(at + JITMAP__DL_S_INDEX);
		if (!string_at(l, nstr, U32(at + JITMAP__DL_S_NAME), &l->slots[i].name)) {
			jitmap__fail(err, rc, at + JITMAP__DL_S_NAME,
				     "slot %u: name %u is not a string of the %u-byte table", i,
				     U32(at + JITMAP__DL_S_NAME), nstr);
			goto out;
		}
	}
	for (uint32_t i = 0; i < nf; i++) {
		const uint64_t at = at_frames + (uint64_t)i * JITMAP__DL_FRAME;
		jitmap_vframe_layout *f = &l->frames[i];
		const unsigned mk = b[at + JITMAP__DL_F_METHOD_KIND], bk = b[at + JITMAP__DL_F_BCI_KIND];
		const uint64_t mv = U64(at + JITMAP__DL_F_METHOD), bv = U64(at + JITMAP__DL_F_BCI);
		const uint32_t first = U32(at + JITMAP__DL_F_FIRST_SLOT);
		f->num_locals = (uint16_t)U16(at + JITMAP__DL_F_LOCALS);
		f->num_stack = (uint16_t)U16(at + JITMAP__DL_F_STACK);
		if (mk < JITMAP_VREF_NUMBER || mk > JITMAP_VREF_NAME) {
			jitmap__fail(err, rc, at + JITMAP__DL_F_METHOD_KIND,
				     "frame %u: method kind %u (1 number, 2 deopt value, 3 name)", i, mk);
			goto out;
		}
		if (bk > JITMAP_VREF_DEOPT) {
			jitmap__fail(err, rc, at + JITMAP__DL_F_BCI_KIND,
				     "frame %u: bci kind %u (0 none, 1 number, 2 deopt value)", i, bk);
			goto out;
		}
		if ((mk == JITMAP_VREF_DEOPT && mv > UINT32_MAX) ||
		    (bk == JITMAP_VREF_DEOPT && bv > UINT32_MAX)) {
			jitmap__fail(err, rc, at + (mk == JITMAP_VREF_DEOPT && mv > UINT32_MAX
							    ? JITMAP__DL_F_METHOD
							    : JITMAP__DL_F_BCI),
				     "frame %u: deopt index past 2^32", i);
			goto out;
		}
		f->method = (jitmap_vref){.kind = (jitmap_vref_kind)mk, .number = mv};
		if (mk == JITMAP_VREF_NAME &&
		    (!mv || mv > UINT32_MAX || !string_at(l, nstr, (uint32_t)mv, &f->method.name))) {
			jitmap__fail(err, rc, at + JITMAP__DL_F_METHOD,
				     "frame %u: method name %" PRIu64
				     " is not a string of the %u-byte table",
				     i, mv, nstr);
			goto out;
		}
		if (mk == JITMAP_VREF_NAME)
			f->method.number = 0;
		f->bci = (jitmap_vref){.kind = (jitmap_vref_kind)bk, .number = bk ? bv : 0};
		if ((uint64_t)first + f->num_locals + f->num_stack > ns) {
			jitmap__fail(err, rc, at + JITMAP__DL_F_FIRST_SLOT,
				     "frame %u: slots %u..%u past the %u slots", i, first,
				     first + f->num_locals + f->num_stack, ns);
			goto out;
		}
		f->locals = &l->slots[first];
		f->stack = &l->slots[first + f->num_locals];
	}
	for (uint32_t i = 0; i < nl; i++) {
		const uint64_t at = (uint64_t)hsize + (uint64_t)i * JITMAP__DL_LAYOUT;
		jitmap_deopt_layout *d = &l->layouts[i];
		const uint32_t first = U32(at + JITMAP__DL_L_FIRST), count = U32(at + JITMAP__DL_L_COUNT);
		d->record_id = U64(at + JITMAP__DL_L_ID);
		if (!string_at(l, nstr, U32(at + JITMAP__DL_L_FUNCTION), &d->function) ||
		    (d->function && !d->function[0])) {
			jitmap__fail(err, rc, at + JITMAP__DL_L_FUNCTION,
				     "layout %u: function %u is not a non-empty string of the %u-byte "
				     "table",
				     i, U32(at + JITMAP__DL_L_FUNCTION), nstr);
			goto out;
		}
		if (!count || (uint64_t)first + count > nf) {
			jitmap__fail(err, rc, at + JITMAP__DL_L_FIRST,
				     "layout %u: frames %u..%" PRIu64 " %s", i, first,
				     (uint64_t)first + count,
				     count ? "past the frames" : "(a layout has at least one frame)");
			goto out;
		}
		d->frames = &l->frames[first];
		d->num_frames = count;
	}
	qsort(l->layouts, nl, sizeof(*l->layouts), cmp_layout);
	for (uint32_t i = 1; i < nl; i++) {
		if (!cmp_layout(&l->layouts[i - 1], &l->layouts[i])) {
			/* Name the second of the two in the section's order (sorting lost it). */
			const jitmap_deopt_layout *d = &l->layouts[i];
			uint32_t seen = 0, k = 0;
			for (; k < nl; k++) {
				const uint64_t at = (uint64_t)hsize + (uint64_t)k * JITMAP__DL_LAYOUT;
				const char *fn = NULL;
				if (U64(at + JITMAP__DL_L_ID) == d->record_id &&
				    string_at(l, nstr, U32(at + JITMAP__DL_L_FUNCTION), &fn) &&
				    !cmp_function(fn, d->function) && ++seen == 2)
					break;
			}
			jitmap__fail(err, rc, (uint64_t)hsize + (uint64_t)k * JITMAP__DL_LAYOUT,
				     "layout %u: a second layout for record %" PRIu64 " in %s%s", k,
				     d->record_id, d->function ? "function " : "",
				     d->function ? d->function : "any function");
			goto out;
		}
	}
	l->num_layouts = nl;
	rc = 0;
#undef U16
#undef U32
#undef U64
out:
	if (rc) {
		jitmap_layouts_free(l);
		errno = -rc;
		return NULL;
	}
	return l;
}

size_t jitmap_layouts_count(const jitmap_layouts *l) { return l ? l->num_layouts : 0; }

const jitmap_deopt_layout *jitmap_layouts_get(const jitmap_layouts *l, size_t i)
{
	return l && i < l->num_layouts ? &l->layouts[i] : NULL;
}

static const jitmap_deopt_layout *find_exact(const jitmap_layouts *l, uint64_t id,
					     const char *function)
{
	const jitmap_deopt_layout key = {.record_id = id, .function = function};
	return bsearch(&key, l->layouts, l->num_layouts, sizeof(*l->layouts), cmp_layout);
}

const jitmap_deopt_layout *jitmap_layouts_find(const jitmap_layouts *l, uint64_t record_id,
					       const char *function)
{
	if (!l || !l->num_layouts)
		return NULL;
	const jitmap_deopt_layout *d = function ? find_exact(l, record_id, function) : NULL;
	return d ? d : find_exact(l, record_id, NULL);
}
