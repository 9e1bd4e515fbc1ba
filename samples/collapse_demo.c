// SPDX-License-Identifier: GPL-2.0
/*
 * collapse_demo: allocate a buffer of base pages, report how much of it is
 * AnonHugePages, collapse it with madvise(MADV_COLLAPSE), report again, and
 * time a TLB-heavy random walk over it before and after.
 *
 * Usage: collapse_demo [--size MiB] [--sparse PCT] [--no-collapse]
 *                      [--hold SECONDS] [--walk N]
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/mman.h>		/* MADV_COLLAPSE */

#define HPAGE_SIZE (2UL << 20)

static unsigned long anon_huge_kb(void *start, size_t len)
{
	unsigned long lo = (unsigned long)start, hi = lo + len, kb = 0;
	unsigned long a, b, v;
	char line[256];
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = a < hi && b > lo;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %lu kB", &v) == 1)
			kb += v;
	}
	fclose(f);
	return kb;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ns per access of a dependent random walk, one touch per 4 KiB page */
static double walk(char *buf, size_t len, unsigned long n)
{
	unsigned long pages = len / 4096, i, x = 88172645463325252ULL;
	volatile char sink = 0;
	double t0 = now();

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		sink += buf[(x % pages) * 4096 + (i & 4095)];
	}
	(void)sink;
	return (now() - t0) * 1e9 / n;
}

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"Usage: collapse_demo [--size MiB] [--sparse PCT] [--no-collapse]\n"
		"                     [--hold SECONDS] [--walk N]\n"
		"  --size MiB      buffer size (default 64)\n"
		"  --sparse PCT    leave PCT%% of every second 2 MiB range untouched\n"
		"                  (default 0)\n"
		"  --no-collapse   only fault the buffer in (khugepaged may collapse it)\n"
		"  --hold SECONDS  keep the buffer mapped (MADV_HUGEPAGE) and report\n"
		"                  AnonHugePages every second\n"
		"  --walk N        random accesses per timing (default 2000000)\n");
	exit(status);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "sparse", required_argument, NULL, 'p' },
		{ "no-collapse", no_argument, NULL, 'n' },
		{ "hold", required_argument, NULL, 'H' },
		{ "walk", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	unsigned long size_mb = 64, sparse = 0, hold = 0, nwalk = 2000000;
	int collapse = 1, c, ret = 0;
	size_t len, off;
	char *raw, *buf;
	double before, after;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's': size_mb = strtoul(optarg, NULL, 0); break;
		case 'p': sparse = strtoul(optarg, NULL, 0); break;
		case 'n': collapse = 0; break;
		case 'H': hold = strtoul(optarg, NULL, 0); break;
		case 'w': nwalk = strtoul(optarg, NULL, 0); break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (!size_mb || sparse > 100) {
		fprintf(stderr, "collapse_demo: --size must be > 0 and --sparse in [0, 100]\n");
		return 2;
	}
	len = size_mb << 20;
	len = (len + HPAGE_SIZE - 1) & ~(HPAGE_SIZE - 1);
	raw = mmap(NULL, len + HPAGE_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED) {
		perror("collapse_demo: mmap");
		return 1;
	}
	buf = (char *)(((uintptr_t)raw + HPAGE_SIZE - 1) & ~(HPAGE_SIZE - 1));
	/*
	 * Fault in base pages: with THP "madvise" (the guest's mode) and no
	 * MADV_HUGEPAGE yet, no huge page is allocated at fault time.
	 */
	for (off = 0; off < len; off += 4096) {
		bool sparse_range = (off / HPAGE_SIZE) % 2;

		if (!sparse_range ||
		    (off % HPAGE_SIZE) * 100 / HPAGE_SIZE < 100 - sparse)
			buf[off] = (char)(off >> 12);
	}
	printf("buffer: %lu MiB at %p, %lu%% of every second 2 MiB range left untouched\n",
	       (unsigned long)(len >> 20), buf, sparse);
	printf("AnonHugePages before: %lu kB\n", anon_huge_kb(buf, len));
	before = walk(buf, len, nwalk);
	printf("random walk before: %.1f ns/access\n", before);

	if (collapse) {
		double t0 = now();

		if (madvise(buf, len, MADV_COLLAPSE)) {
			ret = errno;
			printf("MADV_COLLAPSE: %s (errno %d) after %.3f s\n",
			       strerror(errno), errno, now() - t0);
		} else {
			printf("MADV_COLLAPSE: ok in %.3f s\n", now() - t0);
		}
		printf("AnonHugePages after:  %lu kB\n", anon_huge_kb(buf, len));
		after = walk(buf, len, nwalk);
		printf("random walk after:  %.1f ns/access (%.2fx)\n", after,
		       after > 0 ? before / after : 0);
	}
	/* Holding: let khugepaged see the range too. */
	if (hold)
		madvise(buf, len, MADV_HUGEPAGE);
	for (unsigned long s = 1; s <= hold; s++) {
		sleep(1);
		printf("t=%lus AnonHugePages: %lu kB\n", s, anon_huge_kb(buf, len));
		fflush(stdout);
	}
	munmap(raw, len + HPAGE_SIZE);
	/* An EAGAIN/EBUSY from a best-effort collapse is not a demo failure. */
	return ret == EINVAL || ret == ENOMEM ? 1 : 0;
}
