// SPDX-License-Identifier: GPL-2.0
/* collapsectl stats: the kernel's counters as a table, JSON or metrics. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collapsectl.h"

#define TEXTFILE	"collapse_ext.prom"

void print_stats_table(FILE *f, const char *name, const char *name2)
{
	struct stat_line a[MAX_STATS], b[MAX_STATS];
	int na = read_stats(name, a, MAX_STATS), nb = 0, i, j;

	if (na < 0) {
		fprintf(f, "  (no counters for '%s')\n", name);
		return;
	}
	if (name2) {
		nb = read_stats(name2, b, MAX_STATS);
		fprintf(f, "  %-32s %14s %14s %14s\n", "counter", name, name2,
			"difference");
	}
	for (i = 0; i < na; i++) {
		unsigned long long other = 0;

		if (!name2) {
			fprintf(f, "  %-32s %14llu\n", a[i].key, a[i].val);
			continue;
		}
		for (j = 0; j < nb; j++)
			if (!strcmp(a[i].key, b[j].key))
				other = b[j].val;
		fprintf(f, "  %-32s %14llu %14llu %+14lld\n", a[i].key, a[i].val,
			other, (long long)(other - a[i].val));
	}
	/* failed_* lines only present on the second policy */
	for (j = 0; j < nb; j++) {
		for (i = 0; i < na; i++)
			if (!strcmp(a[i].key, b[j].key))
				break;
		if (i == na)
			fprintf(f, "  %-32s %14d %14llu %+14lld\n", b[j].key, 0,
				b[j].val, (long long)b[j].val);
	}
}

static const char stats_usage[] =
"Usage: collapsectl stats [NAME] [--json | --openmetrics] [--textfile DIR]\n"
"                         [--watch SECONDS]\n"
"\n"
"The kernel's counters of policy NAME (default: every attached policy).\n"
"  --json           a JSON array, one object per policy: name, cgroup,\n"
"                   cgroup_id, attach_time_ns, pinned, counters {NAME: N},\n"
"                   memory {anon, anon_thp} (bytes, the cgroup's memory.stat;\n"
"                   null when it has none); with --watch one array per line,\n"
"                   each object with interval_s and rates {NAME: per second}\n"
"  --openmetrics    OpenMetrics text: collapse_ext_COUNTER_total{policy,cgroup},\n"
"                   collapse_ext_failed_total{policy,cgroup,reason} and the\n"
"                   gauges collapse_ext_memory_anon_bytes and\n"
"                   collapse_ext_memory_anon_thp_bytes\n"
"  --textfile DIR   write the same metrics (Prometheus text format 0.0.4) to\n"
"                   DIR/" TEXTFILE " by an atomic rename, for node_exporter's\n"
"                   textfile collector; with --watch, every interval\n"
"  --watch SECONDS  again every SECONDS (or with a unit: 500ms, 10s, 1m),\n"
"                   with the rate per second over the\n"
"                   measured interval; follows policies as they are attached\n"
"                   and detached; a counter that went down (the policy was\n"
"                   attached again) counts from 0\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* The previous snapshot of a policy, if it is the same attachment. */
static const struct policy_snap *previous(const struct policy_snap *prev,
					  int nprev, const struct policy_snap *s)
{
	int i;

	for (i = 0; i < nprev; i++)
		if (!strcmp(prev[i].name, s->name) &&
		    prev[i].attach_ns == s->attach_ns)
			return &prev[i];
	return NULL;
}

/* Counter @i of @s per second since @p; a reset counts from 0. */
static double rate(const struct policy_snap *p, const struct policy_snap *s,
		   int i, double dt)
{
	const struct stat_line *l = &s->stats[i];
	int j;

	for (j = 0; j < p->nstats; j++)
		if (!strcmp(p->stats[j].key, l->key))
			return (l->val >= p->stats[j].val ?
				l->val - p->stats[j].val : l->val) / dt;
	return l->val / dt;	/* a failed_* line that just appeared */
}

static void print_table(const struct policy_snap *s, int n,
			const struct policy_snap *prev, int nprev, double dt)
{
	int i, j;

	for (i = 0; i < n; i++) {
		const struct policy_snap *p = dt ? previous(prev, nprev, &s[i]) : NULL;

		printf("%s:%s\n", s[i].name, dt && !p ? " (attached)" : "");
		for (j = 0; j < s[i].nstats; j++) {
			if (stat_quiet(&s[i].stats[j]))
				continue;
			printf("  %-32s %14llu", s[i].stats[j].key, s[i].stats[j].val);
			if (p)
				printf("  %10.1f/s", rate(p, &s[i], j, dt));
			printf("\n");
		}
	}
	/* Policies that went away since the last interval. */
	for (i = 0; dt && i < nprev; i++) {
		for (j = 0; j < n; j++)
			if (!strcmp(prev[i].name, s[j].name))
				break;
		if (j == n)
			printf("%s: (detached)\n", prev[i].name);
	}
	if (!n)
		printf("no collapse_ext policy attached\n");
}

