// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl list/stats output for machines: JSON, OpenMetrics, the
 * node_exporter textfile, and --watch following policies. Each output is
 * checked here for its values and printed as an artifact that the host
 * parses after the run with real parsers (selftests/vm/check-artifacts:
 * Python's json and prometheus_client's two text parsers).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "run_cmd.h"
#include "kselftest_harness.h"

/* Loads and watches take seconds on the debug kernel: past 30 s a case */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#define BPF		"/usr/share/collapse_ext/bpf/"
/* A cgroup name a label or a JSON string must escape (\x01: JSON only). */
#define ODD_CG		"ce_m\"q\\x\x01"
#define TEXTDIR		"/tmp/ce_textfile"

static char out[1 << 16];

static int sparse_collapse(void *arg)
{
	return collapse_sparse_region(1);
}

FIXTURE(metrics)
{
	int unused;
};

FIXTURE_SETUP(metrics)
{
	unload_pinned_policies();
	write_str("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	ASSERT_EQ(0, cg_create("ce_m1", NULL));
	ASSERT_EQ(0, cg_create(ODD_CG, NULL));
}

FIXTURE_TEARDOWN(metrics)
{
	unload_pinned_policies();
	cg_remove("ce_m1");
	cg_remove(ODD_CG);
}

/* Two policies with counters that are not all 0. */
static void load_two(struct __test_metadata *_metadata)
{
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "passthrough.bpf.o --name pass_m --cgroup "
			     "/sys/fs/cgroup/ce_m1")) TH_LOG("%s", out);
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "frugal.bpf.o --name frugal_m --cgroup '/sys/fs/cgroup/"
			     ODD_CG "'")) TH_LOG("%s", out);
	ASSERT_EQ(0, run_in_cgroup("ce_m1", sparse_collapse, NULL));
	ASSERT_EQ(EBUSY, run_in_cgroup(ODD_CG, sparse_collapse, NULL));
}

/* "collapse_ext_NAME_total{policy=...} VALUE" of @text, or -1. */
static long sample(const char *text, const char *family, const char *labels)
{
	char pat[256];
	const char *p;

	snprintf(pat, sizeof(pat), "collapse_ext_%s_total{%s} ", family, labels);
	p = strstr(text, pat);
	return p ? atol(p + strlen(pat)) : -1;
}

