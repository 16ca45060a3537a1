#!/usr/bin/python3
"""Checks the figures docs/figures.tsv lists against the outputs of the commands that print them.

  figures_check.py SOURCE_DIR NAME=FILE... [--all NAME,NAME,...]

Each NAME=FILE is one source: a summary.json (its policies), a predict --json, a plan.json or a
capacity.json (the whole file), a sweep's results.csv (its rows) or a .txt (its text). A row may read several sources (q+qbg);
rows whose sources are not all given are left to the test that runs them; --all names every source some test gives, and a row naming another
fails. A row passes when the text its expression gives is in its document, whitespace and line
breaks aside. Exit 1 on any failure, naming each."""
import csv
import json
import os
import re
import sys


def ms(s, d=2):
    """Seconds as milliseconds with d decimals: "21.15 ms"."""
    return "%.*f ms" % (d, s * 1e3)


def x(a, b):
    """A ratio: "1.06x"."""
    return "%.2fx" % (a / b)


def n(c):
    """A count with thousands separators: "2,733"."""
    return "{:,}".format(int(c))


def pct(s):
    """A share: "13%"."""
    return "%.0f%%" % (s * 100)


def short(v, small):
    """Milliseconds as the tables write them: `small` decimals under 10 (under 100 with one decimal),
    whole above, with thousands separators."""
    if v < (10 if small == 2 else 100):
        return "%.*f" % (small, v)
    return "{:,.0f}".format(v)


def cell(rows, topology, holders, policy):
    """A sweep's mean / p99 step in ms ("4.21 / 8.1") for one topology, holder list (its start:
    "[node1" or "[node32") and policy."""
    for r in rows:
        if r["topology"] == topology and r["instances.holders"].startswith(holders) and r["policy"] == policy:
            return "%s / %s" % (short(float(r["step_mean_s"]) * 1e3, 2), short(float(r["step_p99_s"]) * 1e3, 1))
    raise KeyError("no sweep row for %s %s %s" % (topology, holders, policy))


def pick(rows, name, policy, column, key="name"):
    """A sweep's figure for the point whose `key` (by default the scenario's name) is `name`, and policy."""
    for r in rows:
        if r[key] == name and r["policy"] == policy:
            return float(r[column])
    raise KeyError("no sweep row for %s %s %s" % (key, name, policy))


def planned(plan, knobs):
    """A plan's answer for one combination of knobs, and the next smaller size, as the tables write
    them: "**2** (12.7 ms) | 1: overloaded (41.4 ms)", or "| none smaller"."""
    evals = sorted((e for e in plan["evaluations"] if e["knobs"] == knobs), key=lambda e: e["size"])
    key = next(k for k in evals[0] if k.startswith(plan["slo"]["metric"]))
    meeting = [e for e in evals if e["meets"]]
    if not meeting:
        raise KeyError("no size meets for %s" % knobs)
    a = meeting[0]
    fig = lambda e: "%s ms" % short(e[key] * 1e3, 1)
    smaller = [e for e in evals if e["size"] < a["size"]]
    if not smaller:
        return "**%g** (%s) | none smaller" % (a["size"], fig(a))
    b = smaller[-1]
    why = "overloaded" if b["overloaded"] else "does not fit" if b.get("refused") else "fails"
    return "**%g** (%s) | %g: %s (%s)" % (a["size"], fig(a), b["size"], why, fig(b))


def sustains(cap, policy, delivered_word=False):
    """A capacity search's answer for one policy as the tables write it: "**2.48x** (2.59x: 90%
    delivered)", the next load up, which fell behind, in brackets."""
    p = cap["policies"][policy]
    a, b = p["answer"], p["next"]
    return "**%.3gx** (%.3gx: %s%s)" % (a["load"], b["load"], pct(b["delivered_share"]),
                                        " delivered" if delivered_word else "")


def load(path):
    if path.endswith(".txt"):
        return open(path).read()
    if path.endswith(".csv"):
        return list(csv.DictReader(open(path)))
    j = json.load(open(path))
    return j["policies"] if "policies" in j and "run_id" in j else j


def main(argv):
    src = argv[1]
    given, known = {}, None
    for a in argv[2:]:
        if a.startswith("--all="):
            known = set(a[len("--all="):].split(","))
        else:
            name, path = a.split("=", 1)
            given[name] = load(path)
    helpers = {f.__name__: f for f in (ms, x, n, pct, cell, pick, planned, sustains)}
    flat = lambda t: re.sub(r"\s+", " ", t)
    rows = [r for r in csv.reader(open(os.path.join(src, "docs", "figures.tsv")), delimiter="\t", quotechar="\x00")
            if r and not r[0].startswith("#")]
    docs, bad, checked = {}, [], 0
    for doc, source, expr in rows:
        names = source.split("+")
        for name in names:
            if known is not None and name not in known:
                bad.append("%s: a row names source '%s', which no test runs" % (doc, name))
        if any(name not in given for name in names):
            continue
        text = docs.setdefault(doc, flat(open(os.path.join(src, doc)).read()))
        want = flat(eval(expr, dict(helpers, re=re, **{name: given[name] for name in names})))
        checked += 1
        if want not in text:
            bad.append("%s: '%s' (from %s) is not in it" % (doc, want, source))
    for b in bad:
        print("FAIL:", b)
    if bad:
        return 1
    print("PASS: %d figures in %d documents are what their commands print" % (checked, len(docs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
