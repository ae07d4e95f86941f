"""The typed plan: what a ``.sn`` file says, as pydantic models.

Values are plain Python values in canonical units (tokens, bytes, seconds,
fractions).  Provenance is kept beside them: every :class:`Node` knows the
span of each value it was given and the span of its block, and
``node.is_default(field)`` tells whether a value came from the file or from a
default (pydantic's ``model_fields_set``).

Each field declares its *kind* in ``json_schema_extra`` (see :data:`KINDS`);
:mod:`sncc.plan.build` uses it to interpret literals and units, and the
language server uses the descriptions for hover.

Annotations are evaluated when each class is defined (no ``from __future__ import
annotations``): pydantic would otherwise compile and evaluate every field's annotation
string, inherited ones again in each subclass, on every ``sncc`` start (issue 14 item 16).
"""

from contextvars import ContextVar
from typing import Annotated, Any, ClassVar, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from sncc.source import Span

#: Largest token or sequence count an engine accepts: vLLM's v1 ``InputBatch``
#: (vllm/v1/worker/gpu_input_batch.py) holds per-request token ids and counts
#: (``num_tokens``, ``num_prompt_tokens``, ``token_ids_cpu``) as int32 arrays, so a
#: ``max_model_len``, ``max_num_batched_tokens``, ``max_num_seqs`` or draft-token count above
#: 2^31 - 1 cannot be represented by the engine.  Larger values are SN2009.
INT32_MAX = 2**31 - 1

#: Value kinds a field can declare (``json_schema_extra={"kind": ...}``).
KINDS = (
    "count", "int", "tokens", "tokens-or-off", "duration", "bytes", "bandwidth",
    "ratio", "float", "bool", "string", "enum", "secret", "int-list", "env-map", "version",
    "duration-or-none", "address-list", "tokens-or-auto",
)


def F(default: Any = ..., kind: str = "string", doc: str = "", **kw: Any) -> Any:
    """Declare a plan field with its kind, documentation and default."""
    extra = {"kind": kind}
    if "choices" in kw:
        extra["choices"] = list(kw.pop("choices"))
    if "unit" in kw:
        extra["unit"] = kw.pop("unit")
    if "max_chars" in kw:
        extra["max_chars"] = kw.pop("max_chars")
    return Field(default, description=doc, json_schema_extra=extra, **kw)


class EnvRef(BaseModel):
    """A reference to an environment variable, written ``env("NAME")``.

    Only the name is ever stored or emitted, never the value.
    """

    model_config = ConfigDict(frozen=True)
    name: str


#: reads of poisoned fields (see :meth:`Node.poison`) are appended here while a check runs
#: (:func:`run_unpoisoned`); None outside
POISON_READS: ContextVar[Optional[list]] = ContextVar("sncc_poison_reads", default=None)


class Node(BaseModel):
    """Base of every plan block: keeps the spans of the block and its values.

    A *poisoned* field (:meth:`poison`) is one the file wrote but the builder rejected (a
    value out of range, of the wrong kind, or a misspelt or engine-spelt key that names it):
    it still reads as its default, but every read is recorded while a check runs, so that
    :func:`run_unpoisoned` drops what a check concluded from a default the user never meant
    (rustc's error recovery: no cascade of errors from one rejected value).
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=False)

    #: field that receives the block's label (``model "deepseek-r1" {}``)
    label_field: ClassVar[Optional[str]] = None

    _block_span: Optional[Span] = PrivateAttr(default=None)
    _name_span: Optional[Span] = PrivateAttr(default=None)
    _value_spans: dict = PrivateAttr(default_factory=dict)
    _value_texts: dict = PrivateAttr(default_factory=dict)
    _key_spans: dict = PrivateAttr(default_factory=dict)
    _invalid: frozenset = PrivateAttr(default=frozenset())
    _poisoned: dict = PrivateAttr(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        # reached only for names missing from the instance: a poisoned field's default lives
        # in `_poisoned`, away from __dict__, so that its reads can be seen
        try:
            private = object.__getattribute__(self, "__pydantic_private__") or {}
        except AttributeError:
            private = {}
        poisoned = private.get("_poisoned") or {}
        if name in poisoned:
            reads = POISON_READS.get()
            if reads is not None:
                reads.append((type(self).__name__, name))
            return poisoned[name]
        return super().__getattr__(name)

    def poison(self, field: str) -> None:
        """Mark ``field`` (left at its default after a rejected value) as poisoned."""
        if field in self.__dict__ and field not in self.model_fields_set:
            self._poisoned = {**self._poisoned, field: self.__dict__.pop(field)}

    _env_spans: dict = PrivateAttr(default_factory=dict)
    _env_key_spans: dict = PrivateAttr(default_factory=dict)

    def env_span(self, name: str) -> Optional[Span]:
        """Span of an ``env { NAME = ... }`` value of this block (plan or role), or None."""
        return self._env_spans.get(name)

    def env_key_span(self, name: str) -> Optional[Span]:
        """Span of the variable name ``NAME`` in this block's ``env { NAME = ... }``, else its
        value's span (:meth:`env_span`), or None."""
        return self._env_key_spans.get(name) or self._env_spans.get(name)

    def span_of(self, field: str) -> Optional[Span]:
        """Span of ``field``'s value in the file, or of the block when the value is a default."""
        return self._value_spans.get(field) or self._name_span or self._block_span

    def value_span(self, field: str) -> Optional[Span]:
        """Span of ``field``'s value as written, or None (no fallback to the block: :meth:`span_of`)."""
        return self._value_spans.get(field)

    def value_text(self, field: str) -> Optional[str]:
        """``field``'s number as the file wrote it (``0.5``, ``50%``, ``0.50``), or None (not
        written, or not a number): what a diagnostic quoting the value echoes."""
        return self._value_texts.get(field)

    def ratio_text(self, field: str) -> str:
        """A ratio field's value for a message: as written (:meth:`value_text`), else the
        value held (``0.9``)."""
        text = self.value_text(field)
        return text if text is not None else f"{getattr(self, field):g}"

    def key_span(self, field: str) -> Optional[Span]:
        """Span of the key ``field`` as written, or None."""
        return self._key_spans.get(field)

    @property
    def block_span(self) -> Optional[Span]:
        """Span of the whole block (None for a defaulted block)."""
        return self._block_span

    @property
    def name_span(self) -> Optional[Span]:
        """Span of the block's name (``prefill``)."""
        return self._name_span

    def is_default(self, field: str) -> bool:
        """True when ``field`` was not written in the file."""
        return field not in self.model_fields_set

    def written(self, field: str) -> bool:
        """True when the file wrote ``field``, even if its value was invalid and
        dropped (checks use this to avoid reporting a missing value twice)."""
        return field in self.model_fields_set or field in self._invalid

    def origin(self, field: str) -> str:
        """``"file"`` or ``"default"``."""
        return "default" if self.is_default(field) else "file"


