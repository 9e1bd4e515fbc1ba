// SPDX-License-Identifier: GPL-2.0
/* collapsectl load. */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "collapsectl.h"

static const char load_usage[] =
"Usage: collapsectl load FILE.bpf.o|POLICY [--cgroup PATH|UNIT] [--name NAME]\n"
"                        [--set VAR=VALUE]... [--no-override] [--foreground]\n"
"\n"
"Attach the collapse_ext_ops policy in FILE (or the installed POLICY, e.g.\n"
"frugal: its .bpf.o in /usr/lib/collapse_ext/bpf) to the cgroup v2 PATH\n"
"(default: the root, i.e. the whole system) through a struct_ops link, and pin the\n"
"link under " PIN_DIR "/NAME so it outlives this command. Removing\n"
"the cgroup detaches the link. A hook of the policy the running kernel\n"
"lacks (orders before 7.3) is left out, with a note on stderr.\n"
"\n"
"  --cgroup PATH   cgroup v2 directory the policy governs: an absolute path,\n"
"                  / (the root), a path relative to /sys/fs/cgroup, or a\n"
"                  systemd unit (web.slice, foo.service), as apply takes it\n"
"  --name NAME     policy name (default: the name in the object)\n"
"  --no-override   the policy governs its whole subtree: no policy may be\n"
"                  attached below it (EPERM), nor it above one (the link\n"
"                  without BPF_F_ALLOW_OVERRIDE). By default a policy\n"
"                  attached below it governs that subtree instead\n"
"  --set VAR=VALUE a knob, without rebuilding the policy: one of its const\n"
"                  volatile globals (.rodata; an integer in its type's range,\n"
"                  true/false, an enum's name), or flags=NO_YIELD; repeatable.\n"
"                  An unknown VAR is refused with the object's knobs listed\n"
"  --foreground    do not pin: keep the policy until SIGINT/SIGTERM, then\n"
"                  detach it and print its final counters; ends by itself\n"
"                  when the kernel detaches the policy (its cgroup removed)\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

int cmd_load(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "name", required_argument, NULL, 'n' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "set", required_argument, NULL, 's' },
		{ "no-override", no_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	const char *cgroup = CGROUP_ROOT, *name = NULL;
	bool foreground = false;
	struct policy_obj po;
	struct bpf_link *link;
	char pin[256], cgbuf[256], file[PATH_MAX], cgpath[PATH_MAX], why[PATH_MAX + 64];
	struct knobs knobs = {};
	uint64_t cgid;
	int c;

	while ((c = getopt_long(argc, argv, "c:n:fs:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': cgroup = optarg; break;
		case 'n': name = optarg; break;
		case 'f': foreground = true; break;
		case 'O': policy_link_flags &= ~BPF_F_ALLOW_OVERRIDE; break;
		case 's':
			if (knobs_option(&knobs, optarg))
				return 2;
			break;
		case 'h': fputs(load_usage, stdout); return 0;
		default: fputs(load_usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(load_usage, stderr);
		return 2;
	}
	if (!require_admin() || !kernel_supported() ||
	    policy_object_arg(argv[optind], file))
		return 1;
	/* a unit or a relative path as apply takes it; "/" is the root */
	if (!strcmp(cgroup, "/"))
		cgroup = CGROUP_ROOT;
	else if (cgroup[0] != '/' &&
		 cgroup_resolve(cgroup, cgpath, sizeof(cgpath), why, sizeof(why)))
		return fail("--cgroup %s: %s", cgroup, why);
	else if (cgroup[0] != '/')
		cgroup = cgpath;
	cgid = cgroup_path_id(cgroup);
	if (!cgid)
		return 1;
	if (name && !policy_name_ok(name))
		return 1;
	if (!foreground) {
		char loaded[32];

		if (policy_load_pinned(file, cgroup, cgid, name, &knobs,
				       loaded))
			return 1;
		if (!read_attr(loaded, "cgroup", cgbuf, sizeof(cgbuf)))
			cgroup = cgbuf;
		pin_path(pin, sizeof(pin), loaded);
		printf("attached '%s' to cgroup %s (id %llu), pinned at %s\n",
		       loaded, cgroup, (unsigned long long)cgid, pin);
		return 0;
	}
	/*
	 * Catch SIGINT/SIGTERM before the policy is attached: a signal
	 * sent as soon as it is visible must detach it, not kill us with the
	 * link still held.
	 */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (policy_open_load(&po, file, cgid, name, &knobs))
		return 1;
	link = policy_attach(&po, cgroup, cgid);
	if (!link) {
		policy_close(&po);
		return 1;
	}
	if (!read_attr(po.name, "cgroup", cgbuf, sizeof(cgbuf)))
		cgroup = cgbuf;
	printf("attached '%s' to cgroup %s (id %llu) until SIGINT/SIGTERM\n",
	       po.name, cgroup, (unsigned long long)cgid);
	fflush(stdout);
	/*
	 * A signal interrupts the wait; the kernel's detach (the cgroup
	 * removed) ends it too: the link then reports EPOLLHUP.
	 */
	while (!stop) {
		struct pollfd pfd = { .fd = bpf_link__fd(link), .events = POLLIN };

		/* a second at most: a signal may come just before poll() */
		if (poll(&pfd, 1, 1000) == 1 && (pfd.revents & POLLHUP))
			break;
	}
	if (stop) {
		printf("final counters of '%s':\n", po.name);
		print_stats_table(stdout, po.name, NULL);
		bpf_link__destroy(link);
		printf("detached '%s'\n", po.name);
	} else {
		bpf_link__destroy(link);
		printf("'%s' was detached by the kernel: cgroup %s is gone\n",
		       po.name, cgroup);
	}
	policy_close(&po);
	return 0;
}
