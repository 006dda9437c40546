/* entries.c: the plugin's register roles, its notes, GDB's target memory, and the entries GDB
 * handed the reader (each an image handed in to the process model): found by ID, claimed or
 * declined, forgotten. */
#include "internal.h"

/* Take the register roles of `arch`: false (the roles unchanged) when its table lacks one. */
bool plugin_set_roles(struct jitmap_plugin__session *s, jitmap_arch arch, bool big_endian)
{
	const int sp = jitmap_reg_sp(arch), fp = jitmap_reg_fp(arch), pc = jitmap_reg_pc(arch);
	/* The PC is the last of the core registers where it is numbered among them (x86-64's
	 * rip, AArch64's pc), apart from them elsewhere (s390x's PSW address, 65). */
	const int ncore = (int)jitmap_arch_num_core_regs(arch);
	const int ngpr = ncore - (pc >= 0 && pc == ncore - 1 ? 1 : 0);
	int first_clobber = -1;
	for (int n = 0; n < ngpr && first_clobber < 0; n++)
		if (!jitmap_reg_is_callee_saved(arch, (unsigned)n))
			first_clobber = n;
	if (sp < 0 || fp < 0 || pc < 0 || ngpr <= 0 || ngpr > MAX_GPR || first_clobber < 0)
		return false;
	s->roles = (struct jitmap_plugin__roles){
		.arch = arch,
		.big_endian = big_endian,
		.sp = sp,
		.fp = fp,
		.pc = pc,
		.ngpr = ngpr,
		.first_clobber = first_clobber,
	};
	return true;
}

void plugin_note(struct jitmap_plugin__session *s, struct jitmap_plugin__entry *e,
		 const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->last_error, sizeof(s->last_error), fmt, ap);
	va_end(ap);
	if (e)
		snprintf(e->problem, sizeof(e->problem), "%s", s->last_error);
	if (s->debug)
		fprintf(stderr, "jitmap-reader: %s\n", s->last_error);
}

/* -- Target memory -- */

