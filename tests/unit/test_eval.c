/* test_eval.c: jitmap_location_eval through a fake target (registers in an array, 64 bytes of
 * memory at a fixed address), in both byte orders, and jitmap_location_format. */
#include "unit.h"

/* -- The fake target -- */

#define NREGS 160
#define MEM_BASE UINT64_C(0x7ffe0000)

struct fake {
	jitmap_byte_order order;
	uint64_t regs[NREGS];
	uint8_t wide[NREGS][64]; /* registers wider than 8 bytes, in target byte order */
	bool missing[NREGS];
	bool quiet;              /* fail without a reason */
	bool not_saved[NREGS];   /* -ENOENT: the debugger says "not saved in this frame" */
	bool recovered[NREGS];   /* JITMAP_REG_RECOVERED: read from a save slot */
	uint8_t mem[64];
};

static int fake_read_reg(void *ctx, unsigned regno, void *buf, size_t size, char *why,
			 size_t why_len)
{
	struct fake *f = ctx;
	assert_true(size >= 1 && size <= 64);
	if (regno >= NREGS || f->missing[regno]) {
		if (!f->quiet)
			snprintf(why, why_len, "caller-saved register not saved in an outer frame");
		return -ENODATA;
	}
	if (f->not_saved[regno])
		return -ENOENT;
	if (size <= 8)
		sm_put(buf, f->regs[regno], size, f->order);
	else
		memcpy(buf, f->wide[regno], size);
	return f->recovered[regno] ? JITMAP_REG_RECOVERED : 0;
}

static int fake_read_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			 size_t why_len)
{
	struct fake *f = ctx;
	if (addr < MEM_BASE || addr - MEM_BASE > sizeof(f->mem) ||
	    len > sizeof(f->mem) - (addr - MEM_BASE)) {
		snprintf(why, why_len, "no mapping there");
		return -EFAULT;
	}
	memcpy(buf, f->mem + (addr - MEM_BASE), len);
	return 0;
}

static void fake_init(struct fake *f, jitmap_byte_order order)
{
	memset(f, 0, sizeof(*f));
	f->order = order;
	f->regs[3] = UINT64_C(0x1122334455667788); /* rbx */
	f->regs[6] = MEM_BASE + 0x100;             /* rbp */
	f->regs[7] = MEM_BASE;                     /* rsp */
	f->regs[13] = 0;                           /* r13 */
	f->missing[12] = true;                     /* r12 */
	f->missing[14] = true;                     /* r14 as a base */
	for (unsigned i = 0; i < 64; i++) {
		f->wide[17][i] = (uint8_t)(0xa0 + i); /* xmm0 / ymm0 / zmm0 */
		f->mem[i] = (uint8_t)(i + 1);
	}
}

/* -- The record -- */

enum {
	L_RBX1, L_RBX2, L_RBX4, L_RBX8, L_XMM0, L_YMM0, L_DIRECT, L_DIRECT0, L_IND8, L_IND4,
	L_IND1, L_IND16, L_CONST, L_CONST_NEG1, L_CONST_MIN, L_CIDX0, L_CIDX1, L_CIDX2, L_R12,
	L_R14_BASE, L_BAD_MEM, L_NEG_MEM, L_REG128, L_IND512, NUM_LOCS
};

