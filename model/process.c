/* process.c: the stackmaps of one process (see include/jitmap/process.h for the policy).
 *
 * Sources are kept from one scan to the next. JIT entries are found by their key (entry,
 * image address, image size) in an array sorted by key; files by (path, section address) in a
 * short list. A stackmap that a scan replaces, and every source it drops, stay alive until
 * jitmap_process_scan_end has taken them out of the index.
 *
 * A section parsed from memory is a `struct parse`, shared by every source that read the same
 * bytes at the same address: the same JIT entry found by a descriptor walk and handed in by a
 * debugger (GDB's plugin and the Python commands use one process) is parsed and indexed once.
 * It is buried when the last source lets go of it and the index no longer holds it.
 */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/search.h"
#include "internal.h"
#include "jitmap/core.h"
#include "jitmap/process.h"

#define DEFAULT_MAX_IMAGE (UINT64_C(256) << 20)
#define DEFAULT_MAX_SECTION (UINT64_C(256) << 20)
#define SAMPLE 64 /* image bytes compared to decide that a kept entry is the same */
#define CODE_SAMPLE 16 /* code bytes compared to decide that an image handed in is stale */
#define MAX_CODE_SPAN (UINT64_C(1) << 36) /* a larger "code" section is not code */
#define MAX_CFI_SECTION (UINT64_C(64) << 20) /* .eh_frame read from the target */
/* A lazy scan glances at images up to this size (elf.c reads one this size whole too). */
#define GLANCE_MAX_IMAGE (UINT64_C(64) << 10)
/* A lazy scan reads the images it glances at in batches of at most this many bytes and
 * entries (jitmap__read_many). */
#define BATCH_BYTES ((size_t)128 << 10)
#define BATCH_ENTRIES 1024
_Static_assert(GLANCE_MAX_IMAGE <= BATCH_BYTES, "a batch holds any image glanced at");

struct text_list {
	char **items;
	size_t n, cap;
};

struct parse {
	jitmap_stackmap *sm;
	uint64_t addr, size, hash; /* where the bytes were, and their hash: the sharing key */
	jitmap_arch arch;          /* what they were parsed as */
	jitmap_byte_order order;
	bool complete;             /* complete_live's answer for it */
	int filled;                /* addresses complete_live took from a registered copy */
	unsigned refs;             /* sources whose stackmap it is */
	unsigned indexed;          /* sources that put it in the index */
};

/* A JIT descriptor a scan walked, and how far. */
struct descriptor {
	uint64_t addr;
	char *where;
	bool readable, complete;
	size_t entries;
	char *problem; /* why the list was not read to its end */
};

struct code_range {
	uint64_t lo, hi;
	uint64_t max_hi; /* the greatest hi of this range and those before it (by lo) */
	size_t rank;     /* of the same range, the smaller rank is the answer (sorted last) */
	struct source *s;
};

/* An image handed in that was dropped, until jitmap_process_take_dropped. */
struct drop {
	uint64_t id;
	bool replaced;
	char *why;
};

struct source {
	jitmap_source_kind kind;
	bool handed;    /* an image handed in by a debugger (jitmap_process_add_image) */
	uint64_t id;    /* handed: its id */
	const void *bytes; /* handed: the image's bytes, while jitmap_process_add_image runs */
	bool recheck;   /* handed: look at the live section again at next use */
	bool seen;      /* in the current scan */
	bool listed;    /* in jitmap_process_source's list */
	size_t listed_at; /* its index there */
	char name[64];  /* JIT: "JIT entry 0x..." */
	/* JIT entries */
	uint64_t descriptor, entry, symfile_addr, symfile_size;
	uint8_t sample[SAMPLE];
	size_t sample_len; /* 0: unreadable */
	jitmap_image *image;      /* JIT: without its stackmap copy; object: the whole file */
	bool glanced;             /* lazy scan: not opened yet; spans, arch and order from a
				   * glance at its bytes (opened when a PC falls in its code) */
	jitmap_image *full_image; /* JIT: with the copy, opened on first need */
	bool full_tried;
	char *full_problem;       /* why it did not open (said again at each re-read) */
	bool complete;            /* the live section was seen with every address set */
	uint64_t live_hash;
	bool have_hash;
	uint8_t live_head[SAMPLE]; /* the live section's first bytes when last parsed */
	size_t live_head_len;
	/* objects */
	char *path;
	int64_t mtime_ns;
	int64_t file_size;
	bool stat_ok;
	/* both */
	uint64_t sm_addr, sm_size, bias;
	bool has_section;
	jitmap_arch arch;
	jitmap_byte_order order;
	jitmap_stackmap *sm;      /* NULL, or parse->sm, or the full image's */
	struct parse *parse;      /* when sm was parsed from memory */
	bool live;
	const jitmap_stackmap *indexed; /* what the index holds for this source */
	struct parse *indexed_parse;    /* and its parse, if it is one */
	struct text_list problems, notes;
	size_t open_problems;     /* problems[0..open_problems) are the image's; the rest the
				   * last live read's */
	/* JIT images: code and functions as jitmap_process_code_at gives them (the policy in
	 * process.h), made at first need. */
	jitmap_image_range *spans; /* sorted, disjoint */
	size_t nspans;
	bool spans_made;
	jitmap_code_function *fns; /* sorted, disjoint, inside spans */
	size_t nfns;
	bool fns_made;
	/* CFI, read at first need (jitmap_process_code_cfi). */
	jitmap_cfi *cfi;
	bool cfi_absent;          /* neither .eh_frame nor .debug_frame: nothing to read */
	uint64_t cfi_failed;      /* the generation whose attempt failed, + 1 (0: none) */
	char *cfi_problem;
	/* Handed: whether its code is still what it was at its first use. */
	bool code_check;          /* compare the sample at the next use */
	bool usable;              /* the last comparison's answer */
	bool sampled;
	uint64_t sample_at;
	size_t code_sample_len;
	uint8_t code_sample[CODE_SAMPLE];
	char *code_problem;       /* why it could not be sampled */
};

struct jitmap_process {
	jitmap_target target;
	bool lazy; /* JITMAP_PROCESS_LAZY */
	size_t max_entries;
	uint64_t max_image, max_section;
	struct source **jit; /* sorted by key */
	size_t njit, cap_jit;
	struct source **objects;
	size_t nobjects, cap_objects;
	struct source **handed; /* images handed in, sorted by id */
	size_t nhanded, cap_handed;
	uint64_t next_id;
	bool scanning; /* between scan_begin and scan_end */
	struct source **order; /* the last scan's list */
	size_t norder, cap_order;
	struct text_list problems;
	struct descriptor *descs; /* the last scan's, in the order walked */
	size_t ndescs, cap_descs;
	size_t unread_files; /* files scan_core could not look into */
	/* Freed at scan_end, after the index lets go of them. */
	struct source **dropped;
	size_t ndropped, cap_dropped;
	jitmap_stackmap **graveyard;
	size_t ngrave, cap_grave;
	struct parse **parses; /* sorted by (addr, size, hash) */
	size_t nparses, cap_parses;
	size_t layout_images; /* sources whose image carries deopt layouts */
	struct code_range *code; /* JIT code by address, rebuilt when code_dirty */
	size_t ncode, cap_code;
	bool code_dirty;
	jitmap_index *index;
	bool replace_images; /* JITMAP_PROCESS_REPLACE_IMAGES */
	uint64_t gen;        /* bumped by each recheck and scan: failed CFI reads try again */
	struct drop *drops;  /* images dropped, until jitmap_process_take_dropped */
	size_t ndrops, cap_drops;
	struct text_list taken; /* the `why` of the last take */
	jitmap_perfmap *perfmap; /* jitmap_process_perfmap's; NULL until asked for */
	uint8_t *glance_buf;     /* a lazy scan's image bytes (up to GLANCE_MAX_IMAGE): one buffer
				  * for every image, not an allocation each */
	size_t glance_cap;
};

/* -- Small helpers -- */

