#define _GNU_SOURCE /* memmem */
/* test_layout.c: deopt layouts, written by libjitmap-producer (jitmap_jit_encode_layouts, the
 * `.jitmap_deopt` section of a registered image) and read back by libjitmap
 * (jitmap_layouts_parse, jitmap_image_layouts, the process model's problems); what each
 * refuses, and that no malformed section is read past its end. */
#include "unit.h"

#include "jitmap/process.h"
#include "jitmap/producer.h"

#define CODE UINT64_C(0x7f0000001000)

/* Two layouts: record 300 in any function (two frames: an inlined callee and its caller),
 * record 300 in "special" (one frame), record 7 with a numeric method and no bci. */
static const jitmap_vslot inner_locals[] = {{2, "x"}, {3, "y"}};
static const jitmap_vslot inner_stack[] = {{4, NULL}};
static const jitmap_vslot outer_locals[] = {{5, "x"}, {6, "acc"}};
static const jitmap_vframe_layout frames_300[] = {
	{.method = {JITMAP_VREF_NAME, 0, "Demo.inner"},
	 .bci = {JITMAP_VREF_DEOPT, 1, NULL},
	 .locals = inner_locals, .num_locals = 2, .stack = inner_stack, .num_stack = 1},
	{.method = {JITMAP_VREF_DEOPT, 0, NULL},
	 .bci = {JITMAP_VREF_NUMBER, 12, NULL},
	 .locals = outer_locals, .num_locals = 2},
};
static const jitmap_vframe_layout frames_special[] = {
	{.method = {JITMAP_VREF_NAME, 0, "Demo.inner"}, .bci = {JITMAP_VREF_NUMBER, 0, NULL}},
};
static const jitmap_vframe_layout frames_7[] = {
	{.method = {JITMAP_VREF_NUMBER, 0x1234567890abcdefull, NULL}},
};
static const jitmap_deopt_layout layouts[] = {
	{300, NULL, frames_300, 2},
	{300, "special", frames_special, 1},
	{7, NULL, frames_7, 1},
};

static jitmap_layouts *encode_parse(jitmap_byte_order order, size_t *len_out)
{
	void *bytes;
	size_t len;
	jitmap_error err;
	assert_int_equal(jitmap_jit_encode_layouts(layouts, ARRAY_LEN(layouts), order, &bytes, &len,
						   &err), 0);
	assert_int_equal(len % 8, 0);
	jitmap_layouts *l = jitmap_layouts_parse(bytes, len, order, &err);
	if (!l)
		fail_msg("parse: offset 0x%llx: %s", (unsigned long long)err.offset, err.reason);
	if (len_out)
		*len_out = len;
	free(bytes);
	return l;
}

static void check_round_trip(jitmap_byte_order order)
{
	jitmap_layouts *l = encode_parse(order, NULL);
	assert_int_equal(jitmap_layouts_count(l), 3);
	assert_null(jitmap_layouts_get(l, 3));

	const jitmap_deopt_layout *d = jitmap_layouts_find(l, 300, "elsewhere");
	assert_non_null(d);
	assert_null(d->function);
	assert_int_equal(d->num_frames, 2);
	const jitmap_vframe_layout *f = &d->frames[0];
	assert_int_equal(f->method.kind, JITMAP_VREF_NAME);
	assert_string_equal(f->method.name, "Demo.inner");
	assert_int_equal(f->bci.kind, JITMAP_VREF_DEOPT);
	assert_int_equal(f->bci.number, 1);
	assert_int_equal(f->num_locals, 2);
	assert_int_equal(f->locals[1].index, 3);
	assert_string_equal(f->locals[1].name, "y");
	assert_int_equal(f->num_stack, 1);
	assert_int_equal(f->stack[0].index, 4);
	assert_null(f->stack[0].name);
	f = &d->frames[1];
	assert_int_equal(f->method.kind, JITMAP_VREF_DEOPT);
	assert_int_equal(f->method.number, 0);
	assert_int_equal(f->bci.kind, JITMAP_VREF_NUMBER);
	assert_int_equal(f->bci.number, 12);
	assert_string_equal(f->locals[1].name, "acc");
	assert_int_equal(f->num_stack, 0);

	/* A layout for the function wins over one for any function; no function: any. */
	d = jitmap_layouts_find(l, 300, "special");
	assert_non_null(d);
	assert_string_equal(d->function, "special");
	assert_int_equal(d->num_frames, 1);
	assert_int_equal(d->frames[0].bci.kind, JITMAP_VREF_NUMBER);
	assert_null(jitmap_layouts_find(l, 300, NULL)->function);

	d = jitmap_layouts_find(l, 7, "f");
	assert_non_null(d);
	assert_int_equal(d->frames[0].method.kind, JITMAP_VREF_NUMBER);
	assert_true(d->frames[0].method.number == 0x1234567890abcdefull);
	assert_int_equal(d->frames[0].bci.kind, JITMAP_VREF_NONE);
	assert_null(jitmap_layouts_find(l, 8, NULL));
	jitmap_layouts_free(l);
}

