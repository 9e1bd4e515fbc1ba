// SPDX-License-Identifier: GPL-2.0
/*
 * orders and per-order pte limits (7.3): khugepaged makes of a range only
 * the orders the policy chose among those sysfs allows (others dropped
 * and counted, none at all a veto); pte_limits is asked per order below
 * PMD, with limits->order, and its max_ptes_none there is 0 or all but one,
 * anything between is 0, and all but one only under larger orders that
 * fill holes too (upstream's rule against creep): no collapse makes the
 * next scan find the range eligible one order higher, neither between,
 * nor under a stricter PMD, nor at the maximum. The folios are counted by order in the kernel
 * (collapsed_<size>kB) and read back from pagemap and kpageflags.
 * Every order is tried alone, all together (the largest the answer
 * leaves wins), and with answers that differ across orders (one vetoed,
 * a smaller one filling holes).
 * On 6.12, which has no orders hook, every case is skipped.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "knobs.h"
#include "kselftest_harness.h"

#define PMD_ORDER	9
#define ORDER_64K	4
#define NR_PMDS		2
#define KEEP		(-1LL)

FIXTURE(orders)
{
	struct knobs *skel;
	struct bpf_link *link;
	struct region r;
	bool saved;
};

/* sysfs in @s lets khugepaged make the orders of @mask (MADV_HUGEPAGE) */
static void set_orders(struct thp_settings *s, unsigned long mask)
{
	for (int o = 0; o < NR_ORDERS; o++)
		s->hugepages[o].enabled = mask & (1UL << o) ? THP_MADVISE : THP_NEVER;
}

/* knobs on the root, 64 KiB and PMD allowed, khugepaged at full speed */
FIXTURE_SETUP(orders)
{
	struct thp_settings s;

	if (!kernel_has_hook("orders"))
		SKIP(return, "no orders hook in this kernel (6.12 collapses PMDs only)");
	thp_save_settings();
	self->saved = true;
	thp_read_settings(&s);
	set_orders(&s, 1UL << ORDER_64K | 1UL << PMD_ORDER);
	thp_push_settings(&s);
	khugepaged_fast(-1, 8 * HPAGE_NR);
	self->skel = knobs_load(NULL, 0);
	ASSERT_NE(NULL, self->skel);
	self->link = knobs_attach(self->skel);
	ASSERT_NE(NULL, self->link);
	ASSERT_EQ(0, region_map(&self->r, NR_PMDS));
}

FIXTURE_TEARDOWN(orders)
{
	region_unmap(&self->r);
	bpf_link__destroy(self->link);
	knobs__destroy(self->skel);
	if (self->saved)
		thp_restore_settings();
}

/*
 * Fill the region but where @skip says, hand it to khugepaged and wait
 * for two full scans after; then stop khugepaged and count the folios
 * mapping it by order into @count (PMD_ORDER + 1 entries).
 */
static void khugepaged_over(struct __test_metadata *_metadata,
			    FIXTURE_DATA(orders) *self,
			    bool (*skip)(size_t page), unsigned long *count)
{
	region_fill(&self->r, skip);
	ASSERT_EQ(0, madvise(self->r.p, self->r.len, MADV_HUGEPAGE));
	EXPECT_TRUE(wait_full_scans(60));
	khugepaged_stop();
	ASSERT_EQ(0, folio_orders(0, self->r.p, self->r.len, count, PMD_ORDER));
	EXPECT_TRUE(region_check(&self->r, skip));
	TH_LOG("folios: %lu small, %lu of 64 KiB, %lu of 2 MiB", count[0],
	       count[ORDER_64K], count[PMD_ORDER]);
}

TEST_F_TIMEOUT(orders, only_64k_when_asked, 120)
{
	unsigned long count[PMD_ORDER + 1];

	self->skel->data->orders_answer = 1 << ORDER_64K;
	khugepaged_over(_metadata, self, NULL, count);
	EXPECT_EQ(1 << ORDER_64K | 1 << PMD_ORDER, self->skel->bss->seen_allowed);
	EXPECT_EQ(0, count[PMD_ORDER]);
	EXPECT_EQ(NR_PMDS * HPAGE_NR >> ORDER_64K, count[ORDER_64K]);
	EXPECT_EQ(count[ORDER_64K], policy_stat("knobs", "collapsed_64kB"));
	EXPECT_EQ(0, policy_stat("knobs", "collapsed_2048kB"));
	EXPECT_LT(0, policy_stat("knobs", "calls_orders"));
	EXPECT_EQ(0, policy_stat("knobs", "orders_clamped"));
}

