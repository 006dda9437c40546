/* test_stack: jitmap_stacker over a fake thread: the native callback's frames and the ABI
 * applied to its registers, the frame pointer where it knows nothing, how a walk ends
 * (outermost, PC 0, a failed step, the frame limit, the caller's stop, a stack word that
 * cannot be read: stack_unread), and the options. JIT frames are checked end to end with real JIT
 * programs (tests/stack/test_jitmap_stack.sh). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "jitmap/stack.h"

#define STACK UINT64_C(0x7ffd00000000)
#define NATIVE_PC UINT64_C(0x401000)   /* code the fake native unwinder knows */
#define FP_PC UINT64_C(0x500000)       /* code it does not know: the frame pointer */

static uint64_t stack[64];

static int read_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	(void)ctx;
	if (addr < STACK || addr - STACK > sizeof(stack) || len > sizeof(stack) - (addr - STACK)) {
		snprintf(why, why_len, "not in the fake stack");
		return -EFAULT;
	}
	memcpy(buf, (const uint8_t *)stack + (addr - STACK), len);
	return 0;
}

static const jitmap_target memory = {NULL, NULL, read_mem};

/* The native unwinder: each frame at NATIVE_PC + k returns to what `callers[k]` says. */
struct native {
	unsigned calls;
	uint64_t callers[8]; /* the caller's PC; 0 ends the stack; 1: -ESRCH; 2: -EIO */
	bool saw_exact[8];
};

static int native_step(void *ctx, const jitmap_frame_regs *regs, bool exact,
		       jitmap_unwind_result *out, bool *caller_exact, char *why, size_t why_len)
{
	struct native *n = ctx;
	if (regs->pc < NATIVE_PC || regs->pc >= NATIVE_PC + 8)
		return -ENOENT;
	const unsigned k = (unsigned)(regs->pc - NATIVE_PC);
	n->calls++;
	n->saw_exact[k] = exact;
	if (n->callers[k] == 1)
		return -ESRCH;
	if (n->callers[k] == 2) {
		snprintf(why, why_len, "native: no CFI here");
		return -EIO;
	}
	memset(out, 0, sizeof(*out));
	out->caller.pc = n->callers[k];
	jitmap_frame_reg_set(&out->caller, 7, regs->reg[7] + 32);
	jitmap_frame_reg_set(&out->caller, 6, regs->reg[6]);
	out->cfa = regs->reg[7] + 32;
	*caller_exact = k == 1; /* frame 1 is a signal trampoline */
	return 0;
}

struct seen {
	unsigned n;
	jitmap_stack_frame f[16];
	char why[16][256];
	char guess[16][256];
	unsigned stop_after; /* return 1 at this frame (0: never) */
};

static int on_frame(void *ctx, const jitmap_stack_frame *f)
{
	struct seen *s = ctx;
	if (s->n < 16) {
		s->f[s->n] = *f;
		snprintf(s->why[s->n], sizeof(s->why[0]), "%s", f->why);
		snprintf(s->guess[s->n], sizeof(s->guess[0]), "%s", f->guess ? f->guess : "(null)");
	}
	s->n++;
	return s->stop_after && s->n == s->stop_after;
}

static jitmap_process *empty_process(void)
{
	jitmap_process *p = jitmap_process_new(&memory, NULL);
	assert_non_null(p);
	assert_int_equal(jitmap_process_scan_begin(p), 0);
	assert_int_equal(jitmap_process_scan_end(p), 0);
	return p;
}

static jitmap_frame_regs start(uint64_t pc, uint64_t sp, uint64_t fp)
{
	jitmap_frame_regs r;
	memset(&r, 0, sizeof(r));
	r.pc = pc;
	jitmap_frame_reg_set(&r, 7, sp);
	jitmap_frame_reg_set(&r, 6, fp);
	return r;
}

