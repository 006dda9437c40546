/* test_parse.c: jitmap_stackmap_parse and the model accessors.
 *
 * Sections come from sm_builder, so the expected model is the builder's own description.
 * The hostile table patches one field of a valid section at a time and pins the exact error
 * offset and reason (the messages of reader/parse.c).
 */
#include "unit.h"

/* -- Samples -- */

/* One function: every record belongs to it, in every version (v1 can assign records only
 * when there is a single function). */
static void sample_one_function(sm_builder *b, int version, jitmap_byte_order o)
{
	smb_init(b, version, o);
	smb_function(b, 0x401000, 24);
	smb_constant(b, UINT64_C(4294967296));
	smb_constant(b, UINT64_C(9000000000));
	smb_record(b, 1, 12);
	smb_loc(b, REG, 8, 5, 0);
	smb_loc(b, REG, 4, 4, 0);
	smb_loc(b, CONST, 8, 0, 42);
	smb_loc(b, CONST, 8, 0, -1);
	smb_loc(b, CIDX, 8, 0, 0);
	smb_loc(b, DIRECT, 8, 6, -8);
	smb_record(b, 2, 12);
	smb_loc(b, REG, 8, 5, 0);
	smb_record(b, 3, 40);
	smb_loc(b, REG, 8, 0, 0);
	smb_loc(b, INDIRECT, 16, 7, 32);
	smb_loc(b, CIDX, 8, 0, 1);
	smb_live_out(b, 0, 8);
	smb_live_out(b, 4, 8);
	smb_live_out(b, 5, 8);
	smb_live_out(b, 7, 8);
	smb_record(b, UINT64_MAX, 64); /* LLVM's overflow record: no locations, no live-outs */
	smb_record(b, 5, 0x7fffffff);
	smb_loc(b, INDIRECT, 4, 6, -20);
	smb_live_out(b, 3, 16);
}

/* Three functions (the last with a dynamic frame), so RecordCount matters. */
static void sample_three_functions(sm_builder *b, int version, jitmap_byte_order o)
{
	smb_init(b, version, o);
	smb_constant(b, UINT64_C(0x8000000000000000));
	smb_function(b, 0x401000, 24);
	smb_record(b, 10, 4);
	smb_loc(b, REG, 8, 3, 0);
	smb_record(b, 11, 8);
	smb_loc(b, CIDX, 8, 0, 0);
	smb_live_out(b, 12, 8);
	smb_function(b, 0x401100, 8);
	smb_record(b, 12, 0);
	smb_function(b, 0x401200, UINT64_MAX);
	smb_record(b, 13, 16);
	smb_loc(b, DIRECT, 8, 6, -16);
	smb_loc(b, CONST, 8, 0, INT32_MIN);
	smb_record(b, 14, 16);
}

/* The hostile sample: a valid v3 section whose layout the table below relies on.
 *   0 header | 16 f0 (records 0, 1) | 40 f1 (record 2) | 64 constants 1111, 2222
 *   80 r0: locations at 96, 108, 120; pad 132; live-out header 136; live-outs 140, 144; pad 148
 *  152 r1: locations at 168, 180; live-out header 192; live-out 196
 *  200 r2: location at 216; pad 228; live-out header 232; pad 236; end 240 */
static void sample_hostile(sm_builder *b, jitmap_byte_order o)
{
	smb_init(b, 3, o);
	smb_constant(b, 1111);
	smb_constant(b, 2222);
	smb_function(b, 0x1000, 16);
	smb_record(b, 1, 4);
	smb_loc(b, REG, 8, 3, 0);
	smb_loc(b, CONST, 8, 0, 7);
	smb_loc(b, CIDX, 8, 0, 1);
	smb_live_out(b, 0, 8);
	smb_live_out(b, 7, 8);
	smb_record(b, 2, 8);
	smb_loc(b, INDIRECT, 8, 7, 16);
	smb_loc(b, DIRECT, 8, 6, -8);
	smb_live_out(b, 3, 8);
	smb_function(b, 0x2000, 32);
	smb_record(b, 3, 0x10);
	smb_loc(b, CIDX, 8, 0, 0);
}

/* -- Comparing a parsed blob with its description -- */

static void check_blob(const jitmap_stackmap *sm, size_t blob_no, const sm_builder *b,
		       uint64_t base)
{
	const jitmap_blob *bl = jitmap_stackmap_blob(sm, blob_no);
	assert_non_null(bl);
	assert_int_equal(bl->version, b->version);
	assert_int_equal(bl->section_offset, base);
	assert_int_equal(bl->size, b->size);
	assert_int_equal(bl->num_functions, b->num_functions);
	assert_int_equal(bl->num_constants, b->num_constants);
	assert_int_equal(bl->num_records, b->num_records);
	/* v1 cannot say which function owns a record unless there is only one. */
	const bool owned = b->version >= 2 || b->num_functions == 1;

	for (unsigned i = 0; i < b->num_functions; i++) {
		const struct smb_function *want = &b->functions[i];
		const jitmap_function *f = jitmap_stackmap_function(sm, bl->first_function + i);
		assert_non_null(f);
		assert_int_equal(f->address, want->address);
		assert_int_equal(f->raw_address, want->address);
		assert_int_equal(f->stack_size, want->stack_size);
		assert_int_equal(f->record_count, owned ? want->record_count : 0);
		assert_int_equal(f->blob, blob_no);
		assert_int_equal(f->section_offset, base + want->at);
		assert_null(f->name);
	}
	for (unsigned i = 0; i < b->num_constants; i++) {
		uint64_t v = 0;
		assert_int_equal(jitmap_stackmap_constant(sm, bl->first_constant + i, &v), 0);
		assert_int_equal(v, b->constants[i]);
	}
	size_t next_of_function[SMB_MAX_FUNCTIONS] = {0};
	for (unsigned i = 0; i < b->num_records; i++) {
		const struct smb_record *want = &b->records[i];
		const jitmap_record *r = jitmap_stackmap_record(sm, bl->first_record + i);
		assert_non_null(r);
		assert_int_equal(r->id, want->id);
		assert_int_equal(r->instruction_offset, want->offset);
		assert_int_equal(r->flags, 0);
		assert_int_equal(r->num_locations, want->num_locs);
		assert_int_equal(r->num_live_outs, want->num_live_outs);
		assert_int_equal(r->blob, blob_no);
		assert_int_equal(r->section_offset, base + want->at);
		for (unsigned l = 0; l < want->num_locs; l++) {
			assert_int_equal(r->locations[l].kind, want->locs[l].kind);
			assert_int_equal(r->locations[l].size, want->locs[l].size);
			assert_int_equal(r->locations[l].dwarf_reg, want->locs[l].reg);
			assert_int_equal(r->locations[l].offset, want->locs[l].offset);
		}
		for (unsigned l = 0; l < want->num_live_outs; l++) {
			assert_int_equal(r->live_outs[l].dwarf_reg, want->live_outs[l].reg);
			assert_int_equal(r->live_outs[l].size, want->live_outs[l].size);
		}
		const jitmap_function *f = jitmap_record_function(sm, r);
		if (owned) {
			assert_int_equal(r->function, bl->first_function + want->function);
			assert_ptr_equal(f, jitmap_stackmap_function(sm, r->function));
			/* Records of a function are consecutive, from first_record on. */
			assert_int_equal(bl->first_record + i,
					 f->first_record + next_of_function[want->function]++);
			assert_int_equal(jitmap_record_pc(sm, r),
					 b->functions[want->function].address + want->offset);
		} else {
			assert_null(f);
			assert_int_equal(jitmap_record_pc(sm, r), want->offset);
		}
	}
}

