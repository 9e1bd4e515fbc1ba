// SPDX-License-Identifier: GPL-2.0
/*
 * split_underused: the deferred split shrinker asks the policy of a THP's
 * memcg, once per candidate, with the folio's cgroup, order, size, the
 * memcg's headroom and the kernel's threshold; DEFAULT counts with the
 * kernel's early exits, COUNT gives the exact count and asks again; SPLIT,
 * KEEP and LATER are honoured, under memory.reclaim pressure too; nonsense
 * splits nothing and is counted; THPs of other cgroups follow the
 * kernel's rule; a split THP keeps its contents and gives its zero-filled
 * subpages back. The counters are checked against the kernel's vmstat
 * and memory.current.
 *
 * drop_caches (2) runs every memcg's shrinkers at priority 0: the whole
 * deferred split queue of each is scanned once.
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "knobs.h"
#include "run_cmd.h"
#include "kselftest_harness.h"

#define CG_A		"ce_split_a"
#define CG_B		"ce_split_b"
#define NR_THPS		4
#define FILLED		10	/* pages written per THP: 502 zero-filled */
#define HIGH_MB		64	/* CG_A's memory.high */

/* DEFAULT..COUNT: enum collapse_ext_underused_verdict */
#define V_DEFAULT	0
#define V_SPLIT		1
#define V_KEEP		2
#define V_LATER		3
#define V_COUNT		4

FIXTURE(split)
{
	uint64_t a, b;
	struct knobs *skel;
	struct bpf_link *link;
	struct region ra, rb;
	bool pushed;
};

/* A's policy must be asked about A's THPs only, and B's not at all */
FIXTURE_SETUP(split)
{
	struct thp_settings s;

	if (!kernel_has_hook("split_underused"))
		SKIP(return, "the kernel has no split_underused hook");
	thp_save_settings();
	thp_read_settings(&s);
	/* 511: the kernel itself never splits an underused THP */
	s.khugepaged.max_ptes_none = HPAGE_NR - 1;
	thp_push_settings(&s);
	self->pushed = true;
	ASSERT_EQ(0, cg_create(CG_A, &self->a));
	ASSERT_EQ(0, cg_create(CG_B, &self->b));
	ASSERT_EQ(0, write_num(CGROOT CG_A "/memory.high", HIGH_MB << 20));
	/* The guest swaps to zram: reclaim must find nothing but the THPs */
	ASSERT_EQ(0, write_num(CGROOT CG_A "/memory.swap.max", 0));
	ASSERT_EQ(0, write_num(CGROOT CG_B "/memory.swap.max", 0));
	self->skel = knobs_load(NULL, self->a);
	ASSERT_NE(NULL, self->skel);
}

FIXTURE_TEARDOWN(split)
{
	cg_move("", getpid());
	region_unmap(&self->ra);
	region_unmap(&self->rb);
	bpf_link__destroy(self->link);
	knobs__destroy(self->skel);
	cg_remove(CG_A);
	cg_remove(CG_B);
	if (self->pushed)
		thp_restore_settings();
}

static char out[16384];

/* THP n of a region has filled[n] pages written (the first ones) */
static size_t filled[32];

static bool skip_unfilled(size_t page)
{
	return page % HPAGE_NR >= filled[page / HPAGE_NR];
}

/*
 * Map @nr THPs in cgroup @cg, THP n with its first @fill[n] pages
 * written, collapsed by MADV_COLLAPSE (charged to @cg): queued on @cg's
 * deferred split queue. The test process stays in @cg.
 */
static int sparse_thps(struct region *r, const char *cg, size_t nr,
		       const size_t *fill)
{
	for (size_t i = 0; i < nr; i++)
		filled[i] = fill[i];
	if (cg_move(cg, getpid()) || region_map(r, nr))
		return -1;
	region_fill(r, skip_unfilled);
	if (madvise(r->p, r->len, MADV_COLLAPSE) || !range_is_huge(0, r->p, r->len))
		return -1;
	return 0;
}

static const size_t sparse[NR_THPS] = { FILLED, FILLED, FILLED, FILLED };

#define SPLIT_EVENT	TRACING "events/thp/mm_collapse_ext_split_underused/enable"

/* Occurrences of @needle in @hay */
static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* Run every memcg's deferred split shrinker over its whole queue */
static int shrink_all(void)
{
	return write_str("/proc/sys/vm/drop_caches", "2");
}

/* No 2 MiB of @r is still one THP (pagemap: vmas of two regions merge) */
static bool none_huge(struct region *r)
{
	for (size_t off = 0; off < r->len; off += HPAGE_SZ)
		if (range_is_huge(0, r->p + off, HPAGE_SZ))
			return false;
	return true;
}

/*
 * The deferred split shrinker's debugfs file @file (CONFIG_SHRINKER_DEBUG):
 * "count" lists the memcgs whose count is not 0, "scan" runs one scan.
 */
static int ds_file(char *path, size_t len, const char *file)
{
	glob_t g;
	int ret = -1;

	if (glob("/sys/kernel/debug/shrinker/thp-deferred_split-*", 0, NULL, &g))
		return -1;
	if (g.gl_pathc == 1)
		ret = snprintf(path, len, "%s/%s", g.gl_pathv[0], file) >= (int)len;
	globfree(&g);
	return ret;
}

/*
 * A memcg's deferred split queue: one per node on 7.3 (a list_lru), one
 * for all nodes on 6.12, which every node's count and scan reaches.
 */
static bool queue_per_node(void)
{
	struct utsname u;

	return uname(&u) || strncmp(u.release, "6.12", 4);
}

