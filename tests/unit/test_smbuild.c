/* test_smbuild.c: the stackmap builder of the producer API (producer/smbuild.c).
 *
 * What is built must parse back field for field, be byte-identical to the independent test
 * writer (sm_builder.c) and to the bytes llc-14 wrote in stackmap-format.md §1, choose Constant
 * or ConstantIndex as LLVM does, and refuse every malformed argument without changing state.
 */
#include "unit.h"

#include "jitmap/producer.h"

static const jitmap_byte_order orders[] = {JITMAP_ORDER_LITTLE, JITMAP_ORDER_BIG};

struct built {
	uint8_t *data;
	size_t len;
};

static struct built finish_ok(const jitmap_smbuilder *b)
{
	void *p = NULL;
	size_t n = 0;
	assert_int_equal(jitmap_smbuilder_finish(b, &p, &n), 0);
	assert_non_null(p);
	assert_int_equal(n % 8, 0);
	return (struct built){p, n};
}

static jitmap_smbuilder *new_ok(jitmap_byte_order order)
{
	jitmap_smbuilder *b = jitmap_smbuilder_new(order);
	assert_non_null(b);
	return b;
}

/* -- Round trips -- */

/* Three functions (one without records), odd and even location counts, live-outs, every
 * kind, pooled constants; parsed back in both byte orders. */
static void test_round_trip(void **state)
{
	(void)state;
	for (size_t o = 0; o < ARRAY_LEN(orders); o++) {
		jitmap_smbuilder *b = new_ok(orders[o]);
		jitmap_error err;
		jitmap_location big, small, neg, big2, big_again;
		assert_int_equal(jitmap_smbuilder_constant(b, 9000000000ULL, &big), 0);
		assert_int_equal(jitmap_smbuilder_constant(b, 42, &small), 0);
		assert_int_equal(jitmap_smbuilder_constant(b, (uint64_t)-1, &neg), 0);
		assert_int_equal(jitmap_smbuilder_constant(b, 4294967296ULL, &big2), 0);
		assert_int_equal(jitmap_smbuilder_constant(b, 9000000000ULL, &big_again), 0);

		assert_int_equal(jitmap_smbuilder_add_function(b, 0x401000, 40, &err), 0);
		const jitmap_location l1[] = {
			{REG, 8, 3, 0}, {REG, 4, 12, 0}, {INDIRECT, 8, 6, -24},
			{DIRECT, 8, 7, 16}, small, neg, big, big2, big_again,
		};
		const jitmap_live_out lo1[] = {{0, 8}, {7, 8}, {17, 16}};
		assert_int_equal(jitmap_smbuilder_add_record(b, 1, 12, l1, ARRAY_LEN(l1), lo1,
							     ARRAY_LEN(lo1), &err), 0);
		assert_int_equal(jitmap_smbuilder_add_record(b, 2, 30, l1, 2, NULL, 0, &err), 0);
		assert_int_equal(jitmap_smbuilder_add_function(b, 0x402000, 8, &err), 0);
		assert_int_equal(jitmap_smbuilder_add_function(b, 0x403000, UINT64_MAX, &err), 0);
		assert_int_equal(jitmap_smbuilder_add_record(b, UINT64_MAX, 0, NULL, 0, lo1, 1, &err),
				 0);
		struct built out = finish_ok(b);

		jitmap_stackmap *sm = parse_ok(out.data, out.len, orders[o], JITMAP_ARCH_X86_64);
		assert_int_equal(jitmap_stackmap_num_blobs(sm), 1);
		assert_int_equal(jitmap_stackmap_blob(sm, 0)->version, 3);
		assert_int_equal(jitmap_stackmap_blob(sm, 0)->size, out.len);
		assert_int_equal(jitmap_stackmap_num_functions(sm), 3);
		assert_int_equal(jitmap_stackmap_num_records(sm), 3);
		assert_int_equal(jitmap_stackmap_num_constants(sm), 2); /* deduplicated */
		uint64_t c;
		assert_int_equal(jitmap_stackmap_constant(sm, 0, &c), 0);
		assert_int_equal(c, 9000000000ULL);
		assert_int_equal(jitmap_stackmap_constant(sm, 1, &c), 0);
		assert_int_equal(c, 4294967296ULL);

		const jitmap_function *f = jitmap_stackmap_function(sm, 0);
		assert_int_equal(f->address, 0x401000);
		assert_int_equal(f->stack_size, 40);
		assert_int_equal(f->record_count, 2);
		assert_int_equal(jitmap_stackmap_function(sm, 1)->record_count, 0);
		assert_int_equal(jitmap_stackmap_function(sm, 2)->stack_size, UINT64_MAX);
		assert_int_equal(jitmap_stackmap_function(sm, 2)->record_count, 1);

		const jitmap_record *r = jitmap_stackmap_record(sm, 0);
		assert_int_equal(r->id, 1);
		assert_int_equal(r->instruction_offset, 12);
		assert_int_equal(r->num_locations, ARRAY_LEN(l1));
		for (size_t i = 0; i < ARRAY_LEN(l1); i++) {
			assert_int_equal(r->locations[i].kind, l1[i].kind);
			assert_int_equal(r->locations[i].size, l1[i].size);
			assert_int_equal(r->locations[i].dwarf_reg, l1[i].dwarf_reg);
			assert_int_equal(r->locations[i].offset, l1[i].offset);
		}
		const uint64_t want[] = {42, UINT64_MAX, 9000000000ULL, 4294967296ULL,
					 9000000000ULL};
		for (size_t i = 4; i < ARRAY_LEN(l1); i++) {
			assert_int_equal(jitmap_location_constant(sm, r, &r->locations[i], &c), 0);
			assert_int_equal(c, want[i - 4]);
		}
		assert_int_equal(r->num_live_outs, 3);
		assert_int_equal(r->live_outs[2].dwarf_reg, 17);
		assert_int_equal(r->live_outs[2].size, 16);
		assert_int_equal(jitmap_record_pc(sm, r), 0x401000 + 12);
		assert_int_equal(jitmap_record_pc(sm, jitmap_stackmap_record(sm, 1)), 0x401000 + 30);
		r = jitmap_stackmap_record(sm, 2);
		assert_int_equal(r->id, UINT64_MAX);
		assert_int_equal(r->num_locations, 0);
		assert_int_equal(r->num_live_outs, 1);
		assert_int_equal(jitmap_record_pc(sm, r), 0x403000);

		jitmap_stackmap_free(sm);
		free(out.data);
		jitmap_smbuilder_free(b);
	}
}

