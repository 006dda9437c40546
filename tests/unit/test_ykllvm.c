/* test_ykllvm.c: ykllvm's stackmap layouts (jitmap_dialect), told apart from LLVM's and read.
 *
 * The sections are written here from the layout (docs/stackmap-format.md, "ykllvm"): a record
 * counts live variables, each a u8 count of locations; with extras a location carries a u16
 * count and that many i16 places before its offset, and a spill table per function follows the
 * records. The first two are the worked example of the docs, byte for byte.
 */
#include "unit.h"

#include "jitmap/frame.h"

/* 1 function at 0x401000 (stack 40), 1 record (ID 0 at +0x1c): variable 0 = [rbp-8];
 * variable 1 = rbx (also [rbp-16] and r14 with extras) and r12; spills rbx at -2, r14 at -3. */
static const uint8_t example_extras[] = {
	0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x00, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x1c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01, 0x03, 0x00, 0x08, 0x00, 0x06, 0x00, 0x00,
	0x00, 0x00, 0x00, 0xf8, 0xff, 0xff, 0xff, 0x02, 0x01, 0x00, 0x08, 0x00, 0x03, 0x00, 0x00, 0x00,
	0x02, 0x00, 0xf0, 0xff, 0x0e, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x08, 0x00, 0x0c, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x02, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0xfe, 0xff, 0xff, 0xff, 0x0e, 0x00,
	0x00, 0x00, 0xfd, 0xff, 0xff, 0xff,
};

