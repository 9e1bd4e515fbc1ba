/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the collapse_ext policy selftests: the kernel's per-policy
 * counters, cgroups, running a function in a child inside a cgroup.
 */
#ifndef POLICY_TEST_H
#define POLICY_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>

/* The kernel type names BPF skeletons use for .bss and struct_ops. */
typedef __u64 u64;
typedef __s64 s64;
typedef __u32 u32;
typedef __s32 s32;

#define CGROOT		"/sys/fs/cgroup/"

/* enum collapse_caller, enum collapse_ext_exit_reason */
#define CALLER_KHUGEPAGED	0
#define CALLER_MADVISE		1
#define CALLER_PROCESS_MADVISE	2
#define EXIT_UNREG		1
#define EXIT_CGROUP_REMOVED	2
#define EXIT_SWAPPED		3
/* enum collapse_ext_result: the collapsed hook's result, on every base */
#define RES_COLLAPSED		0
#define RES_ALREADY_HUGE	1
#define RES_NONE_LIMIT		2
#define RES_SWAP_LIMIT		3
#define RES_SHARED_LIMIT	4
#define RES_VETO		5
#define RES_VMA_CHANGED		9

/* Has the running kernel's struct collapse_ext_ops a member @hook (BTF)? */
bool kernel_has_hook(const char *hook);

/*
 * Line KEY ("cgroup_id", "link_id", "attach_time_ns" or a counter) of the
 * fdinfo of the link that attached POLICY, -1 if absent.
 */
long long policy_link_num(const char *policy, const char *key);
/* Counter KEY of POLICY (its link's fdinfo), -1 if absent. */
long policy_stat(const char *policy, const char *key);
/* Is POLICY attached (a link's fdinfo names it)? */
bool policy_attached(const char *policy);
struct bpf_link;
/*
 * What the struct_ops @link's info says: its cgroup id (0: none, or
 * detached) and map id (0: detached); -1 when it cannot be read.
 */
long long link_cgroup_id(struct bpf_link *link);
long long link_map_id(struct bpf_link *link);

/*
 * memory.current of cgroup PATH in kB; LONG_MAX (and a diagnostic) when it
 * cannot be read, so that "nothing left charged" checks fail rather than
 * pass on a read error.
 */
long cg_current_kb(const char *path);

/* Create /sys/fs/cgroup/PATH (parents must exist) and return its id. */
int cg_create(const char *path, uint64_t *id);
int cg_remove(const char *path);
uint64_t cg_id(const char *path);
/*
 * Enable (@on) or disable the memory controller in PATH's
 * cgroup.subtree_control, so that its children get a memcg of their own
 * (a policy is refused on a cgroup without one); 0 or -errno. PATH may
 * then hold no process.
 */
int cg_memory_subtree(const char *path, bool on);
/* Move @pid into cgroup PATH ("" for the root). */
int cg_move(const char *path, pid_t pid);

/*
 * Start fn(arg) in a child process moved into cgroup PATH ("" for the
 * root), exiting with fn's return value (255: it could not move); returns
 * the child's pid, or -1.
 */
pid_t start_in_cgroup(const char *path, int (*fn)(void *arg), void *arg);
/* The same, waited for: fn's return value (0..255), or -1. */
int run_in_cgroup(const char *path, int (*fn)(void *arg), void *arg);

/*
 * A child process in a cgroup holding @nr huge pages' worth of filled
 * MADV_HUGEPAGE memory (in small pages), for khugepaged to find.
 */
struct hp_child {
	pid_t pid;
	size_t nr;
	char **addr;		/* shared with the child: where it mapped it */
	bool (*skip)(size_t page);	/* pages it leaves untouched */
};
int hp_child_start(struct hp_child *c, const char *cg, size_t nr);
/* The same, leaving the pages for which skip(page index) is true empty */
int hp_child_start_sparse(struct hp_child *c, const char *cg, size_t nr,
			  bool (*skip)(size_t page));
/* Share of its memory PMD-mapped, in percent */
int hp_child_huge_pct(struct hp_child *c);
bool hp_child_huge(struct hp_child *c);
/* Make its first 2 MiB small pages again (the child refaults them). */
int hp_child_refault_first(struct hp_child *c);
/* Wait up to @secs for all of it to be PMD-mapped. */
bool hp_child_wait_huge(struct hp_child *c, int secs);
void hp_child_stop(struct hp_child *c);

/* madvise(MADV_COLLAPSE) over @nr_hpages freshly filled huge pages with
 * page 7 of each left out; returns 0 or the errno. */
int collapse_sparse_region(size_t nr_hpages);

#endif
