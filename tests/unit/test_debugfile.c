/* test_debugfile.c: a stripped file's separate debug file, found where GDB finds it
 * (files/debugfile.c), and the JIT descriptor only it names: Debian's mono-sgen is stripped,
 * and its __jit_debug_descriptor is in /usr/lib/debug/usr/bin/mono-sgen alone.
 *
 * debug_lib.c is built with a build ID, its debug file taken out (objcopy --only-keep-debug),
 * and stripped with a .gnu_debuglink to it (tests/CMakeLists.txt); another build's debug
 * file beside. Each test lays the files out in a folder of its own, with its own debug
 * directory (jitmap_process_opts.debug_dirs, jitmap_stopped_opts.debug_dirs), and scans the
 * stripped library: live (jitmap_process_scan_file) and as a core maps it
 * (jitmap_stopped_find_symbol, jitmap_process_scan_stopped), under a sysroot too.
 */
#include "unit.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core_builder.h"
#include "jitmap/core.h"
#include "jitmap/process.h"

#ifdef JITMAP_DEBUGFILE_DIR

/* A path formatted into `buf` (an array), whole. */
#define FMT(buf, ...) assert_true(snprintf(buf, sizeof(buf), __VA_ARGS__) < (int)sizeof(buf))

#define DESC UINT64_C(0x7f0000401000) /* where the descriptor is read in the process */
#define BASE UINT64_C(0x7f0000000000) /* where a core maps the library */

/* -- Files -- */

static char g_tmp[PATH_MAX];

static void copy_file(const char *from, const char *to)
{
	char cmd[3 * PATH_MAX];
	FMT(cmd, "mkdir -p \"$(dirname '%s')\" && cp '%s' '%s'", to, from, to);
	assert_int_equal(system(cmd), 0);
}

static void remove_tree(const char *path)
{
	char cmd[PATH_MAX + 16];
	FMT(cmd, "rm -rf '%s'", path);
	assert_int_equal(system(cmd), 0);
}

/* A path under this test's folder. */
static const char *at(const char *rest)
{
	static char buf[4][PATH_MAX];
	static int next;
	char *b = buf[next++ % 4];
	assert_true(snprintf(b, PATH_MAX, "%s/%s", g_tmp, rest) < PATH_MAX);
	return b;
}

