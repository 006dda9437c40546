/* test_process.c: jitmap_process over a fake target memory holding a JIT descriptor, one entry
 * and its image: the object compiled from elf_fixture.ll (two functions, three records) with
 * sh_addr patched as LLVM's JITs patch it, and its .llvm_stackmaps "loaded" at a live address.
 * Covers the MCJIT case (the live section not relocated yet: addresses from the registered
 * copy), relocation between two scans, reuse without re-parsing, unregistering, an unreadable
 * live section, hostile sizes, a descriptor that cannot be read, and a loaded file; a lazy
 * scan's glance at images against opening them at once, on the image damaged byte by byte. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "unit.h"

#include <elf.h>
#include <gelf.h>
#include <link.h>
#include <unistd.h>

#include "jitmap/process.h"

#ifdef JITMAP_ELF_FIXTURE
static const char *const fixture_path = JITMAP_ELF_FIXTURE;
#else
static const char *const fixture_path = NULL;
#endif

#define DESC UINT64_C(0x10000)
#define ENTRY UINT64_C(0x10100)
#define IMAGE UINT64_C(0x200000)
#define LIVE UINT64_C(0x300000)
#define TEXT UINT64_C(0x7f0000100000)
#define EH UINT64_C(0x7f0000110000) /* .eh_frame, when a test places it */

/* -- The fake target: a few regions of memory -- */

struct region {
	uint64_t addr;
	uint8_t *bytes;
	size_t len;
};

struct fake {
	struct region r[6];
	size_t n;
	unsigned reads;
	uint64_t refuse_addr; /* the first read of exactly refuse_len bytes there fails */
	size_t refuse_len;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	struct fake *f = ctx;
	f->reads++;
	if (f->refuse_len && addr == f->refuse_addr && len == f->refuse_len) {
		f->refuse_len = 0;
		snprintf(why, why_len, "refused once");
		return -EFAULT;
	}
	for (size_t i = 0; i < f->n; i++) {
		const struct region *r = &f->r[i];
		if (addr >= r->addr && addr - r->addr <= r->len && len <= r->len - (addr - r->addr)) {
			memcpy(buf, r->bytes + (addr - r->addr), len);
			return 0;
		}
	}
	snprintf(why, why_len, "nothing mapped at 0x%llx", (unsigned long long)addr);
	return -EFAULT;
}

static uint8_t desc[64], entry[32];

struct world {
	struct fake fake;
	sm_bytes image;      /* the registered object */
	sm_bytes code;       /* its .text, as "loaded" at TEXT */
	sm_bytes live;       /* its stackmap section, as "loaded" */
	Elf64_Shdr *sm_sh;   /* the image's .llvm_stackmaps header */
	jitmap_target target;
};

static void set_list(uint64_t first, uint64_t size)
{
	memset(desc, 0, sizeof(desc));
	sm_put(desc, 1, 4, JITMAP_ORDER_LITTLE);         /* version */
	sm_put(desc + 4, 1, 4, JITMAP_ORDER_LITTLE);     /* action: register */
	sm_put(desc + 8, first, 8, JITMAP_ORDER_LITTLE); /* relevant */
	sm_put(desc + 16, first, 8, JITMAP_ORDER_LITTLE);
	memset(entry, 0, sizeof(entry));
	sm_put(entry + 16, IMAGE, 8, JITMAP_ORDER_LITTLE);
	sm_put(entry + 24, size, 8, JITMAP_ORDER_LITTLE);
}

static bool world_init(struct world *w)
{
	if (!fixture_path)
		return false;
	memset(w, 0, sizeof(*w));
	w->image = sm_read_file(fixture_path);
	Elf64_Shdr *text = sm_elf64_section(&w->image, ".text");
	text->sh_addr = TEXT;
	const sm_bytes code = {w->image.data + text->sh_offset, text->sh_size};
	w->code = sm_bytes_copy(&code);
	w->sm_sh = sm_elf64_section(&w->image, ".llvm_stackmaps");
	w->sm_sh->sh_addr = LIVE;
	/* The live section as MCJIT has it before finalization: the object's bytes, every
	 * Function Address still 0. */
	const sm_bytes sec = {w->image.data + w->sm_sh->sh_offset, w->sm_sh->sh_size};
	w->live = sm_bytes_copy(&sec);
	set_list(ENTRY, w->image.len);
	w->fake.r[0] = (struct region){DESC, desc, sizeof(desc)};
	w->fake.r[1] = (struct region){ENTRY, entry, sizeof(entry)};
	w->fake.r[2] = (struct region){IMAGE, w->image.data, w->image.len};
	w->fake.r[3] = (struct region){TEXT, w->code.data, w->code.len};
	w->fake.r[4] = (struct region){LIVE, w->live.data, w->live.len}; /* last: see LIVE_GONE */
	w->fake.n = 5;
	w->target = (jitmap_target){&w->fake, NULL, fake_read};
	return true;
}

static void world_free(struct world *w)
{
	sm_bytes_free(&w->image);
	sm_bytes_free(&w->code);
	sm_bytes_free(&w->live);
}

/* The fake's regions without the live stackmap section (the last), and with it again. */
#define LIVE_GONE 4
#define LIVE_BACK 5

#define NEED_WORLD(w)                                                                      \
	do {                                                                               \
		if (!world_init(w)) {                                                      \
			print_message("no llc at configure time: elf_fixture.o not built\n"); \
			skip();                                                            \
		}                                                                          \
	} while (0)

static void scan(jitmap_process *p, bool with_descriptor)
{
	assert_int_equal(jitmap_process_scan_begin(p), 0);
	if (with_descriptor)
		assert_int_equal(jitmap_process_scan_descriptor(p, DESC, "the test"), 0);
	assert_int_equal(jitmap_process_scan_end(p), 0);
}

static bool source_note(const jitmap_process *p, size_t i, const char *needle)
{
	for (size_t k = 0; jitmap_process_source_note(p, i, k); k++)
		if (strstr(jitmap_process_source_note(p, i, k), needle))
			return true;
	return false;
}

static bool source_problem(const jitmap_process *p, size_t i, const char *needle)
{
	for (size_t k = 0; jitmap_process_source_problem(p, i, k); k++)
		if (strstr(jitmap_process_source_problem(p, i, k), needle))
			return true;
	return false;
}

