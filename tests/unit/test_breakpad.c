#define _GNU_SOURCE
/* test_breakpad.c: Breakpad symbol files (jitmap/breakpad.h): the debug identifier as
 * Breakpad's processor prints it, the code hash, unwinding rules as STACK CFI INIT records,
 * the whole file's text, what is refused, and a file merged with the one a store holds
 * already (older rows kept, overlaps resolved for the newer). The texts expected here are
 * the forms Breakpad's own dump_syms writes and its reader was seen to accept
 * (docs/minidumps.md). */
#include "unit.h"

#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitmap/breakpad.h"

#define BASE UINT64_C(0x7f0000000000)

static const uint8_t ID16[16] = {0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
				 0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f};
#define ID16_DEBUG "838281808584878688898A8B8C8D8E8F0"

/* -- Identifiers -- */

static void test_debug_id(void **state)
{
	(void)state;
	uint8_t b[20];
	for (unsigned i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)i;
	char out[34];
	/* A 20-byte GNU build ID: its first 16 bytes, the GUID's fields byte-reversed. */
	assert_int_equal(jitmap_breakpad_debug_id(b, sizeof(b), out), 0);
	assert_string_equal(out, "030201000504070608090A0B0C0D0E0F0");
	assert_int_equal(jitmap_breakpad_debug_id(ID16, 16, out), 0);
	assert_string_equal(out, ID16_DEBUG);
	/* Shorter: zero-padded. */
	const uint8_t four[4] = {0xde, 0xad, 0xbe, 0xef};
	assert_int_equal(jitmap_breakpad_debug_id(four, 4, out), 0);
	assert_string_equal(out, "EFBEADDE0000000000000000000000000");
	assert_int_equal(jitmap_breakpad_debug_id(b, 0, out), -EINVAL);
	assert_string_equal(out, "");
	assert_int_equal(jitmap_breakpad_debug_id(NULL, 4, out), -EINVAL);
}