/* The shrinker's count for the memcg of cgroup @id, all nodes: -1 on error */
static long ds_count(uint64_t id)
{
	char path[256], line[512];
	long count = 0;
	FILE *f;

	if (ds_file(path, sizeof(path), "count"))
		return -1;
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		if (strtoull(p, &end, 10) != id || end == p)
			continue;
		for (p = end; ; p = end) {
			long n = strtol(p, &end, 10);

			if (end == p)
				break;
			count = queue_per_node() ? count + n : n;
		}
	}
	fclose(f);
	return count;
}

/* One scan of the queue of cgroup @id's memcg on every node: @nr each */
static int ds_scan(uint64_t id, long nr)
{
	char path[256], cmd[96];

	if (ds_file(path, sizeof(path), "scan"))
		return -1;
	for (int nid = 0; nid < (queue_per_node() ? 2 : 1); nid++) {
		snprintf(cmd, sizeof(cmd), "%llu %d %ld",
			 (unsigned long long)id, nid, nr);
		if (write_str(path, cmd))
			return -1;
	}
	return 0;
}

static void attach(struct __test_metadata *_metadata, FIXTURE_DATA(split) *self)
{
	self->link = knobs_attach(self->skel);
	ASSERT_NE(NULL, self->link);
}

/*
 * sysfs max_ptes_none 100 (the kernel would split A's THPs; popped by the
 * caller), A's policy answering @verdict, NR_THPS sparse THPs in A.
 */
static void sparse_at_100(struct __test_metadata *_metadata,
			  FIXTURE_DATA(split) *self, int verdict)
{
	struct thp_settings s = *thp_current_settings();

	s.khugepaged.max_ptes_none = 100;
	thp_push_settings(&s);
	self->skel->data->underused_verdict = verdict;
	attach(_metadata, self);
	ASSERT_EQ(0, sparse_thps(&self->ra, CG_A, NR_THPS, sparse));
}

/*
 * COUNT, then DEFAULT with max_zero 256: asked twice per THP, with the
 * ctx of the folio; split; every counter exact; the kernel's own vmstat
 * and A's memory.current agree; the contents are intact.
 */
TEST_F(split, counted_split_and_ctx)
{
	long splits = vmstat("thp_underused_split_page"), before, after;
	char want[128];

	self->skel->data->underused_verdict = V_COUNT;
	self->skel->data->underused_max_zero = 256;
	attach(_metadata, self);
	ASSERT_EQ(0, sparse_thps(&self->ra, CG_A, NR_THPS, sparse));
	ASSERT_EQ(0, tracing_mount());
	ASSERT_EQ(0, truncate_file(TRACING "trace"));
	ASSERT_EQ(0, write_str(SPLIT_EVENT, "1"));
	before = cg_current_kb(CG_A);
	ASSERT_EQ(0, shrink_all());
	after = cg_current_kb(CG_A);
	write_str(SPLIT_EVENT, "0");
	/* the tracepoint: one verdict per THP, with the exact count */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "cat " TRACING "trace"));
	snprintf(want, sizeof(want), "cgroup_id=%llu order=9 nr_zero=%lu max_zero=256",
		 (unsigned long long)self->a, HPAGE_NR - FILLED);
	EXPECT_EQ(NR_THPS, count_of(out, want)) TH_LOG("%s", out);
	EXPECT_EQ(NR_THPS, count_of(out, "verdict=split")) TH_LOG("%s", out);

	EXPECT_EQ(NR_THPS, self->skel->bss->nr_underused_first);
	EXPECT_EQ(2 * NR_THPS, self->skel->bss->nr_split_underused);
	EXPECT_EQ(self->a, self->skel->bss->su_cgroup_id);
	EXPECT_EQ(9, self->skel->bss->su_order);
	EXPECT_EQ(HPAGE_NR, self->skel->bss->su_nr_pages);
	/* 511 splits nothing: the kernel says so with nr_pages */
	EXPECT_EQ(HPAGE_NR, self->skel->bss->su_max_zero);
	EXPECT_EQ(0, self->skel->bss->su_nr_zero);	/* not counted yet */
	EXPECT_EQ(page_node(self->ra.p), (int)self->skel->bss->su_nid);
	/* below A's memory.high, less what A held (within a THP), when the
	 * first THP was asked about */
	EXPECT_GT(self->skel->bss->su_headroom, 0);
	EXPECT_LE(self->skel->bss->su_headroom, (HIGH_MB << 20) / PAGE_SZ);
	EXPECT_GE(self->skel->bss->su_headroom + HPAGE_NR,
		  ((HIGH_MB << 10) - before) / 4);
	EXPECT_LE(self->skel->bss->su_headroom,
		  ((HIGH_MB << 10) - before) / 4 + HPAGE_NR);
	EXPECT_EQ(NR_THPS * (HPAGE_NR - FILLED), self->skel->bss->su_zero_sum);

	EXPECT_EQ(2 * NR_THPS, policy_stat("knobs", "calls_split_underused"));
	EXPECT_EQ(NR_THPS, policy_stat("knobs", "underused_candidates"));
	EXPECT_EQ(NR_THPS, policy_stat("knobs", "underused_split"));
	EXPECT_EQ(0, policy_stat("knobs", "underused_split_failed"));
	EXPECT_EQ(0, policy_stat("knobs", "underused_kept"));
	EXPECT_EQ(0, policy_stat("knobs", "underused_later"));
	EXPECT_EQ(NR_THPS * (HPAGE_NR - FILLED),
		  policy_stat("knobs", "underused_zero_pages"));
	EXPECT_EQ(NR_THPS * HPAGE_NR, policy_stat("knobs", "underused_pages_compared"));
	EXPECT_EQ(0, policy_stat("knobs", "underused_clamped"));

	/* what collapsectl and a Prometheus scrape read: the same counters */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl stats --openmetrics"));
	EXPECT_NE(NULL, strstr(out, "collapse_ext_underused_split_total{policy=\"knobs\","
			       "cgroup=\"/" CG_A "\"} 4\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "collapse_ext_hook_calls_total{policy=\"knobs\","
			       "cgroup=\"/" CG_A "\",hook=\"split_underused\"} 8\n"))
		TH_LOG("%s", out);

	EXPECT_EQ(NR_THPS, vmstat("thp_underused_split_page") - splits);
	EXPECT_TRUE(none_huge(&self->ra));
	/* the zero-filled subpages went back: the shared zero page maps them */
	EXPECT_LE(after, before - NR_THPS * (HPAGE_NR - FILLED) * 4 * 9 / 10);
	EXPECT_TRUE(region_check(&self->ra, skip_unfilled));
}

