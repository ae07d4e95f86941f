"""The registered cost terms of one engine step: one function and one :data:`TERMS` entry each.

A step's time is the sum of its terms (:meth:`sncc.cost.step.StepModel.evaluate`), and the
"where the time goes" breakdown is the same evaluation reported term by term, never a
difference of two runs.  Adding a cost: write ``def my_term(m, s) -> seconds`` and append a
:class:`CostTerm` to :data:`TERMS` (sqlglot's ``RULES`` pattern).

Each function takes the role's :class:`~sncc.cost.step.StepModel` ``m`` (constants, chip
rates, model shape, parallelism) and one :class:`~sncc.cost.step.Step` ``s`` (the step's
tokens) and returns seconds.  ``scope`` says what the value covers:

* ``"all"`` / ``"dense"`` / ``"moe"``: one layer of every layer / of the dense layers / of the MoE
  layers; the step multiplies by the layer count;
* ``"step"``: the whole step, once.

``kind`` is ``"compute"`` or ``"comm"``: within a layer, communication is hidden behind
``overlap.microbatch_hide_fraction`` of the layer's compute when two micro-batches overlap
(simulator-modelling.md §3.6); the breakdown reports the exposed part.  ``group`` is the line of
the report the term adds to (``attention``, ``ffn``, ``vector``, ``comm``, ``lm_head``, ``draft``,
``launch``, ``overhead``).

GEMM efficiency is the kernel's, in every phase: dense matmuls (projections, dense FFN, shared
experts, LM head, an EAGLE draft layer) run at ``compute.eta_c_gemm_dense`` (``m.eta_c_dense``),
the routed experts' grouped matmul at ``compute.eta_c_gemm_grouped`` (``m.eta_c_grouped``); a
prefill token and a decode token through the same kernel cost the same FLOPs at the same rate.

Ascend/NVIDIA differences live in the chip (peaks, bandwidth, links) and in the profile's
constants (efficiencies, measured EP tables, overheads), never in branches here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Tuple

from sncc.cost import comm as cc
from sncc.cost.gemm import experts_touched_fraction
from sncc.cost.roofline import roofline


@dataclass(frozen=True)
class CostTerm:
    """One named cost: ``fn(model, step) -> seconds`` over ``scope``; ``kind`` compute or comm;
    ``group`` the report line it belongs to (module docstring); ``label`` a few words for the
    report; ``doc`` the function's first paragraph."""

    name: str
    group: str
    scope: str
    kind: str
    fn: Callable[[Any, Any], float]
    label: str = ""
    doc: str = ""


# ------------------------------------------------------------------ attention
def attention_projections(m, s) -> float:
    """Q/K/V/O (MLA: q_a, q_b, kv_a, kv_b, o) projections of one layer: ``2 x tokens x params / tp``
    FLOPs against ``params / tp`` weights at the non-expert weight bytes."""
    p = m.shape.attn_params / m.tp
    return roofline(2.0 * s.tok_g * p, p * m.wb_dense, m.peak_w, m.bw, m.eta_c_dense, m.eta_m, m.t0)


def attention_core_prefill(m, s) -> float:
    """Causal attention of the busiest DP rank's prefill chunks (BF16-equivalent FLOPs from
    :mod:`sncc.cost.attention`), split over the TP heads."""
    if s.att_fl <= 0:
        return 0.0
    L = m.shape.n_layers
    return roofline(s.att_fl / L / m.tp, 0.0, m.peak_a, m.bw, m.eta_c_attn_prefill, m.eta_m, m.t0)


def attention_core_decode(m, s) -> float:
    """Decode attention of the largest DP group: each of the ``1 + draft`` query tokens of ``B``
    sequences attends the context (FLOPs), the KV of the context is read once per step (the
    indexer keys of DSA / DeepSeek-V4 included)."""
    if s.B <= 0:
        return 0.0
    by1, fl1, _ = m.attn.decode(s.ctx_avg)
    L = m.shape.n_layers
    fl = s.B * s.q * fl1 / L / m.tp
    by = s.B * by1 / L * m.kv_share
    return roofline(fl, by, m.peak_a, m.bw, m.eta_c_attn_decode, m.eta_m, m.t0)


