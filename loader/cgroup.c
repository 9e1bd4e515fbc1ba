// SPDX-License-Identifier: GPL-2.0
/* collapsectl: cgroup v2 directories: ids, memory.stat, names, killing. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>
#include <linux/magic.h>

#include "collapsectl.h"

uint64_t cgroup_path_id(const char *path)
{
	struct statfs sfs;
	struct stat st;

	if (stat(path, &st))
		return fail("cgroup %s: %s", path, strerror(errno)), 0;
	if (!S_ISDIR(st.st_mode))
		return fail("cgroup %s: not a directory", path), 0;
	if (statfs(path, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		/*
		 * Not "mount cgroup2 over it": on a running host that hides
		 * the hierarchy systemd and everything else use.
		 */
		if (!statfs(CGROUP_ROOT, &sfs) && sfs.f_type != CGROUP2_SUPER_MAGIC &&
		    !statfs(CGROUP_ROOT "/unified", &sfs) &&
		    sfs.f_type == CGROUP2_SUPER_MAGIC)
			return fail("%s is not in a cgroup v2 hierarchy: this host "
				    "mixes v1 and v2 (systemd's hybrid mode), name "
				    "a cgroup under %s/unified, or boot with "
				    "systemd.unified_cgroup_hierarchy=1", path,
				    CGROUP_ROOT), 0;
		return fail("%s is not in a cgroup v2 hierarchy: collapse_ext "
			    "scopes policies to cgroup v2; boot with "
			    "systemd.unified_cgroup_hierarchy=1 (or mount cgroup2 "
			    "where nothing else uses %s)", path, CGROUP_ROOT), 0;
	}
	/* On cgroup2 the inode number is the cgroup (kernfs) id. */
	return st.st_ino;
}

long long cgroup_memstat(const char *cg, const char *key)
{
	char path[340], k[64];
	unsigned long long v;
	long long ret = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory.stat", cg);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %llu", k, &v) == 2)
		if (!strcmp(k, key)) {
			ret = v;
			break;
		}
	fclose(f);
	return ret;
}

int write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int err;

	if (!f)
		return -errno;
	err = fputs(val, f) < 0 ? -EIO : 0;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

/* systemd's slice path: "a-b-c.slice" lives in a.slice/a-b.slice/. */
static int slice_path(const char *slice, char *out, size_t len)
{
	size_t stem = strlen(slice) - strlen(".slice"), n;
	const char *dash;

	n = snprintf(out, len, CGROUP_ROOT);
	if (!strcmp(slice, "-.slice"))
		return 0;
	if (!stem || slice[0] == '-' || slice[stem - 1] == '-' ||
	    strstr(slice, "--"))
		return -EINVAL;
	for (dash = slice; (dash = strchr(dash, '-')) && dash < slice + stem; dash++)
		n += snprintf(out + n, n < len ? len - n : 0, "/%.*s.slice",
			      (int)(dash - slice), slice);
	n += snprintf(out + n, n < len ? len - n : 0, "/%s", slice);
	return n < len ? 0 : -ENAMETOOLONG;
}

/* nftw() has no user argument: the unit being looked for. */
static const char *unit_wanted;
static char unit_found[PATH_MAX];
static int unit_matches;

static int find_unit(const char *path, const struct stat *unused, int type,
		     struct FTW *ftw)
{
	if (type == FTW_D && !strcmp(path + ftw->base, unit_wanted)) {
		if (!unit_matches++)
			snprintf(unit_found, sizeof(unit_found), "%s", path);
	}
	return 0;
}

static bool is_unit_name(const char *s)
{
	static const char * const suffixes[] = {
		".service", ".scope", ".socket", ".mount", ".swap",
	};
	size_t i, n = strlen(s);

	for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t m = strlen(suffixes[i]);

		if (n > m && !strcmp(s + n - m, suffixes[i]))
			return true;
	}
	return false;
}

int cgroup_spec_check(const char *spec, char *out, size_t len, char *why,
		      size_t wlen)
{
	size_t n = strlen(spec);

	why[0] = 0;
	if (!n || strstr(spec, "/../") || !strncmp(spec, "../", 3) ||
	    (n >= 3 && !strcmp(spec + n - 3, "/..")) || !strcmp(spec, "..")) {
		snprintf(why, wlen, "'%s' is not a cgroup: no '..' allowed", spec);
		return -EINVAL;
	}
	if (!strchr(spec, '/') && n > 6 && !strcmp(spec + n - 6, ".slice")) {
		if (slice_path(spec, out, len)) {
			snprintf(why, wlen, "'%s' is not a valid slice name", spec);
			return -EINVAL;
		}
	} else if (!strchr(spec, '/') && is_unit_name(spec)) {
		snprintf(out, len, "%s", spec);
	} else if (!strncmp(spec, CGROUP_ROOT, strlen(CGROUP_ROOT)) &&
		   (spec[strlen(CGROUP_ROOT)] == '/' || !spec[strlen(CGROUP_ROOT)])) {
		snprintf(out, len, "%s", spec);
	} else {
		snprintf(out, len, CGROUP_ROOT "%s%s", spec[0] == '/' ? "" : "/",
			 strcmp(spec, "/") ? spec : "");
	}
	return 0;
}

