// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl ab: two policies, the same workload under each, and what
 * happened. Without --reps (here), two sibling cgroups and one run in each
 * at the same time with a live table; with --reps N (ab_reps.c), N runs
 * under each policy, one at a time in alternating order, each in a fresh
 * cgroup, and per metric B against A pair by pair, on the log scale,
 * with a 95% interval and a verdict (the statistics are in ab_stats.c).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sched.h>	/* struct clone_args, CLONE_INTO_CGROUP */

#include "ab.h"
#include "collapsectl.h"

static const char ab_usage[] =
"Usage: collapsectl ab A.bpf.o B.bpf.o [--duration S] [--csv FILE]\n"
"                      [--reps N [--primary METRIC]] -- COMMAND [ARG...]\n"
"\n"
"Without --reps: create two sibling cgroups, attach policy A to one and B to\n"
"the other, run COMMAND once in each at the same time, and print every second\n"
"the huge page coverage (memory.stat anon_thp) of both, then both policies'\n"
"counters side by side with the difference.\n"
"\n"
"With --reps N: run COMMAND N times under each policy, one run at a time in\n"
"the order A B B A A B B A ..., each in a fresh cgroup (under\n"
"/sys/fs/cgroup/collapsectl-ab.PID) with its policy attached for that run\n"
"only. COMMAND's stdout is passed through, each line prefixed with the run\n"
"(\"[A1] \", \"[B1] \", ...). Each run gives: wall_s (start to exit);\n"
"time_to_90pct_s, until coverage (memory.stat anon_thp / anon, sampled every\n"
"100 ms, with at least 2 MiB anon) reached 0.9 (a run that never did is left\n"
"out of it, and counted); final_coverage, the last sample taken while the\n"
"run was alive (at least 2 MiB anon, none of its processes exiting, and\n"
"one left at all);\n"
"peak_bytes (memory.peak); the policy's counters collapse_succeeded,\n"
"collapse_failed, pages_collapsed, failed_* and underused_*; and every line\n"
"COMMAND\n"
"prints as\n"
"  METRIC NAME VALUE [higher|lower]\n"
"(NAME of [A-Za-z0-9_.-]; the word, if any, says which direction is better).\n"
"Then per metric n, mean and median of each side, and B against A pair by\n"
"pair (runs 1-2, 3-4, ...: an A and a B back to back, A first and B first in\n"
"turn, so drift falls on both alike): the geometric mean of the pairs' B/A\n"
"in %, with its 95% t interval on the log scale (3 pairs at least; where a\n"
"value is 0 or negative, the mean difference B - A instead), and the median\n"
"of the pairs' B/A with its distribution-free 95% interval (6 pairs at\n"
"least); a verdict (\"B better/worse on NAME\"; \"B higher/lower on NAME\"\n"
"when the direction is not known: time, peak memory lower, coverage higher\n"
"is better; \"NAME: no difference\" when the interval includes 0), and a\n"
"summary line. Every verdict is at 95%: among many metrics that do not\n"
"differ, about one in twenty seems to.\n"
"  --primary METRIC  the metric that decides, named before the runs: its\n"
"                    verdict is the decision, the others are secondary (an\n"
"                    unknown METRIC is an error, exit 1, once the runs say\n"
"                    which metrics there are)\n"
"\n"
"Each run's processes are born in its cgroup (clone3 CLONE_INTO_CGROUP).\n"
"A collapsectl-ab.PID cgroup left by an ab that was killed (SIGKILL) is\n"
"emptied and removed by the next ab. The output starts with the host's\n"
"kernel, CPUs and load.\n"
"\n"
"On exit, on failure and on Ctrl-C every process of a run is killed\n"
"(cgroup.kill), the cgroups are removed and the policies detached.\n"
"\n"
"Exit status: 0; 1 when a run ended on its own with a non-zero status or a\n"
"signal (each such run is named; runs still going at the end of the\n"
"duration are stopped, which is not a failure), or on an error; 2 on a\n"
"usage error; 130 when interrupted.\n"
"\n"
"  --duration S   stop the runs after S seconds (default 30; or S with a\n"
"                 unit: ms, s, m, h); with --reps,\n"
"                 each run: its metrics are then those of the stopped run\n"
"  --csv FILE     also write a header line and then, without --reps, one\n"
"                 line per second:\n"
"                 seconds,anon_thp_kb_A,anon_thp_kb_B,memory_kb_A,memory_kb_B\n"
"                 with --reps, one line per run, in the order they ran:\n"
"                 rep,side,policy,wall_s,time_to_90_s,final_coverage,\n"
"                 peak_bytes,COUNTER...,METRIC... (empty: no value)\n"
"  --reps N       N runs under each policy, one at a time (N >= 1; fewer\n"
"                 than 3 give means and medians but no interval)\n";

