/* fail.h (private, not installed): the one way jitmap fills a jitmap_error (types.h), for
 * libjitmap (common/error.c) and libjitmap-producer (producer/smbuild.c) alike. */
#ifndef JITMAP_COMMON_FAIL_H
#define JITMAP_COMMON_FAIL_H

#include <stdarg.h>
#include <stdio.h>

#include "jitmap/types.h"

/* Fill `err` (may be NULL) with `code`, `offset` and the sentence; return `code`. */
static inline int jitmap_common_vfail(jitmap_error *err, int code, uint64_t offset,
				      const char *fmt, va_list ap)
{
	if (err) {
		err->code = code;
		err->offset = offset;
		vsnprintf(err->reason, sizeof(err->reason), fmt, ap);
	}
	return code;
}

#endif /* JITMAP_COMMON_FAIL_H */
