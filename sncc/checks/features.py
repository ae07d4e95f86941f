"""Engine- and chip-specific options (SN4015, SN4016, SN4041): options the plan's
target does not have are reported instead of being silently dropped.

vllm-ascend on Ascend writes ``superkernel_layers`` and ``micro_batch`` per release;
:mod:`sncc.checks.engine_options` reports those.  Here: Omni-Infer components on
other engines, Ascend options on other chips, and ``superkernel_layers`` /
``micro_batch`` / ``graph_cache`` on engine ``vllm``, which has no keys for them, and
``graph_cache`` on vllm-ascend without TorchAir graphs (its only vllm-ascend spelling)."""

from __future__ import annotations

from sncc.diagnostics import codes
from sncc.diagnostics.model import Related, diag


def _engine_span(plan):
    return plan.engine.span_of("kind")


def check_superkernel_layers(plan, r):
    """``optimize.superkernel_layers`` counts layers of the model: at most its
    ``num_hidden_layers`` (the catalog's or config.json's; SN2009)."""
    opt = plan.optimize
    if opt is None or opt.superkernel_layers <= 0 or r.arch is None:
        return
    layers = r.arch.num_hidden_layers
    if opt.superkernel_layers > layers:
        yield diag(codes.OUT_OF_RANGE,
                   f"`superkernel_layers = {opt.superkernel_layers}` is more than the {layers} layers of `{r.served_name or plan.model.id}`",
                   opt.span_of("superkernel_layers"), notes=[f"num_hidden_layers = {layers} ({r.arch_source})"],
                   help=f"give at most {layers}" + (f" ({r.arch.num_hidden_layers - r.arch.n_dense_layers} of them are MoE layers)"
                                                     if r.arch.is_moe and r.arch.n_dense_layers else ""),
                   path=("optimize", "superkernel_layers"))


def check_options_apply(plan, r):
    """Omni-Infer-only components on other engines; Ascend-only features on other chips (SN4015).

    What an engine has is its adapter's data (``components``, ``optimize_options``): no engine
    names are compared here."""
    from sncc.engines.registry import plan_adapter

    opt = plan.optimize
    adapter = plan_adapter(plan)
    if opt is None or adapter is None:
        return
    engine = plan.engine.kind
    ascend = r.chip is not None and r.chip.vendor == "huawei"
    for name in ("omni_attn", "omni_proxy", "omni_placement"):
        block = getattr(opt, name)
        if block is not None and not adapter.supports_component(name):
            yield diag(codes.OPTION_NOT_APPLIED, f"`{name}` does not apply to engine `{engine}`: {adapter.component_reason(name)}",
                       block.name_span, related=[Related(_engine_span(plan), "engine chosen here")],
                       help=f"remove `{name}`, or use an engine that has it", path=("optimize", name))
    if r.chip is not None and not ascend:
        for field, active in (("superkernel_layers", opt.superkernel_layers > 0), ("graph_cache", opt.graph_cache is not None)):
            if active:
                yield diag(codes.OPTION_NOT_APPLIED,
                           f"`{field}` is an Ascend feature (SuperKernel / TorchAir) and `{r.chip.id}` is not an Ascend chip",
                           opt.span_of(field), help=f"remove `{field}`", path=("optimize", field))
        if opt.micro_batch >= 2:
            yield diag(codes.OPTION_NOT_APPLIED,
                       f"`micro_batch = {opt.micro_batch}` is written only on Ascend (Omni-Infer's enable_prefill_micro_batch, "
                       f"vllm-ascend's VLLM_ASCEND_ENABLE_DBO) and `{r.chip.id}` is not an Ascend chip",
                       opt.span_of("micro_batch"), help="remove `micro_batch`", path=("optimize", "micro_batch"))
        return
    if adapter.supports_component("ascend_scheduler") and opt.graph_cache is not None and not adapter.torchair_mode(plan):
        g = plan.graph
        yield diag(codes.OPTION_NOT_APPLIED,
                   "`graph_cache` is written for vllm-ascend only as TorchAir's cached graphs "
                   "(torchair_graph_config.use_cached_graph, TORCHAIR_CACHE_HOME; v0.9.x-v0.11.x), "
                   "and this plan does not run TorchAir graphs",
                   opt.span_of("graph_cache"),
                   related=[Related(g.span_of("mode"), "graph mode chosen here")] if g is not None else [],
                   help="remove `graph_cache`, or set `graph { mode = torchair }` on a vllm-ascend release "
                        "before v0.12.0rc1", path=("optimize", "graph_cache"))
    written = adapter.data.get("optimize_options")
    if written is None:
        return
    for field, roles in getattr(r, "optimize_roles", {}).items():
        if roles == () and field in written:
            only = adapter.option_roles(field) or ()
            key = adapter.knobs.get(f"optimize.{field}", {}).get("key", field) if hasattr(adapter, "knobs") else field
            yield diag(codes.OPTION_NOT_APPLIED,
                       f"`{field} = {getattr(opt, field)}` is written for no role of this plan: {adapter.label}'s "
                       f"`{key}` goes to {' and '.join(f'`{x}`' for x in only)} roles only, and this plan has "
                       + ", ".join(f"`{n}`" for n in r.roles) + " (not simulated either)",
                       opt.span_of(field), related=[Related(_engine_span(plan), "engine chosen here")],
                       help=f"remove `{field}`" + (", or split `serve` into `prefill` and `decode` roles"
                                                   if "serve" in r.roles and "prefill" in only else ""),
                       notes=[n for row in adapter.data.get("knobs", ()) if row.get("option") == f"optimize.{field}"
                              for n in [row.get("notes", "")] + [f"source: {x}" for x in row.get("source", ())] if n],
                       path=("optimize", field))
    for field, active in (("superkernel_layers", opt.superkernel_layers > 0), ("micro_batch", opt.micro_batch >= 2),
                          ("graph_cache", opt.graph_cache is not None)):
        if active and field not in written:
            yield diag(codes.OPTION_NOT_APPLIED,
                       f"`{field}` is written only for Omni-Infer and vllm-ascend; engine `{engine}` gets no setting for it",
                       opt.span_of(field), related=[Related(_engine_span(plan), "engine chosen here")],
                       help=f"remove `{field}`, or use engine `vllm-ascend`", path=("optimize", field))