/* Everything but where the bytes sat: what v1, v2 and v3 in either order must agree on. */
static void check_same_model(const jitmap_stackmap *a, const jitmap_stackmap *b)
{
	assert_int_equal(jitmap_stackmap_num_functions(a), jitmap_stackmap_num_functions(b));
	assert_int_equal(jitmap_stackmap_num_constants(a), jitmap_stackmap_num_constants(b));
	assert_int_equal(jitmap_stackmap_num_records(a), jitmap_stackmap_num_records(b));
	for (size_t i = 0; i < jitmap_stackmap_num_functions(a); i++) {
		const jitmap_function *x = jitmap_stackmap_function(a, i);
		const jitmap_function *y = jitmap_stackmap_function(b, i);
		assert_int_equal(x->address, y->address);
		assert_int_equal(x->stack_size, y->stack_size);
		assert_int_equal(x->record_count, y->record_count);
		assert_int_equal(x->first_record, y->first_record);
	}
	for (size_t i = 0; i < jitmap_stackmap_num_constants(a); i++) {
		uint64_t x, y;
		assert_int_equal(jitmap_stackmap_constant(a, i, &x), 0);
		assert_int_equal(jitmap_stackmap_constant(b, i, &y), 0);
		assert_int_equal(x, y);
	}
	for (size_t i = 0; i < jitmap_stackmap_num_records(a); i++) {
		const jitmap_record *x = jitmap_stackmap_record(a, i);
		const jitmap_record *y = jitmap_stackmap_record(b, i);
		assert_int_equal(x->id, y->id);
		assert_int_equal(x->instruction_offset, y->instruction_offset);
		assert_int_equal(x->function, y->function);
		assert_int_equal(x->num_locations, y->num_locations);
		assert_int_equal(x->num_live_outs, y->num_live_outs);
		assert_memory_equal(x->locations, y->locations,
				    x->num_locations * sizeof(*x->locations));
		for (size_t l = 0; l < x->num_live_outs; l++) {
			assert_int_equal(x->live_outs[l].dwarf_reg, y->live_outs[l].dwarf_reg);
			assert_int_equal(x->live_outs[l].size, y->live_outs[l].size);
		}
	}
}

static const struct {
	int version;
	jitmap_byte_order order;
} layouts[] = {
	{1, JITMAP_ORDER_LITTLE}, {1, JITMAP_ORDER_BIG}, {2, JITMAP_ORDER_LITTLE},
	{2, JITMAP_ORDER_BIG},    {3, JITMAP_ORDER_LITTLE}, {3, JITMAP_ORDER_BIG},
};

/* -- Versions, byte orders, blobs -- */

static void test_versions_and_orders_decode_alike(void **state)
{
	(void)state;
	sm_builder ref_b;
	sample_one_function(&ref_b, 3, JITMAP_ORDER_LITTLE);
	sm_bytes ref_s = smb_emit(&ref_b);
	jitmap_stackmap *ref = parse_bytes_ok(&ref_s, JITMAP_ORDER_LITTLE, JITMAP_ARCH_UNKNOWN);

	for (size_t i = 0; i < ARRAY_LEN(layouts); i++) {
		sm_builder b;
		sample_one_function(&b, layouts[i].version, layouts[i].order);
		sm_bytes s = smb_emit(&b);
		jitmap_stackmap *sm = parse_bytes_ok(&s, layouts[i].order, JITMAP_ARCH_X86_64);
		assert_int_equal(jitmap_stackmap_byte_order(sm), layouts[i].order);
		assert_int_equal(jitmap_stackmap_arch(sm), JITMAP_ARCH_X86_64);
		assert_int_equal(jitmap_stackmap_num_blobs(sm), 1);
		check_blob(sm, 0, &b, 0);
		check_same_model(sm, ref);
		jitmap_stackmap_free(sm);
		sm_bytes_free(&s);
	}
	jitmap_stackmap_free(ref);
	sm_bytes_free(&ref_s);
}

static void test_record_counts_assign_records(void **state)
{
	(void)state;
	sm_builder ref_b;
	sample_three_functions(&ref_b, 3, JITMAP_ORDER_LITTLE);
	sm_bytes ref_s = smb_emit(&ref_b);
	jitmap_stackmap *ref = parse_bytes_ok(&ref_s, JITMAP_ORDER_LITTLE, JITMAP_ARCH_UNKNOWN);
	assert_int_equal(jitmap_stackmap_function(ref, 0)->first_record, 0);
	assert_int_equal(jitmap_stackmap_function(ref, 1)->first_record, 2);
	assert_int_equal(jitmap_stackmap_function(ref, 2)->first_record, 3);
	assert_int_equal(jitmap_stackmap_function(ref, 2)->stack_size, UINT64_MAX);

	for (size_t i = 0; i < ARRAY_LEN(layouts); i++) {
		if (layouts[i].version == 1)
			continue;
		sm_builder b;
		sample_three_functions(&b, layouts[i].version, layouts[i].order);
		sm_bytes s = smb_emit(&b);
		jitmap_stackmap *sm = parse_bytes_ok(&s, layouts[i].order, JITMAP_ARCH_UNKNOWN);
		check_blob(sm, 0, &b, 0);
		check_same_model(sm, ref);
		jitmap_stackmap_free(sm);
		sm_bytes_free(&s);
	}
	jitmap_stackmap_free(ref);
	sm_bytes_free(&ref_s);
}

/* v1 has no RecordCount: with several functions, records belong to none, have no absolute PC
 * and are not in the PC index. */
static void test_v1_several_functions_leaves_records_unowned(void **state)
{
	(void)state;
	sm_builder b;
	sample_three_functions(&b, 1, JITMAP_ORDER_BIG);
	sm_bytes s = smb_emit(&b);
	jitmap_stackmap *sm = parse_bytes_ok(&s, JITMAP_ORDER_BIG, JITMAP_ARCH_UNKNOWN);
	check_blob(sm, 0, &b, 0);
	const jitmap_record *out[4];
	assert_int_equal(jitmap_stackmap_lookup(sm, 0x401000 + 4, out, 4), 0);
	assert_int_equal(jitmap_stackmap_lookup(sm, 4, out, 4), 0);
	assert_true(jitmap_stackmap_num_records(sm) > 0);
	assert_int_equal(jitmap_stackmap_num_records_with_pc(sm), 0);
	jitmap_stackmap_free(sm);
	sm_bytes_free(&s);
	/* v2: every record has its function and a PC. */
	sample_three_functions(&b, 2, JITMAP_ORDER_BIG);
	s = smb_emit(&b);
	sm = parse_bytes_ok(&s, JITMAP_ORDER_BIG, JITMAP_ARCH_UNKNOWN);
	assert_int_equal(jitmap_stackmap_num_records_with_pc(sm), jitmap_stackmap_num_records(sm));
	jitmap_stackmap_free(sm);
	sm_bytes_free(&s);
}

/* A linked section: one blob per object, zero padding between and after. Constant indexes
 * are blob-relative. */
