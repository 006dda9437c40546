#define _GNU_SOURCE
/* test_perfmap.c: perf maps and jitdump files (jitmap/perfmap.h): the lines and records
 * read, the newest description of an address winning, what is refused and said, re-reading
 * a file that grew, a live process's files found, and the process model answering with
 * their code. */
#include "unit.h"

#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jitmap/live.h"
#include "jitmap/perfmap.h"
#include "jitmap/process.h"
#include "jitmap/unwind.h"

static jitmap_perfmap_sym look(jitmap_perfmap *m, uint64_t addr, int want_rc)
{
	jitmap_perfmap_sym s = {.sz = sizeof(s)};
	assert_int_equal(jitmap_perfmap_lookup(m, addr, &s), want_rc);
	return s;
}

static void assert_named(jitmap_perfmap *m, uint64_t addr, const char *name)
{
	jitmap_perfmap_sym s = look(m, addr, name ? 0 : -ENOENT);
	if (name)
		assert_string_equal(s.name, name);
}

static void test_lines(void **state)
{
	(void)state;
	static const char text[] =
		"7f0000001000 40 JS:*fib /x/app.js:3:13\n"
		"0x7f0000002000 0x20 py::f:/y.py\r\n"   /* 0x prefixes, CRLF */
		"  7f0000003000\t10\tname with  spaces \n" /* blanks, tabs */
		"\n"
		"0x00007f0000004000 0x0000000000000110 void java.lang.Object.<init>()\n"
		"7f0000005000 0 empty\n"                  /* size 0: names nothing */
		"7f0000006000 8 last line without newline";
	jitmap_perfmap *m = jitmap_perfmap_new();
	assert_non_null(m);
	assert_int_equal(jitmap_perfmap_add_perf_map(m, text, strlen(text), "/tmp/perf-1.map"), 5);
	assert_int_equal(jitmap_perfmap_num_problems(m), 0);
	jitmap_perfmap_sym s = look(m, 0x7f0000001000, 0);
	assert_string_equal(s.name, "JS:*fib /x/app.js:3:13");
	assert_int_equal(s.lo, 0x7f0000001000);
	assert_int_equal(s.hi, 0x7f0000001040);
	assert_int_equal(s.line, 1);
	assert_string_equal(s.origin, "/tmp/perf-1.map");
	assert_string_equal(s.source, "perf map /tmp/perf-1.map");
	assert_int_equal(s.kind, JITMAP_PERFMAP_MAP);
	assert_null(s.file);
	assert_named(m, 0x7f000000103f, "JS:*fib /x/app.js:3:13");
	assert_named(m, 0x7f0000001040, NULL);
	assert_named(m, 0x7f0000000fff, NULL);
	assert_named(m, 0x7f000000201f, "py::f:/y.py");
	assert_named(m, 0x7f0000003000, "name with  spaces");
	s = look(m, 0x7f0000004100, 0);
	assert_string_equal(s.name, "void java.lang.Object.<init>()");
	assert_int_equal(s.line, 5);
	assert_named(m, 0x7f0000005000, NULL);
	assert_named(m, 0x7f0000006007, "last line without newline");
	assert_int_equal(jitmap_perfmap_num_files(m), 1);
	assert_int_equal(jitmap_perfmap_num_ranges(m), 5);
	size_t n = 0;
	assert_string_equal(jitmap_perfmap_file(m, 0, &n), "/tmp/perf-1.map");
	assert_int_equal(n, 5);
	assert_null(jitmap_perfmap_file(m, 1, &n));
	assert_int_equal(n, 0);
	jitmap_perfmap_free(m);
}

/* A later line over the same bytes wins: the code was freed and the memory reused. */
static void test_newest_wins(void **state)
{
	(void)state;
	static const char text[] =
		"1000 100 old\n"     /* [1000, 1100) */
		"1040 20 inside\n"   /* replaces [1040, 1060) of it */
		"10f0 20 across\n"   /* [10f0, 1110) over its end */
		"2000 10 first\n"
		"2000 10 second\n"   /* the same range again */
		"3000 10 small\n"
		"2ff0 40 over\n";    /* hides "small" entirely */
	jitmap_perfmap *m = jitmap_perfmap_new();
	assert_int_equal(jitmap_perfmap_add_perf_map(m, text, strlen(text), "map"), 7);
	assert_named(m, 0x1000, "old");
	assert_named(m, 0x103f, "old");
	assert_named(m, 0x1040, "inside");
	assert_named(m, 0x105f, "inside");
	assert_named(m, 0x1060, "old");
	assert_named(m, 0x10ef, "old");
	assert_named(m, 0x10f0, "across");
	assert_named(m, 0x110f, "across");
	assert_named(m, 0x1110, NULL);
	assert_named(m, 0x2005, "second");
	assert_named(m, 0x3005, "over");
	assert_named(m, 0x302f, "over");
	/* The remnant of "old" after "inside" still gives the whole object's range. */
	jitmap_perfmap_sym s = look(m, 0x1060, 0);
	assert_int_equal(s.lo, 0x1000);
	assert_int_equal(s.hi, 0x1100);
	/* A second file added later wins over the first where both name code. */
	static const char later[] = "1000 8 from the second file\n";
	assert_int_equal(jitmap_perfmap_add_perf_map(m, later, strlen(later), "map2"), 1);
	assert_named(m, 0x1004, "from the second file");
	assert_named(m, 0x1008, "old");
	jitmap_perfmap_free(m);
}

static void test_bad_lines(void **state)
{
	(void)state;
	static const char text[] =
		"garbage\n"                              /* 1 */
		"1000\n"                                 /* 2: nothing after START */
		"1000 zz name\n"                         /* 3: SIZE */
		"1000 10\n"                              /* 4: no NAME */
		"12345678901234567 10 long\n"            /* 5: 17 digits */
		"2000 10 good\n"                         /* 6 */
		"0 ffffffffffffffff everything\n"        /* 7: huge */
		"fffffffffffffff0 20 wraps\n"            /* 8 */
		"3000 10 good too\n"                     /* 9 */
		"x y z\n";                               /* 10: past the fifth problem */
	jitmap_perfmap *m = jitmap_perfmap_new();
	assert_int_equal(jitmap_perfmap_add_perf_map(m, text, strlen(text), "/tmp/perf-9.map"), 2);
	assert_named(m, 0x2000, "good");
	assert_named(m, 0x3000, "good too");
	assert_named(m, 0x5000, NULL); /* "everything" named nothing */
	assert_int_equal(jitmap_perfmap_num_problems(m), 6);
	assert_string_equal(jitmap_perfmap_problem(m, 0),
			    "/tmp/perf-9.map:1: not START SIZE NAME (START is not hexadecimal)");
	assert_string_equal(jitmap_perfmap_problem(m, 1),
			    "/tmp/perf-9.map:2: not START SIZE NAME (nothing after START)");
	assert_string_equal(jitmap_perfmap_problem(m, 2),
			    "/tmp/perf-9.map:3: not START SIZE NAME (SIZE is not hexadecimal)");
	assert_string_equal(jitmap_perfmap_problem(m, 3),
			    "/tmp/perf-9.map:4: not START SIZE NAME (no NAME)");
	assert_string_equal(jitmap_perfmap_problem(m, 4),
			    "/tmp/perf-9.map:5: START has more than 16 hexadecimal digits");
	assert_string_equal(jitmap_perfmap_problem(m, 5),
			    "/tmp/perf-9.map: 3 more problems like these");
	assert_null(jitmap_perfmap_problem(m, 6));
	/* Read again (a map that grew), its problems are the new text's only. */
	static const char fixed[] = "2000 10 good\n0 ffffffffffffffff everything\n";
	assert_int_equal(jitmap_perfmap_add_perf_map(m, fixed, strlen(fixed), "/tmp/perf-9.map"), 1);
	assert_int_equal(jitmap_perfmap_num_problems(m), 1);
	assert_string_equal(jitmap_perfmap_problem(m, 0),
			    "/tmp/perf-9.map:2: a code object of 0xffffffffffffffff bytes "
			    "(more than 0x40000000): not used");
	assert_named(m, 0x3000, NULL);
	assert_int_equal(jitmap_perfmap_add_perf_map(NULL, fixed, 1, "x"), -EINVAL);
	assert_int_equal(jitmap_perfmap_add_perf_map(m, NULL, 1, "x"), -EINVAL);
	assert_int_equal(jitmap_perfmap_add_perf_map(m, "", 0, "empty"), 0);
	jitmap_perfmap_free(m);
}

