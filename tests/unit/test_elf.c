/* test_elf.c: jitmap_image_open_memory / open_file on inputs that are not ELF, 32-bit,
 * truncated or corrupted, and on a real object compiled from elf_fixture.ll at build time
 * (JITMAP_ELF_FIXTURE; those tests skip without llc). */
#include "unit.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

/* -- Files -- */

/* Write `len` bytes to a new temporary file; the caller unlinks it. */
static void write_temp(char *path, const void *buf, size_t len)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(path, 256, "%s/jitmap-test-elf-XXXXXX", dir);
	const int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

#ifdef JITMAP_ELF_FIXTURE
static const char *const fixture_path = JITMAP_ELF_FIXTURE;
#else
static const char *const fixture_path = NULL;
#endif

static bool have_fixture(sm_bytes *obj)
{
	if (!fixture_path)
		return false;
	*obj = sm_read_file(fixture_path);
	return true;
}

#define NEED_FIXTURE(obj)                                                                 \
	do {                                                                              \
		if (!have_fixture(obj)) {                                                 \
			print_message("no llc at configure time: elf_fixture.o not built\n"); \
			skip();                                                           \
		}                                                                         \
	} while (0)

/* A section header of a little-endian ELF64 image, found by name (the test's own reading,
 * independent of libelf). */
static Elf64_Shdr section(const sm_bytes *obj, const char *name)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh, strs;
	memcpy(&eh, obj->data, sizeof(eh));
	memcpy(&strs, obj->data + eh.e_shoff + (size_t)eh.e_shstrndx * sizeof(sh), sizeof(strs));
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		memcpy(&sh, obj->data + eh.e_shoff + (size_t)i * sizeof(sh), sizeof(sh));
		if (!strcmp((const char *)obj->data + strs.sh_offset + sh.sh_name, name))
			return sh;
	}
	fail_msg("no section %s", name);
	return sh;
}

static Elf64_Ehdr elf64_header(void)
{
	Elf64_Ehdr eh;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_REL;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(Elf64_Ehdr);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	return eh;
}

static void expect_open_fails(const void *buf, size_t len, uint64_t offset, const char *reason)
{
	jitmap_error err;
	errno = 0;
	jitmap_image *img = jitmap_image_open_memory(buf, len, &err);
	if (img)
		fail_msg("%zu bytes opened; expected \"%s\"", len, reason);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(err.code, -EINVAL);
	assert_contains(err.reason, reason);
	if (offset != UINT64_MAX)
		assert_int_equal(err.offset, offset);
}

/* -- Not an object we read -- */

static void test_not_elf(void **state)
{
	(void)state;
	static const char text[] = "; this is LLVM IR, not an ELF object\n";
	expect_open_fails(text, sizeof(text) - 1, 0, "not an ELF");
	expect_open_fails("", 0, 0, "not an ELF");
	expect_open_fails("\177ELF", 4, 0, "ELF"); /* the magic alone is no header */

	jitmap_error err;
	assert_null(jitmap_image_open_file(JITMAP_ELF_FIXTURE_SOURCE, &err));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(err.code, -EINVAL);
	assert_contains(err.reason, "not an ELF");

	assert_null(jitmap_image_open_file("/nonexistent/jitmap/object.o", &err));
	assert_int_equal(errno, ENOENT);
	assert_int_equal(err.code, -ENOENT);
	assert_contains(err.reason, "cannot open");
	jitmap_image_free(NULL);
}

static void test_elf32(void **state)
{
	(void)state;
	Elf32_Ehdr eh;
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_REL;
	eh.e_machine = EM_386;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf32_Shdr);
	expect_open_fails(&eh, sizeof(eh), EI_CLASS, "32-bit ELF file");
}

/* A header that promises a section table the image does not hold. libelf alone would report
 * no sections (and so no stackmaps); jitmap says the file is truncated. */
