/* test_live.c: jitmap_stopped_open_pid on children of this test (jitmap/stopped.h).
 *
 * A child with worker threads (pthreads, each named) ticks a counter in memory it shares
 * with the test: while it is open, every thread is listed with its name and registers (the
 * PC also by DWARF number, the stack pointer pointing at readable memory), a known pattern
 * reads back through the page cache (small reads, reads across pages, a read longer than the
 * cache keeps), the counter stands still; after jitmap_stopped_detach it runs on, untraced.
 * Then the edges: a main thread that exited (a zombie leader), the thread cap, a thread that
 * keeps raising a signal (a stop that holds one back must give it back: none is lost), reading
 * without stopping (JITMAP_STOPPED_NO_STOP, this process itself too), and every failure: bad
 * arguments, no such process, this process, a process already traced, another user's
 * (as root: a child that drops to nobody tries), an interrupt. Last, a lazy process scan of
 * a child's 1,500 JIT entries, whose images a live target reads in batches
 * (process_vm_readv), against the same scan reading them one by one.
 */
#define _GNU_SOURCE
#include "unit.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <limits.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <elf.h>

#include "jitmap/live.h"
#include "jitmap/process.h"

/* What a child shares with the test. */
struct shared {
	int ready;              /* threads started */
	uint64_t ticks;         /* the main thread's loop */
	uint64_t raised, handled; /* SIGUSR1: raise() calls and handler runs */
	int stop_raising;
};

static struct shared *sh;
/* Filled before fork: the child has it at the same address. */
static uint8_t pattern[3 * 4096 + 123];

enum mode { TICK, EXIT_MAIN, RAISE };

static void on_usr1(int sig)
{
	(void)sig;
	__atomic_add_fetch(&sh->handled, 1, __ATOMIC_SEQ_CST);
}

static void *worker(void *arg)
{
	char name[16];
	snprintf(name, sizeof(name), "live-w%d", (int)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	__atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
	for (;;)
		pause();
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* A child with `workers` threads besides its main thread, doing `mode`; returns once every
 * thread has started. */
static pid_t spawn(int workers, enum mode mode)
{
	memset(sh, 0, sizeof(*sh));
	const pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "live-main");
		signal(SIGUSR1, on_usr1);
		for (int i = 0; i < workers; i++) {
			pthread_t th;
			if (pthread_create(&th, NULL, worker, (void *)(intptr_t)i))
				_exit(3);
		}
		__atomic_add_fetch(&sh->ready, 1, __ATOMIC_SEQ_CST);
		if (mode == EXIT_MAIN)
			pthread_exit(NULL);
		while (mode == RAISE && !__atomic_load_n(&sh->stop_raising, __ATOMIC_SEQ_CST)) {
			__atomic_add_fetch(&sh->raised, 1, __ATOMIC_SEQ_CST);
			raise(SIGUSR1);
		}
		for (;;) {
			__atomic_add_fetch(&sh->ticks, 1, __ATOMIC_SEQ_CST);
			sleep_ms(1);
		}
	}
	for (int i = 0; i < 5000 && __atomic_load_n(&sh->ready, __ATOMIC_SEQ_CST) < workers + 1; i++)
		sleep_ms(1);
	assert_int_equal(__atomic_load_n(&sh->ready, __ATOMIC_SEQ_CST), workers + 1);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

/* The TracerPid and state letter of a process, from /proc/PID/status. */
static void proc_status(pid_t pid, int *tracer, char *state)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	*tracer = -1;
	*state = '?';
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "TracerPid: %d", tracer);
		sscanf(line, "State: %c", state);
	}
	fclose(f);
}

/* Whether the counter moves within a second. */
static bool ticking(void)
{
	const uint64_t t0 = __atomic_load_n(&sh->ticks, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 1000; i++) {
		if (__atomic_load_n(&sh->ticks, __ATOMIC_SEQ_CST) != t0)
			return true;
		sleep_ms(1);
	}
	return false;
}

static jitmap_stopped_opts opts_of(unsigned flags)
{
	JITMAP_OPTS(jitmap_stopped_opts, o, .flags = flags);
	return o;
}

/* -- A stopped child -- */