/* -- jitdump files, built here in either byte order -- */

struct jd {
	uint8_t b[4096];
	size_t len;
	jitmap_byte_order order;
};

static void put(struct jd *j, uint64_t v, size_t size)
{
	for (size_t i = 0; i < size; i++)
		j->b[j->len + (j->order == JITMAP_ORDER_BIG ? size - 1 - i : i)] =
			(uint8_t)(v >> (8 * i));
	j->len += size;
}

static void put_str(struct jd *j, const char *s)
{
	memcpy(j->b + j->len, s, strlen(s) + 1);
	j->len += strlen(s) + 1;
}

static void jd_header(struct jd *j, jitmap_byte_order order)
{
	memset(j, 0, sizeof(*j));
	j->order = order;
	put(j, 0x4A695444, 4); /* "JiTD" */
	put(j, 1, 4);          /* version */
	put(j, 40, 4);         /* header size */
	put(j, 62, 4);         /* EM_X86_64 */
	put(j, 0, 4);
	put(j, 4242, 4);       /* pid */
	put(j, 1, 8);          /* timestamp */
	put(j, 0, 8);          /* flags */
}

/* A record header; returns where its size goes. */
static size_t jd_record(struct jd *j, uint32_t id)
{
	put(j, id, 4);
	const size_t at = j->len;
	put(j, 0, 4);
	put(j, 2, 8); /* timestamp */
	return at;
}

static void jd_end(struct jd *j, size_t at)
{
	const size_t start = at - 4, n = j->len - start;
	const size_t save = j->len;
	j->len = at;
	put(j, n, 4);
	j->len = save;
}

static void jd_load(struct jd *j, uint64_t addr, uint64_t size, uint64_t index, const char *name)
{
	const size_t at = jd_record(j, 0);
	put(j, 4242, 4);
	put(j, 4243, 4);
	put(j, addr, 8); /* vma */
	put(j, addr, 8);
	put(j, size, 8);
	put(j, index, 8);
	put_str(j, name);
	for (uint64_t k = 0; k < size && k < 16; k++) /* the code bytes (short ones here) */
		put(j, 0x90, 1);
	jd_end(j, at);
}

static void jd_move(struct jd *j, uint64_t from, uint64_t to, uint64_t size, uint64_t index)
{
	const size_t at = jd_record(j, 1);
	put(j, 4242, 4);
	put(j, 4243, 4);
	put(j, to, 8);
	put(j, from, 8);
	put(j, to, 8);
	put(j, size, 8);
	put(j, index, 8);
	jd_end(j, at);
}

static void jd_debug(struct jd *j, uint64_t code, unsigned n, const uint64_t *addrs,
		     const unsigned *lines, const char *const *files)
{
	const size_t at = jd_record(j, 2);
	put(j, code, 8);
	put(j, n, 8);
	for (unsigned k = 0; k < n; k++) {
		put(j, addrs[k], 8);
		put(j, lines[k], 4);
		put(j, 0, 4);
		put_str(j, files[k]);
	}
	jd_end(j, at);
}

static void jitdump_in(jitmap_byte_order order)
{
	struct jd j;
	jd_header(&j, order);
	/* perf's addresses: the code's + 0x40 (the ELF header perf inject puts before it). */
	static const uint64_t addrs[] = {0x5050, 0x5040, 0x5070};
	static const unsigned lines[] = {12, 10, 14};
	static const char *const files[] = {"/x/app.js", "/x/app.js", "\xff"};
	jd_debug(&j, 0x5000, 3, addrs, lines, files);
	jd_load(&j, 0x5000, 0x40, 1, "JS:*hot /x/app.js:10:1");
	const size_t at = jd_record(&j, 4); /* unwinding info without any (its CFI: below) */
	put(&j, 0, 8);
	put(&j, 0, 8);
	put(&j, 0, 8);
	jd_end(&j, at);
	jd_load(&j, 0x6000, 0x20, 2, "JS:*moved");
	jd_move(&j, 0x6000, 0x7000, 0x20, 2);
	jitmap_perfmap *m = jitmap_perfmap_new();
	jitmap_error err;
	assert_int_equal(jitmap_perfmap_add_jitdump(m, j.b, j.len, "/x/jit-4242.dump", &err), 2);
	assert_int_equal(jitmap_perfmap_num_problems(m), 0);
	jitmap_perfmap_sym s = look(m, 0x5000, 0);
	assert_string_equal(s.name, "JS:*hot /x/app.js:10:1");
	assert_string_equal(s.source, "jitdump /x/jit-4242.dump");
	assert_int_equal(s.kind, JITMAP_PERFMAP_JITDUMP);
	assert_int_equal(s.line, 2); /* the second record */
	assert_string_equal(s.file, "/x/app.js");
	assert_int_equal(s.file_line, 10);
	s = look(m, 0x5012, 0);
	assert_int_equal(s.file_line, 12);
	s = look(m, 0x503f, 0);
	assert_string_equal(s.file, "/x/app.js"); /* "\xff": the previous line's file */
	assert_int_equal(s.file_line, 14);
	assert_named(m, 0x6000, NULL); /* moved away */
	s = look(m, 0x7010, 0);
	assert_string_equal(s.name, "JS:*moved");
	assert_null(s.file);
	/* Cut inside the last record: what came before is kept, and the cut is said. */
	assert_int_equal(jitmap_perfmap_add_jitdump(m, j.b, j.len - 3, "/x/jit-4242.dump", &err),
			 2);
	assert_int_equal(jitmap_perfmap_num_problems(m), 1);
	assert_contains(jitmap_perfmap_problem(m, 0), "/x/jit-4242.dump: record 5 at offset ");
	assert_contains(jitmap_perfmap_problem(m, 0), "past the end of the file");
	assert_named(m, 0x6000, "JS:*moved"); /* the move was cut off */
	jitmap_perfmap_free(m);

	/* Debug info whose lines do not lie in the code loaded after it (Node.js 20's
	 * --perf-prof writes file names that are no strings, and what follows is misread): no
	 * source line at all for that code, and a problem that says so; the name stands. */
	jd_header(&j, order);
	static const uint64_t wild[] = {0x8040, 0x2bf80e4cc9000000};
	static const char *const junk[] = {"u\xb1W\x1c", "map/app.js"};
	jd_debug(&j, 0x8000, 2, wild, lines, junk);
	jd_load(&j, 0x8000, 0x40, 3, "JS:^ /x/app.js:1:1");
	jd_debug(&j, 0x9000, 1, addrs, lines, files); /* 0x5010: before the code */
	jd_load(&j, 0x9000, 0x40, 4, "JS:^second");
	/* The line's own address, without the 0x40, as perf's Java agent writes it: read so. */
	static const uint64_t raw[] = {0xa000};
	jd_debug(&j, 0xa000, 1, raw, lines, files);
	jd_load(&j, 0xa000, 0x40, 5, "JS:^third");
	m = jitmap_perfmap_new();
	assert_int_equal(jitmap_perfmap_add_jitdump(m, j.b, j.len, "/x/jit-1.dump", &err), 3);
	s = look(m, 0x8000, 0);
	assert_string_equal(s.name, "JS:^ /x/app.js:1:1");
	assert_null(s.file);
	assert_null(look(m, 0x9000, 0).file);
	s = look(m, 0xa010, 0);
	assert_string_equal(s.file, "/x/app.js");
	assert_int_equal(s.file_line, 12);
	assert_int_equal(jitmap_perfmap_num_problems(m), 2);
	assert_contains(jitmap_perfmap_problem(m, 0), "(code load at 0x8000): the debug info "
				"before it puts line 2 at 0x2bf80e4cc8ffffc0, outside the code's 64 "
				"bytes: its source lines are left out");
	assert_contains(jitmap_perfmap_problem(m, 1), "puts line 1 at 0x5010");
	jitmap_perfmap_free(m);
}

