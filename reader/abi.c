/* abi.c: what a binding needs to check that it matches this library (libbpf's
 * libbpf_version_string() and sized options are the model): the version, and the size of
 * each public struct a binding may mirror (gdb-scripts/jitmap/native.py checks its ctypes
 * structures against these when it loads the library). */
#include "internal.h"
#include "jitmap/frame.h"
#include "jitmap/process.h"
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
	STRUCT(jitmap_callee_saved_write),
};

size_t jitmap_sizeof(const char *type_name)
{
	for (size_t i = 0; type_name && i < sizeof(structs) / sizeof(structs[0]); i++)
		if (!strcmp(structs[i].name, type_name))
			return structs[i].size;
	return 0;
}
