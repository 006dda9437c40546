/* stack_output.c: what jitmap-stack prints: the process, its JIT entries and perf maps,
 * each thread's frames and the problems, as text or as one JSON object (docs/json.md).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <jitmap/perfmap.h>

#include "json.h"
#include "stack_tool.h"

/* How many JIT entries the process has: a count only when every descriptor's list was read
 * to its end and every file that may define one was looked into. `unknown`: some descriptor
 * could not be read at all; `partial`: some list was read only in part (the count is of the
 * entries read); `unread`: files of a core that could not be read; `why`: the first such
 * problem. */
struct jit_count {
	size_t entries, unread;
	bool unknown, partial;
	char why[512];
};

static void count_jit_entries(const struct target *t, struct jit_count *n)
{
	memset(n, 0, sizeof(*n));
	for (size_t i = 0; i < jitmap_process_num_sources(t->proc); i++) {
		jitmap_source_info si = {.sz = sizeof(si)};
		if (jitmap_process_source(t->proc, i, &si) == 0 && si.kind == JITMAP_SOURCE_JIT)
			n->entries++;
	}
	for (size_t i = 0; i < jitmap_process_num_descriptors(t->proc); i++) {
		jitmap_descriptor_info d = {.sz = sizeof(d)};
		if (jitmap_process_descriptor(t->proc, i, &d) || d.complete)
			continue;
		/* (the words of the process's problem for it) */
		if (!n->unknown && !n->partial)
			snprintf(n->why, sizeof(n->why), "the %s in %s: %s",
				 d.readable ? "JIT entry list of the descriptor" : "JIT descriptor",
				 d.where, d.problem ? d.problem : "not read");
		n->unknown |= !d.readable;
		n->partial |= d.readable;
	}
	n->unread = jitmap_process_num_unread_files(t->proc);
	if (n->unread && !n->unknown && !n->partial)
		snprintf(n->why, sizeof(n->why), "%zu file%s the core maps could not be read (see "
			 "problems): a JIT descriptor in one would not be seen", n->unread,
			 n->unread == 1 ? "" : "s");
}

/* How many threads are shown (--max-threads), and how many of a thread's frames
 * (--max-frames). */
static size_t threads_shown(const struct target *t, const struct options *o)
{
	return o->max_threads && o->max_threads < t->nthreads ? o->max_threads : t->nthreads;
}

static size_t frames_shown(const struct thread *th, const struct options *o)
{
	return o->max_frames && o->max_frames < th->nframes ? o->max_frames : th->nframes;
}

/* Whether the target is a small core (jitmap-core-handler --small), with its stack bound and
 * the bytes of memory it kept and left out. */
static bool small_core(const struct target *t, uint64_t *bound, uint64_t *kept, uint64_t *left)
{
	return jitmap_stopped_small(t->stopped, bound, kept, left) == 1;
}

/* The PID a live process knows itself by (its PID namespace's: a container's), or -1 for a
 * core or where the kernel does not say. */
static int ns_pid(const struct target *t)
{
	const int own = t->live ? jitmap_pid_ns_pid((int)t->pid) : -1;
	return own > 0 ? own : -1;
}