static void test_truncated_headers(void **state)
{
	(void)state;
	Elf64_Ehdr eh = elf64_header();
	eh.e_shoff = sizeof(eh);
	eh.e_shnum = 5;
	eh.e_shstrndx = 4;
	expect_open_fails(&eh, sizeof(eh), offsetof(Elf64_Ehdr, e_shoff),
			  "truncated: the section header table (5 entries at 0x40)");
	eh.e_shoff = UINT64_MAX - 8;
	expect_open_fails(&eh, sizeof(eh), offsetof(Elf64_Ehdr, e_shoff), "truncated");
	/* extended numbering: e_shnum 0, the count in section 0, which is missing */
	eh.e_shoff = 0x1000;
	eh.e_shnum = 0;
	expect_open_fails(&eh, sizeof(eh), offsetof(Elf64_Ehdr, e_shoff),
			  "truncated: the section header table (1 entries at 0x1000)");
	/* a header cut short */
	eh = elf64_header();
	expect_open_fails(&eh, 20, UINT64_MAX, "ELF");
}

/* Section headers of a size other than ELF64's: 0xffff of them of 0 bytes each "fit" in any
 * image, and libelf then reports no sections, so the image read as one without stackmaps
 * (tests/hostile/hostile.c, mode shnum). */
static void test_section_header_size(void **state)
{
	(void)state;
	struct {
		Elf64_Ehdr eh;
		Elf64_Shdr sh[2];
	} im;
	memset(&im, 0, sizeof(im));
	im.eh = elf64_header();
	im.eh.e_shoff = offsetof(__typeof__(im), sh);
	im.eh.e_shnum = 0xffff;
	im.eh.e_shentsize = 0;
	expect_open_fails(&im, sizeof(im), offsetof(Elf64_Ehdr, e_shentsize),
			  "section header size 0 (ELF64's is 64)");
	im.eh.e_shnum = 2;
	im.eh.e_shentsize = 32;
	expect_open_fails(&im, sizeof(im), offsetof(Elf64_Ehdr, e_shentsize),
			  "section header size 32 (ELF64's is 64)");
	/* the right size opens */
	im.eh.e_shentsize = sizeof(Elf64_Shdr);
	jitmap_error err;
	jitmap_image *img = jitmap_image_open_memory(&im, sizeof(im), &err);
	assert_non_null(img);
	jitmap_image_free(img);
}

/* A valid ELF file without sections opens, with no stackmap. */
static void test_no_stackmap(void **state)
{
	(void)state;
	const Elf64_Ehdr eh = elf64_header();
	jitmap_error err;
	jitmap_image *img = jitmap_image_open_memory(&eh, sizeof(eh), &err);
	assert_non_null(img);
	assert_int_equal(jitmap_image_elf_type(img), ET_REL);
	assert_int_equal(jitmap_image_elf_machine(img), EM_X86_64);
	assert_int_equal(jitmap_image_arch(img), JITMAP_ARCH_X86_64);
	assert_null(jitmap_image_stackmap(img));
	uint64_t addr = 1, size = 1;
	assert_int_equal(jitmap_image_stackmap_section(img, &addr, &size), -ENOENT);
	jitmap_image_set_load_bias(img, 0x1000);
	assert_null(jitmap_image_symbolize(img, 0x1000, NULL));
	jitmap_image_free(img);
}

/* -- The real object -- */

