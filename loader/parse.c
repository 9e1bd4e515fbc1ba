// SPDX-License-Identifier: GPL-2.0
/*
 * Command-line numbers, read strictly: a value with anything left over
 * ("12x", "10q") is an error, never the number in front of it.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collapsectl.h"

int parse_pid(const char *s, pid_t *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > INT_MAX)
		return -EINVAL;
	*pid = v;
	return 0;
}

/* Seconds: a number, or a number and one of the units ms, s, m, h */
int parse_seconds(const char *s, double *secs)
{
	static const struct { const char *unit; double secs; } units[] = {
		{ "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "m", 60 }, { "h", 3600 },
	};
	char *end;
	double v;
	size_t i;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || !(v > 0))
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit)) {
			*secs = v * units[i].secs;
			return 0;
		}
	}
	return -EINVAL;
}