/* MCJIT before finalization, then relocated; reuse; unregistering. */
static void test_jit_entry_lifecycle(void **state)
{
	(void)state;
	struct world w;
	NEED_WORLD(&w);
	jitmap_process *p = jitmap_process_new(&w.target, NULL);
	assert_non_null(p);

	scan(p, true);
	assert_int_equal(jitmap_process_num_problems(p), 0);
	assert_int_equal(jitmap_process_num_sources(p), 1);
	jitmap_source_info si = {.sz = sizeof(si)};
	assert_int_equal(jitmap_process_source(p, 0, &si), 0);
	assert_int_equal(jitmap_process_source(p, 1, &si), -ERANGE);
	assert_int_equal(jitmap_process_source(p, 0, &si), 0);
	assert_int_equal(si.kind, JITMAP_SOURCE_JIT);
	assert_string_equal(si.name, "JIT entry 0x10100");
	assert_int_equal(si.entry, ENTRY);
	assert_int_equal(si.descriptor, DESC);
	assert_int_equal(si.symfile_addr, IMAGE);
	assert_int_equal(si.section_address, LIVE);
	assert_true(si.live);
	assert_non_null(si.image);
	assert_int_equal(si.num_problems, 0);
	/* Addresses from the registered copy (relocated against the patched .text), names and
	 * sizes from the image's symbols. */
	const jitmap_stackmap *sm = si.stackmap;
	assert_non_null(sm);
	assert_int_equal(jitmap_stackmap_num_functions(sm), 2);
	const jitmap_function *f0 = jitmap_stackmap_function(sm, 0);
	assert_int_equal(f0->address, TEXT);
	assert_string_equal(f0->name, "fixture_first");
	assert_true(jitmap_stackmap_function_size(sm, 0) > 0);
	assert_true(source_note(p, 0, "2 function addresses not relocated in memory yet"));
	assert_int_equal(si.num_unrelocated, 2); /* the status the note is said for */
	/* One index over it. */
	jitmap_index *idx = jitmap_process_index(p);
	assert_int_equal(jitmap_index_num_records(idx), 3);
	const jitmap_record *r0 = jitmap_stackmap_record(sm, 0);
	jitmap_hit hit;
	assert_int_equal(jitmap_index_lookup(idx, jitmap_record_pc(sm, r0), &hit, 1), 1);
	assert_ptr_equal(hit.record, r0);

	/* Finalization writes the addresses into the live section: re-read, re-parsed, no
	 * note any more. */
	for (size_t i = 0; i < jitmap_stackmap_num_functions(sm); i++) {
		const jitmap_function *f = jitmap_stackmap_function(sm, i);
		sm_put(w.live.data + f->section_offset, f->address, 8, JITMAP_ORDER_LITTLE);
	}
	scan(p, true);
	assert_int_equal(jitmap_process_source(p, 0, &si), 0);
	assert_ptr_not_equal(si.stackmap, NULL);
	assert_int_equal(si.num_notes, 0);
	assert_int_equal(si.num_unrelocated, 0);
	const jitmap_stackmap *relocated = si.stackmap;
	assert_ptr_not_equal(relocated, sm); /* parsed again: the bytes changed */
	assert_true(si.live);
	assert_int_equal(jitmap_stackmap_function(relocated, 0)->address, TEXT);
	assert_string_equal(jitmap_stackmap_function(relocated, 1)->name, "fixture_second");
	assert_int_equal(jitmap_index_num_records(jitmap_process_index(p)), 3);

	/* Complete now: a later scan reads the 64-byte sample and the list (and its descriptor
	 * again: unchanged), not the section. */
	const unsigned before = w.fake.reads;
	scan(p, true);
	assert_int_equal(jitmap_process_source(p, 0, &si), 0);
	assert_ptr_equal(si.stackmap, relocated);
	assert_true(w.fake.reads - before <= 5);

	/* The same entry listed by two descriptors (one list) is one source. */
	assert_int_equal(jitmap_process_scan_begin(p), 0);
	assert_int_equal(jitmap_process_scan_descriptor(p, DESC, "a"), 0);
	assert_int_equal(jitmap_process_scan_descriptor(p, DESC, "b"), 0);
	assert_int_equal(jitmap_process_scan_end(p), 0);
	assert_int_equal(jitmap_process_num_sources(p), 1);

	/* Unregistered: gone, and the index is empty. */
	set_list(0, 0);
	scan(p, true);
	assert_int_equal(jitmap_process_num_sources(p), 0);
	assert_int_equal(jitmap_index_num_records(jitmap_process_index(p)), 0);

	/* Registered again, then the image replaced in place (another object at the same
	 * address): the sample differs, so the entry is read again. */
	set_list(ENTRY, w.image.len);
	scan(p, true);
	assert_int_equal(jitmap_process_num_sources(p), 1);
	w.image.data[9] ^= 0xff; /* e_ident padding (in the sample): still a valid image */
	scan(p, true);
	assert_int_equal(jitmap_process_source(p, 0, &si), 0);
	assert_non_null(si.stackmap);
	assert_int_equal(jitmap_index_num_records(jitmap_process_index(p)), 3);

	jitmap_process_flush(p);
	assert_int_equal(jitmap_process_num_sources(p), 0);
	jitmap_process_free(p);
	world_free(&w);
}

/* A live section that cannot be read: the registered copy, with a note and a problem. */
static void test_unreadable_live_section(void **state)
{
	(void)state;
	struct world w;
	NEED_WORLD(&w);
	w.fake.n = LIVE_GONE; /* nothing at LIVE */
	jitmap_process *p = jitmap_process_new(&w.target, NULL);
	scan(p, true);
	jitmap_source_info si = {.sz = sizeof(si)};
	assert_int_equal(jitmap_process_source(p, 0, &si), 0);
	assert_non_null(si.stackmap);
	assert_false(si.live);
	assert_int_equal(jitmap_stackmap_function(si.stackmap, 0)->address, TEXT);
	assert_true(source_note(p, 0, "read from the registered copy: .llvm_stackmaps at 0x300000 "
				      "is not readable: nothing mapped at 0x300000"));
	assert_true(source_problem(p, 0, "; using the registered copy"));
	/* Scanning again does not pile up notes or problems. */
	scan(p, true);
	assert_int_equal(jitmap_process_source(p, 0, &si), 0);
	assert_int_equal(si.num_notes, 1);
	assert_int_equal(si.num_problems, 1);
	/* The section comes back: read live. */
	w.fake.n = LIVE_BACK;
	scan(p, true);
	assert_int_equal(jitmap_process_source(p, 0, &si), 0);
	assert_true(si.live);
	assert_int_equal(si.num_problems, 0);
	jitmap_process_free(p);
	world_free(&w);
}

/* Neither the live section nor the registered copy: both problems, and the same ones at every
 * scan (the copy is opened once; its problem must not be lost when the live one is
 * re-checked). */
static void test_no_stackmap_anywhere(void **state)
{
	(void)state;
	struct world w;
	NEED_WORLD(&w);
	w.fake.n = LIVE_GONE;                               /* nothing at LIVE */
	w.image.data[w.sm_sh->sh_offset] = 9;       /* the copy: an unknown version */
	jitmap_process *p = jitmap_process_new(&w.target, NULL);
	for (int round = 0; round < 3; round++) {
		scan(p, true);
		jitmap_source_info si = {.sz = sizeof(si)};
		assert_int_equal(jitmap_process_source(p, 0, &si), 0);
		assert_null(si.stackmap);
		assert_true(source_problem(p, 0, "unknown stackmap version 9"));
		assert_true(source_problem(p, 0, ".llvm_stackmaps at 0x300000 is not readable"));
		assert_int_equal(si.num_problems, 2);
	}
	jitmap_process_free(p);
	world_free(&w);
}

/* Hostile sizes and lists: problems with the reason, never a crash or a huge allocation. */
static void test_hostile(void **state)
{
	(void)state;
	struct world w;
	NEED_WORLD(&w);
	JITMAP_OPTS(const jitmap_process_opts, opts, .max_image = 1 << 20, .max_section = 64);
	jitmap_process *p = jitmap_process_new(&w.target, &opts);
	assert_non_null(p);

	set_list(ENTRY, UINT64_C(1) << 40); /* a terabyte image */
	scan(p, true);
	assert_int_equal(jitmap_process_num_sources(p), 1);
	assert_true(source_problem(p, 0, "is larger than the 1 MiB limit; not read"));
	jitmap_source_info si = {.sz = sizeof(si)};
	assert_int_equal(jitmap_process_source(p, 0, &si), 0);
	assert_null(si.stackmap);

	set_list(ENTRY, w.image.len); /* the section is over max_section: the copy */
	scan(p, true);
	assert_true(source_problem(p, 0, "over the 0 MiB limit; using the registered copy"));

	sm_put(desc, 7, 4, JITMAP_ORDER_LITTLE); /* version 7 */
	scan(p, true);
	assert_int_equal(jitmap_process_num_sources(p), 0);
	assert_int_equal(jitmap_process_num_problems(p), 1);
	assert_contains(jitmap_process_problem(p, 0), "the JIT descriptor in the test: ");
	assert_null(jitmap_process_problem(p, 1));

	assert_int_equal(jitmap_process_scan_begin(p), 0); /* unreadable descriptor */
	assert_int_equal(jitmap_process_scan_descriptor(p, 0xdead0000, NULL), 0);
	assert_int_equal(jitmap_process_scan_end(p), 0);
	assert_contains(jitmap_process_problem(p, 0), "the JIT descriptor in the program: ");

	/* Options are checked; a target needs read_mem. */
	const jitmap_process_opts small = {.sz = 2};
	errno = 0;
	assert_null(jitmap_process_new(&w.target, &small));
	assert_int_equal(errno, EINVAL);
	/* A byte of the tail padding set (where a newer caller's field would be): refused,
	 * though sz is sizeof. */
	jitmap_process_opts padded;
	memset(&padded, 0, sizeof(padded));
	padded.sz = sizeof(padded);
	const size_t end = offsetof(jitmap_process_opts, debug_dirs) + sizeof(padded.debug_dirs);
	if (end < sizeof(padded)) {
		((unsigned char *)&padded)[end] = 1;
		errno = 0;
		assert_null(jitmap_process_new(&w.target, &padded));
		assert_int_equal(errno, EINVAL);
	}
	const jitmap_target none = {NULL, NULL, NULL};
	assert_null(jitmap_process_new(&none, NULL));
	jitmap_process_free(p);
	jitmap_process_free(NULL);
	world_free(&w);
}

/* A loaded file whose section is not in memory: read from the file, moved by the bias. */
static void test_loaded_file(void **state)
{
	(void)state;
	struct world w;
	NEED_WORLD(&w);
	jitmap_process *p = jitmap_process_new(&w.target, NULL);
	const uint64_t where = UINT64_C(0x5550000);
	assert_int_equal(jitmap_process_scan_begin(p), 0);
	assert_int_equal(jitmap_process_scan_object(p, fixture_path, where), 0);
	assert_int_equal(jitmap_process_scan_object(p, "/nonexistent/jitmap.o", where), 0);
	assert_int_equal(jitmap_process_scan_end(p), 0);
	assert_int_equal(jitmap_process_num_sources(p), 2);
	jitmap_source_info si = {.sz = sizeof(si)};
	assert_int_equal(jitmap_process_source(p, 0, &si), 0);
	assert_int_equal(si.kind, JITMAP_SOURCE_OBJECT);
	assert_string_equal(si.name, fixture_path);
	assert_non_null(si.stackmap);
	assert_false(si.live);
	assert_true(source_note(p, 0, "read from the file, moved by the load bias"));
	assert_int_equal(jitmap_process_source(p, 1, &si), 0);
	assert_null(si.stackmap);
	assert_true(source_problem(p, 1, "/nonexistent/jitmap.o: offset 0x0: cannot open"));
	assert_int_equal(jitmap_index_num_records(jitmap_process_index(p)), 3);
	jitmap_process_free(p);
	world_free(&w);
}

