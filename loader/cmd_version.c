// SPDX-License-Identifier: GPL-2.0
/* collapsectl version: this tool, its libbpf and what the kernel offers. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>

#include "collapsectl.h"
#include "ops_data.h"

static const char version_usage[] =
"Usage: collapsectl version [--json | --check]   (also: --version, -V)\n"
"\n"
"collapsectl's version, the libbpf it is built with, the running kernel's\n"
"release and the collapse_ext hooks it has (the members of its struct\n"
"collapse_ext_ops: a policy's hook the kernel lacks is left out at load).\n"
"  --json   one object: version, libbpf, kernel, collapse_ext (true when\n"
"           the kernel has it), hooks (an array of names)\n"
"  --check  print nothing; exit 0 when the running kernel has collapse_ext,\n"
"           1 when not (systemd's ExecCondition= skips a unit on 1)\n";

#define MAX_HOOKS 32

int cmd_version(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	char hooks[MAX_HOOKS][OPS_HOOK_LEN];
	struct utsname uts;
	bool json = false, check = false;
	int c, i, n;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'c': check = true; break;
		case 'h': fputs(version_usage, stdout); return 0;
		default: fputs(version_usage, stderr); return 2;
		}
	}
	if (optind != argc || (json && check)) {
		fputs(version_usage, stderr);
		return 2;
	}
	if (check)
		return ops_data_kernel_hooks(hooks, MAX_HOOKS) >= 0 ? 0 : 1;
	if (uname(&uts))
		snprintf(uts.release, sizeof(uts.release), "unknown");
	n = ops_data_kernel_hooks(hooks, MAX_HOOKS);
	if (json) {
		json_writer_t *jw = json_out_new();

		jsonw_start_object(jw);
		jsonw_string_field(jw, "version", COLLAPSECTL_VERSION);
		jsonw_string_field(jw, "libbpf", libbpf_version_string());
		json_string_field(jw, "kernel", uts.release);
		jsonw_bool_field(jw, "collapse_ext", n >= 0);
		jsonw_name(jw, "hooks");
		jsonw_start_array(jw);
		for (i = 0; i < n; i++)
			jsonw_string(jw, hooks[i]);
		jsonw_end_array(jw);
		jsonw_end_object(jw);
		jsonw_destroy(&jw);
		putchar('\n');
		return 0;
	}
	printf("collapsectl %s (libbpf %s)\n", COLLAPSECTL_VERSION,
	       libbpf_version_string());
	if (n == -ENOENT)
		printf("kernel %s: no collapse_ext (CONFIG_COLLAPSE_EXT)\n", uts.release);
	else if (n < 0)
		printf("kernel %s: no BTF to read its hooks from (%s)\n", uts.release,
		       strerror(-n));
	else {
		printf("kernel %s: collapse_ext hooks", uts.release);
		for (i = 0; i < n; i++)
			printf(" %s", hooks[i]);
		putchar('\n');
	}
	return 0;
}
