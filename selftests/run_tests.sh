#!/bin/sh
# Guest-side test runner: runs the programs listed in the expected list
# (/selftests/expected.txt, from selftests/expected.txt) and prints one flat
# kselftest TAP stream: every case of every program gets its own `ok N` /
# `not ok N` line, numbered across the whole run; everything else a
# program prints is kept as `# ` diagnostics; the plan `1..N` comes last.
# The host (selftests/vm/test) counts the lines and checks them against
# the same list.
#
# Every program runs under `timeout` (PROG_TIMEOUT seconds): a hang costs
# that program, not the run. The runner adds a `not ok` line of its own,
# `not ok N NAME (reason)`, when a listed program is missing, prints no
# TAP, times out, exits non-zero after passing cases, leaves a THP or
# khugepaged setting changed, or leaves other state behind (a /proc/sys/vm
# sysctl, tracefs events or filters, a cgroup, a bpffs pin, an attached
# policy): what it can is then put back, so the next program starts from
# the same state. Exit status: 0 when every line is `ok`, 1 otherwise.
#
# Usage: run_tests.sh [-l] [FILTER...]
#   -l       list the programs and exit
#   FILTER   only run programs whose name contains one of the filters
# Environment:
#   TAP_OUT      where the TAP stream goes (default: stdout). selftests/vm/test
#                sets /dev/ttyS1, a serial port of its own, so the kernel's
#                console messages can never land inside a result line.
#   RUN_ORDER    normal (default: programs in list order, each program's cases
#                in its own order), reverse, or random[:SEED]: one unit per
#                case of a harness program (run alone, `PROG -r CASE`) and per
#                run of the tree's own tests (khugepaged, tree-NAME), in reverse or shuffled
#                order. The seed is printed; give it back to repeat an order.
#   PROG_TIMEOUT seconds each program (or case, see RUN_ORDER) may take
#                (default 900).
#   FAIL_FAST    1: stop at the first failure, for `make mutate FAST=1`, where
#                one failing case is all a run has to show; a harness
#                program's cases then run one unit each (in RUN_ORDER), so
#                the run stops within the program too.
#   EXPECTED     the expected list (default /selftests/expected.txt)
BIN=${SELFTEST_BIN:-/selftests/bin}
EXPECTED=${EXPECTED:-/selftests/expected.txt}
ORDER=${RUN_ORDER:-normal}
PROG_TIMEOUT=${PROG_TIMEOUT:-900}
FAIL_FAST=${FAIL_FAST:-0}
PASSTHROUGH=/usr/share/collapse_ext/bpf/passthrough.bpf.o
THP=/sys/kernel/mm/transparent_hugepage
STATE=/tmp/run_tests.$$

FILTERS=""
LIST=0
for a in "$@"; do
	case "$a" in
	-l) LIST=1 ;;
	*) FILTERS="$FILTERS $a" ;;
	esac
done

if [ ! -r "$EXPECTED" ]; then
	echo "run_tests: no expected list $EXPECTED" >&2
	exit 2
fi

wanted() {
	[ -z "$FILTERS" ] && return 0
	for f in $FILTERS; do
		case "$1" in *"$f"*) return 0 ;; esac
	done
	return 1
}

# "NAME CASE..." per listed program, in list order; a program may span
# several lines of the list (its cases add up).
programs() {
	awk '{ sub(/#.*/, "") }
	NF { if (!($1 in cases)) { order[++n] = $1; cases[$1] = "" }
	     for (i = 2; i <= NF; i++) cases[$1] = cases[$1] " " $i }
	END { for (i = 1; i <= n; i++) print order[i] cases[order[i]] }' "$EXPECTED" |
	while read -r name cases; do
		wanted "$name" && printf '%s %s\n' "$name" "$cases"
	done
}

if [ "$LIST" = 1 ]; then
	programs | cut -d' ' -f1
	exit 0
fi

case "$ORDER" in
normal|reverse) ;;
random) ORDER=random:$(awk 'BEGIN { srand(); print int(rand() * 1000000) }') ;;
random:*[!0-9]*|random:)
	echo "run_tests: RUN_ORDER=$ORDER: the seed must be a number" >&2; exit 2 ;;
