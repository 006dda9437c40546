/* test_core.c: jitmap_stopped_open_core on synthetic cores (core_builder: x86-64 and AArch64
 * little endian, s390x big endian) and on a real core the kernel writes for a child of this
 * test; every question a core answers, asked of the one stopped-process handle.
 *
 * Synthetic cores check every accessor against what the builder wrote: registers by DWARF
 * number, the auxiliary vector, NT_FILE mappings, memory reads across segment edges and into
 * mapped files (through a sysroot), a JIT descriptor list read in the core's byte order. The
 * hostile table breaks one thing at a time (notes with huge sizes, NT_FILE counts beyond the
 * note, overlapping segments, contents past the end of the file, truncation) and pins the
 * outcome: a failure with its reason, or a core that still opens with a warning.
 */
#define _GNU_SOURCE
#include "unit.h"

#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <limits.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lz4frame.h>
#include <lzma.h>
#include <zstd.h>

#include "core_builder.h"
#include "jitmap/core.h"
#include "jitmap/process.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

/* -- A synthetic process -- */

#define SEG_A UINT64_C(0x10000) /* 0x1000 bytes, all dumped */
#define SEG_B UINT64_C(0x11000) /* adjacent to A: 0x1000 bytes, the first 0x800 dumped */
#define SEG_C UINT64_C(0x20000) /* a JIT descriptor and two entries */
#define MAP_LIB UINT64_C(0x11000) /* NT_FILE: [0x11000, 0x13000) from lib.bin at offset 0 */
#define MAP_OTHER UINT64_C(0x30000) /* [0x30000, 0x32000) from other, at page 2 */
#define TID 4242
#define AT_PAGESZ_ 6
#define AT_ENTRY_ 9

static uint8_t seg_a[0x1000], seg_b[0x800], seg_c[0x100];
static uint8_t lib_bytes[0x2000];

static uint8_t pattern_a(size_t i) { return (uint8_t)(i * 7 + 1); }
static uint8_t pattern_b(size_t i) { return (uint8_t)(i * 3 + 5); }
static uint8_t pattern_lib(size_t i) { return (uint8_t)(i ^ 0x5a) + (uint8_t)(i >> 8); }

/* The value the builder gives register slot `k` of pr_reg. */
static uint64_t reg_value(size_t k) { return UINT64_C(0x1000) + k; }

struct arch_case {
	const char *name;
	unsigned machine;
	jitmap_byte_order order;
	jitmap_arch arch;
};

static const struct arch_case arches[] = {
	{"x86-64", EM_X86_64, JITMAP_ORDER_LITTLE, JITMAP_ARCH_X86_64},
	{"aarch64", EM_AARCH64, JITMAP_ORDER_LITTLE, JITMAP_ARCH_AARCH64},
	{"s390x", EM_S390, JITMAP_ORDER_BIG, JITMAP_ARCH_S390X},
};

/* pr_reg for `machine`, as the kernel lays it out; returns its size. */
static size_t make_regs(const core_builder *b, uint8_t *r)
{
	size_t k;
	switch (b->machine) {
	case EM_X86_64: /* 27 slots of user_regs_struct */
		for (k = 0; k < 27; k++)
			cb_put(b, r + 8 * k, reg_value(k), 8);
		return 27 * 8;
	case EM_AARCH64: /* regs[31], sp, pc, pstate */
		for (k = 0; k < 34; k++)
			cb_put(b, r + 8 * k, reg_value(k), 8);
		return 34 * 8;
	case EM_S390: /* psw mask, psw addr, gprs[16], acrs[16] of 4 bytes, orig_gpr2 */
		for (k = 0; k < 18; k++)
			cb_put(b, r + 8 * k, reg_value(k), 8);
		for (k = 0; k < 16; k++)
			cb_put(b, r + 144 + 4 * k, 0xa0 + k, 4);
		cb_put(b, r + 208, 0xdead, 8);
		return 216;
	default:
		return 0;
	}
}

/* The descriptor at SEG_C and entries at SEG_C + 0x40 and + 0x60, in the core's order. */
static void make_jit_list(const core_builder *b)
{
	memset(seg_c, 0, sizeof(seg_c));
	cb_put(b, seg_c, 1, 4);
	cb_put(b, seg_c + 4, 1, 4);
	cb_put(b, seg_c + 8, SEG_C + 0x40, 8);
	cb_put(b, seg_c + 16, SEG_C + 0x40, 8);
	cb_put(b, seg_c + 0x40, SEG_C + 0x60, 8);
	cb_put(b, seg_c + 0x50, SEG_A, 8);
	cb_put(b, seg_c + 0x58, 0x1000, 8);
	cb_put(b, seg_c + 0x68, SEG_C + 0x40, 8);
	cb_put(b, seg_c + 0x70, SEG_A + 0x800, 8);
	cb_put(b, seg_c + 0x78, 0x10, 8);
}

/* A whole process: one or two threads, auxv, NT_FILE, segments A, B, C. */
static void make_process(core_builder *b, unsigned machine, jitmap_byte_order order,
			 int threads)
{
	cb_init(b, machine, order);
	for (size_t i = 0; i < sizeof(seg_a); i++)
		seg_a[i] = pattern_a(i);
	for (size_t i = 0; i < sizeof(seg_b); i++)
		seg_b[i] = pattern_b(i);
	make_jit_list(b);
	uint8_t regs[512];
	size_t n = make_regs(b, regs);
	for (int t = 0; t < threads; t++)
		cb_prstatus(b, TID + (uint32_t)t, t ? 0 : SIGSEGV, regs, n);
	const uint64_t aux[] = {AT_PAGESZ_, 4096, AT_ENTRY_, SEG_A + 0x100};
	cb_auxv(b, aux, 2);
	/* Out of address order, to check the sorting. */
	const uint64_t maps[][3] = {{MAP_OTHER, MAP_OTHER + 0x2000, 2}, {MAP_LIB, MAP_LIB + 0x2000, 0}};
	const char *const paths[] = {"/jitmap-test/other", "/lib.bin"};
	cb_file(b, 0x1000, 2, maps, paths);
	cb_load(b, SEG_A, 0x1000, seg_a, sizeof(seg_a));
	cb_load(b, SEG_C, sizeof(seg_c), seg_c, sizeof(seg_c));
	cb_load(b, SEG_B, 0x1000, seg_b, sizeof(seg_b));
}

static jitmap_stopped *open_bytes(const uint8_t *bytes, size_t len, const jitmap_stopped_opts *opts)
{
	jitmap_error err;
	jitmap_stopped *c = jitmap_stopped_open_core_memory(bytes, len, opts, &err);
	if (!c)
		fail_msg("open failed at offset %llu: %s", (unsigned long long)err.offset, err.reason);
	return c;
}

static int has_warning(const jitmap_stopped *c, const char *needle)
{
	for (size_t i = 0; jitmap_stopped_warning(c, i); i++)
		if (strstr(jitmap_stopped_warning(c, i), needle))
			return 1;
	return 0;
}

/* The status of the first problem whose sentence holds `needle`: its kind and code as
 * jitmap_stopped_problem gives them (a client acts on these, never on the words). */
static void assert_status(const jitmap_stopped *c, const char *needle, jitmap_problem_kind kind,
			  jitmap_problem_code code)
{
	jitmap_stopped_problem_info pi = {.sz = sizeof(pi)};
	for (size_t i = 0; jitmap_stopped_problem(c, i, &pi) == 0; i++) {
		assert_ptr_equal(pi.text, jitmap_stopped_warning(c, i));
		if (!strstr(pi.text, needle))
			continue;
		assert_int_equal(pi.kind, kind);
		assert_int_equal(pi.code, code);
		return;
	}
	fail_msg("no problem says \"%s\"", needle);
}

static void check_bytes(const uint8_t *got, size_t n, uint64_t addr)
{
	for (size_t i = 0; i < n; i++) {
		const uint64_t a = addr + i;
		uint8_t want;
		if (a >= SEG_A && a < SEG_A + 0x1000)
			want = pattern_a((size_t)(a - SEG_A));
		else if (a >= SEG_B && a < SEG_B + 0x800)
			want = pattern_b((size_t)(a - SEG_B));
		else
			want = pattern_lib((size_t)(a - MAP_LIB));
		if (got[i] != want)
			fail_msg("byte at 0x%llx is 0x%02x, want 0x%02x", (unsigned long long)a, got[i],
				 want);
	}
}

/* -- Well-formed synthetic cores -- */

static void check_registers(const jitmap_stopped *c, const struct arch_case *a)
{
	const jitmap_stopped_thread_info *t = jitmap_stopped_thread(c, 0);
	uint64_t v;
	assert_non_null(t);
	assert_int_equal(t->tid, TID);
	assert_int_equal(t->signal, SIGSEGV);
	switch (a->machine) {
	case EM_X86_64: {
		/* DWARF number -> user_regs_struct slot. */
		static const int slot[][2] = {{0, 10}, {1, 12}, {2, 11}, {3, 5},  {4, 13}, {5, 14},
					      {6, 4},  {7, 19}, {8, 9},  {9, 8},  {10, 7}, {11, 6},
					      {12, 3}, {13, 2}, {14, 1}, {15, 0}, {16, 16}, {49, 18},
					      {50, 24}, {51, 17}, {52, 20}, {53, 23}, {54, 25},
					      {55, 26}, {58, 21}, {59, 22}};
		assert_int_equal(t->num_gregs, ARRAY_LEN(slot));
		for (size_t i = 0; i < ARRAY_LEN(slot); i++) {
			assert_int_equal(jitmap_stopped_thread_reg(t, (unsigned)slot[i][0], &v), 0);
			assert_int_equal(v, reg_value((size_t)slot[i][1]));
		}
		for (size_t i = 0; i < t->num_gregs; i++) /* orig_rax is not a DWARF register */
			assert_true(t->gregs[i].value != reg_value(15));
		assert_int_equal(jitmap_stopped_thread_reg(t, 17, &v), -ENOENT);
		break;
	}
	case EM_AARCH64:
		assert_int_equal(t->num_gregs, 33);
		for (unsigned r = 0; r <= 32; r++) {
			assert_int_equal(jitmap_stopped_thread_reg(t, r, &v), 0);
			assert_int_equal(v, reg_value(r));
		}
		assert_int_equal(jitmap_stopped_thread_reg(t, 33, &v), -ENOENT);
		break;
	case EM_S390:
		assert_int_equal(t->num_gregs, 16 + 16 + 2);
		for (unsigned r = 0; r < 16; r++) {
			assert_int_equal(jitmap_stopped_thread_reg(t, r, &v), 0);
			assert_int_equal(v, reg_value(2 + r));
			assert_int_equal(jitmap_stopped_thread_reg(t, 48 + r, &v), 0);
			assert_int_equal(v, 0xa0 + r);
		}
		assert_int_equal(jitmap_stopped_thread_reg(t, 64, &v), 0);
		assert_int_equal(v, reg_value(0));
		assert_int_equal(jitmap_stopped_thread_reg(t, 65, &v), 0);
		assert_int_equal(v, reg_value(1));
		break;
	}
	for (size_t i = 1; i < t->num_gregs; i++)
		assert_true(t->gregs[i - 1].regno < t->gregs[i].regno);

	/* The thread's target: registers in the core's byte order. */
	jitmap_target tt = jitmap_stopped_thread_target((jitmap_stopped *)c, 0);
	uint8_t buf[8], want[8];
	char why[128] = "";
	const unsigned sp = a->machine == EM_X86_64 ? 7 : a->machine == EM_AARCH64 ? 31 : 15;
	assert_int_equal(jitmap_stopped_thread_reg(t, sp, &v), 0);
	assert_int_equal(tt.read_reg(tt.ctx, sp, buf, 8, why, sizeof(why)), 0);
	for (int i = 0; i < 8; i++)
		want[i] = (uint8_t)(v >> (8 * (a->order == JITMAP_ORDER_BIG ? 7 - i : i)));
	assert_memory_equal(buf, want, 8);
	assert_int_equal(tt.read_reg(tt.ctx, 1000, buf, 8, why, sizeof(why)), -ENOENT);
	assert_contains(why, "no register 1000 for thread 4242");
	assert_int_equal(tt.read_mem(tt.ctx, SEG_A, buf, 8, why, sizeof(why)), 0);
	check_bytes(buf, 8, SEG_A);
	assert_null(jitmap_stopped_thread_target((jitmap_stopped *)c, 99).read_mem);
}

