#!/usr/bin/env bash
# `xattn plan` with two bounds at once, a TTFT and a TPOT one, on the shipped agentic scenario
# (each decode GPU through its own NIC on NDR-200). The answer must meet both and the next smaller
# configuration fail one; both are then simulated again with plain `xattn run` and judged from
# their own summary.json by the plan's bounds (plan_rerun.sh). The TTFT bound alone must give a
# smaller answer: here the TPOT bound is the one that sizes the fleet, so a planner that ignored it
# would be caught.
# Usage: plan_slos_test.sh XATTN
set -euo pipefail
xattn=$1
here=$(cd "$(dirname "$0")" && pwd)
scen=$here/../../scenarios
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ttft=0.030 tpot=0.010
sets=(--set slo.metric=ttft_s.p99 --set "slo.max=${ttft}s" --set "knobs={engine.requester_nics: [own]}")

"$xattn" plan "$scen/agentic-capacity-plan.yaml" "${sets[@]}" --set "slo.also=[{metric: tpot_s.p99, max: ${tpot}s}]" \
  --out "$work/both" --quiet | tee "$work/both.out"
grep -q "with ttft_s.p99 of predicate <= 30ms and tpot_s.p99 of predicate <= 10ms" "$work/both.out" ||
  { echo "FAIL: the SLO line does not name both bounds"; exit 1; }
"$xattn" plan "$scen/agentic-capacity-plan.yaml" "${sets[@]}" --out "$work/ttft" --quiet >"$work/ttft.out"

/usr/bin/python3 - "$work" "$ttft" "$tpot" <<'PY'
import json, sys
work, ttft_max, tpot_max = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
both, ttft = (json.load(open("%s/%s/plan.json" % (work, n))) for n in ("both", "ttft"))
assert both["slo"]["also"] == [{"metric": "tpot_s.p99", "max_s": tpot_max}], both["slo"]
assert both["slo"]["metric"] == "ttft_s.p99" and both["slo"]["max_s"] == ttft_max, both["slo"]
assert ttft["answer"]["size"] < both["answer"]["size"], "the TPOT bound must be the one that sizes the fleet here"
PY
bash "$here/plan_rerun.sh" "$xattn" "$work/both" "$scen/agentic-capacity.yaml"
echo "PASS"
