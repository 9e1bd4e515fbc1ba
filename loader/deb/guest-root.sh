#!/bin/sh
# The systemd guest of `make test-deb`: a minimal Debian root of the host's
# release (kernel/scripts/debian-root.sh) with systemd, dpkg and apt and
# the libraries collapse-ext-tools depends on, packed as an initramfs that
# selftests/vm/run boots in place of the busybox guest (--initrd).
#
# Usage: loader/deb/guest-root.sh OUT.cpio.gz   (as root, from the source tree)
#
# The guest: /init moves vm/run's command (/run/cmd.sh: systemd mounts a
# tmpfs on /run) to /etc/guest/, then executes systemd; guest-cmd.service
# runs it once multi-user.target is reached, its output on the console,
# prints "@@COLLAPSE_EXT_EXIT=N@@" as the busybox guest does, and powers
# off. Nothing is downloaded in the guest (it has no network): what the
# tests install comes with vm/run --add. OUT is rebuilt only when this
# script changed or OUT is missing.
set -eu
OUT=$(realpath -m "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
# rebuilt when this script or the root's recipe changed
mkdir -p "$(dirname "$OUT")"
stamp=$OUT.script
cat "$0" "$HERE/../../kernel/scripts/debian-root.sh" > "$OUT.script.new" 2>/dev/null || true
if [ -s "$OUT" ] && cmp -s "$OUT.script.new" "$stamp"; then
	rm -f "$OUT.script.new"
	exit 0
fi
[ "$(id -u)" = 0 ] || { echo "guest-root: needs root (chroot, apt-get)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/var/tmp}/collapse_ext-guest.XXXXXX")
root=$work/root
cleanup() {
	umount "$root/proc" 2>/dev/null || true
	rm -rf --one-file-system "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$HERE/../../kernel/scripts/debian-root.sh" unpack "$root"
mount -t proc proc "$root/proc"
# collapse-ext-tools' Depends (libc6 is there); no recommends (no udev,
# no dbus: systemctl talks to PID 1's private socket).
pkgs="systemd systemd-sysv libelf1 zlib1g procps"
echo "guest-root: apt-get install $pkgs" >&2
if ! chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
	sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends $pkgs" \
	> "$work/apt.log" 2>&1; then
	tail -n 20 "$work/apt.log" >&2
	echo "guest-root: apt-get install failed" >&2
	exit 1
fi
umount "$root/proc"
chroot "$root" apt-get clean

# What a test guest does not need, or what would only slow its boot down.
rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/locale/* \
	"$root"/var/lib/apt/lists/*_Packages "$root"/var/cache/debconf/*-old
for u in getty@tty1.service serial-getty@ttyS0.service apt-daily.timer apt-daily-upgrade.timer \
	 dpkg-db-backup.timer e2scrub_all.timer fstrim.timer systemd-timesyncd.service \
	 systemd-random-seed.service systemd-hwdb-update.service; do
	ln -sf /dev/null "$root/etc/systemd/system/$u"
done
echo collapse-ext-guest > "$root/etc/hostname"
: > "$root/etc/machine-id"

mkdir -p "$root/etc/guest"
cat > "$root/init" <<'INIT'
#!/bin/sh
# vm/run's command and files: /run is about to become systemd's tmpfs
mkdir -p /etc/guest
[ -f /run/cmd.sh ] && mv /run/cmd.sh /etc/guest/cmd.sh
exec /lib/systemd/systemd
INIT
chmod 755 "$root/init"

cat > "$root/etc/guest/run-cmd" <<'RUN'
#!/bin/sh
# guest-cmd.service: vm/run's command, its status on the console, power off
rc=127
if [ -f /etc/guest/cmd.sh ]; then
	cd /root
	sh /etc/guest/cmd.sh
	rc=$?
else
	echo "guest: no /etc/guest/cmd.sh"
fi
sync
echo "@@COLLAPSE_EXT_EXIT=$rc@@"
systemctl --no-block poweroff
RUN
chmod 755 "$root/etc/guest/run-cmd"
cat > "$root/etc/systemd/system/guest-cmd.service" <<'UNIT'
[Unit]
Description=vm/run's command
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/etc/guest/run-cmd
StandardOutput=tty
StandardError=inherit
TTYPath=/dev/ttyS0
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
UNIT
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -sf ../guest-cmd.service "$root/etc/systemd/system/multi-user.target.wants/guest-cmd.service"

mkdir -p "$(dirname "$OUT")"
(cd "$root" && find . -xdev | cpio -o -H newc --quiet | gzip -1) > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
mv "$OUT.script.new" "$stamp"
echo "guest-root: $OUT ($(du -h "$OUT" | cut -f1))" >&2