static void check_fixture(jitmap_image *img, const sm_bytes *obj, uint64_t bias)
{
	assert_int_equal(jitmap_image_elf_type(img), ET_REL);
	assert_int_equal(jitmap_image_elf_machine(img), EM_X86_64);
	assert_int_equal(jitmap_image_arch(img), JITMAP_ARCH_X86_64);
	jitmap_stackmap *sm = jitmap_image_stackmap(img);
	assert_non_null(sm);
	assert_int_equal(jitmap_stackmap_arch(sm), JITMAP_ARCH_X86_64);
	assert_int_equal(jitmap_stackmap_byte_order(sm), JITMAP_ORDER_LITTLE);
	const Elf64_Shdr sh = section(obj, ".llvm_stackmaps");
	uint64_t addr, size;
	assert_int_equal(jitmap_image_stackmap_section(img, &addr, &size), 0);
	assert_int_equal(addr, sh.sh_addr + bias);
	assert_int_equal(size, sh.sh_size);

	/* Two functions in one .text: relocated to their symbols' offsets, named by them. */
	assert_int_equal(jitmap_stackmap_num_functions(sm), 2);
	const jitmap_function *f0 = jitmap_stackmap_function(sm, 0);
	const jitmap_function *f1 = jitmap_stackmap_function(sm, 1);
	assert_int_equal(f0->raw_address, 0);
	assert_int_equal(f1->raw_address, 0);
	assert_int_equal(f0->address, bias);
	assert_true(f1->address > f0->address);
	assert_string_equal(f0->name, "fixture_first");
	assert_string_equal(f1->name, "fixture_second");
	assert_int_equal(f0->record_count, 1);
	assert_int_equal(f1->record_count, 2);
	/* Sizes from the symbols bound each function: fixture_first ends before fixture_second. */
	const uint64_t size0 = jitmap_stackmap_function_size(sm, 0);
	assert_true(size0 > 0 && f0->address + size0 <= f1->address);
	assert_true(jitmap_stackmap_function_size(sm, 1) > 0);

	uint64_t v;
	assert_int_equal(jitmap_stackmap_num_constants(sm), 1);
	assert_int_equal(jitmap_stackmap_constant(sm, 0, &v), 0);
	assert_int_equal(v, UINT64_C(9000000000));
	assert_int_equal(jitmap_stackmap_num_records(sm), 3);
	for (size_t i = 0; i < 3; i++) {
		const jitmap_record *r = jitmap_stackmap_record(sm, i);
		assert_int_equal(r->id, i + 1);
		assert_int_equal(r->function, i == 0 ? 0 : 1);
		const uint64_t pc = jitmap_record_pc(sm, r);
		const jitmap_record *out[2];
		assert_int_equal(jitmap_stackmap_lookup(sm, pc, out, 2), 1);
		assert_ptr_equal(out[0], r);
		/* The PC is inside its function's symbol. */
		uint64_t off = UINT64_MAX;
		assert_string_equal(jitmap_image_symbolize(img, pc, &off),
				    i == 0 ? "fixture_first" : "fixture_second");
		assert_int_equal(off, r->instruction_offset);
	}
	const jitmap_record *r1 = jitmap_stackmap_record(sm, 1);
	assert_int_equal(r1->num_locations, 2);
	assert_int_equal(r1->locations[1].kind, JITMAP_LOC_CONSTANT_INDEX);
	assert_int_equal(jitmap_location_constant(sm, r1, &r1->locations[1], &v), 0);
	assert_int_equal(v, UINT64_C(9000000000));

	uint64_t off = 7;
	assert_string_equal(jitmap_image_symbolize(img, f1->address, &off), "fixture_second");
	assert_int_equal(off, 0);
	assert_string_equal(jitmap_image_symbolize(img, f1->address + 3, NULL), "fixture_second");
	assert_null(jitmap_image_symbolize(img, UINT64_MAX, &off));
	if (bias)
		assert_null(jitmap_image_symbolize(img, bias - 1, &off));
}

static void test_fixture_file_and_memory(void **state)
{
	(void)state;
	sm_bytes obj;
	NEED_FIXTURE(&obj);
	jitmap_error err;
	jitmap_image *img = jitmap_image_open_file(fixture_path, &err);
	if (!img)
		fail_msg("open_file: %s at %llu", err.reason, (unsigned long long)err.offset);
	check_fixture(img, &obj, 0);
	jitmap_image_free(img);

	img = jitmap_image_open_memory(obj.data, obj.len, &err);
	assert_non_null(img);
	memset(obj.data, 0, obj.len); /* the image holds its own copy */
	sm_bytes again = sm_read_file(fixture_path);
	check_fixture(img, &again, 0);
	jitmap_image_free(img);
	sm_bytes_free(&again);
	sm_bytes_free(&obj);
}

