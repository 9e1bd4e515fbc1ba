// SPDX-License-Identifier: GPL-2.0
/*
 * A policy in ".struct_ops", not ".struct_ops.link": registering it
 * without a link (BPF_MAP_UPDATE_ELEM) must be refused, as its counters,
 * in a link's fdinfo, could not be read.
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops/pte_limits")
int BPF_PROG(no_link_limits, struct collapse_ext_ctx *cctx,
	     struct collapse_ext_limits *limits)
{
	return 0;
}

SEC(".struct_ops")
struct collapse_ext_ops no_link = {
	.pte_limits = (void *)no_link_limits,
	.name = "no_link",
};
