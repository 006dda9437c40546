/* pause.c: a pause mode, for tests/consistency, for programs that have none: LLVM's lli-14
 * running the project's IR fixtures (which stop in getppid) and jitmap-vm (whose compiled code
 * ends in abort() with --abort). LD_PRELOADed, it replaces the function that
 * $JITMAP_PAUSE_IN names ("getppid" or "abort"): its first call prints
 *
 *     jitmap-consistency: paused pid=PID in NAME
 *
 * and waits (at most 300 s) with the caller's frames, JIT frames included, on the stack, as the
 * examples' own --pause does: jitmap-stack reads the process live, then the test sends SIGABRT
 * and the kernel writes the core every other front end reads. Every other call goes to the C
 * library's function. lli's JIT code finds getppid here because MCJIT and ORC resolve a JIT
 * object's external symbols with dlsym(RTLD_DEFAULT), which looks at the preloaded object
 * first. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Exported whatever the build's default visibility (the project builds -fvisibility=hidden):
 * a hidden getppid would not interpose the C library's. */
#define PAUSE_EXPORT __attribute__((visibility("default")))

static int paused;

/* noinline: the pause is a frame of its own, below the replaced function's, in every
 * front end's backtrace. */
__attribute__((noinline)) static void pause_here(const char *name)
{
	const char *want = getenv("JITMAP_PAUSE_IN");
	if (paused || !want || strcmp(want, name))
		return;
	paused = 1;
	/* The test's SIGABRT must dump core here: lli's crash handlers (LLVM's
	 * PrintStackTraceOnErrorSignal) would print a stack and return to the pause. */
	signal(SIGABRT, SIG_DFL);
	fprintf(stderr, "jitmap-consistency: paused pid=%ld in %s\n", (long)getpid(), name);
	fflush(stderr);
	for (int ms = 0; ms < 300000; ms += 10)
		usleep(10000);
	__asm__ volatile("" ::: "memory");
}

PAUSE_EXPORT pid_t getppid(void)
{
	pause_here("getppid");
	pid_t (*real)(void) = (pid_t (*)(void))dlsym(RTLD_NEXT, "getppid");
	return real ? real() : 1;
}

PAUSE_EXPORT void abort(void)
{
	pause_here("abort");
	/* What abort() does when nothing catches SIGABRT. */
	signal(SIGABRT, SIG_DFL);
	raise(SIGABRT);
	_exit(127);
}
