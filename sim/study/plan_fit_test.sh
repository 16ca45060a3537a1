#!/usr/bin/env bash
# Acceptance: `xattn plan` searches holder counts down to those that cannot hold the corpus
# (scenarios/holders-plan.yaml). Which sizes are refused is worked here by hand, independently of
# the engine: the quickstart's declared 4M-token corpus in 2,048-token chunks (1,954 chunks, the
# last one partial), placed round-robin, at DeepSeek-V3.2's served 656 B a token and layer over 61
# layers, on holders of an H100's 80 GB. A refused size must fail as DOES NOT FIT with its
# corpus.holder_hbm reason; every other size is simulated; the answer meets and its next smaller
# size fails; the report's plan.csv marks the refused sizes.
# Usage: plan_fit_test.sh XATTN
set -euo pipefail
xattn=$1
here=$(cd "$(dirname "$0")" && pwd)
scen=$here/../../scenarios
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$xattn" plan "$scen/holders-plan.yaml" --out "$work/plan" --quiet >"$work/plan.out"
cat "$work/plan.out"
grep -q "^ANSWER: holder GPUs = " "$work/plan.out" || { echo "FAIL: no answer printed"; exit 1; }
grep -q "DOES NOT FIT" "$work/plan.out" || { echo "FAIL: no size shown as not fitting"; exit 1; }

/usr/bin/python3 - "$work/plan/plan.json" <<'PY'
import json, math, sys
p = json.load(open(sys.argv[1]))
chunks = math.ceil(4_000_000 / 2048)
chunk_bytes = 2048 * 61 * 656
hbm = 80e9
judged = next(k for k in p["evaluations"][0] if k.startswith(p["slo"]["metric"]))
assert p["evaluations"], "nothing judged"
for e in p["evaluations"]:
    size = int(e["size"])
    fits = math.ceil(chunks / size) * chunk_bytes <= hbm
    if fits:
        assert e["refused"] is None and e[judged] is not None, "size %d fits by hand but was refused" % size
    else:
        assert e["refused"] and "corpus.holder_hbm" in e["refused"], "size %d cannot hold the corpus" % size
        assert e[judged] is None and not e["meets"], "a refused size has no figure and fails"
a, b = p["answer"], p["next_smaller"]
assert a and a["meets"] and a["refused"] is None, "the answer meets"
assert b and not b["meets"] and b["size"] < a["size"], "the next smaller size fails"
print("PASS: refused sizes %s, answer %g" % (sorted({int(e["size"]) for e in p["evaluations"] if e["refused"]}),
                                              a["size"]))
PY

# The report draws the refused sizes (skipped where matplotlib is absent).
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  "$xattn" report "$work/plan" >/dev/null
  /usr/bin/python3 - "$work/plan/report/plan.csv" "$work/plan/plan.json" <<'PY'
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
unfit = sorted({float(r["size"]) for r in rows if r["fits"] == "False"})
refused = sorted({float(e["size"]) for e in json.load(open(sys.argv[2]))["evaluations"] if e["refused"]})
assert unfit and unfit == refused, "plan.csv marks sizes %s as not fitting, the plan refused %s" % (unfit, refused)
PY
fi
echo "PASS"
