"""Attention-core costs (the context-dependent part), per device.

* Prefill (MLA non-absorbed / GQA), causal: per layer a chunk of ``l`` new
  tokens after ``c0`` cached ones does ``l*(c0 + l/2)`` query-key pairs, each
  ``2*n_h*(d_qk + d_v)`` FLOPs (simulator-modelling.md §3.2).
* Decode (MLA absorbed): each query token attends over the latent:
  ``2*n_h*((kv_lora+rope) + kv_lora)`` FLOPs per cached token; GQA:
  ``2*n_h*2*d_h``.  Bytes: the KV cache of the context (§3.3).
Heads are split over attention TP; MLA KV is replicated across TP
(domain-facts §5.2), GQA KV is split by KV heads (replicated when tp > n_kv).
"""
from __future__ import annotations

from .model_shape import ModelShape


def prefill_pair_flops(shape: ModelShape) -> float:
    """FLOPs per (query, key) pair per layer, all heads."""
    return 2.0 * shape.n_heads * (shape.qk_dim + shape.v_dim)


def causal_pairs(chunk: float, prior: float) -> float:
    """Query-key pairs of a causal chunk of ``chunk`` tokens after ``prior`` cached."""
    return chunk * (prior + chunk / 2.0)


def decode_flops_per_ctx_token(shape: ModelShape) -> float:
    """Decode attention FLOPs per (query, cached token) per layer, all heads."""
    if shape.is_mla:
        return 2.0 * shape.n_heads * ((shape.kv_lora + shape.rope_dim) + shape.kv_lora)
    return 2.0 * shape.n_heads * 2 * shape.head_dim


def kv_share_per_device(shape: ModelShape, tp: int) -> float:
    """Fraction of one sequence's KV a device of an attention-TP group holds/reads."""
    if shape.is_mla:
        return 1.0
    return max(1.0, shape.n_kv_heads / tp) / shape.n_kv_heads
