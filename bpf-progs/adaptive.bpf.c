// SPDX-License-Identifier: GPL-2.0
/*
 * adaptive: learn from outcomes.
 *
 * The collapsed hook tells the policy how each attempt ended. A range that
 * failed MAX_FAILS times in a row (pinned pages, permanent sharing, ...) is
 * vetoed for the next VETO_ROUNDS attempts instead of being scanned again;
 * a success clears its record. MADV_COLLAPSE batches double, from 8 up to
 * 64 PMDs, while collapses keep succeeding, and fall back to 8 on a
 * failure. Trades a little memory of past failures (an LRU map) for less
 * wasted scanning and fewer write-lock acquisitions.
 */
#include "collapse_ext.bpf.h"

char _license[] SEC("license") = "GPL";

COLLAPSE_EXT_INFO("vetoes ranges that failed 3 times in a row for a while; "
		  "grows MADV_COLLAPSE batches from 8 to 64 PMDs while "
		  "collapses succeed");

#define MAX_FAILS	3
#define VETO_ROUNDS	8
#define BASE_BATCH	8	/* PMDs: batching is this policy's choice */

struct range_key {
	u64 mm;
	u64 address;
};

struct range_state {
	u32 fails;
	u32 vetoed;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct range_key);
	__type(value, struct range_state);
} ranges SEC(".maps");

/* consecutive successes, across the policy's cgroup */
u64 streak;

static __always_inline void key_of(struct collapse_ext_ctx *cctx,
				   struct range_key *key)
{
	key->mm = (u64)cctx->mm;
	key->address = cctx->address;
}

SEC("struct_ops/pte_limits")
int BPF_PROG(adaptive_pte_limits, struct collapse_ext_ctx *cctx,
	     struct collapse_ext_limits *limits)
{
	struct range_key key = {};
	struct range_state *st;

	key_of(cctx, &key);
	st = bpf_map_lookup_elem(&ranges, &key);
	if (!st || st->fails < MAX_FAILS)
		return 0;
	if (st->vetoed++ < VETO_ROUNDS)
		return 1;
	/* give it another chance */
	st->fails = 0;
	st->vetoed = 0;
	return 0;
}

SEC("struct_ops/batch_size")
u32 BPF_PROG(adaptive_batch_size, struct collapse_ext_ctx *cctx, u32 dflt)
{
	u64 s = streak;

	if (s >= 64)
		return 64;
	if (s >= 32)
		return 32;
	if (s >= 16)
		return 16;
	return BASE_BATCH;
}

SEC("struct_ops/collapsed")
void BPF_PROG(adaptive_collapsed, struct collapse_ext_ctx *cctx,
	      enum collapse_ext_result result)
{
	struct range_key key = {};
	struct range_state *st, init = { .fails = 1 };

	key_of(cctx, &key);
	if (result == COLLAPSE_EXT_RESULT_COLLAPSED ||
	    result == COLLAPSE_EXT_RESULT_ALREADY_HUGE) {
		__sync_fetch_and_add(&streak, 1);
		bpf_map_delete_elem(&ranges, &key);
		return;
	}
	streak = 0;
	st = bpf_map_lookup_elem(&ranges, &key);
	if (st)
		st->fails++;
	else
		bpf_map_update_elem(&ranges, &key, &init, BPF_ANY);
}

COLLAPSE_EXT_OPS(adaptive,
	.pte_limits = (void *)adaptive_pte_limits,
	.batch_size = (void *)adaptive_batch_size,
	.collapsed = (void *)adaptive_collapsed);
