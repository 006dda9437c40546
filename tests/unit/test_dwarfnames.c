/* test_dwarfnames.c: functions named in an image's DWARF alone (Mono's xdebug images: no
 * function symbol, a DW_TAG_subprogram per method). A small shared object is compiled here
 * with -g (cc, gcc or clang-14: the test is skipped without one, or without objcopy), and its
 * function symbols stripped with objcopy, .debug_info kept. Checked against the unstripped
 * object's own symbols: the stripped image names the same functions at the same addresses
 * and sizes from its DWARF (JITMAP_SYMBOL_FROM_DWARF), symbolizes a PC inside one, and the
 * process model's jitmap_process_code_at names the function and its range; likewise with
 * its .text emptied as Mono's is (the code then lies outside every section, and the DWARF's
 * ranges are the image's code), handed in and as a JIT entry of a scan, lazy or not (a lazy
 * scan's glance must open such an image: its sections say it has no code). Controls: the unstripped image keeps its symbol table's
 * names (no DWARF duplicate), and an object (ET_REL) whose .debug_info still has its
 * relocations names nothing from it (its addresses are not filled in). */
#include "unit.h"

#include <elf.h>
#include <unistd.h>

#include "jitmap/process.h"

static const char source[] =
	"__attribute__((noinline, used)) static int dwn_alpha(int x) { return x * 3 + 1; }\n"
	"__attribute__((noinline, used)) static int dwn_beta(int x)\n"
	"{ int s = 0; for (int i = 0; i < x; i++) s += dwn_alpha(i) ^ i; return s; }\n"
	"__attribute__((visibility(\"hidden\"))) int dwn_gamma(int x) { return dwn_beta(x) + 7; }\n";

static const char *const names[] = {"dwn_alpha", "dwn_beta", "dwn_gamma"};

struct built {
	char dir[64];
	sm_bytes full, stripped, object;
};

static bool run(const char *cmd)
{
	return system(cmd) == 0;
}

/* The first compiler found, or NULL. */
static const char *compiler(void)
{
	static const char *const cc[] = {"cc", "gcc", "clang-14", "clang"};
	char cmd[96];
	for (size_t i = 0; i < ARRAY_LEN(cc); i++) {
		snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", cc[i]);
		if (run(cmd))
			return cc[i];
	}
	return NULL;
}

static bool build(struct built *b)
{
	const char *cc = compiler();
	if (!cc || !run("command -v objcopy >/dev/null 2>&1"))
		return false;
	memset(b, 0, sizeof(*b));
	snprintf(b->dir, sizeof(b->dir), "/tmp/jitmap-dwarfnames-XXXXXX");
	assert_non_null(mkdtemp(b->dir));
	char path[128], cmd[1024];
	snprintf(path, sizeof(path), "%s/f.c", b->dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(source, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && %s -g -O1 -fPIC -shared -nostdlib -o full.so f.c && "
		 "objcopy -N dwn_alpha -N dwn_beta -N dwn_gamma full.so stripped.so && "
		 "%s -g -O1 -c -o f.o f.c && objcopy -N dwn_alpha -N dwn_beta -N dwn_gamma f.o "
		 "stripped.o",
		 b->dir, cc, cc);
	assert_true(run(cmd));
	snprintf(path, sizeof(path), "%s/full.so", b->dir);
	b->full = sm_read_file(path);
	snprintf(path, sizeof(path), "%s/stripped.so", b->dir);
	b->stripped = sm_read_file(path);
	snprintf(path, sizeof(path), "%s/stripped.o", b->dir);
	b->object = sm_read_file(path);
	return true;
}

static void built_free(struct built *b)
{
	char cmd[128];
	sm_bytes_free(&b->full);
	sm_bytes_free(&b->stripped);
	sm_bytes_free(&b->object);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", b->dir);
	(void)!system(cmd);
}

#define NEED_BUILT(b)                                                                      \
	do {                                                                               \
		if (!build(b)) {                                                           \
			print_message("no C compiler or no objcopy: skipped\n");           \
			skip();                                                            \
		}                                                                          \
	} while (0)

/* The symbol `name` of `img`: its index, or -1. */
static long find(const jitmap_image *img, const char *name, jitmap_image_symbol_info *out)
{
	for (size_t i = 0; i < jitmap_image_num_symbols(img); i++) {
		out->sz = sizeof(*out);
		assert_int_equal(jitmap_image_symbol(img, i, out), 0);
		if (!strcmp(out->name, name))
			return (long)i;
	}
	return -1;
}

static jitmap_image *open_bytes(const sm_bytes *b)
{
	jitmap_error err;
	jitmap_image *img = jitmap_image_open_memory(b->data, b->len, &err);
	if (!img)
		fail_msg("open: %s", err.reason);
	return img;
}

static int zero_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	(void)ctx;
	(void)addr;
	(void)why;
	(void)why_len;
	memset(buf, 0, len);
	return 0;
}

