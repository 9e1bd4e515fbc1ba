// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl: every command, and every error a user can make, gives the
 * documented result and one clear line.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "run_cmd.h"
#include "knobs.h"
#include "kselftest_harness.h"

#define CAP_SYS_ADMIN_BIT	21

#define BPF		"/usr/share/collapse_ext/bpf/"
#define TBPF		"/selftests/bpf/"
#define PINS		"/sys/fs/bpf/collapse_ext/"

static char out[1 << 16];

FIXTURE(ctl)
{
	int unused;
};

/* Unload whatever a failed test may have left behind. */
FIXTURE_SETUP(ctl)
{
	unload_pinned_policies();
}

FIXTURE_TEARDOWN(ctl)
{
	unload_pinned_policies();
}

TEST_F(ctl, help_and_version)
{
	static const char * const cmds[] = {
		"load", "list", "stats", "swap", "unload", "collapse", "ab",
		"apply", "version", "info",
	};

	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl --help"));
	EXPECT_NE(NULL, strstr(out, "Commands:"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl --version"));
	EXPECT_NE(NULL, strstr(out, "collapsectl 0."));
	/* version names the kernel's hooks: orders only where it has them */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl -V"));
	EXPECT_NE(NULL, strstr(out, "collapse_ext hooks pte_limits target_node")) TH_LOG("%s", out);
	EXPECT_EQ(kernel_has_hook("orders"), !!strstr(out, " orders"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl version --json"));
	EXPECT_NE(NULL, strstr(out, "\"collapse_ext\":true")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"hooks\":[\"pte_limits\",")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl version extra"));
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl %s --help", cmds[i]));
		EXPECT_NE(NULL, strstr(out, "Usage: collapsectl"));
	}
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl frobnicate"));
	EXPECT_NE(NULL, strstr(out, "unknown command 'frobnicate'"));
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl"));
}

/* -j/-p/-d before the command, as bpftool takes them */
TEST_F(ctl, global_options)
{
	char own[4096];

	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF "frugal.bpf.o"))
		TH_LOG("%s", out);
	EXPECT_EQ(0, run_cmd(own, sizeof(own), "collapsectl list --json"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl -j list"));
	EXPECT_STREQ(own, out);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl --json stats frugal"));
	EXPECT_NE(NULL, strstr(out, "\"name\":\"frugal\"")) TH_LOG("%s", out);
	/* -p: the same document, indented */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl -p version"));
	EXPECT_NE(NULL, strstr(out, "{\n    \"version\": \"")) TH_LOG("%s", out);
	/* -d: libbpf's own messages (a load prints them; -d alone, nothing more) */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl -d swap frugal " BPF "frugal.bpf.o"));
	EXPECT_NE(NULL, strstr(out, "libbpf: ")) TH_LOG("%s", out);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl swap frugal " BPF "frugal.bpf.o"));
	EXPECT_EQ(NULL, strstr(out, "libbpf: ")) TH_LOG("%s", out);
	/* a command without JSON, an unknown option: usage errors */
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl -j unload frugal"));
	EXPECT_NE(NULL, strstr(out, "'unload' has no JSON output")) TH_LOG("%s", out);
	EXPECT_TRUE(policy_attached("frugal"));
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl -x list"));
	EXPECT_NE(NULL, strstr(out, "unknown option '-x'")) TH_LOG("%s", out);
	/* unload --all: every pin, then nothing to do */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "mkdir -p /sys/fs/cgroup/ctl_all && "
			     "collapsectl load " BPF "passthrough.bpf.o "
			     "--cgroup /sys/fs/cgroup/ctl_all --name p2")) TH_LOG("%s", out);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl unload --all"));
	EXPECT_NE(NULL, strstr(out, "detached 'frugal'")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "detached 'p2'")) TH_LOG("%s", out);
	EXPECT_FALSE(policy_attached("frugal"));
	EXPECT_FALSE(policy_attached("p2"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl unload --all"));
	EXPECT_NE(NULL, strstr(out, "no policy pinned")) TH_LOG("%s", out);
	rmdir("/sys/fs/cgroup/ctl_all");
}

static int sparse_collapse(void *arg)
{
	return collapse_sparse_region(1);
}

/*
 * The two values of counter @key in a side-by-side counters table
 * ("  KEY  A  B  DIFF") of @text; false when the row is missing.
 */
static bool table_row(const char *text, const char *key, long *a, long *b)
{
	char pat[80];
	const char *p;

	snprintf(pat, sizeof(pat), "  %s ", key);
	p = strstr(text, pat);
	return p && sscanf(p + strlen(pat), "%ld %ld", a, b) == 2;
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
	EXPECT_EQ(1, policy_stat("frugal", "failed_none_limit"));

	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl list"));
	EXPECT_NE(NULL, strstr(out, "frugal"));
	EXPECT_NE(NULL, strstr(out, "yes"));
	/* -j as stats takes it */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl list -j"));
	EXPECT_NE(NULL, strstr(out, "\"name\":\"frugal\"")) TH_LOG("%s", out);

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
	EXPECT_EQ(NULL, strstr(out, "warning")) TH_LOG("%s", out);
	EXPECT_EQ(EBUSY, run_in_cgroup("ctl_cg", sparse_collapse, NULL));
	EXPECT_EQ(0, run_in_cgroup("", sparse_collapse, NULL));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl unload tight"));
	/* eager has no root-only hook: on a cgroup, no warning */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "eager.bpf.o --cgroup /sys/fs/cgroup/ctl_cg"));
	EXPECT_EQ(NULL, strstr(out, "warning")) TH_LOG("%s", out);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl unload eager"));
	/* a root-only hook (pace's pass_size) on a cgroup: refused, nothing left */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "pace.bpf.o --cgroup /sys/fs/cgroup/ctl_cg"));
	EXPECT_NE(NULL, strstr(out, "collapsectl: " BPF "pace.bpf.o: policy pace has a "
			       "pass_size hook, which only a policy on the root "
			       "cgroup may have")) TH_LOG("%s", out);
	EXPECT_FALSE(policy_attached("pace"));
	EXPECT_NE(0, access("/sys/fs/bpf/collapse_ext/pace", F_OK));
	/* at the root: loaded */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF "pace.bpf.o"));
	EXPECT_EQ(NULL, strstr(out, "warning")) TH_LOG("%s", out);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl unload pace"));
	EXPECT_EQ(0, cg_remove("ctl_cg"));
}

