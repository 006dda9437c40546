/* stack_options.c: the options jitmap-stack and jitmap-minidump both take (the target, the
 * files it names, how a live process is stopped), parsed and refused alike. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack_tool.h"

int stack_usage_error(const char *fmt, ...)
{
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", stack_tool_name, what,
		stack_tool_name);
	return 2;
}

int stack_parse_limit(const char *option, const char *s, unsigned *out)
{
	char *end;
	errno = 0;
	const unsigned long v = s[0] >= '0' && s[0] <= '9' ? strtoul(s, &end, 10) : 0;
	if (!v || errno || *end || v > UINT_MAX)
		return stack_usage_error("%s '%.40s': not a whole number from 1 to %u", option, s,
					 UINT_MAX);
	*out = (unsigned)v;
	return 0;
}

int stack_target_option(int c, const char *arg, struct options *o)
{
	switch (c) {
	case STACK_OPT_EXE: o->exe = arg; return 1;
	case STACK_OPT_SYSROOT: o->sysroot = arg; return 1;
	case 'c':
		if (o->core)
			return stack_usage_error("one core file at a time");
		o->target = arg;
		o->core = true;
		return 1;
	case STACK_OPT_PERF: {
		const char **a = realloc(o->perf_files, (o->nperf + 1) * sizeof(*a));
		if (!a) {
			fprintf(stderr, "%s: out of memory\n", stack_tool_name);
			exit(1);
		}
		o->perf_files = a;
		o->perf_files[o->nperf++] = arg;
		return 1;
	}
	case STACK_OPT_NO_PERF: o->no_perf_maps = true; return 1;
	case STACK_OPT_FREEZE:
		if (strcmp(arg, "thread") && strcmp(arg, "all"))
			return stack_usage_error("--freeze '%.40s': 'thread' or 'all'", arg);
		o->freeze_all = !strcmp(arg, "all");
		return 1;
	case STACK_OPT_STACK_BYTES: {
		unsigned v;
		if (stack_parse_limit("--stack-bytes", arg, &v))
			return 2;
		o->stack_bytes = v;
		return 1;
	}
	default:
		return 0;
	}
}

int stack_option_error(int c, char **argv)
{
	if (c == ':')
		return stack_usage_error("option '%s' needs a value", argv[optind - 1]);
	if (optopt)
		return stack_usage_error("unknown option '-%c'", optopt);
	return stack_usage_error("unknown option '%s'", argv[optind - 1]);
}

int stack_target_operands(int argc, char **argv, struct options *o)
{
	if (o->core) {
		/* gdb's form, EXE -c CORE: the argument, if any, is the executable. */
		if (argc - optind > 1)
			return stack_usage_error("with -c CORE, one executable at most");
		if (optind < argc && o->exe)
			return stack_usage_error("the executable given twice (an argument and "
						 "--exe)");
		if (optind < argc)
			o->exe = argv[optind];
		return 0;
	}
	if (optind != argc - 1)
		return stack_usage_error(optind >= argc ? "a PID or a core file is needed"
							: "one PID or core file at a time");
	o->target = argv[optind];
	return 0;
}
