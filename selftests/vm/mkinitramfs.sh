#!/bin/sh
# Pack the guest initramfs: busybox-static, /init, and the staged files
# given (tools, policies, tests; see GUEST_FILES in the Makefile), each
# under build/BASE/vm/root. Only those: a file left in build/BASE/vm/root by an
# earlier build (a deleted test's binary) does not go in.
# Usage: mkinitramfs.sh OUTPUT.cpio.gz [STAGED_FILE...]
set -eu
out=$1
stage=$(dirname "$out")/root
here=$(cd "$(dirname "$0")" && pwd)
bb=/bin/busybox
if ! file -L "$bb" 2>/dev/null | grep -q "statically linked" &&
   ! (ldd "$bb" 2>&1 | grep -q "not a dynamic"); then
	echo "mkinitramfs: $bb is not static: apt-get install busybox-static" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/sbin" "$tmp/usr/bin" "$tmp/usr/sbin" "$tmp/proc" \
	"$tmp/sys" "$tmp/dev" "$tmp/tmp" "$tmp/run" "$tmp/root" "$tmp/etc" "$tmp/mnt"
cp "$bb" "$tmp/bin/busybox"
ln -s busybox "$tmp/bin/sh"
cp "$here/init" "$tmp/init"
chmod 755 "$tmp/init"
echo "root:x:0:0:root:/root:/bin/sh" > "$tmp/etc/passwd"
echo "nobody:x:65534:65534:nobody:/:/bin/sh" >> "$tmp/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$tmp/etc/group"
shift
for f in "$@"; do
	case "$f" in
	"$stage"/*) rel=${f#"$stage"/} ;;
	*) echo "mkinitramfs: $f is not under $stage" >&2; exit 1 ;;
	esac
	mkdir -p "$tmp/$(dirname "$rel")"
	cp -a "$f" "$tmp/$rel"
done
(cd "$tmp" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 | gzip -1) > "$out.tmp"
mv "$out.tmp" "$out"
echo "mkinitramfs: $out ($(du -h "$out" | cut -f1))"
