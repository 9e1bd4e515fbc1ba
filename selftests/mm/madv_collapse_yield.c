// SPDX-License-Identifier: GPL-2.0
/*
 * A MADV_COLLAPSE batch lets waiters for the mmap_lock in between two PMDs
 * (unless its policy sets COLLAPSE_EXT_OPS_NO_YIELD), and counts it:
 * without contention a batch keeps its single acquisition; with a thread
 * waiting, it yields, and the policy's lock_yields counter equals the
 * mm_collapse_batch_yield events, and a waiting reader gets in between two
 * PMDs; with NO_YIELD it never yields. A writer
 * hammering the lock (mmap/munmap next to the range; mprotect splits,
 * MADV_NOHUGEPAGE and mremap away and back inside it) during 64-PMD
 * batches changes nothing of the contents. A fatal signal while a batch
 * waits to take the lock back ends it cleanly.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "knobs.h"
#include "kselftest_harness.h"

#define YIELD_EVENT	TRACING "events/huge_memory/mm_collapse_batch_yield/"
#define OPS_NO_YIELD	1	/* COLLAPSE_EXT_OPS_NO_YIELD */
#define NR_PMDS		64
#define TAIL_PMDS	8	/* of the same vma, past the collapsed range */

/*
 * Threads that need the mmap_lock while a batch holds it, timing each
 * operation: a writer maps, touches and unmaps 64 KiB elsewhere; a reader
 * drops and faults back 64 KiB of the collapsing vma's own tail (its faults
 * cannot use the per-vma lock while the batch holds the vma: they wait for
 * the mmap read lock).
 */
struct waiter {
	volatile int stop;
	char *tail;		/* reader only */
	long calls;
	double max_s;		/* longest operation */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void waited(struct waiter *w, double t0)
{
	double t = now_s() - t0;

	if (t > w->max_s)
		w->max_s = t;
	w->calls++;
}

static void *writer_thread(void *arg)
{
	struct waiter *w = arg;

	while (!w->stop) {
		double t0 = now_s();
		char *c = mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (c == MAP_FAILED)
			break;
		c[0] = 1;
		munmap(c, 64 << 10);
		waited(w, t0);
	}
	return NULL;
}

static void *reader_thread(void *arg)
{
	struct waiter *w = arg;
	size_t off = 0;

	while (!w->stop) {
		double t0 = now_s();

		madvise(w->tail + off, 64 << 10, MADV_DONTNEED);
		for (int i = 0; i < 16; i++)
			w->tail[off + i * PAGE_SZ] = 1;
		waited(w, t0);
		off = (off + (64 << 10)) % (TAIL_PMDS * HPAGE_SZ);
	}
	return NULL;
}

/* mm_collapse_batch_yield events in the trace buffer, and their fields */
static long yield_events(long *bad_fields)
{
	char line[512];
	long n = 0;
	FILE *f = fopen(TRACING "trace", "r");

	*bad_fields = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *e = strstr(line, "mm_collapse_batch_yield:");
		int index, nr;

		if (!e)
			continue;
		n++;
		e = strstr(e, "index=");
		if (!e || sscanf(e, "index=%d, nr=%d", &index, &nr) != 2 ||
		    index < 1 || index >= nr || nr > NR_PMDS)
			(*bad_fields)++;
	}
	fclose(f);
	return n;
}

FIXTURE(yield)
{
	struct knobs *skel;
	struct bpf_link *link;
	struct region r;
};

FIXTURE_VARIANT(yield)
{
	unsigned long long ops_flags;
};

FIXTURE_VARIANT_ADD(yield, yielding)
{
	.ops_flags = 0,
};

FIXTURE_VARIANT_ADD(yield, no_yield)
{
	.ops_flags = OPS_NO_YIELD,
};

/* knobs with batches of 64 PMDs at the root; the yield event on */
FIXTURE_SETUP(yield)
{
	self->skel = knobs_open();
	ASSERT_NE(NULL, self->skel);
	ASSERT_EQ(0, ops_data_set_u64(self->skel->obj, self->skel->maps.knobs,
				      "flags", variant->ops_flags));
	ASSERT_EQ(0, knobs__load(self->skel));
	self->skel->data->batch_pmds = NR_PMDS;
	self->link = knobs_attach(self->skel);
	ASSERT_NE(NULL, self->link);
	ASSERT_EQ(0, region_map(&self->r, NR_PMDS + TAIL_PMDS));
	self->r.len = NR_PMDS * HPAGE_SZ;	/* the tail is the reader's */
	ASSERT_EQ(0, tracing_mount());
	ASSERT_EQ(0, write_str(YIELD_EVENT "enable", "1"));
	ASSERT_EQ(0, truncate_file(TRACING "trace"));
}