TEST_F(ctl, stats_text_json_watch)
{
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF "passthrough.bpf.o"));
	run_in_cgroup("", sparse_collapse, NULL);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl stats passthrough"));
	EXPECT_NE(NULL, strstr(out, "collapse_succeeded"));
	/* The JSON is parsed by the host (collapsectl_metrics). */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl stats --json"));
	EXPECT_NE(NULL, strstr(out, "\"name\":\"passthrough\""));
	/* Ctrl-C ends --watch with status 0, after one block per interval */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl stats passthrough "
			     "--watch 1000ms & p=$!; sleep 3; kill -INT $p; wait $p"));
	EXPECT_LE(2, count_matches(out, "collapse_succeeded")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "/s"));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl stats nosuch"));
	EXPECT_NE(NULL, strstr(out, "no policy named 'nosuch'"));
}

/* A child loops MADV_COLLAPSE on a sparse range while we swap. */
TEST_F_TIMEOUT(ctl, swap_has_no_gap, 180)
{
	volatile long *calls = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long before;
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
	while (!calls[0])
		usleep(1000);
	before = calls[0];
	for (i = 0; i < 5; i++)
		EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl swap frugal "
				     BPF "frugal.bpf.o")) TH_LOG("%s", out);
	before = calls[0] - before;
	calls[1] = 1;
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	TH_LOG("%ld MADV_COLLAPSE calls during 5 swaps", before);
	/* the child really collapsed while the swaps happened, each refused */
	EXPECT_LT(0, before);
	EXPECT_LE(calls[0], policy_stat("frugal", "failed_none_limit"));
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
	EXPECT_NE(NULL, strstr(out, "/bin/busybox: not a BPF object file"));
	EXPECT_EQ(1, count_lines(out)) TH_LOG("%s", out);
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
	/*
	 * no bpffs where the pin goes (a tmpfs over /sys/fs/bpf, in a mount
	 * namespace of its own): refused before the attach, nothing attached
	 */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "unshare -m --propagation private "
			     "sh -c 'mount -t tmpfs none /sys/fs/bpf && "
			     "collapsectl load " BPF "passthrough.bpf.o'"));
	EXPECT_NE(NULL, strstr(out, "is not on bpffs")) TH_LOG("%s", out);
	EXPECT_FALSE(policy_attached("passthrough"));
	/* two: which would be the policy? Refused, nothing attached */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load " TBPF "two_ops.bpf.o"));
	EXPECT_NE(NULL, strstr(out, "2 struct collapse_ext_ops maps")) TH_LOG("%s", out);
	EXPECT_FALSE(policy_attached("two_ops_a"));
	/* verifier rejection: the relevant tail, not the whole log */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load " TBPF "bad_ctx_write.bpf.o"));
	EXPECT_NE(NULL, strstr(out, "only the limits of struct collapse_ext_limits are writable"));
	EXPECT_NE(NULL, strstr(out, "load failed"));
	EXPECT_GT(40, count_lines(out)) TH_LOG("%s", out);
	/* bad cgroup paths */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "passthrough.bpf.o --cgroup /sys/fs/cgroup/nope"));
	EXPECT_NE(NULL, strstr(out, "cgroup /sys/fs/cgroup/nope: No such file"));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "passthrough.bpf.o --cgroup /proc"));
	EXPECT_NE(NULL, strstr(out, "not in a cgroup v2 hierarchy"));
	EXPECT_NE(NULL, strstr(out, "systemd.unified_cgroup_hierarchy=1")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "hybrid"));
	/*
	 * systemd's hybrid layout (a mount namespace of our own: a tmpfs at
	 * /sys/fs/cgroup, cgroup2 at its unified/): the v2 mount is named,
	 * no advice to mount cgroup2 over the hierarchy in use
	 */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "unshare -m --propagation private "
			     "sh -c 'mount -t tmpfs none /sys/fs/cgroup && "
			     "mkdir /sys/fs/cgroup/unified /sys/fs/cgroup/v1 && "
			     "mount -t cgroup2 none /sys/fs/cgroup/unified && "
			     "collapsectl load " BPF "passthrough.bpf.o "
			     "--cgroup /sys/fs/cgroup/v1'"));
	EXPECT_NE(NULL, strstr(out, "mixes v1 and v2 (systemd's hybrid mode), name a "
			       "cgroup under /sys/fs/cgroup/unified")) TH_LOG("%s", out);
	EXPECT_FALSE(policy_attached("passthrough"));
	/* unknown policy */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl unload nosuch"));
	EXPECT_NE(NULL, strstr(out, "no policy named 'nosuch'"));
	/* under systemd (JOURNAL_STREAM names stderr) at error priority */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "sh -c 'exec 2>/tmp/ce_err; "
			     "JOURNAL_STREAM=$(stat -c %%d:%%i /tmp/ce_err) "
			     "collapsectl unload nosuch'; cat /tmp/ce_err"));
	EXPECT_NE(NULL, strstr(out, "<3>collapsectl: no policy named 'nosuch'")) TH_LOG("%s", out);
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl unload nosuch"));
	EXPECT_EQ(NULL, strstr(out, "<3>"));
	/* names the kernel refuses never become paths */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl unload ../x"));
	EXPECT_NE(NULL, strstr(out, "'../x' is not a policy name")) TH_LOG("%s", out);
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl stats ."));
	EXPECT_NE(NULL, strstr(out, "is not a policy name"));
	/* "policies" names no sysfs file any more: a name like another */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl stats policies"));
	EXPECT_NE(NULL, strstr(out, "no policy named 'policies'")) TH_LOG("%s", out);
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
	/* numbers are read whole: never the number in front of a typo */
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl collapse --pid 1x"));
	EXPECT_NE(NULL, strstr(out, "--pid '1x' is not a process id")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl collapse --pid -1"));
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl stats --watch 1q"));
	EXPECT_NE(NULL, strstr(out, "(got '1q')")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl stats --watch 0s"));
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl ab " BPF "frugal.bpf.o "
			     BPF "eager.bpf.o --duration 10x -- true"));
	EXPECT_NE(NULL, strstr(out, "--duration needs a positive time")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl ab " BPF "frugal.bpf.o "
			     BPF "eager.bpf.o --duration nan -- true"));
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
 * mount namespace whose /sys/kernel/btf/vmlinux has no collapse_ext_ops.
 */
