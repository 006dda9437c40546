/* arrays.c: large arrays, allocated with as few page faults as can be, and sorted by radix:
 * the PC indexes (reader/index.c) and the perf maps (files/perfmap.c) hold up to millions of
 * entries, built in one go. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

/* Large arrays, faulted in by as few faults as can be: on a virtual machine a fault, or the
 * first write to a page the kernel populated, costs more than the work it feeds. Below
 * 256 KiB, the heap (zeroed, 64-byte aligned: nodes 8k..8k+7 in one cache line), which a
 * process reuses. From 256 KiB, a 2 MiB-aligned mapping populated where the kernel can
 * (MADV_POPULATE_WRITE, Linux 5.14), in transparent huge pages where at least half of each is
 * used: a fault per 2 MiB, and the 8 MB of nodes at 10^6 records in 4 TLB entries instead of
 * 2048. On the 2-core VM of bench/README.md, populating and writing 1 MiB took 495 us in 4 KiB
 * pages and 64 us in a huge one; 1.5 MiB, 748 and 70. Filling a huge page at least half keeps
 * the memory they cost under twice what is used; what is left past the last one is in 4 KiB
 * pages. Mappings are zeroed by the kernel. *mapped says how to free them
 * (jitmap__big_free). */
#define BIG ((size_t)256 << 10)
#define HUGE_PAGE ((size_t)2 << 20)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

void *jitmap__big_alloc(size_t bytes, size_t *mapped)
{
	*mapped = 0;
	bytes = jitmap__align64(bytes);
	if (bytes < BIG) {
		void *p = aligned_alloc(64, bytes ? bytes : 64);
		if (p)
			memset(p, 0, bytes);
		return p;
	}
	const size_t huge = (bytes & (HUGE_PAGE - 1)) >= HUGE_PAGE / 2
				    ? (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1)
				    : bytes & ~(HUGE_PAGE - 1);
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const size_t len = huge > bytes ? huge : (bytes + page - 1) & ~(page - 1);
	char *p = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	const size_t head = -(uintptr_t)p & (HUGE_PAGE - 1);
	if (head)
		munmap(p, head);
	munmap(p + head + len, HUGE_PAGE - head);
#ifdef MADV_HUGEPAGE
	if (huge) /* a hint: without it, faults as touched */
		(void)madvise(p + head, huge, MADV_HUGEPAGE);
#endif
	(void)madvise(p + head, bytes, MADV_POPULATE_WRITE);
	*mapped = len;
	return p + head;
}

void jitmap__big_free(void *p, size_t mapped)
{
	if (p && mapped)
		munmap(p, mapped);
	else
		free(p);
}

unsigned jitmap__radix_plan(const uint64_t *keys, size_t n, unsigned from, unsigned shifts[8],
			    size_t count[8][257])
{
	uint64_t differ = 0;
	bool sorted = true;
	for (size_t i = 1; i < n; i++) {
		sorted &= keys[i - 1] <= keys[i];
		differ |= keys[i] ^ keys[0];
	}
	if (sorted)
		return 0;
	unsigned passes = 0;
	for (unsigned shift = from; shift < 64; shift += 8)
		if ((differ >> shift) & 0xff)
			shifts[passes++] = shift;
	for (size_t i = 0; i < n; i++)
		for (unsigned p = 0; p < passes; p++)
			count[p][((keys[i] >> shifts[p]) & 0xff) + 1]++;
	for (unsigned p = 0; p < passes; p++)
		for (unsigned d = 0; d < 256; d++)
			count[p][d + 1] += count[p][d];
	return passes;
}

void jitmap__radix_sort(uint64_t *keys, uint32_t *vals, size_t n, uint64_t *tk, uint32_t *tv)
{
	unsigned shifts[8];
	size_t count[8][257] = {{0}};
	const unsigned passes = jitmap__radix_plan(keys, n, 0, shifts, count);
	for (unsigned p = 0; p < passes; p++) {
		for (size_t i = 0; i < n; i++) {
			const size_t at = count[p][(keys[i] >> shifts[p]) & 0xff]++;
			tk[at] = keys[i];
			if (vals)
				tv[at] = vals[i];
		}
		memcpy(keys, tk, n * sizeof(*keys));
		if (vals)
			memcpy(vals, tv, n * sizeof(*vals));
	}
}
