/* jitmap-core-handler: a core on standard input, written with the crashed process's perf maps
 * and jitdump files added as notes (jitmap_core_add_jit_files, include/jitmap/core.h) to a
 * command's standard input or to standard output; with --small, only the memory the stacks
 * and JIT frames need (a small core), and with --from, read from a core file (compressed or
 * not) instead.
 *
 * The kernel runs it from /proc/sys/kernel/core_pattern ("|/usr/bin/jitmap-core-handler %P
 * -- /lib/systemd/systemd-coredump %P ..."): with no standard output or error (the kernel
 * opens only the pipe it writes the core into), as root, while the crashed process still
 * exists (its files are read through /proc/PID/root before the core is read past its
 * notes). Whatever fails, the core goes on: unchanged when no file could be added, and what
 * went wrong is said on standard error, or to syslog (the journal) when there is none.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <jitmap/core.h>
#include <jitmap/jitmap.h>

static bool use_syslog;

static void say(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(int level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (use_syslog) {
		vsyslog(level, fmt, ap);
	} else {
		fputs("jitmap-core-handler: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: jitmap-core-handler [OPTION]... PID [-- COMMAND [ARG]...]\n"
		"  or:  jitmap-core-handler --small --from=CORE [OPTION]... [PID] [-- COMMAND...]\n"
		"Read a core dump on standard input and write it, with the perf maps and jitdump\n"
		"files of process PID added as notes, to COMMAND's standard input (which it runs),\n"
		"or to standard output. jitmap-stack, jitmap-dump, GDB and LLDB with jitmap use the\n"
		"notes' files as they use a live process's. PID 0: no process (with --file).\n"
		"\n"
		"  --small           write a small core: each thread's stack, the JIT descriptor,\n"
		"                    entries, images and code on the stacks, module headers and\n"
		"                    the loader's list; nothing else (a note says what was left out)\n"
		"  --stack-bytes=N   --small: keep N bytes of each stack above its stack pointer at\n"
		"                    most (default 8388608: 8 MiB)\n"
		"  --from=CORE       read the core from the file CORE (plain, or compressed with\n"
		"                    zstd, lz4 or xz) instead of standard input; PID may be left out\n"
		"  --exe=FILE        --small: the program's executable, for a core that does not\n"
		"                    say where it is mapped (qemu-user's), so that its JIT\n"
		"                    descriptor is found\n"
		"  --minidump=DIR    also write a minidump of the crash into DIR (PID-TIME.dmp,\n"
		"                    jitmap-minidump's) and its JIT code's Breakpad symbol files\n"
		"                    under DIR/symbols; without COMMAND, instead of the core\n"
		"  --file=FILE       add FILE too (a perf map or a jitdump); repeat for more\n"
		"  --max-bytes=N     add the files' first N bytes at most, all together\n"
		"                    (default 1073741824: 1 GiB); a file past it is cut, and said\n"
		"  -q, --quiet       say nothing when the files were added\n"
		"  -h, --help        this help\n"
		"  -V, --version     the version\n"
		"\n"
		"The kernel runs it from /proc/sys/kernel/core_pattern while the process still\n"
		"exists, e.g. in front of systemd-coredump:\n"
		"  |/usr/bin/jitmap-core-handler %%P -- /lib/systemd/systemd-coredump %%P %%u %%g %%s "
		"%%t %%c %%h\n"
		"A core it cannot add files to (not an ELF core, no files found) goes on unchanged;\n"
		"what went wrong is said on standard error, or to syslog when there is none.\n"
		"Exit status: COMMAND's; else 0, 1 when the core could not be read or written (or\n"
		"--from names a file that is no ELF core), 2 for a wrong command line (or standard\n"
		"output a terminal, with no COMMAND).\n"
		"See jitmap-core-handler(1).\n");
}

/* A usage error, as GNU tools and the other jitmap tools say one: what was wrong and where
 * help is; exit status 2. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (use_syslog) {
		vsyslog(LOG_ERR, fmt, ap);
	} else {
		fputs("jitmap-core-handler: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputs("\nTry 'jitmap-core-handler --help' for more information.\n", stderr);
	}
	va_end(ap);
	return 2;
}

/* The kernel starts a core_pattern program with only its standard input open: descriptors 1
 * and 2 are opened on /dev/null (so that no file opened later takes them), and what is said
 * goes to syslog. */
