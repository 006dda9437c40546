/* core_small.c: which memory of a dumped process a small core keeps (jitmap-core-handler
 * --small; the note that says so: include/jitmap/core.h).
 *
 * What a reader of the stacks, the JIT frames and their values needs, found from the core's
 * notes (threads, NT_FILE, auxv) and its memory (the core's own, or the crashed process's
 * while the core streams past):
 *   - each thread's stack, from below its stack pointer (x86-64's red zone and more) to the
 *     end of the segment holding it, at most `stack_bytes` above the stack pointer (to that
 *     byte exactly, not to the end of its page); and its thread pointer's block (glibc's
 *     struct pthread: thread names, TLS);
 *   - every JIT descriptor (`__jit_debug_descriptor` in the mapped files), each entry of its
 *     list, each entry's image, and the memory of each image's sections (code, stackmaps,
 *     unwinding tables) where the image places them;
 *   - JIT code that a thread's PC or a word of its kept stack points into (an executable
 *     segment no file maps: perf-map JITs have no image), a page either side of the address;
 *   - each mapped file's first page (headers and build ID), the executable's dynamic section,
 *     the dynamic linker's r_debug, its link_map chain and the names and dynamic sections it
 *     points to (how GDB and libdwfl list the modules), the vDSO;
 *   - every writable segment of at most SMALL_DATA bytes, whole (a library's .data and .bss:
 *     a debugger's globals).
 * Ranges are whole pages but for a stack's bound; the writer (core_stream.c) keeps their
 * intersection with the bytes the full core holds. Everything read here is untrusted: every
 * count is capped (images read for their sections: MAX_IMAGES bytes in all), every read
 * checked, and a read that fails only leaves that range out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

#define PAGE UINT64_C(4096)
#define BELOW_SP 512                        /* bytes kept below a stack pointer */
#define SMALL_DATA (UINT64_C(64) << 10)     /* writable segments kept whole up to this */
#define MAX_IMAGE (UINT64_C(256) << 20)     /* a JIT entry's image, at most */
#define MAX_IMAGES (UINT64_C(1) << 30)      /* images read for their sections, in all */
#define MAX_SECTION (UINT64_C(64) << 20)    /* one section of an image, at most */
#define MAX_CODE_PAGES 16384                /* pages kept for stack words into JIT code */
#define MAX_DESCRIPTORS 16
#define MAX_VDSO (UINT64_C(1) << 20)

struct planner {
	jitmap__core *core;
	const jitmap_target *mem;
	jitmap_byte_order order;
	const struct jitmap__small_seg *segs; /* sorted by vaddr */
	size_t nsegs;
	struct jitmap__small_range *r;
	size_t n, cap;
	size_t code_pages;
	uint64_t images_read; /* bytes of JIT images read for their sections */
	int rc; /* -ENOMEM once out of memory */
};

static uint64_t page_down(uint64_t a) { return a & ~(PAGE - 1); }
static uint64_t page_up(uint64_t a) { return a > UINT64_MAX - PAGE ? UINT64_MAX & ~(PAGE - 1)
								  : (a + PAGE - 1) & ~(PAGE - 1); }

/* [lo, hi) kept, in whole pages; with `exact`, up to hi and not past it (a stack's bound). */
static void keep_range(struct planner *p, uint64_t lo, uint64_t hi, unsigned why, bool exact)
{
	if (hi <= lo || p->rc)
		return;
	if (jitmap__grow(&p->r, &p->cap, p->n + 1, sizeof(*p->r))) {
		p->rc = -ENOMEM;
		return;
	}
	p->r[p->n++] = (struct jitmap__small_range){page_down(lo), exact ? hi : page_up(hi), why};
}

static void keep(struct planner *p, uint64_t lo, uint64_t hi, unsigned why)
{
	keep_range(p, lo, hi, why, false);
}

static bool read_mem(struct planner *p, uint64_t addr, void *buf, size_t len)
{
	char why[160];
	return p->mem->read_mem && p->mem->read_mem(p->mem->ctx, addr, buf, len, why,
						    sizeof(why)) == 0;
}

