"""Engine-step latency of one instance: prefill (chunked), decode and mixed steps.

A step is described by a :class:`Step` (its prefill tokens and decode sequences) and costed by
the registered terms of :mod:`sncc.cost.terms`: per layer, the compute terms plus the
communication not hidden by two-micro-batch overlap, over the dense and MoE layers, plus the
per-step terms (LM head, drafting, launch, prefill overhead).  All times in seconds, for the
slowest device of the instance (DP groups step in lockstep).

Units: tokens, bytes, FLOP/s, B/s, seconds.  ``exposed(c) = c - min(c, hide x compute)`` per
layer on a step the engine runs as two micro-batches (``overlap.microbatch_hide_fraction``;
which steps: ``Features.micro_batch_steps``, :meth:`StepModel.hide_fraction`), else ``c``.

Speculative decoding: each of ``B`` sequences verifies ``1 + k`` tokens per step and gains
``E = (1 - a^(k+1)) / (1 - a)`` tokens (:func:`sncc.facts.speculative.expected_tokens`).  The verify step runs
the target's GEMMs, EP traffic, vector work and attention FLOPs on ``B (1 + k)`` tokens and reads
the KV once; the drafts are ``k`` sequential forwards of one layer plus the LM head (MTP/EAGLE),
or ``k x draft_cost`` target steps (a separate draft model).
"""
from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any, Dict, Iterable, List, Optional, Tuple

from sncc.cost import attention as ca
from sncc.cost import comm as cc
from sncc.cost.gemm import imbalance_with_redundancy, local_experts
from sncc.cost.roofline import peak_for
from sncc.cost.terms import TERMS
from sncc.cost.model_shape import ModelShape
from sncc.cost.vector import activation_quantized, vector_elements, vector_seconds_per_element
from sncc.facts.speculative import expected_tokens


class Step:
    """The tokens of one step of one instance (built by :meth:`StepModel.step`).

    ``T`` prefill tokens of the instance, ``T_rank`` of them on its busiest DP rank, whose
    attention-core FLOPs are ``att_fl`` (BF16, all layers) and lightning-indexer FLOPs ``idx_fl``
    (DSA / DeepSeek-V4, at the indexer's rate); ``B`` decode sequences in the largest DP group at mean
    context ``ctx_avg`` [tokens], ``B_total`` in the instance; ``q`` tokens verified per sequence
    (1 + draft); ``dec_tok`` decode tokens per DP group after padding to the captured graph size;
    ``tok_g`` tokens per DP group (= per device of an attention TP group); ``tok_total`` tokens of
    the instance (EP traffic); ``vec_tok`` tokens whose elementwise work one device does;
    ``prefill`` whether the step holds prefill tokens, ``n_prompts`` how many prompts' chunks;
    ``eager`` whether it runs without graphs;
    ``with_draft`` whether drafting is costed."""

    __slots__ = ("T", "T_rank", "att_fl", "idx_fl", "B", "ctx_avg", "B_total", "q", "dec_tok", "tok_g", "tok_total", "vec_tok",
                 "prefill", "n_prompts", "eager", "with_draft")


#: scope codes of :data:`TERMS` (see the terms module docstring)
_ALL, _DENSE, _MOE, _STEP = 0, 1, 2, 3


def _add_layer_term(v: float, scope: int, is_comm: bool, comp: List[float], comm: List[float]) -> None:
    """Add a per-layer term's time ``v`` [s] to the dense ([0]) and/or MoE ([1]) layer totals of
    ``comm`` (communication terms) or ``comp`` (the rest), as its ``scope`` says."""
    acc = comm if is_comm else comp
    if scope == _ALL:
        acc[0] += v
        acc[1] += v
    else:
        acc[scope - 1] += v
_SCOPE = {"all": _ALL, "dense": _DENSE, "moe": _MOE, "step": _STEP}
_COMM = "comm"  # the kind of a communication cost term (sncc.cost.terms.CostTerm.kind)
_TABLE = tuple((t.name, t.fn, _SCOPE[t.scope], t.kind == _COMM) for t in TERMS)


