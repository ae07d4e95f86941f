"""KV pool of a simulated role, sized by sncc's one memory model (:mod:`sncc.capacity`).

``W_shard + KV + reserve + communication buffers <= HBM x utilization`` (simulator-modelling.md
§3.9).  A plan's roles arrive with the pool ``sncc check`` computes
(:func:`sncc.capacity.role_memory`, stored in ``RoleSpec.memory`` by :mod:`sncc.sim.from_plan`),
so check and simulate give the same KV budget.  A hand-built :class:`~sncc.sim.spec.SimSpec`
(the calibration scenarios, tests) is sized by the same arithmetic,
:func:`sncc.capacity.device_memory`, with the same constants: the engine's reserve
(:func:`sncc.capacity.engine_reserve`), the role's memory utilization, HCCL or NCCL buffers by
the chip's vendor.  No calibration profile holds memory constants.
"""
from __future__ import annotations

import math
from typing import Any


def role_memory(spec: Any, role_name: str, role: Any, *, mtp: bool, quant: str,
                weight_bytes: float | None = None):
    """:class:`sncc.capacity.MemoryBreakdown` of one device of ``role`` [B].

    ``role.memory`` when the plan's memory model sized it, else computed from the spec by the same
    arithmetic (:func:`sncc.capacity.device_memory`): the role's ``HCCL_BUFFSIZE``, redundant
    experts and expert parallelism.  ``weight_bytes`` overrides the bytes of every linear weight
    (hand-built specs with ``quant_weight_bytes``); else the spec's per-group
    ``weight_bytes_per_param``.  Raises ValueError when ``role.tp`` does not split the KV heads."""
    if getattr(role, "memory", None) is not None:
        return role.memory
    from sncc.capacity import device_memory, engine_reserve, hccl_buffsize_mb

    hccl = getattr(role, "hccl_buffsize_mb", None)
    if hccl is None:
        hccl = spec.hccl_buffsize_mb if spec.hccl_buffsize_mb is not None else hccl_buffsize_mb({})
    res = engine_reserve(getattr(spec, "engine", None), role_name)
    if weight_bytes is None:
        weight_bytes = getattr(spec, "weight_bytes_per_param", None)
    return device_memory(
        spec.model, quant, spec.kv_dtype, role.tp, role.dp, role.pp,
        hbm_bytes=int(spec.chip.hbm_bytes), utilization=getattr(role, "memory_utilization", None) or 0.9,
        reserve_bytes=res.bytes, hccl_mb=hccl, context=1, seqs=1, redundant_experts=role.redundant_experts,
        mtp=mtp, expert_parallel=role.expert_parallel, kv_bytes_per_token=spec.kv_bytes_per_token,
        weight_bytes=weight_bytes, vendor=str(getattr(spec.chip, "vendor", "ascend")).lower(), reserve_note=res.note,
        kv_token_gain=role.omni_attn.full_layer_token_gain if getattr(role, "omni_attn", None) is not None else 1.0)


def kv_budget_bytes_per_device(spec: Any, role_name: str, role: Any, *, mtp: bool, quant: str,
                               weight_bytes: float | None = None) -> float:
    """KV pool per device [B] = HBM x utilization - weights - reserve - buffers (>= 0)."""
    if role.kv_budget_bytes_per_device is not None:
        return max(0.0, float(role.kv_budget_bytes_per_device))
    return max(0.0, float(role_memory(spec, role_name, role, mtp=mtp, quant=quant,
                                      weight_bytes=weight_bytes).kv_budget))


def blocks_for(tokens: float, block_size: int) -> int:
    """KV blocks needed for ``tokens`` tokens."""
    return int(math.ceil(tokens / block_size))
