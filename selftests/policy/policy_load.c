// SPDX-License-Identifier: GPL-2.0
/*
 * Load- and attach-time rejections: a program writing to ctx, a sleepable
 * program, unknown flags, an empty name, a failing init(), a caller
 * without CAP_SYS_ADMIN. Each is refused with a clear verifier message or
 * errno, and nothing stays attached.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "knobs.h"
#include "bad_ctx_write.skel.h"
#include "bad_sleepable.skel.h"
#include "bad_kfunc_tracing.skel.h"
#include "kselftest_harness.h"

static char libbpf_log[1 << 16];

static int capture(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	size_t len = strlen(libbpf_log);

	if (len < sizeof(libbpf_log) - 1)
		vsnprintf(libbpf_log + len, sizeof(libbpf_log) - len, fmt, ap);
	return 0;
}

/*
 * Open and load skeleton @skel_name, expect the load to fail and the
 * verifier log libbpf printed to contain @needle.
 */
#define EXPECT_LOAD_REJECTED(skel_name, needle)					\
	do {									\
		struct skel_name *skel;						\
										\
		libbpf_log[0] = 0;						\
		libbpf_set_print(capture);					\
		skel = skel_name##__open_and_load();				\
		libbpf_set_print(NULL);						\
		EXPECT_EQ(NULL, skel);						\
		EXPECT_NE(NULL, strstr(libbpf_log, needle))			\
			TH_LOG("verifier log: %.2000s", libbpf_log);		\
		skel_name##__destroy(skel);					\
	} while (0)

TEST(ctx_write_rejected_by_verifier)
{
	EXPECT_LOAD_REJECTED(bad_ctx_write,
			     "only struct collapse_ext_limits is writable");
}

TEST(kfuncs_only_for_collapse_ext_programs)
{
	/* the verifier's own words, not libbpf's mention of the kfunc */
	EXPECT_LOAD_REJECTED(bad_kfunc_tracing,
			     "calling kernel function collapse_ext_nr_node_ids is not allowed");
}

/* check_member() refuses a sleepable hook at load, by the member's name */
TEST(sleepable_refused)
{
	EXPECT_LOAD_REJECTED(bad_sleepable,
			     "attach to unsupported member pte_limits of struct collapse_ext_ops");
	EXPECT_FALSE(policy_attached("bad_sleepable"));
}

/* The struct_ops data reaches the kernel (init_member()) at attach. */
static int attach_errno(struct knobs *skel)
{
	struct bpf_link *link;

	if (knobs__load(skel))
		return errno;
	link = knobs_attach(skel);
	if (!link)
		return errno;
	bpf_link__destroy(link);
	return 0;
}

/* ops.flags: COLLAPSE_EXT_OPS_NO_YIELD (1) attaches, any other bit is EINVAL */
TEST(unknown_flags_einval)
{
	static const unsigned long long bad[] = { 2, 1ULL << 63, 3 };
	struct bpf_link *link;
	struct knobs *skel;

	for (int i = 0; i < 3; i++) {
		skel = knobs_open();
		ASSERT_NE(NULL, skel);
		ASSERT_EQ(0, ops_data_set_u64(skel->obj, skel->maps.knobs, "flags",
					      bad[i]));
		EXPECT_EQ(EINVAL, attach_errno(skel)) TH_LOG("flags %#llx", bad[i]);
		EXPECT_FALSE(policy_attached("knobs"));
		knobs__destroy(skel);
	}
	skel = knobs_open();
	ASSERT_NE(NULL, skel);
	ASSERT_EQ(0, ops_data_set_u64(skel->obj, skel->maps.knobs, "flags", 1));
	ASSERT_EQ(0, knobs__load(skel));
	link = knobs_attach(skel);
	EXPECT_NE(NULL, link);
	EXPECT_TRUE(policy_attached("knobs"));
	bpf_link__destroy(link);
	knobs__destroy(skel);
}

TEST(empty_name_einval)
{
	struct knobs *skel = knobs_open();

	ASSERT_NE(NULL, skel);
	ASSERT_EQ(0, ops_data_set_name(skel->obj, skel->maps.knobs, ""));
	EXPECT_EQ(EINVAL, attach_errno(skel));
	knobs__destroy(skel);
}

/* The name names a sysfs directory: only [A-Za-z0-9_.-], not . .. policies */
TEST(names_sysfs_cannot_hold_einval)
{
	static const char *const bad[] = {
		".", "..", "policies", "a/b", "../x", "a b", "caf\xc3\xa9", "x\n",
	};
	static const char *const good[] = { "a-b.c_9", "..a", "Policies" };
	char path[128];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct knobs *skel = knobs_open();

		ASSERT_NE(NULL, skel);
		ASSERT_EQ(0, ops_data_set_name(skel->obj, skel->maps.knobs, bad[i]));
		EXPECT_EQ(EINVAL, attach_errno(skel)) TH_LOG("name '%s'", bad[i]);
		knobs__destroy(skel);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct knobs *skel = knobs_load(good[i], 0);
		struct bpf_link *link;

		ASSERT_NE(NULL, skel);
		link = knobs_attach(skel);

		EXPECT_NE(NULL, link) TH_LOG("name '%s'", good[i]);
		snprintf(path, sizeof(path), CE_SYSFS "%s/stats/ranges_scanned", good[i]);
		EXPECT_EQ(0, access(path, R_OK)) TH_LOG("%s", path);
		bpf_link__destroy(link);
		knobs__destroy(skel);
	}
}

TEST(missing_cgroup_enoent)
{
	struct knobs *skel = knobs_load(NULL, 0x7fffffff0ULL);

	ASSERT_NE(NULL, skel);
	EXPECT_EQ(NULL, knobs_attach(skel));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_FALSE(policy_attached("knobs"));
	knobs__destroy(skel);
}

TEST(failing_init_refuses_attach)
{
	struct knobs *skel = knobs_load(NULL, 0);

	ASSERT_NE(NULL, skel);
	skel->bss->init_ret = -ENODEV;
	EXPECT_EQ(NULL, knobs_attach(skel));
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(1, skel->bss->nr_init);
	EXPECT_FALSE(policy_attached("knobs"));
	knobs__destroy(skel);
}

TEST(attach_needs_cap_sys_admin)
{
	struct knobs *skel = knobs_load(NULL, 0);
	int status;
	pid_t pid;

	ASSERT_NE(NULL, skel);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct bpf_link *link;

		if (set_caps((1ULL << CAP_BPF) | (1ULL << CAP_PERFMON)))
			_exit(100);
		link = knobs_attach(skel);
		_exit(link ? 0 : errno);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(EPERM, WEXITSTATUS(status));
	EXPECT_FALSE(policy_attached("knobs"));
	knobs__destroy(skel);
}

TEST(attach_detach_counters)
{
	struct knobs *skel = knobs_load(NULL, 0);
	struct bpf_link *link;

	ASSERT_NE(NULL, skel);
	link = knobs_attach(skel);
	ASSERT_NE(NULL, link);
	EXPECT_TRUE(policy_attached("knobs"));
	EXPECT_EQ(1, skel->bss->nr_init);
	EXPECT_EQ(0, policy_stat("knobs", "swaps"));
	bpf_link__destroy(link);
	EXPECT_FALSE(policy_attached("knobs"));
	EXPECT_EQ(EXIT_UNREG, skel->data->exit_reason);
	EXPECT_EQ(-1, policy_stat("knobs", "swaps"));
	knobs__destroy(skel);
}

TEST_HARNESS_MAIN