def attention_indexer(m, s) -> float:
    """The lightning indexer of DeepSeek Sparse Attention (V3.2) and of DeepSeek-V4's compressed
    layers: every query scores every (compressed) context entry, ``2 x heads x head_dim`` FLOPs
    each, at the 8-bit cube rate (FP8, INT8 on A2/A3) and ``compute.eta_c_indexer`` — prefill
    chunks of the busiest rank plus the decode queries (their key reads are in
    ``attention.decode``).  Its heads are split over attention TP only where the engines build them
    so (:attr:`~sncc.cost.attention.AttentionCost.indexer_tp_split`: DeepSeek-V3.2's indexer is
    replicated on every TP rank)."""
    split = m.tp if m.attn.indexer_tp_split else 1
    fl = s.idx_fl / split if s.idx_fl else 0.0
    if s.B > 0 and m.attn.has_indexer:
        _, _, ix1 = m.attn.decode(s.ctx_avg)
        fl += s.B * s.q * ix1 / split
    if fl <= 0:
        return 0.0
    return roofline(fl / m.shape.n_layers, 0.0, m.peak_idx, m.bw, m.eta_c_indexer, m.eta_m, m.t0)


# ------------------------------------------------------------------ FFN / MoE
def dense_ffn(m, s) -> float:
    """SwiGLU FFN of a dense layer, TP-split, at the dense FFN's weight bytes."""
    p = m.shape.dense_ffn_params / m.tp
    return roofline(2.0 * s.tok_g * p, p * m.wb_ffn, m.peak_w, m.bw, m.eta_c_dense, m.eta_m, m.t0)


def shared_experts(m, s) -> float:
    """Shared experts of a MoE layer, TP-split like the attention group."""
    if not m.shape.shared_params:
        return 0.0
    p = m.shape.shared_params / m.tp
    return roofline(2.0 * s.tok_g * p, p * m.wb_shared, m.peak_w, m.bw, m.eta_c_dense, m.eta_m, m.t0)


def routed_experts(m, s) -> float:
    """Routed experts on the busiest device.

    Expert parallelism: the device holds ``E/EP`` (+ redundant) experts and computes the
    ``tokens x top_k / EP x imbalance`` routed tokens it receives; its weight reads are the
    experts those tokens touch (balls into bins, simulator-modelling.md §3.3).  Without expert
    parallelism (TP-sharded experts) every device holds ``1/(tp x dp)`` of every expert and
    computes that share of every routed token of its DP group.  Both run the grouped matmul at
    ``compute.eta_c_gemm_grouped``."""
    sh = m.shape
    if not sh.n_experts:
        return 0.0
    if m.expert_parallel:
        routed_tok = s.tok_total * sh.top_k / m.ep_size * m.imb
        touched = m.e_loc * experts_touched_fraction(s.tok_total, sh.n_experts, sh.top_k)
        return roofline(2.0 * routed_tok * sh.expert_params, touched * sh.expert_params * m.wb_expert,
                        m.peak_w, m.bw, m.eta_c_grouped, m.eta_m, m.t0)
    share = 1.0 / m.ep_shard
    touched = sh.n_experts * experts_touched_fraction(s.tok_g, sh.n_experts, sh.top_k) * share
    return roofline(2.0 * s.tok_g * sh.top_k * sh.expert_params * share, touched * sh.expert_params * m.wb_expert,
                    m.peak_w, m.bw, m.eta_c_grouped, m.eta_m, m.t0)


def expert_dequant(m, s) -> float:
    """Low-bit expert weights converted to the activation type before the matmul (W4A8: INT4 to
    INT8 on the vector unit, per weight element of every expert the step touches):
    ``elements x compute.dequant_s_per_weight_element``; zero for formats whose experts are
    stored at the activation width."""
    sh = m.shape
    if not sh.n_experts or not m.dequant_s:
        return 0.0
    if m.expert_parallel:
        touched = m.e_loc * experts_touched_fraction(s.tok_total, sh.n_experts, sh.top_k)
    else:
        touched = sh.n_experts * experts_touched_fraction(s.tok_g, sh.n_experts, sh.top_k) / m.ep_shard
    return touched * sh.expert_params * m.dequant_s


# ------------------------------------------------------------------ vector unit
def vector_elementwise(m, s) -> float:
    """Norms, RoPE, activation quantization, SwiGLU and router scores of the device's tokens:
    elements x :func:`sncc.cost.vector.vector_seconds_per_element`."""
    return m.vec_elems_total * s.vec_tok * m.vec_s_per_elem