static void test_stop_read_detach(void **state)
{
	(void)state;
	const pid_t pid = spawn(3, TICK);
	jitmap_error err;
	jitmap_stopped *l = jitmap_stopped_open_pid(pid, NULL, &err);
	if (!l)
		fail_msg("open: %s", err.reason);
	assert_int_equal(jitmap_stopped_pid(l), pid);
	assert_string_equal(jitmap_stopped_name(l), "live-main");
	jitmap_byte_order order;
	assert_int_equal(jitmap_stopped_arch(l), jitmap_arch_host(&order));
	assert_int_equal(jitmap_stopped_byte_order(l), order);
	assert_true(jitmap_stopped_is_stopped(l));
	assert_null(jitmap_stopped_warning(l, 0));

	/* Every thread, the main one first, each named and read. */
	assert_int_equal(jitmap_stopped_num_threads(l), 4);
	assert_null(jitmap_stopped_thread(l, 4));
	const jitmap_stopped_thread_info *main_thread = jitmap_stopped_thread(l, 0);
	assert_int_equal(main_thread->tid, pid);
	assert_string_equal(main_thread->name, "live-main");
	int workers = 0;
	const jitmap_arch arch = jitmap_stopped_arch(l);
	const int pc = jitmap_reg_pc(arch), sp = jitmap_reg_sp(arch);
	for (size_t i = 0; i < 4; i++) {
		const jitmap_stopped_thread_info *t = jitmap_stopped_thread(l, i);
		assert_int_equal(t->error, 0);
		assert_string_equal(t->why, "");
		assert_int_equal(t->signal, 0);
		assert_non_null(t->regs);
		workers += !strncmp(t->name, "live-w", 6);
		assert_true(t->regs->pc != 0);
		uint64_t v;
		if (pc >= 0) {
			assert_int_equal(jitmap_stopped_thread_reg(t, (unsigned)pc, &v), 0);
			assert_int_equal(v, t->regs->pc);
		}
		assert_int_equal(jitmap_stopped_thread_reg(t, 9999, &v), -ENOENT);
		/* The stack pointer points at the thread's stack, which reads. */
		assert_true(sp >= 0 && jitmap_frame_reg_known(t->regs, (unsigned)sp));
		assert_int_equal(jitmap_stopped_thread_reg(t, (unsigned)sp, &v), 0);
		assert_int_equal(v, t->regs->reg[sp]);
		const jitmap_target tt = jitmap_stopped_thread_target(l, i);
		uint8_t word[8], reg[8];
		char why[128] = "";
		assert_int_equal(tt.read_mem(tt.ctx, v, word, sizeof(word), why, sizeof(why)), 0);
		assert_int_equal(tt.read_reg(tt.ctx, (unsigned)sp, reg, sizeof(reg), why,
					     sizeof(why)), 0);
		uint64_t back = 0;
		for (int k = 0; k < 8; k++)
			back |= (uint64_t)reg[order == JITMAP_ORDER_BIG ? 7 - k : k] << (8 * k);
		assert_int_equal(back, v);
		assert_int_equal(tt.read_reg(tt.ctx, 9999, reg, 8, why, sizeof(why)), -ENOENT);
		assert_int_equal(tt.read_reg(tt.ctx, (unsigned)sp, reg, 9, why, sizeof(why)),
				 -EINVAL);
	}
	assert_int_equal(workers, 3);
	assert_null(jitmap_stopped_thread_target(l, 4).read_mem);

	/* The pattern, through the page cache: small reads, across pages, longer than kept. */
	const jitmap_target m = jitmap_stopped_target(l);
	assert_null(m.read_reg);
	uint8_t buf[sizeof(pattern)];
	char why[128] = "";
	const uint64_t base = (uint64_t)(uintptr_t)pattern;
	for (size_t off = 0; off + 16 <= sizeof(pattern); off += 509) {
		assert_int_equal(m.read_mem(m.ctx, base + off, buf, 16, why, sizeof(why)), 0);
		assert_memory_equal(buf, pattern + off, 16);
	}
	const uint64_t edge = ((base + 4096) & ~(uint64_t)4095) - 3;
	assert_int_equal(m.read_mem(m.ctx, edge, buf, 7, why, sizeof(why)), 0);
	assert_memory_equal(buf, pattern + (edge - base), 7);
	assert_int_equal(m.read_mem(m.ctx, base, buf, sizeof(pattern), why, sizeof(why)), 0);
	assert_memory_equal(buf, pattern, sizeof(pattern));
	/* Not mapped, and not a user address: the reason names the address. */
	assert_int_equal(m.read_mem(m.ctx, 8, buf, 8, why, sizeof(why)), -EFAULT);
	assert_contains(why, "cannot read 0x8");
	assert_int_equal(m.read_mem(m.ctx, UINT64_C(0xfffffffffffff000), buf, 8, why, sizeof(why)),
			 -EFAULT);
	assert_contains(why, "not a user address");

	/* Stopped: the counter stands still; the child is traced, in a tracing stop. */
	int tracer;
	char st;
	proc_status(pid, &tracer, &st);
	assert_int_equal(tracer, getpid());
	assert_int_equal(st, 't');
	assert_false(ticking());

	/* Let go: it runs on, untraced; what was read stays; detaching twice is nothing. */
	assert_int_equal(jitmap_stopped_detach(l), 0);
	assert_false(jitmap_stopped_is_stopped(l));
	assert_true(ticking());
	proc_status(pid, &tracer, &st);
	assert_int_equal(tracer, 0);
	assert_int_equal(jitmap_stopped_detach(l), 0);
	assert_int_equal(jitmap_stopped_num_threads(l), 4);
	assert_non_null(jitmap_stopped_thread(l, 1)->regs);
	/* Memory still reads, from the running process. */
	assert_int_equal(m.read_mem(m.ctx, base + 100, buf, 16, why, sizeof(why)), 0);
	assert_memory_equal(buf, pattern + 100, 16);
	jitmap_stopped_free(l);
	jitmap_stopped_free(NULL);
	assert_int_equal(jitmap_stopped_detach(NULL), 0);

	/* Freed without a detach: free lets it go. */
	l = jitmap_stopped_open_pid(pid, NULL, &err);
	assert_non_null(l);
	assert_false(ticking());
	jitmap_stopped_free(l);
	assert_true(ticking());
	reap(pid);
}

/* -- Edges -- */

/* A main thread that called pthread_exit is a zombie Linux refuses to trace (EPERM): the
 * thread exited, the process is still read. */
