#!/usr/bin/python3
"""xattn report: plots of a run or sweep folder into one self-contained report.html.

Called by `xattn report DIR` (sim/study/report.cpp) with Debian's /usr/bin/python3 and
python3-matplotlib, after it wrote DIR/report/meta.json and, when the scenario is known,
DIR/report/crossover.csv (the closed form over M_q and c_t). Every plot's data is written as a
CSV beside it in DIR/report/ first; the plot is drawn from that CSV. The page embeds the plots as
base64 PNGs and links the CSVs.
"""
import base64
import csv
import html
import io
import json
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import ListedColormap  # noqa: E402

DECISIONS = ["route", "fetch", "local", "cached", "same_gpu"]
COLOURS = {"route": "#1f77b4", "fetch": "#d62728", "local": "#2ca02c", "cached": "#9467bd", "same_gpu": "#7f7f7f"}
# One colour per policy in every plot; the three pure policies share their decision's colour.
POLICY = {"route": "#1f77b4", "fetch": "#d62728", "local": "#2ca02c", "predicate": "#ff7f0e", "oracle": "#8c564b"}


def colour(policy):
    return POLICY.get(policy, "#17becf")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_csv(path, header, rows):
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    os.replace(tmp, path)


def png(fig):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def step_cdf(runs, rd):
    """Per policy: requests' mean step latency, each weighted by its steps, with the exact step
    quantiles of summary.json marked."""
    samples = defaultdict(list)
    quant = []
    for d in runs:
        for r in read_csv(os.path.join(d, "requests.csv")):
            samples[r["policy"]].append((float(r["mean_step_s"]), int(r["steps"])))
        s = json.load(open(os.path.join(d, "summary.json")))
        ens = s.get("ensemble", {}).get("policies", {})
        for pol, fig in s["policies"].items():
            for q, level in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0)):
                band = ens.get(pol, {}).get("step_latency_s." + q, {})
                quant.append([os.path.basename(d), pol, q, level, fig["step_latency_s"][q],
                              band.get("p5", ""), band.get("p95", "")])
    rows = []
    for pol, xs in samples.items():
        xs.sort()
        total = sum(w for _, w in xs) or 1
        acc = 0
        for x, w in xs:
            acc += w
            rows.append([pol, x, acc / total])
    write_csv(os.path.join(rd, "step_cdf.csv"), ["policy", "mean_step_s", "cdf"], rows)
    write_csv(os.path.join(rd, "step_quantiles.csv"),
              ["run", "policy", "stat", "level", "step_latency_s", "ensemble_p5", "ensemble_p95"], quant)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for pol in samples:
        pts = [(x, c) for p, x, c in rows if p == pol]
        line, = ax.step([x * 1e3 for x, _ in pts], [c for _, c in pts], where="post", label=pol, color=colour(pol))
        if len(runs) == 1:
            qs = [(v, lv, lo, hi) for _, p, _, lv, v, lo, hi in quant if p == pol]
            ax.plot([v * 1e3 for v, _, _, _ in qs], [lv for _, lv, _, _ in qs], "o", color=line.get_color(), ms=4)
            # Bands: each quantile's 5-95% range over an ensemble's profile draws (run --ensemble N).
            for v, lv, lo, hi in qs:
                if lo != "" and hi != "":
                    ax.hlines(lv, lo * 1e3, hi * 1e3, color=line.get_color(), lw=7, alpha=0.25)
    ax.set_xscale("log")
    ax.set_xlabel("step latency (ms, log)")
    ax.set_ylabel("fraction of steps")
    ax.grid(alpha=0.3)
    ax.legend()
    return png(fig)


def decisions(runs, rd):
    mix = defaultdict(lambda: defaultdict(int))
    for d in runs:
        s = json.load(open(os.path.join(d, "summary.json")))
        for pol, fig in s["policies"].items():
            for k in DECISIONS:
                mix[pol][k] += int(fig.get("decisions", {}).get(k, 0))
    write_csv(os.path.join(rd, "decisions.csv"), ["policy"] + DECISIONS,
              [[p] + [mix[p][k] for k in DECISIONS] for p in mix])
    fig, ax = plt.subplots(figsize=(8, 0.5 + 0.5 * len(mix)))
    pols = list(mix)
    left = [0.0] * len(pols)
    for k in DECISIONS:
        frac = [mix[p][k] / (sum(mix[p].values()) or 1) for p in pols]
        ax.barh(pols, frac, left=left, color=COLOURS[k], label=k)
        left = [a + b for a, b in zip(left, frac)]
    ax.set_xlabel("share of chunk accesses")
    ax.set_xlim(0, 1)
    ax.legend(ncol=5, loc="upper center", bbox_to_anchor=(0.5, -0.35 if len(pols) < 3 else -0.2))
    return png(fig)


