/* heap.c: the tools' heap in transparent huge pages.
 *
 * jitmap-stack's scan of a JIT with thousands of entries, libdw reading libc's DWARF, and
 * jitmap-dump's names of tens of thousands of functions allocate a few MiB, most of it new
 * heap that the kernel maps a page at a fault: on the 2-core VM of bench/README.md, 15 us a
 * fault (4 us a page populated at once), more than all reads of a process's memory. So the heap
 * grows once by HEAP_STEP, asked for transparent huge pages (what glibc's tunable
 * glibc.malloc.hugetlb=1 does at every growth; nothing changes where the kernel gives none),
 * and blocks up to that size come from it rather than from mmap: a fault then maps 2 MiB.
 *
 * A page written in a 2 MiB range before madvise keeps that range in 4 KiB pages, so nothing
 * is written past the heap's start until then, and the heap below the first 2 MiB boundary is
 * left unused (never written, it costs no memory). jitmap-stack on the bench process: 791 page
 * faults when the heap grew by a 2 MiB block freed at once (its header written 2 MiB in),
 * 537 with nothing written past the start, 377 with the start left unused
 * (perf stat -e page-faults). */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "heap.h"

#define HEAP_STEP ((size_t)16 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)

void tool_heap_in_huge_pages(void)
{
	if (!mallopt(M_MMAP_THRESHOLD, (int)HEAP_STEP) ||
	    !mallopt(M_TRIM_THRESHOLD, (int)HEAP_STEP) || !mallopt(M_TOP_PAD, (int)HEAP_STEP))
		return;
	/* A small block grows the heap by HEAP_STEP and writes only at its start. */
	const uintptr_t before = (uintptr_t)sbrk(0);
	static void *keep[2];
	keep[0] = malloc(1);
	const uintptr_t after = (uintptr_t)sbrk(0);
	const uintptr_t from = (before + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	const uintptr_t to = after & ~(HUGE_PAGE - 1);
	if (!keep[0] || before == (uintptr_t)-1 || after == (uintptr_t)-1 || to <= from ||
	    madvise((void *)from, to - from, MADV_HUGEPAGE))
		return;
	const uintptr_t used = (uintptr_t)keep[0] + 64;
	if (from - used > 64)
		keep[1] = malloc(from - used - 64); /* the unused start */
}
