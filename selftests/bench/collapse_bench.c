// SPDX-License-Identifier: GPL-2.0
/*
 * collapse_bench: the in-guest half of `make bench`. Each subcommand
 * measures one thing and prints one "BENCH {json}" line per sample (one
 * repetition of one case) for the host: selftests/bench/report.py turns
 * them into medians with 95% confidence intervals. The cases of a
 * benchmark are interleaved, in a new random order every repetition, after
 * a warm-up that is not reported. A sample whose collapse failed says so
 * ("ok": 0) and is left out of the timings.
 *
 *   collapse_bench hooks [--mb N] [--reps N]   MADV_COLLAPSE time per GiB:
 *       no policy at the root and 3 cgroup levels down (memcg on at each),
 *       passthrough at the root, 3 levels up, on an unrelated leaf
 *   collapse_bench scale [--mb N] [--reps N]   MADV_COLLAPSE time per GiB
 *       1, 4 and 8 cgroups down, without a policy and with passthrough
 *       at the root; beside 1, 100 and 1000 sibling cgroups with policies
 *   collapse_bench batch [--mb N] [--reps N]   batch sizes 1, 8, 64, each
 *       yielding the mmap lock to waiters and not: time per GiB, and the
 *       latency of a writer (mmap+touch) and a reader (fault) beside it
 *   collapse_bench batch-remote [--mb N] [--reps N]   batch sizes 1, 8 and
 *       64 for a remote agent: one process_madvise() over a live target's
 *       64 vmas; the agent's time per GiB, the target's reads meanwhile
 *   collapse_bench khugepaged [--mb N] [--reps N]   time to 90% coverage:
 *       default, pace (8x passes at the root), pages_to_scan x8
 *   collapse_bench khugepaged-stalls [--mb N] [--reps N]   the writer's
 *       and reader's stalls while khugepaged collapses their memory, and
 *       while it leaves it alone
 *   collapse_bench khugepaged-cgroups [--reps N]   scan_budget: a 64 MiB
 *       critical process behind a 1 GiB batch one, with and without
 *       priority; khugepaged's scanning of huge memory, with and without
 *       skip_huge
 *   collapse_bench memcpy [--mb N] [--reps N]  2 MiB memcpy bandwidth vs
 *       collapse throughput
 *   collapse_bench orders [--mb N] [--reps N]   memory by order (7.3): what
 *       khugepaged makes of dense and sparse memory with only PMDs
 *       allowed, only 64 KiB, and both under mthp_frugal near memory.high
 *   collapse_bench split [--mb N] [--reps N]   underused huge pages given
 *       back: eager, frugal and elastic under a memory.high between
 *       frugal's footprint and eager's, eager and elastic without it
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "run_cmd.h"
#include "ops_data.h"
#include "bench_batch.skel.h"

#define BPF "/usr/share/collapse_ext/bpf/"
#define COLLAPSE_EXT_OPS_NO_YIELD	1

static char out[1 << 14];
static unsigned long mb = 256;
static int reps = 7;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Shuffle @n ints (Fisher-Yates): the order of the cases in a repetition. */
static void shuffle(int *v, int n)
{
	for (int i = n - 1; i > 0; i--) {
		int j = rand() % (i + 1), t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

/* Seconds for one MADV_COLLAPSE over @mib freshly faulted MiB; *ok: it worked. */
static double collapse_once(unsigned long mib, bool *ok)
{
	struct region r;
	double t;

	*ok = false;
	if (region_map(&r, mib / 2))
		return -1;
	region_fill(&r, NULL);
	t = now();
	*ok = !madvise(r.p, r.len, MADV_COLLAPSE);
	t = now() - t;
	if (!*ok)
		fprintf(stderr, "collapse_bench: MADV_COLLAPSE: %s\n", strerror(errno));
	region_unmap(&r);
	return t;
}

/* One timed collapse in a child (in a cgroup), result through shared memory */
struct shared_result {
	double s_per_gib;
	bool ok;
};
static struct shared_result *shared_result;

static int timed_in_cgroup(void *arg)
{
	bool ok;

	shared_result->s_per_gib = collapse_once(mb, &ok) * 1024 / mb;
	shared_result->ok = ok;
	return 0;
}

static bool timed(const char *cg, double *s_per_gib)
{
	if (!shared_result) {
		shared_result = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (shared_result == MAP_FAILED) {
			shared_result = NULL;
			return false;
		}
	}
	shared_result->ok = false;
	if (run_in_cgroup(cg, timed_in_cgroup, NULL))
		return false;
	*s_per_gib = shared_result->s_per_gib;
	return shared_result->ok;
}

static long hook_calls(const char *policy)
{
	return policy_stat(policy, "calls_pte_limits") +
	       policy_stat(policy, "calls_target_node") +
	       policy_stat(policy, "calls_batch_size");
}

/*
 * The cases: where the workload runs, and where passthrough is attached
 * (NULL: no policy). "none_nested" is the control for "passthrough_nested":
 * the same three memcg levels to charge, no policy to find.
 */
static const struct hook_case {
	const char *name, *workload_cg, *policy_cg;
	bool needs_patch;
} hook_cases[] = {
	{ "none", "", NULL, false },
	{ "none_nested", "b1/b2/b3", NULL, false },
	{ "passthrough_root", "", CGROOT, true },
	{ "passthrough_nested", "b1/b2/b3", CGROOT "b1", true },
	{ "unrelated_leaf_policy", "", CGROOT "bleaf", true },
};
#define NR_HOOK_CASES	((int)(sizeof(hook_cases) / sizeof(hook_cases[0])))

static int hook_sample(const struct hook_case *c, int rep)
{
	long calls = 0, ranges = 0;
	double t = 0;
	bool ok;

	if (c->policy_cg && run_cmd(out, sizeof(out), "collapsectl load " BPF
				    "passthrough.bpf.o --cgroup %s", c->policy_cg))
		return fprintf(stderr, "%s", out), 1;
	ok = timed(c->workload_cg, &t);
	if (c->policy_cg) {
		calls = hook_calls("passthrough");
		ranges = policy_stat("passthrough", "ranges_scanned");
		run_cmd(out, sizeof(out), "collapsectl unload passthrough");
	}
	printf("BENCH {\"bench\": \"hooks\", \"case\": \"%s\", \"rep\": %d, "
	       "\"mib\": %lu, \"ok\": %d, \"s_per_gib\": %.5f, "
	       "\"hook_calls\": %ld, \"ranges\": %ld}\n",
	       c->name, rep, mb, ok, t, calls, ranges);
	return 0;
}

/*
 * Every case once per repetition, in a new random order each time, so that
 * drift of the host (other load, TCG warm-up) hits them alike.
 */
static int hooks(void)
{
	bool patched = kernel_has_hook("pte_limits");
	int order[NR_HOOK_CASES], r, i, n = 0;
	double t;

	/* memcg on at every level: the nested cases charge three levels */
	write_str(CGROOT "cgroup.subtree_control", "+memory");
	cg_create("b1", NULL);
	write_str(CGROOT "b1/cgroup.subtree_control", "+memory");
	cg_create("b1/b2", NULL);
	write_str(CGROOT "b1/b2/cgroup.subtree_control", "+memory");
	cg_create("b1/b2/b3", NULL);
	cg_create("bleaf", NULL);
	for (i = 0; i < NR_HOOK_CASES; i++)
		if (patched || !hook_cases[i].needs_patch)
			order[n++] = i;
	for (i = 0; i < n; i++)		/* warm up, not reported */
		timed(hook_cases[order[i]].workload_cg, &t);
	for (r = 0; r < reps; r++) {
		shuffle(order, n);
		for (i = 0; i < n; i++)
			if (hook_sample(&hook_cases[order[i]], r))
				return 1;
	}
	cg_remove("bleaf");
	cg_remove("b1/b2/b3");
	cg_remove("b1/b2");
	cg_remove("b1");
	return 0;
}

/*
 * How the cost of a policy grows with the cgroup tree. Depth: a workload
 * 1, 4 and 8 cgroups down (memcg on at every level), each without a
 * policy and with passthrough at the root (the request's policy is found
 * by walking up from the workload's cgroup), the six cases interleaved in
 * a random order per repetition. Breadth: the workload one cgroup down
 * without a policy of its own, beside 1, 100 and 1000 sibling cgroups that
 * each have one (attached with collapsectl, so pinned, in steps: the
 * steps are not interleaved).
 */
#define SCALE_DEPTH	8
#define SCALE_SIBLINGS	1000

static const struct scale_case {
	int depth;
	bool policy;
} scale_cases[] = {
	{ 1, false }, { 1, true }, { 4, false }, { 4, true },
	{ 8, false }, { 8, true },
};
#define NR_SCALE_CASES	((int)(sizeof(scale_cases) / sizeof(scale_cases[0])))

/*
 * "d1/.../dK" (@leaf false): the chain of inner cgroups, memcg enabled in
 * each; "d1/.../d(K-1)/w" (@leaf true): the workload's cgroup at depth K,
 * a leaf (cgroup v2 puts no process in a cgroup that enables controllers
 * for its children).
 */
static const char *scale_path(int depth, bool leaf)
{
	static char path[128];
	int i, len = 0, inner = leaf ? depth - 1 : depth;

	path[0] = 0;
	for (i = 1; i <= inner; i++)
		len += snprintf(path + len, sizeof(path) - len, "%sd%d",
				i > 1 ? "/" : "", i);
	if (leaf)
		snprintf(path + len, sizeof(path) - len, "%sw", inner ? "/" : "");
	return path;
}

static const char *scale_cg(int depth)
{
	return scale_path(depth, true);
}

static int scale_sample(const char *bench, const char *cg, int depth,
			bool policy, int siblings, int rep)
{
	double t = 0;
	bool ok;

	if (policy && run_cmd(out, sizeof(out), "collapsectl load " BPF
			      "passthrough.bpf.o"))
		return fprintf(stderr, "%s", out), 1;
	ok = timed(cg, &t);
	if (policy)
		run_cmd(out, sizeof(out), "collapsectl unload passthrough");
	printf("BENCH {\"bench\": \"%s\", \"depth\": %d, \"policy\": %d, "
	       "\"siblings\": %d, \"rep\": %d, \"mib\": %lu, \"ok\": %d, "
	       "\"s_per_gib\": %.5f}\n", bench, depth, policy, siblings, rep,
	       mb, ok, t);
	return 0;
}

/* Attach passthrough on sibling cgroups sib/s<from>..sib/s<to - 1> */
static int scale_siblings(int from, int to)
{
	char cg[64];

	for (int i = from; i < to; i++) {
		snprintf(cg, sizeof(cg), "sib/s%d", i);
		if (cg_create(cg, NULL) ||
		    run_cmd(out, sizeof(out), "collapsectl load " BPF
			    "passthrough.bpf.o --cgroup " CGROOT "%s --name sib%d",
			    cg, i))
			return fprintf(stderr, "collapse_bench: sibling %d: %s",
				       i, out), 1;
	}
	return 0;
}

static int scale(void)
{
	static const int steps[] = { 1, 100, SCALE_SIBLINGS };
	int order[NR_SCALE_CASES], r, i, d, have = 0;
	char cg[64];
	double t;

	write_str(CGROOT "cgroup.subtree_control", "+memory");
	for (d = 1; d < SCALE_DEPTH; d++) {
		if (cg_create(scale_path(d, false), NULL))
			return 1;
		snprintf(cg, sizeof(cg), CGROOT "%s/cgroup.subtree_control",
			 scale_path(d, false));
		write_str(cg, "+memory");
	}
	for (i = 0; i < NR_SCALE_CASES; i++)
		if (cg_create(scale_cg(scale_cases[i].depth), NULL))
			return 1;
	for (i = 0; i < NR_SCALE_CASES; i++) {
		order[i] = i;
		/* warm up; a workload that cannot collapse there aborts */
		if (!timed(scale_cg(scale_cases[i].depth), &t)) {
			fprintf(stderr, "collapse_bench: scale: no collapse in %s\n",
				scale_cg(scale_cases[i].depth));
			return 1;
		}
	}
	for (r = 0; r < reps; r++) {
		shuffle(order, NR_SCALE_CASES);
		for (i = 0; i < NR_SCALE_CASES; i++) {
			const struct scale_case *c = &scale_cases[order[i]];

			if (scale_sample("scale_depth", scale_cg(c->depth),
					 c->depth, c->policy, 0, r))
				return 1;
		}
	}
	if (cg_create("sib", NULL))
		return 1;
	for (i = 0; i < (int)(sizeof(steps) / sizeof(steps[0])); i++) {
		if (scale_siblings(have, steps[i]))
			return 1;
		have = steps[i];
		timed(scale_cg(1), &t);				/* warm up */
		for (r = 0; r < reps; r++)
			if (scale_sample("scale_siblings", scale_cg(1), 1, false,
					 have, r))
				return 1;
	}
	for (i = 0; i < have; i++) {
		snprintf(cg, sizeof(cg), "sib/s%d", i);
		run_cmd(out, sizeof(out), "collapsectl unload sib%d", i);
		cg_remove(cg);
	}
	cg_remove("sib");
	for (i = 0; i < NR_SCALE_CASES; i++)
		cg_remove(scale_cg(scale_cases[i].depth));
	for (d = SCALE_DEPTH - 1; d >= 1; d--)
		cg_remove(scale_path(d, false));
	return 0;
}

/*
 * Threads beside a MADV_COLLAPSE, each timing what it does in a loop:
 * the writer maps, touches and unmaps a fresh 64 KiB chunk (mmap and
 * munmap take the mmap write lock); the reader drops and faults back 16
 * pages of the collapsing vma's own tail, past the collapsed range (its
 * faults cannot take the per-vma lock while the collapse holds the vma:
 * they wait for the mmap read lock).
 */
#define MAX_PROBES	200000
/* Between two probes: a prober that never sleeps would measure CPU
 * starvation on the guest's 2 vCPUs, not the mmap lock. */
#define PROBE_PAUSE_US	500

struct prober {
	volatile int stop;
	char *tail;		/* reader: 64 MiB of the vma, past the range */
	double lat[MAX_PROBES];
	int n;
};

static void *write_probe(void *arg)
{
	struct prober *p = arg;

	while (!p->stop && p->n < MAX_PROBES) {
		double t = now();
		char *c = mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (c == MAP_FAILED)
			break;
		for (int i = 0; i < 16; i++)
			c[i * PAGE_SZ] = 1;
		munmap(c, 64 << 10);
		p->lat[p->n++] = now() - t;
		usleep(PROBE_PAUSE_US);
	}
	return NULL;
}

static void *read_probe(void *arg)
{
	struct prober *p = arg;
	size_t off = 0;

	while (!p->stop && p->n < MAX_PROBES) {
		double t = now();
		char *c = p->tail + off;

		madvise(c, 64 << 10, MADV_DONTNEED);
		for (int i = 0; i < 16; i++)
			c[i * PAGE_SZ] = 1;
		p->lat[p->n++] = now() - t;
		off = (off + (64 << 10)) % (64 << 20);
		usleep(PROBE_PAUSE_US);
	}
	return NULL;
}

/*
 * The range of mb MiB plus 64 MiB of the same vma for the reader, filled,
 * with both probers started beside it.
 */
struct probed {
	struct region r;
	struct prober wr, rd;
	pthread_t tw, tr;
};

static int probed_start(struct probed *p)
{
	if (region_map(&p->r, mb / 2 + 32))
		return -1;
	region_fill(&p->r, NULL);
	memset(&p->wr, 0, sizeof(p->wr));
	memset(&p->rd, 0, sizeof(p->rd));
	p->rd.tail = p->r.p + (mb << 20);
	pthread_create(&p->tw, NULL, write_probe, &p->wr);
	pthread_create(&p->tr, NULL, read_probe, &p->rd);
	return 0;
}

static void probed_stop(struct probed *p)
{
	p->wr.stop = 1;
	p->rd.stop = 1;
	pthread_join(p->tw, NULL);
	pthread_join(p->tr, NULL);
}

/* Probes a 99th percentile needs: with fewer it would be the maximum */
#define P99_MIN_PROBES	100

/*
 * "SIDE_p50_us": ..., "SIDE_p99_us": ..., "SIDE_max_us": ... of a prober;
 * the p99 is null below P99_MIN_PROBES probes.
 */
static void print_lat(const char *side, struct prober *p)
{
	qsort(p->lat, p->n, sizeof(p->lat[0]), cmp_double);
	printf("\"%s_probes\": %d, \"%s_p50_us\": %.1f, ", side, p->n, side,
	       p->n ? p->lat[p->n / 2] * 1e6 : 0);
	if (p->n >= P99_MIN_PROBES)
		printf("\"%s_p99_us\": %.1f, ", side, p->lat[p->n * 99 / 100] * 1e6);
	else
		printf("\"%s_p99_us\": null, ", side);
	printf("\"%s_max_us\": %.1f", side, p->n ? p->lat[p->n - 1] * 1e6 : 0);
}

/* Every latency of a prober, for the CDF plots (first repetition only). */
static void print_cdf(const char *cfg, const char *side, struct prober *p)
{
	for (int i = 0; i < p->n; i++)
		printf("LAT %s %s %.1f\n", cfg, side, p->lat[i] * 1e6);
}

/*
 * The bench_batch policy at the root, answering @pmds (1: mainline's one
 * PMD at a time); NULL when it cannot attach (the case then aborts).
 */
static struct bench_batch *batch_attach(unsigned int pmds, bool no_yield,
					struct bpf_link **link)
{
	struct bench_batch *skel = bench_batch__open();

	if (!skel)
		return NULL;
	skel->rodata->batch_pmds = pmds;
	if (ops_data_set_u64(skel->obj, skel->maps.bench_batch, "flags",
			     no_yield ? COLLAPSE_EXT_OPS_NO_YIELD : 0) ||
	    bench_batch__load(skel) ||
	    !(*link = bpf_map__attach_struct_ops(skel->maps.bench_batch))) {
		fprintf(stderr, "collapse_bench: cannot attach the batch policy\n");
		bench_batch__destroy(skel);
		return NULL;
	}
	return skel;
}

/*
 * One MADV_COLLAPSE of mb MiB with batches of @pmds, yielding the mmap
 * lock to waiters or not (COLLAPSE_EXT_OPS_NO_YIELD), the probers beside it.
 */
static int batch_sample(unsigned int pmds, bool no_yield, int rep, bool report)
{
	static struct probed pb;
	struct bench_batch *skel;
	struct bpf_link *link;
	char cfg[32];
	double s;
	bool ok;

	skel = batch_attach(pmds, no_yield, &link);
	if (!skel)
		return 1;
	if (probed_start(&pb))
		return 1;
	usleep(100000);
	s = now();
	ok = !madvise(pb.r.p, mb << 20, MADV_COLLAPSE);
	s = now() - s;
	if (!ok)
		fprintf(stderr, "collapse_bench: MADV_COLLAPSE, batch %u: %s\n",
			pmds, strerror(errno));
	probed_stop(&pb);
	if (report) {
		printf("BENCH {\"bench\": \"batch\", \"batch\": %u, \"yield\": %d, "
		       "\"rep\": %d, \"mib\": %lu, \"ok\": %d, \"s_per_gib\": %.4f, "
		       "\"collapse_s\": %.4f, ", pmds, !no_yield, rep, mb, ok,
		       s * 1024 / mb, s);
		print_lat("write", &pb.wr);
		printf(", ");
		print_lat("read", &pb.rd);
		printf(", \"batches\": %ld, \"lock_yields\": %ld}\n",
		       policy_stat("bench_batch", "batches"),
		       policy_stat("bench_batch", "lock_yields"));
		if (rep == 0) {
			snprintf(cfg, sizeof(cfg), "%u%s", pmds,
				 no_yield ? "_no_yield" : "_yield");
			print_cdf(cfg, "write", &pb.wr);
			print_cdf(cfg, "read", &pb.rd);
		}
	}
	region_unmap(&pb.r);
	bpf_link__destroy(link);
	bench_batch__destroy(skel);
	return 0;
}

/* Batch sizes 1, 8 and 64, each yielding and not, in random order per rep. */
static int batch(void)
{
	static const unsigned int sizes[] = { 1, 8, 64 };
	int order[6] = { 0, 1, 2, 3, 4, 5 }, r, i;

	if (batch_sample(8, false, -1, false))		/* warm up */
		return 1;
	for (r = 0; r < reps; r++) {
		shuffle(order, 6);
		for (i = 0; i < 6; i++)
			if (batch_sample(sizes[order[i] / 2], order[i] % 2, r, true))
				return 1;
	}
	return 0;
}

/*
 * A remote agent sweeping a live heap, where batching should help if
 * anywhere: a child maps mb MiB in small pages across 64 vmas and keeps
 * reading them; this process collapses them all with one
 * process_madvise(MADV_COLLAPSE) call (one iovec per vma) under batches of
 * @pmds. Reported: the agent's time per GiB, and the target's reads per
 * second meanwhile.
 */
#define REMOTE_VMAS	64

struct remote_target {
	char *volatile p[REMOTE_VMAS];
	volatile long reads;
	volatile int ready, stop;
};

static int remote_target(struct remote_target *t, size_t vma_len)
{
	unsigned int seed = 1;
	int i;

	for (i = 0; i < REMOTE_VMAS; i++) {
		/* PROT_EXEC differs between neighbours: no vma merging */
		char *m = mmap(NULL, vma_len + HPAGE_SZ, PROT_READ | PROT_WRITE |
			       (i % 2 ? PROT_EXEC : 0),
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			return 1;
		m = (char *)(((uintptr_t)m + HPAGE_SZ - 1) & ~(HPAGE_SZ - 1));
		for (size_t off = 0; off < vma_len; off += PAGE_SZ)
			m[off] = 1;
		t->p[i] = m;
	}
	t->ready = 1;
	while (!t->stop) {
		size_t off = (size_t)rand_r(&seed) % (vma_len / PAGE_SZ) * PAGE_SZ;

		(void)*(volatile char *)(t->p[rand_r(&seed) % REMOTE_VMAS] + off);
		t->reads++;
	}
	return 0;
}

static int remote_sample(unsigned int pmds, int rep, bool report)
{
	size_t vma_len = ((mb << 20) / REMOTE_VMAS) & ~(HPAGE_SZ - 1);
	struct iovec iov[REMOTE_VMAS];
	struct bench_batch *skel = NULL;
	struct bpf_link *link = NULL;
	struct remote_target *t;
	int pidfd, i, ret = 1;
	long reads;
	double s;
	bool ok;
	pid_t pid;

	if (vma_len < HPAGE_SZ) {
		fprintf(stderr, "collapse_bench: batch-remote needs --mb >= %d\n",
			REMOTE_VMAS * 2);
		return 1;
	}
	t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t == MAP_FAILED)
		return 1;
	memset(t, 0, sizeof(*t));
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid)
		_exit(remote_target(t, vma_len));
	for (i = 0; i < 3000 && !t->ready; i++)
		usleep(10000);
	pidfd = sys_pidfd_open(pid);
	if (t->ready && pidfd >= 0)
		skel = batch_attach(pmds, false, &link);
	if (!skel)
		goto out;
	for (i = 0; i < REMOTE_VMAS; i++) {
		iov[i].iov_base = t->p[i];
		iov[i].iov_len = vma_len;
	}
	usleep(100000);
	reads = t->reads;
	s = now();
	ok = syscall(SYS_process_madvise, pidfd, iov, REMOTE_VMAS, MADV_COLLAPSE,
		     0) == (long)(vma_len * REMOTE_VMAS);
	s = now() - s;
	reads = t->reads - reads;
	if (!ok)
		fprintf(stderr, "collapse_bench: process_madvise, batch %u: %s\n",
			pmds, strerror(errno));
	if (report)
		printf("BENCH {\"bench\": \"batch_remote\", \"batch\": %u, "
		       "\"rep\": %d, \"mib\": %zu, \"vmas\": %d, \"ok\": %d, "
		       "\"s_per_gib\": %.4f, \"target_mreads_s\": %.3f, "
		       "\"batches\": %ld}\n", pmds, rep,
		       vma_len * REMOTE_VMAS >> 20, REMOTE_VMAS, ok,
		       s * (1 << 30) / (vma_len * REMOTE_VMAS), reads / s / 1e6,
		       policy_stat("bench_batch", "batches"));
	bpf_link__destroy(link);
	bench_batch__destroy(skel);
	ret = 0;
out:
	t->stop = 1;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (pidfd >= 0)
		close(pidfd);
	munmap(t, sizeof(*t));
	return ret;
}

/* Batch sizes 1, 8 and 64 for the remote agent, in random order per rep */
static int batch_remote(void)
{
	static const unsigned int sizes[] = { 1, 8, 64 };
	int order[3] = { 0, 1, 2 }, r, i;

	if (remote_sample(8, -1, false))		/* warm up */
		return 1;
	for (r = 0; r < reps; r++) {
		shuffle(order, 3);
		for (i = 0; i < 3; i++)
			if (remote_sample(sizes[order[i]], r, true))
				return 1;
	}
	return 0;
}

/* utime + stime of khugepaged, in seconds */
static double khugepaged_cpu(void)
{
	char line[1024];
	double ticks = sysconf(_SC_CLK_TCK);
	FILE *f = popen("for p in /proc/[0-9]*; do grep -q '^khugepaged$' $p/comm "
			"2>/dev/null && cat $p/stat; done", "r");
	unsigned long ut = 0, st = 0;

	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f)) {
		char *p = strrchr(line, ')');

		if (p)
			sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
			       &ut, &st);
	}
	pclose(f);
	return (ut + st) / ticks;
}