/* The same without extras: 12-byte locations, no spill tables. */
static const uint8_t example_plain[] = {
	0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
	0x00, 0x10, 0x40, 0x00, 0x00, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x1c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x01, 0x03, 0x00, 0x08, 0x00, 0x06, 0x00, 0x00,
	0x00, 0xf8, 0xff, 0xff, 0xff, 0x02, 0x01, 0x00, 0x08, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x01, 0x00, 0x08, 0x00, 0x0c, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/* -- A writer of ykllvm sections, for generated cases -- */

struct yk_loc {
	uint8_t kind;
	uint16_t size, reg;
	int32_t offset;
	uint16_t num_extras;
	int16_t extras[3];
};

struct yk_section {
	uint8_t bytes[4096];
	size_t len;
	bool extras;
};

static void put(struct yk_section *s, uint64_t v, unsigned width)
{
	for (unsigned i = 0; i < width; i++)
		s->bytes[s->len++] = (uint8_t)(v >> (8 * i));
}

static void align8(struct yk_section *s)
{
	while (s->len % 8)
		s->bytes[s->len++] = 0;
}

/* A ykllvm section: `nf` functions of `per` records each; record r has (r % 4) variables of
 * (v % 3) locations, kinds cycling, extras on registers; live-outs on every third record. */
static void yk_generate(struct yk_section *s, bool extras, unsigned nf, unsigned per, unsigned seed)
{
	memset(s, 0, sizeof(*s));
	s->extras = extras;
	put(s, 3, 1), put(s, 0, 1), put(s, 0, 2);
	put(s, nf, 4), put(s, 1, 4), put(s, nf * per, 4);
	for (unsigned f = 0; f < nf; f++)
		put(s, 0x500000 + 0x100 * f, 8), put(s, 16 + 8 * f, 8), put(s, per, 8);
	put(s, UINT64_C(0x123456789), 8);
	for (unsigned f = 0; f < nf; f++) {
		for (unsigned r = 0; r < per; r++) {
			const unsigned nv = (r + seed) % 4;
			put(s, 100 * f + r, 8), put(s, 4 * r, 4), put(s, 0, 2), put(s, nv, 2);
			for (unsigned v = 0; v < nv; v++) {
				const unsigned nl = (v + r + seed) % 3;
				put(s, nl, 1);
				for (unsigned l = 0; l < nl; l++) {
					const uint8_t kind = (uint8_t)(1 + (v + l + seed) % 5);
					put(s, kind, 1), put(s, 0, 1), put(s, 8, 2);
					put(s, kind == CONST || kind == CIDX ? 0 : 3 + l, 2), put(s, 0, 2);
					if (extras) {
						const unsigned nx = kind == REG ? (l + seed) % 3 : 0;
						put(s, nx, 2);
						for (unsigned k = 0; k < nx; k++)
							put(s, (uint16_t)(k ? 12 : -16 - 8 * (int)l), 2);
					}
					put(s, kind == CIDX ? 0 : kind == REG ? 0 : (uint32_t)-8 * (l + 1), 4);
				}
			}
			align8(s);
			const unsigned nlive = r % 3 == 0 ? 2 : 0;
			put(s, 0, 2), put(s, nlive, 2);
			for (unsigned k = 0; k < nlive; k++)
				put(s, 3 + k, 2), put(s, 0, 1), put(s, 8, 1);
			align8(s);
		}
	}
	if (extras)
		for (unsigned f = 0; f < nf; f++) {
			put(s, f % 2, 1), put(s, 0, 1), put(s, f % 3, 4);
			for (unsigned k = 0; k < f % 3; k++)
				put(s, 3 + k, 2), put(s, 0, 2), put(s, (uint32_t)(-2 - (int)k), 4);
		}
}

static jitmap_stackmap *parse(const void *buf, size_t len, jitmap_error *err)
{
	JITMAP_OPTS(const jitmap_parse_opts, opts, .order = JITMAP_ORDER_LITTLE,
		    .arch = JITMAP_ARCH_X86_64);
	return jitmap_stackmap_parse(buf, len, &opts, err);
}

/* -- Tests -- */

static void test_example_with_extras(void **state)
{
	(void)state;
	jitmap_error err;
	jitmap_stackmap *sm = parse(example_extras, sizeof(example_extras), &err);
	if (!sm)
		fail_msg("offset 0x%llx: %s", (unsigned long long)err.offset, err.reason);
	assert_int_equal(jitmap_blob_dialect(sm, 0), JITMAP_DIALECT_YK_EXTRAS);
	assert_string_equal(jitmap_dialect_name(jitmap_blob_dialect(sm, 0)), "ykllvm-extras");
	assert_int_equal(jitmap_stackmap_blob(sm, 0)->size, sizeof(example_extras));
	const jitmap_record *r = jitmap_stackmap_record(sm, 0);
	assert_int_equal(jitmap_record_pc(sm, r), 0x40101c);
	assert_int_equal(r->num_locations, 3);
	assert_int_equal(jitmap_record_num_live_vars(sm, r), 2);
	uint16_t first, n;
	assert_int_equal(jitmap_record_live_var(sm, r, 0, &first, &n), 0);
	assert_int_equal(first, 0);
	assert_int_equal(n, 1);
	assert_int_equal(jitmap_record_live_var(sm, r, 1, &first, &n), 0);
	assert_int_equal(first, 1);
	assert_int_equal(n, 2);
	assert_int_equal(jitmap_record_live_var(sm, r, 2, &first, &n), -ERANGE);
	assert_int_equal(r->locations[0].kind, INDIRECT);
	assert_int_equal(r->locations[0].dwarf_reg, 6);
	assert_int_equal(r->locations[0].offset, -8);
	assert_int_equal(r->locations[1].dwarf_reg, 3);
	assert_int_equal(r->locations[2].dwarf_reg, 12);
	const int16_t *x;
	assert_int_equal(jitmap_location_extras(sm, r, 0, &x), 0);
	assert_int_equal(jitmap_location_extras(sm, r, 1, &x), 2);
	assert_int_equal(x[0], -16);
	assert_int_equal(x[1], 14);
	assert_int_equal(jitmap_location_extras(sm, r, 2, &x), 0);
	int fp;
	const jitmap_spill *sp;
	size_t ns;
	assert_int_equal(jitmap_function_spills(sm, 0, &fp, &sp, &ns), 0);
	assert_int_equal(fp, 1);
	assert_int_equal(ns, 2);
	assert_int_equal(sp[0].dwarf_reg, 3);
	assert_int_equal(sp[0].frame_index, -2);
	assert_int_equal(sp[1].dwarf_reg, 14);
	assert_int_equal(sp[1].frame_index, -3);
	assert_int_equal(jitmap_function_spills(sm, 1, &fp, &sp, &ns), -ERANGE);
	char *t = jitmap_record_text(sm, r, JITMAP_STATEPOINT_AUTO, NULL, 0, 0);
	assert_contains(t, "2 live variables in 3 locations (ykllvm-extras)");
	assert_contains(t, "rbx                    size 8  variable 1, also [rbp-16], r14");
	free(t);
	char *j = jitmap_record_json(sm, r, JITMAP_STATEPOINT_AUTO, NULL, 0);
	assert_contains(j, "\"live_var\": 1, \"extras\": [{\"raw\": -16, \"where\": \"[rbp-16]\"}, "
			   "{\"raw\": 14, \"where\": \"r14\"}]");
	free(j);
	jitmap_stackmap_free(sm);
}

static void test_example_without_extras(void **state)
{
	(void)state;
	jitmap_error err;
	jitmap_stackmap *sm = parse(example_plain, sizeof(example_plain), &err);
	if (!sm)
		fail_msg("offset 0x%llx: %s", (unsigned long long)err.offset, err.reason);
	assert_int_equal(jitmap_blob_dialect(sm, 0), JITMAP_DIALECT_YK);
	const jitmap_record *r = jitmap_stackmap_record(sm, 0);
	assert_int_equal(r->num_locations, 3);
	assert_int_equal(jitmap_record_num_live_vars(sm, r), 2);
	assert_int_equal(r->locations[0].offset, -8);
	assert_int_equal(r->locations[2].dwarf_reg, 12);
	const int16_t *x;
	assert_int_equal(jitmap_location_extras(sm, r, 1, &x), 0);
	int fp;
	const jitmap_spill *sp;
	size_t ns;
	assert_int_equal(jitmap_function_spills(sm, 0, &fp, &sp, &ns), 0);
	assert_int_equal(fp, -1);
	assert_int_equal(ns, 0);
	jitmap_stackmap_free(sm);
}

/* LLVM's own sections stay LLVM's: one variable per location, no extras, no spill table. */
static void test_llvm_sections_stay_llvm(void **state)
{
	(void)state;
	sm_builder b;
	smb_init(&b, 3, JITMAP_ORDER_LITTLE);
	smb_function(&b, 0x401000, 24);
	smb_record(&b, 1, 12);
	smb_loc(&b, REG, 8, 5, 0);
	smb_loc(&b, INDIRECT, 8, 7, 16);
	smb_record(&b, 2, 16);
	sm_bytes s = smb_emit(&b);
	jitmap_stackmap *sm = parse(s.data, s.len, NULL);
	assert_non_null(sm);
	assert_int_equal(jitmap_blob_dialect(sm, 0), JITMAP_DIALECT_LLVM);
	const jitmap_record *r = jitmap_stackmap_record(sm, 0);
	assert_int_equal(jitmap_record_num_live_vars(sm, r), 2);
	uint16_t first, n;
	assert_int_equal(jitmap_record_live_var(sm, r, 1, &first, &n), 0);
	assert_int_equal(first, 1);
	assert_int_equal(n, 1);
	int fp;
	const jitmap_spill *sp;
	size_t ns;
	assert_int_equal(jitmap_function_spills(sm, 0, &fp, &sp, &ns), 0);
	assert_int_equal(fp, -1);
	char *t = jitmap_record_text(sm, r, JITMAP_STATEPOINT_AUTO, NULL, 0, 0);
	assert_contains(t, "2 locations, 0 live-outs");
	assert_null(strstr(t, "variable"));
	free(t);
	jitmap_stackmap_free(sm);
	sm_bytes_free(&s);
}

/* Generated sections in both ykllvm layouts, many shapes: the dialect is the one written, and
 * every location and extra place reads back. */
static void test_generated_sections(void **state)
{
	(void)state;
	for (unsigned seed = 0; seed < 12; seed++)
		for (int extras = 0; extras <= 1; extras++)
			for (unsigned nf = 1; nf <= 4; nf++) {
				struct yk_section s;
				yk_generate(&s, extras, nf, 1 + seed % 4, seed);
				jitmap_error err;
				jitmap_stackmap *sm = parse(s.bytes, s.len, &err);
				if (!sm)
					fail_msg("seed %u extras %d nf %u: offset 0x%llx: %s", seed, extras,
						 nf, (unsigned long long)err.offset, err.reason);
				size_t locs = 0;
				for (size_t i = 0; i < jitmap_stackmap_num_records(sm); i++)
					locs += jitmap_stackmap_record(sm, i)->num_locations;
				/* With no location at all, ykllvm's layout without extras is LLVM's bytes. */
				const jitmap_dialect want = extras ? JITMAP_DIALECT_YK_EXTRAS
							    : locs ? JITMAP_DIALECT_YK
								   : JITMAP_DIALECT_LLVM;
				if (jitmap_blob_dialect(sm, 0) != want &&
				    !(extras && !locs && jitmap_blob_dialect(sm, 0) == JITMAP_DIALECT_LLVM))
					fail_msg("seed %u extras %d nf %u: dialect %d, want %d", seed, extras,
						 nf, jitmap_blob_dialect(sm, 0), want);
				for (size_t i = 0; i < jitmap_stackmap_num_records(sm); i++) {
					const jitmap_record *r = jitmap_stackmap_record(sm, i);
					if (want == JITMAP_DIALECT_LLVM)
						continue;
					assert_int_equal(jitmap_record_num_live_vars(sm, r),
							 (i % (1 + seed % 4) + seed) % 4);
					for (size_t l = 0; l < r->num_locations; l++) {
						assert_in_range(r->locations[l].kind, REG, CIDX);
						assert_int_equal(r->locations[l].size, 8);
					}
				}
				jitmap_stackmap_free(sm);
			}
}

/* No location anywhere: a spill table that says something makes the layout ykllvm's; one of
 * zeros reads as LLVM's padding (the same meaning). */
static void test_no_locations(void **state)
{
	(void)state;
	struct yk_section s;
	memset(&s, 0, sizeof(s));
	put(&s, 3, 4), put(&s, 1, 4), put(&s, 0, 4), put(&s, 1, 4);
	put(&s, 0x401000, 8), put(&s, 8, 8), put(&s, 1, 8);
	put(&s, 7, 8), put(&s, 0, 4), put(&s, 0, 2), put(&s, 0, 2), put(&s, 0, 4), put(&s, 0, 4);
	const size_t records_end = s.len;
	put(&s, 1, 1), put(&s, 0, 1), put(&s, 1, 4), put(&s, 3, 2), put(&s, 0, 2), put(&s, -2, 4);
	jitmap_stackmap *sm = parse(s.bytes, s.len, NULL);
	assert_non_null(sm);
	assert_int_equal(jitmap_blob_dialect(sm, 0), JITMAP_DIALECT_YK_EXTRAS);
	jitmap_stackmap_free(sm);
	memset(s.bytes + records_end, 0, s.len - records_end);
	s.len = records_end + 6;
	sm = parse(s.bytes, s.len, NULL);
	assert_non_null(sm);
	assert_int_equal(jitmap_blob_dialect(sm, 0), JITMAP_DIALECT_LLVM);
	jitmap_stackmap_free(sm);
	sm = parse(s.bytes, records_end, NULL);
	assert_non_null(sm);
	assert_int_equal(jitmap_blob_dialect(sm, 0), JITMAP_DIALECT_LLVM);
	jitmap_stackmap_free(sm);
}

/* An LLVM blob and a ykllvm one linked into one section, in both orders. */
static void test_mixed_blobs(void **state)
{
	(void)state;
	sm_builder b;
	smb_init(&b, 3, JITMAP_ORDER_LITTLE);
	smb_function(&b, 0x601000, 24);
	smb_record(&b, 9, 12);
	smb_loc(&b, REG, 8, 5, 0);
	sm_bytes llvm = smb_emit(&b);
	for (int yk_first = 0; yk_first <= 1; yk_first++) {
		sm_bytes s = {0};
		const sm_bytes yk = {(uint8_t *)example_extras, sizeof(example_extras)};
		sm_bytes_cat(&s, yk_first ? &yk : &llvm, 0);
		sm_bytes_cat(&s, yk_first ? &llvm : &yk, (8 - s.len % 8) % 8);
		jitmap_error err;
		jitmap_stackmap *sm = parse(s.data, s.len, &err);
		if (!sm)
			fail_msg("yk first %d: offset 0x%llx: %s", yk_first,
				 (unsigned long long)err.offset, err.reason);
		assert_int_equal(jitmap_stackmap_num_blobs(sm), 2);
		assert_int_equal(jitmap_blob_dialect(sm, yk_first ? 0 : 1), JITMAP_DIALECT_YK_EXTRAS);
		assert_int_equal(jitmap_blob_dialect(sm, yk_first ? 1 : 0), JITMAP_DIALECT_LLVM);
		assert_int_equal(jitmap_stackmap_num_records(sm), 2);
		const jitmap_record *r = NULL;
		assert_int_equal(jitmap_stackmap_lookup(sm, 0x40101c, &r, 1), 1);
		assert_int_equal(jitmap_record_num_live_vars(sm, r), 2);
		assert_int_equal(jitmap_stackmap_lookup(sm, 0x60100c, &r, 1), 1);
		assert_int_equal(jitmap_record_num_live_vars(sm, r), 1);
		jitmap_stackmap_free(sm);
		sm_bytes_free(&s);
	}
	sm_bytes_free(&llvm);
}

/* Every truncation of both examples is rejected, and the reason is LLVM's reading or a
 * ykllvm one: never a crash, never a section read as something it is not. */
static void test_truncations(void **state)
{
	(void)state;
	const struct {
		const uint8_t *bytes;
		size_t len;
	} ex[] = {{example_extras, sizeof(example_extras)}, {example_plain, sizeof(example_plain)}};
	for (size_t e = 0; e < ARRAY_LEN(ex); e++)
		for (size_t len = 1; len < ex[e].len; len++) {
			uint8_t *copy = malloc(len); /* exactly len: ASan sees a read past it */
			memcpy(copy, ex[e].bytes, len);
			jitmap_error err;
			jitmap_stackmap *sm = parse(copy, len, &err);
			if (sm)
				fail_msg("example %zu cut to %zu bytes was accepted (dialect %d)", e, len,
					 jitmap_blob_dialect(sm, 0));
			assert_true(err.reason[0]);
			free(copy);
		}
}

/* A record of 65,000 variables of one location each (ykllvm's limit is 65,535 locations a
 * record): each location's variable is found directly. Found by counting the variables before
 * it, rendering this record took 65,000^3 / 6 steps, a hang in the debugger. */
static void test_many_variables(void **state)
{
	(void)state;
	enum { NV = 65000 };
	const size_t len = 16 + 24 + 16 + NV * 13 + 8 + 8;
	uint8_t *b = calloc(1, len);
	size_t n = 0;
	b[0] = 3;
	b[4] = 1, b[12] = 1;                                /* 1 function, 1 record */
	b[16 + 1] = 0x10, b[16 + 2] = 0x40, b[16 + 8] = 8, b[16 + 16] = 1;
	n = 40 + 8 + 4;                                     /* record: ID 0, offset 0 */
	b[n + 2] = NV & 0xff, b[n + 3] = NV >> 8;           /* after the flags: NV variables */
	n += 4;
	for (unsigned v = 0; v < NV; v++, n += 13) {
		b[n] = 1;                                   /* one location: Register R#v%16 */
		b[n + 1] = REG, b[n + 3] = 8, b[n + 5] = (uint8_t)(v % 16);
	}
	n = (n + 7) & ~(size_t)7;
	n += 8;                                             /* no live-outs, aligned */
	jitmap_error err;
	jitmap_stackmap *sm = parse(b, n, &err);
	if (!sm)
		fail_msg("offset 0x%llx: %s", (unsigned long long)err.offset, err.reason);
	const jitmap_record *r = jitmap_stackmap_record(sm, 0);
	assert_int_equal(r->num_locations, NV);
	assert_int_equal(jitmap_record_num_live_vars(sm, r), NV);
	uint16_t first, count;
	assert_int_equal(jitmap_record_live_var(sm, r, NV - 1, &first, &count), 0);
	assert_int_equal(first, NV - 1);
	assert_int_equal(count, 1);
	char *t = jitmap_record_text(sm, r, JITMAP_STATEPOINT_NONE, NULL, 0, 0);
	assert_contains(t, "65000 live variables in 65000 locations (ykllvm)");
	assert_contains(t, "size 8  variable 64999\n");
	free(t);
	char *j = jitmap_record_json(sm, r, JITMAP_STATEPOINT_NONE, NULL, 0);
	assert_contains(j, "\"index\": 64999, \"kind\": \"register\"");
	assert_contains(j, "\"live_var\": 64999}");
	free(j);
	jitmap_stackmap_free(sm);
	free(b);
}

/* What breaks a ykllvm layout is named; a section that fits neither is LLVM's error. */
static void test_hostile(void **state)
{
	(void)state;
	uint8_t b[sizeof(example_extras)];
	jitmap_error err;
	/* extra places on the Indirect location: neither ykllvm layout fits; said in the one
	 * with extras, at the count */
	memcpy(b, example_extras, sizeof(b));
	b[0x41] = 1;
	assert_null(parse(b, sizeof(b), &err));
	assert_int_equal(err.offset, 0x41);
	assert_string_equal(err.reason, "ykllvm layout (its records count live variables): record 0 "
			    "location 0: extra places on a location of kind indirect (ykllvm gives "
			    "them to registers only)");
	/* a frame pointer flag of 2 */
	memcpy(b, example_extras, sizeof(b));
	b[0x70] = 2;
	assert_null(parse(b, sizeof(b), &err));
	assert_int_equal(err.offset, 0x70);
	assert_contains(err.reason, "function 0's spill table: frame pointer flag 2 (0 or 1)");
	/* a spill count past the end */
	memcpy(b, example_extras, sizeof(b));
	b[0x72] = 3;
	assert_null(parse(b, sizeof(b), &err));
	assert_int_equal(err.offset, 0x72);
	assert_contains(err.reason, "function 0: spill count 3 overruns the section");
	/* a byte after the spill tables */
	uint8_t longer[sizeof(example_extras) + 1];
	memcpy(longer, example_extras, sizeof(example_extras));
	longer[sizeof(example_extras)] = 9;
	assert_null(parse(longer, sizeof(longer), &err));
	assert_int_equal(err.offset, sizeof(example_extras));
	assert_contains(err.reason, "1 byte after the spill tables: neither padding nor");
	/* the record count of the function too large for the header's */
	memcpy(b, example_extras, sizeof(b));
	b[0x20] = 2;
	assert_null(parse(b, sizeof(b), &err));
	assert_contains(err.reason, "record counts add up to more than");
	/* a record of another stackmap asks nothing of this one */
	jitmap_stackmap *sm = parse(example_extras, sizeof(example_extras), NULL);
	jitmap_stackmap *other = parse(example_plain, sizeof(example_plain), NULL);
	const jitmap_record *r = jitmap_stackmap_record(other, 0);
	assert_int_equal(jitmap_record_num_live_vars(sm, r), 0);
	const int16_t *x;
	assert_int_equal(jitmap_location_extras(sm, r, 1, &x), 0);
	jitmap_stackmap_free(sm);
	jitmap_stackmap_free(other);
	assert_null(jitmap_dialect_name((jitmap_dialect)7));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_with_extras),
		cmocka_unit_test(test_example_without_extras),
		cmocka_unit_test(test_llvm_sections_stay_llvm),
		cmocka_unit_test(test_generated_sections),
		cmocka_unit_test(test_no_locations),
		cmocka_unit_test(test_mixed_blobs),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_many_variables),
	};
	return cmocka_run_group_tests_name("ykllvm", tests, NULL, NULL);
}
