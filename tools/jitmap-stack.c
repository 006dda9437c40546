/* jitmap-stack: every thread's stack of a live process or a core, without a debugger.
 *
 * Native frames come from elfutils' libdwfl (the process's modules, their symbols and CFI,
 * signal frames); JIT frames from libjitmap (the JIT entries registered through
 * __jit_debug_descriptor, named from their images and unwound by jitmap's unwinder: CFI,
 * stackmap frame sizes, the frame pointer), the two joined by a jitmap_stacker
 * (include/jitmap/stack.h). A live process is stopped with ptrace (PTRACE_SEIZE and
 * PTRACE_INTERRUPT: no signal is sent, and the kernel lets the threads go if this tool dies),
 * read, and let go before the output is printed. docs/jitmap-stack.md has the details and the
 * contract is in DESIGN.md ("jitmap-stack").
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <elf.h> /* NT_PRSTATUS: the regset PTRACE_GETREGSET names */
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include <jitmap/arch.h>
#include <jitmap/core.h>
#include <jitmap/jitmap.h>
#include <jitmap/process.h>
#include <jitmap/stack.h>

#include "json.h"

#define MAX_THREADS 65536
#define MAX_ROUNDS 16 /* attach rounds while the process keeps starting threads */

struct options {
	bool json, values, gc_roots;
	const char *target, *exe;
};

/* -- Problems: said once, in order, printed after the stacks -- */

struct problems {
	char **v;
	size_t n, cap;
};

static struct problems g_problems;

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...)
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

/* -- The target: threads, registers, memory -- */

struct frame_out {
	unsigned level;
	uint64_t pc;
	bool exact, jit;
	char *function, *module;
	uint64_t entry;
	char *stackmap_json; /* the record object (JSON), when asked for and at a record */
	char *text;          /* the same for the text output */
	char *why;           /* how the walk ended here, when it did not end well */
	const char *method;
};

struct thread {
	pid_t tid;
	char name[64];
	bool attached;
	bool have_regs;
	jitmap_frame_regs regs;
	struct frame_out *frames;
	size_t nframes, cap_frames;
	char *problem;
};

#define CHUNK 4096
#define CHUNK_SLOTS 256

struct cached_chunk {
	uint64_t chunk;
	bool valid;
	uint8_t bytes[CHUNK];
};

struct target {
	struct cached_chunk *chunks; /* live: CHUNK_SLOTS pages (1 MiB), direct-mapped */
	bool live;
	pid_t pid;
	int mem_fd;
	jitmap_core *core;
	int core_fd;
	Elf *core_elf;
	jitmap_target memory;
	jitmap_arch arch;
	jitmap_byte_order order;
	struct thread *threads;
	size_t nthreads, cap_threads;
	char comm[64];
	Dwfl *dwfl;
	struct native_name *names;
	jitmap_process *proc;
};

static volatile sig_atomic_t g_interrupted;

static void on_signal(int sig)
{
	(void)sig;
	g_interrupted = 1;
}

static int read_direct(const struct target *t, uint64_t addr, void *buf, size_t len, char *why,
		       size_t why_len)
{
	if (addr > (uint64_t)INT64_MAX || len > (uint64_t)INT64_MAX - addr) {
		snprintf(why, why_len, "0x%" PRIx64 " is not a user address", addr);
		return -EFAULT;
	}
	size_t done = 0;
	while (done < len) {
		const ssize_t n = pread(t->mem_fd, (char *)buf + done, len - done, (off_t)(addr + done));
		if (n <= 0) {
			snprintf(why, why_len, "cannot read 0x%" PRIx64 ": %s", addr + done,
				 n < 0 ? strerror(errno) : "not mapped");
			return -EFAULT;
		}
		done += (size_t)n;
	}
	return 0;
}

/* The threads are stopped while they are read: memory is read in whole pages and kept, so
 * that the many small reads of a JIT's entry list, its images (allocated near each other) and
 * the stacks cost one system call per page. A page that cannot be read is not kept: what
 * was asked is read alone. */
static int live_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	struct target *t = ctx;
	if (!len || len > 4 * CHUNK || addr > UINT64_MAX - len)
		return read_direct(t, addr, buf, len, why, why_len);
	uint8_t *out = buf;
	while (len) {
		const uint64_t chunk = addr / CHUNK, off = addr % CHUNK;
		const size_t n = len < CHUNK - off ? len : (size_t)(CHUNK - off);
		struct cached_chunk *c = &t->chunks[chunk % CHUNK_SLOTS];
		if (!c->valid || c->chunk != chunk) {
			c->valid = false;
			if (read_direct(t, chunk * CHUNK, c->bytes, CHUNK, why, why_len))
				return read_direct(t, addr, out, len, why, why_len);
			c->chunk = chunk;
			c->valid = true;
		}
		memcpy(out, c->bytes + off, n);
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}

static struct thread *add_thread(struct target *t, pid_t tid)
{
	if (t->nthreads == t->cap_threads) {
		const size_t cap = t->cap_threads ? 2 * t->cap_threads : 16;
		struct thread *a = realloc(t->threads, cap * sizeof(*a));
		if (!a)
			return NULL;
		t->threads = a;
		t->cap_threads = cap;
	}
	struct thread *th = &t->threads[t->nthreads++];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	return th;
}

static bool has_thread(const struct target *t, pid_t tid)
{
	for (size_t i = 0; i < t->nthreads; i++)
		if (t->threads[i].tid == tid)
			return true;
	return false;
}

static void read_comm(pid_t pid, pid_t tid, char *out, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	out[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = 0;
	fclose(f);
}

/* A stopped thread's registers in DWARF numbering: 0, or an errno. The kernel gives its
 * general registers as a core's NT_PRSTATUS holds them; the library knows their layout. */
static int read_regs(const struct target *t, pid_t tid, jitmap_frame_regs *r)
{
	uint64_t gregs[64];
	struct iovec iov = {gregs, sizeof(gregs)};
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) != 0)
		return errno;
	const int rc = jitmap_frame_regs_from_linux(t->arch, t->order, gregs, iov.iov_len, r);
	return rc < 0 ? -rc : 0;
}

/* Stop every thread (PTRACE_SEIZE + PTRACE_INTERRUPT: no signal reaches the process) and
 * read its registers. Threads started meanwhile are picked up in the next round. Returns 0,
 * or -1 with the reason said. */
