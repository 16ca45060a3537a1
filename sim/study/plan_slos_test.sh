#!/usr/bin/env bash
# `xattn plan` with two bounds at once, a TTFT and a TPOT one, on the shipped agentic scenario
# (each decode GPU through its own NIC on NDR-200). The answer must meet both and the next smaller
# configuration fail one; both are then simulated again here with plain `xattn run` and judged
# from their own summary.json. The TTFT bound alone must give a smaller answer: here the TPOT
# bound is the one that sizes the fleet, so a planner that ignored it would be caught.
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

/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
both, ttft = (json.load(open("%s/%s/plan.json" % (work, n))) for n in ("both", "ttft"))
assert both["slo"]["also"] == [{"metric": "tpot_s.p99", "max_s": 0.01}], both["slo"]
a, b = both["answer"], both["next_smaller"]
assert a and b and a["meets"] and not b["meets"], "an answer that meets and a smaller one that fails"
assert ttft["answer"]["size"] < a["size"], "the TPOT bound must be the one that sizes the fleet here"
key = both["size_key"]
for name, e in (("answer", a), ("smaller", b)):
    open("%s/%s.set" % (work, name), "w").write("%s=%s\n" % (key, e[key]))
PY
for name in answer smaller; do
  "$xattn" run "$scen/agentic-capacity.yaml" --out "$work/$name" --quiet --policy predicate --set "$(cat "$work/$name.set")"
done
/usr/bin/python3 - "$work" "$ttft" "$tpot" <<'PY'
import json, sys
work, ttft, tpot = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
def meets(name):
    p = json.load(open("%s/%s/summary.json" % (work, name)))["policies"]["predicate"]
    print(name, "TTFT p99", p["ttft_s"]["p99"], "TPOT p99", p["tpot_s"]["p99"])
    return p["ttft_s"]["p99"] <= ttft and p["tpot_s"]["p99"] <= tpot and not p["load"]["overloaded"]
assert meets("answer"), "FAIL: the answer misses a bound"
assert not meets("smaller"), "FAIL: the next smaller configuration meets both bounds"
PY
echo "PASS"
