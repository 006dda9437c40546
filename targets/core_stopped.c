/* core_stopped.c: a core as a stopped process (include/jitmap/stopped.h): what a core says
 * of itself (its architecture, threads, mappings, auxiliary vector, the files placed without
 * NT_FILE, its problems), and the core's table of operations that stopped.c asks. Reading
 * the core is core.c's, its bytes core_memory.c's, its files' symbols core_symbols.c's, the
 * JIT files it carries core_jitfiles.c's.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "internal.h"

/* -- What a core says of itself -- */

jitmap_arch jitmap__core_arch(const jitmap__core *c) { return c->arch; }
jitmap_byte_order jitmap__core_byte_order(const jitmap__core *c) { return c->order; }
size_t jitmap__core_num_threads(const jitmap__core *c) { return c->threads.n; }
size_t jitmap__core_num_mappings(const jitmap__core *c) { return c->nmaps; }

const jitmap_stopped_thread_info *jitmap__core_thread(const jitmap__core *c, size_t i)
{
	return i < c->threads.n ? &c->threads.v[i]->pub : NULL;
}

struct jitmap__threads *jitmap__core_threads(jitmap__core *c)
{
	return &c->threads;
}

const jitmap_stopped_mapping_info *jitmap__core_mapping(const jitmap__core *c, size_t i)
{
	return i < c->nmaps ? &c->maps[i] : NULL;
}

int jitmap__core_placed_file(const jitmap__core *c, size_t i, const char **path, uint64_t *bias)
{
	for (size_t k = 0; k < c->nfiles; k++) {
		if (!c->files[k].has_bias || i--)
			continue;
		if (path)
			*path = c->files[k].path;
		if (bias)
			*bias = c->files[k].bias;
		return 0;
	}
	return -ENOENT;
}

const char *jitmap__core_warning(const jitmap__core *c, size_t i)
{
	return jitmap__problem_at(&c->warnings, i);
}

/* The file mapped at `addr`, as the core reads it (stopped.h's jitmap_stopped_mapped_file): a
 * descriptor of its own, or why not. */
