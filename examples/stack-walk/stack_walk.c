/* stack_walk: the C API a crash reporter uses to walk threads through JIT frames, on a core
 * file or a live process, with nothing but libjitmap (docs/jitmap-stack.md, "For crash
 * reporters").
 *
 *   jitmap-stack-walk CORE | PID
 *
 * A crash reporter has each thread's registers and a way to read memory: here, a core or a
 * stopped process, both through jitmap/stopped.h (a process's files from /proc/PID/maps; its
 * threads are let go before anything is printed). It finds the JIT entries (the process model, jitmap/process.h) and walks each
 * thread with a jitmap_stacker (jitmap/stack.h): JIT frames are libjitmap's to unwind; native
 * frames are this program's, and it unwinds them with libjitmap's CFI reader on each mapped
 * file's .eh_frame (jitmap-stack uses elfutils instead). Each frame at a stackmap record shows
 * its values, evaluated with the frame's registers (jitmap_location_eval_frame).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jitmap/arch.h>
#include <jitmap/jitmap.h>
#include <jitmap/process.h>
#include <jitmap/stack.h>
#include <jitmap/stopped.h>

/* -- Native code: the files the core maps, each with its CFI, read at first need -- */

struct module {
	const char *path;
	uint64_t lo, hi; /* what the process mapped of it */
	jitmap_image *image;
	jitmap_cfi *cfi;
	int tried, opened;
	char *copy; /* the path, when this program owns it */
};

struct walker {
	jitmap_stopped *stopped;
	FILE *out;
	jitmap_target memory;
	jitmap_arch arch;
	struct module *mods;
	size_t nmods;
};

static int read_memory(const struct walker *w, uint64_t addr, void *buf, size_t len)
{
	char why[8];
	return w->memory.read_mem(w->memory.ctx, addr, buf, len, why, sizeof(why)) ? -EFAULT : 0;
}

static void find_modules(struct walker *w)
{
	const size_t n = jitmap_stopped_num_mappings(w->stopped);
	w->mods = calloc(n ? n : 1, sizeof(*w->mods));
	for (size_t i = 0; w->mods && i < n; i++) {
		const jitmap_stopped_mapping_info *m = jitmap_stopped_mapping(w->stopped, i);
		struct module *prev = w->nmods ? &w->mods[w->nmods - 1] : NULL;
		if (prev && !strcmp(prev->path, m->path))
			prev->hi = m->end; /* the same file's next segment */
		else
			w->mods[w->nmods++] = (struct module){m->path, m->start, m->end, NULL, NULL, 0, 0, NULL};
	}
}

/* A live process's files, from /proc/PID/maps. */
static void find_live_modules(struct walker *w, pid_t pid)
{
	char path[64], line[4096 + 128];
	size_t cap = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f)) {
		uint64_t lo, hi;
		int at = 0;
		char *file = NULL;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %*s %*s %*s %n", &lo, &hi, &at) != 2 ||
		    !(file = strchr(line + at, '/')))
			continue;
		file[strcspn(file, "\n")] = 0;
		struct module *prev = w->nmods ? &w->mods[w->nmods - 1] : NULL;
		if (prev && !strcmp(prev->path, file)) {
			prev->hi = hi;
			continue;
		}
		if (w->nmods == cap) {
			struct module *m = realloc(w->mods, (cap = cap ? 2 * cap : 64) * sizeof(*m));
			if (!m)
				break;
			w->mods = m;
		}
		char *copy = strdup(file);
		if (copy)
			w->mods[w->nmods++] = (struct module){copy, lo, hi, NULL, NULL, 0, 0, copy};
	}
	if (f)
		fclose(f);
}

