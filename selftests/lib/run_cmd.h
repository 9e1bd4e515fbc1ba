/* SPDX-License-Identifier: GPL-2.0 */
/* Run a shell command, capture its output, return its exit status. */
#ifndef RUN_CMD_H
#define RUN_CMD_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Run the command made from @fmt with sh -c, stdout and stderr captured
 * into @out (NUL-terminated, truncated to @len). Returns the exit status,
 * 128 + signal when killed, -1 when it could not run.
 */
int run_cmd(char *out, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The same, run as @uid (and gid) without capabilities. */
int run_cmd_as(uid_t uid, char *out, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * run_cmd() as root in a private mount namespace whose
 * /sys/kernel/btf/vmlinux has no struct collapse_ext_ops: a kernel without
 * collapse_ext, as collapsectl sees one. The command must not hold a '.
 */
int run_cmd_without_ce(char *out, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Number of lines in @s. */
int count_lines(const char *s);
/* Occurrences of @needle in @s */
int count_matches(const char *s, const char *needle);

/* Detach every policy collapsectl pinned; forget what apply loaded. */
void unload_pinned_policies(void);

/*
 * Print @text (the output of a command) as an artifact the host checks
 * after the run with a real parser (selftests/vm/check-artifacts): KIND is
 * openmetrics, prometheus or json, LABEL names what the host expects of it.
 */
void emit_artifact(const char *kind, const char *label, const char *text);

#endif
