/* fuzz_live: libFuzzer target for a live process's memory path (targets/pagecache.c, which
 * a live process's jitmap_stopped_target reads /proc/PID/mem through), over a fake /proc/PID/mem.
 *
 * The fake behaves as the kernel's: a read returns the bytes up to the first unmapped one
 * (fewer than asked where a mapping ends), -1 with EIO when the first byte is not mapped, 0
 * once the process has exited; and, when the input asks, reads that stop early for no reason
 * (the caller must loop). Every byte's value is a function of its address, so each answer is
 * checked against the truth: a read succeeds exactly when every byte is mapped (and the
 * process has not exited before it was read), with the right bytes; a failure says why, in a
 * terminated string; a read of pages the cache holds costs no read of the fake; the fake is
 * never asked for an offset off_t cannot hold, nor for 0 bytes.
 *
 * Input: [flags][exit after][short every][ranges] then [start u16][len u16] per range (start
 * x 32, len x 2 bytes from the base: up to 2 MiB + 128 KiB, so that the 256 page slots of the
 * cache collide), then reads of 6 bytes: [op][offset u24][len u16], at most 64.
 *   flags: bit 0 keep pages (a stopped process); bit 1 the process exits after "exit after"
 *   reads of the fake; bits 2-3 the base: 0x10000, the top of a 47-bit address space, one
 *   where INT64_MAX falls inside, one where the address space wraps; bit 4 short reads every
 *   "short every" reads; bits 5-6 why_len (1, 8, 48, 160).
 *   op: bits 0-1 the length (len % 8 KiB, len % 64, about the longest read the cache keeps
 *   (16 KiB - 16 + len % 48), 0); bit 2 read it twice; bit 3 stop keeping pages first (as
 *   jitmap_stopped_detach does); offsets are taken modulo 4 MiB.
 * Seeds: make-corpus.sh writes OUTDIR/live.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../targets/internal.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_RANGES 16
#define MAX_READS 64
#define SPAN (UINT64_C(1) << 22)
#define MAX_LEN (UINT64_C(1) << 15)

struct range {
	uint64_t start, end; /* from the base */
};

struct fake {
	uint64_t base;
	struct range ranges[MAX_RANGES];
	size_t nranges;
	bool exits, exited, shorts;
	unsigned exit_after, short_every;
	uint64_t calls;
};

/* The byte at base + i is truth[i]: what is mapped lies within SPAN of the base. */
static uint8_t truth[SPAN + MAX_LEN];

static void make_truth(void)
{
	static bool made;
	for (uint64_t i = 0; !made && i < sizeof(truth); i++)
		truth[i] = (uint8_t)((i ^ (i >> 11) ^ (i >> 19)) * 131u + 7u);
	made = true;
}

/* How many bytes from `addr` on are mapped, one after the other (at most `cap`). */
static uint64_t mapped_run(const struct fake *f, uint64_t addr, uint64_t cap)
{
	const uint64_t rel = addr - f->base;
	uint64_t end = rel;
	for (bool grew = true; grew && end - rel < cap;) {
		grew = false;
		for (size_t i = 0; i < f->nranges; i++)
			if (f->ranges[i].start <= end && end < f->ranges[i].end) {
				end = f->ranges[i].end;
				grew = true;
			}
	}
	return end - rel < cap ? end - rel : cap;
}

static long fake_pread(void *ctx, void *buf, size_t len, uint64_t addr)
{
	struct fake *f = ctx;
	CHECK(len > 0);
	CHECK(addr <= (uint64_t)INT64_MAX && len <= (uint64_t)INT64_MAX - addr);
	f->calls++;
	if (f->exits && f->calls > f->exit_after)
		f->exited = true;
	if (f->exited)
		return 0;
	uint64_t n = mapped_run(f, addr, len);
	if (!n) {
		errno = EIO;
		return -1;
	}
	if (f->shorts && f->calls % f->short_every == 0 && n > 1)
		n = 1 + (f->calls * 7919u) % (n - 1);
	const uint64_t rel = addr - f->base;
	CHECK(rel < SPAN && n <= MAX_LEN);
	memcpy(buf, truth + rel, n);
	return (long)n;
}

static const uint64_t bases[4] = {
	UINT64_C(0x10000),
	UINT64_C(0x7fffffe00000),
	UINT64_C(0x7fffffffffe00000), /* INT64_MAX + 1 is base + 2 MiB */
	UINT64_C(0xffffffffffe00000), /* 2^64 is base + 2 MiB */
};
static const size_t why_lens[4] = {1, 8, 48, 160};

