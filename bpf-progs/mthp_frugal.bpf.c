// SPDX-License-Identifier: GPL-2.0
/*
 * mthp_frugal: small folios where memory is tight, huge pages where it is
 * not.
 *
 * While the cgroup of an mm has less than tight_mib below memory.high or
 * memory.max (its own or an ancestor's), khugepaged makes only folios of
 * at most 2^tight_max_order pages of it (64 KiB with 4 KiB pages), and
 * only of blocks that need no hole filled: TLB reach still grows, memory
 * does not. With room, khugepaged's own choice: every order sysfs allows,
 * PMDs first, holes filled as sysfs says. MADV_COLLAPSE, which asks for a
 * PMD, is left as it is.
 *
 * Kernels: 7.3 (hooks orders and pte_limits, ctx.order, kfunc
 * collapse_ext_memcg_headroom). On 6.12 it loads without the orders hook,
 * which collapsectl reports, and changes nothing: that kernel collapses
 * PMDs only and cannot tell the headroom.
 * Knobs (.rodata, set before load): tight_mib, tight_max_order.
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

COLLAPSE_EXT_INFO("7.3: with less than tight_mib below the cgroup's memory "
		  "limit, khugepaged makes folios of at most 64 KiB and fills "
		  "no hole (on 6.12: no effect)");

const volatile u64 tight_mib = 256;
COLLAPSE_EXT_KNOB(tight_mib,
		  "MiB of room below the memory limits under which the cgroup "
		  "counts as tight");
const volatile u32 tight_max_order = 4;
COLLAPSE_EXT_KNOB(tight_max_order,
		  "the largest order khugepaged may make when tight");

static __always_inline bool tight(struct collapse_ext_ctx *cctx)
{
	if (!bpf_ksym_exists(collapse_ext_memcg_headroom))
		return false;
	/* base pages of 4 KiB: 256 per MiB */
	return collapse_ext_memcg_headroom(cctx) < tight_mib * 256;
}

SEC("struct_ops/orders")
u32 BPF_PROG(mthp_frugal_orders, struct collapse_ext_ctx *cctx, u32 allowed)
{
	if (!tight(cctx))
		return allowed;
	return allowed & ((2U << tight_max_order) - 1);
}

SEC("struct_ops/pte_limits")
int BPF_PROG(mthp_frugal_pte_limits, struct collapse_ext_ctx *cctx,
	     struct collapse_ext_limits *limits)
{
	if (collapse_ext_order(limits) < COLLAPSE_EXT_PMD_ORDER && tight(cctx))
		limits->max_ptes_none = 0;
	return 0;
}

COLLAPSE_EXT_OPS(mthp_frugal,
	.orders = (void *)mthp_frugal_orders,
	.pte_limits = (void *)mthp_frugal_pte_limits);
