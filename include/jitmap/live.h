/* live.h: a live Linux process in libjitmap, as core.h is a core.
 *
 * jitmap_live_open stops every thread of a process with ptrace (PTRACE_SEIZE, then
 * PTRACE_INTERRUPT: no signal is sent, and the kernel lets the threads go if the tracer dies),
 * reads each thread's name and registers, and offers the process's memory (/proc/PID/mem) as
 * a jitmap_target, read by the page and kept while the threads are stopped. Threads started
 * while it attaches are picked up in further rounds; threads that exit meanwhile are listed
 * with the reason. jitmap_live_detach lets every thread go: call it as soon as what needs the
 * stopped process is done (walking the stacks), before output is printed.
 *
 * The architecture is the host's (jitmap_arch_host): a process this library can trace runs
 * its code. Registers come through PTRACE_GETREGSET in the layout a core's NT_PRSTATUS has
 * (jitmap_frame_regs_from_linux: x86-64, AArch64, s390x).
 *
 * Linux makes the *thread* that attached the tracer, not the process: jitmap_live_open,
 * jitmap_live_detach and jitmap_live_free must be called on one thread. The library installs
 * no signal handler; a caller that wants SIGINT to let the process go early passes the flag
 * its handler sets (jitmap_live_opts.interrupt): an open under way then fails with EINTR,
 * every thread let go; once open, the caller checks its flag and detaches.
 * Conventions as in jitmap.h; a jitmap_live is used by one thread at a time.
 */
#ifndef JITMAP_LIVE_H
#define JITMAP_LIVE_H

#include <signal.h>
#include <sys/types.h>

#include "jitmap/jitmap.h"
#include "jitmap/unwind.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jitmap_live jitmap_live;

/* Flags of jitmap_live_opts. */
#define JITMAP_LIVE_NO_STOP 1u /* stop no thread: threads are listed without registers, and
				* memory is read as the process runs (never kept). For a reader
				* of JIT entries that must not pause the program, or of a process
				* another debugger holds (reading /proc/PID/mem needs permission to
				* trace, not a trace of its own). */