static uint8_t out[MAX_LEN + 64];

/* Whether every page of [addr, addr + len) is in the cache. */
static bool all_kept(const struct jitmap__pagecache *c, uint64_t addr, uint64_t len)
{
	if (!c->keep || !len || len > JITMAP__PAGE_MAX_KEPT_READ || addr > UINT64_MAX - len)
		return false;
	for (uint64_t p = addr / JITMAP__PAGE; p <= (addr + len - 1) / JITMAP__PAGE; p++) {
		const struct jitmap__page *pg = c->slots[p % JITMAP__PAGE_SLOTS];
		if (!pg || !pg->valid || pg->number != p)
			return false;
	}
	return true;
}

static void one_read(struct jitmap__pagecache *c, struct fake *f, uint64_t addr, uint64_t len,
		     size_t why_len)
{
	char why[160 + 16];
	memset(why, 0x55, sizeof(why));
	const bool exited_before = f->exited;
	const int rc = jitmap__pagecache_read(c, addr, out, (size_t)len, why, why_len);
	const bool user = addr <= (uint64_t)INT64_MAX && len <= (uint64_t)INT64_MAX - addr;
	const bool mapped = user && (len == 0 || mapped_run(f, addr, len) == len);
	if (rc == 0) {
		CHECK(mapped);
		CHECK(len == 0 || !exited_before || all_kept(c, addr, len));
		CHECK(len == 0 || (addr - f->base < SPAN && !memcmp(out, truth + (addr - f->base), len)));
		return;
	}
	CHECK(rc == -EFAULT);
	/* A failure is right when a byte is not mapped, or the process exited meanwhile. */
	CHECK(!mapped || f->exited);
	CHECK(memchr(why, 0, why_len) != NULL);
	if (why_len > 1)
		CHECK(why[0] != 0);
	if (why_len == 160) {
		if (!user)
			CHECK(strstr(why, "not a user address") || strstr(why, "cannot read 0x"));
		else
			CHECK(strstr(why, "cannot read 0x"));
		if (mapped)
			CHECK(strstr(why, "exited while being read"));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	make_truth();
	struct fake f = {0};
	const uint8_t flags = data[0];
	f.exits = flags & 2;
	f.exit_after = data[1];
	f.shorts = flags & 16;
	f.short_every = data[2] ? data[2] : 1;
	f.base = bases[(flags >> 2) & 3];
	const size_t why_len = why_lens[(flags >> 5) & 3];
	size_t at = 4;
	f.nranges = data[3] % (MAX_RANGES + 1);
	for (size_t i = 0; i < f.nranges; i++, at += 4) {
		if (at + 4 > size) {
			f.nranges = i;
			break;
		}
		const uint64_t start = (uint64_t)(data[at] | data[at + 1] << 8) * 32;
		const uint64_t len = (uint64_t)(data[at + 2] | data[at + 3] << 8) * 2;
		f.ranges[i] = (struct range){start, start + len};
	}
	struct jitmap__pagecache c;
	CHECK(jitmap__pagecache_init(&c, fake_pread, &f, flags & 1) == 0);
	for (size_t r = 0; r < MAX_READS && at + 6 <= size; r++, at += 6) {
		const uint8_t op = data[at];
		const uint64_t off = (data[at + 1] | data[at + 2] << 8 | (uint64_t)data[at + 3] << 16)
				     % SPAN;
		uint64_t len = data[at + 4] | data[at + 5] << 8;
		switch (op & 3) {
		case 0: len %= 8192; break;
		case 1: len %= 64; break;
		case 2: len = JITMAP__PAGE_MAX_KEPT_READ - 16 + len % 48; break;
		default: len = 0; break;
		}
		if (op & 8)
			jitmap__pagecache_stop_keeping(&c);
		const uint64_t addr = f.base + off;
		one_read(&c, &f, addr, len, why_len);
		if (op & 4) {
			/* Again: pages the cache holds cost no read of the fake. */
			const bool kept = all_kept(&c, addr, len);
			const uint64_t calls = f.calls;
			one_read(&c, &f, addr, len, why_len);
			if (kept)
				CHECK(f.calls == calls);
		}
	}
	jitmap__pagecache_fini(&c);
	return 0;
}
