// SPDX-License-Identifier: GPL-2.0
/*
 * Scope: a policy governs its cgroup subtree; two cgroups run two
 * policies at once; a nested cgroup inherits; a process outside gets the
 * default; one policy per cgroup (EBUSY), unique names (EEXIST); one
 * key, the memcg: no policy on a cgroup without a memcg (ENODEV), and a
 * cgroup that loses its memcg loses its policy's say; pass_size only at
 * the root (EOPNOTSUPP); a policy
 * attached without BPF_F_ALLOW_OVERRIDE keeps policies out of its subtree;
 * removing a cgroup detaches its policy's link (EPOLLHUP, link info
 * detached); a link update swaps a policy with no
 * window where the default applies; detach, and removing the cgroup,
 * are safe while MADV_COLLAPSE runs, even inside a hook; an attach held
 * while its cgroup is removed is refused (the debug kernel).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "knobs.h"
#include "attach_window.skel.h"
#include "window.h"
#include "kselftest_harness.h"

#define CG_A		"ce_scope_a"
#define CG_NESTED	"ce_scope_a/nested"
#define CG_DEEP		"ce_scope_a/nested/deep"
#define CG_B		"ce_scope_b"
#define CG_GONE		"ce_scope_gone"
#define CG_RACE		"ce_scope_race"

FIXTURE(scope)
{
	uint64_t a, b;
};

/*
 * A's children have a memcg of their own (a policy sits only where memory
 * is charged): A's workloads run in A/nested, A holding no process.
 */
FIXTURE_SETUP(scope)
{
	ASSERT_EQ(0, cg_create(CG_A, &self->a));
	ASSERT_EQ(0, cg_memory_subtree(CG_A, true));
	ASSERT_EQ(0, cg_create(CG_NESTED, NULL));
	ASSERT_EQ(0, cg_create(CG_B, &self->b));
}

FIXTURE_TEARDOWN(scope)
{
	cg_remove(CG_NESTED);
	cg_remove(CG_A);
	cg_remove(CG_B);
	cg_remove(CG_RACE);
}

static int collapse_one(void *arg)
{
	return collapse_sparse_region(1);
}

/* A policy named @name on @cgid that vetoes (@veto) or lets through. */
static struct knobs *policy(const char *name, uint64_t cgid, int veto,
			    struct bpf_link **link)
{
	struct knobs *skel = knobs_load(name, cgid);

	*link = NULL;
	if (!skel)
		return NULL;
	skel->bss->veto = veto;
	*link = knobs_attach(skel);
	return skel;
}

TEST_F(scope, two_cgroups_nested_and_outside)
{
	struct bpf_link *la, *lb;
	struct knobs *pa = policy("pol_a", self->a, 1, &la);
	struct knobs *pb = policy("pol_b", self->b, 0, &lb);

	ASSERT_NE(NULL, la);
	ASSERT_NE(NULL, lb);

	EXPECT_EQ(EBUSY, run_in_cgroup(CG_NESTED, collapse_one, NULL));
	EXPECT_EQ(1, pa->bss->nr_pte_limits);
	EXPECT_EQ(0, pb->bss->nr_pte_limits);
	EXPECT_EQ(self->a, pa->bss->seen_cgroup_id);
	EXPECT_EQ(cg_id(CG_NESTED), pa->bss->seen_owner_cgroup_id);

	EXPECT_EQ(0, run_in_cgroup(CG_B, collapse_one, NULL));
	EXPECT_EQ(1, pb->bss->nr_pte_limits);
	EXPECT_EQ(self->b, pb->bss->seen_owner_cgroup_id);

	/* two levels down (deep's memcg is nested's) inherits A */
	ASSERT_EQ(0, cg_create(CG_DEEP, NULL));
	EXPECT_EQ(EBUSY, run_in_cgroup(CG_DEEP, collapse_one, NULL));
	EXPECT_EQ(2, pa->bss->nr_pte_limits);
	EXPECT_EQ(cg_id(CG_DEEP), pa->bss->seen_owner_cgroup_id);
	EXPECT_EQ(0, cg_remove(CG_DEEP));

	/* outside both: the kernel's default, no policy consulted */
	EXPECT_EQ(0, run_in_cgroup("", collapse_one, NULL));
	EXPECT_EQ(2, pa->bss->nr_pte_limits);
	EXPECT_EQ(1, pb->bss->nr_pte_limits);

	EXPECT_EQ(2, policy_stat("pol_a", "vetoes"));
	EXPECT_EQ(1, policy_stat("pol_b", "collapse_succeeded"));

	bpf_link__destroy(la);
	bpf_link__destroy(lb);
	knobs__destroy(pa);
	knobs__destroy(pb);
}