#define COVERAGE_LIMIT_S	90

/*
 * Time until 90% of mb MiB of MADV_HUGEPAGE memory is huge; "s_to_90pct"
 * is null when it never got there within COVERAGE_LIMIT_S.
 */
static void coverage(const char *c, unsigned long pages, int rep)
{
	struct region r;
	double t0, cpu0, t = -1;
	char when[32] = "null";

	write_num(KHUGEPAGED "pages_to_scan", pages);
	if (region_map(&r, mb / 2))
		return;
	region_fill(&r, NULL);
	cpu0 = khugepaged_cpu();
	t0 = now();
	madvise(r.p, r.len, MADV_HUGEPAGE);
	while (now() - t0 < COVERAGE_LIMIT_S) {
		unsigned long kb = anon_huge_kb(0, r.p, r.len);

		if (rep == 0)
			printf("SERIES khugepaged %s %.2f %.1f\n", c, now() - t0,
			       kb * 100.0 / (r.len / 1024));
		if (kb * 10 >= r.len / 1024 * 9) {
			t = now() - t0;
			break;
		}
		usleep(250000);
	}
	if (t >= 0)
		snprintf(when, sizeof(when), "%.2f", t);
	if (rep >= 0)	/* rep -1: the warm-up */
		printf("BENCH {\"bench\": \"khugepaged\", \"case\": \"%s\", \"rep\": %d, "
	       "\"mib\": %lu, \"pages_to_scan\": %lu, \"s_to_90pct\": %s, "
	       "\"limit_s\": %d, \"khugepaged_cpu_s\": %.2f}\n",
	       c, rep, mb, pages, when, COVERAGE_LIMIT_S, khugepaged_cpu() - cpu0);
	region_unmap(&r);
}

