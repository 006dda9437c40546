/* stack_target.c: jitmap-stack's stopped process (a core or a live one, one jitmap_stopped:
 * include/jitmap/stopped.h), its threads as the output lists them, and the problems said
 * after the stacks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jitmap/arch.h>
#include <jitmap/core.h>
#include <jitmap/jitmap.h>

#include "report.h"
#include "stack_tool.h"

volatile sig_atomic_t stack_interrupted;

const char *stack_tool_name = "jitmap-stack";

/* -- Why the target cannot be read: on standard error, and for --json -- */

static char *g_fatal;

void stack_fatal(const char *fmt, ...)
{
	char buf[4096 + 512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", stack_tool_name, buf);
	if (!g_fatal)
		g_fatal = strdup(buf);
}

const char *stack_fatal_error(void)
{
	return g_fatal;
}

/* -- Problems: said once, in order, printed after the stacks -- */

struct problems {
	char **v;
	size_t n, cap;
};

static struct problems g_problems;

void stack_problem(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (g_problems.n == g_problems.cap) {
		const size_t cap = g_problems.cap ? 2 * g_problems.cap : 16;
		char **v = realloc(g_problems.v, cap * sizeof(*v));
		if (!v)
			return;
		g_problems.v = v;
		g_problems.cap = cap;
	}
	if ((g_problems.v[g_problems.n] = strdup(buf)))
		g_problems.n++;
}

size_t stack_num_problems(void)
{
	return g_problems.n;
}

const char *stack_problem_at(size_t i)
{
	return i < g_problems.n ? g_problems.v[i] : NULL;
}

/* -- The target: threads, registers, memory -- */

/* The threads the library read (jitmap/stopped.h), as the output lists them, and what the
 * stopped process says of itself. 0, or -1 with the reason said. */
static int list_threads(struct target *t, const char *warning_prefix)
{
	jitmap_stopped *s = t->stopped;
	t->live = jitmap_stopped_kind_of(s) == JITMAP_STOPPED_LIVE;
	t->pid = jitmap_stopped_pid(s);
	t->comm = jitmap_stopped_name(s);
	t->arch = jitmap_stopped_arch(s);
	t->order = jitmap_stopped_byte_order(s);
	t->memory = jitmap_stopped_target(s);
	for (size_t i = 0; jitmap_stopped_warning(s, i); i++)
		stack_problem("%s%s", warning_prefix, jitmap_stopped_warning(s, i));
	const size_t n = jitmap_stopped_num_threads(s);
	t->threads = calloc(n ? n : 1, sizeof(*t->threads));
	if (!t->threads) {
		stack_fatal("out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct thread *th = &t->threads[t->nthreads++];
		th->info = jitmap_stopped_thread(s, i);
		if (th->info->error && !(th->problem = strdup(th->info->why))) {
			stack_fatal("out of memory");
			return -1;
		}
	}
	return 0;
}

int stack_open_core(struct target *t, const char *path, const char *exe,
		    const char *sysroot)
{
	jitmap_error err;
	/* A compressed core is decompressed first: a signal stops that too. */
	JITMAP_OPTS(const jitmap_stopped_opts, opts, .exe = exe, .sysroot = sysroot,
		    .interrupt = &stack_interrupted);
	t->stopped = jitmap_stopped_open_core(path, &opts, &err);
	if (!t->stopped) {
		char why[4096 + 256];
		stack_fatal("%s", report_error_text(why, sizeof(why), path, &err));
		return -1;
	}
	char prefix[4096];
	snprintf(prefix, sizeof(prefix), "%s: ", path);
	if (list_threads(t, prefix))
		return -1;
	/* A stack the core does not hold (truncated, damaged): the unwinders stop at the first
	 * frame, and libdwfl would not say why. */
	const int sp = jitmap_reg_sp(t->arch);
	for (size_t i = 0; i < t->nthreads; i++) {
		const jitmap_stopped_thread_info *ti = t->threads[i].info;
		jitmap_stopped_memory_info mi = {.sz = sizeof(mi)};
		uint64_t v;
		if (!ti->error && sp >= 0 && jitmap_stopped_thread_reg(ti, (unsigned)sp, &v) == 0 &&
		    jitmap_stopped_memory(t->stopped, v, &mi) == 0 &&
		    mi.source == JITMAP_STOPPED_MEM_NONE)
			stack_problem("thread %d: its stack pointer 0x%" PRIx64 " is not "
				      "readable (%s): its callers are unknown", (int)ti->tid,
				      v, mi.why);
	}
	return 0;
}

int stack_open_pid(struct target *t, pid_t pid, const struct options *o)
{
	/* libjitmap stops one thread at a time and copies its stack (by default), or every
	 * thread at once while the stacks are copied (--freeze=all); either way they run again
	 * before the walk. A signal meanwhile makes it let them go. */
	jitmap_error err;
	JITMAP_OPTS(const jitmap_stopped_opts, opts, .interrupt = &stack_interrupted,
		    .flags = o->freeze_all ? JITMAP_STOPPED_SNAPSHOT : JITMAP_STOPPED_BY_THREAD,
		    .stack_bytes = o->stack_bytes);
	t->stopped = jitmap_stopped_open_pid(pid, &opts, &err);
	if (!t->stopped) {
		if (err.code != -EINTR)
			stack_fatal("%s", err.reason);
		return -1;
	}
	return list_threads(t, "");
}

void stack_target_free(struct target *t)
{
	for (size_t i = 0; i < t->nthreads; i++) {
		for (size_t k = 0; k < t->threads[i].nframes; k++) {
			struct frame_out *f = &t->threads[i].frames[k];
			free(f->function);
			free(f->rule);
			free(f->module);
			free(f->named_by);
			free(f->source_path);
			free(f->source_line);
			free(f->stackmap_json);
			free(f->text);
			free(f->registers_json);
			free(f->registers_text);
			free(f->why);
			free(f->guess);
		}
		free(t->threads[i].frames);
		free(t->threads[i].problem);
	}
	free(t->threads);
	jitmap_stopped_free(t->stopped);
	for (size_t i = 0; i < g_problems.n; i++)
		free(g_problems.v[i]);
	free(g_problems.v);
	free(g_fatal);
}