/*
 * One huge page collapsed in the calling cgroup with its base pages on
 * the node that is not @arg's: the node the huge page ended on (0 or 1),
 * or 100 + errno.
 */
static int collapse_away_from(void *arg)
{
	int want = *(int *)arg, node;
	struct region r;

	if (region_map(&r, 1))
		return 100;
	region_fill(&r, NULL);
	if (move_to_node(r.p, r.len, !want))
		return 101;
	if (madvise(r.p, r.len, MADV_COLLAPSE))
		return 100 + errno;
	node = range_is_huge(0, r.p, r.len) && region_check(&r, NULL) ?
	       page_node(r.p) : 102;
	region_unmap(&r);
	return node;
}

/*
 * The hooks after the limits ask the same policy: target_node and
 * collapsed of memory two levels below the policy's cgroup (A/nested/deep),
 * then, with another policy on nested in between, of that one alone.
 */
TEST_F(scope, node_and_result_asked_two_levels_up)
{
	struct bpf_link *la, *ln;
	struct knobs *pa = policy("pol_a", self->a, 0, &la);
	struct knobs *pn = knobs_load("pol_n", cg_id(CG_NESTED));
	int one = 1, zero = 0;

	ASSERT_EQ(0, access("/sys/devices/system/node/node1", F_OK));
	ASSERT_NE(NULL, la);
	ASSERT_NE(NULL, pn);
	ASSERT_EQ(0, cg_create(CG_DEEP, NULL));
	pa->data->node = 1;
	pn->data->node = 0;

	EXPECT_EQ(1, run_in_cgroup(CG_DEEP, collapse_away_from, &one));
	EXPECT_EQ(1, pa->bss->nr_target_node);
	EXPECT_EQ(1, pa->bss->nr_collapsed);
	EXPECT_EQ(RES_COLLAPSED, pa->data->last_result);
	EXPECT_EQ(1, policy_stat("pol_a", "target_node_chosen"));
	EXPECT_EQ(1, policy_stat("pol_a", "collapse_succeeded"));

	ln = knobs_attach(pn);
	ASSERT_NE(NULL, ln);
	EXPECT_EQ(0, run_in_cgroup(CG_DEEP, collapse_away_from, &zero));
	EXPECT_EQ(1, pn->bss->nr_target_node);
	EXPECT_EQ(1, pn->bss->nr_collapsed);
	EXPECT_EQ(RES_COLLAPSED, pn->data->last_result);
	EXPECT_EQ(1, policy_stat("pol_n", "target_node_chosen"));
	/* A asked about nothing more */
	EXPECT_EQ(1, pa->bss->nr_target_node);
	EXPECT_EQ(1, pa->bss->nr_collapsed);

	bpf_link__destroy(ln);
	bpf_link__destroy(la);
	knobs__destroy(pn);
	knobs__destroy(pa);
	EXPECT_EQ(0, cg_remove(CG_DEEP));
}

