/* heartbeat.c: how long a process is frozen, seen from inside it (bench/freeze.sh).
 *
 * LD_PRELOAD'ed into the process a benchmark stops (HEARTBEAT_FILE=PATH): a thread of its own
 * wakes every 100 us and notes, in PATH, each wake that came more than HEARTBEAT_MIN_US (500)
 * late, as "GAP_US TIME_US" lines (CLOCK_MONOTONIC). A tool that stops every thread at once
 * stops this one for as long; one that stops one thread at a time stops it for its own turn
 * only. The benchmark reads the lines written while each tool ran: its longest is the freeze
 * the process saw.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int out_fd = -1;
static uint64_t min_gap_ns = 500000;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *beat(void *arg)
{
	(void)arg;
	const struct timespec period = {0, 100000};
	uint64_t last = now_ns();
	for (;;) {
		nanosleep(&period, NULL);
		const uint64_t t = now_ns();
		if (t - last > min_gap_ns + 100000) {
			char line[64];
			const int n = snprintf(line, sizeof(line), "%llu %llu\n",
					       (unsigned long long)((t - last - 100000) / 1000),
					       (unsigned long long)(t / 1000));
			if (write(out_fd, line, (size_t)n) < 0)
				break;
		}
		last = t;
	}
	return NULL;
}

__attribute__((constructor)) static void heartbeat_start(void)
{
	const char *path = getenv("HEARTBEAT_FILE");
	if (!path || !*path)
		return;
	const char *min = getenv("HEARTBEAT_MIN_US");
	if (min && atoi(min) > 0)
		min_gap_ns = (uint64_t)atoi(min) * 1000u;
	unsetenv("HEARTBEAT_FILE"); /* not inherited by what the process runs */
	out_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (out_fd < 0)
		return;
	pthread_t t;
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &a, beat, NULL) == 0)
		pthread_setname_np(t, "heartbeat");
	pthread_attr_destroy(&a);
}
