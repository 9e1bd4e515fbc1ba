// SPDX-License-Identifier: GPL-2.0
/*
 * priority: khugepaged looks at latency-critical memory first.
 *
 * khugepaged walks every mm in turn, a pass of pages_to_scan base pages at
 * a time: a service's memory waits behind every GiB of batch jobs ahead of
 * it in the list. Attach this policy where the batch work is (the root, for
 * "everyone else"), and `passthrough` (or any policy without scan_budget)
 * on the latency-critical cgroup; the nearest policy governs an mm:
 *
 *	collapsectl load priority.bpf.o
 *	collapsectl load passthrough.bpf.o --cgroup /sys/fs/cgroup/service \
 *		--name critical
 *
 * Each time khugepaged arrives at an mm under priority, it spends
 * share_pct percent of what is left of the pass there (at least min_pages,
 * so every mm still progresses, one PMD range a visit by default; the mm
 * resumes where it stopped) and moves on; critical mms get the whole rest
 * of the pass. .rodata, set before load (skeleton or bpftool):
 *
 *	share_pct	percent of the rest of the pass per visit (default 5)
 *	min_pages	floor of a visit (default 512; 0 is taken as 512: a
 *			priority never skips an mm)
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

COLLAPSE_EXT_INFO("khugepaged spends only share_pct% of the rest of its pass "
		  "per visit on each process under it, so the others come "
		  "first");

const volatile u32 share_pct = 5;
COLLAPSE_EXT_KNOB(share_pct,
		  "percent of the rest of the pass per visit");
const volatile u32 min_pages = HPAGE_PMD_NR;
COLLAPSE_EXT_KNOB(min_pages,
		  "the least a visit scans, in base pages; 0 is taken as 512 (a "
		  "process is never skipped)");

SEC("struct_ops/scan_budget")
u32 BPF_PROG(priority_scan_budget, struct collapse_ext_ctx *cctx, u32 dflt)
{
	u64 n = (u64)dflt * share_pct / 100;

	if (n < min_pages)
		n = min_pages;
	if (!n)		/* never 0: that would skip the mm */
		n = HPAGE_PMD_NR;
	return n < dflt ? n : dflt;
}

COLLAPSE_EXT_OPS(priority, .scan_budget = (void *)priority_scan_budget);
