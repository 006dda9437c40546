/* stopped.c: a stopped process, a core or a live one, behind one set of calls (see
 * include/jitmap/stopped.h).
 *
 * Each call is the kind's own (core.c, live.c): the openers check their options and say their
 * errors in their words, the targets and answers are theirs; the threads both kinds hold in
 * one shape (threads.c) are given as they are.
 */
#include "internal.h"

struct jitmap_stopped {
	jitmap_stopped_kind kind;
	jitmap_core *core;
	jitmap_live *live;
	struct jitmap__threads *threads; /* the core's or the live process's */
	pid_t pid;
};

/* The options, checked as jitmap_core_open and jitmap_live_open check theirs: 0, or -EINVAL
 * with `err` filled. `*known` is the caller's opts as this library knows them (zeros past
 * the caller's sz). */
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

static jitmap_stopped *wrap(jitmap_core *core, jitmap_live *live, jitmap_error *err)
{
	if (!core && !live)
		return NULL; /* errno and err: the opener's */
	jitmap_stopped *s = calloc(1, sizeof(*s));
	if (!s) {
		jitmap_core_free(core);
		jitmap_live_free(live);
		jitmap__fail(err, -ENOMEM, 0, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	s->kind = core ? JITMAP_STOPPED_CORE : JITMAP_STOPPED_LIVE;
	s->core = core;
	s->live = live;
	s->threads = core ? jitmap__core_threads(core) : jitmap__live_threads(live);
	if (live)
		s->pid = jitmap_live_pid(live);
	for (size_t i = 0; core && !s->pid && i < s->threads->n; i++)
		s->pid = s->threads->v[i]->pub.tid;
	return s;
}

jitmap_stopped *jitmap_stopped_open_core(const char *path, const jitmap_stopped_opts *opts,
					 jitmap_error *err)
{
	jitmap_stopped_opts o;
	if (!opts_of(opts, &o, err))
		return NULL;
	JITMAP_OPTS(const jitmap_core_opts, co, .exe = o.exe, .sysroot = o.sysroot,
		    .flags = o.flags & JITMAP_STOPPED_NO_FILES ? JITMAP_CORE_NO_FILES : 0,
		    .interrupt = o.interrupt, .debug_dirs = o.debug_dirs);
	return wrap(jitmap_core_open(path, &co, err), NULL, err);
}

jitmap_stopped *jitmap_stopped_open_pid(pid_t pid, const jitmap_stopped_opts *opts,
					jitmap_error *err)
{
	jitmap_stopped_opts o;
	if (!opts_of(opts, &o, err))
		return NULL;
	JITMAP_OPTS(const jitmap_live_opts, lo, .max_threads = o.max_threads,
		    .max_rounds = o.max_rounds,
		    .flags = (o.flags & JITMAP_STOPPED_NO_STOP ? JITMAP_LIVE_NO_STOP : 0) |
			     (o.flags & JITMAP_STOPPED_BY_THREAD ? JITMAP_LIVE_BY_THREAD : 0) |
			     (o.flags & JITMAP_STOPPED_SNAPSHOT ? JITMAP_LIVE_SNAPSHOT : 0),
		    .interrupt = o.interrupt, .stack_bytes = o.stack_bytes);
	return wrap(NULL, jitmap_live_open(pid, &lo, err), err);
}

int jitmap_stopped_detach(jitmap_stopped *s)
{
	return s && s->live ? jitmap_live_detach(s->live) : 0;
}

void jitmap_stopped_free(jitmap_stopped *s)
{
	if (!s)
		return;
	jitmap_core_free(s->core);
	jitmap_live_free(s->live);
	free(s);
}

/* -- Accessors -- */

jitmap_stopped_kind jitmap_stopped_kind_of(const jitmap_stopped *s) { return s->kind; }
pid_t jitmap_stopped_pid(const jitmap_stopped *s) { return s->pid; }
jitmap_core *jitmap_stopped_core(jitmap_stopped *s) { return s->core; }
jitmap_live *jitmap_stopped_live(jitmap_stopped *s) { return s->live; }
size_t jitmap_stopped_num_threads(const jitmap_stopped *s) { return s->threads->n; }

jitmap_arch jitmap_stopped_arch(const jitmap_stopped *s)
{
	return s->core ? jitmap_core_arch(s->core) : jitmap_live_arch(s->live);
}

jitmap_byte_order jitmap_stopped_byte_order(const jitmap_stopped *s)
{
	return s->threads->order;
}

const char *jitmap_stopped_name(const jitmap_stopped *s)
{
	return s->live ? jitmap_live_name(s->live) : s->core->name;
}

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

const char *jitmap_stopped_warning(const jitmap_stopped *s, size_t i)
{
	return s->core ? jitmap_core_warning(s->core, i) : jitmap_live_warning(s->live, i);
}

/* -- Memory and code: the kind's own -- */

jitmap_target jitmap_stopped_target(jitmap_stopped *s)
{
	return s->core ? jitmap_core_target(s->core) : jitmap_live_target(s->live);
}

jitmap_target jitmap_stopped_thread_target(jitmap_stopped *s, size_t i)
{
	return s->core ? jitmap_core_thread_target(s->core, i)
		       : jitmap_live_thread_target(s->live, i);
}

jitmap_target jitmap_stopped_thread_stack_target(jitmap_stopped *s, size_t i)
{
	return s->core ? jitmap_core_thread_target(s->core, i)
		       : jitmap_live_thread_stack_target(s->live, i);
}

int jitmap_stopped_code_at(jitmap_stopped *s, uint64_t pc, char *why, size_t why_len)
{
	if (!s)
		return -EINVAL;
	return s->core ? jitmap_core_code_at(s->core, pc, why, why_len)
		       : jitmap_live_code_at(s->live, pc, why, why_len);
}

int jitmap_stopped_module_at(jitmap_stopped *s, uint64_t addr, jitmap_stopped_module_info *out)
{
	if (!s || !out || out->sz < JITMAP__OFFSETOFEND(jitmap_stopped_module_info, bias))
		return -EINVAL;
	const size_t sz = out->sz;
	memset(out, 0, sz < sizeof(*out) ? sz : sizeof(*out));
	out->sz = sz;
	if (s->core)
		return jitmap__core_module_at(s->core, addr, out);
	const jitmap_target mem = jitmap_live_target(s->live);
	return jitmap__live_module_at(s->live, &mem, addr, out);
}

size_t jitmap_stopped_build_id_at(jitmap_stopped *s, uint64_t addr, uint8_t *out, size_t len)
{
	if (!s)
		return 0;
	return s->core ? jitmap_core_build_id_at(s->core, addr, out, len)
		       : jitmap_live_build_id_at(s->live, addr, out, len);
}
