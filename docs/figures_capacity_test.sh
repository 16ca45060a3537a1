#!/usr/bin/env bash
# The load figures README.md and docs/layouts.md quote (docs/figures.tsv, sources qcap and lcap_*)
# are what `xattn capacity` finds today. Minutes of simulation: the long tier (sim/bench/long.tsv).
# Usage: figures_capacity_test.sh XATTN SOURCE_DIR
set -euo pipefail
xattn=$1
src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/xattn-figures.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

"$xattn" capacity --policy route --policy fetch --quiet --out qcap >/dev/null
for t in leaf:b200-leafspine-512 rail:b200-rail-512 nvl:gb200-nvl72-576; do
  "$xattn" capacity "$src/scenarios/layouts.yaml" --set "topology=${t#*:}" --policy route --policy fetch --quiet \
    --out "lcap_${t%%:*}" >/dev/null
done
/usr/bin/python3 "$src/docs/figures_check.py" "$src" qcap=qcap/capacity.json lcap_leaf=lcap_leaf/capacity.json \
  lcap_rail=lcap_rail/capacity.json lcap_nvl=lcap_nvl/capacity.json
