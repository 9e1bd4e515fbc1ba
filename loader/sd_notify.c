// SPDX-License-Identifier: GPL-2.0
/*
 * collapsectl apply --follow and systemd, through sd_notify(3)'s protocol
 * without libsystemd (collapsectl is linked statically): readiness and
 * status (READY=1, STATUS=, RELOADING=1), and its policies' links kept
 * over a restart in the service's file descriptor store
 * (FileDescriptorStoreMax=, FDSTORE=1).
 *
 * On SIGTERM the follower sends each pinned link it loaded to the store
 * (FDNAME=ce-NAME), waits until systemd has taken them (BARRIER=1), then
 * removes its pins and exits: the links now live in the store alone.
 * systemd keeps a store while a job is queued for the service (a restart)
 * and closes it when the service is stopped for good: the last reference
 * to each link goes, and the kernel detaches the policy. The next start
 * gets the links back (LISTEN_FDS, LISTEN_FDNAMES), pins them again and
 * takes them out of the store (FDSTOREREMOVE=1), so that collapsectl
 * unload, swap and apply own them as before. Its first pass finds them
 * unchanged: the policies were never detached.
 *
 * A store systemd does not keep (FileDescriptorStoreMax=0, the operator's
 * way to say otherwise) drops the links when the follower exits: detached
 * as on a stop. Without a confirmation from systemd, the follower detaches
 * the links itself: no link outlives the service unaccounted.
 */
#define _GNU_SOURCE	/* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/kcmp.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "collapsectl.h"

#define FDNAME_PREFIX	"ce-"
#define LISTEN_FDS_START 3
#define BARRIER_MS	5000

/* $NOTIFY_SOCKET's address, false without one */
static bool notify_addr(struct sockaddr_un *sa, socklen_t *len)
{
	const char *path = getenv("NOTIFY_SOCKET");
	size_t n;

	if (!path || (path[0] != '/' && path[0] != '@') ||
	    (n = strlen(path)) >= sizeof(sa->sun_path))
		return false;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, path, n);
	if (path[0] == '@')		/* an abstract socket */
		sa->sun_path[0] = 0;
	*len = offsetof(struct sockaddr_un, sun_path) + n;
	return true;
}

