// SPDX-License-Identifier: GPL-2.0
/*
 * pace: how much khugepaged scans per pass, for the whole system.
 *
 * A khugepaged pass crosses every mm of every cgroup, so its size is a
 * root-only hook: the kernel refuses pace below the root (EOPNOTSUPP).
 * Load it at the root beside the policies of the cgroups, e.g. to give
 * eager's or elastic's cgroups huge pages sooner: each pass scans factor
 * times sysfs's pages_to_scan (the kernel clamps the answer to 64 times
 * pages_to_scan). With no other hook, pace answers nothing else: every
 * cgroup without a policy of its own keeps the kernel's defaults.
 * Knobs (.rodata, set before load): factor (8).
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

COLLAPSE_EXT_INFO("root only: each khugepaged pass scans factor times sysfs's "
		  "pages_to_scan");

const volatile u32 factor = 8;
COLLAPSE_EXT_KNOB(factor,
		  "pass size in multiples of sysfs's pages_to_scan");

SEC("struct_ops/pass_size")
u32 BPF_PROG(pace_pass_size, struct collapse_ext_ctx *cctx, u32 dflt)
{
	/* base pages */
	return dflt * factor;
}

COLLAPSE_EXT_OPS(pace,
	.pass_size = (void *)pace_pass_size);
