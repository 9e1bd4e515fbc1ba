// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl ab --reps: the statistics (loader/ab_stats.c, linked in)
 * against values computed independently, and the command on two policies
 * that differ, on the same policy twice, on a failing workload, on bad
 * --reps values and on Ctrl-C.
 *
 * The workload is this program: `collapsectl_ab workload [NR [HOLD_MS]]`
 * faults in NR huge pages' worth of small pages (page 7 of every second
 * 2 MiB range left out: a none pte there), MADV_COLLAPSEs them, prints
 * METRIC lines (with the number of ab's policies attached: 1, its own) and
 * holds the memory HOLD_MS before it exits.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ab_stats.h"
#include "collapse_test.h"
#include "policy_test.h"
#include "run_cmd.h"
#include "kselftest_harness.h"

#define BPF		"/usr/share/collapse_ext/bpf/"
#define SELF		"/selftests/bin/collapsectl_ab"

static char out[1 << 16];

/* ---- the statistics ------------------------------------------------------- */

/* |got - want| within @rel of |want| */
static bool near(double want, double got, double rel)
{
	double d = got > want ? got - want : want - got;

	return d <= rel * (want < 0 ? -want : want);
}

#define EXPECT_NEAR(want, got, rel)						\
	EXPECT_TRUE(near((want), (got), (rel)))					\
		TH_LOG("%s: want %.12g, got %.12g", #got, (double)(want),	\
		       (double)(got))

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/*
 * t(0.975, df) from mpmath (the regularized incomplete beta function
 * inverted numerically), not from ab_stats.c's table; the integer ones are
 * also the textbook values (12.706, 4.303, 2.571, 2.228, 2.042, 1.984).
 */
TEST(t_quantiles)
{
	static const struct { double df, t, rel; } want[] = {
		{ 1, 12.7062047362, 1e-9 },
		{ 2, 4.30265272975, 1e-9 },
		{ 5, 2.57058183564, 1e-9 },
		{ 10, 2.22813885199, 1e-9 },
		{ 30, 2.04227245630, 1e-9 },
		{ 100, 1.98397151852, 1e-9 },
		/* between the table's points: the interpolation */
		{ 1.1, 10.2768012863, 2e-3 },
		{ 2.24, 3.88971858726, 1e-4 },
		{ 3.7, 2.86752070719, 1e-4 },
		{ 7.3, 2.34506673655, 1e-5 },
		{ 45.5, 2.01349268293, 1e-6 },
		{ 250, 1.96949839342, 1e-6 },
		{ 1e6, 1.95996635681, 1e-6 },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		EXPECT_NEAR(want[i].t, ab_t975(want[i].df), want[i].rel);
	}
	EXPECT_TRUE(ab_t975(0.5) != ab_t975(0.5));	/* NaN */
	EXPECT_NEAR(1.4142135623730951, ab_sqrt(2), 1e-15);
	EXPECT_NEAR(1e-5, ab_sqrt(1e-10), 1e-15);
	EXPECT_EQ(0, ab_sqrt(0));
}

/*
 * Two small samples; every expected number from Python's statistics
 * module (mean, median, variance) and mpmath's t quantile at the Welch-
 * Satterthwaite df:
 *   A = 10.1 12.3 11.0 13.2 10.8, B = 14.0 15.2 13.1 16.4
 *   df 6.06004604738, t 2.44104673656, B - A 3.195 [0.97508976502,
 *   5.41491023498], in % of A's mean 27.8310104530 [8.49381328416,
 *   47.1682076218]
 *   C = 2.31 2.12 2.45, D = 2.20 2.52 2.28: df 3.99988171323,
 *   +1.74418604651% [-14.6732267116%, +18.1615988046%]
 */
static const double A[] = { 10.1, 12.3, 11.0, 13.2, 10.8 };
static const double B[] = { 14.0, 15.2, 13.1, 16.4 };
static const double C[] = { 2.31, 2.12, 2.45 };
static const double D[] = { 2.20, 2.52, 2.28 };

TEST(describe_and_welch)
{
	struct ab_sample a, b, c, d;
	struct ab_cmp w;

	ab_describe(A, 5, &a);
	ab_describe(B, 4, &b);
	EXPECT_EQ(5, a.n);
	EXPECT_NEAR(11.48, a.mean, 1e-12);
	EXPECT_NEAR(11.0, a.median, 1e-12);		/* odd n */
	EXPECT_NEAR(1.557, a.var, 1e-12);
	EXPECT_NEAR(14.6, b.median, 1e-12);		/* even n */
	EXPECT_NEAR(2.0625, b.var, 1e-12);
	ab_compare(&a, &b, &w);
	EXPECT_EQ(AB_B_HIGHER, w.outcome);
	EXPECT_FALSE(w.constant);
	EXPECT_NEAR(6.06004604738, w.df, 1e-9);
	EXPECT_NEAR(2.44104673656, w.t, 1e-4);
	EXPECT_NEAR(3.195, w.diff, 1e-12);
	EXPECT_NEAR(0.97508976502, w.lo, 1e-4);
	EXPECT_NEAR(5.41491023498, w.hi, 1e-4);
	EXPECT_TRUE(w.rel);
	EXPECT_NEAR(27.8310104530, w.pct, 1e-9);
	EXPECT_NEAR(8.49381328416, w.pct_lo, 1e-4);
	EXPECT_NEAR(47.1682076218, w.pct_hi, 1e-4);
	/* B against A is A against B mirrored, in % of the other mean */
	ab_compare(&b, &a, &w);
	EXPECT_EQ(AB_B_LOWER, w.outcome);
	EXPECT_NEAR(-3.195, w.diff, 1e-12);
	EXPECT_NEAR(-5.41491023498, w.lo, 1e-4);

	ab_describe(C, 3, &c);
	ab_describe(D, 3, &d);
	ab_compare(&c, &d, &w);
	EXPECT_EQ(AB_SAME, w.outcome);
	EXPECT_NEAR(3.99988171323, w.df, 1e-9);
	EXPECT_NEAR(1.74418604651, w.pct, 1e-9);
	EXPECT_NEAR(-14.6732267116, w.pct_lo, 1e-4);
	EXPECT_NEAR(18.1615988046, w.pct_hi, 1e-4);
	/* two values a side: no interval, the difference still */
	ab_describe(C, 2, &c);
	ab_compare(&c, &d, &w);
	EXPECT_EQ(AB_TOO_FEW, w.outcome);
	ab_describe(NULL, 0, &c);
	EXPECT_EQ(0, c.n);
}

static enum ab_verdict verdict(char *buf, const char *name, enum ab_dir dir,
			       const double *a, int na, const double *b, int nb)
{
	struct ab_sample sa, sb;
	struct ab_cmp c;

	ab_describe(a, na, &sa);
	ab_describe(b, nb, &sb);
	ab_compare(&sa, &sb, &c);
	return ab_verdict(buf, 256, name, dir, &sa, &sb, &c);
}

/*
 * Pairs (runs back to back), every expected number from Python's math and
 * statistics modules, and the t quantile of mpmath above (df 6: 2.44691185114497;
 * df 5: 2.57058183563632):
 *   P = 10.1 12.3 11.0 13.2 10.8 11.5 12.0, Q = 14.0 15.2 13.1 16.4 12.9 14.8 15.5:
 *   the mean of ln(Q/P) as a ratio, +25.9660238922% [+19.9540227576%,
 *   +32.2793417882%]; the median ratio +24.2424242424% [+19.0909090909%,
 *   +38.6138613861%] (the extremes: coverage 1 - 2/128 = 0.984375)
 *   E = 0 1 0 2 1 0, F = 3 4 2 6 2 3 (a 0: differences): +2.6666666667
 *   [1.5828141983, 3.7505191350], median 3 [1, 4] (coverage 0.96875)
 */
static const double P[] = { 10.1, 12.3, 11.0, 13.2, 10.8, 11.5, 12.0 };
static const double Q[] = { 14.0, 15.2, 13.1, 16.4, 12.9, 14.8, 15.5 };
static const double E[] = { 0, 1, 0, 2, 1, 0 };
static const double F[] = { 3, 4, 2, 6, 2, 3 };

TEST(paired_log_ratio)
{
	static const double four[] = { 4, 4, 4 }, zero[] = { 0, 0, 0 };
	struct ab_paired p;
	struct ab_cmp c;

	EXPECT_NEAR(0.0, ab_log(1), 1e-16);
	EXPECT_NEAR(-690.77552789821368, ab_log(1e-300), 1e-12);
	EXPECT_NEAR(4.815884817283264, ab_log(123.456), 1e-14);
	EXPECT_NEAR(1.0, ab_exp(0), 1e-16);
	EXPECT_NEAR(2.718281828459045, ab_exp(1), 1e-15);
	EXPECT_NEAR(1.0142320547350045e304, ab_exp(700), 1e289);
	EXPECT_NEAR(2.0, ab_exp(ab_log(2)), 1e-15);

	ab_compare_paired(P, Q, 7, &p, &c);
	EXPECT_EQ(7, p.n);
	EXPECT_TRUE(p.log_scale);
	EXPECT_TRUE(c.paired && c.rel);
	EXPECT_EQ(AB_B_HIGHER, c.outcome);
	EXPECT_EQ(6, c.df);
	EXPECT_NEAR(25.9660238922, c.pct, 1e-9);
	EXPECT_NEAR(19.9540227576, c.pct_lo, 1e-6);
	EXPECT_NEAR(32.2793417882, c.pct_hi, 1e-6);
	EXPECT_NEAR(24.2424242424, p.med, 1e-9);
	EXPECT_NEAR(19.0909090909, p.med_lo, 1e-9);
	EXPECT_NEAR(38.6138613861, p.med_hi, 1e-9);
	EXPECT_NEAR(0.984375, p.med_cov, 1e-12);
	/* on the log scale an interval cannot reach -100%, whatever A does */
	ab_compare_paired(Q, P, 7, &p, &c);
	EXPECT_EQ(AB_B_LOWER, c.outcome);
	EXPECT_LT(-100, c.pct_lo);
	EXPECT_NEAR(100 / 1.259660238922 - 100, c.pct, 1e-7);

	ab_compare_paired(E, F, 6, &p, &c);
	EXPECT_FALSE(p.log_scale);
	EXPECT_FALSE(c.rel);
	EXPECT_EQ(AB_B_HIGHER, c.outcome);
	EXPECT_NEAR(2.6666666667, c.diff, 1e-9);
	EXPECT_NEAR(1.5828141983, c.lo, 1e-6);
	EXPECT_NEAR(3.7505191350, c.hi, 1e-6);
	EXPECT_EQ(3, p.med);
	EXPECT_EQ(1, p.med_lo);
	EXPECT_EQ(4, p.med_hi);
	EXPECT_NEAR(0.96875, p.med_cov, 1e-12);

	/* the same A and B in every pair: exact, -100% when B is 0 */
	ab_compare_paired(four, zero, 3, &p, &c);
	EXPECT_TRUE(c.constant && c.rel);
	EXPECT_EQ(AB_B_LOWER, c.outcome);
	EXPECT_EQ(-100, c.pct);
	/* 5 pairs: no interval for the median (needs 6) */
	ab_compare_paired(P, Q, 5, &p, &c);
	EXPECT_EQ(0, p.med_cov);
	/* 2 pairs: too few */
	ab_compare_paired(P, Q, 2, &p, &c);
	EXPECT_EQ(AB_TOO_FEW, c.outcome);
}

TEST(verdict_lines)
{
	static const double four[] = { 4, 4, 4 }, eight[] = { 8, 8, 8 };
	static const double zero[] = { 0, 0, 0 }, ten[] = { 10, 11, 12 };
	char v[256];

	EXPECT_EQ(AB_V_BETTER, verdict(v, "set_rps", AB_DIR_HIGHER, A, 5, B, 4));
	EXPECT_STREQ("B better on set_rps: +27.8% [+8.5%, +47.2%]", v);
	EXPECT_EQ(AB_V_WORSE, verdict(v, "peak_bytes", AB_DIR_LOWER, A, 5, B, 4));
	EXPECT_STREQ("B worse on peak_bytes: +27.8% [+8.5%, +47.2%]", v);
	EXPECT_EQ(AB_V_HIGHER, verdict(v, "x", AB_DIR_NONE, A, 5, B, 4));
	EXPECT_STREQ("B higher on x: +27.8% [+8.5%, +47.2%]", v);
	/* mirrored: -3.195 / 14.675 = -21.77%, [-36.90%, -6.64%] */
	EXPECT_EQ(AB_V_BETTER, verdict(v, "time_to_90pct_s", AB_DIR_LOWER, B, 4, A, 5));
	EXPECT_STREQ("B better on time_to_90pct_s: -21.8% [-36.9%, -6.6%]", v);
	EXPECT_EQ(AB_V_LOWER, verdict(v, "x", AB_DIR_NONE, B, 4, A, 5));
	EXPECT_STREQ("B lower on x: -21.8% [-36.9%, -6.6%]", v);
	EXPECT_EQ(AB_V_SAME, verdict(v, "final_coverage", AB_DIR_HIGHER, C, 3, D, 3));
	EXPECT_STREQ("final_coverage: no difference (+1.7% [-14.7%, +18.2%])", v);
	/* no variance: equal is no difference, different is one */
	EXPECT_EQ(AB_V_SAME, verdict(v, "pages", AB_DIR_NONE, four, 3, four, 3));
	EXPECT_STREQ("pages: no difference (the same value, 4, in every run)", v);
	EXPECT_EQ(AB_V_HIGHER, verdict(v, "collapse_succeeded", AB_DIR_NONE,
				       four, 3, eight, 3));
	EXPECT_STREQ("B higher on collapse_succeeded: +100.0% (every run gave the "
		     "same value on each side, A 4 and B 8: a difference)", v);
	EXPECT_EQ(AB_V_WORSE, verdict(v, "wall_s", AB_DIR_LOWER, four, 3, eight, 3));
	/* A's mean 0: the difference is absolute */
	/* 11 +- t(2) sqrt(1 / 3) = 11 +- 4.30265 * 0.57735 */
	EXPECT_EQ(AB_V_HIGHER, verdict(v, "failed_x", AB_DIR_NONE, zero, 3, ten, 3));
	EXPECT_STREQ("B higher on failed_x: +11 [+8.516, +13.48], absolute: A's mean is 0", v);
	EXPECT_STREQ("+339968", ab_fmt_signed(v, sizeof(v), 339968));
	EXPECT_STREQ("-12.5", ab_fmt_signed(v, sizeof(v), -12.5));
	/* too few values: (14.675 - 11.2) / 11.2 */
	EXPECT_EQ(AB_V_NONE, verdict(v, "x", AB_DIR_NONE, A, 2, B, 4));
	EXPECT_STREQ("x: no interval (n = 2 and 4, 3 a side needed): B - A +31.0%", v);
	EXPECT_EQ(AB_V_NONE, verdict(v, "t", AB_DIR_LOWER, A, 0, B, 4));
	EXPECT_STREQ("t: no interval: no value from A", v);
}

TEST(metric_lines)
{
	static const char *const bad[] = {
		"METRIC", "METRIC x", "METRIC x y", "METRIC x 1 faster",
		"METRIC x 1 higher extra", "METRICx 1", "metric x 1", "METRIC x/y 1",
		"METRIC x nan", "METRIC x 1e999", "METRIC x 1.5.2", "METRIC  1",
		"METRIC aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1",
		"[A1] METRIC x 1", "",
	};
	char name[AB_NAME_MAX];
	enum ab_dir dir;
	double v;

	ASSERT_TRUE(ab_parse_metric("METRIC set_rps 39370.08 higher", name, &v, &dir));
	EXPECT_STREQ("set_rps", name);
	EXPECT_EQ(39370.08, v);
	EXPECT_EQ(AB_DIR_HIGHER, dir);
	ASSERT_TRUE(ab_parse_metric("  METRIC\ta.b-C_9 -3e2 lower \r", name, &v, &dir));
	EXPECT_STREQ("a.b-C_9", name);
	EXPECT_EQ(-300, v);
	EXPECT_EQ(AB_DIR_LOWER, dir);
	ASSERT_TRUE(ab_parse_metric("METRIC rss_kb 1024", name, &v, &dir));
	EXPECT_EQ(AB_DIR_NONE, dir);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_FALSE(ab_parse_metric(bad[i], name, &v, &dir)) TH_LOG("'%s'", bad[i]);
	}
}

