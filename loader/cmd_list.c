// SPDX-License-Identifier: GPL-2.0
/* collapsectl list. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collapsectl.h"

static const char list_usage[] =
"Usage: collapsectl list [--json | -j]\n"
"\n"
"Every attached collapse_ext policy: name, cgroup path and id, time since\n"
"attach, the struct_ops map and link ids, and whether collapsectl pinned it.\n"
"  --json   a JSON array, one object per policy: name, cgroup, cgroup_id,\n"
"           attach_time_ns (CLOCK_BOOTTIME, as the kernel and stats --json\n"
"           give it), ids [{map, link}], pinned\n";

static void list_json(const struct policy_snap *s, int n)
{
	json_writer_t *jw = json_out_new();
	int i;

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
		jsonw_start_object(jw);
		jsonw_uint_field(jw, "map", s[i].map_id);
		jsonw_uint_field(jw, "link", s[i].link_id);
		jsonw_end_object(jw);
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
	char idbuf[64], id[32];
	double now;
	bool json = false;
	int i, n;

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
		return fail("cannot list the policies: %s", links_error(n));
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
		snprintf(idbuf, sizeof(idbuf), "map %u link %u", s[i].map_id,
			 s[i].link_id);
		snprintf(id, sizeof(id), "%llu", (unsigned long long)s[i].cgroup_id);
		printf("%-20s %-28s %-8s %8.0fs   %-22s %s\n", s[i].name,
		       s[i].cgroup, id, now - s[i].attach_ns / 1e9,
		       idbuf, s[i].pinned ? "yes" : "no");
	}
	return 0;
}
