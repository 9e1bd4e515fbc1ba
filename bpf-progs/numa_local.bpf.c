// SPDX-License-Identifier: GPL-2.0
/*
 * numa_local: put each new huge page on the node where the process runs.
 *
 * The kernel's choice is the node holding most of the range's base pages,
 * which keeps memory where it was faulted even after the process moved.
 * This policy follows the owner task instead (the node of the CPU it last
 * ran on), so collapse doubles as a migration towards the CPU. Trades
 * remote accesses after a move for possibly uneven node usage.
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

COLLAPSE_EXT_INFO("puts each new huge page on the node the process runs on");

SEC("struct_ops/target_node")
s32 BPF_PROG(numa_local_target_node, struct collapse_ext_ctx *cctx)
{
	/* -1 when the mm has no owner any more: the kernel's choice */
	return collapse_ext_owner_node(cctx);
}

COLLAPSE_EXT_OPS(numa_local, .target_node = (void *)numa_local_target_node);
