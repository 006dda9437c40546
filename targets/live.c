/* live.c: a live Linux process (see include/jitmap/live.h): its threads stopped with ptrace,
 * their registers, and its memory through /proc/PID/mem and the page cache (pagecache.c).
 *
 * Stopping: PTRACE_SEIZE, then PTRACE_INTERRUPT and a wait for the stop, thread by thread in
 * /proc/PID/task order; a second round picks up the threads started during the first, until a
 * round adds none (or max_rounds). PTRACE_SEIZE rather than PTRACE_ATTACH: no SIGSTOP is sent,
 * a group-stop stays the process's own, and nothing is left for the program to see.
 *
 * By thread (JITMAP_LIVE_BY_THREAD): each thread is stopped, read, its stack copied and let go
 * (PTRACE_DETACH) before the next is seized, so the process as a whole never stops, as with
 * eu-stack; what is read later comes from the running process, but for the stacks copied.
 *
 * What a stop can be (ptrace(2), "Stopped states"): the interrupt's own stop and a group-stop
 * are PTRACE_EVENT_STOP (status >> 16); a stop with 0 there is a signal-delivery stop, the
 * signal held back until the tracer resumes the thread: it is given back at PTRACE_DETACH,
 * or the program would lose it.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <elf.h> /* NT_PRSTATUS: the regset PTRACE_GETREGSET names */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "jitmap/live.h"

#define DEFAULT_MAX_THREADS 65536
#define DEFAULT_MAX_ROUNDS 16
#define DEFAULT_STACK_BYTES (1u << 20)
/* The modes whose stacks are copied, and whose threads run once open returns. */
#define CAPTURED (JITMAP_LIVE_BY_THREAD | JITMAP_LIVE_SNAPSHOT)
#define MAX_GREGS 64      /* u64 words of pr_reg read (x86-64 has 27, AArch64 34, s390x 27) */
#define MAX_WARNINGS 8

#include "live_internal.h"

/* -- Small helpers -- */

static pid_t current_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static bool interrupted(const jitmap_live *l)
{
	return l->interrupt && *l->interrupt;
}

