#!/bin/sh
# `make run`: what collapse_ext does, shown on the booted kernel.
# Runs in the guest (selftests/vm/run -- /usr/share/collapse_ext/demo.sh).
set -u
BPF=/usr/share/collapse_ext/bpf

echo "== collapse_ext demo on $(uname -r), $(nproc) CPUs, $(ls -d /sys/devices/system/node/node* | wc -l) NUMA nodes"

thp_counters() {
	grep -E '^thp_(collapse_alloc|collapse_alloc_failed|scan_exceed)' /proc/vmstat |
		sed 's/^/   /'
}

if [ -d /sys/kernel/mm/collapse_ext ] && command -v collapsectl >/dev/null &&
   [ -f "$BPF/eager.bpf.o" ] && [ -f "$BPF/frugal.bpf.o" ]; then
	echo "== A/B: frugal vs eager, same workload in two cgroups"
	collapsectl ab "$BPF/frugal.bpf.o" "$BPF/eager.bpf.o" --duration 20 \
		-- collapse_demo --size 64 --sparse 50 --hold 20
	exit $?
fi

echo "== MADV_COLLAPSE on a 64 MiB buffer (no policy attached)"
collapse_demo --size 64
rc=$?
echo "== kernel collapse counters"
thp_counters
if [ -d /sys/kernel/mm/collapse_ext ]; then
	echo "== /sys/kernel/mm/collapse_ext"
	for f in /sys/kernel/mm/collapse_ext/*; do
		[ -f "$f" ] && echo "   $(basename "$f"): $(cat "$f")"
	done
fi
exit $rc
