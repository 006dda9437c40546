/* abi.c: what a binding needs to check that it matches this library (libbpf's
 * libbpf_version_string() and sized options are the model): the version, and the size of
 * each public struct a binding may mirror (gdb-scripts/jitmap/native.py checks its ctypes
 * structures against these when it loads the library). */
#include "internal.h"
#include "jitmap/arch.h"
#include "jitmap/frame.h"
#include "jitmap/process.h"
#include "jitmap/stack.h"
#include "jitmap/stopped.h"
#include "jitmap/unwind.h"

#ifndef JITMAP_VERSION_STRING
#define JITMAP_VERSION_STRING "unknown"
#endif

const char *jitmap_version(void)
{
	return JITMAP_VERSION_STRING;
}

#define STRUCT(t) {#t, sizeof(t)}
static const struct {
	const char *name;
	size_t size;
} structs[] = {
	STRUCT(jitmap_error),         STRUCT(jitmap_location),       STRUCT(jitmap_live_out),
	STRUCT(jitmap_function),      STRUCT(jitmap_record),         STRUCT(jitmap_blob),
	STRUCT(jitmap_parse_opts),    STRUCT(jitmap_statepoint_info), STRUCT(jitmap_hit),
	STRUCT(jitmap_value),         STRUCT(jitmap_target),         STRUCT(jitmap_eval_opts),
	STRUCT(jitmap_jit_descriptor), STRUCT(jitmap_jit_code),      STRUCT(jitmap_process_opts),
	STRUCT(jitmap_source_info),   STRUCT(jitmap_image_opts),     STRUCT(jitmap_image_range),
	STRUCT(jitmap_image_symbol_info), STRUCT(jitmap_vref),            STRUCT(jitmap_vslot),
	STRUCT(jitmap_vframe_layout),     STRUCT(jitmap_deopt_layout), STRUCT(jitmap_frame_desc),
	STRUCT(jitmap_callee_saved_write), STRUCT(jitmap_perfmap_sym),
	STRUCT(jitmap_frame_regs),        STRUCT(jitmap_unwind_code), STRUCT(jitmap_unwind_result),
	STRUCT(jitmap_spill),             STRUCT(jitmap_descriptor_info),
	STRUCT(jitmap_spill),             STRUCT(jitmap_code_info),   STRUCT(jitmap_stack_frame),
	STRUCT(jitmap_stacker_opts),
	STRUCT(jitmap_stopped_opts),      STRUCT(jitmap_stopped_thread_info),
	STRUCT(jitmap_stopped_memory_info), STRUCT(jitmap_stopped_mapping_info),
	STRUCT(jitmap_stopped_problem_info), STRUCT(jitmap_stopped_reg),
	STRUCT(jitmap_stopped_jit_file_info), STRUCT(jitmap_stopped_module_info),
	STRUCT(jitmap_unwind_saved),      STRUCT(jitmap_unwind_rule),
};

/* The fields a binding may mirror, with their offsets: a binding checks each of its fields,
 * not only the struct's size (two fields swapped keep the size). */
