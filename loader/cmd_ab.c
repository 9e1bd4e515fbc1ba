// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl ab: two policies on two sibling cgroups, the same workload in
 * each at the same time, and a side-by-side table of what happened.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collapsectl.h"

static const char ab_usage[] =
"Usage: collapsectl ab A.bpf.o B.bpf.o [--duration S] [--csv FILE] -- COMMAND [ARG...]\n"
"\n"
"Create two sibling cgroups, attach policy A to one and B to the other, run\n"
"COMMAND once in each at the same time, and print every second the huge\n"
"page coverage (memory.stat anon_thp) of both, then both policies' counters\n"
"side by side with the difference. On exit, on failure and on Ctrl-C every\n"
"process of both runs is killed (cgroup.kill), the cgroups are removed and\n"
"the policies detached.\n"
"\n"
"Exit status: 0; 1 when a run ended on its own with a non-zero status or a\n"
"signal (runs still going at the end of the duration are stopped, which is\n"
"not a failure); 130 when interrupted.\n"
"\n"
"  --duration S   stop the runs after S seconds (default 30)\n"
"  --csv FILE     also write a header line and then one line per second:\n"
"                 seconds,anon_thp_kb_A,anon_thp_kb_B,memory_kb_A,memory_kb_B\n";

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = 1;
}

struct side {
	const char *file;
	char cg[320];
	uint64_t cgid;
	struct policy_obj po;
	struct bpf_link *link;
	pid_t pid;
	int status;
	bool done;
	bool stopped;		/* still running at the end: we ended it */
};

/* A memory.stat field of cgroup directory @cg in kB, or -1. */
static long memstat_kb(const char *cg, const char *key)
{
	long long v = cgroup_memstat(cg, key);

	return v < 0 ? -1 : v / 1024;
}

static pid_t start_run(struct side *s, char **cmd)
{
	char procs[340];
	pid_t pid = fork();

	if (pid)
		return pid;
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", s->cg);
	if (write_file(procs, "0")) {
		fprintf(stderr, "collapsectl: cannot enter %s\n", s->cg);
		_exit(126);
	}
	execvp(cmd[0], cmd);
	fprintf(stderr, "collapsectl: %s: %s\n", cmd[0], strerror(errno));
	_exit(127);
}

static void reap(struct side *s, bool wait)
{
	if (s->pid <= 0 || s->done)
		return;
	if (waitpid(s->pid, &s->status, wait ? 0 : WNOHANG) == s->pid)
		s->done = true;
}

/*
 * End a run and everything it started: cgroup.kill (5.14+) reaches the
 * whole process tree, even children that left the run's process group.
 */
static void stop_run(struct side *s)
{
	if (s->pid <= 0 || s->done)
		return;
	s->stopped = true;
	if (cgroup_kill_wait(s->cg))
		kill(s->pid, SIGKILL);
	reap(s, true);
}

/* Did the run end on its own with a failure? */
static bool run_failed(const struct side *s)
{
	if (!s->done || s->stopped)
		return false;
	return !WIFEXITED(s->status) || WEXITSTATUS(s->status);
}

