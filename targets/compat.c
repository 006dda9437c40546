/* compat.c: TEMPORARY. The calls core.h and live.h exported before stopped.h became the one
 * face, kept only until every caller in tools/ and writers/ asks jitmap_stopped (this file
 * goes in the same change). Each is the internal call of the same name. */
#include "live_internal.h"

jitmap_core *jitmap_core_open(const char *path, const jitmap_core_opts *opts, jitmap_error *err)
{
	return jitmap__core_open(path, opts, err);
}

jitmap_core *jitmap_core_open_memory(const void *buf, size_t len, const jitmap_core_opts *opts, jitmap_error *err)
{
	return jitmap__core_open_memory(buf, len, opts, err);
}

void jitmap_core_free(jitmap_core *c)
{
	jitmap__core_free(c);
}

const char *jitmap_core_compression(const jitmap_core *c)
{
	return jitmap__core_compression(c);
}

jitmap_arch jitmap_core_arch(const jitmap_core *c)
{
	return jitmap__core_arch(c);
}

jitmap_byte_order jitmap_core_byte_order(const jitmap_core *c)
{
	return jitmap__core_byte_order(c);
}

size_t jitmap_core_num_threads(const jitmap_core *c)
{
	return jitmap__core_num_threads(c);
}

const jitmap_core_thread_info *jitmap_core_thread(const jitmap_core *c, size_t i)
{
	return jitmap__core_thread(c, i);
}

int jitmap_core_thread_reg(const jitmap_core_thread_info *t, unsigned regno, uint64_t *value)
{
	return jitmap__core_thread_reg(t, regno, value);
}

jitmap_target jitmap_core_target(jitmap_core *c)
{
	return jitmap__core_target(c);
}

jitmap_target jitmap_core_thread_target(jitmap_core *c, size_t i)
{
	return jitmap__core_thread_target(c, i);
}

int jitmap_core_code_at(jitmap_core *c, uint64_t pc, char *why, size_t why_len)
{
	return jitmap__core_code_at(c, pc, why, why_len);
}

size_t jitmap_core_build_id_at(jitmap_core *c, uint64_t addr, uint8_t *out, size_t len)
{
	return jitmap__core_build_id_at(c, addr, out, len);
}

size_t jitmap_core_num_mappings(const jitmap_core *c)
{
	return jitmap__core_num_mappings(c);
}

const jitmap_core_mapping_info *jitmap_core_mapping(const jitmap_core *c, size_t i)
{
	return jitmap__core_mapping(c, i);
}

int jitmap_core_auxv(const jitmap_core *c, uint64_t type, uint64_t *value)
{
	return jitmap__core_auxv(c, type, value);
}

int jitmap_core_placed_file(const jitmap_core *c, size_t i, const char **path, uint64_t *bias)
{
	return jitmap__core_placed_file(c, i, path, bias);
}

size_t jitmap_core_find_symbol(jitmap_core *c, const char *name, uint64_t *out, const char **files, size_t max)
{
	return jitmap__core_find_symbol(c, name, out, files, max);
}

int jitmap_core_small(const jitmap_core *c, uint64_t *stack_bytes, uint64_t *kept_bytes, uint64_t *left_bytes)
{
	return jitmap__core_small(c, stack_bytes, kept_bytes, left_bytes);
}

size_t jitmap_core_num_jit_files(const jitmap_core *c)
{
	return jitmap__core_num_jit_files(c);
}

const jitmap_core_jit_file *jitmap_core_jit_file_at(const jitmap_core *c, size_t i)
{
	return jitmap__core_jit_file_at(c, i);
}

const char *jitmap_core_warning(const jitmap_core *c, size_t i)
{
	return jitmap__core_warning(c, i);
}

unsigned jitmap_core_elf_machine(const jitmap_core *c)
{
	return c->machine;
}

struct Elf *jitmap_core_elf(jitmap_core *c)
{
	return c ? c->elf : NULL;
}

int jitmap_core_memory(jitmap_core *c, uint64_t addr, jitmap_core_memory_info *out)
{
	if (!c || !out)
		return -EINVAL;
	jitmap_stopped_memory_info full = {.sz = sizeof(full)};
	const int rc = jitmap__core_memory(c, addr, &full);
	if (rc)
		return rc;
	return jitmap__give(out, &full, sizeof(full)); /* the same fields */
}

jitmap_live *jitmap_live_open(pid_t pid, const jitmap_live_opts *opts, jitmap_error *err)
{
	return jitmap__live_open(pid, opts, err);
}

int jitmap_live_detach(jitmap_live *l)
{
	return jitmap__live_detach(l);
}

void jitmap_live_free(jitmap_live *l)
{
	jitmap__live_free(l);
}

pid_t jitmap_live_pid(const jitmap_live *l)
{
	return jitmap__live_pid(l);
}

const char *jitmap_live_name(const jitmap_live *l)
{
	return jitmap__live_name(l);
}

jitmap_arch jitmap_live_arch(const jitmap_live *l)
{
	return jitmap__live_arch(l);
}

jitmap_byte_order jitmap_live_byte_order(const jitmap_live *l)
{
	return jitmap__live_byte_order(l);
}

bool jitmap_live_stopped(const jitmap_live *l)
{
	return jitmap__live_stopped(l);
}

size_t jitmap_live_num_threads(const jitmap_live *l)
{
	return jitmap__live_num_threads(l);
}

const jitmap_live_thread_info *jitmap_live_thread(const jitmap_live *l, size_t i)
{
	return jitmap__live_thread(l, i);
}

int jitmap_live_thread_reg(const jitmap_live_thread_info *t, unsigned regno, uint64_t *value)
{
	return jitmap__live_thread_reg(t, regno, value);
}

jitmap_target jitmap_live_target(jitmap_live *l)
{
	return jitmap__live_target(l);
}

jitmap_target jitmap_live_thread_target(jitmap_live *l, size_t i)
{
	return jitmap__live_thread_target(l, i);
}

jitmap_target jitmap_live_thread_stack_target(jitmap_live *l, size_t i)
{
	return jitmap__live_thread_stack_target(l, i);
}

int jitmap_live_code_at(jitmap_live *l, uint64_t pc, char *why, size_t why_len)
{
	return jitmap__live_code_at(l, pc, why, why_len);
}

int jitmap_live_mapped_file(jitmap_live *l, uint64_t addr, char *path, size_t path_len, char *why, size_t why_len)
{
	return jitmap__live_mapped_file(l, addr, path, path_len, why, why_len);
}

size_t jitmap_live_build_id_at(jitmap_live *l, uint64_t addr, uint8_t *out, size_t len)
{
	return jitmap__live_build_id_at(l, addr, out, len);
}

const char *jitmap_live_warning(const jitmap_live *l, size_t i)
{
	return jitmap__live_warning(l, i);
}
