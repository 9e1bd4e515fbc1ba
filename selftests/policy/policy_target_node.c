// SPDX-License-Identifier: GPL-2.0
/*
 * target_node: the new huge page comes from the node the policy prefers;
 * -1 and invalid nodes leave the kernel's choice (the latter counted);
 * collapse_ext_node_load() tells the policy where the base pages are. The
 * policy never escapes the owner's cpuset.mems or binding mempolicy (the
 * vma's, else the task's); khugepaged asks it as MADV_COLLAPSE does; a
 * preferred node without a free huge page falls back to the kernel's
 * choice (counted), with the collapse still succeeding.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "knobs.h"
#include "kselftest_harness.h"

FIXTURE(node)
{
	struct knobs *skel;
	struct bpf_link *link;
	struct region r;
	int base_node;
};

FIXTURE_SETUP(node)
{
	/* the guest always has two nodes (numa=fake=2): one missing is a bug */
	ASSERT_EQ(0, access("/sys/devices/system/node/node1", F_OK))
		TH_LOG("no NUMA node 1: is numa=fake=2 on the command line?");
	self->skel = knobs_load(NULL, 0);
	ASSERT_NE(NULL, self->skel);
	self->link = knobs_attach(self->skel);
	ASSERT_NE(NULL, self->link);
	ASSERT_EQ(0, region_map(&self->r, 1));
	region_fill(&self->r, NULL);
	self->base_node = page_node(self->r.p);
	ASSERT_LE(0, self->base_node);
}

FIXTURE_TEARDOWN(node)
{
	region_unmap(&self->r);
	bpf_link__destroy(self->link);
	knobs__destroy(self->skel);
}

static void collapse_on(struct __test_metadata *_metadata,
			FIXTURE_DATA(node) *self, int want)
{
	/* base pages on the other node, so the policy's answer shows */
	if (want == 0 || want == 1) {
		ASSERT_EQ(0, move_to_node(self->r.p, self->r.len, !want));
		ASSERT_EQ(!want, page_node(self->r.p));
		self->base_node = !want;
	}
	self->skel->data->node = want;
	ASSERT_EQ(0, madvise(self->r.p, self->r.len, MADV_COLLAPSE));
	ASSERT_TRUE(range_is_huge(0, self->r.p, self->r.len));
	EXPECT_TRUE(region_check(&self->r, NULL));
	EXPECT_EQ(1, self->skel->bss->nr_target_node);
}

TEST_F(node, policy_node_1)
{
	collapse_on(_metadata, self, 1);
	EXPECT_EQ(1, page_node(self->r.p));
	EXPECT_EQ(1, page_node(self->r.p + HPAGE_SZ - PAGE_SZ));
	EXPECT_EQ(1, policy_stat("knobs", "target_node_chosen"));
}

TEST_F(node, policy_node_0)
{
	collapse_on(_metadata, self, 0);
	EXPECT_EQ(0, page_node(self->r.p));
}

TEST_F(node, any_node_is_kernels_choice)
{
	collapse_on(_metadata, self, -1);
	/* All base pages were on one node: the kernel picks it. */
	EXPECT_EQ(self->base_node, page_node(self->r.p));
	EXPECT_EQ(0, policy_stat("knobs", "target_node_chosen"));
	EXPECT_EQ(0, policy_stat("knobs", "target_node_invalid"));
}

TEST_F(node, invalid_node_counted)
{
	collapse_on(_metadata, self, 1000);
	EXPECT_EQ(self->base_node, page_node(self->r.p));
	EXPECT_EQ(1, policy_stat("knobs", "target_node_invalid"));
}

TEST_F(node, negative_node_counted)
{
	collapse_on(_metadata, self, -7);
	EXPECT_EQ(self->base_node, page_node(self->r.p));
	EXPECT_EQ(1, policy_stat("knobs", "target_node_invalid"));
}

TEST_F(node, node_load_filled)
{
	collapse_on(_metadata, self, -1);
	EXPECT_EQ(HPAGE_NR, self->skel->bss->seen_load0 + self->skel->bss->seen_load1);
	EXPECT_EQ(HPAGE_NR, self->base_node ? self->skel->bss->seen_load1 :
					      self->skel->bss->seen_load0);
}

/*
 * A link update: the next request asks the new policy, on the same link,
 * and the node it answers is where the huge page goes (the old policy is
 * not asked again).
 */
