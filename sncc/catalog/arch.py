"""Pure functions of a :class:`~sncc.catalog.ModelArch`: parameter counts and KV-cache sizes.

Units: parameter counts are element counts (float, not bytes); KV sizes are bytes per token.
Formulas and reference values: ``../shared/reference/domain-facts.md`` §5.1 (shapes) and §5.2
(KV-cache bytes per token).  Sources of the layouts are cited per function.
"""

from __future__ import annotations

from . import ModelArch, kv_dtype_bytes

__all__ = [
    "attention_params_per_layer",
    "dsv4_compressor_indexer_params",
    "expert_params",
    "param_breakdown",
    "total_params",
    "active_params_per_token",
    "kv_bytes_per_token_per_layer",
    "kv_bytes_per_token",
    "kv_bytes_per_token_per_device",
    "linear_attention_params_per_layer",
    "linear_state_bytes_per_seq",
    "shared_expert_params",
    "KV_LAYOUTS",
]

#: Bytes per element of the model dtype kept for the RoPE part of a quantized MLA cache (BF16).
#: vllm-ascend C8 keeps rope in the model dtype (domain-facts §5.2, modelslim_config.py).
_ROPE_MODEL_DTYPE = "bf16"
#: vLLM fp8_ds_mla (FlashMLA sparse) per-token-per-layer size in bytes: 512 FP8 latent
#: + 4 FP32 scales + 64 BF16 rope (domain-facts §5.2, vLLM FlashMLASparseBackend).
_FP8_DS_MLA_SCALE_BYTES = 4  # one FP32 scale ...
_FP8_DS_MLA_SCALE_BLOCK = 128  # ... per 128 latent elements (4 scales for 512)
#: DSA lightning-indexer K cache: FP8 key + one FP32 scale per 128 elements (domain-facts §5.2).
_INDEXER_DTYPE = "fp8"
_INDEXER_SCALE_BYTES = 4
_INDEXER_SCALE_BLOCK = 128
#: DeepSeek-V4 per stored entry, SGLang sizing: qk_nope (fp8) + 2 x qk_rope (bf16) + 8 B scales
#: (domain-facts §5.2, "448 + 128 + 8 = 584 B").
_DSV4_ENTRY_SCALE_BYTES = 8
#: DeepSeek-V4 KV compressors: output series per source token.  A CSA (ratio-4) compressor and the
#: indexer's compressor project each token to two overlapping-window series (Ca, Cb: ``2 x head_dim``);
#: an HCA (ratio-128) compressor to one (``1 x head_dim``).  R: HF transformers
#: models/deepseek_v4/modeling_deepseek_v4.py (DeepseekV4CSACompressor, DeepseekV4HCACompressor,
#: DeepseekV4Indexer); the DeepSeek reference inference Compressor sets ``coff = 1 + (ratio == 4)``.
_DSV4_CSA_SERIES = 2
_DSV4_HCA_SERIES = 1

#: MLA KV-cache layouts (:func:`kv_bytes_per_token`), named by what they store, not by an engine:
#: ``as-deployed`` (the default), ``latent-only-8bit``, ``fp8_ds_mla``, ``packed``
KV_LAYOUTS = ("as-deployed", "latent-only-8bit", "fp8_ds_mla", "packed")
#: the kv_dtype that keeps rope in the model dtype under ``as-deployed`` (vllm-ascend's C8 cache,
#: the only int8 KV cache: vllm_ascend/quantization/modelslim_config.py)
_ROPE_KEPT_DTYPES = ("int8",)


def _swiglu_params(hidden: int, inter: int) -> float:
    """gate + up + down projections of a SwiGLU FFN: 3 × hidden × inter."""
    return 3.0 * hidden * inter


