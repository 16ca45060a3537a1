#!/usr/bin/env bash
# Acceptance: the layout study (docs/layouts.md) runs as documented, and what the page reads from
# it still holds: `xattn sweep scenarios/layouts-sweep.yaml` completes its 6 points with every
# invariant held; fetch beats always-route by over 1.7x on every layout and placement and the
# predicate keeps within 5% of fetch; with the holders near, routed steps are fastest on NVL72 and
# slowest on the classic leaf/spine; `xattn plan scenarios/layouts-plan.yaml` finds 2, 2 and 1
# decode GPUs for the 40 ms p99 SLO on the classic, rail and NVL72 layouts under always-route and
# 2, 2 and 1 under the predicate, each size meeting it while the next smaller fails; the plan's
# report draws every evaluation in size order against the SLO; docs/layouts.md's tables of the sweep
# and the plan are these runs' figures.
# Usage: layouts_test.sh XATTN
set -euo pipefail
xattn=$1
here=$(cd "$(dirname "$0")" && pwd)
scen=$here/../../scenarios
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$xattn" sweep "$scen/layouts-sweep.yaml" --out "$work/sweep" --quiet
"$xattn" plan "$scen/layouts-plan.yaml" --out "$work/plan" --quiet >"$work/plan.out"

/usr/bin/python3 - "$work/sweep/results.csv" "$work/plan/plan.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 24, "6 points x 4 policies, got %d rows" % len(rows)
assert all(r["invariants_ok"] == "true" for r in rows), "an invariant failed"
mean = {}
for r in rows:
    near = "node1" in r["instances.holders"]
    mean[(r["topology"], near, r["policy"])] = float(r["step_mean_s"])
layouts = ["b200-leafspine-512", "b200-rail-512", "gb200-nvl72-576"]
for t in layouts:
    for near in (True, False):
        route, fetch, pred = (mean[(t, near, p)] for p in ("route", "fetch", "predicate"))
        assert route > 1.7 * fetch, "%s near=%s: route %.4g s is not 1.7x fetch %.4g s" % (t, near, route, fetch)
        assert pred < 1.05 * fetch, "%s near=%s: predicate %.4g s is not within 5%% of fetch %.4g s" % (t, near, pred, fetch)
classic, rail, nvl = (mean[(t, True, "route")] for t in layouts)
assert classic > rail > 1.2 * nvl, "near-holder route steps: classic %.4g, rail %.4g, NVL72 %.4g" % (classic, rail, nvl)

plan = json.load(open(sys.argv[2]))
smallest = {}
for e in plan["evaluations"]:
    assert e["invariants_ok"], "an invariant failed in the plan"
    k = (e["knobs"]["topology"], e["knobs"]["policy"])
    if e["meets"]:
        smallest[k] = min(smallest.get(k, 1e9), e["size"])
want = {"route": {"b200-leafspine-512": 2, "b200-rail-512": 2, "gb200-nvl72-576": 1},
        "predicate": {"b200-leafspine-512": 2, "b200-rail-512": 2, "gb200-nvl72-576": 1}}
for policy, sizes in want.items():
    for t, n in sizes.items():
        got = smallest.get((t, policy))
        assert got == n, "%s: %s needs %s decode GPUs, docs/layouts.md says %d" % (t, policy, got, n)
        below = [e for e in plan["evaluations"] if e["knobs"] == {"policy": policy, "topology": t} and e["size"] < n]
        assert n == 1 or (below and not any(e["meets"] for e in below)), "%s %s: no failing smaller size" % (t, policy)
print("route step means (near holders): classic %.2f ms, rail %.2f ms, NVL72 %.2f ms" % (classic * 1e3, rail * 1e3, nvl * 1e3))
print("decode GPUs for p99 <= 40 ms:", {p: {t: smallest[(t, p)] for t in w} for p, w in want.items()})
PY

# The plan's page opens with its answer: every evaluation against its size, the SLO as a line.
if /usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1; then
  "$xattn" report "$work/plan" >/dev/null
  grep -q "<title>xattn plan: layouts-plan</title>" "$work/plan/report.html" || { echo "FAIL: the page is not titled as a plan"; exit 1; }
  /usr/bin/python3 - "$work/plan/report/plan.csv" "$work/plan/plan.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
plan = json.load(open(sys.argv[2]))
bound = plan["slo"]["max_s"]
assert len(rows) == len(plan["evaluations"]) == 16, "plan.csv has %d rows" % len(rows)
last = {}
for r in rows:  # sizes ascending within each combination of knobs, as drawn
    size = float(r["size"])
    assert size > last.get(r["knobs"], 0), "sizes out of order in %s" % r["knobs"]
    last[r["knobs"]] = size
    value = float(r["step_latency_s.p99 (worst over seeds)"])
    meets = r["meets"] == "True"
    assert meets == (value <= bound and r["overloaded"] == "False"), "%s at %g: meets=%s against the SLO %g s" % (
        r["knobs"], size, meets, bound)
PY
fi
# The page's tables of the sweep and the plan are these runs' figures (docs/figures.tsv).
/usr/bin/python3 "$here/../../docs/figures_check.py" "$here/../.." layouts_sweep="$work/sweep/results.csv" \
  layouts_plan="$work/plan/plan.json"
echo "PASS"
