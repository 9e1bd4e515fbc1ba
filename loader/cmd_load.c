// SPDX-License-Identifier: GPL-2.0
/* collapsectl load, unload, swap. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "collapsectl.h"

static void pin_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, PIN_DIR "/%s", name);
}

static const char load_usage[] =
"Usage: collapsectl load FILE.bpf.o [--cgroup PATH] [--name NAME] [--foreground]\n"
"\n"
"Attach the collapse_ext_ops policy in FILE to the cgroup v2 PATH (default:\n"
"the root, i.e. the whole system) and pin its link under\n"
PIN_DIR "/NAME so it outlives this command.\n"
"\n"
"  --cgroup PATH   cgroup v2 directory the policy governs\n"
"  --name NAME     policy name (default: the name in the object)\n"
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
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	const char *cgroup = CGROUP_ROOT, *name = NULL;
	bool foreground = false;
	struct policy_obj po;
	struct bpf_link *link;
	char pin[256], cgbuf[256], still[256];
	uint64_t cgid;
	int c, err;

	while ((c = getopt_long(argc, argv, "c:n:fh", opts, NULL)) != -1) {
		switch (c) {
		case 'c': cgroup = optarg; break;
		case 'n': name = optarg; break;
		case 'f': foreground = true; break;
		case 'h': fputs(load_usage, stdout); return 0;
		default: fputs(load_usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(load_usage, stderr);
		return 2;
	}
	if (!require_root() || !kernel_supported())
		return 1;
	cgid = cgroup_path_id(cgroup);
	if (!cgid)
		return 1;
	if (name && !policy_name_ok(name))
		return 1;
	if (policy_open_load(&po, argv[optind], cgid, name))
		return 1;
	pin_path(pin, sizeof(pin), po.name);
	if (!foreground && !access(pin, F_OK)) {
		err = fail("%s already exists: unload '%s' first", pin, po.name);
		goto out;
	}
	link = policy_attach(&po, cgid);
	if (!link) {
		err = 1;
		goto out;
	}
	if (!read_attr(po.name, "cgroup", cgbuf, sizeof(cgbuf)))
		cgroup = cgbuf;
	if (foreground) {
		printf("attached '%s' to cgroup %s (id %llu) until SIGINT/SIGTERM\n",
		       po.name, cgroup, (unsigned long long)cgid);
		fflush(stdout);
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		/* A signal interrupts the wait; the kernel's detach ends it too. */
		while (!stop && !read_attr(po.name, "cgroup", still, sizeof(still)))
			sleep(1);
		if (!stop) {
			printf("'%s' was detached by the kernel: cgroup %s is gone\n",
			       po.name, cgroup);
			bpf_link__destroy(link);
			err = 0;
			goto out;
		}
		printf("final counters of '%s':\n", po.name);
		print_stats_table(stdout, po.name, NULL);
		bpf_link__destroy(link);
		printf("detached '%s'\n", po.name);
		err = 0;
		goto out;
	}
	mkdir(PIN_DIR, 0700);
	err = bpf_link__pin(link, pin);
	if (err) {
		bpf_link__destroy(link);
		err = fail("cannot pin the link at %s: %s (is bpffs mounted at "
			   "/sys/fs/bpf?)", pin, strerror(-err));
		goto out;
	}
	printf("attached '%s' to cgroup %s (id %llu), pinned at %s\n", po.name,
	       cgroup, (unsigned long long)cgid, pin);
	bpf_link__disconnect(link);
	bpf_link__destroy(link);
	err = 0;
out:
	policy_close(&po);
	return err;
}

static const char unload_usage[] =
"Usage: collapsectl unload NAME\n"
"\n"
"Detach the policy NAME loaded by 'collapsectl load' (remove its pin).\n";

int cmd_unload(int argc, char **argv)
{
	char pin[256];
	int i;

	i = check_args(argc, argv, 1, unload_usage);
	if (i >= 0)
		return i;
	if (!policy_name_ok(argv[1]) || !require_root() || !kernel_supported())
		return 1;
	pin_path(pin, sizeof(pin), argv[1]);
	if (unlink(pin)) {
		if (errno != ENOENT)
			return fail("cannot remove %s: %s", pin, strerror(errno));
		if (access(CE_SYSFS, F_OK) == 0) {
			char buf[8];

			if (!read_attr(argv[1], "cgroup_id", buf, sizeof(buf)))
				return fail("'%s' is attached but was not loaded by "
					    "collapsectl (no %s): detach it where it "
					    "was attached", argv[1], pin);
		}
		return fail("no policy named '%s' (see collapsectl list)", argv[1]);
	}
	/* The link goes when its last reference does. */
	for (i = 0; i < 20; i++) {
		char buf[8];

		if (read_attr(argv[1], "cgroup_id", buf, sizeof(buf)))
			break;
		usleep(50000);
	}
	if (i == 20)
		return fail("removed %s, but '%s' is still attached: another "
			    "process holds its link", pin, argv[1]);
	printf("detached '%s'\n", argv[1]);
	return 0;
}

static const char swap_usage[] =
"Usage: collapsectl swap NAME FILE.bpf.o\n"
"\n"
"Replace the running policy NAME by the one in FILE, atomically (BPF link\n"
"update): collapse never sees the default in between. The new policy takes\n"
"NAME's name, cgroup and counters; its 'swaps' counter goes up by one.\n";

int cmd_swap(int argc, char **argv)
{
	struct policy_obj po;
	struct bpf_link *link;
	char pin[256], buf[32];
	uint64_t cgid;
	int err;

	err = check_args(argc, argv, 2, swap_usage);
	if (err >= 0)
		return err;
	if (!policy_name_ok(argv[1]) || !require_root() || !kernel_supported())
		return 1;
	if (read_attr(argv[1], "cgroup_id", buf, sizeof(buf)))
		return fail("no policy named '%s' (see collapsectl list)", argv[1]);
	cgid = strtoull(buf, NULL, 10);
	pin_path(pin, sizeof(pin), argv[1]);
	link = bpf_link__open(pin);
	if (!link)
		return fail("'%s' was not loaded by collapsectl (no %s): cannot "
			    "swap it", argv[1], pin);
	if (policy_open_load(&po, argv[2], cgid, argv[1])) {
		bpf_link__destroy(link);
		return 1;
	}
	err = bpf_link__update_map(link, po.map);
	if (err)
		err = fail("swapping '%s' failed: %s", argv[1], strerror(-err));
	else
		printf("swapped '%s' for the policy in %s\n", argv[1], argv[2]);
	bpf_link__disconnect(link);
	bpf_link__destroy(link);
	policy_close(&po);
	return err;
}
