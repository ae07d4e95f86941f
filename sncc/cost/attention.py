"""Attention-core costs by family (the context-dependent part of a layer), per sequence.

Families (``ModelShape.family``, from the catalog's ``architecture``):

* ``gqa`` / ``mla`` — dense causal attention.  Prefill: a chunk of ``l`` new tokens after
  ``c0`` cached ones does ``l*(c0 + l/2)`` query-key pairs per layer, each
  ``2*n_h*(d_qk + d_v)`` FLOPs (simulator-modelling.md §3.2; MLA non-absorbed).  Decode: one
  query reads the whole context's KV; FLOPs per cached token ``2*n_h*((kv_lora+rope) +
  kv_lora)`` (MLA absorbed) or ``2*n_h*2*d_h`` (GQA) (§3.3).
* ``mla-dsa`` — DeepSeek-V3.2 DeepSeek Sparse Attention: every layer runs the lightning
  indexer over the WHOLE context (``index_n_heads x index_head_dim`` FP8 keys, 132 B per
  token per layer, ``2*H_i*d_i`` FLOPs per query-key pair), then MLA over the top
  ``index_topk`` (2,048) tokens only.  Attention pairs per query are ``min(p, k)``: quadratic
  in the prompt up to the knee ``k``, linear beyond (§3.2 "DSA / sparse top-k").
* ``dsv4`` — DeepSeek-V4 hybrid (catalog ``compress_ratios`` counts): every layer attends a
  sliding window of ``sliding_window`` (128) raw entries; CSA layers (ratio 4) keep one
  entry per 4 tokens, run the indexer over those entries and attend the top ``index_topk``
  (512 Flash / 1,024 Pro); HCA layers (ratio 128) keep one entry per 128 tokens and attend
  them all; SWA-only layers have the window only.  One shared KV head of ``head_dim`` (512)
  serves K and V: ``2*n_h*2*d`` FLOPs per attended entry.

KV bytes are the plan's: ``kv_bytes_per_token`` (all layers, :func:`sncc.catalog.arch.kv_bytes_per_token`
or the plan's override) is split back into per-layer entry sizes, so the bytes a full-context
read touches per token of context equal the bytes the pool stores per token (tested).  The DSV4
sliding window is a per-request constant that the catalog leaves out of the per-token size; it
is read here at the same entry size.

OmniAttn (Omni-Infer, MLA only): a fraction ``omni_layers`` of the layers is compressed and
keeps a sink block and the most recent blocks of each request (``kept`` tokens: the role's
:class:`sncc.facts.model.OmniAttnLayout`, from Omni-Infer's ``kv_cache_interface.py``); those
layers read and attend ``min(c, kept)`` tokens, the other layers the whole context.

Heads are split over attention TP; MLA/DSV4 KV is replicated across TP, GQA KV split by KV
heads (domain-facts §5.2): :func:`kv_share_per_device`.  Softmax runs inside the fused
attention kernel (its vector work pipelines with the cube there), so it is costed by the
attention efficiency, not by the vector model of :mod:`sncc.cost.vector`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

from sncc.cost.model_shape import ModelShape

#: DSA indexer K cache per token per indexed layer: FP8 key + one FP32 scale per 128 elements
#: (domain-facts §5.2, 132 B for d_i = 128; same constants as sncc.catalog.arch).
INDEXER_SCALE_BYTES = 4
INDEXER_SCALE_BLOCK = 128


def indexer_bytes(shape: ModelShape) -> float:
    """Indexer key bytes per stored entry per indexed layer [B] (132 for d_i = 128)."""
    di = shape.index_head_dim
    return di * 1.0 + di / INDEXER_SCALE_BLOCK * INDEXER_SCALE_BYTES if di else 0.0


def prefill_pair_flops(shape: ModelShape) -> float:
    """FLOPs per (query, attended key) pair per layer, all heads, prefill (non-absorbed)."""
    if shape.family == "dsv4":
        return 2.0 * shape.n_heads * 2 * shape.head_dim
    return 2.0 * shape.n_heads * (shape.qk_dim + shape.v_dim)


def causal_pairs(chunk: float, prior: float) -> float:
    """Query-key pairs of a causal chunk of ``chunk`` tokens after ``prior`` cached."""
    return chunk * (prior + chunk / 2.0)


def capped_pairs(a: float, b: float, ratio: float, cap: float) -> float:
    """``integral_a^b min(x/ratio, cap) dx``: attended entries summed over the queries at
    positions ``a..b`` when position ``x`` sees ``x/ratio`` entries, at most ``cap``."""
    if b <= a:
        return 0.0
    knee = cap * ratio
    if b <= knee:
        return (b * b - a * a) / (2.0 * ratio)
    if a >= knee:
        return cap * (b - a)
    return (knee * knee - a * a) / (2.0 * ratio) + cap * (b - knee)


def decode_flops_per_ctx_token(shape: ModelShape) -> float:
    """Decode attention FLOPs per (query, attended entry) per layer, all heads."""
    if shape.is_mla:
        return 2.0 * shape.n_heads * ((shape.kv_lora + shape.rope_dim) + shape.kv_lora)
    return 2.0 * shape.n_heads * 2 * shape.head_dim


def kv_share_per_device(shape: ModelShape, tp: int) -> float:
    """Fraction of one sequence's KV a device of an attention-TP group holds/reads."""
    if shape.is_mla or shape.family == "dsv4":
        return 1.0
    return max(1.0, shape.n_kv_heads / tp) / shape.n_kv_heads