/* ---- the command ---------------------------------------------------------- */

/* Copy the line of @text starting with @prefix into @line; false if none. */
static bool line_starting(const char *text, const char *prefix, char *line,
			  size_t len)
{
	size_t n = strlen(prefix);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (!strncmp(p, prefix, n)) {
			snprintf(line, len, "%.*s", (int)strcspn(p, "\n"), p);
			return true;
		}
	return false;
}

/* n A and n B of @metric's row in the results table. */
static bool table_n(const char *text, const char *metric, int *na, int *nb)
{
	char prefix[64], line[256];

	snprintf(prefix, sizeof(prefix), "%s ", metric);
	return line_starting(text, prefix, line, sizeof(line)) &&
	       sscanf(line, "%*s %d %*s %*s %d", na, nb) == 2;
}

/* The verdict on @metric ("B better on NAME: ..." or "NAME: ..."). */
static const char *verdict_on(const char *text, const char *metric)
{
	static char line[512];
	const char *sec = strstr(text, "\nverdicts:\n"), *p;
	char key[80], key2[80];

	if (!sec)
		return "";
	snprintf(key, sizeof(key), " on %s: ", metric);
	snprintf(key2, sizeof(key2), "  %s: ", metric);
	for (p = sec + 11; !strncmp(p, "  ", 2); p += strcspn(p, "\n") + 1) {
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(p, "\n"), p);
		if (strstr(line, key) || !strncmp(line, key2, strlen(key2)))
			return line + 2;
	}
	return "";
}

