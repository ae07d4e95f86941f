"""The one place lowering reads a role's parallelism and per-role settings.

:func:`role_settings` answers from the plan as it is today (``ep`` is vLLM's data-parallel
size, expert parallelism on for a MoE model with ``tp × ep > 1``, plan-level ``env`` and
``speculative``).  When the facts layer (``sncc/facts``, docs/design.md §3) lands, this
function becomes ``facts.roles[name]`` and nothing else in lowering changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RoleSettings:
    """A role's settings as lowering needs them.

    ``tp``/``dp``/``pp`` and ``devices`` (= tp × dp × pp, per instance); ``expert_parallel``:
    routed experts spread by expert parallelism over tp × dp devices; ``env`` the role's
    effective environment overrides (plan + role), ``speculative`` its effective speculative
    block (None: off), ``redundant_experts`` extra expert slots per instance.
    """

    name: str
    instances: int
    tp: int
    dp: int
    pp: int
    devices: int
    devices_declared: int
    expert_parallel: bool
    expert_parallel_note: str
    env: dict[str, str] = field(default_factory=dict)
    speculative: Any = None
    redundant_experts: int = 0
    redundant_experts_note: str = ""


def role_settings(plan, name: str, is_moe: bool, routed_experts: int) -> RoleSettings:
    """Settings of role ``name`` of ``plan`` (see the module docstring).  Raises KeyError when the
    plan has no such role."""
    role = dict(plan.roles())[name]
    tp, dp, pp = role.tp, role.ep, role.pp
    if not is_moe:
        ep_on, ep_note = False, "dense model: no routed experts"
    elif tp * dp <= 1:
        ep_on, ep_note = False, "tp × ep = 1: a single device holds every expert"
    else:
        ep_on, ep_note = True, f"MoE ({routed_experts} routed experts) spread over tp × ep = {tp * dp} devices"
    opt = plan.optimize
    pl = opt.omni_placement if opt is not None else None
    red, red_note = 0, ""
    if pl is not None and pl.redundant_experts > 0 and ep_on:
        red = pl.redundant_experts * tp * dp
        red_note = (f"omni_placement.redundant_experts = {pl.redundant_experts} per device × tp {tp} × ep {dp} "
                    f"= {red} per instance")
    return RoleSettings(name=name, instances=role.instances, tp=tp, dp=dp, pp=pp, devices=tp * dp * pp,
                        devices_declared=role.devices, expert_parallel=ep_on, expert_parallel_note=ep_note,
                        env=dict(plan.env), speculative=plan.speculative,
                        redundant_experts=red, redundant_experts_note=red_note)
