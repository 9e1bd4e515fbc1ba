// SPDX-License-Identifier: GPL-2.0
/*
 * eager: the fastest huge page coverage.
 *
 * Collapses sparse ranges (max_ptes_none 511: one present page is enough),
 * keeps the kernel's swap and shared limits, lets khugepaged scan 8 times
 * more per pass (a root-only hook: attached on a child cgroup, pass_size
 * is not asked) and collapses MADV_COLLAPSE requests in batches of 8 PMDs.
 * Trades memory (up to 511 zero pages per huge page) and khugepaged CPU
 * time for TLB reach.
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

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

SEC("struct_ops/pass_size")
u32 BPF_PROG(eager_pass_size, struct collapse_ext_ctx *cctx, u32 dflt)
{
	/* base pages (the kernel clamps to 64x pages_to_scan) */
	return dflt * 8;
}

COLLAPSE_EXT_OPS(eager,
	.pte_limits = (void *)eager_pte_limits,
	.batch_size = (void *)eager_batch_size,
	.pass_size = (void *)eager_pass_size);
