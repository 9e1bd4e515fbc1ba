// SPDX-License-Identifier: GPL-2.0
/* collapsectl swap. */
#include <stdio.h>

#include "collapsectl.h"

static const char swap_usage[] =
"Usage: collapsectl swap NAME FILE.bpf.o\n"
"\n"
"Replace the running policy NAME by the one in FILE, atomically (BPF link\n"
"update): collapse never sees the default in between. The new policy takes\n"
"NAME's name, cgroup and counters; its 'swaps' counter goes up by one.\n";

int cmd_swap(int argc, char **argv)
{
	int err = check_args(argc, argv, 2, swap_usage);

	if (err >= 0)
		return err;
	if (!policy_name_ok(argv[1]) || !require_root() || !kernel_supported())
		return 1;
	if (policy_swap(argv[1], argv[2]))
		return 1;
	printf("swapped '%s' for the policy in %s\n", argv[1], argv[2]);
	return 0;
}