def attention_params_per_layer(m: ModelArch) -> float:
    """Attention weights of one layer (element count; norms and biases are ignored except MLA norms).

    * GQA/MHA: ``h·H·d`` (q) + ``2·h·n_kv·d`` (k, v) + ``H·d·h`` (o).
    * MLA (DeepSeek-V3/R1, Kimi K2; HF DeepseekV3 modelling): ``h·q_lora + q_lora + q_lora·H·(nope+rope)``
      + ``h·(kv_lora+rope) + kv_lora`` + ``kv_lora·H·(nope+v)`` + ``H·v·h``.
    * mla-dsa (V3.2) adds the lightning indexer ``q_lora·Hi·di + h·di + 2·di + h·Hi`` (approximation
      of the reference indexer: wq_b, wk, k_norm, weights_proj; I).
    * dsv4: ``h·q_lora + q_lora·H·d`` (q: wq_a, wq_b) + ``h·d`` (wkv, single shared KV head)
      + grouped low-rank output ``H·d·o_lora`` (wo_a: ``o_groups`` blocks of ``H·d/o_groups`` inputs
      × ``o_lora`` outputs) ``+ o_groups·o_lora·h`` (wo_b) (HF transformers modeling_deepseek_v4.py
      DeepseekV4GroupedLinear; an earlier version divided wo_a by ``o_groups``).  This is the part
      every layer has; the compressor and indexer weights of CSA/HCA layers differ by layer kind
      and are added per layer by :func:`dsv4_compressor_indexer_params` in :func:`param_breakdown`.
      Norms and the per-head attention sink are ignored.
    Shapes: domain-facts §5.1.
    """
    h, H = m.hidden_size, m.num_attention_heads
    if m.is_mla:
        nope, rope, v = m.qk_nope_head_dim or 0, m.qk_rope_head_dim or 0, m.v_head_dim or 0
        if m.q_lora_rank:
            q = h * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * H * (nope + rope)
        else:
            q = h * H * (nope + rope)
        kv_lora = m.kv_lora_rank or 0
        kv = h * (kv_lora + rope) + kv_lora + kv_lora * H * (nope + v)
        o = H * v * h
        total = float(q + kv + o)
        if m.architecture == "mla-dsa" and m.index_head_dim and m.index_n_heads:
            di, Hi = m.index_head_dim, m.index_n_heads
            total += (m.q_lora_rank or h) * Hi * di + h * di + 2 * di + h * Hi
        return total
    if m.is_dsv4:
        d = m.attn_head_dim
        q_lora = m.q_lora_rank or 0
        q = h * q_lora + q_lora * H * d if q_lora else h * H * d
        kv = h * d * m.num_key_value_heads
        if m.o_lora_rank and m.o_groups:
            o = H * d * m.o_lora_rank + m.o_groups * m.o_lora_rank * h
        else:
            o = H * d * h
        return float(q + kv + o)
    d = m.attn_head_dim
    gqa = float(h * H * d + 2 * h * m.num_key_value_heads * d + H * d * h)
    if m.is_hybrid_linear:
        # gated full attention: q_proj also projects the output gate (H·d more outputs); averaged
        # with the Gated DeltaNet layers so that ``n_layers × this`` is the model's attention
        full = gqa + h * H * d
        n_full = m.kv_layers
        n_lin = m.num_hidden_layers - n_full
        return (n_full * full + n_lin * linear_attention_params_per_layer(m)) / m.num_hidden_layers
    return gqa


def linear_attention_params_per_layer(m: ModelArch) -> float:
    """Weights of one Gated DeltaNet (linear-attention) layer of a hybrid model [elements]; 0 when
    the model has none.

    With ``kh, kd`` the linear key heads and head dim, ``vh, vd`` the value heads and head dim,
    ``h`` hidden and ``c`` the conv kernel: ``in_proj_qkvz`` ``h·(2·kh·kd + 2·vh·vd)``,
    ``in_proj_ba`` ``h·2·vh``, ``conv1d`` ``(2·kh·kd + vh·vd)·c``, ``out_proj`` ``vh·vd·h``
    (I: transformers 5.24.0 ``Qwen3NextGatedDeltaNet`` / ``Qwen3_5GatedDeltaNet`` layer shapes;
    norms and the per-head ``A_log`` / ``dt_bias`` vectors ignored).  The full-attention layers
    of these models are gated: their ``q_proj`` has ``2·H·d`` outputs (query and gate).
    """
    kh, kd = m.linear_num_key_heads or 0, m.linear_key_head_dim or 0
    vh, vd = m.linear_num_value_heads or 0, m.linear_value_head_dim or 0
    if not (kh and kd and vh and vd):
        return 0.0
    h, c = m.hidden_size, m.linear_conv_kernel_dim or 0
    return float(h * (2 * kh * kd + 2 * vh * vd) + h * 2 * vh + (2 * kh * kd + vh * vd) * c + vh * vd * h)


