// SPDX-License-Identifier: GPL-2.0
/*
 * numa_spread: spread new huge pages round-robin over the nodes with free
 * memory.
 *
 * For memory-bandwidth-bound workloads that touch all of their memory from
 * all nodes: interleaving huge pages balances bandwidth the way
 * MPOL_INTERLEAVE does for base pages. A node with less than 64 MiB free
 * is skipped. Trades locality for balance.
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

COLLAPSE_EXT_INFO("spreads new huge pages round-robin over the nodes with 64 "
		  "MiB free or more");

#define MIN_FREE_PAGES	(64 << 20 >> 12)
#define MAX_NODES	64

u32 next_node;

SEC("struct_ops/target_node")
s32 BPF_PROG(numa_spread_target_node, struct collapse_ext_ctx *cctx)
{
	u32 n = collapse_ext_node_count(), start, i;

	if (!bpf_ksym_exists(collapse_ext_node_free_pages) || n < 2)
		return COLLAPSE_EXT_ANY_NODE;
	start = __sync_fetch_and_add(&next_node, 1);
	for (i = 0; i < MAX_NODES && i < n; i++) {
		s32 nid = (start + i) % n;

		if (collapse_ext_node_free_pages(nid) >= MIN_FREE_PAGES)
			return nid;
	}
	return COLLAPSE_EXT_ANY_NODE;
}

COLLAPSE_EXT_OPS(numa_spread, .target_node = (void *)numa_spread_target_node);
