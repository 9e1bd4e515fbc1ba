// SPDX-License-Identifier: GPL-2.0
/* A valid BPF object without a collapse_ext_ops map: collapsectl refuses it. */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

SEC("tracepoint/syscalls/sys_enter_getpid")
int no_ops_prog(void *ctx)
{
	return 0;
}
