/* test_frame.c: the frame model and the renderer (jitmap/frame.h).
 *
 * A JIT region lives in this process (code bytes, a stackmap written with sm_builder),
 * registered as libjitmap-producer builds its image and handed to a jitmap_process as a
 * debugger hands images in; frames are described through a fake frame (a register table and
 * a stack buffer). Checked: which record a frame is at (exact; a patchpoint's call sequence
 * before a return address; none, with the nearest), every way a value reads in text and JSON,
 * the outer-frame rule, statepoint roles and GC rows, names and interpreter frames handed in,
 * and JSON that stays valid whatever bytes a function name holds. */
#include "unit.h"

#include "jitmap/frame.h"
#include "jitmap/process.h"
#include "jitmap/producer.h"

/* -- The world: code, its stackmap, a process -- */

enum { R_RAX = 0, R_RBX = 3, R_RBP = 6, R_RSP = 7, R_R12 = 12, R_XMM0 = 17 };

static uint8_t code[256] __attribute__((aligned(16)));
static uint64_t stack[8];
static sm_bytes section;

struct world {
	jitmap_process *p;
	void *image;
	size_t image_size;
};

/* Reads what this process holds: the code, the stack map section, the stack. */
static int self_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	(void)ctx;
	const struct {
		const void *p;
		size_t n;
	} r[] = {{code, sizeof(code)}, {stack, sizeof(stack)}, {section.data, section.len}};
	for (size_t i = 0; i < ARRAY_LEN(r); i++) {
		const uint64_t lo = (uint64_t)(uintptr_t)r[i].p;
		if (addr >= lo && addr - lo <= r[i].n && len <= r[i].n - (addr - lo)) {
			memcpy(buf, (const void *)(uintptr_t)addr, len);
			return 0;
		}
	}
	snprintf(why, why_len, "nothing at 0x%llx", (unsigned long long)addr);
	return -EFAULT;
}

/* The process's own reads (its target), counted: describing a frame makes none. */
static unsigned model_reads;

static int model_read(void *ctx, uint64_t addr, void *buf, size_t len, char *why, size_t why_len)
{
	model_reads++;
	return self_read(ctx, addr, buf, len, why, why_len);
}

#define FN_A 0   /* f: records 1 (at +16), 2 (at +40: a statepoint), 3 (at +60) */
#define FN_B 128 /* g: record 7 at +0 starts a patchpoint's call sequence */

static uint64_t at(unsigned off)
{
	return (uint64_t)(uintptr_t)code + off;
}

static void world_init(struct world *w, const char *fname)
{
	memset(w, 0, sizeof(*w));
	memset(code, 0x90, sizeof(code));
	/* g: movabs $0x1122334455667788, %r11; call *%r11 */
	static const uint8_t patch[] = {0x49, 0xbb, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
					0x41, 0xff, 0xd3};
	memcpy(code + FN_B, patch, sizeof(patch));
	for (size_t i = 0; i < ARRAY_LEN(stack); i++)
		stack[i] = 0x1000 + i;
	sm_builder b;
	smb_init(&b, 3, JITMAP_ORDER_LITTLE);
	const unsigned big = smb_constant(&b, UINT64_C(9000000000));
	smb_function(&b, at(FN_A), 40);
	smb_record(&b, 1, 16);
	smb_loc(&b, REG, 8, R_RBX, 0);      /* #0 rbx: 10 */
	smb_loc(&b, REG, 8, R_R12, 0);      /* #1 r12: -1200 */
	smb_loc(&b, REG, 8, R_RAX, 0);      /* #2 rax: caller-saved */
	smb_loc(&b, INDIRECT, 8, R_RSP, 8); /* #3 [rsp+8] */
	smb_loc(&b, DIRECT, 8, R_RSP, 16);  /* #4 rsp+16 */
	smb_loc(&b, CONST, 8, 0, -5);       /* #5 const -5 */
	smb_loc(&b, CIDX, 8, 0, (int32_t)big); /* #6 const#0 */
	smb_loc(&b, REG, 4, R_RBX, 0);      /* #7 ebx, 4 bytes: 10 */
	smb_loc(&b, INDIRECT, 8, R_RSP, 4096); /* #8 unreadable */
	smb_live_out(&b, R_RBX, 8);
	smb_record(&b, 2, 40); /* a statepoint: cc 0, flags 0, 1 deopt, a (base, derived) pair */
	smb_loc(&b, CONST, 8, 0, 0);
	smb_loc(&b, CONST, 8, 0, 0);
	smb_loc(&b, CONST, 8, 0, 1);
	smb_loc(&b, INDIRECT, 8, R_RSP, 0);  /* #3 deopt: 0x1000 */
	smb_loc(&b, INDIRECT, 8, R_RSP, 8);  /* #4 base 0x1001 */
	smb_loc(&b, INDIRECT, 8, R_RSP, 24); /* #5 derived 0x1003 */
	smb_record(&b, 3, 60);
	smb_function(&b, at(FN_B), 8);
	smb_record(&b, 7, 0);
	smb_loc(&b, REG, 8, R_RBX, 0);
	section = smb_emit(&b);
	const jitmap_jit_function fns[] = {{fname, at(FN_A), 100}, {"g", at(FN_B), 64}};
	const jitmap_jit_region region = {.address = at(0), .size = sizeof(code), .functions = fns,
					  .num_functions = 2, .stackmap = section.data,
					  .stackmap_size = section.len};
	jitmap_error err;
	assert_int_equal(jitmap_jit_build_image(&region, &w->image, &w->image_size, &err), 0);
	const jitmap_target t = {NULL, NULL, model_read};
	w->p = jitmap_process_new(&t, NULL);
	assert_non_null(w->p);
	uint64_t id;
	assert_int_equal(jitmap_process_add_image(w->p, w->image, w->image_size, "JIT image 1", &id),
			 0);
	assert_non_null(jitmap_process_image_stackmap(w->p, id));
}

