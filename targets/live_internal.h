/* live_internal.h: a live process's object, shared by live.c (threads, stops, memory) and
 * live_maps.c (its /proc/PID/maps). Not installed. */
#ifndef JITMAP_TARGETS_LIVE_INTERNAL_H
#define JITMAP_TARGETS_LIVE_INTERNAL_H

#include "internal.h"
#include "jitmap/live.h"

/* A line of /proc/PID/maps. */
struct mapping {
	uint64_t start, end, offset, inode;
	unsigned dev_major, dev_minor;
	char perms[5];
	bool deleted;      /* the path ends in " (deleted)", which is not part of it */
	char *path;        /* NULL for an anonymous mapping; "[stack]" and the like kept */
};

struct jitmap_live {
	pid_t pid;
	pid_t tracer; /* the thread that attached: the only one Linux lets detach */
	char name[64];
	jitmap_arch arch;
	jitmap_byte_order order;
	unsigned flags;
	size_t max_threads;
	unsigned max_rounds;
	size_t stack_bytes; /* JITMAP_LIVE_BY_THREAD: a thread's stack captured at most */
	const volatile sig_atomic_t *interrupt;
	struct jitmap__threads threads;
	int mem_fd;
	struct jitmap__pagecache cache;
	struct jitmap__problems warnings; /* up to MAX_WARNINGS */
	struct mapping *maps; /* /proc/PID/maps, sorted by start, read at the first need */
	size_t nmaps;
	int maps_read;        /* 0: not yet; 1: read; a negative errno: unreadable */
};

/* /proc/PID/maps, read at the first need and kept (a zombie leader's process: a living
 * thread's): 0, or a negative errno. */
int jitmap__live_read_mappings(jitmap_live *l);
/* The mappings read again at the next need. */
void jitmap__live_forget_mappings(jitmap_live *l);
/* The mapping holding `addr`, or NULL. */
const struct mapping *jitmap__live_mapping_at(const jitmap_live *l, uint64_t addr);

#endif /* JITMAP_TARGETS_LIVE_INTERNAL_H */