/*
 * DEFAULT without a max_zero of the policy's is the kernel's threshold,
 * sysfs's max_ptes_none, off its default: 64 splits the THP with 502
 * zero-filled subpages and keeps the one with 32; the policy is told 64.
 */
TEST_F(split, default_follows_a_non_default_sysfs_threshold)
{
	static const size_t fill[2] = { FILLED, 480 };
	struct thp_settings s;

	thp_read_settings(&s);
	s.khugepaged.max_ptes_none = 64;
	thp_push_settings(&s);
	attach(_metadata, self);
	ASSERT_EQ(0, sparse_thps(&self->ra, CG_A, 2, fill));
	ASSERT_EQ(0, shrink_all());
	thp_pop_settings();

	EXPECT_EQ(64, self->skel->bss->su_max_zero);
	EXPECT_EQ(2, policy_stat("knobs", "underused_candidates"));
	EXPECT_EQ(1, policy_stat("knobs", "underused_split"));
	EXPECT_EQ(1, policy_stat("knobs", "underused_kept"));
	EXPECT_EQ(65, policy_stat("knobs", "underused_zero_pages"));
	EXPECT_TRUE(none_huge(&(struct region){ .p = self->ra.p, .len = HPAGE_SZ }));
	EXPECT_TRUE(range_is_huge(0, self->ra.p + HPAGE_SZ, HPAGE_SZ));
	EXPECT_TRUE(region_check(&self->ra, skip_unfilled));
}

/*
 * DEFAULT with max_zero 100 counts as the kernel does, stopping early: a
 * THP with 10 pages written is split once its 101st zero subpage is seen
 * (111 compared), one with 480 written is kept once 412 are seen filled.
 */
TEST_F(split, default_counts_with_early_exit)
{
	static const size_t fill[2] = { FILLED, 480 };

	self->skel->data->underused_max_zero = 100;
	attach(_metadata, self);
	ASSERT_EQ(0, sparse_thps(&self->ra, CG_A, 2, fill));
	ASSERT_EQ(0, shrink_all());

	EXPECT_EQ(2, policy_stat("knobs", "calls_split_underused"));
	EXPECT_EQ(2, policy_stat("knobs", "underused_candidates"));
	EXPECT_EQ(1, policy_stat("knobs", "underused_split"));
	EXPECT_EQ(1, policy_stat("knobs", "underused_kept"));
	EXPECT_EQ(101, policy_stat("knobs", "underused_zero_pages"));
	EXPECT_EQ(111 + 412, policy_stat("knobs", "underused_pages_compared"));
	EXPECT_TRUE(none_huge(&(struct region){ .p = self->ra.p, .len = HPAGE_SZ }));
	EXPECT_TRUE(range_is_huge(0, self->ra.p + HPAGE_SZ, HPAGE_SZ));
	EXPECT_TRUE(region_check(&self->ra, skip_unfilled));
}

/*
 * The kernel would split (max_ptes_none 100); KEEP keeps the THPs whole
 * and takes them off the queue: not asked again.
 */
TEST_F(split, keep_honoured_and_dequeued)
{
	sparse_at_100(_metadata, self, V_KEEP);
	ASSERT_EQ(0, shrink_all());
	EXPECT_EQ(100, self->skel->bss->su_max_zero);
	EXPECT_EQ(NR_THPS, policy_stat("knobs", "underused_kept"));
	EXPECT_EQ(0, policy_stat("knobs", "underused_pages_compared"));
	ASSERT_EQ(0, shrink_all());
	EXPECT_EQ(NR_THPS, policy_stat("knobs", "underused_candidates"));
	EXPECT_TRUE(range_is_huge(0, self->ra.p, self->ra.len));
	EXPECT_EQ(0, policy_stat("knobs", "underused_split"));
	thp_pop_settings();
}

/* split_underused's bound on LATER: include/linux/collapse_ext.h */
#define LATER_MAX	8
#define LATER_MAX_S	30

/*
 * LATER keeps them whole and queued under A's own reclaim
 * (memory.reclaim far beyond what it could free, scanning the queue many
 * times): one reclaim counts one LATER a second, so the bound (8, the
 * 8th 7 s after the first at the earliest) is not reached by a reclaim
 * shorter than 7 s. B's THPs, under the kernel's rule at the same
 * max_ptes_none, split.
 */
