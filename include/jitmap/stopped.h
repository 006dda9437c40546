/* stopped.h: a stopped process in libjitmap, from a core file or a live process alike.
 *
 * A core and a live process held by ptrace are the same thing to a reader of stacks: an
 * architecture and byte order, threads with their names and registers, memory, where code can
 * be, and problems met reading them. A jitmap_stopped is either, behind one set of calls, as
 * libdwfl's Dwfl is a core (dwfl_core_file_attach) or a process (dwfl_linux_proc_attach): one
 * opener each (jitmap_stopped_open_core, jitmap_stopped_open_core_memory,
 * jitmap_stopped_open_pid), then the same calls. Each question is asked once, of the one
 * handle; what only one kind has (a core's compression, small-core note, JIT files and libelf
 * handle; a live process's stop) answers "none" for the other kind, as each call says.
 *
 * A core holds the threads of a dumped process (one NT_PRSTATUS note each: the thread ID and
 * its general registers), its auxiliary vector (NT_AUXV), which file was mapped where
 * (NT_FILE) and the process's memory (PT_LOAD segments; read-only file mappings are usually
 * dumped with no contents, and are read from the mapped files instead). It is read through
 * libelf in the core's own byte order, whatever the host's. 64-bit cores only: LLVM stackmaps
 * exist only for 64-bit targets. Nothing in a core is trusted: every count, size and offset
 * is checked against the bytes it points into; what lies past the end of a truncated core
 * cannot be read (a warning says which segments lack bytes, and a read there says what is
 * missing), and is never taken from a mapped file instead.
 *
 * A live process is stopped with ptrace (PTRACE_SEIZE, then PTRACE_INTERRUPT: no signal is
 * sent, and the kernel lets the threads go if the tracer dies), each thread's name and
 * registers read, and its memory (/proc/PID/mem) read by the page and kept while the threads
 * are stopped. Threads started while it attaches are picked up in further rounds; threads that
 * exit meanwhile are listed with the reason. Linux makes the *thread* that attached the
 * tracer, not the process: open, jitmap_stopped_detach and jitmap_stopped_free of a live
 * process must be called on one thread. Detach as soon as what needs the stopped process is
 * done (walking the stacks), before output is printed. The library installs no signal
 * handler: a caller that wants SIGINT to let the process go early passes the flag its handler
 * sets (jitmap_stopped_opts.interrupt).
 *
 * Conventions as in jitmap.h; a jitmap_stopped is used by one thread at a time (a core's
 * mapped files are opened on first use).
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
	JITMAP_STOPPED_CORE = 1, /* a core file (jitmap_stopped_open_core, _open_core_memory) */
	JITMAP_STOPPED_LIVE = 2, /* a live process (jitmap_stopped_open_pid) */
} jitmap_stopped_kind;

/* Flags of jitmap_stopped_opts; each is for one kind and ignored by the other. */
#define JITMAP_STOPPED_NO_FILES 1u /* a core: never open the files the core maps (memory and
				    * symbols come from the core alone; `exe` is opened all the
				    * same) */
#define JITMAP_STOPPED_NO_STOP 2u  /* a process: stop no thread: threads are listed without
				    * registers, and memory is read as the process runs (never
				    * kept). For a reader of JIT entries that must not pause the
				    * program, or of a process another debugger holds (reading
				    * /proc/PID/mem needs permission to trace, not a trace of its
				    * own). */
#define JITMAP_STOPPED_BY_THREAD 4u /* a process: stop one thread at a time, as eu-stack does,
				     * so the process as a whole never stops: each thread is
				     * stopped, its registers read and its stack captured
				     * (stack_bytes above its stack pointer, within the mapping
				     * that holds it), and let go before the next is stopped.
				     * Memory is then read as the process runs (never kept), but
				     * for the captured stacks (jitmap_stopped_thread_target). The
				     * threads' stops are not at one moment. */
#define JITMAP_STOPPED_SNAPSHOT 8u  /* a process: stop every thread at once, copy each one's
				     * stack as BY_THREAD does, and let them all go before the open
				     * returns: one moment for every thread, the process stopped
				     * only while the stacks are copied. Memory is then read as
				     * with BY_THREAD. (BY_THREAD wins when both are set.) */