static jitmap_stackmap *build(jitmap_byte_order order, jitmap_arch arch, sm_builder *b)
{
	smb_init(b, 3, order);
	smb_constant(b, UINT64_C(4294967296));
	smb_constant(b, UINT64_C(9000000000));
	smb_constant(b, UINT64_MAX);
	smb_function(b, 0x1000, 32);
	smb_record(b, 1, 4);
	smb_loc(b, REG, 1, 3, 0);
	smb_loc(b, REG, 2, 3, 0);
	smb_loc(b, REG, 4, 3, 0);
	smb_loc(b, REG, 8, 3, 0);
	smb_loc(b, REG, 16, 17, 0);
	smb_record(b, 2, 8); /* a builder record holds 16 locations: continue in a second */
	smb_loc(b, REG, 32, 17, 0);
	smb_loc(b, DIRECT, 8, 6, -8);
	smb_loc(b, DIRECT, 8, 7, 0);
	smb_loc(b, INDIRECT, 8, 7, 16);
	smb_loc(b, INDIRECT, 4, 7, 16);
	smb_loc(b, INDIRECT, 1, 7, 16);
	smb_loc(b, INDIRECT, 16, 6, -0xf8);
	smb_loc(b, CONST, 8, 0, 42);
	smb_loc(b, CONST, 8, 0, -1);
	smb_loc(b, CONST, 8, 0, INT32_MIN);
	smb_loc(b, CIDX, 8, 0, 0);
	smb_loc(b, CIDX, 8, 0, 1);
	smb_loc(b, CIDX, 8, 0, 2);
	smb_record(b, 3, 12);
	smb_loc(b, REG, 8, 12, 0);
	smb_loc(b, INDIRECT, 8, 14, 8);
	smb_loc(b, INDIRECT, 8, 7, 1000);
	smb_loc(b, INDIRECT, 8, 7, -8);
	smb_loc(b, REG, 128, 17, 0);
	smb_loc(b, INDIRECT, 512, 7, 0);
	sm_bytes s = smb_emit(b);
	jitmap_stackmap *sm = parse_bytes_ok(&s, order, arch);
	sm_bytes_free(&s);
	return sm;
}

/* Location `i` of the three records above, with the record that holds it. */
static const jitmap_location *loc(const jitmap_stackmap *sm, int i, const jitmap_record **rec)
{
	int r = i < L_YMM0 ? 0 : i < L_R12 ? 1 : 2;
	int first = r == 0 ? 0 : r == 1 ? L_YMM0 : L_R12;
	*rec = jitmap_stackmap_record(sm, (size_t)r);
	assert_true(i - first < (*rec)->num_locations);
	return &(*rec)->locations[i - first];
}

/* -- Evaluating -- */

static int eval(const jitmap_stackmap *sm, int i, const jitmap_target *t, jitmap_value *v)
{
	const jitmap_record *rec;
	const jitmap_location *l = loc(sm, i, &rec);
	return jitmap_location_eval(sm, rec, l, t, v);
}

struct want {
	int loc;
	int rc;
	uint16_t size;
	uint64_t u_little, u_big;
	bool is_address;
	uint64_t address;
	const char *why; /* when rc != 0 */
};

