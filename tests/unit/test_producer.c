/* test_producer.c: registration of JIT code (producer/producer.c, libjitmap-producer).
 *
 * The image must read back through jitmap_image_open_memory, libelf and `readelf -a` (no
 * warnings) with sections at runtime addresses; bad regions must be refused with a clear reason
 * and no change to the descriptor, also with 10,000 entries registered (compared entry by
 * entry with a snapshot); and the descriptor, which a debugger may read at any stop, must be a
 * well-formed list with the right action_flag and relevant_entry at every notice, through
 * 10,000 functions registered in batches and one by one, 10,000 one-function entries,
 * unregistered in mixed order, and through four threads registering and unregistering at once.
 */
#include "unit.h"

#include <gelf.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "jitmap/perfmap.h"
#include "jitmap/producer.h"
#include "internal.h"

/* -- The GDB JIT interface, as a debugger reads it (gdb/jit.h) -- */

struct jit_code_entry {
	struct jit_code_entry *next_entry;
	struct jit_code_entry *prev_entry;
	const char *symfile_addr;
	uint64_t symfile_size;
};

struct jit_descriptor {
	uint32_t version;
	uint32_t action_flag;
	struct jit_code_entry *relevant_entry;
	struct jit_code_entry *first_entry;
};

extern struct jit_descriptor __jit_debug_descriptor;

enum { JIT_NOACTION = 0, JIT_REGISTER_FN = 1, JIT_UNREGISTER_FN = 2 };

/* Walk the list both ways and check every link. Returns NULL and the entry count in `*count`,
 * or what is wrong. Sets `*found` when `want` is in the list. No cmocka calls: the observer
 * runs this on other threads. */
static const char *walk_list(const struct jit_code_entry *want, int *found, size_t *count)
{
	static __thread char why[160];
	const struct jit_descriptor *d = &__jit_debug_descriptor;
	if (d->version != 1)
		return "descriptor version is not 1";
	size_t n = 0;
	const struct jit_code_entry *prev = NULL, *e = d->first_entry, *last = NULL;
	*found = 0;
	for (; e; prev = e, e = e->next_entry) {
		if (e->prev_entry != prev) {
			snprintf(why, sizeof(why), "entry %zu: prev_entry %p, expected %p", n,
				 (void *)e->prev_entry, (void *)prev);
			return why;
		}
		if (!e->symfile_addr || e->symfile_size < sizeof(Elf64_Ehdr) ||
		    memcmp(e->symfile_addr, ELFMAG, SELFMAG)) {
			snprintf(why, sizeof(why), "entry %zu: no ELF image", n);
			return why;
		}
		if (e == want)
			*found = 1;
		last = e;
		if (++n > 10000000)
			return "the list does not end (a cycle)";
	}
	size_t back = 0;
	for (e = last; e; e = e->prev_entry)
		if (++back > n)
			break;
	if (back != n) {
		snprintf(why, sizeof(why), "%zu entries forward, %zu backward", n, back);
		return why;
	}
	*count = n;
	return NULL;
}

/* The number of entries; fails the test on a broken list. */
static size_t check_list(void)
{
	int found;
	size_t n = 0;
	const char *why = walk_list(NULL, &found, &n);
	if (why)
		fail_msg("descriptor list: %s", why);
	return n;
}

/* The observer runs at every notice, under the registration lock, where a debugger stops. */
static struct {
	size_t notices, registers, unregisters;
	size_t full_every; /* walk the whole list at every Nth notice (1: always) */
	int yield;         /* give other threads a chance to race with the notice */
	int failed;
	char why[200];
} obs;

static void observe(void)
{
	const struct jit_descriptor *d = &__jit_debug_descriptor;
	const struct jit_code_entry *e = d->relevant_entry;
	if (obs.yield)
		sched_yield(); /* without the lock, another thread would now change the list */
	obs.notices++;
	if (!e) {
		snprintf(obs.why, sizeof(obs.why), "notice %zu: relevant_entry is NULL", obs.notices);
		obs.failed = 1;
		return;
	}
	/* The entry's image must still be readable at its unregister notice (ASan would catch a
	 * read of freed memory here). */
	if (memcmp(e->symfile_addr, ELFMAG, SELFMAG)) {
		snprintf(obs.why, sizeof(obs.why), "notice %zu: entry image unreadable", obs.notices);
		obs.failed = 1;
	}
	if (d->action_flag == JIT_REGISTER_FN) {
		obs.registers++;
		/* linked at the head */
		if (d->first_entry != e || e->prev_entry) {
			snprintf(obs.why, sizeof(obs.why), "notice %zu: new entry not at the head",
				 obs.notices);
			obs.failed = 1;
		}
	} else if (d->action_flag == JIT_UNREGISTER_FN) {
		obs.unregisters++;
		/* unlinked: its neighbours point past it */
		if (d->first_entry == e || (e->prev_entry && e->prev_entry->next_entry == e) ||
		    (e->next_entry && e->next_entry->prev_entry == e)) {
			snprintf(obs.why, sizeof(obs.why), "notice %zu: entry still linked",
				 obs.notices);
			obs.failed = 1;
		}
	} else {
		snprintf(obs.why, sizeof(obs.why), "notice %zu: action_flag %u", obs.notices,
			 d->action_flag);
		obs.failed = 1;
	}
	if (obs.full_every && obs.notices % obs.full_every == 0) {
		int found;
		size_t n;
		const char *why = walk_list(e, &found, &n);
		if (why) {
			snprintf(obs.why, sizeof(obs.why), "notice %zu: %s", obs.notices, why);
			obs.failed = 1;
		} else if (found != (d->action_flag == JIT_REGISTER_FN)) {
			snprintf(obs.why, sizeof(obs.why), "notice %zu: entry %s the list",
				 obs.notices, found ? "still in" : "not in");
			obs.failed = 1;
		}
	}
}

