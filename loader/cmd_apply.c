// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl apply: make the pinned policies those a file lists (the
 * collapse-ext.service does this at boot), idempotently; --unload detaches
 * what it loaded. What apply loaded is recorded in STATE_DIR/NAME (its
 * link id, object path and content hash, cgroup id), so that running it
 * again changes only what changed, and never touches a policy loaded by
 * hand: a pinned policy is apply's only if its link is the one recorded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <getopt.h>
#include <limits.h>
#include <glob.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "collapsectl.h"
#include "ops_data.h"

#define STATE_DIR	APPLIED_DIR
#define LOCK_FILE	"/run/collapse_ext/apply.lock"
#define FOLLOW_INTERVAL_S	60
#define MAX_LINES	256

static const char apply_usage[] =
"Usage: collapsectl apply [--json] [--detailed-exitcode] [--strict] FILE\n"
"       collapsectl apply --follow [--interval TIME] [--reread] [--detach-on-exit]\n"
"                             FILE\n"
"       collapsectl apply [--json] --check [--strict | --offline] FILE\n"
"       collapsectl apply [--json] [--detailed-exitcode] --plan [--strict] FILE\n"
"       collapsectl apply [--json] --unload\n"
"       collapsectl apply --reload PID\n"
"\n"
"Load the policies FILE lists, one per line:\n"
"\n"
"  NAME OBJECT CGROUP [VAR=VALUE]...      # a comment\n"
"\n"
"  NAME    the policy's name, 1 to 31 of [A-Za-z0-9_.-]\n"
"  OBJECT  a .bpf.o path (relative: to FILE's directory), or an installed\n"
"          policy by name (priority = priority.bpf.o in\n"
"          /usr/lib/collapse_ext/bpf or /usr/share/collapse_ext/bpf)\n"
"  CGROUP  /sys/fs/cgroup/..., a path relative to /sys/fs/cgroup, / for the\n"
"          root, or a systemd unit: web.slice, a-b.slice (a.slice/a-b.slice),\n"
"          foo.service, foo.scope, .socket, .mount, .swap (its ControlGroup,\n"
"          from systemd; for a unit systemd does not know, or without\n"
"          systemd, the one directory of that name in the cgroup tree)\n"
"  VAR=VALUE  a knob, as collapsectl load --set VAR=VALUE writes it (a\n"
"          const volatile global of the policy, or flags=NO_YIELD)\n"
"\n"
"Running it again changes only what changed: a policy already loaded from\n"
"the same object (path and content) and knobs is left alone, one from\n"
"another object or with other knobs is swapped atomically, one on another\n"
"cgroup is detached and loaded again, and one an earlier apply loaded that\n"
"FILE no longer lists is detached.\n"
"A policy loaded by hand (collapsectl load) is never changed by it: a\n"
"line naming one is reported and skipped.\n"
"Then the lines of FILE's drop-ins: the *.conf files of FILE without\n"
"\".conf\" plus \".d\" (/etc/collapse_ext/policies.d/), in name order, as if\n"
"they followed FILE's (a relative OBJECT is found next to its own file).\n"
"Every bad line is reported as FILE:LINE: and skipped; the others apply.\n"
"A line whose cgroup does not exist (a unit not started yet, a service\n"
"restarting) is pending: a warning, not a failure; the policy is attached\n"
"by the first apply that finds the cgroup.\n"
"\n"
"  --follow   stay running (the service does): apply FILE again whenever a\n"
"             cgroup appears (inotify on the cgroup root, every slice, and\n"
"             the nearest existing parent of each listed path), whenever\n"
"             the kernel detaches a policy because its cgroup was removed\n"
"             (EPOLLHUP on its pinned link), and every --interval; so a\n"
"             policy is attached when its unit starts, and again after the\n"
"             unit restarts. After the\n"
"             first pass only changes are printed. SIGHUP: run collapsectl\n"
"             again, the binary now installed, which applies FILE as read\n"
"             then (the service's reload); SIGTERM, SIGINT: detach every\n"
"             policy apply loaded and exit. Under systemd ($NOTIFY_SOCKET)\n"
"             their links go to the service's file descriptor store\n"
"             (FileDescriptorStoreMax=) instead: systemctl restart keeps\n"
"             them attached, and the next start takes them back;\n"
"             systemctl stop closes the store, and the kernel detaches them\n"
"  --detach-on-exit\n"
"             with --follow, detach on SIGTERM even under systemd: a\n"
"             restart starts from nothing\n"
"  --reread   with --follow, read each object again on every pass, so that\n"
"             a .bpf.o replaced on disk goes live within --interval; by\n"
"             default --follow reads each object once, and a new one goes\n"
"             live on reload (SIGHUP: systemctl reload collapse-ext)\n"
"  --interval TIME\n"
"             with --follow, apply at least this often (default 60s;\n"
"             1s to 24h, e.g. 30, 5m)\n"
"  --check    only verify FILE: every line parsed, its object loaded into\n"
"             the kernel (the verifier's verdict) and its cgroup found (or\n"
"             pending), but nothing attached, detached or swapped; exit 0\n"
"             when every line would apply, 1 otherwise\n"
"  --offline  with --check: neither root nor a collapse_ext kernel needed\n"
"             (a fleet's configuration CI): every line parsed, its object\n"
"             opened, its knobs checked against the object's types and its\n"
"             hooks against both bases' collapse_ext_ops (pass_size on the\n"
"             root only); the object is not loaded (no verifier) and the\n"
"             cgroup only checked for its form, never looked up\n"
"  --plan     print what a pass would do to each line and to each policy\n"
"             apply loaded that FILE no longer lists (load, swap, move,\n"
"             detach, unchanged, pending), and change nothing; the objects\n"
"             are not loaded (apply --check does that)\n"
"  --strict   a line whose cgroup does not exist (a unit not running, a\n"
"             path not made) is an error, not pending\n"
"  --unload   detach every policy apply loaded\n"
"  --reload PID\n"
"             make the apply --follow of process PID apply its file again,\n"
"             read anew (SIGHUP), and return when that pass is done (the\n"
"             service's ExecReload: systemctl reload returns then)\n"
"  --detailed-exitcode\n"
"             exit 4, not 0, when every line applied and something changed\n"
"             (a policy loaded, swapped, moved or detached); with --plan,\n"
"             when a pass would change something\n"
"\n"
"  --json     print one JSON object: the file, the mode (with --check,\n"
"             offline: true or false), the events in\n"
"             order ({policy, action: loaded, swapped, moved, unchanged,\n"
"             detached, ok, pending; with --plan load, swap, move, detach,\n"
"             unchanged, pending; message}, or {line, level: error or\n"
"             warning, message}), the counts applied, changed, pending,\n"
"             errors, and the exit status; errors still go to stderr too\n"
"\n"
"One apply (or --unload, or a --follow pass) runs at a time: another waits\n"
"for it (" LOCK_FILE ").\n"
"What each listed policy is (attached, pending or failed) is written to\n"
EXPECTED_FILE " after each apply; collapsectl stats --openmetrics\n"
"reports it as collapse_ext_policy_expected and _attached.\n"
"\n"
"Exit status: 0 all applied (or pending); 3 some lines failed, the rest\n"
"applied; 1 nothing applied (unreadable FILE, every line bad, no\n"
"collapse_ext, no CAP_SYS_ADMIN), or with --check a line that would not\n"
"apply;\n"
"2 usage; 4 with --detailed-exitcode, all applied and something changed\n"
"(--plan: would change).\n"
"--follow exits only on SIGTERM or SIGINT: 0, or 3 when a policy could\n"
"not be detached.\n";