#define STALL_WINDOW_S	15

/*
 * The writer and reader probers of a process for STALL_WINDOW_S while
 * khugepaged works on its mb MiB (scanning under the mmap read lock,
 * collapsing each PMD under the write lock), or, for "idle", while the
 * memory is not MADV_HUGEPAGE and khugepaged leaves it alone: the control.
 */
static void stall_sample(const char *c, bool hugepage, unsigned long pages, int rep)
{
	static struct probed pb;

	write_num(KHUGEPAGED "pages_to_scan", pages);
	if (probed_start(&pb))
		return;
	if (hugepage)
		madvise(pb.r.p, mb << 20, MADV_HUGEPAGE);
	sleep(STALL_WINDOW_S);
	probed_stop(&pb);
	if (rep < 0) {		/* the warm-up */
		region_unmap(&pb.r);
		return;
	}
	printf("BENCH {\"bench\": \"khugepaged_stalls\", \"case\": \"%s\", \"rep\": %d, "
	       "\"mib\": %lu, \"pages_to_scan\": %lu, \"window_s\": %d, "
	       "\"huge_pct\": %.1f, ", c, rep, mb, pages, STALL_WINDOW_S,
	       anon_huge_kb(0, pb.r.p, mb << 20) * 100.0 / (mb << 10));
	print_lat("write", &pb.wr);
	printf(", ");
	print_lat("read", &pb.rd);
	printf("}\n");
	region_unmap(&pb.r);
}