static void world_free(struct world *w)
{
	jitmap_process_free(w->p);
	free(w->image);
	sm_bytes_free(&section);
}

/* -- A frame: registers by DWARF number, and the stack -- */

struct frame {
	uint64_t reg[32];
	uint32_t known;       /* bit n: reg[n] is known */
	uint32_t recovered;   /* bit n: recovered from a save slot */
};

static int frame_reg(void *ctx, unsigned regno, void *buf, size_t size, char *why,
		     size_t why_len)
{
	const struct frame *f = ctx;
	(void)why;
	(void)why_len;
	if (regno >= 32 || !(f->known >> regno & 1))
		return -ENOENT;
	if (size > 8) {
		memset(buf, 0xab, size);
		return 0;
	}
	memcpy(buf, &f->reg[regno], size); /* little-endian host */
	return (f->recovered >> regno & 1) ? JITMAP_REG_RECOVERED : 0;
}

static struct frame a_frame(void)
{
	struct frame f = {0};
	f.reg[R_RBX] = 10;
	f.reg[R_R12] = (uint64_t)-1200;
	f.reg[R_RAX] = 0xfffffffffffffdfc;
	f.reg[R_RSP] = (uint64_t)(uintptr_t)stack;
	f.known = 1u << R_RBX | 1u << R_R12 | 1u << R_RAX | 1u << R_RSP;
	return f;
}

static jitmap_frame_report *describe(struct world *w, struct frame *f, unsigned level,
				     uint64_t pc, bool ret)
{
	const jitmap_target t = {f, frame_reg, self_read};
	JITMAP_OPTS(const jitmap_frame_desc, d, .level = level, .pc = pc, .return_address = ret,
		    .arch = JITMAP_ARCH_X86_64, .function = "debugger_name", .target = &t);
	jitmap_frame_report *r = jitmap_frame_describe(w->p, &d);
	assert_non_null(r);
	return r;
}

/* -- A lookup is a lookup -- */

/* Describing a frame reads nothing of the process model, and drops or frees no image: not
 * after a stop (jitmap_process_recheck), not when the image's code changed since its first
 * use. The stop's refresh, at the debugger's next question, notices the stale image. */
static void test_describe_reads_nothing(void **state)
{
	(void)state;
	struct world w;
	world_init(&w, "f");
	struct frame f = a_frame();
	jitmap_code_info ci;
	assert_int_equal(jitmap_process_image_code_at(w.p, at(FN_A + 16), &ci), 0);
	const uint64_t id = ci.image_id;
	const jitmap_stackmap *sm = jitmap_process_image_stackmap(w.p, id);
	assert_non_null(sm);

	jitmap_process_recheck(w.p); /* a stop */
	code[FN_A] ^= 0xff;          /* the JIT rewrote the code it was first used with */
	const unsigned before = model_reads;
	for (int i = 0; i < 3; i++) {
		jitmap_frame_report *r = describe(&w, &f, 0, at(FN_A + 16), false);
		assert_int_equal(jitmap_frame_report_num_records(r), 1);
		jitmap_frame_report_free(r);
		r = describe(&w, &f, 1, at(FN_A + 17), true); /* a return address: no record */
		jitmap_frame_report_free(r);
	}
	assert_int_equal(model_reads, before);
	jitmap_dropped_image d[2];
	assert_int_equal(jitmap_process_take_dropped(w.p, d, 2), 0);
	jitmap_source_info si = {.sz = sizeof(si)};
	assert_int_equal(jitmap_process_image(w.p, id, &si), 0);
	assert_ptr_equal(si.stackmap, sm); /* not read again, not freed */

	/* The debugger's next question is the stop's refresh: the image goes, said why. */
	assert_int_equal(jitmap_process_image_code_at(w.p, at(FN_A + 16), &ci), -ENOENT);
	assert_true(model_reads > before);
	assert_int_equal(jitmap_process_take_dropped(w.p, d, 2), 1);
	assert_int_equal(d[0].id, id);
	assert_false(d[0].replaced);
	jitmap_frame_report *r = describe(&w, &f, 0, at(FN_A + 16), false);
	assert_int_equal(jitmap_frame_report_num_records(r), 0);
	jitmap_frame_report_free(r);
	code[FN_A] ^= 0xff;
	world_free(&w);
}

