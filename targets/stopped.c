/* stopped.c: a stopped process, a core or a live one, behind one set of calls (see
 * include/jitmap/stopped.h).
 *
 * A jitmap_stopped is the kind's object (a jitmap__core, a jitmap__live) and the kind's table of
 * operations (core_stopped.c, live_stopped.c), set by the opener, as libdwfl keeps a process
 * behind its Dwfl_Thread_Callbacks: every call below asks the table, and none asks which
 * kind it holds. The openers check the options here and hand each kind the fields that are
 * its own; the kind checks them again and says its errors in its words. A slot the kind
 * leaves NULL is a question only the other kind answers: stopped.h's "none" is given here.
 */
#include <stdio.h>

#include "live_internal.h"

struct jitmap_stopped {
	const struct jitmap__stopped_ops *ops;
	void *k;                         /* the kind's object */
	struct jitmap__threads *threads; /* the kind's */
};

/* -- Opening --
 *
 * The options, checked as the kinds check theirs: 0, or -EINVAL with `err` filled. `*known`
 * is the caller's opts as this library knows them (zeros past the caller's sz). */
static int check_opts(const jitmap_stopped_opts *opts, jitmap_stopped_opts *known,
		      jitmap_error *err)
{
	memset(known, 0, sizeof(*known));
	known->sz = sizeof(*known);
	if (err)
		memset(err, 0, sizeof(*err));
	if (!opts)
		return 0;
	if (opts->sz < sizeof(opts->sz))
		return jitmap__fail(err, -EINVAL, 0, "jitmap_stopped_opts.sz is %zu", opts->sz);
	if (!JITMAP__OPTS_VALID(opts, debug_dirs))
		return jitmap__fail(err, -EINVAL, 0, "jitmap_stopped_opts has fields this library "
				    "does not know (set past byte %zu)",
				    JITMAP__OFFSETOFEND(jitmap_stopped_opts, debug_dirs));
	memcpy(known, opts, opts->sz < sizeof(*known) ? opts->sz : sizeof(*known));
	known->sz = sizeof(*known);
	return 0;
}

/* check_opts for an opener: true, or false with errno set. */
static bool opts_of(const jitmap_stopped_opts *opts, jitmap_stopped_opts *known,
		    jitmap_error *err)
{
	const int rc = check_opts(opts, known, err);
	if (rc)
		errno = -rc;
	return !rc;
}