FIXTURE_TEARDOWN(yield)
{
	write_str(YIELD_EVENT "enable", "0");
	region_unmap(&self->r);
	bpf_link__destroy(self->link);
	knobs__destroy(self->skel);
}

/* No one waits: one acquisition for the batch, whatever the flag. */
TEST_F(yield, quiet_batch_keeps_the_lock)
{
	long bad;

	region_fill(&self->r, NULL);
	ASSERT_EQ(0, madvise(self->r.p, self->r.len, MADV_COLLAPSE));
	EXPECT_TRUE(range_is_huge(0, self->r.p, self->r.len));
	EXPECT_TRUE(region_check(&self->r, NULL));
	EXPECT_EQ(1, policy_stat("knobs", "batches"));
	EXPECT_EQ(0, policy_stat("knobs", "lock_yields"));
	EXPECT_EQ(0, yield_events(&bad));
}

/*
 * Threads keep needing the lock during 64-PMD batches. Yielding, the
 * reader's longest wait is a small part of the collapse (it got in between
 * PMDs) and each yield is counted once, as an event between two PMDs of
 * the batch; with NO_YIELD the reader waits through the locked batch (the
 * contention was there) and nothing yields.
 */
TEST_F(yield, contended_batch_yields_counted_exactly)
{
	struct waiter wr = {}, rd = { .tail = self->r.p + self->r.len };
	long yields, events, bad;
	double t, longest = 0, longest_wait = 0;
	pthread_t tw, tr;
	int round;

	for (round = 0; round < 3; round++) {
		region_fill(&self->r, NULL);
		wr.stop = rd.stop = 0;
		wr.max_s = rd.max_s = 0;
		ASSERT_EQ(0, pthread_create(&tw, NULL, writer_thread, &wr));
		ASSERT_EQ(0, pthread_create(&tr, NULL, reader_thread, &rd));
		usleep(20000);
		t = now_s();
		EXPECT_EQ(0, madvise(self->r.p, self->r.len, MADV_COLLAPSE));
		t = now_s() - t;
		wr.stop = rd.stop = 1;
		pthread_join(tw, NULL);
		pthread_join(tr, NULL);
		EXPECT_TRUE(range_is_huge(0, self->r.p, self->r.len));
		EXPECT_TRUE(region_check(&self->r, NULL));
		TH_LOG("round %d: collapse %.0f ms, longest reader wait %.1f ms, "
		       "writer %.1f ms", round, t * 1e3, rd.max_s * 1e3,
		       wr.max_s * 1e3);
		if (t > longest)
			longest = t;
		if (rd.max_s > longest_wait)
			longest_wait = rd.max_s;
		/* fresh small pages for the next round */
		madvise(self->r.p, self->r.len, MADV_DONTNEED);
	}
	yields = policy_stat("knobs", "lock_yields");
	events = yield_events(&bad);
	TH_LOG("%ld waiter calls, %ld yields, %ld events", wr.calls + rd.calls,
	       yields, events);
	EXPECT_LT(0, rd.calls);
	EXPECT_EQ(yields, events);
	EXPECT_EQ(0, bad);
	if (variant->ops_flags & OPS_NO_YIELD) {
		EXPECT_EQ(0, yields);
		EXPECT_LT(longest / 4, longest_wait);
	} else {
		EXPECT_LT(0, yields);
		/* at most one yield between two PMDs of each batch */
		EXPECT_GE(round * (NR_PMDS - 1), yields);
		EXPECT_GT(longest / 4, longest_wait);
	}
}

/*
 * A writer changes the vmas next to and inside the range while 64-PMD
 * batches collapse it: every change keeps the contents, so every page
 * must hold its pattern afterwards, and with the writer gone the range
 * collapses whole. Yielding, some changes land between two PMDs of a batch.
 */
struct hammer {
	char *p;
	size_t len;
	char *spare;		/* where a PMD goes while it is moved away */
	volatile int stop;
	long ops, moved;
};