static void warn(jitmap_live *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(jitmap_live *l, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	jitmap__vproblem(&l->warnings, MAX_WARNINGS, fmt, ap);
	va_end(ap);
}

/* /proc/PID/task/TID/comm without its newline; "" when it cannot be read. */
static void read_comm(pid_t pid, pid_t tid, char *out, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	out[0] = 0;
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = 0;
	fclose(f);
}

/* Whether thread `tid` has exited (a zombie, or gone): Linux refuses to trace such a thread
 * with EPERM, the same answer as for a thread we may not trace. */
static bool thread_gone(pid_t pid, pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return errno == ENOENT || errno == ESRCH;
	const size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* "TID (comm) S ...": the name may hold anything, the state follows its last ')'. */
	const char *close = strrchr(buf, ')');
	return close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
}

/* -- Threads (threads.c holds them) -- */

static bool has_thread(const jitmap_live *l, pid_t tid)
{
	for (size_t i = 0; i < l->threads.n; i++)
		if (l->threads.v[i]->pub.tid == tid)
			return true;
	return false;
}

/* A stopped thread's registers: the kernel gives its general registers as a core's
 * NT_PRSTATUS holds them, and the architecture tables know their layout. */
static void read_regs(jitmap_live *l, struct jitmap__thread *t)
{
	uint64_t gregs[MAX_GREGS];
	struct iovec iov = {gregs, sizeof(gregs)};
	if (ptrace(PTRACE_GETREGSET, t->pub.tid, (void *)NT_PRSTATUS, &iov) != 0) {
		const int e = errno;
		if (e == ESRCH) /* it was killed since it stopped */
			jitmap__thread_failed(t, -ESRCH, "the thread exited while being read");
		else
			jitmap__thread_failed(t, -e, "its registers cannot be read: %s", strerror(e));
		return;
	}
	if (iov.iov_len > sizeof(gregs)) {
		jitmap__thread_failed(t, -EIO, "its registers cannot be read: the kernel gave %zu "
				      "bytes, more than the %zu asked", iov.iov_len, sizeof(gregs));
		return;
	}
	const int rc = jitmap__thread_set_regs(t, l->arch, (const uint8_t *)gregs, iov.iov_len);
	if (rc < 0)
		jitmap__thread_failed(t, rc, "its registers cannot be read: %s", strerror(-rc));
}

/* Wait for seized thread `t` to stop. `give_up`: return -EINTR when the caller's interrupt
 * flag is set and a signal woke the wait. 0 (stopped, or exited: see t->stopped). */
static int wait_stop(jitmap_live *l, struct jitmap__thread *t, bool give_up)
{
	int status;
	for (;;) {
		const pid_t r = waitpid(t->pub.tid, &status, __WALL);
		if (r == t->pub.tid)
			break;
		if (r < 0 && errno == EINTR) {
			if (give_up && interrupted(l))
				return -EINTR;
			continue;
		}
		t->attached = false; /* not our tracee any more (ECHILD) */
		return 0;
	}
	if (!WIFSTOPPED(status)) {
		t->attached = false; /* exited or killed, and reaped */
		return 0;
	}
	t->stopped = true;
	if ((status >> 16) == 0) /* a signal-delivery stop: the signal is given back */
		jitmap__thread_set_signal(t, WSTOPSIG(status));
	return 0;
}

/* Stop thread `t` and read it. 0 (the thread may have exited: see its error), -EINTR, or the
 * negative errno of a thread that may not be traced (with `err` filled). */
static int stop_thread(jitmap_live *l, struct jitmap__thread *t, jitmap_error *err)
{
	const pid_t tid = t->pub.tid;
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0) {
		const int e = errno;
		if (e == ESRCH || (e == EPERM && thread_gone(l->pid, tid))) {
			jitmap__thread_failed(t, -ESRCH, "the thread exited while being read");
			return 0;
		}
		return jitmap__fail(err, -e, 0, "cannot trace process %d (thread %d): %s%s",
				    (int)l->pid, (int)tid, strerror(e),
				    e == EPERM ? " (another tracer, another user, or "
						 "/proc/sys/kernel/yama/ptrace_scope)" : "");
	}
	t->attached = true;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0) {
		/* It is exiting: reap it if it is done. */
		int status;
		if (waitpid(tid, &status, __WALL | WNOHANG) == tid && !WIFSTOPPED(status))
			t->attached = false;
		jitmap__thread_failed(t, -ESRCH, "the thread exited while being read");
		return 0;
	}
	const int rc = wait_stop(l, t, true);
	if (rc)
		return rc;
	if (!t->stopped) {
		jitmap__thread_failed(t, -ESRCH, "the thread exited while being read");
		return 0;
	}
	read_regs(l, t);
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Up to `len` bytes at `addr` of the memory `fd` opens (-1: none): how many were read. */
static size_t read_all(int fd, uint8_t *buf, size_t len, uint64_t addr)
{
	size_t got = 0;
	while (fd >= 0 && got < len) {
		const ssize_t n = pread(fd, buf + got, len - got, (off_t)(addr + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

/* The mapping holding `addr` (the mappings read at the first need), or NULL, also when they
 * cannot be read. */
static const struct mapping *mapping_now(jitmap_live *l, uint64_t addr)
{
	return jitmap__live_read_mappings(l) ? NULL : jitmap__live_mapping_at(l, addr);
}

/* JITMAP_LIVE_BY_THREAD: a copy of stopped thread `t`'s stack, from its stack pointer (less
 * x86-64's red zone) up to the end of the mapping that holds it, stack_bytes at most. The
 * mappings are read again once when none holds the stack pointer (a thread started since
 * they were read). A stack that cannot be copied leaves the thread its registers: reads of
 * its stack then fail, naming why. */
static void capture_stack(jitmap_live *l, struct jitmap__thread *t)
{
	uint64_t sp;
	const int spno = jitmap_reg_sp(l->arch);
	if (t->pub.error || spno < 0 || jitmap__thread_reg(t, (unsigned)spno, &sp))
		return;
	const struct mapping *m = mapping_now(l, sp);
	if (!m) {
		jitmap__live_forget_mappings(l);
		m = mapping_now(l, sp);
	}
	if (!m)
		return; /* no mapping holds it: its reads fail as any unmapped address's */
	const uint64_t red = l->arch == JITMAP_ARCH_X86_64 ? 128 : 0;
	const uint64_t lo = sp - m->start > red ? sp - red : m->start;
	const uint64_t hi = m->end - sp > l->stack_bytes ? sp + l->stack_bytes : m->end;
	t->map_lo = m->start;
	t->map_hi = m->end;
	if (hi <= lo || !(t->stack = malloc((size_t)(hi - lo))))
		return;
	/* The process's memory; when its main thread has exited (a zombie: its mem gives
	 * nothing), this thread's. */
	size_t got = read_all(l->mem_fd, t->stack, (size_t)(hi - lo), lo);
	if (!got) {
		char task[96];
		snprintf(task, sizeof(task), "/proc/%d/task/%d/mem", (int)l->pid, (int)t->pub.tid);
		const int fd = open(task, O_RDONLY | O_CLOEXEC);
		got = read_all(fd, t->stack, (size_t)(hi - lo), lo);
		if (fd >= 0)
			close(fd);
	}
	if (!got) { /* unreadable: its reads say so */
		free(t->stack);
		t->stack = NULL;
		return;
	}
	t->stack_lo = lo;
	t->stack_hi = lo + got;
	t->stack_cut = hi < m->end && got == hi - lo; /* stopped by stack_bytes */
}

/* Let thread `t` go, if seized, with the signal its stop held back: 0, or the negative errno
 * of a PTRACE_DETACH that failed for another reason than the thread having exited. */
static int release_thread(jitmap_live *l, struct jitmap__thread *t)
{
	int rc = 0;
	if (!t->attached)
		return 0;
	/* Seized but interrupted before its stop was seen: PTRACE_DETACH wants it stopped,
	 * and it stops soon (the interrupt was sent). */
	if (!t->stopped)
		wait_stop(l, t, false);
	if (t->attached &&
	    ptrace(PTRACE_DETACH, t->pub.tid, NULL, (void *)(intptr_t)t->pub.signal) != 0 &&
	    errno != ESRCH)
		rc = -errno;
	t->attached = false;
	t->stopped = false;
	return rc;
}

/* Every thread of the process, in rounds while it starts more. 0, or a negative errno with
 * `err` filled. */
static int read_threads(jitmap_live *l, jitmap_error *err)
{
	char path[64];
	bool capped = false;
	unsigned round;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)l->pid);
	for (round = 0; round < l->max_rounds; round++) {
		if (interrupted(l))
			return jitmap__fail(err, -EINTR, 0, "interrupted");
		DIR *d = opendir(path);
		if (!d) {
			const int e = errno;
			if (e == ENOENT)
				return jitmap__fail(err, -ESRCH, 0, "process %d exited while being read",
						    (int)l->pid);
			return jitmap__fail(err, -e, 0, "process %d: %s", (int)l->pid, strerror(e));
		}
		bool added = false;
		struct dirent *de;
		int rc = 0;
		while (!rc && (de = readdir(d))) {
			if (!isdigit((unsigned char)de->d_name[0]))
				continue;
			char *end;
			errno = 0;
			const long v = strtol(de->d_name, &end, 10);
			if (errno || *end || v <= 0 || v > INT_MAX)
				continue;
			const pid_t tid = (pid_t)v;
			if (has_thread(l, tid))
				continue;
			if (l->threads.n >= l->max_threads) {
				capped = true;
				continue;
			}
			struct jitmap__thread *t = jitmap__threads_add(&l->threads, tid, l);
			if (!t) {
				rc = jitmap__fail(err, -ENOMEM, 0, "out of memory");
				break;
			}
			added = true;
			read_comm(l->pid, tid, t->name, sizeof(t->name));
			if (l->flags & JITMAP_LIVE_NO_STOP) {
				jitmap__thread_failed(t, -ENODATA, "the thread was not stopped "
					      "(JITMAP_LIVE_NO_STOP): its registers are not read");
			} else if (l->flags & JITMAP_LIVE_BY_THREAD) {
				const uint64_t t0 = now_ns();
				rc = stop_thread(l, t, err);
				if (t->stopped)
					capture_stack(l, t);
				(void)release_thread(l, t);
				t->stopped_ns = now_ns() - t0;
				jitmap__thread_publish(t);
			} else {
				rc = stop_thread(l, t, err);
			}
			if (!rc && interrupted(l))
				rc = jitmap__fail(err, -EINTR, 0, "interrupted");
		}
		closedir(d);
		if (rc == -EINTR)
			return jitmap__fail(err, -EINTR, 0, "interrupted");
		if (rc)
			return rc;
		if (!added)
			break;
	}
	if (round == l->max_rounds)
		warn(l, "the process kept starting threads: %zu read", l->threads.n);
	if (capped)
		warn(l, "the process has more than %zu threads: the others were not read",
		     l->max_threads);
	return 0;
}

/* -- Memory -- */

static long mem_pread(void *ctx, void *buf, size_t len, uint64_t addr)
{
	const jitmap_live *l = ctx;
	return (long)pread(l->mem_fd, buf, len, (off_t)addr);
}

static int live_read_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			 size_t why_len)
{
	jitmap_live *l = ctx;
	return jitmap__pagecache_read(&l->cache, addr, buf, len, why, why_len);
}

/* Whether [addr, addr + len) touches thread `t`'s stack mapping. */
static bool on_its_stack(const struct jitmap__thread *t, uint64_t addr, size_t len)
{
	return len && addr < t->map_hi && (len > UINT64_MAX - addr || addr + len > t->map_lo);
}

/* A read of thread `t`'s captured stack: 1 when it lies within the capture (copied), 0 when
 * it does not touch the thread's stack mapping (`stack_only`: 0 never: every read outside
 * fails), else -EFAULT with `why`. */
static int captured_read(const struct jitmap__thread *t, uint64_t addr, void *buf, size_t len,
			 char *why, size_t why_len, bool stack_only)
{
	if (t->stack && addr >= t->stack_lo && addr <= t->stack_hi &&
	    len <= t->stack_hi - addr) {
		memcpy(buf, t->stack + (addr - t->stack_lo), len);
		return 1;
	}
	const bool on_stack = on_its_stack(t, addr, len);
	if (!stack_only && !on_stack)
		return 0;
	if (why && why_len)
		snprintf(why, why_len, "0x%" PRIx64 " was not captured while thread %d was stopped "
			 "(%s)", addr, (int)t->pub.tid,
			 !on_stack ? "jitmap reads only its stack as it was then"
			 : !t->stack ? "its stack could not be read"
			 : addr < t->stack_lo ? "below its stack pointer" : "above the stack bytes captured");
	return -EFAULT;
}

static int thread_read_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			   size_t why_len)
{
	const struct jitmap__thread *t = ctx;
	const jitmap_live *l = t->owner;
	if (l->flags & CAPTURED) {
		const int rc = captured_read(t, addr, buf, len, why, why_len, false);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	return live_read_mem(t->owner, addr, buf, len, why, why_len);
}

/* The captured stack, and code: bytes of one executable mapping (a frame's instructions, a
 * call sequence), read as the process runs: code does not change as data does. */
static int stack_read_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			  size_t why_len)
{
	const struct jitmap__thread *t = ctx;
	jitmap_live *l = t->owner;
	const int rc = captured_read(t, addr, buf, len, why, why_len, true);
	if (rc > 0)
		return 0;
	if (on_its_stack(t, addr, len))
		return rc; /* its stack (an executable one too): the copy only */
	const struct mapping *m = mapping_now(l, addr);
	if (m && m->perms[2] == 'x' && len <= m->end - addr)
		return live_read_mem(l, addr, buf, len, why, why_len);
	return rc;
}

