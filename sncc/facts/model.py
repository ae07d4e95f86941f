"""The typed facts of a plan: what checks, lowering and the simulator read.

:class:`Facts` holds what resolution found in the catalog and the checkpoint, plus one
:class:`RoleFacts` per role with the values *derived* from the plan (each with a short note
saying how), so that no consumer derives them again.  Units: tokens, bytes, devices; fractions
for utilisation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from sncc.diagnostics.model import Diagnostic
from sncc.source import Span


@dataclass(frozen=True)
class EnvValue:
    """One environment variable of a role: its value as written, where, and from which block.

    ``origin`` is ``"plan"`` (the plan-level ``env``) or the role's name (its own ``env``).
    """

    value: str
    span: Optional[Span]
    origin: str


@dataclass(frozen=True)
class SpeculativeFacts:
    """The speculative-decoding setting in force for one role.

    ``draft_tokens`` is k (tokens proposed per step), ``acceptance`` α (per-token acceptance
    given the previous draft was accepted), ``tokens_per_step`` = E(α, k) from
    :func:`sncc.facts.speculative.expected_tokens`.  ``spans`` maps each field to where its
    value was written (the role's block or the plan's).
    """

    method: str
    draft_tokens: int
    acceptance: float
    model: Optional[str]
    draft_cost: Optional[float]
    tokens_per_step: float
    spans: Mapping[str, Optional[Span]]
    #: each number field as the file wrote it (``acceptance`` ``40%``), for messages
    texts: Mapping[str, Optional[str]] = field(default_factory=dict)
    #: the n-gram drafter's lookup window (None: the engine's default)
    prompt_lookup_max: Optional[int] = None
    prompt_lookup_min: Optional[int] = None

    def span_of(self, name: str) -> Optional[Span]:
        """Where field ``name`` was written (None for a default)."""
        return self.spans.get(name)

    def text_of(self, name: str) -> str:
        """Field ``name``'s value for a message: as written, else the value held (``0.7``)."""
        text = self.texts.get(name)
        return text if text is not None else f"{getattr(self, name):g}"


@dataclass(frozen=True)
class OmniAttnLayout:
    """The KV layout Omni-Infer's OmniAttn runs on a role (the engine adapter's ``[omni_attn]``
    data: its release's ``kv_cache_interface.py`` constants, ``source``).

    ``compressed_layers`` of ``layers`` (the default ``PATTERN``) keep ``sink_blocks +
    recent_blocks`` KV blocks per request; the pool gives a compressed layer ``beta`` of the
    uniform block count and a full layer ``1 + (1 - beta) x compressed / (full + 1)`` times it."""

    compressed_layers: int
    layers: int
    sink_blocks: int
    recent_blocks: int
    beta: float
    source: str

    @property
    def compressed_fraction(self) -> float:
        """Fraction of the layers that are compressed (0..1)."""
        return self.compressed_layers / self.layers if self.layers else 0.0

    def kept_tokens(self, block_size: int) -> int:
        """Tokens of context a compressed layer keeps per request [tokens]:
        ``(sink_blocks + recent_blocks) x block_size``."""
        return (self.sink_blocks + self.recent_blocks) * int(block_size)

    @property
    def full_layer_token_gain(self) -> float:
        """Tokens a full layer's pool holds relative to a uniform layout (>= 1):
        ``1 + (1 - beta) x compressed / (full + 1)`` (``get_kv_cache_config_omni_type``)."""
        full = self.layers - self.compressed_layers
        return 1.0 + (1.0 - self.beta) * self.compressed_layers / (full + 1)


@dataclass(frozen=True)
class EplbFacts:
    """Redundant experts and expert-load balancing in force for one role.

    ``redundant_experts`` is the number of extra routed-expert slots of one instance;
    ``per_device`` the seeds' per-device count when the plan wrote ``omni_placement``
    (``redundant_experts = per_device × devices``), else None.  ``source`` names the block
    (``eplb``, ``prefill.eplb``, ``optimize.omni_placement``).
    """

    redundant_experts: int
    dynamic: bool
    interval: Optional[int]
    window: Optional[int]
    per_device: Optional[int]
    source: str
    span: Optional[Span]


