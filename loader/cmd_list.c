// SPDX-License-Identifier: GPL-2.0
/* collapsectl list. */
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

static const char list_usage[] =
"Usage: collapsectl list [--json | -j]\n"
"\n"
"Every attached collapse_ext policy: name, cgroup path and id, time since\n"
"attach, the struct_ops map and link ids, and whether collapsectl pinned it.\n"
"  --json   a JSON array, one object per policy: name, cgroup, cgroup_id,\n"
"           attach_time_ns (CLOCK_BOOTTIME, as the kernel and stats --json\n"
"           give it), ids [{map, link}], pinned\n";

/* Byte offset of member @m in struct @type of the kernel's BTF, or -1. */
static long btf_member_offset(const struct btf *btf, const char *type,
			      const char *m)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_member *mem;
	unsigned int i;	/* btf_vlen() is __u16 in 6.12's libbpf, __u32 in 7.3's */

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
struct ids {
	__u32 map, link;
};

static int find_ids(const char *name, struct ids *out, int max)
{
	static long name_off = -2;
	__u32 id = 0;
	int n = 0;

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
			    !strcmp(value + name_off, name)) {
				out[n].map = info.struct_ops.map_id;
				out[n++].link = id;
			}
			free(value);
		}
		close(mfd);
		if (n >= max)
			break;
	}
	return n;
}

static void list_json(const struct policy_snap *s, int n)
{
	json_writer_t *jw = json_out_new();
	struct ids ids[8];
	int i, j, k;

	jsonw_start_array(jw);
	for (i = 0; i < n; i++) {
		jsonw_start_object(jw);
		json_string_field(jw, "name", s[i].name);
		json_string_field(jw, "cgroup", s[i].cgroup);
		jsonw_uint_field(jw, "cgroup_id", s[i].cgroup_id);
		/* the kernel's fact, named as it and stats --json name it */
		jsonw_uint_field(jw, "attach_time_ns", s[i].attach_ns);
		jsonw_name(jw, "ids");
		jsonw_start_array(jw);
		k = find_ids(s[i].name, ids, 8);
		for (j = 0; j < k; j++) {
			jsonw_start_object(jw);
			jsonw_uint_field(jw, "map", ids[j].map);
			jsonw_uint_field(jw, "link", ids[j].link);
			jsonw_end_object(jw);
		}
		jsonw_end_array(jw);
		jsonw_bool_field(jw, "pinned", s[i].pinned);
		jsonw_end_object(jw);
	}
	jsonw_end_array(jw);
	jsonw_destroy(&jw);
}

int cmd_list(int argc, char **argv)
{
	static struct policy_snap s[MAX_POLICIES];
	struct timespec ts;
	struct ids ids[8];
	char idbuf[128], id[32];
	double now;
	bool json = false;
	int i, j, k, n;

	if (argc == 2 && (!strcmp(argv[1], "--json") || !strcmp(argv[1], "-j"))) {
		json = true;
		argc--;
	}
	n = check_args(argc, argv, 0, list_usage);
	if (n >= 0)
		return n;
	if (!kernel_supported())
		return 1;
	n = snapshot_policies(s, MAX_POLICIES, NULL);
	if (n < 0)
		return fail("cannot read %s: %s", CE_SYSFS, strerror(-n));
	clock_gettime(CLOCK_BOOTTIME, &ts);
	now = ts.tv_sec + ts.tv_nsec / 1e9;
	if (json) {
		list_json(s, n);
		return 0;
	}
	if (!n) {
		printf("no collapse_ext policy attached\n");
		return 0;
	}
	printf("%-20s %-28s %-8s %-10s %-22s %s\n", "NAME", "CGROUP", "ID",
	       "ATTACHED", "IDS", "PINNED");
	for (i = 0; i < n; i++) {
		size_t len = 0;

		k = find_ids(s[i].name, ids, 8);
		idbuf[0] = 0;
		for (j = 0; j < k && len < sizeof(idbuf); j++)
			len += snprintf(idbuf + len, sizeof(idbuf) - len,
					"%smap %u link %u", j ? ", " : "",
					ids[j].map, ids[j].link);
		snprintf(id, sizeof(id), "%llu", (unsigned long long)s[i].cgroup_id);
		printf("%-20s %-28s %-8s %8.0fs   %-22s %s\n", s[i].name,
		       s[i].cgroup, id, now - s[i].attach_ns / 1e9,
		       k ? idbuf : "-", s[i].pinned ? "yes" : "no");
	}
	return 0;
}