#define JITMAP_LIVE_BY_THREAD 2u /* stop one thread at a time, as eu-stack does, so the
				  * process as a whole never stops: each thread is stopped, its
				  * registers read and its stack captured (stack_bytes above its
				  * stack pointer, within the mapping that holds it), and let go
				  * before the next is stopped. Memory is then read as the process
				  * runs (never kept), but for the captured stacks: see
				  * jitmap_live_thread_target. The threads' stops are not at one
				  * moment (each thread's stack is its own moment). */
#define JITMAP_LIVE_SNAPSHOT 4u /* stop every thread at once, copy each one's stack as
				 * JITMAP_LIVE_BY_THREAD does, and let them all go before
				 * jitmap_live_open returns: one moment for every thread, the process
				 * stopped only while the stacks are copied. Memory is then read as
				 * with JITMAP_LIVE_BY_THREAD. (BY_THREAD wins when both are set.) */

typedef struct jitmap_live_opts {
	/* sizeof(jitmap_live_opts) as the caller knows it: fields past it are not read; bytes
	 * past the fields this library knows must be 0 (else EINVAL). */
	size_t sz;
	size_t max_threads;  /* threads read at most; the rest are left running, with a warning
			      * (0: 65536) */
	unsigned max_rounds; /* rounds of /proc/PID/task while the process keeps starting
			      * threads (0: 16); after the last, a warning */
	unsigned flags;      /* JITMAP_LIVE_* */
	/* When not NULL, polled between threads while attaching: once nonzero, every thread
	 * stopped so far is let go and jitmap_live_open fails with EINTR. A signal handler that
	 * sets it, installed without SA_RESTART, also wakes a wait for a thread to stop. */
	const volatile sig_atomic_t *interrupt;
	/* JITMAP_LIVE_BY_THREAD: the bytes of a thread's stack captured at most, from 128 bytes
	 * below its stack pointer (x86-64's red zone; 0 elsewhere) up (0: 1 MiB). Frames above
	 * them are not read (the walk says where it stopped). */
	size_t stack_bytes;
	/* A field added here: name it in JITMAP__OPTS_VALID in targets/live.c. */
} jitmap_live_opts;

/* Stop every thread of process `pid` (unless JITMAP_LIVE_NO_STOP) and read its threads. `opts`
 * and `err` may be NULL. Returns the process, or NULL with errno set, `*err` filled (its
 * reason one sentence, with the process ID) and every thread let go:
 *   ESRCH  there is no process `pid` ("no process N"), it has exited (a zombie), or it
 *          exited while being attached;
 *   EPERM  it may not be traced: "cannot trace process N (thread T): Operation not permitted
 *          (another tracer, another user, or /proc/sys/kernel/yama/ptrace_scope)"; also for
 *          the calling process itself (its threads cannot be stopped from within);
 *   EACCES /proc/N/mem cannot be opened (the same reasons);
 *   EINTR  *opts->interrupt was set ("interrupted");
 *   EINVAL pid <= 0, or bad options; ENOMEM; another errno of /proc or ptrace.
 * A thread that exited, or whose registers could not be read, is not a failure: see its
 * `error`. A process none of whose threads could be read is returned too (the caller says
 * so: it usually exited). */
JITMAP_API jitmap_live *jitmap_live_open(pid_t pid, const jitmap_live_opts *opts,
					 jitmap_error *err);
/* Let every stopped thread go (PTRACE_DETACH, with the signal its stop held back, if any).
 * What was read stays: threads, registers, names. Memory is still readable, as the process
 * runs: pages are no longer kept. Returns 0 (also when called again, or after NO_STOP);
 * -EPERM, doing nothing, when called on another thread than jitmap_live_open's (Linux lets
 * only the tracer detach: the threads stay stopped until that thread detaches or exits); or
 * the negative errno of the first thread that could not be let go for another reason than
 * having exited (the others are let go all the same). */
JITMAP_API int jitmap_live_detach(jitmap_live *live);
/* Detach (if not done: on the thread that opened it, see jitmap_live_detach) and free. */
JITMAP_API void jitmap_live_free(jitmap_live *live);

/* The process ID; its name (/proc/PID/comm as it was at open, "" when unknown); the host's
 * architecture and byte order (jitmap_arch_host); whether threads are stopped now (false
 * after jitmap_live_detach, and with JITMAP_LIVE_NO_STOP). */
JITMAP_API pid_t jitmap_live_pid(const jitmap_live *live);
JITMAP_API const char *jitmap_live_name(const jitmap_live *live);
JITMAP_API jitmap_arch jitmap_live_arch(const jitmap_live *live);
JITMAP_API jitmap_byte_order jitmap_live_byte_order(const jitmap_live *live);
JITMAP_API bool jitmap_live_stopped(const jitmap_live *live);

/* -- Threads -- */

typedef struct jitmap_live_thread_info {
	pid_t tid;
	const char *name;   /* /proc/PID/task/TID/comm, "" when unknown */
	/* The signal the thread's stop held back (its stop was a signal-delivery stop: the
	 * signal was on its way to the thread), delivered when the thread is let go; 0: none. */
	int signal;
	/* 0: the thread was stopped and its registers read. Else `regs` is NULL, `why` says why
	 * (one sentence, no period), and:
	 *   -ESRCH   the thread exited while being read ("the thread exited while being read");
	 *   -ENODATA it was not stopped (JITMAP_LIVE_NO_STOP);
	 *   another  its registers could not be read ("its registers cannot be read: ...":
	 *            ENOTSUP for an architecture jitmap reads no registers of). */
	int error;
	const char *why;    /* "" when error is 0 */
	const jitmap_frame_regs *regs; /* frame 0: PC and the registers an unwinder tracks */
	/* JITMAP_LIVE_BY_THREAD, JITMAP_LIVE_SNAPSHOT: the stack captured while the thread was
	 * stopped, [stack_lo, stack_hi) (both 0: none), and how long it was stopped, in
	 * nanoseconds (by thread: from its PTRACE_SEIZE to its PTRACE_DETACH; a snapshot:
	 * the whole open's, every thread's; 0 in the other modes). */
	uint64_t stack_lo, stack_hi, stopped_ns;
	bool stack_cut; /* the capture ended at stack_bytes, below its stack's end */
} jitmap_live_thread_info;

/* Threads in /proc/PID/task order (the main thread first). */
JITMAP_API size_t jitmap_live_num_threads(const jitmap_live *live);
/* Thread `i`, or NULL when out of range. */
JITMAP_API const jitmap_live_thread_info *jitmap_live_thread(const jitmap_live *live, size_t i);
/* The value of DWARF register `regno` of `thread` (a thread of jitmap_live_thread), as
 * jitmap_core_thread_reg: every register of the thread's NT_PRSTATUS layout, PC, flags and
 * segment registers included. 0, or -ENOENT when the thread has no such register (or no
 * registers: see its `error`). */
JITMAP_API int jitmap_live_thread_reg(const jitmap_live_thread_info *thread, unsigned regno,
				      uint64_t *value);

/* -- Memory -- */

/* A target whose read_mem reads the process's memory: whole pages, kept while the threads
 * are stopped (a JIT's entry list, its images and the stacks then cost one read per page); a
 * page that cannot be read is not kept and the bytes asked for are read alone. A read fails
 * with -EFAULT unless every byte is read, and says why: the first address that cannot be
 * read and the system's reason, or "the process exited while being read". read_reg is NULL.
 * Valid until the process object is freed. */
JITMAP_API jitmap_target jitmap_live_target(jitmap_live *live);
/* The same memory, with read_reg reading thread `i`'s registers (frame 0): values of up to 8
 * bytes in the host's byte order; -ENOENT for a register the thread does not have. A target
 * with no callbacks when `i` is out of range. With JITMAP_LIVE_BY_THREAD, the thread's stack
 * is read from what was captured while it was stopped: a read within the captured bytes
 * comes from them, a read of its stack's mapping outside them fails ("not captured while
 * thread T was stopped"), and the rest of memory is read as the process runs. */
JITMAP_API jitmap_target jitmap_live_thread_target(jitmap_live *live, size_t i);
/* Thread `i`'s captured stack, and code (JITMAP_LIVE_BY_THREAD, JITMAP_LIVE_SNAPSHOT): a read of its captured bytes,
 * or within one executable mapping (read as the process runs: code does not change as data
 * does), else it fails ("not captured while thread T was stopped"), so that a value read
 * through it is one of the thread's stop. In the other modes, jitmap_live_thread_target. */
JITMAP_API jitmap_target jitmap_live_thread_stack_target(jitmap_live *live, size_t i);

/* -- Mappings -- */

/* Whether code can be at `pc` in the process: 1 when it lies in an executable mapping, 0 when
 * it does not (`why`, `why_len` bytes, may be NULL: where it lies instead), -EINVAL for a NULL
 * process, or the errno of /proc/PID/maps. The mappings are read at the first call of this or
 * jitmap_live_mapped_file and kept (read them while the threads are stopped: a stopped
 * process changes none). For jitmap_stacker_opts.code_at. */
JITMAP_API int jitmap_live_code_at(jitmap_live *live, uint64_t pc, char *why, size_t why_len);

/* The file the process maps at `addr`, opened read-only, as the process sees it: a package
 * upgrade may have deleted it or put another file at its path since. Tried in order: the
 * mapping itself (/proc/PID/map_files/START-END, which Linux lets only root, or a holder of
 * CAP_CHECKPOINT_RESTORE, open); the file at the mapping's path as the process sees it
 * (/proc/PID/root: its root and mount namespace, a container's), then as the caller does, when
 * it has the device and inode the kernel lists for the mapping or the build ID of the image
 * in memory. Returns the
 * file descriptor (the caller closes it), with the path that opens it in `path` (`path_len`
 * bytes); or a negative errno with `why` filled: -ENOENT when no file is mapped at `addr`,
 * -ESTALE when the file was deleted or replaced and the mapping cannot be opened (read the
 * image from the process's memory instead), another errno of open(2), -EINVAL for bad
 * arguments. */
JITMAP_API int jitmap_live_mapped_file(jitmap_live *live, uint64_t addr, char *path,
				       size_t path_len, char *why, size_t why_len);

/* The build ID of the file the process maps at `addr`, read from its first page in the
 * process's memory: as jitmap_core_build_id_at, for a live process. */
JITMAP_API size_t jitmap_live_build_id_at(jitmap_live *live, uint64_t addr, uint8_t *out,
					  size_t len);

/* -- A process's files, as it sees them -- */

/* Where the files of live process `pid` are read (its perf maps, jitdumps, executable,
 * libraries): "" in `root` (`root_len` bytes, at least 22) when it shares this process's mount
 * namespace (/proc/PID/ns/mnt) and root, its paths then being ours; else "/proc/PID/root",
 * to put before each of its paths. A process in a namespace of its own (a container, a systemd
 * service with PrivateTmp=yes) has a /tmp that is not ours even where readlink of
 * /proc/PID/root says "/"; one whose namespace cannot be told is read through its root too,
 * never through a file of ours by the same name. Returns 0 (its paths are ours), 1 (through
 * /proc/PID/root), -ESRCH (no such process; `root` holds /proc/PID/root), -EINVAL. */
JITMAP_API int jitmap_pid_root(int pid, char *root, size_t root_len);

/* The PID live process `pid` has in its own PID namespace (the last field of NSpid in
 * /proc/PID/status: 1 for a container's first process), by which it names its perf map; `pid`
 * itself where it shares ours or the kernel does not say. -ESRCH when the process is gone,
 * -EINVAL for pid <= 0. */
JITMAP_API int jitmap_pid_ns_pid(int pid);

/* -- Problems -- */

/* What was left out while attaching (the process kept starting threads, more threads than
 * max_threads): one sentence each, in order; NULL past the end. */
JITMAP_API const char *jitmap_live_warning(const jitmap_live *live, size_t i);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_LIVE_H */
