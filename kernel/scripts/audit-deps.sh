#!/bin/sh
# Which Debian packages does the build really use? Run a command (default:
# the whole pipeline, `make test test-debug`, which needs a clean build/)
# under strace, collect every program it executes and every system file it
# opens, map each to its package with dpkg -S (following symlinks and
# usrmerge aliases), and print the packages, flagging every one that
# neither ensure-deps.sh (with its dependencies), the README's setup
# (make, git) nor the base system (Essential/required, apt) provides.
# Also lists the programs the command tried to run and did not find.
#
# Usage: audit-deps.sh [--fetch] [--keep] [-- COMMAND [ARG...]]
#        audit-deps.sh --log STRACE_LOG     (analyse a kept log again)
#   --fetch   use an empty kernel-source cache, so that the apt download
#             of the linux-source packages is traced too (150 MB each)
#   --keep    keep the raw strace log
# The command runs from the top of the repository with a plain Debian PATH
# (no ~/.local, pyenv or similar shims). Exit status: 1 when a package is
# flagged or the command failed.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
FETCH=0
KEEP=0
LOG=""
while [ $# -gt 0 ]; do
	case "$1" in
	--fetch) FETCH=1 ;;
	--keep) KEEP=1 ;;
	--log) LOG=$(realpath "$2"); shift ;;
	--) shift; break ;;
	*) echo "usage: audit-deps.sh [--fetch] [--keep] [-- COMMAND...]" >&2; exit 2 ;;
	esac
	shift