/* The JIT descriptor this executable defines for test_scan_file (an object named as GDB's
 * interface names it), its list's first entry where nothing is mapped. */
struct {
	uint32_t version, action_flag;
	uint64_t relevant_entry, first_entry;
} __jit_debug_descriptor = {1, 0, 0, 0x10};

static int first_object(struct dl_phdr_info *info, size_t size, void *out)
{
	(void)size;
	*(uint64_t *)out = info->dlpi_addr;
	return 1; /* the main program is listed first */
}

/* A loaded file as a tool that lists modules hands it in (jitmap-stack with libdwfl): this
 * executable, whose descriptor is walked at its load bias (the walk stops at the entry that
 * is not mapped, and says so under the name given), and a linked s390x executable whose
 * .llvm_stackmaps is listed where the bias puts it. */
static void test_scan_file(void **state)
{
	(void)state;
	uint64_t bias = 0;
	dl_iterate_phdr(first_object, &bias);
	struct fake f = {.n = 1};
	f.r[0] = (struct region){(uint64_t)(uintptr_t)&__jit_debug_descriptor,
				 (uint8_t *)&__jit_debug_descriptor,
				 sizeof(__jit_debug_descriptor)};
	const jitmap_target t = {.ctx = &f, .read_mem = fake_read};
	jitmap_process *p = jitmap_process_new(&t, NULL);
	assert_non_null(p);
	assert_int_equal(jitmap_process_scan_begin(p), 0);
	assert_int_equal(jitmap_process_scan_file(p, "/proc/self/exe", bias, "this test"), 1);
	assert_int_equal(jitmap_process_scan_file(p, "/nonexistent/file", 0, NULL), 0);
	assert_int_equal(jitmap_process_scan_end(p), 0);
	assert_true(f.reads > 0);
	bool named = false;
	for (size_t k = 0; k < jitmap_process_num_problems(p); k++)
		named |= strstr(jitmap_process_problem(p, k), "this test") &&
			 strstr(jitmap_process_problem(p, k), "0x10");
	if (!named)
		fail_msg("no problem names the descriptor's walk (%zu problems: %s)",
			 jitmap_process_num_problems(p),
			 jitmap_process_num_problems(p) ? jitmap_process_problem(p, 0) : "");
	jitmap_process_free(p);

	const char *dir = getenv("JITMAP_FIXTURES");
	if (!dir)
		skip();
	char s390x[4096];
	snprintf(s390x, sizeof(s390x), "%s/cross/cross-s390x.elf", dir);
	jitmap_error err;
	jitmap_image *img = jitmap_image_open_file(s390x, &err);
	assert_non_null(img);
	uint64_t sh_addr = 0, sh_size = 0;
	assert_int_equal(jitmap_image_stackmap_section(img, &sh_addr, &sh_size), 0);
	jitmap_image_free(img);
	p = jitmap_process_new(&t, NULL);
	assert_int_equal(jitmap_process_scan_begin(p), 0);
	assert_int_equal(jitmap_process_scan_file(p, s390x, 0x100000, NULL), 0);
	assert_int_equal(jitmap_process_scan_end(p), 0);
	assert_int_equal(jitmap_process_num_sources(p), 1);
	jitmap_source_info si = {.sz = sizeof(si)};
	assert_int_equal(jitmap_process_source(p, 0, &si), 0);
	assert_int_equal(si.kind, JITMAP_SOURCE_OBJECT);
	assert_string_equal(si.name, s390x);
	assert_int_equal(si.section_address, sh_addr + 0x100000);
	jitmap_process_free(p);
}

/* -- A descriptor named by a GNU hash table -- */

#ifdef JITMAP_DESC_LIB
/* desc_lib.c's library: where its .dynsym names the descriptor, and where its GNU hash table
 * and that table's section header are in the file. */
struct desc_lib {
	sm_bytes so;
	uint64_t value;
	size_t shdr_at, hash_at, bloom_word;
};

static void desc_lib_read(struct desc_lib *l)
{
	*l = (struct desc_lib){.so = sm_read_file(JITMAP_DESC_LIB)};
	assert_true(elf_version(EV_CURRENT) != EV_NONE);
	Elf *e = elf_memory((char *)l->so.data, l->so.len);
	GElf_Ehdr eh;
	assert_non_null(gelf_getehdr(e, &eh));
	l->bloom_word = gelf_getclass(e) == ELFCLASS64 ? 8 : 4;
	bool symtab = false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		assert_non_null(gelf_getshdr(scn, &sh));
		symtab |= sh.sh_type == SHT_SYMTAB;
		if (sh.sh_type == SHT_GNU_HASH) {
			l->shdr_at = eh.e_shoff + elf_ndxscn(scn) * eh.e_shentsize;
			l->hash_at = sh.sh_offset;
		}
		Elf_Data *d = sh.sh_type == SHT_DYNSYM ? elf_getdata(scn, NULL) : NULL;
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			assert_non_null(gelf_getsym(d, (int)i, &sym));
			const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, "__jit_debug_descriptor"))
				l->value = sym.st_value;
		}
	}
	elf_end(e);
	assert_false(symtab); /* stripped: .dynsym alone names the descriptor */
	assert_true(l->hash_at && l->value);
}

/* A word of the copy `b` at `at` set to v. */
static void put_word(sm_bytes *b, size_t at, uint32_t v)
{
	assert_true(at + 4 <= b->len);
	memcpy(b->data + at, &v, 4);
}

/* jitmap_process_scan_file on `b` written to a file, loaded where the descriptor is at DESC:
 * 1 when it finds the descriptor (and then reads it). */
static int scan_lib(sm_bytes *b, uint64_t value)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/jitmap-test-desc-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	const int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b->data, b->len), (ssize_t)b->len);
	close(fd);
	static uint8_t desc[24] = {1}; /* version 1, an empty list */
	struct fake f = {.n = 1};
	f.r[0] = (struct region){DESC, desc, sizeof(desc)};
	const jitmap_target t = {.ctx = &f, .read_mem = fake_read};
	jitmap_process *p = jitmap_process_new(&t, NULL);
	assert_non_null(p);
	assert_int_equal(jitmap_process_scan_begin(p), 0);
	const int rc = jitmap_process_scan_file(p, path, DESC - value, NULL);
	assert_int_equal(jitmap_process_scan_end(p), 0);
	assert_int_equal(f.reads > 0, rc == 1);
	jitmap_process_free(p);
	unlink(path);
	sm_bytes_free(b);
	return rc;
}
#endif

/* A shared library's descriptor is found through the library's GNU hash table, as the dynamic
 * linker finds symbols (reading every symbol and name of libLLVM cost a run of jitmap-stack a
 * tenth of its page faults). The table's Bloom filter decides that a name is not there: with
 * the filter cleared, the descriptor is not found. Where the filter has the name and the
 * chains do not (every bucket emptied), where the table does not hold together, or where there
 * is none, every symbol is read. */
static void test_scan_file_hashed(void **state)
{
	(void)state;
#ifndef JITMAP_DESC_LIB
	skip();
#else
	struct desc_lib l;
	desc_lib_read(&l);
	sm_bytes c = sm_bytes_copy(&l.so);
	assert_int_equal(scan_lib(&c, l.value), 1);

	uint32_t nbuckets, bloom;
	memcpy(&nbuckets, l.so.data + l.hash_at, 4);
	memcpy(&bloom, l.so.data + l.hash_at + 8, 4);
	c = sm_bytes_copy(&l.so);
	for (uint32_t i = 0; i < bloom * l.bloom_word / 4; i++)
		put_word(&c, l.hash_at + 16 + 4 * i, 0);
	assert_int_equal(scan_lib(&c, l.value), 0);

	c = sm_bytes_copy(&l.so);
	for (uint32_t i = 0; i < nbuckets; i++)
		put_word(&c, l.hash_at + 16 + bloom * l.bloom_word + 4 * i, 0);
	assert_int_equal(scan_lib(&c, l.value), 1);

	c = sm_bytes_copy(&l.so);
	put_word(&c, l.hash_at, 0x7fffffff); /* more buckets than the table has words */
	assert_int_equal(scan_lib(&c, l.value), 1);

	c = sm_bytes_copy(&l.so);
	put_word(&c, l.shdr_at + 4, SHT_PROGBITS); /* sh_type: no hash table */
	assert_int_equal(scan_lib(&c, l.value), 1);
	sm_bytes_free(&l.so);
#endif
}

