/* cfi.c: call frame information of one code object, read from .eh_frame and .debug_frame
 * bytes with libdwarf, without a file.
 *
 * The sections come from the debugged process (the JIT's memory manager relocates .eh_frame
 * in place, so its pc-relative FDE addresses are only right in the live copy), and are as
 * untrusted as any other target memory. libdwarf parses them, but only after our own walk
 * has checked their structure: every entry's length against the bytes left, every FDE's CIE
 * pointer against the CIEs that exist (a pointer to an FDE, such as a loop of FDEs, is
 * rejected), each CIE's version, augmentation and pointer encodings, and an FDE's size
 * against the addresses it must hold. libdwarf then sees only sections whose framing is
 * sound; what it still rejects (bad instructions) becomes a reason at unwinding time.
 *
 * libdwarf 20210528 (Debian 12) is driven through dwarf_object_init_b and the
 * Dwarf_Obj_Access_Interface of that release (libdwarf 0.x renamed these types with an `_a`
 * suffix and changed the section index to Dwarf_Unsigned: only the "libdwarf glue" section
 * below would change).
 */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <libdwarf/dwarf.h>
#include <libdwarf/libdwarf.h>

#include "internal.h"

/* Caps on untrusted sizes. A JIT object's .eh_frame is a few KiB; 64 MiB is far beyond any
 * real one and bounds the copies and the entry tables. */
#define CFI_MAX_SECTION (UINT64_C(64) << 20)
#define CFI_MAX_ENTRIES (1u << 20)
/* An FDE longer than this is not a function. */
#define CFI_MAX_FDE_RANGE (UINT64_C(1) << 30)

/* The register-rule pseudo numbers we ask libdwarf to use (libdwarf's own defaults, set
 * explicitly because they must stay above the rule table size and because libdwarf 0.x
 * changed some defaults). The initial rule of every column is "same value": the ABIs leave
 * callee-saved registers without a rule when a function does not touch them. */
#define CFI_UNDEFINED_VAL 1034
#define CFI_SAME_VAL 1035
#define CFI_CFA_COL 1436
#define ROW_CACHE 8 /* rows kept per jitmap_cfi */

/* -- The object -- */

struct cfi_section {
	const char *name;
	uint64_t addr;
	uint8_t *data;
	size_t size;
};

struct cfi_range {
	uint64_t lo, hi;
	uint64_t max_hi; /* the greatest hi of this range and every one before it */
	Dwarf_Fde fde;
};

struct jitmap_cfi {
	jitmap_arch arch;
	jitmap_byte_order order;
	struct cfi_section sec[2];
	unsigned num_sec;
	Dwarf_Obj_Access_Interface iface;
	Dwarf_Debug dbg;
	Dwarf_Cie *eh_cies, *df_cies;
	Dwarf_Fde *eh_fdes, *df_fdes;
	Dwarf_Signed eh_ncies, eh_nfdes, df_ncies, df_nfdes;
	struct cfi_range *ranges;
	size_t num_ranges;
	/* libdwarf's handles are not safe to share between threads; the public functions take
	 * a const jitmap_cfi, so the lock and the row cache it guards are the members they
	 * change. */
	pthread_mutex_t lock;
	/* The last rows asked for: a deep stack (recursion, every thread in the same code) asks
	 * for few PCs many times, and libdwarf evaluates an FDE's instructions each time. */
	struct {
		uint64_t pc;
		bool valid;
		struct jitmap__cfi_row row;
	} cache[ROW_CACHE];
	unsigned cache_next;
};

/* -- Bytes -- */

/* LEB128 within [*pos, end); at most 10 bytes. Returns 0 or -1 when truncated or too long. */
static int read_uleb(const uint8_t *p, size_t end, size_t *pos, uint64_t *out)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (*pos >= end)
			return -1;
		const uint8_t b = p[(*pos)++];
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

static int skip_leb(const uint8_t *p, size_t end, size_t *pos)
{
	uint64_t ignored;
	return read_uleb(p, end, pos, &ignored);
}

/* -- Structural validation -- */

