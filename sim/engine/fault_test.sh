#!/usr/bin/env bash
# Fault injection (docs/architecture.md, "Fault injection"): one fault, named by XATTN_FAULT, is
# injected into a small real run of the binary (quickstart, 20 requests, one policy); the check
# that guards against it must end the run with its exit code and a line on stderr naming it. The
# same run without the fault passes, so the fault, not the settings, is what is caught.
#   fault_test.sh XATTN SOURCE_DIR FAULT      (FAULT: a name of sim/core/fault.hpp, none, unknown)
set -uo pipefail
xattn=$1
src=$2
fault=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/xattn-fault.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $fault: $*"
  exit 1
}

# FAULT -> policy, extra settings, exit code, a line on stderr (extended regex), a summary.json key.
settings=()
key=""
case $fault in
none) policy=route code=0 line='' ;;
unknown) policy=route code=2 line="^environment: error: XATTN_FAULT: unknown fault 'no-such-fault' \(one of: lost-answer," ;;
lost-answer)
  policy=route code=1 key='"all_requests_finished": false'
  line='^xattn: invariant failed: route: all_requests_finished: [0-9]+ of 20 requests arrived but did not finish'
  ;;
transfer-done-twice)
  policy=route code=3
  # The first transfer of a step is its selection's under DSA (the quickstart's), else a call's.
  line='^xattn: internal error: route: .*sim/engine/iteration.cpp:[0-9]+: check failed: .*(plan->outstanding > 0: an operation|plan->selecting > 0: a selection) of an iteration completed twice$'
  ;;
event-in-past)
  policy=route code=3
  line='^xattn: internal error: route: .*sim/engine/clock.hpp:[0-9]+: check failed: delay_s >= 0: an event scheduled in the past$'
  ;;
cache-over-budget)
  # A budget the fetched chunks overflow within 20 requests: the cache must evict.
  policy=fetch code=1 key='"caches_within_budget": false' settings=(--set engine.cache_budget=200MB)
  line="^xattn: invariant failed: fetch: caches_within_budget: requester [0-9]+'s cache held [0-9.]+ bytes, over its budget of 200000000"
  ;;
bytes-lost)
  policy=route code=1 key='"bytes_accounted": false'
  line='^xattn: invariant failed: route: bytes_accounted: bytes not conserved: handed to transfers .*, arrived '
  ;;
step-too-short)
  policy=route code=1 key='"step_bound_violations": [1-9]'
  line='^xattn: invariant failed: route: step_bounds: a step lasted [0-9.e-]+ s, below its idle closed form'
  ;;
prefill-overlap)
  # Always re-prefill keeps the requester's GPU busy the whole run (the quickstart's busiest
  # resource): re-prefills that overlap compute more GPU time than the run lasts.
  policy=local code=1 key='"gpus_within_wall": false'
  line='^xattn: invariant failed: local: gpus_within_wall: requester node0.gpu[0-9]+ computed for [0-9.]+ s of GPU time in a run of [0-9.]+ s'
  ;;
*) fail "no expected outcome for this fault: add one to $0 (every fault of sim/core/fault.hpp has a test)" ;;
esac

run() { # run OUT: the small run, stderr to OUT.err, exit code echoed
  # Attention alone (engine.step: attention): the faults act on the calls, and a step of calls
  # only is what the step bound and the requester's GPU time are checked against.
  "$xattn" run "$src/scenarios/quickstart.yaml" --out "$1" --quiet --workers 1 --policy "$policy" \
    --set workload.generator.requests=20 --set engine.step=attention --set instances.dp_attention=1 \
    --set instances.ep=1 "${settings[@]}" >"$1.out" 2>"$1.err"
  echo $?
}

# Without the fault the same run passes.
rc=$(unset XATTN_FAULT; run "$work/clean")
[ "$rc" = 0 ] || fail "the run without a fault exited $rc: $(cat "$work/clean.err")"
grep -q '"ok": true' "$work/clean/summary.json" || fail "the run without a fault broke an invariant"
[ "$fault" = none ] && { echo "ok: no fault, exit 0"; exit 0; }

name=$fault
[ "$fault" = unknown ] && name=no-such-fault
rc=$(XATTN_FAULT=$name run "$work/faulty")
cat "$work/faulty.err"
[ "$rc" = "$code" ] || fail "exit $rc, expected $code"
grep -Eq "$line" "$work/faulty.err" || fail "no line on stderr matching: $line"
if [ "$fault" != unknown ]; then
  grep -q "^xattn: fault injected: $fault (pass 1 of its site)$" "$work/faulty.err" || fail "the fault was not injected"
fi
if [ -n "$key" ]; then
  # An invariant: the run finished and wrote its results, the failed invariant marked.
  grep -Eq "$key" "$work/faulty/summary.json" || fail "summary.json does not mark it ($key)"
  grep -q '"ok": false' "$work/faulty/summary.json" || fail "summary.json says the invariants hold"
else
  # Bad input or a bug: nothing written.
  [ ! -e "$work/faulty/summary.json" ] || fail "a summary.json was written"
fi
echo "ok: XATTN_FAULT=$name -> exit $rc, $(grep -Em1 "$line" "$work/faulty.err")"
