/* producer_internal.h: what the unit tests see of producer.c beyond the public API. */
#ifndef JITMAP_PRODUCER_INTERNAL_H
#define JITMAP_PRODUCER_INTERNAL_H

/* Called (when set) right after each `__jit_debug_register_code` call, with the registration
 * lock held and the descriptor as the debugger sees it at its breakpoint. Tests use it to check
 * action_flag, relevant_entry and the list at every notice, which a debugger would otherwise
 * be needed for. Not exported from the shared library. */
extern void (*jitmap__jit_observer)(void);

#endif /* JITMAP_PRODUCER_INTERNAL_H */
