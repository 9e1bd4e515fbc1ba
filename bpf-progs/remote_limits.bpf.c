// SPDX-License-Identifier: GPL-2.0
/*
 * remote_limits: an agent collapsing another process's memory follows
 * khugepaged's limits.
 *
 * process_madvise(MADV_COLLAPSE) with flags 0 collapses another process's
 * ranges as that process's own madvise(MADV_COLLAPSE) would: with no pte
 * limit, so a range with a single present page may grow by 511 pages. The
 * MADV_COLLAPSE RFC refused that to callers without CAP_SYS_ADMIN unless
 * they passed MADV_F_COLLAPSE_LIMITS; mainline merged remote MADV_COLLAPSE
 * (Linux 6.1) without the rule, and the kernel keeps mainline's behaviour.
 * Where an operator wants the RFC's protection, this policy gives it: a
 * process_madvise() request made without MADV_F_COLLAPSE_LIMITS gets
 * khugepaged's sysfs max_ptes_{none,swap,shared} (read at each range), as
 * if it had passed the flag. A process collapsing its own memory, and
 * khugepaged, are left as they are.
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

COLLAPSE_EXT_INFO("process_madvise(MADV_COLLAPSE) without limits gets "
		  "khugepaged's sysfs limits (the 2022 RFC's rule, as an "
		  "operator's choice)");

SEC("struct_ops/pte_limits")
int BPF_PROG(remote_limits_pte_limits, struct collapse_ext_ctx *cctx,
	     struct collapse_ext_limits *limits)
{
	if (cctx->caller == COLLAPSE_PROCESS_MADVISE &&
	    !(cctx->flags & MADV_F_COLLAPSE_LIMITS))
		collapse_ext_apply_khugepaged_limits(limits);
	return 0;
}

COLLAPSE_EXT_OPS(remote_limits, .pte_limits = (void *)remote_limits_pte_limits);