/* A load bias moves stackmap lookups and symbols together; a new bias replaces the old. */
static void test_load_bias(void **state)
{
	(void)state;
	sm_bytes obj;
	NEED_FIXTURE(&obj);
	jitmap_image *img = jitmap_image_open_memory(obj.data, obj.len, NULL);
	assert_non_null(img);
	jitmap_stackmap *sm = jitmap_image_stackmap(img);
	const jitmap_record *r2 = jitmap_stackmap_record(sm, 2);
	const uint64_t pc = jitmap_record_pc(sm, r2);
	const uint64_t second = jitmap_stackmap_function(sm, 1)->address;

	static const uint64_t biases[] = {0x400000, 0x7f0000001000, 0x1000, 0};
	uint64_t prev = 0;
	for (size_t i = 0; i < ARRAY_LEN(biases); i++) {
		const uint64_t bias = biases[i];
		jitmap_image_set_load_bias(img, bias);
		check_fixture(img, &obj, bias);
		assert_int_equal(jitmap_stackmap_function(sm, 1)->address, second + bias);
		assert_int_equal(jitmap_stackmap_lookup(sm, pc + bias, NULL, 0), 1);
		if (prev != bias) /* the old PC no longer has a record */
			assert_int_equal(jitmap_stackmap_lookup(sm, pc + prev, NULL, 0), 0);
		uint64_t off;
		assert_string_equal(jitmap_image_symbolize(img, second + bias + 5, &off),
				    "fixture_second");
		assert_int_equal(off, 5);
		prev = bias;
	}
	/* Below the first symbol there is nothing. */
	jitmap_image_set_load_bias(img, 0x400000);
	assert_null(jitmap_image_symbolize(img, second, NULL));
	jitmap_image_free(img);
	sm_bytes_free(&obj);
}

/* Every proper prefix of the object is rejected (its section headers come last). */
static void test_fixture_truncated(void **state)
{
	(void)state;
	sm_bytes obj;
	NEED_FIXTURE(&obj);
	for (size_t n = 0; n < obj.len; n++) {
		uint8_t *copy = malloc(n ? n : 1);
		memcpy(copy, obj.data, n);
		jitmap_error err;
		jitmap_image *img = jitmap_image_open_memory(copy, n, &err);
		if (img)
			fail_msg("%zu-byte prefix of %zu opened", n, obj.len);
		assert_int_equal(err.code, -EINVAL);
		assert_true(err.reason[0] != 0);
		if (n >= sizeof(Elf64_Ehdr)) {
			assert_contains(err.reason, "truncated");
			assert_int_equal(err.offset, offsetof(Elf64_Ehdr, e_shoff));
		}
		free(copy);
	}
	/* The same through a file. */
	char path[256];
	write_temp(path, obj.data, obj.len / 2);
	jitmap_error err;
	assert_null(jitmap_image_open_file(path, &err));
	assert_contains(err.reason, "truncated");
	unlink(path);
	sm_bytes_free(&obj);
}

