// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl: the attached policies, as the kernel shows them in the
 * fdinfo of the BPF links that attached them. A policy's link is the
 * struct_ops link whose fdinfo has a "policy:" line; its counters are the
 * lines after it, its cgroup the link's cgroup_id. Walking the links
 * (BPF_LINK_GET_NEXT_ID, as bpftool link show does) finds every policy,
 * pinned by collapsectl or attached by anyone else.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "collapsectl.h"

/* What one link's fdinfo says of the policy it attached. */
struct ce_link {
	char name[32];
	uint32_t link_id, map_id;
	uint64_t cgroup_id;		/* 0: the root's (no cgroup) */
	uint64_t attach_ns;
	int nstats;
	struct stat_line stats[MAX_STATS];
};

/*
 * Read the fdinfo of link @fd into @l: 0 when the link attaches a
 * collapse_ext policy, -ENOENT when not (another struct_ops or link type,
 * or detached), -errno when it cannot be read.
 */
static int link_read(int fd, struct ce_link *l)
{
	char path[64], line[256];
	bool ours = false;
	FILE *f;

	memset(l, 0, sizeof(*l));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *tab = strchr(line, '\t');
		unsigned long long v;

		if (!tab || tab == line || tab[-1] != ':')
			continue;
		tab[-1] = 0;
		tab[strcspn(tab, "\n")] = 0;
		if (!strcmp(line, "policy")) {
			snprintf(l->name, sizeof(l->name), "%.31s", tab + 1);
			ours = true;
			continue;
		}
		v = strtoull(tab + 1, NULL, 10);
		if (!strcmp(line, "link_id"))
			l->link_id = v;
		else if (!strcmp(line, "map_id"))
			l->map_id = v;
		else if (!strcmp(line, "cgroup_id"))
			l->cgroup_id = v;
		else if (!ours)
			continue;	/* the link's own lines */
		else if (!strcmp(line, "attach_time_ns"))
			l->attach_ns = v;
		else if (l->nstats < MAX_STATS &&
			 strlen(line) < sizeof(l->stats[0].key)) {
			struct stat_line *s = &l->stats[l->nstats++];

			snprintf(s->key, sizeof(s->key), "%s", line);
			s->val = v;
		}
	}
	fclose(f);
	return ours ? 0 : -ENOENT;
}

/*
 * Every attached policy's link, in link id order: @fn(link, @arg) for
 * each until it returns nonzero, which is returned. 0 after the last,
 * -errno when the links cannot be walked (-EPERM: no CAP_SYS_ADMIN).
 */
static int for_each_policy(int (*fn)(const struct ce_link *, void *), void *arg)
{
	struct ce_link *l = malloc(sizeof(*l));
	__u32 id = 0;
	int ret = 0;

	if (!l)
		return -ENOMEM;
	while (!ret) {
		int fd;

		if (bpf_link_get_next_id(id, &id)) {
			ret = errno == ENOENT ? 0 : -errno;
			break;
		}
		fd = bpf_link_get_fd_by_id(id);
		if (fd < 0) {
			if (errno == ENOENT)	/* gone meanwhile */
				continue;
			ret = -errno;
			break;
		}
		if (!link_read(fd, l))
			ret = fn(l, arg);
		close(fd);
	}
	free(l);
	return ret;
}

static int find_one(const struct ce_link *l, void *arg)
{
	struct ce_link *want = arg;

	if (strcmp(l->name, want->name))
		return 0;
	*want = *l;
	return 1;
}

/* The link of policy @name: 0, -ENOENT when none is attached, -errno. */
static int policy_link(const char *name, struct ce_link *l)
{
	int ret;

	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%.31s", name);
	ret = for_each_policy(find_one, l);
	return ret == 1 ? 0 : ret ? ret : -ENOENT;
}

int read_attr(const char *name, const char *attr, char *buf, size_t len)
{
	struct ce_link *l = malloc(sizeof(*l));
	int ret, i;

	if (!l)
		return -ENOMEM;
	ret = policy_link(name, l);
	if (ret)
		goto out;
	if (!strcmp(attr, "cgroup_id"))
		snprintf(buf, len, "%llu", (unsigned long long)l->cgroup_id);
	else if (!strcmp(attr, "cgroup"))
		ret = cgroup_id_path(l->cgroup_id, buf, len);
	else if (!strcmp(attr, "attach_time_ns"))
		snprintf(buf, len, "%llu", (unsigned long long)l->attach_ns);
	else if (!strcmp(attr, "link_id"))
		snprintf(buf, len, "%u", l->link_id);
	else {
		ret = -ENOENT;
		for (i = 0; i < l->nstats; i++) {
			if (strcmp(l->stats[i].key, attr))
				continue;
			snprintf(buf, len, "%llu", l->stats[i].val);
			ret = 0;
		}
	}
out:
	free(l);
	return ret;
}