static bool image_problem(const jitmap_process *p, uint64_t id, const char *needle)
{
	for (size_t k = 0; jitmap_process_image_problem(p, id, k); k++)
		if (strstr(jitmap_process_image_problem(p, id, k), needle))
			return true;
	return false;
}

/* What MCJIT's finalization does: every function address set in the live section. */
static void relocate(struct world *w)
{
	jitmap_error err;
	jitmap_image *full = jitmap_image_open_memory(w->image.data, w->image.len, &err);
	assert_non_null(full);
	const jitmap_stackmap *c = jitmap_image_stackmap(full);
	for (size_t i = 0; i < jitmap_stackmap_num_functions(c); i++) {
		const jitmap_function *f = jitmap_stackmap_function(c, i);
		sm_put(w->live.data + f->section_offset, f->address, 8, JITMAP_ORDER_LITTLE);
	}
	jitmap_image_free(full);
}

/* A process over world `w` with its JIT image relocated (the caller frees it). */
static jitmap_process *relocated_process(struct world *w)
{
	relocate(w);
	jitmap_process *p = jitmap_process_new(&w->target, NULL);
	assert_non_null(p);
	return p;
}

/* An image handed in by a debugger (GDB's JIT reader gets the bytes, not the entry): the
 * same live-section rules, kept until removed, rechecked at stops. */
static void test_handed_image(void **state)
{
	(void)state;
	struct world w;
	NEED_WORLD(&w);
	jitmap_process *p = jitmap_process_new(&w.target, NULL);
	assert_non_null(p);

	/* The debugger's buffer goes as soon as the call returns. */
	sm_bytes given = sm_bytes_copy(&w.image);
	uint64_t id = 0;
	assert_int_equal(jitmap_process_add_image(p, given.data, given.len, "JIT image 1", &id), 0);
	memset(given.data, 0xa5, given.len);
	sm_bytes_free(&given);
	assert_true(id > 0);
	jitmap_source_info si = {.sz = sizeof(si)};
	assert_int_equal(jitmap_process_image(p, id, &si), 0);
	assert_int_equal(si.kind, JITMAP_SOURCE_JIT);
	assert_string_equal(si.name, "JIT image 1");
	assert_int_equal(si.section_address, LIVE);
	assert_non_null(si.image);
	assert_int_equal(jitmap_process_num_sources(p), 0); /* not a scan's source */

	/* Nothing is read until the stackmap is asked for. MCJIT before finalization: the live
	 * section's addresses are 0 and the debugger's bytes (the registered copy) are gone, so
	 * there is no stackmap yet, and a note says why. */
	assert_int_equal(jitmap_index_num_records(jitmap_process_index(p)), 0);
	unsigned before = w.fake.reads;
	assert_null(jitmap_process_image_stackmap(p, id));
	assert_true(w.fake.reads > before);
	assert_int_equal(jitmap_process_image(p, id, &si), 0);
	assert_int_equal(si.num_notes, 1);
	assert_int_equal(si.num_problems, 0);
	assert_int_equal(jitmap_index_num_records(jitmap_process_index(p)), 0);

	/* Relocated in memory: nothing is read before a recheck, the live bytes after it; names
	 * and sizes from the symbols; indexed. */
	relocate(&w);
	before = w.fake.reads;
	assert_null(jitmap_process_image_stackmap(p, id));
	assert_int_equal(w.fake.reads, before);
	jitmap_process_recheck(p);
	const jitmap_stackmap *live = jitmap_process_image_stackmap(p, id);
	assert_non_null(live);
	assert_int_equal(jitmap_process_image(p, id, &si), 0);
	assert_true(si.live);
	assert_int_equal(si.num_notes, 0);
	assert_int_equal(jitmap_stackmap_function(live, 0)->address, TEXT);
	assert_string_equal(jitmap_stackmap_function(live, 0)->name, "fixture_first");
	assert_int_equal(jitmap_index_num_records(jitmap_process_index(p)), 3);

	/* Complete: a recheck costs one read of the code's sample (staleness) and one of the
	 * section's first bytes. */
	jitmap_process_recheck(p);
	before = w.fake.reads;
	assert_ptr_equal(jitmap_process_image_stackmap(p, id), live);
	assert_int_equal(w.fake.reads - before, 2);

	/* The JIT rewrites the section in place (function 0's stack size, in the first bytes):
	 * read again at the next recheck. */
	const uint64_t old_size = jitmap_stackmap_function(live, 0)->stack_size;
	sm_put(w.live.data + 16 + 8, old_size + 16, 8, JITMAP_ORDER_LITTLE);
	jitmap_process_recheck(p);
	const jitmap_stackmap *again = jitmap_process_image_stackmap(p, id);
	assert_non_null(again);
	assert_int_equal(jitmap_stackmap_function(again, 0)->stack_size, old_size + 16);
	assert_int_equal(jitmap_index_num_records(jitmap_process_index(p)), 3);

	/* Scans leave handed images alone. */
	set_list(0, 0);
	scan(p, true);
	assert_ptr_equal(jitmap_process_image_stackmap(p, id), again);
	assert_int_equal(jitmap_index_num_records(jitmap_process_index(p)), 3);

	/* Removed: out of the index; unknown ids say so. */
	assert_int_equal(jitmap_process_remove_image(p, id), 0);
	assert_int_equal(jitmap_index_num_records(jitmap_process_index(p)), 0);
	assert_null(jitmap_process_image_stackmap(p, id));
	assert_int_equal(jitmap_process_remove_image(p, id), -ENOENT);
	assert_int_equal(jitmap_process_image(p, id, &si), -ENOENT);
	assert_null(jitmap_process_image_problem(p, id, 0));

	/* Hostile images: a problem each, never an error. */
	static const uint8_t junk[] = "not an ELF image at all";
	uint64_t bad;
	assert_int_equal(jitmap_process_add_image(p, junk, sizeof(junk), NULL, &bad), 0);
	assert_null(jitmap_process_image_stackmap(p, bad));
	assert_true(image_problem(p, bad, "JIT image 2: offset 0x0: "));
	uint64_t empty;
	assert_int_equal(jitmap_process_add_image(p, NULL, 0, "nothing", &empty), 0);
	assert_true(image_problem(p, empty, "nothing: empty image"));
	assert_int_equal(jitmap_process_add_image(p, NULL, 8, "x", &bad), -EINVAL);
	assert_int_equal(jitmap_process_add_image(p, junk, sizeof(junk), "x", NULL), -EINVAL);

	/* Its live section unreadable: no stackmap, with the reason (the bytes are gone). */
	w.fake.n = LIVE_GONE;
	assert_int_equal(jitmap_process_add_image(p, w.image.data, w.image.len, "gone", &id), 0);
	assert_null(jitmap_process_image_stackmap(p, id));
	assert_true(image_problem(p, id, "gone: .llvm_stackmaps at 0x300000 is not readable: "
					 "nothing mapped at 0x300000"));
	/* It comes back: read at the next stop. */
	w.fake.n = LIVE_BACK;
	jitmap_process_recheck(p);
	assert_non_null(jitmap_process_image_stackmap(p, id));
	/* A section not placed in memory (sh_addr 0): its own copy, read at once. */
	w.sm_sh->sh_addr = 0;
	uint64_t unplaced;
	assert_int_equal(jitmap_process_add_image(p, w.image.data, w.image.len, "unplaced",
						  &unplaced), 0);
	const jitmap_stackmap *own = jitmap_process_image_stackmap(p, unplaced);
	assert_non_null(own);
	assert_int_equal(jitmap_stackmap_function(own, 0)->address, TEXT);
	assert_true(image_problem(p, unplaced, "no load address (sh_addr 0); using the registered "
					       "copy"));

	jitmap_process_flush(p);
	assert_int_equal(jitmap_process_image(p, id, &si), -ENOENT);
	jitmap_process_free(p);
	world_free(&w);
}

/* One process for a debugger's JIT reader (images handed in) and its commands (descriptor
 * scans), as GDB's plugin and jitmap's Python commands share it: the same JIT entry, seen
 * both ways, is parsed and indexed once, whichever way comes first, and what one lets go of
 * stays valid for the other. */