/* Lines of the verdicts section; rows of the results table. */
static int count_verdicts(const char *text)
{
	const char *sec = strstr(text, "\nverdicts:\n"), *p;
	int n = 0;

	for (p = sec ? sec + 11 : ""; !strncmp(p, "  ", 2); p += strcspn(p, "\n") + 1)
		n++;
	return n;
}

static int count_table_rows(const char *text)
{
	const char *p = strstr(text, "\nmetric ");
	int n = 0;

	/* the rows after the header, up to an empty line; notes end "(left out)" */
	for (p = p ? strchr(p + 1, '\n') : NULL; p && p[1] && p[1] != '\n';
	     p = strchr(p + 1, '\n'))
		n += !memmem(p + 1, strcspn(p + 1, "\n"), "(left out)", 10);
	return n;
}

/* Nothing of an ab --reps run is left: cgroups and policies. */
static void expect_cleaned_up(struct __test_metadata *_metadata)
{
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "ls -d /sys/fs/cgroup/collapsectl-ab.* "
			     "2>/dev/null | wc -l"));
	EXPECT_STREQ("0\n", out);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl list | grep -cE '^[AB][0-9]+_'; true"));
	EXPECT_STREQ("0\n", out);
}

FIXTURE(ab)
{
	int unused;
};

