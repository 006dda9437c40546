/* test_minidump.c: jitmap_minidump_write (jitmap/minidump.h), read back as Breakpad's
 * processor reads a minidump.
 *
 * Each dump is parsed here from its bytes (no Breakpad code): the header and directory (each
 * stream once, every RVA inside the file), and the streams checked against the stopped
 * process it came from: each thread's context holds the thread's PC and SP at the offsets of
 * CONTEXT_AMD64 or CONTEXT_ARM64, its stack descriptor covers its SP with the bytes the
 * process holds there and is the MemoryList's entry; the module list has the executable
 * first, no two modules overlapping, each file's build ID in its 'BpEL' record; memory
 * regions do not overlap. Dumps of a real core (a child of this test killed by a store to
 * address 16 while a second thread waits, with a page of "JIT code" of its own), of a live
 * child (a named thread), of synthetic AArch64 and x86-64 cores (threads sharing a stack,
 * a thread ID twice, threads without registers), then refusals: other architectures, bad
 * options, a descriptor that cannot be written. The stock tools read these dumps in
 * tests/minidump.
 */
#define _GNU_SOURCE
#include "unit.h"

#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core_builder.h"
#include "jitmap/minidump.h"
#include "jitmap/stopped.h"

/* -- Reading a minidump back -- */

struct md {
	uint8_t *b;
	size_t len;
};

static uint64_t rd(const struct md *m, uint64_t off, size_t size)
{
	if (off > m->len || size > m->len - off)
		fail_msg("read of %zu bytes at %" PRIu64 " past the dump's %zu", size, off, m->len);
	uint64_t v = 0;
	for (size_t i = 0; i < size; i++)
		v |= (uint64_t)m->b[off + i] << (8 * i);
	return v;
}

/* The stream of `type`: true with its place, false when the dump has none. The header and
 * directory are checked on the way: each type once, inside the file. */
static bool stream(const struct md *m, uint32_t type, uint32_t *rva, uint32_t *size)
{
	assert_int_equal(rd(m, 0, 4), 0x504d444d);
	assert_int_equal(rd(m, 4, 4) & 0xffff, 0xa793);
	const uint32_t n = (uint32_t)rd(m, 8, 4), dir = (uint32_t)rd(m, 12, 4);
	bool found = false;
	for (uint32_t i = 0; i < n; i++) {
		const uint32_t t = (uint32_t)rd(m, dir + 12 * i, 4);
		const uint32_t sz = (uint32_t)rd(m, dir + 12 * i + 4, 4);
		const uint32_t at = (uint32_t)rd(m, dir + 12 * i + 8, 4);
		rd(m, at, sz ? 1 : 0);
		assert_true((uint64_t)at + sz <= m->len);
		if (t != type)
			continue;
		assert_false(found); /* a second stream of a type */
		found = true;
		*rva = at;
		*size = sz;
	}
	return found;
}

static uint32_t need(const struct md *m, uint32_t type, uint32_t *size)
{
	uint32_t rva = 0, sz = 0;
	if (!stream(m, type, &rva, &sz))
		fail_msg("the dump has no stream of type 0x%x", type);
	if (size)
		*size = sz;
	return rva;
}

/* An MDString as ASCII (what the tests name is). */
static void md_string(const struct md *m, uint32_t rva, char *out, size_t cap)
{
	const uint32_t bytes = (uint32_t)rd(m, rva, 4);
	assert_int_equal(bytes % 2, 0);
	size_t n = 0;
	for (uint32_t i = 0; i < bytes / 2 && n + 1 < cap; i++)
		out[n++] = (char)rd(m, rva + 4 + 2 * i, 2);
	out[n] = 0;
	assert_int_equal(rd(m, rva + 4 + bytes, 2), 0);
}

