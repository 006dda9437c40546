/* perfmap.c: JIT code named by perf maps and jitdump files (jitmap/perfmap.h).
 *
 * Each file keeps what it said in order (entries: a code range and a name, or a range code
 * moved away from), and a flat index of what holds each address now: the entries "painted"
 * in order, a later one over an earlier one, into disjoint segments sorted by address. Most
 * files never overlap themselves, and their index is their entries sorted; otherwise one sweep
 * over the range boundaries with a heap of the open entries (the newest on top) paints them,
 * O(n log n). A lookup is a binary search per file, newest file first.
 *
 * A jitdump's unwinding-information records give the .eh_frame of the code load that follows
 * each: the bytes are kept with the load (and with the places code moves to), and a
 * jitmap_cfi is built from them at the first question about that code, then kept.
 */
#define _GNU_SOURCE
#include "jitmap/perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "jitmap/unwind.h"
#include "../common/search.h"

#define NONE UINT32_MAX
#define MAX_FILE (UINT64_C(1) << 30) /* a perf map or jitdump larger is not read (its text
					and index would take gigabytes inside the debugger) */
#define MAX_LISTED 5                 /* problems listed per file; the rest are counted */

/* jitdump (perf's tools/perf/Documentation/jitdump-specification.txt). */
#define JITDUMP_MAGIC 0x4A695444u /* "JiTD" in the writer's byte order */
#define JITDUMP_HEADER 40         /* magic, version, total_size, elf_mach, pad1, pid: u32;
				     timestamp, flags: u64 */
#define JITDUMP_RECORD 16         /* id, total_size: u32; timestamp: u64 */
#define JITDUMP_UNWIND 24         /* unwinding_size, eh_frame_hdr_size, mapped_size: u64 */
enum {
	JIT_CODE_LOAD = 0, JIT_CODE_MOVE = 1, JIT_CODE_DEBUG_INFO = 2, JIT_CODE_CLOSE = 3,
	JIT_CODE_UNWINDING_INFO = 4,
};
/* perf's GEN_ELF_TEXT_OFFSET (tools/perf/util/genelf.h) for the 64-bit machines jitmap
 * unwinds: sizeof(Elf64_Ehdr), where the image perf inject writes puts .text. */
#define PERF_TEXT_OFFSET 64
/* A record's .eh_frame larger than this is not kept (jitmap_cfi_new's own cap). */
#define MAX_EH_FRAME (UINT64_C(64) << 20)

struct entry {
	uint64_t lo, hi;
	uint32_t name;      /* offset in names, or (nlen != 0) in the perf map's text; NONE: the
			       code moved away (names nothing) */
	uint32_t nlen;      /* a perf map's name not NUL-terminated yet: its length in the text */
	uint32_t line;      /* perf map line, jitdump record, from 1 */
	uint32_t dbg, ndbg; /* its source lines: dbg[dbg .. dbg + ndbg), sorted by address */
	uint32_t unw;       /* jitdump: its unwinding information, unw[unw], or NONE */
	uint64_t index;     /* jitdump: code_index */
};

/* The unwinding information of one code load or move: its .eh_frame bytes (in the file's
 * eh, shared by a load and its moves) and where they are read, and the CFI made from them. */
struct unwind {
	uint64_t eh_addr;  /* the address the .eh_frame's pc-relative encodings are read at */
	size_t off, len;   /* the bytes: eh[off .. off + len) */
	uint32_t rec;      /* the unwinding-information record, from 1 */
	int rc;            /* 0: not built yet, or built (cfi); else why it cannot be */
	jitmap_cfi *cfi;
};

struct dbg_line {
	uint64_t addr;
	uint32_t line;
	uint32_t file; /* offset in names */
};

struct seg {
	uint64_t lo, hi;
	uint32_t entry;
};

struct pm_file {
	char *path, *source;
	char *text;         /* a perf map's text: its names, NUL-terminated in place when looked
			       up (one byte more than text_len is allocated) */
	size_t text_len;
	size_t text_mapped; /* text is an anonymous mapping of this size (else malloc'd) */
	struct stat st;
	bool have_st;
	struct entry *e;
	size_t ne, cap_e, e_mapped; /* e_mapped: a perf map's entries, sized once (jitmap__big_alloc) */
	struct dbg_line *dbg;
	size_t ndbg, cap_dbg;
	char *names;
	size_t nnames, cap_names;
	struct unwind *unw;
	size_t nunw, cap_unw;
	uint8_t *eh;        /* the .eh_frame bytes of its unwinding records */
	size_t neh, cap_eh;
	jitmap_arch arch;   /* a jitdump's (its header's elf_mach) */
	struct seg *seg;
	size_t nseg, seg_mapped;
	size_t nranges; /* the code objects it names: lines, or code loads (a move is no new one) */
	bool dirty;
	struct jitmap__problems problems; /* up to MAX_LISTED, then one that counts the rest */
};

struct jitmap_perfmap {
	struct pm_file **files; /* in the order first added */
	size_t n, cap;
};

static void file_clear(struct pm_file *f)
{
	if (f->text_mapped)
		munmap(f->text, f->text_mapped);
	else
		free(f->text);
	f->text = NULL;
	f->text_len = f->text_mapped = 0;
	jitmap__big_free(f->e, f->e_mapped);
	free(f->dbg);
	free(f->names);
	for (size_t k = 0; k < f->nunw; k++)
		jitmap_cfi_free(f->unw[k].cfi);
	free(f->unw);
	free(f->eh);
	f->unw = NULL;
	f->eh = NULL;
	f->nunw = f->cap_unw = f->neh = f->cap_eh = 0;
	f->arch = JITMAP_ARCH_UNKNOWN;
	jitmap__big_free(f->seg, f->seg_mapped);
	jitmap__problems_free(&f->problems);
	f->e = NULL;
	f->dbg = NULL;
	f->names = NULL;
	f->seg = NULL;
	f->ne = f->cap_e = f->e_mapped = f->ndbg = f->cap_dbg = f->nnames = f->cap_names = 0;
	f->nseg = f->seg_mapped = f->nranges = 0;
	f->dirty = false;
	f->have_st = false;
}

