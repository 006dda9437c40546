/* stack.h: a thread's whole stack, JIT frames and native ones, without a debugger.
 *
 * A jitmap_stacker walks a thread from its registers, one frame after the other:
 *   - a frame whose PC is JIT code the process model knows (jitmap_process_code_at) is
 *     unwound by jitmap_unwind_step with that code's CFI (its live .eh_frame, read once per
 *     image by the process model: jitmap_process_code_cfi), its stackmap and its function's
 *     range;
 *   - a frame in code only a perf map or jitdump names (jitmap_process_perfmap: no image)
 *     by the native unwinder where its CFI covers the PC (a module's CFI is the truth where a
 *     stale map line covers it), else by jitmap_unwind_step over the code object's range
 *     (the code's own instructions, a frame-pointer prologue at its start), and where
 *     nothing proves the step, by the frame-pointer chain as a guess;
 *   - any other frame by the caller's native unwinder, a callback (jitmap-stack's uses
 *     elfutils' libdwfl: modules, symbols, CFI, signal frames), or without one, or where it
 *     has nothing to say (-ENOENT), by the frame-pointer chain.
 * Each frame goes to a callback with its registers as unwound (an outer frame knows its
 * callee-saved registers only), the JIT code it is in and the stackmap record at its PC, so
 * that the caller can evaluate the record's locations (jitmap_location_eval_frame) as a
 * debugger would. This is what a crash reporter needs from libjitmap: docs/jitmap-stack.md
 * ("For crash reporters") shows the calls, examples/stack-walk/stack_walk.c is a complete
 * program on a core with libjitmap alone, and tools/jitmap-stack.c uses them with libdwfl.
 *
 * A stacker reads JIT code through the process it was made for, which keeps each image's CFI:
 * it keeps nothing of a scan's, and may walk threads across scans. Not thread-safe: one
 * thread at a time per stacker (and per process).
 */
#ifndef JITMAP_STACK_H
#define JITMAP_STACK_H

#include <jitmap/jitmap.h>
#include <jitmap/process.h>
#include <jitmap/unwind.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jitmap_stacker jitmap_stacker;

typedef struct jitmap_stack_frame {
	unsigned level;               /* 0: the innermost */
	uint64_t pc;
	bool exact;                   /* pc is where the frame stands (frame 0, a frame a signal
	                                 interrupted); else it is a return address */
	const jitmap_frame_regs *regs; /* the frame's registers as unwound */
	bool jit;                     /* in JIT code the process knows: `code` says which */
	jitmap_code_info code;
	const jitmap_stackmap *stackmap; /* the record at `pc` (JIT code or a loaded file's), */
	const jitmap_record *record;     /* or NULL */
	/* How this frame's caller was found: the method (JITMAP_UNWIND_NATIVE for the native
	 * callback's), and this frame's CFA (0 when unknown). When the walk ends at this frame,
	 * `stop` is the step's return (-ESRCH: the outermost frame; else why it failed, see
	 * jitmap_unwind_step) or -E2BIG at the frame limit, with `why`; else 0 and "". */
	jitmap_unwind_method method;
	uint64_t cfa;
	int stop;
	const char *why;      /* also, where step_guessed, why no method proved the step */
	/* Whether a step below this frame was a guess (docs/unwinding.md, "Proven steps and
	 * guesses"): the frame-pointer chain through code whose start is unknown, a native
	 * unwinder's answer from anything but CFI rows for the PC (its own frame-pointer
	 * heuristic, over a module it has no CFI for or whose file is not the one mapped). Such
	 * a frame is still passed on, but its PC may be wrong and none of its registers is known
	 * to be right: `guess` says which step and why ("" when every step was proven), and a
	 * caller states none of its registers or values (jitmap_frame_desc.guessed). */
	bool guessed;
	const char *guess;
	/* Whether the step from this frame to its caller is a guess (then `guess` of the
	 * caller says why). */
	bool step_guessed;
	/* Whether the walk ended at this frame (`stop`) because a word of the stack that the
	 * step needed could not be read: a return address, a frame record. A core, or a copy of
	 * a thread's stack cut short (its thread's stack_cut), that holds less of the stack
	 * than its frames use ends a walk so. False for any other stop, and where the native
	 * callback said why. A client tells the case by this, not by the words of `why`. (Here,
	 * in the padding before code_pc: the struct keeps its size and layout.) */
	bool stack_unread;
	/* Where the frame's code was looked up: `pc` where it is exact; else the return
	 * address's call, pc - 1, or `pc` itself when no code holds pc - 1 and a code range
	 * starts at pc (a runtime's continuation: BEAM's and V8's interpreters push the first
	 * byte of the code a frame resumes in, which no call left). Name the frame from here. */
	uint64_t code_pc;
	/* How this frame's caller was found as a rule over this frame's registers (unwind.h,
	 * "A step's rule"), where a proven step of jitmap's own unwinder found it (CFI, the
	 * stackmap's frame size, the code, the frame pointer of a function whose start is
	 * known); NULL for a native unwinder's step, a guess, the walk's last frame, and a rule
	 * the method cannot state (a CFI expression). Appended: the stacker owns it. */
	const jitmap_unwind_rule *rule;
} jitmap_stack_frame;

