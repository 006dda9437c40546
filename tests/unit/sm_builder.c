/* sm_builder.c: emit stackmap blobs byte for byte as stackmap-format.md §1 describes them.
 *
 * v3: 12-byte locations with a u16 size, zero padding to 8 after the locations (4 bytes when
 * the count is odd), and again after the live-outs. v1/v2: 8-byte locations with a u8 size,
 * and the live-out header right after them (already aligned). v1 function entries have no
 * RecordCount (16 bytes instead of 24).
 */
#include "sm_builder.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tables are fixed-size to keep the builder short; a test that overflows one is wrong. */
#define NEED(cond)                                                                   \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "sm_builder: %s:%d: %s\n", __FILE__, __LINE__, \
				#cond);                                              \
			abort();                                                     \
		}                                                                    \
	} while (0)

static size_t align8(size_t x)
{
	return (x + 7) & ~(size_t)7;
}

void sm_put(uint8_t *p, uint64_t v, size_t size, jitmap_byte_order order)
{
	for (size_t i = 0; i < size; i++) {
		const size_t at = order == JITMAP_ORDER_BIG ? size - 1 - i : i;
		p[at] = (uint8_t)(v >> (8 * i));
	}
}

uint64_t sm_get(const uint8_t *p, size_t size, jitmap_byte_order order)
{
	uint64_t v = 0;
	for (size_t i = 0; i < size; i++) {
		const size_t at = order == JITMAP_ORDER_BIG ? size - 1 - i : i;
		v |= (uint64_t)p[at] << (8 * i);
	}
	return v;
}

/* -- Describing a blob -- */

void smb_init(sm_builder *b, int version, jitmap_byte_order order)
{
	memset(b, 0, sizeof(*b));
	b->version = version;
	b->order = order == JITMAP_ORDER_BIG ? JITMAP_ORDER_BIG : JITMAP_ORDER_LITTLE;
}

void smb_function(sm_builder *b, uint64_t address, uint64_t stack_size)
{
	NEED(b->num_functions < SMB_MAX_FUNCTIONS);
	struct smb_function *f = &b->functions[b->num_functions++];
	f->address = address;
	f->stack_size = stack_size;
	f->record_count = 0;
}

unsigned smb_constant(sm_builder *b, uint64_t value)
{
	NEED(b->num_constants < SMB_MAX_CONSTANTS);
	b->constants[b->num_constants] = value;
	return b->num_constants++;
}

void smb_record(sm_builder *b, uint64_t id, uint32_t offset)
{
	NEED(b->num_records < SMB_MAX_RECORDS);
	struct smb_record *r = &b->records[b->num_records++];
	memset(r, 0, sizeof(*r));
	r->id = id;
	r->offset = offset;
	r->function = b->num_functions ? b->num_functions - 1 : (size_t)-1;
	if (b->num_functions)
		b->functions[b->num_functions - 1].record_count++;
}

void smb_loc(sm_builder *b, uint8_t kind, uint16_t size, uint16_t reg, int32_t offset)
{
	NEED(b->num_records > 0);
	struct smb_record *r = &b->records[b->num_records - 1];
	NEED(r->num_locs < SMB_MAX_LOCATIONS);
	r->locs[r->num_locs++] = (struct smb_loc){kind, size, reg, offset};
}

void smb_live_out(sm_builder *b, uint16_t reg, uint8_t size)
{
	NEED(b->num_records > 0);
	struct smb_record *r = &b->records[b->num_records - 1];
	NEED(r->num_live_outs < SMB_MAX_LIVE_OUTS);
	r->live_outs[r->num_live_outs++] = (struct smb_live_out){reg, size};
}

/* -- Emitting -- */