static void test_synthetic(void **state)
{
	(void)state;
	for (size_t ai = 0; ai < ARRAY_LEN(arches); ai++) {
		const struct arch_case *a = &arches[ai];
		core_builder b;
		make_process(&b, a->machine, a->order, 2);
		size_t len;
		uint8_t *bytes = cb_emit(&b, &len);
		assert_non_null(bytes);
		JITMAP_OPTS(const jitmap_stopped_opts, opts, .flags = JITMAP_STOPPED_NO_FILES);
		jitmap_stopped *c = open_bytes(bytes, len, &opts);

		assert_int_equal(jitmap_stopped_arch(c), a->arch);
		assert_int_equal(jitmap_stopped_elf_machine(c), a->machine);
		assert_int_equal(jitmap_stopped_byte_order(c), a->order);
		if (jitmap_stopped_warning(c, 0))
			fail_msg("%s: unexpected warning: %s", a->name, jitmap_stopped_warning(c, 0));

		assert_int_equal(jitmap_stopped_num_threads(c), 2);
		check_registers(c, a);
		assert_int_equal(jitmap_stopped_thread(c, 1)->tid, TID + 1);
		assert_int_equal(jitmap_stopped_thread(c, 1)->signal, 0);
		assert_null(jitmap_stopped_thread(c, 2));

		uint64_t v = 0;
		assert_int_equal(jitmap_stopped_auxv(c, AT_PAGESZ_, &v), 0);
		assert_int_equal(v, 4096);
		assert_int_equal(jitmap_stopped_auxv(c, AT_ENTRY_, &v), 0);
		assert_int_equal(v, SEG_A + 0x100);
		assert_int_equal(jitmap_stopped_auxv(c, 99, &v), -ENOENT);
		assert_int_equal(jitmap_stopped_auxv(c, 0, &v), -ENOENT); /* AT_NULL ends it */

		assert_int_equal(jitmap_stopped_num_mappings(c), 2);
		const jitmap_stopped_mapping_info *m = jitmap_stopped_mapping(c, 0);
		assert_int_equal(m->start, MAP_LIB);
		assert_int_equal(m->end, MAP_LIB + 0x2000);
		assert_int_equal(m->offset, 0);
		assert_string_equal(m->core_path, "/lib.bin");
		m = jitmap_stopped_mapping(c, 1);
		assert_int_equal(m->start, MAP_OTHER);
		assert_int_equal(m->offset, 0x2000);
		assert_string_equal(m->path, "/jitmap-test/other");
		assert_null(jitmap_stopped_mapping(c, 2));

		/* Memory: within a segment, across the A|B edge, up to B's dumped end. */
		const jitmap_target t = jitmap_stopped_target(c);
		assert_null(t.read_reg);
		uint8_t buf[0x1800];
		char why[128];
		assert_int_equal(t.read_mem(t.ctx, SEG_A + 5, buf, 100, why, sizeof(why)), 0);
		check_bytes(buf, 100, SEG_A + 5);
		assert_int_equal(t.read_mem(t.ctx, SEG_B - 16, buf, 32, why, sizeof(why)), 0);
		check_bytes(buf, 32, SEG_B - 16);
		assert_int_equal(t.read_mem(t.ctx, SEG_A, buf, 0x1800, why, sizeof(why)), 0);
		check_bytes(buf, 0x1800, SEG_A);
		/* B's tail was not dumped, and files are not read: the first missing byte is named. */
		assert_int_equal(t.read_mem(t.ctx, SEG_B + 0x7f8, buf, 16, why, sizeof(why)), -EFAULT);
		assert_contains(why, "address 0x11800 is not in the core");
		assert_int_equal(t.read_mem(t.ctx, 0x15000, buf, 1, why, sizeof(why)), -EFAULT);
		assert_int_equal(t.read_mem(t.ctx, UINT64_MAX - 3, buf, 8, why, sizeof(why)), -EFAULT);
		assert_contains(why, "wrap around");
		assert_int_equal(t.read_mem(t.ctx, SEG_C + 0x100, buf, 1, why, sizeof(why)), -EFAULT);

		/* The JIT list in the core's byte order, given or found (AUTO). */
		for (int k = 0; k < 2; k++) {
			jitmap_error err;
			jitmap_jit_list *l = jitmap_jit_list_read(
				&t, SEG_C, k ? JITMAP_ORDER_AUTO : jitmap_stopped_byte_order(c), 0, &err);
			if (!l)
				fail_msg("%s: %s", a->name, err.reason);
			assert_int_equal(jitmap_jit_list_status(l)->code, 0);
			assert_int_equal(jitmap_jit_list_count(l), 2);
			assert_int_equal(jitmap_jit_list_code(l, 0)->symfile_addr, SEG_A);
			assert_int_equal(jitmap_jit_list_code(l, 0)->symfile_size, 0x1000);
			assert_int_equal(jitmap_jit_list_code(l, 1)->entry, SEG_C + 0x60);
			assert_int_equal(jitmap_jit_list_code(l, 1)->prev, SEG_C + 0x40);
			assert_int_equal(jitmap_jit_list_code(l, 1)->symfile_addr, SEG_A + 0x800);
			jitmap_jit_list_free(l);
		}

		/* No file is opened with JITMAP_STOPPED_NO_FILES, and none is warned about. */
		uint64_t addr;
		assert_int_equal(jitmap_stopped_find_symbol(c, "__jit_debug_descriptor", &addr, NULL, 1), 0);
		assert_null(jitmap_stopped_warning(c, 0));
		jitmap_stopped_free(c);
		free(bytes);
	}
	jitmap_stopped_free(NULL);
}

/* Memory the core did not dump comes from the mapped file, under a sysroot, where the file's
 * bytes are the process's: a read-only segment's. A writable segment the core holds no bytes
 * of, and bytes a truncated core lost, are not read from the file: the read fails and says
 * what is missing. */
static void test_mapped_files(void **state)
{
	(void)state;
	char dir[] = "/tmp/jitmap-test-core.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/lib.bin", dir);
	for (size_t i = 0; i < sizeof(lib_bytes); i++)
		lib_bytes[i] = pattern_lib(i);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(lib_bytes, 1, sizeof(lib_bytes), f), sizeof(lib_bytes));
	fclose(f);
	/* The core's own bytes for B differ from the file's: a read must take the core's. */
	for (size_t ai = 0; ai < ARRAY_LEN(arches); ai++) {
		core_builder b;
		make_process(&b, arches[ai].machine, arches[ai].order, 1);
		b.loads[2].flags = PF_R; /* B: read-only, its first half dumped (an ELF header's) */
		size_t len;
		uint8_t *bytes = cb_emit(&b, &len);
		assert_non_null(bytes);
		JITMAP_OPTS(const jitmap_stopped_opts, opts, .sysroot = dir);
		jitmap_stopped *c = open_bytes(bytes, len, &opts);
		assert_string_equal(jitmap_stopped_mapping(c, 0)->path, path);
		assert_string_equal(jitmap_stopped_mapping(c, 0)->core_path, "/lib.bin");
		jitmap_target t = jitmap_stopped_target(c);
		uint8_t buf[0x3000];
		char why[128];
		/* B's dumped part, its not-dumped tail (file), past B (file only), one read. */
		assert_int_equal(t.read_mem(t.ctx, SEG_B + 0x7f0, buf, 0x20, why, sizeof(why)), 0);
		check_bytes(buf, 0x20, SEG_B + 0x7f0);
		assert_int_equal(t.read_mem(t.ctx, SEG_A, buf, 0x3000, why, sizeof(why)), 0);
		check_bytes(buf, 0x3000, SEG_A); /* A, B dumped, B not dumped, the file alone */
		assert_int_equal(t.read_mem(t.ctx, MAP_LIB + 0x1ff8, buf, 8, why, sizeof(why)), 0);
		check_bytes(buf, 8, MAP_LIB + 0x1ff8);
		/* Across the mapping's end: nothing there. */
		assert_int_equal(t.read_mem(t.ctx, MAP_LIB + 0x1ff8, buf, 16, why, sizeof(why)), -EFAULT);
		assert_contains(why, "address 0x13000 is not in the core or its files");
		/* The other mapping's file does not exist: a symbol search warns once. */
		uint64_t addr;
		assert_int_equal(jitmap_stopped_find_symbol(c, "x", &addr, NULL, 1), 0);
		assert_int_equal(jitmap_stopped_find_symbol(c, "x", &addr, NULL, 1), 0);
		assert_true(has_warning(c, "/jitmap-test/other (mapped by the core) cannot be opened"));
		assert_status(c, "/jitmap-test/other (mapped by the core) cannot be opened",
			      JITMAP_PROBLEM_WARNING, JITMAP_PROBLEM_FILE);
		assert_null(jitmap_stopped_warning(c, 1));
		/* Where each byte comes from. */
		jitmap_stopped_memory_info mi = {.sz = sizeof(mi)};
		assert_int_equal(jitmap_stopped_memory(c, SEG_B + 0x7f0, &mi), 0);
		assert_int_equal(mi.source, JITMAP_STOPPED_MEM_CORE);
		assert_int_equal(mi.size, 0x10);
		assert_int_equal(mi.segment_start, SEG_B);
		assert_int_equal(mi.segment_end, SEG_B + 0x1000);
		assert_int_equal(mi.segment_flags, PF_R);
		assert_string_equal(mi.path, path);
		assert_int_equal(jitmap_stopped_memory(c, SEG_B + 0x800, &mi), 0);
		assert_int_equal(mi.source, JITMAP_STOPPED_MEM_FILE);
		assert_int_equal(mi.offset, 0x800);
		assert_int_equal(mi.size, 0x800);
		assert_int_equal(jitmap_stopped_memory(c, MAP_LIB + 0x1000, &mi), 0);
		assert_int_equal(mi.source, JITMAP_STOPPED_MEM_FILE);
		assert_int_equal(mi.segment_end, 0); /* no segment: the mapping alone */
		assert_int_equal(mi.size, 0x1000);
		assert_int_equal(jitmap_stopped_memory(c, MAP_LIB + 0x2000, &mi), 0);
		assert_int_equal(mi.source, JITMAP_STOPPED_MEM_NONE);
		assert_int_equal(mi.size, SEG_C - (MAP_LIB + 0x2000)); /* up to segment C */
		assert_contains(mi.why, "address 0x13000 is not in the core or its files");
		assert_false(mi.file_unusable);
		assert_int_equal(jitmap_stopped_memory(c, MAP_OTHER, &mi), 0);
		assert_int_equal(mi.source, JITMAP_STOPPED_MEM_NONE);
		assert_contains(mi.why, "address 0x30000 is not in the core, and other (mapped there) "
				"cannot be opened");
		assert_int_equal(jitmap_stopped_memory(NULL, 0, &mi), -EINVAL);
		jitmap_stopped_free(c);
		free(bytes);

		/* B writable: its tail is not the file's (the file has bytes there). */
		make_process(&b, arches[ai].machine, arches[ai].order, 1);
		bytes = cb_emit(&b, &len);
		c = open_bytes(bytes, len, &opts);
		t = jitmap_stopped_target(c);
		assert_int_equal(t.read_mem(t.ctx, SEG_B + 0x7f0, buf, 0x20, why, sizeof(why)), -EFAULT);
		assert_contains(why, "address 0x11800 is not in the core: writable segment [0x11000, "
				"0x12000) was not dumped");
		assert_int_equal(jitmap_stopped_memory(c, SEG_B + 0x900, &mi), 0);
		assert_int_equal(mi.source, JITMAP_STOPPED_MEM_NONE);
		assert_int_equal(mi.size, 0x700);
		assert_int_equal(mi.segment_flags, PF_R | PF_W);
		assert_true(mi.file_unusable);
		assert_string_equal(mi.path, path);
		/* past B, the mapping alone (no segment): the file's */
		assert_int_equal(t.read_mem(t.ctx, MAP_LIB + 0x1000, buf, 8, why, sizeof(why)), 0);
		check_bytes(buf, 8, MAP_LIB + 0x1000);
		jitmap_stopped_free(c);

		/* Truncated in B, read-only or not: the bytes B should hold are not the file's. */
		for (int writable = 0; writable < 2; writable++) {
			b.loads[2].flags = writable ? PF_R | PF_W : PF_R;
			free(bytes);
			bytes = cb_emit(&b, &len);
			const size_t cut = b.load_off[2] + 0x100; /* B keeps 0x100 of its 0x800 bytes */
			c = open_bytes(bytes, cut, &opts);
			t = jitmap_stopped_target(c);
			assert_int_equal(t.read_mem(t.ctx, SEG_B + 0xf0, buf, 0x10, why, sizeof(why)), 0);
			assert_int_equal(t.read_mem(t.ctx, SEG_B + 0xf0, buf, 0x20, why, sizeof(why)),
					 -EFAULT);
			assert_contains(why, "address 0x11100 is not in the core: the core is truncated "
					"in segment [0x11000, 0x12000) r");
			assert_int_equal(jitmap_stopped_memory(c, SEG_B + 0x100, &mi), 0);
			assert_int_equal(mi.source, JITMAP_STOPPED_MEM_NONE);
			assert_int_equal(mi.size, 0x700); /* up to what B says it holds */
			assert_true(mi.file_unusable);
			/* past what B says it holds, a read-only segment's bytes are the file's */
			assert_int_equal(jitmap_stopped_memory(c, SEG_B + 0x800, &mi), 0);
			assert_int_equal(mi.source, writable ? JITMAP_STOPPED_MEM_NONE : JITMAP_STOPPED_MEM_FILE);
			jitmap_stopped_free(c);
		}

		/* Without the sysroot, /lib.bin is not there: B's tail cannot be read. */
		c = open_bytes(bytes, len, NULL);
		const jitmap_target bare = jitmap_stopped_target(c);
		assert_int_equal(bare.read_mem(bare.ctx, SEG_B + 0x800, buf, 1, why, sizeof(why)),
				 -EFAULT);
		jitmap_stopped_free(c);
		free(bytes);
	}
	unlink(path);
	rmdir(dir);
}

