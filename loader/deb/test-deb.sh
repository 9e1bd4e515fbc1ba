#!/bin/sh
# make test-deb: check the packages `make deb` built.
#  1. lintian on the source package and collapse-ext-tools (their
#     .changes): any error fails (overrides: see
#     loader/deb/debian/collapse-ext-tools.lintian-overrides);
#  2. its files, unpacked: collapsectl --version, the manual pages read
#     back with man --warnings (no warning allowed), the bash completion
#     completing a command and an option;
#  3. as root: installed with apt-get (its Depends from the mirror), then
#     /usr/sbin/collapsectl --version, man -w, dpkg --verify, the
#     autopkgtest (debian/tests/offline-check, as nobody), and
#     systemd-analyze verify on the installed unit and its security
#     exposure (at most 2.0, offline); purged again unless it
#     was installed before (KEEP_INSTALLED=1 keeps it);
#  4. the linux-image package's kernel (boot/vmlinuz-*) booted under QEMU
#     with the guest initramfs: collapsectl loads, lists and unloads a
#     policy, and the guest's `uname -v` must carry the package's build
#     number (so the packaged kernel, not build/BASE/kobj's, ran);
#  5. as root: the same kernel booted with a systemd guest
#     (loader/deb/guest-root.sh: Debian's systemd, dpkg and apt), in which
#     loader/deb/test-deb-guest.sh installs the package, runs
#     collapse-ext.service with a policy on a service that starts and
#     restarts, reloads a bad file, upgrades (to the package repacked with
#     a higher version), removes and purges it: every step checked, nothing
#     left attached or pinned; then promtool (Debian's prometheus package,
#     unpacked) evaluates the shipped rules on the guest's two scrapes
#     (loader/deb/prom-check.py).
# Ends with one line: "test-deb: PASS ..." or "test-deb: FAIL: why".
#
# Usage: loader/deb/test-deb.sh TOOLS.deb DEB_DIR   (from the source tree)
set -eu
TOOLS=$(realpath "$1")
DEBDIR=$(realpath "$2")
PKG=collapse-ext-tools
t0=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/collapse_ext-test-deb.XXXXXX")
purge=0
cleanup() {
	rc=$?
	if [ "$purge" = 1 ]; then
		DEBIAN_FRONTEND=noninteractive dpkg --purge "$PKG" >/dev/null 2>&1 ||
			echo "test-deb: could not purge $PKG" >&2
	fi
	rm -rf "$tmp"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail() {
	echo "test-deb: FAIL: $*"
	exit 1
}
step() { echo "test-deb: $*"; }

upstream=$(dpkg-deb -f "$TOOLS" Version | sed 's/-[^-]*$//')
done_list=""

# 1. lintian, on the .changes (the source package and its binaries) when
# it is beside the .deb
v=$(dpkg-deb -f "$TOOLS" Version)
changes=$(dirname "$TOOLS")/collapse-ext_${v}_$(dpkg-deb -f "$TOOLS" Architecture).changes
[ -f "$changes" ] || changes=$TOOLS
step "lintian $(basename "$changes")"
set +e
lintian --fail-on error -I "$changes" > "$tmp/lintian" 2>"$tmp/lintian.err"
lrc=$?
set -e
sed 's/^/    /' "$tmp/lintian"
grep -v 'running with root privileges' "$tmp/lintian.err" | sed 's/^/    /' >&2 || true
nerr=$(grep -c '^E: ' "$tmp/lintian" || true)
nwarn=$(grep -c '^W: ' "$tmp/lintian" || true)
ninfo=$(grep -c '^I: ' "$tmp/lintian" || true)
[ "$lrc" = 0 ] && [ "$nerr" = 0 ] || fail "lintian: $nerr errors (exit status $lrc)"
done_list="lintian: $nerr errors, $nwarn warnings, $ninfo info"

# 2. the unpacked package
dpkg-deb -x "$TOOLS" "$tmp/tools"
v=$("$tmp/tools/usr/sbin/collapsectl" --version) || fail "collapsectl --version failed"
case "$v" in "collapsectl $upstream "*) ;; *) fail "collapsectl --version says '$v', the package is $upstream" ;; esac
check_man() { # FILE.gz
	zcat "$1" > "$tmp/page"
	w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$tmp/page" 2>&1 >/dev/null) ||
		fail "man -l $1 failed: $w"
	[ -z "$w" ] || fail "man --warnings on $(basename "$1"): $w"
	[ "$(MANWIDTH=80 man -l "$tmp/page" 2>/dev/null | wc -l)" -gt 20 ] || fail "$(basename "$1") renders to almost nothing"
}
for m in usr/share/man/man8/collapsectl.8.gz usr/share/man/man7/collapse_ext_ops.7.gz \
	 usr/share/man/man7/collapse-ext-policies.7.gz usr/share/man/man5/policies.conf.5.gz; do
	[ -f "$tmp/tools/$m" ] || fail "the package has no /$m"
	check_man "$tmp/tools/$m"