TEST_F_TIMEOUT(orders, pmd_when_asked, 120)
{
	unsigned long count[PMD_ORDER + 1];

	self->skel->data->orders_answer = 1 << PMD_ORDER;
	khugepaged_over(_metadata, self, NULL, count);
	EXPECT_EQ(NR_PMDS, count[PMD_ORDER]);
	EXPECT_EQ(0, count[ORDER_64K]);
	EXPECT_EQ(NR_PMDS, policy_stat("knobs", "collapsed_2048kB"));
	EXPECT_EQ(0, policy_stat("knobs", "collapsed_64kB"));
}

/*
 * A link update between khugepaged's scans: the old policy answered no
 * order (nothing made), the new one 64 KiB; khugepaged asks the new one
 * only from then on and makes the range into 64 KiB folios, counted on
 * the same link.
 */
TEST_F_TIMEOUT(orders, orders_answer_follows_a_link_update, 180)
{
	struct knobs *next = knobs_load(NULL, 0);
	unsigned long count[PMD_ORDER + 1];
	u64 asked;

	ASSERT_NE(NULL, next);
	self->skel->data->orders_answer = 0;
	next->data->orders_answer = 1 << ORDER_64K;
	khugepaged_over(_metadata, self, NULL, count);
	EXPECT_EQ(0, count[ORDER_64K]);
	EXPECT_EQ(0, count[PMD_ORDER]);
	EXPECT_LT(0, self->skel->bss->nr_orders);

	ASSERT_EQ(0, bpf_link__update_map(self->link, next->maps.knobs));
	asked = self->skel->bss->nr_orders;
	thp_pop_settings();	/* khugepaged_over()'s stop */
	EXPECT_TRUE(wait_full_scans(60));
	khugepaged_stop();
	ASSERT_EQ(0, folio_orders(0, self->r.p, self->r.len, count, PMD_ORDER));
	EXPECT_TRUE(region_check(&self->r, NULL));
	EXPECT_EQ(NR_PMDS * HPAGE_NR >> ORDER_64K, count[ORDER_64K]);
	EXPECT_EQ(0, count[PMD_ORDER]);
	EXPECT_EQ(asked, self->skel->bss->nr_orders);
	EXPECT_LT(0, next->bss->nr_orders);
	EXPECT_EQ((long)count[ORDER_64K], policy_stat("knobs", "collapsed_64kB"));
	knobs__destroy(next);
}

/*
 * target_node and collapsed at a smaller order: the policy's node for a
 * range holds for every 64 KiB folio made of it; each range is reported
 * collapsed once, its base pages counted exactly.
 */
TEST_F_TIMEOUT(orders, smaller_folios_on_the_policy_node_reported_collapsed, 120)
{
	unsigned long count[PMD_ORDER + 1], elsewhere = 0;
	struct knobs__bss *b = self->skel->bss;

	ASSERT_EQ(0, access("/sys/devices/system/node/node1", F_OK));
	region_fill(&self->r, NULL);
	ASSERT_EQ(0, move_to_node(self->r.p, self->r.len, 0));
	self->skel->data->node = 1;
	self->skel->data->orders_answer = 1 << ORDER_64K;
	khugepaged_over(_metadata, self, NULL, count);
	EXPECT_EQ(NR_PMDS * HPAGE_NR >> ORDER_64K, count[ORDER_64K]);
	for (size_t off = 0; off < self->r.len; off += PAGE_SZ << ORDER_64K)
		elsewhere += page_node(self->r.p + off) != 1;
	EXPECT_EQ(0, elsewhere);
	/* later scans ask again, and make nothing: every answer taken */
	EXPECT_LE(NR_PMDS, b->nr_target_node);
	EXPECT_LE(NR_PMDS, policy_stat("knobs", "target_node_chosen"));
	EXPECT_EQ(0, policy_stat("knobs", "target_node_invalid"));
	EXPECT_EQ(0, policy_stat("knobs", "target_node_disallowed"));
	EXPECT_EQ(NR_PMDS, b->nr_result[RES_COLLAPSED]);
	EXPECT_EQ(NR_PMDS, policy_stat("knobs", "collapse_succeeded"));
	EXPECT_EQ(NR_PMDS * HPAGE_NR, policy_stat("knobs", "pages_collapsed"));
}

