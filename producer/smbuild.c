/* smbuild.c: write LLVM stackmap sections (version 3), for JITs that emit code themselves.
 *
 * The output must be byte-for-byte what LLVM's StackMaps::serializeToStackMapSection writes
 * for the same content (stackmap-format.md §1), so that every consumer written against LLVM's
 * output reads it: `llvm-readobj --stackmap`, LLVM's StackMapParser.h (which trusts every
 * count and offset), and our parser, which rejects any non-zero reserved or padding byte.
 *
 * Records are kept as they come, with their locations and live-outs in two growing arrays;
 * nothing is laid out until finish, which computes the exact size first and writes once.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "../common/bytes.h"
#include "../common/fail.h"
#include "internal.h"

struct sm_func {
	uint64_t address, stack_size, record_count;
};

struct sm_rec {
	uint64_t id;
	uint32_t offset;
	uint16_t num_locations, num_live_outs;
	size_t first_location, first_live_out;
};

struct jitmap_smbuilder {
	jitmap_byte_order order;
	struct sm_func *funcs;
	size_t num_funcs, cap_funcs;
	uint64_t *consts;
	size_t num_consts, cap_consts;
	struct sm_rec *recs;
	size_t num_recs, cap_recs;
	jitmap_location *locs;
	size_t num_locs, cap_locs;
	jitmap_live_out *lives;
	size_t num_lives, cap_lives;
};

/* -- Growing arrays -- */

