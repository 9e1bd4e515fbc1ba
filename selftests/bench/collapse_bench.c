// SPDX-License-Identifier: GPL-2.0
/*
 * collapse_bench: the in-guest half of `make bench`. Each subcommand
 * measures one thing and prints one "BENCH {json}" line per result for the
 * host (selftests/bench/run-bench.sh) to tabulate and plot.
 *
 *   collapse_bench hooks [--mb N] [--reps N]  MADV_COLLAPSE time per GiB with
 *                                             no policy, passthrough at the
 *                                             root, passthrough 3 levels up
 *   collapse_bench batch [--mb N]             batch sizes 1, 8, 64: time per
 *                                             GiB and another thread's
 *                                             mmap+fault latency
 *   collapse_bench khugepaged [--mb N]        time to 90% coverage: default,
 *                                             eager, pages_to_scan x8
 *   collapse_bench memcpy [--mb N]            2 MiB memcpy bandwidth vs
 *                                             collapse throughput
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "run_cmd.h"
#include "bench_batch.skel.h"

#define BPF "/usr/share/collapse_ext/bpf/"

static char out[1 << 14];
static unsigned long mb = 256;
static int reps = 5;

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

/* Seconds for one MADV_COLLAPSE over @mib freshly faulted MiB. */
static double collapse_once(unsigned long mib)
{
	struct region r;
	double t;

	if (region_map(&r, mib / 2))
		return -1;
	region_fill(&r, NULL);
	t = now();
	if (madvise(r.p, r.len, MADV_COLLAPSE))
		fprintf(stderr, "collapse_bench: MADV_COLLAPSE: %s\n", strerror(errno));
	t = now() - t;
	region_unmap(&r);
	return t;
}

/* Median seconds per GiB over @reps fresh mappings. */
static double collapse_per_gib(unsigned long mib, int n)
{
	double t[32];
	int i;

	collapse_once(mib);	/* warm up */
	for (i = 0; i < n && i < 32; i++)
		t[i] = collapse_once(mib) * 1024 / mib;
	qsort(t, i, sizeof(t[0]), cmp_double);
	return t[i / 2];
}

/* One timed collapse in a child (in a cgroup), result through shared memory */
static double *shared_result;

static int timed_in_cgroup(void *arg)
{
	*shared_result = collapse_once(mb) * 1024 / mb;
	return 0;
}

static double timed(const char *cg)
{
	*shared_result = -1;
	run_in_cgroup(cg, timed_in_cgroup, NULL);
	return *shared_result;
}

static long hook_calls(const char *policy)
{
	return policy_stat(policy, "calls_pte_limits") +
	       policy_stat(policy, "calls_target_node") +
	       policy_stat(policy, "calls_batch_size");
}

static void report(const char *c, double *t, int n, long calls, long pmds)
{
	qsort(t, n, sizeof(t[0]), cmp_double);
	printf("BENCH {\"bench\": \"hooks\", \"case\": \"%s\", \"mib\": %lu, "
	       "\"reps\": %d, \"s_per_gib\": %.4f, \"min\": %.4f, \"max\": %.4f, "
	       "\"hook_calls_per_collapse\": %ld, \"pmds_per_collapse\": %ld}\n",
	       c, mb, n, t[n / 2], t[0], t[n - 1], calls, pmds);
}

/*
 * The three cases interleaved, rep after rep, so that drift of the host
 * (other load, TCG warm-up) hits them alike; medians reported.
 */
