// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the collapse_ext selftests; see collapse_test.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include "collapse_test.h"

int region_map(struct region *r, size_t nr_hpages)
{
	r->len = nr_hpages * HPAGE_SZ;
	r->raw_len = r->len + HPAGE_SZ;
	r->raw = mmap(NULL, r->raw_len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->raw == MAP_FAILED)
		return -errno;
	r->p = (char *)(((uintptr_t)r->raw + HPAGE_SZ - 1) & ~(HPAGE_SZ - 1));
	return 0;
}

void region_unmap(struct region *r)
{
	if (r->raw && r->raw != MAP_FAILED)
		munmap(r->raw, r->raw_len);
	r->raw = NULL;
}

static uint64_t pattern(const void *base, size_t page, size_t word)
{
	return ((uint64_t)(uintptr_t)base ^ (page << 20) ^ word) * 0x9e3779b97f4a7c15ULL;
}

void region_fill(struct region *r, bool (*skip)(size_t page))
{
	size_t pages = r->len / PAGE_SZ;

	for (size_t i = 0; i < pages; i++) {
		uint64_t *w = (uint64_t *)(r->p + i * PAGE_SZ);

		if (skip && skip(i))
			continue;
		/* One word per 256 bytes: every cache line pair is checked. */
		for (size_t j = 0; j < PAGE_SZ / 8; j += 32)
			w[j] = pattern(r->p, i, j);
	}
}

bool region_check(struct region *r, bool (*skip)(size_t page))
{
	size_t pages = r->len / PAGE_SZ;

	for (size_t i = 0; i < pages; i++) {
		uint64_t *w = (uint64_t *)(r->p + i * PAGE_SZ);
		bool absent = skip && skip(i);

		for (size_t j = 0; j < PAGE_SZ / 8; j++) {
			uint64_t want = (!absent && j % 32 == 0) ? pattern(r->p, i, j) : 0;

			if (w[j] != want) {
				fprintf(stderr, "# page %zu word %zu: %#llx, want %#llx\n",
					i, j, (unsigned long long)w[j],
					(unsigned long long)want);
				return false;
			}
		}
	}
	return true;
}

unsigned long anon_huge_kb(pid_t pid, const void *p, size_t len)
{
	unsigned long lo = (uintptr_t)p, hi = lo + len, a, b, v, kb = 0;
	char path[64], line[512];
	bool in = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", pid ? pid : getpid());
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');

		if (sp && memchr(line, '-', sp - line) &&
		    sscanf(line, "%lx-%lx ", &a, &b) == 2) {
			in = a < hi && b > lo;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %lu kB", &v) == 1)
			kb += v;
	}
	fclose(f);
	return kb;
}

#define KPF_THP		22
#define PM_PRESENT	(1ULL << 63)
#define PM_PFN_MASK	((1ULL << 55) - 1)

#define KPF_COMPOUND_HEAD	15

/* Read error: the answer would be a guess, so the case fails here */
static void huge_read_failed(const char *what)
{
	fprintf(stderr, "# range_is_huge: cannot read %s: %s\n", what,
		strerror(errno));
	abort();
}

/*
 * Is the PMD-sized range at @addr of process @pid (0: self) one huge page,
 * mapped whole? Every one of its 512 pages present (/proc/PID/pagemap),
 * their pfns contiguous from a 512-aligned pfn that is the head of a
 * transparent huge page (/proc/kpageflags, root only).
 */
static bool pmd_is_huge(int fd, int kfd, unsigned long addr)
{
	static uint64_t ent[HPAGE_NR];
	uint64_t pfn, flags;
	size_t i;

	if (pread(fd, ent, sizeof(ent), addr / PAGE_SZ * sizeof(ent[0])) !=
	    sizeof(ent))
		huge_read_failed("pagemap");
	pfn = ent[0] & PM_PFN_MASK;
	if (!(ent[0] & PM_PRESENT) || !pfn || pfn % HPAGE_NR)
		return false;
	for (i = 1; i < HPAGE_NR; i++)
		if (!(ent[i] & PM_PRESENT) || (ent[i] & PM_PFN_MASK) != pfn + i)
			return false;
	if (pread(kfd, &flags, sizeof(flags), pfn * sizeof(flags)) != sizeof(flags))
		huge_read_failed("kpageflags");
	return (flags & (1ULL << KPF_THP)) && (flags & (1ULL << KPF_COMPOUND_HEAD));
}

