"""``sncc simulate --plot FILE``: time series and latency distributions of one run.

Needs matplotlib (optional extra ``plot``: ``pip install 'sncc[plot]'``); imported lazily.
Four panels: requests waiting for dispatch and running decode sequences over time, KV-pool
use over time (the steady-state window shaded in both), and histograms of TTFT and TPOT
over the steady-state window (whole run when there is none) with the SLO targets.  An SLO on
the mean also draws the observed mean; a ``tokens_per_s_per_user >= X`` SLO is drawn on the
TPOT panel as the per-request TPOT ``1/X`` (a request whose TPOT is below it streams at least
X tokens/s); SLOs without a panel (e2e, QPM, output tokens/s) are listed under the figure.
A panel without data (no decode step sampled, every output one token long) says so instead
of drawing empty axes.

The file format follows the extension (:func:`resolve_plot_path`): any format matplotlib's
``savefig`` writes (:func:`supported_formats`); a path without an extension gets ``.png``.
"""
from __future__ import annotations

import os
from typing import Any, List, Sequence, Tuple


class PlotUnavailable(RuntimeError):
    """matplotlib is not installed, or it cannot write the requested format."""


class PlotPathError(ValueError):
    """The ``--plot`` path is a directory, has an extension matplotlib cannot write, or its
    directory does not exist."""


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotUnavailable("--plot needs matplotlib: pip install 'sncc[plot]'") from None
    return plt


def supported_formats() -> List[str]:
    """File extensions matplotlib's ``savefig`` writes (sorted, without the dot), e.g.
    ``["eps", "jpeg", "jpg", "pdf", "png", "svg", ...]``.  Raises :class:`PlotUnavailable`
    without matplotlib."""
    plt = _pyplot()
    fig = plt.figure()
    try:
        return sorted(fig.canvas.get_supported_filetypes())
    finally:
        plt.close(fig)


def resolve_plot_path(path: str) -> Tuple[str, str]:
    """(the file to write, a note for the user or "") for ``--plot path``.

    * a directory (existing, or written with a trailing separator) is refused;
    * an existing path that is not a regular file (``/dev/null``, a FIFO) is refused;
    * no extension: ``.png`` is appended and the note says so;
    * an extension matplotlib cannot write (:func:`supported_formats`) is refused with the list;
    * a path whose directory does not exist is refused.

    Raises :class:`PlotPathError` (refusals) or :class:`PlotUnavailable` (no matplotlib)."""
    if not path or path.endswith(("/", os.sep)) or os.path.isdir(path):
        raise PlotPathError(f"--plot {path}: is a directory; give a file name, e.g. "
                            f"--plot {os.path.join(path or '.', 'simulation.png')}")
    if os.path.exists(path) and not os.path.isfile(path):
        # /dev/null, a FIFO, a socket: the plot would not be a file (and `.png` would be appended)
        raise PlotPathError(f"--plot {path}: exists and is not a regular file; give the name of an "
                            "image file to write, e.g. --plot simulation.png")
    fmts = supported_formats()
    ext = os.path.splitext(os.path.basename(path))[1][1:].lower()
    note = ""
    if not ext:
        note = f"--plot {path} has no extension: wrote {path}.png (PNG)"
        path = path + ".png"
    elif ext not in fmts:
        raise PlotPathError(f"--plot {path}: cannot write `.{ext}` files; use one of "
                            + ", ".join(f".{f}" for f in fmts))
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise PlotPathError(f"--plot {path}: no directory {parent}")
    return path, note


def _label(sl: Any) -> str:
    return sl.metric if (sl.stat or "mean") == "mean" else f"{sl.metric}.{sl.stat}"


#: SLO metric -> (unit shown, value per SLO unit): TPOT in ms as on its panel, other latencies in s
_UNITS = {"ttft": ("s", 1.0), "tpot": ("ms", 1e3), "e2e": ("s", 1.0), "qpm": ("", 1.0),
          "output_tokens_per_s": ("tokens/s", 1.0), "tokens_per_s_per_user": ("tokens/s", 1.0)}


def _slo_text(sl: Any) -> str:
    """``tpot < 10 ms``: an SLO with its target in the unit its panel uses."""
    unit, k = _UNITS.get(sl.metric, ("", 1.0))
    return f"{_label(sl)} {sl.op} {sl.target * k:g} {unit}".rstrip()


def _empty(ax: Any, text: str) -> None:
    """Replace a panel without data by a note (no axes, so no meaningless scale)."""
    ax.set_xticks([])
    ax.set_yticks([])
    ax.text(0.5, 0.5, text, ha="center", va="center", fontsize=9, wrap=True, transform=ax.transAxes)


