// SPDX-License-Identifier: GPL-2.0
/*
 * Bounded stress (STRESS_SECONDS, default 30): in one cgroup subtree,
 * threads fault and write known patterns, threads call MADV_COLLAPSE and
 * process_madvise over the same ranges, threads munmap/mremap/mprotect/
 * MADV_DONTNEED them and fork children that exit, khugepaged runs at full
 * speed, while the main thread attaches, swaps and detaches policies
 * (random_policy among them) on cgroups it creates and removes with the
 * policies still attached. Afterwards every surviving page holds its
 * pattern, nothing stays charged to the cgroups, and no policy is left.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "knobs.h"
#include "random_policy.skel.h"
#include "kselftest_harness.h"

#define SLOTS		16		/* huge-page slots per worker process */
#define WORKERS		2

/*
 * Slot s of the region is either unmapped or filled with pattern(s, gen,
 * off): every 8-byte word of every page, so that a collapse copying part
 * of a page, or the wrong page, is seen. gen[] is written before the data
 * and read with it under the slot's lock.
 */
struct slot {
	pthread_mutex_t lock;
	int mapped;
	unsigned long gen;
};

struct worker {
	char *base;
	struct slot slot[SLOTS];
	volatile int stop;
	long checks, bad, collapses, changes;
	int pidfd;
};

static uint64_t pattern(int s, unsigned long gen, size_t off)
{
	return ((uint64_t)s << 48) ^ (gen << 20) ^ off ^ 0x5a5a5a5a5a5a5a5aULL;
}

static void fill_slot(struct worker *w, int s)
{
	char *p = w->base + s * HPAGE_SZ;

	w->slot[s].gen++;
	for (size_t off = 0; off < HPAGE_SZ; off += sizeof(uint64_t))
		*(uint64_t *)(p + off) = pattern(s, w->slot[s].gen, off);
}

static void check_slot(struct worker *w, int s)
{
	char *p = w->base + s * HPAGE_SZ;

	for (size_t off = 0; off < HPAGE_SZ; off += sizeof(uint64_t)) {
		if (*(uint64_t *)(p + off) != pattern(s, w->slot[s].gen, off)) {
			w->bad++;
			fprintf(stderr, "# slot %d +%zu: corrupted\n", s, off);
			return;
		}
	}
	w->checks++;
}

/* Writers and checkers: hold a slot, verify it, rewrite it. */
static void *writer(void *arg)
{
	struct worker *w = arg;
	unsigned int seed = (uintptr_t)&seed;

	while (!w->stop) {
		int s = rand_r(&seed) % SLOTS;

		pthread_mutex_lock(&w->slot[s].lock);
		if (w->slot[s].mapped) {
			check_slot(w, s);
			fill_slot(w, s);
		}
		pthread_mutex_unlock(&w->slot[s].lock);
	}
	return NULL;
}

/* Collapse with madvise and process_madvise, over slot-sized and wider ranges. */
static void *collapser(void *arg)
{
	struct worker *w = arg;
	unsigned int seed = 7;

	while (!w->stop) {
		int s = rand_r(&seed) % SLOTS, n = 1 + rand_r(&seed) % 4;

		if (s + n > SLOTS)
			n = SLOTS - s;
		if (rand_r(&seed) & 1)
			madvise(w->base + s * HPAGE_SZ, n * HPAGE_SZ, MADV_COLLAPSE);
		else
			sys_process_madvise(w->pidfd, w->base + s * HPAGE_SZ,
					    n * HPAGE_SZ, MADV_COLLAPSE,
					    rand_r(&seed) % 4);
		w->collapses++;
	}
	return NULL;
}

