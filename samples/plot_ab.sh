#!/bin/sh
# Plot the coverage curves `make run` printed between @@CSV markers, and
# those of its khugepaged phase (@@CSV2) into OUTPUT-khugepaged.png.
# Usage: samples/plot_ab.sh CONSOLE_LOG OUTPUT.png
set -eu
log=$1
png=$2
csv=${png%.png}.csv
csv2=${png%.png}-khugepaged.csv
png2=${png%.png}-khugepaged.png
# Up to the last sample with memory in it: a sample taken after the
# workloads exited (every column 0) is their teardown, not coverage.
until_last_nonzero() {
	awk -F, '{ row[NR] = $0; for (i = 2; i <= NF; i++) if ($i + 0 > 0) last = NR }
		END { for (i = 1; i <= last; i++) print row[i] }'
}
sed -n '/@@CSV-BEGIN@@/,/@@CSV-END@@/p' "$log" | grep -E '^[0-9.]+,' | tr -d '\r' |
	until_last_nonzero > "$csv"
sed -n '/@@CSV2-BEGIN@@/,/@@CSV2-END@@/p' "$log" | grep -E '^[0-9.]+,' | tr -d '\r' |
	until_last_nonzero > "$csv2"
if [ ! -s "$csv" ]; then
	echo "plot_ab: no coverage data in $log" >&2
	exit 1
fi
if ! command -v gnuplot >/dev/null; then
	echo "plot_ab: gnuplot missing (apt-get install gnuplot-nox); data in $csv" >&2
	exit 0
fi
gnuplot <<GP
set terminal png size 900,500 noenhanced
set output "$png"
set datafile separator ","
set title "collapse_ext A/B: huge page coverage of the same workload"
set xlabel "seconds"
set ylabel "anon_thp (MiB)"
# the legend below the plot, never on the curves
set key below
set grid
plot "$csv" using 1:(\$2/1024) with linespoints title "A: frugal", \
     "$csv" using 1:(\$3/1024) with linespoints title "B: eager", \
     "$csv" using 1:(\$4/1024) with lines dashtype 2 title "A: anon memory", \
     "$csv" using 1:(\$5/1024) with lines dashtype 2 title "B: anon memory"
set output "$png2"
set title "khugepaged per cgroup: the same 64 MiB, khugepaged only"
plot "$csv2" using 1:(\$2/1024) with linespoints title "A: passthrough (whole passes)", \
     "$csv2" using 1:(\$3/1024) with linespoints title "B: priority (5% of a pass per visit)"
GP
echo "plot_ab: $png $png2"