int jitmap__core_mapped_file(jitmap__core *c, uint64_t addr, char *path, size_t path_len,
			     char *why, size_t why_len)
{
	const size_t m = jitmap__core_find_map(c, addr);
	if (m == SIZE_MAX) {
		if (why && why_len)
			snprintf(why, why_len, "the core maps no file at 0x%" PRIx64, addr);
		return -ENOENT;
	}
	const size_t fi = c->map_file[m];
	const struct jitmap__core_file *f = &c->files[fi];
	const int fd = jitmap__core_file_fd(c, fi);
	int rc = 0;
	if (fd < 0)
		rc = f->refused ? -ESTALE
		   : (c->flags & JITMAP_CORE_NO_FILES) && !f->given ? -EPERM
		   : f->open_errno ? -f->open_errno : -EINVAL;
	else if ((rc = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
		rc = -errno;
	if (rc < 0) {
		if (why && why_len)
			snprintf(why, why_len, "%s %s", f->path,
				 rc == -ESTALE ? f->refused
				 : rc == -EPERM ? "is not read (the core was opened not to)"
				 : rc == -EINVAL ? "is not a regular file"
				 : "cannot be opened");
		return rc;
	}
	snprintf(path, path_len, "%s", f->path);
	return rc;
}

/* -- The table -- */

static void core_free(void *k) { jitmap__core_free(k); }
static jitmap_arch core_arch(const void *k) { return jitmap__core_arch(k); }
static const char *core_name(const void *k) { return ((const jitmap__core *)k)->name; }
static const char *core_args(const void *k) { return ((const jitmap__core *)k)->args; }
static const char *core_compression(const void *k) { return jitmap__core_compression(k); }
static struct jitmap__threads *core_threads(void *k) { return jitmap__core_threads(k); }
static jitmap_target core_target(void *k) { return jitmap__core_target(k); }
static jitmap_target core_thread_target(void *k, size_t i) { return jitmap__core_thread_target(k, i); }
static size_t core_num_mappings(void *k) { return jitmap__core_num_mappings(k); }
static struct Elf *core_elf(void *k) { return ((jitmap__core *)k)->elf; }
static size_t core_num_jit_files(const void *k) { return jitmap__core_num_jit_files(k); }

static unsigned core_elf_machine(const void *k)
{
	return ((const jitmap__core *)k)->machine;
}

/* The process ID: the first thread's that is not 0 (stopped.h). */
static pid_t core_pid(const void *k)
{
	const jitmap__core *c = k;
	for (size_t i = 0; i < c->threads.n; i++)
		if (c->threads.v[i]->pub.tid)
			return c->threads.v[i]->pub.tid;
	return 0;
}

static const char *core_problem(const void *k, size_t i, uint8_t *status)
{
	const jitmap__core *c = k;
	const char *text = jitmap__core_warning(c, i);
	if (text)
		*status = c->warn_status[i];
	return text;
}

static int core_memory(void *k, uint64_t addr, jitmap_stopped_memory_info *out)
{
	return jitmap__core_memory(k, addr, out);
}

static int core_code_at(void *k, uint64_t pc, char *why, size_t why_len)
{
	return jitmap__core_code_at(k, pc, why, why_len);
}

static int core_module_at(void *k, uint64_t addr, jitmap_stopped_module_info *out)
{
	return jitmap__core_module_at(k, addr, out);
}

static size_t core_build_id_at(void *k, uint64_t addr, uint8_t *out, size_t len)
{
	return jitmap__core_build_id_at(k, addr, out, len);
}

static const jitmap_stopped_mapping_info *core_mapping(void *k, size_t i)
{
	return jitmap__core_mapping(k, i);
}

static int core_mapped_file(void *k, uint64_t addr, char *path, size_t path_len, char *why,
			    size_t why_len)
{
	return jitmap__core_mapped_file(k, addr, path, path_len, why, why_len);
}

static int core_auxv(void *k, uint64_t type, uint64_t *value)
{
	return jitmap__core_auxv(k, type, value);
}

static int core_placed_file(const void *k, size_t i, const char **path, uint64_t *bias)
{
	return jitmap__core_placed_file(k, i, path, bias);
}

static size_t core_find_symbol(void *k, const char *name, uint64_t *out, const char **files,
			       size_t max)
{
	return jitmap__core_find_symbol(k, name, out, files, max);
}

static int core_small(const void *k, uint64_t *stack_bytes, uint64_t *kept, uint64_t *left)
{
	return jitmap__core_small(k, stack_bytes, kept, left);
}

static const jitmap_stopped_jit_file_info *core_jit_file(const void *k, size_t i)
{
	/* the same fields (the core's own type goes with the tools' move) */
	return jitmap__core_jit_file_at(k, i);
}

static int core_each_file(void *k, jitmap__core_file_fn fn, void *ctx)
{
	return jitmap__core_each_file(k, fn, ctx);
}

const struct jitmap__stopped_ops jitmap__core_ops = {
	.kind = JITMAP_STOPPED_CORE,
	.free = core_free,
	.arch = core_arch,
	.elf_machine = core_elf_machine,
	.name = core_name,
	.args = core_args,
	.pid = core_pid,
	.compression = core_compression,
	.threads = core_threads,
	.problem = core_problem,
	.target = core_target,
	.thread_target = core_thread_target,
	.thread_stack_target = core_thread_target, /* a core's memory is the stop's */
	.memory = core_memory,
	.code_at = core_code_at,
	.module_at = core_module_at,
	.build_id_at = core_build_id_at,
	.num_mappings = core_num_mappings,
	.mapping = core_mapping,
	.mapped_file = core_mapped_file,
	.auxv = core_auxv,
	.placed_file = core_placed_file,
	.find_symbol = core_find_symbol,
	.elf = core_elf,
	.small = core_small,
	.num_jit_files = core_num_jit_files,
	.jit_file = core_jit_file,
	.each_file = core_each_file,
};
