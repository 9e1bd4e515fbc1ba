#!/bin/sh
# Run COMMAND with policy FILE attached at the root, then detach it.
# Usage: with_policy.sh FILE.bpf.o COMMAND [ARG...]
file=$1
shift
collapsectl load "$file" --name with_policy >/dev/null || exit 1
"$@"
rc=$?
collapsectl unload with_policy >/dev/null || rc=1
exit $rc