def links(runs, rd, top=12):
    util = defaultdict(list)
    for d in runs:
        for r in read_csv(os.path.join(d, "links.csv")):
            util[(r["link"] + " " + r["direction"], r["policy"])].append(float(r["utilisation"]))
    mean = {k: sum(v) / len(v) for k, v in util.items()}
    names = sorted({l for l, _ in mean}, key=lambda l: -max(v for (ll, _), v in mean.items() if ll == l))[:top]
    pols = sorted({p for _, p in mean})
    write_csv(os.path.join(rd, "link_utilisation.csv"), ["link", "policy", "utilisation"],
              [[l, p, mean[(l, p)]] for l in names for p in pols if (l, p) in mean])
    if not names:
        return None
    fig, ax = plt.subplots(figsize=(8, 1 + 0.22 * len(names) * max(1, len(pols)) ** 0.5))
    h = 0.8 / max(1, len(pols))
    for i, p in enumerate(pols):
        ax.barh([j + i * h for j in range(len(names))], [mean.get((l, p), 0) for l in names], height=h, label=p,
                color=colour(p))
    ax.set_yticks([j + 0.4 - h / 2 for j in range(len(names))])
    ax.set_yticklabels(names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("utilisation (busiest %d link directions)" % len(names))
    ax.legend(fontsize=8)
    return png(fig)


def holders(runs, rd):
    busy = defaultdict(list)
    for d in runs:
        for r in read_csv(os.path.join(d, "holders.csv")):
            busy[(r["policy"], r["gpu"])].append(float(r["busy_fraction"]))
    rows = [[p, g, sum(v) / len(v)] for (p, g), v in sorted(busy.items())]
    write_csv(os.path.join(rd, "holder_load.csv"), ["policy", "gpu", "busy_fraction"], rows)
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(8, 4))
    gpus = sorted({g for _, g, _ in rows})
    for pol in sorted({p for p, _, _ in rows}):
        val = {g: b for p, g, b in rows if p == pol}
        ax.plot(range(len(gpus)), [val.get(g, 0) for g in gpus], marker=".", label=pol, color=colour(pol))
    step = max(1, len(gpus) // 16)
    ax.set_xticks(range(0, len(gpus), step))
    ax.set_xticklabels(gpus[::step], rotation=60, fontsize=7)
    ax.set_ylabel("holder busy fraction")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return png(fig)


def crossover(rd):
    path = os.path.join(rd, "crossover.csv")
    if not os.path.exists(path):
        return None
    rows = read_csv(path)
    fabrics = list(dict.fromkeys(r["fabric"] for r in rows))
    fig, axes = plt.subplots(1, len(fabrics), figsize=(4 * len(fabrics), 4), squeeze=False)
    fig.subplots_adjust(wspace=0.25)
    code = {"route": 0, "fetch": 1, "local": 2}
    cmap = ListedColormap([COLOURS["route"], COLOURS["fetch"], COLOURS["local"]])
    for ax, fab in zip(axes[0], fabrics):
        sub = [r for r in rows if r["fabric"] == fab]
        mqs = sorted({float(r["mq"]) for r in sub})
        cts = sorted({float(r["ct"]) for r in sub})
        grid = [[code[next(r["decision"] for r in sub if float(r["mq"]) == m and float(r["ct"]) == c)]
                 for c in cts] for m in mqs]
        ax.imshow(grid, origin="lower", cmap=cmap, vmin=0, vmax=2, aspect="auto")
        ax.set_xticks(range(0, len(cts), 2))
        ax.set_xticklabels(["%g" % c for c in cts[::2]], rotation=60, fontsize=7)
        ax.set_yticks(range(0, len(mqs), 2))
        ax.set_yticklabels(["%g" % m for m in mqs[::2]], fontsize=7)
        ax.set_xlabel("c_t (tokens per chunk)")
        if ax is axes[0][0]:
            ax.set_ylabel("M_q (query rows)")
        ax.set_title(fab)
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS[k]) for k in ("route", "fetch", "local")]
    fig.legend(handles, ["route", "fetch", "local"], loc="upper center", ncol=3, bbox_to_anchor=(0.5, 1.08))
    return png(fig)


