// SPDX-License-Identifier: GPL-2.0
/* Must be rejected: collapse_ext kfuncs are for collapse_ext policies only. */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";



u32 seen;

SEC("tracepoint/syscalls/sys_enter_getpid")
int bad_kfunc_tracing_prog(void *ctx)
{
	/* declared __weak in collapse_ext.bpf.h: the verifier still refuses */
	seen = collapse_ext_nr_node_ids();
	return 0;
}
