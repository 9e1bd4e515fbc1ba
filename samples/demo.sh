#!/bin/sh
# `make run`: collapse_ext at work on the booted kernel. Runs in the guest
# (selftests/vm/run -- /usr/share/collapse_ext/demo.sh).
#
# 1. The same workload runs in two cgroups at once, one under the frugal
#    policy (never add memory) and one under eager (collapse sparse ranges
#    too): MADV_COLLAPSE first, then khugepaged for what is left.
# 2. khugepaged alone (no MADV_COLLAPSE): the same workload under
#    passthrough (every visit may use the rest of khugepaged's pass) and
#    under priority (5% of it a visit, one PMD range at least): the
#    scan_budget hook deciding what khugepaged looks at first.
# collapsectl ab prints the huge page coverage over time and both
# policies' counters; the coverage curves are printed between @@CSV
# markers for the host to plot.
set -u
BPF=/usr/share/collapse_ext/bpf

echo "== collapse_ext demo on $(uname -r), $(nproc) CPUs," \
	"$(ls -d /sys/devices/system/node/node* | wc -l) NUMA nodes"

if ! collapsectl version --check; then
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

echo
echo "== khugepaged per cgroup: 64 MiB in each, khugepaged only (no MADV_COLLAPSE);"
echo "   A: passthrough (whole passes), B: priority (5% of a pass per visit)"
collapsectl ab $BPF/passthrough.bpf.o $BPF/priority.bpf.o --duration 20 \
	--csv /tmp/ab2.csv -- collapse_demo --size 64 --no-collapse --hold 18 \
	--walk 1000 > /tmp/ab2.out 2>&1 || rc=1
grep -v -e '^t=' -e '^buffer' -e '^AnonHuge' -e '^random' -e '^MADV' /tmp/ab2.out |
	grep -e 'seconds' -e '^ *[0-9]' -e 'counter' -e 'khugepaged_mm' \
	     -e 'scan_budget' -e 'collapse_succeeded' -e 'run [AB]'
echo "@@CSV2-BEGIN@@"
cat /tmp/ab2.csv
echo "@@CSV2-END@@"

echo "== vmstat"
grep -E '^thp_(collapse_alloc|scan_exceed)' /proc/vmstat | sed 's/^/   /'
exit $rc
