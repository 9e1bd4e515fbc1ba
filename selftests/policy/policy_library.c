// SPDX-License-Identifier: GPL-2.0
/*
 * The policy library (bpf-progs/) and the template: every policy loads,
 * attaches and changes what its header says it changes.
 */
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "run_cmd.h"
#include "kselftest_harness.h"

#define BPF	"/usr/share/collapse_ext/bpf/"

static char out[8192];

static int load(const char *policy)
{
	return run_cmd(out, sizeof(out), "collapsectl load " BPF "%s.bpf.o", policy);
}

static void unload(const char *policy)
{
	run_cmd(out, sizeof(out), "collapsectl unload %s", policy);
}

static int sparse_collapse(void *arg)
{
	return collapse_sparse_region(*(int *)arg);
}

/*
 * Attach @policy at the root and collapse @nr sparse huge pages in a
 * child; the errno of MADV_COLLAPSE, or -1 when the policy did not load.
 */
static int sparse_collapse_under(const char *policy, int nr)
{
	if (load(policy))
		return -1;
	return run_in_cgroup("", sparse_collapse, &nr);
}

TEST(every_policy_loads)
{
	struct dirent *d;
	int n = 0;
	DIR *dir = opendir(BPF);

	ASSERT_NE(NULL, dir);
	while ((d = readdir(dir))) {
		char name[64];
		size_t len = strlen(d->d_name);

		if (len < 7 || strcmp(d->d_name + len - 6, ".bpf.o"))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(len - 6), d->d_name);
		EXPECT_EQ(0, load(name)) TH_LOG("%s: %s", name, out);
		EXPECT_TRUE(policy_attached(name)) TH_LOG("%s", name);
		unload(name);
		EXPECT_FALSE(policy_attached(name));
		n++;
	}
	closedir(dir);
	/* passthrough, frugal, eager, latency, numa_local, numa_spread,
	 * adaptive, remote_limits, priority, skip_huge and the template */
	EXPECT_LE(11, n);
}

TEST(frugal_refuses_what_eager_collapses)
{
	EXPECT_EQ(EBUSY, sparse_collapse_under("frugal", 2));
	EXPECT_LT(0, policy_stat("frugal", "failed_none_limit"));
	unload("frugal");
	EXPECT_EQ(0, sparse_collapse_under("eager", 2));
	EXPECT_EQ(2, policy_stat("eager", "collapse_succeeded"));
	unload("eager");
}

TEST(latency_batches_of_one)
{
	EXPECT_EQ(0, sparse_collapse_under("latency", 8));
	/* asked for each PMD, answered 1: mainline's path, no batch ran */
	EXPECT_EQ(8, policy_stat("latency", "calls_batch_size"));
	EXPECT_EQ(0, policy_stat("latency", "batches"));
	EXPECT_EQ(8, policy_stat("latency", "collapse_succeeded"));
	unload("latency");
}

/*
 * Base pages bound to the node the process does not run on: the kernel
 * would put the huge page there (most base pages), numa_local puts it on
 * the process's node.
 */
TEST(numa_local_follows_the_task)
{
	unsigned int cpu, node;
	struct region r;
	cpu_set_t set;
	int other;

	/* the guest always has two nodes (numa=fake=2): one missing is a bug */
	ASSERT_EQ(0, access("/sys/devices/system/node/node1", F_OK));
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	ASSERT_EQ(0, syscall(SYS_getcpu, &cpu, &node, NULL));
	other = !node;
	/* before the region: fork() (run_cmd) write-protects anon ptes */
	ASSERT_EQ(0, load("numa_local"));
	ASSERT_EQ(0, region_map(&r, 1));
	ASSERT_EQ(0, bind_to_node(r.p, r.len, other));
	region_fill(&r, NULL);
	ASSERT_EQ(other, page_node(r.p));
	/* a binding mempolicy would bound the policy's node too: lift it */
	ASSERT_EQ(0, bind_to_node(r.p, r.len, -1));

	EXPECT_EQ(0, madvise(r.p, r.len, MADV_COLLAPSE)) {
		run_cmd(out, sizeof(out), "collapsectl stats numa_local");
		TH_LOG("%s: %s", strerror(errno), out);
	}
	EXPECT_TRUE(range_is_huge(0, r.p, r.len));
	EXPECT_EQ((int)node, page_node(r.p));
	EXPECT_EQ(1, policy_stat("numa_local", "target_node_chosen"));
	EXPECT_TRUE(region_check(&r, NULL));
	unload("numa_local");
	region_unmap(&r);
}

