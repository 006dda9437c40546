/* unwind.c: the plugin's unwinder: a JIT frame's caller from libjitmap's unwinder (CFI, the
 * stackmap's frame size at record PCs, the frame-pointer chain) with GDB's registers, per-frame
 * caches and target memory read by the line; GDB's unwind and frame-ID callbacks. */
#include "internal.h"
/* -- Unwinding -- */

static void reg_value_free(struct gdb_reg_value *v)
{
	free(v);
}

/* Read DWARF register `n` of the frame: 0 with the value, -1 when GDB has none. */
static int get_reg(const struct jitmap_plugin__roles *ro, struct gdb_unwind_callbacks *cb, int n,
		   uint64_t *out)
{
	struct gdb_reg_value *v = cb->reg_get(cb, n);
	if (!v)
		return -1;
	int rc = -1;
	if (v->defined && v->size > 0) {
		/* GDB's bytes are in the target's order (ro->big_endian). */
		const size_t n = v->size < 8 ? (size_t)v->size : 8;
		uint64_t x = 0;
		for (size_t i = 0; i < n; i++)
			x |= (uint64_t)v->value[ro->big_endian ? n - 1 - i : i] << (8 * i);
		*out = x;
		rc = 0;
	}
	if (v->free)
		v->free(v);
	return rc;
}

static void set_reg(const struct jitmap_plugin__roles *ro, struct gdb_unwind_callbacks *cb, int n,
		    uint64_t value)
{
	/* GDB copies register_size bytes (8 for what we set) and then calls `free`. */
	struct gdb_reg_value *v = malloc(sizeof(*v) + sizeof(value));
	if (!v)
		return;
	v->size = sizeof(value);
	v->defined = 1;
	v->free = reg_value_free;
	for (size_t i = 0; i < sizeof(value); i++) /* in the target's order */
		v->value[ro->big_endian ? sizeof(value) - 1 - i : i] = (uint8_t)(value >> (8 * i));
	cb->reg_set(cb, n, v);
}

/* Whether the instruction that ends at `pc` is a call: then `pc` is a return address. The
 * decoding is libjitmap's (jitmap_arch_call_before); the code must not be read before its
 * range (`code`, which holds pc - 1 or pc). 1: a call ends at `pc`; 0: the code before `pc` is
 * not a call; -1: it cannot be read. */
static int call_before(struct jitmap_plugin__session *s, const jitmap_code_info *code, uint64_t pc)
{
	const struct jitmap_plugin__roles *ro = &s->roles;
	uint8_t b[16];
	size_t n = jitmap_arch_call_window(ro->arch);
	if (pc - 1 < code->lo || pc - 1 >= code->hi || !n || n > sizeof(b))
		return 0;
	if (pc - code->lo < n)
		n = (size_t)(pc - code->lo);
	if (!n || plugin_target_read(s, pc - n, b, n))
		return -1;
	return jitmap_arch_call_before(ro->arch, b, n);
}

/* Frame 0 or an outer frame? The jit-reader API does not say. An outer frame's PC is a return
 * address, and its caller-saved registers are unknown when the frame below was unwound by an
 * unwinder that says so (this one, for JIT frames below). So, in order:
 *   1. a caller-saved register is undefined: outer;
 *   2. the PC is a function's first byte: innermost (no call returns there);
 *   3. the instruction before the PC is a call: a return address; it is not: innermost
 *      (a record there is one a breakpoint or a trap stopped at: an AArch64 leaf's);
 *   4. the code before it cannot be read: a stackmap record at the PC says a return
 *      address (statepoint records follow calls); else innermost.
 * Treating frame 0 that stopped just after a call as an outer frame changes nothing: the
 * unwind rules at a return address and at the call are the same. `code` holds the PC, or
 * pc - 1 when the PC is just past the end of the code. */
