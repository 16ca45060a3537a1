"""A sweep's figures along its first key (sim/study/report.py): p99 step latency (the capacity
curve), mean and p99 TPOT, one panel per value of the other keys, one colour per policy
(report_style.POLICY). A numeric key is an axis (markers joined by lines); a categorical one
(topologies, holder lists) is a row of categories with markers side by side per policy and no lines
between them. Bars span the seeds (fastest to slowest), or under an ensemble sweep, for a figure
the ensemble reports, its 5% to 95% over the members."""
import json
import math
import os
from collections import defaultdict

from report_style import (colour, figure_with_legend, log_limits, png, policy_order, read_csv, seconds_axis,
                          seconds_label, wrap, write_csv)


def _number(v):
    try:
        x = float(v)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _plan_sizes(d, key):
    """A plan folder's size for each value of its size key, or {} (not a plan, another key)."""
    path = os.path.join(d, "plan.json")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        p = json.load(f)
    if p.get("size_key") != key:
        return {}
    return {e[key]: e["size"] for e in p["evaluations"] if key in e}


# The figures along a sweep, in the report's order: results.csv's column, what it is, the report's
# caption, the CSV written, and its ensemble columns' stem where an ensemble sweep reports it
# (sim/study/table.cpp).
ALONG = {
    "step_p99_s": ("p99 step latency", "Capacity curve: p99 step latency along the sweep", "capacity.csv", None),
    "tpot_mean_s": ("mean TPOT", "The mean TPOT along the sweep, per policy", "tpot_mean.csv", "tpot_s_mean"),
    "tpot_p99_s": ("p99 TPOT", "The p99 TPOT along the sweep, per policy", "tpot_p99.csv", None),
}