/*
 * A unit's cgroup as systemd knows it, its ControlGroup property, asked
 * through systemctl (libsystemd's D-Bus client: collapsectl is linked
 * statically, and there is no static libsystemd). 0 with the path in
 * @out; -ENOENT when the unit is loaded but has no cgroup (not running);
 * -ENOSYS when systemd is not the service manager, does not know the unit
 * (a user manager's, a container's) or cannot be asked: the caller walks
 * the cgroup tree instead.
 */
static int unit_cgroup_systemd(const char *unit, char *out, size_t len)
{
	struct pollfd pfd = { .events = POLLIN };
	char buf[PATH_MAX + 64], *cg, *state;
	static bool warned;
	size_t got = 0;
	int p[2], status;
	ssize_t n;
	pid_t pid;

	if (access("/run/systemd/system", F_OK) || pipe2(p, O_CLOEXEC))
		return -ENOSYS;
	pid = fork();
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);
		sigset_t none;

		/* apply --follow holds its signals during a pass */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		dup2(p[1], 1);
		dup2(null, 2);
		execlp("systemctl", "systemctl", "show", "--property=LoadState",
		       "--property=ControlGroup", "--", unit, NULL);
		_exit(127);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -ENOSYS;
	}
	pfd.fd = p[0];
	/* systemd answers in milliseconds; one that does not is not waited for */
	while (got < sizeof(buf) - 1 && poll(&pfd, 1, 5000) == 1 &&
	       (n = read(p[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	close(p[0]);
	kill(pid, SIGKILL);	/* gone already, but for a hung one */
	buf[got] = 0;
	state = strstr(buf, "LoadState=");
	cg = strstr(buf, "ControlGroup=");
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) || !state || !cg) {
		if (!warned)
			fprintf(stderr, "%scollapsectl: systemctl show %s did not answer: "
				"units are looked for in the cgroup tree\n",
				journal_prio(LOG_WARNING), unit);
		warned = true;
		return -ENOSYS;
	}
	state += strlen("LoadState=");
	cg += strlen("ControlGroup=");
	state[strcspn(state, "\n")] = 0;
	cg[strcspn(cg, "\n")] = 0;
	if (strcmp(state, "loaded"))
		return -ENOSYS;		/* not one of the system manager's */
	if (!cg[0])
		return -ENOENT;
	return snprintf(out, len, CGROUP_ROOT "%s", cg) < (int)len ?
	       0 : -ENAMETOOLONG;
}

int cgroup_resolve(const char *spec, char *out, size_t len, char *why,
		   size_t wlen)
{
	struct stat st;
	int err = cgroup_spec_check(spec, out, len, why, wlen);

	if (err)
		return err;
	if (!strchr(spec, '/') && is_unit_name(spec))
		err = unit_cgroup_systemd(spec, out, len);
	if (err == -ENOENT) {
		snprintf(why, wlen, "unit %s has no cgroup (is it running?)", spec);
		return -ENOENT;
	}
	if (err == -ENOSYS) {
		/* no systemd to ask: the unit's directory in the tree */
		unit_wanted = spec;
		unit_matches = 0;
		nftw(CGROUP_ROOT, find_unit, 32, FTW_PHYS | FTW_MOUNT);
		if (unit_matches != 1) {
			snprintf(why, wlen, unit_matches ?
				 "unit %s is in %d cgroups: give its path" :
				 "unit %s has no cgroup (is it running?)",
				 spec, unit_matches);
			return unit_matches ? -EINVAL : -ENOENT;
		}
		snprintf(out, len, "%s", unit_found);
	} else if (err) {
		snprintf(why, wlen, "unit %s: cgroup path too long", spec);
		return err;
	}
	if (stat(out, &st) || !S_ISDIR(st.st_mode)) {
		snprintf(why, wlen, "cgroup %s (from '%s') does not exist", out, spec);
		return -ENOENT;
	}
	return 0;
}

int cgroup_kill_wait(const char *cg)
{
	char path[PATH_MAX];
	int i, err;

	snprintf(path, sizeof(path), "%s/cgroup.kill", cg);
	err = write_file(path, "1");
	if (err)
		return err;
	/* The cgroup can only be removed once its last task has exited. */
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	for (i = 0; i < 500; i++) {
		FILE *f = fopen(path, "r");
		int c = f ? fgetc(f) : EOF;

		if (f)
			fclose(f);
		if (c == EOF)
			return err;
		usleep(10000);
	}
	return -EBUSY;
}

/* nftw() has no user argument: the cgroup id being looked for, and where. */
static uint64_t want_id;
static char *id_path;
static size_t id_len;

static int find_id(const char *path, const struct stat *st, int type,
		   struct FTW *ftw)
{
	(void)ftw;
	if (type != FTW_D || st->st_ino != want_id)
		return 0;
	path += strlen(CGROUP_ROOT);
	snprintf(id_path, id_len, "%s", *path ? path : "/");
	return 1;
}

int cgroup_id_path(uint64_t id, char *buf, size_t len)
{
	if (!id) {			/* a link without a cgroup: the root's */
		snprintf(buf, len, "/");
		return 0;
	}
	want_id = id;
	id_path = buf;
	id_len = len;
	return nftw(CGROUP_ROOT, find_id, 32, FTW_PHYS | FTW_MOUNT) == 1 ?
	       0 : -ENOENT;
}