def ensemble(runs, rd):
    """Per policy, each headline figure of the run with its 5-95% band over the ensemble's members
    (profiles drawn from the profile's uncertainty); None without an ensemble."""
    s = json.load(open(os.path.join(runs[0], "summary.json")))
    if len(runs) != 1 or "ensemble" not in s:
        return None
    e = s["ensemble"]
    figs = ("step_latency_s.mean", "step_latency_s.p99", "request_latency_s.p50")
    rows = []
    for pol, f in sorted(e["policies"].items()):
        for name in figs:
            b = f.get(name)
            if b:
                top, stat = name.split(".")
                rows.append([pol, name, s["policies"][pol][top][stat], b["p5"], b["p50"], b["p95"]])
    write_csv(os.path.join(rd, "ensemble.csv"), ["policy", "figure", "value", "p5", "p50", "p95"], rows)
    fig, axes = plt.subplots(1, len(figs), figsize=(10, 4))
    for ax, name in zip(axes, figs):
        pts = [r for r in rows if r[1] == name]
        xs = list(range(len(pts)))
        for x, r in zip(xs, pts):
            ax.bar(x, (r[5] - r[3]) * 1e3, bottom=r[3] * 1e3, color=colour(r[0]), alpha=0.3, width=0.6)
            ax.plot(x, r[2] * 1e3, "o", color=colour(r[0]))
        ax.set_xticks(xs)
        ax.set_xticklabels([r[0] for r in pts], rotation=30, fontsize=8)
        ax.set_yscale("log")
        ax.set_title(name, fontsize=9)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("ms (dot: the profile's values; band: 5-95%% over %d draws)" % e["members"], fontsize=8)
    return png(fig)


def capacity(d, meta, rd):
    rows = read_csv(os.path.join(d, "results.csv"))
    keys = meta.get("keys", [])
    x_key = keys[0] if keys else "point"
    others = keys[1:]
    order = list(dict.fromkeys(r[x_key] for r in rows))
    acc = defaultdict(list)
    for r in rows:
        label = r["policy"] + "".join(" %s=%s" % (k, r[k]) for k in others)
        acc[(label, r[x_key])].append(float(r["step_p99_s"]))
    out = [[lab, x, sum(v) / len(v), min(v), max(v), len(v)] for (lab, x), v in acc.items()]
    out.sort(key=lambda r: (r[0], order.index(r[1])))
    write_csv(os.path.join(rd, "capacity.csv"), ["series", x_key, "step_p99_s_mean", "min", "max", "seeds"], out)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    series = list(dict.fromkeys(r[0] for r in out))
    for lab in series[:16]:
        pts = [r for r in out if r[0] == lab]
        xs = [order.index(r[1]) for r in pts]
        ax.errorbar(xs, [r[2] * 1e3 for r in pts], yerr=[[(r[2] - r[3]) * 1e3 for r in pts],
                    [(r[4] - r[2]) * 1e3 for r in pts]], marker="o", capsize=3, label=lab,
                    color=colour(lab.split(" ")[0]) if not others else None)
    ax.set_xticks(range(len(order)))
    ax.set_xticklabels(order, rotation=30, fontsize=8)
    ax.set_xlabel(x_key)
    ax.set_ylabel("p99 step latency (ms; mean, min-max over seeds)")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return png(fig)


def validation(d, meta, rd):
    """Per group of a validate or calibrate check folder: measured and simulated time against the
    message size (log-log; transfers), or simulated against measured (other primitives), with the
    relative residuals below, and the noise floor's residuals where the folder is a check."""
    rows = read_csv(os.path.join(d, "points.csv"))
    groups = sorted(set(r["group"] for r in rows))
    out = []
    for r in rows:
        floor = float(r["floor_s"]) if r.get("floor_s") else None
        m, s = float(r["measured_s"]), float(r["simulated_s"])
        out.append([r["group"], r["primitive"], r["bytes"], m, s, (s - m) / m,
                    "" if floor is None else (floor - m) / m])
    write_csv(os.path.join(rd, "validation.csv"),
              ["group", "primitive", "bytes", "measured_s", "simulated_s", "residual", "floor_residual"], out)
    stats = {g["group"]: g for g in meta["validation"].get("groups", [])}
    figs = []
    for g in groups:
        pts = [r for r in out if r[0] == g]
        transfer = all(p[1] == "transfer" and float(p[2]) > 0 for p in pts)
        pts.sort(key=lambda p: float(p[2]) if transfer else p[3])
        x = [float(p[2]) if transfer else p[3] * 1e6 for p in pts]
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True, gridspec_kw={"height_ratios": [2, 1]})
        if transfer:
            top.plot(x, [p[3] * 1e6 for p in pts], ".", ms=3, color="#444444", label="measured")
            top.plot(x, [p[4] * 1e6 for p in pts], "-", lw=1, color="#1f77b4", label="simulated")
            top.set_ylabel("time (us)")
            bottom.set_xlabel("message size (B)")
        else:
            top.plot(x, [p[4] * 1e6 for p in pts], ".", ms=4, color="#1f77b4", label="simulated")
            top.plot(x, x, "k--", lw=1, label="simulated = measured")
            top.set_ylabel("simulated (us)")
            bottom.set_xlabel("measured (us)")
        top.set_xscale("log")
        top.set_yscale("log")
        top.grid(alpha=0.3)
        top.legend(fontsize=7)
        bottom.plot(x, [100 * p[5] for p in pts], ".", ms=3, color="#1f77b4", label="simulated")
        if any(p[6] != "" for p in pts):
            fx = [xi for xi, p in zip(x, pts) if p[6] != ""]
            bottom.plot(fx, [100 * p[6] for p in pts if p[6] != ""], ".", ms=2, color="#bbbbbb",
                        label="noise floor (neighbours interpolated)")
        bottom.axhline(0, color="k", lw=0.8)
        bottom.set_ylabel("residual (%)")
        bottom.grid(alpha=0.3)
        bottom.legend(fontsize=7)
        st = stats.get(g, {})
        title = "%s: MAPE %.2f%%" % (g, 100 * st.get("mape", 0))
        if "floor" in st:
            title += ", floor %.2f%% (limit %.2f%%)" % (100 * st["floor"], 100 * st["limit"])
        top.set_title(title, fontsize=9)
        figs.append(("Measured against simulated: " + g, "validation.csv", png(fig)))
    return figs


