/* test_index.c: records by absolute PC, in one stackmap (lookup, nearest, relocation, bias)
 * and across several (jitmap_index). */
#include "unit.h"

/* f0 at 0x1000: records 10, 11, 12 at +4 (one PC, as LLVM emits for adjacent stackmaps),
 * record 13 at +20. f1 at 0x2000: records 20 at +0 and 21 at +8. */
static jitmap_stackmap *sample(uint64_t f0, uint64_t f1, sm_builder *b)
{
	smb_init(b, 3, JITMAP_ORDER_LITTLE);
	smb_function(b, f0, 16);
	smb_record(b, 10, 4);
	smb_record(b, 11, 4);
	smb_loc(b, REG, 8, 3, 0);
	smb_record(b, 12, 4);
	smb_record(b, 13, 20);
	smb_function(b, f1, 16);
	smb_record(b, 20, 0);
	smb_record(b, 21, 8);
	sm_bytes s = smb_emit(b);
	jitmap_stackmap *sm = parse_bytes_ok(&s, JITMAP_ORDER_LITTLE, JITMAP_ARCH_X86_64);
	sm_bytes_free(&s);
	return sm;
}

static const jitmap_record *rec(const jitmap_stackmap *sm, size_t i)
{
	return jitmap_stackmap_record(sm, i);
}

/* The IDs of the records at `pc`, as a small number: 101112 for records 10, 11, 12. */
static uint64_t ids_at(const jitmap_stackmap *sm, uint64_t pc)
{
	const jitmap_record *out[8];
	const size_t n = jitmap_stackmap_lookup(sm, pc, out, ARRAY_LEN(out));
	uint64_t ids = 0;
	for (size_t i = 0; i < n && i < ARRAY_LEN(out); i++)
		ids = ids * 100 + out[i]->id;
	return ids;
}

static void test_lookup(void **state)
{
	(void)state;
	sm_builder b;
	jitmap_stackmap *sm = sample(0x1000, 0x2000, &b);
	static const struct {
		uint64_t pc, ids;
	} cases[] = {
		{0, 0},          {0x1000, 0},      {0x1003, 0}, {0x1004, 101112}, {0x1005, 0},
		{0x1013, 0},     {0x1014, 13},     {0x1015, 0}, {0x1fff, 0},      {0x2000, 20},
		{0x2004, 0},     {0x2008, 21},     {0x2009, 0}, {UINT64_MAX, 0},
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++)
		if (ids_at(sm, cases[i].pc) != cases[i].ids)
			fail_msg("pc 0x%llx: records %llu, want %llu", (unsigned long long)cases[i].pc,
				 (unsigned long long)ids_at(sm, cases[i].pc),
				 (unsigned long long)cases[i].ids);

	/* The count is the total; at most `max` are stored, in section order. */
	const jitmap_record *out[2] = {NULL, NULL};
	assert_int_equal(jitmap_stackmap_lookup(sm, 0x1004, out, 2), 3);
	assert_ptr_equal(out[0], rec(sm, 0));
	assert_ptr_equal(out[1], rec(sm, 1));
	assert_int_equal(jitmap_stackmap_lookup(sm, 0x1004, NULL, 0), 3);
	assert_int_equal(jitmap_stackmap_lookup(sm, 0x1005, NULL, 0), 0);
	jitmap_stackmap_free(sm);
}

/* Functions at one address (an object file with function sections: every address is 0)
 * give records at one PC across functions, still in section order. */
static void test_lookup_across_functions_at_one_address(void **state)
{
	(void)state;
	sm_builder b;
	jitmap_stackmap *sm = sample(0, 0, &b);
	assert_int_equal(ids_at(sm, 0), 20);
	assert_int_equal(ids_at(sm, 4), 101112);
	assert_int_equal(ids_at(sm, 8), 21);
	assert_int_equal(ids_at(sm, 20), 13);
	jitmap_stackmap_free(sm);
}