static void *hammer_thread(void *arg)
{
	struct hammer *h = arg;
	size_t nr = h->len / HPAGE_SZ;
	unsigned int seed = 3;

	while (!h->stop) {
		char *at = h->p + (rand_r(&seed) % nr) * HPAGE_SZ;
		void *tmp;

		switch (h->ops++ % 5) {
		case 0:		/* next to the range: unmap and map the tail */
			tmp = h->p + h->len + (rand_r(&seed) % TAIL_PMDS) * HPAGE_SZ;
			munmap(tmp, HPAGE_SZ);
			if (mmap(tmp, HPAGE_SZ, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != tmp)
				return (void *)2;
			*(char *)tmp = 1;
			break;
		case 1:		/* split the vma, and merge it back */
			mprotect(at + PAGE_SZ, PAGE_SZ, PROT_READ);
			mprotect(at + PAGE_SZ, PAGE_SZ, PROT_READ | PROT_WRITE);
			break;
		case 2:
			madvise(at, HPAGE_SZ, MADV_NOHUGEPAGE);
			madvise(at, HPAGE_SZ, MADV_HUGEPAGE);
			break;
		case 3:		/* away and back: same contents, same place */
			/* (refused when the PMD spans two vmas just now) */
			if (mremap(at, HPAGE_SZ, HPAGE_SZ, MREMAP_MAYMOVE |
				   MREMAP_FIXED, h->spare) != h->spare)
				break;
			if (mremap(h->spare, HPAGE_SZ, HPAGE_SZ, MREMAP_MAYMOVE |
				   MREMAP_FIXED, at) != at)
				return (void *)1;
			h->moved++;
			break;
		case 4:
			mprotect(at, HPAGE_SZ, PROT_READ);
			mprotect(at, HPAGE_SZ, PROT_READ | PROT_WRITE);
			break;
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(yield, writer_hammer_keeps_contents, 300)
{
	struct hammer h = { .p = self->r.p, .len = self->r.len };
	int i, ok = 0, other = 0;
	long yields;
	void *ret;
	pthread_t t;

	h.spare = mmap(NULL, HPAGE_SZ, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, h.spare);
	region_fill(&self->r, NULL);
	madvise(self->r.p, self->r.len, MADV_HUGEPAGE);
	ASSERT_EQ(0, pthread_create(&t, NULL, hammer_thread, &h));
	for (i = 0; i < 10; i++) {
		if (!madvise(self->r.p, self->r.len, MADV_COLLAPSE))
			ok++;
		else if (errno != EINVAL && errno != ENOMEM && errno != EAGAIN &&
			 errno != EBUSY)
			other++;
		/* split the huge pages again for the next round */
		madvise(self->r.p, self->r.len, MADV_NOHUGEPAGE);
		madvise(self->r.p, self->r.len, MADV_HUGEPAGE);
		for (size_t off = 0; off < self->r.len; off += HPAGE_SZ)
			mprotect(self->r.p + off + PAGE_SZ, PAGE_SZ, PROT_READ);
		mprotect(self->r.p, self->r.len, PROT_READ | PROT_WRITE);
	}
	h.stop = 1;
	pthread_join(t, &ret);
	/*
	 * One vma again: a PMD the writer moved meanwhile kept its protection,
	 * and its VM_NOHUGEPAGE when the move raced with the split above
	 * (MADV_COLLAPSE refuses such a vma with EINVAL).
	 */
	ASSERT_EQ(0, mprotect(self->r.p, self->r.len, PROT_READ | PROT_WRITE));
	ASSERT_EQ(0, madvise(self->r.p, self->r.len, MADV_HUGEPAGE));
	yields = policy_stat("knobs", "lock_yields");
	TH_LOG("%d of 10 collapses whole, %ld vma changes (%ld moves), %ld yields",
	       ok, h.ops, h.moved, yields);
	/* yielding, the writer's changes landed between PMDs of batches */
	if (!(variant->ops_flags & OPS_NO_YIELD))
		EXPECT_LT(0, yields);
	EXPECT_EQ(NULL, ret);
	munmap(h.spare, HPAGE_SZ);
	EXPECT_EQ(0, other);
	EXPECT_LT(0, h.ops);
	EXPECT_TRUE(region_check(&self->r, NULL));
	EXPECT_EQ(0, madvise(self->r.p, self->r.len, MADV_COLLAPSE))
		TH_LOG("the last collapse: %s", strerror(errno));
	EXPECT_TRUE(range_is_huge(0, self->r.p, self->r.len));
	EXPECT_TRUE(region_check(&self->r, NULL));
}

/*
 * A fatal signal while a yielding batch waits to take the mmap lock back
 * ends the request there (-EINTR) with the lock released once and the
 * batch's pages freed. A child collapses 64 PMDs while a thread of its own
 * keeps mprotect()ing a populated 64 MiB region (long write-lock holds, so
 * the batch yields and then waits); the parent kills it mid-collapse, 20
 * times. Every child must be gone within 20 s (a lock released twice
 * leaves its mm's exit stuck), nothing stays charged to its cgroup, and at
 * least one kill landed in a batch: a PMD ended as "no_process_for_page"
 * (SCAN_ANY_PROCESS) in the huge_memory:mm_khugepaged_scan_pmd trace.
 */
#define HOG_SZ		(64UL << 20)
#define SCAN_EVENT	TRACING "events/huge_memory/mm_khugepaged_scan_pmd/"

struct killed {
	volatile int collapsing;
};

static void *mprotect_hammer(void *arg)
{
	char *p = arg;

	for (;;) {
		mprotect(p, HOG_SZ, PROT_READ);
		mprotect(p, HOG_SZ, PROT_READ | PROT_WRITE);
	}
	return NULL;
}

static int collapse_until_killed(void *arg)
{
	struct killed *k = arg;
	struct region r;
	pthread_t t;
	char *hog;

	hog = mmap(NULL, HOG_SZ, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (hog == MAP_FAILED || region_map(&r, NR_PMDS))
		return 1;
	region_fill(&r, NULL);
	if (pthread_create(&t, NULL, mprotect_hammer, hog))
		return 2;
	k->collapsing = 1;
	madvise(r.p, r.len, MADV_COLLAPSE);
	k->collapsing = 2;
	pause();
	return 0;
}

/* Lines of the trace buffer holding @what */
static long trace_lines(const char *what)
{
	char line[512];
	long n = 0;
	FILE *f = fopen(TRACING "trace", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, what);
	fclose(f);
	return n;
}

FIXTURE(killed)
{
	int unused;
};

FIXTURE_SETUP(killed)
{
}

FIXTURE_TEARDOWN(killed)
{
}

TEST_F_TIMEOUT(killed, while_retaking_the_lock, 600)
{
	struct knobs *skel = knobs_load(NULL, 0);
	unsigned int seed = 7;
	struct bpf_link *link;
	struct killed *k;
	int i, j, finished = 0;
	long landed;
	pid_t pid;

	ASSERT_NE(NULL, skel);
	skel->data->batch_pmds = NR_PMDS;
	link = knobs_attach(skel);
	ASSERT_NE(NULL, link);
	k = mmap(NULL, sizeof(*k), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, k);
	ASSERT_EQ(0, tracing_mount());
	ASSERT_EQ(0, write_str(SCAN_EVENT "enable", "1"));
	ASSERT_EQ(0, truncate_file(TRACING "trace"));
	ASSERT_EQ(0, cg_create("ce_killed", NULL));
	for (i = 0; i < 20; i++) {
		k->collapsing = 0;
		pid = start_in_cgroup("ce_killed", collapse_until_killed, k);
		ASSERT_LT(0, pid);
		for (j = 0; j < 3000 && !k->collapsing; j++)
			usleep(1000);
		ASSERT_EQ(1, k->collapsing) TH_LOG("child %d never collapsed", i);
		usleep(20000 + rand_r(&seed) % 300000);
		finished += k->collapsing == 2;
		kill(pid, SIGKILL);
		for (j = 0; j < 200 && waitpid(pid, NULL, WNOHANG) != pid; j++)
			usleep(100000);
		ASSERT_GT(200, j) TH_LOG("killed child %d still there after 20 s", i);
	}
	write_str(SCAN_EVENT "enable", "0");
	landed = trace_lines("status=no_process_for_page");
	truncate_file(TRACING "trace");
	TH_LOG("20 kills: %ld PMDs ended by one, %d collapses had finished",
	       landed, finished);
	EXPECT_LT(0, landed);
	EXPECT_GT(1024, cg_current_kb("ce_killed"));
	EXPECT_EQ(0, cg_remove("ce_killed"));
	munmap(k, sizeof(*k));
	bpf_link__destroy(link);
	knobs__destroy(skel);
}

TEST_HARNESS_MAIN
