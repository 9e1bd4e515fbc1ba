/* SPDX-License-Identifier: GPL-2.0 */
/* collapsectl: shared declarations of the commands and their helpers. */
#ifndef COLLAPSECTL_H
#define COLLAPSECTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <bpf/libbpf.h>

#include "json_writer.h"

/* The release; a package build passes its own (make COLLAPSECTL_VERSION=). */
#ifndef COLLAPSECTL_VERSION
#define COLLAPSECTL_VERSION	"0.3"
#endif
#define PIN_DIR			"/sys/fs/bpf/collapse_ext"
#define CGROUP_ROOT		"/sys/fs/cgroup"
/* The id of the cgroup v2 root (the inode of its kernfs directory) */
#define ROOT_CGROUP_ID		1
/* collapsectl apply's account of the policies it keeps: see cmd_apply.c */
#define EXPECTED_FILE		"/run/collapse_ext/expected"
/* ... and of its last pass, line by line: see write_status() there */
#define STATUS_FILE		"/run/collapse_ext/status"
/* what apply loaded, one file per policy (link, object, hash, cgroup) */
#define APPLIED_DIR		"/run/collapse_ext/applied"
#define MAX_POLICIES		64
#define MAX_STATS		96

/* --- collapsectl.c: errors and checks every command makes --------------- */

/* Print "collapsectl: <msg>" on stderr; returns 1 (the exit status). */
int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * "<N>" (syslog priority N) when stderr is the journal's stream (systemd
 * sets JOURNAL_STREAM), which files the line at that priority: errors are
 * then seen by journalctl -p err. "" otherwise.
 */
const char *journal_prio(int prio);
/* Is collapse_ext in this kernel? Prints how to get it when not. */
bool kernel_supported(void);
/* CAP_SYS_ADMIN in effect (what the kernel asks to attach a policy)? */
#define CAP_SYS_ADMIN_BIT	21
bool require_admin(void);
/*
 * For a command taking exactly @nargs arguments and no options: prints
 * @usage on --help (returns 0) or on a wrong count (returns 2, the usage
 * error status); returns -1 when the command should go on.
 */
int check_args(int argc, char **argv, int nargs, const char *usage);

/*
 * apply_follow.c: with SIGHUP, SIGTERM and SIGINT held, run @start, then
 * @pass, and @pass again whenever a cgroup appears or goes and every
 * @interval seconds; on SIGHUP re-execute collapsectl (a new binary after
 * an upgrade) with the same arguments; on SIGTERM or SIGINT run @stop and
 * return its status.
 */
int apply_follow(void (*start)(void), int (*pass)(void), int (*stop)(void),
		 double interval);
/*
 * sd_notify.c: sd_notify(3) of @msg ("READY=1", "STATUS=...") when systemd
 * asks for it; and the links of policies apply loaded, kept over a restart
 * in systemd's file descriptor store. hand_over: the pinned links of @names
 * sent to the store, @sent[i] true for each one sent (their pins left to
 * the caller to remove): how many; or -errno when systemd did not confirm
 * (then detached here), or when it could not keep them apart (no kcmp())
 * or has no room (-ENOSYS, -ENOSPC: nothing sent). adopt: the links the
 * store passed to this start pinned again; how many.
 */
#define FDSTORE_MAX	256
void sd_notify_msg(const char *msg);
int fdstore_hand_over(char names[][32], int n, bool *sent);
int fdstore_adopt(void);
/* cmd_apply.c: what apply_follow() watches besides the slices */
void follow_watch_listed(int ifd, uint32_t mask);
/* cmd_apply.c: has a pending line's cgroup appeared since the pass? */
bool follow_pending_appeared(void);
/* main()'s argv, for that re-execution */
extern char **collapsectl_argv;

/* parse.c: 0, or -EINVAL when @s is not all one valid value */
int parse_pid(const char *s, pid_t *pid);
int parse_seconds(const char *s, double *secs);	/* > 0; units ms s m h */

/*
 * --- links.c: the attached policies, from the fdinfo of their links -------
 * Walking the links needs CAP_SYS_ADMIN: without it these return -EPERM.
 */

struct stat_line {
	char key[64];
	unsigned long long val;
};
/*
 * Is @l left out of a table (stats, ab)? A failed_<reason> counter at 0:
 * a table shows a reason once it happened; the machine outputs (--json,
 * OpenMetrics) keep every series from the start, 0 included.
 */
static inline bool stat_quiet(const struct stat_line *l)
{
	return !strncmp(l->key, "failed_", 7) && !l->val;
}
/*
 * Counters of policy @name, sorted by name, failed_<reason> at 0 left out;
 * count or -errno (-ENOENT: not attached).
 */
int read_stats(const char *name, struct stat_line *out, int max);
/*
 * What the link of policy @name says: "cgroup_id", "cgroup" (its path
 * under CGROUP_ROOT, "/a/b"), "attach_time_ns", "link_id", or a counter;
 * 0 or -errno (-ENOENT: not attached, or no such line).
 */
