/* report.h: a library error as the tools (jitmap-dump, jitmap-stack) print it. */
#ifndef JITMAP_TOOLS_REPORT_H
#define JITMAP_TOOLS_REPORT_H

#include <inttypes.h>
#include <stdio.h>

#include <jitmap/jitmap.h>

/* "TOOL: FILE: offset 0x...: why" on standard error; a file-level error (offset 0: the file
 * cannot be opened, is not what it should be) says no offset. */
static inline void report_error(const char *tool, const char *file, const jitmap_error *e)
{
	const char *why = e->reason[0] ? e->reason : jitmap_strerror(e->code);
	if (e->offset)
		fprintf(stderr, "%s: %s: offset 0x%" PRIx64 ": %s\n", tool, file, e->offset, why);
	else
		fprintf(stderr, "%s: %s: %s\n", tool, file, why);
}

#endif
