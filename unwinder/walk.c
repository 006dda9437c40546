/* walk.c: a function's frame at a PC, proven from its own instructions.
 *
 * Code a JIT writes without CFI and without a frame pointer (CPython's perf trampolines:
 * `endbr64; sub $8,%rsp; call *%rcx; add $8,%rsp; ret`; HotSpot's and V8's code, where the
 * frame pointer is set after a few instructions, or not at all) can still be unwound where
 * its start is known: every instruction from the start to the PC is decoded (Capstone,
 * arch/internal.h), and what each does to the stack pointer, the frame pointer and the
 * callee-saved registers is followed along every path the code can take, as a compiler's
 * data-flow pass would: the state at an instruction is the same on every path that reaches
 * it, or the part that differs is not known. LLDB's assembly profiler
 * (UnwindAssemblyInstEmulation) does the same for code without unwind tables, but follows
 * one path; a proof here needs them all.
 *
 * What this proves, and what it assumes: the function was entered at its start by a call
 * (the return address at SP, nothing else pushed), and control moves only as its
 * instructions say: direct branches within the function are followed, a branch out of it
 * ends that path, an indirect jump ends it too (its targets are not known: code reached only
 * from one is not reached here, and a PC there is declined). A branch into the middle of an
 * instruction, an instruction that cannot be decoded on the way, or a stack pointer changed
 * in a way not followed where the answer needs it: declined, with the reason.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Bytes of a function walked at most (16k instructions or so: V8's largest optimized
 * functions fit; a frame costs about a millisecond at that size). */
#define WALK_MAX (64u << 10)
/* Save slots followed per state (x86-64 has 7 callee-saved registers with rbp). */
#define MAX_SLOTS 8

/* -- The state at an instruction -- */

struct state {
	bool reached;
	bool sp_known, fp_known;
	int64_t sp_off, fp_off;  /* CFA - SP, CFA - FP */
	uint64_t written;        /* registers some path to here wrote (DWARF bits below 64) */
	unsigned nslots;
	struct {
		unsigned reg;
		int64_t off;     /* the caller's value is at CFA - off */
	} slot[MAX_SLOTS];
};

static bool slot_of(const struct state *s, unsigned reg, int64_t *off)
{
	for (unsigned k = 0; k < s->nslots; k++)
		if (s->slot[k].reg == reg) {
			*off = s->slot[k].off;
			return true;
		}
	return false;
}

static void drop_slot(struct state *s, unsigned reg)
{
	for (unsigned k = 0; k < s->nslots; k++)
		if (s->slot[k].reg == reg) {
			s->slot[k] = s->slot[--s->nslots];
			return;
		}
}

/* What the walk keeps of an instruction (not its text: a function's worth of them at once). */
struct op {
	unsigned len;
	bool call, ret, jump, cond, target_known, fp_from_sp;
	enum jitmap__sp_effect sp;
	int push_reg, pop_reg;
	int64_t sp_delta, fp_delta;
	uint64_t target, writes;
};

/* What two paths agree on. Returns whether `into` changed. */
static bool merge(struct state *into, const struct state *from)
{
	if (!from->reached)
		return false;
	if (!into->reached) {
		*into = *from;
		return true;
	}
	const struct state before = *into;
	if (!from->sp_known || !into->sp_known || from->sp_off != into->sp_off)
		into->sp_known = false;
	if (!from->fp_known || !into->fp_known || from->fp_off != into->fp_off)
		into->fp_known = false;
	into->written |= from->written;
	for (unsigned k = 0; k < into->nslots;) {
		int64_t off;
		if (slot_of(from, into->slot[k].reg, &off) && off == into->slot[k].off)
			k++;
		else
			into->slot[k] = into->slot[--into->nslots];
	}
	return into->sp_known != before.sp_known || into->fp_known != before.fp_known ||
	       into->written != before.written || into->nslots != before.nslots;
}

