#!/usr/bin/env bash
# Extreme values across the scenario schema (issue "Reliability"): each value below must end
# `xattn run` with exit 2 (bad input: FILE[:LINE:COL]: error: KEY: what) or exit 1 (the memory
# guard: xattn: stopped: ... engine.max_memory ...), naming the key, never exit 3, never a signal,
# within 60 s. The two that once grew to 24 GB and were killed by the kernel (copies=1e9,
# generator.requests=999999999999) also run under `ulimit -v 4194304` (4 GiB of address space),
# where they must end the same way within 60 s; their wall time and peak RSS are printed.
# XATTN_NO_ADDRESS_CAP=WHY runs those two without the cap (a sanitizer build cannot start under it:
# AddressSanitizer reserves terabytes of shadow address space).
#   extremes_test.sh XATTN SOURCE_DIR
set -uo pipefail
xattn=$1
src=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/xattn-extremes.XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
cases=0

# The quickstart with its model and topology inline, so that their keys can be set too.
inline=$work/inline.yaml
{
  sed -e '/^model:/d' -e '/^topology:/d' "$src/scenarios/quickstart.yaml"
  echo "model:"
  grep -v '^#' "$src/sim/models/deepseek-v3.2.yaml" | sed 's/^/  /'
  echo "topology:"
  grep -v '^#' "$src/topologies/testbed-ndr200.yaml" | sed 's/^/  /'
} >"$inline"

# check SCENARIO KEY_NAMED LIMIT_KB SET...: runs xattn with each --set; LIMIT_KB > 0 runs it under
# ulimit -v LIMIT_KB. KEY_NAMED must appear in the first line on stderr.
check() {
  local scenario=$1 named=$2 limit_kb=$3
  shift 3
  local args=() s
  for s in "$@"; do args+=(--set "$s"); done
  cases=$((cases + 1))
  local out=$work/out$cases err=$work/err$cases timing=$work/time$cases start end code
  start=$(date +%s%N)
  if [ "$limit_kb" -gt 0 ]; then
    local timer=()
    [ -x /usr/bin/time ] && timer=(/usr/bin/time -f '%e s wall, %M KB peak RSS' -o "$timing")
    (
      ulimit -v "$limit_kb"
      exec "${timer[@]}" timeout 60 "$xattn" run "$scenario" --quiet --out "$out" "${args[@]}"
    ) >/dev/null 2>"$err"
  else
    timeout 60 "$xattn" run "$scenario" --quiet --out "$out" "${args[@]}" >/dev/null 2>"$err"
  fi
  code=$?
  end=$(date +%s%N)
  local first took
  first=$(grep -v '^Command exited' "$err" | awk 'NR == 1')
  took=$(printf '%d.%03d' $(((end - start) / 1000000000)) $(((end - start) / 1000000 % 1000)))
  local what="$*"
  if [ "$code" != 1 ] && [ "$code" != 2 ]; then
    echo "FAIL [$what]: exit $code (expected 1 or 2) after ${took}s: $(head -c 600 "$err")"
    failures=$((failures + 1))
    return
  fi
  if grep -qE 'internal error|Sanitizer|runtime error:|Aborted|core dumped' "$err"; then
    echo "FAIL [$what]: a crash or an internal error on stderr: $(head -c 600 "$err")"
    failures=$((failures + 1))
    return
  fi
  if [ "$code" = 2 ] && ! [[ "$first" == *": error: "* ]]; then
    echo "FAIL [$what]: exit 2 without a FILE: error: KEY: line: $first"
    failures=$((failures + 1))
    return
  fi
  if [ "$code" = 1 ] && ! [[ "$first" == "xattn: stopped: "*"engine.max_memory"* ]]; then
    echo "FAIL [$what]: exit 1 without the guard's line: $first"
    failures=$((failures + 1))
    return
  fi
  if ! [[ "$first" == *"$named"* ]]; then
    echo "FAIL [$what]: the message does not name $named: $first"
    failures=$((failures + 1))
    return
  fi
  local extra=""
  [ -f "$timing" ] && extra=" [ulimit -v $limit_kb: $(tail -n 1 "$timing")]"
  echo "ok   exit $code in ${took}s$extra: $what"
  echo "       $first" | cut -c1-220
}