/* The segment holding `addr`, or NULL. */
static const struct jitmap__small_seg *seg_at(const struct planner *p, uint64_t addr)
{
	const size_t lo = JITMAP_UPPER_BOUND(p->segs, p->nsegs, vaddr, addr);
	if (!lo)
		return NULL;
	const struct jitmap__small_seg *s = &p->segs[lo - 1];
	return addr - s->vaddr < s->memsz ? s : NULL;
}

/* Whether `addr` is JIT code: in an executable segment no file is mapped at. */
static bool jit_code_at(const struct planner *p, uint64_t addr)
{
	const struct jitmap__small_seg *s = seg_at(p, addr);
	if (!s || !(s->flags & PF_X))
		return false;
	return jitmap__core_find_map(p->core, addr) == SIZE_MAX;
}

static void keep_code_near(struct planner *p, uint64_t addr)
{
	if (p->code_pages >= MAX_CODE_PAGES || !jit_code_at(p, addr))
		return;
	keep(p, addr - PAGE, addr + PAGE, JITMAP_CORE_KEPT_JIT_CODE);
	p->code_pages += 2;
}

/* -- Threads -- */

static void thread_pointer(struct planner *p, const jitmap_stopped_thread_info *t, jitmap_arch arch)
{
	uint64_t tp = 0, a0 = 0, a1 = 0;
	if (arch == JITMAP_ARCH_X86_64 && jitmap_stopped_thread_reg(t, 58, &tp) == 0 && tp)
		keep(p, tp - PAGE, tp + 2 * PAGE, JITMAP_CORE_KEPT_THREAD);
	else if (arch == JITMAP_ARCH_S390X && jitmap_stopped_thread_reg(t, 48, &a0) == 0 &&
		 jitmap_stopped_thread_reg(t, 49, &a1) == 0 && (tp = a0 << 32 | (a1 & 0xffffffffu)))
		keep(p, tp - PAGE, tp + 2 * PAGE, JITMAP_CORE_KEPT_THREAD);
}

static void stacks(struct planner *p, uint64_t stack_bytes)
{
	const jitmap_arch arch = jitmap__core_arch(p->core);
	const int spn = jitmap_reg_sp(arch), pcn = jitmap_reg_pc(arch);
	uint8_t *buf = malloc(1 << 16);
	if (!buf) {
		p->rc = -ENOMEM;
		return;
	}
	for (size_t i = 0; i < jitmap__core_num_threads(p->core); i++) {
		const jitmap_stopped_thread_info *t = jitmap__core_thread(p->core, i);
		uint64_t sp, pc;
		thread_pointer(p, t, arch);
		if (pcn >= 0 && jitmap_stopped_thread_reg(t, (unsigned)pcn, &pc) == 0)
			keep_code_near(p, pc);
		const struct jitmap__small_seg *s;
		if (spn < 0 || jitmap_stopped_thread_reg(t, (unsigned)spn, &sp) || !(s = seg_at(p, sp)))
			continue;
		const uint64_t end = s->vaddr + s->memsz;
		const uint64_t hi = end - sp > stack_bytes ? sp + stack_bytes : end;
		const uint64_t lo = sp - s->vaddr > BELOW_SP ? sp - BELOW_SP : s->vaddr;
		keep_range(p, lo, hi, JITMAP_CORE_KEPT_STACK, hi < end);
		/* Return addresses into JIT code: its pages, for the readers that look at code. */
		for (uint64_t a = sp & ~UINT64_C(7); a < hi && p->code_pages < MAX_CODE_PAGES;) {
			const size_t len = hi - a < (1 << 16) ? (size_t)(hi - a) : 1 << 16;
			if (!read_mem(p, a, buf, len))
				break;
			for (size_t k = 0; k + 8 <= len; k += 8)
				keep_code_near(p, jitmap__load(buf + k, 8, p->order));
			a += len;
		}
	}
	free(buf);
}

/* -- JIT descriptors, entries, images -- */

