// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection (the debug kernel's CONFIG_FAIL_PAGE_ALLOC and
 * CONFIG_FAILSLAB; see Documentation/fault-injection/): allocations fail
 * on purpose while a policy is asked, and nothing is lost or left behind.
 *
 * - Huge page allocations of a MADV_COLLAPSE batch and of khugepaged: every
 *   range still ends huge, every byte intact; each failure is counted once,
 *   in the policy's failed_alloc as in vmstat's thp_collapse_alloc_failed;
 *   the request that met it ends with ENOMEM; nothing stays charged.
 * - Slab allocations of a link's attach and update, the Nth one failing
 *   for N = 1, 2, ... until the syscall no longer reaches it: a failed
 *   attach leaves no link and no policy (the next attach succeeds), a
 *   failed update leaves the old policy in place, a detach always detaches.
 *
 * Reproducible: probability 100, an interval, a count of failures (times),
 * and only the tasks that ask for it (task-filter, make-it-fail). Leaks are
 * kmemleak's to report: the run's end scans (selftests/run_tests.sh), and
 * any report fails the run. On a kernel without fault injection the cases
 * skip; on the debug kernel (kmemleak present) they must not.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "knobs.h"
#include "kselftest_harness.h"

#define DEBUGFS		"/sys/kernel/debug/"
#define FAIL_PAGE_ALLOC	DEBUGFS "fail_page_alloc/"
#define FAILSLAB	DEBUGFS "failslab/"
#define NR_PMDS		16
#define NR_FAILURES	3
#define CG_FAULTS	"ce_faults"

/*
 * Set up @dir's fault_attr: fail every @interval-th allocation of the tasks
 * that ask (make-it-fail), @times times, none exempt by its gfp flags.
 */
static int fault_setup(const char *dir, long interval, long times)
{
	char path[128];
	static const char *const settings[][2] = {
		{ "probability", "100" }, { "space", "0" }, { "verbose", "0" },
		{ "task-filter", "Y" }, { "ignore-gfp-wait", "N" },
	};
	size_t i;

	for (i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		snprintf(path, sizeof(path), "%s%s", dir, settings[i][0]);
		if (write_str(path, settings[i][1]))
			return -1;
	}
	snprintf(path, sizeof(path), "%sinterval", dir);
	if (write_num(path, interval))
		return -1;
	snprintf(path, sizeof(path), "%stimes", dir);
	return write_num(path, times);
}

/* Failures @dir still has to inject (its times) */
static long fault_left(const char *dir)
{
	char path[128];

	snprintf(path, sizeof(path), "%stimes", dir);
	return read_num(path);
}

/* Huge page allocations only (min-order 9), highmem ones too (THPs are) */
static int fail_huge_pages(long times)
{
	if (fault_setup(FAIL_PAGE_ALLOC, 1, times) ||
	    write_str(FAIL_PAGE_ALLOC "ignore-gfp-highmem", "N") ||
	    write_num(FAIL_PAGE_ALLOC "min-order", 9 /* HPAGE_PMD_ORDER */))
		return -1;
	return 0;
}

/*
 * make-it-fail of task @tid ("thread-self" for the caller), opened before
 * it is armed: opening a file allocates a struct file, which an armed
 * failslab would fail, leaving the task armed.
 */
static int make_it_fail_open(const char *tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%s/make-it-fail", tid);
	return open(path, O_WRONLY);
}

static int make_it_fail(int fd, bool on)
{
	return pwrite(fd, on ? "1" : "0", 1, 0) == 1 ? 0 : -1;
}

/*
 * Fault injection present, or SKIP: a kernel built without it may lack it,
 * the debug kernel (kmemleak) may not.
 */
#define REQUIRE_FAULT_INJECTION(dir) do {				\
	if (access(dir, F_OK)) {					\
		ASSERT_NE(0, access(DEBUGFS "kmemleak", F_OK))		\
			TH_LOG("the debug kernel lacks %s", dir);	\
		SKIP(return, "no %s (not the debug kernel)", dir);	\
	}								\
} while (0)

/* The pid of khugepaged, 0 if none */
static pid_t khugepaged_pid(void)
{
	char path[300], comm[32];
	struct dirent *d;
	pid_t pid = 0;
	DIR *proc;
	FILE *f;

	proc = opendir("/proc");
	if (!proc)
		return 0;
	while (!pid && (d = readdir(proc))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) &&
		    !strcmp(comm, "khugepaged\n"))
			pid = atoi(d->d_name);
		fclose(f);
	}
	closedir(proc);
	return pid;
}