/* -- Opening and letting go -- */

/* /proc/PID/mem; when the main thread has exited (a zombie: its mem has no memory to give,
 * ESRCH), a thread's that runs. 0, or a negative errno with `err` filled. */
static int open_mem(jitmap_live *l, jitmap_error *err)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)l->pid);
	l->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	int e = l->mem_fd < 0 ? errno : 0;
	for (size_t i = 0; e == ESRCH && i < l->threads.n; i++) {
		const struct jitmap__thread *t = l->threads.v[i];
		if (t->pub.error == -ESRCH)
			continue;
		char task[96];
		snprintf(task, sizeof(task), "/proc/%d/task/%d/mem", (int)l->pid, (int)t->pub.tid);
		l->mem_fd = open(task, O_RDONLY | O_CLOEXEC);
		e = l->mem_fd < 0 ? errno : 0;
	}
	if (!e)
		return 0;
	if (e == ENOENT || e == ESRCH) {
		bool any = false; /* a thread that was there to stop: it exited meanwhile */
		for (size_t i = 0; i < l->threads.n; i++)
			any |= l->threads.v[i]->pub.error != -ESRCH;
		return jitmap__fail(err, -ESRCH, 0, any ? "process %d exited while being read"
							: "process %d has exited (a zombie)",
				    (int)l->pid);
	}
	return jitmap__fail(err, -e, 0, "%s: %s%s", path, strerror(e),
			    e == EACCES || e == EPERM ? " (another user, or "
							"/proc/sys/kernel/yama/ptrace_scope)" : "");
}