int plugin_target_read(struct jitmap_plugin__session *s, uint64_t addr, void *buf, size_t len)
{
	if (!s->target_read)
		return -ENODEV;
	if (len && addr + len - 1 < addr)
		return -EFAULT;
	uint8_t *p = buf;
	while (len) {
		const int n = len > READ_CHUNK ? READ_CHUNK : (int)len;
		if (s->target_read(addr, p, n) != GDB_SUCCESS)
			return -EFAULT;
		addr += (uint64_t)n;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The unwinder's reads: through a small line cache (struct jitmap_plugin__mem_line), falling
 * back to the exact read when a whole line cannot be read (the end of a mapping). */
int plugin_unwind_read_mem(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			   size_t why_len)
{
	struct jitmap_plugin__session *s = ctx;
	(void)why;
	(void)why_len;
	if (len > MEM_LINE / 2 || addr > UINT64_MAX - MEM_LINE)
		return plugin_target_read(s, addr, buf, len);
	for (unsigned i = 0; i < 2; i++) {
		const struct jitmap_plugin__mem_line *l = &s->lines[i];
		if (l->valid && addr >= l->base && addr + len <= l->base + MEM_LINE) {
			memcpy(buf, l->bytes + (addr - l->base), len);
			return 0;
		}
	}
	struct jitmap_plugin__mem_line *l = &s->lines[s->line_next++ % 2];
	l->base = addr & ~(uint64_t)(MEM_LINE / 2 - 1); /* addr + len fits: len <= MEM_LINE / 2 */
	l->valid = plugin_target_read(s, l->base, l->bytes, MEM_LINE) == 0;
	if (!l->valid)
		return plugin_target_read(s, addr, buf, len);
	memcpy(buf, l->bytes + (addr - l->base), len);
	return 0;
}

/* The process model's reads (its jitmap_target). */
int plugin_process_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why,
			size_t why_len)
{
	const int rc = plugin_target_read(ctx, addr, buf, len);
	if (rc)
		snprintf(why, why_len, "%s",
			 rc == -ENODEV ? "GDB has not given the reader a way to read memory yet"
				       : "GDB cannot read that memory");
	return rc;
}

/* -- Entries -- */

struct jitmap_plugin__entry *plugin_entry_of(struct jitmap_plugin__session *s, uint64_t id)
{
	const size_t lo = JITMAP_LOWER_BOUND(s->entries, s->nentries, id, id);
	return lo < s->nentries && s->entries[lo].id == id ? &s->entries[lo] : NULL;
}

static void remove_entry(struct jitmap_plugin__session *s, struct jitmap_plugin__entry *e)
{
	const size_t at = (size_t)(e - s->entries);
	memmove(e, e + 1, (s->nentries - at - 1) * sizeof(*e));
	s->nentries--;
	s->epoch++;
}

/* Forget the entries whose images the process model dropped: stale (their code changed or
 * cannot be read any more), or replaced by a newer image over the same code. */
void plugin_forget_dropped(struct jitmap_plugin__session *s)
{
	jitmap_dropped_image d[8];
	size_t n;
	while ((n = jitmap_process_take_dropped(s->proc, d, 8)) > 0) {
		for (size_t i = 0; i < n; i++) {
			struct jitmap_plugin__entry *e = plugin_entry_of(s, d[i].id);
			if (!e)
				continue;
			if (d[i].replaced)
				s->stats.replaced++;
			else
				s->stats.dropped++;
			plugin_note(s, NULL, "entry %" PRIu64 " %s: dropped (%s)", e->serial,
			     d[i].replaced ? "was replaced" : "is stale", d[i].why);
			remove_entry(s, e);
		}
	}
}

void plugin_forget_all(struct jitmap_plugin__session *s)
{
	plugin_forget_dropped(s);
	while (s->nentries) {
		s->stats.dropped++;
		jitmap_process_remove_image(s->proc, s->entries[--s->nentries].id);
	}
	plugin_forget_dropped(s); /* nothing left to say of them */
	s->epoch++;
}

/* Whether GDB's own ELF reader names some function of the image's code `code` (sorted,
 * disjoint). GDB's ELF reader (elfread.c) makes an absolute symbol mst_abs, which its PC
 * lookups skip, and a symbol of a section without SHF_EXECINSTR (BFD's SEC_CODE) a data
 * symbol: neither names code, in bt or for break NAME. An ET_REL symbol whose value is an
 * address GDB places outside its section. [checked: GDB 13] */
static bool gdb_names(const jitmap_image *img, const jitmap_image_range *code, size_t ncode)
{
	const size_t n = jitmap_image_num_symbols(img);
	for (size_t i = 0; i < n; i++) {
		jitmap_image_symbol_info s = {.sz = sizeof(s)};
		if (jitmap_image_symbol(img, i, &s) || !(s.flags & JITMAP_SYMBOL_IN_CODE) ||
		    (s.flags & (JITMAP_SYMBOL_ABSOLUTE | JITMAP_SYMBOL_VALUE_IS_ADDRESS)))
			continue;
		const size_t lo = JITMAP_UPPER_BOUND(code, ncode, lo, s.address);
		if (lo && s.address < code[lo - 1].hi)
			return true;
	}
	return false;
}

/* Hand GDB's image to the process model and take what the claim needs: its image, its
 * functions. Returns 0, or a negative errno with the reason in `why` (e->id is set when the
 * model kept the image). */
int plugin_hand_in(struct jitmap_plugin__session *s, struct jitmap_plugin__entry *e,
		   const void *image, size_t size, const jitmap_image **img,
		   const jitmap_code_function **fns, size_t *nfns, char *why, size_t why_len)
{
	char where[48];
	snprintf(where, sizeof(where), "JIT entry %" PRIu64, e->serial);
	const int rc = jitmap_process_add_image(s->proc, image, size, where, &e->id);
	jitmap_source_info si = {.sz = sizeof(si)};
	if (rc || jitmap_process_image(s->proc, e->id, &si) || !si.image) {
		const char *p = rc ? NULL : jitmap_process_image_problem(s->proc, e->id, 0);
		snprintf(why, why_len, "%.150s", p ? p : jitmap_strerror(rc ? rc : -EINVAL));
		return rc ? rc : -EINVAL;
	}
	const jitmap_image_range *code;
	size_t ncode;
	if (jitmap_process_image_code(s->proc, e->id, &code, &ncode, fns, nfns)) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	if (!ncode) {
		snprintf(why, why_len, "no executable section placed in memory");
		return -EINVAL;
	}
	*img = si.image;
	e->debug_info = jitmap_image_has_debug_info(si.image);
	e->gdb_names = gdb_names(si.image, code, ncode);
	return 0;
}

int plugin_add_entry(struct jitmap_plugin__session *s, const struct jitmap_plugin__entry *e)
{
	if (s->nentries == s->entries_cap) {
		const size_t cap = s->entries_cap ? 2 * s->entries_cap : 64;
		struct jitmap_plugin__entry *v = realloc(s->entries, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->entries = v;
		s->entries_cap = cap;
	}
	s->entries[s->nentries++] = *e; /* the newest id: the array stays sorted */
	s->epoch++;
	return 0;
}

/* The entry's stackmap as the process model has it now (read again after a recheck when the
 * model's rules say so). May drop the entry as stale when its code was not looked at since
 * the last recheck: plugin_forget_dropped after it, and find the entry again. */
const jitmap_stackmap *plugin_entry_stackmap(struct jitmap_plugin__session *s,
					     struct jitmap_plugin__entry *e)
{
	const jitmap_stackmap *sm = jitmap_process_image_stackmap(s->proc, e->id);
	if (sm != e->sm) {
		e->sm = sm;
		s->epoch++;
	}
	const char *problem = jitmap_process_image_problem(s->proc, e->id, 0);
	if (problem && strcmp(problem, e->problem))
		plugin_note(s, e, "%s", problem);
	return sm;
}

/* The CFI of the entry's image (read once by the process model), saying why there is none. */
const jitmap_cfi *plugin_entry_cfi(struct jitmap_plugin__session *s,
				   struct jitmap_plugin__entry *e, const jitmap_code_info *code)
{
	const char *why;
	const jitmap_cfi *cfi = jitmap_process_code_cfi(s->proc, code, &why);
	if (!cfi && why && strcmp(why, e->problem))
		plugin_note(s, e, "%s", why);
	return cfi;
}

/* The entry's code at `addr`, when `addr` is its code. */
bool plugin_entry_code_at(struct jitmap_plugin__session *s, const struct jitmap_plugin__entry *e,
			  uint64_t addr, jitmap_code_info *out)
{
	return jitmap_process_image_code_at(s->proc, addr, out) == 0 && out->image_id == e->id;
}