/*
 * Two counters of one policy as of one moment: khugepaged may still be
 * asking (a call is counted before its clamp), so read both until two
 * rounds agree.
 */
static void read_together(const char *a, long *va, const char *b, long *vb)
{
	long a2, b2;

	do {
		*va = policy_stat("knobs", a);
		*vb = policy_stat("knobs", b);
		a2 = policy_stat("knobs", a);
		b2 = policy_stat("knobs", b);
	} while (*va != a2 || *vb != b2);
}

/* 128 KiB is not allowed: dropped from the answer, counted */
TEST_F_TIMEOUT(orders, outside_allowed_dropped_and_counted, 120)
{
	unsigned long count[PMD_ORDER + 1];
	long calls, clamped;

	self->skel->data->orders_answer = 1 << ORDER_64K | 1 << (ORDER_64K + 1);
	khugepaged_over(_metadata, self, NULL, count);
	EXPECT_EQ(NR_PMDS * HPAGE_NR >> ORDER_64K, count[ORDER_64K]);
	read_together("calls_orders", &calls, "orders_clamped", &clamped);
	EXPECT_LT(0, clamped);
	EXPECT_EQ(calls, clamped);
}

TEST_F_TIMEOUT(orders, none_leaves_the_range, 120)
{
	unsigned long count[PMD_ORDER + 1];

	long calls, declined;

	self->skel->data->orders_answer = 0;
	khugepaged_over(_metadata, self, NULL, count);
	EXPECT_EQ(NR_PMDS * HPAGE_NR, count[0]);
	EXPECT_LT(0, policy_stat("knobs", "failed_veto"));
	/*
	 * A range is counted once: a range the orders answer leaves alone is
	 * among ranges_scanned (pte_limits let it through), as declined, and
	 * not also among the vetoes, which only pte_limits makes.
	 */
	read_together("calls_orders", &calls, "orders_declined", &declined);
	EXPECT_LT(0, declined);
	EXPECT_EQ(calls, declined);
	EXPECT_EQ(0, policy_stat("knobs", "vetoes"));
	EXPECT_LE(declined, policy_stat("knobs", "ranges_scanned"));
	EXPECT_EQ(0, policy_stat("knobs", "collapsed_64kB"));
	EXPECT_EQ(0, policy_stat("knobs", "collapsed_2048kB"));
}

/*
 * After khugepaged_over(): let khugepaged run two more full scans; the
 * folios (@count) must not change, contents intact. Stops it again.
 */
static void nothing_more(struct __test_metadata *_metadata,
			 FIXTURE_DATA(orders) *self, bool (*skip)(size_t page),
			 const unsigned long *count)
{
	unsigned long again[PMD_ORDER + 1];

	thp_pop_settings();		/* khugepaged_over()'s stop */
	EXPECT_TRUE(wait_full_scans(60));
	khugepaged_stop();
	ASSERT_EQ(0, folio_orders(0, self->r.p, self->r.len, again, PMD_ORDER));
	for (int o = 1; o <= PMD_ORDER; o++) {
		EXPECT_EQ(count[o], again[o]) TH_LOG("order %d", o);
	}
	EXPECT_TRUE(region_check(&self->r, skip));
}

/* The first page of every odd 64 KiB block missing: 16 holes a PMD */
static bool odd_blocks_holed(size_t page)
{
	return page % 32 == 16;
}

/*
 * The policy's pte_limits set (by knobs' set_none or none_pct): no PMD,
 * and 64 KiB folios of the @blocks of each PMD that the answers let
 * through, for good (more scans change nothing); asked for order 4 itself.
 */
static void order_limit(struct __test_metadata *_metadata,
			FIXTURE_DATA(orders) *self, unsigned long blocks)
{
	unsigned long count[PMD_ORDER + 1];

	khugepaged_over(_metadata, self, odd_blocks_holed, count);
	EXPECT_EQ(0, count[PMD_ORDER]);
	EXPECT_EQ(NR_PMDS * blocks, count[ORDER_64K]);
	EXPECT_EQ(count[ORDER_64K], policy_stat("knobs", "collapsed_64kB"));
	EXPECT_LT(0, self->skel->bss->nr_pte_limits_order[ORDER_64K]);
	EXPECT_LT(0, self->skel->bss->nr_pte_limits_order[PMD_ORDER]);
	nothing_more(_metadata, self, odd_blocks_holed, count);
}

