/* jitmap-stack: every thread's stack of a live process or a core, without a debugger.
 *
 * Native frames come from elfutils' libdwfl (the process's modules, their symbols and CFI,
 * signal frames); JIT frames from libjitmap (the JIT entries registered through
 * __jit_debug_descriptor, named from their images and unwound by jitmap's unwinder: CFI,
 * stackmap frame sizes, the frame pointer), the two joined by a jitmap_stacker
 * (include/jitmap/stack.h). A live process is stopped by libjitmap (include/jitmap/live.h:
 * PTRACE_SEIZE and PTRACE_INTERRUPT, no signal is sent, and the kernel lets the threads go if
 * this tool dies), read, and let go before the output is printed. docs/jitmap-stack.md has the details and the
 * JSON fields in docs/json.md.
 */
#define _GNU_SOURCE
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
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include <jitmap/arch.h>
#include <jitmap/frame.h>
#include <jitmap/core.h>
#include <jitmap/jitmap.h>
#include <jitmap/live.h>
#include <jitmap/process.h>
#include <jitmap/stack.h>

#include "cxx_names.h"
#include "debuginfo_cache.h"
#include "heap.h"
#include "json.h"
#include "report.h"


struct options {
	bool json, values, gc_roots, registers, no_perf_maps;
	const char *target, *exe, *sysroot;
	const char **perf_files; /* --perf-map, --jitdump: in the order given */
	size_t nperf;
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
	unsigned level;      /* as GDB numbers it: inlined functions are frames of their own */
	uint64_t pc;
	bool exact, jit;
	bool inlined;        /* a function inlined at this PC into the next frame's */
	bool tail_call;      /* a function that tail-called the frame before (GDB's "tail call
			      * frame", from DWARF call-site information) */
	char *function, *module;
	uint64_t entry;
	char *named_by;      /* JIT code a perf map or jitdump names: "perf map PATH" */
	char *source_line;   /* and the source line its debug info gives, "FILE:LINE" */
	char *stackmap_json; /* the record object (JSON), when asked for and at a record */
	char *text;          /* the same for the text output */
	char *registers_json, *registers_text; /* --registers */
	char *why;           /* how the walk ended here, when it did not end well */
	const char *method;
	/* Reached by a guess (jitmap_stack_frame.guess): its registers and values are not
	 * stated. `guess_first`: the first such frame of its thread, where the text says why. */
	char *guess;
	bool guess_first;
};

struct thread {
	pid_t tid;
	char name[64];
	bool have_regs;
	jitmap_frame_regs regs;
	struct frame_out *frames;
	size_t nframes, cap_frames;
	unsigned next_level;
	char *problem;
};

struct target {
	bool live;
	pid_t pid;
	jitmap_live *process; /* live: its threads stopped until jitmap_live_detach */
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
	struct tail_memo *tails; /* tail_calls' answers, by return address and callee */
	jitmap_process *proc;
};

static volatile sig_atomic_t g_interrupted;

