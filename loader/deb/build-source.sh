#!/bin/sh
# make deb-tools: the collapse-ext Debian source package, and from it the
# collapse-ext-tools binary package, with dpkg-buildpackage.
#
# Usage: loader/deb/build-source.sh OUT_DIR        (from the source tree)
#
# The version comes from git: RELEASE+gitCOUNT.HASH, RELEASE being
# COLLAPSECTL_VERSION (loader/collapsectl.h, which must be the newest entry
# of loader/deb/debian/changelog), COUNT the number of commits (so that
# every later commit of main sorts higher: a shallow clone is refused) and
# HASH the commit (its date is the changelog entry's); ".dirtyTIME" (the
# build's time, seconds since the epoch) is appended when files differ
# from the commit (tracked ones changed, or untracked ones not ignored,
# which are staged too).
# The staged source tree (OUT_DIR/src/collapse-ext-VERSION/) is what git
# tracks plus untracked files it does not ignore, with loader/deb/debian as
# debian/ and a changelog entry for VERSION on top. The build dependencies
# (debian/control) are installed with apt-get build-dep when run as root,
# the linux-source-6.12 package from the kernel build's cache when it is
# there. Leaves in OUT_DIR: collapse-ext_VERSION.dsc, .tar.xz, .changes,
# .buildinfo and collapse-ext-tools_VERSION_ARCH.deb (older ones removed);
# prints the .deb's path.
set -eu
OUT=$(realpath -m "$1")
SRC=$(pwd)
PKG_SRC=collapse-ext

git rev-parse --git-dir >/dev/null 2>&1 ||
	{ echo "build-source: not a git checkout: the package version comes from git" >&2; exit 1; }
release=$(sed -n 's/^#define[[:space:]]*COLLAPSECTL_VERSION[[:space:]]*"\([^"]*\)".*/\1/p' loader/collapsectl.h)
top=$(dpkg-parsechangelog -l loader/deb/debian/changelog -S Version)
if [ "$top" != "$release" ]; then
	echo "build-source: loader/deb/debian/changelog's newest entry is $top, collapsectl is $release:" \
	     "add an entry for $release (dch -c loader/deb/debian/changelog -v $release)" >&2
	exit 1
fi
if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
	echo "build-source: a shallow clone: the version counts commits (git fetch --unshallow)" >&2
	exit 1
fi
version=$release+git$(git rev-list --count HEAD).$(git rev-parse --short=7 HEAD)
if ! git diff --quiet HEAD -- 2>/dev/null || [ -n "$(git ls-files --others --exclude-standard | head -n 1)" ]; then
	version=$version.dirty$(date +%s)
fi

stage=$OUT/src/$PKG_SRC-$version
rm -rf "$OUT/src"
mkdir -p "$stage"
# tracked and untracked-but-not-ignored files that exist (not build/)
git ls-files -z --cached --others --exclude-standard |
	xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
	grep -zv '^build/' | tar --null -T - -cf - | tar -C "$stage" -xf -
cp -r loader/deb/debian "$stage/debian"
{
	printf '%s (%s) %s; urgency=medium\n\n' "$PKG_SRC" "$version" \
		"$(. /etc/os-release && echo "${VERSION_CODENAME:-unstable}")"
	printf '  * Snapshot of git commit %s%s.\n\n' "$(git rev-parse --short=12 HEAD)" \
		"$(case $version in *.dirty*) echo ' with uncommitted changes' ;; esac)"
	# the commit's time; now for uncommitted changes (the entry below
	# may be newer than the commit)
	case $version in
	*.dirty*) when=$(date -R) ;;
	*) when=$(date -R -d "@$(git log -1 --format=%ct)") ;;
	esac
	printf ' -- %s  %s\n\n' "collapse_ext developers <collapse-ext@packages.invalid>" "$when"
	cat loader/deb/debian/changelog
} > "$stage/debian/changelog"

# build dependencies
if ! (cd "$stage" && dpkg-checkbuilddeps) 2>"$OUT/src/builddeps"; then
	if [ "$(id -u)" != 0 ]; then
		cat "$OUT/src/builddeps" >&2
		echo "build-source: as root: apt-get build-dep $stage" >&2
		exit 1
	fi
	cached=$(ls "${COLLAPSE_EXT_CACHE:-${HOME:-/root}/.cache/collapse_ext}"/linux-source-6.12_*_all.deb 2>/dev/null | tail -n 1 || true)
	if [ -n "$cached" ] && ! dpkg -s linux-source-6.12 >/dev/null 2>&1; then
		echo "build-source: installing $(basename "$cached") (the kernel build's copy)" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$cached" >/dev/null
	fi
	echo "build-source: apt-get build-dep" >&2
	DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -q "$stage" >"$OUT/src/build-dep.log" 2>&1 ||
		{ tail -n 20 "$OUT/src/build-dep.log" >&2; echo "build-source: apt-get build-dep failed" >&2; exit 1; }
fi

rm -f "$OUT"/${PKG_SRC}_* "$OUT"/collapse-ext-tools_* "$OUT"/collapse-ext-tools-dbgsym_*
log=$OUT/dpkg-buildpackage.log
echo "build-source: dpkg-buildpackage $PKG_SRC $version (log: $log)" >&2
if ! (cd "$stage" && dpkg-buildpackage -us -uc) > "$log" 2>&1; then
	tail -n 30 "$log" >&2
	echo "build-source: dpkg-buildpackage failed" >&2
	exit 1
fi
mv "$OUT"/src/${PKG_SRC}_* "$OUT"/src/collapse-ext-tools*_* "$OUT"/
rm -rf "$stage"
ls "$OUT"/collapse-ext-tools_"$version"_*.deb
