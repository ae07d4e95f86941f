"""Per-device memory of one role: weights, KV cache, reserves, HCCL buffers.

Used by the KV-fit check (SN4004/SN4008), by the simulator (KV pool size) and
by the TPOT lower bound (SN7001).  All sizes are bytes.

Model (simulator-modelling.md §3.9, domain-facts §3.6, §5.2)::

    weights_per_device + kv + reserve + hccl ≤ hbm_bytes × memory_utilization

* weights: attention, dense FFN, shared experts, embedding and LM head are
  split over ``tp`` (one copy per attention group); routed experts over the
  EP group ``tp × ep``, plus ``redundant_experts`` extra copies per device;
  layers over ``pp``.  Linear weights take the quantization's bytes per
  element; embedding and LM head stay 2 bytes (msModelSlim keeps them BF16).
* KV per token per device from :func:`sncc.catalog.arch.kv_bytes_per_token_per_device`.
* reserve: engine activation/workspace and runtime reserve.  The check uses
  ``sncc/catalog/data/engines.toml`` (sourced, 3.5 GiB); the simulator passes its
  calibration profile's fitted reserve and utilization to :func:`device_memory`.
* HCCL: each communicator reserves 2 × ``HCCL_BUFFSIZE`` MB (send + receive),
  one communicator per parallel group of size > 1 (TP, EP, PP).
"""

from __future__ import annotations

from dataclasses import dataclass

from sncc import catalog
from sncc.catalog.engine_defaults import engine_defaults

MB = 10**6


