"""sncc fact catalog: chips, systems, models, quantization formats and software versions.

Every fact lives in a TOML file under ``sncc/catalog/data/`` and carries ``source`` (URLs, see
``../shared/reference/domain-facts.md``) and ``status`` (legend tags of domain-facts §0:
R, R2, I, A, M, C).  This module only parses those files into frozen dataclasses; it holds no
numbers of its own.

Units used throughout (same as the data files):
    bytes (int), bytes/second (decimal, per device, per direction), FLOP/s (dense), seconds.

Each file is read at most once per process (``functools.lru_cache``).  Import cost is kept small:
no pydantic, only the standard library.
"""

from __future__ import annotations

import bisect
import datetime as _dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.resources import files as _files
from types import MappingProxyType
from typing import Any, Mapping



def _toml():
    """The TOML parser module (tomllib, or tomli on Python 3.10), imported on first use:
    a check whose catalog tables come from the disk cache never parses TOML."""
    try:  # Python >= 3.11
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib

__all__ = [
    "CatalogError",
    "STATUS_TAGS",
    "Chip",
    "ChipProjection",
    "Link",
    "System",
    "ModelArch",
    "QuantFormat",
    "EngineRelease",
    "CannTorchNpu",
    "ChipSupport",
    "OmniInferRevision",
    "Feature",
    "chips",
    "chip",
    "systems",
    "system",
    "models",
    "model",
    "quant_formats",
    "quant",
    "kv_dtype_bytes",
    "vllm_ascend_releases",
    "vllm_ascend_release",
    "cann_torch_npu",
    "chip_support",
    "first_supported_release",
    "support_status",
    "omni_infer_revisions",
    "features",
    "feature",
    "parse_version",
    "GraphSupport",
    "CaptureGrid",
    "KVConnector",
    "QuantRouting",
    "graph_support",
    "capture_grid",
    "kv_connectors",
    "kv_connector",
    "default_kv_connector",
    "quant_routing",
    "quant_features",
    "version_in",
]

#: The status tags of domain-facts §0 (R read, R2 secondary, I inferred, A announced, M measured, C conflict).
STATUS_TAGS = frozenset({"R", "R2", "I", "A", "M", "C"})


class CatalogError(Exception):
    """A catalog data file or a checkpoint file is malformed.

    The message is one line naming the file and the offending field; callers show it to users
    as-is (never a traceback).
    """


# --------------------------------------------------------------------------- dataclasses


@dataclass(frozen=True)
class ChipProjection:
    """Announced (status A) figures of a chip that has not shipped with them.

    Units: ``hbm_bytes`` bytes, ``hbm_bandwidth`` and ``interconnect_bandwidth`` B/s,
    ``peak_flops`` FLOP/s dense.  Source: domain-facts §1.3 (Huawei Connect 2025 keynote copies).
    """

    hbm_bytes: int | None
    hbm_bandwidth: float | None
    interconnect_bandwidth: float | None
    peak_flops: Mapping[str, float] = field(hash=False)
    status: str
    source: tuple[str, ...]


@dataclass(frozen=True)
class Chip:
    """One device as the serving engine counts it (Atlas A3: one die of a 910C package).

    Units: ``hbm_bytes`` bytes; ``hbm_bandwidth`` bytes/second (decimal, per device);
    ``peak_flops`` FLOP/s dense, keyed by dtype among bf16, fp16, int8, fp8, mxfp8, mxfp4, fp4
    (a missing key means no native support); ``vector_flops`` FLOP/s or None.
    Absent numbers (None / missing key) are facts no source gave: never invent them.
    Source: ``data/chips.toml`` (domain-facts §1, §7).
    """

    id: str
    name: str
    vendor: str
    generation: str
    device_type: str
    hbm_bytes: int | None
    hbm_bandwidth: float | None
    peak_flops: Mapping[str, float] = field(hash=False)
    vector_flops: float | None
    weight_formats: tuple[str, ...]
    kv_dtypes: tuple[str, ...]
    devices_per_node: int | None
    status: str
    source: tuple[str, ...]
    notes: str = ""
    projected: ChipProjection | None = None

    def flops(self, dtype: str) -> float | None:
        """Dense peak FLOP/s for ``dtype`` (a peak_flops key), or None if not supported/unknown."""
        return self.peak_flops.get(dtype)

    def supports_weight_format(self, quant_id: str) -> bool:
        """True if the chip runs weights in quantization format ``quant_id`` (quant.toml id)."""
        return quant_id in self.weight_formats

    def supports_kv_dtype(self, dtype: str) -> bool:
        """True if the chip supports KV-cache dtype ``dtype`` (bf16, fp16, int8, fp8)."""
        return dtype in self.kv_dtypes


@dataclass(frozen=True)
class Link:
    """One interconnect level of a system.

    ``level``: "die-pair", "node", "supernode" or "scale-out".  ``bandwidth``: bytes/second,
    decimal, per device, per direction.  ``latency``: seconds, or None when unsourced.
    Source: ``data/systems.toml`` (domain-facts §1.1-§1.4).
    """

    level: str
    bandwidth: float
    latency: float | None
    status: str
    source: tuple[str, ...]
    notes: str = ""


@dataclass(frozen=True)
class System:
    """A deployable system (server type or supernode) built from one chip type.

    ``devices_per_node``, ``max_nodes`` (None = unbounded scale-out) and
    ``scale_up_domain_devices`` (devices sharing the fast domain) are device counts.
    ``chip`` is a chip id of :func:`chips`.  Source: ``data/systems.toml``.
    """

    id: str
    name: str
    chip: str
    devices_per_node: int
    max_nodes: int | None
    scale_up_domain_devices: int
    links: tuple[Link, ...]
    status: str
    source: tuple[str, ...]
    notes: str = ""
    alias_of: str | None = None

    def link(self, level: str) -> Link | None:
        """The link at ``level`` ("die-pair", "node", "supernode", "scale-out") or None."""
        for ln in self.links:
            if ln.level == level:
                return ln
        return None

    def chip_spec(self) -> Chip:
        """The :class:`Chip` of this system (looked up in the catalog)."""
        return chip(self.chip)

    @property
    def max_devices(self) -> int | None:
        """devices_per_node × max_nodes, or None when scale-out is unbounded."""
        if self.max_nodes is None:
            return None
        return self.devices_per_node * self.max_nodes