class Model(Node):
    """``model "id" { ... }``: which model is served, from which weights."""

    label_field: ClassVar[Optional[str]] = "id"
    id: str = F(kind="string", doc="catalog id or alias of the model (e.g. `deepseek-r1`), or any name when `weights` holds a config.json")
    weights: Optional[str] = F(None, doc="directory of the checkpoint; its config.json (and quant_model_description.json) is read when present")
    quant: Optional[str] = F(None, kind="enum", doc="weight quantization of the checkpoint as served",
                             choices=("bf16", "fp16", "w8a8", "w8a16", "w4a8", "w4a16", "w4a4", "fp8", "mxfp8", "mxfp4", "fp4", "int4-moe"))
    served_name: Optional[str] = F(None, doc="name the server registers (`--served-model-name`); defaults to the model id")
    max_model_len: Optional[Literal["auto"] | Annotated[int, Field(ge=1, le=INT32_MAX)]] = F(None, kind="tokens-or-auto", doc="longest sequence (input + output); defaults to the workload's max input + max output; `auto` = the engine's own default, derived from config.json (max_position_embeddings × rope scaling)")
    rope_scaling: Optional[float] = F(None, kind="float", doc="rope-scaling (YaRN) factor the engine applies (`--hf-overrides` `rope_parameters.factor`); positions become max_position_embeddings × factor", gt=0)
    trust_remote_code: Optional[bool] = F(None, kind="bool", doc="run the checkpoint's own Python code (`--trust-remote-code`); default: the catalog entry says (Kimi K2's tokenizer needs it, per vLLM's recipe)")


class Hardware(Node):
    """``hardware { ... }``: the system, how much of it, and the CANN release."""

    system: Optional[str] = F(None, doc="catalog id of the system, e.g. `atlas-900-a3-superpod`")
    chip: Optional[str] = F(None, doc="catalog id of the device; defaults to the system's chip")
    nodes: Optional[int] = F(None, kind="count", doc="number of nodes used", ge=1)
    devices: Optional[int] = F(None, kind="count", doc="number of devices used (instead of nodes)", ge=1)
    cann: Optional[str] = F(None, kind="version", doc="CANN toolkit release, e.g. `8.2.RC1`")
    memory_utilization: float = F(0.9, kind="ratio", doc="fraction of HBM the engine may use (`gpu_memory_utilization`; vllm-ascend docs use 0.9)", gt=0, le=1)
    storage_bandwidth: Optional[float] = F(None, kind="bandwidth", doc="read bandwidth of the checkpoint's storage per node (e.g. `2GB/s`); default: a conservative 1 GB/s (sncc/catalog/data/startup.toml, with its source)", gt=0)


class Engine(Node):
    """``engine "omni-infer" { ... }``: the serving engine and its release."""

    label_field: ClassVar[Optional[str]] = "kind"
    kind: str = F(kind="enum", doc="serving engine", choices=("omni-infer", "vllm-ascend", "vllm"))
    version: Optional[str] = F(None, kind="version", doc="engine release, e.g. `v0.11.0` for vllm-ascend")
    ready_timeout: Optional[float] = F(None, kind="duration", doc="how long the orchestrator or health check waits for the server to become ready (e.g. `30min`); default: vLLM's VLLM_ENGINE_READY_TIMEOUT_S (600 s)", gt=0)


