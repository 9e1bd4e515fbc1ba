// SPDX-License-Identifier: GPL-2.0
/* Benchmark policy: a fixed MADV_COLLAPSE batch size, set before load. */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

const volatile u32 batch_pmds = 8;

SEC("struct_ops/batch_size")
u32 BPF_PROG(bench_batch_size, struct collapse_ext_ctx *cctx, u32 dflt)
{
	return batch_pmds;
}

COLLAPSE_EXT_OPS(bench_batch, .batch_size = (void *)bench_batch_size);