@dataclass(frozen=True)
class MemoryBreakdown:
    """Memory of one device of a role, in bytes.

    ``kv_per_seq`` is the KV of one sequence at ``context`` tokens;
    ``seqs`` the sequences the device must hold (``max_num_seqs`` of its
    attention group, or for a prefill role the prompts of one step).
    """

    budget: int
    hbm: int
    utilization: float
    weights: int
    reserve: int
    hccl: int
    kv_per_token: float
    context: int
    seqs: int

    @property
    def kv_per_seq(self) -> int:
        """KV bytes of one sequence at full context."""
        return int(self.kv_per_token * self.context)

    @property
    def kv_needed(self) -> int:
        """KV bytes for ``seqs`` sequences at full context."""
        return self.kv_per_seq * self.seqs

    @property
    def kv_budget(self) -> int:
        """Bytes left for the KV cache after weights, reserve and HCCL buffers."""
        return self.budget - self.weights - self.reserve - self.hccl

    @property
    def seqs_that_fit(self) -> int:
        """How many full-context sequences the KV budget holds (≥ 0)."""
        if self.kv_per_seq <= 0:
            return self.seqs
        return max(0, self.kv_budget // self.kv_per_seq)

    @property
    def context_that_fits(self) -> int:
        """Longest context (tokens) one sequence may reach with ``seqs`` sequences admitted."""
        if self.kv_per_token <= 0 or self.seqs <= 0:
            return self.context
        return max(0, int(self.kv_budget / (self.kv_per_token * self.seqs)))


def hccl_buffsize_mb(env: dict[str, str], moe_ep: bool = False) -> int:
    """The effective ``HCCL_BUFFSIZE`` in MB: the plan's env override, else what
    ``sncc build`` writes into ``env.sh`` — 1024 MB for MoE expert-parallel
    deployments (vllm-ascend recipes), else CANN's default 200 MB
    (``engines.toml``: ``hccl_buffsize_moe_ep_mb``, ``hccl_buffsize_default_mb``).
    """
    raw = env.get("HCCL_BUFFSIZE")
    if raw is not None:
        try:
            return max(1, int(float(raw)))
        except (ValueError, OverflowError):
            pass
    key = "hccl_buffsize_moe_ep_mb" if moe_ep else "hccl_buffsize_default_mb"
    return int(engine_defaults()[key])


def plan_is_moe_ep(plan, arch) -> bool:
    """True when ``arch`` is MoE and some role spreads experts over more than one device."""
    return bool(arch is not None and arch.is_moe and any(r.tp * r.ep > 1 for _, r in plan.roles()))


def communicators(tp: int, ep: int, pp: int) -> int:
    """Number of HCCL communicators one device joins: its TP, EP and PP groups of size > 1
    (none for a single-device instance, which communicates with nobody)."""
    return int(tp > 1) + int(tp * ep > 1) + int(pp > 1)


def weights_per_device(arch, quant: str, tp: int, ep: int, pp: int, redundant_experts: int = 0,
                       mtp: bool = False, weight_bytes: float | None = None) -> int:
    """Weight bytes held by one device [B] (see the module docstring for the split).

    ``mtp`` adds the MTP module(s) (``param_breakdown(arch)["mtp"]``: one decoder layer plus
    eh_proj per ``num_nextn_predict_layers``) to the last pipeline stage: its routed experts
    spread over ``tp × ep``, the rest over ``tp``.  ``weight_bytes`` overrides the
    quantization's bytes per linear-weight element.  Raises KeyError for an unknown ``quant``.
    """
    from sncc.catalog.arch import param_breakdown

    p = param_breakdown(arch)
    wb = weight_bytes if weight_bytes is not None else (catalog.quant(quant).weight_bytes if quant else 2.0)
    emb_bytes = 2.0
    attn_group = p["attention"] + p["dense_ffn"] + p["shared_experts"]
    routed = p["routed_experts"]
    moe_layers = p["moe_layers"]
    per_expert_layer = p["routed_expert_one"]
    total = (attn_group * wb + (p["embedding"] + p["lm_head"]) * emb_bytes) / tp
    if routed:
        total += routed * wb / (tp * ep)
        total += redundant_experts * moe_layers * per_expert_layer * wb
    total /= pp
    if mtp and p["mtp"]:
        n_mtp = getattr(arch, "num_nextn_predict_layers", 0) or 0
        mtp_routed = n_mtp * (getattr(arch, "n_routed_experts", 0) or 0) * per_expert_layer if routed else 0.0
        total += (p["mtp"] - mtp_routed) * wb / tp + mtp_routed * wb / (tp * ep)
    return int(total)


def device_memory(arch, quant: str, kv_dtype: str, tp: int, ep: int, pp: int, *, hbm_bytes: int,
                  utilization: float, reserve_bytes: int, hccl_mb: int, context: int, seqs: int,
                  redundant_experts: int = 0, mtp: bool = False,
                  kv_bytes_per_token: float | None = None,
                  weight_bytes: float | None = None) -> MemoryBreakdown:
    """Memory of one device of a role — the one memory model of sncc.

    Used by the KV-fit check (through :func:`role_memory`, with the engine's sourced reserve)
    and by the simulator (``sncc.sim.engine.memory``, with a calibrated profile's reserve and
    utilization).  ``kv_bytes_per_token`` overrides the all-layer KV bytes per token of the
    whole model (divided here like the catalog's: MLA replicated over TP, GQA split by KV
    heads); ``hccl_mb`` is HCCL_BUFFSIZE [MB] (:func:`hccl_buffsize_mb`).
    Raises ValueError when ``tp`` does not split the KV heads and KeyError for an unknown
    KV dtype or quantization.
    """
    from sncc.catalog.arch import kv_bytes_per_token as _kv_all, kv_bytes_per_token_per_device

    w = weights_per_device(arch, quant, tp, ep, pp, redundant_experts if arch.is_moe else 0,
                           mtp=mtp, weight_bytes=weight_bytes)
    kv_tok = kv_bytes_per_token_per_device(arch, kv_dtype, tp, include_mtp=mtp)
    if kv_bytes_per_token is not None:
        kv_tok *= kv_bytes_per_token / _kv_all(arch, kv_dtype, include_mtp=mtp)
    kv_tok /= pp
    hccl = 2 * int(hccl_mb) * MB * communicators(tp, ep, pp)
    budget = int(hbm_bytes * utilization)
    return MemoryBreakdown(budget, int(hbm_bytes), utilization, w, int(reserve_bytes), hccl, kv_tok, context, seqs)


def role_memory(plan, resolved, role_name: str, role) -> MemoryBreakdown | None:
    """Memory breakdown of one device of ``role`` (None when the chip or model is unknown).

    Decode and serve roles hold ``max_num_seqs`` sequences at ``max_model_len``;
    a prefill role holds the prompts of one step: ``max(max_num_batched_tokens / ep,
    max input)`` tokens per attention group.
    """
    arch, chip = resolved.arch, resolved.chip
    if arch is None or chip is None or not getattr(chip, "hbm_bytes", None):
        return None
    util = role.memory_utilization or plan.hardware.memory_utilization
    redundant = 0
    if plan.optimize is not None and plan.optimize.omni_placement is not None:
        redundant = plan.optimize.omni_placement.redundant_experts
    if role_name == "prefill":
        context = max(role.max_num_batched_tokens // max(1, role.ep), plan.workload.input.max)
        seqs = 1
    else:
        context = resolved.max_model_len
        seqs = role.max_num_seqs
    try:
        return device_memory(arch, resolved.quant or "bf16", resolved.kv_dtype, role.tp, role.ep, role.pp,
                             hbm_bytes=chip.hbm_bytes, utilization=util,
                             reserve_bytes=int(engine_defaults()["activation_reserve_bytes"]),
                             hccl_mb=(hccl_buffsize_mb(plan.env, plan_is_moe_ep(plan, resolved.arch)) if chip.vendor == "huawei" else 0),
                             context=context, seqs=seqs,
                             redundant_experts=redundant)
    except (ValueError, KeyError):
        return None  # tp does not split the KV heads (SN3004) or the dtype is unknown: reported elsewhere
