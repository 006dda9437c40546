/* breakpad.c: Breakpad symbol files for JIT code (jitmap/breakpad.h): the identifiers, the
 * records a caller adds, the unwinding rules as STACK CFI, and the file's text with the
 * records of an older file for the same module merged in. breakpad_file.c reads that older
 * file and writes the new one into the store.
 *
 * The format is what Breakpad's reader (src/processor/basic_source_line_resolver.cc) and its
 * CFI walkers (stackwalker_amd64.cc, stackwalker_arm64.cc, cfi_frame_info.cc) accept, as
 * dump_syms writes it (src/common/module.cc). Its reader keeps the first of two overlapping
 * FUNC, line or STACK CFI INIT ranges and drops the other silently (RangeMap::StoreRange),
 * so overlaps are resolved here, where "later wins" can be said.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>

#include "../common/strbuf.h"
#include "breakpad_records.h"

/* -- Identifiers -- */

int jitmap_breakpad_debug_id(const uint8_t *id, size_t len, char out[34])
{
	if (out)
		out[0] = '\0';
	if (!id || !len || !out)
		return -EINVAL;
	uint8_t g[16] = {0};
	memcpy(g, id, len < 16 ? len : 16);
	/* MDGUID {u32 data1; u16 data2, data3; u8 data4[8]} read from the CodeView bytes on a
	 * little-endian host and printed "%08X%04X%04X" + 8 x "%02X", then the age "%x"
	 * (minidump.cc, MinidumpModule::debug_identifier): the first three fields come out
	 * byte-reversed. */
	static const uint8_t order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
	static const char hex[] = "0123456789ABCDEF";
	for (unsigned i = 0; i < 16; i++) {
		out[2 * i] = hex[g[order[i]] >> 4];
		out[2 * i + 1] = hex[g[order[i]] & 15];
	}
	out[32] = '0';
	out[33] = '\0';
	return 0;
}

/* FNV-1a, 128 bits, in two 64-bit halves (no __int128 on 32-bit hosts): the prime is
 * 2^88 + 0x13b, so h * prime = h * 0x13b + (h << 88). */
