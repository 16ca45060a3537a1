#!/usr/bin/env bash
# The fused path against all-SimGrid where congestion makes a run chaotic (docs/architecture.md,
# "Fused and all-SimGrid"): the first 300 Mooncake requests at 8 copies, route, full step, each
# path run MEMBERS times with every arrival date scaled by 1 + k x 1e-9 (k = 0 .. MEMBERS-1), a
# perturbation far below anything either solver resolves. One run's p99 moves by about 1% under
# it, so two runs are compared as ensembles: the two paths' ensemble means of the mean and p99
# step and TPOT must agree to 0.5% (p99: or to three standard errors of their difference, where
# the members' own spread makes that wider). Prints each member and the comparison.
# Usage: fused_simgrid_test.sh XATTN SRC [MEMBERS]   (8 by default: about 4 minutes on two cores)
set -euo pipefail
xattn=$1
src=$2
members=${3:-8}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

scales=$(/usr/bin/python3 -c "print(', '.join(repr(1 + k * 1e-9) for k in range($members)))")
cat >"$work/sweep.yaml" <<EOF
name: fused-vs-simgrid
base: $src/scenarios/mooncake-1024.yaml
set: {workload.max_requests: 300, workload.copies: 8}
grid:
  engine.fast_path: [true, false]
  workload.time_scale: [$scales]
seeds: [1]
policies: [route]
workers: 2
EOF
"$xattn" sweep "$work/sweep.yaml" --out "$work/sweep" --quiet >/dev/null
/usr/bin/python3 - "$work/sweep/results.csv" "$members" <<'PY'
import csv, math, statistics as st, sys
rows = list(csv.DictReader(open(sys.argv[1])))
members = int(sys.argv[2])
assert all(r["invariants_ok"] == "true" for r in rows), "an invariant failed"
paths = {"fused": [r for r in rows if r["engine.fast_path"] == "true"],
         "simgrid": [r for r in rows if r["engine.fast_path"] == "false"]}
assert all(len(v) == members for v in paths.values()), {k: len(v) for k, v in paths.items()}
ok = True
for fig in ("step_mean_s", "step_p99_s", "tpot_mean_s", "tpot_p99_s"):
    f = [float(r[fig]) for r in paths["fused"]]
    s = [float(r[fig]) for r in paths["simgrid"]]
    mf, ms = st.mean(f), st.mean(s)
    se = math.sqrt((st.stdev(f) / mf) ** 2 / members + (st.stdev(s) / ms) ** 2 / members)
    diff = mf / ms - 1
    bound = max(0.005, 3 * se) if "p99" in fig else 0.005
    held = abs(diff) <= bound
    ok = ok and held
    print("%-12s fused %s ms  simgrid %s ms" % (fig, " ".join("%.3f" % (1e3 * x) for x in f),
                                               " ".join("%.3f" % (1e3 * x) for x in s)))
    print("%-12s ensemble means %.4f and %.4f ms: %+.3f%% (members' spread %.2f%% and %.2f%%, standard error "
          "of the difference %.3f%%), bound %.2f%%: %s" % (fig, 1e3 * mf, 1e3 * ms, 100 * diff,
          100 * st.stdev(f) / mf, 100 * st.stdev(s) / ms, 100 * se, 100 * bound, "holds" if held else "FAILS"))
sys.exit(0 if ok else 1)
PY