/* Native frames, a signal frame's exact caller, then the frame-pointer chain through code the
 * native unwinder does not know, to a frame where neither can go on. */
static void test_native_then_frame_pointer(void **state)
{
	(void)state;
	jitmap_process *p = empty_process();
	struct native n = {.callers = {NATIVE_PC + 1, NATIVE_PC + 2, FP_PC}};
	JITMAP_OPTS(const jitmap_stacker_opts, opts, .native_step = native_step, .native_ctx = &n);
	jitmap_stacker *st = jitmap_stacker_new(p, &memory, JITMAP_ARCH_X86_64, &opts);
	assert_non_null(st);
	/* The frame-pointer frame: rbp points at [saved rbp = 0][return address FP_PC + 16]. */
	memset(stack, 0, sizeof(stack));
	const uint64_t fp = STACK + 0x100;
	stack[0x100 / 8 + 1] = FP_PC + 16;
	struct seen s = {0};
	const jitmap_frame_regs r = start(NATIVE_PC, STACK + 0x20, fp);
	const int rc = jitmap_stacker_walk(st, &r, on_frame, &s);
	assert_true(rc < 0 && rc != -ESRCH);
	assert_int_equal(s.n, 5);
	assert_true(s.f[0].exact && !s.f[1].exact && s.f[2].exact && !s.f[3].exact);
	assert_true(n.saw_exact[0] && !n.saw_exact[1] && n.saw_exact[2]);
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(s.f[i].level, i);
		assert_int_equal(s.f[i].pc, NATIVE_PC + i);
		assert_int_equal(s.f[i].method, JITMAP_UNWIND_NATIVE);
		assert_int_equal(s.f[i].stop, 0);
		assert_false(s.f[i].jit);
		assert_null(s.f[i].record);
	}
	assert_int_equal(s.f[1].cfa, STACK + 0x20 + 2 * 32);
	/* Frame 3: the frame pointer; frame 4 (rbp 0) ends the walk with the reason. */
	assert_int_equal(s.f[3].pc, FP_PC);
	assert_int_equal(s.f[3].method, JITMAP_UNWIND_FRAME_POINTER);
	assert_int_equal(s.f[3].stop, 0);
	assert_int_equal(s.f[3].cfa, fp + 16);
	assert_int_equal(s.f[4].pc, FP_PC + 16);
	assert_false(s.f[4].exact);
	assert_int_equal(s.f[4].stop, rc);
	assert_non_null(strstr(s.why[4], "frame-pointer"));
	assert_false(s.f[4].stack_unread); /* rbp 0: the chain's end, no word unread */
	jitmap_stacker_free(st);
	jitmap_process_free(p);
}

/* How a walk ends: the native unwinder's outermost frame, its failure (with its reason, and
 * the frame pointer's), the frame limit, the caller stopping it. */
