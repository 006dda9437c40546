/* test_statepoint.c: the statepoint shape rule of jitmap.h, each way a record can fail it, and
 * jitmap_statepoint_wanted under AUTO, ALL and NONE with ID lists. */
#include "unit.h"

/* One record per row: its locations, then the decode result. */
struct shape {
	const char *name;
	unsigned n;
	struct smb_loc locs[14];
	int rc;
	const char *why;      /* a substring of the reason, when rc != 0 */
	uint64_t cc, flags;   /* when rc == 0 */
	size_t deopt, pairs, allocas;
};

#define C(v) {CONST, 8, 0, (v)}
#define IDX(i) {CIDX, 8, 0, (i)}
#define R(reg) {REG, 8, (reg), 0}
#define SLOT(off) {INDIRECT, 8, 7, (off)}
#define VSLOT(off) {INDIRECT, 16, 7, (off)}
#define ALLOCA(off) {DIRECT, 8, 7, (off)}

#define FITS(name_, cc_, flags_, deopt_, pairs_, allocas_, n_, ...)                           \
	{.name = (name_), .n = (n_), .locs = {__VA_ARGS__}, .cc = (cc_), .flags = (flags_),   \
	 .deopt = (deopt_), .pairs = (pairs_), .allocas = (allocas_)}
#define FAILS(name_, why_, n_, ...)                                                          \
	{.name = (name_), .n = (n_), .locs = {__VA_ARGS__}, .rc = -EINVAL, .why = (why_)}

static const struct shape shapes[] = {
	/* What LLVM 14 writes for the reference's sp_func (§5): deopt i64 %d, i32 7, i64
	 * 9000000000; a vector pair first (size 16), then two scalar pairs. */
	FITS("llvm-14 sp_func", 0, 0, 3, 3, 0, 12, C(0), C(0), C(3), SLOT(24), C(7), IDX(0),
	     VSLOT(32), VSLOT(32), SLOT(8), SLOT(16), SLOT(8), SLOT(8)),
	FITS("no deopt, no gc values", 0, 0, 0, 0, 0, 3, C(0), C(0), C(0)),
	/* coldcc, GCTransition|DeoptLiveIn, a deopt value in a caller-saved register and an
	 * undef one (LLVM writes 0xFEFEFEFE) */
	FITS("coldcc, flags 3, register deopt", 9, 3, 2, 0, 0, 5, C(9), C(3), C(2), R(1),
	     C(-16843010)),
	FITS("null root pair", 0, 1, 0, 1, 0, 5, C(0), C(1), C(0), C(0), C(0)),
	FITS("pairs then allocas", 0, 2, 0, 1, 2, 7, C(0), C(2), C(0), SLOT(8), SLOT(16),
	     ALLOCA(24), ALLOCA(32)),
	FITS("only allocas", 0, 0, 0, 0, 2, 5, C(0), C(0), C(0), ALLOCA(8), ALLOCA(16)),
	FITS("a Direct deopt value is not an alloca", 0, 0, 1, 0, 0, 4, C(0), C(0), C(1),
	     ALLOCA(8)),
	FITS("registers as gc values (VReg lowering)", 0, 0, 0, 2, 0, 7, C(0), C(0), C(0),
	     R(14), R(14), R(3), R(3)),
	FITS("deopt count = all that follow", 0, 0, 2, 0, 0, 5, C(0), C(0), C(2), SLOT(8),
	     SLOT(8)),

	FAILS("no locations", "0 locations; a statepoint has at least 3", 0),
	FAILS("one location", "1 locations; a statepoint has at least 3", 1, C(0)),
	FAILS("two locations", "2 locations; a statepoint has at least 3", 2, C(0), C(0)),
	FAILS("cc not a small constant", "location 0 is not a small constant", 3, IDX(0), C(0),
	      C(0)),
	FAILS("flags in a register", "location 1 is not a small constant", 3, C(0), R(3), C(0)),
	FAILS("deopt count in a slot", "location 2 is not a small constant", 4, C(0), C(0),
	      SLOT(8), C(0)),
	FAILS("flags 4", "flags 4 has bits beyond GCTransition|DeoptLiveIn", 3, C(0), C(4),
	      C(0)),
	FAILS("flags -1", "flags -1 has bits beyond GCTransition|DeoptLiveIn", 3, C(0), C(-1),
	      C(0)),
	FAILS("deopt count too large", "deopt count 3 exceeds the 2 locations that follow", 5,
	      C(0), C(0), C(3), SLOT(8), SLOT(8)),
	FAILS("deopt count negative", "deopt count -1 exceeds the 0 locations that follow", 3,
	      C(0), C(0), C(-1)),
	FAILS("odd gc values",
	      "3 gc locations after the deopt values do not form (base, derived) pairs", 6, C(0),
	      C(0), C(0), SLOT(8), SLOT(8), SLOT(16)),
	FAILS("odd gc values before allocas",
	      "1 gc locations after the deopt values do not form (base, derived) pairs", 5, C(0),
	      C(0), C(0), SLOT(8), ALLOCA(16)),
	FAILS("Direct inside the pairs",
	      "gc location 3 is Direct but not among the trailing gc allocas", 5, C(0), C(0),
	      C(0), ALLOCA(8), SLOT(8)),
	/* The reference's plain stackmap record 1 (§5): Register first. */
	FAILS("a plain stackmap", "location 0 is not a small constant", 6, R(5), {REG, 4, 4, 0},
	      C(42), C(-1), IDX(0), {DIRECT, 8, 6, -8}),
};

