// SPDX-License-Identifier: GPL-2.0
/*
 * MADV_COLLAPSE one PMD at a time (no policy: mainline's path) and in
 * batches (a policy's batch_size of 8): contents survive byte for byte (holes and
 * swapped-out pages included) whatever the batch boundaries; a batch where
 * some PMDs cannot be collapsed collapses the rest and returns the errno of
 * the last failure; MADV_NOHUGEPAGE sub-ranges behave as on mainline; vma
 * changes from another thread during a long collapse are survived; memcg
 * exhaustion fails as mainline does; no huge page leaks.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "knobs.h"
#include "kselftest_harness.h"

/* Holes: page 3 of every huge page, and the whole of every fifth one but one page */
static bool holes(size_t page)
{
	return page % HPAGE_NR == 3 || (page / HPAGE_NR % 5 == 4 && page % HPAGE_NR);
}

static long meminfo_kb(const char *key)
{
	char k[64];
	long v, ret = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld kB", k, &v) == 2)
		if (!strncmp(k, key, strlen(key)) && k[strlen(key)] == ':')
			ret = v;
	fclose(f);
	return ret;
}

/* Is the huge page @i of @r PMD-mapped? */
static bool pmd_huge(struct region *r, size_t i)
{
	return range_is_huge(0, r->p + i * HPAGE_SZ, HPAGE_SZ);
}

/*
 * Collapse @nr huge pages with holes (and swapped-out pages): every PMD
 * huge, every byte intact, one huge page allocated per PMD. Without swap,
 * the mmap write lock is taken once per batch of @batch_pmds (0: once per
 * PMD, mainline's path).
 */
static void collapse_and_check(struct __test_metadata *_metadata, size_t nr,
			       bool swap, int batch_pmds)
{
	struct region r;
	long alloc = vmstat("thp_collapse_alloc"), locks;

	if (swap)
		ASSERT_EQ(0, stay_on_this_cpu());
	ASSERT_EQ(0, region_map(&r, nr));
	region_fill(&r, holes);
	if (swap) {
		/* 16 pages of every huge page out to zram */
		for (size_t h = 0; h < r.len; h += HPAGE_SZ)
			ASSERT_EQ(0, madvise(r.p + h + 64 * PAGE_SZ, 16 * PAGE_SZ,
					     MADV_PAGEOUT));
	}
	ASSERT_EQ(0, mmap_write_locks_start());
	ASSERT_EQ(0, madvise(r.p, r.len, MADV_COLLAPSE)) TH_LOG("%s", strerror(errno));
	locks = mmap_write_locks_stop();
	EXPECT_TRUE(range_is_huge(0, r.p, r.len));
	EXPECT_TRUE(region_check(&r, holes));
	/* one huge page allocated per PMD, none wasted */
	EXPECT_EQ(alloc + (long)nr, vmstat("thp_collapse_alloc"));
	if (!swap)
		EXPECT_EQ(batch_pmds ? (long)(nr + batch_pmds - 1) / batch_pmds
				     : (long)nr, locks);
	region_unmap(&r);
}

FIXTURE(batch)
{
	struct knobs *skel;
	struct bpf_link *link;
};

/* Every case runs without a policy, and with batches of 8 at the root */
FIXTURE_VARIANT(batch)
{
	int batch_pmds;		/* 0: no policy */
};

FIXTURE_VARIANT_ADD(batch, one_pmd)
{
	.batch_pmds = 0,
};

FIXTURE_VARIANT_ADD(batch, batch8)
{
	.batch_pmds = 8,
};

FIXTURE_SETUP(batch)
{
	if (!variant->batch_pmds)
		return;
	self->skel = knobs_load(NULL, 0);
	ASSERT_NE(NULL, self->skel);
	self->skel->data->batch_pmds = variant->batch_pmds;
	self->link = knobs_attach(self->skel);
	ASSERT_NE(NULL, self->link);
}

FIXTURE_TEARDOWN(batch)
{
	bpf_link__destroy(self->link);
	knobs__destroy(self->skel);
}

TEST_F(batch, contents_one_batch)
{
	collapse_and_check(_metadata, 8, false, variant->batch_pmds);
}

TEST_F(batch, contents_uneven_batches)
{
	collapse_and_check(_metadata, 19, false, variant->batch_pmds);
}

TEST_F(batch, contents_single_pmd)
{
	collapse_and_check(_metadata, 1, false, variant->batch_pmds);
}