/* 0 at every order: the 16 full blocks */
TEST_F_TIMEOUT(orders, order_limit_0_fills_no_hole, 180)
{
	self->skel->data->set_none = 0;
	order_limit(_metadata, self, 16);
	EXPECT_EQ(0, policy_stat("knobs", "limits_clamped"));
}

/*
 * All of each order, PMDs left out by the orders hook: all 32 blocks,
 * holes filled (512 at the PMD and 16 at order 4 clamped to all but one)
 */
TEST_F_TIMEOUT(orders, order_limit_all_but_one_fills_holes, 180)
{
	self->skel->data->orders_answer = 1 << ORDER_64K;
	self->skel->data->none_pct = 100;
	order_limit(_metadata, self, 32);
	EXPECT_LT(0, policy_stat("knobs", "limits_clamped"));
}

/* 8 at every order: at order 4 neither 0 nor 15, so 0 */
TEST_F_TIMEOUT(orders, order_limit_between_is_0, 180)
{
	self->skel->data->set_none = 8;
	order_limit(_metadata, self, 16);
	EXPECT_LT(0, policy_stat("knobs", "limits_clamped"));
}

/*
 * 15 at every order: all but one at order 4, but the PMD (15 of 512)
 * does not fill holes, so order 4 may not either: filled 64 KiB blocks
 * would make the PMD eligible at the next scan (creep). 0 it is.
 */
TEST_F_TIMEOUT(orders, no_fill_under_a_larger_order_that_does_not, 180)
{
	self->skel->data->set_none = (1 << ORDER_64K) - 1;
	order_limit(_metadata, self, 16);
	EXPECT_LT(0, policy_stat("knobs", "limits_clamped"));
}

/*
 * 15 at every order, PMDs left out by the orders hook: a PMD khugepaged
 * may not make holds no smaller order back, so order 4 fills its holes
 * (all 32 blocks), in the collapse itself too, where the PMD's 15 alone
 * would allow none
 */
TEST_F_TIMEOUT(orders, fill_where_no_pmd_is_made, 180)
{
	self->skel->data->orders_answer = 1 << ORDER_64K;
	self->skel->data->set_none = (1 << ORDER_64K) - 1;
	order_limit(_metadata, self, 32);
	EXPECT_EQ(0, policy_stat("knobs", "limits_clamped"));
}

/* Only the first 16 pages of each PMD: a full 64 KiB block, then nothing */
static bool first_16_only(size_t page)
{
	return page % HPAGE_NR >= 16;
}

/*
 * Orders 2 to 8 allowed (no PMD), pte_limits answering @pct % of each
 * order's ptes: after khugepaged settled, more full scans change nothing,
 * and the first folio of each PMD is of @order.
 */
static void no_creep(struct __test_metadata *_metadata,
		     FIXTURE_DATA(orders) *self, int pct, int order)
{
	unsigned long count[PMD_ORDER + 1];
	struct thp_settings s = *thp_current_settings();

	set_orders(&s, 0x1fcUL);
	thp_push_settings(&s);
	self->skel->data->none_pct = pct;
	khugepaged_over(_metadata, self, first_16_only, count);
	EXPECT_EQ(NR_PMDS, count[order]);
	nothing_more(_metadata, self, first_16_only, count);
}

/* Half of each order, clamped to 0: only the full 64 KiB block, ever */
TEST_F_TIMEOUT(orders, no_creep_between, 180)
{
	no_creep(_metadata, self, 50, ORDER_64K);
	EXPECT_LT(0, policy_stat("knobs", "limits_clamped"));
}

/* All of each order: the highest allowed at once (1 MiB), then nothing */
TEST_F_TIMEOUT(orders, no_creep_at_the_maximum, 180)
{
	no_creep(_metadata, self, 100, 8);
}

/* collapsed_<size>kB of knobs for folios of @order */
static long collapsed_at(int order)
{
	char key[32];

	snprintf(key, sizeof(key), "collapsed_%dkB", 4 << order);
	return policy_stat("knobs", key);
}

/*
 * Each order from 16 KiB to the PMD the only one sysfs enables, in turn:
 * khugepaged makes a full region into folios of that order alone, asks
 * the policy with that order alone allowed, and counts them at that size.
 */
