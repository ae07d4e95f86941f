"""Per-operation roofline: ``t = max(FLOPs/(peak*eta_c), bytes/(BW*eta_m)) + t0``.

Source: simulator-modelling.md §3.1 (llm-analysis, AIC, GenZ all use this form).
"""
from __future__ import annotations

from typing import Any, Mapping


def roofline(flops: float, nbytes: float, peak: float, bw: float, eta_c: float, eta_m: float,
             t0: float = 0.0) -> float:
    """Time of one operation [s] from its FLOPs, bytes moved [B], peak [FLOP/s], BW [B/s]."""
    tc = flops / (peak * eta_c) if flops > 0 else 0.0
    tm = nbytes / (bw * eta_m) if nbytes > 0 else 0.0
    return (tc if tc > tm else tm) + t0


def peak_for(chip: Any, dtype: str) -> float:
    """Peak dense FLOP/s of ``chip`` for ``dtype``; falls back int8->fp8->bf16->fp16.

    The catalog omits a key when the chip lacks the format; the fallback then
    models the computation running at the next available rate.
    """
    peaks: Mapping[str, float] = getattr(chip, "peak_flops", {}) or {}
    order = [dtype, "int8" if dtype == "fp8" else "fp8", "bf16", "fp16"]
    for d in order:
        v = peaks.get(d)
        if v:
            return float(v)
    raise ValueError(f"chip {getattr(chip, 'id', chip)!r} has no peak FLOP/s for {dtype}")
