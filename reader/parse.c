/* parse.c: validate and decode LLVM stackmap sections (versions 1, 2 and 3).
 *
 * The layout is in docs/stackmap-format.md. A section holds one blob per
 * object file that was linked into it, each starting 8-byte aligned. Every count is checked
 * against the bytes that remain, in 64-bit arithmetic, before anything is read or allocated;
 * LLVM's own StackMapParser.h trusts them, which is why we do not follow it.
 *
 * Parsing walks the bytes twice with the same code: the first walk validates and counts, the
 * second fills arrays allocated to the exact counts. No allocation is sized by a number that
 * was not first shown to fit in the input. The first walk skims: it checks every count and
 * field but the contents of LLVM's version 3 locations (most of a section's bytes), which the
 * second checks as it fills. When the skim finds an error, a walk that checks everything finds
 * it again, so that the error reported is always the first in the bytes.
 */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

/* -- Walking the bytes -- */

struct walk {
	const uint8_t *buf;
	uint64_t len;
	jitmap_byte_order order;
	jitmap_error *err;
	jitmap_stackmap *sm; /* NULL while counting */
	size_t blobs, functions, constants, records, locations, live_outs;
	/* ykllvm's layouts (jitmap_dialect): live variables, extra places, spills. */
	size_t vars, extras, spills, spill_tables;
	int force_dialect; /* -1: tell by the bytes; else the dialect to read (a trial) */
	bool skim;         /* counting, LLVM's version 3 locations not read (see above) */
};

#define U16(p) ((uint16_t)jitmap__load((p), 2, w->order))
#define U32(p) ((uint32_t)jitmap__load((p), 4, w->order))
#define U64(p) (jitmap__load((p), 8, w->order))

#define FAIL(off, ...) jitmap__fail(w->err, -EINVAL, (off), __VA_ARGS__)

