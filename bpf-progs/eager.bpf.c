// SPDX-License-Identifier: GPL-2.0
/*
 * eager: the fastest huge page coverage.
 *
 * Collapses sparse ranges (max_ptes_none 511: one present page is enough),
 * keeps the kernel's swap and shared limits and collapses MADV_COLLAPSE
 * requests in batches of 8 PMDs. Trades memory (up to 511 zero pages per
 * huge page) for TLB reach. For khugepaged to reach it sooner, load pace
 * (bigger khugepaged passes, a root-only hook) at the root beside it.
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

COLLAPSE_EXT_INFO("collapses sparse ranges too (one present page is enough) "
		  "and MADV_COLLAPSE in batches of 8 PMDs: coverage for "
		  "memory");

SEC("struct_ops/pte_limits")
int BPF_PROG(eager_pte_limits, struct collapse_ext_ctx *cctx,
	     struct collapse_ext_limits *limits)
{
	limits->max_ptes_none = HPAGE_PMD_NR - 1;
	return 0;
}

SEC("struct_ops/batch_size")
u32 BPF_PROG(eager_batch_size, struct collapse_ext_ctx *cctx, u32 dflt)
{
	return 8;
}

COLLAPSE_EXT_OPS(eager,
	.pte_limits = (void *)eager_pte_limits,
	.batch_size = (void *)eager_batch_size);
