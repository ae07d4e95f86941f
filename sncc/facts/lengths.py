"""Context lengths as the engine derives them: the rope scaling of a checkpoint and the default
``max_model_len`` vLLM takes from ``config.json`` when none is written.

vLLM ``_get_and_verify_max_len`` (``vllm/config/model.py@0.23.0`` L2112-2218,
docs/research/rule-kinds.md K1): the first positional key of ``derive_max_model_len_and_key``
(``max_position_embeddings``, ``n_positions``, ``max_seq_len``, …) gives the length; a rope
scaling whose type is not ``su`` / ``longrope`` / ``llama3`` multiplies it by its ``factor``, and
for ``yarn`` the product is ``original_max_position_embeddings × factor``.  The catalog stores
``max_position_embeddings`` already as that product (DeepSeek-V3: 4,096 × 40 = 163,840), so a
catalog model's default is its ``max_position_embeddings``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional

#: rope types whose factor vLLM does not multiply into the length (vllm/config/model.py@0.23.0 L2176-2180)
UNSCALED_ROPE_TYPES = ("su", "longrope", "llama3")


@dataclass(frozen=True)
class Rope:
    """A rope-scaling block: ``type`` (``yarn``, ``linear``, ``dynamic``, ``llama3``, ``default`` …),
    ``factor`` (1.0 when none), ``original`` positions it scales (``original_max_position_embeddings``,
    None when absent) and ``source`` (where it was read, for messages)."""

    type: str
    factor: float
    original: Optional[int]
    source: str

    @property
    def extends(self) -> bool:
        """True when this rope scaling lengthens the context vLLM derives (factor > 1 and a type
        vLLM multiplies)."""
        return self.factor > 1 and self.type not in UNSCALED_ROPE_TYPES


def _text(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    tc = cfg.get("text_config")
    return tc if isinstance(tc, dict) and "num_hidden_layers" in tc and "num_hidden_layers" not in cfg else cfg


def checkpoint_rope(raw: Mapping[str, Any] | None) -> Rope | None:
    """The rope scaling of a parsed config.json (top level, else ``text_config``): its
    ``rope_scaling`` or ``rope_parameters`` block; None when there is none or it is the default
    unscaled rope."""
    if not isinstance(raw, dict):
        return None
    from sncc.catalog.hf_config import field_keys

    for where in (raw, _text(raw)):
        for key in field_keys("rope"):
            rs = where.get(key)
            if not isinstance(rs, dict):
                continue
            typ = str(rs.get("rope_type") or rs.get("type") or "default").lower()
            f = rs.get("factor")
            factor = float(f) if isinstance(f, (int, float)) and not isinstance(f, bool) and f > 0 else 1.0
            orig = rs.get("original_max_position_embeddings")
            orig = int(orig) if isinstance(orig, int) and not isinstance(orig, bool) and orig > 0 else None
            if typ == "default" and factor == 1.0:
                return None
            return Rope(typ, factor, orig, f"config.json {key}")
    return None


def engine_default_max_model_len(arch, raw: Mapping[str, Any] | None, plan_rope_factor: float | None) -> tuple[int, str]:
    """(tokens, how) of the ``max_model_len`` vLLM takes when none is written.

    ``arch`` is the :class:`~sncc.catalog.ModelArch` (catalog or checkpoint); ``raw`` the parsed
    config.json when a checkpoint was read; ``plan_rope_factor`` the plan's ``model.rope_scaling``
    (written into ``--hf-overrides``, so it replaces the checkpoint's factor over the native
    context ``arch.yarn_base_positions``).  Returns (0, reason) when the model's positions are unknown.
    """
    mpe = getattr(arch, "max_position_embeddings", None) if arch is not None else None
    if not mpe:
        return 0, "the model's max_position_embeddings is unknown"
    if plan_rope_factor is not None and plan_rope_factor > 1:
        base = arch.yarn_base_positions or mpe
        return int(base * plan_rope_factor), f"native {base} positions × model.rope_scaling {plan_rope_factor:g} (--hf-overrides)"
    rope = checkpoint_rope(raw)
    if rope is not None and rope.extends:
        if rope.type == "yarn" and rope.original:
            n = int(rope.original * rope.factor)
            return n, f"{rope.source}: original_max_position_embeddings {rope.original} × yarn factor {rope.factor:g}"
        n = int(mpe * rope.factor)
        return n, f"max_position_embeddings {mpe} × {rope.source} factor {rope.factor:g}"
    return int(mpe), f"config.json max_position_embeddings {mpe}" if raw is not None else f"max_position_embeddings {mpe} (catalog)"
