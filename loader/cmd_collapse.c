// SPDX-License-Identifier: GPL-2.0
/* collapsectl collapse: process_madvise(MADV_COLLAPSE) on another process. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <linux/mman.h>		/* MADV_COLLAPSE, MADV_F_COLLAPSE_* */

/*
 * The uapi of a kernel with collapse_ext has the flags; a distribution's
 * (the Debian package's build) does not yet: the same values
 * (include/uapi/asm-generic/mman-common.h of the series).
 */
#ifndef MADV_F_COLLAPSE_LIMITS
#define MADV_F_COLLAPSE_LIMITS	0x1
#define MADV_F_COLLAPSE_DEFRAG	0x2
#endif

#include "collapsectl.h"

#define HPAGE_SIZE (2UL << 20)

static const char collapse_usage[] =
"Usage: collapsectl collapse --pid PID [--limits] [--defrag] [START-END | --all]\n"
"\n"
"Collapse memory of process PID into huge pages with\n"
"process_madvise(MADV_COLLAPSE): the range START-END (hex addresses), or by\n"
"default every anonymous mapping at least 2 MiB large. Prints each range's\n"
"result and the process's AnonHugePages before and after.\n"
"\n"
"  --limits   MADV_F_COLLAPSE_LIMITS: follow khugepaged's max_ptes_* limits\n"
"             and defrag setting (without it: no pte limit, as the process's\n"
"             own MADV_COLLAPSE, unless a policy such as remote_limits sets one)\n"
"  --defrag   MADV_F_COLLAPSE_DEFRAG: allow direct reclaim and compaction\n";

/* AnonHugePages of PID in kB, or -1. */
static long anon_huge_kb(int pid)
{
	char path[64], line[256];
	long kb = -1, v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &v) == 1)
			kb = v;
	/* a read error keeps its errno: ESRCH when there is no mm */
	if (kb < 0 && !ferror(f))
		errno = ENODATA;
	fclose(f);
	return kb;
}

static int collapse_range(int pidfd, unsigned long start, unsigned long end,
			  unsigned int flags)
{
	struct iovec iov = { (void *)start, end - start };
	long ret = syscall(SYS_process_madvise, pidfd, &iov, 1, MADV_COLLAPSE,
			   flags);
	int err = ret < 0 ? errno : 0;

	printf("  %012lx-%012lx %6lu MiB  %s\n", start, end,
	       (end - start) >> 20, err ? strerror(err) : "collapsed");
	return err;
}

int cmd_collapse(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "limits", no_argument, NULL, 'l' },
		{ "defrag", no_argument, NULL, 'd' },
		{ "all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	unsigned int flags = 0;
	unsigned long start = 0, end = 0;
	int c, pidfd, err = 0, last = 0, ranges = 0;
	pid_t pid = 0;
	long before;

	while ((c = getopt_long(argc, argv, "p:ldah", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_pid(optarg, &pid)) {
				fail("--pid '%s' is not a process id", optarg);
				return 2;
			}
			break;
		case 'l': flags |= MADV_F_COLLAPSE_LIMITS; break;
		case 'd': flags |= MADV_F_COLLAPSE_DEFRAG; break;
		case 'a': break;
		case 'h': fputs(collapse_usage, stdout); return 0;
		default: fputs(collapse_usage, stderr); return 2;
		}
	}
	if (pid <= 0 || argc - optind > 1) {
		fputs(collapse_usage, stderr);
		return 2;
	}
	if (optind < argc &&
	    (sscanf(argv[optind], "%lx-%lx", &start, &end) != 2 || end <= start))
		return fail("bad range '%s': want START-END in hex, START < END",
			    argv[optind]);
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return fail("process %d: %s", pid, errno == ESRCH ?
			    "no such process" : strerror(errno));
	before = anon_huge_kb(pid);
	if (before < 0) {
		err = errno;
		close(pidfd);
		if (err == EACCES || err == EPERM)
			return fail("process %d: not accessible to this user (reading "
				    "/proc/%d/smaps_rollup: %s): run as root or as "
				    "its owner", pid, pid, strerror(err));
		/* pidfd_open() found it: a process without an mm */
		if (err == ESRCH)
			return fail("process %d has no user memory (a kernel "
				    "thread?)", pid);
		return fail("cannot read /proc/%d/smaps_rollup: %s", pid,
			    strerror(err));
	}
	printf("process %d, flags %s%s%s:\n", pid, flags ? "" : "0",
	       flags & MADV_F_COLLAPSE_LIMITS ? "LIMITS " : "",
	       flags & MADV_F_COLLAPSE_DEFRAG ? "DEFRAG" : "");
	if (end) {
		last = collapse_range(pidfd, start, end, flags);
		ranges = 1;
		err = last != 0;
	} else {
		char path[64], line[512], name[256];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/maps", pid);
		f = fopen(path, "r");
		if (!f) {
			close(pidfd);
			return fail("cannot read %s: %s", path, strerror(errno));
		}
		while (fgets(line, sizeof(line), f)) {
			unsigned long s, e;
			char perms[8];

			name[0] = 0;
			if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %255s", &s, &e,
				   perms, name) < 3)
				continue;
			/* anonymous: no file, or the heap */
			if ((name[0] && strcmp(name, "[heap]")) || perms[0] != 'r')
				continue;
			if (((e & ~(HPAGE_SIZE - 1)) <= ((s + HPAGE_SIZE - 1) &
							 ~(HPAGE_SIZE - 1))))
				continue;
			ranges++;
			last = collapse_range(pidfd, s, e, flags);
			if (last)
				err = 1;
		}
		fclose(f);
	}
	close(pidfd);
	printf("AnonHugePages: %ld kB before, %ld kB after\n", before,
	       anon_huge_kb(pid));
	if (!ranges)
		printf("no anonymous range of at least 2 MiB\n");
	if (last == EPERM)
		return fail("not allowed: acting on another process needs "
			    "CAP_SYS_NICE and ptrace read access to it");
	return err;
}
