"""Read a checkpoint directory (HuggingFace ``config.json`` + optional msModelSlim description).

``read_weights_dir(path)`` builds a :class:`~sncc.catalog.ModelArch` from ``config.json`` and
detects the checkpoint's quantization format (a :mod:`quant.toml <sncc.catalog>` id):

1. msModelSlim ``quant_model_description.json`` → ``model_quant_type`` (e.g. "W8A8_DYNAMIC" → "w8a8");
   without that key, the distinct per-tensor types (ignoring "FLOAT") must name one format;
2. ``config.json`` ``quantization_config.quant_method`` (e.g. "fp8" → "fp8"; compressed-tensors
   and modelopt are resolved from their scheme fields);
3. otherwise the unquantized dtype from ``torch_dtype``/``dtype`` ("bfloat16" → "bf16").

Field names (HF → ModelArch) come from ``data/config_fields.toml``: each quantity's keys in
reading order, at the top level and then under ``text_config`` (transformers 5.24.0
configuration classes and their ``attribute_map`` aliases, vLLM 0.23.0's readers).  So routed
experts are the first of ``num_experts``, ``moe_num_experts``, ``n_routed_experts``,
``num_local_experts``; MTP layers the first of ``num_nextn_predict_layers``,
``mtp_num_hidden_layers``, ``num_mtp_layers``; Mixtral / MiniMax-M2 / gpt-oss give the expert
width as ``intermediate_size``; Qwen3-Next / Qwen3.5 name their full-attention layers in
``layer_types`` or by ``full_attention_interval``.  Dense layers: ``first_k_dense_replace``, or
Qwen's ``decoder_sparse_step`` and ``mlp_only_layers``.  Sources: domain-facts §3.1
(``--quantization``), §3.2 (Ascend override), §5.1; docs/research/config-fields.md.

Malformed JSON or missing required fields raise :class:`~sncc.catalog.CatalogError` with a
one-line message naming the file and field.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Mapping

from . import CatalogError, ModelArch, models, quant_formats

__all__ = ["CheckpointInfo", "read_weights_dir", "arch_from_config", "CONFIG_FILE", "MODELSLIM_FILE"]

CONFIG_FILE = "config.json"
#: msModelSlim description file name (vllm_ascend/quantization/modelslim_config.py).
MODELSLIM_FILE = "quant_model_description.json"

_REQUIRED = ("num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size")
_DTYPES = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16", "half": "fp16"}


@dataclass(frozen=True)
class CheckpointInfo:
    """What a weights directory says about itself.

    ``arch``: the shape read from config.json (``status`` "R", ``source`` the file path;
    ``id``/``name`` of the catalog model with the same shape if there is one, else the directory
    name).  ``quant``: a quant.toml id.  ``quant_source_file``: path of the file the format was
    decided from.  ``raw``: the parsed config.json.  ``path``: the directory.
    """

    arch: ModelArch
    quant: str
    quant_source_file: str
    raw: Mapping[str, Any] = field(hash=False, compare=False)
    path: str = ""


def read_json(path: str) -> Any:
    """Parse the JSON file at ``path`` (bounded read); raises CatalogError naming the file."""
    return _read_json(path)


def _read_json(path: str) -> Any:
    from sncc.source import read_bytes_limited

    try:
        data = read_bytes_limited(path)
    except (OSError, ValueError) as e:  # ValueError: a NUL byte in the path
        raise CatalogError(f"{path}: cannot read file: {getattr(e, 'strerror', None) or e}") from e
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_no_constant(path), parse_float=_finite(path))
    except UnicodeDecodeError as e:
        raise CatalogError(f"{path}: not UTF-8 text") from e
    except json.JSONDecodeError as e:
        raise CatalogError(f"{path}: malformed JSON at line {e.lineno} column {e.colno}: {e.msg}") from e


def _no_constant(path: str):
    """``json.loads`` ``parse_constant``: ``Infinity``, ``-Infinity`` and ``NaN`` are not JSON
    (RFC 8259 §6); Python's reader accepts them, and an infinite layer count overflows."""
    def refuse(name: str):
        raise CatalogError(f"{path}: `{name}` is not a JSON number (RFC 8259 allows finite numbers only)")
    return refuse