static jitmap_live *open_fail(jitmap_live *l, int code)
{
	jitmap_live_free(l);
	errno = -code;
	return NULL;
}

jitmap_live *jitmap_live_open(pid_t pid, const jitmap_live_opts *opts, jitmap_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	if (opts && opts->sz < sizeof(opts->sz))
		return open_fail(NULL, jitmap__fail(err, -EINVAL, 0, "jitmap_live_opts.sz is %zu",
						    opts->sz));
	if (opts && !JITMAP__OPTS_VALID(opts, stack_bytes))
		return open_fail(NULL, jitmap__fail(
				 err, -EINVAL, 0, "jitmap_live_opts has fields this library does "
				 "not know (set past byte %zu)",
				 JITMAP__OFFSETOFEND(jitmap_live_opts, stack_bytes)));
	if (pid <= 0)
		return open_fail(NULL, jitmap__fail(err, -EINVAL, 0, "%d is not a process ID",
						    (int)pid));
	jitmap_live *l = calloc(1, sizeof(*l));
	if (!l)
		return open_fail(NULL, jitmap__fail(err, -ENOMEM, 0, "out of memory"));
	l->pid = pid;
	l->tracer = current_tid();
	l->mem_fd = -1;
	l->max_threads = DEFAULT_MAX_THREADS;
	l->max_rounds = DEFAULT_MAX_ROUNDS;
	if (opts && JITMAP_OPTS_HAS(opts, max_threads) && opts->max_threads)
		l->max_threads = opts->max_threads;
	if (opts && JITMAP_OPTS_HAS(opts, max_rounds) && opts->max_rounds)
		l->max_rounds = opts->max_rounds;
	if (opts && JITMAP_OPTS_HAS(opts, flags))
		l->flags = opts->flags;
	if (opts && JITMAP_OPTS_HAS(opts, interrupt))
		l->interrupt = opts->interrupt;
	l->stack_bytes = DEFAULT_STACK_BYTES;
	if (opts && JITMAP_OPTS_HAS(opts, stack_bytes) && opts->stack_bytes)
		l->stack_bytes = opts->stack_bytes;
	if (l->flags & JITMAP_LIVE_NO_STOP)
		l->flags &= ~CAPTURED;
	if (l->flags & JITMAP_LIVE_BY_THREAD)
		l->flags &= ~JITMAP_LIVE_SNAPSHOT;
	/* A process this library can trace runs the host's code. */
	l->arch = jitmap_arch_host(&l->order);
	jitmap__threads_init(&l->threads, false, l->order);
	read_comm(pid, pid, l->name, sizeof(l->name));

	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) != 0) {
		const int e = errno;
		if (e == ENOENT)
			return open_fail(l, jitmap__fail(err, -ESRCH, 0, "no process %d", (int)pid));
		return open_fail(l, jitmap__fail(err, -e, 0, "process %d: %s", (int)pid,
						 strerror(e)));
	}
	if (!(l->flags & JITMAP_LIVE_NO_STOP) && pid == getpid())
		return open_fail(l, jitmap__fail(err, -EPERM, 0, "process %d is the calling process: "
						 "its threads cannot be stopped from within",
						 (int)pid));
	int rc = 0;
	/* By thread, the stacks are read as each thread stops: the memory first (a process
	 * whose main thread has exited, a zombie, is read through a thread's, below). */
	if (l->flags & CAPTURED) {
		char mem[64];
		snprintf(mem, sizeof(mem), "/proc/%d/mem", (int)pid);
		l->mem_fd = open(mem, O_RDONLY | O_CLOEXEC);
		(void)jitmap__live_read_mappings(l); /* where the stacks are: read before any thread stops */
	}
	const uint64_t t0 = now_ns();
	rc = read_threads(l, err);
	if (rc)
		return open_fail(l, rc);
	if (l->mem_fd < 0 && (rc = open_mem(l, err)))
		return open_fail(l, rc);
	if (l->flags & JITMAP_LIVE_SNAPSHOT) {
		/* Every thread stopped at once: each stack copied, then all let go. */
		for (size_t i = 0; i < l->threads.n; i++)
			if (l->threads.v[i]->stopped)
				capture_stack(l, l->threads.v[i]);
		jitmap_live_detach(l);
		const uint64_t all = now_ns() - t0;
		for (size_t i = 0; i < l->threads.n; i++) {
			l->threads.v[i]->stopped_ns = l->threads.v[i]->pub.error ? 0 : all;
			jitmap__thread_publish(l->threads.v[i]);
		}
	}
	jitmap__pagecache_init(&l->cache, mem_pread, l,
			       !(l->flags & (JITMAP_LIVE_NO_STOP | CAPTURED)));
	return l;
}

