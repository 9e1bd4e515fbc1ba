// SPDX-License-Identifier: GPL-2.0
/* ab_stats: the statistics of `collapsectl ab --reps`; see ab_stats.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ab_stats.h"

double ab_sqrt(double x)
{
	double y, next;

	if (!(x > 0))
		return x == 0 ? 0 : __builtin_nan("");
	if (x > __DBL_MAX__)
		return x;
	/* From above sqrt(x) Newton's steps fall monotonically: stop when not. */
	y = x > 1 ? x : 1;
	for (;;) {
		next = 0.5 * (y + x / y);
		if (next >= y)
			return y;
		y = next;
	}
}

/*
 * t(0.975, df), computed with mpmath (the regularized incomplete beta
 * function inverted to 15 digits); df 0 stands for infinity (the normal
 * quantile).
 */
static const struct { double df, t; } t975[] = {
	{ 1, 12.7062047361747 },
	{ 1.25, 8.02795137725206 },
	{ 1.5, 6.01666310442793 },
	{ 1.75, 4.94884784911609 },
	{ 2, 4.30265272974946 },
	{ 2.5, 3.57465484200368 },
	{ 3, 3.18244630528371 },
	{ 3.5, 2.94008863798273 },
	{ 4, 2.77644510519779 },
	{ 4.5, 2.6589123472044 },
	{ 5, 2.57058183563632 },
	{ 5.5, 2.50185861758924 },
	{ 6, 2.44691185114497 },
	{ 7, 2.36462425159279 },
	{ 8, 2.30600413520417 },
	{ 9, 2.26215716279821 },
	{ 10, 2.22813885198627 },
	{ 11, 2.20098516009164 },
	{ 12, 2.17881282966723 },
	{ 13, 2.16036865646279 },
	{ 14, 2.1447866879178 },
	{ 15, 2.13144954555978 },
	{ 16, 2.11990529922125 },
	{ 17, 2.10981557783332 },
	{ 18, 2.10092204024104 },
	{ 19, 2.09302405440831 },
	{ 20, 2.08596344726586 },
	{ 21, 2.07961384472768 },
	{ 22, 2.07387306790403 },
	{ 23, 2.06865761041905 },
	{ 24, 2.06389856162803 },
	{ 25, 2.0595385527533 },
	{ 26, 2.05552943864287 },
	{ 27, 2.05183051648029 },
	{ 28, 2.04840714179525 },
	{ 29, 2.0452296421327 },
	{ 30, 2.04227245630124 },
	{ 32, 2.0369333434601 },
	{ 35, 2.03010792825034 },
	{ 40, 2.02107539030627 },
	{ 45, 2.01410338888085 },
	{ 50, 2.00855911210076 },
	{ 60, 2.00029782201426 },
	{ 70, 1.99443711177119 },
	{ 80, 1.99006342125445 },
	{ 100, 1.98397151852355 },
	{ 120, 1.97993040508244 },
	{ 150, 1.97590533089662 },
	{ 200, 1.97189622363391 },
	{ 300, 1.96790301126109 },
	{ 500, 1.96471983746737 },
	{ 1000, 1.96233908082641 },
	{ 0 /* inf */, 1.95996398454005 },
};
#define NT975 (sizeof(t975) / sizeof(t975[0]))

static double inv_df(unsigned int i)
{
	return t975[i].df ? 1 / t975[i].df : 0;
}

