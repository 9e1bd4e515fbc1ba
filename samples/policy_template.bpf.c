// SPDX-License-Identifier: GPL-2.0
/*
 * policy_template: a starting point for your own collapse_ext policy.
 *
 * Copy this file, rename the policy in COLLAPSE_EXT_OPS() at the bottom,
 * keep the hooks you need (each is optional) and build it the way `make`
 * builds bpf-progs/ (CO-RE: collapse_ext_types.h, no vmlinux.h; the
 * object loads on every kernel base). In the source tree after `make`,
 * from its top:
 *
 *	clang -g -O2 -target bpf -D__TARGET_ARCH_x86 -Ibuild/6.12/libbpf/include \
 *		-Ibuild/6.12/headers/include -Ibpf-progs -c /path/to/my.bpf.c -o my.bpf.o
 *
 * On a host with collapse-ext-tools and a libbpf newer than 1.1 (Debian
 * 13's libbpf-dev; on Debian 12 add -I for a newer one's headers):
 *
 *	clang -g -O2 -target bpf -D__TARGET_ARCH_x86 \
 *		-I/usr/share/doc/collapse-ext-tools/examples \
 *		-idirafter /usr/include/x86_64-linux-gnu -c my.bpf.c -o my.bpf.o
 *
 * then try it on the collapse_ext kernel:
 *
 *	selftests/vm/run --add my.bpf.o -- \
 *		sh -c 'collapsectl load /root/my.bpf.o && collapse_demo && collapsectl stats'
 *
 * Every hook runs under RCU from the collapse paths: keep it short, never
 * sleep. Anything out of range you return is clamped or replaced by the
 * kernel's choice, and counted in the policy's counters (collapsectl stats
 * NAME, or the fdinfo of its link).
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

/*
 * What it does, in one line, for `collapsectl info`; a knob (a const
 * volatile global, set at load with --set VAR=VALUE) is described with
 * COLLAPSE_EXT_KNOB(var, "what it sets") below its declaration.
 */
COLLAPSE_EXT_INFO("a starting point: file ranges fully populated, the node "
		  "with most of a range's pages preferred, the rest as the "
		  "kernel would");

/*
 * Once per PMD-sized range, before it is scanned. *limits holds what the
 * kernel would use (khugepaged: its sysfs knobs; MADV_COLLAPSE: 512, no
 * limit). Change them, and return 0 to scan, or nonzero to leave the range
 * alone (MADV_COLLAPSE then reports EBUSY for it).
 */
SEC("struct_ops/pte_limits")
int BPF_PROG(template_pte_limits, struct collapse_ext_ctx *cctx,
	     struct collapse_ext_limits *limits)
{
	/* Example: file and shmem ranges must be fully populated. */
	if (cctx->is_file)
		limits->max_ptes_none = 0;
	return 0;
}

/*
 * Once per new huge page. Return a preferred node id (tried first, without
 * reclaim or compaction on that node alone, then the kernel's choice), or
 * COLLAPSE_EXT_ANY_NODE (-1) to keep the kernel's choice (the node with
 * most of the range's base pages). A node the task may not use (cpuset,
 * mempolicy) is replaced by the kernel's choice.
 */
SEC("struct_ops/target_node")
s32 BPF_PROG(template_target_node, struct collapse_ext_ctx *cctx)
{
	u32 nid, best = 0, most = 0, n = collapse_ext_node_count();

	/* Example: the node holding most base pages, by hand. */
	if (!bpf_ksym_exists(collapse_ext_node_load))
		return COLLAPSE_EXT_ANY_NODE;	/* a kernel without the kfunc */
	for (nid = 0; nid < n && nid < 64; nid++) {
		u32 load = collapse_ext_node_load(cctx, nid);

		if (load > most) {
			most = load;
			best = nid;
		}
	}
	return most ? (s32)best : COLLAPSE_EXT_ANY_NODE;
}

/*
 * Once per MADV_COLLAPSE batch: PMDs in it (dflt 1: no batching), of the
 * pmds_left the request has left.
 */
SEC("struct_ops/batch_size")
u32 BPF_PROG(template_batch_size, struct collapse_ext_ctx *cctx, u32 dflt,
	     u32 pmds_left)
{
	return dflt;
}

/*
 * After each attempt: an enum collapse_ext_result (COLLAPSE_EXT_RESULT_*:
 * collapsed, already huge, or the failure's reason), on every kernel.
 */
SEC("struct_ops/collapsed")
void BPF_PROG(template_collapsed, struct collapse_ext_ctx *cctx,
	      enum collapse_ext_result result)
{
}

COLLAPSE_EXT_OPS(policy_template,
	.pte_limits = (void *)template_pte_limits,
	.target_node = (void *)template_target_node,
	.batch_size = (void *)template_batch_size,
	.collapsed = (void *)template_collapsed);
/*
 * The other hooks (collapse_ext_ops(7)): scan_budget, khugepaged's share of
 * a pass per mm (priority.bpf.c); pass_size, the pass itself, on the root's
 * policy only (pace.bpf.c); orders, the mTHP orders of a range on 7.3
 * (mthp_frugal.bpf.c); split_underused, which huge pages full of zeros are
 * split again under pressure (elastic.bpf.c); init and exit.
 */