static void test_round_trip(void **state)
{
	(void)state;
	check_round_trip(JITMAP_ORDER_LITTLE);
	check_round_trip(JITMAP_ORDER_BIG);
}

/* The bytes differ by order, and read in the other order they are refused (the version). */
static void test_byte_orders(void **state)
{
	(void)state;
	void *le, *be;
	size_t nle, nbe;
	jitmap_error err;
	assert_int_equal(jitmap_jit_encode_layouts(layouts, 3, JITMAP_ORDER_LITTLE, &le, &nle, &err), 0);
	assert_int_equal(jitmap_jit_encode_layouts(layouts, 3, JITMAP_ORDER_BIG, &be, &nbe, &err), 0);
	assert_int_equal(nle, nbe);
	assert_memory_not_equal(le, be, nle);
	assert_null(jitmap_layouts_parse(le, nle, JITMAP_ORDER_BIG, &err));
	assert_contains(err.reason, "version 256");
	free(le);
	free(be);
}

/* "Demo.inner" is stored once though three frames name it (with "x" twice). */
static void test_strings_once(void **state)
{
	(void)state;
	size_t len;
	jitmap_layouts *l = encode_parse(JITMAP_ORDER_AUTO, &len);
	jitmap_layouts_free(l);
	/* header 24 + 3 layouts * 24 + 4 frames * 32 + 6 slots * 8 + strings */
	const size_t strings = sizeof("Demo.inner") + sizeof("x") + sizeof("y") + sizeof("acc") +
			       sizeof("special");
	assert_int_equal(len, (24 + 72 + 128 + 40 + strings + 7) / 8 * 8);
}

static void refuse(const jitmap_deopt_layout *l, size_t n, uint64_t offset, const char *words)
{
	void *bytes = (void *)1;
	size_t len = 0;
	jitmap_error err;
	assert_int_equal(jitmap_jit_encode_layouts(l, n, JITMAP_ORDER_AUTO, &bytes, &len, &err),
			 -EINVAL);
	assert_int_equal(err.code, -EINVAL);
	assert_int_equal(err.offset, offset);
	assert_contains(err.reason, words);
	assert_ptr_equal(bytes, (void *)1);
}

