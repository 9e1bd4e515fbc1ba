// SPDX-License-Identifier: GPL-2.0
/* collapsectl swap. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>

#include "collapsectl.h"

static const char swap_usage[] =
"Usage: collapsectl swap NAME FILE.bpf.o|POLICY [--set VAR=VALUE]...\n"
"\n"
"Replace the running policy NAME by the one in FILE (or the installed\n"
"POLICY, as load takes it), atomically (BPF link\n"
"update): collapse never sees the default in between. The new policy takes\n"
"NAME's name, cgroup and counters; its 'swaps' counter goes up by one.\n"
"\n"
"  --set VAR=VALUE a knob of the new policy, as for load; repeatable\n";

int cmd_swap(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "set", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct knobs knobs = {};
	char file[PATH_MAX];
	int c;

	while ((c = getopt_long(argc, argv, "s:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (knobs_option(&knobs, optarg))
				return 2;
			break;
		case 'h': fputs(swap_usage, stdout); return 0;
		default: fputs(swap_usage, stderr); return 2;
		}
	}
	if (argc - optind != 2) {
		fputs(swap_usage, stderr);
		return 2;
	}
	argv += optind - 1;
	if (!policy_name_ok(argv[1]) || !require_admin() || !kernel_supported() ||
	    policy_object_arg(argv[2], file))
		return 1;
	if (policy_swap(argv[1], file, &knobs))
		return 1;
	printf("swapped '%s' for the policy in %s", argv[1], file);
	knobs_print(stdout, &knobs);
	putchar('\n');
	return 0;
}