static const struct want wants[] = {
	/* Registers up to 8 bytes: the value truncated to the location's size */
	{L_RBX1, 0, 1, 0x88, 0x88, false, 0, NULL},
	{L_RBX2, 0, 2, 0x7788, 0x7788, false, 0, NULL},
	{L_RBX4, 0, 4, 0x55667788, 0x55667788, false, 0, NULL},
	{L_RBX8, 0, 8, 0x1122334455667788, 0x1122334455667788, false, 0, NULL},
	/* Direct: an address, base + offset */
	{L_DIRECT, 0, 8, MEM_BASE + 0xf8, MEM_BASE + 0xf8, true, MEM_BASE + 0xf8, NULL},
	{L_DIRECT0, 0, 8, MEM_BASE, MEM_BASE, true, MEM_BASE, NULL},
	/* Indirect: memory bytes 17, 18, ... at rsp+16, in the section's byte order */
	{L_IND8, 0, 8, 0x1817161514131211, 0x1112131415161718, false, MEM_BASE + 16, NULL},
	{L_IND4, 0, 4, 0x14131211, 0x11121314, false, MEM_BASE + 16, NULL},
	{L_IND1, 0, 1, 0x11, 0x11, false, MEM_BASE + 16, NULL},
	/* Constants: sign-extended small ones, pool entries */
	{L_CONST, 0, 8, 42, 42, false, 0, NULL},
	{L_CONST_NEG1, 0, 8, UINT64_MAX, UINT64_MAX, false, 0, NULL},
	{L_CONST_MIN, 0, 8, UINT64_C(0xffffffff80000000), UINT64_C(0xffffffff80000000), false, 0, NULL},
	{L_CIDX0, 0, 8, UINT64_C(4294967296), UINT64_C(4294967296), false, 0, NULL},
	{L_CIDX1, 0, 8, UINT64_C(9000000000), UINT64_C(9000000000), false, 0, NULL},
	{L_CIDX2, 0, 8, UINT64_MAX, UINT64_MAX, false, 0, NULL},
	/* Unavailable: the target's reason, with the register or address */
	{L_R12, -ENODATA, 8, 0, 0, false, 0,
	 "register r12 not available: caller-saved register not saved in an outer frame"},
	{L_R14_BASE, -ENODATA, 8, 0, 0, false, 0,
	 "base register r14 not available: caller-saved register not saved in an outer frame"},
	{L_BAD_MEM, -EFAULT, 8, 0, 0, false, MEM_BASE + 1000,
	 "memory at 0x7ffe03e8 not readable: no mapping there"},
	{L_NEG_MEM, -EFAULT, 8, 0, 0, false, MEM_BASE - 8,
	 "memory at 0x7ffdfff8 not readable: no mapping there"},
	/* Sizes beyond what a value holds */
	{L_REG128, -ENOTSUP, 128, 0, 0, false, 0, "register xmm0 holds 128 bytes; registers over 64 bytes are not read"},
	{L_IND512, -ENOTSUP, 512, 0, 0, false, MEM_BASE, "512-byte value is larger than jitmap shows"},
};

static void test_eval_table(void **state)
{
	(void)state;
	for (int order = JITMAP_ORDER_LITTLE; order <= JITMAP_ORDER_BIG; order++) {
		sm_builder b;
		jitmap_stackmap *sm = build(order, JITMAP_ARCH_X86_64, &b);
		struct fake f;
		fake_init(&f, order);
		const jitmap_target t = {&f, fake_read_reg, fake_read_mem};
		for (size_t i = 0; i < ARRAY_LEN(wants); i++) {
			const struct want *w = &wants[i];
			const jitmap_record *rec;
			const jitmap_location *l = loc(sm, w->loc, &rec);
			jitmap_value v;
			memset(&v, 0x5a, sizeof(v));
			const int rc = jitmap_location_eval(sm, rec, l, &t, &v);
			const char *o = order == JITMAP_ORDER_BIG ? "big" : "little";
			if (rc != w->rc)
				fail_msg("%s: location %d: rc %d, want %d (%s)", o, w->loc, rc, w->rc,
					 v.available ? "available" : v.why);
			assert_int_equal(v.available, rc == 0);
			assert_int_equal(v.size, w->size);
			if (rc) {
				assert_contains(v.why, w->why);
				if (w->address)
					assert_int_equal(v.address, w->address);
				continue;
			}
			const uint64_t u = order == JITMAP_ORDER_BIG ? w->u_big : w->u_little;
			if (v.u != u)
				fail_msg("%s: location %d: 0x%llx, want 0x%llx", o, w->loc,
					 (unsigned long long)v.u, (unsigned long long)u);
			assert_int_equal(v.is_address, w->is_address);
			assert_int_equal(v.address, w->address);
			/* Small values leave the byte buffer clear. */
			for (size_t k = 0; k < sizeof(v.bytes); k++)
				assert_int_equal(v.bytes[k], 0);
		}
		jitmap_stackmap_free(sm);
	}
}

/* Values wider than 8 bytes come as bytes in target order: a 16-byte XMM register (LLVM's
 * spill size for float/double), a 32-byte YMM one, a 16-byte spill slot. */
