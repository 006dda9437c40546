/* stack.c: a thread's whole stack, JIT frames through the process model and jitmap's
 * unwinder, native frames through the caller's callback (see include/jitmap/stack.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitmap/arch.h"
#include "jitmap/perfmap.h"
#include "jitmap/stack.h"
#include "internal.h"

#define DEFAULT_MAX_FRAMES 4096

struct jitmap_stacker {
	jitmap_process *proc;
	jitmap_target memory;
	jitmap_arch arch;
	jitmap_byte_order order;
	unsigned max_frames;
	jitmap_stack_native_fn native;
	void *native_ctx;
	jitmap_stack_code_fn code_at;
	void *code_ctx;
	/* The rule of the step proven_step took last (jitmap_stack_frame.rule) */
	struct jitmap__rule_out rule;
	/* jitmap_stacker_step's frame, valid until its next call */
	jitmap_stack_frame step_frame;
	jitmap_frame_regs step_regs;
	char step_why[768];
};

jitmap_stacker *jitmap_stacker_new(jitmap_process *p, const jitmap_target *memory,
				   jitmap_arch arch, const jitmap_stacker_opts *opts)
{
	if (!p || !memory || !memory->read_mem) {
		errno = EINVAL;
		return NULL;
	}
	jitmap_stacker_opts o = {0};
	if (opts) {
		if (!JITMAP__OPTS_VALID(opts, code_ctx)) {
			errno = EINVAL;
			return NULL;
		}
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	}
	if (jitmap_unwind_arch_regs(arch, NULL, NULL, NULL)) {
		errno = ENOTSUP;
		return NULL;
	}
	jitmap_stacker *st = calloc(1, sizeof(*st));
	if (!st) {
		errno = ENOMEM;
		return NULL;
	}
	st->proc = p;
	st->memory = *memory;
	st->arch = arch;
	st->order = o.order;
	st->max_frames = o.max_frames ? o.max_frames : DEFAULT_MAX_FRAMES;
	st->native = o.native_step;
	st->native_ctx = o.native_ctx;
	st->code_at = o.code_at;
	st->code_ctx = o.code_ctx;
	return st;
}

void jitmap_stacker_free(jitmap_stacker *st)
{
	free(st);
}

/* The first record at exactly `pc`, in every stackmap the process indexes. */
static void record_at(jitmap_stacker *st, uint64_t pc, jitmap_stack_frame *f)
{
	jitmap_hit hit;
	if (jitmap_index_lookup(jitmap_process_index(st->proc), pc, &hit, 1) >= 1) {
		f->stackmap = hit.stackmap;
		f->record = hit.record;
	}
}

/* The ABI applied to a native step's answer (stack.h, jitmap_stack_native_fn): caller-saved
 * registers are not the caller's, except where a signal frame's saved context restored them
 * (the caller's PC is exact); callee-saved ones the native unwinder left unknown are this
 * frame's when it unwound by CFI rows for this PC (no rule: "same value"). */
static void native_registers(const jitmap_stacker *st, const jitmap_frame_regs *regs,
			     jitmap_unwind_result *res, bool caller_exact, bool by_cfi)
{
	unsigned sp;
	if (jitmap_unwind_arch_regs(st->arch, &sp, NULL, NULL))
		return;
	for (unsigned r = 0; r < JITMAP_UNWIND_MAX_REGS; r++) {
		if (r == sp)
			continue;
		if (!jitmap_unwind_callee_saved(st->arch, r)) {
			const bool restored = (res->restored[r / 64] >> (r % 64)) & 1;
			if (!caller_exact && !restored)
				res->caller.known[r / 64] &= ~(UINT64_C(1) << (r % 64));
		} else if (by_cfi && !jitmap_frame_reg_known(&res->caller, r) &&
			   jitmap_frame_reg_known(regs, r)) {
			jitmap_frame_reg_set(&res->caller, r, regs->reg[r]);
		}
	}
}

/* Append "; TEXT" (or TEXT) to the reasons in `why`. */
static void add_why(char *why, size_t why_len, const char *text)
{
	const size_t n = strlen(why);
	if (why_len > n && text[0])
		snprintf(why + n, why_len - n, "%s%s", n ? "; " : "", text);
}