TEST_F(scope, nested_policy_wins)
{
	struct bpf_link *la, *ln;
	struct knobs *pa = policy("pol_a", self->a, 1, &la);
	struct knobs *pn = policy("pol_n", cg_id(CG_NESTED), 0, &ln);

	ASSERT_NE(NULL, la);
	ASSERT_NE(NULL, ln);
	EXPECT_EQ(0, run_in_cgroup(CG_NESTED, collapse_one, NULL));
	EXPECT_EQ(1, pn->bss->nr_pte_limits);
	EXPECT_EQ(0, pa->bss->nr_pte_limits);
	bpf_link__destroy(ln);
	/* detached: A governs the nested cgroup again */
	EXPECT_EQ(EBUSY, run_in_cgroup(CG_NESTED, collapse_one, NULL));
	bpf_link__destroy(la);
	knobs__destroy(pa);
	knobs__destroy(pn);
}

/*
 * Attach @n1 to cgroup @cg1, then @n2 to @cg2: 0 when both attach, the
 * errno of the second otherwise (-1: the first failed, -2: the refused
 * attach took the first policy with it).
 */
static int second_attach_errno(const char *n1, uint64_t cg1,
			       const char *n2, uint64_t cg2)
{
	struct bpf_link *l1, *l2;
	struct knobs *p1 = policy(n1, cg1, 0, &l1);
	struct knobs *p2 = policy(n2, cg2, 0, &l2);
	int err = !l1 ? -1 : l2 ? 0 : errno;

	if (err > 0 && !policy_attached(n1))
		err = -2;
	bpf_link__destroy(l2);
	bpf_link__destroy(l1);
	knobs__destroy(p1);
	knobs__destroy(p2);
	return err;
}

TEST_F(scope, second_policy_on_cgroup_ebusy)
{
	EXPECT_EQ(EBUSY, second_attach_errno("first", self->a, "second", self->a));
	EXPECT_FALSE(policy_attached("second"));
}

TEST_F(scope, duplicate_name_eexist)
{
	EXPECT_EQ(EEXIST, second_attach_errno("dup", self->a, "dup", self->b));
}

/*
 * A policy attached without BPF_F_ALLOW_OVERRIDE has its subtree alone:
 * on three levels (a, a/nested, a/nested/deep), whichever is attached
 * first.
 */
TEST_F(scope, override_needs_the_flag_above)
{
	struct knobs *pa = knobs_load("ovr_a", self->a);
	struct knobs *pn = knobs_load("ovr_n", cg_id(CG_NESTED));
	struct knobs *pd;
	struct bpf_link *la, *ln, *ld;
	uint64_t deep;

	ASSERT_EQ(0, cg_memory_subtree(CG_NESTED, true));
	ASSERT_EQ(0, cg_create(CG_DEEP, &deep));
	pd = knobs_load("ovr_d", deep);
	ASSERT_NE(NULL, pa);
	ASSERT_NE(NULL, pn);
	ASSERT_NE(NULL, pd);

	/* a without the flag: nothing below it, two levels down included */
	la = knobs_attach_flags(pa, 0);
	ASSERT_NE(NULL, la);
	EXPECT_EQ(NULL, knobs_attach(pn));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(NULL, knobs_attach(pd));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(0, pn->bss->nr_init + pd->bss->nr_init);
	bpf_link__destroy(la);

	/* a with it: nested overrides; nested without it keeps deep out */
	la = knobs_attach(pa);
	ASSERT_NE(NULL, la);
	ln = knobs_attach_flags(pn, 0);
	ASSERT_NE(NULL, ln);
	EXPECT_EQ(NULL, knobs_attach(pd));
	EXPECT_EQ(EPERM, errno);
	bpf_link__destroy(ln);

	/* deep first: nested without the flag may not go above it */
	ld = knobs_attach_flags(pd, 0);
	ASSERT_NE(NULL, ld);
	EXPECT_EQ(NULL, knobs_attach_flags(pn, 0));
	EXPECT_EQ(EPERM, errno);
	ln = knobs_attach(pn);
	EXPECT_NE(NULL, ln);
	EXPECT_TRUE(policy_attached("ovr_a") && policy_attached("ovr_n") &&
		    policy_attached("ovr_d"));

	bpf_link__destroy(ld);
	bpf_link__destroy(ln);
	bpf_link__destroy(la);
	knobs__destroy(pd);
	knobs__destroy(pn);
	knobs__destroy(pa);
	cg_remove(CG_DEEP);
}