def main(d):
    rd = os.path.join(d, "report")
    meta = json.load(open(os.path.join(rd, "meta.json")))
    if meta["kind"] == "validation":
        write_page(d, meta, validation(d, meta, rd))
        return
    if meta["kind"] == "sweep":
        man = json.load(open(os.path.join(d, "sweep.json")))
        runs = [os.path.join(d, "points", p["id"]) for p in man["points"]
                if os.path.exists(os.path.join(d, "points", p["id"], "summary.json"))]
        pooled = " (pooled over %d points)" % len(runs)
    else:
        runs, pooled = [d], ""
    figs = []
    reuse = "%g" % meta["reuse"] if "reuse" in meta else "?"
    if meta["kind"] == "sweep":
        figs.append(("Capacity curve: p99 step latency along the sweep", "capacity.csv", capacity(d, meta, rd)))
    figs += [
        ("Step latency CDF per policy" + pooled + ": requests' mean step latency weighted by steps; dots: exact "
         "step p50/p90/p99/max", "step_cdf.csv", step_cdf(runs, rd)),
        ("Decisions mix per policy" + pooled, "decisions.csv", decisions(runs, rd)),
        ("Ensemble: headline figures with their 5-95% band over profile draws", "ensemble.csv", ensemble(runs, rd)),
        ("Per-link utilisation" + pooled, "link_utilisation.csv", links(runs, rd)),
        ("Holder load: busy fraction per holder GPU" + pooled, "holder_load.csv", holders(runs, rd)),
        ("Route-vs-fetch crossover map over M_q and c_t (closed form: one call, one holder, %s later uses of the "
         "fetched tokens; model %s, profile %s)" % (reuse, meta.get("model", "?"), meta.get("profile", "?")),
         "crossover.csv", crossover(rd)),
    ]
    write_page(d, meta, figs)


def write_page(d, meta, figs):
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>%s</title><style>"
             "body{font-family:sans-serif;max-width:1000px;margin:1em auto;color:#222}"
             "figure{margin:1.5em 0}img{max-width:100%%}figcaption{font-weight:bold;margin-bottom:.3em}"
             "</style></head><body><h1>%s</h1>" % (html.escape(meta["title"]), html.escape(meta["title"]))]
    parts.append("<p>Folder <code>%s</code>%s.</p>" % (html.escape(d), (", scenario <code>%s</code>" %
                 html.escape(meta["scenario"])) if "scenario" in meta else ""))
    for n in meta.get("notes", []):
        parts.append("<p><em>%s</em></p>" % html.escape(n))
    for title, name, img in figs:
        if img is None and name == "ensemble.csv":
            continue  # a run without an ensemble has no bands to show
        if img is None:
            parts.append("<p>%s: no data.</p>" % html.escape(title))
            continue
        parts.append("<figure><figcaption>%s</figcaption><img alt='%s' src='data:image/png;base64,%s'>"
                     "<div><a href='report/%s'>data: report/%s</a></div></figure>"
                     % (html.escape(title), html.escape(name), img, name, name))
    parts.append("</body></html>\n")
    tmp = os.path.join(d, "report.html.tmp")
    with open(tmp, "w") as f:
        f.write("\n".join(parts))
    os.replace(tmp, os.path.join(d, "report.html"))


if __name__ == "__main__":
    main(sys.argv[1])