TEST_F_TIMEOUT(orders, each_order_alone, 900)
{
	for (int o = 2; o <= PMD_ORDER; o++) {
		struct thp_settings s = *thp_current_settings();
		unsigned long count[PMD_ORDER + 1];
		long before = collapsed_at(o), made;
		u32 allowed;

		set_orders(&s, 1UL << o);
		thp_push_settings(&s);
		khugepaged_over(_metadata, self, NULL, count);
		allowed = self->skel->bss->seen_allowed;
		made = collapsed_at(o) - before;
		/*
		 * A fresh, empty region before the fixture's orders are back:
		 * khugepaged would go on with this one meanwhile
		 */
		region_unmap(&self->r);
		ASSERT_EQ(0, region_map(&self->r, NR_PMDS));
		thp_pop_settings();	/* khugepaged_over()'s stop */
		thp_pop_settings();	/* this order alone */
		EXPECT_EQ(1UL << o, allowed) TH_LOG("order %d", o);
		EXPECT_EQ(NR_PMDS * HPAGE_NR >> o, count[o]) TH_LOG("order %d", o);
		for (int other = 1; other <= PMD_ORDER; other++) {
			if (other != o)
				EXPECT_EQ(0, count[other]) TH_LOG("order %d alone: %lu of order %d",
								 o, count[other], other);
		}
		EXPECT_EQ((long)count[o], made) TH_LOG("order %d", o);
	}
}

/*
 * Every order from 16 KiB to the PMD enabled: the largest the policy's
 * answer leaves is made of a full range at once: the PMD when it keeps
 * them all, 1 MiB folios when it leaves the PMD out.
 */
static void all_orders(struct __test_metadata *_metadata,
		       FIXTURE_DATA(orders) *self, long long answer, int order)
{
	struct thp_settings s = *thp_current_settings();
	unsigned long count[PMD_ORDER + 1];

	set_orders(&s, 0x3fcUL);
	thp_push_settings(&s);
	self->skel->data->orders_answer = answer;
	khugepaged_over(_metadata, self, NULL, count);
	EXPECT_EQ(0x3fcUL, self->skel->bss->seen_allowed);
	EXPECT_EQ(NR_PMDS * HPAGE_NR >> order, count[order]);
	for (int o = 1; o <= PMD_ORDER; o++) {
		if (o != order)
			EXPECT_EQ(0, count[o]) TH_LOG("%lu of order %d", count[o], o);
	}
	EXPECT_EQ((long)count[order], collapsed_at(order));
}

TEST_F_TIMEOUT(orders, all_orders_the_pmd_wins, 180)
{
	all_orders(_metadata, self, KEEP, PMD_ORDER);
}

TEST_F_TIMEOUT(orders, all_orders_but_the_pmd_1m_wins, 180)
{
	all_orders(_metadata, self, 0x1fcLL, PMD_ORDER - 1);
}

/*
 * Answers that differ across orders: 64 KiB and 1 MiB allowed (no PMD);
 * pte_limits answers 0 for the PMD (which sysfs does not allow, so it
 * holds nothing back), vetoes 1 MiB (whose derived limit is then 0 too)
 * and lets 64 KiB fill holes (all of it, clamped to all but one). The veto
 * makes nothing at 1 MiB and holds no smaller order back, so every 64 KiB
 * block becomes a folio, holed ones too; counted as order vetoes, once per
 * range; more scans change nothing.
 */
TEST_F_TIMEOUT(orders, veto_one_order_fill_under_another, 180)
{
	struct thp_settings s = *thp_current_settings();
	unsigned long count[PMD_ORDER + 1];
	long asked = 0, vetoes = -1;

	set_orders(&s, 1UL << ORDER_64K | 1UL << (PMD_ORDER - 1));
	thp_push_settings(&s);
	self->skel->bss->veto_orders = 1U << (PMD_ORDER - 1);
	self->skel->data->none_pct = 100;
	self->skel->data->set_none_pmd = 0;
	khugepaged_over(_metadata, self, odd_blocks_holed, count);
	EXPECT_EQ(0, count[PMD_ORDER - 1]);
	EXPECT_EQ(0, count[PMD_ORDER]);
	EXPECT_EQ(NR_PMDS * 32, count[ORDER_64K]);
	EXPECT_EQ((long)count[ORDER_64K], collapsed_at(ORDER_64K));
	EXPECT_EQ(0, collapsed_at(PMD_ORDER - 1));
	/*
	 * Every 1 MiB question is a veto, counted once: the hook's own count
	 * and the kernel's agree (khugepaged may still be asking: until they
	 * are read at one moment)
	 */
	for (int i = 0; i < 100; i++) {
		asked = self->skel->bss->nr_pte_limits_order[PMD_ORDER - 1];
		vetoes = policy_stat("knobs", "order_vetoes");
		if (asked == vetoes &&
		    asked == self->skel->bss->nr_pte_limits_order[PMD_ORDER - 1])
			break;
		usleep(1000);
	}
	EXPECT_LT(0, asked);
	EXPECT_EQ(asked, vetoes);
	nothing_more(_metadata, self, odd_blocks_holed, count);
}