/* DW_EH_PE_* (LSB 5.0 §10.5.1). */
enum {
	PE_ABSPTR = 0x00, PE_ULEB = 0x01, PE_UDATA2 = 0x02, PE_UDATA4 = 0x03, PE_UDATA8 = 0x04,
	PE_SLEB = 0x09, PE_SDATA2 = 0x0a, PE_SDATA4 = 0x0b, PE_SDATA8 = 0x0c,
	PE_PCREL = 0x10, PE_INDIRECT = 0x80, PE_OMIT = 0xff,
};

/* Size of a pointer in encoding `enc` (0 for LEB128, -1 for encodings we do not accept). */
static int pe_size(unsigned enc)
{
	switch (enc & 0x0f) {
	case PE_ABSPTR: return 8;
	case PE_UDATA2: case PE_SDATA2: return 2;
	case PE_UDATA4: case PE_SDATA4: return 4;
	case PE_UDATA8: case PE_SDATA8: return 8;
	case PE_ULEB: case PE_SLEB: return 0;
	default: return -1;
	}
}

struct cie_info {
	uint64_t offset;   /* where the entry starts */
	unsigned fde_ptr;  /* bytes of an FDE's initial location (and of its range) */
	bool has_z;        /* FDEs carry an augmentation data length */
};

struct walk {
	const char *name;
	const uint8_t *p;
	size_t len;        /* may shrink to end at an .eh_frame terminator */
	bool is_eh;
	jitmap_byte_order order;
	struct cie_info *cies;
	size_t num_cies, cap_cies;
	size_t num_fdes;
	jitmap_error *err;
};

/* One entry's framing: [start, start + hdr + length), its ID field at `id_pos`. */
struct entry {
	uint64_t start, end, id_pos;
	unsigned idsize;
	uint64_t id;
	bool is_cie;
};

/* Read the entry at `off`. Returns 1 with *e filled, 0 at the end of the entries (an
 * .eh_frame terminator or the section's end), or a negative errno. */
static int next_entry(struct walk *w, uint64_t off, struct entry *e)
{
	const uint64_t left = w->len - off;
	if (left == 0)
		return 0;
	if (left < 4) {
		return jitmap__fail(w->err, -EINVAL, off, "%s: %llu stray bytes after the last entry",
				    w->name, (unsigned long long)left);
	}
	uint64_t length = jitmap__load(w->p + off, 4, w->order);
	unsigned hdr = 4;
	e->idsize = 4;
	if (length == 0) {
		if (w->is_eh) {
			w->len = (size_t)off + 4; /* the terminator: what follows is not ours */
			return 0;
		}
		return jitmap__fail(w->err, -EINVAL, off, "%s: zero-length entry", w->name);
	}
	if (length == 0xffffffffu) {
		if (left < 12)
			return jitmap__fail(w->err, -EINVAL, off, "%s: truncated 64-bit length",
					    w->name);
		length = jitmap__load(w->p + off + 4, 8, w->order);
		hdr = 12;
		e->idsize = 8;
	} else if (length >= 0xfffffff0u) {
		return jitmap__fail(w->err, -EINVAL, off, "%s: reserved length value 0x%llx",
				    w->name, (unsigned long long)length);
	}
	if (length > left - hdr) {
		return jitmap__fail(w->err, -EINVAL, off,
				    "%s: entry claims %llu bytes, only %llu remain", w->name,
				    (unsigned long long)length, (unsigned long long)(left - hdr));
	}
	if (length < e->idsize) {
		return jitmap__fail(w->err, -EINVAL, off, "%s: entry of %llu bytes has no ID",
				    w->name, (unsigned long long)length);
	}
	e->start = off;
	e->end = off + hdr + length;
	e->id_pos = off + hdr;
	e->id = jitmap__load(w->p + e->id_pos, e->idsize, w->order);
	const uint64_t cie_id = w->is_eh ? 0 : (e->idsize == 4 ? 0xffffffffu : UINT64_MAX);
	e->is_cie = e->id == cie_id;
	return 1;
}

