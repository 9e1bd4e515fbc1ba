/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collapse_ext_types.h: the kernel types a collapse_ext policy uses, as
 * the kernels' BTF describes them, in place of a vmlinux.h. A policy
 * builds without a kernel tree (the Debian source package builds every
 * policy this way), and one object loads on every kernel base: each
 * struct is preserve_access_index, so libbpf relocates every field access
 * to the running kernel's layout (CO-RE).
 *
 * A member that only some bases have names them in its comment
 * ("7.3"): test it with bpf_core_field_exists() before reading it.
 * bpf-progs/check-types.sh compares this file with each base's BTF when
 * the guest is built: a member, a type or an enum value that differs
 * fails the build, so the file cannot silently fall behind the series.
 */
#ifndef __COLLAPSE_EXT_TYPES_H
#define __COLLAPSE_EXT_TYPES_H

#include <linux/types.h>
#include <linux/bpf.h>	/* map types, BPF_ANY, ... (uapi) */

typedef __u8  u8;
typedef __s8  s8;
typedef __u16 u16;
typedef __s16 s16;
typedef __u32 u32;
typedef __s32 s32;
typedef __u64 u64;
typedef __s64 s64;
typedef _Bool bool;
enum { false = 0, true = 1 };

struct mm_struct;

#pragma clang attribute push (__attribute__((preserve_access_index)), apply_to = record)

/* What a hook is asked about: one range of one mm, or one khugepaged pass. */
struct collapse_ext_ctx {
	struct mm_struct *mm;
	u64 address;
	u32 caller;
	u32 flags;
	u32 is_file;
	u64 cgroup_id;
};

/* scan_budget's own argument: what khugepaged knows of the mm (read-only) */
struct collapse_ext_visit {
	u64 anon_pages;
	u64 scanned_pages;
	u64 since_visit_ns;
	u32 walk_pmds;
	u32 walk_huge;
	u32 visit_pmds;
	u32 visit_huge;
};

/*
 * pte_limits' own argument, filled with the kernel's limits before the
 * call; the limits are the answer, order is read-only
 */
struct collapse_ext_limits {
	u32 max_ptes_none;
	u32 max_ptes_swap;
	u32 max_ptes_shared;
	u32 order;	/* 7.3 */
};

/* exit's argument: why the policy was detached */
struct collapse_ext_exit_info {
	s32 reason;
	u64 cgroup_id;
	char msg[64];
};

/*
 * split_underused's argument: an underused THP of the deferred split
 * queue. max_zero is the one field a policy may write.
 */
struct collapse_ext_underused {
	u64 cgroup_id;
	u64 headroom;
	u32 nid;
	u32 order;
	u32 nr_pages;
	u32 counted;
	u32 nr_zero;
	u32 max_zero;
};

#pragma clang attribute pop

/* collapsed's result: the same values on every kernel */
enum collapse_ext_result {
	COLLAPSE_EXT_RESULT_COLLAPSED = 0,
	COLLAPSE_EXT_RESULT_ALREADY_HUGE = 1,
	COLLAPSE_EXT_RESULT_NONE_LIMIT = 2,
	COLLAPSE_EXT_RESULT_SWAP_LIMIT = 3,
	COLLAPSE_EXT_RESULT_SHARED_LIMIT = 4,
	COLLAPSE_EXT_RESULT_VETO = 5,
	COLLAPSE_EXT_RESULT_ALLOC = 6,
	COLLAPSE_EXT_RESULT_CHARGE = 7,
	COLLAPSE_EXT_RESULT_BUSY_PAGE = 8,
	COLLAPSE_EXT_RESULT_VMA_CHANGED = 9,
	COLLAPSE_EXT_RESULT_OTHER = 10,
};

/*
 * The policy: a struct_ops map of this type, with the hooks of every base.
 * libbpf matches its members to the running kernel's by name and leaves
 * out a hook the kernel lacks (orders: 7.3 only), which collapsectl
 * reports: one object loads on both bases.
 */
struct collapse_ext_ops {
	int (*pte_limits)(struct collapse_ext_ctx *ctx,
			  struct collapse_ext_limits *limits);
	s32 (*target_node)(struct collapse_ext_ctx *ctx);
	u32 (*batch_size)(struct collapse_ext_ctx *ctx, u32 dflt,
			  u32 pmds_left);
	u32 (*scan_budget)(struct collapse_ext_ctx *ctx, u32 dflt,
			   const struct collapse_ext_visit *visit);
	u32 (*pass_size)(struct collapse_ext_ctx *ctx, u32 dflt);
	u32 (*orders)(struct collapse_ext_ctx *ctx, u32 allowed);	/* 7.3 */
	void (*collapsed)(struct collapse_ext_ctx *ctx,
			  enum collapse_ext_result result);
	u32 (*split_underused)(struct collapse_ext_underused *u);
	s32 (*init)(void);
	void (*exit)(struct collapse_ext_exit_info *info);
	u64 flags;
	char name[32];
};

/* collapse_ext_ctx.caller: who asks */
enum collapse_caller {
	COLLAPSE_KHUGEPAGED = 0,
	COLLAPSE_MADVISE = 1,
	COLLAPSE_PROCESS_MADVISE = 2,
};


/* collapse_ext_exit_info.reason */
enum collapse_ext_exit_reason {
	COLLAPSE_EXT_EXIT_NONE = 0,
	COLLAPSE_EXT_EXIT_UNREG = 1,
	COLLAPSE_EXT_EXIT_CGROUP_REMOVED = 2,
	COLLAPSE_EXT_EXIT_SWAPPED = 3,
};

/* split_underused's answer */
enum collapse_ext_underused_verdict {
	COLLAPSE_EXT_UNDERUSED_DEFAULT = 0,
	COLLAPSE_EXT_UNDERUSED_SPLIT = 1,
	COLLAPSE_EXT_UNDERUSED_KEEP = 2,
	COLLAPSE_EXT_UNDERUSED_LATER = 3,
	COLLAPSE_EXT_UNDERUSED_COUNT = 4,
};

/* collapse_ext_ops.flags */
enum collapse_ext_ops_flags {
	COLLAPSE_EXT_OPS_NO_YIELD = 1,
	COLLAPSE_EXT_OPS_ALL_FLAGS = 1,
};

/*
 * The memory cgroup counters a policy reads (collapse_ext.bpf.h's
 * collapse_ext_memcg_pressure()), flavored: read with
 * bpf_core_enum_value(), the running kernel's values. The values here are
 * placeholders (MEMCG_SWAP is NR_VM_NODE_STAT_ITEMS, which differs between
 * bases); check-types.sh compares the names only.
 */
enum memcg_memory_event___ce {
	MEMCG_HIGH___ce = 1,
	MEMCG_MAX___ce = 2,
};

enum memcg_stat_item___ce {
	MEMCG_SWAP___ce = 0,
};

#endif /* __COLLAPSE_EXT_TYPES_H */
