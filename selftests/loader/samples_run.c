// SPDX-License-Identifier: GPL-2.0
/* The samples run in the guest and raise the AnonHugePages of their target. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "run_cmd.h"
#include "kselftest_harness.h"

static char out[1 << 15];

TEST(collapse_demo_collapses)
{
	unsigned long before = ~0UL, after = 0;
	char *p;

	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapse_demo --size 16 --walk 10000"))
		TH_LOG("%s", out);
	p = strstr(out, "AnonHugePages before:");
	ASSERT_NE(NULL, p);
	sscanf(p, "AnonHugePages before: %lu", &before);
	p = strstr(out, "AnonHugePages after:");
	ASSERT_NE(NULL, p);
	sscanf(p, "AnonHugePages after: %lu", &after);
	EXPECT_EQ(0, before);
	EXPECT_EQ(16384, after);
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapse_demo --sparse 200"));
}

/*
 * A 32 MiB target process in cgroup ce_agent for the hugepaged agent;
 * khugepaged is off meanwhile so only the agent collapses.
 */
FIXTURE(agent) {
	struct target t;
};

FIXTURE_SETUP(agent)
{
	struct thp_settings s;

	ASSERT_EQ(0, cg_create("ce_agent", NULL));
	thp_save_settings();
	thp_read_settings(&s);
	s.thp_enabled = THP_NEVER;
	thp_push_settings(&s);
	ASSERT_EQ(0, target_start(&self->t, 16, 0, NULL));
	ASSERT_EQ(0, cg_move("ce_agent", self->t.pid));
	ASSERT_FALSE(range_is_huge(self->t.pid, self->t.p, self->t.len));
}

FIXTURE_TEARDOWN(agent)
{
	target_stop(&self->t);
	EXPECT_EQ(0, cg_remove("ce_agent"));
	thp_restore_settings();
}

TEST_F(agent, collapses_its_cgroup)
{
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "hugepaged --cgroup " CGROOT "ce_agent --once"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "collapsed"));
	EXPECT_TRUE(range_is_huge(self->t.pid, self->t.p, self->t.len)) TH_LOG("%s", out);
}

TEST_F(agent, bounded_rate)
{
	/* 8 MiB per one-second round: a quarter of the 32 MiB after one round */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "hugepaged --cgroup " CGROOT
			     "ce_agent --once --rate 8"));
	EXPECT_EQ(8192, anon_huge_kb(self->t.pid, self->t.p, self->t.len)) TH_LOG("%s", out);
}

TEST(hugepaged_bad_cgroup)
{
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "hugepaged --cgroup /nonexistent --once"));
	EXPECT_NE(NULL, strstr(out, "/nonexistent"));
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "hugepaged"));
}

TEST_HARNESS_MAIN