bool range_is_huge(pid_t pid, const void *p, size_t len)
{
	unsigned long a = (uintptr_t)p & ~(HPAGE_SZ - 1);
	char path[64];
	bool huge = len > 0;
	int fd, kfd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid ? pid : getpid());
	fd = open(path, O_RDONLY);
	if (fd < 0)
		huge_read_failed(path);
	kfd = open("/proc/kpageflags", O_RDONLY);
	if (kfd < 0)
		huge_read_failed("/proc/kpageflags");
	/* every huge page of the range, every page of each */
	for (; huge && a < (uintptr_t)p + len; a += HPAGE_SZ)
		huge = pmd_is_huge(fd, kfd, a);
	close(fd);
	close(kfd);
	return huge;
}

bool sparse_pmds_2_5(size_t page)
{
	size_t h = page / HPAGE_NR;

	return (h == 2 || h == 5) && page % HPAGE_NR == 7;
}

#define PM_PRESENT	(1ULL << 63)
#define PM_PFN		((1ULL << 55) - 1)
#define KPF_HEAD	(1ULL << 15)	/* KPF_COMPOUND_HEAD */
#define KPF_TAIL	(1ULL << 16)	/* KPF_COMPOUND_TAIL */

static int pread_u64(int fd, uint64_t idx, uint64_t *val)
{
	return pread(fd, val, 8, idx * 8) == 8 ? 0 : -1;
}

int folio_orders(pid_t pid, const void *p, size_t len, unsigned long *count,
		 int max_order)
{
	uint64_t first = (uintptr_t)p / PAGE_SZ, n = len / PAGE_SZ, i = 0;
	char path[64];
	int pm, kpf, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid ? pid : getpid());
	pm = open(path, O_RDONLY);
	kpf = open("/proc/kpageflags", O_RDONLY);
	if (pm < 0 || kpf < 0) {
		err = -1;
		goto out;
	}
	memset(count, 0, (max_order + 1) * sizeof(*count));
	while (i < n) {
		uint64_t e, flags, pfn, j;

		if (pread_u64(pm, first + i, &e)) {
			err = -1;
			break;
		}
		if (!(e & PM_PRESENT)) {
			i++;
			continue;
		}
		pfn = e & PM_PFN;
		if (pread_u64(kpf, pfn, &flags)) {
			err = -1;
			break;
		}
		if (!(flags & KPF_HEAD)) {
			/* a small page; or a folio's tail, its head before p */
			if (!(flags & KPF_TAIL))
				count[0]++;
			i++;
			continue;
		}
		/* the head's tails: mapped in order, pfn after pfn */
		for (j = 1; i + j < n; j++) {
			uint64_t e2, f2;

			if (pread_u64(pm, first + i + j, &e2) ||
			    !(e2 & PM_PRESENT) || (e2 & PM_PFN) != pfn + j ||
			    pread_u64(kpf, pfn + j, &f2) || !(f2 & KPF_TAIL) ||
			    (f2 & KPF_HEAD))
				break;
		}
		if (!(j & (j - 1)) && __builtin_ctzll(j) <= max_order)
			count[__builtin_ctzll(j)]++;
		i += j;
	}
out:
	if (pm >= 0)
		close(pm);
	if (kpf >= 0)
		close(kpf);
	return err;
}

bool last_page_missing(size_t page)
{
	return page % HPAGE_NR == HPAGE_NR - 1;
}