typedef struct jitmap_stopped_opts {
	/* sizeof(jitmap_stopped_opts) as the caller knows it: fields past it are not read; bytes
	 * past the fields this library knows must be 0 (else EINVAL). */
	size_t sz;
	/* A core: the program's executable, when it is no longer where the core says. It
	 * replaces the mapped file that has its build ID (NT_GNU_BUILD_ID, read from the core's
	 * copy of the mapping's first page or from the mapped file), else the one with its real
	 * path (links resolved), else the one with its base name (or its real path's base name).
	 * A warning says when none matches. In a core without NT_FILE (qemu-user writes those),
	 * the executable is placed by the auxiliary vector (AT_PHDR, else AT_ENTRY) and the
	 * shared libraries by the dynamic linker's list in the core's memory (DT_DEBUG, r_debug,
	 * link_map). NULL: none. */
	const char *exe;
	/* A core: mapped files are looked up under this directory (GDB's `set sysroot`); NULL:
	 * "/". */
	const char *sysroot;
	/* A process: threads read at most; the rest are left running, with a warning (0:
	 * 65536). */
	size_t max_threads;
	unsigned flags;      /* JITMAP_STOPPED_* */
	/* A process: rounds of /proc/PID/task while the process keeps starting threads (0: 16);
	 * after the last, a warning. */
	unsigned max_rounds;
	/* When not NULL, polled while opening: once nonzero, the open fails with EINTR
	 * ("interrupted"): a process's threads stopped so far are let go (a signal handler that
	 * sets it, installed without SA_RESTART, also wakes a wait for a thread to stop); a
	 * compressed core's decompression stops. */
	const volatile sig_atomic_t *interrupt;
	/* A process, BY_THREAD and SNAPSHOT: the bytes of a thread's stack captured at most, from
	 * 128 bytes below its stack pointer (x86-64's red zone; 0 elsewhere) up (0: 1 MiB).
	 * Frames above them are not read (the walk says where it stopped). */
	size_t stack_bytes;
	/* A core: where the separate debug files of stripped mapped files are looked for,
	 * ':'-separated (GDB's debug-file-directory), each under `sysroot` first: by build ID
	 * (DIR/.build-id/xx/yyyy.debug) and by .gnu_debuglink (DIR followed by the file's
	 * folder); debuginfod too when DEBUGINFOD_URLS is set. A symbol a stripped file does not
	 * have (jitmap_stopped_find_symbol, the JIT descriptor of jitmap_process_scan_stopped)
	 * is looked up in its debug file, of the build ID the core holds for it. NULL:
	 * "/usr/lib/debug". */
	const char *debug_dirs;
	/* A field added here: name it in JITMAP__OPTS_VALID in targets/stopped.c. */
} jitmap_stopped_opts;

/* Open the core file at `path`; or a core of `len` bytes at `buf` (the bytes are copied); or
 * stop process `pid` and read its threads. `opts` and `err` may be NULL. Returns NULL with
 * errno set and `*err` filled (its reason one sentence):
 *   a core: EINVAL: not a 64-bit ELF core, its program headers are unreadable, not a regular
 *          file, or a NULL path; EISDIR: a directory; EINTR: *opts->interrupt was set while a
 *          compressed core was decompressed; ENOMEM; the open's errno.
 *   a process (the process ID in the reason; every thread let go):
 *   ESRCH  there is no process `pid` ("no process N"), it has exited (a zombie), or it
 *          exited while being attached;
 *   EPERM  it may not be traced: "cannot trace process N (thread T): Operation not permitted
 *          (another tracer, another user, or /proc/sys/kernel/yama/ptrace_scope)"; also for
 *          the calling process itself (its threads cannot be stopped from within);
 *   EACCES /proc/N/mem cannot be opened (the same reasons);
 *   EINTR  *opts->interrupt was set ("interrupted");
 *   EINVAL pid <= 0, or bad options; ENOMEM; another errno of /proc or ptrace.
 * Damage a core survives (a truncated core, a bad note, overlapping segments), a thread that
 * exited or whose registers could not be read, threads left out: not a failure (see
 * jitmap_stopped_problem and each thread's `error`). A process none of whose threads could be
 * read is returned too (the caller says so: it usually exited).
 *
 * A core stored compressed (systemd-coredump's core.*.zst; lz4 frames and xz too), known by
 * its first bytes and not by its name, is opened as the core it holds: decompressed as a
 * stream into an unlinked temporary file ($TMPDIR, else /var/tmp, else /tmp) whose blocks of
 * zeros are holes. Memory is bounded by the compression's window (zstd's up to 128 MiB, lz4's
 * blocks, xz's dictionary, refused past 1 GiB), not by the core's size. A stream cut short
 * gives the core as far as it came out, with a warning saying so. */