/* -- Values, as text and JSON -- */

static void test_values(void **state)
{
	(void)state;
	struct world w;
	world_init(&w, "f");
	struct frame f = a_frame();
	jitmap_frame_report *r = describe(&w, &f, 0, at(FN_A + 16), false);
	assert_int_equal(jitmap_frame_report_num_records(r), 1);
	char buf[64];
	const char *t = jitmap_frame_report_text(r, JITMAP_TEXT_FRAME, 0);
	snprintf(buf, sizeof(buf), "frame #0, pc 0x%llx in f\n", (unsigned long long)at(FN_A + 16));
	assert_contains(t, buf);
	snprintf(buf, sizeof(buf), "record 1 at 0x%llx (f+16), 9 locations, 1 live-out\n",
		 (unsigned long long)at(FN_A + 16));
	assert_contains(t, buf);
	assert_contains(t, "  function f at 0x");
	assert_contains(t, ", stack size 40; from JIT image 1\n");
	/* How each value reads. */
	assert_contains(t, "  #0   register       rbx                    size 8   10\n");
	assert_contains(t, "  #1   register       r12                    size 8   -1200 "
			   "(0xfffffffffffffb50)\n");
	assert_contains(t, "  #2   register       rax                    size 8   -516 "
			   "(0xfffffffffffffdfc)\n");
	assert_contains(t, "  #5   constant       const -5               size 8   -5 "
			   "(0xfffffffffffffffb)\n");
	assert_contains(t, "  #6   constant_index const#0 9000000000     size 8   9000000000 "
			   "(0x218711a00)\n");
	assert_contains(t, "  #7   register       rbx                    size 4   10\n");
	snprintf(buf, sizeof(buf), "size 8   4097  at 0x%llx\n",
		 (unsigned long long)(uintptr_t)&stack[1]);
	assert_contains(t, buf);
	snprintf(buf, sizeof(buf), "size 8   0x%llx (address)\n",
		 (unsigned long long)(uintptr_t)&stack[2]);
	assert_contains(t, buf);
	assert_contains(t, "size 8   <unavailable: memory at 0x");
	assert_contains(t, "  live-outs: rbx(8)\n");
	/* JSON: numbers unsigned, an address string for indirect locations, null + error. */
	const char *j = jitmap_frame_report_json(r, 0);
	assert_contains(j, "{\"frame\": 0, \"pc\": \"0x");
	assert_contains(j, "\"function\": \"f\", \"record\": {\"id\": 1, \"offset\": 16, ");
	assert_contains(j, "\"match\": \"exact\", \"source\": \"JIT image 1\"}");
	assert_contains(j, "{\"index\": 1, \"kind\": \"register\", \"where\": \"r12\", \"size\": 8, "
			   "\"value\": 18446744073709550416}");
	assert_contains(j, "{\"index\": 8, \"kind\": \"indirect\", \"where\": \"[rsp+4096]\", "
			   "\"size\": 8, \"value\": null, \"error\": \"memory at 0x");
	assert_contains(j, "\"live_outs\": [{\"register\": \"rbx\", \"size\": 8}], "
			   "\"statepoint\": null}");
	assert_null(strstr(j, "\"frame\": 0, \"frame\""));
	assert_null(strstr(jitmap_frame_report_json(r, JITMAP_JSON_NO_FRAME), "\"frame\""));
	const jitmap_stackmap *sm = NULL;
	const jitmap_record *rec = NULL;
	assert_int_equal(jitmap_frame_report_record(r, 0, &sm, &rec), 0);
	assert_true(sm && rec && rec->id == 1 && jitmap_record_pc(sm, rec) == at(FN_A + 16));
	assert_int_equal(jitmap_frame_report_record(r, 1, &sm, &rec), -ERANGE);
	jitmap_value v;
	assert_int_equal(jitmap_frame_report_value(r, 0, 1, &v), 0);
	assert_true(v.available && v.u == (uint64_t)-1200);
	assert_int_equal(jitmap_frame_report_value(r, 0, 9, &v), -ERANGE);
	assert_int_equal(jitmap_frame_report_value(r, 1, 0, &v), -ERANGE);
	jitmap_frame_report_free(r);
	world_free(&w);
}

/* In an outer frame a caller-saved register holds an inner frame's value: unavailable, with
 * the reason, unless the debugger recovered it from a save slot. */
