// SPDX-License-Identifier: GPL-2.0
/*
 * process_madvise(MADV_COLLAPSE) flags: MADV_F_COLLAPSE_LIMITS applies
 * khugepaged's pte limits, MADV_F_COLLAPSE_DEFRAG the direct-reclaim gfp
 * mask; bad flags are EINVAL; flags 0 behave as in Linux 6.12 for every
 * caller: acting on another process needs PTRACE_MODE_READ and
 * CAP_SYS_NICE, and no flag. A range beyond the limits is skipped; without
 * limits, a userfaultfd-armed range still ends the request as in 6.12.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collapse_test.h"
#include "kselftest_harness.h"

#define UNPRIV_UID	1000

/* Page 7 of each huge page is never touched. */
static bool skip_one(size_t page)
{
	return page % HPAGE_NR == 7;
}

FIXTURE(pmadv)
{
	struct region r;
	int self;
};

FIXTURE_SETUP(pmadv)
{
	struct thp_settings s;

	thp_save_settings();
	thp_read_settings(&s);
	thp_push_settings(&s);
	ASSERT_EQ(0, region_map(&self->r, 2));
	self->self = sys_pidfd_open(getpid());
	ASSERT_LE(0, self->self);
}

FIXTURE_TEARDOWN(pmadv)
{
	region_unmap(&self->r);
	close(self->self);
	thp_restore_settings();
}

TEST_F(pmadv, unknown_flags_einval)
{
	region_fill(&self->r, NULL);
	EXPECT_EQ(-1, sys_process_madvise(self->self, self->r.p, self->r.len,
					  MADV_COLLAPSE, 0x4));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, sys_process_madvise(self->self, self->r.p, self->r.len,
					  MADV_COLLAPSE, 0x80000000u));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_FALSE(range_is_huge(0, self->r.p, self->r.len));
}

TEST_F(pmadv, flags_with_other_advice_einval)
{
	region_fill(&self->r, NULL);
	EXPECT_EQ(-1, sys_process_madvise(self->self, self->r.p, self->r.len,
					  MADV_COLD, MADV_F_COLLAPSE_LIMITS));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, sys_process_madvise(self->self, self->r.p, self->r.len,
					  MADV_WILLNEED, MADV_F_COLLAPSE_DEFRAG));
	EXPECT_EQ(EINVAL, errno);
	/* Flags 0 with another advice keep working. */
	EXPECT_EQ((long)self->r.len, sys_process_madvise(self->self, self->r.p,
							 self->r.len, MADV_COLD, 0));
}

TEST_F(pmadv, self_flags0_collapses)
{
	region_fill(&self->r, skip_one);
	ASSERT_EQ((long)self->r.len, sys_process_madvise(self->self, self->r.p,
							 self->r.len, MADV_COLLAPSE, 0));
	EXPECT_TRUE(range_is_huge(0, self->r.p, self->r.len));
	EXPECT_TRUE(region_check(&self->r, skip_one));
}

TEST_F(pmadv, limits_apply_max_ptes_none)
{
	struct thp_settings s = *thp_current_settings();
	long exceed;

	region_fill(&self->r, skip_one);
	s.khugepaged.max_ptes_none = 0;
	thp_push_settings(&s);
	exceed = vmstat("thp_scan_exceed_none_pte");

	EXPECT_EQ(-1, sys_process_madvise(self->self, self->r.p, self->r.len,
					  MADV_COLLAPSE, MADV_F_COLLAPSE_LIMITS));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_FALSE(range_is_huge(0, self->r.p, self->r.len));
	EXPECT_LT(exceed, vmstat("thp_scan_exceed_none_pte"));

	/* madvise(MADV_COLLAPSE) and flags 0 ignore the limit. */
	EXPECT_EQ((long)self->r.len, sys_process_madvise(self->self, self->r.p,
							 self->r.len, MADV_COLLAPSE, 0));
	EXPECT_TRUE(range_is_huge(0, self->r.p, self->r.len));
	EXPECT_TRUE(region_check(&self->r, skip_one));
}

/*
 * A range beyond the limits is skipped, not the end of the request: the
 * dense ranges after it collapse too, and the call reports EBUSY.
 */
TEST(limits_skip_a_sparse_range)
{
	struct thp_settings s;
	struct region r;
	int pidfd = sys_pidfd_open(getpid());

	ASSERT_LE(0, pidfd);
	thp_save_settings();
	thp_read_settings(&s);
	s.khugepaged.max_ptes_none = 0;
	thp_push_settings(&s);
	ASSERT_EQ(0, region_map(&r, 20));
	region_fill(&r, sparse_pmds_2_5);
	EXPECT_EQ(-1, sys_process_madvise(pidfd, r.p, r.len, MADV_COLLAPSE,
					  MADV_F_COLLAPSE_LIMITS));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_TRUE(huge_but_pmds_2_5(&r));
	EXPECT_TRUE(region_check(&r, sparse_pmds_2_5));
	region_unmap(&r);
	close(pidfd);
	thp_restore_settings();
}

