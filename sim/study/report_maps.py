"""The closed form's maps over M_q and c_t, one panel per fabric class (sim/study/report.py), from
report/crossover.csv (sim/study/report.cpp): the cheapest primitive at the reuse the report
assumes (meta.json's `reuse`: --reuse, else the scenario's engine.predicate_prior_steps), and the
break-even reuse, the number of later uses of the fetched tokens from which fetch costs no more
than route (it does not depend on the assumed reuse). One attention call, one holder."""
import math
import os

import numpy as np
from matplotlib.colors import ListedColormap, Normalize
from matplotlib.patches import Patch

from report_style import DECISION, DECISION_WORDS, figure_with_legend, png, read_csv, wrap

PRIMITIVES = ["route", "fetch", "local"]


def _count(v):
    """1024 -> '1Ki', 131072 -> '128Ki', 256 -> '256' (grid values are powers of two)."""
    return "%dKi" % (v // 1024) if v >= 1024 and v % 1024 == 0 else "%g" % v


def _grids(rows):
    """{fabric: (mqs, cts, {(mq, ct): row})} in the CSV's order."""
    out = {}
    for r in rows:
        mqs, cts, cells = out.setdefault(r["fabric"], ([], [], {}))
        mq, ct = float(r["mq"]), float(r["ct"])
        if mq not in mqs:
            mqs.append(mq)
        if ct not in cts:
            cts.append(ct)
        cells[(mq, ct)] = r
    return out


def _panels(n):
    ncols = 1 if n == 1 else 2
    nrows = math.ceil(n / ncols)
    fig, axes, lax = figure_with_legend(nrows, ncols, height=2.2 + 4.3 * nrows, legend_in=0.7)
    flat = [axes[i // ncols][i % ncols] for i in range(nrows * ncols)]
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n], axes, lax


def _axes(ax, mqs, cts, first_col):
    ax.set_xticks(range(0, len(cts), 2))
    ax.set_xticklabels([_count(int(c)) for c in cts[::2]])
    ax.set_yticks(range(0, len(mqs), 2))
    ax.set_yticklabels([_count(int(m)) for m in mqs[::2]])
    ax.set_xlabel("c_t: tokens per chunk")
    if first_col:
        ax.set_ylabel("M_q: query rows")


def reuse_words(meta):
    r = "%g" % meta["reuse"] if "reuse" in meta else "?"
    src = meta.get("reuse_source", "engine.predicate_prior_steps")
    why = "set by --reuse" if src == "--reuse" else "the scenario's engine.predicate_prior_steps"
    return r, why


def decision_map(rd, meta):
    path = os.path.join(rd, "crossover.csv")
    if not os.path.exists(path):
        return None
    grids = _grids(read_csv(path))
    fig, axes, grid, lax = _panels(len(grids))
    code = {k: i for i, k in enumerate(PRIMITIVES)}
    cmap = ListedColormap([DECISION[k] for k in PRIMITIVES])
    for i, (ax, (fab, (mqs, cts, cells))) in enumerate(zip(axes, grids.items())):
        img = [[code[cells[(m, c)]["decision"]] for c in cts] for m in mqs]
        ax.imshow(img, origin="lower", cmap=cmap, vmin=0, vmax=len(PRIMITIVES) - 1, aspect="auto")
        _axes(ax, mqs, cts, i % grid.shape[1] == 0)
        ax.set_title("fabric: " + fab)
    r, why = reuse_words(meta)
    fig.suptitle(wrap("Cheapest primitive for one attention call whose tokens are used %s more times (%s; "
                      "--reuse N redraws it)" % (r, why), 90), x=0.01, ha="left")
    handles = [Patch(color=DECISION[k], label=DECISION_WORDS[k]) for k in PRIMITIVES]
    lax.legend(handles=handles, title="cheapest", loc="center", ncol=len(handles))
    return png(fig)


def break_even_map(rd, meta):
    """log10 of the break-even reuse as a continuous map; 0 (fetch is cheaper from the first call)
    and infinity (fetch never catches up) as two flat colours; a dashed line where it equals the
    assumed reuse, the border between the decision map's route and fetch (where local is not cheaper)."""
    path = os.path.join(rd, "crossover.csv")
    if not os.path.exists(path):
        return None
    grids = _grids(read_csv(path))
    finite = [float(r["break_even_reuse"]) for _, _, cells in grids.values() for r in cells.values()]
    finite = [v for v in finite if 0 < v < math.inf]
    lo, hi = (math.log10(min(finite)), math.log10(max(finite))) if finite else (0.0, 1.0)
    lo, hi = math.floor(lo), max(math.ceil(hi), math.floor(lo) + 1)
    fig, axes, grid, lax = _panels(len(grids))
    reuse = float(meta.get("reuse", "nan"))
    cmap = "viridis"
    flat = ListedColormap(["#f4b6b6", "#b7cde3"])  # light fetch red: 0; light route blue: never
    im = None
    for i, (ax, (fab, (mqs, cts, cells))) in enumerate(zip(axes, grids.items())):
        be = np.array([[float(cells[(m, c)]["break_even_reuse"]) for c in cts] for m in mqs])
        ok = (be > 0) & np.isfinite(be)
        logs = np.ma.masked_where(~ok, np.log10(np.where(ok, be, 1.0)))
        im = ax.imshow(logs, origin="lower", cmap=cmap, norm=Normalize(lo, hi), aspect="auto")
        ends = np.ma.masked_where(ok, np.where(be == 0, 0, 1))
        ax.imshow(ends, origin="lower", cmap=flat, vmin=0, vmax=1, aspect="auto")
        # The border at the assumed reuse: a contour of log10(be), 0 as below every level and never as above.
        field = np.where(be == 0, lo - 10, np.where(np.isfinite(be), np.log10(np.maximum(be, 1e-12)), hi + 10))
        if reuse > 0 and field.min() < math.log10(reuse) < field.max():
            ax.contour(field, levels=[math.log10(reuse)], colors="white", linewidths=2.5, linestyles="--")
        _axes(ax, mqs, cts, i % grid.shape[1] == 0)
        ax.set_title("fabric: " + fab)
    r, why = reuse_words(meta)
    bar = fig.colorbar(im, ax=[a for row in grid for a in row if a.get_visible()], shrink=0.8, pad=0.02)
    ticks = list(range(lo, hi + 1))
    bar.set_ticks(ticks)
    bar.set_ticklabels(["%g" % 10 ** t for t in ticks])
    bar.set_label("break-even reuse: later uses (log scale)")
    fig.suptitle(wrap("Break-even reuse: how many later uses of the fetched tokens make fetch cost no more than "
                      "route (one call, one holder; white dashes: %s later uses, %s)" % (r, why), 90), x=0.01,
                 ha="left")
    handles = [Patch(color=flat(0), label="0: fetch is cheaper from the first call"),
               Patch(color=flat(1), label="never: route is always cheaper")]
    lax.legend(handles=handles, loc="center", ncol=2)
    return png(fig)
