/* stack_tool.h: what the parts of jitmap-stack share, bottom first, each using only the ones
 * before it:
 *   stack_target.c    the stopped process (a core or a live one, one jitmap_stopped), its
 *                     threads as the output lists them, and the problems said after them;
 *   stack_native.c    libdwfl: modules, their files, native names, inlined functions and
 *                     native steps;
 *   stack_tailcalls.c the tail-call frames GDB rebuilds from DWARF call sites;
 *   stack_walk.c      where the stackmaps are, each thread's walk, each frame's description;
 *   stack_signature.c --signature: the crashing thread's frames as a crash signature;
 *   stack_output.c    the text and the JSON;
 *   jitmap-stack.c    options, and the order of it all (main).
 */
#ifndef JITMAP_TOOLS_STACK_TOOL_H
#define JITMAP_TOOLS_STACK_TOOL_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <elfutils/libdwfl.h>

#include <jitmap/process.h>
#include <jitmap/stack.h>
#include <jitmap/stopped.h>

struct options {
	bool json, values, gc_roots, registers, no_perf_maps;
	bool core; /* -c: the target is a core file, whatever its name */
	const char *target, *exe, *sysroot;
	const char **perf_files; /* --perf-map, --jitdump: in the order given */
	size_t nperf;
	unsigned max_threads, max_frames; /* --max-threads, --max-frames; 0: no limit */
	bool freeze_all;    /* --freeze=all: every thread stopped at once while stacks are copied */
	size_t stack_bytes; /* --stack-bytes: each stack copied at most (0: 1 MiB) */
	bool signature;     /* --signature: the crash signature (the text: it alone) */
	bool keep_rules;    /* each JIT frame's rule kept (frame_out.rule: jitmap-minidump's) */
};