static void test_concatenated_blobs(void **state)
{
	(void)state;
	for (int order = JITMAP_ORDER_LITTLE; order <= JITMAP_ORDER_BIG; order++) {
		sm_builder b1, b2, b3;
		smb_init(&b1, 3, order);
		smb_constant(&b1, 100);
		smb_constant(&b1, 200);
		smb_function(&b1, 0x1000, 16);
		smb_record(&b1, 1, 4);
		smb_loc(&b1, CIDX, 8, 0, 1);
		smb_loc(&b1, CIDX, 8, 0, 0);
		smb_init(&b2, 3, order);
		smb_constant(&b2, 300);
		smb_function(&b2, 0x2000, 32);
		smb_record(&b2, 2, 8);
		smb_loc(&b2, CIDX, 8, 0, 0);
		smb_live_out(&b2, 3, 8);
		smb_record(&b2, 3, 12);
		sample_three_functions(&b3, 2, order);

		sm_bytes s1 = smb_emit(&b1), s2 = smb_emit(&b2), s3 = smb_emit(&b3);
		sm_bytes all = sm_bytes_copy(&s1);
		sm_bytes_cat(&all, &s2, 8);
		sm_bytes_cat(&all, &s3, 24);
		sm_bytes_pad(&all, 16);
		const uint64_t at2 = s1.len + 8, at3 = at2 + s2.len + 24;

		jitmap_stackmap *sm = parse_bytes_ok(&all, order, JITMAP_ARCH_UNKNOWN);
		assert_int_equal(jitmap_stackmap_num_blobs(sm), 3);
		assert_null(jitmap_stackmap_blob(sm, 3));
		check_blob(sm, 0, &b1, 0);
		check_blob(sm, 1, &b2, at2);
		check_blob(sm, 2, &b3, at3);
		assert_int_equal(jitmap_stackmap_num_functions(sm), 1 + 1 + 3);
		assert_int_equal(jitmap_stackmap_num_constants(sm), 2 + 1 + 1);
		assert_int_equal(jitmap_stackmap_num_records(sm), 1 + 2 + 5);
		assert_int_equal(jitmap_stackmap_blob(sm, 1)->first_constant, 2);
		assert_int_equal(jitmap_stackmap_blob(sm, 2)->first_record, 3);

		/* Index 0 means 100 in blob 0 and 300 in blob 1. */
		uint64_t v;
		const jitmap_record *r0 = jitmap_stackmap_record(sm, 0);
		const jitmap_record *r1 = jitmap_stackmap_record(sm, 1);
		assert_int_equal(jitmap_location_constant(sm, r0, &r0->locations[0], &v), 0);
		assert_int_equal(v, 200);
		assert_int_equal(jitmap_location_constant(sm, r0, &r0->locations[1], &v), 0);
		assert_int_equal(v, 100);
		assert_int_equal(jitmap_location_constant(sm, r1, &r1->locations[0], &v), 0);
		assert_int_equal(v, 300);
		const jitmap_record *r3 = jitmap_stackmap_record(sm, 4);
		assert_int_equal(r3->id, 11);
		assert_int_equal(jitmap_location_constant(sm, r3, &r3->locations[0], &v), 0);
		assert_int_equal(v, UINT64_C(0x8000000000000000));
		/* PCs of every blob are in one index. */
		const jitmap_record *out[2];
		assert_int_equal(jitmap_stackmap_lookup(sm, 0x2008, out, 2), 1);
		assert_ptr_equal(out[0], r1);
		jitmap_stackmap_free(sm);

		/* Trailing zeros need not be a multiple of 8. */
		sm_bytes odd = sm_bytes_copy(&s1);
		sm_bytes_pad(&odd, 5);
		sm = parse_bytes_ok(&odd, order, JITMAP_ARCH_UNKNOWN);
		assert_int_equal(jitmap_stackmap_num_blobs(sm), 1);
		jitmap_stackmap_free(sm);
		sm_bytes_free(&odd);

		sm_bytes_free(&s1);
		sm_bytes_free(&s2);
		sm_bytes_free(&s3);
		sm_bytes_free(&all);
	}
}

/* Between blobs only whole 8-byte units of zeros are padding; anything else must be a header. */
static void test_bad_padding_between_blobs(void **state)
{
	(void)state;
	sm_builder b;
	sample_hostile(&b, JITMAP_ORDER_LITTLE);
	sm_bytes s = smb_emit(&b);
	static const struct {
		const char *name;
		uint8_t between[16];
		size_t len;
		size_t error_at; /* relative to the end of the first blob */
		const char *reason;
	} cases[] = {
		{"4 zeros", {0}, 4, 0, "unknown stackmap version 0"},
		{"12 zeros", {0}, 12, 8, "unknown stackmap version 0"},
		{"8 x 0xff", {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 8, 0,
		 "unknown stackmap version 255"},
		{"zero then junk", {0, 1, 0, 0, 0, 0, 0, 0}, 8, 0, "unknown stackmap version 0"},
		{"zeros then a bad header", {0, 0, 0, 0, 0, 0, 0, 0, 3, 1}, 16, 9,
		 "non-zero reserved byte in the stackmap header"},
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		const sm_bytes between = {(uint8_t *)cases[i].between, cases[i].len};
		sm_bytes all = sm_bytes_copy(&s);
		sm_bytes_cat(&all, &between, 0);
		sm_bytes_cat(&all, &s, 0);
		jitmap_error err;
		JITMAP_OPTS(const jitmap_parse_opts, opts, .order = JITMAP_ORDER_LITTLE);
		errno = 0;
		if (jitmap_stackmap_parse(all.data, all.len, &opts, &err))
			fail_msg("%s: accepted", cases[i].name);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(err.code, -EINVAL);
		assert_int_equal(err.offset, s.len + cases[i].error_at);
		assert_contains(err.reason, cases[i].reason);
		sm_bytes_free(&all);
	}
	sm_bytes_free(&s);
}

/* -- Byte order guess -- */

static void test_auto_byte_order(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(layouts); i++) {
		sm_builder b;
		sample_one_function(&b, layouts[i].version, layouts[i].order);
		sm_bytes s = smb_emit(&b);
		jitmap_stackmap *sm = parse_bytes_ok(&s, JITMAP_ORDER_AUTO, JITMAP_ARCH_UNKNOWN);
		assert_int_equal(jitmap_stackmap_byte_order(sm), layouts[i].order);
		check_blob(sm, 0, &b, 0);
		jitmap_stackmap_free(sm);
		/* NULL options mean AUTO too. */
		jitmap_error err;
		sm = jitmap_stackmap_parse(s.data, s.len, NULL, &err);
		assert_non_null(sm);
		assert_int_equal(jitmap_stackmap_byte_order(sm), layouts[i].order);
		assert_int_equal(jitmap_stackmap_arch(sm), JITMAP_ARCH_UNKNOWN);
		jitmap_stackmap_free(sm);
		sm_bytes_free(&s);
	}
	/* Counts that read the same both ways (all zero): a tie, which little-endian wins. */
	sm_builder b;
	smb_init(&b, 3, JITMAP_ORDER_BIG);
	sm_bytes s = smb_emit(&b);
	assert_int_equal(s.len, 16);
	jitmap_stackmap *sm = parse_bytes_ok(&s, JITMAP_ORDER_AUTO, JITMAP_ARCH_UNKNOWN);
	assert_int_equal(jitmap_stackmap_byte_order(sm), JITMAP_ORDER_LITTLE);
	assert_int_equal(jitmap_stackmap_num_blobs(sm), 1);
	assert_int_equal(jitmap_stackmap_num_functions(sm), 0);
	jitmap_stackmap_free(sm);
	sm_bytes_free(&s);
	/* A big-endian section truncated inside its records is still recognised as big-endian:
	 * the error is the truncation, not a wild count. */
	sample_hostile(&b, JITMAP_ORDER_BIG);
	s = smb_emit(&b);
	jitmap_error err;
	assert_null(jitmap_stackmap_parse(s.data, b.records[2].at + 28, NULL, &err));
	assert_int_equal(err.offset, b.records[2].at + 28);
	assert_contains(err.reason, "record 2: truncated padding after the locations");
	sm_bytes_free(&s);
}

/* -- Accessors -- */