class Eplb(Node):
    """``eplb { ... }``: redundant experts and expert-load balancing, for every engine that has them.

    Written at plan level (the default of every role) or inside a role (overrides key by key).
    ``redundant_experts`` counts extra routed-expert slots per *instance* (vLLM's
    ``--eplb-config`` ``num_redundant_experts``): 256 routed + 32 redundant = 288 slots over 144
    devices is 2 per device.  Each engine adapter writes its release's own keys.
    """

    redundant_experts: int = F(0, kind="int", doc="extra routed-expert slots per instance (vLLM `num_redundant_experts`)", ge=0)
    dynamic: bool = F(False, kind="bool", doc="rebalance expert placement at run time (vLLM `--enable-eplb`, vllm-ascend `dynamic_eplb`, Omni-Infer `enable_dynamic`)")
    interval: Optional[int] = F(None, kind="count", doc="engine steps between rebalances (vLLM `step_interval`)", ge=1)
    window: Optional[int] = F(None, kind="count", doc="engine steps of expert load recorded per rebalance (vLLM `window_size`)", ge=1)


class Speculative(Node):
    """``speculative { ... }``: speculative decoding (MTP, EAGLE, n-gram).

    Written at plan level (every role) or inside a role (overrides key by key);
    ``method = none`` in a role turns a plan-level setting off there.
    """

    method: str = F("mtp", kind="enum", doc="speculative method (`draft_model` = a separate small model; `ngram`, `suffix` = lookup on the host, no draft model; `none` = off, in a role)", choices=("mtp", "eagle", "eagle3", "dflash", "ngram", "suffix", "draft_model", "none"))
    draft_tokens: int = F(1, kind="count", doc="draft tokens proposed per step (`num_speculative_tokens`)", ge=1, le=INT32_MAX)
    model: Optional[str] = F(None, kind="string", doc="draft model path or Hugging Face id (method draft_model / eagle / eagle3 / dflash); a local directory's config.json is read (positions, rope scaling)")
    acceptance: Optional[float] = F(None, kind="ratio", doc="mean acceptance rate of draft tokens (required: measure it)", ge=0, le=1)
    draft_cost: Optional[float] = F(None, kind="ratio", doc="time of one draft token as a fraction of one target decode step; default: the simulator's MTP/EAGLE layer cost, 0 for n-gram", ge=0, le=1)
    prompt_lookup_max: Optional[int] = F(None, kind="count", doc="`method = ngram`: the longest n-gram matched against the prompt (vLLM `prompt_lookup_max`); default: the engine's (vLLM: 5, or `prompt_lookup_min`)", ge=1, le=INT32_MAX)
    prompt_lookup_min: Optional[int] = F(None, kind="count", doc="`method = ngram`: the shortest n-gram matched against the prompt (vLLM `prompt_lookup_min`); default: the engine's (vLLM: 5, or `prompt_lookup_max`)", ge=1, le=INT32_MAX)

    @field_validator("prompt_lookup_min")
    @classmethod
    def _lookup_window(cls, v: Optional[int], info) -> Optional[int]:
        top = info.data.get("prompt_lookup_max")
        if v is not None and top is not None and v > top:
            raise ValueError(f"{v} is above `prompt_lookup_max` ({top}): vLLM refuses an n-gram window whose "
                             "minimum exceeds its maximum (SpeculativeConfig)")
        return v


