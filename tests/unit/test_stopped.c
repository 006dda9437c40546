/* test_stopped.c: jitmap_stopped (jitmap/stopped.h), one face for a core or a live process.
 *
 * Each kind is read twice, through two handles, and must be the same: the same threads (IDs,
 * signals, names), the same registers (every DWARF number, and frame registers equal to those
 * a reader rebuilds from a core's registers by hand, as jitmap-stack did), the same memory
 * and the same words where something cannot be read; what only the other kind has answers
 * "none". Checked on synthetic cores
 * of three architectures and both byte orders (core_builder), with a sysroot and
 * JITMAP_STOPPED_NO_FILES, on cores whose threads have no PC, on a real core the kernel
 * writes for a child of this test (two threads), and on a live child (a main thread and two
 * named workers, group-stopped so that two opens see the same registers), read through
 * two opens of jitmap_stopped_open_pid, and read without stopping. Then bad input: each
 * opener's failures in the same words twice, bad options, NULL and out-of-range arguments.
 */
#define _GNU_SOURCE
#include "unit.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core_builder.h"
#include "jitmap/core.h"
#include "jitmap/live.h"
#include "jitmap/stopped.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

#define MAX_REGNO 200 /* DWARF numbers asked of every thread (s390x's reach 65) */
#define MAX_THREADS 8

/* -- What a thread is, through any of the three APIs -- */

struct thread_snap {
	pid_t tid;
	char name[64];
	int signal;
	bool has_regs;
	jitmap_frame_regs regs;
	int rc[MAX_REGNO];
	uint64_t value[MAX_REGNO];
	uint8_t stack[64]; /* at the stack pointer, when it reads */
	int stack_rc;
};

struct snap {
	jitmap_arch arch;
	jitmap_byte_order order;
	size_t n;
	struct thread_snap t[MAX_THREADS];
	char warnings[8][256];
	size_t nwarnings;
};

static void read_stack(const jitmap_target *tt, jitmap_arch arch, struct thread_snap *ts)
{
	const int sp = jitmap_reg_sp(arch);
	char why[256];
	ts->stack_rc = -ENOENT;
	if (sp >= 0 && sp < MAX_REGNO && ts->rc[sp] == 0)
		ts->stack_rc = tt->read_mem(tt->ctx, ts->value[sp], ts->stack, sizeof(ts->stack), why,
					    sizeof(why));
}

static void snap_stopped(jitmap_stopped *s, struct snap *out)
{
	memset(out, 0, sizeof(*out));
	out->arch = jitmap_stopped_arch(s);
	out->order = jitmap_stopped_byte_order(s);
	out->n = jitmap_stopped_num_threads(s);
	assert_true(out->n <= MAX_THREADS);
	assert_null(jitmap_stopped_thread(s, out->n));
	for (size_t i = 0; i < out->n; i++) {
		const jitmap_stopped_thread_info *t = jitmap_stopped_thread(s, i);
		struct thread_snap *ts = &out->t[i];
		ts->tid = t->tid;
		snprintf(ts->name, sizeof(ts->name), "%s", t->name);
		ts->signal = t->signal;
		ts->has_regs = t->regs != NULL;
		assert_int_equal(t->error == 0, t->regs != NULL);
		assert_int_equal(t->error == 0, t->why[0] == 0);
		if (t->regs)
			ts->regs = *t->regs;
		for (unsigned r = 0; r < MAX_REGNO; r++)
			ts->rc[r] = jitmap_stopped_thread_reg(t, r, &ts->value[r]);
		const jitmap_target tt = jitmap_stopped_thread_target(s, i);
		read_stack(&tt, out->arch, ts);
	}
	for (; jitmap_stopped_warning(s, out->nwarnings) && out->nwarnings < 8; out->nwarnings++)
		snprintf(out->warnings[out->nwarnings], 256, "%s",
			 jitmap_stopped_warning(s, out->nwarnings));
}

/* A core thread's frame registers rebuilt from its registers by hand (what jitmap-stack did
 * before the library gave them): the PC, then every register an unwinder tracks. */
static bool rebuild_regs(const jitmap_stopped_thread_info *t, jitmap_arch arch, jitmap_frame_regs *r)
{
	const int pc = jitmap_reg_pc(arch);
	uint64_t v;
	memset(r, 0, sizeof(*r));
	if (pc < 0 || jitmap_stopped_thread_reg(t, (unsigned)pc, &v))
		return false;
	r->pc = v;
	for (unsigned k = 0; k < jitmap_arch_num_core_regs(arch) && k < JITMAP_UNWIND_MAX_REGS; k++)
		if ((int)k != pc && jitmap_stopped_thread_reg(t, k, &v) == 0)
			jitmap_frame_reg_set(r, k, v);
	return true;
}

static void snap_core(jitmap_stopped *c, struct snap *out)
{
	memset(out, 0, sizeof(*out));
	out->arch = jitmap_stopped_arch(c);
	out->order = jitmap_stopped_byte_order(c);
	out->n = jitmap_stopped_num_threads(c);
	assert_true(out->n <= MAX_THREADS);
	for (size_t i = 0; i < out->n; i++) {
		const jitmap_stopped_thread_info *t = jitmap_stopped_thread(c, i);
		struct thread_snap *ts = &out->t[i];
		ts->tid = (pid_t)t->tid;
		ts->signal = t->signal;
		ts->has_regs = rebuild_regs(t, out->arch, &ts->regs);
		/* every register from the thread's list (gregs), sorted by DWARF number: the
		 * answers of jitmap_stopped_thread_reg in the other snapshot */
		for (unsigned r = 0; r < MAX_REGNO; r++)
			ts->rc[r] = -ENOENT;
		for (size_t k = 0; k < t->num_gregs; k++) {
			if (k)
				assert_true(t->gregs[k - 1].regno < t->gregs[k].regno);
			if (t->gregs[k].regno < MAX_REGNO) {
				ts->rc[t->gregs[k].regno] = 0;
				ts->value[t->gregs[k].regno] = t->gregs[k].value;
			}
		}
		const jitmap_target tt = jitmap_stopped_thread_target(c, i);
		read_stack(&tt, out->arch, ts);
	}
	for (; jitmap_stopped_warning(c, out->nwarnings) && out->nwarnings < 8; out->nwarnings++)
		snprintf(out->warnings[out->nwarnings], 256, "%s",
			 jitmap_stopped_warning(c, out->nwarnings));
}

