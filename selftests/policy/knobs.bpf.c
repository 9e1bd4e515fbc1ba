// SPDX-License-Identifier: GPL-2.0
/*
 * knobs: a collapse_ext policy whose every answer is set by the test
 * through .bss, and which records what the kernel asked it.
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

#define KEEP	(-1LL)
#define PMD_SHIFT	21	/* x86-64, the suite's one architecture */

/* Answers: KEEP leaves the kernel's value. */
s64 set_none = KEEP, set_swap = KEEP, set_shared = KEEP;
s64 set_none_pmd = KEEP;	/* max_ptes_none at the PMD order only, last */
s64 none_pct = KEEP;		/* max_ptes_none: this % of ctx.order's ptes */
int veto;
u32 veto_orders;		/* pte_limits vetoes these orders (bit N: order N) */
int apply_khugepaged;	/* pte_limits: khugepaged's limits (kfunc) first */
s32 node = COLLAPSE_EXT_ANY_NODE;
s64 pass_pages = KEEP;		/* khugepaged pass */
s64 batch_pmds = KEEP;		/* MADV_COLLAPSE batch */
s64 budget = KEEP;		/* scan_budget of every mm visit */
s64 orders_answer = KEEP;	/* orders (7.3): the mask to return */
s32 init_ret;
u64 spin_ns;			/* pte_limits busy-waits this long: spin() */

/* What the kernel asked. */
u64 nr_pte_limits, nr_target_node, nr_batch_size, nr_pass_size, nr_collapsed, nr_init;
u32 seen_none, seen_swap, seen_shared, seen_caller, seen_flags, seen_is_file;
/* The cgroup knobs_attach() links the policy to (knobs.h); not read here */
u64 link_cgroup_id;
u64 seen_cgroup_id, seen_owner_cgroup_id;
u32 seen_dflt, seen_load0, seen_load1, seen_node_caller;
u64 nr_batch_madvise;
u32 seen_batch_dflt, seen_pmds_left, last_pmds_left;
s32 last_result = -1, exit_reason = -1;
/* collapsed: calls by result (enum collapse_ext_result) */
u64 nr_result[16];
/* Callers inside pte_limits now; calls that ended after exit() had run. */
s64 inflight;
u64 nr_after_exit;
/* scan_budget: calls, and the ctx of the last one */
u64 nr_scan_budget;
u32 sb_dflt, sb_caller, sb_walk_pmds, sb_walk_huge, sb_visit_pmds, sb_visit_huge;
u64 sb_address, sb_anon_pages, sb_scanned, sb_since_visit_ns, sb_mm;
u64 sb_owner_cgroup_id;
/* pte_limits calls (ranges) per visit: the most in one, and at the last */
u64 visit_ranges_max, pte_limits_at_visit;
/*
 * PMD-order pte_limits calls (ranges) inside the 64 PMDs from range_base
 * per khugepaged pass: the most in one, and the count at the last pass.
 * Only the test's own ranges: other mms' may cost a pass far less than a
 * PMD each (7.3 counts the ptes scanned), mTHP orders ask again.
 */
u64 pass_ranges_max, region_at_pass, nr_region_ranges;
/*
 * The same for the ranges scanned through to the end and refused for
 * their none ptes (collapsed: NONE_LIMIT): each costs a pass a whole PMD
 * on both bases, where 7.3 charges a range a scan gave up on early (a
 * page busy, off the LRU) only the ptes it looked at.
 */
u64 pass_full_max, full_at_pass, nr_region_full;
/* bit i: pte_limits was asked for the i-th PMD from range_base */
u64 range_base, ranges_seen;
/* pte_limits calls by ctx.order, and the order of the first call */
u64 nr_pte_limits_order[16];
s32 first_order = -1;
/*
 * collapse_ext_memcg_headroom() at the first pte_limits call (7.3), and
 * whether the kernel has the kfunc
 */
u64 seen_headroom;
u32 has_headroom;
/* orders calls and the last allowed mask */
u64 nr_orders;
u32 seen_allowed;
/*
 * split_underused: the verdict on a first call and after COUNT (KEEP:
 * DEFAULT), max_zero to write (KEEP: the kernel's); calls, first calls
 * (candidates), the last candidate's u as first asked (the first's
 * headroom), and the exact
 * counts it was given after COUNT, summed
 */
s64 underused_verdict = KEEP, underused_counted_verdict = KEEP;
s64 underused_max_zero = KEEP;
u64 nr_split_underused, nr_underused_first, su_zero_sum;
u64 su_cgroup_id, su_headroom;
u32 su_nid, su_order, su_nr_pages, su_max_zero, su_nr_zero;

/*
 * init() calls, of this policy and of those loaded to share the map with
 * it (knobs_load_next()): a spin ends soon after the next policy's init().
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} inits SEC(".maps");

/* From the next policy's init() to its ops published: 3 statements */
#define SPIN_AFTER_INIT_NS	(50 * 1000 * 1000ULL)