double ab_t975(double df)
{
	unsigned int i, j, k, lo;
	double x, sum = 0;

	if (!(df >= 1))
		return __builtin_nan("");
	x = 1 / df;
	/* the interval [inv_df(i + 1), inv_df(i)] holding x (1/df falls) */
	for (i = 0; i + 2 < NT975 && x < inv_df(i + 1); i++)
		;
	/* the four points around it, shifted inside the table at its ends */
	lo = i ? i - 1 : 0;
	if (lo + 4 > NT975)
		lo = NT975 - 4;
	for (j = lo; j < lo + 4; j++) {
		double w = t975[j].t;

		for (k = lo; k < lo + 4; k++)
			if (k != j)
				w *= (x - inv_df(k)) / (inv_df(j) - inv_df(k));
		sum += w;
	}
	return sum;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void ab_describe(const double *x, int n, struct ab_sample *s)
{
	double *sorted, sum = 0, ss = 0;
	int i;

	memset(s, 0, sizeof(*s));
	if (n <= 0)
		return;
	s->n = n;
	s->min = s->max = x[0];
	for (i = 0; i < n; i++) {
		sum += x[i];
		if (x[i] < s->min)
			s->min = x[i];
		if (x[i] > s->max)
			s->max = x[i];
	}
	if (s->min == s->max) {
		/* exactly: sum / n of equal values may be one ulp off */
		s->mean = s->median = s->min;
		return;
	}
	s->mean = sum / n;
	for (i = 0; i < n; i++)
		ss += (x[i] - s->mean) * (x[i] - s->mean);
	s->var = n > 1 ? ss / (n - 1) : 0;
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted) {
		s->median = s->mean;
		return;
	}
	memcpy(sorted, x, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	s->median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	free(sorted);
}

void ab_compare(const struct ab_sample *a, const struct ab_sample *b,
		struct ab_cmp *c)
{
	double va, vb, se, scale;

	memset(c, 0, sizeof(*c));
	c->outcome = AB_TOO_FEW;
	if (!a->n || !b->n)
		return;
	c->constant = a->min == a->max && b->min == b->max;
	c->diff = b->mean - a->mean;
	c->lo = c->hi = c->diff;
	if (a->n >= AB_MIN_N && b->n >= AB_MIN_N) {
		if (c->constant) {
			c->outcome = a->mean == b->mean ? AB_SAME :
				     c->diff > 0 ? AB_B_HIGHER : AB_B_LOWER;
		} else {
			va = a->var / a->n;
			vb = b->var / b->n;
			se = ab_sqrt(va + vb);
			/* Welch–Satterthwaite */
			c->df = (va + vb) * (va + vb) /
				(va * va / (a->n - 1) + vb * vb / (b->n - 1));
			c->t = ab_t975(c->df);
			c->lo = c->diff - c->t * se;
			c->hi = c->diff + c->t * se;
			c->outcome = c->lo > 0 ? AB_B_HIGHER :
				     c->hi < 0 ? AB_B_LOWER : AB_SAME;
		}
	}
	c->rel = a->mean != 0;
	if (c->rel) {
		scale = 100 / (a->mean > 0 ? a->mean : -a->mean);
		c->pct = c->diff * scale;
		c->pct_lo = c->lo * scale;
		c->pct_hi = c->hi * scale;
	}
}

#define LN2	0.693147180559945309417232121458
/* ln 2 in two parts (Cody and Waite): k * LN2_HI is exact for |k| < 2^11 */
#define LN2_HI	6.93147180369123816490e-01
#define LN2_LO	1.90821492927058770002e-10

double ab_exp(double x)
{
	double term = 1, sum = 1, r;
	int k, i;

	if (x != x)
		return x;
	if (x > 709.78)
		return __DBL_MAX__ * 2;		/* inf */
	if (x < -745.2)
		return 0;
	/* x = k ln2 + r, |r| <= ln2 / 2; exp(x) = 2^k exp(r) */
	k = (int)(x / LN2 + (x < 0 ? -0.5 : 0.5));
	r = (x - k * LN2_HI) - k * LN2_LO;
	for (i = 1; i < 30; i++) {
		term *= r / i;
		sum += term;
		if (term < 1e-18 * sum && term > -1e-18 * sum)
			break;
	}
	for (; k > 0; k--)
		sum *= 2;
	for (; k < 0; k++)
		sum /= 2;
	return sum;
}

double ab_log(double x)
{
	double z, z2, term, sum;
	int k = 0, i;

	if (!(x > 0))
		return x == 0 ? -__DBL_MAX__ * 2 : __builtin_nan("");
	if (x > __DBL_MAX__)
		return x;
	/* x = 2^k m, m in [sqrt(1/2), sqrt(2)); ln m = 2 atanh((m-1)/(m+1)) */
	while (x >= 1.4142135623730951) {
		x /= 2;
		k++;
	}
	while (x < 0.7071067811865476) {
		x *= 2;
		k--;
	}
	z = (x - 1) / (x + 1);
	z2 = z * z;
	term = z;
	sum = 0;
	for (i = 1; i < 80; i += 2) {
		sum += term / i;
		term *= z2;
		if ((term < 0 ? -term : term) <= 1e-17 * (sum < 0 ? -sum : sum))
			break;
	}
	return 2 * sum + k * LN2;
}

static double binom_cdf(int k, int n)
{
	double c = 1, sum = 0, half_n = 1;
	int i;

	for (i = 0; i < n; i++)
		half_n /= 2;
	for (i = 0; i <= k; i++) {
		sum += c;
		c = c * (n - i) / (i + 1);
	}
	return sum * half_n;
}

/* Median of @n sorted values and its distribution-free 95% interval */
static void median_ci(const double *s, int n, struct ab_paired *p)
{
	int j;

	p->med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	p->med_lo = p->med_hi = p->med;
	p->med_cov = 0;
	for (j = 1; j <= n / 2; j++) {
		double cov = 1 - 2 * binom_cdf(j - 1, n);

		if (cov < 0.95)
			break;
		p->med_lo = s[j - 1];
		p->med_hi = s[n - j];
		p->med_cov = cov;
	}
}

void ab_compare_paired(const double *a, const double *b, int n,
		       struct ab_paired *p, struct ab_cmp *c)
{
	double *d, sum = 0, ss = 0, mean, se;
	bool same_d = true;
	int i;

	memset(p, 0, sizeof(*p));
	memset(c, 0, sizeof(*c));
	c->paired = true;
	c->pairs = n > 0 ? n : 0;
	c->outcome = AB_TOO_FEW;
	if (n <= 0)
		return;
	d = malloc(n * sizeof(*d));
	if (!d)
		return;
	p->n = n;
	p->log_scale = true;
	for (i = 0; i < n; i++)
		if (!(a[i] > 0 && b[i] > 0))
			p->log_scale = false;
	/* ln b - ln a: b / a could overflow */
	for (i = 0; i < n; i++)
		d[i] = p->log_scale ? ab_log(b[i]) - ab_log(a[i]) : b[i] - a[i];
	for (i = 0; i < n; i++)
		sum += d[i];
	mean = sum / n;
	/* constant as ab_verdict() means it: every run the same on each side */
	c->constant = true;
	for (i = 0; i < n; i++) {
		ss += (d[i] - mean) * (d[i] - mean);
		if (d[i] != d[0])
			same_d = false;
		if (a[i] != a[0] || b[i] != b[0])
			c->constant = false;
	}
	if (same_d)
		mean = d[0];
	c->diff = c->lo = c->hi = mean;
	if (n >= AB_MIN_N) {
		if (same_d) {
			c->outcome = mean == 0 ? AB_SAME : mean > 0 ? AB_B_HIGHER :
				     AB_B_LOWER;
		} else {
			c->df = n - 1;
			c->t = ab_t975(c->df);
			se = ab_sqrt(ss / (n - 1) / n);
			c->lo = mean - c->t * se;
			c->hi = mean + c->t * se;
			c->outcome = c->lo > 0 ? AB_B_HIGHER :
				     c->hi < 0 ? AB_B_LOWER : AB_SAME;
			/* beyond doubles (a NaN compares false): no interval */
			if (!(c->lo - c->lo == 0 && c->hi - c->hi == 0))
				c->outcome = AB_TOO_FEW;
		}
	}
	c->a0 = a[0];
	c->b0 = b[0];
	qsort(d, n, sizeof(*d), cmp_double);
	median_ci(d, n, p);
	if (!p->log_scale && c->constant && a[0]) {
		/* exact: the same A and the same B in every pair */
		c->rel = true;
		c->pct = c->pct_lo = c->pct_hi = c->diff * 100 / (a[0] > 0 ? a[0] : -a[0]);
	}
	if (p->log_scale) {
		/* ratios, given in % of A: (ratio - 1) * 100 */
		c->rel = true;
		c->pct = (ab_exp(c->diff) - 1) * 100;
		c->pct_lo = (ab_exp(c->lo) - 1) * 100;
		c->pct_hi = (ab_exp(c->hi) - 1) * 100;
		p->med = (ab_exp(p->med) - 1) * 100;
		p->med_lo = (ab_exp(p->med_lo) - 1) * 100;
		p->med_hi = (ab_exp(p->med_hi) - 1) * 100;
	}
	free(d);
}

const char *const ab_verdict_word[AB_V_COUNT] = {
	[AB_V_BETTER] = "better",
	[AB_V_WORSE] = "worse",
	[AB_V_HIGHER] = "higher",
	[AB_V_LOWER] = "lower",
	[AB_V_SAME] = "no difference",
	[AB_V_NONE] = "no interval",
};

const char *ab_fmt_signed(char *buf, size_t len, double v)
{
	if (v >= 1e4 || v <= -1e4)
		snprintf(buf, len, "%+.0f", v);
	else
		snprintf(buf, len, "%+.4g", v);
	return buf;
}

/* "+42.1%" or, with A's mean 0, "+12" */
static void fmt_diff(char *buf, size_t len, const struct ab_cmp *c, double v,
		     double pct)
{
	if (c->rel)
		snprintf(buf, len, "%+.1f%%", pct);
	else
		ab_fmt_signed(buf, len, v);
}

/* "+1.2% [-3.0%, +5.4%]" */
static void fmt_interval(char *buf, size_t len, const struct ab_cmp *c)
{
	char d[32], lo[32], hi[32];

	fmt_diff(d, sizeof(d), c, c->diff, c->pct);
	fmt_diff(lo, sizeof(lo), c, c->lo, c->pct_lo);
	fmt_diff(hi, sizeof(hi), c, c->hi, c->pct_hi);
	snprintf(buf, len, "%s [%s, %s]%s", d, lo, hi,
		 c->rel ? "" : c->paired ? ", absolute: a value is not above 0, so "
		 "no ratio" : ", absolute: A's mean is 0");
}

enum ab_verdict ab_verdict(char *buf, size_t len, const char *name,
			   enum ab_dir dir, const struct ab_sample *a,
			   const struct ab_sample *b, const struct ab_cmp *c)
{
	enum ab_verdict v;
	char d[192];

	if (c->outcome == AB_TOO_FEW) {
		if (c->paired && a->n && b->n) {
			fmt_diff(d, sizeof(d), c, c->diff, c->pct);
			snprintf(buf, len, "%s: no interval (%d pair%s with a value on "
				 "both sides, %d needed): B against A %s", name,
				 c->pairs, c->pairs == 1 ? "" : "s", AB_MIN_N,
				 c->pairs ? d : "-");
		} else if (!a->n || !b->n) {
			snprintf(buf, len, "%s: no interval: no value from %s", name,
				 !a->n && !b->n ? "either side" : !a->n ? "A" : "B");
		} else {
			fmt_diff(d, sizeof(d), c, c->diff, c->pct);
			snprintf(buf, len, "%s: no interval (n = %d and %d, %d a side "
				 "needed): B - A %s", name, a->n, b->n, AB_MIN_N, d);
		}
		return AB_V_NONE;
	}
	if (c->outcome == AB_SAME) {
		if (c->constant) {
			snprintf(buf, len, "%s: no difference (the same value, %.6g, "
				 "in every %s)", name, c->paired ? c->a0 : a->mean,
				 c->paired ? "pair" : "run");
		} else {
			fmt_interval(d, sizeof(d), c);
			snprintf(buf, len, "%s: no difference (%s)", name, d);
		}
		return AB_V_SAME;
	}
	if (dir == AB_DIR_NONE)
		v = c->outcome == AB_B_HIGHER ? AB_V_HIGHER : AB_V_LOWER;
	else if ((c->outcome == AB_B_HIGHER) == (dir == AB_DIR_HIGHER))
		v = AB_V_BETTER;
	else
		v = AB_V_WORSE;
	if (c->constant) {
		fmt_diff(d, sizeof(d), c, c->diff, c->pct);
		snprintf(buf, len, "B %s on %s: %s (every %s gave the same value "
			 "on each side, A %.6g and B %.6g: a difference)",
			 ab_verdict_word[v], name, d, c->paired ? "pair" : "run",
			 c->paired ? c->a0 : a->mean, c->paired ? c->b0 : b->mean);
	} else {
		fmt_interval(d, sizeof(d), c);
		snprintf(buf, len, "B %s on %s: %s", ab_verdict_word[v], name, d);
	}
	return v;
}

static const char *skip_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static size_t word_len(const char *p)
{
	return strcspn(p, " \t\r\n");
}

bool ab_parse_metric(const char *line, char name[AB_NAME_MAX], double *val,
		     enum ab_dir *dir)
{
	static const char name_chars[] = "abcdefghijklmnopqrstuvwxyz"
		"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-";
	const char *p = skip_blanks(line);
	char num[64], *end;
	size_t n;
	double v;

	if (strncmp(p, "METRIC", 6) || (p[6] != ' ' && p[6] != '\t'))
		return false;
	p = skip_blanks(p + 6);
	n = word_len(p);
	if (!n || n >= AB_NAME_MAX || strspn(p, name_chars) != n)
		return false;
	memcpy(name, p, n);
	name[n] = 0;
	p = skip_blanks(p + n);
	n = word_len(p);
	if (!n || n >= sizeof(num))
		return false;
	memcpy(num, p, n);
	num[n] = 0;
	v = strtod(num, &end);
	if (*end || !__builtin_isfinite(v))
		return false;
	p = skip_blanks(p + n);
	n = word_len(p);
	*dir = AB_DIR_NONE;
	if (n == 6 && !strncmp(p, "higher", 6))
		*dir = AB_DIR_HIGHER;
	else if (n == 5 && !strncmp(p, "lower", 5))
		*dir = AB_DIR_LOWER;
	else if (n)
		return false;
	p = skip_blanks(p + n);
	while (*p == '\r' || *p == '\n' || *p == ' ' || *p == '\t')
		p++;
	if (*p)
		return false;
	*val = v;
	return true;
}