static void test_wide_values(void **state)
{
	(void)state;
	for (int order = JITMAP_ORDER_LITTLE; order <= JITMAP_ORDER_BIG; order++) {
		sm_builder b;
		jitmap_stackmap *sm = build(order, JITMAP_ARCH_X86_64, &b);
		struct fake f;
		fake_init(&f, order);
		const jitmap_target t = {&f, fake_read_reg, fake_read_mem};
		jitmap_value v;

		assert_int_equal(eval(sm, L_XMM0, &t, &v), 0);
		assert_true(v.available);
		assert_int_equal(v.size, 16);
		assert_memory_equal(v.bytes, f.wide[17], 16);
		assert_int_equal(v.bytes[16], 0);
		assert_int_equal(v.u, 0);

		assert_int_equal(eval(sm, L_YMM0, &t, &v), 0);
		assert_int_equal(v.size, 32);
		assert_memory_equal(v.bytes, f.wide[17], 32);

		assert_int_equal(eval(sm, L_IND16, &t, &v), 0);
		assert_int_equal(v.size, 16);
		assert_int_equal(v.address, MEM_BASE + 8);
		assert_memory_equal(v.bytes, f.mem + 8, 16);
		jitmap_stackmap_free(sm);
	}
}

/* A target that cannot do everything: no registers, no memory, no reasons. */
static void test_partial_targets(void **state)
{
	(void)state;
	sm_builder b;
	jitmap_stackmap *sm = build(JITMAP_ORDER_LITTLE, JITMAP_ARCH_X86_64, &b);
	struct fake f;
	fake_init(&f, JITMAP_ORDER_LITTLE);
	jitmap_value v;

	/* No target at all: constants still evaluate. */
	assert_int_equal(eval(sm, L_CIDX1, NULL, &v), 0);
	assert_int_equal(v.u, UINT64_C(9000000000));
	assert_int_equal(eval(sm, L_RBX8, NULL, &v), -ENOTSUP);
	assert_false(v.available);
	assert_contains(v.why, "no registers to read");
	assert_int_equal(eval(sm, L_DIRECT, NULL, &v), -ENOTSUP);

	/* Registers but no memory: Direct works, Indirect does not. */
	const jitmap_target regs_only = {&f, fake_read_reg, NULL};
	assert_int_equal(eval(sm, L_DIRECT, &regs_only, &v), 0);
	assert_int_equal(v.u, MEM_BASE + 0xf8);
	assert_int_equal(eval(sm, L_IND8, &regs_only, &v), -ENOTSUP);
	assert_contains(v.why, "no memory to read");

	/* A failure without a reason gets the error's words. */
	f.quiet = true;
	const jitmap_target t = {&f, fake_read_reg, fake_read_mem};
	assert_int_equal(eval(sm, L_R12, &t, &v), -ENODATA);
	assert_contains(v.why, "register r12 not available: value not available");

	/* Locations the parser would not have produced. */
	const jitmap_location bad_index = {CIDX, 8, 0, 3}, bad_kind = {(jitmap_loc_kind)9, 8, 0, 0};
	const jitmap_record *rec = jitmap_stackmap_record(sm, 0);
	assert_int_equal(jitmap_location_eval(sm, rec, &bad_index, &t, &v), -ERANGE);
	assert_contains(v.why, "constant index out of range");
	assert_int_equal(jitmap_location_eval(sm, rec, &bad_kind, &t, &v), -EINVAL);
	assert_contains(v.why, "unknown location kind");
	jitmap_stackmap_free(sm);

	/* Without an architecture, registers are named by number. */
	sm = build(JITMAP_ORDER_LITTLE, JITMAP_ARCH_UNKNOWN, &b);
	f.quiet = false;
	assert_int_equal(eval(sm, L_R12, &t, &v), -ENODATA);
	assert_contains(v.why, "register R#12 not available");
	jitmap_stackmap_free(sm);
}

/* Options are checked from the end of the last field the library knows, not from sizeof:
 * jitmap_eval_opts ends in 4 bytes of tail padding on LP64, where a newer caller's field would
 * be, and a byte set there is refused whether sz is sizeof or more. */
