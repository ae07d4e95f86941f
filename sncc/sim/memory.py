"""Per-device memory: weights, reserves, KV budget and admitted sequences.

``W_shard + KV + activations + comm buffers + runtime reserve <= HBM * util``
(simulator-modelling.md §3.9).  Each HCCL communicator takes
``2 * HCCL_BUFFSIZE`` outside the KV pool (domain-facts §3.6).
"""
from __future__ import annotations

import math
from typing import Any

from .cost_gemm import local_experts
from .model_shape import ModelShape


def weight_bytes_per_device(shape: ModelShape, role: Any, weight_bytes: float,
                            redundant_experts: int, mtp: bool, embed_bytes: float = 2.0) -> float:
    """Weight bytes resident on one device of ``role`` [B].

    Attention, dense FFN and shared experts are TP-split over ``tp`` (replicated
    across DP groups); routed experts spread over ``tp*ep`` plus redundant copies;
    embedding and LM head are kept at ``embed_bytes`` per parameter and TP-split;
    layers are split over ``pp``.  ``mtp`` adds the MTP layer(s).
    """
    tp, pp = role.tp, max(1, role.pp)
    e_loc = local_experts(shape.n_experts, role.tp * role.ep, redundant_experts) if shape.n_experts else 0
    per_moe = shape.attn_params / tp + shape.shared_params / tp + e_loc * shape.expert_params
    per_dense = shape.attn_params / tp + shape.dense_ffn_params / tp
    layers = (shape.n_moe * per_moe + shape.n_dense * per_dense) / pp
    if mtp and shape.mtp_layers:
        extra = (per_moe if shape.n_experts else per_dense) + 2.0 * shape.hidden * shape.hidden / tp
        layers += shape.mtp_layers * extra
    return layers * weight_bytes + 2 * shape.embed_params * embed_bytes / tp


def reserve_bytes_per_device(profile: Any, role_name: str) -> float:
    """Non-KV, non-weight reserve per device [B]: HCCL buffers + activation/graph workspace."""
    buff = profile.get(f"memory.{role_name}.hccl_buffsize_bytes", 0.0) if profile.has(
        f"memory.{role_name}.hccl_buffsize_bytes") else profile.get("memory.hccl_buffsize_bytes")
    ncomm = profile.get("memory.hccl_communicators")
    act = profile.get("memory.activation_reserve_bytes")
    return 2.0 * buff * ncomm + act


def kv_budget_bytes_per_device(chip: Any, profile: Any, role_name: str, weights: float) -> float:
    """KV pool per device [B] = HBM * utilization - weights - reserves (>= 0)."""
    util = profile.get("memory.gpu_memory_utilization")
    return max(0.0, float(chip.hbm_bytes) * util - weights - reserve_bytes_per_device(profile, role_name))


def blocks_for(tokens: float, block_size: int) -> int:
    """KV blocks needed for ``tokens`` tokens."""
    return int(math.ceil(tokens / block_size))


def max_admitted_sequences(kv_budget: float, kv_bytes_per_token_device: float, tokens_per_seq: float,
                           block_size: int, max_num_seqs: int) -> int:
    """Sequences one DP group can hold if each reserves ``tokens_per_seq`` tokens."""
    per = blocks_for(tokens_per_seq, block_size) * block_size * kv_bytes_per_token_device
    if per <= 0:
        return max_num_seqs
    return max(0, min(max_num_seqs, int(kv_budget // per)))