TEST_F(ctl, kernel_without_collapse_ext)
{
	static const char *const cmds[] = {
		"list", "stats", "unload x", "load " BPF "passthrough.bpf.o",
	};
	EXPECT_EQ(1, run_cmd_without_ce(out, sizeof(out), "collapsectl version --check"))
		TH_LOG("%s", out);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl version --check"));
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		EXPECT_EQ(1, run_cmd_without_ce(out, sizeof(out), "collapsectl %s",
						cmds[i]));
		EXPECT_NE(NULL, strstr(out, "this kernel has no collapse_ext"))
			TH_LOG("%s: %s", cmds[i], out);
		EXPECT_NE(NULL, strstr(out, "CONFIG_COLLAPSE_EXT=y"));
		EXPECT_EQ(1, count_lines(out)) TH_LOG("%s: %s", cmds[i], out);
	}
	EXPECT_FALSE(policy_attached("passthrough"));
}

TEST_F(ctl, not_root)
{
	EXPECT_EQ(1, run_cmd_as(65534, out, sizeof(out), "collapsectl load "
				BPF "passthrough.bpf.o"));
	EXPECT_NE(NULL, strstr(out, "needs CAP_SYS_ADMIN")) TH_LOG("%s", out);
	EXPECT_EQ(1, run_cmd_as(65534, out, sizeof(out), "collapsectl unload x"));
	EXPECT_NE(NULL, strstr(out, "needs CAP_SYS_ADMIN"));
	/* the policies are read from their links, given only to CAP_SYS_ADMIN */
	EXPECT_EQ(1, run_cmd_as(65534, out, sizeof(out), "collapsectl list"));
	EXPECT_NE(NULL, strstr(out, "needs CAP_SYS_ADMIN")) TH_LOG("%s", out);
	EXPECT_EQ(1, run_cmd_as(65534, out, sizeof(out), "collapsectl stats"));
	EXPECT_NE(NULL, strstr(out, "needs CAP_SYS_ADMIN")) TH_LOG("%s", out);
	/* a process of another user */
	EXPECT_EQ(1, run_cmd_as(65534, out, sizeof(out), "collapsectl collapse "
				"--pid 1 --limits"));
	EXPECT_NE(NULL, strstr(out, "process 1: not accessible")) TH_LOG("%s", out);
	EXPECT_EQ(1, count_lines(out)) TH_LOG("%s", out);
}