static void test_nearest(void **state)
{
	(void)state;
	sm_builder b;
	jitmap_stackmap *sm = sample(0x1000, 0x2000, &b);
	static const struct {
		uint64_t pc;
		int rc;
		int before, after; /* record indexes, -1 for none */
	} cases[] = {
		{0, -ENOENT, -1, -1},
		{0xfff, -ENOENT, -1, -1},
		{0x1000, 0, -1, 0},  /* function start, before its first record */
		{0x1004, 0, 0, 3},   /* at a shared PC: the first record there */
		{0x1008, 0, 0, 3},
		{0x1014, 0, 3, -1},
		{0x1fff, 0, 3, -1},  /* still f0: the function with the greatest address <= pc */
		{0x2000, 0, 4, 5},
		{0x2001, 0, 4, 5},
		{0x2008, 0, 5, -1},
		{UINT64_MAX, 0, 5, -1},
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		const jitmap_record *before = rec(sm, 1), *after = rec(sm, 1);
		const int rc = jitmap_stackmap_nearest(sm, cases[i].pc, &before, &after);
		const jitmap_record *want_before = cases[i].before < 0 ? NULL : rec(sm, (size_t)cases[i].before);
		const jitmap_record *want_after = cases[i].after < 0 ? NULL : rec(sm, (size_t)cases[i].after);
		if (rc != cases[i].rc || before != want_before || after != want_after)
			fail_msg("pc 0x%llx: rc %d before %lld after %lld", (unsigned long long)cases[i].pc,
				 rc, before ? (long long)before->id : -1LL,
				 after ? (long long)after->id : -1LL);
	}
	jitmap_stackmap_free(sm);
}

/* A function whose size is known (from its symbol) owns only [address, address + size]: a
 * PC beyond it is in code without records (a function without a stackmap between two that
 * have one), not "in f0 but not at a record" (issue 10, defect 2). A return address may be
 * the end itself. */
static void test_nearest_bounded_by_size(void **state)
{
	(void)state;
	sm_builder b;
	jitmap_stackmap *sm = sample(0x1000, 0x2000, &b);
	const jitmap_record *before, *after;
	assert_int_equal(jitmap_stackmap_function_size(sm, 0), 0);
	assert_int_equal(jitmap_stackmap_set_function_size(sm, 0, 0x40), 0);
	assert_int_equal(jitmap_stackmap_set_function_size(sm, 2, 0x40), -ERANGE);
	assert_int_equal(jitmap_stackmap_function_size(sm, 0), 0x40);
	assert_int_equal(jitmap_stackmap_function_size(sm, 9), 0);
	assert_int_equal(jitmap_stackmap_nearest(sm, 0x1014, &before, &after), 0);
	assert_ptr_equal(before, rec(sm, 3));
	assert_int_equal(jitmap_stackmap_nearest(sm, 0x1040, &before, &after), 0);
	assert_int_equal(jitmap_stackmap_nearest(sm, 0x1041, &before, &after), -ENOENT);
	assert_null(before);
	assert_null(after);
	assert_int_equal(jitmap_stackmap_nearest(sm, 0x1fff, &before, &after), -ENOENT);
	/* f1's size is unknown: it still reaches every PC above it. */
	assert_int_equal(jitmap_stackmap_nearest(sm, 0x9000, &before, &after), 0);
	/* merge carries sizes to a stackmap that has none. */
	sm_builder b2;
	jitmap_stackmap *other = sample(0x1000, 0x2000, &b2);
	assert_true(jitmap_stackmap_merge(other, sm) >= 0);
	assert_int_equal(jitmap_stackmap_function_size(other, 0), 0x40);
	jitmap_stackmap_free(other);
	jitmap_stackmap_free(sm);
}

/* Relocation (what the ELF layer does per Function Address field) and load bias move every
 * lookup; the index is rebuilt lazily. */