static void test_jitdump(void **state)
{
	(void)state;
	jitdump_in(JITMAP_ORDER_LITTLE);
	jitdump_in(JITMAP_ORDER_BIG);
}

static void test_jitdump_refused(void **state)
{
	(void)state;
	struct jd j;
	jitmap_perfmap *m = jitmap_perfmap_new();
	jitmap_error err;
	jd_header(&j, JITMAP_ORDER_LITTLE);
	assert_int_equal(jitmap_perfmap_add_jitdump(m, j.b, 39, "a", &err), -EINVAL);
	assert_contains(err.reason, "shorter than a jitdump header");
	j.b[0] = 'X';
	assert_int_equal(jitmap_perfmap_add_jitdump(m, j.b, j.len, "a", &err), -EINVAL);
	assert_string_equal(err.reason, "no jitdump magic (JiTD)");
	jd_header(&j, JITMAP_ORDER_BIG);
	j.b[7] = 2; /* version 2 */
	assert_int_equal(jitmap_perfmap_add_jitdump(m, j.b, j.len, "a", &err), -EINVAL);
	assert_int_equal(err.offset, 4);
	assert_string_equal(err.reason, "jitdump version 2 (jitmap reads 1)");
	jd_header(&j, JITMAP_ORDER_LITTLE);
	j.b[8] = 200; /* a header larger than the file */
	assert_int_equal(jitmap_perfmap_add_jitdump(m, j.b, j.len, "a", &err), -EINVAL);
	assert_int_equal(err.offset, 8);
	assert_int_equal(jitmap_perfmap_num_files(m), 0);
	/* Records that do not hold what they say: problems, the rest used. */
	jd_header(&j, JITMAP_ORDER_LITTLE);
	size_t at = jd_record(&j, 0); /* a load without a name's end */
	for (int k = 0; k < 48; k++)
		put(&j, 0x41, 1);
	jd_end(&j, at);
	at = jd_record(&j, 2); /* debug info claiming 2^40 lines */
	put(&j, 0x1000, 8);
	put(&j, UINT64_C(1) << 40, 8);
	jd_end(&j, at);
	jd_move(&j, 0x1000, 0x2000, 0x10, 77); /* a move of code never loaded */
	jd_load(&j, 0x9000, 0x10, 5, "fine");
	at = jd_record(&j, 0);
	j.len = at; /* a record of 3 bytes: shorter than its header */
	put(&j, 3, 4);
	put(&j, 0, 8);
	assert_int_equal(jitmap_perfmap_add_jitdump(m, j.b, j.len, "b", &err), 1);
	assert_named(m, 0x9000, "fine");
	assert_int_equal(jitmap_perfmap_num_problems(m), 4);
	assert_string_equal(jitmap_perfmap_problem(m, 0),
			    "b: record 1 at offset 40 (code load): its name has no end");
	assert_contains(jitmap_perfmap_problem(m, 1), "b: record 2 (debug info) at offset");
	assert_contains(jitmap_perfmap_problem(m, 1), "1099511627776 lines do not fit");
	assert_contains(jitmap_perfmap_problem(m, 2), "a move of code index 77 never loaded");
	assert_contains(jitmap_perfmap_problem(m, 3), "b: record 5 at offset");
	assert_contains(jitmap_perfmap_problem(m, 3), "3 bytes, shorter than a record header");
	jitmap_perfmap_free(m);
}

/* Every prefix of a valid jitdump: read without reading past its end (ASan, valgrind), the
 * loads before the cut kept. */
static void test_jitdump_prefixes(void **state)
{
	(void)state;
	struct jd j;
	jd_header(&j, JITMAP_ORDER_LITTLE);
	jd_load(&j, 0x5000, 0x40, 1, "a");
	const size_t after_first = j.len;
	jd_load(&j, 0x6000, 0x20, 2, "b");
	jd_move(&j, 0x6000, 0x7000, 0x20, 2);
	jitmap_perfmap *m = jitmap_perfmap_new();
	for (size_t n = 40; n <= j.len; n++) {
		uint8_t *copy = malloc(n);
		memcpy(copy, j.b, n);
		const int rc = jitmap_perfmap_add_jitdump(m, copy, n, "p", NULL);
		free(copy);
		assert_int_equal(rc, n < after_first ? 0 : n < j.len - 64 ? 1 : 2);
		assert_named(m, 0x5000, n < after_first ? NULL : "a");
	}
	jitmap_perfmap_free(m);
}

/* -- Unwinding information (JIT_CODE_UNWINDING_INFO) -- */

/* CPython 3.13's -X perf_jit trampoline: it keeps no frame pointer, and calls the evaluator
 * (in rcx) with 8 bytes of its own on the stack. */
static const uint8_t trampoline[15] = {
	0xf3, 0x0f, 0x1e, 0xfa, /* endbr64 */
	0x48, 0x83, 0xec, 0x08, /* sub $8,%rsp */
	0xff, 0xd1,             /* call *%rcx: returns to +10 */
	0x48, 0x83, 0xc4, 0x08, /* add $8,%rsp */
	0xc3,                   /* ret */
};
#define TRAMPOLINE_RA 10

static uint64_t align8(uint64_t v)
{
	return (v + 7) & ~UINT64_C(7);
}

/* The unwinding data of code of `code_size` bytes, as the writers lay it out (.eh_frame
 * then .eh_frame_hdr; the .eh_frame ALIGN_8(code_size) after the code's start), in
 * little-endian (x86-64's). The trampoline's rows, from the DWARF standard's opcodes: CFA =
 * rsp + 8 and the return address at CFA - 8 from the CIE; after the sub (offset 8) CFA = rsp
 * + 16; after the add (offset 14) rsp + 8 again. `fde_shift` moves the FDE's pc_begin away
 * from the code (a writer that placed .eh_frame elsewhere). Returns the bytes in `out`; the
 * .eh_frame's size in *eh_len. */
