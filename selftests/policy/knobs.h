/* SPDX-License-Identifier: GPL-2.0 */
/* Open, configure, load and attach the knobs test policy. */
#ifndef KNOBS_H
#define KNOBS_H

#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "ops_data.h"
#include "policy_test.h"
#include "knobs.skel.h"

/*
 * knobs__open() without the hooks the running kernel lacks (orders on
 * 6.12), which its libbpf would refuse to load: every test opens knobs so.
 */
static inline struct knobs *knobs_open(void)
{
	struct knobs *skel = knobs__open();
	char dropped[64];

	if (skel && ops_data_drop_missing_hooks(skel->obj, skel->maps.knobs,
						dropped, sizeof(dropped))) {
		knobs__destroy(skel);
		return NULL;
	}
	return skel;
}

/*
 * Load a knobs policy; with @prev, sharing its count of init() calls (the
 * inits map), so that @prev's pte_limits spin ends once this policy's
 * init() ran in a link update: see knobs_load_next().
 */
static inline struct knobs *knobs_load_sharing(const char *name, uint64_t cgid,
					       bool pass_size,
					       struct knobs *prev)
{
	struct knobs *skel = knobs_open();

	if (!skel)
		return NULL;
	if ((prev && bpf_map__reuse_fd(skel->maps.inits,
				       bpf_map__fd(prev->maps.inits))) ||
	    (name && ops_data_set_name(skel->obj, skel->maps.knobs, name)) ||
	    (!pass_size &&
	     ops_data_drop_hook(skel->obj, skel->maps.knobs, "pass_size")) ||
	    knobs__load(skel)) {
		knobs__destroy(skel);
		return NULL;
	}
	skel->bss->link_cgroup_id = cgid;
	return skel;
}

/*
 * knobs_load() with every hook knobs has, pass_size too, whatever the
 * cgroup (the kernel refuses pass_size below the root).
 */
static inline struct knobs *knobs_load_all(const char *name, uint64_t cgid,
					   bool pass_size)
{
	return knobs_load_sharing(name, cgid, pass_size, NULL);
}

/*
 * A knobs policy named @name (NULL keeps "knobs") for cgroup @cgid (0 is
 * the root), loaded but not attached: set its .bss answers, then
 * knobs_attach(). Below the root it has no pass_size hook, which only the
 * root's policy may have.
 */
static inline struct knobs *knobs_load(const char *name, uint64_t cgid)
{
	return knobs_load_all(name, cgid, !cgid || cgid == cg_id(""));
}

/*
 * A spin_ns for the policy a link update replaces mid-hook: long enough for
 * a slow test thread to reach the update, which ends it (knobs_load_next());
 * short of the kernel's RCU stall and soft lockup warnings.
 */
#define SPIN_NS (5 * 1000 * 1000 * 1000ULL)

/*
 * The policy a test swaps in for @prev by a link update, loaded as
 * knobs_load(@name, @prev's cgroup) would: @prev's pte_limits, spinning
 * for spin_ns, stops soon after this policy's init() has run (the update
 * is under way), however late the test's thread gets to the update.
 */
static inline struct knobs *knobs_load_next(struct knobs *prev,
					    const char *name)
{
	uint64_t cgid = prev->bss->link_cgroup_id;

	return knobs_load_sharing(name, cgid, !cgid || cgid == cg_id(""), prev);
}

/*
 * Attach as a struct_ops link to the cgroup knobs_load() was given, with
 * BPF_F_ALLOW_OVERRIDE (the tests nest policies); the link or NULL with
 * errno set.
 */
static inline struct bpf_link *knobs_attach(struct knobs *skel)
{
	return ops_attach_cgroup(skel->maps.knobs, skel->bss->link_cgroup_id,
				 BPF_F_ALLOW_OVERRIDE);
}

/* knobs_attach() with other link flags (0: no BPF_F_ALLOW_OVERRIDE) */
static inline struct bpf_link *knobs_attach_flags(struct knobs *skel,
						  uint32_t flags)
{
	return ops_attach_cgroup(skel->maps.knobs, skel->bss->link_cgroup_id,
				 flags);
}

#endif
