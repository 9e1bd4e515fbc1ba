// SPDX-License-Identifier: GPL-2.0
/*
 * latency: MADV_COLLAPSE in batches of one PMD.
 *
 * A batch is collapsed under one acquisition of the mmap write lock: the
 * bigger the batch, the longer page faults and mmap calls of the process's
 * other threads wait. With batches of 1 the lock is held for one PMD at a
 * time (mainline's behaviour, and the kernel's default without a
 * batch_size hook): on a cgroup, it keeps a batching policy higher up the
 * tree (eager, adaptive) off that cgroup's latency-sensitive services.
 * Trades collapse throughput for tail latency. khugepaged passes keep
 * their size.
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

COLLAPSE_EXT_INFO("MADV_COLLAPSE one PMD per mmap lock hold: keeps a batching "
		  "policy higher up off latency-sensitive services");

SEC("struct_ops/batch_size")
u32 BPF_PROG(latency_batch_size, struct collapse_ext_ctx *cctx, u32 dflt)
{
	return 1;
}

COLLAPSE_EXT_OPS(latency, .batch_size = (void *)latency_batch_size);