static size_t unwind_data(uint8_t *out, uint64_t code_size, int64_t fde_shift, size_t *eh_len)
{
	size_t n = 0;
#define B(v) (out[n++] = (uint8_t)(v))
#define U32(v) (sm_put(out + n, (uint64_t)(v), 4, JITMAP_ORDER_LITTLE), n += 4)
	/* CIE: length, id 0, version 1, "zR", code align 1, data align -8, RA column 16,
	 * augmentation data (1 byte: FDE pointers pcrel|sdata4), def_cfa r7+8, offset r16 at
	 * cfa-8, padded with nops to 24 bytes. */
	U32(20);
	U32(0);
	B(1);
	B('z'), B('R'), B(0);
	B(1), B(0x78), B(16);
	B(1), B(0x1b);
	B(0x0c), B(7), B(8);
	B(0x80 | 16), B(1);
	while (n < 24)
		B(0);
	/* FDE: length, CIE pointer (back to offset 0), pc_begin, range, no augmentation data. */
	const size_t fde = n;
	U32(20);
	U32(n);
	U32((uint64_t)(-(int64_t)(align8(code_size) + n) + fde_shift));
	U32(code_size);
	B(0);
	B(0x40 | 8), B(0x0e), B(16); /* advance 8; def_cfa_offset 16 */
	B(0x40 | 6), B(0x0e), B(8);  /* advance 6; def_cfa_offset 8 */
	while (n < fde + 24)
		B(0);
	*eh_len = n;
	/* .eh_frame_hdr: version 1, eh_frame_ptr pcrel|sdata4, count udata4, table
	 * datarel|sdata4; one entry (the code, its FDE). */
	const size_t hdr = n;
	B(1), B(0x1b), B(0x03), B(0x3b);
	U32((uint64_t)(-(int64_t)(hdr + 4)));
	U32(1);
	U32((uint64_t)(-(int64_t)(align8(code_size) + hdr)));
	U32((uint64_t)(-(int64_t)(hdr - fde)));
#undef B
#undef U32
	return n;
}

/* An unwinding-information record with `size` bytes of data, `hdr` of them the header, the
 * data's first `len` bytes from `data` (the rest zero), padded to 8. */
static void jd_unwind_raw(struct jd *j, uint64_t size, uint64_t hdr, const uint8_t *data,
			  size_t len)
{
	const size_t at = jd_record(j, 4);
	put(j, size, 8);
	put(j, hdr, 8);
	put(j, (size + 15) & ~UINT64_C(15), 8); /* mapped_size (CPython's; not read) */
	memcpy(j->b + j->len, data, len);
	j->len += len;
	while (j->len % 8)
		put(j, 0, 1);
	jd_end(j, at);
}

static void jd_unwind(struct jd *j, uint64_t code_size, int64_t fde_shift)
{
	uint8_t data[256];
	size_t eh_len;
	const size_t n = unwind_data(data, code_size, fde_shift, &eh_len);
	jd_unwind_raw(j, n, n - eh_len, data, n);
}

/* A code load with the trampoline's bytes. */
static void jd_trampoline(struct jd *j, uint64_t addr, uint64_t index, const char *name)
{
	const size_t at = jd_record(j, 0);
	put(j, 4242, 4);
	put(j, 4243, 4);
	put(j, addr, 8);
	put(j, addr, 8);
	put(j, sizeof(trampoline), 8);
	put(j, index, 8);
	put_str(j, name);
	memcpy(j->b + j->len, trampoline, sizeof(trampoline));
	j->len += sizeof(trampoline);
	jd_end(j, at);
}

/* A stack of 0x100 bytes at 0x7000, little-endian. */
struct stack {
	uint8_t b[0x100];
};
#define STACK_LO UINT64_C(0x7000)

/* The call in PyObject_Vectorcall that the trampoline returns to (call *%rax, ending at
 * 0x54c9f2): the unwinder checks that a return address follows a call. */
#define CALLER_RA UINT64_C(0x54c9f2)
static const uint8_t caller_call[] = {0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0xd0};

static int stack_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	(void)why, (void)why_len;
	const struct stack *s = ctx;
	const uint64_t call_lo = CALLER_RA - sizeof(caller_call);
	if (addr >= call_lo && addr < CALLER_RA && len <= CALLER_RA - addr) {
		memcpy(buf, caller_call + (addr - call_lo), len);
		return 0;
	}
	if (addr < STACK_LO || addr - STACK_LO > sizeof(s->b) ||
	    len > sizeof(s->b) - (addr - STACK_LO))
		return -EFAULT;
	memcpy(buf, s->b + (addr - STACK_LO), len);
	return 0;
}

static void stack_put(struct stack *s, uint64_t addr, uint64_t v)
{
	sm_put(s->b + (addr - STACK_LO), v, 8, JITMAP_ORDER_LITTLE);
}

/* One step by `cfi` alone from the trampoline at `lo`, stopped at `pc` (an outer frame's
 * return address unless `innermost`) with rsp = `sp`; the stack holds a stale word at
 * 0x7080 (what CPython leaves in the slot the sub made) and a return address at 0x7088. */
static int trampoline_step(const jitmap_cfi *cfi, uint64_t pc, uint64_t sp, bool innermost,
			   jitmap_unwind_result *res)
{
	struct stack s;
	memset(&s, 0, sizeof(s));
	stack_put(&s, 0x7080, 0xa84590);   /* tstate, never written by the trampoline */
	stack_put(&s, 0x7088, CALLER_RA);  /* into PyObject_Vectorcall */
	stack_put(&s, 0x7090, 0x1111);
	const jitmap_target t = {.ctx = &s, .read_mem = stack_read};
	const jitmap_unwind_code code = {.arch = JITMAP_ARCH_X86_64, .cfi = cfi,
					 .is_innermost = innermost,
					 .methods = JITMAP_UNWIND_MASK(JITMAP_UNWIND_CFI)};
	jitmap_frame_regs r;
	memset(&r, 0, sizeof(r));
	r.pc = pc;
	jitmap_frame_reg_set(&r, 7, sp);   /* rsp */
	jitmap_frame_reg_set(&r, 6, 0xa84590); /* rbp: not a frame pointer */
	char why[512];
	memset(res, 0, sizeof(*res));
	const int rc = jitmap_unwind_step(&code, &r, &t, res, why, sizeof(why));
	if (rc)
		print_message("step at 0x%" PRIx64 ": %d: %s\n", pc, rc, why);
	return rc;
}

/* The trampoline at `lo` has CFI, and its rows are the trampoline's: at the call's return
 * address CFA = rsp + 16, the return address at CFA - 8; at its first instruction (frame 0)
 * CFA = rsp + 8. */
