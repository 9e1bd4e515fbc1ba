#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tabulate `make bench`: medians with 95% confidence intervals.

Reads build/BASE/bench/results.json ({"meta": {...}, "samples": [...]}, one
sample per repetition of one case, as collapse_bench prints them) and
prints the Performance tables in Markdown. With --readme FILE it replaces
the text between "<!-- bench:begin -->" and "<!-- bench:end -->" in FILE
instead (`make bench-readme`: selftests/bench/README.md), so the README's
numbers and the sentences about them come from the results file and
nothing else.

Statistics:
- A median's 95% interval is distribution-free: the order statistics
  x(j), x(n+1-j) with the largest j whose binomial coverage is >= 95%
  (n >= 6 is needed; below that [min, max] is shown with its coverage).
- Cases of one boot ran interleaved, rep by rep: a ratio to the control is
  the median of the per-repetition ratios (paired), with the same interval.
- The unpatched and the patched kernel are separate boots: their ratio is
  the ratio of medians with a bootstrap interval (2000 resamples, fixed
  seed, so the report is reproducible).
- A difference is reported only when its interval excludes "no change";
  otherwise the line says "no difference".
- Samples whose collapse failed ("ok": 0) are counted and left out.
"""
import argparse
import json
import math
import random
import sys


def binom_cdf(k, n):
    return sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n


def median(xs):
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return None
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def median_ci(xs):
    """(median, lo, hi, coverage) of xs."""
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return None, None, None, 0.0
    best = (s[0], s[-1], 1 - 2 * binom_cdf(0, n))
    for j in range(1, n // 2 + 1):
        cov = 1 - 2 * binom_cdf(j - 1, n)
        if cov < 0.95:
            break
        best = (s[j - 1], s[n - j], cov)
    return median(s), best[0], best[1], best[2]


def boot_ratio(a, b, reps=2000):
    """Ratio of medians median(a)/median(b) with a bootstrap 95% interval."""
    rnd = random.Random(1)
    rs = []
    for _ in range(reps):
        ra = [rnd.choice(a) for _ in a]
        rb = [rnd.choice(b) for _ in b]
        mb = median(rb)
        if mb:
            rs.append(median(ra) / mb)
    rs.sort()
    return median(a) / median(b), rs[int(0.025 * len(rs))], rs[int(0.975 * len(rs)) - 1]


def fmt(v, digits=3):
    """digits significant digits, whole numbers from 10^digits on."""
    if v is None:
        return "-"
    if abs(v) >= 10 ** digits:
        return f"{v:.0f}"
    return f"{v:.{digits}g}"


def with_ci(xs, digits=3):
    m, lo, hi, cov = median_ci(xs)
    if m is None:
        return "-"
    note = "" if cov >= 0.95 else f" ({cov:.0%} interval: n={len(xs)})"
    return f"{fmt(m, digits)} [{fmt(lo, digits)}, {fmt(hi, digits)}]{note}"


def pct(r):
    return f"{(r - 1) * 100:+.1f}%"


def verdict(m, lo, hi, more="slower", less="faster", n=None):
    """A ratio with its interval: a verdict only when 1 is outside a 95%
    interval (n: the samples behind it; fewer than 6 cannot give one)."""
    if m is None:
        return "-"
    span = f"{pct(m)} [{pct(lo)}, {pct(hi)}]"
    if n is not None and n < 6:
        return f"{pct(m)}: too few reps to tell (n={n})"
    if lo > 1:
        return f"{span}: {more}"
    if hi < 1:
        return f"{span}: {less}"
    return f"{span}: no difference"


def goal(lo, hi, limit, n, higher_is_better=False):
    """A goal's verdict from a 95% interval [lo, hi]: met when the whole
    interval is on the goal's side of @limit, not met when the whole
    interval is on the other side, else not shown by the interval."""
    if lo is None or n < 6:
        return "goal not shown (too few reps)"
    if higher_is_better:
        lo, hi, limit = -hi, -lo, -limit
    if hi <= limit:
        return "goal met"
    if lo > limit:
        return "goal not met"
    return "goal not shown by the interval"


class Results:
    def __init__(self, doc):
        self.meta = doc.get("meta", {})
        self.samples = doc.get("samples", [])

    def select(self, **kw):
        return [s for s in self.samples if all(s.get(k) == v for k, v in kw.items())]

    def values(self, key, **kw):
        return [s[key] for s in self.select(**kw) if s.get("ok", 1) and s.get(key) is not None]

    def failed(self, **kw):
        return sum(1 for s in self.select(**kw) if not s.get("ok", 1))

    def paired(self, key, a, b, **kw):
        """Per-repetition ratios a/b of one boot (kw picks it)."""
        ra = {s["rep"]: s[key] for s in self.select(case=a, **kw) if s.get("ok", 1)}
        rb = {s["rep"]: s[key] for s in self.select(case=b, **kw) if s.get("ok", 1)}
        return [ra[r] / rb[r] for r in sorted(ra) if r in rb and rb[r]]


P99_MIN_PROBES = 100   # collapse_bench reports a p99 only from this many

HOOK_ROWS = [
    ("none", None, "no policy"),
    ("none_nested", "none", "no policy, workload 3 cgroups down (memcg at each level)"),
    ("passthrough_root", "none", "passthrough at the root"),
    ("passthrough_nested", "none_nested", "passthrough on /b1, workload in /b1/b2/b3"),
    ("unrelated_leaf_policy", "none", "passthrough on an unrelated leaf cgroup"),
]


def hooks(res, out):
    modes = sorted({s["kernel"].split("-", 1)[1] for s in res.select(bench="hooks")})
    for mode in modes:
        pk, uk = f"patched-{mode}", f"unpatched-{mode}"
        ps = res.select(bench="hooks", kernel=pk, case="passthrough_root")
        calls = ps[0]["hook_calls"] if ps else 0
        ranges = ps[0]["ranges"] if ps else 0
        n = len(res.values("s_per_gib", bench="hooks", kernel=pk, case="none"))
        mib = ps[0]["mib"] if ps else "?"
        out.append(f"**Hook cost, {mode}** (MADV_COLLAPSE of {mib} MiB, s/GiB, "
                   f"median [95% CI] of {n} interleaved reps; {calls} hook calls "
                   f"for {ranges} PMDs per collapse with passthrough):\n")
        out.append("| kernel, case | s/GiB | vs its control (paired) | ns per hook call | vs unpatched, same case |")
        out.append("|---|---|---|---|---|")
        for case, ctrl, label in HOOK_ROWS:
            for kern in (uk, pk):
                xs = res.values("s_per_gib", bench="hooks", kernel=kern, case=case)
                if not xs:
                    continue
                failed = res.failed(bench="hooks", kernel=kern, case=case)
                row = [f"{kern.split('-')[0]}: {label}" + (f" ({failed} failed, excluded)" if failed else ""),
                       with_ci(xs, 3)]
                if ctrl:
                    r = res.paired("s_per_gib", case, ctrl, bench="hooks", kernel=kern)
                    m, lo, hi, _ = median_ci(r)
                    row.append(f"vs {ctrl}: " + verdict(m, lo, hi, n=len(r)))
                else:
                    row.append("")
                hc = res.select(bench="hooks", kernel=kern, case=case)
                c = hc[0].get("hook_calls", 0) if hc else 0
                if ctrl and c > 0 and kern == pk:
                    # seconds per collapse = s/GiB * MiB / 1024
                    d = [(x - 1) * median(res.values("s_per_gib", bench="hooks", kernel=kern, case=ctrl))
                         * hc[0]["mib"] / 1024 / c * 1e9 for x in r]
                    m, lo, hi, cov = median_ci(d)
                    if cov < 0.95:
                        row.append(f"{m:.0f} (n={len(d)}: no interval)")
                    else:
                        row.append(f"{m:.0f} [{lo:.0f}, {hi:.0f}]" if lo > 0 else
                                   f"not resolved (< {max(hi, 0):.0f})")
                else:
                    row.append("")
                if kern == pk:
                    us = res.values("s_per_gib", bench="hooks", kernel=uk, case=case)
                    if us:
                        # one boot per kernel: a boot's own offset is not
                        # in the interval, so the ratio gets no verdict
                        m, lo, hi = boot_ratio(xs, us)
                        row.append(f"{pct(m)} [{pct(lo)}, {pct(hi)}] (one boot each: no verdict)")
                    else:
                        row.append("")
                else:
                    row.append("")
                out.append("| " + " | ".join(row) + " |")
        out.append("")


def scale(res, out):
    sel = res.select(bench="scale_depth")
    if sel:
        n = len(res.values("s_per_gib", bench="scale_depth", depth=1, policy=0))
        out.append(f"**Cost by cgroup depth** (MADV_COLLAPSE of {sel[0]['mib']} MiB by a workload "
                   "1, 4 and 8 cgroups down, memcg on at every level; no policy, and passthrough at "
                   f"the root, found by walking up the tree; median [95% CI] of {n} interleaved reps):\n")
        out.append("| depth | no policy, s/GiB | passthrough at the root, s/GiB | policy vs none (paired) |")
        out.append("|---|---|---|---|")
        for d in sorted({s["depth"] for s in sel}):
            a = {"bench": "scale_depth", "depth": d, "policy": 1}
            b = {"bench": "scale_depth", "depth": d, "policy": 0}
            r = paired_by_rep(res, "s_per_gib", a, b)
            v = ""
            if r:
                m, lo, hi, _ = median_ci(r)
                v = verdict(m, lo, hi, n=len(r))
            out.append(f"| {d} | {with_ci(res.values('s_per_gib', **b), 3)} | "
                       f"{with_ci(res.values('s_per_gib', **a), 3)} | {v} |")
        out.append("")
        depths = sorted({s["depth"] for s in sel})
        if len(depths) >= 2:
            lo_d, hi_d = depths[0], depths[-1]

            def extra(d):
                """Per rep: what the policy adds at depth d, in s/GiB."""
                pa = {s["rep"]: s["s_per_gib"] for s in res.select(bench="scale_depth", depth=d,
                                                                   policy=1) if s.get("ok", 1)}
                pb = {s["rep"]: s["s_per_gib"] for s in res.select(bench="scale_depth", depth=d,
                                                                   policy=0) if s.get("ok", 1)}
                return {r: pa[r] - pb[r] for r in pa if r in pb}
            e_lo, e_hi = extra(lo_d), extra(hi_d)
            mib = sel[0]["mib"]
            # per rep: the growth per level, as microseconds per request
            per = [(e_hi[r] - e_lo[r]) / (hi_d - lo_d) * mib / 1024 * 1e6
                   for r in sorted(e_lo) if r in e_hi]
            m, lo, hi, cov = median_ci(per)
            if m is not None and cov >= 0.95:
                shown = (f"{m:.0f} µs per request [{lo:.0f}, {hi:.0f}]" if lo > 0 or hi < 0 else
                         f"not resolved: {m:.0f} µs per request [{lo:.0f}, {hi:.0f}] includes 0")
            else:
                shown = f"too few reps (n={len(per)})"
            out.append(f"- what the policy lookup adds per cgroup level (depth {lo_d} to {hi_d}, "
                       f"paired by rep; one lookup per request of {mib} MiB): {shown}")
            out.append("")
    sel = res.select(bench="scale_siblings")
    if sel:
        steps = sorted({s["siblings"] for s in sel})
        out.append("**Cost by attached policies** (the same workload one cgroup down, no policy of "
                   "its own, beside N sibling cgroups with a policy each; the steps in order, not "
                   "interleaved; ratios of medians with bootstrap intervals against the first step):\n")
        out.append("| sibling policies | s/GiB | vs the first step |")
        out.append("|---|---|---|")
        base = res.values("s_per_gib", bench="scale_siblings", siblings=steps[0])
        for k in steps:
            xs = res.values("s_per_gib", bench="scale_siblings", siblings=k)
            v = ""
            if k != steps[0] and xs and base:
                m, lo, hi = boot_ratio(xs, base)
                v = verdict(m, lo, hi, n=min(len(xs), len(base)))
            out.append(f"| {k} | {with_ci(xs, 3)} | {v} |")
        out.append("")
        last = res.values("s_per_gib", bench="scale_siblings", siblings=steps[-1])
        if len(steps) > 1 and last and base:
            m, lo, hi = boot_ratio(last, base)
            n = min(len(last), len(base))
            # goal: no growth with the attached policies; a ratio shown
            # above 1.05 (5%) would not meet it
            out.append(f"- {steps[-1]} sibling policies against {steps[0]}: {pct(m)} "
                       f"[{pct(lo)}, {pct(hi)}] (goal: cost independent of the attached "
                       f"policies, within 5%; {goal(lo, hi, 1.05, n)})")
            out.append("")


def paired_by_rep(res, key, a, b):
    """Per-repetition ratios key(a) / key(b), a and b dicts selecting samples."""
    va = {s["rep"]: s[key] for s in res.select(**a) if s.get("ok", 1) and s.get(key) is not None}
    vb = {s["rep"]: s[key] for s in res.select(**b) if s.get("ok", 1) and s.get(key) is not None}
    return [va[k] / vb[k] for k in sorted(va) if k in vb and vb[k]]


def batch(res, out):
    sel = res.select(bench="batch")
    if not sel:
        return
    cfgs = sorted({(s["batch"], s.get("yield", 0)) for s in sel})
    n = len(res.values("s_per_gib", bench="batch", batch=cfgs[0][0], **{"yield": cfgs[0][1]}))
    out.append(f"**Batch size and the mmap lock** (MADV_COLLAPSE of {sel[0]['mib']} MiB; beside it "
               "a writer thread maps and touches fresh 64 KiB chunks (mmap write lock) and a "
               "reader thread faults 64 KiB of the same vma back in (mmap read lock); median "
               f"[95% CI] of {n} reps, the six configurations in random order each rep, after a "
               "warm-up; stalls in µs):\n")
    out.append("| batch | yields to waiters | s/GiB | writer p99 | writer max | reader p99 | reader max "
               "| lock yields | failed |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for b, y in cfgs:
        kw = {"bench": "batch", "batch": b, "yield": y}
        row = [str(b), "yes" if y else "no (`NO_YIELD`)"]
        row += [with_ci(res.values(k, **kw), 3) for k in
                ("s_per_gib", "write_p99_us", "write_max_us", "read_p99_us", "read_max_us",
                 "lock_yields")]
        row.append(str(res.failed(**kw)))
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    b64y = {"bench": "batch", "batch": 64, "yield": 1}
    b64n = {"bench": "batch", "batch": 64, "yield": 0}
    b1 = {"bench": "batch", "batch": 1, "yield": 1}
    # (what, key, a, b, more, less, goal: the most a/b may be, or None)
    checks = [
        ("batch 64 vs batch 1 (both yielding), time per GiB", "s_per_gib", b64y, b1,
         "slower", "faster", None),
        ("batch 64 yielding vs not, time per GiB (goal: at most +11%, i.e. >= 90% of the "
         "throughput)", "s_per_gib", b64y, b64n, "slower", "faster", 1.11),
        ("batch 64 yielding vs batch 1, worst writer stall (goal: <= 1.5x)", "write_max_us",
         b64y, b1, "longer", "shorter", 1.5),
        ("batch 64 yielding vs batch 1, writer p99 (goal: no worse, <= 1x)", "write_p99_us",
         b64y, b1, "longer", "shorter", 1.0),
        ("batch 64 yielding vs batch 1, worst reader stall", "read_max_us", b64y, b1,
         "longer", "shorter", None),
        ("batch 64 not yielding vs batch 1, worst writer stall", "write_max_us", b64n, b1,
         "longer", "shorter", None),
    ]
    for what, key, a, b, more, less, limit in checks:
        r = paired_by_rep(res, key, a, b)
        if not r:
            out.append(f"- {what}: no paired samples (a p99 needs {P99_MIN_PROBES} probes)")
            continue
        m, lo, hi, cov = median_ci(r)
        line = f"- {what}: ratio {m:.2f}, {verdict(m, lo, hi, more, less, n=len(r))} (paired by rep)"
        if limit is not None:
            line += "; " + goal(lo, hi, limit, len(r) if cov >= 0.95 else 0)
        out.append(line)
    out.append("")


def batch_remote(res, out):
    sel = res.select(bench="batch_remote")
    if not sel:
        return
    sizes = sorted({s["batch"] for s in sel})
    n = len(res.values("s_per_gib", bench="batch_remote", batch=sizes[0]))
    out.append(f"**Batching for a remote agent** (one process_madvise(MADV_COLLAPSE) over "
               f"a live target's {sel[0]['vmas']} vmas, {sel[0]['mib']} MiB in all, while the "
               "target keeps reading them; batch 1 is mainline's path; median [95% CI] of "
               f"{n} reps, the sizes in random order each rep, after a warm-up):\n")
    out.append("| batch | agent s/GiB | target reads (M/s) | failed |")
    out.append("|---|---|---|---|")
    for b in sizes:
        kw = {"bench": "batch_remote", "batch": b}
        out.append(f"| {b} | {with_ci(res.values('s_per_gib', **kw), 3)} | "
                   f"{with_ci(res.values('target_mreads_s', **kw), 3)} | {res.failed(**kw)} |")
    out.append("")
    b1 = {"bench": "batch_remote", "batch": 1}
    for b in sizes:
        if b == 1:
            continue
        bb = {"bench": "batch_remote", "batch": b}
        for what, key, more, less in (("agent time per GiB", "s_per_gib", "slower", "faster"),
                                      ("target reads meanwhile", "target_mreads_s", "more", "fewer")):
            r = paired_by_rep(res, key, bb, b1)
            if not r:
                continue
            m, lo, hi, _ = median_ci(r)
            out.append(f"- batch {b} vs batch 1, {what}: ratio {m:.2f}, "
                       f"{verdict(m, lo, hi, more, less, n=len(r))} (paired by rep)")
    out.append("")


def khugepaged(res, out):
    cases = ["default", "pace", "pages_to_scan_x8"]
    sel = res.select(bench="khugepaged")
    if not sel:
        return
    lim = sel[0].get("limit_s", "?")
    mib = sel[0]["mib"]
    out.append(f"**khugepaged coverage** of {mib} MiB `MADV_HUGEPAGE` (scan_sleep_millisecs 1000 "
               f"for all; median [95% CI] over the reps that reached 90% within {lim} s):\n")
    out.append("| case | pages per pass | s to 90% | reached 90% | khugepaged CPU s |")
    out.append("|---|---|---|---|---|")
    labels = {"default": "default", "pace": "`pace` policy (x8 pass)",
              "pages_to_scan_x8": "sysfs `pages_to_scan` x8"}
    for c in cases:
        ss = res.select(bench="khugepaged", case=c)
        if not ss:
            continue
        reached = [s["s_to_90pct"] for s in ss if s["s_to_90pct"] is not None]
        t = with_ci(reached, 3) if reached else f"never within {lim} s"
        out.append(f"| {labels[c]} | {ss[0]['pages_to_scan']} | {t} | {len(reached)} of {len(ss)} | "
                   f"{with_ci([s['khugepaged_cpu_s'] for s in ss], 3)} |")
    out.append("")
    a = res.values("s_to_90pct", bench="khugepaged", case="pace")
    b = res.values("s_to_90pct", bench="khugepaged", case="pages_to_scan_x8")
    if a and b:
        m, lo, hi = boot_ratio(a, b)
        out.append(f"- `pace` vs `pages_to_scan` x8, time to 90%: "
                   f"{verdict(m, lo, hi, n=min(len(a), len(b)))}")
    a = res.values("s_to_90pct", bench="khugepaged", case="pace")
    b = res.values("s_to_90pct", bench="khugepaged", case="default")
    if a and b:
        m, lo, hi = boot_ratio(a, b)
        out.append(f"- `pace` vs default, time to 90%: {verdict(m, lo, hi, n=min(len(a), len(b)))}")
    out.append("")


def khugepaged_stalls(res, out):
    sel = res.select(bench="khugepaged_stalls")
    if not sel:
        return
    out.append(f"**khugepaged and the mmap lock**: the same writer and reader threads for "
               f"{sel[0]['window_s']} s while khugepaged collapses their {sel[0]['mib']} MiB "
               "(`MADV_HUGEPAGE`, 1 s sleep), and while it leaves them alone (idle: the control); "
               "stalls in µs, median [95% CI] over the reps:\n")
    out.append("| case | huge after the window | writer p99 | writer max | reader p99 | reader max |")
    out.append("|---|---|---|---|---|---|")
    for c in ("idle", "default", "pages_to_scan_x8"):
        kw = {"bench": "khugepaged_stalls", "case": c}
        if not res.select(**kw):
            continue
        row = [c, with_ci(res.values("huge_pct", **kw), 3) + " %"]
        row += [with_ci(res.values(k, **kw), 3) for k in
                ("write_p99_us", "write_max_us", "read_p99_us", "read_max_us")]
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    for c in ("default", "pages_to_scan_x8"):
        for key, what in (("write_max_us", "worst writer stall"), ("read_max_us", "worst reader stall")):
            r = res.paired(key, c, "idle", bench="khugepaged_stalls")
            if r:
                m, lo, hi, _ = median_ci(r)
                out.append(f"- {c} vs idle, {what}: ratio {m:.2f}, "
                           f"{verdict(m, lo, hi, 'longer', 'shorter', n=len(r))} (paired by rep)")
    out.append("")


def khugepaged_cgroups(res, out):
    sel = res.select(bench="khugepaged_priority")
    if sel:
        lim = sel[0]["limit_s"]
        out.append(f"**khugepaged per cgroup: priority** (a {sel[0]['crit_mib']} MiB latency-critical "
                   f"process starts after a {sel[0]['batch_mib']} MiB batch process, both "
                   "`MADV_HUGEPAGE`, `scan_sleep_millisecs` 100, default `pages_to_scan`; "
                   "`priority` at the root, `passthrough` on the critical cgroup; median "
                   f"[95% CI]; a rep that never reached 90% within {lim} s counts as {lim} s):\n")
        out.append("| case | critical: s to 90% huge | reached | batch % huge by then |")
        out.append("|---|---|---|---|")
        times = {}
        for c in ("none", "priority"):
            ss = res.select(bench="khugepaged_priority", case=c)
            if not ss:
                continue
            times[c] = [s["crit_s_to_90pct"] if s["crit_s_to_90pct"] is not None else lim
                        for s in ss]
            reached = sum(1 for s in ss if s["crit_s_to_90pct"] is not None)
            out.append(f"| {c} | {with_ci(times[c], 3)} | {reached} of {len(ss)} | "
                       f"{with_ci([s['batch_huge_pct_then'] for s in ss], 3)} |")
        out.append("")
        if len(times) == 2:
            m, lo, hi = boot_ratio(times["none"], times["priority"])
            n = min(len(times["none"]), len(times["priority"]))
            good = goal(lo, hi, 10, n, higher_is_better=True)
            out.append(f"- critical memory {m:.1f}x sooner under priority [{lo:.1f}x, {hi:.1f}x] "
                       f"(goal: >= 10x; {good}, n={n})")
            out.append("")
    sel = res.select(bench="khugepaged_skip")
    if sel:
        out.append(f"**khugepaged per cgroup: skip_huge** ({sel[0]['mib']} MiB already collapsed; "
                   f"after two full scans, a {sel[0]['window_s']} s window; median [95% CI]):\n")
        out.append("| policy | ranges scanned | mm skips | khugepaged CPU s | % huge |")
        out.append("|---|---|---|---|---|")
        for c in ("passthrough", "skip_huge"):
            kw = {"bench": "khugepaged_skip", "case": c}
            if not res.select(**kw):
                continue
            out.append(f"| {c} | " + " | ".join(with_ci(res.values(k, **kw), 3) for k in
                       ("ranges_scanned", "mm_skips", "khugepaged_cpu_s", "huge_pct")) + " |")
        out.append("")
        a = res.values("ranges_scanned", bench="khugepaged_skip", case="passthrough")
        b = res.values("ranges_scanned", bench="khugepaged_skip", case="skip_huge")
        if a and b:
            ma, mb = median(a), median(b)
            ratio = f"{ma / mb:.0f}x less" if mb else "none at all"
            # passthrough's ranges over skip_huge's (+1: skip_huge may scan none)
            m, lo, hi = boot_ratio(a, [x + 1 for x in b])
            good = goal(lo, hi, 5, min(len(a), len(b)), higher_is_better=True)
            out.append(f"- scanning of huge memory with skip_huge: {ratio} "
                       f"(median {mb:g} vs {ma:g} ranges; goal: >= 5x less; {good})")
            out.append("")


def memcpy(res, out):
    r = res.values("ratio", bench="memcpy")
    if not r:
        return
    out.append(f"**The limit**: collapse throughput as a share of in-guest memcpy of 2 MiB blocks, "
               f"median [95% CI] of {len(r)} paired reps: "
               f"{with_ci([x * 100 for x in r], 3)} % "
               f"(memcpy {with_ci(res.values('memcpy_mib_s', bench='memcpy'), 4)} MiB/s, "
               f"collapse {with_ci(res.values('collapse_mib_s', bench='memcpy'), 4)} MiB/s).\n")


ORDERS_LABELS = {"pmd": "PMD only", "64k": "64 KiB only",
                 "mthp_frugal": "both, `mthp_frugal` near memory.high"}


def orders(res, out):
    sel = res.select(bench="orders")
    if not sel:
        return
    n = len(res.values("rss_kb", bench="orders", case="pmd", memory="dense"))
    out.append(f"**Memory by order** ({sel[0]['mib']} MiB filled by a process in a cgroup, "
               "densely or sparsely (one 64 KiB block of every 512 KiB), then `MADV_HUGEPAGE`; "
               "khugepaged at full speed with its default `max_ptes_none` until two full scans "
               "after; `mthp_frugal` on the cgroup with memory.high 128 MiB above what it touched; "
               f"median [95% CI] of {n} reps, the six cases in random order each rep, after a "
               "warm-up):\n")
    out.append("| memory | sizes allowed | touched MiB | RSS MiB | added by collapse | "
               "in 64 KiB folios | in PMDs | memory.peak MiB | s to settle | khugepaged CPU s |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for mem in ("dense", "sparse"):
        for c in ("pmd", "64k", "mthp_frugal"):
            kw = {"bench": "orders", "case": c, "memory": mem}
            if not res.select(**kw):
                continue
            mib = lambda k: [x / 1024 for x in res.values(k, **kw)]
            row = [mem, ORDERS_LABELS[c], with_ci(mib("touched_kb"), 3), with_ci(mib("rss_kb"), 3),
                   with_ci(res.values("overhead_pct", **kw), 3) + " %",
                   with_ci(res.values("pct_64k", **kw), 3) + " %",
                   with_ci(res.values("pct_pmd", **kw), 3) + " %",
                   with_ci(mib("peak_kb"), 3), with_ci(res.values("settle_s", **kw), 3),
                   with_ci(res.values("khugepaged_cpu_s", **kw), 3)]
            failed = res.failed(**kw)
            if failed:
                row[1] += f" ({failed} not settled, excluded)"
            out.append("| " + " | ".join(row) + " |")
    out.append("")
    for mem in ("dense", "sparse"):
        pmd = {"bench": "orders", "case": "pmd", "memory": mem}
        for c in ("64k", "mthp_frugal"):
            kw = {"bench": "orders", "case": c, "memory": mem}
            for key, what, more, less in (("rss_kb", "RSS", "more", "less"),
                                          ("khugepaged_cpu_s", "khugepaged CPU", "more", "less")):
                r = paired_by_rep(res, key, kw, pmd)
                if not r:
                    continue
                m, lo, hi, _ = median_ci(r)
                out.append(f"- {mem}, {ORDERS_LABELS[c]} vs PMD only, {what}: ratio {m:.2f}, "
                           f"{verdict(m, lo, hi, more, less, n=len(r))} (paired by rep)")
    out.append("")


SPLIT_LABELS = {"eager": "eager, limit from the start",
                "frugal": "frugal, limit from the start",
                "elastic": "elastic, limit from the start",
                "eager_late": "eager, limit after the collapse",
                "elastic_late": "elastic, limit after the collapse",
                "eager_steps": "eager, limit lowered in steps",
                "elastic_steps": "elastic, limit lowered in steps",
                "eager_nolimit": "eager, no limit",
                "elastic_nolimit": "elastic, no limit"}


def split(res, out):
    sel = res.select(bench="split")
    if not sel:
        return
    n = len(res.values("peak_kb", bench="split", case="frugal"))
    limit = next((d["limit_mib"] for d in sel if d["limit_mib"] > 0), "?")
    out.append(f"**Underused huge pages given back** ({sel[0]['mib']} MiB heap filled by a process "
               "in a cgroup, four 2 MiB ranges in five dense (480 of 512 pages) and one sparse (64), "
               "collapsed by its own `MADV_COLLAPSE`, then 1/8 more of small pages; memory.high "
               f"{limit} MiB, 10% above frugal's footprint and below eager's, set from the start, or "
               "only after the collapse (late), or lowered to it in 4 steps during the growth, or "
               "never; swap to the guest's zram; "
               f"median [95% CI] of {n} reps, the cases in random order each rep, after a "
               "warm-up):\n")
    out.append("| case | huge after collapse | huge at the end | dense ranges huge at the end | "
               "memory.current MiB | memory.peak MiB | memory.high events | swap peak MiB | "
               "s to grow | THPs split |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for c in SPLIT_LABELS:
        kw = {"bench": "split", "case": c}
        if not res.select(**kw):
            continue
        mib = lambda k: [x / 1024 for x in res.values(k, **kw)]
        row = [SPLIT_LABELS[c], with_ci(res.values("coverage_collapse_pct", **kw), 3) + " %",
               with_ci(res.values("coverage_end_pct", **kw), 3) + " %",
               (with_ci(res.values("dense_end_pct", **kw), 3) + " %"
                if res.values("dense_end_pct", **kw) else "–"),
               with_ci(mib("current_kb"), 3), with_ci(mib("peak_kb"), 3),
               with_ci(res.values("high_events", **kw), 3), with_ci(mib("swap_peak_kb"), 3),
               with_ci(res.values("grow_s", **kw), 3),
               with_ci(res.values("underused_split", **kw), 3)]
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    # the goals, paired by rep: elastic's coverage against eager's,
    # its peak against frugal's, under the same limit; and without a limit
    # elastic against eager
    for a, b, key, what in (("elastic", "eager", "coverage_end_pct", "huge coverage at the end"),
                            ("elastic", "frugal", "peak_kb", "memory.peak"),
                            ("elastic", "eager_nolimit", "dense_end_pct",
                             "huge coverage of the dense ranges at the end"),
                            ("elastic_late", "eager_late", "coverage_end_pct",
                             "huge coverage at the end"),
                            ("elastic_late", "eager_late", "swap_peak_kb", "swap peak"),
                            ("elastic_late", "eager_nolimit", "dense_end_pct",
                             "huge coverage of the dense ranges at the end"),
                            ("elastic_late", "frugal", "current_kb", "memory.current at the end"),
                            ("elastic_steps", "eager_steps", "swap_peak_kb", "swap peak"),
                            ("elastic_steps", "eager_nolimit", "dense_end_pct",
                             "huge coverage of the dense ranges at the end"),
                            ("elastic_nolimit", "eager_nolimit", "coverage_end_pct",
                             "huge coverage at the end"),
                            ("elastic_nolimit", "eager_nolimit", "peak_kb", "memory.peak")):
        r = paired_by_rep(res, key, {"bench": "split", "case": a}, {"bench": "split", "case": b})
        if not r:
            continue
        m, lo, hi, _ = median_ci(r)
        out.append(f"- {SPLIT_LABELS[a]} vs {SPLIT_LABELS[b]}, {what}: ratio {m:.3f} "
                   f"[{lo:.3f}, {hi:.3f}] (paired by rep)")
    out.append("")


SECTIONS = [hooks, scale, batch, batch_remote, khugepaged, khugepaged_stalls,
            khugepaged_cgroups, orders, split, memcpy]


def meta_line(m):
    return (f"{m.get('date', '?')} on {m.get('host', '?')} ({m.get('cpus', '?')} CPUs, "
            f"{m.get('qemu', 'QEMU')}, guest {m.get('guest', '?')}; host load average at the "
            f"start {m.get('loadavg', '?')})")


def report(doc):
    res = Results(doc)
    out = []
    m = res.meta
    if m:
        out.append(f"Measured {meta_line(m)}. Regenerate with `make bench` then "
                   "`make bench-readme`.\n")
    for section in SECTIONS:
        section(res, out)
    return "\n".join(out).rstrip() + "\n"


def blocks(lines):
    """Split a section's lines at blank lines: [(kind, lines)], kind being
    "table", "list" or "text"."""
    out, cur = [], []
    for line in lines + [""]:
        if line.strip():
            cur.append(line)
            continue
        if cur:
            kind = ("table" if all(x.startswith("|") for x in cur) else
                    "list" if all(x.startswith("- ") for x in cur) else "text")
            out.append((kind, cur))
            cur = []
    return out


def merge_table(tables):
    """[(base, lines)] of tables with one header: one table with a first
    column naming the base, each row's bases next to each other."""
    head, sep = tables[0][1][0], tables[0][1][1]
    keys, rows = [], {}
    for base, lines in tables:
        for line in lines[2:]:
            # a row is named by its cells before the first measured one
            cells = [c.strip() for c in line.split("|")[1:-1]]
            key = tuple(c for c in cells[:next((i for i, c in enumerate(cells) if "[" in c),
                                               1)])
            if key not in rows:
                keys.append(key)
                rows[key] = []
            rows[key].append(f"| {base} |" + line[1:])
    return ["| base " + head, "|---" + sep] + [r for k in keys for r in rows[k]]