static int add_text(struct text_list *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int add_text(struct text_list *l, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (jitmap__grow(&l->items, &l->cap, l->n + 1, sizeof(*l->items)))
		return -ENOMEM;
	if (!(l->items[l->n] = strdup(buf)))
		return -ENOMEM;
	l->n++;
	return 0;
}

static void truncate_texts(struct text_list *l, size_t n)
{
	while (l->n > n)
		free(l->items[--l->n]);
}

static void free_texts(struct text_list *l)
{
	truncate_texts(l, 0);
	free(l->items);
	*l = (struct text_list){0};
}

static const char *err_text(const jitmap_error *err)
{
	return err->reason[0] ? err->reason : jitmap_strerror(err->code);
}

/* 64-bit FNV-1a: whether a live section's bytes changed since they were parsed. */
static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

static int read_mem(jitmap_process *p, uint64_t addr, void *buf, size_t len, char *why,
		    size_t why_len)
{
	why[0] = 0;
	int rc = p->target.read_mem(p->target.ctx, addr, buf, len, why, why_len);
	if (rc && !why[0])
		snprintf(why, why_len, "%s", jitmap_strerror(rc < 0 ? rc : -EFAULT));
	return rc ? (rc < 0 ? rc : -EFAULT) : 0;
}

/* -- Parsed sections -- */

static int cmp_parse(const struct parse *h, uint64_t addr, uint64_t size, uint64_t hash)
{
	if (h->addr != addr)
		return h->addr < addr ? -1 : 1;
	if (h->size != size)
		return h->size < size ? -1 : 1;
	if (h->hash != hash)
		return h->hash < hash ? -1 : 1;
	return 0;
}

/* The position of the key in p->parses, or where it would go (*found says which). */
static size_t parse_find(const jitmap_process *p, uint64_t addr, uint64_t size, uint64_t hash,
			 bool *found)
{
	size_t lo = 0, hi = p->nparses;
	*found = false;
	while (lo < hi) {
		const size_t mid = lo + (hi - lo) / 2;
		const int d = cmp_parse(p->parses[mid], addr, size, hash);
		if (d == 0) {
			*found = true;
			return mid;
		}
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Bury `h` when no source holds it and the index does not either: its stackmap lives until
 * the next scan_end or recheck (what a caller was given stays valid until then). */
static void parse_release(jitmap_process *p, struct parse *h)
{
	if (h->refs || h->indexed)
		return;
	bool found;
	const size_t at = parse_find(p, h->addr, h->size, h->hash, &found);
	if (found && p->parses[at] == h) {
		memmove(&p->parses[at], &p->parses[at + 1],
			(p->nparses - at - 1) * sizeof(*p->parses));
		p->nparses--;
	}
	/* Out of memory for the graveyard: the stackmap is leaked, never freed while in use. */
	if (jitmap__grow(&p->graveyard, &p->cap_grave, p->ngrave + 1, sizeof(*p->graveyard)) == 0)
		p->graveyard[p->ngrave++] = h->sm;
	free(h);
}

/* The parse of the `size` bytes at `addr` that `s` read: another source's when it read the
 * same bytes there (*fresh false), else a new one. NULL with `err` set when they do not
 * parse. */
static struct parse *parse_bytes(jitmap_process *p, const uint8_t *bytes, uint64_t addr,
				 uint64_t size, uint64_t hash, jitmap_arch arch,
				 jitmap_byte_order order, bool *fresh, jitmap_error *err)
{
	bool found;
	size_t at = parse_find(p, addr, size, hash, &found);
	*fresh = false;
	if (found && p->parses[at]->arch == arch && p->parses[at]->order == order)
		return p->parses[at];
	*fresh = true;
	JITMAP_OPTS(const jitmap_parse_opts, opts, .order = order, .arch = arch);
	jitmap_stackmap *sm = jitmap_stackmap_parse(bytes, (size_t)size, &opts, err);
	if (!sm)
		return NULL;
	struct parse *h = calloc(1, sizeof(*h));
	if (!h || (!found && jitmap__grow(&p->parses, &p->cap_parses, p->nparses + 1, sizeof(*p->parses)))) {
		free(h);
		jitmap_stackmap_free(sm);
		*err = (jitmap_error){.code = -ENOMEM};
		return NULL;
	}
	*h = (struct parse){.sm = sm, .addr = addr, .size = size, .hash = hash, .arch = arch,
			    .order = order};
	if (!found) { /* (found: another architecture's parse of the same bytes, not shared) */
		memmove(&p->parses[at + 1], &p->parses[at], (p->nparses - at) * sizeof(*p->parses));
		p->parses[at] = h;
		p->nparses++;
	}
	return h;
}

/* Make `sm` the source's stackmap (its notes start again): `h`'s, or an image's when `h` is
 * NULL. The old one is let go of (the index may hold it until scan_end). */
static void set_stackmap(jitmap_process *p, struct source *s, jitmap_stackmap *sm,
			 struct parse *h, bool live)
{
	struct parse *old = s->parse;
	if (h)
		h->refs++;
	truncate_texts(&s->notes, 0);
	s->sm = sm;
	s->parse = h;
	s->live = live;
	if (old) {
		old->refs--;
		parse_release(p, old);
	}
}

/* Put the source's stackmap in the index (once for a shared parse). */
static int index_put(jitmap_process *p, struct source *s)
{
	struct parse *h = s->parse;
	if (!h || h->indexed == 0) {
		const int r = jitmap_index_add(p->index, s->sm);
		if (r != 0 && r != -EEXIST)
			return r;
	}
	if (h)
		h->indexed++;
	s->indexed = s->sm;
	s->indexed_parse = h;
	return 0;
}

/* Take what the source put in the index out of it (once nobody else shares it). */
static void index_drop(jitmap_process *p, struct source *s)
{
	struct parse *h = s->indexed_parse;
	if (!s->indexed)
		return;
	if ((!h || --h->indexed == 0) && p->index)
		jitmap_index_remove(p->index, s->indexed);
	s->indexed = NULL;
	s->indexed_parse = NULL;
	if (h)
		parse_release(p, h);
}

/* -- Sources -- */

static void source_free(jitmap_process *p, struct source *s)
{
	if (!s)
		return;
	index_drop(p, s);
	set_stackmap(p, s, NULL, NULL, false);
	if (s->image && jitmap_image_layouts(s->image))
		p->layout_images--;
	jitmap_image_free(s->image);
	jitmap_image_free(s->full_image);
	free(s->full_problem);
	free(s->path);
	free_texts(&s->problems);
	free_texts(&s->notes);
	free(s->spans);
	free(s->fns);
	jitmap_cfi_free(s->cfi);
	free(s->cfi_problem);
	free(s->code_problem);
	free(s);
}

/* A source's problems: its list, then why its code could not be sampled, then why its CFI
 * could not be read (kept apart: a live read starts the list's tail again). */
static size_t num_problems(const struct source *s)
{
	return s->problems.n + (s->code_problem != NULL) + (s->cfi_problem != NULL);
}

static const char *problem_at(const struct source *s, size_t k)
{
	if (k < s->problems.n)
		return s->problems.items[k];
	k -= s->problems.n;
	if (s->code_problem && k-- == 0)
		return s->code_problem;
	return s->cfi_problem && k == 0 ? s->cfi_problem : NULL;
}

static void set_problem(char **slot, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_problem(char **slot, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(*slot);
	*slot = strdup(buf); /* NULL on ENOMEM: the problem is not said, nothing else changes */
}

static int drop_later(jitmap_process *p, struct source *s)
{
	if (jitmap__grow(&p->dropped, &p->cap_dropped, p->ndropped + 1, sizeof(*p->dropped)))
		return -ENOMEM;
	p->dropped[p->ndropped++] = s;
	return 0;
}

static int list_source(jitmap_process *p, struct source *s)
{
	if (s->listed)
		return 0;
	if (jitmap__grow(&p->order, &p->cap_order, p->norder + 1, sizeof(*p->order)))
		return -ENOMEM;
	s->listed_at = p->norder;
	p->order[p->norder++] = s;
	s->listed = true;
	return 0;
}

/* -- JIT entries -- */

static int cmp_key(const struct source *s, uint64_t entry, uint64_t addr, uint64_t size)
{
	if (s->entry != entry)
		return s->entry < entry ? -1 : 1;
	if (s->symfile_addr != addr)
		return s->symfile_addr < addr ? -1 : 1;
	if (s->symfile_size != size)
		return s->symfile_size < size ? -1 : 1;
	return 0;
}

/* The position of the key in p->jit, or where it would go (*found says which). */
static size_t jit_find(const jitmap_process *p, const jitmap_jit_code *c, bool *found)
{
	size_t lo = 0, hi = p->njit;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int d = cmp_key(p->jit[mid], c->entry, c->symfile_addr, c->symfile_size);
		if (d == 0) {
			*found = true;
			return mid;
		}
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

static size_t sample_len_of(const struct source *s)
{
	return s->symfile_size < SAMPLE ? (size_t)s->symfile_size : SAMPLE;
}

static jitmap_image *open_image(jitmap_process *p, struct source *s, unsigned flags)
{
	jitmap_error err;
	jitmap_image *img;
	if (s->handed && !s->bytes) {
		/* Its bytes were the debugger's: only what jitmap_process_add_image opened is
		 * left. */
		add_text(&s->problems, "%s: the registered image is not kept", s->name);
		return NULL;
	}
	if (s->handed) {
		JITMAP_OPTS(const jitmap_image_opts, opts, .flags = flags);
		img = jitmap_image_open_memory_opts(s->bytes, (size_t)s->symfile_size, &opts, &err);
		if (!img)
			add_text(&s->problems, "%s: offset 0x%" PRIx64 ": %s", s->name, err.offset,
				 err_text(&err));
		return img;
	}
	img = jitmap_image_open_target(&p->target, s->symfile_addr, s->symfile_size, flags, &err);
	if (!img)
		add_text(&s->problems, "%s: image at 0x%" PRIx64 ": offset 0x%" PRIx64 ": %s",
			 s->name, s->symfile_addr, err.offset, err_text(&err));
	return img;
}

static void open_opened(jitmap_process *p, struct source *s);
static bool glance_jit_image(jitmap_process *p, struct source *s, uint8_t *bytes);

/* Open the registered image without its stackmap copy (the live section is read instead); in
 * a lazy scan, only glance at it when that is enough (glance_jit_image). `bytes`: the image,
 * when the scan read it already (NULL: read here). */
static void open_jit_image(jitmap_process *p, struct source *s, uint8_t *bytes)
{
	char why[160];
	if (!s->symfile_size || !s->symfile_addr) {
		add_text(&s->problems, "%s: empty image (address 0x%" PRIx64 ", %" PRIu64 " bytes)",
			 s->name, s->symfile_addr, s->symfile_size);
		return;
	}
	if (s->symfile_size > p->max_image) {
		add_text(&s->problems,
			 "%s: image of %" PRIu64 " bytes at 0x%" PRIx64 " is larger than the %" PRIu64
			 " MiB limit; not read",
			 s->name, s->symfile_size, s->symfile_addr, p->max_image >> 20);
		return;
	}
	if (p->lazy && glance_jit_image(p, s, bytes))
		return;
	const size_t n = sample_len_of(s);
	if (read_mem(p, s->symfile_addr, s->sample, n, why, sizeof(why))) {
		add_text(&s->problems,
			 "%s: image at 0x%" PRIx64 " (%" PRIu64 " bytes) is not readable: %s", s->name,
			 s->symfile_addr, s->symfile_size, why);
		return;
	}
	s->sample_len = n;
	open_opened(p, s);
}

/* What every JIT image gives once opened (from target memory or from a debugger's bytes):
 * its architecture, byte order and live stackmap section. */
static void open_opened(jitmap_process *p, struct source *s)
{
	s->image = open_image(p, s, JITMAP_IMAGE_SKIP_STACKMAP);
	if (!s->image)
		return;
	if (jitmap_image_layouts(s->image))
		p->layout_images++;
	s->arch = jitmap_image_arch(s->image);
	s->order = jitmap_image_byte_order(s->image);
	if (jitmap_image_symbol_values_are_addresses(s->image))
		add_text(&s->problems,
			 "%s: its function symbols hold addresses, not offsets in their section (GDB "
			 "alone places them outside it and shows ?\?): jitmap names the functions from "
			 "those addresses",
			 s->name);
	if (jitmap_image_layouts_problem(s->image))
		add_text(&s->problems, "%s: %s", s->name, jitmap_image_layouts_problem(s->image));
	if (jitmap_image_stackmap_section(s->image, &s->sm_addr, &s->sm_size) == 0)
		s->has_section = true;
	else
		s->complete = true; /* nothing to read: no stackmap */
}

static jitmap_stackmap *registered_copy(jitmap_process *p, struct source *s)
{
	if (s->handed && !s->bytes && !s->full_tried)
		return NULL; /* read at first use, after the debugger's bytes went */
	if (!s->full_tried) {
		s->full_tried = true;
		const size_t before = s->problems.n;
		s->full_image = open_image(p, s, 0);
		if (s->problems.n > before)
			s->full_problem = strdup(s->problems.items[before]);
	} else if (!s->full_image && s->full_problem) {
		/* read_live drops the problems of the last read before reading again */
		add_text(&s->problems, "%s", s->full_problem);
	}
	return s->full_image ? jitmap_image_stackmap(s->full_image) : NULL;
}

static bool has_unset_address(const jitmap_stackmap *sm)
{
	for (size_t i = 0; i < sm->num_functions; i++)
		if (!sm->functions[i].address)
			return true;
	return false;
}

/* Name the live stackmap's functions from the image's symbols, and fill the addresses it does
 * not hold yet from the registered copy. Returns whether the live section held every address
 * itself. */
static bool complete_live(jitmap_process *p, struct source *s, struct parse *h)
{
	h->filled = 0;
	if (jitmap_image_name_functions(s->image, h->sm) < 0)
		return false;
	if (!has_unset_address(h->sm))
		return true;
	jitmap_stackmap *copy = registered_copy(p, s);
	h->filled = copy ? jitmap_stackmap_merge(h->sm, copy) : -EINVAL;
	return false;
}

/* What complete_live did, said in the notes of each source that uses the parse. */
static void completion_note(struct source *s, const struct parse *h)
{
	const int filled = h->filled;
	if (filled > 0)
		add_text(&s->notes,
			 "%d function address%s not relocated in memory yet (MCJIT before "
			 "finalization): taken from the registered copy",
			 filled, filled == 1 ? "" : "es");
	else if (filled < 0)
		add_text(&s->notes, "function addresses are 0 in memory, and the registered copy "
				    "does not match the live section");
}

/* (Re)parse the live section; fall back to the registered copy. */
static void read_live(jitmap_process *p, struct source *s)
{
	char problem[320] = "", why[160];
	uint8_t *live = NULL;

	if (!s->has_section) {
		s->complete = true;
		return;
	}
	truncate_texts(&s->problems, s->open_problems);
	if (!s->sm_addr) {
		snprintf(problem, sizeof(problem), "its .llvm_stackmaps has no load address (sh_addr 0)");
	} else if (s->sm_size > p->max_section || s->sm_size > SIZE_MAX) {
		snprintf(problem, sizeof(problem),
			 ".llvm_stackmaps at 0x%" PRIx64 " is %" PRIu64 " bytes, over the %" PRIu64
			 " MiB limit",
			 s->sm_addr, s->sm_size, p->max_section >> 20);
	} else if (!(live = malloc(s->sm_size ? (size_t)s->sm_size : 1))) {
		snprintf(problem, sizeof(problem), "out of memory for its %" PRIu64 "-byte stackmap",
			 s->sm_size);
	} else if (read_mem(p, s->sm_addr, live, (size_t)s->sm_size, why, sizeof(why))) {
		snprintf(problem, sizeof(problem), ".llvm_stackmaps at 0x%" PRIx64 " is not readable: %s",
			 s->sm_addr, why);
		free(live);
		live = NULL;
	}
	if (live) {
		const uint64_t h = hash_bytes(live, (size_t)s->sm_size);
		if (s->have_hash && h == s->live_hash && s->sm && s->live) {
			free(live);
			return;
		}
		s->have_hash = false;
		jitmap_error err;
		bool fresh;
		struct parse *parsed = parse_bytes(p, live, s->sm_addr, s->sm_size, h, s->arch,
						   s->order, &fresh, &err);
		const size_t head_len = s->sm_size < SAMPLE ? (size_t)s->sm_size : SAMPLE;
		memcpy(s->live_head, live, head_len);
		free(live);
		if (!parsed) {
			snprintf(problem, sizeof(problem),
				 ".llvm_stackmaps at 0x%" PRIx64 ": offset 0x%" PRIx64 ": %s", s->sm_addr,
				 err.offset, err_text(&err));
		} else {
			set_stackmap(p, s, parsed->sm, parsed, true);
			if (fresh)
				parsed->complete = complete_live(p, s, parsed);
			completion_note(s, parsed);
			s->complete = parsed->complete;
			s->live_hash = h;
			s->have_hash = true;
			s->live_head_len = head_len;
		}
	}
	if (problem[0] && s->sm && s->live)
		set_stackmap(p, s, NULL, NULL, false); /* the bytes it was parsed from are gone */
	if (s->handed && !s->complete && s->sm && s->live && has_unset_address(s->sm) &&
	    !registered_copy(p, s)) {
		/* MCJIT before finalization, and no registered copy: not usable until relocated. */
		set_stackmap(p, s, NULL, NULL, false);
		s->have_hash = false;
		add_text(&s->notes, "function addresses are 0 in memory (MCJIT before "
				    "finalization): read again at the next stop");
		return;
	}
	if (!s->sm || !s->live) {
		jitmap_stackmap *copy = registered_copy(p, s);
		if (copy) {
			set_stackmap(p, s, copy, NULL, false);
			add_text(&s->notes, "read from the registered copy: %s",
				 problem[0] ? problem : "no live section");
		}
	}
	if (problem[0])
		add_text(&s->problems, "%s: %s%s", s->name, problem,
			 s->sm ? "; using the registered copy" : "");
}

/* Whether a complete live section's first bytes changed since it was parsed (a JIT that
 * reuses a stackmap's memory in place): it is then read again. */
static bool live_head_changed(jitmap_process *p, struct source *s)
{
	uint8_t now[SAMPLE];
	char why[160];
	if (!s->complete || !s->live || !s->live_head_len)
		return false;
	return read_mem(p, s->sm_addr, now, s->live_head_len, why, sizeof(why)) ||
	       memcmp(now, s->live_head, s->live_head_len);
}

/* Read the live section again if the policy says so; true when it was. */
static bool refresh_live(jitmap_process *p, struct source *s)
{
	if (!s->image)
		return false;
	if (live_head_changed(p, s)) {
		s->complete = false;
		s->have_hash = false;
	}
	if (s->complete)
		return false;
	read_live(p, s);
	return true;
}

/* `bytes`: the entry's image, when the scan read it already (batch_images), or NULL. */
static int scan_entry(jitmap_process *p, uint64_t descriptor, const jitmap_jit_code *c,
		      uint8_t *bytes)
{
	bool found;
	size_t at = jit_find(p, c, &found);
	struct source *s = found ? p->jit[at] : NULL;
	if (s && s->seen)
		return 0; /* listed twice (two descriptors sharing a list) */
	if (s) {
		uint8_t now[SAMPLE];
		char why[160];
		const size_t n = sample_len_of(s);
		const bool same = s->sample_len == n &&
				  read_mem(p, c->symfile_addr, now, n, why, sizeof(why)) == 0 &&
				  !memcmp(now, s->sample, n);
		if (!same) {
			if (drop_later(p, s))
				return -ENOMEM;
			memmove(&p->jit[at], &p->jit[at + 1], (p->njit - at - 1) * sizeof(*p->jit));
			p->njit--;
			s = NULL;
		}
	}
	if (!s) {
		if (jitmap__grow(&p->jit, &p->cap_jit, p->njit + 1, sizeof(*p->jit)))
			return -ENOMEM;
		s = calloc(1, sizeof(*s));
		if (!s)
			return -ENOMEM;
		s->kind = JITMAP_SOURCE_JIT;
		s->descriptor = descriptor;
		s->entry = c->entry;
		s->symfile_addr = c->symfile_addr;
		s->symfile_size = c->symfile_size;
		snprintf(s->name, sizeof(s->name), "JIT entry 0x%" PRIx64, c->entry);
		open_jit_image(p, s, bytes);
		s->open_problems = s->problems.n;
		at = jit_find(p, c, &found);
		memmove(&p->jit[at + 1], &p->jit[at], (p->njit - at) * sizeof(*p->jit));
		p->jit[at] = s;
		p->njit++;
	}
	s->seen = true;
	if (p->lazy)
		s->recheck = true; /* read at jitmap_process_code_at */
	else
		refresh_live(p, s);
	return list_source(p, s);
}

/* -- Code and functions of JIT images -- */

static int cmp_code(const void *a, const void *b)
{
	const struct code_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->rank > y->rank ? -1 : x->rank < y->rank;
}

static int cmp_range(const void *a, const void *b)
{
	const jitmap_image_range *x = a, *y = b;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

static int cmp_function(const void *a, const void *b)
{
	const jitmap_code_function *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->hi < y->hi) - (x->hi > y->hi); /* the larger first */
}

/* The element of a sorted array of disjoint [lo, hi) ranges that holds `addr`, or NULL. Serves
 * code ranges and functions alike: both start with `uint64_t lo, hi` (checked below). */
static const void *range_at(const void *base, size_t n, size_t stride, uint64_t addr)
{
	const size_t lo = jitmap_bound_u64(base, n, stride, offsetof(jitmap_image_range, lo), addr, 1);
	if (!lo)
		return NULL;
	const void *at = (const char *)base + (lo - 1) * stride;
	return addr < ((const jitmap_image_range *)at)->hi ? at : NULL;
}
_Static_assert(offsetof(jitmap_code_function, lo) == offsetof(jitmap_image_range, lo) &&
		       offsetof(jitmap_code_function, hi) == offsetof(jitmap_image_range, hi),
	       "range_at reads functions as code ranges");

static const jitmap_image_range *span_at(const struct source *s, uint64_t addr)
{
	return range_at(s->spans, s->nspans, sizeof(*s->spans), addr);
}

static const jitmap_code_function *function_in(const struct source *s, uint64_t addr)
{
	return range_at(s->fns, s->nfns, sizeof(*s->fns), addr);
}

/* The image's code: its executable sections placed in memory, sorted, merged where they
 * touch; a section over MAX_CODE_SPAN is left out. 0 or -ENOMEM. From the glance at a lazy
 * scan's image (`g`), or else from the image opened. */
static int make_spans_from(struct source *s, const struct jitmap__glance *g)
{
	if (s->spans_made || (!s->image && !g))
		return 0;
	const size_t n = g ? g->num_code : jitmap_image_num_code_ranges(s->image);
	jitmap_image_range *v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const jitmap_image_range *r = g ? &g->code[i] : jitmap_image_code_range(s->image, i);
		if (r && r->lo < r->hi && r->hi - r->lo <= MAX_CODE_SPAN)
			v[k++] = *r;
	}
	if (k)
		qsort(v, k, sizeof(*v), cmp_range);
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m && v[i].lo <= v[m - 1].hi) {
			if (v[i].hi > v[m - 1].hi)
				v[m - 1].hi = v[i].hi;
		} else {
			v[m++] = v[i];
		}
	}
	s->spans = v;
	s->nspans = m;
	s->spans_made = true;
	return 0;
}

static int make_spans(struct source *s)
{
	return make_spans_from(s, NULL);
}

/* A lazy scan's look at a JIT image (elf.c, jitmap__image_glance): when it is plain, where its
 * code is, its architecture and byte order are all a scan needs, and opening it waits until a
 * PC falls in that code (open_glanced). True when glanced; false to open it now (larger than
 * GLANCE_MAX_IMAGE, unreadable whole, not plain, or no memory): that path says what is wrong,
 * as it always did. */
static bool glance_jit_image(jitmap_process *p, struct source *s, uint8_t *bytes)
{
	struct jitmap__glance g;
	char why[160];
	if (s->symfile_size > GLANCE_MAX_IMAGE)
		return false;
	if (!bytes) {
		if (jitmap__grow(&p->glance_buf, &p->glance_cap, (size_t)s->symfile_size, 1) ||
		    read_mem(p, s->symfile_addr, p->glance_buf, (size_t)s->symfile_size, why,
			     sizeof(why)))
			return false;
		bytes = p->glance_buf;
	}
	const bool plain = jitmap__image_glance(bytes, (size_t)s->symfile_size, &g) == 0 &&
			   make_spans_from(s, &g) == 0;
	if (plain) {
		s->sample_len = sample_len_of(s);
		memcpy(s->sample, bytes, s->sample_len);
		s->arch = g.arch;
		s->order = g.order;
		s->glanced = true;
	}
	return plain;
}

/* A glanced image opened, now that a PC fell in its code: as a scan that is not lazy opens
 * it. Its code is the image's from now on; should that differ from the glance's (memory that
 * changed since), the code table is rebuilt. */
static void open_glanced(jitmap_process *p, struct source *s)
{
	jitmap_image_range *old = s->spans;
	const size_t nold = s->nspans;
	s->glanced = false;
	s->spans = NULL;
	s->nspans = 0;
	s->spans_made = false;
	open_opened(p, s);
	s->open_problems = s->problems.n;
	if (make_spans(s) || s->nspans != nold ||
	    (nold && memcmp(old, s->spans, nold * sizeof(*old))))
		p->code_dirty = true;
	free(old);
}

/* The image's functions: its function symbols inside its code, sorted, one per address (the
 * largest), each cut at the next; one without a size reaches the next function or the end of
 * its code range (hand-written code). Debuggers want functions that do not overlap (GDB's
 * blocks), and an unwinder wants a function's start and end. 0 or -ENOMEM. */
static int make_fns(struct source *s)
{
	if (s->fns_made || !s->image)
		return 0;
	if (make_spans(s))
		return -ENOMEM;
	const size_t n = jitmap_image_num_symbols(s->image);
	jitmap_code_function *f = malloc((n ? n : 1) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		jitmap_image_symbol_info si = {.sz = sizeof(si)};
		if (jitmap_image_symbol(s->image, i, &si) || !si.name || !span_at(s, si.address))
			continue;
		const uint64_t hi = si.size <= UINT64_MAX - si.address ? si.address + si.size
								      : UINT64_MAX;
		f[k++] = (jitmap_code_function){si.address, hi, si.name};
	}
	if (k)
		qsort(f, k, sizeof(*f), cmp_function);
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m && f[i].lo == f[m - 1].lo)
			continue; /* an alias: the first (largest) stays */
		if (m && f[m - 1].hi > f[i].lo)
			f[m - 1].hi = f[i].lo;
		f[m++] = f[i];
	}
	k = 0;
	for (size_t i = 0; i < m; i++) {
		uint64_t limit = span_at(s, f[i].lo)->hi;
		if (i + 1 < m && f[i + 1].lo < limit)
			limit = f[i + 1].lo;
		if (f[i].hi == f[i].lo || f[i].hi > limit)
			f[i].hi = limit;
		if (f[i].hi > f[i].lo)
			f[k++] = f[i];
	}
	s->fns = f;
	s->nfns = k;
	s->fns_made = true;
	return 0;
}