/* The largest record the format allows: 65535 locations and 65535 live-outs. */
static void test_round_trip_limits(void **state)
{
	(void)state;
	jitmap_smbuilder *b = new_ok(JITMAP_ORDER_AUTO);
	jitmap_location *locs = calloc(65535, sizeof(*locs));
	jitmap_live_out *lives = calloc(65535, sizeof(*lives));
	assert_non_null(locs);
	assert_non_null(lives);
	for (size_t i = 0; i < 65535; i++) {
		locs[i] = (jitmap_location){INDIRECT, 8, 7, (int32_t)(8 * i)};
		lives[i] = (jitmap_live_out){(uint16_t)i, 8};
	}
	assert_int_equal(jitmap_smbuilder_add_function(b, 0x1000, 16, NULL), 0);
	assert_int_equal(jitmap_smbuilder_add_record(b, 7, 5, locs, 65535, lives, 65535, NULL), 0);
	struct built out = finish_ok(b);
	/* 16 + 24 + align8(align8(16 + 12 * 65535) + 4 + 4 * 65535) */
	assert_int_equal(out.len, 40 + ((((16 + 12 * 65535 + 7) & ~7) + 4 + 4 * 65535 + 7) & ~7));
	jitmap_stackmap *sm = parse_ok(out.data, out.len, JITMAP_ORDER_AUTO, JITMAP_ARCH_UNKNOWN);
	const jitmap_record *r = jitmap_stackmap_record(sm, 0);
	assert_int_equal(r->num_locations, 65535);
	assert_int_equal(r->num_live_outs, 65535);
	assert_int_equal(r->locations[65534].offset, 8 * 65534);
	assert_int_equal(r->live_outs[65534].dwarf_reg, 65534);
	jitmap_stackmap_free(sm);
	free(out.data);
	free(locs);
	free(lives);
	jitmap_smbuilder_free(b);
}

