/* fuzz_elf: libFuzzer target for jitmap_image_open_memory (ELF through libelf, relocations of
 * the stackmap section, symbols) and jitmap_image_with_code (the image's copy with its code).
 *
 * An image that opens has its stackmap walked like fuzz_parse's, its symbols looked up at
 * and around every function and record, and the same again under a load bias. Every input
 * is also copied with its code, from a target whose memory is a byte pattern.
 */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void symbolize_around(const jitmap_image *img, uint64_t addr)
{
	static const int64_t deltas[] = {-1, 0, 1, 4096};
	for (size_t i = 0; i < sizeof(deltas) / sizeof(deltas[0]); i++) {
		uint64_t off = UINT64_MAX;
		const char *name = jitmap_image_symbolize(img, addr + (uint64_t)deltas[i], &off);
		if (name) {
			CHECK(name[0] != '\0');
			CHECK(off <= addr + (uint64_t)deltas[i]);
		}
		(void)jitmap_image_symbolize(img, addr + (uint64_t)deltas[i], NULL);
	}
}

static void walk_image(jitmap_image *img)
{
	jitmap_stackmap *sm = jitmap_image_stackmap(img);
	uint64_t addr, size;
	int rc = jitmap_image_stackmap_section(img, &addr, &size);
	CHECK(sm ? rc == 0 : rc == -ENOENT);
	symbolize_around(img, 0);
	symbolize_around(img, UINT64_MAX);
	const jitmap_layouts *l = jitmap_image_layouts(img);
	CHECK(!(l && jitmap_image_layouts_problem(img)));
	if (l)
		fuzz_walk_layouts(l);
	if (!sm)
		return;
	CHECK(jitmap_stackmap_arch(sm) == jitmap_image_arch(img));
	fuzz_walk_stackmap(sm);
	const size_t nf = jitmap_stackmap_num_functions(sm), nr = jitmap_stackmap_num_records(sm);
	for (size_t i = 0; i < nf && i < 32; i++)
		symbolize_around(img, jitmap_stackmap_function(sm, i)->address);
	for (size_t i = 0; i < nr && i < 32; i++)
		symbolize_around(img, jitmap_record_pc(sm, jitmap_stackmap_record(sm, i)));
}

static int pattern_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	(void)ctx;
	(void)why;
	(void)why_len;
	for (size_t i = 0; i < len; i++)
		((uint8_t *)buf)[i] = (uint8_t)(addr + i);
	return 0;
}

static void with_code(const uint8_t *data, size_t size)
{
	const jitmap_target t = {.read_mem = pattern_read};
	jitmap_error err;
	size_t need = 0;
	int rc = jitmap_image_with_code(data, size, &t, NULL, &need, &err);
	if (rc != -ENOSPC) {
		CHECK(rc < 0 && err.code == rc);
		check_string(err.reason, sizeof(err.reason));
		return;
	}
	CHECK(need >= size);
	if (need > (1u << 20))
		return;
	uint8_t *out = malloc(need ? need : 1);
	if (!out)
		return;
	size_t got = need;
	rc = jitmap_image_with_code(data, size, &t, out, &got, &err);
	CHECK(rc >= 0 && got == need);
	CHECK(rc > 0 || got == size);
	if (rc == 0)
		CHECK(!memcmp(out, data, size));
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	with_code(data, size);
	jitmap_error err;
	jitmap_image *img = jitmap_image_open_memory(data, size, &err);
	if (!img) {
		CHECK(err.code < 0 && errno == -err.code);
		check_string(err.reason, sizeof(err.reason));
		CHECK(err.reason[0] != '\0');
		return 0;
	}
	(void)jitmap_image_elf_type(img);
	(void)jitmap_image_elf_machine(img);
	(void)jitmap_arch_name(jitmap_image_arch(img));
	walk_image(img);
	jitmap_image_set_load_bias(img, UINT64_C(0x7f0000000000));
	walk_image(img);
	jitmap_image_set_load_bias(img, 0);
	walk_image(img);
	jitmap_image_free(img);
	return 0;
}
