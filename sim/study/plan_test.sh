#!/usr/bin/env bash
# Acceptance: `xattn plan` on the shipped agentic scenario returns a configuration that meets the
# SLO while the next smaller one fails (both shown). The two configurations are then simulated
# again here, independently of the planner, with plain `xattn run`, and judged from their own
# summary.json against the plan file's bound (40 ms on the predicate's p99 step latency).
# Usage: plan_test.sh XATTN
set -euo pipefail
xattn=$1
here=$(cd "$(dirname "$0")" && pwd)
scen=$here/../../scenarios
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$xattn" plan "$scen/agentic-capacity-plan.yaml" --out "$work/plan" --quiet | tee "$work/plan.out"
grep -q "^ANSWER: decode GPUs = " "$work/plan.out" || { echo "FAIL: no answer printed"; exit 1; }
grep -q "next smaller configuration, which fails the SLO" "$work/plan.out" || { echo "FAIL: no failing neighbour shown"; exit 1; }

# The answer and its neighbour as --set lists, from plan.json.
/usr/bin/python3 - "$work/plan/plan.json" "$work" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
a, b = p["answer"], p["next_smaller"]
assert a and b, "answer and next_smaller must both be present"
assert a["meets"] and not b["meets"], "the answer must meet and the next smaller fail"
assert a["knobs"] == b["knobs"], "the neighbour differs only in size"
assert b["size"] < a["size"], "the neighbour is smaller"
key = p["size_key"]
for name, e in (("answer", a), ("smaller", b)):
    sets = ["%s=%s" % (key, e[key])] + ["%s=%s" % kv for kv in e["knobs"].items()]
    open("%s/%s.sets" % (sys.argv[2], name), "w").write("\n".join(sets) + "\n")
    print(name, e["size"], sets)
PY
p99() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['policies']['predicate']['step_latency_s']['p99'])" "$1"; }
for name in answer smaller; do
  args=()
  while read -r s; do args+=(--set "$s"); done <"$work/$name.sets"
  rc=0
  "$xattn" run "$scen/agentic-capacity.yaml" --out "$work/$name" --quiet --policy predicate "${args[@]}" || rc=$?
  # Evidence counts only from a run whose invariants hold.
  [ "$rc" -eq 0 ] || { echo "FAIL: xattn run exited $rc"; exit 1; }
  echo "$name: predicate p99 step latency $(p99 "$work/$name/summary.json") s"
done
awk -v a="$(p99 "$work/answer/summary.json")" -v b="$(p99 "$work/smaller/summary.json")" \
  'BEGIN { if (!(a <= 0.040)) { print "FAIL: the answer misses the SLO"; exit 1 }
           if (!(b > 0.040)) { print "FAIL: the next smaller configuration meets the SLO"; exit 1 } }'
echo "PASS"