@dataclass(frozen=True)
class ModelArch:
    """Shape of a model, with HuggingFace config.json field names.

    All sizes are element counts, all lengths tokens; ``total_params``/``active_params`` are
    parameter counts as stated by the source (None when read from a checkpoint and unknown).
    ``architecture``: "gqa", "mla", "mla-dsa" (DeepSeek-V3.2) or "dsv4" (DeepSeek-V4 hybrid).
    DSV4 ``compress_ratios`` are summarised as counts of main-model layers:
    ``n_swa_only_layers``, ``n_csa_layers`` (ratio ``csa_compress_ratio``), ``n_hca_layers``
    (ratio ``hca_compress_ratio``).  Source: ``data/models.toml`` (domain-facts §5.1) or a
    checkpoint's config.json (see :mod:`sncc.catalog.hf_config`).
    """

    id: str
    name: str
    architecture: str
    num_hidden_layers: int
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    vocab_size: int
    status: str
    source: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    model_type: str | None = None
    head_dim: int | None = None
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_nope_head_dim: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    o_lora_rank: int | None = None
    o_groups: int | None = None
    intermediate_size: int | None = None
    moe_intermediate_size: int | None = None
    n_routed_experts: int = 0
    n_shared_experts: int = 0
    num_experts_per_tok: int = 0
    first_k_dense_replace: int = 0
    num_hash_layers: int = 0
    n_group: int | None = None
    topk_group: int | None = None
    max_position_embeddings: int | None = None
    #: native context a YaRN factor multiplies when it differs from max_position_embeddings
    #: (Qwen3: 40,960 positions, 32,768 native, 131,072 with YaRN x4); None = the same
    rope_original_max_position: int | None = None
    max_output_tokens: int | None = None
    num_nextn_predict_layers: int = 0
    tie_word_embeddings: bool = False
    partial_rotary_factor: float | None = None
    total_params: float | None = None
    active_params: float | None = None
    checkpoint_dtype: str | None = None
    expert_dtype: str | None = None
    #: the checkpoint ships code vLLM must run (a custom tokenizer or config class): servers and
    #: the benchmark need ``--trust-remote-code`` (the entry's source says where that is stated)
    trust_remote_code: bool = False
    index_n_heads: int | None = None
    index_head_dim: int | None = None
    index_topk: int | None = None
    sliding_window: int | None = None
    hc_mult: int | None = None
    n_swa_only_layers: int = 0
    n_csa_layers: int = 0
    n_hca_layers: int = 0
    csa_compress_ratio: int | None = None
    hca_compress_ratio: int | None = None
    #: hybrid linear attention (Qwen3-Next, Qwen3.5): main-model layers that are full attention and
    #: hold a KV cache; None = every layer (config.json ``layer_types`` / ``full_attention_interval``)
    n_full_attention_layers: int | None = None
    #: Gated DeltaNet state of the linear-attention layers (element counts; None for other models)
    linear_num_key_heads: int | None = None
    linear_num_value_heads: int | None = None
    linear_key_head_dim: int | None = None
    linear_value_head_dim: int | None = None
    linear_conv_kernel_dim: int | None = None
    #: width of the one shared expert of Qwen2-MoE / Qwen3-Next / Qwen3.5 (None: shared experts,
    #: if any, are ``moe_intermediate_size`` wide)
    shared_expert_intermediate_size: int | None = None
    notes: str = ""

    @property
    def is_moe(self) -> bool:
        """True if the model has routed experts (n_routed_experts > 0)."""
        return self.n_routed_experts > 0

    @property
    def is_mla(self) -> bool:
        """True for multi-head latent attention models ("mla", "mla-dsa")."""
        return self.architecture in ("mla", "mla-dsa")

    @property
    def is_dsv4(self) -> bool:
        """True for the DeepSeek-V4 hybrid compressed attention family."""
        return self.architecture == "dsv4"

    @property
    def yarn_base_positions(self) -> int | None:
        """Context [tokens] a YaRN rope-scaling factor multiplies: ``rope_original_max_position``
        when the model card gives one (Qwen3: 32,768), else ``max_position_embeddings``."""
        return self.rope_original_max_position or self.max_position_embeddings

    @property
    def is_hybrid_linear(self) -> bool:
        """True when only some layers are full attention (Qwen3-Next, Qwen3.5 Gated DeltaNet hybrids)."""
        return self.n_full_attention_layers is not None and self.n_full_attention_layers < self.num_hidden_layers

    @property
    def kv_layers(self) -> int:
        """Main-model layers that hold a KV cache: the full-attention layers of a hybrid
        linear-attention model, else every layer."""
        if self.n_full_attention_layers is None:
            return self.num_hidden_layers
        return self.n_full_attention_layers

    @property
    def has_indexer(self) -> bool:
        """True if a DSA lightning indexer is present (V3.2 all layers, V4 CSA layers)."""
        return self.architecture in ("mla-dsa", "dsv4") and bool(self.index_head_dim)

    @property
    def n_dense_layers(self) -> int:
        """Number of main-model layers with a dense FFN (0 for dense-only models means all)."""
        if not self.is_moe:
            return self.num_hidden_layers
        return self.first_k_dense_replace

    @property
    def n_moe_layers(self) -> int:
        """Number of main-model layers with an MoE FFN."""
        return self.num_hidden_layers - self.n_dense_layers if self.is_moe else 0

    @property
    def attn_head_dim(self) -> int:
        """Per-head Q/K dim in elements: head_dim, else qk_nope+qk_rope (MLA), else hidden/heads."""
        if self.head_dim:
            return self.head_dim
        if self.qk_nope_head_dim is not None and self.qk_rope_head_dim is not None:
            return self.qk_nope_head_dim + self.qk_rope_head_dim
        return self.hidden_size // self.num_attention_heads


@dataclass(frozen=True)
class QuantFormat:
    """A weight/activation quantization format (quant.toml).

    ``weight_bits`` bits per weight element; ``weight_bytes`` bytes per weight element (float,
    no scale overhead unless sourced); ``compute_dtype`` is the Chip.peak_flops key the matmuls
    run at; ``vllm_quantization`` the ``--quantization`` value (None = unquantized path);
    ``modelslim_names`` msModelSlim ``model_quant_type`` strings; ``hf_quant_methods`` HF
    ``quantization_config.quant_method`` strings.  Source: ``data/quant.toml``.
    """

    id: str
    name: str
    weight_bits: int
    activation_dtype: str
    weight_bytes: float
    compute_dtype: str
    vllm_quantization: str | None
    modelslim_names: tuple[str, ...]
    hf_quant_methods: tuple[str, ...]
    status: str
    source: tuple[str, ...]
    notes: str = ""
    #: bytes per element of the non-expert linear weights of a MoE model (attention, shared experts,
    #: dense FFN layers) when the format quantizes only the routed experts (W4A8, W4A16, INT4-MoE);
    #: None = ``weight_bytes`` everywhere (sncc.capacity.weight_bytes_by_group)
    moe_dense_weight_bytes: float | None = None
    #: the engine quantizes a 16-bit checkpoint to this format as it loads it (vLLM's online
    #: dynamic FP8), so a BF16 repository serves it; False = a pre-quantized checkpoint is needed
    quantizes_at_load: bool = False