static void test_accessors(void **state)
{
	(void)state;
	sm_builder b;
	sample_one_function(&b, 3, JITMAP_ORDER_LITTLE);
	sm_bytes s = smb_emit(&b);
	jitmap_stackmap *sm = parse_bytes_ok(&s, JITMAP_ORDER_LITTLE, JITMAP_ARCH_AARCH64);
	uint64_t v = 7;

	assert_int_equal(jitmap_stackmap_arch(sm), JITMAP_ARCH_AARCH64);
	assert_int_equal(jitmap_stackmap_num_blobs(sm), 1);
	assert_int_equal(jitmap_stackmap_num_functions(sm), 1);
	assert_int_equal(jitmap_stackmap_num_constants(sm), 2);
	assert_int_equal(jitmap_stackmap_num_records(sm), 5);
	assert_null(jitmap_stackmap_blob(sm, 1));
	assert_null(jitmap_stackmap_function(sm, 1));
	assert_null(jitmap_stackmap_record(sm, 5));
	assert_null(jitmap_stackmap_record(sm, SIZE_MAX));
	assert_int_equal(jitmap_stackmap_constant(sm, 2, &v), -ERANGE);
	assert_int_equal(v, 7);

	/* Location constants: small ones sign-extend, indexes resolve, other kinds are -EINVAL. */
	const jitmap_record *r = jitmap_stackmap_record(sm, 0);
	assert_int_equal(jitmap_location_constant(sm, r, &r->locations[2], &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(jitmap_location_constant(sm, r, &r->locations[3], &v), 0);
	assert_int_equal(v, UINT64_MAX);
	assert_int_equal(jitmap_location_constant(sm, r, &r->locations[4], &v), 0);
	assert_int_equal(v, UINT64_C(4294967296));
	assert_int_equal(jitmap_location_constant(sm, r, &r->locations[0], &v), -EINVAL);
	assert_int_equal(jitmap_location_constant(sm, r, &r->locations[5], &v), -EINVAL);
	const jitmap_location bad_index = {CIDX, 8, 0, 2};
	assert_int_equal(jitmap_location_constant(sm, r, &bad_index, &v), -ERANGE);
	const jitmap_location neg_index = {CIDX, 8, 0, -1};
	assert_int_equal(jitmap_location_constant(sm, r, &neg_index, &v), -ERANGE);

	/* The overflow record and the largest offset. */
	r = jitmap_stackmap_record(sm, 3);
	assert_int_equal(r->id, UINT64_MAX);
	assert_int_equal(r->num_locations, 0);
	r = jitmap_stackmap_record(sm, 4);
	assert_int_equal(jitmap_record_pc(sm, r), 0x401000 + UINT64_C(0x7fffffff));
	assert_int_equal(r->live_outs[0].size, 16);

	/* Names are copied, replaced, and cleared. */
	assert_int_equal(jitmap_stackmap_set_function_name(sm, 1, "x"), -ERANGE);
	char name[] = "sm_func";
	assert_int_equal(jitmap_stackmap_set_function_name(sm, 0, name), 0);
	name[0] = 'X';
	assert_string_equal(jitmap_stackmap_function(sm, 0)->name, "sm_func");
	assert_int_equal(jitmap_stackmap_set_function_name(sm, 0, "other"), 0);
	assert_string_equal(jitmap_stackmap_function(sm, 0)->name, "other");
	assert_int_equal(jitmap_stackmap_set_function_name(sm, 0, NULL), 0);
	assert_null(jitmap_stackmap_function(sm, 0)->name);
	assert_int_equal(jitmap_stackmap_set_function_name(sm, 0, "kept"), 0);

	static const char *const kinds[] = {"unknown", "register", "direct", "indirect",
					    "constant", "constant_index", "unknown"};
	for (int k = 0; k < (int)ARRAY_LEN(kinds); k++)
		assert_string_equal(jitmap_loc_kind_name((jitmap_loc_kind)k), kinds[k]);
	assert_string_equal(jitmap_strerror(0), "success");
	assert_string_equal(jitmap_strerror(-EINVAL), "malformed input");
	assert_string_equal(jitmap_strerror(-ERANGE), "index out of range");
	assert_string_equal(jitmap_strerror(-12345), "unknown error");

	jitmap_stackmap_free(sm); /* frees the name too (ASan checks) */
	jitmap_stackmap_free(NULL);
	sm_bytes_free(&s);
}

static void test_empty_and_missing_input(void **state)
{
	(void)state;
	jitmap_error err;
	errno = 0;
	assert_null(jitmap_stackmap_parse("", 0, NULL, &err));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(err.code, -EINVAL);
	assert_int_equal(err.offset, 0);
	assert_contains(err.reason, "empty stackmap section");
	assert_null(jitmap_stackmap_parse(NULL, 0, NULL, &err));
	assert_contains(err.reason, "empty stackmap section");
	assert_null(jitmap_stackmap_parse(NULL, 16, NULL, &err));
	assert_contains(err.reason, "no buffer given");
	/* The error record is optional. */
	errno = 0;
	assert_null(jitmap_stackmap_parse("\3", 1, NULL, NULL));
	assert_int_equal(errno, EINVAL);
}

/* -- Truncation -- */

static void expect_rejected(const uint8_t *buf, size_t n, jitmap_byte_order order)
{
	JITMAP_OPTS(const jitmap_parse_opts, opts, .order = order);
	jitmap_error err;
	memset(&err, 0x55, sizeof(err));
	errno = 0;
	jitmap_stackmap *sm = jitmap_stackmap_parse(buf, n, &opts, &err);
	if (sm)
		fail_msg("%zu-byte prefix accepted", n);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(err.code, -EINVAL);
	if (!err.reason[0] || !memchr(err.reason, 0, sizeof(err.reason)))
		fail_msg("%zu-byte prefix: no reason", n);
	if (err.offset > n)
		fail_msg("%zu-byte prefix: offset %llu beyond the input (%s)", n,
			 (unsigned long long)err.offset, err.reason);
}

/* A single blob has no valid proper prefix: the header's counts fix its length, and the last
 * record's padding is part of it. Each prefix is copied to a buffer of exactly its length so
 * that ASan catches any read past it. */
static void test_every_truncation_of_one_blob_is_rejected(void **state)
{
	(void)state;
	for (int order = JITMAP_ORDER_LITTLE; order <= JITMAP_ORDER_BIG; order++) {
		sm_builder b;
		sample_hostile(&b, order);
		sm_bytes s = smb_emit(&b);
		assert_int_equal(s.len, 240);
		assert_int_not_equal(b.records[2].end_pad_len, 0);
		for (size_t n = 0; n < s.len; n++) {
			uint8_t *copy = malloc(n ? n : 1);
			memcpy(copy, s.data, n);
			expect_rejected(copy, n, order);
			expect_rejected(copy, n, JITMAP_ORDER_AUTO);
			free(copy);
		}
		jitmap_stackmap_free(parse_bytes_ok(&s, order, JITMAP_ARCH_UNKNOWN));
		sm_bytes_free(&s);
	}
}

/* Two blobs with 16 bytes of zeros between: the prefixes that end after the first blob and
 * inside the padding are valid one-blob sections; every other prefix is rejected. */
static void test_truncations_of_two_blobs(void **state)
{
	(void)state;
	sm_builder b;
	sample_hostile(&b, JITMAP_ORDER_LITTLE);
	sm_bytes s = smb_emit(&b);
	sm_bytes all = sm_bytes_copy(&s);
	sm_bytes_cat(&all, &s, 16);
	const size_t end1 = s.len, start2 = s.len + 16;
	for (size_t n = 0; n < all.len; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		memcpy(copy, all.data, n);
		if (n >= end1 && n <= start2) {
			jitmap_stackmap *sm = parse_ok(copy, n, JITMAP_ORDER_LITTLE,
						       JITMAP_ARCH_UNKNOWN);
			assert_int_equal(jitmap_stackmap_num_blobs(sm), 1);
			assert_int_equal(jitmap_stackmap_num_records(sm), 3);
			jitmap_stackmap_free(sm);
		} else {
			expect_rejected(copy, n, JITMAP_ORDER_LITTLE);
		}
		free(copy);
	}
	jitmap_stackmap *sm = parse_bytes_ok(&all, JITMAP_ORDER_LITTLE, JITMAP_ARCH_UNKNOWN);
	assert_int_equal(jitmap_stackmap_num_blobs(sm), 2);
	jitmap_stackmap_free(sm);
	sm_bytes_free(&all);
	sm_bytes_free(&s);
}

/* -- The hostile table -- */

/* Fields of the hostile sample, found through the builder's layout. */
enum field {
	AT,          /* absolute offset `i` */
	HDR,         /* header byte `i` */
	FN_COUNT,    /* RecordCount of function `r` */
	REC,         /* byte `i` of record `r` */
	LOC,         /* byte `i` of location `r`.0 ... see loc() */
	LOC_PAD,     /* byte `i` of the padding after record `r`'s locations */
	LIVE_HDR,    /* byte `i` of record `r`'s live-out header (u16 pad, u16 count) */
	LIVE,        /* byte `i` of live-out 0 of record `r` */
	LIVE1,       /* byte `i` of live-out 1 of record `r` */
	END_PAD,     /* byte `i` of the padding after record `r`'s live-outs */
};

/* Location `l` of record `r` packed into one number for the table. */
#define LOCN(r, l) ((r) * 16 + (l))

static size_t field_at(const sm_builder *b, enum field f, int r, int i)
{
	switch (f) {
	case AT: return (size_t)i;
	case HDR: return (size_t)i;
	case FN_COUNT: return b->functions[r].at + 16 + (size_t)i;
	case REC: return b->records[r].at + (size_t)i;
	case LOC: return b->records[r / 16].loc_at[r % 16] + (size_t)i;
	case LOC_PAD: return b->records[r].loc_pad_at + (size_t)i;
	case LIVE_HDR: return b->records[r].live_header_at + (size_t)i;
	case LIVE: return b->records[r].live_at[0] + (size_t)i;
	case LIVE1: return b->records[r].live_at[1] + (size_t)i;
	case END_PAD: return b->records[r].end_pad_at + (size_t)i;
	}
	return 0;
}

struct hostile {
	const char *name;
	enum field f; /* the patch: `width` bytes of `value` in the section's byte order */
	int r, i;
	unsigned width;
	uint64_t value;
	enum field ef; /* where the error must point */
	int er, ei;
	const char *reason;
	bool little_only; /* the walk after the patch reads other bytes in each order */
};

#define U8(f, r, i) f, r, i, 1
#define U16_(f, r, i) f, r, i, 2
#define U32_(f, r, i) f, r, i, 4
#define U64_(f, r, i) f, r, i, 8

static const struct hostile hostile[] = {
	/* Versions */
	{"version 0", U8(HDR, 0, 0), 0, HDR, 0, 0, "unknown stackmap version 0", false},
	{"version 4", U8(HDR, 0, 0), 4, HDR, 0, 0, "unknown stackmap version 4", false},
	{"version 255", U8(HDR, 0, 0), 255, HDR, 0, 0, "unknown stackmap version 255", false},
	/* Header reserved fields */
	{"header byte 1", U8(HDR, 0, 1), 1, HDR, 0, 1, "non-zero reserved byte in the stackmap header", false},
	{"header byte 1 = 0x80", U8(HDR, 0, 1), 0x80, HDR, 0, 1, "non-zero reserved byte in the stackmap header", false},
	{"header byte 2", U8(HDR, 0, 2), 1, HDR, 0, 2, "non-zero reserved field in the stackmap header", false},
	{"header byte 3", U8(HDR, 0, 3), 1, HDR, 0, 2, "non-zero reserved field in the stackmap header", false},
	/* NumFunctions */
	{"functions huge", U32_(HDR, 0, 4), 0xffffffff, HDR, 0, 4, "function count 4294967295 overruns the section: 103079215080 bytes needed, 224 left", false},
	{"functions 10", U32_(HDR, 0, 4), 10, HDR, 0, 4, "function count 10 overruns the section: 240 bytes needed, 224 left", false},
	{"functions + 1", U32_(HDR, 0, 4), 3, AT, 0, 80, "function 2: record counts add up to more than the 3 records in the header", false},
	{"functions - 1", U32_(HDR, 0, 4), 1, HDR, 0, 12, "function record counts add up to 2, but the header says 3 records", false},
	{"functions 0", U32_(HDR, 0, 4), 0, HDR, 0, 12, "function record counts add up to 0, but the header says 3 records", false},
	/* NumConstants */
	{"constants huge", U32_(HDR, 0, 8), 0xffffffff, HDR, 0, 8, "constant count 4294967295 overruns the section: 34359738360 bytes needed, 176 left", false},
	{"constants + 1", U32_(HDR, 0, 8), 3, REC, 0, 20, "record 0: non-zero reserved field", false},
	{"constants - 1", U32_(HDR, 0, 8), 1, REC, 0, 8, "record 0: non-zero padding before the live-out count", true},
	/* NumRecords */
	{"records huge", U32_(HDR, 0, 12), 0xffffffff, HDR, 0, 12, "record count 4294967295 overruns the section: at least 103079215080 bytes needed, 160 left", false},
	{"records 7", U32_(HDR, 0, 12), 7, HDR, 0, 12, "record count 7 overruns the section: at least 168 bytes needed, 160 left", false},
	{"records + 1", U32_(HDR, 0, 12), 4, HDR, 0, 12, "function record counts add up to 3, but the header says 4 records", false},
	{"records - 1", U32_(HDR, 0, 12), 2, FN_COUNT, 1, 0, "function 1: record counts add up to more than the 2 records in the header", false},
	{"records 0", U32_(HDR, 0, 12), 0, FN_COUNT, 0, 0, "function 0: record counts add up to more than the 0 records in the header", false},
	/* RecordCount */
	{"f0 count huge", U64_(FN_COUNT, 0, 0), UINT64_MAX, FN_COUNT, 0, 0, "function 0: record counts add up to more than the 3 records", false},
	{"f0 count 2^32 + 2", U64_(FN_COUNT, 0, 0), UINT64_C(0x100000002), FN_COUNT, 0, 0, "function 0: record counts add up to more than the 3 records", false},
	{"f0 count + 1", U64_(FN_COUNT, 0, 0), 3, FN_COUNT, 1, 0, "function 1: record counts add up to more than the 3 records", false},
	{"f0 count - 1", U64_(FN_COUNT, 0, 0), 1, HDR, 0, 12, "function record counts add up to 2, but the header says 3 records", false},
	{"f1 count + 1", U64_(FN_COUNT, 1, 0), 2, FN_COUNT, 1, 0, "function 1: record counts add up to more than the 3 records", false},
	{"f1 count - 1", U64_(FN_COUNT, 1, 0), 0, HDR, 0, 12, "function record counts add up to 2, but the header says 3 records", false},
	/* Record header */
	{"r0 flags low", U8(REC, 0, 12), 1, REC, 0, 12, "record 0: non-zero reserved field", false},
	{"r0 flags high", U8(REC, 0, 13), 1, REC, 0, 12, "record 0: non-zero reserved field", false},
	{"r2 flags", U16_(REC, 2, 12), 0xffff, REC, 2, 12, "record 2: non-zero reserved field", false},
	/* NumLocations */
	{"r1 locations huge", U16_(REC, 1, 14), 0xffff, REC, 1, 14, "record 1: location count 65535 overruns the section", false},
	{"r0 locations + 1", U16_(REC, 0, 14), 4, LIVE_HDR, 0, 2, "record 0 location 3: non-zero reserved field", false},
	{"r0 locations - 1", U16_(REC, 0, 14), 2, LOC, LOCN(0, 2), 0, "record 0: non-zero padding before the live-out count", false},
	{"r1 locations + 1", U16_(REC, 1, 14), 3, LIVE, 1, 2, "record 1 location 2: non-zero reserved field", false},
	{"r1 locations - 1", U16_(REC, 1, 14), 1, LOC, LOCN(1, 1), 0, "record 1: non-zero padding after the locations", false},
	{"r2 locations + 1", U16_(REC, 2, 14), 2, LOC_PAD, 2, 0, "record 2 location 1: unknown location kind 0", false},
	{"r2 locations - 1", U16_(REC, 2, 14), 0, LOC, LOCN(2, 0), 0, "record 2: non-zero padding before the live-out count", false},
	/* Locations */
	{"kind 0", U8(LOC, LOCN(0, 0), 0), 0, LOC, LOCN(0, 0), 0, "record 0 location 0: unknown location kind 0", false},
	{"kind 6", U8(LOC, LOCN(1, 1), 0), 6, LOC, LOCN(1, 1), 0, "record 1 location 1: unknown location kind 6", false},
	{"kind 255", U8(LOC, LOCN(2, 0), 0), 255, LOC, LOCN(2, 0), 0, "record 2 location 0: unknown location kind 255", false},
	{"location reserved byte", U8(LOC, LOCN(0, 1), 1), 1, LOC, LOCN(0, 1), 1, "record 0 location 1: non-zero reserved byte", false},
	{"location reserved u16 low", U8(LOC, LOCN(1, 0), 6), 1, LOC, LOCN(1, 0), 6, "record 1 location 0: non-zero reserved field", false},
	{"location reserved u16 high", U8(LOC, LOCN(1, 0), 7), 1, LOC, LOCN(1, 0), 6, "record 1 location 0: non-zero reserved field", false},
	{"constant index -1", U32_(LOC, LOCN(0, 2), 8), 0xffffffff, LOC, LOCN(0, 2), 8, "record 0 location 2: constant index -1 out of range (2 constants)", false},
	{"constant index INT32_MIN", U32_(LOC, LOCN(0, 2), 8), 0x80000000, LOC, LOCN(0, 2), 8, "constant index -2147483648 out of range (2 constants)", false},
	{"constant index == count", U32_(LOC, LOCN(2, 0), 8), 2, LOC, LOCN(2, 0), 8, "record 2 location 0: constant index 2 out of range (2 constants)", false},
	{"constant index INT32_MAX", U32_(LOC, LOCN(2, 0), 8), 0x7fffffff, LOC, LOCN(2, 0), 8, "constant index 2147483647 out of range (2 constants)", false},
	/* Padding after the locations (odd counts): every byte */
	{"r0 location pad 0", U8(LOC_PAD, 0, 0), 1, LOC_PAD, 0, 0, "record 0: non-zero padding after the locations", false},
	{"r0 location pad 1", U8(LOC_PAD, 0, 1), 1, LOC_PAD, 0, 0, "record 0: non-zero padding after the locations", false},
	{"r0 location pad 2", U8(LOC_PAD, 0, 2), 1, LOC_PAD, 0, 0, "record 0: non-zero padding after the locations", false},
	{"r0 location pad 3", U8(LOC_PAD, 0, 3), 0x80, LOC_PAD, 0, 0, "record 0: non-zero padding after the locations", false},
	{"r2 location pad 0", U8(LOC_PAD, 2, 0), 1, LOC_PAD, 2, 0, "record 2: non-zero padding after the locations", false},
	{"r2 location pad 3", U8(LOC_PAD, 2, 3), 1, LOC_PAD, 2, 0, "record 2: non-zero padding after the locations", false},
	/* Live-out header */
	{"r0 live-out pad low", U8(LIVE_HDR, 0, 0), 1, LIVE_HDR, 0, 0, "record 0: non-zero padding before the live-out count", false},
	{"r1 live-out pad high", U8(LIVE_HDR, 1, 1), 1, LIVE_HDR, 1, 0, "record 1: non-zero padding before the live-out count", false},
	{"r2 live-out pad", U16_(LIVE_HDR, 2, 0), 0xffff, LIVE_HDR, 2, 0, "record 2: non-zero padding before the live-out count", false},
	/* NumLiveOuts */
	{"r0 live-outs huge", U16_(LIVE_HDR, 0, 2), 0xffff, LIVE_HDR, 0, 2, "record 0: live-out count 65535 overruns the section", false},
	{"r2 live-outs huge", U16_(LIVE_HDR, 2, 2), 0xffff, LIVE_HDR, 2, 2, "record 2: live-out count 65535 overruns the section", false},
	{"r2 live-outs 2", U16_(LIVE_HDR, 2, 2), 2, LIVE_HDR, 2, 2, "record 2: live-out count 2 overruns the section", false},
	{"r0 live-outs - 1", U16_(LIVE_HDR, 0, 2), 1, REC, 1, 8, "record 1: non-zero padding before the live-out count", true},
	{"r1 live-outs - 1", U16_(LIVE_HDR, 1, 2), 0, LIVE, 1, 0, "record 1: non-zero padding after the live-outs", false},
	/* Live-outs */
	{"live-out reserved byte", U8(LIVE1, 0, 2), 1, LIVE1, 0, 2, "record 0 live-out 1: non-zero reserved byte", false},
	{"live-out reserved byte 0xff", U8(LIVE, 1, 2), 0xff, LIVE, 1, 2, "record 1 live-out 0: non-zero reserved byte", false},
	/* Padding after the live-outs: every byte */
	{"r0 end pad 0", U8(END_PAD, 0, 0), 1, END_PAD, 0, 0, "record 0: non-zero padding after the live-outs", false},
	{"r0 end pad 1", U8(END_PAD, 0, 1), 1, END_PAD, 0, 0, "record 0: non-zero padding after the live-outs", false},
	{"r0 end pad 2", U8(END_PAD, 0, 2), 1, END_PAD, 0, 0, "record 0: non-zero padding after the live-outs", false},
	{"r0 end pad 3", U8(END_PAD, 0, 3), 1, END_PAD, 0, 0, "record 0: non-zero padding after the live-outs", false},
	{"r2 end pad 0", U8(END_PAD, 2, 0), 1, END_PAD, 2, 0, "record 2: non-zero padding after the live-outs", false},
	{"r2 end pad 3", U8(END_PAD, 2, 3), 0xff, END_PAD, 2, 0, "record 2: non-zero padding after the live-outs", false},
};

static void run_hostile(const struct hostile *h, jitmap_byte_order order)
{
	sm_builder b;
	sample_hostile(&b, order);
	sm_bytes s = smb_emit(&b);
	const size_t at = field_at(&b, h->f, h->r, h->i);
	assert_true(at + h->width <= s.len);
	sm_put(s.data + at, h->value, h->width, order);
	const uint64_t want = field_at(&b, h->ef, h->er, h->ei);

	uint8_t *copy = malloc(s.len); /* exactly sized, for ASan */
	memcpy(copy, s.data, s.len);
	JITMAP_OPTS(const jitmap_parse_opts, opts, .order = order);
	jitmap_error err;
	errno = 0;
	jitmap_stackmap *sm = jitmap_stackmap_parse(copy, s.len, &opts, &err);
	if (sm)
		fail_msg("%s (%s): accepted", h->name, order == JITMAP_ORDER_BIG ? "big" : "little");
	if (err.offset != want || !strstr(err.reason, h->reason))
		fail_msg("%s (%s): got offset %llu \"%s\", want offset %llu \"%s\"", h->name,
			 order == JITMAP_ORDER_BIG ? "big" : "little",
			 (unsigned long long)err.offset, err.reason, (unsigned long long)want,
			 h->reason);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(err.code, -EINVAL);
	free(copy);
	sm_bytes_free(&s);
}

static void test_hostile_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(hostile); i++) {
		run_hostile(&hostile[i], JITMAP_ORDER_LITTLE);
		if (!hostile[i].little_only)
			run_hostile(&hostile[i], JITMAP_ORDER_BIG);
	}
}

