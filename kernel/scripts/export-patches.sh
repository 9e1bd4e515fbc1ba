#!/bin/sh
# Write the commits of build/BASE/linux (pristine..HEAD) back to kernel/BASE/patches/
# as a git format-patch series, replacing the old queue.
# Usage: export-patches.sh SRC_DIR PATCH_DIR
set -eu
SRC=$1
OUT=$2
if ! git -C "$SRC" rev-parse -q --verify pristine >/dev/null; then
	echo "export-patches: $SRC has no 'pristine' tag: run 'make kernel-source'" >&2
	exit 1
fi
if [ -n "$(git -C "$SRC" status --porcelain --untracked-files=no)" ]; then
	echo "export-patches: $SRC has uncommitted changes; commit them first" >&2
	exit 1
fi
tmp=$(mktemp -d)
git -C "$SRC" format-patch -q --no-signature --zero-commit --no-numbered \
	-o "$tmp" pristine..HEAD
rm -f "$OUT"/*.patch
mkdir -p "$OUT"
# An empty context line is " " in git's output; checkpatch.pl run on the
# file reads that as trailing whitespace. git am takes an empty line as an
# empty context line just as well.
for p in "$tmp"/*.patch; do
	[ -f "$p" ] && sed 's/^ $//' "$p" > "$OUT/$(basename "$p")"
done
rm -rf "$tmp"
# The tree now matches the queue: record it so prepare-source leaves it be.
printf '%s\n%s\n' "$(cat /dev/null "$OUT"/*.patch | sha256sum | cut -d' ' -f1)" \
	"$(git -C "$SRC" rev-parse HEAD)" > "$SRC/.git/collapse_ext-applied"
echo "export-patches: $(ls "$OUT"/*.patch 2>/dev/null | wc -l) patches in $OUT"
