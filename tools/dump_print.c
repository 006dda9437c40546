/* dump_print.c: jitmap-dump's text and JSON for a stackmap: each blob's header, constants,
 * functions (with ykllvm's spill tables) and records, and an image's deopt layouts. A record's
 * and a layout's text and JSON are the library's renderer's (jitmap/frame.h); the shape of the
 * whole (docs/jitmap-dump.md, docs/json.md) is the tool's. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "jitmap/jitmap.h"
#include "jitmap/frame.h"
#include "dump_tool.h"
#include "json.h"

/* -- Text -- */

/* A record as info stackmap writes it, less the values (the library's renderer). */
static void print_text_record(FILE *out, const jitmap_stackmap *sm, const jitmap_record *r,
			      const struct options *o)
{
	char *t = jitmap_record_text(sm, r, o->sp_mode, o->sp_ids, o->num_sp_ids, 4);
	if (t)
		fputs(t, out);
	free(t);
}

static const char *register_name(const jitmap_stackmap *sm, unsigned regno)
{
	static char buf[32];
	jitmap_stackmap_reg_label(sm, regno, buf, sizeof(buf));
	return buf;
}

/* ykllvm's spill table of a function: "    frame pointer; spills: rbx at frame index -2". */
static void print_text_spills(FILE *out, const jitmap_stackmap *sm, size_t fi)
{
	int fp;
	const jitmap_spill *sp;
	size_t ns = 0;
	if (jitmap_function_spills(sm, fi, &fp, &sp, &ns) || fp < 0)
		return;
	fprintf(out, "    %s; ", fp ? "frame pointer" : "no frame pointer");
	if (!ns)
		fputs("no callee-saved spills", out);
	for (size_t k = 0; k < ns; k++)
		fprintf(out, "%s%s at frame index %" PRId32, k ? ", " : "callee-saved spills: ",
			register_name(sm, sp[k].dwarf_reg), sp[k].frame_index);
	fputc('\n', out);
}

void dump_print_text(FILE *out, const jitmap_stackmap *sm, const struct options *o)
{
	for (size_t bi = 0; bi < jitmap_stackmap_num_blobs(sm); bi++) {
		const jitmap_blob *b = jitmap_stackmap_blob(sm, bi);
		const jitmap_dialect d = jitmap_blob_dialect(sm, bi);
		fprintf(out, "blob %zu at section offset 0x%" PRIx64 ": version %u%s%s%s, %" PRIu32
			" function%s, %" PRIu32 " constant%s, %" PRIu32 " record%s\n",
			bi, b->section_offset, b->version, d ? " (" : "",
			d ? jitmap_dialect_name(d) : "", d ? " layout)" : "", b->num_functions,
			b->num_functions == 1 ? "" : "s", b->num_constants,
			b->num_constants == 1 ? "" : "s", b->num_records,
			b->num_records == 1 ? "" : "s");
		if (b->num_constants) {
			fprintf(out, "  constants:");
			for (uint32_t i = 0; i < b->num_constants; i++) {
				uint64_t v = 0;
				jitmap_stackmap_constant(sm, b->first_constant + i, &v);
				fprintf(out, " #%" PRIu32 "=%" PRIu64, i, v);
			}
			fputc('\n', out);
		}
		for (uint32_t i = 0; i < b->num_functions; i++) {
			const jitmap_function *f = jitmap_stackmap_function(sm, b->first_function + i);
			fprintf(out, "  function %s at 0x%" PRIx64 ", stack size ",
				f->name ? f->name : "?", f->address);
			if (f->stack_size == UINT64_MAX)
				fprintf(out, "dynamic");
			else
				fprintf(out, "%" PRIu64, f->stack_size);
			fprintf(out, ", %" PRIu64 " record%s\n", f->record_count,
				f->record_count == 1 ? "" : "s");
			print_text_spills(out, sm, b->first_function + i);
			for (uint64_t k = 0; k < f->record_count; k++)
				print_text_record(out, sm, jitmap_stackmap_record(sm, f->first_record + k), o);
		}
		if (b->version == 1 && b->num_functions != 1) {
			fprintf(out, "  records (version 1 does not say which function owns them):\n");
			for (uint32_t k = 0; k < b->num_records; k++)
				print_text_record(out, sm, jitmap_stackmap_record(sm, b->first_record + k), o);
		}
	}
}

/* -- JSON -- */

/* A function's name, address and stack size as JSON fields ("name": ..., "address": ...,
 * "stack_size": ...; null for a missing name or a dynamic size), after `lead`. */
