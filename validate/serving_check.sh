#!/usr/bin/env bash
# The whole serving step against DeepSeek's published throughput per H800 GPU, failing past 10% at
# either point (validate/README.md, "--serving"); then every figure docs/figures.tsv quotes from
# that report is checked against it. Exit 77 (skipped) without the measured tables.
#   serving_check.sh XATTN SOURCE_DIR PROFILE_CSV DEEPEP_CSV          the check (source vs; ctest
#                                                                     validate:serving)
#   serving_check.sh XATTN SOURCE_DIR PROFILE_CSV DEEPEP_CSV study    with the shared-corpus study
#                                                                     over 4 ensemble members on top
#                                                                     (sources vs and vss; long tier)
set -euo pipefail
xattn=$1
src=$2
profile_csv=$3
deepep_csv=$4
study=${5:-}
[ -f "$profile_csv" ] && [ -f "$deepep_csv" ] || exit 77
work=$(mktemp -d "${TMPDIR:-/tmp}/xattn-serving.XXXXXX")
trap 'rm -rf "$work"' EXIT

args=(validate --serving "$profile_csv" --deepep "$deepep_csv" --max-error 10)
sources=(vs="$work/report.txt")
if [ "$study" = study ]; then
  args+=(--shared-corpus 16777216 --ensemble 4)
  sources+=(vss="$work/report.txt")
fi
"$xattn" "${args[@]}" >"$work/report.txt" || { cat "$work/report.txt"; echo "FAIL: xattn ${args[*]}"; exit 1; }
cat "$work/report.txt"
/usr/bin/python3 "$src/docs/figures_check.py" "$src" "${sources[@]}"
