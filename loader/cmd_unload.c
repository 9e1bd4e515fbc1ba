// SPDX-License-Identifier: GPL-2.0
/* collapsectl unload. */
#include <stdio.h>

#include "collapsectl.h"

static const char unload_usage[] =
"Usage: collapsectl unload NAME\n"
"\n"
"Detach the policy NAME loaded by 'collapsectl load' (remove its pin).\n";

int cmd_unload(int argc, char **argv)
{
	int err = check_args(argc, argv, 1, unload_usage);

	if (err >= 0)
		return err;
	if (!policy_name_ok(argv[1]) || !require_admin() || !kernel_supported())
		return 1;
	if (policy_unpin(argv[1]))
		return 1;
	printf("detached '%s'\n", argv[1]);
	return 0;
}
