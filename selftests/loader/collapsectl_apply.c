// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl apply FILE, what collapse-ext.service runs at boot: loads
 * what FILE lists, reports every bad line and applies the others, changes
 * only what changed when run again, and never detaches what it did not
 * load; a line whose cgroup does not exist yet is pending, and apply
 * --follow (the service) attaches it when the cgroup appears, again after
 * it was removed and made anew, as systemd does when a unit restarts.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collapse_test.h"
#include "policy_test.h"
#include "run_cmd.h"
#include "kselftest_harness.h"

/* Loads and passes take seconds on the debug kernel: past 30 s a case */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300

#define BPF		"/usr/share/collapse_ext/bpf/"
#define CONF		"/tmp/ce_policies.conf"
#define DROPINS		"/tmp/ce_policies.d"	/* CONF's drop-ins */
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
	long long id = policy_link_num(name, "cgroup_id");

	return id < 0 ? 0 : id;
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
	/*
	 * As systemd does, the slices (and ce_b) give their children a memcg,
	 * which a policy needs (ENODEV without): they hold no process then.
	 */
	ASSERT_EQ(0, cg_memory_subtree("ce.slice", true));
	ASSERT_EQ(0, cg_memory_subtree(SLICE, true));
	ASSERT_EQ(0, cg_memory_subtree("ce_b", true));
}

static void follow_kill(void);
static void store_close(void);

FIXTURE_TEARDOWN(apply)
{
	follow_kill();
	store_close();	/* before the pins go: the links the store holds */
	unload_pinned_policies();
	cg_remove(SLICE "/ce_svc.service");
	cg_remove(SLICE "/ce_run.service");
	cg_remove(SLICE);
	cg_remove("ce.slice");
	cg_remove("ce_b/kid");
	cg_remove("ce_b");
	cg_remove("ce_c");
	unlink(CONF);
	run_cmd(out, sizeof(out), "rm -rf " DROPINS);
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
	EXPECT_NE(NULL, strstr(out, CONF ":5: expected 'NAME OBJECT CGROUP [VAR=VALUE]...', found 2 fields"));
	EXPECT_NE(NULL, strstr(out, CONF ":6: '../x' is not a policy name"));
	EXPECT_NE(NULL, strstr(out, CONF ":7: c: object 'nosuch_policy' not found"));
	/* a cgroup that does not exist is pending: a warning, not an error */
	EXPECT_NE(NULL, strstr(out, CONF ":8: d: pending: cgroup /sys/fs/cgroup/no/such/cgroup"));
	EXPECT_NE(NULL, strstr(out, CONF ":9: b: already listed at " CONF ":4"));
	EXPECT_NE(NULL, strstr(out, CONF ":10: e: cgroup /sys/fs/cgroup/ce_b already has b"));
	EXPECT_NE(NULL, strstr(out, CONF ":11: f: not loaded"));
	EXPECT_NE(NULL, strstr(out, "not a BPF object file"));
	EXPECT_EQ(self->web, policy_cgroup("web"));
	EXPECT_EQ(self->b, policy_cgroup("b"));
	EXPECT_EQ(0, policy_cgroup("c"));
	EXPECT_EQ(0, policy_cgroup("f"));
	/* the slice's policy governs its services */
	EXPECT_EQ(0, policy_stat("web", "calls_pte_limits"));
	ASSERT_EQ(0, cg_create(SLICE "/ce_run.service", NULL));
	run_in_cgroup(SLICE "/ce_run.service", sparse_collapse, NULL);
	EXPECT_LT(0, policy_stat("web", "calls_pte_limits"));

	/* usage errors and unusable files lose nothing */
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl apply"));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl apply /nonexistent"));
	EXPECT_NE(NULL, strstr(out, "/nonexistent: No such file"));
	EXPECT_EQ(self->web, policy_cgroup("web"));
}