def write_plot(result: Any, path: str, title: str, ttft: Sequence[float], tpot_ms: Sequence[float],
               slos: Sequence[Any] = ()) -> None:
    """Write the figure to ``path`` (format from its extension); ``ttft`` [s] and ``tpot_ms``
    [ms] are per-request samples of the window the histograms show.  The p50/p90/p99 lines and
    legends are the report's own figures (:func:`sncc.sim.report.units.window_stats`), not a
    second computation from the samples.

    Raises :class:`PlotUnavailable` without matplotlib or when matplotlib cannot write the
    format (e.g. ``.pgf`` without LaTeX), OSError when ``path`` cannot be written."""
    plt = _pyplot()
    s = result.series or {"t_s": [], "waiting": [], "running": [], "kv_use": []}
    sat = result.saturated
    fig, axs = plt.subplots(2, 2, figsize=(12, 7.5), dpi=110)
    (a1, a2), (a3, a4) = axs
    t = s["t_s"]

    def shade(ax):
        if sat:
            ax.axvspan(sat["start_s"], sat["end_s"], color="tab:green", alpha=0.08, label="steady-state window")

    a1.set_title("Queue depth and decode batch")
    a2.set_title("Decode KV-cache use")
    if len(t) < 2:
        why = (f"{len(t)} time-series point{'s' if len(t) != 1 else ''}: the run ({result.duration_s:.3g} s)\n"
               "is too short to sample queue, batch and KV use")
        _empty(a1, why)
        _empty(a2, why)
    else:
        a1.plot(t, s["waiting"], color="tab:red", lw=1.2, label="waiting for dispatch (proxy queue)")
        a1.plot(t, s["running"], color="tab:blue", lw=1.2, label="running decode sequences")
        shade(a1)
        a1.set_xlabel("simulated time [s]")
        a1.set_ylabel("requests")
        a1.legend(fontsize=8, loc="best")
        a1.grid(alpha=0.3)
        a2.plot(t, [100 * x for x in s["kv_use"]], color="tab:purple", lw=1.2, label="KV pool reserved")
        shade(a2)
        a2.set_ylim(0, 105)
        a2.set_xlabel("simulated time [s]")
        a2.set_ylabel("KV pool use [%]")
        a2.legend(fontsize=8, loc="best")
        a2.grid(alpha=0.3)

    tps_user = (result.tokens_per_s_per_user or {}).get("mean")
    from sncc.sim.report.units import fmt, window_stats
    stats = window_stats(result)

    def hist(ax, xs, unit, metric, label, color, empty_note):
        if not xs:
            _empty(ax, empty_note)
            return
        scale = 1e3 if metric == "tpot" else 1.0
        lo_x, hi_x = min(xs), max(xs)
        # one value: matplotlib would centre a ±0.5 range on it (negative latencies); span [0, 2v]
        rng = (0.0, 2.0 * hi_x) if hi_x == lo_x and hi_x > 0 else None
        counts, _, _ = ax.hist(xs, bins=50, range=rng, color=color, alpha=0.8)
        row = stats["tpot_ms" if metric == "tpot" else "ttft_s"]
        for q, ls in ((50, "-"), (90, "--"), (99, ":")):
            v = row.get(f"p{q}")
            if v is not None and v == v:
                ax.axvline(v, color="black", ls=ls, lw=1, label=f"p{q} {fmt(v, unit)}")
        on_mean = False
        for sl in slos:
            if sl.metric == metric:
                tv = sl.target * scale
                ax.axvline(tv, color="tab:red", lw=2, label=f"SLO {_slo_text(sl)}")
                on_mean = on_mean or (sl.stat or "mean") == "mean"
            elif sl.metric == "tokens_per_s_per_user" and metric == "tpot" and sl.target > 0:
                tv = 1e3 / sl.target
                seen = f"\nrun mean {fmt(tps_user, 'tokens/s')}" if tps_user == tps_user and tps_user else ""
                ax.axvline(tv, color="tab:pink", lw=2, ls="-.",
                           label=f"SLO {_slo_text(sl)}:\nTPOT <= {fmt(tv, unit)} per request{seen}")
        if on_mean:
            m = row.get("mean")
            ax.axvline(m, color="tab:green", lw=2, ls="--", label=f"observed mean {fmt(m, unit)}")
        lo, hi = ax.get_xlim()
        if lo < 0:                       # a latency is never negative
            ax.set_xlim(0, hi)
        # head room above the tallest bar, where the legend goes instead of over the bars
        ax.set_ylim(0, max(counts) * 1.6 if len(counts) and max(counts) > 0 else 1)
        ax.set_xlabel(f"{label} [{unit}]")
        ax.set_ylabel("requests")
        ax.legend(fontsize=8, loc="best")
        ax.grid(alpha=0.3)

    win = "steady-state window" if sat else "whole run"
    hist(a3, list(ttft), "s", "ttft", "TTFT (engine)", "tab:orange", "no TTFT samples")
    a3.set_title(f"TTFT distribution ({win})")
    hist(a4, list(tpot_ms), "ms", "tpot", "TPOT", "tab:cyan",
         "no TPOT samples: every request generated one token\n(TPOT needs at least two)")
    a4.set_title(f"TPOT distribution ({win})")
    missing = [_slo_text(sl) for sl in slos
               if sl.metric not in ("ttft", "tpot", "tokens_per_s_per_user")
               or (sl.metric == "tokens_per_s_per_user" and not tpot_ms)
               or (sl.metric in ("ttft", "tpot") and not (ttft if sl.metric == "ttft" else tpot_ms))]
    fig.suptitle(title, fontsize=12)
    if missing:
        fig.text(0.5, 0.005, "SLOs not plotted (no panel or no samples; see the report): " + ", ".join(missing),
                 ha="center", va="bottom", fontsize=8)
        fig.tight_layout(rect=(0, 0.03, 1, 1))
    else:
        fig.tight_layout()
    try:
        fig.savefig(path)
    except (ValueError, RuntimeError) as e:       # format matplotlib knows but cannot write here
        raise PlotUnavailable(f"cannot write {path}: {e}") from None
    finally:
        plt.close(fig)