static int setup(void **state)
{
	(void)state;
	memset(&obs, 0, sizeof(obs));
	obs.full_every = 1;
	jitmap__jit_observer = observe;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	jitmap__jit_observer = NULL;
	if (obs.failed)
		fail_msg("observer: %s", obs.why);
	/* Every test leaves the descriptor empty and at rest. */
	assert_null(__jit_debug_descriptor.first_entry);
	assert_null(__jit_debug_descriptor.relevant_entry);
	assert_int_equal(__jit_debug_descriptor.action_flag, JIT_NOACTION);
	return 0;
}

static void assert_at_rest(void)
{
	assert_null(__jit_debug_descriptor.relevant_entry);
	assert_int_equal(__jit_debug_descriptor.action_flag, JIT_NOACTION);
	if (obs.failed)
		fail_msg("observer: %s", obs.why);
}

/* -- Fixtures: a fake code region, and a stackmap for it -- */

static _Alignas(16) uint8_t code[1 << 16];
#define CODE ((uint64_t)(uintptr_t)code)

struct blob {
	void *bytes;
	size_t len;
};

/* One function at `fn_addr` with one record (ID 77) at `record_offset`, in byte order `order`. */
static struct blob make_stackmap_in(jitmap_byte_order order, uint64_t fn_addr,
				    uint32_t record_offset)
{
	jitmap_smbuilder *b = jitmap_smbuilder_new(order);
	assert_non_null(b);
	const jitmap_location l[] = {{REG, 8, 3, 0}, {INDIRECT, 8, 7, 16}};
	assert_int_equal(jitmap_smbuilder_add_function(b, fn_addr, 24, NULL), 0);
	assert_int_equal(jitmap_smbuilder_add_record(b, 77, record_offset, l, 2, NULL, 0, NULL), 0);
	void *p;
	size_t n;
	assert_int_equal(jitmap_smbuilder_finish(b, &p, &n), 0);
	jitmap_smbuilder_free(b);
	return (struct blob){p, n};
}

static struct blob make_stackmap(uint64_t fn_addr, uint32_t record_offset)
{
	return make_stackmap_in(JITMAP_ORDER_AUTO, fn_addr, record_offset);
}

/* A well-formed stackmap for the same code, in the byte order the host does not use: the
 * producer parses in the host's order only, so this must be refused as malformed. */
static struct blob make_foreign_stackmap(uint64_t fn_addr, uint32_t record_offset)
{
	const jitmap_byte_order foreign = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
						  ? JITMAP_ORDER_LITTLE
						  : JITMAP_ORDER_BIG;
	return make_stackmap_in(foreign, fn_addr, record_offset);
}

/* -- Reading the image back -- */

struct sect {
	GElf_Shdr sh;
	const void *data;
	int found;
};

static struct sect find_section(const void *img, size_t len, const char *name)
{
	struct sect s = {0};
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	Elf *elf = elf_memory((char *)(uintptr_t)img, len);
	assert_non_null(elf);
	size_t shstrndx;
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		assert_non_null(gelf_getshdr(scn, &sh));
		const char *n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name)) {
			s.sh = sh;
			s.found = 1;
			s.data = sh.sh_type == SHT_NOBITS ? NULL : (const uint8_t *)img + sh.sh_offset;
		}
	}
	elf_end(elf);
	return s;
}

/* `readelf -a` must print no warning. Skipped (passes) without readelf. */
static void assert_readelf_clean(const void *img, size_t len)
{
	if (system("readelf --version >/dev/null 2>&1") != 0)
		return;
	char path[] = "/tmp/jitmap-test-producer-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, img, len), (ssize_t)len);
	close(fd);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "readelf -a -W %s 2>&1 >/dev/null", path);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[512];
	int warned = 0;
	while (fgets(line, sizeof(line), p)) {
		fprintf(stderr, "readelf: %s", line);
		warned = 1;
	}
	assert_int_equal(pclose(p), 0);
	unlink(path);
	assert_false(warned);
}

/* -- The image -- */

