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
 *
 * This file reads the command line and opens each input (an ELF image, a Mach-O or COFF file,
 * a raw section, a core); what writes the output is apart (dump_tool.h): the text and JSON of
 * a stackmap in dump_print.c, a core's entries in dump_core.c, llvm-readobj's text in
 * dump_readobj.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitmap/jitmap.h"
#include "jitmap/core.h"
#include "dump_readobj.h"
#include "dump_tool.h"
#include "heap.h"
#include "llvm_object.h"
#include "report.h"

#ifndef JITMAP_VERSION
#define JITMAP_VERSION "0"
#endif

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

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

/* -- Inputs -- */

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
		dump_print_json(out, path, sm, layouts, kind, o);
		break;
	case FMT_TEXT:
		fprintf(out, "%s: %s", path, kind);
		if (!sm) {
			fprintf(out, ", no .llvm_stackmaps section\n");
			if (layouts)
				dump_print_text_layouts(out, layouts);
			break;
		}
		fprintf(out, ", %s-endian, %zu blob%s, %zu record%s\n",
			jitmap_stackmap_byte_order(sm) == JITMAP_ORDER_BIG ? "big" : "little",
			jitmap_stackmap_num_blobs(sm), jitmap_stackmap_num_blobs(sm) == 1 ? "" : "s",
			jitmap_stackmap_num_records(sm), jitmap_stackmap_num_records(sm) == 1 ? "" : "s");
		dump_print_text(out, sm, o);
		if (layouts)
			dump_print_text_layouts(out, layouts);
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
