/* stack_walk.c: jitmap-stack's walk of every thread: where the stackmaps are (the JIT
 * entries and loaded files, perf maps and jitdumps), each thread's frames by a
 * jitmap_stacker (include/jitmap/stack.h) with libdwfl's native steps, and what each frame
 * shows, as the library describes it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gelf.h>

#include <jitmap/arch.h>
#include <jitmap/core.h>
#include <jitmap/frame.h>
#include <jitmap/perfmap.h>

#include "stack_tool.h"

/* -- Where the stackmaps are: JIT descriptors and loaded files, from the modules -- */

struct discovery {
	struct target *t;
};

/* Each module's file: the JIT descriptor it defines and its .llvm_stackmaps (the library
 * reads both, moved by the module's bias). */
static int each_module(Dwfl_Module *m, void **userdata, const char *name, Dwarf_Addr start,
		       void *arg)
{
	(void)userdata;
	(void)name;
	(void)start;
	struct discovery *d = arg;
	GElf_Addr bias;
	const char *file = NULL;
	if (!dwfl_module_getelf(m, &bias))
		return DWARF_CB_OK;
	dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, &file, NULL);
	const int n = file ? jitmap_process_scan_file(d->t->proc, file, bias,
						      stack_module_name(m)) : 0;
	return n < 0 ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/* The perf maps and jitdump files the user named, and a live process's own or those its core
 * carries (jitmap-core-handler's notes). */
static void read_perf_maps(struct target *t, const struct options *o)
{
	jitmap_perfmap *pm = jitmap_process_perfmap(t->proc);
	if (!pm) {
		stack_problem("perf maps are not read: out of memory");
		return;
	}
	/* The core's own first: a file the user names by the same path replaces it. */
	if (!t->live && !o->no_perf_maps && jitmap_perfmap_add_core(pm, t->stopped) == -ENOMEM)
		stack_problem("the core's perf maps are not read: out of memory");
	for (size_t i = 0; i < o->nperf; i++)
		(void)jitmap_perfmap_add_file(pm, o->perf_files[i], NULL); /* problems: below */
	if (t->live && !o->no_perf_maps)
		(void)jitmap_perfmap_add_process(pm, (int)t->pid);
	for (size_t k = 0; k < jitmap_perfmap_num_problems(pm); k++)
		stack_problem("%s", jitmap_perfmap_problem(pm, k));
}

int stack_scan(struct target *t, const struct options *o)
{
	/* Stackmaps are read for the JIT code the stacks are in, not for every entry. */
	JITMAP_OPTS(const jitmap_process_opts, popts, .flags = JITMAP_PROCESS_LAZY);
	t->proc = jitmap_process_new(&t->memory, &popts);
	if (!t->proc) {
		stack_fatal("out of memory");
		return -1;
	}
	struct discovery d = {.t = t};
	jitmap_process_scan_begin(t->proc);
	/* A core: the library's one scan (jitmap-dump's too), NT_FILE's files and those it
	 * placed without NT_FILE. A live process: the modules libdwfl lists. */
	const int rc = !t->live ? jitmap_process_scan_stopped(t->proc, t->stopped)
				: dwfl_getmodules(t->dwfl, each_module, &d, 0) != 0 ? -ENOMEM : 0;
	if (rc < 0 || jitmap_process_scan_end(t->proc)) {
		stack_fatal("out of memory");
		return -1;
	}
	read_perf_maps(t, o);
	return 0;
}

void stack_process_problems(struct target *t)
{
	for (size_t k = 0; k < jitmap_process_num_problems(t->proc); k++)
		stack_problem("%s", jitmap_process_problem(t->proc, k));
	jitmap_source_info si = {.sz = sizeof(si)};
	for (size_t i = 0; i < jitmap_process_num_sources(t->proc); i++) {
		jitmap_process_source(t->proc, i, &si);
		for (size_t k = 0; k < si.num_problems; k++)
			stack_problem("%s", jitmap_process_source_problem(t->proc, i, k));
	}
}

/* -- Values: a frame described by the library -- */

/* A frame's registers as the unwinders left them, and the target's memory: the frame target
 * of jitmap_frame_describe. */
struct frame_regs_target {
	const jitmap_frame_regs *regs;
	const struct target *t;
};