static void on_signal(int sig)
{
	(void)sig;
	g_interrupted = 1;
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

/* The threads libjitmap stopped and read (jitmap/live.h), as the output lists them. 0, or -1
 * with the reason said. */
static int live_threads(struct target *t)
{
	t->live = true;
	t->pid = jitmap_live_pid(t->process);
	t->arch = jitmap_live_arch(t->process);
	t->order = jitmap_live_byte_order(t->process);
	snprintf(t->comm, sizeof(t->comm), "%s", jitmap_live_name(t->process));
	t->memory = jitmap_live_target(t->process);
	for (size_t i = 0; jitmap_live_warning(t->process, i); i++)
		problem("%s", jitmap_live_warning(t->process, i));
	for (size_t i = 0; i < jitmap_live_num_threads(t->process); i++) {
		const jitmap_live_thread_info *ti = jitmap_live_thread(t->process, i);
		struct thread *th = add_thread(t, ti->tid);
		if (!th || (ti->error && !(th->problem = strdup(ti->why)))) {
			fprintf(stderr, "jitmap-stack: out of memory\n");
			return -1;
		}
		snprintf(th->name, sizeof(th->name), "%s", ti->name);
		if (!ti->error) {
			th->regs = *ti->regs;
			th->have_regs = true;
		}
	}
	return 0;
}

static int open_core(struct target *t, const char *path, const char *exe, const char *sysroot)
{
	jitmap_error err;
	const jitmap_core_opts opts = {.sz = sizeof(opts), .exe = exe, .sysroot = sysroot};
	t->core = jitmap_core_open(path, &opts, &err);
	if (!t->core) {
		report_error("jitmap-stack", path, &err);
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
		jitmap_core_memory_info mi = {.sz = sizeof(mi)};
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

/* Module names made here, kept until exit (a frame's name points at one). */
static char **g_names;
static size_t g_nnames;

/* A module's name as users know it: its path's base name, without the " (deleted)" the
 * kernel appends to a file unlinked since it was mapped. Kept until exit; NULL only when out
 * of memory. */
static const char *module_name_of(const char *path)
{
	char buf[256];
	const char *slash = strrchr(path, '/');
	snprintf(buf, sizeof(buf), "%s", slash ? slash + 1 : path);
	const size_t n = strlen(buf), dl = strlen(" (deleted)");
	if (n > dl && !strcmp(buf + n - dl, " (deleted)"))
		buf[n - dl] = 0;
	for (size_t i = 0; i < g_nnames; i++)
		if (!strcmp(g_names[i], buf))
			return g_names[i];
	char **v = realloc(g_names, (g_nnames + 1) * sizeof(*v));
	if (!v)
		return NULL;
	g_names = v;
	return (g_names[g_nnames] = strdup(buf)) ? g_names[g_nnames++] : NULL;
}

static char *g_debuginfo_path;

/* Separate debug files found as libdwfl finds them, a compressed one decompressed once into a
 * cache (debuginfo_cache.c): numbering frames as GDB does reads libc's DWARF. */
/* The process whose modules live_find_elf opens (libdwfl's callbacks carry no context). */
static struct target *g_live;

/* A live process's module, as the process maps it: a package upgrade may have deleted the
 * file at its path or put another build there (libdwfl opens the path, whatever it holds).
 * libjitmap opens the mapping itself, or the path when it is the mapped file; a deleted
 * file it cannot open is read from the process's memory, as libdwfl does; a file replaced
 * at its path is refused, with the reason: its symbols and CFI are not the process's. */
static int live_find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
			 char **file_name, Elf **elfp)
{
	if (!g_live || !g_live->process || name[0] != '/')
		return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
	char path[PATH_MAX], why[512];
	const int fd = jitmap_live_mapped_file(g_live->process, base, path, sizeof(path), why,
					       sizeof(why));
	if (fd >= 0) {
		if (!(*file_name = strdup(path))) {
			close(fd);
			return -1;
		}
		return fd;
	}
	const size_t n = strlen(name), dl = strlen(" (deleted)");
	const bool deleted = n > dl && !strcmp(name + n - dl, " (deleted)");
	if (fd == -ESTALE && deleted) /* its image in memory: what libdwfl reads */
		return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
	if (fd != -ENOENT)
		problem("%s: %s: its symbols and CFI are not used", name, why);
	return -1;
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = live_find_elf,
	.find_debuginfo = jitmap_stack_find_debuginfo,
	.debuginfo_path = &g_debuginfo_path,
};

/* --sysroot: where a core's files are, as GDB's `set sysroot` (a core from another machine
 * or a container, its files copied or mounted there). */
static const char *g_sysroot;

/* A core's module: under --sysroot, the file at its path there when its build ID is the one
 * the core's copy of its first page holds (libdwfl knows it: dwfl_module_build_id); else
 * libdwfl's own search by build ID (its debug directories, debuginfod), which never takes a
 * file of another build. */
static int core_find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
			 char **file_name, Elf **elfp)
{
	if (g_sysroot && name[0] == '/') {
		char path[PATH_MAX];
		const unsigned char *want;
		GElf_Addr vaddr;
		const int want_len = dwfl_module_build_id(mod, &want, &vaddr);
		if (snprintf(path, sizeof(path), "%s%s", g_sysroot, name) < (int)sizeof(path)) {
			const int fd = open(path, O_RDONLY | O_CLOEXEC);
			Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
			const void *got = NULL;
			const ssize_t got_len = elf ? dwelf_elf_gnu_build_id(elf, &got) : -1;
			const bool same = elf && (want_len <= 0 || (got_len == want_len &&
								   !memcmp(got, want, (size_t)got_len)));
			if (same && (*file_name = strdup(path))) {
				*elfp = elf;
				return fd;
			}
			if (elf)
				elf_end(elf);
			if (fd >= 0)
				close(fd);
			if (elf && !same)
				problem("%s: another build than the file the core's process mapped: not "
					"used", path);
		}
	}
	return dwfl_build_id_find_elf(mod, userdata, name, base, file_name, elfp);
}

static const Dwfl_Callbacks core_callbacks = {
	.find_elf = core_find_elf,
	.find_debuginfo = jitmap_stack_find_debuginfo,
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

/* Whether CFI rows of module `m` cover `pc` (its .eh_frame, then its .debug_frame, the order
 * libdwfl tries them in): libdwfl then unwound by them, not by its backend's frame-pointer
 * fallback, and a callee-saved register it did not recover had no rule ("same value" under
 * the ABI; the library carries it, stack.h). */
/* Whether the module's CFI has a row for `pc`; when it has, set in `restored` each register
 * whose rule there reads it back from a save slot or another register (not "same value", not
 * undefined: libdw gives those no location expression). */
static bool cfi_covers(Dwfl_Module *m, Dwarf_Addr pc, unsigned nregs, uint64_t *restored)
{
	for (int k = 0; k < 2; k++) {
		Dwarf_Addr bias = 0;
		Dwarf_CFI *cfi = k == 0 ? dwfl_module_eh_cfi(m, &bias) : dwfl_module_dwarf_cfi(m, &bias);
		Dwarf_Frame *frame = NULL;
		if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &frame) == 0) {
			for (unsigned r = 0; r < nregs && r < JITMAP_UNWIND_MAX_REGS; r++) {
				Dwarf_Op mem[3], *ops = NULL;
				size_t nops = 0;
				if (dwarf_frame_register(frame, (int)r, mem, &ops, &nops) == 0 && ops &&
				    nops > 0)
					restored[r / 64] |= UINT64_C(1) << (r % 64);
			}
			free(frame);
			return true;
		}
	}
	return false;
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
	Dwfl_Module *m = dwfl_addrmodule(n->t->dwfl, n->initial.pc);
	if (!m)
		return -ENOENT;
	n->seen = 0;
	n->got = false;
	const int rc = dwfl_getthread_frames(n->t->dwfl, n->t->pid, native_frame, n);
	const unsigned sp = (unsigned)jitmap_reg_sp(n->t->arch);
	if (n->got && jitmap_frame_reg_known(&n->caller, sp)) {
		memset(out, 0, sizeof(*out));
		/* Every register libdwfl gives goes in; the library drops the caller-saved ones
		 * (elfutils marks x86-64's rax "same value": docs/jitmap-stack.md). */
		out->caller = n->caller;
		out->cfa = n->caller.reg[sp];
		out->method = cfi_covers(m, n->initial.pc, jitmap_arch_num_core_regs(n->t->arch),
					 out->restored) ? JITMAP_UNWIND_CFI : JITMAP_UNWIND_NONE;
		*caller_exact = n->caller_exact;
		/* Not by CFI (libdwfl's frame-pointer rule): why, for the guess the library marks. */
		GElf_Addr bias;
		if (out->method != JITMAP_UNWIND_CFI && why_len)
			snprintf(why, why_len, "native: %s", dwfl_module_getelf(m, &bias)
				 ? "no CFI of its module covers this PC"
				 : "its module's file is missing, or is not the one the process mapped");
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

static struct native g_native; /* the state of native_step, which libdwfl's thread has */

static int open_dwfl(struct target *t, const char *exe)
{
	g_live = t->live ? t : NULL;
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
	/* Before a module's file is looked for: a deleted one is read from the process's
	 * memory through this state (dwfl_linux_proc_find_elf asks for its PID). */
	g_native.t = t;
	if (!dwfl_attach_state(t->dwfl, t->core_elf, t->pid, &thread_callbacks, &g_native))
		problem("libdwfl cannot unwind native frames here (%s): the frame pointer is used",
			dwfl_errmsg(-1));
	return 0;
}

/* A module's name as users know it: its file's base name (the path the process mapped, not
 * the /proc/PID/map_files link it was opened through). libdwfl's string, or NULL. */
static const char *module_name(Dwfl_Module *m)
{
	const char *main_file = NULL;
	const char *name = dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, &main_file, NULL);
	const char *n = name && name[0] == '/' ? name : main_file ? main_file : name;
	if (!n)
		return NULL;
	const char *slash = strrchr(n, '/');
	const char *base = slash ? slash + 1 : n;
	/* " (deleted)" is the kernel's, not the name's: say it without. */
	const size_t len = strlen(base), dl = strlen(" (deleted)");
	return len > dl && !strcmp(base + len - dl, " (deleted)") ? module_name_of(base) : base;
}

/* A native PC's function and module. libdwfl looks a symbol up by scanning the module's
 * table (a JIT linked with LLVM has a hundred thousand symbols), and every thread of a JIT
 * runtime stands at the same few PCs: the answers are kept. */
#define MAX_INLINED 16

struct native_name {
	uint64_t pc;
	const char *function, *module; /* libdwfl's strings, valid while the Dwfl is */
	/* The functions inlined at pc, innermost first (libdw's strings): each is a frame of
	 * its own in GDB's and LLDB's backtraces, and so here, so that frame numbers agree. */
	const char *inlined[MAX_INLINED];
	unsigned ninlined;
	uint64_t entry; /* the function's start (its symbol's), 0 when unknown */
	bool used;
	bool described; /* DWARF describes the function at pc (GDB names it from there) */
	char *shown; /* a C++ function's name as GDB prints it (cxx_names.h), or NULL */
};

/* The name of an inlined subroutine's DIE: its own, or its abstract origin's. */
static const char *inlined_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Die origin;
	const char *n = dwarf_diename(die);
	if (n)
		return n;
	if (dwarf_attr_integrate(die, DW_AT_name, &a))
		return dwarf_formstring(&a);
	if (dwarf_attr(die, DW_AT_abstract_origin, &a) && dwarf_formref_die(&a, &origin))
		return dwarf_diename(&origin);
	return NULL;
}

