#!/usr/bin/env bash
# Runs never mix (README.md, "Where outputs go"): each `xattn run` without --out writes a folder of
# its own and links out/<scenario>/latest to it; every file of a run carries one run id; an
# explicit --out holding an earlier run is refused (exit 2, nothing touched) unless --replace,
# which replaces every file of the earlier run, its report/ included.
#   run_folder_test.sh XATTN SOURCE_DIR
set -uo pipefail
xattn=$1
src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/xattn-run-folder.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
small=(--policy route --quiet --set workload.generator.requests=20)
cd "$work" || exit 1

# The run id of every output file in folder $1: one line per file, "FILE ID".
ids() {
  local d=$1 f
  sed -n 's/^  "run_id": "\(.*\)",$/summary.json \1/p' "$d/summary.json"
  for f in requests.csv links.csv holders.csv; do
    head -n 1 "$d/$f" | grep -q ',run_id$' || echo "$f has no run_id column"
    tail -n +2 "$d/$f" | awk -F, -v f="$f" '{print f " " $NF}' | sort -u
  done
  sed -n '1s/^# xattn run: .*, run \(.*\)$/report.md \1/p' "$d/report.md"
}

# 1. Two runs without --out: two folders, latest at the second, one id per folder.
"$xattn" run "$src/scenarios/quickstart.yaml" "${small[@]}" || fail "the first run exited $?"
sleep 1.1 # another second: another id (the same second gets -2, checked below)
"$xattn" run "$src/scenarios/quickstart.yaml" "${small[@]}" || fail "the second run exited $?"
"$xattn" run "$src/scenarios/quickstart.yaml" "${small[@]}" --run-id fixed || fail "the --run-id run exited $?"
"$xattn" run "$src/scenarios/quickstart.yaml" "${small[@]}" --run-id fixed || fail "the second --run-id run exited $?"
runs=$(find out/quickstart -mindepth 1 -maxdepth 1 -type d | sort)
[ "$(echo "$runs" | wc -l)" = 4 ] || fail "expected 4 run folders, got: $runs"
[ -d out/quickstart/fixed ] && [ -d out/quickstart/fixed-2 ] || fail "a taken run id did not get -2: $runs"
[ "$(readlink out/quickstart/latest)" = fixed-2 ] || fail "latest -> $(readlink out/quickstart/latest), expected fixed-2"
for d in $runs; do
  id=$(basename "$d")
  got=$(ids "$d")
  [ "$(echo "$got" | awk '{print $2}' | sort -u)" = "$id" ] || fail "files of $d carry other ids: $got"
  [ "$(echo "$got" | awk '{print $1}' | sort -u | wc -l)" = 5 ] || fail "not every file of $d carries its id: $got"
done

# 2. An explicit --out: refused when it holds a run, the earlier files untouched.
"$xattn" run "$src/scenarios/quickstart.yaml" "${small[@]}" --out mine --run-id one || fail "--out mine exited $?"
before=$(cd mine && sha256sum ./*)
rc=0
"$xattn" run "$src/scenarios/quickstart.yaml" "${small[@]}" --out mine 2>err || rc=$?
[ "$rc" = 2 ] || fail "a second run into mine exited $rc, expected 2"
want="command line: error: --out: mine holds an earlier run's outputs (summary.json of run one); pass --replace to replace them, or choose another folder"
[ "$(head -n 1 err)" = "$want" ] || fail "the refusal said: $(head -n 1 err)"
[ "$before" = "$(cd mine && sha256sum ./*)" ] || fail "the refused run changed mine/"

# 3. --replace: the earlier run's files all go, a stale report/ with them.
mkdir -p mine/report && echo stale >mine/report/meta.json && echo stale >mine/summary.interrupted.json
"$xattn" run "$src/scenarios/quickstart.yaml" "${small[@]}" --out mine --replace --run-id two || fail "--replace exited $?"
[ ! -e mine/report ] && [ ! -e mine/summary.interrupted.json ] || fail "--replace left the earlier run's files: $(ls mine)"
[ "$(ids mine | awk '{print $2}' | sort -u)" = two ] || fail "mine/ mixes runs after --replace: $(ids mine)"

# 4. A bad run id is bad input, and writes nothing.
rc=0
"$xattn" run "$src/scenarios/quickstart.yaml" "${small[@]}" --run-id "../x" --out bad 2>err || rc=$?
[ "$rc" = 2 ] && [ ! -e bad ] || fail "--run-id ../x exited $rc (expected 2) or wrote bad/: $(cat err)"

echo "PASS: run folders, latest, run ids in every file, --out refused and --replace"
