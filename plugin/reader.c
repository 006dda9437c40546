/* reader.c: jitmap-reader.so, GDB's JIT reader plugin for jitmap.
 *
 * GDB hands the reader every JIT entry (an in-memory ELF image) and asks it to unwind every
 * frame of the process. The reader is a thin client of libjitmap's process model
 * (jitmap/process.h): each entry's image is handed in (jitmap_process_add_image), and the model
 * owns what is known of it: its code and functions, which image holds a PC
 * (jitmap_process_image_code_at, O(log n): GDB asks about every frame, its own and foreign
 * ones), its stackmap (the live section at sh_addr, a section rewritten in place, one
 * jitmap_index over all), its CFI (the live .eh_frame, read once), and when it is stale (GDB
 * never says when an entry goes away: its code changed or became unreadable, or a newer
 * image's code overlaps it). The reader keeps what is GDB's:
 *   - which entries to claim: it declines every entry whose functions GDB's own ELF reader
 *     names (GDB then has their names, found by name too, their DWARF and CFI), and claims
 *     (one symtab, one block per function) only those it would leave as `?? ()`, or, when
 *     asked (JITMAP_READER_CLAIM_AUTO, for fast registration), every entry without DWARF;
 *   - unwinding frames in JIT code with libjitmap's unwinder (CFI, the stackmap's frame size
 *     at record PCs, the frame-pointer chain), except where GDB's DWARF unwinder already has
 *     the CFI of a declined entry: GDB's registers, whether a frame is the innermost, and
 *     per-frame caches;
 *   - the API for the Python commands (jitmap-reader-api.h), its notes and counters.
 *
 * GDB 13 traps (gdb-jit-interface.md §2, docs/gdb.md): block_open with a NULL name crashes
 * GDB; so does a NULL from gdb_init_reader; reg_get with a DWARF number the architecture does
 * not map aborts it; reg_set frees the value with its `free` member without checking for NULL,
 * and supplies the bytes even when `defined` is 0 (registers we do not set are the ones GDB
 * shows as <not saved>). Nothing read from the inferior is trusted: the process model checks
 * images and sections, and the reader's own reads are bounded.
 */
#include "internal.h"

/* GDB refuses a reader without this symbol; the build hides symbols by default. */
#pragma GCC visibility push(default)
GDB_DECLARE_GPL_COMPATIBLE_READER
#pragma GCC visibility pop

/* Everything the plugin keeps (internal.h says what, and for how long): the one mutable
 * variable of the plugin's files. GDB's callbacks reach it through priv_data, the exported API
 * here. */
static struct jitmap_plugin__session session;

/* The session while GDB has a reader loaded, else NULL: what every exported call asks. */
static struct jitmap_plugin__session *loaded(void)
{
	return session.open ? &session : NULL;
}

/* -- GDB's callbacks -- */

/* Whether to give GDB the symbols of `e` ourselves (jitmap-reader-api.h, Claiming). Never
 * an image with DWARF: GDB's reader gives its variables and lines. By default, only an image
 * whose functions GDB's own reader would leave unnamed: a claimed image's functions are found
 * by address only, so claiming one that GDB names loses `break NAME`, `info symbol` and
 * `info functions` for it (worse than GDB alone). */
static bool want_claim(int mode, const struct jitmap_plugin__entry *e, size_t nfns)
{
	if (e->debug_info || !nfns)
		return false;
	switch (mode) {
	case JITMAP_READER_CLAIM_AUTO:
		return true;
	case JITMAP_READER_CLAIM_UNNAMED:
		return !e->gdb_names;
	default:
		return false;
	}
}