/* Settings for the khugepaged benchmarks: a 1 s sleep (the default 10 s
 * would take minutes), THP for MADV_HUGEPAGE regions only. */
static void khugepaged_settings(void)
{
	struct thp_settings s;

	thp_save_settings();
	thp_read_settings(&s);
	s.khugepaged.scan_sleep_millisecs = 1000;
	s.thp_enabled = THP_MADVISE;
	thp_push_settings(&s);
}

static int khugepaged(void)
{
	int order[] = { 0, 1, 2 }, r, i, rc = 0;

	khugepaged_settings();
	for (r = -1; r < reps && !rc; r++) {	/* r == -1: warm up */
		shuffle(order, 3);
		for (i = 0; i < 3 && !rc; i++) {
			switch (order[i]) {
			case 0:
				coverage("default", 4096, r);
				break;
			case 1:
				if (run_cmd(out, sizeof(out), "collapsectl load " BPF
					    "pace.bpf.o")) {
					fprintf(stderr, "%s", out);
					rc = 1;
					break;
				}
				coverage("pace", 4096, r);
				run_cmd(out, sizeof(out), "collapsectl unload pace");
				break;
			case 2:
				coverage("pages_to_scan_x8", 8 * 4096, r);
				break;
			}
		}
	}
	thp_restore_settings();
	return rc;
}