/* --json: one object on stdout, the events in order, the counts, the status */
TEST_F(apply, json_report)
{
	write_conf("web frugal ce-web.slice\n"
		   "d frugal /no/such/cgroup\n"
		   "c nosuch_policy /ce_c\n");
	EXPECT_EQ(3, run_cmd(out, sizeof(out), "collapsectl apply --json " CONF " 2>/dev/null"));
	EXPECT_EQ('{', out[0]) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "{\"file\":\"" CONF "\",\"mode\":\"apply\",\"events\":["))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "{\"policy\":\"web\",\"action\":\"loaded\",\"message\":"
			       "\"loaded " BPF "frugal.bpf.o on /sys/fs/cgroup/" SLICE "\"}"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "{\"policy\":\"d\",\"line\":2,\"action\":\"pending\","
			       "\"level\":\"warning\",\"message\":\"cgroup "));
	EXPECT_NE(NULL, strstr(out, "{\"line\":3,\"level\":\"error\",\"message\":"
			       "\"c: object 'nosuch_policy' not found"));
	EXPECT_NE(NULL, strstr(out, "],\"applied\":1,\"changed\":1,\"pending\":1,"
			       "\"errors\":1,\"exit_status\":3}\n"));
	EXPECT_EQ(NULL, strstr(out, "web: loaded"));
	EXPECT_EQ(self->web, policy_cgroup("web"));
	/* again: nothing changed */
	EXPECT_EQ(3, run_cmd(out, sizeof(out), "collapsectl apply --json " CONF " 2>/dev/null"));
	EXPECT_NE(NULL, strstr(out, "{\"policy\":\"web\",\"action\":\"unchanged\""));
	EXPECT_NE(NULL, strstr(out, "\"changed\":0,")) TH_LOG("%s", out);
	/* --check, --unload */
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl apply --json --check " CONF " 2>/dev/null"));
	EXPECT_NE(NULL, strstr(out, "\"mode\":\"check\"")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "{\"policy\":\"web\",\"action\":\"ok\""));
	EXPECT_NE(NULL, strstr(out, "\"exit_status\":1}"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --json --unload 2>/dev/null"));
	EXPECT_NE(NULL, strstr(out, "{\"mode\":\"unload\",\"events\":[{\"policy\":\"web\","
			       "\"action\":\"detached\"")) TH_LOG("%s", out);
	EXPECT_EQ(0, policy_cgroup("web"));
	/* not with --follow, which never ends */
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl apply --json --follow " CONF));
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

/*
 * --plan says what a pass would do to each line (load, swap, move,
 * detach, unchanged, pending) and does none of it; the apply that
 * follows does what it said. --detailed-exitcode: 4 when it would change.
 */
TEST_F(apply, plan_says_and_changes_nothing)
{
	write_conf("web frugal ce-web.slice\n"
		   "b passthrough /ce_b\n"
		   "z frugal /ce_c\n"
		   "d frugal /ce_no/such\n");
	EXPECT_EQ(4, run_cmd(out, sizeof(out), "collapsectl apply --plan "
			     "--detailed-exitcode " CONF));
	EXPECT_NE(NULL, strstr(out, "web: would load " BPF "frugal.bpf.o on "
			       "/sys/fs/cgroup/" SLICE "\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "b: would load " BPF "passthrough.bpf.o on "
			       "/sys/fs/cgroup/ce_b\n"));
	EXPECT_NE(NULL, strstr(out, "d: pending: cgroup /sys/fs/cgroup/ce_no/such"));
	EXPECT_NE(NULL, strstr(out, CONF ": 3 would change, 0 unchanged, 1 pending, "
			       "0 errors; nothing done (--plan)"));
	EXPECT_EQ(0, policy_cgroup("web"));
	EXPECT_EQ(0, policy_cgroup("b"));
	/* without --detailed-exitcode, 0 */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --plan " CONF));

	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply " CONF)) TH_LOG("%s", out);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --plan "
			     "--detailed-exitcode " CONF));
	EXPECT_NE(NULL, strstr(out, "web: unchanged\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, ": 0 would change, 3 unchanged, 1 pending"));

	/* another object, another cgroup, a line gone, knobs */
	write_conf("web eager ce-web.slice\n"
		   "b passthrough /ce_c\n"
		   "d frugal /ce_no/such\n"
		   "n priority /ce_b share_pct=10\n");
	EXPECT_EQ(4, run_cmd(out, sizeof(out), "collapsectl apply --plan "
			     "--detailed-exitcode " CONF));
	EXPECT_NE(NULL, strstr(out, "z: would detach (no longer listed)\n")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "web: would swap to " BPF "eager.bpf.o\n"));
	EXPECT_NE(NULL, strstr(out, "b: would move from /ce_b to /sys/fs/cgroup/ce_c\n"));
	EXPECT_NE(NULL, strstr(out, "n: would load " BPF "priority.bpf.o on "
			       "/sys/fs/cgroup/ce_b\n"));
	EXPECT_NE(NULL, strstr(out, ": 4 would change, 0 unchanged, 1 pending"));
	/* said, not done */
	EXPECT_EQ(self->web, policy_cgroup("web"));
	EXPECT_EQ(self->b, policy_cgroup("b"));
	EXPECT_EQ(self->c, policy_cgroup("z"));
	EXPECT_EQ(0, policy_cgroup("n"));
	EXPECT_EQ(0, policy_stat("web", "swaps"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl -j apply --plan " CONF));
	EXPECT_NE(NULL, strstr(out, "\"mode\":\"plan\",\"events\":[{\"policy\":\"z\","
			       "\"action\":\"detach\",")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "{\"policy\":\"web\",\"action\":\"swap\","));
	EXPECT_NE(NULL, strstr(out, "{\"policy\":\"d\",\"line\":3,\"action\":\"pending\","
			       "\"level\":\"warning\","));
	EXPECT_NE(NULL, strstr(out, "\"applied\":3,\"changed\":4,\"pending\":1,"
			       "\"unchanged\":0,\"errors\":0,\"exit_status\":0}"));
	/* the apply does what the plan said */
	EXPECT_EQ(4, run_cmd(out, sizeof(out), "collapsectl apply --detailed-exitcode "
			     CONF)) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "z: detached (no longer listed)"));
	EXPECT_NE(NULL, strstr(out, "web: swapped to " BPF "eager.bpf.o"));
	EXPECT_NE(NULL, strstr(out, "b: moved from /ce_b to /sys/fs/cgroup/ce_c"));
	EXPECT_NE(NULL, strstr(out, "n: loaded " BPF "priority.bpf.o on /sys/fs/cgroup/ce_b"));
	EXPECT_EQ(self->c, policy_cgroup("b"));
	EXPECT_EQ(self->b, policy_cgroup("n"));

	/* a policy loaded by hand is an error, as apply would report it */
	ASSERT_EQ(0, cg_create("ce_b/kid", NULL));
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "passthrough.bpf.o --name manual --cgroup /sys/fs/cgroup/ce_b/kid"));
	write_conf("manual frugal /ce_b/kid\n");
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl apply --plan " CONF));
	EXPECT_NE(NULL, strstr(out, CONF ":1: manual: loaded by hand, not by apply"))
		TH_LOG("%s", out);
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl apply --plan --check " CONF));
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl apply --plan --follow " CONF));
}

/*
 * --check --offline, a fleet's configuration CI: as nobody, and on a
 * kernel without collapse_ext, every line is judged from the file and the
 * objects alone (knobs by the object's types, pass_size on the root only,
 * a hook of 7.3 only noted); cgroups by their form, never looked up, so a
 * unit that is not running is fine; nothing is loaded or attached.
 */
