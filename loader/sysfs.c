// SPDX-License-Identifier: GPL-2.0
/* collapsectl: the attached policies as the kernel shows them in sysfs. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collapsectl.h"

int read_attr(const char *name, const char *attr, char *buf, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), CE_SYSFS "/%s/%s", name, attr);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	if (!fgets(buf, len, f))
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	fclose(f);
	return 0;
}

bool policy_attached(const char *name)
{
	char buf[32];

	return !read_attr(name, "cgroup_id", buf, sizeof(buf));
}

const char policy_name_rule[] =
	"1 to 31 of [A-Za-z0-9_.-], not '.', '..' or 'policies'";

bool policy_name_valid(const char *name)
{
	size_t len = strlen(name);

	return len > 0 && len <= 31 &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_.-") == len &&
	       strcmp(name, ".") && strcmp(name, "..") && strcmp(name, "policies");
}

bool policy_name_ok(const char *name)
{
	if (policy_name_valid(name))
		return true;
	fail("'%s' is not a policy name: use %s", name, policy_name_rule);
	return false;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/*
 * The counters of policy @name, one file each in CE_SYSFS/NAME/stats/,
 * sorted by name. A failed_<reason> counter that is 0 is left out: a
 * reason shows once it happened.
 */
int read_stats(const char *name, struct stat_line *out, int max)
{
	char path[512], buf[32];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), CE_SYSFS "/%s/stats", name);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (n < max && (d = readdir(dir))) {
		char attr[128];

		if (d->d_name[0] == '.' || strlen(d->d_name) >= sizeof(out[n].key))
			continue;
		snprintf(attr, sizeof(attr), "stats/%s", d->d_name);
		if (read_attr(name, attr, buf, sizeof(buf)))
			continue;
		snprintf(out[n].key, sizeof(out[n].key), "%s", d->d_name);
		out[n].val = strtoull(buf, NULL, 10);
		if (!strncmp(out[n].key, "failed_", 7) && !out[n].val)
			continue;
		n++;
	}
	closedir(dir);
	qsort(out, n, sizeof(*out), by_name);
	return n;
}

/* The attached policies: the directories of CE_SYSFS, sorted by name. */
int list_policies(char names[][32], uint64_t *cgids, int max)
{
	char buf[32];
	struct dirent *d;
	int i, n = 0;
	DIR *dir = opendir(CE_SYSFS);

	if (!dir)
		return -errno;
	while (n < max && (d = readdir(dir))) {
		if (!policy_name_valid(d->d_name) ||
		    read_attr(d->d_name, "cgroup_id", buf, sizeof(buf)))
			continue;
		snprintf(names[n++], 32, "%.31s", d->d_name);
	}
	closedir(dir);
	qsort(names, n, sizeof(names[0]), by_name);
	for (i = 0; cgids && i < n; i++)
		cgids[i] = read_attr(names[i], "cgroup_id", buf, sizeof(buf)) ?
			   0 : strtoull(buf, NULL, 10);
	return n;
}

const char *policy_on_cgroup(uint64_t cgid, char *buf, size_t len)
{
	char names[MAX_POLICIES][32];
	uint64_t ids[MAX_POLICIES];
	int i, n = list_policies(names, ids, MAX_POLICIES);

	for (i = 0; i < n; i++) {
		if (ids[i] == cgid) {
			snprintf(buf, len, "%s", names[i]);
			return buf;
		}
	}
	return NULL;
}

static int snapshot_one(struct policy_snap *s, const char *name)
{
	char buf[32], dir[300];
	int k;

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%.31s", name);
	name = s->name;
	if (read_attr(name, "cgroup_id", buf, sizeof(buf)))
		return -ENOENT;
	s->cgroup_id = strtoull(buf, NULL, 10);
	if (read_attr(name, "cgroup", s->cgroup, sizeof(s->cgroup)))
		return -ENOENT;
	if (!read_attr(name, "attach_time_ns", buf, sizeof(buf)))
		s->attach_ns = strtoull(buf, NULL, 10);
	k = read_stats(name, s->stats, MAX_STATS);
	if (k < 0)
		return k;
	s->nstats = k;
	pin_path(dir, sizeof(dir), name);
	s->pinned = !access(dir, F_OK);
	snprintf(dir, sizeof(dir), CGROUP_ROOT "%s", s->cgroup);
	s->anon = cgroup_memstat(dir, "anon");
	s->anon_thp = cgroup_memstat(dir, "anon_thp");
	return 0;
}

int snapshot_policies(struct policy_snap *out, int max, const char *only)
{
	char names[MAX_POLICIES][32];
	int i, n, got = 0;

	if (only) {
		snprintf(names[0], 32, "%.31s", only);
		n = 1;
	} else {
		n = list_policies(names, NULL, MAX_POLICIES);
		if (n < 0)
			return n;
	}
	for (i = 0; i < n && got < max; i++)
		if (!snapshot_one(&out[got], names[i]))
			got++;
	return got;
}