static void test_shared_parse(void **state)
{
	(void)state;
	struct world w;
	NEED_WORLD(&w);
	jitmap_process *p = relocated_process(&w);
	jitmap_index *index = jitmap_process_index(p);
	jitmap_source_info si = {.sz = sizeof(si)};

	/* Handed in first, then found by the scan: one parse. */
	uint64_t id;
	assert_int_equal(jitmap_process_add_image(p, w.image.data, w.image.len, "JIT image 1", &id),
			 0);
	const jitmap_stackmap *a = jitmap_process_image_stackmap(p, id);
	assert_non_null(a);
	scan(p, true);
	assert_int_equal(jitmap_process_num_sources(p), 1);
	assert_int_equal(jitmap_process_source(p, 0, &si), 0);
	assert_string_equal(si.name, "JIT entry 0x10100");
	assert_ptr_equal(si.stackmap, a);
	assert_true(si.live);
	assert_int_equal(jitmap_index_num_records(index), 3); /* indexed once */

	/* The image goes (GDB's unregister): the scan's source keeps the parse. */
	assert_int_equal(jitmap_process_remove_image(p, id), 0);
	jitmap_process_recheck(p);
	assert_int_equal(jitmap_index_num_records(index), 3);
	scan(p, true);
	assert_int_equal(jitmap_process_source(p, 0, &si), 0);
	assert_ptr_equal(si.stackmap, a);
	assert_string_equal(jitmap_stackmap_function(a, 0)->name, "fixture_first");

	/* Found by the scan first, then handed in: the image takes the scan's parse. */
	assert_int_equal(jitmap_process_add_image(p, w.image.data, w.image.len, "JIT image 2", &id),
			 0);
	assert_ptr_equal(jitmap_process_image_stackmap(p, id), a);
	assert_int_equal(jitmap_index_num_records(index), 3);

	/* Rewritten in place: whoever reads it first parses it, the other takes that parse. */
	const uint64_t old_size = jitmap_stackmap_function(a, 0)->stack_size;
	sm_put(w.live.data + 16 + 8, old_size + 16, 8, JITMAP_ORDER_LITTLE);
	jitmap_process_recheck(p);
	scan(p, true);
	assert_int_equal(jitmap_process_source(p, 0, &si), 0);
	const jitmap_stackmap *b = si.stackmap;
	assert_ptr_not_equal(b, a);
	assert_int_equal(jitmap_stackmap_function(b, 0)->stack_size, old_size + 16);
	assert_ptr_equal(jitmap_process_image_stackmap(p, id), b);
	assert_int_equal(jitmap_index_num_records(index), 3);

	/* Each client reads through its own target while it calls in. */
	struct fake other = w.fake;
	other.reads = 0;
	const jitmap_target mine = {&other, NULL, fake_read};
	jitmap_target previous;
	assert_int_equal(jitmap_process_set_target(p, &mine, &previous), 0);
	assert_ptr_equal(previous.ctx, &w.fake);
	const unsigned reads = w.fake.reads;
	scan(p, true);
	assert_true(other.reads > 0);
	assert_int_equal(w.fake.reads, reads);
	assert_int_equal(jitmap_process_set_target(p, &previous, NULL), 0);
	const jitmap_target no_read = {&other, NULL, NULL};
	assert_int_equal(jitmap_process_set_target(p, &no_read, NULL), -EINVAL);

	/* Unregistered from the list: the scan drops its source, the image keeps the parse. */
	set_list(0, 0);
	scan(p, true);
	assert_int_equal(jitmap_process_num_sources(p), 0);
	assert_ptr_equal(jitmap_process_image_stackmap(p, id), b);
	assert_int_equal(jitmap_stackmap_function(b, 0)->stack_size, old_size + 16);
	assert_int_equal(jitmap_index_num_records(index), 3);
	jitmap_hit hit;
	assert_int_equal(jitmap_index_lookup(index, jitmap_record_pc(b, jitmap_stackmap_record(b, 0)),
					     &hit, 1), 1);
	assert_ptr_equal(hit.stackmap, b);

	assert_int_equal(jitmap_process_remove_image(p, id), 0);
	assert_int_equal(jitmap_index_num_records(index), 0);
	jitmap_process_free(p);
	world_free(&w);
}

/* JIT code by address among the images handed in (a debugger's JIT reader's own), beside a
 * scan's sources; the image's code and functions as the process makes them. */
static void test_image_code_at(void **state)
{
	(void)state;
	struct world w;
	NEED_WORLD(&w);
	jitmap_process *p = relocated_process(&w);
	jitmap_code_info ci;
	assert_int_equal(jitmap_process_image_code_at(p, TEXT, &ci), -ENOENT);
	uint64_t id;
	assert_int_equal(jitmap_process_add_image(p, w.image.data, w.image.len, "JIT image 1", &id),
			 0);
	/* Found without reading its stackmap: only its code sample is read, once per stop. */
	unsigned before = w.fake.reads;
	assert_int_equal(jitmap_process_image_code_at(p, TEXT + 1, &ci), 0);
	assert_int_equal(w.fake.reads - before, 1);
	assert_int_equal(ci.image_id, id);
	assert_int_equal(ci.entry, 0);
	assert_string_equal(ci.source, "JIT image 1");
	assert_int_equal(ci.lo, TEXT);
	assert_int_equal(ci.hi, TEXT + 0x40);
	assert_string_equal(ci.function, "fixture_first");
	assert_int_equal(ci.function_lo, TEXT);
	assert_int_equal(ci.function_hi, TEXT + 29);
	assert_null(ci.stackmap); /* not read yet */
	assert_non_null(ci.image);
	before = w.fake.reads;
	assert_int_equal(jitmap_process_image_code_at(p, TEXT + 0x21, &ci), 0);
	assert_int_equal(w.fake.reads, before);
	assert_string_equal(ci.function, "fixture_second");
	assert_int_equal(jitmap_process_image_code_at(p, TEXT + 30, &ci), 0); /* padding */
	assert_null(ci.function);
	assert_int_equal(ci.function_lo, 0);
	assert_int_equal(jitmap_process_image_code_at(p, TEXT + 0x40, &ci), -ENOENT);
	assert_int_equal(jitmap_process_image_code_at(p, TEXT - 1, &ci), -ENOENT);
	/* jitmap_process_code_at gives the same image, its stackmap read. */
	assert_int_equal(jitmap_process_code_at(p, TEXT, &ci), 0);
	assert_int_equal(ci.image_id, id);
	assert_non_null(ci.stackmap);
	assert_ptr_equal(ci.stackmap, jitmap_process_image_stackmap(p, id));

	/* A scan finds the same entry: code_at answers with the scan's source, image_code_at
	 * still with the image handed in. */
	scan(p, true);
	assert_int_equal(jitmap_process_code_at(p, TEXT, &ci), 0);
	assert_int_equal(ci.image_id, 0);
	assert_int_equal(ci.entry, ENTRY);
	assert_int_equal(jitmap_process_image_code_at(p, TEXT, &ci), 0);
	assert_int_equal(ci.image_id, id);

	/* The image's code and functions, as a reader gives them to its debugger. */
	const jitmap_image_range *ranges;
	const jitmap_code_function *fns;
	size_t nranges, nfns;
	assert_int_equal(jitmap_process_image_code(p, id, &ranges, &nranges, &fns, &nfns), 0);
	assert_int_equal(nranges, 1);
	assert_int_equal(ranges[0].lo, TEXT);
	assert_int_equal(ranges[0].hi, TEXT + 0x40);
	assert_int_equal(nfns, 2);
	assert_string_equal(fns[0].name, "fixture_first");
	assert_int_equal(fns[1].lo, TEXT + 0x20);
	assert_int_equal(fns[1].hi, TEXT + 0x40);
	assert_int_equal(jitmap_process_image_code(p, id + 100, NULL, NULL, NULL, NULL), -ENOENT);

	/* A function symbol without a size (hand-written code) reaches the next function. */
	sm_bytes copy = sm_bytes_copy(&w.image);
	Elf64_Shdr *symtab = sm_elf64_section(&copy, ".symtab");
	Elf64_Sym *sym = (Elf64_Sym *)(copy.data + symtab->sh_offset);
	for (size_t i = 0; i < symtab->sh_size / sizeof(*sym); i++)
		if (sym[i].st_value == 0 && ELF64_ST_TYPE(sym[i].st_info) == STT_FUNC)
			sym[i].st_size = 0;
	uint64_t sizeless;
	assert_int_equal(jitmap_process_add_image(p, copy.data, copy.len, "sizeless", &sizeless), 0);
	sm_bytes_free(&copy);
	assert_int_equal(jitmap_process_image_code(p, sizeless, NULL, NULL, &fns, &nfns), 0);
	assert_int_equal(nfns, 2);
	assert_int_equal(fns[0].lo, TEXT);
	assert_int_equal(fns[0].hi, TEXT + 0x20);
	/* Two images of the same code (no JITMAP_PROCESS_REPLACE_IMAGES): the first answers. */
	assert_int_equal(jitmap_process_image_code_at(p, TEXT + 30, &ci), 0);
	assert_int_equal(ci.image_id, id);
	assert_int_equal(jitmap_process_remove_image(p, id), 0);
	assert_int_equal(jitmap_process_image_code_at(p, TEXT + 30, &ci), 0);
	assert_int_equal(ci.image_id, sizeless);
	assert_string_equal(ci.function, "fixture_first");
	assert_int_equal(jitmap_process_take_dropped(p, NULL, 0), 0); /* removed, not dropped */
	jitmap_process_free(p);
	world_free(&w);
}

