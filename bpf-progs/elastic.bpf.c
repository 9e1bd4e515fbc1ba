// SPDX-License-Identifier: GPL-2.0
/*
 * elastic: eager's huge page coverage while memory is plentiful, the
 * zero-filled memory given back as the cgroup nears its limit or its
 * memory comes under pressure.
 *
 * Collapses as eager does (max_ptes_none 511, MADV_COLLAPSE batches of 8)
 * while the cgroup is not tight. It is tight:
 *  - with less than room_mib below memory.high or memory.max (its own or
 *    an ancestor's): the limit is near;
 *  - for calm_ms after its memory.events high or max, or its swap usage
 *    (memory.swap.current), last rose: reclaim reached it with no limit
 *    near (global reclaim, memory.reclaim, a limit met between two looks).
 * Its THPs wait on the deferred split queue meanwhile (LATER). Once tight,
 * the reclaim that comes with it makes the deferred split shrinker split
 * every THP with more than max_zero zero-filled subpages, which go back to
 * the shared zero page; and collapse fills at most max_zero holes, so that
 * what was split is not collapsed again while memory stays tight.
 *
 * Kernels: both (hook split_underused, kfuncs collapse_ext_memcg_headroom
 * and mm/bpf_memcontrol.c's): the pte limits follow the cgroup of the mm's
 * owner, the split verdicts the THP's own. The memcg's statistics are
 * refreshed about every 2 s, hence calm_ms's default of twice that: a
 * pressure that lasts keeps the cgroup tight from one refresh to the next.
 * Knobs (.rodata, set before load): room_mib, calm_ms, max_zero.
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

COLLAPSE_EXT_INFO("eager while the cgroup has room below its memory limit; "
		  "near it, splits huge pages that are mostly zeros and fills "
		  "fewer holes");

const volatile u64 room_mib = 64;
COLLAPSE_EXT_KNOB(room_mib,
		  "MiB of room below the memory limits under which the cgroup "
		  "counts as tight");
const volatile u32 max_zero = HPAGE_PMD_NR / 2;
COLLAPSE_EXT_KNOB(max_zero,
		  "zero-filled subpages above which a huge page is split when "
		  "tight, and the holes a collapse may fill then");

const volatile u64 calm_ms = 4000;
COLLAPSE_EXT_KNOB(calm_ms,
		  "ms after its memory.events high/max or its swap usage last "
		  "rose during which the cgroup counts as tight");

/* base pages of 4 KiB: 256 per MiB */
static __always_inline u64 room_pages(void)
{
	return room_mib * 256;
}

/* A cgroup's pressure counters are read at most this often */
#define SAMPLE_NS	(10 * 1000 * 1000ULL)

struct pressure {
	u64 sampled_ns;		/* when the counters were last read */
	u64 events;		/* memory.events high + max then */
	u64 swap;		/* bytes swapped out then */
	u64 rose_ns;		/* the last read that saw either rise */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, u64);		/* cgroup id */
	__type(value, struct pressure);
} pressure SEC(".maps");

/*
 * Did cgroup @cgid's memory come under pressure in the last calm_ms?
 * Swap rises with each swap-out (and falls as swap is freed): only a
 * rise counts. Racing hooks may both read the counters: the later write
 * wins, and a rise is seen by one of them.
 */
static bool pressured(u64 cgid)
{
	u64 now = bpf_ktime_get_ns(), events, swap;
	struct pressure *p, fresh = {};

	p = bpf_map_lookup_elem(&pressure, &cgid);
	if (!p) {
		if (!collapse_ext_memcg_pressure(cgid, &fresh.events,
						 &fresh.swap))
			return false;
		fresh.sampled_ns = now;
		bpf_map_update_elem(&pressure, &cgid, &fresh, BPF_NOEXIST);
		return false;
	}
	if (now - p->sampled_ns >= SAMPLE_NS &&
	    collapse_ext_memcg_pressure(cgid, &events, &swap)) {
		if (events != p->events || swap > p->swap)
			p->rose_ns = now;
		p->events = events;
		p->swap = swap;
		p->sampled_ns = now;
	}
	return p->rose_ns && now - p->rose_ns < calm_ms * 1000000ULL;
}

static __always_inline bool tight(struct collapse_ext_ctx *cctx)
{
	return collapse_ext_memcg_headroom(cctx) < room_pages() ||
	       pressured(collapse_ext_owner_cgroup_id(cctx));
}

SEC("struct_ops/pte_limits")
int BPF_PROG(elastic_pte_limits, struct collapse_ext_ctx *cctx,
	     struct collapse_ext_limits *limits)
{
	/* below PMD (7.3's mTHP orders) the kernel allows 0 or all but one */
	if (collapse_ext_order(limits) < COLLAPSE_EXT_PMD_ORDER)
		return 0;
	limits->max_ptes_none = tight(cctx) ? max_zero : HPAGE_PMD_NR - 1;
	return 0;
}

SEC("struct_ops/batch_size")
u32 BPF_PROG(elastic_batch_size, struct collapse_ext_ctx *cctx, u32 dflt)
{
	return 8;
}

SEC("struct_ops/split_underused")
u32 BPF_PROG(elastic_split_underused, struct collapse_ext_underused *u)
{
	if (u->headroom >= room_pages() && !pressured(u->cgroup_id))
		return COLLAPSE_EXT_UNDERUSED_LATER;
	u->max_zero = max_zero;
	return COLLAPSE_EXT_UNDERUSED_DEFAULT;
}

COLLAPSE_EXT_OPS(elastic,
	.pte_limits = (void *)elastic_pte_limits,
	.batch_size = (void *)elastic_batch_size,
	.split_underused = (void *)elastic_split_underused);