static void snap_live(jitmap_stopped *l, struct snap *out)
{
	memset(out, 0, sizeof(*out));
	out->arch = jitmap_stopped_arch(l);
	out->order = jitmap_stopped_byte_order(l);
	out->n = jitmap_stopped_num_threads(l);
	assert_true(out->n <= MAX_THREADS);
	for (size_t i = 0; i < out->n; i++) {
		const jitmap_stopped_thread_info *t = jitmap_stopped_thread(l, i);
		struct thread_snap *ts = &out->t[i];
		ts->tid = t->tid;
		snprintf(ts->name, sizeof(ts->name), "%s", t->name);
		ts->signal = t->signal;
		ts->has_regs = t->regs != NULL;
		if (t->regs)
			ts->regs = *t->regs;
		for (unsigned r = 0; r < MAX_REGNO; r++)
			ts->rc[r] = jitmap_stopped_thread_reg(t, r, &ts->value[r]);
		const jitmap_target tt = jitmap_stopped_thread_target(l, i);
		read_stack(&tt, out->arch, ts);
	}
	for (; jitmap_stopped_warning(l, out->nwarnings) && out->nwarnings < 8; out->nwarnings++)
		snprintf(out->warnings[out->nwarnings], 256, "%s",
			 jitmap_stopped_warning(l, out->nwarnings));
}

static void assert_same_snap(const struct snap *a, const struct snap *b)
{
	assert_int_equal(a->arch, b->arch);
	assert_int_equal(a->order, b->order);
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct thread_snap *x = &a->t[i], *y = &b->t[i];
		assert_int_equal(x->tid, y->tid);
		assert_string_equal(x->name, y->name);
		assert_int_equal(x->signal, y->signal);
		assert_int_equal(x->has_regs, y->has_regs);
		assert_memory_equal(&x->regs, &y->regs, sizeof(x->regs));
		for (unsigned r = 0; r < MAX_REGNO; r++) {
			assert_int_equal(x->rc[r], y->rc[r]);
			if (!x->rc[r])
				assert_int_equal(x->value[r], y->value[r]);
		}
		assert_int_equal(x->stack_rc, y->stack_rc);
		if (!x->stack_rc)
			assert_memory_equal(x->stack, y->stack, sizeof(x->stack));
	}
	assert_int_equal(a->nwarnings, b->nwarnings);
	for (size_t i = 0; i < a->nwarnings; i++)
		assert_string_equal(a->warnings[i], b->warnings[i]);
}

/* Two targets read alike: the same result, bytes and words for each register (sizes 8, 4 and
 * the 9 no register has) and for `len` bytes at each of `addrs`. */
static void assert_same_target(const jitmap_target *a, const jitmap_target *b,
			       const uint64_t *addrs, size_t naddrs, size_t len)
{
	static uint8_t ba[16384], bb[16384];
	char wa[256], wb[256];
	assert_true(len <= sizeof(ba));
	assert_int_equal(a->read_reg == NULL, b->read_reg == NULL);
	for (unsigned r = 0; a->read_reg && r < 80; r++) {
		const size_t sizes[] = {8, 4, 9};
		for (size_t k = 0; k < ARRAY_LEN(sizes); k++) {
			wa[0] = wb[0] = 0;
			memset(ba, 0, 16);
			memset(bb, 0, 16);
			const int ra = a->read_reg(a->ctx, r, ba, sizes[k], wa, sizeof(wa));
			const int rb = b->read_reg(b->ctx, r, bb, sizes[k], wb, sizeof(wb));
			assert_int_equal(ra, rb);
			if (ra)
				assert_string_equal(wa, wb);
			else
				assert_memory_equal(ba, bb, sizes[k]);
		}
	}
	for (size_t i = 0; i < naddrs; i++) {
		wa[0] = wb[0] = 0;
		const int ra = a->read_mem(a->ctx, addrs[i], ba, len, wa, sizeof(wa));
		const int rb = b->read_mem(b->ctx, addrs[i], bb, len, wb, sizeof(wb));
		assert_int_equal(ra, rb);
		if (ra)
			assert_string_equal(wa, wb);
		else
			assert_memory_equal(ba, bb, len);
	}
}

/* -- Synthetic cores -- */

#define SEG_A UINT64_C(0x10000)   /* 0x1000 bytes, all dumped */
#define SEG_B UINT64_C(0x11000)   /* 0x1000 bytes, the first 0x800 dumped */
#define MAP_LIB UINT64_C(0x11000) /* NT_FILE: [0x11000, 0x13000) from /lib.bin at 0 */
#define TID 4242

static uint8_t seg_a[0x1000], seg_b[0x800], lib_bytes[0x2000];

/* pr_reg for `machine` as the kernel lays it out, each slot's value 0x1000 + its index;
 * returns its size. */
