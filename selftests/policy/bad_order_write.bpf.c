// SPDX-License-Identifier: GPL-2.0
/*
 * Must be rejected by the verifier: of pte_limits' limits, only the three
 * limits are the answer; order (7.3) is read-only.
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops/pte_limits")
int BPF_PROG(bad_order_write_limits, struct collapse_ext_ctx *cctx,
	     struct collapse_ext_limits *limits)
{
	limits->order = 4;
	return 0;
}

COLLAPSE_EXT_OPS(bad_order_write, .pte_limits = (void *)bad_order_write_limits);
