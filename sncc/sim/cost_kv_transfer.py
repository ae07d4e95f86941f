"""KV-cache transfer from a prefill to a decode instance (simulator-modelling.md §3.7).

``t_kv = t_setup + n_desc * t_desc + bytes/(BW * eta)`` with
``n_desc = ceil(S/block) * L`` (one descriptor per block per layer).  Exposed
time with layer-wise overlap: ``max(t_kv/L, t_kv - t_prefill*(L-1)/L)``.
"""
from __future__ import annotations

import math


def kv_transfer_time(tokens: float, kv_bytes_per_token: float, block_size: int, n_layers: int,
                     bw: float, eta: float, t_setup: float, t_desc: float,
                     senders: int = 1) -> float:
    """Transfer time of ``tokens`` tokens of KV [s]; ``senders`` ranks send in parallel
    (descriptors and bytes split over them)."""
    if tokens <= 0:
        return 0.0
    n_desc = math.ceil(tokens / block_size) * n_layers / max(1, senders)
    nbytes = tokens * kv_bytes_per_token / max(1, senders)
    return t_setup + n_desc * t_desc + nbytes / (bw * eta)


def kv_exposed_time(t_kv: float, t_last_prefill_step: float, n_layers: int, layerwise: bool) -> float:
    """Part of the transfer not hidden behind the prefill step [s]."""
    if not layerwise:
        return t_kv
    return max(t_kv / n_layers, t_kv - t_last_prefill_step * (n_layers - 1) / n_layers)
