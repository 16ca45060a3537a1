#!/usr/bin/env bash
# The engine under congestion, in one run (BENCHMARKS.md, "Congestion"): the Mooncake slice of
# `scenarios/mooncake-1024.yaml` (route, the first N requests) with the trace overlaid 1 to 16
# times (`workload.copies`, 0.37 s apart), then with arrivals 1x to 256x faster
# (`workload.time_scale`), then copies=8 on SimGrid's own comms (`engine.fast_path=false`), the
# reference for the step latencies. Prints one Markdown row per run: wall seconds and peak memory
# of the whole `xattn run` process (/usr/bin/time), transfers per wall second, step latency.
#
#   sim/bench/congestion.sh [XATTN] [REQUESTS]      defaults: build/xattn, 1000
set -euo pipefail
xattn=${1:-build/xattn}
requests=${2:-1000}
here=$(cd "$(dirname "$0")/../.." && pwd)
scenario="$here/scenarios/mooncake-1024.yaml"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

row() { # label, then --set assignments
  local label=$1
  shift
  local sets=()
  for s in "$@"; do sets+=(--set "$s"); done
  /usr/bin/time -f "%e %M" -o "$out/time" "$xattn" run "$scenario" --policy route --quiet --replace --workers 1 \
    --set "workload.max_requests=$requests" "${sets[@]}" --out "$out/run" >/dev/null 2>"$out/err" || {
    echo "| $label | failed: $(tail -1 "$out/err") |"
    return
  }
  read -r wall rss <"$out/time"
  python3 - "$label" "$wall" "$rss" "$out/run/summary.json" <<'EOF'
import json, sys
label, wall, rss, path = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
s = json.load(open(path))
p = s["policies"]["route"]
e, lat = p["engine"], p["step_latency_s"]
print(f"| {label} | {wall:.1f} s | {rss / 1024:.0f} MiB | {e['transfers']:,} | {e['transfers'] / wall / 1e3:,.0f} k | "
      f"{lat['mean'] * 1e3:.4f} ms | {lat['p99'] * 1e3:.4f} ms | {e['max_in_flight'] or e['max_comms_in_flight']} | "
      f"{e['resolved'] / max(1, e['resolves']):.1f} | {'ok' if s['invariants']['ok'] else 'FAILED'} |")
EOF
}

echo "| run | wall | peak | transfers | transfers/s | step mean | step p99 | most in flight | flows per re-solve | invariants |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for c in 1 2 4 8 16; do
  row "copies=$c" "workload.copies=$c" workload.copy_offset=0.37s
done
for x in 1 2 4 8 16 32 64 128 256; do
  row "time_scale=$x" "workload.time_scale=$x"
done
row "copies=8, all SimGrid" workload.copies=8 workload.copy_offset=0.37s engine.fast_path=false