def merge_section(parts):
    """One section (a table function's output) of several bases side by
    side: [(base, lines)] -> lines."""
    parts = [(b, ls) for b, ls in parts if ls]
    if len(parts) == 1:
        b, ls = parts[0]
        return [f"({b} only) " + ls[0]] + ls[1:]
    split = [(b, blocks(ls)) for b, ls in parts]
    shapes = {tuple(k for k, _ in bl) for _, bl in split}
    out = []
    if len(shapes) != 1:
        # different shapes: each base's section whole, one after the other
        for b, ls in parts:
            out += [f"{b}: " + ls[0]] + ls[1:] + [""]
        return out
    for i, (kind, _) in enumerate(split[0][1]):
        mine = [(b, bl[i][1]) for b, bl in split]
        heads = {tuple(ls[:2]) for _, ls in mine}
        if kind == "table" and len(heads) == 1:
            out += merge_table(mine)
        elif kind == "text" and len({tuple(ls) for _, ls in mine}) == 1:
            out += mine[0][1]
        elif kind == "list":
            n = max(len(ls) for _, ls in mine)
            out += [f"- {b}: " + ls[j][2:] for j in range(n) for b, ls in mine if j < len(ls)]
        else:
            for b, ls in mine:
                # a table keeps its header first: the base on a line before
                out += ([f"{b}:", ""] + ls if kind == "table" else
                        [f"{b}: " + ls[0]] + ls[1:]) + [""]
            out.pop()
        out.append("")
    return out


