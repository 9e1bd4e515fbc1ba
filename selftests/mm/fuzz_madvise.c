// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input: thousands of random madvise() and process_madvise() calls
 * (addresses inside, across and outside an arena, odd lengths, advice
 * numbers -2..37, which leaves out MADV_HWPOISON and MADV_SOFT_OFFLINE
 * (100, 101), random flags, good, stale and bogus pidfds). A call that
 * an argument check decides before any memory is looked at must fail with
 * exactly that check's errno, or succeed where the syscall does nothing (an
 * empty iovec; decided_errno()); any other call must return
 * 0 or a documented errno. The arena's untouched pages must keep their
 * contents, and nothing may stay charged once the process is gone.
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

/* madvise()'s range checks: EINVAL when they refuse [start, start + len) */
static int range_errno(unsigned long start, size_t len)
{
	size_t alen = (len + PAGE_SZ - 1) & ~(PAGE_SZ - 1);

	if (start & (PAGE_SZ - 1) || (len && !alen) || start + alen < start)
		return EINVAL;
	return -1;
}

enum pidfd_kind { PIDFD_OTHER, PIDFD_STALE, PIDFD_MINUS_ONE, PIDFD_BOGUS, PIDFD_SELF };

/*
 * Since 6.13 (so on 7.3, not on 6.12) process_madvise() takes any advice
 * for the caller's own mm; the four of the remote list only for another.
 * Found out by asking, in fuzz(), before the calls.
 */
static bool self_any_advice;

static bool remote_advice(int advice)
{
	return advice == MADV_COLD || advice == MADV_PAGEOUT ||
	       advice == MADV_WILLNEED || advice == MADV_COLLAPSE;
}

/* Does process_madvise(MADV_DONTNEED) on our own page work? -1: error */
static int probe_self_any_advice(int self)
{
	char *p = mmap(NULL, PAGE_SZ, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long ret;

	if (p == MAP_FAILED)
		return -1;
	ret = sys_process_madvise(self, p, PAGE_SZ, MADV_DONTNEED, 0);
	munmap(p, PAGE_SZ);
	if (ret == PAGE_SZ)
		return 1;
	return ret < 0 && errno == EINVAL ? 0 : -1;
}

/*
 * The errno of a call an argument check decides before any memory is
 * looked at, in the order the syscalls check (madvise: advice and range;
 * process_madvise: flags, the iovec's length and access_ok, the pidfd, the
 * advice, then madvise's range checks, which an empty iovec never reaches:
 * 0); -1 when none decides it. Where process_madvise() takes any advice
 * for the caller, one outside the remote list on our own pidfd is left
 * undecided. An iovec ending
 * past 2^56 is refused by access_ok whatever the paging mode; between
 * 2^47 and 2^56 it depends on it, and is left undecided.
 */
static int decided_errno(bool remote, enum pidfd_kind pidfd, unsigned long addr,
			 size_t len, int advice, unsigned int flags)
{
	unsigned long end = addr + len;

	if (!remote)
		return range_errno(addr, len);
	if (flags & ~(MADV_F_COLLAPSE_LIMITS | MADV_F_COLLAPSE_DEFRAG) ||
	    (flags && advice != MADV_COLLAPSE))
		return EINVAL;
	/* import_iovec(): a length that is negative as ssize_t, then access_ok */
	if ((ssize_t)len < 0)
		return EINVAL;
	if (end < addr || end >= 1UL << 56)
		return EFAULT;
	if (end > (1UL << 47) - PAGE_SZ)
		return -1;
	if (pidfd == PIDFD_STALE || pidfd == PIDFD_MINUS_ONE || pidfd == PIDFD_BOGUS)
		return EBADF;
	if (!remote_advice(advice))
		return pidfd == PIDFD_SELF && self_any_advice ? -1 : EINVAL;
	/* an empty iovec does nothing: not even madvise's range checks */
	if (!len)
		return 0;
	return range_errno(addr, len);
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
	int self, other, stale, bad = 0, decided = 0, i;
	pid_t sibling;
	long counts[2] = {};

	if (region_map(&arena, ARENA_HP) || region_map(&keep, 2))
		return 200;
	region_fill(&arena, NULL);
	region_fill(&keep, NULL);
	self = sys_pidfd_open(getpid());
	switch (probe_self_any_advice(self)) {
	case 0: self_any_advice = false; break;
	case 1: self_any_advice = true; break;
	default: return 204;
	}
	printf("# process_madvise on our own mm takes %s advice\n",
	       self_any_advice ? "any" : "only the remote list's");
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
		int advice, err, pidfd, want = -1;
		enum pidfd_kind kind;
		bool remote;
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

		remote = !((r >> 24) % 2);
		if (!remote) {
			want = decided_errno(false, PIDFD_SELF, (unsigned long)addr,
					     len, advice, 0);
			errno = 0;
			ret = madvise(addr, len, advice);
			counts[0]++;
		} else {
			kind = (r >> 28) % 5;
			switch (kind) {
			case PIDFD_OTHER: pidfd = other; break;
			case PIDFD_STALE: pidfd = stale; break;
			case PIDFD_MINUS_ONE: pidfd = -1; break;
			case PIDFD_BOGUS: pidfd = 1000000; break;
			default: pidfd = self; break;
			}
			want = decided_errno(true, kind, (unsigned long)addr, len,
					     advice, flags);
			errno = 0;
			ret = sys_process_madvise(pidfd, addr, len, advice, flags);
			counts[1]++;
		}
		err = ret < 0 ? errno : 0;
		if (want >= 0 ? err != want : !allowed(err)) {
			fprintf(stderr, "# call %d: %s advice %d flags %#x addr %p len %#zx: %s, expected %s\n",
				i, remote ? "process_madvise" : "madvise", advice,
				flags, addr, len, strerror(err),
				want >= 0 ? strerror(want) : "a documented errno");
			bad++;
		}
		decided += want >= 0;
	}
	kill(sibling, SIGKILL);
	waitpid(sibling, NULL, 0);
	printf("# %ld madvise, %ld process_madvise calls (%d decided by an argument check), %d unexpected errnos\n",
	       counts[0], counts[1], decided, bad);
	if (!region_check(&keep, NULL))
		return 201;
	/* the exact checks ran: a good share of the calls is decided early */
	if (decided < CALLS / 10)
		return 203;
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