static void test_image_contents(void **state)
{
	(void)state;
	const jitmap_jit_function fns[] = {
		{"alpha", CODE + 0x100, 0x40},
		{"beta", CODE, 0x100},   /* out of address order: allowed */
		{"gamma", CODE + 0x140, 0x10}, /* adjacent to alpha */
	};
	struct blob sm = make_stackmap(CODE + 0x100, 0x20);
	static const uint8_t eh_frame[] = {0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78,
					   0x10, 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0, 0, 0, 0, 0};
	const jitmap_jit_region r = {
		.address = CODE, .size = 0x200, .functions = fns, .num_functions = 3,
		.stackmap = sm.bytes, .stackmap_size = sm.len,
		.eh_frame = eh_frame, .eh_frame_size = sizeof(eh_frame),
	};
	void *img;
	size_t len;
	jitmap_error err;
	assert_int_equal(jitmap_jit_build_image(&r, &img, &len, &err), 0);

	/* Through jitmap's own ELF layer. */
	jitmap_image *im = jitmap_image_open_memory(img, len, &err);
	if (!im)
		fail_msg("image: %s at %llu", err.reason, (unsigned long long)err.offset);
	assert_int_equal(jitmap_image_elf_type(im), 1 /* ET_REL */);
	assert_int_equal(jitmap_image_arch(im), jitmap_arch_from_elf_machine(
							 ((const Elf64_Ehdr *)img)->e_machine));
	assert_int_not_equal(jitmap_image_arch(im), JITMAP_ARCH_UNKNOWN);
	uint64_t off;
	assert_string_equal(jitmap_image_symbolize(im, CODE, &off), "beta");
	assert_int_equal(off, 0);
	assert_string_equal(jitmap_image_symbolize(im, CODE + 0xff, &off), "beta");
	assert_int_equal(off, 0xff);
	assert_string_equal(jitmap_image_symbolize(im, CODE + 0x100, &off), "alpha");
	assert_string_equal(jitmap_image_symbolize(im, CODE + 0x13f, &off), "alpha");
	assert_string_equal(jitmap_image_symbolize(im, CODE + 0x140, &off), "gamma");
	assert_null(jitmap_image_symbolize(im, CODE + 0x150, &off));
	uint64_t sm_addr, sm_size;
	assert_int_equal(jitmap_image_stackmap_section(im, &sm_addr, &sm_size), 0);
	assert_int_equal(sm_addr, (uintptr_t)sm.bytes); /* the live copy */
	assert_int_equal(sm_size, sm.len);
	const jitmap_stackmap *s = jitmap_image_stackmap(im);
	assert_non_null(s);
	assert_string_equal(jitmap_stackmap_function(s, 0)->name, "alpha");
	const jitmap_record *rec;
	assert_int_equal(jitmap_stackmap_lookup(s, CODE + 0x120, &rec, 1), 1);
	assert_int_equal(rec->id, 77);
	jitmap_image_free(im);

	/* Through libelf: the sections at their runtime addresses. */
	struct sect text = find_section(img, len, ".text");
	assert_true(text.found);
	assert_int_equal(text.sh.sh_type, SHT_NOBITS);
	assert_int_equal(text.sh.sh_addr, CODE);
	assert_int_equal(text.sh.sh_size, 0x200);
	assert_int_equal(text.sh.sh_flags, SHF_ALLOC | SHF_EXECINSTR);
	struct sect smap = find_section(img, len, ".llvm_stackmaps");
	assert_true(smap.found);
	assert_int_equal(smap.sh.sh_type, SHT_PROGBITS);
	assert_int_equal(smap.sh.sh_flags, SHF_ALLOC);
	assert_int_equal(smap.sh.sh_addr, (uintptr_t)sm.bytes);
	assert_memory_equal(smap.data, sm.bytes, sm.len);
	struct sect eh = find_section(img, len, ".eh_frame");
	assert_true(eh.found);
	assert_int_equal(eh.sh.sh_addr, (uintptr_t)eh_frame);
	assert_int_equal(eh.sh.sh_size, sizeof(eh_frame));
	assert_memory_equal(eh.data, eh_frame, sizeof(eh_frame));
	assert_readelf_clean(img, len);

	free(img);
	free(sm.bytes);
}

/* Without the optional parts, the sections are absent; with many functions all are named. */
static void test_image_minimal_and_large(void **state)
{
	(void)state;
	const jitmap_jit_function one = {"only", CODE + 3, 1};
	const jitmap_jit_region r = {.address = CODE + 3, .size = 1, .functions = &one,
				     .num_functions = 1};
	void *img;
	size_t len;
	assert_int_equal(jitmap_jit_build_image(&r, &img, &len, NULL), 0);
	assert_false(find_section(img, len, ".llvm_stackmaps").found);
	assert_false(find_section(img, len, ".eh_frame").found);
	assert_int_equal(find_section(img, len, ".text").sh.sh_addralign, 1); /* odd address */
	jitmap_image *im = jitmap_image_open_memory(img, len, NULL);
	assert_non_null(im);
	assert_null(jitmap_image_stackmap(im));
	assert_string_equal(jitmap_image_symbolize(im, CODE + 3, NULL), "only");
	jitmap_image_free(im);
	assert_readelf_clean(img, len);
	free(img);

	enum { N = 5000 };
	jitmap_jit_function *fns = calloc(N, sizeof(*fns));
	char (*names)[16] = calloc(N, 16);
	assert_non_null(fns);
	assert_non_null(names);
	for (size_t i = 0; i < N; i++) {
		snprintf(names[i], 16, "fn_%zu", i);
		fns[i] = (jitmap_jit_function){names[i], CODE + 12 * (N - 1 - i), 12};
	}
	const jitmap_jit_region big = {.address = CODE, .size = 12 * N, .functions = fns,
				       .num_functions = N};
	assert_int_equal(jitmap_jit_build_image(&big, &img, &len, NULL), 0);
	im = jitmap_image_open_memory(img, len, NULL);
	assert_non_null(im);
	for (size_t i = 0; i < N; i++) {
		uint64_t off;
		assert_string_equal(jitmap_image_symbolize(im, fns[i].address + 11, &off), names[i]);
		assert_int_equal(off, 11);
	}
	jitmap_image_free(im);
	assert_readelf_clean(img, len);
	free(img);
	free(fns);
	free(names);
}

