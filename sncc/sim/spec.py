"""Input of the serving simulator: plain frozen dataclasses in canonical units.

Units used everywhere in :mod:`sncc.sim`: seconds, bytes, tokens, FLOP/s, B/s.
Nothing here imports the catalog at module import time; ``model``, ``chip`` and
``links`` hold the catalog's frozen objects (``ModelArch``, ``Chip``, ``Link``)
but any object with the same attribute names works (duck typing), which keeps
the simulator testable on its own.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Tuple


@dataclass(frozen=True)
class RoleSpec:
    """One serving role (``prefill``, ``decode`` or aggregated ``serve``).

    ``tp * ep * pp == devices``.  Attention is TP-split over ``tp`` devices and
    replicated ``ep`` times (DP attention: ``ep`` attention groups, each with
    its own sequences and KV); routed experts are spread over ``tp * ep``
    devices (MoE EP size = tp*ep).

    Attributes:
        instances: number of engine instances of this role.
        devices: devices per instance.
        tp, ep, pp: parallel sizes (see above).
        max_num_batched_tokens: token budget of one engine step per DP rank [tokens] (vLLM and
            vllm-ascend apply it per data-parallel engine core).
        chunk_size: chunked-prefill chunk per request per step [tokens] or None (= budget).
        max_num_seqs: running sequences per attention (DP) group.
        kv_budget_bytes_per_device: KV-cache pool per device [B]; None -> computed
            by :func:`sncc.sim.memory.kv_budget_bytes_per_device` (sncc.capacity with the
            profile's calibrated reserve and utilization).
        block_size: KV block size [tokens].
        graph_mode: None -> role default (prefill eager, decode/serve graph).
        graph_gears: graph-mode batch buckets [tokens per DP group]; a decode step's
            token-proportional work (GEMMs, MoE, EP, vector ops) runs at the smallest
            gear >= the real tokens (padding); attention/KV use the real sequences.
            None -> the profile's ``policy.graph_gears`` rule: ``max-only`` =
            ``[max_num_seqs*(1+draft)]`` (Omni-Infer's default ``decode_gear_list``,
            domain-facts §4.2), ``pow2`` = powers of two (CUDA-graph capture sizes).
        graph_mixed: steps holding prefill tokens and decodes run in the captured graphs (vLLM
            ``PIECEWISE`` / ``FULL_AND_PIECEWISE``); False = decode-only graphs
            (``FULL_DECODE_ONLY``), mixed steps run eager.
        expert_parallel: routed experts placed by expert parallelism over ``tp * ep`` devices
            (dispatch/combine all-to-all); False = experts tensor-sharded over them (all-reduce, no
            dispatch; vLLM without ``--enable-expert-parallel``).
        redundant_experts: redundant routed-expert slots per device the build deploys
            (:func:`sncc.capacity.redundant_experts_per_device`); None = ``Features.redundant_experts``
            on decode/serve roles.
        memory_utilization: fraction of HBM the engine may use (the emitted
            ``gpu_memory_utilization``).
        memory: the :class:`sncc.capacity.MemoryBreakdown` ``sncc check`` computed for the role
            (:func:`sncc.capacity.role_memory`); None = computed from this spec by the same
            arithmetic (:func:`sncc.sim.engine.memory.role_memory`).
    """

    instances: int
    devices: int
    tp: int = 1
    ep: int = 1
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
    redundant_experts: Optional[int] = None
    memory_utilization: float = 0.9
    memory: Any = None

    @property
    def dp_groups(self) -> int:
        """Attention data-parallel groups per instance (= ep)."""
        return self.ep

    @property
    def moe_ep(self) -> int:
        """Expert-parallel group size for routed experts (= tp*ep)."""
        return self.tp * self.ep


@dataclass(frozen=True)
class Features:
    """Engine features that change step costs.

    Attributes:
        micro_batch: 1 or 2; 2 = two-micro-batch overlap (comm hidden under compute).
        graph_mode: default graph mode for decode/serve roles (prefill runs eager
            unless its RoleSpec says otherwise).
        superkernel: Ascend SuperKernel fusion (reduces launch overhead per step).
        mtp: (draft_tokens k, acceptance a) — ``a`` = per-token acceptance of a draft given
            the previous one was accepted, so a sequence gains
            ``E = (1 - a^(k+1)) / (1 - a)`` tokens per step
            (:func:`sncc.sim.step_model.expected_accepted_tokens`); None = no speculative decoding.
        draft_cost: time of one draft token as a fraction of the target's whole decode step
            (launch overhead included) at the same batch (plan ``speculative { draft_cost }``;
            engines.toml ``draft_model_cost_fraction`` for ``draft_model``; 0 for n-gram);
            None -> one decoder layer x the profile's ``mtp.draft_layer_cost_factor`` (MTP/EAGLE).  Verification always runs the
            target on ``1 + k`` tokens per sequence (GEMMs, EP traffic, vector work and
            attention FLOPs scale with ``1 + k``; KV is read once).
        draft_kind: what drafts when ``draft_cost`` is None: ``mtp`` (the model's MTP module, one
            decoder layer of the target, MoE included) or ``eagle`` (an EAGLE head: one dense BF16
            decoder layer at the target's hidden size).
        redundant_experts: extra expert replicas per device (EPLB / OmniPlacement); they
            lower the routed-load imbalance (:func:`sncc.sim.cost_gemm.imbalance_with_redundancy`).
        omni_attn_compress_ratio: OmniAttn: fraction of layers compressed (plan
            ``omni_attn { compress_ratio }``); those layers read ``min(ctx, kept_tokens)``.
        prefix_cache_hit_rate: fraction of prompt tokens served from the prefix cache (a
            flat rate; multi-turn workloads get their reuse from the conversation instead).
    """

    micro_batch: int = 1
    graph_mode: bool = True
    superkernel: bool = False
    mtp: Optional[Tuple[int, float]] = None
    draft_cost: Optional[float] = None
    draft_kind: str = "mtp"
    redundant_experts: int = 0
    omni_attn_compress_ratio: Optional[float] = None
    prefix_cache_hit_rate: float = 0.0


@dataclass(frozen=True)
class LengthDist:
    """A token-length distribution.

    kind: ``fixed`` (always ``mean``), ``uniform`` (integers in [min, max]) or
    ``lognormal`` (see :mod:`sncc.sim.workload` for how sigma is chosen and how
    the clamp at ``max`` keeps the mean).  ``cv`` overrides the profile's
    coefficient of variation for ``lognormal``.
    """

    kind: str = "fixed"
    mean: float = 1024
    max: Optional[int] = None
    min: int = 1
    cv: Optional[float] = None


@dataclass(frozen=True)
class Workload:
    """Request stream.

    Exactly one of ``concurrency`` (closed loop: each client issues its next
    request when its previous one completes, until ``requests`` have been
    issued) or ``rate`` (open loop [conversations/s]: Gamma inter-arrival times of shape
    ``burstiness`` and mean ``1/rate``, as vLLM's benchmark ``--burstiness``: 1 is Poisson,
    below 1 burstier (coefficient of variation ``1/sqrt(burstiness)``), above 1 more
    regular), unless ``trace`` rows carry arrival times.
    ``max_tokens`` is the client's output cap [tokens] (defaults to output.max).

    ``trace``: rows ``(input_len, output_len, arrival_s or None)`` (see :mod:`sncc.sim.trace`)
    replacing the sampled lengths (cycled when ``requests`` exceeds them) and, when the rows
    have arrivals, the arrival process.

    ``turns`` > 1: requests form conversations of ``turns`` requests.  Turn ``j+1`` is sent
    ``think_time`` [s] after turn ``j`` completes; its prompt is turn ``j``'s prompt + output
    (the conversation so far) plus a new message drawn from ``input`` (or the trace), capped
    at ``input.max`` (the client keeps the context within max_model_len).  The previous
    context is the follow-up's reusable prefix: it is served from the prefix cache with
    probability ``Features.prefix_cache_hit_rate`` (the chance it has not been evicted),
    else recomputed.  ``rate``/closed-loop clients start conversations.
    """

    requests: int
    input: LengthDist
    output: LengthDist
    concurrency: Optional[int] = None
    rate: Optional[float] = None
    max_tokens: Optional[int] = None
    seed: int = 0
    burstiness: float = 1.0
    trace: Optional[Tuple[Tuple[int, int, Optional[float]], ...]] = None
    turns: int = 1
    think_time: float = 0.0


@dataclass(frozen=True)
class SloTarget:
    """One SLO: ``metric`` in ttft/tpot/e2e [s], qpm, output_tokens_per_s,
    tokens_per_s_per_user; ``stat`` mean/p50/p90/p99 (ignored for rates);
    ``op`` one of <, <=, >, >=."""

    metric: str
    stat: str
    op: str
    target: float


@dataclass(frozen=True)
class SimSpec:
    """Everything the simulator needs.

    Attributes:
        model: catalog ModelArch.  quant: weight quant id (e.g. ``w8a8``).
        kv_dtype: KV dtype id (``int8``, ``bf16``...).  kv_bytes_per_token: override of
            the all-layer KV bytes/token (e.g. 39,040 for vllm-ascend C8 on DeepSeek-R1);
            None -> catalog ``kv_bytes_per_token``.
        chip: catalog Chip.  links: tuple of catalog Link (system topology).
        devices_per_node: devices per node of the system.
        profile: profile id under ``sncc/catalog/data/profiles`` (e.g. ``ascend-a3``).
        roles: mapping role name -> RoleSpec (``prefill``+``decode`` or ``serve``).
        features, workload, slos: see their classes.
        kv_admission: ``reserve-max-tokens`` (decode admits a request only when the
            pool holds prompt+max_tokens) or ``on-demand`` (prompt only).
        prefill_dispatch: ``pull`` (the proxy hands a request to a prefill instance when
            that instance starts a step) or ``push`` (immediately, least-loaded instance).
        quant_weight_bytes, quant_compute_dtype: optional overrides of the catalog quant.
        hccl_buffsize_mb: HCCL_BUFFSIZE [MB] (plan ``env``); None -> CANN default
            (:func:`sncc.capacity.hccl_buffsize_mb`).  Each HCCL communicator holds 2x this
            outside the KV pool.
        devices_available: devices of the plan's hardware (``Resolved.devices_available``);
            None = unknown.  What-ifs that add devices beyond it say how many more they need.
        notes: plan settings the simulator did not apply, and why (e.g. an Omni-Infer
            optimisation on another engine); copied to ``info.not_applied``.
        engine: engine kind (``omni-infer``, ``vllm-ascend``, ``vllm``) whose runtime reserve sizes a
            hand-built spec's KV pool (:func:`sncc.capacity.engine_reserve`); None = the default.
        plan_features: facts about the plan for calibration-interval matching (regime, nearest
            calibration point): :func:`sncc.sim.calibration.intervals.plan_features`; None = derived
            from this spec.
    """

    model: Any
    chip: Any
    roles: Tuple[Tuple[str, RoleSpec], ...]
    workload: Workload
    quant: str = "bf16"
    kv_dtype: str = "bf16"
    kv_bytes_per_token: Optional[float] = None
    links: Tuple[Any, ...] = ()
    devices_per_node: int = 8
    profile: str = "ascend-a3"
    features: Features = field(default_factory=Features)
    slos: Tuple[SloTarget, ...] = ()
    kv_admission: str = "reserve-max-tokens"
    prefill_dispatch: str = "pull"
    quant_weight_bytes: Optional[float] = None
    quant_compute_dtype: Optional[str] = None
    hccl_buffsize_mb: Optional[int] = None
    devices_available: Optional[int] = None
    notes: Tuple[str, ...] = ()
    engine: Optional[str] = None
    plan_features: Optional[Any] = None

    def role(self, name: str) -> Optional[RoleSpec]:
        """The RoleSpec called ``name`` or None."""
        roles = self.roles.items() if isinstance(self.roles, dict) else self.roles
        for n, r in roles:
            if n == name:
                return r
        return None

    @property
    def disaggregated(self) -> bool:
        """True when the plan has separate prefill and decode roles."""
        return self.role("prefill") is not None and self.role("decode") is not None
