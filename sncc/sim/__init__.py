"""Embedded serving simulator of sncc.

Public API (imported lazily so ``import sncc.sim`` stays light)::

    from sncc.sim import simulate, SimSpec, RoleSpec, Features, Workload, LengthDist, SloTarget
    result = simulate(spec)          # -> SimResult (see sncc.sim.engine.metrics)

Modules: ``spec`` (inputs), ``profile`` (calibration TOML loader), ``model_shape``,
``cost_roofline``, ``cost_attention``, ``cost_gemm``, ``cost_comm``,
``cost_kv_transfer``, ``memory``, ``step_model`` (engine-step latency),
``workload`` (length sampling), ``engine`` (discrete-event loop), ``metrics``.
"""
from __future__ import annotations

from typing import Any

__all__ = ["simulate", "SimSpec", "RoleSpec", "Features", "Workload", "LengthDist", "SloTarget",
           "SimResult", "kv_budget_bytes_per_device", "run_plan", "spec_from_plan"]

_LAZY = {
    "simulate": ("sncc.sim.engine.run", "simulate_spec"),
    "SimSpec": ("sncc.sim.spec", "SimSpec"),
    "RoleSpec": ("sncc.sim.spec", "RoleSpec"),
    "Features": ("sncc.sim.spec", "Features"),
    "Workload": ("sncc.sim.spec", "Workload"),
    "LengthDist": ("sncc.sim.spec", "LengthDist"),
    "SloTarget": ("sncc.sim.spec", "SloTarget"),
    "SimResult": ("sncc.sim.engine.metrics", "SimResult"),
    "kv_budget_bytes_per_device": ("sncc.sim.engine.memory", "kv_budget_bytes_per_device"),
    "run_plan": ("sncc.sim.from_plan", "run_plan"),
    "spec_from_plan": ("sncc.sim.from_plan", "spec_from_plan"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib
        mod, attr = _LAZY[name]
        return getattr(importlib.import_module(mod), attr)
    raise AttributeError(f"module 'sncc.sim' has no attribute {name!r}")
