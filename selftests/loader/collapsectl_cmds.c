// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl: every command, and every error a user can make, gives the
 * documented result and one clear line.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "run_cmd.h"
#include "kselftest_harness.h"

#define BPF		"/usr/share/collapse_ext/bpf/"
#define TBPF		"/selftests/bpf/"
#define PINS		"/sys/fs/bpf/collapse_ext/"

static char out[1 << 16];

/* Unload whatever a failed test may have left behind. */
static void cleanup(void)
{
	char o[256];

	run_cmd(o, sizeof(o), "for p in " PINS "*; do [ -e \"$p\" ] && "
		"collapsectl unload $(basename $p); done; true");
}

FIXTURE(ctl)
{
	int unused;
};

FIXTURE_SETUP(ctl)
{
	cleanup();
}

FIXTURE_TEARDOWN(ctl)
{
	cleanup();
}

TEST_F(ctl, help_and_version)
{
	static const char * const cmds[] = {
		"load", "list", "stats", "swap", "unload", "collapse", "ab",
	};

	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl --help"));
	EXPECT_NE(NULL, strstr(out, "Commands:"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl --version"));
	EXPECT_NE(NULL, strstr(out, "collapsectl 0."));
	for (int i = 0; i < 7; i++) {
		EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl %s --help", cmds[i]));
		EXPECT_NE(NULL, strstr(out, "Usage: collapsectl"));
	}
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl frobnicate"));
	EXPECT_NE(NULL, strstr(out, "unknown command 'frobnicate'"));
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl"));
}

static int sparse_collapse(void *arg)
{
	return collapse_sparse_region(1);
}

TEST_F(ctl, load_outlives_loader_and_unload_detaches)
{
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF "frugal.bpf.o"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "attached 'frugal' to cgroup /"));
	EXPECT_EQ(0, access(PINS "frugal", F_OK));
	EXPECT_TRUE(policy_attached("frugal"));
	/* a new process, after the loader exited, is governed by it */
	EXPECT_EQ(EBUSY, run_in_cgroup("", sparse_collapse, NULL));
	EXPECT_EQ(1, policy_stat("frugal", "failed_exceed_none_pte"));

	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl list"));
	EXPECT_NE(NULL, strstr(out, "frugal"));
	EXPECT_NE(NULL, strstr(out, "yes"));

	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl unload frugal"));
	EXPECT_FALSE(policy_attached("frugal"));
	EXPECT_NE(0, access(PINS "frugal", F_OK));
	EXPECT_EQ(0, run_in_cgroup("", sparse_collapse, NULL));
}

TEST_F(ctl, load_into_cgroup_with_name)
{
	ASSERT_EQ(0, cg_create("ctl_cg", NULL));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "frugal.bpf.o --cgroup /sys/fs/cgroup/ctl_cg --name tight"));
	EXPECT_NE(NULL, strstr(out, "attached 'tight' to cgroup /ctl_cg"));
	EXPECT_EQ(EBUSY, run_in_cgroup("ctl_cg", sparse_collapse, NULL));
	EXPECT_EQ(0, run_in_cgroup("", sparse_collapse, NULL));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl unload tight"));
	EXPECT_EQ(0, cg_remove("ctl_cg"));
}

TEST_F(ctl, stats_text_json_watch)
{
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF "passthrough.bpf.o"));
	run_in_cgroup("", sparse_collapse, NULL);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl stats passthrough"));
	EXPECT_NE(NULL, strstr(out, "collapse_succeeded"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl stats --json"));
	EXPECT_TRUE(json_object_valid(out)) TH_LOG("not JSON: %s", out);
	EXPECT_NE(NULL, strstr(out, "\"passthrough\": {"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "timeout -s INT 3 collapsectl "
			     "stats passthrough --watch 1; true"));
	EXPECT_NE(NULL, strstr(out, "/s"));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl stats nosuch"));
	EXPECT_NE(NULL, strstr(out, "no policy named 'nosuch'"));
}

/* A child loops MADV_COLLAPSE on a sparse range while we swap. */
TEST_F_TIMEOUT(ctl, swap_has_no_gap, 180)
{
	volatile long *calls = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status, i;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, calls);
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF "frugal.bpf.o"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* frugal says EBUSY; the default would collapse */
		while (!calls[1]) {
			if (collapse_sparse_region(1) != EBUSY)
				_exit(1);
			calls[0]++;
		}
		_exit(0);
	}
	for (i = 0; i < 5; i++)
		EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl swap frugal "
				     BPF "frugal.bpf.o")) TH_LOG("%s", out);
	calls[1] = 1;
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	TH_LOG("%ld MADV_COLLAPSE calls during 5 swaps", calls[0]);
	EXPECT_EQ(5, policy_stat("frugal", "swaps"));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl swap nosuch " BPF "frugal.bpf.o"));
	EXPECT_NE(NULL, strstr(out, "no policy named 'nosuch'"));
	munmap((void *)calls, 4096);
}

