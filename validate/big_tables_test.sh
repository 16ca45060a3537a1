#!/usr/bin/env bash
# Measured tables of any size: a table generated from a known alpha-beta line (NVLink 8 us and
# 400 GB/s, InfiniBand across the spine 16 us and 45 GB/s), 4 KiB to 16 GiB, plus one InfiniBand
# row of 2^40 bytes (1 TiB), goes through `calibrate fit`, `calibrate check` and `validate` with
# the fitted profile, each exit 0; at 8 GiB and above the engine's times lie within 1% of the
# generating line (the line, not the fit, is the reference). No output names a temporary file.
# Usage: big_tables_test.sh XATTN
set -euo pipefail
xattn=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

/usr/bin/python3 - <<'PY'
rows = ["fabric,bytes,latency"]
for fabric, alpha, beta in (("nvlink", 8e-6, 400e9), ("ib-spine", 16e-6, 45e9)):
    size = 4096
    while size <= 16 * 2**30:
        rows.append("%s,%d,%.6fus" % (fabric, size, (alpha + size / beta) * 1e6))
        size *= 4 if size < 2**30 else 2
rows.append("ib-spine,%d,%.6fus" % (2**40, (16e-6 + 2**40 / 45e9) * 1e6))
open("line.csv", "w").write("\n".join(rows) + "\n")
PY

"$xattn" calibrate fit line.csv --out fitted.yaml >fit.log 2>&1 || { cat fit.log; echo "FAIL: calibrate fit"; exit 1; }
"$xattn" calibrate check line.csv --out check >check.log 2>&1 || { cat check.log; echo "FAIL: calibrate check"; exit 1; }
"$xattn" validate line.csv --profile fitted.yaml --out validated >validate.log 2>&1 ||
  { cat validate.log; echo "FAIL: validate"; exit 1; }
if grep -l "xattn-validate-\|micro[0-9]*\.yaml\|check\.yaml" fit.log check.log validate.log; then
  echo "FAIL: an output names a temporary file"
  exit 1
fi

/usr/bin/python3 - <<'PY'
import csv
line = {"nvlink": (8e-6, 400e9), "ib-spine": (16e-6, 45e9)}
big = 0
for r in csv.DictReader(open("validated/points.csv")):
    size = float(r["bytes"])
    if size < 8 * 2**30:
        continue
    alpha, beta = line[r["fabric"]]
    want = alpha + size / beta
    got = float(r["simulated_s"])
    assert abs(got - want) <= 0.01 * want, "%s %d B: engine %.6g s, the line %.6g s" % (r["fabric"], size, got, want)
    big += 1
assert big == 5, "expected 5 rows of 8 GiB and more (8 and 16 GiB on each fabric, 1 TiB), got %d" % big
print("PASS: %d rows of 8 GiB to 1 TiB within 1%% of the generating line" % big)
PY
