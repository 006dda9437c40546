/* test_image_target.c: jitmap_image_open_target (an ELF image read from target memory, with
 * and without its stackmap copy), jitmap_image_name_functions and jitmap_stackmap_merge, on
 * the in-memory images the producer API builds (as a JIT registers them); jitmap_image_with_code
 * (the image with its code, as a file for a debugger). */
#define _GNU_SOURCE /* memmem */
#include "unit.h"

#include <gelf.h>

#include "jitmap/producer.h"

#define CODE UINT64_C(0x7f0000001000)
#define IMAGE_AT UINT64_C(0x10000000)

/* -- A target serving one image at IMAGE_AT, counting what is read -- */

struct served {
	const uint8_t *bytes;
	size_t len;
	uint64_t hole_lo, hole_hi; /* image offsets that fail to read */
	size_t bytes_read;
	unsigned reads;
};

static int served_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	struct served *s = ctx;
	if (addr < IMAGE_AT || addr - IMAGE_AT > s->len || len > s->len - (addr - IMAGE_AT)) {
		snprintf(why, why_len, "outside the image");
		return -EFAULT;
	}
	const uint64_t off = addr - IMAGE_AT;
	if (off < s->hole_hi && off + len > s->hole_lo) {
		snprintf(why, why_len, "a hole");
		return -EFAULT;
	}
	memcpy(buf, s->bytes + off, len);
	s->bytes_read += len;
	s->reads++;
	return 0;
}

/* -- The image: two functions, three records; a stackmap big enough to notice -- */

struct built {
	void *stackmap, *image;
	size_t stackmap_size, image_size;
};

/* An image whose first function has `records` records (200: a few KiB, read in one go; 4000:
 * past the 64 KiB up to which an image is read whole). */
static void build_n(struct built *b, uint32_t records)
{
	jitmap_smbuilder *smb = jitmap_smbuilder_new(JITMAP_ORDER_AUTO);
	assert_non_null(smb);
	jitmap_error err;
	const jitmap_location loc = {JITMAP_LOC_REGISTER, 8, 3, 0};
	assert_int_equal(jitmap_smbuilder_add_function(smb, CODE, 16, &err), 0);
	for (uint32_t r = 0; r < records; r++)
		assert_int_equal(jitmap_smbuilder_add_record(smb, r, 4 + r % 700, &loc, 1, NULL, 0, &err),
				 0);
	assert_int_equal(jitmap_smbuilder_add_function(smb, CODE + 0x400, 16, &err), 0);
	assert_int_equal(jitmap_smbuilder_add_record(smb, 999, 8, &loc, 1, NULL, 0, &err), 0);
	assert_int_equal(jitmap_smbuilder_finish(smb, &b->stackmap, &b->stackmap_size), 0);
	jitmap_smbuilder_free(smb);
	const jitmap_jit_function fns[2] = {{"first", CODE, 0x300}, {"second", CODE + 0x400, 0x100}};
	const jitmap_jit_region region = {
		.address = CODE, .size = 0x800, .functions = fns, .num_functions = 2,
		.stackmap = b->stackmap, .stackmap_size = b->stackmap_size,
	};
	assert_int_equal(jitmap_jit_build_image(&region, &b->image, &b->image_size, &err), 0);
}

static void build(struct built *b)
{
	build_n(b, 200);
}

static void unbuild(struct built *b)
{
	free(b->stackmap);
	free(b->image);
}

/* -- open_target -- */

