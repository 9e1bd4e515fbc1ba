// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl status: one view of what apply keeps (STATUS_FILE, written
 * by its last pass) and of what is attached now (the kernel's links), the
 * policies loaded by hand included. What cannot be read without privilege
 * is said to be unknown, never guessed.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collapsectl.h"

static const char status_usage[] =
"Usage: collapsectl status [--json]\n"
"\n"
"Every policy apply keeps and every policy attached now, one block each:\n"
"what the last apply pass found (attached, pending, failed) and said of\n"
"it, whether it is attached now and where (cgroup, link id), its object\n"
"and knobs, and who owns it: apply (its policies.conf line), hand\n"
"(collapsectl load), or other (attached by another tool). The file and\n"
"the time of apply's last pass come first (" STATUS_FILE ",\n"
"readable by anyone). Reading the links takes CAP_SYS_ADMIN: without it\n"
"what is attached now is \"unknown\".\n"
"  --json   one object: apply {file, pass_time (seconds since the epoch),\n"
"           age_s} or null, links_readable, policies [{name, owner,\n"
"           expected (apply's state or null), attached (true, false or\n"
"           null: unknown), line (and file, for a drop-in's), cgroup,\n"
"           link_id, object, knobs, message}]\n";

#define MAX_LINES	256

struct line {
	int nr;
	char file[PATH_MAX];	/* FILE or the drop-in of the line */
	char name[32], state[16];
	char cgroup[PATH_MAX], object[PATH_MAX];
	char knobs[512], message[512];
};

static struct line lines[MAX_LINES];

/* Split a STATUS_FILE line in place into at most @max tab-separated fields */
static int fields(char *s, char **f, int max)
{
	int n = 0;

	s[strcspn(s, "\n")] = 0;
	while (n < max) {
		f[n++] = s;
		s = strchr(s, '\t');
		if (!s)
			break;
		*s++ = 0;
	}
	return n;
}

/* apply's last pass: its lines; -1 when there is no STATUS_FILE */
static int read_status(char *file, size_t flen, long long *when)
{
	char buf[PATH_MAX * 4], *f[9];
	FILE *fp = fopen(STATUS_FILE, "r");
	int n = 0;

	if (!fp)
		return -1;
	while (fgets(buf, sizeof(buf), fp)) {
		int nf = fields(buf, f, 9);

		if (nf == 4 && !strcmp(f[0], "pass")) {
			*when = atoll(f[1]);
			snprintf(file, flen, "%s", f[3]);
		} else if (nf == 9 && !strcmp(f[0], "line") && n < MAX_LINES) {
			struct line *l = &lines[n++];

			l->nr = atoi(f[1]);
			snprintf(l->name, sizeof(l->name), "%s", f[2]);
			snprintf(l->state, sizeof(l->state), "%s", f[3]);
			snprintf(l->cgroup, sizeof(l->cgroup), "%s", f[4]);
			snprintf(l->object, sizeof(l->object), "%s", f[5]);
			snprintf(l->knobs, sizeof(l->knobs), "%s", f[6]);
			snprintf(l->message, sizeof(l->message), "%s", f[7]);
			snprintf(l->file, sizeof(l->file), "%s", f[8]);
		}
	}
	fclose(fp);
	return n;
}

/*
 * Who loaded @name: apply (its record), hand (collapsectl load: pinned),
 * other, or unknown; a name on apply's line is apply's unless one loaded
 * it by hand (apply then leaves it alone)
 */
static const char *owner(const char *name, bool listed, bool pinned,
			 bool readable)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), APPLIED_DIR "/%.31s", name);
	if (!access(path, F_OK))
		return "apply";
	if (!readable)
		return listed ? "apply" : "unknown";
	if (pinned)
		return "hand";
	return listed ? "apply" : "other";
}

static const struct policy_snap *snap_of(const struct policy_snap *s, int n,
					  const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s[i].name, name))
			return &s[i];
	return NULL;
}

struct view {
	const char *name, *owner, *expected, *cgroup, *object, *knobs, *message;
	int line;		/* of apply's file; 0: none */
	const char *file;	/* the file of the line, NULL: apply's FILE */
	int attached;		/* 1, 0, -1: unknown */
	long long link_id;	/* 0: none */
};

static void print_view(const struct view *v)
{
	printf("%s: %s", v->name, v->attached < 0 ? "attached: unknown" :
	       v->attached ? "attached" : "not attached");
	if (v->expected)
		printf(" (apply: %s, line %d%s%s)", v->expected, v->line,
		       v->file ? " of " : "", v->file ?: "");
	printf(", owner %s\n", v->owner);
	printf("  cgroup %s", v->cgroup);
	if (v->link_id)
		printf(", link %lld", v->link_id);
	printf("\n  object %s, knobs %s\n", v->object, v->knobs);
	if (v->message)
		printf("  last: %s\n", v->message);
}

