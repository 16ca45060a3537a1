#!/usr/bin/env bash
# The HTML report of a run and of a sweep: self-contained (plots as base64 PNGs, 1,600 px wide), the
# CSV behind every plot beside it; a missing python3-matplotlib gives a clear message; --reuse N
# redraws the decision map; a folder whose CSVs carry another run_id than its summary.json is
# refused. With Debian's chromium, the page is rendered headless and the screenshot must show the
# plots (not a blank page). The run is an ensemble (--ensemble 4): its plots carry 5-95% bands over
# the profile draws.
# It runs route, fetch and local (and predicate) so that every plot colour the screenshot check
# looks for is in the data: the three policies' CDF lines and decision bars are blue, red, green.
# Skips (exit 77) where matplotlib or chromium is absent, after the checks that need neither.
# Usage: report_test.sh XATTN
set -euo pipefail
xattn=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$xattn" run "$here/../../scenarios/quickstart.yaml" --out "$work/run" --quiet --set workload.generator.requests=60 \
  --policy route --policy fetch --policy local --policy predicate --ensemble 4
# Copies for the run_id contract below, taken before any report is written into the run.
cp -r "$work/run" "$work/mixed"
cp -r "$work/run" "$work/same"

# Without matplotlib: a clear message naming the package, exit 2, no page.
rc=0
XATTN_PYTHON=/bin/false "$xattn" report "$work/run" 2>"$work/err" || rc=$?
cat "$work/err"
[ "$rc" -eq 2 ] && grep -q "python3-matplotlib" "$work/err" && [ ! -e "$work/run/report.html" ] ||
  { echo "FAIL: expected exit 2 naming python3-matplotlib"; exit 1; }

if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  echo "SKIP: Debian's python3-matplotlib is not installed"
  exit 77
fi
# Every policy of the registry has its own colour (a new policy needs one in report_style.POLICY).
/usr/bin/python3 - "$here" <<'PY'
import re, sys
sys.path.insert(0, sys.argv[1])
from report_style import POLICY, colour
ids = re.findall(r"^XATTN_POLICY\((\w+)\)", open(sys.argv[1] + "/../policy/policies.def").read(), re.M)
missing = [i for i in ids if i.replace("_", "-") not in POLICY]
assert not missing, "policies without a colour in report_style.POLICY: %s" % missing
assert len({colour(i) for i in ids}) == len(ids), "two policies share a colour"
assert colour("some-new-policy") == colour("some_new_policy") and colour("some-new-policy") not in POLICY.values()
print("colours:", len(ids), "policies, each its own")
PY
"$xattn" report "$work/run"
html=$work/run/report.html
grep -q "^verdict: " "$html" || { echo "FAIL: the run report does not show the run's verdict"; exit 1; }
imgs=$(grep -o "data:image/png;base64," "$html" | wc -l)
echo "run report: $imgs plots, $(stat -c %s "$html") bytes"
[ "$imgs" -eq 7 ] ||
  { echo "FAIL: expected 7 plots (step latency, decisions, ensemble, links, holders, decision and break-even maps), got $imgs"; exit 1; }