static void test_zombie_leader(void **state)
{
	(void)state;
	const pid_t pid = spawn(2, EXIT_MAIN);
	char st = '?';
	int tracer;
	for (int i = 0; i < 2000 && st != 'Z'; i++) {
		proc_status(pid, &tracer, &st);
		if (st != 'Z')
			sleep_ms(1);
	}
	assert_int_equal(st, 'Z');
	jitmap_error err;
	jitmap_stopped *l = jitmap_stopped_open_pid(pid, NULL, &err);
	if (!l)
		fail_msg("open: %s", err.reason);
	assert_int_equal(jitmap_stopped_num_threads(l), 3);
	const jitmap_stopped_thread_info *t = jitmap_stopped_thread(l, 0);
	assert_int_equal(t->tid, pid);
	assert_int_equal(t->error, -ESRCH);
	assert_string_equal(t->why, "the thread exited while being read");
	assert_null(t->regs);
	uint64_t v;
	assert_int_equal(jitmap_stopped_thread_reg(t, 0, &v), -ENOENT);
	assert_int_equal(jitmap_stopped_thread(l, 1)->error, 0);
	assert_int_equal(jitmap_stopped_thread(l, 2)->error, 0);
	jitmap_stopped_free(l);
	/* By thread: the living threads' stacks are copied all the same. */
	const jitmap_stopped_opts o = opts_of(JITMAP_STOPPED_BY_THREAD);
	l = jitmap_stopped_open_pid(pid, &o, &err);
	if (!l)
		fail_msg("open by thread: %s", err.reason);
	assert_int_equal(jitmap_stopped_thread(l, 0)->error, -ESRCH);
	for (size_t i = 1; i < 3; i++) {
		t = jitmap_stopped_thread(l, i);
		assert_int_equal(t->error, 0);
		assert_true(t->stack_hi > t->stack_lo);
	}
	jitmap_stopped_free(l);
	reap(pid);
}

static void test_thread_cap(void **state)
{
	(void)state;
	const pid_t pid = spawn(3, TICK);
	jitmap_stopped_opts o = opts_of(0);
	o.max_threads = 2;
	jitmap_error err;
	jitmap_stopped *l = jitmap_stopped_open_pid(pid, &o, &err);
	assert_non_null(l);
	assert_int_equal(jitmap_stopped_num_threads(l), 2);
	assert_contains(jitmap_stopped_warning(l, 0), "more than 2 threads");
	assert_null(jitmap_stopped_warning(l, 1));
	jitmap_stopped_free(l);
	assert_true(ticking());

	/* One round only: whether the process started more threads meanwhile is unknown. */
	o.max_rounds = 1;
	o.max_threads = 0;
	l = jitmap_stopped_open_pid(pid, &o, &err);
	assert_non_null(l);
	assert_int_equal(jitmap_stopped_num_threads(l), 4);
	assert_string_equal(jitmap_stopped_warning(l, 0), "the process kept starting threads: 4 read");
	jitmap_stopped_free(l);
	reap(pid);
}

/* A process stopped by SIGSTOP is read, and stays stopped when let go (a group-stop is the
 * process's own); SIGCONT makes it run. */
static void test_group_stop(void **state)
{
	(void)state;
	const pid_t pid = spawn(1, TICK);
	kill(pid, SIGSTOP);
	int tracer;
	char st = '?';
	for (int i = 0; i < 2000 && st != 'T'; i++) {
		proc_status(pid, &tracer, &st);
		if (st != 'T')
			sleep_ms(1);
	}
	assert_int_equal(st, 'T');
	jitmap_error err;
	jitmap_stopped *l = jitmap_stopped_open_pid(pid, NULL, &err);
	if (!l)
		fail_msg("open: %s", err.reason);
	assert_int_equal(jitmap_stopped_num_threads(l), 2);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(jitmap_stopped_thread(l, i)->error, 0);
		assert_int_equal(jitmap_stopped_thread(l, i)->signal, 0);
	}
	jitmap_stopped_free(l);
	assert_false(ticking());
	proc_status(pid, &tracer, &st);
	assert_int_equal(st, 'T');
	assert_int_equal(tracer, 0);
	kill(pid, SIGCONT);
	assert_true(ticking());
	reap(pid);
}

/* A thread that raises SIGUSR1 without pause, stopped 50 times: every raise is handled. A stop
 * that catches a signal on its way (a signal-delivery stop) must give it back at detach, or
 * the program loses it; whether one does is up to timing (a signal dequeued between
 * PTRACE_SEIZE and PTRACE_INTERRUPT): none did in 3000 tries here, the interrupt's trap being
 * taken before a signal is dequeued, so the count is the check. */
static void test_signal_given_back(void **state)
{
	(void)state;
	const pid_t pid = spawn(0, RAISE);
	int held = 0;
	for (int round = 0; round < 50 && !held; round++) {
		jitmap_error err;
		jitmap_stopped *l = jitmap_stopped_open_pid(pid, NULL, &err);
		if (!l)
			fail_msg("open: %s", err.reason);
		const jitmap_stopped_thread_info *t = jitmap_stopped_thread(l, 0);
		assert_true(t->signal == 0 || t->signal == SIGUSR1);
		held += t->signal == SIGUSR1;
		jitmap_stopped_free(l);
	}
	__atomic_store_n(&sh->stop_raising, 1, __ATOMIC_SEQ_CST);
	assert_true(ticking()); /* past the loop: every raise() returned */
	assert_int_equal(__atomic_load_n(&sh->handled, __ATOMIC_SEQ_CST),
			 __atomic_load_n(&sh->raised, __ATOMIC_SEQ_CST));
	reap(pid);
}

