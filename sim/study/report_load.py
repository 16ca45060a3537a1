"""Link and holder load, one figure per run (sim/study/report.py): a sweep's points have different
topologies and holder sets, so they are never pooled. Each figure shows the TOP busiest link
directions or holder GPUs by name, grouped by policy, and beside them every one of them summarised
per policy (a box: quartiles, whiskers to 1.5 IQR, points beyond)."""
import os

from report_style import colour, colour_ticklabels, figure_with_legend, png, policy_order, read_csv, wrap, write_csv

TOP = 12
MAX_RUNS = 12  # figures per kind in one page; the CSV holds every run


def _percent(axis):
    axis.set_major_formatter(lambda v, _: "%g%%" % round(100 * v, 1))


def _figure(values, names, what, title, label):
    """values: {(name, policy): fraction in [0, 1]}; names: every name, busiest first."""
    pols = policy_order(p for _, p in values)
    top = names[:TOP]
    per = 0.075 * len(pols) + 0.12
    fig, axes, lax = figure_with_legend(1, 2, height=max(5.0, 2.6 + per * len(top)),
                                        gridspec_kw={"width_ratios": [3, 1.3]})
    ax, box = axes[0]
    h = 0.8 / len(pols)
    for i, p in enumerate(pols):
        ax.barh([j - 0.4 + (i + 0.5) * h for j in range(len(top))], [values.get((n, p), 0) for n in top], height=h,
                color=colour(p), label=p)
    ax.set_yticks(range(len(top)))
    ax.set_yticklabels(top)
    ax.set_ylim(len(top) - 0.5, -0.5)
    ax.set_xlim(0, max(1e-3, 1.1 * max(values.values())))
    _percent(ax.xaxis)
    ax.set_xlabel(what + " (%)")
    ax.grid(alpha=0.3, axis="x")
    shown = "the %d busiest of %d" % (len(top), len(names)) if len(names) > len(top) else "all %d" % len(names)
    ax.set_title(wrap(title + ": " + shown, 62))
    if label:
        fig.suptitle(wrap(label, 110), x=0.01, ha="left")
    data = [[values.get((n, p), 0) for n in names] for p in pols]
    b = box.boxplot(data, vert=False, patch_artist=True, widths=0.6, flierprops={"ms": 4})
    for patch, p in zip(b["boxes"], pols):
        patch.set_facecolor(colour(p))
        patch.set_alpha(0.6)
    for m in b["medians"]:
        m.set_color("black")
    box.set_yticks(range(1, len(pols) + 1))
    box.set_yticklabels(pols)
    colour_ticklabels(box.get_yticklabels())
    box.set_ylim(len(pols) + 0.5, 0.5)
    box.set_xlim(left=0)
    _percent(box.xaxis)
    box.set_xlabel(what + " (%)")
    box.set_title("All %d, per policy" % len(names))
    box.grid(alpha=0.3, axis="x")
    lax.legend(*ax.get_legend_handles_labels(), title="policy", loc="center", ncol=min(6, len(pols)))
    return png(fig)


def _busiest_first(values):
    peak = {}
    for (n, _), v in values.items():
        peak[n] = max(v, peak.get(n, 0.0))
    return sorted(peak, key=lambda n: (-peak[n], n))


def links(runs, rd):
    """runs: [(folder, label)]; one figure per run: [(caption, CSV, PNG)]."""
    rows, figs = [], []
    for d, label in runs:
        util = {}
        for r in read_csv(os.path.join(d, "links.csv")):
            util[(r["link"] + " " + r["direction"], r["policy"])] = float(r["utilisation"])
        names = _busiest_first(util)
        rows += [[label, n, p, v] for (n, p), v in sorted(util.items())]
        if names and len(figs) < MAX_RUNS:
            figs.append(("Link utilisation" + (", " + label if label else ""), "link_utilisation.csv",
                         _figure(util, names, "utilisation",
                                 "Link directions that carried traffic, by utilisation over the run "
                                 "(bytes / (bandwidth x run time))", label)))
    write_csv(os.path.join(rd, "link_utilisation.csv"), ["run", "link", "policy", "utilisation"], rows)
    return figs or [("Link utilisation", "link_utilisation.csv", None)]


def holders(runs, rd):
    rows, figs = [], []
    for d, label in runs:
        busy = {}
        for r in read_csv(os.path.join(d, "holders.csv")):
            busy[(r["gpu"], r["policy"])] = float(r["busy_fraction"])
        names = _busiest_first(busy)
        rows += [[label, g, p, v] for (g, p), v in sorted(busy.items())]
        if names and len(figs) < MAX_RUNS:
            figs.append(("Holder load" + (", " + label if label else ""), "holder_load.csv",
                         _figure(busy, names, "busy",
                                 "Holder GPUs by busy fraction (time with a kernel running / run time)", label)))
    write_csv(os.path.join(rd, "holder_load.csv"), ["run", "gpu", "policy", "busy_fraction"], rows)
    return figs or [("Holder load", "holder_load.csv", None)]
