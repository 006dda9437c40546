/* jitmap-minidump: a minidump of a JIT process or core, in Breakpad's format, with its JIT code
 * as modules and, with --symbols, their Breakpad symbol files, so that a crash pipeline's
 * stock stack walker (Breakpad's, Crashpad's, Socorro's, Sentry's) names and unwinds JIT
 * frames (docs/minidumps.md).
 *
 * The process is read as jitmap-stack reads it (stack_read.c: a live process one thread at a
 * time, or a core), its JIT frames become modules and symbol records (minidump_jit.c), and the
 * library writes the dump (jitmap_minidump_write). The parts are listed in minidump_tool.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heap.h"
#include "minidump_tool.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: jitmap-minidump [OPTION]... PID -o OUT.dmp\n"
		"       jitmap-minidump [OPTION]... CORE -o OUT.dmp\n"
		"       jitmap-minidump [OPTION]... [EXE] -c CORE -o OUT.dmp\n"
		"Write a minidump (Breakpad's format, as crash pipelines take) of a JIT process or\n"
		"core, with its JIT code as modules of their own; with --symbols, the Breakpad\n"
		"symbol files that let a stock stack walker name and unwind the JIT frames.\n"
		"\n"
		"  -o, --output=FILE  the minidump to write (required)\n"
		"  --symbols=DIR      write each JIT module's symbol file under DIR, in a symbol\n"
		"                     store's layout (DIR/NAME/ID/NAME.sym), merged with one there\n"
		"  --exe=FILE         a core: the program's executable, if not where the core says\n"
		"  --sysroot=DIR      a core: look for the files it maps under DIR\n"
		"  -c, --core=FILE    the target is this core file\n"
		"  --perf-map=FILE    also read this perf map (repeatable)\n"
		"  --jitdump=FILE     also read this jitdump file (repeatable)\n"
		"  --no-perf-maps     read no perf map or jitdump the target names itself\n"
		"  --freeze=WHEN      a live process: 'thread' (default) stops one thread at a time;\n"
		"                     'all' stops every thread at once while stacks are copied\n"
		"  --stack-bytes=N    carry N bytes of each stack at most (default 1048576;\n"
		"                     64 MiB at most, a minidump's bound)\n"
		"  -h, --help         show this help and exit\n"
		"  -V, --version      show the version and exit\n"
		"\n"
		"Native modules keep their own symbols: Breakpad's dump_syms on the executable and\n"
		"libraries. Exit status: 0 when the dump was written, 1 when the target could not\n"
		"be read or the dump not written, 2 on usage errors.\n");
}

struct mini_options {
	struct options o;
	const char *output, *symbols;
};

static int parse_args(int argc, char **argv, struct mini_options *m)
{
	enum { OPT_SYMBOLS = STACK_OPT_TOOL };
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"symbols", required_argument, NULL, OPT_SYMBOLS},
		STACK_TARGET_LONGOPTS,
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hVc:o:", longopts, NULL)) != -1) {
		const int taken = stack_target_option(c, optarg, &m->o);
		if (taken == 2)
			return 2;
		if (taken)
			continue;
		switch (c) {
		case 'o': m->output = optarg; break;
		case OPT_SYMBOLS: m->symbols = optarg; break;
		case 'V':
			printf("jitmap-minidump %s (libjitmap %s)\n", JITMAP_VERSION, jitmap_version());
			exit(0);
		case 'h': usage(stdout); exit(0);
		default: return stack_option_error(c, argv);
		}
	}
	if (stack_target_operands(argc, argv, &m->o))
		return 2;
	if (!m->output)
		return stack_usage_error("the minidump to write is needed: -o FILE");
	return 0;
}

/* The dump, to a temporary file beside `path` renamed into place: a reader never sees half
 * of one. 0, or -1 (said). */