FIXTURE_SETUP(ab)
{
	unlink("/tmp/ab_fail");
}

FIXTURE_TEARDOWN(ab)
{
	unlink("/tmp/ab.csv");
	unlink("/tmp/ab_fail");
}

/*
 * frugal (no none pte in a range) against eager (511): the workload's
 * sparse ranges stay small under frugal and are collapsed under eager.
 */
TEST_F_TIMEOUT(ab, reps_frugal_vs_eager, 600)
{
	static const char *const metrics[] = {
		"wall_s", "final_coverage", "peak_bytes", "collapse_succeeded",
		"collapse_failed", "pages_collapsed", "failed_none_limit",
		"huge_kb", "pages_touched", "policies_attached",
	};
	static const char *const order[] = {
		"run 1/6: A1 (frugal)", "run 2/6: B1 (eager)", "run 3/6: B2 (eager)",
		"run 4/6: A2 (frugal)", "run 5/6: A3 (frugal)", "run 6/6: B3 (eager)",
	};
	const char *prev = out;
	char line[1024], *p;
	int na, nb;

	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl ab " BPF "frugal.bpf.o "
			     BPF "eager.bpf.o --reps 3 --duration 60 --csv /tmp/ab.csv -- "
			     SELF " workload 8 1000")) TH_LOG("%s", out);
	TH_LOG("%s", strstr(out, "\nresults:") ?: out);
	/* one at a time, alternating, the workload's lines passed through */
	for (int i = 0; i < 6; i++) {
		const char *q = strstr(out, order[i]);

		EXPECT_TRUE(q && q >= prev) TH_LOG("'%s' missing or out of order", order[i]);
		if (q)
			prev = q;
	}
	EXPECT_NE(NULL, strstr(out, "\n[A1] METRIC huge_kb "));
	EXPECT_NE(NULL, strstr(out, "\n[B3] METRIC huge_kb "));
	/* every metric: both sides, n = 3 each, a verdict */
	for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++) {
		EXPECT_TRUE(table_n(out, metrics[i], &na, &nb)) TH_LOG("%s", metrics[i]);
		EXPECT_EQ(3, na) TH_LOG("%s", metrics[i]);
		EXPECT_EQ(3, nb) TH_LOG("%s", metrics[i]);
		EXPECT_STRNE("", verdict_on(out, metrics[i])) TH_LOG("%s", metrics[i]);
	}
	/* frugal never reaches 90%: left out of time_to_90pct_s, and counted */
	ASSERT_TRUE(table_n(out, "time_to_90pct_s", &na, &nb));
	EXPECT_EQ(0, na);
	EXPECT_EQ(3, nb);
	EXPECT_NE(NULL, strstr(out, "time_to_90pct_s: 90% coverage never reached in "
			       "3 of 3 runs of A and 0 of 3 of B (left out)"));
	EXPECT_EQ(count_table_rows(out), count_verdicts(out)) TH_LOG("%s", out);
	EXPECT_EQ(11, count_verdicts(out));
	/* what must differ, in the right direction */
	EXPECT_TRUE(starts_with(verdict_on(out, "final_coverage"),
				"B better on final_coverage: +"))
		TH_LOG("%s", verdict_on(out, "final_coverage"));
	EXPECT_TRUE(starts_with(verdict_on(out, "huge_kb"),
				"B better on huge_kb: +100.0% ("))
		TH_LOG("%s", verdict_on(out, "huge_kb"));
	EXPECT_TRUE(starts_with(verdict_on(out, "collapse_succeeded"),
				"B higher on collapse_succeeded: +100.0% ("))
		TH_LOG("%s", verdict_on(out, "collapse_succeeded"));
	EXPECT_TRUE(starts_with(verdict_on(out, "failed_none_limit"),
				"B lower on failed_none_limit: -100.0% ("))
		TH_LOG("%s", verdict_on(out, "failed_none_limit"));
	EXPECT_STREQ("pages_touched: no difference (the same value, 4092, in every pair)",
		     verdict_on(out, "pages_touched"));
	/* each run had its policy, and only it, attached */
	EXPECT_STREQ("policies_attached: no difference (the same value, 1, in every pair)",
		     verdict_on(out, "policies_attached"));
	ASSERT_TRUE(line_starting(out, "summary: B (eager) against A (frugal), 3 and 3 "
				  "runs: better on ", line, sizeof(line))) TH_LOG("%s", out);
	p = strstr(line, "runs: better on ");
	p[strcspn(p, ")")] = 0;
	EXPECT_NE(NULL, strstr(p, "final_coverage")) TH_LOG("%s", line);
	EXPECT_NE(NULL, strstr(p, "huge_kb")) TH_LOG("%s", line);
	/* the CSV: a header and a row per run, in the order they ran */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "cat /tmp/ab.csv"));
	EXPECT_EQ(7, count_lines(out)) TH_LOG("%s", out);
	EXPECT_TRUE(starts_with(out, "rep,side,policy,wall_s,time_to_90_s,final_coverage,"
				"peak_bytes,collapse_succeeded,collapse_failed,"
				"pages_collapsed,failed_none_limit,huge_kb,pages_touched,"
				"policies_attached\n"))
		TH_LOG("%s", out);
	/* frugal: no time to 90% (empty), 4 of 8 collapsed; eager all 8 */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "grep -cE '^[123],A,frugal,[0-9.]+,,0[.][0-9]+,"
			     "[0-9]+,4,4,2048,4,8192,4092,1$' /tmp/ab.csv; "
			     "grep -cE '^[123],B,eager,[0-9.]+,[0-9.]+,[01][.]?[0-9]*,"
			     "[0-9]+,8,0,4096,0,16384,4092,1$' /tmp/ab.csv; "
			     "cut -d, -f1,2 /tmp/ab.csv | tr '\\n' ' '"));
	EXPECT_STREQ("3\n3\nrep,side 1,A 1,B 2,B 2,A 3,A 3,B ", out);
	expect_cleaned_up(_metadata);
}