int jitmap_live_detach(jitmap_live *l)
{
	if (!l)
		return 0;
	int rc = 0;
	bool owed = false;
	for (size_t i = 0; i < l->threads.n; i++)
		owed |= l->threads.v[i]->attached;
	if (owed && current_tid() != l->tracer)
		return -EPERM; /* Linux: only the thread that attached may detach */
	/* Memory may change from now on. */
	jitmap__pagecache_stop_keeping(&l->cache);
	for (size_t i = 0; i < l->threads.n; i++) {
		const int e = release_thread(l, l->threads.v[i]);
		if (e && !rc)
			rc = e;
	}
	return rc;
}

void jitmap_live_free(jitmap_live *l)
{
	if (!l)
		return;
	jitmap_live_detach(l);
	jitmap__threads_fini(&l->threads);
	jitmap__problems_free(&l->warnings);
	jitmap__pagecache_fini(&l->cache);
	if (l->mem_fd >= 0)
		close(l->mem_fd);
	for (size_t i = 0; i < l->nmaps; i++)
		free(l->maps[i].path);
	free(l->maps);
	free(l);
}

/* -- Accessors -- */

pid_t jitmap_live_pid(const jitmap_live *l) { return l->pid; }
const char *jitmap_live_name(const jitmap_live *l) { return l->name; }
jitmap_arch jitmap_live_arch(const jitmap_live *l) { return l->arch; }
jitmap_byte_order jitmap_live_byte_order(const jitmap_live *l) { return l->order; }
size_t jitmap_live_num_threads(const jitmap_live *l) { return l->threads.n; }

