/* fuzz_process: libFuzzer target for the process model over target memory the fuzzer writes:
 * the JIT descriptor walk (jitmap_jit_list_read: cycles, wild pointers, huge sizes; how far
 * each list was read, jitmap_process_descriptor), the
 * images opened from target memory (jitmap_image_open_target), their live stackmap sections,
 * the registered copies MCJIT's case falls back to, and the staleness rules across scans.
 *
 * Input: [control][mutate at: 2 bytes][xor][memory...]. The memory is mapped at BASE; the
 * descriptor is at BASE (and, when control bit 0 is set, a second one at BASE + 0x20 is walked
 * too). Control bit 1 makes the process lazy (JITMAP_PROCESS_LAZY: stackmaps read when their
 * code is asked for), bit 2 makes images handed in replace those whose code they overlap
 * (JITMAP_PROCESS_REPLACE_IMAGES); every scan asks jitmap_process_code_at about each image's
 * code ranges (a lazy scan's images only glanced at: the ranges their bytes give, which opens
 * them), and for the CFI of the code found (jitmap_process_code_cfi: the live .eh_frame
 * read from the fuzzed memory). Reads outside the memory fail. When the read counter reaches "mutate at", one byte of
 * the memory is XORed (entries changing between reads, as in a running JIT). The process is
 * scanned three times, flushed and scanned again; every source's stackmap is walked like
 * fuzz_parse's, and the shared index must find each record at its PC. Then the images found
 * are handed in as GDB's JIT reader is given them (jitmap_process_add_image), rechecked,
 * scanned beside (the GDB plugin and the commands share one process: the same section is one
 * parse, indexed once) and removed; an image whose code changed (the mutated byte) or went is
 * dropped as stale, and must be said so once (jitmap_process_take_dropped); the images' code and
 * functions (jitmap_process_image_code) must be sorted, disjoint and found by
 * jitmap_process_image_code_at.
 *
 * Seeds (make-corpus.sh, process_seeds.py): the seed objects laid out as LLVM's JIT registers
 * them (sh_addr of every loaded section patched to where the image sits), two entries.
 */
#include "fuzz_common.h"
#include "jitmap/process.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BASE UINT64_C(0x10000)
#define MAX_CODE_SPAN (UINT64_C(1) << 36) /* process.h: a larger section is not code */

struct mem {
	uint8_t *bytes;
	size_t len;
	unsigned reads, mutate_at;
	uint8_t xor;
};

static int mem_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	struct mem *m = ctx;
	if (++m->reads == m->mutate_at && m->len)
		m->bytes[(m->mutate_at * 7919u) % m->len] ^= m->xor;
	if (addr < BASE || addr - BASE > m->len || len > m->len - (addr - BASE)) {
		snprintf(why, why_len, "0x%" PRIx64 " (%zu bytes) is outside the fuzzed memory", addr,
			 len);
		return -EFAULT;
	}
	memcpy(buf, m->bytes + (addr - BASE), len);
	return 0;
}

#define MAX_IMAGES 8

/* The index holds each distinct stackmap once: count records over distinct ones. */
static size_t count_once(const jitmap_stackmap *sm, const jitmap_stackmap **seen, size_t *nseen)
{
	for (size_t i = 0; i < *nseen; i++)
		if (seen[i] == sm)
			return 0;
	seen[(*nseen)++] = sm;
	size_t n = 0;
	for (size_t r = 0; r < jitmap_stackmap_num_records(sm); r++)
		n += jitmap_record_function(sm, jitmap_stackmap_record(sm, r)) != NULL;
	CHECK(n == jitmap_stackmap_num_records_with_pc(sm));
	return n;
}

