#!/bin/sh
# Make sure the host has every Debian package the build and the VM need.
# As root, install what is missing from the configured mirror; otherwise
# print the exact apt-get line and fail.
#
# The list comes from kernel/scripts/audit-deps.sh, which traces the build
# and names the package of every program it runs; .ci/run proves it in a
# fresh debootstrap root. Run the audit again after adding a build step.
set -eu

# command-or-file:package
NEED="
clang:clang
llvm-strip:llvm
pahole:dwarves
flex:flex
bison:bison
bc:bc
/usr/include/libelf.h:libelf-dev
/usr/include/zlib.h:zlib1g-dev
/usr/include/openssl/ssl.h:libssl-dev
/usr/include/sys/capability.h:libcap-dev
/bin/busybox:busybox-static
qemu-system-x86_64:qemu-system-x86
cpio:cpio
file:file
xz:xz-utils
zstd:zstd
gcc:gcc
ccache:ccache
make:make
git:git
dpkg-deb:dpkg
gnuplot:gnuplot-nox
python3:python3
/usr/lib/python3/dist-packages/prometheus_client:python3-prometheus-client
rsync:rsync
pkg-config:pkgconf
dpkg-buildpackage:dpkg-dev
/usr/share/build-essential/list:build-essential
dh_testdir:debhelper
/sbin/depmod:kmod
"
# `make test-deb`: lintian, man pages read back, the unit verified
NEED_TEST_DEB="
lintian:lintian
man:man-db
systemd-analyze:systemd
"
# `make deb-kernel-distro`: Debian's config signs modules with a key the
# build generates with openssl
NEED_DISTRO="
openssl:openssl
"
for group in "$@"; do
	case "$group" in
	test-deb) NEED="$NEED $NEED_TEST_DEB" ;;
	distro) NEED="$NEED $NEED_DISTRO" ;;
	*) echo "ensure-deps: unknown group '$group' (test-deb, distro)" >&2; exit 2 ;;
	esac
done

missing=""
for ent in $NEED; do
	what=${ent%%:*}
	pkg=${ent#*:}
	case "$what" in
	/*) [ -e "$what" ] && continue ;;
	*) command -v "$what" >/dev/null 2>&1 && continue ;;
	esac
	# busybox must be the static build: the guest has no libc.
	missing="$missing $pkg"
done
# A dynamic /bin/busybox is not enough for the initramfs.
if [ -e /bin/busybox ] && ! dpkg -s busybox-static >/dev/null 2>&1; then
	missing="$missing busybox-static"
fi

[ -z "$missing" ] && exit 0

line="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
	echo "collapse_ext: missing packages; run as root:" >&2
	echo "  $line" >&2
	exit 1
fi
echo "collapse_ext: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
if ! $line >/dev/null 2>&1; then
	apt-get update -q >/dev/null 2>&1 || true
	$line >&2
fi