def report_bases(docs):
    """Every table with the bases of [(base, doc)] side by side."""
    res = [(b, Results(d)) for b, d in docs]
    out = ["Measured " + "; ".join(f"{b}: {meta_line(r.meta)}" for b, r in res) +
           ". Both bases come from one `make bench` run; each kernel's rows are its own "
           "boots (its unpatched and patched kernel side by side), so compare the bases "
           "by their ratios to their own controls, not by their raw times. Regenerate "
           "with `make bench` then `make bench-readme`.\n"]
    for section in SECTIONS:
        parts = []
        for b, r in res:
            lines = []
            section(r, lines)
            # a section's items may hold several lines each
            parts.append((b, "\n".join(lines).split("\n") if lines else []))
        if any(ls for _, ls in parts):
            out += merge_section(parts)
    return "\n".join(out).rstrip() + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="+", metavar="[BASE=]RESULTS",
                    help="build/BASE/bench/results.json; several as BASE=FILE: side by side")
    ap.add_argument("--readme", metavar="FILE",
                    help="replace FILE's text between <!-- bench:begin --> and <!-- bench:end -->")
    a = ap.parse_args()
    docs = []
    for arg in a.results:
        # BASE=FILE (a base is a version, never a path) or FILE
        base, sep, path = arg.partition("=")
        if not sep or "/" in base:
            base, path = "", arg
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f"report.py: {path}: {e}; run make bench")
        if isinstance(doc, list):
            doc = {"samples": doc}
        docs.append((base or doc.get("meta", {}).get("base", path), doc))
    if len(docs) == 1:
        text = report(docs[0][1])
    else:
        runs = {d.get("meta", {}).get("run") for _, d in docs}
        if len(runs) != 1 or None in runs:
            sys.exit("report.py: these results are not from one make bench run (meta.run: "
                     + ", ".join(f"{b}: {d.get('meta', {}).get('run')}" for b, d in docs)
                     + "); run make bench without KERNEL")
        text = report_bases(docs)
    if not a.readme:
        sys.stdout.write(text)
        return 0
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    with open(a.readme) as f:
        readme = f.read()
    if begin not in readme or end not in readme:
        sys.exit(f"report.py: {a.readme} has no {begin} ... {end} section")
    head, rest = readme.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(a.readme, "w") as f:
        f.write(head + begin + "\n" + text + end + tail)
    print(f"report.py: {a.readme}: Performance numbers replaced from {' '.join(a.results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