# Every plot is at least 1,600 px wide (the PNG's IHDR width).
/usr/bin/python3 - "$html" <<'PY'
import base64, re, sys
widths = [int.from_bytes(base64.b64decode(m)[16:20], "big")
          for m in re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", open(sys.argv[1]).read())]
assert widths and min(widths) >= 1600, "plots narrower than 1600 px: %s" % widths
print("plot widths:", sorted(set(widths)))
PY
# The bands: every quantile of the CDF and every ensemble figure has a 5-95% range with p5 <= p95.
/usr/bin/python3 - "$work/run/report" <<'PY'
import csv, sys
q = list(csv.DictReader(open(sys.argv[1] + "/step_quantiles.csv")))
assert q and all(r["ensemble_p5"] and r["ensemble_p95"] for r in q), "a CDF quantile without its band"
assert all(float(r["ensemble_p5"]) <= float(r["ensemble_p95"]) for r in q)
e = list(csv.DictReader(open(sys.argv[1] + "/ensemble.csv")))
assert len(e) == 4 * 3 and all(float(r["p5"]) <= float(r["p50"]) <= float(r["p95"]) for r in e), "ensemble bands (4 policies x 3 headline figures)"
print("bands:", len(q), "CDF quantiles,", len(e), "ensemble figures")
PY
# The curve's markers are the curve's own quantiles: each lies on the step CDF it marks.
/usr/bin/python3 - "$work/run/report" <<'PY'
import csv, sys
cdf = list(csv.DictReader(open(sys.argv[1] + "/step_cdf.csv")))
for q in csv.DictReader(open(sys.argv[1] + "/step_cdf_quantiles.csv")):
    pts = [r for r in cdf if r["policy"] == q["policy"]]
    first = next(r for r in pts if float(r["cdf"]) >= float(q["level"]) - 1e-12)
    assert float(first["mean_step_s"]) == float(q["mean_step_s"]), "marker off its curve: %s" % q
print("step CDF markers on their curves")
PY
for f in step_cdf step_cdf_quantiles step_quantiles decisions ensemble link_utilisation holder_load crossover; do
  [ -s "$work/run/report/$f.csv" ] || { echo "FAIL: report/$f.csv missing"; exit 1; }
done
grep -q "src='http" "$html" && { echo "FAIL: the page loads something from the network"; exit 1; }
# The crossover map holds fetch regions at the scenario's prior reuse (the test after --reuse 0
# below checks that the map at no later use holds route regions too: a crossover).
grep -q ",fetch," "$work/run/report/crossover.csv" || { echo "FAIL: the crossover map has no fetch region"; exit 1; }

grep -q "at 256 later uses" "$html" || { echo "FAIL: the decision map does not say which reuse it assumes"; exit 1; }

# --reuse N redraws the decision map at N later uses; the break-even reuse does not depend on it, and
# fewer later uses can only favour route.
cp "$work/run/report/crossover.csv" "$work/crossover-default.csv"
"$xattn" report "$work/run" --reuse 0 >/dev/null
grep -q "at 0 later uses" "$html" || { echo "FAIL: --reuse 0 is not in the decision map's title"; exit 1; }
/usr/bin/python3 - "$work/crossover-default.csv" "$work/run/report/crossover.csv" <<'PY'
import csv, sys
a, b = (list(csv.DictReader(open(p))) for p in sys.argv[1:3])
assert {r["reuse"] for r in b} == {"0"}, "crossover.csv not at --reuse 0"
assert [r["break_even_reuse"] for r in a] == [r["break_even_reuse"] for r in b], "break-even reuse moved with --reuse"
ra, rb = (sum(r["decision"] == "route" for r in x) for x in (a, b))
assert rb > ra, "route cells: %d at reuse 0, %d at the prior; fewer uses must favour route" % (rb, ra)
assert any(r["decision"] == "fetch" for r in b), "no fetch cell at reuse 0: the map has no crossover"
print("--reuse 0: %d route cells (%d at the scenario's prior)" % (rb, ra))
PY
rc=0
"$xattn" report "$work/run" --reuse -1 2>"$work/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--reuse" "$work/err" || { echo "FAIL: --reuse -1 should be refused (exit 2)"; exit 1; }

# The run_id contract: where summary.json has "run_id", a CSV beside it with rows of another run_id
# is refused (exit 2, the file and both ids named); matching ids pass. Fabricated on copies of the run
# (the column is added where this build does not write it yet).
/usr/bin/python3 - "$work/mixed" "$work/same" <<'PY'
import csv, json, sys
def stamp(d, ids):
    s = json.load(open(d + "/summary.json"))
    s["run_id"] = "run-A"
    json.dump(s, open(d + "/summary.json", "w"), indent=2)
    for name, rid in ids.items():
        rows = list(csv.DictReader(open(d + "/" + name)))
        cols = list(rows[0].keys()) if rows else open(d + "/" + name).readline().strip().split(",")
        cols = cols if "run_id" in cols else cols + ["run_id"]
        with open(d + "/" + name, "w", newline="") as f:
            w = csv.DictWriter(f, cols)
            w.writeheader()
            w.writerows({**r, "run_id": rid} for r in rows)
stamp(sys.argv[1], {"requests.csv": "run-A", "links.csv": "run-B", "holders.csv": "run-A"})
stamp(sys.argv[2], {"requests.csv": "run-A", "links.csv": "run-A", "holders.csv": "run-A"})
PY
rc=0
"$xattn" report "$work/mixed" 2>"$work/err" || rc=$?
cat "$work/err"
[ "$rc" -eq 2 ] && grep -q "mixed/links.csv" "$work/err" && grep -q "run-A" "$work/err" && grep -q "run-B" "$work/err" &&
  [ ! -e "$work/mixed/report.html" ] || { echo "FAIL: a links.csv of another run_id should be refused (exit 2)"; exit 1; }
"$xattn" report "$work/same" >/dev/null || { echo "FAIL: matching run_ids refused"; exit 1; }

# A sweep (2 points) gets the capacity curve too.
cat >"$work/sweep.yaml" <<YAML
name: tiny
base: $here/../../scenarios/quickstart.yaml
set: {workload.generator.requests: 40}
grid: {engine.max_batch: [8, 32]}
policies: [route, predicate]
YAML
"$xattn" sweep "$work/sweep.yaml" --out "$work/sweep" --quiet --report
simgs=$(grep -o "data:image/png;base64," "$work/sweep/report.html" | wc -l)
# capacity, mean and p99 TPOT, step latency, decisions, links and holders per point (2 each), the two maps
[ "$simgs" -eq 11 ] || { echo "FAIL: expected 11 plots in the sweep report, got $simgs"; exit 1; }
[ "$(wc -l <"$work/sweep/report/capacity.csv")" -eq 5 ] || { echo "FAIL: capacity.csv should hold 2 policies x 2 points"; exit 1; }
# The TPOT curves are the table's figures, one seed each: the point itself, its bar of no width.
/usr/bin/python3 - "$work/sweep" <<'PY'
import csv, sys
d = sys.argv[1]
table = {(r["policy"], r["engine.max_batch"]): r for r in csv.DictReader(open(d + "/results.csv"))}
for column, name in (("tpot_mean_s", "tpot_mean.csv"), ("tpot_p99_s", "tpot_p99.csv")):
    rows = list(csv.DictReader(open(d + "/report/" + name)))
    assert len(rows) == 4, "%s: %d rows, expected 2 policies x 2 points" % (name, len(rows))
    for r in rows:
        want = float(table[(r["policy"], r["engine.max_batch"])][column])
        got = [float(r[k]) for k in (column + "_mean", "low", "high")]
        assert got == [want] * 3, "%s %s %s: %s, the table has %g" % (name, r["policy"], r["engine.max_batch"], got, want)
PY
# Both points share a seed: the page opens with the sweep's comparison of them.
grep -q "comparison of the points of sweep tiny" "$work/sweep/report.html" ||
  { echo "FAIL: the sweep report does not show comparison.txt"; exit 1; }

chromium=$(command -v chromium || true)
if [ -z "$chromium" ]; then
  echo "SKIP: chromium is not installed (the page itself passed)"
  exit 77
fi
shot() {
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$(mktemp -d -p "$work")" \
    --screenshot="$1" --window-size=1200,2000 "file://$2" >/dev/null 2>&1 || true
}
shot "$work/run.png" "$html"
echo '<!DOCTYPE html><html><body></body></html>' >"$work/blank.html"
shot "$work/blank.png" "$work/blank.html"
[ -s "$work/run.png" ] || { echo "FAIL: chromium wrote no screenshot"; exit 1; }
/usr/bin/python3 - "$work/run.png" "$work/blank.png" <<'PY'
import sys
from PIL import Image
shot, blank = Image.open(sys.argv[1]).convert("RGB"), Image.open(sys.argv[2]).convert("RGB")
colours = shot.getcolors(maxcolors=1 << 20)
n = len(colours) if colours else 1 << 20
# The plots' line, bar and map colours (route blue #1f77b4, fetch red #d62728, local green #2ca02c).
def near(c, ref):
    return sum(abs(a - b) for a, b in zip(c, ref)) < 40
px = shot.getdata()
seen = {name: sum(1 for p in px if near(p, ref)) for name, ref in
        (("blue", (31, 119, 180)), ("red", (214, 39, 40)), ("green", (44, 160, 44)))}
print("screenshot %dx%d, %d colours, plot pixels %s; blank page: %d colours" %
      (shot.size[0], shot.size[1], n, seen, len(blank.getcolors(maxcolors=1 << 20) or [])))
assert n > 50, "the screenshot is nearly one colour: no plots"
assert all(v > 500 for v in seen.values()), "the plot colours are missing from the screenshot"
assert shot.tobytes() != blank.tobytes(), "the screenshot equals a blank page"
PY
cp "$work/run.png" "${XATTN_SCREENSHOT_OUT:-/dev/null}" 2>/dev/null || true
echo "PASS"