/* The same policy on both sides: nothing deterministic differs. */
TEST_F_TIMEOUT(ab, reps_same_policy_no_difference, 600)
{
	static const char *const same[] = {
		"collapse_succeeded", "collapse_failed", "pages_collapsed",
		"huge_kb", "pages_touched", "policies_attached",
	};

	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl ab " BPF "eager.bpf.o "
			     BPF "eager.bpf.o --reps 3 -- " SELF " workload 8 500"))
		TH_LOG("%s", out);
	TH_LOG("%s", strstr(out, "\nresults:") ?: out);
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		char want[80];

		snprintf(want, sizeof(want), "%s: no difference (", same[i]);
		EXPECT_TRUE(starts_with(verdict_on(out, same[i]), want))
			TH_LOG("%s", verdict_on(out, same[i]));
	}
	EXPECT_NE(NULL, strstr(out, "summary: B (eager) against A (eager)"));
	expect_cleaned_up(_metadata);
}

/* The second run fails: exit 1 naming it; the others still ran. */
TEST_F_TIMEOUT(ab, reps_failing_run_is_named, 300)
{
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl ab " BPF "frugal.bpf.o "
			     BPF "eager.bpf.o --reps 3 -- sh -c 'n=$(cat /tmp/ab_fail "
			     "2>/dev/null || echo 0); echo $((n + 1)) > /tmp/ab_fail; "
			     "echo METRIC n $n; [ $n != 1 ] || exit 3'"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "run 2/6: B1 (eager): exit status 3 after"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "collapsectl: run 2/6 (B1, eager) failed: exit "
			       "status 3; the comparison is not valid")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "(A1, frugal) failed"));
	EXPECT_NE(NULL, strstr(out, "run 6/6: B3 (eager): exit status 0"));
	EXPECT_NE(NULL, strstr(out, "some runs failed: the comparison is not valid"));
	expect_cleaned_up(_metadata);
}