JITMAP_API jitmap_stopped *jitmap_stopped_open_core(const char *path,
						    const jitmap_stopped_opts *opts,
						    jitmap_error *err);
JITMAP_API jitmap_stopped *jitmap_stopped_open_core_memory(const void *buf, size_t len,
							   const jitmap_stopped_opts *opts,
							   jitmap_error *err);
JITMAP_API jitmap_stopped *jitmap_stopped_open_pid(pid_t pid, const jitmap_stopped_opts *opts,
						   jitmap_error *err);
/* Let a live process's threads go (PTRACE_DETACH, with the signal its stop held back, if
 * any). What was read stays: threads, registers, names; memory still reads, as the process
 * runs (pages are no longer kept). Returns 0 (also when called again, after NO_STOP, and for
 * a core, which has none to let go); -EPERM, doing nothing, when called on another thread
 * than the opener's (Linux lets only the tracer detach: the threads stay stopped until that
 * thread detaches or exits); or the negative errno of the first thread that could not be let
 * go for another reason than having exited (the others are let go all the same). */
JITMAP_API int jitmap_stopped_detach(jitmap_stopped *s);
/* Detach (a live process, on the thread that opened it) and free. NULL: nothing. */
JITMAP_API void jitmap_stopped_free(jitmap_stopped *s);

/* What it was opened from; its architecture (JITMAP_ARCH_UNKNOWN for a core of one
 * libjitmap does not know) and byte order (a core's own, from e_ident, whatever the host's;
 * a live process's are the host's: jitmap_arch_host). */
JITMAP_API jitmap_stopped_kind jitmap_stopped_kind_of(const jitmap_stopped *s);
JITMAP_API jitmap_arch jitmap_stopped_arch(const jitmap_stopped *s);
JITMAP_API jitmap_byte_order jitmap_stopped_byte_order(const jitmap_stopped *s);
/* The ELF e_machine: a core's own; a live process's, the host's (EM_X86_64, EM_AARCH64,
 * EM_S390; 0 for an architecture jitmap_arch does not name). */
JITMAP_API unsigned jitmap_stopped_elf_machine(const jitmap_stopped *s);
/* The process ID: a live process's; a core's first thread's ID that is not 0 (the kernel
 * writes the thread that caused the dump first: the process's ID when that is the main
 * thread), 0 for a core without threads. Its name: a live process's /proc/PID/comm as it was
 * at open, a core's NT_PRPSINFO pr_fname (the same name, as the kernel or GDB wrote it); ""
 * when unknown. */
JITMAP_API pid_t jitmap_stopped_pid(const jitmap_stopped *s);
JITMAP_API const char *jitmap_stopped_name(const jitmap_stopped *s);
/* A core's command line as NT_PRPSINFO holds it (pr_psargs: its first 80 bytes, the
 * arguments joined by spaces, so an argument's own spaces cannot be told apart); "" when
 * unknown, and for a live process (its /proc/PID/cmdline holds them whole). For a minidump's
 * LinuxCmdLine stream. */
JITMAP_API const char *jitmap_stopped_args(const jitmap_stopped *s);
/* Whether its threads are stopped now: a core's always are (true); a live process's until
 * jitmap_stopped_detach (false after it, with JITMAP_STOPPED_NO_STOP, and once BY_THREAD or
 * SNAPSHOT let them go at open). */
JITMAP_API bool jitmap_stopped_is_stopped(const jitmap_stopped *s);
/* What a core was decompressed from ("zstd", "lz4", "xz"), or NULL: a core stored as it is,
 * and a live process. */
