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


def decode_step_pair(plan, r, role_name: str, batch: int, *, graph: bool, context: int, mtp) -> tuple:
    """``(plain, speculative)`` seconds of one decode step of ``batch`` sequences per DP rank at
    ``context`` tokens each, without and with the speculative setting ``mtp`` = ``(draft tokens,
    acceptance)``, from one cost specification (:func:`sncc.cost.from_facts.cost_spec`, built once).
    Raises ValueError (:class:`~sncc.cost.from_facts.MissingChipFact`,
    :class:`~sncc.cost.profile.ProfileError`) when a fact the cost model needs is missing, KeyError
    for a role the plan lacks."""
    import dataclasses

    from sncc.cost.from_facts import cost_spec
    from sncc.cost.profile import load_profile
    from sncc.cost.step import StepModel

    spec = cost_spec(plan, r)
    role = dataclasses.replace(dict(spec.roles)[role_name], graph_mode=graph, graph_gears=None)
    prof = load_profile(spec.profile)
    out = []
    for m in (None, mtp):
        s = dataclasses.replace(spec, features=dataclasses.replace(spec.features, mtp=m))
        sm = StepModel(s, role_name, role, prof)
        out.append(sm.decode_step(batch, float(context * batch), batch * sm.role.dp))
    return tuple(out)
