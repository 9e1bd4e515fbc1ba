// SPDX-License-Identifier: GPL-2.0
/*
 * The policy library (bpf-progs/) and the template: every policy loads,
 * attaches and changes what its header says it changes.
 */
#include <dirent.h>
#include <pthread.h>
#include <fcntl.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "run_cmd.h"
#include "kselftest_harness.h"

#define BPF	"/usr/share/collapse_ext/bpf/"

static char out[8192];

/*
 * Attach @policy at the root, detaching first what an earlier case left
 * (one killed by its timeout runs no cleanup): each case starts clean.
 */
static int load(const char *policy)
{
	unload_pinned_policies();
	return run_cmd(out, sizeof(out), "collapsectl load " BPF "%s.bpf.o", policy);
}

static void unload(const char *policy)
{
	run_cmd(out, sizeof(out), "collapsectl unload %s", policy);
}

static int sparse_collapse(void *arg)
{
	return collapse_sparse_region(*(int *)arg);
}

/*
 * Attach @policy at the root and collapse @nr sparse huge pages in a
 * child; the errno of MADV_COLLAPSE, or -1 when the policy did not load.
 */
static int sparse_collapse_under(const char *policy, int nr)
{
	if (load(policy))
		return -1;
	return run_in_cgroup("", sparse_collapse, &nr);
}

/*
 * Every policy loads, on both bases: a hook the kernel lacks (orders on
 * 6.12) is left out and named by collapsectl, never a load failure.
 */
/*
 * A fixture only for its timeout: twelve loads and unloads, each through
 * the verifier and an RCU-delayed detach, take over the harness's default
 * 30 s on a loaded debug kernel.
 */
FIXTURE(loads) {};
FIXTURE_SETUP(loads) {}
FIXTURE_TEARDOWN(loads) {}

TEST_F_TIMEOUT(loads, every_policy_loads, 300)
{
	bool has_orders = kernel_has_hook("orders");
	struct dirent *d;
	int n = 0;
	DIR *dir = opendir(BPF);

	ASSERT_NE(NULL, dir);
	while ((d = readdir(dir))) {
		char name[64];
		size_t len = strlen(d->d_name);

		if (len < 7 || strcmp(d->d_name + len - 6, ".bpf.o"))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(len - 6), d->d_name);
		EXPECT_EQ(0, load(name)) TH_LOG("%s: %s", name, out);
		EXPECT_TRUE(policy_attached(name)) TH_LOG("%s", name);
		if (!strcmp(name, "mthp_frugal") && !has_orders) {
			EXPECT_NE(NULL, strstr(out, "no collapse_ext_ops hook 'orders'"))
				TH_LOG("%s", out);
		} else {
			EXPECT_EQ(NULL, strstr(out, "no collapse_ext_ops hook"))
				TH_LOG("%s: %s", name, out);
		}
		unload(name);
		EXPECT_FALSE(policy_attached(name));
		n++;
	}
	closedir(dir);
	/* passthrough, frugal, eager, latency, numa_local, numa_spread,
	 * adaptive, remote_limits, priority, skip_huge, mthp_frugal, elastic,
	 * pace and the template */
	EXPECT_LE(14, n);
}

TEST(frugal_refuses_what_eager_collapses)
{
	EXPECT_EQ(EBUSY, sparse_collapse_under("frugal", 2));
	EXPECT_LT(0, policy_stat("frugal", "failed_none_limit"));
	unload("frugal");
	EXPECT_EQ(0, sparse_collapse_under("eager", 2));
	EXPECT_EQ(2, policy_stat("eager", "collapse_succeeded"));
	unload("eager");
}

/*
 * @arg "swap" or "shared": one full huge page with 64 of its pages swapped
 * out (to the guest's zram), or all but one shared with a child; then
 * MADV_COLLAPSE. Returns its errno (0: collapsed and PMD-mapped; 100: "0"
 * but not huge), 200+ when the setup failed.
 */
static int busy_collapse(void *arg)
{
	bool swap = !strcmp(arg, "swap");
	long swpout = vmstat("pswpout");
	struct region r;
	pid_t child = 0;
	int err = 0;

	if (swap && stay_on_this_cpu())
		return 204;
	if (region_map(&r, 1))
		return 200;
	region_fill(&r, NULL);
	if (swap) {
		if (madvise(r.p, 64 * PAGE_SZ, MADV_PAGEOUT) ||
		    vmstat("pswpout") <= swpout)
			return 201;
	} else {
		child = fork();
		if (child < 0)
			return 202;
		if (!child) {
			pause();
			_exit(0);
		}
		/* one writable pte, as a collapse needs: 511 stay shared */
		*(volatile char *)r.p = *(volatile char *)r.p;
	}
	if (madvise(r.p, r.len, MADV_COLLAPSE))
		err = errno;
	else if (!range_is_huge(0, r.p, r.len))
		err = 100;
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (!region_check(&r, NULL))
		err = 203;
	region_unmap(&r);
	return err;
}