static bool looks_innermost(struct jitmap_plugin__session *s, const jitmap_code_info *code,
			    const jitmap_stackmap *sm, const jitmap_frame_regs *regs)
{
	const struct jitmap_plugin__roles *ro = &s->roles;
	for (int n = 0; n < ro->ngpr; n++)
		if (!jitmap_reg_is_callee_saved(ro->arch, (unsigned)n) &&
		    !jitmap_frame_reg_known(regs, (unsigned)n))
			return false;
	if (code->function && code->function_lo == regs->pc)
		return true;
	const int call = call_before(s, code, regs->pc);
	if (call >= 0)
		return !call;
	return !(sm && jitmap_stackmap_lookup(sm, regs->pc, NULL, 0));
}

struct frame_calc {
	uint64_t id;       /* the entry's */
	jitmap_unwind_result res;
	uint64_t func_lo;  /* the function's start, for the frame ID */
	bool outermost;    /* the CFI marks it outermost: res.cfa only, no caller */
	bool guess;        /* no method proved the step: GDB gets the chain's registers only */
};

/* Unwind the frame that `cb` shows into `fc`. Returns 0 (with fc->outermost set when the
 * frame is the outermost one); -ENOENT when the PC is not in JIT code the reader knows (the
 * fast path for every other frame of the process); -EAGAIN when GDB's own unwinder has this
 * frame's CFI; another negative errno when unwinding failed. */
static int compute(struct jitmap_plugin__session *s, struct gdb_unwind_callbacks *cb,
		   struct frame_calc *fc)
{
	const struct jitmap_plugin__roles *ro = &s->roles;
	uint64_t pc;
	if (!s->nentries || ro->pc < 0 || get_reg(ro, cb, ro->pc, &pc))
		return -ENOENT;
	s->target_read = cb->target_read;
	jitmap_code_info code;
	uint64_t found_at = pc;
	int rc = jitmap_process_image_code_at(s->proc, pc, &code);
	if (rc && pc) /* a return address just past the end of the code */
		rc = jitmap_process_image_code_at(s->proc, found_at = pc - 1, &code);
	plugin_forget_dropped(s);
	struct jitmap_plugin__entry *e = rc ? NULL : plugin_entry_of(s, code.image_id);
	if (!e || jitmap_image_arch(code.image) != ro->arch)
		return -ENOENT;
	const jitmap_cfi *cfi = NULL;
	if (!e->claimed) {
		/* GDB read this entry itself and unwinds it from its CFI where it covers. */
		cfi = plugin_entry_cfi(s, e, &code);
		if (cfi && (jitmap_cfi_covers(cfi, pc, NULL, NULL) ||
			    jitmap_cfi_covers(cfi, pc - 1, NULL, NULL)))
			return -EAGAIN;
	}

	jitmap_frame_regs regs;
	memset(&regs, 0, sizeof(regs));
	regs.pc = pc;
	/* Every GPR, each a call into GDB. In a frame whose first caller-saved register (rax) is
	 * undefined (the frame below was unwound by an unwinder that knows caller-saved
	 * registers are not saved: this one) the other caller-saved registers are undefined
	 * too, and an outer frame's CFI never needs them: skip them. */
	uint64_t v;
	const bool clobber_known = !get_reg(ro, cb, ro->first_clobber, &v);
	if (clobber_known)
		jitmap_frame_reg_set(&regs, (unsigned)ro->first_clobber, v);
	for (int n = 0; n < ro->ngpr; n++) {
		if (n == ro->first_clobber)
			continue;
		const bool caller_saved = !jitmap_reg_is_callee_saved(ro->arch, (unsigned)n);
		if ((clobber_known || !caller_saved) && !get_reg(ro, cb, n, &v))
			jitmap_frame_reg_set(&regs, (unsigned)n, v);
	}
	if (!jitmap_frame_reg_known(&regs, (unsigned)ro->sp))
		return -EINVAL;