/* A module's file, moved to where it is loaded; its bias. */
static uint64_t open_module(struct module *m)
{
	jitmap_error err;
	if (!m->image && !m->opened++)
		m->image = jitmap_image_open_file(m->path, &err);
	/* A shared library or a PIE is linked at 0 and mapped at `lo`; an ET_EXEC executable
	 * where it was linked. */
	const uint64_t bias = m->image && jitmap_image_elf_type(m->image) != 2 /* ET_EXEC */
		? m->lo : 0;
	if (m->image)
		jitmap_image_set_load_bias(m->image, bias);
	return bias;
}

static struct module *module_at(struct walker *w, uint64_t pc)
{
	for (size_t i = 0; i < w->nmods; i++) {
		struct module *m = &w->mods[i];
		if (pc < m->lo || pc >= m->hi)
			continue;
		if (!m->tried) {
			m->tried = 1;
			jitmap_error err;
			open_module(m);
			uint64_t addr, len;
			void *eh = NULL;
			if (m->image && jitmap_image_eh_frame(m->image, &addr, &len) == 0 &&
			    (eh = malloc(len)) && read_memory(w, addr, eh, len) == 0)
				m->cfi = jitmap_cfi_new(w->arch, eh, len, addr, NULL, 0, &err);
			free(eh);
		}
		return m;
	}
	return NULL;
}

/* The stacker's native step: one CFI step in a mapped file, or -ENOENT (then the stacker
 * tries the frame pointer). */
static int native_step(void *ctx, const jitmap_frame_regs *regs, bool exact,
		       jitmap_unwind_result *out, bool *caller_exact, char *why, size_t why_len)
{
	struct walker *w = ctx;
	*caller_exact = false;
	struct module *m = module_at(w, exact ? regs->pc : regs->pc - 1);
	if (!m || !m->cfi)
		return -ENOENT;
	const jitmap_unwind_code code = {.arch = w->arch, .cfi = m->cfi, .is_innermost = exact};
	return jitmap_unwind_step(&code, regs, &w->memory, out, why, why_len);
}

/* -- Each frame -- */

struct frame_target {
	const jitmap_frame_regs *regs;
	struct walker *w;
};

/* A register of the frame, as the unwinder left it (little-endian targets). */
static int frame_reg(void *ctx, unsigned regno, void *buf, size_t size, char *why, size_t len)
{
	const struct frame_target *f = ctx;
	(void)why;
	(void)len;
	if (!jitmap_frame_reg_known(f->regs, regno) || size > 8)
		return -ENOENT;
	memcpy(buf, &f->regs->reg[regno], size);
	return JITMAP_REG_RECOVERED; /* what the unwinder knows of a frame is believed */
}

static int frame_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	const struct frame_target *f = ctx;
	return f->w->memory.read_mem(f->w->memory.ctx, addr, buf, len, why, why_len);
}

