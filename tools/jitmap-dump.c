/* jitmap-dump: print the LLVM stackmaps of ELF, Mach-O and COFF files and raw stackmap
 * sections.
 *
 * Formats (docs/jitmap-dump.md; the JSON fields in docs/json.md):
 *   text          register and function names, statepoints decoded (the default);
 *   json          one JSON object per input file, one per line;
 *   llvm-readobj  for each blob, exactly what `llvm-readobj --stackmap` prints from the line
 *                 "LLVM StackMap Version:" on (readobj itself prints only the first blob).
 * Core files: every stackmap registered through the GDB JIT interface in the dumped process,
 * found by walking __jit_debug_descriptor in the core's memory (symbols from the files the
 * core's NT_FILE note names, or --exe) and reading each entry's live .llvm_stackmaps, all
 * in the core's byte order. The core itself is read by libjitmap (jitmap/core.h).
 * Exit status: 0 when every input was valid, 1 when any was malformed or unreadable or the
 * output could not be written, 2 on usage errors.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitmap/jitmap.h"
#include "jitmap/core.h"
#include "jitmap/frame.h"
#include "jitmap/perfmap.h"
#include "jitmap/process.h"
#include "dump_readobj.h"
#include "heap.h"
#include "json.h"
#include "llvm_object.h"
#include "report.h"

#ifndef JITMAP_VERSION
#define JITMAP_VERSION "0"
#endif

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

enum format { FMT_TEXT, FMT_JSON, FMT_READOBJ };

struct options {
	enum format format;
	jitmap_statepoint_mode sp_mode;
	uint64_t *sp_ids;
	size_t num_sp_ids;
	jitmap_byte_order order; /* for raw sections */
	jitmap_arch arch;        /* for raw sections */
	const char *exe;         /* for core files: the executable, if it has moved */
	const char *sysroot;     /* for core files: where the mapped files are */
};

static const char usage_text[] =
	"Usage: jitmap-dump [OPTION]... FILE...\n"
	"Print the LLVM stackmap sections (.llvm_stackmaps) of ELF objects, executables and\n"
	"shared libraries, of Mach-O and COFF files (read through libLLVM), or of FILEs that\n"
	"hold a raw stackmap section. For a core file, print every stackmap the dumped\n"
	"process registered through the GDB JIT interface.\n"
	"\n"
	"  --format=FMT        text (default), json, or llvm-readobj (the text that\n"
	"                      `llvm-readobj --stackmap` prints, for every blob)\n"
	"  --statepoints=MODE  which records to decode as statepoints: auto (by shape, the\n"
	"                      default), all, or none\n"
	"  --statepoint-ids=ID[,ID...]\n"
	"                      records with these IDs flip the decision of MODE: under auto\n"
	"                      or all they are not decoded, under none they are\n"
	"  --byte-order=ORDER  little or big, for raw sections (default: guessed)\n"
	"  --arch=ARCH         x86-64, aarch64, ppc64, s390x or riscv64, for register names\n"
	"                      in raw sections (object files say their own)\n"
	"  --exe=FILE          for core files: the program's executable, when it is no longer\n"
	"                      where the core says (matched by build ID, real path or name)\n"
	"  --sysroot=DIR       for core files: look the files the core maps up under DIR\n"
	"                      (a core from another machine, or from qemu-user)\n"
	"  -h, --help          show this help and exit\n"
	"  -V, --version       show the version and exit\n"
	"\n"
	"Exit status: 0 if every FILE was valid, 1 if any was malformed or unreadable or\n"
	"the output could not be written, 2 on usage errors.\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "jitmap-dump: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry 'jitmap-dump --help' for more information.\n");
	va_end(ap);
	return 2;
}

/* -- Text -- */

static const char *elf_type_name(unsigned t)
{
	switch (t) {
	case 1: return "relocatable object";
	case 2: return "executable";
	case 3: return "shared object";
	case 4: return "core file";
	default: return "ELF file";
	}
}

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

static void print_text(FILE *out, const jitmap_stackmap *sm, const struct options *o)
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

