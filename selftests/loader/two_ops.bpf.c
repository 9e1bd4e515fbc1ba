// SPDX-License-Identifier: GPL-2.0
/*
 * Two collapse_ext_ops maps in one object: which is the policy? collapsectl
 * refuses to guess.
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops/pte_limits")
int BPF_PROG(two_ops_pte_limits, struct collapse_ext_ctx *cctx,
	     struct collapse_ext_limits *limits)
{
	return 0;
}

COLLAPSE_EXT_OPS(two_ops_a,
	.pte_limits = (void *)two_ops_pte_limits);
COLLAPSE_EXT_OPS(two_ops_b);