	for (unsigned i = 0; i < CACHE_SLOTS; i++) {
		const struct jitmap_plugin__cache_slot *c = &s->cache[i];
		if (c->id == e->id && c->gen == s->gen && c->epoch == s->epoch && c->pc == pc &&
		    c->known == regs.known[0] &&
		    !memcmp(c->reg, regs.reg, (size_t)ro->ngpr * sizeof(c->reg[0]))) {
			fc->id = e->id;
			fc->res = c->res;
			fc->func_lo = c->func_lo;
			fc->outermost = c->outermost;
			fc->guess = c->guess;
			return 0;
		}
	}

	/* Its code was looked at (staleness) by the lookup above: this drops nothing. */
	const jitmap_stackmap *sm = plugin_entry_stackmap(s, e);
	if (!cfi)
		cfi = plugin_entry_cfi(s, e, &code);
	const bool innermost = looks_innermost(s, &code, sm, &regs);
	const uint64_t where = innermost ? pc : pc - 1;
	jitmap_code_info at = code; /* the code at `where` */
	const bool known = where == found_at ||
			   (code.function && where >= code.function_lo && where < code.function_hi) ||
			   plugin_entry_code_at(s, e, where, &at);
	uint64_t lo = 0, hi = 0;
	if (known && at.function) {
		lo = at.function_lo;
		hi = at.function_hi;
	} else if (!cfi || !jitmap_cfi_covers(cfi, where, &lo, &hi)) {
		lo = hi = 0;
	}
	jitmap_unwind_code ucode = {
		.arch = ro->arch,
		.cfi = cfi,
		.sm = sm,
		.func_lo = lo,
		.func_hi = hi,
		.is_innermost = innermost,
		.methods = JITMAP_UNWIND_PROVEN,
		.order = jitmap_image_byte_order(code.image),
	};
	const jitmap_target target = {s, NULL, plugin_unwind_read_mem};
	s->lines[0].valid = s->lines[1].valid = false;
	char why[160] = "";
	/* A proof first (CFI, the stackmap's frame size, the code's instructions, a frame
	 * pointer its prologue sets); only then a guess, which GDB is told as little of as it
	 * needs to go on. */
	rc = jitmap_unwind_step(&ucode, &regs, &target, &fc->res, why, sizeof(why));
	fc->guess = false;
	if (rc && rc != -ESRCH) {
		char guess_why[160];
		ucode.methods = 0;
		memcpy(guess_why, why, sizeof(why));
		if (jitmap_unwind_step(&ucode, &regs, &target, &fc->res, why, sizeof(why)) == 0) {
			rc = 0;
			fc->guess = true;
			memcpy(why, guess_why, sizeof(why));
		}
	}
	fc->outermost = rc == -ESRCH;
	if (rc && !fc->outermost) {
		s->stats.unwind_failures++;
		plugin_note(s, e, "cannot unwind the frame at 0x%" PRIx64 ": %s", pc,
		     *why ? why : jitmap_strerror(rc));
		return rc;
	}
	fc->id = e->id;
	fc->func_lo = lo ? lo : known ? at.lo : pc;
	if (fc->guess) {
		const jitmap_frame_regs *cr = &fc->res.caller;
		struct jitmap_plugin__guess *g = &s->guesses[s->guess_next++ % GUESS_SLOTS];
		*g = (struct jitmap_plugin__guess){.gen = s->gen, .epoch = s->epoch, .pc = cr->pc,
						   .sp = jitmap_frame_reg_known(cr, (unsigned)ro->sp)
								 ? cr->reg[ro->sp] : fc->res.cfa};
		snprintf(g->why, sizeof(g->why), "the caller of the frame at 0x%" PRIx64 " was "
			 "found by a guess (%s)", pc, why);
	}

	struct jitmap_plugin__cache_slot *c = &s->cache[s->cache_next++ % CACHE_SLOTS];
	*c = (struct jitmap_plugin__cache_slot){.gen = s->gen, .epoch = s->epoch, .pc = pc,
						.known = regs.known[0], .id = e->id, .res = fc->res,
						.func_lo = fc->func_lo, .outermost = fc->outermost,
						.guess = fc->guess};
	memcpy(c->reg, regs.reg, (size_t)ro->ngpr * sizeof(c->reg[0]));
	return 0;
}