static int hooks(void)
{
	double none[32], root[32], nested[32], leaf[32];
	long calls_root = 0, calls_nested = 0, pmds = 0;
	bool patched = !access(CE_SYSFS "policies", F_OK);
	int r, n = reps < 32 ? reps : 32;

	shared_result = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared_result == MAP_FAILED)
		return 1;
	if (patched) {
		/* policy on /b1, process in /b1/b2/b3: a three-level walk up */
		cg_create("b1", NULL);
		cg_create("b1/b2", NULL);
		cg_create("b1/b2/b3", NULL);
		cg_create("bleaf", NULL);
	}
	timed("");	/* warm up */
	for (r = 0; r < n; r++) {
		none[r] = timed("");
		if (!patched)
			continue;
		if (run_cmd(out, sizeof(out), "collapsectl load " BPF "passthrough.bpf.o"))
			return fprintf(stderr, "%s", out), 1;
		root[r] = timed("");
		calls_root = hook_calls("passthrough");
		pmds = policy_stat("passthrough", "ranges_scanned");
		run_cmd(out, sizeof(out), "collapsectl unload passthrough");
		if (run_cmd(out, sizeof(out), "collapsectl load " BPF "passthrough.bpf.o "
			    "--cgroup " CGROOT "b1"))
			return fprintf(stderr, "%s", out), 1;
		nested[r] = timed("b1/b2/b3");
		calls_nested = hook_calls("passthrough");
		run_cmd(out, sizeof(out), "collapsectl unload passthrough");
		/* a policy on an unrelated leaf: the workload in the root pays
		 * one lookup per request, no hook call */
		if (run_cmd(out, sizeof(out), "collapsectl load " BPF "passthrough.bpf.o "
			    "--cgroup " CGROOT "bleaf"))
			return fprintf(stderr, "%s", out), 1;
		leaf[r] = timed("");
		run_cmd(out, sizeof(out), "collapsectl unload passthrough");
	}
	report("none", none, n, 0, mb / 2);
	if (patched) {
		report("passthrough_root", root, n, calls_root, pmds);
		report("passthrough_nested", nested, n, calls_nested, pmds);
		report("unrelated_leaf_policy", leaf, n, 0, pmds);
		cg_remove("bleaf");
		cg_remove("b1/b2/b3");
		cg_remove("b1/b2");
		cg_remove("b1");
	}
	return 0;
}

/* Another thread maps and touches fresh 64 KiB chunks, timing each. */
struct prober {
	volatile int stop;
	double lat[200000];
	int n;
};

static void *probe(void *arg)
{
	struct prober *p = arg;

	while (!p->stop && p->n < 200000) {
		double t = now();
		char *c = mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (c == MAP_FAILED)
			break;
		for (int i = 0; i < 16; i++)
			c[i * PAGE_SZ] = 1;
		p->lat[p->n++] = now() - t;
		munmap(c, 64 << 10);
	}
	return NULL;
}