int region_zero_first_pmd(struct region *r)
{
	volatile char *p = r->p;
	char sum = 0;

	/* no huge page, nor huge zero page, at the faults */
	if (madvise(r->p, HPAGE_SZ, MADV_NOHUGEPAGE))
		return -1;
	/*
	 * One write first: MADV_COLLAPSE refuses (EINVAL) a vma without an
	 * anon_vma, which read faults of the zero page do not create.
	 */
	p[0] = 1;
	if (madvise(r->p, HPAGE_SZ, MADV_DONTNEED))
		return -1;
	for (size_t off = 0; off < HPAGE_SZ; off += PAGE_SZ)
		sum |= p[off];
	if (madvise(r->p, HPAGE_SZ, MADV_HUGEPAGE))
		return -1;
	return sum ? -1 : 0;
}

int stay_on_this_cpu(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0)
		return -errno;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

bool huge_but_pmds_2_5(struct region *r)
{
	size_t h;

	for (h = 0; h < r->len / HPAGE_SZ; h++)
		if (range_is_huge(0, r->p + h * HPAGE_SZ, HPAGE_SZ) == (h == 2 || h == 5))
			return false;
	return true;
}

int set_caps(unsigned long long caps)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = {};

	data[0].effective = data[0].permitted = (unsigned int)caps;
	data[1].effective = data[1].permitted = (unsigned int)(caps >> 32);
	return syscall(SYS_capset, &hdr, data);
}

int page_node(void *p)
{
	int status = -1;

	if (syscall(SYS_move_pages, 0, 1UL, &p, NULL, &status, 0))
		return -errno;
	return status;
}

#define MPOL_DEFAULT_	0	/* <numaif.h> is not in the guest's libc */
#define MPOL_BIND_	2

int bind_to_node(void *p, size_t len, int nid)
{
	unsigned long mask = nid >= 0 ? 1UL << nid : 0;
	int mode = nid >= 0 ? MPOL_BIND_ : MPOL_DEFAULT_;
	unsigned long maxnode = nid >= 0 ? sizeof(mask) * 8 : 0;

	if (p)
		return syscall(SYS_mbind, p, len, mode, nid >= 0 ? &mask : NULL,
			       maxnode, 0);
	return syscall(SYS_set_mempolicy, mode, nid >= 0 ? &mask : NULL,
		       maxnode);
}

int move_to_node(void *p, size_t len, int nid)
{
	unsigned long mask = 1UL << nid;

	/* MPOL_MF_MOVE (2): migrate what is already there, then unbind */
	if (syscall(SYS_mbind, p, len, MPOL_BIND_, &mask, sizeof(mask) * 8, 2))
		return -1;
	return bind_to_node(p, len, -1);
}

long read_key(const char *path, const char *name)
{
	char key[128];
	long val;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fscanf(f, "%127s %ld", key, &val) == 2) {
		if (!strcmp(key, name)) {
			fclose(f);
			return val;
		}
	}
	fclose(f);
	return -1;
}

long vmstat(const char *name)
{
	return read_key("/proc/vmstat", name);
}

long read_num(const char *path)
{
	char buf[64] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	return strtol(buf, NULL, 0);
}

int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -errno;
}

int write_num(const char *path, long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", val);
	return write_str(path, buf);
}

int truncate_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

int tracing_mount(void)
{
	if (!access(TRACING "trace", W_OK))
		return 0;
	return mount("nodev", TRACING, "tracefs", 0, NULL) ? -1 : 0;
}

#define MMAP_LOCK_EVENT	TRACING "events/mmap_lock/mmap_lock_acquire_returned/"

int mmap_write_locks_start(void)
{
	char filter[64];

	/*
	 * Filter on common_pid rather than through set_event_pid: the latter
	 * registers probes on sched_switch/sched_waking, and patching those
	 * hottest call sites while the other vCPU runs them crashed the guest
	 * under QEMU TCG ("Oops: int3" in trace_sched_waking, twice).
	 */
	snprintf(filter, sizeof(filter),
		 "common_pid == %ld && write == 1 && success == 1",
		 (long)syscall(SYS_gettid));
	if (tracing_mount() ||
	    write_str(MMAP_LOCK_EVENT "filter", filter) ||
	    truncate_file(TRACING "trace") ||
	    write_str(MMAP_LOCK_EVENT "enable", "1"))
		return -1;
	return 0;
}

