/* pagecache.h (internal): a process's memory read through a pread(2)-like call, by the page,
 * the pages kept while the process is stopped (reader/live.c over /proc/PID/mem; the fuzz
 * target tests/fuzz/fuzz_live.c over a fake one).
 *
 * The read call behaves as pread on /proc/PID/mem does: it returns the bytes read (fewer than
 * asked where a mapping ends), 0 when the process's memory is gone (it exited), or -1 with
 * errno set (EIO: the first byte is not mapped). Offsets are addresses; the kernel takes them
 * as off_t, so an address above INT64_MAX is never asked for.
 */
#ifndef JITMAP_PAGECACHE_H
#define JITMAP_PAGECACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JITMAP__PAGE 4096u
#define JITMAP__PAGE_SLOTS 256u /* 1 MiB, direct-mapped by page number */
/* Reads longer than this go to the read call whole: a stack or an image is read once. */
#define JITMAP__PAGE_MAX_KEPT_READ (4 * JITMAP__PAGE)

typedef long (*jitmap__pread_fn)(void *ctx, void *buf, size_t len, uint64_t addr);

struct jitmap__page {
	uint64_t number; /* address / JITMAP__PAGE */
	bool valid;
	uint8_t bytes[JITMAP__PAGE];
};

struct jitmap__pagecache {
	jitmap__pread_fn pread;
	void *ctx;
	bool keep;
	/* Allocated at first use: a walk of a few stacks touches tens of pages, not 256. */
	struct jitmap__page *slots[JITMAP__PAGE_SLOTS];
	uint64_t calls; /* of pread: for tests */
};

/* Read through `fn` (with `ctx`), keeping pages when `keep`. 0 (a page that cannot be
 * allocated later is read without being kept). */
int jitmap__pagecache_init(struct jitmap__pagecache *c, jitmap__pread_fn fn, void *ctx,
			   bool keep);
/* Forget every page and keep none from now on (the process runs again). */
void jitmap__pagecache_stop_keeping(struct jitmap__pagecache *c);
void jitmap__pagecache_fini(struct jitmap__pagecache *c);
/* `len` bytes at `addr` into `buf`: 0, or -EFAULT with the reason in `why` (the first address
 * that cannot be read and why, "the process exited while being read", or "not a user
 * address" for what off_t cannot name). `buf` may be partly written on failure. */
int jitmap__pagecache_read(struct jitmap__pagecache *c, uint64_t addr, void *buf, size_t len,
			   char *why, size_t why_len);

#endif /* JITMAP_PAGECACHE_H */
