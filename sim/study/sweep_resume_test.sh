#!/usr/bin/env bash
# Acceptance: a 3x3 grid with 2 seeds runs locally, is interrupted (SIGINT), resumes, and the
# gathered table has 18 x 3 policies rows with no duplicates; resuming again runs nothing.
# Usage: sweep_resume_test.sh XATTN
set -euo pipefail
xattn=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$work/grid
complete() { { find "$out/points" -name summary.json 2>/dev/null || true; } | wc -l; }

# Start, wait until a few points are complete, interrupt.
"$xattn" sweep "$here/testdata/grid3x3.yaml" --out "$out" --workers 2 >"$work/first.out" 2>&1 &
pid=$!
for _ in $(seq 600); do
  n=$(complete)
  [ "$n" -ge 3 ] && break
  sleep 0.1
done
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
cat "$work/first.out"
[ "$rc" -eq 130 ] || { echo "FAIL: interrupted sweep exited $rc, expected 130"; exit 1; }
done1=$(complete)
echo "after the interrupt: $done1 of 18 points complete"
[ "$done1" -ge 3 ] && [ "$done1" -lt 18 ] || { echo "FAIL: expected a partial sweep, got $done1 points"; exit 1; }
grep -q "interrupted" "$out/sweep.log" || { echo "FAIL: the run log does not record the interrupt"; exit 1; }
first=$(find "$out/points" -name summary.json | sort | awk 'NR == 1')
stamp=$(stat -c %y "$first")

# Resume: only the missing points run.
"$xattn" sweep "$here/testdata/grid3x3.yaml" --out "$out" --workers 2 | tee "$work/second.out"
grep -q "$done1 already complete" "$work/second.out" || { echo "FAIL: resume did not skip the $done1 complete points"; exit 1; }
[ "$(stat -c %y "$first")" = "$stamp" ] || { echo "FAIL: a complete point was rerun"; exit 1; }

table=$out/results.csv
rows=$(($(wc -l <"$table") - 1))
echo "table: $rows rows"
[ "$rows" -eq 54 ] || { echo "FAIL: expected 18 x 3 = 54 rows, got $rows"; exit 1; }
# Columns: point, engine.max_batch, corpus.chunk_tokens, seed, policy, ...
dups=$(tail -n +2 "$table" | cut -d, -f1,5 | sort | uniq -d | wc -l)
[ "$dups" -eq 0 ] || { echo "FAIL: duplicate (point, policy) rows"; exit 1; }
[ "$(tail -n +2 "$table" | cut -d, -f1 | sort -u | wc -l)" -eq 18 ] || { echo "FAIL: expected 18 distinct points"; exit 1; }
for p in route fetch predicate; do
  [ "$(tail -n +2 "$table" | cut -d, -f5 | grep -cx "$p")" -eq 18 ] || { echo "FAIL: policy $p is not in 18 rows"; exit 1; }
done

# A third run finds everything complete, runs nothing and rewrites the same table.
cp "$table" "$work/table.before"
"$xattn" sweep "$here/testdata/grid3x3.yaml" --out "$out" --quiet | tee "$work/third.out"
grep -q "0 ran, 18 already complete" "$work/third.out" || { echo "FAIL: a complete sweep reran points"; exit 1; }
cmp "$table" "$work/table.before" || { echo "FAIL: the table changed"; exit 1; }
echo "PASS"