/* -- What a proof found --
 *
 * The unwinder checks that a proven method's return address follows a call (include/
 * jitmap/unwind.h, JITMAP_UNWIND_UNCHECKED_RETURN); what only the process tells is checked
 * here: that the caller's PC lies in executable code (code_at), and the one exception to
 * "after a call", a runtime's continuation (continuation(), below). A proven answer that
 * fails either is refused and the step is asked again without that method, so the next
 * rule runs: a perf map's line may be a block entered by a jump (YJIT's are), and then the
 * code walk's "return address" is whatever the block's stub left at its SP. */

static bool continuation(jitmap_stacker *st, uint64_t pc, jitmap_code_info *code,
			 bool before_is_code);
static int code_may_be_at(jitmap_stacker *st, uint64_t pc, bool exact, char *why,
			  size_t why_len);

#define ALL_METHODS (JITMAP_UNWIND_MASK(JITMAP_UNWIND_CFI) |                                \
		     JITMAP_UNWIND_MASK(JITMAP_UNWIND_STACKMAP) |                           \
		     JITMAP_UNWIND_MASK(JITMAP_UNWIND_CODE) |                               \
		     JITMAP_UNWIND_MASK(JITMAP_UNWIND_FRAME_POINTER))

/* Whether return address `pc` is a runtime's continuation: a code range the process knows
 * starts there, and no call left it (continuation()). */
static bool at_continuation(jitmap_stacker *st, uint64_t pc)
{
	jitmap_code_info code, before;
	return pc && continuation(st, pc, &code,
				  jitmap_process_code_at(st->proc, pc - 1, &before) == 0);
}

/* The reasons of a failed step, and whether a word of the stack could not be read (the
 * unwinder's status that goes with its reasons: jitmap_stack_frame.stack_unread). */
struct why {
	char *text;
	size_t len;
	bool stack_unread;
};

/* Append the reasons `text` (with whether they include an unread stack word) to `why`. */
static void add_reasons(struct why *why, const char *text, bool stack_unread)
{
	add_why(why->text, why->len, text);
	why->stack_unread |= text[0] && stack_unread;
}

/* jitmap_unwind_step under JITMAP_UNWIND_PROVEN with the methods of `code` (none: all), each
 * answer checked: its caller's PC in code (and after a call: the unwinder's check). Where no
 * method's checked answer holds, once more with the unwinder's check left to this one, which
 * accepts only a runtime's continuation. Returns 0 (a proof), -ESRCH (the outermost frame),
 * or the unwinder's failure, with the reasons added to `why`; *left (may be NULL) gets the
 * methods whose answers were not refused here (a guess may still try them: the unwinder
 * declines what fails its own check). code->methods is restored. */
static int proven_step(jitmap_stacker *st, jitmap_unwind_code *code,
		       const jitmap_stack_frame *f, jitmap_unwind_result *res, uint32_t *left,
		       struct why *why)
{
	bool unread = false;
	const uint32_t methods = code->methods;
	const uint32_t asked = methods & ALL_METHODS ? methods & ALL_METHODS : ALL_METHODS;
	uint32_t mask = asked;
	char proof[512] = "", refused[384] = "";
	int rc = -ENOENT;
	while (mask) {
		code->methods = mask | JITMAP_UNWIND_PROVEN;
		memset(res, 0, sizeof(*res));
		rc = jitmap__unwind_step(code, f->regs, &st->memory, res, proof, sizeof(proof),
					 &unread, &st->rule);
		if (rc)
			break;
		char where[256];
		if (!res->caller.pc || code_may_be_at(st, res->caller.pc, false, where, sizeof(where)))
			goto proven;
		/* Refused: the method's answer is no caller (a word of data, a saved register). */
		const size_t n = strlen(refused);
		snprintf(refused + n, sizeof(refused) - n, "%s%s: %s", n ? "; " : "",
			 jitmap_unwind_method_name(res->method), where);
		mask &= ~JITMAP_UNWIND_MASK(res->method);
		rc = -ENOENT;
	}
	if (rc == -ESRCH)
		goto proven;
	/* A runtime's continuation: no call left it, so the unwinder declined it (and its
	 * answer, held by the code ranges, is no rule of the code's). */
	st->rule.stated = false;
	for (uint32_t again = mask; again;) {
		code->methods = again | JITMAP_UNWIND_PROVEN | JITMAP_UNWIND_UNCHECKED_RETURN;
		jitmap_unwind_result r;
		char w[8];
		memset(&r, 0, sizeof(r));
		if (jitmap_unwind_step(code, f->regs, &st->memory, &r, w, sizeof(w)))
			break;
		char where[256];
		if (at_continuation(st, r.caller.pc) &&
		    code_may_be_at(st, r.caller.pc, true, where, sizeof(where))) {
			*res = r;
			rc = 0;
			goto proven;
		}
		again &= ~JITMAP_UNWIND_MASK(r.method);
	}
	memset(res, 0, sizeof(*res));
	code->methods = methods;
	if (left)
		*left = mask;
	add_reasons(why, proof, unread);
	add_why(why->text, why->len, refused);
	return rc;
proven:
	code->methods = methods;
	if (left)
		*left = mask;
	return rc;
}