/* The functions inlined at `pc` in module `m`, innermost first, as GDB counts them. */
static void find_inlined(Dwfl_Module *m, uint64_t pc, struct native_name *n)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(m, pc, &bias);
	Dwarf_Die *scopes = NULL;
	const int k = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
	for (int i = 0; i < k && n->ninlined < MAX_INLINED; i++) {
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			n->described = true; /* the function that holds them: the frame itself */
			break;
		}
		if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine) {
			const char *name = inlined_name(&scopes[i]);
			n->inlined[n->ninlined++] = name ? name : "??";
		}
	}
	free(scopes);
}

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
			n->entry = n->function ? pc - off : 0;
			find_inlined(m, pc, n);
			n->shown = jitmap_stack_cxx_name(n->function, n->described);
		}
		return n;
	}
	return NULL; /* full: the caller goes without */
}

/* -- Tail calls: GDB's frames rebuilt from DWARF call-site information -- */

/* GDB counts a function that tail-called the frame below it as a frame ("tail call frame" in
 * `info frame`), when the caller's DWARF says which function its call at the return address
 * went to and a chain of tail calls leads from there to the frame below (in an abort() core:
 * raise -> __pthread_kill_internal, which tail-calls __pthread_kill_implementation). So that
 * frame numbers agree with GDB's, the same chain is rebuilt here: only a unique one, from the
 * call sites' DW_AT_call_origin (DW_AT_abstract_origin for GNU call sites) and the
 * DW_AT_call_tail_call (DW_AT_GNU_tail_call) flag, within the caller's module. */

#define MAX_TAIL_CALLS 4     /* functions in one chain */
#define MAX_SITE_DIES 20000  /* DIEs looked at for one function's call sites */

struct tail_frame {
	uint64_t pc;      /* after the tail call, as GDB shows it */
	const char *name; /* libdw's string */
};

/* A call site's return address (module-relative), and whether it is a tail call. */
static bool site_return(Dwarf_Die *site, Dwarf_Addr *ret, bool *tail)
{
	Dwarf_Attribute a;
	const bool gnu = dwarf_tag(site) == DW_TAG_GNU_call_site;
	if (!dwarf_attr(site, gnu ? DW_AT_low_pc : DW_AT_call_return_pc, &a) ||
	    dwarf_formaddr(&a, ret) != 0)
		return false;
	*tail = dwarf_hasattr(site, gnu ? DW_AT_GNU_tail_call : DW_AT_call_tail_call);
	return true;
}

/* The function a call site calls, as a DIE (a declaration, maybe). */
static bool site_target(Dwarf_Die *site, Dwarf_Die *target)
{
	Dwarf_Attribute a;
	const bool gnu = dwarf_tag(site) == DW_TAG_GNU_call_site;
	return dwarf_attr(site, gnu ? DW_AT_abstract_origin : DW_AT_call_origin, &a) &&
	       dwarf_formref_die(&a, target) != NULL;
}