/* Reading without stopping: threads listed with no registers, memory read as it runs. */
static void test_no_stop(void **state)
{
	(void)state;
	const pid_t pid = spawn(1, TICK);
	const jitmap_stopped_opts o = opts_of(JITMAP_STOPPED_NO_STOP);
	jitmap_error err;
	jitmap_stopped *l = jitmap_stopped_open_pid(pid, &o, &err);
	assert_non_null(l);
	assert_false(jitmap_stopped_is_stopped(l));
	assert_int_equal(jitmap_stopped_num_threads(l), 2);
	for (size_t i = 0; i < 2; i++) {
		const jitmap_stopped_thread_info *t = jitmap_stopped_thread(l, i);
		assert_int_equal(t->error, -ENODATA);
		assert_contains(t->why, "not stopped");
		assert_null(t->regs);
	}
	assert_true(ticking());
	int tracer;
	char st;
	proc_status(pid, &tracer, &st);
	assert_int_equal(tracer, 0);
	const jitmap_target m = jitmap_stopped_target(l);
	uint8_t buf[64];
	char why[128];
	assert_int_equal(m.read_mem(m.ctx, (uintptr_t)pattern + 4000, buf, 64, why, sizeof(why)), 0);
	assert_memory_equal(buf, pattern + 4000, 64);
	/* Memory is not kept: the counter, read again, moves. */
	uint64_t a, b = 0;
	const uint64_t at = (uintptr_t)&sh->ticks;
	assert_int_equal(m.read_mem(m.ctx, at, &a, 8, why, sizeof(why)), 0);
	for (int i = 0; i < 1000 && (i == 0 || b == a); i++) {
		sleep_ms(1);
		assert_int_equal(m.read_mem(m.ctx, at, &b, 8, why, sizeof(why)), 0);
	}
	assert_true(a != b);
	assert_int_equal(jitmap_stopped_detach(l), 0);
	jitmap_stopped_free(l);
	reap(pid);

	/* This process itself reads too, without stopping. */
	l = jitmap_stopped_open_pid(getpid(), &o, &err);
	assert_non_null(l);
	const jitmap_target self = jitmap_stopped_target(l);
	assert_int_equal(self.read_mem(self.ctx, (uintptr_t)pattern + 1, buf, 32, why,
				       sizeof(why)), 0);
	assert_memory_equal(buf, pattern + 1, 32);
	jitmap_stopped_free(l);
}

/* -- Stacks copied: one thread stopped at a time, or all at once for the copy -- */

static void test_captured(void **state)
{
	(void)state;
	const unsigned modes[] = {JITMAP_STOPPED_BY_THREAD, JITMAP_STOPPED_SNAPSHOT};
	for (size_t k = 0; k < 2; k++) {
		const pid_t pid = spawn(2, TICK);
		/* 256 bytes: less than any of the three threads' stacks holds above its stack
		 * pointer (their frames: the thread's start, its loop or wait), so every copy is
		 * cut. */
		JITMAP_OPTS(const jitmap_stopped_opts, o, .flags = modes[k], .stack_bytes = 256);
		jitmap_error err;
		jitmap_stopped *l = jitmap_stopped_open_pid(pid, &o, &err);
		if (!l)
			fail_msg("open: %s", err.reason);
		/* Every thread was read, and runs again. */
		assert_false(jitmap_stopped_is_stopped(l));
		assert_true(ticking());
		int tracer;
		char st;
		proc_status(pid, &tracer, &st);
		assert_int_equal(tracer, 0);
		assert_int_equal(jitmap_stopped_num_threads(l), 3);
		const int spno = jitmap_reg_sp(jitmap_stopped_arch(l));
		unsigned cut = 0;
		for (size_t i = 0; i < 3; i++) {
			const jitmap_stopped_thread_info *t = jitmap_stopped_thread(l, i);
			assert_int_equal(t->error, 0);
			assert_non_null(t->regs);
			assert_true(t->stopped_ns > 0 && t->stopped_ns < UINT64_C(5000000000));
			uint64_t sp;
			assert_int_equal(jitmap_stopped_thread_reg(t, (unsigned)spno, &sp), 0);
			/* From the stack pointer (and x86-64's red zone) up, 256 bytes at most. */
			assert_true(t->stack_lo <= sp && sp < t->stack_hi);
			assert_true(t->stack_hi - sp <= 256);
			/* The thread target reads its stack from the copy: for a worker, blocked in
			 * pause(), the same bytes it holds there now (the main thread ticks). */
			const jitmap_target tt = jitmap_stopped_thread_target(l, i);
			const jitmap_target whole = jitmap_stopped_target(l);
			uint8_t a[64], b[64];
			char why[160];
			assert_int_equal(tt.read_mem(tt.ctx, sp, a, sizeof(a), why, sizeof(why)), 0);
			assert_int_equal(whole.read_mem(whole.ctx, sp, b, sizeof(b), why,
							sizeof(why)), 0);
			if (i > 0)
				assert_memory_equal(a, b, sizeof(a));
			/* Above the copy, on its stack: not read, and said. */
			if (t->stack_cut) {
				cut++;
				assert_int_equal(t->past_copy, 0); /* nothing read above it yet */
				assert_int_equal(tt.read_mem(tt.ctx, t->stack_hi, a, 8, why,
							     sizeof(why)), -EFAULT);
				assert_contains(why, "was not captured while thread");
				assert_contains(why, "above the stack bytes captured");
				/* ... the thread's status too, not only words */
				assert_int_equal(t->past_copy, t->stack_hi);
			}
			/* The stack target: the copy, and code; no other data. */
			const jitmap_target stk = jitmap_stopped_thread_stack_target(l, i);
			assert_int_equal(stk.read_mem(stk.ctx, sp, a, 8, why, sizeof(why)), 0);
			assert_int_equal(stk.read_mem(stk.ctx, (uintptr_t)pattern, a, 8, why,
						      sizeof(why)), -EFAULT);
			assert_contains(why, "jitmap reads only its stack as it was then");
			assert_int_equal(stk.read_mem(stk.ctx, (uintptr_t)&spawn, a, 8, why,
						      sizeof(why)), 0);
			assert_memory_equal(a, (const void *)(uintptr_t)&spawn, 8);
		}
		assert_int_equal(cut, 3);
		/* The rest of memory is read as the process runs: never kept. */
		const jitmap_target m = jitmap_stopped_target(l);
		uint64_t x, y = 0;
		char why[128];
		assert_int_equal(m.read_mem(m.ctx, (uintptr_t)&sh->ticks, &x, 8, why, sizeof(why)), 0);
		for (int i = 0; i < 1000 && (i == 0 || y == x); i++) {
			sleep_ms(1);
			assert_int_equal(m.read_mem(m.ctx, (uintptr_t)&sh->ticks, &y, 8, why,
						    sizeof(why)), 0);
		}
		assert_true(x != y);
		jitmap_stopped_free(l);
		reap(pid);
	}
}

