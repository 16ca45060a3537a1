#!/usr/bin/env bash
# The HTML report of a run and of a sweep: self-contained (plots as base64 PNGs), the CSV behind
# every plot beside it; a missing python3-matplotlib gives a clear message. With Debian's
# chromium, the page is rendered headless and the screenshot must show the plots (not a blank
# page). The run is an ensemble (--ensemble 4): its plots carry 5-95% bands over the profile draws.
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
"$xattn" report "$work/run"
html=$work/run/report.html
imgs=$(grep -o "data:image/png;base64," "$html" | wc -l)
echo "run report: $imgs plots, $(stat -c %s "$html") bytes"
[ "$imgs" -eq 6 ] || { echo "FAIL: expected 6 plots (CDF, decisions, ensemble, links, holders, crossover), got $imgs"; exit 1; }
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
for f in step_cdf step_quantiles decisions ensemble link_utilisation holder_load crossover; do
  [ -s "$work/run/report/$f.csv" ] || { echo "FAIL: report/$f.csv missing"; exit 1; }
done
grep -q "src='http" "$html" && { echo "FAIL: the page loads something from the network"; exit 1; }
# The crossover map holds both route and fetch regions somewhere (the closed form has a crossover).
grep -q ",route," "$work/run/report/crossover.csv" && grep -q ",fetch," "$work/run/report/crossover.csv" ||
  { echo "FAIL: the crossover map has no crossover"; exit 1; }

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
[ "$simgs" -eq 6 ] || { echo "FAIL: expected 6 plots in the sweep report, got $simgs"; exit 1; }
[ "$(wc -l <"$work/sweep/report/capacity.csv")" -eq 5 ] || { echo "FAIL: capacity.csv should hold 2 policies x 2 points"; exit 1; }

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