#: the plan key of each eplb field in the seeds' ``optimize.omni_placement`` form
_PLACEMENT_KEYS = {"redundant_experts": "redundant_experts", "interval": "adjust_interval"}


def _eplb_site(plan, role, field: str):
    """(block, key, logical path) that wrote eplb ``field`` for ``role``: the role's ``eplb``, the
    plan's, or the seeds' ``optimize.omni_placement``."""
    name = next(n for n, ro in plan.roles() if ro is role)
    for block, path in ((role.eplb, (name, "eplb")), (plan.eplb, ("eplb",))):
        if block is not None and not block.is_default(field):
            return block, field, path + (field,)
    pl = plan.optimize.omni_placement if plan.optimize is not None else None
    if pl is not None and field in _PLACEMENT_KEYS:
        key = _PLACEMENT_KEYS[field]
        return pl, key, ("optimize", "omni_placement", key)
    block = role.eplb or plan.eplb or pl
    return block, field, ("eplb", field)


def check_eplb_effective(plan, r):
    """Each role's ``eplb`` settings are written in the pinned release's keys, or reported: the
    release refuses them as written (SN4017, error: e.g. vLLM's redundant experts without
    ``--enable-eplb``), accepts them and does nothing (SN4015, warning: vllm-ascend v0.14+'s
    ``num_redundant_experts`` without ``dynamic_eplb``), or has no key (SN4041; an info when the
    intent is still carried by another key).  The decisions are the adapter's
    :meth:`~sncc.engines.base.EngineAdapter.eplb_lowering`, the same lowering writes."""
    from sncc.engines.registry import plan_adapter

    adapter = plan_adapter(plan)
    if adapter is None:
        return
    seen = set()
    for name, role in plan.roles():
        rf = r.roles.get(name)
        if rf is None or rf.eplb is None:
            continue
        for issue in adapter.eplb_lowering(plan, r, rf).issues:
            if issue.reported_by:
                continue   # another check's diagnostic (e.g. SN3025) says it already
            block, key, path = _eplb_site(plan, role, issue.field)
            span = block.span_of(key) if block is not None else None
            shown = f"omni_placement.{key}" if path[:2] == ("optimize", "omni_placement") else key
            message = issue.message.replace(f"`{issue.field} =", f"`{shown} =")
            if (issue.field, span) in seen:
                continue
            seen.add((issue.field, span))
            if issue.effect == "refused":
                code, severity = codes.OPTION_PRECONDITION, None
            elif issue.effect == "ignored":
                code, severity = codes.OPTION_NOT_APPLIED, None
            else:
                code, severity = codes.OPTION_ABSENT_IN_PIN, "info" if issue.honoured else None
            yield diag(code, message, span, help=issue.help.replace(f"`{issue.field}`", f"`{key}`"),
                       notes=[s if " " in s.split("/")[0] else f"source: {s}" for s in issue.source],
                       path=path, severity=severity)


