"""Typed plan → :class:`~sncc.sim.spec.SimSpec`, and one call to run it.

The simulator reads the typed plan and the resolved facts, never the syntax tree, and this
module is the one place it reads plan fields (so that moving to the facts layer,
``sncc/facts``, touches one file).  Every role's KV pool per device is the one
:func:`sncc.capacity.role_memory` computes for ``sncc check``.  The calibration profile is chosen
by the chip's generation (``PROFILE_BY_GENERATION``); a chip of another generation than its
profile's gets wider intervals and a note (:func:`sncc.sim.engine.run.profile_match`).
"""

from __future__ import annotations

#: chip generation → profile id under sncc/catalog/data/profiles
PROFILE_BY_GENERATION = {
    "atlas-a3": "ascend-a3",
    "atlas-a2": "ascend-a3",
    "ascend-950": "ascend-a3",
    "hopper": "nvidia-h200",
    "blackwell": "nvidia-h200",
}


#: optimisations only Omni-Infer implements (its omni_attn / omni_proxy config sections,
#: sncc.emit.omni_infer); the simulator credits them on no other engine.  omni_placement's
#: redundant experts are built for vllm-ascend too (EPLB, sncc.lowering) and simulated wherever
#: the build writes them (sncc.capacity.redundant_experts_per_device)
OMNI_ONLY = ("omni_attn", "omni_proxy")


def _is_ascend(chip) -> bool:
    return str(getattr(chip, "vendor", "")).lower() == "huawei"


def applicable_features(plan, resolved) -> tuple:
    """(names of the plan's optimisations the simulator applies, notes on the ones it does not).

    What the build deploys is what is simulated:

    * ``omni_attn``, ``omni_proxy``: Omni-Infer only (its own config sections; no other engine
      reads them).  ``omni_placement``'s redundant experts are applied per role where the build
      deploys them (:func:`sncc.capacity.redundant_experts_per_device`), on any engine.
    * ``micro_batch = 2`` and ``superkernel_layers``: Omni-Infer on Ascend (the build turns
      them on through ``ASCEND_OMNI_MICRO_BATCH`` / ``ASCEND_SUPERKERNEL_*``), and vllm-ascend
      on Ascend when its release spells them and the plan meets the release's preconditions
      (``VLLM_ASCEND_ENABLE_DBO``, ``torchair_graph_config.enable_super_kernel``: exactly when
      :func:`sncc.lowering.ascend_options.plan_options` says the build writes them).  vLLM's
      ``--enable-dbo`` (DeepEP all-to-all) is not emitted, so it is not credited.
    * ``speculative { method = mtp }``: only for a model with MTP layers
      (``num_nextn_predict_layers > 0``); other methods bring their own draft.
    """
    opt = plan.optimize
    engine = getattr(getattr(plan, "engine", None), "kind", None)
    chip = resolved.chip
    applied, notes = set(), []
    omni = engine == "omni-infer"
    if opt is not None:
        for name in OMNI_ONLY:
            if getattr(opt, name) is None:
                continue
            if omni:
                applied.add(name)
            else:
                notes.append(f"optimize.{name}: Omni-Infer only; not applied on engine `{engine}`")
        ascend_omni = omni and _is_ascend(chip)
        va_uses = {}
        if engine == "vllm-ascend" and _is_ascend(chip):
            from sncc.lowering.ascend_options import plan_options
            va_uses = {u.option: u for u in plan_options(plan, resolved)}
        for name, on in (("micro_batch", opt.micro_batch >= 2), ("superkernel_layers", opt.superkernel_layers > 0)):
            if not on:
                continue
            use = va_uses.get(name)
            if ascend_omni or (use is not None and use.written):
                applied.add(name)
                continue
            if use is not None:
                why = use.absent or "; ".join(u.message for u in use.unmet) or "the build does not write it"
            elif name == "micro_batch":
                why = "the build writes it only for Omni-Infer and vllm-ascend on Ascend"
            else:
                why = "Ascend SuperKernel fusion, written by the build only for Omni-Infer and vllm-ascend on Ascend"
            notes.append(f"optimize.{name}: not applied on engine `{engine}` on "
                         f"{getattr(chip, 'id', None) or 'this chip'}: {why}")
    sp = plan.speculative
    if sp is not None:
        n_mtp = getattr(resolved.arch, "num_nextn_predict_layers", 0) or 0
        if sp.method == "mtp" and not n_mtp:
            notes.append(f"speculative: method mtp needs MTP layers; model "
                         f"`{getattr(resolved.arch, 'id', '?')}` has num_nextn_predict_layers = 0, "
                         "simulated without speculation")
        else:
            applied.add("speculative")
    return applied, notes


