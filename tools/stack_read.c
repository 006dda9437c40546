/* stack_read.c: a target read as jitmap-stack and jitmap-minidump read it: the core or the
 * process its name says, its threads, its modules, its JIT code, every thread's walk. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>

#include "stack_tool.h"

static bool is_pid(const char *s, pid_t *pid)
{
	char *end;
	errno = 0;
	const long v = strtol(s, &end, 10);
	if (errno || !*s || *end || v <= 0 || v > INT_MAX)
		return false;
	*pid = (pid_t)v;
	return true;
}

static void on_signal(int sig)
{
	(void)sig;
	stack_interrupted = 1;
}

void stack_catch_signals(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	for (int s = 0, sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT}; s < 4; s++)
		sigaction(sigs[s], &sa, NULL);
}

int stack_read(struct target *t, const struct options *o, bool *live_out)
{
	pid_t pid;
	int rc;
	const char *sysroot = NULL; /* a core's, when not "/" */
	elf_version(EV_CURRENT);
	/* -c names a core file, never a process. */
	const bool exists = access(o->target, F_OK) == 0 || o->core;
	const bool live = !exists && is_pid(o->target, &pid);
	*live_out = live;
	if (!exists && !live && o->target[0] &&
	    strspn(o->target, "0123456789") == strlen(o->target)) {
		stack_fatal("%s: not a process ID (1 to %d), and no file of that name",
			    o->target, INT_MAX);
		rc = -1;
	} else if (live) {
		if (o->exe || o->sysroot)
			fprintf(stderr, "%s: --%s is for core files; ignored (a live process's "
				"files are read through the process)\n", stack_tool_name,
				o->exe ? "exe" : "sysroot");
		rc = stack_open_pid(t, pid, o);
	} else if (o->sysroot && access(o->sysroot, X_OK)) {
		stack_fatal("--sysroot %s: %s", o->sysroot, strerror(errno));
		rc = -1;
	} else if (o->exe && access(o->exe, R_OK)) {
		/* The user's mistake, not the core's: the library would only warn that the core
		 * maps no file of that name. */
		stack_fatal("--exe %s: %s", o->exe, strerror(errno));
		rc = -1;
	} else {
		sysroot = o->sysroot && o->sysroot[0] && strcmp(o->sysroot, "/") ? o->sysroot : NULL;
		rc = stack_open_core(t, o->target, o->exe, sysroot);
	}
	if (rc == 0) {
		size_t readable = 0;
		for (size_t i = 0; i < t->nthreads; i++)
			readable += t->threads[i].info->regs != NULL;
		if (!readable) {
			stack_fatal("%s: no thread's registers could be read%s", o->target,
				    live ? " (the process exited?)" : "");
			for (size_t i = 0; i < stack_num_problems(); i++)
				fprintf(stderr, "%s: %s\n", stack_tool_name, stack_problem_at(i));
			rc = -1;
		}
	}
	if (rc == 0)
		rc = stack_open_dwfl(t, o->exe, sysroot);
	if (rc == 0)
		rc = stack_scan(t, o);
	if (rc == 0)
		stack_walk_threads(t, o);
	return rc;
}
