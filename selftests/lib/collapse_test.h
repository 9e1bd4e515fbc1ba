/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the collapse_ext selftests: aligned anonymous regions,
 * THP sysfs knobs, vmstat counters, smaps, process_madvise().
 */
#ifndef COLLAPSE_TEST_H
#define COLLAPSE_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/mman.h>		/* MADV_COLLAPSE, MADV_F_COLLAPSE_* */

/*
 * THP and khugepaged settings: the kernel tree's settings stack,
 * tools/testing/selftests/mm/thp_settings.c, built with the tests. A
 * fixture that changes a knob saves and pushes in FIXTURE_SETUP and
 * restores in FIXTURE_TEARDOWN (which the harness runs after a failed
 * ASSERT too):
 *
 *	FIXTURE_SETUP(f)    { thp_save_settings(); thp_push_settings(&s); ... }
 *	FIXTURE_TEARDOWN(f) { ...; thp_restore_settings(); }
 *
 * and a test changes knobs with thp_push_settings() of a modified copy of
 * *thp_current_settings(), thp_pop_settings() to go back. The tree's file
 * helpers of the same names as ours are renamed (thp_settings_names.h).
 */
#include "thp_settings_names.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-qualifiers"	/* const unsigned long f() */
#include KSFT_THP_H	/* the tree's mm/thp_settings.h, or hugepage_settings.h */
#pragma GCC diagnostic pop
#undef read_file
#undef write_file
#undef read_num
#undef write_num

#define PAGE_SZ		4096UL
#define HPAGE_SZ	(2UL << 20)
#define HPAGE_NR	(HPAGE_SZ / PAGE_SZ)

#define THP_SYSFS	"/sys/kernel/mm/transparent_hugepage/"
#define KHUGEPAGED	THP_SYSFS "khugepaged/"

/* A PMD-aligned anonymous mapping of @nr_hpages huge pages, not faulted. */
struct region {
	char *p;
	size_t len;
	char *raw;
	size_t raw_len;
};

int region_map(struct region *r, size_t nr_hpages);
void region_unmap(struct region *r);
/* Write every page except those for which skip(page index) returns true. */
void region_fill(struct region *r, bool (*skip)(size_t page));
/* Check what region_fill() wrote; absent pages must read as zero. */
bool region_check(struct region *r, bool (*skip)(size_t page));

/*
 * A request over ranges some of which a limit refuses: region_fill(r,
 * sparse_pmds_2_5) leaves page 7 of huge pages 2 and 5 untouched (beyond
 * max_ptes_none 0); huge_but_pmds_2_5(r) is true when exactly the other
 * huge pages of @r are PMD-mapped afterwards (the request went on past
 * the refused ranges).
 */
bool sparse_pmds_2_5(size_t page);
bool huge_but_pmds_2_5(struct region *r);
/*
 * region_fill(r, last_page_missing): every PMD lacks its last page. Under
 * max_ptes_none 0 such a range is scanned through and never collapsed, so
 * it costs a khugepaged pass a whole PMD on every base (7.3 charges a
 * PMD-mapped or empty range 1) and keeps the mmap_lock.
 */
bool last_page_missing(size_t page);
/*
 * Map the zero page at every pte of the first huge page of @r (read
 * faults, small pages): a page table without one page in it, which
 * MADV_DONTNEED no longer leaves on 7.3 (it frees an emptied table).
 */
int region_zero_first_pmd(struct region *r);

/*
 * Keep the calling thread on the CPU it runs on (0 or -errno), for a test
 * that swaps pages out and collapses them. A page faulted or swapped in
 * waits in its CPU's LRU batch holding a reference, and MADV_PAGEOUT and
 * the collapse after a swap-in (__collapse_huge_page_swapin()'s
 * lru_add_drain()) drain only their own CPU's batch: a thread that moved
 * meets that reference, pages not swapped out or SCAN_PAGE_COUNT (EAGAIN),
 * as on mainline. Seen on the 7.3 debug kernel.
 */
int stay_on_this_cpu(void);

/*
 * The folios mapping [p, p + len) of @pid (0: ourselves), by order, read
 * from pagemap and /proc/kpageflags: @count[o] is the number of folios of
 * order o (0: small pages) mapped whole, in order, inside the range, up to
 * @max_order. 0, or -1 when a file cannot be read.
 */
int folio_orders(pid_t pid, const void *p, size_t len, unsigned long *count,
		 int max_order);

