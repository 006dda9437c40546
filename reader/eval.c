/* eval.c: evaluate a location in a stopped frame, and say where it is.
 *
 * Registers and memory are reached only through the caller's jitmap_target, so the same code
 * serves GDB, LLDB, core files and unit tests. An unreadable register or memory is never an
 * error of ours: the value is "unavailable" with the target's reason, never a wrong number.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>

#include "internal.h"
#include "../common/strbuf.h"

/* -- Where -- */

const char *jitmap__reg_label(const jitmap_stackmap *sm, unsigned regno, char *tmp, size_t len)
{
	const char *name = jitmap_reg_name(sm->arch, regno);
	if (name)
		return name;
	snprintf(tmp, len, "R#%u", regno);
	return tmp;
}

int jitmap_stackmap_reg_label(const jitmap_stackmap *sm, unsigned regno, char *buf, size_t len)
{
	if (!sm)
		return snprintf(buf, len, "R#%u", regno);
	char tmp[16];
	return snprintf(buf, len, "%s", jitmap__reg_label(sm, regno, tmp, sizeof(tmp)));
}

/* snprintf's contract for the few shapes below, without printf (jitmap-dump formats millions
 * of locations): what fits is written, NUL-terminated; the full length is counted. */
struct fmt_out {
	char *buf;
	size_t len, n;
};

static void fmt_str(struct fmt_out *o, const char *s)
{
	for (; *s; s++, o->n++)
		if (o->n + 1 < o->len)
			o->buf[o->n] = *s;
}

static void fmt_u32(struct fmt_out *o, uint32_t v)
{
	char d[JITMAP__U64_DIGITS];
	fmt_str(o, jitmap__u64_digits(v, d));
}

static int fmt_end(struct fmt_out *o)
{
	if (o->len)
		o->buf[o->n < o->len ? o->n : o->len - 1] = 0;
	return (int)o->n;
}

int jitmap_location_format(const jitmap_stackmap *sm, const jitmap_record *rec,
			   const jitmap_location *loc, char *buf, size_t len)
{
	char tmp[16];
	const char *reg = jitmap__reg_label(sm, loc->dwarf_reg, tmp, sizeof(tmp));
	const char sign[2] = {loc->offset < 0 ? '-' : '+', 0};
	const uint32_t mag = loc->offset < 0 ? 0u - (uint32_t)loc->offset : (uint32_t)loc->offset;
	uint64_t value;
	struct fmt_out o = {buf, len, 0};

	switch (loc->kind) {
	case JITMAP_LOC_REGISTER:
		fmt_str(&o, reg);
		return fmt_end(&o);
	case JITMAP_LOC_DIRECT:
		fmt_str(&o, reg);
		if (loc->offset) {
			fmt_str(&o, sign);
			fmt_u32(&o, mag);
		}
		return fmt_end(&o);
	case JITMAP_LOC_INDIRECT:
		fmt_str(&o, "[");
		fmt_str(&o, reg);
		if (loc->offset) {
			fmt_str(&o, sign);
			fmt_u32(&o, mag);
		}
		fmt_str(&o, "]");
		return fmt_end(&o);
	case JITMAP_LOC_CONSTANT:
		return snprintf(buf, len, "const %" PRId32, loc->offset);
	case JITMAP_LOC_CONSTANT_INDEX:
		if (jitmap_location_constant(sm, rec, loc, &value))
			return snprintf(buf, len, "const#%" PRId32 " <out of range>", loc->offset);
		return snprintf(buf, len, "const#%" PRId32 " %" PRIu64, loc->offset, value);
	default:
		return snprintf(buf, len, "kind %u", (unsigned)loc->kind);
	}
}

/* -- Value -- */

static int unavailable(jitmap_value *out, int code, const char *fmt, const char *a,
		       const char *b)
{
	out->available = false;
	snprintf(out->why, sizeof(out->why), fmt, a, b);
	return code < 0 ? code : -ENODATA;
}

/* A size as text, for the reasons above (one per message: static storage). */
static const char *n_bytes(unsigned n)
{
	static _Thread_local char buf[16];
	snprintf(buf, sizeof(buf), "%u", n);
	return buf;
}

/* Read register `regno` of the frame at `level`, applying the outer-frame rule (see
 * jitmap_location_eval_frame in jitmap.h): the one place that decides which registers of an
 * outer frame can be believed. */
static int read_reg(jitmap_arch arch, const jitmap_target *t, unsigned level, unsigned regno,
		    void *buf, size_t size, char *why, size_t why_len)
{
	int rc = t->read_reg(t->ctx, regno, buf, size, why, why_len);
	if (rc == JITMAP_REG_RECOVERED)
		return 0;
	if (rc && rc != -ENOENT)
		return rc;
	bool callee_saved = jitmap_reg_is_callee_saved(arch, regno);
	if (rc == 0 && (level == 0 || callee_saved))
		return 0;
	snprintf(why, why_len, "%snot saved in frame %u", callee_saved ? "" : "caller-saved, and ",
		 level);
	return -ENOENT;
}

int jitmap__frame_reg(jitmap_arch arch, jitmap_byte_order order, const jitmap_target *t,
		      unsigned level, unsigned regno, uint64_t *v, char *why, size_t why_len)
{
	uint8_t raw[8];
	if (!t || !t->read_reg) {
		snprintf(why, why_len, "no registers to read");
		return -ENOTSUP;
	}
	why[0] = 0;
	int rc = read_reg(arch, t, level, regno, raw, sizeof(raw), why, why_len);
	if (rc)
		return rc;
	*v = jitmap__load(raw, 8, order);
	return 0;
}

