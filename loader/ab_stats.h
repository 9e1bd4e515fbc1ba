/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ab_stats: the statistics of `collapsectl ab --reps`: per side n, mean,
 * median and variance; the difference of means B - A with a 95% Welch
 * confidence interval; the verdict line; the workload's METRIC lines.
 * Plain C without libm (the guest's binaries are static and the loader is
 * linked without -lm), shared with selftests/loader/collapsectl_ab.c.
 */
#ifndef AB_STATS_H
#define AB_STATS_H

#include <stdbool.h>
#include <stddef.h>

/* Which direction of a metric is better. */
enum ab_dir {
	AB_DIR_NONE,		/* unknown: the verdict says "B higher/lower" */
	AB_DIR_HIGHER,
	AB_DIR_LOWER,
};

/* An interval needs this many values on each side. */
#define AB_MIN_N	3

struct ab_sample {
	int n;
	double mean, median;
	double var;		/* sample variance (n - 1); 0 when constant */
	double min, max;
};

/* Describe @n values (not reordered); n 0 gives zeros. */
void ab_describe(const double *x, int n, struct ab_sample *s);

/* Square root (Newton's method): the loader links no libm. */
double ab_sqrt(double x);

/*
 * The 0.975 quantile of Student's t distribution with @df degrees of
 * freedom (any real df >= 1; NaN below): the factor of a two-sided 95%
 * interval. A table of exact values at df 1, 1.25, ..., 30, ..., 1000, inf,
 * interpolated (4-point Lagrange) in 1/df: relative error below 5e-5 for
 * df >= 2 (Welch's df is >= 2 with 3 values a side), 1.1e-3 in [1, 2].
 */
double ab_t975(double df);

enum ab_outcome {
	AB_TOO_FEW,		/* fewer than AB_MIN_N values on a side */
	AB_SAME,		/* the interval includes 0 (or constant and equal) */
	AB_B_HIGHER,		/* the interval is above 0 */
	AB_B_LOWER,		/* the interval is below 0 */
};

struct ab_cmp {
	enum ab_outcome outcome;
	bool constant;		/* every value the same on each side */
	double diff;		/* mean B - mean A */
	double lo, hi;		/* its 95% Welch interval (diff, diff if constant) */
	double df, t;		/* Welch–Satterthwaite df, ab_t975(df) */
	bool paired;		/* from ab_compare_paired(), of @pairs pairs */
	int pairs;
	double a0, b0;		/* paired and constant: A's value, B's value */
	bool rel;		/* mean A != 0 (paired: ratios): the three below are valid */
	double pct, pct_lo, pct_hi;	/* the same in % of |mean A| */
};

/*
 * B against A: Welch's interval for the difference of means, at 95%.
 * Needs AB_MIN_N values a side (else AB_TOO_FEW, diff and pct still set
 * when both sides have a value).
 */
void ab_compare(const struct ab_sample *a, const struct ab_sample *b,
		struct ab_cmp *c);

/* Natural logarithm and exponential (no libm): relative error < 1e-15. */
double ab_log(double x);
double ab_exp(double x);

/*
 * The runs of `ab --reps` go A B B A A B B A ...: runs 2k and 2k+1 are a
 * pair, one of each side back to back, alternating which goes first, so
 * what drifts over the session (the host's load, the page cache, memory
 * fragmentation) falls on both sides of a pair alike. B against A from
 * @n pairs (a[i], b[i]):
 * - when every value is > 0, on the log scale: the mean of
 *   ln(b[i] / a[i]) with its t interval (n - 1 df), given back as a ratio
 *   (the geometric mean of the per-pair ratios) and in % (ratio - 1), so
 *   an interval can never reach below -100%;
 * - otherwise the mean of b[i] - a[i] with its t interval (in % of A only
 *   when every pair is the same A and the same B: then it is exact).
 * Also the median of the per-pair ratios (or differences) with its
 * distribution-free interval (the order statistics x(j), x(n+1-j) with
 * the largest j whose binomial coverage is >= 95%; n >= 6).
 * The result is in @c as ab_compare() gives it (diff, lo, hi absolute or
 * pct, pct_lo, pct_hi relative; df n - 1), for ab_verdict().
 */
struct ab_paired {
	int n;			/* pairs with both values */
	bool log_scale;		/* every value > 0: ratios */
	double med, med_lo, med_hi;	/* ratio - 1 in %, or difference */
	double med_cov;		/* the interval's coverage; 0: none (n < 6) */
};
void ab_compare_paired(const double *a, const double *b, int n,
		       struct ab_paired *p, struct ab_cmp *c);

/* What a verdict line says, for the summary. */
enum ab_verdict {
	AB_V_BETTER,
	AB_V_WORSE,
	AB_V_HIGHER,
	AB_V_LOWER,
	AB_V_SAME,
	AB_V_NONE,		/* no interval: too few values */
	AB_V_COUNT,
};
extern const char *const ab_verdict_word[AB_V_COUNT];

/*
 * The verdict on metric @name into @buf, e.g.
 *   "B better on time_to_90pct_s: -42.1% [-48.0%, -36.2%]"
 *   "B higher on set_rps: +3.0% [+1.2%, +4.8%]"
 *   "final_coverage: no difference (+1.2% [-3.0%, +5.4%])"
 *   "B higher on collapse_succeeded: +100.0% (every run gave the same
 *    value on each side: 4 and 8, a difference)"
 * With mean A 0 the difference is absolute ("+12 [+10, +14], A's mean is
 * 0"). Returns the verdict's kind.
 */
enum ab_verdict ab_verdict(char *buf, size_t len, const char *name,
			   enum ab_dir dir, const struct ab_sample *a,
			   const struct ab_sample *b, const struct ab_cmp *c);

/* A signed difference: "+12", "+3.142", "+339968" (no exponent). */
const char *ab_fmt_signed(char *buf, size_t len, double v);

#define AB_NAME_MAX	48
/*
 * Is @line (without its newline) "METRIC NAME VALUE [higher|lower]"? NAME
 * is [A-Za-z0-9_.-]{1,47}, VALUE a finite number; blanks are spaces or
 * tabs; nothing else may follow. Fills @name, @val and @dir if so.
 */
bool ab_parse_metric(const char *line, char name[AB_NAME_MAX], double *val,
		     enum ab_dir *dir);

#endif