static enum gdb_status read_debug_info(struct gdb_reader_funcs *self,
				       struct gdb_symbol_callbacks *cb, void *memory,
				       long memory_sz)
{
	struct jitmap_plugin__session *s = self->priv_data;
	s->target_read = cb->target_read;
	s->stats.reads++;
	const uint64_t serial = ++s->next_serial;
	if (!memory || memory_sz <= 0 || (uint64_t)memory_sz > MAX_IMAGE_SIZE) {
		s->stats.rejected++;
		plugin_note(s, NULL, "entry %" PRIu64 ": image size %ld out of range: left to GDB",
			    serial, memory_sz);
		return GDB_FAIL;
	}
	struct jitmap_plugin__entry e = {.serial = serial};
	const jitmap_image *img = NULL;
	const jitmap_code_function *fns = NULL;
	size_t nfns = 0;
	char why[160] = "";
	if (plugin_hand_in(s, &e, memory, (size_t)memory_sz, &img, &fns, &nfns, why, sizeof(why))) {
		s->stats.rejected++;
		plugin_note(s, NULL, "entry %" PRIu64 " (%ld bytes) left to GDB: %s", serial,
			    memory_sz, why);
		jitmap_process_remove_image(s->proc, e.id);
		plugin_forget_dropped(s);
		return GDB_FAIL;
	}
	plugin_forget_dropped(s); /* the entries its code replaced */
	/* Which architecture GDB debugs: what the debugger said (jitmap_reader_set_arch), else
	 * the host's. Never an image's: its e_machine is only the JIT's word, and an image of
	 * another architecture is neither claimed nor unwound, since its DWARF numbers may be
	 * ones the debugged architecture does not map and GDB aborts when a reader asks for such
	 * a register (an x86-64 process registering an image whose e_machine says s390x or
	 * AArch64: tests/fuzz/fuzz_plugin, told and untold). */
	const jitmap_arch arch = jitmap_image_arch(img);
	e.claimed = arch == s->roles.arch && want_claim(s->claim_mode, &e, nfns);
	if (plugin_add_entry(s, &e)) {
		s->stats.rejected++;
		plugin_note(s, NULL, "entry %" PRIu64 ": out of memory", serial);
		jitmap_process_remove_image(s->proc, e.id);
		return GDB_FAIL;
	}
	if (arch != s->roles.arch)
		plugin_note(s, plugin_entry_of(s, e.id),
			    "entry %" PRIu64 ": architecture %s, but GDB debugs %s%s: left to GDB",
			    serial, jitmap_arch_name(arch), jitmap_arch_name(s->roles.arch),
			    s->arch_told ? "" : " (the reader was not told otherwise: jitmap.gdb "
						"tells it)");
	if (!e.claimed) {
		s->stats.declined++;
		return GDB_FAIL;
	}
	s->stats.claimed++;
	/* GDB copies the names; the process model keeps the functions while the image is. */
	char name[MAX_NAME + 1];
	const char *file = jitmap_image_file_name(img);
	if (file)
		snprintf(name, sizeof(name), "%s", file);
	struct gdb_object *obj = cb->object_open(cb);
	struct gdb_symtab *st = cb->symtab_open(cb, obj, file ? name : NULL);
	for (size_t i = 0; i < nfns; i++) {
		snprintf(name, sizeof(name), "%s", fns[i].name);
		cb->block_open(cb, st, NULL, fns[i].lo, fns[i].hi, name);
	}
	cb->symtab_close(cb, st);
	cb->object_close(cb, obj);
	return GDB_SUCCESS;
}

static void destroy(struct gdb_reader_funcs *self)
{
	struct jitmap_plugin__session *s = self->priv_data;
	plugin_forget_all(s);
	free(s->entries);
	jitmap_process_free(s->proc);
	/* The library's span stays (the claim mode, the last note); the next gdb_init_reader
	 * sets the rest afresh. */
	s->entries = NULL;
	s->nentries = s->entries_cap = 0;
	s->proc = NULL;
	s->open = false;
}

/* A new reader: GDB's gdb_init_reader, at jit-reader-load (jitmap.gdb loads it by path). GDB
 * 13 dereferences what it returns without checking for NULL (the header allows NULL): refuse
 * with the session's `refused`, whose version 0 GDB rejects, reporting "Reader version does
 * not match GDB version." and staying usable. */
