#!/usr/bin/env bash
# `xattn plan` over a disaggregated fleet (scenarios/disaggregated-plan.yaml): the smallest
# prefill pool (instances.prefill.gpus) for each decode pool that keeps the predicate's p99 TTFT
# and TPOT within their bounds, both bounds given. The answer and the next smaller configuration
# are simulated again with plain `xattn run` and judged by the plan's own bounds (plan_rerun.sh),
# and in both every prompt must have been handed off from the prefill pool.
# Usage: plan_disaggregated_test.sh XATTN
set -euo pipefail
xattn=$1
here=$(cd "$(dirname "$0")" && pwd)
scen=$here/../../scenarios
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$xattn" plan "$scen/disaggregated-plan.yaml" --out "$work/plan" --quiet >"$work/plan.out"
/usr/bin/python3 - "$work" <<'PY'
import json, sys
plan = json.load(open("%s/plan/plan.json" % sys.argv[1]))
assert plan["size_key"] == "instances.prefill.gpus", plan["size_key"]
assert len(plan["slo"]["also"]) == 1, plan["slo"]
PY
bash "$here/plan_rerun.sh" "$xattn" "$work/plan" "$scen/disaggregated.yaml"
/usr/bin/python3 - "$work" <<'PY'
import json, sys
for name in ("answer", "smaller"):
    p = json.load(open("%s/plan/rerun-%s/summary.json" % (sys.argv[1], name)))["policies"]["predicate"]
    assert p["prefill"]["handoffs"] == p["requests"], "every prompt handed off"
PY
echo "PASS"