static void assert_trampoline_cfi(jitmap_perfmap *m, uint64_t lo)
{
	const jitmap_cfi *cfi = (const jitmap_cfi *)1;
	/* An outer frame's return address is looked up at the call (pc - 1). */
	assert_int_equal(jitmap_perfmap_cfi(m, lo + TRAMPOLINE_RA - 1, &cfi), 0);
	assert_non_null(cfi);
	uint64_t flo = 0, fhi = 0;
	assert_true(jitmap_cfi_covers(cfi, lo, &flo, &fhi));
	assert_int_equal(flo, lo);
	assert_int_equal(fhi, lo + sizeof(trampoline));
	jitmap_unwind_result res;
	assert_int_equal(trampoline_step(cfi, lo + TRAMPOLINE_RA, 0x7080, false, &res), 0);
	assert_int_equal(res.method, JITMAP_UNWIND_CFI);
	assert_int_equal(res.cfa, 0x7090);
	assert_int_equal(res.caller.pc, 0x54c9f2);
	assert_true(jitmap_frame_reg_known(&res.caller, 7));
	assert_int_equal(res.caller.reg[7], 0x7090);
	/* rbp: no rule, callee-saved: the same value, untouched by the trampoline. */
	assert_int_equal(res.caller.reg[6], 0xa84590);
	/* Frame 0 at the endbr64: nothing pushed yet, the return address at rsp. */
	const jitmap_cfi *at0;
	assert_int_equal(jitmap_perfmap_cfi(m, lo, &at0), 0);
	assert_ptr_equal(at0, cfi); /* built once per load */
	assert_int_equal(trampoline_step(cfi, lo, 0x7088, true, &res), 0);
	assert_int_equal(res.cfa, 0x7090);
	assert_int_equal(res.caller.pc, 0x54c9f2);
}

static void unwinding_in(jitmap_byte_order order)
{
	struct jd j;
	jd_header(&j, order);
	jd_unwind(&j, sizeof(trampoline), 0);
	jd_trampoline(&j, 0x7f0000001000, 1, "py::f6:/x/nest.py");     /* record 2 */
	jd_load(&j, 0x7f0000002000, 0x10, 2, "no unwinding info");      /* record 3 */
	jd_unwind(&j, sizeof(trampoline), 0);
	static const uint64_t addrs[] = {0x7f0000004040}; /* perf's: the code's + 0x40 */
	static const unsigned lines[] = {7};
	static const char *const files[] = {"/x/nest.py"};
	jd_debug(&j, 0x7f0000004000, 1, addrs, lines, files); /* between: still pending */
	jd_trampoline(&j, 0x7f0000004000, 3, "py::f5:/x/nest.py");     /* record 6 */
	jd_move(&j, 0x7f0000004000, 0x7f0000005010, sizeof(trampoline), 3);
	jitmap_perfmap *m = jitmap_perfmap_new();
	jitmap_error err;
	assert_int_equal(jitmap_perfmap_add_jitdump(m, j.b, j.len, "/x/jit-4242.dump", &err), 3);
	assert_int_equal(jitmap_perfmap_num_problems(m), 0);
	assert_trampoline_cfi(m, 0x7f0000001000);
	/* Moved: the .eh_frame went with the code (read 16 bytes after 0x7f0000005010). */
	assert_trampoline_cfi(m, 0x7f0000005010);
	const jitmap_cfi *cfi = (const jitmap_cfi *)1;
	assert_int_equal(jitmap_perfmap_cfi(m, 0x7f0000004000, &cfi), -ENOENT); /* moved away */
	assert_null(cfi);
	assert_int_equal(jitmap_perfmap_cfi(m, 0x7f0000002000, &cfi), -ENOENT); /* none */
	assert_int_equal(jitmap_perfmap_cfi(m, 0x7f0000009000, &cfi), -ENOENT); /* no code */
	/* The padding after the trampoline is the code's no more (its FDE ends at 15). */
	assert_int_equal(jitmap_perfmap_cfi(m, 0x7f000000100f, &cfi), -ENOENT);
	assert_int_equal(jitmap_perfmap_cfi(NULL, 0x7f0000001000, &cfi), -EINVAL);
	assert_int_equal(jitmap_perfmap_cfi(m, 0x7f0000001000, NULL), -EINVAL);
	/* Names and source lines as before. */
	jitmap_perfmap_sym s = look(m, 0x7f0000005010, 0);
	assert_string_equal(s.name, "py::f5:/x/nest.py");
	assert_int_equal(jitmap_perfmap_num_problems(m), 0);
	/* Added again (the file grew): the CFI is made anew, and still right. */
	assert_int_equal(jitmap_perfmap_add_jitdump(m, j.b, j.len, "/x/jit-4242.dump", &err), 3);
	assert_trampoline_cfi(m, 0x7f0000001000);
	jitmap_perfmap_free(m);
}

static void test_jitdump_unwinding(void **state)
{
	(void)state;
	unwinding_in(JITMAP_ORDER_LITTLE);
	unwinding_in(JITMAP_ORDER_BIG); /* the record's fields; the .eh_frame is x86-64's */
}

/* What a file's problems say after it was added and each load's CFI asked for. */
static jitmap_perfmap *unwinding_file(const struct jd *j, int want_loads)
{
	jitmap_perfmap *m = jitmap_perfmap_new();
	assert_int_equal(jitmap_perfmap_add_jitdump(m, j->b, j->len, "u", NULL), want_loads);
	return m;
}

