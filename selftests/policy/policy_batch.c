// SPDX-License-Identifier: GPL-2.0
/*
 * batch_size for MADV_COLLAPSE: without a policy, or with one that has no
 * batch_size hook, MADV_COLLAPSE is mainline's, one PMD at a time (the
 * mmap write lock taken once per PMD); the hook is asked once per batch,
 * with the PMDs left and a default of one PMD; 0 and huge answers are
 * clamped to [1, 64] and counted; the counters say how many batches and
 * PMDs there were, and the write lock is taken once per batch; contents
 * survive any batching; spare pages only from free memory above the
 * reserve the allocator keeps, and from the room below every memcg limit
 * above the memory; a charge refused there ends the request, counted once
 * as failed_charge by the policy governing the memory.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "run_cmd.h"
#include "knobs.h"
#include "kselftest_harness.h"

#define NR_PMDS 32

/* The debug kernels collapse 80 PMDs in more than 30 s: 300 s a case */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

FIXTURE(batch)
{
	struct knobs *skel;
	struct bpf_link *link;
	struct region r;
};

FIXTURE_SETUP(batch)
{
	self->skel = knobs_load(NULL, 0);
	ASSERT_NE(NULL, self->skel);
	self->link = knobs_attach(self->skel);
	ASSERT_NE(NULL, self->link);
	ASSERT_EQ(0, region_map(&self->r, NR_PMDS));
	region_fill(&self->r, NULL);
}

FIXTURE_TEARDOWN(batch)
{
	region_unmap(&self->r);
	bpf_link__destroy(self->link);
	knobs__destroy(self->skel);
}

/*
 * MADV_COLLAPSE all of @r: every PMD huge, every byte intact. Returns the
 * mmap write-lock acquisitions it made (the tracepoint's count).
 */
static long collapse_region(struct __test_metadata *_metadata, struct region *r)
{
	long locks;

	if (mmap_write_locks_start())
		return -1;
	EXPECT_EQ(0, madvise(r->p, r->len, MADV_COLLAPSE));
	locks = mmap_write_locks_stop();
	EXPECT_TRUE(range_is_huge(0, r->p, r->len));
	EXPECT_TRUE(region_check(r, NULL));
	return locks;
}

#define collapse_all(_metadata, self) collapse_region(_metadata, &(self)->r)

TEST_F(batch, once_per_batch)
{
	self->skel->data->batch_pmds = 4;
	EXPECT_EQ(NR_PMDS / 4, collapse_all(_metadata, self));
	EXPECT_EQ(NR_PMDS / 4, self->skel->bss->nr_batch_madvise);
	EXPECT_EQ(1, self->skel->bss->seen_batch_dflt);
	EXPECT_EQ(NR_PMDS, self->skel->bss->seen_pmds_left);
	EXPECT_EQ(NR_PMDS / 4, policy_stat("knobs", "batches"));
	EXPECT_EQ(NR_PMDS, policy_stat("knobs", "batch_pmds"));
	EXPECT_EQ(NR_PMDS, policy_stat("knobs", "collapse_succeeded"));
}

TEST_F(batch, uneven_batches)
{
	self->skel->data->batch_pmds = 5;
	/* 5+5+5+5+5+5+2 */
	EXPECT_EQ(7, collapse_all(_metadata, self));
	EXPECT_EQ(7, self->skel->bss->nr_batch_madvise);
	EXPECT_EQ(NR_PMDS, policy_stat("knobs", "batch_pmds"));
}

TEST_F(batch, zero_clamped_to_one)
{
	self->skel->data->batch_pmds = 0;
	EXPECT_EQ(NR_PMDS, collapse_all(_metadata, self));
	EXPECT_EQ(NR_PMDS, self->skel->bss->nr_batch_madvise);
	EXPECT_LE(NR_PMDS, policy_stat("knobs", "batch_size_clamped"));
}

TEST_F(batch, huge_clamped_to_64)
{
	self->skel->data->batch_pmds = 1000000;
	EXPECT_EQ(1, collapse_all(_metadata, self));
	EXPECT_EQ(1, self->skel->bss->nr_batch_madvise);
	EXPECT_EQ(1, policy_stat("knobs", "batch_size_clamped"));
	EXPECT_EQ(NR_PMDS, policy_stat("knobs", "batch_pmds"));
}

