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

/* hugepaged collapses a cgroup's process; khugepaged is off meanwhile. */
TEST(hugepaged_collapses_its_cgroup)
{
	struct target t;
	char procs[128];

	thp_save_settings();
	ASSERT_EQ(0, write_str(THP_SYSFS "enabled", "never"));
	ASSERT_EQ(0, cg_create("ce_agent", NULL));
	ASSERT_EQ(0, target_start(&t, 8, 0, NULL));
	snprintf(procs, sizeof(procs), CGROOT "ce_agent/cgroup.procs");
	ASSERT_EQ(0, write_num(procs, t.pid));
	EXPECT_FALSE(range_is_huge(t.pid, t.p, t.len));

	EXPECT_EQ(0, run_cmd(out, sizeof(out), "hugepaged --cgroup " CGROOT "ce_agent --once"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "collapsed"));
	EXPECT_TRUE(range_is_huge(t.pid, t.p, t.len)) TH_LOG("%s", out);
	target_stop(&t);
	EXPECT_EQ(0, cg_remove("ce_agent"));
}

TEST(hugepaged_bounded_rate)
{
	struct target t;
	char procs[128];

	thp_save_settings();
	ASSERT_EQ(0, write_str(THP_SYSFS "enabled", "never"));
	ASSERT_EQ(0, cg_create("ce_agent2", NULL));
	ASSERT_EQ(0, target_start(&t, 16, 0, NULL));
	snprintf(procs, sizeof(procs), CGROOT "ce_agent2/cgroup.procs");
	ASSERT_EQ(0, write_num(procs, t.pid));
	/* 8 MiB per one-second round: half of the 32 MiB after one round */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "hugepaged --cgroup " CGROOT
			     "ce_agent2 --once --rate 8"));
	EXPECT_EQ(8192, anon_huge_kb(t.pid, t.p, t.len)) TH_LOG("%s", out);
	target_stop(&t);
	EXPECT_EQ(0, cg_remove("ce_agent2"));
}

TEST(hugepaged_bad_cgroup)
{
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "hugepaged --cgroup /nonexistent --once"));
	EXPECT_NE(NULL, strstr(out, "/nonexistent"));
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "hugepaged"));
}

TEST_HARNESS_MAIN