/* Every source of the last scan, and the images handed in (`ids`). */
static void check_scan(jitmap_process *p, const uint64_t *ids, size_t nids)
{
	const size_t n = jitmap_process_num_sources(p);
	const jitmap_stackmap *seen[2 * 64 + MAX_IMAGES];
	size_t nseen = 0, records = 0;
	jitmap_source_info si = {.sz = sizeof(si)};
	CHECK(jitmap_process_source(p, n, &si) == -ERANGE);
	CHECK(jitmap_process_source_problem(p, n, 0) == NULL);
	for (size_t k = 0; k < jitmap_process_num_problems(p); k++)
		CHECK(jitmap_process_problem(p, k) && jitmap_process_problem(p, k)[0]);
	CHECK(jitmap_process_problem(p, jitmap_process_num_problems(p)) == NULL);
	/* Each descriptor walked once; a count only for a list read to its end, else why; every
	 * source came from an entry read. */
	size_t entries = 0;
	jitmap_descriptor_info d = {.sz = sizeof(d)};
	const size_t nd = jitmap_process_num_descriptors(p);
	CHECK(nd <= 2 && jitmap_process_descriptor(p, nd, &d) == -ERANGE);
	for (size_t i = 0; i < nd; i++) {
		CHECK(jitmap_process_descriptor(p, i, &d) == 0 && d.where && d.where[0]);
		CHECK(d.complete ? d.readable && !d.problem : d.problem && d.problem[0]);
		CHECK(d.readable || d.num_entries == 0);
		entries += d.num_entries;
	}
	CHECK(n <= entries);
	for (size_t i = 0; i < n; i++) {
		CHECK(jitmap_process_source(p, i, &si) == 0);
		CHECK(si.kind == JITMAP_SOURCE_JIT && si.name && si.name[0]);
		for (size_t k = 0; k < si.num_problems; k++)
			CHECK(jitmap_process_source_problem(p, i, k)[0]);
		CHECK(jitmap_process_source_problem(p, i, si.num_problems) == NULL);
		for (size_t k = 0; k < si.num_notes; k++)
			CHECK(jitmap_process_source_note(p, i, k)[0]);
		CHECK(jitmap_process_source_note(p, i, si.num_notes) == NULL);
		if (si.image) {
			(void)jitmap_image_symbolize(si.image, si.symfile_addr, NULL);
			(void)jitmap_image_num_symbols(si.image);
		}
		if (!si.stackmap)
			continue;
		fuzz_walk_stackmap(si.stackmap);
		records += count_once(si.stackmap, seen, &nseen);
		const size_t nr = jitmap_stackmap_num_records(si.stackmap);
		for (size_t r = 0; r < nr && r < 16; r++) {
			const jitmap_record *rec = jitmap_stackmap_record(si.stackmap, r);
			/* Only records with a function have a PC (version 1 blobs with several
			 * functions have none): those are the index's. */
			if (!jitmap_record_function(si.stackmap, rec))
				continue;
			jitmap_hit hit;
			CHECK(jitmap_index_lookup(jitmap_process_index(p),
						  jitmap_record_pc(si.stackmap, rec), &hit, 1) >= 1);
		}
	}
	for (size_t i = 0; i < nids; i++)
		if (jitmap_process_image(p, ids[i], &si) == 0 && si.stackmap)
			records += count_once(si.stackmap, seen, &nseen);
	CHECK(jitmap_index_num_records(jitmap_process_index(p)) == records);
}

static const jitmap_target *g_target; /* the fuzzed memory */

/* A lazy scan's image not opened yet (only glanced at): the code its bytes say it has, asked
 * for, which opens it (model/images.c, jitmap__open_glanced). Memory may have changed since
 * the scan, so the code need not be found; what is found must be consistent. */
static void check_glanced(jitmap_process *p, const jitmap_source_info *si)
{
	jitmap_error err;
	jitmap_image *img = jitmap_image_open_target(g_target, si->symfile_addr, si->symfile_size,
						     JITMAP_IMAGE_SKIP_STACKMAP, &err);
	for (size_t k = 0; img && k < jitmap_image_num_code_ranges(img) && k < 8; k++) {
		const jitmap_image_range *r = jitmap_image_code_range(img, k);
		const uint64_t pcs[2] = {r->lo, r->hi - 1};
		for (int e = 0; e < 2 && r->lo < r->hi; e++) {
			jitmap_code_info ci;
			if (jitmap_process_code_at(p, pcs[e], &ci) != 0)
				continue;
			CHECK(ci.lo <= pcs[e] && pcs[e] < ci.hi && ci.source);
			CHECK(!ci.function_hi || (ci.function_lo <= pcs[e] && pcs[e] < ci.function_hi));
		}
	}
	jitmap_image_free(img);
}

/* The code at each end of every image's code ranges: found, inside the range returned, with
 * the function (if any) inside its own range. */