static size_t make_regs(const core_builder *b, uint8_t *r)
{
	size_t k;
	switch (b->machine) {
	case EM_X86_64: /* 27 slots of user_regs_struct */
		for (k = 0; k < 27; k++)
			cb_put(b, r + 8 * k, 0x1000 + k, 8);
		return 27 * 8;
	case EM_AARCH64: /* regs[31], sp, pc, pstate */
		for (k = 0; k < 34; k++)
			cb_put(b, r + 8 * k, 0x1000 + k, 8);
		return 34 * 8;
	case EM_S390: /* psw mask, psw addr, gprs[16], acrs[16] of 4 bytes, orig_gpr2 */
		for (k = 0; k < 18; k++)
			cb_put(b, r + 8 * k, 0x1000 + k, 8);
		for (k = 0; k < 16; k++)
			cb_put(b, r + 144 + 4 * k, 0xa0 + k, 4);
		cb_put(b, r + 208, 0xdead, 8);
		return 216;
	default: /* a machine jitmap has no layout for: some bytes all the same */
		memset(r, 0x5a, 64);
		return 64;
	}
}

/* A core of `machine` with two threads (the first stopped by SIGSEGV) whose pr_reg is
 * `reg_len` bytes of make_regs (0: all of it), segments A and B, and /lib.bin mapped over B,
 * written to `path`. */
