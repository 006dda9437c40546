/* test_core_add: what jitmap_core_add_jit_files did, as status bits (jitmap_core_add_opts.status,
 * JITMAP_CORE_ADDED_*), which jitmap-core-handler acts on instead of the note's words: a core
 * with no JIT file or that cannot be rewritten passed on, a file that cannot be read or is
 * cut, files added, a small core with and without the files it maps named, a small core
 * that cannot be made smaller, and a caller that knows no `status` field. The bytes written
 * are test_core's to check. */
#include "unit.h"

#include <elf.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_builder.h"
#include "jitmap/core.h"

#define SEG_A UINT64_C(0x10000)
#define TID 4242

static uint8_t seg_a[0x1000];

/* A one-thread x86-64 core: its stack in segment A, and (`file_note`) an NT_FILE that names
 * a file that does not exist. */
static uint8_t *small_process(bool file_note, size_t *len)
{
	core_builder b;
	cb_init(&b, EM_X86_64, JITMAP_ORDER_LITTLE);
	uint8_t regs[27 * 8];
	memset(regs, 0, sizeof(regs));
	cb_put(&b, regs + 16 * 8, SEG_A + 0x10, 8);  /* rip */
	cb_put(&b, regs + 19 * 8, SEG_A + 0x800, 8); /* rsp */
	cb_prstatus(&b, TID, SIGSEGV, regs, sizeof(regs));
	if (file_note) {
		const uint64_t maps[][3] = {{0x400000, 0x402000, 0}};
		const char *const paths[] = {"/jitmap-test/none"};
		cb_file(&b, 0x1000, 1, maps, paths);
	}
	cb_load(&b, SEG_A, sizeof(seg_a), seg_a, sizeof(seg_a));
	uint8_t *bytes = cb_emit(&b, len);
	assert_non_null(bytes);
	return bytes;
}

static int temp_fd(const void *bytes, size_t len)
{
	char path[] = "/tmp/jitmap-core-add-XXXXXX";
	const int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	if (len)
		assert_int_equal(write(fd, bytes, len), (ssize_t)len);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

/* `bytes` through jitmap_core_add_jit_files with `opts` (its status pointing at *status):
 * what it returned; the output is a temporary file, the note `note`. */
static int add(const void *bytes, size_t len, const jitmap_core_add_opts *opts, uint8_t **out,
	       size_t *out_len)
{
	const int in = temp_fd(bytes, len), o = temp_fd(NULL, 0);
	char note[1024];
	jitmap_error err;
	const int rc = jitmap_core_add_jit_files(in, o, 0, opts, note, sizeof(note), &err);
	if (rc < 0)
		fail_msg("jitmap_core_add_jit_files: %s", err.reason);
	if (out) {
		struct stat st;
		assert_int_equal(fstat(o, &st), 0);
		*out_len = (size_t)st.st_size;
		*out = malloc(*out_len);
		assert_non_null(*out);
		assert_int_equal(pread(o, *out, *out_len, 0), (ssize_t)*out_len);
	}
	close(in);
	close(o);
	return rc;
}

/* Passed on byte for byte: no JIT file (NO_JIT_FILES), no core at all (UNCHANGED), a file
 * named that cannot be read (FILE_LEFT, and then none to add). */
static void test_passed_on(void **state)
{
	(void)state;
	size_t len;
	uint8_t *core = small_process(true, &len);
	unsigned status = 0xdead;
	JITMAP_OPTS(const jitmap_core_add_opts, none, .status = &status);
	assert_int_equal(add(core, len, &none, NULL, NULL), 0);
	assert_int_equal(status, JITMAP_CORE_ADDED_NO_JIT_FILES);

	uint8_t text[200];
	memset(text, 'x', sizeof(text));
	status = 0xdead;
	assert_int_equal(add(text, sizeof(text), &none, NULL, NULL), 0);
	assert_int_equal(status, JITMAP_CORE_ADDED_UNCHANGED);

	const char *const missing[] = {"/jitmap-test/none/perf-1.map"};
	JITMAP_OPTS(const jitmap_core_add_opts, one, .files = missing, .nfiles = 1,
		    .status = &status);
	status = 0xdead;
	assert_int_equal(add(core, len, &one, NULL, NULL), 0);
	assert_int_equal(status, JITMAP_CORE_ADDED_FILE_LEFT | JITMAP_CORE_ADDED_NO_JIT_FILES);
	free(core);
}

/* A perf map added whole (no bit: nothing to say), then cut by max_bytes (FILE_LEFT). */
static void test_added(void **state)
{
	(void)state;
	char path[] = "/tmp/perf-jitmap-core-add-XXXXXX";
	const int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char map[] = "10010 20 jitted_function\n";
	assert_int_equal(write(fd, map, sizeof(map) - 1), (ssize_t)(sizeof(map) - 1));
	close(fd);
	size_t len;
	uint8_t *core = small_process(true, &len);
	const char *const files[] = {path};
	unsigned status = 0xdead;
	JITMAP_OPTS(jitmap_core_add_opts, opts, .files = files, .nfiles = 1, .status = &status);
	assert_int_equal(add(core, len, &opts, NULL, NULL), 1);
	assert_int_equal(status, 0);
	opts.max_bytes = 8;
	status = 0xdead;
	assert_int_equal(add(core, len, &opts, NULL, NULL), 1);
	assert_int_equal(status, JITMAP_CORE_ADDED_FILE_LEFT);
	unlink(path);
	free(core);
}

/* A small core: no JIT descriptor in the files it maps (NO_DESCRIPTOR), and where the core
 * does not say which files it maps, NO_EXE too; made small again, NOT_SMALL. */
static void test_small(void **state)
{
	(void)state;
	unsigned status = 0xdead;
	JITMAP_OPTS(const jitmap_core_add_opts, opts, .flags = JITMAP_CORE_ADD_SMALL,
		    .stack_bytes = 4096, .status = &status);
	size_t len, out_len;
	uint8_t *core = small_process(true, &len), *out;
	assert_int_equal(add(core, len, &opts, &out, &out_len), 0);
	assert_int_equal(status, JITMAP_CORE_ADDED_SMALL | JITMAP_CORE_ADDED_NO_DESCRIPTOR);
	free(core);

	status = 0xdead;
	uint8_t *again = NULL;
	size_t again_len;
	assert_int_equal(add(out, out_len, &opts, &again, &again_len), 0);
	assert_int_equal(status, JITMAP_CORE_ADDED_NOT_SMALL | JITMAP_CORE_ADDED_NO_JIT_FILES);
	assert_int_equal(again_len, out_len);
	free(again);
	free(out);

	core = small_process(false, &len);
	status = 0xdead;
	assert_int_equal(add(core, len, &opts, NULL, NULL), 0);
	assert_int_equal(status, JITMAP_CORE_ADDED_SMALL | JITMAP_CORE_ADDED_NO_DESCRIPTOR |
					 JITMAP_CORE_ADDED_NO_EXE);
	free(core);
}

/* A caller built before `status` existed (its sz ends before it): not written. */
static void test_older_caller(void **state)
{
	(void)state;
	size_t len;
	uint8_t *core = small_process(true, &len);
	unsigned status = 0xdead;
	jitmap_core_add_opts opts = {.sz = offsetof(jitmap_core_add_opts, status),
				     .status = &status};
	assert_int_equal(add(core, len, &opts, NULL, NULL), 0);
	assert_int_equal(status, 0xdead);
	free(core);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_passed_on),
		cmocka_unit_test(test_added),
		cmocka_unit_test(test_small),
		cmocka_unit_test(test_older_caller),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
