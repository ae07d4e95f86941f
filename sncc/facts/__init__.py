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

from sncc.facts.model import EnvValue, EplbFacts, Facts, OmniAttnLayout, RoleFacts, SpeculativeFacts

__all__ = ["EnvValue", "EplbFacts", "Facts", "OmniAttnLayout", "RoleFacts", "SpeculativeFacts", "derive"]


def derive(plan, base_dir: str | None = None) -> Facts:
    """All :class:`Facts` of ``plan`` (never raises for bad input).

    A relative ``model.weights`` path is read relative to ``base_dir`` (the folder of the file
    that wrote it) when given.
    """
    from sncc.facts.catalog_facts import resolve_catalog

    from sncc.catalog.engine_defaults import engine_defaults

    f = resolve_catalog(plan, base_dir=base_dir)
    derive_engine_release(plan, f)
    _derive_kv_dtype_run(plan, f)
    row = engine_defaults().get("expert_placement", {}).get(plan.engine.kind)
    f.even_expert_split = bool(row["even_split"]) if row is not None else None
    derive_roles(plan, f)
    from sncc.facts.workload import derive_workload

    derive_workload(plan, f)
    from sncc.facts.draft import draft_checkpoints
    from sncc.facts.weights import weight_bytes_per_param

    f.draft_checkpoints = draft_checkpoints(plan, f.roles, base_dir, f.diagnostics)
    from sncc.plan.model import watch_reads

    (f.weight_bytes_per_param, f.weight_bytes_note), rejected = watch_reads(weight_bytes_per_param, f)
    if rejected:    # sized from a stand-in for a rejected value (`quant = w8a9`): no check judges it
        f.poisoned_from["weight_bytes_per_param"] = rejected
    return f


def derive_roles(plan, f: Facts) -> None:
    """Set :attr:`Facts.roles` of ``plan``: each role's :func:`~sncc.facts.roles.role_facts`, then
    what depends on the plan as a whole (the all-to-all backend, OmniAttn's layout).  ``derive``
    calls it once; a search candidate, which changes only the roles, calls it again on a copy of
    the base facts (:func:`sncc.search.candidate.candidate_facts`), so a candidate is simulated
    with what its own build would derive."""
    from sncc.facts.roles import role_facts
    from sncc.plan.model import derive_watched

    util = plan.hardware.memory_utilization
    # a role's facts derived from a key the builder rejected are poisoned: no check cascades from them
    f.roles = {name: derive_watched(role_facts, plan, name, role, f.arch, util) for name, role in plan.roles()}
    _derive_all2all(plan, f)
    _derive_mc2_window(plan, f)
    _derive_omni_attn(plan, f)
    _derive_optimize_roles(plan, f)


def _derive_optimize_roles(plan, f: Facts) -> None:
    """Set :attr:`Facts.optimize_roles`: for each ``optimize`` option the plan turns on, the roles
    its engine writes it for (the adapter's option table), so that the build, the checks and the
    simulator agree on where it applies."""
    from sncc.engines.registry import UnknownEngine, adapter_for

    opt = getattr(plan, "optimize", None)
    f.optimize_roles = {}
    if opt is None:
        return
    try:
        adapter = adapter_for(plan.engine.kind)
    except UnknownEngine:
        return
    for name, on in (("micro_batch", opt.micro_batch >= 2), ("superkernel_layers", opt.superkernel_layers > 0)):
        roles = adapter.option_roles(name) if on else None
        if roles is not None:
            f.optimize_roles[name] = tuple(r for r in f.roles if r in roles)


def engine_release_of(plan, adapter=None) -> tuple[str | None, str]:
    """(release, origin) of ``plan``'s engine: the ``version`` it names (origin ``"plan"``), else the
    one the build uses, the adapter's default pin (:meth:`~sncc.engines.base.EngineAdapter.choose` with
    no version; origin ``"default"``), else (None, ``""``) for an engine sncc has no adapter for.
    The one place the default pin is chosen: :func:`derive_engine_release` stores it in the facts,
    and the builder (which runs before the facts) asks here."""
    from sncc.engines.registry import UnknownEngine, adapter_for

    eng = plan.engine
    if eng.version:
        return eng.version, "plan"
    if adapter is None:
        try:
            adapter = adapter_for(eng.kind)
        except UnknownEngine:
            return None, ""
    return adapter.choose(None).pin.version, "default"