/*
 * A policy sits where memory is charged: on a cgroup without a memcg of
 * its own (deep: nested's subtree_control has no +memory) it would never
 * be asked, and is refused with ENODEV before its init() runs.
 */
TEST_F(scope, cgroup_without_memcg_refused)
{
	struct bpf_link *l;
	struct knobs *p;
	uint64_t deep;

	ASSERT_EQ(0, cg_create(CG_DEEP, &deep));
	p = knobs_load("nomemcg", deep);
	ASSERT_NE(NULL, p);
	l = knobs_attach(p);
	EXPECT_EQ(NULL, l);
	EXPECT_EQ(ENODEV, errno);
	EXPECT_EQ(0, p->bss->nr_init);
	EXPECT_FALSE(policy_attached("nomemcg"));
	/* with nested's memory controller on, deep has a memcg: attached */
	ASSERT_EQ(0, cg_memory_subtree(CG_NESTED, true));
	l = knobs_attach(p);
	EXPECT_NE(NULL, l);
	EXPECT_EQ(1, p->bss->nr_init);
	bpf_link__destroy(l);
	knobs__destroy(p);
	EXPECT_EQ(0, cg_remove(CG_DEEP));
}

/*
 * One key, the memcg: a policy on nested governs nested's memory while
 * nested has a memcg. Once A's subtree_control drops the memory
 * controller, nested's task charges A's memcg, and the policy of nested
 * (still its task's cgroup) is no longer asked; a link update is refused
 * (ENODEV) and leaves the policy as it was. With the controller back, it
 * is asked again.
 */
TEST_F(scope, policy_follows_the_memcg_not_the_task)
{
	struct bpf_link *l;
	struct knobs *p = policy("bymemcg", cg_id(CG_NESTED), 1, &l);
	struct knobs *next = knobs_load("bymemcg", cg_id(CG_NESTED));

	ASSERT_NE(NULL, l);
	ASSERT_NE(NULL, next);
	EXPECT_EQ(EBUSY, run_in_cgroup(CG_NESTED, collapse_one, NULL));
	EXPECT_EQ(1, p->bss->nr_pte_limits);

	ASSERT_EQ(0, cg_memory_subtree(CG_A, false));
	EXPECT_EQ(0, run_in_cgroup(CG_NESTED, collapse_one, NULL));
	EXPECT_EQ(1, p->bss->nr_pte_limits);
	EXPECT_EQ(-ENODEV, bpf_link__update_map(l, next->maps.knobs));
	EXPECT_EQ(0, next->bss->nr_init);
	EXPECT_EQ(-1, p->data->exit_reason);
	EXPECT_TRUE(policy_attached("bymemcg"));

	ASSERT_EQ(0, cg_memory_subtree(CG_A, true));
	EXPECT_EQ(EBUSY, run_in_cgroup(CG_NESTED, collapse_one, NULL));
	EXPECT_EQ(2, p->bss->nr_pte_limits);
	bpf_link__destroy(l);
	knobs__destroy(next);
	knobs__destroy(p);
}

/*
 * pass_size is asked of the root's policy only: a policy with the hook is
 * refused below the root (EOPNOTSUPP) before its init() runs, at attach
 * and by a link update (the policy attached stays as it was), and is
 * attached at the root.
 */
