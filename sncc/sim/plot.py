"""``sncc simulate --plot FILE.png``: time series and latency distributions of one run.

Needs matplotlib (optional extra ``plot``: ``pip install 'sncc[plot]'``); imported lazily.
Four panels: requests waiting for dispatch and running decode sequences over time, KV-pool
use over time (the steady-state window shaded in both), and histograms of TTFT and TPOT
over the steady-state window (whole run when there is none) with the SLO targets.
"""
from __future__ import annotations

from typing import Any, Sequence


class PlotUnavailable(RuntimeError):
    """matplotlib is not installed."""


def write_plot(result: Any, path: str, title: str, ttft: Sequence[float], tpot_ms: Sequence[float],
               slos: Sequence[Any] = ()) -> None:
    """Write the PNG ``path``; ``ttft`` [s] and ``tpot_ms`` [ms] are per-request samples.

    Raises :class:`PlotUnavailable` without matplotlib, OSError when ``path`` cannot be written."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotUnavailable("--plot needs matplotlib: pip install 'sncc[plot]'") from None
    s = result.series or {"t_s": [], "waiting": [], "running": [], "kv_use": []}
    sat = result.saturated
    fig, axs = plt.subplots(2, 2, figsize=(12, 7.5), dpi=110)
    (a1, a2), (a3, a4) = axs
    t = s["t_s"]

    def shade(ax):
        if sat:
            ax.axvspan(sat["start_s"], sat["end_s"], color="tab:green", alpha=0.08, label="steady-state window")

    a1.plot(t, s["waiting"], color="tab:red", lw=1.2, label="waiting for dispatch (proxy queue)")
    a1.plot(t, s["running"], color="tab:blue", lw=1.2, label="running decode sequences")
    shade(a1)
    a1.set_xlabel("simulated time [s]")
    a1.set_ylabel("requests")
    a1.set_title("Queue depth and decode batch")
    a1.legend(fontsize=8, loc="upper right")
    a1.grid(alpha=0.3)
    a2.plot(t, [100 * x for x in s["kv_use"]], color="tab:purple", lw=1.2, label="KV pool reserved")
    shade(a2)
    a2.set_ylim(0, 105)
    a2.set_xlabel("simulated time [s]")
    a2.set_ylabel("KV pool use [%]")
    a2.set_title("Decode KV-cache use")
    a2.legend(fontsize=8, loc="lower right")
    a2.grid(alpha=0.3)

    def hist(ax, xs, unit, metric, label, color):
        if xs:
            ax.hist(xs, bins=50, color=color, alpha=0.8)
            xs_sorted = sorted(xs)
            for q, ls in ((50, "-"), (90, "--"), (99, ":")):
                v = xs_sorted[min(len(xs_sorted) - 1, int(len(xs_sorted) * q / 100))]
                ax.axvline(v, color="black", ls=ls, lw=1, label=f"p{q} {v:.3g} {unit}")
        for sl in slos:
            if sl.metric == metric:
                tv = sl.target * (1e3 if metric == "tpot" else 1.0)
                ax.axvline(tv, color="tab:red", lw=2, label=f"SLO {sl.stat} {sl.op} {tv:g} {unit}")
        ax.set_xlabel(f"{label} [{unit}]")
        ax.set_ylabel("requests")
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)

    win = "steady-state window" if sat else "whole run"
    hist(a3, list(ttft), "s", "ttft", "TTFT (engine)", "tab:orange")
    a3.set_title(f"TTFT distribution ({win})")
    hist(a4, list(tpot_ms), "ms", "tpot", "TPOT", "tab:cyan")
    a4.set_title(f"TPOT distribution ({win})")
    fig.suptitle(title, fontsize=12)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