struct entry {
	int line;
	char last[256];		/* what this pass last said of it */
	bool pending;		/* its cgroup does not exist (yet) */
	bool moving;		/* detached from another cgroup first */
	char from[256];
	char note[256];		/* why it is pending */
	char spec[256];		/* CGROUP as the line has it */
	struct knobs knobs;	/* VAR=VALUE fields after CGROUP */
	char name[32];
	char object[PATH_MAX];
	char cgroup[PATH_MAX];
	uint64_t hash;		/* of the object's content and the knobs */
	uint64_t cgid;
	bool ok;
};

struct state {
	uint64_t link_id;
	uint64_t map_id;	/* the link's struct_ops map as apply left it */
	uint64_t hash;
	uint64_t cgid;
	char object[PATH_MAX];
};

static struct entry ents[MAX_LINES];
static int nr_ents;
static const char *conf;
/*
 * FILE, then its drop-ins (the *.conf files of the directory named as FILE
 * without ".conf", plus ".d", in name order), read whole before a pass. --follow reads them once (and again
 * on SIGHUP, as a new process): a cgroup event applies the files that
 * were checked, never one an editor is halfway through writing.
 */
#define MAX_SOURCES	64
#define MAX_CONF	(1 << 20)
static struct source {
	char path[PATH_MAX];
	char *text;
	size_t len;
} sources[MAX_SOURCES];
static int nr_sources;

/*
 * An entry's line, across sources: the source's index above the line
 * number, so that a drop-in's line 3 is not FILE's
 */
#define LINE_ID(src, n)		((src) << 20 | (n))
#define LINE_SRC(id)		((id) >> 20)
#define LINE_NR(id)		((id) & ((1 << 20) - 1))

/* "FILE:N", the path of the source of line @id and its number */
static const char *where(int id, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%d", sources[LINE_SRC(id)].path, LINE_NR(id));
	return buf;
}
static int errors, nr_applied, nr_changed, nr_pending;
static bool follow;		/* --follow */
static bool offline;		/* --check --offline: no kernel, no cgroups */
static bool strict;		/* --strict: no pending line */
static bool reread;		/* --follow --reread: objects read every pass */
static bool detach_on_exit;	/* --follow: no hand-over to systemd's store */
static bool quiet;		/* --follow after its first pass: changes only */
static bool plan;		/* --plan: say what a pass would do, do nothing */
static int nr_unchanged;	/* --plan's count of lines left as they are */

/*
 * --json: what a pass did, as events in order ({"policy", "action",
 * "message"}, or {"line", "level", "message"} for a bad or pending line),
 * then the counts and the exit status; stdout holds nothing else.
 */
static json_writer_t *jw;

static void event(const char *name, int line, const char *action,
		  const char *level, const char *msg)
{
	jsonw_start_object(jw);
	if (name)
		json_string_field(jw, "policy", name);
	if (line) {
		jsonw_int_field(jw, "line", LINE_NR(line));
		if (LINE_SRC(line))
			json_string_field(jw, "file", sources[LINE_SRC(line)].path);
	}
	if (action)
		jsonw_string_field(jw, "action", action);
	if (level)
		jsonw_string_field(jw, "level", level);
	json_string_field(jw, "message", msg);
	jsonw_end_object(jw);
}

/* @msg, the last word of this pass on the entry of @line (0: of @name) */
static void remember(int line, const char *name, const char *msg)
{
	int i;

	for (i = 0; i < MAX_LINES; i++) {
		bool match = line ? ents[i].line == line :
			     name && ents[i].line && !strcmp(ents[i].name, name);

		if (match) {
			snprintf(ents[i].last, sizeof(ents[i].last), "%.255s", msg);
			return;
		}
	}
}

/* "NAME: message" on stdout, or an event with its ACTION under --json. */
static void report(const char *name, const char *action, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void report(const char *name, const char *action, const char *fmt, ...)
{
	char msg[PATH_MAX * 2 + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (jw)
		event(name, 0, action, NULL, msg);
	else
		printf("%s: %s\n", name, msg);
	remember(0, name, msg);
}

static void line_error(int line, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void line_error(int line, const char *fmt, ...)
{
	char msg[PATH_MAX * 2 + 256], at[PATH_MAX + 16];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s%s: %s\n", journal_prio(LOG_ERR),
		where(line, at, sizeof(at)), msg);
	if (jw)
		event(NULL, line, NULL, "error", msg);
	errors++;
	remember(line, NULL, msg);
}

/* FNV-1a of a string, never 0: --offline's stand-in for a cgroup id */
static uint64_t hash_str(const char *str)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*str)
		h = (h ^ (unsigned char)*str++) * 0x100000001b3ULL;
	return h ?: 1;
}

/* FNV-1a of the file: tells a rebuilt object from the one loaded. */
static int hash_file(const char *path, uint64_t *hash)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	FILE *f = fopen(path, "r");
	int c;

	if (!f)
		return -errno;
	while ((c = getc(f)) != EOF)
		h = (h ^ (unsigned char)c) * 0x100000001b3ULL;
	fclose(f);
	*hash = h;
	return 0;
}

/*
 * @out (PATH_MAX bytes): OBJECT as a canonical path, relative to the
 * directory of the file of line @id
 */
static int resolve_object(const char *spec, int id, char *out)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", sources[LINE_SRC(id)].path);
	return policy_find(spec, dirname(dir), out);
}

static uint64_t pinned_link_id(const char *name)
{
	uint64_t map_id;

	return pinned_link(name, &map_id);
}

static void state_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, STATE_DIR "/%s", name);
}

static bool read_state(const char *name, struct state *st)
{
	char path[PATH_MAX], line[PATH_MAX + 16];
	unsigned long long l, h, id;
	int got = 0;
	FILE *f;

	state_path(path, sizeof(path), name);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "link_id %llu", &l) == 1)
			st->link_id = l, got |= 1;
		else if (sscanf(line, "map_id %llu", &l) == 1)
			st->map_id = l;	/* older records have none */
		else if (sscanf(line, "hash %llx", &h) == 1)
			st->hash = h, got |= 2;
		else if (sscanf(line, "cgroup_id %llu", &id) == 1)
			st->cgid = id, got |= 4;
		else if (!strncmp(line, "object ", 7))
			snprintf(st->object, sizeof(st->object), "%.4095s", line + 7), got |= 8;
	}
	fclose(f);
	return got == 15;
}

