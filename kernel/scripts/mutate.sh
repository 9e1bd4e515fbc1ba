#!/bin/sh
# make mutate: break the patched kernel on purpose, one mutation at a time,
# and check that the tests named for it catch it.
#
# Each kernel/BASE/mutations/NAME.patch is a small diff against the patched
# tree of that base (build/BASE/linux at HEAD; BASE is $KERNEL, 6.12 by
# default) with a header of its own before the diff:
#   Guarantee: the hook or guarantee it breaks (one line)
#   Mutation: what the diff does (one line)
#   Catch: PROGRAM... (programs of selftests/expected.txt to run on it)
# For each one, this script resets a scratch worktree of build/BASE/linux
# (build/BASE/mutate/linux, built in build/BASE/mutate/kobj with
# build/BASE/kobj's .config) to HEAD, applies the diff, rebuilds the kernel incrementally,
# boots it with the guest of `make initramfs` and runs the named programs
# (selftests/vm/test). The mutation is caught when that run fails (a case
# fails, or the kernel reports a problem); it survives when the run
# passes. The run is kept in build/BASE/mutate/NAME/ (test.tap, test.log).
#
# Writes build/BASE/mutate/table.md, one row per mutation with the cases
# that failed; run without filters, it also replaces the table between the
# "mutate:begin BASE"/"mutate:end BASE" markers of kernel/README.md. Exits 1
# when a mutation survived, did not apply or did not build.
#
# A mutation with a "Kernel: debug" header line is caught only on the debug
# kernel of make test-debug (fault injection, error injection lists): it
# is listed, not run, unless DEBUG=1, which runs those alone. DEBUG=1
# mutates build/BASE/linux in place (reverted after each one and on exit)
# and builds in build/BASE/kobj-debug: a second debug kernel built from
# scratch would take most of an hour. Its table is table-debug.md; the
# rows of kernel/README.md for them say where they were run.
#
# FAST=1 stops each run at its first failing case (FAIL_FAST in the
# guest's runner, which then runs a program's cases one at a time): a
# caught mutation costs the time to its first failure, and its row names
# that case only. Without it, every case of the named programs runs and
# the row lists all that failed.
#
# Usage: kernel/scripts/mutate.sh [FILTER...]
#   FILTER   only the mutations whose file name contains one of them
# Environment: KERNEL (the base, default 6.12), BUILD (default
# build/BASE), JOBS (make -j), PROG_TIMEOUT (per program in the guest,
# default 600 s), TEST_TIMEOUT (a whole run, default 300 s + 600 s a
# program: a guest wedged by a mutation counts as caught), FAST (above).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BASE=${KERNEL:-6.12}
BUILD=${BUILD:-$ROOT/build/$BASE}
export BUILD	# selftests/vm/test boots this base's guest
MUTATIONS=$ROOT/kernel/$BASE/mutations
KSRC=$BUILD/linux
KOBJ=$BUILD/kobj
MUT=$BUILD/mutate
WT=$MUT/linux
MOBJ=$MUT/kobj
JOBS=${JOBS:-$(nproc)}
DEBUG=${DEBUG:-}
fail_fast=
[ "${FAST:-0}" = 0 ] || fail_fast=1
TABLE=$MUT/table.md
if [ -n "$DEBUG" ]; then
	WT=$KSRC
	MOBJ=$BUILD/kobj-debug
	TABLE=$MUT/table-debug.md
	if [ ! -f "$MOBJ/arch/x86/boot/bzImage" ] ||
	   ! "$ROOT/kernel/scripts/check-config.sh" "$MOBJ/.config" \
		"$ROOT/kernel/$BASE/configs/debug.config" >/dev/null 2>&1; then
		echo "mutate: DEBUG=1: build the debug kernel of this debug.config first: make test-debug (or its bzImage)" >&2
		exit 2
	fi
fi

if [ ! -f "$KOBJ/arch/x86/boot/bzImage" ] || [ ! -f "$BUILD/vm/initramfs.cpio.gz" ]; then
	echo "mutate: build the kernel and the guest first: make initramfs" >&2
	exit 2
fi
if [ -n "$(git -C "$KSRC" status --porcelain --untracked-files=no)" ]; then
	echo "mutate: $KSRC has uncommitted changes: commit them (the mutations apply to HEAD)" >&2
	exit 2
fi

mkdir -p "$MUT"
head=$(git -C "$KSRC" rev-parse HEAD)
if [ -n "$DEBUG" ]; then
	trap 'git -C "$KSRC" checkout -q -- .' EXIT
	trap 'exit 130' INT TERM
else
	if [ ! -d "$WT/.git" ] && [ ! -f "$WT/.git" ]; then
		git -C "$KSRC" worktree prune
		git -C "$KSRC" worktree add -q --detach "$WT" "$head"
	fi
	mkdir -p "$MOBJ"
	cmp -s "$KOBJ/.config" "$MOBJ/.config" || cp "$KOBJ/.config" "$MOBJ/.config"
fi

# The tree as HEAD has it (the scratch worktree; with DEBUG=1 the tree itself)
reset_tree() {
	if [ -n "$DEBUG" ]; then
		git -C "$WT" checkout -q -- .
	else
		git -C "$WT" checkout -q -f --detach "$head"
		git -C "$WT" reset -q --hard
	fi
}

wanted() {
	[ $# -le 1 ] && return 0
	n=$1; shift
	for f in "$@"; do
		case "$n" in *"$f"*) return 0 ;; esac
	done
	return 1
}

