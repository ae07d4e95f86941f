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

from sncc.cost.inputs import Features, RoleSpec  # noqa: F401  (part of the simulator's input)


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
    regular), unless ``trace`` rows carry arrival times.  Both together are a benchmark client's
    ``--request-rate`` under ``--max-concurrency`` (the calibration manifest's ``client_rate``; a
    plan states one or the other): conversations start at the rate and wait at the client for one of
    the ``concurrency`` slots.
    ``max_tokens`` is the client's output cap [tokens] (defaults to output.max).

    ``trace``: rows ``(input_len, output_len, arrival_s or None)`` (see :mod:`sncc.workload.trace`)
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
        hccl_buffsize_mb: HCCL_BUFFSIZE [MB] (plan ``env``) of roles that do not set their own
            (``RoleSpec.hccl_buffsize_mb``); None -> CANN default
            (:func:`sncc.capacity.hccl_buffsize_mb`).  Each HCCL communicator holds 2x this
            outside the KV pool.
        devices_available: devices of the plan's hardware (``Resolved.devices_available``);
            None = unknown.  What-ifs that add devices beyond it say how many more they need.
        notes: plan settings the simulator did not apply, and why (e.g. an Omni-Infer
            optimisation on another engine); copied to ``info.not_applied``.
        engine: engine kind (``omni-infer``, ``vllm-ascend``, ``vllm``) whose runtime reserve sizes a
            hand-built spec's KV pool (:func:`sncc.capacity.engine_reserve`); None = the default.
        weight_bytes_per_param: bytes per parameter by weight group (the checkpoint's own,
            ``Facts.weight_bytes_per_param``); None = the quantization's
            (:func:`sncc.capacity.bytes_per_param`).
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
    weight_bytes_per_param: Optional[Any] = None

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