static void test_open_target(void **state)
{
	(void)state;
	struct built b;
	build(&b);
	struct served s = {b.image, b.image_size, 0, 0, 0, 0};
	const jitmap_target t = {.ctx = &s, .read_mem = served_read};
	jitmap_error err;

	/* Whole: the copy parsed, as jitmap_image_open_memory does. */
	jitmap_image *full = jitmap_image_open_target(&t, IMAGE_AT, b.image_size, 0, &err);
	if (!full)
		fail_msg("open_target: %s", err.reason);
	const jitmap_stackmap *copy = jitmap_image_stackmap(full);
	assert_non_null(copy);
	assert_int_equal(jitmap_stackmap_num_records(copy), 201);
	assert_string_equal(jitmap_stackmap_function(copy, 1)->name, "second");
	uint64_t addr, size;
	assert_int_equal(jitmap_image_stackmap_section(full, &addr, &size), 0);
	assert_int_equal(addr, (uint64_t)(uintptr_t)b.stackmap);
	assert_int_equal(size, b.stackmap_size);
	assert_true(s.bytes_read <= b.image_size);

	/* Skipping the stackmap: located, not parsed; a small image is read in one go. */
	s.bytes_read = 0;
	s.reads = 0;
	jitmap_image *skip = jitmap_image_open_target(&t, IMAGE_AT, b.image_size,
						      JITMAP_IMAGE_SKIP_STACKMAP, &err);
	if (!skip)
		fail_msg("open_target skip: %s", err.reason);
	assert_null(jitmap_image_stackmap(skip));
	assert_int_equal(jitmap_image_stackmap_section(skip, &addr, &size), 0);
	assert_int_equal(addr, (uint64_t)(uintptr_t)b.stackmap);
	assert_int_equal(s.reads, 1);
	assert_int_equal(s.bytes_read, b.image_size);
	/* A large one by parts, without its stackmap copy. */
	{
		struct built big;
		build_n(&big, 4000);
		assert_true(big.image_size > 64 * 1024);
		struct served bs = {big.image, big.image_size, 0, 0, 0, 0};
		const jitmap_target bt = {.ctx = &bs, .read_mem = served_read};
		jitmap_image *parts = jitmap_image_open_target(&bt, IMAGE_AT, big.image_size,
							       JITMAP_IMAGE_SKIP_STACKMAP, &err);
		if (!parts)
			fail_msg("open_target big: %s", err.reason);
		assert_true(bs.reads > 1);
		assert_true(bs.bytes_read + big.stackmap_size <= big.image_size);
		assert_string_equal(jitmap_image_symbolize(parts, CODE + 0x410, &(uint64_t){0}),
				    "second");
		jitmap_image_free(parts);
		unbuild(&big);
	}
	uint64_t off;
	assert_string_equal(jitmap_image_symbolize(skip, CODE + 0x410, &off), "second");
	assert_int_equal(off, 0x10);

	/* Name a stackmap read elsewhere (the live bytes) from the image's symbols. */
	jitmap_stackmap *live = parse_ok(b.stackmap, b.stackmap_size, JITMAP_ORDER_AUTO,
					 JITMAP_ARCH_X86_64);
	assert_null(jitmap_stackmap_function(live, 0)->name);
	assert_int_equal(jitmap_image_name_functions(skip, live), 2);
	assert_string_equal(jitmap_stackmap_function(live, 0)->name, "first");
	assert_int_equal(jitmap_image_name_functions(skip, live), 0); /* named already */
	jitmap_stackmap_free(live);

	/* A stackmap section that cannot be read only matters when it is read. */
	const uint8_t *img = b.image;
	const uint8_t *copy_at = memmem(img, b.image_size, b.stackmap, b.stackmap_size);
	assert_non_null(copy_at);
	s.hole_lo = (uint64_t)(copy_at - img);
	s.hole_hi = s.hole_lo + b.stackmap_size;
	jitmap_image *again = jitmap_image_open_target(&t, IMAGE_AT, b.image_size,
						       JITMAP_IMAGE_SKIP_STACKMAP, &err);
	assert_non_null(again);
	jitmap_image_free(again);
	errno = 0;
	assert_null(jitmap_image_open_target(&t, IMAGE_AT, b.image_size, 0, &err));
	assert_int_equal(errno, EFAULT);
	assert_contains(err.reason, ".llvm_stackmaps at 0x");
	assert_contains(err.reason, "is not readable: a hole");
	assert_int_equal(err.offset, s.hole_lo);

	jitmap_image_free(full);
	jitmap_image_free(skip);
	unbuild(&b);
}

/* Truncated, garbage, unreadable: NULL with a reason, never a crash. */
static void test_open_target_hostile(void **state)
{
	(void)state;
	struct built b;
	build(&b);
	struct served s = {b.image, b.image_size, 0, 0, 0, 0};
	const jitmap_target t = {.ctx = &s, .read_mem = served_read};
	jitmap_error err;

	assert_null(jitmap_image_open_target(&t, IMAGE_AT, b.image_size / 2,
					     JITMAP_IMAGE_SKIP_STACKMAP, &err));
	assert_contains(err.reason, "truncated");

	uint8_t junk[300];
	memset(junk, 0x5a, sizeof(junk));
	memcpy(junk, "\177ELF", 4);
	struct served g = {junk, sizeof(junk), 0, 0, 0, 0};
	const jitmap_target tg = {.ctx = &g, .read_mem = served_read};
	assert_null(jitmap_image_open_target(&tg, IMAGE_AT, sizeof(junk), 0, &err));
	assert_int_not_equal(err.code, 0);

	assert_null(jitmap_image_open_target(&t, IMAGE_AT + 0x100000, 64, 0, &err));
	assert_int_equal(err.code, -EFAULT);
	assert_contains(err.reason, "the ELF header at 0x10100000 (64 bytes) is not readable");

	assert_null(jitmap_image_open_target(&t, IMAGE_AT, 16, 0, &err)); /* shorter than a header */
	assert_null(jitmap_image_open_target(&t, IMAGE_AT, b.image_size, 0x80, &err));
	assert_int_equal(err.code, -EINVAL);
	const jitmap_target none = {0};
	assert_null(jitmap_image_open_target(&none, IMAGE_AT, b.image_size, 0, &err));
	unbuild(&b);
}

