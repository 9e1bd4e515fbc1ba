// SPDX-License-Identifier: GPL-2.0
/* collapsectl: errors, sysfs, cgroups, opening and attaching policies. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include <bpf/bpf.h>

#include "collapsectl.h"
#include "ops_data.h"

int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "collapsectl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int check_args(int argc, char **argv, int nargs, const char *usage)
{
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc != nargs + 1) {
		fputs(usage, stderr);
		return 2;
	}
	return -1;
}

bool kernel_supported(void)
{
	if (!access(CE_SYSFS "/policies", R_OK))
		return true;
	fail("this kernel has no collapse_ext (%s is missing): boot a kernel "
	     "built with CONFIG_COLLAPSE_EXT=y and the patches in kernel/patches "
	     "(make kernel)", CE_SYSFS);
	return false;
}

bool require_root(void)
{
	if (geteuid() == 0)
		return true;
	fail("attaching or detaching a policy needs root (CAP_SYS_ADMIN)");
	return false;
}

uint64_t cgroup_path_id(const char *path)
{
	struct statfs sfs;
	struct stat st;

	if (stat(path, &st))
		return fail("cgroup %s: %s", path, strerror(errno)), 0;
	if (!S_ISDIR(st.st_mode))
		return fail("cgroup %s: not a directory", path), 0;
	if (statfs(path, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC)
		return fail("%s is not in a cgroup v2 hierarchy (mount -t cgroup2 "
			    "none %s)", path, CGROUP_ROOT), 0;
	/* On cgroup2 the inode number is the cgroup (kernfs) id. */
	return st.st_ino;
}

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

bool policy_name_ok(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > 31 ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789_.-") != len ||
	    !strcmp(name, ".") || !strcmp(name, "..") ||
	    !strcmp(name, "policies")) {
		fail("'%s' is not a policy name: use 1 to 31 of [A-Za-z0-9_.-], "
		     "not '.', '..' or 'policies'", name);
		return false;
	}
	return true;
}

int read_stats(const char *name, struct stat_line *out, int max)
{
	char path[256];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), CE_SYSFS "/%s/stats", name);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (n < max && fscanf(f, "%63s %llu", out[n].key, &out[n].val) == 2)
		n++;
	fclose(f);
	return n;
}

int list_policies(char names[][32], uint64_t *cgids, int max)
{
	unsigned long long id;
	char name[64];
	int n = 0;
	FILE *f = fopen(CE_SYSFS "/policies", "r");

	if (!f)
		return -errno;
	while (n < max && fscanf(f, "%63s %llu", name, &id) == 2) {
		snprintf(names[n], 32, "%.31s", name);
		if (cgids)
			cgids[n] = id;
		n++;
	}
	fclose(f);
	return n;
}

const char *policy_on_cgroup(uint64_t cgid, char *buf, size_t len)
{
	char names[64][32];
	uint64_t ids[64];
	int i, n = list_policies(names, ids, 64);

	for (i = 0; i < n; i++) {
		if (ids[i] == cgid) {
			snprintf(buf, len, "%s", names[i]);
			return buf;
		}
	}
	return NULL;
}

/* libbpf output, kept to show the tail of a verifier log on failure. */
static char bpf_log[1 << 20];
static size_t bpf_log_len;

static int log_print(enum libbpf_print_level level, const char *fmt,
		     va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	if (bpf_log_len < sizeof(bpf_log) - 1) {
		int n = vsnprintf(bpf_log + bpf_log_len,
				  sizeof(bpf_log) - bpf_log_len, fmt, ap);

		if (n > 0)
			bpf_log_len += n;
		if (bpf_log_len > sizeof(bpf_log) - 1)
			bpf_log_len = sizeof(bpf_log) - 1;
	}
	return 0;
}

