// SPDX-License-Identifier: GPL-2.0
/*
 * hugepaged: a userspace collapse agent, as the MADV_COLLAPSE RFC imagined.
 *
 * Every interval it looks at the processes of a cgroup, measures how hot
 * each anonymous mapping is (the share of its pages referenced since the
 * last round: /proc/PID/clear_refs, then "Referenced:" in smaps), and
 * collapses the hottest ones first with
 * process_madvise(MADV_COLLAPSE, MADV_F_COLLAPSE_LIMITS), at most --rate
 * MiB per second, so khugepaged's limits still apply and the work is
 * charged to the agent.
 *
 * Usage: hugepaged --cgroup PATH [--interval S] [--rate MiB] [--duration S]
 *                  [--min-hot PCT] [--once]
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/mman.h>		/* the series' uapi: MADV_F_COLLAPSE_LIMITS */

/* A distribution's uapi headers do not have it yet: the series' value. */
#ifndef MADV_F_COLLAPSE_LIMITS
#define MADV_F_COLLAPSE_LIMITS	0x1
#endif

#define HPAGE (2UL << 20)
#define MAX_RANGES 4096

struct range {
	int pid;
	unsigned long start, end;	/* PMD-aligned part of the mapping */
	unsigned long size_kb, ref_kb, huge_kb;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"Usage: hugepaged --cgroup PATH [--interval S] [--rate MiB] [--duration S]\n"
		"                 [--min-hot PCT] [--once]\n"
		"  --cgroup PATH   cgroup v2 directory whose processes to serve\n"
		"  --interval S    seconds between rounds (default 1)\n"
		"  --rate MiB      at most this many MiB collapsed per second (default 256)\n"
		"  --duration S    stop after S seconds (default: until SIGINT/SIGTERM)\n"
		"  --min-hot PCT   skip mappings with fewer referenced pages (default 10)\n"
		"  --once          one round, no waiting for references\n");
	exit(status);
}

/* Anonymous mappings of @pid with at least one whole huge page. */
static int scan_process(int pid, struct range *r, int max)
{
	char path[64], line[512];
	struct range cur = {};
	int n = 0, anon = 0;
	unsigned long a, b, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char perms[8], name[256] = "";

		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &a, &b, perms,
			   name) >= 3 && strchr(line, '-') < strchr(line, ' ')) {
			if (anon && cur.end > cur.start && n < max)
				r[n++] = cur;
			anon = (!name[0] || !strcmp(name, "[heap]")) && perms[0] == 'r';
			memset(&cur, 0, sizeof(cur));
			cur.pid = pid;
			cur.start = (a + HPAGE - 1) & ~(HPAGE - 1);
			cur.end = b & ~(HPAGE - 1);
			continue;
		}
		if (sscanf(line, "Size: %lu kB", &v) == 1)
			cur.size_kb = v;
		else if (sscanf(line, "Referenced: %lu kB", &v) == 1)
			cur.ref_kb = v;
		else if (sscanf(line, "AnonHugePages: %lu kB", &v) == 1)
			cur.huge_kb = v;
	}
	if (anon && cur.end > cur.start && n < max)
		r[n++] = cur;
	fclose(f);
	return n;
}

static void clear_refs(int pid)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/clear_refs", pid);
	f = fopen(path, "w");
	if (f) {
		fputs("1", f);
		fclose(f);
	}
}

static int hotter(const void *x, const void *y)
{
	const struct range *a = x, *b = y;
	unsigned long ha = a->ref_kb * 1000 / (a->size_kb ?: 1);
	unsigned long hb = b->ref_kb * 1000 / (b->size_kb ?: 1);

	return hb > ha ? 1 : hb < ha ? -1 : 0;
}

/* PIDs of cgroup @cg */
static int cgroup_pids(const char *cg, int *pids, int max)
{
	char path[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (n < max && fscanf(f, "%d", &pids[n]) == 1)
		n++;
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "interval", required_argument, NULL, 'i' },
		{ "rate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "min-hot", required_argument, NULL, 'm' },
		{ "once", no_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	static struct range ranges[MAX_RANGES];
	double interval = 1, duration = 0, rate = 256;
	unsigned long min_hot = 10, total_mb = 0;
	const char *cg = NULL;
	bool once = false;
	time_t t0 = time(NULL);
	int c, pids[1024];

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': cg = optarg; break;
		case 'i': interval = strtod(optarg, NULL); break;
		case 'r': rate = strtod(optarg, NULL); break;
		case 'd': duration = strtod(optarg, NULL); break;
		case 'm': min_hot = strtoul(optarg, NULL, 0); break;
		case 'o': once = true; break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (!cg || interval <= 0 || rate <= 0)
		usage(2);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	while (!stop) {
		int np = cgroup_pids(cg, pids, 1024), nr = 0, i;
		double budget_mb = rate * interval;

		if (np < 0) {
			fprintf(stderr, "hugepaged: %s: %s\n", cg, strerror(-np));
			return 1;
		}
		if (!once) {
			for (i = 0; i < np; i++)
				clear_refs(pids[i]);
			usleep((useconds_t)(interval * 1e6));
		}
		for (i = 0; i < np && nr < MAX_RANGES; i++)
			nr += scan_process(pids[i], ranges + nr, MAX_RANGES - nr);
		qsort(ranges, nr, sizeof(ranges[0]), hotter);
		for (i = 0; i < nr && budget_mb > 0 && !stop; i++) {
			struct range *r = &ranges[i];
			unsigned long len = r->end - r->start;
			unsigned long hot = r->ref_kb * 100 / (r->size_kb ?: 1);
			struct iovec iov;
			int pidfd;
			long ret;

			if ((!once && hot < min_hot) || r->huge_kb * 1024 >= len)
				continue;
			/* bounded: cut the range to what the budget allows */
			if (len > budget_mb * (1 << 20))
				len = (unsigned long)(budget_mb * (1 << 20)) & ~(HPAGE - 1);
			if (!len)
				break;
			pidfd = syscall(SYS_pidfd_open, r->pid, 0);
			if (pidfd < 0)
				continue;
			iov.iov_base = (void *)r->start;
			iov.iov_len = len;
			ret = syscall(SYS_process_madvise, pidfd, &iov, 1, MADV_COLLAPSE,
				      MADV_F_COLLAPSE_LIMITS);
			printf("pid %d %lx-%lx %lu MiB, %lu%% hot: %s\n", r->pid,
			       r->start, r->start + len, len >> 20, hot,
			       ret < 0 ? strerror(errno) : "collapsed");
			fflush(stdout);
			close(pidfd);
			budget_mb -= len >> 20;
			total_mb += len >> 20;
		}
		if (once || (duration > 0 && difftime(time(NULL), t0) >= duration))
			break;
	}
	printf("hugepaged: %lu MiB collapsed\n", total_mb);
	return 0;
}