/* -- Refusals -- */

/* Each bad region: build_image and register both refuse it with the reason, and the
 * descriptor is untouched (no notice, same list). */
static void test_bad_regions(void **state)
{
	(void)state;
	const jitmap_jit_function good[] = {{"a", CODE, 16}, {"b", CODE + 16, 16}};
	struct blob sm_ok = make_stackmap(CODE + 16, 16);  /* at the end */
	struct blob sm_out = make_stackmap(CODE + 32, 0);  /* past it */
	struct blob sm_pc = make_stackmap(CODE + 16, 17);  /* PC past it */
	struct blob sm_low = make_stackmap(CODE - 8, 0);
	struct blob sm_foreign = make_foreign_stackmap(CODE + 16, 16);
	uint8_t bad_version[32] = {4};
	uint8_t truncated[40];
	memcpy(truncated, sm_ok.bytes, sizeof(truncated));

	static const char *const empty_name = "";
	jitmap_jit_function f_noname[] = {{NULL, CODE, 4}};
	jitmap_jit_function f_empty[] = {{"a", CODE, 4}, {empty_name, CODE + 4, 4}};
	jitmap_jit_function f_zero[] = {{"a", CODE, 0}};
	jitmap_jit_function f_before[] = {{"a", CODE - 1, 4}};
	jitmap_jit_function f_after[] = {{"a", CODE, 4}, {"b", CODE + 30, 4}};
	jitmap_jit_function f_past[] = {{"a", CODE + 32, 1}};
	jitmap_jit_function f_huge[] = {{"a", CODE + 4, UINT64_MAX}};
	jitmap_jit_function f_overlap[] = {{"a", CODE + 8, 8}, {"b", CODE, 9}};
	jitmap_jit_function f_dup[] = {{"a", CODE, 4}, {"x", CODE + 8, 4}, {"b", CODE, 4}};
	jitmap_jit_function f_inside[] = {{"outer", CODE, 32}, {"inner", CODE + 8, 4}};

	const struct {
		jitmap_jit_region r;
		uint64_t offset;
		const char *reason;
	} cases[] = {
		{{CODE, 0, good, 2, NULL, 0, NULL, 0}, 0, "the region is empty"},
		{{UINT64_MAX - 8, 16, good, 2, NULL, 0, NULL, 0}, 0, "wraps"},
		{{CODE, 32, good, 0, NULL, 0, NULL, 0}, 0, "no functions"},
		{{CODE, 32, NULL, 2, NULL, 0, NULL, 0}, 0, "no functions"},
		{{CODE, 32, f_noname, 1, NULL, 0, NULL, 0}, 0, "function 0 has no name"},
		{{CODE, 32, f_empty, 2, NULL, 0, NULL, 0}, 1, "function 1 has no name"},
		{{CODE, 32, f_zero, 1, NULL, 0, NULL, 0}, 0, "function 0 (a) is empty"},
		{{CODE, 32, f_before, 1, NULL, 0, NULL, 0}, 0, "function 0 (a) at"},
		{{CODE, 32, f_after, 2, NULL, 0, NULL, 0}, 1, "is not inside the region"},
		{{CODE, 32, f_past, 1, NULL, 0, NULL, 0}, 0, "is not inside the region"},
		{{CODE, 32, f_huge, 1, NULL, 0, NULL, 0}, 0, "is not inside the region"},
		{{CODE, 32, f_overlap, 2, NULL, 0, NULL, 0}, 0, "function 0 (a) overlaps function 1 (b)"},
		{{CODE, 32, f_dup, 3, NULL, 0, NULL, 0}, 2, "function 2 (b) overlaps function 0 (a)"},
		{{CODE, 32, f_inside, 2, NULL, 0, NULL, 0}, 1, "function 1 (inner) overlaps function 0 (outer)"},
		{{CODE, 32, good, 2, NULL, 8, NULL, 0}, 0, "stackmap size given without the stackmap"},
		{{CODE, 32, good, 2, NULL, 0, NULL, 8}, 0, ".eh_frame size given without .eh_frame"},
		{{CODE, 32, good, 2, bad_version, sizeof(bad_version), NULL, 0}, 0,
		 "stackmap: unknown stackmap version 4"},
		{{CODE, 32, good, 2, truncated, sizeof(truncated), NULL, 0}, 12,
		 "stackmap: record count 1 overruns the section"},
		{{CODE, 32, good, 2, sm_ok.bytes, 0, NULL, 0}, 0, "stackmap: empty stackmap section"},
		/* count 1 read in the other order is 2^24, at the function count's offset */
		{{CODE, 32, good, 2, sm_foreign.bytes, sm_foreign.len, NULL, 0}, 4,
		 "stackmap: function count 16777216 overruns the section"},
		{{CODE, 32, good, 2, sm_out.bytes, sm_out.len, NULL, 0}, 16,
		 "stackmap function 0 at 0x"},
		{{CODE, 32, good, 2, sm_low.bytes, sm_low.len, NULL, 0}, 16,
		 "is not inside the region"},
		{{CODE, 32, good, 2, sm_pc.bytes, sm_pc.len, NULL, 0}, 40,
		 "stackmap record 0 (ID 77) at 0x"},
	};
	/* Something already registered, to see that failures leave it alone. */
	const jitmap_jit_function other = {"other", CODE + 0x1000, 8};
	const jitmap_jit_region other_r = {CODE + 0x1000, 8, &other, 1, NULL, 0, NULL, 0};
	jitmap_jit_entry *keep = jitmap_jit_register(&other_r, NULL);
	assert_non_null(keep);
	const struct jit_code_entry *head = __jit_debug_descriptor.first_entry;
	const size_t notices = obs.notices;

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		jitmap_error err;
		void *img = (void *)1;
		size_t len = 7;
		memset(&err, 0x5a, sizeof(err));
		int rc = jitmap_jit_build_image(&cases[i].r, &img, &len, &err);
		if (rc != -EINVAL)
			fail_msg("case %zu: build returned %d", i, rc);
		assert_int_equal(err.code, -EINVAL);
		if (!strstr(err.reason, cases[i].reason))
			fail_msg("case %zu: reason \"%s\", expected \"%s\"", i, err.reason,
				 cases[i].reason);
		if (err.offset != cases[i].offset)
			fail_msg("case %zu: offset %llu, expected %llu", i,
				 (unsigned long long)err.offset, (unsigned long long)cases[i].offset);
		assert_ptr_equal(img, (void *)1); /* outputs untouched */
		assert_int_equal(len, 7);

		memset(&err, 0x5a, sizeof(err));
		errno = 0;
		assert_null(jitmap_jit_register(&cases[i].r, &err));
		assert_int_equal(errno, EINVAL);
		assert_contains(err.reason, cases[i].reason);
		assert_null(jitmap_jit_register(&cases[i].r, NULL)); /* err may be NULL */
		assert_ptr_equal(__jit_debug_descriptor.first_entry, head);
		assert_int_equal(obs.notices, notices);
		assert_int_equal(check_list(), 1);
		assert_at_rest();
	}
	jitmap_error err;
	assert_int_equal(jitmap_jit_build_image(NULL, &(void *){0}, &(size_t){0}, &err), -EINVAL);
	assert_contains(err.reason, "no region");

	/* The boundary cases of the same fixtures are fine. */
	const jitmap_jit_region ok = {CODE, 32, good, 2, sm_ok.bytes, sm_ok.len, NULL, 0};
	jitmap_jit_entry *e = jitmap_jit_register(&ok, &err);
	assert_non_null(e);
	assert_int_equal(check_list(), 2);
	jitmap_jit_unregister(e);
	jitmap_jit_unregister(keep);
	jitmap_jit_unregister(NULL);

	free(sm_ok.bytes);
	free(sm_out.bytes);
	free(sm_pc.bytes);
	free(sm_low.bytes);
	free(sm_foreign.bytes);
}

