// SPDX-License-Identifier: GPL-2.0
/*
 * target_node: the new huge page comes from the node the policy names;
 * -1 and invalid nodes leave the kernel's choice (the latter counted);
 * node_load[] tells the policy where the base pages are.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
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
	if (read_num("/sys/devices/system/node/node1/online") < 0 &&
	    access("/sys/devices/system/node/node1", F_OK))
		SKIP(return, "needs two NUMA nodes (numa=fake=2)");
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

TEST_HARNESS_MAIN