static void print_json_stackmap(FILE *out, const jitmap_stackmap *sm, const struct options *o);

static void print_json_layouts(FILE *out, const jitmap_layouts *l);

static void print_json(FILE *out, const char *file, const jitmap_stackmap *sm,
		       const jitmap_layouts *layouts, const char *kind, const struct options *o)
{
	fputs("{\"file\": ", out);
	json_string(out, file);
	fputs(", \"kind\": ", out);
	json_string(out, kind);
	if (!sm)
		fputs(", \"stackmap\": null", out);
	else
		print_json_stackmap(out, sm, o);
	if (layouts)
		print_json_layouts(out, layouts);
	fputs("}\n", out);
}

/* ", "arch": ..., "byte_order": ..., "blobs": [...]" of one stackmap (no braces). */
static void print_json_stackmap(FILE *out, const jitmap_stackmap *sm, const struct options *o)
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

static void print_text_layouts(FILE *out, const jitmap_layouts *l)
{
	char *t = jitmap_layouts_text(l, 2);
	if (t)
		fputs(t, out);
	free(t);
}

/* ", "deopt_layouts": [...]" (only for an image that carries layouts). */
static void print_json_layouts(FILE *out, const jitmap_layouts *l)
{
	char *j = jitmap_layouts_json(l);
	fputs(", \"deopt_layouts\": ", out);
	fputs(j ? j : "[]", out);
	free(j);
}


/* -- Inputs -- */

/* 0, or a negative errno: -EISDIR for a directory, -EINVAL for another file that is not a
 * regular one (a device, a pipe: its bytes are not a section). */
static int read_file(const char *path, unsigned char **data, size_t *len)
{
	struct stat st;
	if (stat(path, &st))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	FILE *f = fopen(path, "rb");
	if (!f)
		return -errno;
	size_t cap = 1 << 16, n = 0;
	unsigned char *buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (n < cap)
			break;
		unsigned char *bigger = realloc(buf, cap * 2);
		if (!bigger) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = bigger;
		cap *= 2;
	}
	int err = ferror(f) ? -EIO : 0;
	fclose(f);
	if (!buf)
		return -ENOMEM;
	if (err) {
		free(buf);
		return err;
	}
	*data = buf;
	*len = n;
	return 0;
}

/* The first bytes of a regular file (0 for anything else: opening a FIFO would wait for a
 * writer forever): how many were read into `head`. */
static size_t file_head(const char *path, unsigned char head[8])
{
	struct stat st;
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	size_t n = fread(head, 1, 8, f);
	fclose(f);
	return n;
}

static int is_elf(const char *path)
{
	unsigned char head[8];
	return file_head(path, head) >= 4 && !memcmp(head, "\177ELF", 4);
}

/* A compressed file is read as a core (systemd-coredump's core.*.zst): the library says
 * what it holds. */
static bool is_compressed(const char *path)
{
	unsigned char head[8];
	const size_t n = file_head(path, head);
	return jitmap_compression_of(head, n) != NULL;
}

static void report(const char *file, const jitmap_error *e)
{
	report_error("jitmap-dump", file, e);
}

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

static const char *machine_name(unsigned m)
{
	const char *n = jitmap_arch_name(jitmap_arch_from_elf_machine(m));
	return strcmp(n, "unknown") ? n : "unknown machine";
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
			print_json_stackmap(out, sm, o);
		} else {
			fputs(", \"stackmap_address\": null", out);
		}
		if (layouts)
			print_json_layouts(out, layouts);
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
		print_text(out, sm, o);
		if (layouts)
			print_text_layouts(out, layouts);
		break;
	}
	return status;
}

/* The perf maps and jitdump files the core carries (jitmap-core-handler's notes), with how
 * many code objects each names. */
