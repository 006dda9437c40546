/* jitmap-stack: every thread's stack of a live process or a core, without a debugger.
 *
 * Native frames come from elfutils' libdwfl (the process's modules, their symbols and CFI,
 * signal frames); JIT frames from libjitmap (the JIT entries registered through
 * __jit_debug_descriptor, named from their images and unwound by jitmap's unwinder: CFI,
 * stackmap frame sizes, the frame pointer), the two joined by a jitmap_stacker
 * (include/jitmap/stack.h). A core or a live process is one jitmap_stopped
 * (include/jitmap/stopped.h); a live process is stopped by libjitmap (PTRACE_SEIZE and
 * PTRACE_INTERRUPT, no signal is sent, and the kernel lets the threads go if this tool dies),
 * read, and let go before the output is printed. docs/jitmap-stack.md has the details and the
 * JSON fields in docs/json.md. This file holds the options and the order of it all; the parts
 * are listed in stack_tool.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gelf.h>

#include <jitmap/jitmap.h>

#include "heap.h"
#include "stack_tool.h"

/* -- Options -- */

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: jitmap-stack [OPTION]... PID | CORE\n"
		"  or:  jitmap-stack [OPTION]... EXE -c CORE   (as gdb, and as coredumpctl runs it)\n"
		"Print every thread's stack of a live process (PID) or a core file: JIT frames named\n"
		"and unwound by jitmap, native frames from the process's modules.\n"
		"\n"
		"  --json          one JSON object (see jitmap-stack(1))\n"
		"  --values        each frame at a stackmap record shows its locations and values\n"
		"  --gc-roots      each frame at a statepoint shows its GC roots (base, derived)\n"
		"  --registers     each frame's registers as unwound, or why one is not known there\n"
		"  --exe=FILE      for core files: the program's executable, when it is no longer\n"
		"                  where the core says\n"
		"  -c, --core=CORE the core file; an argument before it is then the executable,\n"
		"                  as --exe (`coredumpctl debug --debugger=jitmap-stack`). A core\n"
		"                  stored compressed (zstd, lz4, xz: systemd-coredump's) is read as\n"
		"                  the core it holds\n"
		"  --sysroot=DIR   for core files: read the files the core maps under DIR (a core\n"
		"                  from another machine or a container); a file there of another\n"
		"                  build than the one the process mapped is not used\n"
		"  --perf-map=FILE, --jitdump=FILE\n"
		"                  name JIT code as this perf map (START SIZE NAME lines) or\n"
		"                  jitdump file says (either option takes either kind; repeatable);\n"
		"                  for a core, the files its runtime wrote (/tmp/perf-PID.map)\n"
		"                  when the core does not carry them (jitmap-core-handler)\n"
		"  --no-perf-maps  do not read the perf map and jitdump files a live process\n"
		"                  wrote, or those its core carries (read by default)\n"
		"  --max-threads=N show the first N threads only (a core's first is the one that\n"
		"                  took the signal), and say how many more there are\n"
		"  --max-frames=N  show each thread's N innermost frames only, and say how many\n"
		"                  more there are\n"
		"  --freeze=thread (the default) a live process: stop one thread at a time, only\n"
		"                  while its registers and stack are copied (as eu-stack does:\n"
		"                  tens of microseconds a thread); the process as a whole never\n"
		"                  stops, and each thread's stack is its own moment\n"
		"  --freeze=all    stop every thread at once while all the stacks are copied,\n"
		"                  then let them go: one moment for every thread (as GDB's\n"
		"                  all-stop mode), the whole process stopped for that time (about\n"
		"                  a millisecond for 16 threads)\n"
		"                  Either way, frames are unwound from the copies and the code,\n"
		"                  and a value is read from the copy alone\n"
		"  --stack-bytes=N copy N bytes of each stack at most, from its stack pointer up\n"
		"                  (default 1048576); frames above are not read, and the walk\n"
		"                  says so\n"
		"  --signature     print the crash signature of the thread that crashed (a core's\n"
		"                  first thread with a signal, a live process's first thread) and\n"
		"                  the frames it is made of, instead of the stacks: JIT functions\n"
		"                  (NAME#RECORD_ID) and native modules' functions or offsets, the\n"
		"                  same for every crash at one site whatever the addresses; with\n"
		"                  --json, the object's \"signature\" field\n"
		"  -h, --help      show this help and exit\n"
		"  -V, --version   show the version and exit\n"
		"\n"
		"A live process is stopped with ptrace (no signal is sent) and let go before\n"
		"anything is printed. Exit status: 0 if the stacks were read, 1 if the target could not be\n"
		"read (with --json, still one object, with the error), 2 on usage errors.\n");
}