static int setup(void **state)
{
	(void)state;
	FMT(g_tmp, "%s/jitmap-debugfile-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(g_tmp));
	copy_file(JITMAP_DEBUGFILE_DIR "/lib.so", at("lib/libdesc.so"));
	assert_int_equal(mkdir(at("empty"), 0700), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	remove_tree(g_tmp);
	return 0;
}

/* Whatever a test laid out besides the library, gone. */
static void clean(void)
{
	remove_tree(at("dbg"));
	remove_tree(at("lib/.debug"));
	unlink(at("lib/lib.debug"));
}

/* The build ID of `path` as hex, and the value of its symbol `name` (0 when none). */
static void read_elf(const char *path, const char *name, char *hex, uint64_t *value)
{
	assert_true(elf_version(EV_CURRENT) != EV_NONE);
	const int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	if (hex)
		hex[0] = 0;
	if (value)
		*value = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		assert_non_null(gelf_getshdr(scn, &sh));
		Elf_Data *d = elf_getdata(scn, NULL);
		if (hex && sh.sh_type == SHT_NOTE && d) {
			GElf_Nhdr nh;
			size_t name_off, desc_off;
			if (gelf_getnote(d, 0, &nh, &name_off, &desc_off) &&
			    nh.n_type == NT_GNU_BUILD_ID)
				for (size_t i = 0; i < nh.n_descsz; i++)
					sprintf(hex + 2 * i, "%02x",
						((const uint8_t *)d->d_buf)[desc_off + i]);
		}
		const bool syms = sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM;
		for (size_t i = 0; value && syms && d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;
			if (gelf_getsym(d, (int)i, &s) &&
			    (n = elf_strptr(e, sh.sh_link, s.st_name)) && !strcmp(n, name))
				*value = s.st_value;
		}
	}
	elf_end(e);
	close(fd);
}

/* -- Scans -- */

/* The process's memory: the descriptor (version 1, no entries) at DESC. */
static uint8_t g_desc[24] = {1};
static unsigned g_reads;

static int read_desc(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	(void)ctx;
	g_reads++;
	if (addr < DESC || addr - DESC > sizeof(g_desc) || len > sizeof(g_desc) - (addr - DESC)) {
		snprintf(why, why_len, "not mapped");
		return -EFAULT;
	}
	memcpy(buf, g_desc + (addr - DESC), len);
	return 0;
}

/* The descriptor's link-time address (the debug file's symbol) */
static uint64_t desc_value(void)
{
	uint64_t v;
	read_elf(JITMAP_DEBUGFILE_DIR "/lib.debug", "__jit_debug_descriptor", NULL, &v);
	assert_true(v != 0);
	return v;
}

/* jitmap_process_scan_file of `lib` with debug directories `dirs`, loaded where its
 * descriptor is at DESC: 1 when the descriptor was found (and then it was walked at DESC). */
static int scan(const char *lib, const char *dirs)
{
	const jitmap_target t = {.read_mem = read_desc};
	JITMAP_OPTS(const jitmap_process_opts, o, .debug_dirs = dirs);
	jitmap_process *p = jitmap_process_new(&t, &o);
	assert_non_null(p);
	g_reads = 0;
	assert_int_equal(jitmap_process_scan_begin(p), 0);
	const int rc = jitmap_process_scan_file(p, lib, DESC - desc_value(), "libdesc");
	assert_int_equal(jitmap_process_scan_end(p), 0);
	assert_int_equal(jitmap_process_num_descriptors(p), rc == 1);
	if (rc == 1) {
		jitmap_descriptor_info d = {.sz = sizeof(d)};
		assert_int_equal(jitmap_process_descriptor(p, 0, &d), 0);
		assert_int_equal(d.address, DESC);
		assert_true(d.readable && d.complete);
		assert_true(g_reads > 0);
	}
	jitmap_process_free(p);
	return rc;
}

/* The stripped library names no descriptor: neither its .dynsym (the descriptor is hidden)
 * nor a .symtab (stripped). Without its debug file, nothing is found; the unstripped debug
 * file itself names it at the value the scans expect. */
static void test_stripped_alone(void **state)
{
	(void)state;
	clean();
	uint64_t v;
	read_elf(at("lib/libdesc.so"), "__jit_debug_descriptor", NULL, &v);
	assert_int_equal(v, 0);
	assert_int_equal(scan(at("lib/libdesc.so"), at("empty")), 0);
	assert_int_equal(scan(JITMAP_DEBUGFILE_DIR "/lib.debug", at("empty")), 1);
}

/* DIR/.build-id/xx/yyyy.debug of each debug directory (a ':'-separated list); another
 * build's debug file at that path is not used. */
static void test_by_build_id(void **state)
{
	(void)state;
	clean();
	char hex[2 * 64 + 1], rest[PATH_MAX], dirs[2 * PATH_MAX];
	read_elf(at("lib/libdesc.so"), NULL, hex, NULL);
	assert_true(strlen(hex) >= 4);
	FMT(rest, "dbg/.build-id/%.2s/%s.debug", hex, hex + 2);
	copy_file(JITMAP_DEBUGFILE_DIR "/lib.debug", at(rest));
	assert_int_equal(scan(at("lib/libdesc.so"), at("dbg")), 1);
	FMT(dirs, "%s::%s/", at("empty"), at("dbg"));
	assert_int_equal(scan(at("lib/libdesc.so"), dirs), 1);
	assert_int_equal(scan(at("lib/libdesc.so"), at("empty")), 0);

	copy_file(JITMAP_DEBUGFILE_DIR "/other.debug", at(rest));
	assert_int_equal(scan(at("lib/libdesc.so"), at("dbg")), 0);
}

/* .gnu_debuglink: beside the file, in its .debug/, under a debug directory followed by the
 * file's folder; its CRC checked (a file one byte longer is not it), and another build's
 * debug file by that name is not used. */
static void test_by_debuglink(void **state)
{
	(void)state;
	static const char *const places[] = {"lib/lib.debug", "lib/.debug/lib.debug", NULL};
	for (size_t i = 0; i < 3; i++) {
		clean();
		char rest[PATH_MAX];
		if (places[i])
			FMT(rest, "%s", places[i]);
		else
			FMT(rest, "dbg%s/lib.debug", at("lib"));
		copy_file(JITMAP_DEBUGFILE_DIR "/lib.debug", at(rest));
		const char *dirs = places[i] ? at("empty") : at("dbg");
		assert_int_equal(scan(at("lib/libdesc.so"), dirs), 1);
		if (!places[i]) /* not beside the file: found through the debug directory only */
			assert_int_equal(scan(at("lib/libdesc.so"), at("empty")), 0);
	}

	clean();
	copy_file(JITMAP_DEBUGFILE_DIR "/lib.debug", at("lib/lib.debug"));
	FILE *f = fopen(at("lib/lib.debug"), "ab");
	assert_non_null(f);
	fputc(0, f);
	fclose(f);
	assert_int_equal(scan(at("lib/libdesc.so"), at("empty")), 0);

	clean();
	copy_file(JITMAP_DEBUGFILE_DIR "/other.debug", at("lib/lib.debug"));
	assert_int_equal(scan(at("lib/libdesc.so"), at("empty")), 0);
	clean();
}

/* -- Cores -- */

/* A core that maps the library at BASE under the name `path` (its first page in the core),
 * opened under `sysroot` with debug directories `dirs`: how many definitions of the
 * descriptor jitmap_stopped_find_symbol finds (the address checked), and how many descriptors
 * jitmap_process_scan_stopped finds. */
static size_t core_finds(const char *path, const char *sysroot, const char *dirs, int *scanned)
{
	static uint8_t page[4096];
	const int fd = open(at("lib/libdesc.so"), O_RDONLY);
	assert_true(fd >= 0);
	assert_true(read(fd, page, sizeof(page)) > 64);
	close(fd);
	core_builder b;
	cb_init(&b, EM_X86_64, JITMAP_ORDER_LITTLE);
	uint8_t regs[27 * 8] = {0};
	cb_prstatus(&b, 1234, SIGSEGV, regs, sizeof(regs));
	const uint64_t range[1][3] = {{BASE, BASE + 0x1000, 0}};
	cb_file(&b, 0x1000, 1, range, &path);
	cb_load(&b, BASE, 0x1000, page, sizeof(page));
	b.loads[b.nloads - 1].flags = PF_R;
	size_t len;
	uint8_t *bytes = cb_emit(&b, &len);
	assert_non_null(bytes);
	JITMAP_OPTS(const jitmap_stopped_opts, o, .sysroot = sysroot, .debug_dirs = dirs);
	jitmap_error err;
	jitmap_stopped *c = jitmap_stopped_open_core_memory(bytes, len, &o, &err);
	free(bytes);
	if (!c)
		fail_msg("the core does not open: %s", err.reason);
	uint64_t addr = 0;
	const size_t n = jitmap_stopped_find_symbol(c, JITMAP_JIT_DESCRIPTOR_SYMBOL, &addr, NULL, 1);
	if (n)
		assert_int_equal(addr, BASE + desc_value());
	const jitmap_target t = jitmap_stopped_target(c);
	jitmap_process *p = jitmap_process_new(&t, NULL);
	assert_non_null(p);
	assert_int_equal(jitmap_process_scan_begin(p), 0);
	*scanned = jitmap_process_scan_stopped(p, c);
	assert_int_equal(jitmap_process_scan_end(p), 0);
	jitmap_process_free(p);
	jitmap_stopped_free(c);
	return n;
}

/* From a core: the mapped library's debug file by build ID (the core's copy of its first
 * page), by .gnu_debuglink, and under --sysroot (the debug directory tried under it). */
static void test_core(void **state)
{
	(void)state;
	char hex[2 * 64 + 1], rest[PATH_MAX];
	int scanned;
	clean();
	read_elf(at("lib/libdesc.so"), NULL, hex, NULL);
	assert_int_equal(core_finds(at("lib/libdesc.so"), NULL, at("empty"), &scanned), 0);
	assert_int_equal(scanned, 0);

	FMT(rest, "dbg/.build-id/%.2s/%s.debug", hex, hex + 2);
	copy_file(JITMAP_DEBUGFILE_DIR "/lib.debug", at(rest));
	assert_int_equal(core_finds(at("lib/libdesc.so"), NULL, at("dbg"), &scanned), 1);
	assert_int_equal(scanned, 1);
	/* Under a sysroot: the core names /lib/libdesc.so, read as SYSROOT/lib/libdesc.so, and
	 * the debug directory /dbg is looked at under it. */
	assert_int_equal(core_finds("/lib/libdesc.so", g_tmp, "/dbg", &scanned), 1);
	assert_int_equal(scanned, 1);
	assert_int_equal(core_finds("/lib/libdesc.so", g_tmp, "/empty", &scanned), 0);

	clean();
	copy_file(JITMAP_DEBUGFILE_DIR "/lib.debug", at("lib/.debug/lib.debug"));
	assert_int_equal(core_finds(at("lib/libdesc.so"), NULL, at("empty"), &scanned), 1);
	assert_int_equal(core_finds("/lib/libdesc.so", g_tmp, "/empty", &scanned), 1);
	clean();
}

#endif /* JITMAP_DEBUGFILE_DIR */

int main(void)
{
#ifndef JITMAP_DEBUGFILE_DIR
	fprintf(stderr, "test_debugfile: built without objcopy: skipped\n");
	return 77;
#else
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stripped_alone),
		cmocka_unit_test(test_by_build_id),
		cmocka_unit_test(test_by_debuglink),
		cmocka_unit_test(test_core),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
#endif
}
