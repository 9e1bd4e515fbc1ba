#!/bin/sh
# make test-deb, in the systemd guest (loader/deb/guest-root.sh) booted on
# the packaged kernel: collapse-ext-tools' life on a host, as an operator
# meets it. TAP on stdout; the exit status is the number of failures.
#
# Usage (in the guest): test-deb-guest.sh TOOLS.deb UPGRADE.deb
#   UPGRADE.deb is TOOLS.deb with a higher version (test-deb.sh repacks it).
#
#  1. apt-get install: nothing enabled, nothing started, nothing attached;
#  2. a policy on a service that is not running yet: pending, then attached
#     to the service's cgroup (systemd's ControlGroup, while a directory of
#     the same name exists elsewhere) when it starts (collapse-ext.service, enabled
#     and started), and again after the service restarts (a new cgroup: the
#     kernel detaches the policy and logs it, the service attaches it again);
#  3. a reload with a file that does not verify fails and changes nothing;
#  4. apt-get install of the upgrade: the service reloaded (the new
#     collapsectl runs in the same process), the policy never detached;
#     systemctl restart: the policy kept attached (its link waits in the
#     service's file descriptor store), systemctl stop: detached;
#  the metrics service writes the textfile, its timer runs once enabled;
#  5. apt-get remove: the service stopped, nothing attached or pinned, also
#     a policy loaded by hand; the conffiles stay;
#  6. apt-get purge: nothing left (files, /run/collapse_ext, the pin
#     directory, the unit).
set -u
TOOLS=$1
UPGRADE=$2
# a copy of the installed collapsectl, to look at what is attached (from
# the policies' links) after the package is removed
CTL=/tmp/collapsectl
PINS=/sys/fs/bpf/collapse_ext
CONF=/etc/collapse_ext/policies.conf
WORKLOAD=ce-workload.service
WL_CG=/sys/fs/cgroup/system.slice/$WORKLOAD
export DEBIAN_FRONTEND=noninteractive

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
# check DESCRIPTION CMD...: one test point, CMD's status
check() {
	desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
# wait_for SECONDS CMD...: CMD succeeds within SECONDS
wait_for() {
	t=$(($1 * 10))
	shift
	while [ "$t" -gt 0 ]; do
		"$@" 2>/dev/null && return 0
		sleep 0.1
		t=$((t - 1))
	done
	return 1
}
apt_install() {
	apt-get install -y -q --no-install-recommends "$@" > /tmp/apt.log 2>&1 ||
		{ sed 's/^/# /' /tmp/apt.log; return 1; }
}
# the policies attached now, one per line (none: empty)
policies() { "$CTL" list 2>/dev/null | awk 'NR > 1 { print $1 }'; }
nothing_attached() { [ -z "$(policies)" ]; }
is_attached() { policies | grep -qx "$1"; }
# pol NAME FIELD: cgroup_id or attach_time_ns of attached policy NAME
pol() {
	"$CTL" list --json | tr '{' '\n' | grep "\"name\":\"$1\"" |
		sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p"
}
no_pins() { [ -z "$(ls -A "$PINS" 2>/dev/null)" ]; }
# attached_on NAME CGROUP_DIR: NAME governs that cgroup (ids compared)
attached_on() {
	[ -d "$2" ] && [ "$(pol "$1" cgroup_id)" = "$(stat -c %i "$2")" ]
}
main_pid() { systemctl show -p MainPID --value collapse-ext.service; }
version() { dpkg-query -W -f '${Version}' collapse-ext-tools 2>/dev/null; }
is_state() { [ "$(systemctl is-active "$1")" = "$2" ]; }

echo "# kernel $(uname -r), $(systemctl --version | head -n 1)"
wait_for 60 sh -c '[ -d /run/systemd/system ]'

# 1. install
check "apt-get install $(basename "$TOOLS")" apt_install "$TOOLS"
cp /usr/sbin/collapsectl "$CTL"
v1=$(version)
check "collapsectl --version says the package's version ($v1)" \
	sh -c "collapsectl --version | grep -q '^collapsectl $v1 '"
check "collapse-ext.service is not enabled on install" \
	sh -c '[ "$(systemctl is-enabled collapse-ext.service)" = disabled ]'
check "collapse-ext.service is not started on install" is_state collapse-ext.service inactive
check "nothing attached after install" nothing_attached

# 2. a policy on a service, before and after the service starts and restarts
cat > /etc/systemd/system/$WORKLOAD <<EOF
[Unit]
Description=a workload for collapse-ext's test
[Service]
ExecStart=/bin/sleep infinity
EOF
systemctl daemon-reload
echo "web passthrough $WORKLOAD" >> "$CONF"
check "systemctl enable --now collapse-ext.service" \
	sh -c 'systemctl enable --now collapse-ext.service 2>/dev/null'
check "collapse-ext.service is active (READY=1 after the first pass)" is_state collapse-ext.service active
check "the policy of a service not started is pending, not attached" \
	eval '! is_attached web'
check "the pending line is logged as a warning" \
	wait_for 10 sh -c "journalctl -q -u collapse-ext.service -p warning | grep -q '$WORKLOAD'"
# a directory of the unit's name elsewhere, as a container's own systemd
# makes: the unit's cgroup is the one systemd names (D-Bus), not a guess
DECOY=/sys/fs/cgroup/ce-nested/system.slice/$WORKLOAD
mkdir -p $DECOY
systemctl start $WORKLOAD
check "attached to $WORKLOAD's cgroup once it starts (systemd's, not a namesake's)" \
	wait_for 30 attached_on web "$WL_CG"
cg1=$(stat -c %i "$WL_CG")
dm1=$(dmesg | grep -c 'collapse_ext: policy web detached: its cgroup')
systemctl restart $WORKLOAD
check "after a restart of $WORKLOAD, attached to its new cgroup" \
	wait_for 30 eval '[ "$(stat -c %i $WL_CG)" != "$cg1" ] && attached_on web "$WL_CG"'
check "the kernel logged the detach when the old cgroup went" \
	sh -c "[ \$(dmesg | grep -c 'collapse_ext: policy web detached: its cgroup') -gt $dm1 ]"
JD=systemd-journald.service
mkdir -p /sys/fs/cgroup/ce-nested/system.slice/$JD
check "collapsectl load --cgroup $JD finds the unit through systemd too" \
	sh -c "collapsectl load passthrough --name byunit --cgroup $JD > /dev/null"
check "... on systemd's cgroup of it" attached_on byunit /sys/fs/cgroup/system.slice/$JD
collapsectl unload byunit > /dev/null
rmdir /sys/fs/cgroup/ce-nested/system.slice/$JD $DECOY
rmdir /sys/fs/cgroup/ce-nested/system.slice /sys/fs/cgroup/ce-nested

# 3. a reload with a bad file
cp "$CONF" /tmp/good.conf
pin1=$(stat -c %i "$PINS/web")
echo "broken no_such_policy /" >> "$CONF"
check "systemctl reload fails on a file that does not verify" \
	sh -c '! systemctl reload collapse-ext.service 2>/dev/null'
check "... and changes nothing (the same pin, still attached, nothing added)" \
	eval '[ "$(stat -c %i $PINS/web)" = "$pin1" ] && is_attached web && ! is_attached broken'
cp /tmp/good.conf "$CONF"
check "collapse-ext.service is still active" is_state collapse-ext.service active

# 4. upgrade: a reload, not a restart (nothing detached meanwhile)
pid1=$(main_pid)
att1=$(pol web attach_time_ns)
check "apt-get install $(basename "$UPGRADE") (an upgrade)" apt_install "$UPGRADE"
v2=$(version)
check "the package is upgraded ($v1 -> $v2)" sh -c "[ '$v2' != '$v1' ]"
check "the upgrade reloaded collapse-ext.service: the new collapsectl runs (same main PID $pid1)" \
	wait_for 30 sh -c "journalctl -q -u collapse-ext.service | grep -q 'SIGHUP: running /usr/sbin/collapsectl again' &&
			   [ \$(systemctl show -p MainPID --value collapse-ext.service) = $pid1 ]"
check "collapse-ext.service is active after the upgrade" is_state collapse-ext.service active
check "the policy stayed attached across the upgrade (the same attach time)" \
	eval '[ "$(pol web attach_time_ns)" = "$att1" ]'

# a restart keeps the policies attached: their links wait in systemd's file
# descriptor store while the service restarts (two of them: systemd tells
# BPF links apart with kcmp()); a stop closes the store
slice() {
	systemctl set-property --runtime "$1" MemoryAccounting=yes
	systemctl start "$1"
}
slice ce-keep.slice
echo "keep frugal ce-keep.slice" >> "$CONF"
systemctl reload collapse-ext.service
check "a second policy, on a slice" wait_for 10 is_attached keep
att2=$(pol web attach_time_ns)
attk=$(pol keep attach_time_ns)
check "systemctl restart collapse-ext.service" systemctl restart collapse-ext.service
check "both policies stayed attached across the restart (the same attach times, pinned again)" \
	eval '[ "$(pol web attach_time_ns)" = "$att2" ] && [ -e $PINS/web ] &&
	      [ "$(pol keep attach_time_ns)" = "$attk" ] && [ -e $PINS/keep ]'
check "the restarted service took its link back out of the store" \
	sh -c '[ "$(systemctl show -p NFileDescriptorStore --value collapse-ext.service)" = 0 ]'
check "the journal says the link was kept" \
	sh -c "journalctl -q -u collapse-ext.service | grep -q 'web: kept attached over the restart'"
systemctl stop collapse-ext.service
check "systemctl stop detaches the policies (the store closed)" \
	wait_for 10 eval '! is_attached web && ! is_attached keep'
check "... and leaves no pin" sh -c "! [ -e $PINS/web ] && ! [ -e $PINS/keep ]"
systemctl start collapse-ext.service
check "systemctl start attaches it again" wait_for 30 attached_on web "$WL_CG"

# the counters for the node exporter, by the timer's service, into a
# directory root does not own (as prometheus-node-exporter's)
PROM=/var/lib/prometheus/node-exporter
mkdir -p $PROM
chown 65534:65534 $PROM
check "collapse-ext-metrics.service writes the attached policy to collapse_ext.prom" \
	sh -c "systemctl start collapse-ext-metrics.service &&
	       grep -q '^collapse_ext_policy_attached{policy=\"web\"} 1' $PROM/collapse_ext.prom"
journalctl -q -u collapse-ext-metrics.service | tail -n 5 | sed 's/^/# metrics journal: /'
rm -f $PROM/collapse_ext.prom
check "systemctl enable --now collapse-ext-metrics.timer" \
	sh -c 'systemctl enable --now collapse-ext-metrics.timer 2>/dev/null'
check "the timer writes it again within 40 s" wait_for 40 test -s $PROM/collapse_ext.prom

# What Prometheus gets: two scrapes of the textfile, around two demo
# workloads under frugal and eager (one slice each, loaded by hand) with a
# line pending (a unit not started), and what collapsectl stats says then;
# the host evaluates the shipped rules and the queries on them with
# promtool (loader/deb/prom-check.py)
scrape() {
	systemctl start collapse-ext-metrics.service
	echo "@@PROM-BEGIN $1@@"
	cat $PROM/collapse_ext.prom
	echo "@@PROM-END $1@@"
}
echo "late passthrough ce-late.service" >> "$CONF"
systemctl reload collapse-ext.service
for p in frugal eager; do
	slice ce-demo-$p.slice
	collapsectl load $p --name demo_$p --cgroup ce-demo-$p.slice > /dev/null
done
check "two demo policies and a pending line for the scrapes" \
	sh -c "[ \"\$(grep -c '^late pending' /run/collapse_ext/expected)\" = 1 ]" 
scrape 1
for p in frugal eager; do
	# in a cgroup of its own below the slice (systemd-run needs D-Bus,
	# which the guest does not run)
	d=/sys/fs/cgroup/ce.slice/ce-demo.slice/ce-demo-$p.slice/ce-run
	mkdir -p $d
	sh -c "echo \$\$ > $d/cgroup.procs && exec /usr/libexec/collapse_ext/collapse_demo \
		--size 16 --sparse 25 --walk 1000" 2>&1 | sed "s/^/# demo under $p: /"
	rmdir $d
done
scrape 2
echo "@@STATS-BEGIN@@"
collapsectl -j stats
echo
echo "@@STATS-END@@"
check "the demo under frugal had collapses fail and succeed, under eager succeed" \
	sh -c "collapsectl -j stats demo_frugal | grep -q '\"collapse_failed\":[1-9]' &&
	       collapsectl -j stats demo_eager | grep -q '\"collapse_succeeded\":[1-9]'"
for p in frugal eager; do
	collapsectl unload demo_$p > /dev/null
	systemctl stop ce-demo-$p.slice
done
cp /tmp/good.conf "$CONF"
systemctl reload collapse-ext.service

# 5. remove, with a policy loaded by hand beside the service's
check "collapsectl load frugal.bpf.o --name manual" \
	sh -c 'collapsectl load /usr/lib/collapse_ext/bpf/frugal.bpf.o --name manual > /dev/null'
check "two policies attached" eval '[ "$(policies | wc -l)" = 2 ]'
check "apt-get remove collapse-ext-tools" sh -c 'apt-get remove -y -q collapse-ext-tools > /tmp/apt.log 2>&1'
check "collapse-ext.service and the metrics timer are stopped" \
	sh -c '! systemctl is-active -q collapse-ext.service && ! systemctl is-active -q collapse-ext-metrics.timer'
check "nothing attached after remove (the manual policy too)" wait_for 10 nothing_attached
check "nothing pinned after remove" no_pins
check "collapsectl is gone" sh -c '! [ -e /usr/sbin/collapsectl ]'
check "the conffiles stay" sh -c "[ -f $CONF ] && [ -f /etc/default/collapse-ext ]"

# 6. purge
check "apt-get purge collapse-ext-tools" sh -c 'apt-get purge -y -q collapse-ext-tools > /tmp/apt.log 2>&1'
check "no conffile left" sh -c '! [ -e /etc/collapse_ext ] && ! [ -e /etc/default/collapse-ext ]'
check "no /run/collapse_ext, no pin directory" sh -c "! [ -e /run/collapse_ext ] && ! [ -e $PINS ]"
check "dpkg knows nothing of it" sh -c '! dpkg-query -W -f "\${Status}" collapse-ext-tools 2>/dev/null | grep -q installed'
check "systemd has none of the package's units" \
	sh -c '! systemctl cat collapse-ext.service > /dev/null 2>&1 && ! systemctl cat collapse-ext-metrics.timer > /dev/null 2>&1'
check "nothing attached after purge" nothing_attached

echo "1..$n"
[ "$failed" = 0 ] && echo "# TEST_DEB_SYSTEMD_OK" || echo "# $failed of $n failed"
journalctl -q -u collapse-ext.service --no-pager | tail -n 20 | sed 's/^/# journal: /'
exit "$failed"
