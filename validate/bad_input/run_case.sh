#!/usr/bin/env bash
# One bad-input case (a row of cases.tsv): runs the xattn command on the malformed file twice, in
# a scratch folder that is its working directory,
#   1. with nothing there: nothing may be created (no file, no folder, no temporary left behind);
#   2. over "earlier results" (a results/ folder of a finished run, a trace, a profile; `run` is
#      given --replace, without which it refuses that folder): every file must be byte-identical
#      afterwards and nothing added;
# and each time asserts the exit code, that the first line on stderr is exactly the expected one
# (FILE:LINE:COL: error: KEY: what), and that no sanitizer report or internal error appeared.
#
#   run_case.sh XATTN CASES_DIR ID      (ID: the case's file, relative to CASES_DIR)
#
# The case files are reached through a link `cases` -> CASES_DIR in the scratch folder, so paths in
# messages read "cases/scenario/unknown-key.yaml" wherever the checkout is.
set -uo pipefail

xattn=$1
cases_dir=$(cd "$2" && pwd)
id=$3

row=$(awk -F'\t' -v id="$id" '$1 == id { print; exit }' "$cases_dir/cases.tsv")
if [ -z "$row" ]; then
  echo "no case '$id' in $cases_dir/cases.tsv"
  exit 1
fi
IFS=$'\t' read -r _ args want_exit want_line <<<"$row"
args=${args//\{f\}/cases/$id}

work=$(mktemp -d "${TMPDIR:-/tmp}/xattn-bad-input.XXXXXX")
logs=$(mktemp -d "${TMPDIR:-/tmp}/xattn-bad-input-logs.XXXXXX")
trap 'rm -rf "$work" "$logs"' EXIT
out=$logs/stdout
err=$logs/stderr
failures=0
fail() {
  echo "FAIL [$variant] $*"
  failures=$((failures + 1))
}

# Every path under the scratch folder except the link, with a checksum for files.
snapshot() {
  (cd "$work" && find . -mindepth 1 -path ./cases -prune -o -print0 | sort -z |
    while IFS= read -r -d '' p; do
      if [ -f "$p" ]; then echo "$p $(sha256sum <"$p" | cut -c1-64)"; else echo "$p"; fi
    done)
}

earlier_results() {
  mkdir -p "$work/results"
  printf '{"scenario": "earlier", "policies": {}, "invariants": {"ok": true}}\n' >"$work/results/summary.json"
  printf 'policy,request\nroute,0\n' >"$work/results/requests.csv"
  printf '# an earlier run\n' >"$work/results/report.md"
  printf '{"xattn_trace": 1, "source": "earlier"}\n' >"$work/t.jsonl"
  printf 'name: earlier\n' >"$work/profile.yaml"
}

run_once() {
  local before after got_exit first
  before=$(snapshot)
  # shellcheck disable=SC2086  # the arguments are split on purpose (no case path holds a space)
  (cd "$work" && exec timeout 60 "$xattn" $args) >"$out" 2>"$err"
  got_exit=$?
  after=$(snapshot)
  first=$(head -n 1 "$err")
  [ "$got_exit" = 124 ] && fail "xattn $args hung (killed after 60 s)"
  [ "$got_exit" = "$want_exit" ] || fail "exit $got_exit, expected $want_exit"
  if [ "$first" != "$want_line" ]; then
    fail "stderr line differs"
    echo "  expected: $want_line"
    echo "  got:      $first"
  fi
  if grep -qE 'Sanitizer|runtime error:|internal error' "$err"; then
    fail "a sanitizer report or an internal error on stderr:"
    sed 's/^/  | /' "$err" | head -n 40
  fi
  if [ "$before" != "$after" ]; then
    fail "the scratch folder changed (outputs must not be created or touched on bad input):"
    diff <(echo "$before") <(echo "$after") | sed 's/^/  | /'
  fi
}

ln -s "$cases_dir" "$work/cases"
variant=fresh
run_once
variant=earlier-results
earlier_results
# A run into a folder holding another run's outputs is refused unless told to replace them; told
# so, a run that fails on bad input must still leave them as they were.
[[ "$args" == run\ * && "$args" == *"--out results"* ]] && args="$args --replace"
run_once

if [ "$failures" -ne 0 ]; then
  echo "case $id: xattn $args: $failures failure(s)"
  exit 1
fi
echo "case $id: exit $want_exit, '$want_line', nothing written"
