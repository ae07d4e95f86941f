"""Step-time estimates from the simulator's cost model, for warnings that name a
slowdown (SN5006, SN7002).  Never used for errors."""

from __future__ import annotations

import dataclasses


def _model(plan, r, role_name: str, *, graph: bool | None = None, mtp=None):
    from sncc.sim.from_plan import spec_from_plan
    from sncc.sim.model_shape import model_shape
    from sncc.sim.profile import load_profile
    from sncc.sim.runner import resolve_kv_bytes_per_token, resolve_quant
    from sncc.sim.step_model import StepModel

    spec = spec_from_plan(plan, r)
    feats = dataclasses.replace(spec.features, mtp=mtp)
    spec = dataclasses.replace(spec, features=feats)
    role = spec.role(role_name)
    if graph is not None:
        role = dataclasses.replace(role, graph_mode=graph, graph_gears=None)
    prof = load_profile(spec.profile)
    shape = model_shape(spec.model)
    wb, cdt = resolve_quant(spec)
    return StepModel(spec, role_name, role, prof, shape, resolve_kv_bytes_per_token(spec), wb, cdt)


def decode_step_s(plan, r, role_name: str, batch: int, *, graph: bool, context: int = 2048, mtp=None) -> float:
    """Seconds of one decode step of ``batch`` sequences at ``context`` tokens each (graph or eager)."""
    sm = _model(plan, r, role_name, graph=graph, mtp=mtp)
    return sm.decode_step(batch, float(context * batch), batch * sm.role.ep)
