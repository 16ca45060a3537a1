#!/usr/bin/env bash
# Acceptance: the load study (docs/load-study.md) runs as documented and what the page reads from it
# still holds: `xattn sweep scenarios/load-study.yaml` completes its 3 loads x 8 policies with every
# invariant held, each point an ensemble (the table's 5% and 95% columns bracket nothing upside
# down); at every load the oracle's mean TPOT is no worse than any online policy's that kept up
# (beyond the verdicts' 0.5% tie); the report has the mean and p99 TPOT curves; the page's figures
# are these runs' (docs/figures.tsv, source ls_sweep). The long tier (sim/bench/long.tsv).
# Usage: load_study_test.sh XATTN [MEMBERS]   (the sweep file's 4 by default)
set -euo pipefail
xattn=$1
members=${2:-4}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$xattn" sweep "$here/../../scenarios/load-study.yaml" --set "ensemble=$members" --out "$work/sweep" --quiet --report \
  >"$work/out.txt"
cat "$work/out.txt"
# The offline policies (the oracle) as the registry lists them: every other one is online.
"$xattn" describe policies | awk '/\[offline/ {print $1}' >"$work/offline.txt"
/usr/bin/python3 - "$work/sweep" "$work/offline.txt" <<'PY'
import csv, json, os, sys
d = sys.argv[1]
offline = open(sys.argv[2]).read().split()
assert offline == ["oracle"], "offline policies: %s" % offline
rows = list(csv.DictReader(open(d + "/results.csv")))
assert len(rows) == 24, "3 loads x 8 policies, got %d rows" % len(rows)
assert all(r["invariants_ok"] == "true" for r in rows), "an invariant failed"
for r in rows:
    lo, hi = float(r["tpot_s_mean_p5"]), float(r["tpot_s_mean_p95"])
    assert 0 < lo <= hi, "%s %s: mean TPOT from %g to %g" % (r["workload.time_scale"], r["policy"], lo, hi)
# The oracle against every online policy that kept up, from each point's own summary.
for point in json.load(open(d + "/sweep.json"))["points"]:
    s = json.load(open(os.path.join(d, "points", point["id"], "summary.json")))["policies"]
    oracle = s["oracle"]["tpot_s"]["mean"]
    online = [p for p in s if p not in offline]
    assert len(online) == 7, "online policies: %s" % online
    for p in online:
        if s[p]["load"]["overloaded"]:
            continue
        assert oracle <= s[p]["tpot_s"]["mean"] * 1.005, "load %s: oracle %g s, %s %g s" % (
            point["values"], oracle, p, s[p]["tpot_s"]["mean"])
for name in ("tpot_mean.csv", "tpot_p99.csv"):
    assert len(list(csv.DictReader(open(d + "/report/" + name)))) == 24, name
print("oracle no worse than any online policy that kept up, at every load")
PY
/usr/bin/python3 "$here/../../docs/figures_check.py" "$here/../.." ls_sweep="$work/sweep/results.csv"
echo PASS
