// SPDX-License-Identifier: GPL-2.0
/*
 * Hold a collapse between its scan and its collapse, where the mmap_lock
 * is dropped: the thread hold_tid is held in the memcg charge of the new
 * huge page (__mem_cgroup_charge(), called by alloc_charge_folio() after
 * the scan let the lock go) until the test has changed the vma and set
 * release. A program there may not sleep, so it busy-waits: until
 * release, hold_ns or 16 * 2^23 steps of bpf_loop(), whichever comes
 * first (timed_out: not released); the test runs the two threads on two
 * CPUs. Any kernel with fentry (no error injection list needed).
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

u32 hold_tid;		/* the thread held, once */
u64 hold_ns;		/* the longest it is held (or fewer steps) */
u32 held;		/* it got there (and is held) */
u32 release;		/* set by the test: let it go */
u32 timed_out;		/* it went on unreleased */

static int wait_release(u32 i, void *data)
{
	u64 *deadline = data;

	return *(volatile u32 *)&release || bpf_ktime_get_ns() >= *deadline;
}

SEC("fentry/__mem_cgroup_charge")
int BPF_PROG(hold_charge)
{
	u64 deadline;
	int k;

	if (!hold_tid || (u32)bpf_get_current_pid_tgid() != hold_tid || held)
		return 0;
	held = 1;
	deadline = bpf_ktime_get_ns() + hold_ns;
	/* one bpf_loop() ends at 2^23 steps, within seconds under TCG */
	for (k = 0; k < 16; k++)
		if (bpf_loop(1 << 23, wait_release, &deadline, 0) < 1 << 23)
			break;
	timed_out = !*(volatile u32 *)&release;
	return 0;
}