long mmap_write_locks_stop(void)
{
	char line[512];
	long n = 0;
	FILE *f;
	int err;

	err = write_str(MMAP_LOCK_EVENT "enable", "0");
	f = fopen(TRACING "trace", "r");
	if (!f)
		err = -1;
	while (f && fgets(line, sizeof(line), f))
		n += !!strstr(line, "mmap_lock_acquire_returned:");
	if (f)
		fclose(f);
	err |= write_str(MMAP_LOCK_EVENT "filter", "0");
	err |= truncate_file(TRACING "trace");
	return err ? -1 : n;
}

int sys_pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

long sys_process_madvise(int pidfd, void *addr, size_t len, int advice,
			 unsigned int flags)
{
	struct iovec iov = { .iov_base = addr, .iov_len = len };

	return syscall(SYS_process_madvise, pidfd, &iov, 1, advice, flags);
}

bool wait_full_scans(int secs)
{
	long target = read_num(KHUGEPAGED "full_scans") + 2;

	for (int i = 0; i < secs * 10 && read_num(KHUGEPAGED "full_scans") < target; i++)
		usleep(100000);
	return read_num(KHUGEPAGED "full_scans") >= target;
}

void khugepaged_fast(int none, unsigned long pages)
{
	struct thp_settings s = *thp_current_settings();

	s.khugepaged.scan_sleep_millisecs = 10;
	s.khugepaged.alloc_sleep_millisecs = 10;
	s.khugepaged.pages_to_scan = pages;
	if (none >= 0)
		s.khugepaged.max_ptes_none = none;
	s.thp_enabled = THP_MADVISE;
	thp_push_settings(&s);
}

void khugepaged_stop(void)
{
	struct thp_settings s = *thp_current_settings();

	s.thp_enabled = THP_NEVER;
	thp_push_settings(&s);
}

