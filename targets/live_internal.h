/* live_internal.h: a live process's object, shared by live.c (threads, stops, memory) and
 * live_maps.c (its /proc/PID/maps). Not installed. */
#ifndef JITMAP_TARGETS_LIVE_INTERNAL_H
#define JITMAP_TARGETS_LIVE_INTERNAL_H

#include "internal.h"
#include "jitmap/live.h"

#define JITMAP__LIVE_MAX_WARNINGS 8

/* A line of /proc/PID/maps. */
struct jitmap__mapping {
	uint64_t start, end, offset, inode;
	unsigned dev_major, dev_minor;
	char perms[5];
	bool deleted;      /* the path ends in " (deleted)", which is not part of it */
	char *path;        /* NULL for an anonymous mapping; "[stack]" and the like kept */
};

struct jitmap__live {
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
	struct jitmap__problems warnings; /* up to JITMAP__LIVE_MAX_WARNINGS */
	uint8_t warn_status[JITMAP__LIVE_MAX_WARNINGS]; /* each one's: JITMAP__WARN */
	struct jitmap__mapping *maps; /* /proc/PID/maps, sorted by start, read at the first need */
	size_t nmaps;
	int maps_read;        /* 0: not yet; 1: read; a negative errno: unreadable */
	/* Asked as a stopped process (live_stopped.c): its file mappings (their paths owned),
	 * made once; /proc/PID/auxv, read once. */
	jitmap_stopped_mapping_info *files;
	size_t nfiles;
	bool files_made, auxv_read;
	uint64_t *auxv; /* pairs */
	size_t nauxv;
};

/* The modes whose stacks are copied, and whose threads run once open returns. */
#define JITMAP__LIVE_CAPTURED (JITMAP_LIVE_BY_THREAD | JITMAP_LIVE_SNAPSHOT)

/* -- live.c: stopping, letting go -- */

jitmap__live *jitmap__live_open(pid_t pid, const jitmap__live_opts *opts, jitmap_error *err);
int jitmap__live_detach(jitmap__live *l);
void jitmap__live_free(jitmap__live *l);

/* -- live_memory.c -- */

/* pread(2) of /proc/PID/mem, the page cache's read call (`ctx`: the jitmap__live). */
long jitmap__live_mem_pread(void *ctx, void *buf, size_t len, uint64_t addr);
jitmap_target jitmap__live_target(jitmap__live *l);
jitmap_target jitmap__live_thread_target(jitmap__live *l, size_t i);
jitmap_target jitmap__live_thread_stack_target(jitmap__live *l, size_t i);

/* -- live_maps.c, live_stopped.c: stopped.h's calls of the same names, for a process -- */

int jitmap__live_code_at(jitmap__live *l, uint64_t pc, char *why, size_t why_len);
int jitmap__live_mapped_file(jitmap__live *l, uint64_t addr, char *path, size_t path_len,
			     char *why, size_t why_len);
size_t jitmap__live_build_id_at(jitmap__live *l, uint64_t addr, uint8_t *out, size_t len);

/* -- live_stopped.c: the same, and what a process says of itself -- */

pid_t jitmap__live_pid(const jitmap__live *l);
const char *jitmap__live_name(const jitmap__live *l);
jitmap_arch jitmap__live_arch(const jitmap__live *l);
jitmap_byte_order jitmap__live_byte_order(const jitmap__live *l);
size_t jitmap__live_num_threads(const jitmap__live *l);
bool jitmap__live_stopped(const jitmap__live *l);
const char *jitmap__live_warning(const jitmap__live *l, size_t i);
int jitmap__live_memory(jitmap__live *l, uint64_t addr, jitmap_stopped_memory_info *out);
size_t jitmap__live_num_mappings(jitmap__live *l);
const jitmap_stopped_mapping_info *jitmap__live_mapping(jitmap__live *l, size_t i);
int jitmap__live_auxv(jitmap__live *l, uint64_t type, uint64_t *value);

/* /proc/PID/maps, read at the first need and kept (a zombie leader's process: a living
 * thread's): 0, or a negative errno. */
int jitmap__live_read_mappings(jitmap__live *l);
/* The mappings read again at the next need. */
void jitmap__live_forget_mappings(jitmap__live *l);
/* The mapping holding `addr`, or NULL. */
const struct jitmap__mapping *jitmap__live_mapping_at(const jitmap__live *l, uint64_t addr);
/* The same, the mappings read at the first need; NULL also when they cannot be read. */
const struct jitmap__mapping *jitmap__live_mapping_now(jitmap__live *l, uint64_t addr);

#endif /* JITMAP_TARGETS_LIVE_INTERNAL_H */