TEST_F(split, later_honoured_under_reclaim)
{
	struct timespec t0, t1;
	long asked;
	double t;

	sparse_at_100(_metadata, self, V_LATER);
	ASSERT_EQ(0, sparse_thps(&self->rb, CG_B, NR_THPS, sparse));
	ASSERT_EQ(0, cg_move("", getpid()));

	/* nothing to reclaim without swap: EAGAIN after every priority */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	write_str(CGROOT CG_A "/memory.reclaim", "256M");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	t = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	asked = policy_stat("knobs", "underused_candidates");
	EXPECT_LE(NR_THPS, asked);
	EXPECT_EQ(asked, policy_stat("knobs", "underused_later"));
	if (t < LATER_MAX - 1) {
		EXPECT_TRUE(range_is_huge(0, self->ra.p, self->ra.len));
		EXPECT_EQ(0, policy_stat("knobs", "underused_split"));
		EXPECT_EQ(NR_THPS * HPAGE_NR, ds_count(self->a));
	} else {
		TH_LOG("the reclaim took %.1f s: the bound may be reached", t);
	}
	EXPECT_TRUE(region_check(&self->ra, skip_unfilled));

	/* B's, under the kernel's rule, split; never asked of A's policy */
	write_str(CGROOT CG_B "/memory.reclaim", "256M");
	EXPECT_TRUE(none_huge(&self->rb));
	EXPECT_EQ(self->a, self->skel->bss->su_cgroup_id);
	EXPECT_TRUE(region_check(&self->rb, skip_unfilled));
	thp_pop_settings();
}

/*
 * The bound on LATER, scan by scan (the shrinker's debugfs scan file, one
 * scan of each node's queue at a time): 8 scans a second apart ask the
 * policy, which answers LATER, and keep the THPs whole and queued (a 9th
 * ask right after the first is not counted); the next scan gives them the
 * kernel's rule, 100, which splits them, the policy unasked.
 */
TEST_F_TIMEOUT(split, later_bounded_by_its_answers, 120)
{
	sparse_at_100(_metadata, self, V_LATER);
	ASSERT_EQ(0, cg_move("", getpid()));
	for (int i = 0; i < LATER_MAX; i++) {
		if (i)
			sleep(1);
		/* no verdict yet: a THP counts for HPAGE_NR pages */
		ASSERT_EQ(0, ds_scan(self->a, NR_THPS * HPAGE_NR));
		if (!i)
			ASSERT_EQ(0, ds_scan(self->a, NR_THPS * HPAGE_NR));
		EXPECT_EQ((i + 2) * NR_THPS, self->skel->bss->nr_split_underused);
		EXPECT_TRUE(range_is_huge(0, self->ra.p, self->ra.len));
		EXPECT_EQ(NR_THPS * HPAGE_NR, ds_count(self->a));
	}
	ASSERT_EQ(0, ds_scan(self->a, NR_THPS * HPAGE_NR));
	EXPECT_EQ((LATER_MAX + 1) * NR_THPS, self->skel->bss->nr_split_underused);
	EXPECT_EQ((LATER_MAX + 1) * NR_THPS, policy_stat("knobs", "underused_later"));
	EXPECT_EQ(NR_THPS, policy_stat("knobs", "underused_split"));
	EXPECT_TRUE(none_huge(&self->ra));
	EXPECT_TRUE(region_check(&self->ra, skip_unfilled));
	thp_pop_settings();
}

/*
 * The bound on LATER in time: a THP first answered LATER more than 30 s
 * before a scan gets the kernel's rule at that scan, however few times it
 * was asked; at max_ptes_none 511 it is kept whole and leaves the queue.
 */
TEST_F_TIMEOUT(split, later_bounded_by_its_age, 120)
{
	self->skel->data->underused_verdict = V_LATER;
	attach(_metadata, self);
	ASSERT_EQ(0, sparse_thps(&self->ra, CG_A, NR_THPS, sparse));
	ASSERT_EQ(0, cg_move("", getpid()));
	ASSERT_EQ(0, ds_scan(self->a, NR_THPS * HPAGE_NR));
	EXPECT_EQ(NR_THPS, self->skel->bss->nr_split_underused);
	EXPECT_EQ(NR_THPS * HPAGE_NR, ds_count(self->a));
	sleep(LATER_MAX_S + 2);
	ASSERT_EQ(0, ds_scan(self->a, NR_THPS * HPAGE_NR));
	EXPECT_EQ(NR_THPS, self->skel->bss->nr_split_underused);
	EXPECT_EQ(NR_THPS, policy_stat("knobs", "underused_kept"));
	EXPECT_EQ(0, ds_count(self->a));
	EXPECT_TRUE(range_is_huge(0, self->ra.p, self->ra.len));
}

/*
 * A scan judges THPs until it compared 16 THPs' subpages (8192): COUNT
 * on 20 THPs of one node compares 16 of them whole in the first scan,
 * the other 4 wait queued, unasked, for the next.
 */
