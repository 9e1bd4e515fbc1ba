#!/bin/sh
# Run COMMAND with policy FILE attached at the root, then detach it. Fails
# when COMMAND fails, and when the kernel never consulted the policy
# (calls_pte_limits 0): a baseline run that never reached the hooks
# proves nothing.
# Usage: with_policy.sh FILE.bpf.o COMMAND [ARG...]
file=$1
shift
collapsectl load "$file" --name with_policy >/dev/null || exit 1
"$@"
rc=$?
calls=$(collapsectl stats with_policy | awk '$1 == "calls_pte_limits" { print $2 }')
echo "# with_policy: $file: calls_pte_limits ${calls:-missing}" >&2
if [ "${calls:-0}" -eq 0 ]; then
	echo "# with_policy: the kernel never asked $file: not a baseline run" >&2
	rc=1
fi
collapsectl unload with_policy >/dev/null || rc=1
exit $rc