JITMAP_API const char *jitmap_stopped_compression(const jitmap_stopped *s);

/* -- Threads -- */

typedef struct jitmap_stopped_reg {
	uint16_t regno; /* DWARF number for the process's architecture */
	uint64_t value;
} jitmap_stopped_reg;

typedef struct jitmap_stopped_thread_info {
	pid_t tid;        /* a core's pr_pid, a live thread's ID */
	const char *name; /* a live thread's /proc/PID/task/TID/comm; "" when unknown, and for a
			   * core's threads */
	/* A core's pr_cursig (the signal that stopped it); the signal a live thread's stop held
	 * back (its stop was a signal-delivery stop), delivered when the thread is let go; 0:
	 * none. */
	int signal;
	/* 0: the thread's registers were read, and `regs` holds them. Else `regs` is NULL,
	 * `why` says why (one sentence, no period), and:
	 *   a core: -ENOTSUP (an architecture whose registers jitmap does not read) or -ENODATA
	 *     (its note holds no PC), both "the core holds no registers for it";
	 *   a process: -ESRCH the thread exited while being read ("the thread exited while being
	 *     read"); -ENODATA it was not stopped (JITMAP_STOPPED_NO_STOP); another errno: its
	 *     registers could not be read ("its registers cannot be read: ...": ENOTSUP for an
	 *     architecture jitmap reads no registers of). */
	int error;
	const char *why;  /* "" when error is 0 */
	const jitmap_frame_regs *regs; /* frame 0: the PC and the registers an unwinder tracks */
	/* Every register of the thread's NT_PRSTATUS layout (Linux's user_regs_struct), sorted
	 * by DWARF number: x86-64 rax..r15 0-15, rip 16, rflags 49, segment registers 50-55,
	 * fs.base 58, gs.base 59; AArch64 x0-x30 0-30, sp 31, pc 32; s390x r0-r15 0-15, a0-a15
	 * 48-63, PSW mask 64 and address 65. 0 and NULL for other architectures, and where
	 * `error` says none were read (a core's thread whose note holds no PC keeps those its
	 * note holds). */
	size_t num_gregs;
	const jitmap_stopped_reg *gregs;
	/* A process, BY_THREAD and SNAPSHOT: the stack captured while the thread was stopped,
	 * [stack_lo, stack_hi) (both 0: none), and how long it was stopped, in nanoseconds (by
	 * thread: from its PTRACE_SEIZE to its PTRACE_DETACH; a snapshot: the whole open's,
	 * every thread's). 0 in the other modes and for a core. */
	uint64_t stack_lo, stack_hi, stopped_ns;
	bool stack_cut; /* the capture ended at stack_bytes, below its stack's end */
	/* The first address a read of this thread's targets was refused at because it lies in
	 * its stack's mapping above what was captured; 0 while none was. Set as the thread's
	 * stack is read, not at open. */
	uint64_t past_copy;
} jitmap_stopped_thread_info;

/* Threads in the kind's order: a core's note order (the thread that caused the dump first); a
 * process's /proc/PID/task order (the main thread first). */
JITMAP_API size_t jitmap_stopped_num_threads(const jitmap_stopped *s);
/* Thread `i`, or NULL when out of range. Valid until `s` is freed. */
JITMAP_API const jitmap_stopped_thread_info *jitmap_stopped_thread(const jitmap_stopped *s,
								   size_t i);
/* The value of DWARF register `regno` of `thread` (a thread of jitmap_stopped_thread): every
 * register of its `gregs`, PC, flags and segment registers included. 0, or -ENOENT when the
 * thread has no such register (or none: see its `error`). */
JITMAP_API int jitmap_stopped_thread_reg(const jitmap_stopped_thread_info *thread,
					 unsigned regno, uint64_t *value);
/* Why `thread` (of a core) stopped, as the NT_SIGINFO note after its NT_PRSTATUS says (the
 * kernel writes one, for the thread that caused the dump; GDB's gcore one for each thread):
 * 0 with its si_signo, si_code and si_addr (the faulting address for SIGSEGV, SIGBUS,
 * SIGILL, SIGFPE and SIGTRAP raised by the kernel, si_code > 0; else 0); any pointer may be
 * NULL. -ENOENT when the core holds none for it, and for a live process's threads. For a
 * minidump's exception (SIGSEGV /SEGV_MAPERR at the address). */