static void image_sections(struct planner *p, uint64_t addr, uint64_t size)
{
	void *img = malloc((size_t)size);
	if (!img) {
		p->rc = -ENOMEM;
		return;
	}
	Elf *e = NULL;
	if (read_mem(p, addr, img, (size_t)size) && (e = elf_memory(img, (size_t)size)) &&
	    elf_kind(e) == ELF_K_ELF) {
		Elf_Scn *scn = NULL;
		GElf_Shdr sh;
		while ((scn = elf_nextscn(e, scn)) && gelf_getshdr(scn, &sh)) {
			if (!(sh.sh_flags & SHF_ALLOC) || !sh.sh_addr || sh.sh_type == SHT_NOBITS ||
			    !sh.sh_size || sh.sh_addr > UINT64_MAX - sh.sh_size)
				continue;
			keep(p, sh.sh_addr,
			     sh.sh_addr + (sh.sh_size < MAX_SECTION ? sh.sh_size : MAX_SECTION),
			     JITMAP_CORE_KEPT_JIT_CODE);
		}
	}
	elf_end(e);
	free(img);
}

static size_t jit_lists(struct planner *p)
{
	uint64_t descs[MAX_DESCRIPTORS];
	size_t nd = jitmap__core_find_symbol(p->core, JITMAP_JIT_DESCRIPTOR_SYMBOL, descs, NULL,
					    MAX_DESCRIPTORS);
	nd = nd < MAX_DESCRIPTORS ? nd : MAX_DESCRIPTORS;
	for (size_t d = 0; d < nd && !p->rc; d++) {
		keep(p, descs[d], descs[d] + 32, JITMAP_CORE_KEPT_JIT);
		jitmap_error err;
		jitmap_jit_list *l = jitmap_jit_list_read(p->mem, descs[d], p->order, 0, &err);
		for (size_t i = 0; l && i < jitmap_jit_list_count(l) && !p->rc; i++) {
			const jitmap_jit_code *c = jitmap_jit_list_code(l, i);
			keep(p, c->entry, c->entry + 32, JITMAP_CORE_KEPT_JIT);
			if (!c->symfile_size || c->symfile_size > MAX_IMAGE ||
			    c->symfile_addr > UINT64_MAX - c->symfile_size)
				continue;
			keep(p, c->symfile_addr, c->symfile_addr + c->symfile_size,
			     JITMAP_CORE_KEPT_JIT);
			if (p->images_read + c->symfile_size > MAX_IMAGES)
				continue; /* a list of huge images (damaged): the images alone */
			p->images_read += c->symfile_size;
			image_sections(p, c->symfile_addr, c->symfile_size);
		}
		jitmap_jit_list_free(l);
	}
	return nd;
}

/* -- Modules and the dynamic linker's list -- */

/* A link_map (l_addr, l_name, l_ld, l_next, l_prev), the page of its name and of its
 * library's dynamic section: what GDB and libdwfl read to list the modules. */
static int keep_link_map(void *ctx, const struct jitmap__link_map *lm)
{
	struct planner *p = ctx;
	keep(p, lm->at, lm->at + 40, JITMAP_CORE_KEPT_LOADER);
	if (lm->l_name)
		keep(p, lm->l_name, lm->l_name + 1, JITMAP_CORE_KEPT_LOADER);
	if (lm->l_ld)
		keep(p, lm->l_ld, lm->l_ld + 1, JITMAP_CORE_KEPT_LOADER);
	return p->rc;
}