TEST_F(scope, pass_size_below_the_root_refused)
{
	struct knobs *with = knobs_load_all("rootonly", self->a, true);
	struct knobs *without = knobs_load("rootonly", self->a);
	struct knobs *root = knobs_load_all("rootonly", 0, true);
	struct bpf_link *l;

	ASSERT_NE(NULL, with);
	ASSERT_NE(NULL, without);
	ASSERT_NE(NULL, root);
	EXPECT_EQ(NULL, knobs_attach(with));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(0, with->bss->nr_init);
	EXPECT_FALSE(policy_attached("rootonly"));

	l = knobs_attach(without);
	ASSERT_NE(NULL, l);
	EXPECT_EQ(-EOPNOTSUPP, bpf_link__update_map(l, with->maps.knobs));
	EXPECT_EQ(0, with->bss->nr_init);
	EXPECT_EQ(-1, without->data->exit_reason);
	without->bss->veto = 1;
	EXPECT_EQ(EBUSY, run_in_cgroup(CG_NESTED, collapse_one, NULL));
	bpf_link__destroy(l);

	l = knobs_attach(root);
	EXPECT_NE(NULL, l);
	EXPECT_EQ(1, root->bss->nr_init);
	bpf_link__destroy(l);
	knobs__destroy(root);
	knobs__destroy(without);
	knobs__destroy(with);
}

TEST_F(scope, cgroup_removal_detaches)
{
	struct pollfd pfd = { .events = POLLIN };
	struct bpf_link *l;
	struct knobs *p;
	uint64_t gone;

	ASSERT_EQ(0, cg_create(CG_GONE, &gone));
	p = policy("pol_gone", gone, 0, &l);
	ASSERT_NE(NULL, l);
	EXPECT_TRUE(policy_attached("pol_gone"));
	/* the link reports its cgroup, and no hang-up while attached */
	EXPECT_EQ((long long)gone, link_cgroup_id(l));
	EXPECT_LT(0, link_map_id(l));
	pfd.fd = bpf_link__fd(l);
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	ASSERT_EQ(0, cg_remove(CG_GONE));
	/* detached once the cgroup's bpf state is released */
	EXPECT_EQ(1, poll(&pfd, 1, 30000));
	EXPECT_TRUE(pfd.revents & POLLHUP);
	EXPECT_EQ(0, link_cgroup_id(l));
	EXPECT_EQ(0, link_map_id(l));
	EXPECT_FALSE(policy_attached("pol_gone"));
	EXPECT_EQ(EXIT_CGROUP_REMOVED, p->data->exit_reason);
	/* the link outlived the policy: closing it is harmless */
	bpf_link__destroy(l);
	knobs__destroy(p);
}

/*
 * Attach a policy to a cgroup while another task removes the cgroup, many
 * times, with the removal landing at different points of the attach:
 * whichever wins, once the cgroup is gone no policy may be left attached
 * to it (an attach that saw the cgroup online is detached by its removal).
 */
TEST_F_TIMEOUT(scope, attach_racing_rmdir_leaves_nothing, 600)
{
	int i, j, attached = 0, refused = 0, left = 0;
	time_t end = time(NULL) + 240;

	/* 150 rounds, fewer on a slow (debug) kernel: at most 4 minutes */
	for (i = 0; i < 150 && time(NULL) < end; i++) {
		struct bpf_link *l;
		struct knobs *p;
		uint64_t id;
		pid_t pid;

		ASSERT_EQ(0, cg_create(CG_RACE, &id));
		p = knobs_load("race", id);
		ASSERT_NE(NULL, p);
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			usleep((i % 15) * 40);
			_exit(cg_remove(CG_RACE) ? 1 : 0);
		}
		l = knobs_attach(p);
		ASSERT_EQ(pid, waitpid(pid, NULL, 0));
		/* the removal may still be detaching (a work item) */
		for (j = 0; j < 100 && (policy_attached("race") ||
					(l && p->data->exit_reason < 0)); j++)
			usleep(20000);
		if (policy_attached("race")) {
			left++;
			TH_LOG("round %d: policy left on a removed cgroup", i);
		}
		if (l) {
			attached++;
			EXPECT_EQ(EXIT_CGROUP_REMOVED, p->data->exit_reason);
			bpf_link__destroy(l);
		} else {
			refused++;
		}
		knobs__destroy(p);
		cg_remove(CG_RACE);
	}
	TH_LOG("%d rounds: %d attaches won, %d lost the race", i, attached,
	       refused);
	EXPECT_EQ(0, left);
}

