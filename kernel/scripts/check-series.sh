#!/bin/sh
# Build every prefix of the patch series, and checkpatch every patch: each
# patch must build on its own (a bisect never lands on a broken tree) and
# be checkpatch-clean.
#
# Works in a clone of build/BASE/linux (build/BASE/series) with its own object
# directory (build/BASE/series-kobj, configured like build/BASE/kobj), so the main
# tree and its objects are never touched; builds are incremental from one
# prefix to the next.
#
# Usage: check-series.sh SRC_DIR KOBJ_DIR PATCH_DIR   (make check-series)
# Environment: FROM=N checks the prefixes from the N-th on (the earlier
# patches are applied, neither built nor checkpatched): after a change to
# patch N or later of a series whose earlier prefixes passed.
set -eu
SRC=$1
KOBJ=$2
PATCHES=$3
HERE=$(cd "$(dirname "$0")" && pwd)
BUILD=$(dirname "$SRC")
WT=$BUILD/series
OBJ=$BUILD/series-kobj
JOBS=${JOBS:-$(nproc)}

if [ ! -d "$WT/.git" ]; then
	git clone -q --no-checkout "$SRC" "$WT"
fi
git -C "$WT" fetch -q "$SRC" 'refs/tags/pristine:refs/tags/pristine'
mkdir -p "$OBJ"

# The main build's config, fitted to the tree as it is at this prefix (a
# symbol the prefix does not have yet is dropped, and comes back later).
configure() {
	cp "$KOBJ/.config" "$OBJ/.config"
	make -s -C "$WT" O="$OBJ" olddefconfig
}

git_w() { git -C "$WT" -c user.name=collapse_ext -c user.email=collapse_ext@localhost "$@"; }
git_w am --abort >/dev/null 2>&1 || true
git_w checkout -q -f pristine
git_w clean -q -f -d >/dev/null 2>&1 || true

# The files the patch just applied adds that the series' MAINTAINERS entry
# (COLLAPSE_EXT) does not cover, as the tree has it at this prefix.
# checkpatch asks "does MAINTAINERS need updating?" of every patch adding a
# file; where the entry covers them all, the answer is no, and only that
# warning is ignored.
uncovered() {
	git -C "$WT" show --diff-filter=A --name-only --format= HEAD |
	while read -r f; do
		awk -v f="$f" '
			/^COLLAPSE_EXT / { in_entry = 1; next }
			in_entry && /^$/ { in_entry = 0 }
			in_entry && /^F:/ {
				p = $2
				if ((p ~ /\/$/ && index(f, p) == 1) || f == p)
					found = 1
			}
			END { exit !found }' "$WT/MAINTAINERS" || echo "$f"
	done
}

# checkpatch reads an unnamed bit-field, the padding idiom of the uapi
# headers (`__u32 :32;` in bpf.h) and of libbpf's opts structs (`size_t
# :0;`), as "space prohibited before that ':'": a known false positive
# that every such upstream patch shows. True when every error of the
# report @1 is that one, on such a line.
only_bitfield_spacing() {
	printf '%s\n' "$1" | awk '
		/^(ERROR|WARNING|CHECK):/ {
			n++
			if ($0 !~ /^ERROR: space prohibited before that .:. \(ctx:WxV\)$/)
				bad = 1
		}
		/^\+/ && prev ~ /^#[0-9]+: FILE:/ {
			if ($0 !~ /^\+[ \t]*(__u(8|16|32|64)|size_t|int|long) :[0-9]+;$/)
				bad = 1
		}
		{ prev = $0 }
		END { exit !(n > 0 && !bad) }'
}

fail=0
n=0
for p in "$PATCHES"/*.patch; do
	n=$((n + 1))
	name=$(basename "$p")
	if ! git_w am -q --3way "$(realpath "$p")" >/dev/null 2>&1; then
		echo "not ok $n $name: does not apply"
		exit 1
	fi
	# FROM=N: the prefixes before N were checked already; apply them only
	[ "$n" -ge "${FROM:-1}" ] || continue
	ignore=
	[ -n "$(uncovered)" ] || ignore="--ignore FILE_PATH_CHANGES"
	# shellcheck disable=SC2086
	if ! out=$("$WT/scripts/checkpatch.pl" --no-tree -q $ignore "$p" 2>&1) &&
	   ! only_bitfield_spacing "$out"; then
		echo "$out" | sed 's/^/# /'
		echo "not ok $n $name: checkpatch"
		fail=1
		continue
	fi
	configure
	if ! make -s -C "$WT" O="$OBJ" -j"$JOBS" bzImage >"$OBJ/build.log" 2>&1 ||
	   grep -E 'warning:|error:' "$OBJ/build.log" >/dev/null; then
		grep -E 'warning:|error:' "$OBJ/build.log" | head -20 | sed 's/^/# /'
		echo "not ok $n $name: build"
		fail=1
		continue
	fi
	echo "ok $n $name: builds, checkpatch clean"
done
exit $fail
