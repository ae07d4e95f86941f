"""Engine- and chip-specific options (SN4015, SN4016): options the plan's
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


def check_options_apply(plan, r):
    """Omni-Infer-only components on other engines; Ascend-only features on other chips (SN4015)."""
    opt = plan.optimize
    if opt is None:
        return
    engine = plan.engine.kind
    ascend = r.chip is not None and r.chip.vendor == "huawei"
    for name, ok, why in (
        ("omni_attn", engine == "omni-infer", "OmniAttn is an Omni-Infer component"),
        ("omni_proxy", engine == "omni-infer", "OmniProxy is Omni-Infer's global proxy"),
        ("omni_placement", engine in ("omni-infer", "vllm-ascend"),
         "redundant experts need Omni-Infer's OmniPlacement or vllm-ascend's EPLB"),
    ):
        block = getattr(opt, name)
        if block is not None and not ok:
            yield diag(codes.OPTION_NOT_APPLIED, f"`{name}` does not apply to engine `{engine}`: {why}",
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
                       f"`micro_batch = {opt.micro_batch}` is written only on Ascend (Omni-Infer's ASCEND_OMNI_MICRO_BATCH, "
                       f"vllm-ascend's VLLM_ASCEND_ENABLE_DBO) and `{r.chip.id}` is not an Ascend chip",
                       opt.span_of("micro_batch"), help="remove `micro_batch`", path=("optimize", "micro_batch"))
        return
    if engine == "vllm-ascend" and opt.graph_cache is not None:
        from sncc.lowering import torchair_mode
        if not torchair_mode(plan):
            g = plan.graph
            yield diag(codes.OPTION_NOT_APPLIED,
                       "`graph_cache` is written for vllm-ascend only as TorchAir's cached graphs "
                       "(torchair_graph_config.use_cached_graph, TORCHAIR_CACHE_HOME; v0.9.x-v0.11.x), "
                       "and this plan does not run TorchAir graphs",
                       opt.span_of("graph_cache"),
                       related=[Related(g.span_of("mode"), "graph mode chosen here")] if g is not None else [],
                       help="remove `graph_cache`, or set `graph { mode = torchair }` on a vllm-ascend release "
                            "before v0.12.0rc1", path=("optimize", "graph_cache"))
    if engine != "vllm":
        return
    for field, active in (("superkernel_layers", opt.superkernel_layers > 0), ("micro_batch", opt.micro_batch >= 2),
                          ("graph_cache", opt.graph_cache is not None)):
        if active:
            yield diag(codes.OPTION_NOT_APPLIED,
                       f"`{field}` is written only for Omni-Infer and vllm-ascend; engine `vllm` gets no setting for it",
                       opt.span_of(field), related=[Related(_engine_span(plan), "engine chosen here")],
                       help=f"remove `{field}`, or use engine `vllm-ascend`", path=("optimize", field))


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