__attribute__((visibility("default"))) struct gdb_reader_funcs *gdb_init_reader(void)
{
	struct jitmap_plugin__session *s = &session;
	if (s->open)
		return &s->refused; /* GDB has one reader at a time: the session is its */
	jitmap_byte_order host_order;
	const jitmap_arch host = jitmap_arch_host(&host_order);
	if (!plugin_set_roles(s, host, host_order == JITMAP_ORDER_BIG))
		return &s->refused;
	const jitmap_target target = {.ctx = s, .read_mem = plugin_process_read};
	/* The library's limits: the Python commands share this process. GDB never says when
	 * an entry goes: a new image over old code replaces it. */
	JITMAP_OPTS(const jitmap_process_opts, opts, .flags = JITMAP_PROCESS_REPLACE_IMAGES);
	jitmap_process *proc = jitmap_process_new(&target, &opts);
	if (!proc)
		return &s->refused;
	/* One reader's span afresh (the last note cleared); the library's span kept. */
	const char *dbg = getenv("JITMAP_DEBUG");
	*s = (struct jitmap_plugin__session){
		.claim_mode = s->claim_mode,
		.claim_env_read = s->claim_env_read,
		.readers = s->readers + 1,
		.open = true,
		.funcs = {
			.reader_version = GDB_READER_INTERFACE_VERSION,
			.priv_data = s,
			.read = read_debug_info,
			.unwind = plugin_unwind_frame,
			.get_frame_id = plugin_get_frame_id,
			.destroy = destroy,
		},
		.roles = s->roles,
		.debug = dbg && *dbg && strcmp(dbg, "0"),
		.gen = 1,
		.proc = proc,
	};
	/* The claim mode is read from the environment by the first reader only, and kept
	 * across jit-reader-unload and jit-reader-load, so that they re-read the entries under
	 * the mode the user set. */
	if (!s->claim_env_read) {
		const char *claim = getenv("JITMAP_READER_CLAIM");
		s->claim_env_read = true;
		s->claim_mode = JITMAP_READER_CLAIM_UNNAMED;
		if (claim && !strcmp(claim, "never"))
			s->claim_mode = JITMAP_READER_CLAIM_NEVER;
		else if (claim && !strcmp(claim, "auto"))
			s->claim_mode = JITMAP_READER_CLAIM_AUTO;
		else if (claim && *claim && strcmp(claim, "unnamed"))
			plugin_note(s, NULL, "JITMAP_READER_CLAIM=%.64s is not unnamed, auto or "
				    "never: ignored", claim);
	}
	return &s->funcs;
}

/* -- The API for the Python side (jitmap-reader-api.h) -- */

int jitmap_reader_api_version(void)
{
	return JITMAP_READER_API_VERSION;
}

int jitmap_reader_loaded(void)
{
	return loaded() != NULL;
}

int jitmap_reader_invalidate(int how)
{
	struct jitmap_plugin__session *s = loaded();
	if (!s)
		return -ENODEV;
	switch (how) {
	case JITMAP_READER_RECHECK:
		s->gen++;
		jitmap_process_recheck(s->proc);
		return 0;
	case JITMAP_READER_FORGET:
		plugin_forget_all(s);
		s->gen++;
		jitmap_process_recheck(s->proc);
		return 0;
	default:
		return -EINVAL;
	}
}

int jitmap_reader_set_arch(int arch, int big_endian)
{
	struct jitmap_plugin__session *s = loaded();
	if (!s)
		return -ENODEV;
	const jitmap_arch was = s->roles.arch;
	const bool was_big = s->roles.big_endian;
	if (!plugin_set_roles(s, (jitmap_arch)arch, big_endian != 0))
		return -ENOTSUP;
	s->arch_told = true;
	if (s->roles.arch != was || s->roles.big_endian != was_big)
		s->epoch++; /* cached frames hold registers read with the old roles */
	return 0;
}

int jitmap_reader_set_claim(int mode)
{
	struct jitmap_plugin__session *s = loaded();
	if (!s)
		return -ENODEV;
	if (mode != JITMAP_READER_CLAIM_AUTO && mode != JITMAP_READER_CLAIM_NEVER &&
	    mode != JITMAP_READER_CLAIM_UNNAMED)
		return -EINVAL;
	const int old = s->claim_mode;
	s->claim_mode = mode;
	return old;
}

int jitmap_reader_get_claim(void)
{
	const struct jitmap_plugin__session *s = loaded();
	return s ? s->claim_mode : -ENODEV;
}

size_t jitmap_reader_num_entries(void)
{
	const struct jitmap_plugin__session *s = loaded();
	return s ? s->nentries : 0;
}