TEST(numa_spread_uses_both_nodes)
{
	int seen[2] = {};
	struct region r;

	/* the guest always has two nodes (numa=fake=2): one missing is a bug */
	ASSERT_EQ(0, access("/sys/devices/system/node/node1", F_OK));
	ASSERT_EQ(0, load("numa_spread"));	/* before the region: see above */
	ASSERT_EQ(0, region_map(&r, 8));
	region_fill(&r, NULL);
	EXPECT_EQ(0, madvise(r.p, r.len, MADV_COLLAPSE));
	EXPECT_TRUE(range_is_huge(0, r.p, r.len));
	for (size_t i = 0; i < 8; i++) {
		int nid = page_node(r.p + i * HPAGE_SZ);

		if (nid == 0 || nid == 1)
			seen[nid]++;
	}
	TH_LOG("huge pages on node 0: %d, node 1: %d", seen[0], seen[1]);
	EXPECT_LE(3, seen[0]);
	EXPECT_LE(3, seen[1]);
	EXPECT_EQ(8, policy_stat("numa_spread", "target_node_chosen"));
	unload("numa_spread");
	region_unmap(&r);
}

/* A range that keeps failing gets vetoed instead of scanned again. */
TEST(adaptive_stops_on_failing_range)
{
	struct region r;
	struct iovec iov;
	int pfd[2], i;

	ASSERT_EQ(0, load("adaptive"));
	ASSERT_EQ(0, region_map(&r, 1));
	region_fill(&r, NULL);
	ASSERT_EQ(0, pipe(pfd));
	iov.iov_base = r.p + 5 * PAGE_SZ;
	iov.iov_len = PAGE_SZ;
	ASSERT_EQ((ssize_t)PAGE_SZ, vmsplice(pfd[1], &iov, 1, 0));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-1, madvise(r.p, r.len, MADV_COLLAPSE));
		EXPECT_EQ(EAGAIN, errno);
	}
	/* fourth time: not scanned, vetoed */
	EXPECT_EQ(-1, madvise(r.p, r.len, MADV_COLLAPSE));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(1, policy_stat("adaptive", "vetoes"));
	EXPECT_EQ(3, policy_stat("adaptive", "failed_busy_page"));
	close(pfd[0]);
	close(pfd[1]);
	unload("adaptive");
	region_unmap(&r);
}

/* Successes grow MADV_COLLAPSE batches from 8 towards 64 PMDs. */
TEST(adaptive_grows_batches)
{
	EXPECT_EQ(0, sparse_collapse_under("adaptive", 64));
	/* 8 + 8 (16 successes) + 16 + 32 (the rest): 4 batches, not 8 */
	EXPECT_GT(8, policy_stat("adaptive", "batches"));
	EXPECT_EQ(64, policy_stat("adaptive", "batch_pmds"));
	unload("adaptive");
}

/* Half of each huge page is never touched: 256 empty ptes per range. */
static bool skip_half(size_t page)
{
	return page % HPAGE_NR >= HPAGE_NR / 2;
}

/* process_madvise(MADV_COLLAPSE, @flags) of @t's range: 0 or errno */
static int remote_collapse(struct target *t, unsigned int flags)
{
	int pidfd = sys_pidfd_open(t->pid), ret = 0;

	if (pidfd < 0)
		return -1;
	if (sys_process_madvise(pidfd, t->p, t->len, MADV_COLLAPSE, flags) !=
	    (long)t->len)
		ret = errno;
	close(pidfd);
	return ret;
}

/*
 * remote_limits holds a process_madvise() request without
 * MADV_F_COLLAPSE_LIMITS to khugepaged's max_ptes_none (128 here), which
 * the 256 empty ptes exceed; without the policy the same call collapses.
 */
FIXTURE(remote_limits)
{
	int unused;
};

FIXTURE_SETUP(remote_limits)
{
	struct thp_settings s;

	thp_save_settings();
	thp_read_settings(&s);
	s.khugepaged.max_ptes_none = 128;
	thp_push_settings(&s);
}

FIXTURE_TEARDOWN(remote_limits)
{
	thp_restore_settings();
}