TEST_F(ctl, errors_are_one_clear_line)
{
	/* missing file */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load /nonexistent.bpf.o"));
	EXPECT_NE(NULL, strstr(out, "/nonexistent.bpf.o: No such file"));
	/* not a BPF object */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load /bin/busybox"));
	EXPECT_NE(NULL, strstr(out, "not a BPF object"));
	/* truncated, empty and garbage objects */
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "head -c 3000 " BPF "passthrough.bpf.o "
			     "> /tmp/trunc.o && : > /tmp/empty.o && "
			     "head -c 8192 /dev/urandom > /tmp/garbage.o"));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load /tmp/trunc.o"));
	EXPECT_NE(NULL, strstr(out, "not a BPF object")) TH_LOG("%s", out);
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load /tmp/empty.o"));
	EXPECT_NE(NULL, strstr(out, "not a BPF object")) TH_LOG("%s", out);
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load /tmp/garbage.o"));
	EXPECT_NE(NULL, strstr(out, "not a BPF object")) TH_LOG("%s", out);
	EXPECT_FALSE(policy_attached("passthrough"));
	/* no collapse_ext_ops map */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load " TBPF "no_ops.bpf.o"));
	EXPECT_NE(NULL, strstr(out, "no struct collapse_ext_ops map"));
	/* verifier rejection: the relevant tail, not the whole log */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load " TBPF "bad_ctx_write.bpf.o"));
	EXPECT_NE(NULL, strstr(out, "only struct collapse_ext_limits is writable"));
	EXPECT_NE(NULL, strstr(out, "load failed"));
	EXPECT_GT(40, count_lines(out)) TH_LOG("%s", out);
	/* bad cgroup paths */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "passthrough.bpf.o --cgroup /sys/fs/cgroup/nope"));
	EXPECT_NE(NULL, strstr(out, "cgroup /sys/fs/cgroup/nope: No such file"));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "passthrough.bpf.o --cgroup /proc"));
	EXPECT_NE(NULL, strstr(out, "not in a cgroup v2 hierarchy"));
	/* unknown policy */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl unload nosuch"));
	EXPECT_NE(NULL, strstr(out, "no policy named 'nosuch'"));
	/* names the kernel refuses never become paths */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl unload ../x"));
	EXPECT_NE(NULL, strstr(out, "'../x' is not a policy name")) TH_LOG("%s", out);
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl stats policies"));
	EXPECT_NE(NULL, strstr(out, "is not a policy name"));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "passthrough.bpf.o --name a/b"));
	EXPECT_NE(NULL, strstr(out, "'a/b' is not a policy name"));
	/* pids */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl collapse --pid 999999"));
	EXPECT_NE(NULL, strstr(out, "no such process"));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl collapse --pid 2"));
	EXPECT_NE(NULL, strstr(out, "no user memory")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl collapse"));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl collapse --pid 1 zz-yy"));
	EXPECT_NE(NULL, strstr(out, "bad range"));
}

TEST_F(ctl, ebusy_names_the_holder)
{
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF "passthrough.bpf.o"));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "frugal.bpf.o"));
	EXPECT_NE(NULL, strstr(out, "already has a policy, 'passthrough'")) TH_LOG("%s", out);
	EXPECT_FALSE(policy_attached("frugal"));
	/* same name, other cgroup */
	ASSERT_EQ(0, cg_create("ctl_dup", NULL));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "passthrough.bpf.o --cgroup /sys/fs/cgroup/ctl_dup"));
	EXPECT_NE(NULL, strstr(out, "passthrough"));
	cg_remove("ctl_dup");
}

/*
 * A kernel without collapse_ext, as collapsectl sees one: in a private
 * mount namespace with /sys/kernel/mm/collapse_ext hidden under a tmpfs.
 */
