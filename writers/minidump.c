/* minidump.c: a minidump of a stopped process in Breakpad's format (include/jitmap/minidump.h
 * says what it holds and why; minidump_memory.c chooses the memory it carries and lists the
 * process's areas, minidump_modules.c the modules).
 *
 * The layout is Breakpad's minidump_format.h, as its processor (minidump.cc) reads it: a
 * 32-byte header, a directory of 12-byte entries, then the streams and what they point at by
 * 32-bit offsets (RVAs). Everything but the memory's bytes is built in one buffer (`struct
 * out`), whose size is then known: the memory follows it, and the descriptors that point at
 * memory (each thread's stack, the MemoryList) are patched once its place is. Nothing is
 * sought back: the file is written front to back, so a pipe takes it.
 *
 * The reader's traps, each checked by its stock tools: a second stream of most types makes
 * the whole dump unreadable; two modules that overlap make it drop the whole module list, two
 * memory regions or two threads with one ID likewise; minidump_dump fails without MiscInfo
 * and MemoryInfoList, which Breakpad's own Linux writer does not write; a string over 1024
 * characters is not read; a module entry is 108 bytes (its struct's sizeof, 112, is not).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/utsname.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <time.h>
#include <unistd.h>

#include "jitmap/minidump.h"

#include "../common/strbuf.h"
#include "internal.h"

/* -- The format's numbers (minidump_format.h, minidump_cpu_amd64.h, minidump_cpu_arm64.h) -- */

#define MD_SIGNATURE 0x504d444du /* "MDMP" */
#define MD_VERSION 0xa793u
#define MD_HEADER 32u
#define MD_DIRENT 12u
#define MD_MAX_STREAMS 16u       /* reserved in the directory; the dump uses fewer */

enum {
	ST_THREAD_LIST = 3, ST_MODULE_LIST = 4, ST_MEMORY_LIST = 5, ST_EXCEPTION = 6,
	ST_SYSTEM_INFO = 7, ST_MISC_INFO = 15, ST_MEMORY_INFO_LIST = 16,
	ST_THREAD_NAME_LIST = 24,
	ST_LINUX_PROC_STATUS = 0x47670004, ST_LINUX_CMD_LINE = 0x47670006,
	ST_LINUX_AUXV = 0x47670008, ST_LINUX_MAPS = 0x47670009,
};

#define MD_THREAD 48u
#define MD_MODULE 108u
#define MD_MEMORY_DESC 16u
#define MD_EXCEPTION 168u
#define MD_SYSTEM_INFO 56u
#define MD_MISC_INFO 24u
#define MD_MEMORY_INFO 48u

#define CONTEXT_AMD64 1232u
#define CONTEXT_AMD64_CPU 0x00100000u /* | CONTROL 1, INTEGER 2, SEGMENTS 4 */
#define CONTEXT_ARM64 912u
#define CONTEXT_ARM64_CPU 0x00400000u /* | CONTROL 1, INTEGER 2 */
#define ARCH_AMD64 9u
#define ARCH_ARM64 12u
#define PLATFORM_LINUX 0x8201u
#define CV_ELF 0x4270454cu            /* 'BpEL' */

#define MAX_THREADS 4096u             /* Breakpad's cap on the ThreadList */
#define MAX_STRING 1023u              /* UTF-16 units: the reader takes at most 1024 */
#define MAX_AREAS 65536u              /* MemoryInfoList entries (Linux's max_map_count) */
#define MAX_OUT (UINT64_C(1) << 30)   /* all but the memory's bytes */
#define MEMORY_BUDGET (UINT64_C(2) << 30) /* memory carried: with MAX_OUT, under 4 GiB */
#define MAX_PROC_FILE (UINT64_C(1) << 20) /* /proc/PID/cmdline, status */
#define DEFAULT_STACK (UINT64_C(1) << 20)

/* -- The buffer everything but the memory is built in -- */