/* The state after instruction `in`. */
static void transfer(const struct jitmap__arch *a, const struct op *in, struct state *s)
{
	const uint64_t fp_bit = UINT64_C(1) << a->fp;
	if (in->fp_from_sp) {
		s->fp_known = s->sp_known;
		s->fp_off = s->sp_off - in->fp_delta;
		s->written |= fp_bit;
	} else if (in->writes & fp_bit && in->pop_reg != a->fp) {
		s->fp_known = false;
	}
	switch (in->sp) {
	case JITMAP__SP_ADD:
		s->sp_off -= in->sp_delta;
		break;
	case JITMAP__SP_FROM_FP:
		s->sp_known = s->fp_known;
		s->sp_off = s->fp_off - in->sp_delta;
		break;
	case JITMAP__SP_UNKNOWN:
		s->sp_known = false;
		break;
	default:
		break;
	}
	/* A push of a register that still holds the caller's value saves it. */
	if (in->push_reg >= 0 && s->sp_known && in->push_reg < 64 &&
	    !(s->written >> in->push_reg & 1) && s->nslots < MAX_SLOTS) {
		drop_slot(s, (unsigned)in->push_reg);
		s->slot[s->nslots].reg = (unsigned)in->push_reg;
		s->slot[s->nslots++].off = s->sp_off;
	}
	/* A pop from a register's own save slot gives it back the caller's value. */
	if (in->pop_reg >= 0 && in->pop_reg < 64) {
		int64_t off;
		const int64_t at = s->sp_off + in->sp_delta; /* where the popped word was */
		const bool restores = s->sp_known && slot_of(s, (unsigned)in->pop_reg, &off) &&
				      (in->sp == JITMAP__SP_FROM_FP || off == at);
		drop_slot(s, (unsigned)in->pop_reg);
		if (restores)
			s->written &= ~(UINT64_C(1) << in->pop_reg);
		else
			s->written |= UINT64_C(1) << in->pop_reg;
		if (in->pop_reg == a->fp)
			s->fp_known = false;
	}
	uint64_t w = in->writes & ~(UINT64_C(1) << a->sp);
	if (in->pop_reg >= 0 && in->pop_reg < 64)
		w &= ~(UINT64_C(1) << in->pop_reg);
	if (in->fp_from_sp)
		w &= ~fp_bit; /* counted above */
	s->written |= w;
}

/* -- The walk -- */

struct node {
	uint64_t addr;
	struct op in;
	struct state at;   /* the state on entry */
	bool queued;
};

static void keep(const struct jitmap__insn *i, struct op *o)
{
	*o = (struct op){
		.len = i->len, .call = i->call, .ret = i->ret, .jump = i->branch,
		/* Capstone calls both kinds "jump": a conditional one names its condition. */
		.cond = i->branch && strncmp(i->text, "jmp", 3) != 0,
		.target_known = i->target_known, .fp_from_sp = i->fp_from_sp, .sp = i->sp,
		.push_reg = i->push_reg, .pop_reg = i->pop_reg, .sp_delta = i->sp_delta,
		.fp_delta = i->fp_delta, .target = i->target, .writes = i->writes,
	};
}

static size_t node_at(const struct node *n, size_t count, uint64_t addr)
{
	const size_t lo = JITMAP_LOWER_BOUND(n, count, addr, addr);
	return lo < count && n[lo].addr == addr ? lo : SIZE_MAX;
}