/* Is @name pinned with the link apply recorded (not loaded by hand)? */
static bool ours(const char *name, struct state *st)
{
	uint64_t id = pinned_link_id(name);

	return id && read_state(name, st) && st->link_id == id;
}

/*
 * Is @name's link, attached but not pinned, the one apply recorded? So it
 * is while a restart of the service holds it in systemd's store (the
 * start's `apply --check` runs then), never for a policy loaded by hand.
 */
static bool in_store(const char *name)
{
	char buf[32];
	struct state st;

	return !pinned_link_id(name) && read_state(name, &st) &&
	       !read_attr(name, "link_id", buf, sizeof(buf)) &&
	       strtoull(buf, NULL, 10) == st.link_id;
}

static int write_state(const struct entry *e)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	uint64_t link_id, map_id;
	FILE *f;

	mkdir("/run/collapse_ext", 0755);
	mkdir(STATE_DIR, 0755);
	state_path(path, sizeof(path), e->name);
	snprintf(tmp, sizeof(tmp), "%s~", path);	/* not a policy name */
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	link_id = pinned_link(e->name, &map_id);
	fprintf(f, "link_id %llu\nmap_id %llu\nhash %016llx\ncgroup_id %llu\n"
		"object %s\n", (unsigned long long)link_id,
		(unsigned long long)map_id, (unsigned long long)e->hash,
		(unsigned long long)e->cgid, e->object);
	if (fclose(f) || rename(tmp, path))
		return -errno;
	return 0;
}

static void drop_state(const char *name)
{
	char path[PATH_MAX];

	state_path(path, sizeof(path), name);
	unlink(path);
}

/* Names with a state file: the policies apply loaded. */
static int applied_names(char names[][32], int max)
{
	DIR *d = opendir(STATE_DIR);
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max)
		if (policy_name_valid(de->d_name))
			snprintf(names[n++], 32, "%.31s", de->d_name);
	closedir(d);
	return n;
}

static bool pinned(const char *name)
{
	char pin[256];

	pin_path(pin, sizeof(pin), name);
	return !access(pin, F_OK);
}

/*
 * Detach what apply loaded and forget it; a record whose pin is gone, or
 * now holds a policy loaded by hand, just goes.
 */
static int unload_applied(const char *name, const char *why)
{
	struct state st;
	bool was = ours(name, &st);

	if (was && policy_unpin(name))
		return 1;
	drop_state(name);
	if (was) {
		report(name, "detached", "detached (%s)", why);
		nr_changed++;
	}
	return 0;
}

/*
 * One line: "NAME OBJECT CGROUP [VAR=VALUE]...", with a comment already
 * cut off.
 */
static void parse_line(struct entry *e, char *text)
{
	char *tok[3 + MAX_KNOBS], *t, why[PATH_MAX + 128], obj[PATH_MAX];
	struct stat st;
	int n = 0, err, i;

	e->ok = false;
	for (t = strtok(text, " \t\r"); t; t = strtok(NULL, " \t\r"))
		if (n++ < 3 + MAX_KNOBS)
			tok[n - 1] = t;
	if (n < 3) {
		line_error(e->line, "expected 'NAME OBJECT CGROUP [VAR=VALUE]...', "
			   "found %d field%s", n, n == 1 ? "" : "s");
		return;
	}
	if (n > 3 + MAX_KNOBS) {
		line_error(e->line, "more than %d knobs", MAX_KNOBS);
		return;
	}
	for (i = 3; i < n; i++) {
		if (knobs_add(&e->knobs, tok[i], why, sizeof(why))) {
			line_error(e->line, "%s: %s", tok[0], why);
			return;
		}
	}
	if (!policy_name_valid(tok[0])) {
		line_error(e->line, "'%s' is not a policy name: use %s", tok[0],
			   policy_name_rule);
		return;
	}
	snprintf(e->name, sizeof(e->name), "%s", tok[0]);
	err = resolve_object(tok[1], e->line, obj);
	if (err) {
		line_error(e->line, "%s: object '%s' not found (%s)", e->name,
			   tok[1], strerror(-err));
		return;
	}
	snprintf(e->object, sizeof(e->object), "%s", obj);
	if (follow && !reread ? policy_object_snapshot(e->object, &e->hash) :
	    hash_file(e->object, &e->hash)) {
		line_error(e->line, "%s: cannot read %s", e->name, e->object);
		return;
	}
	/* a changed knob is a changed policy: swapped, as a new object is */
	e->hash = knobs_hash(&e->knobs, e->hash);
	snprintf(e->spec, sizeof(e->spec), "%.255s", tok[2]);
	if (offline) {
		err = cgroup_spec_check(tok[2], e->cgroup, sizeof(e->cgroup), why,
					sizeof(why));
		if (err) {
			line_error(e->line, "%s: %s", e->name, why);
			return;
		}
		/* the same cgroup twice is told by its path or unit name */
		e->cgid = hash_str(e->cgroup);
		e->ok = true;
		return;
	}
	err = cgroup_resolve(tok[2], e->cgroup, sizeof(e->cgroup), why, sizeof(why));
	if (err == -ENOENT && e->cgroup[0] && !stat(e->cgroup, &st)) {
		line_error(e->line, "%s: %s is not a cgroup directory", e->name,
			   e->cgroup);
		return;
	}
	if (err == -ENOENT && strict) {
		line_error(e->line, "%s: %s (--strict)", e->name, why);
		return;
	}
	if (err == -ENOENT) {
		/*
		 * Not started yet: attached when its cgroup appears. A path
		 * is kept resolved (its parent is watched); a unit, which is
		 * found wherever systemd puts it, by its name.
		 */
		if (!e->cgroup[0])
			snprintf(e->cgroup, sizeof(e->cgroup), "%s", tok[2]);
		snprintf(e->note, sizeof(e->note), "%.255s", why);
		e->pending = true;
		return;
	}
	if (err) {
		line_error(e->line, "%s: %s", e->name, why);
		return;
	}
	e->cgid = cgroup_path_id(e->cgroup);
	if (!e->cgid) {
		line_error(e->line, "%s: %s is not a usable cgroup (above)", e->name,
			   e->cgroup);
		return;
	}
	e->ok = true;
}