/*
 * frugal leaves a range with more than 8 swapped-out or shared pages alone
 * (EBUSY, counted by reason), where eager, keeping MADV_COLLAPSE's own
 * limits (none), collapses both.
 */
TEST(frugal_leaves_swapped_and_shared_ranges)
{
	/* the guest always has zram swap (vm/init): none is a bug */
	ASSERT_LT(0, read_num("/sys/block/zram0/disksize"));
	ASSERT_EQ(0, load("frugal"));
	EXPECT_EQ(EBUSY, run_in_cgroup("", busy_collapse, "swap"));
	EXPECT_EQ(EBUSY, run_in_cgroup("", busy_collapse, "shared"));
	EXPECT_EQ(1, policy_stat("frugal", "failed_swap_limit"));
	EXPECT_EQ(1, policy_stat("frugal", "failed_shared_limit"));
	unload("frugal");
	ASSERT_EQ(0, load("eager"));
	EXPECT_EQ(0, run_in_cgroup("", busy_collapse, "swap"));
	EXPECT_EQ(0, run_in_cgroup("", busy_collapse, "shared"));
	EXPECT_EQ(2, policy_stat("eager", "collapse_succeeded"));
	unload("eager");
}

TEST(latency_batches_of_one)
{
	EXPECT_EQ(0, sparse_collapse_under("latency", 8));
	/* asked for each PMD, answered 1: mainline's path, no batch ran */
	EXPECT_EQ(8, policy_stat("latency", "calls_batch_size"));
	EXPECT_EQ(0, policy_stat("latency", "batches"));
	EXPECT_EQ(8, policy_stat("latency", "collapse_succeeded"));
	unload("latency");
}

/*
 * Base pages bound to the node the process does not run on: the kernel
 * would put the huge page there (most base pages), numa_local puts it on
 * the process's node.
 */
TEST(numa_local_follows_the_task)
{
	unsigned int cpu, node;
	struct region r;
	cpu_set_t set;
	int other;

	/* the guest always has two nodes (numa=fake=2): one missing is a bug */
	ASSERT_EQ(0, access("/sys/devices/system/node/node1", F_OK));
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	ASSERT_EQ(0, syscall(SYS_getcpu, &cpu, &node, NULL));
	other = !node;
	/* before the region: fork() (run_cmd) write-protects anon ptes */
	ASSERT_EQ(0, load("numa_local"));
	ASSERT_EQ(0, region_map(&r, 1));
	ASSERT_EQ(0, bind_to_node(r.p, r.len, other));
	region_fill(&r, NULL);
	ASSERT_EQ(other, page_node(r.p));
	/* a binding mempolicy would bound the policy's node too: lift it */
	ASSERT_EQ(0, bind_to_node(r.p, r.len, -1));

	EXPECT_EQ(0, madvise(r.p, r.len, MADV_COLLAPSE)) {
		run_cmd(out, sizeof(out), "collapsectl stats numa_local");
		TH_LOG("%s: %s", strerror(errno), out);
	}
	EXPECT_TRUE(range_is_huge(0, r.p, r.len));
	EXPECT_EQ((int)node, page_node(r.p));
	EXPECT_EQ(1, policy_stat("numa_local", "target_node_chosen"));
	EXPECT_TRUE(region_check(&r, NULL));
	unload("numa_local");
	region_unmap(&r);
}

TEST(numa_spread_uses_both_nodes)
{
	int seen[2] = {};
	struct region r;

	/* the guest always has two nodes (numa=fake=2): one missing is a bug */
	ASSERT_EQ(0, access("/sys/devices/system/node/node1", F_OK));
	ASSERT_EQ(0, load("numa_spread"));	/* before the region: see above */
	ASSERT_EQ(0, region_map(&r, 8));
	region_fill(&r, NULL);
	EXPECT_EQ(0, madvise(r.p, r.len, MADV_COLLAPSE));
	EXPECT_TRUE(range_is_huge(0, r.p, r.len));
	for (size_t i = 0; i < 8; i++) {
		int nid = page_node(r.p + i * HPAGE_SZ);

		if (nid == 0 || nid == 1)
			seen[nid]++;
	}
	TH_LOG("huge pages on node 0: %d, node 1: %d", seen[0], seen[1]);
	EXPECT_LE(3, seen[0]);
	EXPECT_LE(3, seen[1]);
	EXPECT_EQ(8, policy_stat("numa_spread", "target_node_chosen"));
	unload("numa_spread");
	region_unmap(&r);
}