static void loader(struct planner *p)
{
	uint64_t phdr = 0, phnum = 0, vdso = 0;
	if (jitmap__core_auxv(p->core, 33 /* AT_SYSINFO_EHDR */, &vdso) == 0 && vdso) {
		const struct jitmap__small_seg *s = seg_at(p, vdso);
		if (s && s->memsz <= MAX_VDSO)
			keep(p, s->vaddr, s->vaddr + s->memsz, JITMAP_CORE_KEPT_VDSO);
	}
	for (size_t i = 0; i < jitmap__core_num_mappings(p->core); i++) {
		const jitmap_stopped_mapping_info *m = jitmap__core_mapping(p->core, i);
		if (m->offset == 0)
			keep(p, m->start, m->start + PAGE, JITMAP_CORE_KEPT_MODULE);
	}
	if (jitmap__core_auxv(p->core, AT_PHDR, &phdr) || jitmap__core_auxv(p->core, AT_PHNUM, &phnum) ||
	    !phdr || !phnum || phnum > 256)
		return;
	uint8_t ph[256 * 56];
	if (!read_mem(p, phdr, ph, (size_t)phnum * 56))
		return;
	keep(p, phdr, phdr + phnum * 56, JITMAP_CORE_KEPT_LOADER);
	uint64_t bias = 0, dyn = 0, dynsz = 0;
	bool have_bias = false;
	for (uint64_t i = 0; i < phnum; i++) {
		const uint8_t *h = ph + i * 56;
		const uint32_t type = (uint32_t)jitmap__load(h, 4, p->order);
		if (type == PT_PHDR) {
			bias = phdr - jitmap__load(h + 16, 8, p->order);
			have_bias = true;
		} else if (type == PT_DYNAMIC) {
			dyn = jitmap__load(h + 16, 8, p->order);
			dynsz = jitmap__load(h + 40, 8, p->order);
		}
	}
	if (!have_bias || !dyn || dynsz > (1 << 20))
		return;
	dyn += bias;
	keep(p, dyn, dyn + dynsz, JITMAP_CORE_KEPT_LOADER);
	uint64_t r_debug;
	jitmap__link_maps(p->mem, p->order, dyn, dynsz, &r_debug, keep_link_map, p);
	if (r_debug)
		keep(p, r_debug, r_debug + 40, JITMAP_CORE_KEPT_LOADER);
}