FIXTURE(faults)
{
	struct knobs *skel;
	struct bpf_link *link;
};

/* knobs at the root: every collapse asks it, so it counts every failure */
FIXTURE_SETUP(faults)
{
	self->skel = knobs_load(NULL, 0);
	ASSERT_NE(NULL, self->skel);
	self->link = knobs_attach(self->skel);
	ASSERT_NE(NULL, self->link);
}

FIXTURE_TEARDOWN(faults)
{
	write_num(FAIL_PAGE_ALLOC "times", 0);
	write_num(FAILSLAB "times", 0);
	bpf_link__destroy(self->link);
	knobs__destroy(self->skel);
}

/* What a child in CG_FAULTS saw of its MADV_COLLAPSE under failures */
struct batch_run {
	int enomem;		/* requests that ended with ENOMEM */
	int other_errno;	/* any other error, 0 if none */
	bool huge, intact;
};

static int collapse_under_failures(void *arg)
{
	struct batch_run *out = arg;
	int i, fail = make_it_fail_open("thread-self");
	struct region r;

	if (fail < 0 || region_map(&r, NR_PMDS))
		return 1;
	region_fill(&r, NULL);
	if (make_it_fail(fail, true))
		return 2;
	for (i = 0; i < 2 * NR_FAILURES + 2; i++) {
		if (!madvise(r.p, r.len, MADV_COLLAPSE))
			break;
		if (errno != ENOMEM) {
			out->other_errno = errno;
			break;
		}
		out->enomem++;
	}
	make_it_fail(fail, false);
	close(fail);
	out->huge = range_is_huge(0, r.p, r.len);
	out->intact = region_check(&r, NULL);
	region_unmap(&r);
	return 0;
}

/*
 * Batches of 8 PMDs, the first NR_FAILURES huge page allocations failing:
 * each failure ends its request with ENOMEM and is counted once (the
 * policy's failed_alloc, vmstat's thp_collapse_alloc_failed); asked again,
 * MADV_COLLAPSE finishes; no byte lost, nothing left charged.
 */
TEST_F(faults, batch_alloc_failures_accounted)
{
	struct batch_run *run;
	long failed0, vm0, failed;

	REQUIRE_FAULT_INJECTION(FAIL_PAGE_ALLOC);
	run = mmap(NULL, sizeof(*run), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, run);
	self->skel->data->batch_pmds = 8;
	ASSERT_EQ(0, cg_create(CG_FAULTS, NULL));
	ASSERT_EQ(0, fail_huge_pages(NR_FAILURES));
	failed0 = policy_stat("knobs", "failed_alloc");
	vm0 = vmstat("thp_collapse_alloc_failed");

	EXPECT_EQ(0, run_in_cgroup(CG_FAULTS, collapse_under_failures, run));
	EXPECT_EQ(0, run->other_errno);
	EXPECT_TRUE(run->huge);
	EXPECT_TRUE(run->intact);
	EXPECT_EQ(0, fault_left(FAIL_PAGE_ALLOC));
	failed = policy_stat("knobs", "failed_alloc") - failed0;
	EXPECT_EQ(run->enomem, failed);
	EXPECT_EQ(vmstat("thp_collapse_alloc_failed") - vm0, failed);
	EXPECT_LE(1, failed);
	EXPECT_LE(failed, NR_FAILURES);
	EXPECT_LE(NR_PMDS, policy_stat("knobs", "collapse_succeeded"));
	/* no spare huge page left charged once the process is gone */
	EXPECT_GT(HPAGE_NR * 4, cg_current_kb(CG_FAULTS));
	cg_remove(CG_FAULTS);
	munmap(run, sizeof(*run));
}

/*
 * khugepaged's huge page allocations failing NR_FAILURES times: it goes on
 * (after alloc_sleep_millisecs), the memory ends huge, and every failure is
 * counted once, by the policy as by vmstat.
 */