/* The staleness rule of images handed in: code sampled at first use, compared once per stop;
 * changed or unreadable: dropped, and said why. */
static void test_image_stale(void **state)
{
	(void)state;
	struct world w;
	NEED_WORLD(&w);
	jitmap_process *p = relocated_process(&w);
	jitmap_dropped_image d[4];
	uint64_t id;
	assert_int_equal(jitmap_process_add_image(p, w.image.data, w.image.len, "JIT entry 1", &id),
			 0);
	assert_non_null(jitmap_process_image_stackmap(p, id)); /* first use: sampled */
	assert_int_equal(jitmap_index_num_records(jitmap_process_index(p)), 3);

	/* The code changes: unnoticed until the next stop, then the image is dropped. */
	w.code.data[3] ^= 0xff;
	jitmap_code_info ci;
	assert_int_equal(jitmap_process_image_code_at(p, TEXT, &ci), 0);
	assert_int_equal(jitmap_process_take_dropped(p, d, 4), 0);
	jitmap_process_recheck(p);
	assert_int_equal(jitmap_process_image_code_at(p, TEXT, &ci), -ENOENT);
	assert_int_equal(jitmap_process_take_dropped(p, d, 4), 1);
	assert_int_equal(d[0].id, id);
	assert_false(d[0].replaced);
	assert_string_equal(d[0].why, "JIT entry 1: its code at 0x7f0000100000 changed since it "
				      "was first used");
	assert_int_equal(jitmap_process_take_dropped(p, d, 4), 0); /* told once */
	jitmap_source_info si = {.sz = sizeof(si)};
	assert_int_equal(jitmap_process_image(p, id, &si), -ENOENT);
	assert_null(jitmap_process_image_stackmap(p, id));
	assert_int_equal(jitmap_index_num_records(jitmap_process_index(p)), 0);
	w.code.data[3] ^= 0xff;

	/* Its code unmapped (the JIT freed it): dropped at the next stop, by any use. */
	assert_int_equal(jitmap_process_add_image(p, w.image.data, w.image.len, "JIT entry 2", &id),
			 0);
	assert_int_equal(jitmap_process_code_at(p, TEXT, &ci), 0);
	assert_int_equal(ci.image_id, id);
	w.fake.r[3].addr = 0x1000; /* TEXT: nothing mapped */
	jitmap_process_recheck(p);
	assert_null(jitmap_process_image_stackmap(p, id));
	assert_int_equal(jitmap_process_take_dropped(p, d, 4), 1);
	assert_int_equal(d[0].id, id);
	assert_string_equal(d[0].why, "JIT entry 2: its code at 0x7f0000100000 cannot be read any "
				      "more: nothing mapped at 0x7f0000100000");

	/* Unreadable at its first use: not used, not dropped, the problem said; used at a later
	 * stop that can read it. */
	assert_int_equal(jitmap_process_add_image(p, w.image.data, w.image.len, "JIT entry 3", &id),
			 0);
	assert_int_equal(jitmap_process_image_code_at(p, TEXT, &ci), -ENOENT);
	assert_null(jitmap_process_image_stackmap(p, id));
	assert_true(image_problem(p, id, "JIT entry 3: its code at 0x7f0000100000 cannot be read: "
				       "nothing mapped at 0x7f0000100000"));
	assert_int_equal(jitmap_process_take_dropped(p, d, 4), 0);
	w.fake.r[3].addr = TEXT;
	assert_int_equal(jitmap_process_image_code_at(p, TEXT, &ci), -ENOENT); /* this stop */
	jitmap_process_recheck(p);
	assert_int_equal(jitmap_process_image_code_at(p, TEXT, &ci), 0);
	assert_int_equal(ci.image_id, id);
	assert_false(image_problem(p, id, "cannot be read"));
	assert_non_null(jitmap_process_image_stackmap(p, id));

	/* JITMAP_PROCESS_REPLACE_IMAGES: a newer image over the same code replaces it. */
	jitmap_process_free(p);
	JITMAP_OPTS(const jitmap_process_opts, opts, .flags = JITMAP_PROCESS_REPLACE_IMAGES);
	p = jitmap_process_new(&w.target, &opts);
	assert_non_null(p);
	uint64_t a, b;
	assert_int_equal(jitmap_process_add_image(p, w.image.data, w.image.len, "JIT entry 1", &a),
			 0);
	assert_int_equal(jitmap_process_add_image(p, w.image.data, w.image.len, "JIT entry 2", &b),
			 0);
	assert_int_equal(jitmap_process_take_dropped(p, d, 4), 1);
	assert_int_equal(d[0].id, a);
	assert_true(d[0].replaced);
	assert_string_equal(d[0].why, "JIT entry 1: replaced by JIT entry 2, whose code "
				      "[0x7f0000100000, 0x7f0000100040) overlaps its own");
	assert_int_equal(jitmap_process_image(p, a, &si), -ENOENT);
	assert_int_equal(jitmap_process_image_code_at(p, TEXT, &ci), 0);
	assert_int_equal(ci.image_id, b);
	JITMAP_OPTS(const jitmap_process_opts, bad, .flags = 4);
	assert_null(jitmap_process_new(&w.target, &bad));
	jitmap_process_free(p);
	world_free(&w);
}

/* Place the image's .eh_frame at EH, relocated as a JIT relocates it (its two FDEs' PC-relative
 * starts, R_X86_64_PC32 against .text), in the fake memory's region 5. */
static sm_bytes place_eh_frame(struct world *w)
{
	Elf64_Shdr *eh = sm_elf64_section(&w->image, ".eh_frame");
	eh->sh_addr = EH;
	const sm_bytes sec = {w->image.data + eh->sh_offset, eh->sh_size};
	sm_bytes live = sm_bytes_copy(&sec);
	const Elf64_Shdr *rela = sm_elf64_section(&w->image, ".rela.eh_frame");
	const Elf64_Rela *r = (const Elf64_Rela *)(w->image.data + rela->sh_offset);
	for (size_t i = 0; i < rela->sh_size / sizeof(*r); i++) {
		assert_int_equal(ELF64_R_TYPE(r[i].r_info), R_X86_64_PC32);
		const int64_t v = (int64_t)(TEXT + (uint64_t)r[i].r_addend) -
				  (int64_t)(EH + r[i].r_offset);
		sm_put(live.data + r[i].r_offset, (uint64_t)v, 4, JITMAP_ORDER_LITTLE);
	}
	w->fake.r[5] = (struct region){EH, live.data, live.len};
	w->fake.n = 6;
	return live;
}

/* The CFI of an image: read from the live .eh_frame once, kept with the image; a failed read
 * says why and is tried again at the next stop. */
