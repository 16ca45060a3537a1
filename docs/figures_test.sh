#!/usr/bin/env bash
# Every figure docs/figures.tsv lists is what its command prints today: runs each source once, then
# checks each row's text is in its document (whitespace and line breaks aside).
# Usage: figures_test.sh XATTN SOURCE_DIR
set -euo pipefail
xattn=$1
src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/xattn-figures.XXXXXX")
trap 'rm -rf "$work"' EXIT

(cd "$work" && "$xattn" run --quiet --out q) || { echo "FAIL: xattn run (the embedded quickstart)"; exit 1; }
(cd "$work" && "$xattn" run --quiet --out a --set engine.route_protocol=absorbed --policy route --policy fetch) ||
  { echo "FAIL: xattn run with the absorbed query"; exit 1; }
"$xattn" predict --model deepseek-v3.2 --fabric ib-same-leaf --topology testbed-ndr200 --mq 128 --ct 2048 \
  --layers 61 --blocks 32 --json >"$work/p.json" || { echo "FAIL: xattn predict"; exit 1; }

/usr/bin/python3 - "$src" "$work" <<'PY'
import csv, json, os, re, sys
src, work = sys.argv[1:]
sources = {
    "q": json.load(open(os.path.join(work, "q", "summary.json")))["policies"],
    "a": json.load(open(os.path.join(work, "a", "summary.json")))["policies"],
    "p": json.load(open(os.path.join(work, "p.json"))),
}
helpers = {
    "ms": lambda s, d=2: "%.*f ms" % (d, s * 1e3),
    "x": lambda a, b: "%.2fx" % (a / b),
    "n": lambda c: "{:,}".format(int(c)),
    "pct": lambda s: "%.0f%%" % (s * 100),
}
flat = lambda t: re.sub(r"\s+", " ", t)
rows = [r for r in csv.reader(open(os.path.join(src, "docs", "figures.tsv")), delimiter="\t", quotechar="\x00")
        if r and not r[0].startswith("#")]
docs, bad = {}, []
for doc, source, expr in rows:
    text = docs.setdefault(doc, flat(open(os.path.join(src, doc)).read()))
    want = flat(eval(expr, dict(helpers, **{source: sources[source]})))
    if want not in text:
        bad.append("%s: '%s' (from %s) is not in it" % (doc, want, source))
for b in bad:
    print("FAIL:", b)
if bad:
    sys.exit(1)
print("PASS: %d figures in %d documents are what their commands print" % (len(rows), len(docs)))
PY
