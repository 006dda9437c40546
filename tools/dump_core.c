/* dump_core.c: jitmap-dump's core files (and compressed ones: systemd-coredump's
 * core.*.zst). The core is read by libjitmap; its JIT descriptors and entries are found by
 * the process model's scan (jitmap_process_scan_stopped, the same as jitmap-stack's), and each
 * entry's stackmap is written by dump_print.c or dump_readobj.c. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "jitmap/jitmap.h"
#include "jitmap/core.h"
#include "jitmap/perfmap.h"
#include "jitmap/process.h"
#include "dump_readobj.h"
#include "dump_tool.h"
#include "json.h"
#include "report.h"

/* -- Core files -- */

/* The notes of source `i` of `p`, joined with "; " into `buf` (empty when none). */
static const char *source_notes(const jitmap_process *p, size_t i, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (size_t k = 0; jitmap_process_source_note(p, i, k) && at < len; k++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", k ? "; " : "",
				       jitmap_process_source_note(p, i, k));
	return buf;
}

/* The architecture's name; a machine jitmap has no table for is told by the library's
 * JITMAP_ARCH_UNKNOWN, not by its name's text. */
static const char *machine_name(unsigned m)
{
	const jitmap_arch a = jitmap_arch_from_elf_machine(m);
	return a != JITMAP_ARCH_UNKNOWN ? jitmap_arch_name(a) : "unknown machine";
}

/* A descriptor's line: its count only where the list was read to its end. */
static void print_text_descriptor(FILE *out, const jitmap_descriptor_info *d)
{
	fprintf(out, "JIT descriptor at 0x%" PRIx64 " in %s: ", d->address, d->where);
	if (d->complete)
		fprintf(out, "%zu entr%s\n", d->num_entries, d->num_entries == 1 ? "y" : "ies");
	else if (!d->readable)
		fprintf(out, "entries unknown (%s)\n", d->problem);
	else
		fprintf(out, "%zu entr%s read, the rest unknown (%s)\n", d->num_entries,
			d->num_entries == 1 ? "y" : "ies", d->problem);
}

/* One JIT entry (source `i` of `p`) in the chosen format; 1 when it is an error. */
static int print_entry(FILE *out, const char *path, const jitmap_process *p, size_t i,
		       bool first, const struct options *o)
{
	jitmap_source_info si = {.sz = sizeof(si)};
	char notes[640];
	int status = 0;
	jitmap_process_source(p, i, &si);
	const jitmap_stackmap *sm = si.stackmap;
	/* Without a stackmap, a problem is an error; with one (the registered copy stood in for
	 * the live section), the notes say what happened. */
	const char *problem = !sm && si.num_problems ? jitmap_process_source_problem(p, i, 0) : NULL;
	source_notes(p, i, notes, sizeof(notes));
	if (problem) {
		fprintf(stderr, "jitmap-dump: %s: %s\n", path, problem);
		status = 1;
	}
	const jitmap_layouts *layouts = si.image ? jitmap_image_layouts(si.image) : NULL;
	if (si.image && jitmap_image_layouts_problem(si.image)) {
		fprintf(stderr, "jitmap-dump: %s: JIT entry 0x%" PRIx64 ": %s\n", path, si.entry,
			jitmap_image_layouts_problem(si.image));
		status = 1;
	}
	switch (o->format) {
	case FMT_READOBJ:
		dump_readobj(out, path, sm);
		break;
	case FMT_JSON:
		fprintf(out, "%s{\"entry\": \"0x%" PRIx64 "\", \"symfile_addr\": \"0x%" PRIx64
			"\", \"symfile_size\": %" PRIu64 ", \"problem\": ", first ? "" : ", ", si.entry,
			si.symfile_addr, si.symfile_size);
		json_string_or_null(out, problem);
		fputs(", \"note\": ", out);
		json_string_or_null(out, notes[0] ? notes : NULL);
		if (sm) {
			fprintf(out, ", \"stackmap_address\": \"0x%" PRIx64 "\"", si.section_address);
			dump_print_json_stackmap(out, sm, o);
		} else {
			fputs(", \"stackmap_address\": null", out);
		}
		if (layouts)
			dump_print_json_layouts(out, layouts);
		fputc('}', out);
		break;
	case FMT_TEXT:
		fprintf(out, "JIT entry 0x%" PRIx64 ": image at 0x%" PRIx64 ", %" PRIu64 " bytes",
			si.entry, si.symfile_addr, si.symfile_size);
		if (problem) {
			fprintf(out, ", unreadable\n");
			break;
		}
		if (!sm) {
			fprintf(out, ", no .llvm_stackmaps section\n");
			break;
		}
		fprintf(out, "; .llvm_stackmaps at 0x%" PRIx64 ", %s-endian, %zu blob%s, %zu record%s\n",
			si.section_address,
			jitmap_stackmap_byte_order(sm) == JITMAP_ORDER_BIG ? "big" : "little",
			jitmap_stackmap_num_blobs(sm), jitmap_stackmap_num_blobs(sm) == 1 ? "" : "s",
			jitmap_stackmap_num_records(sm), jitmap_stackmap_num_records(sm) == 1 ? "" : "s");
		if (notes[0])
			fprintf(out, "  note: %s\n", notes);
		dump_print_text(out, sm, o);
		if (layouts)
			dump_print_text_layouts(out, layouts);
		break;
	}
	return status;
}