/* A live-out count one too large can make valid bytes: that is why the table has no "+1"
 * live-out rows. Pinned down here so that a change in what is accepted is noticed. Record 2
 * has 4 bytes of zero padding at the end: one more live-out of register 0, size 0. */
static void test_live_out_count_into_zero_padding_is_valid(void **state)
{
	(void)state;
	sm_builder b;
	sample_hostile(&b, JITMAP_ORDER_LITTLE);
	sm_bytes s = smb_emit(&b);
	sm_put(s.data + b.records[2].live_header_at + 2, 1, 2, JITMAP_ORDER_LITTLE);
	jitmap_stackmap *sm = parse_bytes_ok(&s, JITMAP_ORDER_LITTLE, JITMAP_ARCH_UNKNOWN);
	const jitmap_record *r = jitmap_stackmap_record(sm, 2);
	assert_int_equal(r->num_live_outs, 1);
	assert_int_equal(r->live_outs[0].dwarf_reg, 0);
	assert_int_equal(r->live_outs[0].size, 0);
	assert_int_equal(jitmap_stackmap_blob(sm, 0)->size, s.len);
	jitmap_stackmap_free(sm);
	sm_bytes_free(&s);

	/* Record 1 has no padding after its one live-out: one more swallows record 2's first
	 * four bytes, record 2 is read from four bytes later, and the blob ends 8 bytes early,
	 * its last 8 bytes (zero) taken for padding after it. Still valid bytes. */
	s = smb_emit(&b);
	sm_put(s.data + b.records[1].live_header_at + 2, 2, 2, JITMAP_ORDER_LITTLE);
	sm = parse_bytes_ok(&s, JITMAP_ORDER_LITTLE, JITMAP_ARCH_UNKNOWN);
	r = jitmap_stackmap_record(sm, 1);
	assert_int_equal(r->num_live_outs, 2);
	assert_int_equal(r->live_outs[1].dwarf_reg, 3); /* record 2's ID */
	r = jitmap_stackmap_record(sm, 2);
	assert_int_equal(r->section_offset, b.records[2].at + 8);
	assert_int_equal(r->num_locations, 0);
	assert_int_equal(jitmap_stackmap_blob(sm, 0)->size, s.len - 8);
	jitmap_stackmap_free(sm);
	sm_bytes_free(&s);
}