static int write_dump(struct target *t, const struct mini_options *m, struct jit_modules *jm,
		      jitmap_minidump_info *info)
{
	char *tmp = NULL;
	if (asprintf(&tmp, "%s.XXXXXX", m->output) < 0) {
		fprintf(stderr, "jitmap-minidump: out of memory\n");
		return -1;
	}
	const int fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(stderr, "jitmap-minidump: cannot write %s: %s\n", m->output, strerror(errno));
		free(tmp);
		return -1;
	}
	jitmap_minidump_module *mods = calloc(jm->n ? jm->n : 1, sizeof(*mods));
	int rc = -ENOMEM;
	jitmap_error err = {0};
	if (mods) {
		for (size_t i = 0; i < jm->n; i++)
			mods[i] = (jitmap_minidump_module){.base = jm->v[i].base,
							   .size = jm->v[i].size,
							   .path = jm->v[i].name,
							   .id = jm->v[i].id,
							   .id_len = sizeof(jm->v[i].id)};
		JITMAP_OPTS(const jitmap_minidump_opts, mo, .jit_modules = mods,
			    .num_jit_modules = jm->n, .memory = jm->mem, .num_memory = jm->nmem,
			    .stack_bytes = m->o.stack_bytes);
		rc = jitmap_minidump_write(t->stopped, fd, &mo, info, &err);
		free(mods);
	}
	/* mkstemp's 0600, as the kernel writes a core: the dump holds the threads' stacks (keys,
	 * passwords), and the core handler writes it as root for any user's crash. */
	if (rc == 0 && fsync(fd))
		rc = -errno;
	if (close(fd) && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, m->output))
		rc = -errno;
	if (rc) {
		fprintf(stderr, "jitmap-minidump: cannot write %s: %s\n", m->output,
			err.reason[0] ? err.reason : strerror(-rc));
		unlink(tmp);
	}
	free(tmp);
	return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
	tool_heap_in_huge_pages();
	stack_tool_name = "jitmap-minidump";
	struct mini_options m = {.o.keep_rules = true};
	int rc = parse_args(argc, argv, &m);
	if (rc)
		return rc;
	stack_catch_signals();

	struct target t = {0};
	struct jit_modules jm = {0};
	jitmap_minidump_info info = {.sz = sizeof(info)};
	bool live = false;
	rc = stack_read(&t, &m.o, &live);
	if (rc == 0 && stack_interrupted) {
		fprintf(stderr, "jitmap-minidump: interrupted%s\n",
			live ? "; the process was let go" : "");
		rc = -1;
	}
	if (rc == 0 && minidump_jit_collect(&t, &jm)) {
		fprintf(stderr, "jitmap-minidump: out of memory\n");
		rc = -1;
	}
	if (rc == 0)
		rc = write_dump(&t, &m, &jm, &info);
	jitmap_stopped_detach(t.stopped);
	if (t.proc)
		stack_process_problems(&t);
	if (rc == 0 && m.symbols && minidump_jit_write_symbols(&jm, m.symbols))
		rc = -1;
	if (rc == 0) {
		fprintf(stderr, "jitmap-minidump: wrote %s: %zu threads, %zu modules (%zu of JIT "
			"code, %zu left out), %zu memory regions, %llu bytes", m.output,
			info.num_threads, info.num_modules, jm.n - info.dropped_modules,
			info.dropped_modules, info.num_memory, (unsigned long long)info.bytes);
		if (m.symbols)
			fprintf(stderr, "; symbols under %s (%zu unwinding rows)", m.symbols, jm.rows);
		fprintf(stderr, "\n");
		if (jm.refused)
			fprintf(stderr, "jitmap-minidump: %zu unwinding rules name a register Breakpad "
				"has no name for: those frames get no row\n", jm.refused);
		if (jm.unique)
			fprintf(stderr, "jitmap-minidump: %zu JIT modules have no byte in the target "
				"to identify them by: their symbol files are this dump's alone\n",
				jm.unique);
		if (jm.unplaced)
			fprintf(stderr, "jitmap-minidump: %zu JIT frames lie in no module the dump "
				"could list\n", jm.unplaced);
		for (size_t i = 0; i < stack_num_problems(); i++)
			fprintf(stderr, "jitmap-minidump: %s\n", stack_problem_at(i));
	}
	minidump_jit_free(&jm);
	free(t.tails);
	jitmap_process_free(t.proc);
	stack_native_free(&t);
	stack_target_free(&t);
	free(m.o.perf_files);
	return rc ? 1 : 0;
}