random:*) ;;
*) echo "run_tests: RUN_ORDER=$ORDER: normal, reverse or random[:SEED]" >&2; exit 2 ;;
esac

# The tree's khugepaged test: khugepaged-[passthrough-]CTX-MEM
is_tree_test() {
	case "$1" in khugepaged-*) return 0 ;; esac
	return 1
}

# Run as one unit whatever RUN_ORDER says: the tree's khugepaged test, and
# the tree's kselftest runners (tree-NAME: tools/testing/selftests/NAME)
is_whole_unit() {
	case "$1" in khugepaged-*|tree-*) return 0 ;; esac
	return 1
}

# Units to run, "NAME CASE" (CASE "-": the whole program), in RUN_ORDER.
units() {
	programs | while read -r name cases; do
		if { [ "$ORDER" = normal ] && [ "$FAIL_FAST" != 1 ]; } ||
		   is_whole_unit "$name" || [ -z "$cases" ]; then
			echo "$name -"
		else
			for c in $cases; do echo "$name $c"; done
		fi
	done | case "$ORDER" in
	normal) cat ;;
	reverse) awk '{ l[NR] = $0 } END { for (i = NR; i > 0; i--) print l[i] }' ;;
	random:*) awk -v seed="${ORDER#random:}" 'BEGIN { srand(seed) }
		{ printf "%d %s\n", int(rand() * 1000000000), $0 }' |
		sort -n | cut -d' ' -f2- ;;
	esac
}

# The command of program NAME, or "" (and the reason on stderr) if missing.
command_for() {
	case "$1" in
	khugepaged-passthrough-*-*|khugepaged-*-*)
		rest=${1#khugepaged-}
		pol=""
		case "$rest" in passthrough-*)
			rest=${rest#passthrough-}
			pol="/selftests/with_policy.sh $PASSTHROUGH"
			[ -f "$PASSTHROUGH" ] || { echo "no $PASSTHROUGH" >&2; return; }
			collapsectl version --check ||
				{ echo "no collapse_ext in this kernel" >&2; return; }
			;;
		esac
		[ -x /selftests/mm/khugepaged ] ||
			{ echo "no /selftests/mm/khugepaged" >&2; return; }
		# On one CPU: its MADV_PAGEOUT drains only the calling CPU's
		# LRU batches, so pages faulted in on the other CPU just before
		# may not be swapped out and check_swap() fails (seen once on
		# the debug kernel, collapse_max_ptes_swap).
		# 7.3's mthp_khugepaged context collapses to order 4 (64 KiB),
		# as the tree's run_vmtests.sh runs it.
		ctx=${rest%-*} opt=""
		[ "$ctx" != mthp_khugepaged ] || opt="-c 4 "
		echo "taskset -c 0 $pol /selftests/mm/khugepaged $opt$ctx:${rest##*-} /mnt/thp"
		;;
	tree-*)
		t=/selftests/tree/${1#tree-}/runner
		[ -x "$t" ] || { echo "no $t" >&2; return; }
		echo "$t"
		;;
	*)
		[ -x "$BIN/$1" ] || { echo "no $BIN/$1" >&2; return; }
		echo "$BIN/$1"
		;;
	esac
}

# THP and khugepaged settings (every writable file under $THP), one
# "PATH=VALUE" line each.
thp_snapshot() {
	find "$THP" -type f -perm -200 | sort | xargs awk '{ print FILENAME "=" $0 }'
}

# Put back the settings of snapshot $1 that differ from now; print them.
thp_restore() {
	thp_snapshot > "$STATE/thp.now"
	awk -F= 'NR == FNR { now[$1] = $2; next } now[$1] != $2 {
		print $1 "=" now[$1] "=" $2 }' "$STATE/thp.now" "$1" |
	while IFS='=' read -r f now was; do
		echo "${f#"$THP"/}: $was -> $now"
		v=$was
		case "$v" in *\[*\]*) v=${v#*\[}; v=${v%%\]*} ;; esac
		echo "$v" > "$f"
	done
}

