"""Vector-unit (elementwise) work per token per layer, by operation family.

Ascend splits a core into a cube unit (matrix products: all GEMMs and the attention
matmuls, costed by :mod:`sncc.cost.roofline` at the cube peak) and a vector unit
(simulator-modelling.md §3.1 "Ascend specifics").  The vector families here are the
elementwise operations outside fused kernels, counted in elements per token per layer
(averaged over the model's dense and MoE layers):

* ``norm`` — RMSNorm inputs: 2 x hidden per layer, plus the MLA q/kv LoRA norms;
* ``rope`` — rotary embedding of the query heads and the key (MLA: rope dims only);
* ``act_quant`` — dynamic per-token activation quantization before every quantized GEMM
  (only when activations are 8/4-bit, e.g. W8A8, W4A8): inputs of the q/kv projections, the
  output projection, the FFN/expert up and down projections;
* ``swiglu`` — SiLU(gate) x up over the active intermediate size (dense FFN, or
  top-k routed + shared experts);
* ``router`` — MoE gate scores and top-k over the routed experts.

Attention softmax is not here: it runs inside the fused attention kernel
(:mod:`sncc.cost.attention`).

Rate: these operations are memory-bound streaming passes.  Each element is read and written
once in BF16 (:data:`ELEMENT_BYTES` = 2 + 2 bytes), at the chip's HBM bandwidth times the
profile's ``compute.eta_vector`` (fitted for Ascend, whose vector units stream through the unified
buffer; the copy efficiency on NVIDIA).  The time therefore scales with the elements of the model
and the tokens of the step, not with a per-token constant fitted on one model (issue 11: a
per-token-layer constant fitted on DeepSeek-R1 decode dominated small-model steps).
"""
from __future__ import annotations

from typing import Dict

from sncc.cost.model_shape import ModelShape

FAMILIES = ("norm", "rope", "act_quant", "swiglu", "router")

#: HBM traffic of one element of one elementwise pass [B]: a BF16 read and a BF16 write
ELEMENT_BYTES = 4.0


def vector_seconds_per_element(hbm_bandwidth: float, eta_vector: float) -> float:
    """Time of one element of one elementwise pass [s]: ``ELEMENT_BYTES / (BW x eta_vector)``."""
    return ELEMENT_BYTES / (hbm_bandwidth * eta_vector)


def vector_elements(shape: ModelShape, act_quant: bool) -> Dict[str, float]:
    """Elements per token per layer of each vector family (see the module docstring)."""
    s = shape
    L = max(1, s.n_layers)
    H = s.hidden
    norm = 2.0 * H
    if s.is_mla:
        norm += s.q_lora + s.kv_lora
        rope = (s.n_heads + 1) * s.rope_dim
        q_in = H + s.q_lora + s.kv_lora          # q_a/kv_a input, q_b input, kv_b input
        o_in = s.n_heads * s.v_dim
    else:
        rope = (s.n_heads + s.n_kv_heads) * (s.rope_dim or s.head_dim)
        q_in = H
        o_in = s.n_heads * s.head_dim
    moe_act = (s.top_k + s.n_shared) * s.moe_inter
    dense_act = float(s.dense_inter)
    swiglu = (s.n_dense * dense_act + s.n_moe * moe_act) / L
    ffn_in = (s.n_dense * (H + dense_act) + s.n_moe * (H * (1 + (1 if s.n_shared else 0)) + moe_act)) / L
    router = s.n_moe * float(s.n_experts) / L
    return {
        "norm": norm,
        "rope": float(rope),
        "act_quant": (q_in + o_in + ffn_in) if act_quant else 0.0,
        "swiglu": swiglu,
        "router": router,
    }


def activation_quantized(compute_dtype: str) -> bool:
    """True when the matmuls take quantized activations (dynamic quant on the vector unit)."""
    return compute_dtype.lower() in ("int8", "fp8", "int4", "fp4", "mxfp8", "mxfp4")