@dataclass(frozen=True)
class RoleFacts:
    """One role (``prefill``, ``decode`` or ``serve``) as every later phase sees it.

    Parallelism: one instance is ``tp × dp × pp`` devices (``devices``); ``expert_parallel``
    says whether routed experts are placed by expert parallelism (an EP dispatch happens),
    ``ep_size`` is then ``tp × dp`` (else 1).  ``routed_slots`` = routed + redundant experts.
    Budgets: ``max_num_seqs`` and ``max_num_batched_tokens`` are per data-parallel rank, as
    vLLM and vllm-ascend apply them (each DP engine core runs its own scheduler).
    ``dispatch_tokens_per_rank`` is the decode-step token window the fused MoE dispatch is
    sized for: ``max_num_seqs × (1 + draft tokens)``.
    ``notes`` maps a field name to how its value was derived (emitted as comments).
    """

    name: str
    instances: int
    tp: int
    dp: int
    pp: int
    devices: int
    devices_declared: int
    expert_parallel: bool
    ep_size: int
    routed_experts: int
    redundant_experts: int
    max_num_seqs: int
    max_num_batched_tokens: int
    chunk: Optional[int]
    enable_chunked_prefill: bool
    graph_mode: bool
    memory_utilization: float
    kv_role: Optional[str]
    speculative: Optional[SpeculativeFacts]
    eplb: Optional[EplbFacts]
    env: Mapping[str, EnvValue]
    dispatch_tokens_per_rank: int
    notes: Mapping[str, str] = field(default_factory=dict)
    #: the ``dp`` ranks of an instance step together (:func:`sncc.facts.roles.dp_lockstep`): a MoE
    #: model's DP ranks meet in the MoE layers' collectives every step; a dense model's are independent
    dp_lockstep: bool = False
    #: the EP dispatch/combine implementation the engine runs for this role
    #: (:func:`sncc.facts.roles.all2all_backend`); None without expert parallelism or when the engine
    #: has no such choice (vllm-ascend and Omni-Infer run their own fused MoE communication)
    all2all_backend: Optional[str] = None
    #: OmniAttn's KV layout when it runs on this role (:class:`OmniAttnLayout`; Omni-Infer with
    #: ``optimize { omni_attn }``, on a KV consumer: a decode role or a role without KV transfer)
    omni_attn: Optional[OmniAttnLayout] = None
    #: automatic prefix caching in force on this role: the plan's ``prefix_caching`` when written, else
    #: the engine's default (``plan_keys.toml [engine_defaults]``: on); off where the engine turns it off
    #: whatever the flag says (Omni-Infer's OmniAttn KV consumers, :func:`sncc.facts._derive_omni_attn`).
    #: What the simulator credits ``optimize.prefix_cache_hit`` on, and what SN5023 judges
    prefix_caching: bool = True
    #: the role's switches the build passes as written (``plan_keys.toml`` ``build = "as-written"`` rows):
    #: role key → the plan's value, only for keys the plan writes (``{"prefix_caching": False}``)
    switches: Mapping[str, bool] = field(default_factory=dict)

    @property
    def routed_slots(self) -> int:
        """Routed-expert slots of one instance: routed experts plus redundant copies."""
        return self.routed_experts + self.redundant_experts

    @property
    def draft_tokens(self) -> int:
        """k of the speculative setting in force (0 when off)."""
        return self.speculative.draft_tokens if self.speculative is not None else 0

    def env_value(self, name: str) -> Optional[str]:
        """The value of environment variable ``name`` for this role, or None."""
        v = self.env.get(name)
        return v.value if v is not None else None

    def env_span(self, name: str) -> Optional[Span]:
        """Where ``name`` was set for this role (role env or plan env), or None."""
        v = self.env.get(name)
        return v.span if v is not None else None