/* Read FILE and its drop-ins into sources[]: 0 or -errno (FILE's) */
static int load_sources(void)
{
	char pattern[PATH_MAX];
	size_t n = strlen(conf);
	glob_t g = {};
	int i, err = 0;

	for (i = 0; i < nr_sources; i++)
		free(sources[i].text);
	nr_sources = 0;
	snprintf(pattern, sizeof(pattern), "%.*s.d/*.conf",
		 (int)(n > 5 && !strcmp(conf + n - 5, ".conf") ? n - 5 : n), conf);
	glob(pattern, 0, NULL, &g);	/* sorted; none is fine */
	for (i = -1; i < (int)g.gl_pathc && nr_sources < MAX_SOURCES; i++) {
		struct source *src = &sources[nr_sources];
		FILE *f = fopen(i < 0 ? conf : g.gl_pathv[i], "r");

		if (!f) {
			if (i < 0) {
				err = -errno;
				break;
			}
			fail("%s: %s: skipped", g.gl_pathv[i], strerror(errno));
			errors++;
			continue;
		}
		snprintf(src->path, sizeof(src->path), "%s", i < 0 ? conf : g.gl_pathv[i]);
		src->text = malloc(MAX_CONF);
		src->len = src->text ? fread(src->text, 1, MAX_CONF - 1, f) : 0;
		fclose(f);
		if (!src->text || src->len == MAX_CONF - 1) {
			fail("%s: %s", src->path, src->text ? "larger than 1 MiB" :
			     strerror(ENOMEM));
			free(src->text);
			if (i < 0) {
				err = -EFBIG;
				break;
			}
			errors++;
			continue;
		}
		if (!src->len)		/* fmemopen() wants a size */
			src->text[src->len++] = '\n';
		nr_sources++;
	}
	if (!err && g.gl_pathc >= MAX_SOURCES)
		fail("more than %d drop-ins: the rest are ignored", MAX_SOURCES - 1);
	globfree(&g);
	return err;
}

static int read_conf(struct entry *ents, int max, int *nlisted,
		     char listed[][32])
{
	char text[PATH_MAX * 2 + 64], at[PATH_MAX + 16];
	int n = 0, line, i, src;

	*nlisted = 0;
	for (src = 0; src < nr_sources; src++) {
		FILE *f = fmemopen(sources[src].text, sources[src].len, "r");

		if (!f)
			return -errno;
		line = LINE_ID(src, 0);
		while (fgets(text, sizeof(text), f)) {
			char first[64];
			int c;

			line++;
			if (!strchr(text, '\n') && !feof(f)) {
				while ((c = getc(f)) != EOF && c != '\n')
					;
				line_error(line, "line too long (more than %zu bytes)",
					   sizeof(text) - 2);
				continue;
			}
			text[strcspn(text, "#\n")] = 0;
			if (sscanf(text, "%63s", first) != 1)
				continue;
			if (n == max) {
				line_error(line, "more than %d policies: ignored", max);
				continue;
			}
			/* Listed, even on a bad line: an earlier one is kept. */
			if (*nlisted < max)
				snprintf(listed[(*nlisted)++], 32, "%.31s", first);
			ents[n].line = line;
			parse_line(&ents[n], text);
			for (i = 0; (ents[n].ok || ents[n].pending) && i < n; i++) {
				if (!ents[i].ok && !ents[i].pending)
					continue;
				if (!strcmp(ents[i].name, ents[n].name)) {
					line_error(line, "%s: already listed at %s",
						   ents[n].name,
						   where(ents[i].line, at, sizeof(at)));
					ents[n].ok = ents[n].pending = false;
				} else if (ents[n].ok && ents[i].ok &&
					   ents[i].cgid == ents[n].cgid) {
					line_error(line, "%s: cgroup %s already has %s "
						   "(%s): one policy per cgroup",
						   ents[n].name, ents[n].cgroup,
						   ents[i].name,
						   where(ents[i].line, at, sizeof(at)));
					ents[n].ok = false;
				}
			}
			n++;
		}
		fclose(f);
	}
	return n;
}

/*
 * An entry whose policy apply loaded on another cgroup: detach it first,
 * all of them before any load, so that two policies can trade cgroups.
 */
static void detach_moving(struct entry *e)
{
	struct state st;
	char buf[32];

	if (!ours(e->name, &st) || !policy_attached(e->name) ||
	    read_attr(e->name, "cgroup_id", buf, sizeof(buf)) ||
	    strtoull(buf, NULL, 10) == e->cgid)
		return;
	if (read_attr(e->name, "cgroup", e->from, sizeof(e->from)))
		e->from[0] = 0;
	if (policy_unpin(e->name)) {
		line_error(e->line, "%s: cannot detach it from %s to move it (above)",
			   e->name, e->from);
		e->ok = false;
		return;
	}
	e->moving = true;
}

/*
 * --check: what the line names can be loaded (the object's policy through
 * the verifier, never attached). A policy loaded by hand under the name
 * would be left alone by apply: reported as it would be.
 */
static void check_entry(const struct entry *e)
{
	struct policy_obj po;
	struct state st;
	uint64_t cgid = e->cgid;

	if (e->pending) {
		/* the object is still verified, as if on the root */
		cgid = cgroup_path_id(CGROUP_ROOT);
		if (!cgid)
			return line_error(e->line, "%s: cannot read the root cgroup's id",
					  e->name);
	}
	if (policy_attached(e->name) && !ours(e->name, &st) &&
	    !in_store(e->name)) {
		line_error(e->line, "%s: loaded by hand, not by apply: apply would "
			   "leave it alone", e->name);
		return;
	}
	if (policy_open_load(&po, e->object, cgid, e->name, &e->knobs)) {
		line_error(e->line, "%s: %s would not load (above)", e->name,
			   e->object);
		return;
	}
	policy_close(&po);
	if (e->pending)
		report(e->name, "ok", "ok, %s; pending: %s", e->object, e->note);
	else
		report(e->name, "ok", "ok, %s on %s", e->object, e->cgroup);
}

/*
 * --check --offline: the object opens, its knobs fit its types, its hooks
 * are collapse_ext's (pass_size only on the root); nothing is loaded.
 */
static void check_entry_offline(const struct entry *e)
{
	char hooks[32][OPS_HOOK_LEN], note[160] = "";
	struct policy_obj po;
	const char *only;
	int i, n, bad = 0;

	if (policy_open(&po, e->object, e->name, &e->knobs)) {
		line_error(e->line, "%s: %s would not load (above)", e->name,
			   e->object);
		return;
	}
	if (strcmp(e->cgroup, CGROUP_ROOT) && policy_root_only(&po, e->object)) {
		line_error(e->line, "%s: %s would not load on %s (above)", e->name,
			   e->object, e->spec);
		policy_close(&po);
		return;
	}
	n = ops_data_hooks(po.obj, po.map, hooks, 32);
	for (i = 0; i < n; i++) {
		if (!ops_hook_known(hooks[i], &only)) {
			line_error(e->line, "%s: %s sets '%s', which no collapse_ext "
				   "kernel has (built against another "
				   "collapse_ext_types.h?)", e->name, e->object,
				   hooks[i]);
			bad++;
		} else if (only) {
			snprintf(note, sizeof(note), "; '%.31s' only on %s: "
				 "elsewhere it runs without it", hooks[i], only);
		}
	}
	policy_close(&po);
	if (n < 0)
		line_error(e->line, "%s: %s has no BTF to read its hooks from",
			   e->name, e->object);
	else if (!bad)
		report(e->name, "ok", "ok offline (not loaded), %s for %s%s",
		       e->object, e->cgroup, note);
}