/* The last @lines lines of what libbpf printed, indented. */
static void print_log_tail(int lines)
{
	char *p = bpf_log + bpf_log_len;
	int seen = 0;

	while (p > bpf_log && seen <= lines)
		if (*--p == '\n')
			seen++;
	if (*p == '\n')
		p++;
	if (*p)
		fprintf(stderr, "  ... last lines of the libbpf/verifier log:\n");
	while (*p) {
		char *nl = strchr(p, '\n');
		int len = nl ? nl - p : (int)strlen(p);

		fprintf(stderr, "  | %.*s\n", len, p);
		p += len + (nl ? 1 : 0);
	}
}

int policy_open_load(struct policy_obj *po, const char *file, uint64_t cgid,
		     const char *name)
{
	char msg[128];
	int err;

	memset(po, 0, sizeof(*po));
	if (access(file, R_OK))
		return fail("%s: %s", file, strerror(errno));
	bpf_log_len = 0;
	bpf_log[0] = 0;
	libbpf_set_print(log_print);
	po->obj = bpf_object__open_file(file, NULL);
	if (!po->obj) {
		libbpf_strerror(errno, msg, sizeof(msg));
		print_log_tail(5);
		return fail("%s: not a BPF object libbpf can open (%s)", file, msg);
	}
	po->map = ops_data_find_map(po->obj);
	if (!po->map) {
		policy_close(po);
		return fail("%s: no struct collapse_ext_ops map in this object "
			    "(declare one with COLLAPSE_EXT_OPS() from "
			    "collapse_ext.bpf.h)", file);
	}
	err = ops_data_set_cgroup_id(po->obj, po->map, cgid);
	if (!err && name)
		err = ops_data_set_name(po->obj, po->map, name);
	if (!err)
		err = ops_data_get_name(po->obj, po->map, po->name,
					sizeof(po->name));
	if (err) {
		policy_close(po);
		return fail("%s: cannot set the policy's %s: %s", file,
			    name ? "name/cgroup" : "cgroup", strerror(-err));
	}
	if (!po->name[0]) {
		policy_close(po);
		return fail("%s: the policy has an empty name (use --name)", file);
	}
	err = bpf_object__load(po->obj);
	if (err) {
		print_log_tail(20);
		policy_close(po);
		if (err == -ENOENT || err == -ESRCH)
			return fail("%s: the kernel does not know struct "
				    "collapse_ext_ops: boot a collapse_ext kernel",
				    file);
		libbpf_strerror(err, msg, sizeof(msg));
		return fail("%s: load failed: %s (the verifier log tail is "
			    "above)", file, msg);
	}
	libbpf_set_print(NULL);
	return 0;
}

struct bpf_link *policy_attach(struct policy_obj *po, uint64_t cgid)
{
	struct bpf_link *link = bpf_map__attach_struct_ops(po->map);
	char holder[32];
	int err = errno;

	if (link)
		return link;
	switch (err) {
	case EBUSY:
		if (!policy_on_cgroup(cgid, holder, sizeof(holder)))
			strcpy(holder, "?");
		fail("cgroup id %llu already has a policy, '%s': unload it or "
		     "swap it (collapsectl swap %s FILE)",
		     (unsigned long long)cgid, holder, holder);
		break;
	case EEXIST:
		fail("a policy named '%s' is already attached: pick another "
		     "with --name", po->name);
		break;
	case ENOENT:
		fail("cgroup id %llu does not exist (any more)",
		     (unsigned long long)cgid);
		break;
	case EPERM:
		fail("attaching '%s' needs CAP_SYS_ADMIN", po->name);
		break;
	case EINVAL:
		fail("the kernel refused '%s': flags must be 0 and the name "
		     "non-empty, and no hook may be sleepable", po->name);
		break;
	default:
		fail("attaching '%s' failed: %s (its init() may have refused)",
		     po->name, strerror(err));
	}
	errno = err;
	return NULL;
}

void policy_close(struct policy_obj *po)
{
	bpf_object__close(po->obj);
	po->obj = NULL;
	po->map = NULL;
	libbpf_set_print(NULL);
}
