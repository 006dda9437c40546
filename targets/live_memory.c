/* live_memory.c: a live process's memory (include/jitmap/stopped.h): /proc/PID/mem through
 * the page cache (pagecache.c), pages kept while the threads are stopped; each thread's
 * stack as it was captured (JITMAP_LIVE_BY_THREAD, JITMAP_LIVE_SNAPSHOT), so that a value is
 * never read after its thread ran again; and many reads at once through process_vm_readv.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "live_internal.h"

/* -- Reads -- */

long jitmap__live_mem_pread(void *ctx, void *buf, size_t len, uint64_t addr)
{
	const jitmap__live *l = ctx;
	return (long)pread(l->mem_fd, buf, len, (off_t)addr);
}

static int live_read_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			 size_t why_len)
{
	jitmap__live *l = ctx;
	return jitmap__pagecache_read(&l->cache, addr, buf, len, why, why_len);
}

/* Whether [addr, addr + len) touches thread `t`'s stack mapping. */
static bool on_its_stack(const struct jitmap__thread *t, uint64_t addr, size_t len)
{
	return len && addr < t->map_hi && (len > UINT64_MAX - addr || addr + len > t->map_lo);
}

/* A read of thread `t`'s captured stack: 1 when it lies within the capture (copied), 0 when
 * it does not touch the thread's stack mapping (`stack_only`: 0 never: every read outside
 * fails), else -EFAULT with `why`. A read of its stack above the capture is also the
 * thread's status (past_copy: the stack cut by the copy, stopped.h), not only words. */
static int captured_read(struct jitmap__thread *t, uint64_t addr, void *buf, size_t len,
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
	if (on_stack && t->stack && addr >= t->stack_lo && !t->pub.past_copy)
		t->pub.past_copy = addr > t->stack_hi ? addr : t->stack_hi; /* above the copy */
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
	struct jitmap__thread *t = ctx;
	const jitmap__live *l = t->owner;
	if (l->flags & JITMAP__LIVE_CAPTURED) {
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
	struct jitmap__thread *t = ctx;
	jitmap__live *l = t->owner;
	const int rc = captured_read(t, addr, buf, len, why, why_len, true);
	if (rc > 0)
		return 0;
	if (on_its_stack(t, addr, len))
		return rc; /* its stack (an executable one too): the copy only */
	const struct jitmap__mapping *m = jitmap__live_mapping_now(l, addr);
	if (m && m->perms[2] == 'x' && len <= m->end - addr)
		return live_read_mem(l, addr, buf, len, why, why_len);
	return rc;
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
	    (((const jitmap__live *)((const struct jitmap__thread *)t->ctx)->owner)->flags &
	     JITMAP__LIVE_CAPTURED))
		return -ENOTSUP; /* its stack is the capture's: read_mem's */
	const jitmap__live *l = t->read_mem == live_read_mem
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

jitmap_target jitmap__live_target(jitmap__live *l)
{
	return (jitmap_target){.ctx = l, .read_reg = NULL, .read_mem = live_read_mem};
}

jitmap_target jitmap__live_thread_target(jitmap__live *l, size_t i)
{
	if (i >= l->threads.n)
		return (jitmap_target){0};
	return (jitmap_target){.ctx = l->threads.v[i], .read_reg = jitmap__thread_read_reg,
			       .read_mem = thread_read_mem};
}

jitmap_target jitmap__live_thread_stack_target(jitmap__live *l, size_t i)
{
	if (i >= l->threads.n || !(l->flags & JITMAP__LIVE_CAPTURED))
		return jitmap__live_thread_target(l, i);
	return (jitmap_target){.ctx = l->threads.v[i], .read_reg = jitmap__thread_read_reg,
			       .read_mem = stack_read_mem};
}