/* root without CAP_SYS_ADMIN in its bounding set: told what is missing */
TEST_F(ctl, root_without_cap_sys_admin)
{
	int pfd[2], status;
	size_t len;
	ssize_t n;
	pid_t pid;

	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		/* dropped from the bounding set: root's exec cannot regain it */
		if (prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN_BIT, 0, 0, 0))
			_exit(99);
		execlp("collapsectl", "collapsectl", "load", BPF "passthrough.bpf.o", NULL);
		_exit(98);
	}
	close(pfd[1]);
	/* until EOF: the message comes in several writes */
	for (len = 0; (n = read(pfd[0], out + len, sizeof(out) - 1 - len)) > 0; )
		len += n;
	out[len] = 0;
	close(pfd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(1, WEXITSTATUS(status)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "needs CAP_SYS_ADMIN")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "not in this process"));
	EXPECT_FALSE(policy_attached("passthrough"));
}

TEST_F(ctl, collapse_another_process)
{
	int rc, ranges, failed;
	struct target t;

	ASSERT_EQ(0, target_start(&t, 4, 0, NULL));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl collapse --pid %d --limits "
			     "%lx-%lx", t.pid, (unsigned long)t.p,
			     (unsigned long)t.p + t.len)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "collapsed"));
	EXPECT_NE(NULL, strstr(out, "AnonHugePages: 0 kB before, 8192 kB after"));
	EXPECT_TRUE(range_is_huge(t.pid, t.p, t.len));
	/*
	 * --all: every anonymous mapping, each with its result line; the exit
	 * status is 1 exactly when one of them failed
	 */
	rc = run_cmd(out, sizeof(out), "collapsectl collapse --pid %d", t.pid);
	ranges = count_matches(out, " MiB  ");
	failed = ranges - count_matches(out, " MiB  collapsed");
	EXPECT_LT(0, ranges) TH_LOG("%s", out);
	EXPECT_EQ(failed ? 1 : 0, rc) TH_LOG("%s", out);
	EXPECT_TRUE(range_is_huge(t.pid, t.p, t.len));
	target_stop(&t);
}