struct out {
	uint8_t *b;
	size_t len, cap;
	int rc; /* -ENOMEM, -EFBIG once it failed: later writes do nothing */
};

/* `n` bytes (zeros when `p` is NULL) appended, 4-aligned: their offset (0 once failed). */
static uint32_t put(struct out *o, const void *p, size_t n)
{
	const size_t at = (o->len + 3) & ~(size_t)3;
	if (o->rc)
		return 0;
	if (at + n > MAX_OUT) {
		o->rc = -EFBIG;
		return 0;
	}
	if (jitmap__grow(&o->b, &o->cap, at + n, 1)) {
		o->rc = -ENOMEM;
		return 0;
	}
	memset(o->b + o->len, 0, at - o->len);
	if (p)
		memcpy(o->b + at, p, n);
	else
		memset(o->b + at, 0, n);
	o->len = at + n;
	return (uint32_t)at;
}

static void set(struct out *o, size_t at, uint64_t v, size_t size)
{
	if (!o->rc && at + size <= o->len)
		jitmap__store(o->b + at, v, size, JITMAP_ORDER_LITTLE);
}

/* A MDString: its length in bytes, the text in UTF-16LE (cut at MAX_STRING units; a byte
 * that is not UTF-8 becomes U+FFFD), a 2-byte NUL. Its offset. */
static uint32_t put_string(struct out *o, const char *s)
{
	uint16_t u[MAX_STRING];
	size_t n = 0;
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t left = strlen((const char *)p);
	while (left && n < MAX_STRING) {
		size_t len;
		uint32_t c = jitmap__utf8_next(p, left, &len);
		p += len;
		left -= len;
		if (c >= 0x10000) {
			if (n + 2 > MAX_STRING)
				break;
			c -= 0x10000;
			u[n++] = (uint16_t)(0xd800 | c >> 10);
			u[n++] = (uint16_t)(0xdc00 | (c & 0x3ff));
		} else {
			u[n++] = (uint16_t)c;
		}
	}
	const uint32_t at = put(o, NULL, 4 + 2 * n + 2);
	set(o, at, 2 * n, 4);
	for (size_t i = 0; i < n; i++)
		set(o, at + 4 + 2 * i, u[i], 2);
	return at;
}

/* -- Threads and their contexts -- */

struct thread {
	size_t index;      /* in the stopped process */
	uint32_t tid;
	bool regs, stack;
	uint64_t sp, stack_lo;
	uint32_t context;  /* its offset in the buffer */
	uint32_t entry;    /* its ThreadList entry's */
};

/* Register `regno` of thread `th`, or 0 (a register it has not: jitmap reads no FP state). */
static uint64_t reg(const jitmap_stopped_thread_info *th, unsigned regno)
{
	uint64_t v = 0;
	return jitmap_stopped_thread_reg(th, regno, &v) ? 0 : v;
}

/* The thread's context, Windows' layout: CONTEXT_AMD64 with registers in Windows' order
 * (rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi: not DWARF's), or CONTEXT_ARM64, whose x0-x30, sp,
 * pc are DWARF's order. A thread without registers gets the CPU's flag alone: nothing read. */
