#!/usr/bin/env bash
# Acceptance: a plan near its SLO's boundary buys a larger configuration when it asks for
# confidence. One decode request routes one 2048-token chunk; the "size" moves its holder closer:
# across the spine (1), on the same leaf (2), over NVLink in its own node (3). The bound sits 2%
# above the spine's route step: with the profile's own values the spine meets it; with
# slo.confidence: 0.95 over 16 draws from the default profile's uncertainty (probes, block rate,
# kernel), near half the spine's draws miss it and the plan must go further.
# Usage: plan_confidence_test.sh XATTN
set -euo pipefail
xattn=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/trace.jsonl" <<'T'
{"xattn_trace": 1, "source": "plan confidence test"}
{"id": 0, "t": 0, "session": 0, "agent": 0, "parent": null, "blocks": [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31], "block_tokens": 64, "in": 2048, "out": 2}
T
cat >"$work/base.yaml" <<'S'
name: near-slo
model: {name: dsv3, layers: 61, heads: 128, kv_lora_rank: 512, rope_dim: 64}
topology: testbed-ndr200
instances: {requesters: [node0.gpu0], holders: [node2.gpu3]}
corpus: {chunk_tokens: 2048}
workload: {trace: trace.jsonl}
policies: [route]
engine: {route_protocol: absorbed}
S
# The route step across the spine with the profile's own values.
"$xattn" run "$work/base.yaml" --out "$work/point" --quiet
step=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['policies']['route']['step_latency_s']['mean'])" "$work/point/summary.json")
bound=$(/usr/bin/python3 -c "print('%.6fms' % (float('$step') * 1.02 * 1e3))")
echo "spine route step $step s, bound $bound"

plan() { # plan NAME [confidence lines]
  cat >"$work/$1.yaml" <<P
name: $1
base: base.yaml
slo:
  metric: step_latency_s.mean
  max: $bound
$2
policy: route
size:
  key: instances.holders
  label: holder closeness
  values: ["[node2.gpu3]", "[node1.gpu0]", "[node0.gpu1]"]
P
  "$xattn" plan "$work/$1.yaml" --out "$work/$1" --quiet >"$work/$1.out"
  /usr/bin/python3 -c "import json,sys; print(int(json.load(open(sys.argv[1]))['answer']['size']))" "$work/$1/plan.json"
}
plain=$(plan plain "")
sure=$(plan sure "  confidence: 0.95
  draws: 16")
cat "$work/sure.out"
echo "answer without confidence: size $plain; with confidence 0.95: size $sure"
[ "$plain" -eq 1 ] || { echo "FAIL: without confidence the spine itself meets the bound"; exit 1; }
[ "$sure" -gt "$plain" ] || { echo "FAIL: with confidence the plan must pick a larger configuration"; exit 1; }
grep -q "confidence 0.95: met in at least that share of 16 profile draws" "$work/sure.out" || { echo "FAIL: the plan does not say how many draws"; exit 1; }
# A bound judged over the ensemble must be a figure every member reports: tpot_s.p99 is not
# (used for kSpread in sim/engine/figures.def), so the plan is refused before anything runs, at the key.
rc=0
"$xattn" plan "$work/sure.yaml" --set 'slo.also=[{metric: tpot_s.p99, max: 1s}]' --out "$work/refused" --quiet \
  2>"$work/refused.err" || rc=$?
[ "$rc" -eq 2 ] || { echo "FAIL: a non-ensemble figure under confidence: exit $rc, expected 2"; exit 1; }
grep -q "slo.also\[0\].metric: with confidence, a figure every ensemble member reports" "$work/refused.err" ||
  { echo "FAIL: the refusal does not name the key: $(cat "$work/refused.err")"; exit 1; }
[ ! -e "$work/refused" ] || { echo "FAIL: a refused plan left a folder"; exit 1; }
echo PASS