struct spin {
	u64 deadline;
	u64 inits;		/* inits when the spin began */
};

static u64 nr_inits(void)
{
	u32 key = 0;
	u64 *n = bpf_map_lookup_elem(&inits, &key);

	return n ? *n : 0;
}

static int spin_until(u32 i, void *data)
{
	struct spin *s = data;
	u64 now;

	/* a slow step: one bpf_loop() ends at 2^23, under a second at 1 read */
	bpf_ktime_get_ns();
	bpf_ktime_get_ns();
	bpf_ktime_get_ns();
	bpf_ktime_get_ns();
	bpf_ktime_get_ns();
	bpf_ktime_get_ns();
	bpf_ktime_get_ns();
	now = bpf_ktime_get_ns();

	if (s->inits != ~0ULL && nr_inits() != s->inits) {
		s->inits = ~0ULL;
		if (s->deadline > now + SPIN_AFTER_INIT_NS)
			s->deadline = now + SPIN_AFTER_INIT_NS;
	}
	return now >= s->deadline;
}

/* Busy-wait spin_ns, or until SPIN_AFTER_INIT_NS after another init() */
static __always_inline void spin(void)
{
	struct spin s = {
		.deadline = bpf_ktime_get_ns() + spin_ns,
		.inits = nr_inits(),
	};

	bpf_loop(1 << 23, spin_until, &s, 0);
}

static __always_inline int answer_pte_limits(struct collapse_ext_ctx *cctx,
					     struct collapse_ext_limits *limits)
{
	if (!nr_pte_limits++) {
		first_order = collapse_ext_order(limits);
		if (bpf_ksym_exists(collapse_ext_memcg_headroom)) {
			has_headroom = 1;
			seen_headroom = collapse_ext_memcg_headroom(cctx);
		}
	}
	nr_pte_limits_order[collapse_ext_order(limits) & 15]++;
	if (range_base && cctx->address >= range_base &&
	    cctx->address - range_base < 64ULL << PMD_SHIFT) {
		ranges_seen |= 1ULL << ((cctx->address - range_base) >> PMD_SHIFT);
		if (collapse_ext_order(limits) == COLLAPSE_EXT_PMD_ORDER)
			nr_region_ranges++;
	}
	if (spin_ns)
		spin();
	seen_none = limits->max_ptes_none;
	seen_swap = limits->max_ptes_swap;
	seen_shared = limits->max_ptes_shared;
	seen_caller = cctx->caller;
	seen_flags = cctx->flags;
	seen_is_file = cctx->is_file;
	seen_cgroup_id = cctx->cgroup_id;
	seen_owner_cgroup_id = collapse_ext_owner_cgroup_id(cctx);
	if (veto || (veto_orders & (1U << (collapse_ext_order(limits) & 15))))
		return 1;
	if (apply_khugepaged && bpf_ksym_exists(collapse_ext_apply_khugepaged_limits))
		collapse_ext_apply_khugepaged_limits(limits);
	if (set_none != KEEP)
		limits->max_ptes_none = set_none;
	if (none_pct != KEEP)
		limits->max_ptes_none = ((1U << (collapse_ext_order(limits) & 15)) *
					 (u64)none_pct) / 100;
	if (set_none_pmd != KEEP &&
	    collapse_ext_order(limits) == COLLAPSE_EXT_PMD_ORDER)
		limits->max_ptes_none = set_none_pmd;
	if (set_swap != KEEP)
		limits->max_ptes_swap = set_swap;
	if (set_shared != KEEP)
		limits->max_ptes_shared = set_shared;
	return 0;
}

SEC("struct_ops/pte_limits")
int BPF_PROG(knobs_pte_limits, struct collapse_ext_ctx *cctx,
	     struct collapse_ext_limits *limits)
{
	int ret;

	__sync_fetch_and_add(&inflight, 1);
	ret = answer_pte_limits(cctx, limits);
	/* exit() must wait for every caller inside a hook */
	if (exit_reason >= 0)
		__sync_fetch_and_add(&nr_after_exit, 1);
	__sync_fetch_and_sub(&inflight, 1);
	return ret;
}

SEC("struct_ops/target_node")
s32 BPF_PROG(knobs_target_node, struct collapse_ext_ctx *cctx)
{
	nr_target_node++;
	seen_node_caller = cctx->caller;
	seen_load0 = collapse_ext_node_load(cctx, 0);
	seen_load1 = collapse_ext_node_load(cctx, 1);
	return node;
}