def _finite(path: str):
    """``json.loads`` ``parse_float``: a float literal too large for a double (``1e400``) is refused."""
    def parse(text: str) -> float:
        v = float(text)
        if v != v or v in (float("inf"), float("-inf")):
            raise CatalogError(f"{path}: the number {text[:24]} is too large for a 64-bit float")
        return v
    return parse


#: Largest value sncc accepts for an integer field of config.json.  These are sanity bounds, not
#: facts about any model: each is far above every published checkpoint (the deepest has under
#: 200 layers, the widest vocabulary about 256k entries, the most routed experts 384) and low
#: enough that no loop or product over them can hang a check.  Positions and windows are token
#: counts and share the engines' int32 bound (sncc.plan.model.INT32_MAX).
_INT_LIMITS = {"num_hidden_layers": 2**16, "num_hash_layers": 2**16, "first_k_dense_replace": 2**16,
               "num_nextn_predict_layers": 2**10, "decoder_sparse_step": 2**16,
               "max_position_embeddings": 2**31 - 1, "sliding_window": 2**31 - 1, "index_topk": 2**31 - 1}
#: bound of every other integer field (hidden sizes, heads, experts, ranks, vocabulary)
_INT_LIMIT = 2**24


def _int_field(cfg: Mapping[str, Any], key: str, path: str, *, required: bool = False) -> int | None:
    """``cfg[key]`` as an int in ``[0, limit]`` (limit from :data:`_INT_LIMITS`), None when absent.
    Raises CatalogError naming the file and field for a non-integer or out-of-range value."""
    v = cfg.get(key)
    if v is None:
        if required:
            raise CatalogError(f"{path}: missing required field '{key}'")
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v:
        raise CatalogError(f"{path}: field '{key}' must be an integer, got {_shown(v)}")
    limit = _INT_LIMITS.get(key, _INT_LIMIT)
    if not 0 <= v <= limit:
        raise CatalogError(f"{path}: field '{key}' = {_shown(v)} is outside [0, {limit:,}]")
    return int(v)


def _shown(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:30] + "…" + text[-6:]


def _int_list(cfg: Mapping[str, Any], key: str, path: str) -> list[int]:
    """``cfg[key]`` as a list of non-negative ints (``[]`` when absent or null)."""
    v = cfg.get(key)
    if v is None:
        return []
    if not isinstance(v, list) or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in v):
        raise CatalogError(f"{path}: field '{key}' must be a list of layer indices (non-negative integers), got {_shown(v)}")
    return v


def _ratio_field(cfg: Mapping[str, Any], key: str, path: str) -> float | None:
    """``cfg[key]`` as a number in (0, 1], None when absent."""
    v = cfg.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 1:
        raise CatalogError(f"{path}: field '{key}' must be a number in (0, 1], got {_shown(v)}")
    return float(v)


#: largest rope-scaling factor accepted from config.json (published YaRN factors are 4 to 40;
#: a sanity bound, far above them, that keeps positions × factor inside the int32 token bound)
_MAX_ROPE_FACTOR = 1024.0


def _check_rope(cfg: Mapping[str, Any], path: str) -> None:
    for key in ("rope_scaling", "rope_parameters"):
        rs = cfg.get(key)
        if rs is None:
            continue
        if not isinstance(rs, dict):
            raise CatalogError(f"{path}: field '{key}' must be an object, got {_shown(rs)}")
        f = rs.get("factor")
        if f is not None and (isinstance(f, bool) or not isinstance(f, (int, float)) or not 0 < f <= _MAX_ROPE_FACTOR):
            raise CatalogError(f"{path}: field '{key}.factor' must be a number in (0, {_MAX_ROPE_FACTOR:g}], got {_shown(f)}")


@lru_cache(maxsize=1)
def config_fields() -> Mapping[str, Any]:
    """``data/config_fields.toml``: for each quantity the config.json keys that carry it, in
    reading order (transformers 5.24.0 classes and aliases, vLLM 0.23.0 readers; see the file)."""
    from sncc.cache import package_toml

    return package_toml("sncc.catalog", "data/config_fields.toml")