static void write_core(const char *path, unsigned machine, jitmap_byte_order order,
		       size_t reg_len)
{
	core_builder *b = calloc(1, sizeof(*b));
	assert_non_null(b);
	cb_init(b, machine, order);
	for (size_t i = 0; i < sizeof(seg_a); i++)
		seg_a[i] = (uint8_t)(i * 7 + 1);
	for (size_t i = 0; i < sizeof(seg_b); i++)
		seg_b[i] = (uint8_t)(i * 3 + 5);
	uint8_t regs[512];
	size_t n = make_regs(b, regs);
	if (reg_len && reg_len < n)
		n = reg_len;
	cb_prstatus(b, TID, SIGSEGV, regs, n);
	cb_prstatus(b, TID + 1, 0, regs, n);
	const uint64_t maps[][3] = {{MAP_LIB, MAP_LIB + 0x2000, 0}};
	const char *const paths[] = {"/lib.bin"};
	cb_file(b, 0x1000, 1, maps, paths);
	cb_load(b, SEG_A, 0x1000, seg_a, sizeof(seg_a));
	cb_load(b, SEG_B, 0x1000, seg_b, sizeof(seg_b));
	size_t len;
	uint8_t *bytes = cb_emit(b, &len);
	assert_non_null(bytes);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(bytes, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	free(bytes);
	free(b);
}

/* The core at `path` through two jitmap_stopped_open_core with the same
 * options: the same in every way, and a core's own answers where a process's would differ. */
static void check_core_file(const char *path, const char *sysroot, bool no_files)
{
	jitmap_error err;
	JITMAP_OPTS(const jitmap_stopped_opts, co, .sysroot = sysroot,
		    .flags = no_files ? JITMAP_STOPPED_NO_FILES : 0);
	JITMAP_OPTS(const jitmap_stopped_opts, so, .sysroot = sysroot,
		    .flags = no_files ? JITMAP_STOPPED_NO_FILES : 0);
	jitmap_stopped *c = jitmap_stopped_open_core(path, &co, &err);
	if (!c)
		fail_msg("%s: %s", path, err.reason);
	jitmap_stopped *s = jitmap_stopped_open_core(path, &so, &err);
	if (!s)
		fail_msg("%s: %s", path, err.reason);
	assert_int_equal(jitmap_stopped_kind_of(s), JITMAP_STOPPED_CORE);
	/* What only a core has, asked of the one handle; what only a process has, a core's
	 * "none". */
	assert_non_null(jitmap_stopped_elf(s));
	assert_null(jitmap_stopped_elf(NULL));
	assert_null(jitmap_stopped_compression(s));
	assert_true(jitmap_stopped_is_stopped(s));
	/* NT_PRPSINFO's pr_fname: none in the synthetic cores, this program's in its real one
	 * (a fork of it). */
	const char *name = jitmap_stopped_name(s);
	if (strcmp(name, ""))
		assert_string_equal(name, program_invocation_short_name);

	struct snap a, b;
	snap_core(c, &a);
	snap_stopped(s, &b);
	assert_same_snap(&a, &b);
	/* The first thread's ID stands for the process's. */
	assert_int_equal(jitmap_stopped_pid(s), a.n ? a.t[0].tid : 0);
	for (size_t i = 0; i < a.n; i++) {
		const jitmap_stopped_thread_info *t = jitmap_stopped_thread(s, i);
		assert_string_equal(t->name, "");
		if (!t->regs) {
			assert_true(t->error == -ENOTSUP || t->error == -ENODATA);
			assert_string_equal(t->why, "the core holds no registers for it");
		}
	}

	/* Memory: segments, a file's bytes under the sysroot (or not, and why), nothing. */
	const uint64_t addrs[] = {SEG_A, SEG_A + 0xff8, SEG_B + 0x7fc, SEG_B + 0x900,
				  MAP_LIB + 0x1800, 0x50000, 8};
	const jitmap_target ta = jitmap_stopped_target(c), tb = jitmap_stopped_target(s);
	assert_same_target(&ta, &tb, addrs, ARRAY_LEN(addrs), 16);
	for (size_t i = 0; i <= a.n; i++) {
		const jitmap_target x = jitmap_stopped_thread_target(c, i);
		const jitmap_target y = jitmap_stopped_thread_target(s, i);
		if (i == a.n) {
			assert_null(y.read_mem);
			assert_null(y.read_reg);
			continue;
		}
		assert_same_target(&x, &y, addrs, ARRAY_LEN(addrs), 16);
	}
	for (size_t i = 0; i < ARRAY_LEN(addrs); i++) {
		char wa[256] = "", wb[256] = "";
		assert_int_equal(jitmap_stopped_code_at(c, addrs[i], wa, sizeof(wa)),
				 jitmap_stopped_code_at(s, addrs[i], wb, sizeof(wb)));
		assert_string_equal(wa, wb);
		uint8_t ia[64], ib[64];
		const size_t na = jitmap_stopped_build_id_at(c, addrs[i], ia, sizeof(ia));
		assert_int_equal(na, jitmap_stopped_build_id_at(s, addrs[i], ib, sizeof(ib)));
		assert_memory_equal(ia, ib, na);
	}
	/* Nothing to let go. */
	assert_int_equal(jitmap_stopped_detach(s), 0);
	assert_int_equal(jitmap_stopped_num_threads(s), a.n);
	jitmap_stopped_free(s);
	jitmap_stopped_free(c);
}

static void test_synthetic_cores(void **state)
{
	(void)state;
	static const struct {
		unsigned machine;
		jitmap_byte_order order;
		jitmap_arch arch;
	} arches[] = {
		{EM_X86_64, JITMAP_ORDER_LITTLE, JITMAP_ARCH_X86_64},
		{EM_AARCH64, JITMAP_ORDER_LITTLE, JITMAP_ARCH_AARCH64},
		{EM_S390, JITMAP_ORDER_BIG, JITMAP_ARCH_S390X},
	};
	char dir[] = "/tmp/jitmap-test-stopped.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256], lib[256];
	snprintf(path, sizeof(path), "%s/core", dir);
	snprintf(lib, sizeof(lib), "%s/lib.bin", dir);
	for (size_t i = 0; i < sizeof(lib_bytes); i++)
		lib_bytes[i] = (uint8_t)(i ^ 0x5a);
	FILE *f = fopen(lib, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(lib_bytes, 1, sizeof(lib_bytes), f), sizeof(lib_bytes));
	assert_int_equal(fclose(f), 0);

	for (size_t k = 0; k < ARRAY_LEN(arches); k++) {
		write_core(path, arches[k].machine, arches[k].order, 0);
		check_core_file(path, NULL, false);
		check_core_file(path, dir, false);
		check_core_file(path, dir, true);

		jitmap_stopped *s = jitmap_stopped_open_core(path, NULL, NULL);
		assert_non_null(s);
		assert_int_equal(jitmap_stopped_arch(s), arches[k].arch);
		assert_int_equal(jitmap_stopped_byte_order(s), arches[k].order);
		assert_int_equal(jitmap_stopped_pid(s), TID);
		assert_int_equal(jitmap_stopped_num_threads(s), 2);
		const jitmap_stopped_thread_info *t = jitmap_stopped_thread(s, 0);
		assert_int_equal(t->tid, TID);
		assert_int_equal(t->signal, SIGSEGV);
		assert_int_equal(t->error, 0);
		assert_non_null(t->regs);
		assert_int_equal(jitmap_stopped_thread(s, 1)->signal, 0);
		/* The stack pointer, through the frame registers and by number alike. */
		uint64_t v;
		const int sp = jitmap_reg_sp(arches[k].arch);
		assert_int_equal(jitmap_stopped_thread_reg(t, (unsigned)sp, &v), 0);
		assert_true(jitmap_frame_reg_known(t->regs, (unsigned)sp));
		assert_int_equal(t->regs->reg[sp], v);
		const uint64_t sp_value = v;
		/* Flags and segment registers are not the unwinder's, but are the thread's. */
		if (arches[k].arch == JITMAP_ARCH_X86_64) {
			assert_int_equal(jitmap_stopped_thread_reg(t, 49, &v), 0);
			assert_int_equal(v, 0x1000 + 18);
			assert_false(jitmap_frame_reg_known(t->regs, 49));
		}
		assert_int_equal(jitmap_stopped_thread_reg(t, 9999, &v), -ENOENT);
		/* A thread target reads them in the core's byte order, and says what is missing in
		 * a core's words. */
		const jitmap_target tt = jitmap_stopped_thread_target(s, 0);
		uint8_t b8[8];
		char why[256];
		assert_int_equal(tt.read_reg(tt.ctx, (unsigned)sp, b8, 8, why, sizeof(why)), 0);
		uint64_t back = 0;
		for (int i = 0; i < 8; i++)
			back |= (uint64_t)b8[arches[k].order == JITMAP_ORDER_BIG ? 7 - i : i] << (8 * i);
		assert_int_equal(back, sp_value);
		assert_int_equal(tt.read_reg(tt.ctx, 9999, b8, 8, why, sizeof(why)), -ENOENT);
		assert_string_equal(why, "the core holds no register 9999 for thread 4242");
		/* The ELF handle is the core's own, ready for a reader that takes one. */
		Elf *elf = jitmap_stopped_elf(s);
		GElf_Ehdr eh;
		assert_non_null(gelf_getehdr(elf, &eh));
		assert_int_equal(eh.e_type, ET_CORE);
		jitmap_stopped_free(s);
	}

	/* No PC: pr_reg cut before it (x86-64's rip is at 128), and a machine jitmap reads no
	 * registers of. The core's registers that are there still read, by number. */
	write_core(path, EM_X86_64, JITMAP_ORDER_LITTLE, 120);
	check_core_file(path, NULL, false);
	jitmap_stopped *s = jitmap_stopped_open_core(path, NULL, NULL);
	assert_non_null(s);
	const jitmap_stopped_thread_info *t = jitmap_stopped_thread(s, 0);
	assert_int_equal(t->error, -ENODATA);
	assert_null(t->regs);
	uint64_t v;
	assert_int_equal(jitmap_stopped_thread_reg(t, 15, &v), 0); /* r15, pr_reg's first */
	assert_int_equal(v, 0x1000);
	jitmap_stopped_free(s);
	write_core(path, EM_SPARCV9, JITMAP_ORDER_BIG, 0);
	check_core_file(path, NULL, false);
	s = jitmap_stopped_open_core(path, NULL, NULL);
	assert_non_null(s);
	assert_int_equal(jitmap_stopped_arch(s), JITMAP_ARCH_UNKNOWN);
	assert_int_equal(jitmap_stopped_thread(s, 1)->error, -ENOTSUP);
	assert_null(jitmap_stopped_thread(s, 1)->regs);
	jitmap_stopped_free(s);

	unlink(path);
	unlink(lib);
	rmdir(dir);
}

/* -- A real core, from the kernel: a child with a second thread, aborted -- */

static void *blocked_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* The child: aborted while a second thread waits. */
static void crash_by_abort(void *arg)
{
	(void)arg;
	pthread_t th;
	if (pthread_create(&th, NULL, blocked_thread, NULL))
		_exit(3);
	signal(SIGABRT, SIG_DFL);
	abort();
}

/* A core of a child of this test in `dir`, or NULL (cores go elsewhere here: skipped). */
static char *make_real_core(const char *dir)
{
	return cb_kernel_core(dir, crash_by_abort, NULL, NULL);
}

/* -- Modules -- */

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

/* The object dl_iterate_phdr says holds an address: its load bias (dlpi_addr) and name. */
struct holder {
	uint64_t addr, bias;
	const char *name;
	bool found;
};

static int find_holder(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct holder *h = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && h->addr >= info->dlpi_addr + ph->p_vaddr &&
		    h->addr - (info->dlpi_addr + ph->p_vaddr) < ph->p_filesz) {
			h->bias = info->dlpi_addr;
			h->name = info->dlpi_name;
			h->found = true;
			return 1;
		}
	}
	return 0;
}

