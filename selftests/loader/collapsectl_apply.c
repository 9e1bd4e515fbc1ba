// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl apply FILE, what collapse-ext.service runs at boot: loads
 * what FILE lists, reports every bad line and applies the others, changes
 * only what changed when run again, and never detaches what it did not
 * load.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "run_cmd.h"
#include "kselftest_harness.h"

#define BPF		"/usr/share/collapse_ext/bpf/"
#define CONF		"/tmp/ce_policies.conf"
/* systemd's layout of the slice ce-web.slice */
#define SLICE		"ce.slice/ce-web.slice"

static char out[1 << 16];

static int sparse_collapse(void *arg)
{
	return collapse_sparse_region(1);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	fputs(text, f);
	fclose(f);
}

#define write_conf(text)	write_text(CONF, text)

/* cgroup id of policy @name, as the kernel shows it; 0 when not attached */
static uint64_t policy_cgroup(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/mm/collapse_ext/%s/cgroup_id", name);
	return access(path, R_OK) ? 0 : read_num(path);
}

FIXTURE(apply)
{
	uint64_t web, b, c;
};

FIXTURE_SETUP(apply)
{
	unload_pinned_policies();
	ASSERT_EQ(0, cg_create("ce.slice", NULL));
	ASSERT_EQ(0, cg_create(SLICE, &self->web));
	ASSERT_EQ(0, cg_create("ce_b", &self->b));
	ASSERT_EQ(0, cg_create("ce_c", &self->c));
}

FIXTURE_TEARDOWN(apply)
{
	unload_pinned_policies();
	cg_remove(SLICE);
	cg_remove("ce.slice");
	cg_remove("ce_b");
	cg_remove("ce_c");
	unlink(CONF);
}

TEST_F(apply, loads_good_lines_reports_bad_ones)
{
	write_conf("# policies for this host\n"
		   "web frugal ce-web.slice   # a slice name\n"
		   "\n"
		   "b " BPF "passthrough.bpf.o /ce_b\n"
		   "toofew frugal\n"
		   "../x frugal /ce_c\n"
		   "c nosuch_policy /ce_c\n"
		   "d frugal /no/such/cgroup\n"
		   "b eager /ce_c\n"
		   "e eager ce_b\n"
		   "f /bin/busybox /ce_c\n");
	EXPECT_EQ(3, run_cmd(out, sizeof(out), "collapsectl apply " CONF));
	EXPECT_NE(NULL, strstr(out, "web: loaded")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "b: loaded"));
	EXPECT_NE(NULL, strstr(out, CONF ":5: expected 'NAME OBJECT CGROUP', found 2 fields"));
	EXPECT_NE(NULL, strstr(out, CONF ":6: '../x' is not a policy name"));
	EXPECT_NE(NULL, strstr(out, CONF ":7: c: object 'nosuch_policy' not found"));
	EXPECT_NE(NULL, strstr(out, CONF ":8: d: cgroup /sys/fs/cgroup/no/such/cgroup"));
	EXPECT_NE(NULL, strstr(out, CONF ":9: b: already listed on line 4"));
	EXPECT_NE(NULL, strstr(out, CONF ":10: e: cgroup /sys/fs/cgroup/ce_b already has b"));
	EXPECT_NE(NULL, strstr(out, CONF ":11: f: not loaded"));
	EXPECT_NE(NULL, strstr(out, "not a BPF object file"));
	EXPECT_EQ(self->web, policy_cgroup("web"));
	EXPECT_EQ(self->b, policy_cgroup("b"));
	EXPECT_EQ(0, policy_cgroup("c"));
	EXPECT_EQ(0, policy_cgroup("f"));
	/* the slice's policy governs it */
	EXPECT_EQ(0, policy_stat("web", "calls_pte_limits"));
	run_in_cgroup(SLICE, sparse_collapse, NULL);
	EXPECT_LT(0, policy_stat("web", "calls_pte_limits"));

	/* usage errors and unusable files lose nothing */
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl apply"));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl apply /nonexistent"));
	EXPECT_NE(NULL, strstr(out, "/nonexistent: No such file"));
	EXPECT_EQ(self->web, policy_cgroup("web"));
}