static void test_outer_frame(void **state)
{
	(void)state;
	struct world w;
	world_init(&w, "f");
	struct frame f = a_frame();
	jitmap_frame_report *r = describe(&w, &f, 2, at(FN_A + 16), true);
	const char *t = jitmap_frame_report_text(r, JITMAP_TEXT_RECORDS, 4);
	assert_contains(t, "    record 1 at ");
	assert_contains(t, "      #2   register       rax                    size 8   <unavailable: "
			   "register rax not available: caller-saved, and not saved in frame 2>\n");
	assert_contains(t, "      #0   register       rbx                    size 8   10\n");
	jitmap_frame_report_free(r);
	f.recovered = 1u << R_RAX;
	r = describe(&w, &f, 2, at(FN_A + 16), true);
	assert_contains(jitmap_frame_report_text(r, JITMAP_TEXT_RECORDS, 0),
			"#2   register       rax                    size 8   -516 (0xfffffffffffffdfc)\n");
	jitmap_frame_report_free(r);
	/* Without a target nothing is read, and nothing is a number. */
	JITMAP_OPTS(const jitmap_frame_desc, d, .pc = at(FN_A + 16));
	r = jitmap_frame_describe(w.p, &d);
	assert_non_null(r);
	assert_contains(jitmap_frame_report_json(r, 0), "\"where\": \"rbx\", \"size\": 8, "
			"\"value\": null, \"error\": \"no registers to read\"");
	jitmap_frame_report_free(r);
	world_free(&w);
}

/* -- Statepoints: roles, GC roots -- */

static void test_statepoint(void **state)
{
	(void)state;
	struct world w;
	world_init(&w, "f");
	struct frame f = a_frame();
	jitmap_frame_report *r = describe(&w, &f, 1, at(FN_A + 40), true);
	assert_true(jitmap_frame_report_is_statepoint(r, 0));
	const char *t = jitmap_frame_report_text(r, JITMAP_TEXT_RECORDS, 0);
	assert_contains(t, ", 6 locations, 0 live-outs, statepoint\n");
	assert_contains(t, "  calling convention 0, flags 0, 1 deopt value, 1 gc root (a statepoint "
			   "by its shape)\n");
	assert_contains(t, "size 8   0  calling convention\n");
	assert_contains(t, "size 8   4096  at 0x");
	assert_contains(t, "  deopt\n");
	assert_contains(t, "  gc base\n");
	assert_contains(t, "  gc derived from #4, offset 2\n");
	const char *j = jitmap_frame_report_json(r, 0);
	assert_contains(j, "\"offset\": 2}], \"gc_allocas\": [], \"decoded\": \"shape\"}");
	char *header = strdup(jitmap_frame_report_text(r, JITMAP_TEXT_GC_HEADER, 0));
	assert_string_equal(header, "frame  function             record  base (slot = value)         "
			    "       derived (slot = value)             offset\n");
	free(header);
	char want[200];
	const char *rows = jitmap_frame_report_text(r, JITMAP_TEXT_GC_ROOTS, 0);
	snprintf(want, sizeof(want), "0x%llx = 0x1001", (unsigned long long)(uintptr_t)&stack[1]);
	assert_contains(rows, want);
	snprintf(want, sizeof(want), "0x%llx = 0x1003", (unsigned long long)(uintptr_t)&stack[3]);
	assert_contains(rows, want);
	assert_contains(rows, "#1     f                    2       ");
	assert_int_equal(rows[strlen(rows) - 3], ' ');
	assert_string_equal(rows + strlen(rows) - 2, "2\n");
	jitmap_frame_report_free(r);
	world_free(&w);
}

/* -- Which record -- */

static void test_nearest(void **state)
{
	(void)state;
	struct world w;
	world_init(&w, "f");
	struct frame f = a_frame();
	jitmap_frame_report *r = describe(&w, &f, 0, at(FN_A + 19), false);
	assert_int_equal(jitmap_frame_report_num_records(r), 0);
	char want[256];
	snprintf(want, sizeof(want), "frame 0 (pc 0x%llx, in f) is not at a stackmap record; nearest "
		 "in f: record 1 at 0x%llx (3 bytes before), record 2 at 0x%llx (21 bytes after)",
		 (unsigned long long)at(FN_A + 19), (unsigned long long)at(FN_A + 16),
		 (unsigned long long)at(FN_A + 40));
	assert_string_equal(jitmap_frame_report_text(r, JITMAP_TEXT_NO_RECORD, 0), want);
	assert_string_equal(jitmap_frame_report_text(r, JITMAP_TEXT_RECORDS, 0), "");
	const char *j = jitmap_frame_report_json(r, 0);
	assert_contains(j, "\"record\": null, \"locations\": [], \"live_outs\": [], \"statepoint\": "
			   "null, \"nearest\": [{\"id\": 1, ");
	assert_contains(j, "\"distance\": -3}, {\"id\": 2, ");
	jitmap_frame_report_free(r);
	/* An outer frame says a record is only shown where it describes. */
	r = describe(&w, &f, 3, at(FN_A + 19), true);
	assert_contains(jitmap_frame_report_text(r, JITMAP_TEXT_NO_RECORD, 0),
			"(21 bytes after). A record is only shown at the PC it describes");
	jitmap_frame_report_free(r);
	/* Outside every stackmap function. */
	r = describe(&w, &f, 0, UINT64_C(0x1000), false);
	assert_contains(jitmap_frame_report_text(r, JITMAP_TEXT_FRAME, 0),
			"frame #0, pc 0x1000 in debugger_name\nframe 0 (pc 0x1000, in debugger_name) is "
			"not at a stackmap record (no stackmap describes the code there)\n");
	jitmap_frame_report_free(r);
	world_free(&w);
}