/* A native frame's caller: fill `out->caller` (PC, SP and the registers the native unwinder
 * recovered) and `out->cfa`, and say in *caller_exact whether the caller's PC is exact (the
 * frame was a signal handler's trampoline) rather than a return address. `exact` says the
 * same of this frame. Set `out->method` to JITMAP_UNWIND_CFI when the native unwinder found
 * the caller by CFI rows that cover this frame's PC (an FDE of its module's .eh_frame or
 * .debug_frame), anything else (leave it 0) when it did not (a frame-pointer fallback, a
 * guess). Return 0, -ESRCH at the outermost frame, -ENOENT when the native unwinder knows
 * nothing of this PC (the frame pointer is tried), or another negative errno with the
 * reason in `why`.
 *
 * Set bit n of `out->restored` for a register the native unwinder read back from where this
 * frame saved it (its CFI rule at this PC names a save slot or a register: a trampoline that
 * saves every register, as anyregcc's do), and for none it merely carried over.
 *
 * The library applies the ABI to the answer (docs/jitmap-stack.md, "The ABI and native
 * unwinders"): a caller-saved register in `out->caller` is dropped unless *caller_exact
 * (a signal frame's saved context restored it) or its `restored` bit is set (elsewhere no
 * unwinder can know it, and elfutils' libdwfl reports x86-64's rax as "same value"); with
 * JITMAP_UNWIND_CFI, a
 * callee-saved register the native unwinder did not recover is carried over from this
 * frame, since under the ABI no rule for a callee-saved register means "same value" (libdwfl
 * loses x86-64's rbx so). The frame's `method` is JITMAP_UNWIND_NATIVE either way. */
typedef int (*jitmap_stack_native_fn)(void *ctx, const jitmap_frame_regs *regs, bool exact,
				      jitmap_unwind_result *out, bool *caller_exact, char *why,
				      size_t why_len);

/* Options (libbpf's convention: `sz` = sizeof(jitmap_stacker_opts); later fields zero). */
/* Where code can be: 1 when `pc` lies in an executable mapping of the target (an ELF
 * module's code, JIT code), 0 when it does not (`why`, `why_len` bytes, says where it lies
 * instead: no mapping, or one that is not executable), a negative errno when it cannot be
 * told. jitmap_stopped_code_at answers for a core or a live process. */
typedef int (*jitmap_stack_code_fn)(void *ctx, uint64_t pc, char *why, size_t why_len);

