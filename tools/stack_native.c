/* stack_native.c: jitmap-stack's native frames, through elfutils' libdwfl: the process's
 * modules and their files (a live process's as it maps them, a core's by build ID), native
 * names and the functions inlined there, and one native step at a time for the stacker.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>

#include <jitmap/arch.h>
#include <jitmap/core.h>
#include <jitmap/live.h>

#include "cxx_names.h"
#include "debuginfo_cache.h"
#include "stack_tool.h"

/* -- Modules and their files -- */

/* Names made here (modules' and mappings'), kept until exit (a frame's name points at
 * one). */
static char **g_names;
static size_t g_nnames;

/* `s` kept until exit, once; NULL only when out of memory. */
static const char *kept(const char *s)
{
	for (size_t i = 0; i < g_nnames; i++)
		if (!strcmp(g_names[i], s))
			return g_names[i];
	char **v = realloc(g_names, (g_nnames + 1) * sizeof(*v));
	if (!v)
		return NULL;
	g_names = v;
	return (g_names[g_nnames] = strdup(s)) ? g_names[g_nnames++] : NULL;
}

/* The length of `path` without the " (deleted)" the kernel appends to a file unlinked since
 * it was mapped. */
static size_t undeleted_len(const char *path)
{
	const size_t n = strlen(path), dl = strlen(" (deleted)");
	return n > dl && !strcmp(path + n - dl, " (deleted)") ? n - dl : n;
}

/* A module's name as users know it: its path's base name, without " (deleted)". Kept until
 * exit; NULL only when out of memory. */
static const char *module_name_of(const char *path)
{
	char buf[256];
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	snprintf(buf, sizeof(buf), "%.*s", (int)undeleted_len(base), base);
	return kept(buf);
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
	if (!g_live || name[0] != '/')
		return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
	char path[PATH_MAX], why[512];
	const int fd = jitmap_stopped_mapped_file(g_live->stopped, base, path, sizeof(path), why,
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
		stack_problem("%s: %s: its symbols and CFI are not used", name, why);
	return -1;
}

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = live_find_elf,
	.find_debuginfo = stack_find_debuginfo,
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
				stack_problem("%s: another build than the file the core's "
					      "process mapped: not used", path);
		}
	}
	return dwfl_build_id_find_elf(mod, userdata, name, base, file_name, elfp);
}

static const Dwfl_Callbacks core_callbacks = {
	.find_elf = core_find_elf,
	.find_debuginfo = stack_find_debuginfo,
	.debuginfo_path = &g_debuginfo_path,
};

/* -- Native steps -- */

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