TEST_F_TIMEOUT(faults, khugepaged_alloc_failures_accounted, 180)
{
	struct hp_child c = {};
	long failed0, vm0;
	struct thp_settings s;
	char tid[16];
	pid_t khd;
	int fail;

	REQUIRE_FAULT_INJECTION(FAIL_PAGE_ALLOC);
	khd = khugepaged_pid();
	ASSERT_LT(0, khd);
	snprintf(tid, sizeof(tid), "%d", khd);
	fail = make_it_fail_open(tid);
	ASSERT_LE(0, fail);
	thp_save_settings();
	thp_read_settings(&s);
	thp_push_settings(&s);
	khugepaged_fast(-1, 8 * HPAGE_NR);
	failed0 = policy_stat("knobs", "failed_alloc");
	vm0 = vmstat("thp_collapse_alloc_failed");
	ASSERT_EQ(0, fail_huge_pages(NR_FAILURES));
	ASSERT_EQ(0, make_it_fail(fail, true));

	ASSERT_EQ(0, hp_child_start(&c, "", 8));
	EXPECT_TRUE(hp_child_wait_huge(&c, 120));
	make_it_fail(fail, false);
	close(fail);
	EXPECT_EQ(0, fault_left(FAIL_PAGE_ALLOC));
	EXPECT_EQ(NR_FAILURES, policy_stat("knobs", "failed_alloc") - failed0);
	EXPECT_EQ(NR_FAILURES, vmstat("thp_collapse_alloc_failed") - vm0);
	hp_child_stop(&c);
	thp_restore_settings();
}

/*
 * knobs named @name for cgroup @cgid, loaded, and attached once through
 * libbpf and detached again: libbpf's attach is what fills the struct_ops
 * map (its one element), which a raw BPF_LINK_CREATE or a link update
 * then needs.
 */
static struct knobs *knobs_ready(const char *name, uint64_t cgid)
{
	struct knobs *skel = knobs_load(name, cgid);
	struct bpf_link *link;

	if (!skel)
		return NULL;
	link = knobs_attach(skel);
	if (!link) {
		knobs__destroy(skel);
		return NULL;
	}
	bpf_link__destroy(link);
	return skel;
}

/*
 * The caller's Nth fault-injection point from now fails (fail-nth, as
 * syzkaller uses it): slab allocations reach it with failslab's
 * probability 0 and no gfp exemption, so exactly the Nth one fails,
 * whatever ran before. @fd is /proc/thread-self/fail-nth, opened before
 * (opening allocates).
 */
static int fail_nth_setup(void)
{
	if (write_str(FAILSLAB "probability", "0") ||
	    write_str(FAILSLAB "ignore-gfp-wait", "N"))
		return -1;
	return open("/proc/thread-self/fail-nth", O_RDWR);
}

static int fail_nth(int fd, long nth)
{
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "%ld", nth);

	return pwrite(fd, buf, n, 0) == n ? 0 : -1;
}

/* Was the failure injected? Disarms it if not. */
static bool fail_nth_injected(int fd)
{
	char buf[24] = "";

	if (pread(fd, buf, sizeof(buf) - 1, 0) <= 0)
		return false;
	if (atol(buf) == 0)
		return true;
	fail_nth(fd, 0);
	return false;
}

/* struct_ops map id of link @fd, or of map @map_fd (is_map) */
static uint32_t map_id_of(int fd, bool is_map)
{
	struct bpf_link_info li = {};
	struct bpf_map_info mi = {};
	uint32_t len;

	if (is_map) {
		len = sizeof(mi);
		return bpf_map_get_info_by_fd(fd, &mi, &len) ? 0 : mi.id;
	}
	len = sizeof(li);
	return bpf_link_get_info_by_fd(fd, &li, &len) ? 0 : li.struct_ops.map_id;
}

#define MAX_NTH	2000

/*
 * Attach a policy to a cgroup while the Nth fault-injection point of the
 * syscall fails, for every N it reaches: ENOMEM and nothing attached (the
 * next N's attach then succeeds or fails alike, nothing left behind; an
 * init() that ran was told exit()), or attached; then detach it with the
 * first point failing: always detached.
 */