/*
 * A range that failed 3 times in a row is vetoed instead of scanned again,
 * for 8 attempts (VETO_ROUNDS), then scanned once more.
 */
TEST(adaptive_vetoes_then_readmits_a_failing_range)
{
	struct region r;
	struct iovec iov;
	int pfd[2], i;

	ASSERT_EQ(0, load("adaptive"));
	ASSERT_EQ(0, region_map(&r, 1));
	region_fill(&r, NULL);
	ASSERT_EQ(0, pipe(pfd));
	iov.iov_base = r.p + 5 * PAGE_SZ;
	iov.iov_len = PAGE_SZ;
	ASSERT_EQ((ssize_t)PAGE_SZ, vmsplice(pfd[1], &iov, 1, 0));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(-1, madvise(r.p, r.len, MADV_COLLAPSE));
		EXPECT_EQ(EAGAIN, errno);
	}
	/* the next 8 times: not scanned, vetoed */
	for (i = 0; i < 8; i++) {
		EXPECT_EQ(-1, madvise(r.p, r.len, MADV_COLLAPSE));
		EXPECT_EQ(EBUSY, errno);
	}
	EXPECT_EQ(8, policy_stat("adaptive", "vetoes"));
	EXPECT_EQ(3, policy_stat("adaptive", "failed_busy_page"));
	/* then re-admitted: scanned, and failing again */
	EXPECT_EQ(-1, madvise(r.p, r.len, MADV_COLLAPSE));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(8, policy_stat("adaptive", "vetoes"));
	EXPECT_EQ(4, policy_stat("adaptive", "failed_busy_page"));
	close(pfd[0]);
	close(pfd[1]);
	unload("adaptive");
	region_unmap(&r);
}

/* Successes grow MADV_COLLAPSE batches from 8 towards 64 PMDs. */
TEST(adaptive_grows_batches)
{
	EXPECT_EQ(0, sparse_collapse_under("adaptive", 64));
	/* 8 + 8 (16 successes) + 16 + 32 (the rest): 4 batches, not 8 */
	EXPECT_GT(8, policy_stat("adaptive", "batches"));
	EXPECT_EQ(64, policy_stat("adaptive", "batch_pmds"));
	unload("adaptive");
}

/* Node 1 taken down to its reserve by a filler: less than 64 MiB free */
#define NUMA_SPREAD_MIN_FREE	(64 << 20 >> 12)	/* numa_spread.bpf.c's MIN_FREE_PAGES */

FIXTURE(full_node)
{
	pid_t filler;
	struct region r;
};

FIXTURE_SETUP(full_node)
{
	ASSERT_EQ(0, access("/sys/devices/system/node/node1", F_OK));
	ASSERT_EQ(0, load("numa_spread"));	/* before the region: see above */
	self->filler = start_filler(1, node_room, 256);
	ASSERT_LT(0, self->filler) TH_LOG("could not take node 1's free memory");
	ASSERT_EQ(0, region_map(&self->r, 8));
	region_fill(&self->r, NULL);
}

FIXTURE_TEARDOWN(full_node)
{
	stop_filler(self->filler);
	region_unmap(&self->r);
	unload("numa_spread");
}

/* The most pages node 1 had free, sampled every millisecond meanwhile */
struct free_watch {
	pthread_t thread;
	volatile bool stop;
	long most;
};

static void *watch_node1(void *arg)
{
	struct free_watch *w = arg;
	long free;

	while (!w->stop) {
		free = node_free(1);
		if (free > w->most)
			w->most = free;
		usleep(1000);
	}
	return NULL;
}

/*
 * numa_spread skips the full node: every huge page is chosen on node 0,
 * and none is first tried on the full node (no fallback counted).
 *
 * On the debug kernel KASAN's quarantine now and then gives node 1 tens
 * of MiB back at once, for as long as the filler takes to take them
 * again (populating them is slow there): a huge page then rightly goes
 * to node 1. A try during which node 1 was seen with 64 MiB free does
 * not count; three tries at most.
 */