/* Corrupted stackmap bytes and relocations: errors at file offsets inside the section. */
static void test_fixture_corrupted(void **state)
{
	(void)state;
	sm_bytes obj;
	NEED_FIXTURE(&obj);
	jitmap_image *good = jitmap_image_open_memory(obj.data, obj.len, NULL);
	assert_non_null(good);
	const jitmap_stackmap *sm = jitmap_image_stackmap(good);
	const Elf64_Shdr smh = section(&obj, ".llvm_stackmaps");
	const Elf64_Shdr rela = section(&obj, ".rela.llvm_stackmaps");
	const uint64_t r0 = jitmap_stackmap_record(sm, 0)->section_offset;
	const uint64_t r1 = jitmap_stackmap_record(sm, 1)->section_offset;
	const uint64_t f1 = jitmap_stackmap_function(sm, 1)->section_offset;
	jitmap_image_free(good);
	assert_int_equal(rela.sh_size, 2 * sizeof(Elf64_Rela));

	const struct {
		const char *name;
		uint64_t at; /* file offset to patch */
		unsigned width;
		uint64_t value;
		uint64_t error_at;
		const char *reason;
	} cases[] = {
		{"version", smh.sh_offset, 1, 9, smh.sh_offset, "unknown stackmap version 9"},
		{"record flags", smh.sh_offset + r0 + 12, 2, 1, smh.sh_offset + r0 + 12,
		 "record 0: non-zero reserved field"},
		{"location kind", smh.sh_offset + r1 + 16 + 12, 1, 7, smh.sh_offset + r1 + 16 + 12,
		 "record 1 location 1: unknown location kind 7"},
		{"last padding byte", smh.sh_offset + smh.sh_size - 1, 1, 1,
		 smh.sh_offset + smh.sh_size - 4, "record 2: non-zero padding after the live-outs"},
		{"record count", smh.sh_offset + 12, 4, 4, smh.sh_offset + 12,
		 "function record counts add up to 3, but the header says 4 records"},
		/* .rela.llvm_stackmaps: {r_offset, r_info, r_addend} per entry */
		{"relocation target", rela.sh_offset + sizeof(Elf64_Rela), 8, f1 + 8,
		 rela.sh_offset + sizeof(Elf64_Rela), "does not hit a Function Address field"},
		{"relocation symbol", rela.sh_offset + 12, 4, 99, rela.sh_offset,
		 "relocation names symbol 99, which does not exist"},
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		sm_bytes bad = sm_bytes_copy(&obj);
		sm_put(bad.data + cases[i].at, cases[i].value, cases[i].width, JITMAP_ORDER_LITTLE);
		jitmap_error err;
		errno = 0;
		if (jitmap_image_open_memory(bad.data, bad.len, &err))
			fail_msg("%s: opened", cases[i].name);
		assert_int_equal(errno, EINVAL);
		assert_int_equal(err.code, -EINVAL);
		if (err.offset != cases[i].error_at || !strstr(err.reason, cases[i].reason))
			fail_msg("%s: got 0x%llx \"%s\", want 0x%llx \"%s\"", cases[i].name,
				 (unsigned long long)err.offset, err.reason,
				 (unsigned long long)cases[i].error_at, cases[i].reason);
		/* A parse error lies inside the stackmap section, in file terms. */
		if (cases[i].at < smh.sh_offset + smh.sh_size && cases[i].at >= smh.sh_offset)
			assert_in_range(err.offset, smh.sh_offset, smh.sh_offset + smh.sh_size - 1);

		/* The same from a file. */
		char path[256];
		write_temp(path, bad.data, bad.len);
		assert_null(jitmap_image_open_file(path, &err));
		assert_int_equal(err.offset, cases[i].error_at);
		unlink(path);
		sm_bytes_free(&bad);
	}
	sm_bytes_free(&obj);
}

/* -- What a debugger's JIT reader needs (jitmap_image_open_memory_opts and accessors) -- */

