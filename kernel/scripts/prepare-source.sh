#!/bin/sh
# Extract the pristine tree of a kernel base (kernel/BASE/base: the Debian
# linux-source package and version) into build/BASE/linux as a git
# repository whose first commit is the pristine source (tagged "pristine"),
# then apply kernel/BASE/patches/*.patch in name order with git am.
#
# Re-running is incremental: when the patch queue is unchanged nothing is
# touched; when it changed, the tree is reset to "pristine" and the queue is
# re-applied (git only rewrites files whose content differs, so make stays
# incremental). Commits made in build/BASE/linux that were not exported with
# `make kernel-export` are never thrown away: the script stops instead.
#
# Usage: prepare-source.sh SRC_DIR BASE_DIR [--pristine]
#   BASE_DIR is kernel/6.12, kernel/7.3, ...: its base file and patches/
set -eu

SRC=$1
BASE_DIR=$2
PATCHES=$BASE_DIR/patches
PRISTINE_ONLY=${3:-}
HERE=$(cd "$(dirname "$0")" && pwd)
if [ ! -f "$BASE_DIR/base" ]; then
	echo "prepare-source: $BASE_DIR/base is missing: not a kernel base directory" >&2
	exit 1
fi
. "$BASE_DIR/base"

git_k() { git -C "$SRC" -c user.name=collapse_ext -c user.email=collapse_ext@localhost "$@"; }

if [ ! -d "$SRC/.git" ]; then
	deb=$("$HERE/fetch-source.sh" "$DEB_SOURCE" "$DEB_VERSION" "$DEB_SUITES")
	ver=$(dpkg-deb -f "$deb" Version)
	echo "prepare-source: extracting $DEB_SOURCE $ver into $SRC" >&2
	tmp=$SRC.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp" "$(dirname "$SRC")"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" "./usr/src/$DEB_SOURCE.tar.xz"
	tar -xJf "$tmp/usr/src/$DEB_SOURCE.tar.xz" -C "$tmp"
	rm -rf "$SRC"
	mv "$tmp/$DEB_SOURCE" "$SRC"
	rm -rf "$tmp"
	echo "$ver" > "$SRC/.debian-version"
	git_k init -q
	git_k add -A -f .
	git_k commit -q -m "Linux ${DEB_SOURCE#linux-source-} (Debian $DEB_SOURCE $ver), pristine"
	git_k tag pristine
fi

[ "$PRISTINE_ONLY" = "--pristine" ] && exit 0

stamp="$SRC/.git/collapse_ext-applied"
want=$(cat /dev/null "$PATCHES"/*.patch 2>/dev/null | sha256sum | cut -d' ' -f1)
head=$(git_k rev-parse HEAD)
if [ -f "$stamp" ]; then
	have_sum=$(sed -n 1p "$stamp")
	have_head=$(sed -n 2p "$stamp")
	if [ "$have_sum" = "$want" ] && [ "$have_head" = "$head" ]; then
		exit 0
	fi
	if [ "$have_head" != "$head" ]; then
		if [ "$(git_k format-patch --stdout pristine..HEAD | sha256sum | cut -d' ' -f1)" = "$want" ] ||
		   [ "$have_sum" = "$want" ]; then
			# Developer commits in the tree that already match (or are
			# newer than) the queue: leave them alone.
			printf '%s\n%s\n' "$want" "$head" > "$stamp"
			exit 0
		fi
		echo "prepare-source: $SRC has commits not exported to $PATCHES;" >&2
		echo "  run 'make kernel-export' to keep them, or" >&2
		echo "  'git -C $SRC reset --hard pristine' to drop them." >&2
		exit 1
	fi
fi

git_k am --abort >/dev/null 2>&1 || true
git_k reset -q --hard pristine
for p in "$PATCHES"/*.patch; do
	[ -f "$p" ] || continue
	if ! git_k am -q --3way "$(realpath "$p")" >/dev/null 2>"$SRC/.git/am.err"; then
		files=$(git_k diff --name-only --diff-filter=U 2>/dev/null | tr '\n' ' ')
		[ -n "$files" ] || files=$(grep -o "patch failed: [^:]*" "$SRC/.git/am.err" | cut -d' ' -f3 | tr '\n' ' ')
		echo "prepare-source: patch $(basename "$p") does not apply (conflict in: ${files:-see below})" >&2
		cat "$SRC/.git/am.err" >&2
		git_k am --abort >/dev/null 2>&1 || true
		exit 1
	fi
done
printf '%s\n%s\n' "$want" "$(git_k rev-parse HEAD)" > "$stamp"
echo "prepare-source: applied $(ls "$PATCHES"/*.patch 2>/dev/null | wc -l) patches" >&2
