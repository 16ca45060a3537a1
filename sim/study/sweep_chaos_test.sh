#!/usr/bin/env bash
# Chaos: a local sweep survives kill -9. The 3x3 grid with 2 seeds (18 points) runs once
# uninterrupted (the reference), then again in another folder while processes are killed with
# SIGKILL at moments drawn from a fixed seed: the sweep driver, one of its workers (a point's
# `xattn run`), one of their simulations, the whole tree at once, or a worker caught while it
# writes its outputs (its policies' parts all written, summary.json not yet). After each killed or
# failed round the sweep is resumed, until a round completes. Then:
#   - after every round, each point the sweep counts as complete (it has summary.json) already
#     holds exactly the reference's files: a half-written point is never taken as complete;
#   - at the end, every file of the folder (results.csv, sweep.json, each point's summary.json,
#     CSVs, report.md, run.log) is byte-identical to the reference's, and no temporary is left.
# Usage: sweep_chaos_test.sh XATTN [KILLS] [SEED]
set -uo pipefail
xattn=$1
kills=${2:-40}
seed=${3:-20261201}
here=$(cd "$(dirname "$0")" && pwd)
sweep=$here/testdata/grid3x3.yaml
work=$(mktemp -d "${TMPDIR:-/tmp}/xattn-chaos.XXXXXX")
driver=""
cleanup() {
  [ -n "$driver" ] && kill -9 "$driver" 2>/dev/null # its workers and their simulations die with it
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
ms() { echo $(($(date +%s%N) / 1000000)); }
start=$(ms)

# 1. The reference.
"$xattn" sweep "$sweep" --out "$work/ref" --quiet >"$work/ref.log" 2>&1 || fail "the reference sweep failed: $(cat "$work/ref.log")"
ref_ms=$(($(ms) - start))

# Every file of a sweep folder that a run must reproduce, relative to it (sweep.log has times, .lock
# is empty), temporaries left out (no reader takes them for results; the end checks none is left).
files() {
  (cd "$1" && find . \( -name '.partial-*' -prune \) -o -type f ! -name sweep.log ! -name .lock ! -name '.*.tmp*' -print |
    LC_ALL=C sort)
}
# Each point of $1 with a summary.json holds exactly the reference's files, byte for byte.
check_complete_points() {
  local p rel
  for p in "$1"/points/*/; do
    [ -f "$p/summary.json" ] || continue
    rel=points/$(basename "$p")
    diff <(files "$p") <(files "$work/ref/$rel") >/dev/null || fail "point $rel counts as complete but its files differ from the reference's: $(diff <(files "$p") <(files "$work/ref/$rel") | tr '\n' ' ')"
    while read -r f; do
      cmp -s "$p/$f" "$work/ref/$rel/$f" || fail "point $rel counts as complete but its $f differs from the reference's"
    done < <(files "$p")
  done
}

# The folder $1 as the reference, file for file and byte for byte, and nothing temporary left.
check_identical() {
  diff <(files "$1") <(files "$work/ref") >"$work/files.diff" || fail "the files differ: $(cat "$work/files.diff")"
  while read -r f; do
    cmp "$1/$f" "$work/ref/$f" || fail "$f differs from the uninterrupted sweep's"
  done < <(files "$1")
  local left
  left=$(find "$1" -name '.partial-*' -o -name '.*.tmp*')
  [ -z "$left" ] || fail "temporaries left behind: $left"
}

# 2. Chaos. RANDOM replays the same draws for the same seed; the pauses between kills are drawn
# between 1/40 and 1/8 of the reference sweep's time, so that a fast machine and a slow one both
# see about a dozen kills per sweep's worth of work. Should a sweep complete before all kills are
# spent, the next pass starts over in a new folder.
RANDOM=$seed
lo_ms=$((ref_ms / 40 + 10)) hi_ms=$((ref_ms / 8 + 20))
exec 3>&2 2>/dev/null # the shell's "Killed" notices; restored below
done_kills=0 rounds=0 passes=1
out=$work/chaos$passes
declare -A by_target=()
pick() { [ $# -gt 0 ] && echo "${@:$((RANDOM % $# + 1)):1}"; }
workers_of() { pgrep -P "$1" 2>/dev/null; }
while :; do
  rounds=$((rounds + 1))
  [ "$rounds" -le 200 ] || fail "no complete sweep in 200 rounds"
  "$xattn" sweep "$sweep" --out "$out" --quiet >"$work/round$rounds.log" 2>&1 &
  driver=$!
  round_kills=0
  while [ "$done_kills" -lt "$kills" ] && kill -0 "$driver" 2>/dev/null; do
    kind=$((RANDOM % 10))
    if [ "$kind" -lt 2 ]; then
      # Aimed: a worker whose policies have all written their parts is gathering and writing its
      # outputs, or about to; SIGKILL it as soon as one is seen.
      target="" deadline=$((SECONDS + 5))
      while [ -z "$target" ] && [ "$SECONDS" -lt "$deadline" ] && kill -0 "$driver" 2>/dev/null; do
        for w in $(workers_of "$driver"); do
          for d in "$out"/points/*/.partial-"$w"; do
            [ -f "$d/route.json" ] && [ -f "$d/fetch.json" ] && [ -f "$d/predicate.json" ] && target=$w
          done
        done
        [ -n "$target" ] || sleep 0.005
      done
      what=writing
    else
      delay=$((lo_ms + RANDOM % (hi_ms - lo_ms + 1)))
      sleep "$((delay / 1000)).$(printf '%03d' $((delay % 1000)))"
      kill -0 "$driver" 2>/dev/null || break
      case $kind in
      2 | 3 | 4) target=$driver what=driver ;;
      5 | 6) target=$(pick $(workers_of "$driver")) what=worker ;;
      7 | 8) target=$(pick $(for w in $(workers_of "$driver"); do workers_of "$w"; done)) what=simulation ;;
      9)
        # Everything at once, as a machine going down would (the driver last, so none is reparented first).
        target="$(for w in $(workers_of "$driver"); do workers_of "$w"; echo "$w"; done) $driver" what=all
        ;;
      esac
    fi
    [ -n "${target// /}" ] || continue # nothing of that kind running at that moment
    kill -9 $target 2>/dev/null || [ "$what" = all ] || continue
    done_kills=$((done_kills + 1)) round_kills=$((round_kills + 1))
    by_target[$what]=$((${by_target[$what]:-0} + 1))
  done
  rc=0
  wait "$driver" || rc=$?
  driver=""
  check_complete_points "$out"
  # Killed rounds end 137 (the driver) or 1 (a point's run); a round nothing was killed in must pass.
  [ "$rc" -eq 0 ] || [ "$round_kills" -gt 0 ] || fail "round $rounds exited $rc with no kill: $(tail -5 "$work/round$rounds.log")"
  [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || [ "$rc" -eq 137 ] || fail "round $rounds exited $rc: $(tail -5 "$work/round$rounds.log")"
  [ "$rc" -eq 0 ] || continue # resume
  check_identical "$out"
  [ "$done_kills" -lt "$kills" ] || break
  passes=$((passes + 1))
  out=$work/chaos$passes
done
exec 2>&3

n=$(files "$out" | wc -l)
summary=""
for k in "${!by_target[@]}"; do summary+="$k ${by_target[$k]}, "; done
echo "PASS: $done_kills kills (${summary%, }) over $rounds rounds in $passes sweep(s); each $n files identical to the uninterrupted sweep's; reference sweep $((ref_ms / 1000)).$((ref_ms % 1000 / 100)) s, whole test $((($(ms) - start) / 1000)) s"