def linear_state_bytes_per_seq(m: ModelArch, state_dtype: str = "bf16") -> float:
    """Bytes of linear-attention state one running sequence holds over all Gated DeltaNet layers
    (0 for models without them); constant in the sequence length.

    Per layer: the recurrent state ``vh × kd × vd`` plus the conv state ``(2·kh·kd + vh·vd) ×
    (c − 1)`` elements (I: Qwen3-Next / Qwen3.5 layer shapes; vLLM keeps one such state block per
    decode sequence, "Each decode sequence requires one Mamba cache block",
    vllm/config/compilation.py@0.23.0 L1455-1468; state in the model dtype unless
    ``mamba_ssm_cache_dtype`` says otherwise).
    """
    if not m.is_hybrid_linear:
        return 0.0
    kh, kd = m.linear_num_key_heads or 0, m.linear_key_head_dim or 0
    vh, vd = m.linear_num_value_heads or 0, m.linear_value_head_dim or 0
    c = m.linear_conv_kernel_dim or 0
    per_layer = vh * kd * vd + (2 * kh * kd + vh * vd) * max(0, c - 1)
    return float(per_layer * (m.num_hidden_layers - m.kv_layers) * kv_dtype_bytes(state_dtype))


def _dsv4_compressor(h: int, head_dim: int, ratio: int, series: int) -> float:
    """One DeepSeek-V4 KV compressor [elements]: kv and gate projections ``2·h·series·head_dim``
    + position bias ``ratio·series·head_dim`` + output RMSNorm ``head_dim``."""
    return 2.0 * h * series * head_dim + ratio * series * head_dim + head_dim


def dsv4_compressor_indexer_params(m: ModelArch) -> dict[str, float]:
    """Compressor and indexer weights of DeepSeek-V4 CSA/HCA layers [elements].

    Keys: ``csa_layer`` (one CSA layer: compressor at ``head_dim`` with two series + lightning
    indexer), ``hca_layer`` (one HCA layer: compressor at ``head_dim``, one series, no indexer),
    ``total`` (``n_csa_layers·csa_layer + n_hca_layers·hca_layer``; sliding-window-only layers and
    the MTP layer, whose compress ratio is 0, have neither).  Per layer, with ``h`` hidden,
    ``d`` head_dim, ``m``/``m'`` the CSA/HCA compress ratios, ``Hi``/``di`` index heads/head dim:

    * CSA compressor ``2·h·2d + m·2d + d``; indexer: its own compressor ``2·h·2di + m·2di + di``,
      query ``q_lora·Hi·di`` (q_b_proj, on the attention's low-rank query) and head weights
      ``h·Hi`` (weights_proj);
    * HCA compressor ``2·h·d + m'·d + d``.

    Source: HF transformers models/deepseek_v4/modeling_deepseek_v4.py (DeepseekV4CSACompressor,
    DeepseekV4HCACompressor, DeepseekV4Indexer, DeepseekV4IndexerScorer), the same shapes as the
    DeepSeek reference inference ``Compressor``/``Indexer``.  V4-Flash: 19.14M per CSA layer,
    4.26M per HCA layer, 0.49B in all (0.17 % of 284B).  All zero for other families.
    """
    zero = {"csa_layer": 0.0, "hca_layer": 0.0, "total": 0.0}
    if not m.is_dsv4:
        return zero
    h, d = m.hidden_size, m.attn_head_dim
    csa = hca = 0.0
    if m.n_csa_layers and m.csa_compress_ratio:
        r = m.csa_compress_ratio
        csa = _dsv4_compressor(h, d, r, _DSV4_CSA_SERIES)
        if m.index_n_heads and m.index_head_dim:
            Hi, di = m.index_n_heads, m.index_head_dim
            csa += _dsv4_compressor(h, di, r, _DSV4_CSA_SERIES) + (m.q_lora_rank or h) * Hi * di + h * Hi
    if m.n_hca_layers and m.hca_compress_ratio:
        hca = _dsv4_compressor(h, d, m.hca_compress_ratio, _DSV4_HCA_SERIES)
    return {"csa_layer": csa, "hca_layer": hca, "total": m.n_csa_layers * csa + m.n_hca_layers * hca}