TEST_F_TIMEOUT(full_node, numa_spread_skips_it, 300)
{
	long chosen = 0, fallback = 0;
	struct free_watch w;
	int i, on0 = 0, try;

	for (try = 0; try < 3; try++) {
		if (try) {
			region_unmap(&self->r);
			ASSERT_EQ(0, region_map(&self->r, 8));
			region_fill(&self->r, NULL);
		}
		chosen = policy_stat("numa_spread", "target_node_chosen");
		fallback = policy_stat("numa_spread", "target_node_fallback");
		w = (struct free_watch){ .most = node_free(1) };
		ASSERT_EQ(0, pthread_create(&w.thread, NULL, watch_node1, &w));
		EXPECT_EQ(0, madvise(self->r.p, self->r.len, MADV_COLLAPSE));
		w.stop = true;
		pthread_join(w.thread, NULL);
		chosen = policy_stat("numa_spread", "target_node_chosen") - chosen;
		fallback = policy_stat("numa_spread", "target_node_fallback") - fallback;
		for (i = 0, on0 = 0; i < 8; i++)
			on0 += page_node(self->r.p + i * HPAGE_SZ) == 0;
		TH_LOG("%d of 8 huge pages on node 0; %ld fallbacks; node 1 had "
		       "%ld pages free at most", on0, fallback, w.most);
		if (w.most < NUMA_SPREAD_MIN_FREE)
			break;
	}
	ASSERT_GT(3, try) TH_LOG("node 1 could not be kept full");
	EXPECT_TRUE(range_is_huge(0, self->r.p, self->r.len));
	EXPECT_EQ(8, on0);
	EXPECT_EQ(8, chosen);
	EXPECT_EQ(0, fallback);
	EXPECT_TRUE(region_check(&self->r, NULL));
}

/* Half of each huge page is never touched: 256 empty ptes per range. */
static bool skip_half(size_t page)
{
	return page % HPAGE_NR >= HPAGE_NR / 2;
}

/* process_madvise(MADV_COLLAPSE, @flags) of @t's range: 0 or errno */
static int remote_collapse(struct target *t, unsigned int flags)
{
	int pidfd = sys_pidfd_open(t->pid), ret = 0;

	if (pidfd < 0)
		return -1;
	if (sys_process_madvise(pidfd, t->p, t->len, MADV_COLLAPSE, flags) !=
	    (long)t->len)
		ret = errno;
	close(pidfd);
	return ret;
}

/*
 * remote_limits holds a process_madvise() request without
 * MADV_F_COLLAPSE_LIMITS to khugepaged's max_ptes_none (128 here), which
 * the 256 empty ptes exceed; without the policy the same call collapses.
 */
FIXTURE(remote_limits)
{
	int unused;
};

FIXTURE_SETUP(remote_limits)
{
	struct thp_settings s;

	thp_save_settings();
	thp_read_settings(&s);
	s.khugepaged.max_ptes_none = 128;
	thp_push_settings(&s);
}

FIXTURE_TEARDOWN(remote_limits)
{
	thp_restore_settings();
}

TEST_F(remote_limits, applies_khugepaged_limits)
{
	struct target t;

	ASSERT_EQ(0, load("remote_limits")) TH_LOG("%s", out);

	ASSERT_EQ(0, target_start(&t, 2, 0, skip_half));
	EXPECT_EQ(EBUSY, remote_collapse(&t, 0));
	EXPECT_FALSE(range_is_huge(t.pid, t.p, t.len));
	/* a range beyond the limits is skipped: both were tried */
	EXPECT_EQ(2, policy_stat("remote_limits", "failed_none_limit"));
	/* With the flag the request asked for those limits itself */
	EXPECT_EQ(EBUSY, remote_collapse(&t, MADV_F_COLLAPSE_LIMITS));
	target_stop(&t);

	/* A process collapsing its own memory is left alone */
	EXPECT_EQ(0, run_in_cgroup("", sparse_collapse, &(int){ 2 }));

	unload("remote_limits");
	ASSERT_EQ(0, target_start(&t, 2, 0, skip_half));
	EXPECT_EQ(0, remote_collapse(&t, 0));
	EXPECT_TRUE(range_is_huge(t.pid, t.p, t.len));
	target_stop(&t);
}

/* khugepaged at full speed, 8 PMDs a pass */
FIXTURE(khugepaged)
{
	int unused;
};

