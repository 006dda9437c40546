/* deopt_layout.h (private, not installed): the `.jitmap_deopt` section, the one statement of
 * its layout in jitmap. libjitmap-producer writes it into the image a JIT registers
 * (producer/layout.c), libjitmap reads it (reader/layout.c); docs/deopt-layouts.md is the
 * user's description.
 *
 * A runtime's deopt layouts: for a stackmap record (by ID, optionally only in one function),
 * how its deopt values form the interpreter frames its compiled code stands for. Every field
 * is in the image's byte order and naturally aligned; the section is 8-aligned:
 *
 *   header   (24 bytes)  char magic[4] "JMDL"; u16 version (1); u16 header_size (24);
 *                        u32 num_layouts; u32 num_frames; u32 num_slots; u32 strings_size
 *   layouts  (24 bytes each)  u64 record_id; u32 function (a string ref, 0: any function);
 *                        u32 first_frame; u32 num_frames; u32 reserved (0)
 *   frames   (32 bytes each, innermost first within a layout)
 *                        u64 method; u64 bci; u8 method_kind; u8 bci_kind; u16 reserved (0);
 *                        u32 first_slot; u16 num_locals; u16 num_stack; u32 reserved (0)
 *   slots    (8 bytes each: a frame's locals, then its stack)
 *                        u32 index (a deopt value's index); u32 name (a string ref, 0: none)
 *   strings  (strings_size bytes) NUL-terminated; a string ref k > 0 is the string at
 *                        offset k - 1
 *
 * A value's kind: JITMAP_VREF_* (types.h): NONE (bci only), NUMBER (the u64 itself), DEOPT
 * (the u64 is a deopt index, < 2^32), NAME (method only: the u64 is a string ref). A reader
 * accepts a header_size of 24 or more (later versions may append fields) and ignores bytes
 * after the strings. */
#ifndef JITMAP_COMMON_DEOPT_LAYOUT_H
#define JITMAP_COMMON_DEOPT_LAYOUT_H

#define JITMAP__DL_SECTION ".jitmap_deopt"
#define JITMAP__DL_MAGIC "JMDL"
#define JITMAP__DL_VERSION 1

#define JITMAP__DL_HEADER 24
#define JITMAP__DL_LAYOUT 24
#define JITMAP__DL_FRAME 32
#define JITMAP__DL_SLOT 8

/* Field offsets. */
#define JITMAP__DL_H_VERSION 4
#define JITMAP__DL_H_HEADER_SIZE 6
#define JITMAP__DL_H_LAYOUTS 8
#define JITMAP__DL_H_FRAMES 12
#define JITMAP__DL_H_SLOTS 16
#define JITMAP__DL_H_STRINGS 20

#define JITMAP__DL_L_ID 0
#define JITMAP__DL_L_FUNCTION 8
#define JITMAP__DL_L_FIRST 12
#define JITMAP__DL_L_COUNT 16

#define JITMAP__DL_F_METHOD 0
#define JITMAP__DL_F_BCI 8
#define JITMAP__DL_F_METHOD_KIND 16
#define JITMAP__DL_F_BCI_KIND 17
#define JITMAP__DL_F_FIRST_SLOT 20
#define JITMAP__DL_F_LOCALS 24
#define JITMAP__DL_F_STACK 26

#define JITMAP__DL_S_INDEX 0
#define JITMAP__DL_S_NAME 4

#endif /* JITMAP_COMMON_DEOPT_LAYOUT_H */
