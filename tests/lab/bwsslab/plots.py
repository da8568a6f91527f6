# SPDX-License-Identifier: LGPL-2.1-or-later
"""The figures: per run, the rates (every flow, the aggregate, the cross
traffic, σ, the link's capacity — a step line when it follows a trace —, the
video's minimum) over the queueing delay every flow saw (and the user-space
bottleneck's own sojourn time); per scenario, the late-packet curve of every mode (Fig. 7c)."""
import os

from .analysis import PREBUFFERS


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        return None


def plot_run(sc, summary, series, out_dir):
    plt = _pyplot()
    if plt is None:
        return
    dur = summary["duration_s"]
    xs = range(dur)
    fig, (ax, aq) = plt.subplots(2, 1, figsize=(9, 6), sharex=True,
                                 gridspec_kw={"height_ratios": [2, 1]})
    for name in sorted(series["rate"]):
        ax.plot(xs, series["rate"][name], label=name)
    ax.plot(xs, series["aggregate"], "k--", label="aggregate", linewidth=0.8)
    if any(series["cross"]):
        ax.plot(xs, series["cross"], ":", color="grey", label="cross traffic")
    sig = [v if v is not None else float("nan") for v in series["sigma"]]
    if any(v is not None for v in series["sigma"]):
        ax.plot(xs, sig, color="purple", linewidth=0.8, alpha=0.7, label="σ")
    cap = series.get("capacity")
    if cap and sc.link_trace:
        ax.step(xs, cap, where="post", color="black", linewidth=0.9, alpha=0.7,
                label="capacity (%s)" % os.path.basename(sc.link_trace))
    else:
        ax.axhline(sc.link_kbps, color="black", linewidth=0.5, alpha=0.5)
    if sc.video:
        ax.axhline(sc.video_min_kbps, color="red", linewidth=0.5, linestyle="-.", label="video minimum")
    top = max([sc.link_kbps * 1.3] + [v for v in series["aggregate"]] + [v * 1.05 for v in cap or []])
    ax.set_ylim(0, top)
    ax.set_ylabel("kbit/s")
    title = "%s — %s" % (summary["scenario"], summary["mode"])
    if sc.stage_bottleneck():
        title += " [%s%s]" % (sc.bottleneck, ", " + os.path.basename(sc.link_trace) if sc.link_trace else "")
    if not summary.get("valid", True):
        title += " (INVALID: %s)" % "; ".join(summary["invalid_reasons"])
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper right", fontsize=7, ncol=2)
    ax.grid(alpha=0.3)
    for name in sorted(series["queue"]):
        q = [v if v is not None else float("nan") for v in series["queue"][name]]
        aq.plot(xs, q, label=name, linewidth=0.8)
    cq = [v if v is not None else float("nan") for v in series["ctl_queue"]]
    if any(v is not None for v in series["ctl_queue"]):
        aq.plot(xs, cq, color="purple", linewidth=0.8, alpha=0.7, label="controller's estimate")
    soj = series.get("stage_sojourn") or []
    if any(v is not None for v in soj):
        aq.plot(xs, [v if v is not None else float("nan") for v in soj], color="black", linewidth=0.8,
                linestyle=":", label="%s sojourn (stage)" % sc.bottleneck)
    if sc.bottleneck == "droptail":
        aq.axhline(sc.queue_ms, color="black", linewidth=0.5, alpha=0.5)
    else:
        aq.axhline(5.0, color="black", linewidth=0.5, alpha=0.5)      # CoDel's target
    aq.set_xlabel("time (s)")
    aq.set_ylabel("queueing delay (ms)")
    aq.legend(loc="upper right", fontsize=7, ncol=2)
    aq.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "rates.png"), dpi=100)
    plt.close(fig)


def plot_late(scn, results, out_root):
    plt = _pyplot()
    if plt is None or not any("late_fraction" in s for s in results):
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for s in results:
        if "late_fraction" in s:
            ax.plot([float(k) for k in PREBUFFERS], [s["late_fraction"][k] for k in PREBUFFERS],
                    marker="o", label=s["mode"])
    ax.set_xlabel("prebuffering (s)")
    ax.set_ylabel("fraction of late packets")
    ax.set_title("%s: late packets (paper Fig. 7c)" % scn)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out_root, "late.png"), dpi=100)
    plt.close(fig)