class StepModel:
    """Step-time model of one role; construct once per simulation (caches decode steps).

    Raises KeyError when the profile lacks a constant (profiles are validated on load), ValueError
    when the chip lacks a peak rate for the compute dtype (:func:`sncc.cost.roofline.peak_for`).
    """

    def __init__(self, spec: Any, role_name: str, role: Any, profile: Any, shape: Optional[ModelShape] = None,
                 kv_tok_bytes: Optional[float] = None):
        """``spec``: the deployment (``model``, ``chip``, ``quant``, ``kv_dtype``, ``links``,
        ``devices_per_node``, ``features`` and the weight-byte fields of
        :func:`sncc.cost.inputs.weight_bytes`: a :class:`~sncc.sim.spec.SimSpec` or
        :class:`~sncc.cost.from_facts.CostSpec`); ``role``: its :class:`~sncc.cost.inputs.RoleSpec`;
        ``shape`` and ``kv_tok_bytes`` default to the model's."""
        from sncc.cost.inputs import resolve_kv_bytes_per_token, resolve_quant, weight_bytes
        from sncc.cost.model_shape import model_shape

        self.role = role
        self.role_name = role_name
        self.shape = shape = shape if shape is not None else model_shape(spec.model)
        if kv_tok_bytes is None:
            kv_tok_bytes = resolve_kv_bytes_per_token(spec)
        _, compute_dtype = resolve_quant(spec)
        self.p = p = profile
        chip = spec.chip
        f = spec.features
        self.tp = role.tp
        self.dp = role.dp
        self.bw = float(chip.hbm_bandwidth)
        self.peak_w = peak_for(chip, compute_dtype)
        self.peak_a = peak_for(chip, "bf16")
        self.peak_idx = peak_for(chip, "fp8")   # lightning indexer: FP8 (INT8 cube on A2/A3)
        wb = weight_bytes(spec)
        self.weight_bytes = wb
        self.wb_dense = wb["attention"]        # attention projections
        self.wb_ffn = wb["dense_ffn"]
        self.wb_shared = wb["shared_experts"]
        self.wb_expert = wb["routed_experts"]
        self.wb_head = wb["lm_head"] or wb["embedding"]   # a tied head reads the embedding
        self.wb = self.wb_dense
        self.kv_share = ca.kv_share_per_device(shape, role.tp)
        self.mb2 = f.micro_batch >= 2
        self.hide = p.get("overlap.microbatch_hide_fraction") if self.mb2 else 0.0
        # which steps the engine splits into two micro-batches (Features.micro_batch_steps)
        self.mb_steps = getattr(f, "micro_batch_steps", "all") if self.mb2 else "none"
        graph = role.graph_mode if role.graph_mode is not None else (
            False if role_name == "prefill" else f.graph_mode)
        self.graph = graph
        self.graph_mixed = getattr(role, "graph_mixed", True)
        self.superkernel = bool(f.superkernel and graph)
        self.mtp = f.mtp
        self.draft = f.mtp[0] if f.mtp else 0
        self.draft_cost = f.draft_cost
        self.draft_kind = getattr(f, "draft_kind", "mtp")
        # OmniAttn (RoleSpec.omni_attn): its compressed layers keep a few blocks of each request
        omni = getattr(role, "omni_attn", None)
        self.attn = ca.attention_cost(shape, kv_tok_bytes,
                                      omni_layers=omni.compressed_fraction if omni is not None else 0.0,
                                      omni_kept=omni.kept_tokens(role.block_size) if omni is not None else 0.0)
        act_q = activation_quantized(compute_dtype)
        self.vec_elems = vector_elements(shape, act_q)
        self.vec_elems_total = sum(self.vec_elems.values())
        self.vec_s_per_elem = vector_seconds_per_element(self.bw, p.get("compute.eta_vector"))
        self.eta_m = p.get("compute.eta_m")
        # GEMM efficiency is the kernel's, not the phase's: dense matmuls (projections, dense FFN,
        # shared experts, LM head) and the routed experts' grouped matmul (sncc.cost.terms)
        self.eta_c_dense = p.get("compute.eta_c_gemm_dense")
        self.eta_c_grouped = p.get("compute.eta_c_gemm_grouped")
        self.eta_c_attn_prefill = p.get("compute.eta_c_attn_prefill")
        self.eta_c_attn_decode = p.get("compute.eta_c_attn_decode")
        self.eta_c_indexer = p.get("compute.eta_c_indexer")
        self.t0 = p.get("compute.op_t0_s")
        low_bit = shape.n_experts and self.wb_expert < (1.0 if act_q else 2.0)
        self.dequant_s = p.get("compute.dequant_s_per_weight_element") if low_bit else 0.0
        self.expert_parallel = bool(getattr(role, "expert_parallel", True)) and role.tp * role.dp > 1
        self.ep_shard = role.tp * role.dp
        self.ep_size = role.tp * role.dp if self.expert_parallel else 1
        redundant = int(getattr(role, "redundant_experts", 0) or 0) if self.expert_parallel else 0
        self.e_loc = local_experts(shape.n_experts, self.ep_size, redundant) if shape.n_experts else 0.0
        links = spec.links
        tp_link = cc.link_for_group(links, role.tp, spec.devices_per_node)
        self.tp_bw, self.tp_lat = cc.link_bw_lat(tp_link)
        ep_link = cc.link_for_group(links, self.ep_size, spec.devices_per_node)
        self.ep_link_bw, self.ep_lat = cc.link_bw_lat(ep_link)
        self.all2all_backend = getattr(role, "all2all_backend", None)   # RoleFacts.all2all_backend
        self.ep_alpha = {mode: p.get(f"comm.ep_alpha_{mode}_s") for mode in ("normal", "low_latency")}
        spans = self.ep_size > spec.devices_per_node
        self.ep_bw = {mode: cc.ep_bandwidths(p, mode, self.ep_size, self.ep_link_bw, self.ep_alpha[mode], spans)
                      for mode in ("normal", "low_latency")}
        self.ar_alpha = p.get("comm.allreduce_alpha_s")
        self.ar_eta = p.get("comm.allreduce_link_efficiency")
        self.disp_bytes = 1.0 if compute_dtype in ("int8", "fp8") else 2.0
        self.comb_bytes = 2.0
        self.p_draft_layer_factor = p.get("mtp.draft_layer_cost_factor")
        self.draft_forward_s = p.get("mtp.draft_forward_s")
        self.prefill_step_s = p.get("overhead.prefill_step_s")
        self._launch_graph = p.get("overhead.decode_graph_step_s")
        self._launch_eager = p.get("overhead.eager_launch_per_layer_s") * shape.n_layers
        self._sk = p.get("overhead.superkernel_launch_factor")
        self._dec_cache: Dict[Tuple[int, int, int], float] = {}
        q = 1 + self.draft
        if not graph:
            self.gears = None
        elif role.graph_gears:
            gears = role.graph_gears
            # a catalog grid (sncc.catalog.GridSizes) is sorted and arithmetic: keep it lazy
            self.gears = gears if isinstance(gears, Sequence) and not isinstance(gears, (list, tuple)) else sorted(gears)
        else:
            rule = p.get("policy.graph_gears")
            top = role.max_num_seqs * q
            if rule == "max-only":
                self.gears = [top]
            else:
                g, gs = 1, []
                while g < top:
                    gs.append(g)
                    g *= 2
                self.gears = gs + [top]
        # imbalance of routed-token load (max/mean over devices), reduced by redundant experts
        self.imb = imbalance_with_redundancy(p.get("moe.imbalance"), redundant, self.ep_size, shape.n_experts,
                                             p.get("moe.redundancy_exponent"))

    # ------------------------------------------------------------------ steps
    def step(self, T: float, att_fl: float, B: int, ctx_sum: float, B_total: int,
             with_draft: bool = True, T_rank: Optional[float] = None, idx_fl: float = 0.0,
             n_prompts: Optional[int] = None) -> Step:
        """The :class:`Step` of ``T`` prefill tokens, ``T_rank`` of them (default ``T / dp``: spread
        evenly) on the busiest DP rank with attention FLOPs ``att_fl``, and ``B`` decode sequences
        of total context ``ctx_sum`` in the largest DP group (``B_total`` in the instance);
        ``n_prompts`` the prompts whose chunks the step carries (default: one when ``T > 0``)."""
        s = Step()
        q = 1 + self.draft
        dec_tok = B * q
        eager = False
        if B > 0 and self.gears:
            i = bisect.bisect_left(self.gears, dec_tok)
            if i < len(self.gears):
                dec_tok = self.gears[i]
            else:
                eager = True     # above the largest captured size: the engine runs it eager
        prefill = T > 0
        if not self.graph or (prefill and (B == 0 or not self.graph_mixed)):
            eager = True
        dp = self.dp
        if T_rank is None:
            T_rank = T / dp
            att_fl, idx_fl = att_fl / dp, idx_fl / dp
        s.T, s.T_rank, s.att_fl, s.idx_fl, s.B, s.B_total, s.q = T, T_rank, att_fl, idx_fl, B, B_total, q
        s.ctx_avg = ctx_sum / B if B > 0 else 0.0
        s.dec_tok = dec_tok
        s.tok_g = T_rank + dec_tok
        s.tok_total = T + max(B_total * q, dec_tok * dp)
        s.vec_tok = T_rank / self.tp + dec_tok
        s.prefill = prefill
        s.n_prompts = (n_prompts if n_prompts is not None else 1) if prefill else 0
        s.eager = eager
        s.with_draft = with_draft
        return s

    def single_token_step(self, s: Step) -> Step:
        """The draft forwards' step: the same ``B`` sequences, one token each, no prefill."""
        d = Step()
        d.T = d.T_rank = d.att_fl = d.idx_fl = 0.0
        d.B, d.B_total, d.q = s.B, s.B_total, 1
        d.ctx_avg = s.ctx_avg
        d.dec_tok = s.B
        d.tok_g = float(s.B)
        d.tok_total = float(max(s.B_total, s.B * self.dp))
        d.vec_tok = float(s.B)
        d.prefill = False
        d.n_prompts = 0
        d.eager = s.eager
        d.with_draft = False
        return d

    def hide_fraction(self, s: Step) -> float:
        """The share of a layer's compute that can hide its communication in step ``s``
        (``overlap.microbatch_hide_fraction`` when the engine runs ``s`` as two micro-batches, else
        0).  ``micro_batch_steps`` (:class:`~sncc.cost.inputs.Features`) says which steps it splits:
        ``all``; ``prefill`` (steps holding prefill tokens: vllm-ascend's dual-batch overlap,
        ``deepseek_dbo.py can_run_ms`` returns False when ``num_prefills == 0``); ``prefill-multi``
        (steps holding two prompts or more: Omni-Infer ``DeepseekV3Model.forward`` takes
        ``forward_micro_batch`` only when the prefill metadata has more than one sequence)."""
        rule = self.mb_steps
        if rule == "all":
            return self.hide
        if rule == "prefill":
            return self.hide if s.prefill else 0.0
        if rule == "prefill-multi":
            return self.hide if s.prefill and s.n_prompts >= 2 else 0.0
        return 0.0

    def single_token_layer(self, s: Step) -> float:
        """One draft forward's decoder layer at the sequences of ``s`` [s]: the target's own layer
        (a MoE layer for a MoE model: the MTP module) or, for ``draft_kind == "eagle"``, one dense
        BF16 layer at the target's hidden size (attention projections, a SwiGLU FFN of the
        target's dense intermediate size — 3 x hidden when the model has none — the layer's
        attention over the context, the TP all-reduces)."""
        d = self.single_token_step(s)
        if self.draft_kind == "eagle":
            from sncc.cost.roofline import roofline
            from sncc.cost.terms import attention_core_decode, tp_allreduce
            sh = self.shape
            inter = sh.dense_inter or 3 * sh.hidden
            params = (sh.attn_params + 3.0 * sh.hidden * inter) / self.tp
            comp = roofline(2.0 * d.tok_g * params, params * 2.0, self.peak_a, self.bw, self.eta_c_dense,
                            self.eta_m, self.t0) + attention_core_decode(self, d)
            comm = 2.0 * tp_allreduce(self, d)       # after the attention and after the FFN
            return comp + comm - min(comm, self.hide_fraction(d) * comp)
        comp = [0.0, 0.0]
        comm = [0.0, 0.0]
        for _, fn, scope, is_comm in _TABLE:
            if scope == _STEP:
                continue
            v = fn(self, d)
            if v:
                _add_layer_term(v, scope, is_comm, comp, comm)
        k = 1 if self.shape.n_experts else 0
        return comp[k] + comm[k] - min(comm[k], self.hide_fraction(d) * comp[k])

    def verify_step_without_draft(self, s: Step) -> float:
        """The decode step of the sequences of ``s`` without its drafts and prefill (the base a
        separate draft model's ``draft_cost`` is a fraction of)."""
        base = self.step(0.0, 0.0, s.B, s.ctx_avg * s.B, s.B_total, with_draft=False)
        return self.evaluate(base)

    def launch_s(self, s: Step) -> float:
        """Launch overhead of step ``s`` [s] (see :func:`sncc.cost.terms.launch`)."""
        if s.eager:
            return self._launch_graph
        return self._launch_graph * self._sk if self.superkernel else self._launch_graph

    def evaluate(self, s: Step, parts: Optional[Dict[str, float]] = None,
                 hidden: Optional[Dict[str, float]] = None) -> float:
        """Time of step ``s`` [s]: the registered terms, per layer kind with exposed
        communication, plus the per-step terms.  ``parts`` (when given) receives every term's
        contribution [s] (communication terms: their exposed share), summing to the total;
        ``hidden`` (when given) the communication time [s] per term that two-micro-batch overlap
        hides behind compute (not in the total)."""
        sh = self.shape
        vals: List[float] = []
        comp = [0.0, 0.0]
        comm = [0.0, 0.0]
        step_total = 0.0
        for _, fn, scope, is_comm in _TABLE:
            v = fn(self, s)
            vals.append(v)
            if not v:
                continue
            if scope == _STEP:
                step_total += v
                continue
            _add_layer_term(v, scope, is_comm, comp, comm)
        n = (sh.n_dense, sh.n_moe)
        hide = self.hide_fraction(s)
        exposed = [comm[i] - min(comm[i], hide * comp[i]) for i in (0, 1)]
        device = sum(n[i] * (comp[i] + exposed[i]) for i in (0, 1))
        # an eager step's kernels are dispatched by the host while the device runs the ones queued
        # before them: the device waits only for the dispatch it outruns (sncc.cost.terms.launch)
        dispatch = max(0.0, self._launch_eager - device) if s.eager else 0.0
        total = step_total + device + dispatch
        if parts is not None:
            ratio = [exposed[i] / comm[i] if comm[i] else 0.0 for i in (0, 1)]
            for (name, _, scope, is_comm), v in zip(_TABLE, vals):
                if scope == _STEP:
                    parts[name] = v + (dispatch if name == "launch" else 0.0)
                    continue
                kinds = (0, 1) if scope == _ALL else (scope - 1,)
                parts[name] = sum(v * n[i] * (ratio[i] if is_comm else 1.0) for i in kinds)
                if hidden is not None and is_comm:
                    hidden[name] = sum(v * n[i] * (1.0 - ratio[i]) for i in kinds)
        return total

    # ------------------------------------------------------------------ public API
    def prefill_step(self, chunks: Iterable[tuple]) -> float:
        """Latency [s] of one prefill step processing ``chunks`` = (new tokens, cached prior[, DP
        rank]); chunks without a rank go to the ranks in turn."""
        T, T_rank, att, idx, n = self._prefill_attn(chunks)
        if T <= 0:
            return 0.0
        return self.evaluate(self.step(T, att, 0, 0.0, 0, T_rank=T_rank, idx_fl=idx, n_prompts=n))

    def prefill_parts(self, chunks: Iterable[tuple]) -> Tuple[float, Dict[str, float]]:
        """(latency [s], every registered term's contribution [s]) of the prefill step
        ``chunks`` (as :meth:`prefill_step`)."""
        T, T_rank, att, idx, n = self._prefill_attn(chunks)
        parts: Dict[str, float] = {}
        if T <= 0:
            return 0.0, parts
        return self.evaluate(self.step(T, att, 0, 0.0, 0, T_rank=T_rank, idx_fl=idx, n_prompts=n), parts), parts

    def _prefill_attn(self, chunks: Iterable[tuple]) -> Tuple[float, float, float, float, int]:
        """(new tokens of the instance, new tokens of the busiest DP rank, that rank's attention
        core FLOPs and lightning-indexer FLOPs over all layers, the number of chunks) of prefill
        ``chunks`` = (tokens,
        cached prior[, rank]); a chunk without a rank takes rank ``index % dp``.  The ranks step in
        lockstep, so the busiest one sets the step's prefill time."""
        dp = self.dp
        tok = [0.0] * dp
        fl = [0.0] * dp
        ix = [0.0] * dp
        pf = self.attn.prefill
        n = -1
        for n, c in enumerate(chunks):
            l, prior = c[0], c[1]
            r = c[2] if len(c) > 2 else n % dp
            a, i = pf(l, prior)
            tok[r] += l
            fl[r] += a
            ix[r] += i
        T = sum(tok)
        if T <= 0:
            return 0.0, 0.0, 0.0, 0.0, 0
        r = max(range(dp), key=lambda j: fl[j] + ix[j] + tok[j]) if dp > 1 else 0
        return T, tok[r], fl[r], ix[r], n + 1

    def breakdown(self, T: float, B: int, ctx_sum: float, B_total: int) -> Dict[str, Any]:
        """Components [s] of one step with ``T`` fresh prefill tokens (one prompt, no cached
        prefix) and ``B`` decode sequences: ``terms`` (every registered term's contribution),
        ``hidden`` (communication time two-micro-batch overlap hides, per term, not in ``total``),
        one key per report group of :data:`sncc.cost.terms.GROUPS` (sums of its terms),
        ``vector_by_op`` (the elementwise term split by family) and ``total``."""
        from sncc.cost.terms import TERMS as _T

        terms: Dict[str, float] = {}
        hidden: Dict[str, float] = {}
        _, T_rank, att, idx, _ = self._prefill_attn([(T, 0.0, 0)] if T > 0 else [])
        s = self.step(T, att, B, ctx_sum, B_total, T_rank=T_rank, idx_fl=idx)
        total = self.evaluate(s, terms, hidden)
        out: Dict[str, Any] = {"total": total, "terms": terms, "hidden": {k: v for k, v in hidden.items() if v > 0}}
        for t in _T:
            out[t.group] = out.get(t.group, 0.0) + terms[t.name]
        vec = terms.get("vector.elementwise", 0.0)
        tot_el = self.vec_elems_total or 1.0
        out["vector_by_op"] = {k: vec * v / tot_el for k, v in self.vec_elems.items()}
        return out

    def decode_step(self, B: int, ctx_sum: float, B_total: int) -> float:
        """Latency [s] of a decode step: ``B`` seqs in the largest DP group with total
        context ``ctx_sum`` [tokens]; ``B_total`` seqs in the whole instance."""
        if B <= 0:
            return 0.0
        cavg = int(ctx_sum / B) >> 7
        key = (B, cavg, B_total >> 4)
        t = self._dec_cache.get(key)
        if t is None:
            t = self.evaluate(self.step(0.0, 0.0, B, ((cavg << 7) + 64) * B, max(B, (B_total >> 4 << 4) + 8)))
            self._dec_cache[key] = t
        return t

    def mixed_step(self, chunks: Iterable[Tuple[float, float]], B: int, ctx_sum: float, B_total: int) -> float:
        """Aggregated-mode step: prefill chunks (tokens, prior[, rank]) plus ``B`` decode seqs
        (largest group)."""
        T, T_rank, att, idx, n = self._prefill_attn(chunks)
        if T <= 0:
            return self.decode_step(B, ctx_sum, B_total)
        return self.evaluate(self.step(T, att, B, ctx_sum, B_total, T_rank=T_rank, idx_fl=idx, n_prompts=n))

    @property
    def tokens_per_decode_step(self) -> float:
        """Mean output tokens per sequence per decode step [tokens]:
        :func:`sncc.facts.speculative.expected_tokens` of the draft count and per-token acceptance."""
        if not self.mtp:
            return 1.0
        d, a = self.mtp
        return expected_tokens(a, d)
