#!/usr/bin/env bash
# `xattn run --timeline FILE --window FROM:TO` (docs/file-formats.md, "Timeline"): the quickstart's
# first two simulated seconds under route are a valid trace-event file whose legs nest in their
# steps and whose steps last what requests.csv says; a whole (smaller) run's link counters add up
# to the bytes of links.csv, on the engine's network and on SimGrid's; bad flags exit 2 and write
# nothing.
# Usage: timeline_test.sh XATTN SOURCE_DIR
set -euo pipefail
xattn=$1
src=$2
py=/usr/bin/python3
[ -x "$py" ] || { echo "SKIP: no /usr/bin/python3"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/xattn-timeline.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}

# The checks of one timeline against the run's requests.csv: structure, nesting, the steps.
#   check.py TIMELINE REQUESTS_CSV WINDOW_FROM_US WINDOW_TO_US MIN_WHOLE_REQUESTS
cat >"$work/check.py" <<'PY'
import csv, json, sys
path, requests_csv = sys.argv[1], sys.argv[2]
window_from, window_to, min_whole = float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
ev = json.load(open(path))["traceEvents"]
assert len(ev) > 100, f"only {len(ev)} events"
for e in ev:
    assert "ph" in e and "pid" in e, f"an event without ph or pid: {e}"
    if e["ph"] != "M":
        assert "ts" in e and "tid" in e, f"an event without ts or tid: {e}"
xs = [e for e in ev if e["ph"] == "X"]
for e in xs:
    assert e["ts"] <= window_to and e["ts"] + e["dur"] >= window_from, f"outside the window: {e}"
steps = {}  # (policy, iteration, requester GPU) -> step event
for e in xs:
    if e["cat"] == "step":
        a = e["args"]
        steps[(a["policy"], a["iteration"], a["requester"])] = e
legs = [e for e in xs if e["cat"] in ("leg", "call")]
assert steps and legs, "no steps or no legs"
eps = 1e-3  # us: ts and dur are written to the nanosecond
for e in legs:
    a = e["args"]
    s = steps.get((a["policy"], a["iteration"], a["requester"]))
    assert s is not None, f"a leg without its step: {e}"
    assert s["ts"] - eps <= e["ts"] and e["ts"] + e["dur"] <= s["ts"] + s["dur"] + eps, f"{e} is not within {s}"
    assert set(a.get("requests", [])) <= set(s["args"]["requests"]), f"{e} serves requests outside {s}"
# On every track the slices nest (no partial overlap), as the trace-event format requires of X
# events, and the holder of two slices starting together comes first in the file.
tracks = {}
for i, e in enumerate(xs):
    tracks.setdefault((e["pid"], e["tid"]), []).append((e["ts"], -e["dur"], i, e))
for key, slices in tracks.items():
    open_ends = []
    for ts, neg_dur, i, e in sorted(slices, key=lambda x: x[:3]):
        while open_ends and open_ends[-1][0] <= ts + 1e-6:
            open_ends.pop()
        assert not open_ends or ts - neg_dur <= open_ends[-1][0] + 1e-6, f"{e} overlaps {open_ends[-1][1]} on {key}"
        open_ends.append((ts - neg_dur, e))
    firsts = {}
    for ts, neg_dur, i, e in slices:
        if ts in firsts and -neg_dur > firsts[ts]:
            assert False, f"{e} holds an earlier slice of its start on {key} but comes after it in the file"
        firsts.setdefault(ts, -neg_dur)
flows = [e for e in ev if e["ph"] in "sf"]
assert sorted(e["id"] for e in flows if e["ph"] == "s") == sorted(e["id"] for e in flows if e["ph"] == "f")
names = {e["name"] for e in legs}
policies = {e["args"]["policy"] for e in legs}
wants = {"route": ("route", "query", "probe", "kernel", "answer", "merge"), "fetch": ("fetch", "copy", "splice"),
         "local": ("local", "re-prefill")}
for p in policies:
    for want in wants.get(p, ()):
        assert want in names, f"no '{want}' event (have {sorted(names)})"
# Every (request, step) in one iteration (on each GPU of its requester instance); per request, the
# steps match its row of requests.csv.
by_request = {}
for s in steps.values():
    a = s["args"]
    for r, k in zip(a["requests"], a["steps"]):
        seen = by_request.setdefault((a["policy"], r), {})
        assert seen.get(k, (s["ts"] * 1e-6, s["dur"] * 1e-6)) == (s["ts"] * 1e-6, s["dur"] * 1e-6), \
            f"{a['policy']} request {r} step {k} in two iterations"
        seen[k] = (s["ts"] * 1e-6, s["dur"] * 1e-6)
checked = 0
for row in csv.DictReader(open(requests_csv)):
    r, n = int(row["request"]), int(row["steps"])
    seen = by_request.get((row["policy"], r), {})
    for k, (ts, dur) in seen.items():
        assert 0 <= k < n and dur <= float(row["max_step_s"]) * (1 + 1e-6) + 1e-9, f"request {r} step {k}"
    if n == 0 or float(row["first_step_s"]) < window_from * 1e-6 or float(row["finish_s"]) > window_to * 1e-6:
        continue  # not whole in the window
    assert sorted(seen) == list(range(n)), f"request {r}: steps {sorted(seen)} of {n}"
    durs = [seen[k][1] for k in range(n)]
    close = lambda x, y: abs(x - y) <= 1e-6 * abs(y) + 2e-9
    assert close(sum(durs) / n, float(row["mean_step_s"])), f"request {r}: mean {sum(durs) / n} vs {row}"
    assert close(max(durs), float(row["max_step_s"])), f"request {r}: max {max(durs)} vs {row}"
    assert close(seen[0][0], float(row["first_step_s"])), f"request {r}: first step at {seen[0][0]} vs {row}"
    assert close(seen[n - 1][0] + seen[n - 1][1], float(row["finish_s"])), f"request {r}: finish vs {row}"
    checked += 1