/* The kind's object `k` (NULL: its opener failed, errno and err said why) behind its table. */
static jitmap_stopped *wrap(const struct jitmap__stopped_ops *ops, void *k, jitmap_error *err)
{
	if (!k)
		return NULL;
	jitmap_stopped *s = calloc(1, sizeof(*s));
	if (!s) {
		ops->free(k);
		jitmap__fail(err, -ENOMEM, 0, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	s->ops = ops;
	s->k = k;
	s->threads = ops->threads(k);
	return s;
}

/* A core's options, from the stopped process's. */
#define CORE_OPTS(name, o)                                                                    \
	JITMAP_OPTS(const jitmap__core_opts, name, .exe = (o).exe, .sysroot = (o).sysroot,     \
		    .flags = (o).flags & JITMAP_STOPPED_NO_FILES ? JITMAP_CORE_NO_FILES : 0,  \
		    .interrupt = (o).interrupt, .debug_dirs = (o).debug_dirs)

jitmap_stopped *jitmap_stopped_open_core(const char *path, const jitmap_stopped_opts *opts,
					 jitmap_error *err)
{
	jitmap_stopped_opts o;
	if (!opts_of(opts, &o, err))
		return NULL;
	CORE_OPTS(co, o);
	return wrap(&jitmap__core_ops, jitmap__core_open(path, &co, err), err);
}

jitmap_stopped *jitmap_stopped_open_core_memory(const void *buf, size_t len,
						const jitmap_stopped_opts *opts, jitmap_error *err)
{
	jitmap_stopped_opts o;
	if (!opts_of(opts, &o, err))
		return NULL;
	CORE_OPTS(co, o);
	return wrap(&jitmap__core_ops, jitmap__core_open_memory(buf, len, &co, err), err);
}

jitmap_stopped *jitmap_stopped_open_pid(pid_t pid, const jitmap_stopped_opts *opts,
					jitmap_error *err)
{
	jitmap_stopped_opts o;
	if (!opts_of(opts, &o, err))
		return NULL;
	JITMAP_OPTS(const jitmap__live_opts, lo, .max_threads = o.max_threads,
		    .max_rounds = o.max_rounds,
		    .flags = (o.flags & JITMAP_STOPPED_NO_STOP ? JITMAP_LIVE_NO_STOP : 0) |
			     (o.flags & JITMAP_STOPPED_BY_THREAD ? JITMAP_LIVE_BY_THREAD : 0) |
			     (o.flags & JITMAP_STOPPED_SNAPSHOT ? JITMAP_LIVE_SNAPSHOT : 0),
		    .interrupt = o.interrupt, .stack_bytes = o.stack_bytes);
	return wrap(&jitmap__live_ops, jitmap__live_open(pid, &lo, err), err);
}

int jitmap_stopped_detach(jitmap_stopped *s)
{
	return s && s->ops->detach ? s->ops->detach(s->k) : 0;
}

void jitmap_stopped_free(jitmap_stopped *s)
{
	if (!s)
		return;
	s->ops->free(s->k);
	free(s);
}

/* -- What it is -- */

jitmap_stopped_kind jitmap_stopped_kind_of(const jitmap_stopped *s) { return s->ops->kind; }
jitmap_arch jitmap_stopped_arch(const jitmap_stopped *s) { return s->ops->arch(s->k); }
jitmap_byte_order jitmap_stopped_byte_order(const jitmap_stopped *s) { return s->threads->order; }
unsigned jitmap_stopped_elf_machine(const jitmap_stopped *s) { return s->ops->elf_machine(s->k); }
pid_t jitmap_stopped_pid(const jitmap_stopped *s) { return s->ops->pid(s->k); }
const char *jitmap_stopped_name(const jitmap_stopped *s) { return s->ops->name(s->k); }

const char *jitmap_stopped_args(const jitmap_stopped *s)
{
	return s && s->ops->args ? s->ops->args(s->k) : "";
}

bool jitmap_stopped_is_stopped(const jitmap_stopped *s)
{
	return !s->ops->is_stopped || s->ops->is_stopped(s->k);
}

const char *jitmap_stopped_compression(const jitmap_stopped *s)
{
	return s->ops->compression ? s->ops->compression(s->k) : NULL;
}

/* -- Threads: one list, either kind's (threads.c) -- */

size_t jitmap_stopped_num_threads(const jitmap_stopped *s) { return s->threads->n; }

const jitmap_stopped_thread_info *jitmap_stopped_thread(const jitmap_stopped *s, size_t i)
{
	const struct jitmap__thread *t = jitmap__threads_at(s->threads, i);
	return t ? &t->pub : NULL;
}

int jitmap_stopped_thread_reg(const jitmap_stopped_thread_info *info, unsigned regno,
			      uint64_t *value)
{
	if (!info)
		return -ENOENT;
	/* the thread's first field: the view is the thread (threads.c) */
	return jitmap__thread_reg((const struct jitmap__thread *)(const void *)info, regno,
				  value);
}

int jitmap_stopped_thread_siginfo(const jitmap_stopped_thread_info *info, int *signo,
				  int *code, uint64_t *addr)
{
	const struct jitmap__thread *t = (const struct jitmap__thread *)(const void *)info;
	if (!t || !t->has_siginfo)
		return -ENOENT;
	if (signo)
		*signo = t->sig_no;
	if (code)
		*code = t->sig_code;
	if (addr)
		*addr = t->sig_addr;
	return 0;
}

/* -- Memory and code -- */

jitmap_target jitmap_stopped_target(jitmap_stopped *s) { return s->ops->target(s->k); }

jitmap_target jitmap_stopped_thread_target(jitmap_stopped *s, size_t i)
{
	return s->ops->thread_target(s->k, i);
}

jitmap_target jitmap_stopped_thread_stack_target(jitmap_stopped *s, size_t i)
{
	return s->ops->thread_stack_target(s->k, i);
}

int jitmap_stopped_memory(jitmap_stopped *s, uint64_t addr, jitmap_stopped_memory_info *out)
{
	if (!s || !out || out->sz < JITMAP__OFFSETOFEND(jitmap_stopped_memory_info, source))
		return -EINVAL;
	jitmap_stopped_memory_info full = {.sz = sizeof(full)};
	const int rc = s->ops->memory(s->k, addr, &full);
	return rc ? rc : jitmap__give(out, &full, sizeof(full));
}

int jitmap_stopped_code_at(jitmap_stopped *s, uint64_t pc, char *why, size_t why_len)
{
	return s ? s->ops->code_at(s->k, pc, why, why_len) : -EINVAL;
}

size_t jitmap_stopped_build_id_at(jitmap_stopped *s, uint64_t addr, uint8_t *out, size_t len)
{
	return s ? s->ops->build_id_at(s->k, addr, out, len) : 0;
}

/* -- Modules and mapped files -- */

int jitmap_stopped_module_at(jitmap_stopped *s, uint64_t addr, jitmap_stopped_module_info *out)
{
	if (!s || !out || out->sz < JITMAP__OFFSETOFEND(jitmap_stopped_module_info, bias))
		return -EINVAL;
	const size_t sz = out->sz;
	memset(out, 0, sz < sizeof(*out) ? sz : sizeof(*out));
	out->sz = sz;
	return s->ops->module_at(s->k, addr, out);
}

size_t jitmap_stopped_num_mappings(jitmap_stopped *s) { return s->ops->num_mappings(s->k); }

const jitmap_stopped_mapping_info *jitmap_stopped_mapping(jitmap_stopped *s, size_t i)
{
	return s->ops->mapping(s->k, i);
}

int jitmap_stopped_mapped_file(jitmap_stopped *s, uint64_t addr, char *path, size_t path_len,
			       char *why, size_t why_len)
{
	char none[1];
	if (!why || !why_len) { /* the kinds write their reason */
		why = none;
		why_len = sizeof(none);
	}
	why[0] = 0;
	if (!s || !path || !path_len)
		return -EINVAL;
	return s->ops->mapped_file(s->k, addr, path, path_len, why, why_len);
}

int jitmap_stopped_auxv(jitmap_stopped *s, uint64_t type, uint64_t *value)
{
	return s->ops->auxv(s->k, type, value);
}

int jitmap_stopped_placed_file(const jitmap_stopped *s, size_t i, const char **path,
			       uint64_t *bias)
{
	return s->ops->placed_file ? s->ops->placed_file(s->k, i, path, bias) : -ENOENT;
}

size_t jitmap_stopped_find_symbol(jitmap_stopped *s, const char *name, uint64_t *out,
				  const char **files, size_t max)
{
	return s->ops->find_symbol ? s->ops->find_symbol(s->k, name, out, files, max) : 0;
}

struct Elf *jitmap_stopped_elf(jitmap_stopped *s)
{
	return s && s->ops->elf ? s->ops->elf(s->k) : NULL;
}

/* -- What a core carries -- */

int jitmap_stopped_small(const jitmap_stopped *s, uint64_t *stack_bytes, uint64_t *kept_bytes,
			 uint64_t *left_bytes)
{
	if (!s)
		return -EINVAL;
	return s->ops->small ? s->ops->small(s->k, stack_bytes, kept_bytes, left_bytes) : 0;
}

size_t jitmap_stopped_num_jit_files(const jitmap_stopped *s)
{
	return s->ops->num_jit_files ? s->ops->num_jit_files(s->k) : 0;
}

const jitmap_stopped_jit_file_info *jitmap_stopped_jit_file(const jitmap_stopped *s,
							    size_t i)
{
	return s->ops->jit_file ? s->ops->jit_file(s->k, i) : NULL;
}

/* -- Problems -- */

const char *jitmap_stopped_warning(const jitmap_stopped *s, size_t i)
{
	uint8_t st;
	return s->ops->problem(s->k, i, &st);
}

int jitmap_stopped_problem(const jitmap_stopped *s, size_t i, jitmap_stopped_problem_info *out)
{
	if (!s || !out || out->sz < JITMAP__OFFSETOFEND(jitmap_stopped_problem_info, text))
		return -EINVAL;
	uint8_t st = 0;
	const char *text = s->ops->problem(s->k, i, &st);
	if (!text)
		return -ENOENT;
	const jitmap_stopped_problem_info full = {
		.sz = sizeof(full),
		.kind = st >> 4 ? (jitmap_problem_kind)(st >> 4) : JITMAP_PROBLEM_WARNING,
		.code = (jitmap_problem_code)(st & 15u),
		.text = text,
	};
	return jitmap__give(out, &full, sizeof(full));
}

/* -- For the process model -- */

int jitmap__stopped_each_file(jitmap_stopped *s, jitmap__core_file_fn fn, void *ctx)
{
	return s->ops->each_file ? s->ops->each_file(s->k, fn, ctx) : -ENOTSUP;
}