/* -- The descriptor -- */

static void test_register_unregister(void **state)
{
	(void)state;
	const jitmap_jit_function f = {"f", CODE, 8};
	const jitmap_jit_region r = {CODE, 8, &f, 1, NULL, 0, NULL, 0};
	assert_at_rest();
	assert_int_equal(check_list(), 0);
	jitmap_jit_entry *a = jitmap_jit_register(&r, NULL);
	jitmap_jit_entry *b = jitmap_jit_register(&r, NULL); /* the same code twice: allowed */
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(obs.registers, 2);
	assert_at_rest();

	/* The debugger's view: symfile_addr/size are the entry's image. */
	const struct jit_code_entry *head = __jit_debug_descriptor.first_entry;
	size_t len;
	assert_ptr_equal(head->symfile_addr, jitmap_jit_entry_image(b, &len));
	assert_int_equal(head->symfile_size, len);
	assert_ptr_equal(head->next_entry->symfile_addr, jitmap_jit_entry_image(a, NULL));
	assert_int_equal(check_list(), 2);

	jitmap_jit_unregister(a); /* the tail */
	assert_int_equal(obs.unregisters, 1);
	assert_int_equal(check_list(), 1);
	assert_ptr_equal(__jit_debug_descriptor.first_entry, head);
	jitmap_jit_unregister(b); /* the last one */
	assert_int_equal(obs.unregisters, 2);
	assert_int_equal(check_list(), 0);
	assert_at_rest();
}

/* A deterministic shuffle (xorshift), so a failure can be replayed. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void shuffle(jitmap_jit_entry **a, size_t n)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = rng() % i;
		jitmap_jit_entry *t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

enum { MANY = 10000 };

/* Count the functions of every registered image: each is one STT_FUNC symbol. */
static size_t count_registered_functions(void)
{
	size_t n = 0;
	for (const struct jit_code_entry *e = __jit_debug_descriptor.first_entry; e;
	     e = e->next_entry) {
		struct sect s = find_section(e->symfile_addr, e->symfile_size, ".symtab");
		assert_true(s.found);
		n += s.sh.sh_size / sizeof(Elf64_Sym) - 1;
	}
	return n;
}

