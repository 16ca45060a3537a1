#!/usr/bin/env bash
# `xattn plan` over a disaggregated fleet (scenarios/disaggregated-plan.yaml): the smallest
# prefill pool (instances.prefill.gpus) for each decode pool that keeps the predicate's p99 TTFT
# and TPOT within their bounds. The answer must meet both and the next smaller configuration fail;
# both are then simulated again with plain `xattn run` and judged, by the plan's own bounds, from
# their own summary.json, where every prompt must have been handed off.
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
work = sys.argv[1]
plan = json.load(open("%s/plan/plan.json" % work))
a, b = plan["answer"], plan["next_smaller"]
assert plan["size_key"] == "instances.prefill.gpus", plan["size_key"]
assert a and b and a["meets"] and not b["meets"], "an answer that meets and a smaller one that fails"
for name, e in (("answer", a), ("smaller", b)):
    sets = ["%s=%s" % (plan["size_key"], e[plan["size_key"]])] + ["%s=%s" % kv for kv in e.get("knobs", {}).items()]
    open("%s/%s.set" % (work, name), "w").write("\n".join(sets) + "\n")
PY
for name in answer smaller; do
  args=()
  while IFS= read -r s; do args+=(--set "$s"); done <"$work/$name.set"
  "$xattn" run "$scen/disaggregated.yaml" --out "$work/$name" --quiet --policy predicate "${args[@]}"
done
/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
slo = json.load(open("%s/plan/plan.json" % work))["slo"]
bounds = [(slo["metric"], slo["max_s"])] + [(b["metric"], b["max_s"]) for b in slo.get("also", [])]
assert len(bounds) == 2, bounds
def meets(name):
    p = json.load(open("%s/%s/summary.json" % (work, name)))["policies"]["predicate"]
    figures = {m: p[m.split(".")[0]][m.split(".")[1]] for m, _ in bounds}
    print(name, figures, "overloaded", p["load"]["overloaded"])
    assert p["prefill"]["handoffs"] == p["requests"], "every prompt handed off"
    return all(figures[m] <= x for m, x in bounds) and not p["load"]["overloaded"]
assert meets("answer"), "FAIL: the answer misses a bound"
assert not meets("smaller"), "FAIL: the next smaller configuration meets both bounds"
PY
echo "PASS"
