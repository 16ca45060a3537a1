#!/usr/bin/env bash
# Acceptance: `xattn capacity` on a 100-request cut of the quickstart, route and fetch, with a
# 30 ms mean-TPOT SLO. Each policy's answer is checked again here from its probe's own
# summary.json, independently of the search: the policy keeps up there (delivered share of the
# offered output tokens at least 1 - engine.overload_tolerance, as capacity.json states it) and meets the
# SLO; the next load up, its evidence, fails one of the two; the two are within the precision.
# Then `xattn report` on the capacity folder (skipped without python3-matplotlib): a page titled
# with the scenario, one figure, and report/capacity_probes.csv holding every probe.
# Usage: capacity_cli_test.sh XATTN
set -euo pipefail
xattn=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$xattn" capacity "$here/../../scenarios/quickstart.yaml" --policy route --policy fetch --quiet \
  --set workload.generator.requests=100 --slo tpot_s.mean=30ms --precision 0.2 --out "$work/cap" | tee "$work/out"
grep -q "^verdict: " "$work/out" || { echo "FAIL: no verdict"; exit 1; }

/usr/bin/python3 - "$work/cap/capacity.json" <<'PY'
import json, os, sys
c = json.load(open(sys.argv[1]))
def judged(policy, probe):
    s = json.load(open(os.path.join(probe["dir"], "summary.json")))["policies"][policy]
    keeps_up = s["load"]["steady_delivered_share"] >= 1 - c["overload_tolerance"]
    return keeps_up, s["tpot_s"]["mean"] <= 0.030
for policy in ("route", "fetch"):
    p = c["policies"][policy]
    a, n = p["answer"], p["next"]
    assert a and n, "%s: an answer and the failing load above it" % policy
    assert judged(policy, a) == (True, True), "%s: the answer at %gx must keep up and meet the SLO" % (policy, a["load"])
    assert judged(policy, n) != (True, True), "%s: the next load up, %gx, must fail" % (policy, n["load"])
    assert n["overloaded"] == (not judged(policy, n)[0]), "%s: the overload flag is the summary's" % policy
    assert 1 < n["load"] / a["load"] <= 1.2 + 1e-9, "%s: the bracket is within the precision" % policy
    print("%s: %gx meets, %gx fails (%s)" % (policy, a["load"], n["load"], n["why"]))
PY

if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  echo "SKIP: Debian's python3-matplotlib is not installed (the search itself passed)"
  exit 77
fi
"$xattn" report "$work/cap" >/dev/null
grep -q "<title>xattn capacity: quickstart</title>" "$work/cap/report.html" || { echo "FAIL: the page's title"; exit 1; }
[ "$(grep -o "data:image/png;base64" "$work/cap/report.html" | wc -l)" -eq 1 ] || { echo "FAIL: one figure expected"; exit 1; }
/usr/bin/python3 - "$work/cap" <<'PY'
import csv, json, os, sys
c = json.load(open(os.path.join(sys.argv[1], "capacity.json")))
rows = list(csv.DictReader(open(os.path.join(sys.argv[1], "report", "capacity_probes.csv"))))
assert len(rows) == sum(len(p["probes"]) for p in c["policies"].values()), "one row per probe"
PY
echo "PASS"
