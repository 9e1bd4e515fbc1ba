/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A window held open on the debug kernel: a sleepable program on a
 * function of the error injection list (attach_window.bpf.c) puts the
 * thread stall_tid to sleep in bpf_copy_from_user() on a page of its own
 * registered with userfaultfd, for as long as the test needs, then
 * window_release() lets it go.
 */
#ifndef WINDOW_H
#define WINDOW_H

#include <fcntl.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/userfaultfd.h>

#include "collapse_test.h"

struct window {
	int uffd;
	char *page;	/* where the held thread sleeps until it is filled */
};

/* The userfaultfd and its page: 0, or -1 with errno set */
static inline int window_open(struct window *w)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };

	w->page = NULL;
	w->uffd = syscall(__NR_userfaultfd, O_CLOEXEC);
	if (w->uffd < 0 || ioctl(w->uffd, UFFDIO_API, &api))
		return -1;
	w->page = mmap(NULL, PAGE_SZ, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w->page == MAP_FAILED) {
		w->page = NULL;
		return -1;
	}
	reg.range = (struct uffdio_range){ (unsigned long)w->page, PAGE_SZ };
	return ioctl(w->uffd, UFFDIO_REGISTER, &reg);
}

/*
 * Let the held thread go: the page filled, and the userfaultfd closed,
 * which lets the fault go even without the page. 0 when the page was
 * filled.
 */
static inline int window_release(struct window *w)
{
	struct uffdio_zeropage zero = {
		.range = { (unsigned long)w->page, PAGE_SZ },
	};
	int ret = -1;

	if (w->uffd >= 0) {
		ret = ioctl(w->uffd, UFFDIO_ZEROPAGE, &zero);
		close(w->uffd);
		w->uffd = -1;
	}
	return ret;
}

static inline void window_close(struct window *w)
{
	window_release(w);
	if (w->page)
		munmap(w->page, PAGE_SZ);
	w->page = NULL;
}

/* Until *@stalled (the program's flag), at most @secs seconds */
static inline bool window_wait(volatile __u32 *stalled, int secs)
{
	for (int i = 0; i < secs * 100 && !*stalled; i++)
		usleep(10000);
	return *stalled;
}

/*
 * A window program that did not load: the debug kernel (kmemleak) must
 * have the error injection list; any other kernel skips.
 */
#define WINDOW_REQUIRE(skel, func) do {					\
	if (!(skel)) {							\
		ASSERT_NE(0, access("/sys/kernel/debug/kmemleak", F_OK))	\
			TH_LOG("the debug kernel must let a sleepable "	\
			       "program sit on " func "() "		\
			       "(CONFIG_FUNCTION_ERROR_INJECTION)");	\
		SKIP(return, "no error injection list (not the debug kernel)"); \
	}								\
} while (0)

#endif
