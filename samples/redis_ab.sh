#!/bin/sh
# A/B on a real application: Debian's redis-server under collapse_ext
# policies, A against each B, compared by `collapsectl ab --reps` in the
# guest
# (selftests/bench/README.md: "A/B on a real application: redis").
# `make ab-redis` runs it.
#
# Usage (host):  samples/redis_ab.sh [OUTDIR]     (default build/BASE/ab-redis)
#   Boots the guest (selftests/vm/run; BUILD=dir as there) with Debian's
#   redis binaries and their shared libraries added, runs the comparisons
#   and writes OUTDIR/result.txt (what collapsectl ab printed, one section
#   per B) and OUTDIR/result-B.csv (one row per run). The exit status is
#   collapsectl's, the first that is not 0.
#   Needs the package redis-tools (redis-benchmark, redis-cli and the
#   server binary, redis-check-rdb; the redis-server package only adds a
#   symlink and a system service): installed with apt-get when missing and
#   run as root, otherwise the apt-get line is printed.
# Environment: REPS (runs a side, default 8), POLICY_A (elastic), POLICY_B
#   (policies to compare A with, one `collapsectl ab` each: "eager frugal"),
#   KEYS (key space, 16000), FILL (SETs that fill it, 32000),
#   VALUE (bytes a value, 16384), BENCH (requests per benchmark test,
#   5000), CLIENTS (8), DURATION (s a run at most, 300), TIMEOUT (s for
#   the guest, 1500), PRIMARY (the metric that decides, named before the
#   runs: set_rps, redis's SET throughput), MEMORY_HIGH (the run's
#   cgroup's memory.high, set first: max; e.g. 300M for a limit below
#   eager's footprint), HIGH_AFTER (memory.high written after the agent's
#   collapse, before the benchmark: the host got tight after the collapse;
#   300M, between frugal's footprint and eager's; empty: left alone),
#   HIGH_STEPS (0: HIGH_AFTER written at once; N: memory.high lowered from
#   the usage after the collapse to HIGH_AFTER in N equal steps, one every
#   half second while the benchmark runs: the host gets tight gradually).
#
# In the guest (what the host runs):
#   redis_ab.sh guest      collapsectl ab --reps $REPS A B -- redis_ab.sh workload
#   redis_ab.sh workload   one run, in the run's cgroup: redis-server on a
#     unix socket of its own (the guest kernel has no TCP/IP), no
#     persistence; filled with FILL random SETs of VALUE bytes over KEYS
#     keys; every third key deleted and MEMORY PURGE (jemalloc gives the
#     pages back: holes in its heap); an agent's pass of
#     process_madvise(MADV_COLLAPSE) over each 2 MiB range of redis's
#     anonymous memory (`collapsectl collapse`, the policy decides which
#     ranges; THP is "madvise" in the guest, so nothing else collapses);
#     HIGH_AFTER written to memory.high; redis-benchmark -t set,get; then
#     METRIC lines and SHUTDOWN NOSAVE. Besides throughput and p99 latency,
#     and RSS: coverage after the agent's pass and at the end, and the
#     reclaim a memory.high brings (memory.events high and max, pages
#     reclaimed, pages swapped out, swap used at its peak, THPs split).
set -u

REPS=${REPS:-8}
POLICY_A=${POLICY_A:-elastic}
POLICY_B=${POLICY_B:-eager frugal}
KEYS=${KEYS:-16000}
FILL=${FILL:-32000}
VALUE=${VALUE:-16384}
BENCH=${BENCH:-5000}
CLIENTS=${CLIENTS:-8}
DURATION=${DURATION:-300}
PRIMARY=${PRIMARY:-set_rps}
MEMORY_HIGH=${MEMORY_HIGH:-max}
HIGH_AFTER=${HIGH_AFTER-300M}
HIGH_STEPS=${HIGH_STEPS:-0}
LIBDIR=/lib/x86_64-linux-gnu