@dataclass(frozen=True)
class AttentionCost:
    """Per-sequence attention costs of one model at one KV dtype (all layers summed).

    Build with :func:`attention_cost`.  ``entry_bytes``: bytes of one stored KV entry per
    layer (gqa/mla: one token; mla-dsa: the latent without the indexer key; dsv4: one
    compressed or raw entry); ``index_bytes``: indexer key per entry (mla-dsa, dsv4 CSA)."""

    shape: ModelShape
    entry_bytes: float
    index_bytes: float
    omni_layers: float = 0.0
    omni_kept: float = 0.0

    @property
    def has_indexer(self) -> bool:
        """True for the families with a lightning indexer (``mla-dsa``, ``dsv4`` with CSA layers)."""
        return self.shape.family == "mla-dsa" or (self.shape.family == "dsv4" and bool(self.shape.n_csa))

    @property
    def indexer_tp_split(self) -> bool:
        """True when the lightning indexer's heads are split over attention TP, False when every
        TP rank computes the whole indexer for its DP group's queries.

        DeepSeek-V3.2 (``mla-dsa``): replicated.  vLLM's ``Indexer``
        (vllm/model_executor/models/deepseek_v2.py) builds ``wq_b`` and ``weights_proj`` as
        ``ReplicatedLinear`` over all 64 heads; vllm-ascend v0.23.0 reuses that module
        (vllm_ascend/ops/mla.py, vllm_ascend/attention/sfa_v1.py: ``self.wq_b =
        self.indexer.wq_b``) and shards tokens over TP only under ``enable_dsa_cp``; SGLang's
        NSA indexer likewise keeps ``n_local_heads = n_heads``.  DeepSeek-V4 (``dsv4``): split,
        as vllm-ascend v0.23.0 builds its indexer ``wq_b`` as ``ColumnParallelLinear`` without
        ``enable_dsa_cp`` (vllm_ascend/models/deepseek_v4.py)."""
        return self.shape.family != "mla-dsa"

    # ----------------------------------------------------------------- storage
    def stored_bytes_per_token(self) -> float:
        """KV bytes the pool stores per token of context, all layers [B]; equals the
        ``kv_bytes_per_token`` it was built from."""
        s = self.shape
        if s.family == "dsv4":
            return (s.n_csa * (self.entry_bytes + self.index_bytes) / s.csa_ratio
                    + s.n_hca * self.entry_bytes / s.hca_ratio)
        return s.n_layers * (self.entry_bytes + self.index_bytes)

    # ----------------------------------------------------------------- decode
    def decode(self, c: float) -> Tuple[float, float, float]:
        """(KV bytes read, attention FLOPs, indexer FLOPs) of ONE query token of a sequence at
        context ``c`` [tokens], all layers."""
        s = self.shape
        fam = s.family
        f_att = decode_flops_per_ctx_token(s)
        if fam == "mla-dsa":
            att = min(c, s.index_topk)
            L = s.n_layers
            return (L * (c * self.index_bytes + att * self.entry_bytes), L * att * f_att,
                    L * c * 2.0 * s.index_n_heads * s.index_head_dim)
        if fam == "dsv4":
            win = min(c, s.sliding_window)
            n_c = c / s.csa_ratio if s.csa_ratio else 0.0
            n_h = c / s.hca_ratio if s.hca_ratio else 0.0
            att_c = min(n_c, s.index_topk)
            entries = s.n_layers * win + s.n_csa * att_c + s.n_hca * n_h
            by = entries * self.entry_bytes + s.n_csa * n_c * self.index_bytes
            return by, entries * f_att, s.n_csa * n_c * 2.0 * s.index_n_heads * s.index_head_dim
        toks = s.n_layers * c
        if self.omni_layers:
            toks = s.n_layers * ((1.0 - self.omni_layers) * c + self.omni_layers * min(c, self.omni_kept))
        return toks * self.entry_bytes, toks * f_att, 0.0

    # ----------------------------------------------------------------- prefill
    def prefill(self, chunk: float, prior: float) -> Tuple[float, float]:
        """(attention FLOPs, indexer FLOPs) of a causal chunk of ``chunk`` new tokens after
        ``prior`` cached ones, all layers."""
        s = self.shape
        a, b = prior, prior + chunk
        f_pair = prefill_pair_flops(s)
        fam = s.family
        if fam == "mla-dsa":
            L = s.n_layers
            return (L * capped_pairs(a, b, 1.0, s.index_topk) * f_pair,
                    L * causal_pairs(chunk, prior) * 2.0 * s.index_n_heads * s.index_head_dim)
        if fam == "dsv4":
            pairs = s.n_layers * capped_pairs(a, b, 1.0, s.sliding_window)
            idx = 0.0
            if s.n_csa and s.csa_ratio:
                pairs += s.n_csa * capped_pairs(a, b, s.csa_ratio, s.index_topk)
                idx = s.n_csa * capped_pairs(a, b, s.csa_ratio, float("inf")) * 2.0 * s.index_n_heads * s.index_head_dim
            if s.n_hca and s.hca_ratio:
                pairs += s.n_hca * capped_pairs(a, b, s.hca_ratio, float("inf"))
            return pairs * f_pair, idx
        return s.n_layers * causal_pairs(chunk, prior) * f_pair, 0.0