int read_attr(const char *name, const char *attr, char *buf, size_t len);
bool policy_attached(const char *name);
/* the id of link @fd, 0 if it cannot be read */
uint32_t link_fd_id(int fd);
/*
 * Id of the link pinned for @name, 0 if none; the id of the struct_ops
 * map it runs in *@map_id (a swap, by apply or by hand, changes it).
 */
uint64_t pinned_link(const char *name, uint64_t *map_id);
/* Name of the policy attached to cgroup @cgid, or NULL. */
const char *policy_on_cgroup(uint64_t cgid, char *buf, size_t len);
/* What a -errno of the functions above means, with what to do. */
const char *links_error(int err);
/*
 * A policy name the kernel accepts, [A-Za-z0-9_.-]{1,31} but not "." or
 * ".." (it names a pin). Checked before a name becomes part of a path.
 * policy_name_ok() says why on stderr.
 */
bool policy_name_valid(const char *name);
bool policy_name_ok(const char *name);
extern const char policy_name_rule[];

/* Everything `list` and `stats` show of one policy, read at one time. */
struct policy_snap {
	char name[32];
	char cgroup[256];		/* under CGROUP_ROOT: "/a/b", "?" */
	uint64_t cgroup_id;		/* the link's; 0: the root's */
	uint32_t link_id, map_id;
	uint64_t attach_ns;		/* CLOCK_BOOTTIME */
	bool pinned;			/* loaded by collapsectl */
	int nstats;
	struct stat_line stats[MAX_STATS];
	long long anon, anon_thp;	/* memory.stat bytes, -1 if unknown */
};
/*
 * Snapshot policy @only (NULL: every attached policy) into @out, every
 * counter (failed_<reason> at 0 too: the machine outputs export them); a
 * policy that goes away meanwhile is left out. Count or -errno.
 */
int snapshot_policies(struct policy_snap *out, int max, const char *only);

/* --- cgroup.c: cgroup v2 directories --------------------------------------- */

/* The cgroup v2 id of directory @path, or 0 with a message printed. */
uint64_t cgroup_path_id(const char *path);
/*
 * The path under CGROUP_ROOT ("/a/b", "/" for its root or @id 0) of the
 * cgroup @id, as this reader's cgroup namespace and mount show it: 0, or
 * -ENOENT when it is not under CGROUP_ROOT.
 */
int cgroup_id_path(uint64_t id, char *buf, size_t len);
/* A memory.stat field of cgroup directory @cg in bytes, or -1. */
long long cgroup_memstat(const char *cg, const char *key);
/* Write @val to file @path; 0 or -errno. */
int write_file(const char *path, const char *val);
/*
 * Turn a cgroup as an operator writes it into a directory under
 * CGROUP_ROOT: an absolute /sys/fs/cgroup path, "/" (the root), a path
 * relative to the root (with or without a leading '/'), or a systemd unit
 * name ("a-b.slice" is a.slice/a-b.slice; "x.service", "x.scope" are
 * looked up in the tree). 0, or -errno with @why set.
 */
int cgroup_resolve(const char *spec, char *out, size_t len, char *why,
		   size_t wlen);
/*
 * cgroup_resolve()'s checks of @spec's form alone, nothing looked up: a
 * path (made absolute) or a slice's path in @out, a unit name as it is. 0,
 * or -EINVAL with @why set.
 */
int cgroup_spec_check(const char *spec, char *out, size_t len, char *why,
		      size_t wlen);
/* Kill every task of cgroup @cg (cgroup.kill) and wait until it is empty. */
int cgroup_kill_wait(const char *cg);

/* --- knobs.c: a policy's settings, written at load ------------------------- */

#define MAX_KNOBS	16
struct knobs {
	int n;
	struct {
		char var[64];
		char val[64];
	} k[MAX_KNOBS];
};
/* Add "VAR=VALUE" (syntax only: the object is read at load). 0, or -errno
 * with @why set. */
int knobs_add(struct knobs *k, const char *arg, char *why, size_t wlen);
/* --set VAR=VALUE of load and swap: 0, or 2 (usage) with the reason said */
int knobs_option(struct knobs *k, const char *arg);
/* Fold every VAR=VALUE into hash @h (FNV-1a) */
uint64_t knobs_hash(const struct knobs *k, uint64_t h);
/*
 * Write @k into the opened object: "flags" into the ops (0, NO_YIELD or
 * 1), any other VAR into the .rodata variable of that name, its value
 * read as that variable's BTF type (integer in range, bool, enum name).
 * 0, or 1 with what is wrong (and the object's knobs) printed.
 */
int knobs_apply(struct bpf_object *obj, struct bpf_map *ops, const char *file,
		const struct knobs *k);
