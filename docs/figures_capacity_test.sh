#!/usr/bin/env bash
# The load figures README.md and docs/layouts.md quote (docs/figures.tsv, sources qcap and lcap_*)
# are what `xattn capacity` finds today. `quickstart`: the README's (about 30 s, the integration
# tier); `layouts`: docs/layouts.md's three layouts (about a minute, the long tier: sim/bench/long.tsv).
# Usage: figures_capacity_test.sh XATTN SOURCE_DIR quickstart|layouts
set -euo pipefail
xattn=$1
src=$2
part=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/xattn-figures.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"

case "$part" in
  quickstart)
    "$xattn" capacity --policy route --policy fetch --quiet --out qcap >/dev/null
    /usr/bin/python3 "$src/docs/figures_check.py" "$src" qcap=qcap/capacity.json
    ;;
  layouts)
    for t in leaf:b200-leafspine-512 rail:b200-rail-512 nvl:gb200-nvl72-576; do
      "$xattn" capacity "$src/scenarios/layouts.yaml" --set "topology=${t#*:}" --policy route --policy fetch --quiet \
        --out "lcap_${t%%:*}" >/dev/null
    done
    /usr/bin/python3 "$src/docs/figures_check.py" "$src" lcap_leaf=lcap_leaf/capacity.json \
      lcap_rail=lcap_rail/capacity.json lcap_nvl=lcap_nvl/capacity.json
    ;;
  *)
    echo "figures_capacity_test.sh: quickstart or layouts, not '$part'"
    exit 2
    ;;
esac