TEST_F(batch, contents_with_swapped_out_pages)
{
	if (read_num("/sys/block/zram0/disksize") <= 0)
		SKIP(return, "no zram swap");
	collapse_and_check(_metadata, 11, true, variant->batch_pmds);
}

/*
 * PMD 2 holds a page pinned by vmsplice (an extra reference: EAGAIN, the
 * request goes on), PMD 7 was never touched (no page table: EINVAL, which
 * would also end the request on mainline): the others collapse, and the
 * errno is the last failure's.
 */
TEST_F(batch, partial_batch_last_errno)
{
	struct iovec iov;
	struct region r;
	int pfd[2];
	size_t i;

	ASSERT_EQ(0, region_map(&r, 8));
	for (i = 0; i < 7; i++)
		memset(r.p + i * HPAGE_SZ, 0x5a, HPAGE_SZ);
	ASSERT_EQ(0, pipe(pfd));
	iov.iov_base = r.p + 2 * HPAGE_SZ + 7 * PAGE_SZ;
	iov.iov_len = PAGE_SZ;
	ASSERT_EQ((ssize_t)PAGE_SZ, vmsplice(pfd[1], &iov, 1, 0));

	EXPECT_EQ(-1, madvise(r.p, r.len, MADV_COLLAPSE));
	EXPECT_EQ(EINVAL, errno);
	for (i = 0; i < 8; i++) {
		bool want = i != 2 && i != 7, huge = pmd_huge(&r, i);

		if (want != huge)
			TH_LOG("PMD %zu: huge %d, want %d", i, huge, want);
		EXPECT_EQ(want, huge);
	}

	/* without PMD 7, the pinned page's EAGAIN is the last failure */
	EXPECT_EQ(-1, madvise(r.p, 5 * HPAGE_SZ, MADV_COLLAPSE));
	EXPECT_EQ(EAGAIN, errno);
	close(pfd[0]);
	close(pfd[1]);
	/* once the pin is gone, it collapses */
	EXPECT_EQ(0, madvise(r.p, 5 * HPAGE_SZ, MADV_COLLAPSE));
	EXPECT_TRUE(pmd_huge(&r, 2));
	region_unmap(&r);
}

/*
 * A MADV_NOHUGEPAGE huge page in the middle splits the vma: MADV_COLLAPSE
 * collapses the vma before it, stops at the NOHUGEPAGE one with EINVAL and
 * does not reach the vma after it, exactly as on mainline.
 */
