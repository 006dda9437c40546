/* null_reader.c: the smallest JIT reader GDB accepts: it declines every entry and unwinds no
 * frame. test_gdb_hostile.sh loads it to tell what any reader provokes in GDB (its own code
 * around the reader) from what jitmap's reader does. */
#include <gdb/jit-reader.h>

#pragma GCC visibility push(default)
GDB_DECLARE_GPL_COMPATIBLE_READER
struct gdb_reader_funcs *gdb_init_reader(void);
#pragma GCC visibility pop

static enum gdb_status read_debug_info(struct gdb_reader_funcs *self,
				       struct gdb_symbol_callbacks *cb, void *memory, long size)
{
	(void)self, (void)cb, (void)memory, (void)size;
	return GDB_FAIL;
}

static enum gdb_status unwind_frame(struct gdb_reader_funcs *self, struct gdb_unwind_callbacks *cb)
{
	(void)self, (void)cb;
	return GDB_FAIL;
}

static struct gdb_frame_id get_frame_id(struct gdb_reader_funcs *self,
					struct gdb_unwind_callbacks *cb)
{
	(void)self, (void)cb;
	return (struct gdb_frame_id){0, 0};
}

static void destroy(struct gdb_reader_funcs *self)
{
	(void)self;
}

static struct gdb_reader_funcs funcs = {GDB_READER_INTERFACE_VERSION, 0, read_debug_info,
					unwind_frame, get_frame_id, destroy};

struct gdb_reader_funcs *gdb_init_reader(void)
{
	return &funcs;
}
