// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl apply --follow: keep the policies a file lists attached
 * while their cgroups come and go. A service's cgroup exists only while
 * it runs, and when it is removed the kernel detaches the policy on it;
 * so apply runs again whenever a cgroup directory appears (inotify on the
 * cgroup2 root, every slice below it, and the nearest existing ancestor
 * of each listed path), whenever the kernel detaches a policy's link
 * (EPOLLHUP on the pinned link: its cgroup was removed), and every
 * interval as a safety net. A mkdir in cgroupfs goes through the VFS like
 * any other, so its parent directory reports IN_CREATE; the files a
 * cgroup comes with are made by the kernel and report nothing.
 */
#define _GNU_SOURCE	/* nftw's FTW_ACTIONRETVAL, ppoll */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <syslog.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "collapsectl.h"

#define WATCH_MASK	(IN_CREATE | IN_ONLYDIR)
#define SETTLE_MS	200	/* a unit's start makes several cgroups */
#define MAX_LINKS	256	/* pinned links watched for a hang-up */

static volatile sig_atomic_t got_signal;
static int ifd = -1, nr_watches;

static void on_signal(int sig)
{
	got_signal = sig;
}

static int watch_dir(const char *path, const struct stat *sb, int type,
		     struct FTW *ftw)
{
	const char *base = path + ftw->base;
	size_t n = strlen(base);

	if (type != FTW_D)
		return FTW_CONTINUE;
	/* the root and the slices: where units' cgroups are made */
	if (ftw->level && (n < 6 || strcmp(base + n - 6, ".slice")))
		return FTW_SKIP_SUBTREE;
	if (inotify_add_watch(ifd, path, WATCH_MASK) >= 0)
		nr_watches++;
	return FTW_CONTINUE;
}

/*
 * Watch what may appear: slices come and go too, so this runs before
 * every pass (adding a watch twice is harmless; a removed directory's
 * watch goes by itself). Without inotify (a kernel built without
 * CONFIG_INOTIFY_USER, the instance limit reached) it says so once, and
 * the interval alone makes the passes.
 */
static void watch(double interval)
{
	static bool warned;

	nr_watches = 0;
	if (ifd >= 0) {
		nftw(CGROUP_ROOT, watch_dir, 16, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL);
		follow_watch_listed(ifd, WATCH_MASK);
		if (nr_watches)
			return;
		errno = ENOENT;
	}
	if (!warned)
		fprintf(stderr, "%scollapsectl: apply --follow: cannot watch %s "
			"(%s): applying every %g s only\n", journal_prio(LOG_WARNING),
			CGROUP_ROOT, strerror(errno), interval);
	warned = true;
}

static bool listed(uint32_t id, const uint32_t *ids, int n)
{
	while (n--)
		if (ids[n] == id)
			return true;
	return false;
}

/*
 * The pinned links of the attached policies, into @pfd (at most @max):
 * the kernel detaches a policy whose cgroup is removed, and its link then
 * reports EPOLLHUP. The caller closes the fds.
 *
 * A link that reports it already is not polled (it would wake at once).
 * Those in @seen (at most @max ids) did before the last pass began, which
 * saw their detach; @hup collects the ids of all of them, for the next
 * pass. One that hung up since the last pass began sets *@missed: the
 * detach may have come after that pass looked (the kernel detaches from a
 * work item, after the rmdir), so another pass is due now.
 */
static int watch_links(struct pollfd *pfd, int max, const uint32_t *seen,
		       int nr_seen, uint32_t *hup, int *nr_hup, bool *missed)
{
	DIR *dir = opendir(PIN_DIR);
	char path[PATH_MAX];
	struct dirent *de;
	int n = 0, fd;
	uint32_t id;

	*nr_hup = 0;
	*missed = false;
	while (dir && n < max && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), PIN_DIR "/%s", de->d_name);
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		pfd[n] = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (poll(&pfd[n], 1, 0) == 0) {
			n++;
			continue;
		}
		id = link_fd_id(fd);
		if (!listed(id, seen, nr_seen))
			*missed = true;
		if (*nr_hup < max)
			hup[(*nr_hup)++] = id;
		close(fd);
	}
	if (dir)
		closedir(dir);
	return n;
}

