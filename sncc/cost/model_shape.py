"""Per-layer shapes of a model (parameter counts, attention dims) for the cost model.

Computed from the HF config field names carried by the catalog's ``ModelArch``
(standard architecture arithmetic, domain-facts §5.1); kept here so the cost
model does not depend on how the catalog groups its totals.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def _g(m: Any, name: str, default: Any = 0) -> Any:
    v = getattr(m, name, None)
    return default if v is None else v


@dataclass(frozen=True)
class ModelShape:
    """Parameter counts [parameters] and dims of one model.

    attn_params: attention projections per layer (MLA: q_a, q_b, kv_a, kv_b, o;
    GQA: q, k, v, o).  dense_ffn_params: one dense SwiGLU FFN layer.
    expert_params: one routed expert (3 matrices).  shared_params: shared experts
    of one MoE layer.  n_layers / n_dense / n_moe: layer counts.
    """

    n_layers: int
    n_dense: int
    n_moe: int
    hidden: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    is_mla: bool
    kv_lora: int
    rope_dim: int
    qk_dim: int
    v_dim: int
    attn_params: float
    dense_ffn_params: float
    expert_params: float
    shared_params: float
    n_experts: int
    top_k: int
    vocab: int
    mtp_layers: int
    #: attention family: ``gqa``, ``mla``, ``mla-dsa`` (DeepSeek-V3.2 DSA) or ``dsv4``
    family: str = "gqa"
    index_n_heads: int = 0
    index_head_dim: int = 0
    index_topk: int = 0
    sliding_window: int = 0
    #: DeepSeek-V4 layer mix from the catalog's ``compress_ratios`` counts
    n_swa_only: int = 0
    n_csa: int = 0
    n_hca: int = 0
    csa_ratio: int = 0
    hca_ratio: int = 0
    #: per-layer intermediate activations for the vector (elementwise) model
    q_lora: int = 0
    dense_inter: int = 0
    moe_inter: int = 0
    n_shared: int = 0

    @property
    def embed_params(self) -> float:
        """Embedding table parameters (the LM head has the same count)."""
        return float(self.vocab * self.hidden)

    def active_params_per_token(self) -> float:
        """Active parameters per token, excluding embedding [parameters]."""
        per_moe = self.attn_params + self.shared_params + self.top_k * self.expert_params
        per_dense = self.attn_params + self.dense_ffn_params
        return self.n_moe * per_moe + self.n_dense * per_dense + self.embed_params


def model_shape(m: Any) -> ModelShape:
    """Build a :class:`ModelShape` from a catalog ModelArch (HF field names).

    ``attn_params`` [parameters per layer] is the catalog's
    ``param_breakdown(m)["attention"] / num_hidden_layers`` (MLA, GQA, DSA indexer, V4
    compressed attention), so the memory checks and the simulator count the same weights."""
    L = int(_g(m, "num_hidden_layers"))
    H = int(_g(m, "hidden_size"))
    nh = int(_g(m, "num_attention_heads"))
    nkv = int(_g(m, "num_key_value_heads", nh))
    kv_lora = int(_g(m, "kv_lora_rank", 0))
    is_mla = kv_lora > 0
    E = int(_g(m, "n_routed_experts", 0) or _g(m, "num_experts", 0))
    k = int(_g(m, "num_experts_per_tok", 0))
    if is_mla:
        q_lora = int(_g(m, "q_lora_rank", 0))
        nope = int(_g(m, "qk_nope_head_dim"))
        rope = int(_g(m, "qk_rope_head_dim"))
        v = int(_g(m, "v_head_dim"))
        qk = nope + rope
        if q_lora:
            q_p = H * q_lora + q_lora * nh * qk
        else:
            q_p = H * nh * qk
        attn = q_p + H * (kv_lora + rope) + kv_lora * nh * (nope + v) + nh * v * H
        hd = qk
    else:
        hd = int(_g(m, "head_dim", 0) or H // nh)
        rope = 0
        qk = hd
        v = hd
        attn = H * nh * hd + 2 * H * nkv * hd + nh * hd * H
    try:
        # one parameter count for the checks and the simulator: the catalog's breakdown
        # also counts DSA indexer (V3.2) and V4 compressor/indexer weights and V4's
        # grouped low-rank output projection, which the MLA/GQA formula above does not
        from sncc.catalog.arch import param_breakdown
        attn = param_breakdown(m)["attention"] / L
    except (AttributeError, TypeError, ZeroDivisionError):
        pass    # not a catalog ModelArch (e.g. a bare test object): keep the formula above
    inter = int(_g(m, "intermediate_size", 0))
    moe_inter = int(_g(m, "moe_intermediate_size", 0))
    n_shared = int(_g(m, "n_shared_experts", 0))
    if E:
        n_dense = int(_g(m, "first_k_dense_replace", 0))
    else:
        n_dense = L
    return ModelShape(
        n_layers=L, n_dense=n_dense, n_moe=L - n_dense, hidden=H, n_heads=nh,
        n_kv_heads=nkv, head_dim=hd, is_mla=is_mla, kv_lora=kv_lora, rope_dim=rope,
        qk_dim=qk, v_dim=v, attn_params=float(attn),
        dense_ffn_params=float(3 * H * inter), expert_params=float(3 * H * moe_inter),
        shared_params=float(3 * H * moe_inter * n_shared), n_experts=E, top_k=k,
        vocab=int(_g(m, "vocab_size")), mtp_layers=int(_g(m, "num_nextn_predict_layers", 0)),
        family=str(_g(m, "architecture", "mla" if is_mla else "gqa")),
        index_n_heads=int(_g(m, "index_n_heads", 0)), index_head_dim=int(_g(m, "index_head_dim", 0)),
        index_topk=int(_g(m, "index_topk", 0)), sliding_window=int(_g(m, "sliding_window", 0)),
        n_swa_only=int(_g(m, "n_swa_only_layers", 0)), n_csa=int(_g(m, "n_csa_layers", 0)),
        n_hca=int(_g(m, "n_hca_layers", 0)), csa_ratio=int(_g(m, "csa_compress_ratio", 0)),
        hca_ratio=int(_g(m, "hca_compress_ratio", 0)), q_lora=int(_g(m, "q_lora_rank", 0)),
        dense_inter=inter, moe_inter=moe_inter, n_shared=n_shared,
    )


def kv_bytes_per_token(shape: ModelShape, kv_bytes: float) -> float:
    """All-layer KV bytes per token (MLA latent+rope, GQA 2*nkv*hd) [B]."""
    if shape.is_mla:
        return shape.n_layers * (shape.kv_lora + shape.rope_dim) * kv_bytes
    return shape.n_layers * 2 * shape.n_kv_heads * shape.head_dim * kv_bytes