static void test_endings(void **state)
{
	(void)state;
	jitmap_process *p = empty_process();
	memset(stack, 0, sizeof(stack));
	struct native n = {.callers = {NATIVE_PC + 1, 1}};
	JITMAP_OPTS(jitmap_stacker_opts, opts, .native_step = native_step, .native_ctx = &n);
	jitmap_stacker *st = jitmap_stacker_new(p, &memory, JITMAP_ARCH_X86_64, &opts);
	const jitmap_frame_regs r = start(NATIVE_PC, STACK, STACK + 0x10);
	struct seen s = {0};
	assert_int_equal(jitmap_stacker_walk(st, &r, on_frame, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.f[1].stop, -ESRCH);
	assert_int_equal(s.f[1].method, JITMAP_UNWIND_NATIVE);
	jitmap_stacker_free(st);

	/* A failed native step ends the walk with its reason. */
	n = (struct native){.callers = {2}};
	st = jitmap_stacker_new(p, &memory, JITMAP_ARCH_X86_64, &opts);
	s = (struct seen){0};
	assert_int_equal(jitmap_stacker_walk(st, &r, on_frame, &s), -EIO);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.f[0].stop, -EIO);
	assert_string_equal(s.why[0], "native: no CFI here");
	assert_false(s.f[0].stack_unread);
	jitmap_stacker_free(st);

	/* A loop the unwinder cannot see (each frame returns to the first): the frame limit. */
	n = (struct native){.callers = {NATIVE_PC}};
	opts.max_frames = 5;
	st = jitmap_stacker_new(p, &memory, JITMAP_ARCH_X86_64, &opts);
	s = (struct seen){0};
	assert_int_equal(jitmap_stacker_walk(st, &r, on_frame, &s), -E2BIG);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.f[4].stop, -E2BIG);
	assert_string_equal(s.why[4], "stopped after 5 frames (the limit)");
	assert_false(s.f[4].stack_unread);
	/* The caller stops it: its value comes back. */
	s = (struct seen){.stop_after = 2};
	assert_int_equal(jitmap_stacker_walk(st, &r, on_frame, &s), 1);
	assert_int_equal(s.n, 2);
	jitmap_stacker_free(st);

	/* No native unwinder, no frame pointer to follow: the frame pointer's reason. */
	memset(&opts, 0, sizeof(opts));
	opts.sz = sizeof(opts);
	st = jitmap_stacker_new(p, &memory, JITMAP_ARCH_X86_64, &opts);
	s = (struct seen){0};
	const jitmap_frame_regs wild = start(FP_PC, STACK, 0x10);
	const int rc = jitmap_stacker_walk(st, &wild, on_frame, &s);
	assert_true(rc < 0 && rc != -ESRCH);
	assert_int_equal(s.n, 1);
	assert_non_null(strstr(s.why[0], "frame-pointer"));
	assert_false(s.f[0].stack_unread); /* rbp below SP: declined, no word unread */

	/* A stack whose copy ends inside the frame record (a core's, or --stack-bytes'): the
	 * walk ends with the status, and the step before it was not. */
	memset(stack, 0, sizeof(stack));
	const uint64_t hi = STACK + sizeof(stack);
	stack[0x10 / 8] = hi - 8; /* frame 0's record: rbp -> the last word of the copy */
	stack[0x10 / 8 + 1] = FP_PC + 32;
	s = (struct seen){0};
	const jitmap_frame_regs cut = start(FP_PC, STACK, STACK + 0x10);
	assert_int_equal(jitmap_stacker_walk(st, &cut, on_frame, &s), -EFAULT);
	assert_int_equal(s.n, 2);
	assert_false(s.f[0].stack_unread);
	assert_int_equal(s.f[1].stop, -EFAULT);
	assert_true(s.f[1].stack_unread);
	jitmap_stacker_free(st);
	jitmap_process_free(p);
}

/* A native unwinder that answers as elfutils' libdwfl does on x86-64 (backends/x86_64_cfi.c
 * marks DWARF 0, rax, "same value" under a %rbx comment, where 3 was meant): the caller gets
 * this frame's rax, and no rbx unless a CFI rule restores it. r12 it restores from a "slot"
 * (0x1200 + k); r13 it leaves alone. Frame k says whether CFI rows covered its PC, and
 * whether it was a signal trampoline (then the caller's registers come from the saved
 * context: rax there is 0x5151). */
static const struct {
	bool by_cfi, signal;
} abi_frames[] = {{true, false}, {false, false}, {true, true}};

