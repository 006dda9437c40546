/* stack_signature.c: jitmap-stack --signature: the crashing thread's frames as a crash
 * signature, the key a crash pipeline groups reports by (Mozilla's Socorro, Sentry): one
 * bug that crashes many times must give one signature, two crash sites two.
 *
 * Those pipelines key a frame by its function, else by its module and the PC's offset in it,
 * else by the bare address. A JIT frame has no module, so its address lands in the key and
 * moves with ASLR and with where the JIT put its code: one bug becomes as many signatures as
 * crashes. Here a JIT frame is keyed by what jitmap knows of it, its function's name and the
 * stackmap record at its PC, and no key ever holds an absolute address. The shape is
 * Socorro's (socorro/signature/rules.py, CSignatureTool): skip the frames every crash passes
 * through (abort, raise, the signal trampoline), take the next frames, join them with " | ".
 * docs/jitmap-stack.md, "Crash signatures", is the user's account.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "stack_tool.h"

/* -- Frames every crash passes through -- */

/* Native functions a crash goes through on its way to the signal, whoever crashed: the C
 * library's abort and raise (glibc's names, the tail call GDB rebuilds inside pthread_kill,
 * musl's), its assertion and fatal-error reporters, the C++ runtime's terminate path, and the
 * signal trampolines. A leading run of them is skipped: they would make every abort() one
 * signature. Compared after the symbol version and parameters are dropped. */
static const char *const irrelevant[] = {
	/* the signal trampolines: glibc x86-64, the vDSO's on AArch64 and others */
	"__restore_rt", "__kernel_rt_sigreturn", "__kernel_sigreturn",
	/* abort and raise (glibc, with its internal aliases; musl) */
	"raise", "gsignal", "abort", "__GI_raise", "__GI_abort", "pthread_kill",
	"__pthread_kill", "__pthread_kill_implementation", "__pthread_kill_internal",
	"__GI___pthread_kill", "a_crash", "__syscall_cp_asm",
	/* assert() and the C library's own fatal errors (heap corruption, fortify) */
	"__assert_fail", "__assert_fail_base", "__assert_perror_fail", "__assert",
	"__GI___assert_fail", "__libc_message", "__libc_message_impl", "__libc_fatal",
	"malloc_printerr", "__fortify_fail", "__chk_fail", "__stack_chk_fail",
	/* the C++ runtime's way to abort (an uncaught exception, std::terminate) */
	"std::terminate", "std::__terminate", "__cxxabiv1::__terminate",
	"__gnu_cxx::__verbose_terminate_handler", "__cxa_call_terminate", "__cxa_throw",
	"__cxa_rethrow",
};

/* The return type a demangled name of a function template carries (`unsigned long
 * ns::twice<unsigned char>`, from its symbol; DWARF's name has none): what precedes the last
 * space outside brackets, before any `operator` (`operator new`, a conversion operator's
 * `operator unsigned long` are names). `s` is cut in place. */
static void drop_return_type(char *s)
{
	const char *op = strstr(s, "operator");
	const size_t end = op ? (size_t)(op - s) : strlen(s);
	size_t last = 0;
	int depth = 0;
	for (size_t i = 0; i < end; i++) {
		depth += s[i] == '<' || s[i] == '(' || s[i] == '[' || s[i] == '{' ? 1
		       : s[i] == '>' || s[i] == ')' || s[i] == ']' || s[i] == '}' ? -1 : 0;
		if (s[i] == ' ' && depth == 0)
			last = i + 1;
	}
	if (last && s[last])
		memmove(s, s + last, strlen(s + last) + 1);
}

/* A native function's name less what changes between builds of the same code or says
 * nothing of the site: the symbol version (`pthread_kill@@GLIBC_2.34`), a compiler's clone
 * suffix (` [clone .cold]`; `.isra.0` is kept: it is the function GDB names), and a C++
 * name's parameter list and return type (`ns::f(int)` is `ns::f`, as Socorro and Sentry
 * drop them: so a build with DWARF and one with symbols alone agree; an operator's own
 * parentheses stay: `T::operator()`). A JIT function's name is the runtime's, kept as it is
 * (V8's `JS:*f file.js:1:1` is no C++). A new string, NULL when out of memory. */
static char *normalize(const char *function)
{
	char *s = strdup(function);
	if (!s)
		return NULL;
	char *at = strchr(s, '@');
	if (at && at != s)
		*at = '\0';
	char *clone = strstr(s, " [clone ");
	if (clone)
		*clone = '\0';
	size_t n = strlen(s);
	while (n && s[n - 1] == ' ')
		s[--n] = '\0';
	/* a trailing "(...)" or "(...) const", parentheses balanced */
	const char *close = strrchr(s, ')');
	if (!close || (strcmp(close, ")") && strcmp(close, ") const")))
		return s;
	size_t open = (size_t)(close - s) + 1;
	for (int depth = 0; open-- > 0;) {
		depth += s[open] == ')' ? 1 : s[open] == '(' ? -1 : 0;
		if (!depth)
			break;
	}
	if (open == (size_t)-1 || open == 0) /* unbalanced, or nothing before it */
		return s;
	const size_t op = strlen("operator");
	const bool operator_call = open >= op && !strncmp(s + open - op, "operator", op) &&
				   s[open + 1] == ')';
	if (!operator_call)
		s[open] = '\0';
	drop_return_type(s);
	return s;
}

