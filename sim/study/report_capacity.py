"""The load search of `xattn capacity` (sim/study/report.py): every probe of every policy against
its load (a multiple of the scenario's arrival rate, log axis), on two panels sharing that axis:
the share of the offered output tokens delivered, with the overload line (1 - the scenario's
engine.overload_tolerance), and, with an SLO, the SLO's figure with the SLO as a dashed line. A
probe is marked meets / fails / overloaded; each policy's answer (its highest meeting load) is
ringed. The data is report/capacity_probes.csv, drawn from capacity.json."""
import json
import os

from matplotlib.ticker import FuncFormatter

from report_style import (colour, figure_with_legend, log_limits, png, policy_order, seconds_axis, seconds_label,
                          write_csv)


def load_search(d, rd):
    with open(os.path.join(d, "capacity.json")) as f:
        c = json.load(f)
    slo = c.get("slo")
    pols = policy_order(c.get("policies", {}))
    rows = []
    for p in pols:
        for q in sorted(c["policies"][p]["probes"], key=lambda q: q["load"]):
            rows.append([p, q["load"], q["meets"], q["overloaded"], q["delivered_share"],
                         q["metric_s"] if slo else "", q["why"]])
    write_csv(os.path.join(rd, "capacity_probes.csv"),
              ["policy", "load", "meets", "overloaded", "delivered_share", slo["metric"] if slo else "slo_figure",
               "why"], rows)
    if not rows:
        return None
    panels = 2 if slo else 1
    fig, axes, lax = figure_with_legend(1, panels, height=5.6, legend_in=1.1, sharex=True)
    floor = 1 - c.get("overload_tolerance", 0)
    for i, (key, label) in enumerate([("delivered_share", "delivered share of the offered output tokens")] +
                                     ([("metric_s", slo["metric"])] if slo else [])):
        ax = axes[0][i]
        for p in pols:
            probes = sorted(c["policies"][p]["probes"], key=lambda q: q["load"])
            ax.plot([q["load"] for q in probes], [q[key] for q in probes], color=colour(p), lw=1.2, label=p, zorder=2)
            for q in probes:
                style = ({"marker": "x"} if q["overloaded"] else {"marker": "o"} if q["meets"] else
                         {"marker": "o", "mfc": "none"})
                ax.plot([q["load"]], [q[key]], ls="none", ms=8, mew=2, color=colour(p), zorder=3, **style)
            answer = c["policies"][p].get("answer")
            if answer:
                ax.plot([answer["load"]], [answer[key]], ls="none", marker="o", ms=18, mfc="none", mec="#222222",
                        mew=2, label="the answer" if p == pols[0] else None, zorder=4)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: "%gx" % v))
        ax.set_xlabel("load (a multiple of the scenario's arrival rate)")
        ax.grid(alpha=0.3)
        if key == "delivered_share":
            ax.axhline(floor, color="#222222", ls=":", lw=1.5,
                       label="keeping up: at least %.0f%% delivered" % (100 * floor))
            ax.set_ylim(0, 1.1)
            ax.set_ylabel(label)
        else:
            ax.axhline(slo["max_s"], color="#222222", ls="--", lw=1.5,
                       label="SLO: %s <= %s" % (slo["metric"], seconds_label(slo["max_s"])))
            ax.set_yscale("log")
            seconds_axis(ax.yaxis)
            ax.set_ylim(*log_limits([q["metric_s"] for p in pols for q in c["policies"][p]["probes"]] +
                                    [slo["max_s"]]))
            ax.set_ylabel(label)
    handles, labels = [], []
    for i in range(panels):
        for h, l in zip(*axes[0][i].get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    for kind, style in (("meets", {"marker": "o"}), ("fails the SLO", {"marker": "o", "mfc": "none"}),
                        ("overloaded", {"marker": "x"})):
        handles.append(axes[0][0].plot([], [], ls="none", ms=8, mew=2, color="#555555", **style)[0])
        labels.append(kind)
    fig.suptitle("capacity of %s, 1x = %.4g requests/s" % (c.get("scenario", "?"), c.get("base_requests_per_s", 0)),
                 x=0.01, ha="left")
    lax.legend(handles, labels, loc="center", ncol=min(len(labels), 4))
    return png(fig)