static void test_jitdump_unwinding_hostile(void **state)
{
	(void)state;
	struct jd j;
	uint8_t data[256];
	size_t eh_len;
	const size_t n = unwind_data(data, sizeof(trampoline), 0, &eh_len);
	const jitmap_cfi *cfi;
	jitmap_perfmap *m;

	/* Sizes that do not fit: each a problem, the load named and without CFI. */
	static const struct {
		uint64_t size, hdr;
		size_t body;     /* bytes of data the record holds */
		const char *says;
	} bad[] = {
		{UINT64_C(1) << 62, 20, 0, "4611686018427387904 bytes of unwinding data do not "
					   "fit in its 0"},
		/* 68 bytes and 4 of padding: 72 would fit (padding cannot be told from data) */
		{76, 20, 68, "76 bytes of unwinding data do not fit in its 72"},
		{UINT64_MAX, 0, 68, "do not fit"},
		{68, 69, 68, "an .eh_frame_hdr of 69 bytes in 68 bytes of unwinding data"},
		{68, UINT64_MAX, 68, "an .eh_frame_hdr of 18446744073709551615 bytes"},
	};
	for (size_t k = 0; k < ARRAY_LEN(bad); k++) {
		jd_header(&j, JITMAP_ORDER_LITTLE);
		jd_unwind_raw(&j, bad[k].size, bad[k].hdr, data, bad[k].body);
		jd_trampoline(&j, 0x1000, 1, "t");
		m = unwinding_file(&j, 1);
		assert_named(m, 0x1000, "t");
		assert_int_equal(jitmap_perfmap_cfi(m, 0x100a, &cfi), -ENOENT);
		assert_int_equal(jitmap_perfmap_num_problems(m), 1);
		assert_contains(jitmap_perfmap_problem(m, 0), "u: record 1 at offset 40 (unwinding "
							      "info): ");
		assert_contains(jitmap_perfmap_problem(m, 0), bad[k].says);
		jitmap_perfmap_free(m);
	}
	/* Shorter than its three sizes. */
	jd_header(&j, JITMAP_ORDER_LITTLE);
	size_t at = jd_record(&j, 4);
	put(&j, 68, 8);
	put(&j, 20, 8);
	jd_end(&j, at);
	jd_trampoline(&j, 0x1000, 1, "t");
	m = unwinding_file(&j, 1);
	assert_int_equal(jitmap_perfmap_cfi(m, 0x100a, &cfi), -ENOENT);
	assert_string_equal(jitmap_perfmap_problem(m, 0),
			    "u: record 1 at offset 40 (unwinding info): too short");
	jitmap_perfmap_free(m);

	/* No load after it: the end of the file, or a close record. */
	jd_header(&j, JITMAP_ORDER_LITTLE);
	jd_trampoline(&j, 0x1000, 1, "t");
	jd_unwind(&j, sizeof(trampoline), 0);
	const size_t last = j.len;
	m = unwinding_file(&j, 1);
	assert_int_equal(jitmap_perfmap_cfi(m, 0x100a, &cfi), -ENOENT); /* not the earlier load's */
	assert_int_equal(jitmap_perfmap_num_problems(m), 1);
	assert_contains(jitmap_perfmap_problem(m, 0), "u: record 2 at offset ");
	assert_contains(jitmap_perfmap_problem(m, 0), "(unwinding info): no code load follows it: "
						      "not used");
	jitmap_perfmap_free(m);
	jd_record(&j, 3); /* JIT_CODE_CLOSE */
	jd_end(&j, last + 4);
	jd_trampoline(&j, 0x2000, 2, "after the close"); /* not read */
	m = unwinding_file(&j, 1);
	assert_named(m, 0x2000, NULL);
	assert_int_equal(jitmap_perfmap_cfi(m, 0x200a, &cfi), -ENOENT);
	assert_contains(jitmap_perfmap_problem(m, 0), "no code load follows it");
	jitmap_perfmap_free(m);
	/* The record itself cut off at the end of the file: said once, as a cut. */
	j.len = last - 8;
	m = unwinding_file(&j, 1);
	assert_int_equal(jitmap_perfmap_num_problems(m), 1);
	assert_contains(jitmap_perfmap_problem(m, 0), "past the end of the file");
	jitmap_perfmap_free(m);
	/* The load after it cut off (a live runtime's stdio buffer): only the cut is said. */
	jd_header(&j, JITMAP_ORDER_LITTLE);
	jd_unwind(&j, sizeof(trampoline), 0);
	jd_trampoline(&j, 0x1000, 1, "t");
	j.len -= 5;
	m = unwinding_file(&j, 0);
	assert_int_equal(jitmap_perfmap_num_problems(m), 1);
	assert_contains(jitmap_perfmap_problem(m, 0), "u: record 2 at offset ");
	assert_contains(jitmap_perfmap_problem(m, 0), "past the end of the file");
	jitmap_perfmap_free(m);

	/* Two before one load: the second is the load's. The first (its FDE moved away) is
	 * said. */
	jd_header(&j, JITMAP_ORDER_LITTLE);
	jd_unwind(&j, sizeof(trampoline), 0x100);
	jd_unwind(&j, sizeof(trampoline), 0);
	jd_trampoline(&j, 0x1000, 1, "t");
	m = unwinding_file(&j, 1);
	assert_int_equal(jitmap_perfmap_num_problems(m), 1);
	assert_contains(jitmap_perfmap_problem(m, 0),
			"u: record 1 at offset 40 (unwinding info): another one follows before "
			"any code load (record 2): not used");
	assert_trampoline_cfi(m, 0x1000);
	jitmap_perfmap_free(m);

	/* V8's record for code without unwinding info: only an empty header. Nothing known,
	 * nothing wrong. */
	jd_header(&j, JITMAP_ORDER_LITTLE);
	jd_unwind_raw(&j, 20, 20, data + eh_len, 20);
	jd_trampoline(&j, 0x1000, 1, "t");
	m = unwinding_file(&j, 1);
	assert_int_equal(jitmap_perfmap_cfi(m, 0x100a, &cfi), -ENOENT);
	assert_int_equal(jitmap_perfmap_num_problems(m), 0);
	jitmap_perfmap_free(m);

	/* The header first and the .eh_frame after it (the specification's prose; no writer's
	 * order): a malformed .eh_frame, said once, at the first question. */
	jd_header(&j, JITMAP_ORDER_LITTLE);
	uint8_t swapped[256];
	memcpy(swapped, data + eh_len, n - eh_len);
	memcpy(swapped + (n - eh_len), data, eh_len);
	jd_unwind_raw(&j, n, n - eh_len, swapped, n);
	jd_trampoline(&j, 0x1000, 1, "t");
	m = unwinding_file(&j, 1);
	assert_int_equal(jitmap_perfmap_num_problems(m), 0);
	assert_int_equal(jitmap_perfmap_cfi(m, 0x100a, &cfi), -EINVAL);
	assert_null(cfi);
	assert_int_equal(jitmap_perfmap_cfi(m, 0x1000, &cfi), -EINVAL);
	assert_int_equal(jitmap_perfmap_num_problems(m), 1);
	assert_contains(jitmap_perfmap_problem(m, 0), "u: record 1 (unwinding info, read at "
						      "0x1010 for the code at 0x1000): ");
	jitmap_perfmap_free(m);

	/* An FDE written for another place than perf's: said, and no CFI for the code. */
	jd_header(&j, JITMAP_ORDER_LITTLE);
	jd_unwind(&j, sizeof(trampoline), 0x40);
	jd_trampoline(&j, 0x1000, 1, "t");
	m = unwinding_file(&j, 1);
	assert_int_equal(jitmap_perfmap_cfi(m, 0x100a, &cfi), -ENOENT);
	assert_int_equal(jitmap_perfmap_num_problems(m), 1);
	assert_contains(jitmap_perfmap_problem(m, 0), "no FDE covers the first byte of its code "
						      "at 0x1000");
	jitmap_perfmap_free(m);

	/* An architecture jitmap does not unwind (EM_386). */
	jd_header(&j, JITMAP_ORDER_LITTLE);
	j.b[12] = 3;
	jd_unwind(&j, sizeof(trampoline), 0);
	jd_trampoline(&j, 0x1000, 1, "t");
	m = unwinding_file(&j, 1);
	assert_int_equal(jitmap_perfmap_cfi(m, 0x100a, &cfi), -ENOTSUP);
	assert_int_equal(jitmap_perfmap_cfi(m, 0x100a, &cfi), -ENOTSUP);
	assert_int_equal(jitmap_perfmap_num_problems(m), 1);
	assert_contains(jitmap_perfmap_problem(m, 0), "u: record 1 (unwinding info): "
						      "architecture ");
	jitmap_perfmap_free(m);
}

/* Every prefix of a file with unwinding records, and every byte of one changed: read without
 * reading past the end (ASan), the CFI there only when its load is. */
static void test_jitdump_unwinding_prefixes(void **state)
{
	(void)state;
	struct jd j;
	jd_header(&j, JITMAP_ORDER_LITTLE);
	jd_unwind(&j, sizeof(trampoline), 0);
	const size_t unwind_end = j.len;
	jd_trampoline(&j, 0x1000, 1, "a");
	const size_t after_first = j.len;
	jd_unwind(&j, sizeof(trampoline), 0);
	jd_trampoline(&j, 0x2000, 2, "b");
	jd_move(&j, 0x2000, 0x3000, sizeof(trampoline), 2);
	jitmap_perfmap *m = jitmap_perfmap_new();
	const jitmap_cfi *cfi;
	for (size_t n = 40; n <= j.len; n++) {
		uint8_t *copy = malloc(n);
		memcpy(copy, j.b, n);
		const int rc = jitmap_perfmap_add_jitdump(m, copy, n, "p", NULL);
		free(copy);
		assert_int_equal(rc, n < after_first ? 0 : n < j.len - 64 ? 1 : 2);
		assert_int_equal(jitmap_perfmap_cfi(m, 0x100a, &cfi),
				 n < after_first ? -ENOENT : 0);
		assert_int_equal(jitmap_perfmap_cfi(m, 0x300a, &cfi), n < j.len ? -ENOENT : 0);
		/* A prefix that ends right after a whole unwinding record says so. */
		if (n == unwind_end)
			assert_contains(jitmap_perfmap_problem(m, 0), "no code load follows it");
	}
	/* Each byte of the first unwinding record changed: no crash, and what is said is a
	 * problem, not a wrong answer outside the file. */
	for (size_t k = 40; k < unwind_end; k++) {
		for (unsigned v = 0; v < 3; v++) {
			uint8_t copy[sizeof(j.b)];
			memcpy(copy, j.b, j.len);
			copy[k] = v == 0 ? 0 : v == 1 ? 0xff : (uint8_t)(copy[k] ^ 0x80);
			if (jitmap_perfmap_add_jitdump(m, copy, j.len, "p", NULL) < 0)
				continue;
			for (uint64_t pc = 0x1000; pc < 0x1010; pc++)
				if (jitmap_perfmap_cfi(m, pc, &cfi) == 0)
					assert_true(jitmap_cfi_covers(cfi, pc, NULL, NULL));
		}
	}
	jitmap_perfmap_free(m);
}