/* jitmap_process_code_at inside `s` (from the unstripped image) in an image handed in. */
static void process_names(const sm_bytes *image, const jitmap_image_symbol_info *s,
			  const char *name)
{
	jitmap_target t = {NULL, NULL, zero_read};
	jitmap_process *p = jitmap_process_new(&t, NULL);
	assert_non_null(p);
	uint64_t id;
	assert_int_equal(jitmap_process_add_image(p, image->data, image->len, "test image", &id), 0);
	assert_null(jitmap_process_image_problem(p, id, 0));
	jitmap_code_info c;
	memset(&c, 0, sizeof(c));
	assert_int_equal(jitmap_process_code_at(p, s->address + s->size / 2, &c), 0);
	assert_non_null(c.function);
	assert_string_equal(c.function, name);
	assert_int_equal(c.function_lo, s->address);
	assert_int_equal(c.function_hi, s->address + s->size);
	jitmap_process_free(p);
}

static void test_named_from_dwarf(void **state)
{
	(void)state;
	struct built b;
	NEED_BUILT(&b);
	jitmap_image *full = open_bytes(&b.full), *stripped = open_bytes(&b.stripped);
	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		jitmap_image_symbol_info truth, got;
		/* The control: the symbol table names it, and nothing else does. */
		assert_true(find(full, names[i], &truth) >= 0);
		assert_false(truth.flags & JITMAP_SYMBOL_FROM_DWARF);
		assert_true(truth.size > 0);
		/* Stripped, the DWARF names it at the same place. */
		assert_true(find(stripped, names[i], &got) >= 0);
		assert_true(got.flags & JITMAP_SYMBOL_FROM_DWARF);
		assert_int_equal(got.address, truth.address);
		assert_int_equal(got.size, truth.size);
		uint64_t off = 0;
		const char *at = jitmap_image_symbolize(stripped, truth.address + truth.size - 1, &off);
		assert_non_null(at);
		assert_string_equal(at, names[i]);
		assert_int_equal(off, truth.size - 1);
		process_names(&b.stripped, &truth, names[i]);
	}
	/* The unstripped image: its symbols once each, none from DWARF. */
	for (size_t i = 0; i < jitmap_image_num_symbols(full); i++) {
		jitmap_image_symbol_info s = {.sz = sizeof(s)};
		assert_int_equal(jitmap_image_symbol(full, i, &s), 0);
		assert_false(s.flags & JITMAP_SYMBOL_FROM_DWARF);
	}
	jitmap_image_free(full);
	jitmap_image_free(stripped);
	built_free(&b);
}

/* Mono's shape: .text empty, the code outside every section, named in DWARF alone. */
static void test_code_outside_sections(void **state)
{
	(void)state;
	struct built b;
	NEED_BUILT(&b);
	jitmap_image *full = open_bytes(&b.full);
	Elf64_Shdr *text = sm_elf64_section(&b.stripped, ".text");
	text->sh_size = 0;
	jitmap_image *img = open_bytes(&b.stripped);
	for (size_t i = 0; i < ARRAY_LEN(names); i++) {
		jitmap_image_symbol_info truth, got;
		assert_true(find(full, names[i], &truth) >= 0);
		assert_true(find(img, names[i], &got) >= 0);
		assert_int_equal(got.address, truth.address);
		/* Its range is one of the image's code ranges. */
		bool in_code = false;
		for (size_t k = 0; k < jitmap_image_num_code_ranges(img); k++) {
			const jitmap_image_range *r = jitmap_image_code_range(img, k);
			in_code |= r->lo <= truth.address && truth.address + truth.size <= r->hi;
		}
		assert_true(in_code);
		process_names(&b.stripped, &truth, names[i]);
	}
	jitmap_image_free(full);
	jitmap_image_free(img);
	built_free(&b);
}

/* The fake process of a JIT scan: a descriptor, one entry, its image; any other address
 * reads as zeros (the code the staleness check samples). */