static int attach_all(struct target *t)
{
	char path[64];
	for (int round = 0; round < MAX_ROUNDS && !g_interrupted; round++) {
		snprintf(path, sizeof(path), "/proc/%d/task", (int)t->pid);
		DIR *d = opendir(path);
		if (!d) {
			fprintf(stderr, "jitmap-stack: process %d: %s\n", (int)t->pid, strerror(errno));
			return -1;
		}
		bool added = false;
		struct dirent *de;
		while ((de = readdir(d)) && !g_interrupted) {
			if (!isdigit((unsigned char)de->d_name[0]))
				continue;
			const pid_t tid = (pid_t)strtol(de->d_name, NULL, 10);
			if (has_thread(t, tid) || t->nthreads >= MAX_THREADS)
				continue;
			struct thread *th = add_thread(t, tid);
			if (!th) {
				closedir(d);
				fprintf(stderr, "jitmap-stack: out of memory\n");
				return -1;
			}
			added = true;
			read_comm(t->pid, tid, th->name, sizeof(th->name));
			if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0) {
				const int e = errno;
				if (e == ESRCH) {
					th->problem = strdup("the thread exited while being read");
					continue;
				}
				closedir(d);
				fprintf(stderr, "jitmap-stack: cannot trace process %d (thread %d): %s%s\n",
					(int)t->pid, (int)tid, strerror(e),
					e == EPERM ? " (another tracer, another user, or "
						     "/proc/sys/kernel/yama/ptrace_scope)" : "");
				return -1;
			}
			th->attached = true;
			int status;
			if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0 ||
			    waitpid(tid, &status, __WALL) != tid || !WIFSTOPPED(status)) {
				th->problem = strdup("the thread exited while being read");
				if (waitpid(tid, &status, __WALL | WNOHANG) == tid && !WIFSTOPPED(status))
					th->attached = false;
				continue;
			}
			const int e = read_regs(t, tid, &th->regs);
			if (e == 0) {
				th->have_regs = true;
			} else {
				char buf[96];
				snprintf(buf, sizeof(buf), "its registers cannot be read: %s", strerror(e));
				th->problem = strdup(buf);
			}
		}
		closedir(d);
		if (!added)
			return 0;
	}
	if (g_interrupted)
		return -1;
	problem("the process kept starting threads: %zu read", t->nthreads);
	return 0;
}

static void detach_all(struct target *t)
{
	for (size_t i = 0; i < t->nthreads; i++) {
		if (t->threads[i].attached)
			ptrace(PTRACE_DETACH, t->threads[i].tid, NULL, NULL);
		t->threads[i].attached = false;
	}
}

static int open_live(struct target *t, pid_t pid)
{
	char path[64];
	t->live = true;
	t->pid = pid;
	t->arch = jitmap_arch_host(&t->order); /* a process this tool can trace runs its code */
	read_comm(pid, pid, t->comm, sizeof(t->comm));
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) != 0) {
		fprintf(stderr, "jitmap-stack: no process %d\n", (int)pid);
		return -1;
	}
	if (attach_all(t) != 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	t->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->mem_fd < 0) {
		fprintf(stderr, "jitmap-stack: %s: %s\n", path, strerror(errno));
		return -1;
	}
	t->chunks = calloc(CHUNK_SLOTS, sizeof(*t->chunks));
	if (!t->chunks) {
		fprintf(stderr, "jitmap-stack: out of memory\n");
		return -1;
	}
	t->memory = (jitmap_target){t, NULL, live_read};
	return 0;
}

static int open_core(struct target *t, const char *path, const char *exe)
{
	jitmap_error err;
	const jitmap_core_opts opts = {.sz = sizeof(opts), .exe = exe};
	t->core = jitmap_core_open(path, &opts, &err);
	if (!t->core) {
		fprintf(stderr, "jitmap-stack: %s: offset 0x%" PRIx64 ": %s\n", path, err.offset,
			err.reason[0] ? err.reason : jitmap_strerror(err.code));
		return -1;
	}
	for (size_t i = 0; jitmap_core_warning(t->core, i); i++)
		problem("%s: %s", path, jitmap_core_warning(t->core, i));
	t->arch = jitmap_core_arch(t->core);
	t->order = jitmap_core_byte_order(t->core);
	t->memory = jitmap_core_target(t->core);
	const int pc = jitmap_reg_pc(t->arch);
	const unsigned nregs = jitmap_arch_num_core_regs(t->arch);
	for (size_t i = 0; i < jitmap_core_num_threads(t->core); i++) {
		const jitmap_core_thread_info *ti = jitmap_core_thread(t->core, i);
		struct thread *th = add_thread(t, (pid_t)ti->tid);
		if (!th)
			return -1;
		if (!t->pid)
			t->pid = (pid_t)ti->tid;
		uint64_t v;
		if (pc < 0 || jitmap_core_thread_reg(ti, (unsigned)pc, &v)) {
			th->problem = strdup("the core holds no registers for it");
			continue;
		}
		th->regs.pc = v;
		for (unsigned r = 0; r < nregs && r < JITMAP_UNWIND_MAX_REGS; r++)
			if ((int)r != pc && jitmap_core_thread_reg(ti, r, &v) == 0)
				jitmap_frame_reg_set(&th->regs, r, v);
		th->have_regs = true;
		/* A stack the core does not hold (truncated, damaged): the unwinders stop at the
		 * first frame, and libdwfl would not say why. */
		jitmap_core_memory_info mi;
		const int sp = jitmap_reg_sp(t->arch);
		if (sp >= 0 && jitmap_core_thread_reg(ti, (unsigned)sp, &v) == 0 &&
		    jitmap_core_memory(t->core, v, &mi) == 0 && mi.source == JITMAP_CORE_MEM_NONE)
			problem("thread %d: its stack pointer 0x%" PRIx64 " is not readable (%s): its "
				"callers are unknown", (int)ti->tid, v, mi.why);
	}
	t->core_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (t->core_fd >= 0)
		t->core_elf = elf_begin(t->core_fd, ELF_C_READ_MMAP, NULL);
	return 0;
}

/* -- libdwfl: modules, symbols, native frames -- */

static char *g_debuginfo_path;

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &g_debuginfo_path,
};

static const Dwfl_Callbacks core_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &g_debuginfo_path,
};

/* One native step at a time: libdwfl unwinds from `initial` (a thread of our own making)
 * and gives back its second frame. */
struct native {
	struct target *t;
	jitmap_frame_regs initial;
	unsigned seen;
	bool got, caller_exact;
	jitmap_frame_regs caller;
};

static pid_t no_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)arg;
	(void)thread_argp;
	return 0;
}

static bool any_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

static bool dwfl_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	const struct native *n = arg;
	char why[8];
	uint8_t b[8];
	if (n->t->memory.read_mem(n->t->memory.ctx, addr, b, sizeof(b), why, sizeof(why)))
		return false;
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)b[n->t->order == JITMAP_ORDER_BIG ? i : 7 - i] << (8 * (7 - i));
	*result = v;
	return true;
}

static bool initial_registers(Dwfl_Thread *thread, void *arg)
{
	const struct native *n = arg;
	for (unsigned r = 0; r < JITMAP_UNWIND_MAX_REGS; r++) {
		if (!jitmap_frame_reg_known(&n->initial, r))
			continue;
		const Dwarf_Word v = n->initial.reg[r];
		if (!dwfl_thread_state_registers(thread, (int)r, 1, &v))
			return false;
	}
	dwfl_thread_state_register_pc(thread, n->initial.pc);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = no_next_thread,
	.get_thread = any_thread,
	.memory_read = dwfl_read,
	.set_initial_registers = initial_registers,
};

static int native_frame(Dwfl_Frame *frame, void *arg)
{
	struct native *n = arg;
	if (n->seen++ == 0)
		return DWARF_CB_OK;
	Dwarf_Addr pc;
	bool activation = false;
	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	memset(&n->caller, 0, sizeof(n->caller));
	n->caller.pc = pc;
	for (unsigned r = 0; r < jitmap_arch_num_core_regs(n->t->arch) && r < JITMAP_UNWIND_MAX_REGS;
	     r++) {
		Dwarf_Word v;
		if ((int)r != jitmap_reg_pc(n->t->arch) && dwfl_frame_reg(frame, r, &v) == 0)
			jitmap_frame_reg_set(&n->caller, r, v);
	}
	n->got = true;
	n->caller_exact = activation;
	return DWARF_CB_ABORT;
}