@dataclass(frozen=True)
class EngineRelease:
    """One row of the vllm-ascend compatibility matrix (domain-facts §2.1): pick a whole row.

    Versions are strings as the projects spell them; ``python`` is a PEP 440 specifier string;
    ``release_date`` a date.  Source: ``data/software.toml`` ``[[vllm_ascend]]``.
    """

    engine: str
    version: str
    vllm: str
    python: str
    cann: str
    torch: str
    torch_npu: str
    triton_ascend: str | None
    mooncake: str | None
    release_date: _dt.date | None
    status: str
    source: tuple[str, ...]
    notes: str = ""

    @property
    def key(self) -> tuple[int, ...]:
        """Sort key of ``version`` (see :func:`parse_version`)."""
        return parse_version(self.version)


@dataclass(frozen=True)
class CannTorchNpu:
    """CANN version and the torch_npu versions released for it (domain-facts §2.2)."""

    cann: str
    torch_npu: tuple[str, ...]
    branch_suffix: str | None
    status: str
    source: tuple[str, ...]


@dataclass(frozen=True)
class ChipSupport:
    """First release of ``engine`` ("vllm-ascend" or "cann") supporting ``device_type``.

    ``first_version`` None with ``never`` True = never supported.  ``warn_versions``: earlier
    releases accepted with a warning.  ``product`` narrows a row to one chip id (e.g. 950PR).
    ``unknown_before``: ``first_version`` is only the first release a source was found for, so
    earlier ones are "unknown", not "unsupported".  Source: domain-facts §2.3.
    """

    engine: str
    device_type: str
    first_version: str | None
    never: bool
    warn_versions: tuple[str, ...]
    product: str | None
    status: str
    source: tuple[str, ...]
    notes: str = ""
    unknown_before: bool = False


@dataclass(frozen=True)
class OmniInferRevision:
    """An Omni-Infer revision with its vLLM base and CANN (domain-facts §4.1/§4.2)."""

    revision: str
    date: _dt.date | None
    vllm_base: str
    cann: str
    status: str
    source: tuple[str, ...]
    notes: str = ""


@dataclass(frozen=True)
class Feature:
    """A version/device gate of a feature (domain-facts §2.4).

    ``min_version`` inclusive (None = no known lower bound); ``removed_in`` the first version
    without the feature (None = still present); ``device_types`` empty = all device types;
    ``requires_cann`` minimum CANN version or None.  Versions compare with :func:`parse_version`.
    """

    id: str
    engine: str
    min_version: str | None
    removed_in: str | None
    device_types: tuple[str, ...]
    requires_cann: str | None
    status: str
    source: tuple[str, ...]
    notes: str = ""
    quant: tuple[str, ...] = ()

    def available(self, version: str, device_type: str | None = None) -> bool:
        """True if the feature exists in ``version`` of its engine (and on ``device_type``, if given)."""
        v = parse_version(version)
        if self.min_version is not None and v < parse_version(self.min_version):
            return False
        if self.removed_in is not None and v >= parse_version(self.removed_in):
            return False
        if device_type is not None and self.device_types and device_type not in self.device_types:
            return False
        return True


# --------------------------------------------------------------------------- version ordering

_PRE_RANK = {"dev_only": 0, "alpha": 1, "a": 1, "beta": 2, "b": 2, "rc": 3, "c": 3, "final": 4}
_RELEASE_RE = re.compile(r"^(\d+(?:\.\d+)*)")
_TAG_RE = re.compile(r"^[.\-_]?(alpha|beta|rc|post|dev|a|b|c)[.\-_]?(\d*)")


#: the prefix of Omni-Infer's release branches (``release_v0.3.0``), which name its releases
#: (https://github.com/omni-ai-npu/omni-infer/tree/release_v0.3.0); :func:`parse_version` ignores it
RELEASE_BRANCH_PREFIX = "release_"


def parse_version(s: str) -> tuple[int, ...]:
    """Parse a vllm-ascend / vLLM / torch_npu / CANN version into a comparable tuple of ints.

    Accepts an optional leading "v" (``0.9.1 == v0.9.1``) and Omni-Infer's release-branch spelling
    (``release_v0.3.0 == v0.3.0``: :data:`RELEASE_BRANCH_PREFIX`, the one place it is read), PEP 440 style pre/post/dev parts
    (``v0.11.0rc3 < v0.11.0 < v0.11.0.post1``; ``2.7.1.dev20250724 < 2.7.1``), local parts
    (``+git4c901a4``, ignored) and CANN's RC scheme, where the RC releases of x.y come BEFORE
    x.y.0 (``8.0.RC3 < 8.0.0 < 8.1.RC1 < 8.2.RC1 < 8.3.RC2 < 8.5.0 < 9.0.0``).
    Returns ``(r0, r1, r2, r3, pre_rank, pre_num, post_num, dev_flag, dev_num)``.
    Raises ValueError for strings that are not versions.
    """
    if not isinstance(s, str):
        raise ValueError(f"not a version string: {s!r}")
    text = s.strip().lower()
    if text.startswith(RELEASE_BRANCH_PREFIX):
        text = text[len(RELEASE_BRANCH_PREFIX):]
    if text.startswith("v"):
        text = text[1:]
    text = text.split("+", 1)[0]
    m = _RELEASE_RE.match(text)
    if not m:
        raise ValueError(f"not a version string: {s!r}")
    nums = [int(x) for x in m.group(1).split(".")]
    if len(nums) > 4:
        raise ValueError(f"too many release components in version {s!r}")
    nums += [0] * (4 - len(nums))
    rest = text[m.end():]
    pre: tuple[int, int] | None = None
    post = -1
    dev: tuple[int, int] = (1, 0)
    while rest:
        t = _TAG_RE.match(rest)
        if not t:
            raise ValueError(f"cannot parse version {s!r} near {rest!r}")
        tag, num = t.group(1), int(t.group(2) or 0)
        if tag == "post":
            post = num
        elif tag == "dev":
            dev = (0, num)
        else:
            if pre is not None:
                raise ValueError(f"two pre-release tags in version {s!r}")
            pre = (_PRE_RANK[tag], num)
        rest = rest[t.end():]
    if pre is None:
        pre = (_PRE_RANK["dev_only"], 0) if (dev[0] == 0 and post < 0) else (_PRE_RANK["final"], 0)
    return (*nums, pre[0], pre[1], post, dev[0], dev[1])


# --------------------------------------------------------------------------- loading helpers


def _data_text(name: str) -> str:
    return (_files("sncc.catalog") / "data" / name).read_text(encoding="utf-8")