/*
 * A line whose cgroup does not exist yet (a unit not started, a service
 * restarting): a warning, not a failure. A policy apply had attached
 * there was detached by the kernel when the cgroup went: its pin goes
 * too, so the next pass that finds the cgroup loads it again.
 */
static void pending_entry(const struct entry *e)
{
	char at[PATH_MAX + 16];
	struct state st;

	nr_pending++;
	if (pinned(e->name) && ours(e->name, &st)) {
		/*
		 * Gone with its cgroup (the kernel detached it), or still on
		 * the cgroup the line named before: either way not where
		 * the line wants it now.
		 */
		bool attached = policy_attached(e->name);

		if (policy_unpin(e->name)) {
			line_error(e->line, "%s: cannot remove its old pin (above)",
				   e->name);
			return;
		}
		drop_state(e->name);
		report(e->name, "detached", "%s", attached ?
		       "detached: its line names a cgroup that does not exist yet" :
		       "its cgroup is gone: detached by the kernel");
		nr_changed++;
	} else if (quiet) {
		return;
	}
	fprintf(stderr, "%s%s: %s: pending: %s; attached when it appears%s\n",
		journal_prio(LOG_WARNING), where(e->line, at, sizeof(at)),
		e->name, e->note,
		follow ? "" : " and apply runs again (collapsectl apply --follow "
		"does that)");
	if (jw) {
		jsonw_start_object(jw);
		json_string_field(jw, "policy", e->name);
		jsonw_int_field(jw, "line", LINE_NR(e->line));
		if (LINE_SRC(e->line))
			json_string_field(jw, "file", sources[LINE_SRC(e->line)].path);
		jsonw_string_field(jw, "action", "pending");
		jsonw_string_field(jw, "level", "warning");
		json_string_field(jw, "message", e->note);
		jsonw_end_object(jw);
	}
}

/*
 * The cgroup @e resolved to was removed before its policy was attached
 * (a unit that stops, or restarts, while the pass runs; the kernel
 * refused the attach with ENOENT): pending, as if the pass had begun
 * after the removal, so that a cgroup made again at its path is attached
 * by the next pass, at once. The failure would have left no pinned link
 * to report the next removal, and no pending line to watch for the
 * cgroup's return.
 */
static bool gone_meanwhile(struct entry *e)
{
	char path[PATH_MAX], why[PATH_MAX + 128];
	int err = cgroup_resolve(e->spec, path, sizeof(path), why, sizeof(why));

	if (!err && cgroup_path_id(path) != e->cgid)
		snprintf(why, sizeof(why), "%s was made again while it was "
			 "being attached", path);
	else if (err != -ENOENT)
		return false;
	snprintf(e->note, sizeof(e->note), "%.255s", why);
	e->ok = false;
	e->pending = true;
	return true;
}

/* Bring one valid entry to its wanted state. */
static void apply_entry(struct entry *e)
{
	struct state st = {};
	uint64_t map_id;
	bool drifted;

	if (policy_attached(e->name)) {
		if (!ours(e->name, &st)) {
			line_error(e->line, "%s: loaded by hand, not by apply: left "
				   "alone (unload it to let apply manage it)",
				   e->name);
			return;
		}
		/* what runs now, not only what apply recorded */
		pinned_link(e->name, &map_id);
		drifted = st.map_id && map_id != st.map_id;
		if (st.hash == e->hash && !strcmp(st.object, e->object) && !drifted) {
			if (!quiet)
				report(e->name, "unchanged", "unchanged");
			nr_applied++;
			return;
		}
		if (policy_swap(e->name, e->object, &e->knobs)) {
			line_error(e->line, "%s: not swapped (above)", e->name);
			return;
		}
		{
			char knobs[1024] = "";
			FILE *kf = fmemopen(knobs, sizeof(knobs) - 1, "w");

			if (kf) {
				knobs_print(kf, &e->knobs);
				fclose(kf);
			}
			report(e->name, "swapped", "swapped to %s%s%s", e->object, knobs,
			       drifted ? " (the policy running was swapped since "
			       "apply loaded it)" : "");
		}
	} else {
		if (pinned(e->name) && ours(e->name, &st)) {
			/* the kernel detached it when its cgroup was removed */
			policy_unpin(e->name);
			report(e->name, "detached", "its cgroup is gone: detached by the kernel");
		}
		if (policy_load_pinned(e->object, e->cgroup, e->cgid, e->name,
				       &e->knobs, NULL)) {
			if (gone_meanwhile(e)) {
				pending_entry(e);
				return;
			}
			if (e->moving)
				line_error(e->line, "%s: detached from %s, but not "
					   "loaded on %s (above)", e->name,
					   e->from, e->cgroup);
			else
				line_error(e->line, "%s: not loaded (above)", e->name);
			return;
		}
		if (e->moving)
			report(e->name, "moved", "moved from %s to %s", e->from,
			       e->cgroup);
		else
			report(e->name, "loaded", "loaded %s on %s", e->object,
			       e->cgroup);
	}
	nr_applied++;
	nr_changed++;
	if (write_state(e))
		line_error(e->line, "%s: applied, but cannot record it in %s: "
			   "the next apply will not know it", e->name, STATE_DIR);
}

/*
 * One apply at a time: two would each read the other's half-written
 * state. Held until exit; the second waits, saying so.
 */
static int apply_lock(void)
{
	int fd;

	mkdir("/run/collapse_ext", 0755);
	fd = open(LOCK_FILE, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		fail("cannot open %s: %s", LOCK_FILE, strerror(errno));
		return -1;
	}
	if (!flock(fd, LOCK_EX | LOCK_NB))
		return fd;
	if (errno == EWOULDBLOCK) {
		fprintf(stderr, "collapsectl: waiting for another collapsectl "
			"apply to finish (%s)\n", LOCK_FILE);
		if (!flock(fd, LOCK_EX))
			return fd;
	}
	fail("cannot lock %s: %s", LOCK_FILE, strerror(errno));
	close(fd);
	return -1;
}

/*
 * What the file wants and what runs, for the metrics (collapsectl
 * metrics: collapse_ext_policy_expected): one line per listed policy,
 * "NAME STATE CGROUP", STATE attached, pending or failed.
 */
/* @s with tabs and newlines as spaces: one field of STATUS_FILE */
static void status_field(FILE *f, const char *s, bool last)
{
	for (; *s; s++)
		fputc(*s == '\t' || *s == '\n' ? ' ' : *s, f);
	fputc(last ? '\n' : '\t', f);
}

