// SPDX-License-Identifier: GPL-2.0
/* collapsectl list, stats. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "collapsectl.h"

#define MAX_POLICIES	64
#define MAX_STATS	96

static const char list_usage[] =
"Usage: collapsectl list\n"
"\n"
"Every attached collapse_ext policy: name, cgroup path and id, time since\n"
"attach, the struct_ops map and link ids, and whether collapsectl pinned it.\n";

/* Byte offset of member @m in struct @type of the kernel's BTF, or -1. */
static long btf_member_offset(const struct btf *btf, const char *type,
			      const char *m)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_member *mem;
	int i;

	if (!t)
		return -1;
	for (i = 0, mem = btf_members(t); i < btf_vlen(t); i++, mem++)
		if (!strcmp(btf__name_by_offset(btf, mem->name_off), m))
			return btf_member_bit_offset(t, i) / 8;
	return -1;
}

/*
 * IDs of the struct_ops link and map of policy @name: the policy's name is
 * in the map's value (struct bpf_struct_ops_collapse_ext_ops), read with
 * the offsets of the kernel's BTF.
 */
static void find_ids(const char *name, char *out, size_t len)
{
	static long name_off = -2;
	__u32 id = 0;
	size_t n = 0;

	out[0] = 0;
	if (name_off == -2) {
		struct btf *vmlinux = btf__load_vmlinux_btf();
		long data, field;

		name_off = -1;
		if (vmlinux) {
			data = btf_member_offset(vmlinux, "bpf_struct_ops_collapse_ext_ops",
						 "data");
			field = btf_member_offset(vmlinux, "collapse_ext_ops", "name");
			if (data >= 0 && field >= 0)
				name_off = data + field;
			btf__free(vmlinux);
		}
	}
	while (name_off >= 0 && !bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info = {};
		struct bpf_map_info minfo = {};
		__u32 ilen = sizeof(info), mlen = sizeof(minfo), zero = 0;
		int fd = bpf_link_get_fd_by_id(id), mfd;
		char *value;

		if (fd < 0)
			continue;
		if (bpf_link_get_info_by_fd(fd, &info, &ilen) ||
		    info.type != BPF_LINK_TYPE_STRUCT_OPS) {
			close(fd);
			continue;
		}
		close(fd);
		mfd = bpf_map_get_fd_by_id(info.struct_ops.map_id);
		if (mfd < 0)
			continue;
		if (!bpf_map_get_info_by_fd(mfd, &minfo, &mlen) &&
		    minfo.value_size > name_off + strlen(name) &&
		    (value = calloc(1, minfo.value_size))) {
			if (!bpf_map_lookup_elem(mfd, &zero, value) &&
			    !strcmp(value + name_off, name))
				n += snprintf(out + n, len - n, "%smap %u link %u",
					      n ? ", " : "",
					      info.struct_ops.map_id, id);
			free(value);
		}
		close(mfd);
		if (n >= len)
			break;
	}
	if (!out[0])
		snprintf(out, len, "-");
}

int cmd_list(int argc, char **argv)
{
	char names[MAX_POLICIES][32], cg[256], t[32], ids[128], pin[256];
	struct timespec now;
	int i, n;

	n = check_args(argc, argv, 0, list_usage);
	if (n >= 0)
		return n;
	if (!kernel_supported())
		return 1;
	n = list_policies(names, NULL, MAX_POLICIES);
	if (n < 0)
		return fail("cannot read %s/policies: %s", CE_SYSFS, strerror(-n));
	if (!n) {
		printf("no collapse_ext policy attached\n");
		return 0;
	}
	clock_gettime(CLOCK_BOOTTIME, &now);
	printf("%-20s %-28s %-8s %-10s %-22s %s\n", "NAME", "CGROUP", "ID",
	       "ATTACHED", "IDS", "PINNED");
	for (i = 0; i < n; i++) {
		char id[32];
		double secs;

		if (read_attr(names[i], "cgroup", cg, sizeof(cg)))
			snprintf(cg, sizeof(cg), "?");
		if (read_attr(names[i], "cgroup_id", id, sizeof(id)))
			snprintf(id, sizeof(id), "?");
		if (read_attr(names[i], "attach_time_ns", t, sizeof(t)))
			t[0] = 0;
		secs = now.tv_sec + now.tv_nsec / 1e9 - strtoull(t, NULL, 10) / 1e9;
		find_ids(names[i], ids, sizeof(ids));
		snprintf(pin, sizeof(pin), PIN_DIR "/%s", names[i]);
		printf("%-20s %-28s %-8s %8.0fs   %-22s %s\n", names[i], cg, id,
		       secs, ids, access(pin, F_OK) ? "no" : "yes");
	}
	return 0;
}