static void hex16(const uint8_t v[16], char out[33])
{
	for (unsigned i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", v[i]);
}

static void test_code_id(void **state)
{
	(void)state;
	uint8_t id[16], again[16];
	char hex[33];
	/* FNV-1a 128's published vectors: the offset basis for no bytes, and "a". */
	jitmap_breakpad_code_id(NULL, 0, id);
	hex16(id, hex);
	assert_string_equal(hex, "6c62272e07bb014262b821756295c58d");
	jitmap_breakpad_code_id("a", 1, id);
	hex16(id, hex);
	assert_string_equal(hex, "d228cb696f1a8caf78912b704e4a8964");
	/* Longer than a block of anything (Python's big integers gave it). */
	uint8_t code[768];
	for (unsigned i = 0; i < sizeof(code); i++)
		code[i] = (uint8_t)i;
	jitmap_breakpad_code_id(code, sizeof(code), id);
	hex16(id, hex);
	assert_string_equal(hex, "ceced98447397784e46346c4dbaac68d");
	/* The same bytes, the same ID; one byte changed past 4 KiB's reach of Breakpad's own
	 * hash still changes it. */
	jitmap_breakpad_code_id(code, sizeof(code), again);
	assert_memory_equal(id, again, 16);
	code[700] ^= 1;
	jitmap_breakpad_code_id(code, sizeof(code), again);
	assert_memory_not_equal(id, again, 16);
}

/* Where the stock walker looks a caller up (verified with minidump_stackwalk: on AArch64 a
 * row at ra - 1 was missed). */
static void test_caller_pc(void **state)
{
	(void)state;
	uint64_t pc = 0;
	assert_int_equal(jitmap_breakpad_caller_pc(JITMAP_ARCH_X86_64, 0x120, &pc), 0);
	assert_int_equal(pc, 0x11f);
	assert_int_equal(jitmap_breakpad_caller_pc(JITMAP_ARCH_AARCH64, 0x120, &pc), 0);
	assert_int_equal(pc, 0x11c);
	assert_int_equal(jitmap_breakpad_caller_pc(JITMAP_ARCH_S390X, 0x120, &pc), -ENOTSUP);
	assert_int_equal(jitmap_breakpad_caller_pc(JITMAP_ARCH_AARCH64, 3, &pc), -EINVAL);
	assert_int_equal(jitmap_breakpad_caller_pc(JITMAP_ARCH_X86_64, 0x120, NULL), -EINVAL);
}

/* -- Records -- */

static jitmap_breakpad_sym *new_x86(void)
{
	jitmap_breakpad_sym *s =
		jitmap_breakpad_sym_new(JITMAP_ARCH_X86_64, "/tmp/jit/jit-0001", ID16, 16, BASE);
	assert_non_null(s);
	return s;
}

static void test_new_refused(void **state)
{
	(void)state;
	static const struct {
		jitmap_arch arch;
		const char *name;
		size_t id_len;
		int err;
	} cases[] = {
		{JITMAP_ARCH_PPC64, "jit", 16, ENOTSUP},
		{JITMAP_ARCH_UNKNOWN, "jit", 16, ENOTSUP},
		{JITMAP_ARCH_X86_64, NULL, 16, EINVAL},
		{JITMAP_ARCH_X86_64, "dir/", 16, EINVAL},     /* no base name */
		{JITMAP_ARCH_X86_64, "a/..", 16, EINVAL},
		{JITMAP_ARCH_X86_64, "a\\.", 16, EINVAL},     /* Windows' separator counts */
		{JITMAP_ARCH_X86_64, "jit\n1", 16, EINVAL},   /* a folder's name */
		{JITMAP_ARCH_X86_64, "jit", 0, EINVAL},
		{JITMAP_ARCH_X86_64, "jit", 65, EINVAL},
	};
	uint8_t id[65] = {1};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		errno = 0;
		assert_null(jitmap_breakpad_sym_new(cases[i].arch, cases[i].name, id,
						    cases[i].id_len, BASE));
		assert_int_equal(errno, cases[i].err);
	}
	char longname[300];
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_null(jitmap_breakpad_sym_new(JITMAP_ARCH_X86_64, longname, id, 16, BASE));
	jitmap_breakpad_sym *s = jitmap_breakpad_sym_new(JITMAP_ARCH_AARCH64, "x", id, 64, 0);
	assert_non_null(s);
	jitmap_breakpad_sym_free(s);
	jitmap_breakpad_sym_free(NULL);
}

/* A scratch symbol store, removed after each test. */
struct store {
	char dir[64];
};

static int setup_store(void **state)
{
	struct store *st = calloc(1, sizeof(*st));
	strcpy(st->dir, "/tmp/jitmap-bp-XXXXXX");
	if (!mkdtemp(st->dir)) {
		free(st);
		return -1;
	}
	*state = st;
	return 0;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb, (void)flag, (void)f;
	return remove(p);
}