TEST_F_TIMEOUT(ab, reps_bad_values, 300)
{
	static const char *const bad[] = { "0", "-1", "abc", "3x", "''", "1001" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl ab " BPF
				     "frugal.bpf.o " BPF "eager.bpf.o --reps %s -- true",
				     bad[i])) TH_LOG("%s: %s", bad[i], out);
		EXPECT_NE(NULL, strstr(out, "collapsectl: --reps needs a whole number "
				       "of runs a side, 1 to 1000 (got '"))
			TH_LOG("%s: %s", bad[i], out);
		EXPECT_EQ(1, count_lines(out)) TH_LOG("%s: %s", bad[i], out);
	}
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl ab " BPF "frugal.bpf.o "
			     BPF "eager.bpf.o --reps"));
	/* two runs a side: means and medians, no interval */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl ab " BPF "frugal.bpf.o "
			     BPF "eager.bpf.o --reps 2 -- echo METRIC x 1"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "fewer than 3 runs a side (pairs) no confidence "
			       "interval can be given")) TH_LOG("%s", out);
	EXPECT_STREQ("x: no interval (2 pairs with a value on both sides, 3 needed): "
		     "B against A +0.0%", verdict_on(out, "x"));
	/* --primary: only with --reps, and a metric of the runs */
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl ab " BPF "frugal.bpf.o "
			     BPF "eager.bpf.o --primary x -- true"));
	EXPECT_NE(NULL, strstr(out, "give --reps N too")) TH_LOG("%s", out);
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl ab " BPF "frugal.bpf.o "
			     BPF "eager.bpf.o --reps 1 --primary nosuch -- echo METRIC x 1"));
	EXPECT_NE(NULL, strstr(out, "primary metric nosuch: no such metric")) TH_LOG("%s", out);
	/*
	 * What a killed ab left (a cgroup of a pid that is no collapsectl,
	 * a process in it) is swept by the next one.
	 */
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "mkdir -p /sys/fs/cgroup/collapsectl-ab.1/a && "
			     "(sh -c 'echo $$ > /sys/fs/cgroup/collapsectl-ab.1/a/cgroup.procs; "
			     "exec sleep 600' </dev/null >/dev/null 2>&1 &) && sleep 1 && "
			     /* older than a directory an ab is about to lock */
			     "{ touch -d '2000-01-01 00:00:00' /sys/fs/cgroup/collapsectl-ab.1 || "
			     "sleep 11; } && "
			     "cat /sys/fs/cgroup/collapsectl-ab.1/a/cgroup.procs | wc -l"));
	EXPECT_STREQ("1\n", out);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl ab " BPF "frugal.bpf.o "
			     BPF "eager.bpf.o --reps 1 --primary x -- echo METRIC x 1"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "removing /sys/fs/cgroup/collapsectl-ab.1, left by an "
			       "ab that was killed")) TH_LOG("%s", out);
	EXPECT_NE(0, access("/sys/fs/cgroup/collapsectl-ab.1", F_OK));
	EXPECT_NE(NULL, strstr(out, "decision (primary metric, named before the runs): x: "))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\nhost: kernel ")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "[+")) TH_LOG("%s", out);
	expect_cleaned_up(_metadata);
}