static void test_jit_reader_view(void **state)
{
	(void)state;
	sm_bytes obj;
	NEED_FIXTURE(&obj);
	/* As LLVM's JIT registers an object: sh_addr of the loaded text patched to its address. */
	const uint64_t load = 0x7f0000100000;
	Elf64_Shdr *text = sm_elf64_section(&obj, ".text");
	text->sh_addr = load;
	JITMAP_OPTS(const jitmap_image_opts, opts, .flags = JITMAP_IMAGE_SKIP_STACKMAP);
	jitmap_error err;
	jitmap_image *img = jitmap_image_open_memory_opts(obj.data, obj.len, &opts, &err);
	if (!img)
		fail_msg("open: %s", err.reason);
	assert_int_equal(jitmap_image_elf_class(img), ELFCLASS64);
	assert_int_equal(jitmap_image_byte_order(img), JITMAP_ORDER_LITTLE);
	/* One code range: .text where it was placed. */
	assert_int_equal(jitmap_image_num_code_ranges(img), 1);
	assert_int_equal(jitmap_image_code_range(img, 0)->lo, load);
	assert_int_equal(jitmap_image_code_range(img, 0)->hi, load + text->sh_size);
	assert_null(jitmap_image_code_range(img, 1));
	/* Two function symbols, sorted, inside .text, not absolute. */
	assert_int_equal(jitmap_image_num_symbols(img), 2);
	jitmap_image_symbol_info a = {.sz = sizeof(a)}, b = {.sz = sizeof(b)};
	assert_int_equal(jitmap_image_symbol(img, 0, &a), 0);
	assert_int_equal(jitmap_image_symbol(img, 1, &b), 0);
	assert_int_equal(jitmap_image_symbol(img, 2, &b), -ERANGE);
	assert_int_equal(jitmap_image_symbol(img, 1, &b), 0);
	assert_string_equal(a.name, "fixture_first");
	assert_string_equal(b.name, "fixture_second");
	assert_int_equal(a.address, load);
	assert_true(a.size > 0 && a.address + a.size <= b.address);
	assert_int_equal(a.flags, JITMAP_SYMBOL_IN_CODE);
	assert_false(jitmap_image_symbol_values_are_addresses(img));
	/* The stackmap section is not placed: skipped, its bytes kept for the caller. */
	uint64_t addr, size;
	size_t copy_len;
	assert_int_equal(jitmap_image_stackmap_section(img, &addr, &size), 0);
	assert_int_equal(addr, 0);
	assert_null(jitmap_image_stackmap(img));
	const void *copy = jitmap_image_stackmap_copy(img, &copy_len);
	const Elf64_Shdr sm = section(&obj, ".llvm_stackmaps");
	assert_non_null(copy);
	assert_int_equal(copy_len, sm.sh_size);
	assert_memory_equal(copy, obj.data + sm.sh_offset, copy_len);
	/* llc -O2 objects carry .eh_frame (not placed here) and no DWARF. */
	assert_int_equal(jitmap_image_eh_frame(img, &addr, &size), -ENOENT);
	assert_false(jitmap_image_has_debug_info(img));
	jitmap_image_free(img);

	/* Symbols holding their addresses in st_value (issue 10, defect 4): read as addresses. */
	Elf64_Ehdr *eh = (Elf64_Ehdr *)obj.data;
	Elf64_Shdr *shs = (Elf64_Shdr *)(obj.data + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (shs[i].sh_type != SHT_SYMTAB)
			continue;
		Elf64_Sym *syms = (Elf64_Sym *)(obj.data + shs[i].sh_offset);
		for (size_t k = 0; k < shs[i].sh_size / sizeof(*syms); k++)
			if (ELF64_ST_TYPE(syms[k].st_info) == STT_FUNC)
				syms[k].st_value += load;
	}
	img = jitmap_image_open_memory_opts(obj.data, obj.len, &opts, &err);
	assert_non_null(img);
	assert_true(jitmap_image_symbol_values_are_addresses(img));
	assert_int_equal(jitmap_image_symbol(img, 0, &a), 0);
	assert_int_equal(a.address, load);
	assert_int_equal(a.flags, JITMAP_SYMBOL_IN_CODE | JITMAP_SYMBOL_VALUE_IS_ADDRESS);
	assert_string_equal(jitmap_image_symbolize(img, load + 1, NULL), "fixture_first");
	jitmap_image_free(img);

	/* Options are checked as libbpf's: too small, unknown fields set, unknown flags. */
	jitmap_image_opts bad = {.sz = 1};
	assert_null(jitmap_image_open_memory_opts(obj.data, obj.len, &bad, &err));
	assert_int_equal(err.code, -EINVAL);
	memset(&bad, 0, sizeof(bad)); /* padding too: only the unknown flag is wrong */
	bad.sz = sizeof(bad);
	bad.flags = 0x80;
	assert_null(jitmap_image_open_memory_opts(obj.data, obj.len, &bad, &err));
	assert_contains(err.reason, "unknown flags");
	sm_bytes_free(&obj);
}