static void file_free(struct pm_file *f)
{
	if (!f)
		return;
	file_clear(f);
	free(f->path);
	free(f->source);
	free(f);
}

jitmap_perfmap *jitmap_perfmap_new(void)
{
	jitmap_perfmap *m = calloc(1, sizeof(*m));
	if (!m)
		errno = ENOMEM;
	return m;
}

void jitmap_perfmap_free(jitmap_perfmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		file_free(m->files[i]);
	free(m->files);
	free(m);
}

static struct pm_file *file_named(const jitmap_perfmap *m, const char *path)
{
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->files[i]->path, path))
			return m->files[i];
	return NULL;
}

/* The file named `origin`, emptied, or a new one added last; NULL when out of memory. */
static struct pm_file *file_for(jitmap_perfmap *m, const char *origin, const char *kind)
{
	struct pm_file *f = file_named(m, origin);
	if (f) {
		char *source = NULL;
		if (asprintf(&source, "%s %s", kind, origin) < 0)
			return NULL;
		file_clear(f);
		free(f->source);
		f->source = source;
		return f;
	}
	if (jitmap__grow(&m->files, &m->cap, m->n + 1, sizeof(*m->files)))
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(origin)) || asprintf(&f->source, "%s %s", kind, origin) < 0) {
		if (f)
			f->source = NULL;
		file_free(f);
		return NULL;
	}
	m->files[m->n++] = f;
	return f;
}

__attribute__((format(printf, 2, 3))) static void problem(struct pm_file *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	jitmap__vproblem(&f->problems, MAX_LISTED, fmt, ap);
	va_end(ap);
}

/* After a file was read: the problems not listed, counted in one. */
static void problems_done(struct pm_file *f)
{
	if (f->problems.unlisted)
		jitmap__problem(&f->problems, SIZE_MAX, "%s: %zu more problems like these", f->path,
				f->problems.unlisted);
}

/* `s` (n bytes) NUL-terminated in the names: its offset, or NONE when out of room. */
static uint32_t add_name(struct pm_file *f, const char *s, size_t n)
{
	if (n >= UINT32_MAX - 1 || f->nnames > UINT32_MAX - 1 - n - 1 ||
	    jitmap__grow(&f->names, &f->cap_names, f->nnames + n + 1, 1))
		return NONE;
	const uint32_t at = (uint32_t)f->nnames;
	memcpy(f->names + at, s, n);
	f->names[at + n] = 0;
	f->nnames += n + 1;
	return at;
}

static int add_entry(struct pm_file *f, uint64_t lo, uint64_t size, uint32_t name, unsigned line)
{
	if (f->ne == f->cap_e && (f->e_mapped || jitmap__grow(&f->e, &f->cap_e, f->ne + 1,
								 sizeof(*f->e))))
		return -ENOMEM;
	f->e[f->ne++] = (struct entry){.lo = lo, .hi = lo + size, .name = name, .nlen = 0,
				       .line = line, .dbg = 0, .ndbg = 0, .unw = NONE};
	f->dirty = true;
	return 0;
}

/* Whether [lo, lo + size) can be code: 0; 1 when it names nothing (size 0); -1 when it is
 * larger than any code object or wraps, a problem named by `fmt` (the line or record). */
__attribute__((format(printf, 4, 5))) static int range_check(struct pm_file *f, uint64_t lo,
							     uint64_t size, const char *fmt, ...)
{
	const bool huge = size > JITMAP_PERFMAP_MAX_RANGE, wraps = lo + size < lo;
	if (!huge && !wraps)
		return size == 0;
	char where[4200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(where, sizeof(where), fmt, ap);
	va_end(ap);
	if (huge)
		problem(f, "%s: a code object of 0x%" PRIx64 " bytes (more than 0x%" PRIx64
			   "): not used", where, size, JITMAP_PERFMAP_MAX_RANGE);
	else
		problem(f, "%s: 0x%" PRIx64 " + 0x%" PRIx64 " wraps past the end of the address "
			   "space: not used", where, lo, size);
	return -1;
}

/* -- Perf maps -- */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* A hexadecimal number at *p (0x optional): 1, 0 when there is none, -1 when it has more than
 * 16 digits. */
static int hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	if (end - s > 2 && s[0] == '0' && (s[1] | 0x20) == 'x' && hexval(s[2]) >= 0)
		s += 2;
	uint64_t x = 0;
	int digits = 0, d;
	for (; s < end && (d = hexval(*s)) >= 0; s++, digits++) {
		if (x >> 60)
			return -1;
		x = x << 4 | (uint64_t)d;
	}
	if (!digits)
		return 0;
	*p = s;
	*v = x;
	return 1;
}