/* jitmap_stopped_module_at in a child forked from this process (its mappings are ours): a
 * function of this program and one of the C library are in their files, at the load biases
 * the dynamic linker reports; an anonymous page is in no module, with its name. */
static void check_modules(jitmap_stopped *s, const void *anon, bool anon_named)
{
	const uint64_t fns[] = {(uint64_t)(uintptr_t)&check_modules,
				(uint64_t)(uintptr_t)&getpid};
	for (size_t i = 0; i < ARRAY_LEN(fns); i++) {
		struct holder h = {.addr = fns[i]};
		dl_iterate_phdr(find_holder, &h);
		assert_true(h.found);
		jitmap_stopped_module_info mi = {.sz = sizeof(mi)};
		assert_int_equal(jitmap_stopped_module_at(s, fns[i], &mi), 1);
		assert_true(mi.file);
		assert_non_null(mi.name);
		assert_true(mi.start <= fns[i] && fns[i] < mi.end);
		assert_int_equal(mi.bias, h.bias);
		if (h.name && h.name[0]) /* the main program's is "" */
			assert_string_equal(strrchr(mi.name, '/'), strrchr(h.name, '/'));
	}
	jitmap_stopped_module_info mi = {.sz = sizeof(mi)};
	assert_int_equal(jitmap_stopped_module_at(s, (uint64_t)(uintptr_t)anon + 8, &mi), 0);
	assert_false(mi.file);
	assert_int_equal(mi.bias, 0);
	/* The kernel merges an anonymous mapping with a neighbour of the same permissions (ASan's
	 * shadow and allocations are such neighbours): the mapping holds the page, and may start
	 * before it. */
	assert_true(mi.start <= (uint64_t)(uintptr_t)anon &&
		    (uint64_t)(uintptr_t)anon + 8 < mi.end);
	if (anon_named)
		assert_string_equal(mi.name, "[anon:jitmap-test]");
	assert_int_equal(jitmap_stopped_module_at(s, 8, &mi), -ENOENT);
	mi.sz = sizeof(mi.sz);
	assert_int_equal(jitmap_stopped_module_at(s, fns[0], &mi), -EINVAL);
}

static void test_real_core(void **state)
{
	(void)state;
	char dir[] = "/tmp/jitmap-test-stopped.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char *core = make_real_core(dir);
	if (!core) {
		rmdir(dir);
		skip();
	}
	check_core_file(core, NULL, false);
	jitmap_stopped *s = jitmap_stopped_open_core(core, NULL, NULL);
	assert_non_null(s);
	jitmap_byte_order order;
	assert_int_equal(jitmap_stopped_arch(s), jitmap_arch_host(&order));
	assert_int_equal(jitmap_stopped_num_threads(s), 2);
	const jitmap_stopped_thread_info *t = jitmap_stopped_thread(s, 0);
	assert_int_equal(t->signal, SIGABRT);
	for (size_t i = 0; i < 2; i++) {
		t = jitmap_stopped_thread(s, i);
		assert_int_equal(t->error, 0);
		assert_true(t->regs->pc != 0);
	}
	/* The PC is in code, and the core's first thread is the process. */
	assert_int_equal(jitmap_stopped_code_at(s, jitmap_stopped_thread(s, 0)->regs->pc, NULL, 0),
			 1);
	/* ... in the C library's code (abort), at the bias the dynamic linker gave it here (the
	 * core's process was forked from this one). */
	struct holder h = {.addr = jitmap_stopped_thread(s, 0)->regs->pc};
	dl_iterate_phdr(find_holder, &h);
	jitmap_stopped_module_info mi = {.sz = sizeof(mi)};
	assert_int_equal(jitmap_stopped_module_at(s, h.addr, &mi), 1);
	assert_true(mi.file);
	assert_true(h.found);
	assert_int_equal(mi.bias, h.bias);
	assert_true(jitmap_stopped_pid(s) > 0);
	jitmap_stopped_free(s);
	unlink(core);
	free(core);
	rmdir(dir);
}

/* -- A live child -- */

struct shared {
	int ready;
};

static struct shared *sh;
static uint8_t pattern[2 * 4096 + 77]; /* filled before fork: the child has it too */

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	char name[16];
	snprintf(name, sizeof(name), "stop-w%d", (int)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return NULL;
}