/* A builder without functions writes the bare header, which parses as an empty blob. */
static void test_empty(void **state)
{
	(void)state;
	jitmap_smbuilder *b = new_ok(JITMAP_ORDER_LITTLE);
	struct built out = finish_ok(b);
	static const uint8_t header[16] = {3};
	assert_int_equal(out.len, 16);
	assert_memory_equal(out.data, header, 16);
	jitmap_stackmap *sm = parse_ok(out.data, out.len, JITMAP_ORDER_LITTLE, JITMAP_ARCH_UNKNOWN);
	assert_int_equal(jitmap_stackmap_num_functions(sm), 0);
	jitmap_stackmap_free(sm);
	free(out.data);
	jitmap_smbuilder_free(b);
}

/* finish leaves the builder as it was: it can grow and be finished again. */
static void test_finish_twice(void **state)
{
	(void)state;
	jitmap_smbuilder *b = new_ok(JITMAP_ORDER_BIG);
	assert_int_equal(jitmap_smbuilder_add_function(b, 0x10, 8, NULL), 0);
	assert_int_equal(jitmap_smbuilder_add_record(b, 1, 4, NULL, 0, NULL, 0, NULL), 0);
	struct built a = finish_ok(b), a2 = finish_ok(b);
	assert_int_equal(a.len, a2.len);
	assert_memory_equal(a.data, a2.data, a.len);
	assert_int_equal(jitmap_smbuilder_add_record(b, 2, 8, NULL, 0, NULL, 0, NULL), 0);
	struct built c = finish_ok(b);
	assert_int_equal(c.len, a.len + 24);
	jitmap_stackmap *sm = parse_ok(c.data, c.len, JITMAP_ORDER_BIG, JITMAP_ARCH_UNKNOWN);
	assert_int_equal(jitmap_stackmap_function(sm, 0)->record_count, 2);
	jitmap_stackmap_free(sm);
	free(a.data);
	free(a2.data);
	free(c.data);
	jitmap_smbuilder_free(b);
}

/* -- Byte-exact layout -- */

/* Record ID 3 of llc-14's sm_x86_llc14.o, as stackmap-format.md §1 dumps it: three Register
 * locations (odd: 4 bytes of padding) and four live-outs (then 4 bytes of padding). */
static void test_llc14_record_bytes(void **state)
{
	(void)state;
	static const uint8_t record[] = {
		0x03, 0, 0, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0, 0, 0x03, 0,
		0x01, 0, 0x08, 0, 0x00, 0, 0, 0, 0, 0, 0, 0,
		0x01, 0, 0x08, 0, 0x05, 0, 0, 0, 0, 0, 0, 0,
		0x01, 0, 0x08, 0, 0x04, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0,
		0, 0, 0x04, 0, 0x00, 0, 0, 0x08, 0x04, 0, 0, 0x08, 0x05, 0, 0, 0x08,
		0x07, 0, 0, 0x08,
		0, 0, 0, 0,
	};
	jitmap_smbuilder *b = new_ok(JITMAP_ORDER_LITTLE);
	assert_int_equal(jitmap_smbuilder_add_function(b, 0, 8, NULL), 0);
	const jitmap_location l[] = {{REG, 8, 0, 0}, {REG, 8, 5, 0}, {REG, 8, 4, 0}};
	const jitmap_live_out lo[] = {{0, 8}, {4, 8}, {5, 8}, {7, 8}};
	assert_int_equal(jitmap_smbuilder_add_record(b, 3, 4, l, 3, lo, 4, NULL), 0);
	struct built out = finish_ok(b);
	static const uint8_t head[] = {3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
				       0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0,
				       1, 0, 0, 0, 0, 0, 0, 0};
	assert_int_equal(out.len, sizeof(head) + sizeof(record));
	assert_memory_equal(out.data, head, sizeof(head));
	assert_memory_equal(out.data + sizeof(head), record, sizeof(record));
	free(out.data);
	jitmap_smbuilder_free(b);
}