static int native_step(void *ctx, const jitmap_frame_regs *regs, bool exact,
		       jitmap_unwind_result *out, bool *caller_exact, char *why, size_t why_len)
{
	struct native *n = ctx;
	/* libdwfl takes the first frame's PC as exact: give it the call's last byte for a
	 * return address, so that it reads the row of the call's function. */
	n->initial = *regs;
	if (!exact && regs->pc)
		n->initial.pc = regs->pc - 1;
	if (!dwfl_addrmodule(n->t->dwfl, n->initial.pc))
		return -ENOENT;
	n->seen = 0;
	n->got = false;
	const int rc = dwfl_getthread_frames(n->t->dwfl, n->t->pid, native_frame, n);
	const unsigned sp = (unsigned)jitmap_reg_sp(n->t->arch);
	if (n->got && jitmap_frame_reg_known(&n->caller, sp)) {
		memset(out, 0, sizeof(*out));
		out->caller = n->caller;
		out->cfa = n->caller.reg[sp];
		*caller_exact = n->caller_exact;
		return 0;
	}
	if (rc == 0)
		return -ESRCH; /* libdwfl reached the end: the outermost frame */
	snprintf(why, why_len, "native: %s", rc < 0 ? dwfl_errmsg(-1) : "no caller");
	return -ENOENT;
}

/* A core libdwfl finds no module in (no NT_FILE note: qemu-user's guest cores) names no
 * native frame. With --exe, the library placed the executable and the libraries it loaded
 * (to find the JIT descriptor): report each to libdwfl where the library put it. */
static void report_placed_files(struct target *t)
{
	const char *path;
	uint64_t bias;
	for (size_t i = 0; t->core && jitmap_core_placed_file(t->core, i, &path, &bias) == 0; i++)
		(void)dwfl_report_elf(t->dwfl, path, path, -1, bias, false);
}

static int open_dwfl(struct target *t, const char *exe)
{
	t->dwfl = dwfl_begin(t->live ? &proc_callbacks : &core_callbacks);
	if (!t->dwfl) {
		fprintf(stderr, "jitmap-stack: libdwfl: %s\n", dwfl_errmsg(-1));
		return -1;
	}
	dwfl_report_begin(t->dwfl);
	int rc;
	if (t->live)
		rc = dwfl_linux_proc_report(t->dwfl, t->pid);
	else
		rc = t->core_elf ? dwfl_core_file_report(t->dwfl, t->core_elf, exe) : -1;
	if (!t->live && exe && rc == 0) /* dwfl_core_file_report: the modules it reported */
		report_placed_files(t);
	dwfl_report_end(t->dwfl, NULL, NULL);
	if (rc < 0)
		problem("the process's modules cannot be read (%s): native frames are unnamed",
			rc == -1 ? dwfl_errmsg(-1) : strerror(rc));
	return 0;
}

/* A module's name as users know it: its file's base name. */
static const char *module_name(Dwfl_Module *m)
{
	const char *main_file = NULL;
	const char *name = dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, &main_file, NULL);
	const char *n = main_file ? main_file : name;
	if (!n)
		return NULL;
	const char *slash = strrchr(n, '/');
	return slash ? slash + 1 : n;
}

/* A native PC's function and module. libdwfl looks a symbol up by scanning the module's
 * table (a JIT linked with LLVM has a hundred thousand symbols), and every thread of a JIT
 * runtime stands at the same few PCs: the answers are kept. */
struct native_name {
	uint64_t pc;
	const char *function, *module; /* libdwfl's strings, valid while the Dwfl is */
	bool used;
};

#define NAME_SLOTS 4096

static const struct native_name *native_name(struct target *t, uint64_t pc)
{
	if (!t->names && !(t->names = calloc(NAME_SLOTS, sizeof(*t->names))))
		return NULL;
	size_t h = (size_t)((pc * UINT64_C(0x9e3779b97f4a7c15)) >> 52) % NAME_SLOTS;
	for (size_t probe = 0; probe < NAME_SLOTS; probe++, h = (h + 1) % NAME_SLOTS) {
		struct native_name *n = &t->names[h];
		if (n->used && n->pc == pc)
			return n;
		if (n->used)
			continue;
		n->used = true;
		n->pc = pc;
		Dwfl_Module *m = dwfl_addrmodule(t->dwfl, pc);
		if (m) {
			GElf_Off off;
			GElf_Sym sym;
			n->function = dwfl_module_addrinfo(m, pc, &off, &sym, NULL, NULL, NULL);
			n->module = module_name(m);
		}
		return n;
	}
	return NULL; /* full: the caller goes without */
}

/* -- Where the stackmaps are: JIT descriptors and loaded files, from the modules -- */

struct discovery {
	struct target *t;
};

/* Each module's file: the JIT descriptor it defines and its .llvm_stackmaps (the library
 * reads both, moved by the module's bias). */
static int each_module(Dwfl_Module *m, void **userdata, const char *name, Dwarf_Addr start,
		       void *arg)
{
	(void)userdata;
	(void)name;
	(void)start;
	struct discovery *d = arg;
	GElf_Addr bias;
	const char *file = NULL;
	if (!dwfl_module_getelf(m, &bias))
		return DWARF_CB_OK;
	dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, &file, NULL);
	const int n = file ? jitmap_process_scan_file(d->t->proc, file, bias, module_name(m)) : 0;
	return n < 0 ? DWARF_CB_ABORT : DWARF_CB_OK;
}

static int scan_process(struct target *t)
{
	/* Stackmaps are read for the JIT code the stacks are in, not for every entry. */
	const jitmap_process_opts popts = {.sz = sizeof(popts), .flags = JITMAP_PROCESS_LAZY};
	t->proc = jitmap_process_new(&t->memory, &popts);
	if (!t->proc) {
		fprintf(stderr, "jitmap-stack: out of memory\n");
		return -1;
	}
	struct discovery d = {.t = t};
	jitmap_process_scan_begin(t->proc);
	/* A core: the library's one scan (jitmap-dump's too), NT_FILE's files and those it
	 * placed without NT_FILE. A live process: the modules libdwfl lists. */
	const int rc = t->core ? jitmap_process_scan_core(t->proc, t->core)
			       : dwfl_getmodules(t->dwfl, each_module, &d, 0) != 0 ? -ENOMEM : 0;
	if (rc < 0 || jitmap_process_scan_end(t->proc)) {
		fprintf(stderr, "jitmap-stack: out of memory\n");
		return -1;
	}
	return 0;
}

/* What went wrong reading the JIT entries (after the walk: a stackmap is read when a frame
 * is in its code). */
static void process_problems(struct target *t)
{
	for (size_t k = 0; k < jitmap_process_num_problems(t->proc); k++)
		problem("%s", jitmap_process_problem(t->proc, k));
	jitmap_source_info si;
	for (size_t i = 0; i < jitmap_process_num_sources(t->proc); i++) {
		jitmap_process_source(t->proc, i, &si);
		for (size_t k = 0; k < si.num_problems; k++)
			problem("%s", jitmap_process_source_problem(t->proc, i, k));
	}
}

