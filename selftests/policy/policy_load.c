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
#include "bad_order_write.skel.h"
#include "no_link.skel.h"
#include "bad_sleepable.skel.h"
#include "bad_kfunc_tracing.skel.h"
#include "kselftest_harness.h"

/*
 * Every case loads policies, some a dozen: on the debug kernel (KASAN,
 * kmemleak) a load takes seconds, beyond the harness's 30 s a case.
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

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
			     "only the limits of struct collapse_ext_limits are writable");
}

/*
 * pte_limits' limits->order (7.3) is the question, not the answer. 6.12's
 * limits have no order: the write does not even relocate there.
 */
TEST(limits_order_read_only)
{
	if (kernel_has_hook("orders"))
		EXPECT_LOAD_REJECTED(bad_order_write,
				     "only the limits of struct collapse_ext_limits are writable");
	else
		EXPECT_LOAD_REJECTED(bad_order_write, "");
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

/*
 * A name is one word of the link's fdinfo and one path component (pins):
 * only [A-Za-z0-9_.-], not . or ..; "policies" is no longer reserved.
 */
TEST(names_outside_the_rule_einval)
{
	static const char *const bad[] = {
		".", "..", "a/b", "../x", "a b", "a\tb", "caf\xc3\xa9", "x\n",
	};
	static const char *const good[] = { "a-b.c_9", "..a", "policies" };
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
		EXPECT_EQ(0, policy_stat(good[i], "ranges_scanned")) TH_LOG("%s", good[i]);
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

/*
 * init()'s outcome, on each path it runs on: at attach and at a link
 * update. 0 lets the policy in; a negative errno refuses with it; any
 * other value (positive, or below -MAX_ERRNO) refuses with EINVAL. A
 * refused update leaves the attached policy as it was: same ops, no
 * swap counted, no exit() of either.
 */
TEST(init_outcomes_at_attach_and_update)
{
	static const struct {
		s32 ret;
		int err;
	} cases[] = {
		{ 0, 0 }, { 1, EINVAL }, { -ENODEV, ENODEV }, { -E2BIG, E2BIG },
		{ -5000, EINVAL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct knobs *skel = knobs_load("init_a", 0);
		struct knobs *base = knobs_load("init_u", 0);
		struct knobs *next = knobs_load("init_u", 0);
		struct bpf_link *link, *l;

		ASSERT_NE(NULL, skel);
		ASSERT_NE(NULL, base);
		ASSERT_NE(NULL, next);
		/* at attach */
		skel->bss->init_ret = cases[i].ret;
		link = knobs_attach(skel);
		if (cases[i].err) {
			EXPECT_EQ(NULL, link) TH_LOG("init %d", cases[i].ret);
			EXPECT_EQ(cases[i].err, errno) TH_LOG("init %d", cases[i].ret);
		} else {
			EXPECT_NE(NULL, link);
		}
		EXPECT_EQ(!cases[i].err, policy_attached("init_a"));
		EXPECT_EQ(1, skel->bss->nr_init);
		EXPECT_EQ(-1, skel->data->exit_reason);
		bpf_link__destroy(link);
		/* at a link update */
		l = knobs_attach(base);
		ASSERT_NE(NULL, l);
		next->bss->init_ret = cases[i].ret;
		EXPECT_EQ(-cases[i].err, bpf_link__update_map(l, next->maps.knobs))
			TH_LOG("init %d", cases[i].ret);
		EXPECT_EQ(1, next->bss->nr_init);
		EXPECT_EQ(!cases[i].err, policy_stat("init_u", "swaps"));
		EXPECT_EQ(cases[i].err ? -1 : EXIT_SWAPPED, base->data->exit_reason);
		EXPECT_EQ(-1, next->data->exit_reason);
		bpf_link__destroy(l);
		knobs__destroy(skel);
		knobs__destroy(base);
		knobs__destroy(next);
	}
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

/* A policy registered without a link is refused: nobody could read it */
TEST(without_a_link_eopnotsupp)
{
	struct no_link *skel = no_link__open_and_load();
	struct bpf_link *link;

	ASSERT_NE(NULL, skel);
	link = bpf_map__attach_struct_ops(skel->maps.no_link);
	EXPECT_EQ(NULL, link);
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_FALSE(policy_attached("no_link"));
	bpf_link__destroy(link);
	no_link__destroy(skel);
}

/*
 * The counters are lines of the link's own fdinfo, after its link_type,
 * link_id, map_id and cgroup_id, while it is attached: a link that is
 * detached (BPF_LINK_DETACH, its fd still open) shows none. A root link
 * made without a cgroup (bpf_map__attach_struct_ops()) has no cgroup_id.
 */
TEST(counters_in_the_link_fdinfo)
{
	struct knobs *skel = knobs_load(NULL, 0);
	char path[64], text[8192];
	struct bpf_link *link;
	size_t n;
	FILE *f;

	ASSERT_NE(NULL, skel);
	link = knobs_attach(skel);
	ASSERT_NE(NULL, link);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", bpf_link__fd(link));
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = 0;
	fclose(f);
	TH_LOG("%.300s", text);
	EXPECT_NE(NULL, strstr(text, "link_type:\tstruct_ops\n"));
	EXPECT_NE(NULL, strstr(text, "\npolicy:\tknobs\nattach_time_ns:\t"));
	EXPECT_NE(NULL, strstr(text, "\nranges_scanned:\t0\nvetoes:\t0\n"));
	EXPECT_NE(NULL, strstr(text, "\nfailed_other:\t0\n"));
	/* one line per counter: nothing counted twice, no file-per-counter */
	EXPECT_EQ(NULL, strstr(strstr(text, "vetoes:") + 1, "\nvetoes:"));
	EXPECT_EQ(0, bpf_link__detach(link));
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = 0;
	fclose(f);
	EXPECT_EQ(NULL, strstr(text, "policy:")) TH_LOG("%s", text);
	EXPECT_EQ(NULL, strstr(text, "ranges_scanned:"));
	EXPECT_FALSE(policy_attached("knobs"));
	bpf_link__destroy(link);
	knobs__destroy(skel);
}

TEST_HARNESS_MAIN