static const char *skip_blanks(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* One line of the map's text (f->text): its name stays there until looked up. False only
 * when out of memory. */
static bool perf_map_line(struct pm_file *f, const char *s, const char *end, unsigned line,
			  size_t *added)
{
	while (end > s && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	s = skip_blanks(s, end);
	if (s == end)
		return true; /* an empty line */
	uint64_t lo, size;
	const char *p = s;
	int r = hex(&p, end, &lo);
	if (r <= 0 || p == end || (*p != ' ' && *p != '\t')) {
		problem(f, "%s:%u: %s", f->path, line,
			r < 0 ? "START has more than 16 hexadecimal digits" :
			r == 0 ? "not START SIZE NAME (START is not hexadecimal)" :
				 "not START SIZE NAME (nothing after START)");
		return true;
	}
	p = skip_blanks(p, end);
	r = hex(&p, end, &size);
	if (r <= 0 || (p != end && *p != ' ' && *p != '\t')) {
		problem(f, "%s:%u: %s", f->path, line,
			r < 0 ? "SIZE has more than 16 hexadecimal digits" :
				"not START SIZE NAME (SIZE is not hexadecimal)");
		return true;
	}
	p = skip_blanks(p, end);
	if (p == end) {
		problem(f, "%s:%u: not START SIZE NAME (no NAME)", f->path, line);
		return true;
	}
	if (range_check(f, lo, size, "%s:%u", f->path, line))
		return true;
	if (add_entry(f, lo, size, (uint32_t)(p - f->text), line))
		return false;
	f->e[f->ne - 1].nlen = (uint32_t)(end - p);
	(*added)++;
	return true;
}

/* Parse a perf map's text, which the file takes (`mapped`: an anonymous mapping of that size,
 * else malloc'd). Returns how many code objects it names, or -ENOMEM. */
static int perf_map_take(struct pm_file *f, char *text, size_t len, size_t mapped)
{
	f->text = text;
	f->text_len = len;
	f->text_mapped = mapped;
	size_t lines = 1;
	for (const char *s = text; len && (s = memchr(s, '\n', (size_t)(text + len - s))); s++)
		lines++;
	if (lines >= UINT32_MAX - 1 || len >= UINT32_MAX) {
		problem(f, "%s: %zu lines in %zu bytes: too large, not read", f->path, lines, len);
		problems_done(f);
		return 0;
	}
	f->e = jitmap__big_alloc(lines * sizeof(*f->e), &f->e_mapped); /* a line names one object */
	if (!f->e)
		return -ENOMEM;
	f->cap_e = lines;
	size_t added = 0;
	unsigned line = 0;
	for (const char *s = text, *end = text + len; len && s < end; line++) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *le = nl ? nl : end;
		if (!perf_map_line(f, s, le, line + 1, &added))
			return -ENOMEM;
		s = le + 1;
	}
	problems_done(f);
	f->nranges = added;
	return added > INT32_MAX ? INT32_MAX : (int)added;
}

int jitmap_perfmap_add_perf_map(jitmap_perfmap *m, const char *text, size_t len,
				const char *origin)
{
	if (!m || !origin || (!text && len) || len == SIZE_MAX)
		return -EINVAL;
	char *buf = malloc(len + 1);
	if (!buf)
		return -ENOMEM;
	if (len)
		memcpy(buf, text, len);
	struct pm_file *f = file_for(m, origin, "perf map");
	if (!f) {
		free(buf);
		return -ENOMEM;
	}
	return perf_map_take(f, buf, len, 0);
}

/* -- jitdump -- */

struct reader {
	const uint8_t *p;
	jitmap_byte_order order;
};

/* Whether `len` bytes start with jitdump's magic, and (`order` may be NULL) in which byte order
 * it was written. */
static bool jitdump_order(const uint8_t *p, size_t len, jitmap_byte_order *order)
{
	for (int o = JITMAP_ORDER_LITTLE; len >= 4 && o <= JITMAP_ORDER_BIG; o++) {
		if (jitmap__load(p, 4, (jitmap_byte_order)o) == JITDUMP_MAGIC) {
			if (order)
				*order = (jitmap_byte_order)o;
			return true;
		}
	}
	return false;
}

static uint64_t u32at(const struct reader *r, size_t off)
{
	return jitmap__load(r->p + off, 4, r->order);
}

static uint64_t u64at(const struct reader *r, size_t off)
{
	return jitmap__load(r->p + off, 8, r->order);
}

/* The latest load with this code_index (a move's code), or NONE. */
static uint32_t load_by_index(const struct pm_file *f, const uint32_t *loads, size_t nloads,
			      uint64_t index)
{
	/* Moves are rare; loads are scanned newest first, bounded so that a hostile file of
	 * moves costs O(n * 64), not O(n^2). */
	for (size_t k = nloads, seen = 0; k-- > 0 && seen < 64; seen++)
		if (f->e[loads[k]].index == index)
			return loads[k];
	return NONE;
}

/* A debug-info record: its source lines, kept for the load that follows at `code_addr`.
 * Returns false only when out of memory. */
static bool debug_info(struct pm_file *f, const struct reader *r, size_t off, size_t end,
		       unsigned rec, uint64_t *pending_addr, uint32_t *pending_first)
{
	if (end - off < 16) {
		problem(f, "%s: record %u (debug info) at offset %zu: %zu bytes, too short", f->path,
			rec, off - JITDUMP_RECORD, end - off + JITDUMP_RECORD);
		return true;
	}
	const uint64_t code_addr = u64at(r, off), n = u64at(r, off + 8);
	off += 16;
	/* Each entry is at least 17 bytes (addr, lineno, discrim, a NUL). */
	if (n > (end - off) / 17) {
		problem(f, "%s: record %u (debug info) at offset %zu: %" PRIu64 " lines do not fit "
			   "in its %zu bytes", f->path, rec, off - 16 - JITDUMP_RECORD, n,
			end - off + 16 + JITDUMP_RECORD);
		return true;
	}
	const size_t first = f->ndbg;
	uint32_t prev = NONE;
	for (uint64_t k = 0; k < n; k++) {
		if (end - off < 17)
			break;
		const uint64_t addr = u64at(r, off);
		const uint32_t line = (uint32_t)u32at(r, off + 8);
		off += 16;
		const uint8_t *nul = memchr(r->p + off, 0, end - off);
		if (!nul) {
			problem(f, "%s: record %u (debug info): line %" PRIu64 "'s file name has no end",
				f->path, rec, k);
			break;
		}
		const size_t nlen = (size_t)(nul - (r->p + off));
		uint32_t file;
		if (nlen == 1 && r->p[off] == 0xff && prev != NONE) /* "same as the previous" */
			file = prev;
		else if ((file = add_name(f, (const char *)r->p + off, nlen)) == NONE)
			return false;
		off += nlen + 1;
		prev = file;
		if (jitmap__grow(&f->dbg, &f->cap_dbg, f->ndbg + 1, sizeof(*f->dbg)))
			return false;
		f->dbg[f->ndbg++] = (struct dbg_line){.addr = addr, .line = line, .file = file};
	}
	*pending_addr = code_addr;
	*pending_first = (uint32_t)first;
	return true;
}

/* An unwinding-information record (JIT_CODE_UNWINDING_INFO, id 4: perf's
 * jitdump-specification.txt §IX, tools/perf/util/jitdump.h's jr_code_unwinding_info):
 * unwinding_size, eh_frame_hdr_size, mapped_size (u64 each), then unwinding_size bytes of data,
 * then padding to the record's end (CPython and V8 pad to 8). What the data holds, and where,
 * from its one reader and its writers (the specification's prose says the header comes first
 * and the .eh_frame after it; none of them does that):
 *   - perf inject (tools/perf/util/genelf.c, jit_add_eh_frame_info) takes the first
 *     unwinding_size - eh_frame_hdr_size bytes as .eh_frame and the eh_frame_hdr_size bytes
 *     after them as .eh_frame_hdr, at ALIGN_8(GEN_ELF_TEXT_OFFSET + code_size) and right
 *     after it, in an image whose .text is at GEN_ELF_TEXT_OFFSET (sizeof(Elf64_Ehdr), 64);
 *     jitdump.c (jit_repipe_code_load) maps that image with .text at the load's code_addr.
 *     So .eh_frame's pc-relative encodings are read at code_addr + ALIGN_8(code_size);
 *   - CPython 3.13 -X perf_jit (Python/perf_jit_trampoline.c, perf_map_jit_write_entry)
 *     writes one before each trampoline's load: .eh_frame (a 24-byte CIE "zR", FDE encoding
 *     pcrel|sdata4, and one FDE whose pc_begin is the constant -0x30: the code 16 bytes before
 *     .eh_frame, ALIGN_8 of its 15-byte trampoline; no terminator), then a 20-byte
 *     .eh_frame_hdr whose one table entry is -(ALIGN_8(code_size) + .eh_frame's size) from the
 *     header (datarel): the same place; mapped_size is unwinding_size rounded up to 16;
 *   - V8 --perf-prof --perf-prof-unwinding-info (src/diagnostics/perf-jit.cc,
 *     LogWriteUnwindingInfo; eh-frame.cc, EhFrameWriter::Finish) writes the code object's own
 *     unwinding info, .eh_frame (CIE version 3 "zLR", an FDE whose pc_begin is
 *     -(RoundUp(code_size, 8) + the field's offset), a terminator) then its 20-byte
 *     .eh_frame_hdr; for code without any, only an empty header (unwinding_size ==
 *     eh_frame_hdr_size, mapped_size 0): no .eh_frame, no CFI.
 * mapped_size only sizes the mapping perf synthesizes, and is not used here. The record
 * belongs to the next code load, whatever records come between (perf keeps it pending until
 * jit_repipe_code_load). Here the record is checked and remembered (its offset in the input
 * in *pending); its bytes are copied when a load takes it. */
struct pending_unwind {
	size_t off, len; /* the .eh_frame bytes in the input; len 0: none */
	uint32_t rec;    /* the record, from 1; 0: nothing pending */
	size_t at;       /* its offset, for problems */
};

static void unwinding_info(struct pm_file *f, const struct reader *r, size_t off, size_t body,
			   size_t end, unsigned rec, struct pending_unwind *pending)
{
	if (pending->rec)
		problem(f, "%s: record %u at offset %zu (unwinding info): another one follows "
			   "before any code load (record %u): not used", f->path, pending->rec,
			pending->at, rec);
	*pending = (struct pending_unwind){0};
	if (end - body < JITDUMP_UNWIND) {
		problem(f, "%s: record %u at offset %zu (unwinding info): too short", f->path, rec,
			off);
		return;
	}
	const uint64_t size = u64at(r, body), hdr = u64at(r, body + 8);
	const size_t room = end - body - JITDUMP_UNWIND;
	if (size > room) {
		problem(f, "%s: record %u at offset %zu (unwinding info): %" PRIu64 " bytes of "
			   "unwinding data do not fit in its %zu", f->path, rec, off, size, room);
		return;
	}
	if (hdr > size) {
		problem(f, "%s: record %u at offset %zu (unwinding info): an .eh_frame_hdr of "
			   "%" PRIu64 " bytes in %" PRIu64 " bytes of unwinding data", f->path, rec,
			off, hdr, size);
		return;
	}
	if (size - hdr > MAX_EH_FRAME) {
		problem(f, "%s: record %u at offset %zu (unwinding info): an .eh_frame of %" PRIu64
			   " bytes (more than %" PRIu64 "): not used", f->path, rec, off,
			size - hdr, MAX_EH_FRAME);
		return;
	}
	*pending = (struct pending_unwind){.off = body + JITDUMP_UNWIND,
					   .len = (size_t)(size - hdr), .rec = rec, .at = off};
}

/* The pending unwinding information given to entry `e`, a load: its .eh_frame copied, read
 * at perf's place for it (unwinding_info says why). False only when out of memory. */
static bool take_unwind(struct pm_file *f, const struct reader *r, struct entry *e,
			const struct pending_unwind *pending)
{
	if (!pending->rec || !pending->len) /* none, or V8's empty one: no .eh_frame */
		return true;
	if (jitmap__grow(&f->unw, &f->cap_unw, f->nunw + 1, sizeof(*f->unw)) ||
	    jitmap__grow(&f->eh, &f->cap_eh, f->neh + pending->len, 1))
		return false;
	memcpy(f->eh + f->neh, r->p + pending->off, pending->len);
	const uint64_t size = e->hi - e->lo;
	/* ALIGN_8(PERF_TEXT_OFFSET + size) - PERF_TEXT_OFFSET; range_check bounded size. */
	const uint64_t after = ((PERF_TEXT_OFFSET + size + 7) & ~UINT64_C(7)) - PERF_TEXT_OFFSET;
	f->unw[f->nunw] = (struct unwind){.eh_addr = e->lo + after, .off = f->neh,
					  .len = pending->len, .rec = pending->rec};
	f->neh += pending->len;
	e->unw = (uint32_t)f->nunw++;
	return true;
}

/* A move's entry `to` takes the unwinding information of `from` (a load or an earlier move),
 * the .eh_frame read as far after the new address as it was after the old one: perf
 * (jit_repipe_code_move) maps the image it wrote for the load, .text and .eh_frame
 * together, at new_code_addr (under the name jitted-PID-INDEX, without the load's ".so": a
 * slip in perf, not in the format). False only when out of memory. */
static bool move_unwind(struct pm_file *f, uint32_t from, struct entry *to)
{
	const uint32_t k = f->e[from].unw;
	if (k == NONE)
		return true;
	if (jitmap__grow(&f->unw, &f->cap_unw, f->nunw + 1, sizeof(*f->unw)))
		return false;
	struct unwind u = f->unw[k];
	u.eh_addr = to->lo + (u.eh_addr - f->e[from].lo);
	u.rc = 0;
	u.cfi = NULL;
	f->unw[f->nunw] = u;
	to->unw = (uint32_t)f->nunw++;
	return true;
}

static int cmp_dbg(const void *a, const void *b)
{
	const struct dbg_line *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int jitmap_perfmap_add_jitdump(jitmap_perfmap *m, const void *data, size_t len,
			       const char *origin, jitmap_error *err)
{
	if (!m || !origin || (!data && len))
		return jitmap__fail(err, -EINVAL, 0, "no map, origin or data");
	struct reader r = {.p = data};
	if (len < JITDUMP_HEADER)
		return jitmap__fail(err, -EINVAL, 0, "%zu bytes: shorter than a jitdump header (%d)",
				    len, JITDUMP_HEADER);
	if (!jitdump_order(data, len, &r.order))
		return jitmap__fail(err, -EINVAL, 0, "no jitdump magic (JiTD)");
	const uint64_t version = u32at(&r, 4), header = u32at(&r, 8);
	if (version != 1)
		return jitmap__fail(err, -EINVAL, 4, "jitdump version %" PRIu64 " (jitmap reads 1)",
				    version);
	if (header < JITDUMP_HEADER || header > len)
		return jitmap__fail(err, -EINVAL, 8, "a header of %" PRIu64 " bytes in a file of %zu",
				    header, len);
	struct pm_file *f = file_for(m, origin, "jitdump");
	if (!f)
		return -ENOMEM;
	uint32_t *loads = NULL; /* entries that are loads, in order */
	size_t nloads = 0, cap_loads = 0, added = 0;
	uint64_t pending_addr = 0;
	uint32_t pending_first = NONE; /* debug lines waiting for their load */
	struct pending_unwind pending_unw = {0};
	unsigned rec = 0;
	int rc = 0;
	bool cut = false; /* the file ends inside a record (maybe the load being written) */
	f->arch = jitmap_arch_from_elf_machine((unsigned)u32at(&r, 12));
	for (size_t off = (size_t)header; off < len; rec++) {
		if (len - off < JITDUMP_RECORD || rec == UINT32_MAX - 1) {
			problem(f, "%s: the file ends inside record %u at offset %zu (still being "
				   "written, or cut short)", f->path, rec + 1, off);
			cut = true;
			break;
		}
		const uint64_t id = u32at(&r, off), size = u32at(&r, off + 4);
		if (size < JITDUMP_RECORD || size > len - off) {
			problem(f, "%s: record %u at offset %zu: %" PRIu64 " bytes, %s", f->path,
				rec + 1, off, size,
				size < JITDUMP_RECORD ? "shorter than a record header" :
							"past the end of the file (still being "
							"written, or cut short)");
			cut = size >= JITDUMP_RECORD;
			break;
		}
		const size_t body = off + JITDUMP_RECORD, end = off + (size_t)size;
#define WHERE "%s: record %u at offset %zu", f->path, rec + 1, off
		if (id == JIT_CODE_CLOSE)
			break;
		if (id == JIT_CODE_DEBUG_INFO) {
			if (!debug_info(f, &r, body, end, rec + 1, &pending_addr, &pending_first)) {
				rc = -ENOMEM;
				break;
			}
		} else if (id == JIT_CODE_UNWINDING_INFO) {
			unwinding_info(f, &r, off, body, end, rec + 1, &pending_unw);
		} else if (id == JIT_CODE_LOAD) {
			/* pid, tid: u32; vma, code_addr, code_size, code_index: u64; name; code */
			const uint8_t *nul = end - body > 40 ? memchr(r.p + body + 40, 0, end - body - 40)
							     : NULL;
			if (!nul) {
				problem(f, "%s: record %u at offset %zu (code load): %s", f->path, rec + 1, off,
					end - body < 40 ? "too short" : "its name has no end");
			} else {
				const uint64_t addr = u64at(&r, body + 16), csize = u64at(&r, body + 24);
				const size_t nlen = (size_t)(nul - (r.p + body + 40));
				if (!range_check(f, addr, csize, WHERE)) {
					const uint32_t name = add_name(f, (const char *)r.p + body + 40,
								       nlen);
					if (name == NONE || add_entry(f, addr, csize, name, rec + 1) ||
					    jitmap__grow(&loads, &cap_loads, nloads + 1, sizeof(*loads))) {
						rc = -ENOMEM;
						break;
					}
					struct entry *e = &f->e[f->ne - 1];
					e->index = u64at(&r, body + 32);
					if (pending_first != NONE && pending_addr == addr) {
						e->dbg = pending_first;
						e->ndbg = (uint32_t)(f->ndbg - pending_first);
					}
					if (!take_unwind(f, &r, e, &pending_unw)) {
						rc = -ENOMEM;
						break;
					}
					loads[nloads++] = (uint32_t)(f->ne - 1);
					added++;
				}
			}
			pending_first = NONE;
			pending_unw = (struct pending_unwind){0};
		} else if (id == JIT_CODE_MOVE) {
			/* pid, tid: u32; vma, old_code_addr, new_code_addr, code_size, code_index */
			if (end - body < 48) {
				problem(f, "%s: record %u at offset %zu (code move): too short", f->path,
					rec + 1, off);
			} else {
				const uint64_t from = u64at(&r, body + 16), to = u64at(&r, body + 24);
				const uint64_t csize = u64at(&r, body + 32), index = u64at(&r, body + 40);
				const uint32_t load = load_by_index(f, loads, nloads, index);
				if (load == NONE) {
					problem(f, "%s: record %u at offset %zu: a move of code index %" PRIu64
						   " never loaded", f->path, rec + 1, off, index);
				} else if (!range_check(f, from, csize, WHERE) &&
					   !range_check(f, to, csize, WHERE)) {
					const uint32_t name = f->e[load].name;
					if (add_entry(f, from, csize, NONE, rec + 1) ||
					    add_entry(f, to, csize, name, rec + 1) ||
					    jitmap__grow(&loads, &cap_loads, nloads + 1,
							 sizeof(*loads)) ||
					    !move_unwind(f, load, &f->e[f->ne - 1])) {
						rc = -ENOMEM;
						break;
					}
					f->e[f->ne - 1].index = index;
					loads[nloads++] = (uint32_t)(f->ne - 1);
				}
			}
		} /* records of later versions: skipped */
#undef WHERE
		off = end;
	}
	if (pending_unw.rec && !cut)
		problem(f, "%s: record %u at offset %zu (unwinding info): no code load follows it: "
			   "not used", f->path, pending_unw.rec, pending_unw.at);
	free(loads);
	/* Each load's source lines by address, for the lookup's search. */
	for (size_t i = 0; i < f->ne; i++)
		if (f->e[i].ndbg > 1)
			qsort(f->dbg + f->e[i].dbg, f->e[i].ndbg, sizeof(*f->dbg), cmp_dbg);
	problems_done(f);
	f->nranges = added;
	if (rc)
		return rc;
	return added > INT32_MAX ? INT32_MAX : (int)added;
}

/* -- Files -- */

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* A problem of its own for a file that could not be read (replacing what it said). */
static int unreadable(jitmap_perfmap *m, const char *path, int code, const char *what)
{
	struct pm_file *f = file_for(m, path, "perf map");
	if (!f)
		return -ENOMEM;
	problem(f, "%s: %s (%s)", path, what, strerror(-code));
	return code;
}

int jitmap_perfmap_add_file(jitmap_perfmap *m, const char *path, jitmap_error *err)
{
	if (!m || !path)
		return jitmap__fail(err, -EINVAL, 0, "no map or path");
	const int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return unreadable(m, path, -errno, "cannot be opened");
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		const int code = S_ISREG(st.st_mode) ? -errno : -EINVAL;
		close(fd);
		return unreadable(m, path, code, "not a regular file");
	}
	struct pm_file *old = file_named(m, path);
	if (old && old->have_st && same_file(&old->st, &st)) {
		close(fd);
		return old->nranges > INT32_MAX ? INT32_MAX : (int)old->nranges;
	}
	if ((uint64_t)st.st_size > MAX_FILE) {
		close(fd);
		return unreadable(m, path, -EFBIG, "larger than 1 GiB: not read");
	}
	/* Read to the end (a live runtime may be appending: what is there now), into memory
	 * faulted in by one call: a large map read into fresh pages otherwise takes a fault a
	 * page, which costs more than reading it on a virtual machine. Not the file mapped: a
	 * writer that truncates it would make reading it a SIGBUS in the debugger. */
	size_t cap = (size_t)st.st_size + 1, len = 0;
	char *buf = mmap(NULL, cap, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (len == cap) {
			close(fd);
			break; /* grew while read: what was there when it was looked at */
		}
		const ssize_t got = read(fd, buf + len, cap - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			const int code = got < 0 ? -errno : 0;
			close(fd);
			if (code) {
				munmap(buf, cap);
				return unreadable(m, path, code, "cannot be read");
			}
			break;
		}
		len += (size_t)got;
	}
	int rc;
	if (jitdump_order((const uint8_t *)buf, len, NULL)) {
		jitmap_error e;
		rc = jitmap_perfmap_add_jitdump(m, buf, len, path, &e);
		if (rc == -EINVAL) {
			struct pm_file *f = file_for(m, path, "jitdump");
			if (f)
				problem(f, "%s: not a jitdump file: at offset %" PRIu64 ", %s", path,
					e.offset, e.reason);
			if (err)
				*err = e;
		}
	} else {
		/* A map that grew while it was read may end inside a line being written: up to
		 * its last whole line. */
		size_t upto = len;
		if (len == cap)
			while (upto && buf[upto - 1] != '\n')
				upto--;
		struct pm_file *f = file_for(m, path, "perf map");
		if (!f) {
			munmap(buf, cap);
			return -ENOMEM;
		}
		rc = perf_map_take(f, buf, upto, cap); /* the file keeps the buffer */
		buf = NULL;
	}
	if (buf)
		munmap(buf, cap);
	struct pm_file *f = file_named(m, path);
	if (f && rc >= 0) {
		f->st = st;
		f->have_st = true;
	}
	return rc;
}

/* The PID process `pid` sees itself as (the last of /proc/PID/status's NSpid), or `pid`. */
static long own_pid(int pid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	FILE *fp = fopen(path, "re");
	long own = pid;
	if (!fp)
		return own;
	while (fgets(line, sizeof(line), fp)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		char *s = line + 6, *e;
		for (long v; (v = strtol(s, &e, 10)), e != s; s = e)
			own = v;
		break;
	}
	fclose(fp);
	return own;
}

static bool is_jitdump_name(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const size_t n = strlen(base);
	return n > 9 && !strncmp(base, "jit-", 4) && !strcmp(base + n - 5, ".dump");
}

int jitmap_perfmap_add_process(jitmap_perfmap *m, int pid)
{
	if (!m || pid <= 0)
		return -EINVAL;
	int found = 0;
	char root[64], path[4200];
	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	/* Its files by their own names when it sees the same root as this process. */
	struct stat theirs, ours;
	if (stat(root, &theirs) == 0 && stat("/", &ours) == 0 && theirs.st_dev == ours.st_dev &&
	    theirs.st_ino == ours.st_ino)
		root[0] = 0;
	snprintf(path, sizeof(path), "%s/tmp/perf-%ld.map", root, own_pid(pid));
	if (access(path, F_OK) == 0) {
		found++;
		if (jitmap_perfmap_add_file(m, path, NULL) == -ENOMEM)
			return -ENOMEM;
	}
	char maps[64];
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	FILE *fp = fopen(maps, "re");
	if (!fp)
		return found;
	char line[4200], last[4200] = "";
	while (fgets(line, sizeof(line), fp)) {
		char *file = strchr(line, '/');
		if (!file)
			continue;
		file[strcspn(file, "\n")] = 0;
		if (!is_jitdump_name(file) || !strcmp(file, last))
			continue;
		snprintf(last, sizeof(last), "%s", file);
		snprintf(path, sizeof(path), "%s%s", root, file);
		found++;
		if (jitmap_perfmap_add_file(m, path, NULL) == -ENOMEM) {
			fclose(fp);
			return -ENOMEM;
		}
	}
	fclose(fp);
	return found;
}

/* -- The index -- */

/* A max-heap of entry numbers (the newest entry on top). */
static void heap_push(uint32_t *h, size_t *n, uint32_t v)
{
	size_t i = (*n)++;
	for (; i && h[(i - 1) / 2] < v; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n)
{
	const uint32_t v = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

static void add_seg(struct pm_file *f, uint64_t lo, uint64_t hi, uint32_t entry)
{
	if (f->nseg && f->seg[f->nseg - 1].entry == entry && f->seg[f->nseg - 1].hi == lo)
		f->seg[f->nseg - 1].hi = hi;
	else
		f->seg[f->nseg++] = (struct seg){.lo = lo, .hi = hi, .entry = entry};
}

/* What holds each address now: the entries painted in order into disjoint segments (room for
 * 2n: a boundary starts at most one segment, and there are at most 2n of them). */
static int paint(struct pm_file *f)
{
	jitmap__big_free(f->seg, f->seg_mapped);
	f->seg = NULL;
	f->nseg = f->seg_mapped = 0;
	const size_t n = f->ne;
	f->dirty = false;
	if (!n || n >= NONE)
		return 0;
	/* the starts (lo, ent), the ends (hi), the sorts' scratch (tk, tv), the heap */
	size_t m_scratch, m_seg;
	uint64_t *lo = jitmap__big_alloc(n * (3 * sizeof(uint64_t) + 3 * sizeof(uint32_t)), &m_scratch);
	f->seg = jitmap__big_alloc(2 * n * sizeof(*f->seg), &m_seg);
	if (!lo || !f->seg) {
		jitmap__big_free(lo, m_scratch);
		jitmap__big_free(f->seg, m_seg);
		f->seg = NULL;
		f->dirty = true;
		return -ENOMEM;
	}
	f->seg_mapped = m_seg;
	uint64_t *hi = lo + n, *tk = hi + n;
	uint32_t *ent = (uint32_t *)(tk + n), *tv = ent + n, *heap = tv + n;
	for (size_t i = 0; i < n; i++) {
		lo[i] = f->e[i].lo;
		hi[i] = f->e[i].hi;
		ent[i] = (uint32_t)i;
	}
	jitmap__radix_sort(lo, ent, n, tk, tv);
	bool disjoint = true;
	for (size_t k = 0; k < n && disjoint; k++)
		disjoint = f->e[ent[k]].name != NONE && (k + 1 == n || f->e[ent[k]].hi <= lo[k + 1]);
	if (disjoint) {
		for (size_t k = 0; k < n; k++)
			add_seg(f, lo[k], f->e[ent[k]].hi, ent[k]);
		jitmap__big_free(lo, m_scratch);
		return 0;
	}
	/* One sweep over the boundaries (the starts and the ends, each sorted): at each, the
	 * newest open entry holds the addresses up to the next boundary. */
	jitmap__radix_sort(hi, NULL, n, tk, NULL);
	size_t nheap = 0, i = 0, j = 0;
	while (j < n) { /* the last end comes after every start */
		const uint64_t x = i < n && lo[i] <= hi[j] ? lo[i] : hi[j];
		while (i < n && lo[i] == x)
			heap_push(heap, &nheap, ent[i++]);
		while (j < n && hi[j] == x)
			j++;
		while (nheap && f->e[heap[0]].hi <= x)
			heap_pop(heap, &nheap);
		if (!nheap)
			continue;
		const uint64_t next = i < n && lo[i] < hi[j] ? lo[i] : hi[j]; /* j < n: open */
		if (f->e[heap[0]].name != NONE)
			add_seg(f, x, next, heap[0]);
	}
	jitmap__big_free(lo, m_scratch);
	return 0;
}

/* The entry that holds `addr` now (the newest file's that names it), and its file: 0,
 * -ENOENT, -ENOMEM. */
static int entry_at(jitmap_perfmap *m, uint64_t addr, struct pm_file **file,
		    struct entry **entry)
{
	for (size_t i = m->n; i-- > 0;) {
		struct pm_file *f = m->files[i];
		if (f->dirty && paint(f))
			return -ENOMEM;
		const size_t at = JITMAP_UPPER_BOUND(f->seg, f->nseg, lo, addr);
		if (!at || addr >= f->seg[at - 1].hi)
			continue;
		*file = f;
		*entry = &f->e[f->seg[at - 1].entry];
		return 0;
	}
	return -ENOENT;
}

int jitmap_perfmap_lookup(jitmap_perfmap *m, uint64_t addr, jitmap_perfmap_sym *out)
{
	if (!m || !out || out->sz < sizeof(size_t))
		return -EINVAL;
	struct pm_file *f;
	struct entry *e;
	const int rc = entry_at(m, addr, &f, &e);
	if (rc)
		return rc;
	if (e->nlen) { /* a perf map's name, ended in its text now */
		f->text[e->name + e->nlen] = 0;
		e->nlen = 0;
	}
	jitmap_perfmap_sym sym = {.sz = sizeof(sym),
				  .name = (f->text ? f->text : f->names) + e->name,
				  .lo = e->lo, .hi = e->hi, .origin = f->path,
				  .source = f->source, .line = e->line};
	if (e->ndbg) {
		const struct dbg_line *d = f->dbg + e->dbg;
		const size_t j = JITMAP_UPPER_BOUND(d, e->ndbg, addr, addr);
		if (j) {
			sym.file = f->names + d[j - 1].file;
			sym.file_line = d[j - 1].line;
		}
	}
	return jitmap__give(out, &sym, sizeof(sym));
}

/* The CFI of unwinding information `u`, for the code of entry `e`: built at the first call
 * (a failure, but for want of memory, is said once as a problem of the file and kept). */
static int unwind_cfi(struct pm_file *f, const struct entry *e, struct unwind *u)
{
	if (u->cfi || u->rc)
		return u->rc;
	jitmap_error err = {0};
	u->cfi = jitmap_cfi_new(f->arch, f->eh + u->off, u->len, u->eh_addr, NULL, 0, &err);
	if (!u->cfi) {
		const int code = err.code < 0 ? err.code : -EINVAL;
		if (code == -ENOMEM)
			return code;
		u->rc = code;
		if (code == -ENOTSUP)
			problem(f, "%s: record %u (unwinding info): %s: not used", f->path, u->rec,
				err.reason);
		else if (code != -ENOENT) /* ENOENT: no FDE, which says nothing is known */
			problem(f, "%s: record %u (unwinding info, read at 0x%" PRIx64 " for the "
				   "code at 0x%" PRIx64 "): offset %" PRIu64 " of its .eh_frame: "
				   "%s", f->path, u->rec, u->eh_addr, e->lo, err.offset, err.reason);
		return u->rc;
	}
	/* Every writer's FDE starts at the code (unwinding_info); one that does not was written
	 * for another place than perf's: say so once (its rows may still cover some PCs). */
	if (!jitmap_cfi_covers(u->cfi, e->lo, NULL, NULL))
		problem(f, "%s: record %u (unwinding info, read at 0x%" PRIx64 "): no FDE covers "
			   "the first byte of its code at 0x%" PRIx64, f->path, u->rec, u->eh_addr,
			e->lo);
	return 0;
}

int jitmap_perfmap_cfi(jitmap_perfmap *m, uint64_t addr, const jitmap_cfi **cfi)
{
	if (cfi)
		*cfi = NULL;
	if (!m || !cfi)
		return -EINVAL;
	struct pm_file *f;
	struct entry *e;
	int rc = entry_at(m, addr, &f, &e);
	if (rc)
		return rc;
	if (e->unw == NONE)
		return -ENOENT;
	struct unwind *u = &f->unw[e->unw];
	rc = unwind_cfi(f, e, u);
	if (rc)
		return rc;
	if (!jitmap_cfi_covers(u->cfi, addr, NULL, NULL))
		return -ENOENT;
	*cfi = u->cfi;
	return 0;
}

size_t jitmap_perfmap_num_files(const jitmap_perfmap *m)
{
	return m ? m->n : 0;
}

const char *jitmap_perfmap_file(const jitmap_perfmap *m, size_t i, size_t *num_ranges)
{
	if (num_ranges)
		*num_ranges = m && i < m->n ? m->files[i]->nranges : 0;
	return m && i < m->n ? m->files[i]->path : NULL;
}

size_t jitmap_perfmap_num_ranges(jitmap_perfmap *m)
{
	size_t n = 0;
	for (size_t i = 0; m && i < m->n; i++)
		n += m->files[i]->nranges;
	return n;
}

size_t jitmap_perfmap_num_problems(const jitmap_perfmap *m)
{
	size_t n = 0;
	for (size_t i = 0; m && i < m->n; i++)
		n += m->files[i]->problems.n;
	return n;
}

const char *jitmap_perfmap_problem(const jitmap_perfmap *m, size_t k)
{
	for (size_t i = 0; m && i < m->n; i++) {
		if (k < m->files[i]->problems.n)
			return m->files[i]->problems.items[k];
		k -= m->files[i]->problems.n;
	}
	return NULL;
}