/* The process's lock stalls while khugepaged works, against idle. */
static int khugepaged_stalls(void)
{
	int order[] = { 0, 1, 2 }, r, i;

	khugepaged_settings();
	for (r = -1; r < reps; r++) {		/* r == -1: warm up */
		shuffle(order, 3);
		for (i = 0; i < 3; i++) {
			switch (order[i]) {
			case 0:
				stall_sample("idle", false, 4096, r);
				break;
			case 1:
				stall_sample("default", true, 4096, r);
				break;
			case 2:
				stall_sample("pages_to_scan_x8", true, 8 * 4096, r);
				break;
			}
		}
	}
	thp_restore_settings();
	return 0;
}

/*
 * khugepaged per cgroup. "priority": a 64 MiB latency-critical process
 * starts after a 1 GiB batch process, both MADV_HUGEPAGE: seconds until
 * the critical one is 90% huge, with no policy and with priority at the
 * root (passthrough on the critical cgroup), and how far the batch got
 * meanwhile. "skip_huge": 1 GiB already collapsed; after two full scans,
 * the ranges khugepaged scans in a window and its CPU time, with
 * passthrough and with skip_huge.
 */
#define CRIT_MIB	64
#define BATCH_MIB	1024
#define SKIP_WINDOW_S	20

/* One sample; -1 (nothing reported) when a policy or a process failed */
static int priority_sample(bool priority, int rep)
{
	struct hp_child batch = {}, crit = {};
	double t0, t = -1;
	char when[32] = "null";
	int batch_pct, rc = -1;

	cg_create("kb_batch", NULL);
	cg_create("kb_crit", NULL);
	if (priority &&
	    (run_cmd(out, sizeof(out), "collapsectl load " BPF "priority.bpf.o") ||
	     run_cmd(out, sizeof(out), "collapsectl load " BPF "passthrough.bpf.o "
		     "--cgroup " CGROOT "kb_crit --name crit"))) {
		fprintf(stderr, "collapse_bench: priority: %s", out);
		goto out;
	}
	if (hp_child_start(&batch, "kb_batch", BATCH_MIB / 2) ||
	    hp_child_start(&crit, "kb_crit", CRIT_MIB / 2)) {
		fprintf(stderr, "collapse_bench: cannot start the processes\n");
		goto out;
	}
	t0 = now();
	while (now() - t0 < COVERAGE_LIMIT_S) {
		if (hp_child_huge_pct(&crit) >= 90) {
			t = now() - t0;
			break;
		}
		usleep(100000);
	}
	batch_pct = hp_child_huge_pct(&batch);
	if (t >= 0)
		snprintf(when, sizeof(when), "%.2f", t);
	rc = 0;
	if (rep >= 0)	/* rep -1: the warm-up */
		printf("BENCH {\"bench\": \"khugepaged_priority\", \"case\": \"%s\", "
	       "\"rep\": %d, \"crit_mib\": %d, \"batch_mib\": %d, "
	       "\"crit_s_to_90pct\": %s, \"limit_s\": %d, "
	       "\"batch_huge_pct_then\": %d}\n", priority ? "priority" : "none",
	       rep, CRIT_MIB, BATCH_MIB, when, COVERAGE_LIMIT_S, batch_pct);
out:
	hp_child_stop(&crit);
	hp_child_stop(&batch);
	if (priority) {
		run_cmd(out, sizeof(out), "collapsectl unload crit");
		run_cmd(out, sizeof(out), "collapsectl unload priority");
	}
	cg_remove("kb_crit");
	cg_remove("kb_batch");
	return rc;
}

/* One sample; -1 (nothing reported) when the policy or the process failed */
static int skip_sample(const char *policy, int rep)
{
	struct hp_child c = {};
	long ranges, skips;
	int pidfd, rc = -1;
	double cpu;

	if (run_cmd(out, sizeof(out), "collapsectl load " BPF "%s.bpf.o", policy)) {
		fprintf(stderr, "collapse_bench: %s: %s", policy, out);
		return -1;
	}
	if (hp_child_start(&c, "", BATCH_MIB / 2)) {
		fprintf(stderr, "collapse_bench: cannot start the process\n");
		goto out;
	}
	pidfd = sys_pidfd_open(c.pid);
	sys_process_madvise(pidfd, *c.addr, c.nr * HPAGE_SZ, MADV_COLLAPSE, 0);
	close(pidfd);
	/* two complete walks: what the policy knows of the mm is current */
	wait_full_scans(60);
	ranges = policy_stat(policy, "ranges_scanned");
	skips = policy_stat(policy, "khugepaged_mm_skips");
	cpu = khugepaged_cpu();
	sleep(SKIP_WINDOW_S);
	rc = 0;
	if (rep >= 0)	/* rep -1: the warm-up */
		printf("BENCH {\"bench\": \"khugepaged_skip\", \"case\": \"%s\", "
	       "\"rep\": %d, \"mib\": %d, \"window_s\": %d, \"huge_pct\": %d, "
	       "\"ranges_scanned\": %ld, \"mm_skips\": %ld, "
	       "\"khugepaged_cpu_s\": %.2f}\n", policy, rep, BATCH_MIB,
	       SKIP_WINDOW_S, hp_child_huge_pct(&c),
	       policy_stat(policy, "ranges_scanned") - ranges,
	       policy_stat(policy, "khugepaged_mm_skips") - skips,
	       khugepaged_cpu() - cpu);
	hp_child_stop(&c);
out:
	run_cmd(out, sizeof(out), "collapsectl unload %s", policy);
	return rc;
}