/* -- Failures -- */

static void *detach_elsewhere(void *arg)
{
	return (void *)(intptr_t)jitmap_stopped_detach(arg);
}

static void expect_fail(pid_t pid, const jitmap_stopped_opts *o, int code, const char *reason)
{
	jitmap_error err;
	errno = 0;
	jitmap_stopped *l = jitmap_stopped_open_pid(pid, o, &err);
	if (l)
		fail_msg("open %d succeeded, expected %s", (int)pid, reason);
	assert_int_equal(errno, code);
	assert_int_equal(err.code, -code);
	assert_contains(err.reason, reason);
}

static void test_errors(void **state)
{
	(void)state;
	expect_fail(0, NULL, EINVAL, "not a process ID");
	expect_fail(-5, NULL, EINVAL, "not a process ID");
	/* Options: a size too small for sz itself; bytes this library does not know. */
	struct {
		jitmap_stopped_opts o;
		uint64_t newer;
	} big;
	memset(&big, 0, sizeof(big)); /* padding too: the bytes past the known fields are read */
	big.o.sz = sizeof(big);
	big.newer = 1;
	const jitmap_stopped_opts tiny = {.sz = 1};
	expect_fail(getpid(), &tiny, EINVAL, "sz is 1");
	expect_fail(getpid(), &big.o, EINVAL, "does not know");
	big.newer = 0; /* zero past the known fields: fine, and this is this process: EPERM */
	expect_fail(getpid(), &big.o, EPERM, "is the calling process");

	/* A process that exited and was reaped. */
	const pid_t gone = fork();
	assert_true(gone >= 0);
	if (gone == 0)
		_exit(0);
	waitpid(gone, NULL, 0);
	char want[64];
	snprintf(want, sizeof(want), "no process %d", (int)gone);
	expect_fail(gone, NULL, ESRCH, want);
	/* A process that exited and was not reaped (a zombie). */
	const pid_t zombie = fork();
	assert_true(zombie >= 0);
	if (zombie == 0)
		_exit(0);
	int tracer;
	char st = '?';
	for (int i = 0; i < 2000 && st != 'Z'; i++) {
		proc_status(zombie, &tracer, &st);
		if (st != 'Z')
			sleep_ms(1);
	}
	snprintf(want, sizeof(want), "process %d has exited (a zombie)", (int)zombie);
	expect_fail(zombie, NULL, ESRCH, want);
	waitpid(zombie, NULL, 0);

	/* Already traced (by this thread, through another object). */
	const pid_t pid = spawn(1, TICK);
	jitmap_error err;
	jitmap_stopped *first = jitmap_stopped_open_pid(pid, NULL, &err);
	assert_non_null(first);
	snprintf(want, sizeof(want), "cannot trace process %d (thread %d)", (int)pid, (int)pid);
	expect_fail(pid, NULL, EPERM, want);
	expect_fail(pid, NULL, EPERM, "(another tracer, another user, or "
		    "/proc/sys/kernel/yama/ptrace_scope)");
	/* The failed open left the first one's stop alone. */
	assert_false(ticking());
	/* Only the thread that attached may let go (Linux's tracer is a thread). */
	pthread_t other;
	void *other_rc;
	assert_int_equal(pthread_create(&other, NULL, detach_elsewhere, first), 0);
	assert_int_equal(pthread_join(other, &other_rc), 0);
	assert_int_equal((intptr_t)other_rc, -EPERM);
	assert_true(jitmap_stopped_is_stopped(first));
	assert_false(ticking());
	jitmap_stopped_free(first);
	assert_true(ticking());

	/* Interrupted before the first thread: nothing stays stopped or traced. */
	static volatile sig_atomic_t flag = 1;
	jitmap_stopped_opts o = opts_of(0);
	o.interrupt = &flag;
	expect_fail(pid, &o, EINTR, "interrupted");
	proc_status(pid, &tracer, &st);
	assert_int_equal(tracer, 0);
	assert_true(ticking());
	reap(pid);
}

