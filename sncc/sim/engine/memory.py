"""KV pool of a simulated role, sized by sncc's one memory model (:mod:`sncc.capacity`).

``W_shard + KV + reserve + HCCL buffers <= HBM * utilization`` (simulator-modelling.md
§3.9).  Weights (:func:`sncc.capacity.weights_per_device`, from
:func:`sncc.catalog.arch.param_breakdown`), KV bytes per token
(:func:`sncc.catalog.arch.kv_bytes_per_token_per_device`) and HCCL buffers
(2 x HCCL_BUFFSIZE per communicator) are the same functions the memory check
uses; the calibration profile supplies only what is calibrated:
``memory.gpu_memory_utilization`` and ``memory.runtime_reserve_bytes``.
"""
from __future__ import annotations

import math
from typing import Any


def role_memory(spec: Any, profile: Any, role_name: str, role: Any, *, mtp: bool,
                quant: str, weight_bytes: float):
    """:class:`sncc.capacity.MemoryBreakdown` of one device of ``role`` [B].

    Raises ValueError when ``role.tp`` does not split the model's KV heads.
    """
    from sncc.capacity import device_memory, hccl_buffsize_mb

    hccl = spec.hccl_buffsize_mb if spec.hccl_buffsize_mb is not None else hccl_buffsize_mb({})
    redundant = spec.features.redundant_experts if role_name != "prefill" else 0
    return device_memory(
        spec.model, quant, spec.kv_dtype, role.tp, role.ep, role.pp,
        hbm_bytes=int(spec.chip.hbm_bytes), utilization=profile.get("memory.gpu_memory_utilization"),
        reserve_bytes=int(profile.get("memory.runtime_reserve_bytes")), hccl_mb=hccl,
        context=1, seqs=1, redundant_experts=redundant, mtp=mtp,
        kv_bytes_per_token=spec.kv_bytes_per_token, weight_bytes=weight_bytes)


def kv_budget_bytes_per_device(spec: Any, profile: Any, role_name: str, role: Any, *, mtp: bool,
                               quant: str, weight_bytes: float) -> float:
    """KV pool per device [B] = HBM * utilization - weights - reserve - HCCL (>= 0)."""
    return max(0.0, float(role_memory(spec, profile, role_name, role, mtp=mtp, quant=quant,
                                      weight_bytes=weight_bytes).kv_budget))


def blocks_for(tokens: float, block_size: int) -> int:
    """KV blocks needed for ``tokens`` tokens."""
    return int(math.ceil(tokens / block_size))