/* -- Values: a record evaluated in a frame -- */

struct frame_regs_target {
	const jitmap_frame_regs *regs;
	const struct target *t;
};

static int frame_read_reg(void *ctx, unsigned regno, void *buf, size_t size, char *why,
			  size_t why_len)
{
	const struct frame_regs_target *f = ctx;
	(void)why;
	(void)why_len;
	if (!jitmap_frame_reg_known(f->regs, regno) || size > 8)
		return -ENOENT; /* the library words it from the register's class */
	const uint64_t v = f->regs->reg[regno];
	uint8_t *b = buf;
	for (size_t i = 0; i < size; i++)
		b[f->t->order == JITMAP_ORDER_BIG ? size - 1 - i : i] = (uint8_t)(v >> (8 * i));
	/* What the unwinders know of an outer frame was restored from where it was saved (a
	 * caller-saved register is never carried over into a caller): believed. */
	return JITMAP_REG_RECOVERED;
}

static int frame_read_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			  size_t why_len)
{
	const struct frame_regs_target *f = ctx;
	return f->t->memory.read_mem(f->t->memory.ctx, addr, buf, len, why, why_len);
}

struct evaluated {
	jitmap_value v;
	int rc;
};

/* A frame's description, written as JSON and as text side by side. */
struct described {
	FILE *j, *x;
	char *json, *text;
	size_t jlen, tlen;
};

static bool describe_begin(struct described *d)
{
	memset(d, 0, sizeof(*d));
	d->j = open_memstream(&d->json, &d->jlen);
	d->x = open_memstream(&d->text, &d->tlen);
	if (d->j && d->x)
		return true;
	if (d->j)
		fclose(d->j);
	if (d->x)
		fclose(d->x);
	free(d->json);
	free(d->text);
	return false;
}

/* Close both streams: the strings are then complete. */
static void describe_end(struct described *d)
{
	fclose(d->j);
	fclose(d->x);
}

static void json_location_named(FILE *out, const jitmap_stackmap *sm, const jitmap_record *rec,
				size_t i, const struct evaluated *e, const char *name);

static void json_location(FILE *out, const jitmap_stackmap *sm, const jitmap_record *rec,
			  size_t i, const struct evaluated *e)
{
	json_location_named(out, sm, rec, i, e, NULL);
}

/* A location object of `info stackmap -json`, with "name" when `name` is not NULL. */
static void json_location_named(FILE *out, const jitmap_stackmap *sm, const jitmap_record *rec,
				size_t i, const struct evaluated *e, const char *name)
{
	const jitmap_location *loc = &rec->locations[i];
	char where[96];
	jitmap_location_format(sm, rec, loc, where, sizeof(where));
	fprintf(out, "{\"index\": %zu, \"kind\": ", i);
	json_string(out, jitmap_loc_kind_name(loc->kind));
	fprintf(out, ", \"where\": ");
	json_string(out, where);
	fprintf(out, ", \"size\": %u, \"value\": ", loc->size);
	if (e->rc == 0 && e->v.available) {
		if (loc->size > 8 && !e->v.is_address &&
		    (loc->kind == JITMAP_LOC_REGISTER || loc->kind == JITMAP_LOC_INDIRECT)) {
			fputc('"', out);
			for (unsigned k = 0; k < loc->size && k < JITMAP_VALUE_MAX; k++)
				fprintf(out, "%02x", e->v.bytes[k]);
			fputc('"', out);
		} else {
			fprintf(out, "%" PRIu64, e->v.u);
		}
	} else {
		fprintf(out, "null, \"error\": ");
		json_string(out, e->v.why[0] ? e->v.why : jitmap_strerror(e->rc));
	}
	if (loc->kind == JITMAP_LOC_INDIRECT && (e->rc == 0 || e->v.address))
		fprintf(out, ", \"address\": \"0x%" PRIx64 "\"", e->v.address);
	if (name) {
		fprintf(out, ", \"name\": ");
		json_string(out, name);
	}
	fputc('}', out);
}

static void text_value(FILE *out, const jitmap_location *loc, const struct evaluated *e)
{
	if (e->rc || !e->v.available) {
		fprintf(out, "<unavailable: %s>", e->v.why[0] ? e->v.why : jitmap_strerror(e->rc));
	} else if (loc->size > 8 && !e->v.is_address) {
		fprintf(out, "0x");
		for (unsigned k = 0; k < loc->size && k < JITMAP_VALUE_MAX; k++)
			fprintf(out, "%02x", e->v.bytes[k]);
	} else {
		int64_t s = (int64_t)e->v.u;
		if (loc->size && loc->size < 8 && (e->v.u >> (8 * loc->size - 1)) & 1)
			s = (int64_t)(e->v.u | ~((UINT64_C(1) << (8 * loc->size)) - 1));
		fprintf(out, "%" PRId64, e->v.is_address ? (int64_t)e->v.u : s);
		if (s < 0 || e->v.u > 9)
			fprintf(out, " (0x%" PRIx64 ")", e->v.u);
	}
}

static void json_locations(FILE *out, const jitmap_stackmap *sm, const jitmap_record *rec,
			   const struct evaluated *ev, const jitmap_location *first, size_t n)
{
	fputc('[', out);
	for (size_t k = 0; k < n; k++) {
		const size_t i = (size_t)(first - rec->locations) + k;
		if (k)
			fprintf(out, ", ");
		json_location(out, sm, rec, i, &ev[i]);
	}
	fputc(']', out);
}

/* -- Virtual frames: a runtime's deopt layout over a record's values -- */

/* The value a layout's method or bci refers to, written as JSON into `j`; the first problem
 * goes into `err`. `vals` are the indexes of the values the layout counts (a statepoint's
 * deopt values, else every location). */
static void vref_json(FILE *j, const jitmap_vref *r, const char *what, const size_t *vals,
		      size_t n, const struct evaluated *ev, char *err, size_t err_len)
{
	if (r->kind == JITMAP_VREF_NAME) {
		json_string(j, r->name);
		return;
	}
	if (r->kind == JITMAP_VREF_NUMBER) {
		fprintf(j, "%" PRIu64, r->number);
		return;
	}
	if (r->kind != JITMAP_VREF_DEOPT) {
		fprintf(j, "null");
		return;
	}
	if (r->number >= n) {
		if (!err[0])
			snprintf(err, err_len, "%s: deopt index %" PRIu64 " past the %zu values", what,
				 r->number, n);
		fprintf(j, "null");
		return;
	}
	const struct evaluated *e = &ev[vals[r->number]];
	if (e->rc || !e->v.available) {
		if (!err[0])
			snprintf(err, err_len, "%s: value %" PRIu64 " is unavailable (%s)", what,
				 r->number, e->v.why[0] ? e->v.why : jitmap_strerror(e->rc));
		fprintf(j, "null");
		return;
	}
	fprintf(j, "%" PRIu64, e->v.u);
}

/* "virtual_frames" of `info stackmap -json` (model.virtual_frames), and their text: under
 * the JIT frame, one line per interpreter frame as LLDB's `stackmap bt` writes it. */