done
if [ $# = 0 ] && [ -z "$LOG" ]; then
	if [ -e "$ROOT/build" ]; then
		echo "audit-deps: $ROOT/build exists: steps already built would not be traced;" >&2
		echo "  run 'make distclean' first, or give the command after --" >&2
		exit 2
	fi
	set -- make test test-debug
fi
for t in strace dpkg-query apt-cache; do
	if ! command -v $t >/dev/null 2>&1; then
		echo "audit-deps: needs $t (apt-get install strace)" >&2
		exit 2
	fi
done

OUT=$(mktemp -d /tmp/audit-deps.XXXXXX)
if [ "$KEEP" = 0 ]; then trap 'rm -rf "$OUT"' EXIT; fi
cache=${COLLAPSE_EXT_CACHE:-$HOME/.cache/collapse_ext}
if [ "$FETCH" = 1 ]; then
	cache=$OUT/cache
	export COLLAPSE_EXT_CACHE=$cache
fi

status=0
: > "$OUT/stderr"
if [ -z "$LOG" ]; then
	LOG=$OUT/strace.log
	echo "audit-deps: tracing '$*' (log: $OUT/strace.log)" >&2
	start=$(date +%s)
	set +e
	# stderr is kept too: a shell finds its programs with stat(), so only its
	# "not found" message tells of a program that is missing altogether.
	{
		(cd "$ROOT" && env -i HOME="$HOME" TERM="${TERM:-dumb}" LANG=C.UTF-8 \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			${COLLAPSE_EXT_CACHE:+COLLAPSE_EXT_CACHE="$COLLAPSE_EXT_CACHE"} \
			${CI:+CI="$CI"} ${JOBS:+JOBS="$JOBS"} \
			strace -f -qq --seccomp-bpf -e trace=execve,openat,clone,clone3,fork,vfork -e signal=none \
			-o "$LOG" -- "$@" 2>&1 1>&3 </dev/null
		 echo $? > "$OUT/status") | tee "$OUT/stderr" >&2
	} 3>&1
	status=$(cat "$OUT/status")
	set -e
	echo "audit-deps: '$*' exited with status $status after $(($(date +%s) - start)) s" >&2
fi

# 1. Programs run (exec-ok), programs looked for (exec-fail) and system
#    files opened (open). strace splits a call that another process
#    interrupts into "<unfinished ...>" and "<... NAME resumed>". The first
#    pass links every process to its parent; the second leaves out what
#    runs under apt-get/apt/dpkg (maintainer scripts, man-db triggers:
#    installing packages, not building).
awk -v root="$ROOT" -v cache="$cache" -v home="$HOME" -v out="$OUT" '
function parse(   line, rest) {
	pid = $1; call = ""
	line = $0
	sub(/^[0-9]+ +/, "", line)
	if (match(line, /^(execve|openat|clone|clone3|fork|vfork)\(/)) {
		call = substr(line, 1, RLENGTH - 1)
		rest = substr(line, RLENGTH + 1)
		path = ""
		if (call == "execve" || call == "openat") {
			if (!match(rest, /"([^"\\]|\\.)*"/)) return 0
			path = substr(rest, RSTART + 1, RLENGTH - 2)
		}
		if (rest ~ /<unfinished \.\.\.>$/) { pcall[pid] = call; ppath[pid] = path; return 0 }
	} else if (match(line, /^<\.\.\. (execve|openat|clone|clone3|fork|vfork) resumed>/)) {
		if (!(pid in pcall)) return 0
		call = pcall[pid]; path = ppath[pid]; delete pcall[pid]
	} else return 0
	if (!match($0, / = -?[0-9]+( .*)?$/)) return 0
	res = substr($0, RSTART + 3) + 0
	return 1
}
function pkgmgr(p,   q, n) {
	if (p in memo) return memo[p]
	for (q = p; q != ""; q = parent[q])
		if ((q in mgr) || ++n > 10000) break
	return memo[p] = (q != "" && (q in mgr))
}
FNR == 1 { pass++; delete pcall }
pass == 1 {
	if (!parse()) next
	if (call ~ /^(clone|clone3|fork|vfork)$/ && res > 0) parent[res] = pid
	else if (call == "execve" && res == 0 && path ~ /\/(apt-get|apt|aptitude|dpkg)$/) mgrexec[pid] = path
	next
}
pass == 2 && FNR == 1 { for (p in mgrexec) mgr[p] = 1 }
{
	if (!parse() || call !~ /^(execve|openat)$/) next
	if (pkgmgr(pid)) {
		if (call == "execve" && res == 0 && mgrexec[pid] == path) ok[path] = 1
		next
	}
	if (call == "execve") {
		if (res == 0) ok[path] = 1; else tried[path] = 1
	} else if (res >= 0 && path ~ /^\// && index(path, root "/") != 1 &&
		   index(path, cache "/") != 1 && index(path, home "/") != 1 &&
		   path !~ /^\/(proc|sys|dev|tmp|run|var\/tmp)\// &&
		   path !~ /\.pc$/) {	# pkg-config reads every .pc it can find
		opened[path] = 1
	}
}
END {
	for (p in ok) print p > (out "/exec-ok")
	for (p in tried) if (!(p in ok)) print p > (out "/exec-fail")
	for (p in opened) if (!(p in ok)) print p > (out "/open")
}' "$LOG" "$LOG"
touch "$OUT/exec-ok" "$OUT/exec-fail" "$OUT/open"
# Programs looked for along PATH and found nowhere.
awk -F/ '{ print $NF }' "$OUT/exec-ok" | sort -u > "$OUT/found-names"
awk -F/ '{ print $NF }' "$OUT/exec-fail" | sort -u | comm -23 - "$OUT/found-names" > "$OUT/missing-names"

# 2. Candidate names of each path: as used, the usrmerge alias, the file
#    after following every symlink, and each link of the chain.
aliases() {
	echo "$1"
	case "$1" in
	/usr/bin/*|/usr/sbin/*|/usr/lib/*|/usr/lib32/*|/usr/lib64/*|/usr/libx32/*) echo "${1#/usr}" ;;
	/bin/*|/sbin/*|/lib/*|/lib32/*|/lib64/*|/libx32/*) echo "/usr$1" ;;
	esac
}
candidates() { # KIND PATH -> "KIND<TAB>PATH<TAB>CANDIDATE" lines
	p=$2
	d=$(readlink -f "$(dirname "$p")" 2>/dev/null || dirname "$p")
	{
		aliases "$p"
		aliases "$d/$(basename "$p")"
		q=$p; n=0
		while [ -L "$q" ] && [ $n -lt 8 ]; do
			t=$(readlink "$q")
			case "$t" in /*) q=$t ;; *) q=$(dirname "$q")/$t ;; esac
			aliases "$q"
			n=$((n + 1))
		done
		aliases "$(readlink -f "$p" 2>/dev/null || echo "$p")"
	} | awk -v k="$1" -v p="$p" '!seen[$0]++ { print k "\t" p "\t" $0 }'
}
: > "$OUT/cand"
while read -r p; do candidates exec "$p" >> "$OUT/cand"; done < "$OUT/exec-ok"
while read -r p; do
	[ -d "$p" ] && continue
	candidates open "$p" >> "$OUT/cand"
done < "$OUT/open"

# 3. dpkg -S on every candidate, in one pass ("pkg[, pkg]: path" lines).
cut -f3 "$OUT/cand" | sort -u | tr '\n' '\0' |
	xargs -0 -r dpkg -S 2>/dev/null | grep -v '^diversion by' > "$OUT/dpkg-S" || true

# 4. The package of each path: that of the first candidate dpkg knows (for a
#    program, the name it was run by, e.g. python3 -> python3-minimal; the
#    package of the file behind a symlink is a dependency of that one).
awk -F'\t' -v out="$OUT" '
FNR == NR { i = index($0, ": "); pk = substr($0, 1, i - 1); f = substr($0, i + 2)
	    gsub(/:[a-z0-9]+/, "", pk); gsub(/, /, ",", pk); owner[f] = pk; next }
{ key = $1 "\t" $2
  if (!(key in pkg)) { order[++n] = key; pkg[key] = "" }
  if (pkg[key] == "" && ($3 in owner)) pkg[key] = owner[$3] }
END { for (i = 1; i <= n; i++) print order[i] "\t" (pkg[order[i]] == "" ? "-" : pkg[order[i]]) }
' "$OUT/dpkg-S" "$OUT/cand" > "$OUT/owned"

# 5. What the machine is promised to have: ensure-deps.sh's list, make and
#    git (README), the base system (Essential, Priority required, apt), and
#    all their dependencies as installed here. (All of ensure-deps.sh's
#    lists: NEED, and NEED_TEST_DEB, NEED_DISTRO for `make test-deb`,
#    `make deb-kernel-distro`.)
ensure=$(sed -n '/^NEED[A-Z_]*="/,/^"/p' "$HERE/ensure-deps.sh" | grep ':' | sed 's/.*://' | sort -u)
base=$(dpkg-query -W -f='${Package} ${Essential} ${Priority}\n' |
	awk '$2 == "yes" || $3 == "required" { print $1 }'; echo apt)
closure() { # ROOT_PACKAGES... -> their installed dependency closure
	apt-cache depends --recurse --installed --no-recommends --no-suggests \
		--no-conflicts --no-breaks --no-replaces --no-enhances "$@" 2>/dev/null |
		awk '/^[^ <]/ { print $1 }' | sed 's/:[a-z0-9]*$//' | sort -u
}
: > "$OUT/cover"
for p in $ensure; do closure "$p" | sed "s/\$/\tensure-deps:$p/" >> "$OUT/cover"; done
closure make git | sed 's/$/\tREADME/' >> "$OUT/cover"
# shellcheck disable=SC2086
closure $base | sed 's/$/\tbase/' >> "$OUT/cover"
for p in $ensure; do printf '%s\tensure-deps\n' "$p" >> "$OUT/cover"; done
# Run by the build only as a probe whose answer it does not use: bpftool's
# feature detection compiles test-llvm.cpp with g++ even though the
# Makefile builds bpftool with feature-llvm=0.
printf 'g++\toptional probe\ng++-12\toptional probe\n' >> "$OUT/cover"

# 6. Report, one line per package.
awk -F'\t' '
function rank(c) { return c == "ensure-deps" ? 0 : c == "base" ? 1 : c == "README" ? 2 : 3 }
FNR == NR { if (!($1 in by) || rank($2) < rank(by[$1])) by[$1] = $2; next }
{
	n = split($3, ps, ",")
	for (i = 1; i <= n; i++) {
		p = ps[i]
		if (p == "-") { if ($1 == "exec") nopkg[$2] = 1; continue }
		if ($1 == "exec") { prog[p] = prog[p] " " $2; nexec[p]++ } else nopen[p]++
		if ($1 == "exec") hard[p] = 1
		if (!(p in seen)) { seen[p] = 1; pk[++np] = p }
	}
}
END {
	for (i = 1; i <= np; i++) {
		p = pk[i]
		c = (p in by) ? by[p] : (p in hard) ? "NOT COVERED" : "NOT COVERED (files)"
		u = ""
		if (nexec[p]) { split(prog[p], a, " "); u = nexec[p] " programs (" a[1] (nexec[p] > 1 ? ", ..." : "") ")" }
		if (nopen[p]) u = u (u == "" ? "" : ", ") nopen[p] " files"
		print p "\t" c "\t" u
	}
	for (x in nopkg) print "(no package)\t" x "\t-"
}' "$OUT/cover" "$OUT/owned" | sort -t'	' -k2,2 -k1,1 |
	awk -F'\t' 'BEGIN { printf "%-28s %-26s %s\n", "PACKAGE", "PROVIDED BY", "USED FOR" }
		    $1 == "(no package)" { nop[++k] = $2; next }
		    { printf "%-28s %-26s %s\n", $1, $2, $3 }
		    END { if (k) { print ""; print "programs run that no package owns:"
				   for (i = 1; i <= k; i++) print "  " nop[i] } }' > "$OUT/report"
cat "$OUT/report"
if [ -s "$OUT/missing-names" ]; then
	echo
	echo "programs looked for along PATH and found nowhere:"
	sed 's/^/  /' "$OUT/missing-names"
fi
if grep -Eq ': not found$|command not found|: No such file or directory$' "$OUT/stderr"; then
	echo
	echo "missing programs the command reported:"
	grep -E ': not found$|command not found|: No such file or directory$' "$OUT/stderr" |
		sort | uniq -c | sort -rn | head -n 20 | sed 's/^/  /'
fi
flagged=$(awk '$2 == "NOT" && $4 != "(files)" { print $1 }' "$OUT/report" | tr '\n' ' ')
soft=$(awk '$2 == "NOT" && $4 == "(files)" { print $1 }' "$OUT/report" | tr '\n' ' ')
echo
if [ -n "$soft" ]; then
	echo "audit-deps: files opened from packages ensure-deps.sh does not cover (often optional: locales, python site files; check): $soft"
fi
if [ -n "$flagged" ]; then
	echo "audit-deps: ensure-deps.sh does not cover programs of: $flagged"
	[ "$KEEP" = 1 ] && echo "audit-deps: raw data in $OUT"
	exit 1
fi
echo "audit-deps: every package used is covered"
[ "$KEEP" = 1 ] && echo "audit-deps: raw data in $OUT"
[ "$status" = 0 ]
