/* minidump.c: a minidump of a stopped process in Breakpad's format (minidump.h says what it
 * holds and why). A stub while the writer is written: it refuses with ENOSYS. */
#define _GNU_SOURCE
#include "jitmap/minidump.h"

#include "internal.h"

int jitmap_minidump_write(jitmap_stopped *s, int fd, const jitmap_minidump_opts *opts,
			  jitmap_minidump_info *info, jitmap_error *err)
{
	(void)s;
	(void)fd;
	(void)opts;
	(void)info;
	return jitmap__fail(err, -ENOSYS, 0, "minidumps are not written yet");
}