TEST_F(batch, nohugepage_subrange)
{
	struct region r;

	ASSERT_EQ(0, region_map(&r, 4));
	region_fill(&r, NULL);
	ASSERT_EQ(0, madvise(r.p + HPAGE_SZ, HPAGE_SZ, MADV_NOHUGEPAGE));
	EXPECT_EQ(-1, madvise(r.p, r.len, MADV_COLLAPSE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_TRUE(pmd_huge(&r, 0));
	EXPECT_FALSE(pmd_huge(&r, 1));
	EXPECT_FALSE(pmd_huge(&r, 2));
	EXPECT_FALSE(pmd_huge(&r, 3));
	/* the vma after it, alone, collapses */
	EXPECT_EQ(0, madvise(r.p + 2 * HPAGE_SZ, 2 * HPAGE_SZ, MADV_COLLAPSE));
	EXPECT_TRUE(region_check(&r, NULL));
	region_unmap(&r);
}

struct churn {
	char *p;		/* second half of the region: changed under us */
	size_t len;
	volatile int stop;
	long ops;
};

/* munmap + mmap, mremap away and back, mprotect, split by MADV_NOHUGEPAGE */
static void *churn_thread(void *arg)
{
	struct churn *c = arg;
	size_t hp = c->len / HPAGE_SZ;
	unsigned int seed = 1;

	while (!c->stop) {
		char *at = c->p + (rand_r(&seed) % hp) * HPAGE_SZ;
		void *tmp;

		switch (c->ops++ % 4) {
		case 0:
			munmap(at, HPAGE_SZ);
			mmap(at, HPAGE_SZ, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			memset(at, 1, HPAGE_SZ);
			break;
		case 1:
			tmp = mremap(at, HPAGE_SZ, HPAGE_SZ, MREMAP_MAYMOVE);
			if (tmp != MAP_FAILED)
				mremap(tmp, HPAGE_SZ, HPAGE_SZ,
				       MREMAP_MAYMOVE | MREMAP_FIXED, at);
			break;
		case 2:
			mprotect(at, PAGE_SZ, PROT_READ);
			mprotect(at, PAGE_SZ, PROT_READ | PROT_WRITE);
			break;
		case 3:
			madvise(at, HPAGE_SZ, MADV_NOHUGEPAGE);
			madvise(at, HPAGE_SZ, MADV_HUGEPAGE);
			break;
		}
	}
	return NULL;
}

static int churned_collapses(void *arg)
{
	struct churn c = {};
	struct region r;
	pthread_t t;
	int i, other = 0, ok = 0;

	if (region_map(&r, 32))
		return 200;
	c.p = r.p + r.len / 2;
	c.len = r.len / 2;
	if (pthread_create(&t, NULL, churn_thread, &c))
		return 201;
	for (i = 0; i < 30; i++) {
		/* refill the first half so there is something to collapse */
		madvise(r.p, r.len / 2, MADV_DONTNEED);
		for (size_t off = 0; off < r.len / 2; off += PAGE_SZ)
			*(uint64_t *)(r.p + off) = off + 1;
		if (!madvise(r.p, r.len, MADV_COLLAPSE))
			ok++;
		else if (errno != EINVAL && errno != ENOMEM && errno != EAGAIN &&
			 errno != EBUSY)
			other++;
	}
	c.stop = 1;
	pthread_join(t, NULL);
	printf("# %d of 30 collapses succeeded while the other thread made %ld changes\n",
	       ok, c.ops);
	if (other)
		return 202;
	/* the half nobody changed holds its pattern and gets collapsed */
	if (madvise(r.p, r.len / 2, MADV_COLLAPSE) ||
	    !range_is_huge(0, r.p, r.len / 2))
		return 203;
	for (size_t off = 0; off < r.len / 2; off += PAGE_SZ)
		if (*(uint64_t *)(r.p + off) != off + 1)
			return 204;
	return 0;
}

/*
 * Another thread unmaps, remaps, moves, mprotects and splits the vma while
 * MADV_COLLAPSE runs: no crash, sane errnos, intact contents, and the
 * memcg is back to (almost) nothing once the process is gone: no
 * preallocated huge page leaked.
 */
TEST_F_TIMEOUT(batch, vma_changes_during_collapse, 300)
{
	long before = vmstat("thp_collapse_alloc");

	ASSERT_EQ(0, cg_create("ce_churn", NULL));
	EXPECT_EQ(0, run_in_cgroup("ce_churn", churned_collapses, NULL));
	TH_LOG("%ld huge pages allocated", vmstat("thp_collapse_alloc") - before);
	EXPECT_GT(1024, cg_current_kb("ce_churn"));
	EXPECT_EQ(0, cg_remove("ce_churn"));
}

static int charge_limited_collapse(void *arg)
{
	struct region r;
	int err = 0;

	if (region_map(&r, 2))
		return 200;
	region_fill(&r, NULL);
	if (madvise(r.p, r.len, MADV_COLLAPSE))
		err = errno;
	region_unmap(&r);
	return err;
}

/*
 * The memcg cannot be charged for the new huge pages (no room, no swap):
 * EBUSY as on mainline, and the pages allocated meanwhile are all freed.
 */
TEST_F(batch, memcg_exhaustion)
{
	long thp0 = meminfo_kb("AnonHugePages"), alloc;
	char path[128];

	ASSERT_EQ(0, cg_create("ce_tight", NULL));
	snprintf(path, sizeof(path), CGROOT "ce_tight/memory.max");
	if (access(path, W_OK)) {
		cg_remove("ce_tight");
		SKIP(return, "no memory controller");
	}
	ASSERT_EQ(0, write_str(path, "6M"));
	snprintf(path, sizeof(path), CGROOT "ce_tight/memory.swap.max");
	write_str(path, "0");
	alloc = vmstat("thp_collapse_alloc");
	EXPECT_EQ(EBUSY, run_in_cgroup("ce_tight", charge_limited_collapse, NULL));
	TH_LOG("%ld huge pages allocated and refused by the memcg",
	       vmstat("thp_collapse_alloc") - alloc);
	EXPECT_LT(alloc, vmstat("thp_collapse_alloc"));
	/* nothing stays charged, nothing stays mapped */
	EXPECT_GT(1024, cg_current_kb("ce_tight"));
	EXPECT_EQ(thp0, meminfo_kb("AnonHugePages"));
	EXPECT_EQ(0, cg_remove("ce_tight"));
}

TEST_HARNESS_MAIN