int target_start(struct target *t, size_t nr_hpages, uid_t uid,
		 bool (*skip)(size_t page))
{
	struct region r;
	int pfd[2];
	ssize_t n;

	if (pipe(pfd))
		return -errno;
	t->pid = fork();
	if (t->pid < 0)
		return -errno;
	if (!t->pid) {
		close(pfd[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (uid && (setresgid(uid, uid, uid) || setresuid(uid, uid, uid)))
			_exit(1);
		/* Stay ptrace-readable by the test after the uid change. */
		prctl(PR_SET_DUMPABLE, 1);
		if (region_map(&r, nr_hpages))
			_exit(1);
		region_fill(&r, skip);
		if (write(pfd[1], &r.p, sizeof(r.p)) != sizeof(r.p))
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	n = read(pfd[0], &t->p, sizeof(t->p));
	close(pfd[0]);
	t->len = nr_hpages * HPAGE_SZ;
	if (n != sizeof(t->p)) {
		target_stop(t);
		return -EIO;
	}
	return 0;
}

void target_stop(struct target *t)
{
	if (t->pid > 0) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
	}
	t->pid = 0;
}

/* What /proc/zoneinfo says of one populated zone */
struct zone_info {
	int nid;
	long free, min, high, managed, last_prot, max_prot;
};

/*
 * The populated zones of /proc/zoneinfo, up to @max of them; their number,
 * or -1 when it cannot be read.
 */
static int read_zoneinfo(struct zone_info *z, int max)
{
	struct zone_info cur = { .nid = -1 };
	char line[512];
	int n = 0, nid;
	FILE *f = fopen("/proc/zoneinfo", "r");

	if (!f)
		return -1;
	for (;;) {
		bool eof = !fgets(line, sizeof(line), f);
		char *p;

		if (eof || sscanf(line, "Node %d, zone", &nid) == 1) {
			if (cur.nid >= 0 && cur.managed && n < max)
				z[n++] = cur;
			if (eof)
				break;
			cur = (struct zone_info){ .nid = nid };
			continue;
		}
		sscanf(line, " pages free %ld", &cur.free);
		sscanf(line, " min %ld", &cur.min);
		sscanf(line, " high %ld", &cur.high);
		sscanf(line, " managed %ld", &cur.managed);
		if (!strstr(line, "protection: ("))
			continue;
		/* lowmem_reserve[]: the last entry, and the largest */
		for (p = strchr(line, '('); p && *p; p = strchr(p + 1, ',')) {
			long v;

			if (sscanf(p + 1, " %ld", &v) != 1)
				break;
			cur.last_prot = v;
			if (v > cur.max_prot)
				cur.max_prot = v;
		}
	}
	fclose(f);
	return n;
}

long node_room(int nid)
{
	struct zone_info z[32];
	long room = LONG_MIN;
	int i, n = read_zoneinfo(z, 32);

	for (i = 0; i < n; i++)
		if (z[i].nid == nid && z[i].free - z[i].min - z[i].last_prot > room)
			room = z[i].free - z[i].min - z[i].last_prot;
	return room;
}

long node_free(int nid)
{
	struct zone_info z[32];
	long free = 0;
	int i, n = read_zoneinfo(z, 32);

	for (i = 0; i < n; i++)
		if (z[i].nid == nid)
			free += z[i].free;
	return free;
}

long free_above_reserve(int unused)
{
	struct zone_info z[32];
	long free = 0, reserve = 0;
	int i, n = read_zoneinfo(z, 32);

	if (n <= 0)
		return LONG_MAX;
	for (i = 0; i < n; i++) {
		free += z[i].free;
		if (z[i].high + z[i].max_prot < z[i].managed)
			reserve += z[i].high + z[i].max_prot;
		else
			reserve += z[i].managed;
	}
	return free - reserve;
}

static pid_t filler_once(int nid, long (*room)(int nid), long target)
{
	const size_t chunk = 16 * PAGE_SZ;
	const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE |
			  MAP_LOCKED;
	int fd[2], i;
	char ok = 0;
	pid_t pid;

	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
		if (nid >= 0 && bind_to_node(NULL, 0, nid))
			_exit(1);
		for (i = 0; i < 1 << 20 && room(nid) > target; i++) {
			/* big steps while far from the target */
			size_t len = room(nid) > target + 16384 ? 256 * chunk
								 : chunk;

			if (mmap(NULL, len, PROT_READ | PROT_WRITE, flags, -1,
				 0) == MAP_FAILED)
				break;
		}
		ok = room(nid) <= target;
		if (write(fd[1], &ok, 1) != 1)
			_exit(1);
		/*
		 * Memory freed later (KASAN's quarantine drains megabytes at
		 * once on the debug kernel, reclaim) is taken too, all of it
		 * at each check: one chunk a millisecond left a node's free
		 * huge page there for tens of milliseconds.
		 */
		for (;;) {
			for (i = 0; i < 1 << 16 && room(nid) > target; i++)
				if (mmap(NULL, chunk, PROT_READ | PROT_WRITE,
					 flags, -1, 0) == MAP_FAILED)
					break;
			usleep(1000);
		}
	}
	close(fd[1]);
	if (read(fd[0], &ok, 1) != 1 || !ok) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(fd[0]);
	return pid;
}

/*
 * On the debug kernel the OOM killer now and then takes the filler before
 * it reaches its target (memory KASAN's quarantine and kmemleak hold
 * counts as free in /proc/zoneinfo): its memory is back once it is
 * reaped, so one more try.
 */
pid_t start_filler(int nid, long (*room)(int nid), long target)
{
	pid_t pid = filler_once(nid, room, target);

	if (pid < 0) {
		printf("# start_filler: target not reached, once more\n");
		sleep(1);
		pid = filler_once(nid, room, target);
	}
	return pid;
}

void stop_filler(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}