/* A patchpoint's record is at the start of its call sequence; an outer frame's PC, after the
 * call: matched there only when the code between is one call sequence ending at that PC. */
static void test_call_sequence(void **state)
{
	(void)state;
	struct world w;
	world_init(&w, "f");
	struct frame f = a_frame();
	jitmap_frame_report *r = describe(&w, &f, 1, at(FN_B + 13), true);
	assert_int_equal(jitmap_frame_report_num_records(r), 1);
	const char *j = jitmap_frame_report_json(r, 0);
	assert_contains(j, "\"id\": 7, ");
	assert_contains(j, "\"match\": \"call\", ");
	assert_contains(j, "\"distance\": 13, \"note\": \"the call sequence that starts at the record "
			   "returns here");
	assert_contains(jitmap_frame_report_text(r, JITMAP_TEXT_RECORDS, 0),
			"  the record is 13 bytes before this frame's PC: the call sequence");
	jitmap_frame_report_free(r);
	/* Frame 0 at the same PC stopped there: not a return address, no call to match. */
	r = describe(&w, &f, 0, at(FN_B + 13), false);
	assert_int_equal(jitmap_frame_report_num_records(r), 0);
	jitmap_frame_report_free(r);
	/* A return address that does not end the call: no match. */
	r = describe(&w, &f, 1, at(FN_B + 12), true);
	assert_int_equal(jitmap_frame_report_num_records(r), 0);
	jitmap_frame_report_free(r);
	world_free(&w);
}

/* -- What a front end adds -- */