JITMAP_API int jitmap_stopped_thread_siginfo(const jitmap_stopped_thread_info *thread,
					     int *signo, int *code, uint64_t *addr);

/* -- Memory and code -- */

/* A target whose read_mem reads the process's memory, read_reg NULL; valid until `s` is
 * freed. A core's: its segments, and for file mappings the core did not dump, the mapped
 * files; a read may span segments and mappings, and fails (-EFAULT, with the first address
 * that is not readable and why) unless every byte is found; bytes are never taken from a file
 * where they may not be the process's (see jitmap_stopped_memory). A live process's: whole
 * pages, kept while the threads are stopped (a JIT's entry list, its images and the stacks
 * then cost one read per page); a page that cannot be read is not kept and the bytes asked
 * for are read alone; a read fails with -EFAULT unless every byte is read, and says why: the
 * first address that cannot be read and the system's reason, or "the process exited while
 * being read". */
JITMAP_API jitmap_target jitmap_stopped_target(jitmap_stopped *s);
/* The same memory, with read_reg reading thread `i`'s registers (frame 0): values of up to 8
 * bytes in the process's byte order; -ENOENT for a register the thread does not have. A
 * target with no callbacks when `i` is out of range. A live process read BY_THREAD or in a
 * SNAPSHOT: the thread's stack is read from what was captured while it was stopped (a read of
 * its stack's mapping outside the capture fails: "not captured while thread T was stopped"),
 * the rest of memory as the process runs. */
JITMAP_API jitmap_target jitmap_stopped_thread_target(jitmap_stopped *s, size_t i);
/* Memory as thread `i` stopped, what a frame's values are read through, so that none is read
 * after the thread ran again: a core's, jitmap_stopped_thread_target; a live process's, in
 * BY_THREAD and SNAPSHOT, a read of its captured bytes or within one executable mapping
 * (code does not change as data does), else it fails ("not captured while thread T was
 * stopped"); in the other modes, jitmap_stopped_thread_target. */
JITMAP_API jitmap_target jitmap_stopped_thread_stack_target(jitmap_stopped *s, size_t i);

/* Where the bytes at an address come from. */
typedef enum jitmap_stopped_source {
	JITMAP_STOPPED_MEM_CORE = 1, /* a core's own bytes (a PT_LOAD segment's contents) */
	JITMAP_STOPPED_MEM_FILE = 2, /* a core: the file mapped there: a read-only segment the
				      * core holds no bytes of (Linux dumps only the first page of
				      * those), or a mapping no segment covers (gcore leaves
				      * unmodified read-only mappings out) */
	JITMAP_STOPPED_MEM_NONE = 3, /* not known, for the reason in `why`. A core: bytes a
				      * segment should hold that lie past the end of the core
				      * (truncated: the file's bytes are not read instead, the
				      * kernel dumped them because they were written), a writable
				      * segment the core holds no bytes of (its file's bytes need
				      * not be the process's), no segment and no file there, or a
				      * mapped file that cannot be read. A process: no mapping
				      * there. */
	JITMAP_STOPPED_MEM_PROCESS = 4, /* a live process's own memory (/proc/PID/mem), in the
					 * mapping of /proc/PID/maps that holds the address */
} jitmap_stopped_source;

typedef struct jitmap_stopped_memory_info {
	size_t sz;       /* set by the caller: sizeof(jitmap_stopped_memory_info) (process.h's
			  * jitmap_source_info says why) */
	jitmap_stopped_source source;
	uint64_t size;   /* bytes from the address on that come from the same place (>= 1;
			  * UINT64_MAX when they reach the top of the address space): for a
			  * process, to the end of its mapping */
	/* CORE: the address's offset in the core; FILE, and PROCESS in a file's mapping: in
	 * the file; else 0 */
	uint64_t offset;
	/* The file mapped at the address (a core's NT_FILE path, or a placed file's; a
	 * process's path in /proc/PID/maps), or NULL. Valid until `s` is freed. */
	const char *path;
	/* A core: the PT_LOAD segment holding it; a process: its mapping (0, 0: none). */
	uint64_t segment_start, segment_end;
	unsigned segment_flags; /* p_flags (PF_X 1, PF_W 2, PF_R 4); a mapping's permissions */
	/* NONE: no file stands for these bytes: the core lost them (truncated) or does not hold
	 * a writable segment's. A debugger that reads mapped files itself must not use them
	 * either (GDB 13 reads a truncated segment's bytes from the file). */
	bool file_unusable;
	char why[192];   /* NONE: one sentence naming the address and what is missing */
} jitmap_stopped_memory_info;