SEC("struct_ops/batch_size")
u32 BPF_PROG(knobs_batch_size, struct collapse_ext_ctx *cctx, u32 dflt,
	     u32 pmds_left)
{
	nr_batch_size++;
	/* MADV_COLLAPSE only: the khugepaged pass asks pass_size */
	if (cctx->caller != COLLAPSE_KHUGEPAGED)
		nr_batch_madvise++;
	seen_batch_dflt = dflt;
	if (!seen_pmds_left)
		seen_pmds_left = pmds_left;
	last_pmds_left = pmds_left;
	return batch_pmds == KEEP ? dflt : batch_pmds;
}

SEC("struct_ops/pass_size")
u32 BPF_PROG(knobs_pass_size, struct collapse_ext_ctx *cctx, u32 dflt)
{
	nr_pass_size++;
	if (nr_region_ranges - region_at_pass > pass_ranges_max)
		pass_ranges_max = nr_region_ranges - region_at_pass;
	region_at_pass = nr_region_ranges;
	if (nr_region_full - full_at_pass > pass_full_max)
		pass_full_max = nr_region_full - full_at_pass;
	full_at_pass = nr_region_full;
	seen_dflt = dflt;
	return pass_pages == KEEP ? dflt : pass_pages;
}

SEC("struct_ops/scan_budget")
u32 BPF_PROG(knobs_scan_budget, struct collapse_ext_ctx *cctx, u32 dflt,
	     const struct collapse_ext_visit *visit)
{
	nr_scan_budget++;
	if (nr_pte_limits - pte_limits_at_visit > visit_ranges_max)
		visit_ranges_max = nr_pte_limits - pte_limits_at_visit;
	pte_limits_at_visit = nr_pte_limits;
	sb_dflt = dflt;
	sb_caller = cctx->caller;
	sb_address = cctx->address;
	sb_anon_pages = visit->anon_pages;
	sb_scanned = visit->scanned_pages;
	sb_since_visit_ns = visit->since_visit_ns;
	sb_walk_pmds = visit->walk_pmds;
	sb_walk_huge = visit->walk_huge;
	sb_visit_pmds = visit->visit_pmds;
	sb_visit_huge = visit->visit_huge;
	sb_mm = (u64)cctx->mm;
	sb_owner_cgroup_id = collapse_ext_owner_cgroup_id(cctx);
	return budget == KEEP ? dflt : budget;
}

SEC("struct_ops/orders")
u32 BPF_PROG(knobs_orders, struct collapse_ext_ctx *cctx, u32 allowed)
{
	nr_orders++;
	seen_allowed = allowed;
	return orders_answer == KEEP ? allowed : orders_answer;
}

SEC("struct_ops/collapsed")
void BPF_PROG(knobs_collapsed, struct collapse_ext_ctx *cctx,
	      enum collapse_ext_result result)
{
	nr_collapsed++;
	last_result = result;
	nr_result[result & 15]++;
	if (range_base && cctx->address >= range_base &&
	    cctx->address - range_base < 64ULL << PMD_SHIFT &&
	    cctx->caller == COLLAPSE_KHUGEPAGED &&
	    result == COLLAPSE_EXT_RESULT_NONE_LIMIT)
		nr_region_full++;
}

SEC("struct_ops/split_underused")
u32 BPF_PROG(knobs_split_underused, struct collapse_ext_underused *u)
{
	s64 verdict = u->counted ? underused_counted_verdict : underused_verdict;

	nr_split_underused++;
	if (u->counted) {
		su_zero_sum += u->nr_zero;
	} else {
		/* before anything was split */
		if (!nr_underused_first++)
			su_headroom = u->headroom;
		su_cgroup_id = u->cgroup_id;
		su_nid = u->nid;
		su_order = u->order;
		su_nr_pages = u->nr_pages;
		su_max_zero = u->max_zero;
		su_nr_zero = u->nr_zero;
	}
	if (underused_max_zero != KEEP)
		u->max_zero = underused_max_zero;
	return verdict == KEEP ? COLLAPSE_EXT_UNDERUSED_DEFAULT : verdict;
}

SEC("struct_ops/init")
s32 BPF_PROG(knobs_init)
{
	u32 key = 0;
	u64 *n = bpf_map_lookup_elem(&inits, &key);

	if (n)
		__sync_fetch_and_add(n, 1);
	nr_init++;
	return init_ret;
}

SEC("struct_ops/exit")
void BPF_PROG(knobs_exit, struct collapse_ext_exit_info *info)
{
	exit_reason = info->reason;
}

COLLAPSE_EXT_OPS(knobs,
	.pte_limits = (void *)knobs_pte_limits,
	.target_node = (void *)knobs_target_node,
	.batch_size = (void *)knobs_batch_size,
	.pass_size = (void *)knobs_pass_size,
	.scan_budget = (void *)knobs_scan_budget,
	.orders = (void *)knobs_orders,
	.collapsed = (void *)knobs_collapsed,
	.split_underused = (void *)knobs_split_underused,
	.init = (void *)knobs_init,
	.exit = (void *)knobs_exit);