/* The attach that attach_held_past_rmdir_is_refused holds */
struct held_attach {
	struct knobs *policy;
	struct attach_window *win;
	struct bpf_link *link;
	int err;
};

static void *attach_held(void *arg)
{
	struct held_attach *h = arg;

	h->win->bss->stall_tid = syscall(SYS_gettid);
	h->link = knobs_attach(h->policy);
	h->err = h->link ? 0 : errno;
	return NULL;
}

/*
 * The race above, made certain: the attach is held where its link joins
 * the cgroup (a sleepable program on bpf_struct_ops_link_add_cgroup(),
 * which the debug kernel's error injection list lets it sit on, asleep on
 * a userfaultfd page) while the cgroup is removed. The removal finds no
 * link of the cgroup to detach, so the attach must find the cgroup
 * offline (ENOENT): a check of the cgroup's state made before the hold,
 * outside cgroup_mutex, would leave a policy on a removed cgroup for good.
 */
TEST_F_TIMEOUT(scope, attach_held_past_rmdir_is_refused, 120)
{
	struct held_attach h = {};
	struct window w;
	uint64_t id;
	pthread_t t;

	h.win = attach_window__open_and_load();
	WINDOW_REQUIRE(h.win, "bpf_struct_ops_link_add_cgroup");
	ASSERT_EQ(0, attach_window__attach(h.win));
	ASSERT_EQ(0, window_open(&w));
	h.win->bss->stall_addr = (unsigned long)w.page;
	ASSERT_EQ(0, cg_create(CG_RACE, &id));
	h.policy = knobs_load("held", id);
	ASSERT_NE(NULL, h.policy);

	ASSERT_EQ(0, pthread_create(&t, NULL, attach_held, &h));
	EXPECT_TRUE(window_wait(&h.win->bss->stalled, 30));
	/* removed while the attach is held, its link not on the cgroup yet */
	EXPECT_EQ(0, cg_remove(CG_RACE));
	EXPECT_EQ(0, window_release(&w));
	pthread_join(t, NULL);

	EXPECT_EQ(NULL, h.link);
	EXPECT_EQ(ENOENT, h.err);
	EXPECT_FALSE(policy_attached("held"))
		TH_LOG("a policy left on a removed cgroup");
	bpf_link__destroy(h.link);
	knobs__destroy(h.policy);
	attach_window__destroy(h.win);
	window_close(&w);
}

TEST_F(scope, link_update_swaps_in_place)
{
	struct bpf_link *l;
	struct knobs *old = policy("swapme", self->a, 0, &l);
	struct knobs *new = knobs_load("swapme", self->a);
	struct knobs *other = knobs_load("other", self->a);

	ASSERT_NE(NULL, l);
	ASSERT_NE(NULL, new);
	ASSERT_NE(NULL, other);
	new->bss->veto = 1;

	EXPECT_EQ(0, run_in_cgroup(CG_NESTED, collapse_one, NULL));
	EXPECT_EQ(0, bpf_link__update_map(l, new->maps.knobs));
	EXPECT_EQ(EXIT_SWAPPED, old->data->exit_reason);
	EXPECT_EQ(1, new->bss->nr_init);
	EXPECT_EQ(1, policy_stat("swapme", "swaps"));
	/* counters carried over; the new ops answer now */
	EXPECT_EQ(1, policy_stat("swapme", "collapse_succeeded"));
	EXPECT_EQ(EBUSY, run_in_cgroup(CG_NESTED, collapse_one, NULL));
	EXPECT_EQ(1, new->bss->nr_pte_limits);
	EXPECT_EQ(1, old->bss->nr_pte_limits);

	/* an update must keep the name */
	EXPECT_EQ(-EINVAL, bpf_link__update_map(l, other->maps.knobs));
	/* nor swap a policy for itself: its exit() would run while it runs */
	EXPECT_EQ(-EINVAL, bpf_link__update_map(l, new->maps.knobs));
	EXPECT_EQ(-1, new->data->exit_reason);
	EXPECT_EQ(1, new->bss->nr_init);
	EXPECT_EQ(1, policy_stat("swapme", "swaps"));

	bpf_link__destroy(l);
	knobs__destroy(old);
	knobs__destroy(new);
	knobs__destroy(other);
}