static void json_function_fields(FILE *out, const char *lead, const jitmap_function *f,
				 const char *name_key, const char *address_key)
{
	fprintf(out, "%s\"%s\": ", lead, name_key);
	if (f->name)
		json_string(out, f->name);
	else
		fputs("null", out);
	fprintf(out, ", \"%s\": \"0x%" PRIx64 "\", \"stack_size\": ", address_key, f->address);
	if (f->stack_size == UINT64_MAX)
		fputs("null", out);
	else
		fprintf(out, "%" PRIu64, f->stack_size);
}

static void json_record(FILE *out, const jitmap_stackmap *sm, const jitmap_record *r,
			const struct options *o)
{
	char *j = jitmap_record_json(sm, r, o->sp_mode, o->sp_ids, o->num_sp_ids);
	fputs(j ? j : "null", out);
	free(j);
}

void dump_print_json(FILE *out, const char *file, const jitmap_stackmap *sm,
		     const jitmap_layouts *layouts, const char *kind, const struct options *o)
{
	fputs("{\"file\": ", out);
	json_string(out, file);
	fputs(", \"kind\": ", out);
	json_string(out, kind);
	if (!sm)
		fputs(", \"stackmap\": null", out);
	else
		dump_print_json_stackmap(out, sm, o);
	if (layouts)
		dump_print_json_layouts(out, layouts);
	fputs("}\n", out);
}

/* ", "arch": ..., "byte_order": ..., "blobs": [...]" of one stackmap (no braces). */
void dump_print_json_stackmap(FILE *out, const jitmap_stackmap *sm, const struct options *o)
{
	fprintf(out, ", \"arch\": \"%s\", \"byte_order\": \"%s\", \"blobs\": [",
		jitmap_arch_name(jitmap_stackmap_arch(sm)),
		jitmap_stackmap_byte_order(sm) == JITMAP_ORDER_BIG ? "big" : "little");
	for (size_t bi = 0; bi < jitmap_stackmap_num_blobs(sm); bi++) {
		const jitmap_blob *b = jitmap_stackmap_blob(sm, bi);
		fprintf(out, "%s{\"section_offset\": %" PRIu64 ", \"version\": %u, ", bi ? ", " : "",
			b->section_offset, b->version);
		if (jitmap_blob_dialect(sm, bi) != JITMAP_DIALECT_LLVM)
			fprintf(out, "\"dialect\": \"%s\", ",
				jitmap_dialect_name(jitmap_blob_dialect(sm, bi)));
		fputs("\"constants\": [", out);
		for (uint32_t i = 0; i < b->num_constants; i++) {
			uint64_t v = 0;
			jitmap_stackmap_constant(sm, b->first_constant + i, &v);
			fprintf(out, "%s%" PRIu64, i ? ", " : "", v);
		}
		fputs("], \"functions\": [", out);
		for (uint32_t i = 0; i < b->num_functions; i++) {
			const jitmap_function *f = jitmap_stackmap_function(sm, b->first_function + i);
			json_function_fields(out, i ? ", {" : "{", f, "name", "address");
			fprintf(out, ", \"record_count\": %" PRIu64, f->record_count);
			int fp;
			const jitmap_spill *sp;
			size_t ns = 0;
			jitmap_function_spills(sm, b->first_function + i, &fp, &sp, &ns);
			if (fp >= 0) {
				fprintf(out, ", \"frame_pointer\": %s, \"spills\": [",
					fp ? "true" : "false");
				for (size_t k = 0; k < ns; k++) {
					fprintf(out, "%s{\"register\": ", k ? ", " : "");
					json_string(out, register_name(sm, sp[k].dwarf_reg));
					fprintf(out, ", \"dwarf_reg\": %u, \"frame_index\": %" PRId32 "}",
						sp[k].dwarf_reg, sp[k].frame_index);
				}
				fputc(']', out);
			}
			fputc('}', out);
		}
		fputs("], \"records\": [", out);
		for (uint32_t k = 0; k < b->num_records; k++) {
			if (k)
				fputs(", ", out);
			json_record(out, sm, jitmap_stackmap_record(sm, b->first_record + k), o);
		}
		fputs("]}", out);
	}
	fputc(']', out);
}

/* -- Deopt layouts (.jitmap_deopt, docs/deopt-layouts.md): the library's renderer writes them -- */

void dump_print_text_layouts(FILE *out, const jitmap_layouts *l)
{
	char *t = jitmap_layouts_text(l, 2);
	if (t)
		fputs(t, out);
	free(t);
}

/* ", "deopt_layouts": [...]" (only for an image that carries layouts). */
void dump_print_json_layouts(FILE *out, const jitmap_layouts *l)
{
	char *j = jitmap_layouts_json(l);
	fputs(", \"deopt_layouts\": ", out);
	fputs(j ? j : "[]", out);
	free(j);
}