volatile sig_atomic_t ab_interrupted;

static void on_signal(int sig)
{
	ab_interrupted = 1;
}

double ab_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * The child is born in @cg (clone3() with CLONE_INTO_CGROUP, Linux 5.7):
 * none of its memory is ever charged elsewhere, no fault of it happens
 * under another cgroup's policy. Where clone3 cannot, fork() and the child
 * moves itself before it execs. A raw clone3 runs no atfork handlers: fine
 * while collapsectl has one thread and the child only dup2()s, writes and
 * execs, which is all it does.
 */
static pid_t fork_into(const char *cg, bool *moved)
{
	int cgfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP,
		.exit_signal = SIGCHLD,
		.cgroup = cgfd,
	};
	pid_t pid = -1;

	*moved = false;
	if (cgfd >= 0) {
		pid = syscall(SYS_clone3, &args, sizeof(args));
		close(cgfd);
		if (pid >= 0) {
			*moved = true;
			return pid;
		}
	}
	return fork();
}

pid_t ab_start_in(const char *cg, char **cmd, int out_fd)
{
	char procs[PATH_MAX];
	bool moved;
	pid_t pid = fork_into(cg, &moved);

	if (pid)
		return pid;
	if (out_fd >= 0 && dup2(out_fd, 1) < 0)
		_exit(126);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg);
	if (!moved && write_file(procs, "0")) {
		fprintf(stderr, "collapsectl: cannot enter %s\n", cg);
		_exit(126);
	}
	execvp(cmd[0], cmd);
	fprintf(stderr, "collapsectl: %s: %s\n", cmd[0], strerror(errno));
	_exit(127);
}

/*
 * What an earlier ab left when it was killed (SIGKILL gives it no chance
 * to clean up): a collapsectl-ab.* cgroup nobody holds. A running ab holds
 * flock() on its own directory for its whole life (base_lock()), which a
 * SIGKILL releases; a PID would not do (another PID namespace, PID reuse).
 * Each cgroup below it is emptied (cgroup.kill) and removed, then itself;
 * its policies went with their cgroups.
 */
static void sweep_one(const char *dir)
{
	char sub[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		sweep_one(sub);
	}
	if (d)
		closedir(d);
	cgroup_kill_wait(dir);
	rmdir(dir);
}

#define FRESH_S	10	/* a directory this new may not be locked yet */

static void sweep_stale(void)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(CGROUP_ROOT);
	struct stat st;
	int fd;

	while (d && (de = readdir(d))) {
		if (strncmp(de->d_name, "collapsectl-ab.", 15))
			continue;
		snprintf(path, sizeof(path), CGROUP_ROOT "/%s", de->d_name);
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* held: an ab running; brand new: one about to lock it */
		if (flock(fd, LOCK_EX | LOCK_NB) || fstat(fd, &st) ||
		    st.st_mtime > time(NULL) - FRESH_S) {
			close(fd);
			continue;
		}
		fprintf(stderr, "collapsectl: removing %s, left by an ab that was "
			"killed (its processes killed too)\n", path);
		sweep_one(path);
		close(fd);
		if (!access(path, F_OK))
			fprintf(stderr, "collapsectl: could not remove %s (its "
				"processes or cgroups remain: see cgroup.procs)\n", path);
	}
	if (d)
		closedir(d);
}