static void test_relocation_and_bias(void **state)
{
	(void)state;
	sm_builder b;
	jitmap_stackmap *sm = sample(0, 0, &b);
	const jitmap_record *before, *after;

	assert_int_equal(jitmap_stackmap_set_function_address(sm, b.functions[0].at, 0x7000), 0);
	assert_int_equal(jitmap_stackmap_set_function_address(sm, b.functions[1].at, 0x9000), 0);
	/* Only Function Address fields can be set. */
	assert_int_equal(jitmap_stackmap_set_function_address(sm, b.functions[1].at + 8, 1), -ENOENT);
	assert_int_equal(jitmap_stackmap_set_function_address(sm, 0, 1), -ENOENT);
	assert_int_equal(jitmap_stackmap_set_function_address(sm, b.size, 1), -ENOENT);

	assert_int_equal(jitmap_stackmap_function(sm, 0)->address, 0x7000);
	assert_int_equal(jitmap_stackmap_function(sm, 0)->raw_address, 0);
	assert_int_equal(ids_at(sm, 4), 0);
	assert_int_equal(ids_at(sm, 0x7004), 101112);
	assert_int_equal(ids_at(sm, 0x9008), 21);
	assert_int_equal(jitmap_record_pc(sm, rec(sm, 5)), 0x9008);
	assert_int_equal(jitmap_stackmap_nearest(sm, 0x8000, &before, &after), 0);
	assert_ptr_equal(before, rec(sm, 3));
	assert_null(after);

	/* Functions may be relocated out of section order. */
	assert_int_equal(jitmap_stackmap_set_function_address(sm, b.functions[1].at, 0x5000), 0);
	assert_int_equal(ids_at(sm, 0x5000), 20);
	assert_int_equal(jitmap_stackmap_nearest(sm, 0x6000, &before, &after), 0);
	assert_ptr_equal(before, rec(sm, 5));
	assert_int_equal(jitmap_stackmap_nearest(sm, 0x7001, &before, &after), 0);
	assert_null(before);
	assert_ptr_equal(after, rec(sm, 0));

	jitmap_stackmap_add_bias(sm, 0x10000);
	assert_int_equal(jitmap_stackmap_function(sm, 0)->address, 0x17000);
	assert_int_equal(jitmap_stackmap_function(sm, 0)->raw_address, 0);
	assert_int_equal(ids_at(sm, 0x7004), 0);
	assert_int_equal(ids_at(sm, 0x17004), 101112);
	assert_int_equal(ids_at(sm, 0x15000), 20);
	jitmap_stackmap_add_bias(sm, 0x10000);
	assert_int_equal(ids_at(sm, 0x27004), 101112);
	/* A bias is added modulo 2^64: "subtracting" one moves addresses back. */
	jitmap_stackmap_add_bias(sm, (uint64_t)-0x20000);
	assert_int_equal(ids_at(sm, 0x7004), 101112);
	assert_int_equal(jitmap_stackmap_nearest(sm, 0x4fff, &before, &after), -ENOENT);
	jitmap_stackmap_free(sm);
}

/* -- Many stackmaps -- */

