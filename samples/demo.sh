#!/bin/sh
# `make run`: collapse_ext at work on the booted kernel. Runs in the guest
# (selftests/vm/run -- /usr/share/collapse_ext/demo.sh).
#
# The same workload runs in two cgroups at once, one under the frugal
# policy (never add memory) and one under eager (collapse sparse ranges
# too): MADV_COLLAPSE first, then khugepaged for what is left. collapsectl
# ab prints the huge page coverage over time and both policies' counters;
# the coverage curves are printed between @@CSV markers for the host to
# plot.
set -u
BPF=/usr/share/collapse_ext/bpf

echo "== collapse_ext demo on $(uname -r), $(nproc) CPUs," \
	"$(ls -d /sys/devices/system/node/node* | wc -l) NUMA nodes"

if [ ! -d /sys/kernel/mm/collapse_ext ]; then
	echo "this kernel has no collapse_ext: MADV_COLLAPSE only"
	exec collapse_demo --size 64
fi

# khugepaged at a pace a demo can watch: 8 huge pages every 100 ms.
K=/sys/kernel/mm/transparent_hugepage/khugepaged
echo 100 > $K/scan_sleep_millisecs
echo 4096 > $K/pages_to_scan

echo "== workload: 64 MiB, every second 2 MiB range 25% untouched;"
echo "   MADV_COLLAPSE once, then 15 s of khugepaged (MADV_HUGEPAGE)"
collapsectl ab $BPF/frugal.bpf.o $BPF/eager.bpf.o --duration 18 \
	--csv /tmp/ab.csv -- collapse_demo --size 64 --sparse 25 --hold 15 \
	--walk 200000 > /tmp/ab.out 2>&1
rc=$?
# the two runs' own output interleaves: show the table and the counters
grep -v -e '^t=' -e '^buffer' -e '^AnonHuge' -e '^random' -e '^MADV' /tmp/ab.out
echo "== what each run saw"
grep -e '^MADV' -e '^random walk after' /tmp/ab.out | sed 's/^/   /'

echo "@@CSV-BEGIN@@"
cat /tmp/ab.csv
echo "@@CSV-END@@"

echo "== vmstat"
grep -E '^thp_(collapse_alloc|scan_exceed)' /proc/vmstat | sed 's/^/   /'
exit $rc
