// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl: policy counters and their cgroups' memory as Prometheus
 * text. OpenMetrics 1.0 for scrapers that ask for it, and the classic text
 * format 0.0.4 that node_exporter's textfile collector parses: they differ
 * in the counter family names (OpenMetrics drops "_total" from the family,
 * 0.0.4 keeps it), UNIT lines and the closing "# EOF".
 */
#include <stdio.h>
#include <string.h>

#include "collapsectl.h"

/*
 * Counters that are one fact by a label: calls_<hook>, collapsed_<size>
 * and failed_<reason> are the families hook_calls, collapsed and failed,
 * with the rest of the name as the label.
 */
static const struct labelled {
	const char *prefix, *family, *label, *help;
} labelled[] = {
	{ "calls_", "hook_calls", "hook", "Calls of the policy's hooks, by hook" },
	{ "collapsed_", "collapsed", "size",
	  "Folios collapse made of the policy's ranges, by size" },
	{ "failed_", "failed", "reason", "Collapses that failed, by reason" },
};
#define NR_LABELLED	(sizeof(labelled) / sizeof(labelled[0]))

static const struct labelled *labelled_of(const char *key)
{
	for (size_t i = 0; i < NR_LABELLED; i++)
		if (!strncmp(key, labelled[i].prefix, strlen(labelled[i].prefix)))
			return &labelled[i];
	return NULL;
}

/* A label value: backslash, double quote and newline escaped. */
static void label_value(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* {policy=,cgroup=} and, when @name is set, name=value */
static void labels(FILE *f, const struct policy_snap *s, const char *name,
		   const char *value)
{
	fputs("{policy=", f);
	label_value(f, s->name);
	fputs(",cgroup=", f);
	label_value(f, s->cgroup);
	if (name) {
		fprintf(f, ",%s=", name);
		label_value(f, value);
	}
	fputc('}', f);
}

static void family(FILE *f, bool om, const char *name, const char *type,
		   const char *unit, const char *help)
{
	const char *suffix = !om && !strcmp(type, "counter") ? "_total" : "";

	fprintf(f, "# TYPE collapse_ext_%s%s %s\n", name, suffix, type);
	if (om && unit)
		fprintf(f, "# UNIT collapse_ext_%s %s\n", name, unit);
	fprintf(f, "# HELP collapse_ext_%s%s %s\n", name, suffix, help);
}

/* Has counter @key been written already (it is a family of its own)? */
static bool seen_before(const struct policy_snap *s, int pi, int si)
{
	const char *key = s[pi].stats[si].key;
	int i, j;

	for (i = 0; i <= pi; i++)
		for (j = 0; j < (i == pi ? si : s[i].nstats); j++)
			if (!strcmp(s[i].stats[j].key, key))
				return true;
	return false;
}

static bool snapped(const struct policy_snap *s, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s[i].name, name))
			return true;
	return false;
}

/*
 * What collapsectl apply keeps attached (EXPECTED_FILE, written by each
 * apply) against what is: an alert fires on
 *   collapse_ext_policy_expected unless on (policy) collapse_ext_policy_attached == 1
 * attached is read now from the kernel, for every policy expected or
 * attached.
 */
static void expected(FILE *f, bool om, const struct policy_snap *s, int n)
{
	char name[64], state[16], cg[4096];
	FILE *e = fopen(EXPECTED_FILE, "r");
	int i;

	family(f, om, "policy_expected", "gauge", NULL,
	       "1 for each policy collapsectl apply keeps attached, labelled "
	       "with what the last apply found: attached, pending (no cgroup "
	       "yet) or failed");
	while (e && fscanf(e, "%63s %15s %4095s", name, state, cg) == 3) {
		fputs("collapse_ext_policy_expected{policy=", f);
		label_value(f, name);
		fputs(",cgroup=", f);
		label_value(f, cg);
		fputs(",state=", f);
		label_value(f, state);
		fputs("} 1\n", f);
	}
	family(f, om, "policy_attached", "gauge", NULL,
	       "1 when the policy is attached now, 0 when apply expects it and "
	       "it is not");
	for (i = 0; i < n; i++) {
		fputs("collapse_ext_policy_attached{policy=", f);
		label_value(f, s[i].name);
		fputs("} 1\n", f);
	}
	if (e) {
		rewind(e);
		while (fscanf(e, "%63s %15s %4095s", name, state, cg) == 3) {
			if (snapped(s, n, name))
				continue;
			fputs("collapse_ext_policy_attached{policy=", f);
			label_value(f, name);
			fprintf(f, "} %d\n", policy_attached(name));
		}
		fclose(e);
	}
}