static void test_index(void **state)
{
	(void)state;
	sm_builder ba, bb;
	jitmap_stackmap *a = sample(0x1000, 0x2000, &ba);
	/* b has one record at a's shared PC 0x1004 and one of its own */
	smb_init(&bb, 3, JITMAP_ORDER_BIG);
	smb_function(&bb, 0x1000, 8);
	smb_record(&bb, 30, 4);
	smb_record(&bb, 31, 0x100);
	sm_bytes s = smb_emit(&bb);
	jitmap_stackmap *b = parse_bytes_ok(&s, JITMAP_ORDER_BIG, JITMAP_ARCH_X86_64);
	sm_bytes_free(&s);

	jitmap_index *idx = jitmap_index_new();
	assert_non_null(idx);
	jitmap_hit hits[8];
	assert_int_equal(jitmap_index_num_records(idx), 0);
	assert_int_equal(jitmap_index_lookup(idx, 0x1004, hits, 8), 0);
	assert_int_equal(jitmap_index_remove(idx, a), -ENOENT);

	assert_int_equal(jitmap_index_add(idx, a), 0);
	assert_int_equal(jitmap_index_add(idx, a), -EEXIST);
	assert_int_equal(jitmap_index_add(idx, b), 0);
	assert_int_equal(jitmap_index_add(idx, b), -EEXIST);
	assert_int_equal(jitmap_index_num_records(idx), 6 + 2);

	/* One PC, two maps: a's records in section order, then b's (maps in the order added). */
	assert_int_equal(jitmap_index_lookup(idx, 0x1004, hits, 8), 4);
	for (size_t i = 0; i < 3; i++) {
		assert_ptr_equal(hits[i].stackmap, a);
		assert_ptr_equal(hits[i].record, rec(a, i));
	}
	assert_ptr_equal(hits[3].stackmap, b);
	assert_ptr_equal(hits[3].record, rec(b, 0));
	assert_int_equal(jitmap_index_lookup(idx, 0x1004, hits, 1), 4);
	assert_ptr_equal(hits[0].record, rec(a, 0));
	assert_int_equal(jitmap_index_lookup(idx, 0x1004, NULL, 0), 4);
	assert_int_equal(jitmap_index_lookup(idx, 0x1100, hits, 8), 1);
	assert_ptr_equal(hits[0].stackmap, b);
	assert_int_equal(hits[0].record->id, 31);
	assert_int_equal(jitmap_index_lookup(idx, 0x2008, hits, 8), 1);
	assert_ptr_equal(hits[0].stackmap, a);
	assert_int_equal(jitmap_index_lookup(idx, 0x1005, hits, 8), 0);

	assert_int_equal(jitmap_index_remove(idx, a), 0);
	assert_int_equal(jitmap_index_remove(idx, a), -ENOENT);
	assert_int_equal(jitmap_index_num_records(idx), 2);
	assert_int_equal(jitmap_index_lookup(idx, 0x1004, hits, 8), 1);
	assert_ptr_equal(hits[0].stackmap, b);
	assert_int_equal(jitmap_index_lookup(idx, 0x2008, hits, 8), 0);

	/* A stackmap relocated while out of the index is found at its new PCs when re-added. */
	jitmap_stackmap_add_bias(a, 0x100000);
	assert_int_equal(jitmap_index_add(idx, a), 0);
	assert_int_equal(jitmap_index_lookup(idx, 0x1004, hits, 8), 1);
	assert_int_equal(jitmap_index_lookup(idx, 0x101004, hits, 8), 3);
	assert_ptr_equal(hits[0].stackmap, a);

	/* ... and one relocated or biased while in the index moves there too. */
	jitmap_stackmap_add_bias(a, 0x100000);
	assert_int_equal(jitmap_index_lookup(idx, 0x101004, hits, 8), 0);
	assert_int_equal(jitmap_index_lookup(idx, 0x201004, hits, 8), 3);
	assert_int_equal(jitmap_stackmap_set_function_address(a, ba.functions[1].at, 0x3000), 0);
	assert_int_equal(jitmap_index_lookup(idx, 0x202008, hits, 8), 0);
	assert_int_equal(jitmap_index_lookup(idx, 0x3008, hits, 8), 1);
	assert_ptr_equal(hits[0].record, rec(a, 5));
	jitmap_stackmap_add_bias(b, 0x10);
	assert_int_equal(jitmap_index_lookup(idx, 0x1014, hits, 8), 1);
	assert_ptr_equal(hits[0].stackmap, b);

	assert_int_equal(jitmap_index_remove(idx, b), 0);
	assert_int_equal(jitmap_index_remove(idx, a), 0);
	assert_int_equal(jitmap_index_num_records(idx), 0);
	assert_int_equal(jitmap_index_lookup(idx, 0x101004, hits, 8), 0);

	jitmap_index_free(idx);
	jitmap_index_free(NULL);
	jitmap_stackmap_free(a);
	jitmap_stackmap_free(b);
}