def field_keys(quantity: str) -> tuple[str, ...]:
    """The config.json keys of ``quantity`` (a ``[fields.*]`` table of config_fields.toml), in
    the order they are tried.  Raises KeyError for a quantity the table does not define."""
    return tuple(config_fields()["fields"][quantity]["keys"])


def _first_key(cfg: Mapping[str, Any], quantity: str) -> str | None:
    """The first key of ``quantity`` present (not null) in ``cfg``, or None."""
    for k in field_keys(quantity):
        if cfg.get(k) is not None:
            return k
    return None


def _first_int(cfg: Mapping[str, Any], quantity: str, path: str, *, required: bool = False) -> int | None:
    """``quantity`` read as an integer from its first present key (:func:`field_keys`); None when
    no key is present.  Raises CatalogError as :func:`_int_field` does."""
    k = _first_key(cfg, quantity)
    if k is None:
        if required:
            raise CatalogError(f"{path}: missing required field '{field_keys(quantity)[0]}'")
        return None
    return _int_field(cfg, k, path)


def _full_attention_layers(cfg: Mapping[str, Any], layers: int, model_type: str, path: str) -> int | None:
    """Full-attention layers of a hybrid linear-attention model: ``layer_types`` entries equal to
    ``full_attention`` (when the list also names ``linear_attention``), else for the hybrid
    families of config_fields.toml every ``full_attention_interval``-th layer (transformers:
    layer i is full iff ``(i + 1) % interval == 0``, default 4).  None for other models."""
    fam = config_fields()["families"]
    types = cfg.get(_first_key(cfg, "layer_types") or "layer_types")
    if types is not None:
        if not isinstance(types, list) or not all(isinstance(t, str) for t in types):
            raise CatalogError(f"{path}: field 'layer_types' must be a list of strings")
        main = types[:layers]
        if "linear_attention" in main:
            return sum(1 for t in main if t == "full_attention")
        return None
    if model_type not in fam["hybrid_linear_attention"]:
        return None
    interval = _first_int(cfg, "full_attention_interval", path)
    if interval is None:
        interval = int(fam["full_attention_interval_default"])
    if interval < 1:
        raise CatalogError(f"{path}: field 'full_attention_interval' must be at least 1, got {interval}")
    return layers // interval


def _compress_counts(cfg: Mapping[str, Any], n_layers: int, path: str) -> dict[str, Any]:
    ratios = cfg.get("compress_ratios")
    if ratios is None:
        return {}
    if not isinstance(ratios, list) or not all(isinstance(r, int) and not isinstance(r, bool) and 0 <= r <= _INT_LIMIT
                                               for r in ratios):
        raise CatalogError(f"{path}: field 'compress_ratios' must be a list of integers")
    main = ratios[:n_layers]
    nonzero = sorted({r for r in main if r})
    out: dict[str, Any] = {"n_swa_only_layers": sum(1 for r in main if r == 0)}
    if nonzero:
        csa = nonzero[0]
        out["csa_compress_ratio"] = csa
        out["n_csa_layers"] = sum(1 for r in main if r == csa)
    if len(nonzero) > 1:
        hca = nonzero[-1]
        out["hca_compress_ratio"] = hca
        out["n_hca_layers"] = sum(1 for r in main if r == hca)
    return out


