#!/bin/sh
# Fetch a package of Debian's linux source (linux-source-6.12,
# linux-config-7.3, ...) from the Debian mirror this machine already uses.
#
# The package comes from SUITES (a kernel base's kernel/BASE/base file says
# which: 6.12 is in bookworm-backports and trixie, 7.3 in trixie-backports,
# whatever release the host runs); without SUITES, from the host's release
# and its backports. apt runs with a private state/cache directory so the
# system's apt configuration is never touched, and the mirror URI is read
# from the system's apt sources: no host name is written in this repository.
#
# Usage: fetch-source.sh PACKAGE [VERSION [SUITES]]   (SUITES: comma-separated)
#   prints the path of the cached .deb on stdout; with VERSION, that version
#   when the mirror still has it (else the newest, as without VERSION).
set -eu

if [ $# -lt 1 ] || [ -z "$1" ]; then
	echo "usage: fetch-source.sh PACKAGE [VERSION [SUITES]]" >&2
	exit 2
fi
PKG=$1
WANT=${2:-}
SUITES=$(echo "${3:-}" | tr , " ")
CACHE=${COLLAPSE_EXT_CACHE:-$HOME/.cache/collapse_ext}
APTDIR=$CACHE/apt
mkdir -p "$CACHE" "$APTDIR/lists/partial" "$APTDIR/archives/partial" "$APTDIR/etc"

if [ -n "$WANT" ]; then
	# apt-get download names the file PKG_VERSION_ARCH.deb, ':' as %3a
	existing=$(ls "$CACHE/${PKG}_$(echo "$WANT" | sed 's/:/%3a/')"_*.deb 2>/dev/null | tail -n 1 || true)
else
	existing=$(ls "$CACHE"/${PKG}_*.deb 2>/dev/null | sort -V | tail -n 1 || true)
fi
if [ -n "$existing" ]; then
	echo "$existing"
	exit 0
fi

uri=$("$(dirname "$0")/apt-mirror.sh")

suites=$SUITES
if [ -z "$suites" ]; then
	. /etc/os-release
	codename=${VERSION_CODENAME:-}
	[ -n "$codename" ] || { echo "fetch-source: cannot tell the Debian release from /etc/os-release" >&2; exit 1; }
	suites="$codename $codename-backports"
fi

: > "$APTDIR/etc/sources.list"
for s in $suites; do
	echo "deb $uri $s main" >> "$APTDIR/etc/sources.list"
done

APT_OPTS="-o Dir::State=$APTDIR -o Dir::State::status=/dev/null \
-o Dir::Cache=$APTDIR -o Dir::Etc::SourceList=$APTDIR/etc/sources.list \
-o Dir::Etc::SourceParts=/dev/null -o Debug::NoLocking=1 \
-o APT::Get::List-Cleanup=0 -o APT::Sandbox::User=root"

echo "fetch-source: $PKG from $uri ($suites)" >&2
# shellcheck disable=SC2086
apt-get $APT_OPTS -q update >&2
cd "$CACHE"
# shellcheck disable=SC2086
if [ -n "$WANT" ] && apt-get $APT_OPTS -q download "$PKG=$WANT" >&2; then
	deb=$(ls "$CACHE/${PKG}_$(echo "$WANT" | sed 's/:/%3a/')"_*.deb | tail -n 1)
else
	[ -z "$WANT" ] || echo "fetch-source: $PKG $WANT is not on the mirror; taking the newest" >&2
	# shellcheck disable=SC2086
	apt-get $APT_OPTS -q download "$PKG" >&2
	deb=$(ls "$CACHE"/${PKG}_*.deb | sort -V | tail -n 1)
fi
echo "$deb"