static void describe_virtual_frames(FILE *j, FILE *x, const jitmap_stackmap *sm,
				    const jitmap_record *rec, const struct evaluated *ev,
				    const jitmap_deopt_layout *layout, const jitmap_statepoint_info *sp)
{
	const size_t n = sp ? sp->num_deopt : rec->num_locations;
	size_t *vals = malloc((n ? n : 1) * sizeof(*vals));
	if (!vals)
		return;
	for (size_t i = 0; i < n; i++)
		vals[i] = sp ? (size_t)(sp->deopt - rec->locations) + i : i;
	fprintf(j, ", \"virtual_frames\": [");
	for (uint32_t k = 0; k < layout->num_frames; k++) {
		const jitmap_vframe_layout *f = &layout->frames[k];
		char err[320] = "";
		char *mtext = NULL, *btext = NULL;
		size_t mlen, blen;
		FILE *m = open_memstream(&mtext, &mlen), *b = open_memstream(&btext, &blen);
		if (!m || !b) {
			if (m)
				fclose(m);
			if (b)
				fclose(b);
			free(mtext);
			free(btext);
			break;
		}
		vref_json(m, &f->method, "method", vals, n, ev, err, sizeof(err));
		vref_json(b, &f->bci, "bci", vals, n, ev, err, sizeof(err));
		fclose(m);
		fclose(b);
		fprintf(j, "%s{\"method\": %s, \"bci\": %s", k ? ", " : "", mtext, btext);
		/* The title: "Demo.square, bci 4", "method 7", "?" (a value unavailable). */
		fprintf(x, "    [");
		if (f->method.kind == JITMAP_VREF_NAME)
			fputs(f->method.name, x);
		else if (!strcmp(mtext, "null"))
			fputc('?', x);
		else
			fprintf(x, "method %s", mtext);
		if (strcmp(btext, "null"))
			fprintf(x, ", bci %s", btext);
		fputc(']', x);
		free(mtext);
		free(btext);
		int items = 0;
		for (int part = 0; part < 2; part++) {
			const jitmap_vslot *slots = part ? f->stack : f->locals;
			const unsigned count = part ? f->num_stack : f->num_locals;
			const char *key = part ? "stack" : "locals";
			fprintf(j, ", \"%s\": [", key);
			for (unsigned i = 0, shown = 0; i < count; i++) {
				if (slots[i].index >= n) {
					if (!err[0])
						snprintf(err, sizeof(err),
							 "%s: deopt index %u past the %zu values", key,
							 slots[i].index, n);
					continue;
				}
				const size_t at = vals[slots[i].index];
				fprintf(j, "%s", shown++ ? ", " : "");
				json_location_named(j, sm, rec, at, &ev[at], slots[i].name);
				fprintf(x, "%s", items++ ? ", " : "  ");
				if (part)
					fprintf(x, "stack #%u = ", i);
				else if (slots[i].name)
					fprintf(x, "%s = ", slots[i].name);
				else
					fprintf(x, "local #%u = ", i);
				text_value(x, &rec->locations[at], &ev[at]);
			}
			fputc(']', j);
		}
		if (err[0]) {
			fprintf(j, ", \"error\": ");
			json_string(j, err);
			fprintf(x, "%s(%s)", items ? ", " : "  ", err);
		}
		fputc('}', j);
		fputc('\n', x);
	}
	fputc(']', j);
	free(vals);
}

static bool image_holds(const jitmap_image *img, uint64_t pc)
{
	for (size_t i = 0; i < jitmap_image_num_code_ranges(img); i++) {
		const jitmap_image_range *r = jitmap_image_code_range(img, i);
		if (pc >= r->lo && pc < r->hi)
			return true;
	}
	return false;
}

/* The layout a runtime registered for record `rec` of frame `f`: in the image holding the code,
 * else in any other image whose code holds the frame's PC (a runtime's own image beside the
 * entry LLVM registers for the same code; jitmap_process_code_at gives one of them). */
static const jitmap_deopt_layout *layout_for(const struct target *t, const jitmap_stack_frame *f)
{
	const jitmap_function *fn = jitmap_record_function(f->stackmap, f->record);
	const char *name = fn ? fn->name : NULL;
	const jitmap_deopt_layout *d = NULL;
	if (f->code.image)
		d = jitmap_layouts_find(jitmap_image_layouts(f->code.image), f->record->id, name);
	for (size_t i = 0; !d && i < jitmap_process_num_sources(t->proc); i++) {
		jitmap_source_info si;
		if (jitmap_process_source(t->proc, i, &si) == 0 && si.image &&
		    jitmap_image_layouts(si.image) && image_holds(si.image, f->pc))
			d = jitmap_layouts_find(jitmap_image_layouts(si.image), f->record->id, name);
	}
	return d;
}

/* The record object of `info stackmap -json` (less its "frame"), for frame `f` (at an exact
 * record match: jitmap-stack does not disassemble to match a patchpoint's call sequence), and
 * its text. */