/* 10,000 functions: registered in batches of varying size and one by one, interleaved, then
 * unregistered in shuffled order, with the list checked at every notice (fully every 97th). */
static void test_ten_thousand(void **state)
{
	(void)state;
	static jitmap_jit_function fns[MANY];
	static char names[MANY][12];
	for (size_t i = 0; i < MANY; i++) {
		snprintf(names[i], sizeof(names[i]), "f%zu", i);
		fns[i] = (jitmap_jit_function){names[i], CODE + 4 * i, 4};
	}
	obs.full_every = 97;
	jitmap_jit_entry **entries = calloc(MANY, sizeof(*entries));
	assert_non_null(entries);
	size_t n_entries = 0, next = 0;
	/* The first half in batches of 1..200, the second half one by one, alternating chunks. */
	while (next < MANY) {
		size_t batch = next < MANY / 2 ? 1 + rng() % 200 : 1;
		if (batch > MANY - next)
			batch = MANY - next;
		const jitmap_jit_region r = {fns[next].address, 4 * batch, &fns[next], batch,
					     NULL, 0, NULL, 0};
		jitmap_error err;
		entries[n_entries] = jitmap_jit_register(&r, &err);
		if (!entries[n_entries])
			fail_msg("register: %s", err.reason);
		n_entries++;
		next += batch;
		if (n_entries % 500 == 0) { /* unregister some early, in the middle */
			size_t k = rng() % n_entries;
			jitmap_jit_unregister(entries[k]);
			entries[k] = entries[--n_entries];
		}
	}
	assert_int_equal(check_list(), n_entries);
	assert_int_equal(obs.registers - obs.unregisters, n_entries);
	const size_t early = obs.unregisters;
	assert_at_rest();

	shuffle(entries, n_entries);
	for (size_t i = 0; i < n_entries; i++) {
		jitmap_jit_unregister(entries[i]);
		if (i % 1000 == 0)
			assert_int_equal(check_list(), n_entries - i - 1);
	}
	assert_int_equal(obs.unregisters, early + n_entries);
	assert_int_equal(check_list(), 0);
	free(entries);

	/* And once more with every function registered, counted through the images. */
	size_t total = 0;
	n_entries = 0;
	entries = calloc(MANY, sizeof(*entries));
	assert_non_null(entries);
	for (size_t at = 0; at < MANY;) {
		size_t batch = at % 3 ? 1 : 1 + rng() % 300;
		if (batch > MANY - at)
			batch = MANY - at;
		const jitmap_jit_region r = {fns[at].address, 4 * batch, &fns[at], batch, NULL,
					     0, NULL, 0};
		entries[n_entries] = jitmap_jit_register(&r, NULL);
		assert_non_null(entries[n_entries++]);
		at += batch;
		total += batch;
	}
	assert_int_equal(total, MANY);
	assert_int_equal(count_registered_functions(), MANY);
	shuffle(entries, n_entries);
	for (size_t i = 0; i < n_entries; i++)
		jitmap_jit_unregister(entries[i]);
	free(entries);
	assert_int_equal(check_list(), 0);
}

/* A copy of everything a debugger reads from the descriptor and its list. */
struct snapshot {
	struct jit_descriptor d;
	struct jit_code_entry *entries; /* copies, in list order */
	const struct jit_code_entry **where;
	size_t n;
};

static struct snapshot take_snapshot(void)
{
	struct snapshot s = {.d = __jit_debug_descriptor, .n = check_list()};
	s.entries = calloc(s.n + 1, sizeof(*s.entries));
	s.where = calloc(s.n + 1, sizeof(*s.where));
	assert_non_null(s.entries);
	assert_non_null(s.where);
	size_t i = 0;
	for (const struct jit_code_entry *e = s.d.first_entry; e; e = e->next_entry, i++) {
		s.entries[i] = *e;
		s.where[i] = e;
	}
	assert_int_equal(i, s.n);
	return s;
}

/* The descriptor and every entry are exactly as in `s`: same entries, same order, same links,
 * same images. */
static void assert_unchanged(const struct snapshot *s, const char *what)
{
	const struct snapshot now = take_snapshot();
	if (memcmp(&now.d, &s->d, sizeof(s->d)))
		fail_msg("%s: the descriptor changed", what);
	if (now.n != s->n)
		fail_msg("%s: %zu entries, %zu before", what, now.n, s->n);
	for (size_t i = 0; i < s->n; i++)
		if (now.where[i] != s->where[i] ||
		    memcmp(&now.entries[i], &s->entries[i], sizeof(s->entries[i])))
			fail_msg("%s: entry %zu changed", what, i);
	free(now.entries);
	free(now.where);
}

/* 10,000 entries of one function each (the per-function registration that GDB handles in
 * O(n^2)); with all of them registered, each kind of bad region is refused and leaves the
 * descriptor and all 10,000 entries exactly as they were, with no notice; then they are
 * unregistered every other one, then from the head, then from the tail, the list checked
 * after each phase. */