bool jitmap_live_stopped(const jitmap_live *l)
{
	for (size_t i = 0; i < l->threads.n; i++)
		if (l->threads.v[i]->stopped)
			return true;
	return false;
}

const jitmap_live_thread_info *jitmap_live_thread(const jitmap_live *l, size_t i)
{
	return i < l->threads.n ? &l->threads.v[i]->live_view : NULL;
}

int jitmap_live_thread_reg(const jitmap_live_thread_info *info, unsigned regno, uint64_t *value)
{
	if (!info)
		return -ENOENT;
	/* a view of the thread (threads.c) */
	const struct jitmap__thread *t = (const void *)((const char *)info -
							offsetof(struct jitmap__thread, live_view));
	return jitmap__thread_reg(t, regno, value);
}

struct jitmap__threads *jitmap__live_threads(jitmap_live *l)
{
	return &l->threads;
}

/* -- Many reads at once --
 *
 * A lazy scan of a JIT with thousands of entries reads thousands of small images, scattered
 * over the heap: one pread of /proc/PID/mem each. process_vm_readv(2) takes them 1024 at a
 * time. A short count stops in or at the first element it could not read whole: the elements
 * before it are done, that one is left to read_mem (to say why), and the call goes on after
 * it (EFAULT with nothing read: the first element is that one). */

