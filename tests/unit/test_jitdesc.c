/* test_jitdesc.c: jitmap_jit_list_read against a fake target memory holding a descriptor and
 * its entries, well formed and hostile (cycles, dangling pointers, a wrong version, more
 * entries than the cap), in both byte orders; and jitmap_stackmap_find_id. */
#include "unit.h"

/* -- A fake target: 4 KiB of memory at a fixed address -- */

#define BASE UINT64_C(0x10000)
#define DESC BASE
#define ENTRY(i) (BASE + 0x100 + 0x40 * (uint64_t)(i))

struct mem {
	jitmap_byte_order order;
	uint8_t bytes[4096];
	unsigned reads;
};

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	struct mem *m = ctx;
	m->reads++;
	if (addr < BASE || addr - BASE > sizeof(m->bytes) || len > sizeof(m->bytes) - (addr - BASE)) {
		snprintf(why, why_len, "not in the fake's memory");
		return -EFAULT;
	}
	memcpy(buf, m->bytes + (addr - BASE), len);
	return 0;
}

static void put(struct mem *m, uint64_t addr, uint64_t v, size_t size)
{
	sm_put(m->bytes + (addr - BASE), v, size, m->order);
}

static void set_desc(struct mem *m, uint32_t version, uint64_t first)
{
	put(m, DESC, version, 4);
	put(m, DESC + 4, 1, 4);
	put(m, DESC + 8, first, 8);
	put(m, DESC + 16, first, 8);
}

/* Entry i: next, prev, symfile at 0x9000 + i * 0x100, size 100 + i. */
static void set_entry(struct mem *m, unsigned i, uint64_t next, uint64_t prev)
{
	put(m, ENTRY(i), next, 8);
	put(m, ENTRY(i) + 8, prev, 8);
	put(m, ENTRY(i) + 16, 0x9000 + 0x100 * (uint64_t)i, 8);
	put(m, ENTRY(i) + 24, 100 + i, 8);
}

/* A well-formed list of n entries. */
static void make_list(struct mem *m, jitmap_byte_order order, unsigned n)
{
	memset(m, 0, sizeof(*m));
	m->order = order;
	set_desc(m, 1, n ? ENTRY(0) : 0);
	for (unsigned i = 0; i < n; i++)
		set_entry(m, i, i + 1 < n ? ENTRY(i + 1) : 0, i ? ENTRY(i - 1) : 0);
}

/* -- Well formed -- */

static void test_list_ok(void **state)
{
	(void)state;
	for (int order = JITMAP_ORDER_LITTLE; order <= JITMAP_ORDER_BIG; order++) {
		struct mem m;
		make_list(&m, order, 5);
		const jitmap_target t = {.ctx = &m, .read_mem = mem_read};
		jitmap_error err;
		jitmap_jit_list *l = jitmap_jit_list_read(&t, DESC, order, 0, &err);
		assert_non_null(l);
		assert_int_equal(jitmap_jit_list_status(l)->code, 0);
		assert_int_equal(jitmap_jit_list_count(l), 5);
		const jitmap_jit_descriptor *d = jitmap_jit_list_descriptor(l);
		assert_int_equal(d->version, 1);
		assert_int_equal(d->action_flag, 1);
		assert_int_equal(d->first_entry, ENTRY(0));
		assert_int_equal(d->address, DESC);
		for (unsigned i = 0; i < 5; i++) {
			const jitmap_jit_code *c = jitmap_jit_list_code(l, i);
			assert_non_null(c);
			assert_int_equal(c->entry, ENTRY(i));
			assert_int_equal(c->prev, i ? ENTRY(i - 1) : 0);
			assert_int_equal(c->symfile_addr, 0x9000 + 0x100 * i);
			assert_int_equal(c->symfile_size, 100 + i);
		}
		assert_null(jitmap_jit_list_code(l, 5));
		/* One read for the descriptor, one per entry, and the descriptor again: it did not
		 * change while the list was read. */
		assert_int_equal(m.reads, 7);
		jitmap_jit_list_free(l);
	}
}

static void test_list_empty(void **state)
{
	(void)state;
	struct mem m;
	make_list(&m, JITMAP_ORDER_LITTLE, 0);
	const jitmap_target t = {.ctx = &m, .read_mem = mem_read};
	jitmap_jit_list *l = jitmap_jit_list_read(&t, DESC, JITMAP_ORDER_AUTO, 0, NULL);
	assert_non_null(l);
	assert_int_equal(jitmap_jit_list_count(l), 0);
	assert_int_equal(jitmap_jit_list_status(l)->code, 0);
	jitmap_jit_list_free(l);
	jitmap_jit_list_free(NULL);
}