void jitmap_breakpad_code_id(const void *code, size_t len, uint8_t out[16])
{
	uint64_t hi = UINT64_C(0x6c62272e07bb0142), lo = UINT64_C(0x62b821756295c58d);
	const uint8_t *p = code;
	for (size_t i = 0; p && i < len; i++) {
		lo ^= p[i];
		const uint64_t a = (lo & 0xffffffffu) * 0x13b, b = (lo >> 32) * 0x13b;
		const uint64_t low = a + (b << 32);
		const uint64_t carry = (b >> 32) + (low < a);
		hi = hi * 0x13b + carry + (lo << 24);
		lo = low;
	}
	for (unsigned i = 0; i < 8; i++) {
		out[i] = (uint8_t)(hi >> (56 - 8 * i));
		out[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
	}
}

/* The frame a return address belongs to is the call's: each walker backs up into the call
 * instruction before it looks anything up (x86-64 by a byte, its calls being of any length;
 * AArch64 by its one instruction's 4 bytes). */
int jitmap_breakpad_caller_pc(jitmap_arch arch, uint64_t ra, uint64_t *pc)
{
	const uint64_t back = arch == JITMAP_ARCH_X86_64 ? 1 : arch == JITMAP_ARCH_AARCH64 ? 4 : 0;
	if (!back)
		return -ENOTSUP;
	if (!pc || ra < back)
		return -EINVAL;
	*pc = ra - back;
	return 0;
}

/* -- Records -- */

int jitmap__bp_add_func(struct jitmap__bp_records *r, const struct jitmap__bp_func *f)
{
	if (jitmap__grow(&r->funcs, &r->cap_funcs, r->num_funcs + 1, sizeof(*r->funcs)))
		return -ENOMEM;
	r->funcs[r->num_funcs++] = *f;
	return 0;
}

int jitmap__bp_add_line(struct jitmap__bp_records *r, const struct jitmap__bp_line *l)
{
	if (jitmap__grow(&r->lines, &r->cap_lines, r->num_lines + 1, sizeof(*r->lines)))
		return -ENOMEM;
	r->lines[r->num_lines++] = *l;
	return 0;
}

int jitmap__bp_add_cfi(struct jitmap__bp_records *r, const struct jitmap__bp_cfi *c)
{
	if (jitmap__grow(&r->cfis, &r->cap_cfis, r->num_cfis + 1, sizeof(*r->cfis)))
		return -ENOMEM;
	r->cfis[r->num_cfis++] = *c;
	return 0;
}

/* A name as one field that ends its line: control characters (a newline would end the
 * record, and Breakpad's reader splits lines at \r and \n) become spaces, and leading and
 * trailing spaces go (its tokenizer would drop the leading ones). In place; returns `s`. */
char *jitmap__bp_clean(char *s)
{
	for (char *c = s; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = ' ';
	char *b = s;
	while (*b == ' ')
		b++;
	size_t n = strlen(b);
	while (n && b[n - 1] == ' ')
		n--;
	memmove(s, b, n);
	s[n] = '\0';
	return s;
}

static char *clean_copy(const char *name)
{
	char *c = strdup(name);
	if (c && !*jitmap__bp_clean(c)) {
		free(c);
		errno = EINVAL;
		return NULL;
	}
	return c;
}

/* [addr, addr + size) relative to the base, or false when it starts below the base or
 * wraps. */
static bool relative(const jitmap_breakpad_sym *s, uint64_t addr, uint64_t size, uint64_t *rel)
{
	if (addr < s->base || size > UINT64_MAX - addr)
		return false;
	*rel = addr - s->base;
	return true;
}

int jitmap_breakpad_sym_func(jitmap_breakpad_sym *s, uint64_t addr, uint64_t size,
			     const char *name)
{
	struct jitmap__bp_func f = {.size = size, .is_public = size == 0};
	if (!s || !name || !relative(s, addr, size, &f.addr))
		return -EINVAL;
	if (!(f.name = clean_copy(name)))
		return -errno;
	f.prio = JITMAP__BP_NEW + s->added++;
	int rc = jitmap__bp_add_func(&s->recs, &f);
	if (rc)
		free(f.name);
	return rc;
}

int jitmap_breakpad_sym_line(jitmap_breakpad_sym *s, uint64_t addr, uint64_t size,
			     const char *file, unsigned line)
{
	struct jitmap__bp_line l = {.size = size, .line = line};
	if (!s || !file || !size || !relative(s, addr, size, &l.addr))
		return -EINVAL;
	if (!(l.file = clean_copy(file)))
		return -errno;
	l.prio = JITMAP__BP_NEW + s->added++;
	int rc = jitmap__bp_add_line(&s->recs, &l);
	if (rc)
		free(l.file);
	return rc;
}

/* -- Rules as STACK CFI --
 *
 * The names Breakpad's CFI walkers give a frame's registers (the tables in
 * stackwalker_amd64.cc, cfi_register_map_, and stackwalker_arm64.cc,
 * GetCallerByCFIFrameInfo), by DWARF number: x86-64's are variables of its postfix
 * evaluator, which begin with '$'; AArch64's have none. */
static const char *const x86_64_regs[] = {
	"$rax", "$rdx", "$rcx", "$rbx", "$rsi", "$rdi", "$rbp", "$rsp", "$r8",
	"$r9",  "$r10", "$r11", "$r12", "$r13", "$r14", "$r15", "$rip",
};
static const char *const arm64_regs[] = {
	"x0",  "x1",  "x2",  "x3",  "x4",  "x5",  "x6",  "x7",  "x8",  "x9",  "x10",
	"x11", "x12", "x13", "x14", "x15", "x16", "x17", "x18", "x19", "x20", "x21",
	"x22", "x23", "x24", "x25", "x26", "x27", "x28", "x29", "x30", "sp",  "pc",
};

static const char *reg_name(jitmap_arch arch, unsigned reg)
{
	if (arch == JITMAP_ARCH_X86_64 && reg < sizeof(x86_64_regs) / sizeof(x86_64_regs[0]))
		return x86_64_regs[reg];
	if (arch == JITMAP_ARCH_AARCH64 && reg < sizeof(arm64_regs) / sizeof(arm64_regs[0]))
		return arm64_regs[reg];
	return NULL;
}

/* One place as a postfix expression after "NAME: ". The offsets are decimal: the evaluator
 * reads literals with istream >> (postfix_evaluator-inl.h), a leading '-' allowed. */
static bool put_place(struct jitmap__buf *b, jitmap_arch arch, const jitmap_unwind_saved *p)
{
	switch (p->where) {
	case JITMAP_UNWIND_AT_CFA:
		jitmap__buf_printf(b, ".cfa %" PRId64 " + ^", p->off);
		return true;
	case JITMAP_UNWIND_CFA_PLUS:
		jitmap__buf_printf(b, ".cfa %" PRId64 " +", p->off);
		return true;
	case JITMAP_UNWIND_IN_REG: {
		const char *from = reg_name(arch, p->from);
		if (!from)
			return false;
		jitmap__buf_puts(b, from);
		return true;
	}
	}
	return false;
}

/* The rules after "STACK CFI INIT ADDR SIZE ": `.cfa:` first, which the others read, then
 * `.ra:` (both required: a record without them is ignored, cfi_frame_info.cc), then the
 * saved registers in the rule's order. Malloc'd, or NULL with errno EINVAL (a register
 * without a name, a place out of range, a register twice) or ENOMEM. */
static char *render_rule(jitmap_arch arch, const jitmap_unwind_rule *rule)
{
	struct jitmap__buf b = {0};
	const char *cfa = reg_name(arch, rule->cfa_reg);
	bool ok = cfa && rule->num_saved <= JITMAP_UNWIND_RULE_MAX_SAVED;
	if (ok) {
		jitmap__buf_printf(&b, ".cfa: %s %" PRId64 " + .ra: ", cfa, rule->cfa_off);
		ok = put_place(&b, arch, &rule->ra);
	}
	uint64_t seen[2] = {0};
	for (unsigned i = 0; ok && i < rule->num_saved; i++) {
		const jitmap_unwind_saved *sv = &rule->saved[i];
		const char *name = reg_name(arch, sv->reg);
		ok = name && !((seen[sv->reg / 64] >> (sv->reg % 64)) & 1);
		if (ok) {
			seen[sv->reg / 64] |= UINT64_C(1) << (sv->reg % 64);
			jitmap__buf_printf(&b, " %s: ", name);
			ok = put_place(&b, arch, sv);
		}
	}
	if (!ok) {
		jitmap__buf_free(&b);
		errno = EINVAL;
		return NULL;
	}
	return jitmap__buf_finish(&b);
}

int jitmap_breakpad_sym_cfi(jitmap_breakpad_sym *s, uint64_t addr, uint64_t size,
			    const jitmap_unwind_rule *rule)
{
	struct jitmap__bp_cfi c = {.size = size};
	if (!s || !rule || !size || !relative(s, addr, size, &c.addr))
		return -EINVAL;
	if (!(c.rules = render_rule(s->arch, rule)))
		return -errno;
	c.prio = JITMAP__BP_NEW + s->added++;
	int rc = jitmap__bp_add_cfi(&s->recs, &c);
	if (rc)
		free(c.rules);
	return rc;
}

/* -- The object -- */

jitmap_breakpad_sym *jitmap_breakpad_sym_new(jitmap_arch arch, const char *name,
					     const uint8_t *id, size_t id_len, uint64_t base)
{
	if (!name || !id || !id_len || id_len > JITMAP__BP_MAX_ID) {
		errno = EINVAL;
		return NULL;
	}
	if (arch != JITMAP_ARCH_X86_64 && arch != JITMAP_ARCH_AARCH64) {
		errno = ENOTSUP;
		return NULL;
	}
	/* The base name as Breakpad's PathnameStripper::File takes it: after the last '/' or
	 * '\\'. It names a folder of the store, so no control character, and not "." or "..". */
	const char *slash = strrchr(name, '/'), *back = strrchr(name, '\\');
	const char *bn = slash && (!back || slash > back) ? slash + 1 : back ? back + 1 : name;
	bool ok = *bn && strcmp(bn, ".") && strcmp(bn, "..") && strlen(bn) <= JITMAP__BP_MAX_NAME;
	for (const char *c = bn; ok && *c; c++)
		ok = (unsigned char)*c >= 0x20 && *c != 0x7f;
	if (!ok) {
		errno = EINVAL;
		return NULL;
	}
	jitmap_breakpad_sym *s = calloc(1, sizeof(*s));
	if (!s || !(s->name = strdup(bn))) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->arch = arch;
	s->base = base;
	memcpy(s->id, id, id_len);
	s->id_len = id_len;
	jitmap_breakpad_debug_id(id, id_len, s->debug_id);
	return s;
}

void jitmap__bp_records_free(struct jitmap__bp_records *r, bool owned)
{
	if (owned) {
		for (size_t i = 0; i < r->num_funcs; i++)
			free(r->funcs[i].name);
		for (size_t i = 0; i < r->num_lines; i++)
			free(r->lines[i].file);
		for (size_t i = 0; i < r->num_cfis; i++)
			free(r->cfis[i].rules);
	}
	free(r->funcs);
	free(r->lines);
	free(r->cfis);
	free(r->deltas);
	memset(r, 0, sizeof(*r));
}

void jitmap_breakpad_sym_free(jitmap_breakpad_sym *s)
{
	if (!s)
		return;
	jitmap__bp_records_free(&s->recs, true);
	free(s->name);
	free(s);
}

/* -- Overlaps --
 *
 * Of records whose ranges overlap, the one of highest priority stays (new over old, later
 * over earlier): taken greedily in falling priority, a record stays when no record kept so
 * far overlaps it. The kept ranges are disjoint, so among those starting before a range's
 * end, the one starting last reaches furthest: one look at it says whether the range is
 * free. A Fenwick tree over the ranges in order of start finds it in O(log n). */

struct span {
	uint64_t lo, hi, prio; /* [lo, hi) */
	size_t idx;
};

static int by_lo(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int by_prio_desc(const void *a, const void *b)
{
	const struct span *x = *(const struct span *const *)a, *y = *(const struct span *const *)b;
	return x->prio > y->prio ? -1 : x->prio < y->prio;
}

/* keep[v[i].idx] set for the spans that stay. v is reordered. 0 or -ENOMEM. */
static int resolve(struct span *v, size_t n, bool *keep)
{
	if (!n)
		return 0;
	size_t *tree = calloc(n + 1, sizeof(*tree));
	struct span **order = malloc(n * sizeof(*order));
	if (!tree || !order) {
		free(tree);
		free(order);
		return -ENOMEM;
	}
	qsort(v, n, sizeof(*v), by_lo);
	for (size_t i = 0; i < n; i++)
		order[i] = &v[i];
	qsort(order, n, sizeof(*order), by_prio_desc);
	size_t top = 1;
	while (top * 2 <= n)
		top *= 2;
	for (size_t k = 0; k < n; k++) {
		const struct span *c = order[k];
		/* How many ranges start before c's end (positions 1..m), and how many of those
		 * were kept. */
		size_t lo = 0, hi = n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (v[mid].lo < c->hi)
				lo = mid + 1;
			else
				hi = mid;
		}
		size_t kept = 0;
		for (size_t i = lo; i; i -= i & -i)
			kept += tree[i];
		if (kept) {
			/* The kept-th kept position: the last kept range starting before c->hi. */
			size_t pos = 0, rest = kept;
			for (size_t step = top; step; step /= 2)
				if (pos + step <= n && tree[pos + step] < rest) {
					pos += step;
					rest -= tree[pos];
				}
			if (v[pos].hi > c->lo) /* position pos + 1, v[pos] */
				continue;
		}
		keep[c->idx] = true;
		for (size_t i = (size_t)(c - v) + 1; i <= n; i += i & -i)
			tree[i]++;
	}
	free(tree);
	free(order);
	return 0;
}

/* -- The file's text -- */

/* The kept records are held as `const void *` (one resolver for the three kinds); each is
 * converted back to its type where it is read. */
static int by_addr_func(const void *a, const void *b)
{
	const struct jitmap__bp_func *x = *(const void *const *)a, *y = *(const void *const *)b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int by_addr_line(const void *a, const void *b)
{
	const struct jitmap__bp_line *x = *(const void *const *)a, *y = *(const void *const *)b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int by_addr_cfi(const void *a, const void *b)
{
	const struct jitmap__bp_cfi *x = *(const void *const *)a, *y = *(const void *const *)b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The records that stay, sorted by address: pointers into the object's and the old file's
 * records. */
struct kept {
	const void **funcs, **lines, **cfis; /* jitmap__bp_func, _line, _cfi */
	size_t num_funcs, num_lines, num_cfis;
};

/* The records of one kind (0 FUNC and PUBLIC, 1 lines, 2 STACK CFI INIT) of sets[0] and
 * sets[1] (either may be NULL) that stay: pointers to them in *out (malloc'd, NULL when
 * none), *num of them. 0 or -ENOMEM. */
static int keep_of(const struct jitmap__bp_records *const *sets, int kind, const void ***out,
		   size_t *num)
{
	size_t n = 0;
	for (int k = 0; k < 2; k++)
		if (sets[k])
			n += kind == 0 ? sets[k]->num_funcs
			     : kind == 1 ? sets[k]->num_lines : sets[k]->num_cfis;
	*num = 0;
	*out = NULL;
	if (!n)
		return 0;
	struct span *v = malloc(n * sizeof(*v));
	const void **p = malloc(n * sizeof(*p));
	bool *keep = calloc(n, sizeof(*keep));
	int rc = -ENOMEM;
	if (!v || !p || !keep)
		goto out;
	size_t i = 0;
	for (int k = 0; k < 2; k++) {
		const struct jitmap__bp_records *r = sets[k];
		if (!r)
			continue;
		size_t m = kind == 0 ? r->num_funcs : kind == 1 ? r->num_lines : r->num_cfis;
		for (size_t j = 0; j < m; j++, i++) {
			uint64_t lo, size, prio;
			if (kind == 0) {
				const struct jitmap__bp_func *f = &r->funcs[j];
				lo = f->addr, size = f->is_public ? 1 : f->size, prio = f->prio;
				p[i] = f;
			} else if (kind == 1) {
				const struct jitmap__bp_line *l = &r->lines[j];
				lo = l->addr, size = l->size, prio = l->prio;
				p[i] = l;
			} else {
				const struct jitmap__bp_cfi *c = &r->cfis[j];
				lo = c->addr, size = c->size, prio = c->prio;
				p[i] = c;
			}
			/* A PUBLIC at the last address is one byte that cannot be said. */
			v[i] = (struct span){lo, size > UINT64_MAX - lo ? UINT64_MAX : lo + size,
					     prio, i};
		}
	}
	if ((rc = resolve(v, n, keep)))
		goto out;
	for (i = 0; i < n; i++)
		if (keep[i])
			p[(*num)++] = p[i];
	*out = p;
	p = NULL;
out:
	free(v);
	free(p);
	free(keep);
	return rc;
}

/* n pointers sorted (qsort's array may not be NULL, even for none). */
static void sort(const void **v, size_t n, int (*cmp)(const void *, const void *))
{
	if (n)
		qsort(v, n, sizeof(*v), cmp);
}

/* The FUNC of the sorted `funcs` (PUBLICs among them) that holds `addr`, or NULL. */
static const struct jitmap__bp_func *func_at(const void *const *funcs, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) { /* the first starting after addr */
		size_t mid = lo + (hi - lo) / 2;
		if (((const struct jitmap__bp_func *)funcs[mid])->addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Kept ranges are disjoint (a PUBLIC is one byte of them), so the one before it is the
	 * only candidate. */
	const struct jitmap__bp_func *f = lo ? funcs[lo - 1] : NULL;
	return f && !f->is_public && addr - f->addr < f->size ? f : NULL;
}

static void put_cfi(struct jitmap__buf *b, const struct jitmap__bp_records *old,
		    const struct jitmap__bp_cfi *c)
{
	jitmap__buf_printf(b, "STACK CFI INIT %" PRIx64 " %" PRIx64 " ", c->addr, c->size);
	jitmap__buf_puts(b, c->rules);
	jitmap__buf_puts(b, "\n");
	/* An older file's rows after its INIT record (dump_syms writes them; jitmap does not,
	 * so only an older file's records have any). */
	for (size_t d = 0; old && d < c->num_deltas; d++) {
		jitmap__buf_puts(b, "STACK CFI ");
		jitmap__buf_puts(b, old->deltas[c->first_delta + d]);
		jitmap__buf_puts(b, "\n");
	}
}

/* dump_syms' names for the architectures (src/common/linux/dump_symbols.cc); the
 * processor does not read them, a store's tools do. */
void jitmap__bp_module_line(const jitmap_breakpad_sym *s, char out[JITMAP__BP_MODULE_MAX])
{
	snprintf(out, JITMAP__BP_MODULE_MAX, "MODULE Linux %s %s %s",
		 s->arch == JITMAP_ARCH_X86_64 ? "x86_64" : "arm64", s->debug_id, s->name);
}

char *jitmap__bp_text(const jitmap_breakpad_sym *s, const struct jitmap__bp_records *old)
{
	const struct jitmap__bp_records *sets[2] = {&s->recs, old};
	struct kept k = {0};
	const char **files = NULL;
	size_t num_files = 0;
	struct jitmap__buf b = {0};
	if (keep_of(sets, 0, &k.funcs, &k.num_funcs) || keep_of(sets, 1, &k.lines, &k.num_lines) ||
	    keep_of(sets, 2, &k.cfis, &k.num_cfis))
		goto fail;
	sort(k.funcs, k.num_funcs, by_addr_func);
	sort(k.lines, k.num_lines, by_addr_line);
	sort(k.cfis, k.num_cfis, by_addr_cfi);

	/* Lines under a FUNC only; their files numbered by name, so that the same records give
	 * the same text whatever order they came in. */
	if (k.num_lines && !(files = malloc(k.num_lines * sizeof(*files))))
		goto fail;
	size_t nl = 0;
	for (size_t i = 0; i < k.num_lines; i++) {
		const struct jitmap__bp_line *l = k.lines[i];
		if (func_at(k.funcs, k.num_funcs, l->addr)) {
			k.lines[nl++] = l;
			files[num_files++] = l->file;
		}
	}
	k.num_lines = nl;
	sort((const void **)files, num_files, by_name);
	size_t nf = 0;
	for (size_t i = 0; i < num_files; i++)
		if (!nf || strcmp(files[nf - 1], files[i]))
			files[nf++] = files[i];
	num_files = nf;

	char module[JITMAP__BP_MODULE_MAX];
	jitmap__bp_module_line(s, module);
	jitmap__buf_puts(&b, module);
	jitmap__buf_puts(&b, "\nINFO CODE_ID ");
	for (size_t i = 0; i < s->id_len; i++)
		jitmap__buf_printf(&b, "%02X", s->id[i]);
	jitmap__buf_puts(&b, "\n");
	for (size_t i = 0; i < num_files; i++)
		jitmap__buf_printf(&b, "FILE %zu %s\n", i, files[i]);
	size_t li = 0;
	for (size_t i = 0; i < k.num_funcs; i++) {
		const struct jitmap__bp_func *f = k.funcs[i];
		if (f->is_public)
			continue;
		jitmap__buf_printf(&b, "FUNC %s%" PRIx64 " %" PRIx64 " 0 %s\n",
				   f->multiple ? "m " : "", f->addr, f->size, f->name);
		/* The lines left are sorted, each under the FUNC that holds it. */
		for (const struct jitmap__bp_line *l;
		     li < k.num_lines && (l = k.lines[li])->addr >= f->addr &&
		     l->addr - f->addr < f->size;
		     li++) {
			const uint64_t room = f->addr + f->size - l->addr;
			const char **file = bsearch(&l->file, files, num_files, sizeof(*files),
						    by_name);
			jitmap__buf_printf(&b, "%" PRIx64 " %" PRIx64 " %u %zu\n", l->addr,
					   l->size < room ? l->size : room, l->line,
					   (size_t)(file - files));
		}
	}
	for (size_t i = 0; i < k.num_funcs; i++) {
		const struct jitmap__bp_func *f = k.funcs[i];
		if (f->is_public)
			jitmap__buf_printf(&b, "PUBLIC %s%" PRIx64 " 0 %s\n", f->multiple ? "m " : "",
					   f->addr, f->name);
	}
	for (size_t i = 0; i < k.num_cfis; i++)
		put_cfi(&b, old, k.cfis[i]);
	free(k.funcs);
	free(k.lines);
	free(k.cfis);
	free(files);
	return jitmap__buf_finish(&b);
fail:
	free(k.funcs);
	free(k.lines);
	free(k.cfis);
	free(files);
	jitmap__buf_free(&b);
	errno = ENOMEM;
	return NULL;
}