/* A proof first (proven_step); when none holds, once more allowing a guess (*guess set, and
 * `why` keeps why no proof was found), with the methods whose answers were not refused. */
static int unwind_step(jitmap_stacker *st, jitmap_unwind_code *code, const jitmap_stack_frame *f,
		       jitmap_unwind_result *res, bool *guess, struct why *why)
{
	const uint32_t methods = code->methods;
	char proof_text[768] = "";
	struct why proof = {proof_text, sizeof(proof_text), false};
	uint32_t left = 0;
	int rc = proven_step(st, code, f, res, &left, &proof);
	if (rc == 0 || rc == -ESRCH)
		return rc;
	if (!left) {
		add_reasons(why, proof.text, proof.stack_unread);
		return rc;
	}
	code->methods = left;
	char guess_why[512];
	bool unread = false;
	memset(res, 0, sizeof(*res));
	rc = jitmap__unwind_step(code, f->regs, &st->memory, res, guess_why, sizeof(guess_why),
				 &unread, NULL);
	code->methods = methods;
	if (rc == 0) {
		*guess = true;
		add_reasons(why, proof.text, proof.stack_unread);
		return 0;
	}
	/* Neither: the guess's reasons say what failed (a frame pointer that is not one). */
	memset(res, 0, sizeof(*res));
	add_reasons(why, guess_why, unread);
	return rc;
}

/* One step from frame `f`. *guess says whether it was a guess; `why` says why it failed or,
 * for a guess, why no method proved it. */
static int step(jitmap_stacker *st, const jitmap_stack_frame *f, jitmap_unwind_result *res,
		bool *caller_exact, bool *guess, struct why *why)
{
	jitmap_unwind_code code = {.arch = st->arch, .is_innermost = f->exact, .order = st->order};
	*caller_exact = false;
	*guess = false;
	/* Code a perf map or jitdump names (no image): the native unwinder first, since a
	 * module it knows by CFI is the truth where a stale or wrong map line covers it; then
	 * the code object's own instructions from its start, which these maps give (CPython's
	 * trampolines keep no frame pointer; V8 sets its own after a few instructions; BEAM
	 * leaves its frame before a tail call's jump); then, a guess, the frame-pointer chain
	 * without the range. */
	const bool named_only = f->jit && !f->code.image;
	if (f->jit && !named_only) {
		/* The image's CFI, read once by the process model (NULL: the step tries the
		 * stackmap and the frame pointer). An image of another architecture than the
		 * thread's has none that applies. */
		if (jitmap_image_arch(f->code.image) == st->arch)
			code.cfi = jitmap_process_code_cfi(st->proc, &f->code, NULL);
		code.sm = f->code.stackmap;
		code.func_lo = f->code.function_lo;
		code.func_hi = f->code.function_hi;
		return unwind_step(st, &code, f, res, guess, why);
	}
	if (named_only) {
		char native_why[256] = "";
		if (st->native) {
			res->method = JITMAP_UNWIND_NONE;
			const int rc = st->native(st->native_ctx, f->regs, f->exact, res,
						  caller_exact, native_why, sizeof(native_why));
			if (rc == 0 && res->method == JITMAP_UNWIND_CFI) {
				native_registers(st, f->regs, res, *caller_exact, true);
				res->method = JITMAP_UNWIND_NATIVE;
				return 0;
			}
			memset(res, 0, sizeof(*res));
			*caller_exact = false;
		}
		code.func_lo = f->code.function_lo;
		code.func_hi = f->code.function_hi;
		/* A jitdump's unwinding record for the code (CPython's -X perf_jit writes one for
		 * each trampoline, V8's --perf-prof-unwinding-info for optimized code). */
		const jitmap_cfi *cfi;
		jitmap_perfmap *pm = jitmap_process_perfmap(st->proc);
		if (pm && jitmap_perfmap_cfi(pm, f->code_pc, &cfi) == 0)
			code.cfi = cfi;
		/* Proven only if what it found holds (proven_step): a map's line may be a block,
		 * entered by a jump, where the code walk finds no return address. */
		char proof_text[768] = "";
		struct why proof = {proof_text, sizeof(proof_text), false};
		code.methods = 0;
		int rc = proven_step(st, &code, f, res, NULL, &proof);
		if (rc == 0 || rc == -ESRCH)
			return rc;
		code.cfi = NULL;
		code.func_lo = code.func_hi = 0;
		code.methods = JITMAP_UNWIND_MASK(JITMAP_UNWIND_FRAME_POINTER);
		memset(res, 0, sizeof(*res));
		rc = unwind_step(st, &code, f, res, guess, why);
		if (rc == 0 || rc == -ESRCH) {
			/* Why nothing proved it: the range's own reasons, not the startless
			 * chain's. */
			why->text[0] = 0;
			why->stack_unread = false;
			add_reasons(why, proof.text, proof.stack_unread);
		}
		return rc;
	}
	if (st->native) {
		res->method = JITMAP_UNWIND_NONE;
		const int rc = st->native(st->native_ctx, f->regs, f->exact, res, caller_exact,
					  why->text, why->len);
		if (rc != -ENOENT) {
			const bool by_cfi = res->method == JITMAP_UNWIND_CFI;
			if (rc == 0)
				native_registers(st, f->regs, res, *caller_exact, by_cfi);
			if (rc == 0 && !by_cfi && !*caller_exact) {
				/* libdwfl's own frame-pointer rule, or CFI of a file that may not be
				 * the one mapped: a guess (the callback may have said why). */
				*guess = true;
				if (!why->text[0])
					add_why(why->text, why->len, "native: no CFI of a module known "
						"to be the mapped file covers this PC");
			}
			if (rc == 0 || rc == -ESRCH)
				res->method = JITMAP_UNWIND_NATIVE;
			return rc;
		}
	}
	*caller_exact = false;
	code.methods = JITMAP_UNWIND_MASK(JITMAP_UNWIND_FRAME_POINTER);
	return unwind_step(st, &code, f, res, guess, why);
}