sm_bytes smb_emit(sm_builder *b)
{
	const jitmap_byte_order o = b->order;
	const size_t fsize = b->version == 1 ? 16 : 24;
	const size_t locsize = b->version == 3 ? 12 : 8;
	/* An upper bound; the buffer is zeroed, so every padding byte is already written. */
	size_t cap = 16 + fsize * b->num_functions + 8 * b->num_constants;
	for (unsigned i = 0; i < b->num_records; i++)
		cap += 16 + locsize * SMB_MAX_LOCATIONS + 8 + 4 * SMB_MAX_LIVE_OUTS + 8;
	uint8_t *buf = calloc(1, cap);
	NEED(buf);

	buf[0] = (uint8_t)b->version;
	sm_put(buf + 4, b->num_functions, 4, o);
	sm_put(buf + 8, b->num_constants, 4, o);
	sm_put(buf + 12, b->num_records, 4, o);
	size_t pos = 16;

	for (unsigned i = 0; i < b->num_functions; i++) {
		struct smb_function *f = &b->functions[i];
		f->at = pos;
		sm_put(buf + pos, f->address, 8, o);
		sm_put(buf + pos + 8, f->stack_size, 8, o);
		if (b->version >= 2)
			sm_put(buf + pos + 16, f->record_count, 8, o);
		pos += fsize;
	}

	b->constants_at = pos;
	for (unsigned i = 0; i < b->num_constants; i++, pos += 8)
		sm_put(buf + pos, b->constants[i], 8, o);

	for (unsigned i = 0; i < b->num_records; i++) {
		struct smb_record *r = &b->records[i];
		r->at = pos;
		sm_put(buf + pos, r->id, 8, o);
		sm_put(buf + pos + 8, r->offset, 4, o);
		/* pos + 12: reserved u16, zero */
		sm_put(buf + pos + 14, r->num_locs, 2, o);
		pos += 16;
		for (unsigned l = 0; l < r->num_locs; l++) {
			const struct smb_loc *loc = &r->locs[l];
			r->loc_at[l] = pos;
			buf[pos] = loc->kind;
			if (b->version == 3) {
				sm_put(buf + pos + 2, loc->size, 2, o);
				sm_put(buf + pos + 4, loc->reg, 2, o);
				sm_put(buf + pos + 8, (uint32_t)loc->offset, 4, o);
			} else {
				buf[pos + 1] = (uint8_t)loc->size;
				sm_put(buf + pos + 2, loc->reg, 2, o);
				sm_put(buf + pos + 4, (uint32_t)loc->offset, 4, o);
			}
			pos += locsize;
		}
		r->loc_pad_at = pos;
		r->loc_pad_len = b->version == 3 ? align8(pos) - pos : 0;
		pos += r->loc_pad_len;

		r->live_header_at = pos;
		sm_put(buf + pos + 2, r->num_live_outs, 2, o);
		pos += 4;
		for (unsigned l = 0; l < r->num_live_outs; l++) {
			r->live_at[l] = pos;
			sm_put(buf + pos, r->live_outs[l].reg, 2, o);
			buf[pos + 3] = r->live_outs[l].size;
			pos += 4;
		}
		r->end_pad_at = pos;
		r->end_pad_len = align8(pos) - pos;
		pos += r->end_pad_len;
		r->end = pos;
	}
	NEED(pos <= cap);
	b->size = pos;
	return (sm_bytes){buf, pos};
}

/* -- Byte strings -- */

void sm_bytes_cat(sm_bytes *dst, const sm_bytes *src, size_t pad)
{
	uint8_t *p = realloc(dst->data, dst->len + pad + src->len + 1);
	NEED(p);
	memset(p + dst->len, 0, pad);
	if (src->len)
		memcpy(p + dst->len + pad, src->data, src->len);
	dst->data = p;
	dst->len += pad + src->len;
}

void sm_bytes_pad(sm_bytes *dst, size_t n)
{
	const sm_bytes none = {NULL, 0};
	sm_bytes_cat(dst, &none, n);
}

sm_bytes sm_bytes_copy(const sm_bytes *src)
{
	sm_bytes c = {NULL, 0};
	sm_bytes_cat(&c, src, 0);
	return c;
}

void sm_bytes_free(sm_bytes *b)
{
	free(b->data);
	b->data = NULL;
	b->len = 0;
}

sm_bytes sm_read_file(const char *path)
{
	sm_bytes b = {NULL, 0};
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
		abort();
	}
	uint8_t chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		const sm_bytes c = {chunk, n};
		sm_bytes_cat(&b, &c, 0);
	}
	fclose(f);
	return b;
}

void *sm_elf64_section(sm_bytes *obj, const char *name)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)obj->data;
	Elf64_Shdr *sh = (Elf64_Shdr *)(obj->data + eh->e_shoff);
	const char *strs = (const char *)obj->data + sh[eh->e_shstrndx].sh_offset;
	for (unsigned i = 0; i < eh->e_shnum; i++)
		if (!strcmp(strs + sh[i].sh_name, name))
			return &sh[i];
	fprintf(stderr, "no section %s\n", name);
	abort();
}