/* Make room for `more` elements of `elem` bytes in *arr (count *n, capacity *cap). */
static int reserve(void **arr, size_t *cap, size_t n, size_t more, size_t elem)
{
	if (more <= *cap - n)
		return 0;
	size_t want = *cap ? *cap : 16;
	while (want - n < more) {
		if (want > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		want *= 2;
	}
	void *p = realloc(*arr, want * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = want;
	return 0;
}

#define RESERVE(b, field, more)                                                              \
	reserve((void **)&(b)->field##s, &(b)->cap_##field##s, (b)->num_##field##s, (more),    \
		sizeof(*(b)->field##s))

/* -- Building -- */

jitmap_smbuilder *jitmap_smbuilder_new(jitmap_byte_order order)
{
	if (order != JITMAP_ORDER_AUTO && order != JITMAP_ORDER_LITTLE &&
	    order != JITMAP_ORDER_BIG) {
		errno = EINVAL;
		return NULL;
	}
	jitmap_smbuilder *b = calloc(1, sizeof(*b));
	if (!b) {
		errno = ENOMEM;
		return NULL;
	}
	if (order == JITMAP_ORDER_AUTO)
		order = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? JITMAP_ORDER_BIG
							       : JITMAP_ORDER_LITTLE;
	b->order = order;
	return b;
}

void jitmap_smbuilder_free(jitmap_smbuilder *b)
{
	if (!b)
		return;
	free(b->funcs);
	free(b->consts);
	free(b->recs);
	free(b->locs);
	free(b->lives);
	free(b);
}

int jitmap_smbuilder_add_function(jitmap_smbuilder *b, uint64_t address, uint64_t stack_size,
				  jitmap_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	if (b->num_funcs >= UINT32_MAX)
		return jitmap_producer__fail(err, -EINVAL, b->num_funcs,
				    "too many functions: the header counts them in 32 bits");
	if (RESERVE(b, func, 1))
		return jitmap_producer__fail(err, -ENOMEM, 0, "out of memory");
	b->funcs[b->num_funcs++] = (struct sm_func){address, stack_size, 0};
	return 0;
}

static int check_location(const jitmap_smbuilder *b, const jitmap_location *l, size_t i,
			  jitmap_error *err)
{
	switch (l->kind) {
	case JITMAP_LOC_REGISTER:
	case JITMAP_LOC_DIRECT:
	case JITMAP_LOC_INDIRECT:
		break;
	case JITMAP_LOC_CONSTANT:
	case JITMAP_LOC_CONSTANT_INDEX:
		if (l->dwarf_reg)
			return jitmap_producer__fail(err, -EINVAL, i,
					    "location %zu: a constant has no register (got %u)", i,
					    (unsigned)l->dwarf_reg);
		if (l->kind == JITMAP_LOC_CONSTANT_INDEX &&
		    (l->offset < 0 || (uint64_t)l->offset >= b->num_consts))
			return jitmap_producer__fail(err, -EINVAL, i,
					    "location %zu: constant index %d names no constant (%zu in the pool)",
					    i, (int)l->offset, b->num_consts);
		break;
	default:
		return jitmap_producer__fail(err, -EINVAL, i, "location %zu: unknown location kind %d", i,
				    (int)l->kind);
	}
	if (l->size == 0)
		return jitmap_producer__fail(err, -EINVAL, i, "location %zu: size 0", i);
	return 0;
}

int jitmap_smbuilder_add_record(jitmap_smbuilder *b, uint64_t id, uint32_t instruction_offset,
				const jitmap_location *locations, size_t num_locations,
				const jitmap_live_out *live_outs, size_t num_live_outs,
				jitmap_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	if (b->num_funcs == 0)
		return jitmap_producer__fail(err, -EINVAL, 0,
				    "record %llu has no function: add a function first",
				    (unsigned long long)id);
	if (num_locations > UINT16_MAX)
		return jitmap_producer__fail(err, -EINVAL, num_locations,
				    "%zu locations: a record holds at most 65535", num_locations);
	if (num_live_outs > UINT16_MAX)
		return jitmap_producer__fail(err, -EINVAL, num_live_outs,
				    "%zu live-outs: a record holds at most 65535", num_live_outs);
	if ((num_locations && !locations) || (num_live_outs && !live_outs))
		return jitmap_producer__fail(err, -EINVAL, 0, "a count is non-zero but its array is NULL");
	if (b->num_recs >= UINT32_MAX)
		return jitmap_producer__fail(err, -EINVAL, b->num_recs,
				    "too many records: the header counts them in 32 bits");
	for (size_t i = 0; i < num_locations; i++) {
		int rc = check_location(b, &locations[i], i, err);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < num_live_outs; i++)
		if (live_outs[i].size == 0)
			return jitmap_producer__fail(err, -EINVAL, i, "live-out %zu: size 0", i);

	if (RESERVE(b, rec, 1) || RESERVE(b, loc, num_locations) ||
	    RESERVE(b, live, num_live_outs))
		return jitmap_producer__fail(err, -ENOMEM, 0, "out of memory");
	if (num_locations)
		memcpy(b->locs + b->num_locs, locations, num_locations * sizeof(*locations));
	if (num_live_outs)
		memcpy(b->lives + b->num_lives, live_outs, num_live_outs * sizeof(*live_outs));
	b->recs[b->num_recs++] = (struct sm_rec){
		.id = id,
		.offset = instruction_offset,
		.num_locations = (uint16_t)num_locations,
		.num_live_outs = (uint16_t)num_live_outs,
		.first_location = b->num_locs,
		.first_live_out = b->num_lives,
	};
	b->num_locs += num_locations;
	b->num_lives += num_live_outs;
	b->funcs[b->num_funcs - 1].record_count++;
	return 0;
}

int jitmap_smbuilder_constant(jitmap_smbuilder *b, uint64_t value, jitmap_location *out)
{
	/* LLVM: an operand that isInt<32> is a Constant; others go to the pool (a MapVector
	 * keyed by value, so a value has one entry, indexed in order of first use). */
	const int64_t s = (int64_t)value;
	if (s >= INT32_MIN && s <= INT32_MAX) {
		*out = (jitmap_location){.kind = JITMAP_LOC_CONSTANT, .size = 8, .offset = (int32_t)s};
		return 0;
	}
	/* Linear search: JIT pools are small, and a hash would cost more than it saves here. */
	size_t i;
	for (i = 0; i < b->num_consts && b->consts[i] != value; i++)
		;
	if (i == b->num_consts) {
		if (i >= INT32_MAX) /* the index is stored in the i32 offset field */
			return -EINVAL;
		if (RESERVE(b, const, 1))
			return -ENOMEM;
		b->consts[b->num_consts++] = value;
	}
	*out = (jitmap_location){.kind = JITMAP_LOC_CONSTANT_INDEX, .size = 8, .offset = (int32_t)i};
	return 0;
}

/* -- Writing -- */

struct out {
	uint8_t *p;
	jitmap_byte_order order;
};

static void put(struct out *o, uint64_t v, size_t size)
{
	jitmap__store(o->p, v, size, o->order);
	o->p += size;
}

/* Bytes of a v3 record with L locations and O live-outs (stackmap-format.md §1). */
static uint64_t record_size(uint64_t nloc, uint64_t nlive)
{
	return jitmap_producer__align8(jitmap_producer__align8(16 + 12 * nloc) + 4 + 4 * nlive);
}

int jitmap_smbuilder_finish(const jitmap_smbuilder *b, void **bytes, size_t *len)
{
	/* Counts are bounded by memory the builder already holds, so 64-bit sums cannot wrap. */
	uint64_t total = 16 + 24 * (uint64_t)b->num_funcs + 8 * (uint64_t)b->num_consts;
	for (size_t r = 0; r < b->num_recs; r++)
		total += record_size(b->recs[r].num_locations, b->recs[r].num_live_outs);
	if (total > SIZE_MAX)
		return -ENOMEM;
	/* calloc: every padding and reserved byte is zero without writing it. */
	uint8_t *buf = calloc(1, (size_t)total);
	if (!buf)
		return -ENOMEM;
	struct out o = {buf, b->order};

	put(&o, 3, 1);      /* version */
	put(&o, 0, 1);      /* reserved */
	put(&o, 0, 2);      /* reserved */
	put(&o, b->num_funcs, 4);
	put(&o, b->num_consts, 4);
	put(&o, b->num_recs, 4);
	for (size_t f = 0; f < b->num_funcs; f++) {
		put(&o, b->funcs[f].address, 8);
		put(&o, b->funcs[f].stack_size, 8);
		put(&o, b->funcs[f].record_count, 8);
	}
	for (size_t c = 0; c < b->num_consts; c++)
		put(&o, b->consts[c], 8);
	for (size_t r = 0; r < b->num_recs; r++) {
		const struct sm_rec *rec = &b->recs[r];
		uint8_t *start = o.p;
		put(&o, rec->id, 8);
		put(&o, rec->offset, 4);
		put(&o, 0, 2); /* flags */
		put(&o, rec->num_locations, 2);
		for (size_t i = 0; i < rec->num_locations; i++) {
			const jitmap_location *l = &b->locs[rec->first_location + i];
			put(&o, (uint64_t)l->kind, 1);
			put(&o, 0, 1);
			put(&o, l->size, 2);
			put(&o, l->dwarf_reg, 2);
			put(&o, 0, 2);
			put(&o, (uint32_t)l->offset, 4);
		}
		/* LLVM: EmitValueToAlignment(8) after the locations, then u16 0, u16 count. */
		o.p = start + jitmap_producer__align8((uint64_t)(o.p - start));
		put(&o, 0, 2);
		put(&o, rec->num_live_outs, 2);
		for (size_t i = 0; i < rec->num_live_outs; i++) {
			const jitmap_live_out *l = &b->lives[rec->first_live_out + i];
			put(&o, l->dwarf_reg, 2);
			put(&o, 0, 1);
			put(&o, l->size, 1);
		}
		o.p = start + jitmap_producer__align8((uint64_t)(o.p - start));
	}
	*bytes = buf;
	*len = (size_t)total;
	return 0;
}

/* -- Checking a section a JIT hands in (as the writer above lays it out) -- */

int jitmap_producer__fail(jitmap_error *err, int code, uint64_t offset, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	jitmap_common_vfail(err, code, offset, fmt, ap);
	va_end(ap);
	return code;
}


int jitmap_producer__check_stackmap(const uint8_t *p, size_t len, jitmap_byte_order order,
				    const struct jitmap_producer__sm_visit *v, jitmap_error *err)
{
	if (len == 0)
		return jitmap_producer__fail(err, -EINVAL, 0, "empty stackmap section");
	if (len < 16)
		return jitmap_producer__fail(err, -EINVAL, 0, "the %zu-byte section is shorter than "
					     "a stackmap header (16 bytes)", len);
	const unsigned version = p[0];
	if (version < 1 || version > 3)
		return jitmap_producer__fail(err, -EINVAL, 0, "unknown stackmap version %u", version);
	if (version < 3)
		return 0; /* older layouts: passed on as they are, the reader validates them */
	const uint64_t nf = jitmap__load(p + 4, 4, order), nc = jitmap__load(p + 8, 4, order),
		       nr = jitmap__load(p + 12, 4, order);
	uint64_t at = 16;
	if (nf > (len - at) / 24)
		return jitmap_producer__fail(err, -EINVAL, 4,
					     "function count %" PRIu64 " overruns the section", nf);
	const uint64_t functions = at;
	at += 24 * nf;
	if (nc > (len - at) / 8)
		return jitmap_producer__fail(err, -EINVAL, 8,
					     "constant count %" PRIu64 " overruns the section", nc);
	at += 8 * nc;
	uint64_t fn = 0, left = nf ? jitmap__load(p + functions + 16, 8, order) : 0;
	for (uint64_t i = 0; i < nf; i++) {
		int rc = !v->function ? 0 : v->function(v->ctx, (uint32_t)i, jitmap__load(p + functions + 24 * i, 8, order),
				     functions + 24 * i, err);
		if (rc)
			return rc;
	}
	for (uint64_t r = 0; r < nr; r++) {
		if (len - at < 16)
			return jitmap_producer__fail(err, -EINVAL, 12,
						     "record count %" PRIu64 " overruns the section",
						     nr);
		const uint64_t nloc = jitmap__load(p + at + 14, 2, order);
		const uint64_t live_at = jitmap_producer__align8(16 + 12 * nloc);
		if (live_at + 4 > len - at)
			return jitmap_producer__fail(err, -EINVAL, 12,
						     "record count %" PRIu64 " overruns the section",
						     nr);
		const uint64_t nlive = jitmap__load(p + at + live_at + 2, 2, order);
		const uint64_t size = jitmap_producer__align8(live_at + 4 + 4 * nlive);
		if (size > len - at)
			return jitmap_producer__fail(err, -EINVAL, 12,
						     "record count %" PRIu64 " overruns the section",
						     nr);
		/* Records belong to the functions in order, each function's count of them. */
		while (fn < nf && left == 0 && ++fn < nf)
			left = jitmap__load(p + functions + 24 * fn + 16, 8, order);
		if (fn < nf) {
			const uint64_t pc = jitmap__load(p + functions + 24 * fn, 8, order) +
					    jitmap__load(p + at + 8, 4, order);
			int rc = v->record(v->ctx, (uint32_t)r, jitmap__load(p + at, 8, order), pc, at, err);
			if (rc)
				return rc;
			left--;
		}
		at += size;
	}
	return 0;
}
