"""``adapter_for(kind)``: the :class:`~sncc.engines.base.EngineAdapter` of an engine label.

The plan's ``engine "<kind>"`` names one of :data:`KINDS`; every question about an engine
(its pins, options, connectors, launch pattern) goes to the adapter returned here.
"""

from __future__ import annotations

from functools import lru_cache

from sncc.engines.base import EngineAdapter

#: engine label → "module:Class" of its adapter (imported on first use)
_ADAPTERS = {
    "vllm": "sncc.engines.vllm.adapter:VllmAdapter",
    "vllm-ascend": "sncc.engines.vllm_ascend.adapter:VllmAscendAdapter",
    "omni-infer": "sncc.engines.omni_infer.adapter:OmniInferAdapter",
}
KINDS = tuple(_ADAPTERS)


class UnknownEngine(KeyError):
    """No adapter for this engine label (the plan builder reports the label first)."""


@lru_cache(maxsize=None)
def adapter_for(kind: str) -> EngineAdapter:
    """The adapter of engine ``kind`` (``"vllm"``, ``"vllm-ascend"``, ``"omni-infer"``).

    Raises :class:`UnknownEngine` for any other label.
    """
    import importlib

    try:
        mod, cls = _ADAPTERS[kind].split(":")
    except KeyError:
        raise UnknownEngine(f"no engine adapter for {kind!r}; engines: {', '.join(KINDS)}") from None
    return getattr(importlib.import_module(mod), cls)()


def plan_adapter(plan) -> EngineAdapter | None:
    """The adapter of ``plan.engine.kind``, or None for an unknown label."""
    try:
        return adapter_for(plan.engine.kind)
    except UnknownEngine:
        return None