/* Many maps (past the index's first growth) and removal from the middle. */
static void test_index_many_maps(void **state)
{
	(void)state;
	enum { N = 20 };
	jitmap_stackmap *maps[N];
	jitmap_index *idx = jitmap_index_new();
	for (int i = 0; i < N; i++) {
		sm_builder b;
		smb_init(&b, 3, JITMAP_ORDER_LITTLE);
		smb_function(&b, 0x10000 * (uint64_t)(i + 1), 8);
		smb_record(&b, (uint64_t)i, 0x10);
		sm_bytes s = smb_emit(&b);
		maps[i] = parse_bytes_ok(&s, JITMAP_ORDER_LITTLE, JITMAP_ARCH_UNKNOWN);
		sm_bytes_free(&s);
		assert_int_equal(jitmap_index_add(idx, maps[i]), 0);
	}
	assert_int_equal(jitmap_index_num_records(idx), N);
	for (int i = 0; i < N; i += 3)
		assert_int_equal(jitmap_index_remove(idx, maps[i]), 0);
	for (int i = 0; i < N; i++) {
		jitmap_hit hit;
		const size_t n = jitmap_index_lookup(idx, 0x10000 * (uint64_t)(i + 1) + 0x10, &hit, 1);
		assert_int_equal(n, i % 3 ? 1 : 0);
		if (n)
			assert_ptr_equal(hit.stackmap, maps[i]);
	}
	jitmap_index_free(idx);
	for (int i = 0; i < N; i++)
		jitmap_stackmap_free(maps[i]);
}

/* -- Against brute force -- */

/*
 * Random stackmaps of several sizes (the sizes around 16 straddle the index's first levels),
 * looked up at every record's PC, beside it, at every function's address and past both ends,
 * and compared with a linear scan of the records: what lookup, nearest and jitmap_index must
 * answer whatever layout the index has. Shapes: "dense" puts functions and records close
 * together (many records share a PC, many functions an address), "wide" spreads functions
 * over the 64-bit space (PCs more than 4 GiB apart), "top" puts them at its end.
 */
enum shape { DENSE, WIDE, TOP };

static uint64_t bf_rng;
static uint64_t bf_rnd(void)
{
	bf_rng ^= bf_rng << 13;
	bf_rng ^= bf_rng >> 7;
	bf_rng ^= bf_rng << 17;
	return bf_rng;
}

/* A section of `nrec` records in blobs of at most 32 (the builder's limit). */
static jitmap_stackmap *random_stackmap(size_t nrec, enum shape shape)
{
	sm_bytes all = {0};
	size_t left = nrec;
	do {
		sm_builder b;
		smb_init(&b, 3, JITMAP_ORDER_LITTLE);
		const unsigned nfn = 1 + (unsigned)(bf_rnd() % SMB_MAX_FUNCTIONS);
		size_t in_blob = left < SMB_MAX_RECORDS ? left : 1 + bf_rnd() % SMB_MAX_RECORDS;
		left -= in_blob;
		for (unsigned f = 0; f < nfn; f++) {
			uint64_t at;
			if (shape == DENSE)
				at = 0x1000 + (bf_rnd() % (nrec + 8)) * 8;
			else if (shape == WIDE)
				at = bf_rnd() & ~(uint64_t)0xf;
			else
				at = UINT64_MAX - 0x10000 - (bf_rnd() % (nrec + 8)) * 64;
			smb_function(&b, at, 16);
			/* The last function takes what the others leave. */
			size_t k = f + 1 == nfn ? in_blob : bf_rnd() % (in_blob + 1);
			in_blob -= k;
			for (; k; k--) {
				const uint64_t slots = shape == DENSE ? 8 : 64;
				smb_record(&b, bf_rnd() % 1000, (uint32_t)(bf_rnd() % slots) * 4);
			}
		}
		sm_bytes s = smb_emit(&b);
		sm_bytes_cat(&all, &s, 0);
		sm_bytes_free(&s);
	} while (left);
	jitmap_stackmap *sm = parse_bytes_ok(&all, JITMAP_ORDER_LITTLE, JITMAP_ARCH_X86_64);
	sm_bytes_free(&all);
	assert_int_equal(jitmap_stackmap_num_records(sm), nrec);
	/* Some functions end (sizes bound nearest). */
	for (size_t i = 0; i < jitmap_stackmap_num_functions(sm); i++) {
		const uint64_t size = 1 + bf_rnd() % 0x200;
		if (bf_rnd() % 3 == 0)
			assert_int_equal(jitmap_stackmap_set_function_size(sm, i, size), 0);
	}
	return sm;
}

