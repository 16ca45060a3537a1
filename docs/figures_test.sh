#!/usr/bin/env bash
# Every figure docs/figures.tsv lists from the quickstart and the closed form is what its command
# prints today: runs each source once, then checks each row (docs/figures_check.py).
# Usage: figures_test.sh XATTN SOURCE_DIR
set -euo pipefail
xattn=$1
src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/xattn-figures.XXXXXX")
trap 'rm -rf "$work"' EXIT

(cd "$work" && "$xattn" run --quiet --out q) || { echo "FAIL: xattn run (the embedded quickstart)"; exit 1; }
(cd "$work" && "$xattn" run --quiet --out a --set engine.route_protocol=absorbed --policy route --policy fetch) ||
  { echo "FAIL: xattn run with the absorbed query"; exit 1; }
"$xattn" predict --model deepseek-v3.2 --fabric ib-same-leaf --topology testbed-ndr200 --mq 128 --ct 2048 \
  --layers 61 --blocks 32 --json >"$work/p.json" || { echo "FAIL: xattn predict"; exit 1; }

# The layout study's figures are checked by sim/study/layouts_test.sh, which runs its sweep and plan.
/usr/bin/python3 "$src/docs/figures_check.py" "$src" q="$work/q/summary.json" a="$work/a/summary.json" \
  p="$work/p.json" --all=q,a,p,layouts_sweep,layouts_plan
