// SPDX-License-Identifier: GPL-2.0
/*
 * Hold the thread stall_tid in its first huge page allocation (order 9,
 * a PMD's folio) at should_fail_alloc_page(), which the page allocator
 * calls before it takes a page, and which the error injection list lets a
 * sleepable program sit on: it sleeps in bpf_copy_from_user() on
 * stall_addr, a page of its own registered with userfaultfd, until the
 * test lets it go (window.h). A collapse allocates its huge page with the
 * mmap_lock dropped, so the test may change the vma meanwhile. Loads only
 * on a kernel with CONFIG_FAIL_PAGE_ALLOC and
 * CONFIG_FUNCTION_ERROR_INJECTION (the debug kernel).
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

#define HPAGE_PMD_ORDER	9	/* x86-64, the suite's one architecture */

u32 stall_tid;		/* the thread held */
u64 stall_addr;		/* its userfaultfd page */
u32 stalled;		/* it got there (and is held, once) */

SEC("fentry.s/should_fail_alloc_page")
int BPF_PROG(hold_huge_alloc, unsigned int gfp, unsigned int order)
{
	char c;

	if ((u32)bpf_get_current_pid_tgid() != stall_tid || !stall_addr ||
	    order != HPAGE_PMD_ORDER || stalled)
		return 0;
	stalled = 1;
	bpf_copy_from_user(&c, 1, (void *)stall_addr);
	return 0;
}