TEST_F(apply, check_offline_needs_no_root_nor_kernel)
{
	int i;

	write_conf("web frugal ce-web.slice\n"
		   "p pace /\n"
		   "q pace /ce_b\n"
		   "k elastic /ce_c room_mib=12 nosuch=1\n"
		   "m mthp_frugal /ce_m\n"
		   "u frugal ce_nosuch.service\n"
		   "x /bin/busybox /ce_x\n"
		   "w eager ../up\n");
	ASSERT_EQ(0, chmod(CONF, 0644));
	for (i = 0; i < 2; i++) {
		int rc = i ? run_cmd_without_ce(out, sizeof(out), "collapsectl apply "
						"--check --offline " CONF) :
			     run_cmd_as(65534, out, sizeof(out), "collapsectl apply "
					"--check --offline " CONF);

		EXPECT_EQ(1, rc) TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, "web: ok offline (not loaded), " BPF
				       "frugal.bpf.o for /sys/fs/cgroup/ce.slice/ce-web.slice"))
			TH_LOG("%s", out);
		EXPECT_NE(NULL, strstr(out, "p: ok offline (not loaded), " BPF
				       "pace.bpf.o for /sys/fs/cgroup\n"));
		EXPECT_NE(NULL, strstr(out, CONF ":3: q: " BPF "pace.bpf.o would not "
				       "load on /ce_b"));
		EXPECT_NE(NULL, strstr(out, "no knob 'nosuch'"));
		EXPECT_NE(NULL, strstr(out, CONF ":4: k: "));
		EXPECT_NE(NULL, strstr(out, "m: ok offline (not loaded), " BPF
				       "mthp_frugal.bpf.o for /sys/fs/cgroup/ce_m; "
				       "'orders' only on 7.3"));
		EXPECT_NE(NULL, strstr(out, "u: ok offline (not loaded), " BPF
				       "frugal.bpf.o for ce_nosuch.service"));
		EXPECT_NE(NULL, strstr(out, CONF ":7: x: /bin/busybox would not load"));
		EXPECT_NE(NULL, strstr(out, CONF ":8: w: '../up' is not a cgroup"));
		EXPECT_NE(NULL, strstr(out, CONF ": 4 lines would not apply"));
		EXPECT_EQ(NULL, strstr(out, "needs CAP_SYS_ADMIN"));
		EXPECT_EQ(NULL, strstr(out, "this kernel has no collapse_ext"));
	}
	EXPECT_EQ(0, policy_cgroup("web"));
	EXPECT_EQ(0, policy_cgroup("p"));
	/* the JSON says which check it was */
	write_conf("web frugal ce-web.slice\n");
	EXPECT_EQ(0, run_cmd_as(65534, out, sizeof(out), "collapsectl apply --json "
				"--check --offline " CONF));
	EXPECT_NE(NULL, strstr(out, "\"mode\":\"check\",\"offline\":true")) TH_LOG("%s", out);
	/* and its summary says what was not checked */
	EXPECT_EQ(0, run_cmd_as(65534, out, sizeof(out), "collapsectl apply --check "
				"--offline " CONF));
	EXPECT_NE(NULL, strstr(out, CONF ": every line checked offline (objects not "
			       "verified by a kernel, cgroups not looked up)")) TH_LOG("%s", out);
	/* --offline is a kind of --check, and looks nothing up: no --strict */
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl apply --offline " CONF));
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl apply --check --offline "
			     "--strict " CONF));
}

/* --strict: a line whose cgroup does not exist is an error, not pending */
TEST_F(apply, strict_refuses_a_missing_cgroup)
{
	write_conf("web frugal ce-web.slice\n"
		   "u frugal ce_nosuch.service\n"
		   "d passthrough /ce_no/such\n");
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl apply --check --strict " CONF));
	EXPECT_NE(NULL, strstr(out, CONF ":2: u: unit ce_nosuch.service has no cgroup "
			       "(is it running?) (--strict)")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, CONF ":3: d: cgroup /sys/fs/cgroup/ce_no/such "
			       "(from '/ce_no/such') does not exist (--strict)"));
	EXPECT_NE(NULL, strstr(out, "web: ok, "));
	EXPECT_EQ(3, run_cmd(out, sizeof(out), "collapsectl apply --strict " CONF));
	EXPECT_EQ(self->web, policy_cgroup("web"));
	EXPECT_EQ(0, policy_cgroup("u"));
	EXPECT_EQ(NULL, strstr(out, "pending")) TH_LOG("%s", out);
	/* without it, the same lines are pending */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply " CONF));
	EXPECT_NE(NULL, strstr(out, CONF ":2: u: pending")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl apply --follow --strict " CONF));
}

/*
 * status: per line of apply's last pass its state and last word, whether
 * it is attached now and where, its object and knobs, its owner; a policy
 * loaded by hand too. As nobody, what the links would say is unknown,
 * never "not attached".
 */
TEST_F(apply, status_is_one_view)
{
	write_conf("web frugal ce-web.slice\n"
		   "b priority /ce_b share_pct=10\n"
		   "d passthrough /ce_no/such\n"
		   "x /bin/busybox /ce_c\n");
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "passthrough.bpf.o --name manual --cgroup /sys/fs/cgroup/ce_c"));
	EXPECT_EQ(3, run_cmd(out, sizeof(out), "collapsectl apply " CONF)) TH_LOG("%s", out);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl status"));
	EXPECT_NE(NULL, strstr(out, "apply: " CONF ", last pass ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "web: attached (apply: attached, line 1), owner apply\n"
			       "  cgroup /ce.slice/ce-web.slice, link "));
	EXPECT_NE(NULL, strstr(out, "  object " BPF "frugal.bpf.o, knobs -\n"
			       "  last: loaded "));
	EXPECT_NE(NULL, strstr(out, "b: attached (apply: attached, line 2), owner apply"));
	EXPECT_NE(NULL, strstr(out, "knobs share_pct=10"));
	EXPECT_NE(NULL, strstr(out, "d: not attached (apply: pending, line 3), owner apply\n"
			       "  cgroup /sys/fs/cgroup/ce_no/such\n"));
	EXPECT_NE(NULL, strstr(out, "  last: pending: cgroup /sys/fs/cgroup/ce_no/such"));
	EXPECT_NE(NULL, strstr(out, "x: not attached (apply: failed, line 4)"));
	EXPECT_NE(NULL, strstr(out, "  last: x: not loaded (above)")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "manual: attached, owner hand\n  cgroup /ce_c, link "));
	/* as nobody: apply's record, but the links are unknown */
	EXPECT_EQ(0, run_cmd_as(65534, out, sizeof(out), "collapsectl status"));
	EXPECT_NE(NULL, strstr(out, "attached now: unknown (")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "web: attached: unknown (apply: attached, line 1)"));
	EXPECT_EQ(NULL, strstr(out, "not attached")) TH_LOG("%s", out);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl -j status"));
	EXPECT_NE(NULL, strstr(out, "\"links_readable\":true")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "{\"name\":\"d\",\"owner\":\"apply\",\"expected\":"
			       "\"pending\",\"line\":3,\"attached\":false,"));
	EXPECT_NE(NULL, strstr(out, "{\"name\":\"manual\",\"owner\":\"hand\","
			       "\"expected\":null,\"line\":null,\"attached\":true,"));
	/* --unload leaves no record behind */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --unload"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl status"));
	EXPECT_NE(NULL, strstr(out, "apply: no pass recorded")) TH_LOG("%s", out);
}

