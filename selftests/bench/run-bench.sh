#!/bin/sh
# make bench: boot the unpatched and the patched kernel, run collapse_bench
# in each, and print one table per benchmark; the results go to
# OUTDIR/results.json, the plots to OUTDIR/*.png.
# Usage: run-bench.sh OUTDIR BASE_BZIMAGE
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
RUN=$HERE/../vm/run
OUT=$1
BASE=$2
MB=${BENCH_MB:-256}
REPS=${BENCH_REPS:-7}
ICOUNT=${BENCH_ICOUNT:--icount shift=3,sleep=off}
mkdir -p "$OUT"

# boot LABEL KERNEL QEMU_EXTRA COMMAND...: BENCH lines tagged with LABEL
boot() {
	label=$1; kernel=$2; extra=$3; shift 3
	echo "== $label: $*" >&2
	KERNEL=$kernel QEMU_EXTRA=$extra "$RUN" --timeout 1800 \
		--log "$OUT/$label.log" -- "$@" > /dev/null 2>&1 || {
		echo "run-bench: $label failed; see $OUT/$label.log" >&2
		tail -n 20 "$OUT/$label.log" >&2
		exit 1
	}
	tr -d '\r' < "$OUT/$label.log" | sed -n "s/^BENCH {/{\"kernel\": \"$label\", /p" >> "$OUT/lines"
	tr -d '\r' < "$OUT/$label.log" | sed -n 's/^SERIES //p' >> "$OUT/series"
}

PATCHED=${KERNEL:-$HERE/../../build/kobj/arch/x86/boot/bzImage}
# BENCH_REPORT_ONLY=1: tabulate what the last run left in OUTDIR
if [ -z "${BENCH_REPORT_ONLY:-}" ]; then
: > "$OUT/lines"
: > "$OUT/series"
boot unpatched-tcg "$BASE" "" collapse_bench hooks --mb "$MB" --reps "$REPS"
boot patched-tcg "$PATCHED" "" collapse_bench hooks --mb "$MB" --reps "$REPS"
boot unpatched-icount "$BASE" "$ICOUNT" collapse_bench hooks --mb "$MB" --reps 3
boot patched-icount "$PATCHED" "$ICOUNT" collapse_bench hooks --mb "$MB" --reps 3
boot patched-batch "$PATCHED" "" collapse_bench batch --mb 512
boot patched-khugepaged "$PATCHED" "" collapse_bench khugepaged --mb "$MB"
boot patched-memcpy "$PATCHED" "" collapse_bench memcpy --mb "$MB"
fi

{ echo "["; sed '$!s/$/,/' "$OUT/lines"; echo "]"; } > "$OUT/results.json"

# field LINE KEY
J='function f(k,   m) { if (match($0, "\"" k "\": \"?[^,}\"]*")) { m = substr($0, RSTART, RLENGTH); sub(/^[^:]*: "?/, "", m); return m } return "" }'

echo
echo "1. Hook cost: MADV_COLLAPSE of $MB MiB, fresh mappings, median s/GiB ($REPS reps TCG, 3 icount)"
awk "$J"'
f("bench") == "hooks" && f("s_per_gib") != "" {
	mode = f("kernel"); sub(/^(un)?patched-/, "", mode)
	key = (f("kernel") ~ /^unpatched/ ? "unpatched" : "patched") "/" f("case")
	t[mode, key] = f("s_per_gib"); calls[mode, key] = f("hook_calls_per_collapse")
	spread[mode, key] = f("max") - f("min")
	pmds[mode, key] = f("pmds_per_collapse"); modes[mode] = 1
}
END {
	split("unpatched/none patched/none patched/passthrough_root patched/passthrough_nested patched/unrelated_leaf_policy", ks, " ")
	for (mode in modes) {
		printf "  %-6s %-30s %10s %12s %12s %14s\n", mode, "kernel/policy", "s/GiB", "vs unpatched", "vs no policy", "ns/hook call"
		printf "  %-6s (hook calls per %s MiB collapse: %s)\n", "", '"$MB"', calls[mode, "patched/passthrough_root"]
		base = t[mode, "unpatched/none"]; np = t[mode, "patched/none"]
		for (i = 1; i <= 5; i++) {
			k = ks[i]
			if (t[mode, k] == "") continue
			hc = ""
			if (calls[mode, k] > 0 && np > 0) {
				# time per collapse = s/GiB * MiB/1024; a difference
				# smaller than the spread of the reps is noise
				if (t[mode, k] - np < spread[mode, k] || t[mode, k] - np < spread[mode, "patched/none"])
					hc = "below noise"
				else
					hc = sprintf("%.0f", (t[mode, k] - np) * '"$MB"' / 1024 / calls[mode, k] * 1e9)
			}
			vb = (base > 0) ? (t[mode, k] / base - 1) * 100 : 0
			vn = (np > 0) ? (t[mode, k] / np - 1) * 100 : 0
			printf "  %-6s %-30s %10.4f %+11.2f%% %+11.2f%% %14s\n", mode, k, t[mode, k], vb, vn, hc
		}
	}
}' "$OUT/lines"