/* -- The target's byte order, from the descriptor when the caller says AUTO -- */

static void test_list_auto_order(void **state)
{
	(void)state;
	for (int order = JITMAP_ORDER_LITTLE; order <= JITMAP_ORDER_BIG; order++) {
		struct mem m;
		make_list(&m, order, 3);
		const jitmap_target t = {.ctx = &m, .read_mem = mem_read};
		jitmap_error err;
		jitmap_jit_list *l = jitmap_jit_list_read(&t, DESC, JITMAP_ORDER_AUTO, 0, &err);
		if (!l)
			fail_msg("order %d: %s", order, err.reason);
		assert_int_equal(jitmap_jit_list_status(l)->code, 0);
		assert_int_equal(jitmap_jit_list_count(l), 3);
		assert_int_equal(jitmap_jit_list_descriptor(l)->first_entry, ENTRY(0));
		for (unsigned i = 0; i < 3; i++) {
			const jitmap_jit_code *c = jitmap_jit_list_code(l, i);
			assert_int_equal(c->entry, ENTRY(i));
			assert_int_equal(c->symfile_addr, 0x9000 + 0x100 * i);
			assert_int_equal(c->symfile_size, 100 + i);
		}
		jitmap_jit_list_free(l);

		/* The wrong order, given explicitly, is not second-guessed: version 1 misread. */
		const jitmap_byte_order wrong = order == JITMAP_ORDER_BIG ? JITMAP_ORDER_LITTLE
									  : JITMAP_ORDER_BIG;
		assert_null(jitmap_jit_list_read(&t, DESC, wrong, 0, &err));
		assert_int_equal(err.code, -EPROTO);
		assert_contains(err.reason, "has version 16777216");
	}
	/* A version word that reads 1 in neither order: no list, under AUTO too. */
	struct mem m;
	make_list(&m, JITMAP_ORDER_BIG, 1);
	put(&m, DESC, 0x01000001, 4);
	const jitmap_target t = {.ctx = &m, .read_mem = mem_read};
	jitmap_error err;
	assert_null(jitmap_jit_list_read(&t, DESC, JITMAP_ORDER_AUTO, 0, &err));
	assert_int_equal(err.code, -EPROTO);
	assert_contains(err.reason, "has version 16777217");
}

/* -- No list at all -- */

static void test_no_list(void **state)
{
	(void)state;
	struct mem m;
	make_list(&m, JITMAP_ORDER_LITTLE, 2);
	const jitmap_target t = {.ctx = &m, .read_mem = mem_read};
	jitmap_error err;

	errno = 0;
	assert_null(jitmap_jit_list_read(&t, 0x100, JITMAP_ORDER_LITTLE, 0, &err));
	assert_int_equal(errno, EFAULT);
	assert_int_equal(err.code, -EFAULT);
	assert_int_equal(err.offset, 0x100);
	assert_contains(err.reason, "the JIT descriptor at 0x100 is not readable: not in the fake's memory");

	set_desc(&m, 2, ENTRY(0));
	assert_null(jitmap_jit_list_read(&t, DESC, JITMAP_ORDER_LITTLE, 0, &err));
	assert_int_equal(errno, EPROTO);
	assert_contains(err.reason, "has version 2 (only version 1 exists)");

	/* A descriptor in the last 24 bytes of memory: exactly its size is read. */
	const uint64_t last = BASE + sizeof(m.bytes) - 24;
	put(&m, last, 1, 4);
	put(&m, last + 16, 0, 8);
	jitmap_jit_list *l = jitmap_jit_list_read(&t, last, JITMAP_ORDER_LITTLE, 0, &err);
	assert_non_null(l);
	assert_int_equal(jitmap_jit_list_count(l), 0);
	jitmap_jit_list_free(l);

	const jitmap_target none = {0};
	assert_null(jitmap_jit_list_read(&none, DESC, JITMAP_ORDER_LITTLE, 0, &err));
	assert_int_equal(errno, EINVAL);
}

/* -- Hostile lists: the walk stops, keeps what came before, and says why -- */

struct hostile {
	const char *name;
	void (*break_it)(struct mem *m);
	size_t limit;
	int code;
	size_t kept;
	uint64_t offset;
	const char *reason;
};