/* A hook that keeps the default: one PMD at a time, as without it */
TEST_F(batch, hook_default_is_one_pmd)
{
	EXPECT_EQ(NR_PMDS, collapse_all(_metadata, self));
	EXPECT_EQ(NR_PMDS, self->skel->bss->nr_batch_madvise);
	EXPECT_EQ(1, self->skel->bss->seen_batch_dflt);
	EXPECT_EQ(0, policy_stat("knobs", "batch_size_clamped"));
}

struct collapse_thread {
	struct region *r;
	int err;
};

static void *collapse_thread(void *arg)
{
	struct collapse_thread *c = arg;

	c->err = madvise(c->r->p, c->r->len, MADV_COLLAPSE) ? errno : 0;
	return NULL;
}

/*
 * A link update while a request is inside its first batch (asleep in the
 * old policy's pte_limits of the first range): that range ends with the
 * old policy, which is asked nothing more; every later range and batch
 * asks the new one, whose batch size holds from the next batch on, told
 * the PMDs left then. The counters go on, one policy on one link.
 */
TEST_F(batch, batch_size_follows_a_link_update_mid_request)
{
	struct knobs *next = knobs_load_next(self->skel, NULL);
	struct collapse_thread c = { .r = &self->r };
	pthread_t t;
	int i;

	ASSERT_NE(NULL, next);
	self->skel->data->batch_pmds = 2;
	self->skel->bss->spin_ns = SPIN_NS;
	next->data->batch_pmds = 4;
	ASSERT_EQ(0, pthread_create(&t, NULL, collapse_thread, &c));
	for (i = 0; i < 3000 && !self->skel->bss->inflight; i++)
		usleep(1000);
	EXPECT_EQ(1, self->skel->bss->inflight);
	EXPECT_EQ(0, bpf_link__update_map(self->link, next->maps.knobs));
	pthread_join(t, NULL);
	EXPECT_EQ(0, c.err);
	EXPECT_TRUE(range_is_huge(0, self->r.p, self->r.len));
	EXPECT_TRUE(region_check(&self->r, NULL));

	EXPECT_EQ(1, self->skel->bss->nr_batch_madvise);
	EXPECT_EQ(1, self->skel->bss->nr_pte_limits);
	EXPECT_EQ(NR_PMDS - 1, next->bss->nr_pte_limits);
	/* 2 (the old policy's), then 4 at a time: 30 PMDs in 8 batches */
	EXPECT_EQ(NR_PMDS - 2, next->bss->seen_pmds_left);
	EXPECT_EQ(2, next->bss->last_pmds_left);
	EXPECT_EQ(8, next->bss->nr_batch_madvise);
	EXPECT_EQ(9, policy_stat("knobs", "batches"));
	EXPECT_EQ(NR_PMDS, policy_stat("knobs", "batch_pmds"));
	EXPECT_EQ(NR_PMDS, policy_stat("knobs", "collapse_succeeded"));
	knobs__destroy(next);
}

/*
 * More PMDs than a batch holds: batches of 64 (the array's size), then the
 * rest; the policy sees 80 PMDs left, then 16.
 */
TEST(over_64_pmds_in_batches_of_64)
{
	struct knobs *skel = knobs_load(NULL, 0);
	struct bpf_link *link;
	struct region r;

	ASSERT_NE(NULL, skel);
	skel->data->batch_pmds = 1000000;
	link = knobs_attach(skel);
	ASSERT_NE(NULL, link);
	ASSERT_EQ(0, region_map(&r, 80));
	region_fill(&r, NULL);
	EXPECT_EQ(2, collapse_region(_metadata, &r));
	EXPECT_EQ(2, skel->bss->nr_batch_madvise);
	EXPECT_EQ(80, skel->bss->seen_pmds_left);
	EXPECT_EQ(16, skel->bss->last_pmds_left);
	EXPECT_EQ(80, policy_stat("knobs", "batch_pmds"));
	EXPECT_EQ(80, policy_stat("knobs", "collapse_succeeded"));
	region_unmap(&r);
	bpf_link__destroy(link);
	knobs__destroy(skel);
}

/* No policy: mainline's MADV_COLLAPSE, the write lock once per PMD */
TEST(no_policy_one_pmd_at_a_time)
{
	struct region r;

	ASSERT_EQ(0, region_map(&r, 8));
	region_fill(&r, NULL);
	EXPECT_EQ(8, collapse_region(_metadata, &r));
	region_unmap(&r);
}