static void test_encode_refuses(void **state)
{
	(void)state;
	const jitmap_vframe_layout no_method[] = {{.bci = {JITMAP_VREF_NUMBER, 1, NULL}}};
	const jitmap_vframe_layout empty_name[] = {{.method = {JITMAP_VREF_NAME, 0, ""}}};
	const jitmap_vframe_layout big_index[] = {
		{.method = {JITMAP_VREF_NUMBER, 1, NULL}, .bci = {JITMAP_VREF_DEOPT, 1ull << 32, NULL}}};
	const jitmap_vframe_layout bad_kind[] = {{.method = {(jitmap_vref_kind)9, 0, NULL}}};
	const jitmap_vframe_layout named_bci[] = {
		{.method = {JITMAP_VREF_NUMBER, 1, NULL}, .bci = {JITMAP_VREF_NAME, 0, "b"}}};
	const jitmap_vframe_layout no_slots[] = {{.method = {JITMAP_VREF_NUMBER, 1, NULL}, .num_locals = 2}};
	const jitmap_deopt_layout cases[][2] = {
		{{1, NULL, frames_7, 1}, {2, NULL, NULL, 0}},
		{{1, NULL, frames_7, 1}, {2, NULL, no_method, 1}},
		{{1, NULL, frames_7, 1}, {2, NULL, empty_name, 1}},
		{{1, NULL, frames_7, 1}, {2, NULL, big_index, 1}},
		{{1, NULL, frames_7, 1}, {2, NULL, bad_kind, 1}},
		{{1, NULL, frames_7, 1}, {2, NULL, named_bci, 1}},
		{{1, NULL, frames_7, 1}, {2, NULL, no_slots, 1}},
		{{1, NULL, frames_7, 1}, {2, "", frames_7, 1}},
		{{1, "f", frames_7, 1}, {1, "f", frames_7, 1}},
	};
	const char *words[] = {"no frames", "no method", "method name is empty", "past 2^32",
			       "kind 9 unknown", "a bci has no name", "slot count without slots",
			       "empty function name", "layout 1 repeats layout 0 (record 1 in f)"};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++)
		refuse(cases[i], 2, 1, words[i]);
	/* The same record for a function and for any function is not a repeat. */
	const jitmap_deopt_layout two[] = {{1, "f", frames_7, 1}, {1, NULL, frames_7, 1}};
	void *bytes;
	size_t len;
	jitmap_error err;
	assert_int_equal(jitmap_jit_encode_layouts(two, 2, JITMAP_ORDER_AUTO, &bytes, &len, &err), 0);
	free(bytes);
	/* No layouts: a valid, empty section. */
	assert_int_equal(jitmap_jit_encode_layouts(NULL, 0, JITMAP_ORDER_AUTO, &bytes, &len, &err), 0);
	jitmap_layouts *l = jitmap_layouts_parse(bytes, len, JITMAP_ORDER_AUTO, &err);
	assert_non_null(l);
	assert_int_equal(jitmap_layouts_count(l), 0);
	assert_null(jitmap_layouts_find(l, 1, NULL));
	jitmap_layouts_free(l);
	free(bytes);
}

/* -- Malformed sections -- */

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); } /* host order */
static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }

static void parse_refuses(const uint8_t *b, size_t len, uint64_t offset, const char *words)
{
	jitmap_error err;
	errno = 0;
	jitmap_layouts *l = jitmap_layouts_parse(b, len, JITMAP_ORDER_AUTO, &err);
	if (l)
		fail_msg("parsed, wanted \"%s\"", words);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(err.offset, offset);
	assert_contains(err.reason, words);
}

