/* stopped.h: a stopped process in libjitmap, from a core file or a live process alike.
 *
 * A core and a live process held by ptrace are the same thing to a reader of stacks: an
 * architecture and byte order, threads with their names and registers, memory, where code can
 * be, and problems met reading them. A jitmap_stopped is either, behind one set of calls, as
 * libdwfl's Dwfl is a core (dwfl_core_file_attach) or a process (dwfl_linux_proc_attach): one
 * opener each (jitmap_stopped_open_core, jitmap_stopped_open_pid), then the same threads,
 * registers, targets and answers. What only one kind has (a core's mappings, where its bytes
 * come from, its auxiliary vector; a live process's mapped files) stays with the underlying
 * object, which jitmap_stopped_core and jitmap_stopped_live give.
 *
 * The openers are jitmap_core_open's and jitmap_live_open's (core.h, live.h): their checks,
 * their errors and their words, on every path. A live process is stopped until
 * jitmap_stopped_detach (or free), called on the thread that opened it (live.h says why).
 * Conventions as in jitmap.h; a jitmap_stopped is used by one thread at a time.
 */
#ifndef JITMAP_STOPPED_H
#define JITMAP_STOPPED_H

#include <signal.h>
#include <sys/types.h>

#include "jitmap/core.h"
#include "jitmap/jitmap.h"
#include "jitmap/live.h"
#include "jitmap/unwind.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jitmap_stopped jitmap_stopped;

typedef enum jitmap_stopped_kind {
	JITMAP_STOPPED_CORE = 1, /* a core file (jitmap_stopped_open_core) */
	JITMAP_STOPPED_LIVE = 2, /* a live process (jitmap_stopped_open_pid) */
} jitmap_stopped_kind;

/* Flags of jitmap_stopped_opts; each is for one opener and ignored by the other. */
#define JITMAP_STOPPED_NO_FILES 1u /* a core: JITMAP_CORE_NO_FILES (core.h) */
#define JITMAP_STOPPED_NO_STOP 2u  /* a process: JITMAP_LIVE_NO_STOP (live.h): nothing is
				    * stopped, threads have no registers */
#define JITMAP_STOPPED_BY_THREAD 4u /* a process: JITMAP_LIVE_BY_THREAD (live.h): one thread
				     * stopped at a time, its stack captured */
#define JITMAP_STOPPED_SNAPSHOT 8u  /* a process: JITMAP_LIVE_SNAPSHOT (live.h): every thread
				     * stopped at once while the stacks are captured */

typedef struct jitmap_stopped_opts {
	/* sizeof(jitmap_stopped_opts) as the caller knows it: fields past it are not read; bytes
	 * past the fields this library knows must be 0 (else EINVAL). */
	size_t sz;
	const char *exe;     /* a core: jitmap_core_opts.exe (NULL: none) */
	const char *sysroot; /* a core: jitmap_core_opts.sysroot (NULL: "/") */
	size_t max_threads;  /* a process: jitmap_live_opts.max_threads (0: 65536) */
	unsigned flags;      /* JITMAP_STOPPED_* */
	unsigned max_rounds; /* a process: jitmap_live_opts.max_rounds (0: 16) */
	/* jitmap_live_opts.interrupt, and a compressed core's jitmap_core_opts.interrupt: an
	 * open under way fails with EINTR once it is nonzero (a process's threads let go). */
	const volatile sig_atomic_t *interrupt;
	size_t stack_bytes;  /* a process: jitmap_live_opts.stack_bytes (0: 1 MiB) */
	const char *debug_dirs; /* a core: jitmap_core_opts.debug_dirs (NULL: /usr/lib/debug) */
	/* A field added here: name it in JITMAP__OPTS_VALID in targets/stopped.c. */
} jitmap_stopped_opts;

/* Open the core file at `path`, as jitmap_core_open does; or stop process `pid` and read its
 * threads, as jitmap_live_open does. `opts` and `err` may be NULL. Returns NULL with errno set
 * and `*err` filled, for the reasons core.h and live.h list (EINVAL also for a NULL path or a
 * pid <= 0). Damage a core survives, threads left out: see jitmap_stopped_warning. */