FIXTURE_SETUP(khugepaged)
{
	struct thp_settings s;

	thp_save_settings();
	thp_read_settings(&s);
	thp_push_settings(&s);
	khugepaged_fast(-1, 8 * HPAGE_NR);
}

FIXTURE_TEARDOWN(khugepaged)
{
	thp_restore_settings();
}

/*
 * priority at the root, passthrough on a critical cgroup: khugepaged
 * finishes the critical process's memory while most of the batch
 * process's (ahead of it in khugepaged's list) still waits, and the batch
 * process still progresses.
 */
TEST_F_TIMEOUT(khugepaged, priority_serves_critical_first, 240)
{
	struct hp_child batch = {}, crit = {};
	int batch_pct;

	ASSERT_EQ(0, cg_create("ce_crit", NULL));
	ASSERT_EQ(0, load("priority"));
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "passthrough.bpf.o --cgroup " CGROOT "ce_crit --name crit"));
	ASSERT_EQ(0, hp_child_start(&batch, "", 64));
	ASSERT_EQ(0, hp_child_start(&crit, "ce_crit", 8));
	EXPECT_TRUE(hp_child_wait_huge(&crit, 120));
	batch_pct = hp_child_huge_pct(&batch);
	TH_LOG("critical 100%% huge while batch %d%%", batch_pct);
	EXPECT_GT(50, batch_pct);
	EXPECT_LT(0, policy_stat("priority", "scan_budget_declined_pages"));
	/* the batch process is not starved */
	EXPECT_TRUE(hp_child_wait_huge(&batch, 120));
	hp_child_stop(&crit);
	hp_child_stop(&batch);
	unload("crit");
	unload("priority");
	EXPECT_EQ(0, cg_remove("ce_crit"));
}

/*
 * A child of 2 PMDs in ce_mthp under mthp_frugal, 64 KiB and 2 MiB folios
 * allowed, with memory.high @high: its folios once khugepaged settled.
 */
static void mthp_frugal_child(struct __test_metadata *_metadata,
			      const char *high, unsigned long *count)
{
	struct hp_child c = {};

	ASSERT_EQ(0, write_str(CGROOT "ce_mthp/memory.high", high));
	ASSERT_EQ(0, hp_child_start(&c, "ce_mthp", 2));
	EXPECT_TRUE(wait_full_scans(60));
	khugepaged_stop();
	EXPECT_EQ(0, folio_orders(c.pid, *c.addr, 2 * HPAGE_SZ, count, 9));
	TH_LOG("memory.high %s: %lu folios of 64 KiB, %lu of 2 MiB", high,
	       count[4], count[9]);
	hp_child_stop(&c);
	thp_pop_settings();
}

/*
 * mthp_frugal: with less than 256 MiB below memory.high, only 64 KiB
 * folios (7.3; 6.12 has no orders hook: PMDs as without the policy, and
 * collapsectl said so at the load); with room, PMDs.
 */
TEST_F_TIMEOUT(khugepaged, mthp_frugal_small_folios_when_tight, 240)
{
	struct thp_settings s = *thp_current_settings();
	bool has_orders = kernel_has_hook("orders");
	unsigned long count[10];

	for (int o = 0; o < NR_ORDERS; o++)
		s.hugepages[o].enabled = o == 4 || o == 9 ? THP_MADVISE : THP_NEVER;
	thp_push_settings(&s);
	ASSERT_EQ(0, cg_create("ce_mthp", NULL));
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "mthp_frugal.bpf.o --cgroup " CGROOT "ce_mthp"));
	EXPECT_EQ(!has_orders, !!strstr(out, "hook 'orders'")) TH_LOG("%s", out);
	mthp_frugal_child(_metadata, "128M", count);
	if (has_orders) {
		EXPECT_EQ(2 * HPAGE_NR / 16, count[4]);
		EXPECT_EQ(0, count[9]);
		EXPECT_EQ(2 * HPAGE_NR / 16,
			  policy_stat("mthp_frugal", "collapsed_64kB"));
	} else {
		EXPECT_EQ(2, count[9]);
	}
	mthp_frugal_child(_metadata, "max", count);
	EXPECT_EQ(2, count[9]);
	unload("mthp_frugal");
	EXPECT_EQ(0, cg_remove("ce_mthp"));
}