def derive_engine_release(plan, f: Facts) -> None:
    """Set :attr:`Facts.engine_version` (and its origin and span): the release the plan names, else
    the one the build uses, the adapter's default pin (:func:`engine_release_of`), so that every
    release check judges the release the launch files are for."""
    eng = plan.engine
    f.engine_version, f.engine_version_origin = engine_release_of(plan)
    if f.engine_version_origin == "plan":
        f.engine_version_span = eng.span_of("version")
    elif f.engine_version_origin == "default":
        f.engine_version_span = eng.span_of("kind") or eng.name_span


def _derive_kv_dtype_run(plan, f: Facts) -> None:
    """Set :attr:`Facts.kv_dtype_run`: the KV dtype the engine runs for the plan's (the adapter's answer)."""
    from sncc.engines.registry import UnknownEngine, adapter_for

    f.kv_dtype_run = f.kv_dtype
    try:
        adapter = adapter_for(plan.engine.kind)
    except UnknownEngine:
        return
    f.kv_dtype_run, f.kv_dtype_run_note = adapter.kv_dtype_run(plan.kv_cache.dtype)
    f.kv_connector_offer = connector_offer(plan, adapter, f.engine_version)


def connector_offer(plan, adapter=None, version: str | None = None):
    """The :class:`~sncc.engines.base.ConnectorOffer` of ``plan``'s engine release (``version``:
    :attr:`Facts.engine_version`; without it :func:`engine_release_of`) and roles (an aggregated
    plan: a ``serve`` role), or None for an engine sncc has no adapter for."""
    if adapter is None:
        from sncc.engines.registry import UnknownEngine, adapter_for

        try:
            adapter = adapter_for(plan.engine.kind)
        except UnknownEngine:
            return None
    version = version or engine_release_of(plan, adapter)[0]
    return adapter.connector_offer(version, not plan.disaggregated)


def omni_attn_layout(adapter) -> OmniAttnLayout | None:
    """OmniAttn's KV layout on the engine of ``adapter`` (its pins.toml ``[omni_attn]``
    ``sink_blocks``, ``recent_blocks``, ``beta``, ``pattern_*``), or None when the engine has no
    OmniAttn."""
    if adapter is None or not adapter.supports_component("omni_attn"):
        return None
    data = adapter.data.get("omni_attn", {})
    if "pattern_layers" not in data:
        return None
    return OmniAttnLayout(int(data["pattern_compressed_layers"]), int(data["pattern_layers"]),
                          int(data["sink_blocks"]), int(data["recent_blocks"]), float(data["beta"]),
                          str(data.get("layout_source", "")))


def _derive_omni_attn(plan, f: Facts) -> None:
    """Set :attr:`RoleFacts.omni_attn` on the roles OmniAttn runs on: the plan writes
    ``optimize { omni_attn }``, the engine has the component and the role is a KV consumer
    (Omni-Infer ``platform.py``: ``kv_transfer_config is None or kv_role == 'kv_consumer'``);
    the layout is the adapter's ``[omni_attn]`` data.  Where that data says ``prefix_caching =
    false`` (Omni-Infer release_v0.3.0's OmniAttn KV cache manager), those roles'
    :attr:`RoleFacts.prefix_caching` is off whatever the plan wrote."""
    from dataclasses import replace

    from sncc.engines.registry import UnknownEngine, adapter_for

    opt = getattr(plan, "optimize", None)
    if opt is None or opt.omni_attn is None:
        return
    try:
        adapter = adapter_for(plan.engine.kind)
    except UnknownEngine:
        return
    layout = omni_attn_layout(adapter)
    if layout is None:
        return
    data = adapter.data.get("omni_attn", {})
    caching = data.get("prefix_caching")   # False: OmniAttn's roles run without prefix caching
    for name, rf in list(f.roles.items()):
        if isinstance(rf, RoleFacts) and rf.kv_role != "kv_producer":
            notes = {**rf.notes, "omni_attn": (f"OmniAttn: {layout.compressed_layers} of {layout.layers} layers keep "
                                               f"{layout.sink_blocks} + {layout.recent_blocks} blocks per request; full "
                                               f"layers hold {layout.full_layer_token_gain:.2f}x the tokens")}
            pc = rf.prefix_caching
            if caching is False and pc:
                pc = False
                notes["prefix_caching"] = (f"off: {adapter.label}'s OmniAttn KV cache manager runs without prefix "
                                           f"caching whatever --enable-prefix-caching says; source: "
                                           f"{data.get('prefix_caching_source', '')}")
            f.roles[name] = replace(rf, omni_attn=layout, prefix_caching=pc, notes=notes)


