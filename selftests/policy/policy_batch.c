// SPDX-License-Identifier: GPL-2.0
/*
 * batch_size for MADV_COLLAPSE: asked once per batch, with the PMDs left;
 * 0 and huge answers are clamped to [1, 64] and counted; the counters say
 * how many batches and PMDs there were; contents survive any batching.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "knobs.h"
#include "kselftest_harness.h"

#define NR_PMDS 32

FIXTURE(batch)
{
	struct knobs *skel;
	struct bpf_link *link;
	struct region r;
};

FIXTURE_SETUP(batch)
{
	self->skel = knobs_load(NULL, 0);
	ASSERT_NE(NULL, self->skel);
	self->link = knobs_attach(self->skel);
	ASSERT_NE(NULL, self->link);
	ASSERT_EQ(0, region_map(&self->r, NR_PMDS));
	region_fill(&self->r, NULL);
}

FIXTURE_TEARDOWN(batch)
{
	region_unmap(&self->r);
	bpf_link__destroy(self->link);
	knobs__destroy(self->skel);
}

static void collapse_all(struct __test_metadata *_metadata,
			 FIXTURE_DATA(batch) *self)
{
	ASSERT_EQ(0, madvise(self->r.p, self->r.len, MADV_COLLAPSE));
	EXPECT_TRUE(range_is_huge(0, self->r.p, self->r.len));
	EXPECT_TRUE(region_check(&self->r, NULL));
}

TEST_F(batch, once_per_batch)
{
	self->skel->data->batch_pmds = 4;
	collapse_all(_metadata, self);
	EXPECT_EQ(NR_PMDS / 4, self->skel->bss->nr_batch_madvise);
	EXPECT_EQ(8, self->skel->bss->seen_batch_dflt);
	EXPECT_EQ(NR_PMDS, self->skel->bss->seen_pmds_left);
	EXPECT_EQ(NR_PMDS / 4, policy_stat("knobs", "batches"));
	EXPECT_EQ(NR_PMDS, policy_stat("knobs", "batch_pmds"));
	EXPECT_EQ(NR_PMDS, policy_stat("knobs", "collapse_succeeded"));
}

TEST_F(batch, uneven_batches)
{
	self->skel->data->batch_pmds = 5;
	collapse_all(_metadata, self);
	/* 5+5+5+5+5+5+2 */
	EXPECT_EQ(7, self->skel->bss->nr_batch_madvise);
	EXPECT_EQ(NR_PMDS, policy_stat("knobs", "batch_pmds"));
}

TEST_F(batch, zero_clamped_to_one)
{
	self->skel->data->batch_pmds = 0;
	collapse_all(_metadata, self);
	EXPECT_EQ(NR_PMDS, self->skel->bss->nr_batch_madvise);
	EXPECT_LE(NR_PMDS, policy_stat("knobs", "batch_size_clamped"));
}

TEST_F(batch, huge_clamped_to_64)
{
	self->skel->data->batch_pmds = 1000000;
	collapse_all(_metadata, self);
	EXPECT_EQ(1, self->skel->bss->nr_batch_madvise);
	EXPECT_EQ(1, policy_stat("knobs", "batch_size_clamped"));
	EXPECT_EQ(NR_PMDS, policy_stat("knobs", "batch_pmds"));
}

TEST_F(batch, default_is_eight)
{
	collapse_all(_metadata, self);
	EXPECT_EQ(NR_PMDS / 8, self->skel->bss->nr_batch_madvise);
}

TEST_HARNESS_MAIN
