"""Measured against simulated, per group of a validate or calibrate check folder (sim/study/report.py):
time against the message size (log-log; transfers), or simulated against measured (other
primitives), with the relative residuals below, and the noise floor's residuals where the folder
is a check."""
import os

from report_style import figure, png, read_csv, seconds_axis, wrap, write_csv

# Not a policy's colour (report_style.POLICY): blue here would read as route.
SIMULATED = "#222222"
MEASURED = "#9a9a9a"


def _size(v, _=None):
    """Bytes in decimal units, as the log axis's decades fall: '10 kB', '1 MB'."""
    for scale, unit in ((1e9, "GB"), (1e6, "MB"), (1e3, "kB")):
        if v >= scale * 0.9995:
            return "%.3g %s" % (v / scale, unit)
    return "%.3g B" % v


def validation(d, meta, rd):
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
        x = [float(p[2]) if transfer else p[3] for p in pts]
        fig, axes = figure(2, 1, height=8, sharex=True, gridspec_kw={"height_ratios": [2, 1]})
        top, bottom = axes[0][0], axes[1][0]
        if transfer:
            top.plot(x, [p[3] for p in pts], ".", ms=7, color=MEASURED, label="measured")
            top.plot(x, [p[4] for p in pts], "-", lw=2, color=SIMULATED, label="simulated")
            top.set_ylabel("time (log scale)")
            bottom.set_xlabel("message size (log scale)")
            what = "Time against message size"
        else:
            top.plot(x, [p[4] for p in pts], ".", ms=7, color=SIMULATED, label="simulated")
            top.plot(x, x, "--", lw=1, color=MEASURED, label="simulated = measured")
            top.set_ylabel("simulated time (log scale)")
            bottom.set_xlabel("measured time (log scale)")
            what = "Simulated against measured time"
        top.set_xscale("log")
        top.set_yscale("log")
        seconds_axis(top.yaxis)
        if transfer:
            top.xaxis.set_major_formatter(_size)
        else:
            seconds_axis(top.xaxis)
        top.grid(alpha=0.3)
        top.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
        bottom.plot(x, [100 * p[5] for p in pts], ".", ms=6, color=SIMULATED, label="simulated")
        if any(p[6] != "" for p in pts):
            fx = [xi for xi, p in zip(x, pts) if p[6] != ""]
            bottom.plot(fx, [100 * p[6] for p in pts if p[6] != ""], ".", ms=5, color="#bdbdbd",
                        label="noise floor\n(neighbours\ninterpolated)")
        bottom.axhline(0, color="k", lw=0.8)
        bottom.set_ylabel("(simulated - measured)\n/ measured (%)")
        bottom.grid(alpha=0.3)
        bottom.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
        st = stats.get(g, {})
        title = "%s, group %s: mean absolute percentage error %.2f%%" % (what, g, 100 * st.get("mape", 0))
        if "floor" in st:
            title += ", noise floor %.2f%% (limit %.2f%%)" % (100 * st["floor"], 100 * st["limit"])
        top.set_title(wrap(title, 95))
        figs.append(("Measured against simulated: " + g, "validation.csv", png(fig)))
    return figs