/*
 * A link update while a range is between its hooks: the range started with
 * the old ops, so none of its remaining hooks may ask the new ones (one
 * range never mixes two policies' answers); the next range asks the new.
 */
TEST_F_TIMEOUT(scope, swap_mid_range_never_mixes, 120)
{
	struct bpf_link *l;
	struct knobs *old = policy("mixme", self->a, 0, &l);
	struct knobs *new = old ? knobs_load_next(old, "mixme") : NULL;
	int i, status;
	pid_t pid;

	ASSERT_NE(NULL, l);
	ASSERT_NE(NULL, new);
	old->bss->spin_ns = SPIN_NS;
	pid = start_in_cgroup(CG_NESTED, collapse_one, NULL);
	ASSERT_LT(0, pid);
	/* swap while the range is inside the old pte_limits */
	for (i = 0; i < 3000 && !old->bss->inflight; i++)
		usleep(1000);
	ASSERT_EQ(1, old->bss->inflight);
	ASSERT_EQ(0, bpf_link__update_map(l, new->maps.knobs));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(1, old->bss->nr_pte_limits);
	EXPECT_EQ(0, old->bss->nr_target_node);
	EXPECT_EQ(0, new->bss->nr_pte_limits);
	EXPECT_EQ(0, new->bss->nr_target_node);
	EXPECT_EQ(0, new->bss->nr_collapsed);

	/* the next range asks the new ops, all of them */
	EXPECT_EQ(0, run_in_cgroup(CG_NESTED, collapse_one, NULL));
	EXPECT_EQ(1, new->bss->nr_pte_limits);
	EXPECT_EQ(1, new->bss->nr_target_node);
	EXPECT_EQ(1, new->bss->nr_collapsed);
	bpf_link__destroy(l);
	knobs__destroy(old);
	knobs__destroy(new);
}

/* Shared with the collapsing child: stop flag and what it saw. */
struct loop_state {
	volatile int stop;
	volatile long calls, successes, other_errors;
};

