// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl: load, inspect, swap and compare collapse_ext policies, and
 * collapse another process's memory. One file per command (cmd_*.c), as
 * bpftool does; this one dispatches and holds the checks they all make.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "collapsectl.h"
#include "ops_data.h"

static const char usage[] =
"Usage: collapsectl [OPTIONS] COMMAND [ARGS]\n"
"\n"
"Options (before the command, as bpftool's):\n"
"  -j, --json     JSON output (apply, info, list, stats, status, version)\n"
"  -p, --pretty   indented JSON (implies --json)\n"
"  -d, --debug    libbpf's and the verifier's messages on stderr\n"
"  -V, --version  the version command\n"
"\n"
"Commands:\n"
"  load FILE.bpf.o|POLICY [--cgroup PATH|UNIT] [--name NAME] [--foreground]\n"
"                          attach a policy (pinned under " PIN_DIR ")\n"
"  unload NAME | --all     detach a policy loaded by collapsectl, or all\n"
"  swap NAME FILE.bpf.o|POLICY\n"
"                          replace a running policy atomically\n"
"  apply [--json] [--check [--offline] | --follow] [--strict] FILE\n"
"                          make the loaded policies those FILE lists\n"
"                          (/etc/collapse_ext/policies.conf); --check only\n"
"                          verifies it (--offline: without root or kernel),\n"
"                          --follow keeps it so as cgroups come and go (the\n"
"                          service); apply --unload detaches what it loaded\n"
"  status [--json]         what apply keeps and what is attached now, with\n"
"                          owner, object, knobs and apply's last word\n"
"  list [--json | -j]      attached policies, their cgroups and ids\n"
"  info [--json] [FILE.bpf.o | POLICY]...\n"
"                          what a policy does: its hooks and knobs, from the\n"
"                          object alone (every installed one without FILE)\n"
"  stats [NAME] [--json | --openmetrics] [--textfile DIR] [--watch S]\n"
"                          the kernel's counters of each policy\n"
"  collapse --pid PID [--limits] [--defrag] [START-END | --all]\n"
"                          process_madvise(MADV_COLLAPSE) on another process\n"
"  ab A.bpf.o B.bpf.o [--reps N] [--duration S] -- COMMAND...\n"
"                          A/B-test two policies on two cgroups\n"
"  version [--json]        collapsectl's version and the kernel's hooks\n"
"\n"
"collapsectl COMMAND --help describes a command; --version (-V) is version.\n";

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	bool json;	/* takes --json */
} commands[] = {
	{ "load", cmd_load, false },
	{ "unload", cmd_unload, false },
	{ "swap", cmd_swap, false },
	{ "apply", cmd_apply, true },
	{ "list", cmd_list, true },
	{ "info", cmd_info, true },
	{ "status", cmd_status, true },
	{ "stats", cmd_stats, true },
	{ "collapse", cmd_collapse, false },
	{ "ab", cmd_ab, false },
	{ "version", cmd_version, true },
};

bool verbose;

const char *journal_prio(int prio)
{
	static const char * const prefix[] = {
		"<0>", "<1>", "<2>", "<3>", "<4>", "<5>", "<6>", "<7>",
	};
	static int to_journal = -1;

	if (to_journal < 0) {
		const char *env = getenv("JOURNAL_STREAM");
		unsigned long long dev, ino;
		struct stat st;

		/* systemd(1): stderr is the journal's stream when they match */
		to_journal = env && sscanf(env, "%llu:%llu", &dev, &ino) == 2 &&
			     !fstat(STDERR_FILENO, &st) &&
			     st.st_dev == dev && st.st_ino == ino;
	}
	return to_journal && prio >= 0 && prio < 8 ? prefix[prio] : "";
}

int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%scollapsectl: ", journal_prio(LOG_ERR));
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
	char hooks[32][OPS_HOOK_LEN];
	int n = ops_data_kernel_hooks(hooks, 32);

	if (n >= 0)
		return true;
	if (n == -ENOENT)
		fail("this kernel has no collapse_ext (its BTF has no struct "
		     "collapse_ext_ops): boot a kernel built with "
		     "CONFIG_COLLAPSE_EXT=y and the collapse_ext patches");
	else
		fail("cannot tell whether this kernel has collapse_ext: no BTF "
		     "to read (%s); it needs CONFIG_DEBUG_INFO_BTF=y",
		     strerror(-n));
	return false;
}

/*
 * The kernel's own check for attaching, swapping and detaching a policy
 * (collapse_ext_reg()): CAP_SYS_ADMIN, which covers the BPF side too
 * (CAP_BPF, CAP_PERFMON). Asked of the capabilities, not the uid, so a
 * sandboxed service passes and root without it is told what is missing.
 */
bool require_admin(void)
{
	unsigned long long eff = 0;
	char line[128];
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	if (eff & (1ULL << CAP_SYS_ADMIN_BIT))
		return true;
	fail("attaching or detaching a policy needs CAP_SYS_ADMIN (the kernel's "
	     "check; root has it%s)", geteuid() ? "" : ", but not in this "
	     "process: is it in a sandbox that drops it?");
	return false;
}

char **collapsectl_argv;

int main(int argc, char **argv)
{
	bool json = false;
	int arg = 1;	/* the command's index, after the global options */
	size_t i;

	/* kept whole: apply --follow re-executes it on SIGHUP */
	collapsectl_argv = argv;
	for (; arg < argc && argv[arg][0] == '-'; arg++) {
		const char *o = argv[arg];

		if (!strcmp(o, "-j") || !strcmp(o, "--json")) {
			json = true;
		} else if (!strcmp(o, "-p") || !strcmp(o, "--pretty")) {
			json = json_pretty = true;
		} else if (!strcmp(o, "-d") || !strcmp(o, "--debug")) {
			verbose = true;
		} else if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(o, "--version") || !strcmp(o, "-V")) {
			static char *version_json[] = { "version", "--json", NULL };

			if (json)
				return cmd_version(2, version_json);
			return cmd_version(argc - arg, argv + arg);
		} else {
			fail("unknown option '%s' (see collapsectl --help)", o);
			return 2;
		}
	}
	if (arg >= argc) {
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(argv[arg], "help")) {
		fputs(usage, stdout);
		return 0;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		int n = argc - arg;
		char **args;

		if (strcmp(argv[arg], commands[i].name))
			continue;
		if (!json)
			return commands[i].fn(n, argv + arg);
		if (!commands[i].json) {
			fail("'%s' has no JSON output (-j is for apply, info, list, stats, status "
			     "and version)", commands[i].name);
			return 2;
		}
		/* the command's own --json, after its name */
		args = calloc(n + 2, sizeof(*args));
		if (!args)
			return fail("out of memory");
		args[0] = argv[arg];
		args[1] = (char *)"--json";
		memcpy(args + 2, argv + arg + 1, (n - 1) * sizeof(*args));
		return commands[i].fn(n + 1, args);
	}
	fail("unknown command '%s' (see collapsectl --help)", argv[arg]);
	return 2;
}
