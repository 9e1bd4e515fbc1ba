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
 * The counters exported, each its own family collapse_ext_<name>_total: a
 * fixed list (collapsectl(8), METRICS), whatever lines the kernel's fdinfo
 * has. A counter a later kernel adds is exported once it is listed here.
 */
static const struct counter {
	const char *key, *help;
} counters[] = {
	{ "ranges_scanned", "PMD-sized ranges the policy let through to the scan" },
	{ "vetoes", "PMD-sized ranges the policy's pte_limits vetoed" },
	{ "orders_declined", "Scanned ranges the policy's orders answer left alone" },
	{ "order_vetoes", "Orders below PMD of a range pte_limits vetoed" },
	{ "limits_clamped", "pte_limits answers clamped" },
	{ "orders_clamped", "orders answers naming an order sysfs does not allow" },
	{ "target_node_chosen", "target_node answers used" },
	{ "target_node_invalid", "target_node answers naming no online node" },
	{ "target_node_disallowed", "target_node answers outside cpuset or mempolicy" },
	{ "target_node_fallback", "Collapses that fell back from the chosen node" },
	{ "batches", "MADV_COLLAPSE batches" },
	{ "batch_pmds", "PMDs the MADV_COLLAPSE batches held" },
	{ "batch_size_clamped", "batch_size answers clamped" },
	{ "lock_yields", "Times a MADV_COLLAPSE batch let mmap_lock waiters in" },
	{ "khugepaged_passes", "khugepaged passes sized by the policy" },
	{ "khugepaged_pass_pages", "Pages of the khugepaged passes sized by the policy" },
	{ "pass_size_clamped", "pass_size answers clamped" },
	{ "khugepaged_mm_visits", "khugepaged visits of the policy's mms" },
	{ "khugepaged_mm_skips", "khugepaged visits the policy's scan_budget skipped" },
	{ "scan_budget_clamped", "scan_budget answers clamped" },
	{ "scan_budget_declined_pages", "Pages of khugepaged's budget scan_budget declined" },
	{ "collapse_succeeded", "Collapses that succeeded" },
	{ "collapse_failed", "Collapses that failed (by reason: collapse_ext_failed)" },
	{ "already_huge", "Ranges found PMD-mapped already" },
	{ "pages_collapsed", "Base pages collapsed" },
	{ "swaps", "Link updates that replaced the policy" },
	{ "underused_candidates", "Underused THPs the policy judged" },
	{ "underused_split", "Underused THPs split on the policy's verdict" },
	{ "underused_split_failed", "Underused THPs whose split failed" },
	{ "underused_kept", "Underused THPs the policy kept" },
	{ "underused_later", "Underused THPs the policy left for a later scan" },
	{ "underused_zero_pages", "Zero-filled subpages of the THPs split" },
	{ "underused_pages_compared", "Subpages compared with the zero page" },
	{ "underused_clamped", "split_underused answers clamped" },
};
#define NR_COUNTERS	(sizeof(counters) / sizeof(counters[0]))

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
	size_t c, l;
	int i, j;

	/* One family per listed counter, each with every policy that has it. */
	for (c = 0; c < NR_COUNTERS; c++) {
		family(f, om, counters[c].key, "counter", NULL, counters[c].help);
		for (i = 0; i < n; i++)
			for (j = 0; j < s[i].nstats; j++) {
				if (strcmp(s[i].stats[j].key, counters[c].key))
					continue;
				fprintf(f, "collapse_ext_%s_total", counters[c].key);
				labels(f, &s[i], NULL, NULL);
				fprintf(f, " %llu\n", s[i].stats[j].val);
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