int stack_native_step(void *ctx, const jitmap_frame_regs *regs, bool exact,
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
		const struct native_name *nn = out->method != JITMAP_UNWIND_CFI
			? stack_native_name(n->t, n->initial.pc) : NULL;
		if (out->method != JITMAP_UNWIND_CFI && why_len)
			snprintf(why, why_len, "native: %s",
				 nn && !nn->in_module ? "the PC is in no module (memory no file backs)"
				 : dwfl_module_getelf(m, &bias)
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
	for (size_t i = 0; jitmap_stopped_placed_file(t->stopped, i, &path, &bias) == 0; i++)
		(void)dwfl_report_elf(t->dwfl, path, path, -1, bias, false);
}

static struct native g_native; /* the state of native_step, which libdwfl's thread has */

void *stack_native_ctx(void)
{
	return &g_native;
}

int stack_open_dwfl(struct target *t, const char *exe, const char *sysroot)
{
	g_live = t->live ? t : NULL;
	g_sysroot = sysroot;
	/* A core's own libelf handle: the core is opened once. */
	Elf *core_elf = jitmap_stopped_elf(t->stopped);
	t->dwfl = dwfl_begin(t->live ? &proc_callbacks : &core_callbacks);
	if (!t->dwfl) {
		stack_fatal("libdwfl: %s", dwfl_errmsg(-1));
		return -1;
	}
	dwfl_report_begin(t->dwfl);
	int rc;
	if (t->live)
		rc = dwfl_linux_proc_report(t->dwfl, t->pid);
	else
		rc = core_elf ? dwfl_core_file_report(t->dwfl, core_elf, exe) : -1;
	if (!t->live && exe && rc == 0) /* dwfl_core_file_report: the modules it reported */
		report_placed_files(t);
	dwfl_report_end(t->dwfl, NULL, NULL);
	if (rc < 0)
		stack_problem("the process's modules cannot be read (%s): native frames "
			      "are unnamed", rc == -1 ? dwfl_errmsg(-1) : strerror(rc));
	/* Before a module's file is looked for: a deleted one is read from the process's
	 * memory through this state (dwfl_linux_proc_find_elf asks for its PID). */
	g_native.t = t;
	if (!dwfl_attach_state(t->dwfl, core_elf, t->pid, &thread_callbacks, &g_native))
		stack_problem("libdwfl cannot unwind native frames here (%s): the frame "
			      "pointer is used", dwfl_errmsg(-1));
	return 0;
}

/* -- Names -- */

/* A module's name as users know it: its file's base name (the path the process mapped, not
 * the /proc/PID/map_files link it was opened through). libdwfl's string, or NULL. */
const char *stack_module_name(Dwfl_Module *m)
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

/* A module's build ID, as crash pipelines key their symbols (Breakpad's, debuginfod's): from
 * the library (jitmap_stopped_build_id_at), which reads the note in the first page of the
 * module's file as the core or the process holds it, so it is the build the process ran even
 * where the file at its path is another build or gone (libdwfl knows a live module's only
 * from the file it opened). Asked once per file, while a live process is stopped. */
struct module_id {
	const char *path; /* the file, as the library names it (kept) */
	char *build_id;   /* hex; NULL: none */
};

static struct module_id *g_ids;
static size_t g_nids;

static const char *build_id_of(struct target *t, const char *path, uint64_t at)
{
	for (size_t i = 0; i < g_nids; i++)
		if (g_ids[i].path == path)
			return g_ids[i].build_id;
	struct module_id *v = realloc(g_ids, (g_nids + 1) * sizeof(*v));
	if (!v)
		return NULL;
	g_ids = v;
	struct module_id *id = &g_ids[g_nids++];
	*id = (struct module_id){.path = path};
	uint8_t bits[64];
	const size_t n = jitmap_stopped_build_id_at(t->stopped, at, bits, sizeof(bits));
	if (n && (id->build_id = malloc(2 * n + 1)))
		for (size_t i = 0; i < n; i++)
			snprintf(id->build_id + 2 * i, 3, "%02x", bits[i]);
	return id->build_id;
}

void stack_module_id(struct target *t, uint64_t pc, uint64_t at, struct frame_out *fo)
{
	/* The module is where the PC lies (the native name's answer, by `at`), whatever the
	 * caller had: libdwfl gives a file's module for memory between its mappings. */
	const struct native_name *nn = stack_native_name(t, at);
	free(fo->module);
	fo->module = NULL;
	fo->in_module = false;
	fo->build_id = NULL;
	fo->mapping = NULL;
	if (!nn)
		return;
	if (nn->in_module) {
		fo->module = nn->module ? strdup(nn->module) : NULL;
		fo->in_module = true;
		fo->module_offset = pc - nn->bias; /* the file's own address of the PC */
		fo->build_id = nn->build_id;
	} else {
		fo->mapping = nn->mapping;
	}
}

/* A native PC's function and module. libdwfl looks a symbol up by scanning the module's
 * table (a JIT linked with LLVM has a hundred thousand symbols), and every thread of a JIT
 * runtime stands at the same few PCs: the answers are kept (struct native_name). */

const char *stack_inlined_name(Dwarf_Die *die)
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
			const char *name = stack_inlined_name(&scopes[i]);
			n->inlined[n->ninlined++] = name ? name : "??";
		}
	}
	free(scopes);
}

/* Whether libdwfl's module `m` is the file at `path` with build ID `id` (hex; NULL: none
 * known): by build ID where both are known, else by base name (a core's modules are named by
 * the dynamic linker's list, /lib/... where NT_FILE says /usr/lib/...). */
static bool same_file(Dwfl_Module *m, const char *path, const char *id)
{
	const unsigned char *bits;
	GElf_Addr at;
	const int n = dwfl_module_build_id(m, &bits, &at);
	if (n > 0 && id) {
		if (strlen(id) != 2 * (size_t)n)
			return false;
		for (int i = 0; i < n; i++) {
			char two[3];
			snprintf(two, sizeof(two), "%02x", bits[i]);
			if (memcmp(two, id + 2 * i, 2))
				return false;
		}
		return true;
	}
	const char *name = stack_module_name(m);
	return name && !strcmp(name, module_name_of(path));
}

