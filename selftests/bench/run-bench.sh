#!/bin/sh
# make bench: boot the unpatched and the patched kernel, run collapse_bench
# in each, and print the tables (selftests/bench/report.py: medians with
# 95% confidence intervals); every sample goes to OUTDIR/results.json, the
# plots to OUTDIR/*.png.
# Usage: run-bench.sh OUTDIR BASE_BZIMAGE
# Environment: BENCH_MB (default 256), BENCH_REPS (default 7, at least 6
# for a 95% interval of a median), BENCH_ICOUNT_REPS (default 7),
# BENCH_REPORT_ONLY=1 to tabulate what the last run left in OUTDIR,
# BENCH_RUN: the id of a make bench run over several bases (results.json
# meta.run: report.py puts only one run's bases side by side), BENCH_ONLY:
# the boots to run (their labels, e.g. "patched-split"; default every one).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
RUN=$HERE/../vm/run
OUT=$1
BASE=$2
MB=${BENCH_MB:-256}
REPS=${BENCH_REPS:-7}
IREPS=${BENCH_ICOUNT_REPS:-7}
ICOUNT=${BENCH_ICOUNT:--icount shift=3,sleep=off}
mkdir -p "$OUT"

# boot LABEL KERNEL QEMU_EXTRA COMMAND...: BENCH lines tagged with LABEL
boot() {
	label=$1; kernel=$2; extra=$3; shift 3
	case " ${BENCH_ONLY:-$label} " in
	*" $label "*) ;;
	*) return 0 ;;
	esac
	echo "== $label: $*" >&2
	# Under -icount the two vCPUs run in turn on one host thread and guest
	# time follows the instructions executed: a vCPU waits its turn for
	# longer than RCU's 21 s stall timeout (and the soft-lockup watchdog's
	# 20 s) while the other runs a whole collapse, and the kernel reports a
	# stall that is the emulator's (seen on the unpatched 6.12 as much,
	# in a kworker at an interrupt's entry). Those two are relaxed there
	# only; the tcg boots keep them, so a real stall still fails a run.
	cmdline=
	case $extra in
	*-icount*) cmdline="rcupdate.rcu_cpu_stall_timeout=300 nosoftlockup" ;;
	esac
	VM_CMDLINE=$cmdline BZIMAGE=$kernel QEMU_EXTRA=$extra "$RUN" --timeout 3600 \
		--log "$OUT/$label.log" -- "$@" > /dev/null 2>&1 || {
		echo "run-bench: $label failed; see $OUT/$label.log" >&2
		tail -n 20 "$OUT/$label.log" >&2
		exit 1
	}
	# a kernel problem report invalidates the numbers
	"$HERE/../vm/kernel-problems" "$OUT/$label.log" || {
		echo "run-bench: $label: the kernel reported problems; see $OUT/$label.log" >&2
		exit 1
	}
	tr -d '\r' < "$OUT/$label.log" | sed -n "s/^BENCH {/{\"kernel\": \"$label\", /p" >> "$OUT/lines"
	tr -d '\r' < "$OUT/$label.log" | sed -n 's/^SERIES //p' >> "$OUT/series"
	tr -d '\r' < "$OUT/$label.log" | sed -n 's/^LAT //p' >> "$OUT/latencies"
}