/* -- Hostile cores -- */

struct hostile {
	const char *name;
	void (*build)(core_builder *b);                 /* after make_process, before emit */
	void (*patch)(core_builder *b, uint8_t *bytes, size_t *len); /* after emit */
	int code;            /* of the open: 0, or the negative errno */
	const char *message; /* in err.reason (failure) or a warning (0); NULL: no warning */
	size_t threads, mappings;
};

static void phdr_put(core_builder *b, uint8_t *bytes, size_t i, size_t field, uint64_t v)
{
	cb_put(b, bytes + b->phoff + 56 * i + field, v, 8);
}

#define P_OFFSET 8
#define P_VADDR 16
#define P_FILESZ 32
#define P_MEMSZ 40

static void only_notes(core_builder *b)
{
	b->nloads = 0;
}

static void huge_namesz(core_builder *b)
{
	b->notes_len = 0;
	cb_note_raw(b, 0xfffffff0u, 16, NT_PRSTATUS, "CORE", 5, "0123456789abcdef", 16);
}

static void huge_descsz(core_builder *b)
{
	b->notes_len = 0;
	cb_note_raw(b, 5, 0xfffffff0u, NT_PRSTATUS, "CORE", 5, "0123456789abcdef", 16);
}

static void short_prstatus(core_builder *b)
{
	b->notes_len = 0;
	uint8_t d[64] = {0};
	cb_note(b, NT_PRSTATUS, "CORE", d, sizeof(d));
}

/* pr_reg cut after 5 registers: those 5 are kept. */
static void cut_prstatus(core_builder *b)
{
	b->notes_len = 0;
	uint8_t d[CB_PRSTATUS_REG + 40] = {0};
	cb_note(b, NT_PRSTATUS, "CORE", d, sizeof(d));
}

static void file_count_beyond_note(core_builder *b)
{
	b->notes_len = 0;
	uint8_t d[16 + 24];
	memset(d, 0, sizeof(d));
	cb_put(b, d, 1000000, 8); /* a million mappings in 40 bytes */
	cb_put(b, d + 8, 4096, 8);
	cb_note(b, NT_FILE, "CORE", d, sizeof(d));
}

static void file_count_huge(core_builder *b)
{
	b->notes_len = 0;
	uint8_t d[16] = {0};
	cb_put(b, d, UINT64_C(0x0aaaaaaaaaaaaaab), 8); /* 24 * count wraps to a small number */
	cb_put(b, d + 8, 4096, 8);
	cb_note(b, NT_FILE, "CORE", d, sizeof(d));
}

static void file_path_unterminated(core_builder *b)
{
	b->notes_len = 0;
	uint8_t d[16 + 48 + 8];
	memset(d, 'x', sizeof(d));
	cb_put(b, d, 2, 8);
	cb_put(b, d + 8, 4096, 8);
	for (int i = 0; i < 2; i++) {
		cb_put(b, d + 16 + 24 * i, 0x1000 * (uint64_t)(i + 1), 8);
		cb_put(b, d + 24 + 24 * i, 0x1000 * (uint64_t)(i + 2), 8);
		cb_put(b, d + 32 + 24 * i, 0, 8);
	}
	d[16 + 48 + 2] = 0; /* "xx": one path, the second runs off the note */
	cb_note(b, NT_FILE, "CORE", d, sizeof(d));
}

static void file_bad_ranges(core_builder *b)
{
	b->notes_len = 0;
	const uint64_t maps[][3] = {{0x2000, 0x1000, 0},          /* end before start */
				    {0x3000, 0x3000, 0},          /* empty */
				    {0x4000, 0x5000, UINT64_MAX}, /* offset past 2^64 */
				    {0x6000, 0x7000, 1}};
	const char *const paths[] = {"/a", "/b", "/c", "/d"};
	cb_file(b, 4096, 4, maps, paths);
}

static void file_overlaps(core_builder *b)
{
	b->notes_len = 0;
	const uint64_t maps[][3] = {{0x1000, 0x4000, 0}, {0x2000, 0x3000, 0}, {0x3000, 0x6000, 0}};
	const char *const paths[] = {"/a", "/b", "/c"};
	cb_file(b, 4096, 3, maps, paths);
}

static void short_auxv(core_builder *b)
{
	b->notes_len = 0;
	cb_note(b, NT_AUXV, "CORE", "\x06\0\0\0\0\0\0\0\0\x10\0\0\0\0\0\0\x09", 17);
}

static void foreign_notes(core_builder *b)
{
	uint8_t d[400] = {0};
	b->notes_len = 0;
	cb_note(b, NT_PRSTATUS, "LINUX", d, sizeof(d)); /* not "CORE": ignored */
	cb_note_raw(b, 4, sizeof(d), NT_PRSTATUS, "CORX", 4, d, sizeof(d));
	cb_note(b, 0x12345, "CORE", d, 8);
}

static void overlapping_segments(core_builder *b)
{
	static uint8_t over[0x100];
	memset(over, 0xee, sizeof(over));
	cb_load(b, SEG_A + 0x800, sizeof(over), over, sizeof(over));
}

static void load_past_file(core_builder *b, uint8_t *bytes, size_t *len)
{
	(void)len;
	phdr_put(b, bytes, 1, P_OFFSET, UINT64_MAX - 8); /* segment A's bytes: nowhere */
}

static void load_filesz_past_file(core_builder *b, uint8_t *bytes, size_t *len)
{
	(void)len;
	phdr_put(b, bytes, 3, P_FILESZ, UINT64_C(1) << 40); /* B's bytes run past the end */
	phdr_put(b, bytes, 3, P_MEMSZ, UINT64_C(1) << 40);
}

static void load_wraps(core_builder *b, uint8_t *bytes, size_t *len)
{
	(void)len;
	phdr_put(b, bytes, 2, P_VADDR, UINT64_MAX - 0x10);
}

static void truncated_in_segment(core_builder *b, uint8_t *bytes, size_t *len)
{
	(void)bytes;
	*len = b->load_off[2] + 0x100; /* B keeps 0x100 of its 0x800 bytes */
}

static void truncated_in_notes(core_builder *b, uint8_t *bytes, size_t *len)
{
	(void)bytes;
	*len = b->notes_off + 200; /* inside the first NT_PRSTATUS */
}

static void truncated_in_phdrs(core_builder *b, uint8_t *bytes, size_t *len)
{
	(void)bytes;
	*len = b->phoff + 60;
}

static void not_a_core(core_builder *b) { b->type = ET_EXEC; }
static void elf32(core_builder *b) { b->elf_class = ELFCLASS32; }
static void empty(core_builder *b, uint8_t *bytes, size_t *len) { (void)b, (void)bytes, *len = 0; }

static void bad_data_byte(core_builder *b, uint8_t *bytes, size_t *len)
{
	(void)b, (void)len;
	bytes[EI_DATA] = 7;
}

static void many_phdrs(core_builder *b, uint8_t *bytes, size_t *len)
{
	(void)len;
	cb_put(b, bytes + 56, 0xfffe, 2); /* e_phnum */
}

static const struct hostile hostiles[] = {
	{"well formed", NULL, NULL, 0, NULL, 1, 2},
	{"no segments", only_notes, NULL, 0, NULL, 1, 2},
	{"note with a huge namesz", huge_namesz, NULL, 0, "no NT_FILE note", 0, 0},
	{"note with a huge descsz", huge_descsz, NULL, 0, "no NT_FILE note", 0, 0},
	{"NT_PRSTATUS too short", short_prstatus, NULL, 0, "of 64 bytes is too short", 0, 0},
	{"NT_PRSTATUS with 5 registers", cut_prstatus, NULL, 0, "no NT_FILE note", 1, 0},
	{"NT_FILE count beyond the note", file_count_beyond_note, NULL, 0,
	 "claims 1000000 mappings in 40 bytes", 0, 0},
	{"NT_FILE count that wraps", file_count_huge, NULL, 0, "mappings in 16 bytes", 0, 0},
	{"NT_FILE path not terminated", file_path_unterminated, NULL, 0,
	 "path 1 of 2 is not terminated", 0, 1},
	{"NT_FILE bad ranges", file_bad_ranges, NULL, 0, "3 mappings with an empty range", 0, 1},
	{"NT_FILE overlaps", file_overlaps, NULL, 0, "2 NT_FILE mappings overlap", 0, 2},
	{"NT_AUXV of 17 bytes", short_auxv, NULL, 0, "no NT_FILE note", 0, 0},
	{"notes of other owners", foreign_notes, NULL, 0, "no NT_FILE note", 0, 0},
	{"overlapping segments", overlapping_segments, NULL, 0, "1 PT_LOAD segment overlaps", 1, 2},
	{"segment offset past the file", NULL, load_past_file, 0,
	 "segment at 0x10000 has 0 of its 4096 bytes", 1, 2},
	{"segment size past the file", NULL, load_filesz_past_file, 0, "the core is truncated", 1, 2},
	{"segment wrapping the address space", NULL, load_wraps, 0, "wraps around the address space",
	 1, 2},
	{"truncated in a segment", NULL, truncated_in_segment, 0,
	 "segment at 0x11000 has 256 of its 2048 bytes", 1, 2},
	{"truncated in the notes", NULL, truncated_in_notes, 0, "bytes of notes at offset", 0, 0},
	{"truncated in the program headers", NULL, truncated_in_phdrs, 0,
	 "1 of its 4 program headers are there", 0, 0},
	{"not a core", not_a_core, NULL, -EINVAL, "not a 64-bit core file", 0, 0},
	{"32-bit core", elf32, NULL, -EINVAL, "not a 64-bit core file", 0, 0},
	{"empty", NULL, empty, -EINVAL, "not an ELF file", 0, 0},
	{"unknown byte order", NULL, bad_data_byte, -EINVAL, "not", 0, 0},
	{"65534 program headers", NULL, many_phdrs, 0, "of its 65534 program headers are there",
	 0, 0},
};

static void test_hostile(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(hostiles); i++) {
		const struct hostile *h = &hostiles[i];
		core_builder b;
		make_process(&b, EM_X86_64, JITMAP_ORDER_LITTLE, 1);
		if (h->build)
			h->build(&b);
		size_t len;
		uint8_t *bytes = cb_emit(&b, &len);
		if (!bytes)
			fail_msg("%s: the builder failed", h->name);
		if (h->patch)
			h->patch(&b, bytes, &len);
		JITMAP_OPTS(const jitmap_stopped_opts, opts, .flags = JITMAP_STOPPED_NO_FILES);
		jitmap_error err;
		errno = 0;
		jitmap_stopped *c = jitmap_stopped_open_core_memory(bytes, len, &opts, &err);
		if (h->code) {
			if (c)
				fail_msg("%s: opened, want %d", h->name, h->code);
			if (err.code != h->code || errno != -h->code)
				fail_msg("%s: code %d errno %d, want %d: %s", h->name, err.code, errno,
					 h->code, err.reason);
			if (!strstr(err.reason, h->message))
				fail_msg("%s: \"%s\" does not say \"%s\"", h->name, err.reason, h->message);
			free(bytes);
			continue;
		}
		if (!c)
			fail_msg("%s: not opened: %s", h->name, err.reason);
		if (h->message ? !has_warning(c, h->message) : jitmap_stopped_warning(c, 0) != NULL)
			fail_msg("%s: warnings [%s] do not say \"%s\"", h->name,
				 jitmap_stopped_warning(c, 0) ? jitmap_stopped_warning(c, 0) : "",
				 h->message ? h->message : "(nothing)");
		if (jitmap_stopped_num_threads(c) != h->threads ||
		    jitmap_stopped_num_mappings(c) != h->mappings)
			fail_msg("%s: %zu threads, %zu mappings, want %zu and %zu", h->name,
				 jitmap_stopped_num_threads(c), jitmap_stopped_num_mappings(c), h->threads,
				 h->mappings);
		/* Whatever opened reads consistently: every byte either read or refused. */
		const jitmap_target t = jitmap_stopped_target(c);
		uint8_t buf[0x3000];
		char why[128];
		for (uint64_t a = SEG_A - 0x10; a < SEG_A + 0x2010; a += 0x7f8)
			(void)t.read_mem(t.ctx, a, buf, 0x808, why, sizeof(why));
		for (size_t k = 1; k < jitmap_stopped_num_mappings(c); k++)
			assert_true(jitmap_stopped_mapping(c, k - 1)->end <= jitmap_stopped_mapping(c, k)->start);
		jitmap_stopped_free(c);
		free(bytes);
	}
}

