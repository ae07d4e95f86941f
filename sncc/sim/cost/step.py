"""Engine-step latency of one instance: prefill (chunked) and decode steps.

Combines the per-family cost modules (attention, GEMM/MoE, communication) with
the profile's efficiencies and overheads.  All times in seconds, per step, for
the slowest device of the instance (DP groups step in lockstep).

Prefill step (``T`` new tokens spread over the ``ep`` DP groups)::

    t = t_step0 + sum_layers[ sum_ops roofline(op) + vector*T_dev
                              + exposed(TP all-reduce + EP dispatch/combine) ]

Decode step (``B`` sequences in the largest DP group, each verifying ``1+d``
tokens with MTP; a sequence gains ``E = (1 - a^(d+1)) / (1 - a)`` tokens per step,
:func:`expected_accepted_tokens`)::

    t = t_graph + sum_layers[ roofline(attn GEMM) + roofline(MLA/GQA core over
        the group's KV) + roofline(dense|shared|routed experts touched)
        + vector*tokens + exposed(EP low-latency dispatch/combine) ] + lm_head + MTP draft

``exposed(c) = c - min(c, hide * compute)`` with two micro-batches, else ``c``.
"""
from __future__ import annotations

import functools
from typing import Any, Dict, Iterable, Tuple

from sncc.sim.cost import attention as ca
from sncc.sim.cost import comm as cc
from sncc.sim.cost.gemm import experts_touched_fraction, imbalance_with_redundancy, local_experts
from sncc.sim.cost.roofline import peak_for, roofline
from sncc.sim.cost.vector import activation_quantized, vector_elements
from sncc.sim.model_shape import ModelShape


def expected_accepted_tokens(acceptance: float, draft_tokens: int) -> float:
    """Expected tokens a sequence gains per verification step [tokens] with ``draft_tokens``
    (k) drafts of per-token acceptance ``acceptance`` (alpha): the run of accepted drafts
    stops at the first rejection and the target always adds one token, so
    ``E = 1 + a + a^2 + ... + a^k = (1 - a^(k+1)) / (1 - a)`` (``k + 1`` when a = 1;
    Leviathan et al. 2023, eq. 1).  k = 1 gives ``1 + a`` (CloudMatrix-Infer's MTP1 at 70 %:
    1.7).  Shared by the simulator's decode steps and the SN7002 check (misconfig BR-24).

    Raises ValueError for ``acceptance`` outside [0, 1] or negative ``draft_tokens``."""
    a, k = float(acceptance), int(draft_tokens)
    if not 0.0 <= a <= 1.0 or k < 0:
        raise ValueError(f"acceptance {a} must be in [0, 1] and draft tokens {k} >= 0")
    if a >= 1.0:
        return float(k + 1)
    return (1.0 - a ** (k + 1)) / (1.0 - a)


@functools.lru_cache(maxsize=16)
def _reference_elements(model_id: str, quant_id: str) -> Dict[str, float]:
    """Vector elements per token-layer of the profile's reference model and quant."""
    from sncc import catalog
    from sncc.sim.model_shape import model_shape
    q = catalog.quant(quant_id)
    return vector_elements(model_shape(catalog.model(model_id)), activation_quantized(q.compute_dtype))