/*
 * STATUS_FILE, for collapsectl status: when the pass ran and on what file,
 * then per listed policy (the first line of a name) its state, cgroup,
 * object, knobs and what the pass last said of it, tab-separated.
 */
static int nr_attached_now, nr_pending_now, nr_failed_now;

static void write_status(const struct entry *ents, const bool *attached_now,
			 int n)
{
	char knobs[MAX_KNOBS * 130], msg[512];
	FILE *f = fopen(STATUS_FILE "~", "w");
	struct timespec mono;
	int i, j, k;
	size_t off;

	nr_attached_now = nr_pending_now = nr_failed_now = 0;
	if (!f)
		return;
	fchmod(fileno(f), 0644);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	fprintf(f, "pass\t%lld\t%lld\t", (long long)time(NULL),
		(long long)mono.tv_sec * 1000000000LL + mono.tv_nsec);
	status_field(f, conf, true);
	for (i = 0; i < n; i++) {
		const struct entry *e = &ents[i];
		bool attached = attached_now[i];

		if (!policy_name_valid(e->name))
			continue;
		for (j = 0; j < i && strcmp(ents[j].name, e->name); j++)
			;
		if (j < i)
			continue;
		for (k = 0, off = 0; k < e->knobs.n && off < sizeof(knobs); k++)
			off += snprintf(knobs + off, sizeof(knobs) - off, "%s%s=%s",
					k ? " " : "", e->knobs.k[k].var,
					e->knobs.k[k].val);
		if (!e->knobs.n)
			strcpy(knobs, "-");
		if (e->last[0])
			snprintf(msg, sizeof(msg), "%s", e->last);
		else if (e->pending)
			snprintf(msg, sizeof(msg), "pending: %s", e->note);
		else
			snprintf(msg, sizeof(msg), "%s", attached ? "unchanged" : "-");
		fprintf(f, "line\t%d\t%s\t%s\t", LINE_NR(e->line), e->name,
			e->pending ? "pending" : attached ? "attached" : "failed");
		if (e->pending)
			nr_pending_now++;
		else if (attached)
			nr_attached_now++;
		else
			nr_failed_now++;
		status_field(f, e->cgroup[0] ? e->cgroup : "-", false);
		status_field(f, e->object[0] ? e->object : "-", false);
		status_field(f, knobs, false);
		status_field(f, msg, false);
		status_field(f, sources[LINE_SRC(e->line)].path, true);
	}
	if (fclose(f) || rename(STATUS_FILE "~", STATUS_FILE))
		unlink(STATUS_FILE "~");
}

static void write_expected(const struct entry *ents, int n)
{
	bool attached[MAX_LINES] = {};
	FILE *f;
	int i, j;

	mkdir("/run/collapse_ext", 0755);
	f = fopen(EXPECTED_FILE "~", "w");
	if (!f)
		return;
	/* for a metrics exporter that is not root (the service's umask is 077) */
	fchmod(fileno(f), 0644);
	for (i = 0; i < n; i++) {
		const struct entry *e = &ents[i];
		const char *state;

		/* read once a pass: the status file says the same */
		attached[i] = e->ok && policy_attached(e->name);
		state = e->pending ? "pending" : attached[i] ? "attached" : "failed";

		if (!policy_name_valid(e->name))
			continue;	/* a line too bad to name a policy */
		for (j = 0; j < i && strcmp(ents[j].name, e->name); j++)
			;
		if (j < i)
			continue;	/* listed twice: the first line counts */
		fprintf(f, "%s %s %s\n", e->name, state, e->cgroup[0] ? e->cgroup : "-");
	}
	if (fclose(f) || rename(EXPECTED_FILE "~", EXPECTED_FILE))
		unlink(EXPECTED_FILE "~");
	write_status(ents, attached, n);
}


/*
 * For --follow: watch the nearest existing ancestor of each listed path,
 * to see a pending cgroup appear or an attached one go. A unit's
 * cgroup is found under a slice, which apply_follow() watches already.
 * Only directories of the cgroup tree are watched.
 */
void follow_watch_listed(int ifd, uint32_t mask)
{
	char dir[PATH_MAX], *slash;
	struct stat st;
	int i;

	for (i = 0; i < nr_ents; i++) {
		if (!ents[i].ok && !ents[i].pending)
			continue;
		if (strncmp(ents[i].cgroup, CGROUP_ROOT "/", strlen(CGROUP_ROOT) + 1))
			continue;	/* a unit, under a slice; or the root */
		snprintf(dir, sizeof(dir), "%s", ents[i].cgroup);
		/* the parent sees the cgroup made or removed */
		while ((slash = strrchr(dir, '/')) && slash - dir >= (int)strlen(CGROUP_ROOT)) {
			*slash = 0;
			if (!stat(dir, &st) && S_ISDIR(st.st_mode)) {
				inotify_add_watch(ifd, dir, mask);
				break;
			}
		}
	}
}

bool follow_pending_appeared(void)
{
	char path[PATH_MAX], why[PATH_MAX + 128];
	int i;

	for (i = 0; i < nr_ents; i++)
		if (ents[i].pending &&
		    !cgroup_resolve(ents[i].spec, path, sizeof(path), why, sizeof(why)))
			return true;
	return false;
}

/*
 * --plan: what apply_entry() (after detach_moving()) would do to @e, or
 * pending_entry() to a pending one, said and counted as they would be,
 * with nothing changed.
 */
static void plan_entry(const struct entry *e)
{
	char buf[32], from[256] = "", knobs[1024] = "";
	struct state st = {};
	bool attached = policy_attached(e->name), mine = ours(e->name, &st);
	uint64_t map_id;
	FILE *kf;

	if (e->pending) {
		nr_pending++;
		if (pinned(e->name) && mine) {
			report(e->name, "detach", "would detach: %s", attached ?
			       "its line names a cgroup that does not exist yet" :
			       "its cgroup is gone (detached by the kernel)");
			nr_changed++;
		} else if (jw) {
			event(e->name, e->line, "pending", "warning", e->note);
			remember(e->line, NULL, e->note);
		} else {
			report(e->name, "pending", "pending: %s", e->note);
		}
		return;
	}
	if (attached && !mine) {
		line_error(e->line, "%s: loaded by hand, not by apply: apply would "
			   "leave it alone", e->name);
		return;
	}
	if (!attached && !mine && pinned(e->name)) {
		line_error(e->line, "%s: a pin apply did not make holds the name: "
			   "apply would fail to load it (collapsectl unload %s)",
			   e->name, e->name);
		return;
	}
	nr_applied++;
	if (attached && !read_attr(e->name, "cgroup_id", buf, sizeof(buf)) &&
	    strtoull(buf, NULL, 10) != e->cgid) {
		if (read_attr(e->name, "cgroup", from, sizeof(from)))
			snprintf(from, sizeof(from), "another cgroup");
		report(e->name, "move", "would move from %s to %s", from,
		       e->cgroup);
		nr_changed++;
		return;
	}
	if (!attached) {
		report(e->name, "load", "would load %s on %s", e->object,
		       e->cgroup);
		nr_changed++;
		return;
	}
	pinned_link(e->name, &map_id);
	if (st.hash == e->hash && !strcmp(st.object, e->object) &&
	    !(st.map_id && map_id != st.map_id)) {
		report(e->name, "unchanged", "unchanged");
		nr_unchanged++;
		return;
	}
	kf = fmemopen(knobs, sizeof(knobs) - 1, "w");
	if (kf) {
		knobs_print(kf, &e->knobs);
		fclose(kf);
	}
	report(e->name, "swap", "would swap to %s%s%s", e->object, knobs,
	       st.map_id && map_id != st.map_id ? " (the policy running was "
	       "swapped since apply loaded it)" : "");
	nr_changed++;
}