static int frame_read_reg(void *ctx, unsigned regno, void *buf, size_t size, char *why,
			  size_t why_len)
{
	const struct frame_regs_target *f = ctx;
	(void)why;
	(void)why_len;
	const bool pc = jitmap_reg_pc(f->t->arch) == (int)regno; /* kept apart from the others */
	if ((!pc && !jitmap_frame_reg_known(f->regs, regno)) || size > 8)
		return -ENOENT; /* the library words it from the register's class */
	const uint64_t v = pc ? f->regs->pc : f->regs->reg[regno];
	uint8_t *b = buf;
	for (size_t i = 0; i < size; i++)
		b[f->t->order == JITMAP_ORDER_BIG ? size - 1 - i : i] = (uint8_t)(v >> (8 * i));
	/* What the unwinders know of an outer frame was restored from where it was saved, or
	 * carried over by the ABI's rule (a caller-saved register is never carried into a
	 * caller): believed. */
	return JITMAP_REG_RECOVERED;
}

static int frame_read_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			  size_t why_len)
{
	const struct frame_regs_target *f = ctx;
	const jitmap_target *m = f->t->values.read_mem ? &f->t->values : &f->t->memory;
	return m->read_mem(m->ctx, addr, buf, len, why, why_len);
}

static char *dup_text(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* What the output shows of frame `f` at a record (or a JIT frame at none): the library's
 * answer, as `info stackmap -json` gives it (less "frame") and as its text. */
static void describe_frame(struct target *t, const struct options *o, const jitmap_stack_frame *f,
			   struct frame_out *fo)
{
	struct frame_regs_target ft = {f->regs, t};
	const jitmap_target target = {&ft, frame_read_reg, frame_read_mem};
	JITMAP_OPTS(const jitmap_frame_desc, d, .level = fo->level, .pc = f->pc,
		    .return_address = !f->exact, .arch = t->arch, .function = fo->function,
		    .target = &target, .statepoints = JITMAP_STATEPOINT_AUTO,
		    .flags = o->registers ? JITMAP_DESCRIBE_REGISTERS : 0, .order = t->order,
		    .guessed = f->guessed ? f->guess : NULL);
	jitmap_frame_report *r = jitmap_frame_describe(t->proc, &d);
	if (!r) {
		stack_problem("frame %u: %s", fo->level, strerror(errno));
		return;
	}
	if (o->registers) {
		fo->registers_json = dup_text(jitmap_frame_report_json(r, JITMAP_JSON_REGISTERS));
		fo->registers_text = dup_text(jitmap_frame_report_text(r, JITMAP_TEXT_REGISTERS, 6));
	}
	const bool at_record = jitmap_frame_report_num_records(r) > 0;
	if (!at_record && !f->jit) {
		jitmap_frame_report_free(r);
		return;
	}
	if (o->values || o->gc_roots)
		fo->stackmap_json = dup_text(jitmap_frame_report_json(r, JITMAP_JSON_NO_FRAME));
	char *text = NULL;
	size_t len = 0;
	FILE *x = open_memstream(&text, &len);
	if (x) {
		if (!at_record) {
			if (o->values || o->gc_roots)
				fprintf(x, "    (%s)\n",
					jitmap_frame_report_text(r, JITMAP_TEXT_NO_RECORD, 0));
		} else {
			if (o->values)
				fputs(jitmap_frame_report_text(r, JITMAP_TEXT_RECORDS, 4), x);
			else
				fputs(jitmap_frame_report_text(r, JITMAP_TEXT_VFRAMES, 4), x);
			const char *rows = o->gc_roots
				? jitmap_frame_report_text(r, JITMAP_TEXT_GC_ROOTS, 4) : "";
			if (rows && rows[0]) {
				char *copy = strdup(rows);
				fputs(jitmap_frame_report_text(r, JITMAP_TEXT_GC_HEADER, 4), x);
				fputs(copy ? copy : "", x);
				free(copy);
			}
		}
		fclose(x);
		fo->text = text;
	}
	jitmap_frame_report_free(r);
}

/* -- Walking every thread -- */

struct walk {
	struct target *t;
	const struct options *o;
	struct thread *th;
	uint64_t callee_entry; /* the entry of the frame before this one (0: unknown, JIT) */
	bool guessed;          /* a frame reached by a guess was seen */
	bool stack_unread;     /* the walk ended where a word of the stack could not be read */
};

static struct frame_out *new_frame(struct thread *th)
{
	if (th->nframes == th->cap_frames) {
		const size_t cap = th->cap_frames ? 2 * th->cap_frames : 32;
		struct frame_out *a = realloc(th->frames, cap * sizeof(*a));
		if (!a)
			return NULL;
		th->frames = a;
		th->cap_frames = cap;
	}
	struct frame_out *fo = &th->frames[th->nframes++];
	memset(fo, 0, sizeof(*fo));
	fo->level = th->next_level++;
	return fo;
}

/* Which file names the code at `at`, and the source line there. */
static void named_code(struct target *t, uint64_t at, struct frame_out *fo)
{
	jitmap_perfmap_sym sym = {.sz = sizeof(sym)};
	if (jitmap_perfmap_lookup(jitmap_process_perfmap(t->proc), at, &sym))
		return;
	fo->named_by = strdup(sym.source);
	fo->source_kind = sym.kind == JITMAP_PERFMAP_JITDUMP ? "jitdump" : "perf-map";
	fo->source_path = strdup(sym.origin);
	fo->source_in_core = sym.in_core;
	if (sym.file && asprintf(&fo->source_line, "%s:%u", sym.file, sym.file_line) < 0)
		fo->source_line = NULL;
}

static int on_frame(void *ctx, const jitmap_stack_frame *f)
{
	struct walk *w = ctx;
	struct thread *th = w->th;
	const size_t first = th->nframes;
	uint64_t at = f->code_pc;
	/* Code only a perf map or jitdump names: a module's symbol where it has one (a runtime
	 * lists its own builtins, in its executable, in its map), else the map's name (libdwfl
	 * may give a module a range that spans the JIT code between two of its mappings). */
	const bool named_only = f->jit && !f->code.image;
	const struct native_name *nn = f->jit && !named_only ? NULL
							     : stack_native_name(w->t, at);
	/* A return address at a function's first byte, after no function at all (padding):
	 * a runtime's continuation (V8's InterpreterEnterAtNextBytecode), named from there. */
	if (nn && !nn->function && at != f->pc) {
		const struct native_name *here = stack_native_name(w->t, f->pc);
		if (here && here->function && here->entry == f->pc) {
			nn = here;
			at = f->pc;
		}
	}
	const bool jit = f->jit && !(named_only && nn && nn->function);
	/* A caller at a return address whose call went, by tail calls, to the frame before:
	 * those functions are frames of their own in GDB's numbering. */
	struct tail_frame tails[MAX_TAIL_CALLS];
	const unsigned ntails = !jit && !f->exact && f->level > 0 && w->callee_entry
		? stack_tail_calls(w->t, f->pc, w->callee_entry, tails) : 0;
	for (unsigned i = ntails; i-- > 0;) {
		struct frame_out *tc = new_frame(th);
		if (!tc)
			return -ENOMEM;
		tc->pc = tails[i].pc;
		tc->tail_call = true;
		tc->function = strdup(tails[i].name);
		/* its own module: the caller's call may have gone to another library */
		Dwfl_Module *tm = dwfl_addrmodule(w->t->dwfl, tails[i].pc - 1);
		const char *module = tm ? stack_module_name(tm) : NULL;
		tc->module = module ? strdup(module) : NULL;
		stack_module_id(w->t, tc->pc, tails[i].pc - 1, tc);
		tc->method = "tail-call";
	}
	w->callee_entry = nn ? nn->entry : 0;
	for (unsigned i = 0; nn && i < nn->ninlined; i++) {
		struct frame_out *in = new_frame(th);
		if (!in)
			return -ENOMEM;
		in->pc = f->pc;
		in->exact = f->exact;
		in->inlined = true;
		in->function = strdup(nn->inlined[i]);
		if (nn->module)
			in->module = strdup(nn->module);
		stack_module_id(w->t, f->pc, at, in);
		in->method = "inline";
	}
	struct frame_out *fo = new_frame(th);
	if (!fo)
		return -ENOMEM;
	fo->pc = f->pc;
	fo->exact = f->exact;
	fo->jit = jit;
	fo->method = jitmap_unwind_method_name(f->method);
	fo->at_record = f->record != NULL;
	fo->record_id = f->record ? f->record->id : 0;
	if (jit) {
		fo->code_lo = f->code.function_lo ? f->code.function_lo : f->code.lo;
		fo->image = f->code.image;
		fo->func_lo = f->code.function_lo;
		fo->func_hi = f->code.function_hi;
		fo->code_pc = f->code_pc;
		if (w->o->keep_rules && f->rule && (fo->rule = malloc(sizeof(*fo->rule))))
			*fo->rule = *f->rule;
		if (f->code.function)
			fo->function = strdup(f->code.function);
		fo->entry = f->code.entry;
		if (named_only)
			named_code(w->t, at, fo);
		else
			fo->source_kind = "jit-entry";
	} else {
		if (nn && nn->function)
			fo->function = strdup(nn->shown ? nn->shown : nn->function);
		if (nn && nn->module)
			fo->module = strdup(nn->module);
		stack_module_id(w->t, f->pc, at, fo);
	}
	/* The library describes a frame at a record, and a JIT frame at none, when the output
	 * shows values or roots; the interpreter frames a runtime's layouts give always. Not a
	 * frame --max-frames cuts: the walk goes on only to count them. */
	const bool asked = w->o->values || w->o->gc_roots;
	const bool shown = !w->o->max_frames || th->nframes <= w->o->max_frames;
	if (shown && (((asked || jitmap_process_num_layout_images(w->t->proc)) &&
		       (f->record || f->jit)) || w->o->registers))
		describe_frame(w->t, w->o, f, fo);
	if (f->stop && f->stop != -ESRCH)
		fo->why = strdup(f->why);
	w->stack_unread = f->stack_unread;
	/* This frame's, and its inlined and tail-call frames' (made from its PC). */
	for (size_t k = first; f->guessed && k < th->nframes; k++) {
		th->frames[k].guess = strdup(f->guess);
		th->frames[k].guess_first = !w->guessed;
		w->guessed = true;
	}
	return stack_interrupted ? -EINTR : 0;
}

static int code_at(void *ctx, uint64_t pc, char *why, size_t why_len)
{
	return jitmap_stopped_code_at(ctx, pc, why, why_len);
}

/* A live thread read by thread whose walk stopped, unable to read its stack (the stacker's
 * status, stack_unread: a return address or frame record it could not read), where the copy
 * of its stack ended (--stack-bytes): said with the reason the unwinders gave. */
static void stack_cut_said(struct target *t, size_t i, struct thread *th, bool stack_unread)
{
	const jitmap_stopped_thread_info *ti = jitmap_stopped_thread(t->stopped, i);
	struct frame_out *last = th->nframes ? &th->frames[th->nframes - 1] : NULL;
	if (!ti || !ti->stack_cut || !last || !last->why || !stack_unread)
		return;
	uint64_t sp = 0; /* the copy ends stack_bytes above it */
	const int spno = jitmap_reg_sp(t->arch);
	if (spno < 0 || jitmap_stopped_thread_reg(ti, (unsigned)spno, &sp) || sp > ti->stack_hi)
		return;
	char *why = NULL;
	if (asprintf(&why, "its stack was copied only up to 0x%" PRIx64 ", %" PRIu64 " bytes "
		     "above its stack pointer (--stack-bytes): %s", ti->stack_hi,
		     ti->stack_hi - sp, last->why) < 0)
		return;
	free(last->why);
	last->why = why;
}

/* The stacker's memory: the target's, as it is for the thread being walked. */
static int walk_read_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			 size_t why_len)
{
	const struct target *t = ctx;
	return t->memory.read_mem(t->memory.ctx, addr, buf, len, why, why_len);
}