static void drain(void)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (read(ifd, buf, sizeof(buf)) > 0)
		;
}

/* Re-execute collapsectl, a new binary after an upgrade, as it was run. */
static void reexec(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	const char *gone = " (deleted)";
	struct timespec now;
	char msg[64];

	if (n <= 0)
		return;
	self[n] = 0;
	/* replaced on disk: the new file is at the old name */
	if ((size_t)n > strlen(gone) && !strcmp(self + n - strlen(gone), gone))
		self[n - strlen(gone)] = 0;
	printf("apply --follow: SIGHUP: running %s again\n", self);
	fflush(stdout);
	/* READY=1 again after the new image's first pass */
	clock_gettime(CLOCK_MONOTONIC, &now);
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%lld",
		 (long long)now.tv_sec * 1000000LL + now.tv_nsec / 1000);
	sd_notify_msg(msg);
	if (ifd >= 0)
		close(ifd);
	ifd = -1;
	/*
	 * The signals stay blocked across the exec, so one that arrives
	 * meanwhile waits, pending, for the new image's first wait.
	 */
	execv(self, collapsectl_argv);
	fprintf(stderr, "%scollapsectl: apply --follow: cannot run %s again (%s): "
		"applying the file with this one\n", journal_prio(LOG_ERR), self,
		strerror(errno));
}

int apply_follow(void (*start)(void), int (*pass)(void), int (*stop)(void),
		 double interval)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct timespec ts = { (time_t)interval,
			       (long)((interval - (time_t)interval) * 1e9) };
	bool first = true;
	sigset_t block, during_wait;
	struct pollfd pfd[1 + MAX_LINKS];
	uint32_t hup[2][MAX_LINKS];	/* hung-up links before, after a pass */
	int nr_hup[2] = {}, cur = 0;
	bool missed;

	/* the signals are taken only while waiting: a pass runs whole */
	sigemptyset(&block);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &during_wait);
	sigdelset(&during_wait, SIGHUP);
	sigdelset(&during_wait, SIGTERM);
	sigdelset(&during_wait, SIGINT);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	start();
	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	for (;;) {
		int sig, r, nr_links, i;

		/*
		 * Watches first, then the pass: a cgroup made meanwhile is an
		 * event for the next wait, never missed. The listed paths
		 * are known after a pass: one that appeared before its
		 * parent was watched makes another pass at once.
		 */
		watch(interval);
		drain();
		pass();
		watch(interval);
		if (follow_pending_appeared())
			continue;
		if (first)
			sd_notify_msg("READY=1");	/* the units after us find theirs */
		first = false;
		/* without inotify (fd -1, ignored) and links, the interval */
		pfd[0] = (struct pollfd){ .fd = ifd, .events = POLLIN };
		nr_links = watch_links(pfd + 1, MAX_LINKS, hup[cur], nr_hup[cur],
				       hup[!cur], &nr_hup[!cur], &missed);
		cur = !cur;
		if (missed) {
			for (i = 1; i <= nr_links; i++)
				close(pfd[i].fd);
			continue;
		}
		r = ppoll(pfd, 1 + nr_links, &ts, &during_wait);
		for (i = 1; i <= nr_links; i++)
			close(pfd[i].fd);
		sig = got_signal;
		got_signal = 0;
		if (sig == SIGTERM || sig == SIGINT)
			return stop();
		if (sig == SIGHUP)
			reexec();
		else if (r > 0)
			/* let the rest of a unit's start arrive, then one pass */
			usleep(SETTLE_MS * 1000);
	}
}