/* A policy without a batch_size hook (numa_local): the same */
TEST(no_batch_size_hook_one_pmd_at_a_time)
{
	char out[4096];
	struct region r;

	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load "
			     "/usr/share/collapse_ext/bpf/numa_local.bpf.o")) TH_LOG("%s", out);
	ASSERT_EQ(0, region_map(&r, 8));
	region_fill(&r, NULL);
	EXPECT_EQ(8, collapse_region(_metadata, &r));
	EXPECT_EQ(8, policy_stat("numa_local", "collapse_succeeded"));
	EXPECT_EQ(0, policy_stat("numa_local", "calls_batch_size"));
	region_unmap(&r);
	run_cmd(out, sizeof(out), "collapsectl unload numa_local");
}

#define CG_MARGIN	"ce_batch_margin"
#define CG_MARGIN_LEAF	CG_MARGIN "/leaf"
#define MARGIN_PMDS	16

/*
 * Where margin_collapse() runs and where the limit that bounds it sits:
 * the same cgroup, or an ancestor of the one it runs in.
 */
struct margin {
	const char *run;	/* the workload's cgroup */
	const char *limited;	/* the cgroup whose @knob leaves the room */
	const char *knob;	/* memory.max or memory.high */
	long room;		/* left below @knob, bytes; 0: 3 MiB */
};

/* What the policy counted meanwhile (all 0 without a policy) */
struct margin_counts {
	long pte_limits;	/* its pte_limits calls */
	long failed_charge;	/* its failed_charge counter */
	long succeeded;		/* its collapse_succeeded counter */
};

/* memory.<@file> of cgroup @cg, a number */
static long margin_num(const char *cg, const char *file)
{
	char path[256];

	snprintf(path, sizeof(path), CGROOT "%s/memory.%s", cg, file);
	return read_num(path);
}

/* The "high" count of @cg's memory.events */
static long margin_high_events(const char *cg)
{
	char path[256];

	snprintf(path, sizeof(path), CGROOT "%s/memory.events", cg);
	return read_key(path, "high");
}

/*
 * In m->run: fault in MARGIN_PMDS fully populated huge pages, leave
 * m->limited m->room (3 MiB: one new huge page at a time fits, two do
 * not) below its m->knob (memory.max or memory.high; no swap),
 * MADV_COLLAPSE them all. Returns the PMDs collapsed, plus 100 when
 * MADV_COLLAPSE failed with EBUSY (204 with another errno), plus 50 when
 * the memcg went over memory.high (memory.events counts that only when
 * reclaim runs: memory.peak shows it even when the excess is freed
 * before), plus 25 when its peak went over the knob (one new huge page at
 * a time peaks 2 MiB above the start); 200+ when the test itself failed.
 */
static int margin_collapse(void *arg)
{
	const struct margin *m = arg;
	long room = m->room ? m->room : 3L << 20;
	char knob[256];
	struct region r;
	long before, after, high;
	int i, n = 0, err = 0, other = 0;

	snprintf(knob, sizeof(knob), CGROOT "%s/%s", m->limited, m->knob);
	if (region_map(&r, MARGIN_PMDS))
		return 200;
	region_fill(&r, NULL);
	before = margin_num(m->limited, "current");
	high = margin_high_events(m->limited);
	if (before <= 0 || high < 0 || write_num(knob, before + room))
		return 201;
	if (madvise(r.p, r.len, MADV_COLLAPSE)) {
		if (errno == EBUSY)
			err = 100;
		else
			other = errno;
	}
	for (i = 0; i < MARGIN_PMDS; i++)
		n += range_is_huge(0, r.p + i * HPAGE_SZ, HPAGE_SZ);
	after = margin_num(m->limited, "current");
	if (margin_high_events(m->limited) != high)
		err += 50;
	/* peak of the cgroup's life: earlier runs here peaked as low */
	if (margin_num(m->limited, "peak") > before + room)
		err += 25;
	write_str(knob, "max");
	if (other)
		return 204;
	if (!region_check(&r, NULL))
		return 202;
	/* nothing preallocated stays charged */
	if (after > before + (1L << 20))
		return 203;
	return err + n;
}

/*
 * margin_collapse(@m), under batches of @pmds of a policy on cgroup @cgid
 * (0 PMDs: no policy, one PMD at a time); @c: what the policy counted.
 */