/* The address a function DIE's code starts at in the process: its own low_pc, else the
 * symbol of its (linkage) name in the module. 0 when unknown. */
/* A function symbol `name` defined in module `m` (a versioned one, name@VERSION, too). */
static uint64_t module_function(Dwfl_Module *m, const char *name)
{
	const size_t len = strlen(name);
	const int n = dwfl_module_getsymtab(m);
	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *s = dwfl_module_getsym_info(m, i, &sym, &addr, NULL, NULL, NULL);
		if (s && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF &&
		    !strncmp(s, name, len) && (!s[len] || s[len] == '@'))
			return addr;
	}
	return 0;
}

/* The address a function DIE's code starts at in the process: its own low_pc, else the
 * symbol of its (linkage) name, in module `m` or, for a declaration of a function another
 * module defines (main's call to pthread_join, defined in libc), in module `also`, the one
 * the chain must reach. 0 when unknown. */
static uint64_t die_entry(Dwfl_Module *m, Dwfl_Module *also, Dwarf_Addr bias, Dwarf_Die *die)
{
	Dwarf_Addr lo;
	if (dwarf_entrypc(die, &lo) == 0 || dwarf_lowpc(die, &lo) == 0)
		return lo + bias;
	Dwarf_Attribute a;
	const char *name = NULL;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a))
		name = dwarf_formstring(&a);
	if (!name)
		name = dwarf_diename(die);
	if (!name)
		return 0;
	const uint64_t addr = module_function(m, name);
	return addr || !also || also == m ? addr : module_function(also, name);
}

/* Depth first over `die`'s descendants, at most *budget of them: the call site whose return
 * address is `ret` (ret != 0), or each tail call site (ret == 0, `fn` called on each). */
