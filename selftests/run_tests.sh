#!/bin/sh
# Guest-side test runner: runs every collapse_ext selftest and the kernel
# tree's own selftests/mm/khugepaged, and prints one flat kselftest TAP
# stream: every case of every program gets its own `ok N` / `not ok N`
# line, numbered across the whole run; everything else a program prints is
# kept as `# ` diagnostics.  The host (selftests/vm/test) counts the lines.
#
# Usage: run_tests.sh [-l] [FILTER...]
#   -l       list the tests and exit
#   FILTER   only run tests whose name contains one of the filters
BIN=${SELFTEST_BIN:-/selftests/bin}
STATE=/tmp/run_tests.$$
mkdir -p "$STATE"
echo 0 > "$STATE/n"

# name cmd... ; one entry per line: NAME<TAB>COMMAND
tests() {
	for t in "$BIN"/*; do
		[ -x "$t" ] || continue
		printf '%s\t%s\n' "$(basename "$t")" "$t"
	done
	# The tree's regression baseline, per context and memory type,
	# without a policy and with the pass-through policy at the root.
	if [ -x /selftests/mm/khugepaged ]; then
		for ctx in madvise khugepaged; do
			for mem in anon shmem file; do
				printf 'khugepaged-%s-%s\t/selftests/mm/khugepaged %s:%s /mnt/thp\n' \
					"$ctx" "$mem" "$ctx" "$mem"
			done
		done
		pt=/usr/share/collapse_ext/bpf/passthrough.bpf.o
		if [ -f "$pt" ] && [ -d /sys/kernel/mm/collapse_ext ]; then
			for ctx in madvise khugepaged; do
				for mem in anon shmem file; do
					printf 'khugepaged-passthrough-%s-%s\t/selftests/with_policy.sh %s /selftests/mm/khugepaged %s:%s /mnt/thp\n' \
						"$ctx" "$mem" "$pt" "$ctx" "$mem"
				done
			done
		fi
	fi
}

wanted() {
	[ -z "$FILTERS" ] && return 0
	for f in $FILTERS; do
		case "$1" in *"$f"*) return 0 ;; esac
	done
	return 1
}

if [ "${1:-}" = -l ]; then
	tests | cut -f1
	exit 0
fi

# Renumber a kselftest TAP stream (harness programs) into the global one.
tap_filter='
BEGIN { n = start; got = 0; bad = 0 }
/^TAP version/ || /^1\.\.[0-9]+/ { print "# " $0; next }
/^(not )?ok [0-9]+/ {
	notok = ($1 == "not")
	line = $0
	sub(/^(not )?ok [0-9]+ ?(- )?/, "", line)
	n++; got++
	if (notok) bad++
	printf "%sok %d %s: %s\n", notok ? "not " : "", n, name, line
	next
}
{ print "# " $0 }
END { print n > (state "/n"); print got " " bad > (state "/res") }
'

# khugepaged prints "Run test: NAME (CTX:MEM)" then one coloured result per
# step: green OK, red failure, yellow skip.
khugepaged_filter='
BEGIN { n = start; got = 0; bad = 0; cur = "setup" }
{ k = split($0, seg, "\r"); if (k > 1) $0 = seg[k] }
/^Run test: / { cur = substr($0, 11); print "# " $0; next }
/\033\[3[123]m/ {
	line = $0
	col = line; sub(/^.*\033\[3/, "", col); col = substr(col, 1, 1)
	gsub(/\033\[[0-9]*m/, "", line)
	n++; got++
	if (col == "1") { bad++; printf "not ok %d %s: %s: %s\n", n, name, cur, line }
	else if (col == "3") printf "ok %d %s: %s: %s # SKIP\n", n, name, cur, line
	else printf "ok %d %s: %s: %s\n", n, name, cur, line
	next
}
{ print "# " $0 }
END { print n > (state "/n"); print got " " bad > (state "/res") }
'

FILTERS="$*"
echo "TAP version 13"
tests | while IFS="$(printf '\t')" read -r name cmd; do
	wanted "$name" || continue
	start=$(cat "$STATE/n")
	echo "# selftest: $name"
	filter=$tap_filter
	case "$name" in khugepaged-*) filter=$khugepaged_filter ;; esac
	t0=$(date +%s)
	# shellcheck disable=SC2086
	$cmd > "$STATE/out" 2>&1 </dev/null
	echo $? > "$STATE/rc"
	awk -v start="$start" -v name="$name" -v state="$STATE" "$filter" < "$STATE/out"
	rc=$(cat "$STATE/rc")
	set -- $(cat "$STATE/res")
	got=$1 bad=$2
	n=$(cat "$STATE/n")
	echo "# $name: exit $rc after $(( $(date +%s) - t0 ))s"
	if [ "$got" = 0 ]; then
		n=$((n + 1))
		case "$rc" in
		0) echo "ok $n $name" ;;
		4) echo "ok $n $name # SKIP" ;;
		*) echo "not ok $n $name (exit $rc)" ;;
		esac
	elif [ "$rc" != 0 ] && [ "$rc" != 4 ] && [ "$bad" = 0 ]; then
		# Cases passed, but the program failed afterwards (crash, cleanup).
		n=$((n + 1))
		echo "not ok $n $name: exited with status $rc after its cases"
	fi
	echo "$n" > "$STATE/n"
done
# kmemleak (debug kernel): scan and print what it found on the console,
# where the host's kernel-problems check sees it.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	sleep 5
	echo scan > /sys/kernel/debug/kmemleak
	if [ -s /sys/kernel/debug/kmemleak ]; then
		echo "# kmemleak report:"
		cat /sys/kernel/debug/kmemleak
	fi
fi
echo "1..$(cat "$STATE/n")"
rm -rf "$STATE"