static void test_ten_thousand_entries_and_failures(void **state)
{
	(void)state;
	static jitmap_jit_function fns[MANY];
	static char names[MANY][12];
	for (size_t i = 0; i < MANY; i++) {
		snprintf(names[i], sizeof(names[i]), "g%zu", i);
		fns[i] = (jitmap_jit_function){names[i], CODE + 4 * i, 4};
	}
	obs.full_every = 997;
	jitmap_jit_entry **entries = calloc(MANY, sizeof(*entries));
	assert_non_null(entries);
	for (size_t i = 0; i < MANY; i++) {
		const jitmap_jit_region r = {fns[i].address, 4, &fns[i], 1, NULL, 0, NULL, 0};
		jitmap_error err;
		if (!(entries[i] = jitmap_jit_register(&r, &err)))
			fail_msg("register %zu: %s", i, err.reason);
	}
	assert_int_equal(check_list(), MANY);
	assert_int_equal(obs.registers, MANY);
	/* Registered at the head: the list runs from the newest to the oldest. */
	assert_ptr_equal(__jit_debug_descriptor.first_entry->symfile_addr,
			 jitmap_jit_entry_image(entries[MANY - 1], NULL));
	assert_at_rest();

	/* The four kinds of bad region the producer must refuse, and neighbours of them. */
	struct blob sm_bad = make_stackmap(CODE, 0);
	((uint8_t *)sm_bad.bytes)[0] = 9; /* version */
	struct blob sm_trunc = make_stackmap(CODE, 0);
	struct blob sm_foreign = make_foreign_stackmap(CODE, 0);
	struct blob sm_outside = make_stackmap(CODE + 64, 0);
	const jitmap_jit_function overlap[] = {{"a", CODE, 8}, {"b", CODE + 4, 8}};
	const jitmap_jit_function noname[] = {{"a", CODE, 4}, {NULL, CODE + 4, 4}};
	const jitmap_jit_function emptyname[] = {{"", CODE, 4}};
	const jitmap_jit_function outside[] = {{"a", CODE, 4}, {"b", CODE + 60, 8}};
	const jitmap_jit_function ok[] = {{"a", CODE, 4}, {"b", CODE + 4, 4}};
	const struct {
		const char *what;
		jitmap_jit_region r;
	} bad[] = {
		{"overlapping functions", {CODE, 64, overlap, 2, NULL, 0, NULL, 0}},
		{"a function without a name", {CODE, 64, noname, 2, NULL, 0, NULL, 0}},
		{"a function with an empty name", {CODE, 64, emptyname, 1, NULL, 0, NULL, 0}},
		{"a function outside its region", {CODE, 64, outside, 2, NULL, 0, NULL, 0}},
		{"a stackmap of an unknown version", {CODE, 64, ok, 2, sm_bad.bytes, sm_bad.len,
						      NULL, 0}},
		{"a truncated stackmap", {CODE, 64, ok, 2, sm_trunc.bytes, sm_trunc.len - 8, NULL,
					  0}},
		{"a stackmap in the other byte order", {CODE, 64, ok, 2, sm_foreign.bytes,
							sm_foreign.len, NULL, 0}},
		{"a stackmap function outside the region", {CODE, 64, ok, 2, sm_outside.bytes,
							    sm_outside.len, NULL, 0}},
	};
	const struct snapshot before = take_snapshot();
	const size_t notices = obs.notices;
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		jitmap_error err;
		memset(&err, 0, sizeof(err));
		errno = 0;
		if (jitmap_jit_register(&bad[i].r, &err))
			fail_msg("%s: registered", bad[i].what);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(err.code, -EINVAL);
		assert_true(err.reason[0] != '\0');
		assert_unchanged(&before, bad[i].what);
		assert_int_equal(obs.notices, notices);
		assert_at_rest();
	}
	free(before.entries);
	free(before.where);

	/* Unregister the odd ones (each from the middle of the list), then the rest from the
	 * head (newest first), then the last from the tail. */
	for (size_t i = 1; i < MANY; i += 2)
		jitmap_jit_unregister(entries[i]);
	assert_int_equal(check_list(), MANY / 2);
	for (size_t i = MANY - 2; i >= 2; i -= 2)
		jitmap_jit_unregister(entries[i]);
	assert_int_equal(check_list(), 1);
	assert_ptr_equal(__jit_debug_descriptor.first_entry->symfile_addr,
			 jitmap_jit_entry_image(entries[0], NULL));
	jitmap_jit_unregister(entries[0]);
	assert_int_equal(check_list(), 0);
	assert_int_equal(obs.unregisters, MANY);
	assert_at_rest();

	free(entries);
	free(sm_bad.bytes);
	free(sm_trunc.bytes);
	free(sm_foreign.bytes);
	free(sm_outside.bytes);
}

/* -- Threads -- */

enum { THREADS = 4, ROUNDS = 1500, LIVE = 24 };