static int libdwfl_like_step(void *ctx, const jitmap_frame_regs *regs, bool exact,
			     jitmap_unwind_result *out, bool *caller_exact, char *why,
			     size_t why_len)
{
	(void)ctx;
	(void)exact;
	(void)why;
	(void)why_len;
	const unsigned k = (unsigned)(regs->pc - NATIVE_PC);
	if (regs->pc < NATIVE_PC || k >= sizeof(abi_frames) / sizeof(abi_frames[0]))
		return -ESRCH;
	memset(out, 0, sizeof(*out));
	out->caller.pc = NATIVE_PC + k + 1;
	jitmap_frame_reg_set(&out->caller, 7, regs->reg[7] + 32);
	jitmap_frame_reg_set(&out->caller, 6, regs->reg[6]);
	if (abi_frames[k].signal)
		jitmap_frame_reg_set(&out->caller, 0, 0x5151);
	else if (jitmap_frame_reg_known(regs, 0))
		jitmap_frame_reg_set(&out->caller, 0, regs->reg[0]); /* "same value": wrong */
	jitmap_frame_reg_set(&out->caller, 12, 0x1200 + k);
	/* rdx read back from this frame's save slot (an anyregcc trampoline's CFI), in every
	 * frame: said so, so it is kept although caller-saved; rsi carried, said nothing of. */
	jitmap_frame_reg_set(&out->caller, 1, 0x0100 + k);
	out->restored[0] |= UINT64_C(1) << 1;
	jitmap_frame_reg_set(&out->caller, 4, 0x0400 + k);
	out->cfa = regs->reg[7] + 32;
	out->method = abi_frames[k].by_cfi ? JITMAP_UNWIND_CFI : JITMAP_UNWIND_NONE;
	*caller_exact = abi_frames[k].signal;
	return 0;
}

static void expect_reg(const jitmap_stack_frame *f, unsigned n, bool known, uint64_t v)
{
	if (jitmap_frame_reg_known(f->regs, n) != known)
		fail_msg("frame %u: register %u should be %s", f->level, n,
			 known ? "known" : "unknown");
	if (known && f->regs->reg[n] != v)
		fail_msg("frame %u: register %u is 0x%llx, not 0x%llx", f->level, n,
			 (unsigned long long)f->regs->reg[n], (unsigned long long)v);
}

struct kept {
	unsigned n;
	jitmap_frame_regs regs[8];
	jitmap_stack_frame f[8];
};

static int keep_frame(void *ctx, const jitmap_stack_frame *f)
{
	struct kept *k = ctx;
	if (k->n < 8) {
		k->regs[k->n] = *f->regs;
		k->f[k->n] = *f;
		k->f[k->n].regs = &k->regs[k->n];
		k->n++;
	}
	return 0;
}

/* The ABI applied to native steps: a caller-saved register is never the caller's (but from
 * a signal frame's saved context), and a callee-saved one the native unwinder lost is
 * carried where it unwound by CFI rows for the PC, not where it did not. */
static void test_native_registers(void **state)
{
	(void)state;
	jitmap_process *p = empty_process();
	JITMAP_OPTS(const jitmap_stacker_opts, opts, .native_step = libdwfl_like_step);
	jitmap_stacker *st = jitmap_stacker_new(p, &memory, JITMAP_ARCH_X86_64, &opts);
	jitmap_frame_regs r = start(NATIVE_PC, STACK, STACK + 0x100);
	jitmap_frame_reg_set(&r, 0, (uint64_t)-516); /* a sleeping syscall's return */
	jitmap_frame_reg_set(&r, 3, 0x3030);
	jitmap_frame_reg_set(&r, 12, 0x1212);
	jitmap_frame_reg_set(&r, 13, 0x1313);
	struct kept k = {0};
	assert_int_equal(jitmap_stacker_walk(st, &r, keep_frame, &k), 0);
	assert_int_equal(k.n, 4);
	/* Frame 1, after a step by CFI: rax dropped, rbx and r13 carried, r12 restored, rdx read
	 * back from a save slot kept, rsi (caller-saved, not said to be restored) dropped. */
	expect_reg(&k.f[1], 0, false, 0);
	expect_reg(&k.f[1], 1, true, 0x0100);
	expect_reg(&k.f[1], 4, false, 0);
	expect_reg(&k.f[2], 1, true, 0x0101);
	expect_reg(&k.f[1], 3, true, 0x3030);
	expect_reg(&k.f[1], 12, true, 0x1200);
	expect_reg(&k.f[1], 13, true, 0x1313);
	assert_int_equal(k.f[1].method, JITMAP_UNWIND_NATIVE);
	/* Frame 2, after a step without CFI: what the unwinder did not restore is unknown. */
	expect_reg(&k.f[2], 0, false, 0);
	expect_reg(&k.f[2], 3, false, 0);
	expect_reg(&k.f[2], 12, true, 0x1201);
	expect_reg(&k.f[2], 13, false, 0);
	/* Frame 3, the interrupted code above a signal trampoline: its rax from the context. */
	assert_true(k.f[3].exact);
	expect_reg(&k.f[3], 0, true, 0x5151);
	expect_reg(&k.f[3], 3, false, 0);
	expect_reg(&k.f[3], 12, true, 0x1202);
	expect_reg(&k.f[3], 6, true, STACK + 0x100);
	expect_reg(&k.f[3], 7, true, STACK + 96);
	jitmap_stacker_free(st);
	jitmap_process_free(p);
}