done
# bash completion: commands, and a command's options
comp=$tmp/tools/usr/share/bash-completion/completions/collapsectl
[ -f "$comp" ] || fail "the package has no bash completion"
c=$(bash -c '. "$1"; COMP_WORDS=(collapsectl ap); COMP_CWORD=1; _collapsectl
	echo "${COMPREPLY[*]}"; COMP_WORDS=(collapsectl apply --c); COMP_CWORD=2
	_collapsectl; echo "${COMPREPLY[*]}"' sh "$comp") || fail "bash completion: $c"
[ "$c" = "$(printf 'apply\n--check')" ] || fail "bash completion completes 'ap' and 'apply --c' as '$c'"
done_list="$done_list; unpacked: --version, 4 man pages clean, bash completion"

# 3. installed (root only)
if [ "$(id -u)" = 0 ]; then
	if dpkg-query -W -f='${Status}' "$PKG" 2>/dev/null | grep -q 'ok installed'; then
		step "$PKG is installed already: upgrading it in place and keeping it"
	elif [ "${KEEP_INSTALLED:-0}" != 1 ]; then
		purge=1
	fi
	step "apt-get install $TOOLS"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		--allow-downgrades "$TOOLS" > "$tmp/apt" 2>&1; then
		tail -n 15 "$tmp/apt" | sed 's/^/    /'
		fail "apt-get install $(basename "$TOOLS") failed"
	fi
	v=$(/usr/sbin/collapsectl --version) || fail "/usr/sbin/collapsectl --version failed"
	case "$v" in "collapsectl $upstream "*) ;; *) fail "/usr/sbin/collapsectl --version says '$v'" ;; esac
	out=$(dpkg --verify "$PKG" 2>&1) || fail "dpkg --verify $PKG: $out"
	[ -z "$out" ] || fail "dpkg --verify $PKG: $out"
	for p in collapsectl.8 collapse_ext_ops.7 collapse-ext-policies.7 policies.conf.5; do
		sec=${p##*.}
		f=$(man -w "$sec" "${p%.*}" 2>/dev/null) || fail "man -w $sec ${p%.*} finds no page"
		check_man "$f"
	done
	for f in /etc/collapse_ext/policies.conf /etc/default/collapse-ext \
		 /usr/lib/collapse_ext/bpf/passthrough.bpf.o /usr/libexec/collapse_ext/collapse_demo; do
		[ -f "$f" ] || fail "$f is not installed"
	done
	# nothing active in the example configuration
	if grep -Ev '^[[:space:]]*(#|$)' /etc/collapse_ext/policies.conf >/dev/null; then
		fail "/etc/collapse_ext/policies.conf has an active line"
	fi
	done_list="$done_list; installed: --version, man -w, dpkg --verify"
	# the autopkgtest (debian/tests), run directly, as nobody
	step "debian/tests/offline-check as nobody"
	# its own scratch directory: nobody cannot reach into $tmp (0700)
	atmp=$(mktemp -d "${TMPDIR:-/tmp}/collapse_ext-autopkgtest.XXXXXX")
	chmod 777 "$atmp"
	if ! out=$(AUTOPKGTEST_TMP=$atmp setpriv --reuid=65534 --regid=65534 \
		--clear-groups sh "$(dirname "$0")/debian/tests/offline-check" 2>&1); then
		rm -rf "$atmp"
		printf '%s\n' "$out" | tail -n 15 | sed 's/^/    /'
		fail "debian/tests/offline-check"
	fi
	rm -rf "$atmp"
	done_list="$done_list, autopkgtest offline-check"
	units="/lib/systemd/system/collapse-ext.service /lib/systemd/system/collapse-ext-metrics.service
	       /lib/systemd/system/collapse-ext-metrics.timer"
	if command -v systemd-analyze >/dev/null 2>&1; then
		set +e
		out=$(SYSTEMD_LOG_LEVEL=warning systemd-analyze verify $units 2>&1)
		src=$?
		set -e
		mine=$(printf '%s\n' "$out" | grep -F 'collapse-ext' || true)
		if [ "$src" != 0 ] || [ -n "$mine" ]; then
			printf '%s\n' "$out" | sed 's/^/    /'
			fail "systemd-analyze verify $units"
		fi
		done_list="$done_list, units verified"
		# the sandboxes: systemd's exposure score, at most 2.0 (0 best, 10 worst)
		scores=""
		for unit in $units; do
			case $unit in *.service) ;; *) continue ;; esac
			score=$(systemd-analyze security --offline=true --no-pager "$unit" 2>&1 |
				sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
			[ -n "$score" ] || fail "systemd-analyze security $unit printed no exposure level"
			awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' ||
				fail "systemd-analyze security $unit: exposure $score, above 2.0"
			scores="$scores $(basename "$unit") $score"
		done
		done_list="$done_list, security exposure:$scores"
	else
		step "no systemd-analyze: the unit is not verified (ensure-deps.sh test-deb installs systemd)"
		done_list="$done_list, unit NOT verified (no systemd-analyze)"
	fi
else
	step "not root: the package is not installed (run as root for the install checks)"
	done_list="$done_list; not installed (not root)"
fi

# 4. the packaged kernel under QEMU
image=$(ls "$DEBDIR"/linux-image-*.deb 2>/dev/null | grep -v -- '-dbg_' | head -n 1 || true)
[ -n "$image" ] || fail "no linux-image-*.deb in $DEBDIR (make deb)"
dpkg-deb -x "$image" "$tmp/kernel"
vmlinuz=$(ls "$tmp"/kernel/boot/vmlinuz-* 2>/dev/null | head -n 1 || true)
[ -n "$vmlinuz" ] || fail "$(basename "$image") has no boot/vmlinuz-*"
kver=$(dpkg-deb -f "$image" Version)
build=${kver##*-}
step "booting $(basename "$image") ($(basename "$vmlinuz")) under QEMU"
log=$DEBDIR/test-deb-boot.log
set +e
BZIMAGE=$vmlinuz selftests/vm/run --timeout 300 --log "$log" -- sh -c '
	set -e
	echo "uname: $(uname -r) $(uname -v)"
	collapsectl --version
	collapsectl version --check
	collapsectl load /usr/share/collapse_ext/bpf/passthrough.bpf.o
	collapsectl list | grep "^passthrough "
	collapsectl stats passthrough | grep -w ranges_scanned
	collapsectl unload passthrough
	! collapsectl list | grep "^passthrough "
	echo TEST_DEB_GUEST_OK' > "$tmp/boot" 2>&1
brc=$?
set -e
if [ "$brc" != 0 ] || ! grep -q '^TEST_DEB_GUEST_OK' "$tmp/boot"; then
	tail -n 25 "$tmp/boot" | sed 's/^/    /'
	fail "the packaged kernel did not boot and run collapsectl (exit status $brc; console: $log)"
fi
selftests/vm/kernel-problems "$log" ||
	fail "the packaged kernel reported problems on the console ($log)"
grep -E '^(uname|collapsectl|passthrough|NAME|name)' "$tmp/boot" | sed 's/^/    /' || true
uname_v=$(sed -n 's/^uname: [^ ]* \(#[0-9]*\) .*/\1/p' "$tmp/boot" | head -n 1)
[ "$uname_v" = "#$build" ] ||
	fail "the guest ran kernel build $uname_v, the package holds build #$build: not the packaged kernel"
done_list="$done_list; $(basename "$image") booted (build #$build): load, list, unload"

# 5. the package's life under systemd, on the packaged kernel
if [ "$(id -u)" = 0 ]; then
	guest=$(dirname "$TOOLS")/guest/systemd-root.cpio.gz
	step "the systemd guest ($guest)"
	loader/deb/guest-root.sh "$guest" || fail "could not build the systemd guest"
	# the upgrade: the same package with a higher version
	dpkg-deb -R "$TOOLS" "$tmp/upgrade"
	sed -i "s/^Version: .*/&.1/" "$tmp/upgrade/DEBIAN/control"
	dpkg-deb -b --root-owner-group "$tmp/upgrade" "$tmp/upgrade.deb" >/dev/null
	step "booting $(basename "$vmlinuz") with systemd: install, service, upgrade, remove, purge"
	log=$DEBDIR/test-deb-systemd.log
	set +e
	BZIMAGE=$vmlinuz VM_CMDLINE="systemd.show_status=error" selftests/vm/run --timeout 900 \
		--log "$log" --initrd "$guest" --add "$TOOLS:/root/tools.deb" \
		--add "$tmp/upgrade.deb:/root/upgrade.deb" \
		--add loader/deb/test-deb-guest.sh:/root/test-deb-guest.sh \
		-- sh /root/test-deb-guest.sh /root/tools.deb /root/upgrade.deb > "$tmp/systemd" 2>&1
	src=$?
	set -e
	sed 's/\x1b\[[0-9;]*m//g' "$tmp/systemd" | grep -E '^(not )?ok |^# ' | sed 's/^/    /'
	if [ "$src" != 0 ] || ! grep -q '^# TEST_DEB_SYSTEMD_OK' "$tmp/systemd"; then
		fail "the package's life under systemd (exit status $src; console: $log)"
	fi
	selftests/vm/kernel-problems "$log" ||
		fail "the packaged kernel reported problems on the console ($log)"
	# 6. the metrics in Prometheus's own engine: promtool, from Debian's
	# prometheus package, unpacked, not installed (no server started)
	step "promtool: the shipped rules on the guest's two scrapes"
	(cd "$tmp" && apt-get download -q prometheus > "$tmp/apt-download.log" 2>&1) ||
		{ sed 's/^/    /' "$tmp/apt-download.log"
		  fail "could not download Debian's prometheus package (for promtool)"; }
	dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/prom"
	prc=0
	python3 loader/deb/prom-check.py "$tmp/prom/usr/bin/promtool" \
		"$(pwd)/loader/deb/collapse_ext.rules.yml" "$tmp/systemd" "$tmp" \
		> "$tmp/prom-check.out" 2>&1 || prc=$?
	sed 's/^/    /' "$tmp/prom-check.out"
	[ "$prc" = 0 ] || fail "the shipped Prometheus rules on the guest's metrics (above)"
	npoints=$(grep -c '^ok ' "$tmp/systemd")
	done_list="$done_list; under systemd: $npoints checks (install, service follows a restarting unit, bad reload, upgrade, its restart keeping the policies and its stop detaching them, remove, purge); promtool: the shipped rules on two scrapes"
else
	step "not root: the systemd guest is not run"
	done_list="$done_list; systemd guest NOT run (not root)"
fi

echo "test-deb: PASS in $(($(date +%s) - t0)) s: $done_list"