/* Another user's process, as root: a child that became nobody tries, and reports. */
static void test_other_user(void **state)
{
	(void)state;
	if (geteuid() != 0)
		skip();
	const pid_t victim = spawn(0, TICK);
	const pid_t tracer = fork();
	assert_true(tracer >= 0);
	if (tracer == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(2);
		jitmap_error err;
		errno = 0;
		jitmap_stopped *l = jitmap_stopped_open_pid(victim, NULL, &err);
		if (l)
			_exit(3);
		if (errno != EPERM || !strstr(err.reason, "Operation not permitted (another tracer, "
					       "another user, or /proc/sys/kernel/yama/ptrace_scope)"))
			_exit(4);
		/* Without stopping: the memory is not readable either. */
		const jitmap_stopped_opts o = opts_of(JITMAP_STOPPED_NO_STOP);
		l = jitmap_stopped_open_pid(victim, &o, &err);
		if (l || (errno != EACCES && errno != EPERM) || !strstr(err.reason, "another user"))
			_exit(5);
		_exit(0);
	}
	int status;
	assert_int_equal(waitpid(tracer, &status, 0), tracer);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	int tp;
	char st;
	proc_status(victim, &tp, &st);
	assert_int_equal(tp, 0);
	assert_true(ticking());
	reap(victim);
}


/* -- A lazy scan's images, read in batches --
 *
 * Built before fork (the child has them at the same addresses): a JIT descriptor and a list of
 * ENTRIES entries, each image a minimal ELF object whose .text is placed at CODE + i * 0x100,
 * spread over the heap with gaps between them; some images lie in a page unmapped before fork,
 * one starts before that page and runs into it, one is larger than a lazy scan glances at.
 * A lazy process over the live target (its reads of images batched) must say what the same
 * process says over a target that wraps the live one (not recognised: one read each). */

#define ENTRIES 1500
#define CODE UINT64_C(0x7e0000000000)

struct jit_desc {
	uint32_t version, action;
	uint64_t relevant, first;
};
struct jit_entry {
	uint64_t next, prev, addr, size;
};

static size_t make_image(uint8_t *b, size_t len, uint64_t code)
{
	static const char names[] = "\0.text\0.shstrtab";
	const size_t shoff = 64 + 64; /* after the header and .text's 64 bytes */
	memset(b, 0, len);
	Elf64_Ehdr eh = {.e_type = ET_REL, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			 .e_ehsize = sizeof(eh), .e_shoff = shoff, .e_shentsize = sizeof(Elf64_Shdr),
			 .e_shnum = 3, .e_shstrndx = 2};
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(b, &eh, sizeof(eh));
	const Elf64_Shdr sh[3] = {
		{0},
		{.sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
		 .sh_addr = code, .sh_offset = 64, .sh_size = 64, .sh_addralign = 16},
		{.sh_name = 7, .sh_type = SHT_STRTAB, .sh_offset = shoff + sizeof(sh),
		 .sh_size = sizeof(names)},
	};
	memcpy(b + shoff, sh, sizeof(sh));
	memcpy(b + shoff + sizeof(sh), names, sizeof(names));
	const size_t used = shoff + sizeof(sh) + sizeof(names);
	assert_true(used <= len);
	return used;
}

static int wrapped_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	const jitmap_target *t = ctx;
	return t->read_mem(t->ctx, addr, buf, len, why, why_len);
}

