#!/bin/sh
# A minimal Debian root of the host's release, for CI's fresh root
# (.ci/run) and the systemd guest of `make test-deb`
# (loader/deb/guest-root.sh). As root.
#
# Usage:
#   debian-root.sh tarball     print the cached root's path, building it
#                              first when missing (debootstrap
#                              --variant=minbase from the host's mirror,
#                              then packed with tar | zstd)
#   debian-root.sh unpack DIR  unpack it into DIR (created) and give it the
#                              host's apt sources, keyrings and Acquire
#                              settings (a proxy, a snapshot's validity),
#                              resolv.conf and hosts
# Environment: COLLAPSE_EXT_CACHE (default ~/.cache/collapse_ext) holds
# debootstrap-CODENAME-ARCH.tar.zst; delete it to rebuild.
set -eu
[ "${1:-}" != unpack ] || [ $# != 2 ] || set -- unpack "$(realpath -m "$2")"
cd "$(dirname "$0")/../.."

[ "$(id -u)" = 0 ] || { echo "debian-root: needs root (debootstrap, chroot)" >&2; exit 1; }
. /etc/os-release
codename=${VERSION_CODENAME:-}
if [ "${ID:-}" != debian ] || [ -z "$codename" ]; then
	echo "debian-root: the root is built for the host's Debian release; this host is '${PRETTY_NAME:-unknown}'" >&2
	exit 1
fi
arch=$(dpkg --print-architecture)
CACHE=${COLLAPSE_EXT_CACHE:-${HOME:-/root}/.cache/collapse_ext}
TARBALL=$CACHE/debootstrap-$codename-$arch.tar.zst

need_tools() {
	need=""
	command -v debootstrap >/dev/null 2>&1 || need="$need debootstrap"
	command -v zstd >/dev/null 2>&1 || need="$need zstd"
	[ -z "$need" ] && return
	echo "debian-root: installing on the host:$need" >&2
	apt-get install -y -q --no-install-recommends $need </dev/null >/dev/null ||
		{ apt-get update -q >/dev/null; apt-get install -y -q --no-install-recommends $need </dev/null >&2; }
}

make_tarball() {
	[ -s "$TARBALL" ] && return
	need_tools
	mkdir -p "$CACHE"
	mirror=$(kernel/scripts/apt-mirror.sh)
	boot=$(mktemp -d "${TMPDIR:-/var/tmp}/collapse_ext-debootstrap.XXXXXX")
	t0=$(date +%s)
	echo "debian-root: debootstrap --variant=minbase $codename from $mirror" >&2
	if ! debootstrap --variant=minbase --arch="$arch" "$codename" "$boot/root" "$mirror" \
		</dev/null >"$boot/debootstrap.log" 2>&1; then
		tail -n 30 "$boot/debootstrap.log" >&2
		[ -f "$boot/root/debootstrap/debootstrap.log" ] && tail -n 30 "$boot/root/debootstrap/debootstrap.log" >&2
		rm -rf --one-file-system "$boot"
		echo "debian-root: debootstrap failed" >&2
		exit 1
	fi
	rm -rf "$boot"/root/var/cache/apt/archives/*.deb
	tar --numeric-owner --xattrs -C "$boot/root" -cf - . | zstd -q -T0 -10 > "$TARBALL.tmp"
	mv "$TARBALL.tmp" "$TARBALL"
	rm -rf --one-file-system "$boot"
	echo "debian-root: cached the root as $TARBALL ($(du -h "$TARBALL" | cut -f1), $(($(date +%s) - t0)) s)" >&2
}

unpack() {
	root=$1
	make_tarball
	command -v zstd >/dev/null 2>&1 || need_tools
	mkdir -p "$root"
	zstd -q -dc "$TARBALL" | tar --numeric-owner --xattrs -xpf - -C "$root"
	rm -f "$root/etc/apt/sources.list"
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
		 /etc/apt/trusted.gpg /etc/apt/trusted.gpg.d/* /etc/apt/keyrings/* /etc/apt/auth.conf.d/*; do
		[ -f "$f" ] || continue
		mkdir -p "$root$(dirname "$f")"
		cp -p "$f" "$root$f"
	done
	for f in /etc/apt/apt.conf /etc/apt/apt.conf.d/*; do
		[ -f "$f" ] && grep -qi '^[[:space:]]*acquire' "$f" && cp -p "$f" "$root$f"
	done
	# keyrings the sources name (Signed-By) that the root lacks
	for k in $(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
		   grep -io 'signed-by[:=] *[^] ]*' | sed 's/^[^:=]*[:=] *//' | sort -u); do
		if [ -f "$k" ] && [ ! -e "$root$k" ]; then
			mkdir -p "$root$(dirname "$k")"
			cp -p "$k" "$root$k"
		fi
	done
	cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	cp -L /etc/hosts "$root/etc/hosts" 2>/dev/null || true
}

case "${1:-}" in
tarball) make_tarball; echo "$TARBALL" ;;
unpack) [ $# = 2 ] || { echo "usage: $0 unpack DIR" >&2; exit 2; }; unpack "$2" ;;
*) echo "usage: $0 tarball | unpack DIR" >&2; exit 2 ;;
esac