void stack_print_text(const struct target *t, const struct options *o)
{
	struct jit_count n;
	count_jit_entries(t, &n);
	printf("%s %d%s%s%s", t->live ? "process" : "core of process", (int)t->pid,
	       t->comm[0] ? " (" : "", t->comm, t->comm[0] ? ")" : "");
	const int own = ns_pid(t);
	if (own > 0 && own != (int)t->pid) /* both PIDs where they differ */
		printf(", PID %d in its own namespace", own);
	printf(", %s, %zu thread%s; ", jitmap_arch_name(t->arch), t->nthreads,
	       t->nthreads == 1 ? "" : "s");
	if (n.unknown)
		printf("JIT entries unknown (a JIT descriptor could not be read: see problems)\n");
	else if (n.partial)
		printf("%zu JIT entr%s read, the rest unknown (a JIT entry list is damaged: see "
		       "problems)\n", n.entries, n.entries == 1 ? "y" : "ies");
	else if (n.unread)
		printf("%zu JIT entr%s found, more may be in the %zu file%s the core maps that could "
		       "not be read (see problems)\n", n.entries, n.entries == 1 ? "y" : "ies",
		       n.unread, n.unread == 1 ? "" : "s");
	else
		printf("%zu JIT entr%s\n", n.entries, n.entries == 1 ? "y" : "ies");
	const jitmap_perfmap *pm = jitmap_process_perfmap(t->proc);
	for (size_t i = 0; i < jitmap_perfmap_num_files(pm); i++) {
		size_t ranges;
		const char *path = jitmap_perfmap_file(pm, i, &ranges);
		printf("code named by %s: %zu code object%s\n", path, ranges,
		       ranges == 1 ? "" : "s");
	}
	uint64_t bound, kept, left;
	if (small_core(t, &bound, &kept, &left))
		printf("a small core: %" PRIu64 " bytes of memory kept, %" PRIu64 " left out (stacks "
		       "kept up to %" PRIu64 " bytes above their stack pointers)\n", kept, left,
		       bound);
	for (size_t i = 0; i < threads_shown(t, o); i++) {
		const struct thread *th = &t->threads[i];
		printf("\nthread %d", (int)th->info->tid);
		if (th->info->name[0])
			printf(" \"%s\"", th->info->name);
		printf(":\n");
		if (th->problem)
			printf("  (%s)\n", th->problem);
		for (size_t k = 0; k < frames_shown(th, o); k++) {
			const struct frame_out *f = &th->frames[k];
			printf("  #%-3u 0x%016" PRIx64 " in %s", f->level, f->pc,
			       f->function ? f->function : "??");
			if (f->inlined)
				printf(" [inlined]");
			if (f->tail_call)
				printf(" [tail call]");
			if (f->jit) {
				printf(" [JIT");
				if (f->entry)
					printf(" entry 0x%" PRIx64, f->entry);
				if (f->named_by)
					printf(", %s", f->named_by);
				printf("]");
				if (f->source_line)
					printf(" at %s", f->source_line);
			} else if (f->module || f->mapping) {
				/* a file's base name, or a mapping's own name: "[heap]", "[anon:V8]" */
				printf(" (%s)", f->module ? f->module : f->mapping);
			}
			if (f->guess)
				printf(" [guess]");
			printf("\n");
			if (f->guess_first)
				printf("    (from here on a guess: %s; no register or value of these "
				       "frames is stated)\n", f->guess);
			if (f->registers_text && f->registers_text[0])
				printf("    registers:\n%s", f->registers_text);
			if (f->text)
				fputs(f->text, stdout);
			if (f->why)
				printf("  (unwinding stops here: %s)\n", f->why);
		}
		if (frames_shown(th, o) < th->nframes) {
			const size_t cut = th->nframes - frames_shown(th, o);
			printf("  (%zu more frame%s not shown: --max-frames %u)\n", cut,
			       cut == 1 ? "" : "s", o->max_frames);
		}
	}
	if (threads_shown(t, o) < t->nthreads) {
		const size_t cut = t->nthreads - threads_shown(t, o);
		printf("\n(%zu more thread%s not shown: --max-threads %u)\n", cut,
		       cut == 1 ? "" : "s", o->max_threads);
	}
	if (stack_num_problems()) {
		printf("\nproblems:\n");
		for (size_t i = 0; i < stack_num_problems(); i++)
			printf("  %s\n", stack_problem_at(i));
	}
}

static void print_problems(void)
{
	printf("[");
	for (size_t i = 0; i < stack_num_problems(); i++) {
		printf("%s", i ? ", " : "");
		json_string(stdout, stack_problem_at(i));
	}
	printf("]");
}

