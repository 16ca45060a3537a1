"""The look every figure of `xattn report` shares (sim/study/report.py): one colour per policy and
per decision, time axes labelled in their units, figure size and fonts, and the CSV and PNG helpers.

Figures are 10 x H inches drawn at 160 dpi: 1,600 px wide, with 12-point labels (27 px), which
read at the page's 1,200 px width as 20 px text. Layout is matplotlib's constrained layout, which
keeps legends placed outside the axes inside the figure; nothing is cropped after drawing, so the
width is exact.
"""
import base64
import csv
import io
import math
import os
import textwrap
import zlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

WIDTH_IN = 10.0
DPI = 160
MIN_WIDTH_PX = 1600

plt.rcParams.update({
    "font.size": 12, "axes.titlesize": 13, "axes.labelsize": 12, "xtick.labelsize": 11, "ytick.labelsize": 11,
    "legend.fontsize": 11, "figure.titlesize": 14, "axes.titlelocation": "left",
})

# One colour per policy in every figure, in sim/policy/policies.def's order; route, fetch and local
# share their decision's colour. A name not listed (a policy added later) gets a colour from
# EXTRA chosen by a hash of its name: the same colour in every figure and every report.
POLICY = {"route": "#1f77b4", "fetch": "#d62728", "local": "#2ca02c", "predicate": "#ff7f0e",
          "oracle": "#8c564b", "ski-rental": "#9467bd", "load-aware": "#e7ba52",
          "session-forecast": "#9edae5"}
DECISIONS = ["route", "fetch", "local", "cached", "same_gpu"]
DECISION = {"route": POLICY["route"], "fetch": POLICY["fetch"], "local": POLICY["local"], "cached": "#17becf",
            "same_gpu": "#7f7f7f"}
DECISION_WORDS = {"route": "route", "fetch": "fetch", "local": "local (re-prefill)", "cached": "cached",
                  "same_gpu": "same GPU"}
EXTRA = ["#e377c2", "#bcbd22", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#5254a3", "#8ca252",
         "#bd9e39", "#ad494a", "#a55194"]


def colour(policy):
    """The policy's colour: POLICY's, else EXTRA[crc32(name) % len(EXTRA)] (stable across runs)."""
    name = policy.replace("_", "-")
    if name in POLICY:
        return POLICY[name]
    return EXTRA[zlib.crc32(name.encode("utf-8")) % len(EXTRA)]


def policy_order(names):
    """Policies in the registry's order, unknown ones after them by name."""
    known = list(POLICY)
    return sorted(set(names), key=lambda p: (known.index(p) if p in known else len(known), p))


def figure(nrows=1, ncols=1, height=5.0, **kw):
    """A figure 1,600 px wide and `height` inches tall, its axes as a 2-D array."""
    return plt.subplots(nrows, ncols, figsize=(WIDTH_IN, height), layout="constrained", squeeze=False, **kw)


def figure_with_legend(nrows=1, ncols=1, height=5.0, legend_in=0.8, sharex=False, sharey=False, gridspec_kw=None):
    """figure() with one more row below every panel, `legend_in` inches tall and as wide as the
    figure, for the legend (returned third, an axes without axis): the legend never covers data
    and never squeezes one column of panels."""
    fig = plt.figure(figsize=(WIDTH_IN, height), layout="constrained")
    outer = fig.add_gridspec(2, 1, height_ratios=[height - legend_in, legend_in])
    axes = outer[0].subgridspec(nrows, ncols, **(gridspec_kw or {})).subplots(sharex=sharex, sharey=sharey,
                                                                              squeeze=False)
    lax = fig.add_subplot(outer[1])
    lax.axis("off")
    return fig, axes, lax


def png(fig):
    """The figure as base64 PNG text, exactly WIDTH_IN * DPI px wide."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    plt.close(fig)
    data = buf.getvalue()
    width = int.from_bytes(data[16:20], "big")  # the IHDR chunk's width
    assert width >= MIN_WIDTH_PX, "a figure %d px wide (at least %d)" % (width, MIN_WIDTH_PX)
    return base64.b64encode(data).decode("ascii")


def wrap(text, width=70):
    return "\n".join(textwrap.wrap(text, width))


def seconds_label(v):
    """A time in seconds in the unit that reads best: '250 µs', '3 ms', '1.5 s'."""
    if v == 0 or not math.isfinite(v):
        return "%g" % v
    a = abs(v)
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
        if a >= scale * 0.9995:
            return "%.3g %s" % (v / scale, unit)
    return "%.3g ns" % (v / 1e-9)


class _DenseLogLocator(LogLocator):
    """Decades, and 2 and 5 times them where the axis spans three decades or less."""

    def tick_values(self, vmin, vmax):
        lo, hi = sorted((vmin, vmax))
        self.subs([1.0, 2.0, 5.0] if lo > 0 and math.log10(hi / lo) <= 3.2 else [1.0])
        return super().tick_values(vmin, vmax)


def seconds_axis(axis, log=True):
    """Marks a time axis (data in seconds) with ticks carrying their own unit."""
    if log:
        axis.set_major_locator(_DenseLogLocator(base=10, numticks=12))
        axis.set_minor_formatter(NullFormatter())
    axis.set_major_formatter(FuncFormatter(lambda v, _: seconds_label(v)))


def log_limits(values, margin=1.6):
    """Limits for a log axis that hold every positive value with a margin, so no marker is clipped."""
    pos = [v for v in values if v > 0 and math.isfinite(v)]
    if not pos:
        return 1e-6, 1.0
    lo, hi = min(pos), max(pos)
    if hi / lo < 10:  # a narrow range still spans a decade, centred on the data
        mid = math.sqrt(lo * hi)
        lo, hi = min(lo, mid / math.sqrt(10)), max(hi, mid * math.sqrt(10))
    return lo / margin, hi * margin


def colour_ticklabels(labels):
    for t in labels:
        t.set_color(colour(t.get_text()))


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