/*
 * Drop-ins: FILE's lines, then those of each *.conf of FILE's name without
 * ".conf" plus ".d", in name order, as one list. A drop-in's relative
 * object is found next to it, its errors carry its own path and line, a
 * name listed in two files is refused, files of other names are ignored;
 * status says which file a line is in.
 */
TEST_F(apply, drop_ins_add_lines)
{
	write_conf("web frugal ce-web.slice\n");
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "mkdir -p " DROPINS " && cp " BPF
			     "passthrough.bpf.o " DROPINS "/mine.bpf.o"));
	write_text(DROPINS "/20-b.conf", "b mine.bpf.o /ce_b\n");
	write_text(DROPINS "/10-c.conf", "c eager /ce_c\nweb eager /ce_c\n");
	write_text(DROPINS "/30-x.conf.orig", "x frugal /ce_x\n");
	EXPECT_EQ(3, run_cmd(out, sizeof(out), "collapsectl apply " CONF));
	EXPECT_NE(NULL, strstr(out, "web: loaded")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "c: loaded " BPF "eager.bpf.o on /sys/fs/cgroup/ce_c"));
	EXPECT_NE(NULL, strstr(out, "b: loaded " DROPINS "/mine.bpf.o on /sys/fs/cgroup/ce_b"));
	EXPECT_NE(NULL, strstr(out, DROPINS "/10-c.conf:2: web: already listed at "
			       CONF ":1"));
	EXPECT_EQ(NULL, strstr(out, "x:"));
	EXPECT_EQ(self->web, policy_cgroup("web"));
	EXPECT_EQ(self->b, policy_cgroup("b"));
	EXPECT_EQ(self->c, policy_cgroup("c"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl status"));
	EXPECT_NE(NULL, strstr(out, "c: attached (apply: attached, line 1 of "
			       DROPINS "/10-c.conf)")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "web: attached (apply: attached, line 1), "));
	/* a drop-in removed: its policy goes with it */
	unlink(DROPINS "/20-b.conf");
	EXPECT_EQ(3, run_cmd(out, sizeof(out), "collapsectl apply " CONF));
	EXPECT_NE(NULL, strstr(out, "b: detached")) TH_LOG("%s", out);
	EXPECT_EQ(0, policy_cgroup("b"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --unload"));
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
	EXPECT_NE(NULL, strstr(out, ":4: gone: pending: unit ce_nosuch.service has no cgroup"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --unload"));
	cg_remove("ce.slice/ce-web.slice/ce_app.service");
}

/*
 * Under systemd a unit's cgroup is the one systemd names (its ControlGroup,
 * from systemctl), not a directory of the unit's name found in the tree,
 * where a container's own systemd may have made another; without an
 * answer from systemctl, the tree. systemd is played here by
 * /run/systemd/system and a systemctl earlier in PATH.
 */
TEST_F(apply, units_through_systemd)
{
	const char *path = getenv("PATH");
	char saved[1024];

	snprintf(saved, sizeof(saved), "%s", path ? path : "/usr/bin:/bin");
	if (!access("/run/systemd/system", F_OK))
		SKIP(return, "systemd runs here: its marker is not the test's to play");
	ASSERT_EQ(0, cg_memory_subtree("ce_c", true));	/* a memcg for its child */
	ASSERT_EQ(0, cg_create("ce_b/ce_dup.service", NULL));
	ASSERT_EQ(0, cg_create("ce_b/ce_other.service", NULL));
	ASSERT_EQ(0, cg_create("ce_c/ce_dup.service", NULL));
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "mkdir -p /tmp/ce_bin /run/systemd/system"));
	write_text("/tmp/ce_bin/systemctl",
		   "#!/bin/sh\n"
		   "[ -e /tmp/ce_bin/fail ] && exit 1\n"
		   "q='show --property=LoadState --property=ControlGroup --'\n"
		   "case \"$*\" in\n"
		   "\"$q ce_dup.service\") "
		   "printf 'LoadState=loaded\\nControlGroup=/ce_c/ce_dup.service\\n' ;;\n"
		   "\"$q ce_nosuch.service\") printf 'LoadState=loaded\\nControlGroup=\\n' ;;\n"
		   "\"$q ce_other.service\") printf 'LoadState=not-found\\nControlGroup=\\n' ;;\n"
		   "*) exit 1 ;;\n"
		   "esac\n");
	ASSERT_EQ(0, chmod("/tmp/ce_bin/systemctl", 0755));
	write_conf("dup passthrough ce_dup.service\n"
		   "gone frugal ce_nosuch.service\n"
		   "other frugal ce_other.service\n");
	/* without systemd: two directories of that name, no guess */
	run_cmd(out, sizeof(out), "rmdir /run/systemd/system");
	EXPECT_EQ(3, run_cmd(out, sizeof(out), "PATH=/tmp/ce_bin:%s collapsectl apply "
			     CONF " 2>&1", saved));
	EXPECT_NE(NULL, strstr(out, ":1: dup: unit ce_dup.service is in 2 cgroups: "
			       "give its path")) TH_LOG("%s", out);
	/* with it: systemd's cgroup of the unit, for load and apply alike */
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "mkdir -p /run/systemd/system"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "PATH=/tmp/ce_bin:%s collapsectl load "
			     BPF "frugal.bpf.o --name byunit --cgroup ce_dup.service",
			     saved)) TH_LOG("%s", out);
	EXPECT_EQ(cg_id("ce_c/ce_dup.service"), policy_cgroup("byunit"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl unload byunit"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "PATH=/tmp/ce_bin:%s collapsectl apply "
			     CONF " 2>&1", saved));
	EXPECT_EQ(cg_id("ce_c/ce_dup.service"), policy_cgroup("dup")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, ":2: gone: pending: unit ce_nosuch.service has no "
			       "cgroup (is it running?)"));
	/* a unit systemd does not know (a container's): the tree */
	EXPECT_EQ(cg_id("ce_b/ce_other.service"), policy_cgroup("other"));
	/* systemctl that cannot answer: the tree again */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --unload"));
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "touch /tmp/ce_bin/fail"));
	EXPECT_EQ(3, run_cmd(out, sizeof(out), "PATH=/tmp/ce_bin:%s collapsectl apply "
			     CONF " 2>&1", saved));
	EXPECT_NE(NULL, strstr(out, "is in 2 cgroups")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "did not answer: units are looked for in the "
			       "cgroup tree"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --unload"));
	run_cmd(out, sizeof(out), "rm -rf /tmp/ce_bin; rmdir /run/systemd/system");
	cg_remove("ce_b/ce_dup.service");
	cg_remove("ce_b/ce_other.service");
	cg_remove("ce_c/ce_dup.service");
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

#define EXPECTED	"/run/collapse_ext/expected"
#define SVC		SLICE "/ce_svc.service"

static bool file_has(const char *path, const char *text)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(out, 1, sizeof(out) - 1, f);
		fclose(f);
	}
	out[n] = 0;
	return strstr(out, text);
}