/* Every byte LLVM writes as zero, in every record, set to 1 in turn: rejected at the start of
 * its field. The table above names the fields; this covers each byte of each one. */
struct zero_field {
	size_t at, len;
	const char *reason;
};

static void test_every_zero_byte(void **state)
{
	(void)state;
	for (int order = JITMAP_ORDER_LITTLE; order <= JITMAP_ORDER_BIG; order++) {
		sm_builder b;
		sample_hostile(&b, order);
		sm_bytes s = smb_emit(&b);
		struct zero_field zeros[64];
		size_t n = 0;
		zeros[n++] = (struct zero_field){1, 1, "reserved byte in the stackmap header"};
		zeros[n++] = (struct zero_field){2, 2, "reserved field in the stackmap header"};
		for (unsigned r = 0; r < b.num_records; r++) {
			const struct smb_record *rec = &b.records[r];
			zeros[n++] = (struct zero_field){rec->at + 12, 2, ": non-zero reserved field"};
			for (unsigned l = 0; l < rec->num_locs; l++) {
				zeros[n++] = (struct zero_field){rec->loc_at[l] + 1, 1, "non-zero reserved byte"};
				zeros[n++] = (struct zero_field){rec->loc_at[l] + 6, 2, "non-zero reserved field"};
			}
			zeros[n++] = (struct zero_field){rec->loc_pad_at, rec->loc_pad_len,
							 "non-zero padding after the locations"};
			zeros[n++] = (struct zero_field){rec->live_header_at, 2,
							 "non-zero padding before the live-out count"};
			for (unsigned l = 0; l < rec->num_live_outs; l++)
				zeros[n++] = (struct zero_field){rec->live_at[l] + 2, 1, "non-zero reserved byte"};
			zeros[n++] = (struct zero_field){rec->end_pad_at, rec->end_pad_len,
							 "non-zero padding after the live-outs"};
		}
		assert_true(n <= ARRAY_LEN(zeros));
		size_t bytes = 0;
		for (size_t z = 0; z < n; z++) {
			for (size_t k = 0; k < zeros[z].len; k++, bytes++) {
				assert_int_equal(s.data[zeros[z].at + k], 0);
				s.data[zeros[z].at + k] = 1;
				JITMAP_OPTS(const jitmap_parse_opts, opts, .order = order);
				jitmap_error err;
				assert_null(jitmap_stackmap_parse(s.data, s.len, &opts, &err));
				if (err.offset != zeros[z].at || !strstr(err.reason, zeros[z].reason))
					fail_msg("byte %zu: got %llu \"%s\", want %zu \"%s\"",
						 zeros[z].at + k, (unsigned long long)err.offset,
						 err.reason, zeros[z].at, zeros[z].reason);
				s.data[zeros[z].at + k] = 0;
			}
		}
		/* 3 header bytes; per record 2 flag bytes, 3 per location, the padding, 2 live-out
		 * header bytes, 1 per live-out */
		assert_int_equal(bytes, 3 + (2 + 9 + 4 + 2 + 2 + 4) + (2 + 6 + 0 + 2 + 1 + 0) +
						(2 + 3 + 4 + 2 + 0 + 4));
		JITMAP_OPTS(jitmap_parse_opts, opts, .order = order);
		jitmap_stackmap_free(jitmap_stackmap_parse(s.data, s.len, &opts, NULL));
		sm_bytes_free(&s);
	}
}