/* --duration bounds each run: stopped, not failed; measured as stopped. */
TEST_F_TIMEOUT(ab, reps_duration_stops_each_run, 120)
{
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl ab " BPF "frugal.bpf.o "
			     BPF "eager.bpf.o --reps 1 --duration 1 -- sh -c "
			     "'echo METRIC started 1; exec sleep 30'")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "run 1/2: A1 (frugal): stopped at 1.")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "run 2/2: B1 (eager): stopped at 1.")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\n[B1] METRIC started 1\n"));
	EXPECT_EQ(NULL, strstr(out, "not valid")) TH_LOG("%s", out);
	expect_cleaned_up(_metadata);
}

/*
 * Ctrl-C during a run: exit 130, the run's whole process tree killed (a
 * setsid child too), its cgroup removed and its policy detached.
 */
TEST_F_TIMEOUT(ab, reps_ctrl_c_cleans_up, 120)
{
	EXPECT_EQ(130, run_cmd(out, sizeof(out), "collapsectl ab " BPF "frugal.bpf.o "
			       BPF "eager.bpf.o --reps 3 --duration 60 -- sh -c "
			       "'setsid sleep 1000 & sleep 1000' & "
			       /* once run 1's workload runs (not after a fixed
				* time: a debug kernel loads a policy slowly) */
			       "i=0; while [ $i -lt 600 ] && ! grep -qsx sleep "
			       "/proc/[0-9]*/comm; do sleep 0.1; i=$((i+1)); done; "
			       "kill -INT $!; wait $!")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "run 1/6: A1 (frugal): interrupted")) TH_LOG("%s", out);
	EXPECT_EQ(NULL, strstr(out, "run 2/6"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "grep -lsx sleep /proc/[0-9]*/comm; true"));
	EXPECT_STREQ("", out) TH_LOG("left behind: %s", out);
	expect_cleaned_up(_metadata);
}