def along(d, meta, rd, column):
    what, _, csv_name, ensemble = ALONG[column]
    rows = read_csv(os.path.join(d, "results.csv"))
    keys = [k for k in meta.get("keys", []) if rows and k in rows[0]]
    x_key = keys[0] if keys else "point"
    facet_keys = keys[1:]
    order = list(dict.fromkeys(r[x_key] for r in rows))
    sizes = _plan_sizes(d, x_key)
    if sizes:  # a plan's sizes in their order (its GPU lists sort as text otherwise)
        order.sort(key=lambda x: sizes.get(x, math.inf))
    numeric = all(_number(x) is not None for x in order)
    banded = ensemble is not None and rows and (ensemble + "_p5") in rows[0] and all(
        _number(r[ensemble + "_p5"]) is not None for r in rows)
    acc = defaultdict(list)
    band = defaultdict(list)
    over = set()  # points where the policy did not keep up with the load (under some seed): hollow
    for r in rows:
        facet = ", ".join("%s = %s" % (k, r[k]) for k in facet_keys)
        acc[(facet, r["policy"], r[x_key])].append(float(r[column]))
        if r.get("overloaded") == "true":
            over.add((facet, r["policy"], r[x_key]))
        if banded:
            band[(facet, r["policy"], r[x_key])] += [float(r[ensemble + "_p5"]), float(r[ensemble + "_p95"])]
    facets = list(dict.fromkeys(f for f, _, _ in acc))
    pols = policy_order(p for _, p, _ in acc)
    # Each point: the mean over seeds, and its bar (the ensemble's 5% to 95% where banded, else the
    # seeds' span).
    spread = band if banded else acc
    out = []
    for f in facets:
        for p in pols:
            for x in order:
                if (f, p, x) in acc:
                    v = acc[(f, p, x)]
                    mean = sum(v) / len(v)
                    out.append([p, f, x, mean, min(spread[(f, p, x)] + [mean]), max(spread[(f, p, x)] + [mean]),
                                len(v), (f, p, x) in over])
    write_csv(os.path.join(rd, csv_name),
              ["policy", "panel", x_key, column + "_mean", "low", "high", "seeds", "overloaded"], out)
    ncols = 1 if len(facets) == 1 else (2 if len(facets) in (2, 4) else 3)
    nrows = math.ceil(len(facets) / ncols)
    fig, axes, lax = figure_with_legend(nrows, ncols, height=2.6 + 4.4 * nrows, legend_in=0.8, sharey=True)
    xs_num = [_number(x) for x in order] if numeric else []
    log_x = numeric and min(xs_num) > 0 and max(xs_num) / min(xs_num) >= 8
    width = 0.7 / len(pols)
    for i, f in enumerate(facets):
        ax = axes[i // ncols][i % ncols]
        for j, p in enumerate(pols):
            pts = [r for r in out if r[0] == p and r[1] == f]
            if not pts:
                continue
            if numeric:
                xs = [_number(r[2]) for r in pts]
                style = {"marker": "o", "ls": "-", "lw": 2}
            else:
                xs = [order.index(r[2]) - 0.35 + (j + 0.5) * width for r in pts]
                style = {"marker": "o", "ls": "none"}
            ax.errorbar(xs, [r[3] for r in pts], yerr=[[r[3] - r[4] for r in pts], [r[5] - r[3] for r in pts]],
                        capsize=4, ms=8, color=colour(p), label=p, **style)
            hollow = [(x, r[3]) for x, r in zip(xs, pts) if r[7]]
            if hollow:  # a growing queue's latency: drawn, not ranked
                ax.plot(*zip(*hollow), ls="none", marker="o", ms=8, mfc="white", mec=colour(p), mew=2, zorder=3)
        if numeric:
            if log_x:
                ax.set_xscale("log")
            ax.set_xticks(xs_num)
            ax.set_xticklabels(order)
            ax.minorticks_off()
        else:
            ax.set_xticks(range(len(order)))
            ax.set_xticklabels([wrap(x, 10 * 3 // ncols) for x in order])
            ax.set_xlim(-0.6, len(order) - 0.4)
            for k in range(1, len(order)):
                ax.axvline(k - 0.5, color="#dddddd", lw=1)
        ax.set_yscale("log")
        seconds_axis(ax.yaxis)
        ax.set_xlabel(x_key)
        ax.grid(alpha=0.3, axis="y")
        if f:
            ax.set_title(wrap(f, 90 // ncols), fontsize=11)
        if i % ncols == 0:
            ax.set_ylabel(what + " (log scale)")
    for k in range(len(facets), nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    axes[0][0].set_ylim(*log_limits([v for r in out for v in (r[4], r[5])]))
    seeds = max(r[6] for r in out)
    notes = (["mean over seeds"] if seeds > 1 else []) + (
        ["bars from the members' 5% to 95% (an ensemble of profile draws; under 20 members, the least and the most)"]
        if banded else ["bars from the fastest to the slowest seed"] if seeds > 1 else []) + (
        ["hollow: did not keep up with the load (a growing queue's figure, not ranked)"] if over else [])
    fig.suptitle(wrap(what + " along the sweep" + (": " + "; ".join(notes) if notes else " (one seed per point)"), 90),
                 x=0.01, ha="left")
    lax.legend(*axes[0][0].get_legend_handles_labels(), title="policy", loc="center", ncol=len(pols))
    return png(fig)


def plan(d, rd):
    """`xattn plan`'s answer (plan.json): the judged figure of every configuration against its size
    (the decode GPUs or whatever plan.size_key counts), one panel per combination of the knobs, the
    SLO as a line, each evaluation marked meets / fails / overloaded, the answer ringed."""
    with open(os.path.join(d, "plan.json")) as f:
        p = json.load(f)
    slo = p["slo"]
    judged = next(k for k in p["evaluations"][0] if k.startswith(slo["metric"]))
    panels = defaultdict(list)
    for e in p["evaluations"]:
        label = ", ".join("%s = %s" % kv for kv in sorted(e.get("knobs", {}).items()))
        panels[label].append(e)
    names = list(panels)
    write_csv(os.path.join(rd, "plan.csv"), ["knobs", "size", judged, "meets", "overloaded", "fits"],
              [[n, e["size"], "" if e[judged] is None else e[judged], e["meets"], e["overloaded"],
                e.get("refused") is None] for n in names for e in sorted(panels[n], key=lambda e: e["size"])])
    ncols = 1 if len(names) == 1 else (2 if len(names) in (2, 4) else 3)
    nrows = math.ceil(len(names) / ncols)
    fig, axes, lax = figure_with_legend(nrows, ncols, height=2.4 + 3.6 * nrows, legend_in=1.1, sharey=True)
    answer = p.get("answer") or {}
    values = [e[judged] for e in p["evaluations"] if e[judged] is not None] + [slo["max_s"]]
    floor = log_limits(values)[0]  # where a configuration that does not fit is marked
    kinds = [("meets", {"marker": "o", "color": "#2ca02c"}), ("fails", {"marker": "o", "color": "#d62728",
                                                                       "mfc": "none"}),
             ("overloaded", {"marker": "x", "color": "#d62728"})]
    for i, n in enumerate(names):
        ax = axes[i // ncols][i % ncols]
        unfit = [e for e in panels[n] if e[judged] is None]
        ax.plot([e["size"] for e in unfit], [floor] * len(unfit), ls="none", marker="s", ms=9, color="#7f7f7f",
                label="does not fit (refused)", zorder=3, clip_on=False)
        pts = sorted((e for e in panels[n] if e[judged] is not None), key=lambda e: e["size"])
        ax.plot([e["size"] for e in pts], [e[judged] for e in pts], color="#999999", lw=1, zorder=1)
        for kind, style in kinds:
            sel = [e for e in pts if (kind == "overloaded" and e["overloaded"]) or
                   (kind == "meets" and e["meets"]) or (kind == "fails" and not e["meets"] and not e["overloaded"])]
            ax.plot([e["size"] for e in sel], [e[judged] for e in sel], ls="none", ms=10, mew=2, label=kind, zorder=3,
                    **style)
        for e in pts:
            if answer and e["size"] == answer.get("size") and e.get("knobs") == answer.get("knobs"):
                ax.plot([e["size"]], [e[judged]], ls="none", marker="o", ms=20, mfc="none", mec="#222222", mew=2,
                        label="the answer", zorder=4)
        ax.axhline(slo["max_s"], color="#222222", ls="--", lw=1.5, label="SLO: %s <= %s" % (
            slo["metric"], seconds_label(slo["max_s"])))
        sizes = sorted({e["size"] for e in panels[n]})
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes)
        ax.set_xticklabels(["%g" % s for s in sizes])
        ax.minorticks_off()
        ax.set_yscale("log")
        seconds_axis(ax.yaxis)
        ax.set_xlabel(p.get("size_key", "size") + " (count)")
        ax.grid(alpha=0.3, axis="y")
        if n:
            ax.set_title(wrap(n, 90 // ncols), fontsize=11)
        if i % ncols == 0:
            ax.set_ylabel(judged)
    for k in range(len(names), nrows * ncols):
        axes[k // ncols][k % ncols].set_visible(False)
    axes[0][0].set_ylim(*log_limits(values))
    handles, labels = [], []
    for i in range(len(names)):
        for h, l in zip(*axes[i // ncols][i % ncols].get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    fig.suptitle("plan %s: the smallest size whose %s meets the SLO" % (p.get("plan", ""), slo["metric"]), x=0.01,
                 ha="left")
    lax.legend(handles, labels, loc="center", ncol=min(len(labels), 4))
    return png(fig)