/*
 * Without limits, only a userfaultfd-armed range comes back beyond
 * max_ptes_none (a missing page there is userspace's to fill), and it ends
 * the request as in 6.12: the full ranges after it stay small, EBUSY.
 */
TEST(uffd_range_ends_request_as_6_12)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct region r;
	int uffd;

	ASSERT_EQ(0, region_map(&r, 3));
	region_fill(&r, NULL);
	/* a hole in the first range */
	ASSERT_EQ(0, madvise(r.p + 7 * PAGE_SZ, PAGE_SZ, MADV_DONTNEED));
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, uffd) TH_LOG("userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	reg.range.start = (unsigned long)r.p;
	reg.range.len = r.len;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));
	EXPECT_EQ(-1, madvise(r.p, r.len, MADV_COLLAPSE));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_FALSE(range_is_huge(0, r.p, HPAGE_SZ));
	EXPECT_FALSE(range_is_huge(0, r.p + HPAGE_SZ, HPAGE_SZ));
	EXPECT_FALSE(range_is_huge(0, r.p + 2 * HPAGE_SZ, HPAGE_SZ));
	close(uffd);
	region_unmap(&r);
}

TEST_F(pmadv, limits_within_max_ptes_none_collapses)
{
	struct thp_settings s = *thp_current_settings();

	region_fill(&self->r, skip_one);
	s.khugepaged.max_ptes_none = 1;
	thp_push_settings(&s);
	EXPECT_EQ((long)self->r.len, sys_process_madvise(self->self, self->r.p,
							 self->r.len, MADV_COLLAPSE,
							 MADV_F_COLLAPSE_LIMITS));
	EXPECT_TRUE(range_is_huge(0, self->r.p, self->r.len));
	EXPECT_TRUE(region_check(&self->r, skip_one));
}

/*
 * The gfp mask of the order-9 allocations made by one call, as the
 * kmem:mm_page_alloc tracepoint prints it: "light" for
 * GFP_TRANSHUGE_LIGHT (no direct reclaim), "full" for GFP_TRANSHUGE.
 */
static const char *collapse_gfp(struct region *r, int pidfd, unsigned int flags)
{
	static char kind[16];
	char line[1024];
	FILE *f;

	kind[0] = 0;
	if (write_str(TRACING "events/kmem/mm_page_alloc/filter", "order == 9") ||
	    truncate_file(TRACING "trace") ||
	    write_str(TRACING "events/kmem/mm_page_alloc/enable", "1"))
		return NULL;
	sys_process_madvise(pidfd, r->p, r->len, MADV_COLLAPSE, flags);
	write_str(TRACING "events/kmem/mm_page_alloc/enable", "0");
	write_str(TRACING "events/kmem/mm_page_alloc/filter", "0");
	f = fopen(TRACING "trace", "r");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		char *g = strstr(line, "gfp_flags=");

		if (!g)
			continue;
		g += strlen("gfp_flags=");
		if (!strncmp(g, "GFP_TRANSHUGE_LIGHT", 19))
			strcpy(kind, "light");
		else if (!strncmp(g, "GFP_TRANSHUGE", 13))
			strcpy(kind, "full");
		else
			snprintf(kind, sizeof(kind), "%.15s", g);
		break;
	}
	fclose(f);
	return kind;
}

TEST_F(pmadv, defrag_allows_direct_reclaim)
{
	struct thp_settings s = *thp_current_settings();
	const char *gfp;

	if (access(TRACING "events/kmem/mm_page_alloc/enable", W_OK))
		SKIP(return, "no kmem:mm_page_alloc tracepoint");
	/* khugepaged's own setting: no direct reclaim for its allocations. */
	s.khugepaged.defrag = false;
	thp_push_settings(&s);

	region_fill(&self->r, NULL);
	gfp = collapse_gfp(&self->r, self->self, MADV_F_COLLAPSE_LIMITS);
	ASSERT_NE(NULL, gfp);
	EXPECT_STREQ("light", gfp);

	region_unmap(&self->r);
	ASSERT_EQ(0, region_map(&self->r, 2));
	region_fill(&self->r, NULL);
	gfp = collapse_gfp(&self->r, self->self,
			   MADV_F_COLLAPSE_LIMITS | MADV_F_COLLAPSE_DEFRAG);
	ASSERT_NE(NULL, gfp);
	EXPECT_STREQ("full", gfp);

	/* Flags 0 is MADV_COLLAPSE's mask: direct reclaim allowed. */
	region_unmap(&self->r);
	ASSERT_EQ(0, region_map(&self->r, 2));
	region_fill(&self->r, NULL);
	gfp = collapse_gfp(&self->r, self->self, 0);
	ASSERT_NE(NULL, gfp);
	EXPECT_STREQ("full", gfp);
}