def arch_from_config(cfg: Mapping[str, Any], path: str, *, name: str | None = None) -> ModelArch:
    """Build a :class:`ModelArch` from a parsed HF config (``path`` is used in messages/source).

    Raises CatalogError when a required field (num_hidden_layers, hidden_size,
    num_attention_heads, vocab_size) is missing or not an integer.
    """
    if not isinstance(cfg, dict):
        raise CatalogError(f"{path}: top level must be a JSON object")
    if cfg.get("text_config") is not None and not isinstance(cfg["text_config"], dict):
        raise CatalogError(f"{path}: field 'text_config' must be an object, got {_shown(cfg['text_config'])}")
    if "num_hidden_layers" not in cfg and isinstance(cfg.get("text_config"), dict):
        merged = dict(cfg["text_config"])
        merged.setdefault("model_type", cfg.get("model_type"))
        cfg = merged
    layers, hidden, heads, vocab = (_int_field(cfg, k, path, required=True) or 0 for k in _REQUIRED)
    for k, v in zip(_REQUIRED, (layers, hidden, heads, vocab)):
        if v <= 0:
            raise CatalogError(f"{path}: field '{k}' must be a positive integer")
    model_type = str(cfg.get("model_type") or "")
    n_kv = _first_int(cfg, "num_key_value_heads", path) or heads
    kw: dict[str, Any] = {}
    for k in (
        "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
        "o_lora_rank", "o_groups", "n_group", "topk_group",
        "index_n_heads", "index_head_dim", "index_topk", "sliding_window",
        "hc_mult", "num_hash_layers",
    ):
        v = _int_field(cfg, k, path)
        if v is not None:
            kw[k] = v
    # the quantities config_fields.toml names under several keys (transformers aliases, vLLM readers)
    for q in ("head_dim", "intermediate_size", "moe_intermediate_size", "max_position_embeddings",
              "n_shared_experts", "shared_expert_intermediate_size", "num_experts_per_tok",
              "num_nextn_predict_layers", "linear_num_key_heads", "linear_num_value_heads",
              "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim"):
        v = _first_int(cfg, q, path)
        if v is not None:
            kw[q] = v
    n_routed = _first_int(cfg, "n_routed_experts", path)
    if n_routed:
        if "moe_intermediate_size" not in kw and model_type in config_fields()["families"]["expert_width_is_intermediate_size"]:
            # Mixtral, MiniMax-M2, gpt-oss: intermediate_size is one expert's width, and no layer is dense
            kw["moe_intermediate_size"] = kw.pop("intermediate_size", None)
        if kw.get("shared_expert_intermediate_size") and "n_shared_experts" not in kw:
            kw["n_shared_experts"] = 1   # Qwen2-MoE / Qwen3-Next / Qwen3.5: one shared expert of that width
    full = _full_attention_layers(cfg, layers, model_type, path)
    if full is not None:
        kw["n_full_attention_layers"] = full
    if n_routed:
        kw["n_routed_experts"] = n_routed
        if "first_k_dense_replace" in cfg:
            kw["first_k_dense_replace"] = _int_field(cfg, "first_k_dense_replace", path) or 0
        else:
            step = _int_field(cfg, "decoder_sparse_step", path)
            if step == 0:
                raise CatalogError(f"{path}: field 'decoder_sparse_step' must be at least 1, got 0")
            step = step or 1
            mlp_only = {i for i in _int_list(cfg, "mlp_only_layers", path) if i < layers}
            # Qwen MoE: layer i is MoE iff i not in mlp_only_layers and (i + 1) % step == 0;
            # the count of dense layers is stored in first_k_dense_replace (count, not position).
            # Counted arithmetically: layers // step are on the sparse step, less those listed dense.
            moe = layers // step - sum(1 for i in mlp_only if (i + 1) % step == 0)
            kw["first_k_dense_replace"] = layers - moe
    prf = _ratio_field(cfg, "partial_rotary_factor", path)
    if prf is not None:
        kw["partial_rotary_factor"] = prf
    _check_rope(cfg, path)
    if cfg.get("tie_word_embeddings") is True:
        kw["tie_word_embeddings"] = True
    if cfg.get("expert_dtype"):
        kw["expert_dtype"] = str(cfg["expert_dtype"])

    if model_type == "deepseek_v4" or "compress_ratios" in cfg:
        architecture = "dsv4"
        kw.update(_compress_counts(cfg, layers, path))
    elif "kv_lora_rank" in kw:
        architecture = "mla-dsa" if (model_type == "deepseek_v32" or "index_topk" in kw) else "mla"
        for k in ("qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
            if k not in kw:
                raise CatalogError(f"{path}: missing required field '{k}' (MLA model)")
    else:
        architecture = "gqa"
    if architecture == "gqa" and "head_dim" not in kw:
        kw["head_dim"] = hidden // heads

    dtype = cfg.get("torch_dtype") or cfg.get("dtype")
    ckpt = _DTYPES.get(str(dtype).lower()) if dtype else None
    qc = cfg.get("quantization_config")
    if isinstance(qc, dict) and qc.get("quant_method") == "fp8":
        ckpt = "fp8"
    return ModelArch(
        id=name or os.path.basename(os.path.dirname(os.path.abspath(path))),
        name=name or os.path.basename(os.path.dirname(os.path.abspath(path))),
        architecture=architecture,
        num_hidden_layers=layers,
        hidden_size=hidden,
        num_attention_heads=heads,
        num_key_value_heads=n_kv,
        vocab_size=vocab,
        status="R",
        source=(path,),
        model_type=model_type or None,
        checkpoint_dtype=ckpt,
        **kw,
    )


_SHAPE_FIELDS = (
    "architecture", "num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
    "vocab_size", "n_routed_experts", "moe_intermediate_size", "kv_lora_rank",
)


def _match_catalog(a: ModelArch, hint: str) -> ModelArch | None:
    """The catalog model with the same shape (fields of _SHAPE_FIELDS), if any.

    Several entries can share a shape (DeepSeek-V3 / R1); the one whose id or alias occurs in
    ``hint`` (directory name, ``_name_or_path``) wins, else the first in file order.
    """
    hint = hint.lower()
    same = [m for m in models().values() if all(getattr(m, f) == getattr(a, f) for f in _SHAPE_FIELDS)]
    for m in same:
        names = (m.id, *m.aliases)
        if any(n.lower().rsplit("/", 1)[-1] in hint for n in names):
            return m
    return same[0] if same else None


def _quant_by_modelslim(name: str, path: str) -> str:
    key = name.strip().upper()
    for q in quant_formats().values():
        if key in (n.upper() for n in q.modelslim_names):
            return q.id
    raise CatalogError(f"{path}: field 'model_quant_type' has unknown value {name!r}")


def _quant_from_modelslim(desc: Any, path: str) -> str:
    if not isinstance(desc, dict):
        raise CatalogError(f"{path}: top level must be a JSON object")
    mqt = desc.get("model_quant_type")
    if isinstance(mqt, str) and mqt.strip():
        return _quant_by_modelslim(mqt, path)
    kinds = {
        v.strip().upper()
        for k, v in desc.items()
        if isinstance(v, str) and v.strip().upper() not in ("FLOAT", "")
    }
    ids = {_quant_by_modelslim(k, path) for k in kinds if any(c.isdigit() for c in k)}
    if len(ids) == 1:
        return ids.pop()
    if not ids:
        raise CatalogError(f"{path}: missing required field 'model_quant_type'")
    raise CatalogError(f"{path}: field 'model_quant_type' missing and tensors mix formats {sorted(ids)}")


def _quant_from_hf(qc: Mapping[str, Any], path: str) -> str:
    method = qc.get("quant_method")
    if not isinstance(method, str) or not method:
        raise CatalogError(
            f"{path}: field 'quantization_config.quant_method' missing "
            f"(vllm-ascend then expects msModelSlim weights with {MODELSLIM_FILE})"
        )
    m = method.strip().lower()
    if m == "compressed-tensors":
        return _quant_from_compressed_tensors(qc, path)
    if m in ("modelopt", "modelopt_fp4"):
        algo = str(qc.get("quant_algo") or qc.get("quantization", {}).get("quant_algo") or "").upper()
        if "FP4" in algo or m == "modelopt_fp4":
            return "fp4"
        if "FP8" in algo:
            return "fp8"
        raise CatalogError(f"{path}: field 'quantization_config.quant_algo' has unknown value {algo!r}")
    for q in quant_formats().values():
        if m in (x.lower() for x in q.hf_quant_methods):
            return q.id
    raise CatalogError(f"{path}: field 'quantization_config.quant_method' has unknown value {method!r}")


def _quant_from_compressed_tensors(qc: Mapping[str, Any], path: str) -> str:
    groups = qc.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        raise CatalogError(f"{path}: field 'quantization_config.config_groups' missing (compressed-tensors)")
    found = set()
    for g in groups.values():
        w = (g or {}).get("weights") or {}
        a = (g or {}).get("input_activations") or {}
        bits, wtype = w.get("num_bits"), str(w.get("type", "int")).lower()
        abits = a.get("num_bits") if a else None
        if wtype == "float" and bits == 8:
            found.add("fp8")
        elif bits == 8 and abits == 8:
            found.add("w8a8")
        elif bits == 8:
            found.add("w8a16")
        elif bits == 4 and abits == 8:
            found.add("w4a8")
        elif bits == 4:
            # Kimi-K2-Thinking style: int4 weights on the (expert) groups, rest unquantized
            found.add("int4-moe" if _targets_experts(g) else "w4a16")
        else:
            raise CatalogError(f"{path}: field 'quantization_config.config_groups' has unsupported num_bits {bits!r}")
    if len(found) != 1:
        raise CatalogError(f"{path}: field 'quantization_config.config_groups' mixes formats {sorted(found)}")
    return found.pop()


def _targets_experts(group: Mapping[str, Any]) -> bool:
    targets = " ".join(str(t) for t in (group.get("targets") or []))
    return "expert" in targets.lower()


def read_weights_dir(path: str | os.PathLike[str]) -> CheckpointInfo | None:
    """Read ``path/config.json`` (+ ``quant_model_description.json``) into a :class:`CheckpointInfo`.

    Returns None if the directory or its config.json does not exist.  Raises CatalogError (one
    line, naming file and field) for malformed JSON, missing required fields or unknown
    quantization names.  Quantization precedence: msModelSlim description, then
    ``quantization_config.quant_method``, then ``torch_dtype`` (default bf16).
    """
    d = os.fspath(path)
    cfg_path = os.path.join(d, CONFIG_FILE)
    if not os.path.isdir(d) or not os.path.isfile(cfg_path):
        return None
    raw = _read_json(cfg_path)
    try:
        return _read_checkpoint(d, cfg_path, raw)
    except CatalogError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError, OverflowError) as e:
        # a field of a shape the readers above do not validate one by one (a list where an
        # object belongs, deep inside quantization_config): still a diagnostic on the file
        raise CatalogError(f"{cfg_path}: a field has an unexpected type or value ({type(e).__name__}: "
                           f"{_shown(str(e))})") from e