TEST_F(apply, again_changes_only_what_changed)
{
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "cp " BPF "frugal.bpf.o /tmp/ce_p.bpf.o"));
	write_conf("web /tmp/ce_p.bpf.o ce-web.slice\n"
		   "b passthrough /sys/fs/cgroup/ce_b\n");
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply " CONF)) TH_LOG("%s", out);
	/* a policy loaded by hand is never apply's to detach */
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "passthrough.bpf.o --name manual --cgroup /sys/fs/cgroup/ce_c"));

	/* nothing changed: nothing happens (0 with --detailed-exitcode too) */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --detailed-exitcode " CONF));
	EXPECT_NE(NULL, strstr(out, "web: unchanged")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "b: unchanged"));
	EXPECT_EQ(0, policy_stat("web", "swaps"));

	/* the same path, another object in it: swapped in place (4: changed) */
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "cp " BPF "eager.bpf.o /tmp/ce_p.bpf.o"));
	EXPECT_EQ(4, run_cmd(out, sizeof(out), "collapsectl apply --detailed-exitcode " CONF));
	EXPECT_NE(NULL, strstr(out, "web: swapped to /tmp/ce_p.bpf.o")) TH_LOG("%s", out);
	EXPECT_EQ(1, policy_stat("web", "swaps"));
	EXPECT_EQ(self->web, policy_cgroup("web"));

	/* swapped by hand since: apply sees what runs, and puts it back */
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl swap web " BPF
			     "passthrough.bpf.o")) TH_LOG("%s", out);
	EXPECT_EQ(4, run_cmd(out, sizeof(out), "collapsectl apply --detailed-exitcode " CONF));
	EXPECT_NE(NULL, strstr(out, "web: swapped to /tmp/ce_p.bpf.o (the policy running "
			       "was swapped since apply loaded it)")) TH_LOG("%s", out);
	EXPECT_EQ(3, policy_stat("web", "swaps"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --detailed-exitcode " CONF));
	EXPECT_NE(NULL, strstr(out, "web: unchanged")) TH_LOG("%s", out);

	/* another cgroup: moved; a line gone: detached */
	write_conf("web /tmp/ce_p.bpf.o /ce_b\n");
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply " CONF));
	EXPECT_NE(NULL, strstr(out, "b: detached (no longer listed)")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "web: moved from /ce.slice/ce-web.slice to "
			       "/sys/fs/cgroup/ce_b"));
	EXPECT_EQ(self->b, policy_cgroup("web"));
	EXPECT_EQ(0, policy_cgroup("b"));
	EXPECT_EQ(self->c, policy_cgroup("manual"));

	/* the service's stop: what apply loaded goes, the rest stays */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --unload"));
	EXPECT_NE(NULL, strstr(out, "web: detached (apply --unload)")) TH_LOG("%s", out);
	EXPECT_EQ(0, policy_cgroup("web"));
	EXPECT_EQ(self->c, policy_cgroup("manual"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --unload"));
	EXPECT_STREQ("", out);
	unlink("/tmp/ce_p.bpf.o");
}

/*
 * --check verifies every line as apply would, objects through the
 * verifier, and touches nothing: no attach, no swap, no detach.
 */
TEST_F(apply, check_touches_nothing)
{
	write_conf("web frugal ce-web.slice\n"
		   "b passthrough /ce_b\n");
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --check " CONF));
	EXPECT_NE(NULL, strstr(out, "web: ok, ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, CONF ": every line would apply"));
	EXPECT_EQ(0, policy_cgroup("web"));
	EXPECT_EQ(0, policy_cgroup("b"));

	/* applied; then a changed file with a bad line is only checked */
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply " CONF)) TH_LOG("%s", out);
	write_conf("web eager /ce_c\n"
		   "x /bin/busybox /ce_b\n"
		   "y nosuch_policy /ce_b\n");
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl apply --check " CONF));
	EXPECT_NE(NULL, strstr(out, CONF ":2: x: /bin/busybox would not load")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, CONF ":3: y: object 'nosuch_policy' not found"));
	EXPECT_NE(NULL, strstr(out, CONF ": 2 lines would not apply"));
	/* what runs is what ran: nothing moved, swapped or detached */
	EXPECT_EQ(self->web, policy_cgroup("web"));
	EXPECT_EQ(self->b, policy_cgroup("b"));
	EXPECT_EQ(0, policy_stat("web", "swaps"));
	EXPECT_EQ(0, policy_cgroup("x"));
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl apply --check --unload"));
}

/* One apply at a time: a second waits for the first's lock, saying so. */
TEST_F(apply, one_apply_at_a_time)
{
	int fd;

	write_conf("web frugal ce-web.slice\n");
	mkdir("/run/collapse_ext", 0755);
	fd = open("/run/collapse_ext/apply.lock", O_RDWR | O_CREAT, 0600);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, flock(fd, LOCK_EX));
	/* held here: the apply waits until timeout ends it, nothing done */
	EXPECT_NE(0, run_cmd(out, sizeof(out), "timeout 3 collapsectl apply " CONF));
	EXPECT_NE(NULL, strstr(out, "waiting for another collapsectl apply to finish"))
		TH_LOG("%s", out);
	EXPECT_EQ(0, policy_cgroup("web"));
	/* released: it runs */
	close(fd);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply " CONF)) TH_LOG("%s", out);
	EXPECT_EQ(self->web, policy_cgroup("web"));
	EXPECT_EQ(NULL, strstr(out, "waiting"));
}

/* Unit names systemd gives cgroups, resolved the way systemd lays them out. */
TEST_F(apply, systemd_unit_names)
{
	ASSERT_EQ(0, cg_create("ce.slice/ce-web.slice/ce_app.service", NULL));
	write_conf("svc passthrough ce_app.service\n"
		   "root passthrough /\n"
		   "bad frugal -x-.slice\n"
		   "gone frugal ce_nosuch.service\n");
	EXPECT_EQ(3, run_cmd(out, sizeof(out), "collapsectl apply " CONF));
	EXPECT_EQ(cg_id("ce.slice/ce-web.slice/ce_app.service"),
		  policy_cgroup("svc")) TH_LOG("%s", out);
	EXPECT_EQ(1, policy_cgroup("root"));
	EXPECT_NE(NULL, strstr(out, ":3: bad: '-x-.slice' is not a valid slice name"));
	EXPECT_NE(NULL, strstr(out, ":4: gone: unit ce_nosuch.service has no cgroup"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --unload"));
	cg_remove("ce.slice/ce-web.slice/ce_app.service");
}

/* A policy loaded by hand under a listed name is reported, never changed. */
TEST_F(apply, hand_loaded_is_left_alone)
{
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "passthrough.bpf.o --name web --cgroup /sys/fs/cgroup/ce_c"));
	write_conf("web frugal /ce_b\n");
	/* nothing applied: 1, as for a file that cannot be used */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl apply " CONF));
	EXPECT_NE(NULL, strstr(out, ":1: web: loaded by hand, not by apply")) TH_LOG("%s", out);
	EXPECT_EQ(self->c, policy_cgroup("web"));
	EXPECT_EQ(0, policy_stat("web", "swaps"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --unload"));
	EXPECT_EQ(self->c, policy_cgroup("web"));
	write_conf("\n");
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply " CONF));
	EXPECT_EQ(self->c, policy_cgroup("web"));
}

/* Two policies trading cgroups: both detached before either is loaded. */
TEST_F(apply, policies_trade_cgroups)
{
	write_conf("x frugal /ce_b\ny eager /ce_c\n");
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply " CONF)) TH_LOG("%s", out);
	write_conf("x frugal /ce_c\ny eager /ce_b\n");
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply " CONF)) TH_LOG("%s", out);
	EXPECT_EQ(self->c, policy_cgroup("x"));
	EXPECT_EQ(self->b, policy_cgroup("y"));
}

/* CRLF, tabs, a line longer than the buffer, an object next to FILE, -.slice */
TEST_F(apply, file_forms)
{
	char *conf = malloc(20000);
	int n;

	ASSERT_EQ(0, run_cmd(out, sizeof(out), "mkdir -p /tmp/ce_dir && cp " BPF
			     "frugal.bpf.o /tmp/ce_dir/mine.bpf.o"));
	n = sprintf(conf, "a\tmine.bpf.o\t/ce_b\r\n# ");
	memset(conf + n, 'x', 10000);
	strcpy(conf + n + 10000, "\nr passthrough -.slice\r\n");
	write_text("/tmp/ce_dir/p.conf", conf);
	free(conf);
	EXPECT_EQ(3, run_cmd(out, sizeof(out), "cd / && collapsectl apply /tmp/ce_dir/p.conf"));
	EXPECT_NE(NULL, strstr(out, "a: loaded /tmp/ce_dir/mine.bpf.o on /sys/fs/cgroup/ce_b"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "p.conf:2: line too long"));
	/* the line after it keeps its number and applies */
	EXPECT_NE(NULL, strstr(out, "r: loaded"));
	EXPECT_EQ(NULL, strstr(out, "p.conf:3"));
	EXPECT_EQ(self->b, policy_cgroup("a"));
	EXPECT_EQ(1, policy_cgroup("r"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --unload; rm -rf /tmp/ce_dir"));
}

TEST_HARNESS_MAIN