static void test_names_and_vframes(void **state)
{
	(void)state;
	struct world w;
	world_init(&w, "f");
	struct frame f = a_frame();
	jitmap_frame_report *r = describe(&w, &f, 0, at(FN_A + 40), false);
	assert_int_equal(jitmap_frame_report_name(r, 0, 3, "bci"), 0);
	assert_int_equal(jitmap_frame_report_name(r, 0, 6, "x"), -ERANGE);
	assert_int_equal(jitmap_frame_report_name(r, 1, 0, "x"), -ERANGE);
	assert_int_equal(jitmap_frame_report_add_vslot(r, 0, false, 0, "x"), -ERANGE);
	assert_int_equal(jitmap_frame_report_add_vframe(r, 0, JITMAP_VREF_NAME, 0, "Demo.run",
							JITMAP_VREF_DEOPT, 0), 0);
	assert_int_equal(jitmap_frame_report_add_vslot(r, 0, false, 0, NULL), 0);
	assert_int_equal(jitmap_frame_report_add_vslot(r, 0, true, 5, NULL), 0);
	assert_int_equal(jitmap_frame_report_add_vframe(r, 0, JITMAP_VREF_DEOPT, 0, NULL,
							JITMAP_VREF_NONE, 0), 0);
	assert_int_equal(jitmap_frame_report_add_vframe(r, 0, 9, 0, NULL, 0, 0), -EINVAL);
	assert_int_equal(jitmap_frame_report_add_vframe(r, 0, JITMAP_VREF_NUMBER, 0, NULL,
							JITMAP_VREF_NAME, 0), -EINVAL);
	const char *t = jitmap_frame_report_text(r, JITMAP_TEXT_RECORDS, 0);
	assert_contains(t, "size 8   4096  at 0x");
	assert_contains(t, "  deopt  [bci]\n");
	assert_contains(t, "  virtual frame 0: Demo.run, bci 4096\n    local bci = 4096\n"
			   "    (stack: deopt index 5 past the 1 values)\n"
			   "  virtual frame 1: method 4096\n");
	assert_string_equal(jitmap_frame_report_text(r, JITMAP_TEXT_VFRAMES, 4),
			    "    [Demo.run, bci 4096]  bci = 4096, (stack: deopt index 5 past the 1 "
			    "values)\n    [method 4096]\n");
	const char *j = jitmap_frame_report_json(r, 0);
	assert_contains(j, "\"virtual_frames\": [{\"method\": \"Demo.run\", \"bci\": 4096, \"title\": "
			   "\"Demo.run, bci 4096\", \"locals\": [{\"index\": 3, ");
	assert_contains(j, "\"name\": \"bci\"}], \"stack\": [], \"error\": \"stack: deopt index 5 "
			   "past the 1 values\"}, {\"method\": 4096, \"bci\": null, \"title\": \"method "
			   "4096\", \"locals\": [], \"stack\": []}]}");
	/* The frame in a backtrace, its interpreter frames under it. */
	char line[160];
	snprintf(line, sizeof(line), "frame #0: 0x%llx f, record 2 (statepoint)\n",
		 (unsigned long long)at(FN_A + 40));
	t = jitmap_frame_report_text(r, JITMAP_TEXT_BT, 0);
	assert_int_equal(strncmp(t, line, strlen(line)), 0);
	assert_string_equal(t + strlen(line), "    [Demo.run, bci 4096]  bci = 4096, (stack: deopt "
			    "index 5 past the 1 values)\n    [method 4096]\n");
	/* Its values as a debugger's variables: the name handed in, then the GC roots' default
	 * names; the interpreter frames' locals, and what could not be applied. */
	j = jitmap_frame_report_json(r, JITMAP_JSON_VARIABLES);
	assert_contains(j, "{\"variables\": [{\"name\": \"bci\", \"gc\": false, \"location\": "
			   "{\"index\": 3, ");
	assert_contains(j, "{\"name\": \"gc_base0\", \"gc\": true, \"location\": {\"index\": 4, ");
	assert_contains(j, "{\"name\": \"gc_derived0\", \"gc\": true, \"location\": "
			   "{\"index\": 5, ");
	assert_contains(j, "\"virtual_frames\": [[{\"name\": \"bci\", \"location\": {\"index\": 3, ");
	assert_contains(j, "{\"name\": \"error\", \"location\": {\"value\": null, \"error\": "
			   "\"stack: deopt index 5 past the 1 values\"}}], []]}");
	jitmap_frame_report_free(r);

	/* Another record's are its locations, by index. */
	r = describe(&w, &f, 0, at(FN_A + 16), false);
	j = jitmap_frame_report_json(r, JITMAP_JSON_VARIABLES);
	assert_contains(j, "{\"variables\": [{\"name\": \"loc0\", \"gc\": false, ");
	assert_contains(j, "{\"name\": \"loc8\", \"gc\": false, \"location\": {\"index\": 8, ");
	assert_contains(j, "], \"virtual_frames\": []}");
	jitmap_frame_report_free(r);
	/* No record: no variables; the line names the debugger's function. */
	r = describe(&w, &f, 3, at(FN_A + 17), false);
	assert_string_equal(jitmap_frame_report_json(r, JITMAP_JSON_VARIABLES),
			    "{\"variables\": [], \"virtual_frames\": []}");
	snprintf(line, sizeof(line), "frame #3: 0x%llx f\n", (unsigned long long)at(FN_A + 17));
	assert_string_equal(jitmap_frame_report_text(r, JITMAP_TEXT_BT, 0), line);
	jitmap_frame_report_free(r);
	world_free(&w);
}

/* -- verify: a frame against the debugger's unwinding -- */

static void test_verify(void **state)
{
	(void)state;
	struct world w;
	world_init(&w, "f");
	struct frame f = a_frame();
	jitmap_frame_report *r = describe(&w, &f, 0, at(FN_A + 16), false);
	const uint64_t sp = (uint64_t)(uintptr_t)stack;
	/* f's frame is 40 bytes and the call pushed 8: a CFA 48 above SP agrees; location 8
	 * ([rsp+4096]) lies outside the frame all the same. */
	const char *v = jitmap_frame_report_verify(r, sp, sp + 48);
	assert_non_null(v);
	assert_null(strstr(v, "frame-size"));
	assert_contains(v, "[{\"record\": 0, \"check\": \"stack-slot\", \"detail\": \"frame #0: "
			   "location 8 ([rsp+4096]) spans 0x");
	assert_null(strstr(v, "location 3"));
	assert_null(strstr(v, "location 4"));
	/* A CFA 8 bytes off. */
	v = jitmap_frame_report_verify(r, sp, sp + 56);
	assert_contains(v, "{\"record\": 0, \"check\": \"frame-size\", \"detail\": \"frame #0: the "
			   "stackmap's frame is 40 bytes + 8 (return address) = 48, the unwinder's "
			   "CFA - SP is 56: one of them is wrong\"}");
	/* A CFA below the slots at rsp+8 and rsp+16. */
	v = jitmap_frame_report_verify(r, sp, sp + 12);
	assert_contains(v, "location 4 (rsp+16) spans");
	assert_contains(v, "location 3 ([rsp+8]) spans");
	jitmap_frame_report_free(r);
	assert_null(jitmap_frame_report_verify(NULL, 0, 0));
	/* An architecture whose rule jitmap does not know: nothing checked. */
	const jitmap_target t = {&f, frame_reg, self_read};
	const jitmap_frame_desc d = {.sz = sizeof(d), .pc = at(FN_A + 16), .target = &t};
	r = jitmap_frame_describe(w.p, &d);
	assert_non_null(r);
	assert_string_equal(jitmap_frame_report_verify(r, sp, sp + 56), "[]");
	jitmap_frame_report_free(r);
	world_free(&w);
}