TEST_F(metrics, openmetrics_textfile_json)
{
	const char *pass = "policy=\"pass_m\",cgroup=\"/ce_m1\"";
	const char *odd = "policy=\"frugal_m\",cgroup=\"/ce_m\\\"q\\\\x\x01\"";
	char failed[160];
	long v;

	load_two(_metadata);
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl stats --openmetrics"));
	v = sample(out, "collapse_succeeded", pass);
	EXPECT_EQ(policy_stat("pass_m", "collapse_succeeded"), v) TH_LOG("%s", out);
	EXPECT_LT(0, v);
	EXPECT_EQ(0, sample(out, "collapse_succeeded", odd)) TH_LOG("%s", out);
	snprintf(failed, sizeof(failed), "%s,reason=\"none_limit\"", odd);
	EXPECT_EQ(1, sample(out, "failed", failed)) TH_LOG("%s", out);
	/* a reason that never happened is a series at 0, not a missing one */
	snprintf(failed, sizeof(failed), "%s,reason=\"alloc\"", pass);
	EXPECT_EQ(0, sample(out, "failed", failed)) TH_LOG("%s", out);
	/* calls_<hook> is one family with a hook label */
	EXPECT_NE(NULL, strstr(out, "# TYPE collapse_ext_hook_calls counter\n"));
	snprintf(failed, sizeof(failed), "%s,hook=\"pte_limits\"", pass);
	EXPECT_EQ(policy_stat("pass_m", "calls_pte_limits"), sample(out, "hook_calls", failed))
		TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "collapse_ext_calls_pte_limits"));
	EXPECT_NE(NULL, strstr(out, "collapse_ext_policy_info{policy=\"pass_m\",cgroup=\"/ce_m1\","
			       "cgroup_id=\""));
	EXPECT_NE(NULL, strstr(out, "# UNIT collapse_ext_memory_anon_bytes bytes\n"));
	EXPECT_NE(NULL, strstr(out, "collapse_ext_memory_anon_thp_bytes{"));
	EXPECT_EQ(0, strcmp(out + strlen(out) - 6, "# EOF\n"));
	emit_artifact("openmetrics", "two_policies", out);

	/* The textfile: the 0.0.4 format, replaced whole, nothing left over. */
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "rm -rf " TEXTDIR " && mkdir "
			     TEXTDIR " && collapsectl stats --textfile " TEXTDIR
			     " && cat " TEXTDIR "/collapse_ext.prom"));
	EXPECT_NE(NULL, strstr(out, "# TYPE collapse_ext_collapse_succeeded_total counter\n"));
	EXPECT_EQ(policy_stat("pass_m", "collapse_succeeded"),
		  sample(out, "collapse_succeeded", pass));
	EXPECT_EQ(NULL, strstr(out, "# EOF"));
	emit_artifact("prometheus", "two_policies", out);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "ls -A " TEXTDIR));
	EXPECT_STREQ("collapse_ext.prom\n", out);

	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl stats --json"));
	EXPECT_NE(NULL, strstr(out, "\"cgroup\":\"/ce_m\\\"q\\\\x\\u0001\"")) TH_LOG("%s", out);
	emit_artifact("json", "stats", out);
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl list --json"));
	EXPECT_NE(NULL, strstr(out, "\"name\":\"frugal_m\"")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\"pinned\":true"));
	emit_artifact("json", "list", out);
	/* --watch --json: one array per line, the later ones with rates */
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "timeout -s INT 2 collapsectl "
			     "stats --json --watch 0.5; true"));
	EXPECT_LE(2, count_lines(out)) TH_LOG("%s", out);
	emit_artifact("json", "stats_watch", strchr(out, '\n') + 1);

	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl stats --json --openmetrics"));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl stats --textfile /nonexistent"));
	EXPECT_NE(NULL, strstr(out, "not a directory"));
}

/*
 * The metric names are collapsectl's fixed list, not whatever the kernel
 * shows: every counter of the kernel's (the lines of the link's fdinfo, as
 * stats prints them) is exported, by a family of its own or as the label
 * of hook_calls, collapsed or failed.
 */
TEST_F(metrics, every_kernel_counter_exported)
{
	static char table[1 << 14];
	char key[64], pat[256], *line;
	int n = 0;

	load_two(_metadata);
	ASSERT_EQ(0, run_cmd(table, sizeof(table), "collapsectl stats pass_m"));
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl stats --openmetrics"));
	for (line = strtok(table, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long long v;
		const char *fam = NULL, *label = NULL;

		if (sscanf(line, " %63s %llu", key, &v) != 2)
			continue;
		n++;
		if (!strncmp(key, "calls_", 6))
			fam = "hook_calls", label = key + 6;
		else if (!strncmp(key, "collapsed_", 10))
			fam = "collapsed", label = key + 10;
		else if (!strncmp(key, "failed_", 7))
			fam = "failed", label = key + 7;
		if (fam)
			snprintf(pat, sizeof(pat), "collapse_ext_%s_total{policy=\"pass_m\""
				 ",cgroup=\"/ce_m1\",%s=\"%s\"} %llu\n", fam,
				 !strcmp(fam, "hook_calls") ? "hook" :
				 !strcmp(fam, "failed") ? "reason" : "size", label, v);
		else
			snprintf(pat, sizeof(pat), "collapse_ext_%s_total{policy=\"pass_m\""
				 ",cgroup=\"/ce_m1\"} %llu\n", key, v);
		EXPECT_NE(NULL, strstr(out, pat)) TH_LOG("%s is not exported", key);
	}
	EXPECT_LT(30, n);
}

/* Nothing attached: still valid documents (an empty array, no samples). */
TEST_F(metrics, nothing_attached)
{
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl stats --openmetrics"));
	EXPECT_EQ(NULL, strstr(out, "{policy="));
	emit_artifact("openmetrics", "empty", out);
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl stats --json"));
	EXPECT_STREQ("[]\n", out);
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl list --json"));
	EXPECT_STREQ("[]\n", out);
}

/*
 * node_exporter may read the textfile at any moment: a reader racing
 * --watch rewriting it every 50 ms always sees a whole file.
 */
TEST_F(metrics, textfile_is_replaced_atomically)
{
	int i, torn = 0, reads = 0;

	load_two(_metadata);
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "rm -rf " TEXTDIR " && mkdir " TEXTDIR
			     " && (collapsectl stats --textfile " TEXTDIR
			     " --watch 0.05 >/dev/null 2>&1 & echo $! > /tmp/ce_tf.pid)"
			     " && while [ ! -e " TEXTDIR "/collapse_ext.prom ]; do "
			     "sleep 0.1; done"));
	for (i = 0; i < 300; i++) {
		FILE *f = fopen(TEXTDIR "/collapse_ext.prom", "r");
		size_t n;

		if (!f)
			continue;
		n = fread(out, 1, sizeof(out) - 1, f);
		fclose(f);
		out[n] = 0;
		reads++;
		/* the last family of a whole file has both policies */
		if (!strstr(out, "collapse_ext_memory_anon_thp_bytes{policy=\"frugal_m\"") ||
		    out[n - 1] != '\n')
			torn++;
		usleep(1000);
	}
	run_cmd(out, sizeof(out), "kill $(cat /tmp/ce_tf.pid)");
	EXPECT_LT(250, reads);
	EXPECT_EQ(0, torn);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "sleep 0.2; ls -A " TEXTDIR));
	EXPECT_STREQ("collapse_ext.prom\n", out);
}

