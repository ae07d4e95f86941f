"""Engine adapters: one package per engine target (``vllm``, ``vllm_ascend``, ``omni_infer``),
each pinned to named releases whose facts are data (``data/pins.toml``, ``data/<version>.json``).
See :mod:`sncc.engines.base` and ``README.md`` beside this file."""

from sncc.engines.registry import KINDS, adapter_for, plan_adapter

__all__ = ["KINDS", "adapter_for", "plan_adapter"]
