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
four=(--policy fetch --policy predicate --policy oracle --policy ski-rental)
(cd "$work" && "$xattn" run --quiet --out qbg --set engine.fetch=background "${four[@]}") ||
  { echo "FAIL: xattn run with background fetches"; exit 1; }
(cd "$work" && "$xattn" run --quiet --out pp --set profile=paper-prototype) ||
  { echo "FAIL: xattn run under paper-prototype"; exit 1; }
(cd "$work" && "$xattn" run --quiet --out ppbg --set profile=paper-prototype --set engine.fetch=background "${four[@]}") ||
  { echo "FAIL: xattn run under paper-prototype with background fetches"; exit 1; }
rc=0
(cd "$work" && "$xattn" run --quiet --out ik --set selection.index_keys=requester) 2>"$work/ik.txt" || rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: the requester's index keys should be refused (exit 2), got exit $rc"; exit 1; }
"$xattn" predict --model deepseek-v3.2 --fabric ib-same-leaf --topology testbed-ndr200 --mq 128 --ct 2048 \
  --layers 61 --blocks 32 --json >"$work/p.json" || { echo "FAIL: xattn predict"; exit 1; }

"$xattn" predict --model deepseek-v3 --fabric ib-spine --json >"$work/pv3.json"
"$xattn" predict --model deepseek-v3 --fabric ib-spine --reuse 4 --json >"$work/pv3r4.json"
# The quickstart's re-prefill of a 2,048-token chunk: one GPU of its EP 16 instance, all 61 layers.
"$xattn" predict --model deepseek-v3.2 --profile h100-ndr200-ibgda --ct 2048 --layers 61 --ep 16 --json >"$work/pq.json"
# The layout study's closed form: one 2,048-token chunk over a whole step on the B200 profile.
closed() {
  "$xattn" predict --model deepseek-v3.2 --profile b200-ndr400-ibgda --mq 128 --ct 2048 --layers 61 --json "$@"
}
closed --topology b200-leafspine-512 --fabric ib-same-leaf >"$work/pleaf.json"
closed --topology b200-leafspine-512 --fabric ib-spine >"$work/pspine.json"
closed --topology gb200-nvl72-576 --fabric nvlink >"$work/pnvl.json"
closed --topology b200-leafspine-512 --fabric ib-same-leaf --blocks 32 >"$work/pdsa.json"

# The layout study's runs are checked by sim/study/layouts_test.sh, which makes them; the capacity
# searches by docs/figures_capacity_test.sh.
/usr/bin/python3 "$src/docs/figures_check.py" "$src" q="$work/q/summary.json" a="$work/a/summary.json" \
  p="$work/p.json" qbg="$work/qbg/summary.json" pp="$work/pp/summary.json" ppbg="$work/ppbg/summary.json" ik="$work/ik.txt" pv3="$work/pv3.json" pv3r4="$work/pv3r4.json" pq="$work/pq.json" pleaf="$work/pleaf.json" pspine="$work/pspine.json" pnvl="$work/pnvl.json" pdsa="$work/pdsa.json" \
  --all=q,a,p,qbg,pp,ppbg,ik,pv3,pv3r4,pq,pleaf,pspine,pnvl,pdsa,layouts_sweep,layouts_plan,dl_sweep,dl_cmp,ls_sweep,qcap,lcap_leaf,lcap_rail,lcap_nvl,vs,vss
