/* scan.c (the process model): a scan, from scan_begin to scan_end. The JIT descriptors it
 * walks (their entries read in batches in a lazy scan), the loaded files it is told of or finds
 * in a core, and at its end the sources not seen again dropped and the index brought up to date.
 */
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* A lazy scan reads the images it glances at in batches of at most this many bytes and
 * entries (jitmap__read_many). */
#define BATCH_BYTES ((size_t)128 << 10)
#define BATCH_ENTRIES 1024
_Static_assert(GLANCE_MAX_IMAGE <= BATCH_BYTES, "a batch holds any image glanced at");

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

static void object_live(jitmap_process *p, struct jitmap__source *s)
{
	uint8_t *live = NULL;
	char why[160];
	struct jitmap__parse *parsed = NULL;
	bool fresh = false, early = false;
	if (s->sm_size <= p->max_section && s->sm_size <= SIZE_MAX &&
	    (live = malloc(s->sm_size ? (size_t)s->sm_size : 1)) &&
	    jitmap__read_mem(p, s->sm_addr, live, (size_t)s->sm_size, why, sizeof(why)) == 0) {
		jitmap_error err;
		parsed = jitmap__parse_bytes(p, live, s->sm_addr, s->sm_size,
				     jitmap__hash_bytes(live, (size_t)s->sm_size), jitmap_image_arch(s->image),
				     jitmap_image_byte_order(s->image), &fresh, &err);
		if (parsed && fresh) {
			parsed->complete = !jitmap__has_unset_address(parsed->sm) &&
					   jitmap_image_name_functions(s->image, parsed->sm) == 0;
		}
	}
	free(live);
	jitmap_stackmap *sm = jitmap_image_stackmap(s->image);
	/* Memory that is not yet what the relocations make it is read again at the next scan. */
	if (parsed && parsed->complete && sm && !relocated_as_file(parsed->sm, sm))
		early = true;
	if (parsed && parsed->complete && !early) {
		jitmap__set_stackmap(p, s, parsed->sm, parsed, true);
	} else if (sm) {
		jitmap__set_stackmap(p, s, sm, NULL, false);
		jitmap__problem(
			&s->notes, SIZE_MAX, "read from the file, moved by the load bias 0x%" PRIx64 "%s",
			s->bias, early ? " (the section in memory is not relocated yet)" : "");
	}
	if (parsed && !parsed->refs && !parsed->indexed)
		jitmap__parse_release(p, parsed); /* not used: unrelocated in memory */
	s->complete = !early;
}