static bool is_irrelevant(const struct frame_out *f, const char *name)
{
	if (f->jit)
		return false;
	if (!name) /* a trampoline without a symbol: the vDSO's, on a stripped vDSO */
		return !f->in_module && f->mapping && !strcmp(f->mapping, "[vdso]");
	for (size_t i = 0; i < sizeof(irrelevant) / sizeof(irrelevant[0]); i++)
		if (!strcmp(name, irrelevant[i]))
			return true;
	return false;
}

/* -- Keys -- */

/* A frame's key, stable under ASLR and the JIT's placement of its code:
 *   a JIT frame:          NAME#ID at a stackmap record (its ID), else NAME; unnamed code:
 *                         jit@0xOFFSET in its function's (or code range's) code;
 *   a named native frame: MODULE!NAME (MODULE the file's base name, or the mapping's name
 *                         such as [vdso]; NAME alone where there is neither), #ID at a
 *                         record as for JIT code;
 *   an unnamed one:       MODULE@0xOFFSET (the PC less the module's load bias, Socorro's
 *                         module_offset form), else the mapping's name, else "??".
 * A new string, NULL when out of memory. */
static char *frame_key(const struct frame_out *f, const char *name)
{
	char id[32] = "";
	if (f->at_record)
		snprintf(id, sizeof(id), "#%" PRIu64, f->record_id);
	char *key = NULL;
	int rc;
	if (f->jit && name)
		rc = asprintf(&key, "%s%s", name, id);
	else if (f->jit && f->code_lo && f->pc >= f->code_lo)
		rc = asprintf(&key, "jit@0x%" PRIx64 "%s", f->pc - f->code_lo, id);
	else if (f->jit)
		rc = asprintf(&key, "jit%s", id);
	else if (name)
		rc = asprintf(&key, "%s%s%s%s", f->module ? f->module : f->mapping ? f->mapping : "",
			      f->module || f->mapping ? "!" : "", name, id);
	else if (f->in_module && f->module)
		rc = asprintf(&key, "%s@0x%" PRIx64, f->module, f->module_offset);
	else
		rc = asprintf(&key, "%s", f->mapping ? f->mapping : "??");
	return rc < 0 ? NULL : key;
}

/* -- The signature -- */

struct sig_frame {
	const struct frame_out *f;
	char *key;
	unsigned repeats; /* this frame and the frames of the same key right after it */
};

enum sig_end { END_LIMIT, END_STACK, END_GUESS };

struct signature {
	const struct thread *th; /* NULL: no thread has frames (error says why) */
	size_t skipped;          /* frames skipped before the first one taken */
	struct sig_frame frames[SIGNATURE_FRAMES];
	unsigned n;
	enum sig_end end;
	const struct frame_out *guess; /* END_GUESS: the first frame reached by a guess */
	char *text;
	uint64_t hash;
	const char *error;
};

/* FNV-1a, 64 bits: the same text gives the same hash on every machine and version. */
static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325u;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3u;
	}
	return h;
}

/* The thread that crashed: a core's first thread with a signal (the kernel writes the
 * dumping thread first, every thread with the signal), a live process's first; one the
 * walk reached (--max-threads) and that has frames. */
static const struct thread *crashed_thread(const struct target *t)
{
	const struct thread *first = NULL;
	for (size_t i = 0; i < t->nthreads; i++) {
		const struct thread *th = &t->threads[i];
		if (!th->nframes)
			continue;
		if (!t->live && th->info->signal)
			return th;
		if (!first)
			first = th;
	}
	return first;
}

/* Take the frames of `th` from `from`, at most SIGNATURE_FRAMES keys (a run of one key, as
 * recursion makes, is one), up to the first frame a guess reached: 0, or -1 when out of
 * memory. */
static int take_frames(struct signature *s, const struct thread *th, size_t from,
		       char **names)
{
	s->end = END_STACK;
	for (size_t k = from; k < th->nframes; k++) {
		const struct frame_out *f = &th->frames[k];
		if (f->guess) {
			s->end = END_GUESS;
			s->guess = f;
			return 0;
		}
		char *key = frame_key(f, names[k]);
		if (!key)
			return -1;
		if (s->n && !strcmp(s->frames[s->n - 1].key, key)) {
			s->frames[s->n - 1].repeats++;
			free(key);
			continue;
		}
		if (s->n == SIGNATURE_FRAMES) {
			free(key);
			s->end = END_LIMIT;
			return 0;
		}
		s->frames[s->n++] = (struct sig_frame){f, key, 1};
	}
	return 0;
}

