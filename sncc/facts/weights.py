"""Bytes per parameter of each weight group, from the checkpoint's own quantization description.

A checkpoint is rarely one width: FP4 routed experts inside an FP8 checkpoint (DeepSeek-V4's
``expert_dtype: fp4``), NVFP4 experts with FP8 elsewhere (ModelOpt ``MIXED_PRECISION``
``quantized_layers``), INT4 experts with BF16 attention (compressed-tensors ``ignore``), FP8 with a
BF16 router and LM head (``modules_to_not_convert``).  Pricing every weight at one width gave
183 GiB per GPU against 117 GiB measured (issue 10; kekzl/imp#1385, FlashML-org/FreeToken#320).

:func:`weight_bytes_per_param` returns one figure per group of
:func:`sncc.catalog.arch.param_breakdown` — ``attention``, ``dense_ffn``, ``shared_experts``,
``routed_experts``, ``router``, ``embedding``, ``lm_head``, ``mtp`` — with scale tensors included:

* FP8 block ``weight_block_size [bn, bk]``: 1 byte + one FP32 scale per ``bn × bk`` block;
* ``group_size g`` schemes: the element bits / 8 + one scale per ``g`` elements (2 bytes for the
  BF16/FP16 scales of compressed-tensors int groups, 1 byte for the FP8 scales of NVFP4 and MX formats);
* listed exclusions (``ignore``, ``modules_to_not_convert``, ``exclude_modules``) keep the
  checkpoint's unquantized dtype (2 bytes) — except under a ModelOpt mixed-precision export of an FP8
  checkpoint, whose ignored modules stay at the base FP8;
* msModelSlim ``quant_model_description.json``: each tensor's type, grouped by its name;
* without a checkpoint: the catalog quantization's ``weight_bytes`` on the linear groups, 2 bytes for
  embedding, LM head and router (msModelSlim keeps them BF16; domain-facts §5.1), and a catalog
  ``expert_dtype`` (DeepSeek-V4: fp4) on the routed experts; ``int4-moe`` quantizes the routed experts only.

Sources of the ``quantization_config`` shapes: docs/research/config-fields.md (§quantization_config
shapes) and rule-kinds.md F3.  Pattern matching of module names: ``re:`` entries are regular
expressions (compressed-tensors), entries with ``*`` are globs (ModelOpt), others match a dotted
name component sequence (``lm_head``, ``gate``, ``mlp.gate``).
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any, Mapping

GROUPS = ("attention", "dense_ffn", "shared_experts", "routed_experts", "router", "embedding", "lm_head", "mtp")

#: representative module names of each group in the published checkpoints' naming schemes
#: (HF Llama/Qwen/DeepSeek ``model.layers.N.…``, DeepSeek-V4 / ModelOpt ``layers.N.attn/ffn``, Mixtral
#: ``block_sparse_moe``), used to decide which group a listed pattern selects
_NAMES = {
    "attention": ("model.layers.0.self_attn.q_proj", "model.layers.0.self_attn.o_proj", "layers.0.attn.wq_a",
                  "model.layers.0.linear_attn.in_proj_qkvz", "model.layers.0.self_attn.kv_a_proj_with_mqa"),
    "dense_ffn": ("model.layers.0.mlp.gate_proj", "model.layers.0.mlp.down_proj", "layers.0.ffn.w1"),
    "shared_experts": ("model.layers.3.mlp.shared_experts.gate_proj", "model.layers.3.mlp.shared_expert.gate_proj",
                       "layers.3.ffn.shared_experts.w1"),
    "routed_experts": ("model.layers.3.mlp.experts.0.gate_proj", "model.layers.3.mlp.experts.0.down_proj",
                       "layers.3.ffn.experts.0.w1", "layers.3.ffn.experts", "model.layers.3.block_sparse_moe.experts.0.w1"),
    "router": ("model.layers.3.mlp.gate", "layers.3.ffn.gate", "model.layers.3.block_sparse_moe.gate",
               "model.layers.3.mlp.gate.e_score_correction_bias"),
    "embedding": ("model.embed_tokens", "embed"),
    "lm_head": ("lm_head", "head"),
    "mtp": ("mtp.0.attn", "model.mtp.layers.0.self_attn.q_proj", "mtp.layers.0.mlp.experts.0.gate_proj"),
}
#: groups a ``targets = ["Linear"]`` scheme quantizes: the router (a gate module with a bare
#: weight parameter in the HF models, I) and the embedding are not Linear layers
_LINEAR = ("attention", "dense_ffn", "shared_experts", "routed_experts", "lm_head", "mtp")
#: a scale tensor's bytes: FP32 per FP8 weight block; BF16 per int group (compressed-tensors); FP8 (E4M3 /
#: UE8M0) per NVFP4 / MX group
_FP32, _BF16, _FP8 = 4.0, 2.0, 1.0
_UNQUANTIZED = 2.0


def _matches(pattern: str, name: str) -> bool:
    """True when module pattern ``pattern`` selects module ``name`` (module docstring)."""
    p = str(pattern)
    if p.startswith("re:"):
        try:
            return re.search(p[3:], name) is not None
        except re.error:
            return False
    if any(c in p for c in "*?["):
        return fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(name + ".x", p)
    parts, want = name.split("."), p.strip(".").split(".")
    return any(parts[i:i + len(want)] == want for i in range(len(parts) - len(want) + 1))


def groups_selected(patterns) -> set[str]:
    """The weight groups any of ``patterns`` (module-name patterns) selects."""
    out = set()
    for g, names in _NAMES.items():
        if any(_matches(p, n) for p in patterns or () for n in names):
            out.add(g)
    return out


def _scheme_bytes(bits: int | float, group_size: int | None, scale_bytes: float) -> float:
    b = float(bits) / 8.0
    return b + (scale_bytes / group_size if group_size else 0.0)


def _fp8_bytes(qc: Mapping[str, Any]) -> float:
    blk = qc.get("weight_block_size")
    if isinstance(blk, list) and len(blk) == 2 and all(isinstance(x, int) and x > 0 for x in blk):
        return 1.0 + _FP32 / (blk[0] * blk[1])
    return 1.0


def _fp4_bytes(group: int | None = None) -> float:
    """4-bit float weights with one 1-byte scale per ``group`` (NVFP4: 16; MX / DeepSeek-V4 FP4: 32)."""
    return _scheme_bytes(4, group or 32, _FP8)


def _catalog(f) -> tuple[dict[str, float], str]:
    from sncc import catalog

    q = f.quant or getattr(f.arch, "checkpoint_dtype", None) or "bf16"
    try:
        wb = catalog.quant(q).weight_bytes
    except KeyError:
        wb = _UNQUANTIZED
    out = {g: wb for g in GROUPS}
    out.update(embedding=_UNQUANTIZED, lm_head=_UNQUANTIZED, router=_UNQUANTIZED)
    notes = [f"`{q}` ({wb:g} B) on the linear weights; embedding, LM head and router BF16"]
    if q == "int4-moe":
        out.update({g: _UNQUANTIZED for g in ("attention", "dense_ffn", "shared_experts", "mtp")})
        notes = ["int4-moe: routed experts 0.5 B, the rest BF16"]
    exp = getattr(f.arch, "expert_dtype", None)
    if exp and str(exp).lower() in ("fp4", "mxfp4", "nvfp4"):
        out["routed_experts"] = _fp4_bytes()
        notes.append(f"routed experts {exp} (catalog expert_dtype): {out['routed_experts']:.4g} B")
    return out, "; ".join(notes) + " (catalog)"


def _from_hf(qc: Mapping[str, Any], raw: Mapping[str, Any]) -> tuple[dict[str, float], str]:
    method = str(qc.get("quant_method") or "").lower()
    algo = str(qc.get("quant_algo") or "").upper()
    out: dict[str, float] = {g: _UNQUANTIZED for g in GROUPS}
    notes: list[str] = []
    excluded = list(qc.get("ignore") or []) + list(qc.get("modules_to_not_convert") or []) + list(qc.get("exclude_modules") or [])
    if method == "fp8" or (method == "modelopt" and algo == "FP8"):
        base = _fp8_bytes(qc)
        for g in _LINEAR:
            out[g] = base
        notes.append(f"FP8 {base:.5g} B" + (" (block scales)" if base > 1 else ""))
    elif method in ("modelopt", "modelopt_fp4") and "FP4" in algo:
        gs = qc.get("group_size") if isinstance(qc.get("group_size"), int) else 16
        for g in _LINEAR:
            out[g] = _fp4_bytes(gs)
        notes.append(f"NVFP4 {out['attention']:.4g} B")
    elif method == "mxfp4":
        out["routed_experts"] = _fp4_bytes(32)
        notes.append(f"MXFP4 routed experts {out['routed_experts']:.4g} B, other weights unquantized")
        excluded = []   # only the experts are MXFP4; modules_to_not_convert names the rest
    elif method == "compressed-tensors":
        for cg in (qc.get("config_groups") or {}).values():
            w = (cg or {}).get("weights") or {}
            bits = w.get("num_bits")
            if not isinstance(bits, (int, float)):
                continue
            gs = w.get("group_size") if w.get("strategy") == "group" and isinstance(w.get("group_size"), int) else None
            fmt = str(w.get("type") or "int").lower()
            per = _scheme_bytes(bits, gs, _FP8 if fmt == "float" and bits == 4 else _BF16)
            targets = cg.get("targets") or ["Linear"]
            hit = set(_LINEAR) if any(str(t) == "Linear" for t in targets) else groups_selected(targets)
            for g in hit:
                out[g] = per
            notes.append(f"{int(bits)}-bit {fmt}" + (f" group {gs}" if gs else "") + f" {per:.4g} B on {', '.join(sorted(hit))}")
    # ModelOpt mixed precision inside an FP8 checkpoint: per-module algorithms
    layers = qc.get("quantized_layers")
    if isinstance(layers, dict):
        for name, spec in layers.items():
            a = str((spec or {}).get("quant_algo") or "").upper()
            gs = (spec or {}).get("group_size")
            per = _fp4_bytes(gs if isinstance(gs, int) else 16) if "FP4" in a else _fp8_bytes(qc) if "FP8" in a else None
            if per is None:
                continue
            for g in groups_selected([name]) or groups_selected([name + ".*"]):
                out[g] = per
        notes.append("per-module quantized_layers")
    if excluded:
        base_fp8 = algo == "MIXED_PRECISION" and method == "fp8"
        keep = _fp8_bytes(qc) if base_fp8 else _UNQUANTIZED
        hit = groups_selected(excluded)
        for g in hit:
            out[g] = keep
        if hit:
            notes.append(f"{', '.join(sorted(hit))} excluded ({keep:.4g} B)")
    exp = raw.get("expert_dtype") if isinstance(raw, dict) else None
    if isinstance(exp, str) and exp.lower() in ("fp4", "mxfp4", "nvfp4"):
        out["routed_experts"] = _fp4_bytes()
        notes.append(f"routed experts {exp} (expert_dtype) {out['routed_experts']:.4g} B")
    out["embedding"] = _UNQUANTIZED   # an nn.Embedding: no scheme above quantizes it
    return out, "config.json quantization_config: " + "; ".join(notes)


_MODELSLIM_BYTES = {"W8A8": 1.0, "W8A8_DYNAMIC": 1.0, "W8A16": 1.0, "W4A8": 0.5, "W4A8_DYNAMIC": 0.5, "W4A16": 0.5,
                    "W4A4": 0.5, "FLOAT": _UNQUANTIZED}


def _from_modelslim(desc: Mapping[str, Any], num_layers: int) -> tuple[dict[str, float], str] | None:
    """Group the per-tensor types of a ``quant_model_description.json`` by tensor name; None when it
    lists no tensors (only ``model_quant_type``)."""
    seen: dict[str, list[float]] = {}
    layer = re.compile(r"layers\.(\d+)\.")
    for name, typ in desc.items():
        if not isinstance(typ, str) or "." not in name or not name.endswith("weight"):
            continue
        b = _MODELSLIM_BYTES.get(typ.strip().upper())
        if b is None:
            continue
        mod = name.rsplit(".", 1)[0]
        m = layer.search(mod)
        g = "mtp" if (m and int(m.group(1)) >= num_layers) or ".mtp." in f".{mod}." else _group_of(mod)
        if g:
            seen.setdefault(g, []).append(b)
    if not seen:
        return None
    out = {g: (max(set(v), key=v.count) if v else _UNQUANTIZED) for g, v in seen.items()}
    for g in GROUPS:
        out.setdefault(g, _UNQUANTIZED)
    return out, "quant_model_description.json per-tensor types: " + ", ".join(f"{g} {out[g]:g} B" for g in GROUPS if g in seen)


def _group_of(module: str) -> str | None:
    """The weight group of one checkpoint module name (msModelSlim tensor names)."""
    parts = module.split(".")
    if "embed_tokens" in parts:
        return "embedding"
    if parts[-1] in ("lm_head", "head"):
        return "lm_head"
    if any(p in ("shared_experts", "shared_expert") for p in parts):
        return "shared_experts"
    if "experts" in parts:
        return "routed_experts"
    if parts[-1] == "gate" and any(p in ("mlp", "ffn", "block_sparse_moe") for p in parts):
        return "router"
    if any(p in ("self_attn", "attn", "linear_attn") for p in parts):
        return "attention"
    if any(p in ("mlp", "ffn") for p in parts):
        return "dense_ffn"
    return None


def weight_bytes_per_param(f) -> tuple[dict[str, float], str]:
    """(``{group: bytes per parameter}``, how) for the :class:`~sncc.facts.model.Facts` ``f``
    (module docstring); empty when the model is unknown."""
    if f.arch is None:
        return {}, ""
    ck = f.checkpoint
    if ck is not None:
        src = getattr(ck, "quant_source_file", "") or ""
        if src.endswith("quant_model_description.json"):
            from sncc.catalog.hf_config import read_json

            try:
                got = _from_modelslim(read_json(src), f.arch.num_hidden_layers)
            except Exception:  # the description was read once already; a second failure changes nothing
                got = None
            if got is not None:
                return got
        qc = ck.raw.get("quantization_config") if isinstance(ck.raw, dict) else None
        if not isinstance(qc, dict) and isinstance(ck.raw, dict) and isinstance(ck.raw.get("text_config"), dict):
            qc = ck.raw["text_config"].get("quantization_config")
        if isinstance(qc, dict):
            return _from_hf(qc, ck.raw)
    return _catalog(f)
