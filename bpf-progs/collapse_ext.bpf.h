/* SPDX-License-Identifier: GPL-2.0 */
/*
 * collapse_ext.bpf.h: the one header a collapse_ext policy includes.
 *
 * A policy is a struct collapse_ext_ops map whose hooks answer the
 * kernel's collapse core (pte limits, target node, batch size, khugepaged's
 * pass and budget, on 7.3 the orders khugepaged makes) and the deferred
 * split shrinker (which underused huge pages it splits); see
 * Documentation/admin-guide/mm/collapse_ext.rst:
 *
 *	#include "collapse_ext.bpf.h"
 *
 *	SEC("struct_ops/pte_limits")
 *	int BPF_PROG(my_limits, struct collapse_ext_ctx *cctx,
 *		     struct collapse_ext_limits *limits)
 *	{
 *		limits->max_ptes_none = 0;
 *		return 0;
 *	}
 *
 *	COLLAPSE_EXT_OPS(my_policy, .pte_limits = (void *)my_limits);
 *
 * BPF_PROG() names its own context "ctx": call the hook's
 * struct collapse_ext_ctx argument something else (cctx here).
 */
#ifndef __COLLAPSE_EXT_BPF_H
#define __COLLAPSE_EXT_BPF_H

#include "collapse_ext_types.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

/*
 * What a policy is, for collapsectl info: one line of what it does, and
 * what each knob (a const volatile global) sets, in the object's section
 * .collapse_ext.info, which libbpf leaves alone:
 *
 *	COLLAPSE_EXT_INFO("never grow memory to collapse it");
 *	const volatile u64 room_mib = 64;
 *	COLLAPSE_EXT_KNOB(room_mib, "MiB below the memory limit that count as room");
 */
#define COLLAPSE_EXT_INFO(text)						\
	static const char __collapse_ext_info[]				\
	SEC(".collapse_ext.info") __attribute__((used)) = "info=" text
#define COLLAPSE_EXT_KNOB(var, text)					\
	static const char __collapse_ext_knob_##var[]			\
	SEC(".collapse_ext.info") __attribute__((used)) = "knob:" #var "=" text

#define HPAGE_PMD_NR		512
/* A pte limit of HPAGE_PMD_NR is no limit (MADV_COLLAPSE's default). */
#define COLLAPSE_EXT_NO_LIMIT	HPAGE_PMD_NR
#define COLLAPSE_EXT_ANY_NODE	(-1)
/*
 * collapse_ext_ops.flags COLLAPSE_EXT_OPS_NO_YIELD: a MADV_COLLAPSE batch
 * of this policy keeps the mmap write lock for the whole batch, even while
 * other tasks wait for it (by default it lets them in between two PMDs):
 *	COLLAPSE_EXT_OPS(my_policy, .flags = COLLAPSE_EXT_OPS_NO_YIELD, ...);
 */
/* process_madvise() flags (uapi <asm-generic/mman-common.h>) */
#define MADV_F_COLLAPSE_LIMITS	0x1
#define MADV_F_COLLAPSE_DEFRAG	0x2

/* kfuncs; __weak so a policy still loads where one is missing: test with
 * bpf_ksym_exists() before calling. */
extern u32 collapse_ext_node_load(const struct collapse_ext_ctx *ctx,
				  s32 nid) __ksym __weak;
extern u32 collapse_ext_nr_node_ids(void) __ksym __weak;
extern u64 collapse_ext_node_free_pages(s32 nid) __ksym __weak;
/* pages the mm's memcg may still be charged below memory.high/max */
extern u64 collapse_ext_memcg_headroom(const struct collapse_ext_ctx *ctx) __ksym __weak;
extern void collapse_ext_apply_khugepaged_limits(struct collapse_ext_limits *limits) __ksym __weak;

#define COLLAPSE_EXT_PMD_ORDER	9	/* x86-64: 2 MiB of 4 KiB pages */

/*
 * The folio order pte_limits is asked about: limits->order on 7.3 (a
 * smaller one where khugepaged asks per mTHP order); on 6.12, which
 * collapses to PMDs only, the PMD order.
 */
static __always_inline u32
collapse_ext_order(const struct collapse_ext_limits *limits)
{
	if (bpf_core_field_exists(limits->order))
		return limits->order;
	return COLLAPSE_EXT_PMD_ORDER;
}

/*
 * COLLAPSE_EXT_OPS(name, .hook = (void *)prog, ...): the policy map, in
 * ".struct_ops.link" so it attaches as a BPF link (what collapsectl pins,
 * and what link update swaps in place). Its name is the policy's name;
 * the cgroup it governs is the link's (collapsectl load --cgroup).
 */
#define COLLAPSE_EXT_OPS(__name, ...)				\
	SEC(".struct_ops.link")					\
	struct collapse_ext_ops __name = {		\
		.name = #__name,				\
		__VA_ARGS__					\
	}

/* Node of the CPU running this hook. */
static __always_inline s32 collapse_ext_this_node(void)
{
	return (s32)bpf_get_numa_node_id();
}

/*
 * The owner of the mm, read with CO-RE: the offsets come from the running
 * kernel's BTF, so no kfunc is needed (and none is offered) for where the
 * owner runs or which cgroup it is in. Hooks run under RCU (every
 * non-sleepable BPF program does), which keeps mm->owner's task_struct
 * alive; the "___ce" flavours match the kernel's types without vmlinux.h.
 */