#define FIELD(t, f) {#t, #f, offsetof(t, f)}
static const struct {
	const char *type, *field;
	size_t offset;
} fields[] = {
	FIELD(jitmap_error, code), FIELD(jitmap_error, offset), FIELD(jitmap_error, reason),
	FIELD(jitmap_perfmap_sym, sz), FIELD(jitmap_perfmap_sym, name),
	FIELD(jitmap_perfmap_sym, lo), FIELD(jitmap_perfmap_sym, hi),
	FIELD(jitmap_perfmap_sym, origin), FIELD(jitmap_perfmap_sym, source),
	FIELD(jitmap_perfmap_sym, line), FIELD(jitmap_perfmap_sym, file),
	FIELD(jitmap_perfmap_sym, file_line), FIELD(jitmap_perfmap_sym, kind),
	FIELD(jitmap_perfmap_sym, in_core),
	FIELD(jitmap_frame_regs, pc), FIELD(jitmap_frame_regs, reg), FIELD(jitmap_frame_regs, known),
	FIELD(jitmap_unwind_code, arch), FIELD(jitmap_unwind_code, cfi), FIELD(jitmap_unwind_code, sm),
	FIELD(jitmap_unwind_code, func_lo), FIELD(jitmap_unwind_code, func_hi),
	FIELD(jitmap_unwind_code, is_innermost), FIELD(jitmap_unwind_code, methods),
	FIELD(jitmap_unwind_code, order),
	FIELD(jitmap_unwind_result, caller), FIELD(jitmap_unwind_result, cfa),
	FIELD(jitmap_unwind_result, method), FIELD(jitmap_unwind_result, restored),
	FIELD(jitmap_location, kind), FIELD(jitmap_location, size),
	FIELD(jitmap_location, dwarf_reg), FIELD(jitmap_location, offset),
	FIELD(jitmap_live_out, dwarf_reg), FIELD(jitmap_live_out, size),
	FIELD(jitmap_spill, dwarf_reg), FIELD(jitmap_spill, frame_index),
	FIELD(jitmap_function, address), FIELD(jitmap_function, raw_address),
	FIELD(jitmap_function, stack_size), FIELD(jitmap_function, record_count),
	FIELD(jitmap_function, first_record), FIELD(jitmap_function, blob),
	FIELD(jitmap_function, section_offset), FIELD(jitmap_function, name),
	FIELD(jitmap_record, id), FIELD(jitmap_record, instruction_offset),
	FIELD(jitmap_record, flags), FIELD(jitmap_record, num_locations),
	FIELD(jitmap_record, num_live_outs), FIELD(jitmap_record, locations),
	FIELD(jitmap_record, live_outs), FIELD(jitmap_record, function),
	FIELD(jitmap_record, blob), FIELD(jitmap_record, section_offset),
	FIELD(jitmap_record, raw_instruction_offset),
	FIELD(jitmap_statepoint_info, calling_convention), FIELD(jitmap_statepoint_info, flags),
	FIELD(jitmap_statepoint_info, num_deopt), FIELD(jitmap_statepoint_info, deopt),
	FIELD(jitmap_statepoint_info, num_gc_pairs), FIELD(jitmap_statepoint_info, gc_pairs),
	FIELD(jitmap_statepoint_info, num_gc_allocas), FIELD(jitmap_statepoint_info, gc_allocas),
	FIELD(jitmap_hit, stackmap), FIELD(jitmap_hit, record),
	FIELD(jitmap_target, ctx), FIELD(jitmap_target, read_reg), FIELD(jitmap_target, read_mem),
	FIELD(jitmap_process_opts, sz), FIELD(jitmap_process_opts, max_entries),
	FIELD(jitmap_process_opts, max_image), FIELD(jitmap_process_opts, max_section),
	FIELD(jitmap_process_opts, flags), FIELD(jitmap_process_opts, debug_dirs),
	FIELD(jitmap_source_info, sz), FIELD(jitmap_source_info, kind), FIELD(jitmap_source_info, name),
	FIELD(jitmap_source_info, descriptor), FIELD(jitmap_source_info, entry),
	FIELD(jitmap_source_info, symfile_addr), FIELD(jitmap_source_info, symfile_size),
	FIELD(jitmap_source_info, section_address), FIELD(jitmap_source_info, section_size),
	FIELD(jitmap_source_info, bias), FIELD(jitmap_source_info, stackmap),
	FIELD(jitmap_source_info, live), FIELD(jitmap_source_info, image),
	FIELD(jitmap_source_info, num_problems), FIELD(jitmap_source_info, num_notes),
	FIELD(jitmap_source_info, num_unrelocated),
	FIELD(jitmap_frame_desc, sz), FIELD(jitmap_frame_desc, level), FIELD(jitmap_frame_desc, pc),
	FIELD(jitmap_frame_desc, return_address), FIELD(jitmap_frame_desc, arch),
	FIELD(jitmap_frame_desc, function), FIELD(jitmap_frame_desc, target),
	FIELD(jitmap_frame_desc, statepoints), FIELD(jitmap_frame_desc, statepoint_ids),
	FIELD(jitmap_frame_desc, num_statepoint_ids), FIELD(jitmap_frame_desc, flags),
	FIELD(jitmap_frame_desc, order), FIELD(jitmap_frame_desc, guessed),
	FIELD(jitmap_image_symbol_info, sz), FIELD(jitmap_image_symbol_info, address), FIELD(jitmap_image_symbol_info, size),
	FIELD(jitmap_image_symbol_info, name), FIELD(jitmap_image_symbol_info, flags),
	FIELD(jitmap_callee_saved_write, address), FIELD(jitmap_callee_saved_write, regno),
	FIELD(jitmap_callee_saved_write, insn),
	FIELD(jitmap_descriptor_info, sz), FIELD(jitmap_descriptor_info, address),
	FIELD(jitmap_descriptor_info, where), FIELD(jitmap_descriptor_info, readable),
	FIELD(jitmap_descriptor_info, complete), FIELD(jitmap_descriptor_info, num_entries),
	FIELD(jitmap_descriptor_info, problem),
	FIELD(jitmap_code_info, source), FIELD(jitmap_code_info, entry),
	FIELD(jitmap_code_info, image_id), FIELD(jitmap_code_info, lo), FIELD(jitmap_code_info, hi),
	FIELD(jitmap_code_info, image), FIELD(jitmap_code_info, stackmap),
	FIELD(jitmap_code_info, function), FIELD(jitmap_code_info, function_lo),
	FIELD(jitmap_code_info, function_hi),
	FIELD(jitmap_stack_frame, level), FIELD(jitmap_stack_frame, pc),
	FIELD(jitmap_stack_frame, exact), FIELD(jitmap_stack_frame, regs),
	FIELD(jitmap_stack_frame, jit), FIELD(jitmap_stack_frame, code),
	FIELD(jitmap_stack_frame, stackmap), FIELD(jitmap_stack_frame, record),
	FIELD(jitmap_stack_frame, method), FIELD(jitmap_stack_frame, cfa),
	FIELD(jitmap_stack_frame, stop), FIELD(jitmap_stack_frame, why),
	FIELD(jitmap_stack_frame, guessed), FIELD(jitmap_stack_frame, guess),
	FIELD(jitmap_stack_frame, step_guessed), FIELD(jitmap_stack_frame, stack_unread),
	FIELD(jitmap_stack_frame, code_pc), FIELD(jitmap_stack_frame, rule),
	FIELD(jitmap_stacker_opts, sz), FIELD(jitmap_stacker_opts, max_frames),
	FIELD(jitmap_stacker_opts, native_step), FIELD(jitmap_stacker_opts, native_ctx),
	FIELD(jitmap_stacker_opts, order), FIELD(jitmap_stacker_opts, code_at),
	FIELD(jitmap_stacker_opts, code_ctx),
	FIELD(jitmap_stopped_opts, sz), FIELD(jitmap_stopped_opts, exe),
	FIELD(jitmap_stopped_opts, sysroot), FIELD(jitmap_stopped_opts, max_threads),
	FIELD(jitmap_stopped_opts, flags), FIELD(jitmap_stopped_opts, max_rounds),
	FIELD(jitmap_stopped_opts, interrupt), FIELD(jitmap_stopped_opts, stack_bytes),
	FIELD(jitmap_stopped_opts, debug_dirs),
	FIELD(jitmap_stopped_thread_info, tid), FIELD(jitmap_stopped_thread_info, name),
	FIELD(jitmap_stopped_thread_info, signal), FIELD(jitmap_stopped_thread_info, error),
	FIELD(jitmap_stopped_thread_info, why), FIELD(jitmap_stopped_thread_info, regs),
	FIELD(jitmap_stopped_thread_info, num_gregs), FIELD(jitmap_stopped_thread_info, gregs),
	FIELD(jitmap_stopped_thread_info, stack_lo), FIELD(jitmap_stopped_thread_info, stack_hi),
	FIELD(jitmap_stopped_thread_info, stopped_ns),
	FIELD(jitmap_stopped_thread_info, stack_cut),
	FIELD(jitmap_stopped_thread_info, past_copy),
	FIELD(jitmap_stopped_reg, regno), FIELD(jitmap_stopped_reg, value),
	FIELD(jitmap_stopped_memory_info, sz), FIELD(jitmap_stopped_memory_info, source),
	FIELD(jitmap_stopped_memory_info, size), FIELD(jitmap_stopped_memory_info, offset),
	FIELD(jitmap_stopped_memory_info, path), FIELD(jitmap_stopped_memory_info, segment_start),
	FIELD(jitmap_stopped_memory_info, segment_end),
	FIELD(jitmap_stopped_memory_info, segment_flags),
	FIELD(jitmap_stopped_memory_info, file_unusable), FIELD(jitmap_stopped_memory_info, why),
	FIELD(jitmap_stopped_mapping_info, start), FIELD(jitmap_stopped_mapping_info, end),
	FIELD(jitmap_stopped_mapping_info, offset), FIELD(jitmap_stopped_mapping_info, path),
	FIELD(jitmap_stopped_mapping_info, core_path),
	FIELD(jitmap_stopped_problem_info, sz), FIELD(jitmap_stopped_problem_info, kind),
	FIELD(jitmap_stopped_problem_info, code), FIELD(jitmap_stopped_problem_info, text),
	FIELD(jitmap_stopped_jit_file_info, path), FIELD(jitmap_stopped_jit_file_info, kind),
	FIELD(jitmap_stopped_jit_file_info, flags), FIELD(jitmap_stopped_jit_file_info, data),
	FIELD(jitmap_stopped_jit_file_info, size), FIELD(jitmap_stopped_jit_file_info, offset),
	FIELD(jitmap_stopped_module_info, sz), FIELD(jitmap_stopped_module_info, start),
	FIELD(jitmap_stopped_module_info, end), FIELD(jitmap_stopped_module_info, name),
	FIELD(jitmap_stopped_module_info, file), FIELD(jitmap_stopped_module_info, bias),
};