/* The same content through the independent test writer gives the same bytes, for every
 * location count parity and live-out count parity, in both byte orders. */
static void test_same_as_sm_builder(void **state)
{
	(void)state;
	for (size_t o = 0; o < ARRAY_LEN(orders); o++) {
		jitmap_smbuilder *b = new_ok(orders[o]);
		sm_builder ref;
		smb_init(&ref, 3, orders[o]);
		jitmap_location pooled;
		assert_int_equal(jitmap_smbuilder_constant(b, 0x123456789ULL, &pooled), 0);
		smb_constant(&ref, 0x123456789ULL);
		for (unsigned f = 0; f < 3; f++) {
			const uint64_t addr = 0x7f0000001000ULL + 0x100 * f;
			assert_int_equal(jitmap_smbuilder_add_function(b, addr, 16 + 8 * f, NULL), 0);
			smb_function(&ref, addr, 16 + 8 * f);
			for (unsigned nloc = 0; nloc < 4; nloc++) {
				for (unsigned nlive = 0; nlive < 3; nlive++) {
					jitmap_location l[4];
					jitmap_live_out lo[3];
					const uint64_t id = 100 * f + 10 * nloc + nlive;
					smb_record(&ref, id, nloc * 4 + nlive);
					for (unsigned i = 0; i < nloc; i++) {
						l[i] = i == 3 ? pooled
							      : (jitmap_location){
									(jitmap_loc_kind)(1 + i), 8,
									(uint16_t)(i == 0 ? 3 : 6),
									-8 * (int32_t)i};
						smb_loc(&ref, (uint8_t)l[i].kind, l[i].size,
							l[i].dwarf_reg, l[i].offset);
					}
					for (unsigned i = 0; i < nlive; i++) {
						lo[i] = (jitmap_live_out){(uint16_t)(12 + i), 8};
						smb_live_out(&ref, lo[i].dwarf_reg, lo[i].size);
					}
					assert_int_equal(jitmap_smbuilder_add_record(
								 b, id, nloc * 4 + nlive, l, nloc,
								 lo, nlive, NULL),
							 0);
					if (ref.num_records == SMB_MAX_RECORDS) {
						/* compare in chunks the test writer can hold */
						sm_bytes want = smb_emit(&ref);
						struct built got = finish_ok(b);
						assert_int_equal(got.len, want.len);
						assert_memory_equal(got.data, want.data, want.len);
						free(got.data);
						sm_bytes_free(&want);
						jitmap_smbuilder_free(b);
						b = new_ok(orders[o]);
						smb_init(&ref, 3, orders[o]);
						assert_int_equal(jitmap_smbuilder_constant(b, 0x123456789ULL,
											   &pooled), 0);
						smb_constant(&ref, 0x123456789ULL);
						assert_int_equal(jitmap_smbuilder_add_function(
									 b, addr, 16 + 8 * f, NULL), 0);
						smb_function(&ref, addr, 16 + 8 * f);
					}
				}
			}
		}
		sm_bytes want = smb_emit(&ref);
		struct built got = finish_ok(b);
		assert_int_equal(got.len, want.len);
		assert_memory_equal(got.data, want.data, want.len);
		free(got.data);
		sm_bytes_free(&want);
		jitmap_smbuilder_free(b);
	}
}

/* -- The constant helper -- */