static uint32_t put_context(struct out *o, jitmap_arch arch, const jitmap_stopped_thread_info *th,
			    bool regs)
{
	if (arch == JITMAP_ARCH_AARCH64) {
		const uint32_t at = put(o, NULL, CONTEXT_ARM64);
		set(o, at, CONTEXT_ARM64_CPU | (regs ? 3u : 0u), 4);
		for (unsigned i = 0; regs && i <= 32; i++)
			set(o, at + 8 + 8 * i, reg(th, i), 8);
		return at;
	}
	static const struct { uint16_t off, regno; } gpr[] = {
		{120, 0}, {128, 2}, {136, 1}, {144, 3}, {152, 7}, {160, 6}, {168, 4}, {176, 5},
		{184, 8}, {192, 9}, {200, 10}, {208, 11}, {216, 12}, {224, 13}, {232, 14},
		{240, 15}, {248, 16},
	};
	static const struct { uint16_t off, regno; } seg[] = {
		{56, 51}, {58, 53}, {60, 50}, {62, 54}, {64, 55}, {66, 52}, /* cs ds es fs gs ss */
	};
	const uint32_t at = put(o, NULL, CONTEXT_AMD64);
	set(o, at + 48, CONTEXT_AMD64_CPU | (regs ? 7u : 0u), 4);
	if (!regs)
		return at;
	for (size_t i = 0; i < sizeof(gpr) / sizeof(gpr[0]); i++)
		set(o, at + gpr[i].off, reg(th, gpr[i].regno), 8);
	for (size_t i = 0; i < sizeof(seg) / sizeof(seg[0]); i++)
		set(o, at + seg[i].off, reg(th, seg[i].regno), 2);
	set(o, at + 68, reg(th, 49), 4); /* eflags */
	return at;
}

/* -- Modules (minidump_modules.c chooses them) -- */

static uint32_t put_module_list(struct out *o, const struct jitmap__md_modules *l)
{
	uint32_t *name = calloc(l->n + 1, sizeof(*name)), *cv = calloc(l->n + 1, sizeof(*cv));
	if (!name || !cv) {
		free(name);
		free(cv);
		o->rc = o->rc ? o->rc : -ENOMEM;
		return 0;
	}
	for (size_t i = 0; i < l->n; i++) {
		char *path = strndup(l->v[i].path, l->v[i].cut);
		name[i] = put_string(o, path ? path : l->v[i].path);
		free(path);
		if (l->v[i].id_len) {
			cv[i] = put(o, NULL, 4 + l->v[i].id_len);
			set(o, cv[i], CV_ELF, 4);
			if (!o->rc)
				memcpy(o->b + cv[i] + 4, l->v[i].id, l->v[i].id_len);
		}
	}
	const uint32_t at = put(o, NULL, 4 + MD_MODULE * l->n);
	set(o, at, l->n, 4);
	for (size_t i = 0; i < l->n; i++) {
		const size_t e = at + 4 + MD_MODULE * i;
		set(o, e, l->v[i].base, 8);
		set(o, e + 8, l->v[i].size, 4);
		set(o, e + 20, name[i], 4);
		if (l->v[i].id_len) {
			set(o, e + 76, 4 + l->v[i].id_len, 4);
			set(o, e + 80, cv[i], 4);
		}
	}
	free(name);
	free(cv);
	return at;
}

/* -- The process's areas: MemoryInfoList and LinuxMaps -- */

static uint32_t put_memory_info(struct out *o, const struct jitmap__md_area *a, size_t n)
{
	const uint32_t at = put(o, NULL, 16 + MD_MEMORY_INFO * n);
	set(o, at, 16, 4);
	set(o, at + 4, MD_MEMORY_INFO, 4);
	set(o, at + 8, n, 8);
	for (size_t i = 0; i < n; i++) {
		const size_t e = at + 16 + MD_MEMORY_INFO * i;
		set(o, e, a[i].lo, 8);
		set(o, e + 8, a[i].lo, 8);
		set(o, e + 16, jitmap__md_protection(a[i].flags), 4);
		set(o, e + 24, a[i].hi - a[i].lo, 8);
		set(o, e + 32, 0x1000, 4); /* MEM_COMMIT */
		set(o, e + 36, jitmap__md_protection(a[i].flags), 4);
		set(o, e + 40, a[i].image ? 0x1000000 : a[i].file ? 0x40000 : 0x20000, 4);
	}
	return at;
}

/* -- The Linux streams a live process has in /proc -- */