uint32_t link_fd_id(int fd)
{
	struct bpf_link_info info = {};
	uint32_t len = sizeof(info);

	return bpf_link_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

uint64_t pinned_link(const char *name, uint64_t *map_id)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	char pin[256];
	int fd;

	*map_id = 0;
	pin_path(pin, sizeof(pin), name);
	fd = bpf_obj_get(pin);
	if (fd < 0)
		return 0;
	if (bpf_link_get_info_by_fd(fd, &info, &len))
		info.id = 0;
	else if (info.type == BPF_LINK_TYPE_STRUCT_OPS)
		*map_id = info.struct_ops.map_id;
	close(fd);
	return info.id;
}

bool policy_attached(const char *name)
{
	char buf[32];

	return !read_attr(name, "link_id", buf, sizeof(buf));
}

const char policy_name_rule[] = "1 to 31 of [A-Za-z0-9_.-], not '.' or '..'";

bool policy_name_valid(const char *name)
{
	size_t len = strlen(name);

	return len > 0 && len <= 31 &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_.-") == len &&
	       strcmp(name, ".") && strcmp(name, "..");
}

bool policy_name_ok(const char *name)
{
	if (policy_name_valid(name))
		return true;
	fail("'%s' is not a policy name: use %s", name, policy_name_rule);
	return false;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct stat_line *)a)->key,
		      ((const struct stat_line *)b)->key);
}

/* The counters of @l, sorted by name; with @quiet, not those stat_quiet() */
static int shown_stats(const struct ce_link *l, struct stat_line *out, int max,
		       bool quiet)
{
	int i, n = 0;

	for (i = 0; i < l->nstats && n < max; i++) {
		if (quiet && stat_quiet(&l->stats[i]))
			continue;
		out[n++] = l->stats[i];
	}
	qsort(out, n, sizeof(*out), by_key);
	return n;
}

int read_stats(const char *name, struct stat_line *out, int max)
{
	struct ce_link *l = malloc(sizeof(*l));
	int ret;

	if (!l)
		return -ENOMEM;
	ret = policy_link(name, l);
	if (!ret)
		ret = shown_stats(l, out, max, true);
	free(l);
	return ret;
}

struct snap_walk {
	struct policy_snap *out;
	int max, n;
	const char *only;
};

static int snap_one(const struct ce_link *l, void *arg)
{
	struct snap_walk *w = arg;
	struct policy_snap *s;
	char dir[300];

	if (w->only && strcmp(w->only, l->name))
		return 0;
	if (w->n >= w->max)
		return 1;
	s = &w->out[w->n++];
	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "%s", l->name);
	s->link_id = l->link_id;
	s->map_id = l->map_id;
	s->cgroup_id = l->cgroup_id;
	s->attach_ns = l->attach_ns;
	if (cgroup_id_path(l->cgroup_id, s->cgroup, sizeof(s->cgroup)))
		snprintf(s->cgroup, sizeof(s->cgroup), "?");
	s->nstats = shown_stats(l, s->stats, MAX_STATS, false);
	pin_path(dir, sizeof(dir), s->name);
	s->pinned = !access(dir, F_OK);
	snprintf(dir, sizeof(dir), CGROUP_ROOT "%s", s->cgroup);
	s->anon = cgroup_memstat(dir, "anon");
	s->anon_thp = cgroup_memstat(dir, "anon_thp");
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct policy_snap *)a)->name,
		      ((const struct policy_snap *)b)->name);
}

int snapshot_policies(struct policy_snap *out, int max, const char *only)
{
	struct snap_walk w = { .out = out, .max = max, .only = only };
	int ret = for_each_policy(snap_one, &w);

	if (ret < 0)
		return ret;
	qsort(out, w.n, sizeof(*out), by_name);
	return w.n;
}

struct cgroup_walk {
	uint64_t cgid;
	char *buf;
	size_t len;
};

static int on_cgroup(const struct ce_link *l, void *arg)
{
	struct cgroup_walk *w = arg;

	if ((l->cgroup_id ?: ROOT_CGROUP_ID) != w->cgid)
		return 0;
	snprintf(w->buf, w->len, "%s", l->name);
	return 1;
}

const char *policy_on_cgroup(uint64_t cgid, char *buf, size_t len)
{
	struct cgroup_walk w = { .cgid = cgid, .buf = buf, .len = len };

	return for_each_policy(on_cgroup, &w) == 1 ? buf : NULL;
}

const char *links_error(int err)
{
	if (err == -EPERM)
		return "reading the policies' BPF links needs CAP_SYS_ADMIN: "
		       "run as root";
	return strerror(-err);
}