/* Poll for up to @secs until @cond holds; did it? */
#define WAIT_FOR(cond, secs) ({						\
	bool _ok = false;						\
	for (int _i = 0; _i < (secs) * 20 && !(_ok = (cond)); _i++)	\
		usleep(50000);						\
	_ok; })

/*
 * A line on a cgroup that does not exist yet: a warning and exit 0; the
 * expected file (and the metrics) say pending, then attached once an
 * apply finds the cgroup.
 */
TEST_F(apply, pending_until_the_cgroup_appears)
{
	write_conf("b passthrough /ce_b\n"
		   "svc passthrough ce_svc.service\n");
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --check " CONF));
	EXPECT_NE(NULL, strstr(out, "svc: ok, ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "pending: unit ce_svc.service has no cgroup"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply " CONF));
	EXPECT_NE(NULL, strstr(out, CONF ":2: svc: pending: unit ce_svc.service has no "
			       "cgroup (is it running?); attached when it appears"))
		TH_LOG("%s", out);
	EXPECT_TRUE(file_has(EXPECTED, "svc pending ce_svc.service\n")) TH_LOG("%s", out);
	EXPECT_TRUE(file_has(EXPECTED, "b attached /sys/fs/cgroup/ce_b\n")) TH_LOG("%s", out);
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl stats --openmetrics"));
	EXPECT_NE(NULL, strstr(out, "collapse_ext_policy_expected{policy=\"svc\","
			       "cgroup=\"ce_svc.service\",state=\"pending\"} 1"))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "collapse_ext_policy_attached{policy=\"svc\"} 0"));
	EXPECT_NE(NULL, strstr(out, "collapse_ext_policy_attached{policy=\"b\"} 1"));

	ASSERT_EQ(0, cg_create(SVC, NULL));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply " CONF));
	EXPECT_EQ(cg_id(SVC), policy_cgroup("svc")) TH_LOG("%s", out);
	EXPECT_TRUE(file_has(EXPECTED, "svc attached /sys/fs/cgroup/" SVC "\n"));
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl stats --openmetrics"));
	EXPECT_NE(NULL, strstr(out, "collapse_ext_policy_attached{policy=\"svc\"} 1"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --unload"));
	EXPECT_NE(0, access(EXPECTED, F_OK));
	cg_remove(SVC);
}

/* collapsectl apply --follow CONF in the background, its output in LOG */
#define LOG		"/tmp/ce_follow.log"
static pid_t follower;

static pid_t follow_start_opt(const char *opt)
{
	pid_t pid = fork();

	if (!pid) {
		int fd = open(LOG, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fd, 1);
		dup2(fd, 2);
		/*
		 * An hour: only the cgroup events can make it apply again.
		 * -d, a global option, must survive SIGHUP's re-execution.
		 */
		if (opt)
			execlp("collapsectl", "collapsectl", "-d", "apply", "--follow",
			       "--interval", "1h", opt, CONF, NULL);
		else
			execlp("collapsectl", "collapsectl", "-d", "apply", "--follow",
			       "--interval", "1h", CONF, NULL);
		_exit(127);
	}
	follower = pid;
	return pid;
}

#define follow_start()	follow_start_opt(NULL)

/* a follower a failed assertion left running: never into the next test */
static void follow_kill(void)
{
	if (follower > 0) {
		kill(follower, SIGKILL);
		waitpid(follower, NULL, 0);
		follower = 0;
	}
}

/* CONF replaced whole, as an editor's save does: never read half written */
static void write_conf_atomic(const char *text)
{
	write_text(CONF "~", text);
	rename(CONF "~", CONF);
}

/*
 * The service's mode: a policy on a unit that starts after it is attached
 * when the unit's cgroup appears, and again when the unit restarts (its
 * cgroup removed, the kernel detaching the policy and saying so, a new
 * cgroup made); a path not there yet likewise; SIGHUP runs collapsectl
 * anew, which keeps what runs and applies the file as it is then;
 * SIGTERM detaches what it loaded and exits 0, a bad line of the file
 * notwithstanding.
 */
TEST_F_TIMEOUT(apply, follow_attaches_as_units_come_and_go, 120)
{
	uint64_t first;
	pid_t pid;
	int status;

	write_conf("svc passthrough ce_svc.service\n"
		   "b passthrough /ce_b\n"
		   "kid frugal /ce_b/kid\n"
		   "bad nosuch_policy /ce_c\n");
	pid = follow_start();
	ASSERT_LT(0, pid);
	EXPECT_TRUE(WAIT_FOR(policy_cgroup("b") == self->b, 10));
	EXPECT_TRUE(WAIT_FOR(file_has(LOG, "kid: pending"), 10)) TH_LOG("%s", out);
	EXPECT_TRUE(file_has(LOG, "svc: pending: unit ce_svc.service has no cgroup"))
		TH_LOG("%s", out);

	/* the unit starts; a path appears */
	ASSERT_EQ(0, cg_create(SVC, &first));
	EXPECT_TRUE(WAIT_FOR(policy_cgroup("svc") == first, 10));
	ASSERT_EQ(0, cg_create("ce_b/kid", NULL));
	EXPECT_TRUE(WAIT_FOR(policy_cgroup("kid") == cg_id("ce_b/kid"), 10));
	/* the unit restarts: the kernel detaches, apply attaches again */
	ASSERT_EQ(0, cg_remove(SVC));
	EXPECT_TRUE(WAIT_FOR(!policy_attached("svc"), 10));
	/* the kernel says so (from a work item: a little later) */
	EXPECT_TRUE(WAIT_FOR(!run_cmd(out, sizeof(out), "dmesg | grep -F 'collapse_ext: "
				      "policy svc detached: its cgroup (id %llu) was "
				      "removed'", (unsigned long long)first), 10));
	EXPECT_TRUE(WAIT_FOR(file_has(EXPECTED, "svc pending"), 10)) TH_LOG("%s", out);
	ASSERT_EQ(0, cg_create(SVC, NULL));
	EXPECT_TRUE(WAIT_FOR(policy_cgroup("svc") == cg_id(SVC), 10));
	EXPECT_NE(first, cg_id(SVC));
	EXPECT_TRUE(file_has(LOG, "svc: its cgroup is gone: detached by the kernel"))
		TH_LOG("%s", out);

	/* a file edited meanwhile waits for the reload */
	write_conf_atomic("svc passthrough ce_svc.service\n"
			  "b passthrough /ce_b\n"
			  "kid frugal /ce_b/kid\n"
			  "c frugal /ce_c\n"
			  "bad nosuch_policy /ce_c\n");
	ASSERT_EQ(0, cg_remove("ce_b/kid"));
	EXPECT_TRUE(WAIT_FOR(file_has(EXPECTED, "kid pending"), 10)) TH_LOG("%s", out);
	EXPECT_FALSE(policy_attached("c"));
	/* reload: collapsectl again, the same policies kept, the new line applied */
	first = policy_cgroup("svc");
	ASSERT_EQ(0, kill(pid, SIGHUP));
	EXPECT_TRUE(WAIT_FOR(file_has(LOG, "svc: unchanged"), 10)) TH_LOG("%s", out);
	EXPECT_TRUE(file_has(LOG, "SIGHUP: running"));
	EXPECT_TRUE(WAIT_FOR(policy_cgroup("c") == self->c, 10)) TH_LOG("%s", out);
	EXPECT_EQ(first, policy_cgroup("svc"));
	EXPECT_EQ(0, policy_stat("svc", "swaps"));

	/* stop: everything it loaded detached, exit 0 */
	ASSERT_EQ(0, kill(pid, SIGTERM));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	follower = 0;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("status %d: %s", status, file_has(LOG, "") ? out : "");
	EXPECT_FALSE(policy_attached("svc"));
	EXPECT_FALSE(policy_attached("b"));
	EXPECT_FALSE(policy_attached("c"));
	EXPECT_TRUE(file_has(LOG, "svc: detached (apply --follow stopped)")) TH_LOG("%s", out);
	cg_remove(SVC);
	unlink(LOG);
}

/*
 * An object replaced on disk while --follow runs goes live on reload
 * (SIGHUP), not at the next pass: --follow holds what it read. With
 * --reread, at the next pass. A pass is made by a cgroup that appears.
 */
TEST_F_TIMEOUT(apply, follow_object_replaced_goes_live_on_reload, 120)
{
	pid_t pid;
	int i;

	ASSERT_EQ(0, run_cmd(out, sizeof(out), "mkdir -p /tmp/ce_obj && cp " BPF
			     "passthrough.bpf.o /tmp/ce_obj/p.bpf.o"));
	write_conf("p /tmp/ce_obj/p.bpf.o /ce_b\n"
		   "kid frugal /ce_b/kid\n");
	for (i = 0; i < 2; i++) {
		pid = follow_start_opt(i ? "--reread" : NULL);
		ASSERT_LT(0, pid);
		EXPECT_TRUE(WAIT_FOR(policy_cgroup("p") == self->b, 10));
		EXPECT_TRUE(WAIT_FOR(file_has(EXPECTED, "kid pending"), 10));
		/* replaced whole, as a package upgrade or a deploy does */
		ASSERT_EQ(0, run_cmd(out, sizeof(out), "cp " BPF "%s.bpf.o "
				     "/tmp/ce_obj/p.new && mv /tmp/ce_obj/p.new "
				     "/tmp/ce_obj/p.bpf.o", i ? "passthrough" : "eager"));
		ASSERT_EQ(0, cg_create("ce_b/kid", NULL));
		EXPECT_TRUE(WAIT_FOR(policy_cgroup("kid") == cg_id("ce_b/kid"), 10));
		if (!i) {
			EXPECT_EQ(0, policy_stat("p", "swaps"));
			EXPECT_FALSE(file_has(LOG, "p: swapped")) TH_LOG("%s", out);
			ASSERT_EQ(0, kill(pid, SIGHUP));
		}
		EXPECT_TRUE(WAIT_FOR(file_has(LOG, "p: swapped to /tmp/ce_obj/p.bpf.o"), 10))
			TH_LOG("%s", out);
		EXPECT_EQ(1, policy_stat("p", "swaps"));
		follow_kill();
		ASSERT_EQ(0, cg_remove("ce_b/kid"));
		unload_pinned_policies();
	}
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl apply --reread " CONF));
	run_cmd(out, sizeof(out), "rm -rf /tmp/ce_obj");
	unlink(LOG);
}

/*
 * --reload PID, the service's ExecReload: SIGHUP to the follower, and
 * back only once its pass has applied the file as it is now, so that
 * `systemctl reload` returns with the new line attached.
 */
TEST_F_TIMEOUT(apply, reload_returns_when_applied, 60)
{
	pid_t pid;

	write_conf("b passthrough /ce_b\n");
	pid = follow_start();
	ASSERT_LT(0, pid);
	ASSERT_TRUE(WAIT_FOR(policy_cgroup("b") == self->b, 10));
	write_conf_atomic("b passthrough /ce_b\n"
			  "c frugal /ce_c\n");
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --reload %d", pid))
		TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "applied its file again")) TH_LOG("%s", out);
	/* no waiting here: the pass is done */
	EXPECT_EQ(self->c, policy_cgroup("c"));
	EXPECT_EQ(self->b, policy_cgroup("b"));
	follow_kill();
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl apply --reload %d", pid));
	EXPECT_NE(NULL, strstr(out, "--reload: process")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl apply --reload x"));
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl apply --reload 1 " CONF));
	unlink(LOG);
}