static void loop_to_head(struct mem *m) { put(m, ENTRY(4), ENTRY(0), 8); }
static void loop_to_middle(struct mem *m) { put(m, ENTRY(4), ENTRY(2), 8); }
static void self_loop(struct mem *m) { put(m, ENTRY(1), ENTRY(1), 8); }
static void dangling(struct mem *m) { put(m, ENTRY(2), UINT64_C(0xdead0000), 8); }
static void past_the_end(struct mem *m) { put(m, ENTRY(1), BASE + 4096 - 16, 8); }
static void nothing(struct mem *m) { (void)m; }
/* A garbage size is reported as stored: the caller caps what it reads. */
static void huge_size(struct mem *m) { put(m, ENTRY(3) + 24, UINT64_MAX, 8); }

static const struct hostile hostiles[] = {
	{"cycle to the head", loop_to_head, 0, -ELOOP, 5, ENTRY(0),
	 "the JIT entry list loops: entry 0x10100 comes again after 5 entries"},
	{"cycle to the middle", loop_to_middle, 0, -ELOOP, 5, ENTRY(2),
	 "entry 0x10180 comes again after 5 entries"},
	{"entry pointing at itself", self_loop, 0, -ELOOP, 2, ENTRY(1), "comes again after 2"},
	{"dangling next", dangling, 0, -EFAULT, 3, 0xdead0000,
	 "JIT entry at 0xdead0000 is not readable: not in the fake's memory"},
	{"entry running off the memory", past_the_end, 0, -EFAULT, 2, BASE + 4096 - 16,
	 "is not readable"},
	{"more entries than the limit", nothing, 3, -E2BIG, 3, ENTRY(3),
	 "more than 3 entries (the limit)"},
	{"exactly the limit", nothing, 5, 0, 5, 0, ""},
	{"huge size", huge_size, 0, 0, 5, 0, ""},
};

static void test_hostile(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(hostiles); i++) {
		const struct hostile *h = &hostiles[i];
		struct mem m;
		make_list(&m, JITMAP_ORDER_LITTLE, 5);
		h->break_it(&m);
		const jitmap_target t = {.ctx = &m, .read_mem = mem_read};
		jitmap_jit_list *l = jitmap_jit_list_read(&t, DESC, JITMAP_ORDER_LITTLE, h->limit, NULL);
		if (!l)
			fail_msg("%s: no list", h->name);
		const jitmap_error *st = jitmap_jit_list_status(l);
		if (st->code != h->code || jitmap_jit_list_count(l) != h->kept)
			fail_msg("%s: code %d with %zu entries, want %d with %zu (%s)", h->name,
				 st->code, jitmap_jit_list_count(l), h->code, h->kept, st->reason);
		if (h->code) {
			assert_int_equal(st->offset, h->offset);
			assert_contains(st->reason, h->reason);
		}
		/* Never more reads than entries kept + the descriptor (twice) + the one that
		 * failed. */
		assert_true(m.reads <= h->kept + 3);
		jitmap_jit_list_free(l);
	}
	/* The huge size is there as stored. */
	struct mem m;
	make_list(&m, JITMAP_ORDER_LITTLE, 5);
	huge_size(&m);
	const jitmap_target t = {.ctx = &m, .read_mem = mem_read};
	jitmap_jit_list *l = jitmap_jit_list_read(&t, DESC, JITMAP_ORDER_LITTLE, 0, NULL);
	assert_int_equal(jitmap_jit_list_code(l, 3)->symfile_size, UINT64_MAX);
	jitmap_jit_list_free(l);
}

/* A long cycle far from the head is still found in one pass (the set grows past its first
 * size), and a long list is read whole. */
struct big_mem {
	unsigned n;
	uint64_t loop_to;
	unsigned reads;
};

static int big_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	struct big_mem *b = ctx;
	(void)why;
	(void)why_len;
	b->reads++;
	uint8_t w[32] = {0};
	if (addr == DESC) {
		sm_put(w, 1, 4, JITMAP_ORDER_LITTLE);
		sm_put(w + 16, ENTRY(0), 8, JITMAP_ORDER_LITTLE);
	} else {
		const uint64_t i = (addr - ENTRY(0)) / 0x40;
		sm_put(w, i + 1 < b->n ? ENTRY(i + 1) : b->loop_to, 8, JITMAP_ORDER_LITTLE);
		sm_put(w + 16, 0x1000 * (i + 1), 8, JITMAP_ORDER_LITTLE);
	}
	memcpy(buf, w, len < sizeof(w) ? len : sizeof(w));
	return 0;
}