/*
 * A policy that answers khugepaged's own limits at every order
 * (collapse_ext_apply_khugepaged_limits()) gets them as khugepaged
 * derives them for that order: with sysfs's max_ptes_none at 511, all but
 * one of 64 KiB's ptes (PMDs left out by the orders hook, so the 64 KiB
 * blocks fill their holes), nothing to clamp; nor with 0, where only the
 * full blocks are made.
 */
static void khugepaged_limits_at(struct __test_metadata *_metadata,
				 FIXTURE_DATA(orders) *self, int none,
				 unsigned long blocks)
{
	struct thp_settings s = *thp_current_settings();
	unsigned long count[PMD_ORDER + 1];

	s.khugepaged.max_ptes_none = none;
	thp_push_settings(&s);
	self->skel->data->orders_answer = 1 << ORDER_64K;
	self->skel->bss->apply_khugepaged = 1;
	khugepaged_over(_metadata, self, odd_blocks_holed, count);
	EXPECT_EQ(NR_PMDS * blocks, count[ORDER_64K]);
	EXPECT_LT(0, self->skel->bss->nr_pte_limits_order[ORDER_64K]);
	EXPECT_EQ(0, policy_stat("knobs", "limits_clamped"));
}

TEST_F_TIMEOUT(orders, khugepaged_limits_at_every_order_511, 180)
{
	khugepaged_limits_at(_metadata, self, 511, 32);
}

TEST_F_TIMEOUT(orders, khugepaged_limits_at_every_order_0, 180)
{
	khugepaged_limits_at(_metadata, self, 0, 16);
}

/*
 * A link update while a range is inside its PMD-order pte_limits: the
 * orders below PMD of that same range are not asked of the new policy
 * (nor of the old one, gone): the new policy's first question is the PMD
 * order of a range it started.
 */
TEST_F_TIMEOUT(orders, per_order_asks_never_cross_a_link_update, 180)
{
	struct knobs *next = knobs_load_next(self->skel, NULL);
	unsigned long count[PMD_ORDER + 1];
	int i;

	ASSERT_NE(NULL, next);
	self->skel->data->orders_answer = 1 << ORDER_64K | 1 << PMD_ORDER;
	self->skel->data->set_none_pmd = 0;	/* holed: the PMD is not made */
	self->skel->bss->spin_ns = SPIN_NS;
	next->data->orders_answer = 1 << ORDER_64K | 1 << PMD_ORDER;
	next->data->set_none_pmd = 0;
	region_fill(&self->r, odd_blocks_holed);
	ASSERT_EQ(0, madvise(self->r.p, self->r.len, MADV_HUGEPAGE));
	for (i = 0; i < 60000 && !self->skel->bss->inflight; i++)
		usleep(1000);
	ASSERT_EQ(1, self->skel->bss->inflight);
	ASSERT_EQ(0, bpf_link__update_map(self->link, next->maps.knobs));
	EXPECT_TRUE(wait_full_scans(60));
	khugepaged_stop();
	ASSERT_EQ(0, folio_orders(0, self->r.p, self->r.len, count, PMD_ORDER));
	EXPECT_TRUE(region_check(&self->r, odd_blocks_holed));
	EXPECT_EQ(1, self->skel->bss->nr_pte_limits);
	EXPECT_EQ(PMD_ORDER, self->skel->data->first_order);
	EXPECT_LT(0, next->bss->nr_pte_limits_order[ORDER_64K]);
	EXPECT_EQ(PMD_ORDER, next->data->first_order);
	EXPECT_EQ(0, count[PMD_ORDER]);
	knobs__destroy(next);
}

TEST_HARNESS_MAIN