/* Change the vmas: unmap/remap, move away and back, mprotect, DONTNEED. */
static void *changer(void *arg)
{
	struct worker *w = arg;
	unsigned int seed = 11;

	while (!w->stop) {
		int s = rand_r(&seed) % SLOTS;
		char *p = w->base + s * HPAGE_SZ;
		void *tmp;

		pthread_mutex_lock(&w->slot[s].lock);
		switch (rand_r(&seed) % 5) {
		case 0:
			munmap(p, HPAGE_SZ);
			w->slot[s].mapped = 0;
			break;
		case 1:
			if (mmap(p, HPAGE_SZ, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p) {
				w->slot[s].mapped = 1;
				fill_slot(w, s);
			}
			break;
		case 2:
			if (!w->slot[s].mapped)
				break;
			tmp = mremap(p, HPAGE_SZ, HPAGE_SZ, MREMAP_MAYMOVE);
			if (tmp != MAP_FAILED &&
			    mremap(tmp, HPAGE_SZ, HPAGE_SZ, MREMAP_MAYMOVE |
				   MREMAP_FIXED, p) != p) {
				munmap(tmp, HPAGE_SZ);
				w->slot[s].mapped = 0;
			}
			break;
		case 3:
			if (w->slot[s].mapped) {
				mprotect(p, PAGE_SZ, PROT_READ);
				mprotect(p, PAGE_SZ, PROT_READ | PROT_WRITE);
			}
			break;
		case 4:
			if (w->slot[s].mapped) {
				madvise(p + PAGE_SZ, 4 * PAGE_SZ, MADV_DONTNEED);
				fill_slot(w, s);
			}
			break;
		}
		w->changes++;
		pthread_mutex_unlock(&w->slot[s].lock);
		if (rand_r(&seed) % 64 == 0) {
			pid_t pid = fork();

			if (!pid)
				_exit(0);
			if (pid > 0)
				waitpid(pid, NULL, 0);
		}
	}
	return NULL;
}

/*
 * One worker process: 2 writers, 2 collapsers, 1 changer, until the main
 * thread closes the pipe (arg: its two ends). Not a timer of its own: the
 * last round of policies, however late the kernel lets it end, still has
 * workers collapsing under it.
 */
static int worker(void *arg)
{
	int *stop_pipe = arg;
	struct worker *w = calloc(1, sizeof(*w));
	pthread_t t[5];
	struct region r;
	char c;
	int i;

	close(stop_pipe[1]);
	if (!w || region_map(&r, SLOTS))
		return 200;
	w->base = r.p;
	w->pidfd = sys_pidfd_open(getpid());
	madvise(r.p, r.len, MADV_HUGEPAGE);
	for (i = 0; i < SLOTS; i++) {
		pthread_mutex_init(&w->slot[i].lock, NULL);
		w->slot[i].mapped = 1;
		fill_slot(w, i);
	}
	pthread_create(&t[0], NULL, writer, w);
	pthread_create(&t[1], NULL, writer, w);
	pthread_create(&t[2], NULL, collapser, w);
	pthread_create(&t[3], NULL, collapser, w);
	pthread_create(&t[4], NULL, changer, w);
	while (read(stop_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	w->stop = 1;
	for (i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < SLOTS; i++)
		if (w->slot[i].mapped)
			check_slot(w, i);
	printf("# worker %d: %ld checks, %ld corrupted, %ld collapse calls, %ld vma changes\n",
	       getpid(), w->checks, w->bad, w->collapses, w->changes);
	return w->bad ? 1 : 0;
}

/* A policy's counter, 0 when it is not attached. */
static long stat_or_0(const char *policy, const char *key)
{
	long v = policy_stat(policy, key);

	return v > 0 ? v : 0;
}

/* khugepaged at full speed for the run, the settings restored after it. */
FIXTURE(stress)
{
	int unused;
};

FIXTURE_SETUP(stress)
{
	struct thp_settings s;

	thp_save_settings();
	thp_read_settings(&s);
	s.khugepaged.scan_sleep_millisecs = 0;
	s.khugepaged.alloc_sleep_millisecs = 0;
	s.khugepaged.pages_to_scan = 16 * HPAGE_NR;
	s.thp_enabled = THP_MADVISE;
	thp_push_settings(&s);
}

FIXTURE_TEARDOWN(stress)
{
	thp_restore_settings();
}

TEST_F_TIMEOUT(stress, run, 600)
{
	const char *env = getenv("STRESS_SECONDS");
	int secs = env ? atoi(env) : 30, i, status;
	int rounds = 0, attached = 0, swaps = 0, tmp_attached = 0, consulted = 0;
	long random_ranges = 0, random_clamped = 0, knobs_ranges = 0;
	pid_t pids[WORKERS];
	int stop_pipe[2];
	uint64_t id_a, id_b;
	time_t end;

	ASSERT_EQ(0, cg_create("ce_stress", NULL));
	write_str(CGROOT "ce_stress/cgroup.subtree_control", "+memory");
	ASSERT_EQ(0, cg_create("ce_stress/a", &id_a));
	ASSERT_EQ(0, cg_create("ce_stress/b", &id_b));
	ASSERT_EQ(0, pipe(stop_pipe));
	pids[0] = start_in_cgroup("ce_stress/a", worker, stop_pipe);
	pids[1] = start_in_cgroup("ce_stress/b", worker, stop_pipe);

	end = time(NULL) + secs;
	while (time(NULL) < end) {
		struct random_policy *rp = random_policy__open();
		struct knobs *k1 = knobs_load("stress_k", id_b), *k2;
		struct bpf_link *lr = NULL, *lk = NULL;
		long r_ranges, k_ranges;
		uint64_t id_tmp;

		/* random answers on a, knobs on b, swapped in place */
		if (rp && !random_policy__load(rp))
			lr = ops_attach_cgroup(rp->maps.random_policy, id_a,
					       BPF_F_ALLOW_OVERRIDE);
		if (k1) {
			k1->bss->veto = rounds & 1;
			lk = knobs_attach(k1);
		}
		attached += lr && lk;
		usleep(200000);
		k2 = knobs_load("stress_k", id_b);
		if (lk && k2 && !bpf_link__update_map(lk, k2->maps.knobs))
			swaps++;
		usleep(200000);
		/*
		 * The kernel's counters for this round, read while attached:
		 * both policies asked about ranges in this very round.
		 */
		r_ranges = stat_or_0("random_policy", "ranges_scanned");
		k_ranges = stat_or_0("stress_k", "ranges_scanned");
		consulted += r_ranges > 0 && k_ranges > 0;
		random_ranges += r_ranges;
		knobs_ranges += k_ranges;
		random_clamped += stat_or_0("random_policy", "batch_size_clamped") +
				  stat_or_0("random_policy", "target_node_invalid");
		/* a cgroup removed with its policy attached (mid-call: policy_scope) */
		if (!cg_create("ce_stress/tmp", &id_tmp)) {
			struct knobs *kt = knobs_load("stress_tmp", id_tmp);
			struct bpf_link *lt = kt ? knobs_attach(kt) : NULL;

			tmp_attached += !!lt;
			usleep(50000);
			cg_remove("ce_stress/tmp");
			bpf_link__destroy(lt);
			knobs__destroy(kt);
		}
		bpf_link__destroy(lr);
		bpf_link__destroy(lk);
		random_policy__destroy(rp);
		knobs__destroy(k1);
		knobs__destroy(k2);
		rounds++;
	}
	close(stop_pipe[1]);	/* the workers stop */
	for (i = 0; i < WORKERS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status));
		EXPECT_EQ(0, WEXITSTATUS(status));
	}
	TH_LOG("%d rounds: %d with both policies attached, %d swaps, %d tmp attached",
	       rounds, attached, swaps, tmp_attached);
	TH_LOG("ranges asked: random_policy %ld (%ld answers clamped), stress_k %ld",
	       random_ranges, random_clamped, knobs_ranges);
	/* Every round really ran its policies, and the kernel consulted them. */
	EXPECT_LT(1, rounds);
	EXPECT_EQ(rounds, attached);
	EXPECT_EQ(rounds, swaps);
	EXPECT_EQ(rounds, tmp_attached);
	EXPECT_EQ(rounds, consulted);
	EXPECT_LT(0, random_clamped);
	/* nothing left behind */
	EXPECT_FALSE(policy_attached("random_policy"));
	EXPECT_FALSE(policy_attached("stress_k"));
	EXPECT_FALSE(policy_attached("stress_tmp"));
	EXPECT_GT(1024, cg_current_kb("ce_stress/a"));
	EXPECT_GT(1024, cg_current_kb("ce_stress/b"));
	EXPECT_EQ(0, cg_remove("ce_stress/a"));
	EXPECT_EQ(0, cg_remove("ce_stress/b"));
	EXPECT_EQ(0, cg_remove("ce_stress"));
}

TEST_HARNESS_MAIN
