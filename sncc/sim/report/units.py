"""One unit per metric, and one way to write numbers: shared by the text report, the JSON document
and the plot, so the three agree.

:data:`UNITS` gives each SLO metric the unit its figures are shown in, everywhere: TTFT and e2e
in seconds, TPOT in milliseconds, QPM in requests per minute, rates in tokens per second.  The
simulator computes in SI (seconds); :func:`to_unit` converts once.  :func:`fmt` writes a number
with a precision that suits its size and never in scientific notation; ``None`` and NaN are
``n/a`` (a metric the run does not define, e.g. TPOT when every output is one token long).
"""
from __future__ import annotations

import math
from typing import Any, Dict, Optional, Tuple

#: SLO metric -> (unit, factor from the simulator's SI value to that unit)
UNITS: Dict[str, Tuple[str, float]] = {
    "ttft": ("s", 1.0), "client_ttft": ("s", 1.0), "engine_ttft": ("s", 1.0), "queue": ("s", 1.0), "e2e": ("s", 1.0),
    "tpot": ("ms", 1e3), "qpm": ("req/min", 1.0), "output_tokens_per_s": ("tokens/s", 1.0),
    "tokens_per_s_per_user": ("tokens/s", 1.0),
}

NA = "n/a"


def is_number(x: Any) -> bool:
    """True for a finite int/float (not bool)."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def unit_of(metric: str) -> str:
    """The unit ``metric``'s figures are shown in (``""`` for an unknown metric)."""
    return UNITS.get(metric, ("", 1.0))[0]


def to_unit(metric: str, si: Optional[float]) -> Optional[float]:
    """``si`` (seconds for latencies) in ``metric``'s unit; None stays None, NaN becomes None."""
    if si is None or not is_number(si):
        return None
    return si * UNITS.get(metric, ("", 1.0))[1]


def fmt(x: Optional[float], unit: str = "", digits: int = 3) -> str:
    """``x`` with about ``digits`` significant digits in fixed-point notation (thousands separated,
    at most ``digits`` decimals, never an exponent), followed by `` unit``; ``n/a`` for None/NaN."""
    if x is None or not is_number(x):
        return NA
    a = abs(x)
    if a == 0:
        dec = 0
    else:
        dec = max(0, min(digits, digits - 1 - int(math.floor(math.log10(a)))))
    s = f"{x:,.{dec}f}"
    return f"{s} {unit}" if unit else s


def slo_name(metric: str, stat: Optional[str], op: str, target_si: float) -> str:
    """The name of an SLO with its target in its metric's unit: ``tpot.mean < 50 ms``,
    ``ttft.p90 <= 2 s``, ``qpm >= 600``."""
    unit = unit_of(metric)
    v = to_unit(metric, target_si)
    t = NA if v is None else (f"{v:.6f}".rstrip("0").rstrip(".") or "0")
    head = f"{metric}.{stat or 'mean'}" if metric in ("ttft", "tpot", "e2e") else metric
    tail = f" {unit}" if unit and unit != "req/min" else ""
    return f"{head} {op} {t}{tail}"


def window_stats(result: Any) -> Dict[str, Any]:
    """The latency statistics one report shows, computed once for the text, the JSON and the plot:
    ``window`` (``steady`` or ``run``), and for ``client_ttft_s`` (request sent to first token, what
    ``vllm bench serve`` reports as TTFT), ``ttft_s`` (engine-side: dispatch to first token),
    ``tpot_ms``, ``e2e_s``, ``queue_s`` the mean/p50/p90/p99 over the steady-state window when the
    run has one, else over the run."""
    sat = getattr(result, "saturated", None) or {}
    if sat:
        p = sat["percentiles"]
        return {"window": "steady", **{k: dict(p[k]) for k in ("client_ttft_s", "ttft_s", "tpot_ms", "e2e_s", "queue_s")
                                       if k in p}}
    return {"window": "run", "client_ttft_s": dict(getattr(result, "client_ttft_s", None) or {}),
            "ttft_s": dict(result.ttft_s), "tpot_ms": dict(result.tpot_ms),
            "e2e_s": dict(result.e2e_s), "queue_s": dict(result.queue_s)}