@dataclass
class Facts:
    """Facts derived from a typed plan: catalog entries, the checkpoint, per-role facts.

    Resolution problems (unknown ids, an unreadable config.json) become ``diagnostics``; the
    corresponding attribute is then None and checks that need it skip themselves.
    ``max_model_len`` is in tokens; ``max_model_len_span`` points at the value it was taken
    from and ``max_model_len_note`` says how it was derived.  ``vendor`` is ``"ascend"`` or
    ``"nvidia"`` (None when the chip is unknown).  ``even_expert_split`` is True when the engine
places routed experts statically and needs them to split evenly over the EP group
(``engines.toml [expert_placement]``; None: no row).  ``roles`` maps a role name to its
    :class:`RoleFacts` (empty when the plan has no roles).
    """

    arch: Any | None = None
    arch_source: str = ""
    checkpoint: Any | None = None
    chip: Any | None = None
    system: Any | None = None
    quant: str | None = None
    quant_span: Span | None = None
    quant_origin: str = ""
    kv_dtype: str = "bf16"
    #: the KV-cache dtype the engine's servers run (:meth:`sncc.engines.base.EngineAdapter.kv_dtype_run`):
    #: the plan's ``kv_dtype`` unless the engine ignores it; what memory (:mod:`sncc.capacity`) and the
    #: simulator size the KV pool with; ``kv_dtype_run_note`` says why when they differ
    kv_dtype_run: str = "bf16"
    kv_dtype_run_note: str = ""
    #: the KV connectors the plan's engine release offers for its roles, split into those sncc
    #: builds and those it has no launch facts for (:meth:`sncc.engines.base.EngineAdapter.connector_offer`,
    #: a :class:`~sncc.engines.base.ConnectorOffer`); None for an engine sncc has no adapter for
    kv_connector_offer: Any | None = None
    #: ``{option: roles}`` for each ``optimize`` option the plan turns on (``micro_batch >= 2``,
    #: ``superkernel_layers > 0``) that its engine writes per role (:meth:`sncc.engines.base.EngineAdapter.option_roles`):
    #: the plan's roles whose launch files carry it, ``()`` when none does (then the build writes it
    #: nowhere, SN4015 says so and the simulator credits nothing).  An option absent here has no per-role rule.
    optimize_roles: dict[str, tuple[str, ...]] = field(default_factory=dict)
    max_model_len: int = 0
    max_model_len_span: Span | None = None
    max_model_len_note: str = ""
    #: where max_model_len comes from: "plan" (written), "workload" (sncc's default: max input +
    #: max output) or "engine-default" (`max_model_len = auto`: what the engine derives from config.json)
    max_model_len_origin: str = "workload"
    max_tokens: int = 0
    #: requests of one run (:mod:`sncc.facts.workload`): ``workload.requests`` when written, else
    #: the trace's row count (one request per row; ``requests_note`` then says so), else the default 1000
    requests: int = 1000
    requests_note: str = ""
    #: the workload trace's rows ``(input_len, output_len, arrival_s or None)``, None without a
    #: readable trace; ``trace_error`` the :class:`sncc.workload.trace.TraceError` of an unreadable one
    trace: tuple | None = None
    trace_error: Any | None = None
    served_name: str = ""
    #: what the engine loads (``vllm serve MODEL``, the benchmark's ``--tokenizer``): ``weights``
    #: when the plan gives it, else the model name as written when it is a Hugging Face repository
    #: id (``org/name``), else the catalog model's repository (its first ``org/name`` alias), else
    #: the name as written; ``model_ref_note`` says which (:func:`sncc.facts.catalog_facts.model_ref`)
    model_ref: str = ""
    model_ref_note: str = ""
    #: the checkpoint dtype of the catalog repository ``model_ref`` names when sncc chose it (no
    #: ``weights``), else None (:func:`sncc.facts.catalog_facts.catalog_repo_dtype`)
    model_ref_dtype: str | None = None
    #: the model's code must run in the engine (``--trust-remote-code``): the catalog entry of the
    #: plan's model id says so with its source (:attr:`sncc.catalog.ModelArch.trust_remote_code`)
    trust_remote_code: bool = False
    devices_available: int | None = None
    devices_span: Span | None = None
    #: the hardware's `nodes`/`devices` is already in error (more than the system holds, or more
    #: devices than the nodes hold): checks that compare the roles with it say nothing more
    devices_in_error: bool = False
    devices_per_node: int | None = None
    vendor: str | None = None
    even_expert_split: bool | None = None
    #: the engine release the plan is checked and built for: ``engine.version`` as written, else the
    #: adapter's default pin (:meth:`sncc.engines.base.EngineAdapter.choose`); None for an engine
    #: sncc has no adapter for.  Every release check reads this, never ``plan.engine.version``.
    engine_version: str | None = None
    #: ``"plan"`` (written), ``"default"`` (sncc's default pin) or ``""`` (no release)
    engine_version_origin: str = ""
    #: where the release comes from: the ``version`` value, else the ``engine "<kind>"`` label
    engine_version_span: Span | None = None
    roles: dict[str, RoleFacts] = field(default_factory=dict)
    #: draft checkpoints read from local ``speculative.model`` directories, keyed by the value as written
    draft_checkpoints: dict[str, Any] = field(default_factory=dict)
    #: bytes per parameter of each weight group of :func:`sncc.catalog.arch.param_breakdown`
    #: (attention, dense_ffn, shared_experts, routed_experts, router, embedding, lm_head, mtp),
    #: from the checkpoint's quantization_config or the catalog quantization; scale tensors included
    weight_bytes_per_param: dict[str, float] = field(default_factory=dict)
    #: how :attr:`weight_bytes_per_param` was derived (one line per group that differs from the rest)
    weight_bytes_note: str = ""
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: ``{attribute: ((block, field), ...)}``: attributes derived from fields the builder rejected
    #: (:meth:`sncc.plan.model.Node.poison`); a check's read of one is a read of those fields, so
    #: no check judges it (:class:`sncc.plan.model.WatchedFact`, on the attributes in :data:`WATCHED_FACTS`)
    poisoned_from: dict[str, tuple] = field(default_factory=dict)

    @property
    def engine_version_default(self) -> bool:
        """True when :attr:`engine_version` is sncc's default pin (the plan names no release)."""
        return self.engine_version_origin == "default"

    def engine_release_label(self, kind: str) -> str:
        """``"vllm-ascend v0.11.0"``, with ``" (sncc's default pin)"`` when the plan names no release."""
        return f"{kind} {self.engine_version}" + (" (sncc's default pin)" if self.engine_version_default else "")

    @property
    def is_ascend(self) -> bool:
        """True when the plan's devices are Huawei Ascend NPUs."""
        return self.vendor == "ascend"

    @property
    def is_moe(self) -> bool:
        """True when the model has routed experts."""
        return bool(self.arch is not None and getattr(self.arch, "is_moe", False))

    @property
    def moe_ep(self) -> bool:
        """True when some role runs an EP dispatch (MoE with expert parallelism over > 1 device)."""
        return any(rf.expert_parallel for rf in self.roles.values())

    def role(self, name: str) -> RoleFacts | None:
        """The :class:`RoleFacts` of role ``name``, or None."""
        return self.roles.get(name)

    def roles_without_prefix_cache(self) -> tuple[str, ...]:
        """The roles that compute prompts (``prefill``, ``serve``: a P/D ``decode`` receives its prompts
        as KV) and run without automatic prefix caching (:attr:`RoleFacts.prefix_caching` off): no
        prompt token of theirs comes from the prefix cache, whatever ``optimize.prefix_cache_hit`` says."""
        return tuple(n for n, rf in self.roles.items()
                     if n in ("prefill", "serve") and isinstance(rf, RoleFacts) and not rf.prefix_caching)


#: attributes of :class:`Facts` that resolution may derive from a rejected (poisoned) field
WATCHED_FACTS = ("quant", "quant_origin", "weight_bytes_per_param", "model_ref")


def _watch_facts() -> None:
    from sncc.plan.model import WatchedFact

    for name in WATCHED_FACTS:
        setattr(Facts, name, WatchedFact(name))


_watch_facts()