static void test_constant_rule(void **state)
{
	(void)state;
	static const struct {
		uint64_t value;
		int pooled;
		int32_t offset; /* the small constant, or the pool index */
	} cases[] = {
		{0, 0, 0},
		{42, 0, 42},
		{INT32_MAX, 0, INT32_MAX},
		{(uint64_t)INT32_MAX + 1, 1, 0},
		{UINT64_MAX, 0, -1},                         /* -1: sign-extends */
		{(uint64_t)(int64_t)INT32_MIN, 0, INT32_MIN},
		{(uint64_t)((int64_t)INT32_MIN - 1), 1, 1},
		{0xffffffffULL, 1, 2},                       /* as u64 it does not fit i32 */
		{(uint64_t)INT32_MAX + 1, 1, 0},             /* first use keeps its index */
		{0x8000000000000000ULL, 1, 3},
		{0xffffffffULL, 1, 2},
	};
	jitmap_smbuilder *b = new_ok(JITMAP_ORDER_AUTO);
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		jitmap_location l;
		memset(&l, 0xa5, sizeof(l));
		assert_int_equal(jitmap_smbuilder_constant(b, cases[i].value, &l), 0);
		assert_int_equal(l.kind, cases[i].pooled ? CIDX : CONST);
		assert_int_equal(l.size, 8);
		assert_int_equal(l.dwarf_reg, 0);
		assert_int_equal(l.offset, cases[i].offset);
	}
	/* Every pooled value resolves to itself through the parser. */
	jitmap_location l[ARRAY_LEN(cases)];
	for (size_t i = 0; i < ARRAY_LEN(cases); i++)
		assert_int_equal(jitmap_smbuilder_constant(b, cases[i].value, &l[i]), 0);
	assert_int_equal(jitmap_smbuilder_add_function(b, 0x1000, 0, NULL), 0);
	assert_int_equal(jitmap_smbuilder_add_record(b, 1, 0, l, ARRAY_LEN(l), NULL, 0, NULL), 0);
	struct built out = finish_ok(b);
	jitmap_stackmap *sm = parse_ok(out.data, out.len, JITMAP_ORDER_AUTO, JITMAP_ARCH_UNKNOWN);
	assert_int_equal(jitmap_stackmap_num_constants(sm), 4);
	const jitmap_record *r = jitmap_stackmap_record(sm, 0);
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		uint64_t v;
		assert_int_equal(jitmap_location_constant(sm, r, &r->locations[i], &v), 0);
		assert_int_equal(v, cases[i].value);
	}
	jitmap_stackmap_free(sm);
	free(out.data);
	jitmap_smbuilder_free(b);
}

/* -- Errors -- */

static void test_new_bad_order(void **state)
{
	(void)state;
	errno = 0;
	assert_null(jitmap_smbuilder_new((jitmap_byte_order)7));
	assert_int_equal(errno, EINVAL);
	jitmap_smbuilder_free(NULL);
}

static void test_record_without_function(void **state)
{
	(void)state;
	jitmap_smbuilder *b = new_ok(JITMAP_ORDER_AUTO);
	jitmap_error err;
	assert_int_equal(jitmap_smbuilder_add_record(b, 5, 0, NULL, 0, NULL, 0, &err), -EINVAL);
	assert_int_equal(err.code, -EINVAL);
	assert_contains(err.reason, "no function");
	assert_int_equal(jitmap_smbuilder_add_record(b, 5, 0, NULL, 0, NULL, 0, NULL), -EINVAL);
	struct built out = finish_ok(b);
	assert_int_equal(out.len, 16); /* nothing was added */
	free(out.data);
	jitmap_smbuilder_free(b);
}

/* Each malformed record is refused with its reason and the index of the culprit, and leaves
 * the builder as it was. */