def captured_sizes(plan, role) -> tuple | None:
    """Decode batch sizes [tokens per DP group] a vLLM / vllm-ascend role captures as graphs —
    the plan's ``graph { capture_sizes }``, else the engine's default grid
    (``software.toml [[capture_grid]]``) up to ``max_num_seqs × (1 + draft)`` — the facts check
    SN5006 uses; steps above the largest run eager (:class:`sncc.sim.step_model.StepModel`).
    None (the profile's gear rule) for other engines or when the grid is not catalogued."""
    eng = plan.engine.kind
    if eng not in ("vllm", "vllm-ascend"):
        return None
    g = plan.graph
    if g is not None and g.capture_sizes:
        return tuple(sorted(int(x) for x in g.capture_sizes))
    from sncc import catalog
    grid = catalog.capture_grid(eng)
    if grid is None:
        return None
    draft = plan.speculative.draft_tokens if plan.speculative is not None else 0
    sizes = grid.sizes_up_to(role.max_num_seqs * (1 + draft))
    return sizes or None


def graph_mixed(plan) -> bool:
    """Whether steps mixing prefill and decode tokens run in captured graphs: False for vLLM's
    ``cudagraph_mode`` ``FULL_DECODE_ONLY`` and ``FULL`` (graphs of uniform decode batches only; a
    mixed batch runs eager), True otherwise (``PIECEWISE`` / ``FULL_AND_PIECEWISE``, vLLM's default,
    and the other engines' graph modes)."""
    g = plan.graph
    mode = (g.cudagraph_mode if g is not None else None) or ""
    return mode.upper() not in ("FULL_DECODE_ONLY", "FULL")


def expert_parallel(plan, role, arch) -> bool:
    """Whether ``role`` places routed experts by expert parallelism (dispatch/combine
    all-to-all) rather than tensor-sharding them: the plan's ``expert_parallel`` when the language
    has it (docs/design.md §2.1), else on for a MoE model spread over more than one device (what
    every plan meant by ``ep``)."""
    v = getattr(role, "expert_parallel", None)
    if v is not None:
        return bool(v)
    return bool(arch is not None and arch.is_moe and role.tp * role.ep > 1)


def draft_cost_of(sp) -> float | None:
    """Draft cost of plan ``speculative`` block ``sp`` as a fraction of a target decode step:
    the plan's ``draft_cost``; 0 for n-gram; engines.toml ``draft_model_cost_fraction`` for
    ``draft_model``; None (MTP/EAGLE: the profile's draft-layer cost) otherwise — the same
    defaults as the SN7002 check (``sncc.checks.speculative``)."""
    if sp.draft_cost is not None:
        return float(sp.draft_cost)
    if sp.method == "ngram":
        return 0.0
    if sp.method == "draft_model":
        from sncc.catalog.engine_defaults import engine_defaults
        return float(engine_defaults()["draft_model_cost_fraction"])
    return None


class MissingChipFact(ValueError):
    """The plan's chip lacks a fact the simulator's cost model needs.

    ``chip`` is the catalog id, ``missing`` the names of the absent facts (``hbm_bandwidth``,
    ``hbm_bytes``, ``peak_flops.<dtype>``).  The catalog leaves a fact absent when no source
    gives it (sncc/catalog/data/chips.toml); the simulator never substitutes a number."""

    def __init__(self, chip: str, missing: list):
        self.chip, self.missing = chip, list(missing)
        super().__init__(
            f"cannot simulate chip `{chip}`: the catalog has no sourced value for "
            f"{', '.join(self.missing)} (sncc/catalog/data/chips.toml leaves unsourced facts absent, "
            "and the simulator does not guess them). A calibration profile (--profile) holds fitted "
            "efficiencies, not chip facts, so it cannot supply them; add the fact with its source to "
            f"[chips.{chip}] in sncc/catalog/data/chips.toml, or plan for a chip the catalog describes")


def missing_chip_facts(chip, compute_dtype: str) -> list:
    """Names of the chip facts the simulator needs but the catalog lacks (empty: none).

    Needed: ``hbm_bytes`` (KV pool sizing, bytes), ``hbm_bandwidth`` (memory roofline,
    B/s) and a dense peak FLOP/s for ``compute_dtype`` and for bf16 activations, with the
    fallbacks of :func:`sncc.sim.cost_roofline.peak_for`."""
    from sncc.sim.cost.roofline import peak_for

    missing = [k for k in ("hbm_bytes", "hbm_bandwidth") if not getattr(chip, k, None)]
    for dt in dict.fromkeys((compute_dtype, "bf16")):
        try:
            peak_for(chip, dt)
        except ValueError:
            missing.append(f"peak_flops.{dt}")
    return missing