int jitmap_process_scan_object(jitmap_process *p, const char *path, uint64_t section_address)
{
	struct stat st;
	const bool stat_ok = stat(path, &st) == 0;
	struct jitmap__source *s = NULL;
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
			if (jitmap__drop_later(p, s))
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
			jitmap__problem(&s->problems, SIZE_MAX, "%s: offset 0x%" PRIx64 ": %s", path,
					 err.offset, jitmap__err_text(&err));
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
	return jitmap__list_source(p, s);
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
			/* (A path through /proc/PID/map_files or /proc/PID/root says where the
			 * process's own debug files are: debugfile.c.) */
			const struct jitmap__debug_lookup how = {.dirs = p->debug_dirs};
			has_desc = jitmap__file_data_symbol(elf, path, &how,
							    JITMAP_JIT_DESCRIPTOR_SYMBOL, &desc,
							    NULL, 0) == 0;
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
			  const char *why, const struct jitmap__debug_lookup *debug)
{
	struct core_scan *cs = ctx;
	jitmap_process *p = cs->p;
	if (!elf) {
		p->unread_files++;
		return jitmap__problem(&p->problems, SIZE_MAX,
					"%s (mapped by the core) %s: a JIT descriptor or "
					"stackmaps in it are not found",
					path, why);
	}
	uint64_t desc = 0, sm = 0;
	const bool has_desc = jitmap__file_data_symbol(elf, path, debug,
						       JITMAP_JIT_DESCRIPTOR_SYMBOL, &desc, NULL,
						       0) == 0;
	const bool has_sm = jitmap__elf_section_address(elf, JITMAP__STACKMAP_SECTION, &sm) == 0;
	if ((has_desc || has_sm) && !bias_known) {
		p->unread_files += has_desc;
		return jitmap__problem(&p->problems, SIZE_MAX, "%s defines %s, but the core does not say where it is "
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

int jitmap_process_scan_stopped(jitmap_process *p, jitmap_stopped *s)
{
	if (!p || !s)
		return -EINVAL;
	struct core_scan cs = {.p = p, .order = jitmap_stopped_byte_order(s)};
	const size_t before = p->ndescs;
	const int rc = jitmap__stopped_each_file(s, scan_core_file, &cs);
	return rc ? rc : (int)(p->ndescs - before < INT_MAX ? p->ndescs - before : INT_MAX);
}

/* -- Scanning -- */

void jitmap__free_descriptors(jitmap_process *p)
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
	jitmap__problems_truncate(&p->problems, 0);
	jitmap__free_descriptors(p);
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
		    c->symfile_size > p->max_image || (jitmap__jit_find(p, c, &known), known))
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
	struct jitmap__descriptor *d = &p->descs[p->ndescs];
	*d = (struct jitmap__descriptor){.addr = addr, .where = strdup(where)};
	if (!d->where)
		return -ENOMEM;
	p->ndescs++;
	jitmap_jit_list *lst = jitmap_jit_list_read(&p->target, addr, order, p->max_entries, &err);
	if (!lst) {
		if (!(d->problem = strdup(jitmap__err_text(&err))))
			return -ENOMEM;
		return jitmap__problem(&p->problems, SIZE_MAX, "the JIT descriptor in %s: %s", where, jitmap__err_text(&err));
	}
	int rc = 0;
	const jitmap_error *status = jitmap_jit_list_status(lst);
	const size_t n = jitmap_jit_list_count(lst);
	d->readable = true;
	d->complete = !status->code;
	d->entries = n;
	if (status->code) {
		rc = jitmap__problem(&p->problems, SIZE_MAX,
				      "the JIT entry list of the descriptor in %s: %s", where,
				      jitmap__err_text(status));
		if (!rc && !(d->problem = strdup(jitmap__err_text(status))))
			rc = -ENOMEM;
	}
	struct batch b = {0};
	for (size_t i = 0; i < n && !rc;) {
		const size_t end = p->lazy ? batch_images(p, &b, lst, i, n) : i + 1;
		for (size_t from = i; i < end && !rc; i++)
			rc = jitmap__scan_entry(p, addr, jitmap_jit_list_code(lst, i),
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
		if (!p->jit[i]->seen && jitmap__drop_later(p, p->jit[i]) == 0) {
			memmove(&p->jit[i], &p->jit[i + 1], (p->njit - i - 1) * sizeof(*p->jit));
			p->njit--;
		} else {
			i++;
		}
	}
	for (size_t i = 0; i < p->nobjects;) {
		if (!p->objects[i]->seen && jitmap__drop_later(p, p->objects[i]) == 0)
			p->objects[i] = p->objects[--p->nobjects];
		else
			i++;
	}
	/* The index lets go of what changed, then takes what is new. */
	for (size_t i = 0; i < p->ndropped; i++)
		jitmap__index_drop(p, p->dropped[i]);
	for (size_t i = 0; i < p->njit + p->nobjects; i++) {
		struct jitmap__source *s = i < p->njit ? p->jit[i] : p->objects[i - p->njit];
		const jitmap_stackmap *want = s->listed ? s->sm : NULL;
		if (s->indexed == want)
			continue;
		jitmap__index_drop(p, s);
		if (want) {
			const int r = jitmap__index_put(p, s);
			if (r)
				rc = r;
		}
	}
	/* Handed-in images are kept across scans, their stackmaps indexed already. */
	p->code_dirty = true;
	jitmap__free_buried(p);
	p->scanning = false;
	/* A scan is a stop: the images handed in are looked at again here, not by the lookups
	 * that follow. */
	jitmap__refresh(p);
	return rc;
}