/* One datagram to systemd: @msg, with the file descriptor @fd if >= 0 */
static int notify_fd(const char *msg, int fd)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} cbuf = {};
	struct iovec iov = { (void *)msg, strlen(msg) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct sockaddr_un sa;
	socklen_t len;
	int s, err = 0;

	if (!notify_addr(&sa, &len))
		return -ENOTCONN;
	mh.msg_name = &sa;
	mh.msg_namelen = len;
	if (fd >= 0) {
		struct cmsghdr *cm;

		mh.msg_control = cbuf.buf;
		mh.msg_controllen = sizeof(cbuf.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return -errno;
	/* a manager that reads nothing never blocks the follower */
	if (sendmsg(s, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		err = -errno;
	close(s);
	return err;
}

/*
 * One datagram to $NOTIFY_SOCKET, so that the service (Type=notify) is
 * started once the first pass is done, and units ordered after it find
 * their policies attached; nothing without systemd.
 */
void sd_notify_msg(const char *msg)
{
	notify_fd(msg, -1);
}

/*
 * sd_notify_barrier(3): every message sent before has been handled once
 * systemd closes the pipe's write end this sends it.
 */
static int notify_barrier(void)
{
	struct pollfd pfd = { .events = POLLHUP };
	int p[2], err, r;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	err = notify_fd("BARRIER=1", p[1]);
	close(p[1]);
	if (!err) {
		pfd.fd = p[0];
		r = poll(&pfd, 1, BARRIER_MS);
		err = r < 0 ? -errno : r == 0 ? -ETIMEDOUT : 0;
	}
	close(p[0]);
	return err;
}

/*
 * systemd drops a stored fd it finds "the same" as one it holds. Without
 * kcmp() (CONFIG_KCMP) it compares the inode and the file flags, which
 * every BPF link shares (one anonymous inode): all links but the first
 * would be dropped, their policies detached. So no kcmp(), no hand-over.
 */
static bool kcmp_works(int fd)
{
	return syscall(SYS_kcmp, getpid(), getpid(), KCMP_FILE, fd, fd) == 0;
}

int fdstore_hand_over(char names[][32], int n, bool *sent)
{
	const char *max = getenv("FDSTORE");	/* systemd >= 254 says its size */
	int fds[FDSTORE_MAX], i, nr = 0, err = 0;
	char pin[256], msg[64];

	if (!getenv("NOTIFY_SOCKET"))
		return -ENOTCONN;
	/* a store too small (FileDescriptorStoreMax=0 says: no hand-over) */
	if (max && strtol(max, NULL, 10) < n)
		return -ENOSPC;
	for (i = 0; i < n; i++) {
		sent[i] = false;
		if (nr == FDSTORE_MAX)
			continue;
		pin_path(pin, sizeof(pin), names[i]);
		fds[nr] = bpf_obj_get(pin);
		if (fds[nr] < 0)
			continue;	/* not sent: its pin stays */
		if (!nr && !kcmp_works(fds[0])) {
			close(fds[0]);
			return -ENOSYS;
		}
		snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=" FDNAME_PREFIX "%s",
			 names[i]);
		err = notify_fd(msg, fds[nr]);
		nr++;
		sent[i] = true;
		if (err)
			break;
	}
	if (!err)
		err = notify_barrier();
	if (err) {
		/* not known to be kept: detached here, whoever holds them */
		for (i = 0; i < nr; i++)
			bpf_link_detach(fds[i]);
		fprintf(stderr, "%scollapsectl: apply --follow: systemd did not take "
			"the links (%s): their policies are detached\n",
			journal_prio(LOG_WARNING), strerror(-err));
	}
	for (i = 0; i < nr; i++)
		close(fds[i]);
	return err ? err : nr;
}

int fdstore_adopt(void)
{
	const char *pid = getenv("LISTEN_PID"), *nfds = getenv("LISTEN_FDS");
	char *names = getenv("LISTEN_FDNAMES"), *name, *save = NULL;
	char pin[256], msg[320];
	int i, n, adopted = 0;
	uint64_t map_id;

	if (!pid || !nfds || strtol(pid, NULL, 10) != getpid())
		return 0;
	n = atoi(nfds);
	names = names ? strdup(names) : NULL;
	name = names ? strtok_r(names, ":", &save) : NULL;
	for (i = 0; i < n; i++, name = name ? strtok_r(NULL, ":", &save) : NULL) {
		int fd = LISTEN_FDS_START + i;
		const char *policy;

		fcntl(fd, F_SETFD, FD_CLOEXEC);
		if (!name || strncmp(name, FDNAME_PREFIX, strlen(FDNAME_PREFIX)))
			continue;	/* not ours: left to whoever sent it */
		policy = name + strlen(FDNAME_PREFIX);
		if (policy_name_valid(policy)) {
			pin_path(pin, sizeof(pin), policy);
			mkdir(PIN_DIR, 0700);	/* bpf_obj_pin() says why not */
			if (!bpf_obj_pin(fd, pin) ||
			    (errno == EEXIST && pinned_link(policy, &map_id) == link_fd_id(fd))) {
				/* (or pinned still: the old follower was killed) */
				printf("%s: kept attached over the restart\n", policy);
				adopted++;
			} else {
				fprintf(stderr, "%scollapsectl: apply --follow: cannot "
					"pin %s again at %s (%s): it is detached\n",
					journal_prio(LOG_WARNING), policy, pin,
					strerror(errno));
			}
		}
		snprintf(msg, sizeof(msg), "FDSTOREREMOVE=1\nFDNAME=%s", name);
		notify_fd(msg, -1);
		close(fd);
	}
	free(names);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return adopted;
}