# ------------------------------------------------------------------ communication
def tp_allreduce(m, s) -> float:
    """The ring all-reduce of the attention output over the attention TP group, once per layer
    (simulator-modelling.md §3.6)."""
    if m.tp <= 1:
        return 0.0
    return cc.allreduce_time(s.tok_g * m.shape.hidden * 2.0, m.tp, m.tp_bw, m.tp_lat, m.ar_alpha, m.ar_eta)


def tp_dense_ffn_allreduce(m, s) -> float:
    """The ring all-reduce of a TP-split dense FFN's output over the attention TP group."""
    return tp_allreduce(m, s)


def tp_moe_output(m, s) -> float:
    """The TP group's exchange after a MoE layer.

    Expert parallelism with TP > 1: each TP rank dispatches its ``1/tp`` slice of the group's
    tokens and the layer ends with an all-gather of the slices (vllm-ascend v0.23.0
    ``ops/fused_moe/prepare_finalize.py``: ``prepare`` splits the hidden states along the token
    dimension by TP rank, ``finalize`` all-gathers them over the TP group; SGLang's DP attention
    likewise scatters the tokens before the MoE and gathers them after).  TP-sharded experts (no
    EP): an all-reduce of the partial sums, as after a dense FFN."""
    if m.tp <= 1:
        return 0.0
    if not m.expert_parallel:
        return tp_allreduce(m, s)
    return cc.allgather_time(s.tok_g * m.shape.hidden * 2.0, m.tp, m.tp_bw, m.tp_lat, m.ar_alpha, m.ar_eta)


def ep_dispatch_combine(m, s) -> float:
    """MoE dispatch + combine over the EP group, by the backend the role runs
    (:func:`sncc.cost.comm.ep_exchange_time`): an all-to-all (DeepEP-style: normal kernels when the
    step holds prefill tokens, low-latency kernels for decode, each at the profile's measured
    bandwidth for the EP size, :func:`sncc.cost.comm.ep_bandwidths`), or vLLM's all-gather /
    reduce-scatter of the token slices."""
    if not m.shape.n_experts or not m.expert_parallel or m.ep_size <= 1:
        return 0.0
    mode = "normal" if s.prefill else "low_latency"
    bd, bc = m.ep_bw[mode]
    return cc.ep_exchange_time(m.all2all_backend, s.tok_total, s.tok_total / m.ep_size * m.imb, m.shape.hidden,
                               m.shape.top_k, m.ep_size, m.disp_bytes, m.comb_bytes, bw_dispatch=bd, bw_combine=bc,
                               alpha_a2a=m.ep_alpha[mode], link_bw=m.ep_link_bw, hop_lat=m.ep_lat,
                               alpha_coll=m.ar_alpha, eta_coll=m.ar_eta)


# ------------------------------------------------------------------ per step
def lm_head(m, s) -> float:
    """LM head over the decode tokens (prefill samples one token per finished prompt:
    negligible), weights at the head's bytes (BF16 unless the checkpoint says otherwise) split over TP."""
    if s.B <= 0:
        return 0.0
    sh = m.shape
    return roofline(2.0 * s.dec_tok * sh.hidden * sh.vocab / m.tp, sh.hidden * sh.vocab * m.wb_head / m.tp,
                    m.peak_a, m.bw, m.eta_c_dense, m.eta_m, m.t0)


def draft_tokens(m, s) -> float:
    """Speculative drafting of ``k`` tokens per sequence before the verify step.

    MTP / EAGLE (no plan ``draft_cost``): ``k`` sequential forwards of one decoder layer at the
    decode batch (one token per sequence: the MTP module, or an EAGLE head,
    :meth:`~sncc.cost.step.StepModel.single_token_layer`) x ``mtp.draft_layer_cost_factor``,
    each followed by the LM head over the batch and each paying ``mtp.draft_forward_s``, the fixed
    cost of one more forward and its sampling (vLLM's ``SpecDecodeBaseProposer.propose`` runs one
    forward of the drafter, then ``num_speculative_tokens - 1`` more in a serial loop, sampling
    after each; vllm-ascend's MTP proposer and SGLang's EAGLE worker draft step by step too).  A
    separate draft model (``draft_cost``): ``k`` x ``draft_cost`` x the target's decode step of
    these sequences, launch included (the SN7002 check's ``1 + k x draft_cost``)."""
    if s.B <= 0 or not m.draft or not s.with_draft:
        return 0.0
    if m.draft_cost is not None:
        return m.draft * m.draft_cost * m.verify_step_without_draft(s)
    one = m.single_token_layer(s)
    head = lm_head(m, m.single_token_step(s))
    return m.draft * (m.p_draft_layer_factor * one + head + m.draft_forward_s)