/* A child with a main thread and two named workers, group-stopped once all have started. */
static pid_t spawn_stopped(void)
{
	memset(sh, 0, sizeof(*sh));
	const pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "stop-main");
		for (int i = 0; i < 2; i++) {
			pthread_t th;
			if (pthread_create(&th, NULL, worker, (void *)(intptr_t)i))
				_exit(3);
		}
		__atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
		for (;;)
			pause();
	}
	for (int i = 0; i < 5000 && __atomic_load_n(&sh->ready, __ATOMIC_SEQ_CST) < 3; i++)
		sleep_ms(1);
	assert_int_equal(__atomic_load_n(&sh->ready, __ATOMIC_SEQ_CST), 3);
	sleep_ms(20); /* into pause() */
	kill(pid, SIGSTOP);
	char path[64], line[128], st = '?';
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 2000 && st != 'T'; i++) {
		FILE *f = fopen(path, "r");
		if (f && fgets(line, sizeof(line), f)) {
			const char *close = strrchr(line, ')');
			st = close && close[1] ? close[2] : '?';
		}
		if (f)
			fclose(f);
		if (st != 'T')
			sleep_ms(1);
	}
	assert_int_equal(st, 'T');
	return pid;
}

static int tracer_of(pid_t pid)
{
	char path[64], line[256];
	int tracer = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		sscanf(line, "TracerPid: %d", &tracer);
	fclose(f);
	return tracer;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

static void test_live(void **state)
{
	(void)state;
	/* Anonymous memory, named as a JIT may name its code (Linux 5.17, CONFIG_ANON_VMA_NAME). */
	void *anon = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(anon != MAP_FAILED);
	const bool anon_named = prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)anon, 4096,
				      (unsigned long)"jitmap-test") == 0;
	const pid_t pid = spawn_stopped();
	jitmap_error err;

	/* A first handle: what a process held still shows in the next. */
	jitmap_stopped *l = jitmap_stopped_open_pid(pid, NULL, &err);
	if (!l)
		fail_msg("open: %s", err.reason);
	struct snap a, b;
	snap_live(l, &a);
	jitmap_stopped_free(l);

	jitmap_stopped *s = jitmap_stopped_open_pid(pid, NULL, &err);
	if (!s)
		fail_msg("open: %s", err.reason);
	snap_stopped(s, &b);
	assert_same_snap(&a, &b);
	assert_int_equal(jitmap_stopped_kind_of(s), JITMAP_STOPPED_LIVE);
	assert_int_equal(jitmap_stopped_pid(s), pid);
	assert_string_equal(jitmap_stopped_name(s), "stop-main");
	/* What only a core has, a process's "none"; its own, asked of the same handle. */
	assert_null(jitmap_stopped_elf(s));
	assert_null(jitmap_stopped_compression(s));
	assert_int_equal(jitmap_stopped_small(s, NULL, NULL, NULL), 0);
	assert_int_equal(jitmap_stopped_num_jit_files(s), 0);
	assert_null(jitmap_stopped_jit_file(s, 0));
	assert_int_equal(jitmap_stopped_placed_file(s, 0, NULL, NULL), -ENOENT);
	assert_int_equal(jitmap_stopped_find_symbol(s, "pattern", NULL, NULL, 0), 0);
	const jitmap_arch host = jitmap_stopped_arch(s);
	assert_int_equal(jitmap_stopped_elf_machine(s), host == JITMAP_ARCH_X86_64 ? EM_X86_64
							 : host == JITMAP_ARCH_AARCH64 ? EM_AARCH64
							 : EM_S390);
	uint64_t pagesz = 0;
	assert_int_equal(jitmap_stopped_auxv(s, AT_PAGESZ, &pagesz), 0);
	assert_int_equal(pagesz, (uint64_t)sysconf(_SC_PAGESIZE));
	assert_int_equal(jitmap_stopped_auxv(s, 0x7fffffff, NULL), -ENOENT);
	jitmap_stopped_memory_info mi = {.sz = sizeof(mi)};
	assert_int_equal(jitmap_stopped_memory(s, (uint64_t)(uintptr_t)pattern, &mi), 0);
	assert_int_equal(mi.source, JITMAP_STOPPED_MEM_PROCESS);
	assert_true(mi.segment_start <= (uint64_t)(uintptr_t)pattern &&
		    (uint64_t)(uintptr_t)pattern < mi.segment_end);
	assert_int_equal(mi.size, mi.segment_end - (uint64_t)(uintptr_t)pattern);
	assert_true(mi.segment_flags & PF_R);
	assert_int_equal(jitmap_stopped_memory(s, 8, &mi), 0);
	assert_int_equal(mi.source, JITMAP_STOPPED_MEM_NONE);
	assert_contains(mi.why, "in no mapping");
	/* Its file mappings: the executable's among them, opened as the process maps it. */
	bool exe_mapped = false;
	for (size_t i = 0; i < jitmap_stopped_num_mappings(s); i++) {
		const jitmap_stopped_mapping_info *mp = jitmap_stopped_mapping(s, i);
		assert_true(mp->start < mp->end);
		assert_ptr_equal(mp->path, mp->core_path);
		exe_mapped |= mp->start <= (uint64_t)(uintptr_t)test_live &&
			      (uint64_t)(uintptr_t)test_live < mp->end;
	}
	assert_true(exe_mapped);
	assert_null(jitmap_stopped_mapping(s, jitmap_stopped_num_mappings(s)));
	char mpath[4096], mwhy[256];
	const int mfd = jitmap_stopped_mapped_file(s, (uint64_t)(uintptr_t)test_live, mpath,
						   sizeof(mpath), mwhy, sizeof(mwhy));
	assert_true(mfd >= 0);
	close(mfd);
	assert_int_equal(jitmap_stopped_mapped_file(s, 8, mpath, sizeof(mpath), NULL, 0), -ENOENT);
	jitmap_stopped *under = s; /* the one face: a process's own calls are these */
	assert_true(jitmap_stopped_is_stopped(under));
	assert_int_equal(tracer_of(pid), getpid());
	assert_int_equal(b.n, 3);
	assert_int_equal(b.t[0].tid, pid);
	int workers = 0;
	for (size_t i = 0; i < b.n; i++) {
		assert_true(b.t[i].has_regs);
		assert_int_equal(b.t[i].stack_rc, 0);
		workers += !strncmp(b.t[i].name, "stop-w", 6);
	}
	assert_int_equal(workers, 2);

	/* Each thread asked twice is the same thread. */
	for (size_t i = 0; i < b.n; i++) {
		const jitmap_stopped_thread_info *x = jitmap_stopped_thread(under, i);
		const jitmap_stopped_thread_info *y = jitmap_stopped_thread(s, i);
		assert_int_equal(x->tid, y->tid);
		assert_ptr_equal(x->name, y->name);
		assert_int_equal(x->signal, y->signal);
		assert_int_equal(x->error, y->error);
		assert_ptr_equal(x->why, y->why);
		assert_ptr_equal(x->regs, y->regs);
		const jitmap_target tx = jitmap_stopped_thread_target(under, i);
		const jitmap_target ty = jitmap_stopped_thread_target(s, i);
		const uint64_t addrs[] = {(uint64_t)(uintptr_t)pattern, b.t[i].regs.pc, 8};
		assert_same_target(&tx, &ty, addrs, ARRAY_LEN(addrs), sizeof(pattern));
	}
	assert_null(jitmap_stopped_thread(s, b.n));
	assert_null(jitmap_stopped_thread_target(s, b.n).read_mem);

	/* Memory, the process's and the pattern it was forked with. */
	const jitmap_target m = jitmap_stopped_target(s);
	assert_null(m.read_reg);
	uint8_t buf[sizeof(pattern)];
	char why[256];
	assert_int_equal(m.read_mem(m.ctx, (uint64_t)(uintptr_t)pattern, buf, sizeof(buf), why,
				    sizeof(why)), 0);
	assert_memory_equal(buf, pattern, sizeof(pattern));
	const jitmap_target lt = jitmap_stopped_target(under);
	const uint64_t addrs[] = {(uint64_t)(uintptr_t)pattern + 4000, 8,
				  UINT64_C(0xfffffffffffff000)};
	assert_same_target(&lt, &m, addrs, ARRAY_LEN(addrs), 200);
	for (size_t i = 0; i < ARRAY_LEN(addrs); i++) {
		char wa[256] = "", wb[256] = "";
		assert_int_equal(jitmap_stopped_code_at(under, addrs[i], wa, sizeof(wa)),
				 jitmap_stopped_code_at(s, addrs[i], wb, sizeof(wb)));
		assert_string_equal(wa, wb);
	}
	assert_int_equal(jitmap_stopped_code_at(s, b.t[0].regs.pc, NULL, 0), 1);
	check_modules(s, anon, anon_named);

	/* Let go: untraced, still group-stopped; what was read stays. */
	assert_int_equal(jitmap_stopped_detach(s), 0);
	assert_false(jitmap_stopped_is_stopped(under));
	assert_int_equal(tracer_of(pid), 0);
	assert_int_equal(jitmap_stopped_detach(s), 0);
	assert_int_equal(jitmap_stopped_num_threads(s), 3);
	assert_non_null(jitmap_stopped_thread(s, 1)->regs);
	jitmap_stopped_free(s);

	/* Without stopping: threads without registers, memory as it runs. */
	JITMAP_OPTS(const jitmap_stopped_opts, no_stop, .flags = JITMAP_STOPPED_NO_STOP);
	s = jitmap_stopped_open_pid(pid, &no_stop, &err);
	if (!s)
		fail_msg("open: %s", err.reason);
	assert_int_equal(tracer_of(pid), 0);
	assert_int_equal(jitmap_stopped_num_threads(s), 3);
	for (size_t i = 0; i < 3; i++) {
		const jitmap_stopped_thread_info *t = jitmap_stopped_thread(s, i);
		assert_int_equal(t->error, -ENODATA);
		assert_null(t->regs);
		assert_contains(t->why, "JITMAP_STOPPED_NO_STOP");
		uint64_t v;
		assert_int_equal(jitmap_stopped_thread_reg(t, 7, &v), -ENOENT);
		const jitmap_target tt = jitmap_stopped_thread_target(s, i);
		uint8_t reg[8];
		assert_int_equal(tt.read_reg(tt.ctx, 7, reg, 8, why, sizeof(why)), -ENOENT);
		char want[256];
		snprintf(want, sizeof(want), "thread %d has no register 7: the thread was not "
			 "stopped (JITMAP_STOPPED_NO_STOP): its registers are not read", (int)t->tid);
		assert_string_equal(why, want);
	}
	const jitmap_target nm = jitmap_stopped_target(s);
	assert_int_equal(nm.read_mem(nm.ctx, (uint64_t)(uintptr_t)pattern, buf, 64, why,
				     sizeof(why)), 0);
	assert_memory_equal(buf, pattern, 64);
	jitmap_stopped_free(s);

	/* The caps go through: one thread, and the warning the old call gives. */
	JITMAP_OPTS(const jitmap_stopped_opts, one, .max_threads = 1);
	s = jitmap_stopped_open_pid(pid, &one, &err);
	assert_non_null(s);
	assert_int_equal(jitmap_stopped_num_threads(s), 1);
	assert_contains(jitmap_stopped_warning(s, 0), "more than 1 threads");
	jitmap_stopped_problem_info pi = {.sz = sizeof(pi)};
	assert_int_equal(jitmap_stopped_problem(s, 0, &pi), 0);
	assert_int_equal(pi.kind, JITMAP_PROBLEM_WARNING);
	assert_int_equal(pi.code, JITMAP_PROBLEM_THREADS_LEFT);
	assert_ptr_equal(pi.text, jitmap_stopped_warning(s, 0));
	assert_int_equal(jitmap_stopped_problem(s, 1, &pi), -ENOENT);
	assert_null(jitmap_stopped_warning(s, 1));
	jitmap_stopped_free(s);
	reap(pid);
	munmap(anon, 4096);
}