/* --plan: a pass, said and not done; the exit status apply's would be */
static int plan_pass(int napplied, char applied[][32], int nlisted,
		     char listed[][32], bool detailed)
{
	struct state st;
	int i, j;

	for (i = 0; i < napplied; i++) {
		for (j = 0; j < nlisted; j++)
			if (!strcmp(applied[i], listed[j]))
				break;
		if (j == nlisted && ours(applied[i], &st)) {
			report(applied[i], "detach",
			       "would detach (no longer listed)");
			nr_changed++;
		}
	}
	for (i = 0; i < nr_ents; i++)
		if (ents[i].ok || ents[i].pending)
			plan_entry(&ents[i]);
	if (!jw)
		printf("%s: %d would change, %d unchanged, %d pending, "
		       "%d error%s; nothing done (--plan)\n", conf, nr_changed,
		       nr_unchanged, nr_pending, errors, errors == 1 ? "" : "s");
	if (errors && !nr_applied)
		return 1;
	if (errors)
		return 3;
	return detailed && nr_changed ? 4 : 0;
}

/* One apply of conf: the exit status of collapsectl apply. */
static int apply_pass(bool check, bool detailed)
{
	char applied[MAX_LINES][32], listed[MAX_LINES][32];
	int i, j, n, napplied, nlisted = 0;

	errors = nr_applied = nr_changed = nr_pending = nr_unchanged = 0;
	memset(ents, 0, sizeof(ents));
	napplied = applied_names(applied, MAX_LINES);
	if (!follow) {
		n = load_sources();
		if (n < 0)
			return fail("%s: %s", conf, strerror(-n));
	}
	n = read_conf(ents, MAX_LINES, &nlisted, listed);
	if (n < 0)
		return fail("%s: %s", conf, strerror(-n));
	nr_ents = n;
	if (plan)
		return plan_pass(napplied, applied, nlisted, listed, detailed);
	if (check) {
		for (i = 0; i < n; i++)
			if (offline && ents[i].ok)
				check_entry_offline(&ents[i]);
			else if (ents[i].ok || ents[i].pending)
				check_entry(&ents[i]);
		if (errors)
			return fail("%s: %d line%s would not apply", conf, errors,
				    errors == 1 ? "" : "s");
		if (!jw)
			printf("%s: %s\n", conf, offline ?
			       "every line checked offline (objects not verified "
			       "by a kernel, cgroups not looked up)" :
			       "every line would apply");
		return 0;
	}
	/* First what is no longer listed: it may hold a cgroup wanted below. */
	for (i = 0; i < napplied; i++) {
		for (j = 0; j < nlisted; j++)
			if (!strcmp(applied[i], listed[j]))
				break;
		if (j == nlisted)
			errors += unload_applied(applied[i], "no longer listed");
	}
	for (i = 0; i < n; i++)
		if (ents[i].ok)
			detach_moving(&ents[i]);
	for (i = 0; i < n; i++) {
		if (ents[i].ok)
			apply_entry(&ents[i]);
		else if (ents[i].pending)
			pending_entry(&ents[i]);
	}
	write_expected(ents, n);
	if (errors && !nr_applied)
		return 1;
	if (errors)
		return 3;
	return detailed && nr_changed ? 4 : 0;
}

/* --follow's pass: under the lock, which it holds only meanwhile */
static int follow_pass(void)
{
	int fd = apply_lock(), rc;
	char msg[128];

	if (fd < 0)
		return 1;
	rc = apply_pass(false, false);
	close(fd);
	quiet = true;
	/* systemctl status shows it */
	snprintf(msg, sizeof(msg), "STATUS=%d attached, %d pending, %d failed: "
		 "collapsectl status tells more", nr_attached_now, nr_pending_now,
		 nr_failed_now);
	sd_notify_msg(msg);
	return rc;
}

/* --follow's end (SIGTERM, SIGINT): what `apply --unload` does */
static int unload_all(void)
{
	char applied[MAX_LINES][32];
	int i, n, fd = apply_lock();

	if (fd < 0)
		return 1;
	errors = 0;	/* the last pass's bad lines are not this one's */
	n = applied_names(applied, MAX_LINES);
	for (i = 0; i < n; i++)
		errors += unload_applied(applied[i], "apply --follow stopped");
	unlink(EXPECTED_FILE);
	unlink(STATUS_FILE);
	close(fd);
	return errors ? 3 : 0;
}

/*
 * --follow's end (SIGTERM, SIGINT). Under systemd, unless
 * --detach-on-exit, the links of the policies apply loaded go to the
 * service's file descriptor store (sd_notify.c): kept attached over a
 * restart, detached by the kernel when a stop closes the store. Their
 * records stay, for the next start to know them as its own; what the
 * last pass found goes (a stopped service expects nothing). Otherwise,
 * or when systemd cannot take them: what `apply --unload` does.
 */
static int follow_stop(void)
{
	char applied[MAX_LINES][32], mine[MAX_LINES][32], pin[256];
	int i, n, nr = 0, fd, kept;
	bool sent[MAX_LINES];
	struct state st;

	if (detach_on_exit || !getenv("NOTIFY_SOCKET"))
		return unload_all();
	fd = apply_lock();
	if (fd < 0)
		return 1;
	n = applied_names(applied, MAX_LINES);
	for (i = 0; i < n && nr < FDSTORE_MAX; i++)
		if (ours(applied[i], &st))
			snprintf(mine[nr++], 32, "%.31s", applied[i]);
	kept = fdstore_hand_over(mine, nr, sent);
	if (kept < 0) {
		if (kept == -ENOSYS || kept == -ENOSPC)
			fprintf(stderr, "%scollapsectl: apply --follow: %s: detaching "
				"the policies\n", journal_prio(LOG_NOTICE),
				kept == -ENOSYS ? "no kcmp() (CONFIG_KCMP), with which "
				"systemd tells BPF links apart in its file descriptor "
				"store" : "the service's file descriptor store has no "
				"room for them (FileDescriptorStoreMax=)");
		close(fd);
		return unload_all();
	}
	for (i = 0; i < nr; i++) {
		if (!sent[i])
			continue;	/* its pin keeps it: the next start's */
		pin_path(pin, sizeof(pin), mine[i]);
		unlink(pin);
	}
	unlink(EXPECTED_FILE);
	unlink(STATUS_FILE);
	close(fd);
	printf("apply --follow stopped: %d polic%s sent to systemd's file "
	       "descriptor store: attached over a restart, detached on a stop\n",
	       kept, kept == 1 ? "y" : "ies");
	return 0;
}