# ---- in the guest: one run ---------------------------------------------------
workload() {
	export LD_LIBRARY_PATH=$LIBDIR
	sock=/tmp/redis-ab.$$.sock
	t0=$(date +%s)
	# the guest runs nothing else: /proc/vmstat's deltas are the run's
	swpout0=$(vmstat pswpout)
	split0=$(vmstat thp_split_page)
	cg=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
	echo "$MEMORY_HIGH" > "$cg/memory.high" || exit 1
	redis-server --port 0 --unixsocket "$sock" --save '' --appendonly no \
		--daemonize no --loglevel warning --logfile /tmp/redis-ab.$$.log &
	pid=$!
	i=0
	until redis-cli -s "$sock" ping > /dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 600 ] || ! kill -0 $pid 2>/dev/null; then
			echo "redis-server did not start:"
			cat /tmp/redis-ab.$$.log
			exit 1
		fi
		sleep 0.1
	done

	redis-benchmark -s "$sock" -t set -n "$FILL" -r "$KEYS" -d "$VALUE" \
		-c "$CLIENTS" -P 16 -q > /dev/null || exit 1
	echo "filled: $(redis-cli -s "$sock" dbsize) keys, VmRSS $(rss $pid) kB ($(since)s)"
	deleted=$(redis-cli -s "$sock" eval "local ks = redis.call('KEYS', '*')
		table.sort(ks)
		local n = 0
		for i = 1, #ks, 3 do redis.call('DEL', ks[i]); n = n + 1 end
		return n" 0)
	redis-cli -s "$sock" memory purge > /dev/null
	echo "deleted every third key ($deleted) and purged: VmRSS $(rss $pid) kB ($(since)s)"

	# the agent: each 2 MiB range of redis's anonymous memory, one at a time
	# (one call over a whole mapping stops at its first refused range)
	ok=0 no=0
	for r in $(awk '$2 ~ /^rw/ && (NF == 5 || $6 == "[heap]") { print $1 }' \
		   /proc/$pid/maps); do
		s=$(( (0x${r%-*} + 0x1fffff) & ~0x1fffff ))
		e=$(( 0x${r#*-} & ~0x1fffff ))
		while [ $s -lt $e ]; do
			if collapsectl collapse --pid $pid \
			   "$(printf '%x-%x' $s $((s + 0x200000)))" > /dev/null 2>&1; then
				ok=$((ok + 1))
			else
				no=$((no + 1))
			fi
			s=$((s + 0x200000))
		done
	done
	rss_collapsed=$(rss $pid)
	thp_collapsed=$(thp_kb "$cg")
	echo "agent: $ok of $((ok + no)) 2 MiB ranges collapsed: VmRSS $rss_collapsed kB," \
		"AnonHugePages $(sed -n 's/^AnonHugePages:[[:space:]]*\([0-9]*\).*/\1/p' \
		"/proc/$pid/smaps_rollup") kB ($(since)s)"
	stepper=
	if [ -n "$HIGH_AFTER" ] && [ "$HIGH_STEPS" -gt 0 ]; then
		lower_in_steps "$cg" &
		stepper=$!
	elif [ -n "$HIGH_AFTER" ]; then
		# reclaim down to it runs in this write
		echo "$HIGH_AFTER" > "$cg/memory.high" || exit 1
		echo "memory.high $HIGH_AFTER: memory.current" \
			"$(( $(cat "$cg/memory.current") / 1024 )) kB, VmRSS $(rss $pid) kB ($(since)s)"
	fi

	redis-benchmark -s "$sock" -t set,get -n "$BENCH" -r "$KEYS" -d "$VALUE" \
		-c "$CLIENTS" --csv > /tmp/redis-ab.$$.csv || exit 1
	echo "benchmark done ($(since)s)"
	[ -z "$stepper" ] || wait "$stepper"
	set_rps=$(awk -F'"' '$2 == "SET" { print $4 }' /tmp/redis-ab.$$.csv)
	get_rps=$(awk -F'"' '$2 == "GET" { print $4 }' /tmp/redis-ab.$$.csv)
	# "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms",
	# "p95_latency_ms","p99_latency_ms","max_latency_ms"
	set_p99=$(awk -F'"' '$2 == "SET" { print $14 }' /tmp/redis-ab.$$.csv)
	get_p99=$(awk -F'"' '$2 == "GET" { print $14 }' /tmp/redis-ab.$$.csv)
	thp=$(thp_kb "$cg")
	echo "METRIC set_rps $set_rps higher"
	echo "METRIC get_rps $get_rps higher"
	echo "METRIC set_p99_ms $set_p99 lower"
	echo "METRIC get_p99_ms $get_p99 lower"
	echo "METRIC rss_kb $(rss $pid) lower"
	echo "METRIC rss_after_collapse_kb $rss_collapsed lower"
	echo "METRIC anon_thp_kb $thp higher"
	echo "METRIC anon_thp_after_collapse_kb $thp_collapsed higher"
	echo "METRIC high_events $(awk '$1 == "high" { print $2 }' "$cg/memory.events") lower"
	echo "METRIC max_events $(awk '$1 == "max" { print $2 }' "$cg/memory.events") lower"
	echo "METRIC pgsteal $(awk '$1 == "pgsteal" { print $2 }' "$cg/memory.stat") lower"
	echo "METRIC swap_peak_kb $(( $(cat "$cg/memory.swap.peak") / 1024 )) lower"
	echo "METRIC swapped_out_kb $(( ($(vmstat pswpout) - swpout0) * 4 )) lower"
	echo "METRIC thp_split $(( $(vmstat thp_split_page) - split0 ))"
	redis-cli -s "$sock" shutdown nosave > /dev/null 2>&1
	wait $pid
	rm -f /tmp/redis-ab.$$.*
	[ -n "$set_rps" ] && [ -n "$get_rps" ]
}

vmstat() {
	awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat
}

# memory.high of cgroup $1 from its usage now down to HIGH_AFTER, in
# HIGH_STEPS equal steps half a second apart (each write reclaims to it)
lower_in_steps() {
	from=$(cat "$1/memory.current")
	case $HIGH_AFTER in
	*G) to=$(( ${HIGH_AFTER%G} << 30 )) ;;
	*M) to=$(( ${HIGH_AFTER%M} << 20 )) ;;
	*K) to=$(( ${HIGH_AFTER%K} << 10 )) ;;
	*) to=$HIGH_AFTER ;;
	esac
	i=1
	while [ $i -le "$HIGH_STEPS" ]; do
		echo $(( from - (from - to) * i / HIGH_STEPS )) > "$1/memory.high"
		[ $i = "$HIGH_STEPS" ] || sleep 0.5
		i=$((i + 1))
	done
	echo "memory.high lowered to $HIGH_AFTER in $HIGH_STEPS steps: memory.current" \
		"$(( $(cat "$1/memory.current") / 1024 )) kB ($(since)s)"
}

