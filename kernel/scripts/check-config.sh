#!/bin/sh
# Fail when a value requested by a config fragment did not survive
# olddefconfig (a missing dependency), naming the option.
# Usage: check-config.sh .config FRAGMENT...
set -eu
cfg=$1; shift
bad=0
for frag in "$@"; do
	grep -E '^CONFIG_[A-Za-z0-9_]+=' "$frag" | while IFS== read -r k v; do
		if [ "$v" = n ]; then
			if grep -q "^$k=" "$cfg"; then
				echo "check-config: $frag wants $k=n but it is $(grep "^$k=" "$cfg")" >&2
				exit 1
			fi
		elif ! grep -qx "$k=$v" "$cfg"; then
			echo "check-config: $frag wants $k=$v, .config has '$(grep -E "^(# )?$k[= ]" "$cfg" || echo unset)' (a dependency is missing)" >&2
			exit 1
		fi
	done || bad=1
done
exit $bad
