"""The one place lowering reads a role's parallelism and per-role settings.

Lowering never derives a role's values again: it reads the facts layer's
:class:`~sncc.facts.model.RoleFacts` (``tp``/``dp``/``pp``, expert parallelism and the EP group,
redundant experts and ``eplb``, per-DP-rank budgets, chunked prefill, graph mode, the speculative
setting and the environment in force for the role, each with a note saying how it was derived).
"""

from __future__ import annotations

from sncc.facts.model import RoleFacts

__all__ = ["RoleFacts", "role_facts"]


def role_facts(facts, name: str) -> RoleFacts:
    """``facts.roles[name]``.  Raises KeyError when the plan has no such role."""
    return facts.roles[name]