/* Proven steps and guesses: a native step by CFI rows proves its caller, one without does
 * not, and neither does the frame-pointer chain through code whose start is unknown; a frame
 * past a guess stays a guess whatever proves the steps after it, and says which step it was. */
static void test_guesses(void **state)
{
	(void)state;
	jitmap_process *p = empty_process();
	JITMAP_OPTS(const jitmap_stacker_opts, opts, .native_step = libdwfl_like_step);
	jitmap_stacker *st = jitmap_stacker_new(p, &memory, JITMAP_ARCH_X86_64, &opts);
	const jitmap_frame_regs r = start(NATIVE_PC, STACK, STACK + 0x100);
	struct kept k = {0};
	assert_int_equal(jitmap_stacker_walk(st, &r, keep_frame, &k), 0);
	assert_int_equal(k.n, 4);
	/* Frame 0 -> 1 by CFI: proven. Frame 1 -> 2 without: frames 2 and 3 are guesses, 3
	 * although its own step (2 -> 3, CFI) is proven. */
	assert_false(k.f[0].guessed);
	assert_false(k.f[0].step_guessed);
	assert_false(k.f[1].guessed);
	assert_true(k.f[1].step_guessed);
	assert_true(k.f[2].guessed);
	assert_false(k.f[2].step_guessed);
	assert_true(k.f[3].guessed);
	jitmap_stacker_free(st);

	/* The frame-pointer chain through code nothing names: a guess, said so. */
	st = jitmap_stacker_new(p, &memory, JITMAP_ARCH_X86_64, NULL);
	memset(stack, 0, sizeof(stack));
	const uint64_t fp = STACK + 0x100;
	stack[0x100 / 8 + 1] = FP_PC + 16;
	struct seen s = {0};
	const jitmap_frame_regs w = start(FP_PC, STACK + 0x20, fp);
	assert_true(jitmap_stacker_walk(st, &w, on_frame, &s) < 0);
	assert_int_equal(s.n, 2);
	assert_true(s.f[0].step_guessed);
	assert_true(s.f[1].guessed);
	assert_int_equal(s.f[1].pc, FP_PC + 16);
	assert_string_equal(s.guess[0], "");
	assert_non_null(strstr(s.guess[1], "the caller of the frame at 0x500000 was found by a "
				       "guess"));
	assert_non_null(strstr(s.guess[1], "the function's start is unknown"));
	jitmap_stacker_free(st);
	jitmap_process_free(p);
}

/* Where no code can be: a caller whose PC the target says is not code ends the walk at the
 * frame before, with the reason; one it cannot tell about (negative) does not. */
struct code_map {
	uint64_t lo, hi; /* the only code */
	int unknown;     /* answer this (< 0) for everything else */
	unsigned asked;
};