/* jitmap_minidump_write into a temporary file, read back whole. */
static int write_md(jitmap_stopped *s, const jitmap_minidump_opts *opts,
		    jitmap_minidump_info *info, struct md *m, jitmap_error *err)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	const int rc = jitmap_minidump_write(s, fileno(f), opts, info, err);
	struct stat st;
	assert_int_equal(fstat(fileno(f), &st), 0);
	m->len = (size_t)st.st_size;
	m->b = malloc(m->len ? m->len : 1);
	assert_non_null(m->b);
	assert_int_equal(pread(fileno(f), m->b, m->len, 0), (ssize_t)m->len);
	fclose(f);
	/* JITMAP_TEST_MINIDUMPS=DIR keeps each dump (DIR/N.dmp), for the stock tools by hand */
	static int kept;
	const char *dir = getenv("JITMAP_TEST_MINIDUMPS");
	char *path = NULL;
	if (dir && !rc && asprintf(&path, "%s/%d.dmp", dir, kept++) > 0) {
		FILE *k = fopen(path, "wb");
		if (k) {
			fwrite(m->b, 1, m->len, k);
			fclose(k);
		}
	}
	free(path);
	return rc;
}

/* -- What every dump must be -- */

struct region {
	uint64_t lo, len;
	uint32_t rva;
};