echo
echo "2. Batch size: MADV_COLLAPSE of 512 MiB; another thread's mmap+touch of 64 KiB"
awk "$J"'
f("bench") == "batch" {
	if (!hdr++) printf "  %6s %10s %10s %12s %12s %12s\n", "batch", "s/GiB", "probes", "p50 us", "p99 us", "max us"
	printf "  %6s %10s %10s %12s %12s %12s\n", f("batch"), f("s_per_gib"), f("probes"), f("p50_us"), f("p99_us"), f("max_us")
	print f("batch"), f("p99_us"), f("max_us"), f("s_per_gib") > ("'"$OUT"'/batch.dat")
}' "$OUT/lines"

echo
echo "3. khugepaged: $MB MiB MADV_HUGEPAGE, scan_sleep 1 s, time to 90% AnonHugePages"
awk "$J"'
f("bench") == "khugepaged" {
	if (!hdr++) printf "  %-20s %14s %12s %18s\n", "case", "pages_to_scan", "s to 90%", "khugepaged CPU s"
	printf "  %-20s %14s %12s %18s\n", f("case"), f("pages_to_scan"), f("s_to_90pct"), f("khugepaged_cpu_s")
}' "$OUT/lines"

echo
echo "4. The limit: collapse throughput vs in-guest memcpy of 2 MiB blocks"
awk "$J"'
f("bench") == "memcpy" {
	printf "  memcpy %s MiB/s, collapse %s MiB/s: collapse runs at %.1f%% of the copy it cannot avoid\n",
		f("memcpy_mib_s"), f("collapse_mib_s"), f("ratio") * 100
}' "$OUT/lines"

if command -v gnuplot >/dev/null; then
	for c in default eager pages_to_scan_x8; do
		awk -v c=$c '$1 == "khugepaged" && $2 == c { print $3, $4 }' "$OUT/series" > "$OUT/coverage-$c.dat"
	done
	gnuplot <<GP
set terminal png size 900,500 noenhanced
set output "$OUT/khugepaged-coverage.png"
set title "khugepaged coverage of $MB MiB over time (scan_sleep 1 s)"
set xlabel "seconds"; set ylabel "AnonHugePages (%)"; set grid; set key right bottom
plot "$OUT/coverage-default.dat" with lines lw 2 title "default (4096 pages/pass)", \
     "$OUT/coverage-eager.dat" with lines lw 2 title "eager policy", \
     "$OUT/coverage-pages_to_scan_x8.dat" with lines lw 2 dt 2 title "pages_to_scan x8"
set output "$OUT/batch-latency.png"
set title "mmap+touch latency of another thread vs MADV_COLLAPSE batch size"
set xlabel "batch size (PMDs)"; set ylabel "microseconds"; set logscale x 2; set key left top
plot "$OUT/batch.dat" using 1:2 with linespoints lw 2 title "p99", \
     "$OUT/batch.dat" using 1:3 with linespoints lw 2 title "max"
GP
	echo
	echo "plots: $OUT/khugepaged-coverage.png $OUT/batch-latency.png; data: $OUT/results.json"
fi