static int code_at(void *ctx, uint64_t pc, char *why, size_t why_len)
{
	struct code_map *c = ctx;
	c->asked++;
	if (pc >= c->lo && pc < c->hi)
		return 1;
	if (c->unknown)
		return c->unknown;
	if (why)
		snprintf(why, why_len, "0x%llx is in no mapping", (unsigned long long)pc);
	return 0;
}

static void test_no_code(void **state)
{
	(void)state;
	jitmap_process *p = empty_process();
	/* Frame 0 -> NATIVE_PC + 1 -> 0x7777 (stack junk, where no code is). */
	struct native n = {.callers = {NATIVE_PC + 1, 0x7777}};
	struct code_map c = {NATIVE_PC, NATIVE_PC + 8, 0, 0};
	JITMAP_OPTS(jitmap_stacker_opts, opts, .native_step = native_step, .native_ctx = &n,
		    .code_at = code_at, .code_ctx = &c);
	jitmap_stacker *st = jitmap_stacker_new(p, &memory, JITMAP_ARCH_X86_64, &opts);
	const jitmap_frame_regs r = start(NATIVE_PC, STACK, STACK + 0x10);
	struct seen s = {0};
	assert_int_equal(jitmap_stacker_walk(st, &r, on_frame, &s), -ENOEXEC);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.f[1].stop, -ENOEXEC);
	assert_non_null(strstr(s.why[1], "the caller's PC 0x7777 lies where no code can be"));
	assert_non_null(strstr(s.why[1], "0x7777 is in no mapping"));
	assert_true(c.asked > 0);
	jitmap_stacker_free(st);
	/* Unknown: the walk goes on (to the native unwinder's end of the stack). */
	n = (struct native){.callers = {NATIVE_PC + 1, NATIVE_PC + 2, 1}};
	c = (struct code_map){0x1000, 0x2000, -ENOENT, 0};
	st = jitmap_stacker_new(p, &memory, JITMAP_ARCH_X86_64, &opts);
	s = (struct seen){0};
	assert_int_equal(jitmap_stacker_walk(st, &r, on_frame, &s), 0);
	assert_int_equal(s.n, 3);
	jitmap_stacker_free(st);
	jitmap_process_free(p);
}

static void test_arguments(void **state)
{
	(void)state;
	jitmap_process *p = empty_process();
	errno = 0;
	assert_null(jitmap_stacker_new(NULL, &memory, JITMAP_ARCH_X86_64, NULL));
	assert_int_equal(errno, EINVAL);
	const jitmap_target none = {0};
	assert_null(jitmap_stacker_new(p, &none, JITMAP_ARCH_X86_64, NULL));
	assert_null(jitmap_stacker_new(p, &memory, JITMAP_ARCH_UNKNOWN, NULL));
	assert_int_equal(errno, ENOTSUP);
	struct {
		jitmap_stacker_opts o;
		uint64_t future;
	} big;
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.future = 1;
	assert_null(jitmap_stacker_new(p, &memory, JITMAP_ARCH_X86_64, &big.o));
	assert_int_equal(errno, EINVAL);
	jitmap_stacker *st = jitmap_stacker_new(p, &memory, JITMAP_ARCH_X86_64, NULL);
	assert_non_null(st);
	const jitmap_frame_regs r = start(FP_PC, STACK, 0);
	assert_int_equal(jitmap_stacker_walk(st, NULL, on_frame, NULL), -EINVAL);
	assert_int_equal(jitmap_stacker_walk(st, &r, NULL, NULL), -EINVAL);
	jitmap_stacker_free(st);
	jitmap_stacker_free(NULL);
	jitmap_process_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_native_then_frame_pointer),
		cmocka_unit_test(test_endings),
		cmocka_unit_test(test_native_registers),
		cmocka_unit_test(test_guesses),
		cmocka_unit_test(test_no_code),
		cmocka_unit_test(test_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
