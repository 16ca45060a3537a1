#!/usr/bin/env bash
# `xattn run` interrupted (issue 9; README.md, "Where outputs go"): a complete earlier run's outputs survive a later
# run into the same folder that is stopped by SIGINT (or SIGTERM) part-way; the stopped run exits
# 130 and leaves summary.interrupted.json marked interrupted, and no temporary file behind.
#   interrupt_test.sh XATTN SOURCE_DIR INT|TERM
set -uo pipefail
xattn=$1
src=$2
sig=${3:-INT}
work=$(mktemp -d "${TMPDIR:-/tmp}/xattn-interrupt.XXXXXX")
trap 'rm -rf "$work"' EXIT
out=$work/out
fail() {
  echo "FAIL: $*"
  exit 1
}

# 1. A complete, short run: the earlier results.
"$xattn" run "$src/scenarios/quickstart.yaml" --out "$out" --quiet --policy route \
  --set workload.generator.requests=20 >"$work/first.log" 2>&1 || fail "the short run failed: $(cat "$work/first.log")"
[ -f "$out/summary.json" ] || fail "the short run wrote no summary.json"
before=$(cd "$out" && sha256sum summary.json requests.csv links.csv holders.csv report.md)

# 2. A long run into the same folder, stopped after a second.
"$xattn" run "$src/scenarios/quickstart.yaml" --out "$out" --quiet \
  --set workload.generator.requests=3000 >"$work/long.log" 2>&1 &
pid=$!
sleep 1.5
kill -0 "$pid" 2>/dev/null || fail "the long run ended within 1.5 s: $(cat "$work/long.log")"
start=$(date +%s)
kill -"$sig" "$pid"
wait "$pid"
code=$?
took=$(($(date +%s) - start))
[ "$code" = 130 ] || fail "exit $code after SIG$sig, expected 130: $(cat "$work/long.log")"
[ "$took" -le 20 ] || fail "the run took $took s to stop after SIG$sig"
grep -q "interrupted" "$work/long.log" || fail "no 'interrupted' line on stderr: $(cat "$work/long.log")"

# 3. The earlier results are untouched; the interrupted summary says so; nothing half-written.
after=$(cd "$out" && sha256sum summary.json requests.csv links.csv holders.csv report.md)
[ "$before" = "$after" ] || fail "earlier results changed: $(diff <(echo "$before") <(echo "$after"))"
[ -f "$out/summary.interrupted.json" ] || fail "no summary.interrupted.json"
grep -q '"interrupted": true' "$out/summary.interrupted.json" || fail "summary.interrupted.json not marked interrupted"
leftovers=$(cd "$out" && ls -A | grep -vxE 'summary.json|requests.csv|links.csv|holders.csv|report.md|summary.interrupted.json')
[ -z "$leftovers" ] || fail "left behind in the output folder: $leftovers"
# No simulation process outlives the run (the forked children carry the same command line).
sleep 0.5
if pgrep -f -- "--out $out" >/dev/null 2>&1; then fail "simulation processes still running: $(pgrep -af -- "--out $out")"; fi
echo "ok: SIG$sig -> exit 130 in ${took}s, earlier results intact, summary.interrupted.json written"