static void test_code_cfi(void **state)
{
	(void)state;
	struct world w;
	NEED_WORLD(&w);
	relocate(&w);
	sm_bytes eh = place_eh_frame(&w);
	jitmap_process *p = jitmap_process_new(&w.target, NULL);
	assert_non_null(p);
	uint64_t id;
	assert_int_equal(jitmap_process_add_image(p, w.image.data, w.image.len, "JIT image 1", &id),
			 0);
	jitmap_code_info ci;
	assert_int_equal(jitmap_process_image_code_at(p, TEXT + 4, &ci), 0);
	const char *why = "unset";
	unsigned before = w.fake.reads;
	const jitmap_cfi *cfi = jitmap_process_code_cfi(p, &ci, &why);
	assert_non_null(cfi);
	assert_null(why);
	assert_int_equal(w.fake.reads - before, 1); /* the .eh_frame, in one read */
	uint64_t lo, hi;
	assert_true(jitmap_cfi_covers(cfi, TEXT + 4, &lo, &hi));
	assert_int_equal(lo, TEXT);
	assert_true(jitmap_cfi_covers(cfi, TEXT + 0x24, &lo, &hi));
	assert_int_equal(lo, TEXT + 0x20);
	/* Read once: the same CFI at each use, at later stops too, and through code_at. */
	before = w.fake.reads;
	assert_ptr_equal(jitmap_process_code_cfi(p, &ci, NULL), cfi);
	jitmap_process_recheck(p);
	assert_int_equal(jitmap_process_code_at(p, TEXT + 0x24, &ci), 0);
	const unsigned after_lookup = w.fake.reads;
	assert_ptr_equal(jitmap_process_code_cfi(p, &ci, NULL), cfi);
	assert_int_equal(w.fake.reads, after_lookup);
	assert_true(after_lookup > before); /* (the stop's code sample and stackmap, not the CFI) */

	/* A scan's source has its own image, its CFI read once too. */
	scan(p, true);
	assert_int_equal(jitmap_process_code_at(p, TEXT + 4, &ci), 0);
	assert_int_equal(ci.image_id, 0);
	before = w.fake.reads;
	const jitmap_cfi *scanned = jitmap_process_code_cfi(p, &ci, NULL);
	assert_non_null(scanned);
	assert_int_equal(w.fake.reads - before, 1);
	assert_ptr_equal(jitmap_process_code_cfi(p, &ci, NULL), scanned);
	assert_int_equal(w.fake.reads - before, 1);

	/* Not readable: none, why, a problem of the image; not read again until the next stop. */
	w.fake.n = 5;
	uint64_t gone;
	assert_int_equal(jitmap_process_add_image(p, w.image.data, w.image.len, "JIT image 2",
						  &gone), 0);
	assert_int_equal(jitmap_process_image_code_at(p, TEXT + 0x24, &ci), 0);
	assert_int_equal(ci.image_id, id); /* the first image handed in answers */
	assert_int_equal(jitmap_process_remove_image(p, id), 0);
	assert_int_equal(jitmap_process_image_code_at(p, TEXT + 0x24, &ci), 0);
	assert_int_equal(ci.image_id, gone);
	assert_null(jitmap_process_code_cfi(p, &ci, &why));
	assert_non_null(why);
	assert_string_equal(why, "JIT image 2: its .eh_frame at 0x7f0000110000 cannot be read: "
				 "nothing mapped at 0x7f0000110000");
	assert_true(image_problem(p, gone, "JIT image 2: its .eh_frame at 0x7f0000110000 cannot"));
	before = w.fake.reads;
	assert_null(jitmap_process_code_cfi(p, &ci, NULL));
	assert_int_equal(w.fake.reads, before);
	w.fake.n = 6;
	jitmap_process_recheck(p);
	assert_int_equal(jitmap_process_image_code_at(p, TEXT + 0x24, &ci), 0);
	assert_non_null(jitmap_process_code_cfi(p, &ci, &why));
	assert_false(image_problem(p, gone, ".eh_frame"));

	/* Neither section: none, and nothing to say. */
	Elf64_Shdr *ehsh = sm_elf64_section(&w.image, ".eh_frame");
	ehsh->sh_addr = 0;
	ehsh->sh_flags = 0;
	uint64_t bare;
	assert_int_equal(jitmap_process_remove_image(p, gone), 0);
	assert_int_equal(jitmap_process_add_image(p, w.image.data, w.image.len, "bare", &bare), 0);
	assert_int_equal(jitmap_process_image_code_at(p, TEXT, &ci), 0);
	assert_int_equal(ci.image_id, bare);
	why = "unset";
	assert_null(jitmap_process_code_cfi(p, &ci, &why));
	assert_null(why);
	/* Code the process does not hold. */
	const jitmap_code_info stranger = {.image_id = 999, .lo = TEXT, .image = ci.image};
	assert_null(jitmap_process_code_cfi(p, &stranger, &why));
	assert_non_null(why);
	jitmap_process_free(p);
	sm_bytes_free(&eh);
	world_free(&w);
}

/* JIT code by address: the scan's entries, their functions and ranges. */
static void test_code_at(void **state)
{
	(void)state;
	struct world w;
	NEED_WORLD(&w);
	jitmap_process *p = relocated_process(&w);
	jitmap_code_info ci;
	assert_int_equal(jitmap_process_code_at(p, TEXT, &ci), -ENOENT);
	scan(p, true);
	assert_int_equal(jitmap_process_code_at(p, TEXT, &ci), 0);
	assert_string_equal(ci.source, "JIT entry 0x10100");
	assert_int_equal(ci.entry, ENTRY);
	assert_int_equal(ci.lo, TEXT);
	assert_true(ci.hi > TEXT);
	assert_string_equal(ci.function, "fixture_first");
	assert_int_equal(ci.function_lo, TEXT);
	assert_true(ci.function_hi > TEXT && ci.function_hi <= ci.hi);
	assert_non_null(ci.stackmap);
	/* Past the first function's end (alignment padding): code, but no function. */
	const uint64_t end = ci.function_hi;
	const jitmap_stackmap *sm = ci.stackmap;
	assert_int_equal(jitmap_process_code_at(p, ci.hi - 1, &ci), 0);
	if (end < jitmap_stackmap_function(sm, 1)->address) {
		assert_int_equal(jitmap_process_code_at(p, end, &ci), 0);
		assert_null(ci.function);
		assert_int_equal(ci.function_lo, 0);
	}
	/* The second function. */
	const uint64_t second = jitmap_stackmap_function(sm, 1)->address;
	assert_int_equal(jitmap_process_code_at(p, second + 1, &ci), 0);
	assert_int_equal(ci.function_lo, second);
	assert_string_not_equal(ci.function, "fixture_first");
	assert_int_equal(jitmap_process_code_at(p, TEXT - 1, &ci), -ENOENT);
	assert_int_equal(jitmap_process_code_at(p, 0, &ci), -ENOENT);
	/* Unregistered: gone. */
	set_list(0, 0);
	scan(p, true);
	assert_int_equal(jitmap_process_code_at(p, TEXT, &ci), -ENOENT);
	jitmap_process_free(p);
	world_free(&w);
}


/* A stop reads again, a lookup does not: a lazy scan's entry read at its first use is read
 * again at the next scan (its live section rewritten in place), and the lookup after it reads
 * nothing; an image handed in whose code changed is dropped by the scan after a recheck, not
 * left for a later lookup to find. */
static void test_stop_refresh(void **state)
{
	(void)state;
	struct world w;
	NEED_WORLD(&w);
	relocate(&w);
	const JITMAP_OPTS(jitmap_process_opts, o, .flags = JITMAP_PROCESS_LAZY);
	jitmap_process *p = jitmap_process_new(&w.target, &o);
	assert_non_null(p);
	scan(p, true);
	jitmap_code_info ci;
	assert_int_equal(jitmap_process_code_at(p, TEXT + 0x20, &ci), 0); /* its first use */
	assert_non_null(ci.stackmap);
	const uint64_t old_size = jitmap_stackmap_function(ci.stackmap, 0)->stack_size;
	sm_put(w.live.data + 16 + 8, old_size + 16, 8, JITMAP_ORDER_LITTLE);
	scan(p, true);
	const unsigned after_scan = w.fake.reads;
	assert_int_equal(jitmap_process_code_at(p, TEXT + 0x20, &ci), 0);
	assert_int_equal(w.fake.reads, after_scan);
	assert_int_equal(jitmap_stackmap_function(ci.stackmap, 0)->stack_size, old_size + 16);
	sm_put(w.live.data + 16 + 8, old_size, 8, JITMAP_ORDER_LITTLE);
	jitmap_process_free(p);

	p = jitmap_process_new(&w.target, NULL);
	assert_non_null(p);
	uint64_t id;
	assert_int_equal(jitmap_process_add_image(p, w.image.data, w.image.len, "JIT image 1", &id),
			 0);
	assert_non_null(jitmap_process_image_stackmap(p, id)); /* its first use: sampled */
	w.code.data[3] ^= 0xff;
	jitmap_process_recheck(p);
	jitmap_dropped_image d[2];
	assert_int_equal(jitmap_process_take_dropped(p, d, 2), 0); /* a recheck reads nothing */
	scan(p, false);
	assert_int_equal(jitmap_process_take_dropped(p, d, 2), 1);
	assert_int_equal(d[0].id, id);
	assert_string_equal(d[0].why, "JIT image 1: its code at 0x7f0000100000 changed since it "
				      "was first used");
	w.code.data[3] ^= 0xff;
	jitmap_process_free(p);
	world_free(&w);
}

/* -- A lazy scan's glance (JITMAP_PROCESS_LAZY) against opening each image at once --
 *
 * A lazy scan opens an image only when a PC falls in its code, when a look at its bytes
 * (elf.c, jitmap__image_glance) says that opening it is sure to succeed and to say nothing at
 * scan time. The oracle is the same lazy process made to open the image at scan, as it did
 * before the glance: its first read of the whole image fails (the glance's), so the scan goes
 * the old way (a 64-byte sample, then jitmap_image_open_target). Every answer must agree: the
 * problems and notes after the scan and after each lookup, the layout count, and every
 * jitmap_process_code_at about the code either side found. */