static void *churn(void *arg)
{
	const size_t t = (size_t)arg;
	uint64_t s = 0x12345 + t * 0x9e3779b9ULL;
	jitmap_jit_entry *live[LIVE] = {0};
	char name[32];
	snprintf(name, sizeof(name), "thread%zu", t);
	for (size_t i = 0; i < ROUNDS; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		jitmap_jit_entry **slot = &live[s % LIVE];
		if (*slot) {
			jitmap_jit_unregister(*slot);
			*slot = NULL;
		} else {
			const jitmap_jit_function f = {name, CODE + 64 * t, 16};
			const jitmap_jit_region r = {CODE + 64 * t, 64, &f, 1, NULL, 0, NULL, 0};
			*slot = jitmap_jit_register(&r, NULL);
			if (!*slot)
				return (void *)1;
		}
	}
	for (size_t i = 0; i < LIVE; i++)
		jitmap_jit_unregister(live[i]);
	return NULL;
}

/* Four threads register and unregister at once; the observer (under the lock) checks the
 * whole list at every notice. */
static void test_threads(void **state)
{
	(void)state;
	pthread_t th[THREADS];
	obs.yield = 1;
	for (size_t t = 0; t < THREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, churn, (void *)t), 0);
	for (size_t t = 0; t < THREADS; t++) {
		void *ret;
		assert_int_equal(pthread_join(th[t], &ret), 0);
		assert_null(ret);
	}
	assert_int_equal(obs.registers, obs.unregisters);
	assert_true(obs.notices >= THREADS * ROUNDS);
	assert_int_equal(check_list(), 0);
}

/* -- Telling perf -- */

/* What jitmap_jit_register registers after jitmap_perf_open, read back with libjitmap's own
 * perf map and jitdump reader: the same names at the same ranges. */
static void test_perf_files(void **state)
{
	(void)state;
	assert_int_equal(jitmap_perf_open(4, NULL), -EINVAL);
	assert_int_equal(jitmap_perf_open(JITMAP_PERF_JITDUMP, "/nonexistent/dir"), -ENOENT);
	char dir[] = "/tmp/jitmap-test-perf-XXXXXX";
	assert_non_null(mkdtemp(dir));
	assert_int_equal(jitmap_perf_open(JITMAP_PERF_MAP | JITMAP_PERF_JITDUMP, dir), 0);
	const jitmap_jit_function fns[2] = {{"perf_outer", CODE, 32}, {"perf inner", CODE + 32, 16}};
	const jitmap_jit_region r = {CODE, 48, fns, 2, NULL, 0, NULL, 0};
	jitmap_jit_entry *e = jitmap_jit_register(&r, NULL);
	assert_non_null(e);
	jitmap_perf_close();
	jitmap_jit_entry *after = jitmap_jit_register(&r, NULL); /* not written: closed */
	char map[64], dump[sizeof(dir) + 32];
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)getpid());
	snprintf(dump, sizeof(dump), "%s/jit-%d.dump", dir, (int)getpid());
	for (int k = 0; k < 2; k++) {
		jitmap_perfmap *m = jitmap_perfmap_new();
		assert_int_equal(jitmap_perfmap_add_file(m, k ? dump : map, NULL), 2);
		assert_int_equal(jitmap_perfmap_num_problems(m), 0);
		jitmap_perfmap_sym s = {.sz = sizeof(s)};
		assert_int_equal(jitmap_perfmap_lookup(m, CODE + 31, &s), 0);
		assert_string_equal(s.name, "perf_outer");
		assert_int_equal(s.lo, CODE);
		assert_int_equal(s.hi, CODE + 32);
		assert_int_equal(jitmap_perfmap_lookup(m, CODE + 32, &s), 0);
		assert_string_equal(s.name, "perf inner");
		assert_int_equal(s.hi, CODE + 48);
		jitmap_perfmap_free(m);
	}
	/* The jitdump: its header, two code loads carrying the code bytes, the close record. */
	FILE *fp = fopen(dump, "rb");
	assert_non_null(fp);
	uint8_t buf[4096];
	const size_t n = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	uint32_t u32[6];
	memcpy(u32, buf, sizeof(u32));
	assert_int_equal(u32[0], 0x4A695444);
	assert_int_equal(u32[1], 1);
	assert_int_equal(u32[2], 40);
	assert_int_equal(u32[5], (uint32_t)getpid());
	size_t off = 40, loads = 0;
	uint32_t id = 0, size;
	while (off + 16 <= n) {
		memcpy(&id, buf + off, 4);
		memcpy(&size, buf + off + 4, 4);
		if (id == 0) {
			uint64_t addr, csize;
			memcpy(&addr, buf + off + 24, 8);
			memcpy(&csize, buf + off + 40, 8); /* after vma (24), code_addr (32) */
			const char *name = (const char *)buf + off + 56;
			const size_t nlen = strlen(name) + 1;
			assert_int_equal(size, 56 + nlen + csize);
			assert_memory_equal(buf + off + 56 + nlen, (const void *)(uintptr_t)addr, csize);
			loads++;
		}
		off += size;
	}
	assert_int_equal(off, n);
	assert_int_equal(loads, 2);
	assert_int_equal(id, 3); /* JIT_CODE_CLOSE last */
	jitmap_jit_unregister(e);
	jitmap_jit_unregister(after);
	unlink(map);
	unlink(dump);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_perf_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_image_contents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_image_minimal_and_large, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_regions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_register_unregister, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ten_thousand, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ten_thousand_entries_and_failures, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
	};
	return cmocka_run_group_tests_name("producer", tests, NULL, NULL);
}