/* -- JSON stays valid whatever a name holds -- */

static void test_json_strings(void **state)
{
	(void)state;
	char buf[128];
	assert_int_equal(jitmap_json_string("a\"b\\c\n\x01", buf, sizeof(buf)), 17);
	assert_string_equal(buf, "\"a\\\"b\\\\c\\n\\u0001\"");
	/* Bytes that are not UTF-8: U+FFFD each; valid UTF-8 escaped as \u, astral as a pair. */
	jitmap_json_string("x\xff\xc3(\xe2\x82\xac\xf0\x9f\x98\x80\xed\xa0\x80", buf, sizeof(buf));
	assert_string_equal(buf, "\"x\\ufffd\\ufffd(\\u20ac\\ud83d\\ude00\\ufffd\\ufffd\\ufffd\"");
	assert_int_equal(jitmap_json_string(NULL, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "null");
	/* Truncated like snprintf: the whole length is returned. */
	assert_int_equal(jitmap_json_string("abcdef", buf, 4), 8);
	assert_string_equal(buf, "\"ab");
	assert_int_equal(jitmap_json_string("abc", NULL, 0), 5);

	/* A JIT function whose name is not UTF-8 (a damaged string table). */
	struct world w;
	world_init(&w, "bad\xff\xfename");
	struct frame f = a_frame();
	jitmap_frame_report *r = describe(&w, &f, 0, at(FN_A + 16), false);
	assert_contains(jitmap_frame_report_json(r, 0), "\"function\": \"bad\\ufffd\\ufffdname\"");
	assert_contains(jitmap_frame_report_text(r, JITMAP_TEXT_FRAME, 0),
			" in bad\xef\xbf\xbd\xef\xbf\xbdname\n");
	jitmap_frame_report_free(r);
	world_free(&w);
}

static void test_arguments(void **state)
{
	(void)state;
	struct world w;
	world_init(&w, "f");
	JITMAP_OPTS(jitmap_frame_desc, d, .pc = at(FN_A + 16));
	assert_null(jitmap_frame_describe(NULL, &d));
	assert_int_equal(errno, EINVAL);
	assert_null(jitmap_frame_describe(w.p, NULL));
	d.sz = 4;
	assert_null(jitmap_frame_describe(w.p, &d));
	assert_int_equal(errno, EINVAL);
	assert_null(jitmap_frame_report_json(NULL, 0));
	d.sz = sizeof(d);
	jitmap_frame_report *r = jitmap_frame_describe(w.p, &d);
	assert_null(jitmap_frame_report_text(r, (jitmap_text_part)99, 0));
	assert_int_equal(errno, EINVAL);
	jitmap_frame_report_free(r);
	jitmap_frame_report_free(NULL);
	world_free(&w);
}

/* -- The frame's registers, each known or why not -- */

static void test_registers(void **state)
{
	(void)state;
	struct world w;
	world_init(&w, "f");
	struct frame f = a_frame();
	const jitmap_target t = {&f, frame_reg, self_read};
	JITMAP_OPTS(const jitmap_frame_desc, d, .level = 2, .pc = at(FN_A + 16),
		    .return_address = true, .arch = JITMAP_ARCH_X86_64, .target = &t,
		    .flags = JITMAP_DESCRIBE_REGISTERS);
	jitmap_frame_report *r = jitmap_frame_describe(w.p, &d);
	assert_non_null(r);
	assert_int_equal(jitmap_frame_report_num_registers(r), 17); /* rax..r15, rip */
	unsigned regno;
	const char *name;
	jitmap_value v;
	assert_int_equal(jitmap_frame_report_register(r, 3, &regno, &name, &v), 0);
	assert_true(regno == R_RBX && !strcmp(name, "rbx") && v.available && v.u == 10);
	assert_int_equal(jitmap_frame_report_register(r, 0, &regno, &name, &v), 0);
	assert_true(regno == R_RAX && !v.available);
	assert_string_equal(v.why, "caller-saved, and not saved in frame 2");
	assert_int_equal(jitmap_frame_report_register(r, 13, &regno, &name, &v), 0);
	assert_string_equal(v.why, "not saved in frame 2"); /* r13: callee-saved, not known */
	assert_int_equal(jitmap_frame_report_register(r, 17, NULL, NULL, &v), -ERANGE);
	const char *text = jitmap_frame_report_text(r, JITMAP_TEXT_REGISTERS, 2);
	assert_contains(text, "  rax      <unavailable: caller-saved, and not saved in frame 2>\n"
			      "  rdx      <unavailable: caller-saved, and not saved in frame 2>\n");
	assert_contains(text, "  rbx      0x000000000000000a\n");
	assert_contains(jitmap_frame_report_json(r, 0), ", \"registers\": [{\"register\": \"rax\", "
			"\"dwarf_reg\": 0, \"value\": null, \"error\": \"caller-saved, and not saved in "
			"frame 2\"}, ");
	const char *regs = jitmap_frame_report_json(r, JITMAP_JSON_REGISTERS);
	assert_true(regs[0] == '[');
	assert_contains(regs, "{\"register\": \"rbx\", \"dwarf_reg\": 3, \"value\": \"0xa\"}");
	jitmap_frame_report_free(r);
	/* Without the flag: none listed, and none in the object. */
	r = describe(&w, &f, 2, at(FN_A + 16), true);
	assert_int_equal(jitmap_frame_report_num_registers(r), 0);
	assert_null(strstr(jitmap_frame_report_json(r, 0), "registers"));
	assert_string_equal(jitmap_frame_report_json(r, JITMAP_JSON_REGISTERS), "[]");
	jitmap_frame_report_free(r);
	world_free(&w);
}

/* -- Structs the library fills carry the caller's size -- */

static void test_sized_info(void **state)
{
	(void)state;
	struct world w;
	world_init(&w, "f");
	/* A caller that knows only the first fields gets those, and nothing past them. */
	jitmap_source_info si;
	memset(&si, 0xee, sizeof(si));
	si.sz = offsetof(jitmap_source_info, descriptor);
	assert_int_equal(jitmap_process_image(w.p, 1, &si), 0);
	assert_int_equal(si.kind, JITMAP_SOURCE_JIT);
	assert_string_equal(si.name, "JIT image 1");
	assert_int_equal(si.descriptor, UINT64_C(0xeeeeeeeeeeeeeeee));
	assert_int_equal(si.sz, offsetof(jitmap_source_info, descriptor));
	si.sz = sizeof(si);
	assert_int_equal(jitmap_process_image(w.p, 1, &si), 0);
	assert_int_equal(si.descriptor, 0);
	si.sz = 0;
	assert_int_equal(jitmap_process_image(w.p, 1, &si), -EINVAL);
	world_free(&w);
}

/* -- Records without a frame (jitmap-dump) -- */

static void test_static_record(void **state)
{
	(void)state;
	struct world w;
	world_init(&w, "f");
	jitmap_stackmap *sm = parse_ok(section.data, section.len, JITMAP_ORDER_LITTLE,
				       JITMAP_ARCH_X86_64);
	const jitmap_record *rec = jitmap_stackmap_record(sm, 1);
	char *t = jitmap_record_text(sm, rec, JITMAP_STATEPOINT_AUTO, NULL, 0, 4);
	assert_contains(t, "    record 2 at 0x");
	assert_contains(t, "(?+40), 6 locations, 0 live-outs, statepoint\n"
			   "      calling convention 0, flags 0, 1 deopt value, 1 gc root (a statepoint "
			   "by its shape)\n"
			   "      #0   constant       const 0                size 8  calling "
			   "convention\n");
	assert_contains(t, "      #5   indirect       [rsp+24]               size 8  gc derived from "
			   "#4\n");
	free(t);
	const uint64_t ids[] = {2};
	t = jitmap_record_text(sm, rec, JITMAP_STATEPOINT_AUTO, ids, 1, 0);
	assert_null(strstr(t, "statepoint"));
	free(t);
	t = jitmap_record_text(sm, jitmap_stackmap_record(sm, 0), JITMAP_STATEPOINT_ALL, NULL, 0, 0);
	assert_contains(t, "  (record 1 does not have a statepoint's shape: ");
	free(t);
	char *j = jitmap_record_json(sm, rec, JITMAP_STATEPOINT_AUTO, NULL, 0);
	assert_contains(j, "{\"id\": 2, \"offset\": 40, \"section_offset\": ");
	assert_contains(j, "\"gc_roots\": [{\"base\": {\"index\": 4, \"kind\": \"indirect\", "
			   "\"where\": \"[rsp+8]\", \"size\": 8, \"dwarf_reg\": 7, \"offset\": 8}");
	free(j);
	jitmap_stackmap_free(sm);
	world_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),          cmocka_unit_test(test_outer_frame),
		cmocka_unit_test(test_statepoint),      cmocka_unit_test(test_nearest),
		cmocka_unit_test(test_call_sequence),   cmocka_unit_test(test_names_and_vframes),
		cmocka_unit_test(test_json_strings),    cmocka_unit_test(test_arguments),
		cmocka_unit_test(test_static_record),   cmocka_unit_test(test_sized_info),
		cmocka_unit_test(test_registers),       cmocka_unit_test(test_verify),
		cmocka_unit_test(test_describe_reads_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