static void describe_record(const struct target *t, const struct options *o,
			    const jitmap_stack_frame *f, const char *source, struct frame_out *fo)
{
	const jitmap_stackmap *sm = f->stackmap;
	const jitmap_record *rec = f->record;
	const jitmap_function *fn = jitmap_record_function(sm, rec);
	struct frame_regs_target ft = {f->regs, t};
	const jitmap_target target = {&ft, frame_read_reg, frame_read_mem};
	const jitmap_eval_opts eopts = {.sz = sizeof(eopts), .frame_level = f->level};
	struct evaluated *ev = calloc(rec->num_locations ? rec->num_locations : 1, sizeof(*ev));
	if (!ev)
		return;
	for (size_t i = 0; i < rec->num_locations; i++)
		ev[i].rc = jitmap_location_eval_frame(sm, rec, &rec->locations[i], &target, &eopts,
						      &ev[i].v);
	jitmap_statepoint_info sp;
	const bool is_sp = jitmap_statepoint_wanted(sm, rec, JITMAP_STATEPOINT_AUTO, NULL, 0) &&
			   jitmap_statepoint_decode(sm, rec, &sp, NULL, 0) == 0;

	struct described d;
	if (!describe_begin(&d)) {
		free(ev);
		return;
	}
	FILE *j = d.j, *x = d.x;
	const char *fname = fn && fn->name ? fn->name : fo->function;
	fprintf(j, "{\"pc\": \"0x%" PRIx64 "\", \"function\": ", f->pc);
	json_string(j, fname);
	fprintf(j, ", \"record\": {\"id\": %" PRIu64 ", \"offset\": %" PRIu32
		   ", \"function_address\": \"0x%" PRIx64 "\", \"stack_size\": ",
		rec->id, rec->instruction_offset, fn ? fn->address : 0);
	if (!fn || fn->stack_size == UINT64_MAX)
		fprintf(j, "null");
	else
		fprintf(j, "%" PRIu64, fn->stack_size);
	fprintf(j, ", \"pc\": \"0x%" PRIx64 "\", \"match\": \"exact\", \"source\": ",
		jitmap_record_pc(sm, rec));
	json_string(j, source);
	fprintf(j, "}, \"locations\": ");
	json_locations(j, sm, rec, ev, rec->locations, rec->num_locations);
	fprintf(j, ", \"live_outs\": [");
	for (size_t i = 0; i < rec->num_live_outs; i++) {
		const char *r = jitmap_reg_name(jitmap_stackmap_arch(sm), rec->live_outs[i].dwarf_reg);
		char label[16];
		snprintf(label, sizeof(label), "R#%u", rec->live_outs[i].dwarf_reg);
		fprintf(j, "%s{\"register\": ", i ? ", " : "");
		json_string(j, r ? r : label);
		fprintf(j, ", \"size\": %u}", rec->live_outs[i].size);
	}
	fprintf(j, "], \"statepoint\": ");
	fprintf(x, "    record %" PRIu64 " at 0x%" PRIx64 ", %u location%s, %u live-out%s%s\n",
		rec->id, jitmap_record_pc(sm, rec), rec->num_locations,
		rec->num_locations == 1 ? "" : "s", rec->num_live_outs,
		rec->num_live_outs == 1 ? "" : "s", is_sp ? " (statepoint)" : "");
	if (o->values) {
		for (size_t i = 0; i < rec->num_locations; i++) {
			const jitmap_location *loc = &rec->locations[i];
			char where[96];
			jitmap_location_format(sm, rec, loc, where, sizeof(where));
			fprintf(x, "      #%-3zu %-14s %-22s size %-3u ", i,
				jitmap_loc_kind_name(loc->kind), where, loc->size);
			text_value(x, loc, &ev[i]);
			fputc('\n', x);
		}
	}
	if (!is_sp) {
		fprintf(j, "null");
	} else {
		fprintf(j, "{\"calling_convention\": %" PRIu64 ", \"flags\": %" PRIu64
			   ", \"deopt\": ", sp.calling_convention, sp.flags);
		json_locations(j, sm, rec, ev, sp.deopt, sp.num_deopt);
		fprintf(j, ", \"gc_roots\": [");
		for (size_t k = 0; k < sp.num_gc_pairs; k++) {
			const size_t b = (size_t)(sp.gc_pairs - rec->locations) + 2 * k, d = b + 1;
			fprintf(j, "%s{\"base\": ", k ? ", " : "");
			json_location(j, sm, rec, b, &ev[b]);
			fprintf(j, ", \"derived\": ");
			json_location(j, sm, rec, d, &ev[d]);
			const bool both = ev[b].rc == 0 && ev[b].v.available && ev[d].rc == 0 &&
					  ev[d].v.available && rec->locations[b].size <= 8 &&
					  rec->locations[d].size <= 8;
			if (both)
				fprintf(j, ", \"offset\": %" PRId64 "}",
					(int64_t)(ev[d].v.u - ev[b].v.u));
			else
				fprintf(j, ", \"offset\": null}");
			if (o->gc_roots) {
				char wb[96], wd[96];
				jitmap_location_format(sm, rec, &rec->locations[b], wb, sizeof(wb));
				jitmap_location_format(sm, rec, &rec->locations[d], wd, sizeof(wd));
				fprintf(x, "      gc root: base %s = ", wb);
				text_value(x, &rec->locations[b], &ev[b]);
				fprintf(x, ", derived %s = ", wd);
				text_value(x, &rec->locations[d], &ev[d]);
				if (both)
					fprintf(x, " (offset %" PRId64 ")",
						(int64_t)(ev[d].v.u - ev[b].v.u));
				fputc('\n', x);
			}
		}
		fprintf(j, "], \"gc_allocas\": ");
		json_locations(j, sm, rec, ev, sp.gc_allocas, sp.num_gc_allocas);
		fprintf(j, ", \"decoded\": \"shape\"}");
	}
	const jitmap_deopt_layout *layout = layout_for(t, f);
	if (layout)
		describe_virtual_frames(j, x, sm, rec, ev, layout, is_sp ? &sp : NULL);
	fputc('}', j);
	describe_end(&d);
	fo->stackmap_json = d.json;
	fo->text = d.text;
	free(ev);
}

/* The object of `info stackmap -json` (less its "frame") for a JIT frame at no record: the
 * nearest records of its function, and why none is shown. */
static void describe_nearest(const jitmap_stack_frame *f, struct frame_out *fo)
{
	const jitmap_stackmap *sm = f->code.stackmap;
	const jitmap_record *near[2] = {NULL, NULL};
	const char *fname = NULL;
	if (sm && jitmap_stackmap_nearest(sm, f->pc, &near[0], &near[1]) == 0) {
		const jitmap_function *fn = jitmap_record_function(sm, near[0] ? near[0] : near[1]);
		fname = fn ? fn->name : NULL;
	} else {
		near[0] = near[1] = NULL;
	}
	const char *shown = fname ? fname : fo->function;
	struct described d;
	if (!describe_begin(&d))
		return;
	FILE *j = d.j, *x = d.x;
	fprintf(x, "frame %u (pc 0x%" PRIx64 "%s%s)", f->level, f->pc, shown ? ", in " : "",
		shown ? shown : "");
	if (!near[0] && !near[1]) {
		fprintf(x, " is not at a stackmap record (no stackmap describes the code there)");
	} else {
		fprintf(x, " is not at a stackmap record; nearest%s%s: ", fname ? " in " : "",
			fname ? fname : "");
		for (int k = 0, n = 0; k < 2; k++) {
			if (!near[k])
				continue;
			const int64_t dist = (int64_t)(jitmap_record_pc(sm, near[k]) - f->pc);
			fprintf(x, "%srecord %" PRIu64 " at 0x%" PRIx64 " (%" PRId64 " bytes %s)",
				n++ ? ", " : "", near[k]->id, jitmap_record_pc(sm, near[k]),
				dist < 0 ? -dist : dist, dist > 0 ? "after" : "before");
		}
		if (f->level > 0)
			fprintf(x, ". A record is only shown at the PC it describes");
	}
	fflush(x); /* the error, complete, goes into the JSON too */
	fprintf(j, "{\"pc\": \"0x%" PRIx64 "\", \"function\": ", f->pc);
	json_string_or_null(j, shown);
	fprintf(j, ", \"record\": null, \"locations\": [], \"live_outs\": [], \"statepoint\": null, "
		   "\"nearest\": [");
	for (int k = 0, n = 0; k < 2; k++) {
		if (!near[k])
			continue;
		const jitmap_function *fn = jitmap_record_function(sm, near[k]);
		fprintf(j, "%s{\"id\": %" PRIu64 ", \"pc\": \"0x%" PRIx64 "\", \"function\": ",
			n++ ? ", " : "", near[k]->id, jitmap_record_pc(sm, near[k]));
		json_string_or_null(j, fn ? fn->name : NULL);
		fprintf(j, ", \"distance\": %" PRId64 "}",
			(int64_t)(jitmap_record_pc(sm, near[k]) - f->pc));
	}
	fprintf(j, "], \"error\": ");
	json_string(j, d.text);
	fputc('}', j);
	describe_end(&d);
	fo->stackmap_json = d.json;
	/* The text output says it in one line under the frame. */
	char *line = NULL;
	if (asprintf(&line, "    (%s)\n", d.text) < 0)
		line = NULL;
	free(d.text);
	fo->text = line;
}

/* -- Walking every thread -- */

struct walk {
	struct target *t;
	const struct options *o;
	struct thread *th;
};