/* The perf maps and jitdump files the core carries (jitmap-core-handler's notes), with how
 * many code objects each names. */
static void print_text_jit_files(FILE *out, jitmap_stopped *c)
{
	jitmap_perfmap *m = jitmap_perfmap_new();
	if (m)
		(void)jitmap_perfmap_add_core(m, c);
	for (size_t i = 0; i < jitmap_stopped_num_jit_files(c); i++) {
		const jitmap_stopped_jit_file_info *f = jitmap_stopped_jit_file(c, i);
		size_t ranges = 0, n = 0; /* a note that is no file of the set: 0 */
		for (size_t k = 0; m && k < jitmap_perfmap_num_files(m); k++)
			if (!strcmp(jitmap_perfmap_file(m, k, &n), f->path)) {
				ranges = n;
				break;
			}
		fprintf(out, "  JIT file in the core: %s (%s, %zu bytes%s, %zu code object%s) "
			"at offset 0x%" PRIx64 "\n", f->path,
			f->kind == JITMAP_PERFMAP_JITDUMP ? "jitdump" : "perf map", f->size,
			f->flags & JITMAP_CORE_FILE_CUT ? ", cut short" : "", ranges,
			ranges == 1 ? "" : "s", f->offset);
	}
	jitmap_perfmap_free(m);
}

static void print_json_jit_files(FILE *out, jitmap_stopped *c)
{
	fputs("\"jit_files\": [", out);
	for (size_t i = 0; i < jitmap_stopped_num_jit_files(c); i++) {
		const jitmap_stopped_jit_file_info *f = jitmap_stopped_jit_file(c, i);
		fputs(i ? ", {\"path\": " : "{\"path\": ", out);
		json_string(out, f->path);
		fprintf(out, ", \"kind\": \"%s\", \"size\": %zu, \"cut\": %s, \"offset\": "
			"\"0x%" PRIx64 "\"}", f->kind == JITMAP_PERFMAP_JITDUMP ? "jitdump" : "perf-map",
			f->size, f->flags & JITMAP_CORE_FILE_CUT ? "true" : "false", f->offset);
	}
	fputs("]", out);
}

/* A core: the JIT descriptors and entries the library finds in it (jitmap_process_scan_stopped:
 * the same scan as jitmap-stack's), each entry's stackmap by the process model (the live
 * section or the registered copy, MCJIT's unrelocated addresses, names). */