/* ---- the workload -------------------------------------------------------------- */

/* Page 7 of every second 2 MiB range is left out. */
static bool skip_sparse(size_t page)
{
	return (page / HPAGE_NR) % 2 && page % HPAGE_NR == 7;
}

/* Policies ab attached ("A1_frugal", ...): only this run's, 1. */
static int ab_policies(void)
{
	char name[64], line[256];
	FILE *f = popen("collapsectl list", "r");
	int n = 0;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s", name) != 1)
			continue;
		n += strchr("AB", name[0]) && name[1] >= '0' && name[1] <= '9' &&
		     strchr(name, '_');
	}
	if (f)
		pclose(f);
	return n;
}

static int workload(int argc, char **argv)
{
	size_t nr = argc > 2 ? strtoul(argv[2], NULL, 0) : 8, touched = 0;
	long hold_ms = argc > 3 ? strtol(argv[3], NULL, 0) : 1000;
	struct region r;

	if (!nr || region_map(&r, nr))
		return 1;
	region_fill(&r, skip_sparse);
	for (size_t i = 0; i < r.len / PAGE_SZ; i++)
		touched += !skip_sparse(i);
	/*
	 * One 2 MiB range at a time, like an agent: MADV_COLLAPSE stops at
	 * the first range refused. frugal refuses the sparse ones (EINVAL
	 * would be ours, anything else is the policy's answer).
	 */
	for (size_t off = 0; off < r.len; off += HPAGE_SZ)
		if (madvise(r.p + off, HPAGE_SZ, MADV_COLLAPSE) && errno == EINVAL) {
			perror("MADV_COLLAPSE");
			return 1;
		}
	printf("METRIC huge_kb %lu higher\n", anon_huge_kb(0, r.p, r.len));
	printf("METRIC pages_touched %zu\n", touched);
	printf("METRIC policies_attached %d\n", ab_policies());
	fflush(stdout);
	usleep(hold_ms * 1000);
	return 0;	/* unmapped by the exit: what ab samples until then */
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "workload"))
		return workload(argc, argv);
	return test_harness_run(argc, argv);
}