TEST_F(remote_limits, applies_khugepaged_limits)
{
	struct target t;

	ASSERT_EQ(0, load("remote_limits")) TH_LOG("%s", out);

	ASSERT_EQ(0, target_start(&t, 2, 0, skip_half));
	EXPECT_EQ(EBUSY, remote_collapse(&t, 0));
	EXPECT_FALSE(range_is_huge(t.pid, t.p, t.len));
	/* a range beyond the limits is skipped: both were tried */
	EXPECT_EQ(2, policy_stat("remote_limits", "failed_none_limit"));
	/* With the flag the request asked for those limits itself */
	EXPECT_EQ(EBUSY, remote_collapse(&t, MADV_F_COLLAPSE_LIMITS));
	target_stop(&t);

	/* A process collapsing its own memory is left alone */
	EXPECT_EQ(0, run_in_cgroup("", sparse_collapse, &(int){ 2 }));

	unload("remote_limits");
	ASSERT_EQ(0, target_start(&t, 2, 0, skip_half));
	EXPECT_EQ(0, remote_collapse(&t, 0));
	EXPECT_TRUE(range_is_huge(t.pid, t.p, t.len));
	target_stop(&t);
}

/* khugepaged at full speed, 8 PMDs a pass */
FIXTURE(khugepaged)
{
	int unused;
};

FIXTURE_SETUP(khugepaged)
{
	struct thp_settings s;

	thp_save_settings();
	thp_read_settings(&s);
	thp_push_settings(&s);
	khugepaged_fast(-1, 8 * HPAGE_NR);
}

FIXTURE_TEARDOWN(khugepaged)
{
	thp_restore_settings();
}

/*
 * priority at the root, passthrough on a critical cgroup: khugepaged
 * finishes the critical process's memory while most of the batch
 * process's (ahead of it in khugepaged's list) still waits, and the batch
 * process still progresses.
 */
TEST_F_TIMEOUT(khugepaged, priority_serves_critical_first, 240)
{
	struct hp_child batch = {}, crit = {};
	int batch_pct;

	ASSERT_EQ(0, cg_create("ce_crit", NULL));
	ASSERT_EQ(0, load("priority"));
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "passthrough.bpf.o --cgroup " CGROOT "ce_crit --name crit"));
	ASSERT_EQ(0, hp_child_start(&batch, "", 64));
	ASSERT_EQ(0, hp_child_start(&crit, "ce_crit", 8));
	EXPECT_TRUE(hp_child_wait_huge(&crit, 120));
	batch_pct = hp_child_huge_pct(&batch);
	TH_LOG("critical 100%% huge while batch %d%%", batch_pct);
	EXPECT_GT(50, batch_pct);
	EXPECT_LT(0, policy_stat("priority", "scan_budget_declined_pages"));
	/* the batch process is not starved */
	EXPECT_TRUE(hp_child_wait_huge(&batch, 120));
	hp_child_stop(&crit);
	hp_child_stop(&batch);
	unload("crit");
	unload("priority");
	EXPECT_EQ(0, cg_remove("ce_crit"));
}

/* Once an mm is huge, skip_huge stops khugepaged from walking it again. */
TEST_F_TIMEOUT(khugepaged, skip_huge_skips_huge_mms, 180)
{
	struct hp_child c = {};
	long ranges;

	ASSERT_EQ(0, load("skip_huge"));
	ASSERT_EQ(0, hp_child_start(&c, "", 8));
	EXPECT_TRUE(hp_child_wait_huge(&c, 60));
	/* one complete walk that finds it huge, then only skips */
	EXPECT_TRUE(wait_full_scans(30));
	ranges = policy_stat("skip_huge", "ranges_scanned");
	EXPECT_TRUE(wait_full_scans(30));
	EXPECT_TRUE(wait_full_scans(30));
	TH_LOG("%ld ranges scanned, %ld visits, %ld skipped", ranges,
	       policy_stat("skip_huge", "khugepaged_mm_visits"),
	       policy_stat("skip_huge", "khugepaged_mm_skips"));
	EXPECT_EQ(ranges, policy_stat("skip_huge", "ranges_scanned"));
	EXPECT_LT(0, policy_stat("skip_huge", "khugepaged_mm_skips"));
	hp_child_stop(&c);
	unload("skip_huge");
}

TEST(template_loads)
{
	ASSERT_EQ(0, load("policy_template")) TH_LOG("%s", out);
	EXPECT_TRUE(policy_attached("policy_template"));
	unload("policy_template");
}

TEST_HARNESS_MAIN