static int cmp_region(const void *a, const void *b)
{
	const struct region *x = a, *y = b;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* The dump of `s` read back: what every dump must be, checked against `s`. Returns the
 * memory regions (sorted; the caller frees them). */
static struct region *check_dump(jitmap_stopped *s, const struct md *m,
				 const jitmap_minidump_info *info, size_t *nregions)
{
	const bool arm = jitmap_stopped_arch(s) == JITMAP_ARCH_AARCH64;
	const unsigned pc_no = arm ? 32 : 16, sp_no = arm ? 31 : 7;
	const uint32_t pc_off = arm ? 264 : 248, sp_off = arm ? 256 : 152;
	assert_int_equal(info->bytes, m->len);

	/* MemoryList: regions inside the file, none overlapping another. */
	uint32_t size;
	uint32_t at = need(m, 5, &size);
	const uint32_t nmem = (uint32_t)rd(m, at, 4);
	assert_int_equal(size, 4 + 16 * nmem);
	assert_int_equal(nmem, info->num_memory);
	assert_true(nmem <= 4096);
	struct region *r = calloc(nmem + 1, sizeof(*r));
	assert_non_null(r);
	for (uint32_t i = 0; i < nmem; i++) {
		r[i].lo = rd(m, at + 4 + 16 * i, 8);
		r[i].len = rd(m, at + 12 + 16 * i, 4);
		r[i].rva = (uint32_t)rd(m, at + 16 + 16 * i, 4);
		assert_true(r[i].len > 0 && r[i].len <= (64u << 20));
		assert_true(r[i].rva + r[i].len <= m->len);
	}
	qsort(r, nmem, sizeof(*r), cmp_region);
	for (uint32_t i = 1; i < nmem; i++)
		assert_true(r[i - 1].lo + r[i - 1].len <= r[i].lo);

	/* ThreadList: each thread once, its context the stopped thread's, its stack a
	 * MemoryList region holding its SP with the bytes the process holds. */
	at = need(m, 3, &size);
	const uint32_t nth = (uint32_t)rd(m, at, 4);
	assert_int_equal(size, 4 + 48 * nth);
	assert_int_equal(nth, info->num_threads);
	for (uint32_t i = 0; i < nth; i++) {
		const uint32_t e = at + 4 + 48 * i, tid = (uint32_t)rd(m, e, 4);
		for (uint32_t k = 0; k < i; k++)
			assert_int_not_equal(rd(m, at + 4 + 48 * k, 4), tid);
		const jitmap_stopped_thread_info *t = NULL;
		size_t ti = 0;
		for (; ti < jitmap_stopped_num_threads(s); ti++) {
			t = jitmap_stopped_thread(s, ti);
			if ((uint32_t)t->tid == tid)
				break;
		}
		assert_true(ti < jitmap_stopped_num_threads(s));
		const uint32_t csize = (uint32_t)rd(m, e + 40, 4), ctx = (uint32_t)rd(m, e + 44, 4);
		assert_int_equal(csize, arm ? 912 : 1232);
		const uint32_t flags = (uint32_t)rd(m, ctx + (arm ? 0 : 48), 4);
		uint64_t pc, sp;
		if (t->error || jitmap_stopped_thread_reg(t, pc_no, &pc) ||
		    jitmap_stopped_thread_reg(t, sp_no, &sp)) {
			/* no registers: the CPU's flag alone, no stack */
			assert_int_equal(flags, arm ? 0x00400000 : 0x00100000);
			assert_int_equal(rd(m, e + 32, 4), 0);
			continue;
		}
		assert_int_equal(flags, arm ? 0x00400003 : 0x00100007);
		assert_int_equal(rd(m, ctx + pc_off, 8), pc);
		assert_int_equal(rd(m, ctx + sp_off, 8), sp);
		const uint64_t lo = rd(m, e + 24, 8), len = rd(m, e + 32, 4);
		const uint32_t rva = (uint32_t)rd(m, e + 36, 4);
		if (!len)
			continue; /* its stack cannot be read: checked by the callers that expect one */
		assert_true(lo <= sp && sp < lo + len);
		struct region key = {.lo = lo}, *hit = bsearch(&key, r, nmem, sizeof(*r), cmp_region);
		assert_non_null(hit);
		assert_int_equal(hit->len, len);
		assert_int_equal(hit->rva, rva);
		uint8_t *want = malloc(len);
		assert_non_null(want);
		const jitmap_target tt = jitmap_stopped_thread_stack_target(s, ti);
		char why[192];
		assert_int_equal(tt.read_mem(tt.ctx, lo, want, len, why, sizeof(why)), 0);
		assert_memory_equal(m->b + rva, want, len);
		free(want);
	}

	/* ModuleList: the executable first (the module holding AT_PHDR), none overlapping,
	 * each file's build ID in a 'BpEL' record. */
	at = need(m, 4, &size);
	const uint32_t nmod = (uint32_t)rd(m, at, 4);
	assert_int_equal(size, 4 + 108 * nmod);
	assert_int_equal(nmod, info->num_modules);
	uint64_t phdr = 0;
	const bool have_phdr = !jitmap_stopped_auxv(s, AT_PHDR, &phdr);
	for (uint32_t i = 0; i < nmod; i++) {
		const uint32_t e = at + 4 + 108 * i;
		const uint64_t base = rd(m, e, 8), sz = rd(m, e + 8, 4);
		assert_true(sz > 0);
		if (i == 0 && have_phdr && jitmap_stopped_num_mappings(s))
			assert_true(phdr - base < sz);
		for (uint32_t k = 0; k < i; k++) {
			const uint64_t b2 = rd(m, at + 4 + 108 * k, 8), s2 = rd(m, at + 12 + 108 * k, 4);
			assert_false(base < b2 + s2 && b2 < base + sz);
		}
		char name[1100];
		md_string(m, (uint32_t)rd(m, e + 20, 4), name, sizeof(name));
		assert_true(name[0] != 0);
		const uint32_t cv_len = (uint32_t)rd(m, e + 76, 4), cv = (uint32_t)rd(m, e + 80, 4);
		if (cv_len) {
			assert_true(cv_len > 4 && cv_len <= 68);
			assert_int_equal(rd(m, cv, 4), 0x4270454c);
		}
		if (cv_len && name[0] == '/') { /* a file's: its build ID */
			uint8_t id[64];
			const size_t n = jitmap_stopped_build_id_at(s, base, id, sizeof(id));
			assert_int_equal(cv_len, 4 + n);
			assert_memory_equal(m->b + cv + 4, id, n);
		}
	}

	/* SystemInfo, MiscInfo, MemoryInfoList (what minidump_dump insists on). */
	at = need(m, 7, &size);
	assert_int_equal(size, 56);
	assert_int_equal(rd(m, at, 2), arm ? 12 : 9);
	assert_int_equal(rd(m, at + 20, 4), 0x8201);
	at = need(m, 15, &size);
	assert_int_equal(size, 24);
	assert_int_equal(rd(m, at, 4), 24);
	assert_int_equal(rd(m, at + 4, 4), 1);
	assert_int_equal(rd(m, at + 8, 4), (uint32_t)jitmap_stopped_pid(s));
	at = need(m, 16, &size);
	assert_int_equal(rd(m, at, 4), 16);
	assert_int_equal(rd(m, at + 4, 4), 48);
	const uint64_t ninfo = rd(m, at + 8, 8);
	assert_int_equal(size, 16 + 48 * ninfo);
	for (uint64_t i = 1; i < ninfo; i++)
		assert_true(rd(m, at + 16 + 48 * (i - 1), 8) + rd(m, at + 16 + 48 * (i - 1) + 24, 8) <=
			    rd(m, at + 16 + 48 * i, 8));
	*nregions = nmem;
	return r;
}

/* The MemoryInfoList entry holding `addr`: its offset, or 0. */
static uint32_t memory_info_at(const struct md *m, uint64_t addr)
{
	const uint32_t at = need(m, 16, NULL);
	for (uint64_t i = 0; i < rd(m, at + 8, 8); i++) {
		const uint32_t e = at + 16 + 48 * (uint32_t)i;
		if (addr - rd(m, e, 8) < rd(m, e + 24, 8))
			return e;
	}
	return 0;
}

/* A stream's bytes as a NUL-terminated copy (the Linux streams are text). */
static char *text(const struct md *m, uint32_t type)
{
	uint32_t rva, size;
	if (!stream(m, type, &rva, &size))
		return NULL;
	char *t = calloc(size + 1, 1);
	assert_non_null(t);
	memcpy(t, m->b + rva, size);
	for (uint32_t i = 0; i + 1 < size; i++)
		if (!t[i])
			t[i] = '\n';
	return t;
}

/* -- A real core -- */

static void *blocked_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}


