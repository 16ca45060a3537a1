#!/usr/bin/env bash
# Acceptance: the layout study (docs/layouts.md) runs as documented, and what the page reads from
# it still holds: `xattn sweep scenarios/layouts-sweep.yaml` completes its 6 points with every
# invariant held; route beats fetch on every layout and placement; with the holders near, routed
# steps are fastest on NVL72 and slowest on the classic leaf/spine; `xattn plan
# scenarios/layouts-plan.yaml` finds 8, 4 and 2 decode GPUs for the 40 ms p99 SLO on the classic,
# rail and NVL72 layouts, each size meeting it while the next smaller fails, and the predicate
# meets it on none.
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
        route, fetch = mean[(t, near, "route")], mean[(t, near, "fetch")]
        assert fetch > 100 * route, "%s near=%s: fetch %.4g s is not 100x route %.4g s" % (t, near, fetch, route)
classic, rail, nvl = (mean[(t, True, "route")] for t in layouts)
assert classic > 1.5 * rail and rail > 3 * nvl, "near-holder route steps: classic %.4g, rail %.4g, NVL72 %.4g" % (classic, rail, nvl)

plan = json.load(open(sys.argv[2]))
smallest = {}
for e in plan["evaluations"]:
    assert e["invariants_ok"], "an invariant failed in the plan"
    k = (e["knobs"]["topology"], e["knobs"]["policy"])
    if e["meets"]:
        smallest[k] = min(smallest.get(k, 1e9), e["size"])
want = {"b200-leafspine-512": 8, "b200-rail-512": 4, "gb200-nvl72-576": 2}
for t, n in want.items():
    assert smallest.get((t, "route")) == n, "%s: route needs %s decode GPUs, docs/layouts.md says %d" % (t, smallest.get((t, "route")), n)
    below = [e for e in plan["evaluations"] if e["knobs"] == {"policy": "route", "topology": t} and e["size"] < n]
    assert below and not any(e["meets"] for e in below), "%s: no failing smaller size shown" % t
    assert (t, "predicate") not in smallest, "%s: the predicate meets the SLO" % t
print("route step means (near holders): classic %.2f ms, rail %.2f ms, NVL72 %.2f ms" % (classic * 1e3, rail * 1e3, nvl * 1e3))
print("decode GPUs for p99 <= 40 ms on route:", {t: smallest[(t, "route")] for t in want})
PY
echo "PASS"