static int margin_collapse_batched(uint64_t cgid, const struct margin *m,
				   int pmds, struct margin_counts *c)
{
	struct knobs *skel = NULL;
	struct bpf_link *link = NULL;
	int ret;

	if (pmds) {
		skel = knobs_load("margin", cgid);
		if (!skel)
			return 210;
		skel->data->batch_pmds = pmds;
		link = knobs_attach(skel);
		if (!link) {
			knobs__destroy(skel);
			return 211;
		}
	}
	ret = run_in_cgroup(m->run, margin_collapse, (void *)m);
	*c = (struct margin_counts){};
	if (skel) {
		c->pte_limits = skel->bss->nr_pte_limits;
		c->failed_charge = policy_stat("margin", "failed_charge");
		c->succeeded = policy_stat("margin", "collapse_succeeded");
	}
	bpf_link__destroy(link);
	knobs__destroy(skel);
	return ret;
}

/*
 * A memcg with room for one new huge page at a time, below memory.max and
 * then below memory.high: collapsing one PMD at a time (6.12, no policy)
 * collapses them all without going over memory.high, and so must every
 * batch size; nothing stays charged. The PMD a batch of 64 could not take
 * (its second) is not asked for its limits twice: pte_limits once per PMD.
 */
TEST(memcg_margin_as_one_at_a_time)
{
	static const char *const knobs[] = { "memory.max", "memory.high" };
	struct margin_counts none, one_c, big_c;
	uint64_t cgid;
	int k, one, dflt, big;

	ASSERT_EQ(0, cg_create(CG_MARGIN, &cgid));
	/* the guest's kernel always has the memory controller */
	ASSERT_EQ(0, access(CGROOT CG_MARGIN "/memory.max", W_OK));
	ASSERT_EQ(0, write_str(CGROOT CG_MARGIN "/memory.swap.max", "0"));
	for (k = 0; k < 2; k++) {
		const struct margin m = { CG_MARGIN, CG_MARGIN, knobs[k], 0 };

		dflt = margin_collapse_batched(cgid, &m, 0, &none);
		one = margin_collapse_batched(cgid, &m, 1, &one_c);
		big = margin_collapse_batched(cgid, &m, 64, &big_c);
		TH_LOG("%s: collapsed with no policy %d, batch 1 %d, batch 64 %d",
		       knobs[k], dflt, one, big);
		EXPECT_EQ(MARGIN_PMDS, dflt);
		EXPECT_EQ(dflt, one);
		EXPECT_EQ(dflt, big);
		EXPECT_EQ(MARGIN_PMDS, one_c.pte_limits);
		EXPECT_EQ(MARGIN_PMDS, big_c.pte_limits);
	}
	EXPECT_EQ(0, cg_remove(CG_MARGIN));
}

/*
 * The same room, left by a limit on the workload's parent, with the
 * policy on that parent too: a batch is bounded by every ancestor's room,
 * not only its own memcg's. Then the leaf limited as well, with more room
 * than its parent: the smaller, the parent's, still bounds it.
 */
TEST(memcg_margin_of_an_ancestor_as_one_at_a_time)
{
	static const char *const knobs[] = { "memory.max", "memory.high" };
	char leaf_knob[256];
	struct margin_counts c;
	uint64_t top;
	int k, both, dflt, big;

	ASSERT_EQ(0, cg_create(CG_MARGIN, &top));
	ASSERT_EQ(0, cg_memory_subtree(CG_MARGIN, true));
	ASSERT_EQ(0, cg_create(CG_MARGIN_LEAF, NULL));
	ASSERT_EQ(0, write_str(CGROOT CG_MARGIN "/memory.swap.max", "0"));
	for (k = 0; k < 2; k++) {
		const struct margin m = { CG_MARGIN_LEAF, CG_MARGIN, knobs[k], 0 };

		snprintf(leaf_knob, sizeof(leaf_knob), CGROOT CG_MARGIN_LEAF "/%s",
			 knobs[k]);
		dflt = margin_collapse_batched(top, &m, 0, &c);
		big = margin_collapse_batched(top, &m, 64, &c);
		ASSERT_EQ(0, write_num(leaf_knob, 64L << 20));
		both = margin_collapse_batched(top, &m, 64, &c);
		ASSERT_EQ(0, write_str(leaf_knob, "max"));
		TH_LOG("%s on the parent: collapsed with no policy %d, batch 64 %d, "
		       "and 64 MiB on the leaf too %d", knobs[k], dflt, big, both);
		EXPECT_EQ(MARGIN_PMDS, dflt);
		EXPECT_EQ(dflt, big);
		EXPECT_EQ(dflt, both);
		EXPECT_EQ(MARGIN_PMDS, c.pte_limits);
	}
	EXPECT_EQ(0, cg_remove(CG_MARGIN_LEAF));
	EXPECT_EQ(0, cg_remove(CG_MARGIN));
}

