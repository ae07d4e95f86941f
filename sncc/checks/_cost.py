"""Step-time estimates from the cost model (:mod:`sncc.cost`), for warnings that name a
slowdown (SN5006, SN7002).  Never used for errors."""

from __future__ import annotations


def decode_step_s(plan, r, role_name: str, batch: int, *, graph: bool, context: int = 2048, mtp=None) -> float:
    """Seconds of one decode step of ``batch`` sequences per DP rank at ``context`` tokens each
    (graph or eager; ``mtp`` = ``(draft tokens, acceptance)`` or None):
    :func:`sncc.cost.from_facts.step_model`."""
    from sncc.cost.from_facts import step_model

    sm = step_model(plan, r, role_name, graph=graph, mtp=mtp)
    return sm.decode_step(batch, float(context * batch), batch * sm.role.dp)