def spec_from_plan(plan, resolved, *, seed: int = 0, profile: str | None = None):
    """Build the :class:`SimSpec` of ``plan`` (with its :class:`Resolved` facts).

    Raises ``ValueError`` when a fact the simulator needs is missing (unknown
    model or chip): ``sncc check`` reports those first; :class:`MissingChipFact` (a
    ``ValueError``) when the known chip lacks a sourced fact the cost model needs
    (:func:`missing_chip_facts`, e.g. ``hbm_bandwidth`` of ascend-910b4).
    """
    from sncc import catalog
    from sncc.capacity import hccl_buffsize_mb, plan_is_moe_ep
    from sncc.sim.spec import Features, LengthDist, RoleSpec, SimSpec, SloTarget, Workload

    if resolved.arch is None or resolved.chip is None:
        raise ValueError("the simulator needs a known model and chip")
    missing = missing_chip_facts(resolved.chip, catalog.quant(resolved.quant or "bf16").compute_dtype)
    if missing:
        raise MissingChipFact(resolved.chip.id, missing)
    from sncc.capacity import redundant_experts_per_device, role_memory
    roles = []
    arch = resolved.arch
    mixed_graphs = graph_mixed(plan)
    for name, role in plan.roles():
        mem = role_memory(plan, resolved, name, role)
        roles.append((name, RoleSpec(
            instances=role.instances, devices=role.devices, tp=role.tp, ep=role.ep, pp=role.pp,
            max_num_batched_tokens=role.max_num_batched_tokens, chunk_size=role.chunked_prefill,
            max_num_seqs=role.max_num_seqs,
            kv_budget_bytes_per_device=mem.kv_budget if mem is not None else None,
            block_size=plan.kv_cache.block_size, graph_mode=role.graph_mode,
            graph_gears=captured_sizes(plan, role), graph_mixed=mixed_graphs,
            expert_parallel=expert_parallel(plan, role, arch),
            redundant_experts=redundant_experts_per_device(plan, arch, role),
            memory_utilization=role.memory_utilization or plan.hardware.memory_utilization,
            memory=mem,
        )))
    opt = plan.optimize
    applied, notes = applicable_features(plan, resolved)
    spec_dec = plan.speculative if "speculative" in applied else None
    features = Features(
        micro_batch=opt.micro_batch if opt and "micro_batch" in applied else 1,
        graph_mode=True,
        superkernel=bool(opt and opt.superkernel_layers > 0 and "superkernel_layers" in applied),
        mtp=(spec_dec.draft_tokens, spec_dec.acceptance) if spec_dec else None,
        draft_cost=draft_cost_of(spec_dec) if spec_dec else None,
        draft_kind="eagle" if spec_dec is not None and spec_dec.method in ("eagle", "eagle3") else "mtp",
        redundant_experts=0,    # per role: RoleSpec.redundant_experts
        omni_attn_compress_ratio=(opt.omni_attn.compress_ratio
                                  if opt and opt.omni_attn and "omni_attn" in applied else None),
        prefix_cache_hit_rate=opt.prefix_cache_hit if opt else 0.0,
    )
    wl = plan.workload

    def dist(d):
        return LengthDist(kind=d.dist, mean=d.mean, max=d.max, min=d.min)

    trace = None
    requests = wl.requests
    if wl.trace:
        from sncc.sim.trace import read_trace, trace_path
        span = wl.span_of("trace")
        # raises TraceError (SN2015 from `sncc check` reports it first)
        trace = tuple(read_trace(trace_path(wl.trace, span.file if span is not None else None),
                                 max_input=wl.input.max, max_output=wl.output.max))
        if trace[0][2] is not None and wl.is_default("requests"):
            requests = len(trace)
    concurrency = wl.concurrency if (wl.concurrency or not wl.rate) else None
    extra = dict(burstiness=wl.burstiness, trace=trace, turns=wl.turns, think_time=wl.think_time)
    workload = Workload(requests=requests, input=dist(wl.input), output=dist(wl.output),
                        concurrency=concurrency if wl.rate is None else None,
                        rate=wl.rate, max_tokens=resolved.max_tokens, seed=seed, **extra)
    if workload.concurrency is None and workload.rate is None and not (trace and trace[0][2] is not None):
        workload = Workload(requests=requests, input=workload.input, output=workload.output,
                            concurrency=min(requests, 64), max_tokens=resolved.max_tokens, seed=seed, **extra)
    slos = tuple(SloTarget(t.metric, t.stat, t.op, t.target) for t in plan.slo)
    system = resolved.system
    return SimSpec(
        model=resolved.arch, chip=resolved.chip, roles=tuple(roles), workload=workload,
        quant=resolved.quant or "bf16", kv_dtype=resolved.kv_dtype,
        links=tuple(system.links) if system is not None else (),
        devices_per_node=system.devices_per_node if system is not None else (resolved.chip.devices_per_node or 8),
        profile=profile or PROFILE_BY_GENERATION.get(resolved.chip.generation, "ascend-a3"),
        features=features, slos=slos, hccl_buffsize_mb=hccl_buffsize_mb(plan.env, plan_is_moe_ep(plan, resolved.arch)),
        devices_available=resolved.devices_available, notes=tuple(notes),
        # Omni-Infer's reservation of prompt + max_tokens is fitted to seed 000 (profile
        # [policy]); vLLM and vllm-ascend allocate KV blocks on demand and preempt
        kv_admission="reserve-max-tokens" if plan.engine.kind == "omni-infer" else "on-demand",
        engine=plan.engine.kind,
    )


def run_plan(plan, resolved, *, seed: int = 0, profile: str | None = None):
    """Simulate ``plan`` and return the :class:`~sncc.sim.metrics.SimResult`."""
    from sncc.sim.engine.run import simulate_spec as simulate

    return simulate(spec_from_plan(plan, resolved, seed=seed, profile=profile))
