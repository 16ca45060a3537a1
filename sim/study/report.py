#!/usr/bin/python3
"""xattn report: plots of a run, sweep, plan, capacity, validate or check folder into one self-contained report.html.

Called by `xattn report DIR` (sim/study/report.cpp) with Debian's /usr/bin/python3 and
python3-matplotlib, after it wrote DIR/report/meta.json and, when the scenario is known,
DIR/report/crossover.csv (the closed form over M_q and c_t). Every plot's data is written as a
CSV beside it in DIR/report/ first; the plot is drawn from that CSV. The page embeds the plots as
base64 PNGs, 1,600 px wide, and links the CSVs.

The figures live beside this file, one module per kind (installed with it: sim/study/CMakeLists.txt):
report_style.py (colours, units, sizes), report_run.py (step latency, decisions, ensemble),
report_load.py (links, holders), report_sweep.py (a sweep's capacity curve, a plan's answer),
report_capacity.py (the load search of `xattn capacity`), report_maps.py (crossover and
break-even maps), report_validation.py (measured against simulated).

Exit codes: 0 written; 2 the folder's files disagree (a CSV written by another run than its
summary.json: the run_id contract, `check_run_ids`).
"""
import csv
import html
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import report_capacity  # noqa: E402
import report_load  # noqa: E402
import report_maps  # noqa: E402
import report_run  # noqa: E402
import report_sweep  # noqa: E402
import report_validation  # noqa: E402

RUN_CSVS = ("requests.csv", "links.csv", "holders.csv")


class Mismatch(Exception):
    pass


def check_run_ids(d):
    """A run folder whose summary.json carries "run_id": every row of its requests.csv, links.csv
    and holders.csv that has a run_id column must carry the same id, else Mismatch (the folder mixes
    two runs' files). Without the key (older folders) or the column, nothing is checked."""
    with open(os.path.join(d, "summary.json")) as f:
        run_id = json.load(f).get("run_id")
    if not isinstance(run_id, str):
        return
    for name in RUN_CSVS:
        path = os.path.join(d, name)
        if not os.path.exists(path):
            continue
        with open(path, newline="") as f:
            rows = csv.DictReader(f)
            if "run_id" not in (rows.fieldnames or []):
                continue
            for line, r in enumerate(rows, start=2):
                if r["run_id"] != run_id:
                    raise Mismatch("%s:%d: run_id '%s', but %s has run_id '%s': the folder mixes files of two "
                                   "runs (rerun it, or remove the stale file)"
                                   % (path, line, r["run_id"], os.path.join(d, "summary.json"), run_id))


def point_label(p):
    return ", ".join("%s = %s" % (k, v) for k, v in p.get("values", [])) or "point " + p["id"]


def main(d):
    rd = os.path.join(d, "report")
    with open(os.path.join(rd, "meta.json")) as f:
        meta = json.load(f)
    if meta["kind"] == "validation":
        write_page(d, meta, report_validation.validation(d, meta, rd))
        return 0
    if meta["kind"] == "capacity":
        write_page(d, meta, [("Each policy's probes against the load: the delivered share and the SLO's figure, "
                              "the answers ringed", "capacity_probes.csv", report_capacity.load_search(d, rd))])
        return 0
    if meta["kind"] == "sweep":
        with open(os.path.join(d, "sweep.json")) as f:
            man = json.load(f)
        runs = [(os.path.join(d, "points", p["id"]), point_label(p)) for p in man["points"]
                if os.path.exists(os.path.join(d, "points", p["id"], "summary.json"))]
        pooled = " (pooled over %d points)" % len(runs)
    else:
        runs, pooled = [(d, "")], ""
    try:
        for run, _ in runs:
            check_run_ids(run)
    except Mismatch as e:
        sys.stderr.write("xattn report: error: %s\n" % e)
        return 2
    dirs = [r for r, _ in runs]
    figs = []
    if meta.get("plan"):
        figs.append(("The plan's answer: the judged figure against the size, the SLO as a line", "plan.csv",
                     report_sweep.plan(d, rd)))
    if meta["kind"] == "sweep":
        for column, (_, caption, csv_name, _) in report_sweep.ALONG.items():
            figs.append((caption, csv_name, report_sweep.along(d, meta, rd, column)))
    figs += [
        ("Step latency per policy" + pooled + ": each request's mean step latency, weighted by its steps" +
         (", against the exact step latency quantiles" if len(dirs) == 1 else ""), "step_cdf.csv",
         report_run.step_latency(dirs, rd, pooled)),
        ("Decisions mix per policy" + pooled, "decisions.csv", report_run.decisions(dirs, rd, pooled)),
        ("Ensemble: headline figures with their 5-95% band over profile draws", "ensemble.csv",
         report_run.ensemble(dirs, rd)),
    ]
    figs += report_load.links(runs, rd)
    figs += report_load.holders(runs, rd)
    if len(runs) > report_load.MAX_RUNS:
        meta.setdefault("notes", []).append(
            "Link and holder load: the first %d of %d points are drawn; report/link_utilisation.csv and "
            "report/holder_load.csv hold them all." % (report_load.MAX_RUNS, len(runs)))
    reuse, why = report_maps.reuse_words(meta)
    where = "model %s, profile %s" % (meta.get("model", "?"), meta.get("profile", "?"))
    figs += [
        ("Route, fetch or local over M_q and c_t at %s later uses (%s; closed form: one call, one holder; %s)"
         % (reuse, why, where), "crossover.csv", report_maps.decision_map(rd, meta)),
        ("Break-even reuse over M_q and c_t (closed form: one call, one holder; %s)" % where, "crossover.csv",
         report_maps.break_even_map(rd, meta)),
    ]
    write_page(d, meta, figs)
    return 0


def folder_text(d, name):
    """A text the command wrote into the folder (capacity.txt, comparison.txt), or None where it has none."""
    path = os.path.join(d, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read().strip("\n")


def run_table(d):
    """The comparison table, verdict and legend as `xattn run` printed them: report.md's first
    fenced block, or None where the folder has no report.md."""
    path = os.path.join(d, "report.md")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        blocks = f.read().split("```")
    return blocks[1].strip("\n") if len(blocks) >= 3 else None


def write_page(d, meta, figs):
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>%s</title><style>"
             "body{font-family:sans-serif;max-width:1250px;margin:1em auto;padding:0 1em;color:#222;font-size:17px}"
             "figure{margin:2em 0}img{width:100%%;height:auto}figcaption{font-weight:bold;margin-bottom:.4em}"
             "</style></head><body><h1>%s</h1>" % (html.escape(meta["title"]), html.escape(meta["title"]))]
    parts.append("<p>Folder <code>%s</code>%s.</p>" % (html.escape(d), (", scenario <code>%s</code>" %
                 html.escape(meta["scenario"])) if "scenario" in meta else ""))
    for n in meta.get("notes", []):
        parts.append("<p><em>%s</em></p>" % html.escape(n))
    caption, table = {"run": ("The run's table, verdict and legend (report.md)", run_table),
                      "capacity": ("The search's answers and verdict (capacity.txt)",
                                   lambda d: folder_text(d, "capacity.txt")),
                      "sweep": ("The points compared: their figures, ranges and verdicts (comparison.txt)",
                                lambda d: folder_text(d, "comparison.txt"))}.get(
        meta.get("kind"), (None, lambda _: None))
    table = table(d)
    if table:
        parts.append("<figure><figcaption>%s</figcaption>"
                     "<pre style='font-size:12px;overflow-x:auto'>%s</pre></figure>" % (caption, html.escape(table)))
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
    sys.exit(main(sys.argv[1]))