def _read_checkpoint(d: str, cfg_path: str, raw: Any) -> CheckpointInfo:
    arch = arch_from_config(raw, cfg_path)
    hint = os.path.basename(os.path.abspath(d)) + " " + str(raw.get("_name_or_path") or "")
    known = _match_catalog(arch, hint)
    if known is not None:
        arch = _with_identity(arch, known)

    ms_path = os.path.join(d, MODELSLIM_FILE)
    if os.path.isfile(ms_path):
        quant_id, src = _quant_from_modelslim(_read_json(ms_path), ms_path), ms_path
    elif isinstance(raw.get("quantization_config"), dict):
        quant_id, src = _quant_from_hf(raw["quantization_config"], cfg_path), cfg_path
    elif raw.get("quantization_config") is not None:
        raise CatalogError(f"{cfg_path}: field 'quantization_config' must be an object")
    else:
        dtype = raw.get("torch_dtype") or raw.get("dtype") or "bfloat16"
        quant_id = _DTYPES.get(str(dtype).lower())
        if quant_id is None:
            if str(dtype).lower() in ("float32", "fp32"):
                quant_id = "bf16"  # served in 16-bit; fp32 checkpoints are cast by the engine
            else:
                raise CatalogError(f"{cfg_path}: field 'torch_dtype' has unsupported value {dtype!r}")
        src = cfg_path
    return CheckpointInfo(arch=arch, quant=quant_id, quant_source_file=src, raw=raw, path=d)


def _with_identity(a: ModelArch, known: ModelArch) -> ModelArch:
    """Copy id/name/aliases and stated parameter counts of the matching catalog model onto ``a``."""
    from dataclasses import replace

    return replace(
        a,
        id=known.id,
        name=known.name,
        aliases=known.aliases,
        total_params=known.total_params,
        active_params=known.active_params,
        max_output_tokens=known.max_output_tokens,
    )