void print_stats_table(FILE *f, const char *name, const char *name2)
{
	struct stat_line a[MAX_STATS], b[MAX_STATS];
	int na = read_stats(name, a, MAX_STATS), nb = 0, i, j;

	if (na < 0) {
		fprintf(f, "  (no counters for '%s')\n", name);
		return;
	}
	if (name2) {
		nb = read_stats(name2, b, MAX_STATS);
		fprintf(f, "  %-32s %14s %14s %14s\n", "counter", name, name2,
			"difference");
	}
	for (i = 0; i < na; i++) {
		unsigned long long other = 0;

		if (!name2) {
			fprintf(f, "  %-32s %14llu\n", a[i].key, a[i].val);
			continue;
		}
		for (j = 0; j < nb; j++)
			if (!strcmp(a[i].key, b[j].key))
				other = b[j].val;
		fprintf(f, "  %-32s %14llu %14llu %+14lld\n", a[i].key, a[i].val,
			other, (long long)(other - a[i].val));
	}
	/* failed_* lines only present on the second policy */
	for (j = 0; j < nb; j++) {
		for (i = 0; i < na; i++)
			if (!strcmp(a[i].key, b[j].key))
				break;
		if (i == na)
			fprintf(f, "  %-32s %14d %14llu %+14lld\n", b[j].key, 0,
				b[j].val, (long long)b[j].val);
	}
}

static const char stats_usage[] =
"Usage: collapsectl stats [NAME] [--json] [--watch SECONDS]\n"
"\n"
"The kernel's counters of policy NAME (default: every attached policy).\n"
"  --json           one JSON object: {\"NAME\": {\"counter\": value, ...}, ...}\n"
"  --watch SECONDS  print again every SECONDS, with the rate per second\n";

static void print_json(char names[][32], int n)
{
	struct stat_line s[MAX_STATS];
	int i, j, k;

	printf("{");
	for (i = 0; i < n; i++) {
		k = read_stats(names[i], s, MAX_STATS);
		printf("%s\"%s\": {", i ? ", " : "", names[i]);
		for (j = 0; j < k; j++)
			printf("%s\"%s\": %llu", j ? ", " : "", s[j].key, s[j].val);
		printf("}");
	}
	printf("}\n");
}

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "watch", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	char names[MAX_POLICIES][32];
	struct stat_line prev[MAX_POLICIES][MAX_STATS];
	int nprev[MAX_POLICIES] = {};
	bool json = false;
	double watch = 0;
	int c, i, j, n;

	while ((c = getopt_long(argc, argv, "jw:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'w':
			watch = strtod(optarg, NULL);
			if (watch <= 0)
				return fail("--watch needs a positive number of seconds");
			break;
		case 'h': fputs(stats_usage, stdout); return 0;
		default: fputs(stats_usage, stderr); return 2;
		}
	}
	if (argc - optind > 1) {
		fputs(stats_usage, stderr);
		return 2;
	}
	if (!kernel_supported())
		return 1;
	if (optind < argc) {
		char buf[32];

		if (!policy_name_ok(argv[optind]))
			return 1;
		if (read_attr(argv[optind], "cgroup_id", buf, sizeof(buf)))
			return fail("no policy named '%s' (see collapsectl list)",
				    argv[optind]);
		snprintf(names[0], 32, "%s", argv[optind]);
		n = 1;
	} else {
		n = list_policies(names, NULL, MAX_POLICIES);
		if (n < 0)
			return fail("cannot read %s/policies: %s", CE_SYSFS,
				    strerror(-n));
	}
	for (;;) {
		if (json) {
			print_json(names, n);
		} else {
			if (!n)
				printf("no collapse_ext policy attached\n");
			for (i = 0; i < n; i++) {
				struct stat_line s[MAX_STATS];
				int k = read_stats(names[i], s, MAX_STATS);

				printf("%s:\n", names[i]);
				for (j = 0; j < k; j++) {
					printf("  %-32s %14llu", s[j].key, s[j].val);
					if (watch && j < nprev[i] &&
					    !strcmp(prev[i][j].key, s[j].key))
						printf("  %10.1f/s", (s[j].val -
						       prev[i][j].val) / watch);
					printf("\n");
				}
				memcpy(prev[i], s, sizeof(s));
				nprev[i] = k < 0 ? 0 : k;
			}
		}
		fflush(stdout);
		if (!watch)
			return 0;
		usleep((useconds_t)(watch * 1e6));
	}
}