static void test_opts_checked_from_last_field(void **state)
{
	(void)state;
	sm_builder b;
	struct fake f;
	fake_init(&f, JITMAP_ORDER_LITTLE);
	f.regs[0] = 0xaaaa;
	const jitmap_target t = {&f, fake_read_reg, fake_read_mem};
	smb_init(&b, 3, JITMAP_ORDER_LITTLE);
	smb_function(&b, 0x1000, 32);
	smb_record(&b, 9, 4);
	smb_loc(&b, REG, 8, 0, 0); /* rax */
	sm_bytes bytes = smb_emit(&b);
	jitmap_stackmap *sm = parse_bytes_ok(&bytes, JITMAP_ORDER_LITTLE, JITMAP_ARCH_X86_64);
	sm_bytes_free(&bytes);
	const jitmap_record *rec = jitmap_stackmap_record(sm, 0);
	const jitmap_location *loc = &rec->locations[0];
	const size_t end = offsetof(jitmap_eval_opts, frame_level) + sizeof(unsigned);
	if (end == sizeof(jitmap_eval_opts))
		skip(); /* no tail padding on this ABI */

	struct {
		jitmap_eval_opts o;
		uint64_t future;
	} big;
	unsigned char *bytes_of = (unsigned char *)&big;
	jitmap_value v;
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big.o);
	assert_int_equal(jitmap_location_eval_frame(sm, rec, loc, &t, &big.o, &v), 0);
	assert_int_equal(v.u, 0xaaaa);
	bytes_of[end] = 1; /* sz = sizeof: the padding byte is read all the same */
	assert_int_equal(jitmap_location_eval_frame(sm, rec, loc, &t, &big.o, &v), -EINVAL);
	assert_contains(v.why, "fields this libjitmap does not know are set");
	big.o.sz = sizeof(big);
	assert_int_equal(jitmap_location_eval_frame(sm, rec, loc, &t, &big.o, &v), -EINVAL);
	bytes_of[end] = 0; /* a larger struct: zeros past the known fields are fine */
	assert_int_equal(jitmap_location_eval_frame(sm, rec, loc, &t, &big.o, &v), 0);
	bytes_of[sizeof(big) - 1] = 1; /* and a non-zero byte past them is not */
	assert_int_equal(jitmap_location_eval_frame(sm, rec, loc, &t, &big.o, &v), -EINVAL);
	/* A caller's sz short of the padding: it is not read. */
	big.o.sz = end;
	bytes_of[end] = 1;
	assert_int_equal(jitmap_location_eval_frame(sm, rec, loc, &t, &big.o, &v), 0);
	/* JITMAP_OPTS leaves the padding zero, the struct const or not. */
	JITMAP_OPTS(const jitmap_eval_opts, o, .frame_level = 0);
	assert_int_equal(jitmap_location_eval_frame(sm, rec, loc, &t, &o, &v), 0);
	for (size_t i = end; i < sizeof(o); i++)
		assert_int_equal(((const unsigned char *)&o)[i], 0);
	jitmap_stackmap_free(sm);
}

/* -- Formatting -- */

/* The outer-frame rule (jitmap_location_eval_frame): in frame 0 every register the target
 * gives is believed; in an outer frame a caller-saved one only when the target recovered it
 * from a save slot, and "not saved" is worded by the library from the register's class. */