class Role(Node):
    """``prefill``/``decode``/``serve { ... }``: one role's instances and parallelism.

    One instance is ``tp × dp × pp`` devices: attention is tensor-parallel over ``tp``
    devices and replicated ``dp`` times (vLLM data-parallel attention).  The seeds' ``ep = N``
    means ``dp = N`` with expert parallelism on.  With expert parallelism (the default for a
    MoE model when ``tp × dp > 1``) routed experts spread over all ``tp × dp`` devices; with
    ``expert_parallel = false`` they are tensor-sharded over the same ranks (vLLM's default
    without ``--enable-expert-parallel``).
    """

    instances: int = F(1, kind="count", doc="number of engine instances of this role", ge=1)
    devices: int = F(kind="count", doc="devices per instance", ge=1)
    tp: int = F(1, kind="count", doc="tensor-parallel size of attention", ge=1)
    dp: int = F(1, kind="count", doc="data-parallel attention replicas per instance (vLLM `--data-parallel-size`)", ge=1)
    ep: int = F(1, kind="count", doc="the seeds' form: `ep = N` is `dp = N` with expert parallelism on; experts spread over tp × ep devices", ge=1)
    expert_parallel: Optional[bool] = F(None, kind="bool", doc="routed experts placed by expert parallelism over tp × dp devices (vLLM `--enable-expert-parallel`); default: on for MoE models when tp × dp > 1")
    pp: int = F(1, kind="count", doc="pipeline-parallel stages", ge=1)
    max_num_batched_tokens: int = F(8192, kind="tokens", doc="token budget of one engine step per data-parallel rank (`max_num_batched_tokens`); sncc default 8k", ge=1, le=INT32_MAX)
    chunked_prefill: Optional[int] = F(None, kind="tokens-or-off", doc="chunked-prefill chunk size in tokens, or `off` (the default)", ge=1, le=INT32_MAX)
    prefix_caching: Optional[bool] = F(None, kind="bool", doc="automatic prefix caching on (true) or off (false): vLLM `--enable-prefix-caching` / `--no-enable-prefix-caching`; default: not written, the engine's default (on in vLLM V1)")
    max_num_seqs: int = F(256, kind="count", doc="sequences per attention group (per DP rank) in one step (`max_num_seqs`; vLLM default 256)", ge=1, le=INT32_MAX)
    memory_utilization: Optional[float] = F(None, kind="ratio", doc="overrides hardware.memory_utilization for this role", gt=0, le=1)
    graph_mode: Optional[bool] = F(None, kind="bool", doc="run captured graphs (true) or eager (false); default: graph for decode and serve, eager for prefill")
    scheduler: str = F("default", kind="enum", doc="`ascend` = vllm-ascend's Ascend scheduler (`additional_config.ascend_scheduler_config`, v0.9.1 to v0.11.x), which runs without chunked prefill", choices=("default", "ascend"))
    speculative: Optional[Speculative] = None
    eplb: Optional[Eplb] = None
    env: dict[str, str] = Field(
        default_factory=dict,
        description="environment of this role's servers, merged over the plan's `env` (the role's value wins)",
        json_schema_extra={"kind": "env-map"},
    )

    @property
    def dp_size(self) -> int:
        """Data-parallel attention replicas as written: ``ep`` when the seeds' form is used, else ``dp``."""
        return self.ep if not self.is_default("ep") else self.dp


class KVCache(Node):
    """``kv_cache { ... }``: KV-cache dtype and block size."""

    dtype: str = F("auto", kind="enum", doc="KV-cache element type; `auto` follows the model's activations (bf16)",
                   choices=("auto", "bf16", "fp16", "int8", "fp8"))
    block_size: int = F(128, kind="tokens", doc="tokens per KV block (vllm-ascend default 128)", ge=1, le=INT32_MAX)


class OmniPlacement(Node):
    """``omni_placement { ... }``: Omni-Infer's MoE expert placement and load balancing."""

    redundant_experts: int = F(0, kind="int", doc="redundant expert copies per device", ge=0)
    adjust_interval: Optional[int] = F(None, kind="count", doc="steps between dynamic placement adjustments", ge=1)


class OmniAttn(Node):
    """``omni_attn { ... }``: Omni-Infer's layer-wise KV sparsification."""

    compress_ratio: float = F(0.5, kind="ratio", doc="fraction of layers whose KV reads are compressed", ge=0, le=1)
    search: str = F("evolutionary", kind="enum", doc="how the compressed-layer pattern is searched", choices=("evolutionary", "greedy", "manual"))


class OmniProxy(Node):
    """``omni_proxy { ... }``: Omni-Infer's global proxy scheduling."""

    policy: str = F("OAS", kind="enum", doc="scheduling policy", choices=("OAS", "pd_score_balance", "prefill_score_balance", "weighted_least_active", "length_balance", "round_robin"))
    apc_aware: bool = F(False, kind="bool", doc="route by automatic-prefix-cache match")


class Optimize(Node):
    """``optimize { ... }``: engine optimisations."""

    micro_batch: int = F(1, kind="count", doc="micro-batches per step (2 = two-micro-batch overlap; Omni-Infer enable_prefill_micro_batch, vllm-ascend VLLM_ASCEND_ENABLE_DBO up to v0.11)", ge=1, le=2)
    superkernel_layers: int = F(0, kind="int", doc="layers fused into one SuperKernel (0 = off)", ge=0)
    graph_cache: Optional[str] = F(None, doc="TorchAir graph compile cache directory")
    prefix_cache_hit: float = F(0.0, kind="ratio", doc="expected fraction of prompt tokens served from the prefix cache; with `workload { turns > 1 }` the chance that a follow-up turn finds its conversation's previous context still cached", ge=0, le=1)
    omni_placement: Optional[OmniPlacement] = None
    omni_attn: Optional[OmniAttn] = None
    omni_proxy: Optional[OmniProxy] = None