/* Options (libbpf's convention: `sz` = sizeof(jitmap_stacker_opts); later fields zero). */
typedef struct jitmap_stacker_opts {
	size_t sz;
	unsigned max_frames;                /* per walk; 0: 4096 */
	jitmap_stack_native_fn native_step; /* NULL: the frame pointer for native frames */
	void *native_ctx;
	jitmap_byte_order order;            /* of target memory; AUTO: the architecture's */
	/* When set, a caller whose PC lies where no code can be ends the walk at the frame
	 * before (its `stop` -ENOEXEC, `why` says where the PC lies): below a thread's last
	 * real frame lie stack words, and an unwinder that reads one as a return address
	 * makes a frame no code lives in. NULL: not checked. */
	jitmap_stack_code_fn code_at;
	void *code_ctx;
	/* A field added here: name it in JITMAP__OPTS_VALID in model/stack.c. */
} jitmap_stacker_opts;

/* A stacker for the threads of process `p` (its JIT code; not owned), reading memory through
 * `memory` (copied; its ctx must outlive the stacker), on `arch`. NULL with errno set (EINVAL,
 * ENOTSUP for an architecture the unwinder does not know, ENOMEM). */
JITMAP_API jitmap_stacker *jitmap_stacker_new(jitmap_process *p, const jitmap_target *memory,
					      jitmap_arch arch, const jitmap_stacker_opts *opts);
JITMAP_API void jitmap_stacker_free(jitmap_stacker *st);

/* Called with each frame, innermost first (the frame and what it points to are valid during
 * the call only). A nonzero return stops the walk, and jitmap_stacker_walk returns it. */
typedef int (*jitmap_stack_frame_fn)(void *ctx, const jitmap_stack_frame *frame);

/* Walk the thread whose innermost frame has registers `regs` (PC and SP at least). Returns 0
 * when the walk reached the outermost frame (or a caller whose PC is 0); the last frame's
 * `stop` and `why` say how it ended otherwise, and the same negative errno is returned.
 *
 * Each step is first asked of the methods that prove it (JITMAP_UNWIND_PROVEN, a native
 * step by CFI); only when none does is a guess taken, and every frame from there on is
 * `guessed`. A proof holds only if what it found is a return address: after a call (the
 * unwinder's check), in executable code (`code_at`, when given), or a runtime's
 * continuation at a code range's first byte; a method whose answer is not one is asked no
 * more for that step, and the next one runs (docs/unwinding.md, "Proven steps and
 * guesses"). */
JITMAP_API int jitmap_stacker_walk(jitmap_stacker *st, const jitmap_frame_regs *regs,
				   jitmap_stack_frame_fn fn, void *ctx);

/* The JIT code of a frame at `pc` (`exact`: where the frame stands; else a return
 * address), as the walk looks it up: the call before a return address (pc - 1), or the code
 * range that starts at pc when no call left it there (a runtime's continuation:
 * jitmap_stack_frame.code_pc). 0 with *code filled and *code_pc (may be NULL) where it was
 * looked up; -ENOENT when no JIT code the process knows holds it; -EINVAL. */
JITMAP_API int jitmap_stacker_code_at(jitmap_stacker *st, uint64_t pc, bool exact,
				      jitmap_code_info *code, uint64_t *code_pc);

/* One frame as jitmap_stacker_walk would take it, for a debugger that walks frames itself
 * and asks jitmap about some of them (GDB's unwinder for code a perf map names): the frame
 * at `regs` (`exact`: frame 0, or one a signal interrupted; else its PC is a return address)
 * is described into *frame (its code and code_pc, record, method, cfa, stop, why, and
 * step_guessed; level 0 and guessed false: the walk's history is the caller's to keep), and
 * its caller's registers go to *caller, whether the caller's PC is exact to *caller_exact.
 * *frame and the strings it points at belong to the stacker and stay valid until its next
 * call. Returns the frame's `stop`: 0 (the caller is known, proven unless step_guessed;
 * `why` says then why nothing proved it), -ESRCH (the outermost frame), -ENOEXEC (the
 * caller's PC lies where no code can be: the stack ends here, why says where), another
 * negative errno when no step could be taken (why says why); -EINVAL for NULL arguments. */
JITMAP_API int jitmap_stacker_step(jitmap_stacker *st, const jitmap_frame_regs *regs, bool exact,
				   const jitmap_stack_frame **frame, jitmap_frame_regs *caller,
				   bool *caller_exact);

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_STACK_H */