/* Every count at its maximum, in every version: rejected at the count field, with nothing
 * allocated by it (a 96 GiB allocation would fail, or trip ASan's allocation-size limit). */
struct count_field {
	size_t at;
	unsigned width;
	const char *reason;
};

static void test_maximal_counts(void **state)
{
	(void)state;
	for (size_t v = 0; v < ARRAY_LEN(layouts); v++) {
		sm_builder b;
		sample_one_function(&b, layouts[v].version, layouts[v].order);
		sm_bytes s = smb_emit(&b);
		const jitmap_byte_order o = layouts[v].order;
		struct count_field counts[4 + 2 * SMB_MAX_RECORDS];
		size_t n = 0;
		counts[n++] = (struct count_field){4, 4, "function count 4294967295 overruns"};
		counts[n++] = (struct count_field){8, 4, "constant count 4294967295 overruns"};
		counts[n++] = (struct count_field){12, 4, "record count 4294967295 overruns"};
		if (b.version >= 2)
			counts[n++] = (struct count_field){b.functions[0].at + 16, 8,
							   "function 0: record counts add up to more"};
		for (unsigned r = 0; r < b.num_records; r++) {
			counts[n++] = (struct count_field){b.records[r].at + 14, 2,
							   "location count 65535 overruns"};
			counts[n++] = (struct count_field){b.records[r].live_header_at + 2, 2,
							   "live-out count 65535 overruns"};
		}
		for (size_t c = 0; c < n; c++) {
			sm_bytes bad = sm_bytes_copy(&s);
			sm_put(bad.data + counts[c].at, UINT64_MAX, counts[c].width, o);
			JITMAP_OPTS(const jitmap_parse_opts, opts, .order = o);
			jitmap_error err;
			assert_null(jitmap_stackmap_parse(bad.data, bad.len, &opts, &err));
			assert_contains(err.reason, counts[c].reason);
			assert_int_equal(err.offset, counts[c].at);
			sm_bytes_free(&bad);
		}
		sm_bytes_free(&s);
	}
}

/* Sections of 30 to 900 blobs of 32 records (4 locations and a live-out each), whose arrays
 * (one block of 0.1 to 3.4 MB) come from each of the ways large arrays are allocated: the
 * heap; a mapping in 4 KiB pages; huge pages with the rest in 4 KiB pages; huge pages, the last
 * rounded up (index.c, jitmap__big_alloc). Every record reads back, the last found by PC. */
static void test_large_sections(void **state)
{
	(void)state;
	static const size_t sizes[] = {30, 200, 600, 900};
	for (size_t k = 0; k < ARRAY_LEN(sizes); k++) {
		sm_bytes all = {0};
		for (size_t blob = 0; blob < sizes[k]; blob++) {
			sm_builder b;
			smb_init(&b, 3, JITMAP_ORDER_LITTLE);
			smb_function(&b, 0x100000 + 0x1000 * blob, 16);
			for (uint32_t r = 0; r < SMB_MAX_RECORDS; r++) {
				smb_record(&b, blob * SMB_MAX_RECORDS + r, 4 * r);
				for (uint16_t l = 0; l < 4; l++)
					smb_loc(&b, l % 2 ? DIRECT : REG, 8, (uint16_t)(r % 16),
						(int32_t)(blob + l));
				smb_live_out(&b, (uint16_t)(r % 8), 8);
			}
			sm_bytes one = smb_emit(&b);
			sm_bytes_cat(&all, &one, 0);
			sm_bytes_free(&one);
		}
		jitmap_stackmap *sm = parse_bytes_ok(&all, JITMAP_ORDER_LITTLE, JITMAP_ARCH_X86_64);
		const size_t n = sizes[k] * SMB_MAX_RECORDS;
		assert_int_equal(jitmap_stackmap_num_records(sm), n);
		assert_int_equal(jitmap_stackmap_num_functions(sm), sizes[k]);
		for (size_t i = 0; i < n; i++) {
			const jitmap_record *r = jitmap_stackmap_record(sm, i);
			const size_t blob = i / SMB_MAX_RECORDS, in = i % SMB_MAX_RECORDS;
			assert_int_equal(r->id, i);
			assert_int_equal(r->instruction_offset, 4 * in);
			assert_int_equal(r->function, blob);
			assert_int_equal(r->num_locations, 4);
			assert_int_equal(r->num_live_outs, 1);
			for (size_t l = 0; l < 4; l++) {
				assert_int_equal(r->locations[l].kind, l % 2 ? DIRECT : REG);
				assert_int_equal(r->locations[l].dwarf_reg, in % 16);
				assert_int_equal(r->locations[l].offset, blob + l);
			}
			assert_int_equal(r->live_outs[0].dwarf_reg, in % 8);
		}
		const jitmap_record *last = jitmap_stackmap_record(sm, n - 1), *out[2];
		assert_int_equal(jitmap_stackmap_lookup(sm, jitmap_record_pc(sm, last), out, 2), 1);
		assert_ptr_equal(out[0], last);
		jitmap_stackmap_free(sm);
		sm_bytes_free(&all);
	}
}

/* v1 and v2: the 8-byte location has no reserved bytes and its offset sits at +4; the
 * function entry is 16 bytes in v1. */
