#!/bin/sh
# Print the Debian archive URI this machine's apt sources use: the first
# "deb" URI of the Debian archive (not -security), in one-line or deb822
# form. Used by fetch-source.sh and .ci/run, so that no host name is ever
# written in this repository.
#
# Usage: apt-mirror.sh [ETC_APT_DIR]   (default /etc/apt)
set -eu
etc=${1:-/etc/apt}
uri=$(
	{
		cat "$etc/sources.list" 2>/dev/null | awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }'
		for f in "$etc"/sources.list.d/*.sources; do
			[ -f "$f" ] || continue
			awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) print $i }' "$f"
		done
		for f in "$etc"/sources.list.d/*.list; do
			[ -f "$f" ] || continue
			awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' "$f"
		done
	} | grep -v -e security -e '^$' | grep -i debian | head -n 1
)
if [ -z "$uri" ]; then
	echo "apt-mirror: no Debian mirror found in $etc/sources.list{,.d}" >&2
	exit 1
fi
echo "$uri"