int jitmap_reader_entry_info(size_t i, int parse, jitmap_reader_entry *out)
{
	struct jitmap_plugin__session *s = loaded();
	if (!s)
		return -ENODEV;
	if (i >= s->nentries)
		return -ENOENT;
	const uint64_t id = s->entries[i].id;
	if (parse) {
		plugin_entry_stackmap(s, &s->entries[i]);
		plugin_forget_dropped(s);
	}
	const struct jitmap_plugin__entry *e = plugin_entry_of(s, id);
	jitmap_source_info si = {.sz = sizeof(si)};
	const jitmap_image_range *code;
	size_t ncode, nfns;
	if (!e || jitmap_process_image(s->proc, id, &si) || !si.image ||
	    jitmap_process_image_code(s->proc, id, &code, &ncode, NULL, &nfns) || !ncode)
		return -ENOENT; /* dropped as stale */
	uint64_t sm_addr = 0, sm_size = 0, eh_addr = 0, eh_size = 0;
	size_t df_len;
	const bool has_sm = !jitmap_image_stackmap_section(si.image, &sm_addr, &sm_size) && sm_size;
	const bool has_eh = !jitmap_image_eh_frame(si.image, &eh_addr, &eh_size) && eh_size;
	const bool has_df = jitmap_image_debug_frame(si.image, &df_len) != NULL;
	*out = (jitmap_reader_entry){
		.serial = e->serial,
		.code_start = code[0].lo,
		.code_end = code[ncode - 1].hi,
		.stackmap_address = has_sm ? sm_addr : 0,
		.stackmap_size = has_sm ? sm_size : 0,
		.eh_frame_address = has_eh ? eh_addr : 0,
		.eh_frame_size = has_eh ? eh_size : 0,
		.num_functions = nfns > UINT32_MAX ? UINT32_MAX : (uint32_t)nfns,
		.flags = (e->claimed ? JITMAP_READER_ENTRY_CLAIMED : 0) |
			 (e->debug_info ? JITMAP_READER_ENTRY_DEBUG_INFO : 0) |
			 (has_sm ? JITMAP_READER_ENTRY_STACKMAP : 0) |
			 (has_eh || has_df ? JITMAP_READER_ENTRY_CFI : 0) |
			 (e->gdb_names ? JITMAP_READER_ENTRY_GDB_NAMES : 0),
		.stackmap = e->sm,
		.problem = e->problem,
	};
	return 0;
}

jitmap_process *jitmap_reader_process(uint64_t *serial)
{
	const struct jitmap_plugin__session *s = loaded();
	if (serial)
		*serial = s ? s->readers : 0;
	return s ? s->proc : NULL;
}

jitmap_index *jitmap_reader_index(void)
{
	struct jitmap_plugin__session *s = loaded();
	if (!s)
		return NULL;
	for (size_t i = 0; i < s->nentries;) {
		const uint64_t id = s->entries[i].id;
		plugin_entry_stackmap(s, &s->entries[i]);
		plugin_forget_dropped(s); /* it alone, if stale: the next one takes its place */
		if (i < s->nentries && s->entries[i].id == id)
			i++;
	}
	return jitmap_process_index(s->proc);
}

int jitmap_reader_lookup(uint64_t pc, const jitmap_stackmap **stackmap, const char **name,
			 uint64_t *start, uint64_t *end)
{
	struct jitmap_plugin__session *s = loaded();
	if (!s)
		return -ENODEV;
	jitmap_code_info code;
	const int rc = jitmap_process_image_code_at(s->proc, pc, &code);
	plugin_forget_dropped(s);
	struct jitmap_plugin__entry *e = rc ? NULL : plugin_entry_of(s, code.image_id);
	if (!e)
		return -ENOENT;
	/* Its code was looked at: reading its stackmap drops nothing. Not read when not asked
	 * for: the perf-map unwinder asks about every frame only whether an entry holds it. */
	if (stackmap)
		*stackmap = plugin_entry_stackmap(s, e);
	if (name)
		*name = code.function;
	if (start)
		*start = code.function_lo;
	if (end)
		*end = code.function_hi;
	return 0;
}

size_t jitmap_reader_find_function(const char *name, uint64_t *starts, size_t max)
{
	struct jitmap_plugin__session *s = loaded();
	size_t n = 0;
	if (!s || !name)
		return 0;
	for (size_t i = 0; i < s->nentries; i++) {
		const jitmap_code_function *fns;
		size_t nfns;
		if (jitmap_process_image_code(s->proc, s->entries[i].id, NULL, NULL, &fns, &nfns))
			continue;
		for (size_t k = 0; k < nfns; k++) {
			if (strcmp(fns[k].name, name))
				continue;
			if (n < max)
				starts[n] = fns[k].lo;
			n++;
		}
	}
	return n;
}

const char *jitmap_reader_last_error(void)
{
	return session.last_error;
}

int jitmap_reader_guess(uint64_t pc, uint64_t sp, char *why, size_t len)
{
	const struct jitmap_plugin__session *s = loaded();
	if (!s)
		return 0;
	for (unsigned i = 0; i < GUESS_SLOTS; i++) {
		const struct jitmap_plugin__guess *g = &s->guesses[i];
		if (g->why[0] && g->gen == s->gen && g->epoch == s->epoch &&
		    g->pc == pc && g->sp == sp) {
			if (why && len)
				snprintf(why, len, "%s", g->why);
			return 1;
		}
	}
	return 0;
}

int jitmap_reader_get_stats(jitmap_reader_stats *out)
{
	const struct jitmap_plugin__session *s = loaded();
	if (!s)
		return -ENODEV;
	*out = s->stats;
	return 0;
}