static int parse_args(int argc, char **argv, struct options *o)
{
	enum { OPT_JSON = STACK_OPT_TOOL, OPT_VALUES, OPT_GC, OPT_REGS, OPT_MAX_THREADS,
	       OPT_MAX_FRAMES, OPT_SIGNATURE };
	static const struct option longopts[] = {
		{"json", no_argument, NULL, OPT_JSON},
		{"values", no_argument, NULL, OPT_VALUES},
		{"gc-roots", no_argument, NULL, OPT_GC},
		{"registers", no_argument, NULL, OPT_REGS},
		STACK_TARGET_LONGOPTS,
		{"max-threads", required_argument, NULL, OPT_MAX_THREADS},
		{"max-frames", required_argument, NULL, OPT_MAX_FRAMES},
		{"signature", no_argument, NULL, OPT_SIGNATURE},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	opterr = 0; /* our own message, as jitmap-dump's */
	while ((c = getopt_long(argc, argv, ":hVc:", longopts, NULL)) != -1) {
		const int taken = stack_target_option(c, optarg, o);
		if (taken == 2)
			return 2;
		if (taken)
			continue;
		switch (c) {
		case OPT_JSON: o->json = true; break;
		case OPT_VALUES: o->values = true; break;
		case OPT_GC: o->gc_roots = true; break;
		case OPT_REGS: o->registers = true; break;
		case OPT_MAX_THREADS:
			if (stack_parse_limit("--max-threads", optarg, &o->max_threads))
				return 2;
			break;
		case OPT_MAX_FRAMES:
			if (stack_parse_limit("--max-frames", optarg, &o->max_frames))
				return 2;
			break;
		case OPT_SIGNATURE: o->signature = true; break;
		case 'V':
			printf("jitmap-stack %s (libjitmap %s)\n", JITMAP_VERSION, jitmap_version());
			exit(0);
		case 'h': usage(stdout); exit(0);
		default: return stack_option_error(c, argv);
		}
	}
	return stack_target_operands(argc, argv, o);
}

/* -- Main -- */

/* --signature's text: the signature, then the problems (a cut stack makes it short). */
static void print_signature(const struct signature *sig)
{
	if (sig)
		stack_signature_print_text(sig);
	if (stack_num_problems()) {
		printf("\nproblems:\n");
		for (size_t i = 0; i < stack_num_problems(); i++)
			printf("  %s\n", stack_problem_at(i));
	}
}

int main(int argc, char **argv)
{
	tool_heap_in_huge_pages();
	struct options o = {0};
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	struct target t = {0};
	stack_catch_signals();
	bool live = false;
	rc = stack_read(&t, &o, &live);
	/* before printing: the process runs again as soon as possible */
	jitmap_stopped_detach(t.stopped);
	if (t.proc)
		stack_process_problems(&t);
	const char *interrupted = live ? "interrupted; the process was let go" : "interrupted";
	if (stack_interrupted) {
		fprintf(stderr, "jitmap-stack: %s\n", interrupted);
		if (rc == 0)
			stack_problem("interrupted: the stacks may be incomplete");
	}
	/* after the walk, before printing: made of the frames the walk found */
	struct signature *sig = rc == 0 && o.signature ? stack_signature_make(&t) : NULL;
	if (rc == 0 && o.json)
		stack_print_json(&t, &o, sig);
	else if (rc == 0 && o.signature)
		print_signature(sig);
	else if (rc == 0)
		stack_print_text(&t, &o);
	else if (o.json) { /* a pipeline reads one object whatever happened */
		const char *error = stack_fatal_error();
		stack_print_json_error(error ? error : stack_interrupted
				       ? interrupted : "the target could not be read");
	}
	stack_signature_free(sig);
	free(t.tails);
	jitmap_process_free(t.proc);
	stack_native_free(&t); /* libdwfl's, before the core it reads is closed */
	stack_target_free(&t);
	free(o.perf_files);
	return rc ? 1 : 0;
}
