"""The simulator's entry points for callers that hold a compiled plan (search, the language
server): a plan and its facts in, no parsing.

* :func:`screen` — the analytic steady state (:class:`~sncc.sim.engine.screen.ScreenResult`), in
  milliseconds: for sweeping many candidates;
* :func:`simulate` — the event simulation (:class:`~sncc.sim.engine.metrics.SimResult`).

Both build the simulation input from the plan's facts once (:func:`sncc.sim.from_plan.spec_from_plan`:
per-role parallelism, expert parallelism, redundant experts, budgets per DP rank, the KV pool of
:mod:`sncc.capacity`), so what is built is what is screened and simulated.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Optional


def screen(plan: Any, facts: Any, profile: Optional[str] = None) -> Any:
    """The analytic steady state of ``plan`` (a typed :class:`~sncc.plan.model.Plan` with its
    :class:`~sncc.facts.model.Facts`) with calibration profile ``profile`` (default: the chip's).

    Raises ``ValueError`` for an unknown model or chip, :class:`sncc.cost.from_facts.MissingChipFact`
    for a chip without the facts the cost model needs, :class:`sncc.cost.profile.ProfileError`."""
    from sncc.sim.engine.screen import screen as screen_spec
    from sncc.sim.from_plan import spec_from_plan

    return screen_spec(spec_from_plan(plan, facts, profile=profile))


def simulate(plan: Any, facts: Any, profile: Optional[str] = None, *, seed: int = 0,
             requests: Optional[int] = None, series: bool = False,
             progress: Optional[Callable[[int, int], None]] = None) -> Any:
    """The event simulation of ``plan`` with its facts: ``seed`` of the sampled workload,
    ``requests`` instead of the workload's (a search's shorter runs), ``series`` to keep the time
    series (plots), ``progress(completed, requests)`` for long runs.

    Raises what :func:`screen` raises, and :class:`~sncc.sim.engine.des.Unadmittable` /
    :class:`~sncc.sim.engine.des.StepBoundExceeded` from the run."""
    from sncc.sim.engine.run import simulate_spec
    from sncc.sim.from_plan import spec_from_plan

    spec = spec_from_plan(plan, facts, seed=seed, profile=profile)
    if requests is not None:
        spec = replace(spec, workload=replace(spec.workload, requests=int(requests)))
    return simulate_spec(spec, series=series, progress=progress)