/* Of two images of the same code range, the one of the smaller rank answers: a scan's
 * sources in the order listed (the newest registration first), then images handed in. */
static size_t code_rank(const struct source *s)
{
	return s->handed ? SIZE_MAX / 2 + (size_t)s->id : s->listed ? s->listed_at : SIZE_MAX;
}

static int add_code(jitmap_process *p, struct source *s)
{
	if (!s->image && !s->glanced)
		return 0;
	if (make_spans(s) || jitmap__grow(&p->code, &p->cap_code, p->ncode + s->nspans, sizeof(*p->code)))
		return -ENOMEM;
	for (size_t i = 0; i < s->nspans; i++)
		p->code[p->ncode++] = (struct code_range){s->spans[i].lo, s->spans[i].hi, 0,
							  code_rank(s), s};
	return 0;
}

static void code_max_from(jitmap_process *p, size_t from)
{
	for (size_t i = from; i < p->ncode; i++)
		p->code[i].max_hi = i && p->code[i - 1].max_hi > p->code[i].hi ? p->code[i - 1].max_hi
									      : p->code[i].hi;
}

static int code_rebuild(jitmap_process *p)
{
	p->ncode = 0;
	for (size_t i = 0; i < p->njit; i++)
		if (add_code(p, p->jit[i]))
			return -ENOMEM;
	for (size_t i = 0; i < p->nhanded; i++)
		if (add_code(p, p->handed[i]))
			return -ENOMEM;
	if (p->ncode) /* qsort wants a pointer */
		qsort(p->code, p->ncode, sizeof(*p->code), cmp_code);
	code_max_from(p, 0);
	p->code_dirty = false;
	return 0;
}

