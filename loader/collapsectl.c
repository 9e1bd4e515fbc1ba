// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl: load, inspect, swap and compare collapse_ext policies, and
 * collapse another process's memory.
 */
#include <stdio.h>
#include <string.h>

#include "collapsectl.h"

static const char usage[] =
"Usage: collapsectl COMMAND [ARGS]\n"
"\n"
"Commands:\n"
"  load FILE.bpf.o [--cgroup PATH] [--name NAME] [--foreground]\n"
"                          attach a policy (pinned under " PIN_DIR ")\n"
"  list                    attached policies, their cgroups and ids\n"
"  stats [NAME] [--json] [--watch S]\n"
"                          the kernel's counters of each policy\n"
"  swap NAME FILE.bpf.o    replace a running policy atomically\n"
"  unload NAME             detach a policy loaded by collapsectl\n"
"  collapse --pid PID [--limits] [--defrag] [START-END | --all]\n"
"                          process_madvise(MADV_COLLAPSE) on another process\n"
"  ab A.bpf.o B.bpf.o [--duration S] -- COMMAND...\n"
"                          A/B-test two policies on two sibling cgroups\n"
"\n"
"collapsectl COMMAND --help describes a command; --version prints the version.\n";

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{ "load", cmd_load },
	{ "list", cmd_list },
	{ "stats", cmd_stats },
	{ "swap", cmd_swap },
	{ "unload", cmd_unload },
	{ "collapse", cmd_collapse },
	{ "ab", cmd_ab },
};

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("collapsectl %s (libbpf %s)\n", COLLAPSECTL_VERSION,
		       libbpf_version_string());
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fail("unknown command '%s' (see collapsectl --help)", argv[1]);
	return 2;
}
