#!/usr/bin/env bash
# Bounded fuzzing: builds the libFuzzer targets with clang, ASan and UBSan in their own build
# folder (or in XATTN_FUZZ_BUILD, when that folder is already configured with XATTN_FUZZ, as CI's
# sanitizer build is: its tests and the fuzzers share one compile), then fuzzes each for
# XATTN_FUZZ_SECONDS (default 30) starting from its seed corpus (<folder>/fuzz_corpus/<target>/,
# replayed first: a past finding stays a regression test) and the bad-input corpus. Exits non-zero
# on the first crash, leak, timeout or sanitizer report, naming the input that caused it (copy it
# into the seed corpus once fixed).
#   .ci/fuzz.sh [TARGET...]        env: XATTN_FUZZ_SECONDS, XATTN_FUZZ_BUILD (default build-fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${XATTN_FUZZ_SECONDS:-30}
build=${XATTN_FUZZ_BUILD:-build-fuzz}

# target : folder holding it (seeds in FOLDER/fuzz_corpus/TARGET) : extra seed folders
all=(
  "units_fuzz:sim/core:"
  "yaml_fuzz:sim/core:validate/bad_input/scenario validate/bad_input/topology validate/bad_input/profile validate/bad_input/model"
  "topology_fuzz:topologies:validate/bad_input/topology"
  "scenario_fuzz:sim/engine:validate/bad_input/scenario"
  "mooncake_fuzz:workloads:validate/bad_input/trace"
  "claude_code_fuzz:workloads:validate/bad_input/trace"
  "azure_fuzz:workloads:validate/bad_input/trace"
  "xattn_trace_fuzz:workloads:validate/bad_input/trace"
)
selected=("$@")
entries=()
for e in "${all[@]}"; do
  name=${e%%:*}
  if [ ${#selected[@]} -eq 0 ] || [[ " ${selected[*]} " == *" $name "* ]]; then entries+=("$e"); fi
done
names=()
for e in "${entries[@]}"; do names+=("${e%%:*}"); done

command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (apt-get install clang)"; exit 2; }
if ! grep -q '^XATTN_FUZZ:BOOL=ON' "$build/CMakeCache.txt" 2>/dev/null; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DXATTN_FUZZ=ON -DXATTN_BUILD_TESTS=OFF >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target "${names[@]}"

# SimGrid's context switching confuses ASan's fake stacks; nothing here runs a simulation, but
# the scenario loader links SimGrid: keep the options the sanitizer suite uses.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_stack_use_after_return=0:detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
status=0
for e in "${entries[@]}"; do
  IFS=: read -r name folder extra <<<"$e"
  work=$(mktemp -d)
  # libFuzzer adds what it finds to the first folder: a scratch copy, the checkout stays clean.
  mkdir -p "$work/corpus"
  cp -r "$folder/fuzz_corpus/$name/." "$work/corpus/" 2>/dev/null || true
  seeds=()
  for d in $extra; do [ -d "$d" ] && seeds+=("$d"); done
  echo "== $name: ${seconds}s from $(ls "$work/corpus" | wc -l) seeds + ${seeds[*]:-no extra folders}"
  if ! "$build/fuzz/$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$artifacts/$name-" "$work/corpus" "${seeds[@]}" \
      >"$work/log" 2>&1; then
    status=1
    echo "FUZZ FINDING in $name:"
    grep -E 'ERROR|SUMMARY|Test unit written|runtime error|==[0-9]+==' "$work/log" | head -n 20
    tail -n 40 "$work/log"
  else
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|cov:' "$work/log" | tail -n 3
  fi
  rm -rf "$work"
done
exit $status