void stack_walk_threads(struct target *t, const struct options *o)
{
	/* Below a thread's last frame lie stack words: with code_at, none is taken for a frame
	 * where no code can be. */
	JITMAP_OPTS(const jitmap_stacker_opts, so,
		    .native_step = dwfl_pid(t->dwfl) > 0 ? stack_native_step : NULL,
		    .native_ctx = stack_native_ctx(), .order = t->order, .code_at = code_at,
		    .code_ctx = t->stopped);
	const jitmap_target walked = {.ctx = t, .read_mem = walk_read_mem};
	jitmap_stacker *st = jitmap_stacker_new(t->proc, &walked, t->arch, &so);
	if (!st) {
		stack_problem("jitmap cannot unwind %s stacks: %s",
			      jitmap_arch_name(t->arch), strerror(errno));
		return;
	}
	const size_t n = o->max_threads && o->max_threads < t->nthreads ? o->max_threads
									  : t->nthreads;
	for (size_t i = 0; i < n && !stack_interrupted; i++) {
		struct thread *th = &t->threads[i];
		if (!th->info->regs)
			continue;
		struct walk w = {t, o, th, 0, false, false};
		/* Each thread's stack as it was when it stopped (a live process read by thread:
		 * the capture; a core's and an all-stopped process's: memory itself). */
		t->memory = jitmap_stopped_thread_target(t->stopped, i);
		t->values = jitmap_stopped_thread_stack_target(t->stopped, i);
		jitmap_stacker_walk(st, th->info->regs, on_frame, &w);
		stack_cut_said(t, i, th, w.stack_unread);
	}
	t->memory = jitmap_stopped_target(t->stopped);
	t->values = (jitmap_target){0};
	jitmap_stacker_free(st);
}
