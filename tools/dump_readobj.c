/* dump_readobj.c: jitmap-dump's llvm-readobj format: for each blob, exactly what
 * `llvm-readobj --stackmap` prints from the line "LLVM StackMap Version:" on. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jitmap/jitmap.h"
#include "dump_readobj.h"

/* -- llvm-readobj text -- */

/* The readobj text of a large section is millions of short numbers: fprintf and stdio's
 * per-call locking took two thirds of jitmap-dump's time on a 12 MB section, so
 * print_readobj_blob builds its text in a buffer and writes it in large pieces, with write(2)
 * where the stream has a file descriptor: fwrite copied every byte into stdio's buffer
 * first. */
struct text {
	FILE *out;
	int fd; /* -1: through `out` */
	size_t n;
	char b[1 << 16];
};

static void text_init(struct text *t, FILE *out)
{
	fflush(out); /* what stdio holds goes first */
	t->out = out;
	t->fd = fileno(out);
	t->n = 0;
}

static void text_flush(struct text *t)
{
	const char *p = t->b;
	size_t n = t->n;
	while (n && t->fd >= 0) {
		const ssize_t k = write(t->fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break; /* fwrite below meets the error again and marks the stream */
		p += k;
		n -= (size_t)k;
	}
	if (n)
		fwrite(p, 1, n, t->out);
	t->n = 0;
}

/* Room for `need` bytes: the cursor to write them at. A line is written through a cursor
 * (PUT, put_u64, put_i64) and ended by text_done, one check of room a line, not a piece. */
static inline char *text_room(struct text *t, size_t need)
{
	if (need > sizeof(t->b) - t->n)
		text_flush(t);
	return t->b + t->n;
}

static inline void text_done(struct text *t, const char *o)
{
	t->n = (size_t)(o - t->b);
}

#define PUT(o, lit) (memcpy((o), (lit), sizeof(lit) - 1), (o) + sizeof(lit) - 1)

/* The longest a line of the readobj text takes: its literals and five numbers of 20 digits. */
#define LINE_MAX_BYTES 256

/* A number's digits, counted, then written in pairs from the end. (Writing them to a scratch
 * and copying it cost a stalled load a number: the copy read bytes the pair stores had not
 * finished writing.) */
static inline char *put_u64(char *o, uint64_t v)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324"
				    "25262728293031323334353637383940414243444546474849"
				    "50515253545556575859606162636465666768697071727374"
				    "75767778798081828384858687888990919293949596979899";
	if (v < 10) { /* most of them: location numbers, registers, sizes, offsets */
		*o = (char)('0' + v);
		return o + 1;
	}
	if (v < 100) {
		memcpy(o, pairs + 2 * v, 2);
		return o + 2;
	}
	unsigned n = 3;
	for (uint64_t p10 = 1000; n < 20 && v >= p10; p10 *= 10)
		n++;
	char *p = o + n;
	while (v >= 100) {
		p -= 2;
		memcpy(p, pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10)
		memcpy(p - 2, pairs + 2 * v, 2);
	else
		p[-1] = (char)('0' + v);
	return o + n;
}

static inline char *put_i64(char *o, int64_t v)
{
	if (v < 0)
		*o++ = '-';
	return put_u64(o, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
}

/* A line of a label and a count: "\nNum Records: 3". */
#define COUNT_LINE(t, lit, count)                                                             \
	do {                                                                                 \
		char *o_ = text_room((t), LINE_MAX_BYTES);                                   \
		o_ = PUT(o_, lit);                                                           \
		text_done((t), put_u64(o_, (count)));                                        \
	} while (0)

static void print_readobj_blob(FILE *out, const jitmap_stackmap *sm, const jitmap_blob *b)
{
	struct text t;
	text_init(&t, out);
	char *o = text_room(&t, LINE_MAX_BYTES);
	o = PUT(o, "LLVM StackMap Version: ");
	text_done(&t, put_u64(o, b->version));
	COUNT_LINE(&t, "\nNum Functions: ", b->num_functions);
	for (uint32_t i = 0; i < b->num_functions; i++) {
		const jitmap_function *f = jitmap_stackmap_function(sm, b->first_function + i);
		/* readobj prints the stored bytes: unrelocated in objects. */
		o = text_room(&t, LINE_MAX_BYTES);
		o = PUT(o, "\n  Function address: ");
		o = put_u64(o, f->raw_address);
		o = PUT(o, ", stack size: ");
		o = put_u64(o, f->stack_size);
		o = PUT(o, ", callsite record count: ");
		o = put_u64(o, f->record_count);
		text_done(&t, o);
	}
	COUNT_LINE(&t, "\nNum Constants: ", b->num_constants);
	for (uint32_t i = 0; i < b->num_constants; i++) {
		uint64_t v = 0;
		jitmap_stackmap_constant(sm, b->first_constant + i, &v);
		o = text_room(&t, LINE_MAX_BYTES);
		o = PUT(o, "\n  #");
		o = put_u64(o, i + 1);
		o = PUT(o, ": ");
		o = put_u64(o, v);
		text_done(&t, o);
	}
	COUNT_LINE(&t, "\nNum Records: ", b->num_records);
	for (uint32_t i = 0; i < b->num_records; i++) {
		const jitmap_record *r = jitmap_stackmap_record(sm, b->first_record + i);
		o = text_room(&t, LINE_MAX_BYTES);
		o = PUT(o, "\n  Record ID: ");
		o = put_u64(o, r->id);
		o = PUT(o, ", instruction offset: ");
		o = put_u64(o, r->raw_instruction_offset); /* the stored bytes, as llvm-readobj */
		o = PUT(o, "\n    ");
		o = put_u64(o, r->num_locations);
		o = PUT(o, " locations:");
		for (unsigned l = 0; l < r->num_locations; l++) {
			const jitmap_location *loc = &r->locations[l];
			uint64_t v = 0;
			text_done(&t, o);
			o = text_room(&t, LINE_MAX_BYTES);
			o = PUT(o, "\n      #");
			o = put_u64(o, l + 1);
			switch (loc->kind) {
			case JITMAP_LOC_REGISTER:
				o = PUT(o, ": Register R#");
				o = put_u64(o, loc->dwarf_reg);
				break;
			case JITMAP_LOC_DIRECT:
				o = PUT(o, ": Direct R#");
				o = put_u64(o, loc->dwarf_reg);
				o = PUT(o, " + ");
				o = put_i64(o, loc->offset);
				break;
			case JITMAP_LOC_INDIRECT:
				o = PUT(o, ": Indirect [R#");
				o = put_u64(o, loc->dwarf_reg);
				o = PUT(o, " + ");
				o = put_i64(o, loc->offset);
				o = PUT(o, "]");
				break;
			case JITMAP_LOC_CONSTANT:
				/* readobj prints the small constant as an unsigned 32-bit number. */
				o = PUT(o, ": Constant ");
				o = put_u64(o, (uint32_t)loc->offset);
				break;
			case JITMAP_LOC_CONSTANT_INDEX:
				jitmap_location_constant(sm, r, loc, &v);
				o = PUT(o, ": ConstantIndex #");
				o = put_i64(o, loc->offset);
				o = PUT(o, " (");
				o = put_u64(o, v);
				o = PUT(o, ")");
				break;
			}
			o = PUT(o, ", size: ");
			o = put_u64(o, loc->size);
		}
		text_done(&t, o);
		o = text_room(&t, LINE_MAX_BYTES);
		o = PUT(o, "\n    ");
		o = put_u64(o, r->num_live_outs);
		o = PUT(o, " live-outs: [ ");
		for (unsigned l = 0; l < r->num_live_outs; l++) {
			text_done(&t, o);
			o = text_room(&t, LINE_MAX_BYTES);
			o = PUT(o, "R#");
			o = put_u64(o, r->live_outs[l].dwarf_reg);
			o = PUT(o, " (");
			o = put_u64(o, r->live_outs[l].size);
			o = PUT(o, "-bytes) ");
		}
		o = PUT(o, "]");
		text_done(&t, o);
	}
	o = text_room(&t, LINE_MAX_BYTES);
	o = PUT(o, "\n");
	text_done(&t, o);
	text_flush(&t);
}

/* Every blob of `sm` (none when NULL) as llvm-readobj prints one. llvm-readobj knows LLVM's
 * layout alone: a blob in another (ykllvm's) is left out, and said so on standard error. */
void dump_readobj(FILE *out, const char *path, const jitmap_stackmap *sm)
{
	for (size_t bi = 0; sm && bi < jitmap_stackmap_num_blobs(sm); bi++) {
		if (jitmap_blob_dialect(sm, bi) != JITMAP_DIALECT_LLVM) {
			fprintf(stderr, "jitmap-dump: %s: blob %zu is in ykllvm's layout, which "
				"llvm-readobj's format cannot show: left out\n", path, bi);
			continue;
		}
		print_readobj_blob(out, sm, jitmap_stackmap_blob(sm, bi));
	}
}