static int khugepaged_cgroups(void)
{
	struct thp_settings s;
	int order[] = { 0, 1, 2, 3 }, r, i, rc = 0;

	thp_save_settings();
	thp_read_settings(&s);
	s.khugepaged.scan_sleep_millisecs = 100;
	s.thp_enabled = THP_MADVISE;
	thp_push_settings(&s);
	write_str(CGROOT "cgroup.subtree_control", "+memory");
	/* r == -1: warm up; a sample that fails aborts the benchmark */
	for (r = -1; r < reps && !rc; r++) {
		shuffle(order, 4);
		for (i = 0; i < 4 && !rc; i++) {
			switch (order[i]) {
			case 0:
				rc = priority_sample(false, r);
				break;
			case 1:
				rc = priority_sample(true, r);
				break;
			case 2:
				rc = skip_sample("passthrough", r);
				break;
			case 3:
				rc = skip_sample("skip_huge", r);
				break;
			}
		}
	}
	thp_restore_settings();
	return rc ? 1 : 0;
}

/* Per repetition: memcpy of 2 MiB blocks, then one collapse of as much. */
static int memcpy_bw(void)
{
	struct region src, dst;
	int r, i, n = 4;

	if (region_map(&src, mb / 2) || region_map(&dst, mb / 2))
		return 1;
	region_fill(&src, NULL);
	memset(dst.p, 0, dst.len);
	for (r = -1; r < reps; r++) {	/* r == -1: warm up */
		double t = now(), copy, col;
		bool ok;

		for (i = 0; i < n; i++)
			for (size_t off = 0; off < src.len; off += HPAGE_SZ)
				memcpy(dst.p + off, src.p + off, HPAGE_SZ);
		copy = (double)src.len * n / (now() - t) / (1 << 20);
		col = mb / collapse_once(mb, &ok);
		if (r >= 0)
			printf("BENCH {\"bench\": \"memcpy\", \"rep\": %d, \"mib\": %lu, "
			       "\"ok\": %d, \"memcpy_mib_s\": %.1f, "
			       "\"collapse_mib_s\": %.1f, \"ratio\": %.4f}\n",
			       r, mb, ok, copy, col, col / copy);
	}
	region_unmap(&src);
	region_unmap(&dst);
	return 0;
}

/*
 * Memory by order (kernels whose khugepaged makes mTHP: the orders hook).
 * A child in cgroup "bo" fills mb MiB densely, or sparsely (one 64 KiB
 * block of every 512 KiB, 12.5%), then makes it MADV_HUGEPAGE; khugepaged
 * runs at full speed with its default max_ptes_none (511, which 7.3
 * scales to all but one pte of each smaller order) until two full scans
 * after. Then the folios mapping the memory are counted by order: its RSS,
 * what collapse added to what was touched, the shares in 64 KiB folios and
 * in PMDs, memory.peak, khugepaged's CPU time. The cases: only PMDs
 * allowed, only 64 KiB, and both with mthp_frugal on "bo" and memory.high
 * 128 MiB above what the child touches (tight: 64 KiB, no hole filled).
 */
#define ORDER_64K	4
#define HPAGE_PMD_ORDER	9
#define SPARSE_BLOCK	16	/* pages touched at the start of ... */
#define SPARSE_STRIDE	128	/* ... every this many pages */
#define ORDERS_SLACK_MB	128

static bool sparse_64k_of_512k(size_t page)
{
	return page % SPARSE_STRIDE >= SPARSE_BLOCK;
}

static const struct orders_case {
	const char *name;
	unsigned long orders;	/* sysfs sizes allowed (MADV_HUGEPAGE) */
	const char *policy;	/* attached on "bo" with memory.high */
} orders_cases[] = {
	{ "pmd", 1UL << HPAGE_PMD_ORDER, NULL },
	{ "64k", 1UL << ORDER_64K, NULL },
	{ "mthp_frugal", 1UL << HPAGE_PMD_ORDER | 1UL << ORDER_64K, "mthp_frugal" },
};
#define NR_ORDERS_CASES	((int)(sizeof(orders_cases) / sizeof(orders_cases[0])))

static int orders_sample(const struct orders_case *c, bool sparse, int rep)
{
	unsigned long count[HPAGE_PMD_ORDER + 1] = {}, touched_kb, rss_kb = 0;
	unsigned long pages = mb << 8;
	struct thp_settings s = *thp_current_settings(), stop;
	struct hp_child child = {};
	double cpu0, t0, settle, cpu;
	bool settled;
	int o, err = 0;

	touched_kb = sparse ? pages / SPARSE_STRIDE * SPARSE_BLOCK * 4 : mb << 10;
	for (o = 0; o < NR_ORDERS; o++)
		s.hugepages[o].enabled = c->orders & (1UL << o) ? THP_MADVISE : THP_NEVER;
	thp_push_settings(&s);
	khugepaged_fast(-1, 8 * HPAGE_NR);
	if (cg_create("bo", NULL)) {
		err = 1;
		goto pop;
	}
	if (c->policy) {
		snprintf(out, sizeof(out), "%luM", (touched_kb >> 10) + ORDERS_SLACK_MB);
		if (write_str(CGROOT "bo/memory.high", out) ||
		    run_cmd(out, sizeof(out), "collapsectl load " BPF "%s.bpf.o --cgroup "
			    CGROOT "bo", c->policy)) {
			fprintf(stderr, "collapse_bench: %s on bo: %s\n", c->policy, out);
			err = 1;
			goto remove;
		}
	}
	cpu0 = khugepaged_cpu();
	t0 = now();
	if (hp_child_start_sparse(&child, "bo", mb / 2,
				  sparse ? sparse_64k_of_512k : NULL)) {
		fprintf(stderr, "collapse_bench: the child did not start\n");
		hp_child_stop(&child);
		err = 1;
		goto unload;
	}
	settled = wait_full_scans(120);
	settle = now() - t0;
	cpu = khugepaged_cpu() - cpu0;
	/*
	 * Stopped for the count: every size never (a size of its own that
	 * says madvise keeps khugepaged going whatever the top switch says).
	 */
	stop = *thp_current_settings();
	stop.thp_enabled = THP_NEVER;
	for (o = 0; o < NR_ORDERS; o++)
		stop.hugepages[o].enabled = THP_NEVER;
	thp_push_settings(&stop);
	if (folio_orders(child.pid, *child.addr, mb << 20, count, HPAGE_PMD_ORDER)) {
		fprintf(stderr, "collapse_bench: cannot read the child's folios\n");
		err = 1;
	}
	for (o = 0; o <= HPAGE_PMD_ORDER; o++)
		rss_kb += count[o] * (4UL << o);
	if (!rss_kb) {
		fprintf(stderr, "collapse_bench: the child's memory reads as empty\n");
		err = 1;
	}
	if (rep >= 0 && !err)
		printf("BENCH {\"bench\": \"orders\", \"case\": \"%s\", \"memory\": \"%s\", "
		       "\"rep\": %d, \"mib\": %lu, \"ok\": %d, \"touched_kb\": %lu, "
		       "\"rss_kb\": %lu, \"overhead_pct\": %.2f, \"pct_64k\": %.2f, "
		       "\"pct_pmd\": %.2f, \"peak_kb\": %ld, \"settle_s\": %.2f, "
		       "\"khugepaged_cpu_s\": %.2f}\n",
		       c->name, sparse ? "sparse" : "dense", rep, mb, settled,
		       touched_kb, rss_kb, (rss_kb - (double)touched_kb) * 100 / touched_kb,
		       count[ORDER_64K] * 64.0 * 100 / rss_kb,
		       count[HPAGE_PMD_ORDER] * 2048.0 * 100 / rss_kb,
		       read_num(CGROOT "bo/memory.peak") / 1024, settle, cpu);
	hp_child_stop(&child);
	thp_pop_settings();		/* stop */
unload:
	if (c->policy)
		run_cmd(out, sizeof(out), "collapsectl unload %s", c->policy);
remove:
	cg_remove("bo");
pop:
	thp_pop_settings();		/* khugepaged_fast() */
	thp_pop_settings();		/* the sizes */
	return err;
}