class Graph(Node):
    """``graph { ... }``: graph capture of the decode (and serve) roles."""

    mode: Optional[str] = F(None, kind="enum", doc="graph mode; default: the engine release's default (vllm-ascend ACL graph from v0.9.0rc1)",
                            choices=("aclgraph", "torchair", "npugraph_ex", "xlite", "cudagraph"))
    cudagraph_mode: Optional[str] = F(None, kind="enum", doc="vLLM `compilation_config.cudagraph_mode`",
                                      choices=("piecewise", "full", "full_decode_only", "full_and_piecewise"))
    capture_sizes: Optional[list[int]] = F(None, kind="int-list", doc="batch sizes (tokens per DP rank) captured as graphs (`cudagraph_capture_sizes`); default: 1, 2, 4 and multiples of 8")
    decode_gears: Optional[list[int]] = F(None, kind="int-list", doc="Omni-Infer `decode_gear_list`: at most 6 gears, the largest max_num_seqs × (1 + draft_tokens)")


    @field_validator("capture_sizes", "decode_gears")
    @classmethod
    def _batch_sizes(cls, v: Optional[list[int]]) -> Optional[list[int]]:
        """Batch sizes are positive and distinct (the engines' capture lists are sets:
        vLLM's ``cudagraph_capture_sizes`` schema is ``uniqueItems`` with items >= 1)."""
        if v is None:
            return v
        seen: set[int] = set()
        for n in v:
            if n < 1:
                raise ValueError(f"batch sizes are at least 1, found {n}")
            if n in seen:
                raise ValueError(f"{n} is listed twice; each batch size is captured once")
            seen.add(n)
        return v


class Software(Node):
    """``software { ... }``: the Python packages installed beside the engine."""

    vllm: Optional[str] = F(None, kind="version", doc="vLLM version, e.g. `0.11.0`")
    torch: Optional[str] = F(None, kind="version", doc="torch version, e.g. `2.7.1`")
    torch_npu: Optional[str] = F(None, kind="version", doc="torch_npu version, e.g. `2.7.1.post1`")
    triton_ascend: Optional[str] = F(None, kind="version", doc="Triton-Ascend version")
    hdk: Optional[str] = F(None, kind="version", doc="Ascend HDK (NPU driver and firmware) version, e.g. `25.5.1`; read from <install_path>/driver/version.info when `install_path` is given")
    nnal: Optional[str] = F(None, kind="version", doc="NNAL (ATB, libatb.so) version, e.g. `9.1.0`; vllm-ascend needs NNAL == CANN")
    install_path: Optional[str] = F(None, doc="Ascend install root of the target machine (e.g. `/usr/local/Ascend`): its version files (driver/version.info, ascend-toolkit/latest/version.cfg, nnal/atb/latest/version.info) are read when present")


class KVTransfer(Node):
    """``kv_transfer { ... }``: the KV-cache connector between prefill and decode."""

    connector: Optional[str] = F(None, kind="enum", doc="KV connector; default: the engine's (Mooncake on vllm-ascend); `none` = no kv_transfer_config",
                                 choices=("mooncake", "llmdatadist", "nixl", "pynccl", "p2p_nccl", "lmcache", "none"))
    use_ascend_direct: Optional[bool] = F(None, kind="bool", doc="Mooncake `kv_connector_extra_config.use_ascend_direct` (default true on Ascend)")
    prefill_tp: Optional[int] = F(None, kind="count", doc="`kv_connector_extra_config.prefill.tp_size`; default: prefill.tp", ge=1)
    prefill_dp: Optional[int] = F(None, kind="count", doc="`kv_connector_extra_config.prefill.dp_size`; default: prefill.ep", ge=1)
    decode_tp: Optional[int] = F(None, kind="count", doc="`kv_connector_extra_config.decode.tp_size`; default: decode.tp", ge=1)
    decode_dp: Optional[int] = F(None, kind="count", doc="`kv_connector_extra_config.decode.dp_size`; default: decode.ep", ge=1)


#: the largest TCP port: the port fields are 16 bits (RFC 9293 §3.1, "Source Port: 16 bits")
PORT_MAX = 65535


class Hosts(Node):
    """``hosts { ... }``: each node's address and network interface, and the port bases.

    Node *k* of the deployment (in the order lowering assigns nodes) is ``addresses[k]``.
    Without ``hosts`` the launch scripts read ``NODE_<k>_IP`` and ``SNCC_NIC`` and stop with a
    message when they are unset.
    """

    addresses: Optional[list] = F(None, kind="address-list", doc='node addresses in deployment order; each a string or `env("NAME")`')
    nic: Optional[str] = F(None, doc="network interface of the nodes (HCCL_SOCKET_IFNAME, GLOO_SOCKET_IFNAME, TP_SOCKET_IFNAME)",
                           max_chars=(15, "a network interface name is at most 15 characters "
                                          "(Linux IFNAMSIZ, include/uapi/linux/if.h: 16 with the NUL)"))
    port: int = F(8000, kind="count", doc="first API port on a node; each further server on the node takes the next", ge=1, le=PORT_MAX)
    dp_rpc_port: int = F(13345, kind="count", doc="`--data-parallel-rpc-port` base", ge=1, le=PORT_MAX)
    kv_port: int = F(20001, kind="count", doc="KV-transfer port base (the connector's port rules apply)", ge=1, le=PORT_MAX)
    proxy_port: int = F(9000, kind="count", doc="port of the P/D proxy or router", ge=1, le=PORT_MAX)