static int all_zero(const uint8_t *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Whether the n < 8 bytes before `end` are zero: a record's padding to 8 bytes, in one load.
 * `end` is at least 8 bytes into the buffer. */
static inline int zero_tail(const uint8_t *end, uint64_t n)
{
	uint64_t v;
	if (!n)
		return 1;
	memcpy(&v, end - 8, 8);
	return JITMAP__HOST_BIG ? !(v << (64 - 8 * n)) : !(v >> (64 - 8 * n));
}

/* Record `r`'s padding to 8 bytes after its `what` (the bytes up to pos, the record's start
 * at `start`, `left` bytes of the section from there): present and zero; *pos moves past it. */
static inline int pad8(struct walk *w, const uint8_t *b, uint64_t start, uint64_t *pos,
		       uint64_t left, uint32_t r, const char *what)
{
	const uint64_t aligned = jitmap__align8(*pos);
	if (aligned > left)
		return FAIL(start + *pos, "record %u: truncated padding after the %s", r, what);
	if (!zero_tail(b + aligned, aligned - *pos))
		return FAIL(start + *pos, "record %u: non-zero padding after the %s", r, what);
	*pos = aligned;
	return 0;
}

/* A location at `at`; in version 3 its offset field is at `offset_at` (at + 8 but in
 * ykllvm's extras layout, where the extra places come before it). */
static int walk_location(struct walk *w, uint8_t version, uint64_t at, uint64_t offset_at,
			 uint32_t rec_no, uint16_t loc_no, uint32_t num_constants)
{
	const uint8_t *p = w->buf + at;
	jitmap_location loc;

	if (version == 3) {
		loc.kind = p[0];
		if (p[1] != 0)
			return FAIL(at + 1, "record %u location %u: non-zero reserved byte", rec_no,
				    loc_no);
		loc.size = U16(p + 2);
		loc.dwarf_reg = U16(p + 4);
		if (U16(p + 6) != 0)
			return FAIL(at + 6, "record %u location %u: non-zero reserved field",
				    rec_no, loc_no);
		loc.offset = (int32_t)U32(w->buf + offset_at);
	} else {
		/* v1/v2: u8 kind, u8 size, u16 reg, i32 offset (the emitter wrote the size in
		 * the byte the v1 documentation calls reserved). */
		loc.kind = p[0];
		loc.size = p[1];
		loc.dwarf_reg = U16(p + 2);
		loc.offset = (int32_t)U32(p + 4);
	}
	if (loc.kind < JITMAP_LOC_REGISTER || loc.kind > JITMAP_LOC_CONSTANT_INDEX)
		return FAIL(at, "record %u location %u: unknown location kind %u", rec_no, loc_no,
			    (unsigned)loc.kind);
	if (loc.kind == JITMAP_LOC_CONSTANT_INDEX &&
	    (loc.offset < 0 || (uint32_t)loc.offset >= num_constants))
		return FAIL(version == 3 ? offset_at : at + 4,
			    "record %u location %u: constant index %d out of range (%u constants)",
			    rec_no, loc_no, loc.offset, num_constants);
	if (w->sm)
		w->sm->locations[w->locations] = loc;
	w->locations++;
	return 0;
}

/* The reserved bytes of a version 3 location (bytes 1, 6 and 7) in an 8-byte load in host
 * order: where they sit does not depend on the section's byte order. */
#if JITMAP__HOST_BIG
#define V3_RESERVED 0x00ff00000000ffffull
#else
#define V3_RESERVED 0xffff00000000ff00ull
#endif

/* The `n` version 3 locations of LLVM's layout at `at` (12 bytes each): walk_location's checks
 * in one test a location, for speed (every location of a section comes through here twice).
 * A location that fails it goes to walk_location, which says what is wrong. */
static int walk_v3_locations(struct walk *w, uint64_t at, uint32_t rec_no, uint16_t n,
			     uint32_t num_constants)
{
	const uint8_t *p = w->buf + at;
	jitmap_location *out = w->sm ? w->sm->locations + w->locations : NULL;
	for (uint16_t l = 0; l < n; l++, p += 12) {
		uint64_t head;
		memcpy(&head, p, 8);
		const uint8_t kind = p[0];
		const uint32_t offset = U32(p + 8);
		if ((head & V3_RESERVED) || (uint8_t)(kind - JITMAP_LOC_REGISTER) >
		    JITMAP_LOC_CONSTANT_INDEX - JITMAP_LOC_REGISTER ||
		    (kind == JITMAP_LOC_CONSTANT_INDEX && offset >= num_constants)) {
			w->locations += l;
			const uint64_t bad = at + 12 * (uint64_t)l;
			const int rc = walk_location(w, 3, bad, bad + 8, rec_no, l, num_constants);
			return rc ? rc : FAIL(bad, "record %u location %u: failed a check that "
					      "walk_location passes", rec_no, l);
		}
		if (out)
			out[l] = (jitmap_location){.kind = kind, .size = U16(p + 2),
						   .dwarf_reg = U16(p + 4),
						   .offset = (int32_t)offset};
	}
	w->locations += n;
	return 0;
}

/* -- ykllvm's layouts (docs/stackmap-format.md, "ykllvm") -- */

/* A ykllvm record's body: `nvars` live variables, each a u8 count of locations, packed; with
 * extras (JITMAP_DIALECT_YK_EXTRAS) a location is 14 + 2E bytes: its first 8 as LLVM's, a u16
 * count E, E i16 extra places, then the i32 offset. `*pos` is blob-relative. */
static int walk_live_vars(struct walk *w, jitmap_dialect d, uint64_t start, uint64_t *pos,
			  uint32_t r, uint16_t nvars, uint32_t nc)
{
	const uint8_t *b = w->buf + start;
	const uint64_t left = w->len - start;
	uint64_t at = *pos;
	uint32_t nloc = 0;
	for (uint16_t v = 0; v < nvars; v++) {
		if (at >= left)
			return FAIL(start + at, "record %u live variable %u: truncated", r, v);
		const uint8_t n = b[at++];
		if (w->sm)
			w->sm->live_vars[w->vars] = (struct jitmap__live_var){(uint16_t)nloc, n};
		w->vars++;
		for (uint8_t l = 0; l < n; l++, nloc++) {
			if (nloc == UINT16_MAX)
				return FAIL(start + at, "record %u: more than 65535 locations in its "
					    "live variables", r);
			if (w->sm)
				w->sm->location_vars[w->locations] = v;
			uint64_t need = d == JITMAP_DIALECT_YK_EXTRAS ? 14 : 12, nx = 0;
			if (d == JITMAP_DIALECT_YK_EXTRAS && left - at >= 10) {
				nx = U16(b + at + 8);
				need = 14 + 2 * nx;
			}
			if (need > left - at)
				return FAIL(start + at, "record %u location %u: truncated: %llu bytes "
					    "needed, %llu left", r, nloc, (unsigned long long)need,
					    (unsigned long long)(left - at));
			const uint64_t offset_at = at + (d == JITMAP_DIALECT_YK_EXTRAS ? 10 + 2 * nx : 8);
			const int rc = walk_location(w, 3, start + at, start + offset_at, r,
						     (uint16_t)nloc, nc);
			if (rc)
				return rc;
			if (nx && b[at] != JITMAP_LOC_REGISTER)
				return FAIL(start + at + 8, "record %u location %u: extra places on a "
					    "location of kind %s (ykllvm gives them to registers only)", r,
					    nloc, jitmap_loc_kind_name(b[at]));
			if (d == JITMAP_DIALECT_YK_EXTRAS) {
				if (w->sm) {
					w->sm->loc_extras[w->locations - 1].first = w->extras;
					w->sm->loc_extras[w->locations - 1].num = (uint16_t)nx;
					for (uint64_t i = 0; i < nx; i++)
						w->sm->extras[w->extras + i] = (int16_t)U16(b + at + 10 + 2 * i);
				}
				w->extras += nx;
			}
			at += need;
		}
	}
	*pos = at;
	return 0;
}

/* ykllvm's spill tables (JITMAP_DIALECT_YK_EXTRAS), one per function after the records, packed:
 * u8 has-frame-pointer (0 or 1), u8 0, u32 count, count x {u16 register, u16 0, i32 frame
 * index}. */
static int walk_spills(struct walk *w, uint64_t start, uint64_t *pos, uint32_t nf,
		       size_t first_function)
{
	const uint8_t *b = w->buf + start;
	const uint64_t left = w->len - start;
	uint64_t at = *pos;
	for (uint32_t i = 0; i < nf; i++) {
		if (left - at < 6)
			return FAIL(start + at, "function %u's spill table truncated: %llu bytes left, "
				    "it needs 6", i, (unsigned long long)(left - at));
		if (b[at] > 1)
			return FAIL(start + at, "function %u's spill table: frame pointer flag %u "
				    "(0 or 1)", i, b[at]);
		if (b[at + 1])
			return FAIL(start + at + 1, "function %u's spill table: non-zero padding", i);
		const uint32_t ns = U32(b + at + 2);
		at += 6;
		if ((uint64_t)ns * 8 > left - at)
			return FAIL(start + at - 4, "function %u: spill count %u overruns the section",
				    i, ns);
		if (w->sm) {
			struct jitmap__spill_table *t = &w->sm->spill_tables[first_function + i];
			t->known = 1;
			t->has_fp = b[at - 6];
			t->first = w->spills;
			t->num = ns;
		}
		for (uint32_t k = 0; k < ns; k++, at += 8) {
			if (U16(b + at + 2))
				return FAIL(start + at + 2, "function %u spill %u: non-zero padding", i, k);
			if (w->sm) {
				w->sm->spills[w->spills].dwarf_reg = U16(b + at);
				w->sm->spills[w->spills].frame_index = (int32_t)U32(b + at + 4);
			}
			w->spills++;
		}
		w->spill_tables++;
	}
	*pos = at;
	return 0;
}

/* 1 when the first record with a location has ykllvm's shape, 0 when it does not, -1 when
 * no record has one: then the bytes differ only by ykllvm's spill tables. At +16 LLVM has a
 * location (kind 1 to 5, a zero reserved byte, a u16 size that is never a multiple of 256);
 * ykllvm has u8 counts of locations (zero for a variable without any), and after the first
 * count that is not zero a location: kind 1 to 5, a zero byte, the size. So ykllvm's shape
 * is zero or more zero bytes, a count, a kind, a zero byte, which in LLVM's layout would be a
 * kind 0, or a reserved byte that is not zero and a size of 256 bytes or a multiple: a
 * damaged LLVM section stays LLVM's, and its error says what LLVM's layout finds. Records
 * whose variables have no location are skipped as ykllvm lays them out. `pos` is
 * blob-relative. */
static int yk_family(const struct walk *w, uint64_t start, uint64_t pos, uint32_t nr)
{
	const uint8_t *b = w->buf + start;
	const uint64_t left = w->len - start;
	for (uint32_t r = 0; r < nr; r++) {
		if (pos > left || left - pos < 24)
			return 0; /* truncated: LLVM's walk says where */
		const uint16_t n = U16(b + pos + 14);
		uint64_t at = pos + 16;
		for (uint16_t v = 0; v < n && at < left; v++, at++)
			if (b[at])
				return left - at >= 3 && b[at + 1] >= 1 && b[at + 1] <= 5 &&
				       b[at + 2] == 0;
		if (at >= left)
			return 0;
		at = jitmap__align8(at);
		if (at > left || left - at < 4)
			return 0;
		pos = jitmap__align8(at + 4 + 4 * (uint64_t)U16(b + at + 2));
	}
	return -1;
}

/* Whether a blob that ends at `end` leaves the section as the walk expects: at its end, or
 * zeros and then the next blob (a version byte at an 8-aligned offset). */
static int clean_end(const struct walk *w, uint64_t end)
{
	uint64_t at = end;
	while (at < w->len && !w->buf[at])
		at++;
	return at == w->len || (at % 8 == 0 && w->buf[at] >= 1 && w->buf[at] <= 3);
}

static int walk_blob(struct walk *w, uint64_t start, uint64_t *end);

/* Whether the blob at `start` reads to its end in layout `d`: a trial, nothing stored; `*err`
 * says why not, `*end` where it ends. */
static bool reads_as(const struct walk *w, uint64_t start, jitmap_dialect d, jitmap_error *err,
		     uint64_t *end)
{
	struct walk t = *w;
	t.sm = NULL;
	t.skim = false;
	t.err = err;
	t.force_dialect = (int)d;
	return !walk_blob(&t, start, end);
}

/* The layout of the version 3 blob at `start`, or -EINVAL with `w->err` filled. A ykllvm
 * candidate is taken only when the whole blob reads in it and ends cleanly. A blob whose
 * records have ykllvm's shape and fit neither ykllvm layout is reported as read in the layout
 * with extras (the one yk always asks for); LLVM's layout cannot read such a record. */
static int choose_dialect(const struct walk *w, uint64_t start, uint64_t records_at, uint32_t nr)
{
	/* ykllvm targets x86-64 alone; the shape test below relies on little-endian sizes. */
	const int family = w->order == JITMAP_ORDER_LITTLE ? yk_family(w, start, records_at, nr) : 0;
	if (family == 0)
		return JITMAP_DIALECT_LLVM;
	jitmap_error e, extras_err;
	uint64_t end, llvm_end;
	bool extras = reads_as(w, start, JITMAP_DIALECT_YK_EXTRAS, &extras_err, &end);
	if (extras && !clean_end(w, end)) {
		extras = false;
		jitmap__fail(&extras_err, -EINVAL, end, "%llu byte%s after the spill tables: "
			     "neither padding nor another stackmap", (unsigned long long)(w->len - end),
			     w->len - end == 1 ? "" : "s");
	}
	if (family > 0) {
		if (extras)
			return JITMAP_DIALECT_YK_EXTRAS;
		if (reads_as(w, start, JITMAP_DIALECT_YK, &e, &end) && clean_end(w, end))
			return JITMAP_DIALECT_YK;
		return FAIL(extras_err.offset, "ykllvm layout (its records count live variables): %s",
			    extras_err.reason);
	}
	/* No locations anywhere: where a record has no variables, LLVM's bytes and ykllvm's
	 * without extras are the same. With extras, spill tables follow the records; all zeros
	 * there read as LLVM's padding (the same meaning). */
	const bool llvm = reads_as(w, start, JITMAP_DIALECT_LLVM, &e, &llvm_end);
	if (extras && (!llvm || (llvm_end < end && !all_zero(w->buf + llvm_end, end - llvm_end))))
		return JITMAP_DIALECT_YK_EXTRAS;
	if (llvm)
		return JITMAP_DIALECT_LLVM;
	/* variables without locations (LLVM's layout read a kind 0) */
	if (reads_as(w, start, JITMAP_DIALECT_YK, &e, &end) && clean_end(w, end))
		return JITMAP_DIALECT_YK;
	return JITMAP_DIALECT_LLVM;
}

/* Walk the blob at `start`; on success store where it ends in `*end` (8-aligned but after
 * ykllvm's spill tables, which are packed). */
static int walk_blob(struct walk *w, uint64_t start, uint64_t *end)
{
	const uint64_t left = w->len - start; /* bytes from the blob start to the section end */
	const uint8_t *b = w->buf + start;
	int rc;

	if (left < 16)
		return FAIL(start, "truncated stackmap header: %llu bytes left, a header needs 16",
			    (unsigned long long)left);
	const uint8_t version = b[0];
	if (version < 1 || version > 3)
		return FAIL(start, "unknown stackmap version %u (jitmap reads versions 1, 2 and 3)",
			    version);
	if (b[1] != 0)
		return FAIL(start + 1, "non-zero reserved byte in the stackmap header");
	if (U16(b + 2) != 0)
		return FAIL(start + 2, "non-zero reserved field in the stackmap header");
	const uint32_t nf = U32(b + 4), nc = U32(b + 8), nr = U32(b + 12);
	const uint64_t fsize = version == 1 ? 16 : 24;
	const uint64_t locsize = version == 3 ? 12 : 8;
	uint64_t pos = 16; /* blob-relative */

	if ((uint64_t)nf * fsize > left - pos)
		return FAIL(start + 4,
			    "function count %u overruns the section: %llu bytes needed, %llu left",
			    nf, (unsigned long long)((uint64_t)nf * fsize),
			    (unsigned long long)(left - pos));
	const uint64_t funcs_at = pos;
	pos += (uint64_t)nf * fsize;
	if ((uint64_t)nc * 8 > left - pos)
		return FAIL(start + 8,
			    "constant count %u overruns the section: %llu bytes needed, %llu left",
			    nc, (unsigned long long)((uint64_t)nc * 8),
			    (unsigned long long)(left - pos));
	const uint64_t consts_at = pos;
	pos += (uint64_t)nc * 8;
	/* The smallest record (no locations, no live-outs) takes 24 bytes in every version. */
	if ((uint64_t)nr * 24 > left - pos)
		return FAIL(start + 12,
			    "record count %u overruns the section: at least %llu bytes needed, %llu left",
			    nr, (unsigned long long)((uint64_t)nr * 24),
			    (unsigned long long)(left - pos));

	const size_t first_function = w->functions, first_constant = w->constants,
		     first_record = w->records, blob_no = w->blobs;

	/* Functions. v2 and v3 say how many records each owns; they must add up. */
	uint64_t sum = 0;
	for (uint32_t i = 0; i < nf; i++) {
		const uint64_t at = funcs_at + (uint64_t)i * fsize;
		const uint64_t count = version >= 2 ? U64(b + at + 16) : 0;
		if (version >= 2) {
			if (count > nr - sum)
				return FAIL(start + at + 16,
					    "function %u: record counts add up to more than the %u records in the header",
					    i, nr);
			sum += count;
		}
		if (w->sm) {
			jitmap_function *f = &w->sm->functions[w->functions];
			f->raw_address = f->address = U64(b + at);
			f->stack_size = U64(b + at + 8);
			f->record_count = version >= 2 ? count : (nf == 1 ? nr : 0);
			f->first_record = first_record + (version >= 2 ? sum - count : 0);
			f->blob = blob_no;
			f->section_offset = start + at;
			f->name = NULL;
		}
		w->functions++;
	}
	if (version >= 2 && sum != nr)
		return FAIL(start + 12,
			    "function record counts add up to %llu, but the header says %u records",
			    (unsigned long long)sum, nr);

	for (uint32_t i = 0; i < nc; i++) {
		if (w->sm)
			w->sm->constants[w->constants] = U64(b + consts_at + (uint64_t)i * 8);
		w->constants++;
	}

	jitmap_dialect dialect = JITMAP_DIALECT_LLVM;
	if (version == 3 && w->force_dialect >= 0) {
		dialect = (jitmap_dialect)w->force_dialect;
	} else if (version == 3) {
		rc = choose_dialect(w, start, pos, nr);
		if (rc < 0)
			return rc;
		dialect = (jitmap_dialect)rc;
	}

	/* Records. In v1 records cannot be assigned to functions unless there is only one:
	 * that is why v2 added RecordCount. */
	uint32_t owner = 0;
	uint64_t owned_left = 0;
	for (uint32_t r = 0; r < nr; r++) {
		if (left - pos < 16)
			return FAIL(start + pos, "record %u truncated: %llu bytes left, a record needs 16",
				    r, (unsigned long long)(left - pos));
		const uint64_t rec_at = pos;
		const uint8_t *p = b + pos;
		const uint64_t id = U64(p);
		const uint32_t ioff = U32(p + 8);
		const uint16_t flags = U16(p + 12);
		const uint16_t nloc = U16(p + 14);
		if (flags != 0)
			return FAIL(start + pos + 12, "record %u: non-zero reserved field", r);
		pos += 16;
		const size_t first_location = w->locations, first_var = w->vars;
		if (dialect != JITMAP_DIALECT_LLVM) {
			/* ykllvm: the count is of live variables */
			rc = walk_live_vars(w, dialect, start, &pos, r, nloc, nc);
			if (rc)
				return rc;
		} else {
			if ((uint64_t)nloc * locsize > left - pos)
				return FAIL(start + rec_at + 14,
					    "record %u: location count %u overruns the section", r, nloc);
			if (version < 3) {
				for (uint16_t l = 0; l < nloc; l++) {
					const uint64_t at = start + pos + l * locsize;
					rc = walk_location(w, version, at, at + 4, r, l, nc);
					if (rc)
						return rc;
				}
			} else if (w->skim) {
				w->locations += nloc;
			} else if ((rc = walk_v3_locations(w, start + pos, r, nloc, nc))) {
				return rc;
			}
			pos += (uint64_t)nloc * locsize;
		}
		if (version == 3) {
			rc = pad8(w, b, start, &pos, left, r, "locations");
			if (rc)
				return rc;
		}
		if (left - pos < 4)
			return FAIL(start + pos, "record %u: truncated live-out header", r);
		if (U16(b + pos) != 0)
			return FAIL(start + pos, "record %u: non-zero padding before the live-out count", r);
		const uint16_t nlive = U16(b + pos + 2);
		pos += 4;
		if ((uint64_t)nlive * 4 > left - pos)
			return FAIL(start + pos - 2, "record %u: live-out count %u overruns the section",
				    r, nlive);
		const size_t first_live_out = w->live_outs;
		for (uint16_t l = 0; l < nlive; l++) {
			const uint8_t *lo = b + pos;
			if (lo[2] != 0)
				return FAIL(start + pos + 2, "record %u live-out %u: non-zero reserved byte",
					    r, l);
			if (w->sm) {
				w->sm->live_outs[w->live_outs].dwarf_reg = U16(lo);
				w->sm->live_outs[w->live_outs].size = lo[3];
			}
			w->live_outs++;
			pos += 4;
		}
		rc = pad8(w, b, start, &pos, left, r, "live-outs");
		if (rc)
			return rc;

		size_t fn = JITMAP_NO_FUNCTION;
		if (version >= 2) {
			while (owned_left == 0 && owner < nf) {
				/* Functions were read above; their counts are in the walk only when
				 * filling, so recount from the bytes. */
				owned_left = U64(b + funcs_at + (uint64_t)owner * fsize + 16);
				owner++;
			}
			/* sum == nr guarantees an owner exists. */
			owned_left--;
			fn = first_function + owner - 1;
		} else if (nf == 1) {
			fn = first_function;
		}
		if (w->sm) {
			jitmap_record *rec = &w->sm->records[w->records];
			rec->id = id;
			rec->instruction_offset = rec->raw_instruction_offset = ioff;
			rec->flags = flags;
			rec->num_locations = (uint16_t)(w->locations - first_location);
			if (dialect != JITMAP_DIALECT_LLVM && w->sm->record_vars) {
				w->sm->record_vars[w->records].first = first_var;
				w->sm->record_vars[w->records].num = nloc;
			}
			rec->num_live_outs = nlive;
			rec->locations = w->sm->locations + first_location;
			rec->live_outs = w->sm->live_outs + first_live_out;
			rec->function = fn;
			rec->blob = blob_no;
			rec->section_offset = start + rec_at;
		}
		w->records++;
	}
	if (dialect == JITMAP_DIALECT_YK_EXTRAS) {
		rc = walk_spills(w, start, &pos, nf, first_function);
		if (rc)
			return rc;
	}

	if (w->sm) {
		jitmap_blob *bl = &w->sm->blobs[blob_no];
		w->sm->blob_dialects[blob_no] = (uint8_t)dialect;
		bl->version = version;
		bl->section_offset = start;
		bl->size = pos;
		bl->num_functions = nf;
		bl->num_constants = nc;
		bl->num_records = nr;
		bl->first_function = first_function;
		bl->first_constant = first_constant;
		bl->first_record = first_record;
	}
	w->blobs++;
	*end = start + pos;
	return 0;
}

static int walk_section(struct walk *w)
{
	uint64_t at = 0, end = 0;
	int rc;

	if (w->len == 0)
		return FAIL(0, "empty stackmap section");
	for (;;) {
		rc = walk_blob(w, at, &end);
		if (rc)
			return rc;
		/* Linkers pad between input sections with zeros; a blob never starts with a zero
		 * byte (that is not a version), so zeros are padding. */
		at = jitmap__align8(end);
		while (at < w->len && w->buf[at] == 0 && all_zero(w->buf + at,
				w->len - at < 8 ? w->len - at : 8))
			at += 8;
		if (at >= w->len)
			return 0;
	}
}

/* -- Byte order -- */

/* Bytes the first header's counts claim in byte order `order` (v3 sizes, the smallest). In
 * the wrong order a count is off by a factor of 2^8 or more, so the order that claims fewer
 * bytes is right, for whole sections and for truncated ones alike. */
static uint64_t header_claims(const uint8_t *buf, size_t len, jitmap_byte_order order)
{
	if (len < 16)
		return 0;
	uint64_t nf = jitmap__load(buf + 4, 4, order);
	uint64_t nc = jitmap__load(buf + 8, 4, order);
	uint64_t nr = jitmap__load(buf + 12, 4, order);
	uint64_t fsize = buf[0] == 1 ? 16 : 24;
	return 16 + nf * fsize + nc * 8 + nr * 24;
}

/* -- Public entry points -- */

jitmap_stackmap *jitmap_stackmap_parse(const void *buf, size_t len,
				       const jitmap_parse_opts *opts, jitmap_error *err)
{
	struct walk w = {.buf = buf, .len = len, .err = err, .force_dialect = -1, .skim = true};
	jitmap_stackmap *sm = NULL;
	int rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!buf && len) {
		jitmap__fail(err, -EINVAL, 0, "no buffer given");
		errno = EINVAL;
		return NULL;
	}
	if (opts && !JITMAP__OPTS_VALID(opts, arch)) {
		jitmap__fail(err, -EINVAL, 0, "jitmap_parse_opts.sz is %zu (set it to "
			     "sizeof(jitmap_parse_opts)), or fields this libjitmap does not know are set",
			     opts->sz);
		errno = EINVAL;
		return NULL;
	}
	w.order = opts && JITMAP_OPTS_HAS(opts, order) ? opts->order : JITMAP_ORDER_AUTO;
	if (w.order == JITMAP_ORDER_AUTO)
		w.order = header_claims(buf, len, JITMAP_ORDER_BIG) <
					  header_claims(buf, len, JITMAP_ORDER_LITTLE)
				  ? JITMAP_ORDER_BIG
				  : JITMAP_ORDER_LITTLE;

	rc = walk_section(&w);
	if (rc) {
		/* The first error may be in a location the skim did not read. */
		struct walk full = {.buf = buf, .len = len, .order = w.order, .err = err,
				    .force_dialect = -1};
		if (!walk_section(&full))
			jitmap__fail(err, rc = -EINVAL, 0, "a stackmap a full walk reads and a "
				     "skim does not (jitmap's fault: please report it)");
		goto fail;
	}

	rc = -ENOMEM;
	sm = calloc(1, sizeof(*sm));
	if (!sm)
		goto fail;
	sm->order = w.order;
	sm->arch = opts && JITMAP_OPTS_HAS(opts, arch) ? opts->arch : JITMAP_ARCH_UNKNOWN;
	sm->num_blobs = w.blobs;
	sm->num_functions = w.functions;
	sm->num_constants = w.constants;
	sm->num_records = w.records;
	sm->num_locations = w.locations;
	sm->num_live_outs = w.live_outs;
	/* +1 keeps calloc from returning NULL for zero counts. Counts are bounded by len. */
	sm->blobs = calloc(w.blobs + 1, sizeof(*sm->blobs));
	sm->names = calloc(w.functions + 1, sizeof(*sm->names));
	sm->sizes = calloc(w.functions + 1, sizeof(*sm->sizes));
	sm->constants = calloc(w.constants + 1, sizeof(*sm->constants));
	/* The large arrays in one block, faulted in at once (a fault a page costs more than
	 * filling it; jitmap__big_alloc): one block has one partly used page at its end. */
	const size_t at_records = jitmap__align64((w.functions + 1) * sizeof(*sm->functions));
	const size_t at_locations =
		at_records + jitmap__align64((w.records + 1) * sizeof(*sm->records));
	const size_t at_live_outs =
		at_locations + jitmap__align64((w.locations + 1) * sizeof(*sm->locations));
	char *block = jitmap__big_alloc(at_live_outs + (w.live_outs + 1) * sizeof(*sm->live_outs),
					&sm->mapped);
	if (block) {
		sm->functions = (jitmap_function *)block;
		sm->records = (jitmap_record *)(block + at_records);
		sm->locations = (jitmap_location *)(block + at_locations);
		sm->live_outs = (jitmap_live_out *)(block + at_live_outs);
	}
	sm->blob_dialects = calloc(w.blobs + 1, 1);
	if (!sm->blobs || !sm->functions || !sm->names || !sm->sizes || !sm->constants ||
	    !sm->records || !sm->locations || !sm->live_outs || !sm->blob_dialects)
		goto fail;
	/* ykllvm's groupings, only for sections that have them. Extra places and spill tables
	 * come together: a blob with locations has functions, each with its table. */
	if (w.vars || w.spill_tables) {
		sm->record_vars = calloc(w.records + 1, sizeof(*sm->record_vars));
		sm->live_vars = calloc(w.vars + 1, sizeof(*sm->live_vars));
		sm->location_vars = calloc(w.locations + 1, sizeof(*sm->location_vars));
		if (!sm->record_vars || !sm->live_vars || !sm->location_vars)
			goto fail;
	}
	if (w.spill_tables) {
		sm->loc_extras = calloc(w.locations + 1, sizeof(*sm->loc_extras));
		sm->extras = calloc(w.extras + 1, sizeof(*sm->extras));
		sm->spill_tables = calloc(w.functions + 1, sizeof(*sm->spill_tables));
		sm->spills = calloc(w.spills + 1, sizeof(*sm->spills));
		if (!sm->loc_extras || !sm->extras || !sm->spill_tables || !sm->spills)
			goto fail;
	}

	struct walk fill = {.buf = buf, .len = len, .order = w.order, .err = err, .sm = sm,
			    .force_dialect = -1};
	rc = walk_section(&fill);
	if (rc)
		goto fail; /* a location the skim did not read */
	sm->index_dirty = 1; /* built by the first lookup: relocation would make it stale */
	return sm;

fail:
	if (rc == -ENOMEM)
		jitmap__fail(err, rc, 0, "out of memory");
	jitmap_stackmap_free(sm);
	errno = -rc;
	return NULL;
}

void jitmap_stackmap_free(jitmap_stackmap *sm)
{
	if (!sm)
		return;
	if (sm->names)
		for (size_t i = 0; i < sm->num_functions; i++)
			free(sm->names[i]);
	free(sm->names);
	free(sm->sizes);
	free(sm->blobs);
	jitmap__big_free(sm->functions, sm->mapped); /* the block of the large arrays */
	free(sm->constants);
	jitmap__pc_index_free(&sm->index);
	jitmap__pc_index_free(&sm->by_address);
	free(sm->blob_dialects);
	free(sm->record_vars);
	free(sm->live_vars);
	free(sm->location_vars);
	free(sm->loc_extras);
	free(sm->extras);
	free(sm->spill_tables);
	free(sm->spills);
	free(sm);
}
