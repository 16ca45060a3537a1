#!/usr/bin/env bash
# Acceptance: the co-located against disaggregated study (docs/disaggregated.md) runs as documented
# and what the page reads from it still holds: `xattn sweep scenarios/disaggregated-layouts.yaml`
# completes both layouts with every invariant held, each as an ensemble (the table's 5% and 95%
# columns bracket nothing upside down); both layouts keep up with the load under every policy;
# comparison.txt ranks co-located first on mean TPOT and disaggregated first on mean TTFT for every
# policy, each other point with its ensemble's range; the page's figures of the runs themselves are
# these (docs/figures.tsv, source dl_sweep). With 8 members (the sweep file's own, about a minute:
# the long tier, sim/bench/long.tsv) the page's comparison block is checked too (source dl_cmp).
# Usage: disaggregated_layouts_test.sh XATTN [MEMBERS]   (2 by default: about 20 s)
set -euo pipefail
xattn=$1
members=${2:-2}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$xattn" sweep "$here/../../scenarios/disaggregated-layouts.yaml" --set "ensemble=$members" --out "$work/sweep" \
  --quiet >"$work/out.txt"
cat "$work/out.txt"
/usr/bin/python3 - "$work/sweep/results.csv" "$work/sweep/comparison.txt" "$members" <<'PY'
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
text = open(sys.argv[2]).read()
assert len(rows) == 6, "2 layouts x 3 policies, got %d rows" % len(rows)
assert all(r["invariants_ok"] == "true" for r in rows), "an invariant failed"
for r in rows:
    for fig in ("ttft_s_mean", "tpot_s_mean", "step_latency_s_mean", "goodput_share", "goodput_requests_per_s"):
        lo, hi = float(r[fig + "_p5"]), float(r[fig + "_p95"])
        assert 0 < lo <= hi, "%s %s: %s from %g to %g" % (r["name"], r["policy"], fig, lo, hi)
# One block per policy: its table, then its verdicts (each one paragraph, wrapped).
blocks = dict(re.findall(r"^(\w+), seed 1[^\n]*\n(.*?)(?=^\w+, seed 1|\Z)", text, re.S | re.M))
assert sorted(blocks) == ["fetch", "predicate", "route"], "blocks for %s" % sorted(blocks)
for policy, block in blocks.items():
    table, _, verdicts = block.partition("verdict:")
    delivered = [float(v) for v in re.findall(r"(\d+)%\n", table)]
    assert len(delivered) == 2 and min(delivered) >= 99, "%s: a layout did not keep up: %s" % (policy, delivered)
    v = [re.sub(r"\s+", " ", t).strip() for t in ("verdict:" + verdicts).split("verdict:")[1:]]
    assert len(v) == 2, "%s: %d verdicts, expected TPOT and TTFT" % (policy, len(v))
    assert v[0].startswith("co-located is best on mean TPOT"), "%s: %s" % (policy, v[0])
    assert v[1].startswith("disaggregated is best on mean TTFT"), "%s: %s" % (policy, v[1])
    for t in v:
        m = re.search(r"range over the (\d+) ensemble members: ([\d.]+)x to ([\d.]+)x", t)
        # Every member orders the layouts as the run does (docs/disaggregated.md says so).
        assert m and int(m.group(1)) == int(sys.argv[3]) and 1 < float(m.group(2)) <= float(m.group(3)), "%s: %s" % (policy, t)
print("co-located wins mean TPOT and disaggregated mean TTFT under every policy")
PY
sources=(dl_sweep="$work/sweep/results.csv")
[ "$members" -eq 8 ] && sources+=(dl_cmp="$work/sweep/comparison.txt")
/usr/bin/python3 "$here/../../docs/figures_check.py" "$here/../.." "${sources[@]}"
echo PASS