static int batch(void)
{
	static const unsigned int sizes[] = { 1, 8, 64 };
	static struct prober pr;

	for (size_t i = 0; i < 3; i++) {
		struct bench_batch *skel = bench_batch__open();
		struct bpf_link *link;
		struct region r;
		pthread_t t;
		double s;

		if (!skel)
			return 1;
		skel->rodata->batch_pmds = sizes[i];
		if (bench_batch__load(skel) ||
		    !(link = bpf_map__attach_struct_ops(skel->maps.bench_batch))) {
			fprintf(stderr, "collapse_bench: cannot attach the batch policy\n");
			return 1;
		}
		if (region_map(&r, mb / 2))
			return 1;
		region_fill(&r, NULL);
		memset(&pr, 0, sizeof(pr));
		pthread_create(&t, NULL, probe, &pr);
		usleep(100000);
		s = now();
		madvise(r.p, r.len, MADV_COLLAPSE);
		s = now() - s;
		pr.stop = 1;
		pthread_join(t, NULL);
		qsort(pr.lat, pr.n, sizeof(pr.lat[0]), cmp_double);
		printf("BENCH {\"bench\": \"batch\", \"batch\": %u, \"mib\": %lu, "
		       "\"s_per_gib\": %.4f, \"probes\": %d, \"p50_us\": %.1f, "
		       "\"p99_us\": %.1f, \"max_us\": %.1f, \"batches\": %ld}\n",
		       sizes[i], mb, s * 1024 / mb, pr.n,
		       pr.n ? pr.lat[pr.n / 2] * 1e6 : 0,
		       pr.n ? pr.lat[pr.n * 99 / 100] * 1e6 : 0,
		       pr.n ? pr.lat[pr.n - 1] * 1e6 : 0,
		       policy_stat("bench_batch", "batches"));
		fflush(stdout);
		region_unmap(&r);
		bpf_link__destroy(link);
		bench_batch__destroy(skel);
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

/* Seconds until 90% of @mib of MADV_HUGEPAGE memory is huge (0: never). */
static double coverage(const char *c, unsigned long pages)
{
	struct region r;
	double t0, cpu0, t = 0;

	write_num(KHUGEPAGED "pages_to_scan", pages);
	if (region_map(&r, mb / 2))
		return -1;
	region_fill(&r, NULL);
	cpu0 = khugepaged_cpu();
	t0 = now();
	madvise(r.p, r.len, MADV_HUGEPAGE);
	while (now() - t0 < 120) {
		unsigned long kb = anon_huge_kb(0, r.p, r.len);

		printf("SERIES khugepaged %s %.2f %.1f\n", c, now() - t0,
		       kb * 100.0 / (r.len / 1024));
		if (kb * 10 >= r.len / 1024 * 9) {
			t = now() - t0;
			break;
		}
		usleep(250000);
	}
	printf("BENCH {\"bench\": \"khugepaged\", \"case\": \"%s\", \"mib\": %lu, "
	       "\"pages_to_scan\": %lu, \"s_to_90pct\": %.2f, \"khugepaged_cpu_s\": %.2f}\n",
	       c, mb, pages, t, khugepaged_cpu() - cpu0);
	fflush(stdout);
	region_unmap(&r);
	return t;
}

static int khugepaged(void)
{
	struct thp_settings s;
	int rc = 0;

	thp_save_settings();
	thp_read_settings(&s);
	/* The default 10 s sleep would take minutes: 1 s for all three. */
	s.khugepaged.scan_sleep_millisecs = 1000;
	s.thp_enabled = THP_MADVISE;
	thp_push_settings(&s);
	coverage("default", 4096);
	if (run_cmd(out, sizeof(out), "collapsectl load " BPF "eager.bpf.o")) {
		fprintf(stderr, "%s", out);
		rc = 1;
	} else {
		coverage("eager", 4096);
		run_cmd(out, sizeof(out), "collapsectl unload eager");
		coverage("pages_to_scan_x8", 8 * 4096);
	}
	thp_restore_settings();
	return rc;
}

static int memcpy_bw(void)
{
	struct region src, dst;
	double t, copy, col;
	int i, n = 4;

	if (region_map(&src, mb / 2) || region_map(&dst, mb / 2))
		return 1;
	region_fill(&src, NULL);
	memset(dst.p, 0, dst.len);
	t = now();
	for (i = 0; i < n; i++)
		for (size_t off = 0; off < src.len; off += HPAGE_SZ)
			memcpy(dst.p + off, src.p + off, HPAGE_SZ);
	copy = (double)src.len * n / (now() - t) / (1 << 20);
	col = 1024 / collapse_per_gib(mb, 3);
	printf("BENCH {\"bench\": \"memcpy\", \"mib\": %lu, \"memcpy_mib_s\": %.1f, "
	       "\"collapse_mib_s\": %.1f, \"ratio\": %.3f}\n", mb, copy, col,
	       col / copy);
	region_unmap(&src);
	region_unmap(&dst);
	return 0;
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
		fprintf(stderr, "usage: collapse_bench hooks|batch|khugepaged|memcpy "
			"[--mb N] [--reps N]\n");
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
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[1], "hooks"))
		return hooks();
	if (!strcmp(argv[1], "batch"))
		return batch();
	if (!strcmp(argv[1], "khugepaged"))
		return khugepaged();
	if (!strcmp(argv[1], "memcpy"))
		return memcpy_bw();
	fprintf(stderr, "collapse_bench: unknown benchmark '%s'\n", argv[1]);
	return 2;
}
