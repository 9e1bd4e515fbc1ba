// SPDX-License-Identifier: GPL-2.0
/*
 * elastic: eager's huge page coverage while memory is plentiful, the
 * zero-filled memory given back as the cgroup nears its limit.
 *
 * Collapses as eager does (max_ptes_none 511, MADV_COLLAPSE batches of 8)
 * while the cgroup has at least room_mib
 * below memory.high or memory.max (its own or an ancestor's). Its THPs
 * wait on the deferred split queue meanwhile (LATER). Once the room is
 * smaller, the reclaim that comes with it (memory.high, memory.max,
 * global) makes the deferred split shrinker split every THP with more
 * than max_zero zero-filled subpages, which go back to the shared zero
 * page; and collapse fills at most max_zero holes, so that what was split
 * is not collapsed again while memory stays tight.
 *
 * Kernels: both (hook split_underused, kfunc collapse_ext_memcg_headroom):
 * the pte limits follow the room itself, as the split verdicts do.
 * Knobs (.rodata, set before load): room_mib, max_zero.
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

/* base pages of 4 KiB: 256 per MiB */
static __always_inline u64 room_pages(void)
{
	return room_mib * 256;
}

static __always_inline bool tight(struct collapse_ext_ctx *cctx)
{
	return collapse_ext_memcg_headroom(cctx) < room_pages();
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
	if (u->headroom >= room_pages())
		return COLLAPSE_EXT_UNDERUSED_LATER;
	u->max_zero = max_zero;
	return COLLAPSE_EXT_UNDERUSED_DEFAULT;
}

COLLAPSE_EXT_OPS(elastic,
	.pte_limits = (void *)elastic_pte_limits,
	.batch_size = (void *)elastic_batch_size,
	.split_underused = (void *)elastic_split_underused);
