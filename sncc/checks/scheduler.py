"""Scheduler checks (SN5001, SN5002, SN5005): the token budget, chunked prefill
and ``max_num_seqs`` against the rules vLLM enforces at start-up
(``vllm/config/scheduler.py``, domain-facts §3.2); and SN5023, cache hits the plan expects
from a role that runs without automatic prefix caching."""

from __future__ import annotations

from sncc.diagnostics import codes
from sncc.diagnostics.model import Related, diag
from sncc.units import format_tokens


def _prefilling_roles(plan):
    return [(n, role) for n, role in plan.roles() if n in ("prefill", "serve")]


def check_chunk_within_budget(plan, r):
    """``chunked_prefill ≤ max_num_batched_tokens`` (SN5001)."""
    for name, role in _prefilling_roles(plan):
        if role.chunked_prefill is not None and role.chunked_prefill > role.max_num_batched_tokens:
            yield diag(codes.CHUNK_EXCEEDS_BUDGET,
                       f"`{name}`: chunked_prefill {format_tokens(role.chunked_prefill)} exceeds max_num_batched_tokens {format_tokens(role.max_num_batched_tokens)}",
                       role.span_of("chunked_prefill"),
                       related=[Related(role.span_of("max_num_batched_tokens"),
                                        "token budget" + (" (default 8k)" if role.is_default("max_num_batched_tokens") else " set here"))],
                       help=f"set chunked_prefill ≤ {format_tokens(role.max_num_batched_tokens)} or raise max_num_batched_tokens",
                       path=(name, "chunked_prefill"))


def check_budget_covers_context(plan, r):
    """With chunked prefill off, ``max_num_batched_tokens ≥ max_model_len`` (SN5002).

    Checked against the effective config: the Ascend scheduler turns chunked
    prefill off whatever ``chunked_prefill`` says (misconfig BR-04, BR-27).
    """
    if not r.max_model_len:
        return
    roles = list(_prefilling_roles(plan))
    # a PD decode instance receives prompts as KV; sncc emits chunked prefill on for it
    # unless the plan turns it off explicitly, and then vLLM's start-up rule applies
    if plan.decode is not None and not plan.decode.is_default("chunked_prefill") and plan.decode.chunked_prefill is None:
        roles.append(("decode", plan.decode))
    for name, role in roles:
        ascend_sched = role.scheduler == "ascend"
        chunked = role.chunked_prefill if not ascend_sched else None
        if chunked is None and role.max_num_batched_tokens < r.max_model_len:
            if ascend_sched:
                help_ = (f"the Ascend scheduler cannot chunk prompts: raise max_num_batched_tokens to {format_tokens(r.max_model_len)}, "
                         "lower max_model_len, or remove `scheduler = ascend` and set `chunked_prefill`")
            else:
                help_ = (f"turn chunked prefill on (`chunked_prefill = {format_tokens(min(role.max_num_batched_tokens, 16384))}`) "
                         f"or raise max_num_batched_tokens to {format_tokens(r.max_model_len)}")
            yield diag(codes.BUDGET_BELOW_CONTEXT,
                       f"`{name}`: max_num_batched_tokens {format_tokens(role.max_num_batched_tokens)} is smaller than max_model_len {format_tokens(r.max_model_len)} with chunked prefill off",
                       role.span_of("max_num_batched_tokens"),
                       related=[Related(r.max_model_len_span, r.max_model_len_note)] if r.max_model_len_span else [],
                       help=help_,
                       notes=["chunked prefill is off unless `chunked_prefill` is set"] if role.scheduler != "ascend" else
                       ["`scheduler = ascend` runs without chunked prefill: the effective config ignores `chunked_prefill`"],
                       path=(name, "max_num_batched_tokens"))


def check_seqs_within_budget(plan, r):
    """``max_num_batched_tokens ≥ max_num_seqs`` (SN5005)."""
    for name, role in plan.roles():
        if role.max_num_batched_tokens < role.max_num_seqs and not (name == "decode" and role.is_default("max_num_batched_tokens")):
            yield diag(codes.MAX_NUM_SEQS_OVER_BUDGET,
                       f"`{name}`: max_num_seqs {role.max_num_seqs} exceeds max_num_batched_tokens {role.max_num_batched_tokens}",
                       role.span_of("max_num_seqs"),
                       related=[Related(role.span_of("max_num_batched_tokens"), "token budget")],
                       help="each sequence needs at least one token of the step budget", path=(name, "max_num_seqs"))


#: where vLLM documents automatic prefix caching (what `enable_prefix_caching` switches)
APC_DOCS = "https://docs.vllm.ai/en/latest/features/automatic_prefix_caching/"


def check_prefix_cache_hit(plan, r):
    """``optimize.prefix_cache_hit > 0`` needs prefix caching on the roles that compute prompts
    (SN5023): the simulator would credit cache hits a role without it cannot have.  Which roles
    run without it is the facts' (:meth:`~sncc.facts.model.Facts.roles_without_prefix_cache`: the
    plan's ``prefix_caching = false``, or an engine that turns it off, Omni-Infer's OmniAttn)."""
    opt = plan.optimize
    if opt is None or not opt.prefix_cache_hit > 0:
        return
    roles = dict(plan.roles())
    shown = opt.ratio_text("prefix_cache_hit")   # as written: `0.5` stays `0.5`, `50%` stays `50%`
    for name in r.roles_without_prefix_cache():
        role, rf = roles.get(name), r.roles[name]
        if role is None:
            continue
        if role.prefix_caching is False:
            why = f"`{name}` runs with prefix caching off (`{name}.prefix_caching = false`)"
            related = [Related(role.span_of("prefix_caching"), "prefix caching turned off here")]
            help_ = (f"set `prefix_caching = true` in `{name}` (or remove it: vLLM turns prefix caching on by default), "
                     "or `prefix_cache_hit = 0`")
        else:
            why = f"`{name}` runs with prefix caching off (OmniAttn's KV cache manager has none)"
            block = opt.omni_attn
            related = [Related(block.block_span or block.name_span, "OmniAttn runs on this role")] if block is not None else []
            help_ = "remove `omni_attn` (its KV consumers run without prefix caching), or set `prefix_cache_hit = 0`"
        yield diag(codes.PREFIX_CACHE_HIT_WITHOUT_CACHING,
                   f"`optimize.prefix_cache_hit = {shown}` serves prompt tokens from the prefix cache, but {why}: "
                   "every prompt token is computed",
                   opt.span_of("prefix_cache_hit"), related=[x for x in related if x.span is not None], help=help_,
                   notes=[rf.notes.get("prefix_caching", ""), f"automatic prefix caching: {APC_DOCS}"],
                   path=("optimize", "prefix_cache_hit"))