JITMAP_API jitmap_stopped *jitmap_stopped_open_core(const char *path,
						    const jitmap_stopped_opts *opts,
						    jitmap_error *err);
JITMAP_API jitmap_stopped *jitmap_stopped_open_pid(pid_t pid, const jitmap_stopped_opts *opts,
						   jitmap_error *err);
/* Let a live process's threads go (jitmap_live_detach: 0, -EPERM on another thread than the
 * opener's, or the errno of a thread that could not be let go); 0 for a core, which has none
 * to let go. What was read stays, and memory still reads (a live process's as it runs). */
JITMAP_API int jitmap_stopped_detach(jitmap_stopped *s);
/* Detach (a live process, on the thread that opened it) and free. */
JITMAP_API void jitmap_stopped_free(jitmap_stopped *s);

/* What it was opened from; its architecture and byte order (a core's own, whatever the
 * host's; a live process's are the host's). */
JITMAP_API jitmap_stopped_kind jitmap_stopped_kind_of(const jitmap_stopped *s);
JITMAP_API jitmap_arch jitmap_stopped_arch(const jitmap_stopped *s);
JITMAP_API jitmap_byte_order jitmap_stopped_byte_order(const jitmap_stopped *s);
/* The process ID: a live process's; a core's first thread's ID that is not 0 (the kernel
 * writes the thread that caused the dump first: the process's ID when that is the main
 * thread), 0 for a core without threads. Its name: a live process's /proc/PID/comm as it was
 * at open, a core's NT_PRPSINFO pr_fname (the same name, as the kernel or GDB wrote it); ""
 * when unknown. */
JITMAP_API pid_t jitmap_stopped_pid(const jitmap_stopped *s);
JITMAP_API const char *jitmap_stopped_name(const jitmap_stopped *s);

/* The core or the live process beneath, for the calls only one of them has (NULL when it is
 * the other kind). Owned by `s`: not to be freed, and valid until `s` is freed. */
JITMAP_API jitmap_core *jitmap_stopped_core(jitmap_stopped *s);
JITMAP_API jitmap_live *jitmap_stopped_live(jitmap_stopped *s);

/* -- Threads -- */

typedef struct jitmap_stopped_thread_info {
	pid_t tid;        /* a core's pr_pid, a live thread's ID */
	const char *name; /* a live thread's /proc/PID/task/TID/comm; "" when unknown, and for a
			   * core's threads */
	int signal;       /* a core's pr_cursig; the signal a live thread's stop held back, given
			   * back when it is let go (live.h); 0: none */
	/* 0: the thread's registers were read, and `regs` holds them. Else `regs` is NULL,
	 * `why` says why (one sentence, no period), and, for a core: -ENOTSUP (an architecture
	 * whose registers jitmap does not read) or -ENODATA (its note holds no PC), both "the
	 * core holds no registers for it"; for a live process, the errors of
	 * jitmap_live_thread_info. */
	int error;
	const char *why;  /* "" when error is 0 */
	const jitmap_frame_regs *regs; /* frame 0: the PC and the registers an unwinder tracks */
} jitmap_stopped_thread_info;

/* Threads in the order core.h and live.h give them (a core's note order, the thread that
 * caused the dump first; /proc/PID/task order, the main thread first). */
JITMAP_API size_t jitmap_stopped_num_threads(const jitmap_stopped *s);
/* Thread `i`, or NULL when out of range. */
JITMAP_API const jitmap_stopped_thread_info *jitmap_stopped_thread(const jitmap_stopped *s,
								   size_t i);
/* The value of DWARF register `regno` of `thread` (a thread of jitmap_stopped_thread): every
 * register of the thread's NT_PRSTATUS layout, PC, flags and segment registers included, as
 * jitmap_core_thread_reg and jitmap_live_thread_reg give them. 0, or -ENOENT when the thread
 * has no such register (or none: see its `error`). */
JITMAP_API int jitmap_stopped_thread_reg(const jitmap_stopped_thread_info *thread,
					 unsigned regno, uint64_t *value);

/* -- Memory and code -- */