/* The largest "N/s" rate in @text, or -1 when there is none. */
static double max_rate(const char *text)
{
	const char *p = text;
	double max = -1, r;

	while ((p = strstr(p, "/s\n"))) {
		const char *q = p;

		while (q > text && q[-1] != ' ')
			q--;
		r = strtod(q, NULL);
		if (r > max || r < 0)
			max = r < 0 ? 1e300 : r;
		p += 3;
	}
	return max;
}

static int load_w(void)
{
	char o[4096];

	return run_cmd(o, sizeof(o), "collapsectl load " BPF "passthrough.bpf.o "
		       "--name w --cgroup /sys/fs/cgroup/ce_m1");
}

/*
 * --watch follows policies as they come and go; a policy attached again
 * under the same name within one interval starts from 0, and its rates do
 * not wrap around (three times: the reload must fall inside an interval).
 */
TEST_F(metrics, watch_follows_policies)
{
	int i;

	ASSERT_EQ(0, run_cmd(out, sizeof(out), "(collapsectl stats --watch 1 "
			     "> /tmp/ce_watch.txt 2>&1 & echo $! > /tmp/ce_w.pid) "
			     "&& sleep 1.5"));
	ASSERT_EQ(0, load_w());
	usleep(1500000);		/* seen with its counters at 0 */
	ASSERT_EQ(0, run_in_cgroup("ce_m1", sparse_collapse, NULL));
	ASSERT_EQ(0, run_in_cgroup("ce_m1", sparse_collapse, NULL));
	usleep(1500000);
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl unload w"));
	usleep(1500000);
	ASSERT_EQ(0, load_w());
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, run_in_cgroup("ce_m1", sparse_collapse, NULL));
		usleep(1200000);
		ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl unload w"));
		ASSERT_EQ(0, load_w());
	}
	usleep(1200000);
	run_cmd(out, sizeof(out), "kill $(cat /tmp/ce_w.pid); sleep 0.2; "
		"cat /tmp/ce_watch.txt");
	EXPECT_NE(NULL, strstr(out, "no collapse_ext policy attached")) TH_LOG("%s", out);
	/* attached 5 times: each seen as new, whether or not the watch saw
	 * it gone in between */
	EXPECT_EQ(5, count_matches(out, "w: (attached)")) TH_LOG("%s", out);
	EXPECT_LE(1, count_matches(out, "w: (detached)"));
	/* a handful of collapses a second: no rate beyond that */
	EXPECT_LT(0, max_rate(out));
	EXPECT_GT(1e6, max_rate(out)) TH_LOG("%s", out);
}

TEST_HARNESS_MAIN