static int range_cmp(const void *a, const void *b)
{
	const struct jitmap__small_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int jitmap__small_plan(jitmap__core *core, const jitmap_target *mem,
		       const struct jitmap__small_seg *segs, size_t nsegs, uint64_t stack_bytes,
		       struct jitmap__small_range **out, size_t *nout, size_t *descriptors)
{
	struct planner p = {.core = core, .mem = mem, .order = jitmap__core_byte_order(core),
			    .segs = segs, .nsegs = nsegs};
	*out = NULL;
	*nout = 0;
	if (jitmap__elf_ready(NULL))
		return -ENOTSUP;
	stacks(&p, stack_bytes);
	*descriptors = jit_lists(&p);
	loader(&p);
	for (size_t i = 0; i < nsegs; i++)
		if ((segs[i].flags & PF_W) && segs[i].filesz && segs[i].filesz <= SMALL_DATA)
			keep(&p, segs[i].vaddr, segs[i].vaddr + segs[i].filesz,
			     JITMAP_CORE_KEPT_DATA);
	if (p.rc) {
		free(p.r);
		return p.rc;
	}
	/* Sorted and merged: overlapping or touching ranges become one, their reasons joined. */
	if (p.n)
		qsort(p.r, p.n, sizeof(*p.r), range_cmp);
	size_t m = 0;
	for (size_t i = 0; i < p.n; i++) {
		if (m && p.r[i].lo <= p.r[m - 1].hi) {
			if (p.r[i].hi > p.r[m - 1].hi)
				p.r[m - 1].hi = p.r[i].hi;
			p.r[m - 1].why |= p.r[i].why;
		} else {
			p.r[m++] = p.r[i];
		}
	}
	*out = p.r;
	*nout = m;
	return 0;
}

/* -- Left-out memory a mapped file holds -- */

int jitmap__small_file_holds(jitmap__core *core, const jitmap_target *mem, uint64_t page)
{
	const size_t i = jitmap__core_find_map(core, page);
	if (i == SIZE_MAX || core->maps[i].end - page < PAGE)
		return 0;
	const jitmap_stopped_mapping_info *m = &core->maps[i];
	const int fd = jitmap__core_file_fd(core, core->map_file[i]);
	uint8_t *a = malloc(2 * PAGE);
	int same = 0;
	char why[160];
	if (a && fd >= 0 && m->offset <= UINT64_MAX - (page - m->start) &&
	    pread(fd, a, PAGE, (off_t)(m->offset + (page - m->start))) == (ssize_t)PAGE &&
	    mem->read_mem && mem->read_mem(mem->ctx, page, a + PAGE, PAGE, why, sizeof(why)) == 0)
		same = !memcmp(a, a + PAGE, PAGE);
	free(a);
	return a ? same : -ENOMEM;
}

/* -- What a small core leaves out --
 *
 * Memory the full core held and the small one does not: said in the small core's note, with
 * the flags of the segment it was cut from (where code can be). Where the file mapped there
 * holds the same bytes, the note says so too, and readers read the file, as a kernel core's
 * undumped code; elsewhere it reads as missing and, but for plain code, it is taken out of
 * NT_FILE: GDB reads a mapped file for any address a core holds no bytes of, and would print
 * the file's bytes (unrelocated pointers, initial values) as the process's. */

int jitmap__small_left_add(struct jitmap__small_left *l, uint64_t lo, uint64_t hi,
			   unsigned flags, bool in_file)
{
	if (hi <= lo)
		return 0;
	if (l->n && l->v[l->n - 1].end == lo && l->v[l->n - 1].flags == flags &&
	    l->v[l->n - 1].in_file == in_file) {
		l->v[l->n - 1].end = hi; /* one run */
		return 0;
	}
	if (jitmap__grow(&l->v, &l->cap, l->n + 1, sizeof(*l->v)))
		return -ENOMEM;
	l->v[l->n++] = (struct jitmap__core_left){lo, hi, flags, in_file};
	return 0;
}

#define MAX_COMPARED (1u << 18) /* pages compared with their files, at most */

int jitmap__small_refine_left(jitmap__core *core, const jitmap_target *mem,
			      struct jitmap__small_left *l, uint64_t *from_files)
{
	struct jitmap__small_left out = {0};
	size_t compared = 0;
	int rc = 0;
	for (size_t i = 0; i < l->n && !rc; i++) {
		const struct jitmap__core_left *r = &l->v[i];
		uint64_t run = r->start;
		for (uint64_t p = r->start; jitmap__small_file_refused(r->flags) && core->nmaps &&
		     p < r->end && compared < MAX_COMPARED && !rc;) {
			const uint64_t next = page_down(p) + PAGE < r->end ? page_down(p) + PAGE
									  : r->end;
			const int holds = p % PAGE == 0 && next - p == PAGE
						  ? jitmap__small_file_holds(core, mem, p) : 0;
			compared++;
			if (holds < 0)
				rc = holds;
			else if (holds &&
				 !(rc = jitmap__small_left_add(&out, run, p, r->flags, false)) &&
				 !(rc = jitmap__small_left_add(&out, p, next, r->flags, true))) {
				run = next;
				*from_files += PAGE;
			}
			p = next;
		}
		if (!rc)
			rc = jitmap__small_left_add(&out, run, r->end, r->flags, r->in_file);
	}
	if (rc) {
		free(out.v);
		return rc;
	}
	free(l->v);
	*l = out;
	return 0;
}

/* NT_FILE's descriptor (`len` bytes at `d`) less the ranges `cut` (sorted): a new one
 * (malloc'd, *out_len), or NULL to keep it as it is (a descriptor this does not read, no
 * memory). Entries are split around what is taken out, their file offsets moved with them;
 * a name is repeated for each piece. */
static uint8_t *file_note_less(jitmap_byte_order order, const struct jitmap__core_left *cut,
			       size_t ncut, const uint8_t *d, size_t len, size_t *out_len)
{
	if (len < 16)
		return NULL;
	const uint64_t count = jitmap__load(d, 8, order), psz = jitmap__load(d + 8, 8, order);
	if (!psz || count > (len - 16) / 24)
		return NULL;
	const char *names = (const char *)d + 16 + count * 24, *end = (const char *)d + len;
	const char *const first = names;
	const char **name = calloc(count ? count : 1, sizeof(*name));
	for (uint64_t i = 0; name && i < count; i++) {
		const char *z = names < end ? memchr(names, 0, (size_t)(end - names)) : NULL;
		if (!z) {
			free(name);
			return NULL;
		}
		name[i] = names;
		names = z + 1;
	}
	/* At most count + ncut pieces, each name at most ncut + 1 times. */
	const size_t cap = 16 + (count + ncut) * 24;
	const size_t names_cap = (size_t)(names - first) * (ncut + 1);
	uint8_t *o = name ? malloc(cap + names_cap) : NULL;
	size_t used = 16, nused = 0, npieces = 0;
	for (uint64_t i = 0; o && i < count; i++) {
		const uint8_t *e = d + 16 + i * 24;
		const uint64_t lo = jitmap__load(e, 8, order), hi = jitmap__load(e + 8, 8, order);
		const uint64_t pg = jitmap__load(e + 16, 8, order);
		uint64_t at = lo;
		size_t k = JITMAP_UPPER_BOUND(cut, ncut, start, lo);
		for (k = k ? k - 1 : 0;; k++) {
			const bool in = k < ncut && cut[k].start < hi;
			const uint64_t stop = in ? (cut[k].start > at ? cut[k].start : at) : hi;
			if (stop > at && used + 24 <= cap) {
				jitmap__store(o + used, at, 8, order);
				jitmap__store(o + used + 8, stop, 8, order);
				jitmap__store(o + used + 16, pg + (at - lo) / psz, 8, order);
				used += 24;
				const size_t nl = strlen(name[i]) + 1;
				memcpy(o + cap + nused, name[i], nl);
				nused += nl;
				npieces++;
			}
			if (!in)
				break;
			if (cut[k].end > at)
				at = cut[k].end < hi ? cut[k].end : hi;
		}
	}
	if (o) {
		jitmap__store(o, npieces, 8, order);
		jitmap__store(o + 8, psz, 8, order);
		memmove(o + used, o + cap, nused);
		*out_len = used + nused;
	}
	free(name);
	return o;
}

uint8_t *jitmap__small_notes_less(jitmap_byte_order order, const struct jitmap__small_left *l,
				  const uint8_t *b, size_t len, size_t *out_len)
{
	struct jitmap__core_left *cut = calloc(l->n ? l->n : 1, sizeof(*cut));
	size_t ncut = 0;
	for (size_t i = 0; cut && i < l->n; i++)
		if (jitmap__small_file_refused(l->v[i].flags) && !l->v[i].in_file)
			cut[ncut++] = l->v[i];
	uint8_t *o = NULL;
	if (ncut)
		qsort(cut, ncut, sizeof(*cut), jitmap__core_left_cmp);
	for (size_t at = 0; ncut && at + 12 <= len;) {
		const uint64_t namesz = jitmap__load(b + at, 4, order);
		const uint64_t descsz = jitmap__load(b + at + 4, 4, order);
		const uint64_t type = jitmap__load(b + at + 8, 4, order);
		const uint64_t desc = at + 12 + ((namesz + 3) & ~UINT64_C(3));
		if (desc > len || descsz > len - desc)
			break;
		const uint64_t next = desc + ((descsz + 3) & ~UINT64_C(3));
		if (type == NT_FILE && namesz == 5 && !memcmp(b + at + 12, "CORE", 5)) {
			size_t dlen;
			uint8_t *d = file_note_less(order, cut, ncut, b + desc, (size_t)descsz, &dlen);
			const size_t tail = next < len ? len - (size_t)next : 0;
			const size_t dpad = (dlen + 3) & ~(size_t)3;
			o = d ? calloc(1, (size_t)desc + dpad + tail) : NULL;
			if (o) {
				memcpy(o, b, (size_t)desc);
				jitmap__store(o + at + 4, dlen, 4, order);
				memcpy(o + desc, d, dlen);
				memcpy(o + desc + dpad, b + next, tail);
				*out_len = (size_t)desc + dpad + tail;
			}
			free(d);
			break;
		}
		at = (size_t)next;
	}
	free(cut);
	return o;
}
