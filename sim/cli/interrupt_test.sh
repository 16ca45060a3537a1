#!/usr/bin/env bash
# `xattn run` interrupted (README.md, "Where outputs go"): a complete earlier run's outputs survive a later
# run into the same folder that is stopped by SIGINT (or SIGTERM) part-way; the stopped run exits
# 130 and leaves summary.interrupted.json marked interrupted, and no temporary file behind. The
# summary keeps the work done (issue "Reliability"): each policy stopped part-way hands in its
# figures so far (marked partial: requests done, step latencies, simulated time reached), here a
# few seconds into the Mooncake benchmark; a run stopped by its memory guard (engine.max_memory)
# exits 1 naming the key, with the same partial figures.
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

# 2. A long run into the same folder (--replace: without it the folder is refused), stopped after a second.
"$xattn" run "$src/scenarios/quickstart.yaml" --out "$out" --replace --quiet \
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

# 4. The work done so far is kept: SIG$sig a few seconds into the Mooncake benchmark (12,031 requests
#    on 1,024 GPUs, about a minute) gives the policy's partial figures.
moon=$work/moon
"$xattn" run "$src/scenarios/mooncake-1024.yaml" --out "$moon" --quiet >"$work/moon.log" 2>&1 &
pid=$!
sleep 4
kill -0 "$pid" 2>/dev/null || fail "the Mooncake run ended within 4 s: $(cat "$work/moon.log")"
kill -"$sig" "$pid"
wait "$pid"
code=$?
[ "$code" = 130 ] || fail "Mooncake: exit $code after SIG$sig, expected 130: $(cat "$work/moon.log")"
partial() { # FILE: checks each policy's partial figures, prints them
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s.get("interrupted") is True, "not marked interrupted"
assert s["policies"], "no policy's figures"
for name, p in s["policies"].items():
    assert p.get("partial") is True, name + ": not marked partial"
    for k in ("requests_done", "steps", "arrived", "simulated_time_s"):
        assert k in p, name + ": no " + k
    assert p["simulated_time_s"] > 0, name + ": no simulated time reached"
    st = p["step_latency_s"]
    if p["requests_done"] > 0:
        assert 0 < st["p50"] <= st["p99"] and st["mean"] > 0, name + ": step latencies " + str(st)
    print(f"{name}: {p['requests_done']} requests done of {p['arrived']} arrived, {p['steps']} steps, "
          f"step mean {st['mean'] * 1e3:.3f} ms, p50 {st['p50'] * 1e3:.3f} ms, p99 {st['p99'] * 1e3:.3f} ms, "
          f"{p['simulated_time_s']:.1f} s simulated")
PY
}
figures=$(partial "$moon/summary.interrupted.json") || fail "Mooncake: partial figures: $figures"
done_route=$(/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['policies']['route']['requests_done'])" \
  "$moon/summary.interrupted.json")
[ "$done_route" -gt 0 ] || fail "Mooncake: no request done 4 s in: $figures"
leftovers=$(cd "$moon" && ls -A | grep -vx summary.interrupted.json)
[ -z "$leftovers" ] || fail "Mooncake: left behind in the output folder: $leftovers"
echo "ok: Mooncake, SIG$sig after 4 s: $figures"

# 5. The memory guard stops a run the same way, exit 1, naming the key: every copy of 20 requests
#    arrives at once, the active requests outgrow 300 MiB.
guard=$work/guard
"$xattn" run "$src/scenarios/quickstart.yaml" --out "$guard" --quiet --policy route --workers 1 --set workload.copies=32768 \
  --set workload.generator.requests=20 --set engine.max_memory=300MiB >"$work/guard.log" 2>&1
code=$?
[ "$code" = 1 ] || fail "guard: exit $code, expected 1: $(cat "$work/guard.log")"
grep -q "^xattn: stopped: .*engine.max_memory: " "$work/guard.log" || fail "guard: no line naming the key: $(cat "$work/guard.log")"
grep -q '"limit": "engine.max_memory"' "$guard/summary.interrupted.json" || fail "guard: the summary does not name the limit"
figures=$(partial "$guard/summary.interrupted.json") || fail "guard: partial figures: $figures"
echo "ok: the memory guard -> exit 1, $(head -c 160 "$work/guard.log")..."

echo "ok: SIG$sig -> exit 130 in ${took}s, earlier results intact, summary.interrupted.json written"