/* The values a binding uses, by their C names. */
#define CONSTANT(c) {#c, (int64_t)(c)}
static const struct {
	const char *name;
	int64_t value;
} constants[] = {
	CONSTANT(JITMAP_ORDER_AUTO), CONSTANT(JITMAP_ORDER_LITTLE), CONSTANT(JITMAP_ORDER_BIG),
	CONSTANT(JITMAP_LOC_REGISTER), CONSTANT(JITMAP_LOC_DIRECT), CONSTANT(JITMAP_LOC_INDIRECT),
	CONSTANT(JITMAP_LOC_CONSTANT), CONSTANT(JITMAP_LOC_CONSTANT_INDEX),
	CONSTANT(JITMAP_DIALECT_LLVM), CONSTANT(JITMAP_DIALECT_YK), CONSTANT(JITMAP_DIALECT_YK_EXTRAS),
	CONSTANT(JITMAP_ARCH_UNKNOWN), CONSTANT(JITMAP_ARCH_X86_64), CONSTANT(JITMAP_ARCH_AARCH64),
	CONSTANT(JITMAP_ARCH_PPC64), CONSTANT(JITMAP_ARCH_S390X), CONSTANT(JITMAP_ARCH_RISCV64),
	CONSTANT(JITMAP_STATEPOINT_AUTO), CONSTANT(JITMAP_STATEPOINT_ALL),
	CONSTANT(JITMAP_STATEPOINT_NONE), CONSTANT(JITMAP_SOURCE_JIT), CONSTANT(JITMAP_SOURCE_OBJECT),
	CONSTANT(JITMAP_VREF_NONE), CONSTANT(JITMAP_VREF_NUMBER), CONSTANT(JITMAP_VREF_DEOPT),
	CONSTANT(JITMAP_VREF_NAME), CONSTANT(JITMAP_REG_RECOVERED), CONSTANT(JITMAP_DESCRIBE_RAW),
	CONSTANT(JITMAP_TEXT_FRAME), CONSTANT(JITMAP_TEXT_RECORDS), CONSTANT(JITMAP_TEXT_GC_ROOTS),
	CONSTANT(JITMAP_TEXT_GC_HEADER), CONSTANT(JITMAP_TEXT_VFRAMES),
	CONSTANT(JITMAP_TEXT_NO_RECORD), CONSTANT(JITMAP_TEXT_REGISTERS),
	CONSTANT(JITMAP_TEXT_BT), CONSTANT(JITMAP_JSON_NO_FRAME), CONSTANT(JITMAP_JSON_REGISTERS),
	CONSTANT(JITMAP_JSON_VARIABLES), CONSTANT(JITMAP_PERFMAP_MAP), CONSTANT(JITMAP_PERFMAP_JITDUMP),
	CONSTANT(JITMAP_UNWIND_FRAME_POINTER), CONSTANT(JITMAP_UNWIND_MAX_REGS),
	CONSTANT(JITMAP_UNWIND_PROVEN), CONSTANT(JITMAP_UNWIND_CODE), CONSTANT(JITMAP_UNWIND_NATIVE),
	CONSTANT(JITMAP_UNWIND_CFI), CONSTANT(JITMAP_UNWIND_STACKMAP), CONSTANT(JITMAP_UNWIND_NONE),
	CONSTANT(JITMAP_DESCRIBE_REGISTERS),
	CONSTANT(JITMAP_IMAGE_SKIP_STACKMAP), CONSTANT(JITMAP_PROCESS_LAZY),
	CONSTANT(JITMAP_STOPPED_CORE), CONSTANT(JITMAP_STOPPED_LIVE),
	CONSTANT(JITMAP_STOPPED_NO_FILES), CONSTANT(JITMAP_STOPPED_NO_STOP),
	CONSTANT(JITMAP_STOPPED_BY_THREAD), CONSTANT(JITMAP_STOPPED_SNAPSHOT),
	CONSTANT(JITMAP_STOPPED_MEM_CORE), CONSTANT(JITMAP_STOPPED_MEM_FILE),
	CONSTANT(JITMAP_STOPPED_MEM_NONE), CONSTANT(JITMAP_STOPPED_MEM_PROCESS),
	CONSTANT(JITMAP_PROBLEM_WARNING), CONSTANT(JITMAP_PROBLEM_INFO),
	CONSTANT(JITMAP_PROBLEM_OTHER), CONSTANT(JITMAP_PROBLEM_TRUNCATED),
	CONSTANT(JITMAP_PROBLEM_MALFORMED), CONSTANT(JITMAP_PROBLEM_FILE),
	CONSTANT(JITMAP_PROBLEM_THREADS_LEFT), CONSTANT(JITMAP_PROBLEM_FILES_PLACED),
	CONSTANT(JITMAP_PROBLEM_LIMIT),
};

size_t jitmap_offsetof(const char *type_name, const char *field)
{
	for (size_t i = 0; type_name && field && i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!strcmp(fields[i].type, type_name) && !strcmp(fields[i].field, field))
			return fields[i].offset;
	return SIZE_MAX;
}

int jitmap_constant(const char *name, int64_t *value)
{
	for (size_t i = 0; name && value && i < sizeof(constants) / sizeof(constants[0]); i++) {
		if (!strcmp(constants[i].name, name)) {
			*value = constants[i].value;
			return 0;
		}
	}
	return -ENOENT;
}

size_t jitmap_sizeof(const char *type_name)
{
	for (size_t i = 0; type_name && i < sizeof(structs) / sizeof(structs[0]); i++)
		if (!strcmp(structs[i].name, type_name))
			return structs[i].size;
	return 0;
}