static void json_view(json_writer_t *jw, const struct view *v)
{
	jsonw_start_object(jw);
	json_string_field(jw, "name", v->name);
	json_string_field(jw, "owner", v->owner);
	if (v->expected) {
		json_string_field(jw, "expected", v->expected);
		jsonw_int_field(jw, "line", v->line);
		if (v->file)
			json_string_field(jw, "file", v->file);
	} else {
		jsonw_null_field(jw, "expected");
		jsonw_null_field(jw, "line");
	}
	if (v->attached < 0)
		jsonw_null_field(jw, "attached");
	else
		jsonw_bool_field(jw, "attached", v->attached);
	json_string_field(jw, "cgroup", v->cgroup);
	if (v->link_id)
		jsonw_lluint_field(jw, "link_id", v->link_id);
	else
		jsonw_null_field(jw, "link_id");
	json_string_field(jw, "object", v->object);
	json_string_field(jw, "knobs", v->knobs);
	if (v->message)
		json_string_field(jw, "message", v->message);
	else
		jsonw_null_field(jw, "message");
	jsonw_end_object(jw);
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	static struct policy_snap snaps[MAX_POLICIES];
	char file[PATH_MAX] = "";
	json_writer_t *jw = NULL;
	long long when = 0, age;
	int c, i, n, nsnap, err = 0;
	bool readable;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': jw = json_out_new(); if (!jw) return fail("out of memory"); break;
		case 'h': fputs(status_usage, stdout); return 0;
		default: fputs(status_usage, stderr); return 2;
		}
	}
	if (optind != argc) {
		fputs(status_usage, stderr);
		return 2;
	}
	n = read_status(file, sizeof(file), &when);
	nsnap = snapshot_policies(snaps, MAX_POLICIES, NULL);
	readable = nsnap >= 0;
	if (!readable) {
		err = nsnap;
		nsnap = 0;
	}
	age = when ? (long long)time(NULL) - when : -1;

	if (jw) {
		jsonw_start_object(jw);
		jsonw_name(jw, "apply");
		if (n >= 0) {
			jsonw_start_object(jw);
			json_string_field(jw, "file", file);
			jsonw_lluint_field(jw, "pass_time", when);
			jsonw_int_field(jw, "age_s", age);
			jsonw_end_object(jw);
		} else {
			jsonw_null(jw);
		}
		jsonw_bool_field(jw, "links_readable", readable);
		jsonw_name(jw, "policies");
		jsonw_start_array(jw);
	} else if (n >= 0) {
		printf("apply: %s, last pass %lld s ago\n", file, age);
	} else {
		printf("apply: no pass recorded (" STATUS_FILE ")\n");
	}
	if (!jw && !readable)
		printf("attached now: unknown (%s)\n", links_error(err));
	for (i = 0; n > 0 && i < n; i++) {
		const struct line *l = &lines[i];
		const struct policy_snap *sp = snap_of(snaps, nsnap, l->name);
		struct view v = {
			.name = l->name, .expected = l->state, .line = l->nr,
			.file = strcmp(l->file, file) ? l->file : NULL,
			.owner = owner(l->name, true, sp && sp->pinned, readable),
			.attached = readable ? !!sp : -1,
			.cgroup = sp ? sp->cgroup : l->cgroup,
			.object = l->object, .knobs = l->knobs,
			.message = l->message, .link_id = sp ? sp->link_id : 0,
		};

		if (jw)
			json_view(jw, &v);
		else
			print_view(&v);
	}
	/* attached, and no line of apply's names it */
	for (i = 0; i < nsnap; i++) {
		struct view v = {
			.name = snaps[i].name, .attached = 1,
			.owner = owner(snaps[i].name, false, snaps[i].pinned, readable),
			.cgroup = snaps[i].cgroup, .object = "?", .knobs = "?",
			.link_id = snaps[i].link_id,
		};
		int j;

		for (j = 0; j < (n > 0 ? n : 0); j++)
			if (!strcmp(lines[j].name, snaps[i].name))
				break;
		if (n > 0 && j < n)
			continue;
		if (jw)
			json_view(jw, &v);
		else
			print_view(&v);
	}
	if (jw) {
		jsonw_end_array(jw);
		jsonw_end_object(jw);
		jsonw_destroy(&jw);
	}
	return 0;
}