/* Cases whose reads the table does not pin. */
static void test_hostile_reads(void **state)
{
	(void)state;
	core_builder b;
	uint8_t buf[0x40];
	char why[128];
	size_t len;

	/* Overlap: A's bytes win over the later, higher segment's. */
	make_process(&b, EM_X86_64, JITMAP_ORDER_LITTLE, 1);
	overlapping_segments(&b);
	uint8_t *bytes = cb_emit(&b, &len);
	jitmap_stopped *c = open_bytes(bytes, len, NULL);
	jitmap_target t = jitmap_stopped_target(c);
	assert_int_equal(t.read_mem(t.ctx, SEG_A + 0x7f0, buf, 0x20, why, sizeof(why)), 0);
	check_bytes(buf, 0x20, SEG_A + 0x7f0);
	jitmap_stopped_free(c);
	free(bytes);

	/* Two segments at the same address: the first program header's bytes. */
	static uint8_t same[0x40];
	memset(same, 0xee, sizeof(same));
	make_process(&b, EM_X86_64, JITMAP_ORDER_LITTLE, 1);
	cb_load(&b, SEG_A, sizeof(same), same, sizeof(same));
	bytes = cb_emit(&b, &len);
	c = open_bytes(bytes, len, NULL);
	assert_true(has_warning(c, "1 PT_LOAD segment overlaps"));
	assert_status(c, "1 PT_LOAD segment overlaps", JITMAP_PROBLEM_WARNING,
		      JITMAP_PROBLEM_MALFORMED);
	t = jitmap_stopped_target(c);
	assert_int_equal(t.read_mem(t.ctx, SEG_A, buf, 0x40, why, sizeof(why)), 0);
	check_bytes(buf, 0x40, SEG_A);
	jitmap_stopped_free(c);
	free(bytes);

	/* Truncated: B's first 0x100 bytes are there, the next are not. */
	make_process(&b, EM_X86_64, JITMAP_ORDER_LITTLE, 1);
	bytes = cb_emit(&b, &len);
	truncated_in_segment(&b, bytes, &len);
	JITMAP_OPTS(const jitmap_stopped_opts, opts, .flags = JITMAP_STOPPED_NO_FILES);
	c = open_bytes(bytes, len, &opts);
	t = jitmap_stopped_target(c);
	assert_int_equal(t.read_mem(t.ctx, SEG_B + 0xf0, buf, 0x10, why, sizeof(why)), 0);
	check_bytes(buf, 0x10, SEG_B + 0xf0);
	assert_int_equal(t.read_mem(t.ctx, SEG_B + 0xf0, buf, 0x11, why, sizeof(why)), -EFAULT);
	assert_contains(why, "address 0x11100 is not in the core");
	jitmap_stopped_free(c);
	free(bytes);

	/* Five registers of pr_reg: r15 r14 r13 r12 rbp, nothing else. */
	make_process(&b, EM_X86_64, JITMAP_ORDER_LITTLE, 1);
	cut_prstatus(&b);
	bytes = cb_emit(&b, &len);
	c = open_bytes(bytes, len, NULL);
	assert_int_equal(jitmap_stopped_thread(c, 0)->num_gregs, 5);
	assert_int_equal(jitmap_stopped_thread_reg(jitmap_stopped_thread(c, 0), 6, NULL), 0);
	assert_int_equal(jitmap_stopped_thread_reg(jitmap_stopped_thread(c, 0), 3, NULL), -ENOENT);
	jitmap_stopped_free(c);
	free(bytes);

	/* Options: a size below its own field, and unknown nonzero fields of a newer caller. */
	jitmap_error err;
	make_process(&b, EM_X86_64, JITMAP_ORDER_LITTLE, 1);
	bytes = cb_emit(&b, &len);
	struct {
		jitmap_stopped_opts o;
		uint64_t newer;
	} big;
	memset(&big, 0, sizeof(big)); /* padding too: the bytes past the known fields are read */
	big.o.sz = sizeof(big);
	c = jitmap_stopped_open_core_memory(bytes, len, &big.o, &err);
	assert_non_null(c);
	jitmap_stopped_free(c);
	big.newer = 1;
	assert_null(jitmap_stopped_open_core_memory(bytes, len, &big.o, &err));
	assert_int_equal(err.code, -EINVAL);
	assert_contains(err.reason, "fields this library does not know");
	const jitmap_stopped_opts tiny = {.sz = 2};
	assert_null(jitmap_stopped_open_core_memory(bytes, len, &tiny, &err));
	assert_contains(err.reason, "jitmap_stopped_opts.sz is 2");
	free(bytes);

	/* A path that is not a core, and a directory. */
	assert_null(jitmap_stopped_open_core("/nonexistent/jitmap/core", NULL, &err));
	assert_int_equal(err.code, -ENOENT);
	assert_null(jitmap_stopped_open_core("/", NULL, &err));
	assert_int_equal(err.code, -EISDIR);
	assert_string_equal(err.reason, "a directory, not a core file");
	assert_null(jitmap_stopped_open_core_memory(NULL, 10, NULL, &err));
	assert_int_equal(err.code, -EINVAL);
}

/* -- One scan of a core: jitmap_process_scan_stopped -- */

/* The JIT descriptor this executable defines (GDB's layout), as the file holds it: an empty
 * list. The real core's child gives it two entries. */
struct jit_entry_ {
	uint64_t next, prev, symfile_addr, symfile_size;
};
struct {
	uint32_t version, action_flag;
	uint64_t relevant_entry, first_entry;
} __jit_debug_descriptor = {1, 0, 0, 0};

/* This executable's bias, its first page's address in the file's terms, and the file offset
 * of the descriptor's page (o[0..2]). */
static int find_self(struct dl_phdr_info *info, size_t size, void *out)
{
	(void)size;
	uint64_t *o = out;
	const uint64_t at = (uint64_t)(uintptr_t)&__jit_debug_descriptor - info->dlpi_addr;
	o[0] = info->dlpi_addr;
	o[1] = o[2] = UINT64_MAX;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_offset == 0)
			o[1] = ph->p_vaddr & ~(uint64_t)0xfff;
		if (at >= ph->p_vaddr && at - ph->p_vaddr < ph->p_filesz)
			o[2] = (ph->p_offset + (at - ph->p_vaddr)) & ~(uint64_t)0xfff;
	}
	return 1; /* the main program is listed first */
}

#define MAP_EXE UINT64_C(0x5500000000) /* where the synthetic cores map this executable */

/* A synthetic core that maps this executable (NT_FILE, its first page at MAP_EXE) and, where
 * that puts __jit_debug_descriptor, a segment with a descriptor and a two-entry list (or, with
 * `loop`, an entry that points to itself), flags `flags`, `dumped` of its bytes in the core.
 * `first_page`: the mapping of the executable's first page is in the note. The descriptor's
 * address in *desc. */
static uint8_t *exe_core(const char *self, unsigned flags, bool dumped, bool loop,
			 bool first_page, uint64_t *desc, size_t *len, core_builder *b)
{
	uint64_t where[3];
	dl_iterate_phdr(find_self, where);
	assert_true(where[1] != UINT64_MAX && where[2] != UINT64_MAX);
	const uint64_t st_value = (uint64_t)(uintptr_t)&__jit_debug_descriptor - where[0];
	*desc = MAP_EXE - where[1] + st_value;
	cb_init(b, EM_X86_64, JITMAP_ORDER_LITTLE);
	uint8_t regs[512];
	cb_prstatus(b, TID, SIGSEGV, regs, make_regs(b, regs));
	const uint64_t page = *desc & ~(uint64_t)0xfff;
	const uint64_t maps[][3] = {{MAP_EXE, MAP_EXE + 0x1000, 0},
				    {page, page + 0x2000, where[2] / 0x1000}, /* the descriptor's */
				    {0x70000, 0x71000, 0}};
	const char *const paths[] = {self, self, "/nonexistent/jitmap/libgone.so"};
	cb_file(b, 0x1000, first_page ? 3 : 2, first_page ? maps : maps + 1,
		first_page ? paths : paths + 1);
	static uint8_t d[0x80];
	memset(d, 0, sizeof(d));
	cb_put(b, d, 1, 4);
	cb_put(b, d + 16, *desc + 0x20, 8);                   /* first_entry */
	cb_put(b, d + 0x20, loop ? *desc + 0x20 : *desc + 0x40, 8); /* entry 1: next */
	cb_put(b, d + 0x30, 0x1000, 8);                       /*   symfile_addr (not mapped) */
	cb_put(b, d + 0x38, 0x40, 8);
	cb_put(b, d + 0x48, *desc + 0x20, 8);                 /* entry 2: prev */
	cb_put(b, d + 0x50, 0x2000, 8);
	cb_put(b, d + 0x58, 0x40, 8);
	cb_load(b, *desc, sizeof(d), d, dumped ? sizeof(d) : 0);
	b->loads[0].flags = flags;
	return cb_emit(b, len);
}

/* The scan's single descriptor. */
static jitmap_descriptor_info scan_one(jitmap_stopped *c, jitmap_process **pp)
{
	const jitmap_target t = jitmap_stopped_target(c);
	jitmap_process *p = jitmap_process_new(&t, NULL);
	assert_non_null(p);
	assert_int_equal(jitmap_process_scan_begin(p), 0);
	assert_int_equal(jitmap_process_scan_stopped(p, c), 1);
	assert_int_equal(jitmap_process_scan_end(p), 0);
	assert_int_equal(jitmap_process_num_descriptors(p), 1);
	jitmap_descriptor_info d = {.sz = sizeof(d)};
	assert_int_equal(jitmap_process_descriptor(p, 0, &d), 0);
	assert_int_equal(jitmap_process_descriptor(p, 1, &d), -ERANGE);
	assert_int_equal(jitmap_process_descriptor(p, 0, &d), 0);
	*pp = p;
	return d;
}

static bool process_problem(const jitmap_process *p, const char *needle)
{
	for (size_t k = 0; jitmap_process_problem(p, k); k++)
		if (strstr(jitmap_process_problem(p, k), needle))
			return true;
	return false;
}

/* The descriptor found in the file NT_FILE maps, moved by its bias; its list counted only when
 * read to its end: a truncated core, a writable segment the core did not dump and a loop give
 * no count and say why, where the file's bytes (an empty list) would have said "0". */