/* /proc/PID/NAME's bytes (at most MAX_PROC_FILE), or NULL. */
static char *proc_file(pid_t pid, const char *name, size_t *len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	const int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t n = 0, cap = 0;
	char *b = NULL;
	for (;;) {
		if (n == cap && (n >= MAX_PROC_FILE || jitmap__grow(&b, &cap, n + 4096, 1)))
			break;
		const ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (!n) {
		free(b);
		return NULL;
	}
	*len = n;
	return b;
}

/* The auxiliary vector as (a_type, a_val) pairs, AT_NULL last: each type Linux defines
 * (below 64) asked of the stopped process, which keeps the first of each. */
static uint32_t put_auxv(struct out *o, jitmap_stopped *s, uint32_t *size)
{
	uint64_t v[2 * 65];
	size_t n = 0;
	for (uint64_t type = 1; type < 64; type++)
		if (!jitmap_stopped_auxv(s, type, &v[2 * n + 1]))
			v[2 * n++] = type;
	if (!n)
		return 0;
	v[2 * n] = v[2 * n + 1] = 0;
	n++;
	const uint32_t at = put(o, NULL, 16 * n);
	for (size_t i = 0; i < 2 * n; i++)
		set(o, at + 8 * i, v[i], 8);
	*size = 16 * n;
	return at;
}

/* -- The whole dump -- */

struct dirent {
	uint32_t type, size, rva;
};

struct dump {
	jitmap_stopped *s;
	jitmap_arch arch;
	bool live;
	struct out o;
	struct dirent dir[MD_MAX_STREAMS];
	size_t ndir;
	struct thread *th;
	size_t nth;
	struct jitmap__md_mem mem;
	struct jitmap__md_modules mods;
	size_t dropped;
	struct jitmap__md_area *areas;
	size_t nareas;
	/* where the descriptors that point at memory are: patched once its place is known */
	uint32_t memory_list;
};

static void stream(struct dump *d, uint32_t type, uint32_t rva, size_t size)
{
	if (d->o.rc || d->ndir >= MD_MAX_STREAMS || size > UINT32_MAX)
		return;
	d->dir[d->ndir++] = (struct dirent){type, (uint32_t)size, rva};
}

/* Whether `tid` is in the sorted set `v` (n IDs); if not, it is added (room for it is the
 * caller's): a hostile core's million notes of a few thousand IDs cost a search each. */
static bool seen_before(uint32_t *v, size_t n, uint32_t tid)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;
		if (v[mid] == tid)
			return true;
		if (v[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(v + lo + 1, v + lo, (n - lo) * sizeof(*v));
	v[lo] = tid;
	return false;
}

/* The threads to list (a thread ID listed once: Breakpad refuses a list with two) and the
 * memory they point at: each stack, then the caller's ranges. */
static int plan(struct dump *d, const jitmap_minidump_opts *opts)
{
	const size_t n = jitmap_stopped_num_threads(d->s);
	const size_t most = n < MAX_THREADS ? n : MAX_THREADS;
	d->th = calloc(most ? most : 1, sizeof(*d->th));
	uint32_t *tids = calloc(most ? most : 1, sizeof(*tids));
	if (!d->th || !tids) {
		free(tids);
		return -ENOMEM;
	}
	const unsigned spreg = d->arch == JITMAP_ARCH_AARCH64 ? 31 : 7;
	uint64_t bytes = opts->stack_bytes ? opts->stack_bytes : DEFAULT_STACK;
	if (bytes > JITMAP__MD_MAX_REGION)
		bytes = JITMAP__MD_MAX_REGION;
	for (size_t i = 0; i < n && d->nth < MAX_THREADS; i++) {
		const jitmap_stopped_thread_info *ti = jitmap_stopped_thread(d->s, i);
		if (!ti)
			continue;
		if (seen_before(tids, d->nth, (uint32_t)ti->tid))
			continue;
		struct thread *t = &d->th[d->nth++];
		t->index = i;
		t->tid = (uint32_t)ti->tid;
		t->regs = !ti->error && !jitmap_stopped_thread_reg(ti, spreg, &t->sp);
	}
	free(tids);
	for (size_t k = 0; k < d->nth; k++)
		if (d->th[k].regs)
			d->th[k].stack = jitmap__md_stack(&d->mem, d->th[k].index, d->th[k].sp, bytes,
							  &d->th[k].stack_lo);
	for (size_t k = 0; k < opts->num_memory; k++)
		if (opts->memory[k].lo < opts->memory[k].hi)
			jitmap__md_range(&d->mem, opts->memory[k].lo, opts->memory[k].hi);
	return d->mem.rc;
}

static void put_threads(struct dump *d)
{
	struct out *o = &d->o;
	for (size_t k = 0; k < d->nth; k++)
		d->th[k].context = put_context(o, d->arch, jitmap_stopped_thread(d->s, d->th[k].index),
					       d->th[k].regs);
	const uint32_t csize = d->arch == JITMAP_ARCH_AARCH64 ? CONTEXT_ARM64 : CONTEXT_AMD64;
	const uint32_t at = put(o, NULL, 4 + MD_THREAD * d->nth);
	set(o, at, d->nth, 4);
	for (size_t k = 0; k < d->nth; k++) {
		const uint32_t e = at + 4 + MD_THREAD * (uint32_t)k;
		d->th[k].entry = e;
		set(o, e, d->th[k].tid, 4);
		if (d->th[k].stack) { /* its rva is patched with the memory's */
			const struct jitmap__md_region *r = jitmap__md_region_at(&d->mem,
										 d->th[k].stack_lo);
			set(o, e + 24, r ? r->lo : 0, 8);
			set(o, e + 32, r ? r->len : 0, 4);
		}
		set(o, e + 40, csize, 4);
		set(o, e + 44, d->th[k].context, 4);
	}
	stream(d, ST_THREAD_LIST, at, 4 + MD_THREAD * d->nth);
}

/* A core's crash: the first thread in note order whose signal is nonzero (the kernel writes
 * the thread that caused the dump first), with si_code and si_addr from its NT_SIGINFO
 * (Breakpad prints "SIGSEGV /SEGV_MAPERR" and the address). Its context is the thread's own. */
static void put_exception(struct dump *d)
{
	for (size_t k = 0; k < d->nth; k++) {
		const jitmap_stopped_thread_info *ti = jitmap_stopped_thread(d->s, d->th[k].index);
		if (!ti || ti->signal <= 0)
			continue;
		int signo = 0, code = 0;
		uint64_t addr = 0;
		if (jitmap_stopped_thread_siginfo(ti, &signo, &code, &addr) || signo != ti->signal)
			code = 0, addr = 0; /* none, or another signal's */
		const uint32_t at = put(&d->o, NULL, MD_EXCEPTION);
		set(&d->o, at, d->th[k].tid, 4);
		set(&d->o, at + 8, (uint32_t)ti->signal, 4);
		set(&d->o, at + 12, (uint32_t)code, 4);
		set(&d->o, at + 24, addr, 8);
		set(&d->o, at + 160,
		    d->arch == JITMAP_ARCH_AARCH64 ? CONTEXT_ARM64 : CONTEXT_AMD64, 4);
		set(&d->o, at + 164, d->th[k].context, 4);
		stream(d, ST_EXCEPTION, at, MD_EXCEPTION);
		return;
	}
}

/* SystemInfo: Linux, the CPU; a live process's kernel (uname's "sysname release version
 * machine", as Breakpad's writer puts it, and the release's numbers). A core does not say
 * which kernel wrote it: the writer's own would be a guess, so none. */
static void put_system_info(struct dump *d)
{
	struct out *o = &d->o;
	struct utsname u;
	char csd[4 * sizeof(u.release) + 4] = "";
	unsigned major = 0, minor = 0, build = 0;
	long cpus = 0;
	if (d->live && !uname(&u)) {
		snprintf(csd, sizeof(csd), "%s %s %s %s", u.sysname, u.release, u.version,
			 u.machine);
		sscanf(u.release, "%u.%u.%u", &major, &minor, &build);
		cpus = sysconf(_SC_NPROCESSORS_ONLN);
	}
	const uint32_t str = put_string(o, csd);
	const uint32_t at = put(o, NULL, MD_SYSTEM_INFO);
	set(o, at, d->arch == JITMAP_ARCH_AARCH64 ? ARCH_ARM64 : ARCH_AMD64, 2);
	set(o, at + 6, cpus > 0 && cpus < 256 ? (uint64_t)cpus : cpus > 0 ? 255 : 0, 1);
	set(o, at + 8, major, 4);
	set(o, at + 12, minor, 4);
	set(o, at + 16, build, 4);
	set(o, at + 20, PLATFORM_LINUX, 4);
	set(o, at + 24, str, 4);
#if defined(__x86_64__)
	/* A live x86-64 process runs on this CPU: its vendor, family, model and stepping, as
	 * Breakpad's writer reads them (/proc/cpuinfo there, CPUID here: the same numbers). */
	unsigned a, b, c, dx;
	if (d->live && d->arch == JITMAP_ARCH_X86_64 && __get_cpuid(0, &a, &b, &c, &dx)) {
		set(o, at + 32, b, 4); /* "Genu" "ineI" "ntel" */
		set(o, at + 36, dx, 4);
		set(o, at + 40, c, 4);
		if (__get_cpuid(1, &a, &b, &c, &dx)) {
			const unsigned base = a >> 8 & 0xf; /* extended fields count from 0xf */
			const unsigned family = base + (base == 0xf ? (a >> 20 & 0xff) : 0);
			const unsigned model = (a >> 4 & 0xf) | (a >> 12 & 0xf0);
			set(o, at + 2, family, 2);
			set(o, at + 4, model << 8 | (a & 0xf), 2);
			set(o, at + 44, a, 4);
			set(o, at + 48, dx, 4);
		}
	}
#endif
	stream(d, ST_SYSTEM_INFO, at, MD_SYSTEM_INFO);
}

static void put_misc(struct dump *d)
{
	const uint32_t at = put(&d->o, NULL, MD_MISC_INFO);
	set(&d->o, at, MD_MISC_INFO, 4);
	set(&d->o, at + 4, 1, 4); /* MD_MISCINFO_FLAGS1_PROCESS_ID */
	set(&d->o, at + 8, (uint32_t)jitmap_stopped_pid(d->s), 4);
	stream(d, ST_MISC_INFO, at, MD_MISC_INFO);
}

/* ThreadNameList: a live process's thread names (a core holds none). */
static void put_thread_names(struct dump *d)
{
	uint32_t *str = calloc(d->nth ? d->nth : 1, sizeof(*str));
	if (!str) {
		d->o.rc = d->o.rc ? d->o.rc : -ENOMEM;
		return;
	}
	size_t n = 0;
	for (size_t k = 0; k < d->nth; k++) {
		const jitmap_stopped_thread_info *ti = jitmap_stopped_thread(d->s, d->th[k].index);
		str[k] = ti && ti->name && *ti->name ? put_string(&d->o, ti->name) : 0;
		n += str[k] != 0;
	}
	if (n) { /* entries of 12 bytes, packed: the RVA64 at 4 */
		const uint32_t at = put(&d->o, NULL, 4 + 12 * n);
		set(&d->o, at, n, 4);
		for (size_t k = 0, e = at + 4; k < d->nth; k++) {
			if (!str[k])
				continue;
			set(&d->o, e, d->th[k].tid, 4);
			set(&d->o, e + 4, str[k], 8);
			e += 12;
		}
		stream(d, ST_THREAD_NAME_LIST, at, 4 + 12 * n);
	}
	free(str);
}

static void put_raw(struct dump *d, uint32_t type, const void *p, size_t len)
{
	if (p && len) {
		const uint32_t at = put(&d->o, p, len);
		stream(d, type, at, len);
	}
}

static void put_linux(struct dump *d)
{
	uint32_t size = 0;
	const uint32_t auxv = put_auxv(&d->o, d->s, &size);
	if (auxv)
		stream(d, ST_LINUX_AUXV, auxv, size);
	size_t len = 0;
	char *maps = jitmap__md_maps_text(d->areas, d->nareas, &len);
	put_raw(d, ST_LINUX_MAPS, maps, len);
	free(maps);
	if (!d->live) { /* NT_PRPSINFO's: the arguments joined by spaces, as one */
		const char *args = jitmap_stopped_args(d->s);
		put_raw(d, ST_LINUX_CMD_LINE, args, args && *args ? strlen(args) + 1 : 0);
		return;
	}
	const pid_t pid = jitmap_stopped_pid(d->s);
	char *b = proc_file(pid, "cmdline", &len);
	put_raw(d, ST_LINUX_CMD_LINE, b, len);
	free(b);
	b = proc_file(pid, "status", &len);
	put_raw(d, ST_LINUX_PROC_STATUS, b, len);
	free(b);
}

/* The MemoryList, then every descriptor of memory patched with where its bytes will be:
 * after the buffer, in the regions' order. */
static uint64_t put_memory(struct dump *d)
{
	struct out *o = &d->o;
	const uint32_t at = put(o, NULL, 4 + MD_MEMORY_DESC * d->mem.n);
	set(o, at, d->mem.n, 4);
	stream(d, ST_MEMORY_LIST, at, 4 + MD_MEMORY_DESC * d->mem.n);
	const uint64_t base = jitmap__align8(o->len);
	uint64_t rva = base;
	for (size_t i = 0; i < d->mem.n; i++) {
		const size_t e = at + 4 + MD_MEMORY_DESC * i;
		set(o, e, d->mem.v[i].lo, 8);
		set(o, e + 8, d->mem.v[i].len, 4);
		set(o, e + 12, rva, 4);
		for (size_t k = 0; k < d->nth; k++)
			if (d->th[k].stack && d->th[k].stack_lo == d->mem.v[i].lo)
				set(o, d->th[k].entry + 36, rva, 4);
		rva += d->mem.v[i].len;
	}
	return base;
}

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n) {
		const ssize_t w = write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The arguments checked; `o` the caller's options as this library knows them (zeros past the
 * caller's sz, whose fields are never read). 0, or -EINVAL / -ENOTSUP with `err` filled. */
static int check(jitmap_stopped *s, int fd, const jitmap_minidump_opts *opts,
		 const jitmap_minidump_info *info, jitmap_minidump_opts *o, jitmap_error *err)
{
	*o = (jitmap_minidump_opts){.sz = sizeof(*o)};
	if (!s || fd < 0)
		return jitmap__fail(err, -EINVAL, 0, "%s", !s ? "no stopped process" :
				    "no file descriptor to write to");
	if (opts && (opts->sz < sizeof(opts->sz) || !JITMAP__OPTS_VALID(opts, stack_bytes)))
		return jitmap__fail(err, -EINVAL, 0, "jitmap_minidump_opts has sz %zu or fields "
				    "this library does not know", opts->sz);
	if (opts) {
		memcpy(o, opts, opts->sz < sizeof(*o) ? opts->sz : sizeof(*o));
		o->sz = sizeof(*o);
	}
	if ((o->num_jit_modules && !o->jit_modules) || (o->num_memory && !o->memory))
		return jitmap__fail(err, -EINVAL, 0, "jitmap_minidump_opts counts an array it "
				    "does not give");
	if (info && info->sz < sizeof(info->sz))
		return jitmap__fail(err, -EINVAL, 0, "jitmap_minidump_info.sz is %zu", info->sz);
	const jitmap_arch arch = jitmap_stopped_arch(s);
	if (arch != JITMAP_ARCH_X86_64 && arch != JITMAP_ARCH_AARCH64)
		return jitmap__fail(err, -ENOTSUP, 0, "minidumps are written for x86-64 and "
				    "AArch64 processes only (this is ELF machine %u)",
				    jitmap_stopped_elf_machine(s));
	if (jitmap_stopped_byte_order(s) != JITMAP_ORDER_LITTLE)
		return jitmap__fail(err, -ENOTSUP, 0, "minidumps are little-endian: this process "
				    "is big-endian");
	return 0;
}

int jitmap_minidump_write(jitmap_stopped *s, int fd, const jitmap_minidump_opts *opts,
			  jitmap_minidump_info *info, jitmap_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	jitmap_minidump_opts o;
	int rc = check(s, fd, opts, info, &o, err);
	if (rc)
		return rc;
	struct dump d = {.s = s, .arch = jitmap_stopped_arch(s),
			 .live = jitmap_stopped_kind_of(s) == JITMAP_STOPPED_LIVE,
			 .mem = {.s = s, .budget = MEMORY_BUDGET}};
	rc = plan(&d, &o);
	if (!rc)
		rc = jitmap__md_modules(s, &o, &d.mods, &d.dropped);
	if (!rc)
		rc = jitmap__md_areas(s, MAX_AREAS, &d.areas, &d.nareas);
	uint64_t base = 0, total = 0;
	if (!rc) {
		put(&d.o, NULL, MD_HEADER + MD_DIRENT * MD_MAX_STREAMS);
		put_threads(&d);
		stream(&d, ST_MODULE_LIST, put_module_list(&d.o, &d.mods), 4 + MD_MODULE * d.mods.n);
		if (!d.live)
			put_exception(&d);
		put_system_info(&d);
		put_misc(&d);
		const uint32_t mi = put_memory_info(&d.o, d.areas, d.nareas);
		stream(&d, ST_MEMORY_INFO_LIST, mi, 16 + MD_MEMORY_INFO * d.nareas);
		if (d.live)
			put_thread_names(&d);
		put_linux(&d);
		base = put_memory(&d); /* last: the buffer's size is then known */
		rc = d.o.rc;
	}
	if (!rc) {
		struct out *b = &d.o;
		set(b, 0, MD_SIGNATURE, 4);
		set(b, 4, MD_VERSION, 4);
		set(b, 8, d.ndir, 4);
		set(b, 12, MD_HEADER, 4);
		set(b, 20, (uint64_t)time(NULL), 4);
		for (size_t i = 0; i < d.ndir; i++) {
			set(b, MD_HEADER + MD_DIRENT * i, d.dir[i].type, 4);
			set(b, MD_HEADER + MD_DIRENT * i + 4, d.dir[i].size, 4);
			set(b, MD_HEADER + MD_DIRENT * i + 8, d.dir[i].rva, 4);
		}
		static const uint8_t pad[8];
		rc = write_all(fd, b->b, b->len);
		if (!rc)
			rc = write_all(fd, pad, base - b->len);
		total = base;
		for (size_t i = 0; !rc && i < d.mem.n; i++) {
			rc = write_all(fd, d.mem.v[i].bytes, d.mem.v[i].len);
			total += d.mem.v[i].len;
		}
		if (rc)
			jitmap__fail(err, rc, total, "cannot write the dump: %s", strerror(-rc));
	} else if (rc == -EFBIG) {
		jitmap__fail(err, rc, 0, "the minidump's streams would pass %" PRIu64 " bytes "
			     "before its memory", MAX_OUT);
	} else {
		jitmap__fail(err, rc, 0, "out of memory");
	}
	if (!rc && info) {
		jitmap_minidump_info full = {
			.sz = sizeof(full), .num_threads = d.nth, .num_modules = d.mods.n,
			.num_memory = d.mem.n, .dropped_modules = d.dropped, .bytes = total,
		};
		jitmap__give(info, &full, sizeof(full));
	}
	free(d.o.b);
	free(d.th);
	free(d.mods.v);
	free(d.areas);
	jitmap__md_mem_free(&d.mem);
	return rc;
}