/* Once an mm is huge, skip_huge stops khugepaged from walking it again. */
TEST_F_TIMEOUT(khugepaged, skip_huge_skips_huge_mms, 180)
{
	struct hp_child c = {};
	long ranges;

	ASSERT_EQ(0, load("skip_huge"));
	ASSERT_EQ(0, hp_child_start(&c, "", 8));
	EXPECT_TRUE(hp_child_wait_huge(&c, 60));
	/* one complete walk that finds it huge, then only skips */
	EXPECT_TRUE(wait_full_scans(30));
	ranges = policy_stat("skip_huge", "ranges_scanned");
	EXPECT_TRUE(wait_full_scans(30));
	EXPECT_TRUE(wait_full_scans(30));
	TH_LOG("%ld ranges scanned, %ld visits, %ld skipped", ranges,
	       policy_stat("skip_huge", "khugepaged_mm_visits"),
	       policy_stat("skip_huge", "khugepaged_mm_skips"));
	EXPECT_EQ(ranges, policy_stat("skip_huge", "ranges_scanned"));
	EXPECT_LT(0, policy_stat("skip_huge", "khugepaged_mm_skips"));
	hp_child_stop(&c);
	unload("skip_huge");
}

/*
 * eager on a cgroup and pace at the root (pass_size is root-only),
 * khugepaged refusing half-empty ranges (max_ptes_none 0) in passes of one
 * PMD, one pass a second: eager's limits collapse a 16-PMD half-empty heap
 * anyway, in passes 8 times as big as sysfs's (one PMD a pass would need
 * 16 passes). Both answer: the passes are pace's, the collapses eager's.
 */
TEST_F_TIMEOUT(khugepaged, eager_sparse_ranges_in_paced_passes, 240)
{
	struct thp_settings s = *thp_current_settings();
	struct hp_child c = {};
	long passes;

	s.khugepaged.max_ptes_none = 0;
	s.khugepaged.pages_to_scan = HPAGE_NR;
	s.khugepaged.scan_sleep_millisecs = 1000;
	thp_push_settings(&s);
	ASSERT_EQ(0, cg_create("ce_eager", NULL));
	ASSERT_EQ(0, load("pace")) TH_LOG("%s", out);
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "eager.bpf.o --cgroup " CGROOT "ce_eager")) TH_LOG("%s", out);
	passes = policy_stat("pace", "khugepaged_passes");
	ASSERT_EQ(0, hp_child_start_sparse(&c, "ce_eager", 16, skip_half));
	EXPECT_TRUE(hp_child_wait_huge(&c, 120));
	passes = policy_stat("pace", "khugepaged_passes") - passes;
	TH_LOG("16 half-empty PMDs collapsed within %ld passes", passes);
	EXPECT_LT(0, passes);
	EXPECT_GT(8, passes);
	EXPECT_LE(2, policy_stat("pace", "calls_pass_size"));
	EXPECT_EQ(16, policy_stat("eager", "collapse_succeeded"));
	EXPECT_EQ(0, policy_stat("pace", "collapse_succeeded"));
	hp_child_stop(&c);
	unload("eager");
	unload("pace");
	EXPECT_EQ(0, cg_remove("ce_eager"));
	thp_pop_settings();
}

/*
 * A skipped mm is walked again once recheck_s (60 s) passed since its last
 * scan: a huge page split meanwhile is found and collapsed again, after a
 * while and not at once.
 */
TEST_F_TIMEOUT(khugepaged, skip_huge_rechecks_after_a_while, 240)
{
	struct hp_child c = {};
	time_t t0;
	long skips;

	ASSERT_EQ(0, load("skip_huge"));
	ASSERT_EQ(0, hp_child_start(&c, "", 8));
	EXPECT_TRUE(hp_child_wait_huge(&c, 60));
	/* one complete walk that finds it huge: skipped from then on */
	EXPECT_TRUE(wait_full_scans(30));
	t0 = time(NULL);
	ASSERT_EQ(0, hp_child_refault_first(&c));
	skips = policy_stat("skip_huge", "khugepaged_mm_skips");
	EXPECT_TRUE(hp_child_wait_huge(&c, 150));
	TH_LOG("huge again after %lds, %ld visits skipped meanwhile",
	       (long)(time(NULL) - t0),
	       policy_stat("skip_huge", "khugepaged_mm_skips") - skips);
	EXPECT_LE(30, time(NULL) - t0);
	EXPECT_LT(skips, policy_stat("skip_huge", "khugepaged_mm_skips"));
	hp_child_stop(&c);
	unload("skip_huge");
}

static bool ten_per_pmd(size_t page)
{
	return page % HPAGE_NR >= 10;
}