static void test_long_lists(void **state)
{
	(void)state;
	struct big_mem b = {.n = 20000, .loop_to = ENTRY(12345)};
	const jitmap_target t = {.ctx = &b, .read_mem = big_read};
	jitmap_jit_list *l = jitmap_jit_list_read(&t, DESC, JITMAP_ORDER_LITTLE, 0, NULL);
	assert_non_null(l);
	assert_int_equal(jitmap_jit_list_status(l)->code, -ELOOP);
	assert_int_equal(jitmap_jit_list_count(l), 20000);
	assert_int_equal(b.reads, 20002);
	jitmap_jit_list_free(l);

	b = (struct big_mem){.n = 20000, .loop_to = 0};
	l = jitmap_jit_list_read(&t, DESC, JITMAP_ORDER_LITTLE, 0, NULL);
	assert_int_equal(jitmap_jit_list_status(l)->code, 0);
	assert_int_equal(jitmap_jit_list_count(l), 20000);
	assert_int_equal(jitmap_jit_list_code(l, 19999)->symfile_addr, 0x1000 * 20000);
	jitmap_jit_list_free(l);
}

/* -- Records by ID -- */

static void test_find_id(void **state)
{
	(void)state;
	sm_builder b;
	smb_init(&b, 3, JITMAP_ORDER_LITTLE);
	smb_function(&b, 0x1000, 16);
	smb_record(&b, 7, 4);
	smb_record(&b, 8, 8);
	smb_function(&b, 0x2000, 16);
	smb_record(&b, 7, 12);
	sm_bytes s = smb_emit(&b);
	jitmap_stackmap *sm = parse_bytes_ok(&s, JITMAP_ORDER_LITTLE, JITMAP_ARCH_X86_64);
	const jitmap_record *out[4];
	assert_int_equal(jitmap_stackmap_find_id(sm, 7, out, 4), 2);
	assert_int_equal(jitmap_record_pc(sm, out[0]), 0x1004);
	assert_int_equal(jitmap_record_pc(sm, out[1]), 0x200c);
	assert_int_equal(jitmap_stackmap_find_id(sm, 7, out, 1), 2);
	assert_int_equal(jitmap_stackmap_find_id(sm, 7, NULL, 0), 2);
	assert_int_equal(jitmap_stackmap_find_id(sm, 9, out, 4), 0);
	jitmap_stackmap_free(sm);
	sm_bytes_free(&s);
}

/* -- A list that changes while it is read (a process that runs) -- */

struct changing {
	struct mem m;
	unsigned changes; /* the descriptor's reads that find it changed: a JIT registering */
};

static int changing_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			 size_t why_len)
{
	struct changing *c = ctx;
	if (addr == DESC && c->changes) {
		c->changes--;
		/* Registered: entry 5 in front, as runtimes link a new entry. */
		set_entry(&c->m, 5, ENTRY(0), 0);
		put(&c->m, ENTRY(0) + 8, ENTRY(5), 8);
		put(&c->m, DESC + 8, ENTRY(5), 8);
		put(&c->m, DESC + 16, ENTRY(5), 8);
		if (c->changes % 2) { /* and freed again */
			put(&c->m, ENTRY(0) + 8, 0, 8);
			put(&c->m, DESC + 8, ENTRY(0), 8);
			put(&c->m, DESC + 16, ENTRY(0), 8);
		}
	}
	return mem_read(&c->m, addr, buf, len, why, why_len);
}

static void test_list_changes(void **state)
{
	(void)state;
	/* Changed once between the descriptor's first read and its check: read again, whole. */
	struct changing c;
	make_list(&c.m, JITMAP_ORDER_LITTLE, 5);
	c.changes = 2;
	const jitmap_target t = {.ctx = &c, .read_mem = changing_read};
	jitmap_jit_list *l = jitmap_jit_list_read(&t, DESC, JITMAP_ORDER_LITTLE, 0, NULL);
	assert_non_null(l);
	assert_int_equal(jitmap_jit_list_status(l)->code, 0);
	assert_int_equal(jitmap_jit_list_count(l), 6);
	assert_int_equal(jitmap_jit_list_code(l, 0)->entry, ENTRY(5));
	jitmap_jit_list_free(l);
	/* Changing at every look: what was read, and a status that says it may mix states. */
	make_list(&c.m, JITMAP_ORDER_LITTLE, 5);
	c.changes = 1000;
	l = jitmap_jit_list_read(&t, DESC, JITMAP_ORDER_LITTLE, 0, NULL);
	assert_non_null(l);
	assert_int_equal(jitmap_jit_list_status(l)->code, -EAGAIN);
	assert_contains(jitmap_jit_list_status(l)->reason,
			"the JIT entry list changed while it was read (3 times)");
	jitmap_jit_list_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list_ok),
		cmocka_unit_test(test_list_empty),
		cmocka_unit_test(test_list_auto_order),
		cmocka_unit_test(test_no_list),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_long_lists),
		cmocka_unit_test(test_list_changes),
		cmocka_unit_test(test_find_id),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
