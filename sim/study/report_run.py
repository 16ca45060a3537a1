"""The figures of one run, or of a sweep's runs pooled (sim/study/report.py): step latency,
decisions mix, ensemble bands. Each returns (caption, CSV name, base64 PNG or None)."""
import json
import os
from collections import defaultdict

from report_style import (DECISION, DECISION_WORDS, DECISIONS, colour, colour_ticklabels, figure, figure_with_legend,
                          log_limits, png, policy_order, read_csv, seconds_axis, wrap, write_csv)

LEVELS = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))
MARKERS = {"p50": "o", "p90": "s", "p99": "^", "max": "X"}


def summary(d):
    with open(os.path.join(d, "summary.json")) as f:
        return json.load(f)


def weighted_quantile(xs, level):
    """The smallest x whose cumulative weight reaches `level` of the total; xs: sorted (x, weight)."""
    total = sum(w for _, w in xs)
    acc = 0
    for x, w in xs:
        acc += w
        if acc >= level * total:
            return x
    return xs[-1][0]


def step_latency(runs, rd, pooled):
    """Top: per policy, the CDF over steps of each request's mean step latency (requests.csv: a
    request's mean counts once per step it ran), with that curve's own p50/p90/p99/max marked on
    it. Bottom (one run only): summary.json's exact step latency quantiles over every step, with
    their 5-95% band over an ensemble's profile draws. Both on one time axis: a request's mean
    hides its slow and fast steps, so the two need not agree."""
    samples = defaultdict(list)
    quant = []
    for d in runs:
        for r in read_csv(os.path.join(d, "requests.csv")):
            samples[r["policy"]].append((float(r["mean_step_s"]), int(r["steps"])))
        s = summary(d)
        ens = s.get("ensemble", {}).get("policies", {})
        for pol, fig in s["policies"].items():
            for q, level in LEVELS:
                band = ens.get(pol, {}).get("step_latency_s." + q, {})
                quant.append([os.path.basename(d), pol, q, level, fig["step_latency_s"][q], band.get("p5", ""),
                              band.get("p95", "")])
    pols = policy_order(samples)
    rows, curve_q = [], []
    for pol in pols:
        xs = sorted(samples[pol])
        total = sum(w for _, w in xs) or 1
        acc = 0
        for x, w in xs:
            acc += w
            rows.append([pol, x, acc / total])
        for q, level in LEVELS:
            curve_q.append([pol, q, level, weighted_quantile(xs, level)])
    write_csv(os.path.join(rd, "step_cdf.csv"), ["policy", "mean_step_s", "cdf"], rows)
    write_csv(os.path.join(rd, "step_cdf_quantiles.csv"), ["policy", "stat", "level", "mean_step_s"], curve_q)
    write_csv(os.path.join(rd, "step_quantiles.csv"),
              ["run", "policy", "stat", "level", "step_latency_s", "ensemble_p5", "ensemble_p95"], quant)
    exact = len(runs) == 1
    fig, axes = figure(2 if exact else 1, 1, height=9.5 if exact else 6,
                       sharex=True, gridspec_kw={"height_ratios": [3, 2]} if exact else None)
    ax = axes[0][0]
    xs_all = [r[1] for r in rows] + [q[4] for q in quant] + [v for q in quant for v in q[5:7] if v != ""]
    for i, pol in enumerate(pols):
        pts = [(x, c) for p, x, c in rows if p == pol]
        # Wider first: policies with the same curve (fetch, predicate and oracle often) show as nested stripes.
        ax.step([x for x, _ in pts], [c for _, c in pts], where="post", label=pol, color=colour(pol),
                lw=1.5 + 3.0 * (len(pols) - 1 - i) / max(1, len(pols) - 1))
        for p, q, level, v in curve_q:
            if p == pol and q != "max":
                ax.plot(v, level, MARKERS[q], color=colour(pol), ms=8, mec="white", mew=0.8)
    ax.set_xscale("log")
    ax.set_xlim(*log_limits(xs_all, margin=1.3))
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("fraction of steps")
    ax.set_title(wrap("Each request's mean step latency, one count per step it ran" + pooled, 85) + "\n" +
                 wrap("(markers: the curve's own p50 ○, p90 □, p99 △; equal curves overlap, the wider "
                      "below)", 85))
    ax.grid(alpha=0.3)
    ax.legend(title="policy", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if exact:
        bx = axes[1][0]
        for i, pol in enumerate(pols):
            for _, p, q, level, v, lo, hi in quant:
                if p != pol:
                    continue
                if lo != "" and hi != "":
                    bx.hlines(i, lo, hi, color=colour(pol), lw=9, alpha=0.25)
                bx.plot(v, i, MARKERS[q], color=colour(pol), ms=9, mec="white", mew=0.8)
        bx.set_yticks(range(len(pols)))
        bx.set_yticklabels(pols)
        colour_ticklabels(bx.get_yticklabels())
        bx.set_ylim(len(pols) - 0.5, -0.5)
        bx.set_title(wrap("Exact step latency over every step (summary.json): p50 ○, p90 □, p99 △, max ✕" +
                          ("; shaded: 5-95% over the ensemble's profile draws" if any(q[5] != "" for q in quant)
                           else ""), 90))
        bx.grid(alpha=0.3, axis="x")
        handles = [bx.plot([], [], MARKERS[q], color="#444444", ms=9)[0] for q, _ in LEVELS]
        bx.legend(handles, [q for q, _ in LEVELS], title="step quantile", loc="upper left", bbox_to_anchor=(1.01, 1))
    bottom = axes[-1][0]
    bottom.set_xlabel("step latency (log scale)")
    seconds_axis(bottom.xaxis)
    return png(fig)


def decisions(runs, rd, pooled):
    mix = defaultdict(lambda: defaultdict(int))
    for d in runs:
        for pol, fig in summary(d)["policies"].items():
            for k in DECISIONS:
                mix[pol][k] += int(fig.get("decisions", {}).get(k, 0))
    pols = policy_order(mix)
    write_csv(os.path.join(rd, "decisions.csv"), ["policy"] + DECISIONS, [[p] + [mix[p][k] for k in DECISIONS]
                                                                           for p in pols])
    fig, axes = figure(height=1.6 + 0.55 * len(pols))
    ax = axes[0][0]
    left = [0.0] * len(pols)
    for k in DECISIONS:
        frac = [mix[p][k] / (sum(mix[p].values()) or 1) for p in pols]
        ax.barh(pols, frac, left=left, color=DECISION[k], label=DECISION_WORDS[k], height=0.7)
        left = [a + b for a, b in zip(left, frac)]
    colour_ticklabels(ax.get_yticklabels())
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(lambda v, _: "%d%%" % round(100 * v))
    ax.set_xlabel("share of the policy's chunk accesses (%)")
    ax.set_title("How each policy served its chunk accesses" + pooled)
    ax.legend(title="decision", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return png(fig)


# The ensemble's headline figures: summary.json's key, its title in words.
ENSEMBLE_FIGS = (("step_latency_s.mean", "Mean step latency"), ("step_latency_s.p99", "p99 step latency"),
                 ("e2e_s.p50", "Median end-to-end latency"))


def ensemble(runs, rd):
    """Per policy, each headline figure of the run with its 5-95% band over the ensemble's members
    (profiles drawn from the profile's uncertainty); None without an ensemble."""
    if len(runs) != 1:
        return None
    s = summary(runs[0])
    if "ensemble" not in s:
        return None
    e = s["ensemble"]
    rows = []
    for pol in policy_order(e["policies"]):
        for name, _ in ENSEMBLE_FIGS:
            b = e["policies"][pol].get(name)
            if b:
                top, stat = name.split(".")
                rows.append([pol, name, s["policies"][pol][top][stat], b["p5"], b["p50"], b["p95"]])
    write_csv(os.path.join(rd, "ensemble.csv"), ["policy", "figure", "value", "p5", "p50", "p95"], rows)
    pols = policy_order(r[0] for r in rows)
    fig, axes, lax = figure_with_legend(len(ENSEMBLE_FIGS), 1,
                                        height=1.6 + (0.9 + 0.42 * len(pols)) * len(ENSEMBLE_FIGS))
    for ax, (name, words) in zip(axes[:, 0], ENSEMBLE_FIGS):
        pts = {r[0]: r for r in rows if r[1] == name}
        for y, pol in enumerate(pols):
            r = pts.get(pol)
            if r is None:
                continue
            c = colour(pol)
            ax.hlines(y, r[3], r[5], color=c, lw=14, alpha=0.3)
            ax.plot(r[4], y, "|", color=c, ms=18, mew=2.5)
            ax.plot(r[2], y, "o", color=c, ms=9, mec="white", mew=0.8)
        ax.set_yticks(range(len(pols)))
        ax.set_yticklabels(pols)
        colour_ticklabels(ax.get_yticklabels())
        ax.set_ylim(len(pols) - 0.5, -0.5)
        ax.set_xscale("log")
        ax.set_xlim(*log_limits([v for r in pts.values() for v in (r[2], r[3], r[5])]))
        seconds_axis(ax.xaxis)
        ax.set_title(words + " (log scale)")
        ax.grid(alpha=0.3, axis="x")
    fig.suptitle("Headline figures under the profile's uncertainty: %d profile draws" % e["members"], x=0.01,
                 ha="left")
    handles = [lax.plot([], [], "o", color="#444444", ms=9)[0],
               lax.plot([], [], "|", color="#444444", ms=18, mew=2.5)[0],
               lax.hlines([], [], [], color="#444444", lw=14, alpha=0.3)]
    lax.legend(handles, ["the profile's own value", "median over the draws", "5-95% over the draws"], loc="center",
               ncol=3)
    return png(fig)