/* An image handed in comes or goes: the table is changed in place (GDB's reader hands in
 * thousands, and may be asked about a frame between two), or rebuilt at the next lookup. */
static void code_insert(jitmap_process *p, struct source *s)
{
	if (p->code_dirty)
		return;
	if (make_spans(s) || jitmap__grow(&p->code, &p->cap_code, p->ncode + s->nspans, sizeof(*p->code))) {
		p->code_dirty = true;
		return;
	}
	size_t first = SIZE_MAX;
	for (size_t k = 0; k < s->nspans; k++) {
		const struct code_range c = {s->spans[k].lo, s->spans[k].hi, 0, code_rank(s), s};
		size_t lo = 0, hi = p->ncode;
		while (lo < hi) {
			const size_t mid = lo + (hi - lo) / 2;
			if (cmp_code(&p->code[mid], &c) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		memmove(&p->code[lo + 1], &p->code[lo], (p->ncode - lo) * sizeof(*p->code));
		p->code[lo] = c;
		p->ncode++;
		first = lo < first ? lo : first;
	}
	code_max_from(p, first == SIZE_MAX ? p->ncode : first);
}

static void code_remove(jitmap_process *p, const struct source *s)
{
	if (p->code_dirty)
		return;
	size_t k = 0, first = SIZE_MAX;
	for (size_t i = 0; i < p->ncode; i++) {
		if (p->code[i].s != s)
			p->code[k++] = p->code[i];
		else if (first == SIZE_MAX)
			first = k;
	}
	p->ncode = k;
	code_max_from(p, first == SIZE_MAX ? p->ncode : first);
}

/* The first range of the table that starts at or after `addr`. */
static size_t code_after(const jitmap_process *p, uint64_t addr, bool strictly)
{
	size_t a = 0, b = p->ncode;
	while (a < b) {
		const size_t mid = a + (b - a) / 2;
		if (p->code[mid].lo < addr || (strictly && p->code[mid].lo == addr))
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/* -- Images handed in by a debugger -- */

/* The index holds `s`'s current stackmap (or nothing, when it has none). */
static int index_now(jitmap_process *p, struct source *s)
{
	if (s->indexed == s->sm)
		return 0;
	index_drop(p, s);
	return s->sm ? index_put(p, s) : 0;
}

static void free_buried(jitmap_process *p)
{
	for (size_t i = 0; i < p->ndropped; i++)
		source_free(p, p->dropped[i]);
	p->ndropped = 0;
	for (size_t i = 0; i < p->ngrave; i++)
		jitmap_stackmap_free(p->graveyard[i]);
	p->ngrave = 0;
}

static size_t handed_find(const jitmap_process *p, uint64_t id)
{
	size_t lo = 0, hi = p->nhanded;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->handed[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nhanded && p->handed[lo]->id == id ? lo : SIZE_MAX;
}

static struct source *handed(const jitmap_process *p, uint64_t id)
{
	const size_t at = handed_find(p, id);
	return at == SIZE_MAX ? NULL : p->handed[at];
}

/* Take the image handed in at `at` out: of the list, the code table and the index. */
static void remove_handed(jitmap_process *p, size_t at)
{
	struct source *s = p->handed[at];
	memmove(&p->handed[at], &p->handed[at + 1], (p->nhanded - at - 1) * sizeof(*p->handed));
	p->nhanded--;
	code_remove(p, s);
	index_drop(p, s);
	if (p->scanning && drop_later(p, s) == 0)
		return;
	source_free(p, s); /* its stackmap is buried: valid until the next recheck or scan_end */
}

/* Drop an image handed in (stale or replaced), saying so to jitmap_process_take_dropped. */
static void drop_image(jitmap_process *p, struct source *s, bool replaced, const char *why)
{
	/* Out of memory for the record: the image goes unsaid; a client that asks about its id
	 * hears that it is unknown. */
	if (jitmap__grow(&p->drops, &p->cap_drops, p->ndrops + 1, sizeof(*p->drops)) == 0)
		p->drops[p->ndrops++] = (struct drop){s->id, replaced, strdup(why)};
	const size_t at = handed_find(p, s->id);
	if (at != SIZE_MAX)
		remove_handed(p, at);
}

/* Whether the image handed in `s` may be used now (the staleness rule of process.h): 1; 0
 * when its code could not be read at its first use (used once a later stop can read it); -1
 * when it is stale, and dropped. Its code is looked at once after each recheck. */
static int image_check(jitmap_process *p, struct source *s)
{
	if (!s->code_check)
		return s->usable;
	s->code_check = false;
	s->usable = true;
	if (!s->image || make_fns(s) || !s->nspans)
		return 1; /* no code to look at (or no memory to look with) */
	const uint64_t at = s->sampled ? s->sample_at : s->nfns ? s->fns[0].lo : s->spans[0].lo;
	const jitmap_image_range *r = span_at(s, at);
	const size_t len = s->sampled ? s->code_sample_len
			   : r->hi - at < CODE_SAMPLE ? (size_t)(r->hi - at) : CODE_SAMPLE;
	uint8_t now[CODE_SAMPLE];
	char why[160];
	const int rc = read_mem(p, at, now, len, why, sizeof(why));
	if (!s->sampled) {
		if (rc) {
			s->usable = false;
			set_problem(&s->code_problem, "%s: its code at 0x%" PRIx64 " cannot be read: %s",
				    s->name, at, why);
			return 0;
		}
		free(s->code_problem);
		s->code_problem = NULL;
		s->sampled = true;
		s->sample_at = at;
		s->code_sample_len = len;
		memcpy(s->code_sample, now, len);
		return 1;
	}
	if (rc || memcmp(now, s->code_sample, len)) {
		char text[320];
		if (rc)
			snprintf(text, sizeof(text), "%s: its code at 0x%" PRIx64 " cannot be read any "
				 "more: %s", s->name, at, why);
		else
			snprintf(text, sizeof(text), "%s: its code at 0x%" PRIx64 " changed since it "
				 "was first used", s->name, at);
		drop_image(p, s, false, text);
		return -1;
	}
	return 1;
}

/* JITMAP_PROCESS_REPLACE_IMAGES: the images handed in whose code overlaps `s`'s go. */
static void replace_overlapped(jitmap_process *p, struct source *s)
{
	if (make_spans(s))
		return;
	for (size_t k = 0; k < s->nspans; k++) {
		const jitmap_image_range *r = &s->spans[k];
		for (;;) {
			if (p->code_dirty && code_rebuild(p))
				return;
			struct source *old = NULL;
			for (size_t i = code_after(p, r->hi, false); i-- > 0 && p->code[i].max_hi > r->lo;) {
				if (p->code[i].hi > r->lo && p->code[i].s->handed) {
					old = p->code[i].s;
					break;
				}
			}
			if (!old)
				break;
			char why[320];
			snprintf(why, sizeof(why), "%s: replaced by %s, whose code [0x%" PRIx64
				 ", 0x%" PRIx64 ") overlaps its own", old->name, s->name, r->lo, r->hi);
			drop_image(p, old, true, why);
		}
	}
}

int jitmap_process_add_image(jitmap_process *p, const void *image, size_t size, const char *where,
			     uint64_t *id)
{
	if (!p || !id || (!image && size) || !p->index)
		return -EINVAL;
	if (jitmap__grow(&p->handed, &p->cap_handed, p->nhanded + 1, sizeof(*p->handed)))
		return -ENOMEM;
	struct source *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->kind = JITMAP_SOURCE_JIT;
	s->handed = true;
	s->id = ++p->next_id;
	s->bytes = image;
	s->symfile_size = size;
	s->code_check = true; /* sampled at its first use */
	if (where)
		snprintf(s->name, sizeof(s->name), "%s", where);
	else
		snprintf(s->name, sizeof(s->name), "JIT image %" PRIu64, s->id);
	if (!size)
		add_text(&s->problems, "%s: empty image", s->name);
	else if (size > p->max_image)
		add_text(&s->problems, "%s: image of %zu bytes is larger than the %" PRIu64
				       " MiB limit; not read",
			 s->name, size, p->max_image >> 20);
	else
		open_opened(p, s);
	s->open_problems = s->problems.n;
	/* The live section is read at first use (a debugger registering thousands of images
	 * reads few of them), except when the image's own copy is all there is (a section not
	 * placed in memory, sh_addr 0): that copy is read while the bytes are here. An image
	 * used before MCJIT relocated its live section has no registered copy to fall back on:
	 * its addresses read 0 until a recheck finds them set. */
	int rc = 0;
	if (s->has_section && !s->sm_addr) {
		refresh_live(p, s);
		rc = index_now(p, s);
	} else {
		s->recheck = true;
	}
	s->bytes = NULL;
	if (p->replace_images)
		replace_overlapped(p, s);
	p->handed[p->nhanded++] = s; /* ids only grow: the array stays sorted */
	code_insert(p, s);
	*id = s->id;
	return rc;
}

int jitmap_process_remove_image(jitmap_process *p, uint64_t id)
{
	const size_t at = p ? handed_find(p, id) : SIZE_MAX;
	if (at == SIZE_MAX)
		return -ENOENT;
	remove_handed(p, at);
	return 0;
}

void jitmap_process_recheck(jitmap_process *p)
{
	if (!p)
		return;
	p->gen++;
	for (size_t i = 0; i < p->nhanded; i++)
		p->handed[i]->recheck = p->handed[i]->code_check = true;
	if (!p->scanning)
		free_buried(p);
}

const jitmap_stackmap *jitmap_process_image_stackmap(jitmap_process *p, uint64_t id)
{
	struct source *s = p ? handed(p, id) : NULL;
	if (!s || image_check(p, s) <= 0)
		return NULL;
	if (s->recheck) {
		s->recheck = false;
		if (refresh_live(p, s) && index_now(p, s))
			add_text(&s->problems, "%s: out of memory indexing its stackmap", s->name);
	}
	return s->sm;
}

int jitmap_process_image_code(jitmap_process *p, uint64_t id, const jitmap_image_range **ranges,
			      size_t *num_ranges, const jitmap_code_function **functions,
			      size_t *num_functions)
{
	struct source *s = p ? handed(p, id) : NULL;
	if (!s)
		return -ENOENT;
	if (make_fns(s))
		return -ENOMEM;
	if (ranges)
		*ranges = s->spans;
	if (num_ranges)
		*num_ranges = s->nspans;
	if (functions)
		*functions = s->fns;
	if (num_functions)
		*num_functions = s->nfns;
	return 0;
}

size_t jitmap_process_take_dropped(jitmap_process *p, jitmap_dropped_image *out, size_t max)
{
	if (!p || !p->ndrops || (!out && max))
		return 0;
	const size_t n = max < p->ndrops ? max : p->ndrops;
	truncate_texts(&p->taken, 0);
	if (jitmap__grow(&p->taken.items, &p->taken.cap, n, sizeof(*p->taken.items)))
		return 0; /* told at a later call */
	for (size_t i = 0; i < n; i++) {
		const struct drop *d = &p->drops[i];
		out[i] = (jitmap_dropped_image){d->id, d->replaced, d->why ? d->why : ""};
		if (d->why)
			p->taken.items[p->taken.n++] = d->why;
	}
	memmove(p->drops, p->drops + n, (p->ndrops - n) * sizeof(*p->drops));
	p->ndrops -= n;
	return n;
}

static int fill_info(const struct source *s, jitmap_source_info *out);

int jitmap_process_image(const jitmap_process *p, uint64_t id, jitmap_source_info *out)
{
	const struct source *s = p ? handed(p, id) : NULL;
	if (!s)
		return -ENOENT;
	return fill_info(s, out);
}

const char *jitmap_process_image_problem(const jitmap_process *p, uint64_t id, size_t k)
{
	const struct source *s = p ? handed(p, id) : NULL;
	return s ? problem_at(s, k) : NULL;
}

/* -- Loaded files -- */

/* Whether the function addresses of a loaded file's section as read from memory are the
 * file's moved by the load bias: what the dynamic loader's relocations make them. Before it
 * has run (a stop at the loader's first breakpoint) the memory holds the link-time values. */
static bool relocated_as_file(const jitmap_stackmap *live, const jitmap_stackmap *file)
{
	if (!file || live->num_functions != file->num_functions)
		return false;
	for (size_t i = 0; i < live->num_functions; i++)
		if (live->functions[i].address != file->functions[i].address)
			return false;
	return true;
}

static void object_live(jitmap_process *p, struct source *s)
{
	uint8_t *live = NULL;
	char why[160];
	struct parse *parsed = NULL;
	bool fresh = false, early = false;
	if (s->sm_size <= p->max_section && s->sm_size <= SIZE_MAX &&
	    (live = malloc(s->sm_size ? (size_t)s->sm_size : 1)) &&
	    read_mem(p, s->sm_addr, live, (size_t)s->sm_size, why, sizeof(why)) == 0) {
		jitmap_error err;
		parsed = parse_bytes(p, live, s->sm_addr, s->sm_size,
				     hash_bytes(live, (size_t)s->sm_size), jitmap_image_arch(s->image),
				     jitmap_image_byte_order(s->image), &fresh, &err);
		if (parsed && fresh) {
			parsed->complete = !has_unset_address(parsed->sm) &&
					   jitmap_image_name_functions(s->image, parsed->sm) == 0;
		}
	}
	free(live);
	jitmap_stackmap *sm = jitmap_image_stackmap(s->image);
	/* Memory that is not yet what the relocations make it is read again at the next scan. */
	if (parsed && parsed->complete && sm && !relocated_as_file(parsed->sm, sm))
		early = true;
	if (parsed && parsed->complete && !early) {
		set_stackmap(p, s, parsed->sm, parsed, true);
	} else if (sm) {
		set_stackmap(p, s, sm, NULL, false);
		add_text(&s->notes, "read from the file, moved by the load bias 0x%" PRIx64 "%s",
			 s->bias, early ? " (the section in memory is not relocated yet)" : "");
	}
	if (parsed && !parsed->refs && !parsed->indexed)
		parse_release(p, parsed); /* not used: unrelocated in memory */
	s->complete = !early;
}

int jitmap_process_scan_object(jitmap_process *p, const char *path, uint64_t section_address)
{
	struct stat st;
	const bool stat_ok = stat(path, &st) == 0;
	struct source *s = NULL;
	size_t at;
	for (at = 0; at < p->nobjects; at++)
		if (p->objects[at]->sm_addr == section_address && !strcmp(p->objects[at]->path, path))
			break;
	if (at < p->nobjects) {
		s = p->objects[at];
		const bool same = s->stat_ok == stat_ok &&
				  (!stat_ok || (s->mtime_ns == (int64_t)st.st_mtim.tv_sec * 1000000000 +
								  st.st_mtim.tv_nsec &&
						s->file_size == (int64_t)st.st_size));
		if (s->seen)
			return 0;
		if (!same) {
			if (drop_later(p, s))
				return -ENOMEM;
			p->objects[at] = p->objects[--p->nobjects];
			s = NULL;
		}
	}
	if (!s) {
		if (jitmap__grow(&p->objects, &p->cap_objects, p->nobjects + 1, sizeof(*p->objects)))
			return -ENOMEM;
		s = calloc(1, sizeof(*s));
		if (!s || !(s->path = strdup(path))) {
			free(s);
			return -ENOMEM;
		}
		s->kind = JITMAP_SOURCE_OBJECT;
		s->sm_addr = section_address;
		s->stat_ok = stat_ok;
		if (stat_ok) {
			s->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
			s->file_size = (int64_t)st.st_size;
		}
		p->objects[p->nobjects++] = s;
		jitmap_error err;
		s->image = jitmap_image_open_file(path, &err);
		if (s->image && jitmap_image_layouts(s->image))
			p->layout_images++;
		uint64_t addr;
		if (!s->image) {
			add_text(&s->problems, "%s: offset 0x%" PRIx64 ": %s", path, err.offset,
				 err_text(&err));
			s->open_problems = s->problems.n;
		} else if (jitmap_image_stackmap_section(s->image, &addr, &s->sm_size) == 0) {
			s->has_section = true;
			s->bias = section_address - addr;
			jitmap_image_set_load_bias(s->image, s->bias);
		}
	}
	s->seen = true;
	if (s->image && !s->has_section)
		return 0; /* kept, not listed: a file without stackmaps */
	if (s->image && !s->complete)
		object_live(p, s);
	return list_source(p, s);
}

int jitmap_process_scan_file(jitmap_process *p, const char *path, uint64_t bias,
			     const char *where)
{
	if (!p || !path)
		return -EINVAL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	uint64_t desc = 0, sm = 0;
	bool has_desc = false, has_sm = false;
	if (elf_version(EV_CURRENT) != EV_NONE) {
		Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		if (elf && elf_kind(elf) == ELF_K_ELF) {
			has_desc = jitmap__elf_data_symbol(elf, JITMAP_JIT_DESCRIPTOR_SYMBOL, &desc) == 0;
			has_sm = jitmap__elf_section_address(elf, JITMAP__STACKMAP_SECTION, &sm) == 0;
		}
		elf_end(elf);
	}
	close(fd);
	int rc = 0;
	if (has_desc)
		rc = jitmap_process_scan_descriptor(p, desc + bias, where ? where : path);
	if (!rc && has_sm)
		rc = jitmap_process_scan_object(p, path, sm + bias);
	return rc ? rc : has_desc;
}

/* -- Core files -- */

struct core_scan {
	jitmap_process *p;
	jitmap_byte_order order;
};

static int scan_list(jitmap_process *p, uint64_t addr, const char *where,
		     jitmap_byte_order order);

/* One file of the core: its JIT descriptor and .llvm_stackmaps, moved by its bias. */
static int scan_core_file(void *ctx, const char *path, Elf *elf, bool bias_known, uint64_t bias,
			  const char *why)
{
	struct core_scan *cs = ctx;
	jitmap_process *p = cs->p;
	if (!elf) {
		p->unread_files++;
		return add_text(&p->problems, "%s (mapped by the core) %s: a JIT descriptor or "
			       "stackmaps in it are not found", path, why);
	}
	uint64_t desc = 0, sm = 0;
	const bool has_desc = jitmap__elf_data_symbol(elf, JITMAP_JIT_DESCRIPTOR_SYMBOL, &desc) == 0;
	const bool has_sm = jitmap__elf_section_address(elf, JITMAP__STACKMAP_SECTION, &sm) == 0;
	if ((has_desc || has_sm) && !bias_known) {
		p->unread_files += has_desc;
		return add_text(&p->problems, "%s defines %s, but the core does not say where it is "
			       "loaded (no mapping of its first page)", path,
			       has_desc ? JITMAP_JIT_DESCRIPTOR_SYMBOL : JITMAP__STACKMAP_SECTION);
	}
	int rc = 0;
	if (has_desc)
		rc = scan_list(p, desc + bias, path, cs->order);
	if (!rc && has_sm)
		rc = jitmap_process_scan_object(p, path, sm + bias);
	return rc;
}

int jitmap_process_scan_core(jitmap_process *p, jitmap_core *core)
{
	if (!p || !core)
		return -EINVAL;
	struct core_scan cs = {.p = p, .order = jitmap_core_byte_order(core)};
	const size_t before = p->ndescs;
	const int rc = jitmap__core_each_file(core, scan_core_file, &cs);
	return rc ? rc : (int)(p->ndescs - before < INT_MAX ? p->ndescs - before : INT_MAX);
}

/* -- Scanning -- */

static void free_descriptors(jitmap_process *p)
{
	for (size_t i = 0; i < p->ndescs; i++) {
		free(p->descs[i].where);
		free(p->descs[i].problem);
	}
	p->ndescs = 0;
}

int jitmap_process_scan_begin(jitmap_process *p)
{
	p->scanning = true;
	p->gen++;
	for (size_t i = 0; i < p->njit; i++)
		p->jit[i]->seen = p->jit[i]->listed = false;
	for (size_t i = 0; i < p->nobjects; i++)
		p->objects[i]->seen = p->objects[i]->listed = false;
	p->norder = 0;
	truncate_texts(&p->problems, 0);
	free_descriptors(p);
	p->unread_files = 0;
	return 0;
}

/* A lazy scan's images, read in batches (jitmap__read_many) before each is glanced at. */
struct batch {
	bool ok;                /* bytes[] holds this batch's images */
	bool unable;            /* the target reads one at a time: no more batches */
	uint8_t *buf;           /* BATCH_BYTES */
	struct jitmap__read *reads;
	uint8_t **bytes;        /* per entry of the batch: its image, or NULL (read its own way) */
};

/* The images of entries [from, end) of `lst` that a lazy scan will glance at (new entries,
 * up to GLANCE_MAX_IMAGE), read together into b->buf: as many entries as BATCH_BYTES and
 * BATCH_ENTRIES allow, at least one. Returns `end`; b->ok says whether b->bytes is filled. */
static size_t batch_images(jitmap_process *p, struct batch *b, const jitmap_jit_list *lst,
			   size_t from, size_t n)
{
	b->ok = false;
	if (b->unable || (!b->buf && (!(b->buf = malloc(BATCH_BYTES)) ||
				      !(b->reads = malloc(BATCH_ENTRIES * sizeof(*b->reads))) ||
				      !(b->bytes = malloc(BATCH_ENTRIES * sizeof(*b->bytes)))))) {
		b->unable = true; /* (out of memory: each image is read alone, as without) */
		return from + 1;
	}
	size_t end = from, used = 0, k = 0;
	for (; end < n && end - from < BATCH_ENTRIES; end++) {
		const jitmap_jit_code *c = jitmap_jit_list_code(lst, end);
		bool known;
		b->bytes[end - from] = NULL;
		if (!c->symfile_addr || !c->symfile_size || c->symfile_size > GLANCE_MAX_IMAGE ||
		    c->symfile_size > p->max_image || (jit_find(p, c, &known), known))
			continue;
		if (c->symfile_size > BATCH_BYTES - used)
			break;
		b->reads[k++] = (struct jitmap__read){c->symfile_addr, b->buf + used,
						      (size_t)c->symfile_size, false};
		b->bytes[end - from] = b->buf + used;
		used += (size_t)c->symfile_size;
	}
	if (jitmap__read_many(&p->target, b->reads, k) == -ENOTSUP) {
		b->unable = true;
		return end;
	}
	for (size_t i = from, r = 0; i < end; i++)
		if (b->bytes[i - from] && !b->reads[r++].done)
			b->bytes[i - from] = NULL;
	b->ok = true;
	return end;
}

/* Walk the list of the descriptor at `addr` (once per scan), recording how far it was read. */
static int scan_list(jitmap_process *p, uint64_t addr, const char *where,
		     jitmap_byte_order order)
{
	jitmap_error err;
	if (!where)
		where = "the program";
	for (size_t i = 0; i < p->ndescs; i++)
		if (p->descs[i].addr == addr)
			return 0; /* one descriptor, named twice (a file mapped under two names) */
	if (jitmap__grow(&p->descs, &p->cap_descs, p->ndescs + 1, sizeof(*p->descs)))
		return -ENOMEM;
	struct descriptor *d = &p->descs[p->ndescs];
	*d = (struct descriptor){.addr = addr, .where = strdup(where)};
	if (!d->where)
		return -ENOMEM;
	p->ndescs++;
	jitmap_jit_list *lst = jitmap_jit_list_read(&p->target, addr, order, p->max_entries, &err);
	if (!lst) {
		if (!(d->problem = strdup(err_text(&err))))
			return -ENOMEM;
		return add_text(&p->problems, "the JIT descriptor in %s: %s", where, err_text(&err));
	}
	int rc = 0;
	const jitmap_error *status = jitmap_jit_list_status(lst);
	const size_t n = jitmap_jit_list_count(lst);
	d->readable = true;
	d->complete = !status->code;
	d->entries = n;
	if (status->code) {
		rc = add_text(&p->problems, "the JIT entry list of the descriptor in %s: %s", where,
			      err_text(status));
		if (!rc && !(d->problem = strdup(err_text(status))))
			rc = -ENOMEM;
	}
	struct batch b = {0};
	for (size_t i = 0; i < n && !rc;) {
		const size_t end = p->lazy ? batch_images(p, &b, lst, i, n) : i + 1;
		for (size_t from = i; i < end && !rc; i++)
			rc = scan_entry(p, addr, jitmap_jit_list_code(lst, i),
					b.ok ? b.bytes[i - from] : NULL);
	}
	free(b.buf);
	free(b.reads);
	free(b.bytes);
	jitmap_jit_list_free(lst);
	return rc;
}

int jitmap_process_scan_descriptor(jitmap_process *p, uint64_t addr, const char *where)
{
	return scan_list(p, addr, where, JITMAP_ORDER_AUTO);
}

int jitmap_process_scan_end(jitmap_process *p)
{
	int rc = 0;
	if (!p->index && !(p->index = jitmap_index_new())) {
		p->scanning = false;
		return -ENOMEM;
	}
	/* Sources not seen again go. */
	for (size_t i = 0; i < p->njit;) {
		if (!p->jit[i]->seen && drop_later(p, p->jit[i]) == 0) {
			memmove(&p->jit[i], &p->jit[i + 1], (p->njit - i - 1) * sizeof(*p->jit));
			p->njit--;
		} else {
			i++;
		}
	}
	for (size_t i = 0; i < p->nobjects;) {
		if (!p->objects[i]->seen && drop_later(p, p->objects[i]) == 0)
			p->objects[i] = p->objects[--p->nobjects];
		else
			i++;
	}
	/* The index lets go of what changed, then takes what is new. */
	for (size_t i = 0; i < p->ndropped; i++)
		index_drop(p, p->dropped[i]);
	for (size_t i = 0; i < p->njit + p->nobjects; i++) {
		struct source *s = i < p->njit ? p->jit[i] : p->objects[i - p->njit];
		const jitmap_stackmap *want = s->listed ? s->sm : NULL;
		if (s->indexed == want)
			continue;
		index_drop(p, s);
		if (want) {
			const int r = index_put(p, s);
			if (r)
				rc = r;
		}
	}
	/* Handed-in images are kept across scans, their stackmaps indexed already. */
	p->code_dirty = true;
	free_buried(p);
	p->scanning = false;
	return rc;
}

/* -- The object -- */

jitmap_process *jitmap_process_new(const jitmap_target *target, const jitmap_process_opts *opts)
{
	if (!target || !target->read_mem) {
		errno = EINVAL;
		return NULL;
	}
	jitmap_process_opts o = {0};
	if (opts) {
		if (!jitmap__opts_valid(opts, opts->sz, sizeof(*opts))) {
			errno = EINVAL;
			return NULL;
		}
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	}
	jitmap_process *p = calloc(1, sizeof(*p));
	if (!p || !(p->index = jitmap_index_new())) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	p->target = *target;
	p->max_entries = o.max_entries;
	p->max_image = o.max_image ? o.max_image : DEFAULT_MAX_IMAGE;
	p->max_section = o.max_section ? o.max_section : DEFAULT_MAX_SECTION;
	const unsigned flags = JITMAP_OPTS_HAS(&o, flags) ? o.flags : 0;
	p->lazy = flags & JITMAP_PROCESS_LAZY;
	p->replace_images = flags & JITMAP_PROCESS_REPLACE_IMAGES;
	if (flags & ~(JITMAP_PROCESS_LAZY | JITMAP_PROCESS_REPLACE_IMAGES)) {
		jitmap_process_free(p);
		errno = EINVAL;
		return NULL;
	}
	return p;
}

int jitmap_process_set_target(jitmap_process *p, const jitmap_target *target,
			      jitmap_target *previous)
{
	if (!p || !target || !target->read_mem)
		return -EINVAL;
	if (previous)
		*previous = p->target;
	p->target = *target;
	return 0;
}

void jitmap_process_flush(jitmap_process *p)
{
	if (!p)
		return;
	/* Every source lets go of its parse (buried when the last one does), then every buried
	 * stackmap goes. */
	for (size_t i = 0; i < p->njit; i++)
		source_free(p, p->jit[i]);
	for (size_t i = 0; i < p->nobjects; i++)
		source_free(p, p->objects[i]);
	for (size_t i = 0; i < p->nhanded; i++)
		source_free(p, p->handed[i]);
	p->nhanded = 0;
	p->scanning = false;
	for (size_t i = 0; i < p->ndropped; i++)
		source_free(p, p->dropped[i]);
	for (size_t i = 0; i < p->ngrave; i++)
		jitmap_stackmap_free(p->graveyard[i]);
	p->njit = p->nobjects = p->ndropped = p->ngrave = p->norder = p->ncode = 0;
	p->code_dirty = true;
	jitmap_index_free(p->index);
	p->index = jitmap_index_new(); /* NULL on ENOMEM: scan_end then fails politely */
	truncate_texts(&p->problems, 0);
	free_descriptors(p);
	p->unread_files = 0;
	for (size_t i = 0; i < p->ndrops; i++)
		free(p->drops[i].why);
	p->ndrops = 0;
	truncate_texts(&p->taken, 0);
}

void jitmap_process_free(jitmap_process *p)
{
	if (!p)
		return;
	jitmap_process_flush(p);
	jitmap_index_free(p->index);
	free(p->jit);
	free(p->objects);
	free(p->handed);
	free(p->order);
	free(p->dropped);
	free(p->graveyard);
	free(p->parses);
	free(p->code);
	free(p->descs);
	free(p->drops);
	free_texts(&p->problems);
	free_texts(&p->taken);
	jitmap_perfmap_free(p->perfmap);
	free(p->glance_buf);
	free(p);
}

/* -- Accessors -- */

size_t jitmap_process_num_sources(const jitmap_process *p) { return p->norder; }

int jitmap_process_source(const jitmap_process *p, size_t i, jitmap_source_info *out)
{
	if (i >= p->norder)
		return -ERANGE;
	return fill_info(p->order[i], out);
}

static int fill_info(const struct source *s, jitmap_source_info *out)
{
	const jitmap_source_info full = {
		.sz = sizeof(full),
		.kind = s->kind,
		.name = s->kind == JITMAP_SOURCE_JIT ? s->name : s->path,
		.descriptor = s->descriptor,
		.entry = s->entry,
		.symfile_addr = s->symfile_addr,
		.symfile_size = s->symfile_size,
		.section_address = s->sm_addr,
		.section_size = s->sm_size,
		.bias = s->bias,
		.stackmap = s->sm,
		.live = s->live,
		.image = s->image,
		.num_problems = num_problems(s),
		.num_notes = s->notes.n,
	};
	return jitmap__give(out, &full, sizeof(full));
}

const char *jitmap_process_source_problem(const jitmap_process *p, size_t i, size_t k)
{
	return i < p->norder ? problem_at(p->order[i], k) : NULL;
}

const char *jitmap_process_source_note(const jitmap_process *p, size_t i, size_t k)
{
	return i < p->norder && k < p->order[i]->notes.n ? p->order[i]->notes.items[k] : NULL;
}

size_t jitmap_process_num_problems(const jitmap_process *p) { return p->problems.n; }

const char *jitmap_process_problem(const jitmap_process *p, size_t k)
{
	return k < p->problems.n ? p->problems.items[k] : NULL;
}

jitmap_index *jitmap_process_index(const jitmap_process *p) { return p->index; }

size_t jitmap_process_num_descriptors(const jitmap_process *p) { return p ? p->ndescs : 0; }

size_t jitmap_process_num_unread_files(const jitmap_process *p) { return p ? p->unread_files : 0; }

int jitmap_process_descriptor(const jitmap_process *p, size_t i, jitmap_descriptor_info *out)
{
	if (!p || !out || i >= p->ndescs)
		return -ERANGE;
	const struct descriptor *d = &p->descs[i];
	const jitmap_descriptor_info full = {
		.sz = sizeof(full),
		.address = d->addr,
		.where = d->where,
		.readable = d->readable,
		.complete = d->complete,
		.num_entries = d->entries,
		.problem = d->problem,
	};
	return jitmap__give(out, &full, sizeof(full));
}

size_t jitmap_process_num_layout_images(const jitmap_process *p)
{
	return p ? p->layout_images : 0;
}

/* -- JIT code by address -- */

/* The range holding `addr`, of images handed in only when `handed_only`. An image handed in
 * is checked against the staleness rule first: one not usable now is passed over, and when
 * one is dropped the table has changed and the search starts again. 0, -ENOENT, -ENOMEM. */
static int code_find(jitmap_process *p, uint64_t addr, bool handed_only,
		     const struct code_range **out)
{
	for (;;) {
		if (p->code_dirty && code_rebuild(p))
			return -ENOMEM;
		/* The range starting last at or before addr that holds it: ranges from hostile
		 * images may overlap, so look back while an earlier range may still reach addr. */
		bool again = false;
		for (size_t i = code_after(p, addr, true); i-- > 0 && p->code[i].max_hi > addr;) {
			const struct code_range *c = &p->code[i];
			if (addr >= c->hi || (handed_only && !c->s->handed))
				continue;
			if (c->s->handed) {
				const int usable = image_check(p, c->s);
				if (usable < 0) {
					again = true;
					break;
				}
				if (!usable)
					continue;
			}
			*out = c;
			return 0;
		}
		if (!again)
			return -ENOENT;
	}
}

static void code_fill(const struct code_range *c, uint64_t addr, jitmap_code_info *out)
{
	struct source *s = c->s;
	*out = (jitmap_code_info){
		.source = s->name,
		.entry = s->handed ? 0 : s->entry,
		.image_id = s->handed ? s->id : 0,
		.lo = c->lo,
		.hi = c->hi,
		.image = s->image,
		.stackmap = s->sm,
	};
	const jitmap_code_function *f = make_fns(s) ? NULL : function_in(s, addr);
	if (f) {
		out->function = f->name;
		out->function_lo = f->lo;
		out->function_hi = f->hi;
	}
}

/* Code a perf map or a jitdump names (no image, no stackmap): jitmap_process_perfmap. */
static int perfmap_code(jitmap_process *p, uint64_t addr, jitmap_code_info *out)
{
	jitmap_perfmap_sym sym = {.sz = sizeof(sym)};
	const int rc = jitmap_perfmap_lookup(p->perfmap, addr, &sym);
	if (rc)
		return rc;
	*out = (jitmap_code_info){.source = sym.source, .lo = sym.lo, .hi = sym.hi,
				  .function = sym.name, .function_lo = sym.lo,
				  .function_hi = sym.hi};
	return 0;
}

jitmap_perfmap *jitmap_process_perfmap(jitmap_process *p)
{
	if (!p) {
		errno = EINVAL;
		return NULL;
	}
	if (!p->perfmap)
		p->perfmap = jitmap_perfmap_new();
	return p->perfmap;
}

int jitmap_process_code_at(jitmap_process *p, uint64_t addr, jitmap_code_info *out)
{
	if (!p || !out)
		return -EINVAL;
	const struct code_range *c;
	struct source *s;
	for (;;) {
		const int rc = code_find(p, addr, false, &c);
		if (rc == -ENOENT && p->perfmap)
			return perfmap_code(p, addr, out);
		if (rc)
			return rc;
		s = c->s;
		if (!s->glanced)
			break;
		/* Opened now; once its code is not the glance's, the table changed: look again
		 * (each time round, one image less is glanced). */
		open_glanced(p, s);
		if (!p->code_dirty)
			break;
	}
	if (s->recheck) { /* a handed-in image, or a lazy scan's entry: read it now */
		s->recheck = false;
		if (refresh_live(p, s) && index_now(p, s))
			add_text(&s->problems, "%s: out of memory indexing its stackmap", s->name);
	}
	code_fill(c, addr, out);
	return 0;
}

int jitmap_process_image_code_at(jitmap_process *p, uint64_t addr, jitmap_code_info *out)
{
	if (!p || !out)
		return -EINVAL;
	const struct code_range *c;
	const int rc = code_find(p, addr, true, &c);
	if (!rc)
		code_fill(c, addr, out);
	return rc;
}

/* The source of `code` (as code_at filled it): an image handed in by its id, a scan's
 * source by its range and image. */
static struct source *code_source(jitmap_process *p, const jitmap_code_info *code)
{
	if (code->image_id) {
		struct source *s = handed(p, code->image_id);
		return s && s->image == code->image ? s : NULL;
	}
	if (!code->image || (p->code_dirty && code_rebuild(p)))
		return NULL;
	for (size_t i = code_after(p, code->lo, false); i < p->ncode && p->code[i].lo == code->lo;
	     i++)
		if (p->code[i].s->image == code->image && !p->code[i].s->handed)
			return p->code[i].s;
	return NULL;
}

/* Read the image's CFI (the policy in process.h); what went wrong becomes its cfi_problem. */
static void read_cfi(jitmap_process *p, struct source *s)
{
	uint64_t eh_addr = 0, eh_len = 0;
	size_t df_len = 0;
	const void *df = jitmap_image_debug_frame(s->image, &df_len);
	const bool has_eh = jitmap_image_eh_frame(s->image, &eh_addr, &eh_len) == 0 && eh_len;
	if (!has_eh && !df) {
		s->cfi_absent = true;
		return;
	}
	char problem[400] = "", why[160];
	void *eh = NULL;
	if (has_eh && (eh_len > MAX_CFI_SECTION || eh_len > SIZE_MAX))
		snprintf(problem, sizeof(problem), "its .eh_frame at 0x%" PRIx64 " is %" PRIu64
			 " bytes, over the %" PRIu64 " MiB limit", eh_addr, eh_len,
			 MAX_CFI_SECTION >> 20);
	else if (has_eh && !(eh = malloc((size_t)eh_len)))
		snprintf(problem, sizeof(problem), "out of memory for its .eh_frame");
	else if (has_eh && read_mem(p, eh_addr, eh, (size_t)eh_len, why, sizeof(why))) {
		free(eh);
		eh = NULL;
		snprintf(problem, sizeof(problem), "its .eh_frame at 0x%" PRIx64 " cannot be read: %s",
			 eh_addr, why);
	}
	if (eh || df) {
		jitmap_error err = {0};
		s->cfi = jitmap_cfi_new(s->arch, eh, eh ? (size_t)eh_len : 0, eh_addr, df,
					df ? df_len : 0, &err);
		if (!s->cfi) {
			const size_t n = strlen(problem);
			snprintf(problem + n, sizeof(problem) - n, "%sno usable CFI: %s", n ? "; " : "",
				 err_text(&err));
		}
	}
	free(eh);
	if (s->cfi) {
		free(s->cfi_problem);
		s->cfi_problem = NULL;
		s->cfi_failed = 0;
		return;
	}
	s->cfi_failed = p->gen + 1;
	set_problem(&s->cfi_problem, "%s: %s", s->name, problem);
}

const jitmap_cfi *jitmap_process_code_cfi(jitmap_process *p, const jitmap_code_info *code,
					  const char **why)
{
	struct source *s = p && code ? code_source(p, code) : NULL;
	if (why)
		*why = NULL;
	if (!s) {
		if (why)
			*why = "not JIT code this process holds";
		return NULL;
	}
	if (!s->cfi && !s->cfi_absent && s->cfi_failed != p->gen + 1)
		read_cfi(p, s);
	if (!s->cfi && why)
		*why = s->cfi_absent ? NULL : s->cfi_problem ? s->cfi_problem : "out of memory";
	return s->cfi;
}

/* -- For the frame model (frame.c) -- */

static const struct source *source_of(const jitmap_process *p, size_t i)
{
	/* The last scan's list first (the names the user sees in `info stackmaps`), then the
	 * images a debugger handed in. */
	if (i < p->norder)
		return p->order[i];
	i -= p->norder;
	return i < p->nhanded ? p->handed[i] : NULL;
}

size_t jitmap__process_num_stackmaps(const jitmap_process *p)
{
	return p ? p->norder + p->nhanded : 0;
}

const jitmap_stackmap *jitmap__process_stackmap(const jitmap_process *p, size_t i,
						struct jitmap__stackmap_source *out)
{
	const struct source *s = source_of(p, i);
	if (!s)
		return NULL;
	if (out)
		*out = (struct jitmap__stackmap_source){
			.name = s->kind == JITMAP_SOURCE_JIT ? s->name : s->path,
			.image = s->image,
			.notes = (const char *const *)s->notes.items,
			.num_notes = s->notes.n,
		};
	return s->sm;
}