/* AnonHugePages of the vmas overlapping [p, p + len) in /proc/PID/smaps. */
unsigned long anon_huge_kb(pid_t pid, const void *p, size_t len);
/*
 * Is every 2 MiB of [p, p + len) one transparent huge page, whole? Every
 * page of each PMD is read from pagemap (present, pfns contiguous from a
 * THP head in kpageflags), so it is exact for sub-ranges. A read error
 * aborts: the case fails rather than guess.
 */
bool range_is_huge(pid_t pid, const void *p, size_t len);

/* NUMA node of the page mapped at @p, or -errno. */
int page_node(void *p);
/* Bind [p, p + len) to node @nid (p NULL: the calling task); nid -1 unbinds */
int bind_to_node(void *p, size_t len, int nid);
/* Migrate the pages of [p, p + len) to node @nid, leaving no binding */
int move_to_node(void *p, size_t len, int nid);

/*
 * Free memory, from /proc/zoneinfo. node_room(): the most pages a populated
 * zone of node @nid has above the point where the allocator refuses a
 * movable request (its min watermark plus its lowmem reserve for the
 * highest zone), LONG_MIN when none. free_above_reserve(): pages free above
 * the kernel's totalreserve_pages (every zone's high watermark plus its
 * largest lowmem reserve), what a MADV_COLLAPSE batch's spare pages may
 * take; its argument is unused.
 */
long node_room(int nid);
long free_above_reserve(int unused);
/* The free pages of node @nid, all its zones: what a policy's kfunc reads */
long node_free(int nid);
/*
 * A child taking free memory with mlocked base pages (on node @nid, or
 * anywhere for -1) until room(nid) is at most @target pages, and holding
 * it there (memory freed later is taken too) until it is killed: its pid,
 * or -1 when the target could not be reached in two tries. Stopping above
 * the reserve, it OOM-kills nothing else (on the debug kernel the OOM
 * killer has taken the filler itself: hence the second try).
 */
pid_t start_filler(int nid, long (*room)(int nid), long target);
/* Kill a filler (if @pid > 0) and wait for its memory to be freed. */
void stop_filler(pid_t pid);

/* /proc/vmstat counter, or -1. */
long vmstat(const char *name);
/* The number after @key in a file of "key number" lines, or -1. */
long read_key(const char *path, const char *key);

/* Read and write a sysfs (or any) file holding a number or a word. */
long read_num(const char *path);
int write_str(const char *path, const char *val);
int write_num(const char *path, long val);
/* Open @path with O_TRUNC (clears e.g. tracefs "trace"). */
int truncate_file(const char *path);

#define TRACING		"/sys/kernel/tracing/"
/* Mount tracefs on TRACING unless it is there: 0 or -1. */
int tracing_mount(void);
/*
 * Count the mmap_lock write acquisitions of the calling thread between
 * start and stop, from the mmap_lock:mmap_lock_acquire_returned tracepoint
 * (an observation independent of collapse_ext's counters): MADV_COLLAPSE
 * one PMD at a time takes the write lock once per PMD it collapses, a
 * batch once. stop disables the event, clears its filter and the pid
 * filter, and returns the count, or -1.
 */
int mmap_write_locks_start(void);
long mmap_write_locks_stop(void);


int sys_pidfd_open(pid_t pid);
long sys_process_madvise(int pidfd, void *addr, size_t len, int advice,
			 unsigned int flags);
/* Keep only the capabilities in @caps (a CAP_* bit mask): 0 or -1. */
int set_caps(unsigned long long caps);

/* Fork a child that maps @nr_hpages, fills them and waits to be killed. */
struct target {
	pid_t pid;
	char *p;
	size_t len;
};
/* Wait up to @secs for two more full khugepaged scans; did they happen? */
bool wait_full_scans(int secs);
/*
 * Push khugepaged at full speed (10 ms sleeps), @pages a pass, THP
 * madvise, and max_ptes_none @none (-1: as it is): thp_pop_settings()
 * undoes it.
 */
void khugepaged_fast(int none, unsigned long pages);
/*
 * Stop khugepaged: THP "never" (the 2 MiB size inherits it) makes the
 * sysfs write wait in kthread_stop() for the pass in flight, so counters
 * read afterwards are still. Pushed on top of the current settings:
 * thp_pop_settings() starts it again.
 */
void khugepaged_stop(void);

int target_start(struct target *t, size_t nr_hpages, uid_t uid,
		 bool (*skip)(size_t page));
void target_stop(struct target *t);

#endif