/* Read register `regno` as a 64-bit integer (for bases of Direct/Indirect and small values). */
static int read_reg_u64(const jitmap_stackmap *sm, const jitmap_target *t, unsigned level,
			unsigned regno, uint64_t *v, char *why, size_t why_len)
{
	return jitmap__frame_reg(sm->arch, sm->order, t, level, regno, v, why, why_len);
}

static uint64_t truncate_to(uint64_t v, uint16_t size)
{
	return size >= 8 ? v : v & ((UINT64_C(1) << (8 * size)) - 1);
}

static int eval(const jitmap_stackmap *sm, const jitmap_record *rec, const jitmap_location *loc,
		const jitmap_target *t, unsigned level, jitmap_value *out)
{
	char why[128] = "", tmp[16];
	const char *reg = jitmap__reg_label(sm, loc->dwarf_reg, tmp, sizeof(tmp));
	uint64_t base;
	int rc;

	memset(out, 0, sizeof(*out));
	out->size = loc->size;
	switch (loc->kind) {
	case JITMAP_LOC_CONSTANT:
	case JITMAP_LOC_CONSTANT_INDEX:
		rc = jitmap_location_constant(sm, rec, loc, &out->u);
		if (rc)
			return unavailable(out, rc, "constant index out of range%s%s", "", "");
		out->available = true;
		return 0;
	case JITMAP_LOC_REGISTER:
		if (!t || !t->read_reg)
			return unavailable(out, -ENOTSUP, "no registers to read%s%s", "", "");
		if (loc->size <= 8) {
			rc = read_reg_u64(sm, t, level, loc->dwarf_reg, &out->u, why,
					  sizeof(why));
			if (rc)
				return unavailable(out, rc, "register %s not available: %s", reg,
						   why[0] ? why : jitmap_strerror(rc));
			out->u = truncate_to(out->u, loc->size);
		} else {
			if (loc->size > JITMAP_VALUE_MAX || loc->size > 64)
				return unavailable(out, -ENOTSUP,
						   "register %s holds %s bytes; registers over 64 bytes "
						   "are not read", reg, n_bytes(loc->size));
			rc = read_reg(sm->arch, t, level, loc->dwarf_reg, out->bytes, loc->size, why,
				      sizeof(why));
			if (rc)
				return unavailable(out, rc, "register %s not available: %s", reg,
						   why[0] ? why : jitmap_strerror(rc));
		}
		out->available = true;
		return 0;
	case JITMAP_LOC_DIRECT:
	case JITMAP_LOC_INDIRECT:
		if (!t || !t->read_reg)
			return unavailable(out, -ENOTSUP, "no registers to read%s%s", "", "");
		rc = read_reg_u64(sm, t, level, loc->dwarf_reg, &base, why, sizeof(why));
		if (rc)
			return unavailable(out, rc, "base register %s not available: %s", reg,
					   why[0] ? why : jitmap_strerror(rc));
		out->address = base + (uint64_t)(int64_t)loc->offset;
		if (loc->kind == JITMAP_LOC_DIRECT) {
			out->is_address = true;
			out->u = out->address;
			out->available = true;
			return 0;
		}
		if (loc->size > JITMAP_VALUE_MAX) {
			char n[24];
			snprintf(n, sizeof(n), "%u", loc->size);
			return unavailable(out, -ENOTSUP, "%s-byte value is larger than jitmap shows%s",
					   n, "");
		}
		if (!t->read_mem)
			return unavailable(out, -ENOTSUP, "no memory to read%s%s", "", "");
		rc = t->read_mem(t->ctx, out->address, out->bytes, loc->size, why, sizeof(why));
		if (rc) {
			char a[24];
			snprintf(a, sizeof(a), "0x%" PRIx64, out->address);
			return unavailable(out, rc, "memory at %s not readable: %s", a,
					   why[0] ? why : jitmap_strerror(rc));
		}
		if (loc->size <= 8) {
			out->u = jitmap__load(out->bytes, loc->size, sm->order);
			memset(out->bytes, 0, sizeof(out->bytes));
		}
		out->available = true;
		return 0;
	default:
		return unavailable(out, -EINVAL, "unknown location kind%s%s", "", "");
	}
}

int jitmap_location_eval(const jitmap_stackmap *sm, const jitmap_record *rec,
			 const jitmap_location *loc, const jitmap_target *t, jitmap_value *out)
{
	return eval(sm, rec, loc, t, 0, out);
}

int jitmap_location_eval_frame(const jitmap_stackmap *sm, const jitmap_record *rec,
			       const jitmap_location *loc, const jitmap_target *t,
			       const jitmap_eval_opts *opts, jitmap_value *out)
{
	unsigned level = 0;

	if (opts) {
		if (!JITMAP__OPTS_VALID(opts, frame_level)) {
			memset(out, 0, sizeof(*out));
			return unavailable(out, -EINVAL, "jitmap_eval_opts: sz is too small, or "
					   "fields this libjitmap does not know are set%s%s", "", "");
		}
		if (JITMAP_OPTS_HAS(opts, frame_level))
			level = opts->frame_level;
	}
	return eval(sm, rec, loc, t, level, out);
}