int jitmap__code_walk(jitmap_arch arch, const uint8_t *code, size_t len, uint64_t lo,
		      uint64_t pc, bool exact, struct jitmap__walk *out, char *why,
		      size_t why_len)
{
	const struct jitmap__arch *a = jitmap__arch(arch);
	memset(out, 0, sizeof(*out));
	if (!a || !a->ra_slot || jitmap__insn_ready(arch)) {
		snprintf(why, why_len, "not done for %s", a ? a->name : "this architecture");
		return -ENOTSUP;
	}
	if (pc < lo || pc - lo > len || (pc == lo && !exact)) {
		snprintf(why, why_len, pc == lo && !exact
			 ? "0x%llx, a return address, is the code's first byte: no call in it left "
			   "it there"
			 : "0x%llx is not in the code walked", (unsigned long long)pc);
		return -ERANGE;
	}
	if (len > WALK_MAX)
		len = WALK_MAX;
	/* Every instruction, in address order, to the end of the code (paths go past the PC
	 * and come back) or the first bytes that are none. */
	struct node *n = NULL;
	size_t count = 0, cap = 0;
	int rc = 0;
	for (uint64_t off = 0; off < len;) {
		if (count == cap) {
			cap = cap ? 2 * cap : 256;
			struct node *m = realloc(n, cap * sizeof(*n));
			if (!m) {
				rc = -ENOMEM;
				goto out;
			}
			n = m;
		}
		struct node *x = &n[count];
		memset(x, 0, sizeof(*x));
		x->addr = lo + off;
		struct jitmap__insn insn;
		if (jitmap__insn_decode(arch, code + off, len - off, x->addr, &insn)) {
			if (x->addr < pc || (x->addr == pc && exact)) {
				snprintf(why, why_len, "the bytes at 0x%llx, before the PC, are no "
					 "instruction", (unsigned long long)x->addr);
				rc = -EILSEQ;
				goto out;
			}
			break;
		}
		keep(&insn, &x->in);
		off += x->in.len;
		count++;
	}
	/* The PC: an instruction's start (frame 0), or where a call returns to. */
	size_t at = node_at(n, count, pc);
	if (exact ? at == SIZE_MAX : (at == SIZE_MAX && lo + len != pc) ||
			 (at != SIZE_MAX && (at == 0 || !n[at - 1].in.call))) {
		snprintf(why, why_len, exact ? "0x%llx is not where an instruction starts"
				       : "0x%llx does not follow a call", (unsigned long long)pc);
		rc = -EINVAL;
		goto out;
	}

	/* Every path from the start: a work list of instructions whose entry state changed. */
	size_t *work = malloc((count + 1) * sizeof(*work));
	if (!work) {
		rc = -ENOMEM;
		goto out;
	}
	size_t nwork = 0;
	n[0].at = (struct state){.reached = true, .sp_known = true, .sp_off = (int64_t)a->ra_slot};
	work[nwork++] = 0;
	n[0].queued = true;
	/* Each state only loses what it knows: a bound on the rounds (each node can lose
	 * sp, fp, written bits and slots a few times) keeps a hostile input from spinning. */
	size_t budget = 64 * count + 64;
	struct state exit_state = {0};
	while (nwork && budget--) {
		const size_t i = work[--nwork];
		n[i].queued = false;
		struct state s = n[i].at;
		const struct op *in = &n[i].in;
		transfer(a, in, &s);
		if (in->ret)
			continue;
		size_t next[2];
		unsigned nnext = 0;
		const bool jump = in->jump;
		/* An unconditional jump (its target known or not) does not fall through. */
		if (!jump || in->cond) {
			if (i + 1 < count)
				next[nnext++] = i + 1;
			else if (n[i].addr + in->len == lo + len)
				exit_state = s; /* falls off the code walked: the PC may be there */
		}
		if (jump && in->target_known && in->target >= lo && in->target < lo + len) {
			const size_t t = node_at(n, count, in->target);
			if (t == SIZE_MAX) {
				snprintf(why, why_len, "0x%llx jumps into the middle of an instruction "
					 "(0x%llx)", (unsigned long long)n[i].addr,
					 (unsigned long long)in->target);
				rc = -EINVAL;
				free(work);
				goto out;
			}
			next[nnext++] = t;
		}
		for (unsigned k = 0; k < nnext; k++)
			if (merge(&n[next[k]].at, &s) && !n[next[k]].queued) {
				n[next[k]].queued = true;
				work[nwork++] = next[k];
			}
	}
	free(work);
	if (nwork) {
		snprintf(why, why_len, "the paths through the code did not settle");
		rc = -EINVAL;
		goto out;
	}
	const struct state *s = at != SIZE_MAX ? &n[at].at : &exit_state;
	if (!s->reached) {
		snprintf(why, why_len, "no path from the function's start at 0x%llx reaches 0x%llx "
			 "(an indirect jump's targets are not followed)", (unsigned long long)lo,
			 (unsigned long long)pc);
		rc = -ENOENT;
		goto out;
	}
	if (!s->sp_known && !s->fp_known) {
		snprintf(why, why_len, "at 0x%llx the stack pointer's distance to the frame's top "
			 "differs on the paths there, or was changed in a way not followed",
			 (unsigned long long)pc);
		rc = -ENOENT;
		goto out;
	}
	out->sp_known = s->sp_known;
	out->sp_off = s->sp_off;
	out->fp_known = s->fp_known;
	out->fp_off = s->fp_off;
	out->written = s->written;
	out->nslots = s->nslots;
	for (unsigned k = 0; k < s->nslots; k++) {
		out->slot[k].reg = s->slot[k].reg;
		out->slot[k].off = s->slot[k].off;
	}
out:
	free(n);
	return rc;
}