static void test_lazy_scan_batched(void **state)
{
	(void)state;
	static struct jit_desc desc;
	static struct jit_entry entries[ENTRIES];
	const size_t stride = 3000, size = 400, big = 80 << 10;
	uint8_t *heap = malloc(ENTRIES * stride + big);
	/* An unmapped page: a hole between two mapped ones. */
	uint8_t *pages = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			      -1, 0);
	assert_non_null(heap);
	assert_true(pages != MAP_FAILED);
	assert_int_equal(munmap(pages + 4096, 4096), 0);
	for (size_t i = 0; i < ENTRIES; i++) {
		uint8_t *img = heap + i * stride;
		uint64_t len = make_image(img, size, CODE + i * 0x100);
		if (i % 500 == 7) { /* in the hole */
			img = pages + 4096 + 8;
		} else if (i == 11) { /* from the page before the hole into it */
			memcpy(pages + 4096 - 200, img, 200);
			img = pages + 4096 - 200;
		} else if (i == 12) { /* too large to glance at: opened at scan */
			img = heap + ENTRIES * stride;
			make_image(img, big, CODE + i * 0x100);
			len = big;
		}
		entries[i] = (struct jit_entry){
			.next = i + 1 < ENTRIES ? (uint64_t)(uintptr_t)&entries[i + 1] : 0,
			.prev = i ? (uint64_t)(uintptr_t)&entries[i - 1] : 0,
			.addr = (uint64_t)(uintptr_t)img, .size = len};
	}
	desc = (struct jit_desc){1, 0, (uint64_t)(uintptr_t)&entries[0],
				 (uint64_t)(uintptr_t)&entries[0]};
	const pid_t pid = spawn(0, TICK);
	jitmap_error err;
	const jitmap_stopped_opts lo = opts_of(0);
	jitmap_stopped *l = jitmap_stopped_open_pid(pid, &lo, &err);
	assert_non_null(l);
	const jitmap_target live = jitmap_stopped_target(l);
	const jitmap_target one_by_one = {(void *)&live, NULL, wrapped_read};
	JITMAP_OPTS(const jitmap_process_opts, po, .flags = JITMAP_PROCESS_LAZY);
	jitmap_process *a = jitmap_process_new(&live, &po), *b = jitmap_process_new(&one_by_one, &po);
	assert_non_null(a);
	assert_non_null(b);
	for (int k = 0; k < 2; k++) {
		jitmap_process *p = k ? b : a;
		assert_int_equal(jitmap_process_scan_begin(p), 0);
		assert_int_equal(jitmap_process_scan_descriptor(p, (uint64_t)(uintptr_t)&desc, "t"), 0);
		assert_int_equal(jitmap_process_scan_end(p), 0);
	}
	assert_int_equal(jitmap_process_num_sources(a), ENTRIES);
	assert_int_equal(jitmap_process_num_sources(b), ENTRIES);
	size_t unreadable = 0;
	for (size_t i = 0; i < ENTRIES; i++) {
		jitmap_source_info x = {.sz = sizeof(x)}, y = {.sz = sizeof(y)};
		assert_int_equal(jitmap_process_source(a, i, &x), 0);
		assert_int_equal(jitmap_process_source(b, i, &y), 0);
		assert_int_equal(x.num_problems, y.num_problems);
		for (size_t k = 0; k < x.num_problems; k++)
			assert_string_equal(jitmap_process_source_problem(a, i, k),
					    jitmap_process_source_problem(b, i, k));
		unreadable += x.num_problems > 0;
		/* Glanced at, not opened, unless it is the large one or unreadable. */
		if (i != 12 && !x.num_problems && x.image)
			fail_msg("entry %zu was opened at the scan", i);
		jitmap_code_info ca, cb;
		const uint64_t pc = CODE + i * 0x100 + 5;
		const int ra = jitmap_process_code_at(a, pc, &ca), rb = jitmap_process_code_at(b, pc, &cb);
		assert_int_equal(ra, rb);
		assert_int_equal(ra, x.num_problems ? -ENOENT : 0);
		if (!ra) {
			assert_int_equal(ca.lo, cb.lo);
			assert_int_equal(ca.hi, cb.hi);
			assert_int_equal(ca.lo, CODE + i * 0x100);
			assert_non_null(ca.image);
		}
	}
	assert_int_equal(unreadable, 3 + 1); /* entries 7, 507 and 1007 in the hole; 11 into it */
	jitmap_process_free(a);
	jitmap_process_free(b);
	jitmap_stopped_free(l);
	reap(pid);
	munmap(pages, 4096);
	munmap(pages + 2 * 4096, 4096);
	free(heap);
}

/* -- Mappings: where code can be, and the file a process maps as it maps it -- */

static int copy_to(const char *from, const char *to)
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
	return rc ? rc : chmod(to, 0644);
}

/* A package upgrade: a new file written beside, renamed over the path. */
static int replace(const char *path, const char *dir)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s/upgrade", dir);
	return copy_to("/bin/true", tmp) || rename(tmp, path) ? -1 : 0;
}

static off_t size_of_fd(int fd)
{
	struct stat st;
	return fstat(fd, &st) ? -1 : st.st_size;
}

/* As nobody, with a child that maps `lib` (both nobody: no map_files). 0 when all held,
 * else the number of the check that failed. */
static int unprivileged_mapped_file(const char *dir, const char *lib, off_t lib_size)
{
	if (setgid(65534) || setuid(65534))
		return 10;
	int ready[2];
	if (pipe(ready))
		return 11;
	const pid_t victim = fork();
	if (victim < 0)
		return 12;
	if (victim == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_DUMPABLE, 1); /* setuid cleared it: a tracer of the same user needs it */
		const int fd = open(lib, O_RDONLY);
		void *m = fd < 0 ? MAP_FAILED : mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE,
						    fd, 0);
		uint64_t addr = m == MAP_FAILED ? 0 : (uint64_t)(uintptr_t)m;
		if (write(ready[1], &addr, sizeof(addr)) != sizeof(addr))
			_exit(1);
		for (;;)
			pause();
	}
	uint64_t addr = 0;
	if (read(ready[0], &addr, sizeof(addr)) != sizeof(addr) || !addr)
		return 13;
	int rc = 0;
	char path[PATH_MAX], why[512], want[PATH_MAX + 32];
	jitmap_error err;
	jitmap_stopped *l = jitmap_stopped_open_pid(victim, NULL, &err);
	if (!l) {
		rc = 14;
		goto out;
	}
	/* map_files is root's: the path, as the process sees it (through its root only where
	 * its mount namespace or root is not ours: here they are, so the path itself). */
	int fd = jitmap_stopped_mapped_file(l, addr, path, sizeof(path), why, sizeof(why));
	char root[64];
	if (jitmap_pid_root((int)victim, root, sizeof(root)) != 0)
		rc = 19;
	snprintf(want, sizeof(want), "%s", lib);
	if (fd < 0 || strcmp(path, want) || size_of_fd(fd) != lib_size)
		rc = 15;
	if (fd >= 0)
		close(fd);
	jitmap_stopped_free(l);
	/* Upgraded under it: the path names another file now; the mapping cannot be opened. */
	if (!rc && replace(lib, dir))
		rc = 16;
	l = rc ? NULL : jitmap_stopped_open_pid(victim, NULL, &err);
	if (!rc && !l)
		rc = 17;
	if (l) {
		fd = jitmap_stopped_mapped_file(l, addr, path, sizeof(path), why, sizeof(why));
		if (fd != -ESTALE || !strstr(why, "was deleted since the process mapped it") ||
		    !strstr(why, "cannot be opened (Operation not permitted)"))
			rc = 18;
		if (fd >= 0)
			close(fd);
		jitmap_stopped_free(l);
	}