static int orders(void)
{
	int order[2 * NR_ORDERS_CASES], r, i, rc = 0;
	struct thp_settings s;

	if (!kernel_has_hook("orders")) {
		printf("collapse_bench: orders: skipped, this kernel's khugepaged "
		       "makes PMDs only\n");
		return 0;
	}
	write_str(CGROOT "cgroup.subtree_control", "+memory");
	thp_save_settings();
	thp_read_settings(&s);
	thp_push_settings(&s);		/* what each sample's settings start from */
	for (i = 0; i < 2 * NR_ORDERS_CASES; i++)
		order[i] = i;
	for (r = -1; r < reps && !rc; r++) {	/* r == -1: warm up */
		shuffle(order, 2 * NR_ORDERS_CASES);
		for (i = 0; i < 2 * NR_ORDERS_CASES && !rc; i++)
			rc = orders_sample(&orders_cases[order[i] / 2], order[i] % 2, r);
	}
	thp_restore_settings();
	return rc;
}

/*
 * Splitting underused huge pages back (split_underused). A child in
 * cgroup "bs" (swap allowed: the guest's zram) fills a heap of mb MiB
 * whose 2 MiB ranges are four in five dense (480 of 512 pages written)
 * and one in five sparse (64 written), and collapses it with
 * MADV_COLLAPSE (the child's own request, so its own reclaim); then it
 * grows by mb / 8 MiB of small pages, the pressure. The limit, memory.high
 * 10% above frugal's footprint (what is touched and the growth) and below
 * eager's: set from the start for eager, frugal and elastic; set only
 * before the growth ("late": the host's memory got tight after the
 * collapse) for eager and elastic; lowered in SPLIT_STEPS steps, from the
 * usage after the collapse to the limit, one before each part of the
 * growth ("steps": the limit lowered while the workload runs), for eager
 * and elastic; never, for eager and elastic. Per sample: huge coverage of
 * the heap and of its dense ranges after the collapse and at the end,
 * memory.current at the end, memory.peak, memory.events high, the swap
 * used at its peak, the time the growth took, the THPs the policy split,
 * and whether the heap reads back intact.
 */
#define SPLIT_DENSE	480
#define SPLIT_SPARSE	64

static bool split_skip(size_t page)
{
	size_t pmd = page / HPAGE_NR;

	/* one range in five sparse, spread over the heap */
	return page % HPAGE_NR >= ((pmd * 7) % 5 ? SPLIT_DENSE : SPLIT_SPARSE);
}

static unsigned long split_touched_kb(void)
{
	unsigned long pmds = mb / 2, sparse = 0;

	for (unsigned long i = 0; i < pmds; i++)
		sparse += !((i * 7) % 5);
	return (sparse * SPLIT_SPARSE + (pmds - sparse) * SPLIT_DENSE) * 4;
}

enum split_limit { LIMIT_NONE, LIMIT_START, LIMIT_LATE, LIMIT_STEPS };
#define SPLIT_STEPS	4

static const struct split_case {
	const char *name;
	const char *policy;
	enum split_limit limit;
} split_cases[] = {
	{ "eager", "eager", LIMIT_START },
	{ "frugal", "frugal", LIMIT_START },
	{ "elastic", "elastic", LIMIT_START },
	{ "eager_late", "eager", LIMIT_LATE },
	{ "elastic_late", "elastic", LIMIT_LATE },
	{ "eager_steps", "eager", LIMIT_STEPS },
	{ "elastic_steps", "elastic", LIMIT_STEPS },
	{ "eager_nolimit", "eager", LIMIT_NONE },
	{ "elastic_nolimit", "elastic", LIMIT_NONE },
};
#define NR_SPLIT_CASES	((int)(sizeof(split_cases) / sizeof(split_cases[0])))

struct split_shared {
	volatile int phase;	/* 1: collapsed, 2: grow, 3: grown */
	volatile int go;	/* parts of the growth the child may make */
	volatile int grown;	/* parts it made */
	char *heap;
	double grow_s;
	int intact;
};

static int split_child(void *arg)
{
	struct split_shared *sh = arg;
	struct region heap, grow;

	close_range(3, ~0U, 0);
	if (region_map(&heap, mb / 2) || region_map(&grow, mb / 16))
		return 1;
	region_fill(&heap, split_skip);
	madvise(heap.p, heap.len, MADV_COLLAPSE);	/* EBUSY: some refused */
	madvise(grow.p, grow.len, MADV_NOHUGEPAGE);
	sh->heap = heap.p;
	sh->phase = 1;
	while (sh->phase != 2)
		usleep(1000);
	sh->grow_s = now();
	for (int i = 0; i < SPLIT_STEPS; i++) {
		struct region part = {
			.p = grow.p + i * (grow.len / SPLIT_STEPS),
			.len = grow.len / SPLIT_STEPS,
		};

		while (sh->go <= i)
			usleep(1000);
		region_fill(&part, NULL);
		sh->grown = i + 1;
	}
	sh->grow_s = now() - sh->grow_s;
	sh->intact = region_check(&heap, split_skip);
	sh->phase = 3;
	for (;;)
		pause();
}

static long cg_event(const char *file, const char *key)
{
	char path[128], line[128];
	long val = -1;
	FILE *f;

	snprintf(path, sizeof(path), CGROOT "bs/%s", file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ' ')
			val = atol(line + strlen(key) + 1);
	fclose(f);
	return val;
}

/*
 * Huge coverage of the dense ranges of the child @pid's heap @heap, %: each
 * range read from pagemap (smaps, anon_huge_kb(), counts a whole vma)
 */
static double split_dense_coverage(pid_t pid, char *heap)
{
	unsigned long huge = 0, dense = 0;

	for (size_t i = 0; i < mb / 2; i++) {
		if (!((i * 7) % 5))
			continue;
		dense++;
		huge += range_is_huge(pid, heap + i * HPAGE_SZ, HPAGE_SZ);
	}
	return dense ? huge * 100.0 / dense : 0;
}

