#!/usr/bin/env bash
# Shared by the plan tests: the plan written to PLAN_DIR answered with a configuration and named
# the next smaller one. Both are simulated again here with plain `xattn run SCENARIO` under the
# plan's policy and judged from their own summary.json by the plan's own bounds (plan.json's slo):
# the answer must meet every bound and keep up with the load, the next smaller must not. The runs
# stay in PLAN_DIR/rerun-answer and PLAN_DIR/rerun-smaller for the caller's own checks.
# Usage: plan_rerun.sh XATTN PLAN_DIR SCENARIO
set -euo pipefail
xattn=$1 plan=$2 scenario=$3

/usr/bin/python3 - "$plan" <<'PY'
import json, sys
plan = sys.argv[1]
p = json.load(open("%s/plan.json" % plan))
a, b = p["answer"], p["next_smaller"]
assert a and b and a["meets"] and not b["meets"], "an answer that meets and a smaller one that fails"
for name, e in (("answer", a), ("smaller", b)):
    sets = ["%s=%s" % (p["size_key"], e[p["size_key"]])] + ["%s=%s" % kv for kv in e.get("knobs", {}).items()]
    open("%s/%s.set" % (plan, name), "w").write("\n".join(sets) + "\n")
open("%s/policy" % plan, "w").write(p["slo"]["policy"])
PY
for name in answer smaller; do
  args=()
  while IFS= read -r s; do args+=(--set "$s"); done <"$plan/$name.set"
  "$xattn" run "$scenario" --out "$plan/rerun-$name" --quiet --policy "$(cat "$plan/policy")" "${args[@]}"
done
/usr/bin/python3 - "$plan" <<'PY'
import json, sys
plan = sys.argv[1]
slo = json.load(open("%s/plan.json" % plan))["slo"]
bounds = [(slo["metric"], slo["max_s"])] + [(b["metric"], b["max_s"]) for b in slo.get("also") or []]
def meets(name):
    p = json.load(open("%s/rerun-%s/summary.json" % (plan, name)))["policies"][slo["policy"]]
    figures = {m: p[m.split(".")[0]][m.split(".")[1]] for m, _ in bounds}
    print(name, figures, "overloaded", p["load"]["overloaded"])
    return all(figures[m] <= x for m, x in bounds) and not p["load"]["overloaded"]
assert meets("answer"), "FAIL: the answer misses a bound"
assert not meets("smaller"), "FAIL: the next smaller configuration meets every bound"
PY