def expert_params(m: ModelArch) -> float:
    """Weights of one routed expert in one layer: 3 × hidden × moe_intermediate_size (SwiGLU)."""
    if not m.is_moe or not m.moe_intermediate_size:
        return 0.0
    return _swiglu_params(m.hidden_size, m.moe_intermediate_size)


def shared_expert_params(m: ModelArch) -> float:
    """Weights of the shared experts of one MoE layer: ``n_shared_experts`` SwiGLU experts of
    ``shared_expert_intermediate_size`` (Qwen2-MoE / Qwen3-Next / Qwen3.5: one expert of that
    width) or, without it, of ``moe_intermediate_size`` (DeepSeek, GLM, Kimi)."""
    if not m.is_moe or not m.n_shared_experts:
        return 0.0
    if m.shared_expert_intermediate_size:
        return m.n_shared_experts * _swiglu_params(m.hidden_size, m.shared_expert_intermediate_size)
    return m.n_shared_experts * expert_params(m)


def param_breakdown(m: ModelArch) -> dict[str, float]:
    """Parameter counts (elements) of the main model, by part.

    Keys: ``embedding`` (vocab × hidden), ``lm_head`` (vocab × hidden; 0 when ``tie_word_embeddings``), ``attention``
    (all layers, see :func:`attention_params_per_layer`; for DeepSeek-V4 it includes the CSA/HCA
    compressor and indexer weights), ``compressor_indexer`` (that DeepSeek-V4 part of ``attention``,
    :func:`dsv4_compressor_indexer_params`; 0 for other families — do not add it again), ``dense_ffn`` (dense layers, SwiGLU
    3·h·intermediate), ``shared_experts`` (all MoE layers), ``routed_experts`` (all experts, all
    MoE layers), ``routed_expert_one`` (one expert, one layer), ``router`` (gate h × experts per
    MoE layer), ``moe_layers`` (count), ``dense_layers`` (count) and ``mtp`` (the MTP module(s):
    one extra decoder layer + eh_proj 2h×h per ``num_nextn_predict_layers``; embedding and head
    shared, DeepSeek-V3 style; not included in ``total``).  ``total`` sums the main model.
    Norm weights are ignored (< 0.01 %), and so are DeepSeek-V4's hyper-connection mixing weights
    (``2·(2+hc_mult)·hc_mult²·h`` per layer, 0.01 % of V4-Flash) and hash-routing tables.
    DeepSeek-V3 gives ≈671B total, ≈37B active (domain-facts §5.1); DeepSeek-V4-Flash 284.3B
    (stated 284B; the 284.44B diagram counts the indexer's compressor at head_dim 512).
    """
    h = m.hidden_size
    emb = float(m.vocab_size * h)
    attn_layer = attention_params_per_layer(m)
    n_layers = m.num_hidden_layers
    moe_layers = m.n_moe_layers
    dense_layers = n_layers - moe_layers
    dense_inter = m.intermediate_size or 0
    dense_ffn = dense_layers * _swiglu_params(h, dense_inter) if dense_inter else 0.0
    one = expert_params(m)
    routed = moe_layers * m.n_routed_experts * one
    shared = moe_layers * shared_expert_params(m)
    router = float(moe_layers * m.n_routed_experts * h)
    comp_idx = dsv4_compressor_indexer_params(m)["total"]
    attention = n_layers * attn_layer + comp_idx
    lm_head = 0.0 if m.tie_word_embeddings else emb  # tied: the LM head reuses the embedding matrix
    total = emb + lm_head + attention + dense_ffn + routed + shared + router
    mtp = 0.0
    if m.num_nextn_predict_layers:
        layer_ffn = m.n_routed_experts * one + shared_expert_params(m) + m.n_routed_experts * h if m.is_moe else (
            _swiglu_params(h, dense_inter) if dense_inter else 0.0
        )
        mtp = m.num_nextn_predict_layers * (attn_layer + layer_ffn + 2.0 * h * h)
    return {
        "embedding": emb,
        "lm_head": lm_head,
        "attention": attention,
        "compressor_indexer": comp_idx,
        "dense_ffn": dense_ffn,
        "shared_experts": shared,
        "routed_experts": routed,
        "routed_expert_one": one,
        "router": router,
        "moe_layers": float(moe_layers),
        "dense_layers": float(dense_layers),
        "mtp": mtp,
        "total": total,
    }