/* -- with_code: the image as a file, its code filled in -- */

/* A target with the image's code at CODE (0x800 bytes of a pattern) and nothing else. */
static uint8_t code_bytes[0x800];

static int code_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	(void)ctx;
	if (addr < CODE || addr - CODE > sizeof(code_bytes) || len > sizeof(code_bytes) - (addr - CODE)) {
		snprintf(why, why_len, "not code");
		return -EFAULT;
	}
	memcpy(buf, code_bytes + (addr - CODE), len);
	return 0;
}

/* Section `name` of the ELF image `bytes`, through libelf. */
static bool section_of(const void *bytes, size_t len, const char *name, GElf_Shdr *out)
{
	Elf *elf = elf_memory((char *)bytes, len);
	assert_non_null(elf);
	size_t shstrndx;
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	bool found = false;
	for (Elf_Scn *scn = NULL; !found && (scn = elf_nextscn(elf, scn));) {
		const char *n;
		found = gelf_getshdr(scn, out) && (n = elf_strptr(elf, shstrndx, out->sh_name)) &&
			!strcmp(n, name);
	}
	elf_end(elf);
	return found;
}

static void test_with_code(void **state)
{
	(void)state;
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	for (size_t i = 0; i < sizeof(code_bytes); i++)
		code_bytes[i] = (uint8_t)(i * 7 + 1);
	struct built b;
	build(&b);
	const jitmap_target t = {.read_mem = code_read};
	jitmap_error err;
	GElf_Shdr sh;
	assert_true(section_of(b.image, b.image_size, ".text", &sh));
	assert_int_equal(sh.sh_type, SHT_NOBITS); /* the producer leaves the code in the process */

	/* Asked for its length: nothing read, nothing written. */
	size_t need = 0;
	assert_int_equal(jitmap_image_with_code(b.image, b.image_size, &t, NULL, &need, &err), -ENOSPC);
	assert_true(need >= b.image_size + sizeof(code_bytes));
	size_t small = need - 1;
	uint8_t *out = malloc(need);
	assert_non_null(out);
	memset(out, 0xee, need);
	assert_int_equal(jitmap_image_with_code(b.image, b.image_size, &t, out, &small, &err), -ENOSPC);
	assert_int_equal(small, need);
	assert_int_equal(out[0], 0xee);

	/* Filled: .text holds the code, at an offset of its alignment; the rest is unchanged. */
	size_t got = need;
	assert_int_equal(jitmap_image_with_code(b.image, b.image_size, &t, out, &got, &err), 1);
	assert_int_equal(got, need);
	assert_true(section_of(out, got, ".text", &sh));
	assert_int_equal(sh.sh_type, SHT_PROGBITS);
	assert_int_equal(sh.sh_addr, CODE);
	assert_int_equal(sh.sh_size, sizeof(code_bytes));
	assert_true(sh.sh_offset >= b.image_size);
	assert_int_equal(sh.sh_offset % (sh.sh_addralign ? sh.sh_addralign : 1), 0);
	assert_memory_equal(out + sh.sh_offset, code_bytes, sizeof(code_bytes));
	GElf_Shdr before, after;
	assert_true(section_of(b.image, b.image_size, ".llvm_stackmaps", &before));
	assert_true(section_of(out, got, ".llvm_stackmaps", &after));
	assert_memory_equal(&before, &after, sizeof(before));
	/* libjitmap reads the copy as the image: same symbols, same stackmap. */
	jitmap_image *img = jitmap_image_open_memory(out, got, &err);
	if (!img)
		fail_msg("open the copy: %s", err.reason);
	assert_string_equal(jitmap_image_symbolize(img, CODE + 0x410, &(uint64_t){0}), "second");
	assert_int_equal(jitmap_stackmap_num_records(jitmap_image_stackmap(img)), 201);
	jitmap_image_free(img);

	/* Again on the copy: nothing left to fill, the copy copied as it is. */
	uint8_t *again = malloc(got);
	size_t again_len = got;
	assert_int_equal(jitmap_image_with_code(out, got, &t, again, &again_len, &err), 0);
	assert_int_equal(again_len, got);
	assert_memory_equal(again, out, got);
	free(again);

	/* Code that cannot be read: the target's reason, at the section's header. */
	const jitmap_target elsewhere = {.read_mem = served_read, .ctx = &(struct served){0}};
	got = need;
	assert_int_equal(jitmap_image_with_code(b.image, b.image_size, &elsewhere, out, &got, &err),
			 -EFAULT);
	assert_contains(err.reason, "code at 0x7f0000001000 (2048 bytes) is not readable");
	assert_true(err.offset > 0);

	/* Not an image, one cut before its section headers, bad arguments. */
	uint8_t junk[300];
	memset(junk, 0x5a, sizeof(junk));
	got = need;
	assert_int_equal(jitmap_image_with_code(junk, sizeof(junk), &t, out, &got, &err), -EINVAL);
	assert_int_equal(jitmap_image_with_code(b.image, 100, &t, out, &got, &err), -EINVAL);
	assert_contains(err.reason, "section header table");
	assert_int_equal(jitmap_image_with_code(b.image, b.image_size, NULL, out, &got, &err), -EINVAL);
	assert_int_equal(jitmap_image_with_code(b.image, b.image_size, &t, out, NULL, &err), -EINVAL);
	free(out);
	unbuild(&b);
}