static void print_json(const struct policy_snap *s, int n,
		       const struct policy_snap *prev, int nprev, double dt)
{
	json_writer_t *jw = json_out_new();
	int i, j;

	jsonw_start_array(jw);
	for (i = 0; i < n; i++) {
		const struct policy_snap *p = dt ? previous(prev, nprev, &s[i]) : NULL;

		jsonw_start_object(jw);
		json_string_field(jw, "name", s[i].name);
		json_string_field(jw, "cgroup", s[i].cgroup);
		jsonw_uint_field(jw, "cgroup_id", s[i].cgroup_id);
		jsonw_uint_field(jw, "attach_time_ns", s[i].attach_ns);
		jsonw_bool_field(jw, "pinned", s[i].pinned);
		jsonw_name(jw, "counters");
		jsonw_start_object(jw);
		for (j = 0; j < s[i].nstats; j++)
			jsonw_lluint_field(jw, s[i].stats[j].key, s[i].stats[j].val);
		jsonw_end_object(jw);
		jsonw_name(jw, "memory");
		jsonw_start_object(jw);
		if (s[i].anon >= 0)
			jsonw_int_field(jw, "anon", s[i].anon);
		else
			jsonw_null_field(jw, "anon");
		if (s[i].anon_thp >= 0)
			jsonw_int_field(jw, "anon_thp", s[i].anon_thp);
		else
			jsonw_null_field(jw, "anon_thp");
		jsonw_end_object(jw);
		if (dt && !p) {
			/* attached since the last interval: no rate yet */
			jsonw_float_field_fmt(jw, "interval_s", "%.3f", dt);
			jsonw_null_field(jw, "rates");
		} else if (dt) {
			jsonw_float_field_fmt(jw, "interval_s", "%.3f", dt);
			jsonw_name(jw, "rates");
			jsonw_start_object(jw);
			for (j = 0; j < s[i].nstats; j++)
				jsonw_float_field_fmt(jw, s[i].stats[j].key, "%.3f",
						      rate(p, &s[i], j, dt));
			jsonw_end_object(jw);
		}
		jsonw_end_object(jw);
	}
	jsonw_end_array(jw);
	jsonw_destroy(&jw);
}

/* DIR/collapse_ext.prom, replaced by rename: a reader never sees half. */
static int write_textfile(const char *dir, const struct policy_snap *s, int n)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	FILE *f;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/." TEXTFILE ".XXXXXX", dir);
	snprintf(path, sizeof(path), "%s/" TEXTFILE, dir);
	fd = mkstemp(tmp);
	if (fd < 0)
		return fail("cannot create a file in %s: %s", dir, strerror(errno));
	fchmod(fd, 0644);
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return fail("%s: %s", tmp, strerror(errno));
	}
	print_prometheus_text(f, s, n);
	if (fflush(f) || fsync(fd)) {
		fclose(f);
		unlink(tmp);
		return fail("writing %s: %s", tmp, strerror(errno));
	}
	if (fclose(f)) {
		unlink(tmp);
		return fail("writing %s: %s", tmp, strerror(errno));
	}
	if (rename(tmp, path)) {
		unlink(tmp);
		return fail("cannot rename %s to %s: %s", tmp, path, strerror(errno));
	}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleep until @t (CLOCK_MONOTONIC seconds); a signal ends it early. */
static void sleep_until(double t)
{
	struct timespec ts = {
		.tv_sec = (time_t)t,
		.tv_nsec = (long)((t - (time_t)t) * 1e9),
	};

	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "openmetrics", no_argument, NULL, 'o' },
		{ "textfile", required_argument, NULL, 't' },
		{ "watch", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	static struct policy_snap snaps[2][MAX_POLICIES];
	const char *only = NULL, *textdir = NULL;
	bool json = false, om = false;
	double watch = 0, last = 0, next, t;
	int c, n, nprev = 0, cur = 0;
	struct stat st;

	while ((c = getopt_long(argc, argv, "jot:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'o': om = true; break;
		case 't': textdir = optarg; break;
		case 'w':
			if (parse_seconds(optarg, &watch)) {
				fail("--watch needs a positive time, e.g. 1, 10s or "
				     "500ms (got '%s')", optarg);
				return 2;
			}
			break;
		case 'h': fputs(stats_usage, stdout); return 0;
		default: fputs(stats_usage, stderr); return 2;
		}
	}
	if (argc - optind > 1 || (json && om)) {
		fputs(stats_usage, stderr);
		return 2;
	}
	if (textdir && (stat(textdir, &st) || !S_ISDIR(st.st_mode)))
		return fail("--textfile %s: not a directory", textdir);
	if (!kernel_supported())
		return 1;
	if (optind < argc) {
		only = argv[optind];
		if (!policy_name_ok(only))
			return 1;
		if (!policy_attached(only))
			return fail("no policy named '%s' (see collapsectl list)", only);
	}
	if (watch) {
		/* End between two outputs, never inside one. */
		struct sigaction sa = { .sa_handler = on_signal };

		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	for (next = now_s();; ) {
		struct policy_snap *s = snaps[cur], *prev = snaps[!cur];
		double dt;

		if (stop)
			return 0;
		n = snapshot_policies(s, MAX_POLICIES, only);
		if (n < 0)
			return fail("cannot read the policies: %s",
				    links_error(n));
		t = now_s();
		dt = last ? t - last : 0;
		/* An exporter outlives one failed write (ENOSPC...) */
		if (textdir && write_textfile(textdir, s, n) && !watch)
			return 1;
		if (json)
			print_json(s, n, prev, nprev, dt);
		else if (om)
			print_openmetrics(stdout, s, n);
		else if (!textdir)
			print_table(s, n, prev, nprev, dt);
		fflush(stdout);
		if (!watch)
			return 0;
		last = t;
		nprev = n;
		cur = !cur;
		next += watch;
		sleep_until(next);
	}
}