def launch(m, s) -> float:
    """Launch of one step: every step pays ``overhead.decode_graph_step_s`` (the fitted per-step
    cost of a graph replay, most of it host-side: scheduling, input preparation, sampling, which an
    eager step pays as well).  A step that runs eager (the role runs eager, the step holds prefill
    tokens outside the captured graphs — prefill-only steps, and mixed steps of roles that capture
    decode-only graphs — or its batch is above every captured size) has its kernels dispatched one
    by one by the host (``overhead.eager_launch_per_layer_s x layers``) while the device runs those
    already queued, so it adds only the dispatch time the device outruns:
    ``max(0, dispatch - device time)`` (:meth:`sncc.cost.step.StepModel.evaluate`; vllm-ascend#7723
    measures this shape: eager decode of one request stays near 165-171 ms from 256k to 768k
    tokens of context while the graph step grows from 56 to 191 ms, and meets it at 1M).  Capturing
    a step never makes it slower.  SuperKernel fusion scales the graph replay."""
    return m.launch_s(s)


def prefill_step_overhead(m, s) -> float:
    """Fixed cost of a step that schedules prefill tokens (``overhead.prefill_step_s``: scheduler,
    input preparation and sampling of the finished prompts)."""
    return m.prefill_step_s if s.prefill else 0.0


#: The registered cost terms, in report order.
TERMS: Tuple[CostTerm, ...] = (
    CostTerm("attention.projections", "attention", "all", "compute", attention_projections,
             "attention projections (weights)"),
    CostTerm("attention.prefill", "attention", "all", "compute", attention_core_prefill, "causal attention of prompts"),
    CostTerm("attention.decode", "attention", "all", "compute", attention_core_decode, "attention over the context (KV)"),
    CostTerm("attention.indexer", "attention", "all", "compute", attention_indexer, "DSA lightning indexer"),
    CostTerm("ffn.dense", "ffn", "dense", "compute", dense_ffn, "dense FFN layers"),
    CostTerm("moe.shared", "ffn", "moe", "compute", shared_experts, "shared experts"),
    CostTerm("moe.routed", "ffn", "moe", "compute", routed_experts, "routed experts (busiest device)"),
    CostTerm("moe.dequant", "ffn", "moe", "compute", expert_dequant, "low-bit expert dequantization"),
    CostTerm("vector.elementwise", "vector", "all", "compute", vector_elementwise,
             "norms, RoPE, activation quant, SwiGLU, router"),
    CostTerm("comm.tp_allreduce", "comm", "all", "comm", tp_allreduce, "TP all-reduce after attention (exposed)"),
    CostTerm("comm.tp_dense_ffn", "comm", "dense", "comm", tp_dense_ffn_allreduce,
             "TP all-reduce after a dense FFN (exposed)"),
    CostTerm("comm.tp_moe_output", "comm", "moe", "comm", tp_moe_output,
             "TP all-gather (EP) or all-reduce after the MoE (exposed)"),
    CostTerm("comm.ep_dispatch_combine", "comm", "moe", "comm", ep_dispatch_combine,
             "EP dispatch + combine (exposed)"),
    CostTerm("lm_head", "lm_head", "step", "compute", lm_head, "LM head"),
    CostTerm("draft", "draft", "step", "compute", draft_tokens, "speculative drafts"),
    CostTerm("launch", "launch", "step", "compute", launch, "graph replay or eager kernel launches"),
    CostTerm("overhead.prefill_step", "overhead", "step", "compute", prefill_step_overhead,
             "per-step scheduling of prefill"),
)

for _t in TERMS:
    object.__setattr__(_t, "doc", (_t.fn.__doc__ or "").strip().split("\n\n")[0])

#: report groups in order (the text report's "where the time goes" lines)
GROUPS: Tuple[str, ...] = tuple(dict.fromkeys(t.group for t in TERMS))