static void test_parse_refuses(void **state)
{
	(void)state;
	void *bytes;
	size_t len;
	jitmap_error err;
	assert_int_equal(jitmap_jit_encode_layouts(layouts, 3, JITMAP_ORDER_AUTO, &bytes, &len, &err), 0);
	uint8_t *b = malloc(len);

	/* Every prefix shorter than the tables is refused, never read past. The strings are
	 * last: the exact size of the tables plus strings is the first that parses. */
	const size_t strings = sizeof("Demo.inner") + sizeof("x") + sizeof("y") + sizeof("acc") +
			       sizeof("special");
	const size_t need = 24 + 72 + 128 + 40 + strings;
	for (size_t n = 0; n < need; n++) {
		uint8_t *cut = malloc(n ? n : 1); /* exactly n bytes: ASan sees any overread */
		memcpy(cut, bytes, n);
		jitmap_layouts *l = jitmap_layouts_parse(cut, n, JITMAP_ORDER_AUTO, &err);
		if (l)
			fail_msg("a %zu-byte prefix parsed", n);
		free(cut);
	}
	jitmap_layouts *l = jitmap_layouts_parse(bytes, need, JITMAP_ORDER_AUTO, &err);
	assert_non_null(l);
	jitmap_layouts_free(l);
	parse_refuses(bytes, 23, 0, "shorter than the 24-byte header");
	parse_refuses(bytes, need - 1, 8, "truncated");

#define FRESH() memcpy(b, bytes, len)
	FRESH();
	b[0] = 'X';
	parse_refuses(b, len, 0, "magic");
	FRESH();
	put16(b + 4, 2);
	parse_refuses(b, len, 4, "version 2");
	FRESH();
	put16(b + 6, 12);
	parse_refuses(b, len, 6, "header size 12");
	FRESH();
	put32(b + 8, 0xffffffffu); /* layouts: no 32-bit count can overflow the sum */
	parse_refuses(b, len, 8, "truncated");
	/* Layout 0 (at 24): its frames past the 4 frames, then no frames, then a function
	 * string ref past the table. */
	FRESH();
	put32(b + 24 + 12, 3);
	parse_refuses(b, len, 24 + 12, "past the frames");
	FRESH();
	put32(b + 24 + 16, 0);
	parse_refuses(b, len, 24 + 12, "at least one frame");
	FRESH();
	put32(b + 24 + 8, 4000);
	parse_refuses(b, len, 24 + 8, "not a non-empty string");
	/* Frame 0 (at 96): method kind 0 and 7, bci kind 3, method name ref past the table, a
	 * deopt index past 2^32, slots past the end. */
	const size_t f0 = 24 + 72;
	FRESH();
	b[f0 + 16] = 0;
	parse_refuses(b, len, f0 + 16, "method kind 0");
	FRESH();
	b[f0 + 16] = 7;
	parse_refuses(b, len, f0 + 16, "method kind 7");
	FRESH();
	b[f0 + 17] = 3;
	parse_refuses(b, len, f0 + 17, "bci kind 3");
	FRESH();
	put32(b + f0, (uint32_t)strings + 1);
	parse_refuses(b, len, f0, "not a string");
	FRESH();
	put32(b + f0 + 8 + 4, 1); /* bci's high half: index 2^32 + 1 (little-endian host) */
	if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
		parse_refuses(b, len, f0 + 8, "past 2^32");
	FRESH();
	put32(b + f0 + 20, 5);
	parse_refuses(b, len, f0 + 20, "past the 5 slots");
	/* Slot 0 (at 224): a name with no NUL before the end of the table. */
	const size_t s0 = f0 + 128;
	FRESH();
	b[need - 1] = 'z'; /* the last string loses its NUL */
	put32(b + s0 + 4, (uint32_t)(strings - sizeof("special") + 1));
	parse_refuses(b, need, s0 + 4, "not a string");
	/* Two layouts for record 300 in any function. */
	FRESH();
	put32(b + 24 + 24 + 8, 0);
	parse_refuses(b, len, 24 + 24, "layout 1: a second layout for record 300 in any function");
#undef FRESH
	free(b);
	free(bytes);
}

/* Every single-byte change of a valid section parses or is refused; none reads out of bounds
 * (the sanitizer build runs this). */
static void test_parse_every_byte(void **state)
{
	(void)state;
	void *bytes;
	size_t len;
	jitmap_error err;
	assert_int_equal(jitmap_jit_encode_layouts(layouts, 3, JITMAP_ORDER_AUTO, &bytes, &len, &err), 0);
	uint8_t *b = malloc(len);
	const uint8_t values[] = {0, 1, 3, 0x7f, 0xff};
	size_t parsed = 0, refused = 0;
	for (size_t i = 0; i < len; i++)
		for (size_t v = 0; v < ARRAY_LEN(values); v++) {
			memcpy(b, bytes, len);
			b[i] = values[v];
			jitmap_layouts *l = jitmap_layouts_parse(b, len, JITMAP_ORDER_AUTO, &err);
			if (l) {
				/* Whatever parsed is consistent: every string ends inside. */
				for (size_t k = 0; k < jitmap_layouts_count(l); k++) {
					const jitmap_deopt_layout *d = jitmap_layouts_get(l, k);
					for (uint32_t j = 0; j < d->num_frames; j++)
						if (d->frames[j].method.kind == JITMAP_VREF_NAME)
							assert_true(strlen(d->frames[j].method.name) < len);
				}
				parsed++;
			} else {
				refused++;
			}
			jitmap_layouts_free(l);
		}
	assert_true(parsed > 0 && refused > 0);
	free(b);
	free(bytes);
}