int dump_core(FILE *out, const char *path, const struct options *o)
{
	jitmap_error e;
	JITMAP_OPTS(const jitmap_stopped_opts, copts, .exe = o->exe, .sysroot = o->sysroot);
	jitmap_stopped *c = jitmap_stopped_open_core(path, &copts, &e);
	if (!c) {
		report_error("jitmap-dump", path, &e);
		return 1;
	}
	int status = 0;
	for (size_t i = 0; jitmap_stopped_warning(c, i); i++)
		fprintf(stderr, "jitmap-dump: %s: warning: %s\n", path, jitmap_stopped_warning(c, i));
	const jitmap_target t = jitmap_stopped_target(c);
	jitmap_process *p = jitmap_process_new(&t, NULL);
	if (!p || jitmap_process_scan_begin(p) || jitmap_process_scan_stopped(p, c) < 0 ||
	    jitmap_process_scan_end(p)) {
		fprintf(stderr, "jitmap-dump: %s: out of memory\n", path);
		jitmap_process_free(p);
		jitmap_stopped_free(c);
		return 1;
	}
	/* What the scan could not read: files the core maps, descriptors, lists (an entry's
	 * problems are said with the entry). A damaged list is an error of the core; a file that
	 * is not there is not. */
	for (size_t k = 0; k < jitmap_process_num_problems(p); k++)
		fprintf(stderr, "jitmap-dump: %s: %s\n", path, jitmap_process_problem(p, k));
	const size_t nd = jitmap_process_num_descriptors(p);
	for (size_t d = 0; d < nd; d++) {
		jitmap_descriptor_info di = {.sz = sizeof(di)};
		if (jitmap_process_descriptor(p, d, &di) == 0 && !di.complete)
			status = 1;
	}
	/* Files that could not be read may define more (said in the problems above). */
	const size_t unread = jitmap_process_num_unread_files(p);
	const size_t njf = jitmap_stopped_num_jit_files(c);
	if (!nd && !njf) {
		fprintf(stderr, "jitmap-dump: %s: no __jit_debug_descriptor in the files the core maps%s%s\n",
			path, unread ? " that could be read" : "",
			o->exe ? "" : " (if the executable has moved, give it with --exe)");
		jitmap_process_free(p);
		jitmap_stopped_free(c);
		return 1;
	}
	/* "ELF core file" or "ELF core file (zstd)": what the file held. */
	char what[64];
	const char *codec = jitmap_stopped_compression(c);
	snprintf(what, sizeof(what), "ELF core file%s%s%s", codec ? " (" : "", codec ? codec : "",
		 codec ? ")" : "");
	if (o->format == FMT_TEXT) {
		fprintf(out, "%s: %s, %s, %zu JIT descriptor%s", path, what,
			machine_name(jitmap_stopped_elf_machine(c)), nd, nd == 1 ? "" : "s");
		if (unread)
			fprintf(out, " found, more may be in the %zu file%s the core maps that could "
				"not be read", unread, unread == 1 ? "" : "s");
		if (njf)
			fprintf(out, ", %zu JIT file%s", njf, njf == 1 ? "" : "s");
		fputc('\n', out);
		print_text_jit_files(out, c);
	}
	if (o->format == FMT_JSON) {
		fputs("{\"file\": ", out);
		json_string(out, path);
		fprintf(out, ", \"kind\": \"%s, %s\", \"unread_files\": %zu, ", what,
			machine_name(jitmap_stopped_elf_machine(c)), unread);
		print_json_jit_files(out, c);
		fputs(", \"descriptors\": [", out);
	}
	const size_t ns = jitmap_process_num_sources(p);
	for (size_t d = 0; d < nd; d++) {
		jitmap_descriptor_info di = {.sz = sizeof(di)};
		jitmap_process_descriptor(p, d, &di);
		if (o->format == FMT_TEXT)
			print_text_descriptor(out, &di);
		if (o->format == FMT_JSON) {
			fprintf(out, "%s{\"address\": \"0x%" PRIx64 "\", \"file\": ", d ? ", " : "",
				di.address);
			json_string(out, di.where);
			fputs(", \"problem\": ", out);
			json_string_or_null(out, di.problem);
			/* null: the list was not read to its end, and how long it is is unknown */
			if (di.complete)
				fprintf(out, ", \"entry_count\": %zu", di.num_entries);
			else
				fputs(", \"entry_count\": null", out);
			fprintf(out, ", \"entries_read\": %zu, \"entries\": [", di.num_entries);
		}
		bool first = true;
		for (size_t i = 0; i < ns; i++) {
			jitmap_source_info si = {.sz = sizeof(si)};
			if (jitmap_process_source(p, i, &si) || si.kind != JITMAP_SOURCE_JIT ||
			    si.descriptor != di.address)
				continue;
			status |= print_entry(out, path, p, i, first, o);
			first = false;
		}
		if (o->format == FMT_JSON)
			fputs("]}", out);
	}
	if (o->format == FMT_JSON)
		fputs("]}\n", out);
	jitmap_process_free(p);
	jitmap_stopped_free(c);
	return status;
}