class StepModel:
    """Step-time model of one role; construct once per simulation (caches decode steps)."""

    def __init__(self, spec: Any, role_name: str, role: Any, profile: Any, shape: ModelShape,
                 kv_tok_bytes: float, weight_bytes: float, compute_dtype: str):
        self.role = role
        self.role_name = role_name
        self.shape = shape
        self.p = profile
        chip = spec.chip
        f = spec.features
        self.bw = float(chip.hbm_bandwidth)
        self.peak_w = peak_for(chip, compute_dtype)
        self.peak_a = peak_for(chip, "bf16")
        self.wb = weight_bytes
        self.peak_idx = peak_for(chip, "fp8")   # lightning indexer: FP8 (INT8 cube on A2/A3)
        self.kv_share = ca.kv_share_per_device(shape, role.tp)
        self.mb2 = f.micro_batch >= 2
        self.hide = profile.get("overlap.microbatch_hide_fraction") if self.mb2 else 0.0
        graph = role.graph_mode if role.graph_mode is not None else (
            False if role_name == "prefill" else f.graph_mode)
        self.graph = graph
        self.superkernel = bool(f.superkernel and graph)
        self.mtp = f.mtp
        self.draft = f.mtp[0] if f.mtp else 0
        omni = f.omni_attn_compress_ratio or 0.0
        self.attn = ca.attention_cost(shape, kv_tok_bytes, omni_layers=omni,
                                      omni_kept=profile.get("omni_attn.kept_tokens") if omni else 0.0)
        # vector unit: fitted time per token-layer of the reference model, per element
        act_q = activation_quantized(compute_dtype)
        self.vec_elems = vector_elements(shape, act_q)
        ref_elems = self.vec_elems
        if profile.has("compute.vector_reference"):
            ref = profile.get("compute.vector_reference")
            ref_elems = _reference_elements(ref["model"], ref["quant"])
        ref_total = sum(ref_elems.values()) or 1.0
        self.vec_s = {ph: {k: profile.get(f"compute.vector_s_per_token_layer_{ph}") * v / ref_total
                           for k, v in self.vec_elems.items()} for ph in ("prefill", "decode")}
        self.vec_tot = {ph: sum(d.values()) for ph, d in self.vec_s.items()}
        self.eta_m = profile.get("compute.eta_m")
        self.ep_size = role.tp * role.ep
        self.e_loc = local_experts(shape.n_experts, self.ep_size, f.redundant_experts) if shape.n_experts else 0.0
        links = spec.links
        tp_link = cc.link_for_group(links, role.tp, spec.devices_per_node)
        self.tp_bw, self.tp_lat = cc.link_bw_lat(tp_link)
        ep_link = cc.link_for_group(links, self.ep_size, spec.devices_per_node)
        self.ep_link_bw, _ = cc.link_bw_lat(ep_link)
        self.ar_alpha = profile.get("comm.allreduce_alpha_s")
        self.ar_eta = profile.get("comm.allreduce_link_efficiency")
        self.disp_bytes = 1.0 if compute_dtype in ("int8", "fp8") else 2.0
        self.comb_bytes = 2.0
        self._dec_cache: Dict[Tuple[int, int, int], float] = {}
        q = 1 + self.draft
        if not graph:
            self.gears = None
        elif role.graph_gears:
            self.gears = sorted(role.graph_gears)
        else:
            rule = profile.get("policy.graph_gears")
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
        self.imb = imbalance_with_redundancy(profile.get("moe.imbalance"), f.redundant_experts,
                                             self.ep_size, shape.n_experts,
                                             profile.get("moe.redundancy_exponent"))
        # speculative decoding: draft cost per draft token as a fraction of a decode layer pass
        # (plan `draft_cost` is per target decode step; see _mixed_step)
        self.draft_cost = f.draft_cost

    # ------------------------------------------------------------------ helpers
    def _exposed(self, comm: float, compute: float) -> float:
        return comm - min(comm, self.hide * compute)

    def _launch(self, kind: str, eager: bool = False) -> float:
        """Launch overhead [s] of one step: the graph replay cost, or per-layer eager launches
        when the role runs eager or this step's batch is above every captured size."""
        p = self.p
        L = self.shape.n_layers
        if self.graph and not eager:
            t = p.get(f"overhead.{kind}_graph_step_s")
        else:
            t = p.get("overhead.eager_launch_per_layer_s") * L
        if self.superkernel and not eager:
            t *= p.get("overhead.superkernel_launch_factor")
        return t

    # ------------------------------------------------------------------ prefill
    def prefill_step(self, chunks: Iterable[Tuple[float, float]]) -> float:
        """Latency [s] of one prefill step processing ``chunks`` = (new tokens, cached prior)."""
        T, att = self._prefill_attn(chunks)
        if T <= 0:
            return 0.0
        return self._mixed_step(T, att, 0, 0.0, 0)

    def _prefill_attn(self, chunks: Iterable[Tuple[float, float]]) -> Tuple[float, float]:
        """(new tokens, attention core FLOPs as BF16-equivalent, all layers) of prefill chunks."""
        T = 0.0
        fl = 0.0
        ix = 0.0
        pf = self.attn.prefill
        for l, prior in chunks:
            T += l
            a, i = pf(l, prior)
            fl += a
            ix += i
        return T, fl + ix * self.peak_a / self.peak_idx

    def _mixed_step(self, T: float, att_fl: float, B: int, ctx_sum: float, B_total: int,
                    parts: Dict[str, Any] | None = None, draft: bool = True) -> float:
        """Step with T prefill tokens (instance-wide, attention core ``att_fl`` FLOPs over all
        layers, BF16-equivalent) plus B decode sequences in the largest group.

        ``parts``, when given, receives the step's components [s]: ``attention`` (projections
        and core: KV reads or attention FLOPs), ``ffn`` (dense/shared/routed expert GEMMs:
        weight reads or FLOPs), ``vector``, ``comm_exposed`` (TP all-reduce + EP
        dispatch/combine not hidden by micro-batch overlap), ``head_mtp`` (LM head, MTP draft),
        ``launch`` (graph/eager launch and per-step overheads).  ``draft=False`` leaves out a
        separate draft model's forwards (the base its ``draft_cost`` is a fraction of)."""
        s, r, p = self.shape, self.role, self.p
        tp, ep = r.tp, r.ep
        q = 1 + self.draft
        dec_tok = B * q
        eager_step = False
        if B > 0 and self.gears:
            for g in self.gears:
                if g >= dec_tok:
                    dec_tok = g
                    break
            else:
                eager_step = True     # above the largest captured size: the engine runs it eager
        tok_g = T / ep + dec_tok                      # tokens per DP group
        tok_total = T + max(B_total * q, dec_tok * ep)  # tokens of the whole instance (EP traffic)
        prefill_part = T > 0
        eta_c = p.get("compute.eta_c_gemm_prefill") if prefill_part else p.get("compute.eta_c_gemm_decode")
        t0 = p.get("compute.op_t0_s")
        pw, pa, bw, em, wb = self.peak_w, self.peak_a, self.bw, self.eta_m, self.wb
        # attention projections + core
        t_attn_gemm = roofline(2 * tok_g * s.attn_params / tp, s.attn_params / tp * wb, pw, bw, eta_c, em, t0)
        t_core = 0.0
        L = s.n_layers
        if att_fl > 0:
            t_core += roofline(att_fl / L / ep / tp, 0.0, pa, bw, p.get("compute.eta_c_attn_prefill"), em, t0)
        if B > 0:
            # per layer (averaged over the family's layer kinds), B sequences at mean context
            by1, fl1, ix1 = self.attn.decode(ctx_sum / B)
            fl = B * q * (fl1 + ix1 * pa / self.peak_idx) / L / tp
            by = B * by1 / L * self.kv_share
            t_core += roofline(fl, by, pa, bw, p.get("compute.eta_c_attn_decode"), em, t0)
        attn = t_attn_gemm + t_core
        # FFN
        t_dense = roofline(2 * tok_g * s.dense_ffn_params / tp, s.dense_ffn_params / tp * wb, pw, bw, eta_c, em, t0)
        t_moe = 0.0
        if s.n_experts:
            t_shared = roofline(2 * tok_g * s.shared_params / tp, s.shared_params / tp * wb, pw, bw, eta_c, em, t0) \
                if s.shared_params else 0.0
            routed_tok = tok_total * s.top_k / self.ep_size * self.imb
            touched = self.e_loc * experts_touched_fraction(tok_total, s.n_experts, s.top_k)
            t_routed = roofline(2 * routed_tok * s.expert_params, touched * s.expert_params * wb,
                                pw, bw, eta_c, em, t0)
            t_moe = t_shared + t_routed
        # vector work (norms, rope, softmax, quant, SwiGLU): per token per layer
        phase = "prefill" if prefill_part else "decode"
        vec_tok = T / (tp * ep) + dec_tok
        t_vec = self.vec_tot[phase] * vec_tok
        # communication
        ar = 2 * cc.allreduce_time(tok_g * s.hidden * 2.0, tp, self.tp_bw, self.tp_lat, self.ar_alpha, self.ar_eta)
        ep_t = 0.0
        if s.n_experts and self.ep_size > 1:
            mode = "normal" if prefill_part else "low_latency"
            bd, bc = cc.ep_bandwidths(p, mode, self.ep_size, self.ep_link_bw)
            alpha = p.get(f"comm.ep_alpha_{mode}_s")
            ep_t = cc.ep_layer_time(tok_total / self.ep_size * self.imb, s.hidden, s.top_k, self.ep_size,
                                    self.disp_bytes, self.comb_bytes, bd, bc, alpha)
        comp_dense = attn + t_dense + t_vec
        comp_moe = attn + t_moe + t_vec
        layer_dense = comp_dense + self._exposed(ar, comp_dense)
        layer_moe = comp_moe + self._exposed(ar + ep_t, comp_moe)
        total = s.n_dense * layer_dense + s.n_moe * layer_moe
        if parts is not None:
            parts["attention"] = s.n_layers * attn
            parts["ffn"] = s.n_dense * t_dense + s.n_moe * t_moe
            parts["vector"] = s.n_layers * t_vec
            parts["vector_by_op"] = {k: s.n_layers * v * vec_tok for k, v in self.vec_s[phase].items()}
            parts["comm_exposed"] = (s.n_dense * self._exposed(ar, comp_dense)
                                     + s.n_moe * self._exposed(ar + ep_t, comp_moe))
            before = total
        # LM head for decode tokens (prefill samples one token per finished request: negligible)
        if B > 0:
            total += roofline(2 * dec_tok * s.hidden * s.vocab / tp, s.hidden * s.vocab * 2.0 / tp,
                              pa, bw, eta_c, em, t0)
            if self.draft:
                # draft: each of the k draft tokens is one sequential forward of the draft
                # model at the decode batch.  Default (MTP/EAGLE): one decoder layer of the
                # target x mtp.draft_layer_cost_factor; a separate draft (`draft_cost`) is
                # added below, once the step's launch overhead is known
                if self.draft_cost is None:
                    total += self.draft * p.get("mtp.draft_layer_cost_factor") * (
                        layer_moe if s.n_experts else layer_dense)
        launch = self._launch("prefill" if prefill_part and B == 0 else "decode", eager=eager_step)
        if prefill_part:
            launch += p.get("overhead.prefill_step_s")
        if B > 0 and self.draft and self.draft_cost is not None and draft:
            # a separate draft (plan `draft_cost`, engines.toml draft_model_cost_fraction for
            # draft_model, 0 for n-gram): k sequential draft forwards, each `draft_cost` of the
            # target's whole decode step of these B sequences (launch included) — the SN7002
            # check's `1 + k x draft_cost` target steps
            base = total + launch if not prefill_part else \
                self._mixed_step(0.0, 0.0, B, ctx_sum, B_total, draft=False)
            total += self.draft * self.draft_cost * base
        if parts is not None:
            parts["head_mtp"] = total - before
            before = total
        total += launch
        if parts is not None:
            parts["launch"] = total - before
        return total

    def breakdown(self, T: float, B: int, ctx_sum: float, B_total: int) -> Dict[str, float]:
        """Components [s] of one step with ``T`` fresh prefill tokens (no cached prefix,
        one request per chunk of ``chunk_size``) and ``B`` decode sequences (see
        :meth:`_mixed_step`); key ``total`` is the step time."""
        parts: Dict[str, Any] = {}
        _, att = self._prefill_attn([(T, 0.0)] if T > 0 else [])
        parts["total"] = self._mixed_step(T, att, B, ctx_sum, B_total, parts)
        return parts

    # ------------------------------------------------------------------ decode
    def decode_step(self, B: int, ctx_sum: float, B_total: int) -> float:
        """Latency [s] of a decode step: ``B`` seqs in the largest DP group with total
        context ``ctx_sum`` [tokens]; ``B_total`` seqs in the whole instance."""
        if B <= 0:
            return 0.0
        cavg = int(ctx_sum / B) >> 7
        key = (B, cavg, B_total >> 4)
        t = self._dec_cache.get(key)
        if t is None:
            t = self._mixed_step(0.0, 0.0, B, ((cavg << 7) + 64) * B, max(B, (B_total >> 4 << 4) + 8))
            self._dec_cache[key] = t
        return t

    def mixed_step(self, chunks: Iterable[Tuple[float, float]], B: int, ctx_sum: float, B_total: int) -> float:
        """Aggregated-mode step: prefill chunks plus ``B`` decode seqs (largest group)."""
        T, att = self._prefill_attn(chunks)
        if T <= 0:
            return self.decode_step(B, ctx_sum, B_total)
        return self._mixed_step(T, att, B, ctx_sum, B_total)

    @property
    def tokens_per_decode_step(self) -> float:
        """Mean output tokens per sequence per decode step [tokens]:
        :func:`expected_accepted_tokens` of the draft count and per-token acceptance."""
        if not self.mtp:
            return 1.0
        d, a = self.mtp
        return expected_accepted_tokens(a, d)