TEST(remote_root_flags0)
{
	struct target t;
	int pidfd;

	ASSERT_EQ(0, target_start(&t, 2, 0, skip_one));
	pidfd = sys_pidfd_open(t.pid);
	ASSERT_LE(0, pidfd);
	EXPECT_EQ((long)t.len, sys_process_madvise(pidfd, t.p, t.len,
						   MADV_COLLAPSE, 0));
	EXPECT_TRUE(range_is_huge(t.pid, t.p, t.len));
	close(pidfd);
	target_stop(&t);
}

/* Become UNPRIV_UID with only the capabilities in @caps. */
static int drop_privileges(unsigned long long caps)
{
	if (prctl(PR_SET_KEEPCAPS, 1) ||
	    setresgid(UNPRIV_UID, UNPRIV_UID, UNPRIV_UID) ||
	    setresuid(UNPRIV_UID, UNPRIV_UID, UNPRIV_UID))
		return -1;
	return set_caps(caps);
}

/*
 * In a child running as UNPRIV_UID with capabilities @caps, call
 * process_madvise(MADV_COLLAPSE, @flags) on @t; return its errno (0 on
 * success).
 */
static int unprivileged_collapse(struct target *t, unsigned long long caps,
				 unsigned int flags)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		int pidfd;

		if (drop_privileges(caps))
			_exit(200);
		pidfd = sys_pidfd_open(t->pid);
		if (pidfd < 0)
			_exit(201);
		if (sys_process_madvise(pidfd, t->p, t->len, MADV_COLLAPSE,
					flags) != (long)t->len)
			_exit(errno);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * Linux 6.12 lets a caller with CAP_SYS_NICE (and ptrace access) collapse
 * another process's memory with flags 0: the flags must not take that away
 * (the RFC's "LIMITS or CAP_SYS_ADMIN" rule is a policy's choice now).
 */
TEST(remote_unprivileged_flags0_as_6_12)
{
	unsigned long long nice = 1ULL << CAP_SYS_NICE;
	struct target t;

	ASSERT_EQ(0, target_start(&t, 2, UNPRIV_UID, skip_one));
	EXPECT_EQ(0, unprivileged_collapse(&t, nice, 0));
	EXPECT_TRUE(range_is_huge(t.pid, t.p, t.len));
	target_stop(&t);

	ASSERT_EQ(0, target_start(&t, 2, UNPRIV_UID, skip_one));
	EXPECT_EQ(0, unprivileged_collapse(&t, nice, MADV_F_COLLAPSE_DEFRAG));
	EXPECT_TRUE(range_is_huge(t.pid, t.p, t.len));
	target_stop(&t);

	ASSERT_EQ(0, target_start(&t, 2, UNPRIV_UID, skip_one));
	EXPECT_EQ(0, unprivileged_collapse(&t, nice, MADV_F_COLLAPSE_LIMITS));
	EXPECT_TRUE(range_is_huge(t.pid, t.p, t.len));
	target_stop(&t);
}

TEST(remote_without_cap_sys_nice_eperm)
{
	struct target t;

	ASSERT_EQ(0, target_start(&t, 1, UNPRIV_UID, NULL));
	EXPECT_EQ(EPERM, unprivileged_collapse(&t, 0, MADV_F_COLLAPSE_LIMITS));
	EXPECT_FALSE(range_is_huge(t.pid, t.p, t.len));
	target_stop(&t);
}

TEST(self_unprivileged_needs_no_flag)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		struct region r;
		int pidfd;

		if (drop_privileges(0) || region_map(&r, 1))
			_exit(200);
		region_fill(&r, skip_one);
		pidfd = sys_pidfd_open(getpid());
		if (sys_process_madvise(pidfd, r.p, r.len, MADV_COLLAPSE, 0) != (long)r.len)
			_exit(errno);
		/* no kpageflags without privileges: smaps says it (one vma) */
		_exit(anon_huge_kb(0, r.p, r.len) >= r.len / 1024 &&
		      region_check(&r, skip_one) ? 0 : 202);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