/* What jitmap_stopped_target reads at `addr`, and from where: 0 (NONE is an answer, not an
 * error), -EINVAL (a NULL argument, or out->sz too small), or for a process the errno of
 * reading /proc/PID/maps (read once, and kept). For a tool that says which bytes came from
 * the core and which from files, or a debugger front end that checks its own memory reads
 * against the core (GDB reads a truncated segment's bytes from the file). */
JITMAP_API int jitmap_stopped_memory(jitmap_stopped *s, uint64_t addr,
				     jitmap_stopped_memory_info *out);

/* Whether code can be at `pc`: 1, 0 with `why` (`why_len` bytes; may be NULL) saying where it
 * lies instead, or a negative errno (-EINVAL for a NULL `s`; a process's errno of
 * /proc/PID/maps). A core: 1 in an executable segment, or in a file mapping no segment covers
 * (gcore leaves code mappings out); 0 in a segment that is not executable or in no mapping. A
 * process: 1 in an executable mapping (the mappings are read at the first need and kept: ask
 * while the threads are stopped). For jitmap_stacker_opts.code_at: a return address read
 * from stack words below a thread's last frame is rarely code. */
JITMAP_API int jitmap_stopped_code_at(jitmap_stopped *s, uint64_t pc, char *why,
				      size_t why_len);
/* The build ID of the file mapped at `addr`, from its first page as the core or the process
 * holds it (NT_GNU_BUILD_ID, the note a debugger matches files by): its length, with the ID
 * in `out` (`len` bytes; 20 for GNU ld's, at most 64), or 0 when no file is mapped there, its
 * first page is not held, or it has no build ID. For a debugger that checks the file it reads
 * for a module against the process (GDB's objfile.build_id). */
JITMAP_API size_t jitmap_stopped_build_id_at(jitmap_stopped *s, uint64_t addr, uint8_t *out,
					     size_t len);

/* -- Modules and mapped files: where an address lies -- */

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
 * process's mappings are jitmap_stopped_code_at's (read once, and kept), and its errno of
 * /proc/PID/maps is returned. For a tool that keys native frames by (build ID, module
 * offset), where a PC in a JIT's memory must get neither. */
JITMAP_API int jitmap_stopped_module_at(jitmap_stopped *s, uint64_t addr,
					jitmap_stopped_module_info *out);

typedef struct jitmap_stopped_mapping_info {
	uint64_t start, end;   /* [start, end) in the process */
	uint64_t offset;       /* in bytes, into the file */
	/* The file read for it: a core's after `exe` replacement and sysroot; a process's path
	 * as /proc/PID/maps gives it (without " (deleted)"). */
	const char *path;
	const char *core_path; /* the path as the core names it; a process's: `path` */
} jitmap_stopped_mapping_info;

/* The mapped files, sorted by start address. A core's NT_FILE mappings (and the files placed
 * without it: jitmap_stopped_placed_file): where two overlap, the one that starts lower (at
 * the same start, the first in the note) keeps the overlap; the other is cut or left out,
 * with a warning; PT_LOAD segments are treated alike. A live process's file mappings of
 * /proc/PID/maps (read once, at the first need, and kept; none when it cannot be read:
 * jitmap_stopped_code_at says why), not its anonymous ones ("[heap]", a JIT's code). The
 * i-th is NULL past the end; valid until `s` is freed. */
JITMAP_API size_t jitmap_stopped_num_mappings(jitmap_stopped *s);
JITMAP_API const jitmap_stopped_mapping_info *jitmap_stopped_mapping(jitmap_stopped *s,
								     size_t i);