struct kernfs_node___ce { u64 id; } __attribute__((preserve_access_index));
struct cgroup___ce { struct kernfs_node___ce *kn; } __attribute__((preserve_access_index));
struct css_set___ce { struct cgroup___ce *dfl_cgrp; } __attribute__((preserve_access_index));
struct thread_info___ce { u32 cpu; } __attribute__((preserve_access_index));
struct task_struct___ce {
	struct thread_info___ce thread_info;
	struct css_set___ce *cgroups;
} __attribute__((preserve_access_index));
struct mm_struct___ce {
	struct task_struct___ce *owner;
} __attribute__((preserve_access_index));

/* per-CPU node id (CONFIG_USE_PERCPU_NUMA_NODE_ID, as on x86-64) */
extern const int numa_node __ksym __weak;

/* Node of the CPU the owner of cctx->mm last ran on; -1 without an owner. */
static __always_inline s32
collapse_ext_owner_node(const struct collapse_ext_ctx *cctx)
{
	struct mm_struct___ce *mm = (void *)cctx->mm;
	struct task_struct___ce *owner = BPF_CORE_READ(mm, owner);
	const int *nid;

	if (!owner || !&numa_node)
		return COLLAPSE_EXT_ANY_NODE;
	nid = bpf_per_cpu_ptr(&numa_node, BPF_CORE_READ(owner, thread_info.cpu));
	return nid ? *nid : COLLAPSE_EXT_ANY_NODE;
}

/* cgroup v2 id of the owner of cctx->mm; 0 without an owner. */
static __always_inline u64
collapse_ext_owner_cgroup_id(const struct collapse_ext_ctx *cctx)
{
	struct mm_struct___ce *mm = (void *)cctx->mm;

	return BPF_CORE_READ(mm, owner, cgroups, dfl_cgrp, kn, id);
}

/*
 * A memory cgroup's counters, through the kfuncs of mm/bpf_memcontrol.c
 * (7.3's; 6.12 has them from collapse_ext's series), registered for every
 * program type. libbpf matches a kfunc's pointer arguments by kind: the
 * types they point to are defined (empty), a declared one would not match.
 */
struct mem_cgroup___ce {} __attribute__((preserve_access_index));
struct cgroup_subsys_state___ce {} __attribute__((preserve_access_index));
extern struct cgroup___ce *bpf_cgroup_from_id(u64 cgid) __ksym __weak;
extern void bpf_cgroup_release(struct cgroup___ce *cgrp) __ksym __weak;
extern struct mem_cgroup___ce *
bpf_get_mem_cgroup(struct cgroup_subsys_state___ce *css) __ksym __weak;
extern void bpf_put_mem_cgroup(struct mem_cgroup___ce *memcg) __ksym __weak;
extern unsigned long
bpf_mem_cgroup_memory_events(struct mem_cgroup___ce *memcg,
			     enum memcg_memory_event___ce event) __ksym __weak;
extern unsigned long
bpf_mem_cgroup_page_state(struct mem_cgroup___ce *memcg, int idx) __ksym __weak;

/*
 * The pressure on cgroup @cgid's memory: *@events, what memory.events
 * counts as high and max (its usage went over memory.high, reclaim ran at
 * memory.max: its own limits and its descendants', not its ancestors');
 * *@swap, the bytes of it swapped out (the memcg's MEMCG_SWAP, what
 * memory.swap.current charges: it rises with swap-outs, falls as swap is
 * freed; 6.12 counts no pswpout per memcg), hierarchical, as of the last
 * stats flush (the kernel's, about every 2 s; a read does not flush).
 * False where the kfuncs or the cgroup are missing, or a counter is not
 * the kernel's. bpf_cgroup_from_id() resolves @cgid in the cgroup
 * namespace of the task the hook runs in: from a namespace without the
 * cgroup, false too.
 */
static __always_inline bool
collapse_ext_memcg_pressure(u64 cgid, u64 *events, u64 *swap)
{
	struct cgroup___ce *cgrp;
	struct mem_cgroup___ce *memcg;
	unsigned long high, max, swapped;

	if (!bpf_ksym_exists(bpf_cgroup_from_id) ||
	    !bpf_ksym_exists(bpf_get_mem_cgroup))
		return false;
	cgrp = bpf_cgroup_from_id(cgid);
	if (!cgrp)
		return false;
	/* a cgroup's first member is its own css: the memcg's is looked up */
	memcg = bpf_get_mem_cgroup((struct cgroup_subsys_state___ce *)cgrp);
	bpf_cgroup_release(cgrp);
	if (!memcg)
		return false;
	high = bpf_mem_cgroup_memory_events(memcg,
			bpf_core_enum_value(enum memcg_memory_event___ce,
					    MEMCG_HIGH___ce));
	max = bpf_mem_cgroup_memory_events(memcg,
			bpf_core_enum_value(enum memcg_memory_event___ce,
					    MEMCG_MAX___ce));
	swapped = bpf_mem_cgroup_page_state(memcg,
			bpf_core_enum_value(enum memcg_stat_item___ce,
					    MEMCG_SWAP___ce));
	bpf_put_mem_cgroup(memcg);
	/* (unsigned long)-1: an item this kernel does not count */
	if (high == -1UL || max == -1UL || swapped == -1UL)
		return false;
	*events = high + max;
	*swap = swapped;
	return true;
}

/* Number of node ids to loop over: the kernel's, else a safe bound. */
static __always_inline u32 collapse_ext_node_count(void)
{
	if (bpf_ksym_exists(collapse_ext_nr_node_ids))
		return collapse_ext_nr_node_ids();
	return 1;
}

#endif /* __COLLAPSE_EXT_BPF_H */