/*
 * Less room than one huge page below memory.max, on the workload's cgroup
 * or on its parent, with the policy on either: the first PMD's charge
 * fails, and that ends the request, as on the base kernel (a charge
 * failure is not among the results MADV_COLLAPSE goes on past). EBUSY,
 * nothing collapsed or left charged, and the policy governing the memory
 * counts it once, as failed_charge. Fresh cgroups for each case: a
 * memcg's peak is its lifetime's, and a charge its parent refuses still
 * raised it on the way up.
 */
TEST(charge_failure_counted_where_limit_and_policy_sit)
{
	struct margin_counts c;
	uint64_t top, leaf;
	int i, ret;
	const struct {
		const char *limited;
		const uint64_t *policy_on;
	} cases[] = {
		{ CG_MARGIN_LEAF, &leaf }, { CG_MARGIN, &leaf },
		{ CG_MARGIN_LEAF, &top }, { CG_MARGIN, &top },
	};

	for (i = 0; i < (int)ARRAY_SIZE(cases); i++) {
		const struct margin m = { CG_MARGIN_LEAF, cases[i].limited,
					  "memory.max", 1L << 20 };

		ASSERT_EQ(0, cg_create(CG_MARGIN, &top));
		ASSERT_EQ(0, cg_memory_subtree(CG_MARGIN, true));
		ASSERT_EQ(0, cg_create(CG_MARGIN_LEAF, &leaf));
		ASSERT_EQ(0, write_str(CGROOT CG_MARGIN "/memory.swap.max", "0"));
		ret = margin_collapse_batched(*cases[i].policy_on, &m, 1, &c);
		TH_LOG("limit on %s, policy on %s: %d; %ld failed_charge, "
		       "%ld succeeded", cases[i].limited,
		       cases[i].policy_on == &top ? CG_MARGIN : CG_MARGIN_LEAF,
		       ret, c.failed_charge, c.succeeded);
		EXPECT_EQ(100, ret);
		EXPECT_EQ(1, c.failed_charge);
		EXPECT_EQ(0, c.succeeded);
		EXPECT_EQ(1, c.pte_limits);
		EXPECT_EQ(0, cg_remove(CG_MARGIN_LEAF));
		EXPECT_EQ(0, cg_remove(CG_MARGIN));
	}
}

/*
 * In @m->run, with @m->room below @m->knob of @m->limited: one fully
 * populated huge page collapsed by MADV_COLLAPSE (200+ when that fails).
 */
static int headroom_collapse(void *arg)
{
	const struct margin *m = arg;
	char knob[256];
	struct region r;
	long before;
	int ret = 0;

	snprintf(knob, sizeof(knob), CGROOT "%s/%s", m->limited, m->knob);
	if (region_map(&r, 1))
		return 200;
	region_fill(&r, NULL);
	before = margin_num(m->limited, "current");
	if (before <= 0 || write_num(knob, before + m->room))
		return 201;
	if (madvise(r.p, r.len, MADV_COLLAPSE))
		ret = 202;
	write_str(knob, "max");
	region_unmap(&r);
	return ret;
}

/*
 * collapse_ext_memcg_headroom() (7.3) is the smallest room below
 * memory.high and memory.max of the memory's memcg and its ancestors, in
 * pages, as a range is asked about: one limit on the leaf or on its
 * parent, then both, the smaller on either (the other 64 MiB). Exact but
 * for what the memcg charged between the read and the call (page tables,
 * a per-cpu charge batch): within a quarter of a huge page.
 */