static void test_scan_core(void **state)
{
	(void)state;
	char *self = realpath("/proc/self/exe", NULL);
	assert_non_null(self);
	core_builder b;
	size_t len;
	uint64_t desc;
	jitmap_process *p;

	/* Well formed: two entries, their images unreadable (a problem each, not of the list). */
	uint8_t *bytes = exe_core(self, PF_R | PF_W, true, false, true, &desc, &len, &b);
	jitmap_stopped *c = open_bytes(bytes, len, NULL);
	jitmap_descriptor_info d = scan_one(c, &p);
	assert_int_equal(d.address, desc);
	assert_string_equal(d.where, self);
	assert_true(d.readable && d.complete);
	assert_int_equal(d.num_entries, 2);
	assert_null(d.problem);
	assert_int_equal(jitmap_process_num_sources(p), 2);
	assert_true(process_problem(p, "/nonexistent/jitmap/libgone.so (mapped by the core) cannot "
				       "be opened (No such file or directory)"));
	assert_int_equal(jitmap_process_num_unread_files(p), 1); /* it may hold a descriptor */
	assert_false(process_problem(p, "the JIT descriptor"));
	jitmap_process_free(p);
	jitmap_stopped_free(c);

	/* Cut short inside the descriptor's segment. */
	c = open_bytes(bytes, b.load_off[0] + 8, NULL);
	d = scan_one(c, &p);
	assert_false(d.readable || d.complete);
	assert_int_equal(d.num_entries, 0);
	assert_contains(d.problem, "is not in the core: the core is truncated in segment");
	assert_true(process_problem(p, "the JIT descriptor in "));
	assert_int_equal(jitmap_process_num_sources(p), 0);
	jitmap_process_free(p);
	jitmap_stopped_free(c);
	free(bytes);

	/* Writable, not dumped: the file holds an empty list, which is not the process's. */
	bytes = exe_core(self, PF_R | PF_W, false, false, true, &desc, &len, &b);
	c = open_bytes(bytes, len, NULL);
	d = scan_one(c, &p);
	assert_false(d.readable);
	assert_contains(d.problem, "was not dumped");
	jitmap_process_free(p);
	jitmap_stopped_free(c);
	free(bytes);

	/* Read-only, not dumped: the file's bytes are the process's (the control: the file says
	 * the list is empty). */
	bytes = exe_core(self, PF_R, false, false, true, &desc, &len, &b);
	c = open_bytes(bytes, len, NULL);
	d = scan_one(c, &p);
	assert_true(d.readable && d.complete);
	assert_int_equal(d.num_entries, 0);
	jitmap_process_free(p);
	jitmap_stopped_free(c);
	free(bytes);

	/* A list that loops after one entry: one read, the rest unknown. */
	bytes = exe_core(self, PF_R | PF_W, true, true, true, &desc, &len, &b);
	c = open_bytes(bytes, len, NULL);
	d = scan_one(c, &p);
	assert_true(d.readable);
	assert_false(d.complete);
	assert_int_equal(d.num_entries, 1);
	assert_contains(d.problem, "the JIT entry list loops");
	assert_true(process_problem(p, "the JIT entry list of the descriptor in "));
	jitmap_process_free(p);
	jitmap_stopped_free(c);
	free(bytes);

	/* No mapping of the executable's first page: where it is loaded is unknown. */
	bytes = exe_core(self, PF_R | PF_W, true, false, false, &desc, &len, &b);
	c = open_bytes(bytes, len, NULL);
	const jitmap_target t = jitmap_stopped_target(c);
	p = jitmap_process_new(&t, NULL);
	assert_int_equal(jitmap_process_scan_begin(p), 0);
	assert_int_equal(jitmap_process_scan_stopped(p, c), 0);
	assert_int_equal(jitmap_process_scan_end(p), 0);
	assert_int_equal(jitmap_process_num_descriptors(p), 0);
	assert_true(process_problem(p, "defines __jit_debug_descriptor, but the core does not say "
				       "where it is loaded"));
	assert_int_equal(jitmap_process_num_unread_files(p), 2); /* that, and libgone.so */
	assert_int_equal(jitmap_process_scan_stopped(NULL, c), -EINVAL);
	assert_int_equal(jitmap_process_scan_stopped(p, NULL), -EINVAL);
	jitmap_process_free(p);
	/* Told not to open the mapped files: nothing found, nothing said of them. */
	JITMAP_OPTS(const jitmap_stopped_opts, no_files, .flags = JITMAP_STOPPED_NO_FILES);
	jitmap_stopped_free(c);
	c = open_bytes(bytes, len, &no_files);
	p = jitmap_process_new(&t, NULL);
	jitmap_stopped_free(c);
	free(bytes);
	bytes = exe_core(self, PF_R | PF_W, true, false, true, &desc, &len, &b);
	c = open_bytes(bytes, len, &no_files);
	const jitmap_target t2 = jitmap_stopped_target(c);
	jitmap_process_free(p);
	p = jitmap_process_new(&t2, NULL);
	assert_int_equal(jitmap_process_scan_begin(p), 0);
	assert_int_equal(jitmap_process_scan_stopped(p, c), 0);
	assert_int_equal(jitmap_process_scan_end(p), 0);
	assert_int_equal(jitmap_process_num_problems(p), 0);
	assert_int_equal(jitmap_process_num_unread_files(p), 0);
	jitmap_process_free(p);
	jitmap_stopped_free(c);
	free(bytes);
	free(self);
}

/* Mappings of memory that no file on disk holds, as the kernel names them in NT_FILE (shared
 * anonymous memory, System V and POSIX shared memory, memfd_create's), are not files that could
 * not be read: a PostgreSQL core maps all but the last, and each made its JIT entry count
 * unknown. A library deleted since (a package upgrade) or loaded from a memfd still is: the
 * core holds its ELF header, and its symbols are not. */
static void test_scan_core_memory_mappings(void **state)
{
	(void)state;
	/* seg: the mapping's PT_LOAD: 'd' dumped (its first bytes `elf` or not), 'w' writable
	 * and 'r' read-only with no bytes in the core, 0 none. */
	static const struct {
		const char *path;
		char seg;
		bool elf, unread;
	} maps[] = {
		{"/dev/zero (deleted)", 'd', false, false},
		{"/SYSV00a741aa (deleted)", 'r', false, false}, /* left out (coredump_filter), by name */
		{"/memfd:jitmap-test (deleted)", 'd', false, false},
		{"/dev/shm/PostgreSQL.1804289383", 'w', false, false}, /* shared: not dumped; gone */
		{"/dev/shm/PostgreSQL.1804289384", 'd', false, false},
		{"/dev/null", 0, false, false},                          /* a device */
		{"/SYSV00a741a (deleted)", 'r', false, true},            /* not the kernel's name */
		{"/memfd:jitlib.so (deleted)", 'd', true, true},          /* dlopen'ed from a memfd */
		{"/nonexistent/jitmap/libgone.so (deleted)", 'd', true, true}, /* upgraded since */
		{"/nonexistent/jitmap/data (deleted)", 'r', false, true}, /* its first page unknown */
		{"/nonexistent/jitmap/other", 0, false, true},
	};
	enum { N = sizeof(maps) / sizeof(maps[0]), BASE = 0x100000 };
	core_builder b;
	cb_init(&b, EM_X86_64, JITMAP_ORDER_LITTLE);
	uint8_t regs[27 * 8] = {0};
	cb_prstatus(&b, TID, SIGSEGV, regs, sizeof(regs));
	uint64_t range[N][3];
	const char *paths[N];
	static uint8_t page[N][64];
	for (size_t i = 0; i < N; i++) {
		range[i][0] = BASE + 0x10000 * i;
		range[i][1] = range[i][0] + 0x1000;
		range[i][2] = 0;
		paths[i] = maps[i].path;
		const char *text = maps[i].elf ? "\177ELF\2\1\1" : "PostgreSQL shared memory";
		memcpy(page[i], text, strlen(text));
		if (maps[i].seg) {
			cb_load(&b, range[i][0], 0x1000, page[i], maps[i].seg == 'd' ? sizeof(page[i]) : 0);
			b.loads[b.nloads - 1].flags = maps[i].seg == 'r' ? PF_R : PF_R | PF_W;
		}
	}
	cb_file(&b, 0x1000, N, (const uint64_t(*)[3])range, paths);
	size_t len;
	uint8_t *bytes = cb_emit(&b, &len);
	assert_non_null(bytes);
	jitmap_stopped *c = open_bytes(bytes, len, NULL);
	const jitmap_target t = jitmap_stopped_target(c);
	jitmap_process *p = jitmap_process_new(&t, NULL);
	assert_non_null(p);
	assert_int_equal(jitmap_process_scan_begin(p), 0);
	assert_int_equal(jitmap_process_scan_stopped(p, c), 0);
	assert_int_equal(jitmap_process_scan_end(p), 0);
	size_t unread = 0;
	uint64_t addr;
	assert_int_equal(jitmap_stopped_find_symbol(c, JITMAP_JIT_DESCRIPTOR_SYMBOL, &addr, NULL, 1), 0);
	for (size_t i = 0; i < N; i++) {
		char said[160];
		snprintf(said, sizeof(said), "%s (mapped by the core) cannot be opened", maps[i].path);
		if (maps[i].unread != process_problem(p, said) ||
		    maps[i].unread != (bool)has_warning(c, said))
			fail_msg("%s: %s", maps[i].path, maps[i].unread ? "not reported" : "reported");
		unread += maps[i].unread;
	}
	assert_int_equal(jitmap_process_num_unread_files(p), unread);
	/* The memory itself reads from the core. */
	char buf[8], why[160];
	assert_int_equal(t.read_mem(t.ctx, BASE, buf, 8, why, sizeof(why)), 0);
	assert_memory_equal(buf, "PostgreS", 8);
	jitmap_process_free(p);
	jitmap_stopped_free(c);
	free(bytes);
}

/* -- A real core, from the kernel -- */

uint64_t jitmap_test_core_marker = 1;

#if defined(__x86_64__)
static int first_object(struct dl_phdr_info *info, size_t size, void *out)
{
	(void)size;
	*(uint64_t *)out = info->dlpi_addr;
	return 1; /* the main program is listed first */
}

/* This executable's load bias. */
static uint64_t main_bias(void)
{
	uint64_t bias = 0;
	dl_iterate_phdr(first_object, &bias);
	return bias;
}

#define REAL_R12 UINT64_C(0x1234567890abcdef)
#define REAL_R14 UINT64_C(0xa5a5a5a55a5a5a5a)

static const uint64_t stack_pattern[4] = {UINT64_C(0xfeedface00000001), 2, 3,
					  UINT64_C(0xfeedface00000004)};

/* In the child: known values in r12, r14 and (the address of a stack buffer) r13, then
 * kill(getpid(), SIGABRT) by a raw syscall, so that the core holds them as they were. */
static void __attribute__((noreturn, noinline)) die_with_registers(void)
{
	volatile uint64_t buf[4];
	for (int i = 0; i < 4; i++)
		buf[i] = stack_pattern[i];
	jitmap_test_core_marker = UINT64_C(0x5eed5eed5eed5eed);
	const long pid = getpid();
	__asm__ volatile("mov %[a], %%r12\n\t"
			 "mov %[b], %%r13\n\t"
			 "mov %[c], %%r14\n\t"
			 "mov $62, %%eax\n\t" /* kill */
			 "syscall\n\t"
			 "ud2"
			 :
			 : [a] "r"(REAL_R12), [b] "r"(buf), [c] "r"(REAL_R14), "D"(pid),
			   "S"((long)SIGABRT)
			 : "r12", "r13", "r14", "rax", "rcx", "r11", "memory");
	__builtin_unreachable();
}

/* The child: two JIT entries whose images are nowhere (the file's descriptor says none),
 * then aborted with known registers. */
static void crash_with_entries(void *arg)
{
	(void)arg;
	static struct jit_entry_ entries[2];
	entries[0] = (struct jit_entry_){(uint64_t)(uintptr_t)&entries[1], 0, 0x1000, 64};
	entries[1] = (struct jit_entry_){0, (uint64_t)(uintptr_t)&entries[0], 0x2000, 64};
	__jit_debug_descriptor.first_entry = (uint64_t)(uintptr_t)&entries[0];
	signal(SIGABRT, SIG_DFL);
	die_with_registers();
}

/* Makes a core of a child in `dir`; returns its path (malloc'd), or NULL (then skipped). */
static char *make_real_core(const char *dir, pid_t *pid_out)
{
	return cb_kernel_core(dir, crash_with_entries, NULL, pid_out);
}

static int copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[65536];
	size_t n;
	int rc = in && out ? 0 : -1;
	while (!rc && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		rc = fwrite(buf, 1, n, out) == n ? 0 : -1;
	if (in)
		fclose(in);
	if (out && fclose(out))
		rc = -1;
	return rc;
}