/* Whether return address `pc` is a runtime's continuation: the first byte of a code range
 * (BEAM pushes normal_exit/0's as every process's last frame, V8 its interpreter's re-entry
 * builtin's), where no call left it: the bytes before it end no call, or belong to no code at
 * all. Then the frame is that range's, looked up at `pc` (into *code), not at pc - 1, which
 * lies in the range before it (BEAM's CodeInfoPrologue) or in padding. */
static bool continuation(jitmap_stacker *st, uint64_t pc, jitmap_code_info *code,
			 bool before_is_code)
{
	jitmap_code_info here;
	if (jitmap_process_code_at(st->proc, pc, &here) || here.function_lo != pc)
		return false;
	/* A call's return (a noreturn call at a range's end), or bytes that prove nothing. */
	if (before_is_code && jitmap__follows_call(st->arch, &st->memory, pc) != 0)
		return false;
	*code = here;
	return true;
}

/* Whether code can be at a caller's PC (a return address: the call's byte before it, or
 * the address itself, which a trampoline may push at a code range's first byte). 0 when it
 * cannot, with the reason in `why`. */
static int code_may_be_at(jitmap_stacker *st, uint64_t pc, bool exact, char *why,
			  size_t why_len)
{
	if (!st->code_at)
		return 1;
	char where[256] = "";
	int rc = st->code_at(st->code_ctx, pc, where, sizeof(where));
	char w[8];
	if (rc == 0 && !exact && pc)
		rc = st->code_at(st->code_ctx, pc - 1, w, sizeof(w));
	if (rc != 0)
		return 1; /* code, or unknown */
	snprintf(why, why_len, "the caller's PC 0x%" PRIx64 " lies where no code can be (%s): the "
		 "stack ends here", pc, where[0] ? where : "not in an executable mapping");
	return 0;
}

int jitmap_stacker_code_at(jitmap_stacker *st, uint64_t pc, bool exact, jitmap_code_info *code,
			   uint64_t *code_pc)
{
	if (!st || !code)
		return -EINVAL;
	uint64_t at = exact || !pc ? pc : pc - 1;
	int rc = jitmap_process_code_at(st->proc, at, code);
	if (at != pc && continuation(st, pc, code, rc == 0)) {
		at = pc;
		rc = 0;
	}
	if (code_pc)
		*code_pc = at;
	return rc;
}