/* libdwfl's module of a file (dwfl_getmodules' callback). */
struct file_module {
	const char *path, *id;
	Dwfl_Module *found;
};

static int find_file_module(Dwfl_Module *m, void **userdata, const char *name, Dwarf_Addr start,
			    void *arg)
{
	(void)userdata;
	(void)name;
	(void)start;
	struct file_module *want = arg;
	if (!same_file(m, want->path, want->id))
		return DWARF_CB_OK;
	want->found = m;
	return DWARF_CB_ABORT;
}

/* Where `pc` lies, from the process's mappings (jitmap_stopped_module_at: the library reads
 * /proc/PID/maps or the core's NT_FILE and segments): `n`'s module, load bias and build ID,
 * or the name of the mapping that holds it instead. libdwfl's module for `pc` only when it
 * is that file (libdwfl makes one module of a file from its first mapping to its last, so
 * that memory a JIT mapped between them is "in" it: V8's code space in node), or, in memory
 * no file backs, an image libdwfl read from memory (the vDSO, found through the auxiliary
 * vector); NULL else. `*addr`: pc as that module places the file, where this mapping places
 * it elsewhere (node maps its embedded builtins again next to V8's code space: the same
 * bytes, named from the file). */
static Dwfl_Module *module_at(struct target *t, uint64_t pc, struct native_name *n,
			      uint64_t *addr)
{
	jitmap_stopped_module_info mi = {.sz = sizeof(mi)};
	const int where = jitmap_stopped_module_at(t->stopped, pc, &mi);
	Dwfl_Module *m = dwfl_addrmodule(t->dwfl, pc);
	if (where == 1) {
		const char *path = kept(mi.name);
		n->in_module = path != NULL;
		n->module = path ? module_name_of(path) : NULL;
		n->bias = mi.bias;
		n->build_id = path ? build_id_of(t, path, pc) : NULL;
		if (!path)
			return NULL;
		if (!m || !same_file(m, path, n->build_id)) { /* a mapping of it libdwfl has not */
			struct file_module want = {.path = path, .id = n->build_id};
			dwfl_getmodules(t->dwfl, find_file_module, &want, 0);
			m = want.found;
		}
		GElf_Addr bias;
		if (!m || !dwfl_module_getelf(m, &bias))
			return NULL;
		*addr = pc - mi.bias + bias;
		return m;
	}
	if (where < 0 && where != -ENOENT) /* the mappings cannot be read: names, no module */
		return m;
	n->mapping = mi.name ? kept(mi.name) : NULL;
	if (mi.file || !m)
		return NULL;
	/* libdwfl's module starts in memory no file backs too: an image of its own (the vDSO,
	 * which a core names no mapping of), not a file's span over a JIT's memory */
	Dwarf_Addr start = 0;
	const char *name = dwfl_module_info(m, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	jitmap_stopped_module_info at_start = {.sz = sizeof(at_start)};
	if (jitmap_stopped_module_at(t->stopped, start, &at_start) < 0 || at_start.file)
		return NULL;
	if (!n->mapping && name && strstr(name, "vdso"))
		n->mapping = "[vdso]";
	return m;
}

#define NAME_SLOTS 4096

const struct native_name *stack_native_name(struct target *t, uint64_t pc)
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
		uint64_t addr = pc; /* pc as libdwfl's module knows it */
		Dwfl_Module *m = module_at(t, pc, n, &addr);
		if (m) {
			GElf_Off off;
			GElf_Sym sym;
			n->function = dwfl_module_addrinfo(m, addr, &off, &sym, NULL, NULL, NULL);
			n->entry = n->function ? pc - off : 0;
			find_inlined(m, addr, n);
			n->shown = stack_cxx_name(n->function, n->described);
		}
		return n;
	}
	return NULL; /* full: the caller goes without */
}

void stack_native_free(struct target *t)
{
	for (size_t i = 0; t->names && i < NAME_SLOTS; i++)
		free(t->names[i].shown);
	free(t->names);
	if (t->dwfl)
		dwfl_end(t->dwfl);
	for (size_t i = 0; i < g_nnames; i++)
		free(g_names[i]);
	free(g_names);
	for (size_t i = 0; i < g_nids; i++)
		free(g_ids[i].build_id);
	free(g_ids);
}