def total_params(m: ModelArch) -> float:
    """Main-model parameter count (elements) computed from the shape (MTP excluded)."""
    return param_breakdown(m)["total"]


def active_params_per_token(m: ModelArch) -> float:
    """Parameters touched per token (elements): everything except the non-selected routed experts.

    = total − routed_experts + moe_layers × num_experts_per_tok × routed_expert_one.
    Embedding and lm_head are included (DeepSeek-V3: ≈37.5B vs the stated 37B).
    """
    b = param_breakdown(m)
    if not m.is_moe:
        return b["total"]
    active_routed = b["moe_layers"] * m.num_experts_per_tok * b["routed_expert_one"]
    return b["total"] - b["routed_experts"] + active_routed


def _check_layout(layout: str) -> None:
    if layout not in KV_LAYOUTS:
        raise ValueError(f"unknown KV layout {layout!r}; expected one of {KV_LAYOUTS}")


def _indexer_bytes(m: ModelArch) -> float:
    """DSA indexer K cache per token per indexed layer: di × 1 B (FP8) + di/128 × 4 B = 132 B for di=128."""
    di = m.index_head_dim or 0
    return di * kv_dtype_bytes(_INDEXER_DTYPE) + di / _INDEXER_SCALE_BLOCK * _INDEXER_SCALE_BYTES


def _mla_latent_bytes(m: ModelArch, kv_dtype: str, layout: str) -> float:
    lat, rope = m.kv_lora_rank or 0, m.qk_rope_head_dim or 0
    b = kv_dtype_bytes(kv_dtype)
    rope_b = kv_dtype_bytes(_ROPE_MODEL_DTYPE)
    if layout == "fp8_ds_mla":
        if b != 1:
            raise ValueError("layout 'fp8_ds_mla' requires an 8-bit kv_dtype (fp8)")
        return lat * b + lat / _FP8_DS_MLA_SCALE_BLOCK * _FP8_DS_MLA_SCALE_BYTES + rope * rope_b
    if layout == "packed":
        return (lat + rope) * b
    quantized = b < rope_b
    if quantized and (layout == "latent-only-8bit" or kv_dtype.strip().lower() in _ROPE_KEPT_DTYPES):
        return lat * b + rope * rope_b
    return (lat + rope) * b


def kv_bytes_per_token_per_layer(m: ModelArch, kv_dtype: str, *, layout: str = "as-deployed") -> float:
    """KV-cache bytes for one token in one (average) layer; see :func:`kv_bytes_per_token`."""
    return kv_bytes_per_token(m, kv_dtype, layout=layout) / m.num_hidden_layers