/* -- CPython 3.13's own jitdump (-X perf_jit) -- */

/* python3.13 as scripts/setup-python.sh sets it up (NULL when it is not). */
static char *python313(void)
{
	char *path = NULL;
	const char *dest = getenv("JITMAP_PYTHON313"), *cache = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	if (dest)
		asprintf(&path, "%s/root/usr/bin/python3.13", dest);
	else if (cache)
		asprintf(&path, "%s/jitmap/python313/root/usr/bin/python3.13", cache);
	else if (home)
		asprintf(&path, "%s/.cache/jitmap/python313/root/usr/bin/python3.13", home);
	if (path && access(path, X_OK)) {
		free(path);
		path = NULL;
	}
	return path;
}

static uint64_t le(const uint8_t *p, size_t size)
{
	uint64_t v = 0;
	for (size_t i = size; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static void test_cpython_perf_jit(void **state)
{
	(void)state;
	char *py = python313();
	if (!py) {
		print_message("skipped: no python3.13 (scripts/setup-python.sh sets it up)\n");
		return;
	}
	/* Functions calling each other, so that each gets its trampoline. */
	char cmd[4400];
	snprintf(cmd, sizeof(cmd),
		 "env -u PYTHONPATH -u PYTHONHOME '%s' -X perf_jit -c '"
		 "import os\n"
		 "def f1(n): return n + 1\n"
		 "def f2(n): return f1(n) * 2\n"
		 "def f3(n): return [f2(i) for i in range(n)]\n"
		 "f3(5)\n"
		 "print(os.getpid())'", py);
	FILE *fp = popen(cmd, "r");
	assert_non_null(fp);
	int pid = 0;
	assert_int_equal(fscanf(fp, "%d", &pid), 1);
	assert_int_equal(pclose(fp), 0);
	char dump[64];
	snprintf(dump, sizeof(dump), "/tmp/jit-%d.dump", pid);
	jitmap_perfmap *m = jitmap_perfmap_new();
	jitmap_error err;
	const int loads = jitmap_perfmap_add_file(m, dump, &err);
	/* The loads, read here from the file by the specification, each a trampoline that
	 * calls: its return address's row by the library's CFI. (The file is removed before
	 * any check can fail.) */
	static uint8_t b[1 << 22];
	FILE *in = fopen(dump, "rb");
	const size_t len = in ? fread(b, 1, sizeof(b), in) : 0;
	if (in)
		fclose(in);
	unlink(dump);
	assert_true(len > 40 && len < sizeof(b));
	assert_true(loads > 3);
	for (size_t k = 0; k < jitmap_perfmap_num_problems(m); k++)
		print_message("problem: %s\n", jitmap_perfmap_problem(m, k));
	assert_int_equal(jitmap_perfmap_num_problems(m), 0);
	unsigned seen = 0, named[3] = {0};
	for (size_t off = le(b + 8, 4); off + 16 <= len; off += le(b + off + 4, 4)) {
		const uint64_t id = le(b + off, 4), size = le(b + off + 4, 4);
		assert_true(size >= 16 && size <= len - off);
		if (id != 0)
			continue;
		const uint64_t lo = le(b + off + 32, 8), csize = le(b + off + 40, 8);
		const char *name = (const char *)b + off + 56;
		const uint8_t *code = b + off + size - csize;
		/* CPython patches a marker into the code bytes it writes in later releases; 3.13
		 * writes them as they are. */
		assert_int_equal(csize, sizeof(trampoline));
		assert_memory_equal(code, trampoline, sizeof(trampoline));
		for (int f = 0; f < 3; f++) {
			char want[8];
			snprintf(want, sizeof(want), "py::f%d:", f + 1);
			named[f] += !strncmp(name, want, strlen(want));
		}
		assert_trampoline_cfi(m, lo);
		seen++;
	}
	assert_int_equal(seen, (unsigned)loads);
	for (int f = 0; f < 3; f++)
		assert_int_equal(named[f], 1);
	print_message("CPython 3.13 -X perf_jit: %u trampolines, each with CFI: CFA = rsp + 16 at "
		      "the call's return address\n", seen);
	jitmap_perfmap_free(m);
	free(py);
}

static char *write_temp(const char *text, size_t len)
{
	char *path = strdup("/tmp/jitmap-test-perfmap-XXXXXX");
	const int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
	return path;
}

static void test_files(void **state)
{
	(void)state;
	jitmap_perfmap *m = jitmap_perfmap_new();
	char *path = write_temp("1000 10 one\n", 12);
	assert_int_equal(jitmap_perfmap_add_file(m, path, NULL), 1);
	assert_named(m, 0x1000, "one");
	jitmap_perfmap_sym before = look(m, 0x1000, 0);
	/* Unchanged: not read again (the same strings). */
	assert_int_equal(jitmap_perfmap_add_file(m, path, NULL), 1);
	jitmap_perfmap_sym again = look(m, 0x1000, 0);
	assert_ptr_equal(before.name, again.name);
	/* It grew: read again. */
	FILE *fp = fopen(path, "a");
	fputs("2000 10 two\n1000 10 one again\n", fp);
	fclose(fp);
	assert_int_equal(jitmap_perfmap_add_file(m, path, NULL), 3);
	assert_named(m, 0x1000, "one again");
	assert_named(m, 0x2000, "two");
	/* A jitdump is told by its magic. */
	struct jd j;
	jd_header(&j, JITMAP_ORDER_BIG);
	jd_load(&j, 0x3000, 0x10, 1, "from jitdump");
	char *dump = write_temp((const char *)j.b, j.len);
	assert_int_equal(jitmap_perfmap_add_file(m, dump, NULL), 1);
	assert_named(m, 0x3000, "from jitdump");
	jitmap_perfmap_sym s = look(m, 0x3000, 0);
	assert_contains(s.source, "jitdump /tmp/jitmap-test-perfmap-");
	/* Gone: an error, a problem naming it, and what it said is dropped. */
	unlink(path);
	assert_int_equal(jitmap_perfmap_add_file(m, path, NULL), -ENOENT);
	assert_named(m, 0x2000, NULL);
	assert_int_equal(jitmap_perfmap_num_problems(m), 1);
	assert_contains(jitmap_perfmap_problem(m, 0), "cannot be opened (No such file or directory)");
	assert_int_equal(jitmap_perfmap_add_file(m, "/", NULL), -EINVAL);
	assert_contains(jitmap_perfmap_problem(m, 1), "/: not a regular file");
	unlink(dump);
	free(dump);
	free(path);
	jitmap_perfmap_free(m);
}

/* This process's own perf map, found as jitmap-stack finds a live process's. */
static void test_process_files(void **state)
{
	(void)state;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "%" PRIx64 " 10 self\n", (uint64_t)(uintptr_t)&test_process_files);
	fclose(fp);
	jitmap_perfmap *m = jitmap_perfmap_new();
	assert_int_equal(jitmap_perfmap_add_process(m, (int)getpid()), 1);
	assert_named(m, (uint64_t)(uintptr_t)&test_process_files, "self");
	assert_string_equal(jitmap_perfmap_file(m, 0, NULL), path); /* the same root: its path */
	unlink(path);
	assert_int_equal(jitmap_perfmap_add_process(m, (int)getpid()), 0);
	assert_int_equal(jitmap_perfmap_add_process(m, 0), -EINVAL);
	jitmap_perfmap_free(m);
}

/* A process in mount and PID namespaces of its own with a /tmp of its own (a container, a
 * service with PrivateTmp=yes: readlink and stat of its /proc/PID/root say "/"): its perf
 * map is the one in its /tmp, by the PID it knows itself by (1), never ours by that name,
 * planted here with another name. Skipped where namespaces cannot be made (not root). */
static void test_process_files_in_namespace(void **state)
{
	(void)state;
	int up[2];
	assert_int_equal(pipe(up), 0);
	const pid_t middle = fork();
	assert_true(middle >= 0);
	if (middle == 0) {
		int inner = -1;
		close(up[0]);
		if (unshare(CLONE_NEWNS | CLONE_NEWPID) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("tmpfs", "/tmp", "tmpfs", 0, NULL)) {
			(void)!write(up[1], &inner, sizeof(inner));
			_exit(0);
		}
		inner = fork(); /* PID 1 of the new namespace; its PID here is ours to see */
		if (inner == 0) {
			char path[64];
			snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
			FILE *fp = fopen(path, "w");
			if (fp) {
				fprintf(fp, "1000 10 inside\n");
				fclose(fp);
			}
			for (;;)
				pause(); /* an init: SIGTERM ignored, SIGKILL ends it */
		}
		(void)!write(up[1], &inner, sizeof(inner));
		waitpid(inner, NULL, 0);
		_exit(0);
	}
	close(up[1]);
	int inner = -1;
	assert_int_equal(read(up[0], &inner, sizeof(inner)), sizeof(inner));
	close(up[0]);
	if (inner <= 0) {
		waitpid(middle, NULL, 0);
		skip();
	}
	char mine[64], want[64], planted[64], root[64], root_ns[64], root_self[64] = "x";
	snprintf(mine, sizeof(mine), "/proc/%d/root/tmp/perf-1.map", inner);
	snprintf(want, sizeof(want), "/proc/%d/root", inner);
	bool written = false;
	for (int i = 0; i < 500 && !written; i++) { /* its map is written before it pauses */
		written = access(mine, R_OK) == 0;
		if (!written)
			usleep(10000);
	}
	snprintf(planted, sizeof(planted), "/tmp/perf-%d.map", 1);
	FILE *fp = fopen(planted, "wx"); /* ours by the same name: another process's */
	const bool plant = fp != NULL;
	if (fp) {
		fprintf(fp, "1000 10 stale-host\n");
		fclose(fp);
	}
	const int ns_pid = jitmap_pid_ns_pid(inner), self_ns_pid = jitmap_pid_ns_pid((int)getpid());
	const int in_ns = jitmap_pid_root(inner, root_ns, sizeof(root_ns));
	const int in_self = jitmap_pid_root((int)getpid(), root_self, sizeof(root_self));
	const int too_short = jitmap_pid_root(inner, root, 8);
	jitmap_perfmap *m = jitmap_perfmap_new();
	const int added = jitmap_perfmap_add_process(m, inner);
	if (plant)
		unlink(planted);
	kill(inner, SIGKILL); /* before any check: a failed one leaves no process behind */
	waitpid(middle, NULL, 0);
	assert_true(written);
	assert_int_equal(ns_pid, 1);
	assert_int_equal(self_ns_pid, (int)getpid());
	assert_int_equal(in_ns, 1);
	assert_string_equal(root_ns, want);
	assert_int_equal(in_self, 0);
	assert_string_equal(root_self, "");
	assert_int_equal(too_short, -EINVAL);
	assert_int_equal(jitmap_pid_ns_pid(0), -EINVAL);
	assert_int_equal(added, 1);
	assert_string_equal(jitmap_perfmap_file(m, 0, NULL), mine);
	assert_named(m, 0x1000, "inside");
	/* Gone: nothing found, no file of ours taken in its place. */
	assert_int_equal(jitmap_pid_root(inner, root, sizeof(root)), -ESRCH);
	assert_int_equal(jitmap_perfmap_add_process(m, inner), 0);
	jitmap_perfmap_free(m);
}

static int read_nothing(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			size_t why_len)
{
	(void)ctx, (void)addr, (void)buf, (void)len, (void)why, (void)why_len;
	return -EIO;
}

/* The process model answers with a perf map's code where no image holds the address. */
static void test_process_code(void **state)
{
	(void)state;
	const jitmap_target t = {.read_mem = read_nothing};
	jitmap_process *p = jitmap_process_new(&t, NULL);
	jitmap_code_info code;
	assert_int_equal(jitmap_process_code_at(p, 0x1000, &code), -ENOENT);
	jitmap_perfmap *m = jitmap_process_perfmap(p);
	assert_non_null(m);
	assert_ptr_equal(jitmap_process_perfmap(p), m);
	static const char text[] = "1000 40 JS:*f\n";
	assert_int_equal(jitmap_perfmap_add_perf_map(m, text, strlen(text), "/tmp/perf-7.map"), 1);
	assert_int_equal(jitmap_process_code_at(p, 0x1010, &code), 0);
	assert_string_equal(code.source, "perf map /tmp/perf-7.map");
	assert_string_equal(code.function, "JS:*f");
	assert_int_equal(code.function_lo, 0x1000);
	assert_int_equal(code.function_hi, 0x1040);
	assert_null(code.image);
	assert_null(code.stackmap);
	assert_int_equal(code.image_id, 0);
	assert_null(jitmap_process_code_cfi(p, &code, NULL));
	assert_int_equal(jitmap_process_code_at(p, 0x1040, &code), -ENOENT);
	jitmap_process_flush(p); /* keeps the user's files */
	assert_int_equal(jitmap_process_code_at(p, 0x1010, &code), 0);
	assert_null(jitmap_process_perfmap(NULL));
	jitmap_process_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_newest_wins),
		cmocka_unit_test(test_bad_lines),
		cmocka_unit_test(test_jitdump),
		cmocka_unit_test(test_jitdump_refused),
		cmocka_unit_test(test_jitdump_prefixes),
		cmocka_unit_test(test_jitdump_unwinding),
		cmocka_unit_test(test_jitdump_unwinding_hostile),
		cmocka_unit_test(test_jitdump_unwinding_prefixes),
		cmocka_unit_test(test_cpython_perf_jit),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_process_files),
		cmocka_unit_test(test_process_files_in_namespace),
		cmocka_unit_test(test_process_code),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
