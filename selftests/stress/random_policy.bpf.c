// SPDX-License-Identifier: GPL-2.0
/*
 * random_policy: every hook answers at random, in range or not. The kernel
 * must clamp, replace or count every answer and never misbehave.
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops/pte_limits")
int BPF_PROG(random_pte_limits, struct collapse_ext_ctx *cctx,
	     struct collapse_ext_limits *limits)
{
	u32 r = bpf_get_prandom_u32();

	limits->max_ptes_none = bpf_get_prandom_u32() % 1024;
	limits->max_ptes_swap = r & 1 ? bpf_get_prandom_u32() : 8;
	limits->max_ptes_shared = r & 2 ? 0 : 0xffffffff;
	return (r >> 8) % 8 == 0;	/* veto one range in 8 */
}

SEC("struct_ops/target_node")
s32 BPF_PROG(random_target_node, struct collapse_ext_ctx *cctx)
{
	return (s32)(bpf_get_prandom_u32() % 8) - 3;	/* -3..4 */
}

SEC("struct_ops/batch_size")
u32 BPF_PROG(random_batch_size, struct collapse_ext_ctx *cctx, u32 dflt)
{
	u32 r = bpf_get_prandom_u32();

	return r & 1 ? r : r % 70;
}

SEC("struct_ops/scan_budget")
u32 BPF_PROG(random_scan_budget, struct collapse_ext_ctx *cctx, u32 dflt)
{
	u32 r = bpf_get_prandom_u32();

	/* skip, a bit, all, or far more than is left */
	return (r & 3) == 0 ? 0 : (r & 3) == 1 ? r % 2048 : (r & 3) == 2 ? dflt : r;
}

SEC("struct_ops/collapsed")
void BPF_PROG(random_collapsed, struct collapse_ext_ctx *cctx,
	      enum collapse_ext_result result)
{
}

COLLAPSE_EXT_OPS(random_policy,
	.pte_limits = (void *)random_pte_limits,
	.target_node = (void *)random_target_node,
	.batch_size = (void *)random_batch_size,
	.scan_budget = (void *)random_scan_budget,
	.collapsed = (void *)random_collapsed);