int cmd_ab(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "csv", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct side side[2] = {};
	char base[256], ctl[300], name[32];
	const char *csv_path = NULL;
	double duration = 30, t;
	struct timespec t0, now;
	FILE *csv = NULL;
	int c, i, cmd, err = 1;

	/* Options and the two objects come before "--", COMMAND after. */
	for (cmd = 1; cmd < argc && strcmp(argv[cmd], "--"); cmd++)
		;
	while ((c = getopt_long(cmd, argv, "d:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			duration = strtod(optarg, NULL);
			if (duration <= 0)
				return fail("--duration needs a positive number");
			break;
		case 'c': csv_path = optarg; break;
		case 'h': fputs(ab_usage, stdout); return 0;
		default: fputs(ab_usage, stderr); return 2;
		}
	}
	if (cmd - optind != 2 || cmd >= argc - 1) {
		fputs(ab_usage, stderr);
		return 2;
	}
	side[0].file = argv[optind];
	side[1].file = argv[optind + 1];
	optind = cmd + 1;
	if (!require_root() || !kernel_supported())
		return 1;
	for (i = 0; i < 2; i++)
		if (access(side[i].file, R_OK))
			return fail("%s: %s", side[i].file, strerror(errno));
	if (csv_path && !(csv = fopen(csv_path, "w")))
		return fail("%s: %s", csv_path, strerror(errno));
	if (csv)
		fprintf(csv, "seconds,anon_thp_kb_A,anon_thp_kb_B,memory_kb_A,memory_kb_B\n");

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	snprintf(base, sizeof(base), CGROUP_ROOT "/collapsectl-ab.%d", getpid());
	if (mkdir(base, 0755)) {
		fail("cannot create %s: %s", base, strerror(errno));
		goto out_csv;
	}
	snprintf(ctl, sizeof(ctl), "%s/cgroup.subtree_control", base);
	if (write_file(ctl, "+memory"))
		fprintf(stderr, "collapsectl: no memory controller in %s: "
			"coverage will read -1\n", base);
	for (i = 0; i < 2; i++) {
		snprintf(side[i].cg, sizeof(side[i].cg), "%s/%c", base, 'a' + i);
		if (mkdir(side[i].cg, 0755)) {
			fail("cannot create %s: %s", side[i].cg, strerror(errno));
			goto out;
		}
		side[i].cgid = cgroup_path_id(side[i].cg);
		if (!side[i].cgid)
			goto out;
		/* both objects may carry the same name: make them distinct */
		if (policy_open_load(&side[i].po, side[i].file, side[i].cgid, NULL))
			goto out;
		snprintf(name, sizeof(name), "%c_%.28s", 'A' + i, side[i].po.name);
		policy_close(&side[i].po);
		if (policy_open_load(&side[i].po, side[i].file, side[i].cgid, name))
			goto out;
		side[i].link = policy_attach(&side[i].po, side[i].cgid);
		if (!side[i].link)
			goto out;
	}
	printf("A: %s as '%s' on %s\nB: %s as '%s' on %s\n", side[0].file,
	       side[0].po.name, side[0].cg, side[1].file, side[1].po.name,
	       side[1].cg);
	printf("running in both: ");
	for (i = optind; i < argc; i++)
		printf("%s ", argv[i]);
	printf("\n\n%8s %16s %16s %16s %14s %14s\n", "seconds", "A anon_thp kB",
	       "B anon_thp kB", "B - A", "A memory kB", "B memory kB");
	fflush(stdout);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 2; i++)
		side[i].pid = start_run(&side[i], argv + optind);
	for (t = 0; !interrupted && t < duration;) {
		long a, b, ma, mb;

		usleep(1000000);
		clock_gettime(CLOCK_MONOTONIC, &now);
		t = now.tv_sec - t0.tv_sec + (now.tv_nsec - t0.tv_nsec) / 1e9;
		a = memstat_kb(side[0].cg, "anon_thp");
		b = memstat_kb(side[1].cg, "anon_thp");
		ma = memstat_kb(side[0].cg, "anon");
		mb = memstat_kb(side[1].cg, "anon");
		printf("%8.0f %16ld %16ld %+16ld %14ld %14ld\n", t, a, b, b - a,
		       ma, mb);
		fflush(stdout);
		if (csv)
			fprintf(csv, "%.1f,%ld,%ld,%ld,%ld\n", t, a, b, ma, mb);
		reap(&side[0], false);
		reap(&side[1], false);
		if (side[0].done && side[1].done)
			break;
	}
	for (i = 0; i < 2; i++)
		stop_run(&side[i]);
	if (interrupted)
		printf("\ninterrupted\n");
	printf("\ncounters (A = %s, B = %s):\n", side[0].po.name, side[1].po.name);
	print_stats_table(stdout, side[0].po.name, side[1].po.name);
	err = interrupted ? 130 : 0;
	for (i = 0; i < 2; i++) {
		const struct side *r = &side[i];

		if (r->stopped)
			printf("run %c: stopped after %.0f s\n", 'A' + i, t);
		else if (WIFEXITED(r->status))
			printf("run %c: exit status %d\n", 'A' + i,
			       WEXITSTATUS(r->status));
		else
			printf("run %c: killed by signal %d\n", 'A' + i,
			       WTERMSIG(r->status));
		if (run_failed(r) && !err) {
			fprintf(stderr, "collapsectl: run %c failed: the comparison "
				"is not valid\n", 'A' + i);
			err = 1;
		}
	}
out:
	for (i = 0; i < 2; i++) {
		stop_run(&side[i]);
		bpf_link__destroy(side[i].link);
		policy_close(&side[i].po);
		if (side[i].cg[0])
			rmdir(side[i].cg);
	}
	if (rmdir(base) && errno != ENOENT)
		fprintf(stderr, "collapsectl: could not remove %s: %s\n", base,
			strerror(errno));
out_csv:
	if (csv)
		fclose(csv);
	return err;
}