def kv_bytes_per_token(m: ModelArch, kv_dtype: str, *, layout: str = "as-deployed", include_mtp: bool = False) -> float:
    """KV-cache bytes per token summed over all layers (domain-facts §5.2).

    * GQA/MHA: ``2 × n_kv × head_dim × b`` per layer (K and V), b = :func:`kv_dtype_bytes`.
      Examples (BF16): Qwen3-235B 192,512; Qwen3-32B 262,144; GLM-4.5 376,832; Llama-3.1-70B
      327,680; Llama-3.1-405B 516,096.
    * MLA: one latent per layer shared by all heads, ``(kv_lora_rank + qk_rope_head_dim) × b``
      (DeepSeek-V3 BF16: 1,152 B/layer, 70,272 B/token).  ``layout``:
        - "as-deployed" (default): bf16/fp16/fp8 store latent and rope in kv_dtype;
          ``int8`` exists only as the vllm-ascend C8 cache, which keeps rope in BF16:
          512 × 1 + 64 × 2 = 640 B/layer (DeepSeek-V3: 39,040 B/token);
        - "latent-only-8bit" (vllm-ascend's rule): any 8-bit kv_dtype (int8 on A2/A3, fp8 on A5)
          quantizes only the latent;
          rope stays BF16 (640 B/layer) — vllm_ascend/quantization/modelslim_config.py;
        - "fp8_ds_mla": vLLM FlashMLA sparse, 512 FP8 + 4 × FP32 scales + 64 BF16 = 656 B/layer;
        - "packed": ``(kv_lora + rope) × b`` for every dtype (576 B/layer for 8-bit).
    * mla-dsa (V3.2) adds the lightning-indexer K cache, 132 B/layer (FP8 + FP32 scale per 128),
      whatever kv_dtype is (BF16 total 78,324 B/token).
    * dsv4 (DeepSeek-V4): APPROXIMATION (I), amortized over long contexts.  Each stored entry
      is ``qk_nope × b + 2 × qk_rope + 8`` bytes (SGLang sizing: 448 + 128 + 8 = 584 B for
      8-bit; for 16-bit kv_dtype ``qk_nope × 2 + qk_rope × 2``).  CSA layers store one entry per
      ``csa_compress_ratio`` (4) tokens plus indexer keys (132 B) per entry; HCA layers one
      entry per ``hca_compress_ratio`` (128) tokens.  The 128-token sliding window of raw
      entries (every layer, and the only cache of SWA-only layers) is a per-request constant
      and is NOT included here.  ``layout`` is ignored for dsv4.
    * hybrid linear attention (Qwen3-Next, Qwen3.5): only the full-attention layers
      (:attr:`ModelArch.kv_layers`, from ``layer_types`` / ``full_attention_interval``) hold KV;
      the Gated DeltaNet layers keep a per-sequence state instead
      (:func:`linear_state_bytes_per_seq`), not a per-token cache.  Counting every layer
      overestimates the cache about 4× (LMCache#3080, gpustack/gguf-parser-go#28).
    ``include_mtp`` adds ``num_nextn_predict_layers`` extra layers (vLLM gives the MTP draft
    layer its own KV cache; domain-facts §5.2, I).  Result in bytes (float).
    """
    _check_layout(layout)
    n_layers = m.kv_layers + (m.num_nextn_predict_layers if include_mtp else 0)
    if m.is_dsv4:
        b = kv_dtype_bytes(kv_dtype)
        nope = m.attn_head_dim - (m.qk_rope_head_dim or 0)
        rope = m.qk_rope_head_dim or 0
        rope_b = kv_dtype_bytes(_ROPE_MODEL_DTYPE)
        if b < rope_b:
            entry = nope * b + rope * rope_b + _DSV4_ENTRY_SCALE_BYTES
        else:
            entry = (nope + rope) * b
        total = 0.0
        if m.n_csa_layers and m.csa_compress_ratio:
            total += m.n_csa_layers * (entry + _indexer_bytes(m)) / m.csa_compress_ratio
        if m.n_hca_layers and m.hca_compress_ratio:
            total += m.n_hca_layers * entry / m.hca_compress_ratio
        return total
    if m.is_mla:
        per_layer = _mla_latent_bytes(m, kv_dtype, layout)
        if m.architecture == "mla-dsa":
            per_layer += _indexer_bytes(m)
        return per_layer * n_layers
    b = kv_dtype_bytes(kv_dtype)
    return 2.0 * m.num_key_value_heads * m.attn_head_dim * b * n_layers


def kv_bytes_per_token_per_device(
    m: ModelArch, kv_dtype: str, tp: int, *, layout: str = "as-deployed", include_mtp: bool = False
) -> float:
    """KV-cache bytes per token held by ONE device of a tensor-parallel group of size ``tp``.

    GQA: KV heads are split by TP, ``n_kv_per_rank = n_kv / tp`` when ``n_kv % tp == 0``, else 1
    (replicated) when ``tp % n_kv == 0`` (vLLM QKVParallelLinear); other combinations raise
    ValueError.  MLA and DSV4: the latent is not sharded — every TP rank stores the full cache
    of its group's requests (vLLM get_num_kv_heads returns 1 for MLA; domain-facts §5.2).
    """
    if tp < 1:
        raise ValueError(f"tp must be >= 1, got {tp}")
    total = kv_bytes_per_token(m, kv_dtype, layout=layout, include_mtp=include_mtp)
    if m.is_mla or m.is_dsv4:
        return total
    n_kv = m.num_key_value_heads
    if n_kv % tp == 0:
        per_rank = n_kv // tp
    elif tp % n_kv == 0:
        per_rank = 1
    else:
        raise ValueError(f"tp={tp} and num_key_value_heads={n_kv}: neither divides the other")
    return total * per_rank / n_kv