static void drop_frames(struct signature *s)
{
	for (unsigned i = 0; i < s->n; i++)
		free(s->frames[i].key);
	s->n = 0;
	s->guess = NULL;
}

struct signature *stack_signature_make(const struct target *t)
{
	struct signature *s = calloc(1, sizeof(*s));
	if (!s) {
		stack_problem("no signature: out of memory");
		return NULL;
	}
	const struct thread *th = crashed_thread(t);
	if (!th) {
		s->error = "no thread's stack could be read";
		return s;
	}
	s->th = th;
	char **names = calloc(th->nframes, sizeof(*names));
	bool oom = !names;
	for (size_t k = 0; !oom && k < th->nframes; k++)
		oom = th->frames[k].function &&
		      !(names[k] = th->frames[k].jit ? strdup(th->frames[k].function)
						     : normalize(th->frames[k].function));
	size_t from = 0;
	while (!oom && from < th->nframes && !th->frames[from].guess &&
	       is_irrelevant(&th->frames[from], names[from]))
		from++;
	oom = oom || take_frames(s, th, from, names);
	/* Every frame read is one that every crash passes through (an abort with its caller
	 * unknown): those frames, rather than no signature. */
	if (!oom && !s->n && from) {
		drop_frames(s);
		oom = take_frames(s, th, 0, names);
		from = 0;
	}
	s->skipped = from;
	for (size_t k = 0; names && k < th->nframes; k++)
		free(names[k]);
	free(names);
	size_t len = 1;
	for (unsigned i = 0; !oom && i < s->n; i++)
		len += strlen(s->frames[i].key) + 3;
	if (!oom && s->n && (s->text = malloc(len))) {
		s->text[0] = '\0';
		for (unsigned i = 0; i < s->n; i++) {
			if (i)
				strcat(s->text, " | ");
			strcat(s->text, s->frames[i].key);
		}
		s->hash = fnv1a(s->text);
	}
	if (oom || (s->n && !s->text)) {
		stack_signature_free(s);
		stack_problem("no signature: out of memory");
		return NULL;
	}
	if (!s->n)
		s->error = "the thread's first frame was reached by a guess";
	return s;
}

void stack_signature_free(struct signature *s)
{
	if (!s)
		return;
	drop_frames(s);
	free(s->text);
	free(s);
}

/* -- Output -- */

static const char *end_name(enum sig_end e)
{
	return e == END_LIMIT ? "limit" : e == END_GUESS ? "guess" : "stack";
}

void stack_signature_print_text(const struct signature *s)
{
	if (!s->text) {
		printf("signature: none (%s)\n", s->error);
		return;
	}
	printf("signature: %s\n", s->text);
	printf("hash: %016" PRIx64 "\n", s->hash);
	printf("thread %d", (int)s->th->info->tid);
	if (s->th->info->signal)
		printf(" (signal %d)", s->th->info->signal);
	if (s->skipped)
		printf(", frames #0 to #%u skipped (abort, raise and the like)",
		       s->th->frames[s->skipped - 1].level);
	printf(":\n");
	for (unsigned i = 0; i < s->n; i++) {
		const struct sig_frame *g = &s->frames[i];
		printf("  #%-3u %s%s", g->f->level, g->key, g->f->jit ? " [JIT]" : "");
		if (g->repeats > 1)
			printf(" (and the %u frames after it)", g->repeats - 1);
		printf("\n");
	}
	if (s->end == END_GUESS)
		printf("  (the signature ends before #%u, which a guess reached: %s; a guessed "
		       "frame may be wrong)\n", s->guess->level, s->guess->guess);
	else if (s->end == END_STACK)
		printf("  (the stack ends there)\n");
}

void stack_signature_print_json(const struct signature *s)
{
	printf("{\"text\": ");
	json_string_or_null(stdout, s->text);
	if (s->text)
		printf(", \"hash\": \"%016" PRIx64 "\"", s->hash);
	else
		printf(", \"hash\": null");
	printf(", \"thread\": ");
	if (s->th)
		printf("%d", (int)s->th->info->tid);
	else
		printf("null");
	printf(", \"skipped\": %zu, \"frames\": [", s->skipped);
	for (unsigned i = 0; i < s->n; i++) {
		const struct sig_frame *g = &s->frames[i];
		printf("%s{\"index\": %u, \"key\": ", i ? ", " : "", g->f->level);
		json_string(stdout, g->key);
		printf(", \"jit\": %s, \"repeats\": %u}", g->f->jit ? "true" : "false", g->repeats);
	}
	printf("], \"end\": ");
	if (s->text)
		printf("\"%s\"", end_name(s->end));
	else
		printf("null");
	printf(", \"guess\": ");
	json_string_or_null(stdout, s->end == END_GUESS && s->guess ? s->guess->guess : NULL);
	if (s->error) {
		printf(", \"error\": ");
		json_string(stdout, s->error);
	}
	printf("}");
}