# What else a program may leave behind, one "WHAT=VALUE" line each: the
# sysctls of /proc/sys/vm (min_free_kbytes is the kernel's own: THP changes
# recompute it), tracefs' enabled events, pid filter and event filters,
# cgroups, bpffs pins and attached collapse_ext policies.
TRACING=/sys/kernel/tracing
state_snapshot() {
	for f in /proc/sys/vm/*; do
		case "$f" in */min_free_kbytes|*/stat_refresh|*/compact_memory|*/drop_caches) continue ;; esac
		[ -w "$f" ] && [ -r "$f" ] || continue
		echo "$f=$(tr '\n\t' '  ' < "$f" 2>/dev/null)"
	done
	echo "$TRACING/set_event=$(sort "$TRACING/set_event" 2>/dev/null | tr '\n' ' ')"
	echo "$TRACING/set_event_pid=$(tr '\n' ' ' < "$TRACING/set_event_pid" 2>/dev/null)"
	grep -L '^none' "$TRACING"/events/*/*/filter 2>/dev/null | sed 's/$/=set/'
	find /sys/fs/cgroup -mindepth 1 -type d 2>/dev/null | sed 's/$/=cgroup/'
	find /sys/fs/bpf -mindepth 1 ! -type d 2>/dev/null | sed "s/\$/=pin/"
	collapsectl list 2>/dev/null | awk 'NR > 1 { print "policy/" $1 "=policy" }'
}

# Undo what changed since snapshot $1 where it can, and print it: sysctls
# written back, tracing reset, cgroups removed (deepest first), pins
# removed (a pinned policy goes with its pin).
state_restore() {
	state_snapshot > "$STATE/state.now"
	awk -F= 'NR == FNR { was[$1] = $2; next }
		 !($1 in was) || was[$1] != $2 { print $1 "=" was[$1] "=" $2 }' \
		"$1" "$STATE/state.now" | sort -r |
	while IFS='=' read -r f was now; do
		case "$now" in
		cgroup) rmdir "$f" 2>/dev/null; echo "cgroup ${f#/sys/fs/cgroup/}" ;;
		pin) rm -f "$f" 2>/dev/null; echo "pin ${f#/sys/fs/bpf/}" ;;
		policy) echo "policy ${f##*/} attached" ;;
		*)
			case "$f" in
			*/filter) echo 0 > "$f"; echo "tracefs filter ${f#"$TRACING"/events/}" ;;
			*/set_event_pid) : > "$f"; echo "tracefs set_event_pid $now" ;;
			*/set_event)
				: > "$f"
				for e in $was; do echo "$e" >> "$f"; done
				echo "tracefs events $now" ;;
			*) echo "$was" > "$f"; echo "${f#/proc/sys/}: $was -> $now" ;;
			esac
			;;
		esac
	done
}