def _derive_all2all(plan, f: Facts) -> None:
    """Set each role's :attr:`RoleFacts.all2all_backend` (:func:`sncc.facts.roles.all2all_backend`) at
    the release judged, :attr:`Facts.engine_version` (written, else sncc's default pin; a facts
    object without it asks :func:`engine_release_of`); a plan value the release refuses becomes
    SN4082 at the env entry."""
    from dataclasses import replace

    from sncc.diagnostics import codes
    from sncc.diagnostics.model import diag
    from sncc.engines.registry import UnknownEngine, adapter_for
    from sncc.facts.roles import all2all_backend

    try:
        adapter = adapter_for(plan.engine.kind)
    except UnknownEngine:
        return
    version = f.engine_version or engine_release_of(plan, adapter)[0]
    for name, rf in list(f.roles.items()):
        if not isinstance(rf, RoleFacts):
            continue
        backend, note, problem = all2all_backend(adapter, version, rf)
        if problem is not None:
            ev = rf.env.get("VLLM_ALL2ALL_BACKEND")
            if not any(d.code is codes.ALL2ALL_BACKEND_NOT_A_CHOICE and d.span == ev.span for d in f.diagnostics):
                f.diagnostics.append(diag(codes.ALL2ALL_BACKEND_NOT_A_CHOICE, problem, ev.span,
                                          help="use one of the values listed, or remove the entry for the release default",
                                          path=("env", "VLLM_ALL2ALL_BACKEND")))
        if backend is not None or note:
            f.roles[name] = replace(rf, all2all_backend=backend, notes={**rf.notes, "all2all_backend": note})


def _derive_mc2_window(plan, f: Facts) -> None:
    """Cap each decoding role's :attr:`RoleFacts.dispatch_tokens_per_rank` at the fused MoE dispatch
    (MC2) token capacity of the release judged (the engine's ``pins.toml [[mc2_capacity]]``, the
    newest row whose ``since`` is not newer): a step above the capacity takes the all-to-all path,
    so the MC2 window of the HCCL buffer (SN4010) holds at most the capacity."""
    import math
    from dataclasses import replace

    from sncc import catalog
    from sncc.engines.registry import UnknownEngine, adapter_for

    try:
        adapter = adapter_for(plan.engine.kind)
    except UnknownEngine:
        return
    rows = adapter.data.get("mc2_capacity") or ()
    version = f.engine_version or engine_release_of(plan, adapter)[0]
    try:
        fit = [r for r in rows if version and catalog.version_in(version, r["since"], None)]
    except ValueError:
        return
    if not fit:
        return
    row = max(fit, key=lambda r: catalog.parse_version(r["since"]))
    g = plan.graph
    listed = list(g.capture_sizes) if g is not None and g.capture_sizes else []
    for name, rf in list(f.roles.items()):
        if not isinstance(rf, RoleFacts) or name == "prefill" or not rf.expert_parallel:
            continue
        step = rf.dispatch_tokens_per_rank
        if rf.graph_mode and listed:
            tokens, how = max(listed), f"the largest captured size {max(listed)}"
        elif rf.graph_mode:
            tokens, how = step, "the decode step (vLLM's default capture list)"
        else:
            tokens, how = step, "the decode step (eager)"
            cap = row.get("eager_total_cap")
            if cap is not None and tokens > int(cap):
                tokens, how = int(cap), f"the decode step capped at {cap} tokens (eager)"
        per_tp = math.ceil(tokens / max(1, rf.tp))
        cap_tp = row.get("per_tp_rank_cap")
        if cap_tp is not None and per_tp > int(cap_tp):
            per_tp, how = int(cap_tp), how + f", {cap_tp} per TP rank at most"
        capacity = per_tp * max(1, rf.tp)
        if capacity < step:
            note = (f"{rf.notes.get('dispatch_tokens_per_rank', '')}; MC2 capacity {capacity} tokens ({how}, rounded "
                    f"up to tp {rf.tp}): larger steps take the all-to-all path")
            f.roles[name] = replace(rf, dispatch_tokens_per_rank=capacity,
                                    notes={**rf.notes, "dispatch_tokens_per_rank": note})