static void test_bad_records(void **state)
{
	(void)state;
	static const struct {
		jitmap_location loc;
		uint64_t at;
		const char *reason;
	} bad_locs[] = {
		{{(jitmap_loc_kind)0, 8, 0, 0}, 1, "unknown location kind 0"},
		{{(jitmap_loc_kind)6, 8, 0, 0}, 1, "unknown location kind 6"},
		{{(jitmap_loc_kind)255, 8, 0, 0}, 1, "unknown location kind 255"},
		{{(jitmap_loc_kind)-1, 8, 0, 0}, 1, "unknown location kind -1"},
		{{REG, 0, 3, 0}, 1, "size 0"},
		{{CONST, 8, 3, 1}, 1, "a constant has no register"},
		{{CIDX, 8, 1, 0}, 1, "a constant has no register"},
		{{CIDX, 8, 0, 1}, 1, "constant index 1 names no constant (1 in the pool)"},
		{{CIDX, 8, 0, -1}, 1, "constant index -1 names no constant"},
	};
	jitmap_smbuilder *b = new_ok(JITMAP_ORDER_AUTO);
	jitmap_location pooled;
	assert_int_equal(jitmap_smbuilder_constant(b, 1ULL << 40, &pooled), 0);
	assert_int_equal(jitmap_smbuilder_add_function(b, 0x1000, 8, NULL), 0);
	const jitmap_location good = {REG, 8, 3, 0};
	assert_int_equal(jitmap_smbuilder_add_record(b, 1, 0, &good, 1, NULL, 0, NULL), 0);
	struct built before = finish_ok(b);

	for (size_t i = 0; i < ARRAY_LEN(bad_locs); i++) {
		const jitmap_location l[] = {pooled, bad_locs[i].loc, good};
		jitmap_error err;
		assert_int_equal(jitmap_smbuilder_add_record(b, 9, 0, l, 3, NULL, 0, &err), -EINVAL);
		assert_int_equal(err.code, -EINVAL);
		assert_int_equal(err.offset, bad_locs[i].at);
		assert_contains(err.reason, bad_locs[i].reason);
	}
	jitmap_error err;
	const jitmap_live_out lo[] = {{3, 8}, {4, 8}, {5, 0}};
	assert_int_equal(jitmap_smbuilder_add_record(b, 9, 0, &good, 1, lo, 3, &err), -EINVAL);
	assert_int_equal(err.offset, 2);
	assert_contains(err.reason, "live-out 2: size 0");
	assert_int_equal(jitmap_smbuilder_add_record(b, 9, 0, NULL, 1, NULL, 0, &err), -EINVAL);
	assert_contains(err.reason, "NULL");
	assert_int_equal(jitmap_smbuilder_add_record(b, 9, 0, NULL, 0, NULL, 2, &err), -EINVAL);
	assert_contains(err.reason, "NULL");

	/* Counts beyond the u16 fields; the arrays are never read. */
	jitmap_location *many = calloc(65536, sizeof(*many));
	jitmap_live_out *many_lo = calloc(65536, sizeof(*many_lo));
	assert_non_null(many);
	assert_non_null(many_lo);
	assert_int_equal(jitmap_smbuilder_add_record(b, 9, 0, many, 65536, NULL, 0, &err), -EINVAL);
	assert_contains(err.reason, "65536 locations: a record holds at most 65535");
	assert_int_equal(jitmap_smbuilder_add_record(b, 9, 0, NULL, 0, many_lo, 65536, &err),
			 -EINVAL);
	assert_contains(err.reason, "65536 live-outs");
	assert_int_equal(jitmap_smbuilder_add_record(b, 9, 0, many, (size_t)1 << 40, NULL, 0, &err),
			 -EINVAL);
	free(many);
	free(many_lo);

	struct built after = finish_ok(b);
	assert_int_equal(after.len, before.len);
	assert_memory_equal(after.data, before.data, before.len);
	free(before.data);
	free(after.data);
	jitmap_smbuilder_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_round_trip_limits),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_finish_twice),
		cmocka_unit_test(test_llc14_record_bytes),
		cmocka_unit_test(test_same_as_sm_builder),
		cmocka_unit_test(test_constant_rule),
		cmocka_unit_test(test_new_bad_order),
		cmocka_unit_test(test_record_without_function),
		cmocka_unit_test(test_bad_records),
	};
	return cmocka_run_group_tests_name("smbuild", tests, NULL, NULL);
}
