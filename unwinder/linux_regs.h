/* linux_regs.h (internal): Linux's general registers of a thread as DWARF-numbered values, for
 * the readers of cores (reader/core.c) and live processes (reader/live.c). */
#ifndef JITMAP_LINUX_REGS_H
#define JITMAP_LINUX_REGS_H

#include <stddef.h>
#include <stdint.h>

#include "jitmap/jitmap.h"

/* Linux's general registers (`len` bytes at `p`, byte order `order`) as DWARF-numbered
 * values, in pr_reg's order: stores up to `max` (regno[i], value[i]) pairs and returns how
 * many the layout holds within `len` (0 where no layout is known). */
size_t jitmap__linux_gregs(jitmap_arch arch, jitmap_byte_order order, const uint8_t *p,
			   size_t len, uint16_t *regno, uint64_t *value, size_t max);

#endif /* JITMAP_LINUX_REGS_H */