/* systemd's notify socket, played by the test (sd_notify(3)) */
#define NOTIFY		"/tmp/ce_notify.sock"

static int notify_listen(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = NOTIFY };
	int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	unlink(NOTIFY);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)))
		return -1;
	return s;
}

/*
 * The next datagram on @s within @secs: its text in @msg, the file
 * descriptor it carried in *@fd (-1: none). 0, or -1 when none came.
 */
static int notify_recv(int s, char *msg, size_t len, int *fd, int secs)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { msg, len - 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct pollfd pfd = { .fd = s, .events = POLLIN };
	struct cmsghdr *cm;
	ssize_t n;

	*fd = -1;
	if (poll(&pfd, 1, secs * 1000) != 1)
		return -1;
	n = recvmsg(s, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -1;
	msg[n] = 0;
	cm = CMSG_FIRSTHDR(&mh);
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(cm), sizeof(int));
	return 0;
}

/* Messages until one starts with @what; its fd closed (a barrier's ack) */
static bool notify_until(int s, const char *what)
{
	char msg[256];
	int fd;

	while (!notify_recv(s, msg, sizeof(msg), &fd, 20)) {
		if (fd >= 0)
			close(fd);
		if (!strncmp(msg, what, strlen(what)))
			return true;
	}
	return false;
}