/* Hold @base's lock until exit: this ab is alive (sweep_stale()). */
static void base_lock(const char *base)
{
	int fd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB))
		fprintf(stderr, "collapsectl: cannot lock %s (%s): another ab may "
			"take it for a killed one's\n", base, strerror(errno));
	/* the fd stays open: the lock goes with this process */
}

/* Where the numbers come from: a result is only comparable on a like host */
static void host_context(void)
{
	char rel[128] = "?", load[64] = "?";
	FILE *f = fopen("/proc/sys/kernel/osrelease", "r");

	if (f) {
		if (!fgets(rel, sizeof(rel), f))
			strcpy(rel, "?");
		fclose(f);
	}
	f = fopen("/proc/loadavg", "r");
	if (f) {
		if (!fgets(load, sizeof(load), f))
			strcpy(load, "?");
		fclose(f);
	}
	rel[strcspn(rel, "\n")] = 0;
	load[strcspn(load, "\n")] = 0;
	printf("host: kernel %s, %ld CPUs online, load average %s\n", rel,
	       sysconf(_SC_NPROCESSORS_ONLN), load);
}

/* "exit status 3", "killed by signal 9" */
const char *ab_status_str(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
	else
		snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
	return buf;
}

bool ab_status_failed(int status)
{
	return !WIFEXITED(status) || WEXITSTATUS(status);
}

/* ---- without --reps: both runs at once ----------------------------------- */

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
	return ab_status_failed(s->status);
}

