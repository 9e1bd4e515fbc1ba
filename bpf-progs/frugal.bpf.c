// SPDX-License-Identifier: GPL-2.0
/*
 * frugal: never grow a process's memory to collapse it.
 *
 * For memory-tight containers: only fully populated ranges are collapsed
 * (max_ptes_none 0), and ranges with more than a few swapped-out or shared
 * pages are left alone, so collapse neither faults in swap nor breaks
 * sharing. Trades huge page coverage of sparse heaps for zero bloat.
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

COLLAPSE_EXT_INFO("collapses only fully populated ranges with few swapped-out "
		  "or shared pages: never grows memory to collapse it");

SEC("struct_ops/pte_limits")
int BPF_PROG(frugal_pte_limits, struct collapse_ext_ctx *cctx,
	     struct collapse_ext_limits *limits)
{
	limits->max_ptes_none = 0;
	limits->max_ptes_swap = HPAGE_PMD_NR / 64;
	limits->max_ptes_shared = HPAGE_PMD_NR / 64;
	return 0;
}

COLLAPSE_EXT_OPS(frugal, .pte_limits = (void *)frugal_pte_limits);