static int on_frame(void *ctx, const jitmap_stack_frame *f)
{
	struct walk *w = ctx;
	struct thread *th = w->th;
	if (th->nframes == th->cap_frames) {
		const size_t cap = th->cap_frames ? 2 * th->cap_frames : 32;
		struct frame_out *a = realloc(th->frames, cap * sizeof(*a));
		if (!a)
			return -ENOMEM;
		th->frames = a;
		th->cap_frames = cap;
	}
	struct frame_out *fo = &th->frames[th->nframes++];
	memset(fo, 0, sizeof(*fo));
	fo->level = f->level;
	fo->pc = f->pc;
	fo->exact = f->exact;
	fo->jit = f->jit;
	fo->method = jitmap_unwind_method_name(f->method);
	const uint64_t at = f->exact || !f->pc ? f->pc : f->pc - 1;
	const char *source = NULL;
	if (f->jit) {
		if (f->code.function)
			fo->function = strdup(f->code.function);
		fo->entry = f->code.entry;
		source = f->code.source;
	} else {
		const struct native_name *nn = native_name(w->t, at);
		if (nn && nn->function)
			fo->function = strdup(nn->function);
		if (nn && nn->module)
			fo->module = strdup(nn->module);
	}
	if (f->record && (w->o->values || w->o->gc_roots)) {
		jitmap_source_info si;
		const char *src = source;
		for (size_t i = 0; !src && i < jitmap_process_num_sources(w->t->proc); i++)
			if (jitmap_process_source(w->t->proc, i, &si) == 0 && si.stackmap == f->stackmap)
				src = si.name;
		describe_record(w->t, w->o, f, src ? src : "", fo);
	} else if (f->jit && (w->o->values || w->o->gc_roots)) {
		describe_nearest(f, fo);
	}
	if (f->stop && f->stop != -ESRCH)
		fo->why = strdup(f->why);
	return g_interrupted ? -EINTR : 0;
}

static void walk_threads(struct target *t, const struct options *o)
{
	struct native n = {.t = t};
	const jitmap_stacker_opts sopts = {.sz = sizeof(sopts), .native_step = native_step,
					   .native_ctx = &n, .order = t->order};
	if (!dwfl_attach_state(t->dwfl, t->core_elf, t->pid, &thread_callbacks, &n))
		problem("libdwfl cannot unwind native frames here (%s): the frame pointer is used",
			dwfl_errmsg(-1));
	const bool dwfl_ok = dwfl_pid(t->dwfl) > 0;
	jitmap_stacker_opts so = sopts;
	if (!dwfl_ok)
		so.native_step = NULL;
	jitmap_stacker *st = jitmap_stacker_new(t->proc, &t->memory, t->arch, &so);
	if (!st) {
		problem("jitmap cannot unwind %s stacks: %s", jitmap_arch_name(t->arch),
			strerror(errno));
		return;
	}
	for (size_t i = 0; i < t->nthreads && !g_interrupted; i++) {
		struct thread *th = &t->threads[i];
		if (!th->have_regs)
			continue;
		struct walk w = {t, o, th};
		jitmap_stacker_walk(st, &th->regs, on_frame, &w);
	}
	jitmap_stacker_free(st);
}

/* -- Output -- */

/* How many JIT entries the process has: a count only when every descriptor's list was read
 * to its end and every file that may define one was looked into. `unknown`: some descriptor
 * could not be read at all; `partial`: some list was read only in part (the count is of the
 * entries read); `unread`: files of a core that could not be read; `why`: the first such
 * problem. */
struct jit_count {
	size_t entries, unread;
	bool unknown, partial;
	char why[512];
};

static void count_jit_entries(const struct target *t, struct jit_count *n)
{
	memset(n, 0, sizeof(*n));
	for (size_t i = 0; i < jitmap_process_num_sources(t->proc); i++) {
		jitmap_source_info si;
		if (jitmap_process_source(t->proc, i, &si) == 0 && si.kind == JITMAP_SOURCE_JIT)
			n->entries++;
	}
	for (size_t i = 0; i < jitmap_process_num_descriptors(t->proc); i++) {
		jitmap_descriptor_info d;
		if (jitmap_process_descriptor(t->proc, i, &d) || d.complete)
			continue;
		/* (the words of the process's problem for it) */
		if (!n->unknown && !n->partial)
			snprintf(n->why, sizeof(n->why), "the %s in %s: %s",
				 d.readable ? "JIT entry list of the descriptor" : "JIT descriptor",
				 d.where, d.problem ? d.problem : "not read");
		n->unknown |= !d.readable;
		n->partial |= d.readable;
	}
	n->unread = jitmap_process_num_unread_files(t->proc);
	if (n->unread && !n->unknown && !n->partial)
		snprintf(n->why, sizeof(n->why), "%zu file%s the core maps could not be read (see "
			 "problems): a JIT descriptor in one would not be seen", n->unread,
			 n->unread == 1 ? "" : "s");
}

static void print_text(const struct target *t, const struct options *o)
{
	struct jit_count n;
	count_jit_entries(t, &n);
	printf("%s %d%s%s%s, %s, %zu thread%s; ", t->live ? "process" : "core of process",
	       (int)t->pid, t->comm[0] ? " (" : "", t->comm, t->comm[0] ? ")" : "",
	       jitmap_arch_name(t->arch), t->nthreads, t->nthreads == 1 ? "" : "s");
	if (n.unknown)
		printf("JIT entries unknown (a JIT descriptor could not be read: see problems)\n");
	else if (n.partial)
		printf("%zu JIT entr%s read, the rest unknown (a JIT entry list is damaged: see "
		       "problems)\n", n.entries, n.entries == 1 ? "y" : "ies");
	else if (n.unread)
		printf("%zu JIT entr%s found, more may be in the %zu file%s the core maps that could "
		       "not be read (see problems)\n", n.entries, n.entries == 1 ? "y" : "ies",
		       n.unread, n.unread == 1 ? "" : "s");
	else
		printf("%zu JIT entr%s\n", n.entries, n.entries == 1 ? "y" : "ies");
	for (size_t i = 0; i < t->nthreads; i++) {
		const struct thread *th = &t->threads[i];
		printf("\nthread %d", (int)th->tid);
		if (th->name[0])
			printf(" \"%s\"", th->name);
		printf(":\n");
		if (th->problem)
			printf("  (%s)\n", th->problem);
		for (size_t k = 0; k < th->nframes; k++) {
			const struct frame_out *f = &th->frames[k];
			printf("  #%-3u 0x%016" PRIx64 " in %s", f->level, f->pc,
			       f->function ? f->function : "??");
			if (f->jit) {
				printf(" [JIT");
				if (f->entry)
					printf(" entry 0x%" PRIx64, f->entry);
				printf("]");
			} else if (f->module) {
				printf(" (%s)", f->module);
			}
			printf("\n");
			if (f->text && (o->values || o->gc_roots))
				fputs(f->text, stdout);
			if (f->why)
				printf("  (unwinding stops here: %s)\n", f->why);
		}
	}
	if (g_problems.n) {
		printf("\nproblems:\n");
		for (size_t i = 0; i < g_problems.n; i++)
			printf("  %s\n", g_problems.v[i]);
	}
}

