/* live.c: a live Linux process (see include/jitmap/stopped.h): its threads stopped with
 * ptrace, their registers and stacks read, and let go. Its memory is live_memory.c's, its
 * mappings and files live_maps.c's, its table of operations live_stopped.c's.
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
#define MAX_GREGS 64      /* u64 words of pr_reg read (x86-64 has 27, AArch64 34, s390x 27) */

#include "live_internal.h"

/* -- Small helpers -- */

static pid_t current_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static bool interrupted(const jitmap__live *l)
{
	return l->interrupt && *l->interrupt;
}

/* A warning with its status (JITMAP__WARN(JITMAP_PROBLEM_...), stopped.h's codes). */
static void warn(jitmap__live *l, uint8_t status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void warn(jitmap__live *l, uint8_t status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	jitmap__status_vproblem(&l->warnings, l->warn_status, JITMAP__LIVE_MAX_WARNINGS, status,
				fmt, ap);
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

static bool has_thread(const jitmap__live *l, pid_t tid)
{
	for (size_t i = 0; i < l->threads.n; i++)
		if (l->threads.v[i]->pub.tid == tid)
			return true;
	return false;
}

/* A stopped thread's registers: the kernel gives its general registers as a core's
 * NT_PRSTATUS holds them, and the architecture tables know their layout. */
static void read_regs(jitmap__live *l, struct jitmap__thread *t)
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
static int wait_stop(jitmap__live *l, struct jitmap__thread *t, bool give_up)
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
static int stop_thread(jitmap__live *l, struct jitmap__thread *t, jitmap_error *err)
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


/* JITMAP_LIVE_BY_THREAD: a copy of stopped thread `t`'s stack, from its stack pointer (less
 * x86-64's red zone) up to the end of the mapping that holds it, stack_bytes at most. The
 * mappings are read again once when none holds the stack pointer (a thread started since
 * they were read). A stack that cannot be copied leaves the thread its registers: reads of
 * its stack then fail, naming why. */
static void capture_stack(jitmap__live *l, struct jitmap__thread *t)
{
	uint64_t sp;
	const int spno = jitmap_reg_sp(l->arch);
	if (t->pub.error || spno < 0 || jitmap__thread_reg(t, (unsigned)spno, &sp))
		return;
	const struct jitmap__mapping *m = jitmap__live_mapping_now(l, sp);
	if (!m) {
		jitmap__live_forget_mappings(l);
		m = jitmap__live_mapping_now(l, sp);
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
static int release_thread(jitmap__live *l, struct jitmap__thread *t)
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
static int read_threads(jitmap__live *l, jitmap_error *err)
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
					      "(JITMAP_STOPPED_NO_STOP): its registers are not read");
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
		warn(l, JITMAP__WARN(JITMAP_PROBLEM_THREADS_LEFT),
		     "the process kept starting threads: %zu read", l->threads.n);
	if (capped)
		warn(l, JITMAP__WARN(JITMAP_PROBLEM_THREADS_LEFT),
		     "the process has more than %zu threads: the others were not read",
		     l->max_threads);
	return 0;
}

/* -- Opening and letting go -- */

/* /proc/PID/mem; when the main thread has exited (a zombie: its mem has no memory to give,
 * ESRCH), a thread's that runs. 0, or a negative errno with `err` filled. */
static int open_mem(jitmap__live *l, jitmap_error *err)
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

static jitmap__live *open_fail(jitmap__live *l, int code)
{
	jitmap__live_free(l);
	errno = -code;
	return NULL;
}

jitmap__live *jitmap__live_open(pid_t pid, const jitmap__live_opts *opts, jitmap_error *err)
{
	if (err)
		memset(err, 0, sizeof(*err));
	if (opts && opts->sz < sizeof(opts->sz))
		return open_fail(NULL, jitmap__fail(err, -EINVAL, 0, "jitmap__live_opts.sz is %zu",
						    opts->sz));
	if (opts && !JITMAP__OPTS_VALID(opts, stack_bytes))
		return open_fail(NULL, jitmap__fail(
				 err, -EINVAL, 0, "jitmap__live_opts has fields this library does "
				 "not know (set past byte %zu)",
				 JITMAP__OFFSETOFEND(jitmap__live_opts, stack_bytes)));
	if (pid <= 0)
		return open_fail(NULL, jitmap__fail(err, -EINVAL, 0, "%d is not a process ID",
						    (int)pid));
	jitmap__live *l = calloc(1, sizeof(*l));
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
		l->flags &= ~JITMAP__LIVE_CAPTURED;
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
	if (l->flags & JITMAP__LIVE_CAPTURED) {
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
		jitmap__live_detach(l);
		const uint64_t all = now_ns() - t0;
		for (size_t i = 0; i < l->threads.n; i++) {
			l->threads.v[i]->stopped_ns = l->threads.v[i]->pub.error ? 0 : all;
			jitmap__thread_publish(l->threads.v[i]);
		}
	}
	jitmap__pagecache_init(&l->cache, jitmap__live_mem_pread, l,
			       !(l->flags & (JITMAP_LIVE_NO_STOP | JITMAP__LIVE_CAPTURED)));
	return l;
}

int jitmap__live_detach(jitmap__live *l)
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

void jitmap__live_free(jitmap__live *l)
{
	if (!l)
		return;
	jitmap__live_detach(l);
	jitmap__threads_fini(&l->threads);
	jitmap__problems_free(&l->warnings);
	jitmap__pagecache_fini(&l->cache);
	if (l->mem_fd >= 0)
		close(l->mem_fd);
	for (size_t i = 0; i < l->nmaps; i++)
		free(l->maps[i].path);
	free(l->maps);
	for (size_t i = 0; i < l->nfiles; i++)
		free((char *)l->files[i].path);
	free(l->files);
	free(l->auxv);
	free(l);
}
