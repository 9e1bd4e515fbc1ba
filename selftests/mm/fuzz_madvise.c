// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input: thousands of random madvise() and process_madvise() calls
 * (addresses inside, across and outside an arena, odd lengths, advice
 * numbers -2..37, which leaves out MADV_HWPOISON and MADV_SOFT_OFFLINE
 * (100, 101), random flags, good, stale and bogus pidfds). Every call must return 0 or a documented errno, the arena's
 * untouched pages must keep their contents, and nothing may stay charged
 * once the process is gone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "kselftest_harness.h"

#define ARENA_HP	8
#define CALLS		4000

static bool allowed(int err)
{
	switch (err) {
	case 0: case EINVAL: case ENOMEM: case EBUSY: case EAGAIN: case EPERM:
	case EBADF: case ESRCH: case EFAULT: case EACCES: case EIO:
		return true;
	}
	return false;
}

static unsigned long rnd(unsigned int *seed)
{
	return ((unsigned long)rand_r(seed) << 31) ^ rand_r(seed);
}

/* The child: fuzz its own arena (and a sibling's, through pidfds). */
static int fuzz(void *arg)
{
	unsigned int seed = *(unsigned int *)arg;
	struct region arena, keep;
	int self, other, stale, bad = 0, i;
	pid_t sibling;
	long counts[2] = {};

	if (region_map(&arena, ARENA_HP) || region_map(&keep, 2))
		return 200;
	region_fill(&arena, NULL);
	region_fill(&keep, NULL);
	self = sys_pidfd_open(getpid());
	sibling = fork();
	if (!sibling) {
		pause();
		_exit(0);
	}
	other = sys_pidfd_open(sibling);
	stale = sys_pidfd_open(getpid());
	close(stale);		/* a closed fd number */

	for (i = 0; i < CALLS; i++) {
		unsigned long r = rnd(&seed);
		char *addr;
		size_t len;
		int advice, err, pidfd;
		unsigned int flags;
		long ret;

		switch (r % 5) {
		case 0: addr = arena.p + rnd(&seed) % arena.len; break;
		case 1: addr = arena.p + (rnd(&seed) % ARENA_HP) * HPAGE_SZ; break;
		/* nothing is mapped there: below mmap_min_addr, above TASK_SIZE */
		case 2: addr = (char *)(rnd(&seed) % 0x10000); break;
		case 3: addr = (char *)((1UL << 47) + (rnd(&seed) & ~(PAGE_SZ - 1))); break;
		default: addr = (char *)(~0UL - PAGE_SZ * (rnd(&seed) % 16)); break;
		}
		switch ((r >> 8) % 4) {
		case 0: len = rnd(&seed) % (arena.len + 2 * HPAGE_SZ); break;
		case 1: len = (rnd(&seed) % (ARENA_HP + 1)) * HPAGE_SZ; break;
		case 2: len = ~0UL - rnd(&seed) % 4096; break;
		default: len = rnd(&seed) % 64; break;
		}
		advice = (r >> 12) % 5 ? MADV_COLLAPSE : (int)(rnd(&seed) % 40) - 2;
		/*
		 * Advice that drops or changes memory stays inside the arena:
		 * it must not reach the pages we check, or the test's own.
		 */
		if ((addr < arena.p || len > arena.p + arena.len - addr) &&
		    advice != MADV_COLLAPSE && advice != MADV_COLD &&
		    advice != MADV_WILLNEED && advice != MADV_NORMAL &&
		    advice != MADV_HUGEPAGE && advice != MADV_NOHUGEPAGE)
			advice = MADV_COLLAPSE;
		flags = (r >> 16) % 3 ? (r >> 20) % 4 : (unsigned int)rnd(&seed);

		if ((r >> 24) % 2) {
			errno = 0;
			ret = madvise(addr, len, advice);
			counts[0]++;
		} else {
			switch ((r >> 28) % 5) {
			case 0: pidfd = other; break;
			case 1: pidfd = stale; break;
			case 2: pidfd = -1; break;
			case 3: pidfd = 1000000; break;
			default: pidfd = self; break;
			}
			errno = 0;
			ret = sys_process_madvise(pidfd, addr, len, advice, flags);
			counts[1]++;
		}
		err = ret < 0 ? errno : 0;
		if (!allowed(err)) {
			fprintf(stderr, "# call %d: advice %d flags %#x len %#zx: %s\n",
				i, advice, flags, len, strerror(err));
			bad++;
		}
	}
	kill(sibling, SIGKILL);
	waitpid(sibling, NULL, 0);
	printf("# %ld madvise, %ld process_madvise calls, %d unexpected errnos\n",
	       counts[0], counts[1], bad);
	if (!region_check(&keep, NULL))
		return 201;
	return bad ? 202 : 0;
}

TEST(fuzz_madvise_and_process_madvise)
{
	unsigned int seed = getpid();

	ASSERT_EQ(0, cg_create("ce_fuzz", NULL));
	TH_LOG("seed %u", seed);
	EXPECT_EQ(0, run_in_cgroup("ce_fuzz", fuzz, &seed));
	EXPECT_GT(1024, cg_current_kb("ce_fuzz"));
	EXPECT_EQ(0, cg_remove("ce_fuzz"));
}

TEST_HARNESS_MAIN