struct frame_out {
	unsigned level;      /* as GDB numbers it: inlined functions are frames of their own */
	uint64_t pc;
	bool exact, jit;
	bool inlined;        /* a function inlined at this PC into the next frame's */
	bool tail_call;      /* a function that tail-called the frame before (GDB's "tail call
			      * frame", from DWARF call-site information) */
	char *function, *module;
	/* A native frame's module, the ELF file whose loaded segment holds its PC (in_module;
	 * never for anonymous memory): its build ID (hex, NULL: none known; the module's, kept
	 * until exit) and pc less the file's load bias (the file's own address of the PC). */
	const char *build_id;
	bool in_module;
	uint64_t module_offset;
	/* No module: the name of the mapping that holds the PC ("[heap]", "[anon:NAME]"; kept
	 * until exit), NULL when it has none. */
	const char *mapping;
	uint64_t entry;
	/* A JIT frame's code: the start of its function (else of its code range; 0: unknown),
	 * and the stackmap record at its PC, if any (at_record): what --signature keys it by,
	 * where its address would change with the JIT's placement. */
	uint64_t code_lo;
	/* A JIT frame's image (NULL: code a perf map or jitdump names), its function's range
	 * (0, 0: unknown), where its code was looked up (jitmap_stack_frame.code_pc), and how
	 * its caller was found as a rule, where jitmap's own unwinder proved the step
	 * (jitmap_stack_frame.rule, copied; NULL: none): what jitmap-minidump's symbol files
	 * say of it. */
	const jitmap_image *image;
	uint64_t func_lo, func_hi, code_pc;
	jitmap_unwind_rule *rule;
	bool at_record;
	uint64_t record_id;
	/* A JIT frame's source: "jit-entry", "perf-map" or "jitdump" (NULL: native), and the
	 * file's path (the latter two). */
	const char *source_kind;
	char *source_path;
	bool source_in_core; /* the perf map or jitdump was read from the core's notes */
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

/* A thread of the stopped process, and the frames found on its stack. */
struct thread {
	const jitmap_stopped_thread_info *info; /* its ID, name and registers (NULL: none) */
	struct frame_out *frames;
	size_t nframes, cap_frames;
	unsigned next_level;
	char *problem;       /* why it has no registers */
};

struct target {
	jitmap_stopped *stopped; /* a live process's threads stay stopped until detached */
	bool live;
	pid_t pid;
	const char *comm;        /* the process's name, "" when unknown */
	/* What the walk reads: the process's memory; while a thread is walked, that thread's
	 * (by thread: its stack as captured), and what its frames' values are read from (by
	 * thread: its captured stack alone; else `memory`). */
	jitmap_target memory, values;
	jitmap_arch arch;
	jitmap_byte_order order;
	struct thread *threads;
	size_t nthreads;
	Dwfl *dwfl;
	struct native_name *names;
	struct tail_memo *tails; /* tail_calls' answers, by return address and callee */
	jitmap_process *proc;
};

/* -- stack_target.c -- */

/* Set by the signal handler: a live process's threads are let go early. */
extern volatile sig_atomic_t stack_interrupted;
/* The tool's name, which its messages start with ("jitmap-stack" unless the tool sets it). */
extern const char *stack_tool_name;

/* Why the target could not be read at all: said on standard error ("jitmap-stack: ..."),
 * and the first one kept for --json's object (stack_fatal_error: NULL when none was
 * said). */
void stack_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *stack_fatal_error(void);

/* A problem, said once, in order, after the stacks (or on standard error when no stack is
 * printed). */
void stack_problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
size_t stack_num_problems(void);
const char *stack_problem_at(size_t i);

/* Open the core at `path` (--exe, --sysroot: NULL when not given) or stop process `pid`, and
 * list its threads: 0, or -1 with the reason said on standard error. */
int stack_open_core(struct target *t, const char *path, const char *exe,
		    const char *sysroot);
int stack_open_pid(struct target *t, pid_t pid, const struct options *o);
/* The threads, their frames, the stopped process (let go if not yet) and the problems. */
void stack_target_free(struct target *t);

/* -- stack_native.c -- */

#define MAX_INLINED 16

/* A native PC's function and module (native_name). */
struct native_name {
	uint64_t pc;
	const char *function;       /* libdwfl's string, valid while the Dwfl is */
	/* The module holding pc (in_module: an ELF file's loaded segment, where the process's
	 * mappings say; never anonymous memory): its base name, load bias and build ID (hex,
	 * NULL: none known); else `mapping`, the name of the mapping there (NULL: none). All
	 * kept until exit. */
	const char *module, *mapping, *build_id;
	bool in_module;
	uint64_t bias;
	/* The functions inlined at pc, innermost first (libdw's strings): each is a frame of
	 * its own in GDB's and LLDB's backtraces, and so here, so that frame numbers agree. */
	const char *inlined[MAX_INLINED];
	unsigned ninlined;
	uint64_t entry; /* the function's start (its symbol's), 0 when unknown */
	bool used;
	bool described; /* DWARF describes the function at pc (GDB names it from there) */
	char *shown; /* a C++ function's name as GDB prints it (cxx_names.h), or NULL */
};

/* libdwfl over the process's modules (a core's files under `sysroot`, or NULL), and its
 * thread state for native steps: 0, or -1 with the reason said. */
int stack_open_dwfl(struct target *t, const char *exe, const char *sysroot);
/* The stacker's native_step, and its context (jitmap_stacker_opts). */
int stack_native_step(void *ctx, const jitmap_frame_regs *regs, bool exact,
		      jitmap_unwind_result *out, bool *caller_exact, char *why,
		      size_t why_len);
void *stack_native_ctx(void);
/* A module's name as users know it (its file's base name): libdwfl's string, or NULL. */
const char *stack_module_name(Dwfl_Module *m);
/* Set `fo`'s module fields (module, build_id, module_offset, mapping: what was there is
 * replaced) for the native frame at `pc` whose module holds `at` (pc, or a return address's
 * call): where the process's mappings put `at`, never a file's module for anonymous memory.
 * The build ID is asked once per module, while the process is stopped. */
void stack_module_id(struct target *t, uint64_t pc, uint64_t at, struct frame_out *fo);
/* The function and module at a native PC, kept: NULL only when the table is full. */
const struct native_name *stack_native_name(struct target *t, uint64_t pc);
/* The name of an inlined subroutine's DIE: its own, or its abstract origin's. */
const char *stack_inlined_name(Dwarf_Die *die);
/* The native names kept, libdwfl's state, and the module names made. */
void stack_native_free(struct target *t);

/* -- stack_tailcalls.c -- */

#define MAX_TAIL_CALLS 4 /* functions in one chain */

struct tail_frame {
	uint64_t pc;      /* after the tail call, as GDB shows it */
	const char *name; /* libdw's string */
};

/* The chain of tail calls from the caller at return address `ret` to the function starting
 * at `callee`, outermost first, in `out`; how many (0: none, or none GDB would show). Each
 * (ret, callee) is asked once. */
unsigned stack_tail_calls(struct target *t, uint64_t ret, uint64_t callee,
			  struct tail_frame out[MAX_TAIL_CALLS]);

/* -- stack_walk.c -- */

/* The JIT entries, loaded files and perf maps of the process: 0, or -1 (out of memory). */
int stack_scan(struct target *t, const struct options *o);
/* What went wrong reading the JIT entries, as problems (after the walk: a stackmap is read
 * when a frame is in its code). */
void stack_process_problems(struct target *t);
/* Every thread's frames. */
void stack_walk_threads(struct target *t, const struct options *o);

/* -- stack_options.c -- */

/* The options both tools take, for getopt_long's table (STACK_TARGET_LONGOPTS, and "c:" in
 * its short ones); a tool's own option values start at STACK_OPT_TOOL. */
enum { STACK_OPT_EXE = 256, STACK_OPT_SYSROOT, STACK_OPT_PERF, STACK_OPT_NO_PERF,
       STACK_OPT_FREEZE, STACK_OPT_STACK_BYTES, STACK_OPT_TOOL };
#define STACK_TARGET_LONGOPTS \
	{"exe", required_argument, NULL, STACK_OPT_EXE}, \
	{"sysroot", required_argument, NULL, STACK_OPT_SYSROOT}, \
	{"core", required_argument, NULL, 'c'}, \
	{"perf-map", required_argument, NULL, STACK_OPT_PERF}, \
	{"jitdump", required_argument, NULL, STACK_OPT_PERF}, \
	{"no-perf-maps", no_argument, NULL, STACK_OPT_NO_PERF}, \
	{"freeze", required_argument, NULL, STACK_OPT_FREEZE}, \
	{"stack-bytes", required_argument, NULL, STACK_OPT_STACK_BYTES}

/* A usage error, said as GNU tools say one ("TOOL: what", then where help is): 2. */
int stack_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A limit's value, a whole number from 1, into *out: 0, or 2 (said). */
int stack_parse_limit(const char *option, const char *s, unsigned *out);
/* getopt_long's answer `c` (its value `arg`) when it is one of the options both take: 1
 * (taken into `o`; -c sets target and core), 2 (a wrong value, said); 0: not one of them. */
int stack_target_option(int c, const char *arg, struct options *o);
/* getopt_long's ':' (a value missing) or '?' (an unknown option), said: 2. */
int stack_option_error(int c, char **argv);
/* The operands after the options: PID or CORE, or with -c at most the executable: 0, or 2
 * (said). */
int stack_target_operands(int argc, char **argv, struct options *o);

/* -- stack_read.c -- */

/* SIGINT, SIGTERM, SIGHUP and SIGQUIT only ask the tool to stop early (stack_interrupted):
 * a live process's threads stopped then are let go, not left stopped. */
void stack_catch_signals(void);

/* The target `o` names (a core, or the process of a PID) opened, its modules and JIT code
 * read, and every thread walked (the steps above, in order); *live says whether it is a
 * process. 0, or -1 with the reason said (stack_fatal). */
int stack_read(struct target *t, const struct options *o, bool *live);

/* -- stack_signature.c -- */

/* How many significant frames a signature takes (docs/jitmap-stack.md, "Crash signatures"). */
#define SIGNATURE_FRAMES 5

struct signature;

/* The crash signature of the target's crashing thread, from the frames the walk found (a
 * core's first thread with a signal, else its first; a live process's first thread): NULL
 * only when out of memory (said as a problem). */
struct signature *stack_signature_make(const struct target *t);
/* `signature: A | B | C`, then the frames it used and where it ended. */
void stack_signature_print_text(const struct signature *s);
/* The object of jitmap-stack --json's "signature" field. */
void stack_signature_print_json(const struct signature *s);
void stack_signature_free(struct signature *s); /* NULL: nothing */

/* -- stack_output.c -- */

void stack_print_text(const struct target *t, const struct options *o);
/* The JSON object; with a signature (--signature; NULL: none), its "signature" field. */
void stack_print_json(const struct target *t, const struct options *o,
		      const struct signature *sig);
/* --json when the target could not be read at all: one object, with `error` and the
 * problems said. */
void stack_print_json_error(const char *error);

#endif