assert checked >= min_whole, f"only {checked} requests lie whole in the window"
counters = [e for e in ev if e["ph"] == "C"]
assert counters and all(v >= 0 for e in counters for v in e["args"].values()), "counters missing or negative"
print(f"ok: {len(ev)} events, {len(steps)} steps, {len(legs)} legs and calls, {len(counters)} counter samples, "
      f"{checked} requests matched with requests.csv")
PY

# 1. The quickstart's first two simulated seconds under route.
"$xattn" run "$src/scenarios/quickstart.yaml" --policy route --quiet --out "$work/out" \
  --timeline "$work/t.json" --window 0s:2s || fail "xattn run --timeline exited $?"
leftovers=$(cd "$work" && ls -A | grep -vxE 't.json|out|check.py|integral.py' || true)
[ -z "$leftovers" ] || fail "left beside the timeline: $leftovers"
"$py" "$work/check.py" "$work/t.json" "$work/out/requests.csv" 0 2e6 5

# Each link direction's utilisation counter integrates to its row of links.csv over a whole run.
#   integral.py TIMELINE OUT_DIR
cat >"$work/integral.py" <<'PY'
import csv, json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
summary = json.load(open(sys.argv[2] + "/summary.json"))
procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
tracks = {}
for e in ev:
    if e["ph"] == "C" and "utilisation" in e["args"]:
        policy = procs[e["pid"]].split(":")[0]
        tracks.setdefault((policy, e["name"]), []).append((e["ts"] * 1e-6, e["args"]["utilisation"]))
# The quickstart's profile turns at most all of a link's capacity into progress: a sample above 1
# would be bytes counted before they moved.
assert all(0 <= u <= 1 + 1e-6 for samples in tracks.values() for _, u in samples), "a link above its capacity"
rows = list(csv.DictReader(open(sys.argv[2] + "/links.csv")))
assert rows and {p for p, _ in tracks} == {r["policy"] for r in rows}, f"counters of {sorted(set(tracks))[:5]}"
for row in rows:
    samples = sorted(tracks.get((row["policy"], row["link"] + " " + row["direction"]), []))
    assert samples and samples[-1][1] == 0, f"{row}: no counter, or it does not end at zero"
    integral = sum(samples[i][1] * (samples[i + 1][0] - samples[i][0]) for i in range(len(samples) - 1))
    want = float(row["utilisation"]) * summary["policies"][row["policy"]]["simulated_time_s"]
    assert abs(integral - want) <= 1e-3 * want + 1e-6, f"{row}: utilisation integrates to {integral} s, want {want}"
print(f"ok: {len(rows)} link directions integrate to links.csv")
PY

# 2. A whole, smaller run of three policies in one file: the same checks, every request whole, and
# the link counters against links.csv; then route again on SimGrid's own comms (engine.fast_path
# false), whose progress the counters read from SimGrid.
"$xattn" run "$src/scenarios/quickstart.yaml" --policy route --policy fetch --policy local --quiet \
  --out "$work/whole" --set workload.generator.requests=40 --timeline "$work/whole.json" ||
  fail "the whole run exited $?"
"$py" "$work/check.py" "$work/whole.json" "$work/whole/requests.csv" 0 1e12 120
"$py" "$work/integral.py" "$work/whole.json" "$work/whole"
"$xattn" run "$src/scenarios/quickstart.yaml" --policy route --quiet --out "$work/simgrid" \
  --set workload.generator.requests=40 --set engine.fast_path=false --timeline "$work/simgrid.json" ||
  fail "the run on SimGrid's comms exited $?"
"$py" "$work/integral.py" "$work/simgrid.json" "$work/simgrid"

# 3. Bad flags: exit 2, one error line, nothing written.
bad() {
  local want=$1
  shift
  rc=0
  "$xattn" run "$src/scenarios/quickstart.yaml" --policy route --quiet --out "$work/bad" "$@" 2>"$work/err" || rc=$?
  [ "$rc" = 2 ] || fail "$* exited $rc, expected 2: $(cat "$work/err")"
  grep -q -- "$want" "$work/err" || fail "$*: expected '$want' in: $(cat "$work/err")"
  [ ! -e "$work/bad" ] && [ ! -e "$work/b.json" ] || fail "$* wrote something"
}
bad "error: --window: the window must end after it begins" --timeline "$work/b.json" --window 2s:1s
bad "error: --window: unknown unit 'x'" --timeline "$work/b.json" --window 0s:2x
bad "error: --window: expected FROM:TO" --timeline "$work/b.json" --window 2s
bad "error: --window: needs --timeline" --window 0s:2s
bad "error: --timeline: no such folder" --timeline "$work/missing/b.json" --window 0s:2s
echo "PASS"
