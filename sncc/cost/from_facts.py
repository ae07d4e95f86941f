"""A plan's cost-model inputs, read from its facts: the one place the cost model (and through it
the simulator and the checks' step estimates) reads plan fields.

* :func:`role_specs` — one :class:`~sncc.cost.inputs.RoleSpec` per role from
  :class:`sncc.facts.model.RoleFacts` (parallelism, expert parallelism, redundant experts,
  per-DP-rank budgets, graph mode and captured sizes, ``HCCL_BUFFSIZE``) with the KV pool
  ``sncc check`` computes (:func:`sncc.capacity.role_memory`);
* :func:`features` — the :class:`~sncc.cost.inputs.Features` the build deploys
  (:func:`applicable_features`: an optimisation is simulated exactly where the build writes it);
* :func:`cost_spec` — both, with the model, chip, links and profile: a :class:`CostSpec`;
* :func:`step_model` — the :class:`~sncc.cost.step.StepModel` of one role (the SN5006/SN7002
  step estimates of ``sncc check``).

The calibration profile is chosen by the chip's generation (:data:`PROFILE_BY_GENERATION`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Tuple

from sncc.cost.inputs import Features, RoleSpec

#: chip generation → profile id under sncc/catalog/data/profiles
PROFILE_BY_GENERATION = {
    "atlas-a3": "ascend-a3",
    "atlas-a2": "ascend-a2",
    "ascend-950": "ascend-950",
    "hopper": "nvidia-h200",
    "blackwell": "nvidia-h200",
}

#: optimisations only Omni-Infer implements (its omni_attn / omni_proxy config sections); the
#: simulator credits them on no other engine
OMNI_ONLY = ("omni_attn", "omni_proxy")


@dataclass(frozen=True)
class CostSpec:
    """The deployment as the step cost model sees it (the fields :class:`~sncc.cost.step.StepModel`
    and :mod:`sncc.capacity` read; :class:`~sncc.sim.spec.SimSpec` has the same ones).

    ``weight_bytes_per_param`` maps a weight group to the checkpoint's bytes per parameter
    (``Facts.weight_bytes_per_param``; None = the quantization's, :func:`sncc.capacity.bytes_per_param`)."""

    model: Any
    chip: Any
    roles: Tuple[Tuple[str, RoleSpec], ...]
    quant: str = "bf16"
    kv_dtype: str = "bf16"
    kv_bytes_per_token: Optional[float] = None
    links: Tuple[Any, ...] = ()
    devices_per_node: int = 8
    profile: str = "ascend-a3"
    features: Features = field(default_factory=Features)
    quant_weight_bytes: Optional[float] = None
    quant_compute_dtype: Optional[str] = None
    weight_bytes_per_param: Optional[Mapping[str, float]] = None
    hccl_buffsize_mb: Optional[int] = None
    engine: Optional[str] = None
    notes: Tuple[str, ...] = ()

    def role(self, name: str) -> Optional[RoleSpec]:
        """The RoleSpec called ``name`` or None."""
        return dict(self.roles).get(name)


class MissingChipFact(ValueError):
    """The plan's chip lacks a fact the cost model needs.

    ``chip`` is the catalog id, ``missing`` the names of the absent facts (``hbm_bandwidth``,
    ``hbm_bytes``, ``peak_flops.<dtype>``).  The catalog leaves a fact absent when no source
    gives it (sncc/catalog/data/chips.toml); the cost model never substitutes a number."""

    def __init__(self, chip: str, missing: list):
        self.chip, self.missing = chip, list(missing)
        #: why the fact cannot come from elsewhere (the diagnostic's note: neither message nor help)
        self.why = ("sncc/catalog/data/chips.toml leaves unsourced facts absent, and the simulator does not "
                    "guess them; a calibration profile (--profile) holds fitted efficiencies, not chip facts, "
                    "so it cannot supply them")
        super().__init__(
            f"cannot simulate chip `{chip}`: the catalog has no sourced value for "
            f"{', '.join(self.missing)} ({self.why}); add the fact with its source to "
            f"[chips.{chip}] in sncc/catalog/data/chips.toml, or plan for a chip the catalog describes")


def missing_chip_facts(chip, compute_dtype: str) -> list:
    """Names of the chip facts the cost model needs but the catalog lacks (empty: none):
    ``hbm_bytes`` (KV pool sizing, bytes), ``hbm_bandwidth`` (memory roofline, B/s) and a dense
    peak FLOP/s for ``compute_dtype`` and for bf16 activations, with the fallbacks of
    :func:`sncc.cost.roofline.peak_for`."""
    from sncc.cost.roofline import peak_for

    missing = [k for k in ("hbm_bytes", "hbm_bandwidth") if not getattr(chip, k, None)]
    for dt in dict.fromkeys((compute_dtype, "bf16")):
        try:
            peak_for(chip, dt)
        except ValueError:
            missing.append(f"peak_flops.{dt}")
    return missing


def decoding_role(facts) -> Optional[str]:
    """The role that decodes: ``decode`` (disaggregated) or ``serve``; None without one."""
    return "decode" if "decode" in facts.roles else "serve" if "serve" in facts.roles else None


def applicable_features(plan, facts) -> tuple:
    """(names of the plan's optimisations the cost model applies, notes on the ones it does not).

    What the build deploys is what is simulated:

    * ``omni_attn``, ``omni_proxy``: Omni-Infer only (its own config sections; no other engine
      reads them).  Redundant experts come per role from the facts (``eplb`` or
      ``omni_placement``), on every engine that builds them.
    * ``micro_batch = 2`` and ``superkernel_layers``: on Ascend, an engine whose adapter writes them
      natively (``optimize_options`` in its pins.toml: Omni-Infer's ``enable_prefill_micro_batch`` /
      ``use_super_kernel``), and an engine with release-specific spellings (vllm-ascend)
      when its release spells them and the plan meets the release's preconditions
      (``VLLM_ASCEND_ENABLE_DBO``, ``torchair_graph_config.enable_super_kernel``: exactly when
      :func:`sncc.lowering.ascend_options.plan_options` says the build writes them), and only when
      the build writes them for a role of the plan (:attr:`sncc.facts.Facts.optimize_roles`:
      Omni-Infer's ``enable_prefill_micro_batch`` goes to prefill instances only, so an aggregated
      plan gets no micro-batch overlap).  vLLM's ``--enable-dbo`` is not emitted, so it is not credited.
    * speculative decoding: the setting in force on the decoding role
      (``RoleFacts.speculative``); ``mtp`` only for a model with MTP layers.
    """
    from sncc.engines.registry import plan_adapter

    opt = plan.optimize
    engine = plan.engine.kind
    adapter = plan_adapter(plan)
    applied, notes = set(), []
    if opt is not None:
        for name in OMNI_ONLY:
            if getattr(opt, name) is None:
                continue
            if adapter is not None and adapter.supports_component(name):
                applied.add(name)
            else:
                notes.append(f"optimize.{name}: Omni-Infer only; not applied on engine `{engine}`")
        native = set(adapter.data.get("optimize_options", ())) if adapter is not None and facts.is_ascend else set()
        va_uses = ({u.option: u for u in adapter.release_options(plan, facts)}
                   if adapter is not None and facts.is_ascend else {})
        for name, on in (("micro_batch", opt.micro_batch >= 2), ("superkernel_layers", opt.superkernel_layers > 0)):
            if not on:
                continue
            use = va_uses.get(name)
            # the roles the build writes it for (Facts.optimize_roles): none of the plan's = not applied
            roles = getattr(facts, "optimize_roles", {}).get(name)
            # an engine with release-specific spellings decides per release; otherwise its adapter's list
            if (use.written if use is not None else name in native) and roles != ():
                applied.add(name)
                continue
            if roles == ():
                why = ("the build writes it for no role of this plan: "
                       + ", ".join(adapter.option_roles(name) or ()) + " roles only")
            elif use is not None:
                why = use.absent or "; ".join(u.message for u in use.unmet) or "the build does not write it"
            elif name == "micro_batch":
                why = "the build writes it only for Omni-Infer and vllm-ascend on Ascend"
            else:
                why = "Ascend SuperKernel fusion, written by the build only for Omni-Infer and vllm-ascend on Ascend"
            chip = facts.chip
            notes.append(f"optimize.{name}: not applied on engine `{engine}` on "
                         f"{getattr(chip, 'id', None) or 'this chip'}: {why}")
    role = decoding_role(facts)
    sp = facts.roles[role].speculative if role is not None else None
    if sp is not None:
        n_mtp = getattr(facts.arch, "num_nextn_predict_layers", 0) or 0
        if sp.method == "mtp" and not n_mtp:
            notes.append(f"speculative: method mtp needs MTP layers; model "
                         f"`{getattr(facts.arch, 'id', '?')}` has num_nextn_predict_layers = 0, "
                         "simulated without speculation")
        else:
            applied.add("speculative")
    return applied, notes


def captured_sizes(plan, rf):
    """Decode batch sizes [tokens per DP rank] a vLLM / vllm-ascend role captures as graphs — the
    plan's ``graph { capture_sizes }``, else the engine's default grid (``software.toml
    [[capture_grid]]``) up to ``max_num_seqs × (1 + draft)`` of the role (``rf``, its
    :class:`~sncc.facts.model.RoleFacts`) — the grid check SN5006 uses; steps above the largest
    run eager.  None (the profile's gear rule) for other engines or when the grid is not
    catalogued.  Returns a tuple (the plan's list) or a lazy sorted
    :class:`sncc.catalog.GridSizes` (the default grid: never materialised, so a huge
    ``max_num_seqs`` costs nothing, issue 14 item 18)."""
    from sncc.engines.registry import plan_adapter

    adapter = plan_adapter(plan)
    eng = adapter.capture_grid_engine if adapter is not None else None
    if eng is None:
        return None
    g = plan.graph
    if g is not None and g.capture_sizes:
        return tuple(sorted(int(x) for x in g.capture_sizes))
    from sncc import catalog
    grid = catalog.capture_grid(eng)
    if grid is None:
        return None
    sizes = grid.sizes_up_to(rf.max_num_seqs * (1 + rf.draft_tokens))  # lazy: never materialised
    return sizes if len(sizes) else None


def graph_mixed(plan) -> bool:
    """Whether steps mixing prefill and decode tokens run in captured graphs: False for vLLM's
    ``cudagraph_mode`` ``FULL_DECODE_ONLY`` and ``FULL`` (graphs of uniform decode batches only; a
    mixed batch runs eager), True otherwise."""
    g = plan.graph
    mode = (g.cudagraph_mode if g is not None else None) or ""
    return mode.upper() not in ("FULL_DECODE_ONLY", "FULL")


def draft_cost_of(sp) -> float | None:
    """Draft cost of a speculative setting (:class:`~sncc.facts.model.SpeculativeFacts`) as a
    fraction of a target decode step: its ``draft_cost``; 0 for a lookup on the host (n-gram,
    suffix: :data:`sncc.engines.base.HOST_DRAFT_METHODS`); engines.toml
    ``draft_model_cost_fraction`` for ``draft_model``; None (MTP/EAGLE: the profile's draft-layer
    cost) otherwise — the same defaults as the SN7002 check."""
    if sp.draft_cost is not None:
        return float(sp.draft_cost)
    from sncc.engines.base import HOST_DRAFT_METHODS

    if sp.method in HOST_DRAFT_METHODS:
        return 0.0
    if sp.method == "draft_model":
        from sncc.catalog.engine_defaults import engine_defaults
        return float(engine_defaults()["draft_model_cost_fraction"])
    return None


def role_specs(plan, facts) -> tuple:
    """``((name, RoleSpec), ...)`` of every role, read from its :class:`~sncc.facts.model.RoleFacts`,
    with the KV pool and memory breakdown of :func:`sncc.capacity.role_memory`."""
    from sncc.capacity import hccl_buffsize_mb, plan_is_moe_ep, role_memory

    mixed = graph_mixed(plan)
    out = []
    for name, role in plan.roles():
        rf = facts.roles[name]
        mem = role_memory(plan, facts, name, role)
        raw = rf.env_value("HCCL_BUFFSIZE")
        out.append((name, RoleSpec(
            instances=rf.instances, devices=rf.devices, tp=rf.tp, dp=rf.dp, pp=rf.pp,
            max_num_batched_tokens=rf.max_num_batched_tokens, chunk_size=rf.chunk,
            max_num_seqs=rf.max_num_seqs,
            kv_budget_bytes_per_device=mem.kv_budget if mem is not None else None,
            block_size=plan.kv_cache.block_size, graph_mode=rf.graph_mode,
            graph_gears=captured_sizes(plan, rf) if rf.graph_mode else None, graph_mixed=mixed,
            expert_parallel=rf.expert_parallel, redundant_experts=rf.redundant_experts,
            memory_utilization=rf.memory_utilization,
            hccl_buffsize_mb=hccl_buffsize_mb({"HCCL_BUFFSIZE": raw} if raw is not None else {},
                                              plan_is_moe_ep(facts)),
            memory=mem, dp_lockstep=rf.dp_lockstep, all2all_backend=rf.all2all_backend,
            omni_attn=rf.omni_attn,
        )))
    return tuple(out)


def micro_batch_steps(adapter) -> str:
    """Which steps the engine of ``adapter`` runs as two micro-batches (its ``pins.toml
    micro_batch_steps``: ``all``, ``prefill`` or ``prefill-multi``; see
    :class:`~sncc.cost.inputs.Features`); ``all`` without an adapter or the key.
    Raises ValueError for another value."""
    rule = adapter.data.get("micro_batch_steps", "all") if adapter is not None else "all"
    if rule not in ("all", "prefill", "prefill-multi"):
        raise ValueError(f"pins.toml micro_batch_steps = {rule!r}: expected all, prefill or prefill-multi")
    return rule


def features(plan, facts, applied: set) -> Features:
    """The :class:`Features` of the plan given the optimisations ``applied``
    (:func:`applicable_features`)."""
    from sncc.engines.registry import plan_adapter

    opt = plan.optimize
    role = decoding_role(facts)
    sp = facts.roles[role].speculative if (role is not None and "speculative" in applied) else None
    adapter = plan_adapter(plan)
    return Features(
        micro_batch=opt.micro_batch if opt and "micro_batch" in applied else 1,
        micro_batch_steps=micro_batch_steps(adapter),
        graph_mode=True,
        superkernel=bool(opt and opt.superkernel_layers > 0 and "superkernel_layers" in applied),
        mtp=(sp.draft_tokens, sp.acceptance) if sp else None,
        draft_cost=draft_cost_of(sp) if sp else None,
        draft_kind="eagle" if sp is not None and sp.method in ("eagle", "eagle3") else "mtp",
        # no hit where the role that computes prompts runs without prefix caching (the facts' switch in
        # force: the plan's `prefix_caching`, the engine default, or an engine that turns it off; SN5023)
        prefix_cache_hit_rate=opt.prefix_cache_hit if opt and not facts.roles_without_prefix_cache() else 0.0,
    )


def cost_spec(plan, facts, *, profile: str | None = None) -> CostSpec:
    """The :class:`CostSpec` of ``plan`` (with its :class:`~sncc.facts.model.Facts`).

    Raises ``ValueError`` when the model or chip is unknown (``sncc check`` reports those first),
    :class:`MissingChipFact` (a ``ValueError``) when the chip lacks a sourced fact the cost model
    needs (:func:`missing_chip_facts`)."""
    from sncc import catalog
    from sncc.capacity import hccl_buffsize_mb, plan_is_moe_ep

    if facts.arch is None or facts.chip is None:
        raise ValueError("the cost model needs a known model and chip")
    missing = missing_chip_facts(facts.chip, catalog.quant(facts.quant or "bf16").compute_dtype)
    if missing:
        raise MissingChipFact(facts.chip.id, missing)
    applied, notes = applicable_features(plan, facts)
    system = facts.system
    return CostSpec(
        model=facts.arch, chip=facts.chip, roles=role_specs(plan, facts),
        quant=facts.quant or "bf16", kv_dtype=getattr(facts, "kv_dtype_run", facts.kv_dtype),
        links=tuple(system.links) if system is not None else (),
        devices_per_node=system.devices_per_node if system is not None else (facts.chip.devices_per_node or 8),
        profile=profile or PROFILE_BY_GENERATION.get(facts.chip.generation, "ascend-a3"),
        features=features(plan, facts, applied),
        weight_bytes_per_param=getattr(facts, "weight_bytes_per_param", None) or None,
        hccl_buffsize_mb=hccl_buffsize_mb(dict(plan.env), plan_is_moe_ep(facts)),
        engine=plan.engine.kind, notes=tuple(notes),
    )


def step_model(plan, facts, role_name: str, *, graph: bool | None = None, mtp=None, profile: str | None = None):
    """The :class:`~sncc.cost.step.StepModel` of role ``role_name`` of ``plan``.

    ``graph`` forces graph mode on or off (captured sizes then follow the profile's rule);
    ``mtp`` replaces the speculative setting (``(draft tokens, acceptance)`` or None).
    Raises as :func:`cost_spec`, and KeyError for a role the plan lacks."""
    from sncc.cost.profile import load_profile
    from sncc.cost.step import StepModel

    spec = cost_spec(plan, facts, profile=profile)
    spec = dataclasses.replace(spec, features=dataclasses.replace(spec.features, mtp=mtp))
    role = dict(spec.roles)[role_name]
    if graph is not None:
        role = dataclasses.replace(role, graph_mode=graph, graph_gears=None)
    return StepModel(spec, role_name, role, load_profile(spec.profile))
