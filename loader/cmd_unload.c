// SPDX-License-Identifier: GPL-2.0
/* collapsectl unload. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "collapsectl.h"

static const char unload_usage[] =
"Usage: collapsectl unload NAME\n"
"       collapsectl unload --all\n"
"\n"
"Detach the policy NAME loaded by 'collapsectl load' (remove its pin).\n"
"--all detaches every policy pinned in " PIN_DIR " (what the package's\n"
"removal runs: nothing could manage them afterwards); no pin is not an error.\n";

/* Every pin of PIN_DIR; 0 when none is left. */
static int unload_all(void)
{
	struct dirent *de;
	int err = 0, n = 0;
	DIR *d;

	d = opendir(PIN_DIR);
	if (!d) {
		if (errno == ENOENT)
			return 0;
		return fail("cannot read %s: %s", PIN_DIR, strerror(errno));
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !policy_name_ok(de->d_name))
			continue;
		if (policy_unpin(de->d_name)) {
			err = 1;
			continue;
		}
		printf("detached '%s'\n", de->d_name);
		n++;
	}
	closedir(d);
	if (!n && !err)
		printf("no policy pinned in %s\n", PIN_DIR);
	return err;
}

int cmd_unload(int argc, char **argv)
{
	int err = check_args(argc, argv, 1, unload_usage);

	if (err >= 0)
		return err;
	if (!strcmp(argv[1], "--all")) {
		if (!require_admin() || !kernel_supported())
			return 1;
		return unload_all();
	}
	if (!policy_name_ok(argv[1]) || !require_admin() || !kernel_supported())
		return 1;
	if (policy_unpin(argv[1]))
		return 1;
	printf("detached '%s'\n", argv[1]);
	return 0;
}