/* A relocation jitmap does not know costs the field it touches, never the file (issue 10,
 * defect 1): the first Function Address relocation becomes R_X86_64_PC32. */
static void test_unknown_relocation(void **state)
{
	(void)state;
	sm_bytes obj;
	NEED_FIXTURE(&obj);
	Elf64_Shdr *rela = sm_elf64_section(&obj, ".rela.llvm_stackmaps");
	Elf64_Rela *r = (Elf64_Rela *)(obj.data + rela->sh_offset);
	const uint64_t field = r[0].r_offset;
	r[0].r_info = ELF64_R_INFO(ELF64_R_SYM(r[0].r_info), R_X86_64_PC32);
	jitmap_error err;
	jitmap_image *img = jitmap_image_open_memory(obj.data, obj.len, &err);
	if (!img)
		fail_msg("open: %s", err.reason);
	assert_int_equal(jitmap_image_num_warnings(img), 1);
	assert_contains(jitmap_image_warning(img, 0), "relocation type 2 at .llvm_stackmaps+0x");
	assert_contains(jitmap_image_warning(img, 0), "left as stored");
	assert_null(jitmap_image_warning(img, 1));
	const jitmap_stackmap *sm = jitmap_image_stackmap(img);
	assert_non_null(sm);
	assert_int_equal(jitmap_stackmap_num_records(sm), 3);
	/* The other relocation still applied; the touched function keeps its stored 0. */
	size_t untouched = 0;
	for (size_t i = 0; i < jitmap_stackmap_num_functions(sm); i++) {
		const jitmap_function *f = jitmap_stackmap_function(sm, i);
		if (f->section_offset == field)
			assert_int_equal(f->address, f->raw_address);
		else
			untouched++;
	}
	assert_int_equal(untouched, 1);
	/* Records keep their stored offsets where no relocation resolves them. */
	const jitmap_record *rec = jitmap_stackmap_record(sm, 0);
	assert_int_equal(rec->raw_instruction_offset, rec->instruction_offset);
	jitmap_image_free(img);
	sm_bytes_free(&obj);
}

/* -- Compressed sections (jitmap_elf_compressed, jitmap_elf_decompress) -- */

#define DEBUG_BYTES 70000

static uint8_t debug_byte(size_t i)
{
	return (uint8_t)((i * 7) ^ (i >> 8));
}

/* A 64-bit relocatable object with a .debug_info of DEBUG_BYTES patterned bytes, compressed
 * with zlib when `compress`, at `path` (a new temporary file; the caller unlinks it). */
static void write_debug_object(char *path, bool compress)
{
	static uint8_t bytes[DEBUG_BYTES];
	static char names[] = "\0.debug_info\0.shstrtab";
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = debug_byte(i);
	write_temp(path, "", 0);
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	int fd = open(path, O_RDWR | O_TRUNC);
	assert_true(fd >= 0);
	Elf *e = elf_begin(fd, ELF_C_WRITE, NULL);
	assert_non_null(e);
	assert_non_null(gelf_newehdr(e, ELFCLASS64));
	GElf_Ehdr eh;
	assert_non_null(gelf_getehdr(e, &eh));
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_type = ET_REL;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	Elf_Scn *dbg = elf_newscn(e), *str = elf_newscn(e);
	Elf_Data *d = elf_newdata(dbg);
	d->d_buf = bytes;
	d->d_size = sizeof(bytes);
	d->d_type = ELF_T_BYTE;
	d->d_align = 1;
	GElf_Shdr sh;
	gelf_getshdr(dbg, &sh);
	sh.sh_name = 1;
	sh.sh_type = SHT_PROGBITS;
	gelf_update_shdr(dbg, &sh);
	d = elf_newdata(str);
	d->d_buf = names;
	d->d_size = sizeof(names);
	d->d_type = ELF_T_BYTE;
	d->d_align = 1;
	gelf_getshdr(str, &sh);
	sh.sh_name = 13;
	sh.sh_type = SHT_STRTAB;
	gelf_update_shdr(str, &sh);
	eh.e_shstrndx = (Elf64_Half)elf_ndxscn(str);
	assert_true(gelf_update_ehdr(e, &eh));
	if (compress)
		assert_int_equal(elf_compress(dbg, ELFCOMPRESS_ZLIB, 0), 1);
	assert_true(elf_update(e, ELF_C_WRITE) > 0);
	elf_end(e);
	close(fd);
}