static void test_outer_frame_rule(void **state)
{
	(void)state;
	sm_builder b;
	jitmap_stackmap *sm = build(JITMAP_ORDER_LITTLE, JITMAP_ARCH_X86_64, &b);
	struct fake f;
	fake_init(&f, JITMAP_ORDER_LITTLE);
	f.regs[0] = 0xaaaa; /* rax: caller-saved */
	f.regs[5] = 0x5555; /* rdi (DWARF 5): caller-saved, recovered from a save slot */
	f.recovered[5] = true;
	f.not_saved[12] = true; /* r12: callee-saved, but the debugger says not saved */
	f.missing[12] = false;
	f.not_saved[1] = true; /* rdx: caller-saved, not saved */
	const jitmap_target t = {&f, fake_read_reg, fake_read_mem};
	smb_init(&b, 3, JITMAP_ORDER_LITTLE);
	smb_function(&b, 0x1000, 32);
	smb_record(&b, 9, 4);
	smb_loc(&b, REG, 8, 0, 0);   /* rax */
	smb_loc(&b, REG, 8, 3, 0);   /* rbx */
	smb_loc(&b, REG, 8, 5, 0);   /* rdi */
	smb_loc(&b, REG, 8, 12, 0);  /* r12 */
	smb_loc(&b, REG, 8, 1, 0);   /* rdx */
	smb_loc(&b, INDIRECT, 8, 7, 16); /* [rsp+16]: rsp is the CFA rule's, always believed */
	sm_bytes bytes = smb_emit(&b);
	jitmap_stackmap_free(sm);
	sm = parse_bytes_ok(&bytes, JITMAP_ORDER_LITTLE, JITMAP_ARCH_X86_64);
	sm_bytes_free(&bytes);
	const jitmap_record *rec = jitmap_stackmap_record(sm, 0);
	static const struct {
		unsigned level;
		int loc, rc;
		uint64_t u;
		const char *why;
	} cases[] = {
		{0, 0, 0, 0xaaaa, NULL},
		{2, 0, -ENOENT, 0, "register rax not available: caller-saved, and not saved in frame 2"},
		{2, 1, 0, UINT64_C(0x1122334455667788), NULL},
		{0, 2, 0, 0x5555, NULL},
		{1, 2, 0, 0x5555, NULL},
		{0, 3, -ENOENT, 0, "register r12 not available: not saved in frame 0"},
		{1, 3, -ENOENT, 0, "register r12 not available: not saved in frame 1"},
		{3, 4, -ENOENT, 0, "register rdx not available: caller-saved, and not saved in frame 3"},
		{1, 5, 0, 0x14131211, NULL},
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		JITMAP_OPTS(jitmap_eval_opts, o, .frame_level = cases[i].level);
		jitmap_value v;
		int rc = jitmap_location_eval_frame(sm, rec, &rec->locations[cases[i].loc], &t, &o, &v);
		if (rc != cases[i].rc)
			fail_msg("case %zu: rc %d, want %d (%s)", i, rc, cases[i].rc, v.why);
		if (rc == 0)
			assert_int_equal(v.u & 0xffffffffu, cases[i].u & 0xffffffffu);
		else
			assert_contains(v.why, cases[i].why);
	}
	/* Options: NULL is frame 0; a size too small or unknown non-zero fields are refused. */
	jitmap_value v;
	assert_int_equal(jitmap_location_eval_frame(sm, rec, &rec->locations[0], &t, NULL, &v), 0);
	jitmap_eval_opts small = {.sz = 1};
	assert_int_equal(jitmap_location_eval_frame(sm, rec, &rec->locations[0], &t, &small, &v),
			 -EINVAL);
	struct {
		jitmap_eval_opts o;
		uint64_t future;
	} big;
	memset(&big, 0, sizeof(big)); /* padding too: the bytes past the known fields are read */
	big.o.sz = sizeof(big);
	big.o.frame_level = 1;
	big.future = 7;
	assert_int_equal(jitmap_location_eval_frame(sm, rec, &rec->locations[0], &t, &big.o, &v),
			 -EINVAL);
	big.future = 0;
	assert_int_equal(jitmap_location_eval_frame(sm, rec, &rec->locations[1], &t, &big.o, &v), 0);
	jitmap_stackmap_free(sm);
}

