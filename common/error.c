/* error.c: the one error convention: negative errno values, plus a record of where and why. */
#include <stdio.h>

#include "fail.h"
#include "internal.h"

int jitmap__fail(jitmap_error *err, int code, uint64_t offset, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	jitmap_common_vfail(err, code, offset, fmt, ap);
	va_end(ap);
	return code;
}

const char *jitmap_strerror(int code)
{
	switch (code) {
	case 0:
		return "success";
	case -EINVAL:
		return "malformed input";
	case -ENOMEM:
		return "out of memory";
	case -ENOENT:
		return "not found";
	case -ERANGE:
		return "index out of range";
	case -EEXIST:
		return "already present";
	case -EFAULT:
		return "memory not readable";
	case -ENODATA:
		return "value not available";
	case -ENOTSUP:
		return "not supported";
	case -EIO:
		return "input/output error";
	case -ELOOP:
		return "the list loops";
	case -E2BIG:
		return "too many entries";
	case -EPROTO:
		return "unknown protocol version";
	case -ESRCH:
		return "no caller: the outermost frame";
	default:
		return "unknown error";
	}
}
