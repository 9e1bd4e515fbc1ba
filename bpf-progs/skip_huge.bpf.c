// SPDX-License-Identifier: GPL-2.0
/*
 * skip_huge: khugepaged stops re-reading memory that is already huge.
 *
 * Once most of a process's memory is PMD-mapped, every khugepaged visit
 * still walks all of it, PMD by PMD, to find the little left to do. This
 * policy skips an mm (khugepaged moves on without taking its mmap_lock)
 * when a new walk of it would start and its last complete walk found at
 * least huge_pct percent of its PMD ranges PMD-mapped, or when its last
 * visit made none of the ranges it tried huge (they failed, or were
 * empty), and looks again once recheck_s seconds have passed since
 * khugepaged last scanned it, so new memory is still found. A walk that
 * started goes on to its end. The kernel counts the visits it skipped
 * (khugepaged_mm_skips) and the ranges it did scan (ranges_scanned).
 * .rodata, set before load:
 *
 *	huge_pct	threshold of PMD-mapped ranges (default 95)
 *	recheck_s	seconds before a skipped mm is scanned again (default 60)
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

COLLAPSE_EXT_INFO("khugepaged skips a process whose memory is already "
		  "huge_pct% huge, or whose last visit collapsed nothing, for "
		  "recheck_s seconds");

const volatile u32 huge_pct = 95;
COLLAPSE_EXT_KNOB(huge_pct,
		  "percent of PMD ranges PMD-mapped above which a process is "
		  "skipped");
const volatile u32 recheck_s = 60;
COLLAPSE_EXT_KNOB(recheck_s,
		  "seconds before a skipped process is scanned again");

SEC("struct_ops/scan_budget")
u32 BPF_PROG(skip_huge_scan_budget, struct collapse_ext_ctx *cctx, u32 dflt,
	     const struct collapse_ext_visit *visit)
{
	/* only before a walk starts: a walk in progress goes on */
	bool mostly_huge = !cctx->address && visit->walk_pmds &&
			   (u64)visit->walk_huge * 100 >= (u64)huge_pct * visit->walk_pmds;
	bool all_failed = visit->visit_pmds && !visit->visit_huge;

	if (!visit->since_visit_ns ||
	    visit->since_visit_ns >= (u64)recheck_s * 1000000000ULL)
		return dflt;
	return mostly_huge || all_failed ? 0 : dflt;
}

COLLAPSE_EXT_OPS(skip_huge, .scan_budget = (void *)skip_huge_scan_budget);
