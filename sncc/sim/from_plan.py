"""Typed plan + facts → :class:`~sncc.sim.spec.SimSpec`, and one call to run it.

The simulator reads the typed plan and its facts (:mod:`sncc.facts`), never the syntax tree.
Roles, features and the deployment come from :func:`sncc.cost.from_facts.cost_spec` (the one
reader of role facts, shared with the checks' step estimates), so what is built is what is
simulated: per-role parallelism, expert parallelism (a TP-only MoE has no EP dispatch),
redundant experts, per-DP-rank budgets and the speculative setting of the decoding role.  Every
role's KV pool per device is the one :func:`sncc.capacity.role_memory` computes for
``sncc check``.  This module adds the workload, the SLOs and the engine's KV admission.  A chip
of another generation than its profile's gets wider intervals and a note
(:func:`sncc.sim.engine.run.profile_match`).
"""

from __future__ import annotations

from sncc.cost.from_facts import (PROFILE_BY_GENERATION, MissingChipFact, applicable_features,  # noqa: F401
                                  missing_chip_facts)


def spec_from_plan(plan, resolved, *, seed: int = 0, profile: str | None = None):
    """Build the :class:`SimSpec` of ``plan`` (with its :class:`~sncc.facts.model.Facts`).

    Raises ``ValueError`` when a fact the simulator needs is missing (unknown model or chip):
    ``sncc check`` reports those first; :class:`MissingChipFact` (a ``ValueError``) when the
    known chip lacks a sourced fact the cost model needs (e.g. ``hbm_bandwidth`` of
    ascend-910b4); :class:`sncc.workload.trace.TraceError` for an unreadable trace.
    """
    from sncc.cost.from_facts import cost_spec
    from sncc.sim.spec import LengthDist, SimSpec, SloTarget, Workload

    cs = cost_spec(plan, resolved, profile=profile)
    wl = plan.workload

    def dist(d):
        return LengthDist(kind=d.dist, mean=d.mean, max=d.max, min=d.min)

    # the trace's rows and the run's requests are facts (sncc.facts.workload): one request per
    # row unless `requests` is written (then honoured, SN5081 says so)
    trace = getattr(resolved, "trace", None)
    requests = getattr(resolved, "requests", wl.requests)
    if wl.trace and trace is None:
        err = getattr(resolved, "trace_error", None)
        if err is not None:
            raise err       # TraceError (SN2015 from `sncc check` reports it first)
        from sncc.workload.trace import read_trace, trace_path
        span = wl.span_of("trace")
        trace = tuple(read_trace(trace_path(wl.trace, span.file if span is not None else None),
                                 max_input=wl.input.max, max_output=wl.output.max))
        if wl.is_default("requests"):
            requests = len(trace)
    # rate and concurrency together: vllm bench serve's --request-rate under --max-concurrency
    # (Workload docs; the simulator starts requests at the rate into the free slots)
    extra = dict(burstiness=wl.burstiness, trace=trace, turns=wl.turns, think_time=wl.think_time)
    workload = Workload(requests=requests, input=dist(wl.input), output=dist(wl.output),
                        concurrency=wl.concurrency,
                        rate=wl.rate, max_tokens=resolved.max_tokens, seed=seed, **extra)
    if workload.concurrency is None and workload.rate is None and not (trace and trace[0][2] is not None):
        workload = Workload(requests=requests, input=workload.input, output=workload.output,
                            concurrency=min(requests, 64), max_tokens=resolved.max_tokens, seed=seed, **extra)
    slos = tuple(SloTarget(t.metric, t.stat, t.op, t.target) for t in plan.slo)
    return SimSpec(
        model=cs.model, chip=cs.chip, roles=cs.roles, workload=workload, quant=cs.quant, kv_dtype=cs.kv_dtype,
        links=cs.links, devices_per_node=cs.devices_per_node, profile=cs.profile, features=cs.features,
        slos=slos, hccl_buffsize_mb=cs.hccl_buffsize_mb, weight_bytes_per_param=cs.weight_bytes_per_param,
        devices_available=resolved.devices_available, notes=cs.notes,
        # the engine adapter's admission rule (pins.toml kv_admission): Omni-Infer reserves prompt +
        # max_tokens (fitted to seed 000); vLLM and vllm-ascend allocate KV blocks on demand and preempt
        kv_admission=_kv_admission(plan),
        engine=cs.engine,
    )


def _kv_admission(plan) -> str:
    """The plan engine's KV admission (:attr:`sncc.engines.base.EngineAdapter.kv_admission`);
    ``on-demand`` for an engine sncc has no adapter for (``sncc check`` reports it first)."""
    from sncc.engines.registry import UnknownEngine, adapter_for

    try:
        return adapter_for(plan.engine.kind).kv_admission
    except UnknownEngine:
        return "on-demand"


def run_plan(plan, resolved, *, seed: int = 0, profile: str | None = None):
    """Simulate ``plan`` and return the :class:`~sncc.sim.engine.metrics.SimResult`."""
    from sncc.sim.engine.run import simulate_spec as simulate

    return simulate(spec_from_plan(plan, resolved, seed=seed, profile=profile))