/* The child: killed by a store to address 16 while a second thread waits. */
static void crash_by_store(void *arg)
{
	(void)arg;
	pthread_t th;
	if (pthread_create(&th, NULL, blocked_thread, NULL))
		_exit(3);
	usleep(20000); /* the thread waits in pause() */
	signal(SIGSEGV, SIG_DFL);
	volatile int *volatile bad = (volatile int *)(uintptr_t)16;
	*bad = 1;
}

/* A core of a child of this test in `dir`, or NULL when cores go elsewhere here. */
static char *make_core(const char *dir)
{
	return cb_kernel_core(dir, crash_by_store, NULL, NULL);
}

static uint8_t *jit_page; /* "JIT code": an anonymous r-x page, mapped before the fork */

static void test_real_core(void **state)
{
	(void)state;
	jit_page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(jit_page != MAP_FAILED);
	for (size_t i = 0; i < 4096; i++)
		jit_page[i] = (uint8_t)(i * 13 + 7);
	assert_int_equal(mprotect(jit_page, 4096, PROT_READ | PROT_EXEC), 0);
	char dir[] = "/tmp/jitmap-test-minidump.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *core = make_core(dir);
	if (!core) {
		rmdir(dir);
		skip();
	}
	jitmap_error err;
	jitmap_stopped *s = jitmap_stopped_open_core(core, NULL, &err);
	if (!s)
		fail_msg("%s: %s", core, err.reason);
	assert_int_equal(jitmap_stopped_num_threads(s), 2);

	const uint64_t code = (uint64_t)(uintptr_t)jit_page;
	static const uint8_t id[16] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
	const jitmap_minidump_module jit[] = {
		{code, 4096, "jit-test", id, sizeof(id)},
		{(uint64_t)(uintptr_t)&getpid, 16, "jit-in-libc", id, sizeof(id)}, /* overlaps libc */
		{code + 8, 8, "jit-again", id, sizeof(id)},     /* overlaps jit-test */
		{code + 8192, 8, "jit-no-id", id, 0},           /* no identifier */
	};
	const jitmap_minidump_range mem[] = {{code, code + 4096}, {0, 64}};
	JITMAP_OPTS(const jitmap_minidump_opts, o, .jit_modules = jit, .num_jit_modules = 4,
		    .memory = mem, .num_memory = 2, .stack_bytes = 64 << 10);
	jitmap_minidump_info info = {.sz = sizeof(info)};
	struct md m;
	assert_int_equal(write_md(s, &o, &info, &m, &err), 0);
	size_t nr;
	struct region *r = check_dump(s, &m, &info, &nr);
	assert_int_equal(info.dropped_modules, 3);
	assert_int_equal(info.num_threads, 2);

	/* Both threads' stacks, each bounded by stack_bytes from its SP's page. */
	const uint32_t tl = need(&m, 3, NULL);
	for (uint32_t i = 0; i < 2; i++) {
		assert_true(rd(&m, tl + 4 + 48 * i + 32, 4) > 0);
		assert_true(rd(&m, tl + 4 + 48 * i + 32, 4) <= 64 << 10);
	}
	/* The JIT page: its bytes carried, its module last, executable private memory. */
	struct region key = {.lo = code}, *hit = bsearch(&key, r, nr, sizeof(*r), cmp_region);
	assert_non_null(hit);
	assert_int_equal(hit->len, 4096);
	assert_memory_equal(m.b + hit->rva, jit_page, 4096);
	for (size_t i = 0; i < nr; i++)
		assert_true(r[i].lo >= 64); /* [0, 64) cannot be read: left out, never filled */
	const uint32_t ml = need(&m, 4, NULL), n = (uint32_t)rd(&m, ml, 4);
	const uint32_t last = ml + 4 + 108 * (n - 1);
	assert_int_equal(rd(&m, last, 8), code);
	char name[64];
	md_string(&m, (uint32_t)rd(&m, last + 20, 4), name, sizeof(name));
	assert_string_equal(name, "jit-test");
	assert_int_equal(rd(&m, last + 76, 4), 4 + sizeof(id));
	assert_memory_equal(m.b + rd(&m, last + 80, 4) + 4, id, sizeof(id));
	/* The vDSO, by Breakpad's name for it, where the auxiliary vector puts it. */
	uint64_t vdso = 0;
	bool vdso_listed = false;
	assert_int_equal(jitmap_stopped_auxv(s, AT_SYSINFO_EHDR, &vdso), 0);
	for (uint32_t i = 0; i < n; i++) {
		md_string(&m, (uint32_t)rd(&m, ml + 4 + 108 * i + 20, 4), name, sizeof(name));
		if (!strcmp(name, "linux-gate.so")) {
			assert_int_equal(rd(&m, ml + 4 + 108 * i, 8), vdso);
			vdso_listed = true;
		}
	}
	assert_true(vdso_listed);
	const uint32_t mi = memory_info_at(&m, code);
	assert_int_not_equal(mi, 0);
	assert_int_equal(rd(&m, mi + 36, 4), 0x20);    /* PAGE_EXECUTE_READ */
	assert_int_equal(rd(&m, mi + 40, 4), 0x20000); /* MEM_PRIVATE */

	/* The crash: the first thread, SIGSEGV /SEGV_MAPERR at 16, its own context; the second
	 * thread has no NT_SIGINFO of its own (the kernel writes one). */
	int signo = 0, reason = 0;
	uint64_t addr = 0;
	assert_int_equal(jitmap_stopped_thread_siginfo(jitmap_stopped_thread(s, 0), &signo,
						       &reason, &addr), 0);
	assert_int_equal(signo, SIGSEGV);
	assert_int_equal(reason, SEGV_MAPERR);
	assert_int_equal(addr, 16);
	assert_int_equal(jitmap_stopped_thread_siginfo(jitmap_stopped_thread(s, 1), NULL, NULL,
						       NULL), -ENOENT);
	assert_int_equal(jitmap_stopped_thread_siginfo(NULL, NULL, NULL, NULL), -ENOENT);
	assert_string_equal(jitmap_stopped_args(NULL), "");
	uint32_t size;
	const uint32_t ex = need(&m, 6, &size);
	assert_int_equal(size, 168);
	assert_int_equal(rd(&m, ex, 4), (uint32_t)jitmap_stopped_thread(s, 0)->tid);
	assert_int_equal(rd(&m, ex + 8, 4), SIGSEGV);
	assert_int_equal(rd(&m, ex + 12, 4), SEGV_MAPERR);
	assert_int_equal(rd(&m, ex + 24, 8), 16);
	assert_int_equal(rd(&m, ex + 164, 4), rd(&m, tl + 4 + 44, 4));

	/* The Linux streams a core has: maps naming this program, the auxiliary vector, the
	 * command line NT_PRPSINFO holds; none of a live process's. */
	char *maps = text(&m, 0x47670009), *cmd = text(&m, 0x47670006);
	assert_non_null(maps);
	assert_contains(maps, program_invocation_short_name);
	assert_non_null(cmd);
	assert_contains(cmd, program_invocation_short_name);
	uint64_t phdr = 0;
	const uint32_t auxv = need(&m, 0x47670008, &size);
	assert_int_equal(size % 16, 0);
	assert_int_equal(jitmap_stopped_auxv(s, AT_PHDR, &phdr), 0);
	bool seen = false;
	for (uint32_t i = 0; i < size / 16; i++)
		seen |= rd(&m, auxv + 16 * i, 8) == AT_PHDR && rd(&m, auxv + 16 * i + 8, 8) == phdr;
	assert_true(seen);
	uint32_t rva;
	assert_false(stream(&m, 0x47670004, &rva, &size)); /* LinuxProcStatus */
	assert_false(stream(&m, 24, &rva, &size));         /* ThreadNameList */
	free(maps);
	free(cmd);
	free(r);
	free(m.b);

	/* A range over the whole address space: bounded (4096 regions at most, none over
	 * 64 MiB, none overlapping a stack), and still a dump. */
	const jitmap_minidump_range all[] = {{0, UINT64_MAX}};
	JITMAP_OPTS(const jitmap_minidump_opts, o2, .memory = all, .num_memory = 1);
	info = (jitmap_minidump_info){.sz = sizeof(info)};
	assert_int_equal(write_md(s, &o2, &info, &m, &err), 0);
	r = check_dump(s, &m, &info, &nr);
	assert_true(nr > 2);
	free(r);
	free(m.b);

	jitmap_stopped_free(s);
	unlink(core);
	free(core);
	rmdir(dir);
	munmap(jit_page, 4096);
}