TEST_F(split, scan_compares_up_to_its_cap)
{
	size_t fill[20], n[2] = { 0, 0 };
	struct region r = { 0 };
	long first;

	self->skel->data->underused_verdict = V_COUNT;
	self->skel->data->underused_counted_verdict = V_KEEP;
	attach(_metadata, self);
	for (int i = 0; i < 20; i++)
		fill[i] = FILLED;
	ASSERT_EQ(0, sparse_thps(&r, CG_A, 20, fill));
	for (int i = 0; i < 20; i++)
		n[queue_per_node() ? page_node(r.p + i * HPAGE_SZ) & 1 : 0]++;
	ASSERT_EQ(0, cg_move("", getpid()));
	ASSERT_EQ(0, ds_scan(self->a, 20 * HPAGE_NR));
	first = (n[0] < 16 ? n[0] : 16) + (n[1] < 16 ? n[1] : 16);
	EXPECT_EQ(first, self->skel->bss->nr_underused_first);
	EXPECT_EQ(first * HPAGE_NR, policy_stat("knobs", "underused_pages_compared"));
	EXPECT_EQ(first, policy_stat("knobs", "underused_kept"));
	EXPECT_EQ(0, policy_stat("knobs", "underused_later"));
	/* kept whole: a THP now counts for 1 */
	EXPECT_EQ(20 - first, ds_count(self->a));
	ASSERT_EQ(0, ds_scan(self->a, 20));
	EXPECT_EQ(20, self->skel->bss->nr_underused_first);
	EXPECT_EQ(20 * HPAGE_NR, policy_stat("knobs", "underused_pages_compared"));
	EXPECT_EQ(0, ds_count(self->a));
	region_unmap(&r);
}

/*
 * The queue of a memcg whose policy has split_underused counts in pages:
 * a THP counts for HPAGE_NR before the policy's first verdict, then for
 * the zero-filled pages the THPs it judged gave back (502 each here);
 * B's queue, no policy's, counts its THPs, as on the base kernel.
 */
TEST_F(split, queue_counted_in_pages_it_gives_back)
{
	self->skel->data->underused_verdict = V_SPLIT;
	attach(_metadata, self);
	ASSERT_EQ(0, sparse_thps(&self->ra, CG_A, NR_THPS, sparse));
	ASSERT_EQ(0, sparse_thps(&self->rb, CG_B, NR_THPS, sparse));
	ASSERT_EQ(0, cg_move("", getpid()));
	EXPECT_EQ(NR_THPS * HPAGE_NR, ds_count(self->a));
	EXPECT_EQ(NR_THPS, ds_count(self->b));
	/* one THP's worth: one is split */
	ASSERT_EQ(0, ds_scan(self->a, HPAGE_NR));
	EXPECT_EQ(1, policy_stat("knobs", "underused_split"));
	EXPECT_EQ((NR_THPS - 1) * (HPAGE_NR - FILLED), ds_count(self->a));
	EXPECT_EQ(NR_THPS, ds_count(self->b));
	EXPECT_TRUE(region_check(&self->ra, skip_unfilled));
}

#define DENSE_MB	24
#define SPARSE_THPS	16

/*
 * memory.high written below usage (a host that got tight after the
 * collapse): the cgroup's reclaim reaches the split queue of A, whose
 * policy splits its sparse THPs (DEFAULT, max_zero 256), and stops once
 * their zero-filled pages cover what it had to reclaim: next to nothing
 * is swapped. B, the same memory under no policy, swaps what it is over.
 */
TEST_F_TIMEOUT(split, memory_high_below_usage_splits_before_swapping, 180)
{
	struct region dense[2] = { 0 }, *sp[2] = { &self->ra, &self->rb };
	const char *cg[2] = { CG_A, CG_B };
	size_t fill[SPARSE_THPS];
	long swapped[2], high;

	self->skel->data->underused_max_zero = 256;
	attach(_metadata, self);
	for (int i = 0; i < SPARSE_THPS; i++)
		fill[i] = 64;
	for (int i = 0; i < 2; i++) {
		char path[128];

		snprintf(path, sizeof(path), CGROOT "%s/memory.swap.max", cg[i]);
		ASSERT_EQ(0, write_str(path, "max"));
		snprintf(path, sizeof(path), CGROOT "%s/memory.high", cg[i]);
		ASSERT_EQ(0, write_str(path, "max"));
		ASSERT_EQ(0, sparse_thps(sp[i], cg[i], SPARSE_THPS, fill));
		ASSERT_EQ(0, region_map(&dense[i], DENSE_MB / 2));
		ASSERT_EQ(0, madvise(dense[i].p, dense[i].len, MADV_NOHUGEPAGE));
		region_fill(&dense[i], NULL);
		/* 16 MiB over: less than the 28 MiB of zeros the THPs hold */
		high = cg_current_kb(cg[i]) - (16 << 10);
		ASSERT_EQ(0, cg_move("", getpid()));
		snprintf(path, sizeof(path), CGROOT "%s/memory.high", cg[i]);
		ASSERT_EQ(0, write_num(path, high << 10));
		snprintf(path, sizeof(path), CGROOT "%s/memory.swap.current", cg[i]);
		swapped[i] = read_num(path) >> 10;
		EXPECT_GE(high, cg_current_kb(cg[i]));
	}
	TH_LOG("swapped: A %ld KiB, B %ld KiB; A split %ld", swapped[0],
	       swapped[1], policy_stat("knobs", "underused_split"));
	EXPECT_LE(8, policy_stat("knobs", "underused_split"));
	EXPECT_LE(12 << 10, swapped[1]);
	EXPECT_LE(swapped[0], swapped[1] / 10);
	for (int i = 0; i < 2; i++) {
		EXPECT_TRUE(region_check(sp[i], skip_unfilled));
		EXPECT_TRUE(region_check(&dense[i], NULL));
		region_unmap(&dense[i]);
	}
}

#define CG_A_CHILD	CG_A "/child"

/*
 * The same, with the policy and memory.high on A and the memory in A's
 * child: reclaim of A walks the child's memcg, whose THPs A's policy
 * governs, and splits them before the child's LRU; next to nothing is
 * swapped.
 */
