// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl ab --reps N: N runs under each policy, one at a time in the
 * order A B B A ..., each in a fresh cgroup with its policy attached for
 * that run only; per run the built-in metrics, the policy's counters and
 * the workload's METRIC lines; at the end a table, verdicts and a CSV.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE		/* pipe2() */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ab.h"
#include "collapsectl.h"

/* ---- with --reps: one run at a time, statistics at the end ---------------- */

#define MAX_METRICS	64
#define SAMPLE_S	0.1			/* coverage sampling period */
#define MIN_ANON	(2LL << 20)		/* below: no huge page can fit */
#define COVERAGE_GOAL	0.9

enum metric_kind { MK_BUILTIN, MK_COUNTER, MK_WORKLOAD };
/* The order of the table, the verdicts and the CSV columns. */
static const enum metric_kind order[] = { MK_BUILTIN, MK_COUNTER, MK_WORKLOAD };

/* The built-in metrics, in this order at the start of reps.m[]. */
enum { M_WALL, M_T90, M_COVERAGE, M_PEAK, NR_BUILTIN };
static const struct {
	const char *name, *csv;
	enum ab_dir dir;
} builtin[NR_BUILTIN] = {
	[M_WALL]	= { "wall_s", "wall_s", AB_DIR_LOWER },
	[M_T90]		= { "time_to_90pct_s", "time_to_90_s", AB_DIR_LOWER },
	[M_COVERAGE]	= { "final_coverage", "final_coverage", AB_DIR_HIGHER },
	[M_PEAK]	= { "peak_bytes", "peak_bytes", AB_DIR_LOWER },
};
/*
 * Counters always shown; every failed_* and underused_* (split_underused)
 * counter a run has joins them.
 */
static const char *const counter_names[] = {
	"collapse_succeeded", "collapse_failed", "pages_collapsed",
};
#define NR_COUNTERS	(int)(sizeof(counter_names) / sizeof(counter_names[0]))

struct metric {
	char name[AB_NAME_MAX];
	enum metric_kind kind;
	enum ab_dir dir;
};

struct run {
	int index;		/* 1..2N, in the order they ran */
	int side;		/* 0: A, 1: B */
	int rep;		/* 1..N within its side */
	char tag[16];		/* "A1" */
	bool done;		/* ended (by itself or at --duration): counted */
	bool stopped;		/* still going at --duration */
	bool counters_read;
	int status;
	double val[MAX_METRICS];
	bool has[MAX_METRICS];
};

struct reps {
	const char *file[2];
	char objname[2][32];	/* the policies' own names */
	int n;			/* runs a side */
	double duration;
	char **cmd;
	const char *base;
	const char *primary;	/* --primary: the metric that decides */
	struct metric m[MAX_METRICS];
	int nm;
	bool warned_full;
	struct run *runs;	/* 2n, in the order they ran */
};

/* Run @i (0-based) of the sequence is A or B: A B B A A B B A ... */
static int side_of_run(int i)
{
	return (i / 2) % 2 ? !(i % 2) : i % 2;
}

/* Index of metric @name, added as @kind when new; -1 if it cannot be. */
static int metric_index(struct reps *r, const char *name, enum metric_kind kind)
{
	int i;

	for (i = 0; i < r->nm; i++)
		if (!strcmp(r->m[i].name, name))
			return r->m[i].kind == kind ? i : -1;
	if (r->nm == MAX_METRICS) {
		if (!r->warned_full)
			fprintf(stderr, "collapsectl: more than %d metrics: '%s' "
				"and later ones left out\n", MAX_METRICS, name);
		r->warned_full = true;
		return -1;
	}
	snprintf(r->m[i].name, sizeof(r->m[i].name), "%s", name);
	r->m[i].kind = kind;
	r->m[i].dir = AB_DIR_NONE;
	return r->nm++;
}