thp_kb() {
	awk '$1 == "anon_thp" { print int($2 / 1024) }' "$1/memory.stat"
}

since() {
	echo $(( $(date +%s) - t0 ))
}

rss() {
	sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status"
}

# ---- in the guest: the comparison --------------------------------------------
guest() {
	BPF=/usr/share/collapse_ext/bpf
	echo "== redis $(LD_LIBRARY_PATH=$LIBDIR redis-server --version | cut -d' ' -f3)" \
		"on $(uname -r): $POLICY_A against $POLICY_B, $REPS runs each," \
		"memory.high $MEMORY_HIGH, then ${HIGH_AFTER:-left} after the collapse" \
		"$([ "$HIGH_STEPS" -gt 0 ] && echo "in $HIGH_STEPS steps")"
	rc=0
	for b in $POLICY_B; do
		echo "@@AB-BEGIN $b@@"
		collapsectl ab "$BPF/$POLICY_A.bpf.o" "$BPF/$b.bpf.o" --reps "$REPS" \
			--primary "$PRIMARY" --duration "$DURATION" \
			--csv "/tmp/redis_ab-$b.csv" -- \
			env REPS="$REPS" KEYS="$KEYS" FILL="$FILL" VALUE="$VALUE" \
			BENCH="$BENCH" CLIENTS="$CLIENTS" MEMORY_HIGH="$MEMORY_HIGH" \
			HIGH_AFTER="$HIGH_AFTER" HIGH_STEPS="$HIGH_STEPS" \
			sh /root/redis_ab.sh workload 2>&1
		r=$?
		[ $rc != 0 ] || rc=$r
		echo "@@AB-END $b@@"
		echo "@@CSV-BEGIN $b@@"
		cat "/tmp/redis_ab-$b.csv"
		echo "@@CSV-END $b@@"
	done
	return $rc
}

case "${1:-}" in
workload) workload; exit $? ;;
guest) guest; exit $? ;;
esac

# ---- on the host ---------------------------------------------------------------
ROOT=$(cd "$(dirname "$0")/.." && pwd)
for p in $POLICY_A $POLICY_B; do
	case $p in
	*[!A-Za-z0-9_-]*)
		echo "ab-redis: '$p' is not a policy name (letters, digits, _ and -:" \
			"an object of /usr/share/collapse_ext/bpf/ without .bpf.o)" >&2
		exit 2 ;;
	esac
done
[ -n "$POLICY_A" ] && [ -n "$POLICY_B" ] ||
	{ echo "ab-redis: POLICY_A and POLICY_B name the policies" >&2; exit 2; }
