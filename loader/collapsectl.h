/* SPDX-License-Identifier: GPL-2.0 */
/* collapsectl: shared declarations of the commands and their helpers. */
#ifndef COLLAPSECTL_H
#define COLLAPSECTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <bpf/libbpf.h>

#define COLLAPSECTL_VERSION	"0.1"
#define CE_SYSFS		"/sys/kernel/mm/collapse_ext"
#define PIN_DIR			"/sys/fs/bpf/collapse_ext"
#define CGROUP_ROOT		"/sys/fs/cgroup"

/* Print "collapsectl: <msg>" on stderr; returns 1 (the exit status). */
int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Is collapse_ext in this kernel? Prints how to get it when not. */
bool kernel_supported(void);
bool require_root(void);

/*
 * For a command taking exactly @nargs arguments and no options: prints
 * @usage on --help (returns 0) or on a wrong count (returns 2, the usage
 * error status); returns -1 when the command should go on.
 */
int check_args(int argc, char **argv, int nargs, const char *usage);

/* The cgroup v2 id of directory @path, or 0 with a message printed. */
uint64_t cgroup_path_id(const char *path);

/* Policy name -> counters and attributes from sysfs. */
struct stat_line {
	char key[64];
	unsigned long long val;
};
int read_stats(const char *name, struct stat_line *out, int max);

/*
 * A policy name the kernel accepts, [A-Za-z0-9_.-]{1,31} but not ".", ".."
 * or "policies" (it names a sysfs directory and a pin); otherwise print
 * why and return false. Checked before a name becomes part of a path.
 */
bool policy_name_ok(const char *name);
int read_attr(const char *name, const char *attr, char *buf, size_t len);
/* Names of the attached policies; returns the count. */
int list_policies(char names[][32], uint64_t *cgids, int max);
/* Name of the policy attached to cgroup @cgid, or NULL. */
const char *policy_on_cgroup(uint64_t cgid, char *buf, size_t len);

/*
 * Open @file, find its collapse_ext_ops map, set cgroup and name (NULL
 * keeps the object's), load it. Prints what went wrong (with the tail of
 * the verifier log) and returns NULL on failure.
 */
struct policy_obj {
	struct bpf_object *obj;
	struct bpf_map *map;
	char name[32];
};
int policy_open_load(struct policy_obj *po, const char *file, uint64_t cgid,
		     const char *name);
/* Attach as a link; explains EBUSY (naming the holder) and friends. */
struct bpf_link *policy_attach(struct policy_obj *po, uint64_t cgid);
void policy_close(struct policy_obj *po);

int cmd_load(int argc, char **argv);
int cmd_unload(int argc, char **argv);
int cmd_swap(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_collapse(int argc, char **argv);
int cmd_ab(int argc, char **argv);

/* Print the counters of @name, side by side with @name2 when not NULL. */
void print_stats_table(FILE *f, const char *name, const char *name2);

#endif