static void expect_same_texts(const jitmap_process *a, const jitmap_process *b, const char *when,
			      size_t at)
{
	jitmap_source_info x = {.sz = sizeof(x)}, y = {.sz = sizeof(y)};
	assert_int_equal(jitmap_process_num_sources(a), jitmap_process_num_sources(b));
	assert_int_equal(jitmap_process_num_problems(a), jitmap_process_num_problems(b));
	assert_int_equal(jitmap_process_num_layout_images(a), jitmap_process_num_layout_images(b));
	for (size_t i = 0; i < jitmap_process_num_sources(a); i++) {
		assert_int_equal(jitmap_process_source(a, i, &x), 0);
		assert_int_equal(jitmap_process_source(b, i, &y), 0);
		if (x.num_problems != y.num_problems || x.num_notes != y.num_notes)
			fail_msg("%s (damage at %zu): %zu problems and %zu notes, not %zu and %zu "
				 "(first: %s)", when, at, x.num_problems, x.num_notes, y.num_problems,
				 y.num_notes, y.num_problems ? jitmap_process_source_problem(b, i, 0)
							     : "-");
		for (size_t k = 0; k < x.num_problems; k++)
			assert_string_equal(jitmap_process_source_problem(a, i, k),
					    jitmap_process_source_problem(b, i, k));
		for (size_t k = 0; k < x.num_notes; k++)
			assert_string_equal(jitmap_process_source_note(a, i, k),
					    jitmap_process_source_note(b, i, k));
	}
}

static void expect_same_code(jitmap_process *a, jitmap_process *b, uint64_t pc, size_t at)
{
	jitmap_code_info x, y;
	const int rx = jitmap_process_code_at(a, pc, &x), ry = jitmap_process_code_at(b, pc, &y);
	if (rx != ry)
		fail_msg("code_at 0x%llx (damage at %zu): %d, not %d", (unsigned long long)pc, at, rx,
			 ry);
	if (rx)
		return;
	assert_string_equal(x.source, y.source);
	assert_int_equal(x.entry, y.entry);
	assert_int_equal(x.lo, y.lo);
	assert_int_equal(x.hi, y.hi);
	assert_int_equal(x.function_lo, y.function_lo);
	assert_int_equal(x.function_hi, y.function_hi);
	assert_int_equal(x.function != NULL, y.function != NULL);
	if (x.function)
		assert_string_equal(x.function, y.function);
	assert_int_equal(x.image != NULL, y.image != NULL);
	assert_int_equal(x.stackmap != NULL, y.stackmap != NULL);
	if (x.stackmap)
		assert_int_equal(jitmap_stackmap_num_records(x.stackmap),
				 jitmap_stackmap_num_records(y.stackmap));
}

/* Scan world `w` lazily twice (glancing, and made to open the image at once) and compare.
 * Returns whether the glancing process left the image unopened after its scan. */
static bool glance_against_open(struct world *w, size_t at)
{
	const JITMAP_OPTS(jitmap_process_opts, o, .flags = JITMAP_PROCESS_LAZY);
	struct fake oracle = w->fake;
	oracle.refuse_addr = IMAGE;
	oracle.refuse_len = w->image.len;
	const jitmap_target ot = {&oracle, NULL, fake_read};
	jitmap_process *a = jitmap_process_new(&w->target, &o);
	jitmap_process *b = jitmap_process_new(&ot, &o);
	assert_non_null(a);
	assert_non_null(b);
	scan(a, true);
	scan(b, true);
	expect_same_texts(a, b, "after the scan", at);
	jitmap_source_info si = {.sz = sizeof(si)};
	const bool unopened = jitmap_process_num_sources(a) == 1 &&
			      jitmap_process_source(a, 0, &si) == 0 && !si.image;
	/* PCs: the code either side says the image has (the oracle's image says it), and about
	 * .text where the world placed it. */
	uint64_t pcs[3 * 10 + 6] = {TEXT, TEXT + 1, TEXT + 0x1f, TEXT + 0x20, TEXT + 0x3f, TEXT + 0x40};
	size_t npcs = 6;
	if (jitmap_process_num_sources(b) == 1 && jitmap_process_source(b, 0, &si) == 0 && si.image)
		for (size_t k = 0; k < jitmap_image_num_code_ranges(si.image) && npcs + 3 <= 36; k++) {
			const jitmap_image_range *r = jitmap_image_code_range(si.image, k);
			pcs[npcs++] = r->lo;
			pcs[npcs++] = r->lo + (r->hi - r->lo) / 2;
			pcs[npcs++] = r->hi - 1;
		}
	for (size_t k = 0; k < npcs; k++)
		expect_same_code(a, b, pcs[k], at);
	expect_same_texts(a, b, "after the lookups", at);
	jitmap_process_free(a);
	jitmap_process_free(b);
	return unopened;
}

static void test_lazy_glance(void **state)
{
	(void)state;
	struct world w;
	NEED_WORLD(&w);
	relocate(&w);
	/* The image as a JIT registers it: glanced at, opened at the first lookup in its code. */
	assert_true(glance_against_open(&w, SIZE_MAX));
	const JITMAP_OPTS(jitmap_process_opts, o, .flags = JITMAP_PROCESS_LAZY);
	jitmap_process *p = jitmap_process_new(&w.target, &o);
	assert_non_null(p);
	scan(p, true);
	jitmap_source_info si = {.sz = sizeof(si)};
	assert_int_equal(jitmap_process_source(p, 0, &si), 0);
	assert_null(si.image);
	assert_null(si.stackmap);
	jitmap_code_info ci;
	assert_int_equal(jitmap_process_code_at(p, TEXT - 1, &ci), -ENOENT);
	assert_int_equal(jitmap_process_source(p, 0, &si), 0);
	assert_null(si.image); /* not its code: still not opened */
	assert_int_equal(jitmap_process_code_at(p, TEXT + 0x20, &ci), 0);
	assert_string_equal(ci.function, "fixture_second");
	assert_non_null(ci.image);
	assert_non_null(ci.stackmap);
	assert_int_equal(jitmap_process_source(p, 0, &si), 0);
	assert_ptr_equal(si.image, ci.image);
	jitmap_process_free(p);

	/* What a scan says of an image, said by a lazy scan too: function symbols that hold
	 * addresses, and a .jitmap_deopt section (here an empty one, renamed from .note.GNU-stack). */
	sm_bytes keep = sm_bytes_copy(&w.image);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)w.image.data;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(w.image.data + eh->e_shoff);
	for (size_t i = 1; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		Elf64_Sym *sym = (Elf64_Sym *)(w.image.data + sh[i].sh_offset);
		for (size_t k = 0; k < sh[i].sh_size / sizeof(*sym); k++)
			if (ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC)
				sym[k].st_value += TEXT;
	}
	assert_false(glance_against_open(&w, SIZE_MAX));
	memcpy(w.image.data, keep.data, keep.len);
	char *names = (char *)w.image.data + sh[eh->e_shstrndx].sh_offset;
	char *note = NULL;
	for (size_t i = 1; i < eh->e_shnum; i++)
		if (!strcmp(names + sh[i].sh_name, ".note.GNU-stack"))
			note = names + sh[i].sh_name;
	assert_non_null(note);
	memcpy(note, ".jitmap_deopt", sizeof(".jitmap_deopt"));
	assert_false(glance_against_open(&w, SIZE_MAX));
	memcpy(w.image.data, keep.data, keep.len);

	/* Every byte of the header, the section headers and the name table, damaged three ways:
	 * whatever the glance makes of it, the answers are the ones opening it at once gives. */
	size_t glanced = 0, cases = 0;
	const size_t shoff = eh->e_shoff, shend = shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr);
	const size_t str = sh[eh->e_shstrndx].sh_offset, strend = str + sh[eh->e_shstrndx].sh_size;
	for (size_t at = 0; at < w.image.len; at++) {
		if (at >= sizeof(Elf64_Ehdr) && (at < shoff || at >= shend) && (at < str || at >= strend))
			continue;
		static const uint8_t flips[] = {0x01, 0x80, 0xff};
		for (size_t f = 0; f < sizeof(flips); f++) {
			w.image.data[at] ^= flips[f];
			glanced += glance_against_open(&w, at);
			cases++;
			w.image.data[at] = keep.data[at];
		}
	}
	/* Some damage leaves a plain image (a name's letter, an alignment), most does not. */
	print_message("%zu damaged images, %zu glanced at\n", cases, glanced);
	assert_true(glanced > 0 && glanced < cases);
	sm_bytes_free(&keep);
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jit_entry_lifecycle),
		cmocka_unit_test(test_unreadable_live_section),
		cmocka_unit_test(test_no_stackmap_anywhere),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_loaded_file),
		cmocka_unit_test(test_scan_file),
		cmocka_unit_test(test_scan_file_hashed),
		cmocka_unit_test(test_handed_image),
		cmocka_unit_test(test_shared_parse),
		cmocka_unit_test(test_code_at),
		cmocka_unit_test(test_image_code_at),
		cmocka_unit_test(test_image_stale),
		cmocka_unit_test(test_code_cfi),
		cmocka_unit_test(test_lazy_glance),
		cmocka_unit_test(test_stop_refresh),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