/* The records at `pc`, in section order, by scanning them all. */
static size_t bf_lookup(const jitmap_stackmap *sm, uint64_t pc, const jitmap_record **out,
			size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < jitmap_stackmap_num_records(sm); i++) {
		const jitmap_record *r = rec(sm, i);
		if (jitmap_record_pc(sm, r) != pc)
			continue;
		if (n < max)
			out[n] = r;
		n++;
	}
	return n;
}

/* nearest as its header says, by scanning every function: the greatest address <= pc (of
 * several at it, the last in section order), bounded by its size; the records before and
 * after pc in it, the first in section order of several at one PC. */
static int bf_nearest(const jitmap_stackmap *sm, uint64_t pc, const jitmap_record **before,
		      const jitmap_record **after)
{
	const jitmap_function *f = NULL;
	size_t fi = 0;
	*before = *after = NULL;
	for (size_t i = 0; i < jitmap_stackmap_num_functions(sm); i++) {
		const jitmap_function *g = jitmap_stackmap_function(sm, i);
		if (g->address <= pc && (!f || g->address >= f->address)) {
			f = g;
			fi = i;
		}
	}
	if (!f)
		return -ENOENT;
	const uint64_t size = jitmap_stackmap_function_size(sm, fi);
	if (size && pc - f->address > size)
		return -ENOENT;
	for (uint64_t k = 0; k < f->record_count; k++) {
		const jitmap_record *r = rec(sm, f->first_record + k);
		const uint64_t rpc = jitmap_record_pc(sm, r);
		if (rpc <= pc && (!*before || rpc > jitmap_record_pc(sm, *before)))
			*before = r;
		if (rpc > pc && (!*after || rpc < jitmap_record_pc(sm, *after)))
			*after = r;
	}
	return 0;
}

/* The PCs worth asking about: every record's and function's, beside them, the ends. */
static size_t bf_queries(const jitmap_stackmap *sm, uint64_t **out)
{
	const size_t nr = jitmap_stackmap_num_records(sm), nf = jitmap_stackmap_num_functions(sm);
	uint64_t *q = malloc((6 * nr + 3 * nf + 8) * sizeof(*q));
	assert_non_null(q);
	size_t n = 0;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < nr; i++) {
		const uint64_t pc = jitmap_record_pc(sm, rec(sm, i));
		lo = pc < lo ? pc : lo;
		hi = pc > hi ? pc : hi;
		q[n++] = pc;
		q[n++] = pc - 1;
		q[n++] = pc + 1;
		q[n++] = pc + 2;
		q[n++] = pc + 4;
		q[n++] = bf_rnd();
	}
	for (size_t i = 0; i < nf; i++) {
		const uint64_t at = jitmap_stackmap_function(sm, i)->address;
		q[n++] = at;
		q[n++] = at - 1;
		q[n++] = at + 0x1000;
	}
	q[n++] = 0;
	q[n++] = 1;
	q[n++] = UINT64_MAX;
	q[n++] = lo - 1; /* below the first record, */
	q[n++] = hi + 1; /* above the last */
	q[n++] = lo + ((uint64_t)1 << 32); /* an offset a narrow index cannot hold */
	q[n++] = lo - ((uint64_t)1 << 32);
	q[n++] = hi - ((uint64_t)1 << 32);
	*out = q;
	return n;
}