static int check_cie(struct walk *w, const struct entry *e, struct cie_info *ci)
{
	const uint8_t *p = w->p;
	const size_t end = (size_t)e->end;
	size_t pos = (size_t)(e->id_pos + e->idsize);
	const uint64_t at = e->start;

	if (pos >= end)
		return jitmap__fail(w->err, -EINVAL, at, "%s: CIE without a version", w->name);
	const unsigned version = p[pos++];
	if (!(version == 1 || version == 3 || (version == 4 && !w->is_eh))) {
		return jitmap__fail(w->err, -EINVAL, at, "%s: CIE version %u is not supported",
				    w->name, version);
	}
	const uint8_t *nul = memchr(p + pos, 0, end - pos);
	if (!nul)
		return jitmap__fail(w->err, -EINVAL, at, "%s: CIE augmentation string is not "
				    "terminated", w->name);
	const char *aug = (const char *)p + pos;
	const size_t aug_len = (size_t)(nul - (p + pos));
	pos += aug_len + 1;
	/* "" or "z" followed by the letters GCC and LLVM emit (R P L, S for signal frames, B
	 * for AArch64's B key): anything else has data we cannot skip. */
	if (aug_len > 8 || (aug_len > 0 && (aug[0] != 'z' ||
					    strspn(aug + 1, "RPLSB") != aug_len - 1))) {
		return jitmap__fail(w->err, -EINVAL, at, "%s: CIE augmentation \"%.*s\" is not "
				    "supported", w->name, (int)(aug_len > 16 ? 16 : aug_len), aug);
	}
	if (version == 4) {
		if (end - pos < 2)
			return jitmap__fail(w->err, -EINVAL, at, "%s: truncated CIE", w->name);
		if (p[pos] != 8 || p[pos + 1] != 0) {
			return jitmap__fail(w->err, -EINVAL, at, "%s: CIE address size %u, segment "
					    "size %u (8 and 0 expected)", w->name, p[pos], p[pos + 1]);
		}
		pos += 2;
	}
	uint64_t ra;
	if (skip_leb(p, end, &pos) || skip_leb(p, end, &pos))
		return jitmap__fail(w->err, -EINVAL, at, "%s: truncated CIE alignment factors",
				    w->name);
	if (version == 1) {
		if (pos >= end)
			return jitmap__fail(w->err, -EINVAL, at, "%s: truncated CIE", w->name);
		ra = p[pos++];
	} else if (read_uleb(p, end, &pos, &ra)) {
		return jitmap__fail(w->err, -EINVAL, at, "%s: truncated CIE return address column",
				    w->name);
	}
	if (ra >= JITMAP_UNWIND_MAX_REGS) {
		return jitmap__fail(w->err, -EINVAL, at, "%s: CIE return address column %llu is out "
				    "of range", w->name, (unsigned long long)ra);
	}

	ci->offset = at;
	ci->fde_ptr = 8;
	ci->has_z = aug_len > 0;
	if (!ci->has_z)
		return 0;
	uint64_t data_len;
	if (read_uleb(p, end, &pos, &data_len) || data_len > end - pos)
		return jitmap__fail(w->err, -EINVAL, at, "%s: CIE augmentation data overruns the "
				    "entry", w->name);
	const size_t data_end = pos + (size_t)data_len;
	for (size_t i = 1; i < aug_len; i++) {
		unsigned enc;
		switch (aug[i]) {
		case 'R':
			if (pos >= data_end)
				goto truncated;
			enc = p[pos++];
			/* Absolute or pc-relative only: data-, text- and function-relative
			 * addresses need bases the JIT never tells us. */
			if ((enc & 0x70) > PE_PCREL || (enc & PE_INDIRECT) || pe_size(enc) <= 0) {
				return jitmap__fail(w->err, -EINVAL, at, "%s: FDE pointer encoding "
						    "0x%02x is not supported", w->name, enc);
			}
			ci->fde_ptr = (unsigned)pe_size(enc);
			break;
		case 'P': {
			if (pos >= data_end)
				goto truncated;
			enc = p[pos++];
			const int size = pe_size(enc);
			if (size < 0)
				return jitmap__fail(w->err, -EINVAL, at, "%s: personality encoding "
						    "0x%02x is not supported", w->name, enc);
			if (size == 0 ? skip_leb(p, data_end, &pos) : (size_t)size > data_end - pos)
				goto truncated;
			pos += (size_t)size;
			break;
		}
		case 'L':
			if (pos >= data_end)
				goto truncated;
			enc = p[pos++];
			if (enc != PE_OMIT && pe_size(enc) < 0)
				return jitmap__fail(w->err, -EINVAL, at, "%s: LSDA encoding 0x%02x is "
						    "not supported", w->name, enc);
			break;
		default: /* S, B: no data */
			break;
		}
	}
	return 0;
truncated:
	return jitmap__fail(w->err, -EINVAL, at, "%s: CIE augmentation data is truncated", w->name);
}

