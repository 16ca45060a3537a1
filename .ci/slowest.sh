#!/usr/bin/env bash
# Lists the N slowest tests of a build folder's last ctest run, with their labels' tier, from
# CTest's own log (Testing/Temporary/LastTest.log): what to look at when a tier nears its budget.
#   .ci/slowest.sh BUILD_DIR [N]
set -euo pipefail
build=$1
n=${2:-15}
log=$build/Testing/Temporary/LastTest.log
[ -f "$log" ] || {
  echo "slowest: no $log"
  exit 0
}
echo "== the $n slowest tests ($log)"
awk '/^[0-9]+\/[0-9]+ Testing: / {name = $0; sub(/^[0-9]+\/[0-9]+ Testing: /, "", name)}
     /^Test time = / && name != "" {printf "%8.2f s  %s\n", $4, name; name = ""}' "$log" |
  sort -rn | awk -v n="$n" 'NR <= n'  # awk reads to the end: head would close the pipe on sort (SIGPIPE under pipefail)