/* The process's memory (jitmap_core_target, jitmap_live_target: read_reg NULL), and the same
 * with read_reg reading thread `i`'s registers (jitmap_core_thread_target,
 * jitmap_live_thread_target: a target with no callbacks when `i` is out of range). Valid
 * until `s` is freed. */
JITMAP_API jitmap_target jitmap_stopped_target(jitmap_stopped *s);
JITMAP_API jitmap_target jitmap_stopped_thread_target(jitmap_stopped *s, size_t i);
/* Memory as thread `i` stopped: a core's (jitmap_stopped_thread_target), a live process's
 * stack captured by thread (jitmap_live_thread_stack_target: nothing else). What a frame's
 * values are read through, so that none is read after the thread ran again. */
JITMAP_API jitmap_target jitmap_stopped_thread_stack_target(jitmap_stopped *s, size_t i);

/* Whether code can be at `pc`: jitmap_core_code_at or jitmap_live_code_at (1, 0 with `why`,
 * or a negative errno; -EINVAL for a NULL `s`). For jitmap_stacker_opts.code_at. */
JITMAP_API int jitmap_stopped_code_at(jitmap_stopped *s, uint64_t pc, char *why,
				      size_t why_len);
/* The build ID of the file mapped at `addr`, from its first page as the core or the process
 * holds it: jitmap_core_build_id_at, jitmap_live_build_id_at (0: none). */
JITMAP_API size_t jitmap_stopped_build_id_at(jitmap_stopped *s, uint64_t addr, uint8_t *out,
					     size_t len);

/* -- Modules: where an address lies -- */

typedef struct jitmap_stopped_module_info {
	size_t sz;           /* set by the caller: sizeof(jitmap_stopped_module_info) (process.h's
			      * jitmap_source_info says why) */
	uint64_t start, end; /* the mapping holding the address: [start, end) */
	/* The mapping's name: the path of the file mapped there as the process named it (a
	 * core's NT_FILE path, which ends in " (deleted)" for a file unlinked since it was
	 * mapped; a live process's without it), or for memory no file backs, what
	 * /proc/PID/maps calls it ("[heap]", "[stack]", "[vdso]", "[anon:NAME]" of
	 * prctl(PR_SET_VMA_ANON_NAME)). NULL: no name (anonymous memory, and all of a core's,
	 * which names files only). Owned by the stopped process: valid until it is freed. */
	const char *name;
	bool file;           /* a file is mapped there (`name` is its path) */
	/* A module (1) only: its load bias, the address less the file's virtual address of the
	 * same byte (p_vaddr's scale, as the file's symbols and CFI are): for each mapping the
	 * dynamic linker made, the image's load bias (l_addr); for a file mapped again elsewhere
	 * (Node.js maps its own embedded builtins next to V8's code space), that mapping's own. */
	uint64_t bias;
} jitmap_stopped_module_info;

/* The module at `addr`: 1 when the byte there is mapped from an ELF file (ET_EXEC or ET_DYN)
 * and lies in the file bytes of one of its PT_LOAD segments: `out` says which file and its
 * load bias (so addr - out->bias is an address of the file, inside it). 0 when no module
 * holds it: anonymous memory (a JIT's code, the heap, the vDSO), a file that is not an ELF
 * image (a memfd, shared memory), or bytes of a file past its segments, or an ELF file whose
 * headers the process's memory (or a core's file) does not hold; `out` names the mapping
 * there. -ENOENT: no mapping there. -EINVAL: a NULL argument, or out->sz too small. A live
 * process's mappings are jitmap_live_code_at's (read once, and kept), and its errno of
 * /proc/PID/maps is returned. For a tool that keys native frames by (build ID, module
 * offset), where a PC in a JIT's memory must get neither. */
JITMAP_API int jitmap_stopped_module_at(jitmap_stopped *s, uint64_t addr,
					jitmap_stopped_module_info *out);

/* -- Problems -- */

/* Problems met while reading it (jitmap_core_warning, jitmap_live_warning): one sentence
 * each, in order; NULL past the end. */
JITMAP_API const char *jitmap_stopped_warning(const jitmap_stopped *s, size_t i);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_STOPPED_H */