static jitmap_stackmap *build(const struct shape *rows, size_t n)
{
	sm_builder b;
	smb_init(&b, 3, JITMAP_ORDER_LITTLE);
	smb_constant(&b, UINT64_C(9000000000));
	smb_function(&b, 0x1000, 64);
	for (size_t i = 0; i < n; i++) {
		smb_record(&b, 100 + i, (uint32_t)(4 * i));
		for (unsigned l = 0; l < rows[i].n; l++)
			smb_loc(&b, rows[i].locs[l].kind, rows[i].locs[l].size, rows[i].locs[l].reg,
				rows[i].locs[l].offset);
	}
	sm_bytes s = smb_emit(&b);
	jitmap_stackmap *sm = parse_bytes_ok(&s, JITMAP_ORDER_LITTLE, JITMAP_ARCH_X86_64);
	sm_bytes_free(&s);
	return sm;
}

static void test_shapes(void **state)
{
	(void)state;
	jitmap_stackmap *sm = build(shapes, ARRAY_LEN(shapes));
	for (size_t i = 0; i < ARRAY_LEN(shapes); i++) {
		const struct shape *want = &shapes[i];
		const jitmap_record *r = jitmap_stackmap_record(sm, i);
		jitmap_statepoint_info info;
		char why[128] = "";
		memset(&info, 0x5a, sizeof(info));
		const int rc = jitmap_statepoint_decode(sm, r, &info, why, sizeof(why));
		if (rc != want->rc)
			fail_msg("%s: rc %d, want %d (%s)", want->name, rc, want->rc, why);
		if (rc) {
			assert_contains(why, want->why);
			/* A rejected record leaves nothing half-filled. */
			assert_int_equal(info.num_deopt + info.num_gc_pairs + info.num_gc_allocas, 0);
			assert_null(info.deopt);
			continue;
		}
		assert_int_equal(info.calling_convention, want->cc);
		assert_int_equal(info.flags, want->flags);
		assert_int_equal(info.num_deopt, want->deopt);
		assert_int_equal(info.num_gc_pairs, want->pairs);
		assert_int_equal(info.num_gc_allocas, want->allocas);
		/* The parts tile the locations after the three header constants. */
		assert_ptr_equal(info.deopt, r->locations + 3);
		assert_ptr_equal(info.gc_pairs, info.deopt + info.num_deopt);
		assert_ptr_equal(info.gc_allocas, info.gc_pairs + 2 * info.num_gc_pairs);
		assert_ptr_equal(info.gc_allocas + info.num_gc_allocas, r->locations + r->num_locations);
		for (size_t a = 0; a < info.num_gc_allocas; a++)
			assert_int_equal(info.gc_allocas[a].kind, JITMAP_LOC_DIRECT);
		/* Both halves of a pair have one size (a vector of N pointers: N x 8). */
		for (size_t p = 0; p < info.num_gc_pairs; p++)
			assert_int_equal(info.gc_pairs[2 * p].size, info.gc_pairs[2 * p + 1].size);
	}

	/* Row 0 in detail: deopt values as written, the vector pair first (size 16). */
	const jitmap_record *r = jitmap_stackmap_record(sm, 0);
	jitmap_statepoint_info info;
	assert_int_equal(jitmap_statepoint_decode(sm, r, &info, NULL, 0), 0);
	uint64_t v;
	assert_int_equal(jitmap_location_constant(sm, r, &info.deopt[1], &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(jitmap_location_constant(sm, r, &info.deopt[2], &v), 0);
	assert_int_equal(v, UINT64_C(9000000000));
	assert_int_equal(info.gc_pairs[0].size, 16);
	assert_int_equal(info.gc_pairs[2].offset, 8);
	assert_int_equal(info.gc_pairs[3].offset, 16);
	/* Null roots are (Constant 0, Constant 0). */
	r = jitmap_stackmap_record(sm, 3);
	assert_int_equal(jitmap_statepoint_decode(sm, r, &info, NULL, 0), 0);
	assert_int_equal(info.gc_pairs[0].kind, JITMAP_LOC_CONSTANT);
	assert_int_equal(info.gc_pairs[0].offset, 0);
	assert_int_equal(info.gc_pairs[1].kind, JITMAP_LOC_CONSTANT);
	assert_int_equal(info.gc_pairs[1].offset, 0);
	jitmap_stackmap_free(sm);
}

/* The reason is optional and cut to its buffer. */
static void test_reason_buffer(void **state)
{
	(void)state;
	jitmap_stackmap *sm = build(&shapes[ARRAY_LEN(shapes) - 1], 1);
	const jitmap_record *r = jitmap_stackmap_record(sm, 0);
	jitmap_statepoint_info info;
	char why[8];
	memset(why, 'x', sizeof(why));
	assert_int_equal(jitmap_statepoint_decode(sm, r, &info, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "locatio");
	memset(why, 'x', sizeof(why));
	assert_int_equal(jitmap_statepoint_decode(sm, r, &info, why, 0), -EINVAL);
	assert_int_equal(why[0], 'x');
	assert_int_equal(jitmap_statepoint_decode(sm, r, &info, NULL, 64), -EINVAL);
	jitmap_stackmap_free(sm);
}

/* -- Which records are shown as statepoints -- */

static void test_wanted(void **state)
{
	(void)state;
	/* record 100: statepoint shape; record 101: plain stackmap */
	const struct shape rows[] = {shapes[0], shapes[ARRAY_LEN(shapes) - 1]};
	jitmap_stackmap *sm = build(rows, 2);
	const jitmap_record *sp = jitmap_stackmap_record(sm, 0);
	const jitmap_record *plain = jitmap_stackmap_record(sm, 1);
	const uint64_t none[1] = {0}, sp_id[] = {7, 100}, plain_id[] = {101}, both[] = {101, 100};
	static const struct {
		jitmap_statepoint_mode mode;
		int list; /* 0 none, 1 the statepoint's ID, 2 the plain record's ID, 3 both */
		bool sp, plain;
	} cases[] = {
		{JITMAP_STATEPOINT_AUTO, 0, true, false},  {JITMAP_STATEPOINT_AUTO, 1, false, false},
		{JITMAP_STATEPOINT_AUTO, 2, true, false},  {JITMAP_STATEPOINT_AUTO, 3, false, false},
		{JITMAP_STATEPOINT_ALL, 0, true, true},    {JITMAP_STATEPOINT_ALL, 1, false, true},
		{JITMAP_STATEPOINT_ALL, 2, true, false},   {JITMAP_STATEPOINT_ALL, 3, false, false},
		{JITMAP_STATEPOINT_NONE, 0, false, false}, {JITMAP_STATEPOINT_NONE, 1, true, false},
		{JITMAP_STATEPOINT_NONE, 2, false, true},  {JITMAP_STATEPOINT_NONE, 3, true, true},
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		const uint64_t *ids = cases[i].list == 1 ? sp_id : cases[i].list == 2 ? plain_id
				    : cases[i].list == 3 ? both : none;
		const size_t n = cases[i].list == 1 ? 2 : cases[i].list == 2 ? 1 : cases[i].list == 3 ? 2 : 0;
		const bool got_sp = jitmap_statepoint_wanted(sm, sp, cases[i].mode, ids, n);
		const bool got_plain = jitmap_statepoint_wanted(sm, plain, cases[i].mode, ids, n);
		if (got_sp != cases[i].sp || got_plain != cases[i].plain)
			fail_msg("case %zu: statepoint %d plain %d, want %d %d", i, got_sp, got_plain,
				 cases[i].sp, cases[i].plain);
	}
	/* No list at all. */
	assert_true(jitmap_statepoint_wanted(sm, sp, JITMAP_STATEPOINT_AUTO, NULL, 0));
	assert_false(jitmap_statepoint_wanted(sm, plain, JITMAP_STATEPOINT_AUTO, NULL, 0));
	jitmap_stackmap_free(sm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_reason_buffer),
		cmocka_unit_test(test_wanted),
	};
	return cmocka_run_group_tests_name("statepoint", tests, NULL, NULL);
}