static void check_code(jitmap_process *p)
{
	jitmap_source_info si = {.sz = sizeof(si)};
	for (size_t i = 0; i < jitmap_process_num_sources(p) && i < 16; i++) {
		if (jitmap_process_source(p, i, &si) == 0 && !si.image && si.symfile_size &&
		    si.symfile_size <= (1 << 20) && !si.num_problems)
			check_glanced(p, &si);
		if (jitmap_process_source(p, i, &si) || !si.image)
			continue;
		const size_t n = jitmap_image_num_code_ranges(si.image);
		for (size_t k = 0; k < n && k < 8; k++) {
			const jitmap_image_range *r = jitmap_image_code_range(si.image, k);
			const uint64_t pcs[2] = {r->lo, r->hi - 1};
			for (int e = 0; e < 2 && r->lo < r->hi && r->hi - r->lo <= MAX_CODE_SPAN; e++) {
				jitmap_code_info ci;
				CHECK(jitmap_process_code_at(p, pcs[e], &ci) == 0);
				CHECK(ci.lo <= pcs[e] && pcs[e] < ci.hi && ci.image && ci.source);
				CHECK(!ci.function_hi ||
				      (ci.function_lo <= pcs[e] && pcs[e] < ci.function_hi));
				CHECK(!ci.function == !ci.function_hi);
				if (ci.stackmap)
					fuzz_walk_stackmap(ci.stackmap);
				const char *why;
				const jitmap_cfi *cfi = jitmap_process_code_cfi(p, &ci, &why);
				CHECK(!cfi || !why);
				CHECK(!why || why[0]);
				if (cfi)
					(void)jitmap_cfi_covers(cfi, pcs[e], NULL, NULL);
				CHECK(jitmap_process_code_cfi(p, &ci, NULL) == cfi); /* read once */
			}
		}
	}
	jitmap_code_info ci;
	(void)jitmap_process_code_at(p, 0, &ci);
	(void)jitmap_process_code_at(p, UINT64_MAX, &ci);
}

static void scan_beside(jitmap_process *p, bool second, const uint64_t *ids, size_t nids)
{
	CHECK(jitmap_process_scan_begin(p) == 0);
	CHECK(jitmap_process_scan_descriptor(p, BASE, "fuzz") == 0);
	if (second)
		CHECK(jitmap_process_scan_descriptor(p, BASE + 0x20, NULL) == 0);
	CHECK(jitmap_process_scan_end(p) == 0);
	check_code(p);
	check_scan(p, ids, nids);
}

static void scan(jitmap_process *p, bool second)
{
	scan_beside(p, second, NULL, 0);
}

/* What the process dropped since the last call: each a known image, said once, with why;
 * gone from `ids` (kept in order). */
static void take_dropped(jitmap_process *p, uint64_t *ids, size_t *n, bool replace)
{
	jitmap_dropped_image d[4];
	size_t k;
	while ((k = jitmap_process_take_dropped(p, d, 4)) > 0) {
		CHECK(k <= 4);
		for (size_t j = 0; j < k; j++) {
			CHECK(d[j].why && d[j].why[0]);
			CHECK(replace || !d[j].replaced);
			jitmap_source_info si = {.sz = sizeof(si)};
			CHECK(jitmap_process_image(p, d[j].id, &si) == -ENOENT);
			size_t at = 0;
			while (at < *n && ids[at] != d[j].id)
				at++;
			CHECK(at < *n);
			memmove(&ids[at], &ids[at + 1], (*n - at - 1) * sizeof(*ids));
			(*n)--;
		}
	}
}

/* An image's code and functions: sorted, disjoint, functions inside the code, each found
 * by jitmap_process_image_code_at (when its image answers for it: another image of the same
 * code may, without JITMAP_PROCESS_REPLACE_IMAGES). */
static void check_image_code(jitmap_process *p, uint64_t id)
{
	const jitmap_image_range *r;
	const jitmap_code_function *f;
	size_t nr, nf;
	CHECK(jitmap_process_image_code(p, id, &r, &nr, &f, &nf) == 0);
	for (size_t i = 0; i < nr; i++)
		CHECK(r[i].lo < r[i].hi && (!i || r[i - 1].hi < r[i].lo));
	for (size_t i = 0; i < nf; i++) {
		CHECK(f[i].lo < f[i].hi && (!i || f[i - 1].hi <= f[i].lo) && f[i].name);
		size_t k = 0;
		while (k < nr && !(r[k].lo <= f[i].lo && f[i].hi <= r[k].hi))
			k++;
		CHECK(k < nr);
	}
	for (size_t i = 0; i < nf && i < 8; i++) {
		jitmap_code_info ci;
		if (jitmap_process_image_code_at(p, f[i].lo, &ci) || ci.image_id != id)
			continue;
		CHECK(ci.function == f[i].name && ci.function_lo == f[i].lo && ci.function_hi == f[i].hi);
		(void)jitmap_process_code_cfi(p, &ci, NULL);
	}
}

/* The images the last scan found, handed in as GDB's JIT reader is given them (the bytes, not
 * the entry): their stackmaps, a recheck, removal. */