TEST_F_TIMEOUT(split, parent_memory_high_splits_a_childs_thps_first, 180)
{
	struct region dense = { 0 };
	size_t fill[SPARSE_THPS];
	long high, swapped;

	self->skel->data->underused_max_zero = 256;
	attach(_metadata, self);
	for (int i = 0; i < SPARSE_THPS; i++)
		fill[i] = 64;
	ASSERT_EQ(0, write_str(CGROOT CG_A "/memory.swap.max", "max"));
	ASSERT_EQ(0, write_str(CGROOT CG_A "/memory.high", "max"));
	ASSERT_EQ(0, cg_memory_subtree(CG_A, true));
	ASSERT_EQ(0, cg_create(CG_A_CHILD, NULL));
	ASSERT_EQ(0, sparse_thps(&self->ra, CG_A_CHILD, SPARSE_THPS, fill));
	ASSERT_EQ(0, region_map(&dense, DENSE_MB / 2));
	ASSERT_EQ(0, madvise(dense.p, dense.len, MADV_NOHUGEPAGE));
	region_fill(&dense, NULL);
	ASSERT_EQ(0, cg_move("", getpid()));
	high = cg_current_kb(CG_A) - (16 << 10);
	ASSERT_EQ(0, write_num(CGROOT CG_A "/memory.high", high << 10));
	swapped = read_num(CGROOT CG_A "/memory.swap.current") >> 10;
	TH_LOG("swapped %ld KiB; split %ld", swapped,
	       policy_stat("knobs", "underused_split"));
	EXPECT_GE(high, cg_current_kb(CG_A));
	EXPECT_LE(8, policy_stat("knobs", "underused_split"));
	EXPECT_LE(swapped, 1 << 10);
	EXPECT_TRUE(region_check(&self->ra, skip_unfilled));
	EXPECT_TRUE(region_check(&dense, NULL));
	region_unmap(&dense);
	region_unmap(&self->ra);
	EXPECT_EQ(0, cg_remove(CG_A_CHILD));
}

/*
 * A link update between two scans of the queue: THPs the old policy
 * answered LATER stay queued, and the next scan asks the new policy only,
 * whose SPLIT is honoured; the counters go on across the update.
 */
TEST_F(split, verdict_follows_a_link_update)
{
	struct knobs *next = knobs_load(NULL, self->a);

	ASSERT_NE(NULL, next);
	self->skel->data->underused_verdict = V_LATER;
	next->data->underused_verdict = V_SPLIT;
	attach(_metadata, self);
	ASSERT_EQ(0, sparse_thps(&self->ra, CG_A, NR_THPS, sparse));
	ASSERT_EQ(0, shrink_all());
	EXPECT_TRUE(range_is_huge(0, self->ra.p, self->ra.len));
	EXPECT_LE(NR_THPS, self->skel->bss->nr_underused_first);
	EXPECT_EQ(self->skel->bss->nr_underused_first,
		  policy_stat("knobs", "underused_later"));

	ASSERT_EQ(0, bpf_link__update_map(self->link, next->maps.knobs));
	self->skel->bss->nr_split_underused = 0;
	ASSERT_EQ(0, shrink_all());
	EXPECT_EQ(0, self->skel->bss->nr_split_underused);
	EXPECT_EQ(NR_THPS, next->bss->nr_underused_first);
	EXPECT_EQ(self->a, next->bss->su_cgroup_id);
	EXPECT_EQ(NR_THPS, policy_stat("knobs", "underused_split"));
	EXPECT_EQ(self->skel->bss->nr_underused_first,
		  policy_stat("knobs", "underused_later"));
	EXPECT_TRUE(none_huge(&self->ra));
	EXPECT_TRUE(region_check(&self->ra, skip_unfilled));
	knobs__destroy(next);
}

/* SPLIT for A's THPs; B's, at 511, stay whole and are never asked about */
TEST_F(split, other_cgroups_unaffected)
{
	self->skel->data->underused_verdict = V_SPLIT;
	attach(_metadata, self);
	ASSERT_EQ(0, sparse_thps(&self->ra, CG_A, NR_THPS, sparse));
	ASSERT_EQ(0, sparse_thps(&self->rb, CG_B, NR_THPS, sparse));
	ASSERT_EQ(0, shrink_all());
	EXPECT_EQ(NR_THPS, policy_stat("knobs", "underused_candidates"));
	EXPECT_EQ(NR_THPS, policy_stat("knobs", "underused_split"));
	/* SPLIT counts nothing */
	EXPECT_EQ(0, policy_stat("knobs", "underused_pages_compared"));
	EXPECT_TRUE(none_huge(&self->ra));
	EXPECT_TRUE(range_is_huge(0, self->rb.p, self->rb.len));
	EXPECT_TRUE(region_check(&self->ra, skip_unfilled));
	EXPECT_TRUE(region_check(&self->rb, skip_unfilled));
}

/* Nonsense: an unknown verdict, COUNT twice, max_zero beyond the folio */
TEST_F(split, nonsense_splits_nothing)
{
	self->skel->data->underused_verdict = 77;
	attach(_metadata, self);
	ASSERT_EQ(0, sparse_thps(&self->ra, CG_A, 1, sparse));
	ASSERT_EQ(0, shrink_all());
	EXPECT_EQ(1, policy_stat("knobs", "underused_clamped"));
	EXPECT_EQ(1, policy_stat("knobs", "underused_kept"));

	self->skel->data->underused_verdict = V_COUNT;
	self->skel->data->underused_counted_verdict = V_COUNT;
	ASSERT_EQ(0, sparse_thps(&self->rb, CG_A, 1, sparse));
	ASSERT_EQ(0, shrink_all());
	EXPECT_EQ(2, policy_stat("knobs", "underused_clamped"));
	EXPECT_EQ(2, policy_stat("knobs", "underused_kept"));
	EXPECT_EQ(HPAGE_NR, policy_stat("knobs", "underused_pages_compared"));
	EXPECT_TRUE(range_is_huge(0, self->ra.p, self->ra.len));
	EXPECT_TRUE(range_is_huge(0, self->rb.p, self->rb.len));

	region_unmap(&self->ra);
	self->skel->data->underused_verdict = V_DEFAULT;
	self->skel->data->underused_max_zero = 1 << 20;
	ASSERT_EQ(0, sparse_thps(&self->ra, CG_A, 1, sparse));
	ASSERT_EQ(0, shrink_all());
	EXPECT_EQ(3, policy_stat("knobs", "underused_clamped"));
	EXPECT_TRUE(range_is_huge(0, self->ra.p, self->ra.len));
	EXPECT_EQ(0, policy_stat("knobs", "underused_split"));
}