# Kill what is left of unit $1 (label $2): every process that inherited
# its marker RUN_TESTS_UNIT=u$1x, except timeout's own watcher. Reading a
# process's environ takes its mmap_lock (killably): a process wedged on its
# own lock (a kernel bug a test found) must not wedge the runner too.
sweep() {
	left=""
	for e in $(timeout -s KILL 10 grep -ls "RUN_TESTS_UNIT=u$1x" /proc/[0-9]*/environ); do
		p=${e#/proc/}; p=${p%/environ}
		comm=$(cat "/proc/$p/comm" 2>/dev/null)
		kill -KILL "$p" 2>/dev/null || continue
		[ "$comm" = timeout ] || left="$left $p($comm)"
	done
	[ -z "$left" ] || echo "# $2: killed what it left running:$left"
}

# A result line of the runner's own: "not ok N NAME (reason)".
notok() {
	n=$((n + 1))
	echo "not ok $n $name ($*)"
	echo 1 > "$STATE/failed"
}

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
# step: green OK, red failure, yellow skip. 7.3's prints its messages with
# ksft_print_msg(), behind "# ", and TAP lines of its own (kept as comments).
khugepaged_filter='
BEGIN { n = start; got = 0; bad = 0; cur = "setup" }
{ k = split($0, seg, "\r"); if (k > 1) $0 = seg[k] }
{ sub(/^# /, "") }
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

mkdir -p "$STATE"
echo 0 > "$STATE/n"
echo 0 > "$STATE/failed"

if [ -n "${TAP_OUT:-}" ]; then
	# A tty of its own: no \r\n translation, no echo.
	[ -c "$TAP_OUT" ] && stty -F "$TAP_OUT" 115200 raw -echo 2>/dev/null
	exec > "$TAP_OUT"
fi

echo "TAP version 13"
fast=""
[ "$FAIL_FAST" != 1 ] || fast=", stopping at the first failure"
echo "# order: $ORDER, timeout ${PROG_TIMEOUT}s per program$fast"
thp_snapshot > "$STATE/thp.start"
state_snapshot > "$STATE/state.start"
id=0
units > "$STATE/units"
while read -r name case; do
	if [ "$FAIL_FAST" = 1 ] && [ "$(cat "$STATE/failed")" != 0 ]; then
		echo "# FAIL_FAST: a unit failed: $name and the units after it not run"
		break
	fi
	id=$((id + 1))
	start=$(cat "$STATE/n")
	n=$start
	label=$name
	[ "$case" = - ] || label="$name -r $case"
	echo "# selftest: $label"
	cmd=$(command_for "$name" 2> "$STATE/why")
	if [ -z "$cmd" ]; then
		notok "missing: $(cat "$STATE/why")"
		echo "$n" > "$STATE/n"
		continue
	fi
	[ "$case" = - ] || cmd="$cmd -r $case"
	filter=$tap_filter
	is_tree_test "$name" && filter=$khugepaged_filter
	t0=$(date +%s)
	# shellcheck disable=SC2086
	RUN_TESTS_UNIT=u${id}x timeout -k 10 "$PROG_TIMEOUT" $cmd > "$STATE/out" 2>&1 </dev/null
	rc=$?
	secs=$(( $(date +%s) - t0 ))
	awk -v start="$start" -v name="$name" -v state="$STATE" "$filter" < "$STATE/out"
	sweep "$id" "$label"
	set -- $(cat "$STATE/res")
	got=$1 bad=$2
	n=$(cat "$STATE/n")
	[ "$bad" = 0 ] || echo 1 > "$STATE/failed"
	echo "# $label: exit $rc after ${secs}s"
	if { [ "$rc" = 143 ] || [ "$rc" = 137 ]; } && [ "$secs" -ge "$PROG_TIMEOUT" ]; then
		notok "timed out after ${PROG_TIMEOUT}s: killed"
	elif [ "$got" = 0 ]; then
		notok "printed no TAP result, exit $rc"
	elif [ "$rc" != 0 ] && [ "$rc" != 4 ] && [ "$bad" = 0 ]; then
		# Cases passed, but the program failed afterwards (crash, cleanup).
		notok "exited with status $rc after its cases"
	fi
	changed=$(thp_restore "$STATE/thp.start")
	if [ -n "$changed" ]; then
		notok "left THP settings changed (put back): $(echo "$changed" | paste -sd";" -)"
	fi
	left=$(state_restore "$STATE/state.start")
	if [ -n "$left" ]; then
		notok "left state behind (cleaned up): $(echo "$left" | paste -sd";" -)"
	fi
	echo "$n" > "$STATE/n"
done < "$STATE/units"

# kmemleak (debug kernel): scan and print what it found on the console
# (stderr), where the host's kernel-problems check sees it.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	sleep 5
	echo scan > /sys/kernel/debug/kmemleak
	if [ -s /sys/kernel/debug/kmemleak ]; then
		echo "kmemleak report:" >&2
		cat /sys/kernel/debug/kmemleak >&2
	fi
fi
echo "1..$(cat "$STATE/n")"
failed=$(cat "$STATE/failed")
rm -rf "$STATE"
[ "$failed" = 0 ]