/* -- A live child -- */

static void *named_thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "md-worker");
	for (;;)
		pause();
	return NULL;
}

static void test_live(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	fflush(NULL);
	const pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) { /* killed with the test, should an assertion end it first */
		pthread_t th;
		close(p[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (pthread_create(&th, NULL, named_thread, NULL))
			_exit(3);
		usleep(20000);
		if (write(p[1], "r", 1) != 1)
			_exit(4);
		for (;;)
			pause();
	}
	close(p[1]);
	char c;
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	jitmap_error err;
	jitmap_stopped *s = jitmap_stopped_open_pid(pid, NULL, &err);
	if (!s) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		if (err.code == -EPERM)
			skip();
		fail_msg("%s", err.reason);
	}
	/* What only a core holds: a live process has none. */
	assert_int_equal(jitmap_stopped_thread_siginfo(jitmap_stopped_thread(s, 0), NULL, NULL,
						       NULL), -ENOENT);
	assert_string_equal(jitmap_stopped_args(s), "");
	jitmap_minidump_info info = {.sz = sizeof(info)};
	struct md m;
	assert_int_equal(write_md(s, NULL, &info, &m, &err), 0);
	size_t nr;
	free(check_dump(s, &m, &info, &nr));
	assert_int_equal(info.num_threads, 2);
	assert_true(nr >= 2);
	uint32_t rva, size;
	assert_false(stream(&m, 6, &rva, &size)); /* no crash */
	char *status = text(&m, 0x47670004), *cmd = text(&m, 0x47670006);
	assert_non_null(status);
	assert_contains(status, "Name:");
	assert_non_null(cmd);
	assert_contains(cmd, program_invocation_short_name);
	/* ThreadNameList: the worker by its name. */
	const uint32_t tn = need(&m, 24, &size), n = (uint32_t)rd(&m, tn, 4);
	assert_int_equal(size, 4 + 12 * n);
	bool found = false;
	for (uint32_t i = 0; i < n; i++) {
		char name[32];
		md_string(&m, (uint32_t)rd(&m, tn + 4 + 12 * i + 4, 8), name, sizeof(name));
		found |= !strcmp(name, "md-worker");
	}
	assert_true(found);
	free(status);
	free(cmd);
	free(m.b);
	jitmap_stopped_free(s);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* -- Synthetic cores -- */

#define TID 4242

/* A core of `machine`: threads `tids` (the first stopped by SIGSEGV), each pr_reg slot k
 * holding 0x1000 + k (for AArch64: sp 0x101f, pc 0x1020) cut to `reg_len` bytes, and a
 * segment [0x1000, 0x3000) holding the stacks. */
static jitmap_stopped *synthetic(unsigned machine, const uint32_t *tids, size_t n,
				 size_t reg_len, jitmap_error *err)
{
	core_builder *b = calloc(1, sizeof(*b));
	assert_non_null(b);
	cb_init(b, machine, machine == EM_S390 ? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE);
	uint8_t regs[34 * 8];
	for (size_t k = 0; k < 34; k++)
		cb_put(b, regs + 8 * k, 0x1000 + k, 8);
	for (size_t i = 0; i < n; i++)
		cb_prstatus(b, tids[i], i ? 0 : SIGSEGV, regs, reg_len);
	static uint8_t seg[0x2000];
	for (size_t i = 0; i < sizeof(seg); i++)
		seg[i] = (uint8_t)(i * 5 + 3);
	cb_load(b, 0x1000, sizeof(seg), seg, sizeof(seg));
	size_t len;
	uint8_t *bytes = cb_emit(b, &len);
	assert_non_null(bytes);
	jitmap_stopped *s = jitmap_stopped_open_core_memory(bytes, len, NULL, err);
	free(bytes);
	free(b);
	return s;
}

static void test_synthetic(void **state)
{
	(void)state;
	jitmap_error err;
	/* AArch64: two threads at one SP (0x101f) share one stack region; a thread ID twice is
	 * listed once (Breakpad refuses a list with two). */
	const uint32_t tids[] = {TID, TID + 1, TID};
	jitmap_stopped *s = synthetic(EM_AARCH64, tids, 3, 34 * 8, &err);
	assert_non_null(s);
	jitmap_minidump_info info = {.sz = sizeof(info)};
	struct md m;
	assert_int_equal(write_md(s, NULL, &info, &m, &err), 0);
	size_t nr;
	free(check_dump(s, &m, &info, &nr));
	assert_int_equal(info.num_threads, 2);
	assert_int_equal(nr, 1);
	assert_int_equal(info.num_modules, 0);
	const uint32_t tl = need(&m, 3, NULL);
	for (uint32_t i = 0; i < 2; i++) {
		assert_int_equal(rd(&m, tl + 4 + 48 * i + 24, 8), 0x1000); /* the SP's page */
		assert_int_equal(rd(&m, tl + 4 + 48 * i + 32, 4), 0x2000); /* to the segment's end */
		const uint32_t ctx = (uint32_t)rd(&m, tl + 4 + 48 * i + 44, 4);
		assert_int_equal(rd(&m, ctx + 8 + 8 * 29, 8), 0x1000 + 29); /* x29 */
	}
	free(m.b);
	jitmap_stopped_free(s);

	/* x86-64 threads whose notes hold no PC: listed, with no registers and no stack. */
	s = synthetic(EM_X86_64, tids, 2, 8 * 10, &err);
	assert_non_null(s);
	assert_int_not_equal(jitmap_stopped_thread(s, 0)->error, 0);
	info = (jitmap_minidump_info){.sz = sizeof(info)};
	assert_int_equal(write_md(s, NULL, &info, &m, &err), 0);
	free(check_dump(s, &m, &info, &nr));
	assert_int_equal(info.num_threads, 2);
	assert_int_equal(nr, 0);
	free(m.b);
	/* A caller built against a shorter info gets its fields, none past them. */
	struct {
		jitmap_minidump_info i;
		uint8_t canary[8];
	} shorter;
	memset(&shorter, 0xab, sizeof(shorter));
	shorter.i.sz = offsetof(jitmap_minidump_info, num_modules);
	assert_int_equal(write_md(s, NULL, &shorter.i, &m, &err), 0);
	assert_int_equal(shorter.i.num_threads, 2);
	assert_int_equal(shorter.i.num_modules, (size_t)0xabababababababab);
	free(m.b);
	jitmap_stopped_free(s);

	/* s390x: not written, with the reason. */
	s = synthetic(EM_S390, tids, 1, 216, &err);
	assert_non_null(s);
	assert_int_equal(write_md(s, NULL, NULL, &m, &err), -ENOTSUP);
	assert_int_equal(err.code, -ENOTSUP);
	assert_contains(err.reason, "x86-64 and AArch64");
	assert_int_equal(m.len, 0);
	free(m.b);
	jitmap_stopped_free(s);
}

static void test_bad_input(void **state)
{
	(void)state;
	jitmap_error err;
	const uint32_t tid = TID;
	jitmap_stopped *s = synthetic(EM_X86_64, &tid, 1, 27 * 8, &err);
	assert_non_null(s);
	assert_int_equal(jitmap_minidump_write(NULL, 1, NULL, NULL, &err), -EINVAL);
	assert_int_equal(err.code, -EINVAL);
	assert_int_equal(jitmap_minidump_write(s, -1, NULL, NULL, NULL), -EINVAL);
	const int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	assert_true(devnull >= 0);
	jitmap_minidump_opts o = {.sz = 4};
	assert_int_equal(jitmap_minidump_write(s, devnull, &o, NULL, &err), -EINVAL);
	/* fields this library does not know, set */
	struct {
		jitmap_minidump_opts o;
		uint64_t newer;
	} big = {.o = {.sz = sizeof(big)}, .newer = 1};
	assert_int_equal(jitmap_minidump_write(s, devnull, &big.o, NULL, &err), -EINVAL);
	big.newer = 0;
	assert_int_equal(jitmap_minidump_write(s, devnull, &big.o, NULL, &err), 0);
	o = (jitmap_minidump_opts){.sz = sizeof(o), .num_jit_modules = 1};
	assert_int_equal(jitmap_minidump_write(s, devnull, &o, NULL, &err), -EINVAL);
	o = (jitmap_minidump_opts){.sz = sizeof(o), .num_memory = 1};
	assert_int_equal(jitmap_minidump_write(s, devnull, &o, NULL, &err), -EINVAL);
	jitmap_minidump_info info = {.sz = 0};
	assert_int_equal(jitmap_minidump_write(s, devnull, NULL, &info, &err), -EINVAL);
	close(devnull);
	/* a descriptor open for reading only: write(2)'s errno, said */
	const int ro = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_true(ro >= 0);
	assert_int_equal(jitmap_minidump_write(s, ro, NULL, NULL, &err), -EBADF);
	assert_contains(err.reason, "cannot write");
	close(ro);
	jitmap_stopped_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_core),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_synthetic),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
