// SPDX-License-Identifier: GPL-2.0
/*
 * passthrough: answers every question exactly as the kernel would without
 * a policy (limits unchanged, the kernel's node, the default batch of one
 * PMD, the whole of what is left of the pass for every mm), with every
 * hook a policy may have on any cgroup (pass_size, root-only, is pace's).
 *
 * Use it to measure what a policy costs (the hooks are called, nothing
 * changes) and as the regression baseline: the kernel's own khugepaged
 * selftest must pass with it attached at the root, as it does with none.
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

COLLAPSE_EXT_INFO("answers every question as the kernel would without a "
		  "policy: the cost baseline and the regression check");

SEC("struct_ops/pte_limits")
int BPF_PROG(passthrough_pte_limits, struct collapse_ext_ctx *cctx,
	     struct collapse_ext_limits *limits)
{
	return 0;
}

SEC("struct_ops/target_node")
s32 BPF_PROG(passthrough_target_node, struct collapse_ext_ctx *cctx)
{
	return COLLAPSE_EXT_ANY_NODE;
}

SEC("struct_ops/batch_size")
u32 BPF_PROG(passthrough_batch_size, struct collapse_ext_ctx *cctx, u32 dflt)
{
	return dflt;
}

SEC("struct_ops/scan_budget")
u32 BPF_PROG(passthrough_scan_budget, struct collapse_ext_ctx *cctx, u32 dflt)
{
	return dflt;
}

COLLAPSE_EXT_OPS(passthrough,
	.pte_limits = (void *)passthrough_pte_limits,
	.target_node = (void *)passthrough_target_node,
	.batch_size = (void *)passthrough_batch_size,
	.scan_budget = (void *)passthrough_scan_budget);