static void test_real_core(void **state)
{
	(void)state;
	char dir[] = "/tmp/jitmap-test-core.XXXXXX";
	assert_non_null(mkdtemp(dir));
	pid_t pid = 0;
	char *core = make_real_core(dir, &pid);
	if (!core) {
		rmdir(dir);
		skip();
	}
	jitmap_error err;
	jitmap_stopped *c = jitmap_stopped_open_core(core, NULL, &err);
	if (!c)
		fail_msg("%s: %s", core, err.reason);
	assert_int_equal(jitmap_stopped_arch(c), JITMAP_ARCH_X86_64);
	assert_int_equal(jitmap_stopped_byte_order(c), JITMAP_ORDER_LITTLE);
	assert_int_equal(jitmap_stopped_num_threads(c), 1);
	const jitmap_stopped_thread_info *t = jitmap_stopped_thread(c, 0);
	assert_int_equal(t->tid, pid);
	assert_int_equal(t->signal, SIGABRT);
	uint64_t v, r13, rip;
	assert_int_equal(jitmap_stopped_thread_reg(t, 12, &v), 0);
	assert_int_equal(v, REAL_R12);
	assert_int_equal(jitmap_stopped_thread_reg(t, 14, &v), 0);
	assert_int_equal(v, REAL_R14);
	assert_int_equal(jitmap_stopped_thread_reg(t, 0, &v), 0);
	assert_int_equal(v, 0); /* kill's return value */
	assert_int_equal(jitmap_stopped_thread_reg(t, 13, &r13), 0);
	assert_int_equal(jitmap_stopped_thread_reg(t, 16, &rip), 0);
	assert_int_equal(jitmap_stopped_thread_reg(t, 7, &v), 0);
	assert_true(v <= r13); /* the buffer is in the frame */

	/* The stack (anonymous memory, dumped) and the code (a file mapping the kernel does not
	 * dump: read from this test's executable through NT_FILE). */
	const jitmap_target tt = jitmap_stopped_thread_target(c, 0);
	uint64_t stack[4];
	uint8_t code[4];
	char why[128] = "";
	assert_int_equal(tt.read_mem(tt.ctx, r13, stack, sizeof(stack), why, sizeof(why)), 0);
	assert_memory_equal(stack, stack_pattern, sizeof(stack));
	if (tt.read_mem(tt.ctx, rip - 2, code, 4, why, sizeof(why)))
		fail_msg("code at 0x%llx: %s", (unsigned long long)rip - 2, why);
	static const uint8_t syscall_ud2[4] = {0x0f, 0x05, 0x0f, 0x0b};
	assert_memory_equal(code, syscall_ud2, 4);
	uint8_t r12[8];
	assert_int_equal(tt.read_reg(tt.ctx, 12, r12, 8, why, sizeof(why)), 0);
	assert_int_equal(r12[0], REAL_R12 & 0xff);

	/* The marker: found in this executable's symbols, with the child's value in the core. */
	uint64_t addr = 0;
	const char *file = NULL;
	assert_int_equal(jitmap_stopped_find_symbol(c, "jitmap_test_core_marker", &addr, &file, 1), 1);
	assert_int_equal(addr, (uint64_t)(uintptr_t)&jitmap_test_core_marker);
	assert_int_equal(tt.read_mem(tt.ctx, addr, &v, 8, why, sizeof(why)), 0);
	assert_int_equal(v, UINT64_C(0x5eed5eed5eed5eed));
	char *self = realpath("/proc/self/exe", NULL);
	assert_non_null(self);
	assert_string_equal(file, self);

	/* The one scan: this executable's descriptor, with the child's two entries. */
	jitmap_process *p;
	jitmap_descriptor_info d = scan_one(c, &p);
	assert_int_equal(d.address, (uint64_t)(uintptr_t)&__jit_debug_descriptor);
	assert_string_equal(d.where, self);
	assert_true(d.complete);
	assert_int_equal(d.num_entries, 2);
	jitmap_process_free(p);
	/* Cut where the descriptor's segment starts: no count, and why (the file says 0). */
	jitmap_stopped_memory_info mi = {.sz = sizeof(mi)};
	assert_int_equal(jitmap_stopped_memory(c, d.address, &mi), 0);
	assert_int_equal(mi.source, JITMAP_STOPPED_MEM_CORE);
	assert_true(mi.segment_flags & PF_W);
	const uint64_t seg_off = mi.offset - (d.address - mi.segment_start);
	char cut_path[PATH_MAX];
	snprintf(cut_path, sizeof(cut_path), "%s/cut-core", dir);
	{
		FILE *in = fopen(core, "rb"), *out = fopen(cut_path, "wb");
		assert_true(in && out);
		for (uint64_t k = 0; k < seg_off; k++)
			fputc(fgetc(in), out);
		fclose(in);
		fclose(out);
	}
	jitmap_stopped *cut = jitmap_stopped_open_core(cut_path, NULL, &err);
	assert_non_null(cut);
	assert_true(has_warning(cut, "the core is truncated"));
	assert_status(cut, "the core is truncated", JITMAP_PROBLEM_WARNING, JITMAP_PROBLEM_TRUNCATED);
	d = scan_one(cut, &p);
	assert_false(d.readable);
	char want[128];
	snprintf(want, sizeof(want), "address 0x%" PRIx64 " is not in the core: the core is "
		 "truncated in segment [0x%" PRIx64 ", ", d.address, mi.segment_start);
	assert_contains(d.problem, want);
	assert_int_equal(jitmap_stopped_memory(cut, d.address, &mi), 0);
	assert_int_equal(mi.source, JITMAP_STOPPED_MEM_NONE);
	assert_string_equal(mi.path, self); /* the file is mapped there: not read */
	jitmap_process_free(p);
	jitmap_stopped_free(cut);
	unlink(cut_path);

	/* NT_FILE names this executable; auxv agrees with the kernel. */
	int found = 0;
	for (size_t i = 0; i < jitmap_stopped_num_mappings(c); i++) {
		const jitmap_stopped_mapping_info *m = jitmap_stopped_mapping(c, i);
		assert_true(m->start < m->end);
		found |= !strcmp(m->core_path, self) && m->offset == 0;
	}
	assert_true(found);
	assert_int_equal(jitmap_stopped_auxv(c, AT_PAGESZ, &v), 0);
	assert_int_equal(v, (uint64_t)sysconf(_SC_PAGESIZE));
	assert_int_equal(jitmap_stopped_auxv(c, AT_ENTRY, &v), 0);
	if (jitmap_stopped_warning(c, 0))
		fail_msg("unexpected warning: %s", jitmap_stopped_warning(c, 0));
	jitmap_stopped_free(c);

	/* --exe: a link to this executable, and a renamed copy matched by its build ID alone
	 * (mapped files not opened, so the ID comes from the core's copy of the first page). */
	char link[PATH_MAX], copy[PATH_MAX];
	snprintf(link, sizeof(link), "%s/link-to-test", dir);
	snprintf(copy, sizeof(copy), "%s/renamed-copy", dir);
	assert_int_equal(symlink(self, link), 0);
	assert_int_equal(copy_file(self, copy), 0);
	const char *exes[] = {link, copy};
	for (int k = 0; k < 2; k++) {
		JITMAP_OPTS(const jitmap_stopped_opts, opts, .exe = exes[k],
			    .flags = k ? JITMAP_STOPPED_NO_FILES : 0);
		c = jitmap_stopped_open_core(core, &opts, &err);
		assert_non_null(c);
		if (jitmap_stopped_warning(c, 0))
			fail_msg("--exe %s: %s", exes[k], jitmap_stopped_warning(c, 0));
		found = 0;
		for (size_t i = 0; i < jitmap_stopped_num_mappings(c); i++) {
			const jitmap_stopped_mapping_info *m = jitmap_stopped_mapping(c, i);
			if (!strcmp(m->core_path, self)) {
				assert_string_equal(m->path, exes[k]);
				found = 1;
			}
		}
		assert_true(found);
		if (!k) {
			assert_int_equal(jitmap_stopped_find_symbol(c, "jitmap_test_core_marker", &addr,
								 &file, 1), 1);
			assert_string_equal(file, link);
		}
		jitmap_stopped_free(c);
	}
	/* Another program, by name or ID: a warning. */
	JITMAP_OPTS(const jitmap_stopped_opts, other, .exe = "/bin/sh");
	c = jitmap_stopped_open_core(core, &other, &err);
	assert_non_null(c);
	assert_true(has_warning(c, "--exe /bin/sh: the core maps no file named sh"));
	assert_status(c, "--exe /bin/sh", JITMAP_PROBLEM_WARNING, JITMAP_PROBLEM_FILE);
	jitmap_stopped_free(c);

	/* Options of an older, smaller size: the fields past it are not read. */
	JITMAP_OPTS(const jitmap_stopped_opts, small, .sz = sizeof(size_t), .exe = "/bin/sh");
	c = jitmap_stopped_open_core(core, &small, &err);
	assert_non_null(c);
	assert_false(has_warning(c, "--exe"));
	jitmap_stopped_free(c);

	/* The same core without its NT_FILE note (as qemu-user writes them): --exe placed by the
	 * auxiliary vector, the libraries by the dynamic linker's list in the core's memory. */
	FILE *f = fopen(core, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	const size_t len = (size_t)ftell(f);
	uint8_t *bytes = malloc(len);
	assert_non_null(bytes);
	rewind(f);
	assert_int_equal(fread(bytes, 1, len, f), len);
	fclose(f);
	size_t at;
	static const uint8_t nt_file[] = {0x45, 0x4c, 0x49, 0x46, 'C', 'O', 'R', 'E', 0};
	for (at = 0; at + sizeof(nt_file) <= len && memcmp(bytes + at, nt_file, sizeof(nt_file)); at++)
		;
	assert_true(at + sizeof(nt_file) <= len);
	bytes[at] = 0x46; /* another note type */
	c = open_bytes(bytes, len, NULL);
	assert_int_equal(jitmap_stopped_num_mappings(c), 0);
	assert_int_equal(jitmap_stopped_find_symbol(c, "jitmap_test_core_marker", &addr, NULL, 1), 0);
	assert_true(has_warning(c, "no NT_FILE note: symbols cannot be found"));
	assert_status(c, "no NT_FILE note", JITMAP_PROBLEM_WARNING, JITMAP_PROBLEM_FILES_PLACED);
	jitmap_stopped_problem_info none = {.sz = sizeof(none)};
	assert_int_equal(jitmap_stopped_problem(c, 99, &none), -ENOENT);
	none.sz = 4;
	assert_int_equal(jitmap_stopped_problem(c, 0, &none), -EINVAL);
	jitmap_stopped_free(c);
	for (int k = 0; k < 2; k++) {
		JITMAP_OPTS(const jitmap_stopped_opts, opts, .exe = self,
			    .flags = k ? JITMAP_STOPPED_NO_FILES : 0);
		c = open_bytes(bytes, len, &opts);
		assert_true(has_warning(c, "no NT_FILE note"));
		assert_true(has_warning(c, "placed by AT_PHDR"));
		assert_status(c, "placed by AT_PHDR", JITMAP_PROBLEM_INFO,
			      JITMAP_PROBLEM_FILES_PLACED);
		int libc = 0, exe = 0;
		for (size_t i = 0; i < jitmap_stopped_num_mappings(c); i++) {
			const jitmap_stopped_mapping_info *m = jitmap_stopped_mapping(c, i);
			libc |= strstr(m->core_path, "/libc.so") != NULL;
			exe |= !strcmp(m->path, self);
		}
		assert_true(exe);
		assert_int_equal(libc, !k); /* libraries are not opened with NO_FILES */
		/* The placed files, for a tool to report elsewhere: this executable first, at
		 * this process's bias (the core's child was forked from it); the libraries after
		 * it (with NO_FILES too: placing needs only the core's memory). */
		const char *placed;
		uint64_t bias = 0;
		assert_int_equal(jitmap_stopped_placed_file(c, 0, &placed, &bias), 0);
		assert_string_equal(placed, self);
		assert_int_equal(bias, main_bias());
		size_t nplaced = 1;
		while (jitmap_stopped_placed_file(c, nplaced, &placed, NULL) == 0)
			nplaced++;
		assert_true(nplaced > 1);
		assert_int_equal(jitmap_stopped_placed_file(c, nplaced, NULL, NULL), -ENOENT);
		assert_int_equal(jitmap_stopped_find_symbol(c, "jitmap_test_core_marker", &addr, &file,
							 1), 1);
		assert_int_equal(addr, (uint64_t)(uintptr_t)&jitmap_test_core_marker);
		assert_string_equal(file, self);
		const jitmap_target t2 = jitmap_stopped_target(c);
		assert_int_equal(t2.read_mem(t2.ctx, rip - 2, code, 4, why, sizeof(why)), 0);
		assert_memory_equal(code, syscall_ud2, 4);
		jitmap_stopped_free(c);
	}
	free(bytes);

	/* Where code can be: at rip (a file mapping the kernel dumped no code of), not on the
	 * stack, not where nothing is mapped. */
	c = jitmap_stopped_open_core(core, NULL, &err);
	assert_non_null(c);
	assert_int_equal(jitmap_stopped_code_at(c, rip, why, sizeof(why)), 1);
	assert_int_equal(jitmap_stopped_code_at(c, r13, why, sizeof(why)), 0);
	assert_contains(why, "rw- segment");
	assert_int_equal(jitmap_stopped_code_at(c, 0x10, why, sizeof(why)), 0);
	assert_contains(why, "0x10 is in no mapping of the process");
	assert_int_equal(jitmap_stopped_code_at(NULL, 0x10, NULL, 0), -EINVAL);
	jitmap_stopped_free(c);

	/* The file at the core's path is another build (a package upgraded since the crash, a
	 * core read on another machine): refused, nothing of it read, and said why. The same
	 * bytes with the process's build ID are read. */
	char root[PATH_MAX], moved[PATH_MAX];
	snprintf(root, sizeof(root), "%s/sysroot", dir);
	snprintf(moved, sizeof(moved), "%s%s", root, self);
	for (char *slash = strchr(moved + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = 0;
		assert_true(mkdir(moved, 0700) == 0 || errno == EEXIST);
		*slash = '/';
	}
	for (int other_build = 1; other_build >= 0; other_build--) {
		assert_int_equal(copy_file(self, moved), 0);
		if (other_build) {
			/* The note: namesz 4, descsz 20, type NT_GNU_BUILD_ID, "GNU". */
			static const uint8_t note[16] = {4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0,
							 'G', 'N', 'U', 0};
			FILE *g = fopen(moved, "r+b");
			assert_non_null(g);
			uint8_t window[16];
			long at_note = -1;
			for (long off = 0; at_note < 0 && fseek(g, off, SEEK_SET) == 0 &&
					   fread(window, 1, 16, g) == 16; off += 4)
				if (!memcmp(window, note, 16))
					at_note = off;
			assert_true(at_note >= 0);
			fseek(g, at_note + 16, SEEK_SET);
			const int b = fgetc(g);
			fseek(g, at_note + 16, SEEK_SET);
			fputc(b ^ 0xff, g);
			fclose(g);
		}
		JITMAP_OPTS(const jitmap_stopped_opts, in_root, .sysroot = root);
		c = jitmap_stopped_open_core(core, &in_root, &err);
		assert_non_null(c);
		const jitmap_target t3 = jitmap_stopped_target(c);
		const int got = t3.read_mem(t3.ctx, rip - 2, code, 4, why, sizeof(why));
		const size_t nsym = jitmap_stopped_find_symbol(c, "jitmap_test_core_marker", &addr,
							    NULL, 1);
		if (other_build) {
			assert_int_equal(got, -EFAULT);
			assert_contains(why, "is another build");
			assert_int_equal(nsym, 0);
			assert_true(has_warning(c, "is another build than the file the process mapped "
					       "(build ID "));
		} else {
			assert_int_equal(got, 0);
			assert_memory_equal(code, syscall_ud2, 4);
			assert_int_equal(nsym, 1);
			assert_false(has_warning(c, "another build"));
		}
		jitmap_stopped_free(c);
	}
	unlink(moved);
	for (char *slash = strrchr(moved, '/'); slash && slash > moved + strlen(root);
	     slash = strrchr(moved, '/')) {
		*slash = 0;
		rmdir(moved);
	}
	rmdir(root);

	unlink(link);
	unlink(copy);
	unlink(core);
	rmdir(dir);
	free(core);
	free(self);
}
#else
static void test_real_core(void **state)
{
	(void)state;
	skip();
}
#endif

/* -- Compressed cores (systemd-coredump's) -- */

#define SEG_ZERO UINT64_C(0x40000) /* 256 KiB of zeros: holes in the decompressed file, and
				    * blocks of every codec after the data */

static uint8_t *compress(const char *codec, const uint8_t *in, size_t len, size_t *out_len)
{
	size_t cap = len + 65536;
	uint8_t *out = malloc(cap);
	assert_non_null(out);
	if (!strcmp(codec, "zstd")) {
		*out_len = ZSTD_compress(out, cap, in, len, 3);
		assert_false(ZSTD_isError(*out_len));
	} else if (!strcmp(codec, "lz4")) {
		*out_len = LZ4F_compressFrame(out, cap, in, len, NULL);
		assert_false(LZ4F_isError(*out_len));
	} else {
		size_t pos = 0;
		assert_int_equal(lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, NULL, in, len, out, &pos,
							 cap), LZMA_OK);
		*out_len = pos;
	}
	return out;
}

static void write_file(const char *path, const uint8_t *bytes, size_t len)
{
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(bytes, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void test_compressed(void **state)
{
	(void)state;
	core_builder b;
	make_process(&b, EM_X86_64, JITMAP_ORDER_LITTLE, 2);
	static const uint8_t zeros[0x40000];
	cb_load(&b, SEG_ZERO, sizeof(zeros), zeros, sizeof(zeros));
	size_t len;
	uint8_t *bytes = cb_emit(&b, &len);
	assert_non_null(bytes);
	char dir[] = "/tmp/jitmap-test-core-XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	assert_int_equal(setenv("TMPDIR", dir, 1), 0); /* O_TMPFILE there: nothing left after */
	JITMAP_OPTS(const jitmap_stopped_opts, opts, .flags = JITMAP_STOPPED_NO_FILES);
	const char *codecs[] = {"zstd", "lz4", "xz"};
	for (size_t k = 0; k < ARRAY_LEN(codecs); k++) {
		size_t zlen;
		uint8_t *z = compress(codecs[k], bytes, len, &zlen);
		assert_string_equal(jitmap_compression_of(z, zlen), codecs[k]);
		snprintf(path, sizeof(path), "%s/core.%s", dir, codecs[k]);
		write_file(path, z, zlen);

		/* Opened as the core it holds, whatever the file's name. */
		jitmap_error err;
		jitmap_stopped *c = jitmap_stopped_open_core(path, &opts, &err);
		if (!c)
			fail_msg("%s: %s", codecs[k], err.reason);
		assert_string_equal(jitmap_stopped_compression(c), codecs[k]);
		assert_int_equal(jitmap_stopped_num_threads(c), 2);
		assert_null(jitmap_stopped_warning(c, 0));
		jitmap_target t = jitmap_stopped_target(c);
		uint8_t got[0x1000];
		assert_int_equal(t.read_mem(t.ctx, SEG_A, got, sizeof(got), NULL, 0), 0);
		check_bytes(got, sizeof(got), SEG_A);
		jitmap_stopped_free(c);

		/* For a debugger that reads the core itself: the same bytes, zero pages as holes. */
		char note[192] = "x";
		const int fd = jitmap_core_decompress(path, NULL, note, sizeof(note), &err);
		if (fd < 0)
			fail_msg("%s: %s", codecs[k], err.reason);
		assert_string_equal(note, "");
		struct stat st;
		assert_int_equal(fstat(fd, &st), 0);
		assert_int_equal((size_t)st.st_size, len);
		assert_true((size_t)st.st_blocks * 512 < len);
		uint8_t *back = malloc(len);
		assert_non_null(back);
		assert_int_equal(pread(fd, back, len, 0), (ssize_t)len);
		assert_memory_equal(back, bytes, len);
		free(back);
		close(fd);

		/* Cut short (in its last block, of zeros): the core as far as it came out, and a
		 * warning that says so. */
		write_file(path, z, zlen - 4);
		c = jitmap_stopped_open_core(path, &opts, &err);
		if (!c)
			fail_msg("%s cut: %s", codecs[k], err.reason);
		assert_true(has_warning(c, "stream ends inside a frame"));
		jitmap_stopped_free(c);

		/* Damaged after its magic: refused, naming the format. */
		memset(z + 6, 0xff, zlen - 6 < 64 ? zlen - 6 : 64);
		write_file(path, z, zlen);
		assert_null(jitmap_stopped_open_core(path, &opts, &err));
		assert_int_equal(err.code, -EINVAL);
		char want[32];
		snprintf(want, sizeof(want), "not a%s %s", codecs[k][0] == 'z' ? "" : "n", codecs[k]);
		if (!strstr(err.reason, want))
			fail_msg("%s: %s", codecs[k], err.reason);
		assert_int_equal(jitmap_core_decompress(path, NULL, NULL, 0, &err), -EINVAL);
		unlink(path);
		free(z);
	}
	/* An uncompressed file is not decompressed; nothing is left in TMPDIR. */
	snprintf(path, sizeof(path), "%s/core", dir);
	write_file(path, bytes, len);
	jitmap_error err;
	assert_int_equal(jitmap_core_decompress(path, NULL, NULL, 0, &err), -EINVAL);
	assert_non_null(strstr(err.reason, "not compressed"));
	jitmap_stopped *c = jitmap_stopped_open_core(path, &opts, &err);
	assert_non_null(c);
	assert_null(jitmap_stopped_compression(c));
	jitmap_stopped_free(c);
	unlink(path);
	/* Streams whose output ends exactly on the decoder's 1 MiB output buffer (a last call
	 * with nothing to do must not say the stream was cut), and one too random to fit one
	 * 256 KiB input buffer; an interrupt stops the work. */
	const size_t sizes[] = {1u << 20, 2u << 20};
	for (size_t si = 0; si < ARRAY_LEN(sizes); si++) {
		uint8_t *big = malloc(sizes[si]);
		assert_non_null(big);
		uint64_t x = 88172645463325252ull;
		for (size_t i = 0; i < sizes[si]; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			big[i] = si ? (uint8_t)x : (uint8_t)(i / 4096);
		}
		for (size_t k = 0; k < ARRAY_LEN(codecs); k++) {
			size_t zlen;
			uint8_t *z = compress(codecs[k], big, sizes[si], &zlen);
			snprintf(path, sizeof(path), "%s/big.%s", dir, codecs[k]);
			write_file(path, z, zlen);
			char note[192] = "x";
			const int fd = jitmap_core_decompress(path, NULL, note, sizeof(note), &err);
			if (fd < 0)
				fail_msg("%s, %zu bytes: %s", codecs[k], sizes[si], err.reason);
			if (note[0])
				fail_msg("%s, %zu bytes: %s", codecs[k], sizes[si], note);
			uint8_t *back = malloc(sizes[si]);
			assert_non_null(back);
			assert_int_equal(pread(fd, back, sizes[si], 0), (ssize_t)sizes[si]);
			assert_memory_equal(back, big, sizes[si]);
			free(back);
			close(fd);
			static volatile sig_atomic_t stop = 1;
			assert_int_equal(jitmap_core_decompress(path, &stop, NULL, 0, &err), -EINTR);
			unlink(path);
			free(z);
		}
		free(big);
	}
	assert_int_equal(rmdir(dir), 0);
	unsetenv("TMPDIR");
	assert_null(jitmap_compression_of("\x28\xb5\x2f", 3));
	assert_null(jitmap_compression_of(NULL, 8));
	free(bytes);
}

/* -- JIT files carried in the core (jitmap-core-handler) -- */

static int temp_fd(const uint8_t *bytes, size_t len)
{
	char path[] = "/tmp/jitmap-test-stream-XXXXXX";
	const int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, bytes, len), (ssize_t)len);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* The output of jitmap_core_add_jit_files on `in` (a regular file) with `opts`, written to
 * a regular file (copied, not spliced): its bytes (malloc'd) in *out, what it returned. */
static int add_through(int in, const jitmap_core_add_opts *opts, uint8_t **out,
		       size_t *out_len, char *note, size_t note_len)
{
	const int o = temp_fd(NULL, 0);
	jitmap_error err;
	const int rc = jitmap_core_add_jit_files(in, o, 0, opts, note, note_len, &err);
	if (rc < 0)
		fail_msg("jitmap_core_add_jit_files: %s", err.reason);
	struct stat st;
	assert_int_equal(fstat(o, &st), 0);
	*out_len = (size_t)st.st_size;
	*out = malloc(*out_len + 1);
	assert_non_null(*out);
	assert_int_equal(pread(o, *out, *out_len, 0), (ssize_t)*out_len);
	close(o);
	return rc;
}

/* The core `bytes` through jitmap_core_add_jit_files with `files`: add_through. */
static int stream_through(const uint8_t *bytes, size_t len, const char *const *files,
			  size_t nfiles, uint64_t max_bytes, uint8_t **out, size_t *out_len,
			  char *note, size_t note_len)
{
	const int in = temp_fd(bytes, len);
	JITMAP_OPTS(const jitmap_core_add_opts, opts, .files = files, .nfiles = nfiles,
		    .max_bytes = max_bytes);
	const int rc = add_through(in, &opts, out, out_len, note, note_len);
	close(in);
	return rc;
}

/* A small core of the synthetic process, in every byte order, written from a core file: its
 * writable segments of 64 KiB or less kept whole (A), a mapped file's first page (B's), the
 * read-only C (no file there) left out. A's and B's bytes are where they were; C's read as
 * missing with the small core's reason, no file standing for them, no code there; B's
 * undumped tail keeps its header; the note reads back.
 * A small core is not made smaller again (byte for byte). Malformed small-core notes are
 * warnings, and leave the core read as any other. */
static void test_small_core(void **state)
{
	(void)state;
	for (size_t ai = 0; ai < ARRAY_LEN(arches); ai++) {
		const struct arch_case *a = &arches[ai];
		core_builder b;
		make_process(&b, a->machine, a->order, 2);
		b.loads[1].flags = PF_R; /* C */
		size_t len, out_len, again_len;
		uint8_t *bytes = cb_emit(&b, &len), *out, *again;
		assert_non_null(bytes);
		const int in = temp_fd(bytes, len);
		JITMAP_OPTS(const jitmap_core_add_opts, opts, .flags = JITMAP_CORE_ADD_SMALL,
			    .stack_bytes = 4096);
		char note[512];
		assert_int_equal(add_through(in, &opts, &out, &out_len, note, sizeof(note)), 0);
		close(in);
		assert_contains(note, "a small core: 6144 of the 6400 bytes");
		JITMAP_OPTS(const jitmap_stopped_opts, copts, .flags = JITMAP_STOPPED_NO_FILES);
		jitmap_stopped *c = open_bytes(out, out_len, &copts);
		if (jitmap_stopped_warning(c, 0))
			fail_msg("%s: %s", a->name, jitmap_stopped_warning(c, 0));
		uint64_t bound = 0, kept = 0, left = 0;
		assert_int_equal(jitmap_stopped_small(c, &bound, &kept, &left), 1);
		assert_int_equal(bound, 4096);
		assert_int_equal(kept, 0x1000 + 0x800);
		assert_int_equal(left, sizeof(seg_c));
		assert_int_equal(jitmap_stopped_num_threads(c), 2);
		check_registers(c, a);
		const jitmap_target t = jitmap_stopped_target(c);
		uint8_t buf[0x1000];
		char why[192];
		assert_int_equal(t.read_mem(t.ctx, SEG_A, buf, 0x1000, why, sizeof(why)), 0);
		check_bytes(buf, 0x1000, SEG_A);
		assert_int_equal(t.read_mem(t.ctx, SEG_B, buf, 0x800, why, sizeof(why)), 0);
		check_bytes(buf, 0x800, SEG_B);
		assert_int_equal(t.read_mem(t.ctx, SEG_C + 8, buf, 8, why, sizeof(why)), -EFAULT);
		assert_contains(why, "0x20008 is not in this small core (left out with [0x20000, "
				     "0x20100))");
		jitmap_stopped_memory_info mi = {.sz = sizeof(mi)};
		assert_int_equal(jitmap_stopped_memory(c, SEG_C, &mi), 0);
		assert_int_equal(mi.source, JITMAP_STOPPED_MEM_NONE);
		assert_true(mi.file_unusable);
		assert_int_equal(mi.size, sizeof(seg_c));
		assert_int_equal(jitmap_stopped_memory(c, SEG_B + 0x800, &mi), 0);
		assert_int_equal(mi.segment_start, SEG_B + 0x800); /* the undumped tail's header */
		assert_int_equal(jitmap_stopped_code_at(c, SEG_C, why, sizeof(why)), 0);
		assert_contains(why, "this small core left out");
		assert_int_equal(jitmap_stopped_small(NULL, NULL, NULL, NULL), -EINVAL);
		jitmap_stopped_free(c);

		const int in2 = temp_fd(out, out_len);
		assert_int_equal(add_through(in2, &opts, &again, &again_len, note, sizeof(note)), 0);
		close(in2);
		assert_contains(note, "it is a small core already");
		assert_int_equal(again_len, out_len);
		assert_memory_equal(again, out, out_len);
		free(again);
		free(out);
		free(bytes);
	}

	/* Malformed notes: each a warning; the core is read as one that is not small. */
	static const struct {
		uint32_t version, kept, left;
		size_t len;
		const char *warning;
	} bad[] = {
		{1, 0, 0, 16, "too short"},
		{2, 0, 0, 24, "of a version this jitmap does not read"},
		{1, 3, 0, 24 + 2 * 24, "claims 3 ranges"},
		{1, 0, UINT32_MAX, 24 + 24, "ranges in 48 bytes"},
	};
	for (size_t k = 0; k < ARRAY_LEN(bad); k++) {
		core_builder b;
		make_process(&b, EM_X86_64, JITMAP_ORDER_LITTLE, 1);
		uint8_t desc[24 + 2 * 24] = {0};
		cb_put(&b, desc, bad[k].version, 4);
		cb_put(&b, desc + 4, bad[k].kept, 4);
		cb_put(&b, desc + 8, bad[k].left, 4);
		cb_note(&b, JITMAP_CORE_NOTE_SMALL, JITMAP_CORE_NOTE_NAME, desc, bad[k].len);
		size_t len;
		uint8_t *bytes = cb_emit(&b, &len);
		JITMAP_OPTS(const jitmap_stopped_opts, copts, .flags = JITMAP_STOPPED_NO_FILES);
		jitmap_stopped *c = open_bytes(bytes, len, &copts);
		if (!has_warning(c, bad[k].warning))
			fail_msg("case %zu: no warning \"%s\" (first: %s)", k, bad[k].warning,
				 jitmap_stopped_warning(c, 0) ? jitmap_stopped_warning(c, 0) : "none");
		assert_int_equal(jitmap_stopped_small(c, NULL, NULL, NULL), 0);
		uint8_t buf[16];
		assert_int_equal(jitmap_stopped_target(c).read_mem(jitmap_stopped_target(c).ctx, SEG_A,
								buf, 16, NULL, 0), 0);
		jitmap_stopped_free(c);
		free(bytes);
	}
	/* Two notes: the second is a warning. */
	core_builder b;
	make_process(&b, EM_X86_64, JITMAP_ORDER_LITTLE, 1);
	uint8_t desc[24] = {0};
	cb_put(&b, desc, 1, 4);
	cb_note(&b, JITMAP_CORE_NOTE_SMALL, JITMAP_CORE_NOTE_NAME, desc, sizeof(desc));
	cb_note(&b, JITMAP_CORE_NOTE_SMALL, JITMAP_CORE_NOTE_NAME, desc, sizeof(desc));
	size_t len;
	uint8_t *bytes = cb_emit(&b, &len);
	JITMAP_OPTS(const jitmap_stopped_opts, copts, .flags = JITMAP_STOPPED_NO_FILES);
	jitmap_stopped *c = open_bytes(bytes, len, &copts);
	assert_true(has_warning(c, "a second note of a small core"));
	assert_int_equal(jitmap_stopped_small(c, NULL, NULL, NULL), 1);
	jitmap_stopped_free(c);
	free(bytes);
}

/* A perf map and a jitdump added to a core of every byte order: read back as the files they
 * were, the core's memory where it was (every offset moved by whole pages); a limit cuts the
 * last file and says so; a core with no file to add, and bytes that are no core, pass through
 * byte for byte; malformed notes are warnings, never files. */
static void test_jit_files(void **state)
{
	(void)state;
	char dir[] = "/tmp/jitmap-test-jitfiles-XXXXXX", map[64], dump[64];
	assert_non_null(mkdtemp(dir));
	snprintf(map, sizeof(map), "%s/perf-77.map", dir);
	snprintf(dump, sizeof(dump), "%s/jit-77.dump", dir);
	static const char map_text[] = "7f0000001000 40 JS:*jitmapInner a.js:1:1\n"
				       "7f0000001040 20 JS:*jitmapOuter a.js:9:1\n";
	write_file(map, (const uint8_t *)map_text, strlen(map_text));
	uint8_t jd[40] = {0x44, 0x54, 0x69, 0x4a, 1, 0, 0, 0, 40}; /* "JiTD" little-endian, v1 */
	write_file(dump, jd, sizeof(jd));
	const char *const files[] = {map, dump};

	for (size_t ai = 0; ai < ARRAY_LEN(arches); ai++) {
		const struct arch_case *a = &arches[ai];
		core_builder b;
		make_process(&b, a->machine, a->order, 2);
		size_t len, out_len;
		uint8_t *bytes = cb_emit(&b, &len), *out;
		assert_non_null(bytes);
		char note[256];
		assert_int_equal(stream_through(bytes, len, files, 2, 0, &out, &out_len, note,
						sizeof(note)), 2);
		assert_true(out_len > len && (out_len - len) % 4096 == 0);
		JITMAP_OPTS(const jitmap_stopped_opts, opts, .flags = JITMAP_STOPPED_NO_FILES);
		jitmap_stopped *c = open_bytes(out, out_len, &opts);
		if (jitmap_stopped_warning(c, 0))
			fail_msg("%s: %s", a->name, jitmap_stopped_warning(c, 0));
		assert_int_equal(jitmap_stopped_num_threads(c), 2);
		jitmap_target t = jitmap_stopped_target(c);
		uint8_t buf[0x1000];
		assert_int_equal(t.read_mem(t.ctx, SEG_A, buf, sizeof(buf), NULL, 0), 0);
		check_bytes(buf, sizeof(buf), SEG_A);
		assert_int_equal(t.read_mem(t.ctx, SEG_B, buf, 0x800, NULL, 0), 0);
		check_bytes(buf, 0x800, SEG_B);
		assert_int_equal(jitmap_stopped_num_jit_files(c), 2);
		const jitmap_stopped_jit_file_info *f = jitmap_stopped_jit_file(c, 0);
		assert_string_equal(f->path, map);
		assert_int_equal(f->kind, JITMAP_PERFMAP_MAP);
		assert_int_equal(f->flags, 0);
		assert_int_equal(f->size, strlen(map_text));
		assert_memory_equal(f->data, map_text, f->size);
		assert_memory_equal(out + f->offset, map_text, f->size);
		f = jitmap_stopped_jit_file(c, 1);
		assert_string_equal(f->path, dump);
		assert_int_equal(f->kind, JITMAP_PERFMAP_JITDUMP);
		assert_int_equal(f->size, sizeof(jd));
		assert_memory_equal(f->data, jd, sizeof(jd));
		assert_null(jitmap_stopped_jit_file(c, 2));
		jitmap_stopped_free(c);
		free(out);

		/* 50 bytes at most: the map cut to them, none of the jitdump left; each said. */
		assert_int_equal(stream_through(bytes, len, files, 2, 50, &out, &out_len, note,
						sizeof(note)), 2);
		c = open_bytes(out, out_len, &opts);
		assert_int_equal(jitmap_stopped_num_jit_files(c), 2);
		f = jitmap_stopped_jit_file(c, 0);
		assert_int_equal(f->size, 50);
		assert_int_equal(f->flags, JITMAP_CORE_FILE_CUT);
		assert_true(has_warning(c, "only its first 50 are added"));
		assert_true(has_warning(c, "is in the core cut short: its first 50 bytes"));
		assert_int_equal(jitmap_stopped_jit_file(c, 1)->size, 0);
		jitmap_stopped_free(c);
		free(out);

		/* Nothing to add: byte for byte, said. */
		assert_int_equal(stream_through(bytes, len, NULL, 0, 0, &out, &out_len, note,
						sizeof(note)), 0);
		assert_int_equal(out_len, len);
		assert_memory_equal(out, bytes, len);
		assert_contains(note, "no perf map or jitdump file was found");
		free(out);
		free(bytes);
	}

	/* Bytes that are no core, and an ELF file that is no core: byte for byte, said. */
	uint8_t junk[10000];
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 131 + 7);
	size_t out_len;
	uint8_t *out;
	char note[256];
	assert_int_equal(stream_through(junk, sizeof(junk), files, 2, 0, &out, &out_len, note,
					sizeof(note)), 0);
	assert_int_equal(out_len, sizeof(junk));
	assert_memory_equal(out, junk, sizeof(junk));
	assert_contains(note, "not an ELF file");
	free(out);
	core_builder b;
	make_process(&b, EM_X86_64, JITMAP_ORDER_LITTLE, 1);
	b.type = ET_EXEC;
	size_t len;
	uint8_t *bytes = cb_emit(&b, &len);
	assert_int_equal(stream_through(bytes, len, files, 2, 0, &out, &out_len, note,
					sizeof(note)), 0);
	assert_int_equal(out_len, len);
	assert_memory_equal(out, bytes, len);
	assert_contains(note, "passed on unchanged");
	free(out);
	free(bytes);

	/* Malformed notes: each a warning naming what is wrong, none a file; a PROBLEM note is
	 * a warning of the core. */
	make_process(&b, EM_X86_64, JITMAP_ORDER_LITTLE, 1);
	uint8_t d[64] = {0};
	cb_put(&b, d, 1, 4);                 /* version 1 */
	cb_put(&b, d + 4, 1, 4);             /* a perf map */
	cb_put(&b, d + 8, 1000, 8);          /* 1000 bytes: more than the note holds */
	cb_put(&b, d + 16, 4, 4);            /* "/ab" and its NUL: a good path */
	memcpy(d + 24, "/ab", 4);
	cb_note(&b, JITMAP_CORE_NOTE_FILE, JITMAP_CORE_NOTE_NAME, d, 40);
	cb_put(&b, d + 16, 8, 4);            /* the path's 8 bytes run past a 30-byte note */
	cb_note(&b, JITMAP_CORE_NOTE_FILE, JITMAP_CORE_NOTE_NAME, d, 30);
	cb_put(&b, d + 16, 4, 4);
	cb_put(&b, d + 4, 9, 4);             /* kind 9 */
	cb_note(&b, JITMAP_CORE_NOTE_FILE, JITMAP_CORE_NOTE_NAME, d, 40);
	cb_put(&b, d + 4, 1, 4);
	cb_put(&b, d, 2, 4);                 /* version 2 */
	cb_note(&b, JITMAP_CORE_NOTE_FILE, JITMAP_CORE_NOTE_NAME, d, 40);
	cb_note(&b, JITMAP_CORE_NOTE_FILE, JITMAP_CORE_NOTE_NAME, d, 10); /* no header */
	cb_note(&b, JITMAP_CORE_NOTE_PROBLEM, JITMAP_CORE_NOTE_NAME, "/tmp/x: gone", 13);
	bytes = cb_emit(&b, &len);
	JITMAP_OPTS(const jitmap_stopped_opts, opts, .flags = JITMAP_STOPPED_NO_FILES);
	jitmap_stopped *c = open_bytes(bytes, len, &opts);
	assert_int_equal(jitmap_stopped_num_jit_files(c), 0);
	assert_null(jitmap_stopped_jit_file(c, 0));
	assert_true(has_warning(c, "says it holds 1000 bytes of the file"));
	assert_true(has_warning(c, "is not one NUL-terminated string"));
	assert_true(has_warning(c, "says its kind is 9"));
	assert_true(has_warning(c, "is of version 2"));
	assert_true(has_warning(c, "fewer than its 24-byte header"));
	assert_true(has_warning(c, "jitmap-core-handler: /tmp/x: gone"));
	jitmap_stopped_free(c);
	free(bytes);
	unlink(map);
	unlink(dump);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synthetic),
		cmocka_unit_test(test_mapped_files),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_hostile_reads),
		cmocka_unit_test(test_scan_core),
		cmocka_unit_test(test_scan_core_memory_mappings),
		cmocka_unit_test(test_real_core),
		cmocka_unit_test(test_compressed),
		cmocka_unit_test(test_jit_files),
		cmocka_unit_test(test_small_core),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