out:
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
	return rc;
}

static void test_mappings(void **state)
{
	(void)state;
	char dir[] = "/tmp/jitmap-test-live.XXXXXX";
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0777), 0);
	char lib[PATH_MAX], self[PATH_MAX];
	snprintf(lib, sizeof(lib), "%s/libmapped.so", dir);
	const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = 0;
	assert_int_equal(copy_to(self, lib), 0);
	struct stat st;
	assert_int_equal(stat(lib, &st), 0);
	const off_t lib_size = st.st_size;
	/* Mapped before the fork: the child has it at the same address. */
	int fd = open(lib, O_RDONLY);
	assert_true(fd >= 0);
	uint8_t *code = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	assert_true(code != MAP_FAILED);
	close(fd);
	const pid_t pid = spawn(0, TICK);
	munmap(code, 8192);
	jitmap_error err;
	jitmap_stopped *l = jitmap_stopped_open_pid(pid, NULL, &err);
	assert_non_null(l);
	char why[512], path[PATH_MAX], want[PATH_MAX];
	const uint64_t at = (uint64_t)(uintptr_t)code + 100;
	assert_int_equal(jitmap_stopped_code_at(l, at, why, sizeof(why)), 1);
	assert_int_equal(jitmap_stopped_code_at(l, (uint64_t)(uintptr_t)pattern, why, sizeof(why)), 0);
	assert_contains(why, "rw-p mapping");
	assert_int_equal(jitmap_stopped_code_at(l, 0x10, why, sizeof(why)), 0);
	assert_contains(why, "0x10 is in no mapping of the process");
	assert_int_equal(jitmap_stopped_code_at(NULL, 0x10, why, sizeof(why)), -EINVAL);
	/* No file on the stack. */
	assert_int_equal(jitmap_stopped_mapped_file(l, (uint64_t)(uintptr_t)&at, path, sizeof(path),
						 why, sizeof(why)), -ENOENT);
	assert_contains(why, "no file is mapped at");

	/* The mapping itself (root may open /proc/PID/map_files), before and after an upgrade
	 * replaced the file at its path. */
	snprintf(want, sizeof(want), "/proc/%d/map_files/", (int)pid);
	for (int upgraded = 0; upgraded < 2; upgraded++) {
		if (upgraded) {
			jitmap_stopped_free(l);
			assert_int_equal(replace(lib, dir), 0);
			l = jitmap_stopped_open_pid(pid, NULL, &err);
			assert_non_null(l);
		}
		fd = jitmap_stopped_mapped_file(l, at, path, sizeof(path), why, sizeof(why));
		if (geteuid() != 0) {
			assert_true(fd >= 0 || upgraded);
		} else {
			if (fd < 0)
				fail_msg("upgraded %d: %s", upgraded, why);
			assert_int_equal(strncmp(path, want, strlen(want)), 0);
			assert_int_equal(size_of_fd(fd), lib_size); /* not /bin/true's */
		}
		if (fd >= 0)
			close(fd);
	}
	jitmap_stopped_free(l);
	reap(pid);

	/* Without map_files (not root): the path through the process's root, and an upgraded
	 * file refused with the reason. */
	if (geteuid() == 0) {
		assert_int_equal(copy_to(self, lib), 0);
		const pid_t harness = fork();
		assert_true(harness >= 0);
		if (harness == 0)
			_exit(unprivileged_mapped_file(dir, lib, lib_size));
		int status;
		assert_int_equal(waitpid(harness, &status, 0), harness);
		assert_true(WIFEXITED(status));
		if (WEXITSTATUS(status))
			fail_msg("as nobody: check %d failed", WEXITSTATUS(status));
	}
	unlink(lib);
	rmdir(dir);
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
		cmocka_unit_test(test_stop_read_detach),
		cmocka_unit_test(test_zombie_leader),
		cmocka_unit_test(test_thread_cap),
		cmocka_unit_test(test_group_stop),
		cmocka_unit_test(test_signal_given_back),
		cmocka_unit_test(test_no_stop),
		cmocka_unit_test(test_captured),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_other_user),
		cmocka_unit_test(test_lazy_scan_batched),
		cmocka_unit_test(test_mappings),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