/*
 * A stop as systemd sees it: SIGTERM, then the links the follower stores
 * (FDSTORE=1, FDNAME=ce-NAME) into @fds by name (@names, @n), until its
 * BARRIER=1, acknowledged by closing the pipe it sent; its exit status.
 */
static int notify_stop(int s, pid_t pid, const char *names[], int *fds, int n)
{
	char msg[256];
	int fd, i, j, status = -1;

	kill(pid, SIGTERM);
	for (i = 0; i < 20; i++) {
		if (notify_recv(s, msg, sizeof(msg), &fd, 1)) {
			/* nothing more to come from an exited follower */
			if (waitpid(pid, &status, WNOHANG) == pid) {
				follower = 0;
				return status;
			}
			continue;
		}
		for (j = 0; fd >= 0 && j < n; j++) {
			char want[64];

			snprintf(want, sizeof(want), "FDSTORE=1\nFDNAME=ce-%s", names[j]);
			if (!strcmp(msg, want)) {
				fds[j] = fd;
				fd = -1;
			}
		}
		if (fd >= 0)
			close(fd);
		if (!strcmp(msg, "BARRIER=1"))
			break;
	}
	waitpid(pid, &status, 0);
	follower = 0;
	return status;
}

/*
 * Under systemd the follower's policies outlive a restart: on SIGTERM
 * their links go to the service's file descriptor store and their pins
 * go; the next start pins what the store gives back (LISTEN_FDS) and
 * takes it out of the store, and finds every policy unchanged, the same
 * links, never detached. A stop (the store closed) detaches them. A
 * policy loaded by hand is never handed over. --detach-on-exit, or a
 * systemd that does not confirm (no barrier answered), detaches at once.
 */
/* the links the test's store holds: closed by the fixture after a failure */
static int fds[3] = { -1, -1, -1 };