static int teardown_store(void **state)
{
	struct store *st = *state;
	nftw(st->dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	free(st);
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char buf[8192];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* Write `s` into the store and return the file's text (a static buffer). */
static char *write_read(jitmap_breakpad_sym *s, const struct store *st)
{
	char path[512];
	jitmap_error err = {0};
	int rc = jitmap_breakpad_sym_write(s, st->dir, path, sizeof(path), &err);
	if (rc)
		fail_msg("sym_write: %d %s", rc, err.reason);
	char want[512];
	snprintf(want, sizeof(want), "%s/jit-0001/" ID16_DEBUG "/jit-0001.sym", st->dir);
	assert_string_equal(path, want);
	return slurp(path);
}

/* The caller's frame that jitmap's unwinder proves at a stackmap record: the CFA rsp + 16,
 * the return address just below it, rbp saved below that. */
static jitmap_unwind_rule rule_rsp16(void)
{
	jitmap_unwind_rule r = {.cfa_reg = 7, .cfa_off = 16};
	r.ra = (jitmap_unwind_saved){.reg = 16, .where = JITMAP_UNWIND_AT_CFA, .off = -8};
	r.saved[0] = (jitmap_unwind_saved){.reg = 6, .where = JITMAP_UNWIND_AT_CFA, .off = -16};
	r.num_saved = 1;
	return r;
}

static void test_cfi_x86_64(void **state)
{
	const struct store *st = *state;
	jitmap_breakpad_sym *s = new_x86();
	jitmap_unwind_rule r = rule_rsp16();
	assert_int_equal(jitmap_breakpad_sym_cfi(s, BASE + 0x1f, 1, &r), 0);
	/* A leaf's row: the caller's SP is rsp + 8, its rbx still in rbx, r12 the CFA itself. */
	jitmap_unwind_rule leaf = {.cfa_reg = 7, .cfa_off = 8};
	leaf.ra = (jitmap_unwind_saved){.reg = 16, .where = JITMAP_UNWIND_AT_CFA, .off = -8};
	leaf.saved[0] = (jitmap_unwind_saved){.reg = 3, .where = JITMAP_UNWIND_IN_REG, .from = 3};
	leaf.saved[1] = (jitmap_unwind_saved){.reg = 12, .where = JITMAP_UNWIND_CFA_PLUS};
	leaf.num_saved = 2;
	assert_int_equal(jitmap_breakpad_sym_cfi(s, BASE + 0x200, 0x10, &leaf), 0);
	const char *text = write_read(s, st);
	assert_string_equal(text,
			    "MODULE Linux x86_64 " ID16_DEBUG " jit-0001\n"
			    "INFO CODE_ID 808182838485868788898A8B8C8D8E8F\n"
			    "STACK CFI INIT 1f 1 .cfa: $rsp 16 + .ra: .cfa -8 + ^ $rbp: .cfa -16 + ^\n"
			    "STACK CFI INIT 200 10 .cfa: $rsp 8 + .ra: .cfa -8 + ^ $rbx: $rbx "
			    "$r12: .cfa 0 +\n");
	jitmap_breakpad_sym_free(s);
}

static void test_cfi_arm64(void **state)
{
	const struct store *st = *state;
	jitmap_breakpad_sym *s =
		jitmap_breakpad_sym_new(JITMAP_ARCH_AARCH64, "jit-0001", ID16, 16, BASE);
	assert_non_null(s);
	/* After `stp x29, x30, [sp, #-16]!; mov x29, sp`: the frame record at x29. */
	jitmap_unwind_rule fr = {.cfa_reg = 29, .cfa_off = 16};
	fr.ra = (jitmap_unwind_saved){.reg = 30, .where = JITMAP_UNWIND_AT_CFA, .off = -8};
	fr.saved[0] = (jitmap_unwind_saved){.reg = 29, .where = JITMAP_UNWIND_AT_CFA, .off = -16};
	fr.num_saved = 1;
	/* A leaf: the return address still in x30. */
	jitmap_unwind_rule leaf = {.cfa_reg = 31, .cfa_off = 0};
	leaf.ra = (jitmap_unwind_saved){.reg = 30, .where = JITMAP_UNWIND_IN_REG, .from = 30};
	assert_int_equal(jitmap_breakpad_sym_cfi(s, BASE + 0x10, 0x30, &fr), 0);
	assert_int_equal(jitmap_breakpad_sym_cfi(s, BASE, 0x10, &leaf), 0);
	const char *text = write_read(s, st);
	assert_string_equal(text, "MODULE Linux arm64 " ID16_DEBUG " jit-0001\n"
				  "INFO CODE_ID 808182838485868788898A8B8C8D8E8F\n"
				  "STACK CFI INIT 0 10 .cfa: sp 0 + .ra: x30\n"
				  "STACK CFI INIT 10 30 .cfa: x29 16 + .ra: .cfa -8 + ^ "
				  "x29: .cfa -16 + ^\n");
	jitmap_breakpad_sym_free(s);
}

/* Only rules, never guesses: whatever cannot be said exactly is refused. */
static void test_cfi_refused(void **state)
{
	(void)state;
	jitmap_breakpad_sym *s = new_x86();
	const jitmap_unwind_rule good = rule_rsp16();
	assert_int_equal(jitmap_breakpad_sym_cfi(s, BASE, 1, NULL), -EINVAL);
	assert_int_equal(jitmap_breakpad_sym_cfi(NULL, BASE, 1, &good), -EINVAL);
	assert_int_equal(jitmap_breakpad_sym_cfi(s, BASE - 1, 1, &good), -EINVAL); /* below base */
	assert_int_equal(jitmap_breakpad_sym_cfi(s, BASE, 0, &good), -EINVAL);     /* empty */
	assert_int_equal(jitmap_breakpad_sym_cfi(s, UINT64_MAX, 2, &good), -EINVAL); /* wraps */
	jitmap_unwind_rule r = good;
	r.cfa_reg = 17; /* xmm0: no name in Breakpad's x86-64 walker */
	assert_int_equal(jitmap_breakpad_sym_cfi(s, BASE, 1, &r), -EINVAL);
	r = good;
	r.ra.where = 0;
	assert_int_equal(jitmap_breakpad_sym_cfi(s, BASE, 1, &r), -EINVAL);
	r = good;
	r.saved[0].where = 4;
	assert_int_equal(jitmap_breakpad_sym_cfi(s, BASE, 1, &r), -EINVAL);
	r = good;
	r.ra = (jitmap_unwind_saved){.reg = 16, .where = JITMAP_UNWIND_IN_REG, .from = 40};
	assert_int_equal(jitmap_breakpad_sym_cfi(s, BASE, 1, &r), -EINVAL);
	r = good;
	r.saved[1] = r.saved[0]; /* rbp twice */
	r.num_saved = 2;
	assert_int_equal(jitmap_breakpad_sym_cfi(s, BASE, 1, &r), -EINVAL);
	r = good;
	r.num_saved = JITMAP_UNWIND_RULE_MAX_SAVED + 1;
	assert_int_equal(jitmap_breakpad_sym_cfi(s, BASE, 1, &r), -EINVAL);
	/* AArch64's sp is 31; on x86-64 there is no 31. */
	r = good;
	r.saved[0].reg = 31;
	assert_int_equal(jitmap_breakpad_sym_cfi(s, BASE, 1, &r), -EINVAL);
	assert_int_equal(jitmap_breakpad_sym_func(s, BASE, 4, ""), -EINVAL);
	assert_int_equal(jitmap_breakpad_sym_func(s, BASE, 4, " \n "), -EINVAL);
	assert_int_equal(jitmap_breakpad_sym_func(s, BASE - 4, 4, "f"), -EINVAL);
	assert_int_equal(jitmap_breakpad_sym_line(s, BASE, 0, "f.js", 1), -EINVAL);
	assert_int_equal(jitmap_breakpad_sym_line(s, BASE, 4, NULL, 1), -EINVAL);
	jitmap_breakpad_sym_free(s);
}

/* FUNC, lines under it (clipped to it; one outside every FUNC left out), PUBLIC, files
 * numbered by name, names kept whole on their line. */
static void test_text(void **state)
{
	const struct store *st = *state;
	jitmap_breakpad_sym *s = new_x86();
	assert_int_equal(jitmap_breakpad_sym_func(s, BASE + 0x100, 0x40, "js:jit_outer"), 0);
	assert_int_equal(jitmap_breakpad_sym_func(s, BASE, 0x40, "js:jit inner\n|x"), 0);
	assert_int_equal(jitmap_breakpad_sym_func(s, BASE + 0x200, 0, " js:stub "), 0);
	assert_int_equal(jitmap_breakpad_sym_line(s, BASE + 0x14, 0x2c, "demo.js", 11), 0);
	assert_int_equal(jitmap_breakpad_sym_line(s, BASE, 0x14, "demo.js", 10), 0);
	assert_int_equal(jitmap_breakpad_sym_line(s, BASE + 0x100, 0x80, "a lib.js", 20), 0);
	assert_int_equal(jitmap_breakpad_sym_line(s, BASE + 0x300, 4, "none.js", 1), 0);
	jitmap_unwind_rule r = rule_rsp16();
	assert_int_equal(jitmap_breakpad_sym_cfi(s, BASE + 0x11f, 1, &r), 0);
	const char *text = write_read(s, st);
	assert_string_equal(text,
			    "MODULE Linux x86_64 " ID16_DEBUG " jit-0001\n"
			    "INFO CODE_ID 808182838485868788898A8B8C8D8E8F\n"
			    "FILE 0 a lib.js\n"
			    "FILE 1 demo.js\n"
			    "FUNC 0 40 0 js:jit inner |x\n"
			    "0 14 10 1\n"
			    "14 2c 11 1\n"
			    "FUNC 100 40 0 js:jit_outer\n"
			    "100 40 20 0\n"
			    "PUBLIC 200 0 js:stub\n"
			    "STACK CFI INIT 11f 1 .cfa: $rsp 16 + .ra: .cfa -8 + ^ $rbp: .cfa -16 + ^\n");
	jitmap_breakpad_sym_free(s);
}

/* -- Merging with the store's file -- */

static void test_merge_keeps_old_rows(void **state)
{
	const struct store *st = *state;
	jitmap_unwind_rule r = rule_rsp16();
	/* A first crash: jit_inner at its PC, jit_outer at its return address. */
	jitmap_breakpad_sym *a = new_x86();
	assert_int_equal(jitmap_breakpad_sym_func(a, BASE + 0x100, 0x40, "js:jit_outer"), 0);
	assert_int_equal(jitmap_breakpad_sym_line(a, BASE + 0x100, 0x20, "demo.js", 20), 0);
	assert_int_equal(jitmap_breakpad_sym_cfi(a, BASE + 0x11f, 1, &r), 0);
	write_read(a, st);
	jitmap_breakpad_sym_free(a);
	/* Another crash of the same code: another PC in jit_outer, another function. */
	jitmap_breakpad_sym *b = new_x86();
	assert_int_equal(jitmap_breakpad_sym_func(b, BASE + 0x100, 0x40, "js:jit_outer"), 0);
	assert_int_equal(jitmap_breakpad_sym_line(b, BASE + 0x120, 0x20, "demo.js", 21), 0);
	assert_int_equal(jitmap_breakpad_sym_cfi(b, BASE + 0x12f, 1, &r), 0);
	assert_int_equal(jitmap_breakpad_sym_func(b, BASE + 0x300, 0, "js:other"), 0);
	const char *text = write_read(b, st);
	assert_string_equal(text,
			    "MODULE Linux x86_64 " ID16_DEBUG " jit-0001\n"
			    "INFO CODE_ID 808182838485868788898A8B8C8D8E8F\n"
			    "FILE 0 demo.js\n"
			    "FUNC 100 40 0 js:jit_outer\n"
			    "100 20 20 0\n"
			    "120 20 21 0\n"
			    "PUBLIC 300 0 js:other\n"
			    "STACK CFI INIT 11f 1 .cfa: $rsp 16 + .ra: .cfa -8 + ^ $rbp: .cfa -16 + ^\n"
			    "STACK CFI INIT 12f 1 .cfa: $rsp 16 + .ra: .cfa -8 + ^ $rbp: .cfa -16 + ^\n");
	/* Written again with nothing new: the same text (merging is idempotent). */
	char again[8192];
	strcpy(again, text);
	assert_string_equal(write_read(b, st), again);
	jitmap_breakpad_sym_free(b);
}

static void test_merge_overlaps(void **state)
{
	const struct store *st = *state;
	jitmap_unwind_rule r = rule_rsp16();
	jitmap_breakpad_sym *a = new_x86();
	assert_int_equal(jitmap_breakpad_sym_func(a, BASE + 0x100, 0x40, "old_outer"), 0);
	assert_int_equal(jitmap_breakpad_sym_func(a, BASE + 0x200, 0, "old_public"), 0);
	assert_int_equal(jitmap_breakpad_sym_func(a, BASE + 0x400, 0x10, "old_kept"), 0);
	assert_int_equal(jitmap_breakpad_sym_line(a, BASE + 0x100, 0x8, "o.js", 1), 0);
	assert_int_equal(jitmap_breakpad_sym_line(a, BASE + 0x118, 0x8, "o.js", 2), 0);
	assert_int_equal(jitmap_breakpad_sym_cfi(a, BASE + 0x100, 0x40, &r), 0);
	write_read(a, st);
	jitmap_breakpad_sym_free(a);

	jitmap_breakpad_sym *b = new_x86();
	/* Over old_outer's middle: the new FUNC replaces it; the old line outside it has no
	 * FUNC left and goes; the one inside stays under the new FUNC. */
	assert_int_equal(jitmap_breakpad_sym_func(b, BASE + 0x110, 0x20, "first_try"), 0);
	assert_int_equal(jitmap_breakpad_sym_func(b, BASE + 0x110, 0x10, "new_outer"), 0);
	/* A FUNC over the old PUBLIC's address replaces it too. */
	assert_int_equal(jitmap_breakpad_sym_func(b, BASE + 0x1f0, 0x20, "new_over_public"), 0);
	/* One CFI row inside the old INIT range: the old range goes whole. */
	jitmap_unwind_rule r2 = r;
	r2.cfa_off = 32;
	assert_int_equal(jitmap_breakpad_sym_cfi(b, BASE + 0x11f, 1, &r2), 0);
	const char *text = write_read(b, st);
	/* first_try and new_outer overlap within the new records: the later call wins. */
	assert_string_equal(text,
			    "MODULE Linux x86_64 " ID16_DEBUG " jit-0001\n"
			    "INFO CODE_ID 808182838485868788898A8B8C8D8E8F\n"
			    "FILE 0 o.js\n"
			    "FUNC 110 10 0 new_outer\n"
			    "118 8 2 0\n"
			    "FUNC 1f0 20 0 new_over_public\n"
			    "FUNC 400 10 0 old_kept\n"
			    "STACK CFI INIT 11f 1 .cfa: $rsp 32 + .ra: .cfa -8 + ^ $rbp: .cfa -16 + ^\n");
	jitmap_breakpad_sym_free(b);
}

/* A file another writer left (dump_syms' shape): its delta rows stay with their INIT, records
 * jitmap does not write and lines it cannot read go, its FILE numbers become ours. */
static void test_merge_foreign_file(void **state)
{
	const struct store *st = *state;
	char folder[256], path[512];
	snprintf(folder, sizeof(folder), "%s/jit-0001", st->dir);
	assert_int_equal(mkdir(folder, 0755), 0);
	snprintf(folder, sizeof(folder), "%s/jit-0001/" ID16_DEBUG, st->dir);
	assert_int_equal(mkdir(folder, 0755), 0);
	snprintf(path, sizeof(path), "%s/jit-0001.sym", folder);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("MODULE Linux x86_64 " ID16_DEBUG " jit-0001\r\n"
	      "INFO CODE_ID 808182838485868788898A8B8C8D8E8F\n"
	      "FILE 7 z.js\n"
	      "FILE 3 b.js\n"
	      "INLINE_ORIGIN 0 inlined\n"
	      "FUNC m 500 10 0 shared body\n"
	      "INLINE 0 1 7 0 504 4\n"
	      "500 4 5 7\n"
	      "504 4 6 3\n"
	      "508 4 7 99\n"             /* no FILE 99 */
	      "50c zz 8 3\n"             /* not a line */
	      "FUNC 600 0 0 empty\n"     /* Breakpad refuses an empty FUNC */
	      "PUBLIC m 700 0 pub\n"
	      "STACK CFI INIT 500 10 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n"
	      "STACK CFI 501 .cfa: $rsp 16 +\n"
	      "STACK CFI 520 .cfa: $rsp 24 +\n" /* outside its INIT */
	      "STACK WIN 4 500 10 0 0 0 0 0 0 1 x\n"
	      "garbage\n",
	      f);
	fclose(f);
	jitmap_breakpad_sym *s = new_x86();
	assert_int_equal(jitmap_breakpad_sym_func(s, BASE + 0x10, 0x10, "new"), 0);
	const char *text = write_read(s, st);
	assert_string_equal(text,
			    "MODULE Linux x86_64 " ID16_DEBUG " jit-0001\n"
			    "INFO CODE_ID 808182838485868788898A8B8C8D8E8F\n"
			    "FILE 0 b.js\n"
			    "FILE 1 z.js\n"
			    "FUNC 10 10 0 new\n"
			    "FUNC m 500 10 0 shared body\n"
			    "500 4 5 1\n"
			    "504 4 6 0\n"
			    "PUBLIC m 700 0 pub\n"
			    "STACK CFI INIT 500 10 .cfa: $rsp 8 + .ra: .cfa -8 + ^\n"
			    "STACK CFI 501 .cfa: $rsp 16 +\n");
	jitmap_breakpad_sym_free(s);
}

/* A file at the path that is not this module's is left alone; a path that does not fit
 * writes nothing. */
static void test_write_refused(void **state)
{
	const struct store *st = *state;
	jitmap_breakpad_sym *arm =
		jitmap_breakpad_sym_new(JITMAP_ARCH_AARCH64, "jit-0001", ID16, 16, BASE);
	assert_int_equal(jitmap_breakpad_sym_func(arm, BASE, 4, "arm_fn"), 0);
	char path[512];
	assert_int_equal(jitmap_breakpad_sym_write(arm, st->dir, path, sizeof(path), NULL), 0);
	char before[8192];
	strcpy(before, slurp(path));

	jitmap_breakpad_sym *s = new_x86();
	assert_int_equal(jitmap_breakpad_sym_func(s, BASE, 4, "x86_fn"), 0);
	jitmap_error err = {0};
	assert_int_equal(jitmap_breakpad_sym_write(s, st->dir, NULL, 0, &err), -EEXIST);
	assert_int_equal(err.code, -EEXIST);
	assert_contains(err.reason, "is not the symbol file of jit-0001");
	assert_string_equal(slurp(path), before);

	char small[16] = "unchanged";
	assert_int_equal(jitmap_breakpad_sym_write(s, st->dir, small, sizeof(small), NULL),
			 -ENAMETOOLONG);
	assert_string_equal(small, "");
	assert_int_equal(jitmap_breakpad_sym_write(s, NULL, NULL, 0, NULL), -EINVAL);
	assert_int_equal(jitmap_breakpad_sym_write(NULL, st->dir, NULL, 0, NULL), -EINVAL);
	/* No temporary file left behind. */
	char folder[256];
	snprintf(folder, sizeof(folder), "%s/jit-0001/" ID16_DEBUG, st->dir);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "test \"$(ls -A %s)\" = jit-0001.sym", folder);
	assert_int_equal(system(cmd), 0);
	jitmap_breakpad_sym_free(s);
	jitmap_breakpad_sym_free(arm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debug_id),
		cmocka_unit_test(test_code_id),
		cmocka_unit_test(test_caller_pc),
		cmocka_unit_test(test_new_refused),
		cmocka_unit_test(test_cfi_refused),
		cmocka_unit_test_setup_teardown(test_cfi_x86_64, setup_store, teardown_store),
		cmocka_unit_test_setup_teardown(test_cfi_arm64, setup_store, teardown_store),
		cmocka_unit_test_setup_teardown(test_text, setup_store, teardown_store),
		cmocka_unit_test_setup_teardown(test_merge_keeps_old_rows, setup_store,
						teardown_store),
		cmocka_unit_test_setup_teardown(test_merge_overlaps, setup_store, teardown_store),
		cmocka_unit_test_setup_teardown(test_merge_foreign_file, setup_store,
						teardown_store),
		cmocka_unit_test_setup_teardown(test_write_refused, setup_store, teardown_store),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