static void test_hostile_v1_v2(void **state)
{
	(void)state;
	for (int version = 1; version <= 2; version++) {
		sm_builder b;
		sample_one_function(&b, version, JITMAP_ORDER_LITTLE);
		sm_bytes s = smb_emit(&b);
		const struct smb_record *r0 = &b.records[0], *r2 = &b.records[2];
		struct {
			size_t at;
			unsigned width;
			uint64_t value;
			size_t want;
			const char *reason;
		} cases[] = {
			{0, 1, 0, 0, "unknown stackmap version 0"},
			{4, 4, 0xffffffff, 4, "function count 4294967295 overruns the section"},
			{r0->loc_at[0], 1, 6, r0->loc_at[0], "record 0 location 0: unknown location kind 6"},
			{r0->loc_at[4] + 4, 4, 2, r0->loc_at[4] + 4, "record 0 location 4: constant index 2 out of range (2 constants)"},
			{r0->loc_at[4] + 4, 4, 0xffffffff, r0->loc_at[4] + 4, "constant index -1 out of range"},
			{r2->live_header_at, 1, 1, r2->live_header_at, "record 2: non-zero padding before the live-out count"},
			{r2->live_at[3] + 2, 1, 1, r2->live_at[3] + 2, "record 2 live-out 3: non-zero reserved byte"},
			{b.records[1].end_pad_at, 1, 1, b.records[1].end_pad_at, "record 1: non-zero padding after the live-outs"},
		};
		for (size_t c = 0; c < ARRAY_LEN(cases); c++) {
			sm_bytes bad = sm_bytes_copy(&s);
			sm_put(bad.data + cases[c].at, cases[c].value, cases[c].width, JITMAP_ORDER_LITTLE);
			JITMAP_OPTS(const jitmap_parse_opts, opts, .order = JITMAP_ORDER_LITTLE);
			jitmap_error err;
			assert_null(jitmap_stackmap_parse(bad.data, bad.len, &opts, &err));
			if (err.offset != cases[c].want || !strstr(err.reason, cases[c].reason))
				fail_msg("v%d case %zu: got %llu \"%s\", want %zu \"%s\"", version, c,
					 (unsigned long long)err.offset, err.reason, cases[c].want,
					 cases[c].reason);
			sm_bytes_free(&bad);
		}
		/* In v1/v2 the size byte is byte 1: any value is a size, not a reserved byte. */
		sm_bytes big = sm_bytes_copy(&s);
		big.data[r0->loc_at[0] + 1] = 255;
		jitmap_stackmap *sm = parse_bytes_ok(&big, JITMAP_ORDER_LITTLE, JITMAP_ARCH_UNKNOWN);
		assert_int_equal(jitmap_stackmap_record(sm, 0)->locations[0].size, 255);
		jitmap_stackmap_free(sm);
		sm_bytes_free(&big);
		sm_bytes_free(&s);
	}
}

/* Two faults in one section: the error names the first in the bytes. The first walk does not
 * read the contents of version 3 locations (parse.c), so a fault in a location before a fault
 * in the section's structure is found only by the walk that checks everything. */
static void test_first_of_two_faults(void **state)
{
	(void)state;
	const struct {
		struct hostile a, b; /* b's where and reason are the ones wanted */
	} pairs[] = {
		{{"kind 6", U8(LOC, LOCN(0, 0), 0), 6, 0, 0, 0, NULL, false},
		 {"then r2 flags", U16_(REC, 2, 12), 0xffff, LOC, LOCN(0, 0), 0,
		  "record 0 location 0: unknown location kind 6", false}},
		{{"constant index 2", U32_(LOC, LOCN(2, 0), 8), 2, 0, 0, 0, NULL, false},
		 {"then r2 live-outs huge", U16_(LIVE_HDR, 2, 2), 0xffff, LOC, LOCN(2, 0), 8,
		  "record 2 location 0: constant index 2 out of range", false}},
		{{"reserved byte", U8(LOC, LOCN(0, 1), 1), 1, 0, 0, 0, NULL, false},
		 {"then r1 end pad", U8(END_PAD, 1, 0), 1, LOC, LOCN(0, 1), 1,
		  "record 0 location 1: non-zero reserved byte", false}},
		{{"r0 flags", U8(REC, 0, 12), 1, 0, 0, 0, NULL, false},
		 {"then kind 0 in record 2", U8(LOC, LOCN(2, 0), 0), 0, REC, 0, 12,
		  "record 0: non-zero reserved field", false}},
	};
	for (int o = 0; o < 2; o++) {
		const jitmap_byte_order order = o ? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE;
		for (size_t i = 0; i < ARRAY_LEN(pairs); i++) {
			sm_builder b;
			sample_hostile(&b, order);
			sm_bytes s = smb_emit(&b);
			const struct hostile *a = &pairs[i].a, *h = &pairs[i].b;
			sm_put(s.data + field_at(&b, a->f, a->r, a->i), a->value, a->width, order);
			sm_put(s.data + field_at(&b, h->f, h->r, h->i), h->value, h->width, order);
			const uint64_t want = field_at(&b, h->ef, h->er, h->ei);
			JITMAP_OPTS(const jitmap_parse_opts, opts, .order = order);
			jitmap_error err;
			errno = 0;
			assert_null(jitmap_stackmap_parse(s.data, s.len, &opts, &err));
			if (err.offset != want || !strstr(err.reason, h->reason))
				fail_msg("%s %s (%s): got offset %llu \"%s\", want offset %llu \"%s\"",
					 a->name, h->name, o ? "big" : "little",
					 (unsigned long long)err.offset, err.reason,
					 (unsigned long long)want, h->reason);
			assert_int_equal(errno, EINVAL);
			sm_bytes_free(&s);
		}
	}
}

/* Options carry their size: too small, or a newer caller's unknown fields set, is -EINVAL;
 * NULL and a full struct parse. */
static void test_sized_opts(void **state)
{
	(void)state;
	sm_builder b;
	smb_init(&b, 3, JITMAP_ORDER_BIG);
	smb_function(&b, 0x1000, 16);
	smb_record(&b, 1, 4);
	sm_bytes s = smb_emit(&b);
	jitmap_error err;
	JITMAP_OPTS(jitmap_parse_opts, ok, .order = JITMAP_ORDER_BIG, .arch = JITMAP_ARCH_S390X);
	jitmap_stackmap *sm = jitmap_stackmap_parse(s.data, s.len, &ok, &err);
	assert_non_null(sm);
	assert_int_equal(jitmap_stackmap_arch(sm), JITMAP_ARCH_S390X);
	jitmap_stackmap_free(sm);
	assert_non_null(sm = jitmap_stackmap_parse(s.data, s.len, NULL, &err));
	jitmap_stackmap_free(sm);
	jitmap_parse_opts zero = {.order = JITMAP_ORDER_BIG};
	errno = 0;
	assert_null(jitmap_stackmap_parse(s.data, s.len, &zero, &err));
	assert_int_equal(errno, EINVAL);
	assert_contains(err.reason, "jitmap_parse_opts.sz is 0");
	struct {
		jitmap_parse_opts o;
		uint64_t future;
	} newer;
	memset(&newer, 0, sizeof(newer));
	newer.o.sz = sizeof(newer);
	newer.o.order = JITMAP_ORDER_BIG;
	newer.future = 1;
	assert_null(jitmap_stackmap_parse(s.data, s.len, &newer.o, &err));
	newer.future = 0;
	assert_non_null(sm = jitmap_stackmap_parse(s.data, s.len, &newer.o, &err));
	jitmap_stackmap_free(sm);
	sm_bytes_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_versions_and_orders_decode_alike),
		cmocka_unit_test(test_record_counts_assign_records),
		cmocka_unit_test(test_v1_several_functions_leaves_records_unowned),
		cmocka_unit_test(test_concatenated_blobs),
		cmocka_unit_test(test_bad_padding_between_blobs),
		cmocka_unit_test(test_auto_byte_order),
		cmocka_unit_test(test_accessors),
		cmocka_unit_test(test_empty_and_missing_input),
		cmocka_unit_test(test_every_truncation_of_one_blob_is_rejected),
		cmocka_unit_test(test_truncations_of_two_blobs),
		cmocka_unit_test(test_hostile_table),
		cmocka_unit_test(test_live_out_count_into_zero_padding_is_valid),
		cmocka_unit_test(test_every_zero_byte),
		cmocka_unit_test(test_maximal_counts),
		cmocka_unit_test(test_hostile_v1_v2),
		cmocka_unit_test(test_first_of_two_faults),
		cmocka_unit_test(test_sized_opts),
		cmocka_unit_test(test_large_sections),
	};
	return cmocka_run_group_tests_name("parse", tests, NULL, NULL);
}