static void check_against_brute_force(jitmap_stackmap *sm, jitmap_stackmap *other)
{
	enum { MAX = 8 };
	uint64_t *q;
	const size_t nq = bf_queries(sm, &q);
	jitmap_index *idx = jitmap_index_new();
	assert_non_null(idx);
	assert_int_equal(jitmap_index_add(idx, sm), 0);
	assert_int_equal(jitmap_index_add(idx, other), 0);
	assert_int_equal(jitmap_index_num_records(idx),
			 jitmap_stackmap_num_records(sm) + jitmap_stackmap_num_records(other));
	for (size_t i = 0; i < nq; i++) {
		const uint64_t pc = q[i];
		const jitmap_record *got[MAX], *want[MAX], *gb, *ga, *wb, *wa;
		const size_t n = jitmap_stackmap_lookup(sm, pc, got, MAX);
		const size_t wn = bf_lookup(sm, pc, want, MAX);
		if (n != wn)
			fail_msg("pc 0x%llx: %zu records, want %zu", (unsigned long long)pc, n, wn);
		for (size_t k = 0; k < n && k < MAX; k++)
			if (got[k] != want[k])
				fail_msg("pc 0x%llx: record %zu of %zu is #%td, want #%td",
					 (unsigned long long)pc, k, n, got[k] - rec(sm, 0),
					 want[k] - rec(sm, 0));
		assert_int_equal(jitmap_stackmap_lookup(sm, pc, NULL, 0), wn);
		if (wn) {
			assert_int_equal(jitmap_stackmap_lookup(sm, pc, got, 1), wn);
			assert_ptr_equal(got[0], want[0]);
		}

		const int rc = jitmap_stackmap_nearest(sm, pc, &gb, &ga);
		const int wrc = bf_nearest(sm, pc, &wb, &wa);
		if (rc != wrc || gb != wb || ga != wa)
			fail_msg("pc 0x%llx: nearest %d #%td #%td, want %d #%td #%td",
				 (unsigned long long)pc, rc, gb ? gb - rec(sm, 0) : -1,
				 ga ? ga - rec(sm, 0) : -1, wrc, wb ? wb - rec(sm, 0) : -1,
				 wa ? wa - rec(sm, 0) : -1);

		/* The index: sm's records at pc, then other's, each in section order. */
		jitmap_hit hits[2 * MAX];
		const jitmap_record *wother[MAX];
		const size_t on = bf_lookup(other, pc, wother, MAX);
		const size_t hn = jitmap_index_lookup(idx, pc, hits, 2 * MAX);
		if (hn != wn + on)
			fail_msg("pc 0x%llx: index has %zu records, want %zu + %zu",
				 (unsigned long long)pc, hn, wn, on);
		for (size_t k = 0; k < hn && k < 2 * MAX; k++) {
			const bool mine = k < wn;
			if (mine && k >= MAX)
				continue; /* more than the brute force kept */
			if (!mine && k - wn >= MAX)
				continue;
			assert_ptr_equal(hits[k].stackmap, mine ? sm : other);
			assert_ptr_equal(hits[k].record, mine ? want[k] : wother[k - wn]);
		}
	}
	jitmap_index_free(idx);
	free(q);
}

static void test_against_brute_force(void **state)
{
	(void)state;
	static const size_t sizes[] = {0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 100, 1000};
	const size_t nsizes = ARRAY_LEN(sizes);
	bf_rng = 0x9e3779b97f4a7c15u;
	for (int run = 0; run < 3 * (int)nsizes * 3; run++) {
		const enum shape shape = (enum shape)(run % 3);
		const size_t i = (size_t)run / 3 % nsizes;
		jitmap_stackmap *sm = random_stackmap(sizes[i], shape);
		jitmap_stackmap *other = random_stackmap(sizes[(i + 3) % nsizes], shape);
		check_against_brute_force(sm, other);
		/* A bias moves every PC: the index is rebuilt. */
		jitmap_stackmap_add_bias(sm, (uint64_t)0x40 << (4 * (run % 4)));
		check_against_brute_force(sm, other);
		jitmap_stackmap_free(sm);
		jitmap_stackmap_free(other);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_lookup_across_functions_at_one_address),
		cmocka_unit_test(test_nearest),
		cmocka_unit_test(test_nearest_bounded_by_size),
		cmocka_unit_test(test_relocation_and_bias),
		cmocka_unit_test(test_index),
		cmocka_unit_test(test_index_many_maps),
		cmocka_unit_test(test_against_brute_force),
	};
	return cmocka_run_group_tests_name("index", tests, NULL, NULL);
}