/* A knob as the object declares it, in words */
struct knob_desc {
	char name[64];
	char type[16];		/* u64, s32, bool, enum */
	char dflt[32];		/* the object's own value */
	char range[160];	/* lo..hi, or the enum's names */
	char doc[256];		/* COLLAPSE_EXT_KNOB()'s text, if any */
};
/* The knobs of the opened @obj (its .rodata variables), at most @max */
int knobs_describe(struct bpf_object *obj, struct knob_desc *out, int max);
/* " VAR=VALUE..." */
void knobs_print(FILE *f, const struct knobs *k);

/* --- policy.c: opening, attaching, pinning ---------------------------------- */

struct policy_obj {
	struct bpf_object *obj;
	struct bpf_map *map;
	char name[32];
};
/*
 * The flags of the struct_ops links policy_attach() creates, besides
 * BPF_F_CGROUP_FD: BPF_F_ALLOW_OVERRIDE (policies below may override the
 * policy) unless load --no-override cleared it.
 */
extern uint32_t policy_link_flags;
/*
 * The object a policy is given by, as a canonical path in @out (PATH_MAX
 * bytes): a path (relative: to @dir), or an installed policy's name
 * ("frugal": frugal.bpf.o in /usr/lib/collapse_ext/bpf, then
 * /usr/share/collapse_ext/bpf, the QEMU guest's). 0 or -errno.
 */
int policy_find(const char *spec, const char *dir, char *out);
/*
 * Read the object at @path once, keep it, and give its FNV-1a hash: from
 * then on this process opens the policy from the content kept, whatever
 * is at the path (apply --follow, until a reload runs it anew). 0 or
 * -errno.
 */
int policy_object_snapshot(const char *path, uint64_t *hash);
/* policy_find() of a command's FILE argument: 0, or 1 with the reason said */
int policy_object_arg(const char *spec, char *out);
/*
 * Open @file, find its collapse_ext_ops map, set name (NULL keeps the
 * object's) and knobs (NULL: none), without loading it: neither root nor
 * a collapse_ext kernel needed. Prints what went wrong and returns 1 on
 * failure.
 */
int policy_open(struct policy_obj *po, const char *file, const char *name,
		const struct knobs *knobs);
/* 1 (said why) when the opened policy may sit only on the root cgroup */
int policy_root_only(struct policy_obj *po, const char *file);
/*
 * policy_open(), then load it for cgroup @cgid. Prints what went wrong
 * (with the tail of the verifier log) and returns 1 on failure.
 */
int policy_open_load(struct policy_obj *po, const char *file, uint64_t cgid,
		     const char *name, const struct knobs *knobs);
/*
 * Attach as a struct_ops link to the cgroup v2 directory @cgroup, of id
 * @cgid; explains EBUSY (naming the holder) and friends.
 */
struct bpf_link *policy_attach(struct policy_obj *po, const char *cgroup,
			       uint64_t cgid);
void policy_close(struct policy_obj *po);

void pin_path(char *buf, size_t len, const char *name);
/*
 * Load @file on cgroup directory @cgroup (id @cgid) as @name (NULL: the
 * object's), attach and pin it. 0, or 1 with the reason printed. @loaded
 * gets the name (32 bytes).
 */
int policy_load_pinned(const char *file, const char *cgroup, uint64_t cgid,
		       const char *name, const struct knobs *knobs,
		       char *loaded);
/* Remove @name's pin and wait for the kernel to detach it. 0 or 1. */
int policy_unpin(const char *name);
/* Replace pinned policy @name by the one in @file (link update). 0 or 1. */
int policy_swap(const char *name, const char *file, const struct knobs *knobs);

/* --- commands ------------------------------------------------------------------ */

int cmd_load(int argc, char **argv);
int cmd_unload(int argc, char **argv);
int cmd_swap(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_collapse(int argc, char **argv);
int cmd_ab(int argc, char **argv);
int cmd_version(int argc, char **argv);

/* Print the counters of @name, side by side with @name2 when not NULL. */
void print_stats_table(FILE *f, const char *name, const char *name2);

/* json.c: a string field escaped for any byte (json_writer's is not). */
void json_string_field(json_writer_t *jw, const char *prop, const char *s);
/* json.c: a JSON writer on stdout, pretty-printed under the global -p. */
json_writer_t *json_out_new(void);

/* The global options (collapsectl -j/-p/-d COMMAND ...), as bpftool's. */
extern bool json_pretty;	/* -p: indented JSON (implies -j) */
extern bool verbose;		/* -d: libbpf's debug messages on stderr */

/*
 * openmetrics.c: @n snapshots as OpenMetrics 1.0 text (ending "# EOF"), or
 * as the Prometheus text format 0.0.4 node_exporter's textfile collector
 * reads.
 */
void print_openmetrics(FILE *f, const struct policy_snap *s, int n);
void print_prometheus_text(FILE *f, const struct policy_snap *s, int n);

#endif