/*
 * --follow's start, signals held: the links a restart kept in systemd's
 * store pinned again. One apply loaded and the store did not give back
 * is said so; the first pass attaches it anew.
 */
static void adopt_stored(void)
{
	char applied[MAX_LINES][32];
	int i, n;

	if (fdstore_adopt() <= 0)
		return;
	n = applied_names(applied, MAX_LINES);
	for (i = 0; i < n; i++)
		if (!pinned(applied[i]))
			fprintf(stderr, "%scollapsectl: apply --follow: %s: its link did "
				"not come back from systemd's file descriptor store: "
				"attached anew\n", journal_prio(LOG_WARNING), applied[i]);
}

/* CLOCK_MONOTONIC ns of the last pass STATUS_FILE records, 0 if none */
static long long last_pass_ns(void)
{
	FILE *f = fopen(STATUS_FILE, "r");
	long long wall, mono = 0;

	if (f) {
		if (fscanf(f, "pass\t%lld\t%lld\t", &wall, &mono) != 2)
			mono = 0;
		fclose(f);
	}
	return mono;
}

/*
 * --reload PID: make the apply --follow of @pid apply its file again, read
 * anew (SIGHUP), and return once that pass is done: the service's
 * ExecReload, so that `systemctl reload` returns with the file applied.
 * It tells systemd RELOADING=1, then READY=1 after the pass.
 */
static int reload_follower(pid_t pid)
{
	long long before = last_pass_ns();
	int i;

	if (kill(pid, SIGHUP))
		return fail("--reload: process %d: %s", pid, strerror(errno));
	for (i = 0; i < 90 * 20; i++) {
		usleep(50000);
		if (last_pass_ns() > before) {
			printf("apply --follow (process %d) applied its file again\n", pid);
			return 0;
		}
		if (kill(pid, 0) && errno == ESRCH)
			return fail("--reload: process %d is gone (its journal says "
				    "why)", pid);
	}
	return fail("--reload: process %d did not finish a pass in 90 s", pid);
}

int cmd_apply(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "unload", no_argument, NULL, 'u' },
		{ "check", no_argument, NULL, 'c' },
		{ "plan", no_argument, NULL, 'P' },
		{ "offline", no_argument, NULL, 'o' },
		{ "strict", no_argument, NULL, 's' },
		{ "reread", no_argument, NULL, 'r' },
		{ "detach-on-exit", no_argument, NULL, 'D' },
		{ "reload", required_argument, NULL, 'R' },
		{ "detailed-exitcode", no_argument, NULL, 'x' },
		{ "follow", no_argument, NULL, 'f' },
		{ "interval", required_argument, NULL, 'i' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	char applied[MAX_LINES][32];
	int c, i, napplied, fd, rc;
	bool unload = false, check = false, detailed = false, has_interval = false;
	bool json = false;
	double interval = FOLLOW_INTERVAL_S;
	pid_t reload_pid = 0;

	while ((c = getopt_long(argc, argv, "ucjh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = true; break;
		case 'u': unload = true; break;
		case 'c': check = true; break;
		case 'P': plan = true; break;
		case 'o': offline = true; break;
		case 's': strict = true; break;
		case 'r': reread = true; break;
		case 'D': detach_on_exit = true; break;
		case 'R':
			if (parse_pid(optarg, &reload_pid)) {
				fail("--reload takes the pid of an apply --follow (got "
				     "'%s')", optarg);
				return 2;
			}
			break;
		case 'x': detailed = true; break;
		case 'f': follow = true; break;
		case 'i':
			if (parse_seconds(optarg, &interval) || interval < 1 ||
			    interval > 86400) {
				fail("--interval takes 1s to 24h, e.g. 60 or 5m (got "
				     "'%s')", optarg);
				return 2;
			}
			has_interval = true;
			break;
		case 'h': fputs(apply_usage, stdout); return 0;
		default: fputs(apply_usage, stderr); return 2;
		}
	}
	if (reload_pid) {
		if (argc != optind || unload || check || plan || detailed || follow ||
		    offline || strict || reread || json || has_interval ||
		    detach_on_exit) {
			fputs(apply_usage, stderr);
			return 2;
		}
		return reload_follower(reload_pid);
	}
	if (argc - optind != (unload ? 0 : 1) ||
	    unload + check + (detailed && !plan) + follow + plan > 1 ||
	    (has_interval && !follow) || (json && follow) ||
	    (offline && (!check || strict)) || (strict && (unload || follow)) ||
	    ((reread || detach_on_exit) && !follow)) {
		fputs(apply_usage, stderr);
		return 2;
	}
	if (!offline && (!require_admin() || !kernel_supported()))
		return 1;
	if (!unload)
		conf = argv[optind];
	if (follow) {
		rc = load_sources();
		if (rc)
			return rc == -EFBIG ? 1 : fail("%s: %s", conf, strerror(-rc));
		return apply_follow(adopt_stored, follow_pass, follow_stop, interval);
	}
	fd = check || plan ? 0 : apply_lock();
	if (fd < 0)
		return 1;
	if (json) {
		jw = json_out_new();
		if (!jw)
			return fail("out of memory");
		jsonw_start_object(jw);
		if (conf)
			json_string_field(jw, "file", conf);
		jsonw_string_field(jw, "mode", unload ? "unload" : check ? "check" :
				   plan ? "plan" : "apply");
		if (check)
			jsonw_bool_field(jw, "offline", offline);
		jsonw_name(jw, "events");
		jsonw_start_array(jw);
	}
	if (!unload) {
		rc = apply_pass(check, detailed);
	} else {
		napplied = applied_names(applied, MAX_LINES);
		for (i = 0; i < napplied; i++)
			errors += unload_applied(applied[i], "apply --unload");
		unlink(EXPECTED_FILE);
		unlink(STATUS_FILE);
		rc = errors ? 3 : 0;
	}
	if (json) {
		jsonw_end_array(jw);
		jsonw_int_field(jw, "applied", nr_applied);
		jsonw_int_field(jw, "changed", nr_changed);
		jsonw_int_field(jw, "pending", nr_pending);
		if (plan)
			jsonw_int_field(jw, "unchanged", nr_unchanged);
		jsonw_int_field(jw, "errors", errors);
		jsonw_int_field(jw, "exit_status", rc);
		jsonw_end_object(jw);
		jsonw_destroy(&jw);
	}
	return rc;
}