static const struct cie_info *find_cie(const struct walk *w, uint64_t offset)
{
	const size_t lo = JITMAP_LOWER_BOUND(w->cies, w->num_cies, offset, offset);
	return lo < w->num_cies && w->cies[lo].offset == offset ? &w->cies[lo] : NULL;
}

static int check_fde(struct walk *w, const struct entry *e)
{
	uint64_t cie_off;
	if (w->is_eh) {
		/* .eh_frame: the distance back from the ID field (LSB 5.0 §10.6.1.2). */
		if (e->id > e->id_pos) {
			return jitmap__fail(w->err, -EINVAL, e->start, "%s: FDE's CIE pointer %llu "
					    "points before the section", w->name,
					    (unsigned long long)e->id);
		}
		cie_off = e->id_pos - e->id;
	} else {
		cie_off = e->id; /* .debug_frame: an offset into the section */
	}
	const struct cie_info *ci = find_cie(w, cie_off);
	if (!ci) {
		return jitmap__fail(w->err, -EINVAL, e->start, "%s: FDE's CIE pointer leads to "
				    "offset %llu, where no CIE starts", w->name,
				    (unsigned long long)cie_off);
	}
	size_t pos = (size_t)(e->id_pos + e->idsize);
	const size_t end = (size_t)e->end;
	if (end - pos < 2 * (size_t)ci->fde_ptr) {
		return jitmap__fail(w->err, -EINVAL, e->start, "%s: FDE too short for its address "
				    "range", w->name);
	}
	pos += 2 * (size_t)ci->fde_ptr;
	uint64_t data_len;
	if (ci->has_z && (read_uleb(w->p, end, &pos, &data_len) || data_len > end - pos)) {
		return jitmap__fail(w->err, -EINVAL, e->start, "%s: FDE augmentation data "
				    "overruns the entry", w->name);
	}
	w->num_fdes++;
	return 0;
}

/* Walk one section twice: CIEs first (a .debug_frame FDE may point forward), then FDEs. */
static int validate_section(struct walk *w)
{
	struct entry e;
	int rc;
	size_t count = 0;

	for (uint64_t off = 0; (rc = next_entry(w, off, &e)) == 1; off = e.end) {
		if (++count > CFI_MAX_ENTRIES) {
			return jitmap__fail(w->err, -EINVAL, off, "%s: more than %u entries", w->name,
					    CFI_MAX_ENTRIES);
		}
		if (!e.is_cie)
			continue;
		if (w->num_cies == w->cap_cies) {
			const size_t cap = w->cap_cies ? 2 * w->cap_cies : 8;
			struct cie_info *n = realloc(w->cies, cap * sizeof(*n));
			if (!n)
				return jitmap__fail(w->err, -ENOMEM, off, "out of memory");
			w->cies = n;
			w->cap_cies = cap;
		}
		rc = check_cie(w, &e, &w->cies[w->num_cies]);
		if (rc)
			return rc;
		w->num_cies++;
	}
	if (rc < 0)
		return rc;
	for (uint64_t off = 0; (rc = next_entry(w, off, &e)) == 1; off = e.end) {
		if (!e.is_cie && (rc = check_fde(w, &e)) != 0)
			return rc;
	}
	return rc;
}

/* The byte order of a section: the one in which its first length fits in the section (in
 * the wrong order a length is 256 times larger or more); `fallback` when both or neither
 * fit. */
static jitmap_byte_order guess_order(const uint8_t *p, size_t len, jitmap_byte_order fallback)
{
	if (len < 4)
		return fallback;
	const uint64_t le = jitmap__load(p, 4, JITMAP_ORDER_LITTLE), be = jitmap__load(p, 4, JITMAP_ORDER_BIG);
	const bool le_fits = le <= len - 4 || le == 0xffffffffu;
	const bool be_fits = be <= len - 4 || be == 0xffffffffu;
	if (le_fits != be_fits)
		return le_fits ? JITMAP_ORDER_LITTLE : JITMAP_ORDER_BIG;
	return fallback;
}

