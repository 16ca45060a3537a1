#!/usr/bin/env bash
# Acceptance: the 3x3 x 2-seed grid on the Slurm back end (a real Slurm: .ci/slurm-up.sh) gives the
# same table as the local back end; a failed task is listed with its log by `collect` and
# resubmitted alone by `resubmit`. Skips (exit 77) where no Slurm is up.
# Usage: sweep_slurm_test.sh XATTN
set -euo pipefail
xattn=$1
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v sbatch >/dev/null || ! sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
  echo "SKIP: no Slurm here (sbatch missing or no node up; .ci/slurm-up.sh starts one)"
  exit 77
fi
work=$(mktemp -d /tmp/xattn-slurm-test.XXXXXX) # under /tmp: slurmd must see the same path
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

t0=$(date +%s.%N)
"$xattn" sweep "$here/testdata/grid3x3.yaml" --out "$work/local" --workers 2 --quiet
t1=$(date +%s.%N)
"$xattn" sweep "$here/testdata/grid3x3.yaml" --out "$work/slurm" --backend slurm --wait --quiet | tee "$work/slurm.out"
t2=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "timings: local %.1f s, slurm %.1f s\n", b - a, c - b }'
grep -q "submitted job" "$work/slurm.out" || { echo "FAIL: nothing was submitted"; exit 1; }
[ "$(ls "$work"/slurm/slurm/logs/*.out | wc -l)" -eq 18 ] || { echo "FAIL: expected 18 task logs"; exit 1; }
cmp "$work/local/results.csv" "$work/slurm/results.csv" || {
  echo "FAIL: the Slurm table differs from the local one"; diff "$work/local/results.csv" "$work/slurm/results.csv" | head; exit 1; }
echo "tables identical: $(($(wc -l <"$work/slurm/results.csv") - 1)) rows"

# A failed task: break one point (its args name a policy that does not exist), lose its results.
victim=$(sed -n 5p "$work/slurm/slurm/tasks.txt")
rm "$work/slurm/points/$victim/summary.json"
cp "$work/slurm/points/$victim/args" "$work/args.good"
sed -i 's/^policies=.*/policies=[nonesuch]/' "$work/slurm/points/$victim/args"
"$xattn" sweep resubmit "$work/slurm" --wait >"$work/broken.out" 2>&1 || true
rc=0
"$xattn" sweep collect "$work/slurm" >"$work/collect.out" 2>&1 || rc=$?
cat "$work/collect.out"
[ "$rc" -eq 1 ] || { echo "FAIL: collect with a failed task exited $rc, expected 1"; exit 1; }
grep -q "FAILED task 4 point $victim" "$work/collect.out" || { echo "FAIL: the failed task is not listed"; exit 1; }
grep -q "nonesuch" "$work/collect.out" || { echo "FAIL: the failed task's log is not shown"; exit 1; }
# Repair it and resubmit: only that task runs.
cp "$work/args.good" "$work/slurm/points/$victim/args"
"$xattn" sweep resubmit "$work/slurm" --wait | tee "$work/resubmit.out"
grep -q "resubmitted 1 tasks (4)" "$work/resubmit.out" || { echo "FAIL: expected task 4 alone resubmitted"; exit 1; }
cmp "$work/local/results.csv" "$work/slurm/results.csv" || { echo "FAIL: table differs after resubmit"; exit 1; }
echo "PASS"