void stack_print_json(const struct target *t, const struct options *o,
		      const struct signature *sig)
{
	const char *target = o->target;
	const int own = ns_pid(t);
	printf("{\"process\": {\"pid\": %d, \"ns_pid\": ", (int)t->pid);
	if (own > 0)
		printf("%d", own);
	else
		printf("null");
	printf(", \"live\": %s, \"core\": ", t->live ? "true" : "false");
	json_string_or_null(stdout, t->live ? NULL : target);
	printf(", \"name\": ");
	json_string_or_null(stdout, t->comm[0] ? t->comm : NULL);
	printf(", \"arch\": ");
	json_string(stdout, jitmap_arch_name(t->arch));
	struct jit_count n;
	count_jit_entries(t, &n);
	printf(", \"jit_descriptors\": %zu, \"jit_entries\": ",
	       jitmap_process_num_descriptors(t->proc));
	/* null where not every list was read to its end, or a file that may define one was not
	 * read: the error says which and why */
	const bool counted = !n.unknown && !n.partial && !n.unread;
	if (!counted)
		printf("null, \"jit_entries_read\": %zu, \"error\": ", n.entries);
	else
		printf("%zu, \"jit_entries_read\": %zu, \"error\": ", n.entries, n.entries);
	json_string_or_null(stdout, counted ? NULL : n.why);
	printf(", \"perf_maps\": [");
	const jitmap_perfmap *pm = jitmap_process_perfmap(t->proc);
	for (size_t i = 0; i < jitmap_perfmap_num_files(pm); i++) {
		size_t ranges;
		const char *path = jitmap_perfmap_file(pm, i, &ranges);
		printf("%s{\"path\": ", i ? ", " : "");
		json_string(stdout, path);
		printf(", \"code_objects\": %zu}", ranges);
	}
	uint64_t bound, kept, left;
	if (small_core(t, &bound, &kept, &left))
		printf("], \"small_core\": {\"stack_bytes\": %" PRIu64 ", \"kept_bytes\": %" PRIu64
		       ", \"left_bytes\": %" PRIu64 "}}, \"threads\": [", bound, kept, left);
	else
		printf("], \"small_core\": null}, \"threads\": [");
	for (size_t i = 0; i < threads_shown(t, o); i++) {
		const struct thread *th = &t->threads[i];
		printf("%s{\"tid\": %d, \"name\": ", i ? ", " : "", (int)th->info->tid);
		json_string_or_null(stdout, th->info->name[0] ? th->info->name : NULL);
		printf(", \"frames\": [");
		for (size_t k = 0; k < frames_shown(th, o); k++) {
			const struct frame_out *f = &th->frames[k];
			printf("%s{\"index\": %u, \"pc\": \"0x%" PRIx64 "\", \"function\": ",
			       k ? ", " : "", f->level, f->pc);
			json_string_or_null(stdout, f->function);
			printf(", \"module\": ");
			json_string_or_null(stdout, f->jit ? NULL : f->module);
			printf(", \"build_id\": ");
			json_string_or_null(stdout, f->jit ? NULL : f->build_id);
			if (!f->jit && f->in_module)
				printf(", \"module_offset\": \"0x%" PRIx64 "\"", f->module_offset);
			else
				printf(", \"module_offset\": null");
			/* a frame in no module: the name of the mapping its PC lies in, if it has one */
			printf(", \"mapping\": ");
			json_string_or_null(stdout, f->jit || f->in_module ? NULL : f->mapping);
			printf(", \"jit_entry\": ");
			if (f->jit && f->entry)
				printf("\"0x%" PRIx64 "\"", f->entry);
			else
				printf("null");
			printf(", \"jit\": %s, \"source\": ", f->jit ? "true" : "false");
			if (f->jit && f->source_kind) {
				printf("{\"kind\": \"%s\", \"path\": ", f->source_kind);
				json_string_or_null(stdout, f->source_path);
				printf("%s}, ", f->source_in_core ? ", \"in_core\": true" : "");
			} else {
				printf("null, ");
			}
			if (f->named_by) {
				printf("\"named_by\": ");
				json_string(stdout, f->named_by);
				printf(", \"source_line\": ");
				json_string_or_null(stdout, f->source_line);
				printf(", ");
			}
			if (f->inlined)
				printf("\"inlined\": true, ");
			if (f->tail_call)
				printf("\"tail_call\": true, ");
			printf("\"unwound_by\": ");
			json_string(stdout, f->method);
			printf(", \"guess\": ");
			json_string_or_null(stdout, f->guess);
			printf(", \"stackmap\": %s", f->stackmap_json ? f->stackmap_json : "null");
			if (f->registers_json)
				printf(", \"registers\": %s", f->registers_json);
			if (f->why) {
				printf(", \"error\": ");
				json_string(stdout, f->why);
			}
			printf("}");
		}
		printf("]");
		if (o->max_frames)
			printf(", \"frames_cut\": %zu", th->nframes - frames_shown(th, o));
		if (th->problem) {
			printf(", \"error\": ");
			json_string(stdout, th->problem);
		}
		printf("}");
	}
	printf("]");
	if (o->max_threads)
		printf(", \"threads_cut\": %zu", t->nthreads - threads_shown(t, o));
	if (sig) {
		printf(", \"signature\": ");
		stack_signature_print_json(sig);
	}
	printf(", \"problems\": ");
	print_problems();
	printf("}\n");
}

void stack_print_json_error(const char *error)
{
	printf("{\"process\": null, \"threads\": [], \"problems\": ");
	print_problems();
	printf(", \"error\": ");
	json_string(stdout, error);
	printf("}\n");
}