static void standard_fds(void)
{
	for (int fd = 1; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		if (fd == 2)
			use_syslog = true;
		const int null = open("/dev/null", O_RDWR);
		if (null >= 0 && null != fd) {
			dup2(null, fd);
			close(null);
		}
	}
	if (use_syslog)
		openlog("jitmap-core-handler", LOG_PID, LOG_DAEMON);
}

/* COMMAND, its standard input a pipe whose other end is returned (*child: its PID); -1 when
 * it cannot be started. */
static int start_command(char **argv, pid_t *child)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC)) {
		say(LOG_ERR, "no pipe to %s: %s", argv[0], strerror(errno));
		return -1;
	}
	*child = fork();
	if (*child < 0) {
		say(LOG_ERR, "%s cannot be started: %s", argv[0], strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (*child == 0) {
		signal(SIGPIPE, SIG_DFL);
		if (dup2(p[0], 0) < 0)
			_exit(127);
		execvp(argv[0], argv);
		say(LOG_ERR, "%s cannot be run: %s", argv[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	return p[1];
}

/* -- --minidump: the core through jitmap-minidump -- */

/* jitmap-minidump, installed beside this program. */
static char *minidump_tool(void)
{
	char self[4096];
	const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return NULL;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	char *tool = NULL;
	if (slash) {
		*slash = 0;
		if (asprintf(&tool, "%s/jitmap-minidump", self) < 0)
			tool = NULL;
	}
	return tool;
}

#define MINIDUMP_SECONDS 600 /* jitmap-minidump runs at most (the kernel waits for us) */

/* What jitmap-minidump says (its standard error, read from `fd` until it closes or the
 * deadline passes), said again as the handler's, line by line: under core_pattern the
 * handler's own standard error is /dev/null and its words go to syslog. 0, or -1 when the
 * deadline passed. */
static int relay(int fd, time_t deadline)
{
	char buf[4096];
	size_t used = 0;
	for (;;) {
		const time_t now = time(NULL);
		if (now >= deadline)
			return -1;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		const int r = poll(&p, 1, (int)(deadline - now) * 1000);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 ? -1 : 0;
		const ssize_t n = read(fd, buf + used, sizeof(buf) - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n > 0)
			used += (size_t)n;
		char *nl;
		buf[used] = 0;
		while ((nl = strchr(buf, '\n')) || (n <= 0 && used) || used == sizeof(buf) - 1) {
			const size_t len = nl ? (size_t)(nl - buf) : used;
			buf[len] = 0;
			if (len)
				say(LOG_WARNING, "%s", buf);
			const size_t rest = nl ? used - len - 1 : 0;
			memmove(buf, buf + used - rest, rest);
			used = rest;
			buf[used] = 0;
		}
		if (n <= 0)
			return 0;
	}
}

/* The minidump of the core open at `core_fd` (process `pid`) into `dir`, and its JIT
 * symbols under DIR/symbols, by jitmap-minidump (reading the core as /dev/fd/N: the file
 * itself is already unlinked, so a handler killed midway leaves no core behind): 0, or -1
 * with the reason said (about `who`). */
static int write_minidump(const char *dir, int core_fd, long pid, const char *exe,
			  const char *who)
{
	char *tool = minidump_tool(), *dump = NULL, *symbols = NULL;
	char core[32];
	int rc = -1, p[2] = {-1, -1};
	snprintf(core, sizeof(core), "/dev/fd/%d", core_fd);
	if (!tool || access(tool, X_OK)) {
		say(LOG_ERR, "--minidump: %s cannot be run: %s", tool ? tool : "jitmap-minidump",
		    tool ? strerror(errno) : "no path to this program");
		free(tool);
		return -1;
	}
	if (asprintf(&dump, "%s/%ld-%lld.dmp", dir, pid, (long long)time(NULL)) < 0 ||
	    asprintf(&symbols, "%s/symbols", dir) < 0) {
		say(LOG_ERR, "out of memory");
		goto out;
	}
	if (mkdir(symbols, 0755) && errno != EEXIST) {
		say(LOG_ERR, "--minidump: %s: %s", symbols, strerror(errno));
		goto out;
	}
	if (pipe2(p, O_CLOEXEC)) {
		say(LOG_ERR, "--minidump: no pipe: %s", strerror(errno));
		goto out;
	}
	const char *argv[] = {tool, "--symbols", symbols, "-o", dump, "-c", core,
			      exe ? exe : NULL, NULL};
	const pid_t child = fork();
	if (child < 0) {
		say(LOG_ERR, "--minidump: %s cannot be started: %s", tool, strerror(errno));
		goto out;
	}
	if (child == 0) {
		signal(SIGPIPE, SIG_DFL);
		if (dup2(p[1], 2) < 0)
			_exit(127);
		execv(tool, (char **)argv);
		_exit(127);
	}
	close(p[1]);
	p[1] = -1;
	const bool late = relay(p[0], time(NULL) + MINIDUMP_SECONDS) != 0;
	if (late) {
		kill(child, SIGKILL);
		say(LOG_ERR, "%s: jitmap-minidump still ran after %d s: stopped", who,
		    MINIDUMP_SECONDS);
	}
	int ws;
	while (waitpid(child, &ws, 0) < 0)
		if (errno != EINTR) {
			ws = -1;
			break;
		}
	struct stat st;
	const bool written = !late && stat(dump, &st) == 0;
	if (!late && ws != -1 && WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
		say(LOG_INFO, "%s: minidump %s, JIT symbols under %s", who, dump, symbols);
		rc = 0;
	} else if (written) {
		say(LOG_ERR, "%s: minidump %s written, but not all of its JIT symbols under %s "
		    "(said above)", who, dump, symbols);
	} else if (!late) {
		say(LOG_ERR, "%s: no minidump: %s %s", who, tool,
		    ws != -1 && WIFSIGNALED(ws) ? "was killed by a signal" : "failed (said above)");
	}
out:
	if (p[0] >= 0)
		close(p[0]);
	if (p[1] >= 0)
		close(p[1]);
	free(tool);
	free(dump);
	free(symbols);
	return rc;
}

/* The rest of `fd` (from its start) to `out`: 0, or -1 with the reason said. */
static int copy_file(int fd, int out)
{
	char buf[1 << 16];
	ssize_t n;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		for (ssize_t off = 0; off < n;) {
			const ssize_t w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return -1;
			off += w;
		}
	}
	return 0;
}

/* The core file at `path`, decompressed first when it is compressed: a descriptor to read it
 * from, or -1 with the reason said. */
static int open_core(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint8_t head[EI_NIDENT + 2];
	ssize_t got = fd < 0 ? -1 : pread(fd, head, sizeof(head), 0);
	if (got < 0) {
		say(LOG_ERR, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (jitmap_compression_of(head, (size_t)got)) {
		close(fd);
		char cut[256];
		jitmap_error err;
		fd = jitmap_core_decompress(path, NULL, cut, sizeof(cut), &err);
		if (fd < 0) {
			say(LOG_ERR, "%s: %s", path, err.reason);
			return -1;
		}
		if (cut[0])
			say(LOG_WARNING, "%s: %s", path, cut);
		got = pread(fd, head, sizeof(head), 0);
		lseek(fd, 0, SEEK_SET); /* read from its start, as a file given plain */
	}
	/* A core from the kernel that is not one goes on unchanged (it is all there is); a file
	 * named here that is not a core is the user's mistake. e_type (ET_CORE, 4) is at the
	 * same place in 32- and 64-bit headers, in the byte order e_ident says. */
	const bool elf = got >= (ssize_t)sizeof(head) && !memcmp(head, ELFMAG, SELFMAG);
	const unsigned type = !elf ? 0 : head[EI_DATA] == ELFDATA2MSB
				 ? (unsigned)head[EI_NIDENT] << 8 | head[EI_NIDENT + 1]
				 : (unsigned)head[EI_NIDENT + 1] << 8 | head[EI_NIDENT];
	if (!elf || type != ET_CORE) {
		if (got == 0)
			say(LOG_ERR, "%s: not an ELF core (an empty file)", path);
		else if (elf)
			say(LOG_ERR, "%s: not an ELF core (an ELF file of type %u)", path, type);
		else
			say(LOG_ERR, "%s: not an ELF core", path);
		close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	standard_fds();
	enum { OPT_FILE = 256, OPT_MAX, OPT_SMALL, OPT_STACK, OPT_FROM, OPT_EXE, OPT_MINIDUMP };
	static const struct option longopts[] = {
		{"file", required_argument, NULL, OPT_FILE},
		{"max-bytes", required_argument, NULL, OPT_MAX},
		{"small", no_argument, NULL, OPT_SMALL},
		{"stack-bytes", required_argument, NULL, OPT_STACK},
		{"from", required_argument, NULL, OPT_FROM},
		{"exe", required_argument, NULL, OPT_EXE},
		{"minidump", required_argument, NULL, OPT_MINIDUMP},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const char **files = calloc((size_t)argc, sizeof(*files));
	size_t nfiles = 0;
	uint64_t max_bytes = 0, stack_bytes = 0;
	bool quiet = false, small = false;
	const char *from = NULL, *exe = NULL, *minidump = NULL;
	int c;
	opterr = 0; /* our own messages, as the other tools' */
	while (files && (c = getopt_long(argc, argv, "+:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FILE: files[nfiles++] = optarg; break;
		case OPT_MAX:
		case OPT_STACK: {
			char *end;
			errno = 0;
			const uint64_t n = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end || optarg[0] == '-' ||
			    (c == OPT_STACK && !n))
				return usage_error("--%s '%.40s': not a number of bytes",
						   c == OPT_MAX ? "max-bytes" : "stack-bytes",
						   optarg);
			*(c == OPT_MAX ? &max_bytes : &stack_bytes) = n;
			break;
		}
		case OPT_SMALL: small = true; break;
		case OPT_FROM: from = optarg; break;
		case OPT_EXE: exe = optarg; break;
		case OPT_MINIDUMP: minidump = optarg; break;
		case 'q': quiet = true; break;
		case 'h': usage(stdout); return 0;
		case 'V':
			printf("jitmap-core-handler %s (libjitmap %s)\n", JITMAP_VERSION,
			       jitmap_version());
			return 0;
		case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt)
				return usage_error("unknown option '-%c'", optopt);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!files) {
		say(LOG_ERR, "out of memory");
		return 1;
	}
	/* With --from the PID may be left out: the core on disk is all there is. */
	char *end = NULL;
	const bool no_pid = from && (optind >= argc || !strcmp(argv[optind], "--"));
	const long pid = no_pid ? 0 : optind < argc ? strtol(argv[optind], &end, 10) : -1;
	if (!no_pid && optind >= argc)
		return usage_error("the crashed process's ID is needed (%%P in core_pattern)");
	if (!no_pid && (!end || *end || end == argv[optind] || pid < 0 || pid > INT32_MAX))
		return usage_error("'%.40s': not a process ID", argv[optind]);
	const int after = optind + !no_pid; /* "--", if any */
	char **command = NULL;
	if (after < argc) {
		if (strcmp(argv[after], "--") || after + 1 >= argc)
			return usage_error("'%.40s': after PID, '--' and a command are expected",
					   argv[after]);
		command = argv + after + 1;
	}
	/* A core is binary: written to a terminal it is lost, and the terminal garbled (gzip
	 * refuses the same). The kernel's pipe never is one. */
	/* Made 0700: the dumps hold other users' stacks (a folder that exists is left as it is,
	 * its owner's choice). */
	if (minidump && (mkdir(minidump, 0700) && errno != EEXIST)) {
		say(LOG_ERR, "--minidump %s: %s", minidump, strerror(errno));
		minidump = NULL; /* the core goes on all the same */
	}
	/* With --minidump and no COMMAND the minidump is written instead of the core. */
	const bool pass_core = command || !minidump;
	if (pass_core && !command && isatty(1))
		return usage_error("refusing to write a core to a terminal; redirect stdout or "
				   "give -- COMMAND");
	signal(SIGPIPE, SIG_IGN); /* a command that stops reading: EPIPE, said */

	const int in = from ? open_core(from) : 0;
	if (in < 0)
		return 1;
	pid_t child = -1;
	int out = 1;
	if (command && (out = start_command(command, &child)) < 0)
		return 1;
	/* --minidump: the core (with its JIT files) to a file of DIR first, which jitmap-minidump
	 * reads, then to where it goes (if anywhere); the file is removed after. */
	int core_fd = -1, minidump_failed = 0;
	if (minidump) {
		char core_tmp[4096];
		snprintf(core_tmp, sizeof(core_tmp), "%s/.core-%ld-XXXXXX", minidump, pid);
		core_fd = mkstemp(core_tmp);
		if (core_fd < 0) {
			say(LOG_ERR, "--minidump %s: no file for the core: %s", minidump,
			    strerror(errno));
			minidump_failed = -1;
		} else {
			unlink(core_tmp); /* read as /dev/fd/N: nothing left behind, whatever happens */
		}
		if (core_fd < 0 && !pass_core)
			return 1; /* the minidump was all that was asked for */
	}
	/* Who the messages are about: the process, or the core file read. */
	char who[4096 + 32];
	if (pid)
		snprintf(who, sizeof(who), "process %ld", pid);
	else
		snprintf(who, sizeof(who), "%s", from ? from : "the core");
	unsigned done = 0; /* JITMAP_CORE_ADDED_*: what the note says, as the library's status */
	JITMAP_OPTS(jitmap_core_add_opts, opts, .files = files, .nfiles = nfiles,
		    .max_bytes = max_bytes, .flags = small ? JITMAP_CORE_ADD_SMALL : 0,
		    .stack_bytes = stack_bytes, .exe = exe, .status = &done);
	char note[1024];
	jitmap_error err;
	const int added = jitmap_core_add_jit_files(in, core_fd >= 0 ? core_fd : out, (int)pid,
						    &opts, note, sizeof(note), &err);
	if (core_fd >= 0) {
		if (added >= 0)
			minidump_failed = write_minidump(minidump, core_fd, pid, exe, who);
		/* The core as far as it was written (a failed write, a full disk, was said). */
		if (pass_core && copy_file(core_fd, out)) {
			say(LOG_ERR, "the core could not be passed on: %s", strerror(errno));
			minidump_failed = -1;
		}
		close(core_fd);
	}
	if (from)
		close(in);
	int status = minidump_failed ? 1 : 0;
	if (added < 0) {
		say(LOG_ERR, "%s: %s (at byte %" PRIu64 ")", who, err.reason, err.offset);
		status = 1;
	} else if (small && !(done & JITMAP_CORE_ADDED_NOT_SMALL)) {
		/* A small core: said unless --quiet, as a warning when a file was left out or
		 * the JIT descriptor could not be looked for (no NT_FILE: --exe). */
		const bool trouble = done & (JITMAP_CORE_ADDED_FILE_LEFT | JITMAP_CORE_ADDED_NO_EXE);
		if (!quiet || trouble)
			say(trouble ? LOG_WARNING : LOG_INFO, "%s: %s", who, note);
	} else if (added == 0 && !pass_core) {
		/* the core goes nowhere: what became of it is no news */
	} else if (added == 0) {
		if (!quiet || !(done & JITMAP_CORE_ADDED_NO_JIT_FILES))
			say(done & (JITMAP_CORE_ADDED_UNCHANGED | JITMAP_CORE_ADDED_NOT_SMALL)
				    ? LOG_WARNING : LOG_INFO,
			    "%s: %s", who, note);
	} else if (note[0]) {
		say(LOG_WARNING, "%s: %d JIT file%s added; %s", who, added,
		    added == 1 ? "" : "s", note);
	} else if (!quiet) {
		say(LOG_INFO, "%s: %d JIT file%s added", who, added, added == 1 ? "" : "s");
	}
	free(files);
	if (command) {
		close(out);
		int ws;
		while (waitpid(child, &ws, 0) < 0)
			if (errno != EINTR) {
				ws = 0;
				break;
			}
		if (WIFEXITED(ws) && WEXITSTATUS(ws)) {
			say(LOG_ERR, "%s exited with status %d", command[0], WEXITSTATUS(ws));
			return WEXITSTATUS(ws);
		}
		if (WIFSIGNALED(ws)) {
			say(LOG_ERR, "%s was killed by signal %d", command[0], WTERMSIG(ws));
			return 1;
		}
	}
	return status;
}