static bool find_site(Dwarf_Die *die, Dwarf_Addr ret, Dwarf_Die *out, unsigned *budget)
{
	Dwarf_Die child;
	if (dwarf_child(die, &child) != 0)
		return false;
	do {
		if (!(*budget)--)
			return false;
		const int tag = dwarf_tag(&child);
		Dwarf_Addr r;
		bool tail;
		if ((tag == DW_TAG_call_site || tag == DW_TAG_GNU_call_site) &&
		    site_return(&child, &r, &tail) && (ret ? r == ret : tail)) {
			*out = child;
			return true;
		}
		if (tag != DW_TAG_subprogram && find_site(&child, ret, out, budget))
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* The concrete DIE of the function whose code holds `pc` in module `m`: a subprogram of its
 * compile unit that holds the PC (dwarf_getscopes gives an inlined subroutine's abstract
 * scopes, not the function it was inlined into). */
static bool function_die(Dwfl_Module *m, uint64_t pc, Dwarf_Die *out, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(m, pc, bias);
	Dwarf_Die child;
	if (!cu || dwarf_child(cu, &child) != 0)
		return false;
	do {
		if (dwarf_tag(&child) == DW_TAG_subprogram && dwarf_haspc(&child, pc - *bias) == 1) {
			*out = child;
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

/* The name GDB gives a frame at `pc`: the innermost function there, an inlined one too. */
static const char *innermost_name(Dwfl_Module *m, uint64_t pc)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(m, pc, &bias);
	Dwarf_Die *scopes = NULL;
	const int k = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
	const char *name = NULL;
	for (int i = 0; i < k && !name; i++) {
		const int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram)
			name = inlined_name(&scopes[i]);
	}
	free(scopes);
	return name;
}

/* The chain of tail calls from the caller at return address `ret` to the function starting
 * at `callee`, outermost first, in `out`; how many (0: none, or none GDB would show). */
static unsigned tail_calls(struct target *t, uint64_t ret, uint64_t callee,
			   struct tail_frame out[MAX_TAIL_CALLS])
{
	Dwfl_Module *m = dwfl_addrmodule(t->dwfl, ret - 1);
	Dwarf_Addr bias;
	Dwarf_Die caller, site, target;
	if (!m || !function_die(m, ret - 1, &caller, &bias))
		return 0;
	unsigned budget = MAX_SITE_DIES;
	if (!find_site(&caller, ret - bias, &site, &budget) || !site_target(&site, &target))
		return 0;
	Dwfl_Module *callee_module = dwfl_addrmodule(t->dwfl, callee);
	uint64_t entry = die_entry(m, callee_module, bias, &target);
	unsigned n = 0;
	/* Follow the unique tail call of each function until the callee is reached; a function
	 * with no tail call, or a chain that does not reach it, adds nothing. Each function in
	 * the module that holds it (the caller's call may go to another library). */
	while (entry && entry != callee && n < MAX_TAIL_CALLS) {
		Dwarf_Die fn, tail_site, next;
		Dwarf_Addr fbias;
		m = dwfl_addrmodule(t->dwfl, entry);
		if (!m || !function_die(m, entry, &fn, &fbias))
			return 0;
		budget = MAX_SITE_DIES;
		Dwarf_Addr r;
		bool tail;
		if (!find_site(&fn, 0, &tail_site, &budget) || !site_return(&tail_site, &r, &tail) ||
		    !site_target(&tail_site, &next))
			return 0;
		out[n].pc = r + fbias;
		out[n].name = innermost_name(m, out[n].pc - 1);
		if (!out[n].name)
			out[n].name = dwarf_diename(&fn) ? dwarf_diename(&fn) : "??";
		n++;
		entry = die_entry(m, callee_module, fbias, &next);
	}
	return entry == callee ? n : 0;
}

/* tail_calls, each (return address, callee) asked once: the threads of a process mostly
 * wait in the same few places, and each answer reads DWARF. */
#define TAIL_SLOTS 1024

struct tail_memo {
	uint64_t ret, callee;
	unsigned n;
	bool used;
	struct tail_frame frames[MAX_TAIL_CALLS];
};

static unsigned tail_calls_memo(struct target *t, uint64_t ret, uint64_t callee,
				struct tail_frame out[MAX_TAIL_CALLS])
{
	if (!t->tails && !(t->tails = calloc(TAIL_SLOTS, sizeof(*t->tails))))
		return tail_calls(t, ret, callee, out);
	size_t h = (size_t)(((ret ^ (callee * 31)) * UINT64_C(0x9e3779b97f4a7c15)) >> 54) % TAIL_SLOTS;
	for (size_t probe = 0; probe < TAIL_SLOTS; probe++, h = (h + 1) % TAIL_SLOTS) {
		struct tail_memo *m = &t->tails[h];
		if (m->used && (m->ret != ret || m->callee != callee))
			continue;
		if (!m->used) {
			m->used = true;
			m->ret = ret;
			m->callee = callee;
			m->n = tail_calls(t, ret, callee, m->frames);
		}
		memcpy(out, m->frames, m->n * sizeof(*out));
		return m->n;
	}
	return tail_calls(t, ret, callee, out); /* full */
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

/* The perf maps and jitdump files the user named, and a live process's own. */
static void read_perf_maps(struct target *t, const struct options *o)
{
	jitmap_perfmap *pm = jitmap_process_perfmap(t->proc);
	if (!pm) {
		problem("perf maps are not read: out of memory");
		return;
	}
	for (size_t i = 0; i < o->nperf; i++)
		(void)jitmap_perfmap_add_file(pm, o->perf_files[i], NULL); /* problems: below */
	if (t->live && !o->no_perf_maps)
		(void)jitmap_perfmap_add_process(pm, (int)t->pid);
	for (size_t k = 0; k < jitmap_perfmap_num_problems(pm); k++)
		problem("%s", jitmap_perfmap_problem(pm, k));
}

static int scan_process(struct target *t, const struct options *o)
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
	read_perf_maps(t, o);
	return 0;
}

/* What went wrong reading the JIT entries (after the walk: a stackmap is read when a frame
 * is in its code). */
static void process_problems(struct target *t)
{
	for (size_t k = 0; k < jitmap_process_num_problems(t->proc); k++)
		problem("%s", jitmap_process_problem(t->proc, k));
	jitmap_source_info si = {.sz = sizeof(si)};
	for (size_t i = 0; i < jitmap_process_num_sources(t->proc); i++) {
		jitmap_process_source(t->proc, i, &si);
		for (size_t k = 0; k < si.num_problems; k++)
			problem("%s", jitmap_process_source_problem(t->proc, i, k));
	}
}

/* -- Values: a frame described by the library -- */

/* A frame's registers as the unwinders left them, and the target's memory: the frame target
 * of jitmap_frame_describe. */
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
	const bool pc = jitmap_reg_pc(f->t->arch) == (int)regno; /* kept apart from the others */
	if ((!pc && !jitmap_frame_reg_known(f->regs, regno)) || size > 8)
		return -ENOENT; /* the library words it from the register's class */
	const uint64_t v = pc ? f->regs->pc : f->regs->reg[regno];
	uint8_t *b = buf;
	for (size_t i = 0; i < size; i++)
		b[f->t->order == JITMAP_ORDER_BIG ? size - 1 - i : i] = (uint8_t)(v >> (8 * i));
	/* What the unwinders know of an outer frame was restored from where it was saved, or
	 * carried over by the ABI's rule (a caller-saved register is never carried into a
	 * caller): believed. */
	return JITMAP_REG_RECOVERED;
}

static int frame_read_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			  size_t why_len)
{
	const struct frame_regs_target *f = ctx;
	return f->t->memory.read_mem(f->t->memory.ctx, addr, buf, len, why, why_len);
}

static char *dup_text(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* What the output shows of frame `f` at a record (or a JIT frame at none): the library's
 * answer, as `info stackmap -json` gives it (less "frame") and as its text. */
static void describe_frame(struct target *t, const struct options *o, const jitmap_stack_frame *f,
			   struct frame_out *fo)
{
	struct frame_regs_target ft = {f->regs, t};
	const jitmap_target target = {&ft, frame_read_reg, frame_read_mem};
	const jitmap_frame_desc d = {
		.sz = sizeof(d),
		.level = fo->level,
		.pc = f->pc,
		.return_address = !f->exact,
		.arch = t->arch,
		.function = fo->function,
		.target = &target,
		.statepoints = JITMAP_STATEPOINT_AUTO,
		.flags = o->registers ? JITMAP_DESCRIBE_REGISTERS : 0,
		.order = t->order,
		.guessed = f->guessed ? f->guess : NULL,
	};
	jitmap_frame_report *r = jitmap_frame_describe(t->proc, &d);
	if (!r) {
		problem("frame %u: %s", fo->level, strerror(errno));
		return;
	}
	if (o->registers) {
		fo->registers_json = dup_text(jitmap_frame_report_json(r, JITMAP_JSON_REGISTERS));
		fo->registers_text = dup_text(jitmap_frame_report_text(r, JITMAP_TEXT_REGISTERS, 6));
	}
	const bool at_record = jitmap_frame_report_num_records(r) > 0;
	if (!at_record && !f->jit) {
		jitmap_frame_report_free(r);
		return;
	}
	if (o->values || o->gc_roots)
		fo->stackmap_json = dup_text(jitmap_frame_report_json(r, JITMAP_JSON_NO_FRAME));
	char *text = NULL;
	size_t len = 0;
	FILE *x = open_memstream(&text, &len);
	if (x) {
		if (!at_record) {
			if (o->values || o->gc_roots)
				fprintf(x, "    (%s)\n",
					jitmap_frame_report_text(r, JITMAP_TEXT_NO_RECORD, 0));
		} else {
			if (o->values)
				fputs(jitmap_frame_report_text(r, JITMAP_TEXT_RECORDS, 4), x);
			else
				fputs(jitmap_frame_report_text(r, JITMAP_TEXT_VFRAMES, 4), x);
			const char *rows = o->gc_roots
				? jitmap_frame_report_text(r, JITMAP_TEXT_GC_ROOTS, 4) : "";
			if (rows && rows[0]) {
				char *copy = strdup(rows);
				fputs(jitmap_frame_report_text(r, JITMAP_TEXT_GC_HEADER, 4), x);
				fputs(copy ? copy : "", x);
				free(copy);
			}
		}
		fclose(x);
		fo->text = text;
	}
	jitmap_frame_report_free(r);
}

/* -- Walking every thread -- */

struct walk {
	struct target *t;
	const struct options *o;
	struct thread *th;
	uint64_t callee_entry; /* the entry of the frame before this one (0: unknown, JIT) */
	bool guessed;          /* a frame reached by a guess was seen */
};

static struct frame_out *new_frame(struct thread *th)
{
	if (th->nframes == th->cap_frames) {
		const size_t cap = th->cap_frames ? 2 * th->cap_frames : 32;
		struct frame_out *a = realloc(th->frames, cap * sizeof(*a));
		if (!a)
			return NULL;
		th->frames = a;
		th->cap_frames = cap;
	}
	struct frame_out *fo = &th->frames[th->nframes++];
	memset(fo, 0, sizeof(*fo));
	fo->level = th->next_level++;
	return fo;
}

/* Which file names the code at `at`, and the source line there. */
static void named_code(struct target *t, uint64_t at, struct frame_out *fo)
{
	jitmap_perfmap_sym sym = {.sz = sizeof(sym)};
	if (jitmap_perfmap_lookup(jitmap_process_perfmap(t->proc), at, &sym))
		return;
	fo->named_by = strdup(sym.source);
	if (sym.file && asprintf(&fo->source_line, "%s:%u", sym.file, sym.file_line) < 0)
		fo->source_line = NULL;
}

static int on_frame(void *ctx, const jitmap_stack_frame *f)
{
	struct walk *w = ctx;
	struct thread *th = w->th;
	const size_t first = th->nframes;
	uint64_t at = f->code_pc;
	/* Code only a perf map or jitdump names: a module's symbol where it has one (a runtime
	 * lists its own builtins, in its executable, in its map), else the map's name (libdwfl
	 * may give a module a range that spans the JIT code between two of its mappings). */
	const bool named_only = f->jit && !f->code.image;
	const struct native_name *nn = f->jit && !named_only ? NULL : native_name(w->t, at);
	/* A return address at a function's first byte, after no function at all (padding):
	 * a runtime's continuation (V8's InterpreterEnterAtNextBytecode), named from there. */
	if (nn && !nn->function && at != f->pc) {
		const struct native_name *here = native_name(w->t, f->pc);
		if (here && here->function && here->entry == f->pc) {
			nn = here;
			at = f->pc;
		}
	}
	const bool jit = f->jit && !(named_only && nn && nn->function);
	/* A caller at a return address whose call went, by tail calls, to the frame before:
	 * those functions are frames of their own in GDB's numbering. */
	struct tail_frame tails[MAX_TAIL_CALLS];
	const unsigned ntails = !jit && !f->exact && f->level > 0 && w->callee_entry
		? tail_calls_memo(w->t, f->pc, w->callee_entry, tails) : 0;
	for (unsigned i = ntails; i-- > 0;) {
		struct frame_out *tc = new_frame(th);
		if (!tc)
			return -ENOMEM;
		tc->pc = tails[i].pc;
		tc->tail_call = true;
		tc->function = strdup(tails[i].name);
		/* its own module: the caller's call may have gone to another library */
		Dwfl_Module *tm = dwfl_addrmodule(w->t->dwfl, tails[i].pc - 1);
		tc->module = tm && module_name(tm) ? strdup(module_name(tm)) : NULL;
		tc->method = "tail-call";
	}
	w->callee_entry = nn ? nn->entry : 0;
	for (unsigned i = 0; nn && i < nn->ninlined; i++) {
		struct frame_out *in = new_frame(th);
		if (!in)
			return -ENOMEM;
		in->pc = f->pc;
		in->exact = f->exact;
		in->inlined = true;
		in->function = strdup(nn->inlined[i]);
		if (nn->module)
			in->module = strdup(nn->module);
		in->method = "inline";
	}
	struct frame_out *fo = new_frame(th);
	if (!fo)
		return -ENOMEM;
	fo->pc = f->pc;
	fo->exact = f->exact;
	fo->jit = jit;
	fo->method = jitmap_unwind_method_name(f->method);
	if (jit) {
		if (f->code.function)
			fo->function = strdup(f->code.function);
		fo->entry = f->code.entry;
		if (named_only)
			named_code(w->t, at, fo);
	} else {
		if (nn && nn->function)
			fo->function = strdup(nn->shown ? nn->shown : nn->function);
		if (nn && nn->module)
			fo->module = strdup(nn->module);
	}
	/* The library describes a frame at a record, and a JIT frame at none, when the output
	 * shows values or roots; the interpreter frames a runtime's layouts give always. */
	const bool asked = w->o->values || w->o->gc_roots;
	if (((asked || jitmap_process_num_layout_images(w->t->proc)) && (f->record || f->jit)) ||
	    w->o->registers)
		describe_frame(w->t, w->o, f, fo);
	if (f->stop && f->stop != -ESRCH)
		fo->why = strdup(f->why);
	/* This frame's, and its inlined and tail-call frames' (made from its PC). */
	for (size_t k = first; f->guessed && k < th->nframes; k++) {
		th->frames[k].guess = strdup(f->guess);
		th->frames[k].guess_first = !w->guessed;
		w->guessed = true;
	}
	return g_interrupted ? -EINTR : 0;
}

static int live_code_at(void *ctx, uint64_t pc, char *why, size_t why_len)
{
	return jitmap_live_code_at(ctx, pc, why, why_len);
}

static int core_code_at(void *ctx, uint64_t pc, char *why, size_t why_len)
{
	return jitmap_core_code_at(ctx, pc, why, why_len);
}

static void walk_threads(struct target *t, const struct options *o)
{
	const jitmap_stacker_opts sopts = {
		.sz = sizeof(sopts), .native_step = native_step, .native_ctx = &g_native,
		.order = t->order,
		/* Below a thread's last frame lie stack words: none is taken for a frame where
		 * no code can be. */
		.code_at = t->live ? live_code_at : core_code_at,
		.code_ctx = t->live ? (void *)t->process : (void *)t->core,
	};
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
		struct walk w = {t, o, th, 0, false};
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
		jitmap_source_info si = {.sz = sizeof(si)};
		if (jitmap_process_source(t->proc, i, &si) == 0 && si.kind == JITMAP_SOURCE_JIT)
			n->entries++;
	}
	for (size_t i = 0; i < jitmap_process_num_descriptors(t->proc); i++) {
		jitmap_descriptor_info d = {.sz = sizeof(d)};
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
	(void)o;
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
	const jitmap_perfmap *pm = jitmap_process_perfmap(t->proc);
	for (size_t i = 0; i < jitmap_perfmap_num_files(pm); i++) {
		size_t ranges;
		const char *path = jitmap_perfmap_file(pm, i, &ranges);
		printf("code named by %s: %zu code object%s\n", path, ranges,
		       ranges == 1 ? "" : "s");
	}
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
			if (f->inlined)
				printf(" [inlined]");
			if (f->tail_call)
				printf(" [tail call]");
			if (f->jit) {
				printf(" [JIT");
				if (f->entry)
					printf(" entry 0x%" PRIx64, f->entry);
				if (f->named_by)
					printf(", %s", f->named_by);
				printf("]");
				if (f->source_line)
					printf(" at %s", f->source_line);
			} else if (f->module) {
				printf(" (%s)", f->module);
			}
			if (f->guess)
				printf(" [guess]");
			printf("\n");
			if (f->guess_first)
				printf("    (from here on a guess: %s; no register or value of these "
				       "frames is stated)\n", f->guess);
			if (f->registers_text && f->registers_text[0])
				printf("    registers:\n%s", f->registers_text);
			if (f->text)
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
	printf(", \"perf_maps\": [");
	const jitmap_perfmap *pm = jitmap_process_perfmap(t->proc);
	for (size_t i = 0; i < jitmap_perfmap_num_files(pm); i++) {
		size_t ranges;
		const char *path = jitmap_perfmap_file(pm, i, &ranges);
		printf("%s{\"path\": ", i ? ", " : "");
		json_string(stdout, path);
		printf(", \"code_objects\": %zu}", ranges);
	}
	printf("]}, \"threads\": [");
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
			printf(", \"jit\": %s, ", f->jit ? "true" : "false");
			if (f->named_by) {
				printf("\"named_by\": ");
				json_string(stdout, f->named_by);
				printf(", \"source_line\": ");
				json_string_or_null(stdout, f->source_line);
				printf(", ");
			}
			if (f->inlined)
				printf("\"inlined\": true, ");
			if (f->tail_call)
				printf("\"tail_call\": true, ");
			printf("\"unwound_by\": ");
			json_string(stdout, f->method);
			printf(", \"guess\": ");
			json_string_or_null(stdout, f->guess);
			printf(", \"stackmap\": %s", f->stackmap_json ? f->stackmap_json : "null");
			if (f->registers_json)
				printf(", \"registers\": %s", f->registers_json);
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
		"Usage: jitmap-stack [OPTION]... PID | CORE\n"
		"Print every thread's stack of a live process (PID) or a core file: JIT frames named\n"
		"and unwound by jitmap, native frames from the process's modules.\n"
		"\n"
		"  --json          one JSON object (see jitmap-stack(1))\n"
		"  --values        each frame at a stackmap record shows its locations and values\n"
		"  --gc-roots      each frame at a statepoint shows its GC roots (base, derived)\n"
		"  --registers     each frame's registers as unwound, or why one is not known there\n"
		"  --exe=FILE      for core files: the program's executable, when it is no longer\n"
		"                  where the core says\n"
		"  --sysroot=DIR   for core files: read the files the core maps under DIR (a core\n"
		"                  from another machine or a container); a file there of another\n"
		"                  build than the one the process mapped is not used\n"
		"  --perf-map=FILE, --jitdump=FILE\n"
		"                  name JIT code as this perf map (START SIZE NAME lines) or\n"
		"                  jitdump file says (either option takes either kind; repeatable);\n"
		"                  for a core, the files its runtime wrote (/tmp/perf-PID.map)\n"
		"  --no-perf-maps  for a live process: do not read the perf map and jitdump files\n"
		"                  it wrote (read by default)\n"
		"  -h, --help      show this help and exit\n"
		"  -V, --version   show the version and exit\n"
		"\n"
		"A live process is stopped while it is read (ptrace) and let go before anything is\n"
		"printed. Exit status: 0 if the stacks were read, 1 if the target could not be read,\n"
		"2 on usage errors.\n");
}

static int usage_error(const char *what)
{
	fprintf(stderr, "jitmap-stack: %s\nTry 'jitmap-stack --help' for more information.\n", what);
	return 2;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	enum { OPT_JSON = 256, OPT_VALUES, OPT_GC, OPT_REGS, OPT_EXE, OPT_PERF, OPT_NO_PERF,
	       OPT_SYSROOT };
	static const struct option longopts[] = {
		{"json", no_argument, NULL, OPT_JSON},
		{"values", no_argument, NULL, OPT_VALUES},
		{"gc-roots", no_argument, NULL, OPT_GC},
		{"registers", no_argument, NULL, OPT_REGS},
		{"exe", required_argument, NULL, OPT_EXE},
		{"sysroot", required_argument, NULL, OPT_SYSROOT},
		{"perf-map", required_argument, NULL, OPT_PERF},
		{"jitdump", required_argument, NULL, OPT_PERF},
		{"no-perf-maps", no_argument, NULL, OPT_NO_PERF},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	opterr = 0; /* our own message, as jitmap-dump's */
	while ((c = getopt_long(argc, argv, ":hV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON: o->json = true; break;
		case OPT_VALUES: o->values = true; break;
		case OPT_GC: o->gc_roots = true; break;
		case OPT_REGS: o->registers = true; break;
		case OPT_EXE: o->exe = optarg; break;
		case OPT_SYSROOT: o->sysroot = optarg; break;
		case OPT_PERF: {
			const char **a = realloc(o->perf_files, (o->nperf + 1) * sizeof(*a));
			if (!a) {
				fprintf(stderr, "jitmap-stack: out of memory\n");
				exit(1);
			}
			o->perf_files = a;
			o->perf_files[o->nperf++] = optarg;
			break;
		}
		case OPT_NO_PERF: o->no_perf_maps = true; break;
		case 'V':
			printf("jitmap-stack %s (libjitmap %s)\n", JITMAP_VERSION, jitmap_version());
			exit(0);
		case 'h': usage(stdout); exit(0);
		case ':': {
			char m[128];
			snprintf(m, sizeof(m), "option '%s' needs a value", argv[optind - 1]);
			return usage_error(m);
		}
		default: {
			char m[128];
			if (optopt)
				snprintf(m, sizeof(m), "unknown option '-%c'", optopt);
			else
				snprintf(m, sizeof(m), "unknown option '%s'", argv[optind - 1]);
			return usage_error(m);
		}
		}
	}
	if (optind != argc - 1)
		return usage_error(optind >= argc ? "a PID or a core file is needed"
						  : "one PID or core file at a time");
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
	jitmap_tool_heap_in_huge_pages();
	struct options o = {0};
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	elf_version(EV_CURRENT);
	struct target t = {.core_fd = -1};
	pid_t pid;
	/* While threads are stopped, a signal only asks us to stop early: they are let go. */
	struct sigaction sa = {.sa_handler = on_signal};
	sigemptyset(&sa.sa_mask);
	for (int s = 0, sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT}; s < 4; s++)
		sigaction(sigs[s], &sa, NULL);

	const bool exists = access(o.target, F_OK) == 0;
	const bool live = !exists && is_pid(o.target, &pid);
	if (!exists && !live && o.target[0] && strspn(o.target, "0123456789") == strlen(o.target)) {
		fprintf(stderr, "jitmap-stack: %s: not a process ID (1 to %d), and no file of that "
			"name\n", o.target, INT_MAX);
		return 1;
	}
	if (live) {
		if (o.exe || o.sysroot)
			fprintf(stderr, "jitmap-stack: --%s is for core files; ignored (a live "
				"process's files are read through the process)\n",
				o.exe ? "exe" : "sysroot");
		/* libjitmap stops every thread; a signal meanwhile makes it let them go. */
		jitmap_error err;
		const jitmap_live_opts lo = {.sz = sizeof(lo), .interrupt = &g_interrupted};
		t.process = jitmap_live_open(pid, &lo, &err);
		if (!t.process && err.code != -EINTR)
			fprintf(stderr, "jitmap-stack: %s\n", err.reason);
		rc = t.process ? live_threads(&t) : -1;
	} else if (o.sysroot && access(o.sysroot, X_OK)) {
		fprintf(stderr, "jitmap-stack: --sysroot %s: %s\n", o.sysroot, strerror(errno));
		return 1;
	} else if (o.exe && access(o.exe, R_OK)) {
		/* The user's mistake, not the core's: the library would only warn that the core
		 * maps no file of that name. */
		fprintf(stderr, "jitmap-stack: --exe %s: %s\n", o.exe, strerror(errno));
		return 1;
	} else {
		g_sysroot = o.sysroot && o.sysroot[0] && strcmp(o.sysroot, "/") ? o.sysroot : NULL;
		rc = open_core(&t, o.target, o.exe, g_sysroot);
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
		rc = scan_process(&t, &o);
	if (rc == 0)
		walk_threads(&t, &o);
	jitmap_live_detach(t.process); /* before printing: the process runs again as soon as possible */
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
			free(t.threads[i].frames[k].named_by);
			free(t.threads[i].frames[k].source_line);
			free(t.threads[i].frames[k].stackmap_json);
			free(t.threads[i].frames[k].text);
			free(t.threads[i].frames[k].registers_json);
			free(t.threads[i].frames[k].registers_text);
			free(t.threads[i].frames[k].why);
			free(t.threads[i].frames[k].guess);
		}
		free(t.threads[i].frames);
		free(t.threads[i].problem);
	}
	free(t.threads);
	for (size_t i = 0; t.names && i < NAME_SLOTS; i++)
		free(t.names[i].shown);
	free(t.names);
	free(t.tails);
	jitmap_process_free(t.proc);
	if (t.dwfl)
		dwfl_end(t.dwfl);
	if (t.core_elf)
		elf_end(t.core_elf);
	if (t.core_fd >= 0)
		close(t.core_fd);
	jitmap_live_free(t.process);
	jitmap_core_free(t.core);
	free(o.perf_files);
	for (size_t i = 0; i < g_problems.n; i++)
		free(g_problems.v[i]);
	free(g_problems.v);
	for (size_t i = 0; i < g_nnames; i++)
		free(g_names[i]);
	free(g_names);
	return rc ? 1 : 0;
}