/* -- Bad input -- */

/* jitmap_stopped_open_core fails the same way twice, in the same words. */
static void expect_core_fail(const char *path, int code)
{
	jitmap_error e1, e2;
	errno = 0;
	assert_null(jitmap_stopped_open_core(path, NULL, &e1));
	const int errno1 = errno;
	errno = 0;
	assert_null(jitmap_stopped_open_core(path, NULL, &e2));
	assert_int_equal(errno, errno1);
	assert_int_equal(errno, -code);
	assert_int_equal(e1.code, e2.code);
	assert_int_equal(e1.offset, e2.offset);
	assert_string_equal(e1.reason, e2.reason);
	assert_null(jitmap_stopped_open_core(path, NULL, NULL)); /* no err: fine */
}

static void expect_pid_fail(pid_t pid, int code)
{
	jitmap_error e1, e2;
	errno = 0;
	assert_null(jitmap_stopped_open_pid(pid, NULL, &e1));
	const int errno1 = errno;
	errno = 0;
	assert_null(jitmap_stopped_open_pid(pid, NULL, &e2));
	assert_int_equal(errno, errno1);
	assert_int_equal(errno, -code);
	assert_int_equal(e1.code, e2.code);
	assert_string_equal(e1.reason, e2.reason);
}

static void test_bad_input(void **state)
{
	(void)state;
	char dir[] = "/tmp/jitmap-test-stopped.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[256];
	snprintf(path, sizeof(path), "%s/missing", dir);
	expect_core_fail(path, -ENOENT);
	expect_core_fail(NULL, -EINVAL);
	expect_core_fail(dir, -EISDIR);
	expect_core_fail("/proc/self/exe", -EINVAL); /* an ELF file, not a core */
	snprintf(path, sizeof(path), "%s/empty", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	expect_core_fail(path, -EINVAL);
	unlink(path);
	rmdir(dir);

	expect_pid_fail(0, -EINVAL);
	expect_pid_fail(-1, -EINVAL);
	expect_pid_fail(getpid(), -EPERM);
	const pid_t gone = fork();
	assert_true(gone >= 0);
	if (gone == 0)
		_exit(0);
	int status;
	assert_int_equal(waitpid(gone, &status, 0), gone);
	expect_pid_fail(gone, -ESRCH);

	/* Options: too small a size, and fields this library does not know. */
	jitmap_error err;
	jitmap_stopped_opts small = {.sz = 4};
	assert_null(jitmap_stopped_open_core("/proc/self/exe", &small, &err));
	assert_int_equal(errno, EINVAL);
	assert_string_equal(err.reason, "jitmap_stopped_opts.sz is 4");
	assert_null(jitmap_stopped_open_pid(getpid(), &small, &err));
	assert_int_equal(err.code, -EINVAL);
	struct {
		jitmap_stopped_opts o;
		uint64_t newer;
	} big;
	memset(&big, 0, sizeof(big)); /* padding too: the bytes past the known fields are read */
	big.o.sz = sizeof(big);
	big.newer = 1;
	assert_null(jitmap_stopped_open_pid(getpid(), &big.o, &err));
	assert_int_equal(errno, EINVAL);
	assert_contains(err.reason, "fields this library does not know");
	/* A newer caller's zeros are fine: the open goes on (and fails on the file). */
	big.newer = 0;
	assert_null(jitmap_stopped_open_core("/proc/self/exe", &big.o, &err));
	assert_string_equal(err.reason, "not a 64-bit core file");
	/* An older caller's shorter struct: the fields past it are not read. */
	JITMAP_OPTS(const jitmap_stopped_opts, older, .sz = offsetof(jitmap_stopped_opts, flags),
		    .flags = JITMAP_STOPPED_NO_STOP);
	assert_null(jitmap_stopped_open_pid(getpid(), &older, &err));
	assert_int_equal(err.code, -EPERM); /* NO_STOP not seen: this process is not stopped */

	/* NULL and out of range. */
	jitmap_stopped_free(NULL);
	assert_int_equal(jitmap_stopped_detach(NULL), 0);
	assert_int_equal(jitmap_stopped_code_at(NULL, 0, NULL, 0), -EINVAL);
	uint8_t id[64];
	assert_int_equal(jitmap_stopped_build_id_at(NULL, 0, id, sizeof(id)), 0);
	jitmap_stopped_module_info mi = {.sz = sizeof(mi)};
	assert_int_equal(jitmap_stopped_module_at(NULL, 0, &mi), -EINVAL);
	uint64_t v;
	assert_int_equal(jitmap_stopped_thread_reg(NULL, 0, &v), -ENOENT);
	JITMAP_OPTS(const jitmap_stopped_opts, no_stop, .flags = JITMAP_STOPPED_NO_STOP);
	jitmap_stopped *s = jitmap_stopped_open_pid(getpid(), &no_stop, &err);
	if (!s)
		fail_msg("open: %s", err.reason);
	const size_t n = jitmap_stopped_num_threads(s);
	assert_true(n >= 1);
	assert_null(jitmap_stopped_thread(s, n));
	assert_null(jitmap_stopped_thread(s, SIZE_MAX));
	const jitmap_target t = jitmap_stopped_thread_target(s, n);
	assert_null(t.read_mem);
	assert_null(t.read_reg);
	assert_null(t.ctx);
	assert_null(jitmap_stopped_warning(s, 0));
	assert_null(jitmap_stopped_warning(s, SIZE_MAX));
	jitmap_stopped_free(s);
}

static int setup(void **state)
{
	(void)state;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return -1;
	for (size_t i = 0; i < sizeof(pattern); i++)
		pattern[i] = (uint8_t)(i * 13 + (i >> 9) + 7);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synthetic_cores),
		cmocka_unit_test(test_real_core),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
