/* types.h: the types libjitmap (the reader) and libjitmap-producer share: errors, byte
 * orders, stackmap locations and live-outs, deopt layouts. Included by jitmap.h and producer.h; a JIT that
 * only registers code needs this header and producer.h, not the reader's. */
#ifndef JITMAP_TYPES_H
#define JITMAP_TYPES_H

#include <stdint.h>
#include <string.h> /* memset, for JITMAP_OPTS */

#ifdef __cplusplus
extern "C" {
#endif

#ifndef JITMAP_API
#define JITMAP_API __attribute__((visibility("default")))
#endif

/* -- Options -- */

/* Options carry their size (libbpf's convention), so that fields can be added: set `sz` to
 * sizeof the struct and leave every other byte zero, padding included. A call given options
 * whose sz is smaller than the field itself, or with a non-zero byte between the end of the
 * last field the library knows and sz, fails with -EINVAL: a byte of today's tail padding
 * may be a newer caller's field. C does not promise zero padding for
 * `T o = {.sz = sizeof(T), .a = 1}`: declare options with JITMAP_OPTS, or memset them first.
 *
 * JITMAP_OPTS(T, name, .field = value, ...) declares `name` (T may be const-qualified, and
 * no field need be named), every byte zero but `sz` and the fields named. Inside a function
 * only (a GNU C statement expression, as libbpf's LIBBPF_OPTS), at most 19 fields, each a
 * scalar or a pointer. libbpf's way, a memset and then a compound literal copied in, leaves
 * padding that GCC -O0 copies from the literal when every field is named; here the fields
 * are assigned one at a time to a zeroed copy instead, and `name` is zeroed before it is
 * initialized from that copy, whether the compiler copies it whole or field by field. */
#define JITMAP_OPTS(TYPE, NAME, ...)                                              \
	TYPE NAME = ({                                                             \
		JITMAP__OPTS_TMP(TYPE);                                            \
		memset((void *)&jitmap__o, 0, sizeof(TYPE));                       \
		memset((void *)&NAME, 0, sizeof(TYPE));                            \
		JITMAP__OPTS_SET(jitmap__o, .sz = sizeof(TYPE), __VA_ARGS__)       \
		jitmap__o;                                                         \
	})
/* A copy without const: in C, typeof of a comma expression drops qualifiers; in C++, auto. */
#ifdef __cplusplus
#define JITMAP__OPTS_TMP(TYPE) auto jitmap__o = __typeof__(TYPE)()
#else
#define JITMAP__OPTS_TMP(TYPE) __typeof__(((void)0, *(TYPE *)0)) jitmap__o
#endif
/* `O .field = value;` for each argument (an empty last one, of JITMAP_OPTS(T, name), is
 * `(void)(O);`). The count always has `.sz = ...` first, so no empty list is counted. */
#define JITMAP__OPTS_SET(O, ...) \
	JITMAP__OPTS_CAT(JITMAP__OPTS_SET, JITMAP__OPTS_NARGS(__VA_ARGS__))(O, __VA_ARGS__)
#define JITMAP__OPTS_CAT(a, b) JITMAP__OPTS_CAT_(a, b)
#define JITMAP__OPTS_CAT_(a, b) a##b
#define JITMAP__OPTS_NARGS(...) \
	JITMAP__OPTS_NARGS_(__VA_ARGS__, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, \
			    10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
#define JITMAP__OPTS_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, \
			     _12, _13, _14, _15, _16, _17, _18, _19, _20, N, ...) N
#define JITMAP__OPTS_SET1(O, a) (void)(O a);
#define JITMAP__OPTS_SET2(O, a, ...) (void)(O a); JITMAP__OPTS_SET1(O, __VA_ARGS__)
#define JITMAP__OPTS_SET3(O, a, ...) (void)(O a); JITMAP__OPTS_SET2(O, __VA_ARGS__)
#define JITMAP__OPTS_SET4(O, a, ...) (void)(O a); JITMAP__OPTS_SET3(O, __VA_ARGS__)
#define JITMAP__OPTS_SET5(O, a, ...) (void)(O a); JITMAP__OPTS_SET4(O, __VA_ARGS__)
#define JITMAP__OPTS_SET6(O, a, ...) (void)(O a); JITMAP__OPTS_SET5(O, __VA_ARGS__)
#define JITMAP__OPTS_SET7(O, a, ...) (void)(O a); JITMAP__OPTS_SET6(O, __VA_ARGS__)
#define JITMAP__OPTS_SET8(O, a, ...) (void)(O a); JITMAP__OPTS_SET7(O, __VA_ARGS__)
#define JITMAP__OPTS_SET9(O, a, ...) (void)(O a); JITMAP__OPTS_SET8(O, __VA_ARGS__)
#define JITMAP__OPTS_SET10(O, a, ...) (void)(O a); JITMAP__OPTS_SET9(O, __VA_ARGS__)
#define JITMAP__OPTS_SET11(O, a, ...) (void)(O a); JITMAP__OPTS_SET10(O, __VA_ARGS__)
#define JITMAP__OPTS_SET12(O, a, ...) (void)(O a); JITMAP__OPTS_SET11(O, __VA_ARGS__)
#define JITMAP__OPTS_SET13(O, a, ...) (void)(O a); JITMAP__OPTS_SET12(O, __VA_ARGS__)
#define JITMAP__OPTS_SET14(O, a, ...) (void)(O a); JITMAP__OPTS_SET13(O, __VA_ARGS__)
#define JITMAP__OPTS_SET15(O, a, ...) (void)(O a); JITMAP__OPTS_SET14(O, __VA_ARGS__)
#define JITMAP__OPTS_SET16(O, a, ...) (void)(O a); JITMAP__OPTS_SET15(O, __VA_ARGS__)
#define JITMAP__OPTS_SET17(O, a, ...) (void)(O a); JITMAP__OPTS_SET16(O, __VA_ARGS__)
#define JITMAP__OPTS_SET18(O, a, ...) (void)(O a); JITMAP__OPTS_SET17(O, __VA_ARGS__)
#define JITMAP__OPTS_SET19(O, a, ...) (void)(O a); JITMAP__OPTS_SET18(O, __VA_ARGS__)
#define JITMAP__OPTS_SET20(O, a, ...) (void)(O a); JITMAP__OPTS_SET19(O, __VA_ARGS__)

/* -- Errors -- */

/* Where and why input was rejected. `offset` is a byte offset into the input that was
 * being parsed (the section, or the ELF file); `reason` is one sentence without a trailing
 * period. `code` is the negative errno value the call returned. */
typedef struct jitmap_error {
	int code;
	uint64_t offset;
	char reason[192];
} jitmap_error;

/* -- The stackmap model -- */

typedef enum jitmap_byte_order {
	JITMAP_ORDER_AUTO = 0, /* guess from the header: see jitmap_stackmap_parse */
	JITMAP_ORDER_LITTLE,
	JITMAP_ORDER_BIG,
} jitmap_byte_order;

typedef enum jitmap_loc_kind {
	JITMAP_LOC_REGISTER = 1,       /* value in a register */
	JITMAP_LOC_DIRECT = 2,         /* value is the address reg + offset (a frame object) */
	JITMAP_LOC_INDIRECT = 3,       /* value is in memory at [reg + offset] */
	JITMAP_LOC_CONSTANT = 4,       /* value is the sign-extended 32-bit offset field */
	JITMAP_LOC_CONSTANT_INDEX = 5, /* value is the constant pool entry `offset` */
} jitmap_loc_kind;

typedef struct jitmap_location {
	jitmap_loc_kind kind;
	uint16_t size;      /* bytes (v1/v2 sections store one byte) */
	uint16_t dwarf_reg; /* LLVM DWARF register number; 0 for constants */
	int32_t offset;     /* offset, small constant, or constant pool index (blob-relative) */
} jitmap_location;

typedef struct jitmap_live_out {
	uint16_t dwarf_reg;
	uint8_t size;
} jitmap_live_out;

/* -- Deopt layouts --
 *
 * How a statepoint's deopt values form the interpreter frames its compiled code stands for
 * (the frames a deoptimization would rebuild), as a runtime states it: for a record ID
 * (optionally in one function), its frames innermost first, each with a method, a bytecode
 * index, and which deopt values are its locals and its expression stack. For a record that is
 * not a statepoint the indexes are the record's location indexes. libjitmap-producer stores
 * layouts in the image a JIT registers (section `.jitmap_deopt`, docs/deopt-layouts.md);
 * libjitmap reads them back (jitmap_image_layouts). */

typedef enum jitmap_vref_kind {
	JITMAP_VREF_NONE = 0,   /* absent (a bci may be) */
	JITMAP_VREF_NUMBER = 1, /* `number` itself */
	JITMAP_VREF_DEOPT = 2,  /* the deopt value at index `number` (< 2^32) */
	JITMAP_VREF_NAME = 3,   /* `name` (a method only) */
} jitmap_vref_kind;

typedef struct jitmap_vref {
	jitmap_vref_kind kind;
	uint64_t number;
	const char *name;
} jitmap_vref;

/* A local or a stack entry: deopt value `index`, named `name` (NULL: unnamed). */
typedef struct jitmap_vslot {
	uint32_t index;
	const char *name;
} jitmap_vslot;

typedef struct jitmap_vframe_layout {
	jitmap_vref method;
	jitmap_vref bci;
	const jitmap_vslot *locals;
	uint16_t num_locals;
	uint16_t num_stack;
	const jitmap_vslot *stack;
} jitmap_vframe_layout;

typedef struct jitmap_deopt_layout {
	uint64_t record_id;
	const char *function; /* NULL: records of that ID in any function */
	const jitmap_vframe_layout *frames; /* innermost first */
	uint32_t num_frames;
} jitmap_deopt_layout;

#ifdef __cplusplus
}
#endif

#endif /* JITMAP_TYPES_H */