PATCHED=${BZIMAGE:-${BUILD:-$HERE/../../build/${KERNEL:-6.12}}/kobj/arch/x86/boot/bzImage}
if [ -z "${BENCH_REPORT_ONLY:-}" ]; then
	load=$(cut -d' ' -f1-3 /proc/loadavg)
	: > "$OUT/lines"
	: > "$OUT/series"
	: > "$OUT/latencies"
	boot unpatched-tcg "$BASE" "" collapse_bench hooks --mb "$MB" --reps "$REPS"
	boot patched-tcg "$PATCHED" "" collapse_bench hooks --mb "$MB" --reps "$REPS"
	boot unpatched-icount "$BASE" "$ICOUNT" collapse_bench hooks --mb "$MB" --reps "$IREPS"
	boot patched-icount "$PATCHED" "$ICOUNT" collapse_bench hooks --mb "$MB" --reps "$IREPS"
	boot patched-scale "$PATCHED" "" collapse_bench scale --mb "$MB" --reps "$REPS"
	boot patched-batch "$PATCHED" "" collapse_bench batch --mb 512 --reps "$REPS"
	boot patched-batch-remote "$PATCHED" "" collapse_bench batch-remote --mb 512 --reps "$REPS"
	boot patched-khugepaged "$PATCHED" "" collapse_bench khugepaged --mb "$MB" --reps "$REPS"
	boot patched-khugepaged-stalls "$PATCHED" "" collapse_bench khugepaged-stalls --mb "$MB" --reps "$REPS"
	boot patched-khugepaged-cgroups "$PATCHED" "" collapse_bench khugepaged-cgroups --reps "$REPS"
	boot patched-memcpy "$PATCHED" "" collapse_bench memcpy --mb "$MB" --reps "$REPS"
	# memory by order: only where khugepaged makes mTHP (7.3); skipped on 6.12
	boot patched-orders "$PATCHED" "" collapse_bench orders --mb "$MB" --reps "$REPS"
	# underused huge pages given back (split_underused)
	boot patched-split "$PATCHED" "" collapse_bench split --mb "$MB" --reps "$REPS"
	{
		printf '{"meta": {"date": "%s", "host": "%s", "cpus": %s, ' \
			"$(date -u +%Y-%m-%d)" "$(uname -m) $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)" "$(nproc)"
		printf '"qemu": "%s", "guest": "2 vCPUs, 3 GiB, numa=fake=2, TCG", ' \
			"$(qemu-system-x86_64 --version | head -1 | sed 's/ (.*//')"
		printf '"loadavg": "%s", "reps": %s, "icount_reps": %s, ' \
			"$load" "$REPS" "$IREPS"
		# the base, and the make bench run that measured both bases
		printf '"base": "%s", "run": "%s"},\n "samples": [\n' \
			"${KERNEL:-?}" "${BENCH_RUN:-$(date -u +%Y%m%dT%H%M%SZ)-$$}"
		sed '$!s/$/,/' "$OUT/lines"
		echo "]}"
	} > "$OUT/results.json"
fi

python3 "$HERE/report.py" "$OUT/results.json"

# the plots need the khugepaged and batch boots (not run under BENCH_ONLY)
if command -v gnuplot >/dev/null && [ -s "$OUT/series" ]; then
	for c in default eager pages_to_scan_x8; do
		awk -v c=$c '$1 == "khugepaged" && $2 == c { print $3, $4 }' "$OUT/series" > "$OUT/coverage-$c.dat"
	done
	# CDF of every stall of the first rep: one file per configuration and side
	rm -f "$OUT"/cdf-*.dat
	sort -k1,1 -k2,2 -k3,3g "$OUT/latencies" | awk -v out="$OUT" '
		{ f = out "/cdf-" $2 "-" $1 ".dat"; v[f, ++n[f]] = $3 }
		END { for (f in n) for (i = 1; i <= n[f]; i++) print v[f, i], i / n[f] > f }'
	cdfplot() {	# SIDE: a gnuplot plot command over every configuration
		sep="plot"
		for c in 1_yield 1_no_yield 8_yield 8_no_yield 64_yield 64_no_yield; do
			f="$OUT/cdf-$1-$c.dat"
			[ -s "$f" ] || continue
			dt=1; case $c in *no_yield) dt=2 ;; esac
			printf '%s "%s" with lines lw 2 dt %s title "batch %s"' "$sep" "$f" "$dt" \
				"$(echo "$c" | tr _ ' ')"
			sep=","
		done
		echo
	}
	gnuplot <<GP
set terminal png size 900,500 noenhanced
set output "$OUT/khugepaged-coverage.png"
set title "khugepaged coverage of $MB MiB over time (scan_sleep 1 s, first rep)"
set xlabel "seconds"; set ylabel "AnonHugePages (%)"; set grid; set key right bottom
plot "$OUT/coverage-default.dat" with lines lw 2 title "default (4096 pages/pass)", \
     "$OUT/coverage-eager.dat" with lines lw 2 title "eager policy", \
     "$OUT/coverage-pages_to_scan_x8.dat" with lines lw 2 dt 2 title "pages_to_scan x8"
set output "$OUT/batch-stalls-write.png"
set title "CDF of a writer's mmap+touch+munmap of 64 KiB beside MADV_COLLAPSE of 512 MiB"
set xlabel "microseconds"; set ylabel "fraction of probes"; set logscale x; set key right bottom
$(cdfplot write)
set output "$OUT/batch-stalls-read.png"
set title "CDF of a reader's fault of 64 KiB in the collapsing vma"
$(cdfplot read)
GP
	echo
	echo "plots: $OUT/khugepaged-coverage.png $OUT/batch-stalls-write.png" \
		"$OUT/batch-stalls-read.png; data: $OUT/results.json"
fi