/* Is any 2 MiB of @r still one THP? */
static bool any_huge(struct region *r)
{
	for (size_t off = 0; off < r->len; off += HPAGE_SZ)
		if (range_is_huge(0, r->p + off, HPAGE_SZ))
			return true;
	return false;
}

#define CG_ELASTIC	"ce_elastic"

/*
 * elastic on a cgroup (swap off for it) that this process joins: 8 PMDs
 * of 10 pages each collapse as under eager; with memory.high max the
 * deferred split shrinker (drop_caches) leaves them whole and queued;
 * with 32 MiB of room (less than room_mib) it splits all 8, the contents
 * intact and their zero-filled pages given back, and a sparse range no
 * longer collapses; with room again (the headroom kfunc), it does.
 */
/* CG_ELASTIC (swap on, or off for @swap_max 0) under elastic, joined */
static int elastic_joined(const char *swap_max)
{
	if (cg_create(CG_ELASTIC, NULL) ||
	    write_str(CGROOT CG_ELASTIC "/memory.swap.max", swap_max))
		return -1;
	unload_pinned_policies();
	if (run_cmd(out, sizeof(out), "collapsectl load " BPF
		    "elastic.bpf.o --cgroup " CGROOT CG_ELASTIC))
		return -1;
	return cg_move(CG_ELASTIC, getpid());
}

/* @r: 8 PMDs of 10 pages each, collapsed (as under eager) */
static int collapse_ten_per_pmd(struct region *r)
{
	if (region_map(r, 8))
		return -1;
	region_fill(r, ten_per_pmd);
	if (madvise(r->p, r->len, MADV_COLLAPSE) ||
	    !range_is_huge(0, r->p, r->len))
		return -1;
	return 0;
}

static void elastic_done(struct region *r)
{
	cg_move("", getpid());
	region_unmap(r);
	unload("elastic");
	cg_remove(CG_ELASTIC);
}

TEST(elastic_gives_zeros_back_when_tight)
{
	struct region r = {}, sparse = {};
	long before, after;

	if (!kernel_has_hook("split_underused"))
		SKIP(return, "the kernel has no split_underused hook");
	ASSERT_EQ(0, elastic_joined("0")) TH_LOG("%s", out);
	ASSERT_EQ(0, collapse_ten_per_pmd(&r));

	ASSERT_EQ(0, write_str("/proc/sys/vm/drop_caches", "2"));
	EXPECT_TRUE(range_is_huge(0, r.p, r.len));
	EXPECT_LE(8, policy_stat("elastic", "underused_later"));
	EXPECT_EQ(0, policy_stat("elastic", "underused_split"));

	before = cg_current_kb(CG_ELASTIC);
	ASSERT_EQ(0, write_num(CGROOT CG_ELASTIC "/memory.high",
			       (before + 32 * 1024) * 1024));
	ASSERT_EQ(0, write_str("/proc/sys/vm/drop_caches", "2"));
	after = cg_current_kb(CG_ELASTIC);
	EXPECT_EQ(8, policy_stat("elastic", "underused_split"));
	/* DEFAULT's count stops at the 257th zero-filled page, max_zero 256 */
	EXPECT_EQ(8 * 257, policy_stat("elastic", "underused_zero_pages"));
	EXPECT_FALSE(any_huge(&r));
	EXPECT_TRUE(region_check(&r, ten_per_pmd));
	TH_LOG("memory.current %ld kB, then %ld kB", before, after);
	EXPECT_LE(after, before - 8 * (HPAGE_NR - 10) * 4 * 9 / 10);

	ASSERT_EQ(0, region_map(&sparse, 2));
	region_fill(&sparse, ten_per_pmd);
	EXPECT_EQ(-1, madvise(sparse.p, sparse.len, MADV_COLLAPSE));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(2, policy_stat("elastic", "failed_none_limit"));
	ASSERT_EQ(0, write_str(CGROOT CG_ELASTIC "/memory.high", "max"));
	EXPECT_EQ(0, madvise(sparse.p, sparse.len, MADV_COLLAPSE));
	EXPECT_TRUE(range_is_huge(0, sparse.p, sparse.len));

	region_unmap(&sparse);
	elastic_done(&r);
}

#define DENSE_MB	24
#define CG_ELASTIC_CHILD	CG_ELASTIC "/child"