static void print_text(FILE *f, const struct policy_snap *s, int n, bool om)
{
	char help[160];
	size_t l;
	int i, j, k;

	/* One family per counter name, each with every policy that has it. */
	for (i = 0; i < n; i++) {
		for (j = 0; j < s[i].nstats; j++) {
			const char *key = s[i].stats[j].key;

			if (labelled_of(key) || seen_before(s, i, j))
				continue;
			snprintf(help, sizeof(help), "Counter %s of the policy "
				 "(/sys/kernel/mm/collapse_ext/POLICY/stats)", key);
			family(f, om, key, "counter", NULL, help);
			for (k = i; k < n; k++) {
				int m;

				for (m = 0; m < s[k].nstats; m++) {
					if (strcmp(s[k].stats[m].key, key))
						continue;
					fprintf(f, "collapse_ext_%s_total", key);
					labels(f, &s[k], NULL, NULL);
					fprintf(f, " %llu\n", s[k].stats[m].val);
				}
			}
		}
	}
	/* calls_<hook>, collapsed_<size>, failed_<reason>: one family each */
	for (l = 0; l < NR_LABELLED; l++) {
		const struct labelled *lb = &labelled[l];

		family(f, om, lb->family, "counter", NULL, lb->help);
		for (i = 0; i < n; i++)
			for (j = 0; j < s[i].nstats; j++) {
				const char *key = s[i].stats[j].key;

				if (labelled_of(key) != lb)
					continue;
				fprintf(f, "collapse_ext_%s_total", lb->family);
				labels(f, &s[i], lb->label, key + strlen(lb->prefix));
				fprintf(f, " %llu\n", s[i].stats[j].val);
			}
	}
	/* what each policy is: a constant 1 carrying its ids as labels */
	if (om) {
		fputs("# TYPE collapse_ext_policy info\n", f);
		fputs("# HELP collapse_ext_policy Each attached policy: its cgroup's "
		      "id and whether collapsectl pinned it\n", f);
	} else {
		family(f, om, "policy_info", "gauge", NULL, "Each attached policy "
		       "(1): its cgroup's id and whether collapsectl pinned it");
	}
	for (i = 0; i < n; i++) {
		fputs("collapse_ext_policy_info{policy=", f);
		label_value(f, s[i].name);
		fputs(",cgroup=", f);
		label_value(f, s[i].cgroup);
		fprintf(f, ",cgroup_id=\"%llu\",pinned=\"%s\"} 1\n",
			(unsigned long long)s[i].cgroup_id,
			s[i].pinned ? "true" : "false");
	}
	family(f, om, "memory_anon_bytes", "gauge", "bytes",
	       "Anonymous memory of the policy's cgroup (memory.stat anon)");
	for (i = 0; i < n; i++)
		if (s[i].anon >= 0) {
			fputs("collapse_ext_memory_anon_bytes", f);
			labels(f, &s[i], NULL, NULL);
			fprintf(f, " %lld\n", s[i].anon);
		}
	family(f, om, "memory_anon_thp_bytes", "gauge", "bytes",
	       "Anonymous memory in huge pages of the policy's cgroup "
	       "(memory.stat anon_thp)");
	for (i = 0; i < n; i++)
		if (s[i].anon_thp >= 0) {
			fputs("collapse_ext_memory_anon_thp_bytes", f);
			labels(f, &s[i], NULL, NULL);
			fprintf(f, " %lld\n", s[i].anon_thp);
		}
	expected(f, om, s, n);
	if (om)
		fputs("# EOF\n", f);
}

void print_openmetrics(FILE *f, const struct policy_snap *s, int n)
{
	print_text(f, s, n, true);
}

void print_prometheus_text(FILE *f, const struct policy_snap *s, int n)
{
	print_text(f, s, n, false);
}
