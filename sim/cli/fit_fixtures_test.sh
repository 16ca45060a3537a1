#!/usr/bin/env bash
# `xattn calibrate fit` on every fixture the project ships (calibrate/testdata/, one per importer
# format) writes a profile its own reader loads: `xattn predict --profile` prices a call with it,
# and its output never names a temporary file the user did not make.
#   fit_fixtures_test.sh XATTN SOURCE_DIR
set -uo pipefail
xattn=$1
src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/xattn-fit.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
n=0
for f in "$src"/calibrate/testdata/*; do
  case "$f" in *.md) continue ;; esac
  n=$((n + 1))
  name=$(basename "$f")
  out=$work/${name%.*}.yaml
  # Formats that do not record the fabric they crossed are told it, as a user tells them.
  extra=()
  case "$name" in
  nccl_tests.json | nvshmem.txt) extra=(--fabric ib-spine) ;;
  nvbandwidth.json) extra=(--fabric nvlink) ;;
  esac
  if ! (cd "$work" && "$xattn" calibrate fit "$f" --out "$out" "${extra[@]}") >"$work/$name.log" 2>&1; then
    echo "FAIL: calibrate fit $name: $(cat "$work/$name.log")"
    failures=$((failures + 1))
    continue
  fi
  if grep -q "check.yaml\|\.tmp" "$work/$name.log"; then
    echo "FAIL: calibrate fit $name names a temporary file: $(cat "$work/$name.log")"
    failures=$((failures + 1))
  fi
  if ! "$xattn" predict --profile "$out" >"$work/$name.predict" 2>&1; then
    echo "FAIL: the profile fitted from $name does not load: $(cat "$work/$name.predict")"
    failures=$((failures + 1))
    continue
  fi
  echo "ok: $name -> $(basename "$out") loads"
done
[ "$n" -ge 5 ] || { echo "FAIL: only $n fixtures in calibrate/testdata"; exit 1; }
[ "$failures" = 0 ] || exit 1
echo "PASS: $n fixtures fit into profiles that load"
