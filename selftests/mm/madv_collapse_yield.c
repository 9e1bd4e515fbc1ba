// SPDX-License-Identifier: GPL-2.0
/*
 * A MADV_COLLAPSE batch lets waiters for the mmap_lock in between two PMDs
 * (unless its policy sets COLLAPSE_EXT_OPS_NO_YIELD), and counts it:
 * without contention a batch keeps its single acquisition; with a thread
 * waiting, it yields, and the policy's lock_yields counter equals the
 * mm_collapse_batch_yield events; with NO_YIELD it never yields. A writer
 * hammering the lock (mmap/munmap next to the range; mprotect splits,
 * MADV_NOHUGEPAGE and mremap away and back inside it) during 64-PMD
 * batches changes nothing of the contents.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "knobs.h"
#include "kselftest_harness.h"

#define TRACING		"/sys/kernel/tracing/"
#define YIELD_EVENT	TRACING "events/huge_memory/mm_collapse_batch_yield/"
#define OPS_NO_YIELD	1	/* COLLAPSE_EXT_OPS_NO_YIELD */
#define NR_PMDS		64

/* Another thread that needs the mmap write lock: map and touch 64 KiB. */
struct waiter {
	volatile int stop;
	long calls;
};

static void *waiter_thread(void *arg)
{
	struct waiter *w = arg;

	while (!w->stop) {
		char *c = mmap(NULL, 64 << 10, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (c == MAP_FAILED)
			break;
		c[0] = 1;
		munmap(c, 64 << 10);
		w->calls++;
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
		int done, left;

		if (!e)
			continue;
		n++;
		e = strstr(e, "done=");
		if (!e || sscanf(e, "done=%d, left=%d", &done, &left) != 2 ||
		    done < 1 || left < 1 || done + left > NR_PMDS)
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
	self->skel = knobs__open();
	ASSERT_NE(NULL, self->skel);
	ASSERT_EQ(0, ops_data_set_u64(self->skel->obj, self->skel->maps.knobs,
				      "flags", variant->ops_flags));
	ASSERT_EQ(0, knobs__load(self->skel));
	self->skel->data->batch_pmds = NR_PMDS;
	self->link = knobs_attach(self->skel);
	ASSERT_NE(NULL, self->link);
	ASSERT_EQ(0, region_map(&self->r, NR_PMDS));
	if (access(YIELD_EVENT "enable", W_OK))
		mount("nodev", TRACING, "tracefs", 0, NULL);
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
 * A thread keeps needing the write lock: the batch lets it in (counted
 * once per yield, each an event between two PMDs of the batch), or with
 * NO_YIELD never does.
 */
TEST_F(yield, contended_batch_yields_counted_exactly)
{
	struct waiter w = {};
	long yields = 0, events = 0, bad = 0;
	pthread_t t;
	int round;

	/* A few rounds: a waiter must arrive while the batch is locked. */
	for (round = 0; round < 5 && !yields; round++) {
		region_fill(&self->r, NULL);
		w.stop = 0;
		ASSERT_EQ(0, pthread_create(&t, NULL, waiter_thread, &w));
		usleep(20000);
		EXPECT_EQ(0, madvise(self->r.p, self->r.len, MADV_COLLAPSE));
		w.stop = 1;
		pthread_join(t, NULL);
		EXPECT_TRUE(range_is_huge(0, self->r.p, self->r.len));
		EXPECT_TRUE(region_check(&self->r, NULL));
		yields = policy_stat("knobs", "lock_yields");
		events = yield_events(&bad);
		if (variant->ops_flags & OPS_NO_YIELD)
			break;
		/* fresh pages for the next round */
		madvise(self->r.p, self->r.len, MADV_DONTNEED);
	}
	TH_LOG("%d rounds, %ld waiter calls, %ld yields, %ld events", round,
	       w.calls, yields, events);
	EXPECT_LT(0, w.calls);
	EXPECT_EQ(yields, events);
	EXPECT_EQ(0, bad);
	if (variant->ops_flags & OPS_NO_YIELD) {
		EXPECT_EQ(0, yields);
	} else {
		EXPECT_LT(0, yields);
		/* at most one yield between two PMDs of each batch */
		EXPECT_GE(round * (NR_PMDS - 1), yields);
	}
}

/*
 * A writer changes the vmas next to and inside the range while 64-PMD
 * batches collapse it: every change keeps the contents, so every page
 * must hold its pattern afterwards, each MADV_COLLAPSE fails only with a
 * documented errno, and with the writer gone the range collapses whole.
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
		case 0:		/* next to the range */
			tmp = mmap(h->p + h->len, HPAGE_SZ, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
				   -1, 0);
			if (tmp != MAP_FAILED) {
				*(char *)tmp = 1;
				munmap(tmp, HPAGE_SZ);
			}
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
	/* one vma again: a PMD the writer moved meanwhile kept its protection */
	ASSERT_EQ(0, mprotect(self->r.p, self->r.len, PROT_READ | PROT_WRITE));
	TH_LOG("%d of 10 collapses whole, %ld vma changes (%ld moves), %ld yields",
	       ok, h.ops, h.moved, policy_stat("knobs", "lock_yields"));
	EXPECT_EQ(NULL, ret);
	munmap(h.spare, HPAGE_SZ);
	EXPECT_EQ(0, other);
	EXPECT_LT(0, h.ops);
	EXPECT_TRUE(region_check(&self->r, NULL));
	EXPECT_EQ(0, madvise(self->r.p, self->r.len, MADV_COLLAPSE));
	EXPECT_TRUE(range_is_huge(0, self->r.p, self->r.len));
	EXPECT_TRUE(region_check(&self->r, NULL));
}

TEST_HARNESS_MAIN