#define CG_TOP		"ce_split_top"
#define CG_MID		CG_TOP "/mid"
#define CG_LEAF		CG_MID "/leaf"

/*
 * Collapse THPs in @cg's memcg and split them (SPLIT) with the deferred
 * split shrinker; the policy that answers counts both.
 */
static void collapse_then_split(struct __test_metadata *_metadata,
				struct region *r, const char *cg)
{
	ASSERT_EQ(0, sparse_thps(r, cg, NR_THPS, sparse));
	ASSERT_EQ(0, cg_move("", getpid()));
	ASSERT_EQ(0, shrink_all());
	EXPECT_TRUE(none_huge(r));
	EXPECT_TRUE(region_check(r, skip_unfilled));
	region_unmap(r);
}

/*
 * Policies "split_top" on CG_TOP and "split_mid" on CG_MID, both answering
 * SPLIT, loaded and not attached; CG_TOP gives its children a memcg.
 */
static void load_top_and_mid(struct __test_metadata *_metadata,
			     struct knobs **top, struct knobs **mid)
{
	ASSERT_EQ(0, cg_create(CG_TOP, NULL));
	ASSERT_EQ(0, cg_memory_subtree(CG_TOP, true));
	ASSERT_EQ(0, cg_create(CG_MID, NULL));
	*top = knobs_load("split_top", cg_id(CG_TOP));
	*mid = knobs_load("split_mid", cg_id(CG_MID));
	ASSERT_NE(NULL, *top);
	ASSERT_NE(NULL, *mid);
	(*top)->data->underused_verdict = V_SPLIT;
	(*mid)->data->underused_verdict = V_SPLIT;
}

/* load_top_and_mid(), and CG_LEAF below mid with a memcg of its own */
static void load_three_levels(struct __test_metadata *_metadata,
			      struct knobs **top, struct knobs **mid,
			      uint64_t *leaf)
{
	load_top_and_mid(_metadata, top, mid);
	ASSERT_EQ(0, cg_memory_subtree(CG_MID, true));
	ASSERT_EQ(0, cg_create(CG_LEAF, leaf));
}

/* What load_three_levels() made, gone again */
static void drop_three_levels(struct __test_metadata *_metadata,
			      struct knobs *top, struct knobs *mid)
{
	knobs__destroy(mid);
	knobs__destroy(top);
	EXPECT_EQ(0, cg_remove(CG_LEAF));
	EXPECT_EQ(0, cg_remove(CG_MID));
	EXPECT_EQ(0, cg_remove(CG_TOP));
}

/* headroom of the last candidate asked: in (0, @mb MiB], in pages */
#define EXPECT_HEADROOM_WITHIN(skel, mb) do {				\
	EXPECT_LT(0, (long)(skel)->bss->su_headroom);			\
	EXPECT_GE(((mb) << 20) / PAGE_SZ, (skel)->bss->su_headroom);	\
} while (0)

/*
 * One key for collapse and split, on an ancestor: the memory of
 * top/mid/leaf (a memcg at every level) is collapsed and split under the
 * policy on top, two levels up, which the split asks with the leaf's
 * cgroup id; with another policy on mid in between, under mid's alone.
 * The headroom the split is given is bounded by memory.high on top alone
 * (an ancestor's limit), then by the smaller one on the leaf as well.
 */
TEST_F(split, ancestor_policy_collapses_and_splits)
{
	struct knobs *top, *mid;
	struct bpf_link *lt, *lm;
	uint64_t leaf;

	load_three_levels(_metadata, &top, &mid, &leaf);
	lt = knobs_attach(top);
	ASSERT_NE(NULL, lt);
	ASSERT_EQ(0, write_num(CGROOT CG_TOP "/memory.high", HIGH_MB << 20));

	collapse_then_split(_metadata, &self->ra, CG_LEAF);
	EXPECT_EQ(NR_THPS, policy_stat("split_top", "collapse_succeeded"));
	EXPECT_EQ(NR_THPS, policy_stat("split_top", "underused_split"));
	EXPECT_EQ(NR_THPS, top->bss->nr_underused_first);
	EXPECT_EQ(leaf, top->bss->su_cgroup_id);
	EXPECT_HEADROOM_WITHIN(top, HIGH_MB);

	lm = knobs_attach(mid);
	ASSERT_NE(NULL, lm);
	ASSERT_EQ(0, write_num(CGROOT CG_LEAF "/memory.high", (HIGH_MB / 2) << 20));
	collapse_then_split(_metadata, &self->ra, CG_LEAF);
	EXPECT_EQ(NR_THPS, policy_stat("split_mid", "collapse_succeeded"));
	EXPECT_EQ(NR_THPS, policy_stat("split_mid", "underused_split"));
	EXPECT_EQ(leaf, mid->bss->su_cgroup_id);
	EXPECT_HEADROOM_WITHIN(mid, HIGH_MB / 2);
	/* top asked about nothing more */
	EXPECT_EQ(NR_THPS, policy_stat("split_top", "collapse_succeeded"));
	EXPECT_EQ(NR_THPS, policy_stat("split_top", "underused_split"));
	EXPECT_EQ(NR_THPS, top->bss->nr_underused_first);

	bpf_link__destroy(lm);
	bpf_link__destroy(lt);
	drop_three_levels(_metadata, top, mid);
}