{
	echo "| mutation | guarantee | what the diff does | failing cases |"
	echo "|---|---|---|---|"
} > "$TABLE"
status=0 total=0 caught=0
# Every mutation, run or not, must still apply: a filtered run would not
# notice one that the series' later changes left behind.
for m in "$MUTATIONS"/*.patch; do
	[ -f "$m" ] || continue
	if ! git -C "$KSRC" apply --check "$m" 2>/dev/null; then
		echo "mutate: $(basename "$m" .patch): no longer applies to the patched tree: rewrite it against HEAD" >&2
		status=1
	fi
done
for m in "$MUTATIONS"/*.patch; do
	[ -f "$m" ] || continue
	name=$(basename "$m" .patch)
	wanted "$name" "$@" || continue
	total=$((total + 1))
	guarantee=$(sed -n 's/^Guarantee: //p' "$m" | head -n 1)
	what=$(sed -n 's/^Mutation: //p' "$m" | head -n 1)
	progs=$(sed -n 's/^Catch: //p' "$m" | head -n 1)
	kernel=$(sed -n 's/^Kernel: //p' "$m" | head -n 1)
	if [ "$kernel" = debug ] && [ -z "$DEBUG" ]; then
		total=$((total - 1))
		echo "mutate: $name: the debug kernel's (make mutate DEBUG=1): not run"
		echo "| $name | $guarantee | $what | debug kernel: \`make mutate DEBUG=1\` |" >> "$TABLE"
		continue
	fi
	if [ -n "$DEBUG" ] && [ "$kernel" != debug ]; then
		total=$((total - 1))
		continue
	fi
	out=$MUT/$name
	rm -rf "$out"
	mkdir -p "$out"
	if [ -z "$progs" ]; then
		echo "mutate: $name: no 'Catch:' line" >&2
		status=1
		continue
	fi
	reset_tree
	if ! git -C "$WT" apply "$m" 2>"$out/apply.log"; then
		echo "mutate: $name: does not apply to the patched tree ($(head -n 1 "$out/apply.log"))" >&2
		echo "| $name | $guarantee | $what | **does not apply** |" >> "$TABLE"
		status=1
		continue
	fi
	t0=$(date +%s)
	if ! make -s -C "$WT" O="$MOBJ" -j"$JOBS" bzImage >"$out/build.log" 2>&1; then
		echo "mutate: $name: the mutated kernel does not build ($out/build.log)" >&2
		echo "| $name | $guarantee | $what | **does not build** |" >> "$TABLE"
		status=1
		continue
	fi
	t1=$(date +%s)
	# A mutation that wedges the guest (a task stuck on a corrupted
	# lock) is caught by the whole run's timeout at worst: keep it
	# short, minutes a program, rather than the full suite's 50.
	nprogs=$(echo $progs | wc -w)
	# the debug kernel runs a program several times slower
	slow=1
	[ -n "$DEBUG" ] && slow=4
	# shellcheck disable=SC2086
	if BZIMAGE=$MOBJ/arch/x86/boot/bzImage TEST_OUT=$out \
		FAIL_FAST=$fail_fast \
		TEST_TIMEOUT=${TEST_TIMEOUT:-$(((300 + 600 * nprogs) * slow))} \
		PROG_TIMEOUT=${PROG_TIMEOUT:-$((600 * slow))} \
		"$ROOT/selftests/vm/test" $progs >"$out/test.out" 2>&1; then
		rc=0
	else
		rc=$?
	fi
	t2=$(date +%s)
	# "not ok N PROGRAM: CASE ..." -> "PROGRAM: CASE", one per case
	failing=$(sed -n 's/^not ok [0-9]* \([^:]*: [^ ]*\).*/\1/p' "$out/test.tap" |
		  sort -u | paste -sd';' - | sed 's/;/; /g')
	grep -q "the kernel reported problems" "$out/test.out" && failing="$failing(kernel problem report)"
	if [ "$rc" != 0 ]; then
		caught=$((caught + 1))
		echo "mutate: $name: caught ($((t1 - t0)) s build, $((t2 - t1)) s test): $failing"
		echo "| $name | $guarantee | $what | $failing |" >> "$TABLE"
	else
		status=1
		echo "mutate: $name: SURVIVED: $progs passed on it ($out)"
		echo "| $name | $guarantee | $what | **survived** |" >> "$TABLE"
	fi
done
reset_tree

echo "mutate: $caught of $total mutations caught; table in $TABLE"
# The tables live in kernel/README.md, one pair of markers per base.
README=$ROOT/kernel/README.md
if [ $# -eq 0 ] && [ "$total" -gt 0 ] && [ -z "$DEBUG" ]; then
	awk -v t="$TABLE" -v b="<!-- mutate:begin $BASE -->" -v e="<!-- mutate:end $BASE -->" '
		$0 == b { print; while ((getline l < t) > 0) print l; skip = 1; next }
		$0 == e { skip = 0 }
		!skip { print }' "$README" > "$MUT/README.md"
	if ! grep -qxF "<!-- mutate:begin $BASE -->" "$README"; then
		echo "mutate: kernel/README.md has no <!-- mutate:begin $BASE --> marker: table not written" >&2
		status=1
	elif ! cmp -s "$MUT/README.md" "$README"; then
		cp "$MUT/README.md" "$README"
		echo "mutate: kernel/README.md's mutation table for $BASE updated"
	fi
fi
exit $status