static void print_json(const struct target *t, const struct options *o, const char *target)
{
	(void)o;
	printf("{\"process\": {\"pid\": %d, \"live\": %s, \"core\": ", (int)t->pid,
	       t->live ? "true" : "false");
	json_string_or_null(stdout, t->live ? NULL : target);
	printf(", \"name\": ");
	json_string_or_null(stdout, t->comm[0] ? t->comm : NULL);
	printf(", \"arch\": ");
	json_string(stdout, jitmap_arch_name(t->arch));
	struct jit_count n;
	count_jit_entries(t, &n);
	printf(", \"jit_descriptors\": %zu, \"jit_entries\": ",
	       jitmap_process_num_descriptors(t->proc));
	/* null where not every list was read to its end, or a file that may define one was not
	 * read: the error says which and why */
	const bool counted = !n.unknown && !n.partial && !n.unread;
	if (!counted)
		printf("null, \"jit_entries_read\": %zu, \"error\": ", n.entries);
	else
		printf("%zu, \"jit_entries_read\": %zu, \"error\": ", n.entries, n.entries);
	json_string_or_null(stdout, counted ? NULL : n.why);
	printf("}, \"threads\": [");
	for (size_t i = 0; i < t->nthreads; i++) {
		const struct thread *th = &t->threads[i];
		printf("%s{\"tid\": %d, \"name\": ", i ? ", " : "", (int)th->tid);
		json_string_or_null(stdout, th->name[0] ? th->name : NULL);
		printf(", \"frames\": [");
		for (size_t k = 0; k < th->nframes; k++) {
			const struct frame_out *f = &th->frames[k];
			printf("%s{\"index\": %u, \"pc\": \"0x%" PRIx64 "\", \"function\": ",
			       k ? ", " : "", f->level, f->pc);
			json_string_or_null(stdout, f->function);
			printf(", \"module\": ");
			json_string_or_null(stdout, f->jit ? NULL : f->module);
			printf(", \"jit_entry\": ");
			if (f->jit && f->entry)
				printf("\"0x%" PRIx64 "\"", f->entry);
			else
				printf("null");
			printf(", \"jit\": %s, \"unwound_by\": ", f->jit ? "true" : "false");
			json_string(stdout, f->method);
			printf(", \"stackmap\": %s", f->stackmap_json ? f->stackmap_json : "null");
			if (f->why) {
				printf(", \"error\": ");
				json_string(stdout, f->why);
			}
			printf("}");
		}
		printf("]");
		if (th->problem) {
			printf(", \"error\": ");
			json_string(stdout, th->problem);
		}
		printf("}");
	}
	printf("], \"problems\": [");
	for (size_t i = 0; i < g_problems.n; i++) {
		printf("%s", i ? ", " : "");
		json_string(stdout, g_problems.v[i]);
	}
	printf("]}\n");
}

/* -- Main -- */

static void usage(FILE *out)
{
	fprintf(out,
		"usage: jitmap-stack [--json] [--values] [--gc-roots] PID | CORE [--exe FILE]\n"
		"Every thread's stack of a live process (PID) or a core file, JIT frames named and\n"
		"unwound by jitmap, native frames from the process's modules.\n"
		"  --json       one JSON object (docs/jitmap-stack.md)\n"
		"  --values     each frame at a stackmap record shows its locations and values\n"
		"  --gc-roots   each frame at a statepoint shows its GC roots (base, derived)\n"
		"  --exe FILE   the core's executable, when it is not where the core says\n"
		"  --help, --version\n"
		"A live process is stopped while it is read (ptrace) and let go before anything is\n"
		"printed. Exit status: 0 the stacks were read, 1 the target could not be read,\n"
		"2 usage.\n");
}

static int parse_args(int argc, char **argv, struct options *o)
{
	enum { OPT_JSON = 256, OPT_VALUES, OPT_GC, OPT_EXE, OPT_VERSION };
	static const struct option longopts[] = {
		{"json", no_argument, NULL, OPT_JSON},
		{"values", no_argument, NULL, OPT_VALUES},
		{"gc-roots", no_argument, NULL, OPT_GC},
		{"exe", required_argument, NULL, OPT_EXE},
		{"version", no_argument, NULL, OPT_VERSION},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON: o->json = true; break;
		case OPT_VALUES: o->values = true; break;
		case OPT_GC: o->gc_roots = true; break;
		case OPT_EXE: o->exe = optarg; break;
		case OPT_VERSION:
			printf("jitmap-stack %s (libjitmap %s)\n", JITMAP_VERSION, jitmap_version());
			exit(0);
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "jitmap-stack: %s\n", optind >= argc ? "a PID or a core file is needed"
								     : "one PID or core file at a time");
		usage(stderr);
		return 2;
	}
	o->target = argv[optind];
	return 0;
}

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

int main(int argc, char **argv)
{
	struct options o = {0};
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	elf_version(EV_CURRENT);
	struct target t = {.mem_fd = -1, .core_fd = -1};
	pid_t pid;
	/* While threads are stopped, a signal only asks us to stop early: they are let go. */
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	for (int s = 0, sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT}; s < 4; s++)
		sigaction(sigs[s], &sa, NULL);

	const bool live = is_pid(o.target, &pid) && access(o.target, F_OK) != 0;
	if (live) {
		if (o.exe)
			fprintf(stderr, "jitmap-stack: --exe is for core files; ignored\n");
		rc = open_live(&t, pid);
	} else {
		rc = open_core(&t, o.target, o.exe);
	}
	if (rc == 0) {
		size_t readable = 0;
		for (size_t i = 0; i < t.nthreads; i++)
			readable += t.threads[i].have_regs;
		if (!readable) {
			fprintf(stderr, "jitmap-stack: %s: no thread's registers could be read%s\n",
				o.target, live ? " (the process exited?)" : "");
			for (size_t i = 0; i < g_problems.n; i++)
				fprintf(stderr, "jitmap-stack: %s\n", g_problems.v[i]);
			rc = -1;
		}
	}
	if (rc == 0)
		rc = open_dwfl(&t, o.exe);
	if (rc == 0)
		rc = scan_process(&t);
	if (rc == 0)
		walk_threads(&t, &o);
	detach_all(&t); /* before printing: the process runs again as soon as possible */
	if (t.proc)
		process_problems(&t);
	if (g_interrupted) {
		fprintf(stderr, "jitmap-stack: interrupted; the process was let go\n");
		if (rc == 0)
			problem("interrupted: the stacks may be incomplete");
	}
	if (rc == 0) {
		if (o.json)
			print_json(&t, &o, o.target);
		else
			print_text(&t, &o);
	}
	for (size_t i = 0; i < t.nthreads; i++) {
		for (size_t k = 0; k < t.threads[i].nframes; k++) {
			free(t.threads[i].frames[k].function);
			free(t.threads[i].frames[k].module);
			free(t.threads[i].frames[k].stackmap_json);
			free(t.threads[i].frames[k].text);
			free(t.threads[i].frames[k].why);
		}
		free(t.threads[i].frames);
		free(t.threads[i].problem);
	}
	free(t.threads);
	free(t.chunks);
	free(t.names);
	jitmap_process_free(t.proc);
	if (t.dwfl)
		dwfl_end(t.dwfl);
	if (t.core_elf)
		elf_end(t.core_elf);
	if (t.core_fd >= 0)
		close(t.core_fd);
	if (t.mem_fd >= 0)
		close(t.mem_fd);
	jitmap_core_free(t.core);
	for (size_t i = 0; i < g_problems.n; i++)
		free(g_problems.v[i]);
	free(g_problems.v);
	return rc ? 1 : 0;
}
