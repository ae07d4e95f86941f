"""What the step cost model reads: one role's parallelism and budgets (:class:`RoleSpec`), the
engine features that change step costs (:class:`Features`), and the weight and KV bytes of the
deployment (:func:`weight_bytes`, :func:`resolve_quant`, :func:`resolve_kv_bytes_per_token`).

A plan's values come from its facts (:mod:`sncc.cost.from_facts`, the one reader of plan and
role facts for the cost model); tests and the calibration scenarios build these by hand.  Units:
tokens, bytes, devices.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Tuple


@dataclass(frozen=True)
class RoleSpec:
    """One serving role (``prefill``, ``decode`` or aggregated ``serve``) of the deployment.

    ``tp * dp * pp == devices``.  Attention is TP-split over ``tp`` devices and replicated ``dp``
    times (data-parallel attention: ``dp`` ranks, each with its own sequences, KV pool and
    scheduler).  Routed experts live on the ``tp * dp`` devices of a pipeline stage: placed by
    expert parallelism (``expert_parallel``: dispatch/combine all-to-all over an EP group of
    ``ep_size = tp * dp`` devices) or tensor-sharded over them (no dispatch; vLLM without
    ``--enable-expert-parallel``).  These are :class:`sncc.facts.model.RoleFacts` values.

    Attributes:
        instances: engine instances of this role.
        devices: devices per instance.
        tp, dp, pp: parallel sizes (see above).
        max_num_batched_tokens: token budget of one engine step per DP rank [tokens] (vLLM and
            vllm-ascend apply it per data-parallel engine core).
        chunk_size: chunked-prefill chunk per request per step [tokens] or None (= budget).
        max_num_seqs: running sequences per DP rank.
        kv_budget_bytes_per_device: KV-cache pool per device [B]; None -> the memory model
            (:func:`sncc.sim.engine.memory.role_memory`).
        block_size: KV block size [tokens].
        graph_mode: None -> role default (prefill eager, decode/serve graph).
        graph_gears: graph-mode batch buckets [tokens per DP rank]; a decode step's
            token-proportional work (GEMMs, MoE, EP, vector ops) runs at the smallest gear >= the
            real tokens (padding); attention/KV use the real sequences.  None -> the profile's
            ``policy.graph_gears`` rule: ``max-only`` = ``[max_num_seqs*(1+draft)]`` (Omni-Infer's
            default ``decode_gear_list``, domain-facts §4.2), ``pow2`` = powers of two.
        graph_mixed: steps holding prefill tokens and decodes run in the captured graphs (vLLM
            ``PIECEWISE`` / ``FULL_AND_PIECEWISE``); False = decode-only graphs
            (``FULL_DECODE_ONLY``), mixed steps run eager.
        expert_parallel: routed experts placed by expert parallelism (see above).
        redundant_experts: redundant routed-expert slots of one instance
            (:attr:`sncc.facts.model.RoleFacts.redundant_experts`; 0 without expert parallelism).
        memory_utilization: fraction of HBM the engine may use (``gpu_memory_utilization``).
        hccl_buffsize_mb: ``HCCL_BUFFSIZE`` [MB] of the role (its env over the plan's); None ->
            the spec's.
        memory: the :class:`sncc.capacity.MemoryBreakdown` ``sncc check`` computed for the role;
            None = computed from this spec by the same arithmetic
            (:func:`sncc.sim.engine.memory.role_memory`).
        dp_lockstep: the ``dp`` ranks of an instance step together, the slowest setting the step
            (:attr:`sncc.facts.model.RoleFacts.dp_lockstep`: MoE models); False = each DP rank is
            an engine of its own (dense models), simulated as ``instances x dp`` instances.
        all2all_backend: the EP dispatch/combine implementation the engine runs
            (:attr:`sncc.facts.model.RoleFacts.all2all_backend`, e.g. vLLM's
            ``allgather_reducescatter``); None = the profile's all-to-all kernels (DeepEP-style).
        omni_attn: OmniAttn's KV layout on this role (:class:`sncc.facts.model.OmniAttnLayout`,
            ``RoleFacts.omni_attn``): its compressed layers read at most
            ``kept_tokens(block_size)`` tokens of context, and its full layers' pool holds
            ``full_layer_token_gain`` times the tokens; None = every layer keeps all the context.
    """

    instances: int
    devices: int
    tp: int = 1
    dp: int = 1
    pp: int = 1
    max_num_batched_tokens: int = 8192
    chunk_size: Optional[int] = None
    max_num_seqs: int = 256
    kv_budget_bytes_per_device: Optional[float] = None
    block_size: int = 128
    graph_mode: Optional[bool] = None
    graph_gears: Optional[Tuple[int, ...]] = None
    graph_mixed: bool = True
    expert_parallel: bool = True
    redundant_experts: int = 0
    memory_utilization: float = 0.9
    hccl_buffsize_mb: Optional[int] = None
    memory: Any = None
    dp_lockstep: bool = True
    all2all_backend: Optional[str] = None
    omni_attn: Any = None

    @property
    def expert_devices(self) -> int:
        """Devices one pipeline stage spreads the routed experts over (``tp * dp``)."""
        return self.tp * self.dp

    @property
    def ep_size(self) -> int:
        """EP group of the MoE dispatch: ``tp * dp`` under expert parallelism, else 1."""
        return self.tp * self.dp if self.expert_parallel else 1


@dataclass(frozen=True)
class Features:
    """Engine features that change step costs.

    Attributes:
        micro_batch: 1 or 2; 2 = two-micro-batch overlap (comm hidden under compute).
        micro_batch_steps: which steps the engine splits into two micro-batches when
            ``micro_batch = 2``: ``all`` (CloudMatrix-Infer's decode pipeline), ``prefill`` (steps
            holding prefill tokens: vllm-ascend dual-batch overlap) or ``prefill-multi`` (steps
            holding two prompts or more: Omni-Infer ``enable_prefill_micro_batch``); the
            engine adapter's ``pins.toml micro_batch_steps``.
        graph_mode: default graph mode for decode/serve roles (prefill runs eager unless its
            RoleSpec says otherwise).
        superkernel: Ascend SuperKernel fusion (reduces launch overhead per step).
        mtp: (draft_tokens k, acceptance a) of the speculative setting in force on the role that
            decodes (``RoleFacts.speculative`` of ``decode`` or ``serve``); ``a`` = per-token
            acceptance of a draft given the previous one was accepted, so a sequence gains
            ``E = (1 - a^(k+1)) / (1 - a)`` tokens per step
            (:func:`sncc.facts.speculative.expected_tokens`); None = no speculative decoding.
        draft_cost: time of one draft token as a fraction of the target's whole decode step at
            the same batch (plan ``speculative { draft_cost }``; engines.toml
            ``draft_model_cost_fraction`` for ``draft_model``; 0 for n-gram); None -> one decoder
            layer x the profile's ``mtp.draft_layer_cost_factor`` (MTP/EAGLE).  Verification
            always runs the target on ``1 + k`` tokens per sequence.
        draft_kind: what drafts when ``draft_cost`` is None: ``mtp`` (the model's MTP module, one
            decoder layer of the target, MoE included) or ``eagle`` (an EAGLE head: one dense
            BF16 decoder layer at the target's hidden size).
        prefix_cache_hit_rate: fraction of prompt tokens served from the prefix cache.
    """

    micro_batch: int = 1
    micro_batch_steps: str = "all"
    graph_mode: bool = True
    superkernel: bool = False
    mtp: Optional[Tuple[int, float]] = None
    draft_cost: Optional[float] = None
    draft_kind: str = "mtp"
    prefix_cache_hit_rate: float = 0.0


def weight_bytes(spec: Any) -> Dict[str, float]:
    """Bytes per parameter of every weight group of ``spec``'s model
    (:func:`sncc.capacity.bytes_per_param`: the checkpoint's per-group bytes
    ``spec.weight_bytes_per_param`` over the quantization's defaults); a ``quant_weight_bytes``
    override sets every linear group.  Raises KeyError for an unknown quant."""
    from sncc.capacity import bytes_per_param

    over: Optional[Mapping[str, float]] = getattr(spec, "weight_bytes_per_param", None)
    if spec.quant_weight_bytes is not None:
        return bytes_per_param(None, bool(getattr(spec.model, "is_moe", False)), None,
                               linear=float(spec.quant_weight_bytes))
    return bytes_per_param(spec.quant, bool(getattr(spec.model, "is_moe", False)), over)


def resolve_quant(spec: Any) -> tuple:
    """(bytes per attention weight, compute dtype) of ``spec``: :func:`weight_bytes` of the
    ``attention`` group and the quantization's compute dtype (``quant_compute_dtype`` overrides
    it).  Raises KeyError for an unknown quant."""
    from sncc import catalog

    cd = spec.quant_compute_dtype or catalog.quant(spec.quant).compute_dtype
    return float(weight_bytes(spec)["attention"]), str(cd)


def resolve_kv_bytes_per_token(spec: Any) -> float:
    """All-layer KV bytes per token [B]: the spec's override, else the catalog's
    :func:`sncc.catalog.arch.kv_bytes_per_token` of the model and KV dtype (the shape formula of
    :mod:`sncc.cost.model_shape` for a hand-built model object)."""
    if spec.kv_bytes_per_token:
        return float(spec.kv_bytes_per_token)
    try:
        from sncc.catalog import arch
        return float(arch.kv_bytes_per_token(spec.model, spec.kv_dtype))
    except AttributeError:      # a duck-typed model without the catalog's fields
        from sncc import catalog
        from sncc.cost.model_shape import kv_bytes_per_token, model_shape
        return kv_bytes_per_token(model_shape(spec.model), float(catalog.kv_dtype_bytes(spec.kv_dtype)))