static int print_frame(void *ctx, const jitmap_stack_frame *f)
{
	struct walker *w = ctx;
	const char *name = NULL;
	const char *where = "";
	if (f->jit) {
		name = f->code.function;
		where = " [JIT]";
	} else {
		struct module *m = module_at(w, f->exact ? f->pc : f->pc - 1);
		if (m && m->image)
			name = jitmap_image_symbolize(m->image, f->exact ? f->pc : f->pc - 1, NULL);
	}
	fprintf(w->out, "  #%-3u 0x%016" PRIx64 " %s%s\n", f->level, f->pc, name ? name : "??", where);
	if (f->record) {
		const struct frame_target ft = {f->regs, w};
		const jitmap_target t = {(void *)&ft, frame_reg, frame_mem};
		JITMAP_OPTS(const jitmap_eval_opts, opts, .frame_level = f->level);
		fprintf(w->out, "       record %" PRIu64 ":", f->record->id);
		for (size_t i = 0; i < f->record->num_locations; i++) {
			jitmap_value v;
			const int rc = jitmap_location_eval_frame(f->stackmap, f->record,
								  &f->record->locations[i], &t,
								  &opts, &v);
			if (rc == 0 && v.available && v.size <= 8)
				fprintf(w->out, " %" PRId64, (int64_t)v.u);
			else
				fprintf(w->out, " ?");
		}
		fprintf(w->out, "\n");
	}
	if (f->stop && f->stop != -ESRCH)
		fprintf(w->out, "       (stops here: %s)\n", f->why);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: jitmap-stack-walk CORE | PID\n");
		return 2;
	}
	jitmap_error err;
	struct walker w = {.out = stdout};
	char *end, *text = NULL;
	size_t text_len = 0;
	const long pid = strtol(argv[1], &end, 10);
	const bool live = !*end && pid > 0 && access(argv[1], F_OK) != 0;
	/* A live process: every thread stopped until jitmap_stopped_detach. */
	w.stopped = live ? jitmap_stopped_open_pid((pid_t)pid, NULL, &err)
			 : jitmap_stopped_open_core(argv[1], NULL, &err);
	if (!w.stopped) {
		fprintf(stderr, "jitmap-stack-walk: %s: %s\n", argv[1], err.reason);
		return 1;
	}
	if (!(w.out = open_memstream(&text, &text_len))) {
		fprintf(stderr, "jitmap-stack-walk: out of memory\n");
		jitmap_stopped_free(w.stopped);
		return 1;
	}
	w.memory = jitmap_stopped_target(w.stopped);
	w.arch = jitmap_stopped_arch(w.stopped);
	if (live)
		find_live_modules(&w, (pid_t)pid);
	else
		find_modules(&w);

	/* The JIT entries: every __jit_debug_descriptor in a core's mapped files (a live
	 * process's: its modules', below; jitmap_stopped_find_symbol finds none there). */
	JITMAP_OPTS(const jitmap_process_opts, popts, .flags = JITMAP_PROCESS_LAZY);
	jitmap_process *p = jitmap_process_new(&w.memory, &popts);
	jitmap_process_scan_begin(p);
	uint64_t desc[8];
	const size_t nd = jitmap_stopped_find_symbol(w.stopped, JITMAP_JIT_DESCRIPTOR_SYMBOL, desc,
						     NULL, 8);
	for (size_t i = 0; i < nd && i < 8; i++)
		jitmap_process_scan_descriptor(p, desc[i], "the program");
	for (size_t i = 0; live && i < w.nmods; i++) {
		const uint64_t bias = open_module(&w.mods[i]);
		if (w.mods[i].image)
			jitmap_process_scan_file(p, w.mods[i].path, bias, NULL);
	}
	jitmap_process_scan_end(p);

	JITMAP_OPTS(const jitmap_stacker_opts, sopts, .native_step = native_step, .native_ctx = &w);
	jitmap_stacker *st = jitmap_stacker_new(p, &w.memory, w.arch, &sopts);
	if (!st) {
		fprintf(stderr, "jitmap-stack-walk: %s: no unwinder for this architecture\n", argv[1]);
		return 1;
	}
	for (size_t i = 0; i < jitmap_stopped_num_threads(w.stopped); i++) {
		const jitmap_stopped_thread_info *th = jitmap_stopped_thread(w.stopped, i);
		fprintf(w.out, "thread %d:\n", (int)th->tid);
		if (th->error)
			fprintf(w.out, "  (%s)\n", th->why);
		else
			jitmap_stacker_walk(st, th->regs, print_frame, &w);
	}
	jitmap_stopped_detach(w.stopped); /* a process's threads run again: now print */
	fclose(w.out);
	if (text)
		fputs(text, stdout);
	free(text);

	jitmap_stacker_free(st);
	jitmap_process_free(p);
	for (size_t i = 0; i < w.nmods; i++) {
		jitmap_cfi_free(w.mods[i].cfi);
		jitmap_image_free(w.mods[i].image);
		free(w.mods[i].copy);
	}
	free(w.mods);
	jitmap_stopped_free(w.stopped);
	return 0;
}
