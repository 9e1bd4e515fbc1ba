/* SPDX-License-Identifier: GPL-2.0 */
/* collapsectl ab: what cmd_ab.c and ab_reps.c share. */
#ifndef AB_H
#define AB_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "ab_stats.h"

#define MAX_REPS	1000		/* --reps N at most */

/* Set by SIGINT/SIGTERM: end the run going on, clean up, exit 130. */
extern volatile sig_atomic_t ab_interrupted;

/* CLOCK_MONOTONIC in seconds. */
double ab_now(void);
/* Start @cmd in a child that first moves itself into cgroup @cg. */
pid_t ab_start_in(const char *cg, char **cmd, int out_fd);
/* "exit status 3", "killed by signal 9" */
const char *ab_status_str(int status, char *buf, size_t len);
bool ab_status_failed(int status);

/* The --reps mode: 0, 1 (a run failed or an error) or 130. */
int ab_reps(const char *base, const char *files[2], int n, double duration,
	    FILE *csv, char **cmd, const char *primary);

#endif