OUT=${1:-${BUILD:-$ROOT/build/${KERNEL:-6.12}}/ab-redis}
TIMEOUT=${TIMEOUT:-1500}
BINS="redis-check-rdb redis-benchmark redis-cli"

missing=""
for b in $BINS; do
	command -v "$b" > /dev/null 2>&1 || missing=1
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" = 0 ]; then
		echo "ab-redis: installing redis-tools"
		apt-get install -y --no-install-recommends redis-tools || exit 1
	else
		echo "ab-redis: redis is missing; run as root:" >&2
		echo "    apt-get install --no-install-recommends redis-tools" >&2
		exit 1
	fi
fi

# The binaries, and their libraries and loader at the same paths (the
# guest has no libc); redis-check-rdb is the server (Debian's redis-server
# is a symlink to it: redis looks at the name it was started as).
adds="--add $ROOT/samples/redis_ab.sh:/root/redis_ab.sh"
adds="$adds --add $(command -v redis-check-rdb):/usr/bin/redis-server"
adds="$adds --add $(command -v redis-benchmark):/usr/bin/redis-benchmark"
adds="$adds --add $(command -v redis-cli):/usr/bin/redis-cli"
libs=$(for b in $BINS; do ldd "$(command -v "$b")"; done |
	sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' | sort -u)
for l in $libs; do
	adds="$adds --add $(readlink -f "$l"):$l"
done

mkdir -p "$OUT"
log=$OUT/console.log
echo "ab-redis: $POLICY_A against each of $POLICY_B, $REPS runs each, in the guest" \
	"(console: $log)"
start=$(date +%s)
: > "$log"
# shellcheck disable=SC2086
"$ROOT/selftests/vm/run" --timeout "$TIMEOUT" --log "$log" $adds -- \
	env REPS="$REPS" POLICY_A="$POLICY_A" POLICY_B="$POLICY_B" KEYS="$KEYS" \
	FILL="$FILL" VALUE="$VALUE" BENCH="$BENCH" CLIENTS="$CLIENTS" \
	DURATION="$DURATION" PRIMARY="$PRIMARY" MEMORY_HIGH="$MEMORY_HIGH" \
	HIGH_AFTER="$HIGH_AFTER" HIGH_STEPS="$HIGH_STEPS" \
	sh /root/redis_ab.sh guest > /dev/null &
vm=$!
# progress: one line per run as it ends
tail -n +1 -f --pid=$vm "$log" 2>/dev/null | tr -d '\r' |
	grep --line-buffered -E '^(== redis|run [0-9]+/[0-9]+: [AB][0-9]+ \([^)]*\): )' &
wait $vm
rc=$?
wait
took=$(( $(date +%s) - start ))
# A kernel problem report on the console fails the A/B, whatever it measured
if ! "$ROOT/selftests/vm/kernel-problems" "$log"; then
	echo "ab-redis: the kernel reported problems (above; console: $log)" >&2
	rc=1
fi

# What collapsectl printed and the CSV, without the console's \r and
# without kernel messages that may have landed in between.
section() {
	tr -d '\r' < "$log" | sed -n "/^@@$1-BEGIN $2@@\$/,/^@@$1-END $2@@\$/p" |
		sed '1d;$d' | grep -v '^\[ *[0-9]*\.[0-9]*\] '
}
{
	echo "# samples/redis_ab.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $took s" \
		"(guest boot included), exit status $rc"
	echo "# REPS=$REPS POLICY_A=$POLICY_A POLICY_B=$POLICY_B KEYS=$KEYS FILL=$FILL" \
		"VALUE=$VALUE BENCH=$BENCH CLIENTS=$CLIENTS DURATION=$DURATION" \
		"MEMORY_HIGH=$MEMORY_HIGH HIGH_AFTER=$HIGH_AFTER HIGH_STEPS=$HIGH_STEPS"
	tr -d '\r' < "$log" | grep -m1 '^== redis' || true
	for b in $POLICY_B; do
		echo "## $POLICY_A against $b"
		section AB "$b"
	done
} > "$OUT/result.txt"
csvs=""
for b in $POLICY_B; do
	section CSV "$b" > "$OUT/result-$b.csv"
	csvs="$csvs $OUT/result-$b.csv"
done
sed -n '/^results:/,/^summary:/p' "$OUT/result.txt"
echo "ab-redis: $OUT/result.txt,$csvs ($took s)"
exit $rc