/* -- libdwarf glue -- */

/* Section 0 is ELF's null section: libdwarf skips index 0, so ours start at 1. */
static int obj_section_info(void *obj, Dwarf_Half index, Dwarf_Obj_Access_Section *out,
			    int *error)
{
	const jitmap_cfi *cfi = obj;
	(void)error;
	memset(out, 0, sizeof(*out));
	if (index == 0) {
		out->name = "";
		return DW_DLV_OK;
	}
	if (index > cfi->num_sec)
		return DW_DLV_NO_ENTRY;
	const struct cfi_section *s = &cfi->sec[index - 1];
	out->addr = s->addr;
	out->type = 1; /* SHT_PROGBITS */
	out->size = s->size;
	out->name = s->name;
	return DW_DLV_OK;
}

static Dwarf_Endianness obj_byte_order(void *obj)
{
	const jitmap_cfi *cfi = obj;
	return cfi->order == JITMAP_ORDER_BIG ? DW_OBJECT_MSB : DW_OBJECT_LSB;
}

static Dwarf_Small obj_length_size(void *obj)
{
	(void)obj;
	return 4;
}

static Dwarf_Small obj_pointer_size(void *obj)
{
	(void)obj;
	return 8; /* every architecture jitmap knows is 64-bit */
}

static Dwarf_Unsigned obj_section_count(void *obj)
{
	const jitmap_cfi *cfi = obj;
	return cfi->num_sec + 1;
}

static int obj_load_section(void *obj, Dwarf_Half index, Dwarf_Small **data, int *error)
{
	jitmap_cfi *cfi = obj;
	(void)error;
	if (index == 0 || index > cfi->num_sec)
		return DW_DLV_NO_ENTRY;
	*data = cfi->sec[index - 1].data;
	return DW_DLV_OK;
}

static const Dwarf_Obj_Access_Methods obj_methods = {
	.get_section_info = obj_section_info,
	.get_byte_order = obj_byte_order,
	.get_length_size = obj_length_size,
	.get_pointer_size = obj_pointer_size,
	.get_section_count = obj_section_count,
	.load_section = obj_load_section,
	.relocate_a_section = NULL, /* the bytes are already relocated */
};

/* Copy libdwarf's message for `derr` into `buf` and free the error. */
static void take_dwarf_error(Dwarf_Debug dbg, Dwarf_Error derr, char *buf, size_t len)
{
	const char *msg = derr ? dwarf_errmsg(derr) : NULL;
	snprintf(buf, len, "%s", msg ? msg : "libdwarf gave no reason");
	if (derr)
		dwarf_dealloc_error(dbg, derr);
}