/*
 * Proactive reclaim (memory.reclaim) of a cgroup with no limit: elastic's
 * headroom says there is room, but the swap it causes is pressure. The
 * policy and the reclaim are on CG_ELASTIC, the memory in its child: the
 * verdict reads the pressure of the THPs' own memcg, under an ancestor's
 * policy and an ancestor's reclaim.
 * Written 1 MiB at a time, a quarter of a second apart, for at most 10 s:
 * the first swap-outs (of the dense memory, older than the THPs) make the
 * cgroup tight once its stats are flushed (at most 2 s), and the THPs are
 * split, not swapped: their contents intact, and nothing split before a
 * swap-out. The swap read after the write that split counts: one write may
 * swap, see the stats flushed and split (the debug kernel does), while a
 * policy that split without pressure would have met the write's target
 * from the split queue, which memcg reclaim scans before the LRU.
 */
TEST(elastic_gives_zeros_back_under_proactive_reclaim)
{
	struct region r = {}, dense = {};
	long swapped = 0, split = 0;

	if (!kernel_has_hook("split_underused"))
		SKIP(return, "the kernel has no split_underused hook");
	ASSERT_EQ(0, elastic_joined("max")) TH_LOG("%s", out);
	/* no process in a cgroup whose children have the memory controller */
	ASSERT_EQ(0, cg_move("", getpid()));
	ASSERT_EQ(0, cg_memory_subtree(CG_ELASTIC, true));
	ASSERT_EQ(0, cg_create(CG_ELASTIC_CHILD, NULL));
	ASSERT_EQ(0, cg_move(CG_ELASTIC_CHILD, getpid()));
	ASSERT_EQ(0, region_map(&dense, DENSE_MB / 2));
	ASSERT_EQ(0, madvise(dense.p, dense.len, MADV_NOHUGEPAGE));
	region_fill(&dense, NULL);
	ASSERT_EQ(0, collapse_ten_per_pmd(&r));

	ASSERT_EQ(0, write_str("/proc/sys/vm/drop_caches", "2"));
	EXPECT_EQ(0, policy_stat("elastic", "underused_split"));
	for (int i = 0; i < 40 && !split; i++) {
		/* EAGAIN when it reclaimed less: the next write goes on */
		write_str(CGROOT CG_ELASTIC "/memory.reclaim", "1M");
		split = policy_stat("elastic", "underused_split");
		swapped = read_num(CGROOT CG_ELASTIC_CHILD
				   "/memory.swap.current") >> 10;
		usleep(250000);
	}
	TH_LOG("split %ld, after %ld KiB swapped out", split, swapped);
	EXPECT_LE(1, split);
	EXPECT_LT(0, swapped);
	EXPECT_TRUE(region_check(&r, ten_per_pmd));
	EXPECT_TRUE(region_check(&dense, NULL));
	region_unmap(&dense);
	cg_move("", getpid());
	cg_remove(CG_ELASTIC_CHILD);
	elastic_done(&r);
}

TEST(template_loads)
{
	ASSERT_EQ(0, load("policy_template")) TH_LOG("%s", out);
	EXPECT_TRUE(policy_attached("policy_template"));
	unload("policy_template");
}

/* A PMD pinned by a pipe (vmsplice): its collapse fails with EAGAIN */
static int pinned_collapse(void *arg)
{
	struct region r;
	struct iovec iov;
	int pfd[2], err = 0;

	if (region_map(&r, 1) || pipe(pfd))
		return 200;
	region_fill(&r, NULL);
	iov.iov_base = r.p;
	iov.iov_len = PAGE_SZ;
	if (vmsplice(pfd[1], &iov, 1, 0) != (ssize_t)PAGE_SZ)
		return 201;
	if (madvise(r.p, r.len, MADV_COLLAPSE))
		err = errno;
	close(pfd[0]);
	close(pfd[1]);
	region_unmap(&r);
	return err;
}

/*
 * After 32 successes adaptive's batches are 32 PMDs; one failure brings
 * them back to 8: the next 16 PMDs take two batches, not one.
 */
TEST(adaptive_falls_back_to_8_on_a_failure)
{
	long batches;

	EXPECT_EQ(0, sparse_collapse_under("adaptive", 32));
	EXPECT_EQ(EAGAIN, run_in_cgroup("", pinned_collapse, NULL));
	batches = policy_stat("adaptive", "batches");
	EXPECT_EQ(0, run_in_cgroup("", sparse_collapse, &(int){ 16 }));
	EXPECT_EQ(2, policy_stat("adaptive", "batches") - batches);
	unload("adaptive");
}

TEST_HARNESS_MAIN