/* --limits and --defrag reach the kernel as the flags a policy sees. */
TEST_F(ctl, collapse_flags_reach_the_policy)
{
	static const struct {
		const char *opts;
		unsigned int flags;
	} runs[] = {
		{ "", 0 },
		{ "--defrag", MADV_F_COLLAPSE_DEFRAG },
		{ "--limits", MADV_F_COLLAPSE_LIMITS },
		{ "--limits --defrag", MADV_F_COLLAPSE_LIMITS | MADV_F_COLLAPSE_DEFRAG },
	};
	struct knobs *k = knobs_load("ctl_flags", 0);
	struct bpf_link *link;
	struct target t;

	ASSERT_NE(NULL, k);
	link = knobs_attach(k);
	ASSERT_NE(NULL, link);
	for (int i = 0; i < 4; i++) {
		ASSERT_EQ(0, target_start(&t, 1, 0, NULL));
		k->bss->seen_flags = ~0u;
		k->bss->seen_caller = ~0u;
		EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl collapse --pid %d %s "
				     "%lx-%lx", t.pid, runs[i].opts, (unsigned long)t.p,
				     (unsigned long)t.p + t.len)) TH_LOG("%s", out);
		EXPECT_EQ(runs[i].flags, k->bss->seen_flags) TH_LOG("%s", runs[i].opts);
		EXPECT_EQ(CALLER_PROCESS_MADVISE, k->bss->seen_caller);
		target_stop(&t);
	}
	bpf_link__destroy(link);
	knobs__destroy(k);
}

/* Nothing of an ab run is left: cgroups, pins, policies, processes. */
static void expect_ab_cleaned_up(struct __test_metadata *_metadata)
{
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "ls -d /sys/fs/cgroup/collapsectl-ab.* "
			     PINS "* 2>/dev/null | wc -l"));
	EXPECT_STREQ("0\n", out);
	EXPECT_FALSE(policy_attached("A_frugal"));
	EXPECT_FALSE(policy_attached("B_eager"));
}

TEST_F_TIMEOUT(ctl, ab_prints_both_and_cleans_up, 180)
{
	long a, b;

	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl ab " BPF "frugal.bpf.o "
			     BPF "eager.bpf.o --duration 6 --csv /tmp/ab.csv -- "
			     "collapse_demo --size 8 --sparse 10 --walk 1000"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "A anon_thp kB"));
	EXPECT_NE(NULL, strstr(out, "A_frugal"));
	EXPECT_NE(NULL, strstr(out, "B_eager"));
	EXPECT_NE(NULL, strstr(out, "difference"));
	EXPECT_NE(NULL, strstr(out, "run A: "));
	/* frugal refused the sparse ranges, eager collapsed them */
	ASSERT_TRUE(table_row(out, "failed_none_limit", &a, &b)) TH_LOG("%s", out);
	EXPECT_LT(0, a);
	EXPECT_EQ(0, b);
	ASSERT_TRUE(table_row(out, "collapse_succeeded", &a, &b));
	EXPECT_LT(a, b);
	/* --csv: the header, then one line of five numbers per second */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "head -1 /tmp/ab.csv"));
	EXPECT_STREQ("seconds,anon_thp_kb_A,anon_thp_kb_B,memory_kb_A,memory_kb_B\n", out);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "tail -n +2 /tmp/ab.csv | grep -Ecx "
			     "'[0-9.]+,[0-9]+,[0-9]+,[0-9]+,[0-9]+'"));
	EXPECT_LE(1, atoi(out)) TH_LOG("%s", out);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "tail -n +2 /tmp/ab.csv | grep -Ecvx "
			     "'[0-9.]+,[0-9]+,[0-9]+,[0-9]+,[0-9]+'; true"));
	EXPECT_STREQ("0\n", out);
	unlink("/tmp/ab.csv");
	expect_ab_cleaned_up(_metadata);
}

/*
 * Ctrl-C: exit 130, and every process of both runs is gone, including a
 * child that left the run's process group.
 */
TEST_F_TIMEOUT(ctl, ab_ctrl_c_kills_both_process_trees, 120)
{
	EXPECT_EQ(130, run_cmd(out, sizeof(out), "collapsectl ab " BPF "frugal.bpf.o "
			       BPF "eager.bpf.o --duration 60 -- sh -c "
			       "'setsid sleep 1000 & sleep 1000' & sleep 3; "
			       "kill -INT $!; wait $!")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "interrupted"));
	EXPECT_NE(NULL, strstr(out, "run A: stopped"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "grep -lsx sleep /proc/[0-9]*/comm; true"));
	EXPECT_STREQ("", out) TH_LOG("left behind: %s", out);
	expect_ab_cleaned_up(_metadata);
}

