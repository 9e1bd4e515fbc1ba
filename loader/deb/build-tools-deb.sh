#!/bin/sh
# Build the collapse-ext-tools Debian package from files make has built:
# stage the tree, write DEBIAN/control (Depends from dpkg-shlibdeps),
# conffiles and md5sums, then dpkg-deb --build --root-owner-group.
#
# Usage: build-tools-deb.sh OUT_DIR STAGE_DIR COLLAPSECTL \
#            --samples BIN... --policies OBJ... --examples FILE...
#   COLLAPSECTL and the sample programs are the package's dynamic builds
#   (loader/deb/deb.mk); they are stripped here. The version is
#   COLLAPSECTL_VERSION (loader/collapsectl.h) with Debian revision 1; the
#   architecture dpkg's. Prints the path of the .deb.
# Run from the top of the source tree.
set -eu

OUT=$1
STAGE=$2
COLLAPSECTL=$3
shift 3
SAMPLES=""
POLICIES=""
EXAMPLES=""
list=""
for a in "$@"; do
	case "$a" in
	--samples) list=SAMPLES ;;
	--policies) list=POLICIES ;;
	--examples) list=EXAMPLES ;;
	*)
		[ -n "$list" ] || { echo "build-tools-deb: '$a' before --samples/--policies/--examples" >&2; exit 2; }
		eval "$list=\"\$$list \$a\""
		;;
	esac
done

PKG=collapse-ext-tools
HERE=loader/deb
upstream=$(sed -n 's/^#define[[:space:]]*COLLAPSECTL_VERSION[[:space:]]*"\([^"]*\)".*/\1/p' loader/collapsectl.h)
[ -n "$upstream" ] || { echo "build-tools-deb: no COLLAPSECTL_VERSION in loader/collapsectl.h" >&2; exit 1; }
VERSION=$upstream-1
ARCH=$(dpkg --print-architecture)
DOC=usr/share/doc/$PKG
umask 022

rm -rf "$STAGE"
mkdir -p "$STAGE/DEBIAN" "$OUT"
inst() { # MODE SRC DEST (DEST relative to the package root)
	install -D -m "$1" "$2" "$STAGE/$3"
}
strip_elf() {
	# what dh_strip does for executables
	strip --remove-section=.comment --remove-section=.note "$1"
}

# Programs: dynamic against libc, libelf and zlib (libbpf is linked in).
inst 755 "$COLLAPSECTL" usr/sbin/collapsectl
strip_elf "$STAGE/usr/sbin/collapsectl"
for f in $SAMPLES; do
	inst 755 "$f" "usr/libexec/collapse_ext/$(basename "$f")"
	strip_elf "$STAGE/usr/libexec/collapse_ext/$(basename "$f")"
done
# Policies: BPF objects are architecture-dependent data (eBPF, compiled
# for this architecture's kernel), so /usr/lib, not /usr/share (FHS; lintian
# arch-dependent-file-in-usr-share). collapsectl looks a bare policy name up
# in /usr/lib/collapse_ext/bpf and then /usr/share/collapse_ext/bpf (the
# QEMU guest's). Not stripped: libbpf needs their symbols and BTF.
for f in $POLICIES; do
	inst 644 "$f" "usr/lib/collapse_ext/bpf/$(basename "$f")"
done
for f in $EXAMPLES; do
	inst 644 "$f" "$DOC/examples/$(basename "$f")"
done

# Manual pages, with the package's version in the footer.
for m in loader/man/*.[1-8]; do
	sec=${m##*.}
	dest=$STAGE/usr/share/man/man$sec/$(basename "$m").gz
	mkdir -p "$(dirname "$dest")"
	sed '/^\.TH /s/"collapse_ext [^"]*"/"collapse_ext '"$upstream"'"/' "$m" | gzip -9n > "$dest"
	chmod 644 "$dest"
done

inst 644 loader/systemd/collapse-ext.service lib/systemd/system/collapse-ext.service
inst 644 loader/bash-completion/collapsectl usr/share/bash-completion/completions/collapsectl
inst 644 $HERE/policies.conf etc/collapse_ext/policies.conf
inst 644 $HERE/default etc/default/collapse-ext
printf '%s\n' /etc/collapse_ext/policies.conf /etc/default/collapse-ext > "$STAGE/DEBIAN/conffiles"

inst 644 $HERE/copyright "$DOC/copyright"
inst 644 $HERE/lintian-overrides "usr/share/lintian/overrides/$PKG"
# The changelog's newest entry must be this version; a version bump
# without an entry gets a generated one (add a real one to loader/deb/changelog).
top=$(dpkg-parsechangelog -l $HERE/changelog -S Version)
mkdir -p "$STAGE/$DOC"
if [ "$top" = "$VERSION" ]; then
	cat $HERE/changelog
else
	echo "build-tools-deb: loader/deb/changelog's newest entry is $top, the package is $VERSION: generating an entry" >&2
	printf '%s (%s) bookworm; urgency=medium\n\n  * collapsectl %s (no changelog entry written yet).\n\n -- %s  %s\n\n' \
		"$PKG" "$VERSION" "$upstream" "collapse_ext developers <collapse_ext@localhost>" \
		"$(date -R -d "@$(git log -1 --format=%ct -- loader/collapsectl.h 2>/dev/null || date +%s)")"
	cat $HERE/changelog
fi | gzip -9n > "$STAGE/$DOC/changelog.Debian.gz"
chmod 644 "$STAGE/$DOC/changelog.Debian.gz"

# Depends: what the ELF programs link against, from the shlibs/symbols
# files of the installed libraries (dpkg-shlibdeps wants a debian/control).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/debian"
printf 'Source: %s\n\nPackage: %s\nArchitecture: any\n' "$PKG" "$PKG" > "$tmp/debian/control"
elfs=$(cd "$STAGE" && find usr -type f -perm -u+x | sort)
(cd "$tmp" && dpkg-shlibdeps -O $(for e in $elfs; do printf ' -e%s/%s' "$STAGE" "$e"; done)) > "$tmp/vars"
depends=$(sed -n 's/^shlibs:Depends=//p' "$tmp/vars")
[ -n "$depends" ] || { echo "build-tools-deb: dpkg-shlibdeps found no dependency" >&2; exit 1; }

find "$STAGE" -type d -exec chmod 755 {} +
size=$(du -k -s --exclude=DEBIAN "$STAGE" | cut -f1)
sed -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$ARCH/" -e "s/@INSTALLED_SIZE@/$size/" \
	-e "s/@DEPENDS@/$depends/" $HERE/control.in > "$STAGE/DEBIAN/control"
(cd "$STAGE" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' | LC_ALL=C sort |
	xargs md5sum) > "$STAGE/DEBIAN/md5sums"
chmod 644 "$STAGE/DEBIAN/control" "$STAGE/DEBIAN/conffiles" "$STAGE/DEBIAN/md5sums"

deb=$OUT/${PKG}_${VERSION}_$ARCH.deb
rm -f "$OUT/${PKG}"_*.deb
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)} \
	dpkg-deb --build --root-owner-group "$STAGE" "$deb" >/dev/null
echo "$deb"
