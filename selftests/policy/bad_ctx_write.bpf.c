// SPDX-License-Identifier: GPL-2.0
/* Must be rejected by the verifier: ctx is read-only to a policy. */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops/pte_limits")
int BPF_PROG(bad_ctx_write_limits, struct collapse_ext_ctx *cctx,
	     struct collapse_ext_limits *limits)
{
	cctx->address = 0;
	return 0;
}

COLLAPSE_EXT_OPS(bad_ctx_write, .pte_limits = (void *)bad_ctx_write_limits);