static void test_format(void **state)
{
	(void)state;
	sm_builder b;
	jitmap_stackmap *x86 = build(JITMAP_ORDER_LITTLE, JITMAP_ARCH_X86_64, &b);
	jitmap_stackmap *any = build(JITMAP_ORDER_LITTLE, JITMAP_ARCH_UNKNOWN, &b);
	jitmap_stackmap *a64 = build(JITMAP_ORDER_BIG, JITMAP_ARCH_AARCH64, &b);
	static const struct {
		int arch; /* 0 x86-64, 1 unknown, 2 aarch64 */
		int loc;  /* a location of the record, or -1 for `hand` */
		jitmap_location hand;
		const char *text;
	} cases[] = {
		{0, L_RBX8, {0}, "rbx"},
		{0, L_XMM0, {0}, "xmm0"},
		{0, L_IND8, {0}, "[rsp+16]"},
		{0, L_DIRECT, {0}, "rbp-8"},
		{0, L_DIRECT0, {0}, "rsp"},
		{0, L_CONST, {0}, "const 42"},
		{0, L_CONST_NEG1, {0}, "const -1"},
		{0, L_CONST_MIN, {0}, "const -2147483648"},
		{0, L_CIDX1, {0}, "const#1 9000000000"},
		{0, L_CIDX2, {0}, "const#2 18446744073709551615"},
		{0, -1, {INDIRECT, 8, 6, 0}, "[rbp]"},
		{0, -1, {INDIRECT, 8, 7, INT32_MIN}, "[rsp-2147483648]"},
		{0, -1, {DIRECT, 8, 6, INT32_MAX}, "rbp+2147483647"},
		{0, -1, {REG, 8, 200, 0}, "R#200"},
		{0, -1, {CIDX, 8, 0, 7}, "const#7 <out of range>"},
		{0, -1, {(jitmap_loc_kind)9, 8, 0, 0}, "kind 9"},
		{1, L_RBX8, {0}, "R#3"},
		{1, L_IND8, {0}, "[R#7+16]"},
		{1, L_DIRECT, {0}, "R#6-8"},
		{2, -1, {INDIRECT, 8, 31, 16}, "[sp+16]"},
		{2, -1, {DIRECT, 8, 29, -24}, "x29-24"},
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		const jitmap_stackmap *sm = cases[i].arch == 0 ? x86 : cases[i].arch == 1 ? any : a64;
		const jitmap_record *rec = jitmap_stackmap_record(sm, 0);
		const jitmap_location *l = cases[i].loc < 0 ? &cases[i].hand : loc(sm, cases[i].loc, &rec);
		char buf[64];
		const int n = jitmap_location_format(sm, rec, l, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].text);
		assert_int_equal(n, (int)strlen(cases[i].text));
	}
	/* Like snprintf: cut to the buffer, the full length returned. */
	const jitmap_record *rec;
	const jitmap_location *l = loc(x86, L_IND8, &rec);
	char small[4];
	assert_int_equal(jitmap_location_format(x86, rec, l, small, sizeof(small)), 8);
	assert_string_equal(small, "[rs");
	assert_int_equal(jitmap_location_format(x86, rec, l, NULL, 0), 8);
	/* A register's label alone (jitmap-dump's spill lines): the name, else the number. */
	assert_int_equal(jitmap_stackmap_reg_label(x86, 3, small, sizeof(small)), 3);
	assert_string_equal(small, "rbx");
	assert_int_equal(jitmap_stackmap_reg_label(x86, 200, small, sizeof(small)), 5);
	assert_string_equal(small, "R#2");
	assert_int_equal(jitmap_stackmap_reg_label(a64, 29, small, sizeof(small)), 3);
	assert_string_equal(small, "x29");
	assert_int_equal(jitmap_stackmap_reg_label(any, 3, small, sizeof(small)), 3);
	assert_string_equal(small, "R#3");
	jitmap_stackmap_free(x86);
	jitmap_stackmap_free(any);
	jitmap_stackmap_free(a64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eval_table),
		cmocka_unit_test(test_wide_values),
		cmocka_unit_test(test_partial_targets),
		cmocka_unit_test(test_outer_frame_rule),
		cmocka_unit_test(test_opts_checked_from_last_field),
		cmocka_unit_test(test_format),
	};
	return cmocka_run_group_tests_name("eval", tests, NULL, NULL);
}
