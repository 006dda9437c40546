/* report.h: a library error as the tools (jitmap-dump, jitmap-stack) print it. */
#ifndef JITMAP_TOOLS_REPORT_H
#define JITMAP_TOOLS_REPORT_H

#include <inttypes.h>
#include <stdio.h>

#include <jitmap/jitmap.h>

/* "FILE: offset 0x...: why" in `buf` (`len` bytes), returned; a file-level error (offset 0:
 * the file cannot be opened, is not what it should be) says no offset. */
static inline const char *report_error_text(char *buf, size_t len, const char *file,
					    const jitmap_error *e)
{
	const char *why = e->reason[0] ? e->reason : jitmap_strerror(e->code);
	if (e->offset)
		snprintf(buf, len, "%s: offset 0x%" PRIx64 ": %s", file, e->offset, why);
	else
		snprintf(buf, len, "%s: %s", file, why);
	return buf;
}

/* "TOOL: " and the above on standard error. */
static inline void report_error(const char *tool, const char *file, const jitmap_error *e)
{
	char buf[4096 + 512];
	fprintf(stderr, "%s: %s\n", tool, report_error_text(buf, sizeof(buf), file, e));
}

#endif