#define READ_MANY_IOV 1024 /* Linux's UIO_MAXIOV */

int jitmap__read_many(const jitmap_target *t, struct jitmap__read *r, size_t n)
{
	if (!t || (t->read_mem != live_read_mem && t->read_mem != thread_read_mem))
		return -ENOTSUP;
	if (t->read_mem == thread_read_mem &&
	    (((const jitmap_live *)((const struct jitmap__thread *)t->ctx)->owner)->flags &
	     CAPTURED))
		return -ENOTSUP; /* its stack is the capture's: read_mem's */
	const jitmap_live *l = t->read_mem == live_read_mem
				       ? t->ctx : ((const struct jitmap__thread *)t->ctx)->owner;
	struct iovec local[READ_MANY_IOV], remote[READ_MANY_IOV];
	size_t at[READ_MANY_IOV];
	size_t i = 0;
	for (size_t k = 0; k < n; k++)
		r[k].done = false;
	while (i < n) {
		size_t m = 0;
		for (; i < n && m < READ_MANY_IOV; i++) {
			/* pread's rule (pagecache.c): nothing above INT64_MAX */
			if (!r[i].len || r[i].addr > (uint64_t)INT64_MAX ||
			    r[i].len > (uint64_t)INT64_MAX - r[i].addr)
				continue;
			local[m] = (struct iovec){r[i].buf, r[i].len};
			remote[m] = (struct iovec){(void *)(uintptr_t)r[i].addr, r[i].len};
			at[m++] = i;
		}
		size_t first = 0;
		while (first < m) {
			const ssize_t got = process_vm_readv(l->pid, local + first, m - first,
							     remote + first, m - first, 0);
			if (got < 0 && errno != EFAULT)
				return 0; /* refused (ESRCH, EPERM, ENOSYS, ...): read_mem's to say */
			size_t left = got < 0 ? 0 : (size_t)got; /* EFAULT: the first is unreadable */
			while (first < m && left >= local[first].iov_len) {
				left -= local[first].iov_len;
				r[at[first++]].done = true;
			}
			first++; /* the element it stopped at (if any): read_mem's */
		}
	}
	return 0;
}

jitmap_target jitmap_live_target(jitmap_live *l)
{
	return (jitmap_target){.ctx = l, .read_reg = NULL, .read_mem = live_read_mem};
}

jitmap_target jitmap_live_thread_target(jitmap_live *l, size_t i)
{
	if (i >= l->threads.n)
		return (jitmap_target){0};
	return (jitmap_target){.ctx = l->threads.v[i], .read_reg = jitmap__thread_read_reg,
			       .read_mem = thread_read_mem};
}

jitmap_target jitmap_live_thread_stack_target(jitmap_live *l, size_t i)
{
	if (i >= l->threads.n || !(l->flags & CAPTURED))
		return jitmap_live_thread_target(l, i);
	return (jitmap_target){.ctx = l->threads.v[i], .read_reg = jitmap__thread_read_reg,
			       .read_mem = stack_read_mem};
}

const char *jitmap_live_warning(const jitmap_live *l, size_t i)
{
	return jitmap__problem_at(&l->warnings, i);
}

/* -- The files mapped (their mappings: live_maps.c) -- */

/* Whether the file open at `fd` is the one mapping `m` maps: the device and inode the kernel
 * lists for it, else (a file system whose stat() and maps disagree on the device, as
 * overlayfs may) the build ID of its first page in memory. */
