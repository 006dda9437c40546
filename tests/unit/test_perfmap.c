#define _GNU_SOURCE
/* test_perfmap.c: perf maps and jitdump files (jitmap/perfmap.h): the lines and records
 * read, the newest description of an address winning, what is refused and said, re-reading
 * a file that grew, a live process's files found, and the process model answering with
 * their code. */
#include "unit.h"

#include <inttypes.h>
#include <unistd.h>

#include "jitmap/perfmap.h"
#include "jitmap/process.h"

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
	static const uint64_t addrs[] = {0x5010, 0x5000, 0x5030};
	static const unsigned lines[] = {12, 10, 14};
	static const char *const files[] = {"/x/app.js", "/x/app.js", "\xff"};
	jd_debug(&j, 0x5000, 3, addrs, lines, files);
	jd_load(&j, 0x5000, 0x40, 1, "JS:*hot /x/app.js:10:1");
	jd_load(&j, 0x6000, 0x20, 2, "JS:*moved");
	const size_t at = jd_record(&j, 4); /* unwinding info: skipped */
	put(&j, 0, 8);
	put(&j, 0, 8);
	put(&j, 0, 8);
	jd_end(&j, at);
	jd_move(&j, 0x6000, 0x7000, 0x20, 2);
	jitmap_perfmap *m = jitmap_perfmap_new();
	jitmap_error err;
	assert_int_equal(jitmap_perfmap_add_jitdump(m, j.b, j.len, "/x/jit-4242.dump", &err), 2);
	assert_int_equal(jitmap_perfmap_num_problems(m), 0);
	jitmap_perfmap_sym s = look(m, 0x5000, 0);
	assert_string_equal(s.name, "JS:*hot /x/app.js:10:1");
	assert_string_equal(s.source, "jitdump /x/jit-4242.dump");
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
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_process_files),
		cmocka_unit_test(test_process_code),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