#define DESC UINT64_C(0x10000)
#define ENTRY UINT64_C(0x10100)
#define IMAGE UINT64_C(0x7e0000000000)

struct jit_world {
	uint8_t desc[32], entry[32];
	const sm_bytes *image;
};

static int world_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	const struct jit_world *w = ctx;
	const struct {
		uint64_t at;
		const uint8_t *bytes;
		size_t len;
	} r[] = {{DESC, w->desc, sizeof(w->desc)},
		 {ENTRY, w->entry, sizeof(w->entry)},
		 {IMAGE, w->image->data, w->image->len}};
	for (size_t i = 0; i < ARRAY_LEN(r); i++)
		if (addr >= r[i].at && addr - r[i].at < r[i].len) {
			if (len > r[i].len - (addr - r[i].at))
				break;
			memcpy(buf, r[i].bytes + (addr - r[i].at), len);
			return 0;
		}
	return zero_read(ctx, addr, buf, len, why, why_len);
}

/* A JIT entry of Mono's shape (.text empty, small enough for a lazy scan's glance) found
 * by the code the DWARF names, in a scan that opens its images and in a lazy one. */
static void test_jit_entry_scan(void **state)
{
	(void)state;
	struct built b;
	NEED_BUILT(&b);
	jitmap_image *full = open_bytes(&b.full);
	Elf64_Shdr *text = sm_elf64_section(&b.stripped, ".text");
	text->sh_size = 0;
	struct jit_world w = {.image = &b.stripped};
	sm_put(w.desc, 1, 4, JITMAP_ORDER_LITTLE);         /* version */
	sm_put(w.desc + 4, 1, 4, JITMAP_ORDER_LITTLE);     /* action: register */
	sm_put(w.desc + 8, ENTRY, 8, JITMAP_ORDER_LITTLE); /* relevant entry */
	sm_put(w.desc + 16, ENTRY, 8, JITMAP_ORDER_LITTLE); /* first entry */
	sm_put(w.entry + 16, IMAGE, 8, JITMAP_ORDER_LITTLE);
	sm_put(w.entry + 24, b.stripped.len, 8, JITMAP_ORDER_LITTLE);
	jitmap_image_symbol_info truth;
	assert_true(find(full, "dwn_beta", &truth) >= 0);
	for (unsigned flags = 0; flags <= JITMAP_PROCESS_LAZY; flags += JITMAP_PROCESS_LAZY) {
		jitmap_target t = {&w, NULL, world_read};
		JITMAP_OPTS(jitmap_process_opts, opts, .flags = flags);
		jitmap_process *p = jitmap_process_new(&t, &opts);
		assert_non_null(p);
		assert_int_equal(jitmap_process_scan_begin(p), 0);
		assert_int_equal(jitmap_process_scan_descriptor(p, DESC, "the test"), 0);
		assert_int_equal(jitmap_process_scan_end(p), 0);
		jitmap_code_info c;
		memset(&c, 0, sizeof(c));
		assert_int_equal(jitmap_process_code_at(p, truth.address + 1, &c), 0);
		assert_non_null(c.function);
		assert_string_equal(c.function, "dwn_beta");
		assert_int_equal(c.function_lo, truth.address);
		assert_int_equal(c.function_hi, truth.address + truth.size);
		jitmap_process_free(p);
	}
	jitmap_image_free(full);
	built_free(&b);
}

/* An object's .debug_info with its relocations: its addresses are 0 until they are applied. */
static void test_relocated_dwarf_left_alone(void **state)
{
	(void)state;
	struct built b;
	NEED_BUILT(&b);
	jitmap_image *img = open_bytes(&b.object);
	assert_true(jitmap_image_has_debug_info(img));
	for (size_t i = 0; i < jitmap_image_num_symbols(img); i++) {
		jitmap_image_symbol_info s = {.sz = sizeof(s)};
		assert_int_equal(jitmap_image_symbol(img, i, &s), 0);
		assert_false(s.flags & JITMAP_SYMBOL_FROM_DWARF);
	}
	jitmap_image_free(img);
	built_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named_from_dwarf),
		cmocka_unit_test(test_code_outside_sections),
		cmocka_unit_test(test_jit_entry_scan),
		cmocka_unit_test(test_relocated_dwarf_left_alone),
	};
	return cmocka_run_group_tests_name("dwarfnames", tests, NULL, NULL);
}