TEST_F(faults, attach_and_detach_under_slab_failures)
{
	int map_fd, cg_fd, link_fd, nth_fd, failures = 0;
	struct knobs *skel;
	uint64_t cgid;
	long nth;

	REQUIRE_FAULT_INJECTION(FAILSLAB);
	ASSERT_EQ(0, cg_create(CG_FAULTS, &cgid));
	skel = knobs_ready("knobs2", cgid);
	ASSERT_NE(NULL, skel);
	map_fd = bpf_map__fd(skel->maps.knobs);
	cg_fd = open(CGROOT CG_FAULTS, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, cg_fd);
	nth_fd = fail_nth_setup();
	ASSERT_LE(0, nth_fd);

	for (nth = 1; nth < MAX_NTH; nth++) {
		LIBBPF_OPTS(bpf_link_create_opts, opts,
			    .flags = BPF_F_CGROUP_FD | BPF_F_ALLOW_OVERRIDE);
		u64 inits = skel->bss->nr_init;
		bool injected;
		int err;

		skel->data->exit_reason = -1;
		ASSERT_EQ(0, fail_nth(nth_fd, nth));
		link_fd = bpf_link_create(map_fd, cg_fd, BPF_STRUCT_OPS, &opts);
		err = errno;
		injected = fail_nth_injected(nth_fd);
		if (link_fd < 0) {
			ASSERT_TRUE(injected) TH_LOG("attach: %s", strerror(err));
			EXPECT_EQ(ENOMEM, err) TH_LOG("N = %ld", nth);
			EXPECT_FALSE(policy_attached("knobs2")) TH_LOG("N = %ld", nth);
			/* an init() that ran is matched by its exit() */
			if (skel->bss->nr_init != inits)
				EXPECT_EQ(EXIT_UNREG, skel->data->exit_reason)
					TH_LOG("N = %ld: init() ran, exit() did not", nth);
			failures++;
			continue;
		}
		EXPECT_TRUE(policy_attached("knobs2"));
		ASSERT_EQ(0, fail_nth(nth_fd, 1));
		err = bpf_link_detach(link_fd) ? errno : 0;
		fail_nth_injected(nth_fd);
		EXPECT_EQ(0, err);
		EXPECT_FALSE(policy_attached("knobs2"));
		close(link_fd);
		if (!injected)
			break;	/* the attach no longer reaches an Nth point */
	}
	EXPECT_GT(MAX_NTH, nth);
	EXPECT_LE(1, failures);
	TH_LOG("%d of %ld attaches failed by injection", failures, nth);
	close(nth_fd);
	close(cg_fd);
	knobs__destroy(skel);
	cg_remove(CG_FAULTS);
}

/*
 * Update a link from policy A to A' (the same name, as an update must
 * keep) while the Nth fault-injection point fails: ENOMEM with A still in
 * place, or A' in place (then back to A).
 */
TEST_F(faults, update_under_slab_failures)
{
	int a_fd, b_fd, cg_fd, link_fd, nth_fd, failures = 0;
	LIBBPF_OPTS(bpf_link_create_opts, opts,
		    .flags = BPF_F_CGROUP_FD | BPF_F_ALLOW_OVERRIDE);
	uint32_t a_id, b_id;
	struct knobs *a, *b;
	uint64_t cgid;
	long nth;

	REQUIRE_FAULT_INJECTION(FAILSLAB);
	ASSERT_EQ(0, cg_create(CG_FAULTS, &cgid));
	a = knobs_ready("upd", cgid);
	ASSERT_NE(NULL, a);
	b = knobs_ready("upd", cgid);
	ASSERT_NE(NULL, b);
	a_fd = bpf_map__fd(a->maps.knobs);
	b_fd = bpf_map__fd(b->maps.knobs);
	a_id = map_id_of(a_fd, true);
	b_id = map_id_of(b_fd, true);
	cg_fd = open(CGROOT CG_FAULTS, O_RDONLY | O_DIRECTORY);
	ASSERT_LE(0, cg_fd);
	link_fd = bpf_link_create(a_fd, cg_fd, BPF_STRUCT_OPS, &opts);
	ASSERT_LE(0, link_fd) TH_LOG("attach: %s", strerror(errno));
	nth_fd = fail_nth_setup();
	ASSERT_LE(0, nth_fd);

	for (nth = 1; nth < MAX_NTH; nth++) {
		bool injected;
		int err;

		ASSERT_EQ(0, fail_nth(nth_fd, nth));
		err = bpf_link_update(link_fd, b_fd, NULL) ? errno : 0;
		injected = fail_nth_injected(nth_fd);
		if (err) {
			ASSERT_TRUE(injected) TH_LOG("update: %s", strerror(err));
			EXPECT_EQ(ENOMEM, err) TH_LOG("N = %ld", nth);
			EXPECT_EQ(a_id, map_id_of(link_fd, false)) TH_LOG("N = %ld", nth);
			EXPECT_TRUE(policy_attached("upd"));
			failures++;
			continue;
		}
		EXPECT_EQ(b_id, map_id_of(link_fd, false));
		EXPECT_TRUE(policy_attached("upd"));
		ASSERT_EQ(0, bpf_link_update(link_fd, a_fd, NULL));
		if (!injected)
			break;
	}
	EXPECT_GT(MAX_NTH, nth);
	TH_LOG("%d of %ld updates failed by injection", failures, nth);
	close(nth_fd);
	close(link_fd);
	close(cg_fd);
	knobs__destroy(b);
	knobs__destroy(a);
	cg_remove(CG_FAULTS);
}

TEST_HARNESS_MAIN