class Proxy(Node):
    """``proxy { ... }``: the load-balancing proxy between the gateway and the engines; `none` = unbounded."""

    connect_timeout: Optional[float] = F(None, kind="duration-or-none", doc="connect timeout; `none` = unbounded", ge=0)
    read_timeout: Optional[float] = F(None, kind="duration-or-none", doc="read-inactivity timeout: longest silence tolerated from an engine; `none` = unbounded", ge=0)
    write_timeout: Optional[float] = F(None, kind="duration-or-none", doc="write timeout; `none` = unbounded", ge=0)
    pool_timeout: Optional[float] = F(None, kind="duration-or-none", doc="wait for a free connection; `none` = unbounded", ge=0)


class LengthDist(Node):
    """``input``/``output { ... }``: a length distribution in tokens."""

    mean: int = F(kind="tokens", doc="mean length", ge=1, le=INT32_MAX)
    max: int = F(kind="tokens", doc="maximum length", ge=1, le=INT32_MAX)
    min: int = F(1, kind="tokens", doc="minimum length", ge=1, le=INT32_MAX)
    dist: str = F("lognormal", kind="enum", doc="distribution shape", choices=("lognormal", "uniform", "fixed"))


class Workload(Node):
    """``workload { ... }``: the requests the plan must serve."""

    requests: int = F(1000, kind="count", doc="requests in one simulated run (at most 1M: about 40 s of simulation here); with a `trace`, its row count by default", ge=1, le=1_000_000)
    concurrency: Optional[int] = F(None, kind="count", doc="closed-loop clients (each sends its next request when the previous completes); with `rate` too, at most this many requests in flight while new ones start at the rate (vllm bench serve `--max-concurrency` with `--request-rate`); with neither (and no trace arrival times) the simulator runs min(requests, 64) clients", ge=1)
    rate: Optional[float] = F(None, kind="float", doc="open-loop arrival rate in requests per second (Poisson unless `burstiness` != 1); with `concurrency`, requests beyond that many in flight wait at the client", gt=0)
    burstiness: float = F(1.0, kind="float", doc="shape of the Gamma inter-arrival distribution at `rate`, as vLLM's benchmark `--burstiness`: 1 = Poisson, < 1 burstier, > 1 more uniform (coefficient of variation 1/sqrt(burstiness); mean gap 1/rate)", gt=0)
    trace: Optional[str] = F(None, doc="CSV trace, one request per row: input_len, output_len[, arrival_s]; path relative to the plan file; replaces the sampled lengths (and arrivals when given); `requests` defaults to its row count (another value is honoured, SN5081); `input`/`output` still bound the rows (`max`) and shape bench.sh (SN5082)")
    turns: int = F(1, kind="count", doc="turns per conversation: each follow-up prompt holds the previous turns' context plus a new message", ge=1, le=1000)
    think_time: float = F(0.0, kind="duration", doc="user think time between a reply and the next turn of a conversation", ge=0)
    input: LengthDist
    output: LengthDist


class SloTarget(BaseModel):
    """One ``slo`` comparison, e.g. ``ttft < 2s`` (target in seconds, QPM or tokens/s)."""

    metric: str
    stat: str = "mean"
    op: str
    target: float
    span: Optional[Span] = None
    metric_span: Optional[Span] = None

    @property
    def label(self) -> str:
        """``ttft`` or ``ttft.p99``."""
        return self.metric if self.stat == "mean" else f"{self.metric}.{self.stat}"


#: SLO metrics: name → (kind of target, description)
SLO_METRICS = {
    "ttft": ("duration", "time to first token as the client sees it (request sent to first token: what vllm bench serve measures)"),
    "engine_ttft": ("duration", "time to first token from the request's dispatch to an engine instance, the queue in front "
                    "of it excluded (a server-side dashboard's figure, e.g. Omni-Infer's OmniProxy metrics)"),
    "tpot": ("duration", "time per output token after the first"),
    "e2e": ("duration", "end-to-end request latency"),
    "qpm": ("float", "completed requests per minute"),
    "output_tokens_per_s": ("float", "output tokens per second, whole plan"),
    "tokens_per_s_per_user": ("float", "output tokens per second seen by one request (1/TPOT)"),
}
SLO_STATS = ("mean", "p50", "p90", "p99")
#: the unit each latency SLO is usually written in, for hints on a bare number (`tpot < 50`
#: means 50 ms: TPOTs are tens of milliseconds, TTFTs and end-to-end latencies seconds)
SLO_UNITS = {"ttft": "s", "engine_ttft": "s", "tpot": "ms", "e2e": "s"}
#: a bare target at or above this counts milliseconds, not :data:`SLO_UNITS`' unit: a first token
#: 1000 s (17 minutes) after the request is never an SLO, while 1000 ms is a common one (1 s)
SLO_MS_FROM = {"ttft": 1000, "engine_ttft": 1000}
#: the time unit each rate SLO is counted per (its target is a bare number: `qpm >= 10`)
SLO_RATE_PER = {"qpm": "minute", "output_tokens_per_s": "second", "tokens_per_s_per_user": "second"}