/* A line of the workload's stdout: passed through, parsed for METRIC. */
static void workload_line(struct reps *r, struct run *run, const char *line,
			  size_t len)
{
	char copy[512], name[AB_NAME_MAX];
	enum ab_dir dir;
	double val;
	int i;

	printf("[%s] %.*s\n", run->tag, (int)len, line);
	if (len >= sizeof(copy))
		return;
	memcpy(copy, line, len);
	copy[len] = 0;
	if (!ab_parse_metric(copy, name, &val, &dir))
		return;
	i = metric_index(r, name, MK_WORKLOAD);
	if (i < 0) {
		if (r->nm < MAX_METRICS)
			fprintf(stderr, "collapsectl: METRIC %s: the name of a "
				"built-in metric or counter, left out\n", name);
		return;
	}
	run->val[i] = val;
	run->has[i] = true;
	if (dir != AB_DIR_NONE && r->m[i].dir == AB_DIR_NONE)
		r->m[i].dir = dir;
}

struct relay {
	int fd;
	char buf[4096];
	size_t len;
};

/* Read what the workload wrote; false at end of file (fd closed). */
static bool relay_read(struct reps *r, struct run *run, struct relay *rl)
{
	ssize_t got = read(rl->fd, rl->buf + rl->len, sizeof(rl->buf) - rl->len);
	char *p, *nl;

	if (got < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (got <= 0) {
		if (rl->len)
			workload_line(r, run, rl->buf, rl->len);
		rl->len = 0;
		close(rl->fd);
		rl->fd = -1;
		fflush(stdout);
		return false;
	}
	rl->len += got;
	p = rl->buf;
	while ((nl = memchr(p, '\n', rl->buf + rl->len - p))) {
		workload_line(r, run, p, nl - p);
		p = nl + 1;
	}
	rl->len -= p - rl->buf;
	memmove(rl->buf, p, rl->len);
	if (rl->len == sizeof(rl->buf)) {	/* a very long line: in pieces */
		workload_line(r, run, rl->buf, rl->len);
		rl->len = 0;
	}
	fflush(stdout);
	return true;
}

static long long read_ll(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* The counters of policy @pname into @run: those shown, failed_*, underused_*. */
static void read_run_counters(struct reps *r, struct run *run, const char *pname)
{
	struct stat_line st[MAX_STATS];
	int n = read_stats(pname, st, MAX_STATS), i, j, k;

	if (n < 0) {
		fprintf(stderr, "collapsectl: no counters of '%s': %s\n", pname,
			strerror(-n));
		return;
	}
	run->counters_read = true;
	/* a counter missing from the file (failed_*) is 0 */
	for (i = 0; i < r->nm; i++)
		if (r->m[i].kind == MK_COUNTER) {
			run->val[i] = 0;
			run->has[i] = true;
		}
	for (i = 0; i < n; i++) {
		/* underused_* (split_underused) once one is not 0, as failed_* */
		bool shown = !strncmp(st[i].key, "failed_", 7) ||
			     (!strncmp(st[i].key, "underused_", 10) && st[i].val);

		for (j = 0; j < NR_COUNTERS; j++)
			shown |= !strcmp(st[i].key, counter_names[j]);
		if (!shown)
			continue;
		k = metric_index(r, st[i].key, MK_COUNTER);
		if (k < 0)
			continue;
		/* new: 0 in the runs before */
		for (j = 0; &r->runs[j] != run; j++)
			if (r->runs[j].counters_read && !r->runs[j].has[k]) {
				r->runs[j].val[k] = 0;
				r->runs[j].has[k] = true;
			}
		run->val[k] = st[i].val;
		run->has[k] = true;
	}
}

/* Has @pid begun to exit (PF_EXITING: its memory may be going away) or gone? */
static bool exiting(pid_t pid)
{
	char path[64], buf[512], *p;
	unsigned int flags;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = 0;
	/* pid (comm) state ppid pgrp session tty_nr tpgid flags */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %u", &flags) != 1)
		return true;
	return flags & 0x4;	/* PF_EXITING */
}

/*
 * Is a process of cgroup @cg exiting? A sample taken while one tears its
 * memory down (redis shutting down in a script that is still alive) is
 * not of the run.
 */
static bool cgroup_exiting(const char *cg)
{
	char path[PATH_MAX + 16];
	bool ret = false, found = false;
	FILE *f;
	int pid;

	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	f = fopen(path, "r");
	if (!f)
		return true;
	while (!ret && fscanf(f, "%d", &pid) == 1) {
		ret = exiting(pid);
		found = true;
	}
	fclose(f);
	/*
	 * None left: the last one is past cgroup_exit(), its memory gone,
	 * though memory.stat may not show all of that yet (seen on a debug
	 * kernel: 13 of 16 MiB anon, a quarter of the THPs, mid-teardown)
	 */
	return ret || !found;
}

/* Wait (up to 2 s) for the kernel to finish detaching @pname. */
static void wait_detached(const char *pname)
{
	for (int i = 0; i < 200 && policy_attached(pname); i++)
		usleep(10000);
	if (policy_attached(pname))
		fprintf(stderr, "collapsectl: '%s' is still attached\n", pname);
}

static void print_run_result(const struct reps *r, const struct run *run)
{
	char buf[64];
	int i;

	printf("run %d/%d: %s (%s): ", run->index, 2 * r->n, run->tag,
	       r->objname[run->side]);
	if (!run->done) {
		printf("interrupted\n");
		return;
	}
	if (run->stopped)
		printf("stopped at %.1f s (--duration)", run->val[M_WALL]);
	else
		printf("%s after %.2f s", ab_status_str(run->status, buf, sizeof(buf)),
		       run->val[M_WALL]);
	if (run->has[M_T90])
		printf("; 90%% coverage at %.2f s", run->val[M_T90]);
	else
		printf("; 90%% coverage never reached");
	if (run->has[M_COVERAGE])
		printf("; final coverage %.3f", run->val[M_COVERAGE]);
	if (run->has[M_PEAK])
		printf("; peak %.1f MiB", run->val[M_PEAK] / (1 << 20));
	/* the counters always shown, and the failed_*, underused_* of this run */
	for (i = 0; i < r->nm; i++)
		if (r->m[i].kind == MK_COUNTER && run->has[i] &&
		    (run->val[i] || i < NR_BUILTIN + NR_COUNTERS))
			printf("; %s %.0f", r->m[i].name, run->val[i]);
	printf("\n");
	fflush(stdout);
}

/*
 * One run: a fresh cgroup, the policy attached to it, COMMAND, samples of
 * its coverage every 100 ms, and its counters, peak and exit. 0, or 1 on
 * an error that ends the whole comparison (printed).
 */
static int one_run(struct reps *r, struct run *run)
{
	char cg[PATH_MAX], path[PATH_MAX + 32], pname[32];
	struct policy_obj po = {};
	struct bpf_link *link = NULL;
	struct relay rl = { .fd = -1 };
	double t0, t, next, exit_t = 0;
	int pfd[2] = { -1, -1 }, pidfd = -1, err = 1;
	bool exited = false;
	uint64_t cgid;
	pid_t pid = -1;

	snprintf(cg, sizeof(cg), "%s/run%d-%s", r->base, run->index, run->tag);
	if (mkdir(cg, 0755))
		return fail("cannot create %s: %s", cg, strerror(errno));
	cgid = cgroup_path_id(cg);
	if (!cgid)
		goto out;
	/* a name of its own for each run: the last one may still be going */
	snprintf(pname, sizeof(pname), "%.5s_%.25s", run->tag, r->objname[run->side]);
	if (policy_open_load(&po, r->file[run->side], cgid, pname, NULL))
		goto out;
	link = policy_attach(&po, cg, cgid);
	if (!link)
		goto out;
	if (pipe2(pfd, O_CLOEXEC)) {
		fail("pipe: %s", strerror(errno));
		goto out;
	}
	printf("run %d/%d: %s (%s) in %s\n", run->index, 2 * r->n, run->tag,
	       r->objname[run->side], cg);
	fflush(stdout);

	t0 = next = ab_now();
	pid = ab_start_in(cg, r->cmd, pfd[1]);
	close(pfd[1]);
	pfd[1] = -1;
	if (pid < 0) {
		fail("fork: %s", strerror(errno));
		goto out;
	}
	rl.fd = pfd[0];
	pfd[0] = -1;
	pidfd = syscall(__NR_pidfd_open, pid, 0);	/* -1: poll every 100 ms */

	for (;;) {
		struct pollfd fds[2];
		int nfds = 0, ms;

		t = ab_now();
		if (!exited && waitpid(pid, &run->status, WNOHANG) == pid) {
			exited = true;
			exit_t = t;
		}
		if (!exited && t >= next) {
			long long anon = cgroup_memstat(cg, "anon");
			long long thp = cgroup_memstat(cg, "anon_thp");

			/*
			 * A sample counts if the run was still alive after it,
			 * none of its processes exiting.
			 */
			if (waitpid(pid, &run->status, WNOHANG) == pid) {
				exited = true;
				exit_t = ab_now();
			} else if (anon >= MIN_ANON && thp >= 0 && !cgroup_exiting(cg)) {
				run->val[M_COVERAGE] = (double)thp / anon;
				run->has[M_COVERAGE] = true;
				if (!run->has[M_T90] &&
				    run->val[M_COVERAGE] >= COVERAGE_GOAL) {
					run->val[M_T90] = t - t0;
					run->has[M_T90] = true;
				}
			}
			next += SAMPLE_S;
			if (next <= t)
				next = t + SAMPLE_S;
		}
		if (exited || ab_interrupted)
			break;
		if (t - t0 >= r->duration) {
			run->stopped = true;
			break;
		}
		if (rl.fd >= 0)
			fds[nfds++] = (struct pollfd){ .fd = rl.fd, .events = POLLIN };
		if (pidfd >= 0)
			fds[nfds++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
		t = ab_now();
		ms = (int)((next - t) * 1000) + 1;
		if (t0 + r->duration < next)
			ms = (int)((t0 + r->duration - t) * 1000) + 1;
		if (ms < 0)
			ms = 0;
		if (poll(fds, nfds, ms) > 0 && rl.fd >= 0 &&
		    (fds[0].revents & (POLLIN | POLLHUP | POLLERR)))
			relay_read(r, run, &rl);
	}
	if (!exited)
		exit_t = ab_now();
	/* whatever is left of the run (all of it when stopped) */
	if (cgroup_kill_wait(cg))
		kill(pid, SIGKILL);
	if (!exited)
		waitpid(pid, &run->status, 0);
	pid = -1;
	/* the rest of its output: every writer is gone */
	while (rl.fd >= 0) {
		struct pollfd fd = { .fd = rl.fd, .events = POLLIN };

		if (poll(&fd, 1, 2000) <= 0 || !relay_read(r, run, &rl))
			break;
	}
	if (ab_interrupted) {
		err = 0;
		goto out;	/* not counted, even if Ctrl-C ended it */
	}
	run->done = true;
	run->val[M_WALL] = exit_t - t0;
	run->has[M_WALL] = true;
	snprintf(path, sizeof(path), "%s/memory.peak", cg);
	run->val[M_PEAK] = read_ll(path);
	run->has[M_PEAK] = run->val[M_PEAK] >= 0;
	/* before the detach: the counters go with the policy */
	read_run_counters(r, run, pname);
	err = 0;
out:
	if (pid > 0) {
		cgroup_kill_wait(cg);
		waitpid(pid, NULL, 0);
	}
	if (rl.fd >= 0)
		close(rl.fd);
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (pidfd >= 0)
		close(pidfd);
	if (link) {
		bpf_link__destroy(link);
		policy_close(&po);
		wait_detached(pname);
	} else {
		policy_close(&po);
	}
	for (int i = 0; rmdir(cg) && errno == EBUSY && i < 100; i++)
		usleep(10000);
	return err;
}

/* A number for the table: integers as such, the rest with 4 digits. */
static const char *fmt_val(char *buf, size_t len, double v)
{
	if (v == (double)(long long)v && v < 1e15 && v > -1e15)
		snprintf(buf, len, "%lld", (long long)v);
	else if (v >= 1000 || v <= -1000)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.4g", v);
	return buf;
}

/* The values of metric @k from the counted runs of side @s. */
static int side_values(const struct reps *r, int k, int s, double *x, int *runs)
{
	int i, n = 0;

	*runs = 0;
	for (i = 0; i < 2 * r->n; i++) {
		const struct run *run = &r->runs[i];

		if (!run->done || run->side != s)
			continue;
		(*runs)++;
		if (run->has[k])
			x[n++] = run->val[k];
	}
	return n;
}

/* Append ", NAME" (or "NAME") to @list. */
static void list_add(char *list, size_t len, const char *name)
{
	size_t used = strlen(list);

	snprintf(list + used, len - used, "%s%s", used ? ", " : "", name);
}

/*
 * The pairs of metric @k: runs 2j and 2j+1 ran back to back, one of each
 * side (side_of_run()); a pair counts when both ran to the end with a
 * value. A's values into a[], B's into b[]; their number.
 */
static int pair_values(const struct reps *r, int k, double *a, double *b)
{
	int j, n = 0;

	for (j = 0; 2 * j + 1 < 2 * r->n; j++) {
		const struct run *p = &r->runs[2 * j], *q = &r->runs[2 * j + 1];

		if (!p->done || !q->done || !p->has[k] || !q->has[k])
			continue;
		a[n] = p->side ? q->val[k] : p->val[k];
		b[n] = p->side ? p->val[k] : q->val[k];
		n++;
	}
	return n;
}

/*
 * Both sides' values of metric @k described, and B compared with A pair
 * by pair (ab_compare_paired()).
 */
static void compare_metric(const struct reps *r, int k, double *x[2],
			   int runs[2], struct ab_sample smp[2], struct ab_cmp *c,
			   struct ab_paired *p)
{
	int s;

	for (s = 0; s < 2; s++)
		ab_describe(x[s], side_values(r, k, s, x[s], &runs[s]), &smp[s]);
	/* x[] are described: reused for the pairs */
	ab_compare_paired(x[0], x[1], pair_values(r, k, x[0], x[1]), p, c);
}

/* The tables and verdicts; 1 when --primary names no metric of the runs */
static int report(struct reps *r, int nfailed)
{
	char lists[AB_V_COUNT][1024] = {}, line[512], v[6][64];
	int counts[AB_V_COUNT] = {}, runs[2], o, k, s, nmetrics = 0;
	double *x[2];
	struct ab_sample smp[2];
	struct ab_paired p;
	struct ab_cmp c;
	int primary = -1;

	x[0] = calloc(2 * r->n, sizeof(double));
	x[1] = calloc(2 * r->n, sizeof(double));
	if (!x[0] || !x[1])
		goto out;
	side_values(r, M_WALL, 0, x[0], &runs[0]);
	side_values(r, M_WALL, 1, x[1], &runs[1]);
	if (!runs[0] && !runs[1])
		goto out;
	printf("\nresults: A = %s, %d runs; B = %s, %d runs\n"
	       "B against A pair by pair (runs 1-2, 3-4, ...: an A and a B back to "
	       "back, A first and B first in turn): the geometric mean of B/A in "
	       "%%, with its 95%% t interval on the log scale (where a value is 0 "
	       "or negative: the mean of B - A, with its t interval); and the "
	       "median of the pairs' B/A (or B - A) with its distribution-free "
	       "95%% interval (6 pairs or more)\n", r->objname[0], runs[0],
	       r->objname[1], runs[1]);
	if (runs[0] < AB_MIN_N || runs[1] < AB_MIN_N)
		printf("note: with fewer than %d runs a side (pairs) no confidence "
		       "interval can be given: means and medians only\n", AB_MIN_N);
	printf("%-24s %4s %12s %12s %4s %12s %12s %5s %9s  %-20s %s\n", "metric",
	       "n A", "mean A", "median A", "n B", "mean B", "median B", "pairs",
	       "B vs A", "95% CI", "median of pairs [95% CI]");
	for (o = 0; o < 3; o++)
		for (k = 0; k < r->nm; k++) {
			if (r->m[k].kind != order[o])
				continue;
			compare_metric(r, k, x, runs, smp, &c, &p);
			printf("%-24s", r->m[k].name);
			for (s = 0; s < 2; s++)
				if (smp[s].n)
					printf(" %4d %12s %12s", smp[s].n,
					       fmt_val(v[0], 32, smp[s].mean),
					       fmt_val(v[1], 32, smp[s].median));
				else
					printf(" %4d %12s %12s", 0, "-", "-");
			if (p.n && c.rel)
				snprintf(v[2], 32, "%+.1f%%", c.pct);
			else if (p.n)
				ab_fmt_signed(v[2], 32, c.diff);
			else
				snprintf(v[2], 32, "-");
			if (c.outcome == AB_TOO_FEW)
				snprintf(v[3], 32, "-");
			else if (c.constant)
				snprintf(v[3], 32, "(constant)");
			else if (c.rel)
				snprintf(v[3], 32, "[%+.1f%%, %+.1f%%]", c.pct_lo,
					 c.pct_hi);
			else
				snprintf(v[3], 32, "[%s, %s]",
					 ab_fmt_signed(v[0], 32, c.lo),
					 ab_fmt_signed(v[1], 32, c.hi));
			if (!p.n)
				snprintf(v[4], 64, "-");
			else if (!p.med_cov)
				snprintf(v[4], 64, p.log_scale ? "%+.1f%%" : "%+g",
					 p.med);
			else if (p.log_scale)
				snprintf(v[4], 64, "%+.1f%% [%+.1f%%, %+.1f%%]", p.med,
					 p.med_lo, p.med_hi);
			else
				snprintf(v[4], 64, "%+g [%+g, %+g]", p.med, p.med_lo,
					 p.med_hi);
			printf(" %5d %9s  %-20s %s\n", p.n, v[2], v[3], v[4]);
		}
	/* runs without a value */
	for (k = 0; k < r->nm; k++) {
		int n[2];

		for (s = 0; s < 2; s++)
			n[s] = side_values(r, k, s, x[s], &runs[s]);
		if (n[0] == runs[0] && n[1] == runs[1])
			continue;
		if (k == M_T90)
			printf("%s: 90%% coverage never reached in %d of %d runs "
			       "of A and %d of %d of B (left out)\n",
			       r->m[k].name, runs[0] - n[0], runs[0],
			       runs[1] - n[1], runs[1]);
		else
			printf("%s: no value from %d of %d runs of A and %d of %d "
			       "of B (left out)\n", r->m[k].name, runs[0] - n[0],
			       runs[0], runs[1] - n[1], runs[1]);
	}
	printf("\nverdicts:\n");
	for (o = 0; o < 3; o++)
		for (k = 0; k < r->nm; k++) {
			enum ab_dir dir;
			enum ab_verdict vd;

			if (r->m[k].kind != order[o])
				continue;
			compare_metric(r, k, x, runs, smp, &c, &p);
			dir = k < NR_BUILTIN ? builtin[k].dir : r->m[k].dir;
			if (r->primary && !strcmp(r->primary, r->m[k].name))
				primary = k;
			vd = ab_verdict(line, sizeof(line), r->m[k].name, dir,
					&smp[0], &smp[1], &c);
			printf("  %s\n", line);
			counts[vd]++;
			list_add(lists[vd], sizeof(lists[vd]), r->m[k].name);
			nmetrics++;
		}
	/*
	 * Many verdicts at 95% each: about one in twenty metrics that do not
	 * differ will seem to. The decision is the primary metric's, named
	 * before the runs; the rest are what to look at next.
	 */
	if (r->primary && primary < 0) {
		printf("primary metric %s: no such metric in these runs (see the "
		       "table above)\n", r->primary);
	} else if (r->primary) {
		compare_metric(r, primary, x, runs, smp, &c, &p);
		ab_verdict(line, sizeof(line), r->m[primary].name, primary < NR_BUILTIN ?
			   builtin[primary].dir : r->m[primary].dir, &smp[0], &smp[1], &c);
		printf("decision (primary metric, named before the runs): %s\n"
		       "the other %d verdicts are secondary: each at 95%%, not "
		       "corrected for their number\n", line, nmetrics - 1);
	} else {
		printf("note: %d verdicts, each at 95%%: among metrics that do not "
		       "differ, about one in twenty will seem to; name the one that "
		       "decides with --primary METRIC\n", nmetrics);
	}
	printf("summary: B (%s) against A (%s), %d and %d runs:", r->objname[1],
	       r->objname[0], runs[1], runs[0]);
	for (o = 0, k = 0; k < AB_V_COUNT; k++)
		if (counts[k])
			printf("%s %s on %d (%s)", o++ ? ";" : "",
			       ab_verdict_word[k], counts[k], lists[k]);
	printf(" [%d metrics]%s\n", nmetrics, nfailed ?
	       "; some runs failed: the comparison is not valid" : "");
out:
	free(x[0]);
	free(x[1]);
	return r->primary && primary < 0;
}

static void csv_cell(FILE *f, bool has, double v)
{
	if (!has)
		fputc(',', f);
	else if (v == (double)(long long)v && v < 1e15 && v > -1e15)
		fprintf(f, ",%lld", (long long)v);
	else
		fprintf(f, ",%.9g", v);
}

static void write_csv(const struct reps *r, FILE *f)
{
	int i, k, o;

	fprintf(f, "rep,side,policy");
	for (o = 0; o < 3; o++)
		for (k = 0; k < r->nm; k++)
			if (r->m[k].kind == order[o])
				fprintf(f, ",%s", k < NR_BUILTIN ? builtin[k].csv :
					r->m[k].name);
	fputc('\n', f);
	for (i = 0; i < 2 * r->n; i++) {
		const struct run *run = &r->runs[i];

		if (!run->done)
			continue;
		fprintf(f, "%d,%c,%s", run->rep, 'A' + run->side,
			r->objname[run->side]);
		for (o = 0; o < 3; o++)
			for (k = 0; k < r->nm; k++)
				if (r->m[k].kind == order[o])
					csv_cell(f, run->has[k], run->val[k]);
		fputc('\n', f);
	}
}

int ab_reps(const char *base, const char *files[2], int n,
		   double duration, FILE *csv, char **cmd, const char *primary)
{
	struct reps r = { .n = n, .duration = duration, .cmd = cmd, .base = base,
			  .primary = primary };
	int i, k, err = 0, nfailed = 0, count[2] = {};
	struct policy_obj po;
	char buf[64];

	r.runs = calloc(2 * n, sizeof(*r.runs));
	if (!r.runs)
		return fail("out of memory");
	for (i = 0; i < 2; i++) {
		r.file[i] = files[i];
		/* load once to check the object and learn its name */
		if (policy_open_load(&po, files[i], cgroup_path_id(base), NULL, NULL)) {
			free(r.runs);
			return 1;
		}
		snprintf(r.objname[i], sizeof(r.objname[i]), "%s", po.name);
		policy_close(&po);
	}
	for (k = 0; k < NR_BUILTIN; k++)
		metric_index(&r, builtin[k].name, MK_BUILTIN);
	for (k = 0; k < NR_COUNTERS; k++)
		metric_index(&r, counter_names[k], MK_COUNTER);
	for (i = 0; i < 2 * n; i++) {
		struct run *run = &r.runs[i];

		run->index = i + 1;
		run->side = side_of_run(i);
		run->rep = ++count[run->side];
		snprintf(run->tag, sizeof(run->tag), "%c%d", 'A' + run->side,
			 run->rep);
	}

	printf("A: %s ('%s')\nB: %s ('%s')\n", files[0], r.objname[0], files[1],
	       r.objname[1]);
	printf("%d runs a side, one at a time, in the order", n);
	for (i = 0; i < 2 * n && i < 16; i++)
		printf(" %c", 'A' + r.runs[i].side);
	printf("%s; each in a fresh cgroup under %s with its policy attached, "
	       "for at most %g s\ncommand:", 2 * n > 16 ? " ..." : "", base,
	       duration);
	for (i = 0; cmd[i]; i++)
		printf(" %s", cmd[i]);
	printf("\n\n");
	fflush(stdout);

	for (i = 0; i < 2 * n && !ab_interrupted; i++) {
		struct run *run = &r.runs[i];

		err = one_run(&r, run);
		if (err)
			break;
		print_run_result(&r, run);
		if (run->done && !run->stopped && ab_status_failed(run->status))
			nfailed++;
	}
	if (ab_interrupted)
		printf("\ninterrupted\n");
	if (report(&r, nfailed))
		err = 1;
	if (csv)
		write_csv(&r, csv);
	for (i = 0; i < 2 * n; i++) {
		const struct run *run = &r.runs[i];

		if (run->done && !run->stopped && ab_status_failed(run->status))
			fprintf(stderr, "collapsectl: run %d/%d (%s, %s) failed: "
				"%s; the comparison is not valid\n", run->index,
				2 * n, run->tag, r.objname[run->side],
				ab_status_str(run->status, buf, sizeof(buf)));
	}
	free(r.runs);
	if (ab_interrupted)
		return 130;
	return err || nfailed ? 1 : 0;
}