def attention_cost(shape: ModelShape, kv_bytes_per_token: float, *, omni_layers: float = 0.0,
                   omni_kept: float = 0.0) -> AttentionCost:
    """The :class:`AttentionCost` of ``shape`` whose pool stores ``kv_bytes_per_token`` [B]
    per token (all layers).  ``omni_layers`` (fraction of layers, MLA only) and ``omni_kept``
    [tokens] configure OmniAttn.

    Raises ValueError when ``kv_bytes_per_token`` is too small to hold the DSA indexer keys,
    or for a dsv4 shape without CSA/HCA layer counts."""
    fam = shape.family
    if fam == "mla-dsa":
        idx = indexer_bytes(shape)
        lat = kv_bytes_per_token / shape.n_layers - idx
        if lat <= 0:
            raise ValueError(f"kv_bytes_per_token {kv_bytes_per_token} leaves no room for the DSA latent")
        return AttentionCost(shape, lat, idx)
    if fam == "dsv4":
        idx = indexer_bytes(shape)
        per_entry = (shape.n_csa / shape.csa_ratio if shape.csa_ratio else 0.0) + (
            shape.n_hca / shape.hca_ratio if shape.hca_ratio else 0.0)
        if per_entry <= 0:
            raise ValueError("a dsv4 model needs compress_ratios counts (csa/hca layers) in the catalog")
        entry = (kv_bytes_per_token - (shape.n_csa * idx / shape.csa_ratio if shape.csa_ratio else 0.0)) / per_entry
        return AttentionCost(shape, entry, idx)
    if not shape.is_mla:
        omni_layers = 0.0
    return AttentionCost(shape, kv_bytes_per_token / shape.n_layers, 0.0, omni_layers, omni_kept)