TEST(headroom_kfunc_is_the_smallest_room_up_the_tree)
{
	const long room = 12L << 20, wide = 64L << 20;
	const struct {
		const char *limited, *knob;
		const char *other;	/* 64 MiB on this cgroup's memory.max */
	} cases[] = {
		{ CG_MARGIN_LEAF, "memory.max", NULL },
		{ CG_MARGIN_LEAF, "memory.high", NULL },
		{ CG_MARGIN, "memory.high", NULL },
		{ CG_MARGIN, "memory.max", NULL },
		{ CG_MARGIN, "memory.high", CG_MARGIN_LEAF },
		{ CG_MARGIN_LEAF, "memory.max", CG_MARGIN },
	};
	char other[256];
	uint64_t top;
	int i;

	ASSERT_EQ(0, cg_create(CG_MARGIN, &top));
	ASSERT_EQ(0, cg_memory_subtree(CG_MARGIN, true));
	ASSERT_EQ(0, cg_create(CG_MARGIN_LEAF, NULL));
	for (i = 0; i < (int)ARRAY_SIZE(cases); i++) {
		const struct margin m = { CG_MARGIN_LEAF, cases[i].limited,
					  cases[i].knob, room };
		struct knobs *skel = knobs_load("headroom", top);
		struct bpf_link *link;
		long got;

		ASSERT_NE(NULL, skel);
		link = knobs_attach(skel);
		ASSERT_NE(NULL, link);
		if (cases[i].other) {
			snprintf(other, sizeof(other), CGROOT "%s/memory.max",
				 cases[i].other);
			ASSERT_EQ(0, write_num(other, wide));
		}
		EXPECT_EQ(0, run_in_cgroup(CG_MARGIN_LEAF, headroom_collapse,
					   (void *)&m));
		if (cases[i].other)
			write_str(other, "max");
		got = skel->bss->seen_headroom;
		bpf_link__destroy(link);
		if (!skel->bss->has_headroom) {
			knobs__destroy(skel);
			cg_remove(CG_MARGIN_LEAF);
			cg_remove(CG_MARGIN);
			SKIP(return, "no collapse_ext_memcg_headroom() (6.12)");
		}
		knobs__destroy(skel);
		TH_LOG("%s of %s%s%s: %ld pages", cases[i].knob, cases[i].limited,
		       cases[i].other ? ", 64 MiB on " : "",
		       cases[i].other ?: "", got);
		EXPECT_GE(got, room / (long)PAGE_SZ - (long)HPAGE_NR / 4);
		EXPECT_LE(got, room / (long)PAGE_SZ + (long)HPAGE_NR / 4);
	}
	EXPECT_EQ(0, cg_remove(CG_MARGIN_LEAF));
	EXPECT_EQ(0, cg_remove(CG_MARGIN));
}

#define VM_SYSCTL	"/proc/sys/vm/"

/*
 * Free memory at the reserve the allocator keeps: the high watermarks
 * raised to about 20% of memory (watermark_scale_factor 1000, boosts off so
 * that they stay put), so that the low watermarks, where spare pages taken
 * without reclaim would run out, are far below; a filler takes the rest.
 */
FIXTURE(reserve)
{
	long wsf, boost;
	pid_t filler;
	struct knobs *skel;
	struct bpf_link *link;
	struct region r;
};

FIXTURE_SETUP(reserve)
{
	self->wsf = read_num(VM_SYSCTL "watermark_scale_factor");
	self->boost = read_num(VM_SYSCTL "watermark_boost_factor");
	ASSERT_LT(0, self->wsf);
	ASSERT_LE(0, self->boost);
	ASSERT_EQ(0, write_num(VM_SYSCTL "watermark_boost_factor", 0));
	ASSERT_EQ(0, write_num(VM_SYSCTL "watermark_scale_factor", 1000));
	self->skel = knobs_load(NULL, 0);
	ASSERT_NE(NULL, self->skel);
	self->skel->data->batch_pmds = 8;
	self->link = knobs_attach(self->skel);
	ASSERT_NE(NULL, self->link);
	/* fork first: it would write-protect the region's ptes */
	self->filler = start_filler(-1, free_above_reserve, 256);
	ASSERT_LT(0, self->filler)
		TH_LOG("could not take free memory down to the reserve");
	ASSERT_EQ(0, region_map(&self->r, 8));
	region_fill(&self->r, NULL);
}

FIXTURE_TEARDOWN(reserve)
{
	stop_filler(self->filler);
	region_unmap(&self->r);
	bpf_link__destroy(self->link);
	knobs__destroy(self->skel);
	write_num(VM_SYSCTL "watermark_scale_factor", self->wsf);
	write_num(VM_SYSCTL "watermark_boost_factor", self->boost);
}

/*
 * In a memcg without limits, with no free memory above the reserve, a
 * batch of 8 takes no spare page: it holds its first PMD only, the rest go
 * one at a time (the write lock once per PMD), and all of them collapse.
 */
TEST_F_TIMEOUT(reserve, no_spares_below_it, 300)
{
	TH_LOG("%ld pages free above the reserve", free_above_reserve(0));
	EXPECT_EQ(8, collapse_all(_metadata, self));
	EXPECT_EQ(1, policy_stat("knobs", "batches"));
	EXPECT_EQ(1, policy_stat("knobs", "batch_pmds"));
	EXPECT_EQ(8, self->skel->bss->nr_pte_limits);
}

TEST_HARNESS_MAIN
