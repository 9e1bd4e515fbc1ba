// SPDX-License-Identifier: GPL-2.0
/* Must be refused: hooks run under RCU, a sleepable program cannot. */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops.s/pte_limits")
int BPF_PROG(bad_sleepable_limits, struct collapse_ext_ctx *cctx,
	     struct collapse_ext_limits *limits)
{
	return 0;
}

COLLAPSE_EXT_OPS(bad_sleepable, .pte_limits = (void *)bad_sleepable_limits);
