/* heap.h: the tools' heap in transparent huge pages (heap.c). */
#ifndef JITMAP_TOOLS_HEAP_H
#define JITMAP_TOOLS_HEAP_H

/* Called first thing in main, before anything is allocated. */
void tool_heap_in_huge_pages(void);

#endif