TEST_F(node, node_follows_a_link_update)
{
	struct knobs *next = knobs_load(NULL, 0);

	ASSERT_NE(NULL, next);
	collapse_on(_metadata, self, 1);
	EXPECT_EQ(1, page_node(self->r.p));

	next->data->node = 0;
	ASSERT_EQ(0, bpf_link__update_map(self->link, next->maps.knobs));
	/* a new range, on node 1, where the old answer would put it */
	region_unmap(&self->r);
	ASSERT_EQ(0, region_map(&self->r, 1));
	region_fill(&self->r, NULL);
	ASSERT_EQ(0, move_to_node(self->r.p, self->r.len, 1));
	ASSERT_EQ(1, page_node(self->r.p));
	ASSERT_EQ(0, madvise(self->r.p, self->r.len, MADV_COLLAPSE));
	ASSERT_TRUE(range_is_huge(0, self->r.p, self->r.len));
	EXPECT_TRUE(region_check(&self->r, NULL));
	EXPECT_EQ(0, page_node(self->r.p));
	EXPECT_EQ(0, page_node(self->r.p + HPAGE_SZ - PAGE_SZ));
	EXPECT_EQ(1, next->bss->nr_target_node);
	EXPECT_EQ(1, self->skel->bss->nr_target_node);
	/* one policy on the link: its counters go on across the update */
	EXPECT_EQ(2, policy_stat("knobs", "target_node_chosen"));
	knobs__destroy(next);
}

#define CG_CPUSET	"ce_node_cpuset"
/* Collapse one fully populated huge page; the node it landed on, or 200+ */
static int collapse_report_node(void *arg)
{
	struct region r;
	int nid;

	if (region_map(&r, 1))
		return 200;
	region_fill(&r, NULL);
	if (madvise(r.p, r.len, MADV_COLLAPSE))
		return 201;
	if (!range_is_huge(0, r.p, r.len) || !region_check(&r, NULL))
		return 202;
	nid = page_node(r.p);
	region_unmap(&r);
	return nid < 0 ? 203 : nid;
}

/* A cgroup whose cpuset.mems is node 0: the policy's node 1 is refused */
TEST_F(node, cpuset_mems_bound_the_policy)
{
	if (write_str(CGROOT "cgroup.subtree_control", "+cpuset"))
		SKIP(return, "no cpuset controller");
	ASSERT_EQ(0, cg_create(CG_CPUSET, NULL));
	ASSERT_EQ(0, write_str(CGROOT CG_CPUSET "/cpuset.mems", "0"));
	self->skel->data->node = 1;
	EXPECT_EQ(0, run_in_cgroup(CG_CPUSET, collapse_report_node, NULL));
	EXPECT_EQ(1, policy_stat("knobs", "target_node_disallowed"));
	EXPECT_EQ(0, policy_stat("knobs", "target_node_chosen"));
	/* the same answer outside the cpuset is taken */
	EXPECT_EQ(1, run_in_cgroup("", collapse_report_node, NULL));
	EXPECT_EQ(1, policy_stat("knobs", "target_node_chosen"));
	EXPECT_EQ(0, cg_remove(CG_CPUSET));
}

/* A binding mempolicy bounds the policy too */
TEST_F(node, mempolicy_bind_bounds_the_policy)
{
	struct region r;

	ASSERT_EQ(0, region_map(&r, 1));
	ASSERT_EQ(0, bind_to_node(r.p, r.len, 0));
	region_fill(&r, NULL);
	self->skel->data->node = 1;
	ASSERT_EQ(0, madvise(r.p, r.len, MADV_COLLAPSE));
	ASSERT_TRUE(range_is_huge(0, r.p, r.len));
	EXPECT_TRUE(region_check(&r, NULL));
	EXPECT_EQ(0, page_node(r.p));
	EXPECT_EQ(1, policy_stat("knobs", "target_node_disallowed"));
	EXPECT_EQ(0, policy_stat("knobs", "target_node_chosen"));
	region_unmap(&r);
}

/* A task-wide binding mempolicy (none on the vma) bounds it as well */
static int collapse_bound_to_node0(void *arg)
{
	if (bind_to_node(NULL, 0, 0))
		return 210;
	return collapse_report_node(arg);
}