/* -- In a registered image -- */

struct built {
	void *stackmap, *image;
	size_t stackmap_size, image_size;
};

static int build(struct built *b, const jitmap_deopt_layout *l, size_t n, jitmap_error *err)
{
	jitmap_smbuilder *smb = jitmap_smbuilder_new(JITMAP_ORDER_AUTO);
	const jitmap_location loc = {JITMAP_LOC_REGISTER, 8, 3, 0};
	assert_int_equal(jitmap_smbuilder_add_function(smb, CODE, 16, err), 0);
	assert_int_equal(jitmap_smbuilder_add_record(smb, 300, 8, &loc, 1, NULL, 0, err), 0);
	assert_int_equal(jitmap_smbuilder_add_function(smb, CODE + 0x100, 16, err), 0);
	assert_int_equal(jitmap_smbuilder_add_record(smb, 7, 8, &loc, 1, NULL, 0, err), 0);
	assert_int_equal(jitmap_smbuilder_finish(smb, &b->stackmap, &b->stackmap_size), 0);
	jitmap_smbuilder_free(smb);
	static const jitmap_jit_function fns[] = {{"plain", CODE, 0x100}, {"special", CODE + 0x100, 0x100}};
	const jitmap_jit_region region = {
		.address = CODE, .size = 0x200, .functions = fns, .num_functions = 2,
		.stackmap = b->stackmap, .stackmap_size = b->stackmap_size,
	};
	JITMAP_OPTS(jitmap_jit_region_opts, opts, .layouts = l, .num_layouts = n);
	b->image = NULL;
	return jitmap_jit_build_image_opts(&region, &opts, &b->image, &b->image_size, err);
}

static void test_image(void **state)
{
	(void)state;
	struct built b;
	jitmap_error err;
	assert_int_equal(build(&b, layouts, 3, &err), 0);
	jitmap_image *img = jitmap_image_open_memory(b.image, b.image_size, &err);
	assert_non_null(img);
	assert_null(jitmap_image_layouts_problem(img));
	const jitmap_layouts *l = jitmap_image_layouts(img);
	assert_non_null(l);
	assert_int_equal(jitmap_layouts_count(l), 3);
	assert_string_equal(jitmap_layouts_find(l, 300, "special")->frames[0].method.name,
			    "Demo.inner");
	/* The stackmap reads as before. */
	assert_int_equal(jitmap_stackmap_num_records(jitmap_image_stackmap(img)), 2);
	jitmap_image_free(img);
	free(b.image);
	free(b.stackmap);

	/* Without layouts, no section: the image is byte-identical to jitmap_jit_build_image's. */
	assert_int_equal(build(&b, NULL, 0, &err), 0);
	img = jitmap_image_open_memory(b.image, b.image_size, &err);
	assert_null(jitmap_image_layouts(img));
	assert_null(jitmap_image_layouts_problem(img));
	jitmap_image_free(img);
	free(b.image);
	free(b.stackmap);
}

static void test_image_refuses(void **state)
{
	(void)state;
	struct built b;
	jitmap_error err;
	const jitmap_deopt_layout stray[] = {{300, NULL, frames_7, 1}, {301, NULL, frames_7, 1}};
	assert_int_equal(build(&b, stray, 2, &err), -EINVAL);
	assert_int_equal(err.offset, 1);
	assert_contains(err.reason, "layout 1: record 301 is not in the region's stackmap");
	assert_null(b.image);
	free(b.stackmap);
	const jitmap_deopt_layout elsewhere[] = {{300, "gone", frames_7, 1}};
	assert_int_equal(build(&b, elsewhere, 1, &err), -EINVAL);
	assert_contains(err.reason, "function gone is not one of the region's");
	free(b.stackmap);
	const jitmap_deopt_layout bad[] = {{300, NULL, NULL, 0}};
	assert_int_equal(build(&b, bad, 1, &err), -EINVAL);
	assert_contains(err.reason, "no frames");
	free(b.stackmap);
}