/* The file the process maps at `addr`, opened read-only, as the process sees it. Returns the
 * file descriptor (the caller closes it), with the path that opens it in `path` (`path_len`
 * bytes); or a negative errno with `why` (`why_len` bytes; may be NULL) filled: -ENOENT when
 * no file is mapped at `addr`, -EINVAL for bad arguments, another errno of open(2).
 *   A core: the file read for its mapping (jitmap_stopped_mapping_info.path: NT_FILE's,
 *     under the sysroot, or `exe`), when it may be read: -ESTALE when it is another build
 *     than the process mapped, -EPERM with JITMAP_STOPPED_NO_FILES (but `exe`).
 *   A process: a package upgrade may have deleted the file or put another at its path since.
 *     Tried in order: the mapping itself (/proc/PID/map_files/START-END, which Linux lets
 *     only root, or a holder of CAP_CHECKPOINT_RESTORE, open); the file at the mapping's path
 *     as the process sees it (/proc/PID/root: its root and mount namespace, a container's),
 *     then as the caller does, when it has the device and inode the kernel lists for the
 *     mapping or the build ID of the image in memory. -ESTALE when the file was deleted or
 *     replaced and the mapping cannot be opened (read the image from memory instead). */
JITMAP_API int jitmap_stopped_mapped_file(jitmap_stopped *s, uint64_t addr, char *path,
					  size_t path_len, char *why, size_t why_len);

/* The value of the first auxiliary-vector entry of `type` (AT_PHDR, AT_ENTRY, ...): a core's
 * NT_AUXV, a process's /proc/PID/auxv (read at the first call, and kept). 0, or -ENOENT (no
 * such entry, or no vector could be read). */
JITMAP_API int jitmap_stopped_auxv(jitmap_stopped *s, uint64_t type, uint64_t *value);

/* The files the library placed itself, in a core with no NT_FILE note (qemu-user's guest
 * cores): the executable given as `exe`, where the auxiliary vector's AT_PHDR (else AT_ENTRY)
 * puts it, and the libraries the dynamic linker's list names. The i-th: 0, with its path and
 * load bias (a file address + bias is the process's; 0 for an executable at its linked
 * addresses); -ENOENT past the last, and always for a live process (it places none). Placed
 * files' segments are among the mappings too. For a tool that reports them to another reader
 * (jitmap-stack to libdwfl, which finds no module in such a core). */
JITMAP_API int jitmap_stopped_placed_file(const jitmap_stopped *s, size_t i, const char **path,
					  uint64_t *bias);

/* Every definition of data symbol `name` (STT_OBJECT) in a core's mapped files (for a
 * stripped one, in its separate debug file: jitmap_stopped_opts.debug_dirs), moved by where
 * each file is loaded. Stores at most `max` addresses in `out` (and the file each is in, when
 * `files` is not NULL) and returns how many there are. A mapped file that cannot be opened
 * adds a warning. 0 for a live process (its modules are read where they are, by the process
 * model's scan or the caller's own reader). */
JITMAP_API size_t jitmap_stopped_find_symbol(jitmap_stopped *s, const char *name,
					     uint64_t *out, const char **files, size_t max);

struct Elf;
/* A core as libelf reads it (elf_begin with ELF_C_READ_MMAP, or elf_memory for
 * jitmap_stopped_open_core_memory), for a reader that takes one, so that the core is opened
 * once: libdwfl's dwfl_core_file_report and dwfl_attach_state. Owned by `s` (not to be
 * ended), valid until `s` is freed; NULL for a live process and a NULL `s`. */
JITMAP_API struct Elf *jitmap_stopped_elf(jitmap_stopped *s);

/* -- What a core carries beside the process (core.h says how it is written) -- */

/* Whether it is a small core (jitmap-core-handler --small; core.h's "Small cores"): 1 with
 * its stack bound and how many bytes of memory it keeps and left out (those its mapped files
 * hold not counted; any pointer may be NULL); 0 when it is not one, and for a live process;
 * -EINVAL for a NULL `s`. */
JITMAP_API int jitmap_stopped_small(const jitmap_stopped *s, uint64_t *stack_bytes,
				    uint64_t *kept_bytes, uint64_t *left_bytes);