/* A workload that fails is the exit status, and still cleaned up. */
TEST_F_TIMEOUT(ctl, ab_failing_workload_fails, 60)
{
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl ab " BPF "frugal.bpf.o "
			     BPF "eager.bpf.o --duration 30 -- sh -c 'exit 3'"));
	EXPECT_NE(NULL, strstr(out, "run A: exit status 3")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "run A failed")) TH_LOG("%s", out);
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl ab " BPF "frugal.bpf.o "
			     BPF "eager.bpf.o --duration 30 -- /nonexistent"));
	EXPECT_NE(NULL, strstr(out, "run A: exit status 127")) TH_LOG("%s", out);
	expect_ab_cleaned_up(_metadata);
}

/*
 * load --foreground: governs while it runs, detaches on SIGTERM with the
 * final counters, and ends by itself when the kernel detaches the policy.
 */
TEST_F_TIMEOUT(ctl, load_foreground, 60)
{
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load --foreground " BPF
			     "frugal.bpf.o & while ! collapsectl list | grep -q ^frugal; do "
			     "sleep 0.1; done; "
			     "test ! -e " PINS "frugal || echo pinned; "
			     "kill -TERM $!; wait $!")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "until SIGINT/SIGTERM"));
	EXPECT_EQ(NULL, strstr(out, "pinned"));
	EXPECT_NE(NULL, strstr(out, "final counters of 'frugal'"));
	EXPECT_NE(NULL, strstr(out, "detached 'frugal'"));
	EXPECT_FALSE(policy_attached("frugal"));

	ASSERT_EQ(0, cg_create("ctl_fg", NULL));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "timeout 30 collapsectl load --foreground "
			     "--cgroup /sys/fs/cgroup/ctl_fg " BPF "frugal.bpf.o & "
			     "while ! collapsectl list | grep -q ^frugal; do sleep 0.1; done; "
			     "rmdir /sys/fs/cgroup/ctl_fg; wait $!"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "detached by the kernel")) TH_LOG("%s", out);
	EXPECT_FALSE(policy_attached("frugal"));
}
/*
 * Knobs without rebuilding: --set writes a const volatile global (read
 * back from the loaded .rodata map) or the ops' flags; a wrong name,
 * value or form is refused, nothing attached.
 */
TEST_F(ctl, knobs_without_rebuilding)
{
	static const char * const bad[][2] = {
		{ "nosuch=1", "no knob 'nosuch': the knobs are flags, share_pct, min_pages" },
		{ "share_pct=-1", "share_pct=-1: the value must be an unsigned 32-bit integer" },
		{ "share_pct=4294967296", "must be an unsigned 32-bit integer" },
		{ "share_pct=5x", "must be an unsigned 32-bit integer" },
		{ "flags=2", "the flags are 0 or NO_YIELD" },
	};

	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF "priority.bpf.o "
			     "--set share_pct=50 --set min_pages=0x400")) TH_LOG("%s", out);
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "bpftool -j map dump name priority.rodata"));
	EXPECT_NE(NULL, strstr(out, "\"share_pct\":50")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"min_pages\":1024")) TH_LOG("%s", out);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl unload priority"));

	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF "passthrough.bpf.o "
			     "--set flags=NO_YIELD")) TH_LOG("%s", out);
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "bpftool -j struct_ops dump name passthrough"));
	EXPECT_NE(NULL, strstr(out, "\"flags\":1")) TH_LOG("%s", out);
	/* a swap takes knobs too */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl swap passthrough " BPF
			     "passthrough.bpf.o --set flags=0")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "passthrough.bpf.o flags=0")) TH_LOG("%s", out);
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "bpftool -j struct_ops dump name passthrough"));
	EXPECT_NE(NULL, strstr(out, "\"flags\":0")) TH_LOG("%s", out);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl unload passthrough"));

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load " BPF
				     "priority.bpf.o --set %s", bad[i][0]));
		EXPECT_NE(NULL, strstr(out, bad[i][1])) TH_LOG("%s: %s", bad[i][0], out);
		EXPECT_FALSE(policy_attached("priority"));
	}
	/* the form is checked before anything is opened: usage errors */
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "priority.bpf.o --set =1"));
	EXPECT_NE(NULL, strstr(out, "a knob is VAR=VALUE")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "priority.bpf.o --set share_pct=5 --set share_pct=6"));
	EXPECT_NE(NULL, strstr(out, "knob 'share_pct' is set twice")) TH_LOG("%s", out);
	EXPECT_FALSE(policy_attached("priority"));
}