def check_pinned_options(plan, r):
    """Plan options the pinned Omni-Infer revision reads nowhere (SN4041, warning; its placement
    interval is :func:`check_eplb_effective`'s): each written
    option whose ``[[knobs]]`` row says ``where = "none"``, a global-proxy policy its script does
    not know, and an INT8 KV cache (no switch at release_v0.3.0)."""
    from sncc.engines.registry import plan_adapter

    adapter = plan_adapter(plan)
    knobs = getattr(adapter, "knobs", None)
    if not knobs:
        return
    from sncc.checks._rules import engine_release

    # the pin the build writes for: of the release written, else sncc's default pin
    version = adapter.choose(engine_release(plan, r)).pin.version
    if getattr(r, "engine_version_default", False):
        version += " (sncc's default pin)"
    opt = plan.optimize

    def absent(option: str, node, key: str, value) -> object:
        row = knobs.get(option, {})
        honoured = row.get("honoured")
        msg = (f"`{option} = {value}` is written nowhere: {adapter.label} {version} has no such option"
               + (f"; {honoured}" if honoured else ""))
        return diag(codes.OPTION_ABSENT_IN_PIN, msg, node.span_of(key),
                    notes=[row.get("notes", "")] + [f"source: {s}" for s in row.get("source", ())],
                    help=f"remove `{key}`", path=tuple(option.split(".")), severity="info" if honoured else None)

    if opt is not None:
        for block, keys in (("omni_attn", ("compress_ratio", "search")), ("omni_proxy", ("apc_aware",))):
            node = getattr(opt, block)
            if node is None:
                continue
            for key in keys:
                row = knobs.get(f"{block}.{key}")
                if row is None or row.get("where") != "none" or node.is_default(key):
                    continue
                if key == "apc_aware" and not node.apc_aware:
                    continue
                yield absent(f"{block}.{key}", node, key, _shown(getattr(node, key)))
        px = opt.omni_proxy
        if px is not None and not px.is_default("policy"):
            policy, why = adapter.proxy_policy(plan)
            if policy != px.policy:
                yield diag(codes.OPTION_ABSENT_IN_PIN,
                           f"`omni_proxy.policy = {px.policy}`: {why} ({policy}) is written instead",
                           px.span_of("policy"), help=f"use `policy = {policy}` or another policy the proxy has",
                           notes=["global_proxy.sh policies: " + ", ".join(adapter.data["proxy"]["global"]["policies"])
                                  + ", round_robin"],
                           path=("optimize", "omni_proxy", "policy"))
    if r.kv_dtype == "int8" and not plan.kv_cache.is_default("dtype"):
        yield diag(codes.OPTION_ABSENT_IN_PIN,
                   f"`kv_cache.dtype = int8` is written nowhere: {adapter.label} {version} has no INT8 KV-cache switch "
                   "(the servers run kv-cache-dtype auto)",
                   plan.kv_cache.span_of("dtype"), help="remove `dtype = int8`, or use engine `vllm-ascend` v0.11.0",
                   notes=["release_v0.3.0 reads no kv_cache_dtype in omni/adaptors/vllm or its model extra config"],
                   path=("kv_cache", "dtype"))


def _shown(v) -> str:
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def check_mtp_layers(plan, r):
    """``speculative { method = mtp }`` needs MTP layers in the model (SN4016)."""
    if r.arch is None or (getattr(r.arch, "num_nextn_predict_layers", 0) or 0) > 0:
        return
    spans = {rf.speculative.span_of("method") for rf in r.roles.values()
             if rf.speculative is not None and rf.speculative.method == "mtp"}
    for span in sorted(spans, key=lambda s: (s is None, s.start if s is not None else 0)):
        yield diag(codes.MTP_WITHOUT_LAYERS, f"`{r.served_name}` has no MTP layers (num_nextn_predict_layers = 0)",
               span, notes=[f"architecture from {r.arch_source}"],
               help="use `method = eagle3` or `draft_model` with a draft model, or turn speculative decoding off",
               path=("speculative", "method"))
