"""The facts layer: everything derived from a typed plan, computed once, read by the checks,
lowering, the simulator and search (docs/design.md §3).

* :mod:`sncc.facts.catalog_facts` — the catalog and checkpoint: architecture, chip, system,
  quantization, KV dtype, ``max_model_len``, device count, vendor;
* :mod:`sncc.facts.roles` — per-role facts: parallelism, expert parallelism and the EP group,
  redundant experts, per-DP-rank budgets, chunked prefill, graph mode, the speculative setting
  and environment in force;
* :mod:`sncc.facts.speculative` — the acceptance formula.

A new derived fact goes into :class:`~sncc.facts.model.RoleFacts` (or :class:`Facts`) and is
computed in the module of its kind, with a note saying how; consumers read it, never recompute.
"""

from __future__ import annotations

from sncc.facts.model import EnvValue, EplbFacts, Facts, RoleFacts, SpeculativeFacts

__all__ = ["EnvValue", "EplbFacts", "Facts", "RoleFacts", "SpeculativeFacts", "derive"]


def derive(plan, base_dir: str | None = None) -> Facts:
    """All :class:`Facts` of ``plan`` (never raises for bad input).

    A relative ``model.weights`` path is read relative to ``base_dir`` (the folder of the file
    that wrote it) when given.
    """
    from sncc.facts.catalog_facts import resolve_catalog
    from sncc.facts.roles import role_facts

    from sncc.catalog.engine_defaults import engine_defaults

    f = resolve_catalog(plan, base_dir=base_dir)
    row = engine_defaults().get("expert_placement", {}).get(plan.engine.kind)
    f.even_expert_split = bool(row["even_split"]) if row is not None else None
    util = plan.hardware.memory_utilization
    f.roles = {name: role_facts(plan, name, role, f.arch, util) for name, role in plan.roles()}
    from sncc.facts.draft import draft_checkpoints
    from sncc.facts.weights import weight_bytes_per_param

    f.draft_checkpoints = draft_checkpoints(plan, f.roles, base_dir, f.diagnostics)
    f.weight_bytes_per_param, f.weight_bytes_note = weight_bytes_per_param(f)
    return f