static int cmp_range(const void *a, const void *b)
{
	const struct cfi_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static int add_ranges(jitmap_cfi *cfi, Dwarf_Fde *fdes, Dwarf_Signed n, size_t *cap,
		      jitmap_error *err)
{
	for (Dwarf_Signed i = 0; i < n; i++) {
		Dwarf_Addr lo = 0;
		Dwarf_Unsigned flen = 0, fde_bytes_len = 0;
		Dwarf_Ptr fde_bytes = NULL;
		Dwarf_Off cie_off = 0, fde_off = 0;
		Dwarf_Signed cie_index = 0;
		Dwarf_Error derr = NULL;
		if (dwarf_get_fde_range(fdes[i], &lo, &flen, &fde_bytes, &fde_bytes_len, &cie_off,
					&cie_index, &fde_off, &derr) != DW_DLV_OK) {
			char msg[128];
			take_dwarf_error(cfi->dbg, derr, msg, sizeof(msg));
			return jitmap__fail(err, -EINVAL, 0, "FDE %lld: %s", (long long)i, msg);
		}
		/* Empty, wrapping or absurd ranges cover nothing worth unwinding. */
		if (flen == 0 || flen > CFI_MAX_FDE_RANGE || lo + flen < lo)
			continue;
		if (cfi->num_ranges == *cap) {
			const size_t ncap = *cap ? 2 * *cap : 16;
			struct cfi_range *r = realloc(cfi->ranges, ncap * sizeof(*r));
			if (!r)
				return jitmap__fail(err, -ENOMEM, 0, "out of memory");
			cfi->ranges = r;
			*cap = ncap;
		}
		cfi->ranges[cfi->num_ranges++] = (struct cfi_range){lo, lo + flen, 0, fdes[i]};
	}
	return 0;
}

static int open_dwarf(jitmap_cfi *cfi, jitmap_error *err)
{
	Dwarf_Error derr = NULL;
	char msg[160];

	cfi->iface.object = cfi;
	cfi->iface.methods = &obj_methods;
	int rc = dwarf_object_init_b(&cfi->iface, NULL, NULL, DW_GROUPNUMBER_ANY, &cfi->dbg,
				     &derr);
	if (rc != DW_DLV_OK) {
		cfi->dbg = NULL;
		take_dwarf_error(NULL, derr, msg, sizeof(msg));
		return jitmap__fail(err, rc == DW_DLV_NO_ENTRY ? -ENOENT : -EINVAL, 0,
				    "libdwarf: %s", rc == DW_DLV_NO_ENTRY ? "no frame section" : msg);
	}
	dwarf_set_frame_rule_table_size(cfi->dbg, JITMAP_UNWIND_MAX_REGS);
	dwarf_set_frame_rule_initial_value(cfi->dbg, CFI_SAME_VAL);
	dwarf_set_frame_same_value(cfi->dbg, CFI_SAME_VAL);
	dwarf_set_frame_undefined_value(cfi->dbg, CFI_UNDEFINED_VAL);
	dwarf_set_frame_cfa_value(cfi->dbg, CFI_CFA_COL);

	for (unsigned s = 0; s < cfi->num_sec; s++) {
		const bool eh = !strcmp(cfi->sec[s].name, ".eh_frame");
		derr = NULL;
		rc = eh ? dwarf_get_fde_list_eh(cfi->dbg, &cfi->eh_cies, &cfi->eh_ncies,
						&cfi->eh_fdes, &cfi->eh_nfdes, &derr)
			: dwarf_get_fde_list(cfi->dbg, &cfi->df_cies, &cfi->df_ncies, &cfi->df_fdes,
					     &cfi->df_nfdes, &derr);
		if (rc == DW_DLV_ERROR) {
			take_dwarf_error(cfi->dbg, derr, msg, sizeof(msg));
			return jitmap__fail(err, -EINVAL, 0, "libdwarf: %s: %s", cfi->sec[s].name,
					    msg);
		}
	}

	size_t cap = 0;
	rc = add_ranges(cfi, cfi->eh_fdes, cfi->eh_fdes ? cfi->eh_nfdes : 0, &cap, err);
	if (!rc)
		rc = add_ranges(cfi, cfi->df_fdes, cfi->df_fdes ? cfi->df_nfdes : 0, &cap, err);
	if (rc)
		return rc;
	if (cfi->num_ranges == 0)
		return jitmap__fail(err, -ENOENT, 0, "no FDE covers any code");
	qsort(cfi->ranges, cfi->num_ranges, sizeof(cfi->ranges[0]), cmp_range);
	uint64_t max_hi = 0;
	for (size_t i = 0; i < cfi->num_ranges; i++) {
		if (cfi->ranges[i].hi > max_hi)
			max_hi = cfi->ranges[i].hi;
		cfi->ranges[i].max_hi = max_hi;
	}
	return 0;
}

/* -- Public -- */

void jitmap_cfi_free(jitmap_cfi *cfi)
{
	if (!cfi)
		return;
	if (cfi->dbg) {
		if (cfi->eh_fdes)
			dwarf_fde_cie_list_dealloc(cfi->dbg, cfi->eh_cies, cfi->eh_ncies,
						   cfi->eh_fdes, cfi->eh_nfdes);
		if (cfi->df_fdes)
			dwarf_fde_cie_list_dealloc(cfi->dbg, cfi->df_cies, cfi->df_ncies,
						   cfi->df_fdes, cfi->df_nfdes);
		Dwarf_Error derr = NULL;
		if (dwarf_object_finish(cfi->dbg, &derr) == DW_DLV_ERROR && derr)
			dwarf_dealloc_error(NULL, derr);
	}
	for (unsigned s = 0; s < cfi->num_sec; s++)
		free(cfi->sec[s].data);
	free(cfi->ranges);
	pthread_mutex_destroy(&cfi->lock);
	free(cfi);
}

/* Validate one section and keep a copy of the part libdwarf is to read. */
static int take_section(jitmap_cfi *cfi, const char *name, const void *buf, size_t len,
			uint64_t addr, bool is_eh, jitmap_error *err)
{
	if ((uint64_t)len > CFI_MAX_SECTION) {
		return jitmap__fail(err, -EINVAL, 0, "%s of %llu bytes is larger than %llu MiB",
				    name, (unsigned long long)len,
				    (unsigned long long)(CFI_MAX_SECTION >> 20));
	}
	struct walk w = {
		.name = name, .p = buf, .len = len, .is_eh = is_eh, .order = cfi->order,
		.err = err,
	};
	int rc = validate_section(&w);
	free(w.cies);
	if (rc)
		return rc;
	if (w.num_fdes == 0)
		return 0; /* nothing to unwind with: leave the section out */
	struct cfi_section *s = &cfi->sec[cfi->num_sec];
	s->data = malloc(w.len);
	if (!s->data)
		return jitmap__fail(err, -ENOMEM, 0, "out of memory");
	memcpy(s->data, buf, w.len);
	s->size = w.len;
	s->addr = addr;
	s->name = name;
	cfi->num_sec++;
	return 0;
}

jitmap_cfi *jitmap_cfi_new(jitmap_arch arch, const void *eh_frame, size_t eh_len,
			   uint64_t eh_addr, const void *debug_frame, size_t df_len,
			   jitmap_error *err)
{
	unsigned sp, fp, ra;
	int rc;
	if (jitmap_unwind_arch_regs(arch, &sp, &fp, &ra)) {
		errno = ENOTSUP;
		jitmap__fail(err, -ENOTSUP, 0, "architecture %s is not supported",
			     jitmap_arch_name(arch));
		return NULL;
	}
	if (!eh_frame)
		eh_len = 0;
	if (!debug_frame)
		df_len = 0;
	if (eh_len == 0 && df_len == 0) {
		errno = ENOENT;
		jitmap__fail(err, -ENOENT, 0, "neither .eh_frame nor .debug_frame was given");
		return NULL;
	}
	jitmap_cfi *cfi = calloc(1, sizeof(*cfi));
	if (!cfi) {
		errno = ENOMEM;
		jitmap__fail(err, -ENOMEM, 0, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&cfi->lock, NULL);
	cfi->arch = arch;
	const jitmap_byte_order usual = jitmap__arch(arch)->default_order;
	cfi->order = eh_len ? guess_order(eh_frame, eh_len, usual)
			    : guess_order(debug_frame, df_len, usual);

	rc = eh_len ? take_section(cfi, ".eh_frame", eh_frame, eh_len, eh_addr, true, err) : 0;
	if (!rc && df_len)
		rc = take_section(cfi, ".debug_frame", debug_frame, df_len, 0, false, err);
	if (!rc && cfi->num_sec == 0)
		rc = jitmap__fail(err, -ENOENT, 0, "no FDE in the frame sections");
	if (!rc)
		rc = open_dwarf(cfi, err);
	if (rc) {
		jitmap_cfi_free(cfi);
		errno = -rc;
		return NULL;
	}
	return cfi;
}

/* The range holding pc, or NULL. Ranges may overlap (hostile input, or padding FDEs): scan
 * back from the last range starting at or before pc while an earlier one may still reach. */
static const struct cfi_range *find_range(const jitmap_cfi *cfi, uint64_t pc)
{
	const size_t lo = JITMAP_UPPER_BOUND(cfi->ranges, cfi->num_ranges, lo, pc);
	for (size_t i = lo; i-- > 0 && cfi->ranges[i].max_hi > pc;) {
		if (pc < cfi->ranges[i].hi)
			return &cfi->ranges[i];
	}
	return NULL;
}

bool jitmap_cfi_covers(const jitmap_cfi *cfi, uint64_t pc, uint64_t *lo, uint64_t *hi)
{
	const struct cfi_range *r = cfi ? find_range(cfi, pc) : NULL;
	if (r) {
		if (lo)
			*lo = r->lo;
		if (hi)
			*hi = r->hi;
	}
	return r != NULL;
}

jitmap_byte_order jitmap__cfi_order(const jitmap_cfi *cfi)
{
	return cfi->order;
}

static struct jitmap__rule convert_rule(const Dwarf_Regtable_Entry3 *e)
{
	struct jitmap__rule r = {JITMAP_RULE_UNDEFINED, 0, 0};
	switch (e->dw_value_type) {
	case DW_EXPR_OFFSET:
		if (e->dw_offset_relevant) {
			r.kind = JITMAP_RULE_OFFSET;
			r.off = (int64_t)e->dw_offset_or_block_len;
		} else if (e->dw_regnum == CFI_SAME_VAL) {
			r.kind = JITMAP_RULE_SAME;
		} else if (e->dw_regnum == CFI_UNDEFINED_VAL) {
			r.kind = JITMAP_RULE_UNDEFINED;
		} else {
			r.kind = JITMAP_RULE_REGISTER;
			r.reg = e->dw_regnum;
		}
		break;
	case DW_EXPR_VAL_OFFSET:
		r.kind = JITMAP_RULE_VAL_OFFSET;
		r.off = (int64_t)e->dw_offset_or_block_len;
		break;
	case DW_EXPR_EXPRESSION:
	case DW_EXPR_VAL_EXPRESSION:
		r.kind = JITMAP_RULE_EXPRESSION;
		break;
	default:
		break;
	}
	return r;
}

int jitmap__cfi_row(const jitmap_cfi *cfi, uint64_t pc, struct jitmap__cfi_row *row, char *why,
		    size_t why_len)
{
	const struct cfi_range *range = find_range(cfi, pc);
	if (!range) {
		snprintf(why, why_len, "no FDE covers 0x%llx", (unsigned long long)pc);
		return -ENOENT;
	}
	Dwarf_Regtable_Entry3 rules[JITMAP_UNWIND_MAX_REGS];
	Dwarf_Regtable3 table;
	memset(&table, 0, sizeof(table));
	memset(rules, 0, sizeof(rules));
	table.rt3_reg_table_size = JITMAP_UNWIND_MAX_REGS;
	table.rt3_rules = rules;
	Dwarf_Addr row_pc = 0;
	Dwarf_Error derr = NULL;

	jitmap_cfi *mut = (jitmap_cfi *)cfi;
	pthread_mutex_lock(&mut->lock);
	for (unsigned i = 0; i < ROW_CACHE; i++) {
		if (mut->cache[i].valid && mut->cache[i].pc == pc) {
			*row = mut->cache[i].row;
			pthread_mutex_unlock(&mut->lock);
			return 0;
		}
	}
	const int rc = dwarf_get_fde_info_for_all_regs3(range->fde, pc, &table, &row_pc, &derr);
	if (rc != DW_DLV_OK) {
		char msg[128];
		take_dwarf_error(cfi->dbg, rc == DW_DLV_ERROR ? derr : NULL, msg, sizeof(msg));
		pthread_mutex_unlock(&mut->lock);
		snprintf(why, why_len, "the FDE for [0x%llx, 0x%llx) has no row at 0x%llx: %s",
			 (unsigned long long)range->lo, (unsigned long long)range->hi,
			 (unsigned long long)pc, msg);
		return -EINVAL;
	}

	memset(row, 0, sizeof(*row));
	row->fde_lo = range->lo;
	row->fde_hi = range->hi;
	const Dwarf_Regtable_Entry3 *c = &table.rt3_cfa_rule;
	if (c->dw_value_type == DW_EXPR_EXPRESSION || c->dw_value_type == DW_EXPR_VAL_EXPRESSION) {
		row->cfa_is_expression = true;
	} else {
		row->cfa_reg = c->dw_regnum;
		row->cfa_off = c->dw_offset_relevant ? (int64_t)c->dw_offset_or_block_len : 0;
	}
	for (unsigned i = 0; i < JITMAP_UNWIND_MAX_REGS; i++)
		row->rule[i] = convert_rule(&rules[i]);
	const unsigned slot = mut->cache_next++ % ROW_CACHE;
	mut->cache[slot].pc = pc;
	mut->cache[slot].row = *row;
	mut->cache[slot].valid = true;
	pthread_mutex_unlock(&mut->lock);
	return 0;
}