TEST_F(ctl, kernel_without_collapse_ext)
{
	static const char *const cmds[] = {
		"list", "stats", "unload x", "load " BPF "passthrough.bpf.o",
	};

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		EXPECT_EQ(1, run_cmd(out, sizeof(out), "unshare -m sh -c 'mount -t tmpfs "
				     "none /sys/kernel/mm && exec collapsectl %s'", cmds[i]));
		EXPECT_NE(NULL, strstr(out, "this kernel has no collapse_ext"))
			TH_LOG("%s: %s", cmds[i], out);
		EXPECT_NE(NULL, strstr(out, "make kernel"));
		EXPECT_EQ(1, count_lines(out)) TH_LOG("%s: %s", cmds[i], out);
	}
	EXPECT_FALSE(policy_attached("passthrough"));
}

TEST_F(ctl, not_root)
{
	EXPECT_EQ(1, run_cmd_as(65534, out, sizeof(out), "collapsectl load "
				BPF "passthrough.bpf.o"));
	EXPECT_NE(NULL, strstr(out, "needs root")) TH_LOG("%s", out);
	EXPECT_EQ(1, run_cmd_as(65534, out, sizeof(out), "collapsectl unload x"));
	EXPECT_NE(NULL, strstr(out, "needs root"));
	/* a process of another user */
	EXPECT_EQ(1, run_cmd_as(65534, out, sizeof(out), "collapsectl collapse "
				"--pid 1 --limits"));
	EXPECT_NE(NULL, strstr(out, "process 1: not accessible")) TH_LOG("%s", out);
	EXPECT_EQ(1, count_lines(out)) TH_LOG("%s", out);
}

TEST_F(ctl, collapse_another_process)
{
	struct target t;

	ASSERT_EQ(0, target_start(&t, 4, 0, NULL));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl collapse --pid %d --limits "
			     "%lx-%lx", t.pid, (unsigned long)t.p,
			     (unsigned long)t.p + t.len)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "collapsed"));
	EXPECT_NE(NULL, strstr(out, "AnonHugePages: 0 kB before, 8192 kB after"));
	EXPECT_TRUE(range_is_huge(t.pid, t.p, t.len));
	/* --all: every anonymous mapping, each with its result */
	EXPECT_NE(-1, run_cmd(out, sizeof(out), "collapsectl collapse --pid %d", t.pid));
	EXPECT_NE(NULL, strstr(out, "MiB"));
	target_stop(&t);
}

TEST_F_TIMEOUT(ctl, ab_prints_both_and_cleans_up, 180)
{
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl ab " BPF "frugal.bpf.o "
			     BPF "eager.bpf.o --duration 6 -- collapse_demo --size 8 "
			     "--sparse 10 --walk 1000"));
	EXPECT_NE(NULL, strstr(out, "A anon_thp kB"));
	EXPECT_NE(NULL, strstr(out, "A_frugal"));
	EXPECT_NE(NULL, strstr(out, "B_eager"));
	EXPECT_NE(NULL, strstr(out, "difference"));
	EXPECT_NE(NULL, strstr(out, "run A: exit status 0"));
	/* frugal refused the sparse ranges, eager collapsed them */
	EXPECT_LT(0, strstr(out, "failed_exceed_none_pte") != NULL);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "ls -d /sys/fs/cgroup/collapsectl-ab.* "
			     PINS "* 2>/dev/null | wc -l"));
	EXPECT_STREQ("0\n", out);
	EXPECT_FALSE(policy_attached("A_frugal"));
	EXPECT_FALSE(policy_attached("B_eager"));
}

TEST_F(ctl, bpftool_struct_ops_register)
{
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "mkdir -p /sys/fs/bpf/bt && bpftool "
			     "struct_ops register " BPF "passthrough.bpf.o /sys/fs/bpf/bt"))
		TH_LOG("%s", out);
	EXPECT_TRUE(policy_attached("passthrough"));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl unload passthrough"));
	EXPECT_NE(NULL, strstr(out, "not loaded by collapsectl"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "rm -rf /sys/fs/bpf/bt"));
	/* the last link reference goes from a work item: give it a moment */
	for (int i = 0; i < 40 && policy_attached("passthrough"); i++)
		usleep(50000);
	EXPECT_FALSE(policy_attached("passthrough"));
}

TEST_HARNESS_MAIN