static void print_text_jit_files(FILE *out, jitmap_core *c)
{
	jitmap_perfmap *m = jitmap_perfmap_new();
	if (m)
		(void)jitmap_perfmap_add_core(m, c);
	for (size_t i = 0; i < jitmap_core_num_jit_files(c); i++) {
		const jitmap_core_jit_file *f = jitmap_core_jit_file_at(c, i);
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

static void print_json_jit_files(FILE *out, jitmap_core *c)
{
	fputs("\"jit_files\": [", out);
	for (size_t i = 0; i < jitmap_core_num_jit_files(c); i++) {
		const jitmap_core_jit_file *f = jitmap_core_jit_file_at(c, i);
		fputs(i ? ", {\"path\": " : "{\"path\": ", out);
		json_string(out, f->path);
		fprintf(out, ", \"kind\": \"%s\", \"size\": %zu, \"cut\": %s, \"offset\": "
			"\"0x%" PRIx64 "\"}", f->kind == JITMAP_PERFMAP_JITDUMP ? "jitdump" : "perf-map",
			f->size, f->flags & JITMAP_CORE_FILE_CUT ? "true" : "false", f->offset);
	}
	fputs("]", out);
}

/* A core: the JIT descriptors and entries the library finds in it (jitmap_process_scan_core:
 * the same scan as jitmap-stack's), each entry's stackmap by the process model (the live
 * section or the registered copy, MCJIT's unrelocated addresses, names). */
static int dump_core(FILE *out, const char *path, const struct options *o)
{
	jitmap_error e;
	JITMAP_OPTS(const jitmap_core_opts, copts, .exe = o->exe, .sysroot = o->sysroot);
	jitmap_core *c = jitmap_core_open(path, &copts, &e);
	if (!c) {
		report(path, &e);
		return 1;
	}
	int status = 0;
	for (size_t i = 0; jitmap_core_warning(c, i); i++)
		fprintf(stderr, "jitmap-dump: %s: warning: %s\n", path, jitmap_core_warning(c, i));
	const jitmap_target t = jitmap_core_target(c);
	jitmap_process *p = jitmap_process_new(&t, NULL);
	if (!p || jitmap_process_scan_begin(p) || jitmap_process_scan_core(p, c) < 0 ||
	    jitmap_process_scan_end(p)) {
		fprintf(stderr, "jitmap-dump: %s: out of memory\n", path);
		jitmap_process_free(p);
		jitmap_core_free(c);
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
	const size_t njf = jitmap_core_num_jit_files(c);
	if (!nd && !njf) {
		fprintf(stderr, "jitmap-dump: %s: no __jit_debug_descriptor in the files the core maps%s%s\n",
			path, unread ? " that could be read" : "",
			o->exe ? "" : " (if the executable has moved, give it with --exe)");
		jitmap_process_free(p);
		jitmap_core_free(c);
		return 1;
	}
	/* "ELF core file" or "ELF core file (zstd)": what the file held. */
	char what[64];
	const char *codec = jitmap_core_compression(c);
	snprintf(what, sizeof(what), "ELF core file%s%s%s", codec ? " (" : "", codec ? codec : "",
		 codec ? ")" : "");
	if (o->format == FMT_TEXT) {
		fprintf(out, "%s: %s, %s, %zu JIT descriptor%s", path, what,
			machine_name(jitmap_core_elf_machine(c)), nd, nd == 1 ? "" : "s");
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
			machine_name(jitmap_core_elf_machine(c)), unread);
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
	jitmap_core_free(c);
	return status;
}

/* -- One input -- */

/* Whether a file that is no object file may be a raw stackmap section: its first byte a
 * version jitmap reads (1 to 3: the parser says what is wrong after it, by offset), or it
 * starts as the header of another version would (a version, then three reserved bytes that
 * are zero: "unknown stackmap version N"). Anything else (text, zeros, another format) is
 * said to be neither, not read as a stackmap of "version 104" ('h'). */
static bool may_be_section(const unsigned char *d, size_t len)
{
	if (d[0] >= 1 && d[0] <= 3)
		return true;
	return d[0] && len >= 4 && !d[1] && !d[2] && !d[3];
}

static int dump_one(FILE *out, const char *path, const struct options *o)
{
	jitmap_error e;
	jitmap_image *img = NULL;
	jitmap_stackmap *sm = NULL, *raw = NULL;
	const jitmap_layouts *layouts = NULL;
	int status = 0;
	char kind[96];

	if (is_compressed(path))
		return dump_core(out, path, o);
	if (is_elf(path)) {
		img = jitmap_image_open_file(path, &e);
		if (!img) {
			report(path, &e);
			return 1;
		}
		if (jitmap_image_elf_type(img) == 4) {
			jitmap_image_free(img);
			return dump_core(out, path, o);
		}
		for (size_t i = 0; jitmap_image_warning(img, i); i++)
			fprintf(stderr, "jitmap-dump: %s: warning: %s\n", path, jitmap_image_warning(img, i));
		if (jitmap_image_layouts_problem(img)) {
			fprintf(stderr, "jitmap-dump: %s: %s\n", path, jitmap_image_layouts_problem(img));
			status = 1;
		}
		sm = jitmap_image_stackmap(img);
		layouts = jitmap_image_layouts(img);
		snprintf(kind, sizeof(kind), "ELF %s, %s", elf_type_name(jitmap_image_elf_type(img)),
			 jitmap_arch_name(jitmap_image_arch(img)));
	} else {
		unsigned char *data = NULL;
		size_t len = 0;
		int rc = read_file(path, &data, &len);
		if (rc) {
			fprintf(stderr, "jitmap-dump: %s: %s\n", path,
				rc == -EISDIR	? "a directory, not an object file or a section"
				: rc == -EINVAL ? "not a regular file (a device, pipe or socket)"
						: strerror(-rc));
			return 1;
		}
		if (!len) {
			fprintf(stderr, "jitmap-dump: %s: an empty file, not an object file or a "
				"section\n", path);
			free(data);
			return 1;
		}
		if (llvm_object_format(data, len) != LLVM_OBJECT_NONE) {
			rc = llvm_object_read(path, data, len, &sm, kind, sizeof(kind), &e);
		} else if (!may_be_section(data, len)) {
			fprintf(stderr, "jitmap-dump: %s: not an object file, a core file or a stackmap "
				"section\n", path);
			free(data);
			return 1;
		} else {
			JITMAP_OPTS(jitmap_parse_opts, opts, .order = o->order, .arch = o->arch);
			sm = jitmap_stackmap_parse(data, len, &opts, &e);
			rc = !sm;
			snprintf(kind, sizeof(kind), "raw stackmap section");
		}
		free(data);
		if (rc) {
			report(path, &e);
			return 1;
		}
		raw = sm;
	}

	switch (o->format) {
	case FMT_READOBJ:
		dump_readobj(out, path, sm);
		break;
	case FMT_JSON:
		print_json(out, path, sm, layouts, kind, o);
		break;
	case FMT_TEXT:
		fprintf(out, "%s: %s", path, kind);
		if (!sm) {
			fprintf(out, ", no .llvm_stackmaps section\n");
			if (layouts)
				print_text_layouts(out, layouts);
			break;
		}
		fprintf(out, ", %s-endian, %zu blob%s, %zu record%s\n",
			jitmap_stackmap_byte_order(sm) == JITMAP_ORDER_BIG ? "big" : "little",
			jitmap_stackmap_num_blobs(sm), jitmap_stackmap_num_blobs(sm) == 1 ? "" : "s",
			jitmap_stackmap_num_records(sm), jitmap_stackmap_num_records(sm) == 1 ? "" : "s");
		print_text(out, sm, o);
		if (layouts)
			print_text_layouts(out, layouts);
		break;
	}
	jitmap_stackmap_free(raw);
	jitmap_image_free(img);
	return status;
}

/* -- Arguments -- */

static int parse_ids(const char *s, struct options *o)
{
	size_t n = 1;
	for (const char *p = s; *p; p++)
		n += *p == ',';
	uint64_t *ids = calloc(n, sizeof(*ids));
	if (!ids)
		return -1;
	size_t k = 0;
	while (*s) {
		char *end;
		errno = 0;
		if (*s < '0' || *s > '9') {
			free(ids);
			return -1;
		}
		unsigned long long v = strtoull(s, &end, 0);
		if (errno || (*end && *end != ',')) {
			free(ids);
			return -1;
		}
		ids[k++] = v;
		s = *end ? end + 1 : end;
	}
	free(o->sp_ids);
	o->sp_ids = ids;
	o->num_sp_ids = k;
	return 0;
}

/* One word of an option's closed set of values. */
struct choice {
	const char *name;
	int value;
};

static const struct choice formats[] = {
	{"text", FMT_TEXT}, {"json", FMT_JSON}, {"llvm-readobj", FMT_READOBJ}};
static const struct choice sp_modes[] = {{"auto", JITMAP_STATEPOINT_AUTO},
					 {"all", JITMAP_STATEPOINT_ALL},
					 {"none", JITMAP_STATEPOINT_NONE}};
static const struct choice orders[] = {{"little", JITMAP_ORDER_LITTLE}, {"big", JITMAP_ORDER_BIG}};

/* The value `arg` names in `c`; else a usage error listing the words ("a, b or c"). */
static int choose(const char *what, const char *arg, const struct choice *c, size_t n, int *out)
{
	char words[128] = "";
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(arg, c[i].name)) {
			*out = c[i].value;
			return 0;
		}
		const size_t at = strlen(words);
		snprintf(words + at, sizeof(words) - at, "%s%s", i == 0 ? "" : i + 1 < n ? ", " : " or ",
			 c[i].name);
	}
	usage_error("unknown %s '%s' (%s)", what, arg, words);
	return -1;
}

int main(int argc, char **argv)
{
	tool_heap_in_huge_pages();
	static const struct option longopts[] = {
		{"format", required_argument, NULL, 'f'},
		{"statepoints", required_argument, NULL, 's'},
		{"statepoint-ids", required_argument, NULL, 'i'},
		{"byte-order", required_argument, NULL, 'b'},
		{"arch", required_argument, NULL, 'a'},
		{"exe", required_argument, NULL, 'e'},
		{"sysroot", required_argument, NULL, 'r'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct options o = {.format = FMT_TEXT};
	int c, v, status = 0;

	opterr = 0; /* our own messages, in usage_error's shape */
	while ((c = getopt_long(argc, argv, ":hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (choose("format", optarg, formats, ARRAY_LEN(formats), &v))
				return 2;
			o.format = v;
			break;
		case 's':
			if (choose("statepoint mode", optarg, sp_modes, ARRAY_LEN(sp_modes), &v))
				return 2;
			o.sp_mode = (jitmap_statepoint_mode)v;
			break;
		case 'i':
			if (parse_ids(optarg, &o))
				return usage_error("bad ID list '%s' (numbers separated by commas)", optarg);
			break;
		case 'b':
			if (choose("byte order", optarg, orders, ARRAY_LEN(orders), &v))
				return 2;
			o.order = (jitmap_byte_order)v;
			break;
		case 'a':
			/* jitmap's names, and the other names the library knows (x86_64, arm64). */
			o.arch = jitmap_arch_from_name(optarg);
			if (o.arch == JITMAP_ARCH_UNKNOWN)
				return usage_error("unknown architecture '%s' (x86-64, aarch64, ppc64, s390x or riscv64)",
						   optarg);
			break;
		case 'e':
			o.exe = optarg;
			break;
		case 'r':
			o.sysroot = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V':
			printf("jitmap-dump %s (libjitmap %s; Mach-O and COFF: %s)\n", JITMAP_VERSION,
			       jitmap_version(), llvm_object_support());
			return 0;
		case ':':
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			if (optopt)
				return usage_error("unknown option '-%c'", optopt);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("%s", "no input files");
	/* A missing executable is the user's mistake, not a core's: the library would only warn
	 * that the core maps no file of that name. */
	if (o.exe && access(o.exe, R_OK)) {
		fprintf(stderr, "jitmap-dump: --exe %s: %s\n", o.exe, strerror(errno));
		return 1;
	}

	static char outbuf[1 << 16];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	for (int i = optind; i < argc; i++)
		status |= dump_one(stdout, argv[i], &o);
	free(o.sp_ids);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "jitmap-dump: write error: %s\n", strerror(errno));
		return 1;
	}
	return status;
}