static void store_close(void)
{
	for (int i = 0; i < 3; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

TEST_F_TIMEOUT(apply, follow_restart_keeps_policies_through_systemd, 120)
{
	const char *names[] = { "b", "c", "manual" };
	int s, i, status;
	long long link_b, link_c;
	char fdnames[64];
	pid_t pid;

	s = notify_listen();
	ASSERT_LE(0, s);
	ASSERT_EQ(0, cg_create("ce_b/kid", NULL));
	ASSERT_EQ(0, run_cmd(out, sizeof(out), "collapsectl load " BPF
			     "passthrough.bpf.o --name manual --cgroup /sys/fs/cgroup/ce_b/kid"));
	write_conf("b passthrough /ce_b\n"
		   "c frugal /ce_c\n");
	setenv("NOTIFY_SOCKET", NOTIFY, 1);
	pid = follow_start();
	unsetenv("NOTIFY_SOCKET");
	ASSERT_LT(0, pid);
	ASSERT_TRUE(notify_until(s, "READY=1"));
	link_b = policy_link_num("b", "link_id");
	link_c = policy_link_num("c", "link_id");
	ASSERT_LT(0, link_b);

	/* restart, its stop half: the links to the store, the pins gone */
	status = notify_stop(s, pid, names, fds, 3);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("%d", status);
	EXPECT_TRUE(file_has(LOG, "2 policies sent to systemd's file descriptor store"))
		TH_LOG("%s", out);
	EXPECT_LE(0, fds[0]);
	EXPECT_LE(0, fds[1]);
	EXPECT_EQ(-1, fds[2]);
	EXPECT_NE(0, access("/sys/fs/bpf/collapse_ext/b", F_OK));
	EXPECT_EQ(0, access("/sys/fs/bpf/collapse_ext/manual", F_OK));
	EXPECT_EQ(link_b, policy_link_num("b", "link_id"));
	EXPECT_EQ(self->c, policy_cgroup("c"));
	/* the start's ExecStartPre: the stored links are apply's, not by hand */
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --check " CONF))
		TH_LOG("%s", out);

	/* its start half: the store's links as LISTEN_FDS 3 and 4 */
	snprintf(fdnames, sizeof(fdnames), "ce-b:ce-c");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int log = open(LOG, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		char me[16];

		/* above 4 first: a link's fd may be 3 or 4 already */
		int b = fcntl(fds[0], F_DUPFD_CLOEXEC, 10);
		int c = fcntl(fds[1], F_DUPFD_CLOEXEC, 10);

		dup2(log, 1);
		dup2(log, 2);
		dup2(b, 3);
		dup2(c, 4);
		snprintf(me, sizeof(me), "%d", getpid());
		setenv("LISTEN_PID", me, 1);
		setenv("LISTEN_FDS", "2", 1);
		setenv("LISTEN_FDNAMES", fdnames, 1);
		setenv("NOTIFY_SOCKET", NOTIFY, 1);
		execlp("collapsectl", "collapsectl", "apply", "--follow", "--interval",
		       "1h", CONF, NULL);
		_exit(127);
	}
	follower = pid;
	ASSERT_TRUE(notify_until(s, "FDSTOREREMOVE=1\nFDNAME=ce-b"));
	ASSERT_TRUE(notify_until(s, "FDSTOREREMOVE=1\nFDNAME=ce-c"));
	ASSERT_TRUE(notify_until(s, "READY=1"));
	for (i = 0; i < 2; i++) {
		close(fds[i]);	/* out of the store */
		fds[i] = -1;
	}
	EXPECT_TRUE(file_has(LOG, "b: kept attached over the restart")) TH_LOG("%s", out);
	EXPECT_TRUE(file_has(LOG, "b: unchanged"));
	EXPECT_TRUE(file_has(LOG, "c: unchanged"));
	EXPECT_EQ(0, access("/sys/fs/bpf/collapse_ext/b", F_OK));
	EXPECT_EQ(link_b, policy_link_num("b", "link_id"));
	EXPECT_EQ(link_c, policy_link_num("c", "link_id"));
	/* apply owns them again: what it no longer lists goes */
	write_conf_atomic("b passthrough /ce_b\n");
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --reload %d", pid))
		TH_LOG("%s", out);
	EXPECT_FALSE(policy_attached("c"));

	/* stop: stored, then the store closed; the kernel detaches */
	status = notify_stop(s, pid, names, fds, 3);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("%d", status);
	EXPECT_LE(0, fds[0]);
	EXPECT_TRUE(policy_attached("b"));
	close(fds[0]);
	fds[0] = -1;
	EXPECT_TRUE(WAIT_FOR(!policy_attached("b"), 10));
	EXPECT_TRUE(policy_attached("manual"));

	/* --detach-on-exit: nothing stored, detached at once */
	setenv("NOTIFY_SOCKET", NOTIFY, 1);
	pid = follow_start_opt("--detach-on-exit");
	unsetenv("NOTIFY_SOCKET");
	ASSERT_TRUE(notify_until(s, "READY=1"));
	EXPECT_TRUE(policy_attached("b"));
	status = notify_stop(s, pid, names, fds, 3);
	EXPECT_EQ(-1, fds[0]);
	EXPECT_FALSE(policy_attached("b"));
	EXPECT_TRUE(file_has(LOG, "b: detached (apply --follow stopped)")) TH_LOG("%s", out);

	/* no barrier answered (the datagrams left unread): detached */
	setenv("NOTIFY_SOCKET", NOTIFY, 1);
	pid = follow_start();
	unsetenv("NOTIFY_SOCKET");
	ASSERT_TRUE(notify_until(s, "READY=1"));
	ASSERT_EQ(0, kill(pid, SIGTERM));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	follower = 0;
	EXPECT_FALSE(policy_attached("b"));
	EXPECT_TRUE(file_has(LOG, "systemd did not take the links")) TH_LOG("%s", out);
	EXPECT_TRUE(policy_attached("manual"));
	close(s);
	unlink(NOTIFY);
	unlink(LOG);
}

/* --follow's usage: alone, one FILE, --interval only with it */
TEST_F(apply, follow_usage)
{
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl apply --follow"));
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl apply --follow --check " CONF));
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl apply --interval 60 " CONF));
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl apply --follow --interval 0 " CONF));
	EXPECT_NE(NULL, strstr(out, "--interval takes 1s to 24h")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_cmd(out, sizeof(out), "collapsectl apply --follow --interval 5x " CONF));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl apply --follow /nonexistent"));
	EXPECT_NE(NULL, strstr(out, "/nonexistent: No such file")) TH_LOG("%s", out);
}

/*
 * Knobs in the file: written at load; a changed knob swaps the policy
 * atomically as a new object would; a bad one is FILE:LINE.
 */
TEST_F(apply, knobs_are_part_of_the_policy)
{
	write_conf("p priority /ce_b share_pct=20\n");
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply " CONF)) TH_LOG("%s", out);
	EXPECT_EQ(self->b, policy_cgroup("p"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "bpftool -j map dump name priority.rodata"));
	EXPECT_NE(NULL, strstr(out, "\"share_pct\":20")) TH_LOG("%s", out);
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply " CONF));
	EXPECT_NE(NULL, strstr(out, "p: unchanged")) TH_LOG("%s", out);

	write_conf("p priority /ce_b share_pct=30 min_pages=1\n");
	EXPECT_EQ(4, run_cmd(out, sizeof(out), "collapsectl apply --detailed-exitcode " CONF));
	EXPECT_NE(NULL, strstr(out, "share_pct=30 min_pages=1")) TH_LOG("%s", out);
	EXPECT_EQ(1, policy_stat("p", "swaps"));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "bpftool -j map dump name priority.rodata"));
	EXPECT_NE(NULL, strstr(out, "\"share_pct\":30")) TH_LOG("%s", out);

	write_conf("p priority /ce_b share_pct=30 min_pages=1\n"
		   "q frugal /ce_c nosuch=1\n"
		   "r frugal /ce_c oops\n");
	EXPECT_EQ(3, run_cmd(out, sizeof(out), "collapsectl apply " CONF));
	EXPECT_NE(NULL, strstr(out, "no knob 'nosuch'")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, CONF ":2: q: not loaded"));
	EXPECT_NE(NULL, strstr(out, CONF ":3: r: a knob is VAR=VALUE")) TH_LOG("%s", out);
	EXPECT_EQ(1, policy_stat("p", "swaps"));
	EXPECT_FALSE(policy_attached("q"));
	EXPECT_EQ(1, run_cmd(out, sizeof(out), "collapsectl apply --check " CONF));
	EXPECT_EQ(0, run_cmd(out, sizeof(out), "collapsectl apply --unload"));
}

TEST_HARNESS_MAIN