/* -- merge -- */

static void test_merge(void **state)
{
	(void)state;
	sm_builder a, z, other;
	smb_init(&a, 3, JITMAP_ORDER_LITTLE);
	smb_function(&a, 0x1000, 16);
	smb_record(&a, 1, 4);
	smb_function(&a, 0x2000, 16);
	smb_record(&a, 2, 4);
	/* The same section before relocation: addresses 0, as MCJIT's live copy at registration. */
	smb_init(&z, 3, JITMAP_ORDER_LITTLE);
	smb_function(&z, 0, 16);
	smb_record(&z, 1, 4);
	smb_function(&z, 0x2000, 16);
	smb_record(&z, 2, 4);
	smb_init(&other, 3, JITMAP_ORDER_LITTLE);
	smb_function(&other, 0, 16);
	smb_record(&other, 1, 4);
	sm_bytes sa = smb_emit(&a), sz = smb_emit(&z), so = smb_emit(&other);
	jitmap_stackmap *from = parse_bytes_ok(&sa, JITMAP_ORDER_LITTLE, JITMAP_ARCH_X86_64);
	jitmap_stackmap *sm = parse_bytes_ok(&sz, JITMAP_ORDER_LITTLE, JITMAP_ARCH_X86_64);
	jitmap_stackmap *odd = parse_bytes_ok(&so, JITMAP_ORDER_LITTLE, JITMAP_ARCH_X86_64);
	assert_int_equal(jitmap_stackmap_set_function_name(from, 0, "f"), 0);
	assert_int_equal(jitmap_stackmap_set_function_name(from, 1, "g"), 0);
	assert_int_equal(jitmap_stackmap_set_function_name(sm, 1, "mine"), 0);

	const jitmap_record *r[2];
	assert_int_equal(jitmap_stackmap_lookup(sm, 4, r, 2), 1); /* at 0 + 4 before */
	assert_int_equal(jitmap_stackmap_merge(odd, from), -EINVAL);
	assert_int_equal(jitmap_stackmap_merge(sm, from), 1);
	assert_int_equal(jitmap_stackmap_function(sm, 0)->address, 0x1000);
	assert_string_equal(jitmap_stackmap_function(sm, 0)->name, "f");
	assert_string_equal(jitmap_stackmap_function(sm, 1)->name, "mine"); /* kept */
	/* The PC index follows the new address. */
	assert_int_equal(jitmap_stackmap_lookup(sm, 4, r, 2), 0);
	assert_int_equal(jitmap_stackmap_lookup(sm, 0x1004, r, 2), 1);
	assert_int_equal(r[0]->id, 1);
	assert_int_equal(jitmap_stackmap_merge(sm, from), 0);

	jitmap_stackmap_free(from);
	jitmap_stackmap_free(sm);
	jitmap_stackmap_free(odd);
	sm_bytes_free(&sa);
	sm_bytes_free(&sz);
	sm_bytes_free(&so);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_target),
		cmocka_unit_test(test_open_target_hostile),
		cmocka_unit_test(test_with_code),
		cmocka_unit_test(test_merge),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