/* THPs collapsed in CG_LEAF, then judged by @skel answering @verdict */
static void judge_leaf(struct __test_metadata *_metadata,
		       FIXTURE_DATA(split) *self, struct knobs *skel,
		       int verdict)
{
	skel->data->underused_verdict = verdict;
	ASSERT_EQ(0, sparse_thps(&self->ra, CG_LEAF, NR_THPS, sparse));
	ASSERT_EQ(0, cg_move("", getpid()));
	ASSERT_EQ(0, shrink_all());
}

/*
 * KEEP, LATER and COUNT (then SPLIT), each answered by the policy on top,
 * two levels above the leaf whose THPs it judges: honoured and counted as
 * its own cgroup's verdicts are, every call with the leaf's cgroup id.
 */
TEST_F(split, verdicts_of_a_policy_two_levels_up)
{
	struct knobs *top, *mid;
	struct bpf_link *lt;
	long asked, later;
	uint64_t leaf;

	load_three_levels(_metadata, &top, &mid, &leaf);
	lt = knobs_attach(top);
	ASSERT_NE(NULL, lt);

	/* KEEP: whole, off the queue: asked once each */
	judge_leaf(_metadata, self, top, V_KEEP);
	EXPECT_EQ(NR_THPS, policy_stat("split_top", "underused_kept"));
	EXPECT_EQ(NR_THPS, policy_stat("split_top", "underused_candidates"));
	EXPECT_TRUE(range_is_huge(0, self->ra.p, self->ra.len));
	EXPECT_EQ(leaf, top->bss->su_cgroup_id);
	region_unmap(&self->ra);

	/* LATER: whole, still queued (drop_caches may scan twice) */
	judge_leaf(_metadata, self, top, V_LATER);
	asked = policy_stat("split_top", "underused_candidates") - NR_THPS;
	later = policy_stat("split_top", "underused_later");
	EXPECT_LE(NR_THPS, asked);
	EXPECT_EQ(asked, later);
	EXPECT_TRUE(range_is_huge(0, self->ra.p, self->ra.len));
	region_unmap(&self->ra);

	/* COUNT, then SPLIT: split, every subpage counted */
	top->data->underused_counted_verdict = V_SPLIT;
	judge_leaf(_metadata, self, top, V_COUNT);
	EXPECT_TRUE(none_huge(&self->ra));
	EXPECT_TRUE(region_check(&self->ra, skip_unfilled));
	EXPECT_EQ(NR_THPS, policy_stat("split_top", "underused_split"));
	EXPECT_EQ(NR_THPS * (HPAGE_NR - FILLED), top->bss->su_zero_sum);
	EXPECT_EQ(leaf, top->bss->su_cgroup_id);
	region_unmap(&self->ra);

	bpf_link__destroy(lt);
	drop_three_levels(_metadata, top, mid);
}

/*
 * A memcg that goes offline with THPs charged (the memory controller
 * disabled above it) hands its memory to its nearest online ancestor, and
 * so its policy: the THPs collapsed in mid under mid's policy are judged,
 * once top's subtree_control drops +memory, by top's policy, as mid's
 * tasks' collapses then are. 6.12 (no orders hook) neither reparents an
 * offline memcg's deferred split queue nor runs its shrinkers: its THPs
 * are not judged at all there.
 */
TEST_F(split, offline_memcg_asks_the_parent)
{
	struct knobs *top, *mid;
	struct bpf_link *lt, *lm;

	if (!kernel_has_hook("orders"))
		SKIP(return, "6.12 leaves an offline memcg's THPs on its own queue");
	load_top_and_mid(_metadata, &top, &mid);
	lt = knobs_attach(top);
	lm = knobs_attach(mid);
	ASSERT_NE(NULL, lt);
	ASSERT_NE(NULL, lm);

	ASSERT_EQ(0, sparse_thps(&self->ra, CG_MID, NR_THPS, sparse));
	ASSERT_EQ(0, cg_move("", getpid()));
	EXPECT_EQ(NR_THPS, policy_stat("split_mid", "collapse_succeeded"));
	ASSERT_EQ(0, cg_memory_subtree(CG_TOP, false));
	/* mid's memcg goes offline from a work item, after a grace period */
	sleep(2);
	ASSERT_EQ(0, shrink_all());
	EXPECT_TRUE(none_huge(&self->ra));
	EXPECT_TRUE(region_check(&self->ra, skip_unfilled));
	EXPECT_EQ(0, mid->bss->nr_split_underused);
	EXPECT_EQ(NR_THPS, policy_stat("split_top", "underused_split"));
	EXPECT_EQ(cg_id(CG_TOP), top->bss->su_cgroup_id);
	region_unmap(&self->ra);

	bpf_link__destroy(lm);
	bpf_link__destroy(lt);
	knobs__destroy(mid);
	knobs__destroy(top);
	EXPECT_EQ(0, cg_remove(CG_MID));
	EXPECT_EQ(0, cg_remove(CG_TOP));
}

TEST_HARNESS_MAIN
