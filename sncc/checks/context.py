"""Context-length checks (SN5003, SN5004): ``max_model_len`` within the model's
positions, the client's ``max_tokens`` within the model's maximum output."""

from __future__ import annotations

from sncc.diagnostics import codes
from sncc.diagnostics.model import Related, diag
from sncc.units import format_tokens


def check_context_within_model(plan, r):
    """``max_model_len ≤ max_position_embeddings`` (SN5003)."""
    a = r.arch
    if a is None or not a.max_position_embeddings or r.max_model_len <= a.max_position_embeddings:
        return
    yield diag(codes.CONTEXT_EXCEEDS_MODEL,
               f"max_model_len {format_tokens(r.max_model_len)} ({r.max_model_len}) exceeds `{r.served_name}`'s {a.max_position_embeddings} positions",
               r.max_model_len_span, notes=[r.max_model_len_note, f"architecture from {r.arch_source}"],
               help=f"keep max input + max output ≤ {a.max_position_embeddings}, or use a long-context variant (e.g. YaRN rope scaling)",
               path=("model", "max_model_len"))


def check_max_tokens_within_model(plan, r):
    """Client ``max_tokens`` (gateway, else max output) ≤ the model's maximum output (SN5004)."""
    a = r.arch
    limit = getattr(a, "max_output_tokens", None) if a is not None else None
    if not limit or r.max_tokens <= limit:
        return
    gw = plan.gateway
    if gw is not None and gw.max_tokens is not None:
        span, note = gw.span_of("max_tokens"), "gateway max_tokens"
    else:
        span, note = plan.workload.output.span_of("max"), "workload output max (the client's max_tokens)"
    yield diag(codes.MAX_TOKENS_EXCEEDS_MODEL,
               f"{note} {format_tokens(r.max_tokens)} exceeds `{r.served_name}`'s maximum output of {format_tokens(limit)}",
               span, help=f"set it to at most {format_tokens(limit)}", path=("gateway", "max_tokens"))