/* One frame of a walk: `f` described (its code, record and how its caller was found, from
 * level, regs, exact, guessed and guess), its caller in `res`, *caller_exact. Returns the
 * frame's stop (0: the walk goes on). `why` holds the reasons (f->why points at it). */
static int one_frame(jitmap_stacker *st, jitmap_stack_frame *f, jitmap_unwind_result *res,
		     bool *caller_exact, char *why, size_t why_len)
{
	const jitmap_frame_regs *regs = f->regs;
	f->jit = jitmap_stacker_code_at(st, regs->pc, f->exact, &f->code, &f->code_pc) == 0;
	record_at(st, regs->pc, f);
	memset(res, 0, sizeof(*res));
	bool step_guess = false;
	*caller_exact = false;
	st->rule.stated = false;
	why[0] = 0;
	struct why reasons = {why, why_len, false};
	int rc = step(st, f, res, caller_exact, &step_guess, &reasons);
	f->method = rc == 0 || rc == -ESRCH ? res->method : JITMAP_UNWIND_NONE;
	f->cfa = rc == 0 || rc == -ESRCH ? res->cfa : 0;
	if (rc == 0 && !res->caller.pc)
		rc = -ESRCH; /* a caller at PC 0: the end of the stack (a thread's start) */
	if (rc == 0 && !code_may_be_at(st, res->caller.pc, *caller_exact, why, why_len))
		rc = -ENOEXEC;
	if (rc == 0 && f->level + 1 >= st->max_frames) {
		rc = -E2BIG;
		snprintf(why, why_len, "stopped after %u frames (the limit)", st->max_frames);
	}
	f->stop = rc;
	f->step_guessed = rc == 0 && step_guess;
	f->why = rc || f->step_guessed ? why : "";
	/* The rule of a proof of jitmap's own unwinder (never a native unwinder's answer: its
	 * method is NATIVE, and proven_step was not asked). */
	f->rule = rc == 0 && !step_guess && st->rule.stated && res->method != JITMAP_UNWIND_NATIVE
		? &st->rule.rule : NULL;
	/* The step's own failure (the stops above say their own why). */
	f->stack_unread = rc && rc != -ESRCH && rc != -ENOEXEC && rc != -E2BIG &&
			  reasons.stack_unread;
	return rc;
}

int jitmap_stacker_walk(jitmap_stacker *st, const jitmap_frame_regs *start,
			jitmap_stack_frame_fn fn, void *ctx)
{
	if (!st || !start || !fn)
		return -EINVAL;
	jitmap_frame_regs regs = *start;
	bool exact = true, guessed = false;
	char why[768], guess[1024] = "";
	for (unsigned level = 0;; level++) {
		jitmap_stack_frame f = {.level = level, .pc = regs.pc, .exact = exact, .regs = &regs,
					.guessed = guessed, .guess = guess};
		jitmap_unwind_result res;
		bool caller_exact;
		const int rc = one_frame(st, &f, &res, &caller_exact, why, sizeof(why));
		const int r = fn(ctx, &f);
		if (r)
			return r;
		if (rc == -ESRCH)
			return 0;
		if (rc)
			return rc;
		if (f.step_guessed && !guessed) {
			guessed = true;
			/* By its PC: a front end numbers frames its own way (inlined ones too). */
			snprintf(guess, sizeof(guess), "the caller of the frame at 0x%" PRIx64 " was "
				 "found by a guess (%s)", f.pc, why[0] ? why : "no method proved the step");
		}
		regs = res.caller;
		exact = caller_exact;
	}
}

int jitmap_stacker_step(jitmap_stacker *st, const jitmap_frame_regs *regs, bool exact,
			const jitmap_stack_frame **frame, jitmap_frame_regs *caller,
			bool *caller_exact)
{
	if (!st || !regs || !frame || !caller || !caller_exact)
		return -EINVAL;
	st->step_regs = *regs;
	st->step_frame = (jitmap_stack_frame){.pc = regs->pc, .exact = exact,
					      .regs = &st->step_regs, .guess = ""};
	jitmap_unwind_result res;
	const int rc = one_frame(st, &st->step_frame, &res, caller_exact, st->step_why,
				 sizeof(st->step_why));
	*frame = &st->step_frame;
	*caller = res.caller;
	return rc;
}