static int ab_together(const char *base, const char *files[2], double duration,
		       FILE *csv, char **cmd)
{
	struct side side[2] = {};
	char name[32], buf[64];
	struct timespec t0, now;
	double t = 0;
	int i, err = 1;

	if (csv)
		fprintf(csv, "seconds,anon_thp_kb_A,anon_thp_kb_B,memory_kb_A,memory_kb_B\n");
	for (i = 0; i < 2; i++) {
		side[i].file = files[i];
		snprintf(side[i].cg, sizeof(side[i].cg), "%s/%c", base, 'a' + i);
		if (mkdir(side[i].cg, 0755)) {
			fail("cannot create %s: %s", side[i].cg, strerror(errno));
			side[i].cg[0] = 0;
			goto out;
		}
		side[i].cgid = cgroup_path_id(side[i].cg);
		if (!side[i].cgid)
			goto out;
		/* both objects may carry the same name: make them distinct */
		if (policy_open_load(&side[i].po, side[i].file, side[i].cgid, NULL, NULL))
			goto out;
		snprintf(name, sizeof(name), "%c_%.28s", 'A' + i, side[i].po.name);
		policy_close(&side[i].po);
		if (policy_open_load(&side[i].po, side[i].file, side[i].cgid, name, NULL))
			goto out;
		side[i].link = policy_attach(&side[i].po, side[i].cg, side[i].cgid);
		if (!side[i].link)
			goto out;
	}
	printf("A: %s as '%s' on %s\nB: %s as '%s' on %s\n", side[0].file,
	       side[0].po.name, side[0].cg, side[1].file, side[1].po.name,
	       side[1].cg);
	printf("running in both: ");
	for (i = 0; cmd[i]; i++)
		printf("%s ", cmd[i]);
	printf("\n\n%8s %16s %16s %16s %14s %14s\n", "seconds", "A anon_thp kB",
	       "B anon_thp kB", "B - A", "A memory kB", "B memory kB");
	fflush(stdout);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < 2; i++)
		side[i].pid = ab_start_in(side[i].cg, cmd, -1);
	while (!ab_interrupted && t < duration) {
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
	if (ab_interrupted)
		printf("\ninterrupted\n");
	printf("\ncounters (A = %s, B = %s):\n", side[0].po.name, side[1].po.name);
	print_stats_table(stdout, side[0].po.name, side[1].po.name);
	err = ab_interrupted ? 130 : 0;
	for (i = 0; i < 2; i++) {
		const struct side *r = &side[i];

		if (r->stopped)
			printf("run %c: stopped after %.0f s\n", 'A' + i, t);
		else
			printf("run %c: %s\n", 'A' + i,
			       ab_status_str(r->status, buf, sizeof(buf)));
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
	return err;
}

/* ---- the command ------------------------------------------------------------ */

int cmd_ab(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "duration", required_argument, NULL, 'd' },
		{ "csv", required_argument, NULL, 'c' },
		{ "reps", required_argument, NULL, 'r' },
		{ "primary", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	const char *csv_path = NULL, *files[2], *primary = NULL;
	char base[256], ctl[300], *end;
	double duration = 30;
	FILE *csv = NULL;
	int c, i, cmd, err = 1;
	long reps = 0;

	/* Options and the two objects come before "--", COMMAND after. */
	for (cmd = 1; cmd < argc && strcmp(argv[cmd], "--"); cmd++)
		;
	while ((c = getopt_long(cmd, argv, "d:c:r:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (parse_seconds(optarg, &duration)) {
				fail("--duration needs a positive time, e.g. 30, "
				     "90s, 1.5m or 500ms (got '%s')", optarg);
				return 2;
			}
			break;
		case 'c': csv_path = optarg; break;
		case 'r':
			errno = 0;
			reps = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || reps < 1 ||
			    reps > MAX_REPS) {
				fail("--reps needs a whole number of runs a side, "
				     "1 to %d (got '%s')", MAX_REPS, optarg);
				return 2;
			}
			break;
		case 'p': primary = optarg; break;
		case 'h': fputs(ab_usage, stdout); return 0;
		default: fputs(ab_usage, stderr); return 2;
		}
	}
	if (primary && !reps) {
		fail("--primary names the metric that decides between --reps runs: "
		     "give --reps N too");
		return 2;
	}
	if (cmd - optind != 2 || cmd >= argc - 1) {
		fputs(ab_usage, stderr);
		return 2;
	}
	files[0] = argv[optind];
	files[1] = argv[optind + 1];
	if (!require_admin() || !kernel_supported())
		return 1;
	for (i = 0; i < 2; i++)
		if (access(files[i], R_OK))
			return fail("%s: %s", files[i], strerror(errno));
	if (csv_path && !(csv = fopen(csv_path, "w")))
		return fail("%s: %s", csv_path, strerror(errno));

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	sweep_stale();
	host_context();
	snprintf(base, sizeof(base), CGROUP_ROOT "/collapsectl-ab.%d", getpid());
	if (mkdir(base, 0755)) {
		fail("cannot create %s: %s", base, strerror(errno));
		goto out_csv;
	}
	base_lock(base);
	snprintf(ctl, sizeof(ctl), "%s/cgroup.subtree_control", base);
	if (write_file(ctl, "+memory"))
		fprintf(stderr, "collapsectl: no memory controller in %s: "
			"coverage will read -1\n", base);
	if (reps)
		err = ab_reps(base, files, reps, duration, csv, argv + cmd + 1,
			      primary);
	else
		err = ab_together(base, files, duration, csv, argv + cmd + 1);
	if (rmdir(base) && errno != ENOENT)
		fprintf(stderr, "collapsectl: could not remove %s: %s\n", base,
			strerror(errno));
out_csv:
	if (csv && fclose(csv) && !err) {
		fail("%s: %s", csv_path, strerror(errno));
		err = 1;
	}
	return err;
}