/*
 * info, from the object alone and as nobody: each installed policy says
 * what it does (COLLAPSE_EXT_INFO), its hooks (orders marked 7.3's) and
 * its knobs with type, default, range and meaning; a file, a name, all
 * installed ones (the directory's count), JSON; nonsense is one line.
 */
TEST_F(ctl, info_from_the_object_alone)
{
	int installed;

	ASSERT_EQ(0, run_cmd(out, sizeof(out), "ls " BPF "*.bpf.o | wc -l"));
	installed = atoi(out);
	ASSERT_LT(10, installed);
	EXPECT_EQ(0, run_cmd_as(65534, out, sizeof(out), "collapsectl info elastic"));
	EXPECT_NE(NULL, strstr(out, "elastic (" BPF "elastic.bpf.o)\n"
			       "  eager while the cgroup has room")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "  hooks: pte_limits, batch_size, split_underused\n"));
	EXPECT_NE(NULL, strstr(out, "    room_mib=64  (u64, 0..18446744073709551615)\n"
			       "        MiB of room below the memory limits"));
	EXPECT_NE(NULL, strstr(out, "    max_zero=256  (u32, 0..4294967295)"));
	EXPECT_EQ(0, run_cmd_as(65534, out, sizeof(out), "collapsectl info "
				BPF "mthp_frugal.bpf.o frugal"));
	EXPECT_NE(NULL, strstr(out, "hooks: pte_limits, orders (7.3 only)")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "frugal (" BPF "frugal.bpf.o)"));
	/* every installed policy, each with its own description */
	EXPECT_EQ(0, run_cmd_as(65534, out, sizeof(out), "collapsectl info"));
	EXPECT_EQ(installed, count_matches(out, "\n  hooks: ")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "no description")) TH_LOG("%s", out);
	EXPECT_EQ(0, run_cmd_as(65534, out, sizeof(out), "collapsectl -j info pace"));
	EXPECT_NE(NULL, strstr(out, "\"hooks\":[{\"name\":\"pass_size\",\"only\":null}]"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "{\"name\":\"factor\",\"type\":\"u32\","
			       "\"default\":\"8\",\"range\":\"0..4294967295\","
			       "\"doc\":\"pass size in multiples"));
	emit_artifact("json", "info", out);
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl info nosuch"));
	EXPECT_NE(NULL, strstr(out, "nosuch: no such file, nor an installed policy"))
		TH_LOG("%s", out);
	EXPECT_EQ(1, count_lines(out)) TH_LOG("%s", out);
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl info /bin/busybox"));
	EXPECT_NE(NULL, strstr(out, "not a BPF object file"));
}

/*
 * load and swap take an installed policy by name, and load a unit or a
 * path relative to /sys/fs/cgroup for --cgroup, as apply does
 */
TEST_F(ctl, load_by_name_on_a_unit)
{
	uint64_t id;

	ASSERT_EQ(0, cg_create("ctl.slice", NULL));
	ASSERT_EQ(0, cg_memory_subtree("ctl.slice", true));
	ASSERT_EQ(0, cg_create("ctl.slice/ctl-web.slice", &id));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load frugal --cgroup "
			     "ctl-web.slice")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "attached 'frugal' to cgroup "
			       "/ctl.slice/ctl-web.slice (id ")) TH_LOG("%s", out);
	EXPECT_EQ(id, (uint64_t)policy_link_num("frugal", "cgroup_id"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl swap frugal eager --set "
			     "flags=0")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "for the policy in " BPF "eager.bpf.o")) TH_LOG("%s", out);
	EXPECT_EQ(1, policy_stat("frugal", "swaps"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl unload frugal"));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load nosuch"));
	EXPECT_NE(NULL, strstr(out, "nosuch: no such file, nor an installed policy"));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl load frugal --cgroup "
			     "ctl-nosuch.slice"));
	EXPECT_NE(NULL, strstr(out, "--cgroup ctl-nosuch.slice: cgroup "
			       "/sys/fs/cgroup/ctl.slice/ctl-nosuch.slice")) TH_LOG("%s", out);
	EXPECT_FALSE(policy_attached("frugal"));
	cg_remove("ctl.slice/ctl-web.slice");
	cg_remove("ctl.slice");
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