class Retry(Node):
    """``retry { ... }`` inside ``gateway``."""

    max_attempts: int = F(3, kind="count", doc="attempts per request", ge=1)
    backoff_factor: float = F(2.0, kind="float", doc="exponential backoff factor", ge=0)


class Gateway(Node):
    """``gateway { ... }``: the API gateway in front of the deployment."""

    base_url: Optional[str] = F(None, doc="API base URL clients call")
    api_key: Optional[EnvRef] = F(None, kind="secret", doc='API key, only as `env("NAME")`')
    model_id: Optional[str] = F(None, doc="model name clients send; must equal the served model name")
    timeout: Optional[float] = F(None, kind="duration", doc="request timeout of the gateway", gt=0)
    max_tokens: Optional[int] = F(None, kind="tokens", doc="client max_tokens; defaults to the workload's max output", ge=1, le=INT32_MAX)
    temperature: float = F(0.7, kind="float", doc="sampling temperature", ge=0)
    top_p: float = F(0.95, kind="ratio", doc="nucleus sampling threshold", gt=0, le=1)
    stream: bool = F(True, kind="bool", doc="stream tokens")
    local_endpoint: Optional[str] = F(None, doc="URL of the local inference server (settings.json local_inference.endpoint)")
    retry: Optional[Retry] = None

    @field_validator("base_url", "local_endpoint")
    @classmethod
    def _http_url(cls, v: Optional[str]) -> Optional[str]:
        """An ``http://`` or ``https://`` URL with a host (settings.json's schema pattern
        ``^https?://``; a URL without a scheme is read as a relative path by HTTP clients)."""
        if v is None:
            return v
        scheme, sep, rest = v.partition("://")
        if not sep or scheme.lower() not in ("http", "https"):
            raise ValueError(f"`{v}` is not an http(s) URL: write it with its scheme, e.g. `https://{rest if sep else v}`")
        if any(c.isspace() for c in v):
            raise ValueError(f"`{v}` holds whitespace, which no URL does (RFC 3986): write the host without "
                             "spaces, and a space in a path as `%20`")
        if not rest.split("/", 1)[0]:
            raise ValueError(f"`{v}` names no host: write e.g. `{scheme}://localhost:8000/v1`")
        return v


class Search(Node):
    """``search { ... }``: the space ``sncc search`` explores (issue 12).

    Lists are whole-number lists (``tp = [1, 2, 4, 8]``); an omitted list takes the default an
    engineer would try (:mod:`sncc.search.space`): powers of two that divide the attention heads
    (and the routed experts, with expert parallelism), instance counts up to the device budget and
    the decode batch grid.  The plan's ``slo`` and ``workload`` are the targets.  Ignored by
    ``check``, ``build`` and ``simulate``.
    """

    devices: Optional[int] = F(None, kind="count", doc="device budget of a candidate; default: the plan's hardware (nodes × devices per node, or `hardware.devices`)", ge=1)
    fixed: bool = F(False, kind="bool", doc="every candidate uses exactly `devices` (a fixed count) instead of at most `devices` (a budget)")
    mode: str = F("both", kind="enum", doc="deployment modes to try: aggregated (`serve`), disaggregated (`prefill` + `decode`) or both", choices=("both", "aggregated", "disaggregated"))
    tp: Optional[list[int]] = F(None, kind="int-list", doc="tensor-parallel sizes to try (every role); default: powers of two dividing the attention heads, up to a node")
    dp: Optional[list[int]] = F(None, kind="int-list", doc="data-parallel attention replicas per instance to try; default: powers of two up to the budget")
    pp: Optional[list[int]] = F(None, kind="int-list", doc="pipeline stages to try; default: [1]")
    expert_parallel: str = F("auto", kind="enum", doc="MoE expert placement to try: `auto` (on when tp × dp > 1, the language's default), `on`, `off` or `both`", choices=("auto", "on", "off", "both"))
    prefill_instances: Optional[list[int]] = F(None, kind="int-list", doc="prefill instance counts to try; default: every count the budget allows")
    decode_instances: Optional[list[int]] = F(None, kind="int-list", doc="decode instance counts to try; default: every count the budget allows")
    serve_instances: Optional[list[int]] = F(None, kind="int-list", doc="aggregated instance counts to try; default: every count the budget allows")
    max_num_seqs: Optional[list[int]] = F(None, kind="int-list", doc="decode (and serve) batch sizes per DP rank to try; default: 1, 2, 4, 8, then steps of 8 to 256 and 384, 512")
    max_num_batched_tokens: Optional[list[int]] = F(None, kind="int-list", doc="token budgets per step and DP rank to try; default: the plan's role value")
    chunked_prefill: Optional[list[int]] = F(None, kind="int-list", doc="chunked-prefill chunk sizes to try; default: the plan's role value")
    speculative: str = F("plan", kind="enum", doc="speculative decoding: as the plan says (`plan`), `off`, or `both` (needs the plan's `speculative` block)", choices=("plan", "off", "both"))
    top: int = F(10, kind="count", doc="candidates re-run in the event simulator (besides the Pareto frontier) and written by `--write`", ge=1, le=1000)