static struct loop_state *loop_state(void)
{
	void *p = mmap(NULL, sizeof(struct loop_state), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* MADV_COLLAPSE on a sparse range until told to stop. */
static int collapse_loop(void *arg)
{
	struct loop_state *st = arg;

	while (!st->stop) {
		int err = collapse_sparse_region(1);

		st->calls++;
		if (!err)
			st->successes++;
		else if (err != EBUSY)
			st->other_errors++;
	}
	return 0;
}

static pid_t start_loop(const char *cg, struct loop_state *st)
{
	pid_t pid = start_in_cgroup(cg, collapse_loop, st);

	while (pid > 0 && !st->calls)
		usleep(1000);
	return pid;
}

static int stop_loop(pid_t pid, struct loop_state *st)
{
	int status;

	st->stop = 1;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST_F_TIMEOUT(scope, swap_never_shows_default, 180)
{
	struct loop_state *st = loop_state();
	struct knobs *p[2];
	struct bpf_link *l;
	pid_t pid;
	long before;
	int i;

	ASSERT_NE(NULL, st);
	p[0] = policy("vetoer", self->a, 1, &l);
	ASSERT_NE(NULL, l);
	p[1] = knobs_load("vetoer", self->a);
	ASSERT_NE(NULL, p[1]);
	p[1]->bss->veto = 1;

	pid = start_loop(CG_NESTED, st);
	ASSERT_LT(0, pid);
	for (i = 1; i <= 40; i++) {
		/* swap back and forth between two vetoing policies */
		ASSERT_EQ(0, bpf_link__update_map(l, p[i % 2]->maps.knobs));
		before = st->calls;
		while (st->calls == before)
			usleep(500);
	}
	EXPECT_EQ(0, stop_loop(pid, st));
	TH_LOG("%ld MADV_COLLAPSE calls during 40 swaps", st->calls);
	EXPECT_EQ(0, st->successes);
	EXPECT_EQ(0, st->other_errors);
	EXPECT_EQ(40, policy_stat("vetoer", "swaps"));
	bpf_link__destroy(l);
	knobs__destroy(p[0]);
	knobs__destroy(p[1]);
	munmap(st, sizeof(*st));
}

TEST_F_TIMEOUT(scope, detach_while_collapsing, 180)
{
	struct loop_state *st = loop_state();
	pid_t pid;
	int i;

	ASSERT_NE(NULL, st);
	pid = start_loop(CG_NESTED, st);
	ASSERT_LT(0, pid);
	for (i = 0; i < 20; i++) {
		struct bpf_link *l;
		struct knobs *p = policy("churn", i % 2 ? self->a : 0, i % 3 == 0, &l);
		long before = st->calls;

		ASSERT_NE(NULL, l);
		while (st->calls == before)
			usleep(500);
		bpf_link__destroy(l);
		knobs__destroy(p);
	}
	EXPECT_EQ(0, stop_loop(pid, st));
	TH_LOG("%ld calls, %ld collapsed", st->calls, st->successes);
	EXPECT_EQ(0, st->other_errors);
	EXPECT_FALSE(policy_attached("churn"));
	munmap(st, sizeof(*st));
}

/* process_madvise(MADV_COLLAPSE) on @t from a child; returns its pid. */
static pid_t collapse_from_outside(struct target *t)
{
	pid_t pid = fork();

	if (!pid) {
		int pidfd = sys_pidfd_open(t->pid);

		if (pidfd < 0)
			_exit(255);
		_exit(sys_process_madvise(pidfd, t->p, t->len, MADV_COLLAPSE, 0) ?
		      errno : 0);
	}
	return pid;
}

/*
 * The cgroup goes while a caller is inside its policy's pte_limits hook
 * (the hook spins 200 ms): an agent outside the cgroup collapses the
 * memory of the cgroup's only process, which is killed so that the cgroup
 * can be removed meanwhile. The caller finishes safely, exit() runs only
 * after it, and the policy is gone.
 */
TEST_F_TIMEOUT(scope, cgroup_removed_mid_call, 180)
{
	int i, j, status, mid_call = 0;

	for (i = 0; i < 10; i++) {
		struct bpf_link *l;
		struct target t;
		struct knobs *p;
		uint64_t id;
		pid_t agent;

		ASSERT_EQ(0, cg_create(CG_GONE, &id));
		p = knobs_load("midcall", id);
		ASSERT_NE(NULL, p);
		p->bss->spin_ns = 200 * 1000 * 1000;
		l = knobs_attach(p);
		ASSERT_NE(NULL, l);
		ASSERT_EQ(0, target_start(&t, 1, 0, NULL));
		ASSERT_EQ(0, cg_move(CG_GONE, t.pid));
		agent = collapse_from_outside(&t);
		ASSERT_LT(0, agent);
		for (j = 0; j < 50000 && !p->bss->inflight; j++)
			usleep(100);
		target_stop(&t);
		ASSERT_EQ(0, cg_remove(CG_GONE));
		mid_call += p->bss->inflight > 0;
		ASSERT_EQ(agent, waitpid(agent, &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		for (j = 0; j < 100 && p->data->exit_reason < 0; j++)
			usleep(50000);
		EXPECT_EQ(EXIT_CGROUP_REMOVED, p->data->exit_reason);
		EXPECT_EQ(0, p->bss->nr_after_exit);
		EXPECT_FALSE(policy_attached("midcall"));
		bpf_link__destroy(l);
		knobs__destroy(p);
	}
	TH_LOG("%d of 10 removals while the hook ran", mid_call);
	EXPECT_LT(0, mid_call);
}

TEST_HARNESS_MAIN