/* A JIT file (perf map or jitdump) a core carries in jitmap-core-handler's note (core.h's
 * JITMAP_CORE_NOTE_FILE). */
typedef struct jitmap_stopped_jit_file_info {
	const char *path;  /* as the crashed process named it */
	unsigned kind;     /* a jitmap_perfmap_kind (perfmap.h): 1 a perf map, 2 a jitdump */
	unsigned flags;    /* JITMAP_CORE_FILE_CUT */
	const void *data;  /* its bytes, valid until `s` is freed */
	size_t size;
	uint64_t offset;   /* of those bytes in the (decompressed) core file */
} jitmap_stopped_jit_file_info;

/* The JIT files a core carries, in note order (a malformed note is a warning and is left
 * out): how many (0 for a live process, whose files are on its disk: perfmap.h), and the
 * i-th (NULL past the end). */
JITMAP_API size_t jitmap_stopped_num_jit_files(const jitmap_stopped *s);
JITMAP_API const jitmap_stopped_jit_file_info *jitmap_stopped_jit_file(const jitmap_stopped *s,
								       size_t i);

/* -- Problems --
 *
 * Problems met while reading it, each a sentence (jitmap_stopped_warning) and a status
 * (jitmap_stopped_problem): a client acts on the status, never on the words, which may
 * change. (The clients that matched words, jitmap-stack and jitmap-core-handler, are moved
 * onto these statuses, with a test that fails when a client compares a message.)
 *
 * A stack cut by the copy (a live process read BY_THREAD or in a SNAPSHOT, whose stack was
 * captured only up to stack_bytes) is met while a thread is walked, not at open: it is the
 * thread's status, jitmap_stopped_thread_info.stack_cut (the copy ended before the stack
 * did) and past_copy (a read was refused above it), with the walk's own (stack.h:
 * jitmap_stack_frame.stack_unread of its last frame). */

typedef enum jitmap_problem_kind {
	JITMAP_PROBLEM_WARNING = 1, /* something was lost or could not be read: answers around
				     * it may be missing */
	JITMAP_PROBLEM_INFO = 2,    /* said for the reader's information: nothing is missing
				     * (how the files of a core without NT_FILE were placed) */
} jitmap_problem_kind;

typedef enum jitmap_problem_code {
	JITMAP_PROBLEM_OTHER = 0,      /* none of those below */
	JITMAP_PROBLEM_TRUNCATED = 1,  /* a core ends before bytes it says it holds (its notes,
					* segments, program headers), or its compressed stream
					* was cut short */
	JITMAP_PROBLEM_MALFORMED = 2,  /* a note, program header or segment is damaged, or
					* overlaps another, and is read around */
	JITMAP_PROBLEM_FILE = 3,       /* a mapped file, `exe` or a JIT file is missing, cannot
					* be read, or is another build than the process's */
	JITMAP_PROBLEM_THREADS_LEFT = 4, /* a process: threads not read (it kept starting them,
					  * or had more than max_threads) */
	JITMAP_PROBLEM_FILES_PLACED = 5, /* a core without NT_FILE: where its files were placed
					  * (JITMAP_PROBLEM_INFO), or that they cannot be */
	JITMAP_PROBLEM_LIMIT = 6,      /* more than jitmap reads of something (auxv entries):
					* the rest were not read */
} jitmap_problem_code;

typedef struct jitmap_stopped_problem_info {
	size_t sz;                /* set by the caller: sizeof(jitmap_stopped_problem_info) */
	jitmap_problem_kind kind;
	jitmap_problem_code code;
	const char *text;         /* jitmap_stopped_warning(s, i) */
} jitmap_stopped_problem_info;

/* Problem `i`, in order: its sentence (valid until `s` is freed; NULL past the end). */
JITMAP_API const char *jitmap_stopped_warning(const jitmap_stopped *s, size_t i);
/* Problem `i` with its status: 0; -ENOENT past the end; -EINVAL for a NULL argument or
 * out->sz too small. */
JITMAP_API int jitmap_stopped_problem(const jitmap_stopped *s, size_t i,
				      jitmap_stopped_problem_info *out);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_STOPPED_H */