enum gdb_status plugin_unwind_frame(struct gdb_reader_funcs *self,
				    struct gdb_unwind_callbacks *cb)
{
	struct jitmap_plugin__session *s = self->priv_data;
	const struct jitmap_plugin__roles *ro = &s->roles;
	struct frame_calc fc;
	if (compute(s, cb, &fc))
		return GDB_FAIL;
	if (fc.outermost) {
		/* GDB's JIT unwinder cannot mark a frame outermost: jit.c builds every frame ID
		 * with frame_id_build, and default_frame_unwind_stop_reason reports
		 * UNWIND_OUTERMOST only for outer_frame_id. Of what a reader can do, a caller
		 * whose PC is 0 is the one that ends the backtrace without an error: GDB shows
		 * that caller as `0x0000000000000000 in ?? ()` and stops there (frame.c: "NORMAL
		 * frames will never unwind a zero PC"). Declining would hand the frame to GDB's
		 * prologue analyzer, which walks on through whatever the stack holds; a PC left
		 * <not saved> makes the first `bt` after each stop end in the error "PC not
		 * saved" (and gdb.execute("bt") raise). [checked: GDB 13.1, docs/gdb.md] */
		s->stats.outermost++;
		set_reg(ro, cb, ro->sp, fc.res.cfa);
		set_reg(ro, cb, ro->pc, 0);
		return GDB_SUCCESS;
	}
	s->stats.unwinds++;
	s->stats.guesses += fc.guess;
	const jitmap_frame_regs *c = &fc.res.caller;
	for (int n = 0; n < ro->ngpr; n++)
		if (n != ro->sp && jitmap_frame_reg_known(c, (unsigned)n) &&
		    (!fc.guess || n == ro->fp))
			set_reg(ro, cb, n, c->reg[n]);
	set_reg(ro, cb, ro->sp,
		jitmap_frame_reg_known(c, (unsigned)ro->sp) ? c->reg[ro->sp] : fc.res.cfa);
	set_reg(ro, cb, ro->pc, c->pc);
	return GDB_SUCCESS;
}

struct gdb_frame_id plugin_get_frame_id(struct gdb_reader_funcs *self,
				       struct gdb_unwind_callbacks *cb)
{
	struct jitmap_plugin__session *s = self->priv_data;
	const struct jitmap_plugin__roles *ro = &s->roles;
	struct frame_calc fc;
	struct gdb_frame_id id = {0, 0};
	/* GDB asks for the ID of a frame right after plugin_unwind_frame unwound it: within one
	 * stop (generation), a frame's PC, SP and frame pointer identify it, so the cached answer
	 * is found without reading the other registers. */
	uint64_t pc, sp, fp;
	if (ro->pc >= 0 && !get_reg(ro, cb, ro->pc, &pc) && !get_reg(ro, cb, ro->sp, &sp) &&
	    !get_reg(ro, cb, ro->fp, &fp)) {
		for (unsigned i = 0; i < CACHE_SLOTS; i++) {
			const struct jitmap_plugin__cache_slot *c = &s->cache[i];
			if (c->id && c->gen == s->gen && c->epoch == s->epoch && c->pc == pc &&
			    c->reg[ro->sp] == sp && c->reg[ro->fp] == fp &&
			    (c->known >> ro->fp & 1)) {
				id.code_address = c->func_lo;
				id.stack_address = c->res.cfa;
				return id;
			}
		}
	}
	if (!compute(s, cb, &fc)) {
		id.code_address = fc.func_lo;
		id.stack_address = fc.res.cfa;
	} else {
		/* Only frames plugin_unwind_frame accepted get here; keep the ID stable all the
		 * same. */
		uint64_t v = 0;
		if (ro->pc >= 0 && !get_reg(ro, cb, ro->pc, &v))
			id.code_address = v;
		if (!get_reg(ro, cb, ro->sp, &v))
			id.stack_address = v;
	}
	return id;
}