static bool is_mapped_file(jitmap_live *l, const struct mapping *m, int fd)
{
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		return false;
	if ((uint64_t)st.st_ino == m->inode && major(st.st_dev) == m->dev_major &&
	    minor(st.st_dev) == m->dev_minor)
		return true;
	/* The mapping at offset 0 of the same file holds its headers. */
	const struct mapping *head = NULL;
	for (size_t i = 0; i < l->nmaps && !head; i++)
		if (l->maps[i].offset == 0 && l->maps[i].inode == m->inode && l->maps[i].path &&
		    !strcmp(l->maps[i].path, m->path))
			head = &l->maps[i];
	uint8_t want[JITMAP__MAX_BUILD_ID], got[JITMAP__MAX_BUILD_ID];
	const jitmap_target t = jitmap_live_target(l);
	const size_t want_len = head ? jitmap__target_build_id(&t, head->start, want) : 0;
	const size_t got_len = want_len ? jitmap__fd_build_id(fd, got) : 0;
	return want_len && got_len == want_len && !memcmp(want, got, want_len) &&
	       lseek(fd, 0, SEEK_SET) == 0;
}

int jitmap_live_mapped_file(jitmap_live *l, uint64_t addr, char *path, size_t path_len,
			    char *why, size_t why_len)
{
	if (!l || !path || !path_len)
		return -EINVAL;
	path[0] = 0;
	int rc = jitmap__live_read_mappings(l);
	if (rc) {
		snprintf(why, why_len, "/proc/%d/maps cannot be read: %s", (int)l->pid,
			 strerror(-rc));
		return rc;
	}
	const struct mapping *m = jitmap__live_mapping_at(l, addr);
	if (!m || !m->path || m->path[0] != '/' || !m->inode) {
		snprintf(why, why_len, "no file is mapped at 0x%" PRIx64, addr);
		return -ENOENT;
	}
	/* The file the process maps, whatever its path names now (root, or
	 * CAP_CHECKPOINT_RESTORE: Linux lets no one else open these links). */
	char link[96];
	snprintf(link, sizeof(link), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)l->pid,
		 m->start, m->end);
	int fd = open(link, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd >= 0 && is_mapped_file(l, m, fd)) {
		snprintf(path, path_len, "%s", link);
		return fd;
	}
	if (fd >= 0)
		close(fd);
	const int link_errno = fd < 0 ? errno : 0;
	if (!m->deleted) {
		/* The path as the process sees it: through /proc/PID/root where its mount
		 * namespace or root is not ours (a container's /usr), never a file of ours by
		 * the same name in its place. */
		char root[64], in_root[PATH_MAX];
		if (jitmap_pid_root((int)l->pid, root, sizeof(root)) < 0)
			root[0] = 0; /* gone: the open below says so */
		snprintf(in_root, sizeof(in_root), "%s%s", root, m->path);
		fd = open(in_root, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd >= 0 && is_mapped_file(l, m, fd)) {
			snprintf(path, path_len, "%s", in_root);
			return fd;
		}
		if (fd >= 0) {
			close(fd);
			snprintf(why, why_len, "%s is not the file the process mapped (another inode "
				 "and build), and %s cannot be opened (%s)", in_root, link,
				 strerror(link_errno ? link_errno : EINVAL));
			return -ESTALE;
		}
		const int open_errno = errno;
		snprintf(why, why_len, "%s cannot be opened (%s)", in_root, strerror(open_errno));
		return -open_errno;
	}
	snprintf(why, why_len, "%s was deleted since the process mapped it, and %s cannot be "
		 "opened (%s)", m->path, link, strerror(link_errno ? link_errno : EINVAL));
	return -ESTALE;
}

size_t jitmap_live_build_id_at(jitmap_live *l, uint64_t addr, uint8_t *out, size_t len)
{
	if (!l || !out || jitmap__live_read_mappings(l))
		return 0;
	const struct mapping *m = jitmap__live_mapping_at(l, addr);
	if (!m || !m->path || !m->inode)
		return 0;
	/* The same file's mapping at offset 0 holds its headers. */
	const struct mapping *head = NULL;
	for (size_t i = 0; i < l->nmaps && !head; i++)
		if (l->maps[i].offset == 0 && l->maps[i].inode == m->inode &&
		    l->maps[i].dev_major == m->dev_major && l->maps[i].dev_minor == m->dev_minor)
			head = &l->maps[i];
	uint8_t id[JITMAP__MAX_BUILD_ID];
	const jitmap_target t = jitmap_live_target(l);
	const size_t n = head ? jitmap__target_build_id(&t, head->start, id) : 0;
	if (!n || n > len)
		return 0;
	memcpy(out, id, n);
	return n;
}