q=$src/scenarios/quickstart.yaml
big=4194304 # ulimit -v, KiB: 4 GiB
if [ -n "${XATTN_NO_ADDRESS_CAP:-}" ]; then
  echo "no address-space cap: $XATTN_NO_ADDRESS_CAP"
  big=0
fi
# The two that once took 24 GB: under a 4 GiB address-space cap.
check "$q" workload.copies "$big" workload.copies=1000000000
check "$q" workload.generator.requests "$big" workload.generator.requests=999999999999
# Workload shaping.
check "$q" workload.time_scale 0 workload.time_scale=1e-300
check "$q" workload.time_scale 0 workload.time_scale=1e308
check "$q" workload.time_scale 0 workload.time_scale=.nan
check "$q" workload.time_scale 0 workload.time_scale=.inf
check "$q" workload.time_scale 0 workload.time_scale=-1
check "$q" workload.time_scale 0 workload.time_scale=0
check "$q" workload.copies 0 workload.copies=0
check "$q" workload.copies 0 workload.copies=-3
check "$q" workload.copies 0 workload.copies=1e400
check "$q" workload.copy_offset 0 workload.copy_offset=1e308s
check "$q" workload.copy_offset 0 workload.copies=65536 workload.copy_offset=1min
check "$q" workload.max_output_tokens 0 workload.max_output_tokens=1e18
check "$q" workload.max_requests 0 workload.max_requests=1e300
# The generator.
check "$q" workload.generator.requests 0 workload.generator.requests=4294967296
check "$q" workload.generator.requests 0 workload.generator.requests=0
check "$q" workload.generator.corpus.tokens 0 workload.generator.corpus.tokens=1e300
check "$q" workload.generator.arrival.interarrival 0 workload.generator.arrival.interarrival=1e-300s
check "$q" workload.generator.output.mean 0 workload.generator.output.mean=1e308
check "$q" workload.generator.agents.count 0 workload.generator.agents.count=1000000000
check "$q" workload.generator.block_tokens 0 workload.generator.block_tokens=1e15
check "$q" workload.generator.corpus.zipf_s 0 workload.generator.corpus.zipf_s=1e308
# Engine, corpus, selection, instances, seed.
check "$q" engine.max_batch 0 engine.max_batch=0
check "$q" engine.max_batch 0 engine.max_batch=1e12
check "$q" engine.cache_budget 0 engine.cache_budget=1e308B
check "$q" engine.max_memory 0 engine.max_memory=1B
check "$q" engine.predicate_prior_steps 0 engine.predicate_prior_steps=-0.5
check "$q" corpus.chunk_tokens 0 corpus.chunk_tokens=0
check "$q" corpus.chunk_tokens 0 corpus.chunk_tokens=1e300
check "$q" corpus.holder_hbm 0 corpus.holder_hbm=1e-300B
check "$q" selection.top_k_tokens 0 selection.top_k_tokens=1e20
check "$q" selection.recent_fraction 0 selection.recent_fraction=2
check "$q" instances.tp 0 instances.tp=1e300
check "$q" seed 0 seed=1e300
# The model and the topology, inline.
check "$inline" model.layers 0 model.layers=1000000000
check "$inline" model.heads 0 model.heads=0
check "$inline" topology.nodes 0 topology.nodes=1e12
check "$inline" topology.fabric.link.bandwidth 0 topology.fabric.link.bandwidth=1e-300Bps
check "$inline" topology.nvlink.latency 0 topology.nvlink.latency=1e308s
check "$inline" topology.fabric.oversubscription 0 topology.fabric.oversubscription=1e308
# Every key in range, the run too large for its memory: refused up front or stopped by the guard.
check "$q" engine.max_memory 0 workload.copies=65536 workload.generator.requests=20 engine.max_memory=300MiB

echo "$cases extreme values, $failures failure(s)"
[ "$failures" -eq 0 ]