static int no_memory(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	(void)ctx, (void)addr, (void)buf, (void)len;
	snprintf(why, why_len, "no memory");
	return -EFAULT;
}

/* A malformed section costs the layouts, not the image: the process model says why. */
static void test_image_malformed(void **state)
{
	(void)state;
	struct built b;
	jitmap_error err;
	assert_int_equal(build(&b, layouts, 3, &err), 0);
	uint8_t *img_bytes = b.image;
	uint8_t *magic = memmem(img_bytes, b.image_size, "JMDL", 4);
	assert_non_null(magic);
	put16(magic + 4, 9); /* version 9 */
	jitmap_image *img = jitmap_image_open_memory(b.image, b.image_size, &err);
	assert_non_null(img);
	assert_null(jitmap_image_layouts(img));
	assert_contains(jitmap_image_layouts_problem(img), ".jitmap_deopt (file offset 0x");
	assert_contains(jitmap_image_layouts_problem(img), "): offset 0x4: version 9");
	assert_non_null(jitmap_image_stackmap(img));
	jitmap_image_free(img);

	const jitmap_target t = {.read_mem = no_memory};
	jitmap_process *p = jitmap_process_new(&t, NULL);
	assert_non_null(p);
	uint64_t id;
	assert_int_equal(jitmap_process_add_image(p, b.image, b.image_size, "JIT image 1", &id), 0);
	assert_contains(jitmap_process_image_problem(p, id, 0),
			"JIT image 1: .jitmap_deopt (file offset 0x");
	assert_int_equal(jitmap_process_num_layout_images(p), 0); /* malformed: none */
	jitmap_process_free(p);
	free(b.image);
	free(b.stackmap);
}

/* The process counts the images that carry layouts, as they come and go. */
static void test_process_counts(void **state)
{
	(void)state;
	struct built with, without;
	jitmap_error err;
	assert_int_equal(build(&with, layouts, 3, &err), 0);
	assert_int_equal(build(&without, NULL, 0, &err), 0);
	const jitmap_target t = {.read_mem = no_memory};
	jitmap_process *p = jitmap_process_new(&t, NULL);
	uint64_t a, b, c;
	assert_int_equal(jitmap_process_num_layout_images(p), 0);
	assert_int_equal(jitmap_process_add_image(p, without.image, without.image_size, "a", &a), 0);
	assert_int_equal(jitmap_process_num_layout_images(p), 0);
	assert_int_equal(jitmap_process_add_image(p, with.image, with.image_size, "b", &b), 0);
	assert_int_equal(jitmap_process_add_image(p, with.image, with.image_size, "c", &c), 0);
	assert_int_equal(jitmap_process_num_layout_images(p), 2);
	assert_int_equal(jitmap_process_remove_image(p, b), 0);
	jitmap_process_recheck(p); /* frees what was removed */
	assert_int_equal(jitmap_process_num_layout_images(p), 1);
	assert_int_equal(jitmap_process_remove_image(p, c), 0);
	jitmap_process_recheck(p);
	assert_int_equal(jitmap_process_num_layout_images(p), 0);
	assert_int_equal(jitmap_process_num_layout_images(NULL), 0);
	jitmap_process_free(p);
	free(with.image);
	free(with.stackmap);
	free(without.image);
	free(without.stackmap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_byte_orders),
		cmocka_unit_test(test_strings_once),
		cmocka_unit_test(test_encode_refuses),
		cmocka_unit_test(test_parse_refuses),
		cmocka_unit_test(test_parse_every_byte),
		cmocka_unit_test(test_image),
		cmocka_unit_test(test_image_refuses),
		cmocka_unit_test(test_image_malformed),
		cmocka_unit_test(test_process_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