static void hand_in(jitmap_process *p, struct mem *m, bool second, bool replace)
{
	uint64_t ids[MAX_IMAGES];
	size_t n = 0;
	jitmap_source_info si = {.sz = sizeof(si)};
	for (size_t i = 0; i < jitmap_process_num_sources(p) && n < MAX_IMAGES; i++) {
		CHECK(jitmap_process_source(p, i, &si) == 0);
		if (si.symfile_addr < BASE || si.symfile_addr - BASE > m->len ||
		    si.symfile_size > m->len - (si.symfile_addr - BASE))
			continue;
		CHECK(jitmap_process_add_image(p, m->bytes + (si.symfile_addr - BASE),
					       (size_t)si.symfile_size, NULL, &ids[n]) == 0);
		n++;
		take_dropped(p, ids, &n, replace);
	}
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < n;) {
			const uint64_t id = ids[i];
			const jitmap_stackmap *sm = jitmap_process_image_stackmap(p, id);
			take_dropped(p, ids, &n, replace);
			if (i >= n || ids[i] != id) {
				CHECK(!sm); /* stale: dropped */
				continue;
			}
			i++;
			CHECK(jitmap_process_image(p, id, &si) == 0);
			CHECK((!sm || si.stackmap == sm) && si.name && si.name[0]);
			for (size_t k = 0; k < si.num_problems; k++)
				CHECK(jitmap_process_image_problem(p, id, k)[0]);
			CHECK(jitmap_process_image_problem(p, id, si.num_problems) == NULL);
			check_image_code(p, id);
			take_dropped(p, ids, &n, replace);
			if (!sm)
				continue;
			fuzz_walk_stackmap(sm);
			const size_t nr = jitmap_stackmap_num_records(sm);
			for (size_t r = 0; r < nr && r < 16; r++) {
				const jitmap_record *rec = jitmap_stackmap_record(sm, r);
				jitmap_hit hit;
				if (jitmap_record_function(sm, rec))
					CHECK(jitmap_index_lookup(jitmap_process_index(p),
								  jitmap_record_pc(sm, rec), &hit,
								  1) >= 1);
			}
		}
		scan_beside(p, second, ids, n);
		take_dropped(p, ids, &n, replace);
		jitmap_process_recheck(p);
	}
	uint64_t kept[MAX_IMAGES];
	size_t nkept = 0;
	for (size_t i = 0; i < n; i++) {
		if (i % 2) {
			kept[nkept++] = ids[i];
			continue;
		}
		CHECK(jitmap_process_remove_image(p, ids[i]) == 0);
		CHECK(jitmap_process_remove_image(p, ids[i]) == -ENOENT);
		CHECK(jitmap_process_image_stackmap(p, ids[i]) == NULL);
	}
	for (size_t i = 0; i < nkept; i++)
		(void)jitmap_process_image_stackmap(p, kept[i]);
	take_dropped(p, kept, &nkept, replace);
	scan_beside(p, second, kept, nkept);
	take_dropped(p, kept, &nkept, replace);
	/* The list gone (the program exited): the images keep what they share. */
	CHECK(jitmap_process_scan_begin(p) == 0);
	CHECK(jitmap_process_scan_end(p) == 0);
	check_scan(p, kept, nkept);
	for (size_t i = 0; i < nkept; i++) {
		const jitmap_stackmap *sm = jitmap_process_image_stackmap(p, kept[i]);
		if (sm)
			fuzz_walk_stackmap(sm);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4)
		return 0;
	struct mem m = {
		.len = size - 4,
		.mutate_at = (unsigned)data[1] | (unsigned)data[2] << 8,
		.xor = data[3],
	};
	m.bytes = malloc(m.len ? m.len : 1);
	CHECK(m.bytes);
	memcpy(m.bytes, data + 4, m.len);
	const jitmap_target t = {&m, NULL, mem_read};
	g_target = &t;
	/* Small limits: the fuzzer must not make us allocate what it cannot give. */
	JITMAP_OPTS(const jitmap_process_opts, opts, .max_entries = 64, .max_image = 1 << 20,
		    .max_section = 1 << 20,
		    .flags = ((data[0] & 2) ? JITMAP_PROCESS_LAZY : 0) |
			     ((data[0] & 4) ? JITMAP_PROCESS_REPLACE_IMAGES : 0));
	jitmap_process *p = jitmap_process_new(&t, &opts);
	CHECK(p);
	const bool second = data[0] & 1;
	for (int round = 0; round < 3; round++)
		scan(p, second);
	jitmap_process_flush(p);
	scan(p, second);
	hand_in(p, &m, second, data[0] & 4);
	jitmap_process_free(p);
	free(m.bytes);
	return 0;
}