TEST_F(node, task_mempolicy_bind_bounds_the_policy)
{
	self->skel->data->node = 1;
	EXPECT_EQ(0, run_in_cgroup("", collapse_bound_to_node0, NULL));
	EXPECT_EQ(1, policy_stat("knobs", "target_node_disallowed"));
	EXPECT_EQ(0, policy_stat("knobs", "target_node_chosen"));
	/* without the binding, the same answer is taken */
	EXPECT_EQ(1, run_in_cgroup("", collapse_report_node, NULL));
}

/*
 * khugepaged asks the policy too: base pages on node 0, the policy's node
 * 1, and the huge page khugepaged makes of them comes from node 1.
 */
TEST_F_TIMEOUT(node, khugepaged_asks_the_policy, 120)
{
	struct thp_settings s;

	ASSERT_EQ(0, move_to_node(self->r.p, self->r.len, 0));
	ASSERT_EQ(0, page_node(self->r.p));
	self->skel->data->node = 1;
	thp_save_settings();
	thp_read_settings(&s);
	thp_push_settings(&s);
	khugepaged_fast(-1, 8 * HPAGE_NR);
	ASSERT_EQ(0, madvise(self->r.p, self->r.len, MADV_HUGEPAGE));
	for (int i = 0; i < 600 && !range_is_huge(0, self->r.p, self->r.len); i++)
		usleep(100000);
	madvise(self->r.p, self->r.len, MADV_NOHUGEPAGE);
	thp_restore_settings();
	ASSERT_TRUE(range_is_huge(0, self->r.p, self->r.len));
	EXPECT_TRUE(region_check(&self->r, NULL));
	EXPECT_EQ(1, page_node(self->r.p));
	EXPECT_EQ(CALLER_KHUGEPAGED, self->skel->bss->seen_node_caller);
	EXPECT_EQ(1, policy_stat("knobs", "target_node_chosen"));
}

/*
 * Node 1 has no free huge page: the policy's node 1 is tried without
 * reclaim or compaction, the kernel's choice (node 0, where the base pages
 * are) is used instead, counted as a fallback, and the collapse succeeds.
 */
TEST_F_TIMEOUT(node, full_node_falls_back, 300)
{
	long unevictable, fallback = 0;
	int attempt, node = -1;
	struct region r;
	pid_t filler;

	/* compaction must not make a huge page of the filler's pages */
	unevictable = read_num("/proc/sys/vm/compact_unevictable_allowed");
	ASSERT_EQ(0, write_num("/proc/sys/vm/compact_unevictable_allowed", 0));
	/* fork first: it would write-protect the region's ptes */
	filler = start_filler(1, node_room, 256);
	ASSERT_LT(0, filler) TH_LOG("could not take node 1's huge pages");
	self->skel->data->node = 1;
	/*
	 * The filler tops node 1 up every millisecond, but on the debug kernel
	 * KASAN's quarantine and kswapd free megabytes there at once, and now
	 * and then a huge page of node 1 was free at the very moment of the
	 * allocation. Such an attempt shows nothing: try again, at most three
	 * times. A kernel that does not fall back fails every attempt.
	 */
	for (attempt = 0; attempt < 3; attempt++) {
		ASSERT_EQ(0, region_map(&r, 1));
		ASSERT_EQ(0, bind_to_node(r.p, r.len, 0));
		region_fill(&r, NULL);
		/* the binding only kept the base pages on node 0: lift it */
		ASSERT_EQ(0, bind_to_node(r.p, r.len, -1));
		EXPECT_EQ(0, madvise(r.p, r.len, MADV_COLLAPSE))
			TH_LOG("%s", strerror(errno));
		EXPECT_TRUE(range_is_huge(0, r.p, r.len));
		EXPECT_TRUE(region_check(&r, NULL));
		node = page_node(r.p);
		fallback = policy_stat("knobs", "target_node_fallback");
		region_unmap(&r);
		if (node != 1)
			break;
		/* node 1 had a free huge page: no fallback was needed */
		EXPECT_EQ(0, fallback);
		TH_LOG("attempt %d: node 1 had a free huge page, again", attempt + 1);
	}
	EXPECT_EQ(0, node);
	EXPECT_EQ(attempt + (attempt < 3), policy_stat("knobs", "target_node_chosen"));
	EXPECT_EQ(1, fallback);

	stop_filler(filler);
	write_num("/proc/sys/vm/compact_unevictable_allowed", unevictable);
}

TEST_HARNESS_MAIN
