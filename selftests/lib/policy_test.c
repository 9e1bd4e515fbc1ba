// SPDX-License-Identifier: GPL-2.0
/* Helpers for the collapse_ext policy selftests; see policy_test.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "ops_data.h"
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

bool kernel_has_hook(const char *hook)
{
	return ops_data_kernel_has_hook(hook);
}

/*
 * Line @key of the fdinfo of the link that attached @policy (its
 * "policy:" line names it), -1 when no link has that policy or no such
 * line. The links are walked as bpftool link show walks them.
 */
long long policy_link_num(const char *policy, const char *key)
{
	size_t klen = strlen(key);
	long long val = -1;
	__u32 id = 0;

	while (val < 0 && !bpf_link_get_next_id(id, &id)) {
		char path[64], line[256], want[64];
		long long v = -1;
		bool ours = false;
		FILE *f;
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		snprintf(want, sizeof(want), "policy:\t%s\n", policy);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f)) {
			if (!strcmp(line, want))
				ours = true;
			else if (!strncmp(line, key, klen) && line[klen] == ':')
				v = strtoll(line + klen + 1, NULL, 10);
		}
		if (f)
			fclose(f);
		close(fd);
		if (ours)
			val = v;
	}
	return val;
}

long policy_stat(const char *policy, const char *key)
{
	return policy_link_num(policy, key);
}

bool policy_attached(const char *policy)
{
	return policy_link_num(policy, "attach_time_ns") >= 0;
}

long cg_current_kb(const char *path)
{
	char file[256];
	long v;

	snprintf(file, sizeof(file), CGROOT "%s/memory.current", path);
	v = read_num(file);
	if (v < 0) {
		fprintf(stderr, "# cannot read %s\n", file);
		return LONG_MAX;
	}
	return v / 1024;
}

uint64_t cg_id(const char *path)
{
	char full[256];
	struct stat st;

	snprintf(full, sizeof(full), CGROOT "%s", path);
	if (stat(full, &st))
		return 0;
	/* On cgroup2 the inode number is the cgroup (kernfs) id. */
	return st.st_ino;
}

int cg_create(const char *path, uint64_t *id)
{
	char full[256];

	snprintf(full, sizeof(full), CGROOT "%s", path);
	if (mkdir(full, 0755) && errno != EEXIST)
		return -errno;
	if (id)
		*id = cg_id(path);
	return 0;
}

int cg_remove(const char *path)
{
	char full[256];

	snprintf(full, sizeof(full), CGROOT "%s", path);
	return rmdir(full) ? -errno : 0;
}

int cg_memory_subtree(const char *path, bool on)
{
	char ctl[256];

	snprintf(ctl, sizeof(ctl), CGROOT "%s%scgroup.subtree_control", path,
		 path[0] ? "/" : "");
	return write_str(ctl, on ? "+memory" : "-memory");
}

int cg_move(const char *path, pid_t pid)
{
	char procs[256];

	snprintf(procs, sizeof(procs), CGROOT "%s%scgroup.procs", path,
		 path[0] ? "/" : "");
	return write_num(procs, pid);
}

pid_t start_in_cgroup(const char *path, int (*fn)(void *arg), void *arg)
{
	pid_t pid = fork();

	if (!pid)
		_exit(cg_move(path, getpid()) ? 255 : fn(arg) & 0xff);
	return pid;
}

int run_in_cgroup(const char *path, int (*fn)(void *arg), void *arg)
{
	pid_t pid = start_in_cgroup(path, fn, arg);
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static bool skip_seventh(size_t page)
{
	return page % HPAGE_NR == 7;
}

int collapse_sparse_region(size_t nr_hpages)
{
	struct region r;
	int ret = 0;

	if (region_map(&r, nr_hpages))
		return ENOMEM;
	region_fill(&r, skip_seventh);
	if (madvise(r.p, r.len, MADV_COLLAPSE))
		ret = errno;
	else if (!range_is_huge(0, r.p, r.len) || !region_check(&r, skip_seventh))
		ret = 250;
	region_unmap(&r);
	return ret;
}

static volatile sig_atomic_t hp_refault;

static void hp_on_usr1(int sig)
{
	hp_refault = 1;
}

/* Map, fill, MADV_HUGEPAGE; on SIGUSR1 drop and refault the first 2 MiB */
static int hp_child_fn(void *arg)
{
	struct hp_child *c = arg;
	struct region r;

	/* Hold none of the test's files: its BPF links must go when it says */
	close_range(3, ~0U, 0);
	signal(SIGUSR1, hp_on_usr1);
	if (region_map(&r, c->nr))
		return 1;
	region_fill(&r, c->skip);
	if (madvise(r.p, r.len, MADV_HUGEPAGE))
		return 2;
	*c->addr = r.p;
	for (;;) {
		pause();
		if (hp_refault) {
			hp_refault = 0;
			/* small pages: no huge page at fault meanwhile */
			madvise(r.p, HPAGE_SZ, MADV_NOHUGEPAGE);
			madvise(r.p, HPAGE_SZ, MADV_DONTNEED);
			for (size_t off = 0; off < HPAGE_SZ; off += PAGE_SZ)
				r.p[off] = 1;
			madvise(r.p, HPAGE_SZ, MADV_HUGEPAGE);
		}
	}
}

int hp_child_start(struct hp_child *c, const char *cg, size_t nr)
{
	return hp_child_start_sparse(c, cg, nr, NULL);
}

int hp_child_start_sparse(struct hp_child *c, const char *cg, size_t nr,
			  bool (*skip)(size_t page))
{
	c->nr = nr;
	c->skip = skip;
	c->addr = mmap(NULL, sizeof(*c->addr), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (c->addr == MAP_FAILED)
		return -1;
	*c->addr = NULL;
	c->pid = start_in_cgroup(cg, hp_child_fn, c);
	for (int i = 0; i < 3000 && c->pid > 0 && !*c->addr; i++)
		usleep(10000);
	return *c->addr ? 0 : -1;
}

int hp_child_huge_pct(struct hp_child *c)
{
	return anon_huge_kb(c->pid, *c->addr, c->nr * HPAGE_SZ) * 100 /
	       (c->nr * HPAGE_SZ / 1024);
}

int hp_child_refault_first(struct hp_child *c)
{
	if (kill(c->pid, SIGUSR1))
		return -1;
	for (int i = 0; i < 300 && range_is_huge(c->pid, *c->addr, HPAGE_SZ); i++)
		usleep(10000);
	return range_is_huge(c->pid, *c->addr, HPAGE_SZ) ? -1 : 0;
}

bool hp_child_huge(struct hp_child *c)
{
	return range_is_huge(c->pid, *c->addr, c->nr * HPAGE_SZ);
}

bool hp_child_wait_huge(struct hp_child *c, int secs)
{
	for (int i = 0; i < secs * 10 && !hp_child_huge(c); i++)
		usleep(100000);
	return hp_child_huge(c);
}

void hp_child_stop(struct hp_child *c)
{
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
		c->pid = 0;
	}
	munmap(c->addr, sizeof(*c->addr));
}

static long long link_info_field(struct bpf_link *link, bool cgroup)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);

	if (bpf_link_get_info_by_fd(bpf_link__fd(link), &info, &len))
		return -1;
	return cgroup ? (long long)info.struct_ops.cgroup_id :
			info.struct_ops.map_id;
}

long long link_cgroup_id(struct bpf_link *link)
{
	return link_info_field(link, true);
}

long long link_map_id(struct bpf_link *link)
{
	return link_info_field(link, false);
}