/*
 * The growth, in SPLIT_STEPS parts; for LIMIT_STEPS, memory.high lowered
 * before each, from what the child uses after the collapse to @limit_mb.
 */
static int split_grow(struct split_shared *sh, const struct split_case *c,
		      long limit_mb, pid_t pid)
{
	long from = read_num(CGROOT "bs/memory.current") >> 20;

	sh->phase = 2;
	for (int i = 0; i < SPLIT_STEPS; i++) {
		if (c->limit == LIMIT_STEPS) {
			long high = from - (from - limit_mb) * (i + 1) / SPLIT_STEPS;

			if (write_num(CGROOT "bs/memory.high", high << 20))
				return -1;
		}
		sh->go = i + 1;
		while (sh->grown <= i)
			if (waitpid(pid, NULL, WNOHANG) == pid)
				return -1;
			else
				usleep(1000);
	}
	return 0;
}

/* Wait up to 120 s for the child's phase @phase: false if it died */
static bool split_wait(struct split_shared *sh, pid_t pid, int phase)
{
	for (int i = 0; i < 120000 && sh->phase != phase; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return false;
		usleep(1000);
	}
	return sh->phase == phase;
}

static int split_sample(const struct split_case *c, int rep)
{
	unsigned long touched_kb = split_touched_kb(), len = mb << 20;
	struct split_shared *sh;
	double cov_collapse, cov_end, dense_collapse, dense_end;
	long current_kb, limit_mb;
	char limit[32];
	int err = 0;
	pid_t pid = -1;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || cg_create("bs", NULL))
		return 1;
	memset(sh, 0, sizeof(*sh));
	/* frugal's footprint, touched + growth, and 10% */
	limit_mb = ((touched_kb >> 10) + mb / 8) * 11 / 10;
	snprintf(limit, sizeof(limit), "%ldM", limit_mb);
	if ((c->limit == LIMIT_START && write_str(CGROOT "bs/memory.high", limit)) ||
	    run_cmd(out, sizeof(out), "collapsectl load " BPF "%s.bpf.o --cgroup "
		    CGROOT "bs", c->policy)) {
		fprintf(stderr, "collapse_bench: %s on bs: %s\n", c->policy, out);
		err = 1;
		goto remove;
	}
	pid = start_in_cgroup("bs", split_child, sh);
	if (pid < 0 || !split_wait(sh, pid, 1)) {
		fprintf(stderr, "collapse_bench: split: the child did not collapse\n");
		err = 1;
		goto kill;
	}
	cov_collapse = anon_huge_kb(pid, sh->heap, len) * 100.0 / (len >> 10);
	dense_collapse = split_dense_coverage(pid, sh->heap);
	if (c->limit == LIMIT_LATE && write_str(CGROOT "bs/memory.high", limit)) {
		err = 1;
		goto kill;
	}
	if (split_grow(sh, c, limit_mb, pid) || !split_wait(sh, pid, 3)) {
		fprintf(stderr, "collapse_bench: split: the child did not grow\n");
		err = 1;
		goto kill;
	}
	cov_end = anon_huge_kb(pid, sh->heap, len) * 100.0 / (len >> 10);
	dense_end = split_dense_coverage(pid, sh->heap);
	current_kb = read_num(CGROOT "bs/memory.current") / 1024;
	if (!sh->intact) {
		fprintf(stderr, "collapse_bench: split: %s: the heap did not read back\n",
			c->name);
		err = 1;
	}
	if (rep >= 0 && !err)
		printf("BENCH {\"bench\": \"split\", \"case\": \"%s\", \"rep\": %d, "
		       "\"mib\": %lu, \"ok\": 1, \"limit_mib\": %ld, \"touched_kb\": %lu, "
		       "\"coverage_collapse_pct\": %.2f, \"coverage_end_pct\": %.2f, "
		       "\"dense_collapse_pct\": %.2f, \"dense_end_pct\": %.2f, "
		       "\"current_kb\": %ld, \"peak_kb\": %ld, \"high_events\": %ld, "
		       "\"swap_peak_kb\": %ld, \"grow_s\": %.3f, \"underused_split\": %ld}\n",
		       c->name, rep, mb, c->limit != LIMIT_NONE ? limit_mb : -1, touched_kb,
		       cov_collapse, cov_end, dense_collapse, dense_end, current_kb,
		       read_num(CGROOT "bs/memory.peak") / 1024,
		       cg_event("memory.events", "high"),
		       read_num(CGROOT "bs/memory.swap.peak") / 1024, sh->grow_s,
		       policy_stat(c->policy, "underused_split"));
kill:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	run_cmd(out, sizeof(out), "collapsectl unload %s", c->policy);
remove:
	cg_remove("bs");
	munmap(sh, sizeof(*sh));
	return err;
}

static int split(void)
{
	int order[NR_SPLIT_CASES], r, i, rc = 0;

	if (!kernel_has_hook("split_underused")) {
		printf("collapse_bench: split: skipped, this kernel has no "
		       "split_underused hook\n");
		return 0;
	}
	write_str(CGROOT "cgroup.subtree_control", "+memory");
	for (i = 0; i < NR_SPLIT_CASES; i++)
		order[i] = i;
	for (r = -1; r < reps && !rc; r++) {	/* r == -1: warm up */
		shuffle(order, NR_SPLIT_CASES);
		for (i = 0; i < NR_SPLIT_CASES && !rc; i++)
			rc = split_sample(&split_cases[order[i]], r);
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mb", required_argument, NULL, 'm' },
		{ "reps", required_argument, NULL, 'r' },
		{ }
	};
	int c;

	if (argc < 2) {
		fprintf(stderr, "usage: collapse_bench hooks|scale|batch|batch-remote|"
			"khugepaged|khugepaged-stalls|khugepaged-cgroups|memcpy|orders|"
			"split [--mb N] [--reps N]\n");
		return 2;
	}
	optind = 2;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'm')
			mb = strtoul(optarg, NULL, 0) & ~1UL;
		else if (c == 'r')
			reps = atoi(optarg);
		else
			return 2;
	}
	if (mb < 2 || reps < 1) {
		fprintf(stderr, "collapse_bench: --mb needs >= 2, --reps >= 1\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	srand(time(NULL) ^ getpid());
	if (!strcmp(argv[1], "hooks"))
		return hooks();
	if (!strcmp(argv[1], "batch"))
		return batch();
	if (!strcmp(argv[1], "batch-remote"))
		return batch_remote();
	if (!strcmp(argv[1], "scale"))
		return scale();
	if (!strcmp(argv[1], "khugepaged"))
		return khugepaged();
	if (!strcmp(argv[1], "khugepaged-stalls"))
		return khugepaged_stalls();
	if (!strcmp(argv[1], "khugepaged-cgroups"))
		return khugepaged_cgroups();
	if (!strcmp(argv[1], "memcpy"))
		return memcpy_bw();
	if (!strcmp(argv[1], "orders"))
		return orders();
	if (!strcmp(argv[1], "split"))
		return split();
	fprintf(stderr, "collapse_bench: unknown benchmark '%s'\n", argv[1]);
	return 2;
}