/* The bytes of the first section of the file at `path`, and whether it is compressed. */
static void check_debug_section(const char *path, bool want_compressed)
{
	const int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	Elf_Scn *scn = elf_getscn(e, 1);
	GElf_Shdr sh;
	assert_non_null(gelf_getshdr(scn, &sh));
	assert_int_equal(!!(sh.sh_flags & SHF_COMPRESSED), want_compressed);
	if (!want_compressed) {
		Elf_Data *d = elf_getdata(scn, NULL);
		assert_non_null(d);
		assert_int_equal(d->d_size, DEBUG_BYTES);
		const uint8_t *p = d->d_buf;
		size_t bad = 0;
		for (size_t i = 0; i < DEBUG_BYTES; i++)
			bad += p[i] != debug_byte(i);
		assert_int_equal(bad, 0);
	}
	elf_end(e);
	close(fd);
}

static void test_compressed_sections(void **state)
{
	(void)state;
	char zpath[256], plain[256], copy[256];
	write_debug_object(zpath, true);
	write_debug_object(plain, false);
	check_debug_section(zpath, true);

	int fd = open(zpath, O_RDONLY);
	assert_true(fd >= 0);
	uint64_t total = 0;
	assert_int_equal(jitmap_elf_compressed(fd, &total), 1);
	/* .debug_info uncompressed, .shstrtab, and the null section */
	assert_int_equal(total, DEBUG_BYTES + sizeof("\0.debug_info\0.shstrtab"));
	assert_int_equal(lseek(fd, 0, SEEK_CUR), 0);
	write_temp(copy, "", 0);
	int out = open(copy, O_RDWR);
	assert_true(out >= 0);
	assert_int_equal(jitmap_elf_decompress(fd, out), 0);
	close(out);
	close(fd);
	check_debug_section(copy, false);

	/* The copy, and a file never compressed, have no compressed section. */
	fd = open(copy, O_RDONLY);
	assert_int_equal(jitmap_elf_compressed(fd, &total), 0);
	assert_int_equal(total, DEBUG_BYTES + sizeof("\0.debug_info\0.shstrtab"));
	close(fd);
	fd = open(plain, O_RDONLY);
	assert_int_equal(jitmap_elf_compressed(fd, NULL), 0);
	close(fd);

	/* Not ELF: no compressed section, and nothing to inflate. */
	char text[256];
	write_temp(text, "not an ELF file\n", 16);
	fd = open(text, O_RDONLY);
	assert_int_equal(jitmap_elf_compressed(fd, &total), 0);
	assert_int_equal(total, 0);
	out = open(copy, O_RDWR | O_TRUNC);
	assert_int_equal(jitmap_elf_decompress(fd, out), -EINVAL);
	assert_int_equal(jitmap_elf_compressed(-1, NULL), 0);
	assert_int_equal(jitmap_elf_decompress(-1, out), -EINVAL);
	close(out);
	close(fd);
	unlink(zpath);
	unlink(plain);
	unlink(copy);
	unlink(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_elf32),
		cmocka_unit_test(test_truncated_headers),
		cmocka_unit_test(test_section_header_size),
		cmocka_unit_test(test_no_stackmap),
		cmocka_unit_test(test_fixture_file_and_memory),
		cmocka_unit_test(test_load_bias),
		cmocka_unit_test(test_fixture_truncated),
		cmocka_unit_test(test_fixture_corrupted),
		cmocka_unit_test(test_jit_reader_view),
		cmocka_unit_test(test_unknown_relocation),
		cmocka_unit_test(test_compressed_sections),
	};
	return cmocka_run_group_tests_name("elf", tests, NULL, NULL);
}