@lru_cache(maxsize=None)
def _load(name: str) -> Mapping[str, Any]:
    """Parse data file ``name`` once per process.

    The parsed table is also kept in the user's sncc cache, keyed by a hash of
    the file's text (:func:`sncc.cache.cached`): parsing the files of one
    check with the pure-Python TOML parser costs about 25 ms per process.
    """
    from sncc.cache import cached, key_of

    try:
        text = _data_text(name)
    except FileNotFoundError as e:
        raise CatalogError(f"catalog data file {name} not found") from e

    def parse() -> Mapping[str, Any]:
        toml = _toml()
        try:
            return toml.loads(text)
        except toml.TOMLDecodeError as e:
            raise CatalogError(f"catalog data file {name}: invalid TOML: {e}") from e

    return cached("catalog-" + name.replace("/", "-").removesuffix(".toml"), key_of(text), parse)


def _req(d: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in d:
        raise CatalogError(f"{where}: missing required field '{key}'")
    return d[key]


def _sources(d: Mapping[str, Any], where: str) -> tuple[str, ...]:
    src = _req(d, "source", where)
    if isinstance(src, str):
        src = [src]
    if not isinstance(src, list) or not src or not all(isinstance(x, str) and x.strip() for x in src):
        raise CatalogError(f"{where}: field 'source' must be a non-empty string or list of strings")
    return tuple(src)


def _status(d: Mapping[str, Any], where: str) -> str:
    st = _req(d, "status", where)
    if st not in STATUS_TAGS:
        raise CatalogError(f"{where}: field 'status' is {st!r}, expected one of {sorted(STATUS_TAGS)}")
    return st


def _flops(d: Any, where: str) -> Mapping[str, float]:
    if d is None:
        return MappingProxyType({})
    if not isinstance(d, dict):
        raise CatalogError(f"{where}: field 'peak_flops' must be a table")
    return MappingProxyType({k: float(v) for k, v in d.items()})


def _opt_int(v: Any) -> int | None:
    return None if v is None else int(v)


def _opt_float(v: Any) -> float | None:
    return None if v is None else float(v)


# --------------------------------------------------------------------------- chips & systems


@lru_cache(maxsize=None)
def chips() -> Mapping[str, Chip]:
    """All chips of ``data/chips.toml`` keyed by id (e.g. "ascend-910c"). Read once per process."""
    out: dict[str, Chip] = {}
    for cid, d in _req(_load("chips.toml"), "chips", "chips.toml").items():
        where = f"chips.toml [chips.{cid}]"
        proj = None
        if "projected" in d:
            p = d["projected"]
            pw = where + ".projected"
            proj = ChipProjection(
                hbm_bytes=_opt_int(p.get("hbm_bytes")),
                hbm_bandwidth=_opt_float(p.get("hbm_bandwidth")),
                interconnect_bandwidth=_opt_float(p.get("interconnect_bandwidth")),
                peak_flops=_flops(p.get("peak_flops"), pw),
                status=_status(p, pw),
                source=_sources(p, pw),
            )
        out[cid] = Chip(
            id=cid,
            name=_req(d, "name", where),
            vendor=_req(d, "vendor", where),
            generation=_req(d, "generation", where),
            device_type=_req(d, "device_type", where),
            hbm_bytes=_opt_int(d.get("hbm_bytes")),
            hbm_bandwidth=_opt_float(d.get("hbm_bandwidth")),
            peak_flops=_flops(d.get("peak_flops"), where),
            vector_flops=_opt_float(d.get("vector_flops")),
            weight_formats=tuple(_req(d, "weight_formats", where)),
            kv_dtypes=tuple(_req(d, "kv_dtypes", where)),
            devices_per_node=_opt_int(d.get("devices_per_node")),
            status=_status(d, where),
            source=_sources(d, where),
            notes=d.get("notes", ""),
            projected=proj,
        )
    return MappingProxyType(out)


def chip(id: str) -> Chip:
    """The chip ``id`` (case-insensitive). Raises KeyError for unknown ids."""
    c = chips()
    key = id.strip().lower()
    if key not in c:
        raise KeyError(f"unknown chip {id!r}; known: {', '.join(sorted(c))}")
    return c[key]


@lru_cache(maxsize=None)
def systems() -> Mapping[str, System]:
    """All systems of ``data/systems.toml`` keyed by id. Read once per process."""
    out: dict[str, System] = {}
    for sid, d in _req(_load("systems.toml"), "systems", "systems.toml").items():
        where = f"systems.toml [systems.{sid}]"
        links = []
        for i, ln in enumerate(d.get("links", [])):
            lw = f"{where}.links[{i}]"
            level = _req(ln, "level", lw)
            if level not in ("die-pair", "node", "supernode", "scale-out"):
                raise CatalogError(f"{lw}: field 'level' is {level!r}")
            links.append(
                Link(
                    level=level,
                    bandwidth=float(_req(ln, "bandwidth", lw)),
                    latency=_opt_float(ln.get("latency")),
                    status=_status(ln, lw),
                    source=_sources(ln, lw),
                    notes=ln.get("notes", ""),
                )
            )
        out[sid] = System(
            id=sid,
            name=_req(d, "name", where),
            chip=_req(d, "chip", where),
            devices_per_node=int(_req(d, "devices_per_node", where)),
            max_nodes=_opt_int(d.get("max_nodes")),
            scale_up_domain_devices=int(_req(d, "scale_up_domain_devices", where)),
            links=tuple(links),
            status=_status(d, where),
            source=_sources(d, where),
            notes=d.get("notes", ""),
            alias_of=d.get("alias_of"),
        )
    return MappingProxyType(out)


def system(id: str) -> System:
    """The system ``id`` (case-insensitive). Raises KeyError for unknown ids."""
    s = systems()
    key = id.strip().lower()
    if key not in s:
        raise KeyError(f"unknown system {id!r}; known: {', '.join(sorted(s))}")
    return s[key]


# --------------------------------------------------------------------------- models

_MODEL_INT_FIELDS = (
    "head_dim", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
    "o_lora_rank", "o_groups", "intermediate_size", "moe_intermediate_size", "n_group", "topk_group",
    "max_position_embeddings", "rope_original_max_position", "max_output_tokens", "index_n_heads", "index_head_dim", "index_topk",
    "sliding_window", "hc_mult", "n_full_attention_layers", "linear_num_key_heads", "linear_num_value_heads",
    "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim", "shared_expert_intermediate_size",
)
_MODEL_COUNT_FIELDS = (
    "n_routed_experts", "n_shared_experts", "num_experts_per_tok", "first_k_dense_replace",
    "num_hash_layers", "num_nextn_predict_layers",
)
_ARCHITECTURES = ("gqa", "mla", "mla-dsa", "dsv4")


def _model_from_table(mid: str, d: Mapping[str, Any], where: str) -> ModelArch:
    arch = _req(d, "architecture", where)
    if arch not in _ARCHITECTURES:
        raise CatalogError(f"{where}: field 'architecture' is {arch!r}, expected one of {_ARCHITECTURES}")
    kw: dict[str, Any] = {}
    for f in _MODEL_INT_FIELDS:
        if d.get(f) is not None:
            kw[f] = int(d[f])
    for f in _MODEL_COUNT_FIELDS:
        if d.get(f) is not None:
            kw[f] = int(d[f])
    cr = d.get("compress_ratios")
    if cr:
        kw.update(
            n_swa_only_layers=int(cr.get("swa_only", 0)),
            n_csa_layers=int(cr.get("csa", 0)),
            n_hca_layers=int(cr.get("hca", 0)),
            csa_compress_ratio=_opt_int(cr.get("csa_ratio")),
            hca_compress_ratio=_opt_int(cr.get("hca_ratio")),
        )
    return ModelArch(
        id=mid,
        name=_req(d, "name", where),
        architecture=arch,
        num_hidden_layers=int(_req(d, "num_hidden_layers", where)),
        hidden_size=int(_req(d, "hidden_size", where)),
        num_attention_heads=int(_req(d, "num_attention_heads", where)),
        num_key_value_heads=int(_req(d, "num_key_value_heads", where)),
        vocab_size=int(_req(d, "vocab_size", where)),
        status=_status(d, where),
        source=_sources(d, where),
        aliases=tuple(d.get("aliases", ())),
        model_type=d.get("model_type"),
        partial_rotary_factor=_opt_float(d.get("partial_rotary_factor")),
        total_params=_opt_float(d.get("total_params")),
        active_params=_opt_float(d.get("active_params")),
        checkpoint_dtype=d.get("checkpoint_dtype"),
        expert_dtype=d.get("expert_dtype"),
        trust_remote_code=bool(d.get("trust_remote_code", False)),
        notes=d.get("notes", ""),
        **kw,
    )


@lru_cache(maxsize=None)
def models() -> Mapping[str, ModelArch]:
    """All models of ``data/models.toml`` keyed by id (e.g. "deepseek-v3"). Read once per process."""
    out: dict[str, ModelArch] = {}
    for mid, d in _req(_load("models.toml"), "models", "models.toml").items():
        out[mid] = _model_from_table(mid, d, f"models.toml [models.{mid}]")
    return MappingProxyType(out)


@lru_cache(maxsize=None)
def _model_index() -> Mapping[str, str]:
    idx: dict[str, str] = {}
    for mid, m in models().items():
        for name in (mid, m.name, *m.aliases):
            key = name.strip().lower()
            if key in idx and idx[key] != mid:
                raise CatalogError(f"models.toml: alias {name!r} used by both {idx[key]} and {mid}")
            idx[key] = mid
    return MappingProxyType(idx)


def model(id_or_alias: str) -> ModelArch:
    """The model whose id, name or alias equals ``id_or_alias`` (case-insensitive).

    A HuggingFace repo id ("deepseek-ai/DeepSeek-R1") or its last path part also matches when
    listed as an alias.  Raises KeyError for unknown models.
    """
    idx = _model_index()
    key = id_or_alias.strip().lower()
    if key not in idx and "/" in key:
        key = key.rsplit("/", 1)[1]
    if key not in idx:
        raise KeyError(f"unknown model {id_or_alias!r}; known: {', '.join(sorted(models()))}")
    return models()[idx[key]]


# --------------------------------------------------------------------------- quantization


@lru_cache(maxsize=None)
def quant_formats() -> Mapping[str, QuantFormat]:
    """All quantization formats of ``data/quant.toml`` keyed by id (bf16, w8a8, mxfp4, ...)."""
    out: dict[str, QuantFormat] = {}
    for qid, d in _req(_load("quant.toml"), "quant", "quant.toml").items():
        where = f"quant.toml [quant.{qid}]"
        out[qid] = QuantFormat(
            id=qid,
            name=d.get("name", qid),
            weight_bits=int(_req(d, "weight_bits", where)),
            activation_dtype=_req(d, "activation_dtype", where),
            weight_bytes=float(_req(d, "weight_bytes", where)),
            compute_dtype=_req(d, "compute_dtype", where),
            vllm_quantization=d.get("vllm_quantization"),
            modelslim_names=tuple(d.get("modelslim_names", ())),
            hf_quant_methods=tuple(d.get("hf_quant_methods", ())),
            status=_status(d, where),
            source=_sources(d, where),
            notes=d.get("notes", ""),
            moe_dense_weight_bytes=float(d["moe_dense_weight_bytes"]) if "moe_dense_weight_bytes" in d else None,
            quantizes_at_load=bool(d.get("quantizes_at_load", False)),
        )
    return MappingProxyType(out)


def quant(id: str) -> QuantFormat:
    """The quantization format ``id`` (case-insensitive). Raises KeyError for unknown ids."""
    q = quant_formats()
    key = id.strip().lower()
    if key not in q:
        raise KeyError(f"unknown quantization format {id!r}; known: {', '.join(sorted(q))}")
    return q[key]


_KV_DTYPE_ALIASES = {
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8",
    "float8_e4m3fn": "fp8",
}


def kv_dtype_bytes(dtype: str) -> float:
    """Bytes per KV-cache element for ``dtype`` (bf16/fp16 2, int8 1, fp8 1; quant.toml [kv_dtypes]).

    Accepts the vLLM spellings bfloat16, float16, half, fp8_e4m3, fp8_e5m2.  Raises KeyError
    for unknown dtypes (including "auto", which must be resolved against the model first).
    """
    table = _req(_load("quant.toml"), "kv_dtypes", "quant.toml")
    key = dtype.strip().lower()
    key = _KV_DTYPE_ALIASES.get(key, key)
    if key not in table:
        raise KeyError(f"unknown KV-cache dtype {dtype!r}; known: {', '.join(sorted(table))}")
    return float(table[key])


# --------------------------------------------------------------------------- software


@lru_cache(maxsize=None)
def vllm_ascend_releases() -> tuple[EngineRelease, ...]:
    """Rows of the vllm-ascend compatibility matrix (domain-facts §2.1), newest version first."""
    rows = []
    for i, d in enumerate(_req(_load("software.toml"), "vllm_ascend", "software.toml")):
        where = f"software.toml [[vllm_ascend]] #{i + 1}"
        date = d.get("release_date")
        rows.append(
            EngineRelease(
                engine="vllm-ascend",
                version=_req(d, "version", where),
                vllm=_req(d, "vllm", where),
                python=_req(d, "python", where),
                cann=_req(d, "cann", where),
                torch=_req(d, "torch", where),
                torch_npu=_req(d, "torch_npu", where),
                triton_ascend=d.get("triton_ascend"),
                mooncake=d.get("mooncake"),
                release_date=date if isinstance(date, _dt.date) else None,
                status=_status(d, where),
                source=_sources(d, where),
                notes=d.get("notes", ""),
            )
        )
    rows.sort(key=lambda r: r.key, reverse=True)
    return tuple(rows)


def vllm_ascend_release(version: str) -> EngineRelease:
    """The matrix row of vllm-ascend ``version`` ("0.9.1" == "v0.9.1"). Raises KeyError if absent."""
    key = parse_version(version)
    for r in vllm_ascend_releases():
        if r.key == key:
            return r
    raise KeyError(f"vllm-ascend {version!r} is not in the compatibility matrix")


@lru_cache(maxsize=None)
def cann_torch_npu() -> tuple[CannTorchNpu, ...]:
    """CANN ↔ torch_npu rows (domain-facts §2.2), newest CANN first."""
    rows = []
    for i, d in enumerate(_req(_load("software.toml"), "cann_torch_npu", "software.toml")):
        where = f"software.toml [[cann_torch_npu]] #{i + 1}"
        rows.append(
            CannTorchNpu(
                cann=_req(d, "cann", where),
                torch_npu=tuple(_req(d, "torch_npu", where)),
                branch_suffix=d.get("branch_suffix"),
                status=_status(d, where),
                source=_sources(d, where),
            )
        )
    rows.sort(key=lambda r: parse_version(r.cann), reverse=True)
    return tuple(rows)


@lru_cache(maxsize=None)
def known_cann_releases() -> tuple[str, ...]:
    """Every CANN release a source in software.toml names (an engine release is built for it,
    a torch_npu pairs with it, a chip is first supported in it, an Omni-Infer revision installs
    it), newest first."""
    seen: dict = {}
    names = [r.cann for r in vllm_ascend_releases()] + [r.cann for r in cann_torch_npu()]
    names += [r.first_version for r in chip_support() if r.engine == "cann" and r.first_version]
    names += [r.cann for r in omni_infer_revisions() if getattr(r, "cann", None)]
    for n in names:
        seen.setdefault(parse_version(n), n)
    return tuple(seen[k] for k in sorted(seen, reverse=True))


@lru_cache(maxsize=None)
def chip_support() -> tuple[ChipSupport, ...]:
    """Per-engine first-supporting releases of each device type (domain-facts §2.3)."""
    rows = []
    for i, d in enumerate(_req(_load("software.toml"), "chip_support", "software.toml")):
        where = f"software.toml [[chip_support]] #{i + 1}"
        never = bool(d.get("never", False))
        first = d.get("first_version")
        if first is None and not never:
            raise CatalogError(f"{where}: missing required field 'first_version' (or never = true)")
        rows.append(
            ChipSupport(
                engine=_req(d, "engine", where),
                device_type=_req(d, "device_type", where),
                first_version=first,
                never=never,
                warn_versions=tuple(d.get("warn_versions", ())),
                product=d.get("product"),
                status=_status(d, where),
                source=_sources(d, where),
                notes=d.get("notes", ""),
                unknown_before=bool(d.get("unknown_before", False)),
            )
        )
    return tuple(rows)


def _support_row(engine: str, device_type: str, product: str | None) -> ChipSupport:
    eng = engine.strip().lower()
    generic = None
    for r in chip_support():
        if r.engine == eng and r.device_type == device_type:
            if product is not None and r.product == product:
                return r
            if r.product is None:
                generic = r
    if generic is None:
        raise KeyError(f"no support data for device type {device_type!r} in engine {engine!r}")
    return generic


def first_supported_release(engine: str, device_type: str, product: str | None = None) -> str | None:
    """First release of ``engine`` ("vllm-ascend" or "cann") that supports ``device_type``.

    ``device_type`` is a Chip.device_type ("A2", "A3", "A5", "910A"); ``product`` optionally a
    chip id with its own row (CANN lists 950PR/950DT from 9.1.0, the Atlas 350 card from 9.0.0).
    Returns None if the device type is never supported; raises KeyError if the catalog has no
    data for the pair.  Source: domain-facts §2.3.
    """
    return _support_row(engine, device_type, product).first_version


def support_status(engine: str, device_type: str, version: str, product: str | None = None) -> str:
    """"supported", "warn" (accepted with a warning, e.g. A3 on vllm-ascend v0.9.1), "unknown"
    (before the first release a source lists, on a row with ``unknown_before``) or "unsupported"."""
    row = _support_row(engine, device_type, product)
    if row.never or row.first_version is None:
        return "unsupported"
    v = parse_version(version)
    if v >= parse_version(row.first_version):
        return "supported"
    if any(v == parse_version(w) for w in row.warn_versions):
        return "warn"
    return "unknown" if row.unknown_before else "unsupported"


@lru_cache(maxsize=None)
def omni_infer_revisions() -> tuple[OmniInferRevision, ...]:
    """Omni-Infer revisions with their vLLM base and CANN versions (domain-facts §4.1)."""
    rows = []
    for i, d in enumerate(_req(_load("software.toml"), "omni_infer", "software.toml")):
        where = f"software.toml [[omni_infer]] #{i + 1}"
        date = d.get("date")
        rows.append(
            OmniInferRevision(
                revision=_req(d, "revision", where),
                date=date if isinstance(date, _dt.date) else None,
                vllm_base=_req(d, "vllm_base", where),
                cann=_req(d, "cann", where),
                status=_status(d, where),
                source=_sources(d, where),
                notes=d.get("notes", ""),
            )
        )
    return tuple(rows)


def omni_infer_revision(version: str | None) -> OmniInferRevision | None:
    """The ``[[omni_infer]]`` row of release ``version`` (``release_v0.3.0``, ``v0.3.0`` or the
    revision ``release_v0.3.0@c38ffb7``), or None."""
    if not version:
        return None
    rows = omni_infer_revisions()
    for row in rows:
        if version in (row.revision, row.revision.split("@")[0]):
            return row
    try:
        key = parse_version(version.split("@")[0])
    except ValueError:
        return None
    for row in rows:
        try:
            if parse_version(row.revision.split("@")[0]) == key:
                return row
        except ValueError:
            continue
    return None


@lru_cache(maxsize=None)
def features() -> Mapping[str, Feature]:
    """Feature gates of ``software.toml`` ``[[features]]`` keyed by id (domain-facts §2.4)."""
    out: dict[str, Feature] = {}
    for i, d in enumerate(_req(_load("software.toml"), "features", "software.toml")):
        where = f"software.toml [[features]] #{i + 1}"
        fid = _req(d, "id", where)
        if fid in out:
            raise CatalogError(f"{where}: duplicate feature id {fid!r}")
        for k in ("min_version", "removed_in", "requires_cann"):
            if d.get(k) is not None:
                try:
                    parse_version(d[k])
                except ValueError as e:
                    raise CatalogError(f"{where}: field '{k}': {e}") from e
        out[fid] = Feature(
            id=fid,
            engine=_req(d, "engine", where),
            min_version=d.get("min_version"),
            removed_in=d.get("removed_in"),
            device_types=tuple(d.get("device_types", ())),
            requires_cann=d.get("requires_cann"),
            status=_status(d, where),
            source=_sources(d, where),
            notes=d.get("notes", ""),
            quant=tuple(d.get("quant", ())),
        )
    return MappingProxyType(out)


def feature(id: str) -> Feature:
    """The feature gate ``id``. Raises KeyError for unknown ids."""
    f = features()
    if id not in f:
        raise KeyError(f"unknown feature {id!r}; known: {', '.join(sorted(f))}")
    return f[id]


# --------------------------------------------------------------------------- release rules (graph, connectors, quant)


def version_in(version: str, min_version: str | None, until: str | None) -> bool:
    """True if ``min_version <= version < until`` (None bounds are open). Raises ValueError for non-versions."""
    v = parse_version(version)
    if min_version is not None and v < parse_version(min_version):
        return False
    if until is not None and v >= parse_version(until):
        return False
    return True


@dataclass(frozen=True)
class GraphSupport:
    """One graph mode of an engine over a release range (``software.toml [[graph_support]]``).

    ``min_version`` inclusive, ``removed_in`` exclusive (None = open).  ``default``/``default_from``:
    the mode is the engine's default graph mode (always, or from that release on).
    ``model_types``: HF ``model_type`` values it runs (empty = all); ``unsupported_model_types`` are
    refused over ``[min_version, unsupported_until)``.  ``max_tp``: largest TP it supports (None = any).
    """

    engine: str
    mode: str
    min_version: str | None
    removed_in: str | None
    default: bool
    default_from: str | None
    model_types: tuple[str, ...]
    unsupported_model_types: tuple[str, ...]
    unsupported_until: str | None
    max_tp: int | None
    status: str
    source: tuple[str, ...]
    notes: str = ""

    def is_default(self, version: str | None) -> bool:
        """True if this mode is the engine's default graph mode in ``version`` (None = newest)."""
        if self.default:
            return True
        if self.default_from is None:
            return False
        return version is None or version_in(version, self.default_from, self.removed_in)


@dataclass(frozen=True)
class CaptureGrid:
    """Default graph-capture batch sizes of an engine: ``fixed`` plus every positive multiple
    of ``step`` (``step`` 0: ``fixed`` only).  Sizes are tokens per DP rank.

    Every query is arithmetic, O(len(fixed)), whatever ``n`` is (a plan may ask about
    ``max_num_seqs`` up to 2^31 - 1): :meth:`contains`, :meth:`next_at_least`,
    :meth:`largest_at_most`, and :meth:`sizes_up_to`, a lazy sorted sequence.
    """

    engine: str
    fixed: tuple[int, ...]
    step: int
    status: str
    source: tuple[str, ...]
    notes: str = ""

    def contains(self, n: int) -> bool:
        """True if a batch of ``n`` tokens is on the default grid."""
        return n in self.fixed or (self.step > 0 and n > 0 and n % self.step == 0)

    def next_at_least(self, n: int) -> int | None:
        """The smallest grid size >= ``n`` (None when the grid has none: ``step`` 0)."""
        cands = [g for g in self.fixed if g >= n]
        if self.step > 0:
            cands.append(max(1, -(-n // self.step)) * self.step)
        return min(cands, default=None)

    def largest_at_most(self, n: int) -> int | None:
        """The largest grid size <= ``n``, or None when every size is larger."""
        cands = [g for g in self.fixed if g <= n]
        if self.step > 0 and n >= self.step:
            cands.append(n // self.step * self.step)
        return max(cands, default=None)

    def sizes_up_to(self, n: int) -> "GridSizes":
        """Grid sizes <= ``n`` in increasing order, as a lazy :class:`GridSizes` sequence: what
        the engine captures for a largest batch of ``n`` tokens (batches above the largest run
        eager, check SN5006)."""
        return GridSizes(self, n)

    def nearest(self, n: int) -> tuple[int | None, int | None]:
        """(largest grid size < n or None, smallest grid size > n)."""
        return self.largest_at_most(n - 1), self.next_at_least(n + 1)


class GridSizes(Sequence):
    """The sizes of a :class:`CaptureGrid` up to ``limit``, sorted, without materialising them:
    ``len``, indexing (negative too), ``in`` and iteration are arithmetic, so ``bisect`` works
    on it.  Sizes are the ``fixed`` ones not on the step lattice, merged with the multiples of
    ``step`` up to ``limit``."""

    def __init__(self, grid: CaptureGrid, limit: int) -> None:
        self._grid, self._limit = grid, limit
        step = grid.step
        self._extra = tuple(sorted({g for g in grid.fixed if g <= limit and not (step > 0 and g > 0 and g % step == 0)}))
        self._mult = limit // step if step > 0 and limit >= step else 0

    def __len__(self) -> int:
        return len(self._extra) + self._mult

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("grid index out of range")
        # the i-th size: fixed extras interleave with k·step; find k by counting extras below
        lo, hi = 0, self._mult  # number of multiples before position i
        while lo < hi:
            mid = (lo + hi + 1) // 2
            # position of multiple `mid` (value mid·step) = mid - 1 + extras below it
            pos = mid - 1 + bisect.bisect_left(self._extra, mid * self._grid.step)
            if pos <= i:
                lo = mid
            else:
                hi = mid - 1
        if lo > 0 and lo - 1 + bisect.bisect_left(self._extra, lo * self._grid.step) == i:
            return lo * self._grid.step
        return self._extra[i - lo]

    def __contains__(self, n) -> bool:
        return isinstance(n, int) and n <= self._limit and self._grid.contains(n)

    def __iter__(self):
        step, extras, j = self._grid.step, self._extra, 0
        for k in range(1, self._mult + 1):
            while j < len(extras) and extras[j] < k * step:
                yield extras[j]
                j += 1
            yield k * step
        yield from extras[j:]

    def __eq__(self, other) -> bool:
        """Equal to any sequence of the same sizes (a tuple, a list, another grid)."""
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]  # compares by value, like a list

    def __repr__(self) -> str:
        return f"GridSizes(fixed={self._grid.fixed}, step={self._grid.step}, up_to={self._limit})"


@dataclass(frozen=True)
class KVConnector:
    """A KV-transfer connector (``software.toml [[kv_connectors]]``).

    ``heterogeneous_tp``: "equal", "prefill-multiple" (prefill TP ≥ decode TP and divisible; MLA
    models exempt) or "unknown".  ``removed_in``: engine → first release without it.
    ``ascend_min_cann_exclusive``: on Ascend the CANN release must be newer than this.
    ``same_host_env``: environment a P/D pair sharing one host needs.
    ``aggregated``: the connector also serves one server on its own (KV offload to CPU or disk,
    ``kv_role = kv_both``), so an aggregated plan's ``serve`` role gets it; the others only move
    KV from a prefill to a decode instance, and an aggregated plan naming one is SN3026.
    """

    id: str
    class_name: str
    engines: tuple[str, ...]
    heterogeneous_tp: str
    removed_in: Mapping[str, str] = field(hash=False)
    ascend_min_cann_exclusive: str | None
    ascend_requires_direct: bool
    same_host_env: Mapping[str, str] = field(hash=False)
    status: str
    source: tuple[str, ...]
    notes: str = ""
    aggregated: bool = False


@dataclass(frozen=True)
class QuantRouting:
    """A checkpoint quant_method routed to the online-quantization path over ``[min_version, fixed_in)``."""

    engine: str
    quant: str
    min_version: str | None
    fixed_in: str | None
    status: str
    source: tuple[str, ...]
    notes: str = ""


def _rows(key: str) -> list[tuple[str, Mapping[str, Any]]]:
    return [(f"software.toml [[{key}]] #{i + 1}", d) for i, d in enumerate(_load("software.toml").get(key, []))]


@lru_cache(maxsize=None)
def graph_support() -> tuple[GraphSupport, ...]:
    """Graph modes per engine release and model family (``[[graph_support]]``)."""
    out = []
    for where, d in _rows("graph_support"):
        mt = d.get("max_tp")
        out.append(GraphSupport(
            engine=_req(d, "engine", where), mode=_req(d, "mode", where),
            min_version=d.get("min_version"), removed_in=d.get("removed_in"),
            default=bool(d.get("default", False)), default_from=d.get("default_from"),
            model_types=tuple(d.get("model_types", ())),
            unsupported_model_types=tuple(d.get("unsupported_model_types", ())),
            unsupported_until=d.get("unsupported_until"), max_tp=int(mt) if mt is not None else None,
            status=_status(d, where), source=_sources(d, where), notes=d.get("notes", "")))
    return tuple(out)


@lru_cache(maxsize=None)
def capture_grid(engine: str) -> CaptureGrid | None:
    """Default capture grid of ``engine`` ("vllm-ascend", "vllm"), or None when not catalogued."""
    for where, d in _rows("capture_grid"):
        if d.get("engine") == engine:
            fixed = tuple(int(x) for x in d.get("fixed", ()))
            return CaptureGrid(engine=engine, fixed=fixed, step=int(_req(d, "step", where)),
                               status=_status(d, where), source=_sources(d, where), notes=d.get("notes", ""))
    return None


@lru_cache(maxsize=None)
def kv_connectors() -> Mapping[str, KVConnector]:
    """KV-transfer connectors keyed by id (``[[kv_connectors]]``)."""
    out: dict[str, KVConnector] = {}
    for where, d in _rows("kv_connectors"):
        cid = _req(d, "id", where)
        ht = d.get("heterogeneous_tp", "unknown")
        if ht not in ("equal", "prefill-multiple", "unknown"):
            raise CatalogError(f"{where}: field 'heterogeneous_tp' is {ht!r}")
        out[cid] = KVConnector(
            id=cid, class_name=_req(d, "class_name", where), engines=tuple(_req(d, "engines", where)),
            heterogeneous_tp=ht, removed_in=MappingProxyType(dict(d.get("removed_in", {}))),
            ascend_min_cann_exclusive=d.get("ascend_min_cann_exclusive"),
            ascend_requires_direct=bool(d.get("ascend_requires_direct", False)),
            same_host_env=MappingProxyType({k: str(v) for k, v in d.get("same_host_env", {}).items()}),
            status=_status(d, where), source=_sources(d, where), notes=d.get("notes", ""),
            aggregated=bool(d.get("aggregated", False)))
    return MappingProxyType(out)


def kv_connector(id: str) -> KVConnector:
    """The connector ``id``. Raises KeyError for unknown ids."""
    c = kv_connectors()
    if id not in c:
        raise KeyError(f"unknown KV connector {id!r}; known: {', '.join(sorted(c))}")
    return c[id]


def connector_runs_on(conn: KVConnector, engine: str) -> bool:
    """True when connector ``conn`` lists engine label ``engine`` (``[[kv_connectors]] engines``)."""
    return engine in conn.engines


def default_kv_connector(engine: str) -> str | None:
    """Connector id sncc uses for a disaggregated plan of ``engine`` that names none."""
    return _load("software.toml").get("default_kv_connector", {}).get(engine)


@lru_cache(maxsize=None)
def quant_routing() -> tuple[QuantRouting, ...]:
    """Checkpoint quant methods routed to online quantization (``[[quant_routing]]``)."""
    return tuple(
        QuantRouting(engine=_req(d, "engine", where), quant=_req(d, "quant", where),
                     min_version=d.get("min_version"), fixed_in=d.get("fixed_in"),
                     status=_status(d, where), source=_sources(d, where), notes=d.get("notes", ""))
        for where, d in _rows("quant_routing"))


def quant_features(engine: str, quant_id: str) -> tuple[Feature, ...]:
    """Feature gates of ``engine`` that list the weight format ``quant_id`` (``quant = [...]``)."""
    return tuple(f for f in features().values() if f.engine == engine and quant_id in f.quant)


@lru_cache(maxsize=None)
def _limits() -> Mapping[str, Any]:
    """``data/limits.toml``, read once per process (``sncc search`` runs the checks per candidate)."""
    from types import MappingProxyType

    from sncc.cache import package_toml

    return MappingProxyType({k: MappingProxyType(v) if isinstance(v, dict) else v
                             for k, v in package_toml("sncc.catalog", "data/limits.toml").items()})


def plan_limits() -> Mapping[str, Any]:
    """The ``data/limits.toml [plan]`` table: ``max_devices`` and ``max_instances`` one plan may
    have (check SN3060), with their ``reason`` (one per limit, printed in the message) and source."""
    return _limits()["plan"]


def slo_limits() -> Mapping[str, Any]:
    """The ``data/limits.toml [slo]`` table: ``min_ttft_s`` and ``min_tpot_s``, the smallest
    targets that mean anything (check SN7060), with their ``reason`` (one per limit) and source."""
    return _limits()["slo"]

