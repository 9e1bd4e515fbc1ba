// SPDX-License-Identifier: GPL-2.0
/*
 * Hold a struct_ops link's attach where its link joins the cgroup
 * (bpf_struct_ops_link_add_cgroup(), on the kernel's error injection list,
 * so a sleepable program may sit on it) until the test lets it go: the
 * thread stall_tid sleeps in bpf_copy_from_user() on stall_addr, a page of
 * its own registered with userfaultfd, while the test removes the cgroup.
 * Loads only on a kernel with CONFIG_FUNCTION_ERROR_INJECTION.
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

u32 stall_tid;		/* the thread held */
u64 stall_addr;		/* its userfaultfd page */
u32 stalled;		/* it got there (and is held) */

SEC("fentry.s/bpf_struct_ops_link_add_cgroup")
int BPF_PROG(hold_add_cgroup)
{
	char c;

	if ((u32)bpf_get_current_pid_tgid() != stall_tid || !stall_addr)
		return 0;
	stalled = 1;
	bpf_copy_from_user(&c, 1, (void *)stall_addr);
	return 0;
}