class Plan(Node):
    """``plan "name" { ... }``: one deployment."""

    label_field: ClassVar[Optional[str]] = "name"
    name: str = F(kind="string", doc="plan name")
    model: Model
    hardware: Hardware
    engine: Engine
    prefill: Optional[Role] = None
    decode: Optional[Role] = None
    serve: Optional[Role] = None
    kv_cache: KVCache = Field(default_factory=KVCache)
    optimize: Optional[Optimize] = None
    speculative: Optional[Speculative] = None
    eplb: Optional[Eplb] = None
    graph: Optional[Graph] = None
    software: Optional[Software] = None
    kv_transfer: Optional[KVTransfer] = None
    proxy: Optional[Proxy] = None
    hosts: Optional[Hosts] = None
    workload: Workload
    slo: list[SloTarget] = Field(default_factory=list)
    gateway: Optional[Gateway] = None
    search: Optional[Search] = None
    env: dict[str, str] = Field(
        default_factory=dict,
        description="environment overrides for the runtime (e.g. HCCL_BUFFSIZE)",
        json_schema_extra={"kind": "env-map"},
    )

    _slo_span: Optional[Span] = PrivateAttr(default=None)

    @property
    def disaggregated(self) -> bool:
        """True for a prefill/decode plan, False for an aggregated ``serve`` plan."""
        return self.serve is None

    def roles(self) -> list[tuple[str, Role]]:
        """``[(name, role), ...]`` of the roles present, in prefill, decode, serve order."""
        return [(n, r) for n in ("prefill", "decode", "serve") if (r := getattr(self, n)) is not None]


def run_unpoisoned(check, *args) -> list:
    """The diagnostics of ``check(*args)`` (an iterable of diagnostics), less those it yielded
    after reading a poisoned field (:meth:`Node.poison`) since its previous diagnostic: a
    check that reasons from a default the file tried to change would report a cascade of
    the builder's error (`tensor_parallel_size = 8` read as `tp = 1`: "1 × 1 × 1 = 1")."""
    reads: list = []
    token = POISON_READS.set(reads)
    out = []
    try:
        for d in check(*args):
            if not reads:
                out.append(d)
            reads.clear()
    finally:
        POISON_READS.reset(token)
    return out


class PoisonedFacts:
    """A derived value (a :class:`~sncc.facts.RoleFacts`, say) computed from a poisoned field:
    every attribute read forwards to the value and counts as a read of the poisoned fields it
    came from, so :func:`run_unpoisoned` drops what a check concludes from it."""

    __slots__ = ("_value", "_sources")

    def __init__(self, value: Any, sources: tuple) -> None:
        object.__setattr__(self, "_value", value)
        object.__setattr__(self, "_sources", sources)

    def __getattr__(self, name: str) -> Any:
        reads = POISON_READS.get()
        if reads is not None:
            reads.extend(self._sources)
        return getattr(self._value, name)

    def __repr__(self) -> str:
        return f"PoisonedFacts({self._value!r})"


def watch_reads(fn, *args) -> tuple[Any, tuple]:
    """``(fn(*args), sources)``: the poisoned fields (:meth:`Node.poison`) ``fn`` read, in order,
    as ``(block, field)`` pairs; ``()`` when it read none."""
    reads: list = []
    token = POISON_READS.set(reads)
    try:
        value = fn(*args)
    finally:
        POISON_READS.reset(token)
    return value, tuple(dict.fromkeys(reads))


class WatchedFact:
    """A data descriptor for one attribute of a facts object (:class:`sncc.facts.model.Facts`)
    that may be derived from a poisoned field: the owner keeps ``{attribute: sources}`` in its
    ``poisoned_from`` mapping, and a read of a listed attribute while a check runs counts as a
    read of those sources, so :func:`run_unpoisoned` drops what a check concludes from it (the
    chip "cannot run `fp8` weights" after `quant = w8a9` was rejected and the model's native
    dtype stood in).  The value lives in the instance's ``__dict__`` under the same name."""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __init__(self, name: str | None = None) -> None:
        if name is not None:
            self.name = name

    def __get__(self, inst, owner=None):
        if inst is None:
            return self
        d = inst.__dict__
        sources = d.get("poisoned_from")
        if sources and self.name in sources:
            reads = POISON_READS.get()
            if reads is not None:
                reads.extend(sources[self.name])
        try:
            return d[self.name]
        except KeyError:
            raise AttributeError(self.name) from None

    def __set__(self, inst, value) -> None:
        inst.__dict__[self.name] = value


def derive_watched(fn, *args) -> Any:
    """``fn(*args)`` (a derivation of facts from the plan), wrapped in :class:`PoisonedFacts`
    when it read a poisoned field; the plain result otherwise (no cost on a clean plan)."""
    value, reads = watch_reads(fn, *args)
    return PoisonedFacts(value, reads) if reads else value
