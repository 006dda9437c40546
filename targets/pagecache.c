/* pagecache.c: a stopped process's memory, read by the page and kept (targets/internal.h says
 * how it is called).
 *
 * A JIT's entry list, its images (allocated near each other) and the stacks are read in many
 * small pieces; with the threads stopped, memory does not change, so each page costs one
 * system call. A page that cannot be read whole (a guard page, the end of a mapping that the
 * read reaches past) is not kept: what was asked is read alone, and fails or not on its own.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"


int jitmap__pagecache_init(struct jitmap__pagecache *c, jitmap__pread_fn fn, void *ctx, bool keep)
{
	memset(c, 0, sizeof(*c));
	c->pread = fn;
	c->ctx = ctx;
	c->keep = keep;
	return 0;
}

void jitmap__pagecache_stop_keeping(struct jitmap__pagecache *c)
{
	c->keep = false;
	for (size_t i = 0; i < JITMAP__PAGE_SLOTS; i++) {
		free(c->slots[i]);
		c->slots[i] = NULL;
	}
}

void jitmap__pagecache_fini(struct jitmap__pagecache *c)
{
	jitmap__pagecache_stop_keeping(c);
}

/* Every byte asked, through the read call, or the reason why not. */
static int read_direct(struct jitmap__pagecache *c, uint64_t addr, void *buf, size_t len,
		       char *why, size_t why_len)
{
	/* pread's offset is an off_t: an address above INT64_MAX has no name there (nor in a
	 * user address space). */
	if (addr > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - addr) {
		snprintf(why, why_len, "0x%" PRIx64 " is not a user address", addr);
		return -EFAULT;
	}
	size_t done = 0;
	while (done < len) {
		errno = 0;
		c->calls++;
		const long n = c->pread(c->ctx, (char *)buf + done, len - done, addr + done);
		if (n > 0 && (size_t)n <= len - done) {
			done += (size_t)n;
			continue;
		}
		const int e = errno;
		if (n == 0 || e == ESRCH) /* /proc/PID/mem of a process whose memory is gone */
			snprintf(why, why_len, "cannot read 0x%" PRIx64 ": the process exited while "
				 "being read", addr + done);
		else
			snprintf(why, why_len, "cannot read 0x%" PRIx64 ": %s", addr + done,
				 n > 0 ? "the system read more than asked" : strerror(e ? e : EIO));
		return -EFAULT;
	}
	return 0;
}

int jitmap__pagecache_read(struct jitmap__pagecache *c, uint64_t addr, void *buf, size_t len,
			   char *why, size_t why_len)
{
	if (!c->keep || !len || len > JITMAP__PAGE_MAX_KEPT_READ || addr > UINT64_MAX - len)
		return read_direct(c, addr, buf, len, why, why_len);
	uint8_t *out = buf;
	while (len) {
		const uint64_t number = addr / JITMAP__PAGE, off = addr % JITMAP__PAGE;
		const size_t n = len < JITMAP__PAGE - off ? len : (size_t)(JITMAP__PAGE - off);
		struct jitmap__page **slot = &c->slots[number % JITMAP__PAGE_SLOTS];
		if (!*slot && !(*slot = calloc(1, sizeof(**slot))))
			return read_direct(c, addr, out, len, why, why_len);
		struct jitmap__page *p = *slot;
		if (!p->valid || p->number != number) {
			p->valid = false;
			if (read_direct(c, number * JITMAP__PAGE, p->bytes, JITMAP__PAGE, why, why_len))
				return read_direct(c, addr, out, len, why, why_len);
			p->number = number;
			p->valid = true;
		}
		memcpy(out, p->bytes + off, n);
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}
